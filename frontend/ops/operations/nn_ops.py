"""``mindspore.ops.operations.nn_ops``: the neural-network primitives, where MindSpore defines them:
the registry's elementwise activations (generated), softmax, convolutions, pooling, normalisation,
padding, losses and dropout (with its counter-based generator state)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError, check_int

from ...common.parameter import GeneratorState
from ...common.seed import graph_seed
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import (_check_format, _int_tuple, _pad4, _pair, _probability, _seed_arg, _static_int, _static_ints,
                      defined_here)
from ..primitive import _Op, _binary_operands, _tensor, apply_op, generated_primitives
from ..composite_op import composite
from .array_ops import Select
from .math_ops import Abs, Exp, Greater, Log, Maximum, Minimum, ReduceMean, ReduceSum
from .other_ops import Assign, StopGradient

# ReLU, Sigmoid, Tanh, GeLU, ...: the registry's operand-only activations
globals().update(generated_primitives("nn_ops"))


class Softmax(_Op):
    op = "Softmax"

    def __init__(self, axis: int | tuple[int] = -1):
        super().__init__()
        self.axis = axis[0] if isinstance(axis, (tuple, list)) and len(axis) == 1 else axis

    def __call__(self, input: Any) -> Tensor:
        return apply_op(self.op, [input], {"axis": self.axis})[0]


class LogSoftmax(Softmax):
    op = "LogSoftmax"

    def __call__(self, logits: Any) -> Tensor:           # MindSpore's name, unlike Softmax's
        return super().__call__(logits)


class BiasAdd(_Op):
    def __init__(self, data_format: str = "NCHW"):
        super().__init__()
        _check_format("BiasAdd", data_format)

    def __call__(self, input_x: Any, bias: Any) -> Tensor:
        return apply_op("BiasAdd", [input_x, bias])[0]


class Conv2D(_Op):
    def __init__(self, out_channel: int, kernel_size: Any, mode: int = 1, pad_mode: str = "valid",
                 pad: Any = 0, stride: Any = 1, dilation: Any = 1, group: int = 1, data_format: str = "NCHW"):
        super().__init__()
        _check_format("Conv2D", data_format)
        self.conv_attrs = {"out_channel": int(out_channel), "kernel_size": _pair("kernel_size", kernel_size),
                           "pad_mode": str(pad_mode).lower(), "pad": _pad4(pad), "stride": _pair("stride", stride),
                           "dilation": _pair("dilation", dilation), "group": int(group)}

    def __call__(self, x: Any, weight: Any) -> Tensor:
        return apply_op("Conv2D", [x, weight], self.conv_attrs)[0]


class Conv2DBackpropInput(_Op):
    """``Conv2DBackpropInput(out_channel, kernel_size, ...)(dout, weight, input_size)``: the gradient of
    a Conv2D with these attrs with respect to its input of shape ``input_size``, which is also the
    transposed convolution of ``dout`` (``Conv2DTranspose``). ``pad_list`` (top, bottom, left, right),
    when given, is the explicit padding."""

    def __init__(self, out_channel: int, kernel_size: Any, pad_mode: str = "valid", pad: Any = 0,
                 pad_list: Any = None, mode: int = 1, stride: Any = 1, dilation: Any = 1, group: int = 1,
                 data_format: str = "NCHW"):
        super().__init__()
        _check_format(type(self).__name__, data_format)
        if pad_list is not None:
            pad_mode, pad = "pad", pad_list
        self.conv_attrs = {"out_channel": int(out_channel), "kernel_size": _pair("kernel_size", kernel_size),
                           "pad_mode": str(pad_mode).lower(), "pad": _pad4(pad), "stride": _pair("stride", stride),
                           "dilation": _pair("dilation", dilation), "group": int(group)}

    def __call__(self, dout: Any, weight: Any, input_size: Any) -> Tensor:
        size = _static_ints(f"{self.name}: input_size", input_size)
        return apply_op("Conv2DBackpropInput", [dout, weight], dict(self.conv_attrs, input_size=size))[0]


class Conv2DTranspose(Conv2DBackpropInput):
    """MindSpore's name of Conv2DBackpropInput used as a layer (nn.Conv2dTranspose)."""


