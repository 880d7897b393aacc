"""A tensor `if` in GRAPH_MODE as a conditional on the device (graph.ir.IfNode, graph.program.Branch,
ProgramRunner._branch: LabelSwitch to the taken branch, LabelGoto to the join).

Oracles: numpy runs of the same Python programs for both branches, nested `if`s and an `if` in a device
loop's body; the Chrome trace's kernel spans (only the taken branch's kernels run) and the cost model's
LABEL_SWITCH_S/LABEL_GOTO_S; a recorded `.aetrace` replayed to the same figures bit for bit. Where the
`if` must stay if-converted (gradients, Parameter updates in a branch, DryRun) the graph has no If node.
"""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.device.cost import LABEL_GOTO_S, LABEL_SWITCH_S
from ascendemu.frontend import Parameter, Tensor, nn, ops
from ascendemu.frontend.capture import trace
from ascendemu.frontend.common import parse
from ascendemu.graph.ir import IfNode, WhileNode
from ascendemu.graph.program import Branch, split
from ascendemu.traces import aetrace as fmt

from replay_check import record_and_replay

LEVELS = ("O0", "O1", "O2")


@pytest.fixture(autouse=True)
def graph_mode(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    yield


def _level(level: str) -> None:
    ms.set_context(jit_config={"jit_level": level})


def _graph(cell: nn.Cell, *args: Tensor):
    graph, _ = trace(parse.convert(type(cell).construct).__get__(cell), args, "g")
    return graph


class TwoStacks(nn.Cell):
    """Two different branches: an exp stack when the input sums above 0, a sin stack otherwise."""

    def construct(self, x, y):
        if x.sum() > 0:
            z = ops.exp(x) * 2 + y
        else:
            z = ops.sin(x) - y
        return z * 3


def two_stacks_ref(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    z = np.exp(x) * 2 + y if x.sum() > 0 else np.sin(x) - y
    return z * 3


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("sign", (1.0, -1.0))
def test_both_branches_match_numpy(level, sign):
    _level(level)
    x = np.linspace(-0.5, 1.0, 6).astype(np.float32) * np.float32(sign)
    y = np.arange(6, dtype=np.float32)
    out = TwoStacks()(Tensor(x), Tensor(y)).asnumpy()
    np.testing.assert_allclose(out, two_stacks_ref(x, y), rtol=1e-6)


def test_the_if_is_one_if_node_with_two_branch_graphs_and_splits_into_a_branch_part():
    x = Tensor(np.ones(4, np.float32))
    graph = _graph(TwoStacks(), x, x)
    (node,) = [n for n in graph.nodes if isinstance(n, IfNode)]
    assert [n.op for n in node.then.nodes] == ["Exp", "Mul", "Add"]
    assert [n.op for n in node.other.nodes] == ["Sin", "Sub"]
    assert node.where.endswith(f"test_control_flow_if.py:{TwoStacks.construct.__code__.co_firstlineno + 1}")
    assert graph.values[node.inputs[0]].to_json() == {"shape": [], "dtype": "bool"}
    assert [type(p).__name__ for p in split(graph).parts] == ["Segment", "Branch", "Segment"]
    assert any(isinstance(p, Branch) and p.node is node for p in split(graph).parts)


class Nested(nn.Cell):
    def construct(self, x):
        if x[0] > 0:
            if x[1] > 0:
                y = x + 1
            else:
                y = x - 1
        else:
            y = x * 10
        return y


@pytest.mark.parametrize("level", ("O0", "O2"))
def test_nested_ifs_match_numpy(level):
    _level(level)
    for a, b in ((1, 1), (1, -1), (-1, 1)):
        x = np.array([a, b, 0.5], np.float32)
        ref = (x + 1 if b > 0 else x - 1) if a > 0 else x * 10
        np.testing.assert_array_equal(Nested()(Tensor(x)).asnumpy(), ref)
    graph = _graph(Nested(), Tensor(np.ones(3, np.float32)))
    (outer,) = [n for n in graph.nodes if isinstance(n, IfNode)]
    assert any(isinstance(n, IfNode) for n in outer.then.nodes)


class HalveOrTriple(nn.Cell):
    """Collatz steps with a tensor `if` in a device loop's body."""

    def construct(self, x):
        steps = ops.zeros((), ms.int32)
        while x != 1:
            half = ops.floor_div(x, 2)
            if x - half * 2 == 0:
                x = half
            else:
                x = x * 3 + 1
            steps = steps + 1
        return steps


def collatz_ref(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@pytest.mark.parametrize("level", ("O0", "O2"))
def test_an_if_inside_a_device_loop_body(level):
    _level(level)
    for start in (6, 7):
        assert int(HalveOrTriple()(Tensor(np.array(start, np.int32))).asnumpy()) == collatz_ref(start)
    graph = _graph(HalveOrTriple(), Tensor(np.array(6, np.int32)))
    (loop,) = [n for n in graph.nodes if isinstance(n, WhileNode)]
    assert any(isinstance(n, IfNode) for n in loop.body.nodes)


def _spans(ex, fn):
    ex.rt.start_trace()
    try:
        fn()
        return [e for e in ex.rt.trace_events() if e.get("ph") == "X"]
    finally:
        ex.rt.node.attach_trace(None)


@pytest.mark.parametrize("level", ("O0", "O2"))
def test_only_the_taken_branchs_kernels_run_and_the_control_tasks_are_priced(ex, level):
    _level(level)
    net, y = TwoStacks(), Tensor(np.zeros(4, np.float32))
    net(Tensor(np.ones(4, np.float32)), y)                   # compiled and warm
    for sign, taken, ran, skipped in ((1, True, "then", "else"), (-1, False, "else", "then")):
        events = _spans(ex, lambda: net(Tensor(np.ones(4, np.float32) * sign), y))
        kernels = [e["name"] for e in events if e.get("cat") == "kernel"]
        # the branch's kernels are named under it (fused at O2: .../then/FusedElemwise[Exp-op1,...])
        assert any(f"/If-op3/{ran}/" in k for k in kernels) and not any(f"/{skipped}/" in k for k in kernels)
        assert any(("Exp" if taken else "Sin") in k for k in kernels)
        switches = [e for e in events if e["name"] == "LabelSwitch"]
        gotos = [e for e in events if e["name"] == "LabelGoto"]
        assert [s["args"]["taken"] for s in switches] == [taken]
        assert len(gotos) == int(taken)            # the then branch jumps past the else branch to the join
        assert switches[0]["dur"] == pytest.approx(LABEL_SWITCH_S * 1e6)
        assert all(g["dur"] == pytest.approx(LABEL_GOTO_S * 1e6) for g in gotos)


def test_branches_leaving_python_values_and_one_sided_variables():
    class Mixed(nn.Cell):
        def construct(self, x):
            k = 2
            if x.sum() > 0:
                y = x * k
                only = x
            else:
                y = x + k
            return y

    graph = _graph(Mixed(), Tensor(np.ones(3, np.float32)))
    assert sum(isinstance(n, IfNode) for n in graph.nodes) == 1
    x = np.array([-3.0, 1.0, 0.5], np.float32)
    np.testing.assert_array_equal(Mixed()(Tensor(x)).asnumpy(), x + 2)


def test_branches_of_different_shapes_are_refused_as_mindspore_does():
    class Bad(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                y = x
            else:
                y = x.reshape((1, 3))
            return y

    with pytest.raises(TypeError, match="Shape Join Failed.*'y'"):
        Bad()(Tensor(np.ones(3, np.float32)))


# ------------------------------------------------------------------ where the `if` stays if-converted

def test_a_branch_assigning_a_parameter_is_if_converted_and_skipped_bit_for_bit():
    class Guarded(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.array([1.5, -2.0], np.float32)), name="w")

        def construct(self, g):
            ok = ops.isfinite(g).all()
            if ok:
                ops.assign(self.w, self.w - g)
            return ok

    net = Guarded()
    graph = _graph(net, Tensor(np.ones(2, np.float32)))
    assert not any(isinstance(n, IfNode) for n in graph.nodes) and graph.updates
    before = net.w.asnumpy().copy()
    net(Tensor(np.array([np.inf, 1.0], np.float32)))
    assert net.w.asnumpy().tobytes() == before.tobytes()
    net(Tensor(np.array([0.5, 1.0], np.float32)))
    np.testing.assert_array_equal(net.w.asnumpy(), before - np.array([0.5, 1.0], np.float32))


def test_the_gradient_of_a_tensor_if_is_if_converted_and_matches_numpy():
    def f(x):
        if x.sum() > 0:
            y = x * x
        else:
            y = x * 3
        return y.sum()

    for x in (np.array([1.0, 2.0], np.float32), np.array([-1.0, 0.5], np.float32)):
        g = ms.grad(f)(Tensor(x)).asnumpy()
        np.testing.assert_allclose(g, 2 * x if x.sum() > 0 else np.full_like(x, 3), rtol=1e-6)


def test_dry_run_if_converts_and_prices_both_branches(tmp_path):
    from ascendemu.frontend.backend import set_backend
    from ascendemu.graph.executor import DeviceExecutor

    dry = DeviceExecutor(cache_root=str(tmp_path), dry_run=True, progress=False)
    previous = set_backend(dry)
    try:
        graph = _graph(TwoStacks(), Tensor(np.ones(4, np.float32)), Tensor(np.ones(4, np.float32)))
    finally:
        set_backend(previous)
    assert not any(isinstance(n, IfNode) for n in graph.nodes)
    assert {"Exp", "Sin", "Select"} <= {n.op for n in graph.nodes}


def test_an_exported_graph_is_if_converted():
    x = Tensor(np.ones(4, np.float32))
    assert any(isinstance(n, IfNode) for n in ms.capture(TwoStacks(), x, x)[0].nodes)
    exported = ms.capture(TwoStacks(), x, x, if_convert=True)[0]          # what ms.export captures
    assert not any(isinstance(n, IfNode) for n in exported.nodes)
    assert {"Exp", "Sin", "Select"} <= {n.op for n in exported.nodes}


# ------------------------------------------------------------------ record and replay (last: it finalises the runtime)

SCRIPT = '''
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops

ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "%s"})


class TwoStacks(nn.Cell):
    def construct(self, x):
        if x.sum() > 0:
            z = ops.exp(x) * 2
        else:
            z = ops.sin(x) - 1
        return z * 3


net = TwoStacks()
for sign in (1, -1, 1):
    print(float(net(Tensor(np.ones(4, np.float32) * sign)).asnumpy()[0]))
'''


@pytest.mark.parametrize("level", ("O0", "O2"))
def test_record_then_replay_reproduces_a_run_with_device_ifs(tmp_path, monkeypatch, ascendemu_kernel_cache,
                                                             capsys, level):
    monkeypatch.setenv("MS_COMPILER_CACHE_PATH", str(ascendemu_kernel_cache))
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "ifs.py"
    script.write_text(SCRIPT % level)
    printed, records = record_and_replay(script, tmp_path / "run.aetrace", capsys)
    np.testing.assert_allclose([float(v) for v in printed.split()[:3]],
                               [np.exp(1) * 6, (np.sin(-1) - 1) * 3, np.exp(1) * 6], rtol=1e-6)
    switches = [r for r in records if isinstance(r, fmt.LabelSwitch)]
    assert [r.taken for r in switches] == [True, False, True]
