"""``mindspore.nn.optim.asgd``: ``ASGD``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ... import ops
from ...common.parameter import Parameter
from ..cell import ParameterTuple
from .optimizer import Optimizer, _number

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD, MindSpore's formulas: p = p (1 - lambd eta) - eta g; the average ``ax`` follows p
    (ax += (p - ax) mu, or ax = p while mu is 1); then eta = lr / (1 + lambd lr t)^alpha and
    mu = 1 / max(1, t - t0) for step t. eta starts at lr (set at the first step). State per parameter:
    ``mu_<name>``, ``eta_<name>`` (scalars) and ``ax_.<name>``."""

    def __init__(self, params: Any, learning_rate: Any = 0.1, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.lambd, self.alpha, self.t0 = _number("lambd", lambd), float(alpha), float(t0)
        self.mu = ParameterTuple(Parameter(np.float32(1.0), name=f"mu_{p.name}", requires_grad=False)
                                 for p in self.parameters)
        self.eta = ParameterTuple(Parameter(np.float32(0.0), name=f"eta_{p.name}", requires_grad=False)
                                  for p in self.parameters)
        self.ax = self.parameters.clone(prefix="ax_", init="zeros")

    def construct(self, gradients: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(gradients, False)
        lr = ops.reshape(self._step_lr(), ())
        t = ops.cast(ops.reshape(self.global_step, ()), lr.dtype)       # this step, counted from 1
        first = ops.cast(ops.equal(t, 1.0), lr.dtype)
        for p, mu, eta, ax, g in zip(self.parameters, self.mu, self.eta, self.ax, grads):
            eta_now = first * lr + (1.0 - first) * eta
            new = p * (1.0 - self.lambd * eta_now) - eta_now * g
            ops.assign(p, new)
            averaging = ops.cast(ops.not_equal(mu, 1.0), new.dtype)
            ops.assign(ax, averaging * (ax + (new - ax) * mu) + (1.0 - averaging) * new)
            ops.assign(eta, lr / ops.pow(1.0 + self.lambd * lr * t, self.alpha))
            ops.assign(mu, 1.0 / ops.maximum(t - self.t0, 1.0))
        return True
