"""``mindspore.common.sparse_tensor``: COOTensor, CSRTensor, RowTensor (and the deprecated SparseTensor).

A sparse tensor here is its parts, each an ordinary :class:`Tensor` (indices, values, and for CSR the row
pointers) plus a static Python shape: every op on it is a composition of served dense ops on those parts,
so both modes and gradients (through ``values``) work where the parts' ops have them. The ops live in
``ops.function.sparse_func``; this module reaches them through ``tensor_operator_registry``, as the
dense Tensor does, so it never imports ops. Checks and their messages are MindSpore 2.10's
(``mindspore._checkparam.check_coo_tensor_*`` / ``check_csr_tensor_*``).
"""
from __future__ import annotations

import logging
from typing import Any

from . import dtype as mstype
from .tensor import Tensor, tensor_operator_registry

__all__ = ["RowTensorInner", "RowTensor", "SparseTensor", "COOTensor", "CSRTensor"]

logger = logging.getLogger("mindspore")

# the index dtypes MindSpore accepts for COO indices and CSR indptr/indices
INDEX_DTYPES = (mstype.int16, mstype.int32, mstype.int64)


def _ops(name: str) -> Any:
    return tensor_operator_registry.get(name)


def _check_parts(indices: Any, values: Any, shape: Any) -> None:
    """MindSpore's common input check of sparse tensors (types only)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"For SparseTensors, 'indices' must be Tensor, but got {type(indices)}.")
    if not isinstance(values, Tensor):
        raise TypeError(f"For SparseTensors, 'values' must be Tensor, but got {type(values)}.")
    if not isinstance(shape, tuple):
        raise TypeError(f"For SparseTensors, 'shape' must be tuple, but got {type(shape)}.")


def _check_coo(indices: Tensor, values: Tensor, shape: tuple) -> None:
    if len(shape) != 2:
        raise ValueError(f"For COOTensor, the length of 'shape' must be 2, but got {shape}.")
    if indices.shape == (0,) and values.shape == (0,):
        return
    total = 1
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"For COOTensor, the element type of 'shape' must be int, but got {type(d)}")
        if d <= 0:
            raise ValueError(f"For COOTensor, the element of 'shape' must be positive, but got {d} in {shape}.")
        total *= d
    if len(values.shape) != 1:
        raise ValueError(f"For COOTensor, 'values' must be a 1-dimensional tensor, but got a "
                         f"{len(values.shape)}-dimensional tensor.")
    if total < values.shape[0]:
        raise ValueError(f"For COOTensor, shape is too small: ({total}) to hold all values({values.shape[0]}).")
    if len(indices.shape) != 2:
        raise ValueError(f"For COOTensor, 'indices' must be a 2-dimensional tensor, but got a "
                         f"{len(indices.shape)}-dimensional tensor.")
    if indices.shape[0] != values.shape[0]:
        raise ValueError(f"For COOTensor, 'indices.shape[0]' must be euqal to 'values.shape[0]', but got "
                         f"'indices.shape[0]' = {indices.shape[0]} and 'values.shape[0]' = {values.shape[0]}.")
    if indices.shape[1] != 2:
        raise ValueError(f"For COOTensor, 'indices.shape[1]' must be 2, but got {indices.shape[1]}.")
    if indices.dtype not in INDEX_DTYPES:
        raise TypeError(f"For COOTensor, the type of 'indices' must be one of [int16, int32, int64], but got "
                        f"{indices.dtype}.")


def _check_csr(indptr: Tensor, indices: Tensor, values: Tensor, shape: tuple) -> None:
    if not (indptr.shape == (0,) and indices.shape == (0,) and values.shape == (0,)):
        total = values_total = 1
        for d in shape:
            if not isinstance(d, int) or isinstance(d, bool):
                raise TypeError(f"For CSRTensor, the element type of shape must be int, but got {type(d)}")
            if d <= 0:
                raise ValueError(f"For CSRTensor, the element of shape must be positive, but got {d}")
            total *= d
        for d in values.shape:
            if d <= 0:
                raise ValueError(f"The element of shape must be positive, but got {d}")
            values_total *= d
        if total < values_total:
            raise ValueError(f"Shape total size: {total} is too small to hold {values_total} non-zero values.")
        if len(indices.shape) != 1:
            raise ValueError(f"For CSRTensor, indices must be a 1-dimensional tensor, but got a "
                             f"{len(indices.shape)} dimension tensor.")
        if len(indptr.shape) != 1:
            raise ValueError(f"For CSRTensor, indptr must be a 1-dimensional tensor, but got a "
                             f"{len(indptr.shape)} dimension tensor.")
        if shape[0] + 1 != indptr.shape[0]:
            raise ValueError(f"For CSRTensor, indptr must have length (1 + shape[0]), but got: {indptr.shape[0]}")
        if indices.shape[0] != values.shape[0]:
            raise ValueError(f"For CSRTensor, indices and values must equal in their shape, but got indices "
                             f"shape: {indices.shape[0]}, values shape: {values.shape[0]}.")
        if len(values.shape) + 1 != len(shape):
            raise ValueError(f"Values' dimension should equal to CSRTensor's dimension - 1, but gotValues' "
                             f"dimension: {len(values.shape)} , CSRTensor's dimension: {len(shape)}")
        if tuple(values.shape[1:]) != tuple(shape[2:]):
            raise ValueError(f"CSRTensor's shape[2: ] must be equal to value's shape[1: ],but CSRTensor's "
                             f"shape[2: ] got: {shape[2:]} and value's shape[1: ]got: {values.shape[1:]}")
    for name, t in (("indptr", indptr), ("indices", indices)):
        if t.dtype not in INDEX_DTYPES:
            raise TypeError(f"For CSRTensor, {name} must have int16 or int32 or int64 data type, but got {t.dtype}.")


def _part_repr(t: Tensor) -> str:
    return f"Tensor(shape={list(t.shape)}, dtype={t.dtype}, value={t})"


class _SparseMeta:
    """What COOTensor and CSRTensor share: the properties MindSpore derives from ``values`` and ``shape``."""

    _values: Tensor
    _shape: tuple[int, ...]

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> mstype.Type:
        return self._values.dtype

    @property
    def size(self) -> int:
        """The number of stored values (MindSpore: ``values.size``)."""
        return self._values.size

    @property
    def itemsize(self) -> int:
        return self._values.itemsize

    @property
    def ndim(self) -> int:
        return len(self._shape)


class COOTensor(_SparseMeta):
    """A sparse 2-D tensor by coordinates: ``dense[indices[i]] = values[i]`` (MindSpore's COOTensor)."""

    def __init__(self, indices: Any = None, values: Any = None, shape: Any = None, coo_tensor: Any = None) -> None:
        if coo_tensor is not None:
            if not isinstance(coo_tensor, COOTensor):
                raise TypeError(f"Expect input `coo_tensor` to be a COOTensor, but got {type(coo_tensor)}")
            if not (indices is None and values is None and shape is None):
                raise TypeError("If input `coo_tensor` is provided, `indices`, `values`, `shapes` should all be `None`")
            indices, values, shape = coo_tensor.indices, coo_tensor.values, coo_tensor.shape
        else:
            _check_parts(indices, values, shape)
            _check_coo(indices, values, shape)
            indices = _ops("stop_gradient")(indices)
        self._indices, self._values, self._shape = indices, values, tuple(shape)

    def __repr__(self) -> str:
        return (f"COOTensor(shape={list(self._shape)}, dtype={self.dtype}, indices={_part_repr(self._indices)}, "
                f"values={_part_repr(self._values)})")

    @property
    def indices(self) -> Tensor:
        return self._indices

    def _same_shape(self, other: Any) -> None:
        if getattr(other, "shape", None) != self._shape:
            raise ValueError("Input tensors should have the same shape.")

    def __neg__(self) -> "COOTensor":
        return COOTensor(self._indices, -self._values, self._shape)

    def __add__(self, other: Any) -> Any:
        self._same_shape(other)
        if isinstance(other, Tensor):
            return _ops("coo_scatter_add")(other, self)
        if isinstance(other, COOTensor):
            return _ops("coo_add")(self, other, Tensor(0, self.dtype))
        raise TypeError(f"COOTensor add with {type(other)} is not supported.")

    def __sub__(self, other: Any) -> Any:
        self._same_shape(other)
        if isinstance(other, Tensor):
            return _ops("coo_scatter_add")(-other, self)
        if isinstance(other, COOTensor):
            return _ops("coo_add")(self, -other, Tensor(0, self.dtype))
        raise TypeError(f"COOTensor subtract with {type(other)} is not supported.")

    def __mul__(self, other: Any) -> "COOTensor":
        self._same_shape(other)
        if isinstance(other, Tensor):
            return COOTensor(self._indices, self._values * _ops("coo_gather")(other, self), self._shape)
        raise TypeError(f"COOTensor multiply with {type(other)} is not supported.")

    def __truediv__(self, other: Any) -> "COOTensor":
        self._same_shape(other)
        if isinstance(other, Tensor):
            logger.warning("For sparse divide, zero values in the dense tensor are ignored.")
            return COOTensor(self._indices, self._values / _ops("coo_gather")(other, self), self._shape)
        raise TypeError(f"COOTensor divide with {type(other)} is not supported.")

    def coalesce(self) -> "COOTensor":
        """Duplicates summed, indices sorted (MindSpore's Coalesce on the transposed indices)."""
        return _ops("coo_coalesce")(self)

    def to_csr(self) -> "CSRTensor":
        return _ops("coo_to_csr")(self)

    def to_dense(self) -> Tensor:
        return _ops("coo_to_dense")(self)

    def astype(self, dtype: Any) -> "COOTensor":
        return COOTensor(self._indices, self._values.astype(dtype), self._shape)

    def to_tuple(self) -> tuple[Tensor, Tensor, tuple[int, ...]]:
        return self._indices, self._values, self._shape

    def abs(self) -> "COOTensor":
        return COOTensor(self._indices, self._values.abs(), self._shape)

    def add(self, other: "COOTensor", thresh: Tensor) -> "COOTensor":
        return _ops("coo_add")(self, other, thresh)


class CSRTensor(_SparseMeta):
    """A sparse tensor in compressed-row form: row ``r``'s entries are ``indices``/``values`` in
    ``[indptr[r], indptr[r + 1])`` (MindSpore's CSRTensor)."""

    def __init__(self, indptr: Any = None, indices: Any = None, values: Any = None, shape: Any = None,
                 csr_tensor: Any = None) -> None:
        if csr_tensor is not None:
            if not isinstance(csr_tensor, CSRTensor):
                raise TypeError(f"Expect input `csr_tensor` to be a CSRTensor, but got {type(csr_tensor)}")
            if not (indptr is None and indices is None and values is None and shape is None):
                raise TypeError("If input `csr_tensor` is provided, `indptr`, `indices`, `values`, `shapes` "
                                "should all be `None`")
            indptr, indices, values, shape = csr_tensor.indptr, csr_tensor.indices, csr_tensor.values, csr_tensor.shape
        else:
            if not isinstance(indptr, Tensor):
                raise TypeError(f"For CSRTensor, 'indptr' must be Tensor, but got {type(indptr)}.")
            _check_parts(indices, values, shape)
            _check_csr(indptr, indices, values, shape)
            indptr, indices = _ops("stop_gradient")(indptr), _ops("stop_gradient")(indices)
        self._indptr, self._indices, self._values, self._shape = indptr, indices, values, tuple(shape)

    def __repr__(self) -> str:
        return (f"CSRTensor(shape={list(self._shape)}, dtype={self.dtype}, indptr={_part_repr(self._indptr)}, "
                f"indices={_part_repr(self._indices)}, values={_part_repr(self._values)})")

    @property
    def indptr(self) -> Tensor:
        return self._indptr

    @property
    def indices(self) -> Tensor:
        return self._indices

    def __mul__(self, other: Any) -> Any:
        return _ops("csr_mul")(self, other)

    def __truediv__(self, other: Any) -> Any:
        logger.warning("For CSR divide, zero values in the dense tensor are ignored.")
        return _ops("csr_div")(self, other)

    def __neg__(self) -> "CSRTensor":
        return CSRTensor(self._indptr, self._indices, -self._values, self._shape)

    def __add__(self, other: Any) -> "CSRTensor":
        if getattr(other, "shape", None) != self._shape:
            raise ValueError("Input tensors should have the same shape.")
        if isinstance(other, CSRTensor):
            return _ops("csr_add")(self, other, Tensor(1, self.dtype), Tensor(1, self.dtype))
        raise TypeError(f"CSRTensor add with {type(other)} is not supported.")

    def __sub__(self, other: Any) -> "CSRTensor":
        if getattr(other, "shape", None) != self._shape:
            raise ValueError("Input tensors should have the same shape.")
        if isinstance(other, CSRTensor):
            return _ops("csr_add")(self, other, Tensor(1, self.dtype), Tensor(-1, self.dtype))
        raise TypeError(f"CSRTensor subtract with {type(other)} is not supported.")

    def to_tuple(self) -> tuple[Tensor, Tensor, Tensor, tuple[int, ...]]:
        return self._indptr, self._indices, self._values, self._shape

    def to_coo(self) -> COOTensor:
        if self.ndim != 2:
            raise ValueError("Currently only support 2-D CSRTensor when converting to COOTensor.")
        return _ops("csr_to_coo")(self)

    def to_dense(self) -> Tensor:
        return _ops("csr_to_dense")(self)

    def astype(self, dtype: Any) -> "CSRTensor":
        return CSRTensor(self._indptr, self._indices, self._values.astype(dtype), self._shape)

    def mv(self, dense_vector: Tensor) -> Tensor:
        if not isinstance(dense_vector, Tensor):
            raise TypeError(f"For 'CSRTensor.mv', the type of 'dense_vector' should be 'Tensor', "
                            f"but got type '{type(dense_vector).__name__}'.")
        return _ops("csr_mv")(self, dense_vector)

    def mm(self, matrix: Any) -> Any:
        """``self @ matrix``: a dense Tensor for a dense right matrix, a CSRTensor for a CSRTensor."""
        if isinstance(matrix, CSRTensor):
            return _ops("csr_mm")(self, matrix)
        if not isinstance(matrix, Tensor):
            raise TypeError(f"For 'CSRTensor.mm', the type of 'matrix' should be 'Tensor', "
                            f"but got type '{type(matrix).__name__}'.")
        return _ops("csr_mm_dense")(self, matrix)

    def sum(self, axis: int) -> Tensor:
        return _ops("csr_reduce_sum")(self, axis)

    def abs(self) -> "CSRTensor":
        return CSRTensor(self._indptr, self._indices, self._values.abs(), self._shape)

    def add(self, b: "CSRTensor", alpha: Tensor, beta: Tensor) -> "CSRTensor":
        return _ops("csr_add")(self, b, alpha, beta)


class RowTensorInner:
    """Slices of a dense tensor along its first axis: ``dense[indices[i], ...] = values[i, ...]``
    (MindSpore's RowTensorInner, what sparse gradients of Gather are)."""

    def __init__(self, indices: Any = None, values: Any = None, shape: Any = None, row_tensor: Any = None) -> None:
        if row_tensor is not None:
            if not isinstance(row_tensor, RowTensorInner):
                raise TypeError(f"Expect input `row_tensor` to be a RowTensor, but got {type(row_tensor)}")
            if not (indices is None and values is None and shape is None):
                raise TypeError("If input `row_tensor` is provided, `indices`, `values`, `shapes` should all be `None`")
            indices, values, shape = row_tensor.indices, row_tensor.values, row_tensor.dense_shape
        self._indices, self._values, self._shape = indices, values, tuple(shape)

    def __repr__(self) -> str:
        return (f"RowTensor(shape={list(self._shape)}, dtype={self._values.dtype}, "
                f"indices={_part_repr(self._indices)}, values={_part_repr(self._values)})")

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> tuple[int, ...]:
        return self._shape


class RowTensor(RowTensorInner):
    """The public RowTensor: RowTensorInner with MindSpore's deprecation warning."""

    def __init__(self, indices: Any = None, values: Any = None, shape: Any = None, row_tensor: Any = None) -> None:
        logger.warning("'RowTensor' is deprecated from version 1.7 and will be removed in a future version.")
        super().__init__(indices, values, shape, row_tensor)


class SparseTensor:
    """MindSpore's deprecated COO form (use COOTensor): indices, values and shape, nothing else."""

    def __init__(self, indices: Any, values: Any, shape: Any) -> None:
        logger.warning("'SparseTensor' is deprecated from version 1.7 and will be removed in a future version. "
                       "Please use 'COOTensor' instead.")
        _check_parts(indices, values, shape)
        self._indices, self._values, self._shape = indices, values, tuple(shape)

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape
