"""``mindspore.nn.layer.math``: MatMul, ReduceLogSumExp, Range and Moments, where MindSpore defines them."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.math has it)
from ..cell import Cell

__all__ = ["MatMul", "ReduceLogSumExp", "Range", "Moments"]


class MatMul(Cell):
    """``ops.matmul`` of x1 and x2 (batch dimensions broadcast, 1-D operands as vectors), each first
    transposed in its last two axes when ``transpose_x1``/``transpose_x2`` (MindSpore's deprecated cell)."""

    def __init__(self, transpose_x1: bool = False, transpose_x2: bool = False):
        super().__init__()
        for name, value in (("transpose_x1", transpose_x1), ("transpose_x2", transpose_x2)):
            if not isinstance(value, bool):
                raise InvalidParamError(f"MatMul: {name}={value!r} must be a bool")
        self.transpose_x1, self.transpose_x2 = transpose_x1, transpose_x2

    @staticmethod
    def _swap_last(x: Tensor) -> Tensor:
        if x.ndim < 2:
            return x
        perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
        return ops.transpose(x, perm)

    def construct(self, x1: Tensor, x2: Tensor) -> Tensor:
        if self.transpose_x1:
            x1 = self._swap_last(x1)
        if self.transpose_x2:
            x2 = self._swap_last(x2)
        return ops.matmul(x1, x2)


class ReduceLogSumExp(Cell):
    """``log(sum(exp(x - m), axis)) + m`` with ``m`` the max of all of x (MindSpore subtracts the
    global max, not a per-slice one)."""

    def __init__(self, axis: Any, keep_dims: bool = False):
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, (int, list, tuple)):
            raise InvalidParamError(f"ReduceLogSumExp: axis={axis!r} must be an int, list or tuple")
        if not isinstance(keep_dims, bool):
            raise InvalidParamError(f"ReduceLogSumExp: keep_dims={keep_dims!r} must be a bool")
        self.axis, self.keep_dims = axis, keep_dims

    def construct(self, x: Tensor) -> Tensor:
        x_max = ops.ReduceMax()(x)
        return ops.log(ops.ReduceSum(self.keep_dims)(ops.exp(x - x_max), self.axis)) + x_max


class Range(Cell):
    """A constant ``np.arange(start, limit, delta)`` tensor: float32 when the range is float, else
    int32, as MindSpore's (deprecated) cell makes it."""

    def __init__(self, start: Any, limit: Any = None, delta: Any = 1):
        super().__init__()
        if delta == 0:
            raise InvalidParamError("Range: the 'delta' can not be zero.")
        data = np.arange(start, limit, delta)
        self.result_tensor = Tensor(data.astype(np.float32 if data.dtype == np.float64 else np.int32))

    def construct(self) -> Tensor:
        return self.result_tensor


class Moments(Cell):
    """``(mean, variance)`` of x over ``axis`` (None: all), the variance about a stop-gradient mean;
    float16 computed in float32 and cast back."""

    def __init__(self, axis: Any = None, keep_dims: Any = None):
        super().__init__()
        axis = () if axis is None else axis
        if isinstance(axis, bool) or not isinstance(axis, (int, tuple)) or (
                isinstance(axis, tuple) and any(isinstance(a, bool) or not isinstance(a, int) for a in axis)):
            raise InvalidParamError(f"Moments: axis={axis!r} must be an int or a tuple of ints")
        keep_dims = False if keep_dims is None else keep_dims
        if not isinstance(keep_dims, bool):
            raise InvalidParamError(f"Moments: keep_dims={keep_dims!r} must be a bool")
        self.axis, self.keep_dims = axis, keep_dims

    def construct(self, x: Tensor) -> tuple[Tensor, Tensor]:
        dtype = x.dtype
        if dtype not in (mstype.float16, mstype.float32):
            raise InvalidParamError(f"Moments: input x dtype {dtype} must be float16 or float32")
        if dtype == mstype.float16:
            x = ops.cast(x, mstype.float32)
        mean = ops.ReduceMean(keep_dims=True)(x, self.axis)
        variance = ops.ReduceMean(keep_dims=True)(ops.square(x - ops.stop_gradient(mean)), self.axis)
        if not self.keep_dims:
            mean, variance = ops.Squeeze(self.axis)(mean), ops.Squeeze(self.axis)(variance)
        if dtype == mstype.float16:
            mean, variance = ops.cast(mean, dtype), ops.cast(variance, dtype)
        return mean, variance


# ---- special functions and linear algebra (round 2) ----

class LGamma(Cell):
    """log|Gamma(x)| of each element (``ops.lgamma``)."""

    def construct(self, x: Tensor) -> Tensor:
        return ops.lgamma(x)


class DiGamma(Cell):
    """The digamma function of each element (``ops.digamma``)."""

    def construct(self, x: Tensor) -> Tensor:
        return ops.digamma(x)


class IGamma(Cell):
    """The lower regularised incomplete gamma function P(a, x) (``ops.igamma``)."""

    def construct(self, a: Tensor, x: Tensor) -> Tensor:
        return ops.igamma(a, x)


class LBeta(Cell):
    """log|B(x, y)| = lgamma(x) + lgamma(y) - lgamma(x + y), elementwise with broadcasting."""

    def construct(self, x: Tensor, y: Tensor) -> Tensor:
        return ops.lgamma(x) + ops.lgamma(y) - ops.lgamma(x + y)


class MatDet(Cell):
    """The determinant of each (positive definite) matrix of a batch (``ops.det``)."""

    def construct(self, a: Tensor) -> Tensor:
        return ops.det(a)


class MatInverse(Cell):
    """The inverse of each (positive definite) matrix of a batch (``ops.inverse``)."""

    def construct(self, a: Tensor) -> Tensor:
        return ops.inverse(a)


__all__ += ["LGamma", "DiGamma", "IGamma", "LBeta", "MatDet", "MatInverse"]
