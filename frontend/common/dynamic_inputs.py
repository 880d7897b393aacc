"""Input signatures: ``Cell.set_inputs`` and the calls that must match it.

``Cell.set_inputs(*placeholders)`` (:mod:`.placeholder`) declares the cell's *input signature*: a
GRAPH_MODE call must match it (count, rank, dtype, every known dim; :func:`check_inputs` raises
MindSpore's errors, recorded from MindSpore 2.10 in tests/fixtures/set_inputs_errors.json) and all
calls matching it share one phase (:func:`signature_args`), whose graphs
``ascendemu.graph.dynamic.ShapeFamily`` serves per concrete shape.
"""
from __future__ import annotations

from typing import Any, Sequence

from .placeholder import UNKNOWN_DIM
from .tensor import Tensor

__all__ = ["any_shape", "check_inputs", "signature_args"]


def check_inputs(signature: Sequence[Any], args: Sequence[Any]) -> None:
    """Refuse a call that does not match ``signature`` (``set_inputs``), with MindSpore's errors."""
    if len(args) != len(signature):
        raise ValueError(f"For 'set_inputs', the number of inputs must be the same as expected, but got expected: "
                         f"{len(signature)}, and input: {len(args)}!")
    for i, (want, got) in enumerate(zip(signature, args), start=1):
        if not isinstance(want, Tensor):
            continue
        if not isinstance(got, Tensor):
            raise TypeError(f"For 'set_inputs' and tuple(list) in 'set_inputs',the type of {i}th input must be "
                            f"Tensor, but got {type(got)}.")
        if got.dtype != want.dtype:
            raise TypeError(f"For set_inputs or tuple(list) in set_inputs, the {i}th type should be "
                            f"Tensor[{want.dtype}], but got Tensor[{got.dtype}]!")
        if len(got.shape) != len(want.shape):
            raise ValueError(f"For set_inputs and tuple(list) in set_inputs, the dims of {i}th input must be the "
                             f"same as expected, but got expected: {len(want.shape)}, and input: {len(got.shape)}!")
        for w, g in zip(want.shape, got.shape):
            if w != UNKNOWN_DIM and w != g:
                raise ValueError(f"For set_inputs and tuple(list) in set_inputs, the shape of {i}th input must be "
                                 f"the same as expected, but got expected: {w}, and input: {g}!")


def signature_args(signature: Sequence[Any], args: Sequence[Any]) -> tuple:
    """The call's arguments as its phase key sees them: each Tensor the signature declares stands for
    every shape that matches it."""
    return tuple(w if isinstance(w, Tensor) else a for w, a in zip(signature, args))


def any_shape(args: Sequence[Any]) -> tuple:
    """``jit(dynamic=1)``'s signature of a call: each Tensor argument with every dim open (its rank and
    dtype kept, so a call of another rank or dtype is a phase of its own, not an error)."""
    return tuple(Tensor(shape=[None] * len(a.shape), dtype=a.dtype) if isinstance(a, Tensor) else None for a in args)
