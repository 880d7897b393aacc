"""``mindspore.ops.function.parameter_func``: ``ops.assign``, and ``ops.depend`` beside it."""
from __future__ import annotations

from typing import Any

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..operations.math_ops import AssignAdd, AssignSub
from ..operations.other_ops import Assign
from .array_func import index_add  # noqa: F401  array breadth 2: composed there, defined here by MindSpore


def depend(value: Any, expr: Any) -> Any:
    return value


def assign(variable: Any, value: Any) -> Tensor:
    return Assign()(variable, value)


def assign_add(variable: Any, value: Any) -> Tensor:
    """variable += value, for a Parameter (an Assign of the sum)."""
    return AssignAdd()(variable, value)


def assign_sub(variable: Any, value: Any) -> Tensor:
    """variable -= value, for a Parameter (an Assign of the difference)."""
    return AssignSub()(variable, value)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.parameter_func", name, __all__)
