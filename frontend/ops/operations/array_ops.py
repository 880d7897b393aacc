"""``mindspore.ops.operations.array_ops``: the array primitives (shape, layout, indexing, creation),
where MindSpore defines them. No-task ops (Reshape, ExpandDims, Squeeze, Flatten) never need a
kernel: in PyNative they reshape the host data directly (``primitive.apply_op``)."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError, check_int
from ascendemu.graph.ir import no_task_shape

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _MASKS, _axes, _flag, _int_tuple, _shape_arg, _static_int, defined_here
from ..primitive import _Op, _binary_operands, _cast, _tensor, apply_op


class Cast(_Op):
    def __call__(self, input_x: Any, dtype: Any) -> Tensor:
        return _cast(input_x, dtype)


class Transpose(_Op):
    def __call__(self, input: Any, dims: Sequence[int]) -> Tensor:
        return apply_op("Transpose", [input], {"perm": tuple(int(p) for p in dims)})[0]


class Concat(_Op):
    def __init__(self, axis: int = 0):
        super().__init__()
        self.axis = int(axis)

    def __call__(self, tensors: Sequence[Any]) -> Tensor:
        if not isinstance(tensors, (tuple, list)) or not tensors:
            raise InvalidParamError("Concat: takes a non-empty tuple or list of tensors")
        return apply_op("Concat", list(tensors), {"axis": self.axis})[0]


class Split(_Op):
    """``Split(axis=0, output_num=1)(x)``: a tuple of ``output_num`` equal parts of x along ``axis``."""

    def __init__(self, axis: int = 0, output_num: int = 1):
        super().__init__()
        self.axis, self.output_num = axis, output_num

    def __call__(self, input_x: Any) -> tuple[Tensor, ...]:
        return apply_op("Split", [input_x], {"axis": self.axis, "output_num": self.output_num})


class Slice(_Op):
    """``Slice()(x, begin, size)``: the block of x starting at ``begin`` with ``size`` elements per
    dimension (-1: up to the end of that dimension)."""

    def __call__(self, input: Any, begin: Sequence[int], size: Sequence[int]) -> Tensor:
        return apply_op("Slice", [input], {"begin": _int_tuple("Slice: begin", begin),
                                             "size": _int_tuple("Slice: size", size)})[0]


class ResizeNearestNeighbor(_Op):
    """``ResizeNearestNeighbor(size, align_corners=False, half_pixel_centers=False)(x)``: NCHW x to
    ``size`` (new_height, new_width) by nearest neighbour (TensorFlow's coordinates, as Ascend)."""

    def __init__(self, size: Any, align_corners: bool = False, half_pixel_centers: bool = False):
        super().__init__()
        if not isinstance(size, (tuple, list)):
            raise InvalidParamError(f"ResizeNearestNeighbor: size={size!r} must be a tuple or list "
                                    f"(new_height, new_width)")
        self.size = _int_tuple("ResizeNearestNeighbor: size", size)
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

    def __call__(self, input_x: Any) -> Tensor:
        return apply_op("ResizeNearestNeighbor", [input_x],
                        {"size": self.size, "align_corners": self.align_corners,
                         "half_pixel_centers": self.half_pixel_centers})[0]


class UnsortedSegmentSum(_Op):
    """``UnsortedSegmentSum()(x, segment_ids, num_segments)``: output[i] is the sum of the rows of x
    whose segment id is i; rows with an id outside [0, num_segments) are dropped."""

    def __call__(self, input_x: Any, segment_ids: Any, num_segments: Any) -> Tensor:
        if isinstance(num_segments, Tensor):
            num_segments = int(num_segments)
        return apply_op("UnsortedSegmentSum", [input_x, segment_ids], {"num_segments": num_segments})[0]


class Gather(_Op):
    def __init__(self, batch_dims: int = 0):
        super().__init__()
        if batch_dims:
            raise InvalidParamError(f"Gather: batch_dims={batch_dims} is not supported; use 0")

    def __call__(self, input_params: Any, input_indices: Any, axis: int) -> Tensor:
        return apply_op("Gather", [input_params, input_indices], {"axis": int(axis)})[0]


class Reshape(_Op):
    def __call__(self, input: Any, shape: Sequence[int]) -> Tensor:
        input = _tensor(input)
        resolved = no_task_shape("Reshape", input.shape, {"shape": tuple(int(s) for s in shape)})
        return apply_op("Reshape", [input], {"shape": resolved})[0]


class ExpandDims(_Op):
    def __call__(self, input_x: Any, axis: int) -> Tensor:
        return apply_op("ExpandDims", [input_x], {"axis": int(axis)})[0]


class Squeeze(_Op):
    def __init__(self, axis: Any = ()):
        super().__init__()
        self.axis = _axes(axis)

    def __call__(self, input: Any) -> Tensor:
        return apply_op("Squeeze", [input], {"axis": self.axis})[0]


class Identity(_Op):
    """``Identity()(x)``: x as a new tensor. MindSpore copies it; here it is a no-task op (a Reshape to
    its own shape) that aliases x, which is the same thing since nothing writes a tensor in place."""

    def __call__(self, input_x: Any) -> Tensor:
        input_x = _tensor(input_x)
        return apply_op("Reshape", [input_x], {"shape": input_x.shape})[0]


class BroadcastTo(_Op):
    def __init__(self, shape: Sequence[int]):
        super().__init__()
        self.shape = tuple(int(s) for s in shape)

    def __call__(self, input: Any) -> Tensor:
        return apply_op("BroadcastTo", [input], {"shape": self.shape})[0]


class Select(_Op):
    """``Select()(cond, x, y)``: x where cond else y, elementwise with broadcasting; the chosen
    values are copied bit for bit (a skipped optimizer update keeps its parameters exactly)."""

    def __call__(self, condition: Any, input: Any, other: Any) -> Tensor:
        input, other = _binary_operands(input, other)
        return apply_op("Select", [condition, input, other])[0]


class Fill(_Op):
    def __call__(self, dtype: Any, dims: Sequence[int], x: Any) -> Tensor:
        return BroadcastTo(tuple(dims))(Tensor(x, mstype.to_type(dtype)))


class OnesLike(_Op):
    def __call__(self, x: Any) -> Tensor:
        x = _tensor(x)
        return Fill()(x.dtype, x.shape, 1)


class ZerosLike(_Op):
    def __call__(self, x: Any) -> Tensor:
        x = _tensor(x)
        return Fill()(x.dtype, x.shape, 0)


class Tile(_Op):
    """``Tile()(input, dims)``: input repeated dims[i] times along dimension i; the shorter of the
    shape and dims is padded with leading 1s."""

    def __call__(self, input: Any, dims: Sequence[int]) -> Tensor:
        return apply_op("Tile", [input], {"multiples": _int_tuple("Tile: dims", dims)})[0]


class StridedSlice(_Op):
    """``StridedSlice(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
    shrink_axis_mask=0)(input_x, begin, end, strides)``: ``x[begin:end:strides]`` per dimension with
    TensorFlow's masks (kernels/ops/index.py: strided_spec); ``Tensor.__getitem__`` lowers to it."""

    def __init__(self, begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                 shrink_axis_mask: int = 0):
        super().__init__()
        values = (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
        self.masks = {name: check_int(v, f"StridedSlice: {name}", minimum=0) for name, v in zip(_MASKS, values)}

    def __call__(self, input_x: Any, begin: Sequence[int], end: Sequence[int], strides: Sequence[int]) -> Tensor:
        attrs = {"begin": _int_tuple("StridedSlice: begin", begin), "end": _int_tuple("StridedSlice: end", end),
                 "strides": _int_tuple("StridedSlice: strides", strides), **self.masks}
        return apply_op("StridedSlice", [input_x], attrs)[0]


class GatherNd(_Op):
    """``GatherNd()(input_x, indices)``: the slices of input_x at the index tuples in indices' last
    dimension; an out-of-range tuple reads zeros."""

    def __call__(self, input_x: Any, indices: Any) -> Tensor:
        return apply_op("GatherNd", [input_x, indices])[0]


class ScatterNd(_Op):
    """``ScatterNd()(indices, updates, shape)``: zeros of ``shape`` with each update added at its index
    tuple (repeated tuples sum; an out-of-range tuple is dropped)."""

    def __call__(self, indices: Any, updates: Any, shape: Sequence[int]) -> Tensor:
        return apply_op("ScatterNd", [indices, updates], {"shape": _int_tuple("ScatterNd: shape", shape)})[0]


class _ArgReduce(_Op):
    op = ""

    def __init__(self, axis: int = -1, output_type: Any = mstype.int32):
        super().__init__()
        self.axis = check_int(axis, f"{self.op}: axis")
        if mstype.to_type(output_type) != mstype.int32:
            raise InvalidParamError(f"{self.op}: output_type={output_type} is not supported; the device's "
                                    f"indices are mstype.int32")

    def __call__(self, input_x: Any) -> Tensor:
        return apply_op(self.op, [input_x], {"axis": self.axis, "keep_dims": False})[0]


class Argmax(_ArgReduce):
    """``Argmax(axis=-1, output_type=mstype.int32)(input_x)``: the index of the first maximum."""
    op = "Argmax"


class Argmin(_ArgReduce):
    """``Argmin(axis=-1, output_type=mstype.int32)(x)``: the index of the first minimum."""
    op = "Argmin"

    def __call__(self, x: Any) -> Tensor:       # MindSpore names Argmin's operand x, Argmax's input_x
        return super().__call__(x)


class _ArgWithValue(_Op):
    op = ""

    def __init__(self, axis: int = 0, keep_dims: bool = False):
        super().__init__()
        self.axis, self.keep_dims = check_int(axis, f"{self.op}: axis"), _flag(f"{self.op}: keep_dims", keep_dims)

    def __call__(self, input: Any) -> tuple[Tensor, Tensor]:
        return apply_op(self.op, [input], {"axis": self.axis, "keep_dims": self.keep_dims})


class ArgMaxWithValue(_ArgWithValue):
    """``ArgMaxWithValue(axis=0, keep_dims=False)(input_x) -> (index, values)``."""
    op = "ArgMaxWithValue"


class ArgMinWithValue(_ArgWithValue):
    """``ArgMinWithValue(axis=0, keep_dims=False)(input_x) -> (index, values)``."""
    op = "ArgMinWithValue"


class TopK(_Op):
    """``TopK(sorted=True)(input_x, k) -> (values, indices)``: the k largest elements along the last
    dimension, largest first (ties: lower index first). The device always sorts them, which
    ``sorted=False`` (any order) allows."""

    def __init__(self, sorted: bool = True):
        super().__init__()
        self.sorted = _flag("TopK: sorted", sorted)

    def __call__(self, input_x: Any, k: Any) -> tuple[Tensor, Tensor]:
        return apply_op("TopK", [input_x], {"k": _static_int("TopK: k", k, 0), "largest": True})


class Sort(_Op):
    """``Sort(axis=-1, descending=False)(x) -> (values, indices)``: x sorted along ``axis``, ascending
    (NaN last) or descending (NaN first); equal elements keep their order (stable), and ``indices``
    (int32) says where each value was."""

    def __init__(self, axis: int = -1, descending: bool = False):
        super().__init__()
        self.axis = check_int(axis, "Sort: axis")
        self.descending = _flag("Sort: descending", descending)

    def __call__(self, x: Any) -> tuple[Tensor, Tensor]:
        return apply_op("Sort", [x], {"axis": self.axis, "descending": self.descending})


class GatherD(_Op):
    """``GatherD()(x, dim, index)``: ``out[i][j][k] = x[index[i][j][k]][j][k]`` for dim 0 (likewise for the
    other dims). index has x's rank, is no larger than x except along ``dim``, and may count from
    the end (``-1`` is the last); an index outside ``[-n, n)`` reads 0 (MindSpore raises at run time)."""

    def __call__(self, x: Any, dim: Any, index: Any) -> Tensor:
        return apply_op("GatherD", [x, index], {"dim": _static_int("GatherD: dim", dim)})[0]


class Stack(_Op):
    """``Stack(axis=0)(input_x)``: the tensors of one shape and dtype joined along a new dimension
    ``axis``; built as each tensor's ExpandDims and one Concat (whose backward slices the gradient)."""

    def __init__(self, axis: int = 0):
        super().__init__()
        self.axis = check_int(axis, "Stack: axis")

    def __call__(self, input_x: Sequence[Any]) -> Tensor:
        if not isinstance(input_x, (tuple, list)) or not input_x:
            raise InvalidParamError("Stack: takes a non-empty tuple or list of tensors")
        tensors = [_tensor(t) for t in input_x]
        first = tensors[0]
        for i, t in enumerate(tensors):
            if t.shape != first.shape or t.dtype != first.dtype:
                raise InvalidParamError(f"Stack: tensor {i} is {t.dtype}{list(t.shape)} but tensor 0 is "
                                        f"{first.dtype}{list(first.shape)}; stacked tensors must match")
        axis = check_int(self.axis, "Stack: axis", minimum=-first.ndim - 1, maximum=first.ndim) % (first.ndim + 1)
        parts = [ExpandDims()(t, axis) for t in tensors]
        return parts[0] if len(parts) == 1 else Concat(axis)(parts)


class Unstack(_Op):
    """``Unstack(axis=0, num=None)(input_x)``: the slices of input_x along ``axis``, that dimension
    removed; built as one Split and a Squeeze per part."""

    def __init__(self, axis: int = 0, num: int | None = None):
        super().__init__()
        self.axis = check_int(axis, "Unstack: axis")
        self.num = None if num is None else check_int(num, "Unstack: num", minimum=1)

    def __call__(self, input_x: Any) -> tuple[Tensor, ...]:
        x = _tensor(input_x)
        if not x.ndim:
            raise InvalidParamError("Unstack: input_x must have rank >= 1, got a scalar")
        axis = check_int(self.axis, "Unstack: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
        count = x.shape[axis]
        if count == 0 or self.num not in (None, count):
            raise InvalidParamError(f"Unstack: dimension {axis} of input_x shape {x.shape} has {count} entries"
                                    + (f" but num={self.num}" if self.num is not None else "; it must be >= 1"))
        parts = Split(axis, count)(x) if count > 1 else (x,)
        return tuple(Squeeze(axis)(p) for p in parts)


class Zeros(_Op):
    """``Zeros()(size, type)``: a tensor of zeros (an int size is a 1-D shape)."""

    def __call__(self, size: Any, dtype: Any = None) -> Tensor:
        return Fill()(dtype or mstype.float32, _shape_arg("Zeros", size), 0)


class Ones(_Op):
    """``Ones()(shape, type)``: a tensor of ones (an int shape is 1-D)."""

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        return Fill()(dtype or mstype.float32, _shape_arg("Ones", shape), 1)


class Shape(_Op):
    """``Shape()(input_x)``: the shape as a tuple of Python ints (static, also while capturing)."""

    def __call__(self, x: Any) -> tuple[int, ...]:
        return tuple(_tensor(x).shape)


class TupleToArray(_Op):
    """``TupleToArray()(input_x)``: a constant 1-D tensor of a non-empty tuple of numbers of one kind
    (ints become int32, the device's int; floats float32)."""

    def __call__(self, input_x: Any) -> Tensor:
        if not isinstance(input_x, tuple) or not input_x:
            raise InvalidParamError(f"TupleToArray: input_x={input_x!r} must be a non-empty tuple of numbers")
        numbers = [v for v in input_x if isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_))]
        ints = builtins.sum(isinstance(v, (int, np.integer)) for v in numbers)
        if len(numbers) != len(input_x) or 0 < ints < len(numbers):
            raise InvalidParamError(f"TupleToArray: input_x={input_x!r} must hold numbers of one kind, all ints or "
                                    f"all floats (not bools)")
        return Tensor(np.asarray(input_x))


class DType(_Op):
    """``DType()(x)``: the tensor's dtype (``mstype.float32``...); ``ops.dtype`` is an instance."""

    def __call__(self, x: Any) -> mstype.Type:
        if not isinstance(x, Tensor):
            raise InvalidParamError(f"DType: x must be a Tensor, got {type(x).__name__}")
        return x.dtype


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.array_ops", name, __all__)
