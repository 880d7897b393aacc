"""``mindspore.ops.function.nn_func``: the functional forms of the neural-network ops (activations,
softmax, convolution, padding, interpolation, dropout) and the losses (``ops.cross_entropy``,
``ops.nll_loss``, ``ops.mse_loss``, ``ops.l1_loss``, ``ops.binary_cross_entropy_with_logits``,
``ops.smooth_l1_loss``), which ``nn``'s loss cells call.

The losses are compositions of library ops (and the fused softmax-cross-entropy kernels), so their
gradients come from the ops' backward rules. Class targets become one-hot rows by comparing the
labels with a constant row 0..C-1 (an Equal kernel), which also gives ``ignore_index`` its zero rows.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.graph.capture import current_tracer

from ...common import dtype as mstype
from ...common.seed import call_site_op, graph_seed
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .. import operations
from .._utils import _int_tuple, _probability, defined_here
from ..operations.array_ops import ResizeNearestNeighbor
from ..operations.image_ops import ResizeBilinearV2
from ..operations.nn_ops import (BiasAdd, Conv2D, Dropout, GeLU, LogSoftmax, MirrorPad, SmoothL1Loss, Softmax,
                                 check_reduction, reduce_loss)
from ..composite_op import install_composite_functions
from ..primitive import _tensor, apply_op, generated_functions
from .array_func import cast, reshape
from .math_func import abs as tensor_abs  # mindspore.ops.abs/sum, not the builtins
from .math_func import equal, exp, log, maximum, minimum, mul, not_equal, square
from .math_func import sum as tensor_sum

# relu, sigmoid, relu6, ...: the functional forms of the registry's operand-only activations
globals().update(generated_functions("nn_func", vars(operations)))


def gelu(input: Any, approximate: str = "tanh") -> Tensor:
    if approximate != "tanh":
        raise InvalidParamError(f"gelu: approximate={approximate!r} is not supported; GeLU uses 'tanh'")
    return GeLU()(input)


def softmax(input: Any, axis: int = -1, *, dtype: Any = None) -> Tensor:
    """Softmax along ``axis``; with ``dtype``, of ``input`` cast to it first (as MindSpore)."""
    return Softmax(axis)(input if dtype is None else cast(input, dtype))


def log_softmax(logits: Any, axis: int = -1) -> Tensor:
    return LogSoftmax(axis)(logits)


def bias_add(input_x: Any, bias: Any) -> Tensor:
    return BiasAdd()(input_x, bias)


def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, pad_mode: str = "valid",
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    w = _tensor(weight)
    out = Conv2D(w.shape[0], w.shape[2:], pad_mode=pad_mode, pad=padding, stride=stride,
                 dilation=dilation, group=groups)(input, w)
    return out if bias is None else BiasAdd()(out, bias)


def pad(input_x: Any, padding: Sequence[int], mode: str = "constant", value: Any = None) -> Tensor:
    """``padding`` pairs (before, after) start at the last dimension: (left, right, top, bottom, ...).
    Modes 'constant' (Pad, filled with ``value``) and 'reflect' (MirrorPad REFLECT)."""
    x = _tensor(input_x)
    if mode not in ("constant", "reflect"):
        raise FeatureNotSupportedError(f"pad: mode={mode!r} is not supported; use 'constant' or 'reflect'")
    flat = _int_tuple("pad: padding", padding)
    if len(flat) % 2 or len(flat) // 2 > x.ndim:
        raise InvalidParamError(f"pad: padding={list(flat)} must hold an even number of ints, at most 2 per "
                                f"dimension of the input's shape {x.shape}")
    if any(p < 0 for p in flat):
        raise InvalidParamError(f"pad: padding={list(flat)} must be >= 0 (negative padding is not supported on "
                                f"Ascend); use ops.slice to crop")
    pairs = [(0, 0)] * (x.ndim - len(flat) // 2) + [tuple(flat[i:i + 2]) for i in reversed(range(0, len(flat), 2))]
    if mode == "reflect":
        if value is not None:
            raise InvalidParamError(f"pad: value={value!r} is only used with mode='constant'")
        return MirrorPad("REFLECT")(x, tuple(pairs))
    attrs = {"paddings": tuple(pairs)}
    if value is not None:
        attrs["value"] = value
    return apply_op("Pad", [x], attrs)[0]


def interpolate(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: Any = None, recompute_scale_factor: Any = None) -> Tensor:
    """Resize a 4-D NCHW input to ``size`` by 'nearest' (ResizeNearestNeighbor: floor(o * in / out),
    OpenCV's INTER_NEAREST) or 'bilinear' (ResizeBilinearV2 with half-pixel centers, or corner-aligned
    with ``align_corners=True``), as MindSpore builds it. As there, 4-D input takes ``scale_factor``
    only with ``recompute_scale_factor=True`` (size = floor(in * scale_factor)); the other modes and
    ranks are not supported here."""
    x = _tensor(input)
    if mode not in ("nearest", "bilinear"):
        raise FeatureNotSupportedError(f"interpolate: mode={mode!r} is not supported; use 'nearest' or "
                                       f"'bilinear' (4-D input)")
    if x.ndim != 4:
        raise FeatureNotSupportedError(f"interpolate: {mode} takes a 4-D (N, C, H, W) input here, got shape "
                                       f"{x.shape}")
    if (size is None) == (scale_factor is None):
        raise InvalidParamError("interpolate: give exactly one of size and scale_factor")
    if size is not None:
        if recompute_scale_factor:
            raise InvalidParamError("interpolate: recompute_scale_factor is not meaningful with an explicit size")
        size = (size, size) if isinstance(size, int) else _int_tuple("interpolate: size", size)
    else:
        if not recompute_scale_factor:
            raise InvalidParamError(f"interpolate: scale_factor with mode={mode!r} on a 4-D input needs "
                                    f"recompute_scale_factor=True (size = floor(in * scale_factor)), as in "
                                    f"MindSpore; or give size")
        factors = scale_factor if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * 2
        if len(factors) != 2:
            raise InvalidParamError(f"interpolate: scale_factor={scale_factor!r} needs 2 values for a 4-D input")
        size = tuple(int(math.floor(float(n) * f)) for n, f in zip(x.shape[2:], factors))
    if len(size) != 2:
        raise InvalidParamError(f"interpolate: size={size!r} needs 2 values (new_height, new_width) for a 4-D "
                                f"input")
    if mode == "nearest":
        if align_corners is not None:
            raise InvalidParamError("interpolate: align_corners is only valid for mode 'bilinear' here")
        return ResizeNearestNeighbor(size)(x)
    align = bool(align_corners)
    return ResizeBilinearV2(align, not align)(x, size)


def dropout(input: Any, p: float = 0.5, training: bool = True, seed: int | None = None) -> Tensor:
    """Zero each element with probability ``p`` and scale the others by ``1 / (1 - p)``; the identity
    when ``training`` is False. Called from plain Python, each call is a new op with the next seed
    pair (MindSpore's PyNative behaviour); inside a captured graph, each call site keeps one op whose
    generator advances every step, as in MindSpore's compiled graphs."""
    if not isinstance(training, bool):
        raise InvalidParamError(f"dropout: training={training!r} must be a bool")
    keep = 1.0 - _probability("dropout", "p", p, low_open=False)
    if not training:
        return _tensor(input)
    tracer = current_tracer()
    if tracer is None:
        return Dropout(keep, *graph_seed(seed, "dropout"))(input)[0]
    site = (tracer.graph.name, tracer.draw(), keep, seed)
    op = call_site_op(site, lambda: Dropout(keep, *graph_seed(seed, "dropout")))
    return op(input)[0]


def leaky_relu(input: Any, alpha: float = 0.2) -> Tensor:
    """``max(alpha * x, x)`` (``min`` for alpha > 1), as MindSpore builds it: Mul and Maximum, which
    O1 fuses into one kernel; at 0 the gradient is alpha's (Maximum's tie goes to its first input)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise InvalidParamError(f"leaky_relu: alpha={alpha!r} must be a float or an int")
    x = _tensor(input)
    scaled = mul(alpha, x)
    return maximum(scaled, x) if alpha <= 1 else minimum(scaled, x)


def softmax_cross_entropy(logits: Tensor, labels: Tensor, sparse: bool) -> Tensor:
    """Per-sample cross entropy of (N, C) logits: class indices (``sparse``) or probability rows."""
    if sparse:
        labels = cast(labels, mstype.int32)
        return apply_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels])[0]
    if labels.dtype != logits.dtype:
        labels = cast(labels, logits.dtype)
    return apply_op("SoftmaxCrossEntropyWithLogits", [logits, labels])[0]


def _one_hot(target: Tensor, classes: int, dtype: Any) -> Tensor:
    row = Tensor(np.arange(classes, dtype=np.int32).reshape(1, classes))
    column = reshape(cast(target, mstype.int32), (-1, 1))
    return cast(equal(column, row), dtype)


def _class_weights(weight: Any, dtype: Any) -> Tensor | None:
    return None if weight is None else cast(reshape(weight, (1, -1)), dtype)


def cross_entropy(input: Tensor, target: Tensor, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of (N, C) logits against class indices (int) or class probabilities (float)."""
    return nll_loss(log_softmax(input, 1), target, weight, ignore_index, reduction, label_smoothing)


def nll_loss(inputs: Tensor, target: Tensor, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Negative log likelihood of (N, C) log-probabilities; the mean divides by the summed weights of
    the targets that count (``ignore_index`` excluded), as MindSpore and PyTorch do."""
    check_reduction(reduction)
    if inputs.ndim != 2:
        raise InvalidParamError(f"nll_loss/cross_entropy: input must be (N, C), got shape {inputs.shape}")
    classes = inputs.shape[1]
    w = _class_weights(weight, inputs.dtype)
    if target.dtype.name in ("float32", "float16"):         # class probabilities
        probs = cast(target, inputs.dtype)
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / classes
        per = probs * inputs if w is None else probs * inputs * w
        loss = -tensor_sum(per, 1)
        return reduce_loss(loss, reduction)
    hot = _one_hot(target, classes, inputs.dtype)
    keep = cast(not_equal(reshape(cast(target, mstype.int32), (-1,)), ignore_index), inputs.dtype)
    probs = hot
    if label_smoothing:
        probs = hot * (1 - label_smoothing) + label_smoothing / classes
    per = probs * inputs if w is None else probs * inputs * w
    loss = -tensor_sum(per, 1) * keep
    if reduction == "none":
        return loss
    if reduction == "sum":
        return tensor_sum(loss)
    counts = keep if w is None else tensor_sum(hot * w, 1) * keep
    return tensor_sum(loss) / tensor_sum(counts)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return reduce_loss(square(input - target), check_reduction(reduction))


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return reduce_loss(tensor_abs(input - target), check_reduction(reduction))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Any = None, pos_weight: Any = None,
                                     reduction: str = "mean") -> Tensor:
    """Stable form: (1 - y) x + (1 + (pw - 1) y) (log(1 + exp(-|x|)) + max(-x, 0))."""
    logits, label = input, target
    check_reduction(reduction)
    label = cast(label, logits.dtype)
    softplus = log(exp(-tensor_abs(logits)) + 1.0) + maximum(-logits, 0.0)
    scale = 1.0 if pos_weight is None else (cast(pos_weight, logits.dtype) - 1.0) * label + 1.0
    loss = (1.0 - label) * logits + scale * softplus
    return reduce_loss(loss, reduction, None if weight is None else cast(weight, logits.dtype))


def smooth_l1_loss(input: Tensor, target: Tensor, beta: float = 1.0, reduction: str = "none") -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (d = input - target): see
    :class:`SmoothL1Loss`."""
    return SmoothL1Loss(beta, reduction)(input, target)


# the cells of nn.loss call it, but it is no name of mindspore.ops
INTERNAL = ("softmax_cross_entropy",)
# ---- activations, normalisation, pooling, padding, attention (the nn layers' ops) ----


# ---- losses ----


install_composite_functions(globals(), "mindspore.ops.function.nn_func")

__all__ = [name for name in defined_here(globals(), __name__) if name not in INTERNAL]


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.nn_func", name, __all__)
