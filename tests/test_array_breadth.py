"""The array ops of ``mindspore.ops`` served by composition (frontend/ops/operations/array_ops.py,
function/array_func.py) and by the fold kernels of kernels/ops/index.py (TensorScatter*, ScatterNd*,
UnsortedSegmentMax/Min/Prod).

Oracles: numpy formulas (the values real MindSpore 2.10 printed for the same inputs were checked by hand
against them when this was written: unique's first-seen order, segment max's lowest-float fill,
DepthToSpace's DCR order, ...), central finite differences of those formulas, and the recorded
signature table."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.frontend import Parameter, Tensor, nn, ops
from ascendemu.frontend.api_coverage import table_signature

from gradcheck import numeric_grads


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


RNG = np.random.default_rng(21)
X34 = RNG.standard_normal((3, 4)).astype(np.float32)
X234 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
MASK34 = RNG.random((3, 4)) > 0.5
LENGTHS = np.array([2, 4, 1], np.int32)


def reverse_sequence_ref(x, lengths, seq_dim, batch_dim):
    out = np.array(x)
    for b, n in enumerate(lengths):
        index = [slice(None)] * x.ndim
        index[batch_dim], index[seq_dim] = b, slice(0, n)
        out[tuple(index)] = np.flip(x[tuple(index)], axis=seq_dim - (seq_dim > batch_dim))
    return out


def depth_to_space_ref(x, b):
    n, c, h, w = x.shape
    return x.reshape(n, b, b, c // b ** 2, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // b ** 2, h * b, w * b)


# (name, frontend call on Tensors, numpy reference on arrays, inputs)
FORWARD = [
    ("ReverseV2", lambda x: ops.ReverseV2((0, -1))(x), lambda x: x[::-1, ..., ::-1], (X234,)),
    ("flip", lambda x: ops.flip(x, (1,)), lambda x: x[:, ::-1], (X234,)),
    ("reverse", lambda x: ops.reverse(x, [0]), lambda x: x[::-1], (X34,)),
    ("masked_fill", lambda x: ops.masked_fill(x, Tensor(MASK34), 0.5), lambda x: np.where(MASK34, 0.5, x), (X34,)),
    ("MaskedFill", lambda x: ops.MaskedFill()(x, Tensor(MASK34[0]), Tensor(np.float32(-2))),
     lambda x: np.where(MASK34[0], -2.0, x), (X34,)),
    ("masked_select", lambda x: ops.masked_select(x, Tensor(MASK34[1])), lambda x: x[:, MASK34[1]].reshape(-1),
     (X34,)),
    ("repeat_elements", lambda x: ops.repeat_elements(x, 3, axis=1), lambda x: np.repeat(x, 3, axis=1), (X34,)),
    ("repeat_interleave", lambda x: ops.repeat_interleave(x, [1, 0, 2], 0), lambda x: np.repeat(x, [1, 0, 2], 0),
     (X34,)),
    ("repeat_interleave_flat", lambda x: ops.repeat_interleave(x, 2), lambda x: np.repeat(x.reshape(-1), 2), (X34,)),
    ("DepthToSpace", lambda x: ops.DepthToSpace(2)(x), lambda x: depth_to_space_ref(x, 2),
     (RNG.standard_normal((1, 8, 2, 3)).astype(np.float32),)),
    ("SpaceToDepth", lambda x: ops.DepthToSpace(2)(ops.SpaceToDepth(2)(x)), lambda x: x,
     (RNG.standard_normal((2, 3, 4, 6)).astype(np.float32),)),
    ("reverse_sequence", lambda x: ops.reverse_sequence(x, Tensor(LENGTHS), 1, 0),
     lambda x: reverse_sequence_ref(x, LENGTHS, 1, 0), (X34,)),
    ("ReverseSequence_batch1", lambda x: ops.ReverseSequence(0, 1)(x, Tensor(np.array([1, 3, 0, 2], np.int32))),
     lambda x: reverse_sequence_ref(x, [1, 3, 0, 2], 0, 1), (X34,)),
    ("tril", lambda x: ops.tril(x, 1), lambda x: np.tril(x, 1), (X234,)),
    ("Triu", lambda x: ops.Triu(-1)(x), lambda x: np.triu(x, -1), (X34,)),
    ("diag", lambda x: ops.diag(x), lambda x: np.diag(x), (X34[0],)),
    ("DiagPart", lambda x: ops.DiagPart()(x), lambda x: np.diagonal(x), (X34[:, :3],)),
    ("diagonal", lambda x: ops.diagonal(x, 1, 2, 1), lambda x: np.diagonal(x, 1, 2, 1), (X234,)),
    ("diagonal_neg", lambda x: ops.diagonal(x, -1), lambda x: np.diagonal(x, -1), (X34,)),
    ("index_select", lambda x: ops.index_select(x, 1, Tensor(np.array([3, 0, 3], np.int32))),
     lambda x: x[:, [3, 0, 3]], (X34,)),
    ("narrow", lambda x: ops.narrow(x, -1, 1, 2), lambda x: x[..., 1:3], (X234,)),
    ("swapaxes", lambda x: ops.swapaxes(x, 0, 2), lambda x: np.swapaxes(x, 0, 2), (X234,)),
    ("movedim", lambda x: ops.movedim(x, (0, 1), (2, 0)), lambda x: np.moveaxis(x, (0, 1), (2, 0)), (X234,)),
    ("expand_as", lambda x: ops.expand_as(x, Tensor(X234)), lambda x: np.broadcast_to(x, X234.shape), (X34[:1],)),
    ("expand", lambda x: ops.expand(x, Tensor(np.array([2, -1, 4], np.int32))),
     lambda x: np.broadcast_to(x, (2, 3, 4)), (X34[:, :1],)),
    ("ravel", lambda x: ops.ravel(x), lambda x: x.reshape(-1), (X234,)),
    ("where", lambda x: ops.where(Tensor(MASK34), x, 1.5), lambda x: np.where(MASK34, x, 1.5), (X34,)),
    ("fills", lambda x: ops.fills(x, 2.5), lambda x: np.full_like(x, 2.5), (X34,)),
    ("argsort", lambda x: ops.argsort(x, 1, True), lambda x: np.argsort(-x, 1, kind="stable"), (X34,)),
]


@pytest.mark.parametrize("name,fn,ref,inputs", FORWARD, ids=[f[0] for f in FORWARD])
def test_forward_matches_numpy(name, fn, ref, inputs):
    got = fn(*(Tensor(a) for a in inputs))
    want = ref(*inputs)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.asnumpy(), want.astype(got.asnumpy().dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_data_movement_is_dtype_generic(dtype):
    x = (X34 * 10).astype(dtype)
    got = ops.flip(Tensor(x), (0, 1))
    assert got.asnumpy().dtype == dtype
    np.testing.assert_array_equal(got.asnumpy(), x[::-1, ::-1])
    np.testing.assert_array_equal(ops.tril(Tensor(x)).asnumpy(), np.tril(x))
    np.testing.assert_array_equal(ops.masked_fill(Tensor(x), Tensor(MASK34), 3).asnumpy(), np.where(MASK34, 3, x))


def test_creation_and_shape_queries():
    np.testing.assert_array_equal(ops.eye(2, 3).asnumpy(), np.eye(2, 3, dtype=np.float32))
    eye = ops.Eye()(3, 2, ms.int32)
    assert eye.dtype == ms.int32
    np.testing.assert_array_equal(eye.asnumpy(), np.eye(3, 2))
    full = ops.full((2, 2), 7.0)
    assert full.dtype == ms.float32 and (full.asnumpy() == 7).all()
    like = ops.full_like(Tensor(np.zeros(3, np.int32)), 2.7)
    assert like.dtype == ms.int32 and list(like.asnumpy()) == [2, 2, 2]
    x = Tensor(X234)
    assert (ops.size(x), ops.Size()(x), ops.rank(x), ops.Rank()(x)) == (24, 24, 3, 3)
    np.testing.assert_array_equal(ops.TensorShape()(x).asnumpy(), [2, 3, 4])
    scalar = ops.ScalarToTensor()(3, ms.int32)
    assert scalar.dtype == ms.int32 and scalar.shape == () and scalar.item() == 3
    assert ops.scalar_to_array(2.5).item() == 2.5


def test_meshgrid_both_indexings():
    a, b, c = np.array([1.0, 2, 3], np.float32), np.array([4.0, 5], np.float32), np.array([6.0, 7, 8, 9], np.float32)
    for indexing in ("xy", "ij"):
        got = ops.meshgrid(Tensor(a), Tensor(b), Tensor(c), indexing=indexing)
        for g, w in zip(got, np.meshgrid(a, b, c, indexing=indexing)):
            np.testing.assert_array_equal(g.asnumpy(), w)
    got = ops.Meshgrid("ij")((Tensor(a), Tensor(b)))
    np.testing.assert_array_equal(got[1].asnumpy(), np.meshgrid(a, b, indexing="ij")[1])


def test_splits_follow_numpy():
    x = np.arange(7, dtype=np.float32)
    for got, want in zip(ops.chunk(Tensor(x), 3), [x[:3], x[3:6], x[6:]]):
        np.testing.assert_array_equal(got.asnumpy(), want)
    for sections in (3, [2, 5], [4, 9]):
        got = ops.tensor_split(Tensor(x), sections)
        want = np.array_split(x, sections)
        assert [g.asnumpy().tolist() for g in got] == [w.tolist() for w in want]
    m = X34
    assert [g.shape for g in ops.hsplit(Tensor(m), 2)] == [(3, 2), (3, 2)]
    assert [g.shape for g in ops.vsplit(Tensor(m), [1])] == [(1, 4), (2, 4)]


def test_host_computed_shapes_in_pynative():
    x = np.array([3, 1, 3, 2, 1], np.int32)
    values, idx = ops.unique(Tensor(x))
    assert values.asnumpy().tolist() == [3, 1, 2] and idx.asnumpy().tolist() == [0, 1, 0, 2, 1]
    values, idx = ops.Unique()(Tensor(np.array([2.0, 1.0, 2.0], np.float32)))
    assert values.dtype == ms.float32 and values.asnumpy().tolist() == [2.0, 1.0]
    runs = np.array([3, 3, 1, 3, 2, 2], np.int32)
    out, inverse, counts = ops.unique_consecutive(Tensor(runs), True, True)
    assert out.asnumpy().tolist() == [3, 1, 3, 2]
    assert inverse.asnumpy().tolist() == [0, 0, 1, 2, 3, 3] and counts.asnumpy().tolist() == [2, 1, 1, 2]
    assert ops.unique_consecutive(Tensor(runs)).asnumpy().tolist() == [3, 1, 3, 2]
    m = np.array([[0, 1.5], [2, 0]], np.float32)
    np.testing.assert_array_equal(ops.nonzero(Tensor(m)).asnumpy(), np.argwhere(m))
    np.testing.assert_array_equal(ops.argwhere(Tensor(m)).asnumpy(), np.argwhere(m))
    rows, cols = ops.nonzero(Tensor(m), as_tuple=True)
    assert rows.asnumpy().tolist() == [0, 1] and cols.asnumpy().tolist() == [1, 0]


# ------------------------------------------------------------------------------ fold kernels

def scatter_nd_ref(fold, x, indices, updates):
    out = np.array(x, np.float64)
    m = indices.shape[-1]
    for row, tup in zip(updates.reshape((-1,) + x.shape[m:]), indices.reshape(-1, m)):
        if all(0 <= t < n for t, n in zip(tup, x.shape)):
            out[tuple(tup)] = fold(out[tuple(tup)], row)
    return out


FOLDS = {"TensorScatterUpdate": lambda a, u: u, "TensorScatterAdd": np.add, "TensorScatterSub": np.subtract,
         "TensorScatterMul": np.multiply, "TensorScatterDiv": np.divide, "TensorScatterMax": np.maximum,
         "TensorScatterMin": np.minimum}
# repeated tuples (folded in row order) and one out of range (dropped)
INDICES = np.array([[1, 0], [2, 3], [1, 0], [5, 0], [0, 2]], np.int32)


@pytest.mark.parametrize("op", list(FOLDS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_tensor_scatter_folds_in_row_order(op, dtype):
    x = (X34 * 4).astype(dtype)
    updates = (np.arange(1, 6) * (1.5 if dtype != np.int32 else 2)).astype(dtype)
    got = getattr(ops, op)()(Tensor(x), Tensor(INDICES), Tensor(updates)).asnumpy()
    # integers divide as C does, truncating toward zero at each fold (MindSpore 2.10: -7 / 2 = -3)
    fold = (lambda a, u: np.trunc(a / u)) if op == "TensorScatterDiv" and dtype == np.int32 else FOLDS[op]
    want = scatter_nd_ref(fold, x, INDICES, updates.astype(np.float64))
    assert got.dtype == dtype
    tol = 3e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(got.astype(np.float64), want.astype(dtype).astype(np.float64), rtol=tol, atol=tol)


def test_slice_scatter_and_functions():
    x = X234
    indices = np.array([[1, 2], [0, 0]], np.int32)
    updates = RNG.standard_normal((2, 4)).astype(np.float32)
    got = ops.tensor_scatter_add(Tensor(x), Tensor(indices), Tensor(updates)).asnumpy()
    np.testing.assert_allclose(got, scatter_nd_ref(np.add, x, indices, updates), rtol=1e-6)
    got = ops.tensor_scatter_max(Tensor(x), Tensor(indices), Tensor(updates)).asnumpy()
    np.testing.assert_allclose(got, scatter_nd_ref(np.maximum, x, indices, updates), rtol=1e-6)


def test_tensor_scatter_elements_and_scatter():
    data = np.zeros((2, 3), np.float32)
    index = np.array([[1, -1], [2, 1]], np.int32)
    src = np.array([[5.0, 6.0], [7.0, 8.0]], np.float32)
    want = data.copy()
    for (i, j), v in np.ndenumerate(src):
        want[i, index[i, j] % 3] += v
    got = ops.tensor_scatter_elements(Tensor(data), Tensor(index), Tensor(src), axis=1, reduction="add")
    np.testing.assert_array_equal(got.asnumpy(), want)
    got = ops.scatter(Tensor(data), 0, Tensor(np.array([[1, 0, 1]], np.int32)),
                      Tensor(np.array([[5.0, 6, 7]], np.float32)))
    np.testing.assert_array_equal(got.asnumpy(), [[0, 6, 0], [5, 0, 7]])
    with pytest.raises(InvalidParamError, match="reduction"):
        ops.TensorScatterElements(0, "mul")(Tensor(data), Tensor(index), Tensor(src))


SEGMENTS = np.array([0, 3, 0, -1, 3, 1], np.int32)


@pytest.mark.parametrize("op,ref,empty", [
    ("unsorted_segment_max", np.maximum.reduce, np.finfo(np.float32).min),
    ("unsorted_segment_min", np.minimum.reduce, np.finfo(np.float32).max),
    ("unsorted_segment_prod", np.multiply.reduce, 1.0)])
def test_unsorted_segment_folds(op, ref, empty):
    x = RNG.standard_normal((6, 2)).astype(np.float32)
    got = getattr(ops, op)(Tensor(x), Tensor(SEGMENTS), 5).asnumpy()
    want = np.full((5, 2), empty, np.float64)
    for s in range(5):
        rows = x[SEGMENTS == s].astype(np.float64)
        if len(rows):
            want[s] = ref(rows, axis=0)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6)
    ints = ops.UnsortedSegmentMax()(Tensor(np.arange(6, dtype=np.int32)), Tensor(SEGMENTS), Tensor(np.int32(3)))
    assert ints.asnumpy().tolist() == [2, 5, np.iinfo(np.int32).min]


def test_parameter_scatters_update_in_place():
    w = Parameter(Tensor(np.zeros((3, 2), np.float32)), name="w")
    out = ops.ScatterNdUpdate()(w, Tensor(np.array([[1]], np.int32)), Tensor(np.array([[1.0, 2.0]], np.float32)))
    np.testing.assert_array_equal(w.asnumpy(), [[0, 0], [1, 2], [0, 0]])
    np.testing.assert_array_equal(out.asnumpy(), w.asnumpy())
    ops.scatter_add(w, Tensor(np.array([1, 2], np.int32)), Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)))
    np.testing.assert_array_equal(w.asnumpy(), [[0, 0], [2, 4], [3, 4]])
    ops.scatter_nd_sub(w, Tensor(np.array([[2, 1]], np.int32)), Tensor(np.array([4.0], np.float32)))
    np.testing.assert_array_equal(w.asnumpy(), [[0, 0], [2, 4], [3, 0]])
    with pytest.raises(InvalidParamError, match="must be a Parameter"):
        ops.ScatterUpdate()(Tensor(np.zeros(3, np.float32)), Tensor(np.array([0], np.int32)),
                            Tensor(np.ones(1, np.float32)))


# ------------------------------------------------------------------------------ gradients

W34 = RNG.standard_normal((3, 4))
GRADS = [
    ("flip", lambda t: ops.flip(t, (0, 1)), lambda x: x[::-1, ::-1]),
    ("masked_fill", lambda t: ops.masked_fill(t, Tensor(MASK34), 1.0), lambda x: np.where(MASK34, 1.0, x)),
    ("tril", lambda t: ops.tril(t, 1), lambda x: np.tril(x, 1)),
    ("reverse_sequence", lambda t: ops.reverse_sequence(t, Tensor(LENGTHS), 1),
     lambda x: reverse_sequence_ref(x, LENGTHS, 1, 0)),
    ("movedim", lambda t: ops.movedim(t, 0, 1) * 1.0, lambda x: np.moveaxis(x, 0, 1)),
]


@pytest.mark.parametrize("name,fn,ref", GRADS, ids=[g[0] for g in GRADS])
def test_shape_preserving_gradients_match_finite_differences(name, fn, ref):
    w = W34 if ref(X34).shape == W34.shape else W34.T
    got = ms.grad(lambda t: (fn(t) * Tensor(w.astype(np.float32))).sum())(Tensor(X34)).asnumpy()
    (want,) = numeric_grads(ref, [X34], w)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


RESHAPING = [
    ("repeat_interleave", lambda t: ops.repeat_interleave(t, [2, 0, 1], 0), lambda x: np.repeat(x, [2, 0, 1], 0)),
    ("masked_select", lambda t: ops.masked_select(t, Tensor(MASK34)), lambda x: x[MASK34]),
    ("diagonal", lambda t: ops.diagonal(t, 1), lambda x: np.diagonal(x, 1)),
    ("meshgrid", lambda t: ops.meshgrid(t[0], t[1])[0], lambda x: np.meshgrid(x[0], x[1])[0]),
    ("unsorted_segment_max", lambda t: ops.unsorted_segment_max(t, Tensor(np.array([1, 0, 1], np.int32)), 2),
     lambda x: np.stack([x[1], np.maximum(x[0], x[2])])),
]


@pytest.mark.parametrize("name,fn,ref", RESHAPING, ids=[g[0] for g in RESHAPING])
def test_reshaping_gradients_match_finite_differences(name, fn, ref):
    w = RNG.standard_normal(ref(X34).shape)
    got = ms.grad(lambda t: (fn(t) * Tensor(w.astype(np.float32))).sum())(Tensor(X34)).asnumpy()
    (want,) = numeric_grads(ref, [X34], w)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("op", ["TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub"])
def test_tensor_scatter_gradients(op):
    indices = np.array([[1, 0], [2, 3], [0, 2]], np.int32)
    updates = RNG.standard_normal(3).astype(np.float32)

    def ref(x, u):
        return scatter_nd_ref(FOLDS[op], x, indices, u)

    got = ms.grad(lambda x, u: (getattr(ops, op)()(x, Tensor(indices), u) * Tensor(W34.astype(np.float32))).sum(),
                  grad_position=(0, 1))(Tensor(X34), Tensor(updates))
    want = numeric_grads(ref, [X34, updates], W34)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w, rtol=1e-3, atol=1e-4)


# ------------------------------------------------------------------------------ GRAPH_MODE

def test_graph_mode_composites_and_folds():
    class Net(nn.Cell):
        def construct(self, x, mask, ids):
            y = ops.flip(ops.masked_fill(x, mask, 0.0), (1,))
            y = ops.tril(y) + ops.repeat_elements(y[:, :2], 2, axis=1)
            return ops.tensor_scatter_add(y, ops.expand_dims(ids[:2], 1), y[:2]), ops.unsorted_segment_max(y, ids, 2)

    ids = np.array([1, 0, 1], np.int32)
    ms.set_context(mode=ms.GRAPH_MODE)
    got, seg = Net()(Tensor(X34), Tensor(MASK34), Tensor(ids))
    y = np.where(MASK34, 0.0, X34)[:, ::-1]
    y = np.tril(y) + np.repeat(y[:, :2], 2, axis=1)
    want = y.copy()
    want[1] += y[0]
    want[0] += y[1]
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(seg.asnumpy(), np.stack([y[1], np.maximum(y[0], y[2])]), rtol=1e-6)


def test_graph_mode_parameter_scatter_updates_after_the_step():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.table = Parameter(Tensor(np.zeros((4, 2), np.float32)), name="table")

        def construct(self, rows, values):
            return ops.ScatterUpdate()(self.table, rows, values) * 2

    net = Net()
    ms.set_context(mode=ms.GRAPH_MODE)
    out = net(Tensor(np.array([3, 1], np.int32)), Tensor(np.array([[1.0, 2], [3, 4]], np.float32)))
    want = np.array([[0, 0], [3, 4], [0, 0], [1, 2]], np.float32)
    np.testing.assert_array_equal(out.asnumpy(), want * 2)
    np.testing.assert_array_equal(net.table.asnumpy(), want)


def test_graph_mode_holds_an_input_mask_and_refuses_a_computed_one_clearly():
    """A mask given as an input is held as a constant (frontend/common/api.py), as MindSpore runs the
    call with a dynamic shape; a mask computed inside the graph has no value while capturing."""
    class Net(nn.Cell):
        def construct(self, x, mask):
            return ops.masked_select(x, mask)

    class Computed(nn.Cell):
        def construct(self, x):
            return ops.masked_select(x, x > 0)

    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_array_equal(Net()(Tensor(X34), Tensor(MASK34)).asnumpy(), X34[MASK34])
    with pytest.raises(FeatureNotSupportedError, match="masked_select: the output shape depends"):
        Computed()(Tensor(X34))


# ------------------------------------------------------------------------------ signatures, errors

@pytest.mark.parametrize("name", ["flip", "eye", "masked_fill", "masked_select", "tril", "triu", "diag",
                                  "unique_consecutive", "repeat_interleave", "tensor_scatter_elements",
                                  "meshgrid", "nonzero", "full", "unsorted_segment_max", "scatter_nd_add"])
def test_functions_have_the_recorded_signatures(name):
    sig = inspect.signature(getattr(ops, name))
    bare = sig.replace(parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
                       return_annotation=sig.empty)
    assert bare == table_signature(f"mindspore.ops.{name}")


def test_errors_name_the_argument():
    x = Tensor(X34)
    with pytest.raises(InvalidParamError, match="duplicate"):
        ops.ReverseV2((0, -2))(x)
    with pytest.raises(TypeError, match="tuple or list"):
        ops.flip(x, 1)
    with pytest.raises(InvalidParamError, match="mask must be a bool tensor"):
        ops.masked_fill(x, Tensor(X34), 1.0)
    with pytest.raises(InvalidParamError, match="dim=0 is not supported"):
        ops.unique_consecutive(x, dim=0)
    with pytest.raises(InvalidParamError, match="block_size"):
        ops.DepthToSpace(2)(Tensor(np.zeros((1, 6, 2, 2), np.float32)))
    with pytest.raises(InvalidParamError, match="updates"):
        ops.TensorScatterAdd()(x, Tensor(INDICES), Tensor(np.ones(4, np.float32)))
