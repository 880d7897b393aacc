"""``mindspore.nn.optim.adafactor``: ``AdaFactor``, where MindSpore defines it.

MindSpore's composite formula (its non-fused path), written with ops: the second moment of a matrix is
factored into a row and a column mean; the update is clipped by its RMS over ``clip_threshold`` and scaled
by the relative learning rate; optional first moment and decoupled weight decay. As in MindSpore the
gradients are used as given (no loss-scale division, no gradient weight decay), and the state is
``exp_avg.<p>``, ``exp_avg_sq_row_<p>``, ``exp_avg_sq_col_<p>``, ``exp_avg_sq_<p>`` and ``afactor_step``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ... import ops
from ...common.parameter import Parameter, ParameterTuple
from ...common.tensor import Tensor
from .optimizer import Optimizer

__all__ = ["AdaFactor"]

# relative_step's rate cap without warm-up, and warm-up's rate per step (MindSpore's constants)
RELATIVE_STEP_CAP = 1e-2
WARMUP_RATE_PER_STEP = 1e-6


def _check_float(name: str, value: Any, low: float | None = None, high: float | None = None) -> float:
    if not isinstance(value, float):
        raise TypeError(f"For 'AdaFactor', the type of '{name}' must be float, but got {type(value).__name__}.")
    if (low is not None and value < low) or (high is not None and value >= high):
        raise ValueError(f"For 'AdaFactor', '{name}' must be in [{low}, {high}), but got {value}.")
    return value


def _rms(x: Any) -> Any:
    return ops.sqrt(ops.mean(ops.square(x)))


def _zeros(shape: tuple, like: Parameter, name: str) -> Parameter:
    return Parameter(Tensor(np.zeros(shape, np.float32)).astype(like.dtype), name=name, requires_grad=False)


class AdaFactor(Optimizer):
    """``AdaFactor(params, learning_rate=None, eps=(1e-30, 1e-3), clip_threshold=1.0, decay_rate=0.8,
    beta1=0.9, weight_decay=0.0, scale_parameter=True, relative_step=True, warmup_init=False,
    compression=False, loss_scale=1.0)``."""

    def __init__(self, params: Any, learning_rate: Any = None, eps: Any = (1e-30, 1e-3), clip_threshold: float = 1.0,
                 decay_rate: float = 0.8, beta1: Any = 0.9, weight_decay: float = 0.0, scale_parameter: bool = True,
                 relative_step: bool = True, warmup_init: bool = False, compression: bool = False,
                 loss_scale: float = 1.0):
        if learning_rate is not None and relative_step:
            raise ValueError("Cannot combine manual lr and relative_step options", learning_rate)
        if warmup_init and not relative_step:
            raise ValueError("warmup_init requires relative_step=True")
        if learning_rate is None and not relative_step:
            raise ValueError("Cannot learning_rate is None and relative_step=False")
        learning_rate = 0.0 if learning_rate is None else learning_rate
        beta1 = 0.0 if beta1 is None else beta1
        self_scale_lr = isinstance(learning_rate, (float, int))
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if not isinstance(eps, (list, tuple)) or len(eps) != 2:
            raise ValueError("eps must have 2 value: (eps1, eps2).")
        self.eps = tuple(_check_float(f"eps{i}", e, 0.0) for i, e in enumerate(eps))
        self.clip_threshold = _check_float("clip_threshold", clip_threshold, 0.0)
        self.decay_rate = _check_float("decay_rate", decay_rate)
        if not 0.0 < decay_rate < 1.0:
            raise ValueError(f"For 'AdaFactor', 'decay_rate' must be in (0, 1), but got {decay_rate}.")
        if not 0.0 <= weight_decay < 1.0:
            raise ValueError(f"For 'AdaFactor', 'weight_decay' must be in [0, 1), but got {weight_decay}.")
        for name, flag in (("scale_parameter", scale_parameter), ("relative_step", relative_step),
                           ("compression", compression)):
            if not isinstance(flag, bool):
                raise TypeError(f"For 'AdaFactor', the type of '{name}' must be bool, but got {type(flag).__name__}.")
        if isinstance(beta1, bool) or not isinstance(beta1, (int, float)) or beta1 < 0:
            raise ValueError(f"For 'AdaFactor', 'beta1' must be a non-negative number, but got {beta1!r}.")
        self.beta1, self.weight_decay = float(beta1), float(weight_decay)
        self.scale_lr = self_scale_lr
        self.scale_parameter = scale_parameter and self_scale_lr
        self.relative_step, self.warmup_init, self.compression = relative_step, warmup_init, compression
        self.use_first_moment = self.beta1 > 0
        if self.use_first_moment:
            self.exp_avg = self.parameters.clone(prefix="exp_avg", init="zeros")
        rows, cols, full = [], [], []
        for p in self.parameters:
            shape = tuple(p.shape)
            factored = len(shape) > 1
            rows.append(_zeros(shape[:-1] if factored else (1,), p, f"exp_avg_sq_row_{p.name}"))
            cols.append(_zeros(shape[:-2] + shape[-1:] if factored else (1,), p, f"exp_avg_sq_col_{p.name}"))
            sq = _zeros((1,) if factored else shape, p, f"exp_avg_sq_{p.name}")
            full.append(sq.astype("float16") if compression and not factored else sq)
        self.exp_avg_sq_row, self.exp_avg_sq_col = ParameterTuple(rows), ParameterTuple(cols)
        self.exp_avg_sq = ParameterTuple(full)
        self.step = Parameter(Tensor(np.zeros((1,), np.float32)), name="afactor_step", requires_grad=False)

    def construct(self, gradients: Sequence[Any]) -> Any:
        lr = self._step_lr()
        ops.assign(self.step, self.step + 1.0)
        step = self.step
        if self.scale_lr and self.relative_step:
            cap = WARMUP_RATE_PER_STEP * step if self.warmup_init else self._scalar(RELATIVE_STEP_CAP)
            lr = ops.minimum(cap, 1.0 / ops.sqrt(step))
        beta2t = 1.0 - ops.pow(step, self._scalar(-self.decay_rate))
        moments = self.exp_avg if self.use_first_moment else [None] * len(self.parameters)
        for p, g, m, row, col, sq in zip(self.parameters, gradients, moments, self.exp_avg_sq_row,
                                         self.exp_avg_sq_col, self.exp_avg_sq):
            self._update_one(p, g, m, row, col, sq, lr, beta2t)
        return True

    def _update_one(self, p: Parameter, g: Any, m: Any, row: Parameter, col: Parameter, sq: Parameter, lr: Any,
                    beta2t: Any) -> None:
        """One parameter's step (MindSpore's ``_run_opt_with_one_number``), float16 computed in float32."""
        g = ops.cast(g, "float32") if g.dtype == "float16" else g
        w = ops.cast(p, "float32") if p.dtype == "float16" else p
        rate = lr * ops.maximum(self._scalar(self.eps[1]), _rms(w)) if self.scale_parameter else lr
        update = g * g + self.eps[0]
        if len(p.shape) >= 2:
            row_new = ops.cast(row, g.dtype) * beta2t + ops.mean(update, -1) * (1.0 - beta2t)
            col_new = ops.cast(col, g.dtype) * beta2t + ops.mean(update, -2) * (1.0 - beta2t)
            ops.assign(row, ops.cast(row_new, row.dtype))
            ops.assign(col, ops.cast(col_new, col.dtype))
            r_factor = ops.expand_dims(ops.rsqrt(row_new / ops.mean(row_new, -1, True)), -1)
            c_factor = ops.rsqrt(ops.expand_dims(col_new, -2))
            update = r_factor * c_factor * g
        else:
            sq_new = ops.cast(sq, g.dtype) * beta2t + update * (1.0 - beta2t)
            ops.assign(sq, ops.cast(sq_new, sq.dtype))
            update = ops.rsqrt(sq_new) * g
        coefficient = ops.maximum(_rms(update) / self.clip_threshold, self._scalar(1.0))
        update = update / coefficient * rate
        if m is not None:
            m_new = ops.cast(m, g.dtype) * self.beta1 + update * (1.0 - self.beta1)
            ops.assign(m, ops.cast(m_new, m.dtype))
            update = m_new
        if self.weight_decay:
            w = w + w * (-self.weight_decay) * rate
        ops.assign(p, ops.cast(w - update, p.dtype))
