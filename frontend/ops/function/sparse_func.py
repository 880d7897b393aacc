"""``mindspore.ops.function.sparse_func``: the functions on COOTensor / CSRTensor (``ops.csr_mv``,
``ops.coo_add``, ``ops.dense_to_sparse_coo`` ...), with MindSpore 2.10's semantics, checks and messages.

Every function is a composition of served dense ops on the sparse tensor's parts: where the result's
index structure follows from the input's (conversions, ``csr_mv``, ``csr_reduce_sum``, ``csr_softmax``,
``csr_mul``) it is computed on the device with Gather/ScatterNd/UnsortedSegmentSum/Sort, so both modes
and gradients through ``values`` work. Where the result's structure depends on index or value *data*
(``coalesce``, ``coo_add``, ``coo_concat``, ``csr_add``, ``csr_mm``, ``dense_to_sparse_*``), the
structure is computed on the host from concrete tensors and the values still flow through device ops
(gradients too); a symbolic tensor there (GRAPH_MODE) is refused with FeatureNotSupportedError, as
other data-dependent shapes are.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ascendemu.errors import FeatureNotSupportedError

from ...common import dtype as mstype
from ...common.sparse_tensor import COOTensor, CSRTensor, RowTensorInner
from ...common.tensor import Tensor, tensor_operator_registry
from ..operations.array_ops import GatherNd  # noqa: F401  (MindSpore's sparse_func has it)
from ..primitive import _promote, _tensor
from .array_func import (broadcast_to, concat, gather, gather_nd, scatter_nd, sort, stack, tensor_scatter_add,
                         unsorted_segment_max, unsorted_segment_sum)
from .grad.grad_func import stop_gradient
from .math_func import cumsum, exp, matmul

__all__ = ["coalesce", "coo2csr", "coo_tensor_get_dense_shape", "coo_tensor_get_indices", "coo_tensor_get_values",
           "csr_div", "csr_gather", "csr_mm", "csr_mul", "csr_mv", "csr_reduce_sum", "csr_to_coo", "csr2coo",
           "csr_tensor_get_dense_shape", "csr_tensor_get_indices", "csr_tensor_get_indptr", "csr_tensor_get_values",
           "dense_to_sparse_coo", "dense_to_sparse_csr", "make_sparse_tensor", "make_coo_tensor", "make_csr_tensor",
           "make_row_tensor", "make_row_tensor_inner", "row_tensor_get_values", "row_tensor_get_indices",
           "row_tensor_get_dense_shape", "row_tensor_add", "coo_add", "coo_concat", "csr_add", "csr_softmax",
           "csr_to_dense"]

# the value dtypes MindSpore's Coalesce kernel takes
COALESCE_VALUE_DTYPES = (mstype.float16, mstype.float32, mstype.float64)


# ------------------------------------------------------------------ helpers
def _host(t: Tensor, op: str, what: str) -> np.ndarray:
    """The data of ``t`` for an op whose output structure depends on it; refused while GRAPH_MODE
    captures (the tensor is symbolic, and graph shapes are static)."""
    if t.is_symbolic:
        raise FeatureNotSupportedError(
            f"{op}: the output's sparsity depends on the data of {what}, which GRAPH_MODE does not know while "
            f"it captures the graph (shapes are static there); call {op} in PYNATIVE_MODE, or outside construct")
    return t.asnumpy()


def _index(data: Any, dtype: Any = mstype.int32) -> Tensor:
    """A host index array as a Tensor of ``dtype``."""
    return Tensor(np.asarray(data).astype(dtype.np_type), dtype)


def _check_int32(t: Tensor, what: str) -> None:
    """MindSpore's CSR kernels (COO2CSR, CSR2COO) take int32 indices only."""
    if t.dtype != mstype.int32:
        raise TypeError(f"The dtype of {what} only support Int32 for now, but got {t.dtype}.")


def _check_2d(shape: Sequence[int], what: str) -> None:
    if len(shape) > 2:
        raise ValueError(f"Currently only support 2-D {what} when converting to COOTensor.")


