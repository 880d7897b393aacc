"""Specs of ops primitives that had none (issue 21, part P, continued from ``sampled_prims4``): pools and
convolutions in 3-D, the Apply* optimizer updates, element-wise math, losses, the Scatter*/ScatterNd*/
TensorScatter* families, sparse tensors and segment reductions."""
from __future__ import annotations

from .core import Py, T, op, ops_call as _f
from .fused3 import _sparse as _held
from .sampled_prims4 import IDX, M23, POS, STATE, _s

FI = ("float32", "int32")
VOL = (1, 2, 2, 3, 3)
PROBS = T((3, 4), low=0.05, high=0.95)


def _scatter(name: str, nd: bool = False):
    """A Scatter* (on a Parameter) or TensorScatter* spec: rows 0 and 2 of a (3, 2) updated (ScatterNd*
    and TensorScatter* take [[0], [2]]), float32 and int32, one shape error."""
    if name.startswith("Tensor"):
        fn, options = _f(name), {"grad": False}
    else:
        fn, options = _held(name, 1, 0), STATE
    idx = IDX([[0], [2]]) if nd else IDX([0, 2])
    up = T((2, 2), low=1, high=3)
    return op(f"mindspore.ops.{name}", fn, shapes=[[T((3, 2), low=1, high=4), idx, up]], dtypes=FI,
              errors=[([(3, 2), idx, (2, 3)], {})], **options)


def _segment(name: str):
    return op(f"mindspore.ops.{name}", lambda ms, x, s, n: getattr(ms.ops, name)()(x, s, n),
              shapes=[[(4, 2), IDX([0, 2, 0, 1]), Py(3)]], dtypes=FI, grad=False,
              errors=[([(4, 2), IDX([0, 1]), Py(3)], {})])


