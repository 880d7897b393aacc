"""``mindspore.ops.operations._sequence_ops``: MindSpore's primitives over Python sequences. Here:
``TensorToTuple`` (``ops.shape_mul`` is an instance MindSpore keeps in ``ops.functional``)."""
from __future__ import annotations

from typing import Any

from ascendemu.graph.capture import data_dependent_error

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..primitive import _Op


class TensorToTuple(_Op):
    """``TensorToTuple()(x)``: a 1-D tensor's values as a tuple of Python numbers. As MindSpore's
    ``infer_value``: anything else (not a Tensor, or 2-D and more) gives None, and a 0-d tensor is a
    TypeError (its value is not iterable). In a captured graph the values are unknown (an error)."""

    def __call__(self, x: Any) -> tuple | None:
        if not isinstance(x, Tensor) or x.ndim > 1:
            return None
        if x.is_symbolic:
            raise data_dependent_error("TensorToTuple", "its input")
        values = x.asnumpy().tolist()
        if not isinstance(values, list):
            raise TypeError(f"'{type(values).__name__}' object is not iterable")
        return tuple(values)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations._sequence_ops", name, __all__)