def _rows(indptr: Tensor, nnz: int) -> Tensor:
    """The row of each stored entry: the number of rows that end at or before its position."""
    positions = _index(np.arange(nnz).reshape(-1, 1))
    ends = indptr[1:].reshape(1, -1).astype(mstype.int32)
    return (ends <= positions).astype(mstype.int32).sum(1, mstype.int32)


def _indptr(rows: Tensor, height: int) -> Tensor:
    """CSR row pointers of entries sorted by row: 0, then the running count of entries per row."""
    counts = unsorted_segment_sum(rows * 0 + 1, rows, height)
    return concat((_index([0]), cumsum(counts, 0)))


def _coo_parts(x: COOTensor) -> tuple[Tensor, Tensor]:
    indices = x.indices.astype(mstype.int32)
    return indices[:, 0], indices[:, 1]


def _csr_coords(x: CSRTensor) -> tuple[Tensor, Tensor]:
    """(rows, columns) of a CSR tensor's entries, as int32 device tensors."""
    return _rows(x.indptr, x.values.shape[0]), x.indices.astype(mstype.int32)


def _is_scalar(t: Tensor) -> bool:
    return t.size == 1 and len(t.shape) <= 2


def _lex_order(keys: np.ndarray) -> np.ndarray:
    """A stable order of (n, k) int keys, lexicographic by columns left to right."""
    return np.lexsort(keys.T[::-1]) if len(keys) else np.zeros(0, np.int64)


def _unique_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``keys`` sorted, and each row's position among them."""
    if not len(keys):
        return keys.reshape(0, keys.shape[1] if keys.ndim == 2 else 2), np.zeros(0, np.int64)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    return uniq, inverse.reshape(-1)


# ------------------------------------------------------------------ conversions
def coo2csr(*args: Any) -> Tensor:
    """``coo2csr(row_indices, height)``: the row pointers of COO row indices sorted by row."""
    row_indices, height = args
    _check_int32(row_indices, "row_indices")
    return _indptr(row_indices, int(height))


def csr2coo(*args: Any) -> Tensor:
    """``csr2coo(indptr, nnz)``: the row index of each of the ``nnz`` stored entries."""
    indptr, nnz = args
    _check_int32(indptr, "Indptr")
    return _rows(indptr, int(nnz))


def csr_to_coo(tensor: CSRTensor) -> COOTensor:
    if not isinstance(tensor, CSRTensor):
        raise TypeError("For functional operator csr_to_coo, input argument must be a CSRTensor.")
    if len(tensor.shape) > 2:
        raise ValueError("Currently only support 2-D CSRTensor when converting to COOTensor.")
    _check_int32(tensor.indptr, "Indptr")
    rows = _rows(tensor.indptr, tensor.values.shape[0])
    return COOTensor(stack((rows, tensor.indices.astype(mstype.int32)), 1), tensor.values, tensor.shape)


def csr_to_dense(csr_tensor: CSRTensor) -> Tensor:
    if not isinstance(csr_tensor, CSRTensor):
        raise TypeError("For functional operator csr_to_dense, input argument must be a CSRTensor.")
    _check_2d(csr_tensor.shape, "CSRTensor")
    rows, cols = _csr_coords(csr_tensor)
    return scatter_nd(stack((rows, cols), 1), csr_tensor.values, csr_tensor.shape)


def _coo_to_dense(x: COOTensor) -> Tensor:
    return scatter_nd(x.indices.astype(mstype.int32), x.values, x.shape)


def _coo_to_csr(x: COOTensor) -> CSRTensor:
    """MindSpore's COOTensor.to_csr: entries sorted by row (Sort on float32 rows), then COO2CSR."""
    rows, cols = _coo_parts(x)
    _check_int32(x.indices, "row_indices")
    sorted_rows, order = sort(rows.astype(mstype.float32))
    indptr = _indptr(sorted_rows.astype(mstype.int32), x.shape[0])
    return CSRTensor(indptr, gather(cols, order, 0), gather(x.values, order, 0), x.shape)


def _dense_2d(tensor: Any, op: str, what: str) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"For functional operator {op}, input argument must be a Tensor.")
    if len(tensor.shape) > 2:
        raise ValueError(f"Currently only support 2-D Tensor when converting to {what}.")
    return tensor


