"""The model zoo's missing ops (issue 10): OneHot, Tile, Argmax/Argmin and their WithValue forms,
ops.max/min, TopK, GatherNd/ScatterNd, StridedSlice and Tensor indexing, Stack/Unstack, Zeros/Ones,
clip_by_value/clamp, ReLU6/HSwish/HSigmoid/LeakyReLU (ops and nn layers), ReduceMin, Shape,
tuple_to_array, Print and the Tensor methods the zoo calls.

Forward results run on the emulated device (PyNative ops and GRAPH_MODE graphs) against numpy; every
backward rule against an analytic numpy adjoint and central finite differences (tests/gradcheck.py);
Tensor indexing in both modes against numpy indexing, for a table of index expressions and for
hypothesis-drawn ones. Inputs share a few shapes so that few kernels are built.
"""
from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_grads_close, autodiff_grads, numeric_grads
from hypothesis import given, settings, strategies as st
from test_grad_movement import check_rule

import ascendemu.frontend as ms
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, TensorIndexError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.graph.capture import GraphCaptureError
from ascendemu.graph.plan import compile_graph
from ascendemu.kernels.library import plan_kernel
from ascendemu.kernels.signature import OpSignature

RNG = np.random.default_rng(10)
X = RNG.permutation(24).reshape(4, 6).astype(np.float32) / 4 - 3      # distinct values: no ties
XS = X + 0.1                                                          # no element at a kink (0, +-3, 6)
XN = X.copy()
XN[1, 2], XN[2, 4], XN[3, 0] = np.nan, X[2, 1], X[3, 5]               # a NaN and ties
XI = RNG.integers(-4, 4, (4, 6)).astype(np.int32)                     # many ties
X3 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
IDX = np.array([[0, 1], [3, 5], [0, 1], [9, 0], [2, -1]], np.int32)   # repeats and out-of-range rows


def T(a):
    return Tensor(a)


def one_hot_ref(ind, depth, on, off, axis):
    hot = np.where(ind[..., None] == np.arange(depth), on, off)
    return np.moveaxis(hot, -1, axis)


def gather_nd_ref(x, idx):
    m = idx.shape[-1]
    valid = np.all((idx >= 0) & (idx < np.array(x.shape[:m])), axis=-1)
    out = x[tuple(np.where(valid[..., None], idx, 0)[..., j] for j in range(m))]
    return np.where(valid.reshape(valid.shape + (1,) * (out.ndim - valid.ndim)), out, 0).astype(x.dtype)


def scatter_nd_ref(idx, upd, shape):
    out = np.zeros(shape, np.float64)
    m = idx.shape[-1]
    valid = np.all((idx >= 0) & (idx < np.array(shape[:m])), axis=-1)
    np.add.at(out, tuple(idx[valid][:, j] for j in range(m)), upd[valid])
    return out


