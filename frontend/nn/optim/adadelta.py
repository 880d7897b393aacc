"""``mindspore.nn.optim.adadelta``: ``Adadelta``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

from ascendemu.errors import InvalidParamError

from .optimizer import Optimizer, _number

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """ApplyAdadelta per parameter; ``accum`` and ``accum_update`` start at zeros."""

    def __init__(self, params: Any, learning_rate: Any = 1.0, rho: float = 0.9, epsilon: float = 1e-6,
                 loss_scale: float = 1.0, weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.rho, self.epsilon = _number("rho", rho), _number("epsilon", epsilon)
        if self.rho > 1.0:
            raise InvalidParamError(f"Adadelta: rho={rho!r} must be in [0, 1]")
        self.accum = self.parameters.clone(prefix="accum", init="zeros")
        self.accum_update = self.parameters.clone(prefix="accum_update", init="zeros")

    def construct(self, grads: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(grads, False)
        lr = self._step_lr()
        rho, eps = self._scalar(self.rho), self._scalar(self.epsilon)
        for p, a, u, g in zip(self.parameters, self.accum, self.accum_update, grads):
            self._update("ApplyAdadelta", (p, a, u), [p, a, u, lr, rho, eps, g])
        return True
