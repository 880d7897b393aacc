"""Round-3 nn and array breadth (family ``nn3``): the ops MindSpore 2.10 runs only on Ascend (its CPU
build has no kernel, so the conformance fixture records an error) checked against numpy formulas;
in-place functionals and Tensor methods (the tensor holds the result); gradients against central
finite differences of the numpy formulas; one op per family in GRAPH_MODE.

Oracles: numpy (float64, compared at float32 tolerance) and hand-computed values."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops
from tests.gradcheck import numeric_grads

RNG = np.random.RandomState(7)
A = RNG.uniform(-2, 2, (2, 3)).astype(np.float32)
B = RNG.uniform(-2, 2, (2, 3)).astype(np.float32)


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def _layer_norm(x, gamma, beta, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta, mean, 1 / np.sqrt(var + eps)


def _log_softmax(x, axis):
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


# (name, call, numpy reference) of the ops with no MindSpore CPU kernel
ASCEND_ONLY = [
    ("add_layer_norm", lambda: ops.add_layer_norm(Tensor(A), Tensor(B), Tensor(np.full(3, 2, np.float32)),
                                                  Tensor(np.ones(3, np.float32)), 1e-5),
     lambda: (*_layer_norm(A.astype(np.float64) + B, 2.0, 1.0, 1e-5), A + B)),
    ("baddbmm_ext", lambda: ops.baddbmm_ext(Tensor(A[:, :2].reshape(1, 2, 2)), Tensor(A.reshape(1, 2, 3)),
                                            Tensor(B.reshape(1, 3, 2)), beta=0.5, alpha=2),
     lambda: 0.5 * A[:, :2].reshape(1, 2, 2) + 2 * A.reshape(1, 2, 3).astype(np.float64) @ B.reshape(1, 3, 2)),
    ("einsum_ext", lambda: ops.einsum_ext("ij,kj->ik", Tensor(A), Tensor(B)), lambda: A.astype(np.float64) @ B.T),
    ("adaptive_avg_pool2d_ext", lambda: ops.adaptive_avg_pool2d_ext(Tensor(np.arange(16, dtype=np.float32)
                                                                           .reshape(1, 1, 4, 4)), (2, None)),
     lambda: np.arange(16.0).reshape(1, 1, 2, 2, 4).mean(3)),
    ("mse_loss_ext", lambda: ops.mse_loss_ext(Tensor(A), Tensor(B), "sum"), lambda: ((A - B.astype(np.float64)) ** 2).sum()),
    ("LerpScalar", lambda: ops.LerpScalar()(Tensor(A), Tensor(B), 0.25), lambda: A + 0.25 * (B - A.astype(np.float64))),
    ("LogSoftmaxExt", lambda: ops.LogSoftmaxExt()(Tensor(A)), lambda: _log_softmax(A.astype(np.float64), 1)),
    ("LogSoftmaxExt 1-D", lambda: ops.LogSoftmaxExt()(Tensor(A[0]), dtype=ms.float32),
     lambda: _log_softmax(A[0].astype(np.float64), 0)),
    ("embedding", lambda: ops.embedding(Tensor(np.array([[0, 1], [2, 1]], np.int32)), Tensor(A.T.copy())),
     lambda: A.T[np.array([[0, 1], [2, 1]])]),
    # a 1x1 image per channel: each input pixel scales its channel's kernel, plus the bias
    ("conv_transpose2d", lambda: ops.conv_transpose2d(Tensor(np.array([[[[2.0]], [[-1.0]]]], np.float32)),
                                                      Tensor(B.reshape(2, 1, 1, 3)), Tensor([0.5])),
     lambda: (2 * B[0] - B[1]).reshape(1, 1, 1, 3) + 0.5),
    ("BatchToSpaceNDV2", lambda: ops.BatchToSpaceNDV2()(Tensor(np.arange(4, dtype=np.float32).reshape(4, 1, 1, 1)),
                                                        Tensor([2, 2], ms.int32), Tensor([[0, 0], [0, 0]], ms.int32)),
     lambda: np.array([[[[0.0, 1.0], [2.0, 3.0]]]])),
]


@pytest.mark.parametrize("name,call,reference", ASCEND_ONLY, ids=[c[0] for c in ASCEND_ONLY])
def test_ascend_only_ops_match_numpy(name, call, reference):
    got, want = call(), reference()
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w, rtol=1e-5, atol=1e-5)


def test_type_as_casts_to_the_other_dtype():
    out = ops.type_as(Tensor(np.array([1.7, -2.2], np.float32)), Tensor(np.array([1], np.int32)))
    assert out.dtype == ms.int32
    np.testing.assert_array_equal(out.asnumpy(), [1, -2])


# in-place functionals and methods: (call on the tensor y, numpy result of A)
INPLACE = [
    ("zero_", lambda y: ops.zero_(y), lambda: np.zeros_like(A)),
    ("tanh_", lambda y: ops.tanh_(y), lambda: np.tanh(A)),
    ("inplace_sigmoid", lambda y: ops.inplace_sigmoid(y), lambda: 1 / (1 + np.exp(-A.astype(np.float64)))),
    ("clamp_", lambda y: ops.clamp_(y, -0.5, 1.0), lambda: np.clip(A, -0.5, 1.0)),
    ("stop_gradient_", lambda y: ops.stop_gradient_(y), lambda: A),
    ("put_", lambda y: ops.put_(y, Tensor([0, -1]), Tensor([9.0, 8.0])),
     lambda: np.where(np.arange(6).reshape(2, 3) == 0, 9, np.where(np.arange(6).reshape(2, 3) == 5, 8, A))),
    ("Tensor.put_", lambda y: y.put_(Tensor([1]), Tensor([5.0])),
     lambda: np.where(np.arange(6).reshape(2, 3) == 1, 5, A)),
    ("Tensor.index_copy_", lambda y: y.index_copy_(1, Tensor([2, 0]), Tensor(B[:, :2].copy())),
     lambda: np.stack([B[:, 1], A[:, 1], B[:, 0]], 1)),
]


@pytest.mark.parametrize("name,call,reference", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_ops_make_the_tensor_hold_the_result(name, call, reference):
    y = Tensor(A.copy())
    out = call(y)
    assert out is y
    np.testing.assert_allclose(y.asnumpy(), reference(), rtol=1e-5, atol=1e-6)


def test_erfinv_inplace_inverts_erf():
    y = Tensor(np.array([-0.5, 0.0, 0.3, 0.9], np.float32))
    ops.erfinv_(y)
    np.testing.assert_allclose([math.erf(v) for v in y.asnumpy()], [-0.5, 0.0, 0.3, 0.9], rtol=1e-5, atol=1e-6)


def test_stop_gradient_inplace_cuts_later_uses():
    def f(x):
        z = x * 2
        ops.stop_gradient_(z)
        return (z * x).sum()
    x = np.array([1.0, -2.0], np.float32)
    np.testing.assert_array_equal(ms.grad(f)(Tensor(x)).asnumpy(), 2 * x)     # d/dx of sum(stop(2x) * x)


def test_scatter_non_aliasing_add_updates_its_parameter():
    p = ms.Parameter(Tensor(np.zeros(4, np.float32)), name="p")
    out = ops.ScatterNonAliasingAdd()(p, Tensor(np.array([[0], [2], [0]], np.int32)), Tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(p.asnumpy(), [4.0, 0.0, 2.0, 0.0])
    np.testing.assert_array_equal(out.asnumpy(), p.asnumpy())


def test_embedding_padding_row_gets_no_gradient_and_unserved_options_are_refused():
    idx = Tensor(np.array([[0, 1], [1, 2]], np.int32))
    grad = ms.grad(lambda w: ops.embedding(idx, w, padding_idx=-2).sum())(Tensor(A.T.copy())).asnumpy()
    np.testing.assert_array_equal(grad, [[1, 1], [0, 0], [1, 1]])
    with pytest.raises(InvalidParamError, match="max_norm"):
        ops.embedding(idx, Tensor(A.T.copy()), max_norm=1.0)


def _batch_dot_ref(x1, x2):
    return np.einsum("bij,bjk->bik", x1, x2)


# gradients of compositions against central differences of their numpy formulas
GRADS = [
    ("dense", lambda x, w, b: ops.dense(x, w, b), lambda x, w, b: x @ w.T + b,
     [A, RNG.uniform(-1, 1, (4, 3)).astype(np.float32), np.ones(4, np.float32)]),
    ("batch_dot", lambda x, y: ops.batch_dot(x, y), _batch_dot_ref,
     [A.reshape(1, 2, 3), RNG.uniform(-1, 1, (1, 3, 2)).astype(np.float32)]),
    ("tanhshrink", lambda x: ops.tanhshrink(x), lambda x: x - np.tanh(x), [A]),
    ("LerpScalar", lambda x, y: ops.LerpScalar()(x, y, 0.3), lambda x, y: x + 0.3 * (y - x), [A, B]),
]


@pytest.mark.parametrize("name,fn,ref,arrays", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_match_finite_differences(name, fn, ref, arrays):
    out = fn(*[Tensor(a) for a in arrays])
    np.testing.assert_allclose(out.asnumpy(), ref(*[a.astype(np.float64) for a in arrays]), rtol=1e-5, atol=1e-5)
    cot = np.ones(out.shape)
    got = ms.grad(lambda *ts: fn(*ts).sum(), grad_position=tuple(range(len(arrays))))(*[Tensor(a) for a in arrays])
    got = got if isinstance(got, tuple) else (got,)
    want = numeric_grads(ref, arrays, cot)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w, rtol=2e-3, atol=2e-3)


def test_pad_v3_modes_match_numpy():
    x = RNG.uniform(-1, 1, (1, 2, 3)).astype(np.float32)
    for mode, np_mode in (("reflect", "reflect"), ("circular", "wrap"), ("edge", "edge")):
        got = ops.PadV3(mode)(Tensor(x), Tensor([2, 1])).asnumpy()
        np.testing.assert_array_equal(got, np.pad(x, ((0, 0), (0, 0), (2, 1)), mode=np_mode))


class _Net(nn.Cell):
    """One op per family in a GRAPH_MODE construct: InTopK, sequence_mask, PadV3 (its fill an operand)."""

    def construct(self, x, targets, lengths, fill):
        return ops.intopk(x, targets, 2), ops.sequence_mask(lengths, 4), ops.PadV3()(x, (1, 0), fill)


def test_graph_mode_runs_the_compositions():
    ms.set_context(mode=ms.GRAPH_MODE)
    x = np.array([[1.0, 3.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    hit, mask, padded = _Net()(Tensor(x), Tensor(np.array([1, 0], np.int32)), Tensor(np.array([1, 3], np.int32)),
                               Tensor(np.float32(-1.0)))
    np.testing.assert_array_equal(hit.asnumpy(), [True, False])
    np.testing.assert_array_equal(mask.asnumpy(), np.arange(4) < np.array([[1], [3]]))
    np.testing.assert_array_equal(padded.asnumpy(), np.pad(x, ((0, 0), (1, 0)), constant_values=-1.0))
