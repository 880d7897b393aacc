"""MindSpore-style dtype objects (``mstype.float32``), mapped to the kernel library's dtype names.

Every real number type MindSpore exposes is a device type: bool, int8/16/32/64, uint8/16/32/64,
float16, bfloat16, float32 and float64 (``kernels/signature.py`` ITEMSIZE), so a Tensor keeps the
dtype it is made with. bfloat16's numpy type is ml_dtypes' (MindSpore's own ``asnumpy`` gives a
bfloat16 array too). complex64 and complex128 are device types as well, served by the ops MindSpore
serves them on (elementwise arithmetic, Cast, Real/Imag/Conj, the FFTs).
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ascendemu.errors import InvalidTypeError


class Type:
    """A tensor element type; prints as MindSpore does: ``str`` its label (``Float32``, ``UInt8``, as in a
    Tensor's repr), ``repr`` its qualified name (``mindspore.float32``, as in a list of dtypes)."""

    def __init__(self, name: str, np_type: type | None, label: str = ""):
        self.name = name              # the kernel library's name for device types, e.g. "float32"
        self.np_type = np_type        # None: numpy has no such type (bfloat16)
        self.label = label or name.capitalize()

    def __repr__(self) -> str:
        return f"mindspore.{self.name}"

    def __str__(self) -> str:
        return self.label

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Type) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = Type("float16", np.float16)
float32 = Type("float32", np.float32)
int32 = Type("int32", np.int32)
bool_ = Type("bool", np.bool_)
int8 = Type("int8", np.int8)
int16 = Type("int16", np.int16)
int64 = Type("int64", np.int64)
uint8 = Type("uint8", np.uint8, "UInt8")
uint16 = Type("uint16", np.uint16, "UInt16")
uint32 = Type("uint32", np.uint32, "UInt32")
uint64 = Type("uint64", np.uint64, "UInt64")
float64 = Type("float64", np.float64)
complex64 = Type("complex64", np.complex64)
complex128 = Type("complex128", np.complex128)
bfloat16 = Type("bfloat16", ml_dtypes.bfloat16, "BFloat16")
# MindSpore's aliases (numpy's C names)
half, single, float_, double = float16, float32, float32, float64
byte, short, intc, long, intp = int8, int16, int32, int64, int64
ubyte, ushort, uintc, uintp = uint8, uint16, uint32, uint64
cfloat, cdouble = complex64, complex128

DEVICE_TYPES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64,
                complex64, complex128)
_ALL = {t.name: t for t in DEVICE_TYPES}


def _by_name(name: str) -> Type:
    return _ALL[name]


def _lookup(dtype: Any) -> Type:
    """The dtype object of a Type, a numpy dtype or a name ("float32"), device or host-only."""
    if isinstance(dtype, Type):
        return dtype
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype).lower()
    if name not in _ALL:
        raise InvalidTypeError(f"dtype {dtype!r} is not supported: it is no MindSpore number type; use e.g. "
                               f"mstype.float32, mstype.int64 or mstype.bfloat16")
    return _ALL[name]


def to_type(dtype: Any) -> Type:
    """The device type of ``dtype`` (a Type, numpy dtype or name)."""
    return _lookup(dtype)


def from_numpy(np_dtype: np.dtype) -> Type:
    return to_type(np_dtype)


def dtype_to_nptype(dtype: Type) -> type:
    """The numpy type of ``dtype`` itself (``mstype.int8`` -> ``numpy.int8``), as MindSpore gives it."""
    return _lookup(dtype).np_type


def pytype_to_dtype(py_type: type) -> Type:
    """MindSpore's dtype of a Python type: int is int64, float is float64 (as MindSpore maps them)."""
    return {float: float64, int: int64, bool: bool_}[py_type]


def dtype_to_pytype(dtype: Any) -> type:
    """The Python type of ``dtype``'s values: bool, int or float (complex for the complex types)."""
    t = _lookup(dtype)
    if t == bool_:
        return bool
    if t in (complex64, complex128):
        return complex
    return float if t in (float16, bfloat16, float32, float64) else int


__all__ = ["Type", "to_type", "from_numpy", "dtype_to_nptype", "pytype_to_dtype", "dtype_to_pytype", "DEVICE_TYPES",
           "float16", "float32", "int32", "bool_", "int8", "int16", "int64", "uint8", "uint16", "uint32", "uint64",
           "float64", "complex64", "complex128", "bfloat16", "half", "single", "float_", "double", "byte", "short",
           "intc", "long", "intp", "ubyte", "ushort", "uintc", "uintp", "cfloat", "cdouble"]
