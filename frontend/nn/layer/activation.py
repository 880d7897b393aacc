"""``mindspore.nn.layer.activation``: the activation cells (ReLU, Sigmoid, Tanh, ReLU6, HSwish, HSigmoid,
LeakyReLU, GELU, Softmax, LogSoftmax) and ``get_activation``, where MindSpore defines them."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ["Softmax", "LogSoftmax", "ReLU", "ReLU6", "Tanh", "GELU", "Sigmoid", "HSwish", "HSigmoid", "LeakyReLU",
           "get_activation"]


def get_activation(name: Any) -> Cell | None:
    if name is None or isinstance(name, Cell) or isinstance(name, ops.Primitive):
        return name
    table = {"relu": ReLU, "gelu": GELU, "sigmoid": Sigmoid, "tanh": Tanh, "softmax": Softmax,
             "logsoftmax": LogSoftmax, "relu6": ReLU6, "hswish": HSwish, "hsigmoid": HSigmoid,
             "leakyrelu": LeakyReLU}
    if not isinstance(name, str) or name.lower() not in table:
        raise InvalidParamError(f"activation {name!r} is not supported; use one of {sorted(table)}")
    return table[name.lower()]()



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
