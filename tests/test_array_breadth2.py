"""Array ops, round 2 (frontend/ops/operations/array_ops.py and ops/function/array_func.py after the
``array breadth, round 2`` markers): rolls, rotations, stacking, index_add/index_fill/index_put, the
Inplace* row ops, masked/slice/diagonal scatters, diagonals and triangles, and the Tensor methods.

Oracles: numpy (float64 where arithmetic is involved), hand-computed values, and central finite
differences of numpy references (tests/gradcheck.py) for the gradients. MindSpore 2.10's own numbers for
these names are in the conformance family ``array2``; the ones its CPU build cannot run (Roll, Take,
SplitV, the in-place Tensor methods) are checked here against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops
from gradcheck import numeric_grads

RNG = np.random.RandomState(7)
X = RNG.uniform(-2, 2, size=(3, 4)).astype(np.float32)
X3 = RNG.uniform(-2, 2, size=(2, 3, 4)).astype(np.float32)
IMG4 = RNG.uniform(-2, 2, size=(4, 3, 5, 4)).astype(np.float32)


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def _i32(values) -> Tensor:
    return Tensor(np.asarray(values, np.int32))


# (name, emulator call, numpy reference): forward values
FORWARD = [
    ("roll_flat", lambda: ops.roll(Tensor(X), 5), lambda: np.roll(X, 5)),
    ("roll_dims", lambda: ops.roll(Tensor(X3), (1, -2), (0, 2)), lambda: np.roll(X3, (1, -2), (0, 2))),
    ("Roll", lambda: ops.Roll(-1, 1)(Tensor(X)), lambda: np.roll(X, -1, 1)),
    ("Tensor.roll", lambda: Tensor(X).roll(7, 1), lambda: np.roll(X, 7, 1)),
    ("mint.roll", lambda: ms.mint.roll(Tensor(X), 2), lambda: np.roll(X, 2)),
    ("rot90_1", lambda: ops.rot90(Tensor(X3), 1, (1, 2)), lambda: np.rot90(X3, 1, (1, 2))),
    ("rot90_3", lambda: ops.rot90(Tensor(X3), -1, (2, 0)), lambda: np.rot90(X3, -1, (2, 0))),
    ("rot90_2", lambda: Tensor(X).rot90(2, (0, 1)), lambda: np.rot90(X, 2)),
    ("fliplr", lambda: ops.fliplr(Tensor(X3)), lambda: np.fliplr(X3)),
    ("flipud", lambda: Tensor(X).flipud(), lambda: np.flipud(X)),
    ("take", lambda: ops.take(Tensor(X), _i32([[0, 11], [-1, 5]])), lambda: np.take(X, [[0, 11], [-1, 5]])),
    ("mint.take", lambda: ms.mint.take(Tensor(X), _i32([3, 2])), lambda: np.take(X, [3, 2])),
    ("Tensor.take_clip", lambda: Tensor(X).take(_i32([0, 9, -3])), lambda: np.take(X, [0, 9, -3], mode="clip")),
    ("Tensor.take_wrap", lambda: Tensor(X).take(_i32([[5, -1]]), 1, "wrap"),
     lambda: np.take(X, [[5, -1]], 1, mode="wrap")),
    ("vstack", lambda: ops.vstack([Tensor(X[0]), Tensor(X)]), lambda: np.vstack([X[0], X])),
    ("hstack", lambda: ops.hstack([Tensor(X), Tensor(X[:, :1])]), lambda: np.hstack([X, X[:, :1]])),
    ("dstack", lambda: ops.dstack([Tensor(X[0]), Tensor(X[1])]), lambda: np.dstack([X[0], X[1]])),
    ("column_stack", lambda: ops.column_stack([Tensor(X[0, :3]), Tensor(X[:, :2])]),
     lambda: np.column_stack([X[0, :3], X[:, :2]])),
    ("SplitV", lambda: ops.SplitV((1, -1, 2), 1, 3)(Tensor(X))[1], lambda: X[:, 1:2]),
    ("Pack", lambda: ops.Pack(2)((Tensor(X), Tensor(X))), lambda: np.stack([X, X], 2)),
    ("Unpack", lambda: ops.Unpack(1)(Tensor(X))[3], lambda: X[:, 3]),
    ("diag_embed", lambda: ops.diag_embed(Tensor(X), -1, 0, 2),
     lambda: np.moveaxis(np.stack([np.diag(r, -1) for r in X]), 0, 1)),
    ("diagflat", lambda: ops.diagflat(Tensor(X[:2, :2]), 2), lambda: np.diagflat(X[:2, :2], 2)),
    ("block_diag", lambda: ops.block_diag(Tensor(X[:2, :3]), Tensor(X[2, :2])),
     lambda: np.block([[X[:2, :3], np.zeros((2, 2))], [np.zeros((1, 3)), X[2:, :2]]])),
    ("cartesian_prod", lambda: ops.cartesian_prod(Tensor(X[0, :2]), Tensor(X[1, :3])),
     lambda: np.array([[a, b] for a in X[0, :2] for b in X[1, :3]])),
    ("combinations", lambda: ops.combinations(Tensor(X[0]), 3),
     lambda: X[0][[[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]]),
    ("vander", lambda: ops.vander(Tensor(X[0]), 3), lambda: np.vander(X[0].astype(np.float64), 3)),
    ("tril_indices", lambda: ops.tril_indices(3, 5, 1), lambda: np.stack(np.tril_indices(3, 1, 5))),
    ("TriuIndices", lambda: ops.TriuIndices(4, 3, -1)(), lambda: np.stack(np.triu_indices(4, -1, 3))),
    ("matrix_band_part", lambda: ops.matrix_band_part(Tensor(X3), 1, 0),
     lambda: np.where(np.tri(3, 4, 0, bool) & ~np.tri(3, 4, -2, bool), X3, 0)),
    ("FillDiagonal_wrap", lambda: ops.FillDiagonal(9.0, True)(Tensor(np.zeros((7, 3), np.float32))),
     lambda: _filled(np.zeros((7, 3)), 9.0, True)),
    ("UnravelIndex", lambda: ops.UnravelIndex()(_i32([22, 41, 37]), _i32([7, 6])),
     lambda: np.stack(np.unravel_index([22, 41, 37], (7, 6)))),
    ("SpaceToBatch", lambda: ops.SpaceToBatch(2, [[1, 0], [0, 2]])(Tensor(IMG4)),
     lambda: np.transpose(np.pad(IMG4, ((0, 0), (0, 0), (1, 0), (0, 2))).reshape(4, 3, 3, 2, 3, 2),
                          (3, 5, 0, 1, 2, 4)).reshape(16, 3, 3, 3)),
    ("BatchToSpace", lambda: ops.BatchToSpace(2, [[0, 1], [1, 0]])(Tensor(IMG4)),
     lambda: np.transpose(IMG4.reshape(2, 2, 1, 3, 5, 4), (2, 3, 4, 0, 5, 1)).reshape(1, 3, 10, 8)[:, :, :9, 1:]),
    ("Range", lambda: ops.Range()(Tensor(1, ms.int32), Tensor(10, ms.int32), Tensor(4, ms.int32)),
     lambda: np.arange(1, 10, 4)),
]


def _filled(a: np.ndarray, value: float, wrap: bool) -> np.ndarray:
    a = a.copy()
    np.fill_diagonal(a, value, wrap=wrap)
    return a


@pytest.mark.parametrize("name,call,reference", FORWARD, ids=[f[0] for f in FORWARD])
def test_forward_matches_numpy(name, call, reference):
    got, want = call().asnumpy(), np.asarray(reference())
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-6, atol=1e-6)


def _index_add_ref(x, y, index, axis):
    out = np.array(x, np.float64)
    np.add.at(np.moveaxis(out, axis, 0), index, np.moveaxis(y, axis, 0))
    return out


def test_index_add_accumulates_repeats_and_updates_a_parameter_in_place():
    y = RNG.uniform(-1, 1, size=(3, 3)).astype(np.float32)
    got = ops.index_add(Tensor(X), _i32([2, 0, 2]), Tensor(y), 1).asnumpy()
    np.testing.assert_allclose(got, _index_add_ref(X, y, [2, 0, 2], 1), rtol=1e-6, atol=1e-6)
    p = Parameter(Tensor(X.copy()), name="p")
    ops.IndexAdd(1)(p, _i32([2, 0, 2]), Tensor(y))
    np.testing.assert_allclose(p.asnumpy(), got, rtol=1e-6, atol=1e-6)
    source = RNG.uniform(-1, 1, size=(2, 4)).astype(np.float32)
    t = Tensor(X.copy())
    t.index_add_(0, _i32([1, -1]), Tensor(source), alpha=2)           # PyTorch's order, in place
    np.testing.assert_allclose(t.asnumpy(), _index_add_ref(X, 2 * source, [1, 2], 0), rtol=1e-6, atol=1e-6)


def test_inplace_row_ops_and_index_fill_put():
    v = RNG.uniform(-1, 1, size=(2, 4)).astype(np.float32)
    want = X.astype(np.float64).copy()
    want[[2, 0]] += v
    np.testing.assert_allclose(ops.inplace_add(Tensor(X), Tensor(v), (2, 0)).asnumpy(), want, rtol=1e-6)
    want = X.copy()
    want[[1, 0]] = v
    np.testing.assert_array_equal(ops.InplaceUpdateV2()(Tensor(X), (1, 0), Tensor(v)).asnumpy(), want)
    want = X.copy()
    want[:, [0, 3]] = -5.0
    np.testing.assert_array_equal(ops.index_fill(Tensor(X), 1, _i32([0, -1]), -5.0).asnumpy(), want)
    t = Tensor(X.copy())
    t.index_put_((_i32([0, 2]), _i32([1, 1])), Tensor(np.float32([7.0, 8.0])), True)
    want = X.copy()
    want[[0, 2], [1, 1]] += [7.0, 8.0]
    np.testing.assert_allclose(t.asnumpy(), want, rtol=1e-6)


def test_masked_scatter_reads_source_in_row_major_order():
    mask = np.array([[True, False, True, False], [False, False, True, True], [True, False, False, False]])
    source = np.arange(10, 22, dtype=np.float32)
    want = X.copy()
    want[mask] = source[:mask.sum()]
    np.testing.assert_array_equal(ops.MaskedScatter()(Tensor(X), Tensor(mask), Tensor(source)).asnumpy(), want)
    t = Tensor(X.copy())
    t.masked_scatter_(Tensor(mask), Tensor(source))
    np.testing.assert_array_equal(t.asnumpy(), want)


def test_scatters_into_slices_and_diagonals():
    src = RNG.uniform(-1, 1, size=(3, 2)).astype(np.float32)
    want = X.copy()
    want[:, 1::2] = src
    np.testing.assert_array_equal(ops.slice_scatter(Tensor(X), Tensor(src), 1, 1, None, 2).asnumpy(), want)
    want = X.copy()
    want[:, 2] = src[:, 0]
    np.testing.assert_array_equal(ops.select_scatter(Tensor(X), Tensor(src[:, 0]), 1, -2).asnumpy(), want)
    diag = np.float32([1.0, 2.0, 3.0])
    want = X.copy()
    want[[0, 1, 2], [1, 2, 3]] = diag
    np.testing.assert_array_equal(ops.diagonal_scatter(Tensor(X), Tensor(diag), 1).asnumpy(), want)


# (name, function of float tensors, numpy reference of float64 arrays, inputs): gradients
GRADS = [
    ("roll", lambda x: ops.roll(x, (1, -1), (0, 1)), lambda x: np.roll(x, (1, -1), (0, 1)), [X]),
    ("rot90", lambda x: ops.rot90(x, 1, (0, 1)), lambda x: np.rot90(x, 1), [X]),
    ("take", lambda x: ops.take(x, _i32([[1, 1], [-2, 4]])), lambda x: np.take(x, [[1, 1], [-2, 4]]), [X]),
    ("index_add", lambda x, y: ops.index_add(x, _i32([0, 2, 0]), y, 1),
     lambda x, y: _index_add_ref(x, y, [0, 2, 0], 1), [X, X[:, :3].copy()]),
    ("index_fill", lambda x: ops.index_fill(x, 0, _i32([1]), 2.0),
     lambda x: np.where(np.arange(3)[:, None] == 1, 2.0, x), [X]),
    ("masked_scatter", lambda x, s: ops.MaskedScatter()(x, Tensor(X > 0), s),
     lambda x, s: _masked(x, s), [X, RNG.uniform(-1, 1, size=(12,)).astype(np.float32)]),
    ("diag_embed", lambda x: ops.diag_embed(x, 1), lambda x: np.stack([np.diag(r, 1) for r in x]), [X]),
    ("slice_scatter", lambda x, s: ops.slice_scatter(x, s, 0, 0, 3, 2), lambda x, s: _sliced(x, s), [X, X[:2].copy()]),
    ("diagonal_scatter", lambda x, s: ops.diagonal_scatter(x, s), lambda x, s: _diag_set(x, s), [X, X[0, :3].copy()]),
    ("block_diag", lambda a, b: ops.block_diag(a, b),
     lambda a, b: np.block([[a, np.zeros((2, 1))], [np.zeros((1, 4)), b]]), [X[:2].copy(), X[0, :1].copy()]),
    ("vander", lambda x: ops.vander(x, 4), lambda x: np.vander(x, 4), [X[0].copy()]),
]


def _unfold_ref(x, k, d, p, s):
    """PyTorch's unfold, by loops: (N, C * k * k, L), kernel offsets row-major inside each channel."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
    out = np.zeros((n, c, k, k, oh, ow), x.dtype)
    for i in range(k):
        for j in range(k):
            out[:, :, i, j] = xp[:, :, i * d:i * d + s * (oh - 1) + 1:s, j * d:j * d + s * (ow - 1) + 1:s]
    return out.reshape(n, c * k * k, oh * ow)


