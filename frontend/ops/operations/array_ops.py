"""``mindspore.ops.operations.array_ops``: the array primitives (shape, layout, indexing, creation),
where MindSpore defines them. No-task ops (Reshape, ExpandDims, Squeeze, Flatten) never need a
kernel: in PyNative they reshape the host data directly (``primitive.apply_op``)."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ascendemu.errors import (FeatureNotSupportedError, InvalidParamError, InvalidTypeError, InvalidValueError,
                              RuntimeParamError)
from ascendemu.graph.capture import current_tracer
from ascendemu.graph.ir import no_task_shape

from ...common import dtype as mstype
from ...common.tensor import Tensor, tag_input
from ...unsupported import unsupported
from .._utils import (_MASKS, _axes, _flag, _int_tuple, _pad4, _pair, _shape_arg, _static_int, _static_ints,
                      check_arg_int, defined_here)
from ..composite_op import composite
from ..primitive import Primitive, _Op, _binary_operands, _cast, _tensor, apply_op


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
        # an index outside [0, shape[axis]) is MindSpore's RuntimeError, raised at synchronisation as on
        # Ascend (the kernel's status word), not the zeros the backward rules' own gathers read
        return apply_op("Gather", [input_params, input_indices], {"axis": int(axis), "check_indices": True})[0]


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
        self.masks = {name: check_arg_int(v, f"StridedSlice: {name}", minimum=0) for name, v in zip(_MASKS, values)}

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
        self.axis = check_arg_int(axis, f"{self.op}: axis")
        self.output_type = mstype.to_type(output_type)
        if self.output_type not in (mstype.int32, mstype.int64):
            raise TypeError(f"For '{self.op}', the 'output_type' must be one of [Int32, Int64], but got "
                            f"{output_type}.")

    def __call__(self, input_x: Any) -> Tensor:
        attrs = {"axis": self.axis, "keep_dims": False}
        if self.output_type == mstype.int64:
            attrs["output_type"] = "int64"
        return apply_op(self.op, [input_x], attrs)[0]


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
        self.axis, self.keep_dims = check_arg_int(axis, f"{self.op}: axis"), _flag(f"{self.op}: keep_dims", keep_dims)

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
        self.axis = check_arg_int(axis, "Sort: axis")
        self.descending = _flag("Sort: descending", descending)

    def __call__(self, x: Any) -> tuple[Tensor, Tensor]:
        return apply_op("Sort", [x], {"axis": self.axis, "descending": self.descending})


class GatherD(_Op):
    """``GatherD()(x, dim, index)``: ``out[i][j][k] = x[index[i][j][k]][j][k]`` for dim 0 (likewise for the
    other dims). index has x's rank, is no larger than x except along ``dim``, and may count from
    the end (``-1`` is the last); an index outside ``[-n, n)`` is MindSpore's RuntimeError, raised at
    synchronisation as on Ascend (the kernel's status word)."""

    def __call__(self, x: Any, dim: Any, index: Any) -> Tensor:
        return apply_op("GatherD", [x, index], {"dim": _static_int("GatherD: dim", dim), "check_indices": True})[0]


class Stack(_Op):
    """``Stack(axis=0)(input_x)``: the tensors of one shape and dtype joined along a new dimension
    ``axis``; built as each tensor's ExpandDims and one Concat (whose backward slices the gradient)."""

    def __init__(self, axis: int = 0):
        super().__init__()
        self.axis = check_arg_int(axis, "Stack: axis")

    def __call__(self, input_x: Sequence[Any]) -> Tensor:
        if not isinstance(input_x, (tuple, list)) or not input_x:
            raise InvalidParamError("Stack: takes a non-empty tuple or list of tensors")
        tensors = [_tensor(t) for t in input_x]
        first = tensors[0]
        for i, t in enumerate(tensors):
            if t.shape != first.shape or t.dtype != first.dtype:
                raise InvalidValueError(f"Stack: tensor {i} is {t.dtype}{list(t.shape)} but tensor 0 is "
                                        f"{first.dtype}{list(first.shape)}; stacked tensors must match")
        axis = check_arg_int(self.axis, "Stack: axis", minimum=-first.ndim - 1, maximum=first.ndim) % (first.ndim + 1)
        parts = [ExpandDims()(t, axis) for t in tensors]
        return parts[0] if len(parts) == 1 else Concat(axis)(parts)


class Unstack(_Op):
    """``Unstack(axis=0, num=None)(input_x)``: the slices of input_x along ``axis``, that dimension
    removed; built as one Split and a Squeeze per part."""

    def __init__(self, axis: int = 0, num: int | None = None):
        super().__init__()
        self.axis = check_arg_int(axis, "Unstack: axis")
        self.num = None if num is None else check_arg_int(num, "Unstack: num", minimum=1)

    def __call__(self, input_x: Any) -> tuple[Tensor, ...]:
        x = _tensor(input_x)
        if not x.ndim:
            raise InvalidParamError("Unstack: input_x must have rank >= 1, got a scalar")
        axis = check_arg_int(self.axis, "Unstack: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
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
        if isinstance(input_x, range):         # MindSpore takes a range as the tuple of its numbers
            input_x = tuple(input_x)
        if not isinstance(input_x, tuple):
            raise TypeError(f"For 'TupleToArray', the type of 'x' should be 'tuple', but got type "
                            f"'{type(input_x).__name__}'.")
        if not input_x:
            raise ValueError("For 'TupleToArray', the size of x should be > : 0, but got 0.")
        numbers = [v for v in input_x if isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_))]
        ints = builtins.sum(isinstance(v, (int, np.integer)) for v in numbers)
        if len(numbers) != len(input_x) or 0 < ints < len(numbers):
            raise InvalidParamError(f"TupleToArray: input_x={input_x!r} must hold numbers of one kind, all ints or "
                                    f"all floats (not bools)")
        return Tensor(np.asarray(input_x), dtype=mstype.int32 if ints else mstype.float32)   # MindSpore's kinds


class DType(_Op):
    """``DType()(x)``: the tensor's dtype (``mstype.float32``...); ``ops.dtype`` is an instance."""

    def __call__(self, x: Any) -> mstype.Type:
        if not isinstance(x, Tensor):
            raise InvalidParamError(f"DType: x must be a Tensor, got {type(x).__name__}")
        return x.dtype


# ------------------------------------------------------------------------------ breadth: array ops
# Composites and hand-written primitives over the registry's ops. Data-dependent shapes (masked_select,
# nonzero, unique) are computed from host data, so they need a concrete tensor: PyNative, or a constant
# while capturing; a symbolic one is refused with FeatureNotSupportedError.

def _axis(label: str, axis: Any, ndim: int) -> int:
    """``axis`` in [-ndim, ndim), normalised to [0, ndim)."""
    rank = builtins.max(ndim, 1)          # a scalar takes axis 0 or -1, as MindSpore allows
    return check_arg_int(axis, label, minimum=-rank, maximum=rank - 1) % rank


def _host(label: str, t: Any) -> np.ndarray:
    """The host data of a concrete tensor; a symbolic one (GRAPH_MODE, a gradient's forward) has no
    values yet, and an op whose output shape depends on them cannot be put in a static graph."""
    t = _tensor(t)
    if t.is_symbolic or (t.is_parameter and current_tracer() is not None):
        error = FeatureNotSupportedError(f"{label}: the output shape depends on the tensor's values, which a static "
                                         f"GRAPH_MODE graph cannot express; call it in PYNATIVE_MODE or on a "
                                         f"constant")
        raise tag_input(t, error) if t.is_symbolic else error
    return t.asnumpy()


def _index(values: Any) -> Tensor:
    """A constant int32 index tensor (the device's index dtype)."""
    return Tensor(np.asarray(values, np.int64).astype(np.int32))


def _index64(values: Any) -> Tensor:
    """A constant int64 index tensor: what MindSpore's NonZero and UniqueConsecutive give their indices."""
    return Tensor(np.asarray(values, np.int64))


def _as_dtype(value: Any, like: Tensor) -> Tensor:
    """``value`` (a number or a tensor) as a tensor of ``like``'s dtype."""
    if isinstance(value, str):           # numpy would parse "1.5"; MindSpore refuses any string
        raise TypeError(f"the value must be an int, a float or a Tensor, but got {type(value).__name__}")
    return _cast(value if isinstance(value, Tensor) else Tensor(value, like.dtype), like.dtype)


@composite("ReverseV2", functions=("flip",), rename={"dims": "axis"})
def ReverseV2(input, axis):
    """``ReverseV2(axis)(x)`` / ``ops.flip(input, dims)``: x with the listed dimensions reversed; one
    StridedSlice of stride -1 on them (its backward, StridedSliceGrad, reverses the gradient)."""
    x = _tensor(input)
    if not isinstance(axis, (tuple, list)):
        raise TypeError(f"ReverseV2: axis must be a tuple or list of ints, got {type(axis).__name__}")
    dims = [_axis("ReverseV2: axis", a, x.ndim) for a in axis]
    if len(set(dims)) != len(dims):
        raise InvalidParamError(f"ReverseV2: axis={tuple(axis)} cannot contain duplicate dimensions")
    if not dims:
        return Identity()(x)
    full = (1 << x.ndim) - 1
    strides = tuple(-1 if d in dims else 1 for d in range(x.ndim))
    return StridedSlice(begin_mask=full, end_mask=full)(x, (0,) * x.ndim, (0,) * x.ndim, strides)


@composite("Eye", functions=("eye",))
def Eye(n, m=None, dtype=None):
    """``Eye()(n, m, t)`` / ``ops.eye(n, m=None, dtype=None)``: the n x m identity (m defaults to n),
    a constant of ``dtype`` (default float32)."""
    n = check_arg_int(n, "Eye: n", minimum=0)
    m = n if m is None else check_arg_int(m, "Eye: m", minimum=0)
    return Tensor(np.eye(n, m), mstype.to_type(dtype or mstype.float32))


class ScalarToTensor(_Op):
    """``ScalarToTensor()(x, dtype=mstype.float32)``: a 0-d constant tensor of a Python bool, int or float."""

    def __call__(self, x: Any, dtype: Any = mstype.float32) -> Tensor:
        if not isinstance(x, (bool, int, float)):
            raise InvalidTypeError(f"ScalarToTensor: x must be a bool, an int or a float, got {type(x).__name__}")
        if not isinstance(dtype, mstype.Type):
            raise InvalidParamError(f"ScalarToTensor: dtype={dtype!r} must be a mindspore number type such as "
                                    f"mstype.float32")
        return Tensor(x, dtype)


@composite("MaskedFill", functions=("masked_fill",))
def MaskedFill(input_x, mask, value):
    """``masked_fill(input_x, mask, value)``: value where the (broadcast) bool mask is True, else x; a
    Select, so x's gradient is dout where the mask is False (and value's the rest, summed)."""
    x, mask = _tensor(input_x), _tensor(mask)
    if mask.dtype != mstype.bool_:
        raise InvalidParamError(f"MaskedFill: mask must be a bool tensor, got {mask.dtype}")
    shape = tuple(np.broadcast_shapes(x.shape, mask.shape))
    value = _as_dtype(value, x)
    if value.ndim:
        raise InvalidParamError(f"MaskedFill: value must be a number or a 0-d tensor, got shape {value.shape}")
    spread = lambda t: t if t.shape == shape else BroadcastTo(shape)(t)  # noqa: E731  (no copy to shard)
    return Select()(spread(mask), BroadcastTo(shape)(value), spread(x))


@composite("MaskedSelect", functions=("masked_select",))
def MaskedSelect(input, mask):
    """``masked_select(input, mask)``: the 1-D tensor of x's elements where the bool mask (broadcast
    with x) is True. The mask's values set the output's length, so it must be concrete; x is read with
    one Gather of the selected flat positions (x's gradient flows back through it)."""
    x, mask = _tensor(input), _tensor(mask)
    if mask.dtype != mstype.bool_:
        raise InvalidParamError(f"MaskedSelect: mask must be a bool tensor, got {mask.dtype}")
    shape = tuple(np.broadcast_shapes(x.shape, mask.shape))
    picked = np.flatnonzero(np.broadcast_to(_host("masked_select", mask), shape))
    flat = Reshape()(BroadcastTo(shape)(x), (-1,))
    return Gather()(flat, _index(picked), 0)


