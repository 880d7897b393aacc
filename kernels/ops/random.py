"""Random ops: Dropout, from a counter-based generator (Philox-4x32-10, Salmon et al., SC'11), and
MindSpore's CPU samplers StandardNormal, UniformReal, UniformInt, RandomChoiceWithMask and RandomShuffle,
bit for bit (see below).

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

StandardNormal, UniformReal and UniformInt draw MindSpore 2.10 CPU's very numbers (its
``random_cpu_kernel.cc``): the op's seed pair is scrambled into one 64-bit seed by one Philox-4x32-10
block (``op_seed``, MindSpore's ``random::GetSeed``), which seeds libstdc++'s engines: UniformReal and
UniformInt draw from ``std::mt19937`` (``uniform_real_distribution<double>``: two words per value;
``uniform_int_distribution``: the downscaling rejection method), StandardNormal from
``std::default_random_engine`` (minstd_rand0) through ``normal_distribution<float>`` (Marsaglia's polar
method in float32 with libm's logf, a fresh distribution per launch, so an odd count drops its spare
value). The engines
are sequential, so these kernels run as one block; the engine's state is an int64 tensor in device
memory (``STATE_WORDS``), an input of the kernel whose updated copy is its last output: the front end
assigns it back (a graph state update), so each call continues the stream, as MindSpore's kernel does.
RandomChoiceWithMask and RandomShuffle shuffle with GCC 10's ``std::shuffle`` over minstd_rand0.
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
# The rounds as kernel source, inside a loop over elements: counters c0..c3 and key k0/k1 in, counters
# out (philox_numpy's arithmetic; Dropout's and Bernoulli's kernels both emit it)
PHILOX_ROUND_LINES = (
    f"    for r in range({PHILOX_ROUNDS}):",
    f"        p0 = np.uint64({PHILOX_M0}) * c0",
    f"        p1 = np.uint64({PHILOX_M1}) * c2",
    "        c0, c1, c2, c3 = (p1 >> s32) ^ c1 ^ k0, p1 & w32, (p0 >> s32) ^ c3 ^ k1, p0 & w32",
    f"        k0 = (k0 + np.uint64({PHILOX_W0})) & w32",
    f"        k1 = (k1 + np.uint64({PHILOX_W1})) & w32",
)
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
                KernelCost(vector_ops=n * DROPOUT_OPS_PER_ELEMENT, bytes=moved, dtype=outputs[0].dtype),
                tiling={"n": n, "keep_prob": keep_prob(sig)})


def emit_dropout(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Every value is a uint64 holding a 32-bit word (numba would turn uint64 mixed with int64 into
    float64, so every constant is a np.uint64 too). The element count is tiling data, keep_prob is
    compiled in (the threshold and scale constants)."""
    dtype = sig.inputs[0].dtype
    keep = plan.tiling["keep_prob"]
    lines = src.HEADER + src.views(("x", 0, dtype), ("st", 1, "int32"), ("y", 2, dtype), ("m", 3, dtype))
    lines += src.indent(src.split_lines(plan.tiling["n"]))
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
        *PHILOX_ROUND_LINES,
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


# --- MindSpore's CPU samplers: libstdc++ engines seeded by GetSeed ---------------------------------

# random::GetSeed's Philox key, scrambling (global seed, op seed) into the engines' seed
SEED_MIX_KEY = (0x3EC8F720, 0x02461E29)
MT_N, MT_M = 624, 397                               # std::mt19937: state words, twist offset
MT_MATRIX_A, MT_UPPER, MT_LOWER = 0x9908B0DF, 0x80000000, 0x7FFFFFFF
MINSTD_A, MINSTD_M = 16807, 2147483647              # std::minstd_rand0 (libstdc++'s default_random_engine)
# the engine behind each sampler, and its state as int64 words: mt19937's 624 words and its position;
# minstd's one value
ENGINE = {"StandardNormal": "minstd", "UniformReal": "mt19937", "UniformInt": "mt19937",
          "RandomChoiceWithMask": "minstd", "RandomShuffle": "minstd", "Multinomial": "minstd",
          "StandardLaplace": "minstd"}
STATE_WORDS = {"minstd": 1, "mt19937": MT_N + 1}
# element-ops per output value (the engine steps and the distribution's arithmetic), for the cost model
SAMPLER_OPS_PER_ELEMENT = {"StandardNormal": 24, "UniformReal": 16, "UniformInt": 10, "RandomChoiceWithMask": 8,
                           "RandomShuffle": 1, "StandardLaplace": 20}
