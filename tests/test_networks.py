"""The example networks through the real executor at O0, O1 and O2, against the numpy oracle in
examples/reference.py (same weights), plus what the levels promise: no-task nodes launch nothing,
O2 spreads the downsample block over streams with events, static plans near the lower bound, the
seed's host-bound ordering of simulated step times, and clear errors for what GRAPH_MODE cannot do.

Shapes are small and shared where possible (the stride-2 block's second conv has the same signature
as the plain block's convs) so that the session builds few kernels; all tests of a session (and all
xdist workers of it) share one kernel cache.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.frontend import Tensor, nn, ops  # noqa: E402
from ascendemu.frontend.unsupported import UnsupportedOpError  # noqa: E402
from ascendemu.cli.pytest_plugin import emulated_device  # noqa: E402
from ascendemu.graph.capture import GraphCaptureError  # noqa: E402
from ascendemu.graph.executor import DeviceExecutor  # noqa: E402
from ascendemu.graph.memory_plan import heaviest_clique  # noqa: E402
from ascendemu.hal.steps import Launch, RecordEvent, WaitEvent  # noqa: E402
from examples import reference as ref  # noqa: E402
from examples.networks import MLP, BasicBlock, LeNet5, TransformerEncoderLayer  # noqa: E402

LEVELS = ("O0", "O1", "O2")
RTOL, ATOL = 1e-4, 1e-5                     # float32 device vs float64 numpy
PLAN_SLACK = 1.05                           # static plan size <= 1.05 x lower bound
PLAN_ALIGN = 512                            # the executor's workspace alignment (CompiledGraph docs)
# The seed's no-task nodes: they only reinterpret the shape, so they must never be launched.
NO_TASK = ("Reshape", "ExpandDims", "Squeeze", "Flatten")
WEIGHT_SEED, INPUT_SEED = 11, 5


@dataclass(frozen=True)
class Case:
    factory: Callable[[], nn.Cell]
    input_shape: tuple[int, ...]
    reference: Callable[[dict, np.ndarray], np.ndarray]


CASES = {
    "mlp": Case(lambda: MLP(64, (32, 16), 10), (4, 64), ref.mlp),
    "lenet5": Case(LeNet5, (2, 1, 32, 32), ref.lenet5),
    "block_downsample": Case(lambda: BasicBlock(4, 8, stride=2), (2, 4, 8, 8),
                             lambda p, x: ref.basic_block(p, x, stride=2)),
    "block": Case(lambda: BasicBlock(8, 8), (2, 8, 4, 4), lambda p, x: ref.basic_block(p, x, stride=1)),
    "transformer": Case(lambda: TransformerEncoderLayer(16, 2, 32), (2, 4, 16),
                        lambda p, x: ref.transformer_encoder_layer(p, x, nhead=2)),
}


def build(name: str) -> tuple[nn.Cell, np.ndarray, dict[str, np.ndarray]]:
    """The network (seeded weights), its input and its weights as numpy arrays."""
    ms.set_seed(WEIGHT_SEED)
    net = CASES[name].factory()
    x = np.random.default_rng(INPUT_SEED).standard_normal(CASES[name].input_shape).astype(np.float32)
    return net, x, {k: p.asnumpy() for k, p in net.parameters_dict().items()}


# ------------------------------------------------------------------------------------------ fixtures

class Launches:
    """Counts kernel launches at the runtime's API (launch_kernel, and kernels inside launch_graph)."""

    def __init__(self) -> None:
        self.kernels: list[str] = []
        self.graph_items: list[tuple] = []

    def __call__(self, name: str, args: tuple, kwargs: dict, result, host_time: float) -> None:
        if name == "launch_kernel":
            self.kernels.append(args[0].name)
        elif name == "launch_graph":
            self.graph_items += list(args[0])
            self.kernels += [step.kernel.name for step in args[0] if isinstance(step, Launch)]

    def clear(self) -> None:
        self.kernels.clear()
        self.graph_items.clear()


@dataclass
class Device:
    executor: DeviceExecutor
    launches: Launches

    def run(self, net: nn.Cell, x: np.ndarray, level: str) -> np.ndarray:
        """One GRAPH_MODE step at ``level``; ``launches`` then holds exactly this step's launches."""
        ms.set_context(jit_config={"jit_level": level})
        self.launches.clear()
        return net(Tensor(x)).asnumpy()


