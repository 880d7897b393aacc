"""``mindspore.Tensor`` methods beyond the elementwise aliases (sampled_tensor4.py): shape and copy
methods, casts, indexing and scatter, reductions and scans, matrix products, predicates, and the
PyTorch-style ``new_*`` constructors. Small float32 samples; a misuse MindSpore refuses where one is typical."""
from __future__ import annotations

from .core import Py, T, method_call, op

SHAPE = (2, 3)
R = (2, 3, 4)


def _idx(shape: tuple, high: int) -> T:
    """An int32 index tensor with values in [0, high)."""
    return T(shape, dtype="int32", low=0, high=high)


def _cast(name: str):
    """x.<name>() for the cast methods (the output's dtype is compared with MindSpore's, as its values)."""
    return lambda ms, x: getattr(x, name)()


def _dtype_arg(method: str):
    """x.<method>(ms.<dtype>) with the dtype named by the sample's ``dtype`` kwarg."""
    return lambda ms, x, dtype: getattr(x, method)(getattr(ms, dtype))


def _bfloat16(ms, x):
    """x.bfloat16() as its values widened to float32 (the fixtures' numpy has no bfloat16) and whether its
    dtype is bfloat16 (a bool: GRAPH_MODE returns no dtype objects)."""
    y = x.bfloat16()
    return y.float(), y.dtype == ms.bfloat16


def _sparse(method: str):
    """x.<method>() as its dense parts (indices or index pointers, values, shape)."""
    def call(ms, x):
        s = getattr(x, method)()
        if method == "to_coo":
            return s.indices, s.values, s.shape
        return s.indptr, s.indices, s.values, s.shape
    return call


