"""``mindspore.ops.operations.random_ops``: MindSpore's random primitives. StandardNormal, UniformReal and
UniformInt draw MindSpore 2.10 CPU's very numbers (``kernels/ops/random.py``: its engines, seeded from
the seed pair as MindSpore seeds them); each primitive owns its engine's state, so each call draws the
next numbers. ``ops.Dropout`` lives in ``nn_ops``, as in MindSpore; a name not served here raises
UnsupportedOpError, which names ``ascendemu api-coverage``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidTypeError, InvalidValueError, RuntimeParamError
from ascendemu.kernels.ops.random import MINSTD_M, engine_state, op_seed

from ...common import dtype as mstype
from ...common.parameter import Parameter
from ...common.seed import graph_seed
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..primitive import _cast, _Op, apply_op
from .other_ops import Assign





def _check_seed(owner: str, name: str, value: Any) -> int:
    """A seed as MindSpore's primitives check it: an int >= 0."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"For '{owner}', the '{name}' must be int, but got '{type(value).__name__}'")
    if value < 0:
        raise InvalidValueError(f"For '{owner}', the '{name}' must be int and must >= 0, but got '{value}' with "
                                f"type 'int'.")
    return value


def _sample_shape(owner: str, shape: Any) -> tuple[int, ...]:
    """A sampler's ``shape`` as MindSpore takes it: a tuple of ints (or a 1-D int Tensor), each >= 0."""
    if isinstance(shape, Tensor):
        if shape.dtype.name not in ("int32", "int64"):
            raise InvalidTypeError(f"For primitive[{owner}], the input argument[shape] must be a type of "
                                   f"{{Int32, Int64}}, but got {shape.dtype}.")
        shape = tuple(int(d) for d in np.asarray(shape.asnumpy()).reshape(-1))
    if not isinstance(shape, tuple):
        raise InvalidTypeError(f"For '{owner}', input must be a Int, a tuple, or a Tensor with all Int elements, "
                               f"but got: {shape!r}")
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, int):
            raise InvalidTypeError(f"For primitive[{owner}], the input argument[shape] must be a type of "
                                   f"{{Int32, Int64}}, but got {type(d).__name__}.")
    if any(d < 0 for d in shape):
        raise InvalidValueError(f"For primitive[{owner}], the attribute[shape] should be a vector with all "
                                f"positive item. but got {list(shape)}.")
    return shape


def _one_arg(owner: str, args: tuple, count: int) -> None:
    if len(args) != count:
        raise InvalidTypeError(f"For '{owner}', the number of inputs must be {count}, but got {len(args)}.")


class _Sampler(_Op):
    """A primitive with MindSpore's ``(seed=0, seed2=0)`` and its engines' states: Parameters the kernel
    reads and the op assigns back (a graph state update). As MindSpore's PyNative kernel cache keeps
    one kernel per input signature, each signature (``_draw``'s ``key``: shapes and dtypes) has its own
    engine, seeded afresh on its first call and continued by the later ones. ``seed = seed2 = 0`` is
    MindSpore's "a random seed"; here it takes the next pair of the global seed (``set_seed``)."""

    def __init__(self, seed: int = 0, seed2: int = 0):
        super().__init__()
        name = type(self).__name__
        self.seed, self.seed2 = _check_seed(name, "seed", seed), _check_seed(name, "seed2", seed2)
        self._seeds = (self.seed, self.seed2) if (self.seed, self.seed2) != (0, 0) else graph_seed(0, name)
        self._states: dict[tuple, Parameter] = {}

    def _state(self, key: tuple) -> Parameter:
        """The engine of the calls with this input signature, made on its first call."""
        if key not in self._states:
            name = type(self).__name__
            self._states[key] = Parameter(engine_state(name, *self._seeds), name=f"{name}_state",
                                          requires_grad=False)
        return self._states[key]

    def _run(self, operands: list[Any], attrs: dict, key: tuple) -> list[Tensor]:
        """The op's outputs but the last (the engine's new state, assigned back)."""
        state = self._state(key)
        *outs, new_state = apply_op(type(self).__name__, [*operands[:1], state, *operands[1:]]
                                    if type(self).__name__ in _STATE_SECOND else [state, *operands], attrs)
        Assign()(state, new_state)
        return outs

    def _draw(self, shape: tuple[int, ...], operands: list[Any]) -> Tensor:
        return self._run(operands, {"shape": shape}, (shape,))[0]


# ops whose kernel takes the data first and the engine state second
_STATE_SECOND = ("RandomChoiceWithMask", "RandomShuffle", "Multinomial")


