"""Random ops: Dropout, from a counter-based generator (Philox-4x32-10, Salmon et al., SC'11).

A counter-based generator has no sequential state to carry between elements or blocks: the random
word of element ``i`` is ``philox(counter=(i mod 2^32, i div 2^32, offset, 0), key=(seed0, seed1))``,
so the mask is the same for every block split, tiling and jit level, and a numpy reference can
recompute it. The generator state is a 3-element int32 tensor ``(seed0, seed1, offset)`` in device
memory, an input of the kernel like any other: the front end advances ``offset`` by one after each
use (a graph state update), so every training step draws a new mask and a seeded run draws the same
sequence of masks every time.

Element ``i`` is kept when its first Philox word is below ``floor(keep_prob * 2^32)`` (an exact
integer comparison: P(keep) = threshold / 2^32). Kept values are scaled by ``1 / keep_prob`` as a
float32 constant: ``y = x * mask * scale`` and ``mask`` (1.0 kept, 0.0 dropped, in x's dtype) are the
kernel's outputs, computed in float32 registers.

The module also holds MindSpore's host generator in numpy (``host_words``, ``host_uniform``,
``host_normal``, ``host_truncated_normal``): the initializers' Philox stream and sampling formulas,
reproduced bit for bit from MindSpore 2.10 (tests/test_seed_parity.py).
"""
from __future__ import annotations

import math

import numpy as np

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOAT, check_arity, check_dtype, check_rank, fail

# Philox-4x32-10: round multipliers and key increments (Weyl sequence), 10 rounds
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
PHILOX_ROUNDS = 10
# AI-core vector element-ops per element: the compare, two multiplies and the mask select. On the
# 910 the random bits are not AI-core work: MindSpore's DropoutGenMask is an AI CPU kernel
# (plugin/device/ascend/kernel/aicpu/aicpu_ops/drop_out_gen_mask_kernels.h) that depends only on
# the seed, so it runs beside the AI cores; the AI cores pay DropoutDoMask, priced here.
DROPOUT_OPS_PER_ELEMENT = 4
STATE = TensorDesc((3,), "int32")      # (seed0, seed1, offset)


# MindSpore's host generator (the initializers' ``_random_uniform``/``_random_normal``/
# ``_truncated_normal``, probed black-box from MindSpore 2.10; tests/fixtures/seed_parity.json): a
# 64-bit seed s is both the Philox key (s lo, s hi) and the high half of the counter
# (block lo, block hi, s lo, s hi); the stream is the blocks' four words in order. The distributions'
# parameters arrive as float32 (the C++ signature), the arithmetic is double, rounded once to float32.
HOST_PI = 3.1415925025939941            # Box-Muller's 2*pi uses the float literal 3.1415925f
HOST_SQRT2 = 1.4142135381698608         # the truncated normal's sqrt(2) is the float literal 1.4142135f
HOST_NORMAL_EPSILON = float(np.float32(1e-7))   # Box-Muller's u1 = 0 is raised to 1e-7f (no infinity)
W32 = 0xFFFFFFFF


def philox_numpy(counters: list[np.ndarray], key: tuple[int, int]) -> list[np.ndarray]:
    """Philox-4x32-10 of uint64 arrays holding 32-bit words (the kernel's rounds, vectorised)."""
    c = [np.asarray(w, np.uint64) for w in counters]
    k0, k1, w32, s32 = np.uint64(key[0]), np.uint64(key[1]), np.uint64(W32), np.uint64(32)
    for _ in range(PHILOX_ROUNDS):
        p0, p1 = np.uint64(PHILOX_M0) * c[0], np.uint64(PHILOX_M1) * c[2]
        c = [(p1 >> s32) ^ c[1] ^ k0, p1 & w32, (p0 >> s32) ^ c[3] ^ k1, p0 & w32]
        k0, k1 = (k0 + np.uint64(PHILOX_W0)) & w32, (k1 + np.uint64(PHILOX_W1)) & w32
    return c


