"""``mindspore.nn.layer.padding``: ConstantPad1d/2d/3d, ZeroPad2d, ReflectionPad1d/2d/3d and
ReplicationPad1d/2d/3d, where MindSpore defines them. ``padding`` is an int (every side of the last
1, 2 or 3 axes) or a tuple of (before, after) pairs starting at the last axis: (left, right, top,
bottom, front, back)."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common.tensor import Tensor
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.padding has it)
from ..cell import Cell

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"]


def _padding(layer: str, padding: Any, dims: int) -> tuple[int, ...]:
    """``padding`` as 2 * dims ints >= 0, last axis first."""
    pads = (padding,) * (2 * dims) if isinstance(padding, int) and not isinstance(padding, bool) else padding
    if (not isinstance(pads, (tuple, list)) or len(pads) != 2 * dims
            or any(isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in pads)):
        raise InvalidParamError(f"{layer}: padding={padding!r} must be an int >= 0 or a tuple of {2 * dims} such ints "
                                f"(negative padding is not supported here)")
    return tuple(pads)


class _Pad(Cell):
    dims = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _padding(type(self).__name__, padding, self.dims)

    def _check(self, x: Tensor) -> None:
        if x.ndim < self.dims + 1:
            raise InvalidParamError(f"{type(self).__name__}: input must have rank >= {self.dims + 1}, got shape "
                                    f"{x.shape}")


class _ConstantPad(_Pad):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidParamError(f"{type(self).__name__}: value={value!r} must be a float or an int")
        self.value = value

    def construct(self, x: Tensor) -> Tensor:
        self._check(x)
        return ops.pad(x, self.padding, "constant", self.value)


class ConstantPad1d(_ConstantPad):
    dims = 1


class ConstantPad2d(_ConstantPad):
    dims = 2


class ConstantPad3d(_ConstantPad):
    dims = 3


class ZeroPad2d(_ConstantPad):
    dims = 2

    def __init__(self, padding: Any):
        super().__init__(padding, 0)


class _ReflectionPad(_Pad):
    """Mirror padding without repeating the edge (each pad smaller than its axis)."""

    def construct(self, x: Tensor) -> Tensor:
        self._check(x)
        for axis, size in enumerate(reversed(x.shape[-self.dims:])):
            if max(self.padding[2 * axis:2 * axis + 2]) >= size:
                raise InvalidParamError(f"{type(self).__name__}: padding {self.padding} must be smaller than the "
                                        f"padded axis sizes of shape {x.shape}")
        return ops.pad(x, self.padding, "reflect")


class ReflectionPad1d(_ReflectionPad):
    dims = 1


class ReflectionPad2d(_ReflectionPad):
    dims = 2


class ReflectionPad3d(_ReflectionPad):
    dims = 3


def _edge(x: Tensor, axis: int, index: int, count: int) -> Tensor:
    """``count`` copies of x's slice ``index`` along ``axis``."""
    begin = [0] * x.ndim
    end = list(x.shape)
    begin[axis], end[axis] = index, index + 1
    piece = ops.strided_slice(x, tuple(begin), tuple(end), (1,) * x.ndim)
    reps = [1] * x.ndim
    reps[axis] = count
    return ops.tile(piece, tuple(reps))


class _ReplicationPad(_Pad):
    """Padding by repeating the edge element: each side the edge slice tiled and concatenated."""

    def construct(self, x: Tensor) -> Tensor:
        self._check(x)
        for k in range(self.dims):
            axis = x.ndim - 1 - k
            before, after = self.padding[2 * k], self.padding[2 * k + 1]
            parts = ([_edge(x, axis, 0, before)] if before else []) + [x] + \
                ([_edge(x, axis, x.shape[axis] - 1, after)] if after else [])
            if len(parts) > 1:
                x = ops.concat(parts, axis)
        return x


class ReplicationPad1d(_ReplicationPad):
    dims = 1


class ReplicationPad2d(_ReplicationPad):
    dims = 2


class ReplicationPad3d(_ReplicationPad):
    dims = 3
