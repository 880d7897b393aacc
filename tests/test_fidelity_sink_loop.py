"""The sunk training loop's per-iteration tasks (issue 23, docs/FIDELITY.md "Sink mode: the loop's own
tasks"): the StreamSwitch, GetNext, loop-counter AssignAdd and StreamActive tasks MindSpore's loop sink adds
to every iteration on Ascend (KernelAdjust::ProcessLoopSink) run in the simulation, cost what their kind
costs and show in the trace. Oracles: prices computed by hand from the 910A preset's documented figures,
and the simulated clock of a stream that runs nothing else."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
import ascendemu.frontend.dataset as ds
from ascendemu.cli.pytest_plugin import emulated_device
from ascendemu.device.cost import (LOOP_SINK_TASK_BY_NAME, LOOP_SINK_TASKS, GetNext, LoopCounterAssignAdd,
                                   StreamActive, StreamSwitch)
from ascendemu.device.spec import get_spec
from ascendemu.errors import RtParamInvalidError
from ascendemu.frontend import nn
from ascendemu.hal import steps

US = 1e-6
# By hand, 910A at 1 GHz: StreamSwitch 1 us and StreamActive 0.5 us (scheduler tasks, as LabelSwitchByIndex
# and LabelGotoEx); GetNext 554.2 us (fitted on NCF: bench/bench_fidelity.py); AssignAdd on one int64 is a
# one-block AI-core kernel: 2 us per task + 1 us per block + 24 bytes through one core's port at 31.5
# B/cycle (its longest pipe).
SWITCH, ACTIVE, GETNEXT = 1.0 * US, 0.5 * US, 554.2 * US
# GetNext also takes its batch's bytes off the data channel at 1.4733 GB/s (fitted on ResNet-18 ImageNet).
CHANNEL = 1.4733e9
ASSIGN_ADD = 2 * US + 1 * US + 24 / 31.5e9
# The step stream's share of one iteration: its StreamSwitch, two AssignAdds and two StreamActives.
STEP_FLOOR = SWITCH + 2 * ASSIGN_ADD + 2 * ACTIVE


def test_each_loop_task_costs_its_kinds_documented_price():
    spec = get_spec()
    assert StreamSwitch.time(spec) == pytest.approx(SWITCH, rel=1e-12)
    assert StreamActive.time(spec) == pytest.approx(ACTIVE, rel=1e-12)
    assert GetNext.time(spec) == pytest.approx(GETNEXT, rel=1e-12)
    # a batch of 256 float32 224x224x3 images: 154 MB, 104.6 ms on the channel (ResNet-18's fit)
    assert GetNext.time(spec, 256 * 224 * 224 * 3 * 4) == pytest.approx(GETNEXT + 104.6227e-3, rel=1e-6)
    assert StreamSwitch.time(spec, 1 << 20) == SWITCH      # the other kinds move no user data
    # a what-if channel of 2 GB/s: 1 MB in 500 us more
    assert GetNext.time(get_spec(dataset_channel_bandwidth=2e9), 10**6) == pytest.approx(GETNEXT + 500 * US)
    assert LoopCounterAssignAdd.time(spec) == pytest.approx(ASSIGN_ADD, rel=1e-12)
    assert STEP_FLOOR == pytest.approx(8.0015238 * US, rel=1e-6)
    # the AssignAdd kernel follows the clock (its port), the scheduler's tasks do not
    fast = get_spec("Ascend910PremiumA")
    assert LoopCounterAssignAdd.time(fast) == pytest.approx(3 * US + 24 / (31.5 * 1.22e9), rel=1e-12)
    assert StreamSwitch.time(fast) == SWITCH


def test_each_kind_is_named_as_mindspore_names_its_op_and_maps_back_from_that_name():
    # the names MindSpore's loop sink gives its tasks (kernel_adjust.cc), which traces write
    assert [k.name for k in LOOP_SINK_TASKS] == ["StreamSwitch", "StreamActive", "AssignAdd", "GetNext"]
    assert {n: k.__name__ for n, k in LOOP_SINK_TASK_BY_NAME.items()} == {
        "StreamSwitch": "StreamSwitch", "StreamActive": "StreamActive", "AssignAdd": "LoopCounterAssignAdd",
        "GetNext": "GetNext"}


def test_a_stream_of_loop_tasks_takes_their_sum_and_traces_each(rt):
    rt.init(device_count=1, trace=True)
    rt.set_device(0)
    s = rt.create_stream()
    iteration = [StreamSwitch, LoopCounterAssignAdd, StreamActive, LoopCounterAssignAdd, StreamActive]
    rt.launch_graph([steps.LoopTask(task, s) for task in iteration * 3])
    rt.loop_task(GetNext, s)                        # the single call prices the same
    rt.synchronize_stream(s)
    spans = [e for e in rt.trace_events() if e.get("cat") == "loop"]
    names = ["StreamSwitch", "AssignAdd", "StreamActive", "AssignAdd", "StreamActive"]
    assert [e["name"] for e in spans] == names * 3 + ["GetNext"]
    # the graph's tasks run back to back (the host issued them at once): three iterations' floor
    graph = spans[:-1]
    assert graph[-1]["ts"] + graph[-1]["dur"] - graph[0]["ts"] == pytest.approx(3 * STEP_FLOOR / US, rel=1e-9)
    assert spans[-1]["dur"] == pytest.approx(GETNEXT / US, rel=1e-9)


def test_a_task_that_is_not_a_loop_tasks_kind_is_refused_with_the_kinds(rt):
    rt.init(device_count=1)
    rt.set_device(0)
    s = rt.create_stream()
    kinds = "one of the classes StreamSwitch, StreamActive, LoopCounterAssignAdd, GetNext of ascendemu.device.cost"
    with pytest.raises(RtParamInvalidError, match=kinds):
        rt.loop_task("GetNext", s)                  # a name is not a kind
    with pytest.raises(RtParamInvalidError, match=kinds):
        rt.loop_task(type("EndOfSequence", (StreamSwitch,), {}), s)     # nor a kind of our own
    with pytest.raises(RtParamInvalidError, match=kinds):
        rt.launch_graph([steps.LoopTask(np.zeros(3), s)])


def test_a_recorded_loop_task_is_written_by_its_op_name_and_replays_as_its_kind(rt, tmp_path):
    """The .aetrace holds MindSpore's op name (the single call's record and a graph launch's step alike);
    the replay maps it back to the kind through the fixed table, and refuses a name not in it."""
    from ascendemu.errors import InvalidFileError
    from ascendemu.hal.record import Recorder
    from ascendemu.replay.replayer import replay
    from ascendemu.traces import aetrace as fmt

    path = tmp_path / "loop.aetrace"
    rec = Recorder(path).attach(rt)
    rt.init(backing=False)
    rt.set_device(0)
    s = rt.create_stream()
    rt.loop_task(GetNext, s, 1 << 20)               # a 1 MiB batch
    rt.launch_graph([steps.LoopTask(LoopCounterAssignAdd, s), steps.LoopTask(StreamActive, s)])
    rt.synchronize_stream(s)
    rec.close()
    rt.finalize()
    reader = fmt.read_trace(path)
    records = list(reader)
    (call,) = [r for r in records if isinstance(r, fmt.LoopTaskCall)]
    (graph,) = [r for r in records if isinstance(r, fmt.LaunchGraph)]
    assert call.task == "GetNext" and call.count == 1 << 20
    assert [w[:2] for w in graph.steps] == [["LoopTask", "AssignAdd"], ["LoopTask", "StreamActive"]]
    result = replay(str(path))
    assert result.figures["devices"]["0"]["streams"][str(s)][1] == pytest.approx(
        GETNEXT + (1 << 20) / CHANNEL + ASSIGN_ADD + ACTIVE, rel=1e-12)
    bad = tmp_path / "bad.aetrace"
    w = fmt.TraceWriter(bad)
    w.write(reader.header)
    for r in records[:-1]:
        w.write(fmt.LoopTaskCall("EndOfSequence", r.stream) if isinstance(r, fmt.LoopTaskCall) else r)
    w.close(records[-1])
    with pytest.raises(InvalidFileError, match="'EndOfSequence' is not a sunk loop's task of this ascendemu "
                                               r"\(StreamSwitch, StreamActive, AssignAdd, GetNext\)"):
        replay(str(bad))


def _train_sunk(net, x: np.ndarray, y: np.ndarray, sink: int) -> None:
    """One epoch of ``sink`` sunk steps of ``net`` (softmax cross-entropy, Momentum) at GRAPH_MODE O2, fed
    batches (x, y) on the current device; the context's mode and jit level are put back."""
    saved = {k: ms.get_context(k) for k in ("mode", "jit_config")}
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O2"})
    try:
        model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                         nn.Momentum(net.trainable_params(), 0.1, 0.9))
        data = ds.GeneratorDataset(lambda: ((x, y) for _ in range(sink)), ["x", "y"])
        model.train(1, data, dataset_sink_mode=True, sink_size=sink)
    finally:
        ms.set_context(**saved)


