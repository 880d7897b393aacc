"""``mindspore.nn.optim.lamb``: ``Lamb``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidValueError

from ... import ops
from .optimizer import Optimizer, _number

__all__ = ["Lamb"]


class Lamb(Optimizer):
    """LAMB (MindSpore's Lamb kernel): Adam moments with bias correction at step t (global_step after
    its increment), update r = m_hat / (sqrt(v_hat) + eps) + wd p, trust ratio ||p|| / ||r|| (1 where
    either norm is 0), p -= lr * ratio * r. State ``lamb_m`` and ``lamb_v``; the decay is applied in
    the update (never added to the gradient), to parameters the decay filter or group selects."""

    def __init__(self, params: Any, learning_rate: Any, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-6,
                 weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = _number("beta1", beta1), _number("beta2", beta2), _number("eps", eps)
        if not (0.0 < self.beta1 < 1.0 and 0.0 < self.beta2 < 1.0 and self.eps > 0):
            raise InvalidValueError(f"Lamb: beta1={beta1!r} and beta2={beta2!r} must be in (0, 1), eps > 0")
        self.moments1 = self.parameters.clone(prefix="lamb_m", init="zeros")
        self.moments2 = self.parameters.clone(prefix="lamb_v", init="zeros")

    def construct(self, gradients: Sequence[Any]) -> Any:
        grads = list(gradients)
        lr = self._step_lr()
        t = ops.cast(ops.reshape(self.global_step, ()), lr.dtype)
        correction1 = 1.0 - ops.pow(self._scalar(self.beta1), t)
        correction2 = 1.0 - ops.pow(self._scalar(self.beta2), t)
        for p, m, v, g, wd in zip(self.parameters, self.moments1, self.moments2, grads, self._weight_decay):
            m_new = self.beta1 * m + (1.0 - self.beta1) * g
            v_new = self.beta2 * v + (1.0 - self.beta2) * (g * g)
            update = (m_new / correction1) / (ops.sqrt(v_new / correction2) + self.eps)
            if wd:
                update = update + wd * p
            w_norm, u_norm = ops.sqrt(ops.sum(p * p)), ops.sqrt(ops.sum(update * update))
            ratio = ops.select(ops.logical_and(w_norm > 0, u_norm > 0), w_norm / u_norm, ops.ones_like(w_norm))
            ops.assign(m, m_new)
            ops.assign(v, v_new)
            ops.assign(p, p - lr * ratio * update)
        return True
