"""``mindspore.nn.optim.rprop``: ``Rprop``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Sequence

from ascendemu.errors import InvalidParamError, InvalidValueError

from ... import ops
from .optimizer import Optimizer

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Resilient backpropagation, MindSpore's formulas: the step size (lr at the first step) is
    multiplied by etaplus where the gradient kept its sign, etaminus where it flipped (and that
    gradient is then taken as 0), clipped to ``step_sizes``; p -= sign(g) * step. State ``prev`` (the
    last gradient used) and ``step_size``."""

    def __init__(self, params: Any, learning_rate: Any = 0.1, etas: tuple = (0.5, 1.2), step_sizes: tuple = (1e-6, 50.),
                 weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay)
        if not isinstance(etas, tuple) or len(etas) != 2 or not isinstance(step_sizes, tuple) or len(step_sizes) != 2:
            raise InvalidParamError("Rprop: etas and step_sizes must be tuples of 2 floats")
        if step_sizes[0] > step_sizes[1]:
            raise InvalidParamError(f"Rprop: the minimal step size {step_sizes[0]} must not exceed the maximal "
                                    f"{step_sizes[1]}")
        if not 0.0 < etas[0] < 1.0 or etas[1] <= 1.0:
            raise InvalidValueError(f"Rprop: etas={etas!r} needs 0 < etaminus < 1 < etaplus")
        self.etaminus, self.etaplus = float(etas[0]), float(etas[1])
        self.step_size_min, self.step_size_max = float(step_sizes[0]), float(step_sizes[1])
        self.prev = self.parameters.clone(prefix="prev", init="zeros")
        self.step_size = self.parameters.clone(prefix="step_size", init="zeros")

    def construct(self, gradients: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(gradients, False)
        lr = self._step_lr()
        first = ops.cast(ops.equal(ops.reshape(self.global_step, ()), 1), lr.dtype)   # after the increment
        for p, prev, step, g in zip(self.parameters, self.prev, self.step_size, grads):
            size = first * lr + (1.0 - first) * step
            product = g * prev
            factor = ops.select(product > 0, ops.ones_like(g) * self.etaplus,
                                ops.select(product < 0, ops.ones_like(g) * self.etaminus, ops.ones_like(g)))
            size = ops.clip_by_value(size * factor, self.step_size_min, self.step_size_max)
            used = ops.select(product < 0, ops.zeros_like(g), g)
            direction = ops.cast(used > 0, g.dtype) - ops.cast(used < 0, g.dtype)
            ops.assign(p, p - direction * size)
            ops.assign(prev, used)
            ops.assign(step, size)
        return True
