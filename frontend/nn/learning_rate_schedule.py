"""``mindspore.nn`` learning-rate schedule cells: the learning rate of a step, computed on the device.

A schedule is a Cell whose ``construct(global_step)`` returns the learning rate of that step as a
scalar tensor. Given to an optimizer as ``learning_rate``, it is called on the optimizer's
``global_step`` Parameter inside the training step, so the rate is computed by device ops in the
same graph as the update and nothing is fetched to the host. The formulas are MindSpore's code,
including where it differs from its docstrings: NaturalExpDecayLR decays by ``exp(-rate * step)``
(the step is not divided by ``decay_steps``; with ``is_stair`` it is floored to a multiple of it).
"""
from __future__ import annotations

import math
from typing import Any

from ascendemu.errors import InvalidParamError, InvalidValueError

from .. import ops
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .cell import Cell

__all__ = ["LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR", "CosineDecayLR",
           "PolynomialDecayLR", "WarmUpLR"]


def _float(cls: str, name: str, value: Any, positive: bool = True) -> float:
    if not isinstance(value, float) or (value <= 0 if positive else value < 0):
        want = "> 0" if positive else ">= 0"
        raise InvalidParamError(f"{cls}: {name}={value!r} must be a float {want}")
    return value


def _steps(cls: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParamError(f"{cls}: {name}={value!r} must be an int >= 1")
    if value < 1:
        raise InvalidValueError(f"{cls}: {name}={value!r} must be an int >= 1")
    return value


def _flag(cls: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidParamError(f"{cls}: {name}={value!r} must be a bool")
    return value


class LearningRateSchedule(Cell):
    """Base of the schedules: ``construct(global_step)`` returns the step's learning rate (shape ())."""

    def construct(self, global_step: Tensor) -> Tensor:
        raise InvalidParamError(f"{type(self).__name__} must define construct(global_step) returning the "
                                f"learning rate of that step")


class _DecayLR(LearningRateSchedule):
    """learning_rate, decay_rate, decay_steps, is_stair: the arguments of the three decay schedules."""

    def __init__(self, learning_rate: float, decay_rate: float, decay_steps: int, is_stair: bool = False):
        super().__init__()
        cls = type(self).__name__
        self.learning_rate = _float(cls, "learning_rate", learning_rate)
        self.decay_rate = _float(cls, "decay_rate", decay_rate)
        self.decay_steps = _steps(cls, "decay_steps", decay_steps)
        self.is_stair = _flag(cls, "is_stair", is_stair)

    def _progress(self, global_step: Tensor) -> Tensor:
        """p = step / decay_steps, floored when ``is_stair``."""
        p = ops.cast(global_step, mstype.float32) / self.decay_steps
        return ops.floor(p) if self.is_stair else p


class ExponentialDecayLR(_DecayLR):
    """lr * decay_rate ^ p, p = step / decay_steps (floored when ``is_stair``)."""

    def construct(self, global_step: Tensor) -> Tensor:
        return self.learning_rate * ops.pow(self.decay_rate, self._progress(global_step))


class NaturalExpDecayLR(_DecayLR):
    """lr * e ^ (-decay_rate * step); with ``is_stair`` the step is floor(step / decay_steps) * decay_steps."""

    def construct(self, global_step: Tensor) -> Tensor:
        p = ops.cast(global_step, mstype.float32)
        if self.is_stair:
            p = ops.floor(p / self.decay_steps) * self.decay_steps
        return self.learning_rate * ops.pow(math.e, -self.decay_rate * p)


class InverseDecayLR(_DecayLR):
    """lr / (1 + decay_rate * p), p = step / decay_steps (floored when ``is_stair``)."""

    def construct(self, global_step: Tensor) -> Tensor:
        return self.learning_rate / (1 + self.decay_rate * self._progress(global_step))


class CosineDecayLR(LearningRateSchedule):
    """min_lr + 0.5 (max_lr - min_lr)(1 + cos(pi min(step, decay_steps) / decay_steps))."""

    def __init__(self, min_lr: float, max_lr: float, decay_steps: int):
        super().__init__()
        self.min_lr = _float("CosineDecayLR", "min_lr", min_lr, positive=False)
        self.max_lr = _float("CosineDecayLR", "max_lr", max_lr)
        if min_lr >= max_lr:
            raise InvalidValueError(f"CosineDecayLR: max_lr={max_lr} must be greater than min_lr={min_lr}")
        self.decay_steps = _steps("CosineDecayLR", "decay_steps", decay_steps)
        self.delta = 0.5 * (max_lr - min_lr)

    def construct(self, global_step: Tensor) -> Tensor:
        p = ops.cast(ops.minimum(global_step, self.decay_steps), mstype.float32)
        return self.min_lr + self.delta * (1.0 + ops.cos(math.pi * p / self.decay_steps))


class PolynomialDecayLR(LearningRateSchedule):
    """(lr - end_lr)(1 - step / decay)^power + end_lr; the step is capped at ``decay_steps``, or with
    ``update_decay_steps`` the span grows to the next multiple of it: decay_steps * max(ceil(step /
    decay_steps), 1)."""

    def __init__(self, learning_rate: float, end_learning_rate: float, decay_steps: int, power: float,
                 update_decay_steps: bool = False):
        super().__init__()
        cls = "PolynomialDecayLR"
        self.start_learning_rate = _float(cls, "learning_rate", learning_rate)
        self.end_learning_rate = _float(cls, "end_learning_rate", end_learning_rate, positive=False)
        self.decay_steps = _steps(cls, "decay_steps", decay_steps)
        self.power = _float(cls, "power", power)
        self.update_decay_steps = _flag(cls, "update_decay_steps", update_decay_steps)
        self.diff_learning_rate = learning_rate - end_learning_rate

    def construct(self, global_step: Tensor) -> Tensor:
        step = ops.cast(global_step, mstype.float32)
        span: Any = self.decay_steps
        if self.update_decay_steps:
            span = span * ops.maximum(ops.ceil(step / span), 1.0)
        else:
            step = ops.minimum(step, float(span))
        return self.diff_learning_rate * ops.pow(1.0 - step / span, self.power) + self.end_learning_rate


class WarmUpLR(LearningRateSchedule):
    """lr * min(step, warmup_steps) / warmup_steps."""

    def __init__(self, learning_rate: float, warmup_steps: int):
        super().__init__()
        self.learning_rate = _float("WarmUpLR", "learning_rate", learning_rate, positive=False)
        self.warmup_steps = _steps("WarmUpLR", "warmup_steps", warmup_steps)

    def construct(self, global_step: Tensor) -> Tensor:
        done = ops.cast(ops.minimum(global_step, self.warmup_steps), mstype.float32) / self.warmup_steps
        return self.learning_rate * done
