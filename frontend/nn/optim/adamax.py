"""``mindspore.nn.optim.adamax``: ``AdaMax``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ... import ops
from ...common.parameter import Parameter
from .optimizer import Optimizer, _number, _open_unit

__all__ = ["AdaMax"]


class AdaMax(Optimizer):
    """ApplyAdaMax per parameter; ``beta1_power`` (state, shape (1,)) is multiplied by beta1 before
    each step, so the first step's bias correction is 1 / (1 - beta1)."""

    def __init__(self, params: Any, learning_rate: Any = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-08, weight_decay: float = 0.0, loss_scale: float = 1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1, self.beta2 = _open_unit("beta1", beta1), _open_unit("beta2", beta2)
        self.eps = _number("eps", eps, 1e-38)
        self.beta1_power = Parameter(np.ones((1,), np.float32), name="beta1_power", requires_grad=False)
        self.moment1 = self.parameters.clone(prefix="moment1", init="zeros")
        self.moment2 = self.parameters.clone(prefix="moment2", init="zeros")

    def construct(self, gradients: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(gradients, False)
        lr = self._step_lr()
        b1p = ops.assign(self.beta1_power, self.beta1_power * self.beta1)
        b1, b2, eps = self._scalar(self.beta1), self._scalar(self.beta2), self._scalar(self.eps)
        for p, m, v, g in zip(self.parameters, self.moment1, self.moment2, grads):
            self._update("ApplyAdaMax", (p, m, v), [p, m, v, b1p, lr, b1, b2, eps, g])
        return True
