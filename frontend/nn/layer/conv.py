"""``mindspore.nn.layer.conv``: Conv1d, Conv2d, Conv3d and Conv1dTranspose, Conv2dTranspose, where MindSpore
defines them."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Initializer, Uniform
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops.operations.nn_ops import _pad6, _triple
from ..cell import Cell
from .basic import _init_param, _positive_int

__all__ = ["Conv2d", "Conv2dTranspose", "Conv1d", "Conv3d", "Conv1dTranspose", "Conv3dTranspose"]


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


class Conv3d(Cell):
    """3-D convolution of (N, C, D, H, W): ``ops.Conv3D`` (composed from Conv2D) with a weight of shape
    (out_channels, in_channels // group, kd, kh, kw), plus a bias per output channel when
    ``has_bias``; ``padding`` is an int or (head, tail, top, bottom, left, right)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 pad_mode: str = "same", padding: Any = 0, dilation: Any = 1, group: int = 1,
                 has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 data_format: str = "NCDHW", dtype: Any = mstype.float32):
        super().__init__()
        name = "Conv3d"
        self.in_channels = _positive_int(name, "in_channels", in_channels)
        self.out_channels = _positive_int(name, "out_channels", out_channels)
        self.group = _positive_int(name, "group", group)
        if in_channels % group or out_channels % group:
            raise InvalidParamError(f"{name}: in_channels={in_channels} and out_channels={out_channels} "
                                    f"must be divisible by group={group}")
        if pad_mode not in ("same", "valid", "pad"):
            raise InvalidParamError(f"{name}: pad_mode={pad_mode!r} must be 'same', 'valid' or 'pad'")
        self.conv3d = ops.Conv3D(out_channels, kernel_size, pad_mode=pad_mode, pad=padding, stride=stride,
                                 dilation=dilation, group=group, data_format=data_format)
        kd, kh, kw = _triple(name, "kernel_size", kernel_size)
        self.kernel_size, self.stride = (kd, kh, kw), _triple(name, "stride", stride)
        self.dilation = _triple(name, "dilation", dilation)
        self.padding = _pad6(name, padding)
        if pad_mode != "pad" and any(self.padding):
            raise InvalidParamError(f"{name}: padding={padding!r} must be 0 unless pad_mode is 'pad'")
        self.pad_mode, self.has_bias, self.data_format = pad_mode, bool(has_bias), data_format
        fan_in = in_channels // group * kd * kh * kw
        self.weight = Parameter(_init_param(name, "weight_init", weight_init, HeUniform(math.sqrt(5)),
                                            (out_channels, in_channels // group, kd, kh, kw), dtype), name="weight")
        if self.has_bias:
            self.bias = Parameter(_init_param(name, "bias_init", bias_init, Uniform(1 / math.sqrt(fan_in)),
                                              (out_channels,), dtype), name="bias")
        else:
            self.bias = None

    def construct(self, x: Tensor) -> Tensor:
        out = self.conv3d(x, self.weight)
        if self.has_bias:
            out = out + ops.reshape(self.bias, (-1, 1, 1, 1))
        return out

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}")


class Conv1dTranspose(Cell):
    """Transposed 1-D convolution of (N, C, L), as MindSpore builds it: a Conv2dTranspose-style
    ``Conv2DTranspose`` with kernel (1, k) between ExpandDims(x, 2) and Squeeze(2); the weight is
    (in_channels, out_channels // group, 1, k)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 pad_mode: str = "same", padding: int = 0, dilation: int = 1, group: int = 1,
                 has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 dtype: Any = mstype.float32):
        super().__init__()
        name = "Conv1dTranspose"
        for arg, value in (("in_channels", in_channels), ("out_channels", out_channels), ("kernel_size", kernel_size),
                           ("stride", stride), ("dilation", dilation), ("group", group)):
            _positive_int(name, arg, value)
        if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0:
            raise InvalidParamError(f"{name}: padding={padding!r} must be an int >= 0")
        if pad_mode not in ("same", "valid", "pad"):
            raise InvalidParamError(f"{name}: pad_mode={pad_mode!r} must be 'same', 'valid' or 'pad'")
        if pad_mode != "pad" and padding:
            raise InvalidParamError(f"{name}: padding={padding!r} must be 0 unless pad_mode is 'pad'")
        if in_channels % group or out_channels % group:
            raise InvalidParamError(f"{name}: in_channels={in_channels} and out_channels={out_channels} "
                                    f"must be divisible by group={group}")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel_size
        self.stride, self.pad_mode, self.padding, self.dilation = stride, pad_mode, padding, dilation
        self.group, self.has_bias = group, bool(has_bias)
        shape = (in_channels, out_channels // group, 1, kernel_size)
        self.weight = Parameter(_init_param(name, "weight_init", weight_init, HeUniform(math.sqrt(5)), shape, dtype),
                                name="weight")
        if self.has_bias:
            bound = 1 / math.sqrt(shape[1] * kernel_size)
            self.bias = Parameter(_init_param(name, "bias_init", bias_init, Uniform(bound), (out_channels,), dtype),
                                  name="bias")
            self.bias_add = ops.BiasAdd()
        else:
            self.bias = None
        self.conv2d_transpose = ops.Conv2DTranspose(in_channels, (1, kernel_size), pad_mode=pad_mode,
                                                    pad=(0, 0, padding, padding), stride=(1, stride),
                                                    dilation=(1, dilation), group=group)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim != 3:
            raise InvalidParamError(f"Conv1dTranspose: input must have rank 3 (N, C, L), got shape {x.shape}")
        n, _, length = x.shape
        size = (n, self.out_channels, 1, _deconv_length(self.pad_mode, length, self.kernel_size, self.stride,
                                                        self.dilation, 2 * self.padding))
        out = self.conv2d_transpose(ops.expand_dims(x, 2), self.weight, size)
        if self.has_bias:
            out = self.bias_add(out, self.bias)
        return ops.squeeze(out, 2)

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}")


class Conv3dTranspose(Cell):
    """Transposed 3-D convolution of (N, C, D, H, W): ``ops.Conv3DTranspose`` (composed from Conv3D) with a
    weight of shape (in_channels, out_channels // group, kd, kh, kw), plus a bias per output channel when
    ``has_bias``; 'same' gives input * stride, 'valid' (input - 1) * stride + dilation * (k - 1) + 1, 'pad'
    that minus ``padding`` (an int or (head, tail, top, bottom, left, right)); ``output_padding`` adds rows
    at the far end (sizes measured against MindSpore 2.10 CPU)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 pad_mode: str = "same", padding: Any = 0, dilation: Any = 1, group: int = 1,
                 output_padding: Any = 0, has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 data_format: str = "NCDHW", dtype: Any = mstype.float32):
        super().__init__()
        name = "Conv3dTranspose"
        self.in_channels = _positive_int(name, "in_channels", in_channels)
        self.out_channels = _positive_int(name, "out_channels", out_channels)
        self.group = _positive_int(name, "group", group)
        if in_channels % group or out_channels % group:
            raise InvalidParamError(f"{name}: in_channels={in_channels} and out_channels={out_channels} "
                                    f"must be divisible by group={group}")
        if pad_mode not in ("same", "valid", "pad"):
            raise InvalidParamError(f"{name}: pad_mode={pad_mode!r} must be 'same', 'valid' or 'pad'")
        kd, kh, kw = _triple(name, "kernel_size", kernel_size)
        self.kernel_size, self.stride = (kd, kh, kw), _triple(name, "stride", stride)
        self.dilation, self.padding = _triple(name, "dilation", dilation), _pad6(name, padding)
        if pad_mode != "pad" and any(self.padding):
            raise InvalidParamError(f"{name}: padding={padding!r} must be 0 unless pad_mode is 'pad'")
        self.output_padding = output_padding
        self.pad_mode, self.has_bias, self.data_format = pad_mode, bool(has_bias), data_format
        self.conv3d_transpose = ops.Conv3DTranspose(in_channels, out_channels, self.kernel_size, pad_mode=pad_mode,
                                                    pad=self.padding, stride=self.stride, dilation=self.dilation,
                                                    group=group, output_padding=output_padding,
                                                    data_format=data_format)
        shape = (in_channels, out_channels // group, kd, kh, kw)
        self.weight = Parameter(_init_param(name, "weight_init", weight_init, HeUniform(math.sqrt(5)), shape, dtype),
                                name="weight")
        if self.has_bias:
            bound = 1 / math.sqrt(shape[1] * kd * kh * kw)
            self.bias = Parameter(_init_param(name, "bias_init", bias_init, Uniform(bound), (out_channels,), dtype),
                                  name="bias")
        else:
            self.bias = None

    def construct(self, x: Tensor) -> Tensor:
        out = self.conv3d_transpose(x, self.weight)
        if self.has_bias:
            out = out + ops.reshape(self.bias, (-1, 1, 1, 1))
        return out

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}")
