"""``mindspore.nn.optim.adam``: ``Adam`` and ``AdamWeightDecay``, where MindSpore defines them."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.parameter import Parameter
from .optimizer import Optimizer, _number, _open_unit

__all__ = ["Adam", "AdamWeightDecay"]


class Adam(Optimizer):
    """MindSpore's Adam (ApplyAdam): epsilon outside the bias correction; beta powers kept as state."""

    def __init__(self, params: Any, learning_rate: Any = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, use_locking: bool = False, use_nesterov: bool = False, weight_decay: float = 0.0,
                 loss_scale: float = 1.0, use_amsgrad: bool = False, **kwargs: Any):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if use_amsgrad:
            raise InvalidParamError("Adam: use_amsgrad=True is not supported; use use_amsgrad=False")
        self.beta1, self.beta2 = _open_unit("beta1", beta1), _open_unit("beta2", beta2)
        self.eps, self.use_nesterov = _number("eps", eps, 1e-38), bool(use_nesterov)
        self.beta1_power = Parameter(np.float32(1.0), name="beta1_power", requires_grad=False)
        self.beta2_power = Parameter(np.float32(1.0), name="beta2_power", requires_grad=False)
        self.moment1 = self.parameters.clone(prefix="moment1", init="zeros")
        self.moment2 = self.parameters.clone(prefix="moment2", init="zeros")

    def construct(self, gradients: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(gradients, False)
        lr = self._step_lr()
        b1p = ops.assign(self.beta1_power, self.beta1_power * self.beta1)
        b2p = ops.assign(self.beta2_power, self.beta2_power * self.beta2)
        b1, b2, eps = self._scalar(self.beta1), self._scalar(self.beta2), self._scalar(self.eps)
        for p, m, v, g in zip(self.parameters, self.moment1, self.moment2, grads):
            self._update("Adam", (p, m, v), [p, m, v, b1p, b2p, lr, b1, b2, eps, g],
                         {"use_nesterov": self.use_nesterov})
        return True


class AdamWeightDecay(Optimizer):
    """Adam without bias correction and with decoupled weight decay: p -= lr * (m / (sqrt(v) + eps) + wd p)."""

    def __init__(self, params: Any, learning_rate: Any = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-6, weight_decay: float = 0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2 = _open_unit("beta1", beta1), _open_unit("beta2", beta2)
        self.eps = _number("eps", eps, 1e-38)
        self.moments1 = self.parameters.clone(prefix="adam_m", init="zeros")
        self.moments2 = self.parameters.clone(prefix="adam_v", init="zeros")

    def construct(self, gradients: Sequence[Any]) -> Any:
        grads = self.prepare_gradients(gradients, True)
        lr = self._step_lr()
        b1, b2, eps = self._scalar(self.beta1), self._scalar(self.beta2), self._scalar(self.eps)
        for p, m, v, g, wd in zip(self.parameters, self.moments1, self.moments2, grads, self._weight_decay):
            if p.dtype in (mstype.float16, mstype.bfloat16):
                self._update_in_float32(p, m, v, g, [lr, b1, b2, eps, self._scalar(wd)])
            else:
                self._update("AdamWeightDecay", (p, m, v), [p, m, v, lr, b1, b2, eps, self._scalar(wd), g])
        return True

    @staticmethod
    def _update_in_float32(p: Parameter, m: Parameter, v: Parameter, g: Any, scalars: list[Any]) -> None:
        """A float16/bfloat16 Parameter's step as MindSpore 2.10 runs it on Ascend: its fused AdamWeightDecay
        primitive is expanded by the backend into param, m, v and the gradient cast to float32, one
        AdamApplyOneWithDecay writing three float32 results, each cast back and assigned (the kernels of its
        DryRun's memory_block.csv). The numerics are the in-place kernel's (it computes in float32 too); the
        memory is MindSpore's: 7 float32 copies of the Parameter live at once, the step's peak for a large
        embedding (docs/ARCHITECTURE.md, DryRun memory)."""
        wide = [ops.cast(x, mstype.float32) for x in (p, m, v)]
        new = ops.apply_op("AdamWeightDecay", [*wide, *scalars, ops.cast(g, mstype.float32)])
        for target, value in zip((p, m, v), new, strict=True):
            ops.assign(target, ops.cast(value, target.dtype))
