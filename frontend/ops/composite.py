"""``mindspore.ops.composite`` (``C``): higher-order functions over Python structure, as the zoo's
optimizers and gradient wrappers use them.

``MultitypeFuncGraph`` is a function overloaded on its arguments' kinds (``@f.register("Tensor",
"Number")``); ``HyperMap`` applies a function over the elements of tuples or lists (nested ones
too), ``Map`` over one level; ``partial`` binds leading arguments. They only arrange Python calls: in
a GRAPH_MODE capture the calls they make record the ops, so nothing here has a kernel of its own.
``GradOperation`` and the functions of ``mindspore.ops`` are reached from here too, as in MindSpore.
"""
from __future__ import annotations

import functools
import numbers
from typing import Any, Callable

import numpy as np

from ascendemu.errors import InvalidParamError

from .. import ops as _ops
from ..grad import GradOperation
from ..tensor import Tensor
from ..unsupported import unsupported


def _is_function(x: Any) -> bool:
    return callable(x) and not isinstance(x, (type, Tensor))


# The type names MindSpore's `register` takes, and which Python values each one matches (MindSpore's
# `get_py_obj_dtype` + `issubclass_`: Bool and Int and Float are Numbers; a Parameter is a Tensor).
TYPE_NAMES: dict[str, Callable[[Any], bool]] = {
    "Tensor": lambda x: isinstance(x, Tensor),
    "Number": lambda x: isinstance(x, (numbers.Number, np.bool_)),
    "Bool": lambda x: isinstance(x, (bool, np.bool_)),
    "Int": lambda x: isinstance(x, (int, np.integer)) and not isinstance(x, bool),
    "Float": lambda x: isinstance(x, (float, np.floating)),
    "String": lambda x: isinstance(x, str),
    "Tuple": lambda x: isinstance(x, tuple),
    "List": lambda x: isinstance(x, list),
    "Dictionary": lambda x: isinstance(x, dict),
    "None": lambda x: x is None,
    "NoneType": lambda x: x is None,
    "Function": _is_function,
    # sparse tensors do not exist here: functions registered for them are never chosen
    "RowTensor": lambda x: False,
    "COOTensor": lambda x: False,
    "CSRTensor": lambda x: False,
}


def _kind(x: Any) -> str:
    for name in ("Tensor", "Bool", "Int", "Float", "String", "Tuple", "List", "Dictionary", "None", "Function"):
        if TYPE_NAMES[name](x):
            return name
    return type(x).__name__


class MultitypeFuncGraph:
    """``MultitypeFuncGraph(name)``: a function chosen by the kinds of its arguments.

    ``@f.register("Tensor", "Tensor")`` adds an overload; a call runs the first registered overload
    whose type names all match (MindSpore's order), and raises InvalidParamError when none does.
    """

    def __init__(self, name: str, read_value: bool = False, doc_url: str = ""):
        if not isinstance(name, str):
            raise InvalidParamError(f"MultitypeFuncGraph: name must be a str, got {name!r}")
        self.name = name
        self.read_value = bool(read_value)
        self.entries: list[tuple[tuple[str, ...], Callable]] = []

    def register(self, *type_names: str) -> Callable[[Callable], Callable]:
        for t in type_names:
            if not isinstance(t, str):
                raise InvalidParamError(f"MultitypeFuncGraph {self.name!r}: register takes type names (str), "
                                        f"got {t!r}")
            if t not in TYPE_NAMES:
                raise InvalidParamError(f"MultitypeFuncGraph {self.name!r}: unknown type name {t!r}; use one of "
                                        f"{', '.join(TYPE_NAMES)}")

        def deco(fn: Callable) -> Callable:
            self.entries.append((tuple(type_names), fn))
            return fn
        return deco

    def __call__(self, *args: Any) -> Any:
        for names, fn in self.entries:
            if len(names) == len(args) and all(TYPE_NAMES[n](a) for n, a in zip(names, args)):
                return fn(*args)
        raise InvalidParamError(f"MultitypeFuncGraph {self.name!r}: no registered function matches the arguments "
                         f"({', '.join(_kind(a) for a in args)}); registered: "
                         f"{[list(names) for names, _ in self.entries]}")

    def __repr__(self) -> str:
        return f"MultitypeFuncGraph({self.name!r})"