# minstd_rand0's range max - min (values 1 .. 2^31 - 2), which uniform_int_distribution downscales
MINSTD_RANGE = MINSTD_M - 3


def op_seed(seed: int, seed2: int) -> int:
    """MindSpore's ``random::GetSeed(seed, seed2)``: the first two words of the Philox block of counter
    (seed lo, seed hi, seed2 lo, seed2 hi) under a fixed key. (0, 0) is MindSpore's "random": the
    front end never passes it."""
    words = philox_numpy([np.uint64(seed & W32), np.uint64(seed >> 32 & W32), np.uint64(seed2 & W32),
                          np.uint64(seed2 >> 32 & W32)], SEED_MIX_KEY)
    return (int(words[1]) << 32) | int(words[0])


def engine_state(op: str, seed: int, seed2: int) -> np.ndarray:
    """The int64 state of ``op``'s engine as MindSpore's kernel seeds it (``engine.seed(GetSeed(...))``:
    mt19937 takes the seed's low 32 bits, minstd_rand0 the seed mod 2^31 - 1, 0 becoming 1)."""
    mixed = op_seed(seed, seed2)
    if ENGINE[op] == "minstd":
        return np.array([mixed % MINSTD_M or 1], np.int64)
    words = [mixed & W32]
    for i in range(1, MT_N):
        words.append((1812433253 * (words[-1] ^ (words[-1] >> 30)) + i) & W32)
    return np.array(words + [MT_N], np.int64)        # position MT_N: the first draw twists


def sampler_shape(sig: OpSignature) -> tuple[int, ...]:
    shape = sig.attr("shape")
    if not isinstance(shape, tuple) or any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in shape):
        raise fail(sig, f"attr shape={shape!r} must be a tuple of ints >= 0")
    return shape


