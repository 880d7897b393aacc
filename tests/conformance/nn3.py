"""Specs of the round-3 breadth family ``nn3``: nn and array functions and primitives (InTopK, Dense,
batch_dot, sequence_mask, PadV3, LogSpace, ...), the in-place functionals and the Tensor methods they
bring. Several are Ascend-only kernels in MindSpore 2.10 (its CPU build raises "The kernel X
unregistered"): those samples record that error, KNOWN_MISMATCHES.txt lists them and tests/test_nn3.py
checks the emulator's values against numpy (float32 first: every (op, dtype) is a cold kernel build)."""
from __future__ import annotations

from .core import method_call as _m, ops_call as _f, Py, T, op




def _inplace(call):
    """An in-place op on a copy of the first input, returning the copy (which holds the result)."""
    def run(ms, x, *rest, **kw):
        y = x + 0
        call(ms, y, *rest, **kw)
        return y
    return run


def IDX(values, dtype: str = "int32"):
    return T(values=values, dtype=dtype)


M23 = (2, 3)
IMG = (1, 4, 2, 3)
# rows with ties: the target is "in the top k" when fewer than k entries are strictly greater
TIES = T(values=[[1.0, 3.0, 3.0], [4.0, 5.0, 6.0], [2.0, 2.0, 2.0]])
ONES3, ZEROS3 = T(values=[1.0, 1.0, 1.0]), T(values=[0.0, 0.0, 0.0])
VAR3 = T((3,), low=0.5, high=1.5)
# the in-place functionals of MindSpore 2.10 are Ascend kernels (InplaceZero, InplaceTanh, ...)
ASCEND_ONLY = dict(graph=False, grad=False)

