"""Names the census of issue 10 found missing (UNet, YOLOv5, SSD, mindcv's ViT, LSTM): the dtypes
MindSpore exposes at top level, SigmoidCrossEntropyWithLogits, Sort, GatherD / gather_elements (and
its backward GatherDGrad), TupleToArray, scalar_to_tensor, DType, Identity / identity,
clip_by_global_norm, SmoothL1Loss, nn.OneHot, nn.CentralCrop, dataset.vision.Pad and JitConfig.

Forward results on the emulated device against numpy and against the values real MindSpore 2.10
(CPU) printed for the same inputs (the ``MS_*`` constants); backward rules against numpy adjoints and
central finite differences (tests/gradcheck.py); bad input raises a typed error with its ACL code.
"""
from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_grads_close, autodiff_grads, numeric_grads
from test_grad_movement import check_rule
from test_ops import kernel, launch, sig

import ascendemu.frontend as ms
from ascendemu.errors import ACL_ERROR_INVALID_PARAM, InvalidParamError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.frontend.common import JitConfig
from ascendemu.frontend.dataset import transforms, vision
from ascendemu.frontend.dataset.vision import Border
from ascendemu.frontend.ops import composite as C
from ascendemu.frontend.ops import functional as F
from ascendemu.frontend.ops import operations as P
from ascendemu.kernels.library import infer_outputs

RNG = np.random.default_rng(1010)


def T(a):
    return Tensor(a)


def stable_sigmoid_ce(x, y):
    return np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))


def sort_ref(x, axis, descending):
    """numpy's stable sort with MindSpore's order: ascending NaN last, descending NaN first."""
    x64 = x.astype(np.float64)
    key = np.where(np.isnan(x64), -np.inf, -x64) if descending else np.where(np.isnan(x64), np.inf, x64)
    order = np.argsort(key, axis=axis, kind="stable")
    return np.take_along_axis(x, order, axis), order.astype(np.int32)


def gather_d_ref(x, dim, index):
    """take_along_axis over index's extent; negative indices count from the end, others outside [-n, n) read 0."""
    n = x.shape[dim]
    wrapped = np.where(index < 0, index + n, index)
    valid = (wrapped >= 0) & (wrapped < n)
    window = x[tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(index.shape))]
    return np.where(valid, np.take_along_axis(window, np.where(valid, wrapped, 0), dim), 0).astype(x.dtype)


def gather_d_adjoint(shape, dim, index, ct):
    g = np.zeros(shape)
    n = shape[dim]
    wrapped = np.where(index < 0, index + n, index)
    coords = list(np.indices(index.shape))
    valid = (wrapped >= 0) & (wrapped < n)
    coords[dim] = wrapped
    np.add.at(g, tuple(c[valid] for c in coords), ct[valid])
    return g


def smooth_l1_ref(x, y, beta):
    d = np.abs(x.astype(np.float64) - y)
    return d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


# ------------------------------------------------------------------------------------------- dtypes

def test_every_top_level_number_dtype_exists_prints_like_mindspore_and_lives_on_the_device(ex):
    labels = {ms.int8: "Int8", ms.int16: "Int16", ms.int64: "Int64", ms.uint8: "UInt8", ms.uint16: "UInt16",
              ms.uint32: "UInt32", ms.uint64: "UInt64", ms.float64: "Float64", ms.complex64: "Complex64",
              ms.complex128: "Complex128", ms.bfloat16: "BFloat16", ms.bool_: "Bool"}
    assert {str(t) for t in labels} == set(labels.values())          # repr: "mindspore.int8" (MindSpore 2.10's)
    assert all(repr(t) == f"mindspore.{t.name}" for t in labels) and repr(ms.bool_) == "mindspore.bool"
    assert ms.long == ms.int64 and ms.byte == ms.int8 and ms.ubyte == ms.uint8 and ms.double == ms.float64
    assert ms.intc == ms.int32 and ms.uintp == ms.uint64 and ms.cfloat == ms.complex64 and ms.half == ms.float16
    assert ms.dtype_to_nptype(ms.int8) is np.int8 and ms.dtype.dtype_to_nptype(ms.uint16) is np.uint16
    # a Tensor keeps its dtype, as MindSpore's does (the device serves every number dtype)
    for dtype in (ms.int8, ms.uint8, ms.int16, ms.int64, ms.float64, ms.uint32):
        t = Tensor([[1, -2], [3, 4]] if dtype not in (ms.uint8, ms.uint32) else [[1, 2], [3, 250]], dtype)
        assert t.dtype == dtype and t.asnumpy().dtype == dtype.np_type
    assert ms.numpy.zeros((2, 3), ms.int8).dtype == ms.int8
    assert ops.cast(T(np.array([1.7, -2.2], np.float32)), ms.int64).asnumpy().tolist() == [1, -2]
    # the host pipeline casts to the type itself
    assert transforms.TypeCast(ms.uint8)(np.array([1.7, 200.0])).dtype == np.uint8
    assert Tensor([1], ms.complex64).asnumpy().dtype == np.complex64      # a device dtype (test_complex_fft.py)


