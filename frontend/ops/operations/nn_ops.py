"""``mindspore.ops.operations.nn_ops``: the neural-network primitives, where MindSpore defines them:
the registry's elementwise activations (generated), softmax, convolutions, pooling, normalisation,
padding, losses and dropout (with its counter-based generator state)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError, RuntimeParamError, TensorIndexError

from ...common.parameter import GeneratorState
from ...common.recompute import primitive_marks
from ...common.seed import graph_seed
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import (_check_format, _int_tuple, _pad4, _pair, _probability, _seed_arg, _static_int, _static_ints,
                      check_arg_int, check_value_type, defined_here)
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
        raise InvalidValueError(f"reduction={reduction!r} must be one of {REDUCTIONS}")
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
        x = _tensor(input_x)
        if not x.shape:      # MindSpore's shape inference refuses a scalar (its RuntimeError)
            raise RuntimeParamError("Flatten: Unsupported input shape dimension. The shape should not be empty: "
                                    "input_x is a scalar; reshape it to (1,)")
        return apply_op("Flatten", [x])[0]


class OneHot(_Op):
    """``OneHot(axis=-1)(indices, depth, on_value, off_value)``: a new dimension of size ``depth`` at
    ``axis``, holding on_value where its position equals the index and off_value elsewhere (also for
    every position of an index outside [0, depth))."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = check_arg_int(axis, "OneHot: axis", minimum=-1)

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
    if not isinstance(input, Tensor):
        raise InvalidTypeError(f"For Primitive[Softplus], the type of input argument[x] must be Tensor but got "
                               f"{type(input).__name__}")
    scaled = input * beta if beta != 1 else input
    soft = Maximum()(scaled, 0) + Log()(Exp()(-Abs()(scaled)) + 1)
    if beta != 1:
        soft = soft / beta
    return Select()(Greater()(scaled, threshold), input, soft)