SPECS = [
    # top-k membership
    op("mindspore.ops.intopk", _f("intopk"), shapes=[[TIES, IDX([1, 0, 2]), Py(1)], [TIES, IDX([0, 2, 1]), Py(2)]],
       grad=False, errors=[([TIES, IDX([[1, 0, 2]]), Py(1)], {})]),
    op("mindspore.ops.InTopK", lambda ms, a, b, k: ms.ops.InTopK(k)(a, b),
       shapes=[[TIES, IDX([1, 1, 0], "int64"), Py(2)]], grad=False),
    # dense, batch_dot
    op("mindspore.ops.dense", _f("dense"), shapes=[[M23, (4, 3), (4,)], [(2, 2, 3), (4, 3)], [M23, (3,)]]),
    op("mindspore.ops.Dense", lambda ms, *xs: ms.ops.Dense()(*xs), shapes=[[M23, (4, 3), (4,)]]),
    op("mindspore.ops.batch_dot", _f("batch_dot"), shapes=[[(2, 3, 4), (2, 4, 2)], [M23, M23]],
       errors=[([(2, 3, 4), (2, 4, 2)], {"axes": 0})]),
    op("mindspore.ops.batch_dot", _f("batch_dot"), shapes=[[(2, 3, 4), (2, 2, 3)]], kwargs=[{"axes": (1, -1)}]),
    # masks, shrinks
    op("mindspore.ops.sequence_mask", _f("sequence_mask"),
       shapes=[[IDX([1, 3, 0]), Py(4)], [IDX([[1, 3], [2, 0]], "int64")]], grad=False,
       errors=[([IDX([1, 2]), Py(0)], {})]),
    op("mindspore.ops.tanhshrink", _f("tanhshrink"), shapes=[M23], dtypes=("float32", "int32")),
    op("mindspore.ops.soft_shrink", _f("soft_shrink"), shapes=[M23], kwargs=[{}, {"lambd": 1.0}]),
    op("mindspore.Tensor.soft_shrink", _m("soft_shrink"), shapes=[M23], kwargs=[{"lambd": 0.25}]),
    op("mindspore.ops.is_floating_point", _f("is_floating_point"), shapes=[(2,)], dtypes=("float32", "int32"),
       grad=False, graph=False),
    # normalisation
    op("mindspore.ops.batch_norm", _f("batch_norm"), shapes=[[M23, T((3,)), VAR3, (3,), (3,)]]),
    op("mindspore.ops.add_layer_norm", _f("add_layer_norm"), shapes=[[M23, M23, ONES3, ZEROS3]], **ASCEND_ONLY),
    # padding
    op("mindspore.ops.mirror_pad", lambda ms, x, mode: ms.ops.mirror_pad(x, ms.Tensor([[1, 1], [1, 2]]), mode),
       shapes=[M23], kwargs=[{"mode": "REFLECT"}, {"mode": "SYMMETRIC"}]),
    op("mindspore.ops.PadV3", lambda ms, x, pads, *value, **kw: ms.ops.PadV3(**kw)(x, ms.Tensor(pads), *value),
       shapes=[[M23, Py([1, 1, 0, 1]), T(values=2.0)]], kwargs=[{}, {"paddings_contiguous": False}],
       errors=[([M23, Py([1, 1])], {"mode": "reflect"}), ([(1, 2, 3), Py([1, 1, 1, 1])], {"mode": "edge"})]),
    op("mindspore.ops.PadV3", lambda ms, x, pads, **kw: ms.ops.PadV3(**kw)(x, ms.Tensor(pads)),
       shapes=[[(1, 2, 3), Py([1, 2])]], kwargs=[{"mode": "reflect"}, {"mode": "edge"}, {"mode": "circular"}]),
    # channels, fills, ranges, joins
    op("mindspore.ops.ChannelShuffle", lambda ms, x, **kw: ms.ops.ChannelShuffle(**kw)(x), shapes=[IMG],
       kwargs=[{"group": 2}], grad=False),    # MindSpore 2.10 defines no bprop for ChannelShuffle
    op("mindspore.ops.FillV2", lambda ms, v, shape: ms.ops.FillV2()(ms.Tensor(shape, ms.int32), v),
       shapes=[[T(values=1.5), Py([2, 3])]], grad=False),
    op("mindspore.ops.LogSpace", lambda ms, a, b, **kw: ms.ops.LogSpace(**kw)(a, b),
       shapes=[[T(values=0.0), T(values=2.0)]], kwargs=[{"steps": 4, "base": 2}, {}], grad=False),
    op("mindspore.ops.ParallelConcat", lambda ms, a, b: ms.ops.ParallelConcat()((a, b)), shapes=[[(1, 3), (1, 3)]],
       grad=False),    # MindSpore 2.10 defines no bprop for ParallelConcat
    op("mindspore.ops.ScatterAddWithAxis", lambda ms, x, i, u, **kw: ms.ops.ScatterAddWithAxis(**kw)(x, i, u),
       shapes=[[M23, IDX([[0, 0], [2, 1]]), (2, 2)]], kwargs=[{"axis": 1}], grad=False),
    op("mindspore.ops.EmbeddingLookup", lambda ms, p, i, offset: ms.ops.EmbeddingLookup()(p, i, offset),
       shapes=[[(4, 3), IDX([[0, 1], [3, 5]]), Py(1)]], grad=False),
    # Ascend-only kernels on MindSpore 2.10 CPU (values checked against numpy in tests/test_nn3.py)
    op("mindspore.ops.embedding", _f("embedding"), shapes=[[IDX([[0, 1], [3, 1]]), (4, 3)]], **ASCEND_ONLY),
    op("mindspore.ops.baddbmm_ext", _f("baddbmm_ext"), shapes=[[(1, 2, 2), (1, 2, 3), (1, 3, 2)]], **ASCEND_ONLY),
    op("mindspore.ops.einsum_ext", lambda ms, a, b: ms.ops.einsum_ext("ij,kj->ik", a, b), shapes=[[M23, M23]],
       **ASCEND_ONLY),
    op("mindspore.ops.adaptive_avg_pool2d_ext", _f("adaptive_avg_pool2d_ext"), shapes=[[(1, 1, 4, 4), Py((2, 2))]],
       **ASCEND_ONLY),
    op("mindspore.ops.mse_loss_ext", _f("mse_loss_ext"), shapes=[[M23, M23]], **ASCEND_ONLY),
    op("mindspore.ops.conv_transpose2d", _f("conv_transpose2d"), shapes=[[(1, 2, 2, 2), (2, 1, 2, 2)]],
       kwargs=[{"stride": 2}], **ASCEND_ONLY),
    op("mindspore.ops.LerpScalar", lambda ms, a, b, w: ms.ops.LerpScalar()(a, b, w), shapes=[[M23, M23, Py(0.25)]],
       **ASCEND_ONLY),
    op("mindspore.ops.LogSoftmaxExt", lambda ms, x, **kw: ms.ops.LogSoftmaxExt()(x, **kw), shapes=[M23],
       kwargs=[{"dim": 1}], **ASCEND_ONLY),
    op("mindspore.ops.type_as", _f("type_as"), shapes=[[M23, T((2,), dtype="int32")]], **ASCEND_ONLY),
    op("mindspore.ops.BatchToSpaceNDV2", lambda ms, x: ms.ops.BatchToSpaceNDV2()(
        x, ms.Tensor([2, 2], ms.int32), ms.Tensor([[0, 0], [0, 0]], ms.int32)), shapes=[(4, 1, 1, 1)], **ASCEND_ONLY),
    op("mindspore.ops.ScatterNonAliasingAdd", lambda ms, x, i, u: ms.ops.ScatterNonAliasingAdd()(
        ms.Parameter(x, name="x"), i, u), shapes=[[(4,), IDX([[0], [1]]), (2,)]], **ASCEND_ONLY),
    op("mindspore.ops.zero_", _inplace(_f("zero_")), shapes=[M23], **ASCEND_ONLY),
    op("mindspore.ops.tanh_", _inplace(_f("tanh_")), shapes=[M23], **ASCEND_ONLY),
    op("mindspore.ops.erfinv_", _inplace(_f("erfinv_")), shapes=[T(M23, low=-0.9, high=0.9)], **ASCEND_ONLY),
    op("mindspore.ops.inplace_sigmoid", _inplace(_f("inplace_sigmoid")), shapes=[M23], **ASCEND_ONLY),
    op("mindspore.ops.clamp_", _inplace(_f("clamp_")), shapes=[[M23, Py(-0.5), Py(1.0)]], **ASCEND_ONLY),
    op("mindspore.ops.stop_gradient_", _inplace(_f("stop_gradient_")), shapes=[M23], **ASCEND_ONLY),
    op("mindspore.ops.put_", _inplace(_f("put_")), shapes=[[M23, IDX([0, 5]), (2,)]], **ASCEND_ONLY),
    op("mindspore.Tensor.put_", _inplace(_m("put_")), shapes=[[M23, IDX([4, 1]), (2,)]], **ASCEND_ONLY),
    op("mindspore.Tensor.index_copy_", _inplace(_m("index_copy_")), shapes=[[M23, Py(1), IDX([2, 0]), (2, 2)]],
       **ASCEND_ONLY),
    # primitives as functions
    op("mindspore.ops.reshape_", _f("reshape_"), shapes=[[M23, Py((3, 2))]]),
    op("mindspore.ops.shape_", _f("shape_"), shapes=[M23], grad=False, graph=False),
    op("mindspore.ops.tensor_slice", _f("tensor_slice"), shapes=[[M23, Py((0, 1)), Py((2, 2))]]),
    op("mindspore.ops.view_as", _f("view_as"), shapes=[[M23, (3, 2)]], grad=False),
    # Tensor methods
    op("mindspore.Tensor.scatter_sub", _m("scatter_sub"), shapes=[[M23, IDX([[0, 1]]), (1,)]], grad=False),
    op("mindspore.Tensor.choose", lambda ms, x, a, b, c, **kw: x.choose((a, b, c), **kw),
       shapes=[[IDX([2, 0, 1, 5]), T(values=[1.5, 2.0, 3.0, 4.0]), (4,), (4,)]],
       kwargs=[{}, {"mode": "wrap"}], grad=False),
    op("mindspore.Tensor.itemset", lambda ms, x, *args: x.itemset(*args),
       shapes=[[M23, Py((0, 1)), Py(9.0)], [M23, Py(4), Py(9.5)]], grad=False, graph=False),
    op("mindspore.Tensor.new_empty", lambda ms, x, size: x.new_empty(size).shape, shapes=[[M23, Py((2, 2))]],
       grad=False, graph=False),
]
