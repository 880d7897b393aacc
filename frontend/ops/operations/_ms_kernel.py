"""``mindspore.ops.kernel`` (and its deprecated alias ``ms_kernel``): the decorator of MindSpore's
hybrid DSL. A decorated function is marked as a kernel (``ms_kernel_flag``, what ``Custom(func_type=
"hybrid")`` requires) and, called directly, runs as Python over numpy arrays with the DSL's
intrinsics (``output_tensor``, ``allocate``, ``grid``, ``serial`` ...) as MindSpore runs it on the host.
The intrinsics are given to a copy of the function's globals, never written into the user's module
(MindSpore patches the module's globals)."""
from __future__ import annotations

import functools
import itertools
import json
import math
import types
from typing import Any, Callable

import numpy as np

from ... import log

# the attribute MindSpore marks a hybrid kernel with (Custom checks it)
MS_KERNEL_FLAG = "ms_kernel_flag"


def _allocate(shape: Any, dtype: str = "float32", scope: str = "global") -> np.ndarray:
    """A zero buffer (``output_tensor``/``allocate``); ``scope`` only matters on the device."""
    del scope
    return np.zeros(shape).astype(dtype)


def _grid(extents: Any) -> Any:
    return itertools.product(*(range(e) for e in extents))


class _Scope:
    """The DSL's ``with attr(...)`` / ``block_realize(...)`` scopes: nothing to do on the host."""

    def __call__(self, *args: Any, **kwargs: Any) -> "_Scope":
        return self

    def __enter__(self) -> "_Scope":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


# The hybrid DSL's intrinsics as numpy/Python (MindSpore's intrin_runtime table).
INTRINSICS: dict[str, Any] = {
    "allocate": _allocate, "output_tensor": _allocate,
    "range": range, "serial": range, "vectorize": range, "parallel": range, "reduce": range, "grid": _grid,
    "attr": _Scope(), "block_realize": _Scope(),
    "sqrt": np.sqrt, "sign": np.sign, "log": np.log, "tanh": np.tanh, "exp": np.exp, "abs": np.abs,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "float16": np.float16,
    "float32": np.float32, "float64": np.float64, "power": np.power,
    "rsqrt": lambda x: np.ones_like(x) / np.sqrt(x), "erf": np.vectorize(math.erf),
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "sin": np.sin, "cos": np.cos,
    "atan": np.arctan, "atan2": np.arctan2, "expm1": np.expm1, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "round": np.round, "ceil_div": lambda a, b: (a + b - 1) // b,
}


def kernel(fn: Callable | None = None, reg_info: Any = None, compile_attrs: Any = None) -> Any:
    """Mark ``fn`` as a hybrid-DSL kernel; called directly it runs on the host with the intrinsics."""
    compile_attrs = {} if compile_attrs is None else compile_attrs
    if not isinstance(compile_attrs, dict):
        raise TypeError(f"The input 'compile_attrs' of @kernel must be a dict, but get a {type(compile_attrs)}")
    if reg_info is not None and not isinstance(reg_info, (str, dict, tuple)):
        raise TypeError(f"The input 'reg_info' of @kernel should be one of str, dict and tuple, but get a "
                        f"{type(reg_info)}")

    def wrap(func: Callable) -> Callable:
        runnable = types.FunctionType(func.__code__, {**func.__globals__, **INTRINSICS}, func.__name__,
                                      func.__defaults__, func.__closure__)

        @functools.wraps(func)
        def run(*args: Any) -> Any:
            return runnable(*args)

        setattr(run, MS_KERNEL_FLAG, True)
        setattr(run, "compile_attrs", json.dumps(compile_attrs))
        if reg_info is not None:
            setattr(run, "reg_info", reg_info)
        return run

    return wrap(fn) if fn is not None else wrap


def ms_kernel(fn: Callable | None = None, reg_info: Any = None, compile_attrs: Any = None) -> Any:
    """The deprecated name of :func:`kernel`."""
    log.warning("'ms_kernel' is deprecated from version 1.8 and will be removed in a future version, use 'kernel' "
                "instead.")
    return kernel(fn, reg_info, compile_attrs)
