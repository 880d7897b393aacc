"""MindSpore-style dtype objects (``mstype.float32``), mapped to the kernel library's dtype names.

The device supports float32, float16 and int32. ``bool_`` exists only for host-side comparison
results in PyNative mode; no kernel accepts it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError


class Type:
    """A tensor element type; prints as MindSpore does (``Float32``)."""

    def __init__(self, name: str, np_type: type):
        self.name = name              # the kernel library's name, e.g. "float32"
        self.np_type = np_type

    def __repr__(self) -> str:
        return self.name.capitalize() if self.name != "bool" else "Bool"

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
half = float16
single = float32
float_ = float32

DEVICE_TYPES = (float16, float32, int32)
_ALL = {t.name: t for t in (float16, float32, int32, bool_)}
# Host types with no device counterpart are narrowed, as the device has no 64-bit types.
_NARROW = {"float64": "float32", "int64": "int32", "int8": "int32", "int16": "int32", "uint8": "int32"}


def _by_name(name: str) -> Type:
    return _ALL[name]


def to_type(dtype: Any) -> Type:
    """Accept a Type, a numpy dtype or a name ("float32"); raise for anything the device lacks."""
    if isinstance(dtype, Type):
        return dtype
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype).lower()
    name = _NARROW.get(name, name)
    if name not in _ALL:
        raise InvalidParamError(f"dtype {dtype!r} is not supported; use mstype.float32, mstype.float16 "
                                f"or mstype.int32")
    return _ALL[name]


def from_numpy(np_dtype: np.dtype) -> Type:
    return to_type(np_dtype)


def dtype_to_nptype(dtype: Type) -> type:
    return to_type(dtype).np_type


def pytype_to_dtype(py_type: type) -> Type:
    return {float: float32, int: int32, bool: bool_}[py_type]
