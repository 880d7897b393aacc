"""Round-3 samplers: Multinomial, Bernoulli, RandpermV2, StandardLaplace and RandomCategorical draw
MindSpore 2.10 CPU's very numbers (the ``random3`` conformance family compares them with recorded
MindSpore output); the generator forms (mint's, ``bernoulli_ext``) draw from them with seeds of ``set_seed``.

Oracles: numpy/Python models of MindSpore's CPU kernels written here from its algorithms and libstdc++'s
(GetSeed and Bernoulli's stream from tests/philox.py's Philox, numpy's MT19937 with std::mt19937's legacy
seeding, minstd_rand0, GCC's two-at-a-time std::shuffle, glibc's expf through ctypes), plus
distribution checks (chi-square, moments) over fixed seeds, so they are exact and deterministic.
"""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, mint, nn, ops
from ascendemu.frontend.common.seed import graph_seed

from philox import philox

LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
LIBM.expf.restype, LIBM.expf.argtypes = ctypes.c_float, [ctypes.c_float]
MINSTD_M = 2147483647
W32 = 0xFFFFFFFF


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


# --- the oracle ----------------------------------------------------------------------------------------

def get_seed(seed: int, seed2: int) -> int:
    w = philox([np.uint64(seed & W32), np.uint64(seed >> 32), np.uint64(seed2 & W32), np.uint64(seed2 >> 32)],
               (0x3EC8F720, 0x02461E29))
    return (int(w[1]) << 32) | int(w[0])


def minstd(seed: int):
    """minstd_rand0 seeded as libstdc++ seeds it (seed mod 2^31 - 1, 0 becoming 1): its values - 1."""
    x = seed % MINSTD_M or 1
    while True:
        x = x * 16807 % MINSTD_M
        yield x - 1


def canonical_float(gen) -> np.float32:
    """generate_canonical<float> over minstd_rand0: float(value) / float(2^31 - 2), kept below 1."""
    u = np.float32(next(gen)) / np.float32(MINSTD_M - 1)
    return min(u, np.nextafter(np.float32(1), np.float32(0)))


def ref_multinomial(probs: np.ndarray, count: int, gen) -> np.ndarray:
    """MindSpore CPU's Multinomial: normalised cumulative sums in probs' dtype, binary search per draw."""
    rows = np.atleast_2d(probs)
    out = []
    for row in rows:
        cum = np.cumsum(row, dtype=row.dtype)
        if cum[-1] != 0:
            cum = (cum / cum[-1]).astype(row.dtype)
        picks = []
        for _ in range(count):
            u = row.dtype.type(canonical_float(gen))
            lo, hi = 0, len(row) - 1
            while hi - lo > 0:
                mid = lo + (hi - lo) // 2
                lo, hi = (lo, mid) if cum[mid] > u else (mid + 1, hi)
            picks.append(lo)
        out.append(picks)
    return np.array(out, np.int32).reshape(probs.shape[:-1] + (count,))


