"""``mindspore.numpy``: the NumPy-style functions the model zoo calls, on ``mindspore.ops``.

Array creation (``zeros``, ``ones``, ``full``, ``arange``, ``linspace``, ``eye``, ``array`` ...) builds
the values on the host, as constants of the graph being captured or tensors in PyNative mode, with
MindSpore's dtype defaults (float32; int32 for integer ``full``/``arange``). Everything else is one or
a few ops of ``mindspore.ops``, so it runs on the device, records graph nodes and has gradients like
any op. Names outside this subset fail with UnsupportedOpError.
"""
from __future__ import annotations

import math
import types
from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError

from . import ops
from .common import dtype as mstype
from .common.dtype import bool_, float16, float32, int32
from .common.tensor import Tensor
from .unsupported import unsupported

pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None


def _dtype(dtype: Any, default: mstype.Type) -> mstype.Type:
    return default if dtype is None else mstype.to_type(dtype)


def _scalar_dtype(*values: Any) -> mstype.Type:
    """int32 when every value is an int (bools excluded), else float32 (MindSpore's inference)."""
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values if v is not None)
    return int32 if ints else float32


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool) and shape >= 0:
        return (int(shape),)
    if isinstance(shape, (tuple, list)) and all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                                and d >= 0 for d in shape):
        return tuple(int(d) for d in shape)
    raise InvalidParamError(f"shape={shape!r} must be an int or a tuple/list of non-negative ints")


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


# ------------------------------------------------------------------------------------- creation

# mindspore.numpy's dtypes for Python data (numpy kind -> dtype): ints int32, floats float32, as
# MindSpore 2.10 gives them (a Tensor keeps its own dtype)
PYTHON_DATA_DTYPES = {"i": int32, "u": int32, "f": float32, "b": bool_}


