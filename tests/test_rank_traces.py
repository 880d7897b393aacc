"""Traces of a job of several ranks: under ``mpiexec`` each rank of ``ascendemu run --record run.aetrace``
writes its own trace (``run.rank<N>.aetrace``) with its collectives and what each waited for, and each
replays alone (no MPI: a fabric that replays the other ranks' arrivals) bit for bit; a what-if on the
HCCS bandwidth re-prices the collectives with the interconnect formulas; the job exports to one Chakra
ET per rank, which imports to the same simulated times."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.replay import compare
from ascendemu.replay.chakra import export_chakra, run_chakra
from ascendemu.replay.replayer import WhatIf, replay
from ascendemu.traces import aetrace as fmt

from test_collectives import A_H, G, mpiexec

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).parent / "fixtures" / "ranks" / "record_worker.py"


@pytest.fixture(scope="module")
def rank_traces(ascendemu_kernel_cache, tmp_path_factory) -> dict[int, Path]:
    out = tmp_path_factory.mktemp("rank-traces")
    proc, _ = mpiexec(2, ROOT / "ascendemu" / "__main__.py", out, "run", "--quiet", "--record",
                      str(out / "run.aetrace"), str(WORKER),
                      env={"MS_COMPILER_CACHE_PATH": str(ascendemu_kernel_cache)}, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in out.glob("run*")) == ["run.rank0.aetrace", "run.rank1.aetrace"]
    return {r: out / f"run.rank{r}.aetrace" for r in (0, 1)}


def test_each_rank_records_its_collectives_and_what_they_waited_for(rank_traces):
    waits, ends = {}, {}
    for rank, path in rank_traces.items():
        reader = fmt.read_trace(path)
        records = list(reader)
        opts = reader.header.options
        assert reader.complete and (opts["rank_size"], opts["world_rank"]) == (2, rank)
        (world,) = [r for r in records if isinstance(r, fmt.CommInitWorld)]
        assert (world.rank_size, world.rank_id, world.name) == (2, rank, "hccl_world_group")
        (call,) = [r for r in records if isinstance(r, fmt.AllReduceCall)]      # PyNative: the HCCL-shaped call
        assert (call.count, call.op, call.comm) == (12, 0, world.result)
        graph = [s for r in records if isinstance(r, fmt.LaunchGraph) for s in r.steps if s[0] == "Communicate"]
        assert graph and graph[0][1] == ["AllReduce", 0] and graph[0][6] == world.result
        waits[rank] = [r for r in records if isinstance(r, fmt.CollectiveWait)]
        assert len(waits[rank]) == 2
    # rank 1 ran four Mul ops first: rank 0 waited for it, and both ran the AllReduce from its arrival
    first0, first1 = waits[0][0], waits[1][0]
    assert first0.late == [1] and first0.start == first1.arrival == first1.start > first0.arrival
    assert first0.seconds == first1.seconds > 0


def test_each_rank_replays_alone_bit_for_bit(rank_traces):
    for rank, path in rank_traces.items():
        result = replay(str(path))
        assert compare.differences(result.recorded.figures, result.figures) == [], rank
        assert result.stop is None                  # every record read and issued (none is skipped)


def test_a_what_if_reprices_the_collectives_with_the_interconnect_model(rank_traces, tmp_path):
    chrome = tmp_path / "whatif.json"
    replay(str(rank_traces[0]), WhatIf(hccs_gbps=3.0), trace=str(chrome))
    spans = [e for e in json.loads(chrome.read_text())["traceEvents"] if e.get("name") == "AllReduce(sum)"]
    m, n, beta = 12 * 4, 2, 1 / 3e9                         # 12 float32 on a mesh of 2 inside an HCCS group
    mesh_ar = 2 * (A_H + m / n * beta) + (n - 1) / n * m * G
    assert len(spans) == 2 and all(s["dur"] == pytest.approx(mesh_ar * 1e6, rel=1e-6) for s in spans)


def test_the_job_exports_one_chakra_et_per_rank_that_imports_to_the_same_times(rank_traces, tmp_path):
    paths = export_chakra(rank_traces[0].with_name("run.aetrace"), tmp_path)
    assert [p.name for p in paths] == ["run.0.et", "run.1.et"]
    for run in run_chakra(tmp_path):
        figures = replay(str(rank_traces[run.rank])).figures
        (device,) = figures["devices"].values()                  # the rank's one device (DEVICE_ID: its local rank)
        assert run.makespan_s == max(s[2] for s in device["streams"].values())
        assert run.priced["collective"] == 2
