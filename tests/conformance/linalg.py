"""Linear algebra and special function specs: determinants, inverses, solves, Cholesky, QR, SVD, pinv,
matrix powers; lgamma, digamma, polygamma, zeta, the incomplete gamma and beta functions, the Bessel
functions; their Tensor methods and nn cells.

Matrices are given values (well conditioned, symmetric positive definite where a factorisation needs
it), so float32 results are stable to the dtype's tolerance. Singular vectors are compared up to sign
(their absolute values: the singular values here are distinct, so the vectors are unique up to sign).
"""
from __future__ import annotations

import numpy as np

from .core import method_call as _m, ops_call as _f, Py, T, cell, op

M3 = [[2.0, -1.0, 0.5], [0.3, 1.5, -0.7], [1.0, 0.2, 3.0]]
M3B = [M3, [[1.0, 0.4, -0.2], [-0.6, 2.0, 0.3], [0.1, 0.5, -1.5]]]
SPD3 = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]
LOWER3 = [[2.0, 0.0, 0.0], [0.5, 1.5, 0.0], [0.25, -0.3, 1.2]]
UPPER3 = [[2.0, 0.5, 0.25], [0.0, 1.5, -0.3], [0.0, 0.0, 1.2]]
RHS32 = [[1.0, -2.0], [0.5, 3.0], [-1.0, 0.25]]
TALL = [[1.0, 2.0, 0.5], [-4.0, -5.0, 1.0], [2.0, 1.0, 3.0], [0.5, -1.0, 2.0]]
WIDE = [[1.0, 2.0, 0.5, -1.0], [-4.0, -5.0, 1.0, 0.3], [2.0, 1.0, 3.0, 0.7]]
F64 = ("float32", "float64")
POSITIVE = dict(low=0.3, high=4.0)
MAT = T((3, 3), values=M3)
BATCH = T((2, 3, 3), values=M3B)
SPD = T((3, 3), values=SPD3)
NOT_SQUARE = [([T((2, 3))], {})]
A_VECTOR = [([T((3,))], {})]




def _no_cpu(oracle: str, kernel: str) -> str:
    """A spec's note: which oracle answered, and the kernel MindSpore 2.10 CPU lacks."""
    return f"oracle: {oracle} ({kernel} has no CPU kernel in MindSpore 2.10)"


def _matrix_exp_oracle(ms, x):
    """exp(A) by its defining series on MindSpore CPU ops, in float64: A scaled by 2^-s to norm <= 1/2, 30
    terms of sum A^k / k!, squared s times; cast back to A's dtype."""
    a = x.astype(ms.float64)
    norm = float(ms.ops.abs(a).sum(axis=-1).max().asnumpy())
    s = max(0, int(np.ceil(np.log2(norm))) + 1) if norm > 0 else 0
    a = a / (2.0 ** s)
    term = ms.ops.eye(a.shape[-1], a.shape[-1], ms.float64).broadcast_to(a.shape)
    total = term
    for k in range(1, 30):
        term = ms.ops.matmul(term, a) / k
        total = total + term
    for _ in range(s):
        total = ms.ops.matmul(total, total)
    return total.astype(x.dtype)


def _ormqr_oracle(ms, x, tau, other, left=True, transpose=False):
    """ormqr: the full Householder product Q of (x, tau) times other (Q on the left or the right, Q^T with
    transpose). Q comes from ops.orgqr of x padded with zero columns and tau with zeros (a reflector with tau 0
    is the identity), so orgqr's m x m result is the full Q."""
    m, n = x.shape[-2:]
    if n < m:
        x = ms.ops.concat([x, ms.ops.zeros((m, m - n), x.dtype)], 1)
    tau = ms.ops.concat([tau, ms.ops.zeros((m - tau.shape[0],), tau.dtype)]) if tau.shape[0] < m else tau
    q = ms.ops.orgqr(x, tau)
    if transpose:
        q = q.T
    return ms.ops.matmul(q, other) if left else ms.ops.matmul(other, q)


def _cell_of(fn):
    """A Cell spec's oracle: a Cell whose call is ``fn(ms, *xs)``."""
    def build(ms):
        class Oracle(ms.nn.Cell):
            def construct(self, *xs):
                return fn(ms, *xs)
        return Oracle()
    return build


