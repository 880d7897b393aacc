"""``mindspore.mint.nn.layer.conv``: mint's Conv1d/2d/3d and ConvTranspose2d, PyTorch's parameters:
weight (out, in / groups, *kernel) (transposed: (in, out / groups, *kernel)) initialised
HeUniform(sqrt(5)), bias Uniform(1 / sqrt(fan_in)), as MindSpore's ``_Conv``; each Cell is the mint
functional convolution of its rank."""
from __future__ import annotations

import math
from typing import Any

from ascendemu.errors import InvalidParamError

from ....common import dtype as mstype
from ....common.initializer import HeUniform, Uniform, initializer
from ....common.parameter import Parameter
from ....common.tensor import Tensor
from ....nn.cell import Cell
from .. import functional as F

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d"]

PADDING_MODES = ("zeros", "reflect", "replicate", "circular")   # mint's padding_mode values
PADDING_STRINGS = ("same", "valid")


def _seq(name: str, value: Any, n: int) -> tuple[int, ...]:
    """An int or a sequence (of 1 or ``n`` ints) as ``n`` ints."""
    out = (value,) * n if isinstance(value, int) else tuple(value)
    if len(out) == 1:
        out = out * n
    if len(out) != n or not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        raise InvalidParamError(f"{name}={value!r} must be an int or a sequence of {n} ints")
    return out


class _ConvNd(Cell):
    """The shared part: checks, parameters and ``extend_repr``. ``dims``: the spatial rank."""

    dims = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, groups: int, bias: bool, padding_mode: str, dtype: Any,
                 output_padding: Any = 0):
        super().__init__()
        name, n = type(self).__name__, self.dims
        for what, value, low in (("in_channels", in_channels, 0), ("out_channels", out_channels, 0),
                                 ("groups", groups, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"For '{name}', '{what}' must be an int >= {low}, but got {value!r}.")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups.")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups.")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _seq("kernel_size", kernel_size, n), _seq("stride", stride, n)
        self.dilation = _seq("dilation", dilation, n)
        self.output_padding = _seq("output_padding", output_padding, n)
        if isinstance(padding, str):
            if padding not in PADDING_STRINGS:
                raise ValueError(f"The value of 'padding' must be one of '{set(PADDING_STRINGS)}', but got {padding}.")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _seq("padding", padding, n)
        if padding_mode not in PADDING_MODES:
            raise ValueError(f"The value of 'padding_mode' must be one of '{set(PADDING_MODES)}', but got "
                             f"{padding_mode}.")
        self.padding_mode = padding_mode
        for what, values in (("kernel_size", self.kernel_size), ("stride", self.stride), ("dilation", self.dilation)):
            if any(v < 1 for v in values):
                raise ValueError(f"For '{name}', the '{what} item' must be a positive int, but got {values}.")
        dtype = mstype.float32 if dtype is None else dtype
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(initializer(HeUniform(math.sqrt(5)), shape, dtype), name="weight")
        self.bias = None
        if not isinstance(bias, bool):
            raise TypeError(f"For '{name}', the type of 'bias' must be bool, but got {type(bias).__name__}.")
        if bias:
            fan_in = shape[1] * math.prod(self.kernel_size)
            init = Uniform(1 / math.sqrt(fan_in)) if fan_in else "zeros"
            self.bias = Parameter(initializer(init, (out_channels,), dtype), name="bias")

    def _padded(self, input: Tensor) -> tuple[Tensor, Any]:
        """The input and the padding the convolution takes: a non-'zeros' ``padding_mode`` pads the input
        itself (MindSpore's reversed padding: the last dim first, 'same' split as (total // 2, rest))."""
        if self.padding_mode == "zeros":
            return input, self.padding
        if isinstance(self.padding, str):
            pads = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1) if self.padding == "same" else 0
                pads += [total // 2, total - total // 2]
        else:
            pads = [p for p in reversed(self.padding) for _ in range(2)]
        return F.pad(input, tuple(pads), mode=self.padding_mode), 0

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, groups={self.groups}, bias={self.bias is not None}")


class Conv1d(_ConvNd):
    dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 dtype: Any = None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, dtype)

    def construct(self, input: Tensor) -> Tensor:
        x, padding = self._padded(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv2d(Conv1d):
    dims = 2

    def construct(self, input: Tensor) -> Tensor:
        x, padding = self._padded(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv3d(Conv1d):
    dims = 3

    def construct(self, input: Tensor) -> Tensor:
        x, padding = self._padded(input)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    """``mint.nn.functional.conv_transpose2d``; ``construct(input, output_size=None)``: an
    ``output_size`` picks the output_padding that reaches it (within one stride of the smallest)."""

    dims = 2
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", dtype: Any = None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise InvalidParamError(f"ConvTranspose2d: padding={padding!r} must be an int or a pair of ints")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, dtype, output_padding)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        if output_size is None:
            return self.output_padding
        size = tuple(output_size)[-2:]
        if len(tuple(output_size)) not in (2, input.ndim):
            raise ValueError(f"ConvTranspose2D: for {input.ndim}D input, output_size must have 2 or {input.ndim} "
                             f"elements (got {len(tuple(output_size))})")
        out = []
        for d in range(2):
            low = ((input.shape[input.ndim - 2 + d] - 1) * self.stride[d] - 2 * self.padding[d]
                   + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            if not low <= size[d] <= low + self.stride[d] - 1:
                raise ValueError(f"requested an output size of {size}, but valid sizes range from the smallest "
                                 f"{low} to {low + self.stride[d] - 1} in dim {d} (for an input of {input.shape})")
            out.append(size[d] - low)
        return tuple(out)

    def construct(self, input: Tensor, output_size: Any = None) -> Tensor:
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)
