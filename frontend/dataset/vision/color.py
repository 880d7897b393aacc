"""Colour arithmetic of the vision transforms, as OpenCV computes it on the numpy images MindSpore's
C++ transforms work on (``RandomColorAdjust``: ``image_utils.cc`` AdjustBrightness / AdjustContrast /
AdjustSaturation).

OpenCV evaluates ``a * alpha`` and ``a * alpha + b * beta`` on 8-bit images in float32 (the latter with
a fused multiply-add) and rounds to nearest even with saturation; grey is ``cvtColor(RGB2GRAY)``
(8-bit: fixed point with 15-bit coefficients; float: 0.299 R + 0.587 G + 0.114 B). Each function was checked pixel for pixel against
MindSpore 2.10's transform on random images (uint8 exact; float32 within 2e-7).
"""
from __future__ import annotations

import numpy as np

__all__ = ["scale", "blend", "rgb_to_gray"]

_GRAY15 = np.array([9798, 19235, 3735], np.int64)        # R, G, B: round(coefficient * 2**15)
_GRAY_F = np.array([0.299, 0.587, 0.114], np.float32)


def _saturate(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float32 results in ``dtype``: integers rounded half to even and saturated (``saturate_cast``)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(values), info.min, info.max).astype(dtype)
    return values.astype(dtype)


def scale(img: np.ndarray, alpha: float) -> np.ndarray:
    """``img * alpha`` (a MatExpr ``convertTo``)."""
    return _saturate(img.astype(np.float32) * np.float32(alpha), img.dtype)


def blend(a: np.ndarray, alpha: float, b: np.ndarray, beta: float) -> np.ndarray:
    """``a * alpha + b * beta`` (``addWeighted``) in ``a``'s type, as OpenCV's vector loop computes it:
    ``fma(a, alpha, b * beta)`` in float32, i.e. the product ``b * beta`` rounded to float32, then one
    rounding of the fused multiply-add. The fused step is exact in float64 (a float32 or 8-bit
    operand times a float32 factor has at most 48 significant bits) before its rounding to float32."""
    inner = b.astype(np.float32) * np.float32(beta)
    fused = a.astype(np.float64) * float(np.float32(alpha)) + inner.astype(np.float64)
    return _saturate(fused.astype(np.float32), a.dtype)


def rgb_to_gray(img: np.ndarray) -> np.ndarray:
    """``cvtColor(RGB2GRAY)`` of an <H, W, 3> image: <H, W> in the image's type."""
    if img.dtype == np.uint8:
        return ((img.astype(np.int64) @ _GRAY15 + (1 << 14)) >> 15).astype(np.uint8)
    return (img.astype(np.float32) @ _GRAY_F).astype(img.dtype)
