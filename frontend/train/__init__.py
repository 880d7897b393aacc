"""``mindspore.train``: ``Model``, callbacks (``mindspore.train.callback``), metrics
(``mindspore.train.metrics``), checkpoints (``mindspore.train.serialization``) and loss scale
managers, ONNX export, ``train_thor.ConvertModelUtils``, under the names MindSpore 2.x gives them. Other names raise UnsupportedOpError.
"""
from __future__ import annotations

from typing import Any

from .. import amp
from ..amp import build_train_network
from ..unsupported import unsupported
from . import callback, loss_scale_manager, metrics, serialization, train_thor
from .callback import (BackupAndRestore, Callback, CheckpointConfig, EarlyStopping, History, LambdaCallback,
                       LearningRateScheduler, LossMonitor, ModelCheckpoint, OnRequestExit, ReduceLROnPlateau,
                       RunContext, SummaryCollector, SummaryLandscape, TimeMonitor)
from .loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
from .metrics import (F1, MAE, MSE, Accuracy, Fbeta, Loss, Metric, Precision, Recall, Top1CategoricalAccuracy,
                      Top5CategoricalAccuracy, TopKCategoricalAccuracy, get_metric_fn, get_metrics, names,
                      rearrange_inputs)
from .model import Model
from .serialization import export, load, load_checkpoint, load_param_into_net, save_checkpoint
from .train_thor import ConvertModelUtils
from . import summary
from .summary import SummaryRecord

# MindSpore's list (``mindspore`` itself star-imports it); the submodules are attributes besides
__all__ = ["Model", "build_train_network", "save_checkpoint", "load_checkpoint", "load_param_into_net", "export", "load",
           "LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager", "ConvertModelUtils", "SummaryRecord",
           *callback.__all__, *metrics.__all__]
SUBMODULES = ("amp", "serialization", "callback", "metrics", "loss_scale_manager", "train_thor", "summary")


def __getattr__(name: str) -> Any:
    raise unsupported("train", name, __all__ + list(SUBMODULES))
