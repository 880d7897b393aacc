"""Gradients through device loops (graph.while_grad): the backward of a `while` on a tensor condition is a
second device loop that pops each trip's saved values off a stack and runs the body's VJP in reverse.

Oracles: central finite differences of a float64 numpy run of the same loop (tests/gradcheck.py), the same
loop unrolled by a Python `for` in PYNATIVE_MODE, real MindSpore 2.10's gradients of the same cells
(tests/fixtures/while_grad.npz, tools/record_while_grad.py), hand-computed gradients for zero trips and
hand-computed stack sizes (the LoopStack's slot layout).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops
from ascendemu.units import format_bytes
from ascendemu.graph.ir import WhileNode
from ascendemu.graph.while_grad import STACK_ALIGN, STACK_CHUNK_TRIPS, WhileGradNode

from gradcheck import numeric_grads

LEVELS = ("O0", "O2")
FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES))
import while_grad_nets  # noqa: E402

from while_grad_nets import B, H, T  # noqa: E402

# the cells real MindSpore ran for while_grad.npz (tools/record_while_grad.py), built on the emulator
RNN, Nested, ShortTagger = while_grad_nets.networks(ms)


@pytest.fixture(autouse=True)
def graph_mode(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    yield


def _level(level: str) -> None:
    ms.set_context(jit_config={"jit_level": level})




class UnrolledRNN(RNN):
    """The same recurrence with a Python trip count (``trips``, n ignored): unrolled, the oracle in
    PYNATIVE_MODE (whose ms.grad captures the call too, so n has no value there either)."""

    trips = 0

    def construct(self, x, h, n):
        for i in range(self.trips):
            h = ops.tanh(ops.matmul(h, self.w) + x[i])
        return (h * h).sum()


def rnn_ref(x, h, w, n):
    for i in range(n):
        h = np.tanh(h @ w + x[i])
    return np.sum(h * h)


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((H, H)) * 0.5).astype(np.float32)
    x = rng.standard_normal((T, B, H)).astype(np.float32)
    h = rng.standard_normal((B, H)).astype(np.float32)
    return x, h, w


def _grads(net: nn.Cell, x, h, n) -> list[np.ndarray]:
    g = ms.grad(net, grad_position=(0, 1), weights=net.trainable_params())
    (dx, dh), (dw,) = g(Tensor(x), Tensor(h), Tensor(np.array(n, np.int32)))
    return [dx.asnumpy(), dh.asnumpy(), dw.asnumpy()]


@pytest.mark.parametrize("level", LEVELS)
def test_rnn_gradients_match_finite_differences(level):
    _level(level)
    x, h, w = _data()
    for n in (3, 1):                 # one capture, two trip counts
        got = _grads(RNN(w), x, h, n)
        want = numeric_grads(lambda x_, h_, w_: rnn_ref(x_, h_, w_, n), [x, h, w], np.ones((), np.float32))
        for g, ref, name in zip(got, want, ("x", "h", "w")):
            np.testing.assert_allclose(g, ref, rtol=2e-3, atol=2e-4, err_msg=f"d{name}, {n} trips")
        assert not got[0][n:].any()          # steps the loop never reached get no gradient


def test_rnn_gradients_equal_the_unrolled_loop_in_pynative():
    x, h, w = _data(1)
    graph = _grads(RNN(w), x, h, 4)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    net = UnrolledRNN(w)
    net.trips = 4
    pynative = _grads(net, x, h, 4)
    for g, p in zip(graph, pynative):
        np.testing.assert_allclose(g, p, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("level", LEVELS)
def test_zero_trips_pass_the_gradient_straight_through(level):
    _level(level)
    x, h, w = _data(2)
    dx, dh, dw = _grads(RNN(w), x, h, 0)
    np.testing.assert_allclose(dh, 2 * h, rtol=1e-6)      # loss = sum(h * h), h untouched
    assert not dx.any() and not dw.any()


def test_value_and_grad():
    x, h, w = _data(3)
    net = RNN(w)
    fn = ms.value_and_grad(net, grad_position=1, weights=net.trainable_params())
    loss, (dh, (dw,)) = fn(Tensor(x), Tensor(h), Tensor(np.array(2, np.int32)))
    assert np.isclose(float(loss.asnumpy()), rnn_ref(x, h, w, 2), rtol=1e-5)
    want = numeric_grads(lambda h_, w_: rnn_ref(x, h_, w_, 2), [h, w], np.ones((), np.float32))
    np.testing.assert_allclose(dh.asnumpy(), want[0], rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(dw.asnumpy(), want[1], rtol=2e-3, atol=2e-4)


def test_the_backward_is_a_second_loop_not_an_unrolling():
    from ascendemu.frontend.capture import trace

    x, h, w = _data(3)
    net = RNN(w)
    g = ms.grad(net, grad_position=(0, 1), weights=net.trainable_params())
    graph, _ = trace(g, (Tensor(x), Tensor(h), Tensor(np.array(2, np.int32))), "rnn_grad")
    (back,) = [n for n in graph.nodes if isinstance(n, WhileGradNode)]
    forwards = [n for n in graph.nodes if isinstance(n, WhileNode) and not isinstance(n, WhileGradNode)]
    assert back.forward in [n.id for n in forwards]
    assert back.grad_carried == (0,)            # h carries a gradient, the int counter i does not
    assert not [n for n in graph.nodes if n.op == "MatMul"]          # every MatMul is inside a loop's graph
    assert {n.op for n in back.body.nodes} >= {"MatMul", "Tanh"}    # the VJP recomputes the body's forward


def test_the_stack_holds_one_slot_per_trip(ex):
    x, h, w = _data(4)
    _grads(RNN(w), x, h, 3)
    (stack,) = ex.step_runner.programs.stacks
    pred, h_bytes, i_bytes = STACK_ALIGN, 32, 32            # h: 2x3 float32 = 24 bytes; i: int32
    assert stack.trips == 3
    assert stack.slot_bytes == pred + h_bytes + i_bytes
    assert stack.reserved == STACK_CHUNK_TRIPS * (pred + h_bytes + i_bytes)
    summary = [line for line in ex.log.lines() if "gradients through `while` loops" in line]
    assert summary and f"reserved up to {format_bytes(stack.reserved)}" in summary[-1]




def nested_ref(x, h, w, n, m):
    for i in range(n):
        for _ in range(m):
            h = np.tanh(h @ w + x[i] * 0.5)
        h = h + x[i]
    return np.sum(h * h)


@pytest.mark.parametrize("level", LEVELS)
def test_nested_loops_gradients_match_finite_differences(level):
    _level(level)
    x, h, w = _data(6)
    net = Nested(w)
    g = ms.grad(net, grad_position=(0, 1), weights=net.trainable_params())
    (dx, dh), (dw,) = g(Tensor(x), Tensor(h), Tensor(np.array(3, np.int32)), Tensor(np.array(2, np.int32)))
    want = numeric_grads(lambda x_, h_, w_: nested_ref(x_, h_, w_, 3, 2), [x, h, w], np.ones((), np.float32))
    for got, ref in zip((dx, dh, dw), want):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=2e-3, atol=2e-4)


MINDSPORE = np.load(FIXTURES / "while_grad.npz")     # tools/record_while_grad.py, real MindSpore 2.10 CPU


@pytest.mark.parametrize("case", ["rnn_n3", "rnn_n0", "nested_n3_m2"])
def test_gradients_equal_real_mindspores(case):
    f = MINDSPORE
    net = RNN(f["w"]) if case.startswith("rnn") else Nested(f["w"])
    counts = [int(c[1:]) for c in case.split("_")[1:]]
    fn = ms.value_and_grad(net, grad_position=(0, 1), weights=net.trainable_params())
    loss, ((dx, dh), (dw,)) = fn(Tensor(f["x"]), Tensor(f["h"]), *[Tensor(np.array(c, np.int32)) for c in counts])
    for got, key in ((loss, "loss"), (dx, "dx"), (dh, "dh"), (dw, "dw")):
        np.testing.assert_allclose(got.asnumpy(), f[f"{case}_{key}"], rtol=1e-5, atol=1e-6, err_msg=key)


class Tagger(nn.Cell):
    """A loss over a device loop whose trip count the labels set: h <- tanh(h @ W + b) n times."""

    def __init__(self, w: np.ndarray):
        super().__init__()
        self.w = Parameter(Tensor(w), name="w")
        self.b = Parameter(Tensor(np.full((H,), 0.1, np.float32)), name="b")

    def construct(self, h, n, target):
        i = Tensor(np.array(0, np.int32))
        while i < n:
            h = ops.tanh(ops.matmul(h, self.w) + self.b)
            i = i + 1
        return ((h - target) ** 2).mean()


class UnrolledTagger(Tagger):
    trips = 0

    def construct(self, h, n, target):
        for _ in range(self.trips):
            h = ops.tanh(ops.matmul(h, self.w) + self.b)
        return ((h - target) ** 2).mean()


def _train(cls, steps: int = 3) -> list[float]:
    _, h, w = _data(5)
    net = cls(w)
    step = nn.TrainOneStepCell(net, nn.Momentum(net.trainable_params(), learning_rate=0.5, momentum=0.9))
    target = np.full((B, H), 0.3, np.float32)
    losses = []
    for k in range(steps):
        net.trips = k + 1
        loss = step(Tensor(h), Tensor(np.array(k + 1, np.int32)), Tensor(target))
        losses.append(float(loss.asnumpy()))
    return losses + [float(np.abs(net.w.asnumpy()).sum())]


@pytest.mark.parametrize("level", LEVELS)
def test_a_training_loop_through_a_device_loop_matches_pynative(level):
    _level(level)
    graph = _train(Tagger)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    pynative = _train(UnrolledTagger)
    np.testing.assert_allclose(graph, pynative, rtol=1e-5)
    assert graph[0] > graph[2]




@pytest.mark.parametrize("level", LEVELS)
def test_training_losses_equal_real_mindspores(level):
    _level(level)
    net = ShortTagger()
    step = nn.TrainOneStepCell(net, nn.Momentum(net.trainable_params(), learning_rate=0.5, momentum=0.9))
    h, target = np.ones((B, H), np.float32), np.full((B, H), 0.3, np.float32)
    losses = [float(step(Tensor(h), Tensor(np.array(k + 2, np.int32)), Tensor(target)).asnumpy()) for k in range(3)]
    np.testing.assert_allclose(losses, MINDSPORE["train_losses"], rtol=1e-5)


@pytest.mark.parametrize("level", LEVELS)
def test_a_train_step_runs_its_loops_forward_once(ex, level):
    """TrainOneStepCell captures the loop twice (the loss's forward, the gradient's replayed forward);
    graph.program.merge_repeated merges them, so one more trip costs the step exactly what it costs
    ms.value_and_grad, which captures the forward once (one forward trip and one backward trip), and the
    losses stay real MindSpore's."""
    _level(level)
    net = ShortTagger()
    step = nn.TrainOneStepCell(net, nn.Momentum(net.trainable_params(), learning_rate=0.5, momentum=0.9))
    h, target = Tensor(np.ones((B, H), np.float32)), Tensor(np.full((B, H), 0.3, np.float32))
    losses, step_kernels = [], []
    for n in (2, 3, 4):
        losses.append(float(step(h, Tensor(np.array(n, np.int32)), target).asnumpy()))
        step_kernels.append(ex.step_runner.programs.kernels)
    np.testing.assert_allclose(losses, MINDSPORE["train_losses"], rtol=1e-5)
    value_and_grad = ms.value_and_grad(net, None, net.trainable_params())
    grad_kernels = []
    for n in (2, 3):
        value_and_grad(h, Tensor(np.array(n, np.int32)), target)
        grad_kernels.append(ex.step_runner.programs.kernels)
    per_trip = grad_kernels[1] - grad_kernels[0]
    assert step_kernels[1] - step_kernels[0] == step_kernels[2] - step_kernels[1] == per_trip


def test_a_parameter_assigned_inside_the_loop_is_refused_naming_its_line():
    from ascendemu.graph.capture import GraphCaptureError

    class Keeps(nn.Cell):
        def __init__(self):
            super().__init__()
            self.last = Parameter(Tensor(np.zeros((B, H), np.float32)), name="last")

        def construct(self, h, n):
            i = Tensor(np.array(0, np.int32))
            while i < n:
                h = h * 2
                ops.assign(self.last, h)
                i = i + 1
            return h

    line = Keeps.construct.__code__.co_firstlineno + 2
    with pytest.raises(GraphCaptureError, match=rf"Parameter assigned inside .*while_grad.py:{line}"):
        Keeps()(Tensor(np.ones((B, H), np.float32)), Tensor(np.array(2, np.int32)))