class _Pool(_Op):
    op = ""

    def __init__(self, kernel_size: Any = 1, strides: Any = 1, pad_mode: str = "valid", data_format: str = "NCHW"):
        super().__init__()
        _check_format(self.op, data_format)
        self.pool_attrs = {"kernel_size": _pair("kernel_size", kernel_size), "strides": _pair("strides", strides),
                           "pad_mode": str(pad_mode).upper()}

    def __call__(self, x: Any) -> Tensor:
        return apply_op(self.op, [x], self.pool_attrs)[0]


class MaxPool(_Pool):
    op = "MaxPool"


class AvgPool(_Pool):
    op = "AvgPool"

    def __init__(self, kernel_size: Any = 1, strides: Any = 1, pad_mode: str = "VALID", data_format: str = "NCHW"):
        super().__init__(kernel_size, strides, pad_mode, data_format)     # MindSpore's default is upper case


class BatchNorm(_Op):
    """BatchNorm over NCHW (or (N, C)) channels. Inference: (y,) from the given statistics. Training
    (``is_training=True``): y from the batch's statistics; the moving mean and variance Parameters are
    updated in place with ``momentum`` (the primitive's convention: new = (1 - momentum) * moving +
    momentum * batch), as MindSpore's primitive does. Returns (y, new moving mean, new moving variance,
    saved mean, saved inverse std)."""

    def __init__(self, is_training: bool = False, epsilon: float = 1e-5, momentum: float = 0.1,
                 data_format: str = "NCHW"):
        super().__init__()
        _check_format("BatchNorm", data_format)
        self.is_training, self.epsilon, self.momentum = bool(is_training), float(epsilon), float(momentum)

    def __call__(self, x: Any, scale: Any, bias: Any, mean: Any, variance: Any) -> tuple[Tensor, ...]:
        if not self.is_training:
            return apply_op("BatchNorm", [x, scale, bias, mean, variance], {"epsilon": self.epsilon})
        outs = apply_op("BatchNorm", [x, scale, bias, mean, variance],
                        {"epsilon": self.epsilon, "is_training": True, "momentum": self.momentum})
        for state, new in ((mean, outs[1]), (variance, outs[2])):
            if getattr(state, "is_parameter", False):
                Assign()(state, StopGradient()(new))
        return outs


class LayerNorm(_Op):
    """Returns (y, mean, rstd) like MindSpore."""

    def __init__(self, begin_norm_axis: int = 1, begin_params_axis: int = 1, epsilon: float = 1e-7):
        super().__init__()
        self.ln_attrs = {"begin_norm_axis": int(begin_norm_axis), "begin_params_axis": int(begin_params_axis),
                         "epsilon": float(epsilon)}

    def __call__(self, input_x: Any, gamma: Any, beta: Any) -> tuple[Tensor, ...]:
        return apply_op("LayerNorm", [input_x, gamma, beta], self.ln_attrs)


class Pad(_Op):
    """``Pad(paddings)(x)``: x with zeros around it, ``paddings[d] = (before, after)`` for dimension d."""

    def __init__(self, paddings: Sequence[Sequence[int]]):
        super().__init__()
        if not isinstance(paddings, (tuple, list)):
            raise InvalidParamError(f"Pad: paddings={paddings!r} must be a tuple of (before, after) pairs")
        self.paddings = tuple(_int_tuple("Pad: paddings entry", p) for p in paddings)

    def __call__(self, input_x: Any) -> Tensor:
        return apply_op("Pad", [input_x], {"paddings": self.paddings})[0]