MATRIX_EXP_NOTE = _no_cpu("sum A^k / k! with scaling and squaring, float64 MindSpore CPU ops", "MatrixExp")
ORMQR_NOTE = _no_cpu("ops.orgqr's full Q (x and tau zero-padded) times other", "Ormqr (GPU only)")


def _abs_vectors(ms, s, u, v):
    """(s, |u|, |v|): singular vectors up to sign."""
    return s, ms.ops.abs(u), ms.ops.abs(v)


SPECS = [
    # determinants
    op("mindspore.ops.det", _f("det"), shapes=[MAT, BATCH], dtypes=F64, errors=A_VECTOR + NOT_SQUARE),
    op("mindspore.ops.matrix_determinant", _f("matrix_determinant"), shapes=[MAT], dtypes=F64),
    op("mindspore.ops.MatrixDeterminant", _f("MatrixDeterminant"), shapes=[BATCH], dtypes=F64,
       errors=[([T((3, 3), dtype="int32")], {})]),
    op("mindspore.ops.slogdet", _f("slogdet"), shapes=[MAT, T((3, 3), values=[[-1.0, 0.0, 0.0], [0.0, 2.0, 0.0],
                                                                          [0.0, 0.0, 3.0]])], dtypes=F64),
    op("mindspore.ops.log_matrix_determinant", _f("log_matrix_determinant"), shapes=[BATCH], dtypes=F64),
    op("mindspore.ops.LogMatrixDeterminant", _f("LogMatrixDeterminant"), shapes=[MAT], dtypes=F64),
    op("mindspore.ops.logdet", _f("logdet"), shapes=[SPD, MAT], dtypes=F64),
    # inverses and solves
    op("mindspore.ops.inverse", _f("inverse"), shapes=[MAT, BATCH], dtypes=F64, errors=NOT_SQUARE),
    op("mindspore.ops.MatrixInverse", _f("MatrixInverse"), shapes=[BATCH], dtypes=F64,
       kwargs=[{}, {"adjoint": True}]),
    op("mindspore.ops.matrix_solve", _f("matrix_solve"), shapes=[[MAT, T((3, 2), values=RHS32)]], dtypes=F64,
       kwargs=[{}, {"adjoint": True}], grad=False, errors=[([BATCH, T((3, 2))], {})]),
    op("mindspore.ops.MatrixSolve", _f("MatrixSolve"), shapes=[[MAT, T((3, 2), values=RHS32)]], grad=False),
    op("mindspore.ops.MatrixTriangularSolve", _f("MatrixTriangularSolve"), shapes=[[MAT, T((3, 2), values=RHS32)]],
       dtypes=F64, kwargs=[{}, {"lower": False}, {"adjoint": True}, {"lower": False, "adjoint": True}], grad=False),
    op("mindspore.ops.matrix_power", _f("matrix_power"), shapes=[[MAT, Py(3)], [BATCH, Py(2)], [MAT, Py(0)]]),
    op("mindspore.ops.MatrixPower", _f("MatrixPower"), shapes=[T((2, 3, 3), values=M3B)], kwargs=[{"n": 2}, {"n": -1}]),
    # MindSpore 2.10's CPU build has no MatrixExp kernel (RuntimeError): the series on CPU ops answers
    op("mindspore.ops.matrix_exp", _f("matrix_exp"), shapes=[MAT], grad=False, oracle=_matrix_exp_oracle,
       note=MATRIX_EXP_NOTE),
    op("mindspore.ops.MatrixExp", _f("MatrixExp"), shapes=[MAT], grad=False, oracle=_matrix_exp_oracle,
       note=MATRIX_EXP_NOTE),
    # Cholesky
    op("mindspore.ops.cholesky", _f("cholesky"), shapes=[SPD], dtypes=F64, kwargs=[{}, {"upper": True}], grad=False,
       errors=NOT_SQUARE),
    op("mindspore.ops.Cholesky", _f("Cholesky"), shapes=[SPD], kwargs=[{}, {"upper": True}], grad=False),
    op("mindspore.ops.cholesky_inverse", _f("cholesky_inverse"), shapes=[T((3, 3), values=LOWER3)], dtypes=F64,
       grad=False),
    op("mindspore.ops.CholeskyInverse", _f("CholeskyInverse"), shapes=[T((3, 3), values=UPPER3)],
       kwargs=[{"upper": True}], grad=False),
    op("mindspore.ops.cholesky_solve", _f("cholesky_solve"), shapes=[[T((3, 2), values=RHS32), T((3, 3), values=LOWER3)]],
       dtypes=F64, grad=False),
    op("mindspore.ops.CholeskySolve", _f("CholeskySolve"), shapes=[[T((3, 2), values=RHS32), T((3, 3), values=UPPER3)]],
       kwargs=[{"upper": True}], grad=False),
    # QR and SVD
    op("mindspore.ops.qr", _f("qr"), shapes=[T((4, 3), values=TALL), T((3, 4), values=WIDE)], dtypes=F64,
       kwargs=[{}, {"mode": "complete"}], grad=False, errors=[([MAT], {"mode": "r"})]),
    op("mindspore.ops.Qr", _f("Qr"), shapes=[T((4, 3), values=TALL)], kwargs=[{}, {"full_matrices": True}], grad=False),
    op("mindspore.ops.geqrf", _f("geqrf"), shapes=[T((4, 3), values=TALL), T((3, 4), values=WIDE)], dtypes=F64,
       grad=False),
    op("mindspore.ops.Geqrf", _f("Geqrf"), shapes=[T((4, 3), values=TALL)], grad=False),
    op("mindspore.ops.svd", lambda ms, x, **kw: ms.ops.svd(x, **kw), shapes=[T((4, 3), values=TALL)], dtypes=F64,
       kwargs=[{"compute_uv": False}], grad=False),
    op("mindspore.ops.Svd", lambda ms, x, **kw: _abs_vectors(ms, *ms.ops.Svd(**kw)(x)),
       shapes=[T((4, 3), values=TALL), T((3, 4), values=WIDE)], kwargs=[{}, {"full_matrices": True}], grad=False),
    op("mindspore.ops.pinv", _f("pinv"), shapes=[T((4, 3), values=TALL), T((3, 2), values=[[1.0, 2.0], [2.0, 4.0],
                                                                                         [0.0, 1.0]])],
       dtypes=F64, grad=False),
    # Ormqr has no CPU kernel in MindSpore 2.10 (GPU only): ops.orgqr's full Q times other answers
    op("mindspore.ops.orgqr", _f("orgqr"), shapes=[[T((4, 3), values=TALL), T((2,), values=[1.2, 0.5])]], dtypes=F64,
       grad=False),
    op("mindspore.ops.Orgqr", _f("Orgqr"), shapes=[[T((4, 3), values=TALL), T((3,), values=[1.2, 0.5, 1.9])]],
       grad=False),
    op("mindspore.ops.ormqr", _f("ormqr"), shapes=[[T((3, 2), values=[[1.0, 2.0], [0.5, -1.0], [0.3, 0.7]]),
                                                   T((2,), values=[1.2, 0.5]), T((3, 2), values=RHS32)]],
       grad=False, oracle=_ormqr_oracle, note=ORMQR_NOTE),
    op("mindspore.ops.Ormqr", _f("Ormqr"), shapes=[[T((2, 2), values=[[1.0, 2.0], [0.5, -1.0]]),
                                                   T((2,), values=[1.2, 0.5]), T((3, 2), values=RHS32)]],
       kwargs=[{"left": False}], grad=False, oracle=_ormqr_oracle, note=ORMQR_NOTE),
]

