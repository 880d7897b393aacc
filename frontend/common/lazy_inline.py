"""``mindspore.lazy_inline`` (also ``mindspore.common.lazy_inline``): MindSpore 2.10's decorator of a Cell's
``__init__`` that marks the cell reusable, so its compiler builds one subgraph per distinct block instead of
inlining every layer (MindFormers' Llama decorates its layers and its training cells with it).

Our capture and graph passes are already linear in the number of layers (docs/ARCHITECTURE.md, "Compile time
vs graph size"), so the mark changes no compilation here: the decorated ``__init__`` runs unchanged and the
cell carries what MindSpore sets on it (``cell_init_args``; ``no_inline = False`` under ``policy="front"``), so
decorated code imports and runs and computes what it computes undecorated. Arguments and errors are
MindSpore's (tools/record_lazy_inline.py).
"""
from __future__ import annotations

import inspect
from functools import wraps
from typing import Any, Callable

from ascendemu.errors import InvalidValueError

__all__ = ["lazy_inline"]


class LazyInlineValueError(InvalidValueError):
    """A lazy_inline argument MindSpore refuses (MindSpore raises ValueError)."""


def _check_target(fn: Any) -> None:
    if inspect.isclass(fn):
        raise LazyInlineValueError(f"The lazy_inline should decorate the __init__ function, not the class "
                                   f"{fn.__name__}. Put @lazy_inline on the class's __init__.")
    if fn.__name__ != "__init__":
        raise LazyInlineValueError(f"The lazy_inline should decorate the __init__ function, not the function: "
                                   f"{fn.__name__}. Put @lazy_inline on the cell's __init__.")


def _init_args(cell: Any, bound: list[Any], attrs: Any) -> list[Any] | Any:
    """The values MindSpore names the reusable block by: the ``__init__`` arguments, or the ``attrs``."""
    if attrs is None:
        return bound
    if isinstance(attrs, list):
        if any(not isinstance(a, str) for a in attrs):
            raise LazyInlineValueError("attr must be a string; give lazy_inline(attrs=) attribute names")
        return [getattr(cell, a) for a in attrs if hasattr(cell, a)]
    if isinstance(attrs, str):
        return getattr(cell, attrs) if hasattr(cell, attrs) else []
    raise LazyInlineValueError("attrs must be list or string; give lazy_inline(attrs=) a name or a list of names")


def lazy_inline(fn: Callable | None = None, attrs: list[str] | str | None = None,
                policy: str | None = None) -> Callable:
    """Mark a Cell's ``__init__`` reusable, as MindSpore does (module docstring); returns the wrapped
    ``__init__``, or a decorator when called with ``attrs``/``policy`` only."""

    def wrap(init: Callable) -> Callable:
        _check_target(init)

        @wraps(init)
        def lazy_inline_init(self: Any, *args: Any, **kwargs: Any) -> None:
            bound = inspect.signature(init).bind(self, *args, **kwargs).arguments
            values = [v for k, v in bound.items() if k != "self"]
            init(self, *args, **kwargs)
            if policy == "front":
                self.no_inline = False
            elif policy is not None:
                raise LazyInlineValueError("policy must be None or 'front'")
            # MindSpore's text: "lazy_inline_" + class name + str(dict_values) of the arguments
            named = _init_args(self, values, attrs)
            shown = f"dict_values({named!r})" if attrs is None else str(named)
            self.cell_init_args = f"lazy_inline_{type(self).__name__}{shown}"

        return lazy_inline_init

    return wrap(fn) if fn is not None else wrap
