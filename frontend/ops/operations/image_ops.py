"""``mindspore.ops.operations.image_ops``: the image primitives MindSpore defines there: bilinear resizing
(the ResizeBilinearV2 kernel), and the resampling compositions of round 2 (ResizeBicubic, ResizeArea,
ResizeLinear1D, CropAndResize).

A separable resize is, per axis, a fixed map from each output position to a few input positions and
their weights (its "taps"), which depends only on the shapes and attributes: the tables are computed on
the host in float32 as MindSpore's CPU kernels compute their coordinates, and the resize is one Gather
per tap along the axis times a constant weight row, summed (:func:`_resample_axis`). Gather's backward
is the deterministic UnsortedSegmentSum, so every resize has a gradient whose bits never depend on
scheduling. CropAndResize's coordinates depend on the boxes (a tensor), so they are computed by device
ops and the corners are gathered from the flattened image (its gradient reaches the image and the boxes).
Half-precision inputs are resampled in float32 and rounded once, as those kernels compute them.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _int_tuple, _static_ints, defined_here
from ..composite_op import composite
from ..primitive import _Op, _cast, _tensor, apply_op
from .array_ops import BroadcastTo, Cast, Gather, Reshape, Select, StridedSlice, Transpose
from .math_ops import Ceil, Floor, GreaterEqual, LessEqual, LogicalAnd, Maximum, Minimum

# float types computed in float32 and rounded once at the end (MindSpore's CPU kernels do so)
HALF_TYPES = (mstype.float16, mstype.bfloat16)
# TensorFlow's bicubic kernel: its coefficient table has this many steps per unit (weights are quantized)
CUBIC_TABLE_SIZE = 1024
# Keys' cubic coefficient: -0.75 (legacy, OpenCV's), -0.5 with half-pixel centers (TensorFlow's choice)
CUBIC_A_LEGACY, CUBIC_A_HALF_PIXEL = -0.75, -0.5


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


# ---- resampling and patches (round 2) ----

def _f32(value: Any) -> np.ndarray:
    return np.asarray(value, np.float32)


def _compute_type(owner: str, x: Tensor, floats: Sequence[mstype.Type] = (mstype.float16, mstype.float32,
                                                                             mstype.float64)) -> mstype.Type:
    """The dtype a resample of ``x`` computes in (float32 for half types); TypeError for other dtypes."""
    if x.dtype not in floats:
        raise TypeError(f"For '{owner}', the type of 'x' must be in {[str(t) for t in floats]}, but got {x.dtype}.")
    return mstype.float32 if x.dtype in HALF_TYPES else x.dtype


def _resample_axis(x: Tensor, axis: int, index: np.ndarray, weight: np.ndarray | None) -> Tensor:
    """Output position o along ``axis`` as ``sum_k weight[o, k] * x[index[o, k]]`` (``weight`` None: one
    tap, a copy): one Gather per tap and a constant weight row broadcast along the other axes."""
    row = [1] * x.ndim
    row[axis] = index.shape[0]
    out = None
    for k in range(index.shape[1]):
        part = Gather()(x, Tensor(np.ascontiguousarray(index[:, k], np.int32)), axis)
        if weight is not None:
            part = part * _cast(Tensor(_f32(weight[:, k]).reshape(row)), x.dtype)
        out = part if out is None else out + part
    return out


def _scale(n: int, m: int, align_corners: bool) -> np.float32:
    """Input steps per output step: (n - 1) / (m - 1) corner-aligned (m > 1), else n / m; float32."""
    if align_corners and m > 1:
        return np.float32(n - 1) / np.float32(m - 1)
    return np.float32(n) / np.float32(m)


def _linear_taps(n: int, m: int, mode: str, scale: np.float32 | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Linear interpolation taps (lo, hi) of PyTorch's convention, which MindSpore's linear/trilinear kernels
    follow: 'align_corners' src = o (n-1)/(m-1) (0 if m == 1); 'half_pixel' src = max((o + .5) s - .5, 0) with
    s = n / m or the given ``scale``; lo = floor(src), hi = min(lo + 1, n - 1), weights (1 - l, l)."""
    o = np.arange(m, dtype=np.float32)
    if mode == "align_corners":
        src = o * (np.float32(n - 1) / np.float32(m - 1) if m > 1 else np.float32(0))
    else:
        s = np.float32(n) / np.float32(m) if scale is None else np.float32(scale)
        src = np.maximum((o + np.float32(0.5)) * s - np.float32(0.5), np.float32(0))
    lo = np.minimum(np.floor(src).astype(np.int64), n - 1)
    hi = np.minimum(lo + 1, n - 1)
    lam = (src - lo.astype(np.float32)).astype(np.float32)
    return np.stack([lo, hi], 1), np.stack([np.float32(1) - lam, lam], 1)