def dense_to_sparse_coo(tensor: Tensor) -> COOTensor:
    """The non-zero entries of a 2-D tensor (row-major), int32 indices; the values are gathered from the
    tensor, so gradients reach it."""
    tensor = _dense_2d(tensor, "dense_to_sparse_coo", "COOTensor")
    coords = _index(np.argwhere(_host(tensor, "dense_to_sparse_coo", "its input")))
    return COOTensor(coords, gather_nd(tensor, coords), tensor.shape)


def dense_to_sparse_csr(tensor: Tensor) -> CSRTensor:
    tensor = _dense_2d(tensor, "dense_to_sparse_csr", "CSRTensor")
    coords = np.argwhere(_host(tensor, "dense_to_sparse_csr", "its input"))
    indptr = np.concatenate(([0], np.cumsum(np.bincount(coords[:, 0], minlength=tensor.shape[0]))))
    values = gather_nd(tensor, _index(coords))
    return CSRTensor(_index(indptr), _index(coords[:, 1]), values, tensor.shape)


# ------------------------------------------------------------------ CSR arithmetic
def _csr_dense_operand(x: CSRTensor, y: Any) -> tuple[Tensor, Any]:
    """The dense operand of csr_mul/csr_div: a number or scalar tensor (then the result is the dense
    values, as MindSpore returns it), else ``y`` broadcast to ``x`` and read at its entries."""
    if isinstance(y, (int, float, bool)):
        y = _tensor(y)
    if _is_scalar(y):
        if y.ndim > x.ndim:
            raise ValueError("dense tensor cannot broadcast to the sparse tensor.")
        return y, None
    if y.ndim > x.ndim:
        raise ValueError(f"Currently, only support dense tensor broadcast to sparse tensor, but sparse tensor has "
                         f"{x.ndim} dimensions, and dense tensor has {y.ndim} dimensions. ")
    values, y = _promote(x.values, y)
    rows, cols = _csr_coords(x)
    return gather_nd(broadcast_to(y, x.shape), stack((rows, cols), 1)), values


def csr_mul(x: CSRTensor, y: Tensor) -> CSRTensor:
    other, values = _csr_dense_operand(x, y)
    if values is None:
        return (x.values * other).reshape(x.values.shape)
    return CSRTensor(x.indptr, x.indices, values * other, x.shape)


def csr_div(x: CSRTensor, y: Tensor) -> Tensor:
    other, values = _csr_dense_operand(x, y)
    if values is None:
        return (x.values / other).reshape(x.values.shape)
    return CSRTensor(x.indptr, x.indices, values / other, x.shape)


def _csr_times_dense(a: CSRTensor, b: Tensor) -> Tensor:
    """``a @ b`` for a dense 2-D ``b``: each entry's value times its column's row of ``b``, summed per row."""
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"Currently, only support 2-D inputs! But csr tensor has {a.ndim} dimensions, and dense "
                         f"tensor has {b.ndim} dimension(s). ")
    if b.shape[0] != a.shape[1]:
        raise ValueError(f"The dense tensor's shape[0] must equal the sparse tensor's shape[1], but got "
                         f"{b.shape[0]} and {a.shape[1]}.")
    values, b = _promote(a.values, b)
    rows, cols = _csr_coords(a)
    products = values.reshape(-1, 1) * gather(b, cols, 0)
    return unsorted_segment_sum(products, rows, a.shape[0])


def csr_mv(csr_tensor: CSRTensor, dense: Tensor) -> Tensor:
    """Sparse matrix times dense column vector(s) ``(N, 1)``: a dense ``(M, 1)``."""
    return _csr_times_dense(csr_tensor, dense)


def csr_reduce_sum(csr_tensor: CSRTensor, axis: int) -> Tensor:
    """The sum of each row (``axis`` 1, or -1 for a 2-D tensor) as a dense ``(M, 1)``."""
    ndim = csr_tensor.ndim
    if axis not in (1, 1 - ndim):
        raise ValueError(f"For CSRReduceSum, `axis` should be 1 or 1-dim. But got `axis`: {axis}and "
                         f"`1- dim`: {1 - ndim}.")
    rows, _ = _csr_coords(csr_tensor)
    return unsorted_segment_sum(csr_tensor.values, rows, csr_tensor.shape[0]).reshape(csr_tensor.shape[0], 1)


