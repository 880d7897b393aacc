"""Specs of the round-3 breadth family ``linalg3``: LU solve/unpack, median and quantile statistics,
running extrema primitives, msort, mvlgamma, nextafter, pdist, cosine_similarity.

LU inputs are a fixed packed factorisation with a real row swap (scipy's lu_factor of a 3 x 3 matrix,
pivots 1-based). Quantile is not served by MindSpore's CPU kernels (its samples there are errors), so
only its argument errors are sampled here; tests/test_linalg3.py checks its values against numpy.
"""
from __future__ import annotations

from .core import method_call as _m, ops_call as _f, Py, T, op

# scipy.linalg.lu_factor([[1, .2, 3], [2, -1, .5], [.3, 1.5, -.7]]): rows swapped at steps 0 and 1
LU3 = [[2.0, -1.0, 0.5], [0.15, 1.65, -0.775], [0.5, 0.42424242424242425, 3.0787878787878786]]
PIV3 = [2, 3, 3]
RHS32 = [[1.0, -2.0], [0.5, 3.0], [-1.0, 0.25]]
LU = T((3, 3), values=LU3)
PIV = T((3,), dtype="int32", values=PIV3)
WITH_NAN = T((2, 3), values=[[3.0, float("nan"), 2.0], [0.0, 5.0, -1.0]])
ROWS = T((2, 4), values=[[3.0, 1.0, 2.0, 7.0], [0.0, 5.0, -1.0, 4.0]])
POINTS = T((4, 3), values=[[0.0, 1.0, 2.0], [3.0, -4.0, 5.0], [6.0, 7.5, -8.0], [0.5, 0.25, 1.0]])
F64 = ("float32", "float64")
TALL_A = T((3, 2), values=[[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
TALL_B = T((3, 2), values=[[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]])
WIDE = T((2, 3), values=[[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])




SPECS = [
    # LU
    # float64 is not sampled: MindSpore 2.10 CPU's LuSolve solves float64 in float32 precision
    op("mindspore.ops.lu_solve", _f("lu_solve"), shapes=[[T((3, 2), values=RHS32), LU, PIV]], grad=False),
    op("mindspore.ops.LuSolve", _f("LuSolve"), shapes=[[T((3, 2), values=RHS32), LU, PIV]], grad=False,
       errors=[([T((3, 2), values=RHS32), LU, T((3,), dtype="int64", values=PIV3)], {})]),
    op("mindspore.Tensor.lu_solve", _m("lu_solve"), shapes=[[T((3, 2), values=RHS32), LU, PIV]], grad=False),
    op("mindspore.ops.lu_unpack", _f("lu_unpack"), shapes=[[LU, PIV]], dtypes=F64,
       kwargs=[{}, {"unpack_data": False}, {"unpack_pivots": False}], grad=False),
    op("mindspore.ops.LuUnpack", _f("LuUnpack"), shapes=[[LU, PIV]], grad=False),
    # statistics
    op("mindspore.ops.Median", _f("Median"), shapes=[ROWS, WITH_NAN],
       kwargs=[{"axis": 1}, {"axis": 0, "keep_dims": True}, {"global_median": True}, {"axis": 1, "ignore_nan": True}],
       grad=False),
    op("mindspore.ops.nanmedian", _f("nanmedian"), shapes=[WITH_NAN],
       kwargs=[{"axis": 1}, {"axis": 0, "keepdims": True}],
       grad=False),
    op("mindspore.Tensor.nanmedian", _m("nanmedian"), shapes=[WITH_NAN], grad=False),
    op("mindspore.ops.quantile", _f("quantile"), errors=[([ROWS], {"q": 1.5}), ([ROWS], {"q": "a"})]),
    op("mindspore.ops.nanquantile", _f("nanquantile"), errors=[([ROWS], {"q": -0.5})]),
    op("mindspore.ops.Quantile", lambda ms, x, q: ms.ops.Quantile()(x, q),
       errors=[([ROWS, T((1,), dtype="float64", values=[0.5])], {})]),
    op("mindspore.Tensor.quantile", _m("quantile"), errors=[([ROWS], {"q": 2.0})]),
    op("mindspore.Tensor.nanquantile", _m("nanquantile"), errors=[([ROWS], {"q": 2.0})]),
    # running extrema, sorting
    op("mindspore.ops.Cummax", _f("Cummax"), shapes=[ROWS], kwargs=[{"axis": 1}, {"axis": 0}], grad=False),
    op("mindspore.ops.Cummin", _f("Cummin"), shapes=[ROWS], kwargs=[{"axis": 1}], grad=False),
    op("mindspore.ops.msort", _f("msort"), shapes=[ROWS, (3, 2)], grad=False),
    op("mindspore.Tensor.msort", _m("msort"), shapes=[ROWS], grad=False),
    # special functions
    op("mindspore.ops.mvlgamma", _f("mvlgamma"), shapes=[T((2, 3), low=1.5, high=4.0)], dtypes=F64,
       kwargs=[{"p": 3}, {"p": 1}], errors=[([T((2,), values=[0.5, 4.0])], {"p": 3})]),
    op("mindspore.ops.Mvlgamma", _f("Mvlgamma"), shapes=[T((3,), low=1.5, high=4.0)], kwargs=[{"p": 2}],
       errors=[([T((2,), dtype="int32", values=[3, 4])], {"p": 2})]),
    op("mindspore.Tensor.mvlgamma", _m("mvlgamma"), shapes=[T((3,), low=1.5, high=4.0)], kwargs=[{"p": 2}]),
    # no broadcast sample: MindSpore 2.10 CPU's NextAfter fills only the first row of a broadcast result
    op("mindspore.ops.nextafter", _f("nextafter"), shapes=[[(2, 3), (2, 3)]], dtypes=F64, grad=False,
       errors=[([T((2,), dtype="int32"), T((2,), dtype="int32")], {})]),
    op("mindspore.ops.NextAfter", _f("NextAfter"), shapes=[[(3,), (3,)]], grad=False),
    op("mindspore.Tensor.nextafter", _m("nextafter"), shapes=[[(3,), (3,)]], grad=False),
    # distances
    op("mindspore.ops.pdist", _f("pdist"), shapes=[POINTS], kwargs=[{}, {"p": 1.0}, {"p": float("inf")}, {"p": 0.0}],
       errors=[([T((2, 2, 3))], {})]),
    op("mindspore.ops.Pdist", _f("Pdist"), shapes=[POINTS], kwargs=[{"p": 3.0}]),
    op("mindspore.ops.cosine_similarity", _f("cosine_similarity"), shapes=[[(2, 3), (2, 3)]],
       kwargs=[{}, {"dim": 0}]),
    # least squares
    op("mindspore.ops.lstsq", _f("lstsq"), shapes=[[TALL_B, TALL_A], [WIDE, T((2,), values=[1.0, 2.0])]], grad=False,
       errors=[([T((3,), values=[1.0, 2.0, 3.0]), TALL_A], {})]),
    op("mindspore.ops.Lstsq", _f("Lstsq"), shapes=[[TALL_A, TALL_B]], grad=False,
       errors=[([TALL_A, TALL_B], {"l2_regularizer": 0.5})]),
    op("mindspore.Tensor.lstsq", _m("lstsq"), shapes=[[TALL_B, TALL_A]], grad=False),
    op("mindspore.ops.MatrixSolveLs", _f("MatrixSolveLs"), grad=False,
       shapes=[[TALL_A, TALL_B, T((), dtype="float64", values=0.5)],
               [TALL_A, TALL_B, T((), dtype="float64", values=0.0)],
               [WIDE, T((2, 1), values=[[1.0], [2.0]]), T((), dtype="float64", values=0.25)]]),
    # diagonals
    op("mindspore.ops.matrix_diag", _f("matrix_diag"), shapes=[(2, 3)],
       kwargs=[{}, {"k": 1}, {"k": -1, "num_rows": 4, "num_cols": 3, "padding_value": 9.0}],
       errors=[([(2,)], {"k": 1, "num_rows": 3, "num_cols": 4})]),
    op("mindspore.ops.matrix_diag_part", lambda ms, x, **kw: ms.ops.matrix_diag_part(
        x, ms.Tensor(kw.pop("k"), ms.int32), ms.Tensor(9.0, ms.float32), **kw), shapes=[(3, 4), (2, 4, 3)],
       kwargs=[{"k": [-1, 1]}, {"k": 0}, {"k": [-2, 1], "align": "LEFT_RIGHT"}, {"k": [0, 2], "align": "RIGHT_RIGHT"}],
       errors=[([(3, 4)], {"k": [-1, 1], "align": "UP"})]),
    op("mindspore.ops.matrix_set_diag", _f("matrix_set_diag"), shapes=[[(3, 4), (3,)], [(2, 3, 3), (2, 3)]],
       errors=[([(3, 4), (4,)], {})]),
    op("mindspore.ops.MatrixDiagV3", lambda ms, x, k: ms.ops.MatrixDiagV3(align="LEFT_LEFT")(
        x, ms.Tensor(k, ms.int32), ms.Tensor(-1, ms.int32), ms.Tensor(-1, ms.int32), ms.Tensor(0.5, ms.float32)),
       shapes=[[(3, 3), Py([-1, 1])], [(2,), Py(1)]]),
    op("mindspore.ops.MatrixDiagPartV3", lambda ms, x, k: ms.ops.MatrixDiagPartV3()(
        x, ms.Tensor(k, ms.int32), ms.Tensor(0.0, ms.float32)), shapes=[[(4, 3), Py([-2, 0])]]),
    op("mindspore.ops.MatrixSetDiagV3", lambda ms, x, d, k: ms.ops.MatrixSetDiagV3(align="LEFT_RIGHT")(
        x, d, ms.Tensor(k, ms.int32)), shapes=[[(3, 4), (3, 3), Py([-1, 1])]]),
    # sorting, norms, products, histograms
    op("mindspore.ops.NthElement", lambda ms, x, n, **kw: ms.ops.NthElement(**kw)(x, ms.Tensor(n, ms.int32)),
       shapes=[[ROWS, Py(1)], [(2, 2, 3), Py(2)]], kwargs=[{}, {"reverse": True}], grad=False),
    op("mindspore.ops.NuclearNorm", _f("NuclearNorm"), shapes=[ROWS], grad=False,
       kwargs=[{}, {"dim": [0, 1], "keepdim": True}], errors=[([(2, 3, 2)], {})]),
    op("mindspore.ops.NuclearNorm", _f("NuclearNorm"), shapes=[(2, 3, 2)], grad=False, kwargs=[{"dim": [1, 2]}]),
    op("mindspore.ops.TridiagonalMatMul", _f("TridiagonalMatMul"), grad=False,
       shapes=[[(1, 3), (1, 3), (1, 3), (3, 2)], [(2, 1, 4), (2, 1, 4), (2, 1, 4), (2, 4, 3)]]),
    op("mindspore.ops.HistogramFixedWidth", lambda ms, x, r, **kw: ms.ops.HistogramFixedWidth(**kw)(x, r),
       errors=[([ROWS, T((2,), values=[0.0, 5.0])], {"nbins": 0})]),
    # MindSpore 2.10 CPU raises AttributeError here (its Tensor.triangular_solve has no function behind
    # it): the sample is a known mismatch, tests/test_linalg3.py checks the values against numpy
    op("mindspore.Tensor.triangular_solve", _m("triangular_solve"), grad=False,
       shapes=[[T((2, 2), values=[[1.0, 2.0], [3.0, 4.0]]), T((2, 2), values=[[2.0, 1.0], [0.0, 4.0]])]]),
]
