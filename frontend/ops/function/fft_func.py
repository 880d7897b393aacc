"""``mindspore.ops.function.fft_func``: the FFT family (numpy.fft / torch.fft semantics, MindSpore 2.10's
signatures): fft/ifft, rfft/irfft, hfft/ihfft and their 2-D and n-D forms, fftshift/ifftshift,
fftfreq/rfftfreq.

Every transform is one kernel DFT per transformed axis (``kernels/ops/fft.py``): the axis cut or
zero-padded to its length, scaled by the norm mode ("backward": the inverse by 1/n, "forward": the
forward by 1/n, "ortho": both by 1/sqrt(n); None is "backward"). Inputs as MindSpore takes them:
integer and float16 tensors transform as float32 (complex64 results), float64 as complex128; bool is a
TypeError. hfft is irfft of the conjugate with the norm's direction swapped, ihfft the conjugate of
rfft likewise (numpy's definitions).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import ArgumentError, InvalidValueError

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..operations.array_ops import Roll
from ..primitive import _cast, _tensor, apply_op

# numpy's norm modes (None means "backward"); hfft/ihfft swap the direction the 1/n goes with
NORMS = ("backward", "forward", "ortho")
_SWAPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
# what each input dtype transforms as (MindSpore 2.10 CPU, measured); bool is refused
_WORKING = {"float64": "float64", "complex64": "complex64", "complex128": "complex128"}
# MindSpore's limit on the rank of an FFT input
MAX_RANK = 8



def _working(prim: str, x: Any) -> Tensor:
    """x as the dtype it is transformed in: float64 and complex stay, other numbers become float32."""
    x = _tensor(x)
    if x.dtype == mstype.bool_:
        raise ArgumentError(f"For '{prim}', the type of 'input' must be a number tensor, but got {x.dtype}.")
    if not 1 <= x.ndim <= MAX_RANK:
        raise InvalidValueError(f"For primitive[{prim}], the rank of input must be in [1,{MAX_RANK}], but got "
                                f"{x.ndim}.")
    return _cast(x, _WORKING.get(x.dtype.name, "float32"))


def _norm(prim: str, norm: Any) -> str:
    norm = "backward" if norm is None else norm
    if norm not in NORMS:
        raise InvalidValueError(f"For '{prim}', 'norm' must be one of {NORMS} or None, but got {norm!r}.")
    return norm


def _dim(prim: str, dim: Any, rank: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise ArgumentError(f"For '{prim}', 'dim' must be an int, but got {type(dim).__name__}.")
    if not -rank <= dim < rank:
        raise InvalidValueError(f"For primitive[{prim}], the dim must be in [{-rank},{rank}), but got {dim}.")
    return dim % rank


def _length(prim: str, n: Any, default: int) -> int:
    if n is None:
        return default
    if isinstance(n, bool) or not isinstance(n, int):
        raise ArgumentError(f"For '{prim}', 'n' must be an int or None, but got {type(n).__name__}.")
    if n <= 0:
        raise InvalidValueError(f"The argument[n] must be greater than 0, but got {n}.")
    return n


def _dft(x: Tensor, mode: str, n: int, dim: int, inverse: bool, norm: str) -> Tensor:
    return apply_op("DFT", [x], {"mode": mode, "n": n, "axis": dim, "inverse": inverse, "norm": norm})[0]


def _as_complex(x: Tensor) -> Tensor:
    return x if x.dtype.name.startswith("complex") else _cast(x, "complex128" if x.dtype == mstype.float64
                                                              else "complex64")


def _as_real(x: Tensor) -> Tensor:
    """A complex input of a real-input transform contributes its real part (MindSpore's rfft/ihfft)."""
    return apply_op("Real", [x])[0] if x.dtype.name.startswith("complex") else x


def _conj(x: Tensor) -> Tensor:
    return apply_op("Conj", [x])[0]


# ------------------------------------------------------------------------------------------ 1-D

def _c2c(prim: str, input: Any, n: Any, dim: int, norm: Any, inverse: bool) -> Tensor:
    x = _working(prim, input)
    d = _dim(prim, dim, x.ndim)
    return _dft(_as_complex(x), "c2c", _length(prim, n, x.shape[d]), d, inverse, _norm(prim, norm))


def _r2c(prim: str, input: Any, n: Any, dim: int, norm: str) -> Tensor:
    x = _working(prim, input)
    d = _dim(prim, dim, x.ndim)
    return _dft(_as_real(x), "r2c", _length(prim, n, x.shape[d]), d, False, norm)


def _c2r(prim: str, input: Any, n: Any, dim: int, norm: str, conj: bool) -> Tensor:
    x = _working(prim, input)
    d = _dim(prim, dim, x.ndim)
    x = _as_complex(x)
    return _dft(_conj(x) if conj else x, "c2r", _length(prim, n, 2 * (x.shape[d] - 1)), d, True, norm)


def fft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The 1-D discrete Fourier transform along ``dim`` (length ``n``: cut or zero-padded)."""
    return _c2c("FFT", input, n, dim, norm, False)


def ifft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The inverse of :func:`fft`."""
    return _c2c("IFFT", input, n, dim, norm, True)


def rfft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The FFT of a real signal: its first n // 2 + 1 bins."""
    return _r2c("RFFT", input, n, dim, _norm("RFFT", norm))


def irfft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The real signal of length ``n`` (default 2 * (bins - 1)) whose rfft is ``input``."""
    return _c2r("IRFFT", input, n, dim, _norm("IRFFT", norm), False)


def hfft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: real, of length ``n``."""
    return _c2r("HFFT", input, n, dim, _SWAPPED[_norm("HFFT", norm)], True)


def ihfft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The inverse of :func:`hfft`: the first n // 2 + 1 bins of a real signal's inverse FFT."""
    return _conj(_r2c("IHFFT", input, n, dim, _SWAPPED[_norm("IHFFT", norm)]))


# ------------------------------------------------------------------------------------- 2-D, n-D

def _plan(prim: str, x: Tensor, s: Any, dim: Any) -> tuple[list[int], list[int | None]]:
    """(dims, lengths) of an n-D transform: torch's rules (dim None: the last len(s) dims, or all; s
    None or -1: the input's size)."""
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
    if dim is None:
        dims = list(range(x.ndim - len(s), x.ndim)) if s is not None else list(range(x.ndim))
    else:
        dims = [_dim(prim, d, x.ndim) for d in ([dim] if isinstance(dim, int) else dim)]
    if len(set(dims)) != len(dims):
        raise InvalidValueError(f"For '{prim}', 'dim' must not repeat a dimension, but got {dim}.")
    if s is None:
        return dims, [None] * len(dims)
    if len(s) != len(dims):
        raise InvalidValueError(f"For '{prim}', 's' and 'dim' must have the same length, but got {s} and {dim}.")
    return dims, [None if k == -1 else k for k in s]


def _c2c_n(prim: str, input: Any, s: Any, dim: Any, norm: Any, inverse: bool) -> Tensor:
    x = _working(prim, input)
    dims, lengths = _plan(prim, x, s, dim)
    norm = _norm(prim, norm)
    x = _as_complex(x)
    for d, k in zip(dims, lengths):
        x = _dft(x, "c2c", _length(prim, k, x.shape[d]), d, inverse, norm)
    return x


def _r2c_n(prim: str, input: Any, s: Any, dim: Any, norm: str) -> Tensor:
    """rfft along the last of ``dims``, then fft along the others."""
    x = _working(prim, input)
    dims, lengths = _plan(prim, x, s, dim)
    x = _dft(_as_real(x), "r2c", _length(prim, lengths[-1], x.shape[dims[-1]]), dims[-1], False, norm)
    for d, k in zip(dims[:-1], lengths[:-1]):
        x = _dft(x, "c2c", _length(prim, k, x.shape[d]), d, False, norm)
    return x


def _c2r_n(prim: str, input: Any, s: Any, dim: Any, norm: str, conj: bool) -> Tensor:
    """ifft along all of ``dims`` but the last, then irfft along it."""
    x = _as_complex(_working(prim, input))
    dims, lengths = _plan(prim, x, s, dim)
    if conj:
        x = _conj(x)
    for d, k in zip(dims[:-1], lengths[:-1]):
        x = _dft(x, "c2c", _length(prim, k, x.shape[d]), d, True, norm)
    last = dims[-1]
    return _dft(x, "c2r", _length(prim, lengths[-1], 2 * (x.shape[last] - 1)), last, True, norm)


def fft2(input: Any, s: Any = None, dim: tuple = (-2, -1), norm: Any = None) -> Tensor:
    """The 2-D FFT over ``dim``."""
    return _c2c_n("FFT2", input, s, dim, norm, False)


def ifft2(input: Any, s: Any = None, dim: tuple = (-2, -1), norm: Any = None) -> Tensor:
    """The inverse of :func:`fft2`."""
    return _c2c_n("IFFT2", input, s, dim, norm, True)


def fftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    """The n-D FFT over ``dim`` (default: every dim, or the last len(s))."""
    return _c2c_n("FFTN", input, s, dim, norm, False)


def ifftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    """The inverse of :func:`fftn`."""
    return _c2c_n("IFFTN", input, s, dim, norm, True)


def rfft2(input: Any, s: Any = None, dim: tuple = (-2, -1), norm: Any = None) -> Tensor:
    return _r2c_n("RFFT2", input, s, dim, _norm("RFFT2", norm))


def irfft2(input: Any, s: Any = None, dim: tuple = (-2, -1), norm: Any = None) -> Tensor:
    return _c2r_n("IRFFT2", input, s, dim, _norm("IRFFT2", norm), False)


def rfftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    return _r2c_n("RFFTN", input, s, dim, _norm("RFFTN", norm))


def irfftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    return _c2r_n("IRFFTN", input, s, dim, _norm("IRFFTN", norm), False)


def hfft2(input: Any, s: Any = None, dim: tuple = (-2, -1), norm: Any = None) -> Tensor:
    return _c2r_n("HFFT2", input, s, dim, _SWAPPED[_norm("HFFT2", norm)], True)


def ihfft2(input: Any, s: Any = None, dim: tuple = (-2, -1), norm: Any = None) -> Tensor:
    return _conj(_r2c_n("IHFFT2", input, s, dim, _SWAPPED[_norm("IHFFT2", norm)]))


def hfftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    return _c2r_n("HFFTN", input, s, dim, _SWAPPED[_norm("HFFTN", norm)], True)


def ihfftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    return _conj(_r2c_n("IHFFTN", input, s, dim, _SWAPPED[_norm("IHFFTN", norm)]))


# ------------------------------------------------------------------------------ shifts, frequencies

def _shift(prim: str, input: Any, dim: Any, inverse: bool) -> Tensor:
    x = _tensor(input)
    dims = list(range(x.ndim)) if dim is None else [_dim(prim, d, x.ndim) for d in
                                                     ([dim] if isinstance(dim, int) else dim)]
    if not dims:
        return x
    shifts = [(-(x.shape[d] // 2) if inverse else x.shape[d] // 2) for d in dims]
    return Roll(tuple(shifts), tuple(dims))(x)


def fftshift(input: Any, dim: Any = None) -> Tensor:
    """The zero-frequency bin moved to the centre of ``dim`` (default: every dim)."""
    return _shift("FFTShift", input, dim, False)


def ifftshift(input: Any, dim: Any = None) -> Tensor:
    """The inverse of :func:`fftshift`."""
    return _shift("IFFTShift", input, dim, True)


def _freq_dtype(prim: str, dtype: Any) -> mstype.Type:
    t = mstype.float32 if dtype is None else mstype.to_type(dtype)
    if t.name not in ("float16", "float32", "float64", "bfloat16"):
        raise ArgumentError(f"For '{prim}', 'dtype' must be a float type, but got {t}.")
    return t


def _frequencies(k: np.ndarray, d: float, n: int, dtype: mstype.Type) -> Tensor:
    """k / (d n) rounded as MindSpore's kernel computes it (k / d / n, in float64 for float64, else in
    float32)."""
    real = np.float64 if dtype == mstype.float64 else np.float32
    return Tensor(k.astype(real) / real(d) / real(n), dtype)


def fftfreq(n: int, d: float = 1.0, dtype: Any = None) -> Tensor:
    """The sample frequencies of an n-point FFT with spacing ``d``: [0, 1, ..., -1] / (d n)."""
    n = _length("FFTFreq", n, 0)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies(k, d, n, _freq_dtype("FFTFreq", dtype))


def rfftfreq(n: int, d: float = 1.0, dtype: Any = None) -> Tensor:
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d n)."""
    n = _length("RFFTFreq", n, 0)
    return _frequencies(np.arange(0, n // 2 + 1), d, n, _freq_dtype("RFFTFreq", dtype))


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.fft_func", name, __all__)

