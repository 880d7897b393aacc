"""``mindspore.nn.optim.momentum``: ``Momentum``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...common.parameter import Parameter
from .optimizer import Optimizer, _number

__all__ = ["Momentum"]


class Momentum(Optimizer):
    """v = v * momentum + g; p -= lr * v (nesterov: p -= lr * g + lr * momentum * v)."""

    def __init__(self, params: Any, learning_rate: Any, momentum: float, weight_decay: float = 0.0,
                 loss_scale: float = 1.0, use_nesterov: bool = False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = Parameter(np.float32(_number("momentum", momentum)), name="momentum", requires_grad=False)
        self.moments = self.parameters.clone(prefix="moments", init="zeros")
        self.use_nesterov = bool(use_nesterov)

    def construct(self, gradients: Sequence[Any]) -> Any:
        in_kernel = self.loss_scale == 1.0
        grads = self.prepare_gradients(gradients, in_kernel)
        lr = self._step_lr()
        for p, m, g, wd in zip(self.parameters, self.moments, grads, self._weight_decay):
            self._update("ApplyMomentum", (p, m), [p, m, lr, g, self.momentum],
                         {"use_nesterov": self.use_nesterov, "weight_decay": wd if in_kernel else 0.0})
        return True