def _sunk_loop_spans(cache, x: np.ndarray, y: np.ndarray, sink: int) -> tuple[list, list]:
    """The loop tasks' trace spans (data queue's stream, step's stream) of a DryRun sink of ``sink`` steps
    of a one-layer network fed batches (x, y)."""
    with emulated_device(cache, dry_run=True, trace=True) as ex:
        _train_sunk(nn.Dense(x.shape[1], 3), x, y, sink)
        spans = [e for e in ex.rt.trace_events() if e.get("cat") == "loop"]
    by_track: dict = {}
    for e in spans:
        by_track.setdefault(e["tid"], []).append(e)
    queue, step = sorted(by_track.values(), key=lambda es: any(e["name"] == "AssignAdd" for e in es))
    return queue, step


def test_every_sunk_step_runs_the_loop_sinks_tasks_and_pays_them(ascendemu_kernel_cache):
    """A sink of 3 steps of a one-layer network in DryRun: per step, the GetNext loop's StreamSwitch and
    GetNext on the data queue's stream and the step stream's StreamSwitch, two AssignAdds and two
    StreamActives; the step stream's loop tasks take exactly STEP_FLOOR per step."""
    sink = 3
    x, y = np.zeros((2, 4), np.float32), np.zeros((2,), np.int32)
    queue, step = _sunk_loop_spans(ascendemu_kernel_cache, x, y, sink)
    assert [e["name"] for e in queue] == ["StreamSwitch", "GetNext"] * sink
    assert [e["name"] for e in step] == ["StreamSwitch", "AssignAdd", "StreamActive", "AssignAdd",
                                         "StreamActive"] * sink
    assert sum(e["dur"] for e in step) == pytest.approx(sink * STEP_FLOOR / US, rel=1e-9)
    assert sum(e["dur"] for e in queue) == pytest.approx(sink * (SWITCH + GETNEXT + 40 / CHANNEL) / US, rel=1e-9)
    # GetNext fetches the next batch while the step computes: a step this small waits for it, so the
    # batches are GetNext's apart: two uploads (2 us each over PCIe + 32 and 8 bytes at 32 GB/s), the
    # StreamSwitch and GetNext itself (its 40 bytes on the channel)
    starts = [e["ts"] for e in queue if e["name"] == "GetNext"]
    per_batch = 2 * 2 * US + 40 / 32e9 + SWITCH + GETNEXT + 40 / CHANNEL
    assert np.diff(starts) == pytest.approx([per_batch / US] * (sink - 1), rel=1e-9)