# ------------------------------------------------------------------------ SigmoidCrossEntropyWithLogits

MS_SCE_X = np.array([[-100.0, -2, 0.5, 3, 100]], np.float32)
MS_SCE_Y = np.array([[0.0, 1, 0.3, 1, 0]], np.float32)
MS_SCE = [3.7835059e-44, 2.1269281, 0.82407701, 0.048587352, 100.0]
MS_SCE_DX2 = [7.56701171e-44, -1.76159418, 0.64491868, -0.0948517323, 2.0]      # d sum(2 * loss) / d logits


def test_sigmoid_cross_entropy_is_stable_and_differentiates_like_mindspore(ex):
    sce = ops.SigmoidCrossEntropyWithLogits()
    got = sce(T(MS_SCE_X), T(MS_SCE_Y)).asnumpy()
    np.testing.assert_allclose(got[0], MS_SCE, rtol=1e-6, atol=1e-44)
    x, y = RNG.standard_normal((1, 5)).astype(np.float32) * 4, RNG.random((1, 5)).astype(np.float32)
    np.testing.assert_allclose(sce(T(x), T(y)).asnumpy(), stable_sigmoid_ce(x, y), rtol=1e-5, atol=1e-6)
    half = sce(T(x.astype(np.float16)), T(y.astype(np.float16)))
    assert half.dtype == ms.float16
    np.testing.assert_allclose(half.asnumpy(), stable_sigmoid_ce(x.astype(np.float16), y.astype(np.float16)),
                               rtol=2e-3, atol=2e-3)
    dx, dy = ms.grad(lambda a, b: (sce(a, b) * 2).sum(), grad_position=(0, 1))(T(MS_SCE_X), T(MS_SCE_Y))
    np.testing.assert_allclose(dx.asnumpy()[0], MS_SCE_DX2, rtol=1e-6, atol=1e-37)
    assert not dy.asnumpy().any()                                    # the label gets zeros, as in MindSpore
    check_rule(ex, "SigmoidCrossEntropyWithLogits", [x, y], {}, stable_sigmoid_ce,
               lambda ct: [ct * (1 / (1 + np.exp(-x.astype(np.float64))) - y), None])
    with pytest.raises(InvalidParamError, match=r"label\) has shape \(1, 1\); it must have logits' shape"):
        sce(T(MS_SCE_X), T(np.ones((1, 1), np.float32)))
    with pytest.raises(InvalidParamError, match="input 1 has dtype float16 but input 0 has float32"):
        sce(T(MS_SCE_X), T(MS_SCE_Y.astype(np.float16)))
    with pytest.raises(InvalidParamError, match="has dtype int32; supported dtypes are"):
        sce(T(np.ones(3, np.int32)), T(np.ones(3, np.int32)))


# -------------------------------------------------------------------------------------------- Sort

XN = RNG.permutation(24).reshape(4, 6).astype(np.float32) / 4 - 3
XN[1, 2], XN[2, 4], XN[3, 0], XN[0, 5] = np.nan, XN[2, 1], XN[1, 0], -np.inf      # NaN, ties across rows/columns


@pytest.mark.parametrize("axis, descending, dtype", [(-1, False, "float32"), (0, True, "float32"),
                                                     (1, True, "int32")])
def test_sort_matches_a_stable_numpy_sort(ex, axis, descending, dtype):
    x = np.nan_to_num(XN * 4, neginf=-99).astype(np.int32) if dtype == "int32" else XN.astype(dtype)
    values, indices = (ops.Sort(axis, descending)(T(x)) if descending
                       else ops.sort(T(x), axis=axis))
    want_v, want_i = sort_ref(x, axis, descending)
    assert values.asnumpy().dtype == x.dtype and indices.dtype == ms.int32
    np.testing.assert_array_equal(values.asnumpy(), want_v)
    np.testing.assert_array_equal(indices.asnumpy(), want_i)


