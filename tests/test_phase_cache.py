"""The phase cache (frontend/common/phase.py): a GRAPH_MODE call matching an earlier one reuses its
capture, as MindSpore runs a compiled phase without parsing ``construct`` again.

Oracles: MindSpore's semantics that Python code in ``construct`` runs only while compiling (a counter
``construct`` increments counts the captures), and numpy for every result, before and after each kind
of change the cache must notice."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops
from ascendemu.frontend.common import phase
from ascendemu.frontend.common.phase import PHASE_CACHE, PHASES_PER_OWNER

CAPTURES: dict[int, int] = {}      # id(cell) -> times its construct ran (outside the cell: not its state)
X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5


@pytest.fixture(autouse=True)
def graph_mode(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    yield


class Scaled(nn.Cell):
    """``relu(x * w) * scale + bias``: a Parameter, a Python float and a Tensor attribute."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.full((3,), 2.0, np.float32)), name="w")
        self.scale = 1.5
        self.bias = Tensor(np.array([1.0, 0.0, -1.0], np.float32))
        CAPTURES[id(self)] = 0

    @property
    def captures(self) -> int:
        return CAPTURES.get(id(self), 0)

    def construct(self, x, mode="relu"):
        CAPTURES[id(self)] = self.captures + 1
        y = ops.relu(x * self.w) if mode == "relu" else ops.sigmoid(x * self.w)
        return y * self.scale + self.bias


def ref(net, x, mode="relu"):
    z = x * net.w.asnumpy()
    y = np.maximum(z, 0) if mode == "relu" else 1 / (1 + np.exp(-z))
    return y * net.scale + net.bias.asnumpy()


def test_a_repeated_call_runs_the_captured_graph_without_running_construct():
    net = Scaled()
    outs = [net(Tensor(X)).asnumpy() for _ in range(4)]
    assert net.captures == 1
    for out in outs:
        np.testing.assert_allclose(out, ref(net, X), rtol=1e-6)


def test_new_parameter_values_are_read_at_each_call_without_capturing_again():
    net = Scaled()
    net(Tensor(X))
    net.w.set_data(Tensor(np.array([1.0, -1.0, 3.0], np.float32)))
    np.testing.assert_allclose(net(Tensor(X)).asnumpy(), ref(net, X), rtol=1e-6)
    assert net.captures == 1


@pytest.mark.parametrize("change", ["python attribute", "tensor attribute", "parameter replaced", "train flag",
                                    "keyword", "shape", "dtype"])
def test_what_changes_the_graph_captures_again(change):
    net = Scaled()
    net(Tensor(X))
    x, kwargs = X, {}
    if change == "python attribute":
        net.scale = -0.5
    elif change == "tensor attribute":
        net.bias = Tensor(np.array([5.0, 6.0, 7.0], np.float32))
    elif change == "parameter replaced":
        net.w = Parameter(Tensor(np.array([0.5, 0.5, 0.5], np.float32)), name="w")
    elif change == "train flag":
        net.set_train(True)
    elif change == "keyword":
        kwargs = {"mode": "sigmoid"}
    elif change == "shape":
        x = np.tile(X, (2, 1))
    elif change == "dtype":
        x = X.astype(np.float16)
    out = net(Tensor(x), **kwargs).asnumpy()
    assert net.captures == 2
    tolerance = 2e-3 if x.dtype == np.float16 else 1e-6
    np.testing.assert_allclose(out, ref(net, x.astype(np.float32), **kwargs), rtol=tolerance, atol=tolerance)
    net(Tensor(x), **kwargs)                        # and that phase is now cached too
    assert net.captures == 2


def test_training_steps_reuse_one_phase_and_match_numpy_sgd():
    net = nn.Dense(3, 2)
    w0, b0 = net.weight.asnumpy().copy(), net.bias.asnumpy().copy()
    loss = nn.MSELoss()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), learning_rate=0.1))
    step.set_train()
    y = np.array([[1.0, -1.0], [0.5, 2.0]], np.float32)
    hits = PHASE_CACHE.hits
    w, b = w0.astype(np.float64), b0.astype(np.float64)
    for _ in range(3):
        got = float(step(Tensor(X), Tensor(y)).asnumpy())
        pred = X @ w.T + b
        assert got == pytest.approx(float(np.mean((pred - y) ** 2)), rel=1e-5)
        grad = 2 * (pred - y) / pred.size
        w, b = w - 0.1 * grad.T @ X, b - 0.1 * grad.sum(0)
    assert PHASE_CACHE.hits - hits == 2
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-5, atol=1e-6)


JIT_CALLS: list[float] = []        # what the jit functions' bodies ran with (not their closure's state)


def test_a_jit_function_recaptures_when_its_closure_changes():
    JIT_CALLS.clear()

    def make(k):
        @ms.jit
        def f(x):
            JIT_CALLS.append(k)
            return x * k
        return f

    f = make(2.0)
    np.testing.assert_allclose(f(Tensor(X)).asnumpy(), X * 2.0)
    f(Tensor(X))
    assert JIT_CALLS == [2.0]
    g = make(3.0)                                    # another closure: its own phase
    np.testing.assert_allclose(g(Tensor(X)).asnumpy(), X * 3.0)
    assert JIT_CALLS == [2.0, 3.0]


def test_each_owner_keeps_a_bounded_number_of_phases():
    net = Scaled()
    for n in range(1, PHASES_PER_OWNER + 3):
        net(Tensor(np.ones((n, 3), np.float32)))
    assert len(PHASE_CACHE._phases[net]) == PHASES_PER_OWNER
    net(Tensor(np.ones((1, 3), np.float32)))        # the oldest was dropped: captured again
    assert net.captures == PHASES_PER_OWNER + 3


def test_an_argument_of_another_kind_is_never_cached():
    net = Scaled()
    assert PHASE_CACHE.key(net, (Tensor(X), object()), (), "O0") is None
    assert phase.PHASES_PER_OWNER >= 1
