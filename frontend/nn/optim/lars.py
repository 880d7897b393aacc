"""``mindspore.nn.optim.lars``: ``LARS``, where MindSpore defines it.

LARS wraps another optimizer: it takes over that optimizer's weight decay and loss scale, rescales each
gradient by a layer-wise trust ratio (MindSpore's ``LARSUpdate`` primitive, written here with ops) and
hands the result to the wrapped optimizer, whose own decay and loss scale it switches off.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LARS"]


def _default_filter(param: Parameter) -> bool:
    """MindSpore's default ``lars_filter``: no LARS for LayerNorm parameters and biases."""
    return "LayerNorm" not in param.name and "bias" not in param.name


def lars_update(weight: Any, gradient: Any, weight_decay: float, learning_rate: Any, epsilon: float,
                coefficient: float, use_clip: bool) -> Any:
    """MindSpore's LARSUpdate: (g + wd w) * ratio with ratio = coefficient ||w|| / (||g|| + wd ||w|| + eps)
    (1 where either norm is 0), clipped to min(ratio / lr, 1) with ``use_clip``."""
    w_norm = ops.sqrt(ops.sum(weight * weight))
    g_norm = ops.sqrt(ops.sum(gradient * gradient))
    ratio = coefficient * w_norm / (g_norm + weight_decay * w_norm + epsilon)
    ratio = ops.select(ops.logical_and(w_norm > 0, g_norm > 0), ratio, ops.ones_like(ratio))
    if use_clip:
        ratio = ops.minimum(ratio / learning_rate, ops.ones_like(ratio))
    if weight_decay:
        gradient = gradient + weight * weight_decay
    return gradient * ratio


class LARS(Optimizer):
    """``LARS(optimizer, epsilon=1e-05, coefficient=0.001, use_clip=False, lars_filter=...)``: the trust
    ratio on the gradients of the parameters ``lars_filter`` selects, then ``optimizer``. As in MindSpore
    the cell holds a placeholder ``fake_param`` and ``fake_lr`` (its ``learning_rate`` without
    ``use_clip``, which LARSUpdate reads only when clipping) beside the wrapped optimizer's state."""

    def __init__(self, optimizer: Optimizer, epsilon: float = 1e-05, coefficient: float = 0.001,
                 use_clip: bool = False, lars_filter: Callable[[Parameter], bool] = _default_filter):
        super().__init__(0.0, [Parameter(Tensor(np.float32(0.0)), name="fake_param")])
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"For 'LARS', the type of 'optimizer' must be Optimizer, but got "
                            f"{type(optimizer).__name__}.")
        for name, value in (("epsilon", epsilon), ("coefficient", coefficient)):
            if not isinstance(value, float) or isinstance(value, bool):
                raise TypeError(f"For 'LARS', the type of '{name}' must be float, but got {type(value).__name__}.")
        if not isinstance(use_clip, bool):
            raise TypeError(f"For 'LARS', the type of 'use_clip' must be bool, but got {type(use_clip).__name__}.")
        self.fake_param = self.parameters[0]
        self.opt = optimizer
        self.global_step = optimizer.global_step
        self.parameters = optimizer.parameters
        self.epsilon, self.coefficient, self.use_clip = epsilon, coefficient, use_clip
        self.lars_flag = tuple(bool(lars_filter(p)) for p in self.parameters)
        self.learning_rate = Parameter(Tensor(np.float32(0.0)), name="fake_lr", requires_grad=False)
        if use_clip and optimizer.dynamic_lr and getattr(optimizer, "is_group_lr", False):
            raise ValueError("For 'LARS', if the argument 'use_clip' is set to True, then the dynamic "
                             "learning rate and group learning rate cannot both be true.")
        # the wrapped optimizer's decay and loss scale are LARS's now: it applies them before the ratio
        self._weight_decay = list(optimizer._weight_decay)
        self.loss_scale = optimizer.loss_scale
        optimizer._weight_decay = [0.0] * len(optimizer._weight_decay)
        optimizer.loss_scale = 1.0

    def _clip_lr(self) -> Any:
        """The wrapped optimizer's rate of this step (read before its own update counts the step)."""
        opt = self.opt
        if not opt.dynamic_lr:
            return opt.learning_rate
        return ops.reshape(opt.learning_rate(self.global_step), ())

    def construct(self, gradients: Sequence[Any]) -> Any:
        grads = list(gradients)
        if len(grads) != len(self.parameters):
            raise InvalidParamError(f"LARS: got {len(grads)} gradients for {len(self.parameters)} parameters")
        lr = self._clip_lr() if self.use_clip else self.learning_rate
        out = []
        for p, g, wd, flag in zip(self.parameters, grads, self._weight_decay, self.lars_flag):
            if self.loss_scale != 1.0:
                g = g * self._scalar(1.0 / self.loss_scale)
            if flag:
                g = lars_update(p, g, wd, lr, self.epsilon, self.coefficient, self.use_clip)
            out.append(g)
        return self.opt(tuple(out))