def test_sort_values_mindspore_printed_and_its_gradient(ex):
    x = np.array([[3, 1, 1, 2], [0, 5, 5, 0]], np.float16)
    v, i = ops.Sort(axis=0)(T(x))
    assert v.asnumpy().tolist() == [[0, 1, 1, 0], [3, 5, 5, 2]] and i.asnumpy().tolist() == [[1, 0, 0, 1], [0, 1, 1, 0]]
    v, i = ops.sort(T(x), axis=0, descending=True)
    assert v.asnumpy().tolist() == [[3, 5, 5, 2], [0, 1, 1, 0]] and i.asnumpy().tolist() == [[0, 1, 1, 0], [1, 0, 0, 1]]
    w = np.arange(8, dtype=np.float32).reshape(2, 4)
    g = ms.grad(lambda a: (ops.Sort()(a)[0] * T(w)).sum())(T(x.astype(np.float32)))
    assert g.asnumpy().tolist() == [[3, 0, 1, 2], [4, 6, 7, 5]]

    def adjoint(x, axis, descending, ct):
        out = np.zeros(x.shape)
        np.put_along_axis(out, sort_ref(x, axis, descending)[1], ct, axis)
        return out

    xs = RNG.permutation(60).reshape(3, 4, 5).astype(np.float32) / 7     # distinct: no ties at the kinks
    check_rule(ex, "Sort", [xs], dict(axis=1, descending=True), lambda a: sort_ref(a, 1, True)[0],
               lambda ct: [adjoint(xs, 1, True, ct)])


def test_sort_rejects_bad_arguments():
    with pytest.raises(InvalidParamError, match=r"Sort: attr axis=2 is out of range for rank 2 \(valid: -2..1\)"):
        ops.Sort(axis=2)(T(XN))
    with pytest.raises(InvalidParamError, match="Sort: axis"):
        ops.Sort(axis=1.0)
    with pytest.raises(InvalidParamError, match="descending=1 must be a bool"):
        ops.Sort(descending=1)
    with pytest.raises(InvalidParamError, match="must have rank >= 1, got a scalar"):
        ops.Sort()(T(np.float32(3)))


# ----------------------------------------------------------------------------------------- GatherD

XG = np.arange(12, dtype=np.float32).reshape(3, 4)
MS_GATHER = [  # (dim, index, what MindSpore 2.10 returned)
    (1, [[0, -1], [3, 1], [2, 2]], [[0, 3], [7, 5], [10, 10]]),
    (0, [[0, 0, 1], [2, 1, 0]], [[0, 1, 6], [8, 5, 2]]),
    (1, [[0, 1], [3, 1]], [[0, 1], [7, 5]]),                                       # smaller than x
    (-1, [[0, 1, 2, 3, 0], [3, 1, 1, 1, 1], [0, 0, 0, 0, 0]], [[0, 1, 2, 3, 0], [7, 5, 5, 5, 5], [8, 8, 8, 8, 8]]),
]


@pytest.mark.parametrize("case", range(len(MS_GATHER)))
def test_gather_elements_gives_what_mindspore_gave(ex, case):
    dim, index, want = MS_GATHER[case]
    index = np.array(index, np.int32)
    out = (ops.gather_elements, ops.gather_d, ops.GatherD())[case % 3](T(XG), dim, T(index))
    assert out.asnumpy().tolist() == want
    np.testing.assert_array_equal(out.asnumpy(), gather_d_ref(XG, dim % 2, index))


def test_gather_elements_over_ranks_dtypes_and_out_of_range_indices(ex):
    x3 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    drawn = RNG.integers(-6, 7, (2, 6, 5)).astype(np.int32)        # larger along dim 1, smaller along dim 0
    with pytest.raises(RuntimeError, match=r"For 'GatherD', the value of 'index' must be in \[-4, 4\)"):
        ops.gather_elements(T(x3), 1, T(drawn)).asnumpy()           # MindSpore's error, not zeros
    index = np.clip(drawn, -4, 3)                                   # every index in range, negatives too
    np.testing.assert_array_equal(ops.gather_elements(T(x3), 1, T(index)).asnumpy(), gather_d_ref(x3, 1, index))
    xi = RNG.integers(-9, 9, (3, 4, 5)).astype(np.int32)
    index0 = RNG.integers(-3, 3, (3, 2, 5)).astype(np.int32)
    np.testing.assert_array_equal(ops.GatherD()(T(xi), 0, T(index0)).asnumpy(), gather_d_ref(xi, 0, index0))


