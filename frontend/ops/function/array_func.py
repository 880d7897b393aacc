"""``mindspore.ops.function.array_func``: the functional forms of the array ops (``ops.reshape``,
``ops.concat``, ``ops.split``, ``ops.max`` ...), each built from the primitives of ``operations``."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, check_int

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _flag, _int_tuple, _static_int, defined_here
from ..operations.array_ops import (BroadcastTo, Cast, Concat, ExpandDims, Fill, Gather, GatherD, GatherNd, Ones,
                                    Reshape, ScatterNd, Select, Shape, Slice, Sort, Split, Squeeze, Stack, StridedSlice,
                                    Tile, Transpose, TupleToArray, UnsortedSegmentSum, Unstack, Zeros)
from ..operations.nn_ops import Flatten, OneHot
from ..composite_op import install_composite_functions
from ..primitive import _tensor, apply_op


def cast(input: Any, dtype: Any) -> Tensor:
    return Cast()(input, dtype)


def transpose(input: Any, dims: Sequence[int]) -> Tensor:
    return Transpose()(input, dims)


def concat(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    return Concat(axis)(tensors)


cat = concat


def gather(input_params: Any, input_indices: Any, axis: int, batch_dims: int = 0) -> Tensor:
    return Gather(batch_dims)(input_params, input_indices, axis)


def split(tensor: Any, split_size_or_sections: Any, axis: int = 0) -> tuple[Tensor, ...]:
    """Parts of ``split_size_or_sections`` elements along ``axis`` (the last part holds the rest),
    or one part per size of a list that sums to the axis length. Built as MindSpore builds it:
    Split when the parts are equal, otherwise Slices."""
    x = _tensor(tensor)
    if not x.ndim:
        raise InvalidParamError("split: tensor must have rank >= 1, got a scalar")
    axis = check_int(axis, "split: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    dim = x.shape[axis]

    def part(start: int, length: int) -> Tensor:
        return slice(x, tuple(start if d == axis else 0 for d in range(x.ndim)),
                     tuple(length if d == axis else -1 for d in range(x.ndim)))

    if isinstance(split_size_or_sections, int) and not isinstance(split_size_or_sections, bool):
        size = check_int(split_size_or_sections, "split: split_size_or_sections", minimum=1)
        if dim <= size or dim % size == 0:
            return Split(axis, builtins.max(dim // size, 1))(x)
        head = dim // size * size
        return Split(axis, dim // size)(part(0, head)) + (part(head, dim - head),)
    sections = _int_tuple("split: split_size_or_sections", split_size_or_sections)
    if any(s < 0 for s in sections) or builtins.sum(sections) != dim:
        raise InvalidParamError(f"split: split_size_or_sections={list(sections)} must be sizes >= 0 that sum to "
                                f"dimension {axis} of the tensor's shape {x.shape} ({dim})")
    starts = np.cumsum((0,) + sections[:-1])
    return tuple(part(int(start), s) for start, s in zip(starts, sections))


def slice(input_x: Any, begin: Sequence[int], size: Sequence[int]) -> Tensor:
    return Slice()(input_x, begin, size)


def unsorted_segment_sum(input_x: Any, segment_ids: Any, num_segments: Any) -> Tensor:
    return UnsortedSegmentSum()(input_x, segment_ids, num_segments)


def reshape(input: Any, shape: Sequence[int]) -> Tensor:
    return Reshape()(input, shape)


def expand_dims(input_x: Any, axis: int) -> Tensor:
    return ExpandDims()(input_x, axis)


def unsqueeze(input: Any, dim: int) -> Tensor:
    """``ops.unsqueeze(input, dim)``: ``expand_dims`` under PyTorch's argument names, as MindSpore has it."""
    return ExpandDims()(input, dim)


def squeeze(input: Any, axis: Any = None) -> Tensor:
    return Squeeze(() if axis is None else axis)(input)


def flatten(input: Any, order: str = "C", *, start_dim: int = 1, end_dim: int = -1) -> Tensor:
    x = _tensor(input)
    if order != "C":
        raise InvalidParamError(f"flatten: order={order!r} is not supported; use 'C'")
    if (start_dim, end_dim % builtins.max(x.ndim, 1)) == (1, builtins.max(x.ndim - 1, 0)):
        return Flatten()(x)
    end = end_dim % x.ndim
    merged = int(np.prod(x.shape[start_dim:end + 1], dtype=np.int64))
    return reshape(x, x.shape[:start_dim] + (merged,) + x.shape[end + 1:])


def broadcast_to(input: Any, shape: Sequence[int]) -> Tensor:
    return BroadcastTo(shape)(input)


def select(condition: Any, input: Any, other: Any) -> Tensor:
    return Select()(condition, input, other)


def fill(type: Any, shape: Sequence[int], value: Any) -> Tensor:
    return Fill()(type, shape, value)


def ones_like(input: Any, *, dtype: Any = None) -> Tensor:
    x = _tensor(input)
    return fill(dtype or x.dtype, x.shape, 1)


def zeros_like(input: Any, *, dtype: Any = None) -> Tensor:
    x = _tensor(input)
    return fill(dtype or x.dtype, x.shape, 0)


