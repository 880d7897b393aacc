"""``mindspore.nn.layer.image``: CentralCrop, ResizeBilinear, where MindSpore defines them."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ... import ops
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.image has it)
from ...common.tensor import Tensor
from ..cell import Cell
from .activation import ReLU  # noqa: F401  (MindSpore's nn.layer.image imports these layers)
from .container import CellList  # noqa: F401
from .conv import Conv2d  # noqa: F401
from .pooling import AvgPool2d  # noqa: F401

__all__ = ["CentralCrop", "ResizeBilinear"]


class CentralCrop(Cell):
    """``CentralCrop(central_fraction)(image)``: the central ``central_fraction`` of the H and W of a
    (C, H, W) or (N, C, H, W) image, one Slice with MindSpore's box (start = int((h - h * f) / 2),
    size = h - 2 * start), so a fraction close to 1 may keep the whole image."""

    def __init__(self, central_fraction: float):
        super().__init__()
        if not isinstance(central_fraction, float):
            raise InvalidParamError(f"CentralCrop: central_fraction must be a float, got "
                                    f"{type(central_fraction).__name__}")
        if not 0.0 < central_fraction <= 1.0:
            raise InvalidParamError(f"CentralCrop: central_fraction={central_fraction} must be in (0.0, 1.0]")
        self.central_fraction = central_fraction

    def construct(self, image: Tensor) -> Tensor:
        shape = ops.shape(image)
        if len(shape) not in (3, 4):
            raise InvalidParamError(f"CentralCrop: image must be 3d or 4d, but got shape {shape}")
        if self.central_fraction == 1.0:
            return image
        h, w = shape[-2:]
        top = int((float(h) - float(h * self.central_fraction)) / 2)
        left = int((float(w) - float(w * self.central_fraction)) / 2)
        begin = (0,) * (len(shape) - 2) + (top, left)
        return ops.slice(image, begin, shape[:-2] + (h - 2 * top, w - 2 * left))


class ResizeBilinear(Cell):
    """``ResizeBilinear(half_pixel_centers=False)(x, size=None, scale_factor=None, align_corners=False)``:
    bilinear resize of NCHW x to ``size``, or to (H, W) times an int ``scale_factor`` >= 1."""

    def __init__(self, half_pixel_centers: bool = False):
        super().__init__()
        self.half_pixel_centers = half_pixel_centers

    def construct(self, x: Tensor, size: Any = None, scale_factor: Any = None, align_corners: bool = False) -> Tensor:
        if (size is None) == (scale_factor is None):
            raise InvalidParamError("ResizeBilinear: give exactly one of size and scale_factor")
        if size is not None:
            if not isinstance(size, (tuple, list)) or len(size) != 2 or min(size) < 1:
                raise InvalidParamError(f"ResizeBilinear: size={size!r} must be (new_height, new_width), ints >= 1")
            shape = tuple(size)
        else:
            if isinstance(scale_factor, bool) or not isinstance(scale_factor, int) or scale_factor < 1:
                raise InvalidParamError(f"ResizeBilinear: scale_factor={scale_factor!r} must be an int >= 1")
            shape = (x.shape[2] * scale_factor, x.shape[3] * scale_factor)
        return ops.ResizeBilinear(shape, align_corners, self.half_pixel_centers)(x)
