"""Weight initializers with MindSpore's names and formulas, drawing MindSpore's very numbers.

Each random fill takes a fresh 64-bit seed from numpy's global random state (``seed.initializer_seed``,
MindSpore's ``_numpy_seed``; ``set_seed`` seeds it) and draws from MindSpore's host Philox generator
(``kernels.ops.random.host_uniform``/``host_normal``/``host_truncated_normal``), so a seeded script's
weights equal MindSpore 2.10's bit for bit (tests/test_seed_parity.py). Fills are float32, then cast to
the requested dtype, as MindSpore's ``_assignment``.

``initializer(init, shape, dtype)`` returns an :class:`InitTensor`, as MindSpore's Tensor with ``init``:
the fill (:class:`DeferredFill`) runs on first read (``init_data``). A ``Parameter`` made from one fills
at once (in creation order, as MindSpore outside auto-parallel), except under DryRun, where it keeps the
fill with its seeds drawn and never computes it unless something reads it (abstract weights).
"""
from __future__ import annotations

import math
import numbers
from functools import reduce
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError
from ascendemu.kernels.ops.random import host_normal, host_truncated_normal, host_uniform

from . import dtype as mstype
from .seed import initializer_seed
from .tensor import Tensor, tensor_operator_registry

# nonlinearities whose gain is 1 (MindSpore's _calculate_gain)
LINEAR_NONLINEARITIES = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                         "conv_transpose3d", "sigmoid")


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    if len(shape) < 2:
        raise ValueError(f"'fan_in' and 'fan_out' can not be computed for tensor with fewer than 2 "
                         f"dimensions, but got dimensions {len(shape)}.")
    receptive = reduce(lambda x, y: x * y, shape[2:], 1)
    return shape[1] * receptive, shape[0] * receptive


def _fan(shape: tuple[int, ...], mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"'mode' {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _fans(shape)
    return fan_in if mode == "fan_in" else fan_out


def _gain(nonlinearity: str, param: Any) -> float:
    if nonlinearity in LINEAR_NONLINEARITIES:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"For 'HeUniform', 'negative_slope' {param} is not a valid number.When "
                             f"'nonlinearity' has been set to 'leaky_relu', 'negative_slope' should be int or "
                             f"float type, but got {type(param)}.")
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"For 'HeUniform', the argument 'nonlinearity' should be one of ['sigmoid', 'tanh', "
                     f"'relu' or 'leaky_relu'], but got {nonlinearity}.")


def _uniform(seed: int, a: float, b: float, shape: tuple[int, ...]) -> np.ndarray:
    return host_uniform(seed, shape, a, b)


def _normal(seed: int, mean: float, sigma: float, shape: tuple[int, ...]) -> np.ndarray:
    if sigma < 0:
        raise ValueError("sigma < 0")
    return host_normal(seed, shape, mean, sigma)


class Initializer:
    """Fills an array of a given shape; the built-in ones implement ``fill(shape, seeds)``, a subclass
    written for MindSpore ``_initialize(arr)``. Calling one on a numpy array fills it in place, as
    MindSpore's ``Initializer.__call__``.

    ``SEEDS`` is how many initializer seeds (MindSpore's ``_numpy_seed`` draws) one fill takes, so the
    fill can be split in two: the draws, taken when an eager fill would take them, and the values,
    computed from them later, bit for bit the same (:class:`DeferredFill`). None: not known (a
    subclass's own ``_initialize`` may draw from numpy itself), so such a fill is never deferred.
    """

    SEEDS: int | None = None

    def __init__(self, **kwargs: Any):
        self._kwargs = kwargs

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        """The values for ``shape``, drawing the seeds now."""
        return self.fill(shape, self.draw_seeds())

    def draw_seeds(self) -> tuple[int, ...]:
        """The seeds of one fill, drawn from the initializer stream now (``seed.initializer_seed``)."""
        return tuple(initializer_seed() for _ in range(self.SEEDS or 0))

    def fill(self, shape: tuple[int, ...], seeds: tuple[int, ...]) -> np.ndarray:
        """The values for ``shape`` from ``seeds`` (``draw_seeds``'s). A subclass written for MindSpore
        implements ``_initialize(arr)``, which fills a zeroed array in place, instead of this."""
        if type(self)._initialize is Initializer._initialize:
            raise NotImplementedError("Must be overridden!")
        arr = np.zeros(shape, np.float32)
        self._initialize(arr)
        return arr

    @property
    def deferrable(self) -> bool:
        """Whether a fill can be split into its seeds now and its values later (a known ``SEEDS``, and
        no ``sample`` of a subclass's own, which ``fill`` would bypass)."""
        return self.SEEDS is not None and type(self).sample is Initializer.sample

    def _initialize(self, arr: np.ndarray) -> None:
        raise NotImplementedError("Must be overridden!")

    def __call__(self, arr: np.ndarray) -> np.ndarray:
        arr[...] = self.sample(tuple(arr.shape))
        return arr


