"""``mindspore.dataset.vision``: image transforms on HWC numpy images (and PIL images where MindSpore
takes them), with MindSpore's numerics.

MindSpore runs these on numpy input with OpenCV, so Resize follows ``cv::resize``: pixel centres at
``(i + 0.5) * in / out - 0.5``, edge pixels repeated, no antialiasing; NEAREST takes
``floor(i * in / out)``; BICUBIC is Keys' cubic with a = -0.75. An integer image keeps its type
(rounded half up and saturated, where OpenCV's fixed point may differ by one level). A PIL image
given to Resize is resized by Pillow and stays a PIL image, as on MindSpore's Python path.
Pillow is imported only by the transforms that decode or meet a PIL image.
"""
from __future__ import annotations

import functools
import io
import math
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, RuntimeParamError, check_int, short_repr

from ..transforms.transforms import TensorOperation, as_array, one_input, to_np_dtype
from . import color
from .utils import Border, Inter

INT32_MAX = 2**31 - 1


# ----------------------------------------------------------------------------------------- helpers
def _is_pil(x: Any) -> bool:
    return type(x).__module__.startswith("PIL.")


def _pil_image():
    from PIL import Image
    return Image


def _image(x: Any, who: str) -> np.ndarray:
    """The input image as a (H, W) or (H, W, C) array; a PIL image is converted."""
    arr = np.asarray(x) if _is_pil(x) else as_array(x, f"{who}'s input")
    if arr.ndim not in (2, 3):
        raise InvalidParamError(f"{who}: the image must be <H, W> or <H, W, C>, got shape {arr.shape}; "
                                "decode encoded bytes first (vision.Decode()) or check input_columns")
    return arr


def _like(arr: np.ndarray, original: Any) -> Any:
    """``arr`` as the caller gave its input: a PIL image stays a PIL image."""
    return _pil_image().fromarray(arr) if _is_pil(original) else arr


def _positive(value: Any, who: str) -> int:
    return check_int(value, who, minimum=1, maximum=INT32_MAX)


def _size_pair(size: Any, who: str) -> tuple[int, int]:
    """(height, width) from an int (square) or a sequence of two ints."""
    if isinstance(size, Sequence) and not isinstance(size, str):
        if len(size) != 2:
            raise InvalidParamError(f"{who}: size {short_repr(size)} must be an int or (height, width)")
        return _positive(size[0], f"{who}: size[0]"), _positive(size[1], f"{who}: size[1]")
    s = _positive(size, f"{who}: size")
    return s, s


def _range(value: Any, who: str) -> tuple[float, float]:
    if not (isinstance(value, Sequence) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value)
            and 0 <= value[0] <= value[1]):
        raise InvalidParamError(f"{who} {short_repr(value)} must be (min, max) with 0 <= min <= max")
    return float(value[0]), float(value[1])


def _prob(prob: Any, who: str) -> float:
    if not isinstance(prob, (int, float)) or isinstance(prob, bool) or not 0.0 <= prob <= 1.0:
        raise InvalidParamError(f"{who}: prob {short_repr(prob)} must be a number in [0, 1]")
    return float(prob)


