"""Pooling and unpooling specs (round 2): the 3-D pools, the argmax pools, LP pools and max unpooling.
Inputs are small; a max pool's float inputs are distinct enough that no window holds a tie."""
from __future__ import annotations

from .core import T, cell, op

F = ("float32", "float16")
VOL = (1, 2, 4, 5, 5)
IMG = (1, 2, 5, 5)


def _prim(name: str, index: int | None = None):
    """``ops.<name>(**kw)(*xs)``, or output ``index`` of it."""
    def run(ms, *xs, **kw):
        out = getattr(ms.ops, name)(**kw)(*xs)
        return out if index is None else out[index]
    return run


def _fn(name: str):
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


def _nn(name: str):
    return lambda ms, **kw: getattr(ms.nn, name)(**kw)


def _unpool2d(ms, x, **kw):
    """max_unpool2d of max_pool2d's own (values, indices), so the indices are MindSpore's own."""
    y, idx = ms.ops.max_pool2d(x, 2, return_indices=True)
    return ms.ops.max_unpool2d(y, idx, 2, **kw)


def _unpool3d(ms, x, **kw):
    y, idx = ms.ops.MaxPool3DWithArgmax(ksize=2, strides=2, pads=0)(x)
    return ms.ops.MaxUnpool3D(ksize=2, strides=2, **kw)(y, idx)


SPECS = [
    op("mindspore.ops.MaxPool3D", _prim("MaxPool3D"), shapes=[VOL], dtypes=F,
       kwargs=[{"kernel_size": 2, "strides": 1}, {"kernel_size": 2, "strides": 2, "pad_mode": "same"},
               {"kernel_size": 3, "strides": 2, "pad_mode": "pad", "pad_list": 1, "ceil_mode": True}],
       errors=[(VOL, {"kernel_size": 2, "pad_list": 1}), ((2, 4, 5, 5), {"kernel_size": 2})]),
    op("mindspore.ops.AvgPool3D", _prim("AvgPool3D"), shapes=[VOL], dtypes=F,
       kwargs=[{"kernel_size": 2, "strides": 1}, {"kernel_size": 2, "strides": 2, "pad_mode": "same"},
               {"kernel_size": 3, "strides": 2, "pad_mode": "pad", "pad": 1},
               {"kernel_size": 3, "strides": 2, "pad_mode": "pad", "pad": 1, "count_include_pad": False},
               {"kernel_size": 3, "strides": 2, "pad_mode": "pad", "pad": 1, "ceil_mode": True},
               {"kernel_size": 2, "strides": 1, "divisor_override": 3}],
       errors=[(VOL, {"kernel_size": 2, "pad": 1})]),
    op("mindspore.ops.MaxPool3DWithArgmax", _prim("MaxPool3DWithArgmax", 0), shapes=[VOL], dtypes=F,
       kwargs=[{"ksize": 2, "strides": 2, "pads": 0}, {"ksize": 3, "strides": 2, "pads": 1}]),
    op("mindspore.ops.MaxPoolWithArgmaxV2", _prim("MaxPoolWithArgmaxV2"), shapes=[IMG], dtypes=F,
       kwargs=[{"kernel_size": 2}, {"kernel_size": 3, "strides": 2, "pads": 1}]),
    op("mindspore.ops.MaxPoolWithArgmax", _prim("MaxPoolWithArgmax"), shapes=[IMG],
       kwargs=[{"kernel_size": 2, "strides": 2}, {"kernel_size": 2, "strides": 2, "pad_mode": "same"}]),
    op("mindspore.ops.max_pool2d", _fn("max_pool2d"), shapes=[IMG], dtypes=F,
       kwargs=[{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1, "return_indices": True},
               {"kernel_size": 2, "ceil_mode": True}]),
    op("mindspore.ops.lp_pool2d", _fn("lp_pool2d"), shapes=[T(IMG, low=0.1, high=2.0)],
       kwargs=[{"norm_type": 2, "kernel_size": 2}, {"norm_type": 1.5, "kernel_size": 3, "stride": 1}],
       errors=[(T(IMG, low=0.1, high=2.0), {"norm_type": 0, "kernel_size": 2})]),
    op("mindspore.ops.lp_pool1d", _fn("lp_pool1d"), shapes=[T((2, 3, 8), low=0.1, high=2.0)],
       kwargs=[{"norm_type": 2, "kernel_size": 2}, {"norm_type": 3, "kernel_size": 3, "stride": 2}]),
    cell("mindspore.nn.LPPool2d", _nn("LPPool2d"), shapes=[T(IMG, low=0.1, high=2.0)],
         kwargs=[{"norm_type": 2, "kernel_size": 2}]),
    cell("mindspore.nn.LPPool1d", _nn("LPPool1d"), shapes=[T((2, 3, 8), low=0.1, high=2.0)],
         kwargs=[{"norm_type": 1, "kernel_size": 3, "stride": 1}]),
    op("mindspore.ops.max_unpool2d", _unpool2d, shapes=[(1, 2, 4, 4)], kwargs=[{}]),
    op("mindspore.ops.MaxUnpool3D", _unpool3d, shapes=[(1, 2, 4, 4, 4)], kwargs=[{}]),
    op("mindspore.ops.upsample", _fn("upsample"), shapes=[(1, 2, 3, 3)],
       kwargs=[{"size": (6, 6)}, {"size": (4, 5), "mode": "bilinear", "align_corners": True}]),
]

# unpooling with fixed, distinct indices (as a max pool gives them without overlapping windows)
IDX2 = T((1, 1, 2, 2), dtype="int64", values=[[[[0, 3], [9, 14]]]])
IDX1 = T((1, 2, 2), dtype="int64", values=[[[1, 2], [0, 3]]])
IDX3 = T((1, 1, 1, 2, 2), dtype="int64", values=[[[[[0, 7], [9, 14]]]]])
SPECS += [
    op("mindspore.ops.MaxUnpool2D", lambda ms, x, i, **kw: ms.ops.MaxUnpool2D(**kw)(x, i),
       shapes=[[(1, 1, 2, 2), IDX2]], kwargs=[{"ksize": 2}, {"ksize": 2, "output_shape": (1, 1, 5, 5)}]),
    op("mindspore.ops.max_unpool1d", _fn("max_unpool1d"), shapes=[[(1, 2, 2), IDX1]], kwargs=[{"kernel_size": 2}]),
    op("mindspore.ops.max_unpool3d", _fn("max_unpool3d"), shapes=[[(1, 1, 1, 2, 2), IDX3]],
       kwargs=[{"kernel_size": (1, 2, 2), "stride": (1, 2, 2)}]),
    cell("mindspore.nn.MaxUnpool2d", _nn("MaxUnpool2d"), shapes=[[(1, 1, 2, 2), IDX2]], kwargs=[{"kernel_size": 2}]),
    cell("mindspore.nn.MaxUnpool1d", _nn("MaxUnpool1d"), shapes=[[(1, 2, 2), IDX1]], kwargs=[{"kernel_size": 2}]),
    cell("mindspore.nn.MaxUnpool3d", _nn("MaxUnpool3d"), shapes=[[(1, 1, 1, 2, 2), IDX3]],
         kwargs=[{"kernel_size": (1, 2, 2)}]),
]
