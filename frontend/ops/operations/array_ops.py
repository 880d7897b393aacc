"""``mindspore.ops.operations.array_ops``: the array primitives (shape, layout, indexing, creation),
where MindSpore defines them. No-task ops (Reshape, ExpandDims, Squeeze, Flatten) never need a
kernel: in PyNative they reshape the host data directly (``primitive.apply_op``)."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, check_int
from ascendemu.graph.capture import current_tracer
from ascendemu.graph.ir import no_task_shape

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _MASKS, _axes, _flag, _int_tuple, _shape_arg, _static_int, _static_ints, defined_here
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
    return check_int(axis, label, minimum=-rank, maximum=rank - 1) % rank


def _host(label: str, t: Any) -> np.ndarray:
    """The host data of a concrete tensor; a symbolic one (GRAPH_MODE, a gradient's forward) has no
    values yet, and an op whose output shape depends on them cannot be put in a static graph."""
    t = _tensor(t)
    if t.is_symbolic or (t.is_parameter and current_tracer() is not None):
        raise FeatureNotSupportedError(f"{label}: the output shape depends on the tensor's values, which a static "
                                       f"GRAPH_MODE graph cannot express; call it in PYNATIVE_MODE or on a "
                                       f"constant")
    return t.asnumpy()


def _index(values: Any) -> Tensor:
    """A constant int32 index tensor (the device's index dtype)."""
    return Tensor(np.asarray(values, np.int64).astype(np.int32))


def _as_dtype(value: Any, like: Tensor) -> Tensor:
    """``value`` (a number or a tensor) as a tensor of ``like``'s dtype."""
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
    n = check_int(n, "Eye: n", minimum=0)
    m = n if m is None else check_int(m, "Eye: m", minimum=0)
    return Tensor(np.eye(n, m), mstype.to_type(dtype or mstype.float32))


class ScalarToTensor(_Op):
    """``ScalarToTensor()(x, dtype=mstype.float32)``: a 0-d constant tensor of a Python bool, int or float."""

    def __call__(self, x: Any, dtype: Any = mstype.float32) -> Tensor:
        if not isinstance(x, (bool, int, float)):
            raise InvalidParamError(f"ScalarToTensor: x must be a bool, an int or a float, got {type(x).__name__}")
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
    return Select()(BroadcastTo(shape)(mask), BroadcastTo(shape)(value), BroadcastTo(shape)(x))


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
        self.block_size = check_int(block_size, "DepthToSpace: block_size", minimum=2)

    def __call__(self, x: Any) -> Tensor:
        x, b = _tensor(x), self.block_size
        if x.ndim != 4 or x.shape[1] % (b * b):
            raise InvalidParamError(f"DepthToSpace: x must be NCHW with channels divisible by block_size**2={b * b}, "
                                    f"got shape {x.shape}")
        n, c, h, w = x.shape
        parts = Reshape()(x, (n, b, b, c // (b * b), h, w))
        return Reshape()(Transpose()(parts, (0, 3, 4, 1, 5, 2)), (n, c // (b * b), h * b, w * b))


class SpaceToDepth(_Op):
    """``SpaceToDepth(block_size)(x)``: the inverse of DepthToSpace: each b x b block of NCHW x's pixels
    becomes b * b channels, pixel (i, j) of channel c going to channel (i * b + j) * C + c."""

    def __init__(self, block_size: int):
        super().__init__()
        self.block_size = check_int(block_size, "SpaceToDepth: block_size", minimum=2)

    def __call__(self, x: Any) -> Tensor:
        x, b = _tensor(x), self.block_size
        if x.ndim != 4 or x.shape[2] % b or x.shape[3] % b:
            raise InvalidParamError(f"SpaceToDepth: x must be NCHW with height and width divisible by block_size={b}, "
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
        raise InvalidParamError(f"Meshgrid: indexing={indexing!r} must be one of {MESHGRID_INDEXING}")
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
        self.seq_dim = check_int(seq_dim, "ReverseSequence: seq_dim")
        self.batch_dim = check_int(batch_dim, "ReverseSequence: batch_dim")

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
        return int(np.prod(_tensor(input_x).shape, dtype=np.int64))


class Rank(_Op):
    """``Rank()(x)``: the number of dimensions, a Python int."""

    def __call__(self, x: Any) -> int:
        return _tensor(x).ndim


class TensorShape(_Op):
    """``TensorShape()(input_x)``: the shape as a 1-D int tensor (a constant: shapes are static)."""

    def __call__(self, input_x: Any) -> Tensor:
        return _index(_tensor(input_x).shape)


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
        values, idx = _unique_first_seen(_host("Unique", x))
        return Tensor(values, x.dtype), _index(idx)


@composite("UniqueConsecutive", functions=("unique_consecutive",))
def UniqueConsecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)``: input
    flattened with each run of equal consecutive elements kept once; optionally each element's run
    index (input's shape) and each run's length. Computed from host data, like Unique."""
    x = _tensor(input)
    _flag("unique_consecutive: return_inverse", return_inverse)
    _flag("unique_consecutive: return_counts", return_counts)
    if dim is not None:
        raise InvalidParamError(f"unique_consecutive: dim={dim!r} is not supported; leave it None (flattened)")
    flat = _host("unique_consecutive", x).reshape(-1)
    starts = np.flatnonzero(np.concatenate([[True], flat[1:] != flat[:-1]])) if flat.size else np.zeros(0, np.int64)
    outputs = [Tensor(flat[starts], x.dtype)]
    if return_inverse:
        outputs.append(_index((np.cumsum(np.isin(np.arange(flat.size), starts)) - 1).reshape(x.shape)))
    if return_counts:
        outputs.append(_index(np.diff(np.append(starts, flat.size))))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


class NonZero(_Op):
    """``NonZero()(input)``: the coordinates of the non-zero elements, one row each (int32, the
    device's index type), in row-major order; computed from host data."""

    def __call__(self, input: Any) -> Tensor:
        return _index(np.argwhere(_host("NonZero", input)).reshape(-1, _tensor(input).ndim))


def _triangle_mask(shape: tuple[int, ...], diagonal: int, lower: bool) -> Tensor:
    """The bool mask of a lower (``tril``: column <= row + diagonal) or upper (``triu``: column >= row +
    diagonal) triangle over the last two dimensions of ``shape``."""
    if len(shape) < 2:
        raise InvalidParamError(f"tril/triu: the input must have rank >= 2, got shape {shape}")
    rows, cols = shape[-2:]
    lower_mask = np.tri(rows, cols, diagonal if lower else diagonal - 1, dtype=bool)
    return Tensor(lower_mask if lower else ~lower_mask)


def _triangle(x: Any, diagonal: Any, lower: bool) -> Tensor:
    x = _tensor(x)
    mask = _triangle_mask(x.shape, check_int(diagonal, "diagonal"), lower)
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
        raise InvalidParamError("Diag: input must have rank >= 1, got a scalar")
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
            raise InvalidParamError(f"DiagPart: input_x must have an even rank and shape s + s, got {x.shape}")
        n = int(np.prod(x.shape[:half]))
        return Reshape()(Gather()(Reshape()(x, (n * n,)), _index(np.arange(n) * (n + 1)), 0), x.shape[:half])


class GatherV2(Gather):
    """``GatherV2()(input_params, input_indices, axis)``: MindSpore's older name of Gather."""

    def __init__(self) -> None:
        super().__init__()


class SparseGatherV2(Gather):
    """``SparseGatherV2()(input_params, input_indices, axis)``: Gather (dense here)."""

    def __init__(self) -> None:
        super().__init__()


class ScalarToArray(_Op):
    """``ScalarToArray()(input_x)``: a 0-d constant tensor of a Python int or float."""

    def __call__(self, input_x: Any) -> Tensor:
        if isinstance(input_x, bool) or not isinstance(input_x, (int, float)):
            raise InvalidParamError(f"ScalarToArray: input_x must be an int or a float, got {type(input_x).__name__}")
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
        raise InvalidParamError(f"TensorScatterElements: reduction={reduction!r} must be one of "
                                f"{tuple(ELEMENT_REDUCTIONS)}")
    axis = _axis("TensorScatterElements: axis", axis, x.ndim)
    if index.ndim != x.ndim or _tensor(updates).shape != index.shape:
        raise InvalidParamError(f"TensorScatterElements: indices {index.shape} and updates {_tensor(updates).shape} "
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
        self.axis, self.reduction = check_int(axis, "TensorScatterElements: axis"), reduction

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


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.array_ops", name, __all__)