# special functions: (function, Primitive, input domain)
UNARY_SPECIAL = [
    ("lgamma", "Lgamma", POSITIVE), ("digamma", "Digamma", POSITIVE),
    ("bessel_i0", "BesselI0", None), ("bessel_i0e", "BesselI0e", None), ("bessel_i1", "BesselI1", None),
    ("bessel_i1e", "BesselI1e", None), ("bessel_j0", "BesselJ0", None), ("bessel_j1", "BesselJ1", None),
    ("bessel_y0", "BesselY0", POSITIVE), ("bessel_y1", "BesselY1", POSITIVE), ("bessel_k0", "BesselK0", POSITIVE),
    ("bessel_k0e", "BesselK0e", POSITIVE), ("bessel_k1", "BesselK1", POSITIVE), ("bessel_k1e", "BesselK1e", POSITIVE),
]
# MindSpore 2.10 CPU's digamma is good to ~5e-7 in float64 and ~5e-6 in float32 (relative, near its zero at
# 1.46; scipy's psi as the judge); ours to ~1e-15 before rounding
DIGAMMA_TOL = (2e-5, 1e-6)
for function, primitive, domain in UNARY_SPECIAL:
    options = {"tol": DIGAMMA_TOL} if function == "digamma" else {}
    SPECS += [
        op(f"mindspore.ops.{function}", _f(function), shapes=[T((2, 3), **(domain or {})), T((4,), low=5.0, high=30.0)],
           dtypes=F64, errors=[([T((2,), dtype="int64")], {})], **options),
        op(f"mindspore.ops.{primitive}", _f(primitive), shapes=[T((2, 3), **(domain or {}))]),
    ]