def topk_ref(x, k, largest=True):
    key = np.where(np.isnan(x), -np.inf if largest else np.inf, -x.astype(np.float64) if largest else x)
    order = np.argsort(key, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


def relu6(x):
    return np.minimum(np.maximum(x, 0), 6)


# ----------------------------------------------------------------------------- forward, PyNative

FORWARD = {
    "one_hot": (lambda: ops.one_hot(T(IDX[:, 0]), 5, 2.0, -1.0), lambda: one_hot_ref(IDX[:, 0], 5, 2.0, -1.0, -1)),
    "OneHot-axis0-f16": (lambda: ops.OneHot(0)(T(IDX), 4, T(np.float16(1)), T(np.float16(0))),
                         lambda: one_hot_ref(IDX, 4, 1, 0, 0).astype(np.float16)),
    "one_hot-int": (lambda: ops.one_hot(T(IDX), 6, T(np.int32(1)), T(np.int32(0)), axis=1),
                    lambda: one_hot_ref(IDX, 6, 1, 0, 1).astype(np.int32)),
    "tile": (lambda: ops.tile(T(X), (2, 1, 3)), lambda: np.tile(X, (2, 1, 3))),
    "Tile-int-short-dims": (lambda: ops.Tile()(T(XI), (2,)), lambda: np.tile(XI, 2)),
    "argmax": (lambda: ops.argmax(T(XN), 1), lambda: np.argmax(XN, 1)),
    "argmax-flat-int": (lambda: ops.argmax(T(XI)), lambda: np.argmax(XI)),
    "Argmax-int": (lambda: ops.Argmax()(T(XI)), lambda: np.argmax(XI, -1)),
    "argmin-keepdims": (lambda: ops.argmin(T(XN), 0, keepdims=True), lambda: np.argmin(XN, 0)[None]),
    "ArgMaxWithValue": (lambda: ops.ArgMaxWithValue(axis=1, keep_dims=True)(T(XN)),
                        lambda: (np.argmax(XN, 1)[:, None], np.max(XN, 1, keepdims=True))),
    "ArgMinWithValue-int": (lambda: ops.ArgMinWithValue()(T(XI)), lambda: (np.argmin(XI, 0), np.min(XI, 0))),
    "max": (lambda: ops.max(T(X), 1), lambda: (X.max(1), X.argmax(1))),
    "min-all": (lambda: ops.min(T(XN)), lambda: (np.min(XN), 0)),      # over every element MindSpore's index is 0
    "TopK": (lambda: ops.TopK()(T(XN), 3), lambda: topk_ref(XN, 3)),
    "TopK-int": (lambda: ops.TopK(sorted=False)(T(XI), 4), lambda: topk_ref(XI, 4)),
    "topk-smallest-dim0": (lambda: ops.topk(T(XN), 2, dim=0, largest=False),
                           lambda: tuple(np.swapaxes(a, 0, 1) for a in topk_ref(XN.T, 2, largest=False))),
    "topk-f16": (lambda: ops.topk(T(X.astype(np.float16)), 6), lambda: topk_ref(X.astype(np.float16), 6)),
    "gather_nd": (lambda: ops.gather_nd(T(X), T(IDX)), lambda: gather_nd_ref(X, IDX)),
    "GatherNd-rows-int": (lambda: ops.GatherNd()(T(XI), T(IDX[:, :1])), lambda: gather_nd_ref(XI, IDX[:, :1])),
    "scatter_nd": (lambda: ops.scatter_nd(T(IDX), T(X[0, :5].copy()), (4, 6)),
                   lambda: scatter_nd_ref(IDX, X[0, :5], (4, 6)).astype(np.float32)),
    "ScatterNd-rows-int": (lambda: ops.ScatterNd()(T(IDX[:, :1]), T(XI[:, :5].T.copy()), (5, 4)),
                           lambda: scatter_nd_ref(IDX[:, :1], XI[:, :5].T, (5, 4)).astype(np.int32)),
    "StridedSlice-masks": (lambda: ops.StridedSlice(begin_mask=1, end_mask=2, shrink_axis_mask=4)(
        T(X3), (2, -1, 3), (0, 0, 4), (-1, -2, 1)), lambda: X3[:0:-1, -1::-2, 3]),
    "strided_slice-new-axis": (lambda: ops.strided_slice(T(X3), (0, 1, 0), (0, 3, 5), (1, 1, 2), new_axis_mask=1),
                               lambda: X3[None, 1:3, 0:5:2]),
    "stack": (lambda: ops.stack([T(X), T(X * 2)], axis=1), lambda: np.stack([X, X * 2], 1)),
    "Unstack": (lambda: ops.Unstack(axis=-1)(T(X3)), lambda: tuple(np.moveaxis(X3, -1, 0))),
    "unstack-one": (lambda: ops.unstack(T(X3[:1])), lambda: (X3[0],)),
    "zeros": (lambda: ops.zeros((2, 3)), lambda: np.zeros((2, 3), np.float32)),
    "Ones-int": (lambda: ops.Ones()(4, ms.int32), lambda: np.ones(4, np.int32)),
    "clip_by_value-list": (lambda: ops.clip_by_value([T(X), T(XI)], -1, 2),
                           lambda: [np.clip(X, -1, 2), np.clip(XI, -1, 2)]),
    "clamp-max-only": (lambda: ops.clamp(T(X), max=T(np.float32(0.5))), lambda: np.minimum(X, 0.5)),
    "clip-min-above-max": (lambda: ops.clip_by_value(T(X), 1.0, -1.0), lambda: np.full_like(X, 1.0)),
    "relu6": (lambda: ops.relu6(T(X * 2)), lambda: relu6(X * 2)),
    "ReLU6-f16": (lambda: ops.ReLU6()(T(X.astype(np.float16) * 2)), lambda: relu6(X.astype(np.float16) * 2)),
    "hswish": (lambda: ops.hardswish(T(X)), lambda: X * relu6(X + 3) / 6),
    "HSigmoid": (lambda: ops.HSigmoid()(T(X)), lambda: relu6(X + 3) / 6),
    "leaky_relu": (lambda: ops.leaky_relu(T(X), 0.1), lambda: np.where(X > 0, X, 0.1 * X)),
    "leaky_relu-alpha-above-1": (lambda: ops.leaky_relu(T(X), 1.5), lambda: np.where(X > 0, X, 1.5 * X)),
    "amin": (lambda: ops.amin(T(XN), 1), lambda: np.min(XN, 1)),
    "ReduceMin-int-keep": (lambda: ops.ReduceMin(keep_dims=True)(T(XI), 0), lambda: XI.min(0, keepdims=True)),
    "compare-int": (lambda: (T(XI) >= 0, T(XI) < T(XI[:1]), T(XI) != 2), lambda: (XI >= 0, XI < XI[:1], XI != 2)),
}


# cases whose indices are int64, as MindSpore 2.10's (ops.argmax, ops.max/min, Arg{Max,Min}WithValue); the
# Argmax/Argmin primitives' default and ops.argmin give int32
INT64_INDICES = {"argmax", "argmax-flat-int", "ArgMaxWithValue", "ArgMinWithValue-int", "max", "min-all"}


@pytest.mark.parametrize("case", list(FORWARD))
def test_forward_matches_numpy(ex, case):
    run, ref = FORWARD[case]
    got, want = run(), ref()
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert isinstance(g, Tensor) and g.shape == w.shape
        index = np.int64 if case in INT64_INDICES and w.dtype == np.int64 else np.int32     # numpy: int64 indices
        kind = {"i": index, "u": np.int32, "b": np.bool_}.get(w.dtype.kind, w.dtype)
        assert g.asnumpy().dtype == (np.float32 if kind == np.float64 else kind)
        np.testing.assert_allclose(g.asnumpy(), w, rtol=1e-6 if w.dtype != np.float16 else 1e-3, atol=1e-7)


def test_shape_and_tuple_to_array_are_static():
    x = T(X3)
    assert ops.Shape()(x) == ops.shape(x) == (3, 4, 5) and isinstance(ops.shape(x)[0], int)
    a, b = ops.tuple_to_array((1, 2, 3)), ops.tuple_to_array((0.5, 2.0))
    assert a.dtype == ms.int32 and a.asnumpy().tolist() == [1, 2, 3]
    assert b.dtype == ms.float32 and b.asnumpy().tolist() == [0.5, 2.0]

    def f(t):
        assert ops.shape(t) == (3, 4, 5)               # a tuple of ints during capture too
        return t.reshape(ops.shape(t)[0], -1) * ops.tuple_to_array((2.0,))

    graph, _ = ms.capture(f, x)
    assert [n.op for n in graph.nodes] == ["Reshape", "Mul"]


# ----------------------------------------------------------------------------------- backward rules

def tile_adjoint(shape, multiples, ct):
    expanded = tuple(v for pair in zip(multiples, shape) for v in pair)
    return ct.reshape(expanded).sum(axis=tuple(range(0, len(expanded), 2)))


def strided_adjoint(shape, index, ct):
    g = np.zeros(shape)
    g[index] = ct
    return g


def topk_adjoint(x, k, ct):
    g = np.zeros(x.shape)
    np.put_along_axis(g, topk_ref(x, k)[1], ct, -1)
    return g


GRADS = {
    "Tile": ([X], dict(multiples=(2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)),
             lambda ct: [tile_adjoint((1, 4, 6), (2, 1, 3), ct).reshape(4, 6)]),
    "StridedSlice": ([X3], dict(begin=(2, -1, 1), end=(0, 0, 5), strides=(-2, -1, 3), end_mask=1),
                     lambda x: x[2::-2, -1:0:-1, 1:5:3],
                     lambda ct: [strided_adjoint(X3.shape, np.s_[2::-2, -1:0:-1, 1:5:3], ct)]),
    "StridedSlice-shrink-new-ellipsis": (
        [X3], dict(begin=(0, 1, 0), end=(0, 2, 0), strides=(1, 1, 1), ellipsis_mask=1, shrink_axis_mask=2,
                   new_axis_mask=4), lambda x: x[..., 1, None],
        lambda ct: [strided_adjoint(X3.shape, np.s_[..., 1, None], ct)]),
    "GatherNd": ([X, IDX], {}, gather_nd_ref,
                 lambda ct: [scatter_nd_ref(IDX, ct, X.shape), None]),
    "ScatterNd": ([IDX, X[0, :5].copy()], dict(shape=(4, 6)), lambda i, u: scatter_nd_ref(i, u, (4, 6)).astype(u.dtype),
                  lambda ct: [None, gather_nd_ref(ct, IDX)]),
    "TopK": ([X], dict(k=3, largest=True), lambda x: topk_ref(x, 3)[0],
             lambda ct: [topk_adjoint(X, 3, ct)]),
    "ReduceMin": ([X], dict(axis=(0,), keep_dims=True), lambda x: x.min(0, keepdims=True),
                  lambda ct: [np.where(X == X.min(0), ct, 0)]),
    "ReLU6": ([XS * 2], {}, relu6, lambda ct: [ct * ((XS * 2 > 0) & (XS * 2 < 6))]),
    "HSigmoid": ([XS * 1.3], {}, lambda x: relu6(x + 3) / 6, lambda ct: [ct * (np.abs(XS * 1.3) < 3) / 6]),
    "HSwish": ([XS * 1.3], {}, lambda x: x * relu6(x + 3) / 6,
               lambda ct: [ct * np.where(XS * 1.3 >= 3, 1, np.where(XS * 1.3 <= -3, 0, (2 * XS * 1.3 + 3) / 6))]),
}


@pytest.mark.parametrize("op", list(GRADS))
def test_backward_rule_against_adjoint_and_finite_differences(ex, op):
    arrays, attrs, reference, adjoint = GRADS[op]
    check_rule(ex, op.split("-")[0], arrays, attrs, reference, adjoint)


def test_arg_with_value_sends_the_value_gradient_to_the_chosen_element(ex):
    for op, pick in (("ArgMaxWithValue", np.argmax), ("ArgMinWithValue", np.argmin)):
        check_rule(ex, op, [X], dict(axis=1, keep_dims=False), lambda x: (x.max if "Max" in op else x.min)(1),
                   lambda ct: [np.where(np.arange(6) == pick(X, 1)[:, None], ct[:, None], 0)], out_index=1)


def test_reduce_min_splits_the_gradient_between_ties(ex):
    x = np.array([[1.0, -2.0, -2.0, 3.0], [0.5, 0.5, 0.5, 0.5]], np.float32)
    ct = np.array([3.0, 2.0], np.float32)
    got = autodiff_grads(ex, "ReduceMin", [x], dict(axis=(1,), keep_dims=False), ct)
    np.testing.assert_array_equal(got[1], [[0, 1.5, 1.5, 0], [0.5, 0.5, 0.5, 0.5]])


def test_frontend_compositions_differentiate(ex):
    """leaky_relu (Mul + Maximum), clip_by_value (Minimum + Maximum), Stack (ExpandDims + Concat) and
    Unstack (Split + Squeeze) differentiate through their parts; one gradient graph, checked against
    numpy adjoints and finite differences."""
    w = RNG.standard_normal((4, 6)).astype(np.float32)

    def loss(x):
        parts = ops.unstack(ops.stack([ops.leaky_relu(x, 0.1), ops.clip_by_value(x, -1.3, 1.0)], axis=2), axis=2)
        return (parts[0] * T(w)).sum() + (parts[1] * T(w * w)).sum()

    def reference(x):
        return (np.where(x > 0, x, 0.1 * x) * w).sum() + (np.clip(x, -1.3, 1.0) * w * w).sum()

    got = ms.grad(loss)(T(XS)).asnumpy()
    want = w * np.where(XS > 0, 1, 0.1) + w * w * ((XS > -1.3) & (XS < 1.0))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert_grads_close([got], numeric_grads(reference, [XS], np.ones(())))


def test_clip_by_norm_scales_to_the_norm_over_its_axes_and_differentiates(ex):
    """nn.ClipByNorm: x * c / max(||x||, c) in float32; all axes, one axis (a norm per row, some rows
    above c, some below) and float16 input; the gradient against finite differences."""
    norms = np.sqrt((XS.astype(np.float64) ** 2).sum(1, keepdims=True))           # 3.8 ... 4.4 per row
    for axis, x, c in ((None, XS, 4.2), (1, XS, 4.2), (None, XS.astype(np.float16), 100.0)):
        norm = np.sqrt((x.astype(np.float64) ** 2).sum(axis, keepdims=True))
        got = nn.ClipByNorm(axis)(T(x), T(np.array([c], np.float32)))
        assert got.dtype == ms.float32
        np.testing.assert_allclose(got.asnumpy(), x.astype(np.float64) * c / np.maximum(norm, c), rtol=1e-6)
    assert norms.min() < 4.2 < norms.max()                       # axis=1 clipped some rows, not others
    np.testing.assert_array_equal(nn.ClipByNorm()(T(XS), T(np.float32(100.0))).asnumpy(), XS)   # within: x

    w = RNG.standard_normal((4, 6)).astype(np.float32)
    got = ms.grad(lambda x: (nn.ClipByNorm(1)(x, T(np.float32(4.2))) * T(w)).sum())(T(XS)).asnumpy()
    assert_grads_close([got], numeric_grads(
        lambda x: (x * 4.2 / np.maximum(np.sqrt((x ** 2).sum(1, keepdims=True)), 4.2) * w).sum(), [XS], np.ones(())))


# -------------------------------------------------------------------------------------- indexing

X3_INDEXES = [
    1, -1, np.s_[1:3], np.s_[::-1], np.s_[:, ::2], np.s_[..., 1], np.s_[None, 1:, ..., ::-2], np.s_[1, :, None],
    np.s_[-2:, -3::-1, 4], np.s_[..., None], np.s_[2:1], np.s_[5:-7:-1, 1], np.s_[:, [0, 3, 1]], [2, 0],
    np.s_[..., np.array([4, -5])], np.s_[0, [1, 1, 2]], np.s_[:, 2, [3, 0]],
]


def as_index(index):
    """numpy's index of a table entry, and ours (index arrays as Tensors)."""
    wrap = (lambda i: T(i.astype(np.int32)) if isinstance(i, np.ndarray) else i)
    ours = tuple(map(wrap, index)) if isinstance(index, tuple) else wrap(index)
    return index, ours


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_tensor_indexing_matches_numpy(ex, restore_context, mode):
    """Every index of the table, in one graph (GRAPH_MODE: StridedSlice, Gather) or on the host
    (PyNative), gives numpy's result."""
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)

    class Index(nn.Cell):
        def construct(self, x):
            return tuple(x[as_index(i)[1]] for i in X3_INDEXES)

    outs = Index()(T(X3))
    for index, got in zip(X3_INDEXES, outs):
        want = X3[as_index(index)[0]]
        assert got.shape == want.shape, index
        np.testing.assert_array_equal(got.asnumpy(), want, err_msg=str(index))