def host_words(seed: int, n: int) -> np.ndarray:
    """The first ``n`` 32-bit words (as uint64) of MindSpore's host Philox stream of ``seed``."""
    seed &= (1 << 64) - 1
    block = np.arange((n + 3) // 4, dtype=np.uint64)
    lo, hi = seed & W32, seed >> 32
    words = philox_numpy([block & np.uint64(W32), block >> np.uint64(32),
                          np.full_like(block, lo), np.full_like(block, hi)], (lo, hi))
    return np.stack(words, axis=1).ravel()[:n]


def host_uniform(seed: int, shape: tuple[int, ...], a: float, b: float) -> np.ndarray:
    """U[a, b) as MindSpore's host generator draws it: ``a + word * 2^-32 * (b - a)`` in double,
    rounded once to float32."""
    n = int(np.prod(shape, dtype=np.int64))
    a, b = _f32(a), _f32(b)
    u = host_words(seed, n) * 2.0 ** -32
    return (u * (b - a) + a).astype(np.float32).reshape(shape)


def _f32(value: float) -> float:
    """A parameter as the C++ generator receives it: rounded to float32."""
    return float(np.float32(value))


def _mantissa_uniform(words: np.ndarray) -> np.ndarray:
    """[0, 1) from a word's low 23 bits (1.m - 1, exact in float32), as double."""
    bits = (words & np.uint64(0x7FFFFF)) | np.uint64(0x3F800000)
    return bits.astype(np.uint32).view(np.float32).astype(np.float64) - 1.0


def host_standard_normal(seed: int, n: int) -> np.ndarray:
    """N(0, 1) in double by Box-Muller over word pairs: r = sqrt(-2 ln u1), r*cos(2*pi*u2) then
    r*sin(2*pi*u2) (u1 raised to 1e-7); an odd count drops the last sine."""
    pairs = (n + 1) // 2
    words = host_words(seed, 2 * pairs)
    u1, u2 = _mantissa_uniform(words[0::2]), _mantissa_uniform(words[1::2])
    radius = np.sqrt(-2.0 * np.log(np.maximum(u1, HOST_NORMAL_EPSILON)))
    angle = 2.0 * HOST_PI * u2
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1).ravel()[:n]


def host_normal(seed: int, shape: tuple[int, ...], mean: float, sigma: float) -> np.ndarray:
    """N(mean, sigma^2): ``mean + sigma * z`` in double, rounded once to float32."""
    n = int(np.prod(shape, dtype=np.int64))
    return (host_standard_normal(seed, n) * _f32(sigma) + _f32(mean)).astype(np.float32).reshape(shape)


_erf = np.frompyfunc(math.erf, 1, 1)
# Newton steps after Giles' ~1e-7 start: quadratic convergence reaches double precision in two; one spare
ERFINV_NEWTON_STEPS = 3


def erfinv(p: np.ndarray) -> np.ndarray:
    """The inverse error function in double: Giles' single-precision approximation (W. Giles,
    "Approximating the erfinv function", GPU Computing Gems, 2011), then Newton steps on math.erf."""
    p = np.asarray(p, np.float64)
    w = -np.log((1.0 - p) * (1.0 + p))
    small = w < 5.0
    ws = w - 2.5
    x_small = ((((((((2.81022636e-08 * ws + 3.43273939e-07) * ws - 3.5233877e-06) * ws - 4.39150654e-06) * ws
                   + 0.00021858087) * ws - 0.00125372503) * ws - 0.00417768164) * ws + 0.246640727) * ws
               + 1.50140941)
    wl = np.sqrt(np.maximum(w, 5.0)) - 3.0
    x_large = ((((((((-0.000200214257 * wl + 0.000100950558) * wl + 0.00134934322) * wl - 0.00367342844) * wl
                   + 0.00573950773) * wl - 0.0076224613) * wl + 0.00943887047) * wl + 1.00167406) * wl
               + 2.83297682)
    x = np.where(small, x_small, x_large) * p
    for _ in range(ERFINV_NEWTON_STEPS):
        x = x - (_erf(x).astype(np.float64) - p) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    return x


def host_truncated_normal(seed: int, shape: tuple[int, ...], a: float, b: float, mean: float,
                          sigma: float) -> np.ndarray:
    """N(mean, sigma^2) truncated to [a, b] by inverting the CDF (as torch's ``trunc_normal_``):
    p uniform in [erf(alpha), erf(beta)] (alpha, beta: the bounds standardised over sqrt(2)),
    x = mean + sigma * sqrt(2) * erfinv(p), clipped to [a, b]; double, rounded once to float32."""
    n = int(np.prod(shape, dtype=np.int64))
    a, b, mean, sigma = _f32(a), _f32(b), _f32(mean), _f32(sigma)
    lo = 0.5 * (1.0 + math.erf((a - mean) / sigma / HOST_SQRT2))
    hi = 0.5 * (1.0 + math.erf((b - mean) / sigma / HOST_SQRT2))
    p = host_words(seed, n) * 2.0 ** -32 * ((2.0 * hi - 1.0) - (2.0 * lo - 1.0)) + (2.0 * lo - 1.0)
    x = erfinv(p) * sigma * HOST_SQRT2 + mean
    return np.clip(x, a, b).astype(np.float32).reshape(shape)