SPECS += [
    op("mindspore.ops.lgamma", _f("lgamma"), shapes=[T((5,), values=[-2.5, -0.5, 0.5, 1.0, 10.5])]),
    op("mindspore.ops.digamma", _f("digamma"), shapes=[T((5,), values=[-2.5, -0.5, 0.5, 1.0, 10.5])]),
    op("mindspore.ops.i0", _f("i0"), shapes=[(2, 3)], dtypes=F64),
    op("mindspore.ops.polygamma", _f("polygamma"),
       shapes=[[T((), dtype="int64", values=1), T((2, 3), **POSITIVE)], [T((), dtype="int64", values=0), T((3,), **POSITIVE)],
               [T((), dtype="int64", values=3), T((3,), **POSITIVE)]], dtypes=F64,
       errors=[([Py(1), T((3,))], {}), ([T((2,), dtype="int64", values=[1, 2]), T((2,))], {})]),
    op("mindspore.ops.Polygamma", _f("Polygamma"), shapes=[[T((), dtype="int64", values=2), T((2, 3), **POSITIVE)]]),
    # the a gradient of igamma/igammac (MindSpore's IgammaGradA) is not served: values only
    op("mindspore.ops.igamma", _f("igamma"), shapes=[[T((2, 3), **POSITIVE), T((2, 3), **POSITIVE)],
                                                   [T((2, 1), **POSITIVE), T((3,), low=0.1, high=9.0)]],
       dtypes=F64, grad=False, errors=[([T((2,)), T((2,), dtype="float64")], {})]),
    op("mindspore.ops.Igamma", _f("Igamma"), shapes=[[T((2, 3), **POSITIVE), T((2, 3), **POSITIVE)]], grad=False),
    op("mindspore.ops.igammac", _f("igammac"), shapes=[[T((2, 3), **POSITIVE), T((2, 3), **POSITIVE)]], dtypes=F64,
       grad=False),
    op("mindspore.ops.Igammac", _f("Igammac"), shapes=[[T((2, 3), **POSITIVE), T((2, 3), **POSITIVE)]], grad=False),
    op("mindspore.ops.zeta", _f("zeta"), shapes=[[T((2, 3), low=1.5, high=5.0), T((2, 3), **POSITIVE)],
                                               [Py(2.0), T((3,), **POSITIVE)]], dtypes=F64, grad=False),
    op("mindspore.ops.Zeta", _f("Zeta"), shapes=[[T((2, 3), low=1.5, high=5.0), T((2, 3), **POSITIVE)]], grad=False),
    op("mindspore.ops.Betainc", _f("Betainc"), shapes=[[T((2, 3), **POSITIVE), T((2, 3), **POSITIVE),
                                                       T((2, 3), low=0.05, high=0.95)]], dtypes=F64, grad=False),
]

