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

from ascendemu.errors import (FeatureNotSupportedError, InvalidParamError, InvalidTypeError, InvalidValueError,
                              RuntimeParamError)
from ascendemu.graph.capture import current_tracer
from ascendemu.kernels.ops.attention import FA_MASKED_SCORE

from ...common import dtype as mstype
from ...common.seed import call_site_op, graph_seed
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .. import operations
from .._utils import _int_tuple, _probability, defined_here
from ..operations.array_ops import GatherD, MaskedFill, ResizeNearestNeighbor
from ..operations.image_ops import ResizeBilinearV2
from ..operations.nn_ops import (BiasAdd, Conv2D, Dropout, GeLU, LogSoftmax, MirrorPad, SmoothL1Loss, Softmax,
                                 check_reduction, reduce_loss)
from ..composite_op import install_composite_functions
from ..primitive import _tensor, apply_op, generated_functions
from .array_func import cast, reshape
from .array_func import fliplr, flipud  # noqa: F401  array breadth 2: composed there, defined here by MindSpore
from .math_func import abs as tensor_abs  # mindspore.ops.abs/sum, not the builtins
from .math_func import equal, exp, log, maximum, minimum, mul, not_equal, square
from .math_func import sum as tensor_sum

# relu, sigmoid, relu6, ...: the functional forms of the registry's operand-only activations
globals().update(generated_functions("nn_func", vars(operations)))


GELU_FLOAT_DTYPES = ("float16", "float32", "float64", "bfloat16")


def gelu(input: Any, approximate: str = "none") -> Tensor:
    """GELU. 'tanh': the GeLU primitive; 'none' (MindSpore's default): the exact erf form composed as
    MindSpore composes it, ``x * (erf(x / sqrt(2)) + 1) * 0.5`` with tensor constants of x's dtype, so
    a graph (and its MINDIR export) holds MindSpore's Div, Erf, Add and Mul nodes."""
    if approximate not in ("none", "tanh"):
        raise ValueError("For ops.gelu, approximate value should be either 'none' or 'tanh'.")
    if not isinstance(input, Tensor):
        raise TypeError(f"For Primitive[Dtype], the input argument[input_x] must be a Tensor, CSRTensor or "
                        f"COOTensor, but got {type(input)}.")
    x = input
    if x.dtype.name not in GELU_FLOAT_DTYPES:
        raise TypeError(f"For gelu, the input dtype must be bfloat16, float16, float32 or float64, but got "
                        f"{x.dtype}.")
    if approximate == "tanh":
        return GeLU()(x)
    np_dtype = np.float32 if x.dtype.name == "bfloat16" else x.dtype.name
    const = lambda v: Tensor(np.asarray(v, np_dtype), x.dtype)  # noqa: E731
    output = operations.Erf()(operations.Div()(x, const(np.sqrt(np.asarray(2.0, np_dtype))))) + const(1.0)
    return x * output * const(0.5)


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
    if mode not in ("nearest", "bilinear") or x.ndim != 4:       # the other modes and ranks: round 2 (below)
        return _interpolate_modes(x, size, scale_factor, mode, align_corners, recompute_scale_factor)
    if (size is None) == (scale_factor is None):
        raise InvalidValueError("interpolate: give exactly one of size and scale_factor")
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


def _class_weights(weight: Any, dtype: Any) -> Tensor | None:
    return None if weight is None else cast(reshape(weight, (1, -1)), dtype)


def _inner_log_softmax(x: Tensor, axis: int) -> Tensor:
    """``x - logsumexp(x)`` composed as MindSpore's cross_entropy composes it (``_innner_log_softmax``: ReduceMax,
    Sub, Exp, ReduceSum, Log, Add, Sub; the gradient also flows through the max), not one LogSoftmax kernel:
    its forward and backward hold MindSpore's logits-sized temporaries, which set a large vocabulary's peak."""
    peak = ReduceMax(True)(x, axis)
    return x - (log(ReduceSum(True)(exp(x - peak), axis)) + peak)


