"""The numba side of the kernel generators: typed pointers, float16/bfloat16 bits, compiling kernel source.

Generators emit Python source text (``src.py``); :func:`compile_source` exec's it with the globals
below into a function that ``numba.cfunc`` compiles. float16 tensors are accessed as uint16 bits and
converted with integer arithmetic (round to nearest even), so the objects never depend on the host's
half-float instructions or on compiler-rt conversion helpers. Imported only on a cache miss.
"""
from __future__ import annotations

import cmath
import math
from typing import Callable

import llvmlite.binding as llvm
import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ascendemu.hal.blas import CBLAS_NO_TRANS, CBLAS_ROW_MAJOR, CBLAS_TRANS, blas_symbol_address
from ascendemu.hal.elf import BLAS_SYMBOLS

from .src import KERNEL_ERROR_MODEL

# numba's pipeline leaves LLVM's SLP vectoriser off; kernels fold rows into src.PARTIALS independent
# accumulators, which it packs into vector instructions (ReduceSum of 4096x1000 rows: 1.8 -> 0.58 ms)
numba.config.SLP_VECTORIZE = 1

# dtype -> the numba type a kernel's pointer reads: float16 and bfloat16 as their uint16 bits
STORAGE = {"float32": types.float32, "float16": types.uint16, "int32": types.int32, "bool": types.uint8,
           "float64": types.float64, "int64": types.int64, "int8": types.int8, "uint8": types.uint8,
           "int16": types.int16, "uint16": types.uint16, "uint32": types.uint32, "uint64": types.uint64,
           "bfloat16": types.uint16, "complex64": types.complex64, "complex128": types.complex128}


def _pointer_intrinsic(nbtype):
    @intrinsic
    def as_pointer(typingctx, addr):
        """Reinterpret a uint64 host address as a typed pointer (LLVM inttoptr)."""
        ptr_type = types.CPointer(nbtype)

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(ptr_type))

        return ptr_type(types.uint64), codegen

    return as_pointer


POINTER = {name: _pointer_intrinsic(t) for name, t in STORAGE.items()}


@intrinsic
def bits_to_f32(typingctx, bits):
    """float32 whose IEEE bits are the low 32 bits of an int64."""
    def codegen(context, builder, signature, args):
        low = builder.trunc(args[0], context.get_value_type(types.int32))
        return builder.bitcast(low, context.get_value_type(types.float32))

    return types.float32(types.int64), codegen


@intrinsic
def f32_to_bits(typingctx, value):
    """IEEE bits of a float32, zero-extended to int64."""
    def codegen(context, builder, signature, args):
        bits = builder.bitcast(args[0], context.get_value_type(types.int32))
        return builder.zext(bits, context.get_value_type(types.int64))

    return types.int64(types.float32), codegen


@intrinsic
def fdiv(typingctx, a, b):
    """IEEE float division (x/0 gives Inf or NaN): numba's ``/`` would raise ZeroDivisionError."""
    if not (isinstance(a, types.Float) and a == b):
        return None

    def codegen(context, builder, signature, args):
        return builder.fdiv(args[0], args[1])

    return a(a, b), codegen


@intrinsic
def sdiv(typingctx, a, b):
    """Integer division truncating toward zero, x/0 = 0 (C semantics, never raises)."""
    if not (a == types.int64 and b == types.int64):
        return None

    def codegen(context, builder, signature, args):
        zero = context.get_constant(types.int64, 0)
        one = context.get_constant(types.int64, 1)
        is_zero = builder.icmp_signed("==", args[1], zero)
        safe = builder.select(is_zero, one, args[1])
        return builder.select(is_zero, zero, builder.sdiv(args[0], safe))

    return types.int64(types.int64, types.int64), codegen


SGEMM_SYMBOL = "scipy_cblas_sgemm"
# numba's in-process JIT resolves a kernel's BLAS calls from the same library the loader uses.
for _name in BLAS_SYMBOLS:
    llvm.add_symbol(_name, blas_symbol_address(_name))
_F32_PTR = types.CPointer(types.float32)


@intrinsic
def sgemm(typingctx, ta, tb, m, n, k, a, ao, lda, b, bo, ldb, c, co, ldc):
    """Row-major float32 ``C[m, n] = op(A) @ op(B)`` (op: transpose when ``ta``/``tb`` is nonzero) with
    A, B, C starting at element offsets ``ao``, ``bo``, ``co`` of the typed pointers: one call of
    OpenBLAS's cblas_sgemm, left undefined in the object for the loader to resolve."""
    i64 = types.int64
    sig = types.void(i64, i64, i64, i64, i64, _F32_PTR, i64, i64, _F32_PTR, i64, i64, _F32_PTR, i64, i64)

    def codegen(context, builder, signature, args):
        ta_, tb_, m_, n_, k_, a_, ao_, lda_, b_, bo_, ldb_, c_, co_, ldc_ = args
        i32, f32 = ir.IntType(32), ir.FloatType()
        ptr = a_.type
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i32, i32, i32, f32, ptr, i32, ptr, i32, f32, ptr, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, SGEMM_SYMBOL)

        def trans(flag):
            return builder.select(builder.icmp_signed("!=", flag, ir.Constant(flag.type, 0)),
                                  ir.Constant(i32, CBLAS_TRANS), ir.Constant(i32, CBLAS_NO_TRANS))

        def int32(value):
            return builder.trunc(value, i32)

        builder.call(fn, [ir.Constant(i32, CBLAS_ROW_MAJOR), trans(ta_), trans(tb_), int32(m_), int32(n_), int32(k_),
                          ir.Constant(f32, 1.0), builder.gep(a_, [ao_]), int32(lda_),
                          builder.gep(b_, [bo_]), int32(ldb_), ir.Constant(f32, 0.0),
                          builder.gep(c_, [co_]), int32(ldc_)])
        return context.get_dummy_value()

    return sig, codegen