def test_gather_elements_gradient_scatter_adds_like_mindspore(ex):
    index = np.array([[0, 0, 1], [3, 3, 3], [2, 1, 2]], np.int32)
    w = np.arange(9, dtype=np.float32).reshape(3, 3)
    g = ms.grad(lambda a: (ops.gather_elements(a, 1, T(index)) * T(w)).sum())(T(XG))
    assert g.asnumpy().tolist() == [[1, 2, 0, 0], [0, 0, 0, 12], [0, 7, 14, 0]]          # MindSpore's
    x3 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    index = RNG.integers(-4, 6, (2, 7, 5)).astype(np.int32)       # negative, out of range, smaller, larger
    check_rule(ex, "GatherD", [x3, index], dict(dim=1), lambda a, i: gather_d_ref(a, 1, i),
               lambda ct: [gather_d_adjoint(x3.shape, 1, index, ct), None])
    # GatherDGrad is linear in dout; its own rule gathers the incoming gradient back
    index = RNG.integers(-4, 4, (3, 6, 5)).astype(np.int32)
    dout = RNG.standard_normal((3, 6, 5)).astype(np.float32)
    check_rule(ex, "GatherDGrad", [index, dout], dict(dim=1, shape=(3, 4, 5)),
               lambda i, d: gather_d_adjoint((3, 4, 5), 1, i, d).astype(d.dtype),
               lambda ct: [None, gather_d_ref(ct, 1, index)])


def test_gather_d_grad_blocks_own_their_lines_and_sum_deterministically():
    """A dx large enough for several blocks: any block order (or threads) gives the same bits, each
    block writes only its lines, and the sums are np.add.at's in index order (float32)."""
    shape, index = (512, 300), RNG.integers(-300, 300, (512, 400)).astype(np.int32)
    index[:, :40] = 7                                                          # a heavily repeated target
    dout = RNG.standard_normal(index.shape).astype(np.float32)
    s = sig("GatherDGrad", [index, dout], dim=1, shape=shape)
    assert kernel(s).block_dim > 1
    (full,) = launch(s, [index, dout])
    np.testing.assert_allclose(full, gather_d_adjoint(shape, 1, index, dout), rtol=1e-5, atol=1e-5)
    (shuffled,) = launch(s, [index, dout], blocks=list(RNG.permutation(kernel(s).block_dim)), threads=4)
    np.testing.assert_array_equal(shuffled, full)
    owner = np.zeros(full.size, np.int64)
    for b in range(kernel(s).block_dim):
        (part,) = launch(s, [index, dout], blocks=[b], sentinel=True)
        mine = part.reshape(-1).view(np.uint32) != np.uint32(0xFFFFFFFF)
        owner += mine
    assert (owner == 1).all()


@pytest.mark.parametrize("args, message", [
    ((XG, 1, np.array([0, 1], np.int32)), r"index shape \(2,\) must have the rank of x \(3, 4\)"),
    ((XG, 1, np.zeros((4, 1), np.int32)), r"larger than x \(3, 4\) in dimension 0; only dimension 1"),
    ((XG, 2, np.zeros((3, 1), np.int32)), r"attr dim=2 is out of range for rank 2"),
    ((XG, 1, np.zeros((3, 1), np.float32)), r"input 1 \(index\) has dtype float32"),
])
def test_gather_elements_rejects_bad_arguments(args, message):
    x, dim, index = args
    with pytest.raises(InvalidParamError, match=message):
        ops.gather_elements(T(x), dim, T(index))


# ---------------------------------------------------------------- TupleToArray, scalar_to_tensor, DType

