"""``mindspore.ops.function.array_func``: the functional forms of the array ops (``ops.reshape``,
``ops.concat``, ``ops.split``, ``ops.max`` ...), each built from the primitives of ``operations``."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, InvalidValueError

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _flag, _int_tuple, _static_int, _static_ints, check_arg_int, defined_here
from ..operations.array_ops import (BroadcastTo, Cast, Concat, Expand, ExpandDims, Fill, Fills,  # noqa: F401
                                    Gather, GatherD, GatherNd, Meshgrid, NonZero, Ones, Rank, Reshape,
                                    ReverseSequence, ReverseV2,
                                    ScalarToArray, ScatterNd, Select, Shape, Size, Slice, Sort, Split, Squeeze, Stack,
                                    StridedSlice, TensorScatterAdd, TensorScatterDiv, TensorScatterElements,
                                    TensorScatterMax, TensorScatterMin, TensorScatterMul, TensorScatterSub, Tile,
                                    Transpose, Tril, TupleToArray, Unique, UnsortedSegmentMax, UnsortedSegmentMin,
                                    UnsortedSegmentProd, UnsortedSegmentSum, Unstack, Zeros)
from ..operations.array_ops import (ScatterAdd, ScatterDiv, ScatterMax, ScatterMin, ScatterMul, ScatterNdAdd,
                                    ScatterNdDiv, ScatterNdMax, ScatterNdMin, ScatterNdMul, ScatterNdSub, ScatterUpdate)
from ..operations.nn_ops import Flatten, OneHot
from ..composite_op import install_composite_functions
from ..primitive import _binary_operands, _tensor, apply_op


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
    axis = check_arg_int(axis, "split: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    dim = x.shape[axis]

    def part(start: int, length: int) -> Tensor:
        return slice(x, tuple(start if d == axis else 0 for d in builtins.range(x.ndim)),
                     tuple(length if d == axis else -1 for d in builtins.range(x.ndim)))

    if isinstance(split_size_or_sections, int) and not isinstance(split_size_or_sections, bool):
        size = check_arg_int(split_size_or_sections, "split: split_size_or_sections", minimum=1)
        if dim <= size or dim % size == 0:
            return Split(axis, builtins.max(dim // size, 1))(x)
        head = dim // size * size
        return Split(axis, dim // size)(part(0, head)) + (part(head, dim - head),)
    sections = _int_tuple("split: split_size_or_sections", split_size_or_sections)
    if any(s < 0 for s in sections) or builtins.sum(sections) != dim:
        raise InvalidValueError(f"split: split_size_or_sections={list(sections)} must be sizes >= 0 that sum to "
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


def _arg_reduce(op: str, input: Any, axis: Any, keepdims: Any, **attrs: Any) -> tuple[Tensor, ...]:
    """An arg reduction along ``axis``; None: over every element (the flattened tensor, index into it)."""
    x = _tensor(input)
    keep = _flag(f"{op}: keepdims", keepdims)
    if axis is None:
        return apply_op(op, [reshape(x, (-1,))], {"axis": 0, "keep_dims": False, **attrs})
    return apply_op(op, [x], {"axis": check_arg_int(axis, f"{op}: axis"), "keep_dims": keep, **attrs})


def argmax(input: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the first maximum along ``dim`` (None: of all elements), int64 as MindSpore's."""
    return _arg_reduce("Argmax", input, dim, keepdim, output_type="int64")[0]


def _extremum(op: str, input: Any, axis: Any, keepdims: Any, initial: Any, where: Any) -> tuple[Tensor, Tensor]:
    if initial is not None or where is not None:
        raise FeatureNotSupportedError(f"{op}: initial= and where= are not supported; mask the input first")
    if axis is None:        # over every element MindSpore's index is a constant 0 (ops.max/min's own rule)
        _flag(f"{op}: keepdims", keepdims)
        reduce = "ReduceMax" if op == "ArgMaxWithValue" else "ReduceMin"
        return apply_op(reduce, [_tensor(input)], {"axis": (), "keep_dims": False})[0], Tensor(np.int64(0))
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
    axis = last if dim is None else \
        check_arg_int(dim, "topk: dim", minimum=-x.ndim, maximum=last) % builtins.max(x.ndim, 1)
    if axis == last:
        return apply_op("TopK", [x], attrs)
    perm = tuple(d for d in builtins.range(x.ndim) if d != axis) + (axis,)
    inverse = tuple(perm.index(d) for d in builtins.range(x.ndim))
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


# ------------------------------------------------------------------------------ breadth: array functions

def reverse(x: Any, axis: Sequence[int]) -> Tensor:
    return ReverseV2(axis)(x)


def size(input_x: Any) -> int:
    return Size()(input_x)


def rank(input_x: Any) -> int:
    return Rank()(input_x)


def unique(input: Any) -> tuple[Tensor, Tensor]:
    """The distinct values of ``input`` flattened (Unique's order of first occurrence) and, in input's
    shape, the index of each element's value among them."""
    x = _tensor(input)
    values, idx = Unique()(Reshape()(x, (-1,)))
    return values, Reshape()(idx, x.shape)


def nonzero(input: Any, *, as_tuple: bool = False) -> Any:
    """The coordinates of the non-zero elements: one row each, or (``as_tuple``) one 1-D tensor per
    dimension."""
    coords = NonZero()(input)
    if not _flag("nonzero: as_tuple", as_tuple):
        return coords
    return tuple(Tensor(column) for column in coords.asnumpy().T)


def argwhere(input: Any) -> Tensor:
    return NonZero()(input)


def meshgrid(*inputs: Any, indexing: str = "xy") -> tuple[Tensor, ...]:
    return Meshgrid(indexing)(inputs)


def reverse_sequence(x: Any, seq_lengths: Any, seq_dim: int, batch_dim: int = 0) -> Tensor:
    return ReverseSequence(seq_dim, batch_dim)(x, seq_lengths)


def where(condition: Any, input: Any, other: Any) -> Tensor:
    """``input`` where ``condition`` else ``other``, the three broadcast together (numbers allowed)."""
    input, other = _binary_operands(input, other)
    condition = _tensor(condition)
    shape = tuple(np.broadcast_shapes(condition.shape, input.shape, other.shape))
    return Select()(broadcast_to(condition, shape), broadcast_to(input, shape), broadcast_to(other, shape))


