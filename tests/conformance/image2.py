"""Resampling and patch specs (round 2): crop_and_resize, grid sampling, affine grids, the bicubic, area,
linear-1-D and nearest-V2 resizes, the 3-D upsamplings and the adaptive max pools with argmax.
Inputs are small; grids run a little past [-1, 1] so every padding mode is exercised."""
from __future__ import annotations

import numpy as np

from .core import Py, T, op

F = ("float32", "float16")
IMG = (1, 2, 4, 5)
VOL = (1, 2, 3, 4, 5)
NHWC = (2, 4, 5, 3)
GRID2 = T((1, 3, 3, 2), low=-1.2, high=1.2)
GRID3 = T((1, 2, 3, 3, 3), low=-1.2, high=1.2)
BOXES = T((3, 4), dtype="float32", values=[[0.1, 0.2, 0.8, 0.9], [0.5, -0.2, 1.2, 0.7], [0.3, 0.3, 0.3, 0.6]])
BOX_INDEX = T((3,), dtype="int32", values=[0, 1, 1])


def _prim(name: str, index: int | None = None):
    """``ops.<name>(**kw)(*xs)``, or output ``index`` of it."""
    def run(ms, *xs, **kw):
        out = getattr(ms.ops, name)(**kw)(*xs)
        return out if index is None else out[index]
    return run


def _sized(name: str, size: list[int], dtype: str = "int32"):
    """``ops.<name>(**kw)(x, Tensor(size))``: the size Tensor made inside the call (a constant of the graph;
    the emulator needs a resize's output shape when it captures, as a static-shape compiler does)."""
    def run(ms, x, **kw):
        return getattr(ms.ops, name)(**kw)(x, ms.Tensor(np.array(size, dtype)))
    return run


def _fn(name: str):
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


THETA2 = T((1, 2, 3), values=[[[0.8, 0.5, 0.1], [-0.5, 0.8, 0.2]]])
THETA3 = T((1, 3, 4), values=[[[0.9, 0.1, 0.0, 0.1], [-0.2, 0.8, 0.3, 0.0], [0.1, 0.0, 1.1, -0.2]]])