class StandardNormal(_Sampler):
    """``StandardNormal(seed=0, seed2=0)(shape)``: float32 N(0, 1) values of ``shape``."""

    def __call__(self, *args: Any) -> Tensor:
        _one_arg("StandardNormal", args, 1)
        return self._draw(_sample_shape("StandardNormal", args[0]), [])


class UniformReal(_Sampler):
    """``UniformReal(seed=0, seed2=0)(shape)``: float32 values uniform in [0, 1) of ``shape``."""

    def __call__(self, *args: Any) -> Tensor:
        _one_arg("UniformReal", args, 1)
        return self._draw(_sample_shape("UniformReal", args[0]), [])


class UniformInt(_Sampler):
    """``UniformInt(seed=0, seed2=0)(shape, minval, maxval)``: int32 values uniform in [minval, maxval),
    the bounds int32 scalar Tensors."""

    def __call__(self, *args: Any) -> Tensor:
        _one_arg("UniformInt", args, 3)
        shape = _sample_shape("UniformInt", args[0])
        bounds = []
        for k, (name, value) in enumerate((("minval", args[1]), ("maxval", args[2])), start=1):
            if not isinstance(value, Tensor):
                raise InvalidTypeError(f"For primitive[UniformInt], the input[{k}] should be a Tensor, but got "
                                       f"{type(value).__name__}.")
            if value.dtype.name != "int32":
                raise InvalidTypeError(f"For primitive[UniformInt], the input argument[{name}] must be a type of "
                                       f"{{Tensor[Int32]}}, but got Tensor[{value.dtype}].")
            if value.shape != ():
                raise InvalidValueError(f"For UniformInt, the {name[:3]} value should be a scalar tensor, while the "
                                        f"shape is: {value.shape}")
            bounds.append(value)
        low, high = (_known_int(b) for b in bounds)
        if low is not None and high is not None and high <= low:
            raise RuntimeParamError(f"For 'Random', invalid min/max values: ({low}/{high})")
        return self._draw(shape, bounds)


def _known_int(value: Tensor) -> int | None:
    """A bound's value when it is known now; None for a value of a graph being captured (the kernel
    then draws minval for an empty range, as it cannot raise)."""
    return None if value.is_symbolic else int(value.item())


class RandomChoiceWithMask(_Sampler):
    """``RandomChoiceWithMask(count=256, seed=0, seed2=0)(input_x)``: up to ``count`` true positions of
    the bool ``input_x`` (rank 1 to 5) in random order, as int32 coordinates ``(count, rank)``, and a
    bool mask ``(count,)`` that is False on the zero rows padding past the true count. MindSpore's CPU
    kernel (2.10) garbles the middle coordinates of a rank >= 3 input; here every coordinate is the
    position's own, as the op documents."""

    def __init__(self, count: int = 256, seed: int = 0, seed2: int = 0):
        if isinstance(count, bool) or not isinstance(count, int):
            raise InvalidTypeError(f"For 'RandomChoiceWithMask', the type of 'count' should be 'int', but got type "
                                   f"'{type(count).__name__}'.")
        if count <= 0:
            raise InvalidValueError(f"For 'RandomChoiceWithMask', the 'count' must be int and must > 0, but got "
                                    f"'{count}' with type 'int'.")
        super().__init__(seed, seed2)
        self.count = count

    def __call__(self, *args: Any) -> tuple[Tensor, Tensor]:
        _one_arg("RandomChoiceWithMask", args, 1)
        x = args[0]
        if not isinstance(x, Tensor) or x.dtype.name != "bool":
            got = f"Tensor[{x.dtype}]" if isinstance(x, Tensor) else type(x).__name__
            raise InvalidTypeError(f"For primitive[RandomChoiceWithMask], the input argument[input_x] must be a type "
                                   f"of {{Tensor[Bool]}}, but got {got}.")
        if not 1 <= len(x.shape) <= 5:
            raise InvalidValueError(f"For 'RandomChoiceWithMask', input[0] rank should be between 1 and 5, but "
                                    f"got:{len(x.shape)}")
        index, mask = self._run([x], {"count": self.count}, (x.shape,))
        return index, mask


class RandomShuffle(_Sampler):
    """``RandomShuffle(seed=0, seed2=0)(x)``: x's rows (along axis 0) in random order; a scalar or a
    single row comes back as it is."""

    def __call__(self, *args: Any) -> Tensor:
        _one_arg("RandomShuffle", args, 1)
        x = args[0]
        if not isinstance(x, Tensor):
            raise InvalidTypeError(f"For 'RandomShuffle', the 'input_x' must be a Tensor, but got "
                                   f"{type(x).__name__}.")
        return self._run([x], {}, (x.shape, x.dtype.name))[0]