class Zero(Initializer):
    SEEDS = 0

    def fill(self, shape, seeds):
        return np.zeros(shape, np.float32)


class One(Initializer):
    SEEDS = 0

    def fill(self, shape, seeds):
        return np.ones(shape, np.float32)


class Constant(Initializer):
    def __init__(self, value: Any):
        super().__init__(value=value)
        self.value = value

    SEEDS = 0

    def fill(self, shape, seeds):
        return np.full(shape, self.value)


class Identity(Initializer):
    SEEDS = 0

    def fill(self, shape, seeds):
        if len(shape) != 2:
            raise ValueError(f"For Identity initializer, the dimension of the initialized tensor should be 2, "
                             f"but got {len(shape)}.")
        return np.eye(shape[0], shape[1])


class Normal(Initializer):
    def __init__(self, sigma: float = 0.01, mean: float = 0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma, self.mean = sigma, mean

    SEEDS = 1

    def fill(self, shape, seeds):
        return _normal(seeds[0], self.mean, self.sigma, shape)


class TruncatedNormal(Initializer):
    """N(mean, sigma^2) truncated to the absolute bounds [a, b]."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0, b: float = 2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    SEEDS = 1

    def fill(self, shape, seeds):
        if self.sigma < 0:
            raise ValueError("sigma < 0")
        return host_truncated_normal(seeds[0], shape, self.a, self.b, self.mean, self.sigma)


class Uniform(Initializer):
    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    SEEDS = 1

    def fill(self, shape, seeds):
        return _uniform(seeds[0], -self.scale, self.scale, shape)


class XavierUniform(Initializer):
    def __init__(self, gain: float = 1):
        super().__init__(gain=gain)
        self.gain = gain

    SEEDS = 1

    def fill(self, shape, seeds):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _uniform(seeds[0], -bound, bound, shape)


class XavierNormal(Initializer):
    def __init__(self, gain: float = 1):
        super().__init__(gain=gain)
        self.gain = gain

    SEEDS = 1

    def fill(self, shape, seeds):
        fan_in, fan_out = _fans(shape)
        return _normal(seeds[0], 0, self.gain * math.sqrt(2.0 / float(fan_in + fan_out)), shape)


class HeUniform(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    SEEDS = 1

    def fill(self, shape, seeds):
        std = _gain(self.nonlinearity, self.negative_slope) / math.sqrt(_fan(shape, self.mode))
        bound = math.sqrt(3.0) * std
        return _uniform(seeds[0], -bound, bound, shape)


class HeNormal(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    SEEDS = 1

    def fill(self, shape, seeds):
        return _normal(seeds[0], 0, _gain(self.nonlinearity, self.negative_slope) / math.sqrt(_fan(shape, self.mode)),
                       shape)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix: QR of a standard normal draw, signs fixed by R's diagonal."""

    def __init__(self, gain: float = 1.):
        super().__init__(gain=gain)
        self.gain = gain

    SEEDS = 1

    def fill(self, shape, seeds):
        if len(shape) < 2:
            raise ValueError(f"For Orthogonal initializer, the dimension of the initialized tensor should be "
                             f"no less than 2, but got {len(shape)}.")
        rows = shape[0]
        cols = int(np.prod(shape)) // rows
        data = _normal(seeds[0], 0, 1, (rows, cols))
        if rows < cols:
            data = data.T
        q, r = np.linalg.qr(data)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return (q * self.gain).reshape(shape)


class VarianceScaling(Initializer):
    """Uniform or normal with variance scale / n. As in MindSpore 2.10, 'truncated_normal' (the
    default) draws uniform: MindSpore tests for the spelling 'truncated_norm', which its own argument
    check rejects, so its truncated branch is unreachable."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal"):
        super().__init__(scale=scale, mode=mode, distribution=distribution)
        if scale <= 0.:
            raise ValueError(f"For VarianceScaling initializer, the argument 'scale' must be greater than 0, "
                             f"but got {scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"For VarianceScaling initializer, the argument 'mode' must be fan_in, fan_out or "
                             f"fan_avg, but got {mode}.")
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"For VarianceScaling initializer, the argument 'distribution' must be uniform, "
                             f"truncated_norm or untruncated_norm, but got {distribution}.")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    SEEDS = 1

    def fill(self, shape, seeds):
        fan_in, fan_out = _fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out}.get(self.mode, (fan_in + fan_out) / 2.)
        scale = self.scale / max(1., fan)
        if self.distribution == "untruncated_normal":
            return _normal(seeds[0], 0, np.sqrt(scale), shape)
        limit = np.sqrt(3.0 * scale)
        return _uniform(seeds[0], -limit, limit, shape)


class DeferredFill:
    """One initializer fill not computed yet: the initializer, shape, dtype and, once ``pin``ned, the
    seeds it draws. A pinned fill took its seeds when an eager fill would have (so the initializer
    stream moves on exactly as in an eager run) and computes, whenever ``values`` is called, bit for
    bit the array the eager fill made; an unpinned one draws them when its values are computed, as
    MindSpore's ``init_data`` does."""

    def __init__(self, init: Initializer, shape: tuple[int, ...], dtype: mstype.Type):
        self.init, self.shape, self.dtype = init, shape, dtype
        self.seeds: tuple[int, ...] | None = None

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype.np_type).itemsize

    def pin(self) -> "DeferredFill":
        """Draw the seeds now, unless drawn already (the fill must be ``init.deferrable``)."""
        if self.seeds is None:
            self.seeds = self.init.draw_seeds()
        return self

    def values(self) -> np.ndarray:
        """The filled array, in ``dtype`` (float32 fills cast once, as MindSpore's ``_assignment``)."""
        seeds = self.seeds if self.seeds is not None else self.init.draw_seeds()
        return np.asarray(self.init.fill(self.shape, seeds)).astype(self.dtype.np_type)