SPECS = [
    op("mindspore.ops.crop_and_resize", _fn("crop_and_resize"), shapes=[[NHWC, BOXES, BOX_INDEX, Py((3, 4))]],
       kwargs=[{}, {"method": "nearest", "extrapolation_value": 0.5}],
       errors=[([NHWC, BOXES, BOX_INDEX, Py((3, 4))], {"method": "area"}),
               ([NHWC, T((3, 3), dtype="float32"), BOX_INDEX, Py((3, 4))], {})]),
    op("mindspore.ops.CropAndResize", _prim("CropAndResize"), shapes=[[NHWC, BOXES, BOX_INDEX, Py((2, 1))]],
       dtypes=F, kwargs=[{}]),
    op("mindspore.ops.grid_sample", _fn("grid_sample"), shapes=[[IMG, GRID2]], dtypes=F,
       kwargs=[{}, {"padding_mode": "border", "align_corners": True}, {"padding_mode": "reflection"},
               {"mode": "nearest", "padding_mode": "reflection", "align_corners": True}],
       errors=[([IMG, GRID2], {"padding_mode": "edge"})]),
    op("mindspore.ops.GridSampler2D", _prim("GridSampler2D"), shapes=[[IMG, GRID2]],
       kwargs=[{}, {"interpolation_mode": "nearest"}, {"padding_mode": "reflection", "align_corners": True}],
       errors=[([IMG, T((1, 3, 3, 3))], {})]),
    op("mindspore.ops.GridSampler3D", _prim("GridSampler3D"), shapes=[[VOL, GRID3]],
       kwargs=[{}, {"padding_mode": "border"}, {"interpolation_mode": "nearest", "align_corners": True}]),
    op("mindspore.ops.affine_grid", _fn("affine_grid"), shapes=[[THETA2, Py((1, 2, 3, 4))]], dtypes=F,
       kwargs=[{}, {"align_corners": True}],
       errors=[([THETA2, Py((1, 2, 2, 3, 4))], {})]),
    op("mindspore.ops.AffineGrid", _prim("AffineGrid"), shapes=[[THETA3, Py((1, 1, 2, 3, 4))]],
       kwargs=[{}, {"align_corners": True}]),
    op("mindspore.ops.ResizeBicubic", _prim("ResizeBicubic"), shapes=[[IMG, Py((3, 7))]], dtypes=F,
       kwargs=[{}, {"align_corners": True}, {"half_pixel_centers": True}],
       errors=[([IMG, Py((3, 7))], {"align_corners": True, "half_pixel_centers": True})]),
    op("mindspore.ops.ResizeArea", _sized("ResizeArea", [3, 7]), shapes=[NHWC], dtypes=F,
       kwargs=[{}, {"align_corners": True}], grad=False),
    op("mindspore.ops.ResizeLinear1D", _sized("ResizeLinear1D", [8], "int64"), shapes=[(2, 3, 5)],
       dtypes=F, kwargs=[{}, {"coordinate_transformation_mode": "half_pixel"}]),
    op("mindspore.ops.ResizeNearestNeighborV2", _sized("ResizeNearestNeighborV2", [3, 7]), shapes=[IMG], dtypes=F,
       kwargs=[{}, {"align_corners": True}, {"half_pixel_centers": True}]),
    op("mindspore.ops.UpsampleNearest3D", _prim("UpsampleNearest3D"), shapes=[[VOL, Py((4, 5, 6))]], dtypes=F,
       kwargs=[{}],
       errors=[([(1, 2, 3, 4), Py((4, 5, 6))], {})]),
    op("mindspore.ops.UpsampleTrilinear3D", _prim("UpsampleTrilinear3D"), shapes=[[VOL, Py((4, 5, 6))]],
       dtypes=F, kwargs=[{}, {"align_corners": True}]),
    op("mindspore.ops.AdaptiveMaxPool2D", _prim("AdaptiveMaxPool2D"), shapes=[IMG], dtypes=F,
       kwargs=[{"output_size": (2, 3)}, {"output_size": [4, 2]}], errors=[(IMG, {"output_size": (3, None)}), (IMG, {"output_size": 2})]),
    op("mindspore.ops.AdaptiveMaxPool3D", _sized("AdaptiveMaxPool3D", [2, 2, 3]), shapes=[VOL], dtypes=F,
       kwargs=[{}]),
]

# more sizes and the size as a tuple (served where MindSpore takes one)
SPECS += [
    op("mindspore.ops.ResizeArea", _sized("ResizeArea", [2, 2]), shapes=[NHWC], kwargs=[{}], grad=False),
    op("mindspore.ops.ResizeBicubic", _sized("ResizeBicubic", [3, 7]), shapes=[IMG], kwargs=[{}]),
    op("mindspore.ops.ResizeLinear1D", _prim("ResizeLinear1D"), shapes=[[(2, 3, 5), Py((4,))]], kwargs=[{}]),
]

# keyword-only samples of the 3-D upsamplings' scales (output size floor(in * scale), source 1 / scale)
SPECS += [
    op("mindspore.ops.UpsampleNearest3D", lambda ms, x, **kw: ms.ops.UpsampleNearest3D()(x, None, **kw),
       shapes=[VOL], kwargs=[{"scales": (1.5, 2.0, 1.3)}]),
    op("mindspore.ops.UpsampleTrilinear3D", lambda ms, x, **kw: ms.ops.UpsampleTrilinear3D()(x, None, **kw),
       shapes=[VOL], kwargs=[{"scales": (1.5, 2.0, 1.3)}]),
]

# no MindSpore 2.10 CPU kernel (Ascend only): each spec's oracle is its documented computation with MindSpore
# CPU ops (ops.unfold's windows, a grouped ops.conv2d), differentiable, so MindSpore's CPU gradients are
# recorded; tests/test_image_breadth.py also checks these against numpy references