class MirrorPad(_Op):
    """``MirrorPad(mode='REFLECT')(input_x, paddings)``: x padded by mirroring, ``paddings[d] = (before,
    after)`` for dimension d (a tuple or an int Tensor of shape (rank, 2)); REFLECT leaves the edge
    element out of the mirror, SYMMETRIC repeats it."""

    def __init__(self, mode: str = "REFLECT"):
        super().__init__()
        self.mode = mode

    def __call__(self, input_x: Any, paddings: Any) -> Tensor:
        flat = _static_ints("MirrorPad: paddings", paddings)
        pairs = tuple(tuple(flat[i:i + 2]) for i in range(0, len(flat), 2))
        return apply_op("MirrorPad", [input_x], {"paddings": pairs, "mode": self.mode})[0]


class SigmoidCrossEntropyWithLogits(_Op):
    """``SigmoidCrossEntropyWithLogits()(logits, label)``: the elementwise binary cross entropy
    ``-(label log sigmoid(logits) + (1 - label) log(1 - sigmoid(logits)))``, computed stably; logits
    and label share one shape and one float dtype. Only the logits get a gradient (MindSpore's
    bprop gives the label zeros)."""

    def __call__(self, logits: Any, label: Any) -> Tensor:
        return apply_op("SigmoidCrossEntropyWithLogits", [logits, label])[0]


# the reductions of the losses (MindSpore's LossBase)
REDUCTIONS = ("mean", "sum", "none")


def check_reduction(reduction: str) -> str:
    if reduction not in REDUCTIONS:
        raise InvalidParamError(f"reduction={reduction!r} must be one of {REDUCTIONS}")
    return reduction


def reduce_loss(loss: Tensor, reduction: str, weights: Any = None) -> Tensor:
    """MindSpore's LossBase.get_loss: weight, then mean / sum over every element, or keep them."""
    if weights is not None:
        loss = loss * weights
    if reduction == "mean":
        return ReduceMean()(loss)
    if reduction == "sum":
        return ReduceSum()(loss)
    return loss


def check_smooth_l1(beta: Any, reduction: str) -> tuple[float, str]:
    """SmoothL1Loss's arguments as MindSpore checks them: beta a number >= 0, a known reduction."""
    if isinstance(beta, bool) or not isinstance(beta, (int, float)):
        raise InvalidParamError(f"SmoothL1Loss: beta={beta!r} must be a float")
    if beta < 0:
        raise InvalidParamError(f"SmoothL1Loss: beta={beta!r} must be >= 0 (0 is the L1 loss)")
    return float(beta), check_reduction(reduction)


class SmoothL1Loss(_Op):
    """``SmoothL1Loss(beta=1.0, reduction='none')(logits, labels)``: ``0.5 d^2 / beta`` where ``|d| <
    beta``, else ``|d| - 0.5 beta`` (d = logits - labels, one shape; beta = 0 is the L1 loss), as
    MindSpore's SmoothL1Loss kernel computes it; built from Abs, Less, Select and arithmetic, so O1
    fuses it into one kernel and its gradient is d / beta or sign(d)."""

    def __init__(self, beta: float = 1.0, reduction: str = "none"):
        super().__init__()
        self.beta, self.reduction = check_smooth_l1(beta, reduction)

    def __call__(self, prediction: Any, target: Any) -> Tensor:
        input, target, beta = _tensor(prediction), _tensor(target), self.beta
        if input.shape != target.shape:
            raise InvalidParamError(f"smooth_l1_loss: input shape {input.shape} and target shape {target.shape} "
                                    f"must be equal")
        if input.dtype.name not in ("float32", "float16") or target.dtype.name not in ("float32", "float16"):
            raise InvalidParamError(f"smooth_l1_loss: input and target must be float16 or float32, got {input.dtype} "
                                    f"and {target.dtype}")
        diff = input - target
        size = Abs()(diff)
        if beta == 0:
            return reduce_loss(size, self.reduction)
        loss = Select()(size < beta, diff * diff * (0.5 / beta), size - 0.5 * beta)
        return reduce_loss(loss, self.reduction)


