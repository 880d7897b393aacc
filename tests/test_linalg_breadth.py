"""Linear algebra and special functions (kernels/ops/linalg.py, kernels/ops/special.py and their front
end in ops.operations.math_ops / linalg_ops, ops.function.math_func / linalg_func, nn.layer.math).

Oracles: numpy.linalg and scipy (float64: det, inv, solve, cholesky, qr, svd, pinv, expm; gammaln, psi,
polygamma, zeta, gammainc, betainc, the Bessel functions), central finite differences of those float64
references for the backward rules (tests/gradcheck.py), and hand-derived identities (Q R = A, Q^T Q = I,
U S V^T = A)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.special as sp

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, mint, nn, ops
from gradcheck import assert_grads_close, autodiff_grads, numeric_grads

RNG = np.random.default_rng(7)
A = RNG.standard_normal((2, 4, 4)) + 3 * np.eye(4)          # well conditioned, a batch of two
SPD = A @ A.transpose(0, 2, 1) + np.eye(4)
B = RNG.standard_normal((2, 4, 3))
TALL = RNG.standard_normal((2, 5, 3))
WIDE = RNG.standard_normal((2, 3, 5))


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def _t(x: np.ndarray, dtype=np.float64) -> Tensor:
    return Tensor(np.ascontiguousarray(x).astype(dtype))


TOL = {np.float64: dict(rtol=1e-10, atol=1e-11), np.float32: dict(rtol=2e-5, atol=2e-5)}
DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("dtype", DTYPES)
def test_determinants_inverse_and_solves_match_numpy(dtype):
    tol = TOL[dtype]
    a, b = _t(A, dtype), _t(B, dtype)
    np.testing.assert_allclose(ops.det(a).asnumpy(), np.linalg.det(A), **tol)
    sign, logabs = ops.slogdet(a)
    want_sign, want_log = np.linalg.slogdet(A)
    np.testing.assert_array_equal(sign.asnumpy(), want_sign)
    np.testing.assert_allclose(logabs.asnumpy(), want_log, **tol)
    np.testing.assert_allclose(ops.logdet(_t(SPD, dtype)).asnumpy(), np.log(np.linalg.det(SPD)), **tol)
    np.testing.assert_allclose(ops.inverse(a).asnumpy(), np.linalg.inv(A), **tol)
    np.testing.assert_allclose(ops.MatrixInverse(adjoint=True)(a).asnumpy(), np.linalg.inv(A).transpose(0, 2, 1), **tol)
    np.testing.assert_allclose(ops.matrix_solve(a, b).asnumpy(), np.linalg.solve(A, B), **tol)
    np.testing.assert_allclose(ops.matrix_solve(a, b, adjoint=True).asnumpy(),
                               np.linalg.solve(A.transpose(0, 2, 1), B), **tol)
    for lower in (True, False):
        for adjoint in (False, True):
            tri = np.tril(A) if lower else np.triu(A)
            system = tri.transpose(0, 2, 1) if adjoint else tri
            got = ops.MatrixTriangularSolve(lower=lower, adjoint=adjoint)(a, b).asnumpy()
            np.testing.assert_allclose(got, np.linalg.solve(system, B), **tol)


def test_one_kernel_serves_every_shape_and_index_attribute_of_an_op_and_dtype():
    """Dynamic-shape linalg kernels: sizes and the attributes that only move an index, reverse a loop or
    skip one are tiling data, so these signatures need one kernel per (op, dtype), two for MatrixSolve
    (its adjoint solves another way); the outputs through the shared kernels are the tests above."""
    from ascendemu.kernels.library import plan_kernel
    from ascendemu.kernels.signature import OpSignature, TensorDesc

    def families(op, shapes, attrs, dtype="float32"):
        found = {plan_kernel(OpSignature.make(op, [TensorDesc(s, dtype) for s in shape], **a)).family
                 for shape in shapes for a in attrs}
        assert None not in found, f"{op} has size-specialised kernels"
        return found

    square = [[(3, 3)], [(2, 5, 5)], [(4, 2, 7, 7)]]
    solve = [[(3, 3), (3, 2)], [(2, 6, 6), (2, 6, 1)]]
    both = [dict(), dict(adjoint=True), dict(adjoint=False)]
    flags = [dict(lower=lo, adjoint=ad) for lo in (True, False) for ad in (True, False)]
    svd = [dict(full_matrices=f, compute_uv=uv) for f in (True, False) for uv in (True, False)]
    assert len(families("MatrixInverse", square, both)) == 1
    assert len(families("Cholesky", square, [dict(upper=True), dict(upper=False)])) == 1
    assert len(families("MatrixTriangularSolve", solve, flags)) == 1
    assert len(families("MatrixSolve", solve, both)) == 2
    assert len(families("Svd", [[(5, 3)], [(3, 5)], [(2, 4, 4)]], svd)) == 1
    sides = [dict(left=left, transpose=t) for left in (True, False) for t in (False, True)]
    assert len(families("Ormqr", [[(5, 3), (3,), (5, 4)]], sides[:2])
               | families("Ormqr", [[(5, 3), (2,), (4, 5)]], sides[2:])) == 1
    assert len(families("Qr", [[(5, 3)], [(3, 5)]], [dict(full_matrices=f) for f in (True, False)])) == 1
    assert families("Svd", [[(3, 3)]], [{}], "float64").isdisjoint(families("Svd", [[(3, 3)]], [{}]))


def test_one_special_function_kernel_serves_every_shape_of_an_op_and_dtype():
    """Dynamic-shape special functions (the elementwise loop): element count, coalesced dims and broadcast
    strides are tiling data, so every shape of an op, dtypes and broadcast pattern shares one kernel
    (another dtype is another); the outputs through the shared kernels are the tests below."""
    from ascendemu.kernels.library import plan_kernel
    from ascendemu.kernels.signature import OpSignature, TensorDesc

    def plans(op, shapes, dtypes):
        return [plan_kernel(OpSignature.make(op, [TensorDesc(s, d) for s, d in zip(shape, dtypes)]))
                for shape in shapes]

    def families(op, shapes, dtypes=("float32",) * 3):
        found = {p.family for p in plans(op, shapes, dtypes)}
        assert None not in found, f"{op} has size-specialised kernels"
        return found

    unary = [[()], [(7,)], [(3, 5)], [(2, 1, 4)]]
    for op in ("Lgamma", "Digamma", "BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "BesselJ0", "BesselJ1",
               "BesselY0", "BesselY1", "BesselK0", "BesselK0e", "BesselK1", "BesselK1e"):
        assert len(families(op, unary)) == 1
        assert families(op, unary[:1], ("float64",)).isdisjoint(families(op, unary[:1]))
    outer = [[(3, 1), (1, 4)], [(5, 1), (1, 2)]]          # broadcast both ways: dims (3, 4), strides (1, 0), (0, 1)
    for op in ("Zeta", "Igamma", "Igammac"):
        assert len(families(op, outer)) == 1
        assert [p.tiling_data for p in plans(op, outer, ("float32",) * 2)] == [(12, 3, 4, 1, 0, 0, 1),
                                                                               (10, 5, 2, 1, 0, 0, 1)]
    assert len(families("Betainc", [[(4,), (4,), (4,)], [(2, 9), (2, 9), (2, 9)]])) == 1
    assert len(families("Polygamma", [[(), (7,)], [(), (3, 5)]], ("int64", "float32"))) == 1


def test_a_singular_matrix_has_determinant_zero_and_log_determinant_minus_inf():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert ops.det(_t(singular)).asnumpy() == 0.0
    sign, logabs = ops.slogdet(_t(singular))
    assert sign.asnumpy() == 0.0 and logabs.asnumpy() == -np.inf


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_family_matches_numpy(dtype):
    tol = TOL[dtype]
    lower = np.linalg.cholesky(SPD)
    np.testing.assert_allclose(ops.cholesky(_t(SPD, dtype)).asnumpy(), lower, **tol)
    np.testing.assert_allclose(ops.cholesky(_t(SPD, dtype), upper=True).asnumpy(), lower.transpose(0, 2, 1), **tol)
    np.testing.assert_allclose(ops.cholesky_solve(_t(B, dtype), _t(lower, dtype)).asnumpy(), np.linalg.solve(SPD, B),
                               **tol)
    upper = lower[0].T
    np.testing.assert_allclose(ops.cholesky_inverse(_t(upper, dtype), upper=True).asnumpy(), np.linalg.inv(SPD[0]),
                               **tol)
    # not positive definite: NaN on and below the diagonal (MindSpore's CPU kernel raises)
    got = ops.cholesky(_t(-SPD[0], dtype)).asnumpy()
    assert np.isnan(got[np.tril_indices(4)]).all() and (got[np.triu_indices(4, 1)] == 0).all()


@pytest.mark.parametrize("x", [TALL, WIDE, A], ids=["tall", "wide", "square"])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_matches_numpy_and_geqrf_orgqr_ormqr_agree(x, mode):
    q, r = ops.qr(_t(x), mode)
    want_q, want_r = np.linalg.qr(x, mode=mode)
    np.testing.assert_allclose(q.asnumpy(), want_q, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(r.asnumpy(), want_r, rtol=1e-10, atol=1e-12)
    y, tau = ops.geqrf(_t(x))
    (raw, want_tau), _ = sl.qr(x[0], mode="raw")
    np.testing.assert_allclose(y.asnumpy()[0], raw, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tau.asnumpy()[0], want_tau, rtol=1e-10, atol=1e-12)
    if x.shape[-2] >= x.shape[-1]:
        np.testing.assert_allclose(ops.orgqr(y, tau).asnumpy(), np.linalg.qr(x)[0], rtol=1e-10, atol=1e-12)
    full_q = np.linalg.qr(x, mode="complete")[0]
    other = RNG.standard_normal(x.shape[:-2] + (x.shape[-2], 2))
    np.testing.assert_allclose(ops.ormqr(y, tau, _t(other)).asnumpy(), full_q @ other, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ops.ormqr(y, tau, _t(other), transpose=True).asnumpy(),
                               full_q.transpose(0, 2, 1) @ other, rtol=1e-10, atol=1e-12)
    right = RNG.standard_normal(x.shape[:-2] + (2, x.shape[-2]))
    np.testing.assert_allclose(ops.ormqr(y, tau, _t(right), left=False).asnumpy(), right @ full_q,
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("x", [TALL, WIDE, A], ids=["tall", "wide", "square"])
@pytest.mark.parametrize("full", [False, True])
def test_svd_reconstructs_and_its_vectors_are_orthonormal(x, full):
    s, u, v = ops.svd(_t(x), full_matrices=full)
    np.testing.assert_allclose(s.asnumpy(), np.linalg.svd(x, compute_uv=False), rtol=1e-10, atol=1e-12)
    k = min(x.shape[-2:])
    u, v = u.asnumpy(), v.asnumpy()
    assert u.shape[-1] == (x.shape[-2] if full else k) and v.shape[-1] == (x.shape[-1] if full else k)
    np.testing.assert_allclose((u[..., :k] * s.asnumpy()[..., None, :]) @ v[..., :k].transpose(0, 2, 1), x,
                               atol=1e-12)
    for m in (u, v):
        np.testing.assert_allclose(m.transpose(0, 2, 1) @ m, np.broadcast_to(np.eye(m.shape[-1]), m.shape[:-2] +
                                                                              (m.shape[-1],) * 2), atol=1e-12)
    np.testing.assert_allclose(ops.svd(_t(x), compute_uv=False).asnumpy(), s.asnumpy())


def test_svd_of_a_rank_deficient_matrix_completes_u_with_an_orthonormal_basis():
    x = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    s, u, v = ops.svd(_t(x), full_matrices=True)
    np.testing.assert_allclose(s.asnumpy(), np.linalg.svd(x, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(u.asnumpy().T @ u.asnumpy(), np.eye(3), atol=1e-12)
    np.testing.assert_allclose(ops.pinv(_t(x)).asnumpy(), np.linalg.pinv(x), atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_matrix_power_and_matrix_exp_match_numpy_and_scipy(dtype):
    tol = TOL[dtype]
    np.testing.assert_allclose(ops.pinv(_t(TALL, dtype)).asnumpy(), np.linalg.pinv(TALL), **tol)
    for n in (0, 1, 3, -2):
        np.testing.assert_allclose(ops.matrix_power(_t(A, dtype), n).asnumpy(),
                                   np.linalg.matrix_power(A, n), rtol=tol["rtol"] * 10, atol=tol["atol"] * 10)
    for scale in (0.0, 0.1, 1.0, 6.0):
        want = np.stack([sl.expm(m * scale) for m in A])
        np.testing.assert_allclose(ops.matrix_exp(_t(A * scale, dtype)).asnumpy(), want,
                                   rtol=tol["rtol"] * 50, atol=tol["atol"] * 50 * max(1.0, np.abs(want).max()))


X = np.array([-7.5, -2.5, -0.7, 0.001, 0.3, 1.0, 1.7, 2.5, 5.0, 9.9, 16.9, 17.1, 30.0, 80.0, 300.0])
BESSEL = {"bessel_i0": sp.i0, "bessel_i0e": sp.i0e, "bessel_i1": sp.i1, "bessel_i1e": sp.i1e,
          "bessel_j0": sp.j0, "bessel_j1": sp.j1}
BESSEL_POSITIVE = {"bessel_y0": sp.y0, "bessel_y1": sp.y1, "bessel_k0": sp.k0, "bessel_k0e": sp.k0e,
                   "bessel_k1": sp.k1, "bessel_k1e": sp.k1e}


@pytest.mark.parametrize("name", sorted({**BESSEL, **BESSEL_POSITIVE}))
def test_bessel_functions_match_scipy(name):
    ref = {**BESSEL, **BESSEL_POSITIVE}[name]
    x = X if name in BESSEL else np.abs(X)
    got = getattr(ops, name)(_t(x)).asnumpy()
    # J and Y near 17 lose ~1e-10 to the series' cancellation (absolute; far below float32's ulp)
    np.testing.assert_allclose(got, ref(x), rtol=1e-9, atol=1e-10)
    got32 = getattr(ops, name)(_t(x, np.float32)).asnumpy()
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, ref(x.astype(np.float32).astype(np.float64)).astype(np.float32), rtol=2e-6,
                               atol=1e-30)


def test_bessel_values_off_the_domain_are_mindspores():
    """MindSpore 2.10 CPU's answers (printed from it): Y at x < 0 -inf, Y1(0) NaN, K at x <= 0 inf."""
    x = _t(np.array([-1.0, 0.0]))
    np.testing.assert_array_equal(ops.bessel_y0(x).asnumpy(), [-np.inf, -np.inf])
    np.testing.assert_array_equal(ops.bessel_y1(x).asnumpy(), [-np.inf, np.nan])
    np.testing.assert_array_equal(ops.bessel_k0(x).asnumpy(), [np.inf, np.inf])
    np.testing.assert_array_equal(ops.i0(_t(np.array([0.0, 1.0]))).asnumpy(), sp.i0([0.0, 1.0]))


