"""``mindspore.train.callback``: the 1.x module path of the training callbacks.

A view: the callbacks live in ``mindspore.train``; each name here is read from there when first used,
so this module follows whatever ``mindspore.train`` provides.
"""
from __future__ import annotations

from typing import Any

from ..unsupported import unsupported

# MindSpore's mindspore.train.callback names.
CALLBACKS = ("Callback", "RunContext", "CheckpointConfig", "ModelCheckpoint", "LossMonitor", "TimeMonitor",
             "LearningRateScheduler", "EarlyStopping", "ReduceLROnPlateau", "History", "LambdaCallback",
             "SummaryCollector", "SummaryLandscape", "OnRequestExit", "BackupAndRestore")


def __getattr__(name: str) -> Any:
    from .. import train
    available = tuple(n for n in CALLBACKS if n in getattr(train, "__all__", ()))
    if name in available:
        return getattr(train, name)
    raise unsupported("train.callback", name, available)