def csr_gather(*args: Any) -> Tensor:
    """``csr_gather(indptr, indices, dense, sparse_shape)``: ``dense`` read at the CSR structure's entries."""
    indptr, indices, dense, _ = args
    rows = _rows(indptr, indices.shape[0])
    return gather_nd(dense, stack((rows, indices.astype(mstype.int32)), 1))


def csr_softmax(logits: CSRTensor, dtype: Any) -> CSRTensor:
    """Softmax over each row's stored values (absent entries are not zeros, they are left out)."""
    if not isinstance(logits, CSRTensor):
        raise TypeError("For functional operator sparse_matrix_softmax, logits must be type of CSRTensor.")
    rows, _ = _csr_coords(logits)
    height = logits.shape[0]
    values = logits.values.astype(dtype)
    peak = stop_gradient(unsorted_segment_max(values, rows, height))    # a shift: softmax does not depend on it
    e = exp(values - gather(peak, rows, 0))
    out = e / gather(unsorted_segment_sum(e, rows, height), rows, 0)
    return CSRTensor(indptr=logits.indptr, indices=logits.indices, values=out, shape=logits.shape)


def _csr_keys(x: CSRTensor, op: str, name: str) -> np.ndarray:
    """(row, column) of each entry of ``x``, on the host."""
    indptr = _host(x.indptr, op, f"{name}.indptr")
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    return np.stack((rows, _host(x.indices, op, f"{name}.indices")), 1)


def _csr_from_keys(keys: np.ndarray, values: Tensor, shape: tuple, dtype: Any) -> CSRTensor:
    indptr = np.concatenate(([0], np.cumsum(np.bincount(keys[:, 0], minlength=shape[0])))) if len(keys) else \
        np.zeros(shape[0] + 1, np.int64)
    return CSRTensor(_index(indptr, dtype), _index(keys[:, 1], dtype), values, shape)


def csr_add(a: CSRTensor, b: CSRTensor, alpha: Tensor, beta: Tensor) -> CSRTensor:
    """``alpha * a + beta * b``: entries on the union of the structures, sorted by (row, column)."""
    if not isinstance(a, CSRTensor) or not isinstance(b, CSRTensor):
        raise TypeError("For functional operator csr_add, both inputs a and b must be type of CSRTensor.")
    if not isinstance(alpha, Tensor) or not isinstance(beta, Tensor):
        raise TypeError("For functional operator csr_add, both inputs alpha and beta must be Tensor.")
    va, vb = _promote(a.values, b.values)
    keys = np.concatenate((_csr_keys(a, "csr_add", "a"), _csr_keys(b, "csr_add", "b")))
    uniq, inverse = _unique_rows(keys)
    scaled = concat((va * alpha.astype(va.dtype), vb * beta.astype(vb.dtype)))
    values = unsorted_segment_sum(scaled, _index(inverse), len(uniq))
    return _csr_from_keys(uniq, values, a.shape, a.indptr.dtype)


def csr_mm(a: CSRTensor, b: CSRTensor, trans_a: bool = False, trans_b: bool = False, adjoint_a: bool = False,
           adjoint_b: bool = False) -> CSRTensor:
    """CSR times CSR (each optionally transposed; adjoint is the transpose for real values): the
    entries the two structures can produce, sorted, their values from the dense product."""
    if not isinstance(a, CSRTensor) or not isinstance(b, CSRTensor):
        raise TypeError("For functional operator csr_mm, inputs a and b must be type of CSRTensor currently.")
    flip_a, flip_b = bool(trans_a or adjoint_a), bool(trans_b or adjoint_b)
    pattern = []
    for x, name, flip in ((a, "a", flip_a), (b, "b", flip_b)):
        mask = np.zeros(x.shape, np.int64)
        keys = _csr_keys(x, "csr_mm", name)
        mask[keys[:, 0], keys[:, 1]] = 1
        pattern.append(mask.T if flip else mask)
    if pattern[0].shape[1] != pattern[1].shape[0]:
        raise ValueError(f"For csr_mm, the shapes {pattern[0].shape} and {pattern[1].shape} cannot be multiplied.")
    keys = np.argwhere(pattern[0] @ pattern[1] > 0)
    da, db = csr_to_dense(a), csr_to_dense(b)
    product = matmul(da.T if flip_a else da, db.T if flip_b else db)
    values = gather_nd(product, _index(keys))
    return _csr_from_keys(keys, values, (pattern[0].shape[0], pattern[1].shape[1]), a.indices.dtype)