def test_gamma_family_matches_scipy():
    x = np.array([-2.5, -0.5, 0.2, 0.5, 1.5, 2.0, 7.3, 30.0, 171.5])
    np.testing.assert_allclose(ops.lgamma(_t(x)).asnumpy(), sp.gammaln(x), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(ops.digamma(_t(x)).asnumpy(), sp.psi(x), rtol=1e-12, atol=1e-13)
    assert ops.digamma(_t(np.array([0.0]))).asnumpy()[0] == -np.inf      # MindSpore's value at the pole 0
    assert ops.lgamma(Tensor(np.array([1, 3], np.int32))).dtype == ms.float32
    for n in (0, 1, 2, 4):
        got = ops.polygamma(Tensor(np.array(n)), _t(x[2:])).asnumpy()
        np.testing.assert_allclose(got, sp.polygamma(n, x[2:]), rtol=1e-11)
    s, q = np.array([1.5, 2.0, 3.0, 7.5]), np.array([0.3, 1.0, 2.5, 10.0])
    np.testing.assert_allclose(ops.zeta(_t(s), _t(q)).asnumpy(), sp.zeta(s, q), rtol=1e-13)
    a, x2 = np.array([[0.5], [1.0], [3.0], [25.0]]), np.array([0.1, 1.0, 4.0, 40.0])
    np.testing.assert_allclose(ops.igamma(_t(a), _t(x2)).asnumpy(), sp.gammainc(a, x2), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ops.igammac(_t(a), _t(x2)).asnumpy(), sp.gammaincc(a, x2), rtol=1e-11, atol=1e-15)
    aa, bb, xx = np.array([0.5, 2.0, 5.0, 1.0]), np.array([0.5, 3.0, 1.0, 10.0]), np.array([0.2, 0.5, 0.9, 0.05])
    np.testing.assert_allclose(ops.Betainc()(_t(aa), _t(bb), _t(xx)).asnumpy(), sp.betainc(aa, bb, xx), rtol=1e-12)


def test_nn_cells_and_tensor_methods_and_mint_names():
    x, y = _t(np.array([0.5, 1.5, 3.0])), _t(np.array([2.0, 0.7, 30.0]))
    np.testing.assert_allclose(nn.LGamma()(x).asnumpy(), sp.gammaln(x.asnumpy()), rtol=1e-13)
    np.testing.assert_allclose(nn.DiGamma()(x).asnumpy(), sp.psi(x.asnumpy()), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(nn.IGamma()(x, y).asnumpy(), sp.gammainc(x.asnumpy(), y.asnumpy()), rtol=1e-12)
    np.testing.assert_allclose(nn.LBeta()(x, y).asnumpy(), sp.betaln(x.asnumpy(), y.asnumpy()), rtol=1e-12)
    np.testing.assert_allclose(nn.MatDet()(_t(SPD)).asnumpy(), np.linalg.det(SPD), rtol=1e-10)
    np.testing.assert_allclose(nn.MatInverse()(_t(SPD)).asnumpy(), np.linalg.inv(SPD), rtol=1e-9, atol=1e-12)
    a = _t(A)
    np.testing.assert_allclose(a.det().asnumpy(), np.linalg.det(A), rtol=1e-10)
    np.testing.assert_allclose(a.inverse().asnumpy(), np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    assert a.qr(some=False)[0].shape == (2, 4, 4) and _t(TALL).qr()[0].shape == (2, 5, 3)
    np.testing.assert_allclose(mint.inverse(a).asnumpy(), np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mint.linalg.qr(_t(TALL))[1].asnumpy(), np.linalg.qr(TALL)[1], atol=1e-12)


def test_arguments_are_checked_as_mindspore_checks_them():
    with pytest.raises(ValueError, match="rank must be greater than or equal to 2"):
        ops.det(_t(np.ones(3)))
    with pytest.raises(ValueError, match="row size"):
        ops.inverse(_t(np.ones((2, 3))))
    with pytest.raises(TypeError, match="MatrixInverse"):
        ops.inverse(Tensor(np.eye(2, dtype=np.int32)))
    with pytest.raises(TypeError, match="mode must be 'reduced' or 'complete'"):
        ops.qr(_t(A), "r")
    with pytest.raises(TypeError, match="should be a Tensor"):
        ops.polygamma(1, _t(np.ones(2)))
    with pytest.raises(ValueError, match="0-dim"):
        ops.polygamma(Tensor(np.array([1, 2])), _t(np.ones(2)))
    with pytest.raises(TypeError, match="input type must be same"):
        ops.igamma(_t(np.ones(2), np.float32), _t(np.ones(2)))
    with pytest.raises(TypeError, match="Digamma"):
        ops.digamma(Tensor(np.array([1, 2])))


GRADS = [
    ("MatrixDeterminant", [A[0]], {}, 0, lambda a: np.linalg.det(a)),
    ("MatrixDeterminant", [A], {}, 0, lambda a: np.linalg.det(a)),
    ("LogMatrixDeterminant", [A], {}, 1, lambda a: np.linalg.slogdet(a)[1]),
    ("MatrixInverse", [A], {"adjoint": False}, 0, lambda a: np.linalg.inv(a)),
    ("MatrixInverse", [A], {"adjoint": True}, 0, lambda a: np.linalg.inv(a).transpose(0, 2, 1)),
    ("Lgamma", [np.array([0.3, 1.5, 4.0, -1.5])], {}, 0, sp.gammaln),
    ("Digamma", [np.array([0.3, 1.5, 4.0, -1.5])], {}, 0, sp.psi),
    ("Polygamma", [np.array(2), np.array([0.3, 1.5, 4.0])], {}, 0, lambda n, x: sp.polygamma(2, x)),
    ("Igamma", [np.array([0.5, 2.0, 4.0]), np.array([0.3, 1.5, 6.0])], {}, 0, sp.gammainc),
    ("Igammac", [np.array([0.5, 2.0, 4.0]), np.array([0.3, 1.5, 6.0])], {}, 0, sp.gammaincc),
] + [(name, [np.array([0.3, 1.5, 4.0, 9.0]) * (1 if name[6] in "KY" else np.array([1, -1, 1, -1]))], {}, 0,
      ref) for name, ref in (("BesselI0", sp.i0), ("BesselI0e", sp.i0e), ("BesselI1", sp.i1), ("BesselI1e", sp.i1e),
                              ("BesselJ0", sp.j0), ("BesselJ1", sp.j1), ("BesselY0", sp.y0), ("BesselY1", sp.y1),
                              ("BesselK0", sp.k0), ("BesselK0e", sp.k0e), ("BesselK1", sp.k1),
                              ("BesselK1e", sp.k1e))]


@pytest.mark.parametrize("op,arrays,attrs,out_index,reference", GRADS, ids=[g[0] + str(i) for i, g in enumerate(GRADS)])
def test_backward_rules_match_finite_differences(ex, op, arrays, attrs, out_index, reference):
    arrays = [np.asarray(a) for a in arrays]
    out_shape = np.broadcast_shapes(*[a.shape for a in arrays if a.dtype.kind == "f"])
    if op.endswith("Determinant"):
        out_shape = arrays[0].shape[:-2]
    cotangent = RNG.standard_normal(out_shape)
    got = autodiff_grads(ex, op, arrays, attrs, cotangent, out_index)
    wrt = [len(arrays) - 1] if op in ("Polygamma", "Igamma", "Igammac") else None
    want = numeric_grads(reference, arrays, cotangent, wrt=wrt, eps=1e-6)
    assert_grads_close(got[1:], want, rtol=1e-6, atol=1e-7)


def test_graph_mode_runs_the_decompositions_and_special_functions(restore_context):
    class Net(nn.Cell):
        def construct(self, a, b, x):
            q, r = ops.qr(a)
            s = ops.svd(a, compute_uv=False)
            return ops.det(a), ops.matrix_solve(a, b), q, r, s, ops.matrix_exp(a), ops.lgamma(x), ops.bessel_j1(x)

    ms.set_context(mode=ms.GRAPH_MODE)
    x = np.array([0.5, 2.0, 20.0])
    det, solved, q, r, s, expm, lg, j1 = Net()(_t(A), _t(B), _t(x))
    np.testing.assert_allclose(det.asnumpy(), np.linalg.det(A), rtol=1e-10)
    np.testing.assert_allclose(solved.asnumpy(), np.linalg.solve(A, B), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(q.asnumpy() @ r.asnumpy(), A, atol=1e-12)
    np.testing.assert_allclose(s.asnumpy(), np.linalg.svd(A, compute_uv=False), rtol=1e-10)
    np.testing.assert_allclose(expm.asnumpy(), np.stack([sl.expm(m) for m in A]), rtol=1e-9)
    np.testing.assert_allclose(lg.asnumpy(), sp.gammaln(x), rtol=1e-13)
    np.testing.assert_allclose(j1.asnumpy(), sp.j1(x), rtol=1e-10)