@pytest.fixture
def device(ascendemu_kernel_cache):
    """A fresh emulated node and executor (backend of the front end), in GRAPH_MODE."""
    with emulated_device(ascendemu_kernel_cache) as executor:
        launches = Launches()
        executor.rt.recorders.append(launches)
        ms.set_context(mode=ms.GRAPH_MODE)
        try:
            yield Device(executor, launches)
        finally:
            executor.rt.recorders.remove(launches)


# ------------------------------------------------------------------------------------------ numerics

@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy_reference(device, name, level):
    net, x, params = build(name)
    want = CASES[name].reference(params, x)
    for _ in range(2):                       # the first step compiles/loads, the second reuses
        out = device.run(net, x, level)
        assert out.shape == want.shape
        np.testing.assert_allclose(out, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", sorted(CASES))
def test_levels_agree_bitwise(device, name):
    """O1/O2 run the same fused kernels; fusion computes each step in float32 registers in the order
    the unfused O0 kernels do, so all three levels give identical bits."""
    net, x, _ = build(name)
    o0, o1, o2 = (device.run(net, x, level) for level in LEVELS)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(o0, o1)


@pytest.mark.parametrize("name", ["lenet5", "transformer"])
def test_pynative_matches_graph_mode(device, name):
    """PyNative runs each primitive as its own kernel (no fusion, a launch per op): same numbers as O0."""
    net, x, params = build(name)
    graph_out = device.run(net, x, "O0")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    out = net(Tensor(x)).asnumpy()
    assert device.launches.kernels and all(not k.startswith("fused") for k in device.launches.kernels)
    np.testing.assert_allclose(out, CASES[name].reference(params, x), rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(out, graph_out)


# ------------------------------------------------------------------------------------ launches

@pytest.mark.parametrize("name, no_task", [("lenet5", 1), ("transformer", 16)])
def test_no_task_nodes_produce_no_launch(device, name, no_task):
    net, x, _ = build(name)
    graph, _ = ms.capture(net, Tensor(x))
    assert sum(n.op in NO_TASK for n in graph.nodes) == no_task
    device.run(net, x, "O0")
    assert len(device.launches.kernels) == len(graph.nodes) - no_task == device.executor.steps[-1].kernels
    launched_ops = {k.rsplit("_", 2)[0] for k in device.launches.kernels}      # "<op>_<hash>_<device>"
    assert not launched_ops & {re.sub(r"(?<!^)(?=[A-Z])", "_", op).lower() for op in NO_TASK}
    device.run(net, x, "O1")                 # fusion only ever removes launches
    assert len(device.launches.kernels) < len(graph.nodes) - no_task


def _streams_and_events(items: list) -> tuple[set[int], list[tuple], list[tuple]]:
    """Streams of the kernels, and (kind, event, stream) of the records and waits, of a sunk schedule."""
    streams = {step.stream for step in items if isinstance(step, Launch)}
    return (streams, [("record", i.event, i.stream) for i in items if isinstance(i, RecordEvent)],
            [("wait", i.event, i.stream) for i in items if isinstance(i, WaitEvent)])


def test_o2_runs_downsample_block_on_two_streams_with_events(device):
    net, x, _ = build("block_downsample")
    device.run(net, x, "O2")
    streams, records, waits = _streams_and_events(device.launches.graph_items)
    assert len(streams) >= 2 and records and waits
    for _, event, stream in waits:           # every wait is on an event another stream records
        assert any(e == event and s != stream for _, e, s in records)
    device.run(net, x, "O1")                 # a single-op level: kernel by kernel, nothing sunk
    assert device.launches.graph_items == [] and len(device.launches.kernels) == 8


def test_o2_plain_block_is_one_chain_on_one_stream(device):
    net, x, _ = build("block")
    device.run(net, x, "O2")
    streams, records, waits = _streams_and_events(device.launches.graph_items)
    assert len(streams) == 1 and not records and not waits


# ---------------------------------------------------------------------------------------- memory

def _happens_before(compiled) -> dict[int, set[int]]:
    """Kernel node id -> node ids finished before it starts: stream order, events, transitively."""
    preds: dict[int, set[int]] = {k.node_id: set() for k in compiled.kernels}
    for stream in range(compiled.num_streams):
        previous, pending = None, []
        for kind, _, ident in (step.to_json() for step in compiled.schedule if step.stream == stream):
            if kind == "wait":
                pending.append(compiled.events[ident][0])
            elif kind == "kernel":
                preds[ident].update(pending + ([previous] if previous is not None else []))
                previous, pending = ident, []
    before: dict[int, set[int]] = {}
    for k in compiled.kernels:               # kernels are listed in a topological order
        before[k.node_id] = set().union(*([before[p] | {p} for p in preds[k.node_id]] or [set()]))
    return before


def concurrent_lower_bound(compiled) -> tuple[int, dict[int, set[int]]]:
    """No static plan of this stream schedule can be smaller: the heaviest set of node outputs that
    pairwise may be alive at once (two values may share memory only if every use of one happens
    before the other is produced), derived from the compiled stream lists and events, independently of
    the planner's own happens-before over the graph."""
    before = _happens_before(compiled)
    producer: dict[int, int] = {}
    users: dict[int, set[int]] = {}
    for k in compiled.kernels:
        for v in k.outputs:
            producer[compiled.root(v)] = k.node_id
    for k in compiled.kernels:
        for v in k.inputs + k.outputs:
            if compiled.root(v) in producer:
                users.setdefault(compiled.root(v), set()).add(k.node_id)
    outputs = {compiled.root(v) for v in compiled.outputs}

    def done_before(a: int, b: int) -> bool:
        return a not in outputs and users[a] <= before[producer[b]]

    values = sorted(producer)
    conflicts = {a: {b for b in values if b != a and not done_before(a, b) and not done_before(b, a)}
                 for a in values}
    size = {v: -(-max(compiled.values[v].nbytes, 1) // PLAN_ALIGN) * PLAN_ALIGN for v in values}
    best = heaviest_clique(conflicts, size)     # the clique search is shared; the conflicts are derived here
    return best, conflicts


@pytest.mark.parametrize("name", sorted(CASES))
def test_o2_static_plan_near_lower_bound(device, name):
    net, x, _ = build(name)
    graph, _ = ms.capture(net, Tensor(x))
    compiled = device.executor.prepare(graph, "O2").compiled
    bound, conflicts = concurrent_lower_bound(compiled)
    assert compiled.memory == "static"
    assert bound <= compiled.workspace_size <= PLAN_SLACK * bound
    assert compiled.concurrent_bound == bound        # the planner's own bound, derived from the graph
    # The plan is valid: values that may be alive together never overlap.
    off, size = compiled.offsets, {v: compiled.values[v].nbytes for v in conflicts}
    for a in conflicts:
        for b in conflicts[a]:
            assert off[a] + size[a] <= off[b] or off[b] + size[b] <= off[a], (a, b)
    # CompiledGraph.lower_bound is the single-stream peak: the bound when everything is one chain.
    if compiled.num_streams == 1:
        assert compiled.workspace_size <= PLAN_SLACK * compiled.lower_bound
        assert bound == compiled.lower_bound


# ------------------------------------------------------------------------------------- step time

def test_lenet_simulated_step_time_o2_below_o1_not_above_o0(device):
    """The seed: on a small host-bound network O1's fusion saves launches and O2's graph sinking
    removes the per-op host cost. Simulated time is deterministic, so steady steps take the same time."""
    net, x, _ = build("lenet5")
    per_step = {}
    for level in LEVELS:
        for _ in range(3):
            device.run(net, x, level)
        steady = [s.device_s for s in device.executor.steps if s.jit_level == level][1:]
        assert steady[0] == pytest.approx(steady[1], rel=1e-9) and steady[0] > 0   # clock rounding only
        per_step[level] = steady[0]
    assert per_step["O2"] < per_step["O1"] <= per_step["O0"], per_step


# ---------------------------------------------------------------------------------------- errors

class DataDependentIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.relu = ops.ReLU()

    def construct(self, x):
        y = self.relu(x)
        if float(y.sum()) > 0:      # a tensor's value on the host (a tensor `if` compiles: test_control_flow)
            return y
        return -y


class UsesAnUnsupportedOp(nn.Cell):
    def __init__(self):
        super().__init__()
        self.loss = ops.DeformableOffsets()

    def construct(self, x):
        return self.loss(x)


class SelectsWithAMask(nn.Cell):
    def construct(self, x):
        return x[x > 0]


def test_data_dependent_if_is_a_clear_capture_error(device):
    with pytest.raises(GraphCaptureError, match="data-dependent control flow is not supported in GRAPH_MODE"):
        DataDependentIf()(Tensor(np.ones((2, 3), np.float32)))
    assert device.launches.kernels == []


def test_unsupported_op_is_named(device):
    with pytest.raises(UnsupportedOpError, match=r"ops\.DeformableOffsets is not supported"):
        UsesAnUnsupportedOp()
    with pytest.raises(GraphCaptureError, match="bool tensor selects a data-dependent number of elements"):
        SelectsWithAMask()(Tensor(np.ones((2, 3), np.float32)))