def test_indexing_lowers_to_strided_slice_and_gather():
    graph, _ = ms.capture(lambda x: (x[1:, None, ::-1], x[:, [2, 0]], x[...], x[:, :]), T(X))
    assert [n.op for n in graph.nodes] == ["StridedSlice", "Gather"]      # whole slices are no op
    assert graph.nodes[0].attrs == {"begin": (1, 0, 0), "end": (0, 0, 0), "strides": (1, 1, -1), "begin_mask": 4,
                                    "end_mask": 5, "ellipsis_mask": 0, "new_axis_mask": 2, "shrink_axis_mask": 0}
    assert graph.nodes[1].attrs == {"axis": 1, "check_indices": True}     # an index out of range raises


def test_indexing_gradient_in_graph_mode(ex, restore_context):
    """The gradients of a loss built from indexed pieces of an input and of a Parameter (indexed on
    the device, not as a host constant) scatter back like numpy's adjoints."""
    ms.set_context(mode=ms.GRAPH_MODE)
    w = RNG.standard_normal((2, 5)).astype(np.float32)

    class Loss(nn.Cell):
        def __init__(self):
            super().__init__()
            self.p = ms.Parameter(T(X), name="p")

        def construct(self, x):
            return ((x[::2, -1] * T(w)).sum() + x[..., [4, 1, 4]].sum() + x[1, 1:3, 0].sum() * 3
                    + (self.p[1:, ::-2] * x[0, :3, :3]).sum())

    def reference(x, p):
        return ((x[::2, -1] * w).sum() + x[..., [4, 1, 4]].sum() + x[1, 1:3, 0].sum() * 3
                + (p[1:, ::-2] * x[0, :3, :3]).sum())

    net = Loss()
    got, (got_p,) = ms.grad(net, 0, net.trainable_params())(T(X3))
    want = np.zeros(X3.shape)
    want[::2, -1] += w
    np.add.at(want, (slice(None), slice(None), [4, 1, 4]), 1)
    want[1, 1:3, 0] += 3
    want[0, :3, :3] += X[1:, ::-2]
    want_p = np.zeros(X.shape)
    want_p[1:, ::-2] = X3[0, :3, :3]
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(got_p.asnumpy(), want_p, rtol=1e-6)
    assert_grads_close([got.asnumpy(), got_p.asnumpy()], numeric_grads(reference, [X3, X], np.ones(())))