class StandardLaplace(_Sampler):
    """``StandardLaplace(seed=0, seed2=0)(shape)``: float32 Laplace(0, 1) values of ``shape``, MindSpore
    2.10 CPU's numbers (minstd_rand0 over GetSeed: a uniform v in (-1, 1), then -sign(v) log(1 - |v|))."""

    def __call__(self, *args: Any) -> Tensor:
        _one_arg("StandardLaplace", args, 1)
        return self._draw(_sample_shape("StandardLaplace", args[0]), [])


def _dtype_text(dtype: Any, default: str) -> str:
    """A dtype argument's name (``int64``): a MindSpore dtype, None (``default``), or a dtype's text
    (``mindspore.int64``, as a Tensor method's recorded default arrives)."""
    if dtype is None:
        return default
    return getattr(dtype, "name", None) or str(dtype).rsplit(".", 1)[-1]


# Multinomial's probabilities: the kernel's dtypes; the others MindSpore takes (float16, ints) are cast to
# float32 first (its float16/int cumulative sums round differently: a known difference)
MULTINOMIAL_KERNEL_DTYPES = ("float32", "float64")
MULTINOMIAL_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                      "uint32", "uint64")


class Multinomial(_Sampler):
    """``Multinomial(seed=0, seed2=0, dtype=mstype.int32)(x, num_samples)``: ``num_samples`` indices per
    row of ``x`` (1-d or 2-d, unnormalised non-negative weights), drawn with replacement as MindSpore's
    CPU kernel draws them (kernels/ops/random.py: minstd_rand0 over GetSeed, a binary search of the
    normalised cumulative sums)."""

    def __init__(self, seed: int = 0, seed2: int = 0, dtype: Any = mstype.int32):
        super().__init__(seed, seed2)
        name = _dtype_text(dtype, "int32")
        if name not in ("int32", "int64"):
            raise InvalidTypeError(f"For 'Multinomial', the 'dtype' must be int32 or int64, but got {dtype}.")
        self.dtype = name

    def __call__(self, *args: Any) -> Tensor:
        _one_arg("Multinomial", args, 2)
        x, count = args
        if not isinstance(x, Tensor) or x.dtype.name not in MULTINOMIAL_DTYPES:
            got = f"Tensor[{x.dtype}]" if isinstance(x, Tensor) else type(x).__name__
            raise InvalidTypeError(f"For primitive[Multinomial], the input argument[x] must be a type of a number "
                                   f"Tensor, but got {got}.")
        if isinstance(count, Tensor) and count.dtype.name in ("int32", "int64") and count.size == 1:
            count = int(count.item())
        if isinstance(count, bool) or not isinstance(count, int):
            got = count.dtype if isinstance(count, Tensor) else type(count).__name__
            raise InvalidTypeError(f"For primitive[Multinomial], the input argument[num_samples] must be a type of "
                                   f"{{Int32, Int64}}, but got {got}.")
        if len(x.shape) not in (1, 2):
            raise InvalidValueError(f"For 'Multinomial', input[x] dimension must be 1 or 2, but got rank "
                                    f"{len(x.shape)}.")
        if count < 0:
            raise InvalidValueError(f"For 'Multinomial', num_samples should be a nonnegative number, but got "
                                    f"{count}.")
        if x.dtype.name not in MULTINOMIAL_KERNEL_DTYPES:
            x = _cast(x, "float32")
        return self._run([x], {"num_samples": count, "dtype": self.dtype}, (x.shape, x.dtype.name, count))[0]


CATEGORICAL_DTYPES = ("int16", "int32", "int64")
CATEGORICAL_KERNEL_DTYPES = ("float32", "float64")     # float16 logits are cast to float32 first


