"""The discrete Fourier transform along one axis: complex to complex, real to complex (the first
n // 2 + 1 bins) and complex (a Hermitian half spectrum) to real, as numpy.fft / pocketfft define them.

``DFT`` takes attrs ``mode`` ("c2c", "r2c", "c2r"), ``n`` (the transform length: the axis is cut or
zero-padded to it; for "c2r" it is the real output's length), ``axis``, ``inverse`` (the sign of the
exponent: +2 pi i jk / n) and ``norm`` (numpy's "backward", "forward", "ortho": which direction is
scaled by 1/n, or both by 1/sqrt(n)). The multi-dimensional transforms of the front end are one DFT
per axis.

Each block transforms whole lines (an axis walked at stride ``inner``). A line is copied into the
block's float64 complex workspace; a power-of-two length runs the iterative radix-2 Cooley-Tukey
transform, any other length the direct O(n^2) sum; both read a table of exact twiddles
exp(-+2 pi i t / n) (t < n, the index j*k reduced mod n), so every term is rounded once in float64 and
complex64 results match pocketfft's to float32 rounding. Lengths are run-time tiling facts: one kernel
per (mode, direction, norm, dtypes) serves every shape.

No gradient: the device's autodiff differentiates real floats only.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import COMPLEX, check_arity, check_dtype, fail, norm_axis
from .elementwise import no_grad

MODES = ("c2c", "r2c", "c2r")
NORMS = ("backward", "forward", "ortho")
# the complex type of a real one, and back
COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
REAL_OF = {c: r for r, c in COMPLEX_OF.items()}
# complex128 words of workspace per block: the line, the transformed line, the twiddle table
WORK_LINES = 3


def _attrs(sig: OpSignature) -> tuple[str, int, bool, str]:
    mode, n, inverse, norm = sig.attr("mode"), sig.attr("n"), sig.attr("inverse", False), sig.attr("norm", "backward")
    if mode not in MODES:
        raise fail(sig, f"attr mode={mode!r} must be one of {MODES}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise fail(sig, f"attr n={n!r} must be a positive int (the transform length)")
    if not isinstance(inverse, bool):
        raise fail(sig, f"attr inverse={inverse!r} must be a bool")
    if norm not in NORMS:
        raise fail(sig, f"attr norm={norm!r} must be one of {NORMS}")
    return mode, n, inverse, norm


def infer_dft(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    mode, n, _, _ = _attrs(sig)
    x = sig.inputs[0]
    if not x.shape:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    axis = norm_axis(sig, sig.attr("axis", -1), len(x.shape))
    if mode == "r2c":
        dtype = COMPLEX_OF[check_dtype(sig, 0, tuple(COMPLEX_OF), "x")]
        length = n // 2 + 1
    else:
        dtype = check_dtype(sig, 0, COMPLEX, "x")
        dtype = REAL_OF[dtype] if mode == "c2r" else dtype
        length = n
    shape = x.shape[:axis] + (length,) + x.shape[axis + 1:]
    return (TensorDesc(shape, dtype),)


# What the kernel reads at run time: lines (outer x inner), the axis' input and output lengths, the
# transform length, whether it is a power of two, and its log2.
RUNTIME_TILING = ("outer", "inner", "l_in", "l_out", "n", "pow2", "log2n")


def plan_dft(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    mode, n, inverse, norm = _attrs(sig)
    x = sig.inputs[0]
    axis = norm_axis(sig, sig.attr("axis", -1), len(x.shape))
    outer, inner = math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1:])
    lines = outer * inner
    pow2 = n & (n - 1) == 0
    log2n = n.bit_length() - 1
    block_dim = max(1, min(src.MAX_BLOCKS, lines))
    per_line = n * log2n if pow2 else n * n
    cost = KernelCost(vector_ops=lines * per_line * 4, bytes=x.nbytes + outputs[0].nbytes, dtype="float32")
    tiling = dict(outer=outer, inner=inner, l_in=x.shape[axis], l_out=outputs[0].shape[axis], n=n, pow2=int(pow2),
                  log2n=log2n, mode=mode, inverse=inverse, norm=norm)
    return Plan(block_dim, cost, (block_dim * WORK_LINES * n * 16,), tiling, host_blocks=True)


def _scale(norm: str, inverse: bool) -> str:
    """The factor this direction applies (numpy's norm modes), as source over run-time ``n``."""
    if norm == "ortho":
        return "(1.0 / math.sqrt(f64(n)))"
    scaled = (norm == "backward") == inverse
    return "(1.0 / f64(n))" if scaled else "1.0"


def emit_dft(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    t = plan.tiling
    mode, inverse = t["mode"], t["inverse"]
    x_dtype, y_dtype = sig.inputs[0].dtype, outputs[0].dtype
    sign = "1.0" if inverse else "-1.0"
    lines = src.HEADER + src.views(("x", 0, x_dtype), ("y", 1, y_dtype), ("w", 2, "complex128"))
    lines += [f"    n = {t['n']}", f"    inner = {t['inner']}", f"    l_in = {t['l_in']}", f"    l_out = {t['l_out']}",
              f"    pow2 = {t['pow2']}", f"    log2n = {t['log2n']}", f"    scl = {_scale(t['norm'], inverse)}",
              f"    lines = {t['outer']} * inner",
              "    a0 = block_idx * 3 * n", "    b0 = a0 + n", "    w0 = b0 + n",
              "    for t in range(n):",
              f"        w[w0 + t] = complex(math.cos(2.0 * math.pi * t / n), {sign} * math.sin(2.0 * math.pi * t / n))"]
    lines += src.indent(src.split_lines("lines"))
    body = ["o = u // inner", "i = u - o * inner", "xb = o * l_in * inner + i", "yb = o * l_out * inner + i"]
    if mode == "c2r":        # the Hermitian spectrum of a real signal from its first n // 2 + 1 bins
        body += ["half = n // 2 + 1",
                 "for j in range(n):",
                 "    k = j if j < half else n - j",
                 f"    v = complex({src.load(x_dtype, 'x[xb + k * inner]')}) if k < l_in else complex(0.0)",
                 "    w[a0 + j] = v if j < half else v.conjugate()"]
    else:
        body += ["for j in range(n):",
                 f"    w[a0 + j] = complex({src.load(x_dtype, 'x[xb + j * inner]')}) if j < l_in else complex(0.0)"]
    body += ["if pow2 == 1:",
             "    for j in range(n):",          # bit-reversed copy, then log2(n) butterfly passes
             "        r = 0", "        q = j",
             "        for _ in range(log2n):", "            r = (r << 1) | (q & 1)", "            q >>= 1",
             "        w[b0 + r] = w[a0 + j]",
             "    size = 2",
             "    while size <= n:",
             "        hs = size // 2", "        step = n // size",
             "        for s0 in range(0, n, size):",
             "            for k in range(hs):",
             "                tv = w[w0 + k * step] * w[b0 + s0 + k + hs]", "                uv = w[b0 + s0 + k]",
             "                w[b0 + s0 + k] = uv + tv", "                w[b0 + s0 + k + hs] = uv - tv",
             "        size *= 2",
             "else:",
             "    for k in range(l_out):",
             "        acc = complex(0.0)",
             "        for j in range(n):",
             "            acc += w[a0 + j] * w[w0 + (j * k) % n]",
             "        w[b0 + k] = acc",
             "for k in range(l_out):",
             f"    y[yb + k * inner] = {src.store(y_dtype, 'w[b0 + k].real * scl' if mode == 'c2r' else 'w[b0 + k] * scl')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


# The front end is hand-written (frontend/ops/function/fft_func.py, math_ops' FFTWithSize and STFT).
OPS: tuple[OpDef, ...] = (
    OpDef("DFT", "dft", infer_dft, plan_dft, emit_dft, grad=no_grad, runtime_tiling=RUNTIME_TILING),
)
