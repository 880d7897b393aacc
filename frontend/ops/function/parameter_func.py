"""``mindspore.ops.function.parameter_func``: ``ops.assign``, and ``ops.depend`` beside it."""
from __future__ import annotations

from typing import Any

from ...common.tensor import Tensor, hold_value
from ...unsupported import unsupported
from .._utils import defined_here
from ..operations.math_ops import AssignAdd, AssignSub
from ..operations.other_ops import Assign, _assigned_value
from ..primitive import apply_op
from .array_func import index_add  # noqa: F401  array breadth 2: composed there, defined here by MindSpore


def depend(value: Any, expr: Any) -> Any:
    return value


def assign(variable: Any, value: Any) -> Tensor:
    """``variable`` holds ``value`` from here on. A tensor a graph computed is written in place by MindSpore's
    Assign kernel, which keeps its memory (and a folded value's constant) until the write: recorded as that
    kernel (e.g. ``_TrainGradAccuStepCell`` clearing its scaled gradients after the update)."""
    if isinstance(variable, Tensor) and variable.is_symbolic and not variable.is_parameter:
        return hold_value(variable, apply_op("Assign", [variable, _assigned_value(variable, value)])[0])
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
