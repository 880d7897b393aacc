"""``mindspore.nn.layer.image``: CentralCrop, ResizeBilinear, PixelShuffle, PixelUnshuffle and the image
metrics ImageGradients, SSIM, MSSSIM, PSNR, where MindSpore defines them."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidValueError

from ... import ops
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.image has it)
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ..cell import Cell
from .activation import ReLU  # noqa: F401  (MindSpore's nn.layer.image imports these layers)
from .container import CellList  # noqa: F401
from .conv import Conv2d  # noqa: F401
from .pooling import AvgPool2d  # noqa: F401

__all__ = ["CentralCrop", "ResizeBilinear", "PixelShuffle", "PixelUnshuffle", "ImageGradients", "SSIM", "MSSSIM",
           "PSNR"]


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



class PixelShuffle(Cell):
    """``ops.pixel_shuffle``: (*, C r^2, H, W) -> (*, C, H r, W r)."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def construct(self, input: Tensor) -> Tensor:
        return ops.pixel_shuffle(input, self.upscale_factor)


class PixelUnshuffle(Cell):
    """``ops.pixel_unshuffle``: (*, C, H r, W r) -> (*, C r^2, H, W)."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def construct(self, input: Tensor) -> Tensor:
        return ops.pixel_unshuffle(input, self.downscale_factor)


class ImageGradients(Cell):
    """``(dy, dx)`` of an NCHW image batch: forward differences along H and W, each with a zero last
    row/column so both keep the input's shape (MindSpore's layout)."""

    def construct(self, images: Tensor) -> tuple[Tensor, Tensor]:
        _check_4d("ImageGradients", "images", images)
        n, c, h, w = images.shape
        dy = ops.zeros((n, c, 1, w), images.dtype)
        if h > 1:
            dy = ops.concat((images[:, :, 1:, :] - images[:, :, :h - 1, :], dy), 2)
        dx = ops.zeros((n, c, h, 1), images.dtype)
        if w > 1:
            dx = ops.concat((images[:, :, :, 1:] - images[:, :, :, :w - 1], dx), 3)
        return dy, dx


def _check_4d(layer: str, name: str, x: Any) -> None:
    if not isinstance(x, Tensor) or x.ndim != 4:
        raise InvalidValueError(f"{layer}: {name} must be a 4-D (N, C, H, W) Tensor, got "
                                f"{getattr(x, 'shape', type(x).__name__)}")


def _check_pair(layer: str, img1: Tensor, img2: Tensor) -> None:
    _check_4d(layer, "img1", img1)
    _check_4d(layer, "img2", img2)
    if img1.shape != img2.shape or img1.dtype != img2.dtype:
        raise InvalidParamError(f"{layer}: img1 and img2 must have one shape and dtype, got {img1.shape} "
                                f"{img1.dtype} and {img2.shape} {img2.dtype}")


def _positive_number(layer: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise InvalidParamError(f"{layer}: {name}={value!r} must be an int or float > 0")
    return value


def _float32_images(layer: str, max_val: float, *images: Tensor) -> tuple[float, list[Tensor]]:
    """MindSpore's image metrics compute in float32; an integer image (uint8...) is first scaled by its
    dtype's maximum, and so is ``max_val``."""
    np_type = mstype.dtype_to_nptype(images[0].dtype)
    dtype_max = float(np.iinfo(np_type).max) if np.issubdtype(np_type, np.integer) else 1.0
    out = [ops.cast(im, mstype.float32) for im in images]
    if dtype_max > 1.0:
        out = [im * (1.0 / dtype_max) for im in out]
        max_val = max_val / dtype_max
    return float(max_val), out