def keep_prob(sig: OpSignature) -> float:
    value = sig.attr("keep_prob", 0.5)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value <= 1.0:
        raise fail(sig, f"attr keep_prob={value!r} must be a number in (0, 1]")
    return float(value)


def keep_threshold(keep: float) -> int:
    """Elements whose first Philox word is below this are kept (2^32 when keep_prob is 1)."""
    return min(1 << 32, int(keep * (1 << 32)))


def infer_dropout(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("x", "state"))
    dtype = check_dtype(sig, 0, FLOAT, "x")
    check_dtype(sig, 1, ("int32",), "state")
    if check_rank(sig, 1, 1, "state") != STATE.shape:
        raise fail(sig, f"input 1 (state) must have shape {STATE.shape} (seed0, seed1, offset), "
                        f"got {sig.inputs[1].shape}")
    x = sig.inputs[0].shape
    if not x:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar; reshape it to (1,)")
    keep_prob(sig)
    return (TensorDesc(x, dtype), TensorDesc(x, dtype))


def plan_dropout(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    n = outputs[0].size
    moved = sig.inputs[0].nbytes + STATE.nbytes + 2 * outputs[0].nbytes
    return Plan(src.elementwise_blocks(n),
                KernelCost(vector_ops=n * DROPOUT_OPS_PER_ELEMENT, bytes=moved, dtype=outputs[0].dtype))


def emit_dropout(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Every value is a uint64 holding a 32-bit word (numba would turn uint64 mixed with int64 into
    float64, so every constant is a np.uint64 too)."""
    dtype = sig.inputs[0].dtype
    keep = keep_prob(sig)
    lines = src.HEADER + src.views(("x", 0, dtype), ("st", 1, "int32"), ("y", 2, dtype), ("m", 3, dtype))
    lines += src.indent(src.split_lines(str(outputs[0].size)))
    lines += src.indent([
        "w32 = np.uint64(0xFFFFFFFF)",
        "s32 = np.uint64(32)",
        "seed0 = np.uint64(i64(st[0]) & i64(0xFFFFFFFF))",
        "seed1 = np.uint64(i64(st[1]) & i64(0xFFFFFFFF))",
        "offset = np.uint64(i64(st[2]) & i64(0xFFFFFFFF))",
        f"threshold = np.uint64({keep_threshold(keep)})",
        f"scale = f32({1.0 / keep!r})",
        "for i in range(lo, hi):",
        "    c0 = np.uint64(i) & w32",
        "    c1 = np.uint64(i) >> s32",
        "    c2 = offset",
        "    c3 = np.uint64(0)",
        "    k0 = seed0",
        "    k1 = seed1",
        f"    for r in range({PHILOX_ROUNDS}):",
        f"        p0 = np.uint64({PHILOX_M0}) * c0",
        f"        p1 = np.uint64({PHILOX_M1}) * c2",
        "        c0, c1, c2, c3 = (p1 >> s32) ^ c1 ^ k0, p1 & w32, (p0 >> s32) ^ c3 ^ k1, p0 & w32",
        f"        k0 = (k0 + np.uint64({PHILOX_W0})) & w32",
        f"        k1 = (k1 + np.uint64({PHILOX_W1})) & w32",
        "    mk = f32(1.0) if c0 < threshold else f32(0.0)",
        f"    v = {src.load(dtype, 'x[i]')}",
        f"    y[i] = {src.store(dtype, 'v * mk * scale')}",
        f"    m[i] = {src.store(dtype, 'mk')}",
    ])
    return src.finish(lines)


def grad_dropout(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    """dx = dy * mask * (1 / keep_prob), the forward's own float32 scale; the mask is a random draw,
    not a function of x, so its gradient does not flow, and the state has none."""
    dy = c.douts[0]
    if dy is None:
        return (None, None)
    dtype = b.desc(dy).dtype
    scale = b.scalar(1.0 / keep_prob(c.sig), dtype)
    return (b.op("Mul", b.op("Mul", dy, c.outputs[1]), scale), None)


OPS: tuple[OpDef, ...] = (
    OpDef("Dropout", "dropout", infer_dropout, plan_dropout, emit_dropout, grad=grad_dropout,
          frontend=Exposure(("Dropout",), ("dropout",))),
)
