"""``mindspore.mint.nn.layer.padding``: mint's padding Cells. ``padding`` is an int (every side of the
last 1, 2 or 3 dims) or 2, 4 or 6 ints, (left, right, top, bottom, front, back): the last dim first;
each is ``mint.nn.functional.pad`` in its mode."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ....common.tensor import Tensor
from ....nn.cell import Cell
from .. import functional as F

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d"]


def _padding(layer: str, padding: Any, length: int, *, positive_int: bool) -> tuple[int, ...]:
    """``padding`` as ``length`` ints, as MindSpore checks it (ValueError text included): an int (> 0 for
    the reflection and replication pads), or a tuple/list of ``length`` ints >= 0."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        if positive_int and padding <= 0:
            raise ValueError(f"For '{layer}', the 'padding' must be positive int, but got {padding}.")
        return (padding,) * length
    if isinstance(padding, (tuple, list)):
        if len(padding) != length:
            raise ValueError(f"For '{layer}', the length of parameter 'padding' with tuple type must equal to "
                             f"{length}, but got {len(padding)}.")
        if any(isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in padding):
            raise InvalidParamError(f"{layer}: padding={padding!r} must hold ints >= 0")
        return tuple(padding)
    raise ValueError(f"For '{layer}', 'padding' must be integer or tuple/list of {length} integers, but got "
                     f"{padding}.")


class _PadNd(Cell):
    """One padding Cell: ``mode`` and the padding length (2 per padded dim) are the subclass's."""

    mode = "constant"
    length = 2

    def __init__(self, padding: Any, value: Any = None):
        super().__init__()
        self.padding = _padding(type(self).__name__, padding, self.length, positive_int=self.mode != "constant")
        self.value = value

    def construct(self, input: Tensor) -> Tensor:
        if self.mode == "constant":
            return F.pad(input, self.padding, mode="constant", value=self.value)
        return F.pad(input, self.padding, mode=self.mode)

    def extend_repr(self) -> str:
        return f"padding={self.padding}" + (f", value={self.value}" if self.mode == "constant" else "")


class ConstantPad1d(_PadNd):
    def __init__(self, padding: Any, value: Any):
        super().__init__(padding, value)


class ConstantPad2d(ConstantPad1d):
    length = 4


class ConstantPad3d(ConstantPad1d):
    length = 6


class ZeroPad1d(_PadNd):
    def __init__(self, padding: Any):
        super().__init__(padding, 0)


class ZeroPad2d(ZeroPad1d):
    length = 4


class ZeroPad3d(ZeroPad1d):
    length = 6


class ReflectionPad1d(_PadNd):
    mode = "reflect"

    def __init__(self, padding: Any):
        super().__init__(padding)


class ReflectionPad2d(ReflectionPad1d):
    length = 4


class ReflectionPad3d(ReflectionPad1d):
    length = 6


class ReplicationPad1d(_PadNd):
    mode = "replicate"

    def __init__(self, padding: Any):
        super().__init__(padding)


class ReplicationPad2d(ReplicationPad1d):
    length = 4


class ReplicationPad3d(ReplicationPad1d):
    length = 6