@numba.njit(no_cpython_wrapper=True)
def h2f(half):
    """float16 bits -> float32 (exact)."""
    h = np.int64(half)
    bits = (h & 0x7FFF) << 13
    exponent = bits & 0x0F800000
    bits += (127 - 15) << 23
    if exponent == 0x0F800000:          # Inf / NaN
        bits += (128 - 16) << 23
        value = bits_to_f32(bits)
    elif exponent == 0:                 # zero / subnormal: renormalise through a float subtraction
        bits += 1 << 23
        value = bits_to_f32(bits) - bits_to_f32(113 << 23)
    else:
        value = bits_to_f32(bits)
    return bits_to_f32(f32_to_bits(value) | ((h & 0x8000) << 16))


@numba.njit(no_cpython_wrapper=True)
def f2h(value):
    """float32 -> float16 bits, round to nearest even, overflow to Inf, NaN to a quiet NaN."""
    bits = f32_to_bits(np.float32(value))
    sign = (bits >> 16) & 0x8000
    bits &= 0x7FFFFFFF
    if bits >= (127 + 16) << 23:        # too large for float16, Inf or NaN
        out = 0x7E00 if bits > 0x7F800000 else 0x7C00
    elif bits < 113 << 23:              # float16 subnormal or zero: let float addition round
        magic = ((127 - 15) + (23 - 10) + 1) << 23
        out = f32_to_bits(bits_to_f32(bits) + bits_to_f32(magic)) - magic
    else:
        odd = (bits >> 13) & 1
        out = (bits + ((15 - 127) << 23) + 0xFFF + odd) >> 13
    return np.uint16(out | sign)


@numba.njit(no_cpython_wrapper=True)
def bf2f(half):
    """bfloat16 bits -> float32 (exact: bfloat16 is float32's upper half)."""
    return bits_to_f32(np.int64(half) << 16)


