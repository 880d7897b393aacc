"""``mindspore.dataset.vision.utils``: the enums image transforms take (interpolation, border mode)."""
from __future__ import annotations

from enum import Enum, IntEnum


class Inter(IntEnum):
    """Interpolation of Resize and the resizing crops; ``LINEAR`` is ``BILINEAR``, ``CUBIC`` is ``BICUBIC``."""

    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = 2
    LINEAR = 2
    BICUBIC = 3
    CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, Enum):
    """How padding fills: a constant, the edge pixel, a reflection without / with the edge pixel."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


__all__ = ["Inter", "Border"]
