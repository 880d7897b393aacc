"""``Tensor.__setitem__`` (``x[index] = value``), as a value the graph computes.

MindSpore compiles ``x[index] = value`` in a graph (static_graph.md, view + in-place: ``ms_x[slice(0,
1)] = -1``) and runs it in PyNative. Shapes are static while a graph is captured, so the elements an
index selects are known on the host: numpy's indexing of the element positions gives them, in the
order numpy assigns them; ``value``, broadcast to the selected shape, is spread over the tensor by one
Gather of a constant source map and chosen by one Select of a constant mask (differentiable, any
dtype, the same kernels in both modes). The tensor then holds the result (``tensor.hold_value``, as
the in-place methods do; a Parameter is assigned): later reads in the function see the update, and a
graph returning it returns the new value. A graph input's caller-side tensor keeps its data (MindSpore
writes it back; not done here).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import TensorIndexError

from . import ops
from .common.tensor import Tensor, hold_value, tensor_operator_registry

__all__ = ["setitem"]


def setitem(x: Tensor, index: Any, value: Any) -> None:
    """``x[index] = value``: ``x`` rebound to ``x`` with the selected elements replaced."""
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(i.asnumpy() if isinstance(i, Tensor) else i for i in items)
    try:
        positions = np.arange(int(np.prod(x.shape, dtype=np.int64))).reshape(x.shape)[items]
    except IndexError as exc:
        raise TensorIndexError(f"{exc} (tensor of shape {x.shape})") from None
    positions = np.asarray(positions).reshape(-1)
    if positions.size == 0:
        return
    size = int(np.prod(x.shape, dtype=np.int64))
    mask = np.zeros(size, bool)
    mask[positions] = True
    source = np.zeros(size, np.int32)              # element i of x takes updates[source[i]] where mask[i]
    source[positions] = np.arange(positions.size, dtype=np.int32)
    updates = value if isinstance(value, Tensor) else Tensor(np.asarray(value), dtype=x.dtype)
    if updates.dtype != x.dtype:
        updates = ops.cast(updates, x.dtype)
    updates = ops.reshape(ops.broadcast_to(updates, np.shape(np.empty(x.shape)[items])), (positions.size,))
    spread = ops.reshape(ops.gather(updates, Tensor(source), 0), x.shape)
    new = ops.select(Tensor(mask.reshape(x.shape)), spread, x)
    hold_value(x, new)


# Tensor.__setitem__ (x[...] = v) runs setitem
tensor_operator_registry.register("setitem", setitem)