def infer_sampler(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(state) -> (values, new state); UniformInt also reads its int32 scalar bounds (minval, maxval)."""
    words = STATE_WORDS[ENGINE[sig.op]]
    if sig.op == "UniformInt":
        check_arity(sig, 3, ("state", "minval", "maxval"))
        for k, name in ((1, "minval"), (2, "maxval")):
            check_dtype(sig, k, ("int32",), name)
            if sig.inputs[k].size != 1:
                raise fail(sig, f"input {k} ({name}) must be one value, got shape {sig.inputs[k].shape}")
    else:
        check_arity(sig, 1, ("state",))
    check_dtype(sig, 0, ("int64",), "state")
    if sig.inputs[0].shape != (words,):
        raise fail(sig, f"input 0 (state) must have shape ({words},), got {sig.inputs[0].shape}")
    dtype = "int32" if sig.op == "UniformInt" else "float32"
    return (TensorDesc(sampler_shape(sig), dtype), TensorDesc((words,), "int64"))


def plan_sampler(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One block: the engine is sequential (as MindSpore's CPU kernel runs it)."""
    n = outputs[0].size
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    return Plan(1, KernelCost(vector_ops=n * SAMPLER_OPS_PER_ELEMENT[sig.op], bytes=moved, dtype="float32"),
                tiling={"n": n})


def _mt_word(target: str) -> list[str]:
    """Source lines: the next tempered mt19937 word into ``target`` (twisting the state ``s`` in place
    when its position ``s[MT_N]`` has run out), int64 arithmetic on 32-bit values."""
    return [
        f"if s[{MT_N}] >= {MT_N}:",
        f"    for t in range({MT_N}):",
        f"        y = (s[t] & {MT_UPPER}) | (s[(t + 1) % {MT_N}] & {MT_LOWER})",
        f"        s[t] = s[(t + {MT_M}) % {MT_N}] ^ (y >> 1) ^ ({MT_MATRIX_A} if y & 1 else 0)",
        f"    s[{MT_N}] = 0",
        f"y = s[s[{MT_N}]]",
        f"s[{MT_N}] += 1",
        "y ^= y >> 11",
        "y ^= (y << 7) & 0x9D2C5680",
        "y ^= (y << 15) & 0xEFC60000",
        f"{target} = y ^ (y >> 18)",
    ]


def _minstd_canonical(target: str) -> list[str]:
    """Source lines: minstd_rand0's next value as libstdc++'s ``generate_canonical<float>`` makes it:
    float32(x - 1) / float32(2^31 - 2) (which rounds to 2^31), kept below 1."""
    return [f"x = (x * {MINSTD_A}) % {MINSTD_M}",
            f"{target} = f32(x - 1) / f32(2147483648.0)",
            f"if {target} >= f32(1.0):",
            f"    {target} = f32({float(np.nextafter(np.float32(1), np.float32(0)))!r})"]


def emit_sampler(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """The engine's state is copied to the new-state output and advanced there; the value count is
    tiling data."""
    n, words = plan.tiling["n"], STATE_WORDS[ENGINE[sig.op]]
    if sig.op == "UniformInt":
        lines = src.HEADER + src.views(("st", 0, "int64"), ("lo_t", 1, "int32"), ("hi_t", 2, "int32"),
                                       ("out", 3, "int32"), ("s", 4, "int64"))
    else:
        lines = src.HEADER + src.views(("st", 0, "int64"), ("out", 1, "float32"), ("s", 2, "int64"))
    body = [f"for t in range({words}):", "    s[t] = st[t]"]
    if sig.op == "UniformReal":
        # uniform_real_distribution<double>(0, 1): (w1 + w2 * 2^32) / 2^64 in double, below 1, as float
        body += [f"for i in range({n}):"]
        body += src.indent(_mt_word("w1") + _mt_word("w2"))
        body += src.indent(["u = (f64(w1) + f64(w2) * 4294967296.0) / 18446744073709551616.0",
                            "if u >= 1.0:",
                            f"    u = {float(np.nextafter(1.0, 0.0))!r}",
                            "out[i] = f32(u)"])
    elif sig.op == "UniformInt":
        # uniform_int_distribution(minval, maxval - 1), downscaling: reject words >= past, then divide
        body += ["lo = i64(lo_t[0])",
                 "urange = max(i64(hi_t[0]) - 1 - lo + 1, 1)    # maxval <= minval: the front end refuses it",
                 f"scaling = {W32} // urange",
                 "past = urange * scaling",
                 f"for i in range({n}):",
                 "    w = past"]
        body += src.indent(["while w >= past:"] + src.indent(_mt_word("w")))
        body += src.indent(["out[i] = np.int32(w // scaling + lo)"])
    elif sig.op == "StandardLaplace":
        # uniform_real_distribution<float>(nextafter(-1, 0), 1) over minstd_rand0 (b - a rounds to 2 in
        # float), then -sign(v) * log(1.0 - |v|) in double (the literal 1.0), rounded to float
        lo = float(np.nextafter(np.float32(-1), np.float32(0)))
        body += ["x = s[0]", f"for i in range({n}):"]
        body += src.indent(_minstd_canonical("u")
                           + [f"v = u * f32(2.0) + f32({lo!r})",
                              "sign = -1.0 if v < f32(0.0) else 1.0",
                              "out[i] = f32(-sign * math.log(1.0 - abs(f64(v))))"])
        body += ["s[0] = x"]
    else:
        # normal_distribution<float>: Marsaglia's polar method in float32; math.log of a float32 is libm's
        # logf, as std::log(float) in MindSpore's kernel (not correctly rounded: a double log would differ)
        body += ["x = s[0]", "i = 0", f"while i < {n}:", "    r2 = f32(2.0)"]
        body += src.indent(["while r2 > f32(1.0) or r2 == f32(0.0):"]
                           + src.indent(_minstd_canonical("ua") + _minstd_canonical("ub")
                                        + ["a = f32(2.0 * f64(ua) - 1.0)", "b = f32(2.0 * f64(ub) - 1.0)",
                                           "r2 = a * a + b * b"]))
        body += src.indent(["mult = math.sqrt(f32(-2.0) * math.log(r2) / r2)",
                            "out[i] = b * mult",
                            "i += 1",
                            f"if i < {n}:",
                            "    out[i] = a * mult",
                            "    i += 1"])
        body += ["s[0] = x"]
    # one block does the work: the engine is sequential
    lines += src.indent(["if block_idx != 0:", "    return"] + body)
    return src.finish(lines)


# the engine state a host-seeded sampler reads and advances: one int64 (the Parameter behind the op)
ENGINE_STATE = TensorDesc((1,), "int64")


def check_engine_state(sig: OpSignature, names: tuple[str, str]) -> None:
    """Arity 2, named ``names``, input 1 the int64 (1,) engine state."""
    check_arity(sig, 2, names)
    check_dtype(sig, 1, ("int64",), "state")
    if sig.inputs[1].shape != (1,):
        raise fail(sig, f"input 1 (state) must have shape (1,), got {sig.inputs[1].shape}")


def infer_choice(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(x bool of rank 1..5, state) -> (index int32 (count, rank), mask bool (count,), new state)."""
    check_engine_state(sig, ("input_x", "state"))
    check_dtype(sig, 0, ("bool",), "input_x")
    rank = len(sig.inputs[0].shape)
    if not 1 <= rank <= 5:
        raise fail(sig, f"input 0 (input_x) must have rank 1 to 5, got {rank}")
    count = sig.attr("count")
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise fail(sig, f"attr count={count!r} must be an int > 0")
    return (TensorDesc((count, rank), "int32"), TensorDesc((count,), "bool"), ENGINE_STATE)


def plan_choice(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One block (the shuffle is sequential); workspaces: the true positions and their permutation."""
    n = sig.inputs[0].size
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    return Plan(1, KernelCost(vector_ops=n * SAMPLER_OPS_PER_ELEMENT[sig.op], bytes=moved, dtype="float32"),
                workspace_sizes=(8 * max(n, 1), 8 * max(n, 1)),
                tiling={"n": n, "count": outputs[1].shape[0], "dims": sig.inputs[0].shape})


def _minstd_below(target: str, bound: str) -> list[str]:
    """Source lines: ``uniform_int_distribution(0, bound)`` over minstd_rand0 (downscaling: reject
    draws >= past, divide by scaling)."""
    return [f"scaling = {MINSTD_RANGE} // ({bound} + 1)",
            f"past = ({bound} + 1) * scaling",
            f"{target} = past",
            f"while {target} >= past:",
            f"    x = (x * {MINSTD_A}) % {MINSTD_M}",
            f"    {target} = x - 1",
            f"{target} = {target} // scaling"]


def _mt_below(target: str, bound: str) -> list[str]:
    """Source lines: ``uniform_int_distribution(0, bound)`` over std::mt19937 (state array ``s``),
    downscaling as ``_minstd_below``."""
    return [f"scaling = {W32} // ({bound} + 1)",
            f"past = ({bound} + 1) * scaling",
            f"{target} = past",
            f"while {target} >= past:"] + src.indent(_mt_word(target)) + [f"{target} = {target} // scaling"]


def _shuffle_lines(n: str, below=_minstd_below, urange: int = MINSTD_RANGE) -> list[str]:
    """Source lines: libstdc++ 10's ``std::shuffle`` of ``perm[0:n]`` over an engine (minstd_rand0, state
    ``x``, by default; ``below`` draws its bounded ints, ``urange`` is its range): two swap positions
    from one draw while n^2 fits the engine's range, one per draw past that."""
    lines = [f"if {n} > 0 and {urange} // {n} >= {n}:",
             "    i = 1",
             f"    if {n} % 2 == 0:"]
    lines += src.indent(below("j", "1"), 2)
    lines += ["        perm[1], perm[j] = perm[j], perm[1]",
              "        i = 2",
              f"    while i < {n}:",
              "        sr = i + 1"]
    lines += src.indent(below("pp", "sr * (sr + 1) - 1"), 2)
    lines += ["        p1 = pp // (sr + 1)",
              "        p2 = pp % (sr + 1)",
              "        perm[i], perm[p1] = perm[p1], perm[i]",
              "        perm[i + 1], perm[p2] = perm[p2], perm[i + 1]",
              "        i += 2",
              f"elif {n} > 0:",
              f"    for i in range(1, {n}):"]
    lines += src.indent(below("j", "i"), 2)
    lines += ["        perm[i], perm[j] = perm[j], perm[i]"]
    return lines


def emit_choice(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """MindSpore's CPU kernel: the flat positions of the true elements, ``std::shuffle`` of their
    order numbers, the first ``count`` of them as coordinates, the rest zero and masked out. Sizes are
    tiling data; the rank is compiled in."""
    dims, n, count = plan.tiling["dims"], plan.tiling["n"], plan.tiling["count"]
    lines = src.HEADER + src.views(("xin", 0, "uint8"), ("st", 1, "int64"), ("idx", 2, "int32"),
                                   ("msk", 3, "uint8"), ("s", 4, "int64"), ("nz", 5, "int64"), ("perm", 6, "int64"))
    body = ["x = st[0]", "nnz = 0", f"for i in range({n}):", "    if xin[i] != 0:", "        nz[nnz] = i",
            "        nnz += 1", "for i in range(nnz):", "    perm[i] = i"]
    body += _shuffle_lines("nnz")
    body += ["s[0] = x",
             f"for i in range({count}):",
             "    flat = nz[perm[i]] if i < nnz else 0",
             "    msk[i] = np.uint8(1) if i < nnz else np.uint8(0)"]
    for d in range(len(dims) - 1, -1, -1):
        body += [f"    idx[i * {len(dims)} + {d}] = np.int32(flat % {dims[d]})", f"    flat = flat // {dims[d]}"]
    lines += src.indent(["if block_idx != 0:", "    return"] + body)
    return src.finish(lines)


def infer_shuffle(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(x, state) -> (x's rows in random order along axis 0, new state)."""
    check_engine_state(sig, ("x", "state"))
    return (sig.inputs[0], ENGINE_STATE)


def plan_shuffle(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One block; a workspace for the row permutation."""
    rows = sig.inputs[0].shape[0] if sig.inputs[0].shape else 1
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    return Plan(1, KernelCost(vector_ops=sig.inputs[0].size, bytes=moved, dtype="float32"),
                workspace_sizes=(8 * max(rows, 1),),
                tiling={"rows": rows, "inner": sig.inputs[0].size // rows if rows else 0})


def emit_shuffle(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """MindSpore's CPU RandomShuffle: ``std::shuffle`` of the row numbers (a scalar or a single row is
    copied and draws nothing: the shuffle loop does not run), then row i of the output is row perm[i]
    of x. Row count and length are tiling data."""
    dtype = sig.inputs[0].dtype
    rows, inner = plan.tiling["rows"], plan.tiling["inner"]
    lines = src.HEADER + src.views(("xin", 0, dtype), ("st", 1, "int64"), ("y", 2, dtype), ("s", 3, "int64"),
                                   ("perm", 4, "int64"))
    body = ["x = st[0]", f"for i in range({rows}):", "    perm[i] = i"]
    body += _shuffle_lines(str(rows))
    body += ["s[0] = x",
             f"for i in range({rows}):",
             f"    for k in range({inner}):",
             f"        y[i * {inner} + k] = xin[perm[i] * {inner} + k]"]
    lines += src.indent(["if block_idx != 0:", "    return"] + body)
    return src.finish(lines)



# --- Multinomial (minstd_rand0 over GetSeed) and Bernoulli (counter-based Philox) ------------------------

MULTINOMIAL_INPUTS = ("float32", "float64")     # other dtypes are cast to float32 by the front end
MULTINOMIAL_OUTPUTS = ("int32", "int64")
BERNOULLI_P = ("float32", "float64")
# (Philox key, counter high half, the block of the words left over from the last launch, how many of its
# four words that launch used)
BERNOULLI_STATE = TensorDesc((4,), "int64")
PHILOX_WORDS = 4


def infer_multinomial(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(x float (cols,) or (rows, cols), state) -> (int samples (num_samples,) or (rows, num_samples),
    new state)."""
    check_engine_state(sig, ("x", "state"))
    check_dtype(sig, 0, MULTINOMIAL_INPUTS, "x")
    shape = sig.inputs[0].shape
    if len(shape) not in (1, 2) or shape[-1] < 1:
        raise fail(sig, f"input 0 (x) must be 1-d or 2-d with at least one column, got shape {shape}")
    count = sig.attr("num_samples")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise fail(sig, f"attr num_samples={count!r} must be an int >= 0")
    out = sig.attr("dtype", "int32")
    if out not in MULTINOMIAL_OUTPUTS:
        raise fail(sig, f"attr dtype={out!r} must be one of {MULTINOMIAL_OUTPUTS}")
    return (TensorDesc(shape[:-1] + (count,), out), ENGINE_STATE)


def plan_multinomial(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One block (the engine is sequential); a workspace for the normalised cumulative sums."""
    shape = sig.inputs[0].shape
    rows, cols = (shape[0] if len(shape) == 2 else 1), shape[-1]
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    cost = KernelCost(vector_ops=sig.inputs[0].size + outputs[0].size * 12, bytes=moved, dtype="float32")
    return Plan(1, cost, workspace_sizes=(max(sig.inputs[0].nbytes, 8),),
                tiling={"rows": rows, "cols": cols, "count": outputs[0].shape[-1]})


def emit_multinomial(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """MindSpore's CPU kernel: per row, the cumulative sums in x's dtype, divided by their total when it
    is not zero, then per sample ``uniform_real_distribution<float>`` over minstd_rand0 (one draw) and a
    binary search for the first cumulative value above it."""
    dtype, out = sig.inputs[0].dtype, outputs[0].dtype
    rows, cols, count = plan.tiling["rows"], plan.tiling["cols"], plan.tiling["count"]
    lines = src.HEADER + src.views(("xin", 0, dtype), ("st", 1, "int64"), ("y", 2, out), ("s", 3, "int64"),
                                   ("cum", 4, dtype))
    body = ["x = st[0]",
            f"for r in range({rows}):",
            f"    base = r * {cols}",
            "    cum[base] = xin[base]",
            f"    for j in range(1, {cols}):",
            "        cum[base + j] = cum[base + j - 1] + xin[base + j]",
            f"    total = cum[base + {cols} - 1]",
            "    if total != 0:",
            f"        for j in range({cols}):",
            "            cum[base + j] = cum[base + j] / total",
            f"    for n in range({count}):"]
    body += src.indent(_minstd_canonical("u"), 2)
    body += src.indent([f"p = {'f64' if dtype == 'float64' else 'f32'}(u)",
                        "b = 0",
                        f"e = {cols} - 1",
                        "while e - b > 0:",
                        "    piv = b + (e - b) // 2",
                        "    if cum[base + piv] > p:",
                        "        e = piv",
                        "    else:",
                        "        b = piv + 1",
                        f"y[r * {count} + n] = {src.store(out, 'b')}"], 2)
    body += ["s[0] = x"]
    lines += src.indent(["if block_idx != 0:", "    return"] + body)
    return src.finish(lines)


def infer_bernoulli(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(x, p (one value or x's shape), state) -> (0/1 of x's shape and dtype, the new state: attr
    ``advance`` added to the counter's high half, the left-over words moved on)."""
    check_arity(sig, 3, ("x", "p", "state"))
    check_dtype(sig, 1, BERNOULLI_P, "p")
    check_dtype(sig, 2, ("int64",), "state")
    if sig.inputs[2].shape != BERNOULLI_STATE.shape:
        raise fail(sig, f"input 2 (state) must have shape {BERNOULLI_STATE.shape}, got {sig.inputs[2].shape}")
    x, p = sig.inputs[0], sig.inputs[1]
    if p.size != 1 and p.shape != x.shape:
        raise fail(sig, f"input 1 (p) must have one value or x's shape {x.shape}, got {p.shape}")
    return (x, BERNOULLI_STATE)


def plan_bernoulli(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    n = outputs[0].size
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    return Plan(src.elementwise_blocks(n), KernelCost(vector_ops=n * 24, bytes=moved, dtype="float32"),
                tiling={"n": n, "scalar_p": sig.inputs[1].size == 1, "advance": int(sig.attr("advance", 0))})


def emit_bernoulli(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """MindSpore's CPU Bernoulli: a uniform ``1.m - 1`` per element from the low 23 bits of the next
    word of Philox-4x32-10 under key seed, the element 1 unless that uniform exceeds p. Each launch
    restarts the counter at (block 0, offset) but first spends the words its last launch left over in
    its last block (MindSpore's kernel keeps them): element i < left takes word used + i of block
    ``last``, the others word j % 4 of block j // 4 (j = i - left)."""
    dtype, pdt = outputs[0].dtype, sig.inputs[1].dtype
    n = plan.tiling["n"]
    lines = src.HEADER + src.views(("xin", 0, dtype), ("pin", 1, pdt), ("st", 2, "int64"), ("y", 3, dtype),
                                   ("s", 4, "int64"))
    body = [f"left = {PHILOX_WORDS} - st[3]",
             "if block_idx == 0:",
             "    s[0] = st[0]",
             f"    s[1] = st[1] + {plan.tiling['advance']}",
             f"    if {n} <= left:",
             "        s[2] = st[2]",
             f"        s[3] = st[3] + {n}",
             "    else:",
             f"        s[2] = ({n} - left - 1) // {PHILOX_WORDS}",
             f"        s[3] = ({n} - left - 1) % {PHILOX_WORDS} + 1"]
    body += src.split_lines(str(n))
    body += ["w32 = np.uint64(0xFFFFFFFF)",
             "s32 = np.uint64(32)",
             "key0 = np.uint64(st[0] & 0xFFFFFFFF)",
             "key1 = np.uint64((st[0] >> 32) & 0xFFFFFFFF)",
             "off0 = np.uint64(st[1] & 0xFFFFFFFF)",
             "off1 = np.uint64((st[1] >> 32) & 0xFFFFFFFF)",
             "for i in range(lo, hi):",
             "    if i < left:",
             "        blk = np.uint64(st[2])",
             "        k = st[3] + i",
             "    else:",
             f"        blk = np.uint64((i - left) // {PHILOX_WORDS})",
             f"        k = (i - left) % {PHILOX_WORDS}",
             "    c0, c1, c2, c3 = blk & w32, blk >> s32, off0, off1",
             "    k0, k1 = key0, key1",
             *PHILOX_ROUND_LINES,
             "    w = c0 if k == 0 else (c1 if k == 1 else (c2 if k == 2 else c3))",
             "    u = f32(f64(w & np.uint64(0x7FFFFF)) * 1.1920928955078125e-07)    # 1.m - 1, exact",
             f"    pv = pin[{'0' if plan.tiling['scalar_p'] else 'i'}]",
             f"    y[i] = {src.store(dtype, '0 if u > pv else 1')}"]
    lines += src.indent(body)
    return src.finish(lines)



# RandpermV2's output dtypes (MindSpore's CPU kernel)
RANDPERM_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64")


def infer_randperm(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(seed int64 (1,): the mt19937 seed) -> (a permutation of 0 .. n-1, attr ``n``, in attr dtype)."""
    check_arity(sig, 1, ("seed",))
    check_dtype(sig, 0, ("int64",), "seed")
    if sig.inputs[0].shape != (1,):
        raise fail(sig, f"input 0 (seed) must have shape (1,), got {sig.inputs[0].shape}")
    n, dtype = sig.attr("n"), sig.attr("dtype", "int64")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise fail(sig, f"attr n={n!r} must be an int >= 0")
    if dtype not in RANDPERM_DTYPES:
        raise fail(sig, f"attr dtype={dtype!r} must be one of {RANDPERM_DTYPES}")
    return (TensorDesc((n,), dtype),)


def plan_randperm(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One block (the shuffle is sequential); workspaces: the engine (624 words and a position) and
    the permutation."""
    n = outputs[0].size
    return Plan(1, KernelCost(vector_ops=8 * n + MT_N, bytes=outputs[0].nbytes, dtype="float32"),
                workspace_sizes=(8 * (MT_N + 1), 8 * max(n, 1)), tiling={"n": n})


def emit_randperm(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """MindSpore's CPU RandpermV2: ``std::mt19937 gen(seed)``, ``std::shuffle`` of 0 .. n-1 with it."""
    n, dtype = plan.tiling["n"], outputs[0].dtype
    lines = src.HEADER + src.views(("sd", 0, "int64"), ("out", 1, dtype), ("s", 2, "int64"), ("perm", 3, "int64"))
    body = [f"s[0] = sd[0] & {W32}",
            f"for t in range(1, {MT_N}):",
            f"    s[t] = (1812433253 * (s[t - 1] ^ (s[t - 1] >> 30)) + t) & {W32}",
            f"s[{MT_N}] = {MT_N}",
            f"for i in range({n}):",
            "    perm[i] = i"]
    body += _shuffle_lines(str(n), _mt_below, W32)
    body += [f"for i in range({n}):", f"    out[i] = {src.store(dtype, 'perm[i]')}"]    # _mt_word's y is a local
    lines += src.indent(["if block_idx != 0:", "    return"] + body)
    return src.finish(lines)



CATEGORICAL_OUTPUTS = ("int16", "int32", "int64")
# generate_canonical<double> over minstd_rand0: two draws (53 bits over floor(log2(2^31 - 2)) = 30 bits each),
# the second weighted by the engine's range
MINSTD_SPAN = float(MINSTD_M - 1)


def infer_categorical(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(logits float (batch, classes), state) -> (class indices (batch, num_sample), new state)."""
    check_engine_state(sig, ("logits", "state"))
    check_dtype(sig, 0, MULTINOMIAL_INPUTS, "logits")
    shape = sig.inputs[0].shape
    if len(shape) != 2 or shape[1] < 1:
        raise fail(sig, f"input 0 (logits) must be 2-d with at least one class, got shape {shape}")
    count, out = sig.attr("num_sample"), sig.attr("dtype", "int64")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise fail(sig, f"attr num_sample={count!r} must be an int >= 0")
    if out not in CATEGORICAL_OUTPUTS:
        raise fail(sig, f"attr dtype={out!r} must be one of {CATEGORICAL_OUTPUTS}")
    return (TensorDesc((shape[0], count), out), ENGINE_STATE)


def plan_categorical(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One block (the engine is sequential); workspaces: the rows' cumulative sums, the draws."""
    rows, cols = sig.inputs[0].shape
    count = outputs[0].shape[1]
    item = 8 if sig.inputs[0].dtype == "float64" else 4
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    cost = KernelCost(vector_ops=sig.inputs[0].size * 8 + outputs[0].size * 4, bytes=moved, dtype="float32")
    return Plan(1, cost, workspace_sizes=(max(sig.inputs[0].nbytes, 8), item * max(count, 1)),
                tiling={"rows": rows, "cols": cols, "count": count})


def emit_categorical(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """MindSpore's CPU RandomCategorical: per row the cumulative sums of exp(logit - row max) (expf, in
    the logits' dtype); per sample one ``uniform_real_distribution<double>`` draw over minstd_rand0,
    rounded to float and shared by every row; the first class whose cumulative sum is not below
    total * draw."""
    dtype, out = sig.inputs[0].dtype, outputs[0].dtype
    cast = "f64" if dtype == "float64" else "f32"
    rows, cols, count = plan.tiling["rows"], plan.tiling["cols"], plan.tiling["count"]
    lines = src.HEADER + src.views(("lg", 0, dtype), ("st", 1, "int64"), ("y", 2, out), ("s", 3, "int64"),
                                   ("cdf", 4, dtype), ("rnd", 5, dtype))
    body = ["x = st[0]",
            f"for j in range({count}):",
            f"    x = (x * {MINSTD_A}) % {MINSTD_M}",
            "    acc = f64(x - 1)",
            f"    x = (x * {MINSTD_A}) % {MINSTD_M}",
            f"    acc += f64(x - 1) * {MINSTD_SPAN!r}",
            f"    v = acc / {MINSTD_SPAN * MINSTD_SPAN!r}",
            "    if v >= 1.0:",
            f"        v = {float(np.nextafter(1.0, 0.0))!r}",
            f"    rnd[j] = {cast}(f32(v))",
            "s[0] = x",
            f"for r in range({rows}):",
            f"    base = r * {cols}",
            "    top = lg[base]",
            f"    for i in range(1, {cols}):",
            "        if lg[base + i] > top:",
            "            top = lg[base + i]",
            f"    cdf[base] = {cast}(math.exp(f32(lg[base] - top)))",
            f"    for i in range(1, {cols}):",
            f"        cdf[base + i] = cdf[base + i - 1] + {cast}(math.exp(f32(lg[base + i] - top)))",
            f"    for j in range({count}):",
            f"        find = cdf[base + {cols} - 1] * rnd[j]",
            "        k = 0",
            f"        while k < {cols} - 1 and cdf[base + k] < find:",
            "            k += 1",
            f"        y[r * {count} + j] = {src.store(out, 'k')}"]
    lines += src.indent(["if block_idx != 0:", "    return"] + body)
    return src.finish(lines)


OPS: tuple[OpDef, ...] = (
    OpDef("Dropout", "dropout", infer_dropout, plan_dropout, emit_dropout, grad=grad_dropout,
          frontend=Exposure(("Dropout",), ("dropout",)), runtime_tiling=("n",)),
    OpDef("StandardNormal", "standard_normal", infer_sampler, plan_sampler, emit_sampler,
          frontend=Exposure(("StandardNormal",), ("standard_normal",)), runtime_tiling=("n",)),
    OpDef("UniformReal", "uniform_real", infer_sampler, plan_sampler, emit_sampler,
          frontend=Exposure(("UniformReal",), ()), runtime_tiling=("n",)),
    OpDef("UniformInt", "uniform_int", infer_sampler, plan_sampler, emit_sampler,
          frontend=Exposure(("UniformInt",), ()), runtime_tiling=("n",)),
    OpDef("RandomChoiceWithMask", "random_choice_with_mask", infer_choice, plan_choice, emit_choice,
          frontend=Exposure(("RandomChoiceWithMask",), ("choice_with_mask",)), runtime_tiling=("n", "count", "dims")),
    OpDef("RandomShuffle", "random_shuffle", infer_shuffle, plan_shuffle, emit_shuffle,
          frontend=Exposure(("RandomShuffle",), ("shuffle",)), runtime_tiling=("rows", "inner")),
    OpDef("StandardLaplace", "standard_laplace", infer_sampler, plan_sampler, emit_sampler, runtime_tiling=("n",)),
    OpDef("Multinomial", "multinomial", infer_multinomial, plan_multinomial, emit_multinomial,
          runtime_tiling=("rows", "cols", "count")),
    OpDef("Bernoulli", "bernoulli", infer_bernoulli, plan_bernoulli, emit_bernoulli, runtime_tiling=("n",)),
    OpDef("RandpermV2", "randperm", infer_randperm, plan_randperm, emit_randperm, runtime_tiling=("n",)),
    OpDef("RandomCategorical", "random_categorical", infer_categorical, plan_categorical, emit_categorical,
          runtime_tiling=("rows", "cols", "count")),
)
