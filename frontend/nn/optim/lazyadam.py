"""``mindspore.nn.optim.lazyadam``: ``LazyAdam``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any

from .adam import Adam
from .optimizer import Optimizer  # noqa: F401  (MindSpore's nn.optim.lazyadam has it)

__all__ = ["LazyAdam"]


class LazyAdam(Adam):
    """Adam that updates only the rows a sparse gradient touches. Gradients here are dense (the front
    end has no RowTensor), and for a dense gradient MindSpore's LazyAdam is Adam (ApplyAdam, the same
    state: ``beta1_power``, ``beta2_power``, ``moment1``, ``moment2``)."""

    def __init__(self, params: Any, learning_rate: Any = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, use_locking: bool = False, use_nesterov: bool = False, weight_decay: float = 0.0,
                 loss_scale: float = 1.0):
        super().__init__(params, learning_rate, beta1, beta2, eps, use_locking, use_nesterov, weight_decay,
                         loss_scale)
