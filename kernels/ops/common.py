"""Argument validation shared by the op families' ``infer`` rules (pure Python, no numba).

Every rejection is an InvalidParamError naming the op and the offending input or attribute (an
InvalidValueError, MindSpore's ValueError, or an InvalidTypeError for a dtype or type: its TypeError), so a user
sees which op of their network is wrong and why.
"""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError, check_int
from ascendemu.kernels.signature import OpSignature

# dtype sets an op may accept. FLOAT and ANY are what the families whose kernels compute in float32
# registers serve (matmul, conv, norm, pool, ...); the others name every dtype of a kind, for the
# families written dtype-generic (elementwise, reduce, the movement and index ops).
FLOAT = ("float32", "float16")
ANY = ("float32", "float16", "int32")
FLOATS = ("float32", "float16", "bfloat16", "float64")              # every float type
INTS = ("int32", "int64", "int8", "int16", "uint8", "uint16", "uint32", "uint64")
NUMBER = FLOATS + INTS                                              # every number type
ALL = NUMBER + ("bool",)                                            # every device dtype
COMPLEX = ("complex64", "complex128")  # device dtypes too, but served only by the ops that list them
INDEX = ("int32", "int64")          # index and label operands (MindSpore's Python ints are int64)


def fail(sig: OpSignature, what: str, error: type[InvalidParamError] = InvalidValueError) -> InvalidParamError:
    """The refusal of ``sig``: by default a value MindSpore refuses with ValueError (a shape, an axis, a
    size, a range); ``InvalidTypeError`` where it raises TypeError (a dtype, an attribute's type)."""
    return error(f"{sig.op}: {what}")


def check_arity(sig: OpSignature, count: int | None, names: tuple[str, ...] = ()) -> None:
    n = len(sig.inputs)
    if count is None:
        if n < 1:
            raise fail(sig, "needs at least one input, got none", InvalidTypeError)
        return
    if n != count:
        label = f" ({', '.join(names)})" if names else ""
        raise fail(sig, f"takes {count} input(s){label}, got {n}", InvalidTypeError)


def check_dtype(sig: OpSignature, index: int, allowed: tuple[str, ...], name: str = "") -> str:
    dtype = sig.inputs[index].dtype
    if dtype not in allowed:
        label = f" ({name})" if name else ""
        raise fail(sig, f"input {index}{label} has dtype {dtype}; supported dtypes are {allowed}", InvalidTypeError)
    return dtype


def same_dtype(sig: OpSignature, allowed: tuple[str, ...]) -> str:
    dtype = check_dtype(sig, 0, allowed)
    for i, desc in enumerate(sig.inputs[1:], start=1):
        if desc.dtype != dtype:
            raise fail(sig, f"input {i} has dtype {desc.dtype} but input 0 has {dtype}; "
                            f"cast the inputs to one dtype first", InvalidTypeError)
    return dtype


def check_rank(sig: OpSignature, index: int, ranks: tuple[int, ...] | int, name: str = "") -> tuple[int, ...]:
    shape = sig.inputs[index].shape
    allowed = (ranks,) if isinstance(ranks, int) else ranks
    if len(shape) not in allowed:
        label = f" ({name})" if name else ""
        want = " or ".join(str(r) for r in allowed)
        raise fail(sig, f"input {index}{label} must have rank {want}, got shape {shape}")
    return shape


def norm_axis(sig: OpSignature, axis: Any, rank: int, attr: str = "axis") -> int:
    check_int(axis, f"{sig.op}: attr {attr}", error=InvalidTypeError)
    if not -rank <= axis < max(rank, 1):
        raise fail(sig, f"attr {attr}={axis} is out of range for rank {rank} (valid: {-rank}..{rank - 1})")
    return axis % rank if rank else 0


def broadcast_shapes(sig: OpSignature, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        size = 1
        for i, s in enumerate(shapes):
            dim = s[d - rank + len(s)] if d - rank + len(s) >= 0 else 1
            if dim != 1:
                if size not in (1, dim):
                    raise fail(sig, f"input {i} shape {s} does not broadcast with {shapes[:i]} "
                                    f"(dimension {d} of the broadcast shape)")
                size = dim
        out.append(size)
    return tuple(out)


def int_tuple(sig: OpSignature, name: str, value: Any, lengths: tuple[int, ...]) -> tuple[int, ...]:
    """An int or int tuple attribute; a single int is repeated to the first allowed length."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * lengths[0]
    if isinstance(value, tuple) and len(value) in lengths and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return value
    counts = " or ".join(map(str, lengths))
    raise fail(sig, f"attr {name}={value!r} must be an int or a tuple of {counts} ints", InvalidTypeError)


def hw_pair(sig: OpSignature, name: str, value: Any, minimum: int) -> tuple[int, int]:
    """(h, w) from an int, a pair or MindSpore's 4-tuple (1, 1, h, w) / (n, c, h, w) form."""
    t = int_tuple(sig, name, value, (2, 4))
    pair = t[2:] if len(t) == 4 else t
    if any(v < minimum for v in pair):
        raise fail(sig, f"attr {name}={value!r} must be >= {minimum}")
    return pair


def check_format(sig: OpSignature, allowed: tuple[str, ...] = ("NCHW",)) -> str:
    fmt = sig.attr("data_format", sig.attr("format", allowed[0]))
    if fmt not in allowed:
        raise fail(sig, f"attr data_format={fmt!r} is not supported; use one of {allowed}")
    return fmt


def check_bool(sig: OpSignature, name: str) -> bool:
    value = sig.attr(name, False)
    if not isinstance(value, bool):
        raise fail(sig, f"attr {name}={value!r} must be a bool", InvalidTypeError)
    return value


def check_epsilon(sig: OpSignature, default: float) -> float:
    eps = sig.attr("epsilon", default)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
        raise fail(sig, f"attr epsilon={eps!r} must be a number >= 0")
    return float(eps)
