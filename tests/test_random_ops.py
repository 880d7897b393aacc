"""MindSpore's CPU samplers (StandardNormal, UniformReal, UniformInt) and the random functions built on
them draw MindSpore 2.10 CPU's very numbers.

Oracles: tests/fixtures/seed_parity.json ``random_ops`` (recorded from real MindSpore by
tools/record_seed_parity.py), and an independent numpy/Python model of MindSpore's kernels written here
from libstdc++'s algorithms: GetSeed (tests/philox.py's Philox), numpy's own MT19937 with the legacy
(init_genrand) seeding std::mt19937 uses, minstd_rand0 and Marsaglia's polar method (with glibc's
logf through ctypes); plus
distribution checks (moments, Kolmogorov-Smirnov, chi-square) over fixed seeds, so they are exact
and deterministic.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.frontend.common.seed import graph_seed

from philox import philox

# glibc's logf, which std::log(float) in MindSpore's kernel calls (it is not correctly rounded)
LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
LIBM.logf.restype, LIBM.logf.argtypes = ctypes.c_float, [ctypes.c_float]
FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "seed_parity.json").read_text())["random_ops"]


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def bits(x) -> list[int]:
    return np.asarray(x.asnumpy() if isinstance(x, Tensor) else x, np.float32).ravel().view(np.uint32).tolist()


# --- the oracle: MindSpore's CPU kernels in numpy/Python ------------------------------------------------

def get_seed(seed: int, seed2: int) -> int:
    w = philox([np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32), np.uint64(seed2 & 0xFFFFFFFF),
                np.uint64(seed2 >> 32)], (0x3EC8F720, 0x02461E29))
    return (int(w[1]) << 32) | int(w[0])


def mt_words(seed: int, seed2: int, n: int) -> np.ndarray:
    bg = np.random.MT19937(0)
    bg._legacy_seeding(get_seed(seed, seed2) & 0xFFFFFFFF)
    return bg.random_raw(n).astype(np.uint64)


def ref_uniform_real(seed: int, seed2: int, n: int) -> np.ndarray:
    w = mt_words(seed, seed2, 2 * n).astype(np.float64)
    u = (w[0::2] + w[1::2] * 2.0**32) / 2.0**64
    return np.minimum(u, np.nextafter(1.0, 0.0)).astype(np.float32)


def ref_uniform_int(seed: int, seed2: int, n: int, low: int, high: int) -> np.ndarray:
    """uniform_int_distribution(low, high - 1) by downscaling: words >= past are rejected."""
    words = iter(mt_words(seed, seed2, 4 * n + 64).tolist())
    span = high - low
    scaling = 0xFFFFFFFF // span
    past = span * scaling
    out = []
    while len(out) < n:
        w = next(words)
        if w < past:
            out.append(w // scaling + low)
    return np.array(out, np.int32)


def ref_standard_normal(seed: int, seed2: int, n: int) -> np.ndarray:
    """minstd_rand0 seeded GetSeed mod (2^31 - 1); normal_distribution<float>: polar method in float32."""
    x = get_seed(seed, seed2) % 2147483647 or 1
    f32 = np.float32

    def canonical():
        nonlocal x
        x = x * 16807 % 2147483647
        return min(f32(x - 1) / f32(2**31), np.nextafter(f32(1), f32(0)))

    out = []
    while len(out) < n:
        while True:
            a, b = f32(2.0 * float(canonical()) - 1.0), f32(2.0 * float(canonical()) - 1.0)
            r2 = f32(a * a + b * b)
            if 0.0 < r2 <= 1.0:
                break
        mult = f32(math.sqrt(float(f32(f32(-2.0) * f32(LIBM.logf(float(r2))) / r2))))
        out += [f32(b * mult), f32(a * mult)]
    return np.array(out[:n], np.float32)


MINSTD_RANGE = 2147483647 - 3        # minstd_rand0 draws 1 .. 2^31 - 2


def ref_shuffle(state: int, n: int) -> tuple[list[int], int]:
    """libstdc++ 10's std::shuffle of range(n) over minstd_rand0 ``state`` (two swaps per draw while n^2
    fits the engine's range, one per draw past that); and the engine's state after."""
    def below(bound):                 # uniform_int_distribution(0, bound), downscaling
        nonlocal state
        scaling = MINSTD_RANGE // (bound + 1)
        while True:
            state = state * 16807 % 2147483647
            if state - 1 < (bound + 1) * scaling:
                return (state - 1) // scaling

    perm = list(range(n))
    if n and MINSTD_RANGE // n >= n:
        i = 1
        if n % 2 == 0:
            j = below(1)
            perm[1], perm[j] = perm[j], perm[1]
            i = 2
        while i < n:
            both = below((i + 1) * (i + 2) - 1)
            for k, pos in ((i, both // (i + 2)), (i + 1, both % (i + 2))):
                perm[k], perm[pos] = perm[pos], perm[k]
            i += 2
    else:
        for i in range(1, n):
            j = below(i)
            perm[i], perm[j] = perm[j], perm[i]
    return perm, state


def ref_choice(state: int, x: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray, int]:
    """RandomChoiceWithMask: the true positions in shuffled order, the first ``count`` as coordinates."""
    nz = np.flatnonzero(x.ravel())
    perm, state = ref_shuffle(state, len(nz))
    chosen = [nz[perm[i]] for i in range(min(count, len(nz)))]
    coords = np.zeros((count, x.ndim), np.int32)
    if chosen:
        coords[:len(chosen)] = np.stack(np.unravel_index(chosen, x.shape), axis=1)
    return coords, np.arange(count) < len(nz), state


# --- MindSpore's recorded numbers ---------------------------------------------------------------------

def test_fixture_primitives_continue_their_streams():
    sn = ops.StandardNormal(seed=1, seed2=2)
    assert bits(sn((16,))) == FIXTURE["StandardNormal(1,2) call1"]
    assert bits(sn((16,))) == FIXTURE["StandardNormal(1,2) call2"]
    assert bits(ops.StandardNormal(1, 0)((16,))) == FIXTURE["StandardNormal(1,0)"]
    per_shape = ops.StandardNormal(1, 2)          # one engine per shape, as MindSpore's kernel cache
    two, three, two_again = per_shape((2,)), per_shape((3,)), per_shape((2,))
    assert bits(two) + bits(two_again) == FIXTURE["StandardNormal(1,2) call1"][:4]
    assert bits(three) == FIXTURE["StandardNormal(1,2) call1"][:3]
    odd = ops.StandardNormal(3, 4)
    assert bits(odd((3,))) + bits(odd((3,))) == FIXTURE["StandardNormal(3,4) (3,) twice"]
    assert bits(ops.UniformReal(1, 2)((16,))) == FIXTURE["UniformReal(1,2)"]
    ui = ops.UniformInt(1, 2)
    got = (ui((8,), Tensor(0, ms.int32), Tensor(10, ms.int32)).asnumpy().tolist()
           + ui((8,), Tensor(-5, ms.int32), Tensor(1000003, ms.int32)).asnumpy().tolist())
    assert got == FIXTURE["UniformInt(1,2) [0,10) then [-5,1000003)"]


def test_fixture_functions_take_the_graph_seed_pairs():
    ms.set_seed(1)
    assert bits(ops.randn(16)) == FIXTURE["set_seed(1) randn"]
    ms.set_seed(1)
    assert bits(ops.uniform((16,), Tensor(0.0), Tensor(1.0))) == FIXTURE["set_seed(1) uniform(0,1)"]
    ms.set_seed(5)
    two = bits(ops.normal((4,), Tensor(1.0), Tensor(2.0))) + bits(ops.normal((4,), Tensor(1.0), Tensor(2.0)))
    assert two == FIXTURE["set_seed(5) normal(1,2) twice"]


# --- the numpy oracle over longer streams --------------------------------------------------------------

@pytest.mark.parametrize("seed,seed2", [(1, 2), (0, 77), (123456, 0), (2**31 - 1, 5)])
def test_streams_match_the_kernel_model(seed, seed2):
    # 700 uniform values take 1400 mt19937 words: two twists; the normal stream passes many rejections
    assert bits(ops.UniformReal(seed, seed2)((700,))) == bits(ref_uniform_real(seed, seed2, 700))
    assert bits(ops.StandardNormal(seed, seed2)((5, 101))) == bits(ref_standard_normal(seed, seed2, 505))
    # a span of 3 * 2^30 rejects a quarter of the words
    low, high = -(2**31), 2**31 - 2**30 - 1
    got = ops.UniformInt(seed, seed2)((300,), Tensor(low, ms.int32), Tensor(high, ms.int32)).asnumpy()
    np.testing.assert_array_equal(got, ref_uniform_int(seed, seed2, 300, low, high))


def test_a_call_continues_where_the_last_ended():
    sn = ops.StandardNormal(7, 8)
    first, second = sn((2, 2)).asnumpy().ravel(), sn((2, 2)).asnumpy().ravel()
    assert bits(np.concatenate([first, second])) == bits(ref_standard_normal(7, 8, 8))
    ur = ops.UniformReal(7, 8)
    parts = [ur((300,)).asnumpy() for _ in range(3)]        # 600 values: 1200 words, past the first twist
    assert bits(np.concatenate(parts)) == bits(ref_uniform_real(7, 8, 900))


@pytest.mark.parametrize("shape,density,count", [((3, 4), 0.7, 6), ((9,), 0.5, 20), ((2, 3, 2, 5), 0.6, 11),
                                                  ((4, 4), 0.0, 3), ((50003,), 1.0, 9)])
def test_choice_with_mask_matches_the_shuffle_model(shape, density, count):
    """Even and odd true counts, padding, no true element, and n^2 past the engine's range (one swap
    per draw: 50003 true elements); the second call continues the engine."""
    x = np.random.RandomState(sum(shape)).uniform(size=shape) < density
    op = ops.RandomChoiceWithMask(count, 21, 22)
    state = get_seed(21, 22) % 2147483647 or 1
    for _ in range(2):
        index, mask = op(Tensor(x))
        want_index, want_mask, state = ref_choice(state, x, count)
        np.testing.assert_array_equal(index.asnumpy(), want_index)
        np.testing.assert_array_equal(mask.asnumpy(), want_mask)


def test_shuffle_permutes_rows_and_keeps_one_engine_per_shape():
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    op = ops.RandomShuffle(5, 6)
    state = get_seed(5, 6) % 2147483647 or 1
    perm, state = ref_shuffle(state, 10)
    np.testing.assert_array_equal(op(Tensor(x)).asnumpy(), x[perm])
    # another shape: a fresh engine; the first shape then continues its own
    np.testing.assert_array_equal(op(Tensor(np.arange(7))).asnumpy(), ref_shuffle(get_seed(5, 6) % 2147483647, 7)[0])
    perm, _ = ref_shuffle(state, 10)
    np.testing.assert_array_equal(op(Tensor(x)).asnumpy(), x[perm])
    # one row, or a scalar: copied, no draw
    assert ops.RandomShuffle(5, 6)(Tensor(np.float32(3.0))).asnumpy() == np.float32(3.0)
    ms.set_seed(2)
    got = ops.shuffle(Tensor(np.arange(5, dtype=np.int64))).asnumpy()
    assert sorted(got.tolist()) == list(range(5)) and got.dtype == np.int64


def test_shapes_scalar_and_empty():
    assert ops.StandardNormal(1, 2)(()).shape == ()
    assert bits(ops.StandardNormal(1, 2)(())) == bits(ref_standard_normal(1, 2, 1))
    empty = ops.UniformReal(1, 2)((2, 0))
    assert empty.shape == (2, 0) and empty.dtype == ms.float32
    assert ops.StandardNormal(1, 2)(Tensor(np.array([2, 3], np.int32))).shape == (2, 3)


# --- distributions, over fixed seeds (deterministic) ---------------------------------------------------

def ks_statistic(sample: np.ndarray, cdf) -> float:
    x = np.sort(sample.astype(np.float64))
    n = len(x)
    c = cdf(x)
    return float(max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n)))


KS_CRITICAL_001 = 1.95       # sqrt(n) * D above this: rejected at alpha = 0.001


def test_standard_normal_distribution():
    z = ops.StandardNormal(11, 12)((20000,)).asnumpy()
    assert abs(z.mean()) < 4 / math.sqrt(z.size)
    assert abs(z.var() - 1.0) < 4 * math.sqrt(2 / z.size)
    normal_cdf = np.vectorize(lambda v: 0.5 * (1 + math.erf(v / math.sqrt(2))))
    assert math.sqrt(z.size) * ks_statistic(z, normal_cdf) < KS_CRITICAL_001


def test_uniform_distributions():
    u = ops.UniformReal(13, 14)((20000,)).asnumpy()
    assert u.min() >= 0.0 and u.max() < 1.0
    assert math.sqrt(u.size) * ks_statistic(u, lambda v: v) < KS_CRITICAL_001
    k = ops.UniformInt(13, 14)((7000,), Tensor(3, ms.int32), Tensor(10, ms.int32)).asnumpy()
    counts = np.bincount(k - 3, minlength=7)
    assert k.min() == 3 and k.max() == 9 and counts.size == 7
    chi2 = float(((counts - 1000.0) ** 2 / 1000.0).sum())
    assert chi2 < 22.46          # chi-square, 6 degrees of freedom, alpha = 0.001


def test_functions_scale_and_cast():
    ms.set_seed(3)
    z = ops.standard_normal((3, 4)).asnumpy()
    ms.set_seed(3)
    mean, std = np.array([1.0, -2.0, 0.5, 3.0], np.float32), np.float32(2.5)
    got = ops.normal((3, 4), Tensor(mean), Tensor(std), seed=0).asnumpy()
    ms.set_seed(3)
    again = ops.normal((3, 4), Tensor(mean), Tensor(std)).asnumpy()
    assert bits(again) == bits(z * std + mean)        # the same (3, 0) pair: one float32 multiply-add
    assert bits(got) == bits(again)                   # seed=0 is the unset op seed
    ms.set_seed(3)
    assert ops.randn(2, 3, dtype=ms.float16).dtype == ms.float16
    ms.set_seed(3)
    r = ops.randint(-4, 4, (500,), dtype=ms.int8).asnumpy()
    assert r.dtype == np.int8 and r.min() == -4 and r.max() == 3
    like = ops.randint_like(Tensor(np.zeros((2, 3), np.int16)), 0, 2)
    assert like.shape == (2, 3) and like.dtype == ms.int16
    assert ops.rand_like(Tensor(np.zeros(4, np.float64))).dtype == ms.float64
    assert ops.randn_like(Tensor(np.zeros(4, np.int32))).dtype == ms.float32


def test_generator_ops_draw_the_samplers_with_the_next_seed_pair():
    """Tensor.uniform/uniform_/normal_ and ops.uniform_/normal_ (Ascend-only in MindSpore): UniformReal or
    StandardNormal with the next seed pair of set_seed, scaled, in the tensor's dtype; in place where
    the name ends in an underscore."""
    ms.set_seed(6)
    x = Tensor(np.zeros((2, 3), np.float16))
    got = x.uniform(-1.0, 3.0)
    ms.set_seed(6)
    u = ops.UniformReal(*graph_seed(None, "uniform"))((2, 3)).asnumpy()
    np.testing.assert_array_equal(got.asnumpy(), (u * np.float32(4.0) - np.float32(1.0)).astype(np.float16))
    assert not x.asnumpy().any()                      # Tensor.uniform leaves x alone
    ms.set_seed(6)
    y = Tensor(np.zeros(5, np.float32))
    assert y.normal_(2.0, 0.5) is y
    ms.set_seed(6)
    z = ops.StandardNormal(*graph_seed(None, "normal_"))((5,)).asnumpy()
    assert bits(y) == bits(z * np.float32(0.5) + np.float32(2.0))
    w = ops.uniform_(Tensor(np.zeros(20000, np.float32)), 2, 5).asnumpy()
    assert w.min() >= 2.0 and w.max() < 5.0
    assert math.sqrt(w.size) * ks_statistic((w - 2.0) / 3.0, lambda v: v) < KS_CRITICAL_001
    with pytest.raises(InvalidParamError, match="generator"):
        ops.normal_(Tensor(np.zeros(2, np.float32)), generator=object())
    with pytest.raises(TypeError):
        Tensor(np.zeros(2, np.float32)).uniform(2.0, 1.0)


def test_normal_gradients():
    """d/dmean sum(z * std + mean) is the broadcast count, d/dstd is sum(z): the draw is a constant."""
    def f(mean, std):
        ms.set_seed(9)
        return ops.normal((2, 3), mean, std).sum()
    mean, std = Tensor(np.zeros(3, np.float32)), Tensor(np.float32(1.5))
    g_mean, g_std = ms.grad(f, grad_position=(0, 1))(mean, std)
    ms.set_seed(9)
    z = ops.standard_normal((2, 3)).asnumpy().astype(np.float64)
    np.testing.assert_allclose(g_mean.asnumpy(), np.full(3, 2.0), rtol=0, atol=0)
    np.testing.assert_allclose(g_std.asnumpy(), z.sum(), rtol=1e-6)


def test_graph_mode_continues_the_stream_every_step():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.sn = ops.StandardNormal(1, 2)

        def construct(self, x):
            return self.sn((16,)) + x, ops.rand(3) + x

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(4)
    net, x = Net(), Tensor(np.float32(0.0))
    first, second = net(x), net(x)
    assert bits(first[0]) == FIXTURE["StandardNormal(1,2) call1"]
    assert bits(second[0]) == FIXTURE["StandardNormal(1,2) call2"]
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(4)
    rand_op = ops.UniformReal(*graph_seed(None, "rand"))
    assert bits(np.concatenate([first[1].asnumpy(), second[1].asnumpy()])) == bits(rand_op((6,)))


@pytest.mark.parametrize("call,kind", [
    (lambda: ops.StandardNormal(seed=-1), ValueError),
    (lambda: ops.UniformReal(seed2=1.5), TypeError),
    (lambda: ops.StandardNormal(1, 2)((2, -1)), ValueError),
    (lambda: ops.StandardNormal(1, 2)([2, 3]), TypeError),
    (lambda: ops.UniformInt(1, 2)((2,), Tensor(5, ms.int32), Tensor(5, ms.int32)), RuntimeError),
    (lambda: ops.UniformInt(1, 2)((2,), 0, Tensor(5, ms.int32)), TypeError),
    (lambda: ops.normal((2, 0), 0.0, 1.0), ValueError),
    (lambda: ops.normal((2,), "0", 1.0), TypeError),
    (lambda: ops.uniform((2,), 0.0, 1.0), TypeError),
    (lambda: ops.randn(2, dtype=ms.int32), ValueError),
    (lambda: ops.randint(0, 5, [2]), ValueError),
    (lambda: ops.randint(0, 5.0, (2,)), TypeError),
    (lambda: ops.randint(3, 3, (2,)), RuntimeError),
    (lambda: ops.rand_like(np.zeros(3)), TypeError),
    (lambda: ops.standard_normal((2,), seed=-3), ValueError),
    (lambda: ops.RandomChoiceWithMask(0), ValueError),
    (lambda: ops.RandomChoiceWithMask(2.0), TypeError),
    (lambda: ops.RandomChoiceWithMask(2)(Tensor(np.ones(3, np.float32))), TypeError),
    (lambda: ops.RandomChoiceWithMask(2)(Tensor(np.ones((1,) * 6, bool))), ValueError),
])
def test_errors_are_mindspores(call, kind):
    with pytest.raises(kind):
        call()


def test_one_random_kernel_serves_every_shape_of_an_op_and_dtype():
    """Dynamic-shape random kernels: the element count (and RandomChoiceWithMask's dims, RandomShuffle's
    rows) are tiling data, so every shape shares one kernel per op and dtype (Dropout's keep_prob and a
    choice's rank are compiled in: another is another kernel); the numbers through the shared kernels
    are the fixture tests above and tests/test_dropout.py."""
    from ascendemu.kernels.library import plan_kernel
    from ascendemu.kernels.ops.random import ENGINE, STATE_WORDS
    from ascendemu.kernels.signature import OpSignature, TensorDesc

    def plans(op, inputs, shapes, attr="shape", **attrs):
        found = [plan_kernel(OpSignature.make(op, inputs(s), **{attr: s} if attr else {}, **attrs)) for s in shapes]
        assert None not in {p.family for p in found}, f"{op} has size-specialised kernels"
        return found

    shapes = [(7,), (3, 5), (2, 1, 4), (0,), (2049,)]
    for op in ("StandardNormal", "UniformReal", "UniformInt", "StandardLaplace"):
        state = [TensorDesc((STATE_WORDS[ENGINE[op]],), "int64")]
        bounds = [TensorDesc((), "int32")] * 2 if op == "UniformInt" else []
        found = plans(op, lambda s: state + bounds, shapes)
        assert len({p.family for p in found}) == 1
        assert [p.tiling_data for p in found] == [(7,), (15,), (8,), (0,), (2049,)]

    def dropout(dtype, keep):
        return plans("Dropout", lambda s: [TensorDesc(s, dtype), TensorDesc((3,), "int32")], shapes[:3] + [(300, 500)],
                     attr=None, keep_prob=keep)
    found = dropout("float32", 0.9)
    assert len({p.family for p in found}) == 1 and [p.tiling_data for p in found] == [(7,), (15,), (8,), (150000,)]
    assert [p.block_dim for p in found] == [1, 1, 1, 2]     # the block split stays the plan's, per shape
    assert {p.family for p in found}.isdisjoint({p.family for p in dropout("float16", 0.9) + dropout("float32", 0.5)})

    state = [TensorDesc((1,), "int64")]
    shuffles = plans("RandomShuffle", lambda s: [TensorDesc(s, "float32")] + state, [(), (6,), (4, 3), (9, 2, 2)],
                     attr=None)
    assert len({p.family for p in shuffles}) == 1
    assert [p.tiling_data for p in shuffles] == [(1, 1), (6, 1), (4, 3), (9, 4)]
    choices = plans("RandomChoiceWithMask", lambda s: [TensorDesc(s, "bool")] + state, [(4, 3), (7, 2)], attr=None,
                    count=5)
    assert len({p.family for p in choices}) == 1
    assert [p.tiling_data for p in choices] == [(12, 5, 4, 3), (14, 5, 7, 2)]
