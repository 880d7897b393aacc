"""``mindspore.ops`` neural-network specs: softmaxes, activations with attributes, conv/pool, norms,
resizing, dropout (at rates whose output is deterministic)."""
from __future__ import annotations

from .core import T, op

F = ("float32", "float16")


def _f(name: str):
    if name[0].isupper():
        return lambda ms, *xs, **kw: getattr(ms.ops, name)(**kw)(*xs)
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


IMG = (2, 3, 5, 5)
SPECS = [
    op("mindspore.ops.softmax", _f("softmax"), shapes=[(2, 5), (2, 3, 4)], dtypes=F, kwargs=[{}, {"axis": 0}]),
    op("mindspore.ops.Softmax", _f("Softmax"), shapes=[(2, 5), (3,)], dtypes=F, kwargs=[{}, {"axis": 0}]),
    op("mindspore.ops.log_softmax", _f("log_softmax"), shapes=[(2, 5)], dtypes=F, kwargs=[{}, {"axis": 0}]),
    op("mindspore.ops.LogSoftmax", _f("LogSoftmax"), shapes=[(2, 5), (2, 3, 4)], dtypes=F, kwargs=[{}, {"axis": 1}]),
    op("mindspore.ops.leaky_relu", _f("leaky_relu"), shapes=[(2, 5)], dtypes=F, kwargs=[{}, {"alpha": 0.01}]),
    op("mindspore.ops.bias_add", _f("bias_add"), shapes=[[(2, 3, 4), (3,)], [(2, 3), (3,)]], dtypes=F),
    op("mindspore.ops.BiasAdd", _f("BiasAdd"), shapes=[[(2, 3, 2, 2), (3,)]], dtypes=F,
       errors=[([(2, 3), (4,)], {})]),
    op("mindspore.ops.conv2d", _f("conv2d"), shapes=[[IMG, (4, 3, 3, 3)]],
       kwargs=[{}, {"pad_mode": "same"}, {"pad_mode": "pad", "padding": 1, "stride": 2}]) ,
    op("mindspore.ops.conv2d", _f("conv2d"), shapes=[[IMG, (6, 1, 3, 3), (6,)]], kwargs=[{"groups": 3, "dilation": 2}]),
    op("mindspore.ops.Conv2D", lambda ms, x, w, **kw: ms.ops.Conv2D(**kw)(x, w), shapes=[[IMG, (4, 3, 3, 3)]],
       dtypes=F, kwargs=[{"out_channel": 4, "kernel_size": 3}, {"out_channel": 4, "kernel_size": 3, "pad_mode": "same", "stride": 2},
                          {"out_channel": 4, "kernel_size": 3, "pad_mode": "pad", "pad": 1}]),
    op("mindspore.ops.Conv2DTranspose", lambda ms, x, w, shape, **kw: ms.ops.Conv2DTranspose(**kw)(x, w, shape),
       shapes=[[(2, 4, 3, 3), (4, 3, 3, 3)]], kwargs=[{"out_channel": 4, "kernel_size": 3, "shape": (2, 3, 5, 5)},
                                                       {"out_channel": 4, "kernel_size": 3, "pad_mode": "same", "shape": (2, 3, 3, 3)}]),
    op("mindspore.ops.Conv2DBackpropInput", lambda ms, x, w, shape, **kw: ms.ops.Conv2DBackpropInput(**kw)(x, w, shape),
       shapes=[[(2, 4, 3, 3), (4, 3, 3, 3)]], kwargs=[{"out_channel": 4, "kernel_size": 3, "shape": (2, 3, 5, 5)}]),
    op("mindspore.ops.MaxPool", _f("MaxPool"), shapes=[IMG], dtypes=F,
       kwargs=[{"kernel_size": 2, "strides": 2}, {"kernel_size": 3, "strides": 1, "pad_mode": "same"}]),
    op("mindspore.ops.AvgPool", _f("AvgPool"), shapes=[IMG], dtypes=F,
       kwargs=[{"kernel_size": 2, "strides": 2}, {"kernel_size": 3, "strides": 2, "pad_mode": "same"}]),
    op("mindspore.ops.LayerNorm", lambda ms, x, g, b, **kw: ms.ops.LayerNorm(**kw)(x, g, b),
       shapes=[[(2, 3, 4), (3, 4), (3, 4)]], kwargs=[{}]),
    op("mindspore.ops.LayerNorm", lambda ms, x, g, b, **kw: ms.ops.LayerNorm(**kw)(x, g, b),
       shapes=[[(2, 3, 4), (4,), (4,)]], kwargs=[{"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": 1e-5}]),
    op("mindspore.ops.BatchNorm", lambda ms, x, s, b, m, v, **kw: ms.ops.BatchNorm(**kw)(x, s, b, m, v)[0],
       shapes=[[(2, 3, 2, 2), (3,), (3,), (3,), T((3,), low=0.5, high=1.5)]], kwargs=[{}, {"is_training": True}]),
    op("mindspore.ops.ResizeNearestNeighbor", lambda ms, x, **kw: ms.ops.ResizeNearestNeighbor(**kw)(x),
       shapes=[(1, 2, 3, 3)], dtypes=F, kwargs=[{"size": (6, 6)}, {"size": (2, 5)}, {"size": (5, 5), "align_corners": True}]),
    op("mindspore.ops.ResizeBilinearV2", lambda ms, x, size, **kw: ms.ops.ResizeBilinearV2(**kw)(x, size),
       shapes=[(1, 2, 3, 3)], kwargs=[{"size": (6, 6)}, {"size": (5, 4), "align_corners": True},
                                      {"size": (4, 4), "half_pixel_centers": True}]),
    op("mindspore.ops.interpolate", _f("interpolate"), shapes=[(1, 2, 3, 3)],
       kwargs=[{"size": (6, 6)}, {"scale_factor": (2.0, 2.0), "recompute_scale_factor": True},
               {"size": (5, 4), "mode": "bilinear", "align_corners": True}, {"size": (4, 4), "mode": "bilinear"}]),
    # dropout at rates whose output MindSpore fixes (no mask to match): evaluation, p=0
    op("mindspore.ops.dropout", _f("dropout"), shapes=[(2, 5)], kwargs=[{"training": False}, {"p": 0.0}]),
    op("mindspore.ops.Dropout", lambda ms, x, **kw: ms.ops.Dropout(**kw)(x)[0], shapes=[(2, 5)], kwargs=[{"keep_prob": 1.0}]),
]
