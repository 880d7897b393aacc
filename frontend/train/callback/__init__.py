"""``mindspore.train.callback``: the callbacks ``Model.train`` / ``eval`` / ``fit`` call.

MindSpore's other callbacks (SummaryCollector, SummaryLandscape, ReduceLROnPlateau, OnRequestExit,
BackupAndRestore) import, so a script that imports one and never uses it runs, and raise
UnsupportedOpError naming what is supported when constructed; other names raise it at once.
"""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from ._callback import Callback, CallbackManager, InternalCallbackParam, RunContext
from ._checkpoint import CheckpointConfig, ModelCheckpoint
from ._early_stop import EarlyStopping
from ._history import History
from ._lambda_callback import LambdaCallback
from ._loss_monitor import LossMonitor
from ._lr_scheduler_callback import LearningRateScheduler
from ._time_monitor import TimeMonitor

__all__ = ["Callback", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "CheckpointConfig", "RunContext",
           "LearningRateScheduler", "History", "LambdaCallback", "EarlyStopping"]

# MindSpore's private names, which Model uses as the zoo sometimes does
_CallbackManager = CallbackManager
_InternalCallbackParam = InternalCallbackParam
NOT_BUILT = ("SummaryCollector", "SummaryLandscape", "ReduceLROnPlateau", "OnRequestExit", "BackupAndRestore")


def _not_built(name: str) -> type:
    def __init__(self: Callback, *args: Any, **kwargs: Any) -> None:
        raise unsupported("train.callback", name, __all__)
    return type(name, (Callback,), {"__init__": __init__, "__doc__": f"MindSpore's {name}: not supported here.",
                                    "__module__": __name__})


SummaryCollector, SummaryLandscape, ReduceLROnPlateau, OnRequestExit, BackupAndRestore = map(_not_built, NOT_BUILT)


def __getattr__(name: str) -> Any:
    raise unsupported("train.callback", name, __all__)