def _no_cpu(oracle: str, kernel: str) -> str:
    """A spec's note: which oracle answered, and the kernel MindSpore 2.10 CPU lacks."""
    return f"oracle: {oracle} ({kernel} has no CPU kernel in MindSpore 2.10)"


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v[-2:])


def _windows(ms, x, kernel, stride, rate, same, fill):
    """(N, C, kh * kw, oh, ow): NCHW x's windows (TensorFlow's VALID/SAME geometry, the SAME pads filled with
    ``fill``), from ops.unfold."""
    n, c, h, w = x.shape
    pads = []
    for size, k, s, r in zip((h, w), kernel, stride, rate):
        total = max((-(-size // s) - 1) * s + (k - 1) * r + 1 - size, 0) if same else 0
        pads.append((total // 2, total - total // 2))
    if any(p for pair in pads for p in pair):
        x = ms.ops.pad(x, pads[1] + pads[0], value=fill)
    cols = ms.ops.unfold(x, kernel, rate, 0, stride)
    oh = (x.shape[2] - (kernel[0] - 1) * rate[0] - 1) // stride[0] + 1
    ow = (x.shape[3] - (kernel[1] - 1) * rate[1] - 1) // stride[1] + 1
    return cols.reshape(n, c, kernel[0] * kernel[1], oh, ow)


def _extract_patches_oracle(ms, x, ksizes, strides, rates, padding):
    """ExtractImagePatches: each output depth is (kernel row, kernel column, channel), the channel fastest."""
    taps = _windows(ms, x, _pair(ksizes), _pair(strides), _pair(rates), padding.upper() == "SAME", 0.0)
    n, c, k, oh, ow = taps.shape
    return taps.transpose(0, 2, 1, 3, 4).reshape(n, k * c, oh, ow)


def _dilation2d_oracle(ms, x, f, stride, dilation, pad_mode):
    """Dilation2D: the greatest x + filter over each window (SAME pads never win: a very negative fill)."""
    taps = _windows(ms, x, tuple(f.shape[1:]), _pair(stride), _pair(dilation), pad_mode.upper() == "SAME", -1e30)
    return (taps + f.reshape(1, f.shape[0], -1, 1, 1)).max(axis=2)


def _depthwise_oracle(ms, x, w, channel_multiplier, kernel_size):
    """DepthwiseConv2dNative (valid, stride 1): a grouped convolution, output channel c * K + k filtered by
    weight[k, c]."""
    k, c = w.shape[:2]
    return ms.ops.conv2d(x, w.transpose(1, 0, 2, 3).reshape(c * k, 1, *w.shape[2:]), groups=c)


SPECS += [
    op("mindspore.ops.ExtractImagePatches", _prim("ExtractImagePatches"), shapes=[IMG],
       kwargs=[{"ksizes": (1, 1, 2, 2), "strides": (1, 1, 1, 2), "rates": (1, 1, 1, 1), "padding": "VALID"}],
       oracle=_extract_patches_oracle, note=_no_cpu("ops.unfold's windows, reordered depth-row-col-channel",
                                                    "ExtractImagePatches")),
    op("mindspore.ops.Dilation2D", _prim("Dilation2D"), shapes=[[IMG, (2, 2, 2)]],
       kwargs=[{"stride": 1, "dilation": 1, "pad_mode": "SAME"}],
       oracle=_dilation2d_oracle, note=_no_cpu("the max of ops.unfold's windows plus the filter", "Dilation2D")),
    op("mindspore.ops.DepthwiseConv2dNative", _prim("DepthwiseConv2dNative"), shapes=[[IMG, (1, 2, 3, 3)]],
       kwargs=[{"channel_multiplier": 1, "kernel_size": 3}],
       oracle=_depthwise_oracle, note=_no_cpu("ops.conv2d with groups = channels", "DepthwiseConv2dNative")),
]

# mint's path of the same function
SPECS += [
    op("mindspore.mint.nn.functional.grid_sample", lambda ms, x, g, **kw: ms.mint.nn.functional.grid_sample(x, g, **kw),
       shapes=[[IMG, GRID2]], kwargs=[{"align_corners": True}, {"mode": "nearest", "padding_mode": "border"}]),
]
