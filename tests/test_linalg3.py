"""Round-3 linear algebra and statistics (family ``linalg3``): LU solve/unpack, least squares, the V3
diagonal ops, quantiles and medians, nextafter, mvlgamma, pdist, nth element, nuclear norm, tridiagonal
products, fixed-width histograms, Tensor.triangular_solve.

Oracles: numpy/scipy-free float64 formulas (np.linalg, np.quantile, math.lgamma, np.nextafter),
hand-built index maps, and central finite differences for the gradients. MindSpore's own numbers are in
the conformance family ``linalg3`` (tests/conformance/linalg3.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn, ops

A3 = np.array([[1.0, 0.2, 3.0], [2.0, -1.0, 0.5], [0.3, 1.5, -0.7]])
RHS = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.25]])


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Doolittle LU with partial pivoting, packed, with LAPACK's 1-based sequential pivots (the oracle)."""
    lu, n = a.astype(np.float64).copy(), a.shape[0]
    pivots = np.zeros(n, np.int32)
    for i in range(n):
        p = i + int(np.argmax(np.abs(lu[i:, i])))
        pivots[i] = p + 1
        lu[[i, p]] = lu[[p, i]]
        lu[i + 1:, i] /= lu[i, i]
        lu[i + 1:, i + 1:] -= np.outer(lu[i + 1:, i], lu[i, i + 1:])
    return lu, pivots


def test_lu_solve_and_unpack_rebuild_the_system():
    lu, piv = lu_factor(A3)
    assert list(piv) == [2, 3, 3]                                   # real row swaps
    x = ops.lu_solve(Tensor(RHS.astype(np.float32)), Tensor(lu.astype(np.float32)), Tensor(piv))
    np.testing.assert_allclose(x.asnumpy(), np.linalg.solve(A3, RHS), rtol=1e-5, atol=1e-6)
    p, l, u = ops.lu_unpack(Tensor(lu), Tensor(piv))
    np.testing.assert_allclose(p.asnumpy() @ l.asnumpy() @ u.asnumpy(), A3, atol=1e-12)
    assert np.allclose(np.triu(l.asnumpy(), 1), 0) and np.allclose(np.diag(l.asnumpy()), 1)
    assert ops.LuUnpack(unpack_data=False)(Tensor(lu), Tensor(piv))[1:] == (None, None)
    with pytest.raises(TypeError):
        ops.lu_solve(Tensor(RHS), Tensor(lu), Tensor(piv.astype(np.int64)))


def test_least_squares_tall_and_wide():
    tall = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    want = np.linalg.lstsq(tall, RHS, rcond=None)[0]
    np.testing.assert_allclose(ops.Lstsq()(Tensor(tall.astype(np.float32)), Tensor(RHS.astype(np.float32))).asnumpy(),
                               want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ops.lstsq(Tensor(tall), Tensor(RHS)).asnumpy(), want, atol=1e-12)
    wide = tall.T
    got = ops.Lstsq()(Tensor(wide), Tensor(np.array([1.0, 2.0]))).asnumpy()
    assert got.shape == (3, 1)
    np.testing.assert_allclose(got[:, 0], np.linalg.lstsq(wide, [1.0, 2.0], rcond=None)[0], atol=1e-12)
    ridge = np.linalg.solve(tall.T @ tall + 0.5 * np.eye(2), tall.T @ RHS)
    np.testing.assert_allclose(ops.MatrixSolveLs()(Tensor(tall), Tensor(RHS), Tensor(0.5, ms.float64)).asnumpy(),
                               ridge, atol=1e-12)
    with pytest.raises(TypeError):
        ops.Lstsq(l2_regularizer=0.5)(Tensor(tall), Tensor(RHS))


def diag_part_ref(m: np.ndarray, low: int, high: int, pad: float, align: str) -> np.ndarray:
    """TensorFlow's MatrixDiagPartV3 by definition, one diagonal at a time."""
    diags = [np.diagonal(m, d) for d in range(high, low - 1, -1)]
    longest = max(len(d) for d in diags)
    rows = []
    for d, values in zip(range(high, low - 1, -1), diags):
        left = (d >= 0 and align.startswith("LEFT")) or (d <= 0 and align.endswith("LEFT"))
        fill = [pad] * (longest - len(values))
        rows.append(list(values) + fill if left else fill + list(values))
    return np.array(rows)


