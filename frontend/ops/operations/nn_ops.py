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
from .array_ops import Reshape, ReverseV2, Split, Stack, StridedSlice, Transpose  # noqa: E402
from .math_ops import MatMul  # noqa: E402
from ..primitive import _cast  # noqa: E402

# SeLU's constants (Klambauer et al. 2017), as MindSpore's kernel has them
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


@composite("PReLU", functions=("prelu",))
def PReLU(input: Any, weight: Any) -> Tensor:
    """``x`` where ``x > 0``, else ``weight * x``; ``weight`` is (C,) for channel axis 1 (or (1,), shared
    by every channel); x and weight share one float dtype, as MindSpore's PReLU checks."""
    x, w = _tensor(input), _tensor(weight)
    if w.ndim != 1:
        raise InvalidParamError(f"PReLU: weight must have rank 1, got shape {w.shape}")
    channels = x.shape[1] if x.ndim >= 2 else 1
    if w.shape[0] not in (1, channels):
        raise InvalidParamError(f"PReLU: weight has {w.shape[0]} elements; it must have 1 or as many as the "
                                f"input's channels (dim 1 of shape {x.shape}): {channels}")
    if x.dtype != w.dtype:
        raise InvalidParamError(f"PReLU: input dtype {x.dtype} and weight dtype {w.dtype} must be the same")
    if x.ndim > 2 and w.shape[0] > 1:
        w = Reshape()(w, (w.shape[0],) + (1,) * (x.ndim - 2))
    return Select()(Greater()(x, 0), x, x * w)


@composite("Mish", functions=("mish",))
def Mish(x: Any) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return x * apply_op("Tanh", [Softplus()(x)])[0]


@composite("SeLU", functions=("selu",))
def SeLU(input_x: Any) -> Tensor:
    """``scale * elu(x, alpha)`` with SeLU's fixed alpha and scale."""
    return Elu(alpha=SELU_ALPHA)(input_x) * SELU_SCALE


@composite("CeLU", functions=("celu",))
def CeLU(x: Any, alpha: float = 1.0) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``; alpha 0 is an error, as in MindSpore."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha == 0:
        raise InvalidParamError(f"CeLU: alpha={alpha!r} must be a nonzero float")
    negative = (Exp()(Minimum()(x, 0) / alpha) - 1) * alpha
    return Select()(Greater()(x, 0), x, negative)


def _lambd(owner: str, lambd: Any) -> float:
    if isinstance(lambd, bool) or not isinstance(lambd, (int, float)) or lambd < 0:
        raise InvalidParamError(f"{owner}: lambd={lambd!r} must be a float >= 0")
    return float(lambd)


