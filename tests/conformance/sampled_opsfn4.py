"""Specs of ``sampled_opsfn4``: ``mindspore.ops`` functions served without samples until issue 21's
round 4 (most used first), dense ones; the sparse (COO/CSR/RowTensor) functions are in
``sampled_opsfn4b``. Most are aliases or compositions of ops other families sample, so their samples
are few and small, mostly float32, with gradients checked where the function reaches a backward rule
other families do not (GRADS). Functions that update a Parameter (assign*, scatter_*) wrap their input in
one and return the output and the Parameter after the update (PyNative only: a Parameter is made per
call). Functions MindSpore 2.10 CPU has no kernel for are sampled by the argument checks it makes first."""
from __future__ import annotations

from .core import Py, T, op, ops_call

M = (2, 3)
FHI = ("float32", "float16", "int32")
IMG = (1, 2, 4, 4)
VOL = (1, 2, 2, 4, 4)


def _i(values, dtype: str = "int32") -> T:
    return T(values=values, dtype=dtype)


def _param(name: str):
    """``ops.<name>(Parameter(x), *rest)``: its output and the Parameter after the in-place update."""
    def call(ms, x, *xs, **kw):
        p = ms.Parameter(x, name="x")
        out = getattr(ms.ops, name)(p, *xs, **kw)
        return out, p * 1
    return call


# the functions whose gradient the samples check (their own backward, or one other families do not reach)
GRADS = {"adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "addr", "avg_pool1d", "avg_pool3d",
         "bidense", "conv1d", "conv3d", "conv3d_transpose", "cross", "ctc_loss", "diff", "erfinv", "glu",
         "group_norm", "hardtanh", "index_select", "logcumsumexp", "lrn", "matrix_norm",
         "multi_margin_loss", "pixel_shuffle", "pixel_unshuffle", "prelu", "softmin", "tensor_scatter_div",
         "tensor_scatter_max", "tensor_scatter_min", "tensor_scatter_mul",
         "trapz", "unsorted_segment_max", "unsorted_segment_prod", "vecdot", "vector_norm"}


def _s(name: str, shapes, dtypes=("float32",), kwargs=None, errors=(), **options):
    """A spec of ``ops.<name>``; gradients checked for the names in GRADS only (the other kernels'
    gradients are other families' samples)."""
    options.setdefault("grad", name in GRADS)
    return op(f"mindspore.ops.{name}", ops_call(name), shapes=shapes, dtypes=dtypes, kwargs=kwargs, errors=errors,
              **options)


BOX = T(values=[[0.0, 0.0, 4.0, 4.0], [1.0, 1.0, 3.0, 5.0], [2.0, 0.5, 6.0, 2.5]])
BOX2 = T(values=[[0.5, 0.0, 4.5, 3.5], [1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 5.0, 2.0]])
UNIQ = _i([3, 1, 3, 0, 1, 1])
SEG = _i([0, 2, 0, 1])

