"""``mindspore.nn.dynamic_lr``: the learning-rate lists (one value per step), where MindSpore defines them;
an optimizer given such a list indexes it by ``global_step``."""
from __future__ import annotations

import math
from typing import Sequence

from ascendemu.errors import InvalidParamError

__all__ = ["piecewise_constant_lr", "exponential_decay_lr", "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr"]


def piecewise_constant_lr(milestone: Sequence[int], learning_rates: Sequence[float]) -> list[float]:
    """lr[i] = learning_rates[k] for milestone[k-1] <= i < milestone[k]."""
    if len(milestone) != len(learning_rates) or list(milestone) != sorted(milestone):
        raise InvalidParamError("piecewise_constant_lr: milestone must be increasing and as long as learning_rates")
    out, last = [], 0
    for m, lr in zip(milestone, learning_rates):
        out += [float(lr)] * (int(m) - last)
        last = int(m)
    return out


def _steps(total_step: int, step_per_epoch: int, decay_epoch: int) -> None:
    for name, v in (("total_step", total_step), ("step_per_epoch", step_per_epoch), ("decay_epoch", decay_epoch)):
        if not isinstance(v, int) or v <= 0:
            raise InvalidParamError(f"{name}={v!r} must be a positive int")


def exponential_decay_lr(learning_rate: float, decay_rate: float, total_step: int, step_per_epoch: int,
                         decay_epoch: int, is_stair: bool = False) -> list[float]:
    _steps(total_step, step_per_epoch, decay_epoch)
    out = []
    for i in range(total_step):
        p = (i // step_per_epoch) / decay_epoch
        out.append(learning_rate * decay_rate ** (math.floor(p) if is_stair else p))
    return out


def cosine_decay_lr(min_lr: float, max_lr: float, total_step: int, step_per_epoch: int,
                    decay_epoch: int) -> list[float]:
    _steps(total_step, step_per_epoch, decay_epoch)
    out = []
    for i in range(total_step):
        epoch = min(i // step_per_epoch, decay_epoch)
        out.append(min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * epoch / decay_epoch)))
    return out


def polynomial_decay_lr(learning_rate: float, end_learning_rate: float, total_step: int, step_per_epoch: int,
                        decay_epoch: int, power: float, update_decay_epoch: bool = False) -> list[float]:
    _steps(total_step, step_per_epoch, decay_epoch)
    out = []
    for i in range(total_step):
        epoch = i // step_per_epoch
        span = decay_epoch
        if update_decay_epoch:
            span = decay_epoch * max(math.ceil(epoch / decay_epoch), 1)
        else:
            epoch = min(epoch, decay_epoch)
        out.append((learning_rate - end_learning_rate) * (1 - epoch / span) ** power + end_learning_rate)
    return out


def warmup_lr(learning_rate: float, total_step: int, step_per_epoch: int, warmup_epoch: int) -> list[float]:
    _steps(total_step, step_per_epoch, warmup_epoch)
    return [learning_rate * min(i // step_per_epoch, warmup_epoch) / warmup_epoch for i in range(total_step)]
