"""Weight initializers with MindSpore's names and formulas, drawn from the global seeded stream.

``initializer(init, shape, dtype)`` returns a concrete Tensor at once (MindSpore defers the fill until
``init_data``; nothing here needs the deferral).
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from . import dtype as mstype
from .seed import rng
from .tensor import tensor_operator_registry


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    if len(shape) < 2:
        raise InvalidParamError(f"fan in/out need a weight of rank >= 2, got shape {shape}")
    receptive = int(np.prod(shape[2:], dtype=np.int64)) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity: str, param: float | None) -> float:
    if nonlinearity in ("linear", "conv2d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise InvalidParamError(f"nonlinearity {nonlinearity!r} is not supported; use linear, sigmoid, tanh, "
                            f"relu or leaky_relu")


class Initializer:
    """Fills an array of a given shape; subclasses implement ``sample``."""

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Zero(Initializer):
    def sample(self, shape):
        return np.zeros(shape)


class One(Initializer):
    def sample(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value: float):
        self.value = value

    def sample(self, shape):
        return np.full(shape, self.value)


class Normal(Initializer):
    def __init__(self, sigma: float = 0.01, mean: float = 0.0):
        self.sigma, self.mean = sigma, mean

    def sample(self, shape):
        return rng().normal(self.mean, self.sigma, shape)


class TruncatedNormal(Initializer):
    """Normal(0, sigma) redrawn outside two sigmas."""

    def __init__(self, sigma: float = 0.01):
        self.sigma = sigma

    def sample(self, shape):
        out = rng().normal(0.0, self.sigma, shape)
        bad = np.abs(out) > 2 * self.sigma
        while bad.any():
            out[bad] = rng().normal(0.0, self.sigma, int(bad.sum()))
            bad = np.abs(out) > 2 * self.sigma
        return out


class Uniform(Initializer):
    def __init__(self, scale: float = 0.07):
        self.scale = scale

    def sample(self, shape):
        return rng().uniform(-self.scale, self.scale, shape)


class XavierUniform(Initializer):
    def __init__(self, gain: float = 1.0):
        self.gain = gain

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return rng().uniform(-bound, bound, shape)


class XavierNormal(Initializer):
    def __init__(self, gain: float = 1.0):
        self.gain = gain

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        return rng().normal(0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)), shape)


class HeUniform(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        bound = math.sqrt(3.0) * _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)
        return rng().uniform(-bound, bound, shape)


class HeNormal(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return rng().normal(0.0, _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan), shape)


BY_NAME = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal, "uniform": Uniform,
    "truncatednormal": TruncatedNormal, "truncated_normal": TruncatedNormal,
    "xavier_uniform": XavierUniform, "xavieruniform": XavierUniform,
    "xavier_normal": XavierNormal, "xaviernormal": XavierNormal,
    "he_uniform": HeUniform, "heuniform": HeUniform, "he_normal": HeNormal, "henormal": HeNormal,
}


def initializer(init: Any, shape: Any = None, dtype: Any = mstype.float32):
    """A Tensor of ``shape`` filled by ``init``: a Tensor or numpy array of that shape (its values, cast
    to ``dtype``), a name ('normal', 'zeros', 'he_uniform', ...), an Initializer, or a number."""
    from .tensor import Tensor

    dt = mstype.to_type(dtype)
    if isinstance(shape, numbers.Integral):
        shape = (int(shape),)
    if isinstance(init, Tensor):
        init = init.asnumpy()
    if isinstance(init, np.ndarray):
        if shape is not None and tuple(int(s) for s in shape) != init.shape:
            raise InvalidParamError(f"initializer: the init array has shape {init.shape}, but shape "
                                    f"{tuple(int(s) for s in shape)} is expected; give values of that shape")
        return Tensor(init.astype(dt.np_type), dtype=dt)
    if shape is None:
        raise InvalidParamError("initializer: give a shape, e.g. initializer('normal', (3, 4))")
    shape = tuple(int(s) for s in shape)
    if isinstance(init, bool) or isinstance(init, numbers.Number):
        init = Constant(init)
    elif isinstance(init, str):
        cls = BY_NAME.get(init.lower())
        if cls is None:
            raise InvalidParamError(f"initializer {init!r} is not supported; use one of {sorted(BY_NAME)}")
        init = cls()
    elif not isinstance(init, Initializer):
        raise InvalidParamError(f"initializer: init {init!r} must be a name, an Initializer, a number or an array")
    return Tensor(np.asarray(init.sample(shape)).astype(dt.np_type), dtype=dt)


# Tensor(shape=..., init=...) runs initializer (common.tensor cannot import this module, which makes Tensors)
tensor_operator_registry.register("initializer", initializer)