def _fold_ref(cols, size, k, d, p, s):
    """unfold's adjoint, by the same loops: overlapping blocks add."""
    n, ck, _ = cols.shape
    c, (h, w) = ck // (k * k), size
    oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
    blocks = cols.reshape(n, c, k, k, oh, ow)
    out = np.zeros((n, c, h + 2 * p, w + 2 * p), cols.dtype)
    for i in range(k):
        for j in range(k):
            out[:, :, i * d:i * d + s * (oh - 1) + 1:s, j * d:j * d + s * (ow - 1) + 1:s] += blocks[:, :, i, j]
    return out[:, :, p:p + h, p:p + w]


IMG = RNG.uniform(-1, 1, size=(1, 2, 5, 4)).astype(np.float32)
GRADS += [
    ("unfold", lambda x: ops.unfold(x, 2, 2, 1, 1), lambda x: _unfold_ref(x, 2, 2, 1, 1), [IMG]),
    ("fold", lambda c: ops.fold(c, Tensor(np.int32([5, 4])), 2, 1, 1, 2), lambda c: _fold_ref(c, (5, 4), 2, 1, 1, 2),
     [RNG.uniform(-1, 1, size=(1, 8, 9)).astype(np.float32)]),
]


def _masked(x, s):
    out = x.copy()
    mask = X > 0
    out[mask] = s[:mask.sum()]
    return out