def _gaussian_window(size: int, sigma: float) -> np.ndarray:
    """The (1, 1, size, size) normalised Gaussian kernel MindSpore's SSIM convolves with (offsets
    -size//2 + 1 .. size//2, so an even size is centred half a pixel left/up)."""
    y, x = np.mgrid[-size // 2 + 1:size // 2 + 1, -size // 2 + 1:size // 2 + 1].astype(np.float32)
    g = np.exp(-(x ** 2 + y ** 2) / (2 * sigma ** 2))
    return (g / g.sum()).astype(np.float32)[None, None]


class _SSIMBase(Cell):
    """The shared SSIM machinery: argument checks and the per-channel ssim / contrast-structure maps."""

    def _check_args(self, max_val: Any, filter_size: Any, filter_sigma: Any, k1: Any, k2: Any) -> None:
        layer = type(self).__name__
        self.max_val = _positive_number(layer, "max_val", max_val)
        if isinstance(filter_size, bool) or not isinstance(filter_size, int) or filter_size < 1:
            raise InvalidParamError(f"{layer}: filter_size={filter_size!r} must be an int >= 1")
        if isinstance(filter_sigma, bool) or not isinstance(filter_sigma, float) or filter_sigma <= 0:
            raise InvalidParamError(f"{layer}: filter_sigma={filter_sigma!r} must be a float > 0")
        for name, value in (("k1", k1), ("k2", k2)):
            if not isinstance(value, float):
                raise InvalidParamError(f"{layer}: {name}={value!r} must be a float")
        self.filter_size, self.filter_sigma, self.k1, self.k2 = filter_size, filter_sigma, k1, k2

    def _window_conv(self) -> Cell:
        """A frozen valid 1->1 Conv2d with the Gaussian window, as MindSpore's ``_conv2d``."""
        conv = Conv2d(1, 1, self.filter_size, pad_mode="valid",
                      weight_init=Tensor(_gaussian_window(self.filter_size, self.filter_sigma)))
        conv.weight.requires_grad = False
        return conv

    @staticmethod
    def _maps(conv: Cell, img1: Tensor, img2: Tensor, c1: float, c2: float) -> tuple[Tensor, Tensor]:
        """Mean ssim and cs per (N, C): each channel convolved separately (folded into the batch)."""
        n, c, h, w = img1.shape

        def blur(x: Tensor) -> Tensor:
            return conv(ops.reshape(x, (n * c, 1, h, w)))

        mu1, mu2 = blur(img1), blur(img2)
        mu1_sq, mu2_sq, mu1_mu2 = mu1 * mu1, mu2 * mu2, mu1 * mu2
        sigma1_sq = blur(img1 * img1) - mu1_sq
        sigma2_sq = blur(img2 * img2) - mu2_sq
        sigma12 = blur(img1 * img2) - mu1_mu2
        v1, v2 = sigma12 * 2 + c2, sigma1_sq + sigma2_sq + c2
        ssim = ((mu1_mu2 * 2 + c1) * v1) / ((mu1_sq + mu2_sq + c1) * v2)
        cs = v1 / v2
        return (ops.reshape(ops.mean(ssim, (1, 2, 3)), (n, c)), ops.reshape(ops.mean(cs, (1, 2, 3)), (n, c)))


class SSIM(_SSIMBase):
    """Structural similarity (Wang et al. 2004) of two NCHW image batches, averaged over channels: one
    value per image. The Gaussian window is a frozen Conv2d parameter ``conv.weight``, as in MindSpore."""

    def __init__(self, max_val: Any = 1.0, filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01,
                 k2: float = 0.03):
        super().__init__()
        self._check_args(max_val, filter_size, filter_sigma, k1, k2)
        self.conv = self._window_conv()

    def construct(self, img1: Tensor, img2: Tensor) -> Tensor:
        _check_pair("SSIM", img1, img2)
        if img1.dtype not in (mstype.float32, mstype.float16):
            raise InvalidParamError(f"SSIM: img1 dtype {img1.dtype} must be float32 or float16")
        if min(img1.shape[2:]) < self.filter_size:
            raise InvalidParamError(f"SSIM: image H and W {img1.shape[2:]} must be >= filter_size "
                                    f"{self.filter_size}")
        max_val, (img1, img2) = _float32_images("SSIM", self.max_val, img1, img2)
        ssim, _ = self._maps(self.conv, img1, img2, (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2)
        return ops.mean(ssim, -1)


class MSSSIM(_SSIMBase):
    """Multi-scale SSIM: at each of ``len(power_factors)`` scales (2x2 average-pooled between scales)
    the channel-mean contrast-structure term, and the SSIM at the last; relu'd, raised to the power
    factors, multiplied, then averaged over channels."""

    def __init__(self, max_val: Any = 1.0, power_factors: Any = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333),
                 filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01, k2: float = 0.03):
        super().__init__()
        if not isinstance(power_factors, (tuple, list)) or not power_factors:
            raise InvalidParamError(f"MSSSIM: power_factors={power_factors!r} must be a non-empty tuple or list")
        self._check_args(max_val, filter_size, filter_sigma, k1, k2)
        self.level = len(power_factors)
        self.multi_convs_list = CellList([self._window_conv() for _ in range(self.level)])
        self.weight_tensor = Tensor(np.asarray(power_factors, np.float32))
        self.avg_pool = AvgPool2d(kernel_size=2, stride=2, pad_mode="valid")

    def construct(self, img1: Tensor, img2: Tensor) -> Tensor:
        _check_pair("MSSSIM", img1, img2)
        max_val, (img1, img2) = _float32_images("MSSSIM", self.max_val, img1, img2)
        c1, c2 = (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2
        terms = []
        for i in range(self.level):
            ssim, cs = self._maps(self.multi_convs_list[i], img1, img2, c1, c2)
            terms.append(ops.relu(ssim) if i == self.level - 1 else ops.relu(cs))
            if i < self.level - 1:
                img1, img2 = self.avg_pool(img1), self.avg_pool(img2)
        ms_ssim = ops.prod(ops.pow(ops.stack(terms, -1), self.weight_tensor), -1)
        return ops.mean(ms_ssim, -1)


class PSNR(Cell):
    """Peak signal-to-noise ratio per image: ``10 log10(max_val^2 / mse)``, the mse over (C, H, W)."""

    def __init__(self, max_val: Any = 1.0):
        super().__init__()
        self.max_val = _positive_number("PSNR", "max_val", max_val)

    def construct(self, img1: Tensor, img2: Tensor) -> Tensor:
        _check_pair("PSNR", img1, img2)
        max_val, (img1, img2) = _float32_images("PSNR", self.max_val, img1, img2)
        mse = ops.mean(ops.square(img1 - img2), (-3, -2, -1))
        return ops.log(max_val ** 2 / mse) * (10 / math.log(10.0))