class DepthToSpace(_Op):
    """``DepthToSpace(block_size)(x)``: NCHW x's channels moved into b x b spatial blocks: channel
    (i * b + j) * C' + c becomes pixel (h * b + i, w * b + j) of channel c (a Reshape, a Transpose and a
    Reshape, MindSpore's and TensorFlow's DCR order)."""

    def __init__(self, block_size: int):
        super().__init__()
        self.block_size = check_arg_int(block_size, "DepthToSpace: block_size", minimum=2)

    def __call__(self, x: Any) -> Tensor:
        x, b = _tensor(x), self.block_size
        if x.ndim != 4 or x.shape[1] % (b * b):
            raise InvalidValueError(f"DepthToSpace: x must be NCHW with channels divisible by block_size**2={b * b}, "
                                    f"got shape {x.shape}")
        n, c, h, w = x.shape
        parts = Reshape()(x, (n, b, b, c // (b * b), h, w))
        return Reshape()(Transpose()(parts, (0, 3, 4, 1, 5, 2)), (n, c // (b * b), h * b, w * b))


class SpaceToDepth(_Op):
    """``SpaceToDepth(block_size)(x)``: the inverse of DepthToSpace: each b x b block of NCHW x's pixels
    becomes b * b channels, pixel (i, j) of channel c going to channel (i * b + j) * C + c."""

    def __init__(self, block_size: int):
        super().__init__()
        self.block_size = check_arg_int(block_size, "SpaceToDepth: block_size", minimum=2)

    def __call__(self, x: Any) -> Tensor:
        x, b = _tensor(x), self.block_size
        if x.ndim != 4 or x.shape[2] % b or x.shape[3] % b:
            raise InvalidValueError(f"SpaceToDepth: x must be NCHW with height and width divisible by block_size={b}, "
                                    f"got shape {x.shape}")
        n, c, h, w = x.shape
        parts = Reshape()(x, (n, c, h // b, b, w // b, b))
        return Reshape()(Transpose()(parts, (0, 3, 5, 1, 2, 4)), (n, c * b * b, h // b, w // b))


# Meshgrid's indexing: "xy" (Cartesian: the first two output dimensions swapped) or "ij" (matrix)
MESHGRID_INDEXING = ("xy", "ij")


@composite("Meshgrid")
def Meshgrid(inputs, indexing="xy"):
    """``Meshgrid(indexing='xy')(inputs)``: for N 1-D tensors, N tensors of their lengths' grid, tensor
    i varying along its own dimension (each a Reshape and a BroadcastTo)."""
    if not isinstance(inputs, (tuple, list)) or len(inputs) < 2:
        raise InvalidParamError("Meshgrid: inputs must be a tuple or list of at least two 1-D tensors")
    if indexing not in MESHGRID_INDEXING:
        raise InvalidValueError(f"Meshgrid: indexing={indexing!r} must be one of {MESHGRID_INDEXING}")
    tensors = [_tensor(t) for t in inputs]
    for i, t in enumerate(tensors):
        if t.ndim != 1 or t.dtype != tensors[0].dtype:
            raise InvalidParamError(f"Meshgrid: input {i} is {t.dtype}{list(t.shape)}; the inputs must be 1-D "
                                    f"tensors of one dtype")
    order = list(range(len(tensors)))
    if indexing == "xy":
        order[0], order[1] = 1, 0
    shape = tuple(tensors[d].shape[0] for d in order)
    grids = []
    for i, t in enumerate(tensors):
        at = order.index(i)
        grids.append(BroadcastTo(shape)(Reshape()(t, tuple(-1 if d == at else 1 for d in range(len(shape))))))
    return tuple(grids)


class ReverseSequence(_Op):
    """``ReverseSequence(seq_dim, batch_dim=0)(x, seq_lengths)``: in each batch row b the first
    seq_lengths[b] entries along ``seq_dim`` reversed, the rest kept: one GatherD along seq_dim with
    index ``L - 1 - j`` for ``j < L`` else ``j`` (so x's gradient is GatherD's)."""

    def __init__(self, seq_dim: int, batch_dim: int = 0):
        super().__init__()
        self.seq_dim = check_arg_int(seq_dim, "ReverseSequence: seq_dim")
        self.batch_dim = check_arg_int(batch_dim, "ReverseSequence: batch_dim")

    def __call__(self, x: Any, seq_lengths: Any) -> Tensor:
        x, lengths = _tensor(x), _cast(seq_lengths, mstype.int32)
        seq_dim, batch_dim = self.seq_dim, self.batch_dim
        seq = _axis("ReverseSequence: seq_dim", seq_dim, x.ndim)
        batch = _axis("ReverseSequence: batch_dim", batch_dim, x.ndim)
        if seq == batch or lengths.shape != (x.shape[batch],):
            raise InvalidParamError(f"ReverseSequence: seq_dim and batch_dim must differ and seq_lengths must have "
                                    f"shape ({x.shape[batch]},), got seq_dim={seq_dim}, batch_dim={batch_dim}, "
                                    f"seq_lengths shape {lengths.shape}")
        column = np.arange(x.shape[seq]).reshape([-1 if d == seq else 1 for d in range(x.ndim)])
        j = BroadcastTo(x.shape)(_index(column))
        length = BroadcastTo(x.shape)(Reshape()(lengths, tuple(-1 if d == batch else 1 for d in range(x.ndim))))
        reversed_j = apply_op("Sub", [apply_op("Sub", [length, _index(1)])[0], j])[0]
        index = Select()(apply_op("Less", [j, length])[0], reversed_j, j)
        return GatherD()(x, seq, index)


class Size(_Op):
    """``Size()(input_x)``: the number of elements, a Python int."""

    def __call__(self, input_x: Any) -> int:
        if not isinstance(input_x, Tensor):
            raise TypeError(f"For 'Size', input must be a Tensor, but got: {type(input_x).__name__}.")
        return int(np.prod(input_x.shape, dtype=np.int64))


class Rank(_Op):
    """``Rank()(x)``: the number of dimensions, a Python int."""

    def __call__(self, x: Any) -> int:
        return _tensor(x).ndim


class TensorShape(_Op):
    """``TensorShape()(input_x)``: the shape as a 1-D int64 tensor, as MindSpore gives it (a constant:
    shapes are static)."""

    def __call__(self, input_x: Any) -> Tensor:
        return Tensor(np.asarray(_tensor(input_x).shape, np.int64))


def _unique_first_seen(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unique values in order of first occurrence, the index of each element's value among them):
    MindSpore's Unique order, which is not numpy's sorted one."""
    flat = data.reshape(-1)
    values, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return values[order], rank[inverse.reshape(-1)].reshape(data.shape)


class Unique(_Op):
    """``Unique()(input_x) -> (y, idx)``: the distinct values of a 1-D tensor in order of first
    occurrence, and for each element the index of its value in y (int32). Its length depends on the
    values: computed from the host data (PyNative, or a constant)."""

    def __call__(self, input_x: Any) -> tuple[Tensor, Tensor]:
        x = _tensor(input_x)
        if x.ndim != 1:        # MindSpore's shape inference (unique.cc); ops.unique flattens first
            raise RuntimeParamError(f"Rank of Unique's input must be 1, got shape {x.shape}")
        values, idx = _unique_first_seen(_host("Unique", x))
        return Tensor(values, x.dtype), _index(idx)


def unique_consecutive_parts(input: Any, return_inverse: bool, return_counts: bool,
                             dim: Any) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """(input flattened with each run of equal consecutive elements kept once, each element's run index
    (input's shape) if ``return_inverse``, each run's length if ``return_counts``; None where not asked),
    indices int64 as MindSpore's. Computed from host data, like Unique."""
    x = _tensor(input)
    _flag("unique_consecutive: return_inverse", return_inverse)
    _flag("unique_consecutive: return_counts", return_counts)
    if dim is not None:
        raise InvalidParamError(f"unique_consecutive: dim={dim!r} is not supported; leave it None (flattened)")
    flat = _host("unique_consecutive", x).reshape(-1)
    starts = np.flatnonzero(np.concatenate([[True], flat[1:] != flat[:-1]])) if flat.size else np.zeros(0, np.int64)
    run_of = np.cumsum(np.isin(np.arange(flat.size), starts)) - 1
    inverse = _index64(run_of.reshape(x.shape)) if return_inverse else None
    counts = _index64(np.diff(np.append(starts, flat.size))) if return_counts else None
    return Tensor(flat[starts], x.dtype), inverse, counts


@composite("UniqueConsecutive")
def UniqueConsecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``UniqueConsecutive(return_inverse, return_counts, dim)(input)``: always (output, idx, counts), as
    MindSpore's primitive returns them: an output not asked for is a 0-d int64 zero (``ops.unique_consecutive``
    returns only the asked ones)."""
    parts = unique_consecutive_parts(input, return_inverse, return_counts, dim)
    return tuple(_index64(0) if t is None else t for t in parts)


class NonZero(_Op):
    """``NonZero()(input)``: the coordinates of the non-zero elements, one row each (int64, as
    MindSpore's), in row-major order; computed from host data."""

    def __call__(self, input: Any) -> Tensor:
        if not _tensor(input).ndim:
            raise RuntimeParamError("NonZero: the input must have rank >= 1, got a scalar; reshape it to (1,)")
        return _index64(np.argwhere(_host("NonZero", input)).reshape(-1, _tensor(input).ndim))


def _triangle_mask(shape: tuple[int, ...], diagonal: int, lower: bool) -> Tensor:
    """The bool mask of a lower (``tril``: column <= row + diagonal) or upper (``triu``: column >= row +
    diagonal) triangle over the last two dimensions of ``shape``."""
    if len(shape) < 2:
        raise InvalidValueError(f"tril/triu: the input must have rank >= 2, got shape {shape}")
    rows, cols = shape[-2:]
    lower_mask = np.tri(rows, cols, diagonal if lower else diagonal - 1, dtype=bool)
    return Tensor(lower_mask if lower else ~lower_mask)


def _triangle(x: Any, diagonal: Any, lower: bool) -> Tensor:
    x = _tensor(x)
    mask = _triangle_mask(x.shape, check_arg_int(diagonal, "diagonal"), lower)
    return Select()(BroadcastTo(x.shape)(mask), x, BroadcastTo(x.shape)(Tensor(0, x.dtype)))


@composite("Tril", functions=("tril",), rename={"input": "x"})
def Tril(x, diagonal=0):
    """``tril(input, diagonal=0)``: the lower triangle of the last two dimensions (column <= row +
    diagonal), zeros elsewhere; a Select with a constant mask."""
    return _triangle(x, diagonal, True)


@composite("Triu", functions=("triu",))
def Triu(input, diagonal=0):
    """``triu(input, diagonal=0)``: the upper triangle (column >= row + diagonal), zeros elsewhere."""
    return _triangle(input, diagonal, False)


@composite("Diag", functions=("diag",))
def Diag(input):
    """``diag(input)``: for x of shape s, the tensor of shape s + s with x on its diagonal (x flattened
    to n, a Select of x broadcast over an n x n identity mask, reshaped)."""
    x = _tensor(input)
    if not x.ndim:
        raise InvalidValueError("Diag: input must have rank >= 1, got a scalar")
    n = int(np.prod(x.shape))
    column = BroadcastTo((n, n))(Reshape()(x, (n, 1)))
    square = Select()(Tensor(np.eye(n, dtype=bool)), column, BroadcastTo((n, n))(Tensor(0, x.dtype)))
    return Reshape()(square, x.shape + x.shape)


class DiagPart(_Op):
    """``DiagPart()(input_x)``: for x of shape s + s, the tensor of shape s of x[i..., i...]: one Gather
    of the diagonal's flat positions (its gradient is Gather's)."""

    def __call__(self, input_x: Any) -> Tensor:
        x = _tensor(input_x)
        half = x.ndim // 2
        if not x.ndim or x.ndim % 2 or x.shape[:half] != x.shape[half:]:
            raise InvalidValueError(f"DiagPart: input_x must have an even rank and shape s + s, got {x.shape}")
        n = int(np.prod(x.shape[:half]))
        return Reshape()(Gather()(Reshape()(x, (n * n,)), _index(np.arange(n) * (n + 1)), 0), x.shape[:half])


class GatherV2(Gather):
    """``GatherV2()(input_params, input_indices, axis, batch_dims=0)``: MindSpore's older name of Gather
    (2.10 passes batch_dims as a fourth input; only 0 is supported, as for Gather)."""

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, input_params: Any, input_indices: Any, axis: int, batch_dims: int = 0) -> Tensor:
        Gather(batch_dims)
        return super().__call__(input_params, input_indices, axis)


class SparseGatherV2(Gather):
    """``SparseGatherV2()(input_params, input_indices, axis)``: Gather (dense here)."""

    def __init__(self) -> None:
        super().__init__()


class ScalarToArray(_Op):
    """``ScalarToArray()(input_x)``: a 0-d constant tensor of a Python int or float."""

    def __call__(self, input_x: Any) -> Tensor:
        if isinstance(input_x, bool) or not isinstance(input_x, (int, float)):
            raise InvalidTypeError(f"ScalarToArray: input_x must be an int or a float, got {type(input_x).__name__}")
        return Tensor(input_x)


class Expand(_Op):
    """``Expand()(x, shape)``: x broadcast to ``shape`` (a tuple or a 1-D int tensor, -1 keeps a dim)."""

    def __call__(self, x: Any, shape: Any) -> Tensor:
        x = _tensor(x)
        size = _static_ints("Expand: shape", shape)
        lead = len(size) - x.ndim
        if lead < 0:
            raise InvalidParamError(f"Expand: shape={size} has fewer dimensions than x {x.shape}")
        return BroadcastTo(tuple(x.shape[d - lead] if s == -1 and d >= lead else s for d, s in enumerate(size)))(x)


class Fills(_Op):
    """``Fills()(x, value)``: a tensor of x's shape and dtype filled with ``value``."""

    def __call__(self, x: Any, value: Any) -> Tensor:
        x = _tensor(x)
        return BroadcastTo(x.shape)(_as_dtype(value, x))


# ------------------------------------------------------------------------- scatters and segment folds
# kernels/ops/index.py: each output slice is input_x's, with the updates at its index tuples folded in
# in index-row order (an index tuple out of range is dropped; MindSpore raises at run time).

class _TensorScatter(_Op):
    op = ""

    def __call__(self, input_x: Any, indices: Any, updates: Any) -> Tensor:
        x = _tensor(input_x)
        return apply_op(self.op, [x, _cast(indices, mstype.int32), _tensor(updates)])[0]


class TensorScatterUpdate(_TensorScatter):
    """``TensorScatterUpdate()(input_x, indices, updates)``: input_x with the slices at indices' index
    tuples replaced by updates (a repeated tuple: the last update wins)."""
    op = "TensorScatterUpdate"


class TensorScatterAdd(_TensorScatter):
    """``TensorScatterAdd()(input_x, indices, updates)``: input_x plus updates at their index tuples."""
    op = "TensorScatterAdd"


class TensorScatterSub(_TensorScatter):
    op = "TensorScatterSub"


class TensorScatterMul(_TensorScatter):
    op = "TensorScatterMul"


class TensorScatterDiv(_TensorScatter):
    op = "TensorScatterDiv"


class TensorScatterMax(_TensorScatter):
    op = "TensorScatterMax"


class TensorScatterMin(_TensorScatter):
    op = "TensorScatterMin"


class _ScatterNdParameter(_Op):
    """A scatter into a Parameter, in place (``ScatterNdUpdate``...): the TensorScatter op of the same
    fold, assigned back to the Parameter (as ``ops.assign`` does); returns the new value."""
    fold: type = _TensorScatter

    def __init__(self, use_locking: bool = False):
        super().__init__()
        self.use_locking = _flag(f"{self.name}: use_locking", use_locking)

    def rows(self, x: Tensor, indices: Tensor) -> Tensor:
        return indices

    def __call__(self, input_x: Any, indices: Any, updates: Any) -> Tensor:
        if not getattr(input_x, "is_parameter", False):
            raise InvalidParamError(f"{self.name}: input_x must be a Parameter (it is updated in place), got "
                                    f"{type(input_x).__name__}")
        indices = _cast(indices, mstype.int32)
        value = self.fold()(input_x, self.rows(input_x, indices), updates)
        return _ASSIGN(input_x, value)


# Assign lives in other_ops, which imports this module: reached by its MindSpore name
_ASSIGN = Primitive("Assign")


class ScatterNdUpdate(_ScatterNdParameter):
    fold = TensorScatterUpdate

    def __init__(self, use_locking: bool = True):
        super().__init__(use_locking)


class ScatterNdAdd(_ScatterNdParameter):
    fold = TensorScatterAdd


class ScatterNdSub(_ScatterNdParameter):
    fold = TensorScatterSub


class ScatterNdMul(_ScatterNdParameter):
    fold = TensorScatterMul


class ScatterNdDiv(_ScatterNdParameter):
    fold = TensorScatterDiv


class ScatterNdMax(_ScatterNdParameter):
    fold = TensorScatterMax


class ScatterNdMin(_ScatterNdParameter):
    fold = TensorScatterMin


class _ScatterRows(_ScatterNdParameter):
    """``ScatterUpdate``/``ScatterAdd``...: indices name rows of input_x (its first dimension); updates
    has shape indices.shape + input_x.shape[1:]."""

    def rows(self, x: Tensor, indices: Tensor) -> Tensor:
        return ExpandDims()(indices, indices.ndim)


class ScatterUpdate(_ScatterRows):
    fold = TensorScatterUpdate

    def __init__(self, use_locking: bool = True):
        super().__init__(use_locking)


class ScatterAdd(_ScatterRows):
    fold = TensorScatterAdd


class ScatterSub(_ScatterRows):
    fold = TensorScatterSub


class ScatterMul(_ScatterRows):
    fold = TensorScatterMul


class ScatterDiv(_ScatterRows):
    fold = TensorScatterDiv


class ScatterMax(_ScatterRows):
    fold = TensorScatterMax


class ScatterMin(_ScatterRows):
    fold = TensorScatterMin


# TensorScatterElements' reductions: MindSpore's names -> the TensorScatter op
ELEMENT_REDUCTIONS = {"none": "TensorScatterUpdate", "add": "TensorScatterAdd"}


def _scatter_elements(data: Any, indices: Any, updates: Any, axis: Any, reduction: str) -> Tensor:
    """data with ``updates[p]`` put at p's coordinates with dimension ``axis`` replaced by
    ``indices[p]`` (negative counts from the end): the index tuples are p's constant coordinates with
    that column taken from indices, then one TensorScatter."""
    x, index = _tensor(data), _cast(indices, mstype.int32)
    if reduction not in ELEMENT_REDUCTIONS:
        raise InvalidValueError(f"TensorScatterElements: reduction={reduction!r} must be one of "
                                f"{tuple(ELEMENT_REDUCTIONS)}")
    axis = _axis("TensorScatterElements: axis", axis, x.ndim)
    if index.ndim != x.ndim or _tensor(updates).shape != index.shape:
        raise InvalidValueError(f"TensorScatterElements: indices {index.shape} and updates {_tensor(updates).shape} "
                                f"must have one shape, of data's rank {x.ndim}")
    n = x.shape[axis]
    index = Select()(apply_op("Less", [index, BroadcastTo(index.shape)(_index(0))])[0],
                     apply_op("Add", [index, BroadcastTo(index.shape)(_index(n))])[0], index)
    grid = np.indices(index.shape).transpose(tuple(range(1, index.ndim + 1)) + (0,))
    columns = [_index(grid[..., d:d + 1]) if d != axis else ExpandDims()(index, index.ndim) for d in range(x.ndim)]
    tuples = columns[0] if len(columns) == 1 else Concat(index.ndim)(columns)
    return apply_op(ELEMENT_REDUCTIONS[reduction], [x, tuples, _tensor(updates)])[0]


class TensorScatterElements(_Op):
    """``TensorScatterElements(axis=0, reduction='none')(data, indices, updates)``."""

    def __init__(self, axis: int = 0, reduction: str = "none"):
        super().__init__()
        self.axis, self.reduction = check_arg_int(axis, "TensorScatterElements: axis"), reduction

    def __call__(self, data: Any, indices: Any, updates: Any) -> Tensor:
        return _scatter_elements(data, indices, updates, self.axis, self.reduction)


class _SegmentFold(_Op):
    op = ""

    def __call__(self, x: Any, segment_ids: Any, num_segments: Any) -> Tensor:
        return apply_op(self.op, [x, _cast(segment_ids, mstype.int32)],
                        {"num_segments": _static_int(f"{self.op}: num_segments", num_segments, 1)})[0]


class UnsortedSegmentMax(_SegmentFold):
    """``UnsortedSegmentMax()(x, segment_ids, num_segments)``: per segment the maximum of its rows (an
    empty segment: the dtype's lowest value)."""
    op = "UnsortedSegmentMax"


class UnsortedSegmentMin(_SegmentFold):
    """Per segment the minimum of its rows (an empty segment: the dtype's highest value)."""
    op = "UnsortedSegmentMin"


class UnsortedSegmentProd(_SegmentFold):
    """Per segment the product of its rows, in row order (an empty segment: 1)."""
    op = "UnsortedSegmentProd"


# ---- scans (their kernels: kernels/ops/scan.py; MindSpore serves them from math_ops too) ----
class CumSum(_Op):
    """``CumSum(exclusive=False, reverse=False)(input, axis)``: the running sum along ``axis``
    (``exclusive``: without the element itself; ``reverse``: from the end)."""
    op = "CumSum"

    def __init__(self, exclusive: bool = False, reverse: bool = False):
        super().__init__()
        self.exclusive = _flag(f"{self.name}: exclusive", exclusive)
        self.reverse = _flag(f"{self.name}: reverse", reverse)

    def __call__(self, input: Any, axis: Any) -> Tensor:
        attrs = {"axis": _static_int(f"{self.name}: axis", axis), "exclusive": self.exclusive, "reverse": self.reverse}
        return apply_op(self.op, [input], attrs)[0]


class CumProd(CumSum):
    """``CumProd(exclusive=False, reverse=False)(x, axis)``: the running product along ``axis``."""
    op = "CumProd"

    def __call__(self, x: Any, axis: Any) -> Tensor:       # MindSpore's names, unlike CumSum's
        return super().__call__(x, axis)


# ---- array breadth, round 2 ----
# Rolls, rotations, index_add/index_fill/index_put, in-place row updates, masked and slice scatters,
# diagonals and triangles, stacking primitives: compositions of Slice/Concat/Transpose/Gather/
# TensorScatter*/Select, so shapes, dtypes and gradients come from those parts (kernels/ops/index.py).


def _range_along(x: Tensor, axis: int, start: int, length: int) -> Tensor:
    """``length`` entries of x along ``axis`` from ``start`` (one Slice)."""
    return Slice()(x, tuple(start if d == axis else 0 for d in range(x.ndim)),
                   tuple(length if d == axis else -1 for d in range(x.ndim)))


def _first(ndim: int, axis: int) -> tuple[int, ...]:
    """The permutation moving ``axis`` first (its own inverse's inverse: see :func:`_inverse`)."""
    return (axis,) + tuple(d for d in range(ndim) if d != axis)


def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(perm.index(d) for d in range(len(perm)))


def _permuted(x: Tensor, perm: Sequence[int]) -> Tensor:
    return x if tuple(perm) == tuple(range(x.ndim)) else Transpose()(x, tuple(perm))


def _wrapped(index: Tensor, n: int) -> Tensor:
    """An int32 index tensor with negative entries counted from the end (``i + n`` where ``i < 0``)."""
    index = _cast(index, mstype.int32)
    zero, size = BroadcastTo(index.shape)(_index(0)), BroadcastTo(index.shape)(_index(n))
    return Select()(apply_op("Less", [index, zero])[0], apply_op("Add", [index, size])[0], index)


def _scatter_along(op: str, x: Tensor, axis: int, rows: Any, updates: Tensor) -> Tensor:
    """x with ``updates`` (x's layout, ``len(rows)`` entries along ``axis``) folded in at ``rows`` along
    ``axis`` by the TensorScatter op ``op`` (Update: replaced; Add: added), whose gradients are known."""
    perm = _first(x.ndim, axis)
    rows = rows if isinstance(rows, Tensor) else _index(rows)
    out = apply_op(op, [_permuted(x, perm), ExpandDims()(_cast(rows, mstype.int32), 1),
                        _permuted(_cast(updates, x.dtype), perm)])[0]
    return _permuted(out, _inverse(perm))


def _roll(x: Tensor, shifts: Sequence[int], dims: Sequence[int]) -> Tensor:
    """x rolled by ``shifts[i]`` along ``dims[i]``: per dimension a Concat of its two Slices."""
    for shift, dim in zip(shifts, dims):
        n = x.shape[dim]
        s = shift % n if n else 0
        if s:
            x = Concat(dim)([_range_along(x, dim, n - s, s), _range_along(x, dim, 0, n - s)])
    return x


@composite("Roll", functions=("roll",))
def Roll(input, shifts=0, dims=None):
    """``Roll(shifts, dims=None)(input)`` / ``ops.roll(input, shifts, dims=None)``: elements shifted
    along ``dims`` (None: of the flattened tensor, shape kept), wrapping around."""
    x = _tensor(input)
    shifts = (shifts,) if isinstance(shifts, int) else _int_tuple("roll: shifts", shifts)
    if dims is None:
        if len(shifts) != 1:
            raise InvalidValueError(f"roll: with dims=None shifts must be one int, got {shifts}")
        return Reshape()(_roll(Reshape()(x, (-1,)), shifts, (0,)), x.shape)
    dims = (dims,) if isinstance(dims, int) else _int_tuple("roll: dims", dims)
    if len(shifts) != len(dims):
        raise InvalidValueError(f"roll: shifts {shifts} and dims {dims} must have one length")
    return _roll(x, shifts, [_axis("roll: dims", d, x.ndim) for d in dims])


def _index_add(x: Any, axis: Any, index: Any, source: Any, label: str) -> Tensor:
    """x plus ``source``'s slices added at ``index`` along ``axis`` (repeats accumulate); a Parameter x
    is updated in place (MindSpore's IndexAdd writes its Parameter) and its new value returned."""
    x, source, index = _tensor(x), _tensor(source), _tensor(index)
    axis = _axis(f"{label}: axis", axis, x.ndim)
    if index.ndim != 1 or source.ndim != x.ndim or source.shape[axis] != index.shape[0]:
        raise InvalidValueError(f"{label}: indices must be 1-D and y of x's rank with len(indices) entries along axis "
                                f"{axis}; got x {x.shape}, indices {index.shape}, y {source.shape}")
    value = _scatter_along("TensorScatterAdd", x, axis, _wrapped(index, x.shape[axis]), source)
    return _ASSIGN(x, value) if getattr(x, "is_parameter", False) else value


@composite("IndexAdd")
def IndexAdd(input_x, indices, input_y, axis=0, use_lock=True, check_index_bound=True):
    """``IndexAdd(axis, use_lock=True, check_index_bound=True)(input_x, indices, input_y)``."""
    return _index_add(input_x, axis, indices, input_y, "IndexAdd")


@composite("InplaceIndexAdd", functions=("inplace_index_add",))
def InplaceIndexAdd(var, indices, updates, axis=0):
    """``InplaceIndexAdd(axis)(var, indices, updates)``: IndexAdd's fold."""
    return _index_add(var, axis, indices, updates, "InplaceIndexAdd")


def _row_indices(label: str, indices: Any, x: Tensor) -> tuple[int, ...]:
    rows = (indices,) if isinstance(indices, int) else _int_tuple(f"{label}: indices", indices)
    return tuple(_axis(f"{label}: indices", r, x.shape[0] if x.ndim else 1) for r in rows)


def _inplace_rows(label: str, op: str, x: Any, v: Any, indices: Any) -> Tensor:
    """x with rows ``indices`` (along dimension 0) of v folded in by ``op``; v has one row per index.
    MindSpore differentiates the Inplace* row ops to zeros, so x and v enter behind StopGradient."""
    x, v = (apply_op("StopGradient", [_tensor(t)])[0] for t in (x, v))
    rows = _row_indices(label, indices, x)
    if v.shape != (len(rows),) + x.shape[1:]:
        raise InvalidValueError(f"{label}: v must have shape {(len(rows),) + x.shape[1:]} (one row per index), got "
                                f"{v.shape}")
    if op == "Sub":
        v, op = apply_op("Neg", [v])[0], "Add"
    return _scatter_along("TensorScatter" + op, x, 0, rows, v)


@composite("InplaceAdd", functions=("inplace_add",), rename={"v": "input_v"})
def InplaceAdd(x, input_v, indices=0):
    """``InplaceAdd(indices)(x, input_v)``: x with input_v's rows added to rows ``indices``."""
    return _inplace_rows("InplaceAdd", "Add", x, input_v, indices)


@composite("InplaceSub", functions=("inplace_sub",), rename={"v": "input_v"})
def InplaceSub(x, input_v, indices=0):
    """``InplaceSub(indices)(x, input_v)``: x with input_v's rows subtracted from rows ``indices``."""
    return _inplace_rows("InplaceSub", "Sub", x, input_v, indices)


@composite("InplaceUpdate", functions=("inplace_update",))
def InplaceUpdate(x, v, indices=0):
    """``InplaceUpdate(indices)(x, v)``: x with rows ``indices`` replaced by v's rows."""
    return _inplace_rows("InplaceUpdate", "Update", x, v, indices)


@composite("InplaceUpdateV2")
def InplaceUpdateV2(x, indices, v):
    """``InplaceUpdateV2()(x, indices, v)``: InplaceUpdate with the indices an operand."""
    return _inplace_rows("InplaceUpdateV2", "Update", x, v, indices)


def _index_fill(x: Any, axis: Any, index: Any, value: Any) -> Tensor:
    """x with the slices at ``index`` along ``axis`` set to ``value`` (a number or 0-d tensor). MindSpore
    2.10's IndexFill bprop gives value a zero gradient (its zeros_like(value)), so value enters behind
    StopGradient."""
    x, index = _tensor(x), _tensor(index)
    axis = _axis("index_fill: axis", int(axis) if isinstance(axis, Tensor) else axis, x.ndim)
    value = apply_op("StopGradient", [_as_dtype(value, x)])[0]
    if index.ndim > 1 or value.ndim:
        raise InvalidValueError(f"index_fill: index must be 0-D or 1-D and value 0-D, got {index.shape} and "
                                f"{value.shape}")
    index = Reshape()(index, (-1,))
    rows = x.shape[:axis] + (index.shape[0],) + x.shape[axis + 1:]
    return _scatter_along("TensorScatterUpdate", x, axis, _wrapped(index, x.shape[axis]), BroadcastTo(rows)(value))


@composite("IndexFill", functions=("index_fill",), rename={"axis": "dim"})
def IndexFill(x, dim, index, value):
    """``IndexFill()(x, dim, index, value)``."""
    return _index_fill(x, dim, index, value)


def _index_put(x: Any, values: Any, indices: Any, accumulate: Any) -> Tensor:
    """x with ``values`` written (``accumulate``: added) at the coordinates the 1-D int tensors in
    ``indices`` give its leading dimensions (one TensorScatter of their stacked tuples)."""
    x, values = _tensor(x), _tensor(values)
    if not isinstance(indices, (tuple, list)) or not indices or len(indices) > x.ndim:
        raise InvalidValueError(f"index_put: indices must be a tuple of 1 to {x.ndim} int tensors")
    columns = [_wrapped(Reshape()(_tensor(i), (-1, 1)), x.shape[d]) for d, i in enumerate(indices)]
    k = builtins.max(c.shape[0] for c in columns)
    tuples = Concat(1)([BroadcastTo((k, 1))(c) for c in columns])
    updates = BroadcastTo((k,) + x.shape[len(indices):])(_cast(values, x.dtype))
    op = "TensorScatterAdd" if accumulate else "TensorScatterUpdate"
    return apply_op(op, [x, tuples, updates])[0]


@composite("IndexPut")
def IndexPut(x1, x2, indices, accumulate=0):
    """``IndexPut(accumulate=0)(x1, x2, indices)``: x1 with x2 put at the index tuples (added if accumulate)."""
    return _index_put(x1, x2, indices, accumulate)


def _masked_scatter(x: Any, mask: Any, source: Any) -> Tensor:
    """x where the (broadcast) bool mask is False; where True, source's elements in row-major order:
    the k-th True reads source's k-th element (a CumSum of the mask, one Gather, one Select)."""
    x, mask, source = _tensor(x), _tensor(mask), _tensor(source)
    if mask.dtype != mstype.bool_:
        raise TypeError(f"masked_scatter: mask must be a bool tensor, got {mask.dtype}")
    mask = BroadcastTo(x.shape)(mask)
    flat = Reshape()(_cast(mask, mstype.int32), (-1,))
    count = CumSum()(flat, 0)
    last = builtins.max(int(np.prod(source.shape)) - 1, 0)
    position = apply_op("Minimum", [apply_op("Maximum", [apply_op("Sub", [count, _index(1)])[0], _index(0)])[0],
                                    _index(last)])[0]
    picked = Reshape()(Gather()(Reshape()(_cast(source, x.dtype), (-1,)), position, 0), x.shape)
    return Select()(mask, picked, x)


@composite("MaskedScatter")
def MaskedScatter(input, mask, source):
    """``MaskedScatter()(input, mask, source)`` / ``Tensor.masked_scatter(mask, source)``."""
    return _masked_scatter(input, mask, source)


def _triangle_indices(row: Any, col: Any, offset: Any, dtype: Any, lower: bool) -> Tensor:
    """The (2, N) coordinates of a row x col matrix's lower (upper) triangle, row by row: a constant."""
    row, col = check_arg_int(row, "row", minimum=0), check_arg_int(col, "col", minimum=0)
    offset = check_arg_int(offset, "offset")
    coords = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return Tensor(np.stack(coords).reshape(2, -1).astype(np.int64), mstype.to_type(dtype))


class TrilIndices(_Op):
    """``TrilIndices(row, col, offset=0, dtype=mstype.int32)()``: the lower triangle's coordinates."""
    lower = True

    def __init__(self, row: int, col: int, offset: int = 0, dtype: Any = mstype.int32):
        super().__init__()
        self.row, self.col, self.offset, self.dtype = row, col, offset, dtype

    def __call__(self) -> Tensor:
        return _triangle_indices(self.row, self.col, self.offset, self.dtype, self.lower)


class TriuIndices(TrilIndices):
    """``TriuIndices(row, col, offset=0, dtype=mstype.int32)()``: the upper triangle's coordinates."""
    lower = False


def _band(x: Any, lower: Any, upper: Any) -> Tensor:
    """x kept where ``i - j <= lower`` and ``j - i <= upper`` over the last two dimensions (a negative
    bound keeps that whole triangle), zeros elsewhere: a Select with a constant mask."""
    x = _tensor(x)
    lower, upper = (int(v) if isinstance(v, Tensor) else check_arg_int(v, "matrix_band_part: bound")
                    for v in (lower, upper))
    if x.ndim < 2:
        raise InvalidValueError(f"matrix_band_part: x must have rank >= 2, got shape {x.shape}")
    i, j = np.indices(x.shape[-2:])
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return Select()(BroadcastTo(x.shape)(Tensor(keep)), x, BroadcastTo(x.shape)(Tensor(0, x.dtype)))


@composite("MatrixBandPart", functions=("matrix_band_part",))
def MatrixBandPart(x, lower, upper):
    """``MatrixBandPart()(x, lower, upper)``."""
    return _band(x, lower, upper)


class InvertPermutation(_Op):
    """``InvertPermutation()(input_x)``: the inverse of a permutation of 0..n-1 given as a tuple or list
    of ints (a tuple back, computed at once: its values are the attributes)."""

    def __call__(self, input_x: Any) -> tuple[int, ...]:
        perm = _int_tuple("InvertPermutation: input_x", input_x)
        if sorted(perm) != list(range(len(perm))):
            raise InvalidValueError(f"InvertPermutation: input_x={perm} must be a permutation of 0..{len(perm) - 1}")
        return _inverse(list(perm))


@composite("UnravelIndex")
def UnravelIndex(indices, dims):
    """``UnravelIndex()(indices, dims)``: each flat index's coordinates in a tensor of shape ``dims``,
    one row per dimension: ``(i // stride_d) % dims_d`` with exclusive reverse CumProd strides."""
    index, dims = _tensor(indices), _tensor(dims)
    if index.ndim > 1 or dims.ndim != 1:
        raise InvalidValueError(f"UnravelIndex: indices must be 0-D or 1-D and dims 1-D, got {index.shape}, "
                                f"{dims.shape}")
    flat = Reshape()(index, (1, -1))
    strides = Reshape()(CumProd(exclusive=True, reverse=True)(dims, 0), (-1, 1))
    quotient = apply_op("FloorDiv", [BroadcastTo((dims.shape[0], flat.shape[1]))(flat), strides])[0]
    out = apply_op("FloorMod", [quotient, Reshape()(dims, (-1, 1))])[0]
    return out if index.ndim else Reshape()(out, (dims.shape[0],))


class Range(_Op):
    """``Range(maxlen=1000000)(start, end, step)``: ``start, start + step, ...`` short of ``end``; its
    length depends on the values, so they must be concrete (computed from host data)."""

    def __init__(self, maxlen: int = 1000000):
        super().__init__()
        self.maxlen = check_arg_int(maxlen, "Range: maxlen", minimum=1)

    def __call__(self, start: Any, end: Any, step: Any) -> Tensor:
        values = [_host("Range", v) for v in (start, end, step)]
        first, last, delta = (v.item() for v in values)
        if delta == 0 or (last - first) * delta < 0:
            raise InvalidValueError(f"Range: step={delta} must be non-zero and move start={first} towards end={last}")
        out = np.arange(first, last, delta)
        if out.size > self.maxlen:
            raise InvalidValueError(f"Range: {out.size} elements exceed maxlen={self.maxlen}")
        dtype = _tensor(start).dtype
        return Tensor(out, mstype.int64 if dtype in (mstype.int32, mstype.int64) else dtype)


class SplitV(_Op):
    """``SplitV(size_splits, split_dim, num_split)(input_x)``: parts of the listed sizes along
    ``split_dim`` (one size may be -1: the rest), one Slice each."""

    def __init__(self, size_splits: Any, split_dim: int, num_split: int):
        super().__init__()
        self.size_splits = _int_tuple("SplitV: size_splits", size_splits)
        self.split_dim = check_arg_int(split_dim, "SplitV: split_dim")
        self.num_split = check_arg_int(num_split, "SplitV: num_split", minimum=1)

    def __call__(self, input_x: Any) -> tuple[Tensor, ...]:
        x = _tensor(input_x)
        axis = _axis("SplitV: split_dim", self.split_dim, x.ndim)
        sizes, n = list(self.size_splits), x.shape[axis]
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = n - (builtins.sum(sizes) + 1)
        if len(sizes) != self.num_split or builtins.sum(sizes) != n or builtins.min(sizes) < 0:
            raise InvalidValueError(f"SplitV: size_splits={self.size_splits} must be num_split={self.num_split} sizes "
                                    f"summing to {n}")
        starts = np.cumsum([0] + sizes[:-1])
        return tuple(_range_along(x, axis, int(s), size) for s, size in zip(starts, sizes))


class Pack(Stack):
    """``Pack(axis=0)(x)``: MindSpore's older name of Stack."""


class Unpack(Unstack):
    """``Unpack(axis=0)(x)``: MindSpore's older name of Unstack."""

    def __init__(self, axis: int = 0):
        super().__init__(axis)


def _fill_diagonal_mask(shape: tuple[int, ...], wrap: bool) -> np.ndarray:
    """numpy's fill_diagonal positions as a bool mask (a tall 2-D matrix restarts below a blank row
    when ``wrap``)."""
    mask = np.zeros(shape, bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    return mask


@composite("FillDiagonal")
def FillDiagonal(input_x, fill_value=0.0, wrap=False):
    """``FillDiagonal(fill_value, wrap=False)(input_x)``: x with its main diagonal (all dimensions equal
    beyond 2-D) set to ``fill_value``: a Select with a constant mask."""
    x = _tensor(input_x)
    if x.ndim < 2 or (x.ndim > 2 and len(set(x.shape)) != 1):
        raise InvalidValueError(f"FillDiagonal: input_x must be 2-D, or have all dimensions equal, got {x.shape}")
    mask = Tensor(_fill_diagonal_mask(x.shape, _flag("FillDiagonal: wrap", wrap)))
    return Select()(mask, BroadcastTo(x.shape)(_as_dtype(float(fill_value), x)), x)


# ---- sliding blocks (unfold/fold, Im2Col/Col2Im): one Gather (unfold) or one TensorScatterAdd (fold) of
# the flat positions each block reads, with one extra zero slot standing for the padding ----
def _block_pads(label: str, padding: Any) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from an int, a (height, width) pair or a 4-tuple."""
    if isinstance(padding, (tuple, list)) and len(padding) == 4:
        return _pad4(padding)
    ph, pw = _pair(f"{label}: padding", padding)
    return ph, ph, pw, pw


def _block_positions(label: str, size: tuple[int, int], kernel: Any, dilation: Any, padding: Any,
                     stride: Any) -> np.ndarray:
    """The flat position in an H x W plane each (kernel offset, block) reads, (kh * kw, L), in PyTorch's
    and MindSpore's order (kernel offsets row-major, blocks row-major); ``H * W`` where it is padding."""
    (h, w), (kh, kw) = size, _pair(f"{label}: kernel_size", kernel)
    (dh, dw), (sh, sw) = _pair(f"{label}: dilation", dilation), _pair(f"{label}: stride", stride)
    top, bottom, left, right = _block_pads(label, padding)
    if min(kh, kw, dh, dw, sh, sw) < 1 or min(top, bottom, left, right) < 0:
        raise InvalidValueError(f"{label}: kernel_size, dilation and stride must be >= 1 and padding >= 0")
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (w + left + right - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise InvalidValueError(f"{label}: the kernel does not fit the padded {h} x {w} input")
    rows = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(oh) * sh)[None, None, :, None] - top
    cols = (np.arange(kw) * dw)[None, :, None, None] + (np.arange(ow) * sw)[None, None, None, :] - left
    inside = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)
    return np.where(inside, rows * w + cols, h * w).reshape(kh * kw, oh * ow)


def _unfold(x: Any, kernel: Any, dilation: Any, padding: Any, stride: Any, label: str) -> Tensor:
    """NCHW x's sliding blocks as (N, C, kh * kw, L)."""
    x = _tensor(x)
    if x.ndim != 4:
        raise InvalidValueError(f"{label}: input must be 4-D (N, C, H, W), got shape {x.shape}")
    n, c, h, w = x.shape
    at = _block_positions(label, (h, w), kernel, dilation, padding, stride)
    flat = Concat(2)([Reshape()(x, (n, c, h * w)), BroadcastTo((n, c, 1))(Tensor(0, x.dtype))])
    return Gather()(flat, _index(at), 2)


def _fold(cols: Any, output_size: Any, kernel: Any, dilation: Any, padding: Any, stride: Any, label: str) -> Tensor:
    """(N, C, kh * kw, L) blocks summed back into an (N, C, H, W) image: overlapping blocks add."""
    cols = _tensor(cols)
    h, w = _static_ints(f"{label}: output_size", output_size)
    at = _block_positions(label, (h, w), kernel, dilation, padding, stride)
    n, c, k, blocks = cols.shape
    if (k, blocks) != at.shape:
        raise InvalidValueError(f"{label}: the input has {k} kernel offsets and {blocks} blocks; kernel_size and "
                                f"output_size give {at.shape[0]} and {at.shape[1]}")
    updates = Reshape()(Transpose()(Reshape()(cols, (n * c, k * blocks)), (1, 0)), (k * blocks, n * c))
    zeros = BroadcastTo((h * w + 1, n * c))(Tensor(0, cols.dtype))
    summed = apply_op("TensorScatterAdd", [zeros, _index(at.reshape(-1, 1)), updates])[0]
    image = Transpose()(Slice()(summed, (0, 0), (h * w, n * c)), (1, 0))
    return Reshape()(image, (n, c, h, w))


class Im2Col(_Op):
    """``Im2Col(ksizes, strides=1, dilations=1, pads=0)(x)``: NCHW x's sliding blocks, (N, C, kh * kw, L)."""

    def __init__(self, ksizes: Any, strides: Any = 1, dilations: Any = 1, pads: Any = 0):
        super().__init__()
        self.ksizes, self.strides, self.dilations, self.pads = ksizes, strides, dilations, pads

    def __call__(self, x: Any) -> Tensor:
        return _unfold(x, self.ksizes, self.dilations, self.pads, self.strides, "Im2Col")


class Col2Im(_Op):
    """``Col2Im(kernel_size, dilation=1, padding=0, stride=1)(x, output_size)``: Im2Col's adjoint, the
    (N, C, kh * kw, L) blocks summed into an (N, C, H, W) image."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def __call__(self, x: Any, output_size: Any) -> Tensor:
        return _fold(x, output_size, self.kernel_size, self.dilation, self.padding, self.stride, "Col2Im")


# ---- space <-> batch (NCHW; TensorFlow's order: output batch (i * bw + j) * N + n reads pixel
# (h * bh + i, w * bw + j) of the padded input n): Concats of zeros, a Reshape, a Transpose, a Reshape ----
def _block_pairs(label: str, block: Any, pairs: Any) -> tuple[tuple[int, int], tuple[tuple[int, int], ...]]:
    """(bh, bw) and ((top, bottom), (left, right)) of a block size (int or pair) and 2 x 2 pads/crops."""
    bh, bw = _pair(f"{label}: block", block)
    rows = tuple(_int_tuple(f"{label}: paddings/crops", r) for r in pairs) if isinstance(pairs, (tuple, list)) else ()
    if len(rows) != 2 or any(len(r) != 2 or min(r) < 0 for r in rows) or min(bh, bw) < 1:
        raise InvalidValueError(f"{label}: block must be >= 1 and paddings/crops two pairs of ints >= 0, got {block}, "
                                f"{pairs}")
    return (bh, bw), rows


def _zeros_along(x: Tensor, axis: int, size: int) -> Tensor:
    """Zeros of x's shape with ``size`` entries along ``axis``."""
    return BroadcastTo(x.shape[:axis] + (size,) + x.shape[axis + 1:])(Tensor(0, x.dtype))


def _space_to_batch(x: Any, block: Any, paddings: Any, label: str) -> Tensor:
    x = _tensor(x)
    (bh, bw), ((top, bottom), (left, right)) = _block_pairs(label, block, paddings)
    if x.ndim != 4:
        raise InvalidValueError(f"{label}: input must be 4-D (N, C, H, W), got shape {x.shape}")
    for axis, before, after in ((2, top, bottom), (3, left, right)):
        if before or after:
            x = Concat(axis)(([_zeros_along(x, axis, before)] if before else []) + [x]
                             + ([_zeros_along(x, axis, after)] if after else []))
    n, c, h, w = x.shape
    if h % bh or w % bw:
        raise InvalidValueError(f"{label}: the padded height and width {h, w} must be divisible by the block {bh, bw}")
    parts = Transpose()(Reshape()(x, (n, c, h // bh, bh, w // bw, bw)), (3, 5, 0, 1, 2, 4))
    return Reshape()(parts, (bh * bw * n, c, h // bh, w // bw))


def _batch_to_space(x: Any, block: Any, crops: Any, label: str) -> Tensor:
    x = _tensor(x)
    (bh, bw), ((top, bottom), (left, right)) = _block_pairs(label, block, crops)
    if x.ndim != 4 or x.shape[0] % (bh * bw):
        raise InvalidValueError(f"{label}: input must be 4-D with a batch divisible by {bh * bw}, got shape {x.shape}")
    b, c, h, w = x.shape
    n = b // (bh * bw)
    image = Reshape()(Transpose()(Reshape()(x, (bh, bw, n, c, h, w)), (2, 3, 4, 0, 5, 1)), (n, c, h * bh, w * bw))
    if top + bottom >= h * bh or left + right >= w * bw:
        raise InvalidValueError(f"{label}: crops {crops} leave nothing of the {h * bh} x {w * bw} image")
    return Slice()(image, (0, 0, top, left), (n, c, h * bh - top - bottom, w * bw - left - right))


class SpaceToBatch(_Op):
    """``SpaceToBatch(block_size, paddings)(input_x)``: b x b spatial blocks of the padded input to batch."""

    def __init__(self, block_size: int, paddings: Any):
        super().__init__()
        self.block_size, self.paddings = block_size, paddings

    def __call__(self, input_x: Any) -> Tensor:
        return _space_to_batch(input_x, self.block_size, self.paddings, "SpaceToBatch")


class SpaceToBatchND(_Op):
    """``SpaceToBatchND(block_shape, paddings)(input_x)``: SpaceToBatch with a (bh, bw) block."""

    def __init__(self, block_shape: Any, paddings: Any):
        super().__init__()
        self.block_shape, self.paddings = block_shape, paddings

    def __call__(self, input_x: Any) -> Tensor:
        return _space_to_batch(input_x, self.block_shape, self.paddings, "SpaceToBatchND")


class BatchToSpace(_Op):
    """``BatchToSpace(block_size, crops)(x)``: SpaceToBatch's inverse, then the crops removed."""

    def __init__(self, block_size: int, crops: Any):
        super().__init__()
        self.block_size, self.crops = block_size, crops

    def __call__(self, x: Any) -> Tensor:
        return _batch_to_space(x, self.block_size, self.crops, "BatchToSpace")


class BatchToSpaceND(_Op):
    """``BatchToSpaceND(block_shape, crops)(input_x)``: BatchToSpace with a (bh, bw) block."""

    def __init__(self, block_shape: Any, crops: Any):
        super().__init__()
        self.block_shape, self.crops = block_shape, crops

    def __call__(self, input_x: Any) -> Tensor:
        return _batch_to_space(input_x, self.block_shape, self.crops, "BatchToSpaceND")


# ---- statistics, search, segments, bits (round 2) ----
def _search(sorted_sequence: Any, values: Any, right: bool, out_type: Any) -> Tensor:
    """The SearchSorted kernel: for each value, its insertion index in the sorted rows (the last
    dimension of ``sorted_sequence``: one row, or one per leading index of ``values``)."""
    seq, vals = _binary_operands(sorted_sequence, values)
    # an omitted dtype arrives as the table's recorded default ("mindspore.int32"): its name
    out = mstype.to_type(getattr(mstype, repr(out_type).rpartition(".")[2]) if not isinstance(out_type, (str, mstype.Type))
                         else out_type)
    if out not in (mstype.int32, mstype.int64):
        raise InvalidParamError(f"SearchSorted: the output dtype must be int32 or int64, got {out}")
    return apply_op("SearchSorted", [seq, vals], {"right": bool(right), "out_type": out.name})[0]


def _no_sorter(label: str, sorter: Any) -> None:
    if sorter is not None:
        raise InvalidParamError(f"{label}: sorter={sorter!r} is not supported here; sort the sequence first "
                                "(ops.sort) and leave sorter None")


@composite("SearchSorted")
def SearchSorted(sorted_sequence, values, sorter=None, dtype=mstype.int64, right=False):
    """``SearchSorted(dtype=int64, right=False)(sorted_sequence, values)``: where each value goes in
    the sorted last dimension (the first place, or the last with ``right``)."""
    _no_sorter("SearchSorted", sorter)
    return _search(sorted_sequence, values, _flag("SearchSorted: right", right), dtype)


@composite("LowerBound")
def LowerBound(sorted_x, values, out_type=mstype.int32):
    """``LowerBound(out_type=int32)(sorted_x, values)``: per row of the 2-D sorted_x, the first index
    whose element is not less than each value of that row of ``values``."""
    return _search(sorted_x, values, False, out_type)


@composite("UpperBound")
def UpperBound(sorted_x, values, out_type=mstype.int32):
    """``UpperBound(out_type=int32)(sorted_x, values)``: the first index whose element is greater."""
    return _search(sorted_x, values, True, out_type)


def _bincount_length(label: str, ids: np.ndarray, minimum: int) -> int:
    """The bins: max(ids) + 1, at least ``minimum`` (MindSpore ignores negative ids)."""
    top = int(ids.max()) + 1 if ids.size else 0
    return builtins.max(top, minimum)


@composite("Bincount")
def Bincount(array, size, weights):
    """``Bincount()(array, size, weights)``: per bin in [0, size) the sum of the weights of the
    elements equal to it (an empty ``weights``: counts); ids outside the bins are dropped."""
    ids = _tensor(array)
    bins = int(_host("Bincount: size", size)) if isinstance(size, Tensor) else check_arg_int(size, "Bincount: size")
    w = _tensor(weights)
    if w.size == 0:
        w = OnesLike()(Cast()(ids, mstype.float32))
    return UnsortedSegmentSum()(Reshape()(w, (-1,)), Reshape()(Cast()(ids, mstype.int32), (-1,)), bins)


@composite("CountNonZero")
def CountNonZero(x, dims=None):
    """``CountNonZero(dims=None)(x)``: the non-zero elements over ``dims`` (all by default), int64."""
    x = _tensor(x)
    nonzero = Cast()(apply_op("NotEqual", [x, _as_dtype(0, x)], {})[0], mstype.int64)
    return apply_op("ReduceSum", [nonzero], {"axis": _axes_of(dims, x.ndim), "keep_dims": False})[0]


def _axes_of(dims: Any, rank: int) -> tuple[int, ...]:
    if dims is None or dims == [] or dims == ():
        return tuple(range(rank))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return tuple(check_arg_int(d, "dims", minimum=-rank, maximum=rank - 1) % builtins.max(rank, 1) for d in dims)


def _integer_operands(label: str, x: Any, y: Any) -> tuple[Tensor, Tensor]:
    """Two integer tensors of one dtype (MindSpore's shifts refuse mixed dtypes and floats)."""
    x, y = _binary_operands(x, y)
    for t in (x, y):
        if t.dtype.name not in _INTEGER_NAMES:
            raise TypeError(f"For '{label}', the dtype of input should be one of integer types, but got {t.dtype}.")
    if x.dtype != y.dtype:
        raise TypeError(f"For '{label}', the dtype of two args should be same, but got {x.dtype} and {y.dtype}")
    return x, y


# the integer dtypes the shifts and PopulationCount take
_INTEGER_NAMES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


@composite("LeftShift")
def LeftShift(x1, x2):
    """``LeftShift()(x1, x2)``: x1 * 2**x2 wrapped to the dtype (0 for counts outside [0, 63])."""
    return apply_op("LeftShift", list(_integer_operands("LeftShift", x1, x2)), {})[0]


@composite("RightShift")
def RightShift(input_x, input_y):
    """``RightShift()(x, y)``: the arithmetic shift (sign-filled past the width; 0 for negative counts)."""
    return apply_op("RightShift", list(_integer_operands("RightShift", input_x, input_y)), {})[0]


@composite("Rint")
def Rint(x):
    """``Rint()(x)``: each float rounded to the nearest integer, halves to even."""
    x = _tensor(x)
    if x.dtype.name not in ("float16", "float32", "float64", "bfloat16"):
        raise TypeError(f"For primitive[Rint], the input argument[x] must be a float tensor, but got {x.dtype}.")
    return apply_op("Rint", [x], {})[0]


@composite("PopulationCount", functions=("population_count",))
def PopulationCount(input_x):
    """``PopulationCount()(input_x)``: the set bits of each integer, within its dtype's width, uint8."""
    x = _tensor(input_x)
    if x.dtype.name not in _INTEGER_NAMES:
        raise TypeError(f"For 'PopulationCount', input_x must be an integer tensor, but got {x.dtype}.")
    return apply_op("PopulationCount", [x], {})[0]


def _segment_count(label: str, segment_ids: Any, rows: int) -> int:
    """Segments of a sorted 1-D id tensor: its last id + 1 (the ids' values: PyNative or constants)."""
    ids = _host(label, segment_ids)
    if ids.ndim != 1 or ids.shape[0] != rows:
        raise InvalidValueError(f"{label}: segment_ids must be 1-D with one id per row of x ({rows}), got {ids.shape}")
    if ids.size and (ids[0] < 0 or np.any(np.diff(ids) < 0)):
        raise InvalidValueError(f"For 'SegmentOp', segment_ids must be a tensor with element values sorted in "
                                f"ascending order.")
    return int(ids[-1]) + 1 if ids.size else 0


def _segment(kind: str, x: Any, segment_ids: Any) -> Tensor:
    """The sorted-segment reductions: the unsorted ones over last id + 1 segments, an empty segment 0
    (Max/Min/Mean) or 1 (Prod) as MindSpore's."""
    x = _tensor(x)
    label = f"Segment{kind}"
    count = _segment_count(label, segment_ids, x.shape[0] if x.ndim else -1)
    ids = Cast()(_tensor(segment_ids), mstype.int32)
    if kind in ("Sum", "Mean"):
        out = UnsortedSegmentSum()(x, ids, count)
        if kind == "Sum":
            return out
        rows = UnsortedSegmentSum()(OnesLike()(Cast()(ids, x.dtype)), ids, count)
        shape = (count,) + (1,) * (x.ndim - 1)
        return apply_op("Div", [out, Reshape()(apply_op("Maximum", [rows, _as_dtype(1, rows)], {})[0], shape)], {})[0]
    if kind == "Prod":
        return UnsortedSegmentProd()(x, ids, count)
    out = (UnsortedSegmentMax if kind == "Max" else UnsortedSegmentMin)()(x, ids, count)
    present = UnsortedSegmentSum()(OnesLike()(Cast()(ids, mstype.float32)), ids, count)
    present = BroadcastTo(out.shape)(Reshape()(apply_op("Greater", [present, _as_dtype(0, present)], {})[0],
                                               (count,) + (1,) * (x.ndim - 1)))
    return Select()(present, out, ZerosLike()(out))


@composite("SegmentSum")
def SegmentSum(input_x, segment_ids):
    """``SegmentSum()(x, segment_ids)``: per segment of the sorted ids, the sum of its rows."""
    return _segment("Sum", input_x, segment_ids)


@composite("SegmentMean")
def SegmentMean(input_x, segment_ids):
    return _segment("Mean", input_x, segment_ids)


@composite("SegmentMax")
def SegmentMax(input_x, segment_ids):
    return _segment("Max", input_x, segment_ids)


@composite("SegmentMin")
def SegmentMin(input_x, segment_ids):
    return _segment("Min", input_x, segment_ids)


@composite("SegmentProd")
def SegmentProd(input_x, segment_ids):
    return _segment("Prod", input_x, segment_ids)


# ---- internals round 2: IdentityN, CheckNumerics, Padding ----
# CheckNumerics' and Eps' input dtypes (MindSpore's: no bfloat16)
CHECKED_FLOATS = ("float16", "float32", "float64")


class IdentityN(_Op):
    """``IdentityN()(x)``: a list or tuple of Tensors returned as a tuple of the same Tensors."""

    def __call__(self, *args: Any) -> tuple:
        if len(args) != 1 or not isinstance(args[0], (list, tuple)):
            got = type(args[0]).__name__ if len(args) == 1 else f"{len(args)} inputs"
            raise TypeError(f"For [IdentityN] should have ListTensor or TupleTensor input but get {got}")
        for k, x in enumerate(args[0]):
            if not isinstance(x, Tensor):
                raise TypeError(f"For Primitive[IdentityN], the type of input argument[input x[{k}]] must be Tensor "
                                f"but got {type(x).__name__}.")
        return tuple(Identity()(x) for x in args[0])


class CheckNumerics(_Op):
    """``CheckNumerics()(x)``: ``x`` unchanged, or RuntimeError if it holds a NaN or an Inf. The check
    reads the values, so in a captured graph it is refused (data-dependent)."""

    def __call__(self, *args: Any) -> Tensor:
        if len(args) != 1:
            raise TypeError(f"CheckNumerics() takes 1 input but {len(args)} were given")
        x = _tensor(args[0])
        if x.dtype.name not in CHECKED_FLOATS:
            raise TypeError(f"For primitive[CheckNumerics], the input argument[x] must be a type of "
                            f"{{Tensor[Float16], Tensor[Float32], Tensor[Float64]}}, but got Tensor[{x.dtype}].")
        if x.is_symbolic:
            raise InvalidParamError("CheckNumerics: the check reads the tensor's values, which a GRAPH_MODE "
                                    "capture does not know; check it in PyNative")
        data = x.asnumpy()
        if np.isnan(data).any():
            raise RuntimeError(": Tensor had NaN values")
        if np.isinf(data).any():
            raise RuntimeError(": Tensor had Inf values")
        return x


class Padding(_Op):
    """``Padding(pad_dim_size=8)(x)``: ``x`` of shape (..., 1) widened to (..., pad_dim_size) with zeros
    after its value."""

    def __init__(self, pad_dim_size: int = 8) -> None:
        super().__init__()
        if isinstance(pad_dim_size, bool) or not isinstance(pad_dim_size, int) or pad_dim_size <= 0:
            raise ValueError(f"For 'Padding', the 'pad_dim_size' must be int and must > 0, but got "
                             f"'{pad_dim_size}' with type '{type(pad_dim_size).__name__}'.")
        self.pad_dim_size = pad_dim_size
        self.add_prim_attr("pad_dim_size", pad_dim_size)

    def __call__(self, *args: Any) -> Tensor:
        if len(args) != 1:
            raise TypeError(f"Padding() takes 1 input but {len(args)} were given")
        x = _tensor(args[0])
        if x.ndim < 1:
            raise ValueError(f"For 'Padding', the rank of 'x' must be at least 1, but got {x.ndim}.")
        if x.shape[-1] != 1:
            raise ValueError(f"For 'Padding', the last dimension of 'x' must be 1, but got: {x.shape[-1]}.")
        if self.pad_dim_size == 1:
            return x
        return apply_op("Pad", [x], {"paddings": ((0, 0),) * (x.ndim - 1) + ((0, self.pad_dim_size - 1),)})[0]


class TransposeView(_Op):
    """``TransposeView()(input, input_perm)``: MindSpore's view form of ``Transpose`` (no tensor is ever
    written in place here, so a view and a copy are the same thing)."""

    def __call__(self, input: Any, input_perm: Sequence[int]) -> Tensor:
        return Transpose()(input, input_perm)


class TransposeExtView(_Op):
    """``TransposeExtView()(input, dim0, dim1)``: ``input`` with dimensions ``dim0`` and ``dim1`` swapped
    (the view form of ``mint.transpose``)."""

    def __call__(self, input: Any, dim0: int, dim1: int) -> Tensor:
        x = _tensor(input)
        rank = builtins.max(x.ndim, 1)
        a, b = (check_arg_int(d, "TransposeExtView: dim", minimum=-rank, maximum=rank - 1) % rank for d in (dim0, dim1))
        perm = list(range(x.ndim))
        if x.ndim:
            perm[a], perm[b] = perm[b], perm[a]
        return Transpose()(x, perm)


# ---- resampling and patches (round 2) ----
class ResizeNearestNeighborV2(_Op):
    """``ResizeNearestNeighborV2(align_corners=False, half_pixel_centers=False)(image, size)``: NCHW ``image``
    to ``size`` (2 ints, or a 1-D Tensor) by nearest neighbour: the ResizeNearestNeighbor kernel, whose
    coordinates follow the same two flags (kernels/ops/resize.py)."""

    def __init__(self, align_corners: bool = False, half_pixel_centers: bool = False):
        super().__init__()
        for name, value in (("align_corners", align_corners), ("half_pixel_centers", half_pixel_centers)):
            if not isinstance(value, bool):
                raise TypeError(f"For '{self.name}', the type of '{name}' must be bool, but got "
                                f"{type(value).__name__}.")
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

    def __call__(self, image: Any, size: Any) -> Tensor:
        x = _tensor(image)
        if x.ndim != 4:
            raise ValueError(f"For '{self.name}', the dimension of 'image' must be 4, but got {x.ndim}.")
        sizes = _static_ints(f"{self.name}: size", size)
        if len(sizes) != 2 or any(s <= 0 for s in sizes):
            raise ValueError(f"For '{self.name}', 'size' must be 2 positive ints, but got {list(sizes)}.")
        return apply_op("ResizeNearestNeighbor", [x], {"size": tuple(sizes), "align_corners": self.align_corners,
                                                       "half_pixel_centers": self.half_pixel_centers})[0]


def _affine_base(sizes: Sequence[int], align_corners: bool) -> np.ndarray:
    """The identity grid of an output of spatial ``sizes`` (D, H, W or H, W) as homogeneous rows
    (x, y[, z], 1), x the last axis: -1..1 through the corner pixels' centres when corner-aligned, else
    through their outer edges ((2 i + 1) / n - 1)."""
    def line(n: int) -> np.ndarray:
        if align_corners:
            return np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
        return (2.0 * np.arange(n) + 1.0) / n - 1.0
    axes = np.meshgrid(*[line(n) for n in sizes], indexing="ij")
    rows = [a.reshape(-1) for a in reversed(axes)] + [np.ones(int(np.prod(sizes)))]
    return np.stack(rows, 1).astype(np.float32)


@composite("AffineGrid", functions=("affine_grid",), rename={"size": "output_size"})
def AffineGrid(theta: Any, output_size: Any, align_corners: bool = False) -> Tensor:
    """The sampling grid of a batch of affine matrices: (N, 2, 3) ``theta`` and ``output_size`` (N, C, H, W)
    give (N, H, W, 2); (N, 3, 4) and (N, C, D, H, W) give (N, D, H, W, 3): each identity-grid point
    (x, y[, z], 1) times theta's rows, one BatchMatMul."""
    owner = "AffineGrid"
    t = _tensor(theta)
    if not isinstance(align_corners, bool):
        raise TypeError(f"For '{owner}', the type of 'align_corners' must be bool, but got "
                        f"{type(align_corners).__name__}.")
    if not isinstance(output_size, tuple):
        raise TypeError(f"For '{owner}', the type of 'output_size' must be tuple, but got "
                        f"{type(output_size).__name__}.")
    if t.dtype not in (mstype.float16, mstype.float32):
        raise TypeError(f"For '{owner}', the type of 'theta' must be float16 or float32, but got {t.dtype}.")
    if t.ndim != 3 or t.shape[1:] not in ((2, 3), (3, 4)):
        raise ValueError(f"For '{owner}', the shape of 'theta' must be (N, 2, 3) or (N, 3, 4), but got {t.shape}.")
    dims = t.shape[1]
    if len(output_size) != dims + 2:
        raise ValueError(f"For '{owner}', 'output_size' must have {dims + 2} elements for theta of shape "
                         f"{t.shape}, but got {len(output_size)}.")
    if output_size[0] != t.shape[0] or any(isinstance(s, bool) or not isinstance(s, int) or s <= 0
                                           for s in output_size):
        raise ValueError(f"For '{owner}', 'output_size' must be positive ints with output_size[0] = theta's N "
                         f"{t.shape[0]}, but got {output_size}.")
    spatial = tuple(output_size[2:])
    base = Tensor(np.broadcast_to(_affine_base(spatial, align_corners),
                                  (t.shape[0], int(np.prod(spatial)), dims + 1)).copy())
    # float16 theta: the product in float32, rounded once
    grid = apply_op("BatchMatMul", [base, _cast(t, mstype.float32)], {"transpose_a": False, "transpose_b": True})[0]
    return _cast(Reshape()(grid, (t.shape[0],) + spatial + (dims,)), t.dtype)


# ---- complex numbers ----
@composite("ConjugateTranspose")
def ConjugateTranspose(x, perm):
    """x transposed by ``perm`` and conjugated (a real x only transposed)."""
    x = Transpose()(x, perm)
    return apply_op("Conj", [x])[0] if x.dtype.name in ("complex64", "complex128") else x


# ---- linear algebra and statistics ----
# the running extrema (their kernels type the indices as MindSpore's primitives: Cummax int64, Cummin
# int32), and the multivariate log-gamma.
@composite("Cummax")
def Cummax(input, axis):
    """(running maxima along ``axis``, the index each came from; int64 as MindSpore's Cummax)."""
    return tuple(apply_op("Cummax", [_tensor(input)], {"axis": _static_int("Cummax: axis", axis)}))


@composite("Cummin")
def Cummin(input, axis):
    """(running minima along ``axis``, the index each came from; int32 as MindSpore's Cummin)."""
    return tuple(apply_op("Cummin", [_tensor(input)], {"axis": _static_int("Cummin: axis", axis)}))


MVLGAMMA_DTYPES = ("float32", "float64")


@composite("Mvlgamma", functions=("mvlgamma",))
def Mvlgamma(input, p=None):
    """log of the multivariate gamma of dimension p: sum over i < p of lgamma(x - i / 2) plus
    p (p - 1) / 4 log(pi); every element must exceed (p - 1) / 2 (checked when the values are known)."""
    x = _tensor(input)
    if x.dtype.name not in MVLGAMMA_DTYPES:
        raise TypeError(f"For primitive[Mvlgamma], the input argument[x] must be a type of {{Tensor[Float32], "
                        f"Tensor[Float64]}}, but got Tensor[{x.dtype}].")
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"For 'Mvlgamma', the type of 'p' must be int, but got {type(p).__name__}.")
    if p < 1:
        raise ValueError(f"For 'Mvlgamma', 'p' must be greater than or equal to 1, but got {p}.")
    if not x.is_symbolic and x.size and not (x.asnumpy() > (p - 1) / 2).all():
        raise ValueError("For Mvlgamma, all elements of 'x' must be greater than (p-1)/2.")
    total = Tensor(np.full((), p * (p - 1) / 4 * np.log(np.pi)), x.dtype)
    for i in range(p):
        shifted = apply_op("Sub", [x, Tensor(np.array(i / 2), x.dtype)])[0]
        total = apply_op("Add", [total, apply_op("Lgamma", [shifted])[0]])[0]
    return total


# The V3 diagonal ops (TensorFlow's MatrixDiag/MatrixDiagPart/MatrixSetDiag, MindSpore's V3): a constant
# index map from the diagonal band's (diagonal, position) to the matrix's (row, column), built on the host
# from the static k, then one Gather over the flattened operand with a padding slot appended.
DIAG_ALIGNS = ("LEFT_RIGHT", "LEFT_LEFT", "RIGHT_LEFT", "RIGHT_RIGHT")


def _diag_band(prim: str, k: Any) -> tuple[int, int]:
    """(lowest, highest) diagonal of ``k``: an int, or a Tensor/tuple of one or two ints."""
    ks = _static_ints(f"{prim}: k", k) if isinstance(k, (Tensor, tuple, list)) else (check_arg_int(k, f"{prim}: k"),)
    if len(ks) not in (1, 2) or ks[0] > ks[-1]:
        raise ValueError(f"For {prim}, k must be one int or a pair (k[0] <= k[1]), but got {list(ks)}.")
    return ks[0], ks[-1]


def _diag_align(prim: str, align: Any) -> str:
    if align not in DIAG_ALIGNS:
        raise ValueError(f"For '{prim}', the 'align' must be one of {list(DIAG_ALIGNS)}, but got {align!r}.")
    return align


def _diag_cells(rows: int, cols: int, low: int, high: int, align: str) -> tuple[int, list]:
    """(max diagonal length, [(band row, position, matrix row, matrix column)]): diagonal d = high - band
    row; a diagonal shorter than the longest is aligned right or left as ``align`` says (its first word
    for superdiagonals, its second for subdiagonals; the main diagonal is left if either says left)."""
    lengths = {d: min(rows + min(0, d), cols - max(0, d)) for d in range(low, high + 1)}
    longest = max(max(lengths.values()), 0)
    cells = []
    for band, d in enumerate(range(high, low - 1, -1)):
        left = (d >= 0 and align.startswith("LEFT")) or (d <= 0 and align.endswith("LEFT"))
        offset = 0 if left else longest - max(lengths[d], 0)
        for j in range(max(lengths[d], 0)):
            cells.append((band, j + offset, j + max(0, -d), j + max(0, d)))
    return longest, cells


def _flat_with(x: Tensor, tail: int, extra: Tensor) -> Tensor:
    """x's last ``tail`` axes flattened into one, with ``extra`` (..., e) concatenated after them."""
    flat = apply_op("Reshape", [x], {"shape": x.shape[:x.ndim - tail] + (-1,)})[0]
    return apply_op("Concat", [flat, extra], {"axis": -1})[0]


def _padding_slot(batch: tuple[int, ...], dtype: Any, value: Any) -> Tensor:
    """The padding value as a (batch..., 1) tensor of ``dtype``."""
    pad = _cast(value if isinstance(value, Tensor) else Tensor(value), dtype)
    pad = apply_op("Reshape", [pad], {"shape": (1,)})[0]
    return apply_op("BroadcastTo", [pad], {"shape": batch + (1,)})[0]


def _gather_map(flat: Tensor, index: np.ndarray) -> Tensor:
    return apply_op("Gather", [flat, Tensor(index.astype(np.int32))], {"axis": flat.ndim - 1})[0]


@composite("MatrixDiagPartV3")
def MatrixDiagPartV3(x, k, padding_value, align="RIGHT_LEFT"):
    """The diagonals k[0]..k[1] of each matrix, highest first (..., num_diags, max_len), or (..., max_len)
    for one k; short diagonals aligned by ``align`` and padded with ``padding_value``."""
    a = _tensor(x)
    if a.ndim < 2:
        raise ValueError(f"For 'MatrixDiagPartV3', the rank of 'x' must be at least 2, but got {a.ndim}.")
    low, high = _diag_band("MatrixDiagPartV3", k)
    rows, cols = a.shape[-2:]
    if not (-rows < low <= high < cols) and not (rows == 0 or cols == 0):
        raise ValueError(f"For 'MatrixDiagPartV3', k must be in (-{rows}, {cols}), but got ({low}, {high}).")
    longest, cells = _diag_cells(rows, cols, low, high, _diag_align("MatrixDiagPartV3", align))
    index = np.full((high - low + 1, longest), rows * cols)
    for band, j, r, c in cells:
        index[band, j] = r * cols + c
    out = _gather_map(_flat_with(a, 2, _padding_slot(a.shape[:-2], a.dtype, padding_value)), index)
    return out if low < high else apply_op("Squeeze", [out], {"axis": (-2,)})[0]


@composite("MatrixDiagV3")
def MatrixDiagV3(x, k, num_rows, num_cols, padding_value, align="RIGHT_LEFT"):
    """Matrices (..., num_rows, num_cols) with the diagonals k[0]..k[1] taken from x (..., num_diags,
    max_len) (or (..., max_len) for one k) and ``padding_value`` elsewhere; -1 rows/cols: the smallest
    that fit (TensorFlow's rules)."""
    d = _tensor(x)
    low, high = _diag_band("MatrixDiagV3", k)
    if d.ndim < (1 if low == high else 2):
        raise ValueError(f"For 'MatrixDiagV3', the rank of 'x' is too small for k ({low}, {high}): {d.ndim}.")
    if low < high and d.shape[-2] != high - low + 1:
        raise ValueError(f"For 'MatrixDiagV3', x must have {high - low + 1} diagonals, but got {d.shape[-2]}.")
    longest = d.shape[-1]
    rows, cols = _static_int("MatrixDiagV3: num_rows", num_rows), _static_int("MatrixDiagV3: num_cols", num_cols)
    least_rows, least_cols = longest - min(high, 0), longest + max(low, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(least_rows, least_cols)
    elif rows == -1:
        rows = least_rows
    elif cols == -1:
        cols = least_cols
    if rows < least_rows or cols < least_cols or longest != min(rows + min(0, high), cols - max(0, low)):
        raise ValueError("For MatrixDiagV3, the number of rows or columns is not consistent with the specified k "
                         "and x.")
    _, cells = _diag_cells(rows, cols, low, high, _diag_align("MatrixDiagV3", align))
    band_count = high - low + 1
    index = np.full((rows, cols), band_count * longest)
    for band, j, r, c in cells:
        index[r, c] = band * longest + j
    batch = d if low < high else apply_op("ExpandDims", [d], {"axis": -2})[0]
    return _gather_map(_flat_with(batch, 2, _padding_slot(batch.shape[:-2], batch.dtype, padding_value)), index)


@composite("MatrixSetDiagV3")
def MatrixSetDiagV3(x, diagonal, k, align="RIGHT_LEFT"):
    """x with its diagonals k[0]..k[1] replaced by ``diagonal`` (..., num_diags, max_len) (or
    (..., max_len) for one k), aligned by ``align``."""
    a, diag = _tensor(x), _tensor(diagonal)
    if a.ndim < 2:
        raise ValueError(f"For 'MatrixSetDiagV3', the rank of 'x' must be at least 2, but got {a.ndim}.")
    low, high = _diag_band("MatrixSetDiagV3", k)
    rows, cols = a.shape[-2:]
    longest, cells = _diag_cells(rows, cols, low, high, _diag_align("MatrixSetDiagV3", align))
    band = diag if low < high else apply_op("ExpandDims", [diag], {"axis": -2})[0]
    if band.shape[:-2] != a.shape[:-2] or band.shape[-2:] != (high - low + 1, longest):
        raise ValueError(f"For 'MatrixSetDiagV3', diagonal must have shape {a.shape[:-2] + (high - low + 1, longest)}"
                         f" for x {a.shape} and k ({low}, {high}), but got {diag.shape}.")
    index = np.arange(rows * cols).reshape(rows, cols)
    for b, j, r, c in cells:
        index[r, c] = rows * cols + b * longest + j
    flat_band = apply_op("Reshape", [_cast(band, a.dtype)], {"shape": band.shape[:-2] + (-1,)})[0]
    return _gather_map(_flat_with(a, 2, flat_band), index)


LSTSQ_DTYPES = ("float16", "float32", "float64")


def _matmul_2d(a: Tensor, b: Tensor, transpose_a: bool = False) -> Tensor:
    """op(a) @ b for 2-D operands: MatMul (float16/float32), else a broadcast product summed (float64)."""
    if a.dtype.name in ("float16", "float32"):
        return apply_op("MatMul", [a, b], {"transpose_a": transpose_a, "transpose_b": False})[0]
    if transpose_a:
        a = apply_op("Transpose", [a], {"perm": (1, 0)})[0]
    product = apply_op("Mul", [apply_op("ExpandDims", [a], {"axis": 2})[0],
                               apply_op("ExpandDims", [b], {"axis": 0})[0]])[0]
    return apply_op("ReduceSum", [product], {"axis": (1,), "keep_dims": False})[0]


def _least_squares_qr(a: Tensor, b: Tensor) -> Tensor:
    """The least-squares (rows >= columns) or minimum-norm (rows < columns) solution of a x = b for a
    full-rank 2-D a, from a reduced QR of a or of a^T and one triangular solve."""
    m, n = a.shape
    if m >= n:
        q, r = apply_op("Qr", [a], {"full_matrices": False})
        return apply_op("MatrixTriangularSolve", [r, _matmul_2d(q, b, transpose_a=True)],
                        {"lower": False, "adjoint": False})[0]
    q, r = apply_op("Qr", [apply_op("Transpose", [a], {"perm": (1, 0)})[0]], {"full_matrices": False})
    return _matmul_2d(q, apply_op("MatrixTriangularSolve", [r, b], {"lower": False, "adjoint": True})[0])


@composite("Lstsq", functions=("lstsq",), rename={"input": "x", "A": "a"})
def Lstsq(x, a, fast=True, l2_regularizer=0.0):
    """The least-squares solution (n, k) of x y = a for a full-rank 2-D x (m, n) and a (m,) or (m, k)
    (a 1-D a gives (n, 1), as MindSpore's), from a reduced QR (the minimum-norm solution when m < n);
    float16 through float32. Only l2_regularizer 0.0
    is MindSpore's (it refuses others)."""
    matrix, rhs = _tensor(x), _tensor(a)
    for label, t in (("x", matrix), ("a", rhs)):
        if t.dtype.name not in LSTSQ_DTYPES:
            raise TypeError(f"For 'Lstsq', the dtype of '{label}' must be float16, float32 or float64, but got "
                            f"{t.dtype}.")
    if matrix.dtype != rhs.dtype:
        raise TypeError(f"For 'Lstsq', x and a must have one dtype, but got {matrix.dtype} and {rhs.dtype}.")
    if not isinstance(l2_regularizer, float) or l2_regularizer != 0.0:
        raise TypeError(f"For 'Lstsq', the 'l2_regularizer' should be 0.0, but got '{l2_regularizer}'.")
    _flag("Lstsq: fast", fast)
    if matrix.ndim != 2:
        raise ValueError(f"For 'Lstsq', the dimension of x must be equal to 2, but got x_dim: {matrix.ndim}.")
    if rhs.ndim not in (1, 2) or rhs.shape[0] != matrix.shape[0]:
        raise ValueError(f"For 'Lstsq', a must be (m,) or (m, k) for x (m, n), but got {rhs.shape} and {matrix.shape}.")
    work = mstype.float32 if matrix.dtype == mstype.float16 else matrix.dtype
    column = rhs if rhs.ndim == 2 else apply_op("ExpandDims", [rhs], {"axis": -1})[0]
    return _cast(_least_squares_qr(_cast(matrix, work), _cast(column, work)), matrix.dtype)


# ---- nn compositions ----
# LogSpace's output dtypes, and the dtypes FillV2's and BatchToSpaceNDV2's shape operands may have
LOG_SPACE_DTYPES = ("float16", "float32")
SHAPE_OPERAND_DTYPES = ("int32", "int64")


def _host_shape(label: str, value: Any) -> tuple[int, ...]:
    """A shape operand (tuple, list or int tensor) as host ints."""
    if isinstance(value, Tensor):
        if value.dtype.name not in SHAPE_OPERAND_DTYPES:
            raise TypeError(f"For '{label}', the shape operand must be int32 or int64, but got {value.dtype}.")
        return tuple(int(v) for v in _host(label, value).reshape(-1))
    return tuple(int(v) for v in np.asarray(value).reshape(-1))


class FillV2(_Op):
    """``FillV2()(shape, value)``: a tensor of ``shape`` (tuple or int tensor) filled with the 0-d tensor
    ``value``, in its dtype."""

    def __call__(self, shape: Any, value: Any) -> Tensor:
        value = _tensor(value)
        if value.ndim != 0:
            raise ValueError(f"For 'FillV2', the 'value' must be a 0-D tensor, but got shape {value.shape}.")
        return BroadcastTo(_host_shape("FillV2", shape))(value)


class LogSpace(_Op):
    """``LogSpace(steps, base, dtype)(start, end)``: ``base ** linspace(start, end, steps)``."""

    def __init__(self, steps: int = 10, base: int = 10, dtype: Any = mstype.float32) -> None:
        super().__init__()
        self.steps = check_arg_int(steps, "LogSpace: steps", minimum=0)
        self.base = check_arg_int(base, "LogSpace: base", minimum=0)
        if getattr(dtype, "name", None) not in LOG_SPACE_DTYPES:
            raise TypeError(f"For 'LogSpace', the 'dtype' must be float16 or float32, but got {dtype}.")
        self.dtype = dtype
        for key, value in (("steps", steps), ("base", base), ("dtype", dtype)):
            self.add_prim_attr(key, value)

    def __call__(self, start: Any, end: Any) -> Tensor:
        start, end = _tensor(start), _tensor(end)
        for label, t in (("start", start), ("end", end)):
            if t.dtype.name not in LOG_SPACE_DTYPES or t.ndim != 0:
                raise TypeError(f"For 'LogSpace', the '{label}' must be a 0-D float16 or float32 tensor, but got "
                                f"{t.dtype} of shape {t.shape}.")
        fraction = np.arange(self.steps, dtype=np.float32) / np.float32(builtins.max(self.steps - 1, 1))
        start32, end32 = _cast(start, mstype.float32), _cast(end, mstype.float32)
        exponent = start32 + (end32 - start32) * Tensor(fraction)
        return _cast(Tensor(np.float32(self.base)) ** exponent, self.dtype)


class ParallelConcat(_Op):
    """``ParallelConcat()(values)``: the tensors (each of first dimension 1) concatenated along axis 0."""

    def __call__(self, values: Sequence[Any]) -> Tensor:
        tensors = [_tensor(v) for v in values]
        if not tensors:
            raise ValueError("For 'ParallelConcat', the input must not be empty.")
        for t in tensors:
            if t.ndim == 0 or t.shape[0] != 1:
                raise ValueError(f"For 'ParallelConcat', each input's first dimension must be 1, but got shape "
                                 f"{t.shape}.")
        return Concat(0)(tensors)


@composite("ScatterAddWithAxis")
def ScatterAddWithAxis(input_x: Any, indices: Any, updates: Any, axis: int = 0) -> Tensor:
    """``input_x`` with ``updates`` added at ``indices`` along ``axis`` (TensorScatterElements add)."""
    return TensorScatterElements(axis, "add")(input_x, indices, updates)


class EmbeddingLookup(_Op):
    """``EmbeddingLookup()(params, indices, offset)``: rows ``indices - offset`` of ``params``; an index
    outside [0, rows) gives a row of zeros."""

    def __call__(self, input_params: Any, input_indices: Any, offset: int) -> Tensor:
        params, indices = _tensor(input_params), _tensor(input_indices)
        if isinstance(offset, bool) or not isinstance(offset, int):
            raise TypeError(f"For 'EmbeddingLookup', the 'offset' must be int, but got {type(offset).__name__}.")
        if indices.dtype.name not in SHAPE_OPERAND_DTYPES:
            raise TypeError(f"For 'EmbeddingLookup', the 'input_indices' must be int32 or int64, but got "
                            f"{indices.dtype}.")
        local = indices - offset
        inside = (local >= 0).logical_and(local < params.shape[0])
        safe = Select()(inside, local, local * 0)
        rows = Gather()(params, safe, 0)
        keep = BroadcastTo(tuple(rows.shape))(ExpandDims()(inside, -1)) if params.ndim > 1 else inside
        return Select()(keep, rows, rows * 0)


class BatchToSpaceNDV2(_Op):
    """``BatchToSpaceNDV2()(input_x, block_shape, crops)``: BatchToSpaceND with its block shape and crops
    given as operands (host values)."""

    def __call__(self, input_x: Any, block_shape: Any, crops: Any) -> Tensor:
        blocks = _host_shape("BatchToSpaceNDV2", block_shape)
        flat = _host_shape("BatchToSpaceNDV2", crops)
        pairs = tuple(tuple(flat[i:i + 2]) for i in range(0, len(flat), 2))
        return BatchToSpaceND(blocks, pairs)(input_x)


class ScatterNonAliasingAdd(_Op):
    """``ScatterNonAliasingAdd()(input_x, indices, updates)``: ScatterNdAdd on the Parameter ``input_x``
    (updated in place and returned)."""

    def __call__(self, input_x: Any, indices: Any, updates: Any) -> Tensor:
        return ScatterNdAdd()(input_x, indices, updates)


# ---- image, detection and windows ----
from .spectral_ops import length_tensor as _window_length, window_dtype as _window_dtype  # noqa: E402
from .spectral_ops import window_values as _window_values  # noqa: E402

# the int dtypes HammingWindow takes its length in
_HAMMING_LENGTH_DTYPES = (mstype.int8, mstype.int16, mstype.int32, mstype.int64,
                          mstype.uint8, mstype.uint16, mstype.uint32, mstype.uint64)
# the element dtypes UniqueWithPad takes, and the dtype of the indices it returns for each
_UNIQUE_WITH_PAD_INDEX = {mstype.int32: mstype.int32, mstype.int64: mstype.int64, mstype.float32: mstype.int32}


class HammingWindow(_Op):
    """``HammingWindow(periodic=True, alpha=0.54, beta=0.46, dtype=mstype.float32)(length)``: the window
    ``alpha - beta cos(2 pi n/(N-1))`` of a one-element int Tensor's length (a host constant, computed in
    float32 as MindSpore's kernel computes it; see spectral_ops)."""

    def __init__(self, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46,
                 dtype: Any = mstype.float32) -> None:
        super().__init__()
        self.periodic = _flag("HammingWindow: periodic", periodic)
        self.alpha, self.beta = float(alpha), float(beta)
        self.dtype = _window_dtype("HammingWindow", dtype)

    def __call__(self, length: Any) -> Tensor:
        n = _window_length("HammingWindow", length, _HAMMING_LENGTH_DTYPES, 1)
        values = _window_values("hamming", n, self.periodic, self.alpha, self.beta)
        return Tensor(values.astype(mstype.dtype_to_nptype(self.dtype)), self.dtype)


class UniqueWithPad(_Op):
    """``UniqueWithPad()(x, pad_num) -> (y, idx)``: the distinct values of a 1-D x in order of first
    occurrence, padded with ``pad_num`` to x's length, and for each element the index of its value in y.
    The shapes are static, so it is composed on the device (an n x n equality table: an element is a first
    occurrence when no earlier one equals it; its rank is the running count of first occurrences) and
    runs in GRAPH_MODE too."""

    def __call__(self, x: Any, pad_num: Any) -> tuple[Tensor, Tensor]:
        x = _tensor(x)
        if x.ndim != 1:
            raise ValueError(f"For primitive[UniqueWithPad], the input_shape_size must be equal to 1, but got "
                             f"{x.ndim}.")
        if x.dtype not in _UNIQUE_WITH_PAD_INDEX:
            raise TypeError(f"For primitive[UniqueWithPad], the input x must be int32, int64 or float32, but got "
                            f"{x.dtype}.")
        index_dtype = _UNIQUE_WITH_PAD_INDEX[x.dtype]
        n = x.shape[0]
        pad = _cast(pad_num, x.dtype)
        column, row = Reshape()(x, (n, 1)), Reshape()(x, (1, n))
        equal = apply_op("Equal", [BroadcastTo((n, n))(column), BroadcastTo((n, n))(row)])[0]
        earlier = Tensor(np.tri(n, n, -1, dtype=bool))                 # [i, j]: j comes before i
        unrepeated = apply_op("LogicalNot", [apply_op("LogicalAnd", [equal, earlier])[0]])[0]
        first = apply_op("ReduceAll", [unrepeated], {"axis": (1,), "keep_dims": False})[0]
        counted = Cast()(first, index_dtype)
        rank = apply_op("Sub", [CumSum()(counted, 0), counted])[0]   # first occurrences before each element
        zeros = BroadcastTo((n, n))(Tensor(0, index_dtype))
        owner = apply_op("LogicalAnd", [equal, BroadcastTo((n, n))(Reshape()(first, (1, n)))])[0]
        idx = apply_op("ReduceSum", [Select()(owner, BroadcastTo((n, n))(Reshape()(rank, (1, n))), zeros)],
                       {"axis": (1,), "keep_dims": False})[0]
        slots = Tensor(np.arange(n).reshape(n, 1).astype(mstype.dtype_to_nptype(index_dtype)))
        placed = apply_op("LogicalAnd", [apply_op("Equal", [BroadcastTo((n, n))(Reshape()(rank, (1, n))),
                                                             BroadcastTo((n, n))(slots)])[0],
                                         BroadcastTo((n, n))(Reshape()(first, (1, n)))])[0]
        picked = apply_op("ReduceSum", [Select()(placed, BroadcastTo((n, n))(row),
                                                 BroadcastTo((n, n))(Tensor(0, x.dtype)))],
                          {"axis": (1,), "keep_dims": False})[0]
        empty = apply_op("ReduceAll", [apply_op("LogicalNot", [placed])[0]], {"axis": (1,), "keep_dims": False})[0]
        return Select()(empty, BroadcastTo((n,))(Reshape()(pad, (1,))), picked), idx


class ListDiff(_Op):
    """``ListDiff(out_idx=mstype.int32)(x, y) -> (out, idx)``: the elements of 1-D x not in y, in x's
    order, and their positions in x. Its length depends on the values: computed from host data (PyNative,
    or a constant), as Unique."""

    def __init__(self, out_idx: Any = mstype.int32) -> None:
        super().__init__()
        if out_idx not in (mstype.int32, mstype.int64):
            raise TypeError(f"For 'ListDiff', the 'out_idx' must be mindspore.int32 or mindspore.int64, but got "
                            f"{out_idx}.")
        self.out_idx = out_idx

    def __call__(self, x: Any, y: Any) -> tuple[Tensor, Tensor]:
        x, y = _tensor(x), _tensor(y)
        if x.ndim != 1 or y.ndim != 1:
            raise ValueError(f"For 'ListDiff', x and y must be 1-D, but got shapes {x.shape} and {y.shape}.")
        if x.dtype != y.dtype:
            raise TypeError(f"For 'ListDiff', x and y must have one dtype, but got {x.dtype} and {y.dtype}.")
        data = _host("ListDiff", x)
        keep = np.flatnonzero(~np.isin(data, _host("ListDiff", y)))
        return Tensor(data[keep], x.dtype), Tensor(keep.astype(mstype.dtype_to_nptype(self.out_idx)), self.out_idx)


def _levenshtein(a: list, b: list) -> int:
    """The edit distance of two sequences (insertions, deletions, substitutions of one element each)."""
    row = list(range(len(b) + 1))
    for i, item in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (item != other))
    return row[-1]


def _sparse_sequences(label: str, indices: Any, values: Any, shape: Any) -> tuple[dict, np.ndarray]:
    """A SparseTensor's sequences grouped by the index's leading coordinates (in the given order), and its
    dense shape; MindSpore's checks of the three parts."""
    idx, vals, dense = (_tensor(t) for t in (indices, values, shape))
    for name, t in (("indices", idx), ("shape", dense)):
        if t.dtype != mstype.int64:
            raise TypeError(f"For primitive[{label}], the input argument[{name}] must be a type of {{Tensor[Int64]}}, "
                            f"but got Tensor[{t.dtype}].")
    if idx.ndim != 2 or vals.ndim != 1 or dense.ndim != 1 or idx.shape != (vals.shape[0], dense.shape[0]):
        raise ValueError(f"For '{label}', indices must be (N, R), values (N,) and shape (R,), but got "
                         f"{idx.shape}, {vals.shape} and {dense.shape}.")
    groups: dict = {}
    for coords, value in zip(_host(label, idx).tolist(), _host(label, vals).tolist()):
        groups.setdefault(tuple(coords[:-1]), []).append(value)
    return groups, _host(label, dense)


class EditDistance(_Op):
    """``EditDistance(normalize=True)(hypothesis_indices, hypothesis_values, hypothesis_shape,
    truth_indices, truth_values, truth_shape)``: the Levenshtein distance between the sequences of two
    SparseTensors at each position of their leading dimensions (float32; ``normalize``: divided by the
    truth's length, inf where only a hypothesis is). The output's shape comes from the shape operands'
    values, so it is computed from host data (PyNative, or constants)."""

    def __init__(self, normalize: bool = True) -> None:
        super().__init__()
        self.normalize = _flag("EditDistance: normalize", normalize)

    def __call__(self, hypothesis_indices: Any, hypothesis_values: Any, hypothesis_shape: Any,
                 truth_indices: Any, truth_values: Any, truth_shape: Any) -> Tensor:
        hyp, hyp_shape = _sparse_sequences("EditDistance", hypothesis_indices, hypothesis_values, hypothesis_shape)
        truth, truth_shape_ = _sparse_sequences("EditDistance", truth_indices, truth_values, truth_shape)
        if hyp_shape.shape != truth_shape_.shape:
            raise ValueError(f"For 'EditDistance', the ranks of the two SparseTensors must match, but got "
                             f"{hyp_shape.shape[0]} and {truth_shape_.shape[0]}.")
        out = np.zeros(np.maximum(hyp_shape[:-1], truth_shape_[:-1]).tolist(), np.float32)
        for coords in set(hyp) | set(truth):
            a, b = hyp.get(coords, []), truth.get(coords, [])
            distance = float(_levenshtein(a, b))
            if self.normalize:
                distance = distance / len(b) if b else np.inf
            out[coords] = distance
        return Tensor(out)


# ExtractVolumePatches' element dtypes: every real number type but bool and bfloat16
_VOLUME_PATCH_DTYPES = (mstype.float16, mstype.float32, mstype.float64, mstype.int8, mstype.int16, mstype.int32,
                        mstype.int64, mstype.uint8, mstype.uint16, mstype.uint32, mstype.uint64)


def _volume_window(name: str, value: Any) -> tuple[int, int, int]:
    """ExtractVolumePatches' kernel_size/strides: an int, or 3 ints, or 5 ints whose first two are 1."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * 3
    ok = isinstance(value, (tuple, list)) and len(value) in (3, 5) and all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
    if not ok:
        raise ValueError(f"For 'ExtractVolumePatches', the parameter '{name}' must be an positive integer or a tuple "
                         f"of three or five positive integer, but got {value}")
    if len(value) == 5:
        for k in (0, 1):
            if value[k] != 1:
                raise ValueError(f"For 'ExtractVolumePatches', the '{name}[{k}]' must be int and must = 1, but got "
                                 f"'{value[k]}' with type 'int'.")
        value = value[2:]
    return tuple(value)


class ExtractVolumePatches(_Op):
    """``ExtractVolumePatches(kernel_size, strides, padding)(x)``: the (kd, kh, kw) patches of an NCDHW x at
    the given strides, laid out as channels ``(i, j, k, c)`` (kernel offset major, channel minor), so the
    output is (N, kd*kh*kw*C, D', H', W'). TensorFlow's SAME pads zeros (the smaller half before), VALID
    none. Composed of one Pad and one StridedSlice per kernel offset, concatenated: the gradient comes
    from the parts."""

    def __init__(self, kernel_size: Any, strides: Any, padding: str) -> None:
        super().__init__()
        self.kernel_size = _volume_window("kernel_size", kernel_size)
        self.strides = _volume_window("strides", strides)
        if not isinstance(padding, str) or padding.upper() not in ("VALID", "SAME"):
            raise ValueError(f"For 'ExtractVolumePatches', the 'padding' must be str and must be in "
                             f"'['VALID', 'SAME']', but got '{padding}'.")
        self.padding = padding.upper()

    def __call__(self, input_x: Any) -> Tensor:
        x = _tensor(input_x)
        if x.dtype not in _VOLUME_PATCH_DTYPES:
            raise TypeError(f"For primitive[ExtractVolumePatches], the input argument[x] must be a real number type "
                            f"but bool, but got Tensor[{x.dtype}].")
        if x.ndim != 5:
            raise ValueError(f"For primitive[ExtractVolumePatches], the input shape must be equal to 5, but got "
                             f"{x.ndim}.")
        sizes, pads = [], []
        for axis, (n, k, step) in enumerate(zip(x.shape[2:], self.kernel_size, self.strides), 2):
            if self.padding == "VALID":
                if n < k:
                    raise ValueError(f"For primitive[ExtractVolumePatches], the padding = VALID, input[{axis}] - "
                                     f"kernel_size[{axis}] must be greater than or equal to 0, but got {n - k}.")
                out, total = (n - k) // step + 1, 0
            else:
                out = -(-n // step)
                total = builtins.max((out - 1) * step + k - n, 0)
            sizes.append(out)
            pads.append((total // 2, total - total // 2))
        if any(pads_ for pair in pads for pads_ in pair):
            x = apply_op("Pad", [x], {"paddings": ((0, 0), (0, 0), *pads)})[0]
        pieces = []
        for offset in np.ndindex(*self.kernel_size):
            begin = (0, 0, *offset)
            end = (x.shape[0], x.shape[1], *(o + (m - 1) * st + 1 for o, m, st in zip(offset, sizes, self.strides)))
            pieces.append(StridedSlice()(x, begin, end, (1, 1, *self.strides)))
        return pieces[0] if len(pieces) == 1 else Concat(1)(pieces)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.array_ops", name, __all__)
