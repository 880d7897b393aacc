"""``LambdaCallback``: a callback made of functions, one per hook."""
from __future__ import annotations

from typing import Callable

from ._callback import Callback, RunContext

__all__ = ["LambdaCallback"]

Hook = Callable[[RunContext], None] | None


def _noop(run_context: RunContext) -> None:
    """A hook not given."""


class LambdaCallback(Callback):
    """Each ``on_*`` argument, when given, is called with the run context at that point."""

    def __init__(self, on_train_epoch_begin: Hook = None, on_train_epoch_end: Hook = None,
                 on_train_step_begin: Hook = None, on_train_step_end: Hook = None, on_train_begin: Hook = None,
                 on_train_end: Hook = None, on_eval_epoch_begin: Hook = None, on_eval_epoch_end: Hook = None,
                 on_eval_step_begin: Hook = None, on_eval_step_end: Hook = None, on_eval_begin: Hook = None,
                 on_eval_end: Hook = None):
        super().__init__()
        self.on_train_epoch_begin = on_train_epoch_begin or _noop
        self.on_train_epoch_end = on_train_epoch_end or _noop
        self.on_train_step_begin = on_train_step_begin or _noop
        self.on_train_step_end = on_train_step_end or _noop
        self.on_train_begin = on_train_begin or _noop
        self.on_train_end = on_train_end or _noop
        self.on_eval_epoch_begin = on_eval_epoch_begin or _noop
        self.on_eval_epoch_end = on_eval_epoch_end or _noop
        self.on_eval_step_begin = on_eval_step_begin or _noop
        self.on_eval_step_end = on_eval_step_end or _noop
        self.on_eval_begin = on_eval_begin or _noop
        self.on_eval_end = on_eval_end or _noop