def _cast_like(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float results back to the input's type: integers rounded half up and saturated, like OpenCV."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.floor(values + 0.5), info.min, info.max).astype(dtype)
    return values.astype(dtype)


# ----------------------------------------------------------------------------------------- resize
_KEYS_A = -0.75          # OpenCV's bicubic coefficient


def _linear_taps(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    f = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    i0 = np.floor(f).astype(np.int64)
    frac = f - i0
    frac[i0 < 0] = 0.0                   # before the first centre: the first pixel alone
    frac[i0 >= n_in - 1] = 0.0           # after the last centre: the last pixel alone
    idx = np.clip(np.stack([i0, i0 + 1], 1), 0, n_in - 1)
    return idx, np.stack([1.0 - frac, frac], 1)


def _cubic_taps(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    f = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    i0 = np.floor(f).astype(np.int64)
    t = f - i0
    a = _KEYS_A
    w0 = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a
    w1 = ((a + 2) * t - (a + 3)) * t * t + 1
    w2 = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1
    idx = np.clip(i0[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return idx, np.stack([w0, w1, w2, 1.0 - w0 - w1 - w2], 1)


def _nearest_taps(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    idx = np.minimum(np.floor(np.arange(n_out) * (n_in / n_out)).astype(np.int64), n_in - 1)
    return idx[:, None], np.ones((n_out, 1))


_TAPS = {Inter.NEAREST: _nearest_taps, Inter.BILINEAR: _linear_taps, Inter.BICUBIC: _cubic_taps}


@functools.lru_cache(maxsize=64)
def _taps(interpolation: Inter, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """Source indices and weights of each output line; a pipeline resizes many images of one size."""
    idx, weights = _TAPS[interpolation](n_in, n_out)
    idx.flags.writeable = weights.flags.writeable = False
    return idx, weights


def _resample(img: np.ndarray, axis: int, idx: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each output line along ``axis`` as the weighted sum of the input lines ``idx`` names."""
    gathered = np.take(img, idx, axis=axis)              # the tap axis lands right after ``axis``
    shape = [1] * gathered.ndim
    shape[axis], shape[axis + 1] = weights.shape
    return (gathered * weights.reshape(shape)).sum(axis=axis + 1)


def resize_array(img: np.ndarray, height: int, width: int, interpolation: Inter) -> np.ndarray:
    """``cv::resize`` of an (H, W[, C]) image to (height, width), keeping the type and the channel axis."""
    if interpolation not in _TAPS:
        raise FeatureNotSupportedError(f"Resize: interpolation {Inter(interpolation).name} is not supported; "
                                       "use Inter.NEAREST, Inter.BILINEAR or Inter.BICUBIC")
    h, w = img.shape[:2]
    if (h, w) == (height, width):
        return img
    out = _resample(img.astype(np.float64), 0, *_taps(interpolation, h, height))
    out = _resample(out, 1, *_taps(interpolation, w, width))
    return _cast_like(out, img.dtype)


def _resize_pil(img: Any, height: int, width: int, interpolation: Inter) -> Any:
    image = _pil_image()
    resample = {Inter.NEAREST: image.NEAREST, Inter.BILINEAR: image.BILINEAR, Inter.BICUBIC: image.BICUBIC,
                Inter.ANTIALIAS: image.LANCZOS, Inter.AREA: image.BOX}.get(interpolation, image.BICUBIC)
    return img.resize((width, height), resample)


def _output_size(h: int, w: int, size: tuple[int, ...]) -> tuple[int, int]:
    """(h, w) after Resize: a pair is the size; one int is the shorter side (the other floored, in float32)."""
    if len(size) == 2:
        return size
    if h < w:
        return size[0], int(math.floor(np.float32(w) / np.float32(h) * np.float32(size[0])))
    return int(math.floor(np.float32(h) / np.float32(w) * np.float32(size[0]))), size[0]


def _interpolation(value: Any, who: str) -> Inter:
    try:
        return Inter(value)
    except ValueError:
        raise InvalidParamError(f"{who}: interpolation {short_repr(value)} must be a vision.Inter") from None


# ----------------------------------------------------------------------------------------- transforms
class Decode(TensorOperation):
    """Encoded image bytes (JPEG, PNG, BMP, GIF, TIFF) to an RGB <H, W, 3> uint8 image (a PIL image with
    ``to_pil``)."""

    def __init__(self, to_pil: bool = False):
        if not isinstance(to_pil, bool):
            raise InvalidParamError(f"Decode: to_pil={short_repr(to_pil)} must be a bool")
        self.to_pil = to_pil

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        data = one_input(self, args)
        raw = data if isinstance(data, bytes) else as_array(data, "Decode's input")
        if not isinstance(raw, bytes) and raw.dtype.kind == "S" and raw.size == 1:
            raw = raw.reshape(-1)[0]                   # a MindRecord bytes field: one numpy bytes item
        if not isinstance(raw, bytes):
            if raw.ndim != 1 or raw.dtype != np.uint8:
                raise InvalidParamError(f"Decode: the input must be encoded image bytes (1-D uint8), got "
                                        f"{raw.dtype} of shape {raw.shape}; is the image already decoded?")
            raw = raw.tobytes()
        return decode_bytes(raw, self.to_pil, "Decode")


class ImageDecodeError(RuntimeParamError):
    """Encoded image data Pillow cannot decode: not an image, an unknown format, truncated or corrupt,
    or a decompression bomb (more pixels than Pillow's ``Image.MAX_IMAGE_PIXELS`` allows). MindSpore's
    Decode raises a RuntimeError there, so ``except RuntimeError`` still works."""


# What Pillow's decoders raise on hostile or damaged data, besides DecompressionBombError: its
# documented OSError (UnidentifiedImageError, "image file is truncated"), SyntaxError and ValueError,
# and what its format plugins let through on corrupt headers (struct.error, EOFError, IndexError,
# KeyError, TypeError), and MemoryError for a huge image under the pixel limit.
PIL_DECODE_ERRORS = (OSError, SyntaxError, ValueError, struct.error, EOFError, IndexError, KeyError, TypeError,
                     MemoryError)


def decode_bytes(raw: bytes, to_pil: bool, where: str) -> Any:
    """Pillow's decoding of one encoded image to RGB (the one decoder of Decode and ImageFolderDataset);
    undecodable data raises ImageDecodeError saying why."""
    image = _pil_image()
    try:
        with image.open(io.BytesIO(raw)) as opened:
            rgb = opened.convert("RGB")
    except image.DecompressionBombError as exc:
        raise ImageDecodeError(f"{where}: the image is refused as a decompression bomb ({exc}); if it is genuine, "
                               "raise PIL.Image.MAX_IMAGE_PIXELS before reading it") from None
    except PIL_DECODE_ERRORS as exc:
        raise ImageDecodeError(f"{where}: the data is not a decodable JPEG/PNG/BMP/GIF/TIFF image "
                               f"({len(raw)} bytes starting {raw[:8]!r}: {type(exc).__name__}: {exc})") from None
    return rgb if to_pil else np.asarray(rgb)


class Resize(TensorOperation):
    """Resize to ``size``: (height, width), or one int for the shorter side keeping the aspect ratio."""

    def __init__(self, size: Any, interpolation: Inter = Inter.LINEAR):
        self.size = (_positive(size, "Resize: size"),) if not isinstance(size, Sequence) else \
            _size_pair(size, "Resize")
        self.interpolation = _interpolation(interpolation, "Resize")

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        img = one_input(self, args)
        if _is_pil(img):
            return _resize_pil(img, *_output_size(img.height, img.width, self.size), self.interpolation)
        arr = _image(img, "Resize")
        return resize_array(arr, *_output_size(*arr.shape[:2], self.size), self.interpolation)


class CenterCrop(TensorOperation):
    """The central (height, width) window; a window larger than the image is zero-padded around it."""

    def __init__(self, size: Any):
        self.size = _size_pair(size, "CenterCrop")

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        original = one_input(self, args)
        img = _image(original, "CenterCrop")
        (ch, cw), (h, w) = self.size, img.shape[:2]
        pad_h, pad_w = max(ch - h, 0), max(cw - w, 0)
        if pad_h or pad_w:
            pads = [((pad_h + 1) // 2, pad_h // 2), ((pad_w + 1) // 2, pad_w // 2)] + [(0, 0)] * (img.ndim - 2)
            img = np.pad(img, pads)
            h, w = img.shape[:2]
        top, left = (h - ch) // 2, (w - cw) // 2
        return _like(img[top:top + ch, left:left + cw], original)


def _padding(padding: Any, who: str) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) from an int, (left/right, top/bottom) or (left, top, right, bottom)."""
    if padding is None:
        return 0, 0, 0, 0
    values = [padding] * 4 if not isinstance(padding, Sequence) else list(padding)
    if len(values) == 2:
        values = values * 2
    if len(values) != 4:
        raise InvalidParamError(f"{who}: padding {short_repr(padding)} must be an int or a sequence of "
                                "2 or 4 ints")
    left, top, right, bottom = (check_int(v, f"{who}: padding", minimum=0, maximum=INT32_MAX) for v in values)
    return left, top, right, bottom


def _pad(img: np.ndarray, top: int, bottom: int, left: int, right: int, mode: Border, fill: Any) -> np.ndarray:
    """``img`` padded: a constant ``fill`` (an int, or one value per channel of a 3-channel image; a
    one-channel image takes the first), or the edge pixel / a reflection (OpenCV's BORDER_REFLECT_101
    is numpy's 'reflect', BORDER_REFLECT its 'symmetric')."""
    if not (top or bottom or left or right):
        return img
    pads = [(top, bottom), (left, right)] + [(0, 0)] * (img.ndim - 2)
    if mode is not Border.CONSTANT:
        return np.pad(img, pads, mode=mode.value)
    if isinstance(fill, Sequence):
        channels = img.shape[2] if img.ndim == 3 else 1
        if channels not in (1, 3):
            raise InvalidParamError(f"Pad: fill_value {short_repr(fill)} gives 3 channels a value each, but the "
                                    f"image has shape {img.shape}; give one int")
        if channels == 1:
            fill = fill[0]
        else:
            return np.stack([np.pad(img[..., c], pads[:2], constant_values=fill[c]) for c in range(3)], 2)
    return np.pad(img, pads, constant_values=fill)


class Pad(TensorOperation):
    """``Pad(padding, fill_value=0, padding_mode=Border.CONSTANT)``: pad an HW or HWC image (or a PIL
    image, which stays one) by ``padding``: an int for every side, (left/right, top/bottom) or
    (left, top, right, bottom). ``fill_value`` (CONSTANT) is an int in [0, 255] or an (R, G, B) tuple."""

    def __init__(self, padding: Any, fill_value: Any = 0, padding_mode: Border = Border.CONSTANT):
        if isinstance(padding, bool) or not isinstance(padding, (int, Sequence)) or isinstance(padding, str):
            raise InvalidParamError(f"Pad: padding {short_repr(padding)} must be an int or a sequence of 2 or 4 "
                                    "ints")
        self.padding = _padding(padding, "Pad")
        if isinstance(fill_value, tuple) and len(fill_value) == 3:
            values = fill_value
        elif isinstance(fill_value, int) and not isinstance(fill_value, bool):
            values = (fill_value,)
        else:
            raise InvalidParamError(f"Pad: fill_value {short_repr(fill_value)} must be an int or an (R, G, B) tuple")
        for v in values:
            check_int(v, "Pad: fill_value", minimum=0, maximum=255)
        if not isinstance(padding_mode, Border):
            raise InvalidParamError(f"Pad: padding_mode {short_repr(padding_mode)} must be a Border (e.g. "
                                    "Border.EDGE)")
        self.fill_value, self.padding_mode = fill_value, padding_mode

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        original = one_input(self, args)
        left, top, right, bottom = self.padding
        img = _pad(_image(original, "Pad"), top, bottom, left, right, self.padding_mode, self.fill_value)
        return _like(img, original)


class RandomCrop(TensorOperation):
    """A (height, width) window at a random position, after optional padding."""

    random = True

    def __init__(self, size: Any, padding: Any = None, pad_if_needed: bool = False, fill_value: Any = 0,
                 padding_mode: Border = Border.CONSTANT):
        self.size = _size_pair(size, "RandomCrop")
        self.padding = _padding(padding, "RandomCrop")
        self.pad_if_needed = bool(pad_if_needed)
        if not (isinstance(fill_value, int) or (isinstance(fill_value, Sequence) and len(fill_value) == 3)):
            raise InvalidParamError(f"RandomCrop: fill_value {short_repr(fill_value)} must be an int or an "
                                    "(R, G, B) tuple")
        self.fill_value = fill_value
        self.padding_mode = Border(padding_mode)

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        original = one_input(self, args)
        img = _image(original, "RandomCrop")
        left, top, right, bottom = self.padding
        img = _pad(img, top, bottom, left, right, self.padding_mode, self.fill_value)
        (ch, cw), (h, w) = self.size, img.shape[:2]
        if self.pad_if_needed and (h < ch or w < cw):
            dh, dw = max(ch - h, 0), max(cw - w, 0)
            img = _pad(img, dh, dh, dw, dw, self.padding_mode, self.fill_value)
            h, w = img.shape[:2]
        if h < ch or w < cw:
            raise InvalidParamError(f"RandomCrop: the (padded) image is {h}x{w}, smaller than the crop {ch}x{cw}; "
                                    "give padding= or pad_if_needed=True, or a smaller size")
        y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        return _like(img[y:y + ch, x:x + cw], original)


class RandomResizedCrop(TensorOperation):
    """A random window of random area fraction (``scale``) and aspect ratio (``ratio``), resized to ``size``;
    after ``max_attempts`` misses, the central window of the image clamped to ``ratio``."""

    random = True

    def __init__(self, size: Any, scale: Sequence[float] = (0.08, 1.0), ratio: Sequence[float] = (3 / 4, 4 / 3),
                 interpolation: Inter = Inter.BILINEAR, max_attempts: int = 10):
        self.size = _size_pair(size, "RandomResizedCrop")
        self.scale = _range(scale, "RandomResizedCrop: scale")
        self.ratio = _range(ratio, "RandomResizedCrop: ratio")
        if self.ratio[0] <= 0:
            raise InvalidParamError(f"RandomResizedCrop: ratio {short_repr(ratio)} must be positive")
        self.interpolation = _interpolation(interpolation, "RandomResizedCrop")
        self.max_attempts = _positive(max_attempts, "RandomResizedCrop: max_attempts")

    def _window(self, h: int, w: int, rng: np.random.Generator) -> tuple[int, int, int, int]:
        area = h * w
        log_lo, log_hi = math.log(self.ratio[0]), math.log(self.ratio[1])
        for _ in range(self.max_attempts):
            target = area * rng.uniform(*self.scale)
            aspect = math.exp(rng.uniform(log_lo, log_hi))
            cw, ch = round(math.sqrt(target * aspect)), round(math.sqrt(target / aspect))
            if 0 < cw <= w and 0 < ch <= h:
                return int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1)), ch, cw
        if w / h < self.ratio[0]:
            cw, ch = w, round(w / self.ratio[0])
        elif w / h > self.ratio[1]:
            ch, cw = h, round(h * self.ratio[1])
        else:
            ch, cw = h, w
        return (h - ch) // 2, (w - cw) // 2, ch, cw

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        original = one_input(self, args)
        img = _image(original, type(self).__name__)
        y, x, ch, cw = self._window(*img.shape[:2], rng)
        return _like(resize_array(img[y:y + ch, x:x + cw], *self.size, self.interpolation), original)


class RandomCropDecodeResize(RandomResizedCrop):
    """Decode, then RandomResizedCrop (MindSpore fuses the two; the result is the same)."""

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        return super()._apply((Decode()._apply(args, rng),), rng)


class RandomHorizontalFlip(TensorOperation):
    """Mirror left-right with probability ``prob``."""

    random = True
    axis = 1

    def __init__(self, prob: float = 0.5):
        self.prob = _prob(prob, type(self).__name__)

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        original = one_input(self, args)
        img = _image(original, type(self).__name__)
        return _like(np.flip(img, self.axis).copy(), original) if rng.random() < self.prob else original


class RandomVerticalFlip(RandomHorizontalFlip):
    """Mirror top-bottom with probability ``prob``."""

    axis = 0


def _factor_range(value: Any, who: str, center: float, bound: tuple[float, float]) -> tuple[float, float]:
    """A factor range: a number v gives [center - v, center + v] (clamped at 0 for the non-negative
    factors), a sequence is [min, max] itself; both must lie within ``bound``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value < 0:
            raise InvalidParamError(f"{who} {short_repr(value)} cannot be negative")
        lo, hi = center - value, center + value
        lo = max(lo, 0.0) if bound[0] == 0 else lo
    elif (isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2
          and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        lo, hi = value
        if lo > hi:
            raise InvalidParamError(f"{who} {short_repr(value)} must be in (min, max) format")
    else:
        raise InvalidParamError(f"{who} {short_repr(value)} must be a number or a (min, max) pair")
    if not bound[0] <= lo <= hi <= bound[1]:
        raise InvalidParamError(f"{who} range [{lo}, {hi}] must lie within [{bound[0]}, {bound[1]}]")
    return float(lo), float(hi)


class RandomColorAdjust(TensorOperation):
    """Brightness, contrast, saturation and hue, each by a factor drawn uniformly from its range, in a
    random order; an adjustment whose range is the identity ((1, 1), hue (0, 0)) is skipped and draws
    nothing (MindSpore's RandomColorAdjustOp). On an <H, W, 3> uint8 or float32 image with OpenCV's
    arithmetic (``vision/color.py``): brightness ``x * f``; contrast a blend with the image's mean grey
    value; saturation a blend with each pixel's grey. A PIL image takes MindSpore's Python path:
    Pillow's ImageEnhance and a shift of H by ``uint8(f * 255)``, all four applied in a random order."""

    random = True
    _NAMES = ("brightness", "contrast", "saturation", "hue")

    def __init__(self, brightness: Any = (1, 1), contrast: Any = (1, 1), saturation: Any = (1, 1),
                 hue: Any = (0, 0)):
        unbounded = (0.0, float(np.finfo(np.float32).max))
        self.brightness = _factor_range(brightness, "RandomColorAdjust: brightness", 1.0, unbounded)
        self.contrast = _factor_range(contrast, "RandomColorAdjust: contrast", 1.0, unbounded)
        self.saturation = _factor_range(saturation, "RandomColorAdjust: saturation", 1.0, unbounded)
        self.hue = _factor_range(hue, "RandomColorAdjust: hue", 0.0, (-0.5, 0.5))

    def _ranges(self) -> tuple[tuple[float, float], ...]:
        return self.brightness, self.contrast, self.saturation, self.hue

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        original = one_input(self, args)
        if _is_pil(original):
            return self._apply_pil(original, rng)
        img = _image(original, "RandomColorAdjust")
        if img.ndim != 3 or img.shape[2] != 3 or img.dtype not in (np.uint8, np.float32):
            raise InvalidParamError(f"RandomColorAdjust: the image must be <H, W, 3> uint8 or float32 (RGB), got "
                                    f"{img.dtype} of shape {img.shape}")
        identity = (1.0, 1.0, 1.0, 0.0)
        for k in rng.permutation(4):
            lo, hi = self._ranges()[k]
            if lo == hi == identity[k]:
                continue
            f = float(np.float32(rng.uniform(lo, hi)))
            img = self._adjust(int(k), img, f)
        return img

    @staticmethod
    def _adjust(k: int, img: np.ndarray, f: float) -> np.ndarray:
        if k == 0:
            return color.scale(img, f)
        if k == 1:
            mean = color.rgb_to_gray(img).mean()
            grey = np.full_like(img, np.rint(mean) if img.dtype == np.uint8 else mean)
            return color.blend(grey, 1.0 - f, img, f)
        if k == 2:
            grey = np.repeat(color.rgb_to_gray(img)[..., None], 3, -1)
            return color.blend(grey, 1.0 - f, img, f)
        raise FeatureNotSupportedError("RandomColorAdjust: a hue range other than (0, 0) is supported on PIL images "
                                       "only (vision.ToPIL() first); on numpy images MindSpore shifts H through "
                                       "OpenCV's 8-bit HSV conversions, which the emulator does not reproduce")

    def _apply_pil(self, img: Any, rng: np.random.Generator) -> Any:
        from PIL import ImageEnhance

        factors = [rng.uniform(lo, hi) for lo, hi in self._ranges()]
        enhancers = (ImageEnhance.Brightness, ImageEnhance.Contrast, ImageEnhance.Color)
        for k in rng.permutation(4):
            if k < 3:
                img = enhancers[k](img).enhance(factors[k])
            elif img.mode not in ("L", "1", "I", "F"):
                h, s, v = img.convert("HSV").split()
                shifted = np.asarray(h, np.uint8) + np.uint8(int(factors[3] * 255) % 256)
                img = _pil_image().merge("HSV", (_pil_image().fromarray(shifted, "L"), s, v)).convert(img.mode)
        return img


class Rescale(TensorOperation):
    """``x * rescale + shift`` as float32."""

    def __init__(self, rescale: float, shift: float):
        for name, value in (("rescale", rescale), ("shift", shift)):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise InvalidParamError(f"Rescale: {name} {short_repr(value)} must be a number")
        self.rescale, self.shift = float(rescale), float(shift)

    def _apply(self, args: tuple, rng: np.random.Generator) -> np.ndarray:
        arr = _image(one_input(self, args), "Rescale")
        return (arr.astype(np.float64) * self.rescale + self.shift).astype(np.float32)


class Normalize(TensorOperation):
    """``(x - mean[c]) / std[c]`` per channel as float32; mean/std in the input's units (0-255 for uint8)."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], is_hwc: bool = True):
        self.mean = self._values(mean, "mean", 0.0)
        self.std = self._values(std, "std", None)
        if len(self.mean) != len(self.std):
            raise InvalidParamError(f"Normalize: mean has {len(self.mean)} values and std {len(self.std)}; "
                                    "give one of each per channel")
        self.is_hwc = bool(is_hwc)

    @staticmethod
    def _values(values: Any, name: str, minimum: float | None) -> np.ndarray:
        if not (isinstance(values, Sequence) and values and all(isinstance(v, (int, float)) for v in values)):
            raise InvalidParamError(f"Normalize: {name} {short_repr(values)} must be a sequence of numbers, "
                                    "one per channel")
        arr = np.asarray(values, np.float64)
        if (minimum is None and (arr <= 0).any()) or (minimum is not None and (arr < minimum).any()):
            raise InvalidParamError(f"Normalize: {name} {short_repr(values)} must be "
                                    f"{'positive' if minimum is None else 'non-negative'}")
        return arr

    def _apply(self, args: tuple, rng: np.random.Generator) -> np.ndarray:
        img = _image(one_input(self, args), "Normalize")
        channels = 1 if img.ndim == 2 else img.shape[2 if self.is_hwc else 0]
        if len(self.mean) not in (1, channels):
            raise InvalidParamError(f"Normalize: {len(self.mean)} mean/std values for an image of {channels} "
                                    f"channels (shape {img.shape}, is_hwc={self.is_hwc})")
        shape = (-1,) if self.is_hwc or img.ndim == 2 else (-1, 1, 1)
        out = (img.astype(np.float64) - self.mean.reshape(shape)) / self.std.reshape(shape)
        return out.astype(np.float32)


class HWC2CHW(TensorOperation):
    """<H, W, C> to <C, H, W>; an <H, W> image is left as it is."""

    def _apply(self, args: tuple, rng: np.random.Generator) -> np.ndarray:
        img = _image(one_input(self, args), "HWC2CHW")
        return img if img.ndim == 2 else np.ascontiguousarray(img.transpose(2, 0, 1))


class ToTensor(TensorOperation):
    """An <H, W, C> (or <H, W>) image, numpy or PIL, to <C, H, W> of ``output_type`` divided by 255."""

    def __init__(self, output_type: Any = np.float32):
        self.output_type = to_np_dtype(output_type, "ToTensor")

    def _apply(self, args: tuple, rng: np.random.Generator) -> np.ndarray:
        img = _image(one_input(self, args), "ToTensor")
        img = img[:, :, None] if img.ndim == 2 else img
        return (img.transpose(2, 0, 1).astype(np.float64) / 255.0).astype(self.output_type)


class ToPIL(TensorOperation):
    """A numpy <H, W[, C]> uint8 image to a PIL image (for the PIL-based transforms)."""

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        img = one_input(self, args)
        if _is_pil(img):
            return img
        arr = _image(img, "ToPIL")
        return _pil_image().fromarray(arr[:, :, 0] if arr.ndim == 3 and arr.shape[2] == 1 else arr)

__all__ = ["Decode", "Resize", "CenterCrop", "Pad", "RandomCrop", "RandomResizedCrop", "RandomCropDecodeResize",
           "RandomHorizontalFlip", "RandomVerticalFlip", "RandomColorAdjust", "Rescale", "Normalize", "HWC2CHW",
           "ToTensor", "ToPIL",
           "Inter", "Border", "resize_array", "decode_bytes"]
