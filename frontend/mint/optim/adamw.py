"""``mindspore.mint.optim.adamw``: ``AdamW`` (PyTorch's AdamW on MindSpore's AdamW primitive)."""
from __future__ import annotations

from typing import Any, Sequence

from ... import ops
from ...common.parameter import Parameter
from ._optimizer import AdamFamily, scalar

__all__ = ["AdamW"]


class AdamW(AdamFamily):
    """Decoupled weight decay ``p *= 1 - lr wd`` then Adam with bias correction, one ``AdamW`` kernel per
    parameter (kernels/ops/optim.py: Ascend's ApplyAdamWV2, which counts t = state_step + 1; state_step
    starts at -1 and is incremented before each update, so the first update has t = 1). ``amsgrad`` keeps
    ``max_exp_avg_sq = max(max_exp_avg_sq, v)`` in the group's state, as PyTorch and the Ascend kernel do."""

    STEP_START = -1.0          # the kernel counts t = state_step + 1, so the first update has t = 1

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)

    def group_maxima(self, group: dict, part: slice) -> Sequence[Parameter] | None:
        """The group's max_exp_avg_sq Parameters when it uses amsgrad."""
        return group.get("max_exp_avg_sq") if group["amsgrad"] else None

    def construct(self, gradients: Sequence[Any]) -> Any:
        step = ops.reshape(ops.assign(self.state_step, ops.add(self.state_step, scalar(1.0))), ())
        for group, part in self.group_slices():
            beta1, beta2 = group["betas"]
            attrs = {"lr": self.lr_value(group), "beta1": float(beta1), "beta2": float(beta2),
                     "weight_decay": float(group["weight_decay"]), "eps": float(group["eps"]),
                     "amsgrad": bool(group["amsgrad"]), "maximize": bool(group["maximize"])}
            maxima = self.group_maxima(group, part)
            for i, (p, g) in enumerate(zip(self.parameters[part], gradients[part])):
                m, v = self.exp_avg[part][i], self.exp_avg_sq[part][i]
                max_v = v if maxima is None else maxima[i]
                new = ops.apply_op("AdamW", [p, m, v, max_v, g, ops.cast(step, p.dtype)], attrs)
                targets = (p, m, v) if maxima is None else (p, m, v, max_v)
                for target, value in zip(targets, new):
                    ops.assign(target, value)
        return True
