"""Specs for names served by reaching another family's op under a second name (``Tensor.value``, mint's
functional routes to the pooling ops), so each served name has MindSpore's answer."""
from __future__ import annotations

from .core import op
from .mint import _mint

IMG = (1, 2, 4, 4)


def _unpool2d(ms, x, **kw):
    """mint's max_unpool2d of mint's max_pool2d's own (values, indices), so the indices are MindSpore's."""
    y, idx = ms.mint.nn.functional.max_pool2d(x, 2, return_indices=True)
    return ms.mint.nn.functional.max_unpool2d(y, idx, 2, **kw)


def _unpool2d_oracle(ms, x, **kw):
    """The same through ops.max_pool2d and ops.max_unpool2d (the same parameters, the same per-plane flat
    indices), which MindSpore 2.10 CPU runs."""
    y, idx = ms.ops.max_pool2d(x, 2, return_indices=True)
    return ms.ops.max_unpool2d(y, idx, 2, **kw)


def _no_cpu(oracle: str, kernel: str) -> str:
    """A spec's note: which oracle answered, and the kernel MindSpore 2.10 CPU lacks."""
    return f"oracle: {oracle} ({kernel} has no CPU kernel in MindSpore 2.10)"


UPSAMPLE_NOTE = ("mode 'nearest': mint's own; mode 'bilinear': "
                 + _no_cpu("ops.interpolate (ResizeBilinearV2)", "UpsampleBilinear2D"))
SPECS = [
    op("mindspore.Tensor.value", lambda ms, x: x.value(), shapes=[(2, 3)], dtypes=("float32", "int32")),
    op("mindspore.mint.nn.functional.max_pool2d", _mint("nn.functional.max_pool2d"), shapes=[IMG],
       kwargs=[{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1}],
       oracle=lambda ms, x, **kw: ms.ops.max_pool2d(x, **kw), note=_no_cpu("ops.max_pool2d", "FuncMaxPool2D")),
    op("mindspore.mint.nn.functional.max_unpool2d", _unpool2d, shapes=[IMG], kwargs=[{}], oracle=_unpool2d_oracle,
       note=_no_cpu("ops.max_unpool2d of ops.max_pool2d's (values, indices)", "mint's FuncMaxPool2D")),
    op("mindspore.mint.nn.functional.upsample", _mint("nn.functional.upsample"), shapes=[(1, 2, 3, 3)],
       kwargs=[{"size": (6, 6)}], note=UPSAMPLE_NOTE),
    op("mindspore.mint.nn.functional.upsample", _mint("nn.functional.upsample"), shapes=[(1, 2, 3, 3)],
       kwargs=[{"size": (4, 5), "mode": "bilinear", "align_corners": True}],
       oracle=lambda ms, x, **kw: ms.ops.interpolate(x, **kw), note=UPSAMPLE_NOTE),
]