def test_tuple_to_array_scalar_to_tensor_and_dtype(ex):
    a, b = ops.TupleToArray()((1, 2, 3)), ops.tuple_to_array((1.5, 2.5))
    assert (a.dtype, a.asnumpy().tolist(), b.dtype, b.asnumpy().tolist()) == (ms.int32, [1, 2, 3], ms.float32,
                                                                               [1.5, 2.5])
    r = ops.TupleToArray()(range(4))           # a range is the tuple of its numbers (zoo scripts pass one)
    assert (r.dtype, r.asnumpy().tolist()) == (ms.int32, [0, 1, 2, 3])
    # MindSpore's own errors for a list and an empty tuple
    with pytest.raises(TypeError, match="For 'TupleToArray', the type of 'x' should be 'tuple', but got type 'list'"):
        ops.TupleToArray()([1, 2])
    with pytest.raises(ValueError, match="the size of x should be > : 0, but got 0"):
        ops.TupleToArray()(())
    for bad in (("a",), (True, False), ((1, 2),), (1, 2.5)):
        with pytest.raises(InvalidParamError, match="TupleToArray: input_x="):
            ops.TupleToArray()(bad)
    for value, dtype, want in ((3, ms.float32, 3.0), (2.5, ms.int32, 2), (True, ms.float32, 1.0),
                               (7, ms.float16, 7.0)):
        t = ops.scalar_to_tensor(value, dtype) if dtype != ms.float32 else F.scalar_to_tensor(value)
        assert t.shape == () and t.dtype == dtype and t.item() == want
    with pytest.raises(InvalidParamError, match="must be a bool, an int or a float, got Tensor"):
        ops.scalar_to_tensor(T(np.float32(1)))
    with pytest.raises(InvalidParamError, match="dtype='float32' must be a mindspore number type"):
        ops.scalar_to_tensor(1, "float32")
    ints = T(np.ones(2, np.int32))
    assert ops.DType()(T(XG)) == ms.float32 and F.dtype(ints) == ms.int32 and ops.dtype(ints) is ms.int32
    assert ops.dtype is F.dtype and isinstance(ops.dtype, ops.DType)
    with pytest.raises(InvalidParamError, match="DType: x must be a Tensor, got float"):
        ops.DType()(1.0)
    # a Fill from DType and Shape, as SSD's training wrapper builds its sens
    sens = ops.Fill()(ops.DType()(T(XG)), ops.Shape()(T(XG)), 2.0)
    assert sens.dtype == ms.float32 and sens.shape == (3, 4) and (sens.asnumpy() == 2).all()


def test_identity_names(ex, restore_context):
    x = T(XG)
    assert isinstance(P.identity, type) and isinstance(ops.identity, P.identity) and F.identity is ops.identity
    assert P.identity()(x) is x and ops.identity(x) is x and repr(ops.identity) == "Prim[identity]"
    y = ops.Identity()(x)
    assert y is not x and y.asnumpy().tolist() == XG.tolist()
    graph, _ = ms.capture(lambda t: ops.Identity()(t) * 2, x)
    assert [n.op for n in graph.nodes] == ["Reshape", "Mul"]                  # a no-task op: no kernel
    assert ms.grad(lambda t: (ops.Identity()(t) * t).sum())(x).asnumpy().tolist() == (2 * XG).tolist()


# ------------------------------------------------------------------------------- clip_by_global_norm

def test_clip_by_global_norm_matches_mindspore(ex, restore_context):
    a, b = np.array([[3.0, 4]], np.float32), np.array([12.0], np.float32)
    out = ops.clip_by_global_norm((T(a), T(b)), 1.0)
    assert isinstance(out, tuple) and len(out) == 2
    np.testing.assert_allclose(out[0].asnumpy(), [[0.230769232, 0.307692319]], rtol=1e-6)
    np.testing.assert_allclose(out[1].asnumpy(), [0.923076928], rtol=1e-6)
    same = C.clip_by_global_norm([T(a), T(b)], 100)                          # the norm 13 is below 100
    assert [t.asnumpy().tolist() for t in same] == [[[3, 4]], [12]]
    np.testing.assert_allclose(ops.clip_by_global_norm(T(a)).asnumpy(), [[0.6, 0.8]], rtol=1e-6)
    half = ops.clip_by_global_norm((T(a.astype(np.float16)), T(b)), T(np.float32(1.0)))
    assert half[0].dtype == ms.float16
    np.testing.assert_array_equal(half[0].asnumpy(), np.array([[0.2307, 0.3076]], np.float16))     # MindSpore's
    zeros = ops.clip_by_global_norm((T(a * 0), T(b * 0)))
    assert not zeros[0].asnumpy().any() and not zeros[1].asnumpy().any()
    grads = [RNG.standard_normal(s).astype(np.float32) for s in ((1, 2), (1,))]
    norm = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads))
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})

    class Clip(nn.Cell):
        def construct(self, *gs):
            return ops.clip_by_global_norm(gs, 0.5)

    for got, g in zip(Clip()(*map(T, grads)), grads):
        np.testing.assert_allclose(got.asnumpy(), g * 0.5 / max(norm, 0.5), rtol=1e-5)
    with pytest.raises(InvalidParamError, match="use_norm only supports None"):
        ops.clip_by_global_norm((T(a),), 1.0, 26.0)
    for bad in (0.0, -1.0, True, "1"):
        with pytest.raises(InvalidParamError, match="clip_norm=.* must be a number > 0"):
            ops.clip_by_global_norm((T(a),), bad)


