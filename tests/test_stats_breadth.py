"""Statistics, search, segment and integer/bit ops (round 2), against numpy: the search family's kernels
(SearchSorted over one row or per-row sequences, every dtype; PopulationCount within each width; Gcd/Lcm),
the integer shifts, and the compositions over existing ops (histc, cov, the sorted-segment reductions,
Tensor.unique) in PyNative and GRAPH_MODE."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import FeatureNotSupportedError
from ascendemu.frontend import Tensor, nn, ops


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "int64", "uint8"])
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_matches_numpy(dtype, right):
    rng = np.random.RandomState(3)
    seq = np.sort(rng.randint(0, 20, size=9)).astype(dtype)
    values = rng.randint(-1, 22, size=(3, 4)).astype(dtype)
    out = ops.searchsorted(Tensor(seq), Tensor(values), right=right)
    assert out.dtype == ms.int64
    np.testing.assert_array_equal(out.asnumpy(), np.searchsorted(seq, values, side="right" if right else "left"))


def test_searchsorted_rows_and_bounds():
    """A sequence per leading index (LowerBound/UpperBound's 2-D form); int32 on request."""
    seq = np.array([[1.0, 3.0, 5.0, 5.0], [2.0, 4.0, 6.0, 8.0]], np.float32)
    values = np.array([[5.0, 0.0, 6.0], [4.0, 9.0, 2.0]], np.float32)
    lower = ops.LowerBound()(Tensor(seq), Tensor(values))
    upper = ops.UpperBound(ms.int64)(Tensor(seq), Tensor(values))
    assert (lower.dtype, upper.dtype) == (ms.int32, ms.int64)
    for side, got in (("left", lower), ("right", upper)):
        want = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, values)])
        np.testing.assert_array_equal(got.asnumpy(), want)
    short = ops.searchsorted(Tensor(seq), Tensor(values), out_int32=True, side="right")
    assert short.dtype == ms.int32


def test_bucketize_function_is_pytorch_and_primitive_is_tensorflow():
    x = Tensor(np.array([0.0, 3.0, 4.0, 9.0], np.float32))
    np.testing.assert_array_equal(ops.bucketize(x, [1.0, 3.0, 5.0]).asnumpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(ops.bucketize(x, [1.0, 3.0, 5.0], right=True).asnumpy(), [0, 2, 2, 3])
    np.testing.assert_array_equal(ops.Bucketize([1.0, 3.0, 5.0])(x).asnumpy(), [0, 2, 2, 3])


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint64"])
def test_population_count_counts_within_the_width(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, 7, info.max, info.min, info.max // 3], dtype)
    want = [bin(int(v) & ((1 << (8 * x.itemsize)) - 1)).count("1") for v in x]
    out = ops.population_count(Tensor(x))
    assert out.dtype == ms.uint8
    np.testing.assert_array_equal(out.asnumpy(), want)


@pytest.mark.parametrize("dtype", ["int16", "int32", "int64"])
def test_gcd_lcm_broadcast_and_signs(dtype):
    a = np.array([[12, -18, 0, 7, 0]], dtype)
    b = np.array([[8], [-12], [0]], dtype)
    np.testing.assert_array_equal(ops.gcd(Tensor(a), Tensor(b)).asnumpy(), np.gcd(a, b))
    np.testing.assert_array_equal(ops.lcm(Tensor(a), Tensor(b)).asnumpy(), np.lcm(a, b))


def test_one_gcd_lcm_kernel_serves_every_shape_of_an_op_and_dtype():
    """Gcd/Lcm are dynamic-shape kernels (the element count is tiling data): one kernel per op and dtype;
    PopulationCount stays specialised (the suite's by-path kernel: tests/test_binary.py)."""
    from ascendemu.kernels.library import plan_kernel
    from ascendemu.kernels.signature import OpSignature, TensorDesc

    def plans(op, dtype, shapes=((5,), (3, 5), (2, 2, 2))):
        return [plan_kernel(OpSignature.make(op, [TensorDesc(s, dtype)] * 2)) for s in shapes]

    for op in ("Gcd", "Lcm"):
        found = plans(op, "int32")
        assert len({p.family for p in found}) == 1 and None not in {p.family for p in found}
        assert [p.tiling_data for p in found] == [(5,), (15,), (8,)]
        assert {p.family for p in found}.isdisjoint({p.family for p in plans(op, "int64")})
    assert plans("Gcd", "int32")[0].family != plans("Lcm", "int32")[0].family
    assert plan_kernel(OpSignature.make("PopulationCount", [TensorDesc((5,), "int8")])).family is None


def test_gcd_refuses_floats_and_int8():
    with pytest.raises(TypeError):
        ops.gcd(Tensor(np.array([4.0], np.float32)), Tensor(np.array([6.0], np.float32)))
    with pytest.raises(TypeError):
        ops.gcd(Tensor(np.array([4], np.int8)), Tensor(np.array([6], np.int8)))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_shifts(dtype):
    x = np.array([3, 12, -8, 1, 100], dtype=np.int64).astype(dtype)
    s = np.array([1, 2, 3, 0, 2], dtype)
    left = ops.bitwise_left_shift(Tensor(x), Tensor(s)).asnumpy()
    right = ops.bitwise_right_shift(Tensor(x), Tensor(s)).asnumpy()
    np.testing.assert_array_equal(left, np.left_shift(x, s))
    np.testing.assert_array_equal(right, np.right_shift(x, s))
    with pytest.raises(TypeError):
        ops.bitwise_left_shift(Tensor(np.array([1.0], np.float32)), Tensor(np.array([1.0], np.float32)))


def test_rint_rounds_half_to_even():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7], np.float32)
    np.testing.assert_array_equal(ops.Rint()(Tensor(x)).asnumpy(), np.rint(x))