def _check_ops(owner: str, ops: Any) -> None:
    if ops is not None and not isinstance(ops, MultitypeFuncGraph):
        raise InvalidParamError(f"{owner}: ops must be a MultitypeFuncGraph or None, got {type(ops).__name__}")


class HyperMap:
    """``HyperMap(ops=None)(*args)``: ``ops`` applied to the leaves of same-shaped nested tuples/lists.

    With ``ops=None`` the function is the first argument. Where the arguments are tuples (or lists),
    all of them must be tuples (lists) of one length, and the result is a tuple (list) of the
    function mapped over their elements, recursively; otherwise the function is called on them.
    """

    def __init__(self, ops: MultitypeFuncGraph | None = None, reverse: bool = False):
        _check_ops("HyperMap", ops)
        self.ops, self.reverse = ops, bool(reverse)

    def __call__(self, *args: Any) -> Any:
        fn, args = (args[0], args[1:]) if self.ops is None else (self.ops, args)
        if not callable(fn):
            raise InvalidParamError(f"HyperMap: the function must be callable, got {type(fn).__name__}")
        return self._map(fn, args)

    def _map(self, fn: Callable, args: tuple) -> Any:
        sequences = [a for a in args if isinstance(a, (tuple, list))]
        if not sequences:
            return fn(*args)
        kind = list if isinstance(sequences[0], list) else tuple
        if any(not isinstance(a, kind) for a in args) or len({len(a) for a in args}) != 1:
            got = [f"{_kind(a)}[{len(a)}]" if isinstance(a, (tuple, list)) else _kind(a) for a in args]
            raise InvalidParamError(f"HyperMap cannot match up the arguments: where one is a {kind.__name__}, all "
                                    f"must be {kind.__name__}s of one length; got {got}")
        return kind(self._map(fn, items) for items in zip(*args))


class Map:
    """``Map(ops=None)(*args)``: ``ops`` applied to the elements of same-length tuples (one level)."""

    def __init__(self, ops: MultitypeFuncGraph | None = None, reverse: bool = False):
        _check_ops("Map", ops)
        self.ops, self.reverse = ops, bool(reverse)

    def __call__(self, *args: Any) -> tuple:
        fn, args = (args[0], args[1:]) if self.ops is None else (self.ops, args)
        if any(not isinstance(a, (tuple, list)) for a in args) or len({len(a) for a in args}) > 1:
            raise InvalidParamError(f"Map: the inputs must be tuples or lists of one length, got "
                                    f"{[_kind(a) for a in args]}")
        return tuple(map(fn, *args))


def partial(func: Callable, *args: Any) -> Callable:
    """``ops.partial(func, *args)``: ``func`` with its leading arguments bound."""
    if not callable(func):
        raise InvalidParamError(f"partial: func must be callable, got {type(func).__name__}")
    return functools.partial(func, *args)


def add_flags(fn: Any = None, **flags: bool) -> Any:
    """Record compile flags on a function or Cell (``fn._mindspore_flags``); they change nothing here."""
    def deco(target: Any) -> Any:
        if not hasattr(target, "_mindspore_flags"):
            target._mindspore_flags = {}
        target._mindspore_flags.update(flags)
        return target
    return deco if fn is None else deco(fn)


OWN = ("MultitypeFuncGraph", "HyperMap", "Map", "partial", "add_flags", "GradOperation")


def __getattr__(name: str) -> Any:
    """MindSpore's composite also re-exports functions of ``mindspore.ops`` (``C.zeros_like``)."""
    if name in _ops.FUNCTIONS:
        return getattr(_ops, name)
    raise unsupported("ops.composite", name, OWN + _ops.FUNCTIONS)
