"""``mindspore.nn``: Cell, layers, losses, optimizers and training wrappers of the supported subset.

Module layout follows MindSpore's: ``nn.cell`` (Cell), the ``nn.layer`` package (one file per MindSpore
layer file), ``nn.loss`` (``loss``), ``nn.optim`` (``optimizer``, ``momentum``, ``sgd``, ``adam``),
``nn.wrap`` (``cell_wrapper``, ``loss_scale``, ``grad_reducer``), ``nn.learning_rate_schedule`` and
``nn.dynamic_lr``; each name lives in the file MindSpore defines it in and is re-exported here.
"""
from __future__ import annotations

import importlib
from typing import Any

from ..unsupported import unsupported
from . import cell, dynamic_lr, layer, learning_rate_schedule, loss, optim, wrap
from .cell import Cell, ParameterTuple
from .dynamic_lr import cosine_decay_lr, exponential_decay_lr, piecewise_constant_lr, polynomial_decay_lr, warmup_lr
from .layer import (LSTM, AvgPool2d, BatchNorm1d, BatchNorm2d, CellList, CentralCrop, ClipByNorm, Conv1d, Conv2d,
                    Conv2dTranspose, Dense, Dropout, Embedding, Flatten, GELU, HSigmoid, HSwish, Identity, LayerNorm,
                    LeakyReLU, LogSoftmax, MaxPool2d, OneHot, Pad, ReLU, ReLU6, ResizeBilinear, SequentialCell, Sigmoid,
                    Softmax, Tanh, get_activation)
from .learning_rate_schedule import (CosineDecayLR, ExponentialDecayLR, InverseDecayLR, LearningRateSchedule,
                                     NaturalExpDecayLR, PolynomialDecayLR, WarmUpLR)
from .loss import (BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, LossBase, MSELoss, NLLLoss, SmoothL1Loss,
                   SoftmaxCrossEntropyWithLogits)
from .optim import SGD, Adam, AdamWeightDecay, Momentum, Optimizer
from .wrap import (DistributedGradReducer, DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, ForwardValueAndGrad,
                   TrainOneStepCell, TrainOneStepWithLossScaleCell, WithEvalCell, WithGradCell, WithLossCell)

SUPPORTED = tuple(name for name in dir() if not name.startswith("_") and name not in
                  ("annotations", "Any", "importlib", "unsupported", "cell", "dynamic_lr", "layer", "loss",
                   "optim", "wrap", "learning_rate_schedule"))
__all__ = list(SUPPORTED)


def __getattr__(name: str) -> Any:
    """``nn.metrics`` and the metric names (``nn.Accuracy``), imported on first use; else
    UnsupportedOpError."""
    if name.startswith("__"):
        raise unsupported("nn", name, SUPPORTED)
    metrics = importlib.import_module(f"{__name__}.metrics")
    if name == "metrics":
        return metrics
    if name in metrics.__all__:
        return getattr(metrics, name)
    raise unsupported("nn", name, SUPPORTED + tuple(metrics.__all__))
