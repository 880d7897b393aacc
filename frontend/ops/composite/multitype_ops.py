"""``mindspore.ops.composite`` graph-internal functions over Python values and tensors: ``tail``,
``zip_operation``, ``hyper_add`` and the augmented assignments ``augassign_add`` ... ``augassign_mod``
(what ``x += y`` compiles to in a MindSpore graph).

MindSpore makes them MetaFuncGraphs that its graph compiler expands; here they are plain Python over
the same values (tensors go through the ops, so a GRAPH_MODE capture records them), with MindSpore's
results: ``augassign_div(7, 2)`` is 3.5, ``hyper_add`` adds the leaves of two nested sequences pairwise
(stopping at the shorter, results as tuples), ``tail((1, 2, 3))`` is ``(2, 3)``.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

from ...common.tensor import Tensor
from ..function.math_func import add, div, floor_divide, floor_mod, mul, sub
from ..primitive import ValuePrimitive

__all__ = ["tail", "zip_operation", "hyper_add", "augassign_add", "augassign_sub", "augassign_mul",
           "augassign_div", "augassign_floordiv", "augassign_mod"]




def _two(label: str, args: tuple) -> tuple:
    if len(args) != 2:
        raise TypeError(f"For '{label}', the number of inputs should be 2, but got {len(args)}.")
    return args


def _tail(*args: Any) -> tuple:
    if len(args) != 1 or not isinstance(args[0], (tuple, list)):
        got = type(args[0]).__name__ if len(args) == 1 else f"{len(args)} inputs"
        raise TypeError(f"For 'tail', the input should be a tuple or list, but got {got}.")
    return tuple(args[0][1:])


def _zip(*args: Any) -> tuple:
    if not args:
        raise ValueError("For 'zip_operation', there is at least one input.")
    for a in args:
        if not isinstance(a, (tuple, list)):
            raise TypeError(f"For 'zip_operation', all inputs should be tuples or lists, but got "
                            f"{type(a).__name__}.")
    return tuple(zip(*args))


def _hyper_add(*args: Any) -> Any:
    x, y = _two("hyper_add", args)
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        return tuple(_hyper_add(a, b) for a, b in zip(x, y))
    return add(x, y) if isinstance(x, Tensor) or isinstance(y, Tensor) else x + y


def _augassign(label: str, tensor_op: Callable, python_op: Callable) -> Callable[..., Any]:
    """``x <op>= y``: the tensor op when either side is a Tensor, else Python's operator (tuples and
    lists concatenate under ``+=``)."""
    def run(*args: Any) -> Any:
        x, y = _two(label, args)
        return tensor_op(x, y) if isinstance(x, Tensor) or isinstance(y, Tensor) else python_op(x, y)
    return run


tail = ValuePrimitive("tail", _tail, "The elements of a tuple or list after the first, as a tuple.")
zip_operation = ValuePrimitive("zip_operation", _zip, "The tuples of the inputs' elements, zipped.")
hyper_add = ValuePrimitive("hyper_add", _hyper_add, "x + y, over the leaves of nested sequences.")
augassign_add = ValuePrimitive("augassign_add", _augassign("augassign_add", add, operator.add), "x += y.")
augassign_sub = ValuePrimitive("augassign_sub", _augassign("augassign_sub", sub, operator.sub), "x -= y.")
augassign_mul = ValuePrimitive("augassign_mul", _augassign("augassign_mul", mul, operator.mul), "x *= y.")
augassign_div = ValuePrimitive("augassign_div", _augassign("augassign_div", div, operator.truediv), "x /= y.")
augassign_floordiv = ValuePrimitive("augassign_floordiv",
                                   _augassign("augassign_floordiv", floor_divide, operator.floordiv), "x //= y.")
augassign_mod = ValuePrimitive("augassign_mod", _augassign("augassign_mod", floor_mod, operator.mod), "x %= y.")
