"""The callback protocol of ``Model``: ``Callback``, ``RunContext``, the callback parameters and the
manager that calls a list of callbacks in order.

A callback overrides the ``on_train_*`` / ``on_eval_*`` hooks; the 1.x names (``begin``,
``epoch_begin``, ``step_begin``, ``step_end``, ``epoch_end``, ``end``) still work, because each new
hook calls its old name by default, for training and evaluation alike (as in MindSpore).
"""
from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ...common.tensor import Tensor

__all__ = ["Callback", "RunContext", "CallbackManager", "InternalCallbackParam", "handle_loss"]


class Callback:
    """Base of every callback: each hook does nothing but call its 1.x name. Callbacks are context
    managers ``Model`` enters for the run (``__enter__`` returns the callback to use)."""

    def __enter__(self) -> "Callback":
        return self

    def __exit__(self, *err: Any) -> None:
        """Release resources here if any."""

    # the 1.x names, shared by training and evaluation
    def begin(self, run_context: "RunContext") -> None:
        """Once before the run."""

    def epoch_begin(self, run_context: "RunContext") -> None:
        """Before each epoch."""

    def epoch_end(self, run_context: "RunContext") -> None:
        """After each epoch."""

    def step_begin(self, run_context: "RunContext") -> None:
        """Before each step (each sink in dataset sink mode)."""

    def step_end(self, run_context: "RunContext") -> None:
        """After each step (each sink in dataset sink mode)."""

    def end(self, run_context: "RunContext") -> None:
        """Once after the run."""

    def on_train_begin(self, run_context: "RunContext") -> None:
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context: "RunContext") -> None:
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context: "RunContext") -> None:
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context: "RunContext") -> None:
        self.step_begin(run_context)

    def on_train_step_end(self, run_context: "RunContext") -> None:
        self.step_end(run_context)

    def on_train_end(self, run_context: "RunContext") -> None:
        self.end(run_context)

    def on_eval_begin(self, run_context: "RunContext") -> None:
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context: "RunContext") -> None:
        self.epoch_begin(run_context)

    def on_eval_epoch_end(self, run_context: "RunContext") -> None:
        self.epoch_end(run_context)

    def on_eval_step_begin(self, run_context: "RunContext") -> None:
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context: "RunContext") -> None:
        self.step_end(run_context)

    def on_eval_end(self, run_context: "RunContext") -> None:
        self.end(run_context)


HOOKS = ("begin", "epoch_begin", "epoch_end", "step_begin", "step_end", "end",
         "on_train_begin", "on_train_epoch_begin", "on_train_epoch_end", "on_train_step_begin",
         "on_train_step_end", "on_train_end", "on_eval_begin", "on_eval_epoch_begin", "on_eval_epoch_end",
         "on_eval_step_begin", "on_eval_step_end", "on_eval_end")


class CallbackManager(Callback):
    """Calls every hook of its callbacks in list order; entering it enters each callback."""

    def __init__(self, callbacks: Any):
        if callbacks is None:
            callbacks = []
        elif isinstance(callbacks, Callback):
            callbacks = [callbacks]
        elif not isinstance(callbacks, list):
            raise InvalidParamError(f"callbacks must be a Callback or a list of Callbacks, got "
                                    f"{type(callbacks).__name__}")
        for cb in callbacks:
            if not isinstance(cb, Callback):
                raise InvalidParamError(f"callbacks: {type(cb).__name__} is not a Callback; derive it from "
                                        "mindspore.train.Callback")
        self._callbacks: list[Callback] = list(callbacks)
        self._stack: ExitStack | None = None

    def __enter__(self) -> "CallbackManager":
        if self._stack is None:
            self._stack = ExitStack().__enter__()
            entered = [self._stack.enter_context(cb) for cb in self._callbacks]
            self._callbacks = [e if isinstance(e, Callback) else cb for e, cb in zip(entered, self._callbacks)]
        return self

    def __exit__(self, *err: Any) -> Any:
        return self._stack.__exit__(*err)


def _broadcast(hook: str) -> Any:
    def call(self: CallbackManager, run_context: "RunContext") -> None:
        for cb in self._callbacks:
            getattr(cb, hook)(run_context)
    call.__name__ = hook
    call.__doc__ = f"``{hook}`` of every callback, in order."
    return call


for _hook in HOOKS:
    setattr(CallbackManager, _hook, _broadcast(_hook))
del _hook


class InternalCallbackParam(dict):
    """The callback parameters (``run_context.original_args()``): a dict whose keys read as attributes
    (``cb_params.cur_step_num``)."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"cb_params has no {key!r}; it holds {sorted(self)}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value


class RunContext:
    """What a callback sees of the run: ``original_args()`` (the callback parameters) and a stop
    request that ``Model`` checks (after each step, and after each epoch)."""

    def __init__(self, original_args: dict):
        if not isinstance(original_args, dict):
            raise InvalidParamError(f"RunContext: original_args must be a dict, got {type(original_args).__name__}")
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self) -> dict:
        return self._original_args

    def request_stop(self) -> None:
        self._stop_requested = True

    def get_stop_requested(self) -> bool:
        return self._stop_requested


def handle_loss(loss: Any) -> Any:
    """The loss as LossMonitor, History and EarlyStopping report it: the first element of a tuple
    (a Tensor), else the mean of a Tensor as a Python float."""
    if isinstance(loss, (tuple, list)):
        if isinstance(loss[0], Tensor):
            loss = loss[0]
    elif isinstance(loss, Tensor):
        loss = float(np.mean(loss.asnumpy()))
    return loss