@pytest.mark.parametrize("shape,low,high,align", [((3, 4), -1, 1, "RIGHT_LEFT"), ((4, 3), -2, 1, "LEFT_RIGHT"),
                                                  ((3, 5), 0, 2, "RIGHT_RIGHT"), ((3, 3), -2, 0, "LEFT_LEFT")])
def test_diagonal_band_round_trips(shape, low, high, align):
    m = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    k = Tensor(np.array([low, high], np.int32))
    part = ops.MatrixDiagPartV3(align=align)(Tensor(m), k, Tensor(np.float32(-9.0)))
    np.testing.assert_array_equal(part.asnumpy(), diag_part_ref(m, low, high, -9.0, align))
    band = np.where((np.arange(shape[1])[None] - np.arange(shape[0])[:, None] >= low)
                    & (np.arange(shape[1])[None] - np.arange(shape[0])[:, None] <= high), m, 0.0)
    rebuilt = ops.MatrixDiagV3(align=align)(part, k, Tensor(np.int32(shape[0])), Tensor(np.int32(shape[1])),
                                            Tensor(np.float32(0.0)))
    np.testing.assert_array_equal(rebuilt.asnumpy(), band)
    cleared = ops.MatrixSetDiagV3(align=align)(Tensor(m), part * 0, k)
    np.testing.assert_array_equal(cleared.asnumpy(), m - band)


def test_matrix_diag_functions():
    np.testing.assert_array_equal(ops.matrix_diag(Tensor(np.array([[1.0, 2.0]], np.float32))).asnumpy(),
                                  [[[1.0, 0.0], [0.0, 2.0]]])
    out = ops.matrix_diag(Tensor(np.array([1.0, 2.0], np.float32)), k=1, padding_value=7.0).asnumpy()
    np.testing.assert_array_equal(out, [[7.0, 1.0, 7.0], [7.0, 7.0, 2.0], [7.0, 7.0, 7.0]])
    with pytest.raises(ValueError):
        ops.matrix_diag(Tensor(np.array([1.0, 2.0], np.float32)), k=1, num_rows=3, num_cols=4)
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = m.copy()
    want[[0, 1, 2], [0, 1, 2]] = [7.0, 8.0, 9.0]
    got = ops.matrix_set_diag(Tensor(m), Tensor(np.array([7.0, 8.0, 9.0], np.float32)))
    np.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(TypeError):
        ops.matrix_diag_part(Tensor(m), 0, 0.0)                    # MindSpore wants k as a Tensor here


def test_diagonal_part_gradient_scatters_back():
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = ms.grad(lambda t: (ops.MatrixDiagPartV3()(t, Tensor(np.int32(1)), Tensor(np.float32(0.0))) * 2.0).sum())(
        Tensor(m)).asnumpy()
    np.testing.assert_array_equal(g, 2.0 * np.eye(3, 4, 1))


X_NAN = np.array([[3.0, np.nan, 2.0, 7.0], [0.0, 5.0, -1.0, 4.0]], np.float32)


@pytest.mark.parametrize("q", [0.0, 0.3, 0.5, 1.0])
def test_quantiles_interpolate_linearly(q):
    x = np.nan_to_num(X_NAN, nan=1.5)
    np.testing.assert_allclose(ops.quantile(Tensor(x), q).asnumpy(), np.quantile(x.astype(np.float64), q), rtol=1e-6)
    got = ops.quantile(Tensor(x), Tensor(np.array([q, 0.9], np.float32)), axis=1, keepdims=True).asnumpy()
    np.testing.assert_allclose(got, np.quantile(x.astype(np.float64), [q, 0.9], axis=1, keepdims=True), rtol=1e-6)
    nan_q = ops.nanquantile(Tensor(X_NAN), q, axis=1).asnumpy()
    np.testing.assert_allclose(nan_q, np.nanquantile(X_NAN.astype(np.float64), q, axis=1), rtol=1e-6)
    assert np.isnan(ops.quantile(Tensor(X_NAN), q, axis=1).asnumpy()[0])


