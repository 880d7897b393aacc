"""``mindspore.ops.function.vmap_func``: ``ops.vmap`` (``mindspore.vmap``), automatic batching.

``vmap(fn, in_axes, out_axes)(*args)`` maps ``fn`` over one axis of its arguments: ``in_axes`` names
the mapped axis of each argument (an int for all, None for an argument passed whole, or a tuple
matching the arguments, nested like them), ``out_axes`` where the mapped axis goes in each output.

It runs ``fn`` once per example on that example's slices (``unstack`` along the mapped axis) and
stacks the outputs along ``out_axes``: the ops it records are ordinary ops, so a vmap inside
``construct`` compiles into the graph, differentiates like any other code and nests. MindSpore
rewrites each primitive with a batching rule instead; the per-example loop computes the same values
(one op per example instead of one per batch: slower for wide batches, correct for every op).
The argument checks and their messages are MindSpore's.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterator

from ascendemu.errors import InvalidParamError, RuntimeParamError

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .array_func import stack, unstack


class VmapError(RuntimeParamError):
    """A bad ``in_axes``/``out_axes`` or mismatched batch sizes (MindSpore raises RuntimeError)."""


def _is_axis(axis: Any) -> bool:
    return axis is None or (isinstance(axis, int) and not isinstance(axis, bool))


def _check_axes(name: str, axes: Any) -> None:
    """``axes`` is an int, None, or a tuple/list of them, nested."""
    if isinstance(axes, (tuple, list)):
        for a in axes:
            _check_axes(name, a)
    elif not _is_axis(axes):
        raise VmapError(f"The axis in vmap`s '{name}' can only be of type Int or None, but got {axes!r}.")


def _leaves(value: Any, axes: Any, out: list[tuple[Any, Any]]) -> None:
    """(leaf, axis) pairs of ``value`` with ``axes`` broadcast over its nesting."""
    if isinstance(value, (tuple, list)):
        if isinstance(axes, (tuple, list)):
            if len(axes) != len(value):
                raise VmapError(f"The size of vmap`s 'in_axes' {len(axes)} does not match the size of the "
                                f"argument {len(value)}.")
            for v, a in zip(value, axes):
                _leaves(v, a, out)
        else:
            for v in value:
                _leaves(v, axes, out)
        return
    if isinstance(axes, (tuple, list)):
        raise VmapError(f"The 'in_axes' {axes!r} of vmap is a sequence where the argument is a "
                        f"{type(value).__name__}.")
    out.append((value, axes))


def _axis_size(pairs: list[tuple[Any, Any]], in_axes: Any) -> int:
    size = None
    for value, axis in pairs:
        if axis is None:
            continue
        if not isinstance(value, Tensor):
            raise VmapError(f"The argument mapped along axis {axis} by vmap`s 'in_axes' must be a Tensor, but got "
                            f"{type(value).__name__}.")
        rank = len(value.shape)
        if not -rank <= axis < rank:
            raise VmapError(f"The axis: {axis} in 'in_axes' is out of bounds for array of dimension "
                            f"[{-rank},{rank}).")
        n = value.shape[axis]
        if size is not None and n != size:
            raise VmapError(f"The 'axis_size' of each argument in the scope of 'vmap' should be equal, but got "
                            f"{size} and {n}.")
        size = n
    if size is None:
        raise VmapError(f"The 'in_axes' of 'vmap' cannot be all None while 'fn' is not a 'CellList', but got "
                        f"{in_axes!r}.")
    return size


def _rebuild(value: Any, slices: Iterator[Any]) -> Any:
    """``value`` with each leaf replaced by the next of ``slices``, keeping tuples and lists."""
    if isinstance(value, (tuple, list)):
        return type(value)(_rebuild(v, slices) for v in value)
    return next(slices)


def _stack_out(results: list[Any], axes: Any) -> Any:
    """The per-example outputs stacked along ``axes`` (None: the first example's, unmapped)."""
    first = results[0]
    if isinstance(first, (tuple, list)):
        if isinstance(axes, (tuple, list)) and len(axes) != len(first):
            raise VmapError(f"The size of vmap`s 'out_axes' should be equal to the number of results of 'fn': "
                            f"{len(first)}, but got size: {len(axes)}.")
        sub = axes if isinstance(axes, (tuple, list)) else (axes,) * len(first)
        return type(first)(_stack_out([r[i] for r in results], a) for i, a in enumerate(sub))
    if isinstance(axes, (tuple, list)):
        raise VmapError(f"The 'out_axes' {axes!r} of vmap is a sequence where the result of 'fn' is a "
                        f"{type(first).__name__}.")
    if axes is None:
        return first
    if not isinstance(first, Tensor):
        raise VmapError(f"vmap maps a result of 'fn' along out_axes={axes}, so it must be a Tensor, but got "
                        f"{type(first).__name__}; use out_axes=None for it.")
    rank = len(first.shape) + 1
    if not -rank <= axes < rank:
        raise VmapError(f"The axis: {axes} in 'out_axes' is out of bounds for array of dimension [{-rank},{rank}).")
    return stack(results, axes)


def _is_cell_list(fn: Any) -> bool:
    return any(cls.__name__ == "CellList" for cls in type(fn).__mro__)


def vmap(fn: Callable, in_axes: Any = 0, out_axes: Any = 0) -> Callable:
    """``ops.vmap(fn, in_axes=0, out_axes=0)``: ``fn`` mapped over an axis of its arguments (see the
    module's docstring); ``fn`` may be a function or a Cell."""
    if _is_cell_list(fn):
        raise InvalidParamError("vmap over a CellList (model ensembling with stacked weights) is not served; "
                                "vmap a function that calls each Cell instead")
    if not callable(fn):
        raise TypeError(f"For 'vmap', 'fn' must be a function or a Cell, but got {type(fn).__name__}.")
    _check_axes("in_axes", in_axes)
    _check_axes("out_axes", out_axes)

    @functools.wraps(fn)
    def mapped(*args: Any) -> Any:
        if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(args):
            raise VmapError(f"When vmap`s 'in_axes' is a tuple or list, and its size must be equal to the number of "
                            f"arguments of 'fn': {len(args)}, but got size: {len(in_axes)}.")
        pairs: list[tuple[Any, Any]] = []
        _leaves(args, in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args), pairs)
        size = _axis_size(pairs, in_axes)
        parts = [unstack(v, a) if a is not None else None for v, a in pairs]
        results = []
        for i in range(size):
            leaves = (v if p is None else p[i] for (v, _), p in zip(pairs, parts))
            results.append(fn(*_rebuild(args, leaves)))
        return _stack_out(results, out_axes)
    return mapped


__all__ = ["vmap"]


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.vmap_func", name, __all__)
