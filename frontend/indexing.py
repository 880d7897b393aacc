"""``Tensor.__getitem__``: ints, slices with any step (negative too), Ellipsis, None, and one int
tensor or list of ints (a Gather along the dimension it indexes).

A concrete tensor (PyNative, or a literal during capture) indexes its host data with numpy, whose
result MindSpore gives for every index numpy accepts (bool masks included), without a kernel per
distinct index. A symbolic tensor, or a Parameter during capture (GRAPH_MODE, a gradient's forward:
its values live on the device and it may be differentiated), lowers the index to ops: the basic part to one
StridedSlice (begin/end/strides and MindSpore's masks: an int shrinks its dimension, None is a new
axis, Ellipsis stands for the dimensions left over) and an index tensor to a Gather on its output
dimension, so the graph differentiates through both (StridedSliceGrad, UnsortedSegmentSum).
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, TensorIndexError
from ascendemu.graph.capture import GraphCaptureError, current_tracer

from . import ops
from .common.tensor import Tensor, tensor_operator_registry

__all__ = ["getitem"]


def getitem(x: Tensor, index: Any) -> Tensor:
    """``x[index]``."""
    items = index if isinstance(index, tuple) else (index,)
    if x.is_symbolic or (x.is_parameter and current_tracer() is not None):
        return _lower(x, items)
    try:
        return Tensor(x._data[tuple(i.asnumpy() if isinstance(i, Tensor) else i for i in items)])
    except IndexError as exc:
        raise TensorIndexError(f"{exc} (tensor of shape {x.shape})") from None


def _array_index(item: Any, size: int) -> Tensor | None:
    """An int tensor index (a Gather), or None for a basic index item. Concrete indices are checked and
    their negative entries wrapped, as numpy does; bool masks select a data-dependent number of
    elements, which a static graph cannot express."""
    if isinstance(item, (list, np.ndarray)) or (isinstance(item, Tensor) and not item.is_symbolic and item.ndim):
        data = np.asarray(item.asnumpy() if isinstance(item, Tensor) else item)
        if data.dtype == np.bool_:
            raise GraphCaptureError("indexing with a bool mask selects a data-dependent number of elements, "
                                    "which GRAPH_MODE cannot express; use ops.select or ops.masked_fill instead")
        if data.dtype.kind not in "iu":
            raise InvalidParamError(f"index array of dtype {data.dtype} must hold ints")
        bad = data[(data < -size) | (data >= size)]
        if bad.size:
            raise TensorIndexError(f"index {int(bad.flat[0])} is out of bounds for a dimension with size {size}")
        return Tensor(np.where(data < 0, data + size, data).astype(np.int32))
    if isinstance(item, Tensor):
        if item.dtype.name == "bool":
            raise GraphCaptureError("indexing with a bool tensor selects a data-dependent number of elements, "
                                    "which GRAPH_MODE cannot express; use ops.select instead")
        if item.is_symbolic:
            return item
    return None


def _is_int(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def _lower(x: Tensor, items: tuple) -> Tensor:
    # a concrete 0-d int tensor is a static int
    items = tuple(i.item() if isinstance(i, Tensor) and not i.is_symbolic and not i.ndim
                  and i.dtype.name == "int32" else i for i in items)
    indexing = [i for i in items if i is not None and i is not Ellipsis]
    if len(indexing) > x.ndim:
        raise TensorIndexError(f"too many indices for a tensor of shape {x.shape}: {len(indexing)} were indexed")
    if builtins.sum(i is Ellipsis for i in items) > 1:
        raise InvalidParamError("an index can only have a single Ellipsis ('...')")
    if not x.ndim:                              # a scalar: only new axes
        return ops.reshape(x, (1,) * builtins.sum(i is None for i in items))
    begin, end, strides, masks = [], [], [], dict.fromkeys(ops._MASKS, 0)
    gather = None               # (position in items, index tensor)
    whole = True                # every item takes its dimensions whole: no StridedSlice needed
    dim = 0                     # the dimension of x the next item indexes
    for pos, item in enumerate(items):
        bit = 1 << pos
        if item is Ellipsis:
            masks["ellipsis_mask"] |= bit
            dim += x.ndim - len(indexing)
            begin.append(0), end.append(0), strides.append(1)
            continue
        if item is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
            whole = False
            continue
        size = x.shape[dim]
        array = _array_index(item, size)
        if array is not None:
            if gather is not None:
                raise FeatureNotSupportedError("only one index tensor or list per index is supported; index "
                                               "again for the next dimension")
            gather = (pos, array)
            item = builtins.slice(None)
        if isinstance(item, builtins.slice):
            step = 1 if item.step is None else _int(item.step)
            if step == 0:
                raise InvalidParamError("slice step cannot be zero")
            for value, name, values in ((item.start, "begin_mask", begin), (item.stop, "end_mask", end)):
                if value is None:
                    masks[name] |= bit
                values.append(0 if value is None else _int(value))
            strides.append(step)
            whole = whole and item.start is None and item.stop is None and step == 1
        elif _is_int(item):
            if not -size <= item < size:
                raise TensorIndexError(f"index {item} is out of bounds for dimension {dim} with size {size}")
            masks["shrink_axis_mask"] |= bit
            begin.append(int(item)), end.append(int(item) + 1), strides.append(1)
            whole = False
        else:
            raise InvalidParamError(f"a tensor index may hold ints, slices, Ellipsis, None and int tensors; "
                                    f"got {type(item).__name__}")
        dim += 1
    out = x if whole else ops.StridedSlice(**masks)(x, tuple(begin), tuple(end), tuple(strides))
    if gather is None:
        return out
    return ops.gather(out, gather[1], _output_dim(x, items, gather[0]))


def _output_dim(x: Tensor, items: tuple, position: int) -> int:
    """The dimension of the StridedSlice's output that item ``position`` (an index tensor, sliced whole
    there) became. numpy keeps an index tensor's dimensions in place only if the ints indexing along
    with it are adjacent to it; otherwise they go first, which this lowering does not do."""
    ints = [p for p, i in enumerate(items) if _is_int(i)]
    run = sorted(ints + [position])
    if run and run[-1] - run[0] != len(run) - 1:
        raise FeatureNotSupportedError("an index tensor and an int separated by other index items move the "
                                       "indexed dimensions first (numpy's rule), which is not supported; "
                                       "index in two steps")
    indexing = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    dim = 0
    for item in items[:position]:
        if item is Ellipsis:
            dim += x.ndim - indexing
        elif not _is_int(item):
            dim += 1
    return dim


def _int(value: Any) -> int:
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidParamError(f"slice bounds and steps must be ints, got {value!r}")
    return int(value)


# Tensor.__getitem__ (x[...]) runs getitem
tensor_operator_registry.register("getitem", getitem)
