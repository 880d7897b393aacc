"""``mindspore.mint.optim.sgd``: ``SGD`` (PyTorch's SGD with momentum, as MindSpore 2.10's mint composes it)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ... import ops
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops._utils import check_value_type
from ._optimizer import Optimizer, scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Per group: ``g += weight_decay p``; with momentum, ``buf = g`` on the first step (``step_t == 0``)
    else ``buf = buf momentum + (1 - dampening) g``, and the step is ``g + momentum buf`` (nesterov) or
    ``buf``; ``p += -lr step``; then ``step_t += 1``. The first-step branch is a Select on the device
    counter, so one captured graph serves every step."""

    def __init__(self, params: Any, lr: Any, momentum: float = 0, dampening: float = 0, weight_decay: float = 0,
                 nesterov: bool = False, *, maximize: bool = False):
        owner = type(self).__name__
        check_value_type(owner, "lr", lr, (float, int, bool, Tensor))
        for name, value in (("momentum", momentum), ("weight_decay", weight_decay), ("dampening", dampening)):
            check_value_type(owner, name, value, (float, int, bool))
        check_value_type(owner, "nesterov", nesterov, (bool,))
        check_value_type(owner, "maximize", maximize, (bool,))
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "weight_decay": weight_decay, "dampening": dampening,
                    "nesterov": nesterov, "maximize": maximize, "lr_float": lr}
        params = list(params) if isinstance(params, (list, tuple)) else params
        for group in params if isinstance(params, list) else ():
            if isinstance(group, dict) and group.get("lr", None):
                group["lr_float"] = group["lr"]
        super().__init__(params, defaults)
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError(f"For 'SGD', if 'nesterov' is true, 'momentum' must be > 0.0 and 'dampening' must "
                             f"equal to 0.0, but got 'momentum' {momentum}, 'dampening' {dampening}")
        self.momentum_buf = self.parameters.clone(prefix="momentum_buf", init="zeros")
        self.step_t = Parameter(np.zeros((), np.int32), name="step_t", requires_grad=False)

    def construct(self, gradients: Sequence[Any]) -> Any:
        first = ops.equal(self.step_t, 0)
        for group, part in self.group_slices():
            grads = [ops.neg(g) if group["maximize"] else g for g in gradients[part]]
            wd = float(group["weight_decay"])
            if wd != 0.0:
                grads = [ops.add(g, ops.mul(p, scalar(wd))) for p, g in zip(self.parameters[part], grads)]
            momentum, dampening = float(group["momentum"]), float(group["dampening"])
            lr = group["lr_float"]
            neg_lr = ops.neg(ops.cast(lr, np.float32)) if isinstance(lr, Tensor) else scalar(-float(lr))
            for p, buf, g in zip(self.parameters[part], self.momentum_buf[part], grads):
                step = g
                if momentum != 0.0:
                    later = ops.add(ops.mul(buf, scalar(momentum)), ops.mul(g, scalar(1.0 - dampening)))
                    new_buf = ops.select(ops.broadcast_to(first, g.shape), g, later)
                    ops.assign(buf, new_buf)
                    step = ops.add(g, ops.mul(new_buf, scalar(momentum))) if group["nesterov"] else new_buf
                ops.assign(p, ops.add(p, ops.mul(step, ops.cast(neg_lr, p.dtype))))
        ops.assign(self.step_t, ops.add(self.step_t, 1))
        return True