# Tensor methods
SPECS += [
    op("mindspore.Tensor.det", _m("det"), shapes=[MAT]),
    op("mindspore.Tensor.matrix_determinant", _m("matrix_determinant"), shapes=[BATCH]),
    op("mindspore.Tensor.slogdet", _m("slogdet"), shapes=[MAT]),
    op("mindspore.Tensor.log_matrix_determinant", _m("log_matrix_determinant"), shapes=[MAT]),
    op("mindspore.Tensor.logdet", _m("logdet"), shapes=[SPD]),
    op("mindspore.Tensor.inverse", _m("inverse"), shapes=[MAT]),
    op("mindspore.Tensor.matrix_power", _m("matrix_power"), shapes=[[MAT, Py(2)]]),
    op("mindspore.Tensor.cholesky", _m("cholesky"), shapes=[SPD], grad=False),
    op("mindspore.Tensor.cholesky_inverse", _m("cholesky_inverse"), shapes=[T((3, 3), values=LOWER3)], grad=False),
    op("mindspore.Tensor.cholesky_solve", _m("cholesky_solve"), shapes=[[T((3, 2), values=RHS32),
                                                                       T((3, 3), values=LOWER3)]], grad=False),
    op("mindspore.Tensor.qr", _m("qr"), shapes=[T((4, 3), values=TALL)], grad=False),
    op("mindspore.Tensor.geqrf", _m("geqrf"), shapes=[T((4, 3), values=TALL)], grad=False),
    op("mindspore.Tensor.svd", lambda ms, x: x.svd(compute_uv=False), shapes=[T((4, 3), values=TALL)], grad=False),
    op("mindspore.Tensor.orgqr", _m("orgqr"), shapes=[[T((4, 3), values=TALL), T((2,), values=[1.2, 0.5])]],
       grad=False),
    op("mindspore.Tensor.ormqr", _m("ormqr"), shapes=[[T((3, 2), values=[[1.0, 2.0], [0.5, -1.0], [0.3, 0.7]]),
                                                      T((2,), values=[1.2, 0.5]), T((3, 2), values=RHS32)]],
       grad=False, oracle=_ormqr_oracle, note=ORMQR_NOTE),
    op("mindspore.Tensor.lgamma", _m("lgamma"), shapes=[T((2, 3), **POSITIVE)]),
    op("mindspore.Tensor.digamma", _m("digamma"), shapes=[T((2, 3), **POSITIVE)]),
    op("mindspore.Tensor.i0", _m("i0"), shapes=[(2, 3)]),
    op("mindspore.Tensor.igamma", _m("igamma"), shapes=[[T((2, 3), **POSITIVE), T((2, 3), **POSITIVE)]], grad=False),
    op("mindspore.Tensor.igammac", _m("igammac"), shapes=[[T((2, 3), **POSITIVE), T((2, 3), **POSITIVE)]],
       grad=False),
]

# nn cells (MatDet and MatInverse: MindSpore 2.10's CPU build cannot run them, their Cholesky kernels are GPU
# ones: a Cell of ops.det / ops.inverse answers)
SPECS += [
    cell("mindspore.nn.LGamma", lambda ms: ms.nn.LGamma(), shapes=[T((2, 3), **POSITIVE)]),
    cell("mindspore.nn.DiGamma", lambda ms: ms.nn.DiGamma(), shapes=[T((2, 3), **POSITIVE)]),
    cell("mindspore.nn.IGamma", lambda ms: ms.nn.IGamma(), shapes=[[T((2, 3), **POSITIVE), T((2, 3), **POSITIVE)]],
         grad=False),
    cell("mindspore.nn.LBeta", lambda ms: ms.nn.LBeta(), shapes=[[T((2, 3), **POSITIVE), T((2, 3), **POSITIVE)]],
         grad=False),
    cell("mindspore.nn.MatDet", lambda ms: ms.nn.MatDet(), shapes=[SPD], grad=False,
         oracle=_cell_of(lambda ms, x: ms.ops.det(x)),
         note="oracle: a Cell of ops.det (nn.MatDet's Cholesky kernels are GPU ones in MindSpore 2.10)"),
    cell("mindspore.nn.MatInverse", lambda ms: ms.nn.MatInverse(), shapes=[SPD], grad=False,
         oracle=_cell_of(lambda ms, x: ms.ops.inverse(x)),
         note="oracle: a Cell of ops.inverse (nn.MatInverse's Cholesky kernels are GPU ones in MindSpore 2.10)"),
]

# mint (MindSpore 2.10's CPU build has no kernel for these: "The kernel ... unregistered"; the ops twins answer)
SPECS += [
    op("mindspore.mint.inverse", lambda ms, x: ms.mint.inverse(x), shapes=[MAT], grad=False,
       oracle=lambda ms, x: ms.ops.inverse(x), note=_no_cpu("ops.inverse", "MatrixInverseExt")),
    op("mindspore.mint.linalg.qr", lambda ms, x, **kw: ms.mint.linalg.qr(x, **kw), shapes=[T((4, 3), values=TALL)],
       grad=False, oracle=lambda ms, x, **kw: ms.ops.qr(x, **kw), note=_no_cpu("ops.qr", "LinalgQr")),
]
