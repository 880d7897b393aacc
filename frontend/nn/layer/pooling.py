"""``mindspore.nn.layer.pooling``: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d and
AdaptiveMaxPool1d/2d/3d, where MindSpore defines them."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ... import ops
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.pooling has it)
from ...common.tensor import Tensor
from ...ops.function.nn_func import _pool3d
from ...ops.operations.nn_ops import _pad6, _triple
from ..cell import Cell

__all__ = ["AvgPool2d", "MaxPool2d", "MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool3d", "MaxPool3d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d"]


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



def _window(layer: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParamError(f"{layer}: {name}={value!r} must be an int >= 1")
    return value


class _Pool1d(Cell):
    """1-D pooling of (N, C, L) or (C, L), as MindSpore builds it: the 2-D pool with window (1, k)
    between ExpandDims and Squeeze. ``padding`` (pad_mode 'pad') pads both ends."""

    prim: type = ops.MaxPool

    def __init__(self, kernel_size: int, stride: int, pad_mode: str, padding: int) -> None:
        super().__init__()
        layer = type(self).__name__
        self.kernel_size, self.stride = _window(layer, "kernel_size", kernel_size), _window(layer, "stride", stride)
        mode = str(pad_mode).lower()
        if mode not in ("valid", "same", "pad"):
            raise InvalidParamError(f"{layer}: pad_mode={pad_mode!r} must be 'valid', 'same' or 'pad'")
        if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0 or (padding and mode != "pad"):
            raise InvalidParamError(f"{layer}: padding={padding!r} must be an int >= 0, nonzero only with pad_mode "
                                    f"'pad'")
        self.pad_mode, self.padding = mode, padding
        self.pool = self.prim((1, kernel_size), (1, stride), "same" if mode == "same" else "valid")

    def _padded(self, x: Tensor) -> Tensor:
        return x

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim not in (2, 3):
            raise InvalidParamError(f"{type(self).__name__}: input must have rank 2 or 3, got shape {x.shape}")
        batched = x if x.ndim == 3 else ops.expand_dims(x, 0)
        out = ops.squeeze(self.pool(ops.expand_dims(self._padded(batched), 2)), 2)
        return out if x.ndim == 3 else ops.squeeze(out, 0)

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode.upper()}"


class MaxPool1d(_Pool1d):
    """Max over windows of ``kernel_size``; ``pad_mode`` 'valid' or 'same' (dilation, padding, ceil_mode
    and return_indices at their defaults)."""

    prim = ops.MaxPool

    def __init__(self, kernel_size: int = 1, stride: int = 1, pad_mode: str = "valid", padding: int = 0,
                 dilation: int = 1, return_indices: bool = False, ceil_mode: bool = False):
        for name, value, default in (("padding", padding, 0), ("dilation", dilation, 1),
                                     ("return_indices", return_indices, False), ("ceil_mode", ceil_mode, False)):
            if value != default:
                raise InvalidParamError(f"MaxPool1d: {name}={value!r} is not supported; leave it at {default!r}")
        super().__init__(kernel_size, stride, pad_mode, padding)


class AvgPool1d(_Pool1d):
    """Mean over windows of ``kernel_size``; with pad_mode 'pad', ``padding`` zeros at both ends are
    counted (``count_include_pad=True``, MindSpore's default; ceil_mode False)."""

    prim = ops.AvgPool

    def __init__(self, kernel_size: int = 1, stride: int = 1, pad_mode: str = "valid", padding: int = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True):
        if ceil_mode is not False or count_include_pad is not True:
            raise InvalidParamError(f"AvgPool1d: ceil_mode={ceil_mode!r}, count_include_pad={count_include_pad!r} "
                                    f"are not supported; leave them False and True")
        super().__init__(kernel_size, stride, pad_mode, padding)

    def _padded(self, x: Tensor) -> Tensor:
        return ops.pad(x, (self.padding, self.padding)) if self.padding else x


class _AdaptiveAvgPool(Cell):
    fn: Any = None

    def __init__(self, output_size: Any):
        super().__init__()
        self.output_size = output_size

    def construct(self, x: Tensor) -> Tensor:
        return type(self).fn(x, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPool):
    fn = staticmethod(ops.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPool):
    fn = staticmethod(ops.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPool):
    fn = staticmethod(ops.adaptive_avg_pool3d)


def _same_pads(kernel: tuple[int, ...], stride: tuple[int, ...], sizes: tuple[int, ...]) -> tuple[int, ...]:
    """'same' pads (head, tail per axis) for output ceil(in / stride): the total split smaller half first."""
    pads = []
    for k, s, size in zip(kernel, stride, sizes):
        total = max((-(-size // s) - 1) * s + k - size, 0)
        pads += [total // 2, total - total // 2]
    return tuple(pads)


class _Pool3d(Cell):
    """Shared argument handling of MaxPool3d / AvgPool3d: ``pad_mode`` 'valid', 'same' or 'pad' (then
    ``padding`` is an int or (head, tail, top, bottom, left, right))."""

    def _setup(self, kernel_size: Any, stride: Any, pad_mode: str, padding: Any) -> None:
        layer = type(self).__name__
        self.kernel_size = _triple(layer, "kernel_size", kernel_size)
        self.stride = _triple(layer, "stride", stride)
        self.pad_mode = str(pad_mode).lower()
        if self.pad_mode not in ("valid", "same", "pad"):
            raise InvalidParamError(f"{layer}: pad_mode={pad_mode!r} must be 'valid', 'same' or 'pad'")
        if isinstance(padding, int) and not isinstance(padding, bool):
            padding = (padding,) * 6
        self.padding = _pad6(layer, padding)
        if self.pad_mode != "pad" and any(self.padding):
            raise InvalidParamError(f"{layer}: padding={padding!r} must be 0 unless pad_mode is 'pad'")

    def _pads(self, x: Tensor) -> tuple[int, ...]:
        if self.pad_mode == "same":
            return _same_pads(self.kernel_size, self.stride, x.shape[-3:])
        return self.padding

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode.upper()}"


class MaxPool3d(_Pool3d):
    """Max over (kd, kh, kw) windows of (N, C, D, H, W) or (C, D, H, W); pads are -inf (dilation 1,
    return_indices and ceil_mode False are served)."""

    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid", padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        for name, value, default in (("dilation", dilation, 1), ("return_indices", return_indices, False),
                                     ("ceil_mode", ceil_mode, False)):
            if value != default and value != (1, 1, 1):
                raise InvalidParamError(f"MaxPool3d: {name}={value!r} is not supported; leave it at {default!r}")
        self._setup(kernel_size, stride, pad_mode, padding)

    def construct(self, x: Tensor) -> Tensor:
        return _pool3d("MaxPool3d", x, self.kernel_size, self.stride, self._pads(x), True)


class AvgPool3d(_Pool3d):
    """Mean over (kd, kh, kw) windows of (N, C, D, H, W) or (C, D, H, W); 'pad' zeros are counted
    (count_include_pad True); ``divisor_override`` divides the window sum instead. 'same' and
    ceil_mode are not served."""

    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid", padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None):
        super().__init__()
        if ceil_mode or count_include_pad is not True:
            raise InvalidParamError(f"AvgPool3d: ceil_mode={ceil_mode!r}, count_include_pad={count_include_pad!r} "
                                    f"are not supported; leave them False and True")
        if str(pad_mode).lower() == "same":
            raise InvalidParamError("AvgPool3d: pad_mode='same' is not supported; use 'valid' or 'pad'")
        self._setup(kernel_size, stride, pad_mode, padding)
        self.divisor_override = divisor_override

    def construct(self, x: Tensor) -> Tensor:
        return ops.avg_pool3d(x, self.kernel_size, self.stride, self.padding,
                              divisor_override=self.divisor_override or 0)


class AdaptiveMaxPool1d(Cell):
    """``ops.adaptive_max_pool1d``: the max of each of ``output_size`` adaptive windows of the last axis."""

    def __init__(self, output_size: int):
        super().__init__()
        self.output_size = output_size

    def construct(self, input: Tensor) -> Tensor:
        return ops.adaptive_max_pool1d(input, self.output_size)


class AdaptiveMaxPool2d(Cell):
    """``ops.adaptive_max_pool2d`` of the last two axes (return_indices False is served)."""

    def __init__(self, output_size: Any, return_indices: bool = False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def construct(self, input: Tensor) -> Tensor:
        return ops.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """``ops.adaptive_max_pool3d`` of the last three axes (return_indices False is served)."""

    def construct(self, input: Tensor) -> Tensor:
        return ops.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPool(Cell):
    """LPPool1d / LPPool2d: ``ops.lp_pool1d`` / ``ops.lp_pool2d`` with the layer's arguments."""
    fn: Any = None

    def __init__(self, norm_type: Any, kernel_size: Any, stride: Any = None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def construct(self, x: Tensor) -> Tensor:
        return type(self).fn(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool1d(_LPPool):
    fn = staticmethod(ops.lp_pool1d)


class LPPool2d(_LPPool):
    fn = staticmethod(ops.lp_pool2d)


class _MaxUnpool(Cell):
    """MaxUnpool1d/2d/3d: the functional ``max_unpool*d``; ``output_size`` (a non-empty tuple) at call."""
    fn: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def construct(self, x: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        layer = type(self).__name__
        if output_size is not None and not isinstance(output_size, tuple):
            raise ValueError(f"For {layer}, output_size must be tuple, but type {type(output_size)}.")
        if output_size is not None and not output_size:
            raise ValueError(f"For {layer}, the length of output_size must be positive, but got 0.")
        return type(self).fn(x, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpool):
    fn = staticmethod(ops.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    fn = staticmethod(ops.max_unpool2d)


class MaxUnpool3d(_MaxUnpool):
    fn = staticmethod(ops.max_unpool3d)