# ------------------------------------------------------------------ COO structure ops
def _check_index_int64(t: Tensor, prim: str, arg: str) -> None:
    """MindSpore's Coalesce/SparseAdd/SparseConcat kernels take int64 indices only."""
    if t.dtype != mstype.int64:
        raise TypeError(f"For primitive[{prim}], the input argument[{arg}] must be a type of {{Tensor[Int64]}}, "
                        f"but got Tensor[{t.dtype}].")


def coalesce(x_indices: Tensor, x_values: Tensor, x_shape: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Duplicate coordinates summed, coordinates sorted: ``x_indices`` is ``(ndim, nnz)`` int64."""
    _check_index_int64(x_indices, "Coalesce", "x_indices")
    _check_index_int64(x_shape, "Coalesce", "x_shape")
    if x_values.dtype not in COALESCE_VALUE_DTYPES:
        raise TypeError(f"For primitive[Coalesce], the input argument[x_values] must be a type of "
                        f"{{Tensor[Float16], Tensor[Float32], Tensor[Float64]}}, but got Tensor[{x_values.dtype}].")
    if x_values.ndim != 1 or x_shape.ndim != 1:
        raise ValueError("For Coalesce, x_values and x_shape must be 1-D tensors.")
    if x_indices.ndim != 2:
        raise ValueError("For Coalesce, x_indices must be a 2-D tensor.")
    if x_indices.shape[1] != x_values.shape[0] or x_indices.shape[0] != x_shape.shape[0]:
        raise ValueError(f"For Coalesce, x_indices {x_indices.shape} must be (len(x_shape), len(x_values)) = "
                         f"({x_shape.shape[0]}, {x_values.shape[0]}).")
    keys = _host(x_indices, "coalesce", "x_indices").T
    bounds = _host(x_shape, "coalesce", "x_shape")
    if (keys < 0).any():
        raise ValueError("For Coalesce, indices cannot be less than 0.")
    if (keys >= bounds).any():
        raise ValueError("For Coalesce, indices cannot exceed the limit set by x_shape.")
    uniq, inverse = _unique_rows(keys)
    values = unsorted_segment_sum(x_values, _index(inverse), len(uniq))
    return _index(uniq.T, mstype.int64), values, x_shape


def _coo_coalesce(x: COOTensor) -> COOTensor:
    indices, values, _ = coalesce(x.indices.T, x.values, _index(x.shape, mstype.int64))
    return COOTensor(indices.T, values, x.shape)


def _merge(k1: np.ndarray, k2: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """MindSpore's (TensorFlow's) SparseAdd walk over two index lists: the smaller head goes out first,
    equal heads are summed. Returns, per output entry, its source in ``k1`` and ``k2`` (-1: none)."""
    i = j = 0
    src1: list[int] = []
    src2: list[int] = []
    while i < len(k1) or j < len(k2):
        a = tuple(k1[i]) if i < len(k1) else None
        b = tuple(k2[j]) if j < len(k2) else None
        if b is None or (a is not None and a < b):
            src1.append(i), src2.append(-1)
            i += 1
        elif a is None or b < a:
            src1.append(-1), src2.append(j)
            j += 1
        else:
            src1.append(i), src2.append(j)
            i += 1
            j += 1
    return src1, src2, [n for n in range(len(src1)) if src1[n] >= 0 and src2[n] >= 0]


def coo_add(x1: COOTensor, x2: COOTensor, thresh: Tensor) -> COOTensor:
    """The sum of two COO tensors, merged as MindSpore's SparseAdd merges them (inputs' order kept, equal
    coordinates summed); a summed entry whose magnitude is below ``thresh`` vanishes."""
    v1, v2 = _promote(x1.values, x2.values)
    _check_index_int64(x1.indices, "SparseAdd", "x1_indices")
    _check_index_int64(x2.indices, "SparseAdd", "x2_indices")
    if thresh.ndim != 0:
        raise ValueError(f"For SparseAdd, thresh must be a 0-D tensor, but got a {thresh.ndim}-D tensor.")
    src1, src2, summed = _merge(_host(x1.indices, "coo_add", "x1.indices"), _host(x2.indices, "coo_add", "x2.indices"))
    limit = float(thresh.item())
    keep = np.ones(len(src1), bool)
    if summed and limit > 0:
        a, b = _host(v1, "coo_add", "x1.values"), _host(v2, "coo_add", "x2.values")
        for n in summed:
            keep[n] = abs(a[src1[n]] + b[src2[n]]) >= limit
    k1, k2 = x1.indices.asnumpy(), x2.indices.asnumpy()
    count = int(keep.sum())
    seg1, seg2 = np.full(len(k1), count), np.full(len(k2), count)     # dropped entries go to a spare slot
    out_keys = np.zeros((count, 2), np.int64)
    for slot, n in enumerate(np.flatnonzero(keep)):
        i, j = src1[n], src2[n]
        if i >= 0:
            seg1[i] = slot
        if j >= 0:
            seg2[j] = slot
        out_keys[slot] = k1[i] if i >= 0 else k2[j]
    values = unsorted_segment_sum(concat((v1, v2)), _index(np.concatenate((seg1, seg2))), count + 1)[:count]
    return COOTensor(_index(out_keys, mstype.int64), values, x1.shape)


def coo_concat(sp_input: Sequence[Any], concat_dim: int = 0) -> COOTensor:
    """COO tensors (or ``(indices, values, shape)`` tuples) joined along ``concat_dim``: coordinates
    shifted by the sizes before them, all entries sorted by coordinate."""
    if len(sp_input) < 2:
        raise ValueError("For coo_concat, not support COOTensor input number < 2.")
    parts = [(x[0], x[1], tuple(x[2])) if isinstance(x, tuple) else (x.indices, x.values, x.shape) for x in sp_input]
    rank = len(parts[0][2])
    if not -rank <= concat_dim < rank:
        raise ValueError(f"For coo_concat, concat_dim must be in [{-rank}, {rank}), but got {concat_dim}.")
    dim = concat_dim % rank
    keys, offset = [], 0
    for n, (indices, _, shape) in enumerate(parts):
        _check_index_int64(indices, "SparseConcat", f"indices{n}")
        k = _host(indices, "coo_concat", f"the indices of input {n}").copy()
        k[:, dim] += offset
        keys.append(k)
        offset += shape[dim]
    keys_all = np.concatenate(keys)
    order = _lex_order(keys_all)
    values = gather(concat([p[1] for p in parts]), _index(order), 0)
    out_shape = tuple(offset if d == dim else s for d, s in enumerate(parts[0][2]))
    return COOTensor(_index(keys_all[order], mstype.int64), values, out_shape)


# ------------------------------------------------------------------ makers and getters
def make_coo_tensor(*args: Any) -> COOTensor:
    return COOTensor(*args)


def make_csr_tensor(*args: Any) -> CSRTensor:
    return CSRTensor(*args)


def make_sparse_tensor(indices: Tensor, values: Tensor, dense_shape: tuple) -> COOTensor:
    print("WARNING: 'SparseTensor' is deprecated from version 1.7 and will be removed after version 2.9.0. "
          "Please use 'COOTensor' instead.")
    return make_coo_tensor(indices, values, dense_shape)


def make_row_tensor_inner(*args: Any) -> RowTensorInner:
    """MindSpore's MakeRowTensor: its dense shape a tuple with one entry per dimension of the values."""
    indices, values, dense_shape = args
    if not isinstance(dense_shape, tuple):
        raise TypeError(f"For 'MakeRowTensor', input[2] should be Tuple, but got {type(dense_shape).__name__}.")
    if len(dense_shape) != _tensor(values).ndim:
        raise TypeError(f"The size of dense_shape must be the same with the dimension of values "
                        f"{_tensor(values).ndim}, but got {len(dense_shape)}")
    return RowTensorInner(indices, values, dense_shape)