SPECS = [
    op("mindspore.ops.AdaptiveAvgPool3D", _f("AdaptiveAvgPool3D"), shapes=[VOL], kwargs=[{"output_size": (1, 2, 2)}],
       errors=[(VOL, {"output_size": (1, 2)})]),
    op("mindspore.ops.Addcdiv", _f("Addcdiv"), shapes=[[M23, M23, T(M23, low=0.5, high=2.0), _s(0.5)]],
       errors=[([M23, M23, (4,), _s(0.5)], {})]),
    op("mindspore.ops.ApplyAdaMax", _held("ApplyAdaMax", 3, 0),
       shapes=[[M23, M23, POS, _s(0.9), _s(0.01), _s(0.9), _s(0.999), _s(1e-8), M23]], **STATE),
    op("mindspore.ops.ApplyAdadelta", _held("ApplyAdadelta", 3, 0),
       shapes=[[M23, POS, POS, _s(0.5), _s(0.9), _s(1e-6), M23]], **STATE),
    # MindSpore 2.10 CPU ignores update_slots=False (accum is updated anyway): the default only
    op("mindspore.ops.ApplyAdagrad", _held("ApplyAdagrad", 2, 0), shapes=[[M23, POS, _s(0.01), M23]], **STATE),
    op("mindspore.ops.ApplyCenteredRMSProp", _held("ApplyCenteredRMSProp", 4, 0),
       shapes=[[M23, T(M23, low=-0.1, high=0.1), POS, M23, M23, _s(0.01), _s(0.9), _s(0.9), _s(1e-6)]], **STATE),
    # linear' > 0: MindSpore 2.10's CPU ApplyFtrl takes sign(linear') as +1, the emulator follows the docs
    op("mindspore.ops.ApplyFtrl", _held("ApplyFtrl", 3, 0),
       shapes=[[T(M23, low=-1.0, high=-0.1), POS, T(M23, low=1.0, high=2.0), POS, _s(0.01), _s(0.001), _s(0.001),
                _s(-0.5)]], **STATE),
    op("mindspore.ops.ApplyProximalAdagrad", _held("ApplyProximalAdagrad", 2, 0),
       shapes=[[M23, POS, _s(0.01), _s(0.001), _s(0.001), M23]], **STATE),
    op("mindspore.ops.ApplyRMSProp", _held("ApplyRMSProp", 3, 0),
       shapes=[[M23, POS, M23, _s(0.01), M23, _s(0.9), _s(0.9), _s(1e-6)]], **STATE),
    op("mindspore.ops.ApproximateEqual", _f("ApproximateEqual"), shapes=[[M23, M23]],
       kwargs=[{"tolerance": 2.0}, {}], grad=False, errors=[([M23, M23], {"tolerance": "1"})]),
    op("mindspore.ops.AssignSub", _held("AssignSub", 1, 0), shapes=[[M23, M23]], dtypes=FI, **STATE,
       errors=[([M23, (3, 4)], {})]),
    op("mindspore.ops.CTCLossV2", _f("CTCLossV2"),
       shapes=[[T((4, 2, 3), low=-3.0, high=-0.1), IDX([[1, 2], [1, 0]]), IDX([4, 3]), IDX([2, 1])]],
       kwargs=[{}, {"zero_infinity": True}], grad=False,
       errors=[([T((4, 2, 3)), IDX([[1, 2], [1, 0]]), IDX([4, 3]), IDX([2, 1])], {"blank": 3})]),
    op("mindspore.ops.Cdist", _f("Cdist"), shapes=[[(3, 2), (4, 2)], [(2, 3, 2), (2, 2, 2)]],
       kwargs=[{}, {"p": 1.0}], errors=[([(3, 2), (4, 3)], {})]),
    op("mindspore.ops.Conv3D", _f("Conv3D"), shapes=[[VOL, (2, 2, 2, 2, 2)]],
       kwargs=[{"out_channel": 2, "kernel_size": 2}, {"out_channel": 2, "kernel_size": 2, "pad_mode": "same"}],
       errors=[([VOL, (2, 3, 2, 2, 2)], {"out_channel": 2, "kernel_size": 2})]),
    op("mindspore.ops.Conv3DTranspose", _f("Conv3DTranspose"), shapes=[[(1, 2, 2, 2, 2), (2, 2, 2, 2, 2)]],
       kwargs=[{"in_channel": 2, "out_channel": 2, "kernel_size": 2}],
       errors=[([(1, 2, 2, 2, 2), (2, 2, 2, 2, 2)], {"in_channel": 2, "out_channel": 2, "kernel_size": 2,
                                                     "pad_mode": "bad"})]),
    op("mindspore.ops.Cross", _f("Cross"), shapes=[[M23, M23]], dtypes=FI, kwargs=[{}, {"dim": 1}],
       errors=[([(2, 2), (2, 2)], {})]),
    op("mindspore.ops.CumulativeLogsumexp", lambda ms, x, axis, **kw: ms.ops.CumulativeLogsumexp(**kw)(x, axis),
       shapes=[[M23, T(values=1, dtype="int32")]], kwargs=[{}, {"exclusive": True, "reverse": True}],
       errors=[([M23, T(values=2, dtype="int32")], {})]),
    op("mindspore.ops.Diag", _f("Diag"), shapes=[(3,), M23], dtypes=FI, errors=[(T(()), {})]),
    op("mindspore.ops.EqualCount", _f("EqualCount"),
       shapes=[[T(values=[1, 2, 3, 4], dtype="int32"), T(values=[1, 0, 3, 4], dtype="int32")]], grad=False,
       errors=[([(4,), (3,)], {})]),
    op("mindspore.ops.Erfinv", _f("Erfinv"), shapes=[T((2, 3), low=-0.9, high=0.9)], dtypes=("float32", "float16"),
       errors=[(T(values=[1, 2], dtype="int32"), {})]),
    op("mindspore.ops.Expand", _f("Expand"), shapes=[[(3, 1), IDX([3, 4])], [(3,), IDX([2, 3])]], dtypes=FI,
       errors=[([(3, 2), IDX([3, 4])], {})]),
    op("mindspore.ops.Fmax", _f("Fmax"), shapes=[[M23, M23], [(3,), M23]], dtypes=FI, errors=[([M23, (4,)], {})]),
    op("mindspore.ops.GLU", _f("GLU"), shapes=[(2, 4)], kwargs=[{}, {"axis": 0}], errors=[(M23, {})]),
    op("mindspore.ops.Ger", _f("Ger"), shapes=[[(3,), (2,)]], errors=[([M23, (2,)], {})]),
    op("mindspore.ops.Invert", _f("Invert"), shapes=[T(M23, "int32"), T(M23, "int16")], grad=False,
       errors=[(M23, {})]),
    op("mindspore.ops.IsClose", _f("IsClose"), shapes=[[M23, M23], [T(values=[1.0, float("nan")]),
                                                                    T(values=[1.0, float("nan")])]],
       kwargs=[{"atol": 2.0}, {"equal_nan": True}], grad=False),
    op("mindspore.ops.Lerp", _f("Lerp"), shapes=[[M23, M23, _s(0.3)], [M23, M23, T(M23, low=0.0, high=1.0)]],
       errors=[([M23, (4,), _s(0.3)], {})]),
    op("mindspore.ops.Logit", _f("Logit"), shapes=[PROBS], kwargs=[{}, {"eps": 0.1}], errors=[(PROBS, {"eps": 1})]),
    op("mindspore.ops.MaskedFill", _f("MaskedFill"), shapes=[[M23, T(M23, "bool"), _s(9.0)]],
       errors=[([M23, T((4,), "bool"), _s(9.0)], {})]),
    op("mindspore.ops.MultiMarginLoss", _f("MultiMarginLoss"), shapes=[[(3, 4), IDX([1, 0, 3], "int64")]],
       kwargs=[{}, {"p": 2, "margin": 0.5, "reduction": "none"}], errors=[([(3, 4), IDX([1, 0, 3], "int64")],
                                                                           {"p": 3})]),
    op("mindspore.ops.NanToNum", _f("NanToNum"), shapes=[T(values=[1.0, float("nan"), float("inf"), -float("inf")])],
       kwargs=[{}, {"nan": 1.0, "posinf": 9.0, "neginf": -9.0}], errors=[(M23, {"nan": "a"})]),
    op("mindspore.ops.NonZero", _f("NonZero"), shapes=[T(values=[[1, 0, 2], [0, 0, 3]], dtype="int32")],
       grad=False, graph=False, errors=[(T(()), {})]),
    op("mindspore.ops.Rank", lambda ms, x: ms.ops.Rank()(x), shapes=[M23, ()], grad=False, graph=False),
    _scatter("ScatterDiv"), _scatter("ScatterMax"), _scatter("ScatterMin"), _scatter("ScatterMul"),
    _scatter("ScatterNdAdd", True), _scatter("ScatterNdDiv", True), _scatter("ScatterNdMax", True),
    _scatter("ScatterNdMin", True), _scatter("ScatterNdMul", True), _scatter("ScatterNdSub", True),
    _scatter("ScatterSub"),
    op("mindspore.ops.SpaceToDepth", _f("SpaceToDepth"), shapes=[(1, 2, 4, 4)], kwargs=[{"block_size": 2}],
       errors=[((1, 2, 3, 3), {"block_size": 2})]),
    op("mindspore.ops.SparseSlice", _f("SparseSlice"),
       shapes=[[IDX([[0, 1], [1, 2], [2, 0]], "int64"), T(values=[1.0, 2.0, 3.0]), IDX([3, 4], "int64"),
                IDX([1, 0], "int64"), IDX([2, 3], "int64")]], grad=False, graph=False),
    op("mindspore.ops.SparseTensorDenseAdd", _f("SparseTensorDenseAdd"),
       shapes=[[IDX([[0, 1], [1, 2]]), T(values=[1.0, 2.0]), IDX([2, 3]), M23]], grad=False,
       errors=[([IDX([[0, 1], [1, 2]]), T(values=[1.0, 2.0]), IDX([2, 3]), (3, 2)], {})]),
    op("mindspore.ops.SparseTensorDenseMatmul", _f("SparseTensorDenseMatmul"),
       shapes=[[IDX([[0, 1], [1, 2]]), T(values=[1.0, 2.0]), Py((2, 3)), (3, 2)]], grad=False,
       errors=[([IDX([[0, 1], [1, 2]]), T(values=[1.0, 2.0]), Py((2, 3)), (3,)], {})]),
    op("mindspore.ops.SparseToDense", _f("SparseToDense"),
       shapes=[[IDX([[0, 1], [1, 2]]), T(values=[1.0, 2.0]), Py((2, 3))]], grad=False,
       errors=[([IDX([[0, 1], [1, 2]]), T(values=[1.0, 2.0, 3.0]), Py((2, 3))], {})]),
    op("mindspore.ops.SquareSumAll", _f("SquareSumAll"), shapes=[[M23, M23]], errors=[([M23, (3, 2)], {})]),
    _scatter("TensorScatterAdd", True), _scatter("TensorScatterDiv", True),
    op("mindspore.ops.TensorScatterElements", _f("TensorScatterElements"),
       shapes=[[(3, 2), IDX([[0, 1], [1, 0]]), (2, 2)]], dtypes=FI, grad=False,
       kwargs=[{}, {"axis": 1, "reduction": "add"}], errors=[([(3, 2), IDX([[0, 1], [1, 0]]), (2, 2)], {"axis": 2})]),
    _scatter("TensorScatterMax", True), _scatter("TensorScatterMin", True), _scatter("TensorScatterMul", True),
    _scatter("TensorScatterSub", True),
    op("mindspore.ops.Trace", _f("Trace"), shapes=[(3, 3), (2, 4)], dtypes=FI, errors=[((3,), {})]),
    op("mindspore.ops.UniqueConsecutive", _f("UniqueConsecutive"),
       shapes=[T(values=[1, 1, 2, 2, 2, 3, 1], dtype="int32")],
       kwargs=[{}, {"return_inverse": True, "return_counts": True}], grad=False, graph=False),
    _segment("UnsortedSegmentMax"), _segment("UnsortedSegmentMin"), _segment("UnsortedSegmentProd"),
]