def bernoulli_words(seed: int, n: int, start: int = 0) -> np.ndarray:
    """Words ``start .. start + n`` of the Philox stream of key ``seed``, counter (block, 0)."""
    blocks = np.arange((start + n + 3) // 4, dtype=np.uint64)
    zeros = np.zeros_like(blocks)
    words = philox([blocks & np.uint64(W32), blocks >> np.uint64(32), zeros, zeros], (seed & W32, seed >> 32))
    return np.stack(words, axis=1).ravel()[start:start + n]


def unit(words: np.ndarray) -> np.ndarray:
    return ((words & np.uint64(0x7FFFFF)) | np.uint64(0x3F800000)).astype(np.uint32).view(np.float32) - 1


def mt_words(seed: int):
    bg = np.random.MT19937(0)
    bg._legacy_seeding(seed & W32)
    while True:
        yield from (int(w) for w in bg.random_raw(256))


def below(gen, bound: int, urange: int) -> int:
    """uniform_int_distribution(0, bound) by downscaling."""
    scaling = urange // (bound + 1)
    past = (bound + 1) * scaling
    while True:
        r = next(gen)
        if r < past:
            return r // scaling


def ref_randperm(n: int, seed: int) -> list[int]:
    """std::shuffle (libstdc++ 10) of 0 .. n-1 over std::mt19937(seed)."""
    gen, a, urange = mt_words(seed), list(range(n)), W32
    if urange // n >= n:
        i = 1
        if n % 2 == 0:
            j = below(gen, 1, urange)
            a[1], a[j] = a[j], a[1]
            i = 2
        while i < n:
            pair = below(gen, (i + 1) * (i + 2) - 1, urange)
            p1, p2 = pair // (i + 2), pair % (i + 2)
            a[i], a[p1] = a[p1], a[i]
            a[i + 1], a[p2] = a[p2], a[i + 1]
            i += 2
    else:
        for i in range(1, n):
            j = below(gen, i, urange)
            a[i], a[j] = a[j], a[i]
    return a


def ref_standard_laplace(seed: int, seed2: int, n: int) -> np.ndarray:
    gen, lo = minstd(get_seed(seed, seed2)), np.nextafter(np.float32(-1), np.float32(0))
    out = []
    for _ in range(n):
        v = np.float32(canonical_float(gen) * np.float32(2) + lo)
        out.append(np.float32(-np.copysign(1.0, v) * np.log(1.0 - abs(float(v)))))
    return np.array(out, np.float32)


def ref_categorical(logits: np.ndarray, count: int, gen) -> np.ndarray:
    """exp cumulative sums (expf) per row; one generate_canonical<double> draw per sample, as float."""
    span = float(MINSTD_M - 1)
    draws = []
    for _ in range(count):
        v = (float(next(gen)) + float(next(gen)) * span) / (span * span)
        draws.append(np.float32(min(v, np.nextafter(1.0, 0.0))))
    out = []
    for row in logits.astype(np.float32):
        cdf = np.cumsum([np.float32(LIBM.expf(float(np.float32(v - row.max())))) for v in row], dtype=np.float32)
        out.append([int(np.argmax(cdf >= np.float32(cdf[-1] * d))) for d in draws])
    return np.array(out)


PROBS = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.0, 0.25, 0.25], [0.0, 0.0, 0.0, 0.0]], np.float32)


# --- the kernels against the oracle ---------------------------------------------------------------------

@pytest.mark.parametrize("seed,seed2,probs", [(0, 5, PROBS), (7, 0, PROBS[0]),
                                              (3, 4, np.array([1.0, 2.0, 5.0, 0.5, 9.0], np.float64))])
def test_multinomial_draws_mindspores_stream_and_continues_it(seed, seed2, probs):
    op, gen = ops.Multinomial(seed, seed2), minstd(get_seed(seed, seed2))
    for _ in range(2):      # the second call continues the engine
        np.testing.assert_array_equal(op(Tensor(probs), 6).asnumpy(), ref_multinomial(probs, 6, gen))


def test_multinomial_frequencies_follow_the_weights():
    """Chi-square of 4000 draws against the weights (df 3: 16.27 is the 0.1% point)."""
    weights = np.array([0.1, 0.2, 0.3, 0.4])
    counts = np.bincount(ops.Multinomial(2, 3)(Tensor(weights.astype(np.float32)), 4000).asnumpy(), minlength=4)
    expected = weights * 4000
    assert ((counts - expected) ** 2 / expected).sum() < 16.27


def test_bernoulli_restarts_its_stream_after_the_left_over_words():
    """A 6-element launch uses block 0 and half of block 1; the next starts with block 1's last two."""
    x, p = Tensor(np.zeros(6, np.float32)), Tensor(np.float32(0.5))
    op = ops.Bernoulli(11)
    words = bernoulli_words(11, 8)
    expect = [words[:6], np.concatenate([words[6:8], words[:4]]), words[:6]]
    for k in range(3):
        np.testing.assert_array_equal(op(x, p).asnumpy(), (unit(expect[k]) <= 0.5).astype(np.float32))