def elu_of(input_x: Any, alpha: float) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (the exponential taken of ``min(x, 0)`` so the
    branch not taken never overflows), of any alpha: SeLU's, and mint's elu (Ascend's EluExt)."""
    negative = (Exp()(Minimum()(input_x, 0)) - 1) * alpha
    return Select()(Greater()(input_x, 0), input_x, negative)


@composite("Elu", functions=("elu",))
def Elu(input_x: Any, alpha: float = 1.0) -> Tensor:
    """:func:`elu_of` with alpha 1.0, the only one MindSpore 2.10's Elu (ops.elu, nn.ELU) takes."""
    if alpha != 1.0:
        raise InvalidValueError(f"For 'Elu', alpha must be 1.0, got {alpha!r} (MindSpore's Elu takes no other); "
                                f"mint.nn.functional.elu takes any alpha")
    return elu_of(input_x, 1.0)


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
        raise InvalidValueError(f"PReLU: weight has {w.shape[0]} elements; it must have 1 or as many as the "
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
    return elu_of(input_x, SELU_ALPHA) * SELU_SCALE


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
    axis = check_arg_int(axis, "GLU: axis", minimum=-x.ndim, maximum=x.ndim - 1)
    if x.shape[axis] % 2:
        raise InvalidValueError(f"GLU: dim {axis} of shape {x.shape} must be even")
    a, b = Split(axis, 2)(x)
    return a * apply_op("Sigmoid", [b])[0]


_GLU_BODY_CALL = GLU.__call__


def _glu_primitive_call(self: Any, *args: Any, **kwargs: Any) -> Tensor:
    """The GLU primitive (also mint's glu) is checked by MindSpore's C++ shape inference (glu.cc): an axis
    out of range is an IndexError, an odd halving dimension a RuntimeError; ops.glu and nn.GLU (a Split)
    refuse the odd dimension with the body's ValueError."""
    x = args[0] if args else next(iter(kwargs.values()), None)
    axis = self._attrs.get("axis", -1)
    if isinstance(x, Tensor) and isinstance(axis, int) and not isinstance(axis, bool):
        if not -max(x.ndim, 1) <= axis < max(x.ndim, 1):
            raise TensorIndexError(f"GLU: dimension should be in range of [{-x.ndim}, {x.ndim - 1}], got {axis}")
        if x.ndim and x.shape[axis] % 2:
            raise RuntimeParamError(f"GLU: halving dimension must be even, but dimension {axis} is size "
                                    f"{x.shape[axis]}")
    return _GLU_BODY_CALL(self, *args, **kwargs)


_glu_primitive_call.__signature__ = getattr(_GLU_BODY_CALL, "__signature__", None)
_glu_primitive_call.__name__ = _GLU_BODY_CALL.__name__
GLU.__call__ = _glu_primitive_call


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
        raise InvalidValueError(f"{owner}: output_size={output_size!r} must be an int >= 1 or a tuple of {dims} "
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
        raise InvalidValueError(f"AdaptiveAvgPool2D: input must have rank 3 or 4, got shape {x.shape}")
    return _adaptive_avg_pool(x, _adaptive_sizes("AdaptiveAvgPool2D", x.shape, output_size, 2))


@composite("AdaptiveAvgPool3D", functions=("adaptive_avg_pool3d",))
def AdaptiveAvgPool3D(input: Any, output_size: Any = None) -> Tensor:
    """Adaptive average pooling of the last three axes of (N, C, D, H, W) or (C, D, H, W)."""
    x = _tensor(input)
    if x.ndim not in (4, 5):
        raise InvalidValueError(f"AdaptiveAvgPool3D: input must have rank 4 or 5, got shape {x.shape}")
    return _adaptive_avg_pool(x, _adaptive_sizes("AdaptiveAvgPool3D", x.shape, output_size, 3))


def _triple(owner: str, name: str, value: Any) -> tuple[int, int, int]:
    """An int or 3 ints (or MindSpore's 5-tuple form (1, 1, d, h, w)) as (d, h, w), each >= 1."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * 3
    value = tuple(value) if isinstance(value, (tuple, list)) else ()
    if len(value) == 5 and value[:2] == (1, 1):
        value = value[2:]
    if len(value) != 3 or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value):
        # an int below 1 is MindSpore's ValueError (its validator's range check)
        error = InvalidValueError if len(value) == 3 and all(type(v) is int for v in value) else InvalidParamError
        raise error(f"{owner}: {name} must be an int >= 1 or a tuple of 3 such ints")
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
        raise InvalidValueError(f"{owner}: group={group!r} must divide the channels: x {x.shape}, weight {w.shape}")
    (sd, sh, sw), (dd, dh, dw) = _triple(owner, "stride", stride), _triple(owner, "dilation", dilation)
    mode_name = str(pad_mode).lower()
    if mode_name not in ("valid", "same", "pad"):
        raise InvalidValueError(f"{owner}: pad_mode={pad_mode!r} must be 'valid', 'same' or 'pad'")
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
        raise InvalidValueError(f"{owner}: pad_mode={pad_mode!r} must be 'valid', 'same' or 'pad'")
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
        raise InvalidValueError(f"LRN: x must be 4-D (N, C, H, W), got shape {x.shape}")
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
    axes = tuple(check_arg_int(a, "L2Normalize: axis", minimum=-x.ndim, maximum=x.ndim - 1) for a in axes)
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
    d loss / d x (softmax minus the alignment posterior, CTCLossV2Grad). ``ctc_merge_repeated=False``:
    repeated labels are never merged (the kernel's attr merge_repeated); the other two options are served
    at their defaults only."""

    def __init__(self, preprocess_collapse_repeated: bool = False, ctc_merge_repeated: bool = True,
                 ignore_longer_outputs_than_inputs: bool = False):
        super().__init__()
        for name, value, served in (("preprocess_collapse_repeated", preprocess_collapse_repeated, False),
                                    ("ctc_merge_repeated", ctc_merge_repeated, None),       # None: both served
                                    ("ignore_longer_outputs_than_inputs", ignore_longer_outputs_than_inputs, False)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'CTCLoss', the '{name}' must be bool, but got {type(value).__name__}.")
            if served is not None and value is not served:
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
        attrs = {"blank": classes - 1, "zero_infinity": False, "merge_repeated": self.ctc_merge_repeated}
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
    'batchmean' over the first dimension, as ops.kl_div. Only logits get a gradient (MindSpore's bprop
    gives labels zeros)."""
    if reduction not in KL_REDUCTIONS:
        raise InvalidValueError(f"kl_div: reduction={reduction!r} must be one of {KL_REDUCTIONS}")
    x = _tensor(logits)
    y = StopGradient()(_float_input("kl_div", labels, _loss_dtype("kl_div", x)))
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
    """Binary cross entropy of logits, stably: ``(1 - y) x + (1 + (pw - 1) y) softplus(-x)``. The weights
    get no gradient (MindSpore's bprop gives them zeros)."""
    check_reduction(reduction)
    x = _tensor(input)
    y = _float_input("BCEWithLogitsLoss", target, _loss_dtype("BCEWithLogitsLoss", x))
    pw, w = (None if t is None else StopGradient()(_float_input(n, t, x.dtype))
             for n, t in (("posWeight", posWeight), ("weight", weight)))
    scale = 1.0 if pw is None else (pw - 1.0) * y + 1.0
    loss = (1.0 - y) * x + scale * _softplus_of(-x)
    return reduce_loss(loss, reduction, w)


@composite("MultiMarginLoss", functions=("multi_margin_loss",), rename={"input": "x"})
def MultiMarginLoss(x: Any, target: Any, weight: Any = None, p: int = 1, margin: float = 1.0,
                    reduction: str = "mean") -> Tensor:
    """Per sample ``sum_{j != y} w_y max(0, margin - x_y + x_j)^p / C`` of (N, C) scores and class
    indices y (p 1 or 2), then reduced."""
    check_reduction(reduction)
    if p not in (1, 2):
        raise InvalidValueError(f"multi_margin_loss: p={p!r} must be 1 or 2")
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
    if not isinstance(margin, (int, float, Tensor)):
        raise TypeError(f"triplet_margin_loss: margin must be a number or a Tensor, got {type(margin).__name__}")
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
    weights of the samples that count (ignore_index left out). weight gets no gradient (MindSpore's
    bprop gives it zeros)."""

    def __init__(self, reduction: str = "mean", ignore_index: int = -100):
        super().__init__()
        self.reduction, self.ignore_index = check_reduction(reduction), check_arg_int(ignore_index, "ignore_index")

    def __call__(self, logits: Any, labels: Any, weight: Any) -> tuple[Tensor, Tensor]:
        x = _tensor(logits)
        if x.ndim != 2:
            raise InvalidParamError(f"NLLLoss: logits must be (N, C), got shape {x.shape}")
        dtype = _loss_dtype("NLLLoss", x)
        labels = Cast()(_tensor(labels), mstype.int32)
        hot = _class_hot(labels, x.shape[1], dtype)
        keep = Cast()(NotEqual()(labels, self.ignore_index), dtype)
        w = ReduceSum()(hot * Reshape()(StopGradient()(_float_input("weight", weight, dtype)), (1, -1)), 1) * keep
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


class _LockingUpdate(_ApplyUpdate):
    """An update whose only attribute is MindSpore's ``use_locking`` (kept; one device thread per update,
    so there is nothing to lock)."""

    def __init__(self, use_locking: bool = False):
        super().__init__()
        self.use_locking = bool(use_locking)


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


class AdamWeightDecay(_LockingUpdate):
    """Adam without bias correction, decoupled decay: ``var -= lr * (m / (sqrt(v) + eps) + decay * var)``;
    returns (var, m, v)."""
    op, states, returns = "AdamWeightDecay", 3, 3
    operands = ("var", "m", "v", "lr", "beta1", "beta2", "epsilon", "decay", "gradient")

    def __call__(self, var: Any, m: Any, v: Any, lr: Any, beta1: Any, beta2: Any, epsilon: Any, decay: Any,
                 gradient: Any) -> Any:
        return super().__call__(var, m, v, lr, beta1, beta2, epsilon, decay, gradient)


class ApplyRMSProp(_LockingUpdate):
    """``ms = decay ms + (1 - decay) g^2; mom = momentum mom + lr g / sqrt(ms + eps); var -= mom``;
    returns var."""
    op, states = "ApplyRMSProp", 3
    operands = ("var", "mean_square", "moment", "learning_rate", "grad", "decay", "momentum", "epsilon")


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


class ApplyProximalAdagrad(_LockingUpdate):
    """Adagrad's step, then the proximal l1/l2 shrinkage; returns (var, accum)."""
    op, operands, states, returns = "ApplyProximalAdagrad", ("var", "accum", "lr", "l1", "l2", "grad"), 2, 2


class ApplyFtrl(_LockingUpdate):
    """FTRL-proximal's update of var, accum and linear; returns var."""
    op, operands, states = "ApplyFtrl", ("var", "accum", "linear", "grad", "lr", "l1", "l2", "lr_power"), 3


# ---- optimizer primitives (round 2) ----
# More of MindSpore's Apply* updates over their kernels in kernels/ops/optim.py (_ApplyUpdate above:
# var and its state updated in place where they are Parameters).
def _check_float_attr(owner: str, name: str, value: Any) -> float:
    """MindSpore's ``validator.check_value_type(name, value, [float])`` for a float-only attribute."""
    check_value_type(owner, name, value, (float,))
    return value


class ApplyAdagradV2(_ApplyUpdate):
    """``accum += g^2; var -= lr g / (sqrt(accum) + epsilon)``; returns (var, accum)."""
    op, operands, states, returns = "ApplyAdagradV2", ("var", "accum", "lr", "grad"), 2, 2

    def __init__(self, epsilon: float, update_slots: bool = True):
        super().__init__()
        self.epsilon = _check_float_attr(self.name, "epsilon", epsilon)
        self.update_slots = bool(update_slots)

    def update_attrs(self) -> dict:
        return {"epsilon": self.epsilon, "update_slots": self.update_slots}


class ApplyAdagradDA(_LockingUpdate):
    """Adagrad dual averaging: the accumulators gather g and g^2, var is recomputed from them (l1
    shrinkage when l1 > 0); returns var."""
    op, states = "ApplyAdagradDA", 3
    operands = ("var", "gradient_accumulator", "gradient_squared_accumulator", "grad", "lr", "l1", "l2",
                "global_step")


def _tensor_operand(owner: str, name: str, value: Any) -> Any:
    """MindSpore's check that an operand is a Tensor (its Ascend kernels take no Python numbers here)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"For Primitive[{owner}], the type of input argument[{name}] must be Tensor but got "
                        f"{type(value).__name__}.")
    return value


class ApplyAdamWithAmsgradV2(_LockingUpdate):
    """Adam keeping the running maximum ``vhat`` of v under the root; returns (var, m, v, vhat)."""
    op, states, returns = "ApplyAdamWithAmsgrad", 4, 4
    operands = ("var", "m", "v", "vhat", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad")


class ApplyAdamWithAmsgrad(_ApplyUpdate):
    """ApplyAdamWithAmsgradV2 with beta1, beta2 and epsilon as attributes; the beta powers must be Tensors."""
    op, states, returns = "ApplyAdamWithAmsgrad", 4, 4
    operands = ApplyAdamWithAmsgradV2.operands

    def __init__(self, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8, use_locking: bool = False):
        super().__init__()
        self.beta1 = _check_float_attr(self.name, "beta1", beta1)
        self.beta2 = _check_float_attr(self.name, "beta2", beta2)
        self.epsilon = _check_float_attr(self.name, "epsilon", epsilon)
        self.use_locking = bool(use_locking)

    def __call__(self, *args: Any) -> Any:
        if len(args) != 8:
            raise TypeError(f"{self.name}() takes 8 inputs (var, m, v, vhat, beta1_power, beta2_power, lr, grad), "
                            f"got {len(args)}")
        _tensor_operand(self.name, "beta1_power_type", args[4])
        _tensor_operand(self.name, "beta2_power_type", args[5])
        return super().__call__(*args[:7], self.beta1, self.beta2, self.epsilon, args[7])


class ApplyAddSign(_ApplyUpdate):
    """``m = beta m + (1 - beta) g; var -= lr (alpha + sign_decay sign(g) sign(m)) g``; returns (var, m)."""
    op, operands, states, returns = "ApplyAddSign", ("var", "m", "lr", "alpha", "sign_decay", "beta", "grad"), 2, 2


class ApplyPowerSign(_ApplyUpdate):
    """``m = beta m + (1 - beta) g; var -= lr exp(logbase sign_decay sign(g) sign(m)) g``; returns (var, m)."""
    op, operands, states, returns = "ApplyPowerSign", ("var", "m", "lr", "logbase", "sign_decay", "beta", "grad"), 2, 2


class ApplyGradientDescent(_ApplyUpdate):
    """``var -= alpha * delta``; returns var."""
    op, operands = "ApplyGradientDescent", ("var", "alpha", "delta")


class ApplyProximalGradientDescent(_ApplyUpdate):
    """FOBOS: ``prox = var - alpha delta; var = sign(prox) max(|prox| - alpha l1, 0) / (1 + alpha l2)``;
    returns var."""
    op, operands = "ApplyProximalGradientDescent", ("var", "alpha", "l1", "l2", "delta")


class ApplyKerasMomentum(_ApplyUpdate):
    """``accum = accum momentum - grad lr; var += accum`` (nesterov: ``var += accum momentum - grad lr``);
    returns (var, accum). lr and momentum must be Tensors, as MindSpore checks."""
    op, operands, states, returns = "ApplyKerasMomentum", ("var", "accum", "lr", "grad", "momentum"), 2, 2

    def __init__(self, use_locking: bool = False, use_nesterov: bool = False):
        super().__init__()
        self.use_locking, self.use_nesterov = bool(use_locking), bool(use_nesterov)

    def update_attrs(self) -> dict:
        return {"use_nesterov": self.use_nesterov}

    def __call__(self, *args: Any) -> Any:
        if len(args) == len(self.operands):
            _tensor_operand(self.name, "lr_dtype", args[2])
            _tensor_operand(self.name, "momentum_dtype", args[4])
        return super().__call__(*args)


class SGD(_ApplyUpdate):
    """The SGD primitive ``(parameters, gradient, learning_rate, accum, momentum, stat)``: nn.SGD's
    update kernel (the first step, stat = 1, takes accum = gradient); returns the new parameters."""
    op, states = "SGD", 3
    operands = ("parameters", "accum", "stat", "learning_rate", "gradient", "momentum")

    def __init__(self, dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False):
        super().__init__()
        if nesterov and dampening != 0:
            raise ValueError(f"For 'SGD', the 'dampening' must be 0 when 'nesterov' is True, but got "
                             f"'dampening' is {dampening} and 'nesterov' is {nesterov}.")
        self.dampening, self.weight_decay, self.nesterov = float(dampening), float(weight_decay), bool(nesterov)

    def update_attrs(self) -> dict:
        return {"dampening": self.dampening, "weight_decay": self.weight_decay, "nesterov": self.nesterov}

    def __call__(self, *args: Any) -> Any:
        if len(args) != 6:
            raise TypeError(f"{self.name}() takes 6 inputs (parameters, gradient, learning_rate, accum, momentum, "
                            f"stat), got {len(args)}")
        parameters, gradient, learning_rate, accum, momentum, stat = args
        return super().__call__(parameters, accum, stat, learning_rate, gradient, momentum)


class AdamNoUpdateParam(_Op):
    """Adam's step without applying it: m and v are updated in place; returns the delta to add to the
    parameter, ``-lr sqrt(1 - beta2_power) / (1 - beta1_power) m / (sqrt(v) + epsilon)``."""
    operands = ("m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "gradient")

    def __init__(self, use_locking: bool = False, use_nesterov: bool = False):
        super().__init__()
        if use_nesterov:
            raise InvalidParamError("AdamNoUpdateParam: use_nesterov=True is not supported; use use_nesterov=False")
        self.use_locking, self.use_nesterov = bool(use_locking), bool(use_nesterov)

    def __call__(self, *args: Any) -> Tensor:
        if len(args) != len(self.operands):
            raise TypeError(f"{self.name}() takes {len(self.operands)} inputs ({', '.join(self.operands)}), "
                            f"got {len(args)}")
        m = _tensor(args[0])
        inputs = [m] + [_float_input(n, a, m.dtype) for n, a in zip(self.operands[1:], args[1:])]
        delta, m_new, v_new = apply_op("AdamNoUpdateParam", inputs)
        for target, new in zip(args[:2], (m_new, v_new)):
            if getattr(target, "is_parameter", False):
                Assign()(target, new)
        return delta


# ---- pooling and resampling (round 2) ----
# The 3-D pools and the argmax pools run the pool family's 3-D kernels (kernels/ops/pool.py) with
# explicit pads; a 2-D argmax pool is the 3-D one at depth 1 between ExpandDims and Squeeze.
from .array_ops import ExpandDims as _ExpandDims, Squeeze as _Squeeze  # noqa: E402
from ...common import dtype as _mstype  # noqa: E402


def _sym_pads(owner: str, name: str, value: Any, dims: int) -> tuple[int, ...]:
    """An int or ``dims`` ints (each axis padded at both ends), or already ``2 * dims`` ints (head, tail
    per axis), as (head, tail) pairs flattened; each >= 0."""
    values = (value,) * dims if isinstance(value, int) and not isinstance(value, bool) else tuple(value)
    if len(values) == dims:
        values = tuple(v for v in values for _ in (0, 1))
    if len(values) != 2 * dims or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in values):
        raise ValueError(f"For '{owner}', '{name}' must be an int >= 0 or a tuple of {dims} or {2 * dims} such "
                         f"ints, but got {value!r}.")
    return values


def _same_pads_3d(kernel: Sequence[int], stride: Sequence[int], sizes: Sequence[int]) -> tuple[int, ...]:
    """'same' pads (head, tail per axis) for output ceil(in / stride): the total split smaller half first."""
    pads: list[int] = []
    for k, s, size in zip(kernel, stride, sizes):
        total = max((-(-size // s) - 1) * s + k - size, 0)
        pads += [total // 2, total - total // 2]
    return tuple(pads)


def _pool_mode(owner: str, pad_mode: Any) -> str:
    if not isinstance(pad_mode, str) or pad_mode.upper() not in ("VALID", "SAME", "PAD"):
        raise ValueError(f"For '{owner}', the 'pad_mode' must be 'VALID', 'SAME' or 'PAD', but got {pad_mode!r}.")
    return pad_mode.upper()


def _argmax_type(owner: str, argmax_type: Any) -> str:
    dtype = _mstype.to_type(argmax_type)
    if dtype not in (_mstype.int32, _mstype.int64):
        raise TypeError(f"For '{owner}', the 'argmax_type' must be mstype.int32 or mstype.int64, but got "
                        f"{argmax_type}.")
    return dtype.name


def _ncdhw(owner: str, data_format: Any) -> None:
    if data_format != "NCDHW":
        raise ValueError(f"For '{owner}', the 'data_format' must be 'NCDHW', but got {data_format!r}.")


def _rank(owner: str, x: Tensor, rank: int) -> Tensor:
    if x.ndim != rank:
        raise ValueError(f"For primitive[{owner}], the x_rank must be equal to {rank}, but got {x.ndim}.")
    return x


class _Pool3DBase(_Op):
    """Shared by MaxPool3D and AvgPool3D: MindSpore's pad_mode resolved to explicit pads at call time."""
    op = ""

    def _setup(self, kernel_size: Any, strides: Any, pad_mode: Any, pads: Any, pads_name: str) -> None:
        self.kernel_size = _triple(self.name, "kernel_size", kernel_size)
        self.strides = _triple(self.name, "strides", strides)
        self.pad_mode = _pool_mode(self.name, pad_mode)
        self.pads = _sym_pads(self.name, pads_name, pads, 3)
        if self.pad_mode != "PAD" and any(self.pads):
            raise ValueError(f"For '{self.name}', the '{pads_name}' must be zero or (0, 0, 0, 0, 0, 0) when "
                             f"'pad_mode' is not \"pad\", but got '{pads_name}' is {pads!r} and 'pad_mode' is "
                             f"{self.pad_mode}.")

    def _attrs(self, x: Tensor) -> dict:
        pads = _same_pads_3d(self.kernel_size, self.strides, x.shape[2:]) if self.pad_mode == "SAME" else self.pads
        return {"kernel_size": self.kernel_size, "strides": self.strides, "pads": pads}


class MaxPool3D(_Pool3DBase):
    """``MaxPool3D(kernel_size=1, strides=1, pad_mode="VALID", pad_list=0, ceil_mode=None)(x)``: max over
    (kd, kh, kw) windows of (N, C, D, H, W); pad_mode 'pad' pads with ``pad_list`` (never read);
    ``ceil_mode`` (only with 'pad') keeps a last partial window."""
    op = "MaxPool3D"

    def __init__(self, kernel_size: Any = 1, strides: Any = 1, pad_mode: str = "VALID", pad_list: Any = 0,
                 ceil_mode: Any = None, data_format: str = "NCDHW"):
        super().__init__()
        _ncdhw(self.name, data_format)
        self._setup(kernel_size, strides, pad_mode, pad_list, "pad_list")
        if ceil_mode is not None and self.pad_mode != "PAD":
            raise ValueError("When the 'pad_mode' is 'same' or 'valid', the 'ceil_mode' only supports 'None'.")
        self.ceil_mode = bool(ceil_mode)

    def __call__(self, x: Any) -> Tensor:
        x = _rank(self.name, _tensor(x), 5)
        return apply_op("MaxPool3D", [x], dict(self._attrs(x), ceil_mode=self.ceil_mode))[0]


class AvgPool3D(_Pool3DBase):
    """``AvgPool3D(kernel_size=1, strides=1, pad_mode='valid', pad=0, ceil_mode=False,
    count_include_pad=True, divisor_override=0)(x)``: the mean of (kd, kh, kw) windows of (N, C, D, H, W);
    'same' and 'pad' pads are zeros counted in the divisor when ``count_include_pad``."""
    op = "AvgPool3D"

    def __init__(self, kernel_size: Any = 1, strides: Any = 1, pad_mode: str = "valid", pad: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int = 0,
                 data_format: str = "NCDHW"):
        super().__init__()
        _ncdhw(self.name, data_format)
        self._setup(kernel_size, strides, pad_mode, pad, "pad")
        for name, value in (("ceil_mode", ceil_mode), ("count_include_pad", count_include_pad)):
            if not isinstance(value, bool):
                raise TypeError(f"For '{self.name}', the '{name}' must be bool, but got {type(value).__name__}.")
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = check_arg_int(divisor_override, f"{self.name}: divisor_override")
        if self.divisor_override < 0:
            raise ValueError(f"For '{self.name}', the 'divisor_override' must be >= 0, but got {divisor_override}.")

    def __call__(self, x: Any) -> Tensor:
        x = _rank(self.name, _tensor(x), 5)
        return apply_op("AvgPool3D", [x], dict(self._attrs(x), ceil_mode=self.ceil_mode,
                                               count_include_pad=self.count_include_pad,
                                               divisor_override=self.divisor_override))[0]


def _max_pool_argmax(x: Tensor, kernel: tuple[int, ...], strides: tuple[int, ...], pads: tuple[int, ...],
                     dilation: tuple[int, ...], ceil_mode: bool, argmax_type: str) -> tuple[Tensor, Tensor]:
    """(y, argmax) of a 2-D (4-D input) or 3-D (5-D input) max pool; argmax indexes the input plane."""
    if x.ndim == 5:
        return tuple(apply_op("MaxPool3DWithArgmax", [x], {
            "kernel_size": kernel, "strides": strides, "pads": pads, "dilation": dilation, "ceil_mode": ceil_mode,
            "argmax_type": argmax_type}))
    y, argmax = _max_pool_argmax(_ExpandDims()(x, 2), (1,) + kernel, (1,) + strides, (0, 0) + pads,
                                 (1,) + dilation, ceil_mode, argmax_type)
    return _Squeeze(2)(y), _Squeeze(2)(argmax)


class MaxPool3DWithArgmax(_Op):
    """``MaxPool3DWithArgmax(ksize, strides, pads, dilation=(1, 1, 1), ceil_mode=False,
    argmax_type=mstype.int64)(x) -> (y, argmax)``: 3-D max pooling; argmax is the flat index of each
    maximum in its (D, H, W) input volume."""

    def __init__(self, ksize: Any, strides: Any, pads: Any, dilation: Any = (1, 1, 1), ceil_mode: bool = False,
                 data_format: str = "NCDHW", argmax_type: Any = _mstype.int64):
        super().__init__()
        if not isinstance(ceil_mode, bool):
            raise TypeError(f"For '{self.name}', the 'ceil_mode' must be bool, but got {type(ceil_mode).__name__}.")
        _ncdhw(self.name, data_format)
        self.ksize, self.strides = _triple(self.name, "ksize", ksize), _triple(self.name, "strides", strides)
        self.pads, self.dilation = _sym_pads(self.name, "pads", pads, 3), _triple(self.name, "dilation", dilation)
        self.ceil_mode, self.argmax_type = ceil_mode, _argmax_type(self.name, argmax_type)

    def __call__(self, x: Any) -> tuple[Tensor, Tensor]:
        x = _rank(self.name, _tensor(x), 5)
        return _max_pool_argmax(x, self.ksize, self.strides, self.pads, self.dilation, self.ceil_mode,
                                self.argmax_type)


class MaxPoolWithArgmaxV2(_Op):
    """``MaxPoolWithArgmaxV2(kernel_size, strides=None, pads=0, dilation=(1, 1), ceil_mode=False,
    argmax_type=mstype.int64)(x) -> (y, argmax)``: 2-D max pooling of (N, C, H, W); argmax is the flat
    index of each maximum in its (H, W) plane; strides None is the kernel size."""

    def __init__(self, kernel_size: Any, strides: Any = None, pads: Any = 0, dilation: Any = (1, 1),
                 ceil_mode: bool = False, argmax_type: Any = _mstype.int64):
        super().__init__()
        if not isinstance(ceil_mode, bool):
            raise TypeError(f"For '{self.name}', the 'ceil_mode' must be bool, but got {type(ceil_mode).__name__}.")
        self.kernel_size = _pair("kernel_size", kernel_size)
        self.strides = self.kernel_size if strides is None else _pair("strides", strides)
        self.pads = _sym_pads(self.name, "pads", pads if isinstance(pads, int) else tuple(pads)[-2:], 2)
        self.dilation = _pair("dilation", dilation)
        self.ceil_mode, self.argmax_type = ceil_mode, _argmax_type(self.name, argmax_type)

    def __call__(self, x: Any) -> tuple[Tensor, Tensor]:
        x = _rank(self.name, _tensor(x), 4)
        if any(p * 2 > k for p, k in zip(self.pads[::2], self.kernel_size)):
            raise ValueError(f"For '{self.name}', pads should be at most half of kernel size, but got pads "
                             f"{self.pads[::2]} and kernel size {self.kernel_size}.")
        return _max_pool_argmax(x, self.kernel_size, self.strides, self.pads, self.dilation, self.ceil_mode,
                                self.argmax_type)


class MaxPoolWithArgmax(_Op):
    """Deprecated ``MaxPoolWithArgmax(kernel_size=1, strides=1, pad_mode="valid")(x) -> (y, argmax)``:
    argmax (int32) is the flat index of each maximum in its sample's (C, H, W) volume, as MindSpore's
    CPU kernel gives it."""

    def __init__(self, kernel_size: Any = 1, strides: Any = 1, pad_mode: str = "valid", data_format: str = "NCHW"):
        super().__init__()
        _check_format(self.name, data_format)
        self.kernel_size, self.strides = _pair("kernel_size", kernel_size), _pair("strides", strides)
        self.pad_mode = _pool_mode(self.name, pad_mode)
        if self.pad_mode == "PAD":
            raise ValueError(f"For '{self.name}', the 'pad_mode' must be 'valid' or 'same', but got {pad_mode!r}.")

    def __call__(self, x: Any) -> tuple[Tensor, Tensor]:
        x = _rank(self.name, _tensor(x), 4)
        pads = (_same_pads_3d(self.kernel_size, self.strides, x.shape[2:]) if self.pad_mode == "SAME"
                else (0, 0, 0, 0))
        y, argmax = _max_pool_argmax(x, self.kernel_size, self.strides, pads, (1, 1), False, "int32")
        n, c, h, w = x.shape
        offsets = Tensor(np.arange(c, dtype=np.int32).reshape(1, c, 1, 1) * (h * w))
        return y, argmax + offsets


class _MaxUnpool(_Op):
    """Shared by MaxUnpool2D/3D: each x value goes to the flat position its argmax names in the output
    plane (the rest zeros), as a GatherDGrad over the flattened planes (so its gradient is a GatherD).
    Duplicate indices add up (MindSpore's CPU kernel keeps one); max-pool argmaxes have none unless
    windows overlap on one maximum."""
    dims = 2

    def __init__(self, ksize: Any, strides: Any = 0, pads: Any = 0, output_shape: Any = (),
                 data_format: str = "NCHW"):
        super().__init__()
        spatial = "NCHW" if self.dims == 2 else "NCDHW"
        if data_format not in (spatial, "NHWC" if self.dims == 2 else "NDHWC"):
            raise ValueError(f"For '{self.name}', the 'data_format' must be '{spatial}', but got {data_format!r}.")
        if data_format != spatial:
            raise InvalidParamError(f"{self.name}: data_format={data_format!r} is not supported; use '{spatial}'")
        self.ksize = self._ints("ksize", ksize, 1)
        self.strides = self.ksize if strides in (0, None) else self._ints("strides", strides, 1)
        self.pads = self._ints("pads", pads, 0)
        self.output_shape = tuple(output_shape)

    def _ints(self, name: str, value: Any, low: int) -> tuple[int, ...]:
        values = (value,) * self.dims if isinstance(value, int) and not isinstance(value, bool) else tuple(value)
        if len(values) == self.dims + 2:
            values = values[2:]
        if len(values) != self.dims or any(isinstance(v, bool) or not isinstance(v, int) or v < low for v in values):
            raise ValueError(f"For '{self.name}', '{name}' must be an int >= {low} or a tuple of {self.dims} such "
                             f"ints, but got {value!r}.")
        return values

    def __call__(self, x: Any, argmax: Any) -> Tensor:
        x, argmax = _tensor(x), _tensor(argmax)
        rank = self.dims + 2
        if x.ndim != rank or argmax.shape != x.shape:
            raise ValueError(f"For '{self.name}', x and argmax must have the same shape of rank {rank}, but got "
                             f"{x.shape} and {argmax.shape}.")
        if argmax.dtype.name not in ("int32", "int64"):
            raise TypeError(f"For '{self.name}', argmax must be int32 or int64, but got {argmax.dtype}.")
        n, c = x.shape[:2]
        if self.output_shape:
            spatial = tuple(self.output_shape[-self.dims:])
        else:
            spatial = tuple((size - 1) * s - 2 * p + k for size, s, p, k in
                            zip(x.shape[2:], self.strides, self.pads, self.ksize))
        if any(v < 1 for v in spatial):
            raise ValueError(f"For '{self.name}', the output shape {spatial} must be positive.")
        plane = int(np.prod(spatial))
        flat = Reshape()(x, (n, c, -1))
        index = Reshape()(argmax, (n, c, -1))
        out = apply_op("GatherDGrad", [index, flat], {"dim": 2, "shape": (n, c, plane)})[0]
        return Reshape()(out, (n, c) + spatial)


class MaxUnpool2D(_MaxUnpool):
    """``MaxUnpool2D(ksize, strides=0, pads=0, output_shape=())(x, argmax)``: the inverse of a 2-D max
    pool; output (H - 1) * strides - 2 * pads + ksize per axis unless ``output_shape`` gives it."""
    dims = 2


class MaxUnpool3D(_MaxUnpool):
    """``MaxUnpool3D(ksize, strides=0, pads=0, output_shape=(), data_format="NCDHW")(x, argmax)``."""
    dims = 3

    def __init__(self, ksize: Any, strides: Any = 0, pads: Any = 0, output_shape: Any = (),
                 data_format: str = "NCDHW"):
        super().__init__(ksize, strides, pads, output_shape, data_format)


# ---- RNN and fused transformer ops (round 2) ----
# MindSpore's Ascend fused ops (RmsNorm, FastGeLU, DynamicRNN, DynamicGRUV2, BasicLSTMCell) and the
# channel / bit-mask dropouts, each a composition of registry ops: the gradient comes from the parts and
# O1 fuses the elementwise tails. The recurrent ops unroll their time loop (one MatMul per step for the
# hidden state, one for every step's input projection).
from ascendemu.errors import ArgumentError  # noqa: E402

from ...common import dtype as mstype  # noqa: E402
from .array_ops import BroadcastTo  # noqa: E402
from .math_ops import FloorDiv, FloorMod, Less  # noqa: E402
from .random_ops import UniformReal  # noqa: E402
from ...common.parameter import Parameter  # noqa: E402
from .array_ops import TensorScatterUpdate  # noqa: E402

# the float dtypes the fused norm/activation kernels take (MindSpore's TypeError otherwise)
FUSED_FLOATS = ("float16", "float32", "bfloat16")
# FastGeLU's constant: x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|)), MindSpore's documented formula
FAST_GELU_ALPHA = 1.702
# DropoutGenMask's mask: one bit per element, the element count rounded up to a multiple of 128 bits
# (16 bytes), element 8k + b in bit b of byte k (little-endian bit order)
MASK_BLOCK_BITS = 128




def _typed(owner: str, name: str, value: Any, types: tuple[type, ...]) -> Any:
    """``value`` when it is one of ``types`` (bool never counts as int/float), else MindSpore's TypeError."""
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        raise ArgumentError(f"For '{owner}', the type of '{name}' should be one of "
                            f"{[t.__name__ for t in types]}, but got {type(value).__name__}.")
    return value


def _dtype_in(owner: str, name: str, x: Tensor, allowed: Sequence[str]) -> Tensor:
    """``x`` when its dtype is one of ``allowed``, else MindSpore's TypeError naming the argument."""
    if x.dtype.name not in allowed:
        raise ArgumentError(f"For '{owner}', the type of '{name}' should be in {list(allowed)}, but got "
                            f"{x.dtype.name}.")
    return x


def _only(owner: str, name: str, value: Any, served: Any) -> None:
    """An option of which only ``served`` is implemented: InvalidParamError naming it otherwise."""
    if value != served:
        raise InvalidParamError(f"{owner}: {name}={value!r} is not supported here; only {served!r} is served")


def _sigmoid(x: Tensor) -> Tensor:
    return apply_op("Sigmoid", [x])[0]


def _tanh(x: Tensor) -> Tensor:
    return apply_op("Tanh", [x])[0]


def _rms_normalize(owner: str, x: Any, gamma: Any, epsilon: float) -> tuple[Tensor, Tensor]:
    """``(x / sqrt(mean(x^2) + eps) * gamma, rstd)`` over x's trailing ``gamma.ndim`` axes, computed in
    float32 and rounded once to x's dtype (as the Ascend kernel); rstd float32 with those axes kept as 1."""
    x, g = _tensor(x), _tensor(gamma)
    _dtype_in(owner, "x", x, FUSED_FLOATS)
    _dtype_in(owner, "gamma", g, FUSED_FLOATS)
    if x.dtype != g.dtype:
        raise ArgumentError(f"For '{owner}', the dtype of 'gamma' ({g.dtype}) must be the same as that of 'x' "
                            f"({x.dtype}).")
    _typed(owner, "epsilon", epsilon, (float,))
    if not 0.0 < epsilon <= 1.0:
        raise InvalidValueError(f"For '{owner}', 'epsilon' must be in (0, 1], but got {epsilon}.")
    if g.ndim > x.ndim or (g.ndim and tuple(x.shape[x.ndim - g.ndim:]) != tuple(g.shape)):
        raise InvalidValueError(f"For '{owner}', the shape of 'gamma' {g.shape} must be the trailing dimensions "
                                f"of the shape of 'x' {x.shape}.")
    axes = tuple(range(x.ndim - g.ndim, x.ndim))
    xf = _cast(x, mstype.float32)
    rstd = apply_op("Rsqrt", [ReduceMean(keep_dims=True)(xf * xf, axes) + epsilon])[0]
    with primitive_marks(True):          # x * rstd made again for gamma's gradient, as RmsNormGrad reads x and
        normed = xf * rstd               # rstd: the backward keeps no float32 copy of the normalised x
    return _cast(normed * _cast(g, mstype.float32), x.dtype), rstd


@composite("RmsNorm", functions=("rms_norm",))
def RmsNorm(x: Any, gamma: Any, epsilon: float = 1e-6) -> tuple[Tensor, Tensor]:
    """``RmsNorm(epsilon=1e-6)(x, gamma) -> (y, rstd)``: root-mean-square normalisation over the trailing
    ``gamma.ndim`` axes, ``y = x * rsqrt(mean(x^2) + epsilon) * gamma``."""
    return _rms_normalize("RmsNorm", x, gamma, epsilon)


@composite("FastGeLU", functions=("fast_gelu",))
def FastGeLU(x: Any) -> Tensor:
    """``x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))``, MindSpore's fast GeLU (the exponents are
    never positive, so nothing overflows)."""
    x = _dtype_in("FastGeLU", "x", _tensor(x), ("float16", "float32", "bfloat16"))
    size = Abs()(x)
    return x / (Exp()(size * -FAST_GELU_ALPHA) + 1) * Exp()((x - size) * (FAST_GELU_ALPHA / 2))


class FastGelu(FastGeLU):
    """MindSpore's deprecated name of :class:`FastGeLU`."""


class Gelu(GeLU):  # noqa: F821  (GeLU: a generated primitive of this module)
    """MindSpore's deprecated name of ``GeLU``."""


class _ChannelDropout(_Op):
    """Dropout2D/Dropout3D: each (sample, channel) feature map kept with probability ``keep_prob`` and
    scaled by ``1 / keep_prob``, or zeroed; returns ``(output, mask)``, mask bool of x's shape. The draws
    are uniform numbers of ``ops.UniformReal`` (its engine, seeded from the global seed), one per map."""

    rank = 4

    def __init__(self, keep_prob: float = 0.5):
        super().__init__()
        name = type(self).__name__
        self.keep_prob = _typed(name, "keep_prob", keep_prob, (float,))
        if not 0.0 <= keep_prob <= 1.0:
            raise InvalidValueError(f"For '{name}', the 'keep_prob' must be in range [0.0, 1.0], but got {keep_prob}.")
        self._uniform = UniformReal()

    def __call__(self, x: Any) -> tuple[Tensor, Tensor]:
        x = _tensor(x)
        if x.ndim != self.rank:
            raise InvalidValueError(f"For '{self.name}', the dimension of 'x' must be {self.rank}D, but got "
                                    f"{x.ndim}D.")
        draws = self._uniform(tuple(x.shape[:2]) + (1,) * (self.rank - 2))
        keep = Less()(draws, self.keep_prob) if self.keep_prob < 1.0 else draws < 2.0
        mask = BroadcastTo(tuple(x.shape))(keep)
        if self.keep_prob == 0.0:
            return x * _cast(mask, x.dtype), mask
        return x * _cast(mask, x.dtype) * (1.0 / self.keep_prob), mask


class Dropout2D(_ChannelDropout):
    """``Dropout2D(keep_prob=0.5)(x) -> (output, mask)`` for x (N, C, H, W)."""


class Dropout3D(_ChannelDropout):
    """``Dropout3D(keep_prob=0.5)(x) -> (output, mask)`` for x (N, C, D, H, W)."""
    rank = 5


def _keep_tensor(owner: str, keep_prob: Any) -> Tensor:
    """DropoutGenMask/DropoutDoMask's ``keep_prob``: a float32 or float16 scalar Tensor (or a float)."""
    if isinstance(keep_prob, float):
        keep_prob = Tensor(np.float32(keep_prob))
    if not isinstance(keep_prob, Tensor) or keep_prob.ndim != 0:
        raise ArgumentError(f"For '{owner}', 'keep_prob' must be a scalar Tensor, but got {keep_prob!r}.")
    return _dtype_in(owner, "keep_prob", keep_prob, ("float16", "float32"))


def _mask_operands(owner: str, args: tuple, count: int) -> tuple:
    """The operands of MindSpore's ``*args`` mask primitives, their number checked as its infer does."""
    if len(args) != count:
        raise InvalidValueError(f"For primitive[{owner}], the input number must be equal to {count}, but got "
                                f"{len(args)}.")
    return args


class DropoutGenMask(_Op):
    """``DropoutGenMask(Seed0=0, Seed1=0)(shape, keep_prob)``: a uint8 bit mask of
    ``ceil(prod(shape) / 128) * 16`` bytes, bit ``b`` of byte ``k`` set where element ``8k + b`` is kept
    (probability ``keep_prob``). Deprecated in MindSpore (use Dropout); :class:`DropoutDoMask` applies it.
    The draws are ``ops.UniformReal(Seed0, Seed1)``'s, so each call gives a new mask."""

    def __init__(self, Seed0: int = 0, Seed1: int = 0):
        super().__init__()
        self.Seed0 = _typed("DropoutGenMask", "Seed0", Seed0, (int,))
        self.Seed1 = _typed("DropoutGenMask", "Seed1", Seed1, (int,))
        self._uniform = UniformReal(Seed0, Seed1)

    def __call__(self, *args: Any) -> Tensor:
        shape, keep_prob = _mask_operands("DropoutGenMask", args, 2)
        dims = _int_tuple("DropoutGenMask: shape", shape)
        keep = _keep_tensor("DropoutGenMask", keep_prob)
        bits = -(-int(np.prod(dims, dtype=np.int64)) // MASK_BLOCK_BITS) * MASK_BLOCK_BITS
        kept = _cast(Less()(self._uniform((bits // 8, 8)), _cast(keep, mstype.float32)), mstype.int32)
        weights = Tensor(np.array([1 << b for b in range(8)], np.int32))
        return _cast(ReduceSum()(kept * weights, 1), mstype.uint8)


class DropoutDoMask(_Op):
    """``DropoutDoMask()(input_x, mask, keep_prob)``: ``input_x * bit / keep_prob`` with each element's bit
    of a :class:`DropoutGenMask` mask (element ``8k + b``: bit ``b`` of byte ``k``)."""

    def __call__(self, *args: Any) -> Tensor:
        input_x, mask, keep_prob = _mask_operands("DropoutDoMask", args, 3)
        x, mask = _tensor(input_x), _tensor(mask)
        keep = _keep_tensor("DropoutDoMask", keep_prob)
        if mask.dtype != mstype.uint8 or mask.ndim != 1:
            raise ArgumentError(f"For 'DropoutDoMask', 'mask' must be a 1-D uint8 Tensor, but got {mask.dtype} "
                                f"of shape {mask.shape}.")
        if mask.shape[0] * 8 < x.size:
            raise InvalidValueError(f"For 'DropoutDoMask', 'mask' holds {mask.shape[0] * 8} bits, fewer than the "
                                    f"{x.size} elements of 'input_x'.")
        powers = Tensor(np.array([1 << b for b in range(8)], np.int32))
        bits = FloorMod()(FloorDiv()(Reshape()(_cast(mask, mstype.int32), (-1, 1)), powers), 2)
        flat = Reshape()(bits, (-1,))
        if mask.shape[0] * 8 != x.size:
            flat = StridedSlice()(flat, (0,), (x.size,), (1,))
        kept = Reshape()(_cast(flat, x.dtype), tuple(x.shape))
        return x * kept / _cast(keep, x.dtype)


def _lstm_step(x_proj: Tensor, h: Tensor, c: Tensor, w_h: Tensor, forget_bias: float) -> tuple[Tensor, ...]:
    """One LSTM step in Ascend's gate order (i, j, f, o): ``x_proj`` is the step's input projection plus
    bias (B, 4H); returns (c, h, i, j, f, o, tanh(c))."""
    gates = x_proj + MatMul()(h, w_h)
    i, j, f, o = Split(1, 4)(gates)
    i, j, o = _sigmoid(i), _tanh(j), _sigmoid(o)
    f = _sigmoid(f + forget_bias) if forget_bias else _sigmoid(f)
    c = f * c + i * j
    tanh_c = _tanh(c)
    return c, o * tanh_c, i, j, f, o, tanh_c


def _rows(w: Tensor, start: int, stop: int) -> Tensor:
    return StridedSlice()(w, (start, 0), (stop, w.shape[1]), (1, 1))


@composite("DynamicRNN")
def DynamicRNN(x: Any, w: Any, b: Any, seq_length: Any, init_h: Any, init_c: Any, cell_type: str = "LSTM",
               direction: str = "UNIDIRECTIONAL", cell_depth: int = 1, use_peephole: bool = False,
               keep_prob: float = 1.0, cell_clip: float = -1.0, num_proj: int = 0, time_major: bool = True,
               activation: str = "tanh", forget_bias: float = 0.0, is_training: bool = True) -> tuple[Tensor, ...]:
    """``DynamicRNN(...)(x, w, b, seq_length, init_h, init_c) -> (y, output_h, output_c, i, j, f, o, tanhct)``:
    Ascend's fused LSTM over time. x (T, B, I) float16, w (I + H, 4H) float16 (input rows then hidden
    rows; gate columns i, j, f, o), b (4H) float16/float32, init_h/init_c (1, B, H) float16; every output
    (T, B, H), per step, in b's dtype except output_h (float16). Computed in float32."""
    owner = "DynamicRNN"
    for name, value, types in (("cell_type", cell_type, (str,)), ("direction", direction, (str,)),
                               ("activation", activation, (str,)), ("cell_depth", cell_depth, (int,)),
                               ("num_proj", num_proj, (int,)), ("keep_prob", keep_prob, (float,)),
                               ("cell_clip", cell_clip, (float,)), ("forget_bias", forget_bias, (float,)),
                               ("use_peephole", use_peephole, (bool,)), ("time_major", time_major, (bool,)),
                               ("is_training", is_training, (bool,))):
        _typed(owner, name, value, types)
    for name, value, served in (("cell_type", cell_type, "LSTM"), ("direction", direction, "UNIDIRECTIONAL"),
                                ("activation", activation, "tanh"), ("time_major", time_major, True)):
        if value != served:
            raise InvalidValueError(f"For '{owner}', '{name}' must be {served!r}, but got {value!r}.")
    for name, value, served in (("use_peephole", use_peephole, False), ("keep_prob", keep_prob, 1.0),
                                ("cell_clip", cell_clip, -1.0), ("num_proj", num_proj, 0),
                                ("cell_depth", cell_depth, 1)):
        _only(owner, name, value, served)
    if seq_length is not None:
        raise InvalidParamError(f"{owner}: seq_length must be None (MindSpore supports only None); mask the "
                                f"outputs by sequence length after the op instead")
    x, w, b, h0, c0 = (_tensor(t) for t in (x, w, b, init_h, init_c))
    for name, t in (("x", x), ("w", w), ("init_h", h0), ("init_c", c0)):
        _dtype_in(owner, name, t, ("float16",))
    _dtype_in(owner, "b", b, ("float16", "float32"))
    steps, batch, inputs = _rank(owner, x, 3).shape
    hidden = w.shape[1] // 4
    if w.ndim != 2 or w.shape != (inputs + hidden, 4 * hidden) or b.shape != (4 * hidden,) \
            or h0.shape != (1, batch, hidden) or c0.shape != (1, batch, hidden):
        raise InvalidValueError(f"For '{owner}', the shapes must be x (T, B, I), w (I + H, 4H), b (4H,), init_h and "
                                f"init_c (1, B, H); got x {x.shape}, w {w.shape}, b {b.shape}, init_h {h0.shape}, "
                                f"init_c {c0.shape}.")
    f32 = mstype.float32
    w32 = _cast(w, f32)
    w_x, w_h = _rows(w32, 0, inputs), _rows(w32, inputs, inputs + hidden)
    proj = Reshape()(MatMul()(Reshape()(_cast(x, f32), (steps * batch, inputs)), w_x) + _cast(b, f32),
                     (steps, batch, 4 * hidden))
    h, c = Reshape()(_cast(h0, f32), (batch, hidden)), Reshape()(_cast(c0, f32), (batch, hidden))
    per_step = []
    for t in range(steps):
        c, h, i, j, f, o, tanh_c = _lstm_step(proj[t], h, c, w_h, forget_bias)
        per_step.append((h, h, c, i, j, f, o, tanh_c))
    out_dtypes = (b.dtype, mstype.float16) + (b.dtype,) * 6
    return tuple(_cast(Stack(0)([s[k] for s in per_step]), dt) for k, dt in enumerate(out_dtypes))


@composite("BasicLSTMCell")
def BasicLSTMCell(x: Any, h: Any, c: Any, w: Any, b: Any, keep_prob: float = 1.0, forget_bias: float = 1.0,
                  state_is_tuple: bool = True, activation: str = "tanh") -> tuple[Tensor, ...]:
    """``BasicLSTMCell(...)(x, h, c, w, b) -> (ct, ht, it, jt, ft, ot, tanhct)``: one step of
    :class:`DynamicRNN`'s cell (deprecated in MindSpore). x (B, I), h/c (B, H), w (I + H, 4H) with gate
    columns i, j, f, o, b (4H); ht float16, the others c's dtype."""
    owner = "BasicLSTMCell"
    _typed(owner, "keep_prob", keep_prob, (float,))
    _typed(owner, "forget_bias", forget_bias, (float,))
    _typed(owner, "state_is_tuple", state_is_tuple, (bool,))
    if activation != "tanh":
        raise InvalidValueError(f"For '{owner}', 'activation' must be 'tanh', but got {activation!r}.")
    if not 0.0 <= keep_prob <= 1.0:
        raise InvalidValueError(f"For '{owner}', the 'keep_prob' must be in range of [0.0, 1.0], but got {keep_prob}.")
    _only(owner, "keep_prob", keep_prob, 1.0)
    x, h, c, w, b = (_tensor(t) for t in (x, h, c, w, b))
    for name, t in (("x", x), ("h", h), ("w", w), ("c", c), ("b", b)):
        _dtype_in(owner, name, t, ("float16", "float32"))
    if c.dtype != b.dtype:
        raise ArgumentError(f"For '{owner}', 'c' and 'b' must have one dtype, got {c.dtype} and {b.dtype}.")
    batch, inputs = _rank(owner, x, 2).shape
    hidden = _rank(owner, h, 2).shape[1]
    if w.shape != (inputs + hidden, 4 * hidden) or b.shape != (4 * hidden,) or c.shape != (batch, hidden) \
            or h.shape[0] != batch:
        raise InvalidValueError(f"For '{owner}', the shapes must be x (B, I), h and c (B, H), w (I + H, 4H), b (4H,); "
                                f"got x {x.shape}, h {h.shape}, c {c.shape}, w {w.shape}, b {b.shape}.")
    f32 = mstype.float32
    w32 = _cast(w, f32)
    proj = MatMul()(_cast(x, f32), _rows(w32, 0, inputs)) + _cast(b, f32)
    outs = _lstm_step(proj, _cast(h, f32), _cast(c, f32), _rows(w32, inputs, inputs + hidden), forget_bias)
    return tuple(_cast(t, mstype.float16 if k == 1 else c.dtype) for k, t in enumerate(outs))


# DynamicGRUV2's gate orders: the column block of (reset, update) in the weights and biases
GRU_GATE_ORDERS = {"rzh": (0, 1), "zrh": (1, 0)}


@composite("DynamicGRUV2")
def DynamicGRUV2(x: Any, weight_input: Any, weight_hidden: Any, bias_input: Any, bias_hidden: Any, seq_length: Any,
                 init_h: Any, direction: str = "UNIDIRECTIONAL", cell_depth: int = 1, keep_prob: float = 1.0,
                 cell_clip: float = -1.0, num_proj: int = 0, time_major: bool = True, activation: str = "tanh",
                 gate_order: str = "rzh", reset_after: bool = True, is_training: bool = True) -> tuple[Tensor, ...]:
    """``DynamicGRUV2(...)(x, weight_input, weight_hidden, bias_input, bias_hidden, seq_length, init_h) ->
    (y, output_h, update, reset, new, hidden_new)``: Ascend's fused GRU over time. x (T, B, I) float16,
    weight_input (I, 3H), weight_hidden (H, 3H) float16 with gate columns in ``gate_order`` then the new
    gate, biases (3H,) or None, init_h (B, H) float16/float32; outputs (T, B, H) in the bias dtype
    (bias_input's, else bias_hidden's, else init_h's); hidden_new is ``h W_hn + b_hn``. Computed in float32."""
    owner = "DynamicGRUV2"
    for name, value, types in (("cell_depth", cell_depth, (int,)), ("num_proj", num_proj, (int,)),
                               ("keep_prob", keep_prob, (float,)), ("cell_clip", cell_clip, (float,)),
                               ("time_major", time_major, (bool,)), ("reset_after", reset_after, (bool,)),
                               ("is_training", is_training, (bool,)), ("direction", direction, (str,)),
                               ("activation", activation, (str,)), ("gate_order", gate_order, (str,))):
        _typed(owner, name, value, types)
    if direction != "UNIDIRECTIONAL" or activation != "tanh" or gate_order not in GRU_GATE_ORDERS:
        raise InvalidValueError(f"For '{owner}', direction must be 'UNIDIRECTIONAL', activation 'tanh' and gate_order "
                                f"'rzh' or 'zrh'; got {direction!r}, {activation!r}, {gate_order!r}.")
    for name, value, served in (("keep_prob", keep_prob, 1.0), ("cell_clip", cell_clip, -1.0), ("num_proj", num_proj, 0),
                                ("cell_depth", cell_depth, 1), ("time_major", time_major, True)):
        _only(owner, name, value, served)
    if seq_length is not None:
        raise InvalidParamError(f"{owner}: seq_length must be None (MindSpore supports only None); mask the "
                                f"outputs by sequence length after the op instead")
    x, w_i, w_h, h0 = (_tensor(t) for t in (x, weight_input, weight_hidden, init_h))
    for name, t in (("x", x), ("weight_input", w_i), ("weight_hidden", w_h)):
        _dtype_in(owner, name, t, ("float16",))
    _dtype_in(owner, "init_h", h0, ("float16", "float32"))
    biases = [None if t is None else _tensor(t) for t in (bias_input, bias_hidden)]
    out_dtype = next((t.dtype for t in biases if t is not None), h0.dtype)
    steps, batch, inputs = _rank(owner, x, 3).shape
    hidden = w_h.shape[0]
    if w_i.shape != (inputs, 3 * hidden) or w_h.shape != (hidden, 3 * hidden) or h0.shape != (batch, hidden) \
            or any(t is not None and t.shape != (3 * hidden,) for t in biases):
        raise InvalidValueError(f"For '{owner}', the shapes must be x (T, B, I), weight_input (I, 3H), weight_hidden "
                                f"(H, 3H), biases (3H,), init_h (B, H); got {x.shape}, {w_i.shape}, {w_h.shape}, "
                                f"{[None if t is None else t.shape for t in biases]}, {h0.shape}.")
    f32 = mstype.float32
    b_i, b_h = (None if t is None else _cast(t, f32) for t in biases)
    proj = MatMul()(Reshape()(_cast(x, f32), (steps * batch, inputs)), _cast(w_i, f32))
    if b_i is not None:
        proj = proj + b_i
    proj = Reshape()(proj, (steps, batch, 3 * hidden))
    w_parts = Split(1, 3)(_cast(w_h, f32))
    b_parts = Split(0, 3)(b_h) if b_h is not None else (None, None, None)

    def from_hidden(k: int, state: Tensor) -> Tensor:
        """Gate block ``k`` of ``state W_h + b_h``."""
        out = MatMul()(state, w_parts[k])
        return out if b_parts[k] is None else out + b_parts[k]

    r_at, z_at = GRU_GATE_ORDERS[gate_order]
    h = _cast(h0, f32)
    per_step = []
    for t in range(steps):
        xs = Split(1, 3)(proj[t])
        r = _sigmoid(xs[r_at] + from_hidden(r_at, h))
        z = _sigmoid(xs[z_at] + from_hidden(z_at, h))
        hidden_new = from_hidden(2, h) if reset_after else from_hidden(2, r * h)
        n = _tanh(xs[2] + r * hidden_new) if reset_after else _tanh(xs[2] + hidden_new)
        h = (1 - z) * n + z * h
        per_step.append((h, h, z, r, n, hidden_new))
    return tuple(_cast(Stack(0)([s[k] for s in per_step]), out_dtype) for k in range(6))


def _positive_int(owner: str, name: str, value: Any) -> int:
    _typed(owner, name, value, (int,))
    if value <= 0:
        raise InvalidValueError(f"For '{owner}', the '{name}' must be a positive int, but got {value}.")
    return value


class LSTM(_Op):
    """``LSTM(input_size, hidden_size, num_layers, has_bias, bidirectional, dropout, proj_size=0)(input, h, c,
    w) -> (output, h_n, c_n, reserve, state)``: MindSpore's CPU/GPU LSTM primitive over (seq, batch, input),
    gate order i, f, g, o (PyTorch's). ``w`` (n, 1, 1) holds w_ih (4H, I), w_hh (4H, H), then the bias:
    one 4H vector, or b_ih and b_hh (the GPU layout of MindSpore's example), which are summed. One layer,
    one direction, no projection (MindSpore's CPU limits); ``reserve`` and ``state`` (MindSpore's kernel
    workspace and dropout state) are (1, 1) zeros here."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, has_bias: bool, bidirectional: bool,
                 dropout: float, proj_size: int = 0):
        super().__init__()
        owner = "LSTM"
        self.input_size = _positive_int(owner, "input_size", input_size)
        self.hidden_size = _positive_int(owner, "hidden_size", hidden_size)
        self.proj_size = _typed(owner, "proj_size", proj_size, (int,))
        if not 0 <= proj_size < hidden_size:
            raise InvalidValueError(f"For '{owner}', the 'proj_size' must be in [0, {hidden_size}), but got "
                                   f"{proj_size}.")
        self.num_layers = _positive_int(owner, "num_layers", num_layers)
        self.has_bias = _typed(owner, "has_bias", has_bias, (bool,))
        self.bidirectional = _typed(owner, "bidirectional", bidirectional, (bool,))
        self.dropout = _typed(owner, "dropout", dropout, (float,))
        if not 0.0 <= dropout <= 1.0:
            raise InvalidValueError(f"For '{owner}', the 'dropout' must be in range of [0.0, 1.0], but got {dropout}.")
        self.num_directions = 2 if bidirectional else 1
        for name, value, served in (("num_layers", num_layers, 1), ("bidirectional", bidirectional, False),
                                    ("proj_size", proj_size, 0)):
            _only(owner, name, value, served)

    def __call__(self, *args: Any) -> tuple[Tensor, ...]:
        x, h0, c0, w = (_tensor(t) for t in _mask_operands("LSTM", args, 4))
        inputs, hidden = self.input_size, self.hidden_size
        steps, batch = _rank("LSTM", x, 3).shape[:2]
        if x.shape[2] != inputs or h0.shape != (1, batch, hidden) or c0.shape != (1, batch, hidden):
            raise InvalidValueError(f"For 'LSTM', input {x.shape}, h {h0.shape} and c {c0.shape} must be (S, B, "
                                    f"{inputs}), (1, B, {hidden}) and (1, B, {hidden}).")
        gates = 4 * hidden
        sizes = {gates * (inputs + hidden) + k * gates for k in ((1, 2) if self.has_bias else (0,))}
        if w.size not in sizes:
            raise InvalidValueError(f"For 'LSTM', 'w' holds {w.size} values; it must hold {sorted(sizes)}.")
        flat = Reshape()(w, (w.size,))

        def part(start: int, shape: tuple[int, ...]) -> Tensor:
            return Reshape()(StridedSlice()(flat, (start,), (start + int(np.prod(shape)),), (1,)), shape)
        w_ih, w_hh = part(0, (gates, inputs)), part(gates * inputs, (gates, hidden))
        proj = MatMul(transpose_b=True)(Reshape()(x, (steps * batch, inputs)), w_ih)
        if self.has_bias:
            start = gates * (inputs + hidden)
            bias = part(start, (gates,))
            if w.size == start + 2 * gates:
                bias = bias + part(start + gates, (gates,))
            proj = proj + bias
        proj = Reshape()(proj, (steps, batch, gates))
        h, c = Reshape()(h0, (batch, hidden)), Reshape()(c0, (batch, hidden))
        outputs = []
        for t in range(steps):
            i, f, g, o = Split(1, 4)(proj[t] + MatMul(transpose_b=True)(h, w_hh))
            c = _sigmoid(f) * c + _sigmoid(i) * _tanh(g)
            h = _sigmoid(o) * _tanh(c)
            outputs.append(h)
        zeros = _cast(Tensor(np.zeros((1, 1), np.float32)), x.dtype)
        return (Stack(0)(outputs), _ExpandDims()(h, 0), _ExpandDims()(c, 0), zeros, zeros)


def _write_cache(name: str, x: Any, cache: Any, slots: Tensor) -> None:
    """``cache`` (blocks, block_size, N, D), a Parameter, with token ``t`` of ``x`` ((T, N, D) or (T, N * D))
    written at flat slot ``slots[t]`` (block ``slot // block_size``, row ``slot % block_size``)."""
    if not isinstance(cache, Parameter):
        raise InvalidParamError(f"ReshapeAndCache: {name}_cache must be a Parameter (the op writes it in place), "
                                f"got {type(cache).__name__}")
    x = _tensor(x)
    if cache.ndim != 4 or x.ndim not in (2, 3) or x.shape[0] != slots.shape[0] \
            or int(np.prod(x.shape[1:])) != cache.shape[2] * cache.shape[3]:
        raise InvalidValueError(f"For 'ReshapeAndCache', '{name}' {x.shape} must be (num_tokens, num_head, head_dim) "
                                f"for a cache (num_blocks, block_size, num_head, head_dim) {cache.shape} and "
                                f"{slots.shape[0]} slots.")
    blocks, block_size, heads, dim = cache.shape
    rows = Reshape()(cache, (blocks * block_size, heads, dim))
    updated = TensorScatterUpdate()(rows, Reshape()(slots, (slots.shape[0], 1)),
                                    _cast(Reshape()(x, (x.shape[0], heads, dim)), cache.dtype))
    Assign()(cache, Reshape()(updated, tuple(cache.shape)))


class ReshapeAndCache(_Op):
    """``ReshapeAndCache()(key, value=None, key_cache=None, value_cache=None, slot_mapping=None) -> key``: the
    block-wise KV cache update of paged attention: token ``t`` of key (and value) is written into its cache
    Parameter (num_blocks, block_size, num_head, head_dim) at flat slot ``slot_mapping[t]`` (int32, each
    in [0, num_blocks * block_size))."""

    def __call__(self, key: Any, value: Any = None, key_cache: Any = None, value_cache: Any = None,
                 slot_mapping: Any = None) -> Tensor:
        if key_cache is None or slot_mapping is None:
            raise InvalidParamError("ReshapeAndCache: key_cache and slot_mapping are required")
        if (value is None) != (value_cache is None):
            raise InvalidParamError("ReshapeAndCache: value and value_cache go together; pass both or neither")
        slots = _dtype_in("ReshapeAndCache", "slot_mapping", _tensor(slot_mapping), ("int32",))
        if slots.ndim != 1:
            raise InvalidValueError(f"For 'ReshapeAndCache', 'slot_mapping' must be 1-D, but got {slots.shape}.")
        _write_cache("key", key, key_cache, slots)
        if value is not None:
            _write_cache("value", value, value_cache, slots)
        return _tensor(key)


# ---- resampling and patches (round 2) ----
# Grid sampling gathers the corners of each grid point from the input flattened to (N * spatial, C), with
# coordinates computed by device ops from the grid (so the gradient reaches the input, through Gather's
# deterministic UnsortedSegmentSum, and the grid, through the corner weights); the 3-D upsamplings are
# image_ops' separable tap resamplers; the adaptive max pools with argmax take one ArgMaxWithValue per
# output window. Half types are computed in float32 and rounded once.
from .array_ops import ArgMaxWithValue as _ArgMaxWithValue, Gather as _Gather, Rint as _Rint  # noqa: E402
from .image_ops import _compute_type, _linear_taps, _resample_axis  # noqa: E402
from .math_ops import Floor as _Floor, FloorMod as _FloorMod, LogicalAnd as _LogicalAnd  # noqa: E402
from .math_ops import GreaterEqual as _GreaterEqual, Less as _LessThan  # noqa: E402

GRID_MODES = ("bilinear", "nearest")
GRID_PADDINGS = ("zeros", "border", "reflection")


def _grid_check(owner: str, x: Tensor, grid: Tensor, dims: int, mode: Any, padding_mode: Any,
                align_corners: Any) -> None:
    if mode not in GRID_MODES:
        raise ValueError(f"For '{owner}', 'interpolation_mode' must be in {list(GRID_MODES)}, but got {mode!r}.")
    if padding_mode not in GRID_PADDINGS:
        raise ValueError(f"For '{owner}', 'padding_mode' must be in {list(GRID_PADDINGS)}, but got "
                         f"{padding_mode!r}.")
    if not isinstance(align_corners, bool):
        raise TypeError(f"For '{owner}', 'align_corners' must be bool, but got {type(align_corners).__name__}.")
    if x.ndim != dims + 2 or grid.ndim != dims + 2:
        raise ValueError(f"For '{owner}', 'input_x' and 'grid' must be {dims + 2}-D, but got shapes {x.shape} and "
                         f"{grid.shape}.")
    if grid.shape[0] != x.shape[0] or grid.shape[-1] != dims:
        raise ValueError(f"For '{owner}', 'grid' must have shape (N, ..., {dims}) with N = {x.shape[0]}, but got "
                         f"{grid.shape}.")
    if x.dtype != grid.dtype:
        raise TypeError(f"For '{owner}', 'input_x' and 'grid' must have the same dtype, but got {x.dtype} and "
                        f"{grid.dtype}.")


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """PyTorch's reflect_coordinates: ``coord`` reflected at low and high until it lies in [low, high]."""
    if twice_low == twice_high:
        return coord * 0.0
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    dist = Abs()(coord - low)
    flips = _Floor()(dist / span)
    extra = _FloorMod()(dist, span)
    even = _LessThan()(_FloorMod()(flips, 2.0), 0.5)
    return Select()(even, extra + low, (span - extra) + low)


def _source(g: Tensor, size: int, padding: str, align: bool) -> Tensor:
    """A grid component in [-1, 1] as an input coordinate of an axis of ``size``, after padding's clamp."""
    coord = (g + 1.0) * ((size - 1) / 2.0) if align else ((g + 1.0) * float(size) - 1.0) / 2.0
    if padding == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align else _reflect(coord, -1, 2 * size - 1)
    if padding in ("border", "reflection"):
        coord = Minimum()(Maximum()(coord, 0.0), float(size - 1))
    return coord


def _grid_sample(owner: str, input_x: Any, grid: Any, mode: str, padding_mode: str, align_corners: bool,
                 dims: int) -> Tensor:
    """``dims``-D grid sampling of (N, C, *spatial) at (N, *out, dims) grid points (x, y[, z]: the last
    spatial axis first), PyTorch's and MindSpore's grid_sampler."""
    x, g = _tensor(input_x), _tensor(grid)
    _grid_check(owner, x, g, dims, mode, padding_mode, align_corners)
    work = _compute_type(owner, x)
    x, g = _cast(x, work), _cast(g, work)
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    out_shape = g.shape[1:-1]
    volume = int(np.prod(spatial))
    flat = Reshape()(Transpose()(x, (0,) + tuple(range(2, dims + 2)) + (1,)), (n * volume, c))
    strides = [int(np.prod(spatial[a + 1:])) for a in range(dims)]
    base = Tensor((np.arange(n, dtype=np.int32) * volume).reshape((n,) + (1,) * len(out_shape)))
    coords = []
    for a in range(dims):            # spatial axis a reads grid component dims - 1 - a
        k = dims - 1 - a
        comp = StridedSlice()(g, (0,) * (g.ndim - 1) + (k,), g.shape[:-1] + (k + 1,), (1,) * g.ndim)
        coords.append(_source(Reshape()(comp, (n,) + out_shape), spatial[a], padding_mode, align_corners))

    def corner(points: list[Tensor]) -> tuple[Tensor, Tensor]:
        """(gathered values (N, *out, C), in-range mask as the compute type (N, *out, 1))."""
        index, valid = base, None
        for a, p in enumerate(points):
            ok = _LogicalAnd()(_GreaterEqual()(p, 0.0), _LessThan()(p, float(spatial[a])))
            valid = ok if valid is None else _LogicalAnd()(valid, ok)
            clipped = Cast()(Minimum()(Maximum()(p, 0.0), float(spatial[a] - 1)), mstype.int32)
            index = index + clipped * strides[a]
        return _Gather()(flat, index, 0), Reshape()(Cast()(valid, work), (n,) + out_shape + (1,))

    if mode == "nearest":
        values, valid = corner([_Rint()(p) for p in coords])
        out = values * valid
    else:
        lows = [_Floor()(p) for p in coords]
        fracs = [p - lo for p, lo in zip(coords, lows)]
        out = None
        for bits in range(2 ** dims):
            points, weight = [], None
            for a in range(dims):
                high = (bits >> (dims - 1 - a)) & 1
                points.append(lows[a] + 1.0 if high else lows[a])
                w = fracs[a] if high else 1.0 - fracs[a]
                weight = w if weight is None else weight * w
            values, valid = corner(points)
            term = values * (Reshape()(weight, (n,) + out_shape + (1,)) * valid)
            out = term if out is None else out + term
    y = Transpose()(out, (0, dims + 1) + tuple(range(1, dims + 1)))
    return _cast(y, _tensor(input_x).dtype)


@composite("GridSampler2D")
def GridSampler2D(input_x: Any, grid: Any, interpolation_mode: str = "bilinear", padding_mode: str = "zeros",
                  align_corners: bool = False) -> Tensor:
    """Samples (N, C, H, W) ``input_x`` at the (N, H_out, W_out, 2) ``grid`` points (x, y in [-1, 1]):
    'bilinear' or 'nearest' (halves to even), outside by 'zeros', 'border' or 'reflection' padding."""
    return _grid_sample("GridSampler2D", input_x, grid, interpolation_mode, padding_mode, align_corners, 2)


@composite("GridSampler3D")
def GridSampler3D(input_x: Any, grid: Any, interpolation_mode: str = "bilinear", padding_mode: str = "zeros",
                  align_corners: bool = False) -> Tensor:
    """Samples (N, C, D, H, W) ``input_x`` at the (N, D_out, H_out, W_out, 3) ``grid`` points (x, y, z):
    trilinear ('bilinear') or 'nearest', with the padding modes of GridSampler2D."""
    return _grid_sample("GridSampler3D", input_x, grid, interpolation_mode, padding_mode, align_corners, 3)


def _upsample_sizes(owner: str, x: Tensor, output_size: Any, scales: Any) -> tuple[tuple[int, ...], list]:
    """(output D, H, W, the scale per axis: 1 / scales[i] when scales are given, else None)."""
    if x.ndim != 5:
        raise ValueError(f"For '{owner}', the dimension of 'x' must be 5, but got {x.ndim}.")
    if (output_size is None) == (scales is None):
        raise ValueError(f"For '{owner}', only one of 'output_size' and 'scales' must be specified.")
    if output_size is not None:
        sizes = _int_tuple(f"{owner}: output_size", output_size)
        if len(sizes) != 3 or any(s <= 0 for s in sizes):
            raise ValueError(f"For '{owner}', 'output_size' must be 3 positive ints, but got {output_size!r}.")
        return sizes, [None] * 3
    values = tuple(float(s) for s in scales)
    if len(values) != 3 or any(s <= 0 for s in values):
        raise ValueError(f"For '{owner}', 'scales' must be 3 positive floats, but got {scales!r}.")
    sizes = tuple(int(np.floor(np.float32(n) * np.float32(s))) for n, s in zip(x.shape[2:], values))
    return sizes, [np.float32(1.0) / np.float32(s) for s in values]


@composite("UpsampleNearest3D")
def UpsampleNearest3D(x: Any, output_size: Any = None, scales: Any = None) -> Tensor:
    """Nearest upsampling of (N, C, D, H, W): output o reads input floor(o * s), s = in / out or 1 / scale."""
    x = _tensor(x)
    _compute_type("UpsampleNearest3D", x)
    sizes, given = _upsample_sizes("UpsampleNearest3D", x, output_size, scales)
    for a, (n_in, m, s) in enumerate(zip(x.shape[2:], sizes, given)):
        scale = np.float32(n_in) / np.float32(m) if s is None else s
        src = np.minimum(np.floor(np.arange(m, dtype=np.float32) * scale).astype(np.int64), n_in - 1)
        x = _resample_axis(x, 2 + a, src.reshape(-1, 1), None)
    return x


@composite("UpsampleTrilinear3D")
def UpsampleTrilinear3D(x: Any, output_size: Any = None, scales: Any = None, align_corners: bool = False) -> Tensor:
    """Trilinear upsampling of (N, C, D, H, W), PyTorch's coordinates (corner-aligned, or half-pixel clamped
    at 0 with s = in / out or 1 / scale)."""
    x = _tensor(x)
    if not isinstance(align_corners, bool):
        raise TypeError(f"For 'UpsampleTrilinear3D', 'align_corners' must be bool, but got "
                        f"{type(align_corners).__name__}.")
    work = _compute_type("UpsampleTrilinear3D", x)
    sizes, given = _upsample_sizes("UpsampleTrilinear3D", x, output_size, scales)
    y = _cast(x, work)
    for a, (n_in, m, s) in enumerate(zip(x.shape[2:], sizes, given)):
        index, weight = _linear_taps(n_in, m, "align_corners" if align_corners else "half_pixel", s)
        y = _resample_axis(y, 2 + a, index, weight)
    return _cast(y, x.dtype)


def _adaptive_argmax_pool(owner: str, x: Tensor, sizes: tuple[int, ...], index_type: Any) -> tuple[Tensor, Tensor]:
    """(max, flat argmax within each plane) of adaptive windows [floor(i n / out), ceil((i + 1) n / out)) of
    the last ``len(sizes)`` axes: per output window one ArgMaxWithValue over the window flattened (first
    maximum wins), its local index mapped to the plane's flat index by a constant table."""
    dims = len(sizes)
    lead, spatial = x.shape[:-dims], x.shape[-dims:]
    values, indices = [], []
    for cell in np.ndindex(*sizes):
        ranges = [((i * n) // o, -(-(i + 1) * n // o)) for i, n, o in zip(cell, spatial, sizes)]
        begin = (0,) * len(lead) + tuple(lo for lo, _ in ranges)
        end = lead + tuple(hi for _, hi in ranges)
        window = StridedSlice()(x, begin, end, (1,) * x.ndim)
        local, value = _ArgMaxWithValue(axis=-1)(Reshape()(window, lead + (-1,)))
        grid = np.meshgrid(*[np.arange(lo, hi) for lo, hi in ranges], indexing="ij")
        table = np.ravel_multi_index(tuple(grid), spatial).reshape(-1).astype(np.int32)
        values.append(value)
        indices.append(_Gather()(Tensor(table), local, 0))
    shape = lead + tuple(sizes)
    y = Reshape()(Stack(-1)(values), shape)
    argmax = Reshape()(Stack(-1)(indices), shape)
    return y, _cast(argmax, index_type)


@composite("AdaptiveMaxPool2D")
def AdaptiveMaxPool2D(input: Any, output_size: Any = None) -> tuple[Tensor, Tensor]:
    """Adaptive max pooling of (N, C, H, W) or (C, H, W) with the argmax (int64, flat in H * W)."""
    x = _tensor(input)
    if x.ndim not in (3, 4):
        raise ValueError(f"For 'AdaptiveMaxPool2D', the dimension of 'input' must be 3 or 4, but got {x.ndim}.")
    sizes = output_size
    if not isinstance(sizes, (tuple, list)) or len(sizes) != 2 or any(
            isinstance(s, bool) or not isinstance(s, int) or s <= 0 for s in sizes):
        raise TypeError(f"For 'AdaptiveMaxPool2D', 'output_size' must be a tuple or list of 2 positive ints, but "
                        f"got {output_size!r}.")
    sizes = tuple(sizes)
    return _adaptive_argmax_pool("AdaptiveMaxPool2D", x, sizes, mstype.int64)


@composite("AdaptiveMaxPool3D")
def AdaptiveMaxPool3D(x: Any, output_size: Any) -> tuple[Tensor, Tensor]:
    """Adaptive max pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (3 ints, or a 1-D
    Tensor) with the argmax (int32, flat in D * H * W)."""
    x = _tensor(x)
    if x.ndim not in (4, 5):
        raise ValueError(f"For 'AdaptiveMaxPool3D', the dimension of 'x' must be 4 or 5, but got {x.ndim}.")
    sizes = _static_ints("AdaptiveMaxPool3D: output_size", output_size)
    if len(sizes) != 3 or any(s <= 0 for s in sizes):
        raise ValueError(f"For 'AdaptiveMaxPool3D', 'output_size' must be 3 positive ints, but got {list(sizes)}.")
    return _adaptive_argmax_pool("AdaptiveMaxPool3D", x, tuple(sizes), mstype.int32)


def _four(owner: str, name: str, value: Any) -> tuple[int, int]:
    """(h, w) of an attribute given as an int, 2 ints or 4 ints (1, 1, h, w), each >= 1."""
    values = (value, value) if isinstance(value, int) and not isinstance(value, bool) else tuple(value)
    if len(values) == 4 and values[:2] == (1, 1):
        values = values[2:]
    if len(values) != 2 or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"For '{owner}', '{name}' must be an int, 2 ints or (1, 1, h, w) with ints >= 1, but got "
                         f"{value!r}.")
    return values


def _window_pads(owner: str, padding: Any, sizes: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                 rate: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """TensorFlow's (before, after) pads per spatial axis: 'VALID' none, 'SAME' output ceil(in / stride)."""
    mode = padding.upper() if isinstance(padding, str) else padding
    if mode not in ("VALID", "SAME"):
        raise ValueError(f"For '{owner}', the padding must be 'VALID' or 'SAME', but got {padding!r}.")
    pads = []
    for n, k, s, r in zip(sizes, kernel, stride, rate):
        span = (k - 1) * r + 1
        if mode == "VALID":
            if n < span:
                raise ValueError(f"For '{owner}', the input spatial size {tuple(sizes)} is smaller than the dilated "
                                 f"window {span}.")
            pads.append((0, 0))
            continue
        total = max((-(-n // s) - 1) * s + span - n, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _window_taps(x: Tensor, pads: Sequence[tuple[int, int]], kernel: Sequence[int], stride: Sequence[int],
                 rate: Sequence[int], fill: float) -> list[Tensor]:
    """The strided view of padded NCHW ``x`` that each window tap (i, j) reads, row-major."""
    if any(p for pair in pads for p in pair):
        attrs = {"paddings": ((0, 0), (0, 0)) + tuple(pads)}
        if fill:
            attrs["value"] = fill
        x = apply_op("Pad", [x], attrs)[0]
    n, c, h, w = x.shape
    oh = (h - (kernel[0] - 1) * rate[0] - 1) // stride[0] + 1
    ow = (w - (kernel[1] - 1) * rate[1] - 1) // stride[1] + 1
    taps = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            y0, x0 = i * rate[0], j * rate[1]
            taps.append(StridedSlice()(x, (0, 0, y0, x0), (n, c, y0 + (oh - 1) * stride[0] + 1,
                                                           x0 + (ow - 1) * stride[1] + 1), (1, 1) + tuple(stride)))
    return taps


@composite("ExtractImagePatches")
def ExtractImagePatches(input_x: Any, ksizes: Any = None, strides: Any = None, rates: Any = None,
                        padding: str = "VALID") -> Tensor:
    """The (kh, kw) patches of NCHW ``input_x`` at ``strides`` and dilation ``rates`` stacked as channels
    (N, kh * kw * C, out_h, out_w), depth ordered (row, col, channel) as TensorFlow's; 'SAME' pads zeros."""
    owner = "ExtractImagePatches"
    x = _tensor(input_x)
    if x.ndim != 4:
        raise ValueError(f"For '{owner}', the dimension of 'input_x' must be 4, but got {x.ndim}.")
    kernel, stride, rate = (_four(owner, k, v) for k, v in (("ksizes", ksizes), ("strides", strides),
                                                           ("rates", rates)))
    taps = _window_taps(x, _window_pads(owner, padding, x.shape[2:], kernel, stride, rate), kernel, stride, rate, 0.0)
    patches = Stack(1)(taps)                                  # (N, kh * kw, C, oh, ow)
    return Reshape()(patches, (x.shape[0], -1) + patches.shape[3:])


@composite("Dilation2D")
def Dilation2D(x: Any, filter: Any, stride: Any = None, dilation: Any = None, pad_mode: str = "SAME",
               data_format: str = "NCHW") -> Tensor:
    """Grayscale morphological dilation of NCHW ``x`` by a (C, kh, kw) ``filter``: the max over each window
    of x + filter (TensorFlow's dilation2d; 'SAME' pads read as -inf, never the max)."""
    owner = "Dilation2D"
    if data_format != "NCHW":
        raise ValueError(f"For '{owner}', the 'data_format' must be 'NCHW', but got {data_format!r}.")
    xt, f = _tensor(x), _tensor(filter)
    if xt.ndim != 4 or f.ndim != 3 or f.shape[0] != xt.shape[1]:
        raise ValueError(f"For '{owner}', 'x' must be (N, C, H, W) and 'filter' (C, kh, kw), but got {xt.shape} and "
                         f"{f.shape}.")
    stride_hw, rate = _four(owner, "stride", stride), _four(owner, "dilation", dilation)
    kernel = f.shape[1:]
    pads = _window_pads(owner, pad_mode, xt.shape[2:], kernel, stride_hw, rate)
    taps = _window_taps(xt, pads, kernel, stride_hw, rate, float("-inf"))
    out = None
    for k, tap in enumerate(taps):
        i, j = divmod(k, kernel[1])
        weight = Reshape()(StridedSlice()(f, (0, i, j), (f.shape[0], i + 1, j + 1), (1, 1, 1)), (1, -1, 1, 1))
        term = tap + weight
        out = term if out is None else Maximum()(out, term)
    return out


@composite("DepthwiseConv2dNative")
def DepthwiseConv2dNative(x: Any, w: Any, channel_multiplier: int = 1, kernel_size: Any = 1, mode: int = 3,
                          pad_mode: str = "valid", pad: Any = 0, stride: Any = 1, dilation: Any = 1,
                          group: int = 1) -> Tensor:
    """Depthwise convolution of NCHW ``x`` by a (1, C, kh, kw) weight: Conv2D with one group per channel
    (MindSpore's deprecated primitive; its weight batch must be 1)."""
    owner = "DepthwiseConv2dNative"
    xt, wt = _tensor(x), _tensor(w)
    if mode != 3:
        raise ValueError(f"For '{owner}', 'mode' must be 3, but got {mode!r}.")
    if wt.ndim != 4 or xt.ndim != 4 or wt.shape[1] != xt.shape[1]:
        raise ValueError(f"For '{owner}', x must be (N, C, H, W) and w (1, C, kh, kw), but got {xt.shape} and "
                         f"{wt.shape}.")
    if wt.shape[0] != 1:
        raise ValueError(f"For '{owner}', the batch of 'weight' must be 1, but got {wt.shape[0]}")
    if tuple(wt.shape[2:]) != _pair("kernel_size", kernel_size):
        raise ValueError(f"For '{owner}', 'kernel_size' {kernel_size!r} must equal the weight's {wt.shape[2:]}.")
    c = xt.shape[1]
    return Conv2D(c, wt.shape[2:], pad_mode=pad_mode, pad=pad, stride=stride, dilation=dilation,
                  group=c)(xt, Reshape()(wt, (c, 1) + tuple(wt.shape[2:])))


# ---- internals round 2: DataFormatDimMap, DataFormatVecPermute (one Gather of a constant table) ----
# the data formats the two ops convert between
DATA_FORMATS = ("NHWC", "NCHW")
# their operands' dtypes
FORMAT_INDEX_DTYPES = ("int32", "int64")


class _DataFormatOp(_Op):
    """The two ops' attributes: source and destination formats, checked as MindSpore checks them; the
    table ``position[i]``: where the destination's i-th dimension sits in the source format."""

    def __init__(self, src_format: str = "NHWC", dst_format: str = "NCHW") -> None:
        super().__init__()
        for name, value in (("src_format", src_format), ("dst_format", dst_format)):
            if value not in DATA_FORMATS:
                raise ValueError(f"For '{self.name}', the '{name}' must be str and must be in "
                                 f"'{list(DATA_FORMATS)}', but got '{value}'.")
        self.src_format, self.dst_format = src_format, dst_format
        self.add_prim_attr("src_format", src_format)
        self.add_prim_attr("dst_format", dst_format)
        self.position = tuple(src_format.index(c) for c in dst_format)

    def _operand(self, label: str, args: tuple) -> Tensor:
        if len(args) != 1:
            raise TypeError(f"{self.name}() takes 1 input but {len(args)} were given")
        x = _tensor(args[0])
        if x.dtype.name not in FORMAT_INDEX_DTYPES:
            raise TypeError(f"For primitive[{self.name}], the input argument[{label}] must be a type of "
                            f"{{Tensor[Int32], Tensor[Int64]}}, but got Tensor[{x.dtype}].")
        return x

    def _table(self, x: Tensor) -> Tensor:
        return Tensor(np.asarray(self.position, dtype=x.dtype.name))


class DataFormatDimMap(_DataFormatOp):
    """``DataFormatDimMap(src_format, dst_format)(x)``: each dimension index ``x`` (taken modulo 4, so
    -4..3) mapped as MindSpore maps it: ``src_format.index(dst_format[x % 4])``."""

    def __call__(self, *args: Any) -> Tensor:
        x = self._operand("input type", args)
        index = apply_op("FloorMod", list(_binary_operands(x, 4)))[0]
        return apply_op("Gather", [self._table(x), index], {"axis": 0})[0]


class DataFormatVecPermute(_DataFormatOp):
    """``DataFormatVecPermute(src_format, dst_format)(x)``: a (4,) or (4, 2) vector of per-dimension
    values (sizes, paddings) reordered from the source format to the destination one."""

    def __call__(self, *args: Any) -> Tensor:
        x = self._operand("x", args)
        if x.shape not in ((4,), (4, 2)):
            raise ValueError(f"For {self.name}, input shape must be (4, ) or (4, 2), but got {list(x.shape)}.")
        return apply_op("Gather", [x, Tensor(np.asarray(self.position, np.int32))], {"axis": 0})[0]


# ---- linear algebra and statistics ----
from .math_ops import p_norm as _p_norm  # noqa: E402
from .._utils import _flag as _flag_arg  # noqa: E402

PDIST_DTYPES = ("float16", "float32", "float64")


@composite("Pdist", functions=("pdist",))
def Pdist(input, p=2.0):
    """The p-norm distance of each pair of rows i < j of a 2-D (N, M) input, row-major: N (N - 1) / 2
    values (the pair rows gathered by constant indices, so it traces and has a gradient)."""
    x = _tensor(input)
    if x.dtype.name not in PDIST_DTYPES:
        raise TypeError(f"For primitive[Pdist], the input argument[x] must be a type of {{Tensor[Float16], "
                        f"Tensor[Float32], Tensor[Float64]}}, but got Tensor[{x.dtype}].")
    if not isinstance(p, float):
        raise TypeError(f"For 'Pdist', the type of 'p' must be float, but got {type(p).__name__}.")
    if p < 0:
        raise ValueError(f"For 'Pdist', 'p' must be greater than or equal to 0.0, but got {p}.")
    if x.ndim != 2:
        raise ValueError(f"For primitive[Pdist], the x dim must be equal to 2, but got {x.ndim}.")
    first, second = np.triu_indices(x.shape[0], 1)
    rows = [apply_op("Gather", [x, Tensor(index.astype(np.int32))], {"axis": 0})[0] for index in (first, second)]
    return _p_norm(rows[0] - rows[1], p, (-1,), False)


@composite("NthElement")
def NthElement(input, n, reverse=False):
    """The n-th smallest (``reverse``: largest) value along the last axis (a sort, then one column)."""
    x = _tensor(input)
    k = _static_int("NthElement: n", n)
    if x.ndim < 1:
        raise ValueError(f"For 'NthElement', the rank of 'input' must be at least 1, but got {x.ndim}.")
    if not 0 <= k < x.shape[-1]:
        raise ValueError(f"For 'NthElement', 'n' must be in [0, {x.shape[-1]}), but got {k}.")
    descending = _flag_arg("NthElement: reverse", reverse)
    ordered = apply_op("Sort", [x], {"axis": -1, "descending": descending})[0]
    return ordered[..., k]


@composite("NuclearNorm")
def NuclearNorm(input, dim=None, keepdim=False):
    """The sum of the singular values of the matrices over the two axes ``dim`` (all of a 2-D input when
    None); ``keepdim`` keeps them as size 1."""
    x = _tensor(input)
    if x.dtype.name not in ("float32", "float64"):
        raise TypeError(f"For 'NuclearNorm', the dtype of 'input' must be float32 or float64, but got {x.dtype}.")
    if dim is None:
        if x.ndim != 2:
            raise ValueError(f"For 'NuclearNorm', 'dim' is None only for a 2-D input, but got rank {x.ndim}.")
        dim = (0, 1)
    axes = _int_tuple("NuclearNorm: dim", dim)
    if len(axes) != 2 or any(not -x.ndim <= a < x.ndim for a in axes) or axes[0] % x.ndim == axes[1] % x.ndim:
        raise ValueError(f"For 'NuclearNorm', 'dim' must be two distinct axes of the input, but got {dim}.")
    rows, cols = (a % x.ndim for a in axes)
    perm = tuple(d for d in range(x.ndim) if d not in (rows, cols)) + (rows, cols)
    matrices = apply_op("Transpose", [x], {"perm": perm})[0]
    singular = apply_op("Svd", [matrices], {"full_matrices": False, "compute_uv": False})[0]
    total = apply_op("ReduceSum", [singular], {"axis": (-1,), "keep_dims": False})[0]
    if _flag_arg("NuclearNorm: keepdim", keepdim):
        for axis in sorted((rows, cols)):
            total = apply_op("ExpandDims", [total], {"axis": axis})[0]
    return total


# ---- nn compositions ----
from .array_ops import Concat as _Concat, ExpandDims as _ExpandDims3, GatherD as _GatherD  # noqa: E402
from .array_ops import Slice as _Slice, Tile, _host_shape  # noqa: E402
from .math_ops import GreaterEqual, LogicalAnd as _And  # noqa: E402

# InTopK's operand dtypes (MindSpore's checks)
IN_TOP_K_DTYPES = ("float16", "float32")
IN_TOP_K_TARGET_DTYPES = ("int32", "int64")
# PadV3's modes
PAD_V3_MODES = ("constant", "reflect", "edge", "circular")


@composite("InTopK", functions=("intopk",))
def InTopK(x1: Any, x2: Any, k: int = None) -> Tensor:
    """Whether each row's target ``x1[i, x2[i]]`` is among the row's ``k`` largest: fewer than ``k``
    entries are strictly greater (ties count in); a target index out of range gives False."""
    x1, x2 = _tensor(x1), _tensor(x2)
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"For 'InTopK', the 'k' must be int, but got {type(k).__name__}.")
    if x1.dtype.name not in IN_TOP_K_DTYPES or x2.dtype.name not in IN_TOP_K_TARGET_DTYPES:
        raise TypeError(f"For 'InTopK', 'x1' must be float16/float32 and 'x2' int32/int64, but got {x1.dtype} "
                        f"and {x2.dtype}.")
    if x1.ndim != 2 or x2.ndim != 1 or x1.shape[0] != x2.shape[0]:
        raise ValueError(f"For 'InTopK', 'x1' must be 2-D and 'x2' 1-D of its first dimension, but got shapes "
                         f"{x1.shape} and {x2.shape}.")
    valid = _And()(GreaterEqual()(x2, 0), Less()(x2, x1.shape[1]))
    index = Select()(valid, x2, ZerosLike()(x2))
    target = _GatherD()(x1, 1, _ExpandDims3()(Cast()(index, mstype.int32), 1))
    above = ReduceSum(False)(Cast()(Greater()(x1, target), mstype.int32), (1,))
    return _And()(Less()(above, k), valid)


@composite("Dense", functions=("dense",))
def Dense(input: Any, weight: Any, bias: Any = None) -> Tensor:
    """``input @ weight.T + bias`` over the last dimension (a 1-D weight: a dot product)."""
    x, w = _tensor(input), _tensor(weight)
    if w.ndim == 1:
        out = ReduceSum(False)(x * w, (-1,))
    else:
        shape = tuple(x.shape[:-1]) + (w.shape[0],)
        flat = Reshape()(x, (-1, x.shape[-1])) if x.ndim != 2 else x
        out = Reshape()(MatMul(False, True)(flat, w), shape)
    return out if bias is None else out + bias


@composite("LogSoftmaxExt")
def LogSoftmaxExt(input: Any, dim: Any = None, dtype: Any = None) -> Tensor:
    """log_softmax over ``dim`` (None: 0 for 0-, 1- and 3-D inputs, else 1, PyTorch's legacy rule), the
    input first cast to ``dtype`` when given."""
    x = _tensor(input)
    if dtype is not None:
        x = Cast()(x, dtype)
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return LogSoftmax(dim)(x)


@composite("ChannelShuffle")
def ChannelShuffle(x: Any, group: int = None) -> Tensor:
    """(N, C, *) with its channels seen as (group, C / group) and transposed."""
    t = _tensor(x)
    if isinstance(group, bool) or not isinstance(group, int) or group <= 0:
        raise ValueError(f"For 'ChannelShuffle', the 'group' must be a positive int, but got {group!r}.")
    if t.ndim < 3 or t.shape[1] % group:
        raise ValueError(f"For 'ChannelShuffle', the input must have rank >= 3 and channels divisible by group "
                         f"{group}, but got shape {t.shape}.")
    n, c = t.shape[:2]
    y = Transpose()(Reshape()(t, (n, group, c // group, -1)), (0, 2, 1, 3))
    return Reshape()(y, t.shape)


def _edge_pad(x: Tensor, axis: int, before: int, after: int, circular: bool) -> Tensor:
    """``x`` along ``axis`` extended by its edge element (or, circular, by its other end)."""
    size = x.shape[axis]

    def part(start: int, length: int) -> Tensor:
        begin = [0] * x.ndim
        extent = list(x.shape)
        begin[axis], extent[axis] = start, length
        return _Slice()(x, tuple(begin), tuple(extent))
    if circular:
        head, tail = part(size - before, before), part(0, after)
    else:
        reps = [1] * x.ndim
        reps[axis] = before
        head = Tile()(part(0, 1), tuple(reps))
        reps[axis] = after
        tail = Tile()(part(size - 1, 1), tuple(reps))
    pieces = ([head] if before else []) + [x] + ([tail] if after else [])
    return _Concat(axis)(tuple(pieces)) if len(pieces) > 1 else x


class PadV3(_Op):
    """``PadV3(mode, paddings_contiguous)(x, paddings, constant_value=None)``: pairs (before, after) from the
    last dimension backwards (not contiguous: all befores, then all afters); modes constant (filled with
    ``constant_value``), reflect, edge, circular. Paddings must be >= 0 (cropping is not served)."""

    def __init__(self, mode: str = "constant", paddings_contiguous: bool = True) -> None:
        super().__init__()
        if mode not in PAD_V3_MODES:
            raise ValueError(f"For 'PadV3', the 'mode' must be one of {list(PAD_V3_MODES)}, but got {mode!r}.")
        self.mode, self.paddings_contiguous = mode, bool(paddings_contiguous)
        self.add_prim_attr("mode", mode)
        self.add_prim_attr("paddings_contiguous", self.paddings_contiguous)

    def __call__(self, x: Any, paddings: Any, constant_value: Any = None) -> Tensor:
        x = _tensor(x)
        flat = _host_shape("PadV3", paddings)
        if len(flat) % 2 or len(flat) // 2 > x.ndim:
            raise ValueError(f"For 'PadV3', the length of 'paddings' must be even and at most twice the input's "
                             f"rank {x.ndim}, but got {len(flat)}.")
        if any(p < 0 for p in flat):
            raise InvalidParamError(f"PadV3: paddings={list(flat)} must be >= 0 (cropping is not served); slice "
                                    f"the input instead")
        half = len(flat) // 2
        pairs = [(flat[2 * i], flat[2 * i + 1]) if self.paddings_contiguous else (flat[i], flat[half + i])
                 for i in range(half)]
        full = [(0, 0)] * (x.ndim - half) + pairs[::-1]
        if self.mode == "constant":
            padded = apply_op("Pad", [x], {"paddings": tuple(full)})[0]
            if constant_value is None:
                return padded
            # the fill as an operand (it may be a graph input): value * (1 where padded); MindSpore's
            # PadV3 gives constant_value no gradient
            border = apply_op("Pad", [ZerosLike()(x)], {"paddings": tuple(full), "value": 1})[0]
            return padded + border * StopGradient()(Cast()(_tensor(constant_value), x.dtype))
        if constant_value is not None:
            raise ValueError(f"For 'PadV3', 'constant_value' is only used in mode 'constant', not {self.mode!r}.")
        if x.ndim < 3:
            raise ValueError(f"For primitive[PadV3], the input dims for edge, reflect or circular mode must be "
                             f"greater than or equal to 3, but got {x.ndim}.")
        if x.ndim != half + 2:
            raise ValueError(f"For primitive[PadV3], the input dims when padding's size equal {len(flat)} must be "
                             f"equal to {half + 2}, but got {x.ndim}.")
        if self.mode == "reflect":
            return MirrorPad("REFLECT")(x, tuple(full))
        for axis, (before, after) in enumerate(full):
            if before or after:
                x = _edge_pad(x, axis, before, after, self.mode == "circular")
        return x


# ---- image, detection and windows ----
from ...common import dtype as _mstype  # noqa: E402
from .array_ops import _host as _host_data  # noqa: E402

# the logits dtypes CTCGreedyDecoder takes (MindSpore refuses float16)
CTC_DECODER_DTYPES = (_mstype.float32, _mstype.float64)


class CTCGreedyDecoder(_Op):
    """``CTCGreedyDecoder(merge_repeated=True)(inputs, sequence_length) -> (decoded_indices, decoded_values,
    decoded_shape, log_probability)``: per batch entry, the best class of each of its first
    ``sequence_length`` steps of (T, B, C) logits, repeats merged (``merge_repeated``) and the blank (the
    last class) dropped; the result as a SparseTensor (int64 parts) and minus the sum of the best logits.
    Its length depends on the values: computed from host data (PyNative, or constants), as Unique."""

    def __init__(self, merge_repeated: bool = True) -> None:
        super().__init__()
        if not isinstance(merge_repeated, bool):
            raise TypeError(f"For 'CTCGreedyDecoder', 'merge_repeated' must be a bool, but got "
                            f"{type(merge_repeated).__name__}.")
        self.merge_repeated = merge_repeated

    def __call__(self, inputs: Any, sequence_length: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        logits, lengths = _tensor(inputs), _tensor(sequence_length)
        if logits.dtype not in CTC_DECODER_DTYPES:
            raise TypeError(f"For primitive[CTCGreedyDecoder], the input argument[inputs type] must be a type of "
                            f"{{Tensor[Float32], Tensor[Float64]}}, but got Tensor[{logits.dtype}].")
        if lengths.dtype != _mstype.int32:
            raise TypeError(f"For primitive[CTCGreedyDecoder], the input argument[sequence length dtype] must be a "
                            f"type of {{Tensor[Int32]}}, but got Tensor[{lengths.dtype}].")
        if logits.ndim != 3:
            raise ValueError(f"For 'CTCGreedyDecoder', inputs's dim must be 3, but got: {logits.ndim}.")
        steps, batch, classes = logits.shape
        if lengths.shape != (batch,):
            raise ValueError(f"For 'CTCGreedyDecoder', sequence_length must have shape ({batch},), but got "
                             f"{lengths.shape}.")
        data, span = _host_data("CTCGreedyDecoder", logits), _host_data("CTCGreedyDecoder", lengths)
        for b, n in enumerate(span.tolist()):
            if not 0 <= n <= steps:
                raise RuntimeError(f"For 'CTCGreedyDecoder', sequence_length[{b}] {n} should be less than {steps}.")
        blank = classes - 1
        best = data.argmax(axis=2)                   # the first best class, as std::max_element
        decoded, log_prob = [], np.zeros((batch, 1), data.dtype)
        for b, n in enumerate(span.tolist()):
            labels, previous = [], -1
            for t in range(n):
                label = int(best[t, b])
                if label != blank and not (self.merge_repeated and label == previous):
                    labels.append(label)
                previous = label
            decoded.append(labels)
            log_prob[b, 0] = -data[:n, b, :].max(axis=1).sum(dtype=data.dtype)
        indices = [(b, i) for b, labels in enumerate(decoded) for i in range(len(labels))]
        values = [label for labels in decoded for label in labels]
        width = max((len(labels) for labels in decoded), default=0)
        return (Tensor(np.asarray(indices, np.int64).reshape(-1, 2)), Tensor(np.asarray(values, np.int64)),
                Tensor(np.asarray([batch, width], np.int64)), Tensor(log_prob, logits.dtype))


__all__ = defined_here(globals(), __name__)


# ---- collectives ----
class GetNext(_Op):
    """``GetNext(types, shapes, output_num, shared_name)()``: the next batch of the device data queue
    ``shared_name``, which MindSpore's dataset sink fills. The emulator's sink (``Model.train`` /
    ``Model.eval`` with ``dataset_sink_mode=True``) feeds its graphs' GetNext itself and
    exposes no named queue, so calling the primitive raises InvalidParamError saying so."""

    def __init__(self, types: Any, shapes: Any, output_num: int, shared_name: str) -> None:
        super().__init__()
        for what, value in (("types", types), ("shapes", shapes)):
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"For '{self.name}', the type of '{what}' should be one of '['list', 'tuple']', "
                                f"but got type '{type(value).__name__}'.")
        if not isinstance(output_num, int) or isinstance(output_num, bool):
            raise TypeError(f"For '{self.name}', the type of 'output_num' should be int, but got "
                            f"{type(output_num).__name__}.")
        if not isinstance(shared_name, str):
            raise TypeError(f"For '{self.name}', the type of 'shared_name' should be str, but got "
                            f"{type(shared_name).__name__}.")
        self.types, self.shapes, self.output_num, self.shared_name = list(types), list(shapes), output_num, shared_name
        for key, value in (("types", self.types), ("shapes", self.shapes), ("output_num", output_num),
                           ("shared_name", shared_name)):
            self.add_prim_attr(key, value)

    def __call__(self) -> tuple:
        raise InvalidParamError(f"GetNext: the device data queue {self.shared_name!r} is not exposed by the "
                                f"emulator; its dataset sink (Model.train/Model.eval with "
                                f"dataset_sink_mode=True) feeds the graph's GetNext itself: pass the dataset there, "
                                f"or iterate it (create_tuple_iterator) and call the network on each batch")


__all__ += ["GetNext"]


# ---- fused and sparse optimizers, inner ops ----
# Sparse optimizer updates (SparseApply*, FusedSparse*): the rows of var and its state that `indices`
# names are updated, the others kept bit for bit. A composition over the dense update kernels of
# kernels/ops/optim.py, so no new kernel is built: the gradient rows are scatter-added into a dense
# gradient (UnsortedSegmentSum), the dense update runs, and a mask of the touched rows (the same
# scatter-add of ones) selects new rows from it and old rows from the operands. A repeated index sums its
# gradient rows first (MindSpore's CPU SparseApplyAdagrad merges them so; its SparseApplyFtrl and
# SparseApplyAdagradV2 CPU kernels apply them one after the other instead: unique indices agree).
from .array_ops import Fill as _Fill, Gather as _GatherRows, UnsortedSegmentSum as _UnsortedSegmentSum  # noqa: E402

_SPARSE_INDEX_DTYPES = ("int32", "int64")   # the index dtypes MindSpore's sparse update kernels take


def _check_bool_attr(owner: str, name: str, value: Any) -> bool:
    """MindSpore's ``validator.check_value_type(name, value, [bool])``."""
    check_value_type(owner, name, value, (bool,))
    return value


class _SparseUpdate(_Op):
    """A sparse update primitive over the dense kernel ``kernel``: ``lazy`` updates only the touched rows
    (else every row, the untouched ones with a zero gradient: FusedSparseAdam); ``dummy_states`` returns
    zeros in place of the new states, as MindSpore's FusedSparse* CPU kernels do (their state outputs are
    placeholders: the Parameters hold the result)."""
    kernel = ""
    lazy = True
    dummy_states = False

    def update_attrs(self) -> dict:
        return {}

    def _untouched_rows(self, inputs: list, outs: tuple) -> Sequence[Tensor]:
        """A non-lazy update's new values for the rows no index names (default: the dense update's)."""
        return outs

    def _checked(self, var: Tensor, grad: Tensor, indices: Tensor) -> None:
        if indices.ndim != 1:
            raise ValueError(f"For '{self.name}', the 'indices' must be a 1-D Tensor, but got shape "
                             f"{list(indices.shape)}.")
        if str(indices.dtype).lower() not in _SPARSE_INDEX_DTYPES:
            raise TypeError(f"For '{self.name}', the type of 'indices' must be int32 or int64, but got "
                            f"{indices.dtype}.")
        if grad.ndim != var.ndim or grad.shape[1:] != var.shape[1:]:
            raise ValueError(f"For '{self.name}', 'grad.shape[1:]' must be equal to 'var.shape[1:]', but got "
                             f"{list(grad.shape)} and {list(var.shape)}.")
        if grad.shape[0] != indices.shape[0]:
            raise ValueError(f"For '{self.name}', 'grad.shape[0]' must be equal to 'indices.shape[0]', but got "
                             f"{grad.shape[0]} and {indices.shape[0]}.")

    def _update(self, states: Sequence[Any], before: Sequence[Any], grad: Any, after: Sequence[Any],
                indices: Any, shift: Sequence[Any] = ()) -> tuple[Tensor, ...]:
        """Run the dense kernel on ``states + before + [dense grad] + after``; assign the new rows to the
        states that are Parameters; return the new values (``shift`` is added to the states first, where
        given, only inside the kernel: SparseApplyFtrlV2's shrinkage)."""
        var = _tensor(states[0])
        grad, indices = _float_input("grad", grad, var.dtype), _tensor(indices)
        self._checked(var, grad, indices)
        rows = var.shape[0]
        dense = _UnsortedSegmentSum()(grad, indices, rows)
        olds = [var] + [_float_input("state", s, var.dtype) for s in states[1:]]
        kernel_states = [old + extra if extra is not None else old
                         for old, extra in zip(olds, list(shift) + [None] * (len(olds) - len(shift)))]
        scalars = [_float_input("scalar", x, var.dtype) for x in before]
        tail = [_float_input("scalar", x, var.dtype) for x in after]
        inputs = kernel_states + scalars + [dense] + tail
        outs = apply_op(self.kernel, inputs, self.update_attrs())
        others = olds if self.lazy else self._untouched_rows(inputs, outs)
        if others is outs:
            news = list(outs)
        else:
            touched = Greater()(_UnsortedSegmentSum()(OnesLike()(grad), indices, rows), 0.0)
            news = [Select()(touched, new, other) for new, other in zip(outs, others)]
        for target, new in zip(states, news):
            if getattr(target, "is_parameter", False):
                Assign()(target, new)
        if self.dummy_states:
            return (news[0],) + tuple(ZerosLike()(old) for old in olds[1:])
        return tuple(news)


def _arity(owner: str, args: tuple, names: tuple[str, ...]) -> tuple:
    """The inputs of a primitive whose MindSpore ``__call__`` takes ``*args``, checked against its names."""
    if len(args) != len(names):
        raise TypeError(f"{owner}() takes {len(names)} inputs ({', '.join(names)}), got {len(args)}")
    return args


class SparseApplyAdagrad(_SparseUpdate):
    """``(var, accum, grad, indices)``: Adagrad on the indexed rows (``accum += g^2`` with update_slots;
    ``var -= lr g / sqrt(accum)``); returns (var, accum)."""
    kernel = "ApplyAdagrad"

    def __init__(self, lr: float, update_slots: bool = True, use_locking: bool = False):
        super().__init__()
        self.lr = _check_float_attr(self.name, "lr", lr)
        self.update_slots = _check_bool_attr(self.name, "update_slots", update_slots)
        self.use_locking = _check_bool_attr(self.name, "use_locking", use_locking)

    def update_attrs(self) -> dict:
        return {"update_slots": self.update_slots}

    def __call__(self, *args: Any) -> tuple[Tensor, ...]:
        var, accum, grad, indices = _arity(self.name, args, ("var", "accum", "grad", "indices"))
        return self._update((var, accum), (self.lr,), grad, (), indices)


class SparseApplyAdagradV2(SparseApplyAdagrad):
    """SparseApplyAdagrad with ``epsilon`` added to the root: ``var -= lr g / (sqrt(accum) + epsilon)``."""
    kernel = "ApplyAdagradV2"

    def __init__(self, lr: float, epsilon: float, use_locking: bool = False, update_slots: bool = True):
        _Op.__init__(self)
        self.lr = _check_float_attr(self.name, "lr", lr)
        self.epsilon = _check_float_attr(self.name, "epsilon", epsilon)
        self.use_locking = _check_bool_attr(self.name, "use_locking", use_locking)
        self.update_slots = _check_bool_attr(self.name, "update_slots", update_slots)

    def update_attrs(self) -> dict:
        return {"epsilon": self.epsilon, "update_slots": self.update_slots}


class SparseApplyProximalAdagrad(_SparseUpdate):
    """``(var, accum, lr, l1, l2, grad, indices)``: ApplyProximalAdagrad on the indexed rows; returns
    (var, accum)."""
    kernel = "ApplyProximalAdagrad"
    operands = ("var", "accum", "lr", "l1", "l2", "grad", "indices")

    def __init__(self, use_locking: bool = False):
        super().__init__()
        self.use_locking = _check_bool_attr(self.name, "use_locking", use_locking)

    def __call__(self, *args: Any) -> tuple[Tensor, ...]:
        var, accum, lr, l1, l2, grad, indices = _arity(self.name, args, self.operands)
        return self._update((var, accum), (lr, l1, l2), grad, (), indices)


class FusedSparseProximalAdagrad(SparseApplyProximalAdagrad):
    """SparseApplyProximalAdagrad whose accum output is a placeholder (zeros); returns (var, zeros)."""
    dummy_states = True


class SparseApplyFtrl(_SparseUpdate):
    """``(var, accum, linear, grad, indices)``: FTRL-proximal (ApplyFtrl's formula) on the indexed rows,
    lr/l1/l2/lr_power attributes; returns (var, accum, linear)."""
    kernel = "ApplyFtrl"

    def __init__(self, lr: float, l1: float, l2: float, lr_power: float, use_locking: bool = False):
        super().__init__()
        for name, value in (("lr", lr), ("l1", l1), ("l2", l2), ("lr_power", lr_power)):
            _check_float_attr(self.name, name, value)
        if lr <= 0:
            raise ValueError(f"For '{self.name}', the 'lr' must be a positive float, but got {lr}.")
        if l1 < 0 or l2 < 0:
            raise ValueError(f"For '{self.name}', 'l1' and 'l2' must be non-negative floats, but got {l1} and {l2}.")
        if lr_power > 0:
            raise ValueError(f"For '{self.name}', the 'lr_power' must be <= 0, but got {lr_power}.")
        self.lr, self.l1, self.l2, self.lr_power = lr, l1, l2, lr_power
        self.use_locking = _check_bool_attr(self.name, "use_locking", use_locking)

    def _shift(self, var: Any) -> tuple:
        return ()

    def __call__(self, *args: Any) -> tuple[Tensor, ...]:
        var, accum, linear, grad, indices = _arity(self.name, args, ("var", "accum", "linear", "grad", "indices"))
        return self._update((var, accum, linear), (), grad, (self.lr, self.l1, self.l2, self.lr_power), indices,
                            self._shift(var))


class FusedSparseFtrl(SparseApplyFtrl):
    """SparseApplyFtrl whose accum and linear outputs are placeholders (zeros)."""
    dummy_states = True


class SparseApplyFtrlV2(SparseApplyFtrl):
    """FTRL with l2 shrinkage: the gradient that enters ``linear`` is ``g + 2 l2_shrinkage var`` (accum
    still gathers g^2), so the kernel runs on ``linear + 2 l2_shrinkage var``."""

    def __init__(self, lr: float, l1: float, l2: float, l2_shrinkage: float, lr_power: float,
                 use_locking: bool = False):
        super().__init__(lr, l1, l2, lr_power, use_locking)
        self.l2_shrinkage = _check_float_attr(self.name, "l2_shrinkage", l2_shrinkage)

    def _shift(self, var: Any) -> tuple:
        return (None, None, _tensor(var) * (2.0 * self.l2_shrinkage)) if self.l2_shrinkage else ()


class SparseApplyRMSProp(_SparseUpdate):
    """``(var, ms, mom, lr, grad, indices)``: ApplyRMSProp on the indexed rows with rho/momentum/epsilon
    attributes; returns (var, ms, mom)."""
    kernel = "ApplyRMSProp"

    def __init__(self, rho: float, momentum: float, epsilon: float, use_locking: bool = False):
        super().__init__()
        self.rho = _check_float_attr(self.name, "rho", rho)
        self.momentum = _check_float_attr(self.name, "momentum", momentum)
        self.epsilon = _check_float_attr(self.name, "epsilon", epsilon)
        self.use_locking = _check_bool_attr(self.name, "use_locking", use_locking)

    def __call__(self, *args: Any) -> tuple[Tensor, ...]:
        var, ms, mom, lr, grad, indices = _arity(self.name, args, ("var", "ms", "mom", "lr", "grad", "indices"))
        return self._update((var, ms, mom), (lr,), grad, (self.rho, self.momentum, self.epsilon), indices)


class SparseApplyAdadelta(_SparseUpdate):
    """``(var, accum, accum_update, lr, rho, grad, indices)``: ApplyAdadelta on the indexed rows, epsilon
    an attribute; returns (var, accum, accum_update)."""
    kernel = "ApplyAdadelta"

    def __init__(self, epsilon: float, use_locking: bool = False):
        super().__init__()
        self.epsilon = _check_float_attr(self.name, "epsilon", epsilon)
        self.use_locking = _check_bool_attr(self.name, "use_locking", use_locking)

    def __call__(self, *args: Any) -> tuple[Tensor, ...]:
        var, accum, update, lr, rho, grad, indices = _arity(
            self.name, args, ("var", "accum", "accum_update", "lr", "rho", "grad", "indices"))
        return self._update((var, accum, update), (lr, rho, self.epsilon), grad, (), indices)


class FusedSparseAdam(_SparseUpdate):
    """``(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, indices)``: MindSpore's
    Adam (ApplyAdam's formula) over every row, the gradient zero outside the indexed rows; the m and v
    outputs are placeholders (zeros)."""
    kernel, lazy, dummy_states = "Adam", False, True
    operands = ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad", "indices")

    def __init__(self, use_locking: bool = False, use_nesterov: bool = False):
        super().__init__()
        self.use_locking = _check_bool_attr(self.name, "use_locking", use_locking)
        self.use_nesterov = _check_bool_attr(self.name, "use_nesterov", use_nesterov)

    def update_attrs(self) -> dict:
        return {"use_nesterov": self.use_nesterov}

    def _untouched_rows(self, inputs: list, outs: tuple) -> Sequence[Tensor]:
        """With use_nesterov MindSpore's CPU kernel moves only the indexed rows of var (the others keep their
        values; their moments still decay)."""
        return (inputs[0],) + tuple(outs[1:]) if self.use_nesterov else outs

    def __call__(self, *args: Any) -> tuple[Tensor, ...]:
        var, m, v, *rates, grad, indices = _arity(self.name, args, self.operands)
        return self._update((var, m, v), rates, grad, (), indices)


class FusedSparseLazyAdam(FusedSparseAdam):
    """FusedSparseAdam updating only the indexed rows of var, m and v."""
    lazy = True


class LARSUpdate(_Op):
    """``(weight, gradient, norm_weight, norm_gradient, weight_decay, learning_rate)``: the LARS gradient
    ``(gradient + weight_decay weight) ratio`` with the trust ratio ``hyperpara sqrt(norm_weight) /
    (sqrt(norm_gradient) + weight_decay sqrt(norm_weight) + epsilon)`` (1 where either sum of squares is 0),
    ``min(ratio / learning_rate, 1)`` with use_clip (nn.LARS's formula, which composes it)."""
    operands = ("weight", "gradient", "norm_weight", "norm_gradient", "weight_decay", "learning_rate")

    def __init__(self, epsilon: float = 1e-05, hyperpara: float = 0.001, use_clip: bool = False):
        super().__init__()
        self.epsilon = _check_float_attr(self.name, "epsilon", epsilon)
        self.hyperpara = _check_float_attr(self.name, "hyperpara", hyperpara)
        self.use_clip = _check_bool_attr(self.name, "use_clip", use_clip)

    def __call__(self, *args: Any) -> Tensor:
        weight, gradient, norm_weight, norm_gradient, weight_decay, learning_rate = _arity(self.name, args,
                                                                                           self.operands)
        w, g = _tensor(weight), _tensor(gradient)
        if w.shape != g.shape:
            raise ValueError(f"For '{self.name}', the shape of 'gradient' must be the same as 'weight', but got "
                             f"{list(g.shape)} and {list(w.shape)}.")
        nw, ng = _float_input("norm_weight", norm_weight, w.dtype), _float_input("norm_gradient", norm_gradient, w.dtype)
        wd, lr = _float_input("weight_decay", weight_decay, w.dtype), _float_input("learning_rate", learning_rate, w.dtype)
        w_norm, g_norm = Sqrt()(nw), Sqrt()(ng)
        ratio = w_norm * self.hyperpara / (g_norm + wd * w_norm + self.epsilon)
        ratio = Select()(Greater()(Minimum()(nw, ng), 0.0), ratio, OnesLike()(ratio))
        if self.use_clip:
            ratio = Minimum()(ratio / lr, 1.0)
        return (g + w * wd) * ratio


PAGED_ATTENTION_MASKED = -1e30     # the score of a cached position past a token's context length (float32)


class PagedAttention(_Op):
    """``(query, key_cache, value_cache, block_tables, context_lens)``: decode attention over a block-wise
    KV cache. Token t's keys and values are the first ``context_lens[t]`` positions of its blocks
    ``block_tables[t]`` (each ``block_size`` positions of the (num_blocks, block_size, kv_head_num,
    head_dim) caches); ``softmax(scale_value q k^T) v`` per head, head n reading kv head ``n // (head_num /
    kv_head_num)``, computed in float32. Quantised caches, masks and MLA are not served (InvalidParamError)."""

    def __init__(self, head_num: int, scale_value: float, kv_head_num: int, kv_cache_quant_mode: str = "DEFAULT",
                 mask_mode: str = "MASK_DEFAULT", mla_v_dim: int = 0):
        super().__init__()
        for name, value, types in (("head_num", head_num, (int,)), ("kv_head_num", kv_head_num, (int,)),
                                   ("scale_value", scale_value, (float, int))):
            check_value_type(self.name, name, value, types)
        self.head_num, self.kv_head_num = head_num, kv_head_num
        self.scale_value = float(scale_value)
        for name, value, served in (("kv_cache_quant_mode", kv_cache_quant_mode, "DEFAULT"),
                                    ("mask_mode", mask_mode, "MASK_DEFAULT"), ("mla_v_dim", mla_v_dim, 0)):
            if value != served:
                raise InvalidParamError(f"PagedAttention: {name}={value!r} is not supported here; use {served!r}")
        if self.kv_head_num <= 0 or self.head_num % self.kv_head_num:
            raise ValueError(f"For 'PagedAttention', 'head_num' ({head_num}) must be a multiple of 'kv_head_num' "
                             f"({kv_head_num}).")

    def __call__(self, query: Any, key_cache: Any, value_cache: Any = None, block_tables: Any = None,
                 context_lens: Any = None, antiquant_scale: Any = None, antiquant_offset: Any = None,
                 attn_mask: Any = None, q_seq_lens: Any = None, alibi_mask: Any = None) -> Tensor:
        for name, value in (("value_cache", value_cache), ("block_tables", block_tables),
                            ("context_lens", context_lens)):
            if value is None:
                raise InvalidParamError(f"PagedAttention: {name} is required here (MLA's shared cache is not served)")
        for name, value in (("antiquant_scale", antiquant_scale), ("antiquant_offset", antiquant_offset),
                            ("attn_mask", attn_mask), ("q_seq_lens", q_seq_lens), ("alibi_mask", alibi_mask)):
            if value is not None:
                raise InvalidParamError(f"PagedAttention: {name} is not supported here; pass None")
        return self._attend(query, key_cache, value_cache, block_tables, context_lens)

    def _attend(self, query: Any, key_cache: Any, value_cache: Any, block_tables: Any, context_lens: Any,
                bias: Any = None) -> Tensor:
        """The attention itself; ``bias`` (tokens, heads, length) is added to the scaled scores."""
        q, kc, vc = _tensor(query), _tensor(key_cache), _tensor(value_cache)
        tokens, heads, kv_heads = q.shape[0], self.head_num, self.kv_head_num
        dim = q.size // (tokens * heads) if tokens * heads else 0
        blocks, block_size = kc.shape[0], kc.shape[1]
        tables = _tensor(block_tables)
        length = tables.shape[1] * block_size
        f32 = mstype.float32

        def cached(cache: Tensor) -> Tensor:
            """(tokens, length, heads, dim): each token's blocks in order, kv heads repeated per group."""
            rows = _GatherRows()(Reshape()(Cast()(cache, f32), (blocks, block_size, kv_heads, dim)), tables, 0)
            rows = Reshape()(rows, (tokens, length, kv_heads, dim))
            group = Tensor(np.arange(heads, dtype=np.int32) // (heads // kv_heads))
            return _GatherRows()(rows, group, 2)

        keys, values = cached(kc), cached(vc)
        q4 = Reshape()(Cast()(q, f32), (tokens, 1, heads, dim))
        scores = ReduceSum()(q4 * keys, -1) * self.scale_value                     # (tokens, length, heads)
        if bias is not None:
            bias = _tensor(bias)
            if bias.size != tokens * heads * length:
                raise ValueError(f"For '{self.name}', 'alibi_mask' must hold (num_tokens, num_head, 1, "
                                 f"{length}) values, but got shape {list(bias.shape)}.")
            scores = scores + Transpose()(Reshape()(Cast()(bias, f32), (tokens, heads, length)), (0, 2, 1))
        positions = Tensor(np.arange(length, dtype=np.int32).reshape(1, length, 1))
        lens = Reshape()(Cast()(_tensor(context_lens), mstype.int32), (tokens, 1, 1))
        scores = Select()(Less()(positions, lens), scores, _Fill()(f32, (tokens, length, heads), PAGED_ATTENTION_MASKED))
        probs = Softmax(axis=1)(scores)
        out = ReduceSum()(_ExpandDims()(probs, -1) * values, 1)                      # (tokens, heads, dim)
        return Cast()(Reshape()(out, q.shape), q.dtype)


class PagedAttentionMask(PagedAttention):
    """PagedAttention with an ALiBi bias: ``alibi_mask`` (num_tokens, num_head, 1, kv_len), kv_len the
    blocks' positions, is added to the scaled scores before the softmax."""

    def __init__(self, head_num: int, scale_value: float, kv_head_num: int, kv_cache_quant_mode: str = "DEFAULT"):
        super().__init__(head_num, scale_value, kv_head_num, kv_cache_quant_mode)

    def __call__(self, query: Any, key_cache: Any, value_cache: Any, block_tables: Any, context_lens: Any,
                 antiquant_scale: Any = None, antiquant_offset: Any = None, alibi_mask: Any = None) -> Tensor:
        for name, value in (("antiquant_scale", antiquant_scale), ("antiquant_offset", antiquant_offset)):
            if value is not None:
                raise InvalidParamError(f"PagedAttentionMask: {name} is not supported here; pass None")
        return self._attend(query, key_cache, value_cache, block_tables, context_lens, alibi_mask)


__all__ += ["SparseApplyAdagrad", "SparseApplyAdagradV2", "SparseApplyProximalAdagrad", "FusedSparseProximalAdagrad",
            "SparseApplyFtrl", "FusedSparseFtrl", "SparseApplyFtrlV2", "SparseApplyRMSProp", "SparseApplyAdadelta",
            "FusedSparseAdam", "FusedSparseLazyAdam", "LARSUpdate", "PagedAttention", "PagedAttentionMask"]



# FlashAttentionScore's inputs this build does not serve (dropout, padding, prefix and TND's sequence lists):
# each must be None, as the fused kernel has no path for them
_FA_UNSERVED = ("drop_mask", "padding_mask", "prefix", "actual_seq_qlen", "actual_seq_kvlen")


class FlashAttentionScore(_Op):
    """``FlashAttentionScore(head_num, ...)(query, key, value, ..., attn_mask)`` -> (softmax_max,
    softmax_sum, softmax_out, attention_out): Ascend's fused training attention, the registry op of
    ``kernels/ops/attention.py`` (tiled online softmax; the backward recomputes the scores from the saved
    softmax statistics, so no B x N x S x S tensor is kept). The primitive MindFormers instantiates."""

    def __init__(self, head_num: int, keep_prob: float = 1.0, scale_value: float = 1.0, pre_tokens: int = 2147483647,
                 next_tokens: int = 2147483647, inner_precise: int = 0, input_layout: str = "BSH",
                 sparse_mode: int = 0):
        super().__init__()
        if keep_prob != 1.0:
            raise InvalidParamError(f"FlashAttentionScore: keep_prob={keep_prob} is not supported here (attention "
                                    f"dropout); use 1.0")
        self.head_num, self.scale_value, self.input_layout = head_num, scale_value, input_layout
        self.pre_tokens, self.next_tokens, self.sparse_mode = pre_tokens, next_tokens, sparse_mode
        self.keep_prob, self.inner_precise = keep_prob, inner_precise

    def fa_attrs(self) -> dict:
        return {"head_num": check_arg_int(self.head_num, "FlashAttentionScore: head_num"),
                "scale_value": float(self.scale_value), "input_layout": self.input_layout,
                "sparse_mode": int(self.sparse_mode), "pre_tokens": int(self.pre_tokens),
                "next_tokens": int(self.next_tokens)}

    def __call__(self, query: Any, key: Any, value: Any, real_shift: Any = None, drop_mask: Any = None,
                 padding_mask: Any = None, attn_mask: Any = None, prefix: Any = None, actual_seq_qlen: Any = None,
                 actual_seq_kvlen: Any = None) -> tuple[Tensor, ...]:
        given = dict(zip(_FA_UNSERVED, (drop_mask, padding_mask, prefix, actual_seq_qlen, actual_seq_kvlen)))
        given["real_shift"] = real_shift
        for name, arg in given.items():
            if arg is not None:
                raise InvalidParamError(f"FlashAttentionScore: {name} is not supported by the fused kernel here; pass "
                                        f"None (ops.flash_attention_score serves real_shift by composition)")
        inputs = [query, key, value]
        if attn_mask is not None and int(self.sparse_mode) in (0, 1):    # modes 2/3: the causal triangle itself
            inputs.append(_fa_mask(attn_mask))
        return apply_op("FlashAttentionScore", inputs, self.fa_attrs())


def _fa_mask(mask: Any) -> Tensor:
    """An attention mask as the fused kernel reads it: bool or uint8, (S1, S2) or (B|1, N1|1, S1, S2)
    ((B|1, S1, S2) gets its head axis; other integer dtypes become ``mask != 0``)."""
    m = _tensor(mask)
    if m.ndim == 3:
        m = apply_op("ExpandDims", [m], {"axis": 1})[0]
    if m.dtype.name not in ("bool", "uint8"):
        m = apply_op("NotEqual", [m, Tensor(np.zeros((), m.dtype.name if m.dtype.name != "bfloat16" else "float32"))])[0]
    return m


__all__ += ["FlashAttentionScore"]

def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.nn_ops", name, __all__)
