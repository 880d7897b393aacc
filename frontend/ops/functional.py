"""``mindspore.ops.functional`` (``F``): the functions of ``mindspore.ops`` (``F.square(x)``), with the
older names MindSpore keeps here (``F.tensor_add``, ``F.tensor_pow``, ``F.make_range``, ...), and the
instances MindSpore defines here (``F.dtype``, ``F.identity``).

It also fills the Tensor's method table (``tensor_operator_registry``, as MindSpore's functional.py
does): ``x + y``, ``x.reshape(...)``, ``x.sum()`` run the ops registered here, so ``common/tensor.py``
never imports ops.
"""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ..common.tensor import tensor_operator_registry
from ..unsupported import unsupported
from . import function
from .composite.base import partial
from .function import (abs, add, argmax, argmin, cast, div, equal, exp, expand_dims, greater, greater_equal, less,
                       less_equal, log, matmul, max, min, mul, neg, not_equal, pow, reshape, sqrt, square, squeeze, sub,
                       transpose)
from .operations import DType, ReduceMax, ReduceMean, ReduceMin, ReduceSum
from .operations import identity as _identity
from .primitive import constexpr, mixed_precision_cast, prim_attr_register
from .tensor_method import install_tensor_methods

# MindSpore's functional names for ops that mindspore.ops calls otherwise (ops/functional.py there).
ALIASES = {"tensor_add": "add", "tensor_sub": "sub", "tensor_mul": "mul", "tensor_div": "div",
           "tensor_pow": "pow", "tensor_exp": "exp", "neg_tensor": "neg", "absolute": "abs",
           "tensor_lt": "less", "tensor_le": "less_equal", "tensor_gt": "greater", "tensor_ge": "greater_equal",
           "reduce_sum": "sum"}

dtype = DType()                 # ops.dtype(x): the tensor's dtype
identity = _identity()          # MindSpore's ops.identity / F.identity: an instance of P.identity


def make_range(start: int, limit: int | None = None, delta: int = 1) -> tuple[int, ...]:
    """``F.make_range(n)`` is ``(0, 1, ..., n - 1)``; ``make_range(start, limit, delta)`` the ints of
    ``range(start, limit, delta)`` as a tuple (a constant of the graph)."""
    if limit is None:
        start, limit = 0, start
    for name, value in (("start", start), ("limit", limit), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidParamError(f"make_range: {name}={value!r} must be an int")
    if delta == 0:
        raise InvalidParamError("make_range: delta must not be 0")
    return tuple(range(start, limit, delta))


def tuple_len(data: tuple | list) -> int:
    """``F.tuple_len(t)``: the number of elements of a tuple or list (a constant of the graph)."""
    if not isinstance(data, (tuple, list)):
        raise InvalidParamError(f"tuple_len: takes a tuple or list, got {type(data).__name__}")
    return len(data)


OWN = ("make_range", "tuple_len")
# the functions of mindspore.ops defined outside ops.function (read through F too)
OTHERS = {"mixed_precision_cast": mixed_precision_cast, "dtype": dtype, "identity": identity,
          "prim_attr_register": prim_attr_register, "constexpr": constexpr, "partial": partial}


def functions() -> tuple[str, ...]:
    """The function names of ``mindspore.ops`` (classes are ``ops.operations``'), with this module's."""
    return function.FUNCTIONS + tuple(OTHERS) + tuple(ALIASES) + OWN


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return list(functions())
    target = ALIASES.get(name, name)
    if target in OTHERS:
        return OTHERS[target]
    if target in function.FUNCTIONS:
        return getattr(function, target)
    raise unsupported("ops.functional", name, functions())


def __dir__() -> list[str]:
    return sorted(functions())


# ------------------------------------------------------------------ the Tensor's operators and methods
for _name, _fn in {"add": add, "sub": sub, "mul": mul, "div": div, "pow": pow, "matmul": matmul, "neg": neg,
                   "abs": abs, "equal": equal, "not_equal": not_equal, "greater": greater,
                   "greater_equal": greater_equal, "less": less, "less_equal": less_equal, "reshape": reshape,
                   "transpose": transpose, "cast": cast, "expand_dims": expand_dims, "squeeze": squeeze,
                   "max": max, "min": min, "argmax": argmax, "argmin": argmin, "exp": exp, "log": log,
                   "sqrt": sqrt, "square": square, "reduce_sum": ReduceSum, "reduce_mean": ReduceMean,
                   "reduce_max": ReduceMax, "reduce_min": ReduceMin, "assign": function.assign}.items():
    tensor_operator_registry.register(_name, _fn)
# the Tensor's methods that are ops with the tensor first (x.split, x.clip, x.add_ ...): ops/tensor_method.py
install_tensor_methods(tensor_operator_registry.register_method)