def test_a_sunk_step_is_the_longer_of_its_device_work_and_its_batch_on_the_data_channel(ascendemu_kernel_cache):
    """A 1 MiB + 16 KiB batch (4096 rows of 64 float32, 4096 labels) takes 722.8 us on the data channel
    besides GetNext's 554.2 us: the step's own work (a 64 -> 3 Dense) is shorter, so every step starts a
    channel period after the last (a sunk step is max(device, channel)); the step stream idles meanwhile."""
    sink, rows = 3, 4096
    x, y = np.zeros((rows, 64), np.float32), np.zeros((rows,), np.int32)
    nbytes = x.nbytes + y.nbytes
    queue, step = _sunk_loop_spans(ascendemu_kernel_cache, x, y, sink)
    getnext = [e for e in queue if e["name"] == "GetNext"]
    assert [e["dur"] for e in getnext] == pytest.approx([(GETNEXT + nbytes / CHANNEL) / US] * sink, rel=1e-9)
    period = (2 * US + x.nbytes / 32e9) + (2 * US + y.nbytes / 32e9) + SWITCH + GETNEXT + nbytes / CHANNEL
    assert period == pytest.approx(1315.3 * US, rel=1e-4)            # by hand: 1 MiB + 16 KiB
    # each step starts (its first AssignAdd, once the batch is in) the channel's period after the last
    starts = [e["ts"] for e in step if e["name"] == "AssignAdd"][0::2]
    assert np.diff(starts) == pytest.approx([period / US] * (sink - 1), rel=1e-6)
    # ... which is longer than the step's device work: the step stream ends each iteration well before
    ends = [e["ts"] + e["dur"] for e in step if e["name"] == "StreamActive"][1::2]
    assert all(end - start < 0.1 * period / US for start, end in zip(starts, ends))