def make_row_tensor(indices: Tensor, values: Tensor, dense_shape: tuple) -> RowTensorInner:
    print("WARNING: 'RowTensor' is deprecated from version 2.0 and will be removed after version 2.9.0.")
    return make_row_tensor_inner(indices, values, dense_shape)


def row_tensor_add(*args: Any) -> RowTensorInner:
    """``row_tensor_add(x, y)``: a RowTensor plus a dense Tensor (MindSpore's ``RowTensor + Tensor``): ``y``
    added to the stored slices; the indices and dense shape stay."""
    x, y = args
    if not isinstance(x, RowTensorInner):
        raise TypeError(f"For 'row_tensor_add', the first input must be a RowTensor, but got {type(x).__name__}.")
    return RowTensorInner(x.indices, x.values + y, x.dense_shape)


def _getter(kind: type, attribute: str, name: str) -> Any:
    """``name(x)``: ``x.attribute`` of a ``kind`` (MindSpore's COOTensorGetIndices ... primitives)."""
    def get(*args: Any) -> Any:
        (x,) = args
        if not isinstance(x, kind):
            raise TypeError(f"For '{name}', the input must be a {kind.__name__}, but got {type(x).__name__}.")
        return getattr(x, attribute)
    get.__name__ = get.__qualname__ = name
    get.__doc__ = f"``{name}(x)``: ``x.{attribute}`` of a {kind.__name__}."
    return get