class Dropout(_Op):
    """``ops.Dropout(keep_prob=0.5, Seed0=0, Seed1=0)(x) -> (output, mask)``: each element is kept with
    probability ``keep_prob`` and scaled by ``1 / keep_prob``, or zeroed.

    ``mask`` here is a tensor of x's shape and dtype, 1.0 where the element was kept and 0.0 where it
    was dropped (``output = x * mask / keep_prob``), which is MindSpore's form on GPU and CPU; on
    Ascend MindSpore returns a uint8 bitmask of ``ceil(x.size / 128) * 16`` bytes instead.

    The mask comes from a counter-based generator (Philox-4x32-10 over the element index) keyed by
    the seed pair, whose offset advances on every call, in device memory (:class:`GeneratorState`):
    each call draws a new mask and a run repeats its masks. ``Seed0 = Seed1 = 0`` lets MindSpore's
    kernel pick a random seed; here it takes the next pair of the global seed (``set_seed``), as
    ``nn.Dropout`` does.
    """

    def __init__(self, keep_prob: float = 0.5, Seed0: int = 0, Seed1: int = 0):
        super().__init__()
        self.keep_prob = _probability("Dropout", "keep_prob", keep_prob, low_open=True)
        seeds = (_seed_arg("Dropout", "Seed0", Seed0), _seed_arg("Dropout", "Seed1", Seed1))
        if seeds == (0, 0):
            seeds = graph_seed(0, "dropout")
        self.Seed0, self.Seed1 = seeds      # MindSpore's attribute names
        self.state = GeneratorState(*seeds, name="dropout_state")

    def __call__(self, x: Any) -> tuple[Tensor, Tensor]:
        out, mask = apply_op("Dropout", [x, self.state], {"keep_prob": self.keep_prob})
        Assign()(self.state, self.state + _GENERATOR_STEP)
        return out, mask


# what one draw adds to a generator state (seed0, seed1, offset)
_GENERATOR_STEP = Tensor(np.array([0, 0, 1], np.int32))


class Flatten(_Op):
    def __call__(self, input_x: Any) -> Tensor:
        return apply_op("Flatten", [input_x])[0]


class OneHot(_Op):
    """``OneHot(axis=-1)(indices, depth, on_value, off_value)``: a new dimension of size ``depth`` at
    ``axis``, holding on_value where its position equals the index and off_value elsewhere (also for
    every position of an index outside [0, depth))."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = check_int(axis, "OneHot: axis", minimum=-1)

    def __call__(self, indices: Any, depth: Any, on_value: Any, off_value: Any) -> Tensor:
        on, off = _binary_operands(on_value, off_value)
        return apply_op("OneHot", [indices, on, off],
                        {"depth": _static_int("OneHot: depth", depth, 0), "axis": self.axis})[0]


# Composite ops (``ops.composite_op``): one stanza each, a body of registry ops.
@composite("Softplus", functions=("softplus",))
def Softplus(input: Any, beta: float = 1, threshold: float = 20) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold`` (MindSpore's
    softplus; the primitive is beta 1). Computed as ``max(z, 0) + log(1 + exp(-|z|))``, which neither
    overflows nor loses the gradient where ``exp(z)`` would be inf."""
    scaled = input * beta if beta != 1 else _tensor(input)
    soft = Maximum()(scaled, 0) + Log()(Exp()(-Abs()(scaled)) + 1)
    if beta != 1:
        soft = soft / beta
    return Select()(Greater()(scaled, threshold), input, soft)


@composite("Elu", functions=("elu",))
def Elu(input_x: Any, alpha: float = 1.0) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (the exponential taken of ``min(x, 0)`` so the
    branch not taken never overflows)."""
    negative = (Exp()(Minimum()(input_x, 0)) - 1) * alpha
    return Select()(Greater()(input_x, 0), input_x, negative)


# ---- activations, normalisation, pooling, padding, attention (the nn layers' ops) ----


# ---- losses ----


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.nn_ops", name, __all__)
