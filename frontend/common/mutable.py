"""``mindspore.mutable``: marks a graph input as a variable rather than a constant of the graph.

In MindSpore a scalar, tuple or list argument of a graph is a constant (a new value compiles a new
graph) unless wrapped by ``mutable``, which makes it a variable input. The emulator's phase cache keys
a graph by such Python values and recaptures on a new one, which yields the same outputs, so ``mutable``
here checks its argument as MindSpore does (its TypeError and text) and returns it unchanged: the
marking changes how often a graph is compiled, not what it computes.
"""
from __future__ import annotations

from typing import Any

from .tensor import Tensor

__all__ = ["mutable"]


def _valid(value: Any, seen: set[int]) -> bool:
    """MindSpore's element check: Tensors, ints, floats (bools) nested in tuples, lists and dicts, no
    self-reference."""
    if id(value) in seen:
        return False
    if isinstance(value, (tuple, list, dict)):
        inner = seen | {id(value)}
        return all(_valid(v, inner) for v in (value.values() if isinstance(value, dict) else value))
    return isinstance(value, (Tensor, int, float))


def mutable(input_data: Any, dynamic_len: bool = False) -> Any:
    """``input_data`` itself, after MindSpore's checks of its type and of ``dynamic_len``."""
    if not _valid(input_data, set()):
        raise TypeError(
            f"For 'mutable', the 'input_data' should be one of (bool, int, float, Tensor, tuple, list, dict) "
            f"or their nested structures with no self-reference, but got {type(input_data).__name__}: {input_data}.")
    if not isinstance(dynamic_len, bool):
        raise TypeError(f"For 'mutable', the second input should be bool, but got: {type(input_data).__name__}")
    if dynamic_len and not isinstance(input_data, (tuple, list)):
        raise TypeError(f"For 'mutable', when the variable_len is True, the first input should be list or tuple, "
                        f"but got: {type(input_data).__name__}")
    return input_data
