"""Tensors with unknown dims: ``Tensor(shape=[None, 3], dtype=...)`` without data.

A *placeholder* tensor has a shape and a dtype and no data: MindSpore's ``Tensor(shape=..., dtype=...)``
without ``init``, which ``Cell.set_inputs`` takes to declare an input signature
(:mod:`.dynamic_inputs`). An unknown dim (``None`` or ``-1``) reads as -1 in ``shape``, as in
MindSpore; a placeholder with only known dims holds zeros, as MindSpore's does. Reading a
placeholder's data raises what MindSpore raises (numpy's ``ValueError: negative dimensions are not
allowed``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import dtype as mstype

__all__ = ["UNKNOWN_DIM", "Placeholder", "is_dynamic", "placeholder_init"]

UNKNOWN_DIM = -1            # how MindSpore's shape reports a dim set_inputs leaves open
_NO_DATA = "negative dimensions are not allowed"     # MindSpore's (numpy's) error on a placeholder's data


class Placeholder:
    """The data of a tensor with unknown dims: its shape and dtype; any other use raises ValueError."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype):
        self.shape, self.dtype, self.ndim = shape, dtype, len(shape)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise ValueError(_NO_DATA)

    def __str__(self) -> str:                   # print(tensor) reads the data
        raise ValueError(_NO_DATA)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):               # protocol probes (copy, pickle, numpy) find nothing
            raise AttributeError(name)
        raise ValueError(_NO_DATA)


def placeholder_init(tensor: Any, shape: Any, dtype: Any) -> None:
    """Make ``tensor`` a placeholder of ``shape`` (ints, ``None`` or -1 for an unknown dim) and ``dtype``."""
    shape = (shape,) if isinstance(shape, int) or shape is None else shape
    if not isinstance(shape, (tuple, list)) or not all(d is None or (type(d) is int and d >= -1) for d in shape):
        raise TypeError(f"For 'Tensor', the 'shape' must be a tuple or list of int (or None for a dynamic dim), but "
                        f"got {shape!r}.")
    dims = tuple(UNKNOWN_DIM if d is None else d for d in shape)
    t = mstype.to_type(dtype if dtype is not None else mstype.float32)
    known = UNKNOWN_DIM not in dims
    tensor._data = np.zeros(dims, t.np_type) if known else Placeholder(dims, np.dtype(t.np_type))
    tensor._dtype, tensor._sym, tensor.const_arg = t, None, False


def is_dynamic(tensor: Any) -> bool:
    """Whether ``tensor`` is a placeholder with an unknown dim."""
    return isinstance(getattr(tensor, "_data", None), Placeholder)