def one_hot(indices: Any, depth: int, on_value: Any = 1, off_value: Any = 0, axis: int = -1) -> Tensor:
    return OneHot(axis)(indices, depth, on_value, off_value)


def tile(input: Any, dims: Sequence[int]) -> Tensor:
    return Tile()(input, dims)


def strided_slice(input_x: Any, begin: Sequence[int], end: Sequence[int], strides: Sequence[int],
                  begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                  shrink_axis_mask: int = 0) -> Tensor:
    return StridedSlice(begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)(
        input_x, begin, end, strides)


def gather_nd(input_x: Any, indices: Any) -> Tensor:
    return GatherNd()(input_x, indices)


def scatter_nd(indices: Any, updates: Any, shape: Sequence[int]) -> Tensor:
    return ScatterNd()(indices, updates, shape)


def _arg_reduce(op: str, input: Any, axis: Any, keepdims: Any) -> tuple[Tensor, ...]:
    """An arg reduction along ``axis``; None: over every element (the flattened tensor, index into it)."""
    x = _tensor(input)
    keep = _flag(f"{op}: keepdims", keepdims)
    if axis is None:
        return apply_op(op, [reshape(x, (-1,))], {"axis": 0, "keep_dims": False})
    return apply_op(op, [x], {"axis": check_int(axis, f"{op}: axis"), "keep_dims": keep})


def argmax(input: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg_reduce("Argmax", input, dim, keepdim)[0]


def _extremum(op: str, input: Any, axis: Any, keepdims: Any, initial: Any, where: Any) -> tuple[Tensor, Tensor]:
    if initial is not None or where is not None:
        raise FeatureNotSupportedError(f"{op}: initial= and where= are not supported; mask the input first")
    index, values = _arg_reduce(op, input, axis, keepdims)
    return values, index


def max(input: Any, axis: int | None = None, keepdims: bool = False, *, initial: Any = None,
        where: Any = None) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of the maximum along ``axis`` (None: of all elements)."""
    return _extremum("ArgMaxWithValue", input, axis, keepdims, initial, where)


def min(input: Any, axis: int | None = None, keepdims: bool = False, *, initial: Any = None,
        where: Any = None) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of the minimum along ``axis`` (None: of all elements)."""
    return _extremum("ArgMinWithValue", input, axis, keepdims, initial, where)


def topk(input: Any, k: int, dim: int | None = None, largest: bool = True,
         sorted: bool = True) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of the k largest (``largest=False``: smallest) elements along ``dim``
    (default: the last); another dimension is moved last and back with Transposes."""
    x = _tensor(input)
    _flag("topk: sorted", sorted)
    attrs = {"k": _static_int("topk: k", k, 0), "largest": _flag("topk: largest", largest)}
    last = builtins.max(x.ndim - 1, 0)
    axis = last if dim is None else check_int(dim, "topk: dim", minimum=-x.ndim, maximum=last) % builtins.max(x.ndim, 1)
    if axis == last:
        return apply_op("TopK", [x], attrs)
    perm = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
    inverse = tuple(perm.index(d) for d in range(x.ndim))
    values, indices = apply_op("TopK", [transpose(x, perm)], attrs)
    return transpose(values, inverse), transpose(indices, inverse)


def sort(input_x: Any, axis: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    return Sort(axis, descending)(input_x)


def gather_elements(input: Any, dim: int, index: Any) -> Tensor:
    return GatherD()(input, dim, index)


def gather_d(x: Any, dim: int, index: Any) -> Tensor:
    return GatherD()(x, dim, index)


def stack(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    return Stack(axis)(tensors)


def unstack(input_x: Any, axis: int = 0) -> tuple[Tensor, ...]:
    return Unstack(axis)(input_x)


def unbind(input: Any, dim: int = 0) -> tuple[Tensor, ...]:
    return Unstack(dim)(input)


def zeros(size: Any, dtype: Any = None) -> Tensor:
    return Zeros()(size, dtype or mstype.float32)


def ones(shape: Any, dtype: Any = None) -> Tensor:
    return Ones()(shape, dtype or mstype.float32)


def shape(input_x: Any) -> tuple[int, ...]:
    return Shape()(input_x)


def tuple_to_array(input_x: Any) -> Tensor:
    return TupleToArray()(input_x)


def scalar_to_tensor(input_x: Any, dtype: Any = mstype.float32) -> Tensor:
    """A 0-d constant tensor of a Python bool, int or float, of ``dtype`` (default float32)."""
    if not isinstance(input_x, (bool, int, float)):
        raise InvalidParamError(f"scalar_to_tensor: input_x must be a bool, an int or a float, got "
                                f"{type(input_x).__name__}")
    if not isinstance(dtype, mstype.Type):
        raise InvalidParamError(f"scalar_to_tensor: dtype={dtype!r} must be a mindspore number type such as "
                                f"mstype.float32")
    return Tensor(input_x, dtype)


install_composite_functions(globals(), "mindspore.ops.function.array_func")

__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.array_func", name, __all__)
