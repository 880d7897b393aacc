"""MindSpore's functional loop primitives ``ForiLoop``, ``WhileLoop`` and ``Scan`` (defined in
``manually_defined.ops_def`` there, which re-exports them from here).

MindSpore runs them as the Python loops their documentation spells out (and compiles them into one
loop of the graph to save compile time); here they are those loops over the same values, so in a
GRAPH_MODE capture the body's ops are recorded once per iteration (the loop is unrolled). A failure
inside the body is a ValueError naming it, as MindSpore wraps it.
"""
from __future__ import annotations

import types
from typing import Any, Callable

from ...common.tensor import Tensor
from ..primitive import Primitive, prim_attr_register

__all__ = ["WhileLoop", "Scan", "ForiLoop"]

FUNCTION_TYPES = (types.FunctionType, types.MethodType)   # MindSpore's check: a Python function or method


def _check_type(label: str, name: str, value: Any, kinds: tuple, shown: str) -> None:
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
        raise TypeError(f"For '{label}', the type of '{name}' should be {shown}, but got '{type(value).__name__}'.")


def _run(body: Callable[[], Any]) -> Any:
    try:
        return body()
    except Exception as exc:   # MindSpore wraps every failure of the user's function
        raise ValueError(f"Invalid loop_func, please check input arguments and return value, error info: {exc}") \
            from exc


class WhileLoop(Primitive):
    """``WhileLoop()(cond_func, loop_func, init_val)``: ``while cond_func(val): val = loop_func(val)``."""

    @prim_attr_register
    def __init__(self):
        """No attributes."""

    def __call__(self, cond_func: Callable, loop_func: Callable, init_val: Any) -> Any:
        _check_type("WhileLoop", "cond_func", cond_func, FUNCTION_TYPES, "function")
        _check_type("WhileLoop", "loop_func", loop_func, FUNCTION_TYPES, "function")

        def loop() -> Any:
            val = init_val
            while cond_func(val):
                val = loop_func(val)
            return val
        return _run(loop)


class Scan(Primitive):
    """``Scan()(loop_func, init, xs, length=None)``: ``carry, y = loop_func(carry, x)`` over ``xs`` (or
    ``length`` times over None); returns ``(carry, [y, ...])``."""

    @prim_attr_register
    def __init__(self):
        """No attributes."""

    def __call__(self, loop_func: Callable, init: Any, xs: Any, length: Any = None, unroll: bool = True) -> tuple:
        _check_type("Scan", "loop_func", loop_func, FUNCTION_TYPES, "function")
        _check_type("Scan", "xs", xs, (list, tuple, type(None)), "list, tuple or None")
        if xs is None:
            _check_type("Scan", "length", length, (int,), "int")
            xs = [None] * length
        if not xs:
            return init, []

        def loop() -> tuple:
            carry, ys = init, []
            for x in xs:
                carry, y = loop_func(carry, x)
                ys.append(y)
            return carry, ys
        return _run(loop)


class ForiLoop(Primitive):
    """``ForiLoop()(lower, upper, loop_func, init_val)``: ``for i in range(lower, upper): val =
    loop_func(i, val)``."""

    @prim_attr_register
    def __init__(self):
        """No attributes."""

    def __call__(self, lower: Any, upper: Any, loop_func: Callable, init_val: Any, unroll: bool = True) -> Any:
        _check_type("ForiLoop", "lower", lower, (int, Tensor), "int or Tensor")
        _check_type("ForiLoop", "upper", upper, (int, Tensor), "int or Tensor")
        _check_type("ForiLoop", "loop_func", loop_func, FUNCTION_TYPES, "function")

        def loop() -> Any:
            val = init_val
            for i in range(int(lower), int(upper)):
                val = loop_func(i, val)
            return val
        return _run(loop)
