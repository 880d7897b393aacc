"""Round-3 graph internals MindSpore exports from ``mindspore.ops`` (``ops.functional``): ``switch``,
``switch_layer`` and ``is_tensor_bool_cond`` (``Primitive`` instances there), and the composite ones of
``composite.multitype_ops``, gathered in :data:`INTERNALS` for ``ops.functional`` to serve.

MindSpore's ``Switch`` chooses a branch while its graph compiles or runs; here a condition known on
the host (a bool, a concrete tensor) picks the branch, and a condition only the running graph knows
(a tensor of a GRAPH_MODE capture) selects between two tensor branches elementwise (``Select``), which
is the same value.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ..common.tensor import Tensor
from .composite import multitype_ops
from .function.array_func import select
from .function.math_func import equal, floor_mod
from .primitive import Primitive

__all__ = ["INTERNALS"]


class _Internal(Primitive):
    """A primitive instance of MindSpore's functional module computed in Python (``Prim[<name>]``)."""

    def __init__(self, name: str, fn: Any, doc: str) -> None:
        super().__init__(name)
        self._fn = fn
        self.__doc__ = doc

    def __call__(self, *args: Any) -> Any:
        return self._fn(*args)


def _bool_cond(*args: Any) -> bool:
    """A tensor may be a condition if it holds one element (shape () or (1,)), as MindSpore checks."""
    if len(args) != 1:
        raise TypeError(f"For 'IsTensorBoolCond', the number of inputs should be 1, but got {len(args)}.")
    x = args[0]
    if isinstance(x, Tensor) and tuple(x.shape) not in ((), (1,)):
        raise ValueError(f"Only tensor which shape is () or (1,) can be converted to bool, but got tensor shape "
                         f"is ({', '.join(map(str, x.shape))})")
    return True


def _switch(*args: Any) -> Any:
    if len(args) != 3:
        raise TypeError(f"For 'Switch', the number of inputs should be 3, but got {len(args)}.")
    cond, true_branch, false_branch = args
    if isinstance(cond, Tensor) and cond.is_symbolic:
        _bool_cond(cond)
        if not (isinstance(true_branch, Tensor) and isinstance(false_branch, Tensor)):
            raise InvalidParamError("switch on a condition only the running graph knows needs two Tensor branches "
                                    "here (it selects between them); use Python's if on a host value otherwise")
        return select(cond.reshape(()), true_branch, false_branch)
    if isinstance(cond, Tensor):
        _bool_cond(cond)
        cond = bool(np.asarray(cond.asnumpy()).reshape(()))
    return true_branch if cond else false_branch


def _switch_layer(*args: Any) -> Any:
    """``switch_layer(index, branches)``: the branch at ``index`` (a negative index counts from the end,
    as MindSpore allows); an index only the running graph knows selects among every branch's result."""
    if len(args) != 2:
        raise TypeError(f"For 'switch_layer', the number of inputs should be 2, but got {len(args)}.")
    index, branches = args
    if not isinstance(branches, (tuple, list)) or not branches:
        raise TypeError(f"For 'switch_layer', the branches should be a non-empty tuple of functions, but got "
                        f"{type(branches).__name__}.")
    if isinstance(index, Tensor) and index.is_symbolic:
        return _selected_branch(index, tuple(branches))
    if isinstance(index, Tensor):
        index = int(np.asarray(index.asnumpy()).reshape(()))
    if not -len(branches) <= index < len(branches):
        raise IndexError(f"For 'switch_layer', the index {index} is out of range for {len(branches)} branches.")
    return branches[index]


def _selected_branch(index: Tensor, branches: tuple) -> Any:
    """The branch a graph-computed index picks, as one function: every branch runs on the call's
    arguments and the index selects among their (tensor) results, counting a negative index from the end."""
    def run(*args: Any) -> Any:
        outs = [branch(*args) for branch in branches]
        if not all(isinstance(o, Tensor) for o in outs):
            raise InvalidParamError("switch_layer on a graph-computed index needs branches that return one Tensor")
        wrapped = floor_mod(index.reshape(()), len(branches))
        chosen = outs[-1]
        for k in range(len(branches) - 2, -1, -1):
            chosen = select(equal(wrapped, k), outs[k], chosen)
        return chosen
    return run


INTERNALS: dict[str, Any] = {
    "switch": _Internal("Switch", _switch, "The true branch if cond holds, else the false one."),
    "switch_layer": _Internal("switch_layer", _switch_layer, "The branch at index of a tuple of functions."),
    "is_tensor_bool_cond": _Internal("IsTensorBoolCond", _bool_cond, "Whether a tensor may be a condition."),
    **{name: getattr(multitype_ops, name) for name in multitype_ops.__all__},
}