@composite("HShrink", functions=("hardshrink",))
def HShrink(input: Any, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    x = _tensor(input)
    return Select()(Greater()(Abs()(x), _lambd("HShrink", lambd)), x, x - x)      # x - x: +0, not -0


@composite("SoftShrink", functions=("softshrink",))
def SoftShrink(input: Any, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` where ``x > lambd``, ``x + lambd`` where ``x < -lambd``, else 0."""
    x, lam = _tensor(input), _lambd("SoftShrink", lambd)
    return Select()(Greater()(x, lam), x - lam, Select()(Greater()(-x, lam), x + lam, x - x))


@composite("Softsign", functions=("softsign",))
def Softsign(x: Any) -> Tensor:
    """``x / (1 + |x|)``."""
    return x / (Abs()(x) + 1)


@composite("GLU", functions=("glu",))
def GLU(x: Any, axis: int = -1) -> Tensor:
    """``a * sigmoid(b)`` of the two halves ``a, b`` of x along ``axis`` (its size must be even)."""
    x = _tensor(x)
    axis = check_int(axis, "GLU: axis", minimum=-x.ndim, maximum=x.ndim - 1)
    if x.shape[axis] % 2:
        raise InvalidParamError(f"GLU: dim {axis} of shape {x.shape} must be even")
    a, b = Split(axis, 2)(x)
    return a * apply_op("Sigmoid", [b])[0]


def _adaptive_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) averaging rows: output i averages inputs [floor(i n_in / n_out), ceil((i+1) n_in /
    n_out)), MindSpore's (and PyTorch's) adaptive pooling windows."""
    m = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        lo, hi = (i * n_in) // n_out, -(-(i + 1) * n_in // n_out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m


def _adaptive_sizes(owner: str, shape: tuple[int, ...], output_size: Any, dims: int) -> tuple[int, ...]:
    """The last ``dims`` output sizes of an adaptive pooling: an int for all, or a tuple whose None
    entries keep the input's size."""
    sizes = (output_size,) * dims if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != dims or any(s is not None and (isinstance(s, bool) or not isinstance(s, int) or s < 1)
                                 for s in sizes):
        raise InvalidParamError(f"{owner}: output_size={output_size!r} must be an int >= 1 or a tuple of {dims} "
                                f"(int >= 1 or None)")
    if len(shape) < dims + 1:
        raise InvalidParamError(f"{owner}: input must have rank >= {dims + 1}, got shape {shape}")
    return tuple(shape[len(shape) - dims + i] if s is None else s for i, s in enumerate(sizes))


def _adaptive_avg_pool(x: Any, sizes: tuple[int, ...]) -> Tensor:
    """Adaptive average pooling of the last ``len(sizes)`` axes of x: separable, so one MatMul with a
    constant averaging matrix per axis (the axis moved last and back); exact and differentiable."""
    x = _tensor(x)
    for k, out in enumerate(sizes):
        axis = x.ndim - len(sizes) + k
        n_in = x.shape[axis]
        if out == n_in:
            continue
        perm = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
        moved = Transpose()(x, perm) if axis != x.ndim - 1 else x
        lead = moved.shape[:-1]
        flat = Reshape()(moved, (-1, n_in))
        weights = _cast(Tensor(_adaptive_matrix(n_in, out).T.astype(np.float32)), x.dtype)
        pooled = Reshape()(MatMul()(flat, weights), lead + (out,))
        inverse = tuple(int(i) for i in np.argsort(perm))
        x = Transpose()(pooled, inverse) if axis != x.ndim - 1 else pooled
    return x


@composite("AdaptiveAvgPool2D", functions=("adaptive_avg_pool2d",))
def AdaptiveAvgPool2D(input: Any, output_size: Any = None) -> Tensor:
    """Average of each of ``output_size`` adaptive windows over the last two axes of (N, C, H, W) or
    (C, H, W); see :func:`_adaptive_avg_pool`."""
    x = _tensor(input)
    if x.ndim not in (3, 4):
        raise InvalidParamError(f"AdaptiveAvgPool2D: input must have rank 3 or 4, got shape {x.shape}")
    return _adaptive_avg_pool(x, _adaptive_sizes("AdaptiveAvgPool2D", x.shape, output_size, 2))


@composite("AdaptiveAvgPool3D", functions=("adaptive_avg_pool3d",))
def AdaptiveAvgPool3D(input: Any, output_size: Any = None) -> Tensor:
    """Adaptive average pooling of the last three axes of (N, C, D, H, W) or (C, D, H, W)."""
    x = _tensor(input)
    if x.ndim not in (4, 5):
        raise InvalidParamError(f"AdaptiveAvgPool3D: input must have rank 4 or 5, got shape {x.shape}")
    return _adaptive_avg_pool(x, _adaptive_sizes("AdaptiveAvgPool3D", x.shape, output_size, 3))


def _triple(owner: str, name: str, value: Any) -> tuple[int, int, int]:
    """An int or 3 ints (or MindSpore's 5-tuple form (1, 1, d, h, w)) as (d, h, w), each >= 1."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * 3
    value = tuple(value) if isinstance(value, (tuple, list)) else ()
    if len(value) == 5 and value[:2] == (1, 1):
        value = value[2:]
    if len(value) != 3 or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value):
        raise InvalidParamError(f"{owner}: {name} must be an int >= 1 or a tuple of 3 such ints")
    return value


def _pad6(owner: str, pad: Any) -> tuple[int, ...]:
    pads = (pad,) * 6 if isinstance(pad, int) and not isinstance(pad, bool) else tuple(pad)
    if len(pads) != 6 or any(isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in pads):
        raise InvalidParamError(f"{owner}: pad={pad!r} must be an int >= 0 or 6 such ints (head, tail, top, "
                                f"bottom, left, right)")
    return pads


@composite("Conv3D")
def Conv3D(x: Any, weight: Any, out_channel: int = None, kernel_size: Any = None, mode: int = 1,
           pad_mode: str = "valid", pad: Any = 0, stride: Any = 1, dilation: Any = 1, group: int = 1,
           data_format: str = "NCDHW") -> Tensor:
    """3-D convolution of (N, C, D, H, W) by (O, C / group, kd, kh, kw), composed exactly from Conv2D:
    for each depth tap k, the depth slices it reads (stride and dilation applied) are folded into the
    batch and convolved in H, W with that tap's 2-D kernel; the kd results are summed. Pads are
    (head, tail, top, bottom, left, right); 'same' splits each total as Conv2D does (the smaller half
    first)."""
    owner = "Conv3D"
    x, w = _tensor(x), _tensor(weight)
    if mode != 1 or data_format != "NCDHW":
        raise InvalidParamError(f"{owner}: mode={mode!r}, data_format={data_format!r}: only mode 1 and NCDHW exist")
    if x.ndim != 5 or w.ndim != 5:
        raise InvalidParamError(f"{owner}: x and weight must have rank 5, got shapes {x.shape} and {w.shape}")
    n, c, d, h, wd = x.shape
    o, cg, kd, kh, kw = w.shape
    if out_channel != o or _triple(owner, "kernel_size", kernel_size) != (kd, kh, kw):
        raise InvalidParamError(f"{owner}: out_channel={out_channel!r} and kernel_size={kernel_size!r} must match "
                                f"the weight's shape {w.shape}")
    if isinstance(group, bool) or not isinstance(group, int) or group < 1 or cg * group != c or o % group:
        raise InvalidParamError(f"{owner}: group={group!r} must divide the channels: x {x.shape}, weight {w.shape}")
    (sd, sh, sw), (dd, dh, dw) = _triple(owner, "stride", stride), _triple(owner, "dilation", dilation)
    mode_name = str(pad_mode).lower()
    if mode_name not in ("valid", "same", "pad"):
        raise InvalidParamError(f"{owner}: pad_mode={pad_mode!r} must be 'valid', 'same' or 'pad'")
    pads = _pad6(owner, pad)
    if mode_name != "pad" and any(pads):
        raise InvalidParamError(f"{owner}: pad={pad!r} must be 0 unless pad_mode is 'pad'")
    span = (kd - 1) * dd + 1
    head = tail = 0
    if mode_name == "same":
        total = max((-(-d // sd) - 1) * sd + span - d, 0)
        head, tail = total // 2, total - total // 2
    elif mode_name == "pad":
        head, tail = pads[:2]
    if head or tail:
        x = Pad(((0, 0), (0, 0), (head, tail), (0, 0), (0, 0)))(x)
    depth = d + head + tail
    od = (depth - span) // sd + 1
    if od < 1:
        raise InvalidParamError(f"{owner}: kernel depth {kd} (dilation {dd}) does not fit input depth {d} with pads "
                                f"({head}, {tail})")
    conv = Conv2D(o, (kh, kw), pad_mode=mode_name, pad=pads[2:] if mode_name == "pad" else 0, stride=(sh, sw),
                  dilation=(dh, dw), group=group)
    out = None
    for k in range(kd):
        taps = StridedSlice()(x, (0, 0, k * dd, 0, 0), (n, c, k * dd + (od - 1) * sd + 1, h, wd), (1, 1, sd, 1, 1))
        folded = Reshape()(Transpose()(taps, (0, 2, 1, 3, 4)), (n * od, c, h, wd))
        kernel = Reshape()(StridedSlice()(w, (0, 0, k, 0, 0), (o, cg, k + 1, kh, kw), (1, 1, 1, 1, 1)),
                           (o, cg, kh, kw))
        part = conv(folded, kernel)
        out = part if out is None else out + part
    _, _, oh, ow = out.shape
    return Transpose()(Reshape()(out, (n, od, o, oh, ow)), (0, 2, 1, 3, 4))


def _zero_insert(x: Tensor, axis: int, stride: int) -> Tensor:
    """x with ``stride - 1`` zeros between neighbours along ``axis`` (a transposed conv's dilated input):
    each element stacked with zeros on a new axis, merged, the trailing zeros sliced off."""
    if stride == 1:
        return x
    zero = x * 0
    merged = Stack(axis + 1)([x] + [zero] * (stride - 1))
    shape = x.shape[:axis] + ((x.shape[axis]) * stride,) + x.shape[axis + 1:]
    flat = Reshape()(merged, shape)
    end = list(shape)
    end[axis] = (x.shape[axis] - 1) * stride + 1
    return StridedSlice()(flat, (0,) * x.ndim, tuple(end), (1,) * x.ndim)


@composite("Conv3DTranspose")
def Conv3DTranspose(x: Any, weight: Any, in_channel: int = None, out_channel: int = None, kernel_size: Any = None,
                    mode: int = 1, pad_mode: str = "valid", pad: Any = 0, stride: Any = 1, dilation: Any = 1,
                    group: int = 1, output_padding: Any = 0, data_format: str = "NCDHW") -> Tensor:
    """Transposed 3-D convolution of (N, C_in, D, H, W) by (C_in, C_out / group, kd, kh, kw): the adjoint
    of :class:`Conv3D`, composed as MindSpore's Conv3DBackpropInput computes it: the input dilated by
    the stride (zeros between neighbours), convolved fully (pads dilation * (k - 1)) with the kernel
    flipped in space and its channel axes swapped; the full result is cropped by the pads (head, tail,
    ...; 'same' splits k - stride with the smaller half first, so the output is input * stride; 'valid'
    crops nothing) and ``output_padding`` adds rows at the far end."""
    owner = "Conv3DTranspose"
    x, w = _tensor(x), _tensor(weight)
    if mode != 1 or data_format != "NCDHW":
        raise InvalidParamError(f"{owner}: mode={mode!r}, data_format={data_format!r}: only mode 1 and NCDHW exist")
    if x.ndim != 5 or w.ndim != 5:
        raise InvalidParamError(f"{owner}: x and weight must have rank 5, got shapes {x.shape} and {w.shape}")
    n, c, *size = x.shape
    ci, og, *kernel = w.shape
    if isinstance(group, bool) or not isinstance(group, int) or group < 1 or c % group or ci != c:
        raise InvalidParamError(f"{owner}: group={group!r}, x {x.shape} and weight {w.shape} do not agree: "
                                f"weight must be (C_in, C_out / group, kd, kh, kw)")
    if in_channel != c or out_channel != og * group or _triple(owner, "kernel_size", kernel_size) != tuple(kernel):
        raise InvalidParamError(f"{owner}: in_channel={in_channel!r}, out_channel={out_channel!r} and kernel_size="
                                f"{kernel_size!r} must match x {x.shape} and the weight {w.shape}")
    strides, dilations = _triple(owner, "stride", stride), _triple(owner, "dilation", dilation)
    if dilations[0] != 1:
        raise InvalidParamError(f"{owner}: the depth of dilation must be 1 (as MindSpore checks), got {dilation!r}")
    extra = (output_padding,) * 3 if isinstance(output_padding, int) else tuple(output_padding)
    if len(extra) == 5:
        extra = extra[2:]
    if len(extra) != 3 or any(not isinstance(e, int) or e < 0 for e in extra):
        raise InvalidParamError(f"{owner}: output_padding={output_padding!r} must be an int >= 0 or 3 such ints")
    mode_name = str(pad_mode).lower()
    if mode_name not in ("valid", "same", "pad"):
        raise InvalidParamError(f"{owner}: pad_mode={pad_mode!r} must be 'valid', 'same' or 'pad'")
    pads = _pad6(owner, pad)
    if mode_name != "pad" and any(pads):
        raise InvalidParamError(f"{owner}: pad={pad!r} must be 0 unless pad_mode is 'pad'")
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    fulls = [(s - 1) * st + span for s, st, span in zip(size, strides, spans)]
    if mode_name == "same":
        heads = [max(span - st, 0) // 2 for span, st in zip(spans, strides)]
        outs = [s * st for s, st in zip(size, strides)]
    else:
        heads = list(pads[0::2]) if mode_name == "pad" else [0, 0, 0]
        outs = [f - p0 - p1 for f, p0, p1 in zip(fulls, pads[0::2], pads[1::2])] if mode_name == "pad" else fulls
        outs = [o + e for o, e in zip(outs, extra)]
    if any(e >= max(st, d) for e, st, d in zip(extra, strides, dilations)):
        raise InvalidParamError(f"{owner}: output_padding={output_padding!r} must be smaller than the stride "
                                f"or the dilation")
    if min(outs) < 1:
        raise InvalidParamError(f"{owner}: the pads {pads} leave no output of x {x.shape}")
    for axis, st in enumerate(strides):
        x = _zero_insert(x, axis + 2, st)
    full_pads = tuple(p for span in spans for p in (span - 1, span - 1))
    flipped = ReverseV2((2, 3, 4))(w)
    swapped = Reshape()(Transpose()(Reshape()(flipped, (group, c // group, og, *kernel)), (0, 2, 1, 3, 4, 5)),
                        (group * og, c // group, *kernel))
    full = Conv3D(group * og, tuple(kernel), pad_mode="pad", pad=full_pads, dilation=dilations, group=group)(x, swapped)
    # crop [head, head + out) per axis; where that runs past the full result (output_padding, or 'same'
    # with a stride above the kernel span) the extra rows receive no input: zeros
    tails = [max(h + o - f, 0) for h, o, f in zip(heads, outs, fulls)]
    if any(tails):
        full = Pad(((0, 0), (0, 0)) + tuple((0, t) for t in tails))(full)
    return StridedSlice()(full, (0, 0, *heads), (n, group * og, *[h + o for h, o in zip(heads, outs)]),
                          (1, 1, 1, 1, 1))



@composite("LRN", functions=("lrn",))
def LRN(x: Any, depth_radius: int = 5, bias: float = 1.0, alpha: float = 1.0, beta: float = 0.5,
        norm_region: str = "ACROSS_CHANNELS") -> Tensor:
    """Local response normalisation of NCHW x across channels (TensorFlow's formula, which MindSpore's
    kernel has): ``x / (bias + alpha * sum(x[c - r .. c + r]^2)) ** beta``, the channel window clipped
    at the ends (zero padding)."""
    x = _tensor(x)
    if isinstance(depth_radius, bool) or not isinstance(depth_radius, int) or depth_radius < 0:
        raise InvalidParamError(f"LRN: depth_radius={depth_radius!r} must be an int >= 0")
    for name, value in (("bias", bias), ("alpha", alpha), ("beta", beta)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidParamError(f"LRN: {name}={value!r} must be a float")
    if norm_region != "ACROSS_CHANNELS":
        raise InvalidParamError(f"LRN: norm_region={norm_region!r} must be 'ACROSS_CHANNELS'")
    if x.ndim != 4:
        raise InvalidParamError(f"LRN: x must be 4-D (N, C, H, W), got shape {x.shape}")
    n, c, h, w = x.shape
    r = depth_radius
    padded = Pad(((0, 0), (r, r), (0, 0), (0, 0)))(x * x)
    window = None
    for k in range(2 * r + 1):
        part = StridedSlice()(padded, (0, k, 0, 0), (n, k + c, h, w), (1, 1, 1, 1))
        window = part if window is None else window + part
    return x / apply_op("Pow", [window * alpha + bias, _cast(Tensor(np.array(beta, np.float32)), x.dtype)])[0]


# ---- detection (issue 21): ROIAlign (a kernel, kernels/ops/misc.py) and L2Normalize (a composition) ----
from .math_ops import Sqrt as _Sqrt  # noqa: E402


class ROIAlign(_Op):
    """``ROIAlign(pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1)(features,
    rois)``: (R, C, pooled_height, pooled_width) bilinear averages of each roi's bins (Mask R-CNN's RoI
    Align; rois are (image index, x0, y0, x1, y1)); its gradient flows to the features (ROIAlignGrad)."""

    def __init__(self, pooled_height: int, pooled_width: int, spatial_scale: float, sample_num: int = 2,
                 roi_end_mode: int = 1):
        super().__init__()
        for name, value in (("pooled_height", pooled_height), ("pooled_width", pooled_width),
                            ("sample_num", sample_num), ("roi_end_mode", roi_end_mode)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"For '{self.name}', the type of '{name}' must be int, but got {type(value).__name__}")
        if isinstance(spatial_scale, bool) or not isinstance(spatial_scale, float):
            raise TypeError(f"For '{self.name}', the type of 'spatial_scale' must be float, "
                            f"but got {type(spatial_scale).__name__}")
        if roi_end_mode not in (0, 1):
            raise ValueError(f"For '{self.name}', 'roi_end_mode' must be in [0, 1], but got {roi_end_mode}")
        self.pooled_height, self.pooled_width, self.spatial_scale = pooled_height, pooled_width, spatial_scale
        self.sample_num, self.roi_end_mode = sample_num, roi_end_mode

    def __call__(self, features: Any, rois: Any) -> Tensor:
        return apply_op("ROIAlign", [features, rois],
                        {"pooled_height": self.pooled_height, "pooled_width": self.pooled_width,
                         "spatial_scale": self.spatial_scale, "sample_num": self.sample_num,
                         "roi_end_mode": self.roi_end_mode})[0]


@composite("L2Normalize")
def L2Normalize(x: Any, axis: Any = 0, epsilon: float = 1e-4) -> Tensor:
    """``x / sqrt(max(sum(x^2 over axis), epsilon))`` (MindSpore's L2Normalize; axis an int, or a list or
    tuple of ints)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
        raise TypeError(f"For 'L2Normalize', the type of 'epsilon' must be int or float, "
                        f"but got {type(epsilon).__name__}")
    axes = [axis] if isinstance(axis, int) and not isinstance(axis, bool) else axis
    if not isinstance(axes, (list, tuple)):
        raise TypeError(f"For 'L2Normalize', the type of 'axis' must be int, list or tuple, "
                        f"but got {type(axis).__name__}")
    x = _tensor(x)
    if x.ndim == 0:
        raise ValueError("For 'L2Normalize', the dimension of 'x' must be greater than 0, but got 0")
    axes = tuple(check_int(a, "L2Normalize: axis", minimum=-x.ndim, maximum=x.ndim - 1) for a in axes)
    square_sum = ReduceSum(True)(x * x, axes)
    return x / _Sqrt()(Maximum()(square_sum, float(epsilon)))


# ---- losses ----
# Loss primitives: compositions of registry ops (composite stanzas, so the gradient comes from the
# parts), plus the primitive faces of the fused softmax cross-entropy kernels. The math is MindSpore's
# (ops/function/nn_func.py, its CPU kernels); tests/fixtures/losses_breadth.json holds its numbers.

# imported here, in the section this part of the file owns (the module's import block is shared)
from ...common import dtype as mstype  # noqa: E402
from .array_ops import Cast, OnesLike, Reshape, ZerosLike  # noqa: E402
from .math_ops import NotEqual, Pow, Sqrt  # noqa: E402

# log(x) of a probability is clamped at log(BCE_EPSILON), as MindSpore's BinaryCrossEntropy kernel does
BCE_EPSILON = 1e-12


def _loss_dtype(name: str, *tensors: Tensor) -> Any:
    """The common float dtype of a loss's inputs (MindSpore refuses other dtypes)."""
    dtype = tensors[0].dtype
    if dtype.name not in ("float16", "float32", "float64", "bfloat16"):
        raise InvalidParamError(f"{name}: input must be a float tensor, got {dtype}")
    return dtype


def _float_input(name: str, x: Any, dtype: Any = None) -> Tensor:
    """Operand ``name`` as a Tensor of ``dtype`` (a Python number or another float dtype cast)."""
    x = _tensor(x)
    return x if dtype is None or x.dtype == dtype else Cast()(x, dtype)


def _class_hot(target: Any, classes: int, dtype: Any) -> Tensor:
    """Rows one-hot at each sample's class index (zeros for an index outside [0, classes))."""
    on, off = Tensor(np.ones((), np.float32)), Tensor(np.zeros((), np.float32))
    return Cast()(OneHot()(Cast()(_tensor(target), mstype.int32), classes, on, off), dtype)


def _softplus_of(x: Tensor) -> Tensor:
    """log(1 + exp(x)), stable for large |x|: max(x, 0) + log(1 + exp(-|x|))."""
    return Maximum()(x, 0.0) + Log()(Exp()(-Abs()(x)) + 1.0)


@composite("MultilabelMarginLoss")
def MultilabelMarginLoss(input: Any, target: Any, reduction: str = "mean") -> tuple[Tensor, Tensor]:
    """``(loss, is_target)`` of (C,) or (N, C) scores and int32 target class lists (each ended by its first
    -1): per sample ``sum_{j target, i not target} max(0, 1 - (x_j - x_i)) / C``, then reduced; is_target
    marks the target classes (int32, the input's shape). ``ops.multilabel_margin_loss`` returns the loss."""
    from .array_ops import CumSum

    check_reduction(reduction)
    x, y = _tensor(input), _tensor(target)
    dtype = _loss_dtype("multilabel_margin_loss", x)
    if y.dtype != mstype.int32:
        raise TypeError(f"For 'MultilabelMarginLoss', the 'target' must be int32, but got {y.dtype}.")
    if x.ndim not in (1, 2) or tuple(y.shape) != tuple(x.shape):
        raise ValueError(f"For 'MultilabelMarginLoss', 'x' must be 1-D or 2-D and 'target' of its shape, but got "
                         f"{x.shape} and {y.shape}.")
    rows, classes = (1, x.shape[0]) if x.ndim == 1 else tuple(x.shape)
    x2, y2 = Reshape()(x, (rows, classes)), Reshape()(y, (rows, classes))
    ended = 1.0 - Cast()(NotEqual()(y2, -1), dtype)
    valid = 1.0 - Cast()(NotEqual()(CumSum()(ended, 1), 0.0), dtype)             # (N, J): before the first -1
    hot = Reshape()(_class_hot(Reshape()(y2, (-1,)), classes, dtype), (rows, classes, classes))
    hot = hot * Reshape()(valid, (rows, classes, 1))                              # (N, J, I)
    is_target = Minimum()(ReduceSum()(hot, 1), 1.0)                                # (N, I)
    picked = ReduceSum()(hot * Reshape()(x2, (rows, 1, classes)), 2)               # (N, J): x at target j
    gap = Maximum()(1.0 - Reshape()(picked, (rows, classes, 1)) + Reshape()(x2, (rows, 1, classes)), 0.0)
    gap = gap * Reshape()(1.0 - is_target, (rows, 1, classes)) * Reshape()(valid, (rows, classes, 1))
    loss = ReduceSum()(gap, (1, 2)) / float(classes)
    if x.ndim == 1:
        loss = Reshape()(loss, ())
    return reduce_loss(loss, reduction), Reshape()(Cast()(is_target, mstype.int32), tuple(x.shape))


CTC_REDUCTIONS = ("none", "mean", "sum")


def _int32_tensor(x: Any) -> Tensor:
    """A length or target operand (a Tensor, or a tuple/list of ints) as an int32 Tensor."""
    if not isinstance(x, Tensor):
        x = Tensor(np.asarray(x, np.int32))
    return x if x.dtype == mstype.int32 else Cast()(x, mstype.int32)


class CTCLossV2(_Op):
    """``CTCLossV2(blank=0, reduction='none', zero_infinity=False)(log_probs, targets, input_lengths,
    target_lengths) -> (neg_log_likelihood, log_alpha)``: the CTC kernel (kernels/ops/loss.py) on (T, N, C)
    log probabilities and padded (N, S) targets; a loss ``zero_infinity`` sets to 0 has a zero gradient.
    Only reduction 'none' is served by the primitive (``ops.ctc_loss`` reduces)."""

    def __init__(self, blank: int = 0, reduction: str = "none", zero_infinity: bool = False):
        super().__init__()
        if isinstance(blank, bool) or not isinstance(blank, int):
            raise TypeError(f"For 'CTCLossV2', the 'blank' must be int, but got {type(blank).__name__}.")
        if reduction not in CTC_REDUCTIONS:
            raise ValueError(f"For 'CTCLossV2', 'reduction' must be in {list(CTC_REDUCTIONS)}, but got {reduction}.")
        if reduction != "none":
            raise InvalidParamError(f"CTCLossV2: reduction={reduction!r} is not served by the primitive; use "
                                    f"ops.ctc_loss(..., reduction={reduction!r})")
        if not isinstance(zero_infinity, bool):
            raise TypeError(f"For 'CTCLossV2', the 'zero_infinity' must be bool, but got "
                            f"{type(zero_infinity).__name__}.")
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def __call__(self, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any) -> tuple[Tensor, Tensor]:
        operands = [_tensor(log_probs), _int32_tensor(targets), _int32_tensor(input_lengths),
                    _int32_tensor(target_lengths)]
        return tuple(apply_op("CTCLossV2", operands, {"blank": self.blank, "zero_infinity": self.zero_infinity}))


class CTCLoss(_Op):
    """``CTCLoss(preprocess_collapse_repeated=False, ctc_merge_repeated=True,
    ignore_longer_outputs_than_inputs=False)(x, labels_indices, labels_values, sequence_length) -> (loss,
    gradient)``: TensorFlow-style CTC of (max_time, batch, classes) logits, the blank the last class, the
    labels sparse ((batch, position) index pairs and their values). Computed as the CTC kernel of
    log_softmax(x) on the labels made dense (padded to the number of labels); ``gradient`` is
    d loss / d x (softmax minus the alignment posterior, CTCLossV2Grad). Only the defaults of the three
    options are served (standard CTC)."""

    def __init__(self, preprocess_collapse_repeated: bool = False, ctc_merge_repeated: bool = True,
                 ignore_longer_outputs_than_inputs: bool = False):
        super().__init__()
        for name, value, served in (("preprocess_collapse_repeated", preprocess_collapse_repeated, False),
                                    ("ctc_merge_repeated", ctc_merge_repeated, True),
                                    ("ignore_longer_outputs_than_inputs", ignore_longer_outputs_than_inputs, False)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'CTCLoss', the '{name}' must be bool, but got {type(value).__name__}.")
            if value is not served:
                raise InvalidParamError(f"CTCLoss: {name}={value} is not supported; leave it at {served} "
                                        f"(standard CTC)")
        self.preprocess_collapse_repeated = preprocess_collapse_repeated
        self.ctc_merge_repeated = ctc_merge_repeated
        self.ignore_longer_outputs_than_inputs = ignore_longer_outputs_than_inputs

    def __call__(self, x: Any, labels_indices: Any, labels_values: Any, sequence_length: Any) -> tuple[Tensor, Tensor]:
        from .array_ops import ScatterNd, UnsortedSegmentSum

        x = _tensor(x)
        if x.ndim != 3:
            raise ValueError(f"For 'CTCLoss', the dimension of 'x' must be 3, but got {x.ndim}.")
        batch, classes = x.shape[1], x.shape[2]
        indices = Cast()(_tensor(labels_indices), mstype.int32)
        values = _int32_tensor(labels_values)
        count = values.shape[0]
        targets = ScatterNd()(indices, values, (batch, max(count, 1)))
        rows = Reshape()(indices[:, 0:1], (count,))
        lengths = UnsortedSegmentSum()(OnesLike()(values), rows, batch)
        log_probs = LogSoftmax(-1)(x)
        operands = [log_probs, targets, _int32_tensor(sequence_length), lengths]
        attrs = {"blank": classes - 1, "zero_infinity": False}
        loss, log_alpha = apply_op("CTCLossV2", operands, attrs)
        ones = OnesLike()(loss)
        gradient = apply_op("CTCLossV2Grad", [ones] + operands + [loss, log_alpha], attrs)[0]
        return loss, StopGradient()(gradient)


@composite("BinaryCrossEntropy", functions=("binary_cross_entropy",), rename={"logits": "input", "labels": "target"})
def BinaryCrossEntropy(input: Any, target: Any, weight: Any = None, reduction: str = "mean") -> Tensor:
    """``-w (y log(x) + (1 - y) log(1 - x))`` of probabilities x, each log clamped at log(1e-12) as in
    MindSpore's kernel; then reduced."""
    check_reduction(reduction)
    x = _tensor(input)
    y = _float_input("binary_cross_entropy", target, _loss_dtype("binary_cross_entropy", x))
    loss = -(y * Log()(Maximum()(x, BCE_EPSILON)) + (1.0 - y) * Log()(Maximum()(1.0 - x, BCE_EPSILON)))
    return reduce_loss(loss, reduction, None if weight is None else _float_input("weight", weight, x.dtype))


KL_REDUCTIONS = ("none", "mean", "batchmean", "sum")


@composite("KLDivLoss", functions=("kl_div",))
def KLDivLoss(logits: Any, labels: Any, reduction: str = "mean") -> Tensor:
    """``labels (log(labels) - logits)`` (0 where labels is 0); 'mean' over every element,
    'batchmean' over the first dimension, as ops.kl_div."""
    if reduction not in KL_REDUCTIONS:
        raise InvalidParamError(f"kl_div: reduction={reduction!r} must be one of {KL_REDUCTIONS}")
    x = _tensor(logits)
    y = _float_input("kl_div", labels, _loss_dtype("kl_div", x))
    positive = Greater()(y, 0.0)
    safe = Select()(positive, y, OnesLike()(y))          # log(1) = 0 where the label is 0: no inf, no NaN
    loss = Select()(positive, y * (Log()(safe) - x), ZerosLike()(y))
    if reduction == "batchmean":
        return ReduceSum()(loss) / float(x.shape[0] if x.ndim else 1)
    return reduce_loss(loss, reduction)


@composite("SoftMarginLoss", functions=("soft_margin_loss",))
def SoftMarginLoss(input: Any, target: Any, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-y x))`` for targets y in {1, -1}, then reduced."""
    check_reduction(reduction)
    x = _tensor(input)
    y = _float_input("soft_margin_loss", target, _loss_dtype("soft_margin_loss", x))
    return reduce_loss(_softplus_of(-(y * x)), reduction)


@composite("L2Loss")
def L2Loss(input: Any) -> Tensor:
    """``sum(x^2) / 2`` over every element."""
    x = _tensor(input)
    return ReduceSum()(x * x) * 0.5


@composite("BCEWithLogitsLoss")
def BCEWithLogitsLoss(input: Any, target: Any, weight: Any = None, posWeight: Any = None,
                      reduction: str = "mean") -> Tensor:
    """Binary cross entropy of logits, stably: ``(1 - y) x + (1 + (pw - 1) y) softplus(-x)``."""
    check_reduction(reduction)
    x = _tensor(input)
    y = _float_input("BCEWithLogitsLoss", target, _loss_dtype("BCEWithLogitsLoss", x))
    scale = 1.0 if posWeight is None else (_float_input("posWeight", posWeight, x.dtype) - 1.0) * y + 1.0
    loss = (1.0 - y) * x + scale * _softplus_of(-x)
    return reduce_loss(loss, reduction, None if weight is None else _float_input("weight", weight, x.dtype))


@composite("MultiMarginLoss", functions=("multi_margin_loss",), rename={"input": "x"})
def MultiMarginLoss(x: Any, target: Any, weight: Any = None, p: int = 1, margin: float = 1.0,
                    reduction: str = "mean") -> Tensor:
    """Per sample ``sum_{j != y} w_y max(0, margin - x_y + x_j)^p / C`` of (N, C) scores and class
    indices y (p 1 or 2), then reduced."""
    check_reduction(reduction)
    if p not in (1, 2):
        raise InvalidParamError(f"multi_margin_loss: p={p!r} must be 1 or 2")
    x = _tensor(x)
    if x.ndim != 2:
        raise InvalidParamError(f"multi_margin_loss: input must be (N, C), got shape {x.shape}")
    classes = x.shape[1]
    hot = _class_hot(target, classes, _loss_dtype("multi_margin_loss", x))
    picked = ReduceSum(keep_dims=True)(x * hot, 1)
    gap = Maximum()(x - picked + float(margin), 0.0) * (1.0 - hot)
    if p == 2:
        gap = gap * gap
    if weight is not None:
        gap = gap * ReduceSum(keep_dims=True)(hot * Reshape()(_float_input("weight", weight, x.dtype), (1, -1)), 1)
    return reduce_loss(ReduceSum()(gap, 1) / float(classes), reduction)


def _pairwise_distance(a: Tensor, b: Tensor, p: float, eps: float) -> Tensor:
    """``||a - b + eps||_p`` over the last dimension (PyTorch's and MindSpore's pairwise distance)."""
    diff = Abs()(a - b + eps)
    if p == 2:
        return Sqrt()(ReduceSum()(diff * diff, -1))
    if p == 1:
        return ReduceSum()(diff, -1)
    return Pow()(ReduceSum()(Pow()(diff, float(p)), -1), 1.0 / p)


@composite("TripletMarginLoss", functions=("triplet_margin_loss",), rename={"anchor": "x"})
def TripletMarginLoss(x: Any, positive: Any, negative: Any, margin: Any, p: int = 2, eps: float = 1e-6,
                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(d(a, pos) - d(a, neg) + margin, 0)`` with d the p-norm distance over the last dimension
    (``swap``: d(a, neg) replaced by the smaller d(pos, neg)), then reduced."""
    check_reduction(reduction)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p <= 0:
        raise InvalidParamError(f"triplet_margin_loss: p={p!r} must be a positive number")
    a = _tensor(x)
    _loss_dtype("triplet_margin_loss", a)
    pos, neg = _float_input("positive", positive, a.dtype), _float_input("negative", negative, a.dtype)
    d_pos, d_neg = _pairwise_distance(a, pos, p, eps), _pairwise_distance(a, neg, p, eps)
    if swap:
        d_neg = Minimum()(d_neg, _pairwise_distance(pos, neg, p, eps))
    margin = float(margin) if not isinstance(margin, Tensor) else Cast()(margin, a.dtype)
    return reduce_loss(Maximum()(d_pos - d_neg + margin, 0.0), reduction)


class SoftmaxCrossEntropyWithLogits(_Op):
    """``SoftmaxCrossEntropyWithLogits()(logits, labels) -> (loss, backprop)``: per-sample cross entropy
    of (N, C) logits against probability rows, and its gradient softmax - labels (the fused kernel)."""

    def __call__(self, logits: Any, labels: Any) -> tuple[Tensor, Tensor]:
        x = _tensor(logits)
        return tuple(apply_op("SoftmaxCrossEntropyWithLogits", [x, _float_input("labels", labels, x.dtype)]))


class SparseSoftmaxCrossEntropyWithLogits(_Op):
    """``SparseSoftmaxCrossEntropyWithLogits(is_grad=False)(logits, labels)``: the batch mean of the
    cross entropy against class indices; with ``is_grad``, its gradient (softmax - one-hot) / N."""

    def __init__(self, is_grad: bool = False):
        super().__init__()
        self.is_grad = bool(is_grad)

    def __call__(self, logits: Any, labels: Any) -> Tensor:
        x = _tensor(logits)
        loss, backprop = apply_op("SparseSoftmaxCrossEntropyWithLogits", [x, Cast()(_tensor(labels), mstype.int32)])
        if self.is_grad:
            return backprop / float(x.shape[0])
        return ReduceMean()(loss)


class NLLLoss(_Op):
    """``NLLLoss(reduction='mean', ignore_index=-100)(logits, labels, weight) -> (loss, total_weight)``:
    ``-w_y x_y`` per sample of (N, C) log-probabilities; 'mean' divides by total_weight, the summed
    weights of the samples that count (ignore_index left out)."""

    def __init__(self, reduction: str = "mean", ignore_index: int = -100):
        super().__init__()
        self.reduction, self.ignore_index = check_reduction(reduction), check_int(ignore_index, "ignore_index")

    def __call__(self, logits: Any, labels: Any, weight: Any) -> tuple[Tensor, Tensor]:
        x = _tensor(logits)
        if x.ndim != 2:
            raise InvalidParamError(f"NLLLoss: logits must be (N, C), got shape {x.shape}")
        dtype = _loss_dtype("NLLLoss", x)
        labels = Cast()(_tensor(labels), mstype.int32)
        hot = _class_hot(labels, x.shape[1], dtype)
        keep = Cast()(NotEqual()(labels, self.ignore_index), dtype)
        w = ReduceSum()(hot * Reshape()(_float_input("weight", weight, dtype), (1, -1)), 1) * keep
        loss = -ReduceSum()(hot * x, 1) * w
        total = ReduceSum()(w)
        if self.reduction == "none":
            return loss, total
        if self.reduction == "sum":
            return ReduceSum()(loss), total
        return ReduceSum()(loss) / total, total


# Optimizer updates: MindSpore's Apply* primitives over the fused update kernels (kernels/ops/optim.py).
class _ApplyUpdate(_Op):
    """An optimizer-update primitive: runs its kernel on MindSpore's operands (var and its state first,
    then rates and the gradient) and assigns the new values to those of var and its state that are
    Parameters, in place as MindSpore's are; returns the first ``returns`` new values."""
    op = ""
    operands: tuple[str, ...] = ()
    states = 1          # leading operands updated in place
    returns = 1

    def update_attrs(self) -> dict:
        return {}

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.operands):
            raise TypeError(f"{self.name}() takes {len(self.operands)} inputs ({', '.join(self.operands)}), "
                            f"got {len(args)}")
        var = _tensor(args[0])
        inputs = [var] + [_float_input(n, a, var.dtype) for n, a in zip(self.operands[1:], args[1:])]
        outs = apply_op(self.op, inputs, self.update_attrs())
        for target, new in zip(args[:self.states], outs):
            if getattr(target, "is_parameter", False):
                Assign()(target, new)
        return outs[0] if self.returns == 1 else tuple(outs[:self.returns])


class ApplyMomentum(_ApplyUpdate):
    """``accum = accum * momentum + grad; var -= lr * accum`` (nesterov: ``var -= lr * grad + lr *
    momentum * accum``); returns var."""
    op, operands, states = "ApplyMomentum", ("variable", "accumulation", "learning_rate", "gradient", "momentum"), 2

    def __init__(self, use_nesterov: bool = False, use_locking: bool = False, gradient_scale: float = 1.0):
        super().__init__()
        if gradient_scale != 1.0:
            raise InvalidParamError(f"ApplyMomentum: gradient_scale={gradient_scale!r} is not supported; scale the "
                                    f"gradient before the update and leave it 1.0")
        self.use_nesterov, self.use_locking = bool(use_nesterov), bool(use_locking)

    def update_attrs(self) -> dict:
        return {"use_nesterov": self.use_nesterov}


class Adam(_ApplyUpdate):
    """MindSpore's ApplyAdam: bias correction in the rate, epsilon outside it; returns (var, m, v)."""
    op, states, returns = "Adam", 3, 3
    operands = ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "gradient")

    def __init__(self, use_locking: bool = False, use_nesterov: bool = False):
        super().__init__()
        self.use_locking, self.use_nesterov = bool(use_locking), bool(use_nesterov)

    def update_attrs(self) -> dict:
        return {"use_nesterov": self.use_nesterov}


class AdamWeightDecay(_ApplyUpdate):
    """Adam without bias correction, decoupled decay: ``var -= lr * (m / (sqrt(v) + eps) + decay * var)``;
    returns (var, m, v)."""
    op, states, returns = "AdamWeightDecay", 3, 3
    operands = ("var", "m", "v", "lr", "beta1", "beta2", "epsilon", "decay", "gradient")

    def __init__(self, use_locking: bool = False):
        super().__init__()
        self.use_locking = bool(use_locking)

    def __call__(self, var: Any, m: Any, v: Any, lr: Any, beta1: Any, beta2: Any, epsilon: Any, decay: Any,
                 gradient: Any) -> Any:
        return super().__call__(var, m, v, lr, beta1, beta2, epsilon, decay, gradient)


class ApplyRMSProp(_ApplyUpdate):
    """``ms = decay ms + (1 - decay) g^2; mom = momentum mom + lr g / sqrt(ms + eps); var -= mom``;
    returns var."""
    op, states = "ApplyRMSProp", 3
    operands = ("var", "mean_square", "moment", "learning_rate", "grad", "decay", "momentum", "epsilon")

    def __init__(self, use_locking: bool = False):
        super().__init__()
        self.use_locking = bool(use_locking)


class ApplyCenteredRMSProp(ApplyRMSProp):
    """RMSProp with the gradient's running mean taken out of the variance; returns var."""
    op, states = "ApplyCenteredRMSProp", 4
    operands = ("var", "mean_gradient", "mean_square", "mom", "grad", "lr", "decay", "momentum", "epsilon")


class ApplyAdagrad(_ApplyUpdate):
    """``accum += g^2`` (with update_slots); ``var -= lr g / sqrt(accum)``; returns (var, accum)."""
    op, operands, states, returns = "ApplyAdagrad", ("var", "accum", "lr", "grad"), 2, 2

    def __init__(self, update_slots: bool = True):
        super().__init__()
        self.update_slots = bool(update_slots)

    def update_attrs(self) -> dict:
        return {"update_slots": self.update_slots}


class ApplyAdadelta(_ApplyUpdate):
    """Adadelta's update; returns (var, accum, accum_update)."""
    op, states, returns = "ApplyAdadelta", 3, 3
    operands = ("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad")


class ApplyAdaMax(_ApplyUpdate):
    """``m = b1 m + (1 - b1) g; v = max(b2 v, |g|); var -= lr / (1 - b1_power) m / (v + eps)``; returns
    (var, m, v)."""
    op, states, returns = "ApplyAdaMax", 3, 3
    operands = ("var", "m", "v", "beta1_power", "lr", "beta1", "beta2", "epsilon", "grad")


class ApplyProximalAdagrad(_ApplyUpdate):
    """Adagrad's step, then the proximal l1/l2 shrinkage; returns (var, accum)."""
    op, operands, states, returns = "ApplyProximalAdagrad", ("var", "accum", "lr", "l1", "l2", "grad"), 2, 2

    def __init__(self, use_locking: bool = False):
        super().__init__()
        self.use_locking = bool(use_locking)


class ApplyFtrl(_ApplyUpdate):
    """FTRL-proximal's update of var, accum and linear; returns var."""
    op, operands, states = "ApplyFtrl", ("var", "accum", "linear", "grad", "lr", "l1", "l2", "lr_power"), 3

    def __init__(self, use_locking: bool = False):
        super().__init__()
        self.use_locking = bool(use_locking)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.nn_ops", name, __all__)