@numba.njit(no_cpython_wrapper=True)
def f2bf(value):
    """float32 -> bfloat16 bits, round to nearest even (as ml_dtypes and the device), NaN stays a quiet NaN."""
    bits = f32_to_bits(np.float32(value))
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return np.uint16((bits >> 16) | 0x40)
    return np.uint16((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)


@numba.njit(no_cpython_wrapper=True)
def cdiv(a, b):
    """Complex a / b in float64 (Smith's method, as numpy): x / 0 gives inf or nan, never raises
    (numba's complex ``/`` raises ZeroDivisionError through its runtime)."""
    ar, ai, br, bi = np.float64(a.real), np.float64(a.imag), np.float64(b.real), np.float64(b.imag)
    if abs(br) >= abs(bi):
        if br == 0.0 and bi == 0.0:
            return complex(fdiv(ar, abs(br)), fdiv(ai, abs(bi)))
        rat = bi / br
        scl = 1.0 / (br + bi * rat)
        return complex((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = 1.0 / (bi + br * rat)
    return complex((ar * rat + ai) * scl, (ai * rat - ar) * scl)


@numba.njit(no_cpython_wrapper=True)
def csqrt(z):
    """Principal complex square root in float64 (the branch cut on the negative real axis follows the
    imaginary part's sign, as numpy); numba's cmath.sqrt reaches its runtime."""
    a, b = np.float64(z.real), np.float64(z.imag)
    if a == 0.0 and b == 0.0:
        return complex(0.0, b)
    t = math.sqrt((abs(a) + math.hypot(a, b)) * 0.5)
    if a >= 0.0:
        return complex(t, fdiv(b, 2.0 * t))
    return complex(fdiv(abs(b), 2.0 * t), math.copysign(t, b))


# Control flow kernels repeat, as helpers (src.HEADER says why): numba types each once per process.
# Helpers are called by kernels only, never from Python: no CPython wrapper (~40% of a helper's build,
# paid per process and per argument types).
@numba.njit(error_model=KERNEL_ERROR_MODEL, no_cpython_wrapper=True)
def outside_blocks(block_idx, block_dim):
    """No work for this call: an invalid block count or index."""
    return block_dim <= 0 or block_idx < 0 or block_idx >= block_dim


@numba.njit(error_model=KERNEL_ERROR_MODEL, no_cpython_wrapper=True)
def block_share(total, block_idx, block_dim):
    """(lo, hi): block ``block_idx``'s contiguous share of range(total), ceil(total / block_dim) long."""
    chunk = (total + block_dim - 1) // block_dim
    lo = block_idx * chunk
    return lo, min(total, lo + chunk)


@numba.njit(error_model=KERNEL_ERROR_MODEL, no_cpython_wrapper=True)
def balanced_share(total, block_idx, block_dim):
    """(lo, hi): block ``block_idx``'s share of range(total), the shares' sizes differing by at most one."""
    return block_idx * total // block_dim, (block_idx + 1) * total // block_dim


@numba.njit(error_model=KERNEL_ERROR_MODEL, no_cpython_wrapper=True)
def pick(cond, a, b):
    """``a if cond else b`` (both already evaluated: lowerings pass it pure expressions)."""
    return a if cond else b


@numba.njit(error_model=KERNEL_ERROR_MODEL, no_cpython_wrapper=True)
def ipow(base, exp):
    """Integer ``base ** exp`` in int64 registers by squaring (wrapping, as the store to a narrower type
    does: int8 3 ** 5 is -13, MindSpore's too); a negative exponent gives the real power truncated
    toward zero, as MindSpore's kernel (a cast of std::pow): 1 for base 1, +-1 for base -1, else 0."""
    if exp < 0:
        if base == 1 or (base == -1 and exp % 2 == 0):
            return np.int64(1)
        return np.int64(-1) if base == -1 else np.int64(0)
    result, factor, e = np.int64(1), np.int64(base), exp
    while e > 0:
        if e & 1:
            result = result * factor
        factor = factor * factor
        e >>= 1
    return result


@numba.njit(error_model=KERNEL_ERROR_MODEL, no_cpython_wrapper=True)
def nanmax(acc, value):
    """A maximum fold's step: ``value`` if it beats ``acc`` or is NaN (NaN propagates, as numpy.maximum)."""
    return value if (value > acc or value != value) else acc


@numba.njit(error_model=KERNEL_ERROR_MODEL, no_cpython_wrapper=True)
def nanmin(acc, value):
    """A minimum fold's step: ``value`` if it is below ``acc`` or is NaN."""
    return value if (value < acc or value != value) else acc


# expf by Cephes' method, in float32 registers: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so
# n ln2 is exact), e^r by its degree-7 minimax polynomial, times 2^n built from exponent bits in two
# halves (so results down to the smallest subnormal are reached with one rounding). No call and no
# branch: LLVM vectorises loops over it, which libm's expf prevents (Exp 16M: 1.77x numpy's time ->
# see bench/README.md). Within 1 ulp of the correctly rounded result in the normal range.
EXP_LOG2E = np.float32(1.44269504088896341)
EXP_LN2_HI = np.float32(0.693359375)
EXP_LN2_LO = np.float32(-2.12194440e-4)
EXP_POLY = tuple(np.float32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                                         1.6666665459e-1, 5.0000001201e-1))
EXP_MAX_ARG, EXP_MIN_ARG = np.float32(89.0), np.float32(-104.0)   # beyond them: inf, 0 (the clamp keeps 2^n finite)


@numba.njit(no_cpython_wrapper=True)
def fexp(value):
    """float32 e**value (Inf above ~88.72, 0 below ~-103.97, NaN propagates)."""
    x = np.float32(value)
    xc = min(max(x, EXP_MIN_ARG), EXP_MAX_ARG)
    n = np.floor(xc * EXP_LOG2E + np.float32(0.5))
    r = xc - n * EXP_LN2_HI - n * EXP_LN2_LO
    c0, c1, c2, c3, c4, c5 = EXP_POLY
    p = (((((c0 * r + c1) * r + c2) * r + c3) * r + c4) * r + c5) * (r * r) + r + np.float32(1.0)
    k = np.int64(n)
    half = k >> 1
    y = p * bits_to_f32((half + 127) << 23) * bits_to_f32((k - half + 127) << 23)
    return x if x != x else y


def namespace() -> dict:
    """Globals every generated kernel source may use."""
    ns = {"np": np, "math": math, "cmath": cmath, "h2f": h2f, "f2h": f2h, "bf2f": bf2f, "f2bf": f2bf, "fexp": fexp, "fdiv": fdiv, "sdiv": sdiv, "cdiv": cdiv, "csqrt": csqrt,
          "f32": np.float32, "f64": np.float64, "i64": np.int64, "sgemm": sgemm,
          "outside_blocks": outside_blocks, "block_share": block_share, "balanced_share": balanced_share,
          "pick": pick, "ipow": ipow, "nanmax": nanmax, "nanmin": nanmin}
    ns.update({f"ptr_{name}": fn for name, fn in POINTER.items()})
    return ns


def compile_source(src: str) -> Callable:
    """Exec generated source defining ``kernel`` and return that function.

    The source stays attached as ``__ascendemu_source__`` for debugging and for .info dumps.
    """
    ns = namespace()
    exec(compile(src, "<ascendemu generated kernel>", "exec"), ns)
    fn = ns["kernel"]
    fn.__ascendemu_source__ = src
    return fn
