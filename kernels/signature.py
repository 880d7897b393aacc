"""What a kernel is built for: one op signature (op type, input descs, attributes).

A signature is hashable and JSON-able so that it can name a cache entry and be written to .info.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ml_dtypes  # noqa: F401  (registers numpy's "bfloat16", so np.dtype(desc.dtype) works for every dtype)

from ascendemu.errors import InvalidParamError

__all__ = ["ITEMSIZE", "DTYPES", "TensorDesc", "OpSignature", "jsonable", "attrs_from_json"]

# dtype -> bytes per element: every MindSpore real number type and bool (one byte, 0 or 1, as
# comparisons write it). bfloat16 is stored as its 16 bits (ml_dtypes' numpy type on the host).
ITEMSIZE = {"float32": 4, "float16": 2, "int32": 4, "bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2,
            "int64": 8, "uint32": 4, "uint64": 8, "bfloat16": 2, "float64": 8,
            # complex: (real, imag) pairs of float32 / float64, numpy's and MindSpore's layout
            "complex64": 8, "complex128": 16}
DTYPES = tuple(ITEMSIZE)


def _freeze(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    raise InvalidParamError(f"attribute value {value!r} is not JSON-able; use int, float, bool, str or tuples")


def jsonable(value: Any) -> Any:
    """An attribute value as JSON writes it (tuples become lists); :func:`attrs_from_json` inverts it."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _tuplify(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuplify(v) for v in value)
    return value


def attrs_from_json(d: dict) -> dict[str, Any]:
    """Attributes read back from JSON: lists back to the tuples signatures hold."""
    return {k: _tuplify(v) for k, v in d.items()}


@dataclass(frozen=True)
class TensorDesc:
    shape: tuple[int, ...]
    dtype: str = "float32"

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))
        if self.dtype not in DTYPES:
            raise InvalidParamError(f"dtype {self.dtype!r} is not supported on the device; use one of {DTYPES}")
        if any(s < 0 for s in self.shape):
            raise InvalidParamError(f"shape {self.shape} has a negative dimension")

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        return self.size * ITEMSIZE[self.dtype]

    def to_json(self) -> dict:
        return {"shape": list(self.shape), "dtype": self.dtype}


@dataclass(frozen=True)
class OpSignature:
    """One op instance to build a kernel for; ``attrs`` is a sorted tuple of (name, value)."""

    op: str
    inputs: tuple[TensorDesc, ...]
    attrs: tuple[tuple[str, Any], ...] = field(default=())

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(self.inputs))
        attrs = self.attrs.items() if isinstance(self.attrs, dict) else self.attrs
        object.__setattr__(self, "attrs", tuple(sorted((str(k), _freeze(v)) for k, v in attrs)))

    @classmethod
    def make(cls, op: str, inputs, **attrs) -> "OpSignature":
        return cls(op, tuple(i if isinstance(i, TensorDesc) else TensorDesc(*i) for i in inputs), attrs)

    def attr(self, name: str, default: Any = None) -> Any:
        for key, value in self.attrs:
            if key == name:
                return value
        return default

    def to_json(self) -> dict:
        return {"op": self.op, "inputs": [d.to_json() for d in self.inputs],
                "attrs": {k: v for k, v in self.attrs}}
