"""``mindspore.nn.optim.rmsprop``: ``RMSProp``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

from .optimizer import Optimizer, _number

__all__ = ["RMSProp"]


class RMSProp(Optimizer):
    """ApplyRMSProp (``centered``: ApplyCenteredRMSProp) per parameter: ``mean_square`` starts at ones,
    ``moment`` (and ``mean_grad``) at zeros, as in MindSpore."""

    def __init__(self, params: Any, learning_rate: Any = 0.1, decay: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-10, use_locking: bool = False, centered: bool = False, loss_scale: float = 1.0,
                 weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.decay, self.momentum = _number("decay", decay), _number("momentum", momentum)
        self.epsilon = _number("epsilon", epsilon, 1e-38)
        self.use_locking, self.centered = bool(use_locking), bool(centered)
        if self.centered:
            self.mg = self.parameters.clone(prefix="mean_grad", init="zeros")
        self.ms = self.parameters.clone(prefix="mean_square", init="ones")
        self.moment = self.parameters.clone(prefix="moment", init="zeros")

    def construct(self, gradients: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(gradients, False)
        lr = self._step_lr()
        decay, momentum, eps = self._scalar(self.decay), self._scalar(self.momentum), self._scalar(self.epsilon)
        for i, (p, ms, mom, g) in enumerate(zip(self.parameters, self.ms, self.moment, grads)):
            if self.centered:
                mg = self.mg[i]
                self._update("ApplyCenteredRMSProp", (p, mg, ms, mom), [p, mg, ms, mom, g, lr, decay, momentum, eps])
            else:
                self._update("ApplyRMSProp", (p, ms, mom), [p, ms, mom, lr, g, decay, momentum, eps])
        return True
