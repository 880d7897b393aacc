"""``mindspore.ops.operations.debug_ops``: ``Print``, where MindSpore defines it."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError
from ascendemu.graph.capture import current_tracer

from ...capture import tracer_value
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..primitive import _Op


class Print(_Op):
    """``Print()(*input_x)``: strings as they are, tensors as MindSpore prints them
    (``Tensor(shape=[2], dtype=Float32, value= [...])``), one per line. In PyNative they print at once;
    in a captured graph the tensors become extra graph outputs and print on the host after the graph
    has run (a gradient's replayed forward does not print twice). Python numbers and tuples print as
    the tensors MindSpore converts them to."""

    def __call__(self, *input_x: Any) -> None:
        items = []
        for item in input_x:
            if not isinstance(item, (str, Tensor, bool, int, float, tuple, list)):
                raise InvalidParamError(f"Print: cannot print a {type(item).__name__}; give tensors, strings, "
                                        f"numbers, tuples or lists")
            items.append(item if isinstance(item, (str, Tensor)) else repr(_print_tensor(item)))
        tracer = current_tracer()
        if tracer is None:
            print("\n".join(item if isinstance(item, str) else repr(item) for item in items), flush=True)
            return
        tracer.print_(tuple(item if isinstance(item, str) else tracer_value(tracer, item) for item in items))


def _print_tensor(value: Any) -> Tensor:
    """A Python number, tuple or list as Print shows it: ints as Int32, floats as Float32 (what MindSpore
    2.10 printed; a Tensor made from them elsewhere is Int64 / Float32)."""
    data = np.asarray(value)
    return Tensor(data.astype(PRINTED_PYTHON_DTYPES.get(data.dtype.kind, data.dtype)))


# numpy kind of a Python value -> the dtype Print shows it as
PRINTED_PYTHON_DTYPES = {"i": np.int32, "u": np.int32, "f": np.float32}


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.debug_ops", name, __all__)
