"""``mindspore.ops.operations.image_ops``: the image primitives MindSpore defines there (bilinear
resizing)."""
from __future__ import annotations

from typing import Any

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _int_tuple, _static_ints, defined_here
from ..primitive import _Op, apply_op


class ResizeBilinearV2(_Op):
    """``ResizeBilinearV2(align_corners=False, half_pixel_centers=False)(x, size)``: NCHW x to ``size``
    (new_height, new_width; a tuple, list or 1-D Tensor) by bilinear interpolation."""

    def __init__(self, align_corners: bool = False, half_pixel_centers: bool = False):
        super().__init__()
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

    def __call__(self, image: Any, size: Any) -> Tensor:
        return apply_op("ResizeBilinearV2", [image],
                        {"size": _static_ints(f"{self.name}: size", size), "align_corners": self.align_corners,
                         "half_pixel_centers": self.half_pixel_centers})[0]


class ResizeBilinear(ResizeBilinearV2):
    """The deprecated form with the size at construction: ``ResizeBilinear(size, align_corners=False,
    half_pixel_centers=False)(x)``; the same op as ResizeBilinearV2."""

    def __init__(self, size: Any, align_corners: bool = False, half_pixel_centers: bool = False):
        super().__init__(align_corners, half_pixel_centers)
        self.size = _int_tuple("ResizeBilinear: size", size)

    def __call__(self, x: Any) -> Tensor:
        return super().__call__(x, self.size)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.image_ops", name, __all__)
