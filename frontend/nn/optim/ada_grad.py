"""``mindspore.nn.optim.ada_grad``: ``Adagrad``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

from .optimizer import Optimizer, _number

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """ApplyAdagrad per parameter: ``accum += g^2; p -= lr g / sqrt(accum)``; ``accum`` starts at the
    ``accum`` argument."""

    def __init__(self, params: Any, accum: float = 0.1, learning_rate: Any = 0.001, update_slots: bool = True,
                 loss_scale: float = 1.0, weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.update_slots = bool(update_slots)
        self.accum = self.parameters.clone(prefix="accum", init=_number("accum", accum))

    def construct(self, grads: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(grads, False)
        lr = self._step_lr()
        for p, a, g in zip(self.parameters, self.accum, grads):
            self._update("ApplyAdagrad", (p, a), [p, a, lr, g], {"update_slots": self.update_slots})
        return True