class RandomCategorical(_Op):
    """``RandomCategorical(dtype=mstype.int64)(logits, num_sample, seed)``: ``num_sample`` class indices per
    row of the 2-d ``logits``, as MindSpore 2.10 CPU draws them (minstd_rand0 seeded by GetSeed(0, seed),
    one uniform per sample shared by the rows, a linear search of the rows' exp cumulative sums). The
    engine continues across calls with one seed, one per input signature, and restarts when the seed
    changes, as MindSpore's kernel does; seed 0 (MindSpore: a random seed) takes a pair of ``set_seed``'s
    graph seed."""

    def __init__(self, dtype: Any = mstype.int64):
        super().__init__()
        name = _dtype_text(dtype, "int64")
        if name not in CATEGORICAL_DTYPES:
            raise InvalidTypeError(f"For 'RandomCategorical', the 'dtype' must be in {list(CATEGORICAL_DTYPES)}, "
                                   f"but got {dtype}.")
        self.dtype = name
        self._states: dict[tuple, tuple[int, Parameter]] = {}

    def _state(self, key: tuple, seed: int) -> Parameter:
        if key not in self._states or self._states[key][0] != seed:
            pair = (0, seed) if seed else graph_seed(0, "RandomCategorical")
            state = np.array([op_seed(*pair) % MINSTD_M or 1], np.int64)
            self._states[key] = (seed, Parameter(state, name="RandomCategorical_state", requires_grad=False))
        return self._states[key][1]

    def __call__(self, *args: Any) -> Tensor:
        if len(args) != 3:
            raise InvalidTypeError(f"For 'RandomCategorical', the number of inputs must be 3, but got {len(args)}.")
        logits, count, seed = args
        if not isinstance(logits, Tensor) or logits.dtype.name not in ("float16", "float32", "float64"):
            got = f"Tensor[{logits.dtype}]" if isinstance(logits, Tensor) else type(logits).__name__
            raise InvalidTypeError(f"For primitive[RandomCategorical], the input argument[logits] must be a type of "
                                   f"{{Tensor[Float16], Tensor[Float32], Tensor[Float64]}}, but got {got}.")
        for name, value in (("num_sample", count), ("seed", seed)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidTypeError(f"For 'RandomCategorical', the '{name}' must be int, but got "
                                       f"{type(value).__name__}.")
        if len(logits.shape) != 2:
            raise InvalidValueError(f"For 'RandomCategorical', the rank of 'logits' must be 2, but got "
                                    f"{len(logits.shape)}.")
        if count <= 0:
            raise InvalidValueError(f"For 'RandomCategorical', the 'num_sample' must be greater than 0, but got "
                                    f"{count}.")
        if logits.dtype.name not in CATEGORICAL_KERNEL_DTYPES:
            logits = _cast(logits, "float32")
        state = self._state((logits.shape, logits.dtype.name, count), seed)
        out, new_state = apply_op("RandomCategorical", [logits, state], {"num_sample": count, "dtype": self.dtype})
        Assign()(state, new_state)
        return out


RANDPERM_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64")
RANDPERM_RANDOM_SEED = -1       # MindSpore: a random seed per launch


class RandpermV2(_Op):
    """``RandpermV2(seed=0, offset=0, dtype=mstype.int64)(n)``: a random permutation of 0 .. n-1, as
    MindSpore 2.10 CPU draws it (``std::shuffle`` over ``std::mt19937(offset or seed)``): the same
    seed gives the same permutation every call. seed=-1 with offset 0 (MindSpore: a random seed) takes
    a seed from ``set_seed``'s graph seed per call, so a seeded run repeats."""

    def __init__(self, seed: int = 0, offset: int = 0, dtype: Any = mstype.int64):
        super().__init__()
        for name, value in (("seed", seed), ("offset", offset)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidTypeError(f"For 'RandpermV2', the type of '{name}' must be int, but got "
                                       f"{type(value).__name__}.")
        if seed < RANDPERM_RANDOM_SEED:
            raise InvalidValueError(f"For 'RandpermV2', the 'seed' must be greater than or equal to -1, but got "
                                    f"{seed}.")
        if offset < 0:
            raise InvalidValueError(f"For 'RandpermV2', the 'offset' must be greater than or equal to 0, but got "
                                    f"{offset}.")
        name = _dtype_text(dtype, "int64")
        if name not in RANDPERM_DTYPES:
            raise InvalidTypeError(f"For 'RandpermV2', the 'dtype' must be in {list(RANDPERM_DTYPES)}, but got "
                                   f"{dtype}.")
        self.seed, self.offset, self.dtype = seed, offset, name

    def __call__(self, n: Any) -> Tensor:
        if isinstance(n, Tensor) and n.dtype.name in ("int32", "int64") and n.size == 1:
            n = int(n.item())
        if isinstance(n, bool) or not isinstance(n, int):
            raise InvalidTypeError(f"For 'RandpermV2', the type of 'n' must be int, but got {type(n).__name__}.")
        if n <= 0:
            raise InvalidValueError(f"For 'RandpermV2', the input 'n' must be greater than 0, but got data: {n}.")
        seed = self.offset or self.seed
        if seed == RANDPERM_RANDOM_SEED:
            seed = _random_seed64("RandpermV2")
        return apply_op("RandpermV2", [Tensor(np.array([seed], np.int64))], {"n": n, "dtype": self.dtype})[0]


def _random_seed64(kernel: str) -> int:
    """A non-negative 64-bit seed from ``set_seed``'s graph seed, where MindSpore's kernel would read
    ``std::random_device``: the next pair of ``graph_seed``, mixed as GetSeed mixes it."""
    return op_seed(*graph_seed(0, kernel)) & 0x7FFFFFFFFFFFFFFF


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.random_ops", name, __all__)
