"""Specs of ops primitives that had none (issue 21, part P; family ``sampled_prims4``, the rest in
``sampled_prims4b``): detection boxes, assignments, reversals and index updates, in the order real code
uses them. Primitives that update a Parameter (Assign*, Scatter*, Apply*, Adam*) wrap their first inputs
in Parameters and return the Parameters after the update (PyNative only, as a Parameter is made per
call). Not sampled (no meaningful MindSpore CPU sample): the collectives (AllReduce, AllGather,
ReduceScatter, AlltoAll, Broadcast, Send, Receive need a communicator), Print (its answer is stdout), the
Primitive base classes, ScalarToArray (2.10 cannot run it: "no attr __infer__"), and the Ascend/GPU
kernels MindSpore 2.10 CPU refuses ("Unsupported op" / "unregistered"): FloatStatus, NPUAllocFloatStatus,
NPUClearFloatStatus, NPUGetFloatStatus, Einsum, AccumulateNV2, EuclideanNorm, Fills, Fmin,
MultilabelMarginLoss, SoftMarginLoss, SparseGatherV2, TripletMarginLoss."""
from __future__ import annotations

from .core import Py, T, op, ops_call as _f
from .fused3 import _sparse as _held

M23 = (2, 3)
IMG = (1, 2, 4, 4)
POS = T(M23, low=0.1, high=1.0)
STATE = dict(grad=False, graph=False)


def IDX(values, dtype: str = "int32") -> T:
    return T(values=values, dtype=dtype)


def _s(value: float) -> T:
    """A 0-d float32 tensor (a learning rate or a decay as a Tensor)."""
    return T(values=value, dtype="float32")


# boxes as (x1, y1, x2, y2), overlapping; NMS boxes with a score column
BOXES = T(values=[[0.0, 0.0, 4.0, 4.0], [1.0, 1.0, 5.0, 6.0], [2.0, 0.5, 3.0, 7.0]])
GT = T(values=[[0.5, 0.5, 4.0, 3.0], [1.0, 2.0, 6.0, 6.0], [0.0, 0.0, 2.0, 2.0]])
# scores sorted descending: MindSpore's CPU NMSWithMask sorts the boxes, Ascend's (the emulator's) keeps
# their order, so only sorted input has one answer
SCORED = T(values=[[5.5, 5.0, 8.0, 8.5, 0.95], [0.0, 0.0, 4.0, 4.0, 0.9], [0.5, 0.5, 4.0, 4.0, 0.8],
                   [5.0, 5.0, 8.0, 8.0, 0.7]])
ROIS = T(values=[[0.0, 0.0, 0.0, 3.0, 3.0], [0.0, 1.0, 0.5, 2.5, 3.5]])


def _eye(ms, **kw):
    return ms.ops.Eye()(kw["n"], kw["m"], getattr(ms, kw["dtype"]))


def _scalar_to_tensor(ms, value, **kw):
    return ms.ops.ScalarToTensor()(value, getattr(ms, kw["dtype"])) if kw else ms.ops.ScalarToTensor()(value)


