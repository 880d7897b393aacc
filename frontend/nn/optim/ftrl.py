"""``mindspore.nn.optim.ftrl``: ``FTRL``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

from ascendemu.errors import InvalidParamError, InvalidValueError

from ...common.parameter import Parameter
from .optimizer import Optimizer, _number

__all__ = ["FTRL"]


class FTRL(Optimizer):
    """ApplyFtrl per parameter (dense gradients); ``moments`` start at ``initial_accum``, ``linear`` at
    zeros. As in MindSpore: a fixed learning rate only, and without parameter groups the weight decay
    applies to every parameter (no beta/gamma filter)."""

    def __init__(self, params: Any, initial_accum: float = 0.1, learning_rate: float = 0.001, lr_power: float = -0.5,
                 l1: float = 0.0, l2: float = 0.0, use_locking: bool = False, loss_scale: float = 1.0,
                 weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if self.dynamic_lr:
            raise InvalidParamError("FTRL: a dynamic learning rate is not supported (as in MindSpore); give a float")
        if _number("learning_rate", learning_rate) <= 0 or lr_power > 0:
            raise InvalidValueError(f"FTRL: learning_rate={learning_rate!r} must be > 0 and lr_power={lr_power!r} "
                                    f"<= 0")
        if all(isinstance(p, Parameter) for p in params):
            self._weight_decay = [_number("weight_decay", weight_decay)] * len(self.parameters)
        self.moments = self.parameters.clone(prefix="moments", init=_number("initial_accum", initial_accum))
        self.linear = self.parameters.clone(prefix="linear", init="zeros")
        self.l1, self.l2, self.lr_power = _number("l1", l1), _number("l2", l2), float(lr_power)
        self.use_locking = bool(use_locking)

    def construct(self, grads: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(grads, False)
        lr = self._step_lr()
        l1, l2, power = self._scalar(self.l1), self._scalar(self.l2), self._scalar(self.lr_power)
        for p, m, lin, g in zip(self.parameters, self.moments, self.linear, grads):
            self._update("ApplyFtrl", (p, m, lin), [p, m, lin, g, lr, l1, l2, power])
        return True