def test_histc_and_bincount():
    x = np.array([1.0, 2.0, 1.0, 4.0, -1.0, 3.0], np.float32)
    want, _ = np.histogram(x, bins=4, range=(0.0, 3.0))
    np.testing.assert_array_equal(ops.histc(Tensor(x), bins=4, min=0.0, max=3.0).asnumpy(), want)
    own, _ = np.histogram(x, bins=5, range=(x.min(), x.max()))
    np.testing.assert_array_equal(ops.histc(Tensor(x), bins=5).asnumpy(), own)
    ids = np.array([3, 1, 2, 3, 1, 3], np.int32)
    w = np.array([0.5, 1.0, 2.0, 1.0, 1.0, 1.0], np.float32)
    np.testing.assert_allclose(ops.bincount(Tensor(ids), Tensor(w), minlength=6).asnumpy(),
                               np.bincount(ids, w, minlength=6))
    np.testing.assert_array_equal(Tensor(ids).bincount().asnumpy(), np.bincount(ids))


@pytest.mark.parametrize("kwargs", [{}, {"correction": 0}, {"fweights": [1, 2, 1, 3]},
                                    {"aweights": [0.5, 1.0, 2.0, 1.0], "fweights": [1, 2, 1, 3]}])
def test_cov_matches_numpy(kwargs):
    x = np.random.RandomState(1).uniform(-2, 2, (3, 4)).astype(np.float32)
    args = {k: Tensor(np.array(v, np.int32 if k == "fweights" else np.float32)) for k, v in kwargs.items()
            if k != "correction"}
    got = ops.cov(Tensor(x), correction=kwargs.get("correction", 1), **args).asnumpy()
    want = np.cov(x.astype(np.float64), ddof=kwargs.get("correction", 1), fweights=kwargs.get("fweights"),
                  aweights=kwargs.get("aweights"))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["Sum", "Mean", "Max", "Min", "Prod"])
def test_segment_reductions(kind):
    x = np.random.RandomState(2).uniform(-2, 2, (5, 3)).astype(np.float32)
    ids = np.array([0, 0, 2, 2, 3], np.int32)
    fold = {"Sum": np.sum, "Mean": np.mean, "Max": np.max, "Min": np.min, "Prod": np.prod}[kind]
    empty = 1.0 if kind == "Prod" else 0.0
    want = np.stack([fold(x[ids == s], axis=0) if (ids == s).any() else np.full(3, empty) for s in range(4)])
    got = getattr(ops, "Segment" + kind)()(Tensor(x), Tensor(ids)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError):
        getattr(ops, "Segment" + kind)()(Tensor(x), Tensor(np.array([1, 0, 2, 2, 3], np.int32)))


