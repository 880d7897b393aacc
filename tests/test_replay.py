"""Record, replay, what-if and the regression gate (issue 12): ``ascendemu run --record`` / ``ascendemu replay``.

Oracles: the recorded run's own node (simulated clocks and pool statistics read from the live runtime
after the run), the trace's bytes parsed here with ``struct`` (where each chunk starts and how many
records it holds), the roofline cost model summed over the recorded launches, hand-placed pool blocks,
and the bytes the recorded run copied back (digests).
"""
from __future__ import annotations

import inspect
import json
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from ascendemu.cli.main import main as cli_main
from ascendemu.cli.replay import main as replay_main
from ascendemu.errors import InvalidFileError
from ascendemu.cli.run import REGRESSION_EXIT
from ascendemu.cli.run import main as run_main
from ascendemu.device.cost import KernelCost, block_time, kernel_time
from ascendemu.device.pool import PAGE, BestFitPool, FirstFitPool
from ascendemu.device.spec import get_spec
from ascendemu.cache import KernelCache
from ascendemu.errors import AclError
from ascendemu.hal.api import api_call
from ascendemu.hal.kernel import ArgSpec, KernelFunction
from ascendemu.hal.record import Recorder
from ascendemu.hal.runtime import Runtime, get_runtime
from ascendemu.replay.compare import differences, regressions
from ascendemu.replay.replayer import WhatIf, replay
from ascendemu.kernels.signature import OpSignature
from ascendemu.traces import aetrace as fmt

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# small sizes: DryRun prices and plans them exactly like the default ones, in a fraction of the time
NETWORKS = {"mlp": ["--steps", "2", "--batch", "2"], "lenet": ["--steps", "2", "--batch", "1"],
            "resnet": ["--steps", "2", "--batch", "1", "--size", "8"],
            "transformer": ["--steps", "2", "--batch", "1", "--seq", "4"]}


