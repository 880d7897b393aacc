"""``mindspore.ops.operations.inner_ops``: the fused optimizer primitives MindSpore defines here:
FusedWeightScaleApplyMomentum (a GPU kernel in MindSpore) and FusedCastAdamWeightDecay (CPU) over the update
kernels of kernels/ops/optim.py (ApplyMomentum, AdamWeightDecay), FusedAdaFactor(WithGlobalNorm) composed of
ops as its CPU kernel computes it. They update their Parameters in place, in PyNative and GRAPH_MODE, like
the other Apply* primitives."""
from __future__ import annotations

from typing import Any

from ...common import dtype as mstype
from ...unsupported import unsupported
from .._utils import check_value_type, defined_here
from ..primitive import _Op, _tensor
from .array_ops import Cast, ExpandDims, OnesLike, Select
from .math_ops import Less, Maximum, ReduceMean, Sqrt
from .nn_ops import AdamWeightDecay, ApplyMomentum, _arity
from .other_ops import Assign

_UPDATE_DTYPES = (mstype.float16, mstype.float32)   # what MindSpore's infer_dtype accepts for var and grad


def _check_update_dtype(owner: str, name: str, value: Any) -> Any:
    """MindSpore's ``check_tensor_dtype_valid(name, dtype, [float16, float32])``."""
    x = _tensor(value)
    if x.dtype not in _UPDATE_DTYPES:
        raise TypeError(f"For '{owner}', the type of '{name}' must be Tensor[Float16, Float32], but got "
                        f"Tensor[{x.dtype}].")
    return x


class FusedWeightScaleApplyMomentum(_Op):
    """``(weight_decay, loss_scale, variable, accumulation, learning_rate, gradient, momentum)``: Momentum
    with weight decay and a gradient scale, MindSpore's GPU kernel formula: ``g' = (variable * weight_decay
    + gradient) * loss_scale; accumulation = momentum * accumulation + g'; variable -= learning_rate *
    accumulation``; returns variable."""
    operands = ("weight_decay", "loss_scale", "variable", "accumulation", "learning_rate", "gradient", "momentum")

    def __call__(self, *args: Any) -> Any:
        weight_decay, loss_scale, variable, accumulation, learning_rate, gradient, momentum = _arity(
            self.name, args, self.operands)
        var = _check_update_dtype(self.name, "v", variable)
        _check_update_dtype(self.name, "a", accumulation)
        grad = (var * Cast()(_tensor(weight_decay), var.dtype) + Cast()(_tensor(gradient), var.dtype)) \
            * Cast()(_tensor(loss_scale), var.dtype)
        return ApplyMomentum()(variable, accumulation, learning_rate, grad, momentum)


class FusedCastAdamWeightDecay(_Op):
    """``(var, m, v, lr, beta1, beta2, epsilon, decay, gradient, global_norm)``: AdamWeightDecay computed
    in float32 for a float16 (or float32) var with float32 moments: ``g = gradient / global_norm``; m, v
    and ``var - lr (m / (sqrt(v) + epsilon) + decay var)`` as AdamWeightDecay, var cast back to its
    dtype; returns the new (var, m, v) (MindSpore's CPU kernel returns zeros there; the Parameters hold
    the same values)."""
    operands = ("var", "m", "v", "lr", "beta1", "beta2", "epsilon", "decay", "gradient", "global_norm")

    def __init__(self, use_locking: bool = False):
        super().__init__()
        check_value_type(self.name, "use_locking", use_locking, (bool,))
        self.use_locking = use_locking

    def __call__(self, *args: Any) -> tuple:
        var, m, v, lr, beta1, beta2, epsilon, decay, gradient, global_norm = _arity(self.name, args, self.operands)
        var_t = _check_update_dtype(self.name, "var", var)
        grad = _check_update_dtype(self.name, "grad", gradient)
        master = Cast()(var_t, mstype.float32)
        grad = Cast()(grad, mstype.float32) / Cast()(_tensor(global_norm), mstype.float32)
        new, m_new, v_new = AdamWeightDecay()(master, m, v, lr, beta1, beta2, epsilon, decay, grad)
        new = Cast()(new, var_t.dtype)
        if getattr(var, "is_parameter", False):
            Assign()(var, new)
        return new, m_new, v_new



ADAFACTOR_EPS = 1e-30   # MindSpore's FusedAdaFactor CPU kernel floor (kEps) for variances, norms and global_norm


def _f32(x: Any) -> Any:
    return Cast()(_tensor(x), mstype.float32)


def _rms(x: Any) -> Any:
    return Sqrt()(ReduceMean()(x * x))


def _epsilon_pair(epsilon: Any) -> tuple:
    """FusedAdaFactor's ``epsilon``: (eps1, eps2) as a tuple of floats or a (2,) Tensor."""
    if isinstance(epsilon, (tuple, list)) and len(epsilon) == 2:
        return _f32(epsilon[0]), _f32(epsilon[1])
    eps = _f32(epsilon)
    if eps.shape != (2,):
        raise ValueError(f"For 'FusedAdaFactor', the 'epsilon' must be a pair (eps1, eps2), but got shape "
                         f"{list(eps.shape)}.")
    return eps[0], eps[1]


