"""Sparse tensors (COOTensor / CSRTensor / RowTensor) and their ops (ops.function.sparse_func,
sparse_unary_func, nn.sparse).

Oracles: the dense matrix built in numpy (float64, rounded) and compared with what the sparse ops
give; hand-computed values; MindSpore 2.10's documented examples and, where its order is not obvious
(coo_add merges, coo_concat/coalesce sort), the outputs real MindSpore 2.10 CPU returned for the same
inputs (written here by hand); finite differences for gradients; the recorded signature table."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import FeatureNotSupportedError
from ascendemu.frontend import COOTensor, CSRTensor, Tensor, nn, ops
from ascendemu.frontend.api_coverage import table_signature
from ascendemu.frontend.ops.function import sparse_func, sparse_unary_func


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def random_sparse(seed: int, shape=(4, 5), density=0.4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dense = rng.uniform(-2, 2, shape).astype(np.float32)
    dense[rng.uniform(size=shape) > density] = 0
    return dense


def csr_of(dense: np.ndarray) -> CSRTensor:
    """A CSRTensor built in numpy (the oracle's own conversion)."""
    rows, cols = np.nonzero(dense)
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=dense.shape[0]))))
    return CSRTensor(Tensor(indptr.astype(np.int32)), Tensor(cols.astype(np.int32)), Tensor(dense[rows, cols]),
                     dense.shape)


def coo_of(dense: np.ndarray, index_dtype=np.int32) -> COOTensor:
    coords = np.argwhere(dense)
    return COOTensor(Tensor(coords.astype(index_dtype)), Tensor(dense[tuple(coords.T)]), dense.shape)


def coo64(indices, values, shape) -> COOTensor:
    return COOTensor(Tensor(np.array(indices, np.int64)), Tensor(np.array(values, np.float32)), shape)


# ------------------------------------------------------------------ signatures and exports
SPARSE_NAMES = sorted(set(sparse_func.__all__) | set(sparse_unary_func.__all__))


@pytest.mark.parametrize("name", SPARSE_NAMES)
def test_every_sparse_function_has_the_recorded_signature(name):
    ours = [(p.name, p.kind, p.default) for p in inspect.signature(getattr(ops, name)).parameters.values()]
    table = [(p.name, p.kind, p.default) for p in table_signature(f"mindspore.ops.{name}").parameters.values()]
    assert ours == table
    assert getattr(ops.function.sparse_func if name in sparse_func.__all__ else ops.function.sparse_unary_func,
                   name) is getattr(ops, name)


def test_the_classes_are_exported_where_mindspore_has_them():
    from ascendemu.frontend import common
    from ascendemu.frontend.common import sparse_tensor
    for name in ("COOTensor", "CSRTensor", "RowTensor", "SparseTensor"):
        assert getattr(ms, name) is getattr(common, name) is getattr(sparse_tensor, name)
    assert nn.SparseToDense and nn.SparseTensorDenseMatmul
    assert len(sparse_unary_func.UNARY_OPS) == 31 and len(sparse_unary_func.__all__) == 62


# ------------------------------------------------------------------ conversions
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_conversions_round_trip_through_the_dense_matrix(seed):
    dense = random_sparse(seed)
    coo = ops.dense_to_sparse_coo(Tensor(dense))
    assert coo.indices.dtype == ms.int32 and coo.shape == dense.shape
    np.testing.assert_array_equal(coo.indices.asnumpy(), np.argwhere(dense))
    np.testing.assert_array_equal(coo.values.asnumpy(), dense[dense != 0])
    csr = ops.dense_to_sparse_csr(Tensor(dense))
    expected = csr_of(dense)
    for part in ("indptr", "indices", "values"):
        np.testing.assert_array_equal(getattr(csr, part).asnumpy(), getattr(expected, part).asnumpy())
    for sparse in (coo, csr, coo.to_csr(), csr.to_coo(), ops.csr_to_coo(csr)):
        np.testing.assert_array_equal(sparse.to_dense().asnumpy(), dense)
    np.testing.assert_array_equal(ops.csr_to_dense(csr).asnumpy(), dense)
    np.testing.assert_array_equal(nn.SparseToDense()(coo).asnumpy(), dense)
    np.testing.assert_array_equal(Tensor(dense).to_csr().indptr.asnumpy(), expected.indptr.asnumpy())