class InitTensor(Tensor):
    """MindSpore's Tensor with ``init`` (what ``initializer`` returns): shape, dtype and a fill, the data
    computed on first read (``init_data``, ``asnumpy``, an op) and kept. ``Parameter`` takes the fill
    itself, so a DryRun's weights are never filled (``Parameter``, abstract weights)."""

    def __init__(self, fill: DeferredFill):
        self._sym, self.const_arg, self._dtype = None, False, fill.dtype
        self.__dict__["_host"] = None
        self.fill = fill

    @property
    def _data(self) -> np.ndarray:
        if self.fill is not None:
            self.__dict__["_host"], self.fill = self.fill.values(), None
        return self.__dict__["_host"]

    @_data.setter
    def _data(self, value: np.ndarray) -> None:
        self.__dict__["_host"], self.fill = value, None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.fill.shape if self.fill is not None else self.__dict__["_host"].shape

    @property
    def has_init(self) -> bool:
        return self.fill is not None

    @property
    def init(self) -> Initializer | None:
        return self.fill.init if self.fill is not None else None

    def init_data(self) -> Tensor:
        """A Tensor of the filled values (MindSpore's ``Tensor.init_data``)."""
        return Tensor(self._data, dtype=self._dtype)


BY_NAME = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal, "uniform": Uniform,
    "truncatednormal": TruncatedNormal, "truncated_normal": TruncatedNormal,
    "xavier_uniform": XavierUniform, "xavieruniform": XavierUniform,
    "xavier_normal": XavierNormal, "xaviernormal": XavierNormal,
    "he_uniform": HeUniform, "heuniform": HeUniform, "he_normal": HeNormal, "henormal": HeNormal,
    "constant": Constant, "identity": Identity, "orthogonal": Orthogonal, "variancescaling": VarianceScaling,
}


def initializer(init: Any, shape: Any = None, dtype: Any = mstype.float32):
    """A Tensor of ``shape`` filled by ``init``: a Tensor or numpy array of that shape (its values, cast
    to ``dtype``), or, filled on first read (an :class:`InitTensor`), a name ('normal', 'zeros',
    'he_uniform', ...), an Initializer, or a number."""
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
    return InitTensor(DeferredFill(init, shape, dt))


# Tensor(shape=..., init=...) runs initializer (common.tensor cannot import this module, which makes Tensors)
tensor_operator_registry.register("initializer", initializer)