@pytest.fixture
def workdir(tmp_path, monkeypatch, restore_context):
    """A fresh runtime, the kernel and graph caches under tmp_path; the runtime is finalised after."""
    monkeypatch.setenv("MS_COMPILER_CACHE_PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    yield tmp_path
    if rt.node is not None:
        rt.finalize()


def record_example(workdir: Path, name: str, level: str, *args: str) -> tuple[Path, dict]:
    """Run examples/<name>.py under ``ascendemu run --dry-run --record`` (with ``args``, else the small
    NETWORKS ones); the trace and what the live node measured (simulated clocks, pool statistics)."""
    path = workdir / f"{name}_{level}.aetrace"
    run_main(["--quiet", "--dry-run", "--jit-level", level, "--record", str(path), str(EXAMPLES / f"{name}.py"),
              *(args or NETWORKS[name])])
    rt = get_runtime()
    live = {"device_time_s": rt.device_time(), "host_time_s": rt.host_time(), "pool": rt.mem_stats()}
    rt.finalize()
    return path, live


# -- record then replay ---------------------------------------------------------------------------------
@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_record_then_replay_gives_the_same_simulated_time_and_memory(workdir, name, level):
    path, live = record_example(workdir, name, level)
    result = replay(str(path))
    assert result.stop is None and result.recorded is not None
    got = result.figures
    assert got["device_time_s"] == live["device_time_s"] and got["host_time_s"] == live["host_time_s"]
    pool = got["devices"]["0"]["pool"]
    assert (pool["peak_used"], pool["actual_peak"], pool["reserved"], pool["defrag_count"]) == \
        (live["pool"].peak_used, live["pool"].actual_peak, live["pool"].reserved, live["pool"].defrag_count)
    assert differences(result.recorded.figures, got) == []       # every stream, core and step, bit for bit
    (step,) = got["steps"]                                       # the executor's steps were marked
    assert step.endswith(f"[{level}]") and got["steps"][step][0] == 2
    assert result.kernels >= 1 and result.priced == result.kernels and got["devices"]["0"]["kernels_run"] > 0


def test_every_runtime_call_with_a_host_cost_has_a_record_kind_with_its_parameters():
    """The recorder and the replayer read a call's record fields as the call's parameters, in order."""
    extra = {"result", "digest", "kernels", "nbytes"}          # what a record adds to the call's parameters
    for name in dir(Runtime):
        call = api_call(getattr(Runtime, name))
        if call is None or call.cost is None and name not in ("init", "finalize"):
            continue
        cls = fmt.RECORD_OF_CALL[name]
        params = list(inspect.signature(call.fn).parameters)[1:]
        assert [f for f in cls.FIELDS if f not in extra] == params, name


# -- the format ---------------------------------------------------------------------------------------
def chunks(path: Path) -> list[tuple[int, int]]:
    """(byte offset, record count) of every chunk, read with struct: the format's layout as specified."""
    data = path.read_bytes()
    assert data[:8] == b"AETRACE\0" and struct.unpack("<HH", data[8:12]) == fmt.FORMAT_VERSION
    out, at = [], 12
    while at < len(data):
        size, n = struct.unpack("<II", data[at:at + 8])
        out.append((at, n))
        at += 8 + size
    assert at == len(data)
    return out


def wires(records) -> list[list]:
    return [r.to_wire() for r in records]


def test_records_round_trip_and_unknown_kinds_are_skipped(tmp_path):
    w = fmt.TraceWriter(tmp_path / "t.aetrace", chunk_records=2)
    header = fmt.Header("aetrace", list(fmt.FORMAT_VERSION), "0", "now", {"name": "Ascend910A"}, 1, {})
    written = [fmt.Kernel(0, "k", 2, [[64, "in", False]], [1, 2, 3, "float16"], {"signature": {"op": "Abs"}}),
               fmt.Malloc(4096, 0, 0x1_0000_0000),
               fmt.Memcpy(0x1_0000_0000, 8, fmt.HostData(8, b"\x01" * 8), 8, 1, None),
               fmt.Memcpy(fmt.HostData(8), 8, 0x1_0000_0000, 8, 2, b"d" * 16),
               fmt.LaunchGraph([["Launch", fmt.KernelRef(0), [0x1_0000_0000], 3, None], ["RecordEvent", 4, 3]])]
    for r in [header, *written]:
        w.write(r)
    w.write([250, "from a newer minor version"])                      # a kind this reader does not know
    w.write([fmt.Free.CODE, 0x1_0000_0000, 4096, "a field appended later"])  # a newer field is dropped
    path = w.close(fmt.End(0, {"device_time_s": 1.0}))
    reader = fmt.read_trace(path)
    assert reader.header == header
    got = list(reader)
    assert wires(got[:5]) == wires(written)
    assert got[5] == fmt.Unknown(250, ["from a newer minor version"])
    assert got[6] == fmt.Free(0x1_0000_0000, 4096) and reader.complete and reader.stop is None
    assert [n for _, n in chunks(path)] == [2, 2, 2, 2, 1]                 # 9 records, 2 a chunk


def test_a_file_that_is_not_a_trace_or_of_a_newer_major_version_is_refused(tmp_path):
    (tmp_path / "x.aetrace").write_bytes(b"not a trace at all")
    with pytest.raises(fmt.TraceFormatError, match="not an ascendemu trace"):
        fmt.read_trace(tmp_path / "x.aetrace")
    w = fmt.TraceWriter(tmp_path / "y.aetrace")
    w.write(fmt.Header("aetrace", [1, 0], "0", "now", {}, 1, {}))
    data = bytearray(w.close(fmt.End(0, {})).read_bytes())
    data[8:10] = struct.pack("<H", fmt.FORMAT_VERSION[0] + 1)
    (tmp_path / "y.aetrace").write_bytes(bytes(data))
    with pytest.raises(fmt.TraceFormatError, match=f"format {fmt.FORMAT_VERSION[0] + 1}.{fmt.FORMAT_VERSION[1]}"):
        fmt.read_trace(tmp_path / "y.aetrace")


def test_a_missing_trace_is_a_typed_error_that_points_to_the_partial_one(tmp_path, capsys):
    missing = tmp_path / "run.aetrace"
    with pytest.raises(InvalidFileError, match="no such trace file; record one with `ascendemu run --record"):
        fmt.read_trace(missing)
    assert cli_main(["replay", str(missing)]) == 2 and "no such trace file" in capsys.readouterr().err
    # a run that has not ended (or died) left run.aetrace.partial: the error names it
    w = fmt.TraceWriter(missing)
    w.write(fmt.Header("aetrace", [1, 0], "0", "now", {}, 1, {}))
    w.flush()
    with pytest.raises(InvalidFileError, match=r"has not ended \(or died\): replay .*run\.aetrace\.partial"):
        fmt.read_trace(missing)
    assert fmt.read_trace(str(missing) + fmt.PARTIAL_SUFFIX).header.options == {}


def test_a_truncated_or_damaged_trace_replays_up_to_its_last_good_record_and_says_where(workdir, capsys):
    rt = get_runtime()
    path = workdir / "run.aetrace"
    rec = Recorder(path, chunk_records=8).attach(rt)
    from ascendemu.frontend.backend import set_backend
    from ascendemu.graph.executor import DeviceExecutor
    executor = DeviceExecutor(cache_root=str(workdir), progress=False, dry_run=True, jit_level="O0")
    previous = set_backend(executor)
    try:
        from ascendemu.frontend import Tensor, context
        sys.path.insert(0, str(EXAMPLES))
        from networks import MLP
        context.set_context(mode=context.GRAPH_MODE)
        net = MLP(in_features=16, hidden=(8,), num_classes=4)
        for _ in range(3):
            net(Tensor(np.ones((2, 16), np.float32)))
    finally:
        set_backend(previous)
        sys.path.remove(str(EXAMPLES))
    rec.close()
    rt.finalize()
    full = list(fmt.read_trace(path))
    live, frees = {}, 0
    for r in full:                                        # each free names the size its malloc asked for
        if isinstance(r, fmt.Malloc):
            live[r.result] = r.size
        elif isinstance(r, fmt.Free):
            assert r.nbytes == live.pop(r.ptr)
            frees += 1
    assert frees
    layout = chunks(path)
    assert len(layout) >= 4 and sum(n for _, n in layout) == len(full) + 1          # + the header
    data = path.read_bytes()
    third, before_third = layout[2][0], sum(n for _, n in layout[:2]) - 1
    cases = {"cut inside the third chunk": data[:third + 8 + 20],
             "cut at the third chunk's start": data[:third],
             "cut inside the third chunk's header": data[:third + 5],
             "a flipped byte in the third chunk": data[:third + 40] + bytes([data[third + 40] ^ 0xFF]) + data[third + 41:]}
    for what, damaged in cases.items():
        cut = workdir / "cut.aetrace.partial"
        cut.write_bytes(damaged)
        reader = fmt.read_trace(cut)
        got = list(reader)
        assert wires(got) == wires(full[:len(got)]), what                # a prefix of the recorded records
        assert before_third <= len(got) < before_third + layout[2][1], what
        assert not reader.complete and (reader.stop.records, reader.stop.offset) == (len(got), third), what
        result = replay(str(cut))
        assert result.records == len(got) and result.stop == reader.stop
        assert replay_main([str(cut)]) == 0
        assert f"partial trace: stopped after record {len(got)} at byte offset {third}" in capsys.readouterr().out


# -- what-if ------------------------------------------------------------------------------------------
def launches(path: Path) -> list[tuple[fmt.Kernel, int]]:
    """(kernel record, block dim) of every launch in the trace, in order."""
    kernels, out = {}, []
    for r in fmt.read_trace(path):
        if isinstance(r, fmt.Kernel):
            kernels[r.id] = r
        elif isinstance(r, fmt.LaunchKernel):
            out.append((kernels[r.func.id], r.block_dim or kernels[r.func.id].block_dim))
        elif isinstance(r, fmt.LaunchGraph):
            out += [(kernels[s[1].id], s[4] or kernels[s[1].id].block_dim) for s in r.steps if s[0] == "Launch"]
    return out


def test_what_if_another_preset_changes_only_what_that_preset_changes(workdir):
    path, _ = record_example(workdir, "mlp", "O2", "--steps", "2", "--batch", "32")
    original = fmt.read_trace(path)
    list(original)
    base = original.end.figures
    for device, changes_memory in (("Ascend910ProA", False), ("Ascend910B1", True)):
        spec = get_spec(device)
        got = replay(str(path), WhatIf(device=device)).figures
        d0, g0 = base["devices"]["0"], got["devices"]["0"]
        for key in ("peak_used", "actual_peak", "reserved", "num_segments", "used"):
            assert g0["pool"][key] == d0["pool"][key], (device, key)
        assert (g0["pool"]["total"] != d0["pool"]["total"]) == changes_memory
        assert g0["kernels_run"] == d0["kernels_run"] and len(g0["cores"]) == spec.ai_cores
        # every block the cost model prices on the what-if preset, and nothing else, kept a core busy
        want = sum(bd * block_time(spec, KernelCost.from_list(k.cost), bd) for k, bd in launches(path))
        assert sum(g0["cores"]) == pytest.approx(want, rel=1e-12) and want < sum(d0["cores"])
        assert got["steps"]["MLP [O2]"][2] < base["steps"]["MLP [O2]"][2]    # faster cores on both presets
    # HBM bandwidth: kernels change, copies over the host link do not
    got = replay(str(path), WhatIf(hbm_gbps=30)).figures
    sync_before, sync_after = base["devices"]["0"]["streams"]["sync"], got["devices"]["0"]["streams"]["sync"]
    assert sync_after[:2] == pytest.approx(sync_before[:2], rel=1e-12)
    assert got["steps"]["MLP [O2]"][2] > base["steps"]["MLP [O2]"][2]


def test_streams_collapsed_into_one_run_every_kernel_back_to_back(rt, tmp_path):
    """Two streams, a kernel on each and one more after an event: collapsed, one stream runs all three."""
    path = tmp_path / "two_streams.aetrace"
    rec = Recorder(path).attach(rt)
    rt.init(backing=False)
    rt.set_device(0)
    s1, s2 = rt.create_stream(), rt.create_stream()
    k = KernelFunction("k", 0, 1, (ArgSpec(1 << 20, "in"), ArgSpec(1 << 20, "out")),
                       KernelCost(vector_ops=1 << 24, bytes=2 << 20, dtype="float16"))
    a, b, c, d = (rt.malloc(1 << 20) for _ in range(4))
    rt.launch_kernel(k, 1, [a, b], s1)
    rt.launch_kernel(k, 1, [c, d], s2)
    ev = rt.create_event()
    rt.record_event(ev, s2)
    rt.stream_wait_event(s1, ev)
    rt.launch_kernel(k, 1, [b, a], s1)
    rt.synchronize_device()
    rec.close()
    rt.finalize()
    t = kernel_time(get_spec(), k.cost, 1)
    original = replay(str(path)).figures["devices"]["0"]["streams"]
    assert original[str(s1)][1] == pytest.approx(2 * t, rel=1e-12) and original[str(s2)][1] == pytest.approx(t)
    collapsed = replay(str(path), WhatIf(streams=1)).figures
    streams = {k_: v for k_, v in collapsed["devices"]["0"]["streams"].items() if v[0]}
    (only,) = streams.values()                  # one stream ran everything: 3 kernels, a record, a wait
    assert only[0] == 5 and only[1] == pytest.approx(3 * t, rel=1e-12)


def test_first_fit_places_at_the_lowest_address_where_best_fit_takes_the_tightest_block():
    def place(pool_cls):
        pool = pool_cls(4 * PAGE, expand_unit=2 * PAGE)
        p1, _, p3, _ = pool.malloc(4096), pool.malloc(512), pool.malloc(1024), pool.malloc(512)
        pool.free(p1)
        pool.free(p3)                     # free: 4096 B at the base, 1024 B at base + 4608
        return pool.malloc(1024) - p1, pool.stats()
    best, best_stats = place(BestFitPool)
    first, first_stats = place(FirstFitPool)
    assert (best, first) == (4608, 0)
    assert (best_stats.largest_free, first_stats.largest_free) == (2 * PAGE - 6144, 2 * PAGE - 6144)
    assert (best_stats.free_blocks, first_stats.free_blocks) == (2, 3)


def test_the_execution_order_is_no_what_if(workdir, capsys):
    """The graph compiler chose it before the first recorded call: replay offers no option for it."""
    path, _ = record_example(workdir, "mlp", "O1")
    with pytest.raises(TypeError):
        WhatIf(exec_order="bfs")
    assert replay_main([str(path), "--exec-order", "bfs"]) == 2
    assert "unrecognized arguments: --exec-order" in capsys.readouterr().err


# -- computing replays ------------------------------------------------------------------------------------
def test_replay_with_recorded_data_recomputes_the_same_output_bytes(workdir, ascendemu_kernel_cache, monkeypatch):
    monkeypatch.setenv("MS_COMPILER_CACHE_PATH", str(ascendemu_kernel_cache))
    path = workdir / "square.aetrace"
    assert run_main(["--quiet", "--record", str(path), "--record-data", str(EXAMPLES / "square_2x.py")]) == 0
    get_runtime().finalize()
    assert any(isinstance(r, fmt.Memcpy) and r.src.__class__ is fmt.HostData and r.src.data
               for r in fmt.read_trace(path))
    result = replay(str(path), compute=True)
    assert result.from_cache == result.kernels == 1 and result.digests_checked >= 1
    assert result.digests_matched == result.digests_checked
    assert differences(result.recorded.figures, result.figures) == []
    empty = workdir / "no-kernels"                     # nothing cached: priced, not computed, and it shows
    result = replay(str(path), compute=True, cache_root=str(empty))
    assert result.priced == 1 and result.digests_matched < result.digests_checked
    assert replay_main([str(path), "--compute", "--cache", str(empty)]) == 1

    # through the HAL alone: load_binary / get_function. The run's Square is a dynamic-shape kernel (its
    # sizes come from a signature's plan), so it is refused by path; a kernel specialised to its signature
    # (a PopulationCount built into the same cache) loads, and its launches replay
    (kernel,) = [r for r in fmt.read_trace(path) if isinstance(r, fmt.Kernel)]
    kernel_meta = ascendemu_kernel_cache / "rank_0" / "kernel_meta"
    rt = get_runtime()
    rt.init()
    rt.set_device(0)
    with pytest.raises(AclError, match="dynamic-shape kernel"):
        rt.load_binary(kernel_meta / f"{kernel.identity['kernel_meta']}.json")
    rt.finalize()
    static = KernelCache(ascendemu_kernel_cache, rank=0).get(OpSignature.make("PopulationCount", [((3, 2), "int32")]))
    hal_path = workdir / "hal.aetrace"
    rec = Recorder(hal_path, record_data=True).attach(rt)
    rt.init()
    rt.set_device(0)
    func = rt.get_function(rt.load_binary(kernel_meta / f"{static.name}.json"), f"{static.name}__kernel0")
    x = np.array([[0, 1], [7, -1], [1 << 20, 255]], np.int32)
    ptrs = [rt.malloc(a.nbytes) for a in rt.functions[func].args]
    rt.memcpy(ptrs[0], x.nbytes, x, x.nbytes, 1)
    rt.launch_kernel(func, None, ptrs, None)
    rt.synchronize_device()            # a synchronous memcpy does not wait for the streams (hal.memory)
    out = np.empty((3, 2), np.uint8)
    rt.memcpy(out, out.nbytes, ptrs[1], out.nbytes, 2)
    rec.close()
    rt.finalize()
    assert np.array_equal(out, [[0, 1], [3, 32], [1, 8]])     # set bits of each int32
    priced, computed = replay(str(hal_path)), replay(str(hal_path), compute=True)
    assert differences(priced.recorded.figures, priced.figures) == []
    assert differences(computed.recorded.figures, computed.figures) == []
    # a trace does not choose the code a replay runs: the binary its LoadBinary names is not loaded from
    # that path (a kernel loaded by path has no signature to find it in the kernel cache by), so it is priced
    assert (computed.priced, computed.digests_checked, computed.digests_matched) == (1, 1, 0)


# -- the gate -----------------------------------------------------------------------------------------
def test_gate_fails_on_a_slowed_replay_and_passes_on_an_identical_one(workdir, capsys):
    path, _ = record_example(workdir, "mlp", "O2", "--steps", "2", "--batch", "32")
    assert replay_main(["--check", str(path), str(path), "--clock-mhz", "200"]) == REGRESSION_EXIT
    out = capsys.readouterr().out
    assert "REGRESSION: simulated step time of MLP [O2]: " in out and " ms -> " in out and "tolerance 5.0%" in out
    assert replay_main(["--check", str(path), str(path)]) == 0
    assert "gate passed" in capsys.readouterr().out
    # a faster replay is no regression; a tolerance above the slow-down lets it pass
    assert replay_main(["--check", str(path), str(path), "--clock-mhz", "2000"]) == 0
    slowed = replay(str(path), WhatIf(clock_mhz=200)).figures
    base = fmt.read_trace(path)
    list(base)
    growth = max(r.current / r.baseline for r in regressions(base.end.figures, slowed, 0.0))
    assert replay_main(["--check", str(path), str(path), "--clock-mhz", "200",
                        "--tolerance", f"{(growth - 1) * 100 + 1:.3f}%"]) == 0


SCRIPT = """import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
ms.set_context(mode=ms.GRAPH_MODE)
net = nn.Dense(16, 8)
for _ in range(2):
    net(Tensor(np.ones((4, 16), np.float32)))
"""


def test_run_check_against_a_saved_baseline_names_the_regressed_peak_memory(workdir, capsys):
    script = workdir / "dense.py"
    script.write_text(SCRIPT)
    baseline = workdir / "baseline.json"
    assert run_main(["--quiet", "--dry-run", "--save-baseline", str(baseline), str(script)]) == 0
    get_runtime().finalize()
    assert run_main(["--quiet", "--dry-run", "--check", str(baseline), str(script)]) == 0
    get_runtime().finalize()
    saved = json.loads(baseline.read_text())
    peak = saved["figures"]["devices"]["0"]["pool"]["peak_used"]
    saved["figures"]["devices"]["0"]["pool"]["peak_used"] = peak // 2       # pretend the run used to need less
    baseline.write_text(json.dumps(saved))
    capsys.readouterr()
    assert run_main(["--quiet", "--dry-run", "--check", str(baseline), str(script)]) == REGRESSION_EXIT
    out = capsys.readouterr().out
    assert "REGRESSION: device 0 peak memory without fragments: " in out
    assert f"({peak // 2} B) -> " in out and f"({peak} B) (+100.0%" in out