class FusedAdaFactor(_Op):
    """``(epsilon, clip_threshold, beta1, beta2, weight_decay, learning_rate, gradient, param, exp_avg,
    exp_avg_sq_row, exp_avg_sq_col, exp_avg_sq)``: one Adafactor step as MindSpore's CPU kernel computes it,
    in float32: ``u = g^2 + eps1``; a param of rank >= 2 keeps factored second moments (``exp_avg_sq_row``
    the mean of u over the last axis, ``exp_avg_sq_col`` over the second last, each ``beta2 old + (1 - beta2)
    new``; the update is ``g / (sqrt(row / mean(row)) sqrt(col))``), a vector the full ``exp_avg_sq``
    (``g / sqrt(v)``); the update is scaled by ``lr / max(rms(update) / clip_threshold, 1)`` (lr times
    ``max(eps2, rms(param))`` with enable_scale_parameter), averaged into ``exp_avg`` with
    enable_first_moment, and subtracted from param (plus ``weight_decay lr param`` with
    enable_weight_decay). Updates the Parameters among param and its states; returns the new param."""
    operands = ("epsilon", "clip_threshold", "beta1", "beta2", "weight_decay", "learning_rate", "gradient",
                "param", "exp_avg", "exp_avg_sq_row", "exp_avg_sq_col", "exp_avg_sq")

    def __init__(self, enable_scale_parameter: bool = False, enable_first_moment: bool = False,
                 enable_weight_decay: bool = False):
        super().__init__()
        for name, value in (("enable_scale_parameter", enable_scale_parameter),
                            ("enable_first_moment", enable_first_moment), ("enable_weight_decay", enable_weight_decay)):
            check_value_type(self.name, name, value, (bool,))
        self.enable_scale_parameter = enable_scale_parameter
        self.enable_first_moment = enable_first_moment
        self.enable_weight_decay = enable_weight_decay

    def __call__(self, *args: Any) -> Any:
        return self._step(*_arity(self.name, args, self.operands))

    def _step(self, epsilon: Any, clip_threshold: Any, beta1: Any, beta2: Any, weight_decay: Any,
              learning_rate: Any, gradient: Any, param: Any, exp_avg: Any, exp_avg_sq_row: Any,
              exp_avg_sq_col: Any, exp_avg_sq: Any, global_norm: Any = None) -> Any:
        p = _check_update_dtype(self.name, "param", param)
        grad = _tensor(gradient)
        if grad.shape != p.shape:
            raise ValueError(f"For '{self.name}', the 'grad_shape' must be equal to 'param_shape', but got "
                             f"{list(grad.shape)} and {list(p.shape)}.")
        eps1, eps2 = _epsilon_pair(epsilon)
        g = _f32(grad)
        if global_norm is not None:     # a global norm below the floor leaves the gradient unscaled
            norm = _f32(global_norm)
            g = g / Select()(Less()(norm, ADAFACTOR_EPS), OnesLike()(norm), norm)
        u = g * g + eps1
        b2 = _f32(beta2)
        updates = []
        if p.ndim >= 2:
            row = _f32(exp_avg_sq_row) * b2 + ReduceMean()(u, -1) * (1.0 - b2)
            col = Maximum()(_f32(exp_avg_sq_col) * b2 + ReduceMean()(u, -2) * (1.0 - b2), ADAFACTOR_EPS)
            r = Sqrt()(row / Maximum()(ReduceMean(keep_dims=True)(row, -1), ADAFACTOR_EPS))
            factor = ExpandDims()(r, -1) * ExpandDims()(Sqrt()(col), -2)
            update = g / Maximum()(factor, ADAFACTOR_EPS)
            updates += [(exp_avg_sq_row, row), (exp_avg_sq_col, col)]
        else:
            v = Maximum()(_f32(exp_avg_sq) * b2 + u * (1.0 - b2), ADAFACTOR_EPS)
            update = g / Sqrt()(v)
            updates.append((exp_avg_sq, v))
        p32 = _f32(p)
        lr = _f32(learning_rate)
        if self.enable_scale_parameter:
            lr = lr * Maximum()(_rms(p32), eps2)
        update = update * (lr / Maximum()(_rms(update) / _f32(clip_threshold), 1.0))
        if self.enable_first_moment:
            b1 = _f32(beta1)
            update = _f32(exp_avg) * b1 + update * (1.0 - b1)
            updates.append((exp_avg, update))
        if self.enable_weight_decay:
            update = update + p32 * _f32(weight_decay) * lr
        new = Cast()(p32 - update, p.dtype)
        for target, value in updates + [(param, new)]:
            if getattr(target, "is_parameter", False):
                Assign()(target, Cast()(value, target.dtype))
        return new


class FusedAdaFactorWithGlobalNorm(FusedAdaFactor):
    """FusedAdaFactor whose gradient is divided by a 13th input, ``global_norm`` (left as it is when the
    norm is below 1e-30, as MindSpore's CPU kernel does)."""
    operands = FusedAdaFactor.operands + ("global_norm",)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.inner_ops", name, __all__)
