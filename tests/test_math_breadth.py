"""The math ops of ``mindspore.ops`` added for breadth (issue 21): elementwise kernels (inverse and
hyperbolic trigonometry, error functions, rounding, remainders), the scans (CumSum, CumProd,
Cummax/Cummin: kernels/ops/scan.py), ReduceProd, and the compositions (norms, products, statistics,
range/linspace, ...).

Oracles: numpy formulas in float64 (rounded to the op's dtype), central finite differences of those
formulas for the gradients, and hand-checked values where MindSpore's choice is its own (sign(NaN) = 0,
Cummax's ties, the int32 remainders), as MindSpore 2.10 prints them on CPU."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.graph import passes


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


RNG = np.random.default_rng(21)
X = np.array([-2.5, -1.5, -0.7, -0.5, 0.0, 0.3, 0.5, 1.5, 2.5, 3.7], np.float32)
UNIT = np.array([-0.9, -0.5, -0.1, 0.0, 0.2, 0.6, 0.95], np.float32)          # inside (-1, 1)
ABOVE_ONE = np.array([1.0, 1.2, 2.0, 5.0, 30.0], np.float32)

_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)

UNARY = [  # (function, primitive name or None, numpy reference, input)
    (ops.log1p, "Log1p", np.log1p, np.abs(X)),
    (ops.expm1, "Expm1", np.expm1, X),
    (ops.erf, "Erf", _erf, X),
    (ops.erfc, "Erfc", _erfc, X),
    (ops.sinh, "Sinh", np.sinh, X),
    (ops.cosh, "Cosh", np.cosh, X),
    (ops.tan, "Tan", np.tan, UNIT),
    (ops.asin, "Asin", np.arcsin, UNIT),
    (ops.arccos, "ACos", np.arccos, UNIT),
    (ops.arctan, "Atan", np.arctan, X),
    (ops.asinh, "Asinh", np.arcsinh, X),
    (ops.acosh, "Acosh", np.arccosh, ABOVE_ONE),
    (ops.arctanh, "Atanh", np.arctanh, UNIT),
    (ops.round, "Round", np.rint, X),               # halves to even: -2.5 -> -2, 0.5 -> 0, 2.5 -> 2
    (ops.trunc, "Trunc", np.trunc, X),
    (ops.sign, "Sign", np.sign, X),
    (ops.inv, "Inv", lambda x: 1.0 / x, ABOVE_ONE),
    (ops.sinc, "Sinc", np.sinc, X),
    (ops.rad2deg, None, np.rad2deg, X),
    (ops.deg2rad, None, np.deg2rad, X),
    (ops.log2, None, np.log2, ABOVE_ONE),
    (ops.log10, None, np.log10, ABOVE_ONE),
    (ops.exp2, None, np.exp2, X),
    (ops.frac, None, lambda x: x - np.trunc(x), X),
    (ops.absolute, None, np.abs, X),
    (ops.negative, None, np.negative, X),
]


@pytest.mark.parametrize("fn,prim,ref,x", UNARY, ids=[u[0].__name__ for u in UNARY])
def test_unary_ops_match_numpy(fn, prim, ref, x):
    want = ref(x.astype(np.float64))
    got = fn(Tensor(x))
    assert got.dtype == ms.float32
    np.testing.assert_allclose(got.asnumpy(), want, rtol=3e-6, atol=2e-6)
    if prim is not None:
        np.testing.assert_array_equal(getattr(ops, prim)()(Tensor(x)).asnumpy(), got.asnumpy())


@pytest.mark.parametrize("fn,ref", [(ops.erf, _erf), (ops.atan, np.arctan), (ops.expm1, np.expm1)])
def test_float16_computes_in_float32_and_rounds_once(fn, ref):
    x = X.astype(np.float16)
    got = fn(Tensor(x))
    assert got.dtype == ms.float16
    np.testing.assert_allclose(got.asnumpy(), ref(x.astype(np.float64)).astype(np.float16), rtol=1e-3, atol=1e-3)


def test_sign_round_trunc_keep_ints_and_sign_of_nan_is_zero():
    ints = np.array([-7, -1, 0, 3], np.int32)
    assert ops.sign(Tensor(ints)).asnumpy().tolist() == [-1, -1, 0, 1]
    assert ops.round(Tensor(ints)).asnumpy().tolist() == ints.tolist()
    assert ops.trunc(Tensor(ints)).dtype == ms.int32
    # MindSpore 2.10 prints [-1. 0. 0. 1.] for sign([-1, 0, nan, 2])
    got = ops.sign(Tensor(np.array([-1.0, 0.0, np.nan, 2.0], np.float32))).asnumpy()
    assert got.tolist() == [-1.0, 0.0, 0.0, 1.0]


A = np.array([-3.5, -2.5, -0.5, 0.5, 1.5, 2.5, 7.0, 5.0], np.float32)
B = np.array([2.0, -2.0, 2.0, -2.0, 0.75, 2.0, 3.0, -1.5], np.float32)

BINARY = [  # (function, numpy reference)
    (ops.floor_divide, lambda a, b: np.floor(a / b)),
    (ops.floor_div, lambda a, b: np.floor(a / b)),
    (ops.floor_mod, np.mod),                    # the divisor's sign (Python's %)
    (ops.remainder, np.mod),
    (ops.fmod, np.fmod),                        # the dividend's sign (C's fmod)
    (ops.truncate_div, lambda a, b: np.trunc(a / b)),
    (ops.atan2, np.arctan2),
    (ops.arctan2, np.arctan2),
    (ops.xlogy, lambda a, b: a * np.log(np.abs(b))),
    (ops.xdivy, lambda a, b: np.where(a == 0, 0.0, a / b)),
    (ops.hypot, np.hypot),
    (ops.logaddexp, np.logaddexp),
    (ops.logaddexp2, np.logaddexp2),
    (ops.heaviside, np.heaviside),
    (ops.copysign, np.copysign),
    (ops.tensor_add, np.add),
    (ops.tensor_mul, np.multiply),
    (ops.multiply, np.multiply),
    (ops.true_divide, np.divide),
    (ops.tensor_pow, lambda a, b: np.abs(a) ** b),
]


@pytest.mark.parametrize("fn,ref", BINARY, ids=[b[0].__name__ for b in BINARY])
def test_binary_ops_match_numpy(fn, ref):
    a, b = A, B
    if fn in (ops.xlogy, ops.tensor_pow):
        b = np.abs(B) if fn is ops.xlogy else B
        a = A if fn is ops.xlogy else np.abs(A)
    want = ref(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(fn(Tensor(a), Tensor(b)).asnumpy(), want, rtol=3e-6, atol=2e-6)


def test_primitives_of_the_remainders_and_divisions():
    x, y = Tensor(A), Tensor(B)
    np.testing.assert_array_equal(ops.FloorDiv()(x, y).asnumpy(), np.floor(A / B))
    np.testing.assert_allclose(ops.FloorMod()(x, y).asnumpy(), np.mod(A, B), rtol=1e-6)
    np.testing.assert_allclose(ops.Mod()(x, y).asnumpy(), np.fmod(A, B), rtol=1e-6)
    np.testing.assert_allclose(ops.TruncateMod()(x, y).asnumpy(), np.fmod(A, B), rtol=1e-6)
    np.testing.assert_allclose(ops.SquaredDifference()(x, y).asnumpy(), (A - B) ** 2, rtol=1e-6)
    np.testing.assert_allclose(ops.MulNoNan()(Tensor(np.array([np.inf, 2.0], np.float32)),
                                              Tensor(np.array([0.0, 3.0], np.float32))).asnumpy(), [0.0, 6.0])
    zero = np.array([0.0, 1.0, 6.0], np.float32), np.array([0.0, 0.0, 4.0], np.float32)
    np.testing.assert_array_equal(ops.DivNoNan()(Tensor(zero[0]), Tensor(zero[1])).asnumpy(), [0.0, 0.0, 1.5])
    # x / 0: floor division gives inf, the remainders NaN (MindSpore 2.10 CPU prints the same)
    assert ops.floor_divide(Tensor(np.float32(1.5)), Tensor(np.float32(0.0))).asnumpy() == np.inf
    assert np.isnan(ops.floor_mod(Tensor(np.float32(1.5)), Tensor(np.float32(0.0))).asnumpy())


def test_int32_remainders_and_divisions_follow_their_sign_rules():
    a, b = Tensor(np.array([-7, 7, -7, 7], np.int32)), Tensor(np.array([2, -2, -2, 2], np.int32))
    assert ops.floor_divide(a, b).asnumpy().tolist() == [-4, -4, 3, 3]
    assert ops.floor_mod(a, b).asnumpy().tolist() == [1, -1, -1, 1]
    assert ops.fmod(a, b).asnumpy().tolist() == [-1, 1, -1, 1]
    assert ops.truncate_div(a, b).asnumpy().tolist() == [-3, -3, 3, 3]
    assert ops.floor_mod(a, b).dtype == ms.int32


def test_predicates_and_logical_xor():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, 1.0], np.float32)
    assert ops.isnan(Tensor(x)).asnumpy().tolist() == [True, False, False, False, False]
    assert ops.IsInf()(Tensor(x)).asnumpy().tolist() == [False, True, True, False, False]
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert ops.logical_xor(Tensor(p), Tensor(q)).asnumpy().tolist() == (p ^ q).tolist()
    assert ops.LogicalXor()(Tensor(p), Tensor(q)).dtype == ms.bool_
    assert ops.approximate_equal(Tensor(A), Tensor(A + 1e-6)).asnumpy().all()


def test_erf_refuses_int32_and_round_refuses_decimals():
    with pytest.raises(InvalidParamError):
        ops.erf(Tensor(np.array([1, 2], np.int32)))
    with pytest.raises(InvalidParamError, match="decimals=1 is not supported"):
        ops.round(Tensor(X), decimals=1)


# ------------------------------------------------------------------------------------- gradients

def _numeric_grad(ref, arrays, i, eps=1e-5):
    xs = [a.astype(np.float64) for a in arrays]
    g = np.zeros_like(xs[i])
    for k in range(xs[i].size):
        plus = [x.copy() for x in xs]
        minus = [x.copy() for x in xs]
        plus[i].reshape(-1)[k] += eps
        minus[i].reshape(-1)[k] -= eps
        g.reshape(-1)[k] = (ref(*plus).sum() - ref(*minus).sum()) / (2 * eps)
    return g


GRAD_UNARY = [(ops.log1p, np.log1p, np.abs(X) + 0.1), (ops.expm1, np.expm1, X), (ops.erf, _erf, X),
              (ops.erfc, _erfc, X), (ops.sinh, np.sinh, X), (ops.cosh, np.cosh, X), (ops.tan, np.tan, UNIT),
              (ops.asin, np.arcsin, UNIT), (ops.acos, np.arccos, UNIT), (ops.atan, np.arctan, X),
              (ops.asinh, np.arcsinh, X), (ops.acosh, np.arccosh, ABOVE_ONE[1:]), (ops.atanh, np.arctanh, UNIT),
              (ops.sinc, np.sinc, X[X != 0]), (ops.logit, lambda x: np.log(x / (1 - x)), np.abs(UNIT[UNIT != 0]))]


@pytest.mark.parametrize("fn,ref,x", GRAD_UNARY, ids=[g[0].__name__ for g in GRAD_UNARY])
def test_unary_gradients_match_finite_differences(fn, ref, x):
    got = ms.grad(lambda t: fn(t).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, _numeric_grad(ref, [x], 0), rtol=2e-4, atol=2e-5)


GRAD_BINARY = [(ops.atan2, np.arctan2), (ops.floor_mod, np.mod), (ops.fmod, np.fmod),
               (ops.xlogy, lambda a, b: a * np.log(np.abs(b))), (ops.xdivy, lambda a, b: a / b),
               (ops.hypot, np.hypot), (ops.logaddexp, np.logaddexp),
               (lambda a, b: ops.SquaredDifference()(a, b), lambda a, b: (a - b) ** 2),
               (lambda a, b: ops.DivNoNan()(a, b), lambda a, b: a / b)]


@pytest.mark.parametrize("fn,ref", GRAD_BINARY, ids=[str(i) for i in range(len(GRAD_BINARY))])
def test_binary_gradients_match_finite_differences(fn, ref):
    a = np.array([[-2.3, -0.6, 0.7], [1.3, 2.2, 3.1]], np.float32)       # away from the remainders' jumps
    b = np.array([0.9, -1.7, 2.6], np.float32)                           # broadcast: summed back
    if fn is ops.xlogy:
        b = np.abs(b)
    ga, gb = ms.grad(lambda x, y: fn(x, y).sum(), grad_position=(0, 1))(Tensor(a), Tensor(b))
    np.testing.assert_allclose(ga.asnumpy(), _numeric_grad(ref, [a, b], 0), rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(gb.asnumpy(), _numeric_grad(ref, [a, b], 1), rtol=2e-4, atol=2e-4)


# ----------------------------------------------------------------------------------------- scans

M = RNG.standard_normal((3, 5)).astype(np.float32)


def _cumsum_ref(x, axis, exclusive=False, reverse=False):
    x = np.flip(x, axis) if reverse else x
    out = np.cumsum(x, axis)
    if exclusive:
        out = out - x
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_and_cumprod_match_numpy(exclusive, reverse, axis):
    got = ops.CumSum(exclusive, reverse)(Tensor(M), axis).asnumpy()
    np.testing.assert_allclose(got, _cumsum_ref(M.astype(np.float64), axis, exclusive, reverse), rtol=1e-5, atol=1e-6)
    positive = np.abs(M) + 0.5
    want = np.exp(_cumsum_ref(np.log(positive.astype(np.float64)), axis, exclusive, reverse))
    np.testing.assert_allclose(ops.CumProd(exclusive, reverse)(Tensor(positive), axis).asnumpy(), want, rtol=1e-5)


def test_cumsum_functions_ints_and_dtype():
    ints = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    out = ops.cumsum(Tensor(ints), 1)
    assert out.dtype == ms.int32 and out.asnumpy().tolist() == [[1, 3, 6], [4, 9, 15]]
    assert ops.cumprod(Tensor(ints), 0).asnumpy().tolist() == [[1, 2, 3], [4, 10, 18]]
    half = ops.cumsum(Tensor(np.array([1, 2], np.float16)), 0, dtype=ms.float32)
    assert half.dtype == ms.float32 and half.asnumpy().tolist() == [1.0, 3.0]


def test_cummax_cummin_values_and_indices_keep_the_later_tie():
    # MindSpore 2.10 prints indices [0 1 1 3 4] and [0 0 2 3 3] for these
    values, indices = ops.cummax(Tensor(np.array([1.0, 3, 2, 3, 5], np.float32)), 0)
    assert values.asnumpy().tolist() == [1, 3, 3, 3, 5] and indices.asnumpy().tolist() == [0, 1, 1, 3, 4]
    values, indices = ops.cummin(Tensor(np.array([1.0, 3, 0, 0, 5], np.float32)), 0)
    assert values.asnumpy().tolist() == [1, 1, 0, 0, 0] and indices.asnumpy().tolist() == [0, 0, 2, 3, 3]
    values, _ = ops.cummax(Tensor(M), 1)
    np.testing.assert_array_equal(values.asnumpy(), np.maximum.accumulate(M, axis=1))


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, True)])
def test_scan_gradients_match_finite_differences(exclusive, reverse):
    x = np.abs(M) + 0.5
    w = RNG.standard_normal(M.shape)

    def sum_ref(x):
        return _cumsum_ref(x, 1, exclusive, reverse) * w

    def prod_ref(x):
        return np.exp(_cumsum_ref(np.log(x), 1, exclusive, reverse)) * w

    wt = Tensor(w.astype(np.float32))
    g = ms.grad(lambda t: (ops.CumSum(exclusive, reverse)(t, 1) * wt).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, _numeric_grad(sum_ref, [x], 0), rtol=1e-4, atol=1e-5)
    g = ms.grad(lambda t: (ops.CumProd(exclusive, reverse)(t, 1) * wt).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, _numeric_grad(prod_ref, [x], 0), rtol=1e-4, atol=1e-4)


def test_cummax_gradient_goes_to_the_running_maximum():
    x = np.array([[1.0, 3.0, 2.0, 4.0, 0.5]], np.float32)
    g = ms.grad(lambda t: ops.cummax(t, 1)[0].sum())(Tensor(x)).asnumpy()
    assert g.tolist() == [[1.0, 2.0, 0.0, 2.0, 0.0]]


# -------------------------------------------------------------------------------- ReduceProd, any

@pytest.mark.parametrize("axis,keep", [((), False), (1, False), ((0, 2), True), (-1, True)])
def test_reduce_prod_matches_numpy_and_its_gradient_is_exact_at_zeros(axis, keep):
    x = (RNG.standard_normal((2, 3, 4)) * 0.5 + 1.0).astype(np.float32)
    x[0, 1, 2] = 0.0                                     # the division-free rule: finite, the others' product
    np_axis = None if axis == () else axis
    got = ops.ReduceProd(keep)(Tensor(x), axis)
    np.testing.assert_allclose(got.asnumpy(), np.prod(x.astype(np.float64), axis=np_axis, keepdims=keep),
                               rtol=1e-5, atol=1e-7)
    g = ms.grad(lambda t: ops.ReduceProd(keep)(t, axis).sum())(Tensor(x)).asnumpy()

    def others(x):
        return np.prod(x, axis=np_axis, keepdims=keep)
    np.testing.assert_allclose(g, _numeric_grad(others, [x], 0), rtol=1e-4, atol=1e-5)
    assert ops.prod(Tensor(np.array([[1, 2], [3, 4]], np.int32)), 1).asnumpy().tolist() == [2, 12]


def test_any_and_count_nonzero():
    b = np.array([[True, False, False], [False, False, False]])
    assert ops.any(Tensor(b)).asnumpy() == np.True_
    assert ops.any(Tensor(b), 1).asnumpy().tolist() == [True, False]
    assert ops.ReduceAny(keep_dims=True)(Tensor(b), 0).asnumpy().tolist() == [[True, False, False]]
    x = Tensor(np.array([[0, 1.0], [2, 3]], np.float32))
    assert ops.count_nonzero(x).asnumpy() == 3 and ops.count_nonzero(x).dtype == ms.int32
    assert ops.count_nonzero(x, axis=1, keep_dims=True).asnumpy().tolist() == [[1], [2]]


# ---------------------------------------------------------------------------------- compositions

def test_norms_match_numpy():
    a = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    t = Tensor(a)
    np.testing.assert_allclose(ops.norm(t).asnumpy(), np.linalg.norm(a), rtol=1e-6)
    for ord_ in (1, -1, math.inf, -math.inf, "fro"):
        np.testing.assert_allclose(ops.norm(t, ord_).asnumpy(), np.linalg.norm(a.astype(np.float64), ord_), rtol=1e-6)
    for ord_ in (0, 1, 2, 3, math.inf, -math.inf):
        np.testing.assert_allclose(ops.norm(t, ord_, dim=1).asnumpy(),
                                   np.linalg.norm(a.astype(np.float64), ord_, axis=1), rtol=1e-6)
    np.testing.assert_allclose(ops.vector_norm(t, 3, 0, keepdims=True).asnumpy(),
                               np.linalg.norm(a.astype(np.float64), 3, axis=0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(ops.matrix_norm(Tensor(np.stack([a, 2 * a])), 1).asnumpy(), [6.0, 12.0])
    np.testing.assert_allclose(ops.dist(t, Tensor(a * 0), 1).asnumpy(), 10.0)
    with pytest.raises(InvalidParamError, match="needs singular values"):
        ops.norm(t, "nuc")
    g = ms.grad(lambda x: ops.norm(x))(t).asnumpy()
    np.testing.assert_allclose(g, a / np.linalg.norm(a), rtol=1e-6)


def test_products():
    a, b = RNG.standard_normal((2, 3, 4)).astype(np.float32), RNG.standard_normal((4, 3, 5)).astype(np.float32)
    np.testing.assert_allclose(ops.tensor_dot(Tensor(a), Tensor(b), ((1, 2), (1, 0))).asnumpy(),
                               np.tensordot(a, b, ((1, 2), (1, 0))), rtol=1e-5, atol=1e-5)
    m, n = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(ops.tensor_dot(Tensor(m), Tensor(n), 1).asnumpy(), m @ n, rtol=1e-5, atol=1e-6)
    c = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    np.testing.assert_allclose(ops.dot(Tensor(m), Tensor(c)).asnumpy(), np.dot(m, c), rtol=1e-5, atol=1e-6)
    v, w = np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(ops.outer(Tensor(v), Tensor(w)).asnumpy(), np.outer(v, w))
    np.testing.assert_allclose(ops.inner(Tensor(m), Tensor(m)).asnumpy(), np.inner(m, m), rtol=1e-5)
    np.testing.assert_allclose(ops.mv(Tensor(m), Tensor(v)).asnumpy(), m @ v, rtol=1e-6)
    np.testing.assert_allclose(ops.addmm(Tensor(np.ones((2, 4), np.float32)), Tensor(m), Tensor(n), beta=0.5,
                                         alpha=2).asnumpy(), 0.5 + 2 * (m @ n), rtol=1e-5)
    bb = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(ops.baddbmm(Tensor(np.zeros((2, 4, 5), np.float32)), Tensor(bb), Tensor(c)).asnumpy(),
                               bb @ c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.addbmm(Tensor(np.zeros((4, 5), np.float32)), Tensor(bb), Tensor(c)).asnumpy(),
                               (bb @ c).sum(0), rtol=1e-5, atol=1e-5)
    k1, k2 = np.arange(4, dtype=np.float32).reshape(2, 2), np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(ops.kron(Tensor(k1), Tensor(k2)).asnumpy(), np.kron(k1, k2))
    np.testing.assert_allclose(ops.vecdot(Tensor(m), Tensor(m)).asnumpy(), (m * m).sum(-1), rtol=1e-6)
    assert ops.trace(Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))).asnumpy() == 4.0
    with pytest.raises(InvalidParamError, match="rank >= 2"):
        ops.dot(Tensor(v), Tensor(v))


def test_statistics_and_log_sum_exp():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(ops.var(Tensor(x)).asnumpy(), x64.var(), rtol=1e-5)
    np.testing.assert_allclose(ops.std(Tensor(x), axis=1, ddof=1).asnumpy(), x64.std(axis=1, ddof=1), rtol=1e-5)
    s, mean = ops.std_mean(Tensor(x), axis=0, keepdims=True)
    np.testing.assert_allclose(s.asnumpy(), x64.std(0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(mean.asnumpy(), x64.mean(0, keepdims=True), rtol=1e-5, atol=1e-7)
    v, _ = ops.var_mean(Tensor(x), axis=1)
    np.testing.assert_allclose(v.asnumpy(), x64.var(1), rtol=1e-5)
    lse = np.log(np.exp(x64).sum(1))
    np.testing.assert_allclose(ops.logsumexp(Tensor(x), 1).asnumpy(), lse, rtol=1e-6)
    big = np.array([[1000.0, 1000.0], [-1000.0, 0.0]], np.float32)            # no overflow: shifted by the max
    np.testing.assert_allclose(ops.logsumexp(Tensor(big), 1, keepdim=True).asnumpy(),
                               [[1000.0 + np.log(2.0)], [0.0]], rtol=1e-6)
    g = ms.grad(lambda t: ops.logsumexp(t, 1).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, np.exp(x64 - lse[:, None]), rtol=1e-5, atol=1e-7)
    nan = np.array([[1.0, np.nan, 3.0]], np.float32)
    assert ops.nansum(Tensor(nan)).asnumpy() == 4.0 and ops.nanmean(Tensor(nan), 1).asnumpy().tolist() == [2.0]


def test_elementwise_compositions():
    p = np.array([0.0, 0.3, 1.0], np.float32)
    # MindSpore 2.10: logit(eps=0.1) = [-2.1972246 -0.8472978 2.1972244]
    np.testing.assert_allclose(ops.logit(Tensor(p), eps=0.1).asnumpy(), [-2.1972246, -0.8472978, 2.1972244], rtol=1e-6)
    assert ops.Logit()(Tensor(p)).asnumpy()[0] == -np.inf
    np.testing.assert_allclose(ops.lerp(Tensor(A), Tensor(B), 0.3).asnumpy(), A + 0.3 * (B - A), rtol=1e-6)
    np.testing.assert_allclose(ops.Lerp()(Tensor(A), Tensor(B), Tensor(B)).asnumpy(), A + B * (B - A), rtol=1e-6)
    x = np.array([1.0, np.inf, np.nan, 1e-9, 2.0], np.float32)
    y = np.array([1.0 + 1e-6, np.inf, np.nan, 0.0, 3.0], np.float32)
    assert ops.isclose(Tensor(x), Tensor(y)).asnumpy().tolist() == np.isclose(x, y).tolist()
    want = np.isclose(x, y, equal_nan=True).tolist()
    assert ops.IsClose(equal_nan=True)(Tensor(x), Tensor(y)).asnumpy().tolist() == want
    bad = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    np.testing.assert_array_equal(ops.nan_to_num(Tensor(bad)).asnumpy(), np.nan_to_num(bad))
    np.testing.assert_array_equal(ops.NanToNum(nan=1.0, posinf=2.0, neginf=-2.0)(Tensor(bad)).asnumpy(),
                                  [1.0, 2.0, -2.0, 1.0])
    t1, t2 = RNG.standard_normal(4).astype(np.float32), np.abs(RNG.standard_normal(4)).astype(np.float32) + 0.5
    np.testing.assert_allclose(ops.addcmul(Tensor(A[:4]), Tensor(t1), Tensor(t2), 0.5).asnumpy(),
                               A[:4] + 0.5 * t1 * t2, rtol=1e-6)
    np.testing.assert_allclose(ops.Addcdiv()(Tensor(A[:4]), Tensor(t1), Tensor(t2), Tensor(np.float32(2))).asnumpy(),
                               A[:4] + 2 * t1 / t2, rtol=1e-6)
    inputs = [Tensor(A), Tensor(B), Tensor(A)]
    np.testing.assert_allclose(ops.addn(inputs).asnumpy(), 2 * A + B)
    np.testing.assert_allclose(ops.AddN()(inputs).asnumpy(), 2 * A + B)
    with pytest.raises(InvalidParamError, match="shape"):
        ops.addn([Tensor(A), Tensor(A[:2])])
    np.testing.assert_allclose(ops.subtract(Tensor(A), Tensor(B), alpha=2).asnumpy(), A - 2 * B)
    np.testing.assert_array_equal(ops.divide(Tensor(A), Tensor(B), rounding_mode="floor").asnumpy(), np.floor(A / B))


def test_range_arange_linspace():
    assert ops.range(0, 5, 2).asnumpy().tolist() == [0, 2, 4]
    assert ops.range(Tensor(0, ms.int32), Tensor(5, ms.int32), Tensor(2, ms.int32)).asnumpy().tolist() == [0, 2, 4]
    got = ops.range(0.0, 1.0, 0.25)
    assert got.dtype == ms.float32 and got.asnumpy().tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ops.arange(5).asnumpy().tolist() == [0, 1, 2, 3, 4]
    assert ops.arange(0, 1, 0.25).asnumpy().tolist() == [0.0, 0.25, 0.5, 0.75]
    got = ops.arange(0, 5, 2, dtype=ms.float32)
    assert got.dtype == ms.float32 and got.asnumpy().tolist() == [0.0, 2.0, 4.0]
    assert ops.arange(Tensor(3, ms.int32)).asnumpy().tolist() == [0, 1, 2]
    with pytest.raises(InvalidParamError, match="step must not be 0"):
        ops.arange(0, 5, 0)
    with pytest.raises(InvalidParamError, match="maxlen"):
        ops.range(0, 10, 1, maxlen=5)
    np.testing.assert_allclose(ops.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5), rtol=1e-7)
    np.testing.assert_allclose(ops.LinSpace()(Tensor(-1.0), Tensor(3.0), 9).asnumpy(), np.linspace(-1, 3, 9), atol=1e-6)
    assert ops.linspace(2, 3, 1).asnumpy().tolist() == [2.0]


# ---------------------------------------------------------------------------------------- graphs

def test_graph_mode_runs_and_fuses_the_new_elementwise_ops():
    class Net(nn.Cell):
        def construct(self, x, y):
            return ops.erf(ops.atan2(x, y)) + ops.floor_mod(x, y) * ops.sinh(ops.log1p(ops.abs(x)))

    net = Net()
    a, b = Tensor(A), Tensor(B)
    graph, _ = ms.capture(net, a, b)
    fused = passes.fuse_elementwise(passes.remove_no_task(graph))
    assert [n.op for n in fused.nodes] == ["FusedElemwise"]
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    want = _erf(np.arctan2(a64, b64)) + np.mod(a64, b64) * np.sinh(np.log1p(np.abs(a64)))
    for level in ("O0", "O1"):
        ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": level})
        np.testing.assert_allclose(net(a, b).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_graph_mode_scans_reductions_and_compositions_with_their_gradients():
    class Net(nn.Cell):
        def construct(self, x):
            return (ops.cumsum(x, 1) * ops.CumProd(True, False)(x, 0)).sum() + ops.prod(x, 1).sum() \
                + ops.norm(x) + ops.logsumexp(x, 0).sum()

    x = np.abs(M) + 0.5
    x64 = x.astype(np.float64)

    def ref(x):
        excl = np.concatenate([np.ones((1, x.shape[1])), np.cumprod(x, 0)[:-1]], 0)
        return ((np.cumsum(x, 1) * excl).sum() + np.prod(x, 1).sum() + np.linalg.norm(x)
                + np.log(np.exp(x).sum(0)).sum())

    net = Net()
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O1"})
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), ref(x64), rtol=1e-5)
    grad = ms.grad(net)(Tensor(x)).asnumpy()
    np.testing.assert_allclose(grad, _numeric_grad(ref, [x], 0), rtol=1e-4, atol=1e-4)


def test_assign_add_and_sub_update_the_parameter_in_both_modes():
    w = ms.Parameter(Tensor(np.ones(3, np.float32)), name="w")
    ops.assign_add(w, Tensor(np.array([1.0, 2.0, 3.0], np.float32)))
    assert w.asnumpy().tolist() == [2.0, 3.0, 4.0]
    ops.AssignSub()(w, Tensor(np.ones(3, np.float32)))
    assert w.asnumpy().tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="same rank"):    # MindSpore 2.10 refuses a value it would broadcast
        ops.AssignSub()(w, Tensor(np.float32(1.0)))
    assert w.asnumpy().tolist() == [1.0, 2.0, 3.0]

    class Step(nn.Cell):
        def __init__(self):
            super().__init__()
            self.count = ms.Parameter(Tensor(np.zeros(1, np.float32)), name="count")

        def construct(self, x):
            ops.assign_add(self.count, x)
            return self.count * 2

    net = Step()
    ms.set_context(mode=ms.GRAPH_MODE)
    net(Tensor(np.ones(1, np.float32)))
    out = net(Tensor(np.ones(1, np.float32)))
    assert net.count.asnumpy().tolist() == [2.0] and out.asnumpy().tolist() == [4.0]


def test_einsum_matches_numpy_and_differentiates():
    a, b = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((3, 4)).astype(np.float32)
    c = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    for eq, operands in (("ij,jk->ik", (a, b)), ("ij,jk", (a, b)), ("bij,jk->bik", (c, b)), ("ij->ji", (a,)),
                         ("ij->", (a,)), ("ij,ij->i", (a, a)), ("i,j->ij", (a[0], b[0]))):
        got = ops.einsum(eq, *[Tensor(o) for o in operands]).asnumpy()
        np.testing.assert_allclose(got, np.einsum(eq, *operands), rtol=1e-5, atol=1e-5, err_msg=eq)
    np.testing.assert_allclose(ops.Einsum("ij,jk->ik")((Tensor(a), Tensor(b))).asnumpy(), a @ b, rtol=1e-5, atol=1e-6)
    g = ms.grad(lambda x: ops.einsum("bij,jk->bik", x, Tensor(b)).sum())(Tensor(c)).asnumpy()
    np.testing.assert_allclose(g, np.broadcast_to(b.sum(1), c.shape), rtol=1e-5, atol=1e-6)
    with pytest.raises(InvalidParamError, match="ellipsis"):
        ops.einsum("...ij,jk", Tensor(a), Tensor(b))


def test_distances_products_and_sequences():
    x1 = np.array([[0.0, 0], [1, 1]], np.float32)
    x2 = np.array([[3.0, 4], [1, 0], [-1, 2]], np.float32)
    want = np.linalg.norm(x1[:, None, :].astype(np.float64) - x2[None, :, :], axis=-1)
    np.testing.assert_allclose(ops.cdist(Tensor(x1), Tensor(x2)).asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(ops.Cdist(p=1.0)(Tensor(x1), Tensor(x2)).asnumpy(),
                               np.abs(x1[:, None, :] - x2[None, :, :]).sum(-1), rtol=1e-6)
    u, v = np.arange(3.0, dtype=np.float32), np.arange(2.0, dtype=np.float32)
    np.testing.assert_array_equal(ops.ger(Tensor(u), Tensor(v)).asnumpy(),
                                  np.outer(np.arange(3.0), np.arange(2.0)))
    # MindSpore 2.10: LpNorm(axis=1)([[0, 0], [3, 4]]) = [1e-12, 5]: the norm is at least epsilon
    np.testing.assert_allclose(ops.LpNorm(axis=1)(Tensor(np.array([[0.0, 0], [3, 4]], np.float32))).asnumpy(),
                               [1e-12, 5.0], rtol=1e-6)
    assert ops.make_range(1, 5, 2) == (1, 3) and ops.make_range(4) == (0, 1, 2, 3)
    m, n = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(ops.mm(Tensor(m), Tensor(n)).asnumpy(), m @ n, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.logspace(0, 2, 3).asnumpy(), [1.0, 10.0, 100.0], rtol=1e-6)
    v = np.array([1.0, 3, 6, 10], np.float32)
    assert ops.diff(Tensor(v)).asnumpy().tolist() == [2.0, 3.0, 4.0]
    np.testing.assert_array_equal(ops.diff(Tensor(m), axis=0, prepend=Tensor(m[:1] * 0)).asnumpy(),
                                  np.diff(m, axis=0, prepend=0 * m[:1]))


def test_bitwise_ops_on_ints_refuse_floats():
    a, b = np.array([12, -3, 7], np.int32), np.array([10, 5, -1], np.int32)
    assert ops.bitwise_and(Tensor(a), Tensor(b)).asnumpy().tolist() == (a & b).tolist()
    assert ops.bitwise_or(Tensor(a), Tensor(b)).asnumpy().tolist() == (a | b).tolist()
    assert ops.BitwiseXor()(Tensor(a), Tensor(b)).asnumpy().tolist() == (a ^ b).tolist()
    with pytest.raises(InvalidParamError):
        ops.bitwise_or(Tensor(np.array([1.0], np.float32)), Tensor(np.array([1.0], np.float32)))


def test_erfinv_inverts_erf_and_differentiates():
    p = np.array([-0.999, -0.9, -0.5, -0.1, 0.0, 0.3, 0.7, 0.99, 0.9999], np.float32)
    got = ops.erfinv(Tensor(p)).asnumpy()
    # MindSpore 2.10: erfinv([0, 0.5, -0.9]) = [0, 0.47693628, -1.1630871]
    np.testing.assert_allclose(ops.Erfinv()(Tensor(np.array([0.0, 0.5, -0.9], np.float32))).asnumpy(),
                               [0.0, 0.47693628, -1.1630871], rtol=2e-6)
    np.testing.assert_allclose(_erf(got.astype(np.float64)), p, rtol=2e-6, atol=2e-7)
    g = ms.grad(lambda t: ops.erfinv(t).sum())(Tensor(p[1:-2])).asnumpy()
    np.testing.assert_allclose(g, np.sqrt(np.pi) / 2 * np.exp(got[1:-2].astype(np.float64) ** 2), rtol=2e-5)


def test_nan_aware_extrema_log_cumsum_exp_and_more():
    x = np.array([1.0, np.nan, np.nan, -2.0], np.float32)
    y = np.array([np.nan, 2.0, np.nan, 3.0], np.float32)
    np.testing.assert_array_equal(ops.fmax(Tensor(x), Tensor(y)).asnumpy(), np.fmax(x, y))
    np.testing.assert_array_equal(ops.Fmin()(Tensor(x), Tensor(y)).asnumpy(), np.fmin(x, y))
    m = RNG.standard_normal((2, 5)).astype(np.float32) * 3
    want = np.logaddexp.accumulate(m.astype(np.float64), axis=1)
    np.testing.assert_allclose(ops.logcumsumexp(Tensor(m), 1).asnumpy(), want, rtol=1e-5)
    np.testing.assert_allclose(ops.CumulativeLogsumexp(reverse=True)(Tensor(m), 1).asnumpy(),
                               np.flip(np.logaddexp.accumulate(np.flip(m.astype(np.float64), 1), axis=1), 1), rtol=1e-5)
    np.testing.assert_allclose(ops.ldexp(Tensor(A), Tensor(np.arange(8, dtype=np.int32))).asnumpy(),
                               np.ldexp(A, np.arange(8)), rtol=1e-6)
    power = ops.float_power(Tensor(A), 2)
    assert power.dtype == ms.float64
    np.testing.assert_allclose(power.asnumpy(), A.astype(np.float64) ** 2)
    np.testing.assert_allclose(ops.trapz(Tensor(m)).asnumpy(), np.trapezoid(m, axis=1), rtol=1e-5, atol=1e-6)
    pts = np.array([0.0, 0.5, 1.5, 2.0, 4.0], np.float32)
    np.testing.assert_allclose(ops.trapz(Tensor(m), Tensor(pts)).asnumpy(), np.trapezoid(m, pts, axis=1), rtol=1e-5)
    np.testing.assert_allclose(ops.trapz(Tensor(m), dx=0.5, dim=0).asnumpy(), np.trapezoid(m, dx=0.5, axis=0), rtol=1e-5)
    inf = np.array([np.inf, -np.inf, 0.0, -0.0, -1.0, np.nan], np.float32)
    assert ops.isposinf(Tensor(inf)).asnumpy().tolist() == np.isposinf(inf).tolist()
    assert ops.isneginf(Tensor(inf)).asnumpy().tolist() == np.isneginf(inf).tolist()
    # MindSpore 2.10 (documented and printed): x < 0, so -0.0 is False where numpy's signbit is True
    assert ops.signbit(Tensor(inf[:5])).asnumpy().tolist() == [False, True, False, False, True]
    assert ops.isreal(Tensor(inf)).asnumpy().all() and ops.is_complex(Tensor(inf)) is False
    assert ops.sgn(Tensor(inf[:5])).asnumpy().tolist() == [1.0, -1.0, 0.0, 0.0, -1.0]


def test_small_math_helpers():
    a, b = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(ops.cross(Tensor(a), Tensor(b)).asnumpy(), np.cross(a, b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.Cross(dim=0)(Tensor(a.T), Tensor(b.T)).asnumpy(), np.cross(a, b).T,
                               rtol=1e-5, atol=1e-6)
    ints = np.array([0, 5, -3], np.int32)
    assert ops.invert(Tensor(ints)).asnumpy().tolist() == (~ints).tolist()
    assert ops.ApproximateEqual(0.5)(Tensor(A), Tensor(A + 0.25)).asnumpy().all()
    np.testing.assert_allclose(ops.EuclideanNorm()(Tensor(a), 1).asnumpy(), np.linalg.norm(a, axis=1), rtol=1e-6)
    sx, sy = ops.SquareSumAll()(Tensor(a), Tensor(b))
    np.testing.assert_allclose([sx.asnumpy(), sy.asnumpy()], [(a * a).sum(), (b * b).sum()], rtol=1e-5)
    assert ops.EqualCount()(Tensor(A), Tensor(np.where(A > 0, A, 0))).asnumpy().tolist() == [5.0]
    v, w = np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)
    np.testing.assert_allclose(ops.addr(Tensor(np.ones((3, 2), np.float32)), Tensor(v), Tensor(w), beta=2).asnumpy(),
                               2 + np.outer(v, w))
    np.testing.assert_array_equal(ops.t(Tensor(a)).asnumpy(), a.T)
    np.testing.assert_array_equal(ops.adjoint(Tensor(a)).asnumpy(), a.T)
    assert [t.shape for t in ops.atleast_3d([Tensor(np.float32(1)), Tensor(v), Tensor(a)])] == \
        [(1, 1, 1), (1, 3, 1), (2, 3, 1)]
    assert ops.atleast_2d(Tensor(v)).shape == (1, 3) and ops.atleast_1d(Tensor(np.float32(2))).shape == (1,)
    assert ops.numel(Tensor(a)) == 6
    np.testing.assert_array_equal(ops.tensor_sub(Tensor(a), Tensor(b)).asnumpy(), a - b)
    assert ops.tensor_lt(Tensor(a), Tensor(b)).asnumpy().tolist() == (a < b).tolist()
    m = np.array([[3.0, 1.0, 2.0, 5.0], [4.0, 4.0, 0.0, 9.0]], np.float32)
    values, indices = ops.median(Tensor(m), 1)
    assert values.asnumpy().tolist() == [2.0, 4.0] and indices.asnumpy().tolist() == [2, 0]
    np.testing.assert_allclose(ops.hann_window(5, periodic=False).asnumpy(), np.hanning(5), atol=1e-7)
    np.testing.assert_allclose(ops.hann_window(4).asnumpy(), np.hanning(5)[:4], atol=1e-7)
