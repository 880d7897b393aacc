"""``mindspore.ops.operations.other_ops``: the primitives of state and gradient flow (Assign,
StopGradient, Depend), and MindSpore's deprecated ``identity``."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError
from ascendemu.graph.capture import current_tracer

from ...capture import tracer_value
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..primitive import _Op, _cast, _tensor, apply_op
from .array_ops import Identity  # noqa: F401  (MindSpore serves it from other_ops too)
from .array_ops import BroadcastTo


class StopGradient(_Op):
    """The identity, except that no gradient flows back through it."""

    def __call__(self, x: Any) -> Tensor:
        return apply_op("StopGradient", [x])[0]


class Depend(_Op):
    """``Depend()(value, expr)`` returns ``value``. It orders side effects in MindSpore's graphs; here a
    graph's parameter updates always happen after everything that reads the old values."""

    def __call__(self, value: Any, expr: Any) -> Any:
        return value


class Assign(_Op):
    """``Assign()(variable, value)``: the Parameter holds ``value`` from here on (in a graph: later reads
    see it and the parameter's device memory receives it when the graph has run)."""

    def __call__(self, variable: Any, value: Any) -> Tensor:
        if not isinstance(variable, Parameter):
            raise InvalidParamError(f"Assign: variable must be a Parameter, got {type(variable).__name__}")
        value = _tensor(value)
        if value.dtype != variable.dtype:
            value = _cast(value, variable.dtype)
        if value.shape != variable.shape:
            value = BroadcastTo(variable.shape)(value)
        tracer = current_tracer()
        if tracer is None:
            variable.set_data(value)
            return variable
        vid = tracer_value(tracer, value)
        tracer.assign(variable, variable.name, variable.desc, vid)
        return Tensor._symbolic(tracer, vid)


class identity(_Op):
    """``P.identity()(x)`` returns x itself (MindSpore's deprecated side-effect-propagating identity;
    ``nn.Identity``/``ops.Identity`` are the current names); ``ops.identity`` is an instance."""

    def __call__(self, x: Any) -> Any:
        return x


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.other_ops", name, __all__)