# ----------------------------------------------------------------------------------- SmoothL1Loss

MS_L1_X, MS_L1_Y = np.array([1.0, 2, 3, -0.2], np.float32), np.array([1.0, 2.5, 1, 0.3], np.float32)


def test_smooth_l1_loss_matches_mindspore_and_numpy(ex):
    x, y = T(MS_L1_X), T(MS_L1_Y)
    assert nn.SmoothL1Loss()(x, y).asnumpy().tolist() == [0, 0.125, 1.5, 0.125]
    assert nn.SmoothL1Loss(beta=2.0, reduction="mean")(x, y).item() == 0.28125
    assert ops.smooth_l1_loss(x, y, 0.5, "sum").item() == 2.25 == ops.SmoothL1Loss(0.5, "sum")(x, y).item()
    a, b = RNG.standard_normal(4).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
    for beta in (1, 0.3, 0.0):
        np.testing.assert_allclose(ops.smooth_l1_loss(T(a), T(b), beta).asnumpy(), smooth_l1_ref(a, b, beta),
                                   rtol=1e-6, atol=1e-7)
    mixed = ops.smooth_l1_loss(x, T(MS_L1_Y.astype(np.float16)))
    assert mixed.dtype == ms.float32                                        # promoted, as in MindSpore
    dx, dy = ms.grad(lambda p, q: ops.smooth_l1_loss(p, q, 1.0, "sum"), grad_position=(0, 1))(x, y)
    assert dx.asnumpy().tolist() == [0, -0.5, 1, -0.5] and dy.asnumpy().tolist() == [0, 0.5, -1, 0.5]
    got = ms.grad(lambda p: ops.smooth_l1_loss(p, T(b), 0.7, "mean"))(T(a)).asnumpy()
    assert_grads_close([got], numeric_grads(lambda p: smooth_l1_ref(p, b, 0.7).mean(), [a], np.ones(())))


@pytest.mark.parametrize("make, message", [
    (lambda: nn.SmoothL1Loss(beta=-1.0), r"beta=-1.0 must be >= 0"),
    (lambda: nn.SmoothL1Loss(beta="a"), r"beta='a' must be a float"),
    (lambda: nn.SmoothL1Loss(reduction="avg"), r"reduction='avg' must be one of"),
    (lambda: ops.smooth_l1_loss(T(MS_L1_X), T(np.ones((2, 4), np.float32))), r"input shape \(4,\) and target"),
    (lambda: ops.smooth_l1_loss(T(np.ones(4, np.int32)), T(np.ones(4, np.int32))), "must be float16 or float32"),
])
def test_smooth_l1_loss_rejects_bad_arguments(make, message):
    with pytest.raises(InvalidParamError, match=message):
        make()


# ----------------------------------------------------------------------------- nn.OneHot, CentralCrop

def test_one_hot_layer(ex):
    idx = T(np.array([[1, 0], [3, -1]], np.int32))
    hot = nn.OneHot(axis=0, depth=4, on_value=5.0, off_value=-1.0)(idx)
    assert hot.dtype == ms.float32 and hot.asnumpy().tolist() == [
        [[-1, 5], [-1, -1]], [[5, -1], [-1, -1]], [[-1, -1], [-1, -1]], [[-1, -1], [5, -1]]]    # MindSpore's
    for dtype in (ms.float16, ms.int32):
        out = nn.OneHot(depth=3, dtype=dtype)(idx)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out.asnumpy(), (np.array([[1, 0], [3, -1]])[..., None] == np.arange(3)))
    assert nn.OneHot(depth=0)(idx).shape == (2, 2, 0)
    with pytest.raises(InvalidParamError, match="OneHot: axis"):
        nn.OneHot(axis=-2, depth=3)
    with pytest.raises(InvalidParamError, match=r"input 0 \(indices\) has dtype float32"):
        nn.OneHot(depth=3)(T(np.array([1.0], np.float32)))


