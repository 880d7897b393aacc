"""``mindspore.ops.operations.manually_defined._inner``: ``ScalarCast``, MindSpore's deprecated cast of
a Python scalar (``int(x)``/``float(x)``/``bool(x)`` in its words)."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ....common import dtype as mstype
from ....unsupported import unsupported
from ..._utils import defined_here
from ...primitive import _Op

# the dtypes ScalarCast casts to, and the Python type each gives
SCALAR_CAST_TYPES = {"int64": int, "float64": float, "bool": bool}


class ScalarCast(_Op):
    """``ScalarCast()(input_x, input_y)``: the number ``input_x`` as the Python scalar of dtype
    ``input_y`` (mindspore.int64, float64 or bool). As MindSpore (numpy's cast), a float goes to int64
    by truncation toward zero and an out-of-range one wraps to int64's minimum."""

    def __call__(self, input_x: Any, input_y: Any) -> Any:
        return _scalar_cast(input_x, input_y)


def _scalar_cast(input_x: Any, input_y: Any) -> Any:
    """ScalarCast's check and cast (``ops.scalar_cast`` calls it too)."""
    if not isinstance(input_x, (bool, numbers.Number)) or isinstance(input_x, np.ndarray):
        raise TypeError(f"For 'ScalarCast', the type of 'x' should be one of '['bool', 'Number']', but got type "
                        f"'{type(input_x).__name__}'.")
    target = input_y.name if isinstance(input_y, mstype.Type) else None
    if target not in SCALAR_CAST_TYPES:
        raise ValueError(f"For 'ScalarCast', the supported type is in the list: [mindspore.int64, mindspore.float64, "
                         f"mindspore.bool], but got {input_y}")
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(input_x).astype(mstype.dtype_to_nptype(input_y)).item()


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.manually_defined._inner", name, __all__)
