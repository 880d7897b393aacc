"""Dynamic-shape kernels: one compiled kernel per op family, dtypes and static tiling facts, the
signature's sizes passed at launch as tiling data (the int64 values after the workspaces).

Oracles: numpy references of each op on every shape (tests/test_ops.py's), and the cache's own
files read back as JSON: signatures that share a family share one kernel_meta entry, others do not.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascendemu.cache import KernelCache
from ascendemu.kernels.binary import build_info, kernel_from_info
from ascendemu.kernels.library import infer_outputs, plan_kernel
from ascendemu.kernels.ops.src import RuntimeInt
from ascendemu.kernels.signature import OpSignature, TensorDesc
from test_ops import conv_ref, pool_ref, same_pad


def run(kernel, sig: OpSignature, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Every block of ``kernel`` on numpy buffers, its tiling data appended as the ABI says."""
    outputs = [np.full(d.shape, np.nan, d.dtype) for d in infer_outputs(sig)]
    workspaces = [np.zeros(a.nbytes, np.uint8) for a in kernel.args if a.role == "workspace"]
    argv = kernel.argv([a.ctypes.data for a in [*inputs, *outputs, *workspaces]])
    for block in range(kernel.block_dim):
        kernel.call_block(argv, block)
    return outputs


def entries(cache: KernelCache) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(cache.directory.glob("*.json"))]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> KernelCache:
    return KernelCache(tmp_path_factory.mktemp("dynamic"), rank=0)


CONVS = [  # (x, w, attrs): a 3x3 stride-1 float32 GEMM convolution at several sizes, pads and groups
    ((1, 3, 8, 8), (4, 3, 3, 3), {"pad_mode": "same"}),
    ((2, 8, 6, 5), (16, 8, 3, 3), {"pad_mode": "pad", "pad": (1, 0, 2, 1)}),
    ((1, 8, 7, 9), (8, 4, 3, 3), {"pad_mode": "pad", "pad": (1, 1, 1, 1), "group": 2}),
]


def test_convolutions_of_one_geometry_share_one_kernel(cache):
    rng = np.random.default_rng(0)
    sigs = [OpSignature.make("Conv2D", [(x, "float32"), (w, "float32")], out_channel=w[0], kernel_size=w[2:], **a)
            for x, w, a in CONVS]
    before = cache.stats.built
    kernels = cache.get_many(sigs, jobs=1, progress=False)
    assert cache.stats.built - before == 1 and len({k.name for k in kernels}) == 1
    assert len({k.tiling for k in kernels}) == len(CONVS) and all(k.tiling for k in kernels)
    for (xs, ws, attrs), s, k in zip(CONVS, sigs, kernels):
        x, w = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
        pad = (same_pad(xs[2], 3, 1, 1) + same_pad(xs[3], 3, 1, 1) if attrs["pad_mode"] == "same"
               else attrs["pad"])
        (y,) = run(k, s, [x, w])
        want = conv_ref(x.astype(np.float64), w.astype(np.float64), (1, 1), pad, (1, 1), attrs.get("group", 1))
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)
    # a stride-2 convolution is compiled for its stride: another entry
    s2 = OpSignature.make("Conv2D", [((1, 3, 8, 8), "float32"), ((4, 3, 3, 3), "float32")], out_channel=4,
                          kernel_size=(3, 3), stride=2, pad_mode="same")
    assert cache.get(s2).name != kernels[0].name