def test_central_crop(ex):
    img = np.arange(48, dtype=np.float32).reshape(2, 1, 4, 6)
    assert nn.CentralCrop(0.3)(T(img)).asnumpy()[0, 0].tolist() == [[8, 9], [14, 15]]          # MindSpore's
    assert nn.CentralCrop(0.5)(T(img[0])).asnumpy().tolist() == [[[7, 8, 9, 10], [13, 14, 15, 16]]]
    for fraction in (0.7, 1.0):
        assert nn.CentralCrop(fraction)(T(img)).shape == (2, 1, 4, 6)
    h, w = 37, 50
    for fraction in RNG.uniform(0.05, 1.0, 5):                   # MindSpore's box, one Slice (captured, not run)
        top, left = int((h - h * fraction) / 2), int((w - w * fraction) / 2)
        graph, _ = ms.capture(nn.CentralCrop(float(fraction)), T(np.zeros((3, h, w), np.float32)))
        (node,) = graph.nodes
        assert node.op == "Slice" and node.attrs == {"begin": (0, top, left), "size": (3, h - 2 * top, w - 2 * left)}
    for bad, message in ((0.0, r"must be in \(0.0, 1.0\]"), (1.5, r"must be in \(0.0, 1.0\]"),
                         (1, "must be a float, got int")):
        with pytest.raises(InvalidParamError, match=message):
            nn.CentralCrop(bad)
    with pytest.raises(InvalidParamError, match=r"image must be 3d or 4d, but got shape \(4, 6\)"):
        nn.CentralCrop(0.5)(T(img[0, 0]))


# -------------------------------------------------------------------------------- dataset.vision.Pad

IMG = np.arange(18, dtype=np.uint8).reshape(2, 3, 3)
MS_PAD = {  # (padding, fill_value, mode, channel 0 of what MindSpore 2.10 returned)
    "edge": ((1, 0, 2, 1), 0, Border.EDGE, [[0, 0, 3, 6, 6, 6], [9, 9, 12, 15, 15, 15], [9, 9, 12, 15, 15, 15]]),
    "reflect": ((2, 1, 2, 1), 0, Border.REFLECT, [[15, 12, 9, 12, 15, 12, 9], [6, 3, 0, 3, 6, 3, 0],
                                                  [15, 12, 9, 12, 15, 12, 9], [6, 3, 0, 3, 6, 3, 0]]),
    "symmetric": ((2, 1, 2, 1), 0, Border.SYMMETRIC, [[3, 0, 0, 3, 6, 6, 3], [3, 0, 0, 3, 6, 6, 3],
                                                      [12, 9, 9, 12, 15, 15, 12], [12, 9, 9, 12, 15, 15, 12]]),
    "constant": ((1, 0, 2, 1), 7, Border.CONSTANT, [[7, 0, 3, 6, 7, 7], [7, 9, 12, 15, 7, 7], [7, 7, 7, 7, 7, 7]]),
}


@pytest.mark.parametrize("case", list(MS_PAD))
def test_vision_pad_gives_what_mindspore_gave(case):
    padding, fill, mode, want = MS_PAD[case]
    out = vision.Pad(padding, fill_value=fill, padding_mode=mode)(IMG)
    assert out.dtype == np.uint8 and out[:, :, 0].tolist() == want


