"""Specs of the round-3 breadth family ``nn3``: nn and array functions and primitives (InTopK, Dense,
batch_dot, sequence_mask, PadV3, LogSpace, ...), the in-place functionals and the Tensor methods they
bring. Several are Ascend-only kernels in MindSpore 2.10 (its CPU build raises "The kernel X
unregistered"): those specs carry an ``oracle``, a MindSpore CPU equivalent with the same semantics (each
note names it), and tests/test_nn3.py checks the emulator's values against numpy too (float32 first: every
(op, dtype) is a cold kernel build)."""
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


def _no_cpu(oracle: str, kernel: str) -> str:
    """A spec's note: which oracle answered, and the kernel MindSpore 2.10 CPU lacks."""
    return f"oracle: {oracle} ({kernel} has no CPU kernel in MindSpore 2.10)"


def _add_layer_norm_oracle(ms, x1, x2, gamma, beta, epsilon=1e-5, additional_output=False):
    """AddLayerNormV2 as its documented formula on CPU ops: the real LayerNorm primitive of x1 + x2 (over the
    last axis) gives y, mean and the variance; rstd = 1 / sqrt(variance + epsilon); and x1 + x2 itself. Its
    gradient is MindSpore's AddLayerNormV2 bprop's (AddLayerNormGrad): LayerNorm's of dy (which ignores the
    mean's and variance's gradients, as AddLayerNormGrad ignores mean's and rstd's), plus x's gradient only
    with additional_output."""
    x = x1 + x2
    y, mean, variance = ms.ops.LayerNorm(-1, -1, epsilon)(x, gamma, beta)
    sg = ms.ops.stop_gradient
    return y, sg(mean), sg(ms.ops.rsqrt(variance + epsilon)), x if additional_output else sg(x)


def _conv_transpose2d_oracle(ms, x, weight, stride=1):
    """conv_transpose2d (no padding, groups 1): the Conv2DTranspose primitive (Conv2DBackpropInput, whose
    out_channel is its forward convolution's: the weight's first dimension) with the output size
    (H - 1) * stride + k."""
    k = tuple(weight.shape[2:])
    size = (x.shape[0], weight.shape[1]) + tuple((h - 1) * stride + kh for h, kh in zip(x.shape[2:], k))
    return ms.ops.Conv2DTranspose(weight.shape[0], k, pad_mode="valid", stride=stride)(x, weight, size)


def _put_oracle(ms, x, index, source):
    """put_ (accumulate False): the flattened input's elements at index replaced by source's, in order."""
    flat = ms.ops.tensor_scatter_update(x.reshape(-1), index.reshape(-1, 1), source.reshape(-1))
    return flat.reshape(x.shape)


