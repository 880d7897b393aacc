"""``mindspore.nn.layer.combined``: Conv2dBnAct and DenseBnAct, a layer followed by an optional BatchNorm
and activation, where MindSpore defines them (child cells ``conv``/``dense``, ``batchnorm``, ``activation``:
the names MindSpore's checkpoints use)."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ...common.tensor import Tensor
from ...ops import Primitive
from ..cell import Cell
from .activation import LeakyReLU, get_activation
from .basic import Dense
from .conv import Conv2d
from .normalization import BatchNorm1d, BatchNorm2d

__all__ = ["Conv2dBnAct", "DenseBnAct"]


def _activation(layer: str, activation: Any, alpha: float) -> Any:
    """MindSpore's rule: 'leakyrelu' takes ``alpha``; another name is get_activation's; or a Cell/Primitive."""
    if activation == "leakyrelu":
        return LeakyReLU(alpha)
    act = get_activation(activation) if isinstance(activation, str) else activation
    if act is not None and not isinstance(act, (Cell, Primitive)):
        raise InvalidParamError(f"{layer}: activation must be a str, a Cell or a Primitive, got "
                                f"{type(activation).__name__}")
    return act


def _flag(layer: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidParamError(f"{layer}: {name}={value!r} must be a bool")
    return value


class _BnAct(Cell):
    """The shared construct: the layer, then BatchNorm when ``has_bn``, then the activation."""

    def construct(self, x: Tensor) -> Tensor:
        x = self._layer()(x)
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x


class Conv2dBnAct(_BnAct):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, pad_mode: str = "same",
                 padding: Any = 0, dilation: Any = 1, group: int = 1, has_bias: bool = False,
                 weight_init: Any = "normal", bias_init: Any = "zeros", has_bn: bool = False, momentum: float = 0.997,
                 eps: float = 1e-5, activation: Any = None, alpha: float = 0.2, after_fake: bool = True):
        super().__init__()
        self.conv = Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride, pad_mode=pad_mode,
                           padding=padding, dilation=dilation, group=group, has_bias=has_bias,
                           weight_init=weight_init, bias_init=bias_init)
        self.has_bn = _flag("Conv2dBnAct", "has_bn", has_bn)
        self.has_act = activation is not None
        self.after_fake = _flag("Conv2dBnAct", "after_fake", after_fake)
        if has_bn:
            self.batchnorm = BatchNorm2d(out_channels, eps, momentum)
        self.activation = _activation("Conv2dBnAct", activation, alpha)

    def _layer(self) -> Cell:
        return self.conv


class DenseBnAct(_BnAct):
    def __init__(self, in_channels: int, out_channels: int, weight_init: Any = "normal", bias_init: Any = "zeros",
                 has_bias: bool = True, has_bn: bool = False, momentum: float = 0.9, eps: float = 1e-5,
                 activation: Any = None, alpha: float = 0.2, after_fake: bool = True):
        super().__init__()
        self.dense = Dense(in_channels, out_channels, weight_init, bias_init, has_bias)
        self.has_bn = _flag("DenseBnAct", "has_bn", has_bn)
        self.has_act = activation is not None
        self.after_fake = _flag("DenseBnAct", "after_fake", after_fake)
        if has_bn:
            self.batchnorm = BatchNorm1d(out_channels, eps, momentum)
        self.activation = _activation("DenseBnAct", activation, alpha)

    def _layer(self) -> Cell:
        return self.dense
