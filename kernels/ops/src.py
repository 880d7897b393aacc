"""Source-text building blocks of the kernel generators (pure Python: no numba).

A kernel is Python source specialised to one signature (shapes, strides and attributes become
literals) under the uniform ABI ``kernel(args, block_idx, block_dim)``; ``ascendemu.kernels.ops.nb``
compiles it with numba on a cache miss. Kernels index raw typed pointers (``ptr_<dtype>(args[i])``)
rather than arrays: no negative-index wrap-around code in the loops, which keeps them vectorisable
(a 4-row matmul runs ~10x faster than over carrays). float16 and bfloat16 are stored as uint16 bits
and converted with ``h2f``/``f2h`` and ``bf2f``/``f2bf`` (see nb.py).
"""
from __future__ import annotations

import re

__all__ = ["KERNEL_ERROR_MODEL", "PARTIALS", "MIN_ELEMENTS_PER_BLOCK", "MAX_BLOCKS", "HEADER", "TILING_POINTER", "RuntimeInt", "view",
           "views", "tiling_offset", "load", "store", "elementwise_blocks", "split_lines", "balanced_split_lines", "indent", "finish",
           "with_tiling"]

# Kernels cannot raise: float division and int32 Div use IEEE / guarded intrinsics, and numpy's error
# model turns a division by zero into inf/nan (as on the device) instead of a Python exception, which
# would need numba's runtime helpers (absent from the loader's allowlist) at load time. Kernels and the
# njit helpers they call (nb.py) compile with it.
KERNEL_ERROR_MODEL = "numpy"

# Independent accumulators of a fold along a row (sums, maxima): they break the add latency chain, and
# LLVM's SLP vectoriser packs them into vector registers.
PARTIALS = 8
# Elementwise work split: at least this many elements per block, at most this many blocks.
MIN_ELEMENTS_PER_BLOCK = 64 * 1024
MAX_BLOCKS = 32

# First lines of every generated kernel: the ABI signature, and no work for an invalid block index.
# Control flow a kernel repeats (this test, a block's share, a NaN-propagating fold) is an njit helper of
# nb.py: numba types and lowers a helper once per process, a kernel's own ``or`` chains and conditional
# expressions once per kernel (~10 ms each; LLVM inlines the helper back, so the code computes the same).
HEADER = ["def kernel(args, block_idx, block_dim):",
          "    if outside_blocks(block_idx, block_dim):",
          "        return"]


# The name a dynamic-shape kernel binds its tiling data to (int64 values, one per runtime tiling fact).
TILING_POINTER = "tiling"


class RuntimeInt:
    """An integer a dynamic-shape kernel reads from its tiling data at run time, standing in for the
    literal a generator would otherwise bake in. Generators format it into source and combine it with
    ``+ - * // %`` (the result is source text again), so one generator writes both kinds of kernel;
    a generator that branches on such a value (``if``, ``min``, ``bool``) fails loudly instead of
    silently baking one signature's choice into a kernel that serves many."""

    __slots__ = ("expr",)

    def __init__(self, expr: str):
        self.expr = expr

    def __str__(self) -> str:
        return self.expr

    def __format__(self, spec: str) -> str:     # f-strings write the expression
        return self.expr

    def _op(self, other, symbol: str, swap: bool = False) -> "RuntimeInt":
        if not isinstance(other, (int, RuntimeInt)) or isinstance(other, bool):
            return NotImplemented
        a, b = (other, self) if swap else (self, other)
        return RuntimeInt(f"({a} {symbol} {b})")

    def __add__(self, other): return self._op(other, "+")
    def __radd__(self, other): return self._op(other, "+", True)
    def __sub__(self, other): return self._op(other, "-")
    def __rsub__(self, other): return self._op(other, "-", True)
    def __mul__(self, other): return self._op(other, "*")
    def __rmul__(self, other): return self._op(other, "*", True)
    def __floordiv__(self, other): return self._op(other, "//")
    def __rfloordiv__(self, other): return self._op(other, "//", True)
    def __mod__(self, other): return self._op(other, "%")
    def __rmod__(self, other): return self._op(other, "%", True)
    def __neg__(self): return RuntimeInt(f"(-{self})")

    def _static_only(self, *_):
        raise TypeError(f"runtime tiling value {self.expr} is unknown when the kernel is generated; make "
                        f"the fact this needs (a branch, a comparison, a Python number) a static tiling fact")

    __bool__ = __index__ = __int__ = __float__ = __lt__ = __le__ = __gt__ = __ge__ = _static_only


