"""``mindspore.ops.operations.sparse_ops``: the primitives on sparse (indices, values, shape) triples
(SparseToDense, SparseTensorDenseAdd, SparseTensorDenseMatmul), composed of the served ScatterNd,
Add and MatMul primitives, so shapes, dtypes and gradients (to ``values`` and the dense operand) are
theirs. Indices are read as int32 on the device (its index dtype)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, RuntimeParamError

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ..primitive import _Op, _tensor
from .array_ops import Gather, ScatterNd
from .math_ops import Add, MatMul

__all__ = ["SparseToDense", "SparseTensorDenseAdd", "SparseTensorDenseMatmul", "SparseSlice"]


def _shape(name: str, value: Any) -> tuple[int, ...]:
    """A dense shape given as a tuple of ints or (as MindSpore also takes it) a 1-D int Tensor."""
    if isinstance(value, Tensor):
        value = value.asnumpy().reshape(-1).tolist()
    if not isinstance(value, (tuple, list)) or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0
                                                       for d in value):
        raise ValueError(f"For primitive[{name}], the shape must be a tuple of positive ints, but got {value!r}.")
    return tuple(value)


def _scatter(name: str, indices: Any, values: Any, shape: tuple[int, ...]) -> Tensor:
    indices, values = _tensor(indices), _tensor(values)
    if indices.ndim != 2 or values.ndim != 1 or indices.shape[0] != values.shape[0] or indices.shape[1] != len(shape):
        raise ValueError(f"For primitive[{name}], indices must be (N, {len(shape)}) and values (N,), but got "
                         f"{indices.shape} and {values.shape}.")
    if indices.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For primitive[{name}], the input argument[indices] must be a type of "
                        f"{{Tensor[Int32], Tensor[Int64]}}, but got Tensor[{indices.dtype}].")
    return ScatterNd()(indices.astype(mstype.int32), values, shape)


class SparseToDense(_Op):
    """``SparseToDense()(indices, values, sparse_shape)``: zeros of ``sparse_shape`` with each value at its
    index (indices must be distinct, as MindSpore requires; repeated ones here sum)."""

    def __call__(self, *args: Any) -> Tensor:
        indices, values, sparse_shape = args
        return _scatter("SparseToDense", indices, values, _shape("SparseToDense", sparse_shape))


class SparseTensorDenseAdd(_Op):
    """``SparseTensorDenseAdd()(x1_indices, x1_values, x1_shape, x2)``: the sparse tensor added to dense x2;
    ``x1_shape`` is a Tensor of the indices' dtype, as MindSpore checks."""

    def __call__(self, *args: Any) -> Tensor:
        x1_indices, x1_values, x1_shape, x2 = args
        if not isinstance(x1_shape, Tensor) or x1_shape.dtype != _tensor(x1_indices).dtype:
            raise TypeError("The primitive[SparseTensorDenseAdd]'s input arguments[indices, shape] must be all tensor "
                            "and those type must be same. But got input argument[shape]:"
                            f"{type(x1_shape).__name__}")
        shape = _shape("SparseTensorDenseAdd", x1_shape)
        if tuple(_tensor(x2).shape) != shape:
            raise RuntimeParamError(f"For primitive[SparseTensorDenseAdd], x2's shape {_tensor(x2).shape} must be x1_shape "
                             f"{shape}.")
        return Add()(_scatter("SparseTensorDenseAdd", x1_indices, x1_values, shape), x2)


class SparseTensorDenseMatmul(_Op):
    """``SparseTensorDenseMatmul(adjoint_st, adjoint_dt)(indices, values, sparse_shape, dense)``:
    ``op(sparse) @ op(dense)``, ``op`` the transpose when its flag is set (real values)."""

    def __init__(self, adjoint_st: bool = False, adjoint_dt: bool = False) -> None:
        super().__init__()
        for name, value in (("adjoint_st", adjoint_st), ("adjoint_dt", adjoint_dt)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'SparseTensorDenseMatmul', the type of '{name}' should be 'bool', "
                                f"but got type '{type(value).__name__}'.")
        self.adjoint_st, self.adjoint_dt = adjoint_st, adjoint_dt

    def __call__(self, *args: Any) -> Tensor:
        indices, values, sparse_shape, dense = args
        shape, values, dense = _shape("SparseTensorDenseMatmul", sparse_shape), _tensor(values), _tensor(dense)
        if values.dtype != dense.dtype:
            raise TypeError("For primitive[SparseTensorDenseMatmul], the input type must be same.")
        if len(shape) != 2 or dense.ndim != 2:
            raise ValueError(f"For primitive[SparseTensorDenseMatmul], the sparse and dense matrices must be 2-D, but "
                             f"got sparse_shape {shape} and dense shape {dense.shape}.")
        inner = shape[0] if self.adjoint_st else shape[1]
        if (dense.shape[1] if self.adjoint_dt else dense.shape[0]) != inner:
            raise ValueError(f"For primitive[SparseTensorDenseMatmul], the dense matrix {dense.shape} does not match "
                             f"the sparse matrix {shape} (adjoint_st={self.adjoint_st}, adjoint_dt={self.adjoint_dt}).")
        sparse = _scatter("SparseTensorDenseMatmul", indices, values, shape)
        return MatMul(transpose_a=self.adjoint_st, transpose_b=self.adjoint_dt)(sparse, dense)


class SparseSlice(_Op):
    """``SparseSlice()(indices, values, shape, start, size)``: the entries inside the box ``[start, start +
    size)`` (clipped to ``shape``), their indices relative to ``start``; returns (indices, values, shape).
    Which entries fall in the box depends on the index data: the box is found on the host (PyNative, or
    constant indices while capturing), the values are gathered on the device."""

    def __call__(self, *args: Any) -> tuple[Tensor, Tensor, Tensor]:
        indices, values, shape, start, size = (_tensor(a) for a in args)
        for name, t in (("indices", indices), ("shape", shape), ("start", start), ("size", size)):
            if t.dtype != mstype.int64:
                raise TypeError(f"For primitive[SparseSlice], the input argument[{name}] must be a type of "
                                f"{{Tensor[Int64]}}, but got Tensor[{t.dtype}].")
        if indices.is_symbolic:
            raise FeatureNotSupportedError("SparseSlice: which entries fall in the slice depends on the indices' "
                                           "data, unknown while GRAPH_MODE captures the graph; call it in "
                                           "PYNATIVE_MODE, or with constant indices")
        coords, dense_shape = indices.asnumpy(), shape.asnumpy()
        low, count = start.asnumpy(), size.asnumpy()
        high = np.minimum(low + count, dense_shape)
        inside = np.flatnonzero(((coords >= low) & (coords < high)).all(axis=1))
        out_shape = Tensor(np.maximum(high - low, 0).astype(np.int64))
        if not len(inside):
            empty_values = Tensor(np.zeros(0, values.dtype.np_type))
            return Tensor(np.zeros((0, coords.shape[1]), np.int64)), empty_values, out_shape
        picked = Gather()(values, Tensor(inside.astype(np.int32)), 0)
        return Tensor((coords[inside] - low).astype(np.int64)), picked, out_shape