def _cubic_coefficients(a: float) -> np.ndarray:
    """TensorFlow's bicubic table: entry 2i is the weight of a tap at distance x = i / size, 2i + 1 of one at
    x + 1 (Keys' kernel with coefficient ``a``), in float32."""
    a32 = np.float32(a)
    x = np.arange(CUBIC_TABLE_SIZE + 1, dtype=np.float32) / np.float32(CUBIC_TABLE_SIZE)
    near = ((a32 + 2) * x - (a32 + 3)) * x * x + 1
    x1 = x + np.float32(1)
    far = ((a32 * x1 - 5 * a32) * x1 + 8 * a32) * x1 - 4 * a32
    return np.stack([near, far], 1).reshape(-1).astype(np.float32)


def _cubic_taps(n: int, m: int, align: bool, half: bool) -> tuple[np.ndarray, np.ndarray]:
    """ResizeBicubic's four taps per output (TensorFlow's kernel): src = o s (legacy) or (o + .5) s - .5
    (half-pixel), taps floor(src) - 1 .. + 2 weighted from the quantized table; half-pixel zeroes the taps
    outside the input and renormalises, legacy clamps them to the edge."""
    scale = _scale(n, m, align)
    table = _cubic_coefficients(CUBIC_A_HALF_PIXEL if half else CUBIC_A_LEGACY)
    index, weight = np.zeros((m, 4), np.int64), np.zeros((m, 4), np.float32)
    for o in range(m):
        src = (np.float32(o) + np.float32(0.5)) * scale - np.float32(0.5) if half else np.float32(o) * scale
        base = int(np.floor(src))
        off = int(np.rint(np.float32(src - np.float32(base)) * np.float32(CUBIC_TABLE_SIZE)))
        w = [table[off * 2 + 1], table[off * 2], table[(CUBIC_TABLE_SIZE - off) * 2],
             table[(CUBIC_TABLE_SIZE - off) * 2 + 1]]
        taps = [base - 1 + k for k in range(4)]
        index[o] = [min(max(t, 0), n - 1) for t in taps]
        if half:
            w = [wk if 0 <= t < n else np.float32(0) for wk, t in zip(w, taps)]
            total = np.float32(sum(w, np.float32(0)))
            if abs(total) >= 1000 * np.finfo(np.float32).tiny:
                w = [np.float32(wk / total) for wk in w]
        weight[o] = w
    return index, weight


def _area_taps(n: int, m: int, align: bool) -> tuple[np.ndarray, np.ndarray]:
    """ResizeArea's taps (TensorFlow's kernel): output o covers [o s, (o + 1) s) of the input; each input
    cell weighs its overlap, divided by s (the average); cells past the edge read the last one."""
    scale = _scale(n, m, align)
    rows = []
    for o in range(m):
        lo, hi = np.float32(o) * scale, np.float32(o + 1) * scale
        taps = [(min(max(i, 0), n - 1), np.float32(min(np.float32(i + 1), hi) - max(np.float32(i), lo)) / scale)
                for i in range(int(np.floor(lo)), int(np.ceil(hi)))]
        rows.append(taps)
    width = max(len(r) for r in rows)
    index, weight = np.zeros((m, width), np.int64), np.zeros((m, width), np.float32)
    for o, taps in enumerate(rows):
        for k, (i, w) in enumerate(taps):
            index[o, k], weight[o, k] = i, w
    return index, weight


