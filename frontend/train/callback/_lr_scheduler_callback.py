"""``LearningRateScheduler``: change the optimizer's learning rate from the host after each step."""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ascendemu.errors import InvalidParamError

from ...common.parameter import Parameter
from ._callback import Callback, RunContext

__all__ = ["LearningRateScheduler"]


class LearningRateScheduler(Callback):
    """After each step (each sink in dataset sink mode), ``learning_rate_function(lr, cur_step_num)``
    gives the new rate; when it differs the optimizer's ``learning_rate`` Parameter is set to it, so
    the next step's graph reads it from device memory. The optimizer must have a single scalar rate."""

    def __init__(self, learning_rate_function: Callable[[float, int], float]):
        super().__init__()
        if not callable(learning_rate_function):
            raise InvalidParamError(f"LearningRateScheduler: learning_rate_function must be callable, got "
                                    f"{type(learning_rate_function).__name__}")
        self.learning_rate_function = learning_rate_function

    def step_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        rate = getattr(cb_params.optimizer, "learning_rate", None)
        if not isinstance(rate, Parameter) or rate.shape not in ((), (1,)):
            raise InvalidParamError("LearningRateScheduler: the optimizer's learning_rate must be one number (not a "
                                    "list or a LearningRateSchedule) for the callback to change it")
        lr = float(np.asarray(rate.asnumpy()).reshape(()))
        new_lr = self.learning_rate_function(lr, cb_params.cur_step_num)
        if not math.isclose(lr, new_lr, rel_tol=1e-10):
            rate.set_data(np.full(rate.shape, new_lr, np.float32))
