"""``mindspore.nn.optim.sgd``: ``SGD``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidValueError

from ...common.parameter import Parameter
from .optimizer import Optimizer, _number

__all__ = ["SGD"]


class SGD(Optimizer):
    """MindSpore's SGD: the first step takes v = g; later v = momentum * v + (1 - dampening) * g."""

    def __init__(self, params: Any, learning_rate: Any = 0.1, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, loss_scale: float = 1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise InvalidValueError("SGD: nesterov needs momentum > 0 and dampening = 0")
        self.momentum = Parameter(np.float32(_number("momentum", momentum)), name="momentum", requires_grad=False)
        self.dampening, self.nesterov = _number("dampening", dampening), bool(nesterov)
        self.accum = self.parameters.clone(prefix="accum", init="zeros")
        self.stat = self.parameters.clone(prefix="stat", init="ones")

    def construct(self, gradients: Sequence[Any]) -> Any:
        in_kernel = self.loss_scale == 1.0
        grads = self.prepare_gradients(gradients, in_kernel)
        lr = self._step_lr()
        for p, a, s, g, wd in zip(self.parameters, self.accum, self.stat, grads, self._weight_decay):
            self._update("SGD", (p, a, s), [p, a, s, lr, g, self.momentum],
                         {"dampening": self.dampening, "nesterov": self.nesterov,
                          "weight_decay": wd if in_kernel else 0.0})
        return True