SPECS = [
    op("mindspore.ops.partial", lambda ms, x, y: ms.ops.partial(ms.ops.add, x)(y), shapes=[[M, M]], grad=False),
    op("mindspore.ops.assign", _param("assign"), shapes=[[M, M]], grad=False, graph=False,
       errors=[([M, (3, 2)], {})]),
    op("mindspore.ops.range", lambda ms, *xs: ms.ops.range(*xs), shapes=[[_i(1), _i(10), _i(3)]], grad=False,
       graph=False, errors=[([_i(1), _i(10), _i(0)], {})]),
    op("mindspore.ops.make_range", lambda ms, *xs: ms.ops.make_range(*xs), shapes=[[Py(1), Py(10), Py(3)], [Py(4)]],
       grad=False, graph=False, errors=[([Py(1.5)], {})]),
    op("mindspore.ops.assign_add", _param("assign_add"), shapes=[[M, M]], grad=False, graph=False,
       errors=[([M, (3, 2)], {})]),
    op("mindspore.ops.clip_by_global_norm", lambda ms, x, y, **kw: ms.ops.clip_by_global_norm((x, y), **kw),
       shapes=[[M, (3,)]], kwargs=[{"clip_norm": 1.0}], grad=False),
    # (MindSpore 2.10 CPU sums an empty axis into uninitialised memory, so no empty sample)
    _s("reduce_sum", [[M, Py(1)]], dtypes=FHI, errors=[([M, Py(5)], {})]),
    _s("repeat_elements", [[M, Py(2)]], dtypes=FHI, kwargs=[{"axis": 1}], errors=[([M, Py(2.0)], {})]),
    _s("masked_select", [[M, T(M, dtype="bool")]], graph=False),
    _s("arange", [[Py(1), Py(7), Py(2)]], errors=[([Py(5), Py(1), Py(1)], {})]),
    _s("pows", [[M, Py(2.0)], [T(M, low=0.5, high=2), M]], dtypes=("float32", "float16")),
    _s("masked_fill", [[M, T(M, dtype="bool"), Py(0.5)]], dtypes=("float32", "float16"),
       errors=[([M, T(M, dtype="bool"), Py("a")], {})]),
    op("mindspore.ops.mixed_precision_cast", lambda ms, x: ms.ops.mixed_precision_cast(ms.float16, x), shapes=[M],
       grad=False),
    _s("linspace", [[Py(0.0), Py(1.0), Py(5)]], errors=[([Py(0.0), Py(1.0), Py(0.5)], {})]),
    op("mindspore.ops.constexpr", lambda ms: ms.ops.constexpr(lambda a, b: a * b + 1)(3, 4), shapes=[[]],
       grad=False, graph=False),
    op("mindspore.ops.eye", lambda ms, *xs: ms.ops.eye(*xs, dtype=ms.float32), shapes=[[Py(3), Py(4)], [Py(2)]],
       grad=False, errors=[([Py(2.5)], {})]),
    _s("tensor_scatter_elements", [[(3, 3), _i([[1, 0, 2], [0, 2, 1]]), (2, 3)]],
       kwargs=[{"axis": 0}, {"axis": 1, "reduction": "add"}],
       errors=[([(3, 3), _i([[1, 0, 2], [0, 2, 1]]), (2, 3)], {"reduction": "max"})]),
    op("mindspore.ops.value_and_grad", lambda ms, x: ms.ops.value_and_grad(lambda a: (a * a).sum())(x),
       shapes=[M], grad=False, graph=False),
    _s("meshgrid", [[(2,), (3,)]], kwargs=[{"indexing": "ij"}, {}], errors=[([(2,), (3,)], {"indexing": "ab"})]),
    _s("nonzero", [T(M, low=-1, high=2, dtype="int32")], graph=False),
    _s("reduce_mean", [[M, Py(0)]], dtypes=("float32", "float16"), errors=[([M, Py(5)], {})]),
    op("mindspore.ops.print_", lambda ms, x: ms.ops.print_("x:", x), shapes=[M], grad=False, graph=False),
    _s("size", [M], graph=False, errors=[([Py(2)], {})]),
    _s("where", [[T(M, dtype="bool"), M, M], [T((2, 1), dtype="bool"), M, (3,)]], dtypes=FHI,
       errors=[([T(M, dtype="bool"), M, (4, 5)], {})]),
    _s("count_nonzero", [T(M, low=-1, high=2, dtype="int32")], kwargs=[{}, {"axis": 1, "keep_dims": True}]),
    _s("glu", [(2, 4)], errors=[([(2, 3)], {})]),
    _s("hardtanh", [M], kwargs=[{}, {"min_val": -0.5, "max_val": 0.5}], errors=[([M], {"min_val": "a"})]),
    _s("lrn", [IMG], kwargs=[{"depth_radius": 1}], errors=[([M], {})]),
    _s("pixel_shuffle", [[(1, 4, 2, 2), Py(2)]], errors=[([(1, 3, 2, 2), Py(2)], {})]),
    _s("rank", [M], graph=False),
    _s("threshold", [[M, Py(0.2), Py(-1.0)]]),
    _s("unique", [UNIQ], graph=False),
    # MindSpore CPU has no AccumulateNV2, einsum, fills, fmin, LayerNormExt, MultilabelMarginLoss, SoftMarginLoss or
    # TripletMarginLoss kernel ("Unsupported op"): their samples are the argument checks it makes first
    op("mindspore.ops.accumulate_n", lambda ms, *xs: ms.ops.accumulate_n(list(xs)), errors=[([M, Py(1)], {})]),
    _s("adaptive_avg_pool1d", [[(1, 2, 6), Py(3)]], errors=[([(1, 2, 6), Py(0.5)], {})]),
    _s("adaptive_avg_pool2d", [[IMG, Py(2)], [IMG, Py((3, 2))]]),
    _s("adaptive_avg_pool3d", [[VOL, Py(2)]]),
    _s("adaptive_max_pool1d", [[(1, 2, 6), Py(3)]]),
    _s("adaptive_max_pool2d", [[IMG, Py(2)]], kwargs=[{}, {"return_indices": True}]),
    _s("adaptive_max_pool3d", [[VOL, Py(2)]]),
    _s("addr", [[M, (2,), (3,)]], errors=[([M, (3,), (3,)], {})]),
    _s("adjoint", [M]),
    _s("argsort", [(3, 4)], dtypes=("float32", "int32"), kwargs=[{}, {"axis": 0, "descending": True}]),
    _s("argwhere", [T(M, low=-1, high=2, dtype="int32")], graph=False),
    op("mindspore.ops.assign_sub", _param("assign_sub"), shapes=[[M, M]], grad=False, graph=False,
       errors=[([M, (3, 2)], {})]),
    _s("atleast_1d", [()]),
    _s("atleast_2d", [(3,)]),
    _s("atleast_3d", [M]),
    _s("avg_pool1d", [(1, 2, 6)], kwargs=[{"kernel_size": 2, "stride": 2}]),
    _s("avg_pool2d", [IMG], kwargs=[{"kernel_size": 2, "stride": 2}, {"kernel_size": 3, "stride": 1, "padding": 1}]),
    _s("avg_pool3d", [VOL], kwargs=[{"kernel_size": 2, "stride": 2}]),
    _s("bidense", [[M, (2, 4), (5, 3, 4), (5,)]]),
    _s("bounding_box_decode", [[BOX, BOX2]], kwargs=[{"max_shape": (8, 8)}]),
    _s("bounding_box_encode", [[BOX, BOX2]]),
    _s("channel_shuffle", [[(1, 4, 2, 2), Py(2)]], errors=[([(1, 3, 2, 2), Py(2)], {})]),
    _s("check_valid", [[BOX, T(values=[6.0, 6.0, 1.0])]]),
    _s("chunk", [[(4, 3), Py(2)], [(5, 3), Py(3)]], errors=[([(4, 3), Py(0)], {})]),
    _s("conv1d", [[(1, 2, 6), (3, 2, 3)]], kwargs=[{}, {"pad_mode": "pad", "padding": 1, "stride": 2}]),
    _s("conv3d", [[(1, 2, 3, 4, 4), (2, 2, 2, 2, 2)]]),
    _s("conv3d_transpose", [[(1, 2, 2, 3, 3), (2, 2, 2, 2, 2)]]),
    _s("cross", [[(2, 3), (2, 3)]], kwargs=[{"dim": 1}], errors=[([(2, 4), (2, 4)], {"dim": 1})]),
    _s("ctc_loss", [[T((4, 2, 3), low=-2, high=0), _i([[1, 2], [1, 1]]), _i([4, 4]), _i([2, 1])]]),
    _s("diag", [(3,)]),
    _s("diagonal", [(3, 4)], kwargs=[{}, {"offset": 1}]),
    _s("diff", [(2, 5)], kwargs=[{}, {"axis": 0}], errors=[([(2, 5)], {"n": 2})]),    # CPU: n == 1 only
    _s("dropout1d", [(2, 3, 4)], kwargs=[{"training": False}]),
    _s("dropout2d", [IMG], kwargs=[{"training": False}]),
    _s("dropout3d", [VOL], kwargs=[{"training": False}]),
    op("mindspore.ops.einsum", lambda ms, *xs: ms.ops.einsum("ij,jk->ik", *xs), errors=[([(2, 3)], {})]),
    _s("erfinv", [T(M, low=-0.9, high=0.9)]),
    _s("expand", [[(1, 3), _i([2, 3])]]),
    _s("expand_as", [[(1, 3), M]]),
    _s("fills", [], errors=[([M, Py("a")], {})]),
    _s("flip", [[M, Py((1,))], [M, Py((0, 1))]], dtypes=FHI),
    _s("float_power", [[T(M, low=0.5, high=2), Py(2.0)]]),
    _s("fmax", [[M, M]]),
    _s("fmin", [], errors=[([M, (4, 5)], {})]),
    op("mindspore.ops.full", lambda ms, *xs: ms.ops.full(*xs, dtype=ms.float32), shapes=[[Py((2, 3)), Py(1.5)]],
       grad=False, errors=[([Py(2.5), Py(1.5)], {})]),
    _s("full_like", [[M, Py(2)]]),
    op("mindspore.ops.grad", lambda ms, x: ms.ops.grad(lambda a: (a * a * a).sum())(x), shapes=[M], grad=False,
       graph=False),
    _s("group_norm", [[(2, 4, 3), Py(2)]], errors=[([(2, 4, 3), Py(3)], {})]),
    _s("hann_window", [[Py(5)]], kwargs=[{}, {"periodic": False}]),
    _s("hinge_embedding_loss", [[M, T(values=[[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]])]]),
    _s("hsplit", [[(2, 4), Py(2)]]),
    _s("index_select", [[(3, 4), Py(1), _i([0, 2])]]),
    _s("invert", [T(M, dtype="int32")]),
    _s("iou", [[BOX, BOX2]], kwargs=[{}, {"mode": "iof"}]),
    _s("is_complex", [M], graph=False),
    _s("isneginf", [T(values=[1.0, float("-inf"), float("inf"), float("nan")])]),
    _s("isposinf", [T(values=[1.0, float("-inf"), float("inf"), float("nan")])]),
    _s("isreal", [M]),
    _s("layer_norm", [], errors=[([M, Py((4,))], {})]),
    _s("ldexp", [[M, T(M, dtype="int32")]]),
    _s("logcumsumexp", [[M, Py(1)]]),
    _s("logspace", [[Py(0.0), Py(2.0), Py(3)]]),
    _s("matrix_norm", [(3, 4)], kwargs=[{}, {"ord": 1}]),
    _s("max_pool3d", [[VOL, Py(2)]]),
    _s("median", [(3, 4)], kwargs=[{}, {"axis": 0}]),
    _s("moveaxis", [[(2, 3, 4), Py(0), Py(2)]]),
    _s("movedim", [[(2, 3, 4), Py(2), Py(0)]]),
    _s("multi_margin_loss", [[(3, 4), _i([0, 3, 1], "int64")]]),
    _s("multilabel_margin_loss", [], errors=[([(2, 4), (2, 4)], {})]),
    _s("narrow", [[(3, 4), Py(1), Py(1), Py(2)]]),
    _s("numel", [M], graph=False),
    _s("pixel_unshuffle", [[(1, 1, 4, 4), Py(2)]]),
    _s("prelu", [[M, T(values=[0.25])]]),
    _s("ravel", [M]),
    _s("reduce_max", [[M, Py(1)]]),
    _s("reduce_min", [[M, Py(1)]]),
    _s("repeat_interleave", [[M, Py(2)]], kwargs=[{}, {"axis": 1}]),
    _s("reverse", [[M, Py([1])]]),
    _s("reverse_sequence", [[(3, 4), _i([1, 2, 4])]], kwargs=[{"seq_dim": 1}]),
    _s("scatter", [[(3, 3), Py(1), _i([[0, 2], [1, 0]]), (2, 2)]]),
    *[op(f"mindspore.ops.scatter_{n}", _param(f"scatter_{n}"),
         shapes=[[T((3, 2), low=0.5, high=2), _i([2, 0]), T((2, 2), low=0.5, high=2)]], grad=False, graph=False)
      for n in ("add", "div", "max", "min", "mul", "update")],
    *[op(f"mindspore.ops.scatter_nd_{n}", _param(f"scatter_nd_{n}"),
         shapes=[[T((3, 2), low=0.5, high=2), _i([[2], [0]]), T((2, 2), low=0.5, high=2)]], grad=False, graph=False)
      for n in ("add", "div", "max", "min", "mul", "sub")],
    _s("sgn", [M]),
    _s("signbit", [M]),
    _s("soft_margin_loss", [], errors=[([M, M], {"reduction": "foo"})]),
    _s("softmin", [M]),
    _s("swapaxes", [[(2, 3, 4), Py(0), Py(2)]]),
    _s("swapdims", [[(2, 3, 4), Py(0), Py(2)]]),
    _s("t", [M]),
    _s("tensor_exp", [M]),
    _s("tensor_expm1", [M]),
    _s("tensor_lt", [[M, M]]),
    _s("tensor_muls", [[M, Py(2.0)]]),
    *[_s(f"tensor_scatter_{n}", [[T((3, 2), low=0.5, high=2), _i([[2], [0]]), T((2, 2), low=0.5, high=2)]])
      for n in ("add", "div", "max", "min", "mul", "sub")],
    _s("tensor_split", [[(5, 2), Py(2)], [(5, 2), Py((1, 3))]]),
    _s("tensor_sub", [[M, M]]),
    _s("trapz", [(2, 5)]),
    _s("tril", [(3, 4)], dtypes=("float32", "int32"), kwargs=[{}, {"diagonal": 1}]),
    _s("triplet_margin_loss", [], errors=[([M, M, M], {"margin": "a"})]),
    _s("triu", [(3, 4)], dtypes=("float32", "int32"), kwargs=[{}, {"diagonal": -1}]),
    _s("unique_consecutive", [_i([1, 1, 3, 0, 0, 1])], kwargs=[{"return_inverse": True, "return_counts": True}],
       graph=False),
    _s("unsorted_segment_max", [[(4, 2), SEG, Py(3)]]),
    _s("unsorted_segment_min", [[(4, 2), SEG, Py(3)]]),
    _s("unsorted_segment_prod", [[T(values=[[0.0, 1.0], [2.0, 0.0], [0.0, 4.0], [1.5, 5.0]]), SEG, Py(3)],
                                 [(4, 2), SEG, Py(3)]]),          # zeros: one or two in a segment
    _s("vecdot", [[M, M]]),
    _s("vector_norm", [M], kwargs=[{}, {"ord": 1, "axis": 1}]),
    _s("vsplit", [[(4, 2), Py(2)]]),
]