def test_bernoulli_per_element_p_and_dtype():
    probs = np.array([[0.1, 0.5, 0.9], [0.0, 1.0, 0.3]])
    y = ops.Bernoulli(4)(Tensor(np.zeros((2, 3), np.int32)), Tensor(probs))
    assert y.dtype == ms.int32
    np.testing.assert_array_equal(y.asnumpy(), (unit(bernoulli_words(4, 6)).reshape(2, 3) <= probs).astype(np.int32))


def test_bernoulli_random_seed_repeats_after_set_seed_and_has_the_mean():
    x = Tensor(np.zeros(4000, np.float32))
    ms.set_seed(3)
    first = ops.bernoulli(x, 0.3).asnumpy()
    ms.set_seed(3)
    np.testing.assert_array_equal(ops.bernoulli(x, 0.3).asnumpy(), first)
    assert abs(first.mean() - 0.3) < 4 * np.sqrt(0.3 * 0.7 / 4000)
    assert not np.array_equal(ops.bernoulli(x, 0.3).asnumpy(), first)


@pytest.mark.parametrize("n,seed,offset", [(5, 1, 0), (6, 1, 2), (33, 9, 0), (70000, 5, 0)])
def test_randperm_is_mt19937_shuffle(n, seed, offset):
    got = ops.randperm(n, seed, offset).asnumpy()
    assert got.dtype == np.int64
    assert got.tolist() == ref_randperm(n, offset or seed)


@pytest.mark.parametrize("seed,seed2,shape", [(5, 0, (5,)), (1, 2, (2, 3))])
def test_standard_laplace_is_minstd_inverse_cdf(seed, seed2, shape):
    op = ops.StandardLaplace(seed, seed2)
    n = int(np.prod(shape))
    both = ref_standard_laplace(seed, seed2, 2 * n)
    np.testing.assert_array_equal(op(shape).asnumpy(), both[:n].reshape(shape))
    np.testing.assert_array_equal(op(shape).asnumpy(), both[n:].reshape(shape))


def test_laplace_moments():
    """Laplace(mean 1, scale 2): mean 1, variance 8, over 20000 values (5 standard errors)."""
    ms.set_seed(2)
    v = ops.laplace((20000,), Tensor(np.float32(1.0)), Tensor(np.float32(2.0))).asnumpy().astype(np.float64)
    assert abs(v.mean() - 1.0) < 5 * np.sqrt(8 / 20000)
    assert abs(v.var() - 8.0) < 5 * np.sqrt((384 - 64) / 20000)     # var of x^2: E x^4 - var^2 = 24 b^4 - 4 b^4


def test_random_categorical_is_minstd_cdf_search():
    logits = np.array([[-1.6, -1.2, -0.7], [0.5, 0.1, -2.0]], np.float32)
    op, gen = ops.RandomCategorical(ms.int32), minstd(get_seed(0, 7))
    for _ in range(2):
        got = op(Tensor(logits), 5, 7)
        assert got.dtype == ms.int32
        np.testing.assert_array_equal(got.asnumpy(), ref_categorical(logits, 5, gen))


# --- graph mode, the generator forms, errors ------------------------------------------------------------

def test_graph_mode_call_sites_draw_the_pynative_numbers():
    probs = Tensor(PROBS[0])

    class Net(nn.Cell):
        def construct(self, p):
            return ops.multinomial(p, 5), ops.bernoulli(p, 0.5), ops.standard_laplace((3,))

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(6)
    graph = [t.asnumpy() for t in Net()(probs)]
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(6)
    eager = [ops.multinomial(probs, 5).asnumpy(), ops.bernoulli(probs, 0.5).asnumpy(),
             ops.standard_laplace((3,)).asnumpy()]
    for g, e in zip(graph, eager):
        np.testing.assert_array_equal(g, e)
    ms.set_seed(6)
    mult = ops.Multinomial(*graph_seed(None, "multinomial"))(probs, 5)
    np.testing.assert_array_equal(graph[0], mult.asnumpy())


