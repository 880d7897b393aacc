"""DryRun (graphs compile, memory and time are simulated, no kernel is built or run) and the graph cache."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascendemu.frontend import Tensor, capture, context, set_backend  # noqa: E402
from ascendemu.graph.executor import DeviceExecutor  # noqa: E402
from ascendemu.hal.runtime import get_runtime  # noqa: E402
from examples.networks import MLP  # noqa: E402


def _run(tmp_path: Path, dry_run: bool, level: str, device: str | None = None):
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    executor = DeviceExecutor(cache_root=str(tmp_path), dry_run=dry_run, progress=False, device=device)
    previous = set_backend(executor)
    try:
        context.set_context(mode=context.GRAPH_MODE, jit_config={"jit_level": level})
        net = MLP(in_features=64, hidden=(32,), num_classes=8)
        x = Tensor(np.ones((4, 64), np.float32))
        out = net(x).asnumpy()
        net(x)
        step = executor.steps[-1]
        return out, step.device_s, rt.mem_stats(), executor.summary()
    finally:
        set_backend(previous)
        context.set_context(mode=context.PYNATIVE_MODE)
        rt.finalize()


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_dry_run_prices_and_sizes_like_the_real_run(tmp_path, level):
    dry_dir, real_dir = tmp_path / "dry", tmp_path / "real"
    _, dry_time, dry_mem, dry_lines = _run(dry_dir, True, level)
    assert not list((dry_dir / "rank_0" / "kernel_meta").glob("*.o"))      # nothing was built
    out, real_time, real_mem, _ = _run(real_dir, False, level)
    # built for real: the two Dense layers' MatMul + bias (+ ReLU) at least (one kernel at O2, where the
    # fused epilogues are chosen at run time from kernels.ops.matmul.EPILOGUE_MENU)
    assert len(list((real_dir / "rank_0" / "kernel_meta").glob("*.o"))) >= 1
    assert np.isfinite(out).all() and out.shape == (4, 8)
    assert dry_time == pytest.approx(real_time, rel=1e-12)                   # same simulated step time
    assert (dry_mem.peak_used, dry_mem.actual_peak) == (real_mem.peak_used, real_mem.actual_peak)
    assert f"Used peak memory usage (without fragments): {dry_mem.peak_used / (1 << 20):.2f}M" in \
        "\n".join(dry_lines)


def test_graph_cache_hit_and_corrupt_entry_recovery(tmp_path):
    """The second run of a graph skips compilation; a corrupt entry is dropped with a warning and rebuilt."""
    from ascendemu.graph.graph_cache import GraphCacheWarning

    _run(tmp_path, True, "O1")
    (entry,) = (tmp_path / "rank_0" / "graph_cache").glob("*_O1_*.json")
    compiled_json = entry.read_bytes()
    rt = get_runtime()
    executor = DeviceExecutor(cache_root=str(tmp_path), dry_run=True, progress=False)
    net = MLP(in_features=64, hidden=(32,), num_classes=8)
    graph, _ = capture(net, Tensor(np.ones((4, 64), np.float32)))
    executor.prepare(graph, "O1")
    assert (executor.graph_cache.hits, executor.graphs_compiled) == (1, 0)
    entry.write_bytes(compiled_json[: len(compiled_json) // 2])
    fresh = DeviceExecutor(cache_root=str(tmp_path), dry_run=True, progress=False)
    with pytest.warns(GraphCacheWarning, match="unreadable"):
        fresh.prepare(graph, "O1")
    assert (fresh.graph_cache.hits, fresh.graphs_compiled) == (0, 1)
    assert entry.read_bytes() == compiled_json            # rewritten whole
    rt.finalize()


def test_other_device_presets_price_the_same_graph_differently(tmp_path):
    """"What would this cost on another chip": the 910B1 has 24 faster cores and more HBM bandwidth."""
    _, t_910a, _, lines_a = _run(tmp_path, True, "O2")
    _, t_b1, mem_b1, lines_b1 = _run(tmp_path, True, "O2", device="Ascend910B1")
    assert "Ascend910A, simulated" in "\n".join(lines_a) and "Ascend910B1, simulated" in "\n".join(lines_b1)
    assert mem_b1.total == 64 << 30
    assert t_b1 < t_910a


def test_dry_run_of_a_network_never_imports_numba(tmp_path):
    """DryRun prices and plans memory from each op's pure-Python plan: numba stays out of the process,
    at every level, with PyNative ops too."""
    import subprocess

    code = f"""
import sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
import numpy as np
from ascendemu.frontend import Tensor, context, ops, set_backend
from ascendemu.graph.executor import DeviceExecutor
from examples.networks import LeNet5
executor = DeviceExecutor(cache_root={str(tmp_path)!r}, dry_run=True, progress=False)
set_backend(executor)
x = Tensor(np.ones((2, 1, 32, 32), np.float32))
for level in ("O0", "O1", "O2"):
    context.set_context(mode=context.GRAPH_MODE, jit_config={{"jit_level": level}})
    assert LeNet5()(x).shape == (2, 10)
context.set_context(mode=context.PYNATIVE_MODE)
ops.relu(x)
assert len(executor.steps) == 4 and executor.rt.node.devices[0].kernels_run > 3 * 10
print("numba" in sys.modules, sorted(m for m in sys.modules if m.startswith("numba"))[:3])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False []"