def cross_entropy(input: Tensor, target: Tensor, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of (N, C) logits against class indices (int) or class probabilities (float)."""
    if target.dtype.name in ("float32", "float16"):
        return nll_loss(log_softmax(input, 1), target, weight, ignore_index, reduction, label_smoothing)
    return nll_loss(_inner_log_softmax(input, 1), target, weight, ignore_index, reduction, label_smoothing)


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
    return _nll_loss_of_indices(inputs, target, w, ignore_index, reduction, label_smoothing)


def _nll_loss_of_indices(inputs: Tensor, target: Tensor, w: Tensor | None, ignore_index: int, reduction: str,
                         label_smoothing: float) -> Tensor:
    """MindSpore's ``_nll_loss`` on class indices: the target's column picked by GatherD (no one-hot: a (N, C)
    float32 one-hot would be held from the step's start), the smoothing term always computed (scaled by 0
    without smoothing, as MindSpore's graph does), ignored targets masked to 0."""
    index = reshape(cast(target, mstype.int32), (-1, 1))
    ignored = equal(index, ignore_index)
    index = MaskedFill()(index, ignored, 0)
    weighted = inputs if w is None else inputs * w
    loss = -GatherD()(weighted, 1, index)
    smooth = -tensor_sum(weighted, 1, keepdim=True)
    loss, smooth = MaskedFill()(loss, ignored, 0.0), MaskedFill()(smooth, ignored, 0.0)
    loss, smooth = reshape(loss, (-1,)), reshape(smooth, (-1,))
    if reduction == "sum":
        loss, smooth = tensor_sum(loss), tensor_sum(smooth)
    elif reduction == "mean":          # over the weights of the targets that count
        counts = ones(index.shape, inputs.dtype) if w is None else _gather(reshape(w, (-1,)), index, 0)
        total = tensor_sum(MaskedFill()(counts, ignored, 0.0))
        loss, smooth = tensor_sum(loss) / total, tensor_sum(smooth) / total
    return (1.0 - label_smoothing) * loss + (label_smoothing / inputs.shape[1]) * smooth


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
from ..operations.nn_ops import Conv3D, Conv3DTranspose, _adaptive_avg_pool, _adaptive_sizes  # noqa: E402
from .array_func import expand_dims, ones, ones_like, squeeze, transpose  # noqa: E402


def silu(input: Any) -> Tensor:
    """``x * sigmoid(x)``."""
    x = _tensor(input)
    return x * apply_op("Sigmoid", [x])[0]


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """x clipped to [min_val, max_val]."""
    if min_val > max_val:
        raise InvalidParamError(f"hardtanh: min_val={min_val!r} must be <= max_val={max_val!r}")
    return maximum(minimum(_tensor(input), max_val), min_val)


def logsigmoid(x: Any) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, computed stably."""
    return -operations.nn_ops.Softplus()(-_tensor(x))


def softmin(x: Any, axis: int = -1, *, dtype: Any = None) -> Tensor:
    """``softmax(-x)`` along ``axis``."""
    return softmax(-_tensor(x), axis, dtype=dtype)


def threshold(input: Any, thr: float, value: float) -> Tensor:
    """x where ``x > thr``, else ``value``."""
    x = _tensor(input)
    return operations.array_ops.Select()(x > thr, x, x * 0 + value)


def conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, pad_mode: str = "valid", padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D convolution by :class:`Conv3D` (composed from Conv2D), plus ``bias`` per output channel."""
    w = _tensor(weight)
    out = Conv3D(w.shape[0], w.shape[2:], pad_mode=pad_mode, pad=padding, stride=stride, dilation=dilation,
                 group=groups)(input, w)
    return out if bias is None else out + reshape(bias, (-1, 1, 1, 1))


def conv3d_transpose(inputs: Any, weight: Any, pad_mode: str = "valid", padding: Any = 0, stride: Any = 1,
                     dilation: Any = 1, group: int = 1, output_padding: Any = 0) -> Tensor:
    """Transposed 3-D convolution by :class:`Conv3DTranspose`, channels read from the weight's shape
    (C_in, C_out / group, kd, kh, kw)."""
    w = _tensor(weight)
    return Conv3DTranspose(w.shape[0], w.shape[1] * group, w.shape[2:], pad_mode=pad_mode, pad=padding,
                           stride=stride, dilation=dilation, group=group, output_padding=output_padding)(inputs, w)


def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Tensor:
    """Normalise (N, C, *) over each group of C / num_groups channels (and all the other axes) with the
    biased variance, then ``* weight + bias`` per channel, as MindSpore's group_norm."""
    x = _tensor(input)
    if x.ndim < 2:
        raise InvalidParamError(f"group_norm: input must have rank >= 2, got shape {x.shape}")
    n, c = x.shape[:2]
    if isinstance(num_groups, bool) or not isinstance(num_groups, int) or num_groups < 1 or c % num_groups:
        raise InvalidValueError(f"group_norm: num_groups={num_groups!r} must be an int >= 1 dividing the {c} channels")
    grouped = reshape(x, (n, num_groups, -1))
    mean = operations.math_ops.ReduceMean(keep_dims=True)(grouped, 2)
    centred = grouped - mean
    var = operations.math_ops.ReduceMean(keep_dims=True)(square(centred), 2)
    out = reshape(centred * operations.math_ops.Rsqrt()(var + eps), x.shape)
    channel = (c,) + (1,) * (x.ndim - 2)
    if weight is not None:
        out = out * reshape(weight, channel)
    if bias is not None:
        out = out + reshape(bias, channel)
    return out


def adaptive_avg_pool1d(input: Any, output_size: int) -> Tensor:
    """Adaptive average pooling of the last axis of (N, C, L)."""
    x = _tensor(input)
    if x.ndim != 3:
        raise InvalidValueError(f"adaptive_avg_pool1d: input must have rank 3 (N, C, L), got shape {x.shape}")
    if isinstance(output_size, bool) or not isinstance(output_size, int):
        raise TypeError(f"adaptive_avg_pool1d: output_size={output_size!r} must be an int")
    return _adaptive_avg_pool(x, _adaptive_sizes("adaptive_avg_pool1d", x.shape, output_size, 1))


def _factor(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParamError(f"{owner}: {name}={value!r} must be an int >= 1")
    return value


def pixel_shuffle(input: Any, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r): channel c r^2 + i r + j goes to row h r + i, column w r + j."""
    x, r = _tensor(input), _factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if x.ndim < 3 or x.shape[-3] % (r * r):
        raise InvalidValueError(f"pixel_shuffle: input of shape {x.shape} needs rank >= 3 and channels (dim -3) "
                                f"divisible by upscale_factor^2 = {r * r}")
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = transpose(reshape(x, (-1, c // (r * r), r, r, h, w)), (0, 1, 4, 2, 5, 3))
    return reshape(y, lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Any, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of :func:`pixel_shuffle`."""
    x, r = _tensor(input), _factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if x.ndim < 3 or x.shape[-2] % r or x.shape[-1] % r:
        raise InvalidValueError(f"pixel_unshuffle: input of shape {x.shape} needs rank >= 3 and H, W divisible by "
                                f"downscale_factor={r}")
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = transpose(reshape(x, (-1, c, h // r, r, w // r, r)), (0, 1, 3, 5, 2, 4))
    return reshape(y, lead + (c * r * r, h // r, w // r))


def channel_shuffle(x: Any, groups: int) -> Tensor:
    """(N, C, *) with its channels seen as (groups, C / groups) and transposed."""
    t, g = _tensor(x), _factor("channel_shuffle", "groups", groups)
    if t.ndim < 3 or t.shape[1] % g:
        raise InvalidValueError(f"channel_shuffle: input of shape {t.shape} needs rank >= 3 and channels divisible "
                                f"by groups={g}")
    n, c = t.shape[:2]
    y = transpose(reshape(t, (n, g, c // g, -1)), (0, 2, 1, 3))
    return reshape(y, t.shape)


def _channel_dropout(owner: str, input: Any, p: float, training: bool, ranks: tuple[int, ...]) -> Tensor:
    """Zero whole channels (N, C) with probability p and scale the rest by 1 / (1 - p): a dropout of a
    (N, C, 1, ...) tensor of ones, broadcast over the channel's elements."""
    x = _tensor(input)
    if x.ndim not in ranks:
        raise InvalidParamError(f"{owner}: input must have rank {' or '.join(map(str, ranks))}, got shape {x.shape}")
    _probability(owner, "p", p, low_open=False)
    if not training or p == 0:
        return x
    mask_shape = x.shape[:2] + (1,) * (x.ndim - 2) if x.ndim == max(ranks) else x.shape[:1] + (1,) * (x.ndim - 1)
    return x * dropout(ones(mask_shape, x.dtype), p, True)


def dropout1d(input: Any, p: float = 0.5, training: bool = True) -> Tensor:
    """Channel dropout of (N, C, L) (or (C, L): each row)."""
    return _channel_dropout("dropout1d", input, p, training, (2, 3))


def dropout2d(input: Any, p: float = 0.5, training: bool = True) -> Tensor:
    """Channel dropout of (N, C, H, W)."""
    return _channel_dropout("dropout2d", input, p, training, (4,))


def dropout3d(input: Any, p: float = 0.5, training: bool = True) -> Tensor:
    """Channel dropout of (N, C, D, H, W)."""
    return _channel_dropout("dropout3d", input, p, training, (5,))


def _adaptive_max_pool(owner: str, x: Tensor, sizes: tuple[int, ...]) -> Tensor:
    """Adaptive max pooling of the last ``len(sizes)`` axes: max is separable, so per axis one ReduceMax
    of each output's window [floor(i n / out), ceil((i + 1) n / out)), joined by one Concat."""
    for k, out in enumerate(sizes):
        axis = x.ndim - len(sizes) + k
        n_in = x.shape[axis]
        if out == n_in:
            continue
        parts = []
        for i in range(out):
            lo, hi = (i * n_in) // out, -(-(i + 1) * n_in // out)
            begin = [0] * x.ndim
            end = list(x.shape)
            begin[axis], end[axis] = lo, hi
            window = operations.array_ops.StridedSlice()(x, tuple(begin), tuple(end), (1,) * x.ndim)
            parts.append(operations.math_ops.ReduceMax(keep_dims=True)(window, axis))
        x = operations.array_ops.Concat(axis)(parts)
    return x


def _no_indices(owner: str, return_indices: Any) -> None:
    if return_indices:
        raise InvalidParamError(f"{owner}: return_indices=True is not supported; leave it False (the argmax indices "
                                f"are not served)")


def adaptive_max_pool1d(input: Any, output_size: int) -> Tensor:
    """Adaptive max pooling of the last axis of (N, C, L) or (C, L)."""
    x = _tensor(input)
    if x.ndim not in (2, 3):
        raise InvalidValueError(f"adaptive_max_pool1d: input must have rank 2 or 3, got shape {x.shape}")
    if isinstance(output_size, bool) or not isinstance(output_size, int):
        raise InvalidParamError(f"adaptive_max_pool1d: output_size={output_size!r} must be an int")
    return _adaptive_max_pool("adaptive_max_pool1d", x,
                              _adaptive_sizes("adaptive_max_pool1d", x.shape, output_size, 1))


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Adaptive max pooling of the last two axes of (N, C, H, W) or (C, H, W); None keeps a size. With
    ``return_indices``, also each maximum's flat index in its H x W plane (int64, the first on ties)."""
    x = _tensor(input)
    if not isinstance(return_indices, bool):
        raise InvalidTypeError(f"adaptive_max_pool2d: return_indices must be a bool, got {return_indices!r}")
    if x.ndim not in (3, 4):
        raise InvalidParamError(f"adaptive_max_pool2d: input must have rank 3 or 4, got shape {x.shape}")
    sizes = _adaptive_sizes("adaptive_max_pool2d", x.shape, output_size, 2)
    out = _adaptive_max_pool("adaptive_max_pool2d", x, sizes)
    return (out, _adaptive_argmax2d(x, sizes)) if return_indices else out


def _adaptive_argmax2d(x: Tensor, sizes: tuple[int, int]) -> Tensor:
    """The flat H x W index of each adaptive window's first maximum: the windows' members gathered as
    rows of a constant table (a short window padded with its first member, which moves no first
    maximum), Argmax along each row, that member's index read back from the table."""
    (h, w), (oh, ow) = x.shape[-2:], sizes
    table = []
    for i in range(oh):
        for j in range(ow):
            rows = range((i * h) // oh, -(-(i + 1) * h // oh))
            cols = range((j * w) // ow, -(-(j + 1) * w // ow))
            table.append([r * w + c for r in rows for c in cols])
    width = max(len(members) for members in table)
    table = np.array([m + [m[0]] * (width - len(m)) for m in table], np.int32)
    flat = operations.array_ops.Reshape()(x, x.shape[:-2] + (h * w,))
    windows = operations.array_ops.Gather()(flat, Tensor(table), flat.ndim - 1)       # (..., oh * ow, width)
    local = operations.array_ops.Argmax(-1)(windows) + Tensor(np.arange(oh * ow, dtype=np.int32) * width)
    picked = operations.array_ops.Gather()(Tensor(table.reshape(-1)), local, 0)
    return operations.array_ops.Cast()(operations.array_ops.Reshape()(picked, x.shape[:-2] + (oh, ow)), mstype.int64)


def adaptive_max_pool3d(input: Any, output_size: Any, return_indices: bool = False) -> Tensor:
    """Adaptive max pooling of the last three axes of (N, C, D, H, W) or (C, D, H, W)."""
    x = _tensor(input)
    _no_indices("adaptive_max_pool3d", return_indices)
    if x.ndim not in (4, 5):
        raise InvalidParamError(f"adaptive_max_pool3d: input must have rank 4 or 5, got shape {x.shape}")
    return _adaptive_max_pool("adaptive_max_pool3d", x,
                              _adaptive_sizes("adaptive_max_pool3d", x.shape, output_size, 3))


def _pool3d(owner: str, x: Any, kernel: tuple[int, int, int], stride: tuple[int, int, int],
            pads: tuple[int, ...], maximum_pool: bool) -> Tensor:
    """3-D max or mean pooling of (N, C, D, H, W) or (C, D, H, W) after constant pads (head, tail, top,
    bottom, left, right; -inf for max, 0 for mean, which the mean then counts): per depth tap, the 2-D
    pool of the depth slices it reads (folded into the batch), combined by Maximum or averaged."""
    x = _tensor(x)
    if x.ndim not in (4, 5):
        raise InvalidParamError(f"{owner}: input must have rank 4 or 5, got shape {x.shape}")
    batched = x if x.ndim == 5 else expand_dims(x, 0)
    if any(pads):
        fill = float("-inf") if maximum_pool else 0.0
        batched = pad(batched, (pads[4], pads[5], pads[2], pads[3], pads[0], pads[1]), value=fill)
    n, c, d, h, w = batched.shape
    (kd, kh, kw), (sd, sh, sw) = kernel, stride
    od = (d - kd) // sd + 1
    if od < 1 or h < kh or w < kw:
        raise InvalidParamError(f"{owner}: the kernel {kernel} does not fit the (padded) input {batched.shape}")
    prim = operations.nn_ops.MaxPool if maximum_pool else operations.nn_ops.AvgPool
    pool2d = prim((kh, kw), (sh, sw), "valid")
    out = None
    for k in range(kd):
        taps = operations.array_ops.StridedSlice()(batched, (0, 0, k, 0, 0), (n, c, k + (od - 1) * sd + 1, h, w),
                                                   (1, 1, sd, 1, 1))
        folded = reshape(transpose(taps, (0, 2, 1, 3, 4)), (n * od, c, h, w))
        part = pool2d(folded)
        out = part if out is None else (maximum(out, part) if maximum_pool else out + part)
    if not maximum_pool:
        out = out / kd
    _, _, oh, ow = out.shape
    out = transpose(reshape(out, (n, od, c, oh, ow)), (0, 2, 1, 3, 4))
    return out if x.ndim == 5 else squeeze(out, 0)


def _triple_arg(owner: str, name: str, value: Any) -> tuple[int, int, int]:
    return operations.nn_ops._triple(owner, name, value)


def max_pool3d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    """3-D max pooling; ``padding`` (an int or 3 ints) pads both ends of D, H, W with -inf; stride None
    is the kernel size. dilation 1, ceil_mode False and return_indices False are served."""
    owner = "max_pool3d"
    _no_indices(owner, return_indices)
    if dilation not in (1, (1, 1, 1)) or ceil_mode:
        raise InvalidParamError(f"{owner}: dilation={dilation!r}, ceil_mode={ceil_mode!r} are not supported; leave "
                                f"them 1 and False")
    kernel = _triple_arg(owner, "kernel_size", kernel_size)
    strides = kernel if stride is None else _triple_arg(owner, "stride", stride)
    p = (padding,) * 3 if isinstance(padding, int) else tuple(padding)
    return _pool3d(owner, x, kernel, strides, tuple(v for v in p for _ in (0, 1)), True)


def avg_pool3d(input_x: Any, kernel_size: Any = 1, stride: Any = 1, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int = 0) -> Tensor:
    """3-D average pooling; ``padding`` (an int or 6 ints: head, tail, top, bottom, left, right) pads with
    zeros, counted in the mean unless ``count_include_pad`` is False; ``divisor_override`` > 0 divides the
    window sum by it instead."""
    owner = "avg_pool3d"
    if ceil_mode:
        raise InvalidParamError(f"{owner}: ceil_mode=True is not supported; leave it False")
    kernel = _triple_arg(owner, "kernel_size", kernel_size)
    pads = operations.nn_ops._pad6(owner, padding)
    strides = kernel if stride is None else _triple_arg(owner, "stride", stride)      # None: mint's default
    out = _pool3d(owner, input_x, kernel, strides, pads, False)
    if divisor_override:
        return out * (kernel[0] * kernel[1] * kernel[2] / divisor_override)
    if any(pads) and not count_include_pad:       # divided by the window's input elements (as _avg_pool)
        out = out / _pool3d(owner, ones_like(_tensor(input_x)), kernel, strides, pads, False)
    return out


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` axes (biased variance, ``eps`` inside the root),
    then ``* weight + bias`` (each of shape ``normalized_shape``) when given."""
    x = _tensor(input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise InvalidValueError(f"layer_norm: normalized_shape={normalized_shape!r} must be the trailing dimensions "
                                f"of the input's shape {x.shape}")
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mean = operations.math_ops.ReduceMean(keep_dims=True)(x, axes)
    centred = x - mean
    var = operations.math_ops.ReduceMean(keep_dims=True)(square(centred), axes)
    out = centred * operations.math_ops.Rsqrt()(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def bidense(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Tensor:
    """Bilinear map ``y_o = x1 @ weight[o] @ x2 + bias_o`` of (*, in1) and (*, in2) by (out, in1, in2),
    as MindSpore computes it: one MatMul with the weight laid out (in1, in2 * out), times x2, summed."""
    x1, x2, w = _tensor(input1), _tensor(input2), _tensor(weight)
    if w.ndim != 3 or x1.shape[:-1] != x2.shape[:-1] or x1.shape[-1] != w.shape[1] or x2.shape[-1] != w.shape[2]:
        raise InvalidParamError(f"bidense: input1 {x1.shape} and input2 {x2.shape} must share their leading "
                                f"dimensions and end in weight {w.shape}'s in1 and in2")
    out_c, in1, in2 = w.shape
    lead = x1.shape[:-1]
    flat1, flat2 = reshape(x1, (-1, in1)), reshape(x2, (-1, in2))
    mixed = reshape(operations.math_ops.MatMul()(flat1, reshape(transpose(w, (1, 2, 0)), (in1, in2 * out_c))),
                    (-1, in2, out_c))
    out = operations.math_ops.ReduceSum()(mixed * expand_dims(flat2, 2), 1)
    if bias is not None:
        out = out + bias
    return reshape(out, lead + (out_c,))


def conv1d(input: Any, weight: Any, bias: Any = None, stride: int = 1, pad_mode: str = "valid", padding: Any = 0,
           dilation: int = 1, groups: int = 1) -> Tensor:
    """1-D convolution of (N, C, L) by (O, C / groups, k), as MindSpore's Conv1d builds it: Conv2D with a
    (1, k) kernel between ExpandDims and Squeeze; ``padding`` (pad_mode 'pad') is an int for both ends
    or a (left, right) pair."""
    x, w = _tensor(input), _tensor(weight)
    if x.ndim != 3 or w.ndim != 3:
        raise InvalidParamError(f"conv1d: input and weight must have rank 3, got shapes {x.shape} and {w.shape}")
    pads = (padding, padding) if isinstance(padding, int) else tuple(padding) * (2 if len(padding) == 1 else 1)
    if len(pads) != 2:
        raise InvalidParamError(f"conv1d: padding={padding!r} must be an int or 1 or 2 ints")
    conv = Conv2D(w.shape[0], (1, w.shape[2]), pad_mode=pad_mode, pad=(0, 0) + pads if pad_mode == "pad" else 0,
                  stride=(1, stride), dilation=(1, dilation), group=groups)
    out = squeeze(conv(expand_dims(x, 2), expand_dims(w, 2)), 2)
    return out if bias is None else out + reshape(bias, (-1, 1))


def _pool_pairs(owner: str, name: str, value: Any, dims: int) -> tuple[int, ...]:
    values = (value,) * dims if isinstance(value, int) and not isinstance(value, bool) else tuple(value)
    if len(values) != dims or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in values):
        raise InvalidParamError(f"{owner}: {name}={value!r} must be an int or {dims} ints")
    return values


def _avg_pool(owner: str, x: Tensor, kernel: tuple[int, int], stride: tuple[int, int], pads: tuple[int, int],
              ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> Tensor:
    """Mean pooling of the last two axes of (N, C, H, W): zero pads, then AvgPool 'valid';
    ``divisor_override`` > 0 divides the window sum by it instead; ``count_include_pad=False`` divides it
    by the window's input elements only (the same pooling of ones gives each window's share of them)."""
    if ceil_mode:
        raise InvalidParamError(f"{owner}: ceil_mode=True is not supported; leave it False")
    if any(p * 2 > k for p, k in zip(pads, kernel)):
        raise InvalidValueError(f"{owner}: padding {pads} must be at most half the kernel size {kernel}")
    pool = operations.nn_ops.AvgPool(kernel, stride, "valid")
    widths = (pads[1], pads[1], pads[0], pads[0])
    out = pool(pad(x, widths) if any(pads) else x)
    if divisor_override:
        return out * (kernel[0] * kernel[1] / divisor_override)
    if any(pads) and not count_include_pad:
        out = out / pool(pad(ones_like(x), widths))
    return out


def avg_pool2d(input_x: Any, kernel_size: Any = 1, stride: Any = 1, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int = 0) -> Tensor:
    """2-D average pooling of (N, C, H, W); ``padding`` an int or (h, w) zeros at both ends, counted."""
    owner = "avg_pool2d"
    x = _tensor(input_x)
    if x.ndim != 4:
        raise InvalidParamError(f"{owner}: input_x must have rank 4, got shape {x.shape}")
    kernel = _pool_pairs(owner, "kernel_size", kernel_size, 2)
    strides = kernel if stride is None else _pool_pairs(owner, "stride", stride, 2)      # None: mint's default
    return _avg_pool(owner, x, kernel, strides, _pool_pairs(owner, "padding", padding, 2), ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool1d(input_x: Any, kernel_size: int = 1, stride: int = 1, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """1-D average pooling of (N, C, L); ``padding`` zeros at both ends, counted."""
    owner = "avg_pool1d"
    x = _tensor(input_x)
    if x.ndim != 3:
        raise InvalidParamError(f"{owner}: input_x must have rank 3, got shape {x.shape}")
    kernel = _pool_pairs(owner, "kernel_size", kernel_size, 1)
    strides = kernel if stride is None else _pool_pairs(owner, "stride", stride, 1)      # None: mint's default
    pads = _pool_pairs(owner, "padding", padding, 1)
    out = _avg_pool(owner, expand_dims(x, 2), (1,) + kernel, (1,) + strides, (0,) + pads, ceil_mode,
                    count_include_pad, 0)
    return squeeze(out, 2)


# ---- losses ----
# Function-only losses (MindSpore has no primitive for them): compositions of library ops, so their
# gradients come from the parts; the formulas are MindSpore's ops/function/nn_func.py.
from .array_func import select  # noqa: E402  (the import block above is shared)
from .math_func import sqrt  # noqa: E402


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> tuple[Tensor, Tensor]:
    """(loss, log_alpha) of ``ops.CTCLossV2``; 'sum' adds the per-sample losses, 'mean' averages them
    each divided by its target length (at least 1), computed in float32 as MindSpore does."""
    if isinstance(blank, bool) or not isinstance(blank, int):
        raise TypeError(f"For 'ctc_loss', the 'blank' must be int, but got {type(blank).__name__}.")
    if not isinstance(reduction, str) or reduction not in ("none", "sum", "mean"):
        raise ValueError(f"For 'ctc_loss', 'reduction' must be in ['none', 'sum', 'mean'], but got {reduction}.")
    if not isinstance(zero_infinity, bool):
        raise TypeError(f"For 'ctc_loss', the 'zero_infinity' must be bool, but got {type(zero_infinity).__name__}.")
    loss, log_alpha = operations.nn_ops.CTCLossV2(blank, "none", zero_infinity)(log_probs, targets, input_lengths,
                                                                               target_lengths)
    if reduction == "sum":
        loss = tensor_sum(loss)
    elif reduction == "mean":
        lengths = target_lengths if isinstance(target_lengths, Tensor) else Tensor(np.asarray(target_lengths))
        per_target = cast(loss, mstype.float32) / maximum(cast(lengths, mstype.float32), 1.0)
        loss = cast(tensor_sum(per_target) / float(per_target.shape[0]), loss.dtype)
    return loss, log_alpha


def multilabel_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """The loss of ``ops.MultilabelMarginLoss`` (its is_target output dropped, as MindSpore's function does)."""
    return operations.nn_ops.MultilabelMarginLoss(reduction)(input, target)[0]


def _same_float(name: str, *tensors: Any) -> list[Tensor]:
    """The loss's inputs as Tensors of the first one's float dtype."""
    first = _tensor(tensors[0])
    if first.dtype.name not in ("float16", "float32", "float64", "bfloat16"):
        raise InvalidParamError(f"{name}: inputs must be float tensors, got {first.dtype}")
    return [first] + [cast(_tensor(t), first.dtype) if _tensor(t).dtype != first.dtype else _tensor(t)
                      for t in tensors[1:]]


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)`` (d = input - target)."""
    check_reduction(reduction)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or delta <= 0:
        raise InvalidParamError(f"huber_loss: delta={delta!r} must be a number > 0")
    x, y = _same_float("huber_loss", input, target)
    z = tensor_abs(x - y)
    loss = select(z < delta, square(z) * 0.5, (z - 0.5 * delta) * float(delta))
    return reduce_loss(loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``, then reduced."""
    check_reduction(reduction)
    if not isinstance(margin, float):
        raise TypeError(f"For 'margin_ranking_loss', the 'margin' must be float, but got {type(margin).__name__}")
    x1, x2, y = _same_float("margin_ranking_loss", input1, input2, target)
    return reduce_loss(maximum(-y * (x1 - x2) + margin, 0.0), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: str = "mean") -> Tensor:
    """Per row (dimension 1 is the feature): ``1 - cos`` where target is 1, ``max(0, cos - margin)``
    where it is -1, 0 elsewhere; then reduced."""
    check_reduction(reduction)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not -1.0 <= margin <= 1.0:
        raise InvalidParamError(f"cosine_embedding_loss: margin={margin!r} must be a number in [-1, 1]")
    x1, x2 = _same_float("cosine_embedding_loss", input1, input2)
    y = _tensor(target)
    cosine = tensor_sum(x1 * x2, 1) / (sqrt(tensor_sum(square(x1), 1)) * sqrt(tensor_sum(square(x2), 1)))
    zeros = cosine * 0.0
    loss = select(equal(y, 1), 1.0 - cosine, zeros) + select(equal(y, -1), maximum(cosine - float(margin), 0.0), zeros)
    return reduce_loss(loss, reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Any = None, reduction: str = "mean") -> Tensor:
    """Per sample, the mean over classes of ``y log(1 + e^-x) + (1 - y) log(1 + e^x)`` (times weight)."""
    check_reduction(reduction)
    x, y = _same_float("multilabel_soft_margin_loss", input, target)
    loss = y * log(exp(-x) + 1.0) + (1.0 - y) * log(exp(x) + 1.0)
    if weight is not None:
        loss = loss * cast(_tensor(weight), x.dtype)
    return reduce_loss(tensor_sum(loss, x.ndim - 1) / float(x.shape[-1]), reduction)


def gaussian_nll_loss(x: Tensor, target: Tensor, var: Tensor, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """``0.5 (log(max(var, eps)) + (x - target)^2 / max(var, eps))`` (+ 0.5 log(2 pi) with ``full``);
    a var one dimension short is broadcast over the last one."""
    if not isinstance(full, bool):
        raise TypeError(f"For 'gaussian_nll_loss', 'full' must be a bool, but got {type(full)}.")
    if not isinstance(eps, float) or eps <= 0:
        raise InvalidParamError(f"gaussian_nll_loss: eps={eps!r} must be a positive float")
    check_reduction(reduction)
    x, target, var = _same_float("gaussian_nll_loss", x, target, var)
    if x.shape != var.shape and x.shape[:-1] == var.shape:
        var = reshape(var, var.shape + (1,))
    clamped = maximum(var, eps)
    loss = (log(clamped) + square(x - target) / clamped) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


def hinge_embedding_loss(inputs: Tensor, targets: Tensor, margin: float = 1.0, reduction: str = "mean") -> Tensor:
    """``x`` where the target is > 0, ``max(0, margin - x)`` where it is < 0 (both terms where a target
    is 0: 0 and 0), then reduced."""
    check_reduction(reduction)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)):
        raise TypeError(f"For 'hinge_embedding_loss', 'margin' must be float, but got {type(margin).__name__}")
    x, y = _same_float("hinge_embedding_loss", inputs, targets)
    positive, negative = cast(y > 0, x.dtype), cast(y < 0, x.dtype)
    return reduce_loss(positive * x + maximum(negative * float(margin) - negative * x, 0.0), reduction)


# ---- pooling and resampling (round 2) ----
from ..operations.nn_ops import AvgPool3D, MaxPoolWithArgmaxV2, MaxUnpool2D, MaxUnpool3D  # noqa: E402
from .math_func import pow as _pow, sign as _sign  # noqa: E402


def max_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               return_indices: bool = False, ceil_mode: bool = False) -> Any:
    """2-D max pooling of (N, C, H, W) (MaxPoolWithArgmaxV2); with ``return_indices`` also the flat
    index of each maximum in its (H, W) plane."""
    out, argmax = MaxPoolWithArgmaxV2(kernel_size, kernel_size if stride is None else stride, padding, dilation,
                                      ceil_mode)(x)
    return (out, argmax) if return_indices else out


def _lp_pool(owner: str, x: Any, norm_type: Any, kernel: tuple[int, ...], stride: tuple[int, ...],
             ceil_mode: bool) -> Tensor:
    """MindSpore's LP pooling: ``(sign(m) * relu(|m|) * prod(kernel)) ** (1 / p)`` of the mean ``m`` of
    ``x ** p`` over each window (count_include_pad, so a ceil_mode window's mean counts only the input);
    ``kernel``/``stride`` cover the last 1 or 2 axes of a 4-D/5-D view."""
    if isinstance(norm_type, bool) or not isinstance(norm_type, (float, int)):
        raise TypeError(f"For {owner}, the type of 'norm_type' must be float or int, but got {type(norm_type)}")
    if norm_type == 0:
        raise ValueError(f"For {owner}, the value of 'norm_type' can not be 0.")
    p = float(norm_type)
    pad = (1,) * (3 - len(kernel))
    mean = AvgPool3D(pad + kernel, pad + stride, "pad", 0, ceil_mode)(_pow(x, p))
    size = int(np.prod(kernel))
    return _pow(_sign(mean) * relu(tensor_abs(mean)) * size, 1.0 / p)


def lp_pool1d(x: Any, norm_type: Any, kernel_size: int, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """LP pooling of the last axis of (N, C, L) or (C, L)."""
    x = _tensor(x)
    if x.ndim not in (2, 3):
        raise ValueError(f"For lp_pool1d, the input must have rank 2 or 3, but got {x.ndim}.")
    k = _pool_pairs("lp_pool1d", "kernel_size", kernel_size, 1)
    s = k if stride is None else _pool_pairs("lp_pool1d", "stride", stride, 1)
    batched = x if x.ndim == 3 else expand_dims(x, 0)
    out = _lp_pool("lp_pool1d", expand_dims(expand_dims(batched, 2), 2), norm_type, k, s, ceil_mode)
    out = squeeze(squeeze(out, 2), 2)
    return out if x.ndim == 3 else squeeze(out, 0)


def lp_pool2d(x: Any, norm_type: Any, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """LP pooling of the last two axes of (N, C, H, W)."""
    x = _tensor(x)
    if x.ndim != 4:
        raise ValueError(f"For lp_pool2d, the input must have rank 4, but got {x.ndim}.")
    k = _pool_pairs("lp_pool2d", "kernel_size", kernel_size, 2)
    s = k if stride is None else _pool_pairs("lp_pool2d", "stride", stride, 2)
    return squeeze(_lp_pool("lp_pool2d", expand_dims(x, 2), norm_type, k, s, ceil_mode), 2)


def _unpool_size(x: Tensor, dims: int, output_size: Any) -> tuple:
    """MindSpore's output_size forms: None, the spatial sizes, or the whole output shape."""
    if output_size is None or len(output_size) == 0:
        return ()
    return tuple(output_size)[-dims:]


def _max_unpool(owner: str, prim: type, x: Any, indices: Any, dims: int, kernel_size: Any, stride: Any,
                padding: Any, output_size: Any) -> Tensor:
    x, indices = _tensor(x), _tensor(indices)
    if x.ndim not in (dims + 1, dims + 2):
        raise ValueError(f"For {owner}, the input must have rank {dims + 1} or {dims + 2}, but got {x.ndim}.")
    unpool = prim(kernel_size, kernel_size if stride is None else stride, padding,
                  _unpool_size(x, dims, output_size))
    if x.ndim == dims + 2:
        return unpool(x, indices)
    return squeeze(unpool(expand_dims(x, 0), expand_dims(indices, 0)), 0)


def max_unpool1d(x: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    """The inverse of a 1-D max pool on (N, C, L) or (C, L): the 2-D one of height 1."""
    x, indices = _tensor(x), _tensor(indices)
    one = lambda v: (1, v) if isinstance(v, int) else (1,) + tuple(v)[-1:]     # noqa: E731
    size = None if output_size is None or len(output_size) == 0 else (1, tuple(output_size)[-1])
    out = _max_unpool("max_unpool1d", MaxUnpool2D, expand_dims(x, -2), expand_dims(indices, -2), 2,
                      one(kernel_size), None if stride is None else one(stride),
                      (0, padding) if isinstance(padding, int) else (0,) + tuple(padding)[-1:], size)
    return squeeze(out, -2)


def max_unpool2d(x: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    """The inverse of a 2-D max pool on (N, C, H, W) or (C, H, W) (MaxUnpool2D)."""
    return _max_unpool("max_unpool2d", MaxUnpool2D, x, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(x: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    """The inverse of a 3-D max pool on (N, C, D, H, W) or (C, D, H, W) (MaxUnpool3D)."""
    return _max_unpool("max_unpool3d", MaxUnpool3D, x, indices, 3, kernel_size, stride, padding, output_size)


def upsample(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: Any = None, recompute_scale_factor: Any = None) -> Tensor:
    """MindSpore's alias of :func:`interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


# ---- RNN and fused transformer ops (round 2) ----
# The fused transformer functions of MindSpore's Ascend backend as compositions: SwiGLU, AddRmsNorm, the
# flash-attention family (one attention core over (B, N, S, D), the layouts mapped onto it) and the MoE
# token permutation (a stable Sort and Gathers). Gradients come from the parts.
from ascendemu.errors import ArgumentError  # noqa: E402

from ..operations.array_ops import BroadcastTo, ExpandDims, Gather, Select, Sort, Split, StridedSlice  # noqa: E402
from ..operations.array_ops import Transpose  # noqa: E402
from ..operations.array_ops import Reshape  # noqa: E402
from ..operations.math_ops import BatchMatMul, FloorDiv, ReduceMax, ReduceSum  # noqa: E402
from ..primitive import _cast  # noqa: E402
from ..operations.nn_ops import FUSED_FLOATS, _dtype_in, _rms_normalize, _sigmoid, _typed  # noqa: E402

# the layouts of query/key/value the attention functions take (TND, BNSD_BSND are not served)
ATTENTION_LAYOUTS = ("BSH", "BNSD", "SBH", "BSND")
# the score a masked position gets before the softmax (the fused kernels' constant, one home)
MASKED_SCORE = FA_MASKED_SCORE
# the dtypes of the attention inputs MindSpore's kernels compute (int8 is their quantized path)
ATTENTION_FLOATS = ("float16", "bfloat16")


def swiglu(input: Any, dim: int = -1) -> Tensor:
    """``swish(a) * b`` of the two halves ``a, b`` of ``input`` along ``dim`` (its size must be even)."""
    x = _dtype_in("Swiglu", "input", _tensor(input), FUSED_FLOATS)
    dim = _typed("Swiglu", "dim", dim, (int,))
    if not -x.ndim <= dim < x.ndim or x.shape[dim] % 2:
        raise RuntimeParamError(f"For 'Swiglu', dim {dim} of shape {x.shape} must exist and have an even size.")
    a, b = Split(dim, 2)(x)
    return a * _sigmoid(a) * b


def add_rms_norm(x1: Any, x2: Any, gamma: Any, epsilon: float = 1e-6) -> tuple[Tensor, Tensor, Tensor]:
    """``(rms_norm(x1 + x2, gamma, epsilon), rstd, x1 + x2)``: MindSpore's fused Add + RmsNorm."""
    x1, x2 = _tensor(x1), _tensor(x2)
    _dtype_in("AddRmsNorm", "x1", x1, FUSED_FLOATS)
    _dtype_in("AddRmsNorm", "x2", x2, FUSED_FLOATS)
    if x1.shape != x2.shape:
        raise RuntimeParamError(f"For 'AddRmsNorm', the shapes of 'x1' {x1.shape} and 'x2' {x2.shape} must be "
                                f"the same.")
    x = x1 + x2
    y, rstd = _rms_normalize("AddRmsNorm", x, gamma, epsilon)
    return y, rstd, x


def _unserved(owner: str, **arguments: Any) -> None:
    """Arguments of a feature not served (quantization, paged KV, padding, dropout): each must be None."""
    for name, value in arguments.items():
        if value is not None:
            raise InvalidParamError(f"{owner}: {name} is not supported here (quantization, paged KV cache, padding "
                                    f"and dropout inputs are not served); pass None")


def _layout(owner: str, layout: Any, served: Sequence[str]) -> str:
    if not isinstance(layout, str):
        raise ArgumentError(f"For '{owner}', 'input_layout' must be a str, but got {type(layout).__name__}.")
    if layout not in served:
        if layout in ("TND", "BNSD_BSND"):
            raise InvalidParamError(f"{owner}: input_layout={layout!r} is not supported here; use one of "
                                    f"{list(served)}")
        raise InvalidValueError(f"For '{owner}', 'input_layout' must be one of {list(served)}, but got {layout!r}.")
    return layout


def _to_bnsd(owner: str, x: Tensor, layout: str, heads: int, what: str) -> Tensor:
    """``x`` in ``layout`` as (B, N, S, D) with ``heads`` heads (BSH/SBH: H split into heads x D)."""
    rank = 4 if layout in ("BNSD", "BSND") else 3
    if x.ndim != rank:
        raise RuntimeParamError(f"For '{owner}', '{what}' must be {rank}-D in layout {layout}, but got shape "
                                f"{x.shape}.")
    if layout == "BNSD":
        return x
    if layout == "BSND":
        return Transpose()(x, (0, 2, 1, 3))
    if heads <= 0 or x.shape[2] % heads:
        raise RuntimeParamError(f"For '{owner}', the hidden size {x.shape[2]} of '{what}' must be a multiple of "
                                f"the head number {heads}.")
    split = Reshape()(x, (x.shape[0], x.shape[1], heads, x.shape[2] // heads))
    return Transpose()(split, (0, 2, 1, 3) if layout == "BSH" else (1, 2, 0, 3))


def _from_bnsd(x: Tensor, layout: str) -> Tensor:
    """(B, N, S, D) back into ``layout``."""
    b, n, s, d = x.shape
    if layout == "BNSD":
        return x
    if layout == "BSND":
        return Transpose()(x, (0, 2, 1, 3))
    if layout == "BSH":
        return Reshape()(Transpose()(x, (0, 2, 1, 3)), (b, s, n * d))
    return Reshape()(Transpose()(x, (2, 0, 1, 3)), (s, b, n * d))


def _kv_heads(owner: str, query: Tensor, key: Tensor, layout: str, heads: int, kv_heads: int) -> int:
    """The head number of key/value: given (``kv_heads`` > 0), else BNSD/BSND's N axis, else
    ``H_kv / D`` with D = H_q / heads (BSH/SBH); it must divide ``heads``."""
    if kv_heads <= 0:
        if layout in ("BNSD", "BSND"):
            kv_heads = key.shape[1 if layout == "BNSD" else 2]
        else:
            head_dim = query.shape[2] // heads if heads > 0 and query.shape[2] % heads == 0 else 0
            kv_heads = key.shape[2] // head_dim if head_dim and key.shape[2] % head_dim == 0 else 0
    if kv_heads <= 0 or heads % kv_heads:
        raise RuntimeParamError(f"For '{owner}', the head number {heads} must be a multiple of the key/value head "
                                f"number {kv_heads}.")
    return kv_heads


def _repeat_heads(x: Tensor, group: int) -> Tensor:
    """(B, N2, S, D) -> (B, N2 * group, S, D): query head n reads key/value head n // group (GQA)."""
    if group == 1:
        return x
    b, n, s, d = x.shape
    return Reshape()(BroadcastTo((b, n, group, s, d))(ExpandDims()(x, 2)), (b, n * group, s, d))


def _user_mask(owner: str, mask: Any, shape4: tuple[int, int, int, int]) -> Tensor:
    """An attention mask (True/nonzero: discard) as bool, broadcastable to (B, N, S1, S2): (S1, S2),
    (B or 1, S1, S2) or (B or 1, N or 1, S1, S2)."""
    m = _tensor(mask)
    if m.dtype.name not in ("bool", "uint8", "int8"):
        raise ArgumentError(f"For '{owner}', the dtype of the attention mask must be bool, int8 or uint8, but got "
                            f"{m.dtype}.")
    b, n, s1, s2 = shape4
    if m.ndim == 2:
        m = Reshape()(m, (1, 1) + tuple(m.shape))
    elif m.ndim == 3:
        m = ExpandDims()(m, 1)
    if m.ndim != 4 or tuple(m.shape[2:]) != (s1, s2) or m.shape[0] not in (1, b) or m.shape[1] not in (1, n):
        raise RuntimeParamError(f"For '{owner}', the attention mask of shape {_tensor(mask).shape} does not fit "
                                f"(B, N, S1, S2) = {shape4}.")
    return m if m.dtype == mstype.bool_ else not_equal(m, 0)


def _band(s1: int, s2: int, sparse_mode: int, pre_tokens: int, next_tokens: int) -> np.ndarray | None:
    """The positions (S1, S2) a sparse mode discards: 0 the band [i - pre_tokens, i + next_tokens] (with a
    mask), 2 above the diagonal from the top left, 3 from the bottom right; 1 none."""
    i, j = np.arange(s1, dtype=np.int64)[:, None], np.arange(s2, dtype=np.int64)[None, :]
    if sparse_mode == 0:
        return (j > i + next_tokens) | (j < i - pre_tokens)
    if sparse_mode == 2:
        return j > i
    if sparse_mode == 3:
        return j > i + (s2 - s1)
    return None


def _kv_length_mask(owner: str, lengths: Any, b: int, s2: int) -> np.ndarray:
    """(B, 1, 1, S2) True past each batch's key/value length (``actual_seq_lengths_kv``: ints)."""
    if isinstance(lengths, Tensor):
        lengths = lengths.asnumpy().tolist()
    values = list(_int_tuple(f"{owner}: actual sequence lengths", lengths))
    if len(values) == 1:
        values = values * b
    if len(values) != b or any(not 0 <= n <= s2 for n in values):
        raise InvalidValueError(f"For '{owner}', the actual key/value sequence lengths {values} must be {b} values "
                                f"in [0, {s2}].")
    return (np.arange(s2)[None, :] >= np.array(values)[:, None]).reshape(b, 1, 1, s2)


def _attention_inputs(owner: str, query: Any, key: Any, value: Any, heads: Any) -> tuple[Tensor, Tensor, Tensor, int]:
    """(q, k, v, heads) after the checks MindSpore's attention ops make, with their error types: one
    float dtype of ATTENTION_FLOATS for the three, a positive head count."""
    q, k, v = _tensor(query), _tensor(key), _tensor(value)
    if q.dtype.name == "int8":
        raise InvalidParamError(f"{owner}: int8 (quantized) attention is not supported here; use float16 or bfloat16")
    _dtype_in(owner, "query", q, ATTENTION_FLOATS)
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise ArgumentError(f"For '{owner}', 'query', 'key' and 'value' must have one dtype, but got {q.dtype}, "
                            f"{k.dtype} and {v.dtype}.")
    heads = _typed(owner, "head_num", heads, (int,))
    if heads <= 0:
        raise RuntimeParamError(f"For '{owner}', the head number must be > 0, but got {heads}.")
    return q, k, v, heads


def _attention(owner: str, query: Any, key: Any, value: Any, *, heads: int, kv_heads: int, layout: str,
               scale: float, pse: Any = None, mask: Any = None, sparse_mode: int = 0, pre_tokens: int = 2147483647,
               next_tokens: int = 2147483647, kv_lengths: Any = None) -> tuple[Tensor, Tensor]:
    """``softmax(mask(scale * q k^T + pse)) v`` in float32, returned in query's layout and dtype, and the
    softmax's log-sum-exp (B, N, S1, 1) float32."""
    q, k, v, heads = _attention_inputs(owner, query, key, value, heads)
    _typed(owner, "scale", scale, (float, int))
    _typed(owner, "sparse_mode", sparse_mode, (int,))
    if sparse_mode not in (0, 1, 2, 3):
        raise InvalidParamError(f"{owner}: sparse_mode={sparse_mode} is not supported here; use 0, 1, 2 or 3")
    if layout in ("BNSD", "BSND") and q.ndim == 4 and q.shape[1 if layout == "BNSD" else 2] != heads:
        raise RuntimeParamError(f"For '{owner}', N of 'query' {q.shape} must be equal to the head number {heads}.")
    kv_heads = _kv_heads(owner, q, k, layout, heads, kv_heads)
    f32 = mstype.float32
    q4 = _cast(_to_bnsd(owner, q, layout, heads, "query"), f32)
    k4 = _cast(_to_bnsd(owner, k, layout, kv_heads, "key"), f32)
    v4 = _cast(_to_bnsd(owner, v, layout, kv_heads, "value"), f32)
    if k4.shape != v4.shape or k4.shape[3] != q4.shape[3] or k4.shape[0] != q4.shape[0]:
        raise RuntimeParamError(f"For '{owner}', query (B, N, S, D) {q4.shape}, key {k4.shape} and value {v4.shape} "
                                f"must share B and D, and key and value their shape.")
    group = heads // kv_heads
    k4, v4 = _repeat_heads(k4, group), _repeat_heads(v4, group)
    b, n, s1, _ = q4.shape
    s2 = k4.shape[2]
    scores = BatchMatMul()(q4, Transpose()(k4, (0, 1, 3, 2))) * float(scale)
    if pse is not None:
        scores = scores + _cast(pse, f32)
    discard = None if mask is None or sparse_mode in (2, 3) else _user_mask(owner, mask, (b, n, s1, s2))
    band = _band(s1, s2, sparse_mode, pre_tokens, next_tokens) if (mask is not None or sparse_mode) else None
    if band is not None and band.any():
        band_t = Tensor(band.reshape(1, 1, s1, s2))
        discard = band_t if discard is None else apply_op("LogicalOr", [discard, band_t])[0]
    if kv_lengths is not None:
        past = Tensor(_kv_length_mask(owner, kv_lengths, b, s2))
        discard = past if discard is None else apply_op("LogicalOr", [discard, past])[0]
    if discard is not None:
        full = tuple(scores.shape)
        scores = Select()(BroadcastTo(full)(discard), Tensor(np.full(full, MASKED_SCORE, np.float32)), scores)
    out = BatchMatMul()(Softmax(-1)(scores), v4)
    top = ReduceMax(keep_dims=True)(scores, -1)
    lse = top + log(ReduceSum(keep_dims=True)(exp(scores - top), -1))
    return _cast(_from_bnsd(out, layout), q.dtype), lse


def flash_attention_score(query: Any, key: Any, value: Any, head_num: int, real_shift: Any = None,
                          drop_mask: Any = None, padding_mask: Any = None, attn_mask: Any = None, prefix: Any = None,
                          actual_seq_qlen: Any = None, actual_seq_kvlen: Any = None, keep_prob: float = 1.0,
                          scalar_value: float = 1.0, pre_tokens: int = 2147483647, next_tokens: int = 2147483647,
                          inner_precise: int = 0, input_layout: str = "BSH", sparse_mode: int = 0) -> Tensor:
    """``softmax(mask(scalar_value * q k^T + real_shift, attn_mask)) v`` (MindSpore's FlashAttentionScore,
    training attention): layouts BSH, BNSD, SBH, BSND; GQA when key/value have fewer heads; attn_mask
    True/1 discards; sparse_mode 0 (attn_mask and the pre/next token band), 1 (attn_mask), 2/3 (causal
    from the top left / bottom right: the 2048x2048 compressed mask is that triangle by definition).
    Dropout (keep_prob < 1, drop_mask), prefix and TND are not served."""
    owner = "FlashAttentionScore"
    _unserved(owner, drop_mask=drop_mask, padding_mask=padding_mask, prefix=prefix, actual_seq_qlen=actual_seq_qlen,
              actual_seq_kvlen=actual_seq_kvlen)
    _typed(owner, "keep_prob", keep_prob, (float,))
    if keep_prob != 1.0:
        raise InvalidParamError(f"{owner}: keep_prob={keep_prob} is not supported here (attention dropout); use 1.0")
    _typed(owner, "scalar_value", scalar_value, (float,))
    layout = _layout(owner, input_layout, ATTENTION_LAYOUTS)
    if real_shift is not None and _tensor(real_shift).dtype != _tensor(query).dtype:
        raise ArgumentError(f"For '{owner}', 'real_shift' must have the dtype of 'query'.")
    if real_shift is None:       # the fused kernel (kernels/ops/attention.py); a positional bias is composed
        return _flash_attention_fused(owner, query, key, value, head_num, attn_mask, scalar_value, pre_tokens,
                                      next_tokens, layout, sparse_mode)
    out, _ = _attention(owner, query, key, value, heads=head_num, kv_heads=0, layout=layout, scale=scalar_value,
                        pse=real_shift, mask=attn_mask, sparse_mode=sparse_mode, pre_tokens=pre_tokens,
                        next_tokens=next_tokens)
    return out


def _flash_attention_fused(owner: str, query: Any, key: Any, value: Any, head_num: int, attn_mask: Any,
                           scalar_value: float, pre_tokens: int, next_tokens: int, layout: str,
                           sparse_mode: int) -> Tensor:
    """attention_out of the FlashAttentionScore primitive (one fused kernel forward, its Grad kernel
    backward), after the checks MindSpore's front end makes with its error types."""
    q, k, v, heads = _attention_inputs(owner, query, key, value, head_num)
    _typed(owner, "sparse_mode", sparse_mode, (int,))
    if sparse_mode not in (0, 1, 2, 3):
        raise InvalidParamError(f"{owner}: sparse_mode={sparse_mode} is not supported here; use 0, 1, 2 or 3")
    if layout in ("BNSD", "BSND") and q.ndim == 4 and q.shape[1 if layout == "BNSD" else 2] != heads:
        raise RuntimeParamError(f"For '{owner}', N of 'query' {q.shape} must be equal to the head number {heads}.")
    _kv_heads(owner, q, k, layout, heads, 0)
    if attn_mask is not None and sparse_mode in (0, 1) and _tensor(attn_mask).dtype.name not in ("bool", "uint8",
                                                                                                 "int8"):
        raise ArgumentError(f"For '{owner}', the dtype of the attention mask must be bool, int8 or uint8, but got "
                            f"{_tensor(attn_mask).dtype}.")
    prim = operations.nn_ops.FlashAttentionScore(heads, scale_value=scalar_value, pre_tokens=pre_tokens,
                                                 next_tokens=next_tokens, input_layout=layout,
                                                 sparse_mode=sparse_mode)
    return prim(q, k, v, attn_mask=attn_mask)[3]


def _query_lengths(owner: str, lengths: Any, s1: int) -> None:
    """Query lengths other than the full S1 (query padding) are not served."""
    if lengths is None:
        return
    values = lengths.asnumpy().tolist() if isinstance(lengths, Tensor) else lengths
    if any(int(v) != s1 for v in _int_tuple(f"{owner}: actual_seq_lengths", values)):
        raise InvalidParamError(f"{owner}: actual_seq_lengths={values!r} shorter than the query's S={s1} (query "
                                f"padding) is not supported here")


def _seq_axis(layout: str) -> int:
    return {"BSH": 1, "BSND": 1, "BNSD": 2, "SBH": 0}[layout]


def prompt_flash_attention(query: Any, key: Any, value: Any, attn_mask: Any = None, actual_seq_lengths: Any = None,
                           actual_seq_lengths_kv: Any = None, pse_shift: Any = None, deq_scale1: Any = None,
                           quant_scale1: Any = None, deq_scale2: Any = None, quant_scale2: Any = None,
                           quant_offset2: Any = None, num_heads: int = 1, scale_value: float = 1.0,
                           pre_tokens: int = 2147483647, next_tokens: int = 0, input_layout: str = "BSH",
                           num_key_value_heads: int = 0, sparse_mode: int = 0, inner_precise: int = 1) -> Tensor:
    """Full-inference attention (MindSpore's PromptFlashAttention): layouts BSH, BNSD; attn_mask True/1
    discards (with sparse_mode 0, also outside the pre/next token band); key/value lengths per batch by
    ``actual_seq_lengths_kv``. Quantization and query padding are not served."""
    owner = "PromptFlashAttention"
    _unserved(owner, deq_scale1=deq_scale1, quant_scale1=quant_scale1, deq_scale2=deq_scale2,
              quant_scale2=quant_scale2, quant_offset2=quant_offset2)
    layout = _layout(owner, input_layout, ("BSH", "BNSD", "BSND"))
    _query_lengths(owner, actual_seq_lengths, _tensor(query).shape[_seq_axis(layout)])
    out, _ = _attention(owner, query, key, value, heads=num_heads, kv_heads=num_key_value_heads, layout=layout,
                        scale=scale_value, pse=pse_shift, mask=attn_mask, sparse_mode=sparse_mode,
                        pre_tokens=pre_tokens, next_tokens=next_tokens, kv_lengths=actual_seq_lengths_kv)
    return out


def _single(owner: str, name: str, x: Any) -> Any:
    """The one tensor of a key/value list (MindSpore takes a tuple or list of one tensor)."""
    if isinstance(x, (tuple, list)):
        if len(x) != 1:
            raise InvalidParamError(f"{owner}: {name} as a list of {len(x)} tensors is not supported here; pass one")
        return x[0]
    return x


def incre_flash_attention(query: Any, key: Any, value: Any, attn_mask: Any = None, actual_seq_lengths: Any = None,
                          pse_shift: Any = None, dequant_scale1: Any = None, quant_scale1: Any = None,
                          dequant_scale2: Any = None, quant_scale2: Any = None, quant_offset2: Any = None,
                          antiquant_scale: Any = None, antiquant_offset: Any = None, block_table: Any = None,
                          num_heads: int = 1, input_layout: str = "BSH", scale_value: float = 1.0,
                          num_key_value_heads: int = 0, block_size: int = 0, inner_precise: int = 1,
                          kv_padding_size: Any = None) -> Tensor:
    """Incremental-inference attention (MindSpore's IncreFlashAttention): one query step (S = 1) against
    the key/value cache; layouts BSH, BNSD; attn_mask (B, S)/(B, 1, S)/(B, 1, 1, S) True/1 discards;
    ``actual_seq_lengths`` the cache length of each batch. Quantization and paged KV are not served."""
    owner = "IncreFlashAttention"
    _unserved(owner, dequant_scale1=dequant_scale1, quant_scale1=quant_scale1, dequant_scale2=dequant_scale2,
              quant_scale2=quant_scale2, quant_offset2=quant_offset2, antiquant_scale=antiquant_scale,
              antiquant_offset=antiquant_offset, block_table=block_table, kv_padding_size=kv_padding_size)
    layout = _layout(owner, input_layout, ("BSH", "BNSD"))
    if attn_mask is not None:
        m = _tensor(attn_mask)
        attn_mask = Reshape()(m, (m.shape[0], 1, 1, m.shape[-1]))
    out, _ = _attention(owner, query, _single(owner, "key", key), _single(owner, "value", value), heads=num_heads,
                        kv_heads=num_key_value_heads, layout=layout, scale=scale_value, pse=pse_shift,
                        mask=attn_mask, sparse_mode=1 if attn_mask is not None else 0, kv_lengths=actual_seq_lengths)
    return out


def fused_infer_attention_score(query: Any, key: Any, value: Any, *, pse_shift: Any = None, atten_mask: Any = None,
                                actual_seq_lengths: Any = None, actual_seq_lengths_kv: Any = None,
                                dequant_scale1: Any = None, quant_scale1: Any = None, dequant_scale2: Any = None,
                                quant_scale2: Any = None, quant_offset2: Any = None, antiquant_scale: Any = None,
                                antiquant_offset: Any = None, key_antiquant_scale: Any = None,
                                key_antiquant_offset: Any = None, value_antiquant_scale: Any = None,
                                value_antiquant_offset: Any = None, block_table: Any = None,
                                query_padding_size: Any = None, kv_padding_size: Any = None,
                                key_shared_prefix: Any = None, value_shared_prefix: Any = None,
                                actual_shared_prefix_len: Any = None, num_heads: int = 1, scale: float = 1.0,
                                pre_tokens: int = 2147483647, next_tokens: int = 2147483647, input_layout: str = "BSH",
                                num_key_value_heads: int = 0, sparse_mode: int = 0, inner_precise: int = 1,
                                block_size: int = 0, antiquant_mode: int = 0, key_antiquant_mode: int = 0,
                                value_antiquant_mode: int = 0, softmax_lse_flag: bool = False) -> tuple[Tensor, Tensor]:
    """``(attention_out, softmax_lse)``: MindSpore's FusedInferAttentionScore, the prompt (S > 1) and
    incremental (S = 1) inference attention in one; layouts BSH, BNSD, BSND; softmax_lse (B, N, S, 1)
    float32 with ``softmax_lse_flag``, else a (1,) zero. Quantization, paged KV, padding and shared
    prefixes are not served."""
    owner = "FusedInferAttentionScore"
    _unserved(owner, dequant_scale1=dequant_scale1, quant_scale1=quant_scale1, dequant_scale2=dequant_scale2,
              quant_scale2=quant_scale2, quant_offset2=quant_offset2, antiquant_scale=antiquant_scale,
              antiquant_offset=antiquant_offset, key_antiquant_scale=key_antiquant_scale,
              key_antiquant_offset=key_antiquant_offset, value_antiquant_scale=value_antiquant_scale,
              value_antiquant_offset=value_antiquant_offset, block_table=block_table,
              query_padding_size=query_padding_size, kv_padding_size=kv_padding_size,
              key_shared_prefix=key_shared_prefix, value_shared_prefix=value_shared_prefix,
              actual_shared_prefix_len=actual_shared_prefix_len)
    _typed(owner, "softmax_lse_flag", softmax_lse_flag, (bool,))
    layout = _layout(owner, input_layout, ("BSH", "BNSD", "BSND"))
    _query_lengths(owner, actual_seq_lengths, _tensor(query).shape[_seq_axis(layout)])
    out, lse = _attention(owner, query, _single(owner, "key", key), _single(owner, "value", value), heads=num_heads,
                          kv_heads=num_key_value_heads, layout=layout, scale=scale, pse=pse_shift, mask=atten_mask,
                          sparse_mode=sparse_mode, pre_tokens=pre_tokens, next_tokens=next_tokens,
                          kv_lengths=actual_seq_lengths_kv)
    return out, lse if softmax_lse_flag else Tensor(np.zeros((1,), np.float32))


def _moe_indices(owner: str, indices: Any, name: str) -> Tensor:
    idx = _tensor(indices)
    if idx.dtype.name not in ("int32", "int64"):
        raise ArgumentError(f"For '{owner}', the dtype of '{name}' must be int32 or int64, but got {idx.dtype}.")
    return idx


def moe_token_permute(tokens: Any, indices: Any, num_out_tokens: Any = None,
                      padded_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``(permuted_tokens, sorted_indices)``: each token repeated for each of its ``topk`` experts, the
    copies grouped by expert index (a stable sort of the flattened indices, so token order within an
    expert is kept); ``sorted_indices[p]`` (int32) is where flattened copy ``p`` landed. ``num_out_tokens``
    keeps the first rows (None or 0: all)."""
    owner = "MoeTokenPermute"
    x, idx = _tensor(tokens), _moe_indices(owner, indices, "indices")
    _typed(owner, "padded_mode", padded_mode, (bool,))
    if padded_mode:
        raise InvalidValueError(f"For '{owner}', 'padded_mode' can only be False currently.")
    if x.ndim != 2 or idx.ndim not in (1, 2):
        raise InvalidValueError(f"For '{owner}', 'tokens' must be 2-D and 'indices' 1-D or 2-D, but got shapes "
                                f"{x.shape} and {idx.shape}.")
    topk = idx.shape[1] if idx.ndim == 2 else 1
    if topk > 512:
        raise InvalidValueError(f"For '{owner}', the second dim of 'indices' must be <= 512, but got {topk}.")
    if idx.shape[0] != x.shape[0]:
        raise RuntimeParamError(f"For '{owner}', the first dims of 'tokens' {x.shape} and 'indices' {idx.shape} "
                                f"must be the same.")
    total = x.shape[0] * topk
    _, order = Sort()(_cast(Reshape()(idx, (total,)), mstype.int32))
    _, where = Sort()(order)
    permuted = Gather()(x, FloorDiv()(order, topk) if topk > 1 else order, 0)
    if num_out_tokens is not None:
        keep = _typed(owner, "num_out_tokens", num_out_tokens, (int,))
        if keep < 0:
            raise InvalidValueError(f"For '{owner}', 'num_out_tokens' must be >= 0, but got {keep}.")
        if 0 < keep < total:
            permuted = StridedSlice()(permuted, (0, 0), (keep, x.shape[1]), (1, 1))
    return permuted, where


def moe_token_unpermute(permuted_tokens: Any, sorted_indices: Any, probs: Any = None, padded_mode: bool = False,
                        restore_shape: Any = None) -> Tensor:
    """The inverse of :func:`moe_token_permute`: row ``p`` of the flattened (token, k) copies is
    ``permuted_tokens[sorted_indices[p]]``; with ``probs`` (T, topk) the topk copies of each token are
    summed weighted by them, else topk is 1."""
    owner = "MoeTokenUnpermute"
    x, idx = _tensor(permuted_tokens), _tensor(sorted_indices)
    _typed(owner, "padded_mode", padded_mode, (bool,))
    if padded_mode:
        raise InvalidValueError(f"For '{owner}', 'padded_mode' can only be False currently.")
    if restore_shape is not None:
        raise InvalidParamError(f"{owner}: restore_shape is only used in padded mode, which is not served; pass None")
    if idx.dtype != mstype.int32 or idx.ndim != 1 or x.ndim != 2:
        raise ArgumentError(f"For '{owner}', 'sorted_indices' must be a 1-D int32 Tensor and 'permuted_tokens' 2-D, "
                            f"but got {idx.dtype} {idx.shape} and {x.shape}.")
    rows = Gather()(x, idx, 0)
    if probs is None:
        return rows
    p = _tensor(probs)
    if p.ndim != 2 or p.shape[0] * p.shape[1] != idx.shape[0]:
        raise InvalidValueError(f"For '{owner}', 'probs' must be (num_tokens, topk) with num_tokens * topk = "
                                f"{idx.shape[0]}, but got {p.shape}.")
    grouped = Reshape()(rows, (p.shape[0], p.shape[1], x.shape[1]))
    return _cast(ReduceSum()(grouped * ExpandDims()(_cast(p, x.dtype), 2), 1), x.dtype)


# ---- resampling and patches (round 2) ----
from ..operations.array_ops import ResizeNearestNeighborV2 as _ResizeNearestNeighborV2  # noqa: E402
from ..operations.image_ops import ResizeBicubic as _ResizeBicubic, ResizeLinear1D as _ResizeLinear1D  # noqa: E402
from ..operations.nn_ops import GridSampler2D as _GridSampler2D, GridSampler3D as _GridSampler3D  # noqa: E402
from ..operations.nn_ops import UpsampleNearest3D as _UpsampleNearest3D  # noqa: E402
from ..operations.nn_ops import UpsampleTrilinear3D as _UpsampleTrilinear3D  # noqa: E402


def grid_sample(input: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: Any = None) -> Tensor:
    """Samples a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input at the grid's points (GridSampler2D/3D);
    ``align_corners`` None is False. 'bicubic' is not served (MindSpore's CPU kernel refuses it too)."""
    x = _tensor(input)
    align = False if align_corners is None else align_corners
    if mode == "bicubic":
        raise FeatureNotSupportedError("grid_sample: mode='bicubic' is not supported; use 'bilinear' or 'nearest'")
    sampler = _GridSampler2D if x.ndim == 4 else _GridSampler3D
    return sampler(mode, padding_mode, align)(x, grid)


# interpolate's other modes and ranks, as MindSpore maps them onto primitives: the ranks each mode takes,
# the ranks it takes a scale_factor for (else recompute_scale_factor is needed), and align_corners' ranks
INTERPOLATE_RANKS = {"nearest": (3, 4, 5), "linear": (3,), "bilinear": (4,), "bicubic": (4,), "trilinear": (5,),
                     "area": (3, 4, 5), "nearest-exact": (3, 4)}
INTERPOLATE_SCALE_RANKS = {"nearest": (5,), "trilinear": (5,), "area": (3, 4, 5)}
INTERPOLATE_ALIGN_RANKS = {"linear": (3,), "bilinear": (4,), "bicubic": (4,), "trilinear": (5,)}


def _interpolate_modes(x: Tensor, size: Any, scale_factor: Any, mode: str, align_corners: Any,
                       recompute_scale_factor: Any) -> Tensor:
    """interpolate for 'linear' (ResizeLinear1D), 'bicubic' (ResizeBicubic), 'trilinear' (UpsampleTrilinear3D),
    'area' (adaptive average pooling), 'nearest' on 3-D (ResizeNearestNeighborV2 on a width-1 image) and
    5-D (UpsampleNearest3D) and 'nearest-exact' (half-pixel nearest), with MindSpore's argument rules."""
    if mode not in INTERPOLATE_RANKS:
        raise ValueError(f"For 'interpolate', 'mode' must be in {list(INTERPOLATE_RANKS)}, but got {mode!r}.")
    rank, dims = x.ndim, x.ndim - 2
    if rank not in INTERPOLATE_RANKS[mode]:
        raise ValueError(f"For 'interpolate', {mode!r} supports inputs of rank {list(INTERPOLATE_RANKS[mode])}, "
                         f"but got {rank}.")
    if (size is None) == (scale_factor is None):
        raise ValueError("For 'interpolate', exactly one of 'size' and 'scale_factor' must be set.")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("For 'interpolate', it is incorrect to set 'recompute_scale_factor' to True after "
                             "specifying an explicit 'size'.")
        size = (size,) * dims if isinstance(size, int) else _int_tuple("interpolate: size", size)
        if len(size) != dims:
            raise ValueError(f"For 'interpolate', 'size' must have {dims} elements, but got {size!r}.")
    else:
        factors = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * dims
        if len(factors) != dims or any(not isinstance(f, (int, float)) or f <= 0 for f in factors):
            raise ValueError(f"For 'interpolate', 'scale_factor' must be {dims} positive floats, but got "
                             f"{scale_factor!r}.")
        if recompute_scale_factor or mode == "area":
            size = tuple(int(math.floor(n * f)) for n, f in zip(x.shape[2:], factors))
            factors = None
        elif rank not in INTERPOLATE_SCALE_RANKS.get(mode, ()):
            raise ValueError(f"For 'interpolate', 'scale_factor' with mode {mode!r} on a {rank}-D input needs "
                             f"recompute_scale_factor=True.")
        scale_factor = factors
    if align_corners is not None and rank not in INTERPOLATE_ALIGN_RANKS.get(mode, ()):
        raise ValueError(f"For 'interpolate', 'align_corners' is not supported for mode {mode!r} on a {rank}-D "
                         f"input.")
    align = bool(align_corners)
    if mode == "linear":
        return _ResizeLinear1D("align_corners" if align else "half_pixel")(x, size)
    if mode == "bicubic":
        return _ResizeBicubic(align, not align)(x, size)
    if mode == "trilinear":
        return _UpsampleTrilinear3D(align)(x, size, scale_factor)
    if mode == "area":
        return _adaptive_avg_pool(x, tuple(size))
    if rank == 5:
        return _UpsampleNearest3D()(x, size, scale_factor)
    half = mode == "nearest-exact"
    if rank == 3:
        return squeeze(_ResizeNearestNeighborV2(False, half)(expand_dims(x, -1), (size[0], 1)), -1)
    return _ResizeNearestNeighborV2(False, half)(x, size)


install_composite_functions(globals(), "mindspore.ops.function.nn_func")


# ---- linear algebra and statistics ----
def msort(input: Any) -> Tensor:
    """input sorted ascending along its first axis (NaN last)."""
    x = _tensor(input)
    if not isinstance(input, Tensor):
        raise TypeError(f"For 'msort', the type of 'input' must be Tensor, but got {type(input).__name__}.")
    return apply_op("Sort", [x], {"axis": 0, "descending": False})[0]


# ---- nn compositions ----
from ...common.tensor import hold_value as _hold_value  # noqa: E402
from ..operations.nn_ops import BatchNorm, SoftShrink  # noqa: E402
from .array_func import gather as _gather, select as _select  # noqa: E402
from .math_func import mean as _mean, rsqrt as _rsqrt  # noqa: E402
import builtins as _builtins  # noqa: E402

# the float dtypes ``is_floating_point`` answers True for (MindSpore's mstype.float_type)
FLOATING_DTYPES = ("float16", "bfloat16", "float32", "float64")


def soft_shrink(input: Any, lambd: float = 0.5) -> Tensor:
    """Deprecated name of ``softshrink``: ``SoftShrink(lambd)(input)``."""
    return SoftShrink(lambd)(input)


def mirror_pad(input_x: Any, paddings: Any, mode: str) -> Tensor:
    """``MirrorPad(mode)(input_x, paddings)``."""
    return MirrorPad(mode)(input_x, paddings)


def is_floating_point(input: Any) -> bool:
    """Whether the tensor's dtype is a float type (a Python bool, computed on the host)."""
    return input.dtype.name in FLOATING_DTYPES


def inplace_sigmoid(input: Any) -> Tensor:
    """In place: ``input`` holds ``sigmoid(input)`` and is returned."""
    return _hold_value(input, sigmoid(input))


def batch_norm(input_x: Any, running_mean: Any, running_var: Any, weight: Any, bias: Any, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """``BatchNorm(training, eps, momentum)``'s normalised output (training: batch statistics, and the
    running ones updated as the primitive updates them)."""
    return BatchNorm(is_training=training, epsilon=eps, momentum=momentum)(input_x, weight, bias, running_mean,
                                                                            running_var)[0]


def add_layer_norm(x1: Any, x2: Any, gamma: Any, beta: Any, epsilon: float = 1e-5,
                   additional_output: bool = False) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """AddLayerNormV2: ``x = x1 + x2`` normalised over its last ``gamma.ndim`` dimensions, then scaled and
    shifted: (y, mean, rstd, x), mean and rstd keeping the normalised dimensions as 1."""
    if not isinstance(epsilon, float):
        raise TypeError(f"For 'AddLayerNorm', the 'epsilon' must be a float, but got {type(epsilon).__name__}.")
    if not isinstance(additional_output, bool):
        raise TypeError(f"For 'AddLayerNorm', 'additional_output' must be a bool, but got "
                        f"{type(additional_output).__name__}.")
    from .grad.grad_func import stop_gradient
    x = _tensor(x1) + _tensor(x2)
    axes = tuple(range(x.ndim - _tensor(gamma).ndim, x.ndim))
    mean = _mean(x, axes, True)
    centred = x - mean
    rstd = _rsqrt(_mean(centred * centred, axes, True) + epsilon)
    # MindSpore's bprop (AddLayerNormGrad) takes dy, and x's gradient only when additional_output is set: mean
    # and rstd pass no gradient back, nor x without additional_output
    return (centred * rstd * gamma + beta, stop_gradient(mean), stop_gradient(rstd),
            x if additional_output else stop_gradient(x))


def adaptive_avg_pool2d_ext(input: Any, output_size: Any) -> Tensor:
    """adaptive_avg_pool2d; a None in ``output_size`` keeps the input's size there."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 2:
            raise ValueError(f"For 'AdaptiveAvgPool2DExt', the length of 'output_size' must be 2, but got "
                             f"{len(output_size)}.")
        shape = _tensor(input).shape
        output_size = tuple(shape[k - 2] if s is None else s for k, s in enumerate(output_size))
    return adaptive_avg_pool2d(input, output_size)


def mse_loss_ext(input: Any, target: Any, reduction: str = "mean") -> Tensor:
    """Mean squared error with broadcasting, reduced by ``reduction`` ('mean', 'sum', 'none')."""
    return mse_loss(input, target, reduction)


def embedding(input: Any, weight: Any, padding_idx: Any = None, max_norm: Any = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False) -> Tensor:
    """Rows of ``weight`` at the indices ``input``; the row ``padding_idx`` gets no gradient (its lookups
    are stop-gradient). max_norm (an in-place renormalisation of ``weight``) and scale_grad_by_freq are
    not served."""
    if max_norm is not None:
        raise InvalidParamError("embedding: max_norm (renormalising weight in place) is not served; pass "
                                "max_norm=None and clip the weight's rows explicitly")
    if scale_grad_by_freq:
        raise InvalidParamError("embedding: scale_grad_by_freq=True is not served; pass False")
    input, weight = _tensor(input), _tensor(weight)
    if input.dtype.name not in ("int32", "int64"):
        raise TypeError(f"For 'Embedding', the 'input' must be int32 or int64, but got {input.dtype}.")
    out = _gather(weight, input, 0)
    if padding_idx is None:
        return out
    rows = weight.shape[0]
    if not isinstance(padding_idx, int) or not -rows <= padding_idx < rows:
        raise ValueError(f"For 'Embedding', the 'padding_idx' must be an int in [{-rows}, {rows}), but got "
                         f"{padding_idx!r}.")
    padding = padding_idx + rows if padding_idx < 0 else padding_idx
    pad_rows = equal(input, padding).reshape(tuple(input.shape) + (1,))
    return _select(pad_rows.broadcast_to(out.shape), operations.StopGradient()(out), out)


def _conv_pair(name: str, value: Any) -> tuple[int, int]:
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) == 1:
        pair = pair * 2
    if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair):
        raise InvalidParamError(f"conv_transpose2d: {name}={value!r} must be an int or a pair of ints")
    return pair


def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 2-D convolution (the gradient of a Conv2D with respect to its input): weight
    (C_in, C_out / groups, kh, kw), output size (H - 1) * stride - 2 * padding + dilation * (k - 1) +
    output_padding + 1 per spatial dim; a 3-D input is one unbatched image."""
    input, weight = _tensor(input), _tensor(weight)
    batched = input.ndim == 4
    x = input if batched else operations.ExpandDims()(input, 0)
    if x.ndim != 4 or weight.ndim != 4:
        raise InvalidParamError(f"conv_transpose2d: input must be 3-d or 4-d and weight 4-d, got {input.shape}, "
                                f"{weight.shape}")
    stride, padding = _conv_pair("stride", stride), _conv_pair("padding", padding)
    output_padding, dilation = _conv_pair("output_padding", output_padding), _conv_pair("dilation", dilation)
    for axis in range(2):
        if not 0 <= output_padding[axis] < _builtins.max(stride[axis], dilation[axis]):
            raise InvalidParamError(f"conv_transpose2d: output_padding={output_padding} must be smaller than "
                                    f"stride or dilation")
    kernel = tuple(weight.shape[2:])
    size = tuple((x.shape[2 + a] - 1) * stride[a] - 2 * padding[a] + dilation[a] * (kernel[a] - 1) +
                 output_padding[a] + 1 for a in range(2))
    conv = operations.Conv2DTranspose(weight.shape[0], kernel, pad_mode="pad",
                                      pad=(padding[0], padding[0], padding[1], padding[1]), stride=stride,
                                      dilation=dilation, group=groups)
    out = conv(x, weight, (x.shape[0], weight.shape[1] * groups) + size)
    if bias is not None:
        out = out + reshape(bias, (1, -1, 1, 1))
    return out if batched else operations.Squeeze(0)(out)


# ---- image, detection and windows ----
from ..operations.nn_ops import CTCGreedyDecoder  # noqa: E402


def ctc_greedy_decoder(inputs: Any, sequence_length: Any, merge_repeated: bool = True) -> tuple:
    """``CTCGreedyDecoder(merge_repeated)(inputs, sequence_length)``: greedy CTC decoding of (T, B, C) logits."""
    return CTCGreedyDecoder(merge_repeated)(inputs, sequence_length)


# ---- fused and sparse optimizers, inner ops ----
RING_ATTENTION_LAYOUTS = ("SBH", "TND")   # the layouts MindSpore's RingAttentionUpdate takes


def ring_attention_update(prev_attn_out: Any, prev_softmax_max: Any, prev_softmax_sum: Any, cur_attn_out: Any,
                          cur_softmax_max: Any, cur_softmax_sum: Any, actual_seq_qlen: Any = None,
                          layout: str = "SBH") -> tuple[Tensor, Tensor, Tensor]:
    """Two FlashAttention partial results merged by their softmax statistics (ring attention's step):
    ``m = max(m1, m2); s = s1 exp(m1 - m) + s2 exp(m2 - m); out = (out1 s1 exp(m1 - m) + out2 s2 exp(m2 -
    m)) / s``, per (batch, head, query) of the (B, N, S, 8) / (T, N, 8) statistics; returns (out, m, s).
    ``actual_seq_qlen`` (TND) only partitions the Ascend kernel's work: the values do not depend on it."""
    if not isinstance(layout, str):
        raise TypeError(f"For 'RingAttentionUpdate', the input 'layout' should be a str, but got {type(layout)}.")
    if layout not in RING_ATTENTION_LAYOUTS:
        raise ValueError(f"For RingAttentionUpdate, the value of 'layout' must be SBH/TND, but got {layout!r}.")
    if layout == "TND" and actual_seq_qlen is None:
        raise RuntimeError("For 'RingAttentionUpdate', 'actual_seq_qlen' is required when 'layout' is 'TND'.")
    prev_out, cur_out = _tensor(prev_attn_out), _tensor(cur_attn_out)
    prev_max, prev_sum = _tensor(prev_softmax_max), _tensor(prev_softmax_sum)
    cur_max, cur_sum = _tensor(cur_softmax_max), _tensor(cur_softmax_sum)
    if prev_out.shape != cur_out.shape or not (prev_max.shape == prev_sum.shape == cur_max.shape == cur_sum.shape):
        raise ValueError("For 'RingAttentionUpdate', the two attention outputs and the four softmax statistics "
                         "must each have the same shape.")
    new_max = maximum(prev_max, cur_max)
    prev_w, cur_w = prev_sum * exp(prev_max - new_max), cur_sum * exp(cur_max - new_max)
    new_sum = prev_w + cur_w
    prev_r, cur_r = (prev_w / new_sum)[..., 0:1], (cur_w / new_sum)[..., 0:1]
    dtype = prev_out.dtype
    prev_f, cur_f = cast(prev_out, mstype.float32), cast(cur_out, mstype.float32)
    if layout == "SBH":
        seq, batch, hidden = prev_out.shape
        heads = prev_max.shape[1]
        # (B, N, S, 1) ratios -> (S, B, N, 1) against the (S, B, N, D) view of the outputs
        prev_r, cur_r = (operations.Transpose()(r, (2, 0, 1, 3)) for r in (prev_r, cur_r))
        view = (seq, batch, heads, hidden // heads)
        out = reshape(reshape(prev_f, view) * prev_r + reshape(cur_f, view) * cur_r, prev_out.shape)
    else:
        out = prev_f * prev_r + cur_f * cur_r
    return cast(out, dtype), new_max, new_sum


__all__ = [name for name in defined_here(globals(), __name__) if name not in INTERNAL]


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.nn_func", name, __all__)
