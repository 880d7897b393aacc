"""``mindspore.nn.layer.activation``: the activation cells (ReLU, Sigmoid, Tanh, ReLU6, HSwish, HSigmoid,
LeakyReLU, GELU, Softmax, LogSoftmax) and ``get_activation``, where MindSpore defines them."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ["Softmax", "LogSoftmax", "ReLU", "ReLU6", "Tanh", "GELU", "Sigmoid", "HSwish", "HSigmoid", "LeakyReLU",
           "get_activation", "PReLU", "ELU", "SiLU", "LogSigmoid", "Hardtanh", "SeLU", "CELU", "GLU", "HShrink",
           "SoftShrink", "Softmin", "Softsign", "Tanhshrink", "Threshold", "Mish", "Softmax2d", "FastGelu", "LRN",
           "PReLUExt"]


def get_activation(name: Any) -> Cell | None:
    if name is None or isinstance(name, Cell) or isinstance(name, ops.Primitive):
        return name
    table = {"relu": ReLU, "gelu": GELU, "sigmoid": Sigmoid, "tanh": Tanh, "softmax": Softmax,
             "logsoftmax": LogSoftmax, "relu6": ReLU6, "hswish": HSwish, "hsigmoid": HSigmoid,
             "leakyrelu": LeakyReLU, "prelu": PReLU, "elu": ELU, "silu": SiLU, "logsigmoid": LogSigmoid,
             "hardtanh": Hardtanh, "selu": SeLU, "celu": CELU, "hshrink": HShrink, "softshrink": SoftShrink,
             "softmin": Softmin, "softsign": Softsign, "tanhshrink": Tanhshrink, "mish": Mish,
             "fast_gelu": FastGelu}
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



class GELU(Cell):
    """``ops.gelu``: the GeLU primitive (tanh form) by default, the exact erf form with
    ``approximate=False`` (MindSpore's composition, as its MINDIR files show)."""

    def __init__(self, approximate: bool = True):
        super().__init__()
        if not isinstance(approximate, bool):
            raise TypeError(f"For 'GELU', the type of 'approximate' should be 'bool', but got "
                            f"'{type(approximate).__name__}'.")
        self.approximate = "tanh" if approximate else "none"

    def construct(self, x: Tensor) -> Tensor:
        return ops.gelu(x, approximate=self.approximate)


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


class PReLU(Cell):
    """``x`` where ``x > 0``, else ``w * x``, one learnable slope per channel (``channel`` of them, or one
    shared). ``w`` is a float (every slope), a list of ``channel`` floats or a (channel,) Tensor.
    The Parameter is named ``a`` as in MindSpore; inside a network the attribute path (``...w``) replaces
    the name (Cell._adopt), which is what checkpoints key it by."""

    def __init__(self, channel: int = 1, w: Any = 0.25):
        super().__init__()
        if isinstance(channel, bool) or not isinstance(channel, int) or channel < 1:
            raise InvalidParamError(f"PReLU: channel={channel!r} must be an int >= 1")
        if isinstance(w, (float, np.float32)):
            w = Tensor(np.full((channel,), w, np.float32))
        elif isinstance(w, list):
            if len(w) != channel or not all(isinstance(v, (float, np.float32)) for v in w):
                raise InvalidParamError(f"PReLU: w={w!r} must be a list of {channel} floats")
            w = Tensor(np.array(w, np.float32))
        elif isinstance(w, Tensor):
            if w.dtype not in (mstype.float16, mstype.float32) or w.shape != (channel,):
                raise InvalidParamError(f"PReLU: a Tensor w must be float16 or float32 of shape ({channel},), got "
                                        f"{w.dtype} {w.shape}")
        else:
            raise InvalidParamError(f"PReLU: w must be a float, a list or a Tensor, got {type(w).__name__}")
        self.w = Parameter(w, name="a")
        self.prelu = ops.PReLU()

    def construct(self, x: Tensor) -> Tensor:
        return self.prelu(x, ops.cast(self.w, x.dtype))


class _Unary(Cell):
    """A cell applying ``fn(x, *args)``: the activations MindSpore writes as one functional call."""

    fn: Any = None

    def __init__(self, *args: Any) -> None:
        super().__init__()
        self.args = args

    def construct(self, x: Tensor) -> Tensor:
        return type(self).fn(x, *self.args)


class ELU(_Unary):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``; MindSpore's cell serves alpha 1.0 only."""

    fn = staticmethod(ops.elu)

    def __init__(self, alpha: float = 1.0):
        if alpha != 1.0:
            raise InvalidParamError(f"ELU: alpha={alpha!r} must be 1.0 (MindSpore's ELU cell supports only 1.0)")
        super().__init__(float(alpha))


class SiLU(_Unary):
    fn = staticmethod(ops.silu)


class LogSigmoid(_Unary):
    fn = staticmethod(ops.logsigmoid)


class SeLU(_Unary):
    fn = staticmethod(ops.selu)


class Mish(_Unary):
    fn = staticmethod(ops.mish)


class Softsign(_Unary):
    fn = staticmethod(ops.softsign)


class Tanhshrink(Cell):
    """``x - tanh(x)``."""

    def construct(self, x: Tensor) -> Tensor:
        return x - ops.tanh(x)


class FastGelu(Cell):
    """``x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))``, MindSpore's fast GeLU approximation."""

    def construct(self, x: Tensor) -> Tensor:
        a = ops.abs(x)
        return x / (ops.exp(a * -1.702) + 1) * ops.exp((x - a) * 0.851)


class Hardtanh(_Unary):
    fn = staticmethod(ops.hardtanh)

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        if min_val >= max_val:
            raise InvalidParamError(f"Hardtanh: min_val={min_val!r} must be less than max_val={max_val!r}")
        super().__init__(min_val, max_val)


class CELU(_Unary):
    fn = staticmethod(ops.celu)

    def __init__(self, alpha: float = 1.0):
        super().__init__(alpha)


class GLU(_Unary):
    fn = staticmethod(ops.glu)

    def __init__(self, axis: int = -1):
        super().__init__(axis)


class HShrink(_Unary):
    fn = staticmethod(ops.hardshrink)

    def __init__(self, lambd: float = 0.5):
        super().__init__(lambd)


class SoftShrink(_Unary):
    fn = staticmethod(ops.softshrink)

    def __init__(self, lambd: float = 0.5):
        super().__init__(lambd)


class Softmin(_Unary):
    fn = staticmethod(ops.softmin)

    def __init__(self, axis: int = -1):
        super().__init__(axis)


class Threshold(_Unary):
    """x where ``x > threshold``, else ``value``."""

    fn = staticmethod(ops.threshold)

    def __init__(self, threshold: float, value: float):
        for name, v in (("threshold", threshold), ("value", value)):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InvalidParamError(f"Threshold: {name}={v!r} must be a float or an int")
        super().__init__(threshold, value)


class Softmax2d(Cell):
    """Softmax over the channel axis of (C, H, W) or (N, C, H, W) (axis -3)."""

    def __init__(self) -> None:
        super().__init__()
        self.softmax = ops.Softmax(-3)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim not in (3, 4):
            raise InvalidParamError(f"Softmax2d: input must have rank 3 or 4, got shape {x.shape}")
        return self.softmax(x)


class LRN(Cell):
    """``ops.LRN``: local response normalisation of NCHW input across channels."""

    def __init__(self, depth_radius: int = 5, bias: float = 1.0, alpha: float = 1.0, beta: float = 0.5,
                 norm_region: str = "ACROSS_CHANNELS"):
        super().__init__()
        self.lrn = ops.LRN(depth_radius, bias, alpha, beta, norm_region)

    def construct(self, input: Tensor) -> Tensor:
        return self.lrn(input)


class PReLUExt(Cell):
    """``ops.prelu`` with a learnable ``weight`` of ``num_parameters`` slopes (1, or one per channel),
    each ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, dtype: Any = None):
        super().__init__()
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int) or num_parameters < 1:
            raise InvalidParamError(f"PReLUExt: num_parameters={num_parameters!r} must be an int >= 1")
        data = np.full((num_parameters,), init, np.float32)
        self.weight = Parameter(Tensor(data) if dtype is None else Tensor(data, dtype), name="weight")

    def construct(self, input: Tensor) -> Tensor:
        return ops.prelu(input, self.weight)
