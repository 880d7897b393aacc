"""The nn wrapper cells (ParameterUpdate, GradAccumulationCell, MicroBatchInterleaved,
VirtualDatasetCellTriple) and the gradient cells nn.Jvp / nn.Vjp, against float64 numpy and central
finite differences, in PyNative and GRAPH_MODE."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops

RNG = np.random.RandomState(3)
X = RNG.randn(4, 3)
Y = RNG.randn(4, 2)
W = RNG.randn(3, 2)
T = lambda a: Tensor(np.asarray(a, np.float32))          # noqa: E731
MODES = ("pynative", "graph")


@pytest.fixture(params=MODES)
def mode(request, ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE if request.param == "graph" else ms.PYNATIVE_MODE)
    return request.param


class Linear(nn.Cell):
    """mean((x @ w - y)^2): a loss of one batch."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(T(W), name="w")

    def construct(self, x, y):
        return ops.mean(ops.square(ops.matmul(x, self.w) - y))


def _micro_losses(count: int) -> tuple[float, np.ndarray]:
    """Sum over ``count`` micro batches of their mean squared error, and its gradient wrt w (float64)."""
    total, grad = 0.0, np.zeros_like(W)
    size = X.shape[0] // count
    for i in range(count):
        x, y = X[i * size:(i + 1) * size], Y[i * size:(i + 1) * size]
        r = x @ W - y
        total += (r * r).mean()
        grad += 2 * x.T @ r / r.size
    return total, grad


@pytest.mark.parametrize("cell", ["GradAccumulationCell", "MicroBatchInterleaved"])
def test_micro_batch_cells_sum_the_micro_batches(mode, cell):
    """Both split axis 0 evenly and add the network's outputs; the gradient is the micro batches'
    gradients accumulated."""
    net = Linear()
    wrapped = nn.GradAccumulationCell(net, 2) if cell == "GradAccumulationCell" else nn.MicroBatchInterleaved(net)
    want, want_grad = _micro_losses(2)
    np.testing.assert_allclose(wrapped(T(X), T(Y)).asnumpy(), want, rtol=1e-5)
    grads = nn.WithGradCell(wrapped)(T(X), T(Y))
    np.testing.assert_allclose(grads[0].asnumpy(), want_grad, rtol=1e-4, atol=1e-6)


def test_micro_batch_cells_refuse_as_mindspore(ex):
    with pytest.raises(ValueError, match=r"0th dimension shape of input\(4\) must be divided by micro size\(3\)"):
        nn.GradAccumulationCell(Linear(), 3)(T(X), T(Y))
    with pytest.raises(TypeError, match="micro_size"):
        nn.GradAccumulationCell(Linear(), 2.0)
    with pytest.raises(ValueError, match="interleave_num"):
        nn.MicroBatchInterleaved(Linear(), 0)
    with pytest.raises(TypeError, match="network"):
        nn.GradAccumulationCell(lambda x: x, 2)
    with pytest.raises(TypeError, match="Parameter"):
        nn.ParameterUpdate(T([1.0]))


def test_parameter_update_assigns(mode):
    """ParameterUpdate(param)(x) returns x and leaves param equal to x (in a graph: its update)."""
    param = Parameter(T([0.5, 0.25]), name="lr")
    update = nn.ParameterUpdate(param)
    out = update(T([0.1, 0.2]))
    np.testing.assert_allclose(out.asnumpy(), [0.1, 0.2], rtol=1e-6)
    np.testing.assert_allclose(param.asnumpy(), [0.1, 0.2], rtol=1e-6)


def test_virtual_dataset_cell_triple_passes_three_inputs(mode):
    class Three(nn.Cell):
        def construct(self, a, b, c):
            return a * b - c

    out = nn.VirtualDatasetCellTriple(Three())(T(X), T(X), T(X))
    np.testing.assert_allclose(out.asnumpy(), X * X - X, rtol=1e-5)


class Poly(nn.Cell):
    """x^2 y + exp(x): two inputs, one output."""

    def construct(self, x, y):
        return x * x * y + ops.exp(x)


class Square(nn.Cell):
    def construct(self, x):
        return ops.sin(x) * x


def _jacobian_product(f, inputs, v, eps=1e-6):
    """J v by central differences of the float64 function f along v."""
    up = [a + eps * d for a, d in zip(inputs, v)]
    down = [a - eps * d for a, d in zip(inputs, v)]
    return (f(*up) - f(*down)) / (2 * eps)


def test_jvp_matches_finite_differences(mode):
    """nn.Jvp (forward mode by the double-vjp trick) against central differences, one and two inputs."""
    x, y = RNG.randn(3), RNG.randn(3)
    vx, vy = RNG.randn(3), RNG.randn(3)
    out, jv = nn.Jvp(Poly())(T(x), T(y), (T(vx), T(vy)))
    np.testing.assert_allclose(out.asnumpy(), x * x * y + np.exp(x), rtol=1e-5)
    want = _jacobian_product(lambda a, b: a * a * b + np.exp(a), [x, y], [vx, vy])
    np.testing.assert_allclose(jv.asnumpy(), want, rtol=1e-4, atol=1e-5)
    out, jv = nn.Jvp(Square())(T(x), T(vx))
    want = _jacobian_product(lambda a: np.sin(a) * a, [x], [vx])
    np.testing.assert_allclose(jv.asnumpy(), want, rtol=1e-4, atol=1e-5)


def test_vjp_matches_finite_differences(mode):
    """nn.Vjp: v^T J per input (a tuple for two inputs, one tensor for one), by central differences."""
    x, y, v = RNG.randn(3), RNG.randn(3), RNG.randn(3)
    out, grads = nn.Vjp(Poly())(T(x), T(y), T(v))
    np.testing.assert_allclose(out.asnumpy(), x * x * y + np.exp(x), rtol=1e-5)
    f = lambda a, b: a * a * b + np.exp(a)                              # noqa: E731
    for k, got in enumerate(grads):
        numeric = np.zeros(3)
        for i in range(3):
            e = np.zeros(3)
            e[i] = 1e-6
            args_up = [x + e, y] if k == 0 else [x, y + e]
            args_down = [x - e, y] if k == 0 else [x, y - e]
            numeric[i] = ((f(*args_up) - f(*args_down)) @ v) / 2e-6
        np.testing.assert_allclose(got.asnumpy(), numeric, rtol=1e-4, atol=1e-5)
    _, grad = nn.Vjp(Square())(T(x), T(v))
    np.testing.assert_allclose(grad.asnumpy(), (np.cos(x) * x + np.sin(x)) * v, rtol=1e-5, atol=1e-6)
