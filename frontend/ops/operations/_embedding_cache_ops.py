"""``mindspore.ops.operations._embedding_cache_ops``: the embedding-cache primitives MindSpore defines there.
Here: ``SubAndFilter`` (deprecated in MindSpore since 2.8, still public), the ids of one cache shard."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _static_int, defined_here
from ..primitive import _Op, _tensor
from .array_ops import _host

# the id dtypes SubAndFilter takes (MindSpore's int_type on CPU: int32 and int64)
SUB_AND_FILTER_DTYPES = (mstype.int32, mstype.int64)


class SubAndFilter(_Op):
    """``SubAndFilter()(input_x, max_num, offset) -> (filter_res, filter_idx)``: ``input_x - offset`` where it
    lies in [0, max_num), and the positions of those elements in the flattened input (x's dtype). Its
    length depends on the values: computed from host data (PyNative, or a constant), as Unique."""

    def __call__(self, input_x: Any, max_num: Any, offset: Any) -> tuple[Tensor, Tensor]:
        x = _tensor(input_x)
        if x.dtype not in SUB_AND_FILTER_DTYPES:
            raise TypeError(f"For primitive[SubAndFilter], the input argument[x] must be a type of {{Tensor[Int32], "
                            f"Tensor[Int64]}}, but got Tensor[{x.dtype}].")
        shifted = _host("SubAndFilter", x).reshape(-1) - _static_int("SubAndFilter: offset", offset)
        keep = np.flatnonzero((shifted >= 0) & (shifted < _static_int("SubAndFilter: max_num", max_num)))
        np_dtype = mstype.dtype_to_nptype(x.dtype)
        return Tensor(shifted[keep].astype(np_dtype), x.dtype), Tensor(keep.astype(np_dtype), x.dtype)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations._embedding_cache_ops", name, __all__)
