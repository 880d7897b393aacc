"""``mindspore.mint.optim.fused_adamw``: ``FusedAdamW``, AdamW over one flat buffer per group in MindSpore.

The flat buffers are a launch-count optimisation of MindSpore's (one kernel per group); the numbers are
AdamW's, so this runs AdamW's per-parameter kernels. What differs is its bookkeeping: ``betas`` may be a
list, amsgrad must agree across groups, and with amsgrad the ``max_exp_avg_sq.<name>`` state is the
Cell's own (so checkpoints list it)."""
from __future__ import annotations

from typing import Any, Sequence

from ...common.parameter import Parameter, ParameterTuple
from .adamw import AdamW

__all__ = ["FusedAdamW"]


class FusedAdamW(AdamW):
    """AdamW with one amsgrad setting for all groups (ValueError on mixed flags, as MindSpore)."""

    BETAS_TYPES = (tuple, list)

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False):
        groups = list(params) if isinstance(params, (list, tuple)) else params
        if isinstance(groups, list) and groups and isinstance(groups[0], dict):
            flags = [bool(g.get("amsgrad", amsgrad)) for g in groups]
            if len(set(flags)) != 1:
                raise ValueError(f"FusedAdamW does not support mixed amsgrad across param_groups. Found amsgrad "
                                 f"flags per group: {flags}. Please keep amsgrad consistent.")
        super().__init__(groups, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
        self.global_amsgrad = bool(amsgrad)
        self.max_exp_avg_sq = (self.parameters.clone(prefix="max_exp_avg_sq", init="zeros")
                               if self.global_amsgrad else None)
        for group in self.param_groups:
            group["amsgrad"] = self.global_amsgrad
            group.pop("max_exp_avg_sq", None)

    def group_maxima(self, group: dict, part: slice) -> Sequence[Parameter] | None:
        return ParameterTuple(self.max_exp_avg_sq[part]) if self.global_amsgrad else None
