"""``mindspore.ops.functional`` (``F``): the functions of ``mindspore.ops`` (``F.square(x)``), with the
older names MindSpore keeps here (``F.tensor_add``, ``F.tensor_pow``, ``F.make_range``, ...).

A view like ``ops.operations``: each name is read from ``mindspore.ops`` when it is used.
"""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from .. import ops as _ops
from ..unsupported import unsupported

# MindSpore's functional names for ops that mindspore.ops calls otherwise (ops/functional.py there).
ALIASES = {"tensor_add": "add", "tensor_sub": "sub", "tensor_mul": "mul", "tensor_div": "div",
           "tensor_pow": "pow", "tensor_exp": "exp", "neg_tensor": "neg", "absolute": "abs",
           "tensor_lt": "less", "tensor_le": "less_equal", "tensor_gt": "greater", "tensor_ge": "greater_equal",
           "reduce_sum": "sum"}


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


def functions() -> tuple[str, ...]:
    """The function names of ``mindspore.ops`` (classes are ``ops.operations``'), with this module's."""
    names = [n for n in _ops.SUPPORTED if n not in _ops.PRIMITIVES and not isinstance(getattr(_ops, n), type)]
    return tuple(names) + tuple(ALIASES) + OWN


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return list(functions())
    target = ALIASES.get(name, name)
    if target in _ops.SUPPORTED and target not in _ops.PRIMITIVES and not isinstance(getattr(_ops, target), type):
        return getattr(_ops, target)
    raise unsupported("ops.functional", name, functions())


def __dir__() -> list[str]:
    return sorted(functions())
