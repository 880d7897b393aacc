"""``mindspore.ops.function.random_func``: MindSpore's random functions, as MindSpore builds them: each
call makes a new sampler primitive (StandardNormal, UniformReal, UniformInt) with the next seed pair of
``_get_graph_seed`` (``common.seed.graph_seed``, keyed by the function's name), so a seeded script
draws MindSpore 2.10 CPU's very numbers; inside a captured graph each call site keeps one primitive,
whose engine state advances every step, as MindSpore's compiled graph keeps one kernel per call site.
``ops.dropout`` lives in ``nn_func``, as in MindSpore; a name not served here raises
UnsupportedOpError, which names ``ascendemu api-coverage``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError
from ascendemu.graph.capture import current_tracer

from ...common import dtype as mstype
from ...common.seed import call_site_op, graph_seed
from ...common.tensor import Tensor, hold_value
from ...unsupported import unsupported
from .._utils import defined_here
from ..operations.random_ops import (Multinomial, RandomCategorical, RandomChoiceWithMask, RandomShuffle, RandpermV2,
                                     StandardLaplace, StandardNormal, UniformInt, UniformReal, _check_seed,
                                     InvalidTypeError, InvalidValueError)
from .array_func import cast, reshape, topk
from .math_func import floor, log1p, minimum

# MindSpore's mstype.float_type and mstype.int_type, the dtypes its random functions accept (the
# float8 types of float_type are not device dtypes here)
FLOAT_TYPES = ("float16", "float32", "float64", "bfloat16")
INT_TYPES = ("int8", "int16", "int32", "int64")


def _sampler(kind: type, seed: Any, kernel: str) -> Any:
    """The sampler primitive of one functional call: a new one with the next seed pair (PyNative), or
    the call site's own inside a captured graph."""
    if seed is not None:
        _check_seed(kernel, "seed", seed)
    tracer = current_tracer()
    if tracer is None:
        return kind(*graph_seed(seed, kernel))
    key = (tracer.graph.name, tracer.draw(), kernel, seed)
    return call_site_op(key, lambda: kind(*graph_seed(seed, kernel)))


def _dtype_name(dtype: Any) -> str:
    return getattr(dtype, "name", str(dtype))


def _check_dtype(owner: str, dtype: Any, allowed: tuple[str, ...], kind: str) -> Any:
    if _dtype_name(dtype) not in allowed:
        raise InvalidValueError(f"For '{owner}', the 'dtype' must be {kind} type, but got {dtype}.")
    return dtype


def _check_param(owner: str, name: str, value: Any) -> Tensor:
    """``normal``'s mean and stddev: a Tensor, an int, a float or a numpy array (as a Tensor)."""
    if isinstance(value, bool) or not isinstance(value, (Tensor, int, float, np.ndarray)):
        raise InvalidTypeError(f"For '{owner}', the type of '{name}' must be Tensor, int, or float, but got: "
                               f"{type(value)}")
    return value if isinstance(value, Tensor) else Tensor(value)


def _check_shape(shape: Any) -> tuple[int, ...]:
    """``normal``'s shape: a tuple of positive ints (MindSpore's _check_shape)."""
    if not isinstance(shape, tuple):
        raise InvalidTypeError(f"Type of 'shape' must be tuple, but got: {type(shape)}")
    for item in shape:
        if isinstance(item, bool) or not isinstance(item, int):
            raise InvalidTypeError(f"Elements of 'shape' must be int, but got: {type(item)}")
        if item < 1:
            raise InvalidValueError(f"Elements of 'shape' must be positive int, but got: {item}")
    return shape


def _generate_shapes(size: tuple) -> tuple:
    """``rand``/``randn``'s ``*size``: nothing (one value), ints, or one int, list or tuple."""
    if not size:
        return (1,)
    if len(size) == 1:
        if isinstance(size[0], int):
            return size
        if isinstance(size[0], (list, tuple)):
            return tuple(size[0])
        raise InvalidTypeError(f"If the length of the argument 'shape' is 1, the type of the argument 'shape' must "
                               f"be one of ['int', 'list', 'tuple'], but got {size[0]}.")
    for value in size:
        if not isinstance(value, int):
            raise InvalidTypeError(f"If the length of the argument 'shape' is > 1, the type of the argument 'shape' "
                                   f"must all be int, but got {value}.")
    return size


def _check_bound(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"For '{owner}', '{name}' must be an int, but got {type(value)}.")
    return value


def _input_tensor(owner: str, input: Any) -> Tensor:
    if not isinstance(input, Tensor):
        raise InvalidTypeError(f"For '{owner}', the 'input' must be a Tensor, but got {type(input)}")
    return input


