"""``mindspore.mint.optim.adam``: ``Adam`` (PyTorch's Adam, as MindSpore 2.10's mint composes it)."""
from __future__ import annotations

from typing import Any, Sequence

from ... import ops
from ._optimizer import AdamFamily, scalar

__all__ = ["Adam"]


class Adam(AdamFamily):
    """``state_step += 1``; per group: bias corrections ``1 - beta^step``, L2 ``weight_decay`` added to the
    gradient, ``m = m b1 + (1 - b1) g``, ``v = v b2 + g^2 (1 - b2)``, ``p += -lr / bc1 * m / (sqrt(v) /
    sqrt(bc2) + eps)``, in MindSpore's order of float32 operations. With ``amsgrad`` the root is of
    ``max(max_exp_avg_sq, v)``; MindSpore 2.10's Adam never stores that maximum back (its composite rebinds
    a local), so max_exp_avg_sq stays zero and the step equals plain Adam's: followed here, as recorded."""

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)

    def construct(self, gradients: Sequence[Any]) -> Any:
        step = ops.assign(self.state_step, ops.add(self.state_step, scalar(1.0)))
        for group, part in self.group_slices():
            beta1, beta2 = group["betas"]
            grads = [ops.neg(g) if group["maximize"] else g for g in gradients[part]]
            bc1 = ops.sub(scalar(1.0), ops.pow(scalar(beta1), step))
            bc2 = ops.sub(scalar(1.0), ops.pow(scalar(beta2), step))
            neg_step = ops.reshape(ops.neg(ops.div(group["lr"], bc1)), ())
            sqrt_bc2 = ops.reshape(ops.sqrt(bc2), ())
            grads = self.decay(group["weight_decay"], self.parameters[part], grads)
            maxima = group.get("max_exp_avg_sq") if group["amsgrad"] else None
            for i, (p, g) in enumerate(zip(self.parameters[part], grads)):
                m, v = self.exp_avg[part][i], self.exp_avg_sq[part][i]
                m_new = ops.add(ops.mul(m, scalar(beta1)), ops.mul(g, scalar(1.0 - beta1)))
                v_new = ops.add(ops.mul(v, scalar(beta2)), ops.mul(ops.mul(g, g), scalar(1.0 - beta2)))
                second = v_new if maxima is None else ops.maximum(maxima[i], v_new)
                denom = ops.add(ops.div(ops.sqrt(second), sqrt_bc2), scalar(group["eps"]))
                delta = ops.mul(neg_step, ops.div(m_new, denom))
                ops.assign(m, m_new)
                ops.assign(v, v_new)
                ops.assign(p, ops.add(p, delta))
        return True