def array(obj: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Tensor:
    data = np.array(obj.asnumpy() if isinstance(obj, Tensor) else obj, ndmin=ndmin)
    if dtype is None and not isinstance(obj, Tensor):
        dtype = PYTHON_DATA_DTYPES.get(data.dtype.kind)
    return Tensor(data, None if dtype is None else mstype.to_type(dtype))


def asarray(a: Any, dtype: Any = None) -> Tensor:
    if isinstance(a, Tensor) and (dtype is None or mstype.to_type(dtype) == a.dtype):
        return a
    return array(a, dtype)


def zeros(shape: Any, dtype: Any = float32) -> Tensor:
    return Tensor(np.zeros(_shape(shape)), _dtype(dtype, float32))


def ones(shape: Any, dtype: Any = float32) -> Tensor:
    return Tensor(np.ones(_shape(shape)), _dtype(dtype, float32))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    if isinstance(fill_value, Tensor):
        return ops.broadcast_to(fill_value if dtype is None else ops.cast(fill_value, dtype), _shape(shape))
    return Tensor(np.full(_shape(shape), fill_value), _dtype(dtype, _scalar_dtype(fill_value)))


def zeros_like(a: Any, dtype: Any = None) -> Tensor:
    return ops.zeros_like(_t(a), dtype=dtype)


def ones_like(a: Any, dtype: Any = None) -> Tensor:
    return ops.ones_like(_t(a), dtype=dtype)


def full_like(a: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    a = _t(a)
    return ops.fill(dtype or a.dtype, a.shape, fill_value)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Tensor:
    """``arange(stop)`` or ``arange(start, stop, step)``; int32 when the bounds are ints, else float32."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise InvalidParamError("arange: step must not be 0")
    return Tensor(np.arange(start, stop, step), _dtype(dtype, _scalar_dtype(start, stop, step)))


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0) -> Any:
    if axis != 0:
        raise InvalidParamError(f"linspace: axis={axis} is not supported; use axis=0")
    values, step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True)
    out = Tensor(values, _dtype(dtype, float32))
    return (out, step) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float32) -> Tensor:
    return Tensor(np.eye(N, M, k), _dtype(dtype, float32))


# ---------------------------------------------------------------------------------- elementwise

add, subtract, multiply, divide, true_divide = ops.add, ops.sub, ops.mul, ops.div, ops.div
power, maximum, minimum, negative, absolute = ops.pow, ops.maximum, ops.minimum, ops.neg, ops.abs
exp, log, sqrt, square = ops.exp, ops.log, ops.sqrt, ops.square
equal, not_equal, greater, greater_equal, less, less_equal = (ops.equal, ops.not_equal, ops.greater,
                                                                ops.greater_equal, ops.less, ops.less_equal)


def clip(a: Any, a_min: Any, a_max: Any) -> Tensor:
    """``a`` limited to [a_min, a_max] (either may be None), as maximum then minimum."""
    if a_min is None and a_max is None:
        raise InvalidParamError("clip: a_min and a_max cannot both be None")
    out = _t(a)
    if a_min is not None:
        out = ops.maximum(out, a_min)
    return out if a_max is None else ops.minimum(out, a_max)


# ----------------------------------------------------------------------------------- reductions

def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, initial: Any = None) -> Tensor:
    a = _t(a) if dtype is None else ops.cast(_t(a), dtype)
    out = ops.sum(a, axis, keepdims)
    return out if initial is None else out + initial


def mean(a: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    a = _t(a) if dtype is None else ops.cast(_t(a), dtype)
    return ops.mean(a, axis, keepdims)


def amax(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return ops.amax(_t(a), axis, keepdims)


# ---------------------------------------------------------------------------------------- shape

def reshape(x: Any, new_shape: Any) -> Tensor:
    return ops.reshape(_t(x), (new_shape,) if isinstance(new_shape, int) else tuple(new_shape))


def ravel(x: Any) -> Tensor:
    return ops.reshape(_t(x), (-1,))


def transpose(a: Any, axes: Sequence[int] | None = None) -> Tensor:
    a = _t(a)
    return ops.transpose(a, tuple(reversed(range(a.ndim))) if axes is None else tuple(axes))


def expand_dims(a: Any, axis: int) -> Tensor:
    return ops.expand_dims(_t(a), axis)


def squeeze(a: Any, axis: Any = None) -> Tensor:
    return ops.squeeze(_t(a), axis)


def broadcast_to(array: Any, shape: Any) -> Tensor:
    return ops.broadcast_to(_t(array), _shape(shape))


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Tensor:
    if axis is None:
        return ops.concat([ravel(a) for a in arrays], 0)
    return ops.concat([_t(a) for a in arrays], axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> Tensor:
    """Arrays of one shape joined along a new ``axis`` (ExpandDims + Concat)."""
    if not isinstance(arrays, (tuple, list)) or not arrays:
        raise InvalidParamError("stack: takes a non-empty tuple or list of tensors")
    ndim = _t(arrays[0]).ndim
    axis = axis + ndim + 1 if axis < 0 else axis
    return ops.concat([ops.expand_dims(_t(a), axis) for a in arrays], axis)


# ------------------------------------------------------------------------------- linear algebra

def matmul(x1: Any, x2: Any) -> Tensor:
    return ops.matmul(_t(x1), _t(x2))


def dot(a: Any, b: Any) -> Tensor:
    """1-D . 1-D is the inner product; 2-D . 2-D the matrix product; N-D . 1-D contracts the last axis."""
    a, b = _t(a), _t(b)
    if a.ndim == 1 and b.ndim == 1:
        return ops.sum(ops.mul(a, b))
    if a.ndim >= 2 and b.ndim == 1:
        return ops.squeeze(ops.matmul(a, ops.expand_dims(b, 1)), -1)
    if a.ndim == 2 and b.ndim == 2:
        return ops.matmul(a, b)
    raise InvalidParamError(f"dot: shapes {a.shape} and {b.shape} are not supported; use 1-D/2-D operands "
                            "or matmul")


SUPPORTED = tuple(name for name, value in list(globals().items())
                  if not name.startswith("_") and isinstance(value, types.FunctionType) and name != "unsupported"
                  ) + ("float16", "float32", "int32", "bool_")
__all__ = list(SUPPORTED) + ["pi", "e", "inf", "nan", "newaxis"]


def __getattr__(name: str) -> Any:
    raise unsupported("numpy", name, SUPPORTED)