def choice_with_mask(input_x: Any, count: int = 256, seed: Any = None) -> tuple[Tensor, Tensor]:
    """``RandomChoiceWithMask(count, *graph seed pair)(input_x)``: (coordinates, mask)."""
    if seed is not None:
        _check_seed("choice_with_mask", "seed", seed)
    tracer = current_tracer()
    make = lambda: RandomChoiceWithMask(count, *graph_seed(seed, "choice_with_mask"))   # noqa: E731
    if tracer is None:
        return make()(input_x)
    return call_site_op((tracer.graph.name, tracer.draw(), "choice_with_mask", seed, count), make)(input_x)


def shuffle(x: Any, seed: Any = None) -> Tensor:
    """x's rows (along axis 0) in random order (RandomShuffle)."""
    return _sampler(RandomShuffle, seed, "shuffle")(x)


def _no_generator(owner: str, generator: Any) -> None:
    """Generator objects are not served: the default generator (seeded by ``set_seed``) only."""
    if generator is not None:
        raise InvalidParamError(f"{owner}: generator={generator!r} is not supported here; leave it None (the "
                                f"default generator, which set_seed seeds)")


def _number(owner: str, name: str, value: Any) -> float:
    """A bound or moment of the in-place samplers: a number, or a Tensor of one element."""
    if isinstance(value, Tensor):
        if value.size != 1:
            raise InvalidValueError(f"For '{owner}', '{name}' must be a number or a Tensor of one element, but got "
                                    f"a Tensor of shape {value.shape}.")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"For '{owner}', '{name}' must be a number, but got {type(value)}.")
    return float(value)


def _float_input(owner: str, input: Any) -> Tensor:
    input = _input_tensor(owner, input)
    if input.dtype.name not in FLOAT_TYPES:
        raise InvalidTypeError(f"For '{owner}', the 'input' must be a float Tensor, but got {input.dtype}.")
    return input


def _uniform_values(owner: str, input: Any, from_: Any, to: Any, generator: Any) -> Tensor:
    """Values uniform in [from_, to) of input's shape and dtype. MindSpore serves these generator ops
    (UniformExt) on Ascend only, from its Philox stream; here they draw UniformReal with the next seed
    pair of ``set_seed``, so a seeded run repeats (Ascend's numbers are not reproduced)."""
    input = _float_input(owner, input)
    _no_generator(owner, generator)
    low, high = _number(owner, "from_", from_), _number(owner, "to", to)
    if low > high:
        raise InvalidTypeError(f"For '{owner}', 'from_' must be less than or equal to 'to', but got {low} > {high}.")
    return cast(_sampler(UniformReal, None, owner)(input.shape) * (high - low) + low, input.dtype)


def _uniform_method(op: Any, input: Any, from_: Any = 0.0, to: Any = 1.0, generator: Any = None) -> Tensor:
    """``Tensor.uniform(from_=0., to=1., generator=None)``: a new tensor (``uniform_``'s values)."""
    return _uniform_values("uniform", input, from_, to, generator)


def uniform_(input: Any, from_: Any = 0, to: Any = 1, *, generator: Any = None) -> Tensor:
    """``input`` filled in place with values uniform in [from_, to) (see ``_uniform_values``)."""
    return hold_value(input, _uniform_values("uniform_", input, from_, to, generator))


def normal_(input: Any, mean: Any = 0, std: Any = 1, *, generator: Any = None) -> Tensor:
    """``input`` filled in place with N(mean, std^2) values: StandardNormal with the next seed pair, times
    std plus mean (MindSpore's generator op, Ascend only there; its numbers are not reproduced)."""
    input = _float_input("normal_", input)
    _no_generator("normal_", generator)
    mean, std = _number("normal_", "mean", mean), _number("normal_", "std", std)
    z = _sampler(StandardNormal, None, "normal_")(input.shape)
    return hold_value(input, cast(z * std + mean, input.dtype))


def exponential_(input: Any, lambd: Any = 1, *, generator: Any = None) -> Tensor:
    """``input`` filled in place with Exponential(lambd) values, ``-log(1 - u) / lambd`` of UniformReal's u with
    the next seed pair (MindSpore's InplaceExponential, Ascend only there; its numbers are not reproduced)."""
    input = _float_input("exponential_", input)
    _no_generator("exponential_", generator)
    lambd = _number("exponential_", "lambd", lambd)
    if not lambd > 0:
        raise InvalidValueError(f"For 'exponential_', 'lambd' must be greater than 0, but got {lambd}.")
    u = cast(_sampler(UniformReal, None, "exponential_")(input.shape), mstype.float64)
    return hold_value(input, cast(-log1p(-u) / lambd, input.dtype))