coo_tensor_get_indices = _getter(COOTensor, "indices", "coo_tensor_get_indices")
coo_tensor_get_values = _getter(COOTensor, "values", "coo_tensor_get_values")
coo_tensor_get_dense_shape = _getter(COOTensor, "shape", "coo_tensor_get_dense_shape")
csr_tensor_get_indptr = _getter(CSRTensor, "indptr", "csr_tensor_get_indptr")
csr_tensor_get_indices = _getter(CSRTensor, "indices", "csr_tensor_get_indices")
csr_tensor_get_values = _getter(CSRTensor, "values", "csr_tensor_get_values")
csr_tensor_get_dense_shape = _getter(CSRTensor, "shape", "csr_tensor_get_dense_shape")
row_tensor_get_indices = _getter(RowTensorInner, "indices", "row_tensor_get_indices")
row_tensor_get_values = _getter(RowTensorInner, "values", "row_tensor_get_values")
row_tensor_get_dense_shape = _getter(RowTensorInner, "dense_shape", "row_tensor_get_dense_shape")


# ------------------------------------------------------------------ the sparse classes' operators
# common/sparse_tensor.py reaches its ops through the Tensor's registry, so it never imports ops
for _name, _fn in {"stop_gradient": stop_gradient, "coo_add": coo_add, "coo_coalesce": _coo_coalesce,
                   "coo_to_csr": _coo_to_csr, "coo_to_dense": _coo_to_dense,
                   "coo_scatter_add": lambda dense, x: tensor_scatter_add(dense, x.indices.astype(mstype.int32),
                                                                          x.values),
                   "coo_gather": lambda dense, x: gather_nd(dense, x.indices.astype(mstype.int32)),
                   "csr_mul": csr_mul, "csr_div": csr_div, "csr_add": csr_add, "csr_to_coo": csr_to_coo,
                   "csr_to_dense": csr_to_dense, "csr_mv": csr_mv, "csr_mm": csr_mm, "csr_mm_dense": _csr_times_dense,
                   "csr_reduce_sum": csr_reduce_sum}.items():
    tensor_operator_registry.register(_name, _fn)
tensor_operator_registry.register_method("to_coo", lambda self: dense_to_sparse_coo(self))
tensor_operator_registry.register_method("to_csr", lambda self: dense_to_sparse_csr(self))
del _name, _fn
