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
from .._utils import _flag, _int_tuple, _static_int, _static_ints, defined_here
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
    axis = check_int(axis, "split: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    dim = x.shape[axis]

    def part(start: int, length: int) -> Tensor:
        return slice(x, tuple(start if d == axis else 0 for d in builtins.range(x.ndim)),
                     tuple(length if d == axis else -1 for d in builtins.range(x.ndim)))

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
    return Unique()(input)


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
    axis = check_int(axis, "repeat_interleave: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    index = _repeat_index(repeats, x.shape[axis], "repeat_interleave")
    return Gather()(x, Tensor(index.astype(np.int32)), axis)


def repeat_elements(x: Any, rep: int, axis: int = 0) -> Tensor:
    """Each slice along ``axis`` repeated ``rep`` times in place (``[a, b] -> [a, a, b, b]``)."""
    if isinstance(rep, bool) or not isinstance(rep, int):
        raise TypeError(f"repeat_elements: rep must be an int, got {type(rep).__name__}")
    check_int(rep, "repeat_elements: rep", minimum=1)
    return repeat_interleave(x, rep, axis)


def index_select(input: Any, axis: int, index: Any) -> Tensor:
    """The slices of input along ``axis`` at the 1-D int ``index`` (a Gather)."""
    index = _tensor(index)
    if index.ndim != 1:
        raise InvalidParamError(f"index_select: index must be 1-D, got shape {index.shape}")
    return Gather()(input, index, check_int(axis, "index_select: axis"))


def narrow(input: Any, axis: int, start: int, length: int) -> Tensor:
    """``length`` entries of input along ``axis`` from ``start`` (a Slice)."""
    x = _tensor(input)
    axis = check_int(axis, "narrow: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    n = x.shape[axis]
    start = check_int(start, "narrow: start", minimum=-n, maximum=n)
    start += n if start < 0 else 0
    length = check_int(length, "narrow: length", minimum=0, maximum=n - start)
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
    chunks = check_int(chunks, "chunk: chunks", minimum=1)
    axis = check_int(axis, "chunk: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    step = builtins.max(-(-x.shape[axis] // chunks), 1)
    return _split_at(x, axis, list(builtins.range(step, x.shape[axis], step)))


def tensor_split(input: Any, indices_or_sections: Any, axis: int = 0) -> tuple[Tensor, ...]:
    """numpy's array_split: ``sections`` parts (the first n % sections one longer), or parts cut at the
    listed indices."""
    x = _tensor(input)
    axis = check_int(axis, "tensor_split: axis", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    n = x.shape[axis]
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        k = check_int(indices_or_sections, "tensor_split: indices_or_sections", minimum=1)
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
    d1 = check_int(dim1, "diagonal: dim1", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    d2 = check_int(dim2, "diagonal: dim2", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    if d1 == d2:
        raise InvalidParamError(f"diagonal: dim1={dim1} and dim2={dim2} must be different dimensions")
    rest = [d for d in builtins.range(x.ndim) if d not in (d1, d2)]
    rows, cols = x.shape[d1], x.shape[d2]
    offset = check_int(offset, "diagonal: offset")
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
    a = check_int(axis0, "swapaxes: axis0", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    b = check_int(axis1, "swapaxes: axis1", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, tuple(perm))


def swapdims(input: Any, dim0: int, dim1: int) -> Tensor:
    return swapaxes(input, dim0, dim1)


def movedim(x: Any, source: Any, destination: Any) -> Tensor:
    """x with dimensions ``source`` moved to ``destination`` (ints or tuples), the others in order."""
    x = _tensor(x)
    src = [source] if isinstance(source, int) else list(_int_tuple("movedim: source", source))
    dst = [destination] if isinstance(destination, int) else list(_int_tuple("movedim: destination", destination))
    src = [check_int(s, "movedim: source", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim for s in src]
    dst = [check_int(d, "movedim: destination", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim for d in dst]
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


install_composite_functions(globals(), "mindspore.ops.function.array_func")

__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.array_func", name, __all__)
