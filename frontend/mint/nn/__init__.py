"""``mindspore.mint.nn``: mint's PyTorch-style Cells and ``functional``.

Three kinds, as in MindSpore 2.10: Cells that are ``mindspore.nn``'s own classes under mint's name (its
table records ``mint.nn.Hardshrink`` as ``nn.HShrink``: the same object, :data:`NN_CLASSES`), mint's
own Cells in ``mint.nn.layer`` (Conv2d, BatchNorm2d, the pads...), and the Cells MindSpore defines in
this module (the losses and a few activations, below), each the mint functional of its name.
"""
from __future__ import annotations

import math
from typing import Any

from ... import nn as _nn
from ...common.tensor import Tensor
from ...nn.cell import Cell
from ...ops import function as _ops
from ...unsupported import unsupported
from . import functional, layer
from . import functional as F
from .layer import *  # noqa: F401,F403

# mint.nn name -> the mindspore.nn class it is (MindSpore's table: the same object under both names); one
# the front end's nn does not serve yet stays missing here and appears once nn serves it
NN_CLASSES = {"ReLU": "ReLU", "Identity": "Identity", "Linear": "Linear", "Hardshrink": "HShrink",
              "Hardsigmoid": "HSigmoid", "Hardswish": "HSwish", "L1Loss": "L1LossExt", "PReLU": "PReLUExt",
              "SoftMarginLoss": "SoftMarginLoss", "AdaptiveMaxPool2d": "AdaptiveMaxPool2d", "GLU": "GLU",
              "LogSoftmax": "LogSoftmaxExt", "Softmax": "SoftmaxExt", "AvgPool1d": "AvgPool1dExt",
              "AvgPool2d": "AvgPool2dExt", "AvgPool3d": "AvgPool3dExt", "Fold": "Fold", "Unfold": "UnfoldExt",
              "Upsample": "UpsampleExt"}


def _nn_class(name: str) -> Any:
    """The nn class ``name`` where the front end's nn serves it (a module of ``nn.layer`` may hold one
    MindSpore exports only from there: ``nn.layer.activation.SoftmaxExt``), else None."""
    from ...nn import layer as _layer
    for module in (_nn, _layer.activation, _layer.basic, _layer.pooling):
        if name in getattr(module, "__all__", ()) or name in vars(module):
            return getattr(module, name)
    return None


_SERVED_NN = {mint: cls for mint, name in NN_CLASSES.items() if (cls := _nn_class(name)) is not None}
globals().update(_SERVED_NN)


class BCEWithLogitsLoss(Cell):
    def __init__(self, weight: Any = None, reduction: str = "mean", pos_weight: Any = None):
        super().__init__()
        self.weight, self.reduction, self.pos_weight = weight, reduction, pos_weight

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction, self.pos_weight)


class BCELoss(Cell):
    def __init__(self, weight: Any = None, reduction: str = "mean"):
        super().__init__()
        self.weight, self.reduction = weight, reduction

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class MSELoss(Cell):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, self.reduction)


class SmoothL1Loss(Cell):
    def __init__(self, reduction: str = "mean", beta: float = 1.0):
        super().__init__()
        self.reduction, self.beta = reduction, beta

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return _ops.smooth_l1_loss(input, target, self.beta, self.reduction)


class KLDivLoss(Cell):
    def __init__(self, reduction: str = "mean", log_target: bool = False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, self.reduction, self.log_target)


class CosineEmbeddingLoss(Cell):
    def __init__(self, margin: float = 0.0, reduction: str = "mean"):
        super().__init__()
        self.margin, self.reduction = margin, reduction

    def construct(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)


class SELU(Cell):
    def construct(self, input: Tensor) -> Tensor:
        return _ops.selu(input)


class Mish(Cell):
    def construct(self, input: Tensor) -> Tensor:
        return _ops.mish(input)


class GELU(Cell):
    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def construct(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)


class Hardtanh(Cell):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def construct(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)


class ReLU6(Cell):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def construct(self, input: Tensor) -> Tensor:
        return F.relu6(input, self.inplace)


class PixelShuffle(Cell):
    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def construct(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)


def _upsampled_size(input: Tensor, size: Any, scale_factor: Any) -> Any:
    """``size``, or (with ``scale_factor``: a number or a pair) floor(H * scale), floor(W * scale)."""
    if size is not None or scale_factor is None:
        return size
    scales = (scale_factor, scale_factor) if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
    return tuple(int(math.floor(n * s)) for n, s in zip(input.shape[-2:], scales))


class UpsamplingNearest2d(Cell):
    """Nearest-neighbour upsampling of (N, C, H, W) to ``size`` or by ``scale_factor``."""

    def __init__(self, size: Any = None, scale_factor: Any = None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor

    def construct(self, input: Tensor) -> Tensor:
        return F.interpolate(input, _upsampled_size(input, self.size, self.scale_factor), None, "nearest")


class UpsamplingBilinear2d(Cell):
    """Bilinear upsampling of (N, C, H, W) with the corners aligned (as MindSpore's)."""

    def __init__(self, size: Any = None, scale_factor: Any = None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor

    def construct(self, input: Tensor) -> Tensor:
        return F.interpolate(input, _upsampled_size(input, self.size, self.scale_factor), None, "bilinear", True)


_OWN = ["BCEWithLogitsLoss", "BCELoss", "MSELoss", "SmoothL1Loss", "KLDivLoss", "CosineEmbeddingLoss", "SELU", "Mish",
        "GELU", "Hardtanh", "ReLU6", "PixelShuffle", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
__all__ = ["functional", "layer", *sorted(_SERVED_NN), *layer.__all__, *_OWN]


def __getattr__(name: str) -> Any:
    raise unsupported("mint.nn", name, __all__)