def test_quantile_errors_and_gradient():
    with pytest.raises(ValueError):
        ops.quantile(Tensor(X_NAN), 1.5)
    with pytest.raises(TypeError):
        ops.quantile(Tensor(X_NAN), Tensor(np.array([0.5])))       # float64 q for a float32 input
    x = np.array([4.0, 1.0, 3.0, 2.0], np.float32)
    g = ms.grad(lambda t: ops.quantile(t, 0.5))(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, [0.0, 0.0, 0.5, 0.5])            # halfway between 2 and 3


def test_medians():
    values, indices = ops.nanmedian(Tensor(X_NAN), 1)
    np.testing.assert_array_equal(values.asnumpy(), [3.0, 0.0])      # lower median of the non-NaN values
    np.testing.assert_array_equal(indices.asnumpy(), [0, 0])
    assert indices.dtype == ms.int64
    values, indices = ops.Median(axis=1)(Tensor(X_NAN))
    assert np.isnan(values.asnumpy()[0]) and indices.asnumpy()[0] == 1  # a NaN slice: NaN at its first NaN
    assert ops.Median(global_median=True)(Tensor(np.array([[3.0, 1.0], [2.0, 5.0]], np.float32)))[0].asnumpy() == 2.0


def test_nextafter_matches_numpy_bit_for_bit():
    for dtype in (np.float32, np.float64):
        info = np.finfo(dtype)
        x = np.array([0.0, 0.0, 1.0, 1.0, -1.0, 2.0, 0.5, np.inf, -np.inf, np.nan, info.max, info.tiny, 1e-3,
                      3.0e5], dtype)
        y = np.array([1.0, -1.0, 2.0, 0.0, -2.0, 1.0, 0.0, 0.0, 0.0, 1.0, np.inf, 0.0, 1.0, -7.0], dtype)
        with np.errstate(over="ignore"):
            want = np.nextafter(x, y)
        np.testing.assert_array_equal(ops.nextafter(Tensor(x), Tensor(y)).asnumpy(), want)
    with pytest.raises(TypeError):
        ops.nextafter(Tensor(np.array([1], np.int32)), Tensor(np.array([2], np.int32)))


def test_mvlgamma_and_its_gradient():
    x = np.array([[1.5, 2.0], [3.25, 4.0]], np.float32)
    want = np.vectorize(lambda v: sum(math.lgamma(v - i / 2) for i in range(3)) + 1.5 * math.log(math.pi))(x)
    np.testing.assert_allclose(ops.mvlgamma(Tensor(x), 3).asnumpy(), want, rtol=1e-5)
    g = ms.grad(lambda t: ops.mvlgamma(t, 2).sum())(Tensor(x)).asnumpy()
    h = 1e-5
    f = np.vectorize(lambda v: math.lgamma(v) + math.lgamma(v - 0.5))
    wide = x.astype(np.float64)
    np.testing.assert_allclose(g, (f(wide + h) - f(wide - h)) / (2 * h), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        ops.mvlgamma(Tensor(x), 4)                                  # 1.5 <= (4 - 1) / 2


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, float("inf"), 3.0])
def test_pdist_is_the_upper_triangle_of_the_distance_matrix(p):
    x = np.array([[0.0, 1.0, 2.0], [3.0, -4.0, 5.0], [6.0, 7.5, -8.0], [0.5, 0.25, 1.0]], np.float32)
    i, j = np.triu_indices(4, 1)
    diff = np.abs(x[i] - x[j]).astype(np.float64)
    want = {0.0: (diff != 0).sum(-1), float("inf"): diff.max(-1)}.get(p, (diff ** p).sum(-1) ** (1 / max(p, 1e-9)))
    np.testing.assert_allclose(ops.pdist(Tensor(x), p).asnumpy(), want, rtol=1e-5)


