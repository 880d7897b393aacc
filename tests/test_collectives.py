"""The HCCL-shaped collective runtime: real ranks under mpiexec (results against numpy on every rank,
bitwise identical across ranks, simulated times against the cost formulas by hand, a slow rank stalling
the others, a missing rank named within the timeout), a rank simulated alone, and argument checking."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.errors import HcclNotSupportedError, HcclParamError, InvalidParamError
from ascendemu.hal import runtime as rt
from ascendemu.hal.hccl import HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM

WORKER = Path(__file__).parent / "fixtures" / "ranks" / "hccl_worker.py"
MPIEXEC = Path(sys.executable).parent / "mpiexec"
A_H, B_H, A_R, B_R, G = 5e-6, 1 / 30e9, 10e-6, 1 / 12.5e9, 2.5e-12     # see test_interconnect.py


def outside_mpi() -> dict[str, str]:
    """This process's environment without the variables of an MPI job it may run in (hydra's, Open
    MPI's): a process started with it is not taken for a rank of that job."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "MPI_LOCAL", "HYDRA_"))}


def mpiexec(n: int, script: Path, out: Path, *args: str, env: dict | None = None,
            timeout: float = SUBPROCESS_TIMEOUT_S) -> tuple[subprocess.CompletedProcess, dict[int, dict]]:
    """Run ``script`` as ``n`` ranks (the variables of an outer MPI job are not inherited); each rank
    writes its result to ``out/rank_<r>.json``, returned by rank."""
    proc = subprocess.run([str(MPIEXEC), "-n", str(n), sys.executable, str(script), *args],
                          env={**outside_mpi(), "RANKS_OUT": str(out), **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)
    return proc, {int(p.stem[5:]): json.loads(p.read_text()) for p in out.glob("rank_*.json")}


@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_matches_numpy_and_is_bitwise_identical_on_every_rank(n, tmp_path):
    proc, ranks = mpiexec(n, WORKER, tmp_path, "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(ranks) == list(range(n))
    for name in ("all_reduce", "all_reduce_fp16", "all_gather", "broadcast"):
        assert len({ranks[r]["digests"][name] for r in ranks}) == 1, name
    assert ranks[1]["digests"]["send_recv"]
    if n == 4:                                   # the odd group [3, 1]: rank 3 is its rank 0
        assert ranks[3]["digests"]["group_rank"] == 0 and ranks[1]["digests"]["group_rank"] == 1
        assert ranks[1]["digests"]["group_all_reduce"] == ranks[3]["digests"]["group_all_reduce"]
    # simulated durations (us) against the formulas: a mesh of n ranks inside one HCCS group
    spans: dict[str, float] = {}
    for name, _, dur, _ in ranks[0]["spans"]:
        spans.setdefault(name, dur)                          # the float32 AllReduce comes first
    m = 1000 * n * 4                                         # bytes of the AllReduce / AllGather vector
    mesh_ar = 2 * (A_H + m / n * B_H) + (n - 1) / n * m * G
    assert spans["AllReduce(sum)"] == pytest.approx(mesh_ar * 1e6, rel=0.01)
    assert spans["AllGather"] == pytest.approx((A_H + m / n * B_H) * 1e6, rel=0.01)
    assert spans["ReduceScatter(max)"] == pytest.approx((A_H + m / n * B_H + (n - 1) / n * m * G) * 1e6, rel=0.01)
    assert spans["Send(to 1)"] == pytest.approx((A_H + 4000 * B_H) * 1e6, rel=0.01)
    assert spans["Barrier"] == pytest.approx(2 * A_H * 1e6, rel=0.01)


def test_a_slow_rank_stalls_the_others_who_end_at_the_same_instant(tmp_path):
    proc, ranks = mpiexec(4, WORKER, tmp_path, "slow")
    assert proc.returncode == 0, proc.stderr[-3000:]
    ends, waits = set(), {}
    for r, d in ranks.items():
        (name, ts, dur, _), = [s for s in d["spans"] if s[0] == "AllReduce(sum)"]
        ends.add(round(ts + dur, 6))
        waits[r] = [s for s in d["spans"] if s[0] == "AllReduce wait"]
    assert len(ends) == 1                      # one simulated instant for every rank
    assert waits[1] == []                      # the slow rank waits for nobody
    for r in (0, 2, 3):
        (_, ts, dur, args), = waits[r]
        assert args["waiting for rank(s)"] == [1] and dur > 20      # 21 fills of 16 KB, >= 2 us each


def test_a_rank_that_exits_is_named_by_the_others_within_the_timeout(tmp_path):
    # the 2 s HCCL_EXEC_TIMEOUT, not the default, is what ended the wait: the message names it (no wall-clock
    # assertion: a loaded machine makes the job slower, not the timeout different)
    proc, ranks = mpiexec(3, WORKER, tmp_path, "die", env={"HCCL_EXEC_TIMEOUT": "2"})
    assert sorted(ranks) == [0, 1], proc.stdout + proc.stderr[-2000:]
    assert proc.returncode != 0
    for d in ranks.values():
        assert d["error"] in ("HcclTimeoutError", "HcclRemoteError")
        assert "AllReduce(sum)" in d["message"] and "rank(s) [2] did not arrive within 2 s" in d["message"]
    timed_out = [d for d in ranks.values() if d["error"] == "HcclTimeoutError"]
    assert timed_out and all(d["missing"] == [2] and d["code"] == 9 for d in timed_out)


def test_ranks_passing_different_counts_get_a_typed_error(tmp_path):
    proc, ranks = mpiexec(2, WORKER, tmp_path, "mismatch", env={"HCCL_EXEC_TIMEOUT": "1"})
    assert proc.returncode != 0 and ranks, proc.stderr[-2000:]
    errors = {d["error"] for d in ranks.values()}
    assert "HcclParamError" in errors, ranks
    assert any("every rank must pass the same count" in d["message"] for d in ranks.values())


@pytest.fixture
def node():
    rt.finalize()
    yield
    rt.finalize()


def test_a_world_of_one_copies_and_a_rank_simulated_alone_is_priced(node, monkeypatch):
    for var in ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "HCCL_ALGO"):
        monkeypatch.delenv(var, raising=False)
    rt.init(trace=True)
    rt.set_device(0)
    world = rt.comm_init_world(1, 0)
    x = np.arange(6, dtype=np.float32)
    a, b = rt.malloc(24), rt.malloc(24)
    rt.memcpy(a, 24, x, 24)
    rt.all_reduce(a, b, 6, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, world)
    rt.synchronize_stream(None)
    y = np.empty(6, np.float32)
    rt.memcpy(y, 24, b, 24)
    assert np.array_equal(y, x) and rt.comm_size(world) == 1
    with pytest.raises(HcclParamError, match=r"a world of 8 ranks needs one process per rank: start them with "
                                             r"`mpiexec -n 8 ascendemu run script.py`"):
        rt.comm_destroy(world) or rt.comm_init_world(8, 3)
    rt.finalize()
    # DryRun: rank 3 of 8 alone, every peer arriving with it; priced as the hierarchical algorithm
    rt.init(trace=True, backing=False)
    rt.set_device(3)
    world = rt.comm_init_world(8, 3)
    n = 64 << 20
    a, b = rt.malloc(n), rt.malloc(n)
    rt.all_reduce(a, b, n // 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, world)
    rt.synchronize_stream(None)
    (span,) = [e for e in rt.trace_events() if e.get("cat") == "collective"]
    level0 = 2 * A_H + n / 2 * B_H + 3 / 4 * n * G
    level1 = 2 * A_R + (n / 4) * B_R + (n / 8) * G
    assert span["dur"] == pytest.approx((level0 + level1) * 1e6, rel=0.01)
    assert "level 1 H-D_R over 2 rank(s)" in span["args"]["algorithm"]


def test_collective_arguments_are_checked(node, monkeypatch):
    monkeypatch.delenv("PMI_SIZE", raising=False)
    rt.init(backing=False)
    rt.set_device(0)
    world = rt.comm_init_world(4, 0)
    a = rt.malloc(64)
    with pytest.raises(HcclParamError, match="communicator 99 is not live"):
        rt.all_reduce(a, a, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 99)
    with pytest.raises(HcclParamError, match="invalid all_reduce op 7: must be one of HCCL_REDUCE_SUM=0"):
        rt.all_reduce(a, a, 16, HCCL_DATA_TYPE_FP32, 7, world)
    with pytest.raises(HcclParamError, match="invalid all_gather dtype 1"):
        rt.all_gather(a, a, 4, 1, world)
    with pytest.raises(InvalidParamError, match="AllGather receive buffer"):
        rt.all_gather(a, a, 16, HCCL_DATA_TYPE_FP32, world)           # recv needs 4 x 64 bytes
    with pytest.raises(HcclParamError, match="root 4 is not a rank of communicator 'world' \\(size 4\\)"):
        rt.broadcast(a, 16, HCCL_DATA_TYPE_FP32, 4, world)
    with pytest.raises(HcclParamError, match="rank 0 cannot send to itself"):
        rt.send(a, 16, HCCL_DATA_TYPE_FP32, 0, world)
    with pytest.raises(HcclParamError, match=r"world ranks \[5\] are not in communicator 'world'"):
        rt.comm_create_group(world, "g", [0, 5])
    with pytest.raises(HcclParamError, match="does not include this process's rank 0"):
        rt.comm_create_group(world, "g", [1, 2])
    with pytest.raises(HcclParamError, match="a communicator named 'world' already exists"):
        rt.comm_create_group(world, "world", [0, 1])
    g = rt.comm_create_group(world, "g", [2, 0])
    assert (rt.comm_rank(g), rt.comm_size(g), rt.comm_world_ranks(g), rt.comm_find("g")) == (1, 2, (2, 0), g)
    assert isinstance(HcclNotSupportedError("x"), RuntimeError)      # MindSpore raises RuntimeError here


def test_a_one_rank_world_and_dry_run_never_import_mpi4py():
    code = ("import sys\nfrom ascendemu.hal import runtime as rt\nrt.init(backing=False)\nrt.set_device(0)\n"
            "rt.comm_init_world(1, 0)\nrt.finalize()\nrt.init(backing=False)\nrt.set_device(0)\n"
            "rt.comm_init_world(8, 3)\nprint('mpi4py' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], env=outside_mpi(), capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert out.stdout.strip() == "False", out.stderr