def test_a_long_pynative_run_keeps_bounded_step_records_and_full_totals(tmp_path):
    from ascendemu.frontend import ops
    from ascendemu.graph.executor import STEP_HISTORY
    from test_abstract_weights import dry_run

    with dry_run(tmp_path) as executor:
        x = Tensor(np.ones(8, np.float32))
        for _ in range(STEP_HISTORY + 500):
            x = ops.neg(x)
        assert len(executor.steps) == STEP_HISTORY
        assert any(line.startswith(f"Neg [PyNative]: {STEP_HISTORY + 500} run(s)") for line in executor.summary())


def test_dry_run_of_a_training_step_reports_memory_by_kind(tmp_path):
    """A DryRun training step (Dense 128-256-128, Momentum, batch 128): weights, optimizer state and
    inputs against hand-computed sizes; the node outputs at the peak split into activations, gradients
    and update temporaries that add up to the order's peak (before alignment); the report survives the
    graph cache; nothing is built."""
    from ascendemu.frontend import nn
    from ascendemu.graph.memory_report import MemoryKind

    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    executor = DeviceExecutor(cache_root=str(tmp_path), dry_run=True, progress=False)
    previous = set_backend(executor)
    try:
        context.set_context(mode=context.GRAPH_MODE, jit_config={"jit_level": "O0"})
        net = nn.SequentialCell(nn.Dense(128, 256), nn.ReLU(), nn.Dense(256, 128))
        loss = nn.WithLossCell(net, nn.MSELoss())
        step = nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))
        x, y = Tensor(np.ones((128, 128), np.float32)), Tensor(np.zeros((128, 128), np.float32))
        step(x, y)
        step(x, y)
        (compiled,) = [p.compiled for p in executor._prepared.values()]
        r = compiled.memory_report
        weights = (128 * 256 + 256 + 256 * 128 + 128) * 4
        assert r.trains and (r.bytes[MemoryKind.WEIGHTS], r.counts[MemoryKind.WEIGHTS]) == (weights + 4, 5)  # + global_step
        assert r.bytes[MemoryKind.OPTIMIZER_STATE] == weights + 4 + 4          # moments, learning rate, momentum
        assert r.bytes[MemoryKind.INPUTS] == 2 * 128 * 128 * 4
        assert r.bytes[MemoryKind.ACTIVATIONS] > 0 and r.bytes[MemoryKind.GRADIENTS] > 0
        live = sum(r.counts[k] for k in (MemoryKind.ACTIVATIONS, MemoryKind.GRADIENTS, MemoryKind.UPDATE))
        assert 0 <= compiled.lower_bound - r.peak_bytes < 512 * live      # the peak, before 512-B alignment
        line = next(s for s in executor.summary() if "step memory" in s)
        assert "weights 257.50 KiB (5 tensors), optimizer state 257.51 KiB (6 tensors)" in line
        assert not list(tmp_path.rglob("*.o"))                                # DryRun builds no kernel
        cached = executor.graph_cache.load(compiled.cache_name)
        assert cached.memory_report == r
    finally:
        set_backend(previous)
        context.set_context(mode=context.PYNATIVE_MODE)
        rt.finalize()


def test_sunk_dry_run_reports_the_sink_time_per_step(tmp_path):
    """Dataset sink mode: a DryRun reports a step time (MindSpore's sink mode: a sink's time over its
    steps), not '-'. Oracle: the hal figures' device timeline, the last task's end over every stream,
    measured from the second sink's start (the first sink, which sets up the queue, is excluded as a
    graph's first run is) over its 4 steps."""
    from ascendemu.cli.cluster import dryrun_figures
    from ascendemu.cli.pytest_plugin import emulated_device
    from ascendemu.graph.executor import DRYRUN_STEP
    from ascendemu.graph.ir import Graph
    from ascendemu.hal.record import figures
    from ascendemu.kernels.signature import TensorDesc

    g = Graph("sunk")
    x = g.add_input(TensorDesc((64, 256)))
    w = g.add_constant("w", np.ones((256, 256), np.float32), True)
    g.outputs = [g.add_node("ReLU", [g.add_node("MatMul", [x, w]).outputs[0]]).outputs[0]]
    batch = [np.ones((64, 256), np.float32)]
    with emulated_device(tmp_path, dry_run=True) as executor:
        rt = executor.rt
        executor.run_graph_sunk(g, [batch] * 3, "O2")
        start = rt.host_time()
        executor.run_graph_sunk(g, [batch] * 4, "O2")
        streams = figures(rt.node)["devices"]["0"]["streams"]
        per_step = (max(end for _, _, end in streams.values()) - start) / 4
        name, step = executor.step_time()
        assert name == "sunk [O2, dataset sink mode]" and step == pytest.approx(per_step, rel=1e-12)
        log = "\n".join(f"[ascendemu] {line}" for line in executor.summary())
    assert f"{DRYRUN_STEP}{per_step * 1e3:.3f} ms" in log
    assert dryrun_figures(log)["step"] == f"{per_step * 1e3:.3f} ms"     # what msrun --sim_level 1 tabulates