def _resized(owner: str, x: Tensor, axes: Sequence[int], tables: Sequence[tuple[np.ndarray, np.ndarray | None]],
             out_dtype: mstype.Type, floats: Sequence[mstype.Type] = (mstype.float16, mstype.float32,
                                                                         mstype.float64)) -> Tensor:
    """``x`` resampled along each axis by its taps, in the compute type, then as ``out_dtype``."""
    work = _compute_type(owner, x, floats)
    y = _cast(x, work)
    for axis, (index, weight) in zip(axes, tables):
        y = _resample_axis(y, axis, index, weight)
    return _cast(y, out_dtype)


def _bool_attr(owner: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{owner}', the type of '{name}' must be bool, but got {type(value).__name__}.")
    return value


def _sizes(owner: str, size: Any, count: int) -> tuple[int, ...]:
    sizes = _static_ints(f"{owner}: size", size)
    if len(sizes) != count or any(s <= 0 for s in sizes):
        raise ValueError(f"For '{owner}', the 'size' must be {count} positive int(s), but got {list(sizes)}.")
    return sizes


def _rank(owner: str, x: Tensor, rank: int) -> None:
    if x.ndim != rank:
        raise ValueError(f"For '{owner}', the dimension of 'x' must be {rank}, but got {x.ndim}.")


@composite("ResizeBicubic")
def ResizeBicubic(image: Any, size: Any, align_corners: bool = False, half_pixel_centers: bool = False) -> Tensor:
    """Bicubic resize of NCHW ``image`` to ``size`` (new_height, new_width), TensorFlow's kernel (see
    :func:`_cubic_taps`); the output keeps the input's float dtype."""
    x = _tensor(image)
    align = _bool_attr("ResizeBicubic", "align_corners", align_corners)
    half = _bool_attr("ResizeBicubic", "half_pixel_centers", half_pixel_centers)
    if align and half:
        raise ValueError("For 'ResizeBicubic', the half_pixel_centers must be false when align_corners is true.")
    _rank("ResizeBicubic", x, 4)
    oh, ow = _sizes("ResizeBicubic", size, 2)
    return _resized("ResizeBicubic", x, (2, 3), (_cubic_taps(x.shape[2], oh, align, half),
                                                 _cubic_taps(x.shape[3], ow, align, half)), x.dtype)


@composite("ResizeArea")
def ResizeArea(images: Any, size: Any, align_corners: bool = False) -> Tensor:
    """Area (box average) resize of NHWC ``images`` to ``size`` (new_height, new_width), TensorFlow's kernel
    (see :func:`_area_taps`); the output is float32, as MindSpore's."""
    x = _tensor(images)
    align = _bool_attr("ResizeArea", "align_corners", align_corners)
    _rank("ResizeArea", x, 4)
    oh, ow = _sizes("ResizeArea", size, 2)
    numbers = (mstype.int8, mstype.uint8, mstype.int16, mstype.uint16, mstype.int32, mstype.int64,
               mstype.float16, mstype.float32, mstype.float64)
    if x.dtype not in numbers:
        raise TypeError(f"For 'ResizeArea', the type of 'images' must be in {[str(t) for t in numbers]}, but got "
                        f"{x.dtype}.")
    y = x if x.dtype in (mstype.float32, mstype.float64) else _cast(x, mstype.float32)
    return _resized("ResizeArea", y, (1, 2), (_area_taps(x.shape[1], oh, align), _area_taps(x.shape[2], ow, align)),
                    mstype.float32, (mstype.float32, mstype.float64))


LINEAR_1D_MODES = ("align_corners", "half_pixel")


@composite("ResizeLinear1D")
def ResizeLinear1D(x: Any, size: Any, coordinate_transformation_mode: str = "align_corners") -> Tensor:
    """Linear resize of the last axis of (batch, channel, width) ``x`` to ``size`` (one int), with
    'align_corners' or 'half_pixel' coordinates (see :func:`_linear_taps`)."""
    x = _tensor(x)
    if coordinate_transformation_mode not in LINEAR_1D_MODES:
        raise TypeError(f"For 'ResizeLinear1D', coordinate_transformation_mode must be in {list(LINEAR_1D_MODES)}, "
                        f"but got {coordinate_transformation_mode!r}.")
    _rank("ResizeLinear1D", x, 3)
    (width,) = _sizes("ResizeLinear1D", size, 1)
    return _resized("ResizeLinear1D", x, (2,), (_linear_taps(x.shape[2], width, coordinate_transformation_mode),),
                    x.dtype)


CROP_METHODS = ("bilinear", "nearest")


def _column(t: Tensor, k: int) -> Tensor:
    """Column k of a (rows, 4) tensor as (rows, 1)."""
    return StridedSlice()(t, (0, k), (t.shape[0], k + 1), (1, 1))


def _crop_coords(low: Tensor, high: Tensor, extent: int, crop: int) -> Tensor:
    """Each box's sample coordinates along one axis, (boxes, crop): low (extent - 1) + o (high - low)
    (extent - 1) / (crop - 1), or the box's centre when crop is 1 (TensorFlow's CropAndResize)."""
    span = float(extent - 1)
    if crop == 1:
        return (low + high) * (0.5 * span)
    steps = Tensor(np.arange(crop, dtype=np.float32).reshape(1, crop))
    return low * span + steps * ((high - low) * span / float(crop - 1))


def _in_range(coord: Tensor, extent: int) -> Tensor:
    return LogicalAnd()(GreaterEqual()(coord, 0.0), LessEqual()(coord, float(extent - 1)))


def _clipped_index(coord: Tensor, extent: int) -> Tensor:
    """An integer-valued float coordinate clamped into [0, extent - 1], as int32."""
    return Cast()(Minimum()(Maximum()(coord, 0.0), float(extent - 1)), mstype.int32)


@composite("CropAndResize", functions=("crop_and_resize",),
           rename={"box_indices": "box_index", "image": "x"})
def CropAndResize(x: Any, boxes: Any, box_index: Any, crop_size: Any, method: str = "bilinear",
                  extrapolation_value: float = 0.0) -> Tensor:
    """Crops of NHWC ``x``, one per box (y1, x1, y2, x2 normalised; rows of ``boxes``) of image
    ``box_index``, each resized to ``crop_size`` (bilinear or nearest, TensorFlow's kernel); samples
    outside the image are ``extrapolation_value``. float32 (boxes, NHWC result), as MindSpore's."""
    owner = "CropAndResize"
    if method not in CROP_METHODS:
        if method == "bilinear_v2":
            raise InvalidParamError(f"{owner}: method='bilinear_v2' is not supported; use 'bilinear' or 'nearest'")
        raise ValueError(f"For '{owner}', the 'method' must be in ['bilinear', 'nearest', 'bilinear_v2'], but got "
                         f"{method!r}.")
    if not isinstance(extrapolation_value, float):
        raise TypeError(f"For '{owner}', the type of 'extrapolation_value' must be float, but got "
                        f"{type(extrapolation_value).__name__}.")
    image, boxes, index = _tensor(x), _tensor(boxes), _tensor(box_index)
    if not isinstance(crop_size, tuple) or len(crop_size) != 2 or any(
            isinstance(c, bool) or not isinstance(c, int) or c <= 0 for c in crop_size):
        raise ValueError(f"For '{owner}', the 'crop_size' must be a tuple of 2 positive ints, but got {crop_size!r}.")
    if image.ndim != 4:
        raise ValueError(f"For '{owner}', the input image must be 4D Tensor, but got {image.ndim}D")
    if boxes.dtype != mstype.float32:
        raise TypeError(f"For '{owner}', the input boxes must be Float32, but got {boxes.dtype}")
    if boxes.ndim != 2 or boxes.shape[-1] != 4:
        raise ValueError(f"For '{owner}', the input boxes must be 2D and the second-dim must be 4, but got "
                         f"{boxes.shape}")
    if index.dtype != mstype.int32:
        raise TypeError(f"For '{owner}', the input box_indices must be Int32, but got {index.dtype}")
    if index.shape != (boxes.shape[0],):
        raise ValueError(f"For '{owner}', the input box_indices must be 1D of length {boxes.shape[0]}, but got "
                         f"{index.shape}")
    batch, height, width, depth = image.shape
    ch, cw = crop_size
    ys = _crop_coords(_column(boxes, 0), _column(boxes, 2), height, ch)          # (boxes, ch)
    xs = _crop_coords(_column(boxes, 1), _column(boxes, 3), width, cw)           # (boxes, cw)
    rows = Reshape()(index, (-1, 1, 1)) * (height * width)
    flat = Reshape()(_cast(image, mstype.float32), (batch * height * width, depth))

    def at(source: Tensor, y_idx: Tensor, x_idx: Tensor) -> Tensor:            # (boxes, ch, cw, depth)
        where = rows + Reshape()(y_idx, (-1, ch, 1)) * width + Reshape()(x_idx, (-1, 1, cw))
        return Gather()(source, where, 0)

    def lerp_weight(coord: Tensor, lo: Tensor, shape: tuple[int, ...]) -> Tensor:
        return Reshape()(coord - lo, shape)

    def bilinear(source: Tensor) -> Tensor:
        top, left = Floor()(ys), Floor()(xs)
        y0, y1 = _clipped_index(top, height), _clipped_index(Ceil()(ys), height)
        x0, x1 = _clipped_index(left, width), _clipped_index(Ceil()(xs), width)
        ly = lerp_weight(ys, top, (-1, ch, 1, 1))
        lx = lerp_weight(xs, left, (-1, 1, cw, 1))
        tl, tr, bl, br = at(source, y0, x0), at(source, y0, x1), at(source, y1, x0), at(source, y1, x1)
        upper = tl + (tr - tl) * lx
        lower = bl + (br - bl) * lx
        return upper + (lower - upper) * ly

    if method == "nearest":
        out = at(flat, _clipped_index(Floor()(ys + 0.5), height), _clipped_index(Floor()(xs + 0.5), width))
        # MindSpore's CropAndResize bprop (Ascend and CPU) takes the boxes' gradient from CropAndResizeGradBoxes
        # with method 'bilinear' whatever the method: the bilinear crop's box gradient, carried by a term that
        # is exactly zero in value (b - b) and passes no gradient to the image
        box_path = bilinear(apply_op("StopGradient", [flat])[0])
        out = out + (box_path - apply_op("StopGradient", [box_path])[0])
    else:
        out = bilinear(flat)
    inside = LogicalAnd()(Reshape()(_in_range(ys, height), (-1, ch, 1, 1)),
                          Reshape()(_in_range(xs, width), (-1, 1, cw, 1)))
    fill = Tensor(np.full((1, 1, 1, 1), extrapolation_value, np.float32))
    return Select()(BroadcastTo(out.shape)(inside), out, BroadcastTo(out.shape)(fill))


# ---- image, detection and windows ----
from .array_ops import Concat, Split, _host as _host_values  # noqa: E402
from .math_ops import Abs, Equal, Greater, Less  # noqa: E402

# the image dtypes of the colour-space ops (MindSpore refuses others with a TypeError)
COLOR_DTYPES = (mstype.float16, mstype.float32, mstype.float64)


def _color_image(label: str, image: Any, min_rank: int = 1, exact_rank: int | None = None) -> Tensor:
    """An RGB/HSV image as MindSpore's colour ops check it: a float tensor whose last dimension is 3."""
    x = _tensor(image)
    if x.dtype not in COLOR_DTYPES:
        raise TypeError(f"For primitive[{label}], the input must be a type of {{Tensor[Float16], Tensor[Float32], "
                        f"Tensor[Float64]}}, but got Tensor[{x.dtype}].")
    if exact_rank is not None and x.ndim != exact_rank:
        raise ValueError(f"For primitive[{label}], the dimension of [x] must be equal to {exact_rank}, but got "
                         f"{x.ndim}.")
    if x.ndim < min_rank:
        raise ValueError(f"For primitive[{label}], the dimension of image must be greater than or equal to "
                         f"{min_rank}, but got {x.ndim}.")
    if x.ndim == 0 or x.shape[-1] != 3:
        raise ValueError(f"For primitive[{label}], the last dimension of input must be equal to 3, but got shape "
                         f"{x.shape}.")
    return x


def _scalar_float32(label: str, name: str, value: Any) -> Tensor:
    """A 0-d float32 Tensor operand (AdjustHue's delta, AdjustSaturation's scale)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"For Primitive[{label}], the type of input argument[{name}] must be Tensor but got "
                        f"{type(value).__name__}.")
    if value.dtype != mstype.float32:
        raise TypeError(f"For primitive[{label}], the input argument[{name}] must be a type of {{Tensor[Float32]}}, "
                        f"but got Tensor[{value.dtype}].")
    if value.ndim != 0:
        raise ValueError(f"For primitive[{label}], the dimension of {name} must be equal to 0, but got {value.ndim}.")
    return value


def _rgb_to_hsv(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(h, s, v), each of x's shape with a last dimension of 1 (TensorFlow's formula, as MindSpore's
    kernels): v the largest channel, s its spread over v (0 when v is 0), h the sector position in
    [0, 1), 0 for a grey pixel."""
    r, g, b = Split(-1, 3)(x)
    v = Maximum()(Maximum()(r, g), b)
    spread = v - Minimum()(Minimum()(r, g), b)
    grey = LessEqual()(spread, 0)
    s = Select()(Greater()(v, 0), spread / Select()(Greater()(v, 0), v, 1), v * 0)
    norm = 1.0 / (Select()(grey, v * 0 + 1, spread) * 6.0)
    hue = Select()(Equal()(r, v), (g - b) * norm,
                   Select()(Equal()(g, v), (b - r) * norm + 2.0 / 6.0, (r - g) * norm + 4.0 / 6.0))
    hue = Select()(grey, hue * 0, hue)
    return Select()(Less()(hue, 0), hue + 1.0, hue), s, v


def _hsv_to_rgb(h: Tensor, s: Tensor, v: Tensor) -> Tensor:
    """The RGB image of (h, s, v) (each with a last dimension of 1): channel k is
    ``v (1 - s + s clamp(f_k(6h), 0, 1))``, the piecewise-linear hue ramps of TensorFlow's formula."""
    dh = h * 6.0
    ramps = (Abs()(dh - 3.0) - 1.0, 2.0 - Abs()(dh - 2.0), 2.0 - Abs()(dh - 4.0))
    channels = [(Minimum()(Maximum()(ramp, 0), 1) * s + (1.0 - s)) * v for ramp in ramps]
    return Concat(-1)(channels)


@composite("RGBToHSV")
def RGBToHSV(images):
    """``RGBToHSV()(images)``: each RGB pixel of the last dimension in [0, 1] as (hue, saturation, value)."""
    x = _color_image("RGBToHSV", images)
    return Concat(-1)(list(_rgb_to_hsv(x)))


@composite("HSVToRGB")
def HSVToRGB(x):
    """``HSVToRGB()(x)``: a 4-D NHWC image of (hue, saturation, value) pixels as RGB."""
    x = _color_image("HSVToRGB", x, exact_rank=4)
    h, s, v = Split(-1, 3)(x)
    return _hsv_to_rgb(h, s, v)


def _in_float32(image: Tensor, adjust: Any) -> Tensor:
    """``adjust`` applied to (h, s, v) of the image computed in float32 (MindSpore's AdjustHue and
    AdjustSaturation kernels compute in float32 for every image dtype) and rounded once to its dtype."""
    h, s, v = _rgb_to_hsv(_cast(image, mstype.float32))
    return _cast(_hsv_to_rgb(*adjust(h, s, v)), image.dtype)


@composite("AdjustHue")
def AdjustHue(image, delta):
    """``AdjustHue()(image, delta)``: every pixel's hue turned by ``delta`` (a 0-d float32 Tensor), modulo 1."""
    x = _color_image("AdjustHue", image, min_rank=3)
    delta = _scalar_float32("AdjustHue", "delta", delta)

    def turn(h: Tensor, s: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        turned = h + delta
        turned = turned - Floor()(turned)           # in [0, 1): C's fmod, plus 1 below 0
        return turned, s, v
    return _in_float32(x, turn)


@composite("AdjustSaturation")
def AdjustSaturation(image, scale):
    """``AdjustSaturation()(image, scale)``: every pixel's saturation times ``scale`` (a 0-d float32
    Tensor), clamped to [0, 1]."""
    x = _color_image("AdjustSaturation", image, min_rank=3)
    scale = _scalar_float32("AdjustSaturation", "scale", scale)
    return _in_float32(x, lambda h, s, v: (h, Minimum()(Maximum()(s * scale, 0), 1), v))


def _scalar_value(label: str, name: str, value: Any) -> Any:
    """The Python value of a 0-d Tensor operand (a threshold, a count)."""
    if not isinstance(value, Tensor) or value.ndim != 0:
        raise ValueError(f"For '{label}', {name} must be a 0-D Tensor, but got {value!r}.")
    return _host_values(label, value).item()


class NonMaxSuppressionWithOverlaps(_Op):
    """``NonMaxSuppressionWithOverlaps()(overlaps, scores, max_output_size, overlap_threshold,
    score_threshold)``: greedy non-maximum suppression over a given N x N overlap table: candidates
    scoring above ``score_threshold``, best first (the lower index on ties), each kept unless it overlaps
    a kept one by more than ``overlap_threshold``, at most ``max_output_size``; their int32 indices.
    The count depends on the values: computed from host data (PyNative, or constants), as Unique."""

    def __call__(self, overlaps: Any, scores: Any, max_output_size: Any, overlap_threshold: Any,
                 score_threshold: Any) -> Tensor:
        label = "NonMaxSuppressionWithOverlaps"
        table, score = _tensor(overlaps), _tensor(scores)
        if table.ndim != 2 or table.shape[0] != table.shape[1] or score.shape != (table.shape[0],):
            raise ValueError(f"For '{label}', overlaps must be N x N and scores of length N, but got shapes "
                             f"{table.shape} and {score.shape}.")
        limit = int(_scalar_value(label, "max_output_size", max_output_size))
        if limit < 0:
            raise ValueError(f"For '{label}', max_output_size must be non-negative, but got {limit}.")
        iou = _scalar_value(label, "overlap_threshold", overlap_threshold)
        floor = _scalar_value(label, "score_threshold", score_threshold)
        table_data, score_data = _host_values(label, table), _host_values(label, score)
        order = [i for i in np.argsort(-score_data, kind="stable").tolist() if score_data[i] > floor]
        kept: list[int] = []
        for i in order:
            if len(kept) == limit:
                break
            if all(table_data[i, j] <= iou for j in kept):
                kept.append(i)
        return Tensor(np.asarray(kept, np.int32))


def _box_iou(a: np.ndarray, b: np.ndarray) -> float:
    """TensorFlow's IoU of two (y1, x1, y2, x2) boxes (corners in either order; 0 for an empty box)."""
    lo_a, hi_a = np.minimum(a[:2], a[2:]), np.maximum(a[:2], a[2:])
    lo_b, hi_b = np.minimum(b[:2], b[2:]), np.maximum(b[:2], b[2:])
    area_a, area_b = np.prod(hi_a - lo_a), np.prod(hi_b - lo_b)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = np.prod(np.maximum(np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b), 0.0))
    return float(inter / (area_a + area_b - inter))


class CombinedNonMaxSuppression(_Op):
    """``CombinedNonMaxSuppression(pad_per_class=False, clip_boxes=True)(boxes, scores,
    max_output_size_per_class, max_total_size, iou_threshold, score_threshold)``: greedy NMS per batch
    entry and class (boxes (B, N, q, 4) shared by every class when q is 1, scores (B, N, C)), the
    survivors of all classes best first, at most ``max_total_size`` (``pad_per_class``: at most
    max_output_size_per_class * C), padded with zeros; boxes clipped to [0, 1] (``clip_boxes``); their
    scores, classes (float) and the int32 count. The output shapes come from the count operands, so it is
    computed from host data (PyNative, or constants)."""

    def __init__(self, pad_per_class: bool = False, clip_boxes: bool = True) -> None:
        super().__init__()
        for name, value in (("pad_per_class", pad_per_class), ("clip_boxes", clip_boxes)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'CombinedNonMaxSuppression', '{name}' must be a bool, but got "
                                f"{type(value).__name__}.")
        self.pad_per_class, self.clip_boxes = pad_per_class, clip_boxes

    def __call__(self, boxes: Any, scores: Any, max_output_size_per_class: Any, max_total_size: Any,
                 iou_threshold: Any, score_threshold: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        label = "CombinedNonMaxSuppression"
        box_t, score_t = _tensor(boxes), _tensor(scores)
        if box_t.ndim != 4 or box_t.shape[3] != 4 or score_t.ndim != 3 or score_t.shape[:2] != box_t.shape[:2] \
                or box_t.shape[2] not in (1, score_t.shape[2]):
            raise ValueError(f"For '{label}', boxes must be (B, N, q, 4) with q 1 or the number of classes and "
                             f"scores (B, N, classes), but got {box_t.shape} and {score_t.shape}.")
        per_class = int(_scalar_value(label, "max_output_size_per_class", max_output_size_per_class))
        total = int(_scalar_value(label, "max_total_size", max_total_size))
        if per_class <= 0 or total <= 0:
            raise ValueError(f"For '{label}', max_output_size_per_class and max_total_size must be positive, "
                             f"but got {per_class} and {total}.")
        iou = _scalar_value(label, "iou_threshold", iou_threshold)
        if not 0 <= iou <= 1:
            raise ValueError(f"For '{label}', iou_threshold must be in [0, 1], but got {iou}.")
        floor = _scalar_value(label, "score_threshold", score_threshold)
        box_data, score_data = _host_values(label, box_t), _host_values(label, score_t)
        batch, _, q, classes = *box_t.shape[:3], score_t.shape[2]
        width = min(total, per_class * classes) if self.pad_per_class else total
        out_boxes = np.zeros((batch, width, 4), np.float32)
        out_scores, out_classes = np.zeros((batch, width), np.float32), np.zeros((batch, width), np.float32)
        valid = np.zeros(batch, np.int32)
        for b in range(batch):
            found = []
            for c in range(classes):
                column = score_data[b, :, c]
                kept: list[int] = []
                for i in np.argsort(-column, kind="stable").tolist():
                    if column[i] <= floor or len(kept) == per_class:
                        break
                    box = box_data[b, i, c if q > 1 else 0]
                    if all(_box_iou(box, box_data[b, j, c if q > 1 else 0]) <= iou for j in kept):
                        kept.append(i)
                found += [(float(column[i]), c, box_data[b, i, c if q > 1 else 0]) for i in kept]
            found.sort(key=lambda item: -item[0])
            found = found[:width]
            valid[b] = len(found)
            for k, (score, c, box) in enumerate(found):
                out_boxes[b, k] = np.clip(box, 0.0, 1.0) if self.clip_boxes else box
                out_scores[b, k], out_classes[b, k] = score, c
        return Tensor(out_boxes), Tensor(out_scores), Tensor(out_classes), Tensor(valid)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.image_ops", name, __all__)
