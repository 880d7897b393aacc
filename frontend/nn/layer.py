"""``mindspore.nn`` layers of the supported subset: Dense, Conv2d, Conv2dTranspose, Conv1d, pooling,
normalisation, Embedding, OneHot, Pad, CentralCrop, ResizeBilinear, ClipByNorm, activations, containers.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Iterable, Iterator

import numpy as np

from ascendemu.errors import InvalidParamError

from .. import ops
from ..common import dtype as mstype
from ..common.initializer import HeUniform, Initializer, Uniform, initializer
from ..common.seed import graph_seed
from ..tensor import Parameter, Tensor
from .cell import Cell

# ------------------------------------------------------------------------------------------- layers

def get_activation(name: Any) -> Cell | None:
    if name is None or isinstance(name, Cell) or isinstance(name, ops.Primitive):
        return name
    table = {"relu": ReLU, "gelu": GELU, "sigmoid": Sigmoid, "tanh": Tanh, "softmax": Softmax,
             "logsoftmax": LogSoftmax, "relu6": ReLU6, "hswish": HSwish, "hsigmoid": HSigmoid,
             "leakyrelu": LeakyReLU}
    if not isinstance(name, str) or name.lower() not in table:
        raise InvalidParamError(f"activation {name!r} is not supported; use one of {sorted(table)}")
    return table[name.lower()]()


def _init_param(layer: str, what: str, init: Any, default: Any, shape: tuple[int, ...], dtype: Any) -> Tensor:
    """``initializer(init, shape, dtype)`` for a layer's ``weight_init``/``bias_init``; None takes the
    layer's default. ``init`` is never tested for truth: a Tensor has none, and 0 is a valid constant."""
    if init is None:
        init = default
    elif isinstance(init, Tensor):
        init = init.asnumpy()
    if isinstance(init, np.ndarray) and init.shape != tuple(shape):
        raise InvalidParamError(f"{layer}: {what} has shape {init.shape}, but this layer's "
                                f"{what.removesuffix('_init')} has shape {tuple(shape)}")
    return initializer(init, shape, dtype)


class Dense(Cell):
    """y = activation(x @ W.T + b), W of shape (out, in); inputs of rank > 2 are flattened to 2-D
    around the MatMul (Reshape nodes, which compile to aliases)."""

    def __init__(self, in_channels: int, out_channels: int, weight_init: Any = None, bias_init: Any = None,
                 has_bias: bool = True, activation: Any = None, dtype: Any = mstype.float32):
        super().__init__()
        self.in_channels, self.out_channels, self.has_bias = int(in_channels), int(out_channels), bool(has_bias)
        self.weight = Parameter(_init_param("Dense", "weight_init", weight_init, HeUniform(math.sqrt(5)),
                                            (self.out_channels, self.in_channels), dtype), name="weight")
        if self.has_bias:
            bound = 1 / math.sqrt(self.in_channels)
            self.bias = Parameter(_init_param("Dense", "bias_init", bias_init, Uniform(bound),
                                              (self.out_channels,), dtype), name="bias")
            self.bias_add = ops.BiasAdd()
        else:
            self.bias = None                # as MindSpore's: zoo init loops test `cell.bias is not None`
        self.matmul = ops.MatMul(transpose_b=True)
        self.activation = get_activation(activation)

    def construct(self, x: Tensor) -> Tensor:
        shape = x.shape
        if len(shape) != 2:
            x = ops.reshape(x, (-1, shape[-1]))
        x = self.matmul(x, self.weight)
        if self.has_bias:
            x = self.bias_add(x, self.bias)
        if self.activation is not None:
            x = self.activation(x)
        if len(shape) != 2:
            x = ops.reshape(x, shape[:-1] + (self.out_channels,))
        return x

    def extend_repr(self) -> str:
        # MindSpore prints has_bias only when True, and the activation when there is one
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}"
        if self.has_bias:
            s += f", has_bias={self.has_bias}"
        if self.activation is not None:
            s += f", activation={self.activation}"
        return s


