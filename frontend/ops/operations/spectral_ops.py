"""``mindspore.ops.operations.spectral_ops``: the signal windows MindSpore defines there (BartlettWindow,
BlackmanWindow), and the window formulas the other window ops (HammingWindow, ``ops.kaiser_window``) share.

A window depends only on its length and attributes, never on tensor data, so it is computed on the host
(float64, or float32 where MindSpore's CPU kernel computes in float32) and served as a constant tensor of
the requested dtype: PyNative returns it, a GRAPH_MODE capture records it as a constant. Its length must
therefore be known when the op runs (a Python int, or a concrete Tensor as MindSpore passes it).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..primitive import _Op

# the dtypes a window may be made in (MindSpore refuses the others with a TypeError)
WINDOW_DTYPES = (mstype.float16, mstype.float32, mstype.float64)
# the int dtypes MindSpore's BartlettWindow/BlackmanWindow take their length in
LENGTH_DTYPES = (mstype.int32, mstype.int64)
# MindSpore's bound on a window's length (its kernels refuse longer ones)
MAX_WINDOW_LENGTH = 1000000


def window_values(kind: str, length: int, periodic: bool, alpha: float = 0.54, beta: float = 0.46) -> np.ndarray:
    """The ``length`` samples of window ``kind`` ('bartlett', 'blackman', 'hamming'), float64: a periodic
    window is the symmetric window one longer without its last sample. Hamming is computed in float32,
    as MindSpore's kernel computes it (its float64 window carries float32 rounding)."""
    if length <= 1:
        return np.ones(length, np.float64)
    span = length if periodic else length - 1          # (window length - 1) of the symmetric window
    n = np.arange(length, dtype=np.float64)
    if kind == "bartlett":
        return 1.0 - np.abs(2.0 * n / span - 1.0)
    if kind == "blackman":
        return 0.42 - 0.5 * np.cos(2.0 * np.pi * n / span) + 0.08 * np.cos(4.0 * np.pi * n / span)
    if kind == "hamming":
        angle = (np.float32(2.0 * np.pi) * n.astype(np.float32) / np.float32(span)).astype(np.float32)
        return (np.float32(alpha) - np.float32(beta) * np.cos(angle)).astype(np.float32).astype(np.float64)
    raise ValueError(f"unknown window {kind!r}")


def window_dtype(label: str, dtype: Any) -> mstype.Type:
    """``dtype`` (None: float32) if it is one a window can be made in, else MindSpore's TypeError."""
    dtype = mstype.float32 if dtype is None else dtype
    if dtype not in WINDOW_DTYPES:
        raise TypeError(f"For '{label}', the 'dtype' should be one of [mindspore.float16, mindspore.float32, "
                        f"mindspore.float64], but got '{dtype}'.")
    return dtype


def length_tensor(label: str, window_length: Any, dtypes: tuple, rank: int) -> int:
    """The window length MindSpore passes as an int Tensor of ``rank`` (0: a scalar, 1: one element), as
    a Python int, checked as MindSpore checks it."""
    if not isinstance(window_length, Tensor):
        raise TypeError(f"For Primitive[{label}], the type of input argument[window_length] must be Tensor but got "
                        f"{type(window_length).__name__}.")
    if window_length.dtype not in dtypes:
        raise TypeError(f"For primitive[{label}], the input argument[window_length] must be an int Tensor, but got "
                        f"Tensor[{window_length.dtype}].")
    if window_length.ndim != rank or (rank == 1 and window_length.shape != (1,)):
        raise ValueError(f"For '{label}', the window_length must have rank {rank} and one element, but got "
                         f"shape {window_length.shape}.")
    length = int(window_length.asnumpy().reshape(-1)[0])
    if not 0 <= length <= MAX_WINDOW_LENGTH:
        raise ValueError(f"For '{label}', the value range of window_length must be [0, {MAX_WINDOW_LENGTH}], but "
                         f"got: {length}.")
    return length


class _Window(_Op):
    """A window primitive: ``Name(periodic=True, dtype=mstype.float32)(window_length)``, the length a
    scalar int32/int64 Tensor."""
    kind = ""

    def __init__(self, periodic: bool = True, dtype: Any = mstype.float32) -> None:
        super().__init__()
        if not isinstance(periodic, bool):
            raise TypeError(f"For '{self.name}', 'periodic' must be a bool, but got {type(periodic).__name__}.")
        self.periodic, self.dtype = periodic, window_dtype(self.name, dtype)

    def __call__(self, window_length: Any) -> Tensor:
        length = length_tensor(self.name, window_length, LENGTH_DTYPES, 0)
        values = window_values(self.kind, length, self.periodic)
        return Tensor(values.astype(mstype.dtype_to_nptype(self.dtype)), self.dtype)


class BartlettWindow(_Window):
    """The triangular window ``1 - |2n/(N-1) - 1|`` (N = length + 1 when periodic)."""
    kind = "bartlett"


class BlackmanWindow(_Window):
    """The window ``0.42 - 0.5 cos(2 pi n/(N-1)) + 0.08 cos(4 pi n/(N-1))``."""
    kind = "blackman"


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.spectral_ops", name, __all__)