def test_batch_norm_training_of_any_shape_is_one_kernel(cache):
    rng = np.random.default_rng(1)
    names = set()
    for shape in ((2, 3, 4, 4), (4, 16, 2, 2), (8, 5)):
        c = shape[1]
        x = rng.standard_normal(shape).astype(np.float32)
        scale, bias = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
        mean, var = np.zeros(c, np.float32), np.ones(c, np.float32)
        s = OpSignature.make("BatchNorm", [(shape, "float32")] + [((c,), "float32")] * 4, is_training=True,
                             epsilon=1e-5, momentum=0.1)
        k = cache.get(s)
        names.add(k.name)
        y, new_mean, new_var, _, _ = run(k, s, [x, scale, bias, mean, var])
        axes = (0,) + tuple(range(2, len(shape)))
        bshape = (1, c) + (1,) * (len(shape) - 2)
        mu, v = x.astype(np.float64).mean(axis=axes), x.astype(np.float64).var(axis=axes)
        want = ((x - mu.reshape(bshape)) / np.sqrt(v.reshape(bshape) + 1e-5) * scale.reshape(bshape)
                + bias.reshape(bshape))
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
        count = x.size // c
        np.testing.assert_allclose(new_mean, 0.1 * mu, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(new_var, 0.9 + 0.1 * v * count / (count - 1), rtol=1e-5)
    assert len(names) == 1


def test_max_pool_sizes_share_a_kernel(cache):
    rng = np.random.default_rng(2)
    names = set()
    for shape in ((1, 2, 9, 9), (2, 3, 8, 11)):
        x = rng.standard_normal(shape).astype(np.float32)
        s = OpSignature.make("MaxPool", [(shape, "float32")], kernel_size=3, strides=2, pad_mode="SAME")
        k = cache.get(s)
        names.add(k.name)
        (y,) = run(k, s, [x])
        np.testing.assert_array_equal(y, pool_ref(x, "MaxPool", (3, 3), (2, 2), "SAME").astype(np.float32))
    assert len(names) == 1


broadcast_shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).flatmap(
    lambda out: st.tuples(st.just(tuple(out)),
                          st.tuples(*[st.sampled_from([1, d]) for d in out]),
                          st.tuples(*[st.sampled_from([1, d]) for d in out])))


@settings(max_examples=15, deadline=None)
@given(broadcast_shapes)
def test_broadcasting_add_matches_numpy_on_shared_kernels(cache, shapes):
    """Any broadcast: the loop's kinds (broadcast, unit, strided per coalesced dim) are compiled in,
    its dims and strides read at run time; a loop of the same kinds reuses the entry."""
    _, a_shape, b_shape = shapes
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(a_shape).astype(np.float32), rng.standard_normal(b_shape).astype(np.float32)
    s = OpSignature.make("Add", [(a_shape, "float32"), (b_shape, "float32")])
    (y,) = run(cache.get(s), s, [a, b])
    np.testing.assert_array_equal(y, a + b)


def test_equal_loops_share_an_entry_and_other_loops_do_not(cache):
    def name(*shapes):
        return cache.get(OpSignature.make("Add", [(s, "float32") for s in shapes])).name

    assert name((4, 8), (4, 8)) == name((100,), (100,)) == name((2, 3, 5), (2, 3, 5))     # one flat loop
    assert name((3, 1), (1, 4)) == name((6, 1), (1, 9))              # an outer product
    assert name((3, 1), (1, 4)) != name((4, 8), (4, 8)) != name((8,), (1,))
    assert cache.get(OpSignature.make("Add", [((8,), "float16")] * 2)).name != name((8,), (8,))


def test_the_info_describes_the_family_and_reads_back():
    """What names the entry is the family (unknown-rank operands, static facts as attributes), and the
    cache CLI re-plans an entry from its .info alone."""
    small = plan_kernel(OpSignature.make("Mul", [((4, 8), "float32"), ((8,), "float32")]))
    large = plan_kernel(OpSignature.make("Mul", [((400, 80), "float32"), ((80,), "float32")]))
    info = build_info(small, 0)
    assert info == build_info(large, 0)
    assert kernel_from_info(json.loads(json.dumps(info))) == small.family
    assert small.tiling_data == (32, 4, 8, 8, 1, 0, 1) and large.tiling_data == (32000, 400, 80, 80, 1, 0, 1)
    assert small.launch_facts()["opParaSize"] == 8 * 7


def test_a_generator_cannot_branch_on_a_runtime_value():
    n = RuntimeInt("t_n")
    assert f"{n * 4 + 1}" == "((t_n * 4) + 1)" and str(8 // n) == "(8 // t_n)"
    with pytest.raises(TypeError, match="t_n is unknown when the kernel is generated"):
        bool(n > 3)
    with pytest.raises(TypeError, match="static tiling fact"):
        range(n)
