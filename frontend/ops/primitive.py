"""``mindspore.ops.primitive``: the primitive base classes and the decorators users write their own
primitives with (``Primitive``, ``PrimitiveWithInfer``, ``PrimitiveWithCheck``, ``prim_attr_register``,
``constexpr``).

A user's primitive has no kernel here: MindSpore runs the kernel named like the primitive, so a call
runs the supported primitive of that name (``class Add(PrimitiveWithInfer)`` is ``ops.Add``) and any
other name fails with UnsupportedOpError (see ``Primitive.__call__``). ``constexpr`` functions run at
once on their constant arguments, as MindSpore runs them while compiling.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from ascendemu.errors import InvalidParamError

from ..ops import Primitive
from ..tensor import Tensor

__all__ = ["Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register", "constexpr"]


class PrimitiveWithInfer(Primitive):
    """A primitive whose subclass infers its outputs (``infer_shape``/``infer_dtype``/``infer_value``)."""

    def infer_shape(self, *args: Any) -> Any:
        return None

    def infer_dtype(self, *args: Any) -> Any:
        return None

    def infer_value(self, *args: Any) -> Any:
        return None


class PrimitiveWithCheck(Primitive):
    """A primitive whose subclass checks its inputs (``check_shape``/``check_dtype``)."""

    def check_shape(self, *args: Any) -> None:
        return None

    def check_dtype(self, *args: Any) -> None:
        return None


def prim_attr_register(fn: Callable) -> Callable:
    """Decorates a primitive's ``__init__``: initialises the primitive under its class name and records
    every argument (defaults included) as an attribute (``attrs``, ``init_attrs``), then runs ``fn``."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def deco(self: Primitive, *args: Any, **kwargs: Any) -> None:
        Primitive.__init__(self, getattr(type(self), "substitute_name", type(self).__name__))
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name, value in list(bound.arguments.items())[1:]:
            self.add_prim_attr(name, value)
            self.init_attrs[name] = value
        fn(self, *args, **kwargs)
    deco.decorated_func = fn
    return deco


def constexpr(fn: Callable | None = None, get_instance: bool = True, name: str | None = None,
              reuse_result: bool = True, check: bool = True) -> Any:
    """``@constexpr``: a function of constants (shapes, numbers, dtypes) that MindSpore evaluates while
    compiling. Here it runs when called, since a GRAPH_MODE capture runs Python with constant
    shapes; a tensor computed inside the graph is refused, as MindSpore refuses a variable input."""
    def deco(func: Callable) -> Any:
        label = name or func.__name__

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            if check:
                for i, value in enumerate([*args, *kwargs.values()]):
                    if isinstance(value, Tensor) and value.is_symbolic:
                        raise InvalidParamError(
                            f"constexpr function {label}: argument {i} is a tensor computed in the graph; a "
                            "constexpr function runs at compile time on constants (shapes, numbers, dtypes) only")
            return func(*args, **kwargs)
        return run if get_instance else (lambda: run)
    return deco if fn is None else deco(fn)