class Conv2d(Cell):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 pad_mode: str = "same", padding: Any = 0, dilation: Any = 1, group: int = 1,
                 has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 data_format: str = "NCHW", dtype: Any = mstype.float32):
        super().__init__()
        kh, kw = ops._pair("kernel_size", kernel_size)
        if in_channels % group or out_channels % group:
            raise InvalidParamError(f"Conv2d: in_channels={in_channels} and out_channels={out_channels} "
                                    f"must be divisible by group={group}")
        self.in_channels, self.out_channels, self.has_bias = in_channels, out_channels, bool(has_bias)
        self.weight = Parameter(_init_param("Conv2d", "weight_init", weight_init, HeUniform(math.sqrt(5)),
                                            (out_channels, in_channels // group, kh, kw), dtype), name="weight")
        if self.has_bias:
            bound = 1 / math.sqrt(in_channels // group * kh * kw)
            self.bias = Parameter(_init_param("Conv2d", "bias_init", bias_init, Uniform(bound),
                                              (out_channels,), dtype), name="bias")
            self.bias_add = ops.BiasAdd()
        else:
            self.bias = None
        # what print(cell) shows, as MindSpore's _Conv keeps them: the default initialisers it made
        self.weight_init = HeUniform(math.sqrt(5)) if weight_init is None else weight_init
        self.bias_init = (Uniform(1 / math.sqrt(in_channels // group * kh * kw)) if bias_init is None and has_bias
                          else bias_init)
        self.conv2d = ops.Conv2D(out_channels, (kh, kw), pad_mode=pad_mode, pad=padding, stride=stride,
                                 dilation=dilation, group=group, data_format=data_format)
        # MindSpore's public attributes (zoo init code reads kernel_size, group...): pairs as tuples
        a = self.conv2d.conv_attrs
        self.kernel_size, self.stride, self.dilation = (kh, kw), a["stride"], a["dilation"]
        self.pad_mode, self.padding, self.group, self.data_format = pad_mode, padding, group, data_format

    def construct(self, x: Tensor) -> Tensor:
        out = self.conv2d(x, self.weight)
        return self.bias_add(out, self.bias) if self.has_bias else out

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}, "
                f"weight_init={_init_text(self.weight_init)}, bias_init={_init_text(self.bias_init)}, "
                f"format={self.data_format}")


def _init_text(init: Any) -> str:
    """An initializer as MindSpore's ``print(conv)`` shows it: an Initializer object by its default repr
    under MindSpore's module name, anything else (a name such as 'normal', None) as str."""
    if isinstance(init, Initializer):
        return f"<mindspore.common.initializer.{type(init).__name__} object at {id(init):#x}>"
    return str(init)


def _positive_int(layer: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParamError(f"{layer}: {name}={value!r} must be an int >= 1")
    return value


def _deconv_length(pad_mode: str, size: int, kernel: int, stride: int, dilation: int, padding: int) -> int:
    """Output length of a transposed convolution along one axis, as nn.Conv2dTranspose computes the
    input_size of its Conv2DTranspose: the length whose Conv2D (same attrs) has ``size`` outputs."""
    span = (kernel - 1) * dilation + 1
    if pad_mode == "same":
        return size * stride
    if pad_mode == "valid":
        return size * stride + max(span - stride, 0)
    return size * stride - padding + span - stride


class Conv2dTranspose(Cell):
    """Transposed 2-D convolution: ``ops.Conv2DTranspose`` (Conv2DBackpropInput) of x with a weight of
    shape (in_channels, out_channels // group, kh, kw), to the output size MindSpore documents per
    pad_mode: same H * stride; valid H * stride + max(dilation * (k - 1) + 1 - stride, 0); pad
    H * stride - (top + bottom) + dilation * (k - 1) + 1 - stride, then ``output_padding`` zero rows
    and columns at the bottom and right (pad_mode 'pad' only, each < max(stride, dilation))."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 pad_mode: str = "same", padding: Any = 0, output_padding: Any = 0, dilation: Any = 1,
                 group: int = 1, has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 dtype: Any = mstype.float32):
        super().__init__()
        name = "Conv2dTranspose"
        self.in_channels = _positive_int(name, "in_channels", in_channels)
        self.out_channels = _positive_int(name, "out_channels", out_channels)
        self.group = _positive_int(name, "group", group)
        if in_channels % group or out_channels % group:
            raise InvalidParamError(f"{name}: in_channels={in_channels} and out_channels={out_channels} "
                                    f"must be divisible by group={group}")
        if pad_mode not in ("same", "valid", "pad"):
            raise InvalidParamError(f"{name}: pad_mode={pad_mode!r} must be 'same', 'valid' or 'pad'")
        self.kernel_size, self.stride = ops._pair("kernel_size", kernel_size), ops._pair("stride", stride)
        self.dilation, self.padding = ops._pair("dilation", dilation), ops._pad4(padding)
        self.pad_mode, self.has_bias = pad_mode, bool(has_bias)
        if pad_mode != "pad" and any(self.padding):
            raise InvalidParamError(f"{name}: padding={padding!r} must be 0 unless pad_mode is 'pad'")
        out_pad = ops._pair("output_padding", output_padding)
        for axis, (p, st, dl) in enumerate(zip(out_pad, self.stride, self.dilation)):
            if not 0 <= p < max(st, dl):
                raise InvalidParamError(f"{name}: output_padding[{axis}]={p} must be in [0, max(stride, "
                                        f"dilation)) = [0, {max(st, dl)})")
        if any(out_pad) and pad_mode != "pad":
            raise InvalidParamError(f"{name}: output_padding={output_padding!r} needs pad_mode='pad'")
        self.output_padding = out_pad
        kh, kw = self.kernel_size
        shape = (self.in_channels, self.out_channels // group, kh, kw)
        self.weight = Parameter(_init_param(name, "weight_init", weight_init, HeUniform(math.sqrt(5)), shape,
                                            dtype), name="weight")
        if self.has_bias:
            bound = 1 / math.sqrt(shape[1] * kh * kw)
            self.bias = Parameter(_init_param(name, "bias_init", bias_init, Uniform(bound), (self.out_channels,),
                                              dtype), name="bias")
            self.bias_add = ops.BiasAdd()
        else:
            self.bias = None
        # Conv2DTranspose's out_channel is the out_channel of the Conv2D it transposes
        self.conv2d_transpose = ops.Conv2DTranspose(self.in_channels, self.kernel_size, pad_mode=pad_mode,
                                                    pad=self.padding, stride=self.stride, dilation=self.dilation,
                                                    group=group)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim != 4:
            raise InvalidParamError(f"Conv2dTranspose: input must have rank 4 (N, C, H, W), got shape {x.shape}")
        n, _, h, w = x.shape
        (kh, kw), (sh, sw), (dh, dw) = self.kernel_size, self.stride, self.dilation
        top, bottom, left, right = self.padding
        size = (n, self.out_channels, _deconv_length(self.pad_mode, h, kh, sh, dh, top + bottom),
                _deconv_length(self.pad_mode, w, kw, sw, dw, left + right))
        out = self.conv2d_transpose(x, self.weight, size)
        if self.has_bias:
            out = self.bias_add(out, self.bias)
        if any(self.output_padding):
            out = ops.Pad(((0, 0), (0, 0), (0, self.output_padding[0]), (0, self.output_padding[1])))(out)
        return out

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}")


class Conv1d(Cell):
    """1-D convolution over (N, C, L), as MindSpore builds it: a Conv2D with kernel (1, k) between
    ExpandDims(x, 2) and Squeeze(2); the weight is (out_channels, in_channels // group, 1, k) (a 3-D
    Tensor weight_init gains the middle axis)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 pad_mode: str = "same", padding: int = 0, dilation: int = 1, group: int = 1,
                 has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 dtype: Any = mstype.float32):
        super().__init__()
        name = "Conv1d"
        for arg, value in (("in_channels", in_channels), ("out_channels", out_channels), ("kernel_size", kernel_size),
                           ("stride", stride), ("dilation", dilation), ("group", group)):
            _positive_int(name, arg, value)
        if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0:
            raise InvalidParamError(f"{name}: padding={padding!r} must be an int >= 0")
        if in_channels % group or out_channels % group:
            raise InvalidParamError(f"{name}: in_channels={in_channels} and out_channels={out_channels} "
                                    f"must be divisible by group={group}")
        if pad_mode not in ("same", "valid", "pad"):
            raise InvalidParamError(f"{name}: pad_mode={pad_mode!r} must be 'same', 'valid' or 'pad'")
        self.in_channels, self.out_channels, self.has_bias = in_channels, out_channels, bool(has_bias)
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        if isinstance(weight_init, Tensor):
            if weight_init.ndim != 3:
                raise InvalidParamError(f"{name}: a Tensor weight_init must have rank 3 (out, in / group, k), "
                                        f"got shape {weight_init.shape}")
            weight_init = np.expand_dims(weight_init.asnumpy(), 2)
        shape = (out_channels, in_channels // group, 1, kernel_size)
        self.weight = Parameter(_init_param(name, "weight_init", weight_init, HeUniform(math.sqrt(5)), shape,
                                            dtype), name="weight")
        if self.has_bias:
            bound = 1 / math.sqrt(in_channels // group * kernel_size)
            self.bias = Parameter(_init_param(name, "bias_init", bias_init, Uniform(bound), (out_channels,),
                                              dtype), name="bias")
            self.bias_add = ops.BiasAdd()
        else:
            self.bias = None
        self.conv2d = ops.Conv2D(out_channels, (1, kernel_size), pad_mode=pad_mode, pad=(0, 0, padding, padding),
                                 stride=(1, stride), dilation=(1, dilation), group=group)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim != 3:
            raise InvalidParamError(f"Conv1d: input must have rank 3 (N, C, L), got shape {x.shape}")
        out = self.conv2d(ops.expand_dims(x, 2), self.weight)
        if self.has_bias:
            out = self.bias_add(out, self.bias)
        return ops.squeeze(out, 2)

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, has_bias={self.has_bias}")


class _Pool2d(Cell):
    prim: type = ops.MaxPool

    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid", data_format: str = "NCHW"):
        super().__init__()
        self.pool = self.prim(kernel_size, stride, pad_mode, data_format)
        self.kernel_size, self.stride, self.pad_mode = kernel_size, stride, str(pad_mode).upper()

    def construct(self, x: Tensor) -> Tensor:
        return self.pool(x)

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


class MaxPool2d(_Pool2d):
    prim = ops.MaxPool


class AvgPool2d(_Pool2d):
    prim = ops.AvgPool


class _BatchNorm(Cell):
    """Batch norm over channel dim 1. Training mode (``set_train()``, or ``use_batch_statistics=True``)
    normalises with the batch's statistics and updates the moving ones with ``momentum`` (MindSpore's
    nn convention: moving = momentum * moving + (1 - momentum) * batch); eval mode uses the moving ones.
    """

    ranks: tuple[int, ...] = (4,)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", moving_mean_init: Any = "zeros",
                 moving_var_init: Any = "ones", use_batch_statistics: Any = None, data_format: str = "NCHW",
                 dtype: Any = mstype.float32):
        super().__init__()
        if not 0.0 <= momentum <= 1.0:
            raise InvalidParamError(f"{type(self).__name__}: momentum={momentum!r} must be in [0, 1]")
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), float(momentum)
        self.use_batch_statistics = use_batch_statistics
        # MindSpore's order (moving statistics first): parameters_and_names() and checkpoints list them so
        self.moving_mean = Parameter(initializer(moving_mean_init, num_features, dtype), name="moving_mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer(moving_var_init, num_features, dtype),
                                         name="moving_variance", requires_grad=False)
        self.gamma = Parameter(initializer(gamma_init, num_features, dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, num_features, dtype), name="beta", requires_grad=affine)
        self.bn_train = ops.BatchNorm(is_training=True, epsilon=eps, momentum=1.0 - momentum, data_format=data_format)
        self.bn_infer = ops.BatchNorm(is_training=False, epsilon=eps, data_format=data_format)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim not in self.ranks:
            want = " or ".join(map(str, self.ranks))
            raise InvalidParamError(f"{type(self).__name__}: input must have rank {want}, got shape {x.shape}")
        batch_stats = self.training if self.use_batch_statistics is None else bool(self.use_batch_statistics)
        bn = self.bn_train if batch_stats else self.bn_infer
        return bn(x, self.gamma, self.beta, self.moving_mean, self.moving_variance)[0]

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, gamma={self.gamma!r}, "
                f"beta={self.beta!r}, moving_mean={self.moving_mean!r}, moving_variance={self.moving_variance!r}")


class BatchNorm2d(_BatchNorm):
    ranks = (4,)


class BatchNorm1d(_BatchNorm):
    """(N, C) or (N, C, L): statistics per channel C over N (and L)."""

    ranks = (2, 3)


class Embedding(Cell):
    """A lookup table ``embedding_table`` of shape (vocab_size, embedding_size): ids of any shape give
    ids.shape + (embedding_size,) by Gather of the flattened ids (an id outside [0, vocab_size) gives
    zeros). As in MindSpore, ``padding_idx`` only zeroes that row of the initial table (its gradient
    still flows), and ``use_one_hot=True`` (one-hot ids times the table) equals the Gather in value and
    gradient, so it runs the Gather; ``dtype`` is the one-hot dtype there and unused here."""

    def __init__(self, vocab_size: int, embedding_size: int, use_one_hot: bool = False,
                 embedding_table: Any = "normal", dtype: Any = mstype.float32, padding_idx: Any = None):
        super().__init__()
        self.vocab_size = _positive_int("Embedding", "vocab_size", vocab_size)
        self.embedding_size = _positive_int("Embedding", "embedding_size", embedding_size)
        if not isinstance(use_one_hot, bool):
            raise InvalidParamError(f"Embedding: use_one_hot={use_one_hot!r} must be a bool")
        self.use_one_hot, self.dtype, self.padding_idx = use_one_hot, mstype.to_type(dtype), padding_idx
        table = initializer(embedding_table, (vocab_size, embedding_size))
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, int) or not 0 <= padding_idx < vocab_size:
                raise InvalidParamError(f"Embedding: padding_idx={padding_idx!r} must be an int in [0, {vocab_size})")
            values = table.asnumpy()
            values[padding_idx] = 0
            table = Tensor(values)
        self.embedding_table = Parameter(table, name="embedding_table")
        self.gather = ops.Gather()

    def construct(self, ids: Tensor) -> Tensor:
        flat = ops.reshape(ids, (-1,))
        return ops.reshape(self.gather(self.embedding_table, flat, 0), ids.shape + (self.embedding_size,))

    def extend_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, embedding_table={self.embedding_table!r}, dtype={self.dtype}, "
                f"padding_idx={self.padding_idx}")


class OneHot(Cell):
    """``OneHot(axis=-1, depth=1, on_value=1.0, off_value=0.0, dtype=mstype.float32)(indices)``: the
    OneHot primitive with the values cast to ``dtype`` (MindSpore's deprecated layer, kept as
    ``ops.one_hot``'s cell form)."""

    def __init__(self, axis: int = -1, depth: int = 1, on_value: float = 1.0, off_value: float = 0.0,
                 dtype: Any = mstype.float32):
        super().__init__()
        self.onehot = ops.OneHot(axis)
        self.depth, self.dtype, self.on_value, self.off_value = depth, dtype, on_value, off_value

    def construct(self, indices: Tensor) -> Tensor:
        return self.onehot(indices, self.depth, ops.cast(self.on_value, self.dtype),
                           ops.cast(self.off_value, self.dtype))


class Pad(Cell):
    """``Pad(paddings, mode='CONSTANT')``: ``paddings`` is a tuple of (before, after) pairs, one per
    dimension of x (at most 4); CONSTANT pads zeros (Pad), REFLECT and SYMMETRIC mirror (MirrorPad)."""

    MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")

    def __init__(self, paddings: Any, mode: str = "CONSTANT"):
        super().__init__()
        if mode not in self.MODES:
            raise InvalidParamError(f"Pad: mode={mode!r} must be one of {self.MODES}")
        if not isinstance(paddings, tuple):
            raise InvalidParamError(f"Pad: paddings must be a tuple of (before, after) pairs, got "
                                    f"{type(paddings).__name__}")
        if any(not isinstance(p, (tuple, list)) or len(p) != 2 for p in paddings):
            raise InvalidParamError(f"Pad: paddings must have shape (n, 2), got {paddings}")
        if len(paddings) > 4:
            raise InvalidParamError(f"Pad: paddings of at most 4 dimensions are supported, got {len(paddings)}")
        self.paddings, self.mode = tuple(tuple(p) for p in paddings), mode
        self.pad = ops.Pad(self.paddings) if mode == "CONSTANT" else ops.MirrorPad(mode)

    def construct(self, x: Tensor) -> Tensor:
        return self.pad(x) if self.mode == "CONSTANT" else self.pad(x, self.paddings)

    def extend_repr(self) -> str:
        return f"paddings={self.paddings}, mode={self.mode}"


class CentralCrop(Cell):
    """``CentralCrop(central_fraction)(image)``: the central ``central_fraction`` of the H and W of a
    (C, H, W) or (N, C, H, W) image, one Slice with MindSpore's box (start = int((h - h * f) / 2),
    size = h - 2 * start), so a fraction close to 1 may keep the whole image."""

    def __init__(self, central_fraction: float):
        super().__init__()
        if not isinstance(central_fraction, float):
            raise InvalidParamError(f"CentralCrop: central_fraction must be a float, got "
                                    f"{type(central_fraction).__name__}")
        if not 0.0 < central_fraction <= 1.0:
            raise InvalidParamError(f"CentralCrop: central_fraction={central_fraction} must be in (0.0, 1.0]")
        self.central_fraction = central_fraction

    def construct(self, image: Tensor) -> Tensor:
        shape = ops.shape(image)
        if len(shape) not in (3, 4):
            raise InvalidParamError(f"CentralCrop: image must be 3d or 4d, but got shape {shape}")
        if self.central_fraction == 1.0:
            return image
        h, w = shape[-2:]
        top = int((float(h) - float(h * self.central_fraction)) / 2)
        left = int((float(w) - float(w * self.central_fraction)) / 2)
        begin = (0,) * (len(shape) - 2) + (top, left)
        return ops.slice(image, begin, shape[:-2] + (h - 2 * top, w - 2 * left))


class ResizeBilinear(Cell):
    """``ResizeBilinear(half_pixel_centers=False)(x, size=None, scale_factor=None, align_corners=False)``:
    bilinear resize of NCHW x to ``size``, or to (H, W) times an int ``scale_factor`` >= 1."""

    def __init__(self, half_pixel_centers: bool = False):
        super().__init__()
        self.half_pixel_centers = half_pixel_centers

    def construct(self, x: Tensor, size: Any = None, scale_factor: Any = None, align_corners: bool = False) -> Tensor:
        if (size is None) == (scale_factor is None):
            raise InvalidParamError("ResizeBilinear: give exactly one of size and scale_factor")
        if size is not None:
            if not isinstance(size, (tuple, list)) or len(size) != 2 or min(size) < 1:
                raise InvalidParamError(f"ResizeBilinear: size={size!r} must be (new_height, new_width), ints >= 1")
            shape = tuple(size)
        else:
            if isinstance(scale_factor, bool) or not isinstance(scale_factor, int) or scale_factor < 1:
                raise InvalidParamError(f"ResizeBilinear: scale_factor={scale_factor!r} must be an int >= 1")
            shape = (x.shape[2] * scale_factor, x.shape[3] * scale_factor)
        return ops.ResizeBilinear(shape, align_corners, self.half_pixel_centers)(x)


class LayerNorm(Cell):
    def __init__(self, normalized_shape: Any, begin_norm_axis: int = -1, begin_params_axis: int = -1,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", epsilon: float = 1e-7,
                 dtype: Any = mstype.float32):
        super().__init__()
        if not isinstance(normalized_shape, (tuple, list)):
            raise InvalidParamError(f"LayerNorm: normalized_shape must be a tuple or list, got {normalized_shape!r}")
        self.normalized_shape = tuple(normalized_shape)
        self.begin_norm_axis, self.begin_params_axis = begin_norm_axis, begin_params_axis
        self.gamma = Parameter(initializer(gamma_init, self.normalized_shape, dtype), name="gamma")
        self.beta = Parameter(initializer(beta_init, self.normalized_shape, dtype), name="beta")
        self.layer_norm = ops.LayerNorm(begin_norm_axis, begin_params_axis, epsilon)

    def construct(self, x: Tensor) -> Tensor:
        return self.layer_norm(x, self.gamma, self.beta)[0]

    def extend_repr(self) -> str:
        # MindSpore 2.10's text, its missing '=' after gamma included
        return (f"normalized_shape={self.normalized_shape}, begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}, gamma{self.gamma!r}, beta={self.beta!r}")


class Dropout(Cell):
    """Zero each element with probability ``p`` (or ``1 - keep_prob``) in training mode
    (``set_train()``) and scale the rest by ``1 / (1 - p)``; the identity in eval mode, which is a
    fresh Cell's, and when nothing is dropped. ``p`` wins when given; ``keep_prob`` is MindSpore's
    deprecated form and ``dtype`` is accepted and unused, as there. Each layer owns an
    ``ops.Dropout`` with its own seed pair (the global seed's next, see ``set_seed``) and generator,
    so every step draws a new mask and a seeded run the same masks."""

    def __init__(self, keep_prob: float = 0.5, p: float | int | None = None, dtype: Any = mstype.float32):
        super().__init__()
        if p is None:
            keep = ops._probability("Dropout", "keep_prob", keep_prob, low_open=True)
        else:
            keep = 1.0 - ops._probability("Dropout", "p", p, low_open=False, allow_int=True)
        self.keep_prob, self.p = keep_prob, p
        self.dropout = ops.Dropout(keep, *graph_seed(0, "dropout"))

    def construct(self, x: Tensor) -> Tensor:
        if not self.training or self.keep_prob == 1 or self.p == 0:
            return x
        return self.dropout(x)[0]

    def extend_repr(self) -> str:
        return f"keep_prob={self.keep_prob}" if self.p is None else f"p={self.p}"


class _Activation(Cell):
    prim: type = ops.ReLU

    def __init__(self) -> None:
        super().__init__()
        self.act = self.prim()

    def construct(self, x: Tensor) -> Tensor:
        return self.act(x)


class ReLU(_Activation):
    prim = ops.ReLU


class Sigmoid(_Activation):
    prim = ops.Sigmoid


class Tanh(_Activation):
    prim = ops.Tanh


class ReLU6(_Activation):
    prim = ops.ReLU6


class HSwish(_Activation):
    prim = ops.HSwish


class HSigmoid(_Activation):
    prim = ops.HSigmoid


class LeakyReLU(Cell):
    """``max(alpha * x, x)`` (``min`` for alpha > 1), as ``ops.leaky_relu``."""

    def __init__(self, alpha: float = 0.2):
        super().__init__()
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise InvalidParamError(f"LeakyReLU: alpha={alpha!r} must be a float or an int")
        self.alpha = alpha

    def construct(self, x: Tensor) -> Tensor:
        return ops.leaky_relu(x, self.alpha)


class Identity(Cell):
    """Returns its input unchanged (no op is recorded)."""

    def construct(self, x: Any) -> Any:
        return x


class ClipByNorm(Cell):
    """MindSpore's nn.ClipByNorm (deprecated in 2.8, still what BERT, GPT and Transformer in the zoo call):
    ``x * clip_norm / max(L2(x), clip_norm)`` in float32, the L2 norm over ``axis`` (None: all dimensions)
    kept broadcastable, so ``x`` is unchanged where its norm is at most ``clip_norm``."""

    def __init__(self, axis: int | tuple[int, ...] | None = None):
        super().__init__()
        if isinstance(axis, bool) or not (axis is None or isinstance(axis, int) or
                                          (isinstance(axis, tuple) and all(isinstance(a, int) for a in axis))):
            raise InvalidParamError(f"ClipByNorm: axis={axis!r} must be None, an int or a tuple of ints")
        self.axis = () if axis is None else axis
        self.reduce_sum = ops.ReduceSum(keep_dims=True)

    def construct(self, x: Tensor, clip_norm: Tensor) -> Tensor:
        if x.dtype not in (mstype.float32, mstype.float16):
            raise InvalidParamError(f"ClipByNorm: x must be float32 or float16, got {x.dtype}")
        x = ops.cast(x, mstype.float32)
        clip = ops.cast(clip_norm, mstype.float32)
        return x * clip / ops.maximum(ops.sqrt(self.reduce_sum(ops.square(x), self.axis)), clip)


class GELU(_Activation):
    prim = ops.GeLU

    def __init__(self, approximate: bool = True):
        if not approximate:
            raise InvalidParamError("GELU: approximate=False (erf form) is not supported; GeLU uses tanh")
        super().__init__()


class Softmax(Cell):
    def __init__(self, axis: int = -1):
        super().__init__()
        self.softmax = ops.Softmax(axis)

    def construct(self, x: Tensor) -> Tensor:
        return self.softmax(x)


class LogSoftmax(Cell):
    def __init__(self, axis: int = -1):
        super().__init__()
        self.log_softmax = ops.LogSoftmax(axis)

    def construct(self, x: Tensor) -> Tensor:
        return self.log_softmax(x)


class Flatten(Cell):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x: Tensor) -> Tensor:
        return ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)