@st.composite
def basic_index(draw):
    """A shape and a basic index of it: ints, slices with any step (bounds past the ends too), Nones
    and at most one Ellipsis, which stands for the dimensions the other items leave over."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    rank = len(shape)
    count = draw(st.integers(0, rank))                     # dimensions the items index
    ellipsis = draw(st.booleans())
    split = draw(st.integers(0, count)) if ellipsis else count
    dims = list(range(split)) + list(range(rank - (count - split), rank))
    items = []
    for k, d in enumerate(dims + [None]):
        if ellipsis and k == split:
            items.append(Ellipsis)
        if d is None:
            break
        if draw(st.integers(0, 3)) == 0:
            items.append(None)
        size = shape[d]
        if draw(st.booleans()):
            items.append(draw(st.integers(-size, size - 1)))
        else:
            bound = st.none() | st.integers(-size - 2, size + 2)
            items.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, -1, -3]))))
    return shape, tuple(items)


@settings(max_examples=6, deadline=None)
@given(basic_index())
def test_strided_slice_and_its_gradient_match_numpy_indexing(ex, case):
    """The lowering of a random basic index to StridedSlice, and StridedSliceGrad, against numpy."""
    shape, index = case
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    graph, _ = ms.capture(lambda t: t[index], T(x))
    want = x[index]
    if not graph.nodes:                                  # whole slices: the input itself
        assert want.shape == x.shape
        return
    (node,) = graph.nodes
    ct = RNG.standard_normal(want.shape).astype(np.float32)
    out, grad = autodiff_grads(ex, "StridedSlice", [x], node.attrs, ct)
    np.testing.assert_array_equal(out, want)
    adjoint = np.zeros(shape, np.float32)
    adjoint[index] = ct
    np.testing.assert_array_equal(grad, adjoint)


# ------------------------------------------------------------------------------ layers, methods, Print

def test_activation_layers_fuse_into_one_kernel_at_o1(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O1"})
    net = nn.SequentialCell([nn.LeakyReLU(0.1), nn.HSwish(), nn.Identity(), nn.get_activation("relu6"),
                             nn.HSigmoid()])
    graph, _ = ms.capture(net, T(X))
    assert [k.signature.op for k in compile_graph(graph, "O1").kernels] == ["FusedElemwise"]
    h = np.where(X > 0, X, 0.1 * X)
    h = relu6(h * relu6(h + 3) / 6)
    np.testing.assert_allclose(net(T(X)).asnumpy(), relu6(h + 3) / 6, rtol=1e-6)
    assert [type(nn.get_activation(n)).__name__ for n in ("hswish", "hsigmoid", "leakyrelu")] == \
        ["HSwish", "HSigmoid", "LeakyReLU"]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_tensor_methods_match_numpy(ex, restore_context, mode):
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)

    class Methods(nn.Cell):
        def construct(self, x):
            return (x.argmax(axis=1), x.argmin(), x.sum(1, keepdims=True), x.sum(dtype=ms.int32), x.mean(0),
                    x.astype(ms.int32), x.reshape(6, 4), x.view((2, 12)), x.transpose(), x.transpose(1, 0),
                    x.max(axis=0, return_indices=True), x.min(), x.max(), abs(x), x.abs(),
                    x.expand_dims(1).squeeze(1), x == x.max(1, keepdims=True))

    want = (X.argmax(1), X.argmin(), X.sum(1, keepdims=True), X.astype(np.int32).sum(), X.mean(0),
            X.astype(np.int32), X.reshape(6, 4), X.reshape(2, 12), X.T, X.T, (X.max(0), X.argmax(0)),
            X.min(), X.max(), np.abs(X), np.abs(X), X, X == X.max(1, keepdims=True))
    got = Methods()(T(X))
    for g, w in zip(got, want):
        for gi, wi in zip(g if isinstance(g, tuple) else (g,), w if isinstance(w, tuple) else (w,)):
            np.testing.assert_allclose(gi.asnumpy(), wi, rtol=1e-6)
    t = T(X)
    assert t.item((1, 2)) == X[1, 2] and t.item(7) == X.flat[7] and T(np.float32(2.5)).item() == 2.5
    with pytest.raises(InvalidParamError, match="has 24 elements, not 1"):
        t.item()


def test_print_in_pynative_prints_like_mindspore(ex, capsys):
    # MindSpore 2.10 PyNative printed "x:", the tensor, then 3, {'a': 1} and 2.5 as Python does
    ops.Print()("x:", T(np.array([[1, 2]], np.int32)), 3)
    ops.Print()({"a": 1}, 2.5)
    assert capsys.readouterr().out == "x:\nTensor(shape=[1, 2], dtype=Int32, value=\n[[1, 2]])\n3\n{'a': 1}\n2.5\n"


def test_print_in_graph_mode_prints_values_after_the_graph_ran_once(ex, restore_context, capsys):
    ms.set_context(mode=ms.GRAPH_MODE)

    class Net(nn.Cell):
        def construct(self, x):
            y = x * 2
            ops.print_("y", y[:1])
            return y.sum()

    class Train(nn.Cell):                                # a forward and a gradient that replays it
        def __init__(self):
            super().__init__()
            self.net = Net()

        def construct(self, x):
            return self.net(x), ms.grad(self.net)(x)

    x = T(np.array([[1.5, -2.0], [0.0, 1.0]], np.float32))
    loss, grad = Train()(x)
    assert float(loss) == 1.0 and np.array_equal(grad.asnumpy(), np.full((2, 2), 2.0))
    assert capsys.readouterr().out == "y\nTensor(shape=[1, 2], dtype=Float32, value=\n[[ 3.00000000e+00, -4.00000000e+00]])\n"
    ms.grad(Net())(x)                                    # only replays: its prints count
    assert capsys.readouterr().out.startswith("y\nTensor(shape=[1, 2]")


# -------------------------------------------------------------------------------------- bad input

def sig_of(op, *inputs, **attrs):
    return OpSignature.make(op, inputs, **attrs)


BAD = [
    (lambda: ops.one_hot(T(X), 3), InvalidParamError, r"OneHot: input 0 \(indices\) has dtype float32"),
    (lambda: ops.one_hot(T(IDX), -1), InvalidParamError, r"invalid OneHot: depth -1"),
    (lambda: ops.OneHot()(T(IDX), 3, T(np.ones(2, np.float32)), 0.0), InvalidParamError,
     r"on_value\) must be a scalar tensor"),
    (lambda: ops.tile(T(X), (2, -1)), InvalidParamError, r"multiples=\(2, -1\) must be a non-empty tuple"),
    (lambda: ops.strided_slice(T(X), (0,), (1,), (0,)), InvalidParamError, r"strides\[0\] is 0"),
    (lambda: ops.strided_slice(T(X), (0, 0, 0), (1, 1, 1), (1, 1, 1)), InvalidParamError, "too many indices"),
    (lambda: ops.StridedSlice(shrink_axis_mask=1)(T(X), (4,), (5,), (1,)), InvalidParamError,
     "index 4 is out of bounds for dimension 0 with size 4"),
    (lambda: ops.argmax(T(X), 2), InvalidParamError, r"attr axis=2 is out of range for rank 2"),
    (lambda: ops.Argmax(output_type=ms.float32), TypeError, "must be one of \\[Int32, Int64\\]"),
    (lambda: ops.ArgMaxWithValue()(T(np.zeros((0, 2), np.float32))), InvalidParamError, "empty axis 0"),
    (lambda: ops.TopK()(T(X), 7), InvalidParamError, r"invalid TopK: k 7: must be an int in 0..6"),
    (lambda: ops.gather_nd(T(X), T(np.zeros((2, 3), np.int32))), InvalidParamError,
     r"index tuples of length 3, but input_x has shape \(4, 6\)"),
    (lambda: ops.scatter_nd(T(IDX), T(X), (4, 6)), InvalidParamError, r"need updates of shape \(5,\)"),
    (lambda: ops.stack([T(X), T(XI)]), InvalidParamError, "tensor 1 is Int32"),
    (lambda: ops.Unstack(num=3)(T(X)), InvalidParamError, "has 4 entries but num=3"),
    (lambda: ops.clip_by_value(T(X)), InvalidParamError, "give clip_value_min, clip_value_max or both"),
    (lambda: ops.tuple_to_array([1, 2]), TypeError, "the type of .x. should be .tuple., but got type .list."),
    (lambda: ops.max(T(X), initial=1.0), FeatureNotSupportedError, "initial= and where= are not supported"),
    (lambda: T(X)[4], TensorIndexError, r"index 4 is out of bounds for axis 0 with size 4 \(tensor of shape"),
    (lambda: T(X)[0, 0, 0], IndexError, "too many indices"),
    (lambda: nn.ClipByNorm(axis=[0]), InvalidParamError, r"axis=\[0\] must be None, an int or a tuple of ints"),
    (lambda: nn.ClipByNorm()(T(XI), T(np.float32(1.0))), InvalidParamError, "x must be float32 or float16"),
]


@pytest.mark.parametrize("call, error, message", BAD)
def test_bad_input_gets_a_typed_error_that_says_what_to_do(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("index, error, message", [
    ((0, 0, 0), TensorIndexError, "too many indices for a tensor of shape"),
    ((Ellipsis, 0, Ellipsis), InvalidParamError, "single Ellipsis"),
    (np.s_[::0], InvalidParamError, "slice step cannot be zero"),
    (np.s_[:, 7], IndexError, "index 7 is out of bounds for dimension 1 with size 6"),
    (np.s_[[0, 9]], TensorIndexError, "index 9 is out of bounds"),
    (np.array([True, False, True, True]), GraphCaptureError, "bool mask"),
    (np.s_[[0, 1], [1, 2]], FeatureNotSupportedError, "only one index tensor"),
    (np.s_[0, :, [1]], InvalidParamError, "too many indices"),
    ("a", InvalidParamError, "got str"),
])
def test_bad_indices_in_graph_mode(index, error, message):
    with pytest.raises(error, match=message):
        ms.capture(lambda t: t[index], T(X))


def test_int_and_index_tensor_apart_are_refused_not_misplaced():
    with pytest.raises(FeatureNotSupportedError, match="index in two steps"):
        ms.capture(lambda t: t[0, :, [1, 2]], T(X3))
    with pytest.raises(GraphCaptureError, match="data-dependent"):
        ms.capture(lambda t, k: ops.TopK()(t, k), T(X), T(np.int32(2)))


def test_plans_price_what_the_kernels_move():
    """Costs are what each kernel reads and writes (bytes) and computes (vector ops)."""
    f32 = ((4, 6), "float32")
    tile = plan_kernel(sig_of("Tile", f32, multiples=(2, 3)))
    assert tile.cost.bytes == 2 * 8 * 18 * 4 and tile.block_dim == 1
    sliced = plan_kernel(sig_of("StridedSlice", f32, begin=(0, 5), end=(4, 0), strides=(2, -2)))
    assert sliced.outputs[0].shape == (2, 3) and sliced.cost.bytes == 2 * 6 * 4
    hot = plan_kernel(sig_of("OneHot", ((5,), "int32"), ((), "float16"), ((), "float16"), depth=7))
    assert hot.cost.vector_ops == 35 and hot.cost.bytes == 35 * 2 + 5 * 4 + 2 * 2
    topk = plan_kernel(sig_of("TopK", ((3, 1000), "float32"), k=5, largest=True))
    assert topk.workspace_sizes == (5 * 8, 5 * 8) and topk.block_dim == 1       # 3000 elements: one block
    assert topk.cost.vector_ops == 3 * (1000 + 2 * 5 * 3)
    scatter = plan_kernel(sig_of("ScatterNd", ((5, 2), "int32"), ((5,), "float16"), shape=(4, 6)))
    assert scatter.workspace_sizes == (24 * 4,)                 # float16 sums accumulate in float32
    grad = plan_kernel(sig_of("StridedSliceGrad", ((2, 3), "float32"), shapex=(4, 6), begin=(0, 5), end=(4, 0),
                              strides=(2, -2)))
    assert grad.outputs[0].shape == (4, 6) and grad.cost.bytes == (24 + 6) * 4