SUNK_SCRIPT = '''
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
from mindspore import nn

ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O2"})
net = nn.Dense(4, 3)
model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                 nn.Momentum(net.trainable_params(), 0.1, 0.9))
x, y = np.zeros((2, 4), np.float32), np.zeros((2,), np.int32)
model.train(1, ds.GeneratorDataset(lambda: ((x, y) for _ in range(3)), ["x", "y"]), dataset_sink_mode=True)
'''


def test_a_recorded_sunk_run_replays_its_loop_tasks_bit_for_bit(tmp_path, monkeypatch, restore_context):
    """The loop tasks are steps of the sink's graph launch in the .aetrace: a replay runs them again and
    every simulated figure comes out as the live run's."""
    from ascendemu.cli.run import main as run_main
    from ascendemu.hal.runtime import get_runtime
    from ascendemu.replay.compare import differences
    from ascendemu.replay.replayer import replay

    monkeypatch.setenv("MS_COMPILER_CACHE_PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    script, trace = tmp_path / "sunk.py", tmp_path / "sunk.aetrace"
    script.write_text(SUNK_SCRIPT)
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    try:
        run_main(["--quiet", "--dry-run", "--record", str(trace), str(script)])
        live = rt.device_time()
    finally:
        rt.finalize()
    from ascendemu.traces.aetrace import LaunchGraph, read_trace
    graphs = [r for r in read_trace(trace) if isinstance(r, LaunchGraph)]
    sunk = [w[1] for r in graphs for w in r.steps if w[0] == "LoopTask"]
    assert sunk.count("GetNext") == 3 and sunk.count("AssignAdd") == 6
    result = replay(str(trace))
    assert result.stop is None and result.figures["device_time_s"] == live
    assert differences(result.recorded.figures, result.figures) == []
    if get_runtime().node is not None:
        get_runtime().finalize()


def _steady_period(cache, spec, sink: int = 3) -> tuple[float, float]:
    """(steady step period, one GetNext's duration), in us, of a DryRun sink of a 64 -> 4096 -> 4096 -> 10
    MLP at batch 256 on ``spec``: from the starts of its steps (their first AssignAdd)."""
    from ascendemu.cli.pytest_plugin import fresh_runtime
    from ascendemu.frontend.backend import set_backend
    from ascendemu.graph.executor import DeviceExecutor

    x, y = np.zeros((256, 64), np.float32), np.zeros((256,), np.int32)
    with fresh_runtime() as rt:
        rt.init(spec=spec, trace=True, backing=False)
        ex = DeviceExecutor(cache_root=str(cache), progress=False, dry_run=True)
        previous = set_backend(ex)
        try:
            _train_sunk(nn.SequentialCell([nn.Dense(64, 4096), nn.ReLU(), nn.Dense(4096, 4096), nn.ReLU(),
                                           nn.Dense(4096, 10)]), x, y, sink)
        finally:
            set_backend(previous)
        spans = [e for e in rt.trace_events() if e.get("cat") == "loop"]
    starts = [e["ts"] for e in spans if e["name"] == "AssignAdd"][0::2]
    getnext = [e["dur"] for e in spans if e["name"] == "GetNext"]
    return float(np.diff(starts)[-1]), getnext[0]


def test_a_long_step_that_blocks_the_host_does_not_hold_back_the_next_batchs_fetch(ascendemu_kernel_cache):
    """MindSpore's StreamActive restarts the GetNext loop at a step's start, so the next batch is fetched
    while the step computes. The sink issues the next batch's fetch before the step's kernels: with
    streams that hold only 4 tasks (the host blocks on every kernel, as on a step of thousands of kernels
    with the default 1024) the device-bound step keeps the period it has when the host never blocks."""
    free, getnext = _steady_period(ascendemu_kernel_cache, get_spec())
    blocked, _ = _steady_period(ascendemu_kernel_cache, get_spec(stream_queue_depth=4))
    assert getnext == pytest.approx((GETNEXT + (256 * 64 * 4 + 256 * 4) / CHANNEL) / US, rel=1e-9)
    assert free > 1.5 * getnext               # device-bound: the channel is not what sets the period
    # within 1% (the blocked host's issue order moves a loop task by a microsecond); with the fetch issued
    # after the step's kernels it starts only when they drain, and the period was 1.26 ms, not 1.0
    assert blocked == pytest.approx(free, rel=0.01)