def test_tensor_unique_and_allclose():
    x = np.array([3, 1, 2, 3, 1, 3], np.int32)
    values, inverse, counts = Tensor(x).unique(return_inverse=True, return_counts=True)
    want = np.unique(x, return_inverse=True, return_counts=True)
    for got, w in zip((values, inverse, counts), want):
        np.testing.assert_array_equal(got.asnumpy(), w)
    assert inverse.dtype == counts.dtype == ms.int64
    first_seen = Tensor(x).unique(sorted=False)
    np.testing.assert_array_equal(first_seen.asnumpy(), [3, 1, 2])
    a = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    assert a.allclose(a) is True
    assert a.allclose(Tensor(np.array([1.0, 2.0, 3.1], np.float32))) is False


def test_statistics_methods():
    y = np.array([[1.0, 5.0, 3.0, 2.0], [4.0, 7.0, 6.0, 0.0]], np.float32)
    values, index = Tensor(y).argmax_with_value()
    np.testing.assert_array_equal(values.asnumpy(), y.max(0))
    assert index.dtype == ms.int64 and index.asnumpy().tolist() == y.argmax(0).tolist()
    np.testing.assert_array_equal(Tensor(y).ptp(axis=1).asnumpy(), np.ptp(y, axis=1))
    np.testing.assert_array_equal(Tensor(np.ones((2, 3, 4), np.float32)).sum_to_size(3, 1).asnumpy(), np.full((3, 1), 8.0))
    std, mean = ops.ReduceStd(axis=1)(Tensor(y))
    np.testing.assert_allclose(std.asnumpy(), y.std(1, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(mean.asnumpy(), y.mean(1), rtol=1e-6)
    norms = np.sqrt((y.astype(np.float64) ** 2).sum(1, keepdims=True))
    want = y * np.where(norms > 3.0, 3.0 / (norms + 1e-7), 1.0)
    np.testing.assert_allclose(ops.renorm(Tensor(y), 2, 0, 3.0).asnumpy(), want, rtol=1e-5)


class _Searcher(nn.Cell):
    def construct(self, seq, values, x, b):
        return ops.searchsorted(seq, values), ops.gcd(x, b), ops.histc(values, bins=3, min=0.0, max=9.0)


def test_graph_mode():
    """The kernels and the compositions trace into a graph; data-dependent shapes refuse it clearly."""
    ms.set_context(mode=ms.GRAPH_MODE)
    seq = np.array([1.0, 3.0, 5.0, 7.0, 9.0], np.float32)
    values = np.array([3.0, 6.0, 9.0, 0.0], np.float32)
    x, b = np.array([12, -18, 0, 7], np.int32), np.array([8, 12, 5, 0], np.int32)
    found, g, h = _Searcher()(Tensor(seq), Tensor(values), Tensor(x), Tensor(b))
    np.testing.assert_array_equal(found.asnumpy(), np.searchsorted(seq, values))
    np.testing.assert_array_equal(g.asnumpy(), np.gcd(x, b))
    np.testing.assert_array_equal(h.asnumpy(), np.histogram(values, bins=3, range=(0.0, 9.0))[0])

    class Counter(nn.Cell):
        def construct(self, ids):
            return ops.bincount(ids)

    # a small int input whose values set the output's shape is held as a constant of the graph (api.py,
    # HOLD_MAX_ELEMENTS): each value its own graph; a larger one is refused clearly
    small = np.array([1, 2, 2], np.int32)
    np.testing.assert_array_equal(Counter()(Tensor(small)).asnumpy(), np.bincount(small))
    with pytest.raises(FeatureNotSupportedError):
        Counter()(Tensor(np.arange(65, dtype=np.int32)))