def _repeat_index(repeats: Any, n: int, label: str) -> np.ndarray:
    """The positions a repeat reads: each of n indices ``repeats`` times (an int, or one count each)."""
    if isinstance(repeats, Tensor):
        repeats = repeats.asnumpy().reshape(-1).tolist()
    counts = [repeats] if isinstance(repeats, int) else list(_int_tuple(f"{label}: repeats", repeats))
    if len(counts) == 1:
        counts = counts * n
    if len(counts) != n or builtins.any(c < 0 for c in counts):
        raise InvalidParamError(f"{label}: repeats={repeats!r} must be one count >= 0 or {n} of them")
    return np.repeat(np.arange(n), counts)


def repeat_interleave(input: Any, repeats: Any, axis: int | None = None) -> Tensor:
    """Each element (along ``axis``; None: of the flattened tensor) repeated ``repeats`` times (an int
    or one count per element): one Gather of the repeated positions, whose gradient sums the copies."""
    x = _tensor(input)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = check_arg_int(axis, "repeat_interleave: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    index = _repeat_index(repeats, x.shape[axis], "repeat_interleave")
    return Gather()(x, Tensor(index.astype(np.int32)), axis)


def repeat_elements(x: Any, rep: int, axis: int = 0) -> Tensor:
    """Each slice along ``axis`` repeated ``rep`` times in place (``[a, b] -> [a, a, b, b]``)."""
    if isinstance(rep, bool) or not isinstance(rep, int):
        raise TypeError(f"repeat_elements: rep must be an int, got {type(rep).__name__}")
    check_arg_int(rep, "repeat_elements: rep", minimum=1)
    return repeat_interleave(x, rep, axis)


def index_select(input: Any, axis: int, index: Any) -> Tensor:
    """The slices of input along ``axis`` at the 1-D int ``index`` (a Gather)."""
    index = _tensor(index)
    if index.ndim != 1:
        raise InvalidValueError(f"index_select: index must be 1-D, got shape {index.shape}")
    return Gather()(input, index, check_arg_int(axis, "index_select: axis"))


def narrow(input: Any, axis: int, start: int, length: int) -> Tensor:
    """``length`` entries of input along ``axis`` from ``start`` (a Slice)."""
    x = _tensor(input)
    axis = check_arg_int(axis, "narrow: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    n = x.shape[axis]
    start = check_arg_int(start, "narrow: start", minimum=-n, maximum=n)
    start += n if start < 0 else 0
    length = check_arg_int(length, "narrow: length", minimum=0, maximum=n - start)
    return slice(x, tuple(start if d == axis else 0 for d in builtins.range(x.ndim)),
                 tuple(length if d == axis else -1 for d in builtins.range(x.ndim)))


def _split_at(x: Tensor, axis: int, bounds: Sequence[int]) -> tuple[Tensor, ...]:
    """x cut along ``axis`` at the ascending positions ``bounds`` (clipped to its length)."""
    n = x.shape[axis]
    edges = [0] + [builtins.min(builtins.max(b, 0), n) for b in bounds] + [n]
    return tuple(slice(x, tuple(lo if d == axis else 0 for d in builtins.range(x.ndim)),
                       tuple(builtins.max(hi - lo, 0) if d == axis else -1 for d in builtins.range(x.ndim)))
                 for lo, hi in zip(edges[:-1], edges[1:]))


def chunk(input: Any, chunks: int, axis: int = 0) -> tuple[Tensor, ...]:
    """At most ``chunks`` parts along ``axis``, each ceil(n / chunks) long but the last."""
    x = _tensor(input)
    chunks = check_arg_int(chunks, "chunk: chunks", minimum=1)
    axis = check_arg_int(axis, "chunk: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    step = builtins.max(-(-x.shape[axis] // chunks), 1)
    return _split_at(x, axis, list(builtins.range(step, x.shape[axis], step)))


def tensor_split(input: Any, indices_or_sections: Any, axis: int = 0) -> tuple[Tensor, ...]:
    """numpy's array_split: ``sections`` parts (the first n % sections one longer), or parts cut at the
    listed indices."""
    x = _tensor(input)
    axis = check_arg_int(axis, "tensor_split: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    n = x.shape[axis]
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        k = check_arg_int(indices_or_sections, "tensor_split: indices_or_sections", minimum=1)
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        return _split_at(x, axis, np.cumsum(sizes)[:-1].tolist())
    return _split_at(x, axis, list(_int_tuple("tensor_split: indices_or_sections", indices_or_sections)))


def hsplit(input: Any, indices_or_sections: Any) -> tuple[Tensor, ...]:
    return tensor_split(input, indices_or_sections, 1 if _tensor(input).ndim > 1 else 0)


def vsplit(input: Any, indices_or_sections: Any) -> tuple[Tensor, ...]:
    return tensor_split(input, indices_or_sections, 0)


def diagonal(input: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the (dim1, dim2) planes shifted by ``offset``, as the last dimension: the plane
    moved last and flattened, then one Gather of the diagonal's flat positions."""
    x = _tensor(input)
    d1 = check_arg_int(dim1, "diagonal: dim1", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    d2 = check_arg_int(dim2, "diagonal: dim2", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    if d1 == d2:
        raise InvalidParamError(f"diagonal: dim1={dim1} and dim2={dim2} must be different dimensions")
    rest = [d for d in builtins.range(x.ndim) if d not in (d1, d2)]
    rows, cols = x.shape[d1], x.shape[d2]
    offset = check_arg_int(offset, "diagonal: offset")
    start = (0, offset) if offset >= 0 else (-offset, 0)
    count = builtins.max(0, builtins.min(rows - start[0], cols - start[1]))
    flat_at = (np.arange(count) + start[0]) * cols + np.arange(count) + start[1]
    plane = reshape(transpose(x, tuple(rest) + (d1, d2)), tuple(x.shape[d] for d in rest) + (rows * cols,))
    return Gather()(plane, Tensor(flat_at.astype(np.int32)), len(rest))


def argsort(input: Any, axis: int = -1, descending: bool = False) -> Tensor:
    return Sort(axis, descending)(input)[1]


def expand(input_x: Any, size: Any) -> Tensor:
    return Expand()(input_x, size)


def expand_as(input: Any, other: Any) -> Tensor:
    return broadcast_to(input, _tensor(other).shape)


def swapaxes(input: Any, axis0: int, axis1: int) -> Tensor:
    x = _tensor(input)
    perm = list(builtins.range(x.ndim))
    a, b = (check_arg_int(axis, f"swapaxes: {name}") for name, axis in (("axis0", axis0), ("axis1", axis1)))
    for axis in (a, b):
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"The 'axis' must be in the range of [-{x.ndim}, {x.ndim}), but got {axis}.")
    a, b = a % x.ndim, b % x.ndim
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, tuple(perm))


def swapdims(input: Any, dim0: int, dim1: int) -> Tensor:
    return swapaxes(input, dim0, dim1)


def movedim(x: Any, source: Any, destination: Any) -> Tensor:
    """x with dimensions ``source`` moved to ``destination`` (ints or tuples), the others in order."""
    x = _tensor(x)
    src = [source] if isinstance(source, int) else list(_int_tuple("movedim: source", source))
    dst = [destination] if isinstance(destination, int) else list(_int_tuple("movedim: destination", destination))
    src = [check_arg_int(s, "movedim: source", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim for s in src]
    dst = [check_arg_int(d, "movedim: destination", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim for d in dst]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise InvalidParamError(f"movedim: source={source} and destination={destination} must be distinct "
                                f"dimensions of one length")
    others = iter(d for d in builtins.range(x.ndim) if d not in src)
    placed = dict(zip(dst, src))
    return transpose(x, tuple(placed[d] if d in placed else next(others) for d in builtins.range(x.ndim)))


def moveaxis(x: Any, source: Any, destination: Any) -> Tensor:
    return movedim(x, source, destination)


def _fill_dtype(fill_value: Any) -> Any:
    """MindSpore's dtype of ``full`` without one: bool, int64 for an int, float32 for a float."""
    if isinstance(fill_value, Tensor):
        return fill_value.dtype
    if isinstance(fill_value, bool):
        return mstype.bool_
    return mstype.int64 if isinstance(fill_value, int) else mstype.float32


def full(size: Any, fill_value: Any, *, dtype: Any = None) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``."""
    value = fill_value.asnumpy() if isinstance(fill_value, Tensor) else fill_value
    return fill(dtype or _fill_dtype(fill_value), _static_ints("full: size", size), value)


def full_like(input: Any, fill_value: Any, *, dtype: Any = None) -> Tensor:
    x = _tensor(input)
    return full(x.shape, fill_value, dtype=dtype or x.dtype)


def fills(x: Any, value: Any) -> Tensor:
    return Fills()(x, value)


def ravel(input: Any) -> Tensor:
    return reshape(input, (-1,))


def scalar_to_array(input_x: Any) -> Tensor:
    return ScalarToArray()(input_x)


def tensor_scatter_add(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return TensorScatterAdd()(input_x, indices, updates)


def tensor_scatter_sub(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return TensorScatterSub()(input_x, indices, updates)


def tensor_scatter_mul(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return TensorScatterMul()(input_x, indices, updates)


def tensor_scatter_div(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return TensorScatterDiv()(input_x, indices, updates)


def tensor_scatter_max(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return TensorScatterMax()(input_x, indices, updates)


def tensor_scatter_min(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return TensorScatterMin()(input_x, indices, updates)


def tensor_scatter_elements(input_x: Any, indices: Any, updates: Any, axis: int = 0, reduction: str = "none") -> Tensor:
    return TensorScatterElements(axis, reduction)(input_x, indices, updates)


def scatter(input: Any, axis: int, index: Any, src: Any) -> Tensor:
    """``tensor_scatter_elements`` with no reduction, under PyTorch's argument names."""
    return TensorScatterElements(axis, "none")(input, index, src)


def scatter_update(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return ScatterUpdate()(input_x, indices, updates)


def scatter_add(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return ScatterAdd()(input_x, indices, updates)


def scatter_mul(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return ScatterMul()(input_x, indices, updates)


def scatter_div(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return ScatterDiv()(input_x, indices, updates)


def scatter_max(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return ScatterMax()(input_x, indices, updates)


def scatter_min(input_x: Any, indices: Any, updates: Any) -> Tensor:
    return ScatterMin()(input_x, indices, updates)


def scatter_nd_add(input_x: Any, indices: Any, updates: Any, use_locking: bool = False) -> Tensor:
    return ScatterNdAdd(use_locking)(input_x, indices, updates)


def scatter_nd_sub(input_x: Any, indices: Any, updates: Any, use_locking: bool = False) -> Tensor:
    return ScatterNdSub(use_locking)(input_x, indices, updates)


def scatter_nd_mul(input_x: Any, indices: Any, updates: Any, use_locking: bool = False) -> Tensor:
    return ScatterNdMul(use_locking)(input_x, indices, updates)


def scatter_nd_div(input_x: Any, indices: Any, updates: Any, use_locking: bool = False) -> Tensor:
    return ScatterNdDiv(use_locking)(input_x, indices, updates)


def scatter_nd_max(input_x: Any, indices: Any, updates: Any, use_locking: bool = False) -> Tensor:
    return ScatterNdMax(use_locking)(input_x, indices, updates)


def scatter_nd_min(input_x: Any, indices: Any, updates: Any, use_locking: bool = False) -> Tensor:
    return ScatterNdMin(use_locking)(input_x, indices, updates)


def unsorted_segment_max(x: Any, segment_ids: Any, num_segments: Any) -> Tensor:
    return UnsortedSegmentMax()(x, segment_ids, num_segments)


def unsorted_segment_min(x: Any, segment_ids: Any, num_segments: Any) -> Tensor:
    return UnsortedSegmentMin()(x, segment_ids, num_segments)


def unsorted_segment_prod(x: Any, segment_ids: Any, num_segments: Any) -> Tensor:
    return UnsortedSegmentProd()(x, segment_ids, num_segments)


# ---- array breadth, round 2 ----
# Functions over the round-2 primitives of operations/array_ops.py and the registry's copy ops. Those
# MindSpore defines in math_func, nn_func or parameter_func are imported there (their home) from here.

import itertools  # noqa: E402

from .._utils import _pair  # noqa: E402
from ..operations.array_ops import (BatchToSpaceND, Col2Im, FillDiagonal, Im2Col, IndexAdd, IndexPut,  # noqa: E402
                                    MaskedScatter, ScatterNdUpdate, SpaceToBatchND, TensorScatterUpdate, TrilIndices,
                                    TriuIndices, InvalidValueError, _axis, _index, _inverse, _permuted, _scatter_along,
                                    _wrapped)


def _tensor_arg(label: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{label}: expects a Tensor, got {type(x).__name__}")
    return x


def _tensor_list(label: str, tensors: Any) -> list[Tensor]:
    """The non-empty list or tuple of tensors the stacking functions take (MindSpore's TypeErrors)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{label}: expects a list or tuple of tensors, got {type(tensors).__name__}")
    if not tensors:
        raise TypeError(f"{label}: the list of tensors can not be empty")
    return [_tensor_arg(label, t) for t in tensors]


def rot90(input: Any, k: int, dims: Sequence[int]) -> Tensor:
    """input rotated by k quarter turns in the plane ``dims`` (from dims[0] towards dims[1]): numpy's
    rot90 as Reverses and a Transpose."""
    x = _tensor_arg("rot90", input)
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"rot90: k must be an int, got {type(k).__name__}")
    if not isinstance(dims, (list, tuple)):
        raise TypeError(f"rot90: dims must be a list or tuple, got {type(dims).__name__}")
    if len(dims) != 2:
        raise InvalidValueError(f"rot90: dims must name 2 dimensions, got {len(dims)}")
    if dims[0] == dims[1] or builtins.abs(dims[0] - dims[1]) == x.ndim:
        raise RuntimeError(f"rot90: the rotation dims must be different, got {tuple(dims)}")
    d0, d1 = (_axis("rot90: dims", d, x.ndim) for d in dims)
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return reverse(x, (d0, d1))
    perm = list(builtins.range(x.ndim))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    if k == 1:
        return transpose(reverse(x, (d1,)), tuple(perm))
    return reverse(transpose(x, tuple(perm)), (d1,))


def fliplr(input: Any) -> Tensor:
    """input with dimension 1 reversed (left/right); needs rank >= 2."""
    x = _tensor(input)
    if x.ndim < 2:
        raise InvalidValueError(f"fliplr: input must have rank >= 2, got shape {x.shape}")
    return reverse(x, (1,))


def flipud(input: Any) -> Tensor:
    """input with dimension 0 reversed (up/down); needs rank >= 1."""
    x = _tensor(input)
    if x.ndim < 1:
        raise InvalidValueError("flipud: input must have rank >= 1, got a scalar")
    return reverse(x, (0,))


def take(input: Any, index: Any) -> Tensor:
    """The elements of the flattened input at ``index`` (negative: from the end), in index's shape:
    one Gather."""
    x, index = _tensor(input), _tensor(index)
    flat = reshape(x, (-1,))
    return Gather()(flat, _wrapped(index, flat.shape[0]), 0)


def _at_least(x: Tensor, rank: int, where: str) -> Tensor:
    """x reshaped to ``rank`` dimensions with 1s added ``where`` ('front', 'back', or numpy's 'dstack')."""
    if x.ndim >= rank:
        return x
    if where == "dstack":
        shape = {0: (1, 1, 1), 1: (1,) + x.shape + (1,), 2: x.shape + (1,)}[x.ndim]
    elif where == "back":
        shape = x.shape + (1,) * (rank - x.ndim)
    else:
        shape = (1,) * (rank - x.ndim) + x.shape
    return reshape(x, shape)


def vstack(inputs: Any) -> Tensor:
    """The tensors (1-D ones as rows) joined along dimension 0."""
    return concat([_at_least(t, 2, "front") for t in _tensor_list("vstack", inputs)], 0)


def row_stack(tensors: Any) -> Tensor:
    return vstack(tensors)


def hstack(tensors: Any) -> Tensor:
    """The tensors joined along dimension 1 (along 0 when they are 1-D; scalars count as 1-D)."""
    parts = [_at_least(t, 1, "front") for t in _tensor_list("hstack", tensors)]
    return concat(parts, 0 if parts[0].ndim == 1 else 1)


def dstack(tensors: Any) -> Tensor:
    """The tensors (made 3-D: (1, n, 1) for 1-D, (r, c, 1) for 2-D) joined along dimension 2."""
    return concat([_at_least(t, 3, "dstack") for t in _tensor_list("dstack", tensors)], 2)


def column_stack(tensors: Any) -> Tensor:
    """The tensors (1-D ones and scalars as columns) joined along dimension 1."""
    parts = [_at_least(_at_least(t, 1, "front"), 2, "back") for t in _tensor_list("column_stack", tensors)]
    return concat(parts, 1)


def dsplit(input: Any, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """``tensor_split`` along dimension 2 (rank >= 3)."""
    x = _tensor_arg("dsplit", input)
    if x.ndim < 3:
        raise InvalidValueError(f"dsplit: input must have rank >= 3, got {x.ndim}")
    return tensor_split(x, indices_or_sections, 2)


def tensor_scatter_update(*args: Any) -> Tensor:
    """``ops.tensor_scatter_update(input_x, indices, updates)``: MindSpore's instance of the primitive."""
    return TensorScatterUpdate()(*args)


def scatter_nd_update(*args: Any) -> Tensor:
    """``ops.scatter_nd_update(input_x, indices, updates)``: the Parameter updated in place."""
    return ScatterNdUpdate()(*args)


def index_add(x: Any, indices: Any, y: Any, axis: int, use_lock: bool = True, check_index_bound: bool = True) -> Tensor:
    return IndexAdd(axis, use_lock, check_index_bound)(x, indices, y)


def _embed_diagonal(x: Tensor, offset: int, dim1: int, dim2: int) -> Tensor:
    """x's last dimension put on the ``offset`` diagonal of a new square plane at output dimensions
    (dim1, dim2), zeros elsewhere: one Gather from x with a zero appended, whose gradient is Gather's."""
    batch, n = x.shape[:-1], x.shape[-1]
    m = n + builtins.abs(offset)
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    rows, cols = np.divmod(np.arange(m * m), m)
    i = rows - r0
    source = np.where((cols - rows == offset) & (i >= 0) & (i < n), i, n)
    padded = concat([x, broadcast_to(Tensor(0, x.dtype), batch + (1,))], x.ndim - 1)
    plane = reshape(Gather()(padded, _index(source), len(batch)), batch + (m, m))
    rest = iter(builtins.range(len(batch)))
    perm = tuple(len(batch) if d == dim1 else len(batch) + 1 if d == dim2 else next(rest)
                 for d in builtins.range(len(batch) + 2))
    return _permuted(plane, perm)


def diag_embed(input: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose (dim1, dim2) planes hold input's last dimension on their ``offset`` diagonal."""
    x = _tensor_arg("diag_embed", input)
    for name, value in (("offset", offset), ("dim1", dim1), ("dim2", dim2)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"diag_embed: {name} must be an int, got {type(value).__name__}")
    if not 1 <= x.ndim <= 6:
        raise InvalidValueError(f"diag_embed: input must be 1-D to 6-D, got shape {x.shape}")
    d1, d2 = (_axis(f"diag_embed: {name}", d, x.ndim + 1) for name, d in (("dim1", dim1), ("dim2", dim2)))
    if d1 == d2:
        raise InvalidValueError("diag_embed: dim1 must not be identical to dim2")
    return _embed_diagonal(x, offset, d1, d2)


def diagflat(input: Any, offset: int = 0) -> Tensor:
    """The flattened input on the ``offset`` diagonal of a square 2-D tensor."""
    x = _tensor_arg("diagflat", input)
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"diagflat: offset must be an int, got {type(offset).__name__}")
    if x.size == 0:
        return zeros((builtins.abs(offset),) * 2, x.dtype)
    return _embed_diagonal(reshape(x, (-1,)), offset, 0, 1)


def block_diag(*inputs: Any) -> Tensor:
    """The 0-, 1- or 2-D inputs (as 2-D blocks) along the diagonal of one matrix, zeros elsewhere."""
    if not inputs:
        raise RuntimeError("block_diag: the input is empty")
    blocks = []
    for t in inputs:
        t = _tensor_arg("block_diag", t)
        if t.ndim > 2:
            raise InvalidValueError(f"block_diag: each input must be 0-, 1- or 2-D, got {t.ndim}-D")
        blocks.append(_at_least(t, 2, "front"))
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        pieces = [zeros((b.shape[0], left), b.dtype), b, zeros((b.shape[0], width - left - b.shape[1]), b.dtype)]
        rows.append(concat([p for p in pieces if p.shape[1]], 1))
        left += b.shape[1]
    return concat(rows, 0)


def cartesian_prod(*inputs: Any) -> Tensor:
    """Every combination of one element of each 1-D input, one row each (the last input fastest)."""
    tensors = [_tensor_arg("cartesian_prod", t) for t in inputs]
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(input: Any, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-r combinations of the 1-D input's elements, in itertools' order, one row each: one
    Gather of their positions (a constant)."""
    x = _tensor_arg("combinations", input)
    if x.ndim != 1:
        raise InvalidValueError(f"combinations: input must be 1-D, got shape {x.shape}")
    r = check_arg_int(r, "combinations: r", minimum=0)
    pick = itertools.combinations_with_replacement if _flag("combinations: with_replacement",
                                                            with_replacement) else itertools.combinations
    rows = np.asarray(list(pick(builtins.range(x.shape[0]), r)), np.int64).reshape(-1, r)
    if rows.size == 0:
        return zeros((0,) if r != 1 else (0, 1), x.dtype)
    return Gather()(x, _index(rows), 0)


def vander(x: Any, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of the 1-D x: column j is ``x ** (N - 1 - j)`` (products of x)."""
    x = _tensor_arg("vander", x)
    if x.ndim != 1:
        raise InvalidValueError(f"vander: x must be 1-D, got shape {x.shape}")
    n = x.shape[0] if N is None else N
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"vander: N must be an int, got {type(N).__name__}")
    if n <= 0:
        raise InvalidValueError(f"vander: N must be greater than 0, got {n}")
    powers = [broadcast_to(Tensor(1, x.dtype), x.shape)]
    for _ in builtins.range(n - 1):
        powers.append(powers[-1] * x)
    return stack(powers[::-1], 1)


def select_scatter(input: Any, src: Any, axis: int, index: int) -> Tensor:
    """input with its slice ``index`` along ``axis`` replaced by src (input's shape without ``axis``)."""
    x, src = _tensor_arg("select_scatter", input), _tensor_arg("select_scatter", src)
    axis = _axis("select_scatter: axis", axis, x.ndim)
    n = x.shape[axis]
    row = _axis("select_scatter: index", index, n)
    if src.shape != x.shape[:axis] + x.shape[axis + 1:]:
        raise InvalidValueError(f"select_scatter: src must have shape {x.shape[:axis] + x.shape[axis + 1:]}, got "
                                f"{src.shape}")
    return _scatter_along("TensorScatterUpdate", x, axis, [row], expand_dims(src, axis))


def slice_scatter(input: Any, src: Any, axis: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Tensor:
    """input with its slice ``start:end:step`` along ``axis`` replaced by src."""
    x, src = _tensor_arg("slice_scatter", input), _tensor_arg("slice_scatter", src)
    axis = _axis("slice_scatter: axis", axis, x.ndim)
    rows = list(builtins.range(*builtins.slice(start, end, step).indices(x.shape[axis])))
    want = x.shape[:axis] + (len(rows),) + x.shape[axis + 1:]
    if src.shape != want:
        raise InvalidValueError(f"slice_scatter: src must have shape {want}, got {src.shape}")
    if not rows:
        return x
    return _scatter_along("TensorScatterUpdate", x, axis, rows, src)


def diagonal_scatter(input: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """input with its ``offset`` diagonal of the (dim1, dim2) planes replaced by src (``diagonal``'s
    shape): the plane moved last and flattened, one TensorScatterUpdate, moved back."""
    x, src = _tensor_arg("diagonal_scatter", input), _tensor_arg("diagonal_scatter", src)
    want = diagonal(x, offset, dim1, dim2).shape
    if src.shape != want:
        raise InvalidValueError(f"diagonal_scatter: src must have shape {want}, got {src.shape}")
    d1, d2 = _axis("diagonal_scatter: dim1", dim1, x.ndim), _axis("diagonal_scatter: dim2", dim2, x.ndim)
    rest = [d for d in builtins.range(x.ndim) if d not in (d1, d2)]
    perm = tuple(rest) + (d1, d2)
    rows, cols = x.shape[d1], x.shape[d2]
    start = (0, offset) if offset >= 0 else (-offset, 0)
    count = want[-1]
    if not count:
        return x
    flat_at = (np.arange(count) + start[0]) * cols + np.arange(count) + start[1]
    plane = reshape(_permuted(x, perm), tuple(x.shape[d] for d in rest) + (rows * cols,))
    plane = _scatter_along("TensorScatterUpdate", plane, len(rest), flat_at.tolist(), src)
    return _permuted(reshape(plane, tuple(x.shape[d] for d in perm)), _inverse(perm))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = mstype.int64) -> Tensor:
    """The (2, N) coordinates of a row x col matrix's lower triangle (column <= row + offset)."""
    return TrilIndices(row, col, offset, dtype)()


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = mstype.int64) -> Tensor:
    """The (2, N) coordinates of a row x col matrix's upper triangle (column >= row + offset)."""
    return TriuIndices(row, col, offset, dtype)()


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """NCHW input's sliding blocks as columns, (N, C * kh * kw, L) (PyTorch's unfold): one Gather."""
    blocks = Im2Col(kernel_size, stride, dilation, padding)(input)
    n, c, k, length = blocks.shape
    return reshape(blocks, (n, c * k, length))


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """unfold's adjoint: (N, C * kh * kw, L) columns summed into an (N, C) image of ``output_size``."""
    x = _tensor(input)
    kh, kw = _pair("fold: kernel_size", kernel_size)
    if x.ndim != 3 or x.shape[1] % (kh * kw):
        raise InvalidValueError(f"fold: input must be (N, C * {kh * kw}, L), got shape {x.shape}")
    n, ck, length = x.shape
    cols = reshape(x, (n, ck // (kh * kw), kh * kw, length))
    return Col2Im(kernel_size, dilation, padding, stride)(cols, output_size)


def col2im(input_x: Any, output_size: Any, kernel_size: Any, dilation: Any, padding_value: Any, stride: Any) -> Tensor:
    return Col2Im(kernel_size, dilation, padding_value, stride)(input_x, output_size)


def space_to_batch_nd(input_x: Any, block_size: Any, paddings: Any) -> Tensor:
    return SpaceToBatchND(block_size, paddings)(input_x)


def batch_to_space_nd(input_x: Any, block_shape: Any, crops: Any) -> Tensor:
    return BatchToSpaceND(block_shape, crops)(input_x)


# Tensor-method and mint bodies (``ops.tensor_method.Route``: ``body(op, tensor, **arguments)``) for the
# methods whose arguments a renaming cannot map onto the ops function.
def _take_method(op: Any, x: Any, indices: Any, axis: Any = None, mode: str = "clip") -> Tensor:
    """``Tensor.take(indices, axis=None, mode='clip')``: numpy's take; out-of-range indices are clipped
    ('clip', also 'raise': a device cannot raise) or wrapped ('wrap') into the dimension."""
    if mode not in TAKE_MODES:
        raise InvalidValueError(f"take: mode={mode!r} must be one of {TAKE_MODES}")
    x = reshape(x, (-1,)) if axis is None else x
    axis = _axis("take: axis", 0 if axis is None else axis, x.ndim)
    n, index = x.shape[axis], cast(indices, mstype.int32)
    if mode == "wrap":
        index = apply_op("FloorMod", [index, _index(n)])[0]
    else:
        index = apply_op("Minimum", [apply_op("Maximum", [index, _index(0)])[0], _index(n - 1)])[0]
    return Gather()(x, index, axis)


# Tensor.take's index modes (numpy's; 'raise' clips, as MindSpore's device gather cannot raise)
TAKE_MODES = ("raise", "wrap", "clip")


def _index_add_dim(op: Any, input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
    """``Tensor.index_add_(dim, index, source, *, alpha=1)`` / ``mint.index_add``: PyTorch's order."""
    source = _tensor(source)
    return index_add(input, index, source if alpha == 1 else source * alpha, dim)


def _masked_scatter_method(op: Any, x: Any, mask: Any, source: Any) -> Tensor:
    return MaskedScatter()(x, mask, source)


def _fill_diagonal_method(op: Any, x: Any, fill_value: Any, wrap: bool = False) -> Tensor:
    return FillDiagonal(fill_value, wrap)(x)


def _index_put_method(op: Any, x: Any, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    if not isinstance(accumulate, bool):
        raise TypeError(f"index_put: accumulate must be a bool, got {type(accumulate).__name__}")
    return IndexPut(int(accumulate))(x, values, indices)


from ..operations.array_ops import unique_consecutive_parts  # noqa: E402


def unique_consecutive(input: Any, return_inverse: bool = False, return_counts: bool = False,
                       dim: Any = None) -> Tensor | tuple[Tensor, ...]:
    """The output, then the run indices and the run lengths where asked (the primitive returns all three)."""
    parts = unique_consecutive_parts(input, return_inverse, return_counts, dim)
    asked = tuple(t for t in parts if t is not None)
    return asked[0] if len(asked) == 1 else asked


install_composite_functions(globals(), "mindspore.ops.function.array_func")


# ---- statistics, search, segments, bits (round 2) ----
from ..operations.array_ops import SearchSorted, TopK  # noqa: E402
from ..operations.math_ops import ReduceMax, ReduceMin  # noqa: E402
from ...common.tensor import Tensor as _Tensor  # noqa: E402


def searchsorted(sorted_sequence: Any, values: Any, *, out_int32: bool = False, right: bool = False,
                 side: Any = None, sorter: Any = None) -> Tensor:
    """Where each value goes in the sorted last dimension of ``sorted_sequence``: the first place
    (``side`` 'left') or the last (``right`` or ``side`` 'right'), as int64 (``out_int32``: int32)."""
    if side not in (None, "left", "right"):
        raise ValueError(f"For 'searchsorted', side must be 'left' or 'right', but got {side!r}")
    if side == "left" and right:
        raise ValueError("For 'searchsorted', side='left' contradicts right=True")
    dtype = mstype.int32 if _flag("searchsorted: out_int32", out_int32) else mstype.int64
    return SearchSorted(dtype, bool(right) or side == "right")(sorted_sequence, values, sorter)


def top_k(input_x: Any, k: int, sorted: bool = True) -> tuple[Tensor, Tensor]:
    """The k largest entries of the last dimension and their int32 indices, largest first (sorted
    either way: an unsorted order is unspecified)."""
    _flag("top_k: sorted", sorted)
    return TopK(True)(input_x, k)


def aminmax(input: Any, *, axis: Any = 0, keepdims: bool = False) -> tuple[Tensor, Tensor]:
    """(minimum, maximum) along ``axis`` (None: over every element, keepdims giving a 0-d tensor)."""
    x = _tensor(input)
    axes = () if axis is None else (check_arg_int(axis, "aminmax: axis", minimum=-builtins.max(x.ndim, 1),
                                              maximum=builtins.max(x.ndim, 1) - 1),)
    keep = _flag("aminmax: keepdims", keepdims) and axis is not None
    return ReduceMin(keep)(x, axes), ReduceMax(keep)(x, axes)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, _Tensor)


def is_nonzero(input: Any) -> bool:
    """The truth of a one-element tensor (host data)."""
    x = _tensor(input)
    if x.size != 1:
        raise ValueError(f"For 'is_nonzero', the input must have exactly one element, but got {x.size}")
    return bool(x.asnumpy().reshape(-1)[0] != 0)


# ---- internals round 2: padding, dyn_shape, deepcopy ----
from ..operations.array_ops import Identity, Padding  # noqa: E402


def padding(x: Any, pad_dim_size: int = 8) -> Tensor:
    """``ops.padding(x, pad_dim_size=8)``: ``Padding(pad_dim_size)(x)``."""
    return Padding(pad_dim_size)(x)


def dyn_shape(input_x: Any) -> Tensor:
    """``ops.dyn_shape(input_x)``: the shape as a 1-D int64 tensor (``TensorShape``)."""
    if not isinstance(input_x, Tensor):
        raise TypeError(f'Failed calling TensorShape with "TensorShape()(input_x={type(input_x)})".')
    return Tensor(np.asarray(input_x.shape, np.int64))


def deepcopy(input_x: Any) -> Tensor:
    """``ops.deepcopy(input_x)``: a copy of the tensor (tensors are never written in place here, so the
    copy is ``Identity``'s alias)."""
    if not isinstance(input_x, Tensor):
        raise TypeError(f'Failed calling Identity with "Identity()(input_x={type(input_x)})".')
    return Identity()(input_x)


# ---- linear algebra and statistics ----
from ..operations.array_ops import MatrixDiagPartV3, MatrixDiagV3, MatrixSetDiagV3  # noqa: E402


def matrix_diag(x: Any, k: Any = 0, num_rows: Any = -1, num_cols: Any = -1, padding_value: Any = 0,
                align: str = "RIGHT_LEFT") -> Tensor:
    """Matrices from diagonals (ops.MatrixDiagV3); k an int or a Tensor (MindSpore refuses a tuple)."""
    if isinstance(k, (tuple, list)):
        raise TypeError("For primitive[MatrixDiagV3], the input[1] should be a Tensor, but got a tuple.")
    return MatrixDiagV3(align=align)(x, k, num_rows, num_cols, padding_value)


def matrix_diag_part(x: Any, k: Any, padding_value: Any, align: str = "RIGHT_LEFT") -> Tensor:
    """The diagonals of matrices (ops.MatrixDiagPartV3); k a Tensor, as MindSpore requires."""
    if not isinstance(k, Tensor):
        raise TypeError(f"For primitive[MatrixDiagPartV3], the input[1] should be a Tensor, but got "
                        f"{type(k).__name__}.")
    return MatrixDiagPartV3(align=align)(x, k, padding_value)


def matrix_set_diag(x: Any, diagonal: Any, k: Any = 0, align: str = "RIGHT_LEFT") -> Tensor:
    """x with its diagonals replaced (ops.MatrixSetDiagV3); k an int or a Tensor."""
    if isinstance(k, (tuple, list)):
        raise TypeError("For primitive[MatrixSetDiagV3], the input[2] should be a Tensor, but got a tuple.")
    return MatrixSetDiagV3(align=align)(x, diagonal, k)


# ---- nn compositions ----
from ...common.tensor import hold_value as _hold_value  # noqa: E402

# the index dtypes sequence_mask's lengths may have (MindSpore checks them)
SEQUENCE_LENGTH_DTYPES = ("int32", "int64")


def sequence_mask(lengths: Any, maxlen: Any = None) -> Tensor:
    """``arange(maxlen) < lengths[..., None]`` (bool, one more dimension of size ``maxlen``); maxlen None:
    the largest length, read on the host (so not in a GRAPH_MODE trace)."""
    lengths = _tensor(lengths)
    if lengths.dtype.name not in SEQUENCE_LENGTH_DTYPES:
        raise TypeError(f"For 'sequence_mask', the 'lengths' must be a type of [Int64, Int32], but got "
                        f"{lengths.dtype}.")
    if maxlen is None:
        data = lengths._need_data("sequence_mask with maxlen=None (the mask's size is the largest length)")
        maxlen = builtins.max(int(data.max()), 0) if data.size else 0
    elif isinstance(maxlen, bool) or not isinstance(maxlen, int) or maxlen <= 0:
        raise ValueError(f"For 'sequence_mask', the 'maxlen' must be a positive int, but got {maxlen!r}.")
    steps = Tensor(np.arange(maxlen, dtype=np.int32))
    return steps < ExpandDims()(lengths, -1)


def type_as(input: Any, other: Any) -> Tensor:
    """``input`` cast to ``other``'s dtype."""
    return cast(input, _tensor(other).dtype)


def view_as(input: Any, other: Any) -> Tensor:
    """``input`` reshaped to ``other``'s shape."""
    return reshape(input, tuple(_tensor(other).shape))


def reshape_(input: Any, shape: Sequence[int]) -> Tensor:
    """The Reshape primitive as a function: ``reshape(input, shape)``."""
    return reshape(input, shape)


def shape_(x: Any) -> tuple[int, ...]:
    """The Shape primitive as a function: the shape as a tuple."""
    return shape(x)


def tensor_slice(input: Any, begin: Sequence[int], size: Sequence[int]) -> Tensor:
    """The Slice primitive as a function: ``slice(input, begin, size)``."""
    return slice(input, begin, size)


def zero_(input: Any) -> Tensor:
    """In place: ``input`` holds zeros and is returned."""
    return _hold_value(input, zeros_like(input))


def put_(input: Any, index: Any, source: Any, accumulate: bool = False) -> Tensor:
    """In place: the flattened ``input`` takes ``source``'s elements at ``index`` (negative indices from
    the end; ``accumulate``: added instead); ``input`` is returned."""
    x, index, source = _tensor(input), _tensor(index), _tensor(source)
    if not isinstance(accumulate, bool):
        raise TypeError(f"For 'InplacePut', 'accumulate' must be a bool, but got {type(accumulate).__name__}.")
    if index.dtype.name not in SEQUENCE_LENGTH_DTYPES:
        raise TypeError(f"For 'InplacePut', the 'index' must be int32 or int64, but got {index.dtype}.")
    if index.size != source.size:
        raise ValueError(f"For 'InplacePut', 'index' and 'source' must have the same number of elements, but got "
                         f"{index.size} and {source.size}.")
    flat = reshape(x, (-1,))
    where = reshape(index, (-1,))
    where = select(where < 0, where + flat.shape[0], where)
    out = tensor_scatter_elements(flat, where, cast(reshape(source, (-1,)), x.dtype), 0,
                                  "add" if accumulate else "none")
    return _hold_value(input, reshape(out, tuple(x.shape)))


# Tensor.choose's index modes: clip to [0, n - 1] or wrap modulo n ('raise' is not implemented by MindSpore)
CHOOSE_MODES = ("clip", "wrap")


def _choose_method(op: Any, x: Any, choices: Any, mode: str = "clip") -> Tensor:
    """``Tensor.choose(choices, mode)`` (numpy's choose): element i of choices[x[i]], all broadcast to one
    shape; computed, as MindSpore does, on int32 copies of the choices and cast back to their dtype."""
    if mode == "raise":
        raise NotImplementedError('"raise" mode is not implemented')
    if mode not in CHOOSE_MODES:
        raise ValueError(f"For 'Tensor.choose', 'mode' must be one of ['clip', 'wrap', 'raise'], but got {mode!r}.")
    index = _tensor(x)
    if isinstance(choices, Tensor):
        stack_ = choices
        shape = tuple(np.broadcast_shapes(index.shape, tuple(stack_.shape[1:])))
        stack_ = broadcast_to(stack_, (stack_.shape[0],) + shape)
    else:
        parts = [_tensor(c) for c in choices]
        shape = tuple(np.broadcast_shapes(index.shape, *(tuple(p.shape) for p in parts)))
        stack_ = Stack(0)([broadcast_to(p, shape) for p in parts])
    if index.ndim == 0 or stack_.ndim == 0:
        raise ValueError(f"For 'Tensor.choose', the original tensor and the argument 'choices' cannot be scalars. "
                         f"Their dimensions should all be > 0, but got the original tensor's dimension {index.ndim}, "
                         f"'choices' dimension {stack_.ndim}.")
    count = stack_.shape[0]
    where = cast(broadcast_to(index, shape), mstype.int32)
    if mode == "wrap":
        where = apply_op("FloorMod", list(_binary_operands(where, count)))[0]
    else:
        where = select(where < 0, where * 0, select(where > count - 1, where * 0 + (count - 1), where))
    picked = op(cast(stack_, mstype.int32), 0, ExpandDims()(where, 0))
    return cast(squeeze(picked, 0), stack_.dtype)


def _itemset_method(op: Any, x: Any, args: tuple = ()) -> Tensor:
    """``Tensor.itemset(*args)`` (numpy's): a copy with one element set: ``(value)`` for a one-element
    tensor, ``(index, value)`` with a flat int index or a tuple of ints."""
    x = _tensor(x)
    if len(args) == 1:
        if x.size != 1:
            raise ValueError("For 'Tensor.itemset', with one argument the tensor must have exactly one element.")
        flat_index, value = 0, args[0]
    elif len(args) == 2:
        where, value = args
        if isinstance(where, (tuple, list)):
            flat_index = int(np.ravel_multi_index(tuple(int(i) for i in where), x.shape))
        else:
            flat_index = int(np.arange(x.size)[int(where)])
    else:
        raise TypeError(f"For 'Tensor.itemset', it takes 1 or 2 arguments, but got {len(args)}.")
    flat = reshape(x, (-1,))
    updated = op(flat, Tensor(np.asarray([[flat_index]], np.int32)), cast(Tensor(np.asarray([value])), x.dtype))
    return reshape(updated, tuple(x.shape))


def _index_copy_method(op: Any, x: Any, dim: int, index: Any, tensor: Any) -> Tensor:
    """``Tensor.index_copy_(dim, index, tensor)`` (PyTorch's): x's slices ``index[i]`` along ``dim`` take
    ``tensor``'s slice i (the in-place route makes x hold the result)."""
    x, index, source = _tensor(x), _tensor(index), _tensor(tensor)
    dim = check_arg_int(dim, "Tensor.index_copy_: dim", minimum=-builtins.max(x.ndim, 1),
                        maximum=builtins.max(x.ndim, 1) - 1)
    dim = dim % builtins.max(x.ndim, 1)
    if index.ndim > 1 or index.size != (source.shape[dim] if source.ndim else 1):
        raise ValueError(f"For 'Tensor.index_copy_', 'index' must be 1-D with one entry per slice of 'tensor' "
                         f"along dim {dim}, but got index shape {index.shape} and tensor shape {source.shape}.")
    view = [1] * source.ndim
    view[dim] = index.size
    spread = broadcast_to(reshape(index, tuple(view)), tuple(source.shape))
    return op(x, spread, cast(source, x.dtype), dim)


def _new_empty_method(op: Any, x: Any, size: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """``Tensor.new_empty(size, *, dtype=None, device=None)``: an uninitialised tensor, here zeros, of
    ``dtype`` (None: x's)."""
    if device not in (None, "Ascend", "CPU", "npu", "cpu"):
        raise ValueError(f"For 'Tensor.new_empty', 'device' must be None, 'Ascend' or 'CPU', but got {device!r}.")
    return op((size,) if isinstance(size, int) else tuple(size), dtype or x.dtype)


# ---- image, detection and windows ----
from ..operations.array_ops import HammingWindow, UniqueWithPad  # noqa: E402


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None) -> Tensor:
    """``alpha - beta cos(2 pi n/(N-1))`` of length ``window_length`` (an int); MindSpore's checks and its
    float64 ones for a length of 0 or 1."""
    if isinstance(window_length, bool) or not isinstance(window_length, int):
        raise TypeError(f"For array function 'hamming_window', 'window_length' must be int, but got "
                        f"{type(window_length)}.")
    if window_length < 0:
        raise ValueError("For array function 'hamming_window', 'window_length' must be non negative number.")
    for name, value, kind in (("periodic", periodic, bool), ("alpha", alpha, float), ("beta", beta, float)):
        if not isinstance(value, kind):
            raise TypeError(f"For array function 'hamming_window', '{name}' must be {kind.__name__}, but got "
                            f"{type(value)}.")
    if window_length <= 1:
        return Tensor(np.ones(window_length, np.float64))
    if dtype is not None and dtype not in (mstype.float16, mstype.float32, mstype.float64):
        raise TypeError(f"For array function 'hamming_window', 'dtype' must be floating point dtypes, but got "
                        f"{dtype}.")
    op = HammingWindow(periodic, alpha, beta, mstype.float32 if dtype is None else dtype)
    return op(Tensor(np.array([window_length], np.int32)))


def unique_with_pad(x: Any, pad_num: Any) -> tuple[Tensor, Tensor]:
    """``UniqueWithPad()(x, pad_num)``: x's distinct values padded to its length, and each element's index."""
    return UniqueWithPad()(x, pad_num)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.array_func", name, __all__)