def _index_copy_oracle(ms, x, dim, index, source):
    """index_copy_ along dim 1 of a matrix: the transposed rows replaced by tensor_scatter_update."""
    assert dim == 1 and len(x.shape) == 2
    out = ms.ops.tensor_scatter_update(x.T, index.reshape(-1, 1), source.T)
    return out.T

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
    op("mindspore.ops.add_layer_norm", _f("add_layer_norm"), shapes=[[M23, M23, ONES3, ZEROS3]],
       kwargs=[{}, {"additional_output": True}],
       oracle=_add_layer_norm_oracle, note=_no_cpu("the LayerNorm primitive of x1 + x2, rstd from its variance",
                                                    "AddLayerNormV2")),
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
    # Ascend-only kernels on MindSpore 2.10 CPU: oracles (values also checked against numpy in tests/test_nn3.py)
    op("mindspore.ops.embedding", _f("embedding"), shapes=[[IDX([[0, 1], [3, 1]]), (4, 3)]],
       oracle=lambda ms, i, w: ms.ops.gather(w, i, 0), note=_no_cpu("ops.gather of the weight's rows", "Embedding")),
    op("mindspore.ops.baddbmm_ext", _f("baddbmm_ext"), shapes=[[(1, 2, 2), (1, 2, 3), (1, 3, 2)]],
       oracle=lambda ms, x, a, b: ms.ops.baddbmm(x, a, b), note=_no_cpu("ops.baddbmm", "Baddbmm")),
    op("mindspore.ops.einsum_ext", lambda ms, a, b: ms.ops.einsum_ext("ij,kj->ik", a, b), shapes=[[M23, M23]],
       oracle=lambda ms, a, b: ms.ops.matmul(a, b.T),
       note=_no_cpu("ops.matmul(a, b.T), the equation's product ('ij,kj->ik')", "einsum_ext (and Einsum)")),
    op("mindspore.ops.adaptive_avg_pool2d_ext", _f("adaptive_avg_pool2d_ext"), shapes=[[(1, 1, 4, 4), Py((2, 2))]],
       oracle=lambda ms, x, size: ms.ops.adaptive_avg_pool2d(x, size),
       note=_no_cpu("ops.adaptive_avg_pool2d", "AdaptiveAvgPool2DExt")),
    op("mindspore.ops.mse_loss_ext", _f("mse_loss_ext"), shapes=[[M23, M23]],
       oracle=lambda ms, a, b: ms.ops.mse_loss(a, b), note=_no_cpu("ops.mse_loss", "MSELossExt")),
    op("mindspore.ops.conv_transpose2d", _f("conv_transpose2d"), shapes=[[(1, 2, 2, 2), (2, 1, 2, 2)]],
       kwargs=[{"stride": 2}], oracle=_conv_transpose2d_oracle,
       note=_no_cpu("the Conv2DTranspose primitive", "ConvTranspose2D")),
    op("mindspore.ops.LerpScalar", lambda ms, a, b, w: ms.ops.LerpScalar()(a, b, w), shapes=[[M23, M23, Py(0.25)]],
       oracle=lambda ms, a, b, w: ms.ops.lerp(a, b, w), note=_no_cpu("ops.lerp with a float weight", "LerpScalar")),
    op("mindspore.ops.LogSoftmaxExt", lambda ms, x, **kw: ms.ops.LogSoftmaxExt()(x, **kw), shapes=[M23],
       kwargs=[{"dim": 1}], oracle=lambda ms, x, dim: ms.ops.log_softmax(x, dim),
       note=_no_cpu("ops.log_softmax", "LogSoftmaxExt")),
    op("mindspore.ops.type_as", _f("type_as"), shapes=[[M23, T((2,), dtype="int32")]],
       oracle=lambda ms, x, other: ms.ops.cast(x, other.dtype), note=_no_cpu("ops.cast to other's dtype", "TypeAs")),
    op("mindspore.ops.BatchToSpaceNDV2", lambda ms, x: ms.ops.BatchToSpaceNDV2()(
        x, ms.Tensor([2, 2], ms.int32), ms.Tensor([[0, 0], [0, 0]], ms.int32)), shapes=[(4, 1, 1, 1)],
       oracle=lambda ms, x: ms.ops.BatchToSpaceND((2, 2), [[0, 0], [0, 0]])(x),
       note=_no_cpu("BatchToSpaceND with the same block shape and crops", "BatchToSpaceNDV2")),
    op("mindspore.ops.ScatterNonAliasingAdd", lambda ms, x, i, u: ms.ops.ScatterNonAliasingAdd()(
        ms.Parameter(x, name="x"), i, u), shapes=[[(4,), IDX([[0], [1]]), (2,)]], **ASCEND_ONLY,
       oracle=lambda ms, x, i, u: ms.ops.tensor_scatter_add(x, i, u),
       note=_no_cpu("ops.tensor_scatter_add", "ScatterNonAliasingAdd")),
    op("mindspore.ops.zero_", _inplace(_f("zero_")), shapes=[M23], **ASCEND_ONLY,
       oracle=lambda ms, x: ms.ops.zeros_like(x), note=_no_cpu("ops.zeros_like", "InplaceZero")),
    op("mindspore.ops.tanh_", _inplace(_f("tanh_")), shapes=[M23], **ASCEND_ONLY,
       oracle=lambda ms, x: ms.ops.tanh(x), note=_no_cpu("ops.tanh", "InplaceTanh")),
    op("mindspore.ops.erfinv_", _inplace(_f("erfinv_")), shapes=[T(M23, low=-0.9, high=0.9)], **ASCEND_ONLY,
       oracle=lambda ms, x: ms.ops.erfinv(x), note=_no_cpu("ops.erfinv", "InplaceErfinv")),
    op("mindspore.ops.inplace_sigmoid", _inplace(_f("inplace_sigmoid")), shapes=[M23], **ASCEND_ONLY,
       oracle=lambda ms, x: ms.ops.sigmoid(x), note=_no_cpu("ops.sigmoid", "InplaceSigmoid")),
    op("mindspore.ops.clamp_", _inplace(_f("clamp_")), shapes=[[M23, Py(-0.5), Py(1.0)]], **ASCEND_ONLY,
       oracle=lambda ms, x, lo, hi: ms.ops.clamp(x, lo, hi), note=_no_cpu("ops.clamp", "InplaceClampScalar")),
    op("mindspore.ops.stop_gradient_", _inplace(_f("stop_gradient_")), shapes=[M23], **ASCEND_ONLY,
       oracle=lambda ms, x: ms.ops.stop_gradient(x),
       note=_no_cpu("ops.stop_gradient (the values unchanged)", "InplaceStopGradient")),
    op("mindspore.ops.put_", _inplace(_f("put_")), shapes=[[M23, IDX([0, 5]), (2,)]], **ASCEND_ONLY,
       oracle=_put_oracle, note=_no_cpu("ops.tensor_scatter_update of the flattened input", "InplacePut")),
    op("mindspore.Tensor.put_", _inplace(_m("put_")), shapes=[[M23, IDX([4, 1]), (2,)]], **ASCEND_ONLY,
       oracle=_put_oracle, note=_no_cpu("ops.tensor_scatter_update of the flattened input", "InplacePut")),
    op("mindspore.Tensor.index_copy_", _inplace(_m("index_copy_")), shapes=[[M23, Py(1), IDX([2, 0]), (2, 2)]],
       **ASCEND_ONLY, oracle=_index_copy_oracle,
       note=_no_cpu("ops.tensor_scatter_update of the transposed input", "InplaceIndexCopy")),
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