def test_coo_to_csr_sorts_entries_by_row_and_helpers_match_mindspore():
    coo = COOTensor(Tensor(np.array([[2, 1], [0, 3], [1, 0]], np.int32)), Tensor(np.array([5., 6., 7.], np.float32)),
                    (3, 4))
    csr = coo.to_csr()
    assert csr.indptr.asnumpy().tolist() == [0, 1, 2, 3]
    assert csr.indices.asnumpy().tolist() == [3, 0, 1] and csr.values.asnumpy().tolist() == [6., 7., 5.]
    assert ops.coo2csr(Tensor(np.array([0, 1, 1], np.int32)), 3).asnumpy().tolist() == [0, 1, 3, 3]
    assert ops.csr2coo(Tensor(np.array([0, 1, 3, 3], np.int32)), 3).asnumpy().tolist() == [0, 1, 1]
    with pytest.raises(TypeError, match="only support Int32"):
        ops.coo2csr(Tensor(np.array([0, 1], np.int64)), 3)


# ------------------------------------------------------------------ CSR arithmetic against numpy
@pytest.mark.parametrize("seed", [3, 4])
def test_csr_products_sums_and_elementwise_match_numpy(seed):
    dense = random_sparse(seed)
    csr = csr_of(dense)
    rng = np.random.default_rng(seed)
    vec, mat = rng.normal(size=(5, 1)).astype(np.float32), rng.normal(size=(5, 3)).astype(np.float32)
    d64 = dense.astype(np.float64)
    np.testing.assert_allclose(ops.csr_mv(csr, Tensor(vec)).asnumpy(), d64 @ vec, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(csr.mv(Tensor(vec)).asnumpy(), d64 @ vec, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(csr.mm(Tensor(mat)).asnumpy(), d64 @ mat, rtol=1e-5, atol=1e-6)
    for axis in (1, -1):
        np.testing.assert_allclose(ops.csr_reduce_sum(csr, axis).asnumpy(), d64.sum(1, keepdims=True), rtol=1e-5,
                                   atol=1e-6)
    other = rng.uniform(1, 2, (4, 5)).astype(np.float32)
    rows, cols = np.nonzero(dense)
    for fn, ref in ((ops.csr_mul, np.multiply), (ops.csr_div, np.divide)):
        out = fn(csr, Tensor(other))
        assert isinstance(out, CSRTensor)
        np.testing.assert_allclose(out.values.asnumpy(), ref(d64[rows, cols], other[rows, cols]), rtol=1e-6)
    row_scale = other[:1]                                   # broadcast along the rows
    np.testing.assert_allclose((csr * Tensor(row_scale)).values.asnumpy(), d64[rows, cols] * row_scale[0, cols],
                               rtol=1e-6)
    scaled = csr * Tensor(np.float32(2))                    # a scalar: MindSpore returns the dense values
    assert isinstance(scaled, Tensor) and np.allclose(scaled.asnumpy(), 2 * dense[rows, cols])
    np.testing.assert_array_equal(ops.csr_gather(csr.indptr, csr.indices, Tensor(other), (4, 5)).asnumpy(),
                                  other[rows, cols])


def test_csr_softmax_is_over_each_rows_stored_values():
    dense = random_sparse(5, (3, 6), 0.6)
    out = ops.csr_softmax(csr_of(dense), ms.float32)
    rows, cols = np.nonzero(dense)
    v = dense[rows, cols].astype(np.float64)
    expected = np.empty_like(v)
    for r in np.unique(rows):
        e = np.exp(v[rows == r] - v[rows == r].max())
        expected[rows == r] = e / e.sum()
    np.testing.assert_allclose(out.values.asnumpy(), expected, rtol=1e-5, atol=1e-7)
    assert out.indices.asnumpy().tolist() == cols.tolist()


def test_csr_add_and_mm_structures():
    a = CSRTensor(Tensor(np.array([0, 1, 2, 2], np.int32)), Tensor(np.array([0, 3], np.int32)),
                  Tensor(np.array([1., 2.], np.float32)), (3, 4))
    b = CSRTensor(Tensor(np.array([0, 1, 1, 2], np.int32)), Tensor(np.array([0, 1], np.int32)),
                  Tensor(np.array([-1., 5.], np.float32)), (3, 4))
    out = ops.csr_add(a, b, Tensor(np.float32(2)), Tensor(np.float32(3)))  # MindSpore 2.10: [-1, 4, 15]
    assert out.indptr.asnumpy().tolist() == [0, 1, 2, 3] and out.indices.asnumpy().tolist() == [0, 3, 1]
    np.testing.assert_array_equal(out.values.asnumpy(), [-1., 4., 15.])
    np.testing.assert_array_equal((a - a).to_dense().asnumpy(), np.zeros((3, 4)))
    # MindSpore's csr_mm docstring example
    a = CSRTensor(Tensor(np.array([0, 1, 1, 3, 4], np.int32)), Tensor(np.array([0, 3, 4, 0], np.int32)),
                  Tensor(np.array([1., 5., -1., -2.], np.float32)), (4, 5))
    b = CSRTensor(Tensor(np.array([0, 1, 1, 3, 3, 3], np.int32)), Tensor(np.array([0, 0, 1], np.int32)),
                  Tensor(np.array([2., 7., 8.], np.float32)), (5, 3))
    c = ops.csr_mm(a, b)
    assert c.shape == (4, 3) and c.indptr.asnumpy().tolist() == [0, 1, 1, 1, 2]
    assert c.indices.asnumpy().tolist() == [0, 0] and c.values.asnumpy().tolist() == [2., -4.]
    np.testing.assert_allclose(ops.csr_mm(a, a, trans_b=True).to_dense().asnumpy(),
                               a.to_dense().asnumpy() @ a.to_dense().asnumpy().T)


# ------------------------------------------------------------------ COO structure ops
def test_coo_add_merges_as_mindspore_and_applies_thresh_to_sums():
    a = coo64([[1, 2], [0, 1], [2, 0]], [1., -2., 0.5], (3, 4))
    b = coo64([[0, 1], [2, 3], [0, 0]], [2., -0.25, 3.], (3, 4))
    out = ops.coo_add(a, b, Tensor(np.float32(0.6)))        # no summed entry: thresh drops nothing
    assert out.indices.dtype == ms.int64
    assert out.indices.asnumpy().tolist() == [[0, 1], [1, 2], [0, 1], [2, 0], [2, 3], [0, 0]]
    assert out.values.asnumpy().tolist() == [2.0, 1.0, -2.0, 0.5, -0.25, 3.0]
    cancel = coo64([[1, 2]], [-1.], (3, 4))
    kept = ops.coo_add(a, cancel, Tensor(np.float32(0)))
    assert kept.indices.asnumpy().tolist() == [[1, 2], [0, 1], [2, 0]] and kept.values.asnumpy().tolist()[0] == 0
    dropped = ops.coo_add(a, cancel, Tensor(np.float32(1e-9)))
    assert dropped.indices.asnumpy().tolist() == [[0, 1], [2, 0]]
    np.testing.assert_array_equal((a + b).to_dense().asnumpy(), a.to_dense().asnumpy() + b.to_dense().asnumpy())
    with pytest.raises(TypeError, match=r"SparseAdd.*x1_indices.*Int64"):
        ops.coo_add(coo_of(np.eye(2, dtype=np.float32)), coo_of(np.eye(2, dtype=np.float32)), Tensor(np.float32(0)))


def test_coo_concat_coalesce_and_dense_operators():
    a = coo64([[1, 2], [0, 1], [2, 0]], [1., -2., 0.5], (3, 4))
    b = coo64([[0, 1], [2, 3], [0, 0]], [2., -0.25, 3.], (3, 4))
    out = ops.coo_concat((a, b), 1)                          # MindSpore 2.10 CPU's output
    assert out.shape == (3, 8)
    assert out.indices.asnumpy().tolist() == [[0, 1], [0, 4], [0, 5], [1, 2], [2, 0], [2, 7]]
    assert out.values.asnumpy().tolist() == [-2.0, 3.0, 2.0, 1.0, 0.5, -0.25]
    np.testing.assert_array_equal(ops.coo_concat((a, b, a), 0).to_dense().asnumpy(),
                                  np.concatenate([a.to_dense().asnumpy(), b.to_dense().asnumpy(),
                                                  a.to_dense().asnumpy()]))
    with pytest.raises(ValueError, match="input number < 2"):
        ops.coo_concat((a,), 0)
    indices, values, shape = ops.coalesce(Tensor(np.array([[2, 0, 1, 0], [0, 3, 1, 3]], np.int64)),
                                          Tensor(np.array([1, 2, 3, 4], np.float32)),
                                          Tensor(np.array([3, 4], np.int64)))
    assert indices.asnumpy().tolist() == [[0, 1, 2], [3, 1, 0]] and values.asnumpy().tolist() == [6., 3., 1.]
    assert shape.asnumpy().tolist() == [3, 4]
    c = coo64([[1, 2], [0, 1], [1, 2]], [1., 5., 4.], (3, 3)).coalesce()
    assert c.indices.asnumpy().tolist() == [[0, 1], [1, 2]] and c.values.asnumpy().tolist() == [5., 5.]
    dense = random_sparse(6)
    coo, other = coo_of(dense), np.random.default_rng(6).uniform(1, 2, dense.shape).astype(np.float32)
    np.testing.assert_allclose((coo + Tensor(other)).asnumpy(), dense + other, rtol=1e-6)
    np.testing.assert_allclose((coo - Tensor(other)).asnumpy(), dense - other, rtol=1e-6)
    np.testing.assert_allclose((coo * Tensor(other)).to_dense().asnumpy(), dense * other, rtol=1e-6)
    np.testing.assert_allclose((coo / Tensor(other)).to_dense().asnumpy(), dense / other, rtol=1e-6)
    np.testing.assert_array_equal((-coo).to_dense().asnumpy(), -dense)


# ------------------------------------------------------------------ the unary table
UNARY_REFS = {
    "cos": np.cos, "tan": np.tan, "exp": np.exp, "inv": lambda v: 1 / v, "expm1": np.expm1, "isfinite": np.isfinite,
    "asin": np.arcsin, "sqrt": np.sqrt, "log": np.log, "isnan": np.isnan, "acos": np.arccos, "floor": np.floor,
    "atan": np.arctan, "square": np.square, "sinh": np.sinh, "ceil": np.ceil, "cosh": np.cosh, "log1p": np.log1p,
    "round": np.round, "tanh": np.tanh, "asinh": np.arcsinh, "neg": np.negative, "acosh": lambda v: np.arccosh(v + 1),
    "isinf": np.isinf, "atanh": np.arctanh, "abs": np.abs, "sin": np.sin, "relu": lambda v: np.maximum(v, 0),
    "relu6": lambda v: np.clip(v, 0, 6), "softsign": lambda v: v / (1 + np.abs(v)),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
}
UNARY_VALUES = np.array([0.1, 0.35, 0.8, 0.55], np.float32)      # in every op's domain


@pytest.mark.parametrize("op", sorted(UNARY_REFS))
def test_sparse_unary_ops_apply_the_dense_op_to_the_values(op):
    assert set(UNARY_REFS) == set(sparse_unary_func.UNARY_OPS)
    values = UNARY_VALUES + 1 if op == "acosh" else UNARY_VALUES
    ref = UNARY_REFS[op](UNARY_VALUES.astype(np.float64))
    coo = COOTensor(Tensor(np.array([[0, 0], [0, 2], [1, 1], [2, 3]], np.int32)), Tensor(values), (3, 4))
    csr = CSRTensor(Tensor(np.array([0, 2, 3, 4], np.int32)), Tensor(np.array([0, 2, 1, 3], np.int32)),
                    Tensor(values), (3, 4))
    for fn, sparse in ((getattr(ops, f"coo_{op}"), coo), (getattr(ops, f"csr_{op}"), csr)):
        out = fn(sparse)
        assert type(out) is type(sparse) and out.shape == (3, 4)
        assert out.indices.asnumpy().tolist() == sparse.indices.asnumpy().tolist()
        if ref.dtype == bool:
            assert out.dtype == ms.bool_ and out.values.asnumpy().tolist() == ref.tolist()
        else:
            np.testing.assert_allclose(out.values.asnumpy(), ref, rtol=2e-6, atol=1e-6)
    with pytest.raises(TypeError):
        getattr(ops, f"coo_{op}")(csr)


# ------------------------------------------------------------------ checks, gradients, graph mode, cells
def test_constructors_check_as_mindspore():
    idx, val = Tensor(np.array([[0, 1]], np.int32)), Tensor(np.array([1.], np.float32))
    with pytest.raises(TypeError, match="must be one of \\[int16, int32, int64\\]"):
        COOTensor(Tensor(np.array([[0., 1.]], np.float32)), val, (3, 4))
    with pytest.raises(ValueError, match="length of 'shape' must be 2"):
        COOTensor(idx, val, (3, 4, 2))
    with pytest.raises(TypeError, match="'shape' must be tuple"):
        COOTensor(idx, val, [3, 4])
    with pytest.raises(ValueError, match=r"indptr must have length \(1 \+ shape\[0\]\)"):
        CSRTensor(Tensor(np.array([0, 1], np.int32)), Tensor(np.array([1], np.int32)), val, (3, 4))
    with pytest.raises(ValueError, match="axis"):
        ops.csr_reduce_sum(csr_of(np.eye(3, dtype=np.float32)), 0)
    with pytest.raises(ValueError, match="only support 2-D Tensor"):
        ops.dense_to_sparse_coo(Tensor(np.ones((2, 2, 2), np.float32)))
    coo = COOTensor(idx, val, (3, 4))
    assert (coo.dtype, coo.size, coo.itemsize, coo.ndim) == (ms.float32, 1, 4, 2)
    assert coo.astype(ms.float16).values.dtype == ms.float16 and COOTensor(coo_tensor=coo).shape == (3, 4)
    assert ops.coo_tensor_get_dense_shape(coo) == (3, 4) and ops.coo_tensor_get_values(coo) is coo.values
    row = ops.row_tensor_add(ops.make_row_tensor_inner(Tensor(np.array([0], np.int32)),
                                                       Tensor(np.array([[1., 2.]], np.float32)), (3, 2)),
                             Tensor(np.array([[1., 1.]], np.float32)))
    assert ops.row_tensor_get_values(row).asnumpy().tolist() == [[2., 3.]] and row.dense_shape == (3, 2)


def test_gradients_flow_through_the_values():
    indptr, indices = Tensor(np.array([0, 1, 3, 3], np.int32)), Tensor(np.array([1, 0, 2], np.int32))
    values, dense = np.array([1., 2., -3.], np.float32), np.arange(4, dtype=np.float32).reshape(4, 1)

    def f(v, d):
        return ops.csr_mv(CSRTensor(indptr, indices, v, (3, 4)), d).sum()
    dv, dd = ms.grad(f, grad_position=(0, 1))(Tensor(values), Tensor(dense))
    np.testing.assert_allclose(dv.asnumpy(), dense[[1, 0, 2], 0])                # d/dv = dense[column]
    np.testing.assert_allclose(dd.asnumpy(), [[2.], [1.], [-3.], [0.]])         # column sums

    weights = np.array([1., 2., 3.])

    def g(v):
        return (ops.csr_softmax(CSRTensor(indptr, indices, v, (3, 4)), ms.float32).values
                * Tensor(weights.astype(np.float32))).sum()

    def g_ref(v):
        e1 = np.exp(v[1:] - v[1:].max())
        return weights[0] + (weights[1:] * e1 / e1.sum()).sum()
    eps = 1e-4
    numeric = [(g_ref(values + eps * np.eye(3)[i]) - g_ref(values - eps * np.eye(3)[i])) / (2 * eps) for i in range(3)]
    np.testing.assert_allclose(ms.grad(g)(Tensor(values)).asnumpy(), numeric, rtol=1e-3, atol=1e-6)


def test_graph_mode_composes_and_refuses_data_dependent_sparsity():
    indptr, indices = Tensor(np.array([0, 1, 3, 3], np.int32)), Tensor(np.array([1, 0, 2], np.int32))

    class Net(nn.Cell):
        def construct(self, values, dense):
            csr = CSRTensor(indptr, indices, values, (3, 4))
            return ops.csr_mv(ops.csr_relu(csr), dense), csr.to_coo().to_dense(), ops.csr_reduce_sum(csr, 1)

    class Refused(nn.Cell):
        def construct(self, x):
            return ops.dense_to_sparse_coo(x).values

    values, dense = np.array([1., 2., -3.], np.float32), np.arange(4, dtype=np.float32).reshape(4, 1)
    full = np.zeros((3, 4), np.float32)
    full[[0, 1, 1], [1, 0, 2]] = values
    ms.set_context(mode=ms.GRAPH_MODE)
    mv, as_dense, row_sums = Net()(Tensor(values), Tensor(dense))
    np.testing.assert_allclose(mv.asnumpy(), np.maximum(full, 0) @ dense)
    np.testing.assert_array_equal(as_dense.asnumpy(), full)
    np.testing.assert_allclose(row_sums.asnumpy(), full.sum(1, keepdims=True))
    with pytest.raises(FeatureNotSupportedError, match="dense_to_sparse_coo.*PYNATIVE_MODE"):
        Refused()(Tensor(full))


@pytest.mark.parametrize("adjoint_st,adjoint_dt", [(False, False), (True, False), (False, True), (True, True)])
def test_sparse_tensor_dense_matmul_cell(adjoint_st, adjoint_dt):
    indices, values = np.array([[0, 1], [1, 2]], np.int32), np.array([1., 2.], np.float32)
    sparse = np.zeros((3, 4), np.float32)
    sparse[indices[:, 0], indices[:, 1]] = values
    left = sparse.T if adjoint_st else sparse
    dense = np.arange(left.shape[1] * 2, dtype=np.float32).reshape(left.shape[1], 2)
    given = dense.T if adjoint_dt else dense
    out = nn.SparseTensorDenseMatmul(adjoint_st, adjoint_dt)(Tensor(indices), Tensor(values), (3, 4), Tensor(given))
    np.testing.assert_allclose(out.asnumpy(), left @ dense)


def test_sparse_primitives():
    indices, values = Tensor(np.array([[0, 1], [1, 2]], np.int64)), Tensor(np.array([1., 2.], np.float32))
    expected = np.zeros((3, 4), np.float32)
    expected[[0, 1], [1, 2]] = [1., 2.]
    np.testing.assert_array_equal(ops.SparseToDense()(indices, values, (3, 4)).asnumpy(), expected)
    np.testing.assert_array_equal(ops.SparseToDense()(indices, values, Tensor(np.array([3, 4]))).asnumpy(), expected)
    ones = Tensor(np.ones((3, 4), np.float32))
    added = ops.SparseTensorDenseAdd()(indices, values, Tensor(np.array([3, 4], np.int64)), ones)
    np.testing.assert_array_equal(added.asnumpy(), expected + 1)
    with pytest.raises(TypeError, match="must be all tensor"):
        ops.SparseTensorDenseAdd()(indices, values, (3, 4), ones)
    with pytest.raises(TypeError, match="input type must be same"):
        ops.SparseTensorDenseMatmul()(indices, values, (3, 4), Tensor(np.ones((4, 2), np.float16)))
    dense = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_array_equal(ops.SparseTensorDenseMatmul()(indices, values, (3, 4), Tensor(dense)).asnumpy(),
                                  expected @ dense)
    for name in ("SparseToDense", "SparseTensorDenseAdd", "SparseTensorDenseMatmul"):
        ours = list(inspect.signature(getattr(ops, name).__init__).parameters.values())[1:]
        table = table_signature(f"mindspore.ops.{name}", "init").parameters.values()
        assert [(p.name, p.default) for p in ours] == [(p.name, p.default) for p in table]


def test_sparse_slice_keeps_the_entries_in_the_box():
    indices = Tensor(np.array([[0, 1], [1, 2], [1, 3], [2, 2]], np.int64))
    values, shape = Tensor(np.array([1., 2., 3., 4.], np.float32)), Tensor(np.array([3, 4], np.int64))
    cases = (([0, 1], [2, 3], [[0, 0], [1, 1], [1, 2]], [1., 2., 3.], [2, 3]),        # MindSpore 2.10 CPU's outputs
             ([1, 2], [5, 5], [[0, 0], [0, 1], [1, 0]], [2., 3., 4.], [2, 2]),
             ([3, 0], [1, 1], [], [], [0, 1]))
    for start, size, want_indices, want_values, want_shape in cases:
        out = ops.SparseSlice()(indices, values, shape, Tensor(np.array(start, np.int64)),
                                Tensor(np.array(size, np.int64)))
        assert out[0].asnumpy().reshape(-1, 2).tolist() == want_indices
        assert out[1].asnumpy().tolist() == want_values and out[2].asnumpy().tolist() == want_shape
    with pytest.raises(TypeError, match=r"SparseSlice.*indices.*Int64"):
        ops.SparseSlice()(Tensor(np.array([[0, 1]], np.int32)), values[:1], shape, shape, shape)