# left out (MindSpore 2.10 CPU has no kernel for them, so there is nothing to record): clone, repeat, fill_,
# scatter_, scatter_add_, masked_fill_, addmm_, addcdiv, new_full ("Ascend only")
SPECS = [
    # select(dim, index), the form MindSpore 2.10 keeps (select(condition, y) is deprecated since 2.9)
    op("mindspore.Tensor.select", method_call("select"), shapes=[[SHAPE, Py(1), Py(0)], [SHAPE, Py(0), Py(1)]], grad=False,
       errors=[([SHAPE, Py(0), Py(5)], {})]),
    op("mindspore.Tensor.init_data", lambda ms, x: ms.Tensor(shape=x.shape, dtype=x.dtype, init=ms.common.initializer.One())
       .init_data(), shapes=[SHAPE], grad=False, graph=False),
    op("mindspore.Tensor.fill", method_call("fill"), shapes=[[SHAPE, Py(2.5)]], grad=False),
    op("mindspore.Tensor.gather_nd", method_call("gather_nd"), shapes=[[(3, 4), _idx((2, 1), 3)], [(3, 4), _idx((2, 2), 3)]]),
    op("mindspore.Tensor.reverse", method_call("reverse"), shapes=[[SHAPE, Py([0])], [SHAPE, Py([0, 1])]],
       errors=[([SHAPE, Py([2])], {})]),
    op("mindspore.Tensor.argwhere", method_call("argwhere"), shapes=[T(SHAPE, dtype="int32", values=[[0, 1, 0], [2, 0, 3]])],
       grad=False, graph=False),
    op("mindspore.Tensor.contiguous", method_call("contiguous"), shapes=[SHAPE]),
    op("mindspore.Tensor.nanmean", method_call("nanmean"),
       shapes=[T(SHAPE, values=[[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 2.0]])],
       kwargs=[{}, {"axis": 1}], grad=False),
    op("mindspore.Tensor.masked_select", method_call("masked_select"), shapes=[[SHAPE, T(SHAPE, dtype="bool")]],
       graph=False, errors=[([SHAPE, T((4,), dtype="bool")], {})]),
    op("mindspore.Tensor.double", _cast("double"), shapes=[SHAPE], grad=False),
    op("mindspore.Tensor.long", _cast("long"), shapes=[SHAPE], grad=False),
    op("mindspore.Tensor.outer", method_call("outer"), shapes=[[(3,), (4,)]]),
    op("mindspore.Tensor.masked_fill", method_call("masked_fill"), shapes=[[SHAPE, T(SHAPE, dtype="bool"), Py(0.5)]],
       errors=[([SHAPE, T((4,), dtype="bool"), Py(0.5)], {})]),
    op("mindspore.Tensor.median", method_call("median"), shapes=[(3, 4)], kwargs=[{}, {"axis": 0, "keepdims": True}],
       grad=False, errors=[((3, 4), {"axis": 2})]),
    op("mindspore.Tensor.repeat_interleave", method_call("repeat_interleave"), shapes=[[SHAPE, Py(2)]],
       kwargs=[{}, {"dim": 1}]),
    op("mindspore.Tensor.trace", method_call("trace"), shapes=[(3, 4)], errors=[((3,), {})]),
    op("mindspore.Tensor.chunk", method_call("chunk"), shapes=[[(4, 6), Py(2)]], kwargs=[{}, {"axis": 1}],
       errors=[([(4, 6), Py(0)], {})]),
    op("mindspore.Tensor.reverse_sequence", method_call("reverse_sequence"),
       shapes=[[(3, 4), T((3,), dtype="int32", values=[1, 2, 4])]], kwargs=[{"seq_dim": 1}]),
    op("mindspore.Tensor.assign_value", method_call("assign_value"), shapes=[[SHAPE, SHAPE]], grad=False, graph=False),
    op("mindspore.Tensor.diagonal", method_call("diagonal"), shapes=[(3, 4)], kwargs=[{}, {"offset": 1}]),
    op("mindspore.Tensor.nelement", method_call("nelement"), shapes=[R], grad=False, graph=False),
    op("mindspore.Tensor.cumprod", method_call("cumprod"), shapes=[[SHAPE, Py(1)], [SHAPE, Py(0)]]),
    op("mindspore.Tensor.hsplit", method_call("hsplit"), shapes=[[(2, 4), Py(2)]], errors=[([(2, 4), Py(1.5)], {})]),
    op("mindspore.Tensor.scatter", method_call("scatter"), shapes=[[(3, 4), Py(1), _idx((3, 2), 4), (3, 2)]], grad=False),
    op("mindspore.Tensor.cross", method_call("cross"), shapes=[[(2, 3), (2, 3)]], kwargs=[{"dim": 1}]),
    op("mindspore.Tensor.inner", method_call("inner"), shapes=[[SHAPE, (4, 3)]], errors=[([SHAPE, (3, 2)], {})]),
    op("mindspore.Tensor.reshape_as", method_call("reshape_as"), shapes=[[SHAPE, (3, 2)]], grad=False),
    op("mindspore.Tensor.type", _dtype_arg("type"), shapes=[SHAPE], kwargs=[{"dtype": "float16"}, {"dtype": "int32"}],
       grad=False),
    op("mindspore.Tensor.moveaxis", method_call("moveaxis"), shapes=[[R, Py(0), Py(2)]]),
    op("mindspore.Tensor.new_zeros", method_call("new_zeros"), shapes=[[SHAPE, Py((3, 2))]], grad=False),
    op("mindspore.Tensor.unbind", method_call("unbind"), shapes=[SHAPE], kwargs=[{}, {"dim": 1}]),
    op("mindspore.Tensor.addmm", method_call("addmm"), shapes=[[SHAPE, (2, 4), (4, 3)]],
       kwargs=[{}, {"beta": 0.5, "alpha": 2.0}], errors=[([SHAPE, (2, 4), (3, 3)], {})]),
    op("mindspore.Tensor.bool", _cast("bool"), shapes=[T(SHAPE, values=[[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]])], grad=False),
    op("mindspore.Tensor.byte", _cast("byte"), shapes=[T(SHAPE, low=0.0, high=9.0)], grad=False),
    op("mindspore.Tensor.copy_", method_call("copy_"), shapes=[[SHAPE, SHAPE], [SHAPE, (3,)]], grad=False),
    op("mindspore.Tensor.diff", method_call("diff"), shapes=[SHAPE], kwargs=[{}, {"axis": 0}]),
    op("mindspore.Tensor.index_select", method_call("index_select"), shapes=[[(3, 4), Py(1), _idx((2,), 4)]],
       errors=[([(3, 4), Py(2), _idx((2,), 4)], {})]),
    op("mindspore.Tensor.mm", method_call("mm"), shapes=[[SHAPE, (3, 4)]], errors=[([SHAPE, (2, 4)], {})]),
    op("mindspore.Tensor.narrow", method_call("narrow"), shapes=[[(3, 4), Py(1), Py(1), Py(2)]],
       errors=[([(3, 4), Py(1), Py(3), Py(2)], {})]),
    op("mindspore.Tensor.new_ones", method_call("new_ones"), shapes=[[SHAPE, Py((3, 2))]], grad=False),
    op("mindspore.Tensor.top_k", method_call("top_k"), shapes=[[(3, 4), Py(2)]]),
    op("mindspore.Tensor.type_as", method_call("type_as"), shapes=[[SHAPE, T(SHAPE, dtype="int32")]], grad=False),
    op("mindspore.Tensor.T", lambda ms, x: x.T, shapes=[SHAPE, R]),
    op("mindspore.Tensor.addbmm", method_call("addbmm"), shapes=[[SHAPE, (2, 2, 4), (2, 4, 3)]],
       kwargs=[{}, {"beta": 0.5, "alpha": 2.0}]),
    op("mindspore.Tensor.addmv", method_call("addmv"), shapes=[[(2,), (2, 3), (3,)]], kwargs=[{}, {"beta": 0.5, "alpha": 2.0}]),
    op("mindspore.Tensor.addr", method_call("addr"), shapes=[[SHAPE, (2,), (3,)]], kwargs=[{}, {"beta": 0.5, "alpha": 2.0}]),
    op("mindspore.Tensor.baddbmm", method_call("baddbmm"), shapes=[[(2, 2, 3), (2, 2, 4), (2, 4, 3)]],
       kwargs=[{}, {"beta": 0.5, "alpha": 2.0}]),
    op("mindspore.Tensor.bfloat16", _bfloat16, shapes=[SHAPE], grad=False),
    op("mindspore.Tensor.cummax", method_call("cummax"), shapes=[SHAPE], kwargs=[{"axis": 1}], grad=False),
    op("mindspore.Tensor.cummin", method_call("cummin"), shapes=[SHAPE], kwargs=[{"axis": 0}], grad=False),
    op("mindspore.Tensor.gather_elements", method_call("gather_elements"), shapes=[[(3, 4), Py(1), _idx((3, 2), 4)]]),
    op("mindspore.Tensor.ger", method_call("ger"), shapes=[[(2,), (3,)]], errors=[([SHAPE, (3,)], {})]),
    op("mindspore.Tensor.is_complex", method_call("is_complex"), shapes=[SHAPE], grad=False, graph=False),
    op("mindspore.Tensor.is_contiguous", method_call("is_contiguous"), shapes=[SHAPE], grad=False, graph=False),
    op("mindspore.Tensor.is_floating_point", method_call("is_floating_point"), shapes=[SHAPE], dtypes=("float32", "int32"),
       grad=False, graph=False),
    op("mindspore.Tensor.is_signed", method_call("is_signed"), shapes=[SHAPE], grad=False, graph=False),
    op("mindspore.Tensor.logcumsumexp", method_call("logcumsumexp"), shapes=[SHAPE], kwargs=[{"axis": 1}]),
    op("mindspore.Tensor.logsumexp", method_call("logsumexp"), shapes=[SHAPE], kwargs=[{"dim": 1}, {"dim": 0, "keepdim": True}]),
    op("mindspore.Tensor.movedim", method_call("movedim"), shapes=[[R, Py(0), Py(2)]]),
    op("mindspore.Tensor.nansum", method_call("nansum"),
       shapes=[T(SHAPE, values=[[1.0, float("nan"), 3.0], [float("nan"), 0.5, 2.0]])], kwargs=[{}, {"axis": 1}],
       grad=False),
    op("mindspore.Tensor.ndimension", method_call("ndimension"), shapes=[R], grad=False, graph=False),
    op("mindspore.Tensor.short", _cast("short"), shapes=[SHAPE], grad=False),
    op("mindspore.Tensor.swapdims", method_call("swapdims"), shapes=[[R, Py(0), Py(2)]]),
    op("mindspore.Tensor.tensor_split", method_call("tensor_split"), shapes=[[(5, 2), Py(3)], [(5, 2), Py([1, 4])]]),
    op("mindspore.Tensor.to_coo", _sparse("to_coo"), shapes=[T(SHAPE, values=[[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]])],
       grad=False, graph=False),
    op("mindspore.Tensor.to_csr", _sparse("to_csr"), shapes=[T(SHAPE, values=[[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]])],
       grad=False, graph=False),
    op("mindspore.Tensor.unique_consecutive", method_call("unique_consecutive"),
       shapes=[T((6,), dtype="int32", values=[1, 1, 2, 2, 3, 1])],
       kwargs=[{}, {"return_inverse": True, "return_counts": True}], graph=False),
    op("mindspore.Tensor.view_as", method_call("view_as"), shapes=[[SHAPE, (3, 2)]], grad=False),
    op("mindspore.Tensor.vsplit", method_call("vsplit"), shapes=[[(4, 2), Py(2)]], errors=[([(4, 2), Py(1.5)], {})]),
]
# the scatter_<reduce> family: x.scatter_<reduce>(indices, updates) on the rows indices name (scatter_add: the
# overload MindSpore 2.10 CPU runs; its PyTorch-style (dim, index, src) one is Ascend's ScatterAddExt)
for _name in ("scatter_add", "scatter_div", "scatter_max", "scatter_min", "scatter_mul"):
    SPECS.append(op(f"mindspore.Tensor.{_name}", method_call(_name),
                    shapes=[[(3, 4), T((2, 1), dtype="int32", values=[[0], [2]]), T((2, 4), low=0.5, high=2.0)]],
                    grad=False))
# unsorted_segment_<reduce>(segment_ids, num_segments)
for _name in ("unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod"):
    SPECS.append(op(f"mindspore.Tensor.{_name}", method_call(_name),
                    shapes=[[(4, 3), T((4,), dtype="int32", values=[0, 2, 0, 1]), Py(3)]], grad=False))