def _sliced(x, s):
    out = x.copy()
    out[0:3:2] = s
    return out


def _diag_set(x, s):
    out = x.copy()
    out[[0, 1, 2], [0, 1, 2]] = s
    return out


@pytest.mark.parametrize("name,fn,reference,arrays", GRADS, ids=[g[0] for g in GRADS])
def test_gradient_matches_finite_differences(name, fn, reference, arrays):
    cotangent = RNG.uniform(-1, 1, size=np.shape(reference(*arrays))).astype(np.float32)
    positions = tuple(range(len(arrays)))
    grads = ms.grad(lambda *xs: (fn(*xs) * Tensor(cotangent)).sum(), grad_position=positions)(
        *[Tensor(a) for a in arrays])
    grads = grads if isinstance(grads, tuple) else (grads,)
    want = numeric_grads(reference, arrays, cotangent)
    for k, (g, w) in enumerate(zip(grads, want)):
        np.testing.assert_allclose(g.asnumpy(), w, rtol=2e-3, atol=2e-3, err_msg=f"{name}: gradient {k}")


def test_inplace_row_ops_have_mindsporess_zero_gradient():
    """MindSpore 2.10 differentiates InplaceAdd/Sub/Update to zeros (recorded in the array2 fixture)."""
    v = Tensor(X[:1].copy())
    gx, gv = ms.grad(lambda x, v: ops.inplace_add(x, v, 1).sum(), grad_position=(0, 1))(Tensor(X), v)
    assert not gx.asnumpy().any() and not gv.asnumpy().any()