def with_tiling(source: str, names: tuple[str, ...], arg: int) -> str:
    """``source`` (a kernel whose runtime tiling values are named ``names``) binding each name to its
    int64 in the tiling data, whose address is kernel argument ``arg`` (after the workspaces: the
    dynamic-shape ABI). Bound once at the top, as locals, so no store through an output pointer can
    make LLVM reload them inside a loop. A name the source never uses is not bound: numba's cost grows
    with every line it types (a kernel reading a tuple fact by index names none of its values)."""
    lines = source.split("\n")
    head = len(HEADER)
    assert lines[:head] == HEADER, "kernel source must start with src.HEADER"
    used = set(re.findall(r"\w+", "\n".join(lines[head:])))
    bind = ["    " + view(TILING_POINTER, arg, "int64")]
    bind += [f"    {name} = {TILING_POINTER}[{i}]" for i, name in enumerate(names) if name in used]
    return "\n".join(lines[:head] + bind + lines[head:])


def tiling_offset(tiling: dict, runtime: tuple[str, ...], name: str) -> int:
    """Index in a dynamic-shape kernel's tiling data of runtime fact ``name``'s first value (the facts
    ``runtime`` lists, flat, in order: what :func:`with_tiling` binds), so a kernel can index a tuple
    fact with a run-time index (``tiling[offset + i]``) instead of naming each of its values."""
    def count(value) -> int:
        return sum(count(v) for v in value) if isinstance(value, tuple) else 1
    return sum(count(tiling[fact]) for fact in runtime[:runtime.index(name)])


def view(name: str, arg: int, dtype: str) -> str:
    """Source line binding ``name`` to a typed pointer to kernel argument ``arg``."""
    return f"{name} = ptr_{dtype}(args[{arg}])"


def views(*specs: tuple[str, int, str]) -> list[str]:
    """Kernel-body lines binding typed pointers: one (name, argument index, dtype) per spec."""
    return ["    " + view(*spec) for spec in specs]


# dtypes read into float registers as they are (the others: 16-bit floats through h2f/bf2f, ints and
# bool as int64)
_NATIVE_FLOATS = ("float32", "float64", "complex64", "complex128")


def load(dtype: str, expr: str) -> str:
    """Source expression reading element ``expr`` as a compute value: float32 for float32, float16
    and bfloat16, float64 for float64, int64 for the integer types and bool (uint64 wraps)."""
    if dtype == "float16":
        return f"h2f({expr})"
    if dtype == "bfloat16":
        return f"bf2f({expr})"
    if dtype in _NATIVE_FLOATS:
        return expr
    return f"i64({expr})"


def store(dtype: str, value: str) -> str:
    """Source expression converting a compute value to the storage type of ``dtype``. float16 goes
    through float32 explicitly: a float64 value (statistics accumulate in float64) would otherwise
    compile a float64 specialisation of ``f2h`` that calls numba's runtime, which no kernel may link."""
    if dtype == "float16":
        return f"f2h(f32({value}))"
    if dtype == "bfloat16":
        return f"f2bf(f32({value}))"
    if dtype == "float32":
        return f"f32({value})"
    if dtype == "float64":
        return f"f64({value})"
    if dtype in ("complex64", "complex128"):
        return f"np.{dtype}({value})"
    if dtype == "bool":
        return f"np.uint8({value} != 0)"
    if dtype == "int32":
        return value
    return f"np.{dtype}({value})"


def elementwise_blocks(n: int) -> int:
    """Block count for ``n`` independent elements: >= MIN_ELEMENTS_PER_BLOCK each, <= MAX_BLOCKS."""
    return max(1, min(MAX_BLOCKS, n // MIN_ELEMENTS_PER_BLOCK))


def split_lines(total: int | str) -> list[str]:
    """Source lines computing ``lo, hi``: this block's contiguous share of range(total)
    (``nb.block_share``: ceil(total / block_dim) each, the last block's cut short)."""
    return [f"lo, hi = block_share({total}, block_idx, block_dim)"]


def balanced_split_lines(total: int | str) -> list[str]:
    """Source lines computing ``lo, hi``: this block's share of range(total), sizes differing by at
    most one, so every block has work when total >= block_dim (few large units: BLAS tiles; ``nb.balanced_share``)."""
    return [f"lo, hi = balanced_share({total}, block_idx, block_dim)"]


def indent(lines: list[str], depth: int = 1) -> list[str]:
    return ["    " * depth + line for line in lines]


def finish(lines: list[str]) -> str:
    """The kernel source of ``lines``."""
    return "\n".join(lines) + "\n"