# ----------------------------------------------------------------------------------------- containers

class SequentialCell(Cell):
    """Cells applied in order; children are named "0", "1", ... (or by an OrderedDict's keys)."""

    def __init__(self, *args: Any):
        super().__init__()
        items = args[0] if len(args) == 1 and isinstance(args[0], (list, OrderedDict)) else args
        pairs = items.items() if isinstance(items, OrderedDict) else ((str(i), c) for i, c in enumerate(items))
        for name, cell in pairs:
            self.insert_child_to_cell(name, cell)

    def append(self, cell: Cell) -> "SequentialCell":
        self.insert_child_to_cell(str(len(self._cells)), cell)
        return self

    def __getitem__(self, index: int) -> Cell:
        return list(self._cells.values())[index]

    def __len__(self) -> int:
        return len(self._cells)

    def construct(self, x: Any) -> Any:
        for cell in self._cells.values():
            x = cell(x)
        return x


class CellList(Cell):
    """A list of cells whose parameters are registered; iterate it inside ``construct``."""

    def __init__(self, args: Iterable[Cell] | None = None):
        super().__init__()
        for cell in args or ():
            self.append(cell)

    def append(self, cell: Cell) -> None:
        self.insert_child_to_cell(str(len(self._cells)), cell)

    def extend(self, cells: Iterable[Cell]) -> "CellList":
        for cell in cells:
            self.append(cell)
        return self

    def __getitem__(self, index: int) -> Cell:
        return list(self._cells.values())[index]

    def __iter__(self) -> Iterator[Cell]:
        return iter(list(self._cells.values()))

    def __len__(self) -> int:
        return len(self._cells)

    def construct(self, *args: Any) -> Any:
        raise InvalidParamError("CellList is a container and cannot be called; call its cells")