SPECS = [
    op("mindspore.ops.Assign", _held("Assign", 1, 0), shapes=[[M23, M23], [(4,), (4,)]], dtypes=("float32", "int32"),
       **STATE, errors=[([M23, (3, 2)], {})]),
    op("mindspore.ops.L2Normalize", _f("L2Normalize"), shapes=[M23, (2, 3, 2)],
       kwargs=[{}, {"axis": 1}, {"axis": -1, "epsilon": 1e-2}], errors=[(M23, {"epsilon": "0.1"})]),
    op("mindspore.ops.ReverseV2", _f("ReverseV2"), shapes=[(2, 3, 2)], dtypes=("float32", "int32"),
       kwargs=[{"axis": (1,)}, {"axis": (0, -1)}], errors=[(M23, {"axis": (2,)})]),
    op("mindspore.ops.IOU", _f("IOU"), shapes=[[BOXES, GT]], kwargs=[{}, {"mode": "iof"}], grad=False,
       errors=[([BOXES, GT], {"mode": "giou"})]),
    op("mindspore.ops.NMSWithMask", _f("NMSWithMask"), shapes=[SCORED], kwargs=[{"iou_threshold": 0.5}], grad=False,
       errors=[(BOXES, {"iou_threshold": 0.5})]),
    op("mindspore.ops.BoundingBoxDecode", _f("BoundingBoxDecode"), shapes=[[BOXES, T((3, 4), low=-0.5, high=0.5)]],
       kwargs=[{"max_shape": (8, 8)}, {"max_shape": (6, 6), "means": (0.1, 0.0, 0.0, 0.1),
                                       "stds": (1.0, 1.0, 2.0, 2.0), "wh_ratio_clip": 0.1}], grad=False,
       errors=[([BOXES, T((3, 4))], {"max_shape": (8, 8), "means": (0.0, 0.0)})]),
    op("mindspore.ops.BoundingBoxEncode", _f("BoundingBoxEncode"), shapes=[[BOXES, GT]],
       kwargs=[{}, {"means": (0.1, 0.0, 0.0, 0.1), "stds": (1.0, 1.0, 2.0, 2.0)}], grad=False,
       errors=[([BOXES, GT], {"stds": (1.0, 1.0)})]),
    op("mindspore.ops.Eye", _eye, shapes=[[]], kwargs=[{"n": 3, "m": 4, "dtype": "float32"},
                                                     {"n": 2, "m": 2, "dtype": "int32"}], grad=False,
       errors=[([], {"n": -1, "m": 2, "dtype": "float32"})]),
    op("mindspore.ops.ROIAlign", _f("ROIAlign"), shapes=[[IMG, ROIS]],
       kwargs=[{"pooled_height": 2, "pooled_width": 2, "spatial_scale": 1.0},
               {"pooled_height": 1, "pooled_width": 3, "spatial_scale": 0.5, "sample_num": 2, "roi_end_mode": 0}],
       errors=[([IMG, ROIS], {"pooled_height": 2, "pooled_width": 2, "spatial_scale": "1"})]),
    op("mindspore.ops.AdaptiveAvgPool2D", _f("AdaptiveAvgPool2D"), shapes=[IMG, (2, 5, 3)],
       kwargs=[{"output_size": 2}, {"output_size": (1, None)}], errors=[(IMG, {"output_size": (1, 2, 3)})]),
    op("mindspore.ops.AssignAdd", _held("AssignAdd", 1, 0), shapes=[[M23, M23], [(4,), (4,)]],
       dtypes=("float32", "int32"), **STATE, errors=[([M23, T((), low=1, high=2)], {})]),
    op("mindspore.ops.CheckValid", _f("CheckValid"), shapes=[[BOXES, T(values=[6.0, 5.0, 1.0])]], grad=False,
       errors=[([BOXES, T(values=[6.0, 5.0])], {})]),
    op("mindspore.ops.ScalarToTensor", _scalar_to_tensor, shapes=[[Py(2)], [Py(1.5)]],
       kwargs=[{}, {"dtype": "int32"}], grad=False, graph=False, errors=[([Py("a")], {})]),
    op("mindspore.ops.ScatterNdUpdate", _held("ScatterNdUpdate", 1, 0),
       shapes=[[(3, 2), IDX([[0], [2]]), (2, 2)]], dtypes=("float32", "int32"), **STATE,
       errors=[([(3, 2), IDX([[0], [2]]), (2, 3)], {})]),
    op("mindspore.ops.LinSpace", lambda ms, a, b, n: ms.ops.LinSpace()(a, b, n),
       shapes=[[_s(0.0), _s(1.0), Py(5)], [_s(2.0), _s(-1.0), Py(1)]], grad=False,
       errors=[([_s(0.0), _s(1.0), Py(0)], {})]),
    op("mindspore.ops.GatherV2", lambda ms, x, i, *axes: ms.ops.GatherV2()(x, i, *axes),
       shapes=[[(3, 4), IDX([2, 0, 2]), Py(0), Py(0)], [(3, 4), IDX([[1, 3]]), Py(1), Py(0)]],
       dtypes=("float32", "int32"), errors=[([(3, 4), IDX([0]), Py(2), Py(0)], {})]),
    op("mindspore.ops.DepthToSpace", _f("DepthToSpace"), shapes=[(1, 8, 2, 2)], kwargs=[{"block_size": 2}],
       errors=[((1, 6, 2, 2), {"block_size": 2})]),
    # CTCLoss's blank is the last class (2 here): the labels are 0 and 1
    op("mindspore.ops.CTCLoss", _f("CTCLoss"),
       shapes=[[(4, 2, 3), IDX([[0, 0], [0, 1], [1, 0]], "int64"), IDX([1, 0, 1]), IDX([4, 3])]],
       kwargs=[{}, {"ctc_merge_repeated": False}], grad=False,
       errors=[([(4, 2, 3), IDX([[0, 0]], "int64"), IDX([1, 2]), IDX([4, 3])], {})]),
    op("mindspore.ops.Meshgrid", lambda ms, x, y, **kw: ms.ops.Meshgrid(**kw)((x, y)), shapes=[[(3,), (2,)]],
       dtypes=("float32", "int32"), kwargs=[{}, {"indexing": "ij"}], errors=[([(3,), (2,)], {"indexing": "xx"})]),
    op("mindspore.ops.ReverseSequence", lambda ms, x, n, **kw: ms.ops.ReverseSequence(**kw)(x, n),
       shapes=[[(3, 4), IDX([2, 4, 1])]], kwargs=[{"seq_dim": 1}], errors=[([(3, 4), IDX([2, 4, 1])], {"seq_dim": 2})]),
    op("mindspore.ops.ReverseSequence", lambda ms, x, n, **kw: ms.ops.ReverseSequence(**kw)(x, n),
       shapes=[[(3, 2, 2), IDX([1, 2])]], kwargs=[{"seq_dim": 0, "batch_dim": 1}]),
    op("mindspore.ops.ScatterAdd", _held("ScatterAdd", 1, 0), shapes=[[(3, 2), IDX([0, 2, 0]), (3, 2)]],
       dtypes=("float32", "int32"), **STATE, errors=[([(3, 2), IDX([0, 2]), (3, 2)], {})]),
    op("mindspore.ops.AdamWeightDecay", _held("AdamWeightDecay", 3, 0),
       shapes=[[M23, M23, POS, Py(0.01), Py(0.9), Py(0.999), Py(1e-8), Py(0.1), M23]], **STATE),
    op("mindspore.ops.Size", lambda ms, x: ms.ops.Size()(x), shapes=[M23, ()], grad=False, graph=False,
       errors=[([Py(3)], {})]),
    op("mindspore.ops.Unique", _f("Unique"), shapes=[IDX([3, 1, 3, 2, 1]), T(values=[2.0, -1.0, 2.0])],
       grad=False, graph=False, errors=[(IDX([[1, 2]]), {})]),
    op("mindspore.ops.Adam", _held("Adam", 3, 0),
       shapes=[[M23, M23, POS, _s(0.9), _s(0.999), _s(0.01), _s(0.9), _s(0.999), _s(1e-8), M23]],
       kwargs=[{}, {"use_nesterov": True}], **STATE),
    op("mindspore.ops.DiagPart", _f("DiagPart"), shapes=[(3, 3), (2, 3, 2, 3)], dtypes=("float32", "int32"),
       errors=[((3,), {})]),
    op("mindspore.ops.LRN", _f("LRN"), shapes=[IMG], kwargs=[{}, {"depth_radius": 1, "bias": 2.0, "alpha": 0.5,
                                                                  "beta": 0.75}], errors=[(M23, {})]),
    op("mindspore.ops.MaskedSelect", _f("MaskedSelect"), shapes=[[M23, T(M23, "bool")], [M23, T((3,), "bool")]],
       graph=False, errors=[([M23, T((4,), "bool")], {})]),
    op("mindspore.ops.PReLU", _f("PReLU"), shapes=[[(2, 3, 2), (3,)], [(2, 3), (1,)]],
       errors=[([(2, 3, 2), (2,)], {})]),
    op("mindspore.ops.TensorScatterUpdate", _f("TensorScatterUpdate"), shapes=[[(3, 2), IDX([[0], [2]]), (2, 2)]],
       dtypes=("float32", "int32"), errors=[([(3, 2), IDX([[0], [2]]), (3, 2)], {})]),
    op("mindspore.ops.Tril", _f("Tril"), shapes=[(3, 4)], dtypes=("float32", "int32"),
       kwargs=[{}, {"diagonal": 1}, {"diagonal": -1}], errors=[((3,), {})]),
    op("mindspore.ops.Addcmul", _f("Addcmul"), shapes=[[M23, M23, M23, _s(0.5)], [(3,), M23, (2, 1), T((1,))]],
       errors=[([M23, M23, (4,), _s(0.5)], {})]),
    # MindSpore 2.10 CPU ignores use_nesterov and gradient_scale (var -= lr * accum always): defaults only
    op("mindspore.ops.ApplyMomentum", _held("ApplyMomentum", 2, 0), shapes=[[M23, M23, _s(0.01), M23, _s(0.9)]],
       **STATE,
       errors=[([M23, M23, _s(0.01), (3, 2), _s(0.9)], {})]),
    op("mindspore.ops.ScatterUpdate", _held("ScatterUpdate", 1, 0), shapes=[[(3, 2), IDX([2, 0]), (2, 2)]],
       dtypes=("float32", "int32"), **STATE, errors=[([(3, 2), IDX([2, 0]), (3, 2)], {})]),
    op("mindspore.ops.TensorShape", lambda ms, x: ms.ops.TensorShape()(x), shapes=[M23, ()], grad=False),
    op("mindspore.ops.Triu", _f("Triu"), shapes=[(3, 4)], dtypes=("float32", "int32"),
       kwargs=[{}, {"diagonal": 1}, {"diagonal": -2}], errors=[((3,), {})]),
]