# random_'s default bound ``to``: the integers a float type holds exactly (2 ** significand bits), or an
# integer type's largest value + 1 (as torch.Tensor.random_, whose semantics MindSpore's InplaceRandom follows)
RANDOM_FLOAT_LIMITS = {"float16": 2 ** 11, "bfloat16": 2 ** 8, "float32": 2 ** 24, "float64": 2 ** 53}


def random_(input: Any, from_: Any = 0, to: Any = None, *, generator: Any = None) -> Tensor:
    """``input`` filled in place with integers uniform in [from_, to): ``floor(u * (to - from_)) + from_`` of
    UniformReal's u with the next seed pair, computed in float64 (MindSpore's InplaceRandom, Ascend only
    there; its numbers are not reproduced)."""
    input = _input_tensor("random_", input)
    _no_generator("random_", generator)
    for name, value in (("from_", from_), ("to", to)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InvalidTypeError(f"For 'random_', '{name}' must be an int, but got {type(value)}.")
    dtype = input.dtype.name
    if to is None:
        to = RANDOM_FLOAT_LIMITS[dtype] if dtype in RANDOM_FLOAT_LIMITS else int(np.iinfo(input.dtype.np_type).max) + 1
    if from_ >= to:
        raise InvalidValueError(f"For 'random_', 'from_' must be less than 'to', but got from_={from_}, to={to}.")
    u = cast(_sampler(UniformReal, None, "random_")(input.shape), mstype.float64)
    values = minimum(floor(u * float(to - from_)) + float(from_), float(to - 1))
    return hold_value(input, cast(values, input.dtype))


def standard_normal(shape: Any, seed: Any = None) -> Tensor:
    """float32 N(0, 1) values of ``shape`` (StandardNormal)."""
    return _sampler(StandardNormal, seed, "standard_normal")(shape)


def normal(shape: Any, mean: Any, stddev: Any, seed: Any = None) -> Tensor:
    """``StandardNormal(shape) * stddev + mean`` (mean and stddev broadcast with the shape)."""
    mean, stddev = _check_param("normal", "mean", mean), _check_param("normal", "stddev", stddev)
    op = _sampler(StandardNormal, seed, "normal")
    return op(_check_shape(shape)) * stddev + mean


def uniform(shape: Any, minval: Any, maxval: Any, seed: Any = None, dtype: Any = mstype.float32) -> Tensor:
    """Values uniform in [minval, maxval): int32 from UniformInt, float32 as ``UniformReal(shape) *
    (maxval - minval) + minval``; minval, maxval and ``dtype`` of one type."""
    if not isinstance(minval, Tensor) or not isinstance(maxval, Tensor):
        raise InvalidTypeError("For functional operator[uniform], the input[minval] and input[maxval] must be a "
                               "Tensor.")
    if _dtype_name(dtype) not in ("int32", "float32"):
        raise InvalidTypeError(f"The 'uniform' doesn't support '{dtype}' and expect to receive [mindspore.int32, "
                               f"mindspore.float32].")
    for value in (minval, maxval):
        if value.dtype.name != _dtype_name(dtype):
            raise InvalidTypeError(f"For 'uniform', the value data type '{dtype}' is not consistent with assigned "
                                   f"tensor data type {value.dtype}.")
    if _dtype_name(dtype) == "int32":
        return _sampler(UniformInt, seed, "uniform")(shape, minval, maxval)
    return _sampler(UniformReal, seed, "uniform")(shape) * (maxval - minval) + minval


def _float_draw(name: str, sampler: type, seed: Any, shape: tuple, dtype: Any) -> Tensor:
    """One draw of ``sampler`` of ``shape``, cast to the float ``dtype``: the body of rand/randn and their _like
    forms, which differ only in their default dtype."""
    dtype = _check_dtype(name, dtype, FLOAT_TYPES, "a float")
    return cast(_sampler(sampler, seed, name)(shape), dtype)


def rand(*size: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """Values uniform in [0, 1) of ``size`` (UniformReal), cast to a float ``dtype`` (float32)."""
    return _float_draw("rand", UniformReal, seed, _generate_shapes(size), mstype.float32 if dtype is None else dtype)


def rand_like(input: Any, seed: Any = None, *, dtype: Any = None) -> Tensor:
    """``rand`` of input's shape, in a float ``dtype`` (input's)."""
    input = _input_tensor("rand_like", input)
    return _float_draw("rand_like", UniformReal, seed, input.shape, input.dtype if dtype is None else dtype)


def randn(*size: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """N(0, 1) values of ``size`` (StandardNormal), cast to a float ``dtype`` (float32)."""
    return _float_draw("randn", StandardNormal, seed, _generate_shapes(size),
                       mstype.float32 if dtype is None else dtype)


def randn_like(input: Any, seed: Any = None, *, dtype: Any = None) -> Tensor:
    """``randn`` of input's shape, in a float ``dtype`` (float32, whatever input's dtype)."""
    input = _input_tensor("randn_like", input)
    return _float_draw("randn_like", StandardNormal, seed, input.shape, mstype.float32 if dtype is None else dtype)


def randint(low: Any, high: Any, size: Any, seed: Any = None, *, dtype: Any = None) -> Tensor:
    """Integers uniform in [low, high) of ``size`` (a tuple; UniformInt), cast to an int ``dtype``
    (int64)."""
    dtype = mstype.int64 if dtype is None else _check_dtype("randint", dtype, INT_TYPES, "an int")
    if not isinstance(size, tuple):
        raise InvalidValueError(f"For 'randint', the input 'size' must be a tuple, but got {size}.")
    low, high = _check_bound("randint_like", "low", low), _check_bound("randint_like", "high", high)
    op = _sampler(UniformInt, seed, "randint")
    return cast(op(size, Tensor(low, mstype.int32), Tensor(high, mstype.int32)), dtype)


def randint_like(input: Any, low: Any, high: Any, seed: Any = None, *, dtype: Any = None) -> Tensor:
    """``randint`` of input's shape, in an int ``dtype`` (input's)."""
    input = _input_tensor("randint_like", input)
    dtype = _check_dtype("randint_like", input.dtype if dtype is None else dtype, INT_TYPES, "an int")
    low, high = _check_bound("randint_like", "low", low), _check_bound("randint_like", "high", high)
    op = _sampler(UniformInt, seed, "randint_like")
    return cast(op(input.shape, Tensor(low, mstype.int32), Tensor(high, mstype.int32)), dtype)


# multinomial without replacement: log(u) / (weight + MULTINOMIAL_EPS), MindSpore's guard against zero weights
MULTINOMIAL_EPS = 1e-6


def multinomial(input: Any, num_samples: Any, replacement: Any = True, seed: Any = None) -> Tensor:
    """``num_samples`` indices per row of ``input`` (1-d or 2-d weights), as MindSpore builds it: with
    replacement the Multinomial primitive (MindSpore CPU's numbers); without, the ``num_samples`` largest
    ``log(u) / (input + 1e-6)`` of one UniformReal draw per weight (TopK's indices)."""
    if len(input.shape) not in (1, 2):
        raise InvalidValueError(f"For 'multinomial', the dimension of inputs must be 1d or 2d, but got "
                                f"{len(input.shape)}.")
    if seed is not None:
        _check_seed("multinomial", "seed", seed)
    if replacement:
        return _sampler(Multinomial, seed, "multinomial")(input, num_samples)
    cols = input.shape[-1]
    if cols < num_samples:
        raise InvalidValueError(f"For 'multinomial', the 'num_samples' must be less than the last dimension of "
                                f"input without 'replacement', but got 'num_samples': {num_samples} and "
                                f"'replacement': {replacement}")
    u = _sampler(UniformReal, seed, "multinomial")((input.size,))
    if len(input.shape) == 2:
        u = reshape(u, input.shape)
    return topk(u.log() / (input + MULTINOMIAL_EPS), num_samples)[1]


def randperm(n: Any, seed: Any = 0, offset: Any = 0, dtype: Any = mstype.int64) -> Tensor:
    """``RandpermV2(seed, offset, dtype)(n)``: a permutation of 0 .. n-1 (MindSpore CPU's numbers)."""
    return RandpermV2(seed, offset, dtype)(n)


def standard_laplace(shape: Any, seed: Any = None) -> Tensor:
    """float32 Laplace(0, 1) values of ``shape`` (StandardLaplace)."""
    return _sampler(StandardLaplace, seed, "standard_laplace")(shape)


def laplace(shape: Any, mean: Any, lambda_param: Any, seed: Any = None) -> Tensor:
    """``StandardLaplace(shape) * lambda_param + mean``; mean and lambda_param float32 Tensors."""
    for value in (mean, lambda_param):
        dtype = getattr(value, "dtype", type(value).__name__)
        if not isinstance(value, Tensor) or value.dtype.name != "float32":
            raise InvalidTypeError(f"For 'laplace', the data type of input must be the same as the data type "
                                   f"Float32, but got {dtype}.")
    op = _sampler(StandardLaplace, seed, "laplace")
    return op(_check_shape(shape)) * lambda_param + mean


def random_categorical(logits: Any, num_sample: Any, seed: Any = 0, dtype: Any = mstype.int64) -> Tensor:
    """``RandomCategorical(dtype)(logits, num_sample, seed)``, a new primitive per call (MindSpore's
    ``random_cache`` False: its engine starts afresh)."""
    return RandomCategorical(dtype)(logits, num_sample, seed)


# --- mint's generator forms (bodies of frontend/mint/_routes.py's routes) ----------------------------
# MindSpore 2.10 serves these on Ascend only (its generator's Philox stream, not reproduced); here they
# draw the samplers above with the next seed pair of ``set_seed``, so a seeded run repeats.

def _no_device(owner: str, device: Any) -> None:
    """One emulated device: ``device`` must be left None."""
    if device is not None:
        raise InvalidParamError(f"{owner}: device={device!r} is not supported here; leave it None (the one "
                                f"emulated device)")


def _mint_rand(op: Any, size: tuple = (), generator: Any = None, dtype: Any = None, device: Any = None) -> Tensor:
    """``mint.rand(*size, generator=None, dtype=None, device=None)`` / ``mint.randn``: ``op(*size, dtype)``."""
    _no_generator("rand", generator)
    _no_device("rand", device)
    return op(*size, dtype=dtype)


def _mint_randint(op: Any, args: tuple = (), generator: Any = None, dtype: Any = None, device: Any = None) -> Tensor:
    """``mint.randint([low=0,] high, size, *, generator=None, dtype=None, device=None)``: int64 by default."""
    _no_generator("randint", generator)
    _no_device("randint", device)
    if len(args) not in (2, 3):
        raise TypeError(f"randint() takes 2 or 3 positional arguments (low, high, size) but {len(args)} were given")
    low, high, size = (0, *args) if len(args) == 2 else args
    if isinstance(size, list):
        size = tuple(size)
    return op(low, high, size, dtype=dtype)


def _mint_randint_like(op: Any, args: tuple = (), dtype: Any = None, device: Any = None) -> Tensor:
    """``mint.randint_like(input, [low=0,] high, *, dtype=None, device=None)``: input's dtype by default."""
    _no_device("randint_like", device)
    if len(args) not in (2, 3):
        raise TypeError(f"randint_like() takes 2 or 3 positional arguments (input, low, high) but {len(args)} were "
                        f"given")
    input, low, high = (args[0], 0, args[1]) if len(args) == 2 else args
    return op(input, low, high, dtype=dtype)


def _mint_randn_like(op: Any, input: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``mint.randn_like(input, *, dtype=None, device=None)``: N(0, 1) in input's dtype by default."""
    _no_device("randn_like", device)
    input = _input_tensor("randn_like", input)
    return op(input, dtype=input.dtype if dtype is None else dtype)


def _mint_normal(op: Any, mean: Any = 0.0, std: Any = 1.0, size: Any = None, generator: Any = None) -> Tensor:
    """``mint.normal(mean=0.0, std=1.0, size=None, generator=None)``: ``size`` values when mean and std are
    numbers, else their broadcast shape (``ops.normal`` of it)."""
    _no_generator("normal", generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        shape = tuple(np.broadcast_shapes(getattr(mean, "shape", ()), getattr(std, "shape", ())))
        return op(shape, mean, std) if shape else reshape(op((1,), mean, std), ())
    if size is None:
        raise InvalidTypeError("For 'normal', 'size' must be given when 'mean' and 'std' are numbers.")
    return op(tuple(size), mean, std)


def _mint_multinomial(op: Any, input: Any, num_samples: Any, replacement: Any = False,
                      generator: Any = None) -> Tensor:
    """``mint.multinomial(input, num_samples, replacement=False, *, generator=None)``: int64 indices."""
    _no_generator("multinomial", generator)
    return cast(op(input, num_samples, replacement), mstype.int64)


def _mint_randperm(op: Any, n: Any, generator: Any = None, dtype: Any = mstype.int64) -> Tensor:
    """``mint.randperm(n, *, generator=None, dtype=mstype.int64)``: RandpermV2 with a seed from ``set_seed``."""
    _no_generator("randperm", generator)
    if not hasattr(dtype, "name") and repr(dtype).startswith("mindspore."):     # the table's recorded default
        dtype = getattr(mstype, repr(dtype).rsplit(".", 1)[1])
    return op(n, -1, 0, dtype)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.random_func", name, __all__)