class _Net(nn.Cell):
    def construct(self, x, y, mask):
        a = ops.roll(x, 1, 1) + ops.rot90(x, 2, (0, 1))
        b = ops.index_add(a, Tensor(np.int32([0, 0])), y, 0)
        return ops.MaskedScatter()(b, mask, ops.hstack([x, x])), ops.diag_embed(x[0])


def test_graph_mode_matches_pynative():
    y = RNG.uniform(-1, 1, size=(2, 4)).astype(np.float32)
    mask = Tensor(X < 0)
    eager = [t.asnumpy() for t in _Net()(Tensor(X), Tensor(y), mask)]
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = [t.asnumpy() for t in _Net()(Tensor(X), Tensor(y), mask)]
    for e, g in zip(eager, graph):
        np.testing.assert_array_equal(g, e)
    want = np.roll(X, 1, 1) + np.rot90(X, 2)
    want[0] += y.sum(0)
    np.testing.assert_allclose(eager[0][~(X < 0)], want[~(X < 0)], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call,error", [
    (lambda: ops.rot90(Tensor(X), 1, (0,)), ValueError),
    (lambda: ops.rot90(Tensor(X), 1.0, (0, 1)), TypeError),
    (lambda: ops.fliplr(Tensor(X[0])), ValueError),
    (lambda: ops.dsplit(Tensor(X), 2), ValueError),
    (lambda: ops.vstack(Tensor(X)), TypeError),
    (lambda: ops.select_scatter(Tensor(X), Tensor(X[0]), 1, 0), ValueError),
    (lambda: ops.Range()(Tensor(0.0), Tensor(1.0), Tensor(0.0)), ValueError),
    (lambda: ops.InvertPermutation()((0, 0, 1)), ValueError),
    (lambda: Tensor(X).take(_i32([0]), None, "bad"), ValueError),
])
def test_errors_are_mindsporess_types(call, error):
    with pytest.raises(error):
        call()


def test_invert_permutation_is_a_tuple():
    assert ops.InvertPermutation()((3, 4, 0, 2, 1)) == (2, 4, 3, 0, 1)