def test_vision_pad_shapes_fills_and_errors():
    assert vision.Pad(1)(IMG).shape == (4, 5, 3) and vision.Pad([1, 2])(IMG).shape == (6, 5, 3)
    assert vision.Pad((1, 0, 0, 0), fill_value=(1, 2, 3))(IMG).tolist() == [
        [[1, 2, 3], [0, 1, 2], [3, 4, 5], [6, 7, 8]], [[1, 2, 3], [9, 10, 11], [12, 13, 14], [15, 16, 17]]]
    assert vision.Pad(1, fill_value=(4, 2, 3))(IMG[:, :, 0]).tolist() == [
        [4, 4, 4, 4, 4], [4, 0, 3, 6, 4], [4, 9, 12, 15, 4], [4, 4, 4, 4, 4]]   # one channel: the first value
    reflected = vision.Pad(5, padding_mode=Border.REFLECT)(IMG[:, :, 0])
    assert reflected.shape == (12, 13) and reflected[0].tolist() == [12, 9, 12, 15, 12, 9, 12, 15, 12, 9, 12, 15, 12]
    floats = vision.Pad(1, fill_value=3)(IMG.astype(np.float32))
    assert floats.dtype == np.float32 and floats[0, 0].tolist() == [3, 3, 3]
    from PIL import Image
    pil = vision.Pad(1, fill_value=(1, 2, 3))(Image.fromarray(IMG))
    assert isinstance(pil, Image.Image) and np.asarray(pil).shape == (4, 5, 3)
    assert np.asarray(pil)[0, 0].tolist() == [1, 2, 3]
    for kwargs, message in ((dict(padding=-1), "padding"), (dict(padding=(1, 2, 3)), "sequence of 2 or 4 ints"),
                            (dict(padding=1.0), "must be an int"), (dict(padding=True), "must be an int"),
                            (dict(padding=1, fill_value=256), "fill_value"), (dict(padding=1, fill_value=1.5),
                                                                              "int or an"),
                            (dict(padding=1, fill_value=(1, 2)), "int or an"),
                            (dict(padding=1, padding_mode="edge"), "must be a Border")):
        with pytest.raises(InvalidParamError, match=message):
            vision.Pad(**kwargs)
    with pytest.raises(InvalidParamError, match="gives 3 channels a value each"):
        vision.Pad(1, fill_value=(1, 2, 3))(np.zeros((2, 2, 4), np.uint8))


# ------------------------------------------------------------------------------------------ JitConfig

def test_jit_config_options_and_the_levels_cells_and_jit_compile_at(ex, restore_context):
    assert JitConfig(jit_level="O2").jit_config_dict == {"jit_level": "O2", "exc_mode": "auto",
                                                         "jit_syntax_level": "", "debug_level": "RELEASE",
                                                         "infer_boost": "off", "backend": "GE"}
    assert JitConfig(foo=1).jit_config_dict == {"foo": 1, "jit_level": "", "exc_mode": "auto",
                                                "jit_syntax_level": "", "debug_level": "RELEASE", "infer_boost": "off"}
    assert ms.JitConfig is JitConfig and ms.common.jit_config.JitConfig is JitConfig
    for kwargs in (dict(jit_level="O5"), dict(exc_mode="bad"), dict(debug_level="x"), dict(jit_syntax_level="y")):
        with pytest.raises(InvalidParamError, match="JitConfig: .* must be one of"):
            JitConfig(**kwargs)
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O2"})
    net = nn.Dense(4, 3)
    net.set_jit_config(JitConfig(jit_level="O1"))
    net.set_jit_config(JitConfig(jit_level="O0"))                  # set once: ignored, as in MindSpore
    net(T(np.ones((2, 4), np.float32)))
    assert ex.steps[-1].jit_level == "O1"
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    assert train.jit_config_dict["jit_level"] == "O1"                # wrappers compile like their network
    model = ms.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1))
    assert model.train_network.jit_config_dict["jit_level"] == "O1"
    nn.Dense(4, 3)(T(np.ones((2, 4), np.float32)))
    assert ex.steps[-1].jit_level == "O2"                            # another cell: the context's level
    ms.set_context(mode=ms.PYNATIVE_MODE)
    double = ms.jit(lambda t: t * 2, jit_config=JitConfig(jit_level="O0"))
    assert double(T(np.ones(3, np.float32))).asnumpy().tolist() == [2, 2, 2] and ex.steps[-1].jit_level == "O0"
    with pytest.raises(InvalidParamError, match="jit_config must be a mindspore.JitConfig, got dict"):
        net.set_jit_config({"jit_level": "O1"})


def test_gather_d_and_sort_signatures_infer_like_the_front_end():
    (out,) = infer_outputs(sig("GatherD", [XG, np.zeros((2, 7), np.int32)], dim=1))
    assert out.shape == (2, 7) and out.dtype == "float32"
    values, indices = infer_outputs(sig("Sort", [XG], axis=0, descending=True))
    assert values.shape == indices.shape == (3, 4) and indices.dtype == "int32"
    with pytest.raises(InvalidParamError, match=r"dout\) has shape \(2, 2\); it must have index's shape"):
        infer_outputs(sig("GatherDGrad", [np.zeros((2, 3), np.int32), np.zeros((2, 2), np.float32)], dim=0,
                          shape=(3, 3)))
