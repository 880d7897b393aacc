"""``mindspore.nn.optim.proximal_ada_grad``: ``ProximalAdagrad``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

from .optimizer import Optimizer, _number

__all__ = ["ProximalAdagrad"]


class ProximalAdagrad(Optimizer):
    """ApplyProximalAdagrad per parameter (dense gradients): Adagrad's step, then l1/l2 shrinkage."""

    def __init__(self, params: Any, accum: float = 0.1, learning_rate: Any = 0.001, l1: float = 0.0, l2: float = 0.0,
                 use_locking: bool = False, loss_scale: float = 1.0, weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.accum = self.parameters.clone(prefix="accum", init=_number("accum", accum))
        self.l1, self.l2, self.use_locking = _number("l1", l1), _number("l2", l2), bool(use_locking)

    def construct(self, grads: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(grads, False)
        lr = self._step_lr()
        l1, l2 = self._scalar(self.l1), self._scalar(self.l2)
        for p, a, g in zip(self.parameters, self.accum, grads):
            self._update("ApplyProximalAdagrad", (p, a), [p, a, lr, l1, l2, g])
        return True
