"""MindSpore-style dtype objects (``mstype.float32``), mapped to the kernel library's dtype names.

The device supports float32, float16 and int32 (``bool_`` for comparison results and masks). Every
number type MindSpore exposes exists here as a dtype object (``mstype.int8``, ``mstype.float64``,
``mstype.uint8``, ...), so scripts can name them and the host data pipeline casts to them exactly
(``TypeCast(mstype.uint8)`` gives uint8 arrays). A Tensor made with one of them holds the device's
type instead, as a numpy array of that type does: float64 and int64 are narrowed to float32 and
int32, the small integers (int8, int16, uint8, uint16) widened to int32. Types with no such
counterpart (uint32, uint64, complex, bfloat16) are refused with an error naming them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError


class Type:
    """A tensor element type; prints as MindSpore does (``Float32``, ``UInt8``)."""

    def __init__(self, name: str, np_type: type | None, label: str = ""):
        self.name = name              # the kernel library's name for device types, e.g. "float32"
        self.np_type = np_type        # None: numpy has no such type (bfloat16)
        self.label = label or name.capitalize()

    def __repr__(self) -> str:
        return self.label

    __str__ = __repr__

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
# host-only types: MindSpore names them; a Tensor of one holds the device type _DEVICE gives
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
bfloat16 = Type("bfloat16", None, "BFloat16")
# MindSpore's aliases (numpy's C names)
half, single, float_, double = float16, float32, float32, float64
byte, short, intc, long, intp = int8, int16, int32, int64, int64
ubyte, ushort, uintc, uintp = uint8, uint16, uint32, uint64
cfloat, cdouble = complex64, complex128

DEVICE_TYPES = (float16, float32, int32)
_ALL = {t.name: t for t in (float16, float32, int32, bool_, int8, int16, int64, uint8, uint16, uint32, uint64,
                            float64, complex64, complex128, bfloat16)}
# host type -> the device type a Tensor of it holds (narrowed, or widened without loss)
_DEVICE = {"float64": "float32", "int64": "int32", "int8": "int32", "int16": "int32", "uint8": "int32",
           "uint16": "int32"}
_ON_DEVICE = ("float16", "float32", "int32", "bool")


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
        raise InvalidParamError(f"dtype {dtype!r} is not supported: it is no MindSpore number type; use e.g. "
                                f"mstype.float32, mstype.float16 or mstype.int32")
    return _ALL[name]


def to_type(dtype: Any) -> Type:
    """The device type a Tensor of ``dtype`` holds: a device type as it is, a host-only one narrowed
    or widened (see the module docstring); a type with no device counterpart is an error."""
    t = _lookup(dtype)
    name = _DEVICE.get(t.name, t.name)
    if name not in _ON_DEVICE:
        raise InvalidParamError(f"dtype {t} is not supported on the emulated device, whose tensors are "
                                f"float32, float16, int32 or bool; cast the data to one of them first")
    return _ALL[name]


def from_numpy(np_dtype: np.dtype) -> Type:
    return to_type(np_dtype)


def dtype_to_nptype(dtype: Type) -> type:
    """The numpy type of ``dtype`` itself (``mstype.int8`` -> ``numpy.int8``), as MindSpore gives it."""
    t = _lookup(dtype)
    if t.np_type is None:
        raise InvalidParamError(f"dtype {t} has no numpy type; use mstype.float32 or mstype.float16")
    return t.np_type


def pytype_to_dtype(py_type: type) -> Type:
    return {float: float32, int: int32, bool: bool_}[py_type]


__all__ = ["Type", "to_type", "from_numpy", "dtype_to_nptype", "pytype_to_dtype", "DEVICE_TYPES",
           "float16", "float32", "int32", "bool_", "int8", "int16", "int64", "uint8", "uint16", "uint32", "uint64",
           "float64", "complex64", "complex128", "bfloat16", "half", "single", "float_", "double", "byte", "short",
           "intc", "long", "intp", "ubyte", "ushort", "uintc", "uintp", "cfloat", "cdouble"]