def test_small_composites():
    x = np.array([[3.0, 1.0, 2.0, 7.0], [0.0, 5.0, -1.0, 4.0]], np.float32)
    np.testing.assert_array_equal(ops.NthElement()(Tensor(x), 1).asnumpy(), np.sort(x)[:, 1])
    np.testing.assert_array_equal(ops.NthElement(reverse=True)(Tensor(x), Tensor(np.int32(0))).asnumpy(), x.max(1))
    np.testing.assert_allclose(ops.NuclearNorm()(Tensor(x)).asnumpy(), np.linalg.norm(x.astype(np.float64), "nuc"),
                               rtol=1e-5)
    sup, main, sub = (np.array([[0.0, 1.0, 2.0]]), np.array([[3.0, 4.0, 5.0]]), np.array([[6.0, 7.0, 0.5]]))
    rhs = np.arange(6.0).reshape(3, 2)
    t = np.diag(main[0]) + np.diag(sup[0, :-1], 1) + np.diag(sub[0, 1:], -1)
    np.testing.assert_allclose(ops.TridiagonalMatMul()(*(Tensor(a) for a in (sup, main, sub, rhs))).asnumpy(), t @ rhs)
    counts = ops.HistogramFixedWidth(5)(Tensor(np.array([-1.0, 0.0, 1.0, 2.0, 5.0, 3.9, 10.0], np.float32)),
                                        Tensor(np.array([0.0, 5.0], np.float32)))
    np.testing.assert_array_equal(counts.asnumpy(), [2, 1, 1, 1, 2])
    np.testing.assert_array_equal(ops.msort(Tensor(x)).asnumpy(), np.sort(x, axis=0))
    np.testing.assert_array_equal(Tensor(x).msort().asnumpy(), np.sort(x, axis=0))
    cos = ops.cosine_similarity(Tensor(x), Tensor(x + 1)).asnumpy()
    want = (x * (x + 1)).sum(1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(x + 1, axis=1))
    np.testing.assert_allclose(cos, want, rtol=1e-6)
    values, indices = ops.Cummax(axis=1)(Tensor(x))
    np.testing.assert_array_equal(values.asnumpy(), np.maximum.accumulate(x, 1))
    assert indices.dtype == ms.int64 and ops.Cummin(axis=1)(Tensor(x))[1].dtype == ms.int32


def test_tensor_triangular_solve():
    b = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    a = np.array([[2.0, 1.0], [5.0, 4.0]], np.float32)
    x, coefficient = Tensor(b).triangular_solve(Tensor(a))
    np.testing.assert_allclose(x.asnumpy(), np.linalg.solve(np.triu(a), b), rtol=1e-6)
    np.testing.assert_array_equal(coefficient.asnumpy(), a)
    x, _ = Tensor(b).triangular_solve(Tensor(a), upper=False, transpose=True, unitriangular=True)
    unit_lower = np.tril(a, -1) + np.eye(2)
    np.testing.assert_allclose(x.asnumpy(), np.linalg.solve(unit_lower.T, b), rtol=1e-6)


class _Stats(nn.Cell):
    def construct(self, x, b, lu, piv):
        return ops.nanquantile(x, 0.5, 1), ops.nanmedian(x, 1)[0], ops.lu_solve(b, lu, piv), ops.pdist(b)


def test_graph_mode_traces_the_compositions():
    ms.set_context(mode=ms.GRAPH_MODE)
    lu, piv = lu_factor(A3)
    q, med, x, dist = _Stats()(Tensor(X_NAN), Tensor(RHS.astype(np.float32)), Tensor(lu.astype(np.float32)),
                               Tensor(piv))
    np.testing.assert_allclose(q.asnumpy(), np.nanquantile(X_NAN.astype(np.float64), 0.5, axis=1), rtol=1e-6)
    np.testing.assert_array_equal(med.asnumpy(), [3.0, 0.0])
    np.testing.assert_allclose(x.asnumpy(), np.linalg.solve(A3, RHS), rtol=1e-5, atol=1e-6)
    i, j = np.triu_indices(3, 1)
    np.testing.assert_allclose(dist.asnumpy(), np.linalg.norm(RHS[i] - RHS[j], axis=1), rtol=1e-6)