def test_mint_generator_forms():
    ms.set_seed(8)
    ints = mint.randint(3, 9, (6,))
    assert ints.dtype == ms.int64 and 3 <= ints.asnumpy().min() and ints.asnumpy().max() < 9
    assert sorted(mint.randperm(7).asnumpy().tolist()) == list(range(7))
    assert mint.multinomial(Tensor(PROBS[0]), 6, True).dtype == ms.int64
    probs = Tensor(np.array([0.0, 1.0, 0.0, 1.0], np.float32))
    np.testing.assert_array_equal(mint.bernoulli(probs).asnumpy(), probs.asnumpy())
    np.testing.assert_array_equal(probs.bernoulli().asnumpy(), probs.asnumpy())
    with pytest.raises(InvalidParamError, match="generator"):
        mint.randperm(4, generator=object())


def test_exponential_and_random_fill_in_place_from_uniform_real():
    """exponential_ is -log(1 - u) / lambd and random_ floor(u * (to - from_)) + from_ of UniformReal's u with
    the next seed pair: the same seed gives the same numbers, which are u's transforms (u recomputed here by
    UniformReal with that seed pair), in place."""
    ms.set_seed(11)
    seeds = graph_seed(None, "exponential_")
    ms.set_seed(11)
    x = Tensor(np.zeros(512, np.float32))
    assert x.exponential_(2.0) is x
    u = ops.UniformReal(*seeds)((512,)).asnumpy().astype(np.float64)
    np.testing.assert_allclose(x.asnumpy(), (-np.log1p(-u) / 2.0).astype(np.float32), rtol=1e-6)
    ms.set_seed(11)
    ints = Tensor(np.zeros(512, np.int32))
    ops.random_(ints, 2, 7)
    np.testing.assert_array_equal(ints.asnumpy(), np.floor(u * 5) + 2)
    halves = Tensor(np.zeros(4096, np.float16))
    halves.random_()                                   # to defaults to 2 ** 11, the integers float16 holds
    h = halves.asnumpy()
    assert h.min() >= 0 and h.max() < 2 ** 11 and np.array_equal(h, np.floor(h)) and h.max() > 1900


@pytest.mark.parametrize("call,kind", [
    (lambda: ops.Multinomial(1)(Tensor(PROBS[0]), -1), ValueError),
    (lambda: ops.Multinomial(1)(Tensor(np.ones((2, 2, 2), np.float32)), 2), ValueError),
    (lambda: ops.multinomial(Tensor(PROBS[0]), 5, False), ValueError),
    (lambda: ops.Bernoulli(1)(Tensor(np.zeros(4, np.float32)), Tensor(np.float32(1.5))), ValueError),
    (lambda: ops.Bernoulli(1)(Tensor(np.zeros(4, np.float16)), Tensor(np.float32(0.5))), TypeError),
    (lambda: ops.randperm(0), ValueError),
    (lambda: ops.RandomCategorical()(Tensor(PROBS[0]), 2, 1), ValueError),
    (lambda: ops.laplace((2,), Tensor(np.float64(0)), Tensor(np.float32(1))), TypeError),
    (lambda: ops.exponential_(Tensor(np.zeros(2, np.float32)), 0.0), ValueError),
    (lambda: ops.exponential_(Tensor(np.zeros(2, np.int32))), TypeError),
    (lambda: ops.random_(Tensor(np.zeros(2, np.int32)), 3, 3), ValueError),
    (lambda: ops.random_(Tensor(np.zeros(2, np.int32)), 0.5, 3), TypeError),
])
def test_errors(call, kind):
    with pytest.raises(kind):
        call()
