"""Dynamic-shape kernels: one compiled kernel per op family, dtypes and static tiling facts, the
signature's sizes passed at launch as tiling data (the int64 values after the workspaces).

Oracles: numpy references of each op on every shape (tests/test_ops.py's), and the cache's own
files read back as JSON: signatures that share a family share one kernel_meta entry, others do not.
"""
from __future__ import annotations

import json
import math

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
    outputs = [np.full(d.shape, np.nan if np.dtype(d.dtype).kind in "fc" else 99, d.dtype)     # unwritten shows
               for d in infer_outputs(sig)]
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
    # kernel size, stride and dilation are tiling data too: other geometries run on the same kernel
    for (xs, ws), stride, dilation in ((((1, 3, 8, 8), (4, 3, 3, 3)), 2, 1), (((2, 4, 11, 9), (8, 4, 5, 3)), 1, 2),
                                       (((1, 6, 9, 9), (4, 6, 1, 1)), 2, 1), (((1, 3, 16, 16), (4, 3, 7, 7)), 2, 1)):
        s = OpSignature.make("Conv2D", [(xs, "float32"), (ws, "float32")], out_channel=ws[0], kernel_size=ws[2:],
                             stride=stride, dilation=dilation, pad_mode="pad", pad=(1, 2, 0, 1))
        k = cache.get(s)
        assert k.name == kernels[0].name
        x, w = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
        (y,) = run(k, s, [x, w])
        want = conv_ref(x.astype(np.float64), w.astype(np.float64), (stride,) * 2, (1, 2, 0, 1), (dilation,) * 2, 1)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)


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


# ------------------------------------------------------------- products and data movement

MATMULS = [  # (x1, x2, attrs): float32 products of one route, transposes and batch rank at several sizes
    ((37, 19), (19, 23), {}),
    ((600, 256), (256, 300), {}),        # more blocks than host threads: the host runs it as 2
    ((5, 1), (1, 7), {}),
]


def test_products_of_any_size_share_one_kernel_and_any_block_count_computes_them(cache):
    rng = np.random.default_rng(4)
    sigs = [OpSignature.make("MatMul", [(a, "float32"), (b, "float32")], **attrs) for a, b, attrs in MATMULS]
    kernels = [cache.get(s) for s in sigs]
    assert len({k.name for k in kernels}) == 1 and all(k.host_blocks for k in kernels)
    for (a_shape, b_shape, _), s, k in zip(MATMULS, sigs, kernels):
        a, b = rng.standard_normal(a_shape).astype(np.float32), rng.standard_normal(b_shape).astype(np.float32)
        (y,) = run(k, s, [a, b])
        np.testing.assert_allclose(y, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
        for blocks in (1, 2, 3):        # the BLAS grid follows the run-time block count: same bits
            out = np.full(y.shape, np.nan, np.float32)
            argv = k.argv([a.ctypes.data, b.ctypes.data, out.ctypes.data])
            for block in range(blocks):
                k.call_block(argv, block, blocks)
            np.testing.assert_array_equal(out, y)
    # the BLAS route reads its transposes at run time: a layer's forward and gradient products share it
    for ta, tb in ((True, False), (False, True), (True, True)):
        a = rng.standard_normal((19, 37) if ta else (37, 19)).astype(np.float32)
        b = rng.standard_normal((23, 19) if tb else (19, 23)).astype(np.float32)
        s = OpSignature.make("MatMul", [(a.shape, "float32"), (b.shape, "float32")], transpose_a=ta, transpose_b=tb)
        k = cache.get(s)
        assert k.name == kernels[0].name
        (y,) = run(k, s, [a, b])
        want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)
    # the blocked route (float16) compiles them in: its loads' strides and B's packing order differ
    plain = OpSignature.make("MatMul", [((8, 4), "float16"), ((4, 6), "float16")])
    transposed = OpSignature.make("MatMul", [((4, 8), "float16"), ((4, 6), "float16")], transpose_a=True)
    assert cache.get(plain).name != cache.get(transposed).name


def test_batch_products_up_to_batch_rank_4_share_a_kernel_broadcast_or_not(cache):
    rng = np.random.default_rng(5)
    names = set()
    for a_shape, b_shape in (((2, 1, 5, 7), (3, 7, 4)), ((1, 4, 3, 6), (2, 1, 6, 9)), ((3, 2, 8, 2), (3, 2, 2, 5)),
                             ((3, 5, 7), (3, 7, 2)), ((2, 1, 3, 3, 4), (3, 1, 4, 6))):      # ranks 3 to 5 too
        s = OpSignature.make("BatchMatMul", [(a_shape, "float16"), (b_shape, "float16")])
        k = cache.get(s)
        names.add(k.name)
        a, b = rng.standard_normal(a_shape).astype(np.float16), rng.standard_normal(b_shape).astype(np.float16)
        (y,) = run(k, s, [a, b])
        np.testing.assert_allclose(y, (a.astype(np.float64) @ b).astype(np.float16), rtol=2e-3, atol=2e-3)
    assert len(names) == 1


def _ints(shape, low, high, seed=6):
    return np.random.default_rng(seed).integers(low, high, shape).astype(np.int32)


def _floats(shape, dtype="float32", seed=7):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _segment_sum(x, ids, count):
    y = np.zeros((count,) + x.shape[ids.ndim:], x.dtype)
    np.add.at(y, ids[ids < count], x[ids < count])      # ascending row order, as the kernel adds
    return y


def _scatter_nd(indices, updates, shape):
    y = np.zeros(shape, updates.dtype)
    np.add.at(y, tuple(indices.reshape(-1, indices.shape[-1]).T), updates)
    return y


def _strided_slice_grad(dy, shape, key):
    y = np.zeros(shape, dy.dtype)
    y[key] = dy
    return y


def _one_hot(ix, depth, axis):
    return np.moveaxis(np.eye(depth, dtype=np.float32)[ix], -1, axis) * np.float32(2.5)


# op -> signatures of different sizes that share one kernel, each (inputs, attrs, numpy reference)
MOVEMENT = {
    # a strided inner loop's stride is compiled in (5 here), the other dims and strides are not
    "Transpose": [([_floats((3, 4, 5))], {"perm": (2, 0, 1)}, lambda x: x.transpose(2, 0, 1)),
                  ([_floats((7, 2, 5))], {"perm": (2, 0, 1)}, lambda x: x.transpose(2, 0, 1))],
    "Slice": [([_floats((6, 7, 8))], {"begin": (1, 2, 0), "size": (3, 4, 8)}, lambda x: x[1:4, 2:6]),
              ([_floats((9, 3, 4))], {"begin": (0, 1, 0), "size": (9, 1, 4)}, lambda x: x[:, 1:2])],
    "Pad": [([_floats((3, 4))], {"paddings": ((1, 2), (0, 3))}, lambda x: np.pad(x, ((1, 2), (0, 3)))),
            ([_floats((5, 2))], {"paddings": ((0, 0), (4, 1))}, lambda x: np.pad(x, ((0, 0), (4, 1))))],
    "Concat": [([_floats((2, 3)), _floats((2, 0)), _floats((2, 5))], {"axis": 1}, lambda *x: np.concatenate(x, 1)),
               ([_floats((4, 1)), _floats((4, 6)), _floats((4, 2))], {"axis": 1}, lambda *x: np.concatenate(x, 1))],
    "Split": [([_floats((4, 6, 2))], {"axis": 1, "output_num": 3}, lambda x: np.split(x, 3, 1)),
              ([_floats((1, 9, 5))], {"axis": 1, "output_num": 3}, lambda x: np.split(x, 3, 1))],
    "Gather": [([_floats((5, 6, 3)), _ints((2, 4), -1, 7)], {"axis": 1},
                lambda p, i: np.where(((i >= 0) & (i < 6))[None, :, :, None], p[:, np.clip(i, 0, 5)], 0)),
               ([_floats((9, 2)), _ints((5,), 0, 9)], {"axis": 0}, lambda p, i: p[i])],
    "UnsortedSegmentSum": [([_floats((10, 3)), _ints((10,), 0, 5)], {"num_segments": 4},
                            lambda x, i: _segment_sum(x, i, 4)),
                           ([_floats((6, 2, 3)), _ints((6, 2), 0, 3)], {"num_segments": 3},
                            lambda x, i: _segment_sum(x, i, 3))],
    "StridedSlice": [([_floats((7, 9, 5))], {"begin": (1, 8, 0), "end": (6, 0, 5), "strides": (2, -3, 1)},
                      lambda x: x[1:6:2, 8:0:-3]),
                     ([_floats((4, 20, 3))], {"begin": (0, 19, 1), "end": (4, 2, 3), "strides": (3, -5, 1)},
                      lambda x: x[0:4:3, 19:2:-5, 1:3])],
    "StridedSliceGrad": [([_floats((3, 3, 5))], {"shapex": (7, 9, 5), "begin": (1, 8, 0), "end": (6, 0, 5),
                                                 "strides": (2, -3, 1)},
                          lambda d: _strided_slice_grad(d, (7, 9, 5), np.s_[1:6:2, 8:0:-3])),
                         ([_floats((2, 4, 2))], {"shapex": (4, 20, 3), "begin": (0, 19, 1), "end": (4, 2, 3),
                                                 "strides": (3, -5, 1)},
                          lambda d: _strided_slice_grad(d, (4, 20, 3), np.s_[0:4:3, 19:2:-5, 1:3]))],
    "Tile": [([_floats((3, 1, 4))], {"multiples": (2, 3, 1)}, lambda x: np.tile(x, (2, 3, 1))),
             ([_floats((2, 1, 5))], {"multiples": (4, 2, 1)}, lambda x: np.tile(x, (4, 2, 1)))],
    "OneHot": [([_ints((3, 4), 0, 5), np.float32(2.5), np.float32(0)], {"depth": 5, "axis": 1},
                lambda i, *_: _one_hot(i, 5, 1)),
               ([_ints((2, 6), 0, 7), np.float32(2.5), np.float32(0)], {"depth": 7, "axis": 1},
                lambda i, *_: _one_hot(i, 7, 1))],
    "GatherNd": [([_floats((4, 5, 3)), _ints((6, 2), 0, 4)], {}, lambda x, i: x[i[:, 0], i[:, 1]]),
                 ([_floats((3, 6, 2)), _ints((4, 2), 0, 3)], {}, lambda x, i: x[i[:, 0], i[:, 1]])],
    "ScatterNd": [([_ints((6, 2), 0, 4), _floats((6, 3))], {"shape": (4, 5, 3)},
                   lambda i, u: _scatter_nd(i, u, (4, 5, 3))),
                  ([_ints((3, 2), 0, 3), _floats((3, 8))], {"shape": (3, 4, 8)},
                   lambda i, u: _scatter_nd(i, u, (3, 4, 8)))],
    "GatherD": [([_floats((4, 5, 3)), _ints((4, 2, 3), -5, 5)], {"dim": 1},
                 lambda x, i: np.take_along_axis(x, i % 5, 1)),
                ([_floats((2, 7, 6)), _ints((2, 3, 6), -7, 7)], {"dim": 1},
                 lambda x, i: np.take_along_axis(x, i % 7, 1))],
}


def _running_arg(x, axis, pick):
    """Cummax/Cummin along ``axis``: the running extremum and the (latest) index it came from."""
    x = np.moveaxis(x, axis, -1)
    values, index = np.empty_like(x), np.zeros(x.shape, np.int32)
    for line in np.ndindex(x.shape[:-1]):
        best, at = x[line][0], 0
        for t, v in enumerate(x[line]):
            if pick(v, best) or v == best:
                best, at = v, t
            values[line][t], index[line][t] = best, at
    return [np.moveaxis(values, -1, axis), np.moveaxis(index, -1, axis)]


def _mirror_grad(dy, shape, pads, mode):
    """The adjoint of np.pad(mode): every dout element added to the x element it copies."""
    source = np.pad(np.arange(np.prod(shape)).reshape(shape), pads, mode=mode)
    return np.bincount(source.ravel(), dy.ravel().astype(np.float64), np.prod(shape)).reshape(shape).astype(dy.dtype)


def _tensor_scatter(x, indices, updates, fold):
    y = x.copy()
    for tup, u in zip(indices.reshape(-1, indices.shape[-1]), updates.reshape((-1,) + x.shape[indices.shape[-1]:])):
        y[tuple(tup)] = fold(y[tuple(tup)], u)
    return y


def _segment_max(x, ids, count):
    y = np.full((count,) + x.shape[1:], np.finfo(x.dtype).min, x.dtype)
    np.maximum.at(y, ids[(ids >= 0) & (ids < count)], x[(ids >= 0) & (ids < count)])
    return y


def _whole(shape, seed=8):
    """Small integers as float32: sums and products of a few are exact in any order."""
    return _ints(shape, -4, 5, seed).astype(np.float32)


def _topk(x, k):
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return [np.take_along_axis(x, order, -1), order.astype(np.int32)]


# op -> signatures of different sizes that share one kernel (orders, scans and row folds read their
# sizes as tiling data too), each (inputs, attrs, numpy reference)
ORDERS_SCANS_FOLDS = {
    "Argmax": [([_whole((4, 7))], {"axis": 1}, lambda x: np.argmax(x, 1).astype(np.int32)),
               ([_whole((3, 5, 2))], {"axis": 1}, lambda x: np.argmax(x, 1).astype(np.int32))],
    "ArgMinWithValue": [([_whole((6, 3))], {"axis": 0}, lambda x: [np.argmin(x, 0).astype(np.int32), x.min(0)]),
                        ([_whole((2, 9, 4))], {"axis": 1}, lambda x: [np.argmin(x, 1).astype(np.int32), x.min(1)])],
    "TopK": [([_floats((3, 10))], {"k": 4}, lambda x: _topk(x, 4)),
             ([_floats((2, 2, 33))], {"k": 7}, lambda x: _topk(x, 7))],
    "Sort": [([_whole((5, 6, 3))], {"axis": 1},
              lambda x: [np.sort(x, 1, kind="stable"), np.argsort(x, 1, kind="stable").astype(np.int32)]),
             ([_whole((2, 9, 4))], {"axis": 1},
              lambda x: [np.sort(x, 1, kind="stable"), np.argsort(x, 1, kind="stable").astype(np.int32)])],
    "CumSum": [([_ints((4, 6), -9, 9)], {"axis": 1}, lambda x: np.cumsum(x, 1, dtype=np.int32)),
               ([_ints((3, 8), -9, 9)], {"axis": 1}, lambda x: np.cumsum(x, 1, dtype=np.int32))],
    "CumProd": [([_whole((5, 3, 2))], {"axis": 1, "exclusive": True, "reverse": True},
                 lambda x: np.flip(np.cumprod(np.flip(np.concatenate([x[:, 1:], np.ones_like(x[:, :1])], 1), 1), 1), 1)),
                ([_whole((2, 6, 4))], {"axis": 1, "exclusive": True, "reverse": True},
                 lambda x: np.flip(np.cumprod(np.flip(np.concatenate([x[:, 1:], np.ones_like(x[:, :1])], 1), 1), 1), 1))],
    "Cummax": [([_whole((4, 9, 2))], {"axis": 1}, lambda x: _running_arg(x, 1, np.greater)),     # strided lines:
               ([_whole((3, 5, 7))], {"axis": 1}, lambda x: _running_arg(x, 1, np.greater))],  # any stride
    "MirrorPad": [([_floats((3, 4))], {"paddings": ((1, 2), (0, 3)), "mode": "REFLECT"},
                   lambda x: np.pad(x, ((1, 2), (0, 3)), mode="reflect")),
                  ([_floats((6, 5))], {"paddings": ((3, 0), (2, 2)), "mode": "REFLECT"},
                   lambda x: np.pad(x, ((3, 0), (2, 2)), mode="reflect"))],
    "MirrorPadGrad": [([_whole((6, 7))], {"paddings": ((1, 2), (0, 3)), "mode": "SYMMETRIC"},
                       lambda d: _mirror_grad(d, (3, 4), ((1, 2), (0, 3)), "symmetric")),
                      ([_whole((9, 5))], {"paddings": ((2, 1), (1, 1)), "mode": "SYMMETRIC"},
                       lambda d: _mirror_grad(d, (6, 3), ((2, 1), (1, 1)), "symmetric"))],
    "TensorScatterUpdate": [([_floats((5, 3)), _ints((4, 1), 0, 5), _floats((4, 3), seed=9)], {},
                             lambda x, i, u: _tensor_scatter(x, i, u, lambda a, b: b)),
                            ([_floats((8, 2)), _ints((6, 1), 0, 8), _floats((6, 2), seed=9)], {},
                             lambda x, i, u: _tensor_scatter(x, i, u, lambda a, b: b))],
    "TensorScatterAdd": [([_whole((4, 5, 2)), _ints((3, 2), 0, 4), _whole((3, 2), 9)], {},
                          lambda x, i, u: _tensor_scatter(x, i, u, np.add)),
                         ([_whole((3, 3, 6)), _ints((7, 2), 0, 3), _whole((7, 6), 9)], {},
                          lambda x, i, u: _tensor_scatter(x, i, u, np.add))],
    "UnsortedSegmentMax": [([_floats((10, 3)), _ints((10,), -1, 6)], {"num_segments": 5},
                            lambda x, i: _segment_max(x, i, 5)),
                           ([_floats((4, 2)), _ints((4,), 0, 3)], {"num_segments": 3},
                            lambda x, i: _segment_max(x, i, 3))],
}


@pytest.mark.parametrize("op", list(MOVEMENT) + list(ORDERS_SCANS_FOLDS))
def test_ops_of_any_size_share_one_kernel_and_match_numpy_bit_for_bit(cache, op):
    names = set()
    for arrays, attrs, ref in {**MOVEMENT, **ORDERS_SCANS_FOLDS}[op]:
        arrays = [np.asarray(a) for a in arrays]
        s = OpSignature.make(op, [(a.shape, str(a.dtype)) for a in arrays], **attrs)
        k = cache.get(s)
        names.add(k.name)
        got = run(k, s, arrays)
        want = ref(*arrays)
        for g, w in zip(got, want if isinstance(want, list) else [want]):
            np.testing.assert_array_equal(g, w)
    assert len(names) == 1


def test_sparse_cross_entropy_of_any_batch_and_class_count_is_one_kernel(cache):
    names = set()
    for n, c in ((8, 10), (5, 3), (16, 33)):
        logits, labels = _floats((n, c)), _ints((n,), 0, c)
        s = OpSignature.make("SparseSoftmaxCrossEntropyWithLogits", [((n, c), "float32"), ((n,), "int32")])
        k = cache.get(s)
        names.add(k.name)
        loss, backprop = run(k, s, [logits, labels])
        z = logits.astype(np.float64)
        log_p = z - z.max(1, keepdims=True)
        log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
        np.testing.assert_allclose(loss, -log_p[np.arange(n), labels], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(backprop, np.exp(log_p) - np.eye(c)[labels], rtol=1e-5, atol=1e-6)
    assert len(names) == 1


def _softmax(x, axis):
    e = np.exp(x.astype(np.float64) - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def test_softmax_of_any_row_count_and_length_is_one_kernel_per_row_stride(cache):
    """The axis length and row counts are tiling data; the row's stride (1: the last axis) is compiled in."""
    for op, ref in (("Softmax", _softmax), ("LogSoftmax", lambda x, a: np.log(_softmax(x, a)))):
        names = {}
        for shape, axis in (((8, 10), -1), ((5, 3, 33), -1), ((1, 700), 1), ((4, 6, 5), 1), ((2, 3, 5), 1)):
            x = _floats(shape)
            s = OpSignature.make(op, [(shape, "float32")], axis=axis)
            k = cache.get(s)
            names.setdefault(math.prod(shape[axis % len(shape) + 1:]), set()).add(k.name)
            (y,) = run(k, s, [x])
            np.testing.assert_allclose(y, ref(x, axis), rtol=1e-5, atol=1e-6)
        assert {stride: len(n) for stride, n in names.items()} == {1: 1, 5: 1}


def test_layer_norm_and_its_grad_of_any_size_are_one_kernel_each(cache):
    """Rows, row length and gamma's size are tiling data; gamma's layout on a row is compiled in (here: one
    gamma element per row element). Oracle: the closed forms in float64."""
    names = set()
    for shape in ((4, 6), (3, 2, 8), (7, 33)):
        norm = len(shape) - 1 if len(shape) == 2 else 1
        axes = tuple(range(norm, len(shape)))
        x, g, b, dy = _floats(shape), _floats(shape[norm:], seed=1), _floats(shape[norm:], seed=2), _floats(shape, seed=3)
        attrs = dict(begin_norm_axis=norm, begin_params_axis=norm, epsilon=1e-5)
        s = OpSignature.make("LayerNorm", [(shape, "float32"), (g.shape, "float32"), (b.shape, "float32")], **attrs)
        k = cache.get(s)
        y, mean, var = run(k, s, [x, g, b])
        x64 = x.astype(np.float64)
        mu, v = x64.mean(axes, keepdims=True), x64.var(axes, keepdims=True)
        xhat = (x64 - mu) / np.sqrt(v + 1e-5)
        np.testing.assert_allclose(y, xhat * g + b, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
        sg = OpSignature.make("LayerNormGrad", [(shape, "float32"), (shape, "float32"), (g.shape, "float32"),
                                                (mean.shape, "float32"), (var.shape, "float32")], **attrs)
        kg = cache.get(sg)
        dx, dg, db = run(kg, sg, [dy, x, g, mean, var])
        gy = dy.astype(np.float64) * g
        want = (gy - gy.mean(axes, keepdims=True) - xhat * (gy * xhat).mean(axes, keepdims=True)) / np.sqrt(v + 1e-5)
        np.testing.assert_allclose(dx, want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(dg, (dy * xhat).sum(tuple(range(norm))), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(db, dy.astype(np.float64).sum(tuple(range(norm))), rtol=1e-5, atol=1e-5)
        names |= {k.name, kg.name}
    assert len(names) == 2


def _fold_sum(row: np.ndarray) -> np.float64:
    """The reduction kernels' sum of one contiguous row: eight float64 partial sums over the row in
    steps of eight, the tail into the first, then the partials added in order."""
    parts = [0.0] * 8
    whole = len(row) // 8 * 8
    for j in range(0, whole, 8):
        for k in range(8):
            parts[k] += float(row[j + k])
    for j in range(whole, len(row)):
        parts[0] += float(row[j])
    total = parts[0]
    for k in range(1, 8):
        total += parts[k]
    return np.float64(total)


def test_whole_and_row_reductions_share_a_kernel_and_column_and_middle_ones_another(cache):
    """A reduction's pattern always starts with a kept run (of one when the leading axes are reduced):
    a whole-tensor sum is a row sum of one row, a column sum (bias gradients) a middle-axis sum of one
    outer slice; the folds and their order are the same, so the results are bit for bit."""
    rng = np.random.default_rng(11)

    def reduce(shape, axes):
        x = (rng.standard_normal(shape) * 4).astype(np.float32)
        s = OpSignature.make("ReduceSum", [(shape, "float32")], axis=axes)
        k = cache.get(s)
        return k.name, x, run(k, s, [x])[0]

    whole, x, y = reduce((37,), ())
    assert y.tobytes() == np.float32(_fold_sum(x)).tobytes()
    rows, x, y = reduce((5, 19), (1,))
    assert y.tobytes() == np.array([_fold_sum(r) for r in x], np.float32).tobytes()
    assert whole == rows == reduce((3, 4, 5), (0, 1, 2))[0]
    column, x, y = reduce((6, 7), (0,))
    np.testing.assert_array_equal(y, x.astype(np.float64).cumsum(axis=0)[-1].astype(np.float32))
    middle, x, y = reduce((3, 6, 7), (1,))
    np.testing.assert_array_equal(y, x.astype(np.float64).cumsum(axis=1)[:, -1].astype(np.float32))
    assert column == middle != whole


def test_a_one_element_op_runs_on_the_dense_ops_kernel(cache):
    """One output element: every operand is read at its base, so the loop is the dense one's; a scalar
    Div (a loss's mean) and a step counter's Add reuse the dense kernels and compute the same bits."""
    rng = np.random.default_rng(12)
    for op, dtype, ref in (("Div", "float32", np.divide), ("Add", "int32", np.add)):
        dense = OpSignature.make(op, [((9,), dtype)] * 2)
        name = cache.get(dense).name
        for a_shape, b_shape in (((), ()), ((1,), ()), ((1, 1), (1,))):
            a = np.asarray(rng.standard_normal(a_shape) * 8 + 1).astype(dtype)
            b = np.asarray(rng.standard_normal(b_shape) + 3).astype(dtype)
            s = OpSignature.make(op, [(a_shape, dtype), (b_shape, dtype)])
            k = cache.get(s)
            assert k.name == name
            (y,) = run(k, s, [np.ascontiguousarray(a), np.ascontiguousarray(b)])
            assert y.tobytes() == ref(a, b).astype(dtype).reshape(y.shape).tobytes()


MENU_EPILOGUES = {  # epilogue input count -> epilogues one kernel selects at run time (matmul.EPILOGUE_MENU)
    0: [None, (("ReLU", ("in", 0)),), (("Mul", ("in", 0), ("c", 0.125)),), (("Div", ("in", 0), ("c", 8.0)),),
        (("Div", ("in", 0), ("c", 3.0)),)],
    1: [(("Add", ("in", 0), ("in", 1)),), (("Add", ("in", 0), ("in", 1)), ("ReLU", ("t", 0))),
        (("ReluGrad", ("in", 0), ("in", 1)),)],
}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_menu_epilogues_share_one_kernel_per_input_count_bitwise_as_the_unfused_pair(cache, dtype):
    """A float32 product with no epilogue, ReLU, a scale, bias, bias + ReLU or ReLU's gradient selects
    its epilogue at run time: one kernel per epilogue input count. Every result (float16's compiled-in
    epilogues too) is the bits of the product followed by FusedElemwise of the same program. An
    epilogue off the menu is compiled in (its own kernel)."""
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((37, 19)).astype(dtype), rng.standard_normal((19, 70)).astype(dtype)
    e = rng.standard_normal((70,)).astype(dtype)
    descs = [(a.shape, dtype), (b.shape, dtype)]
    plain = OpSignature.make("MatMul", descs)
    (product,) = run(cache.get(plain), plain, [a, b])
    names = {}
    for count, programs in MENU_EPILOGUES.items():
        for program in programs + ([(("Sub", ("in", 0), ("c", 1.0)),)] if count == 0 else []):
            extras = [e][:count]
            s = plain if program is None else OpSignature.make(
                "MatMul", descs + [(x.shape, dtype) for x in extras], epilogue=program)
            k = cache.get(s)
            names.setdefault(count if program in programs else "off menu", set()).add(k.name)
            (y,) = run(k, s, [a, b, *extras])
            if program is None:
                np.testing.assert_array_equal(y, product)
                continue
            fused = OpSignature.make("FusedElemwise", [(product.shape, dtype)] + [(x.shape, dtype) for x in extras],
                                     program=program)
            (want,) = run(cache.get(fused), fused, [product, *extras])
            np.testing.assert_array_equal(y, want)
    if dtype == "float32":
        assert len(names[0]) == 1 and len(names[1]) == 1 and not names[0] & names["off menu"]
        assert names[0] != names[1]
    else:       # the blocked route has no menu: each epilogue (and constant) is compiled in
        assert len(names[0]) == len(MENU_EPILOGUES[0]) and len(names[1]) == len(MENU_EPILOGUES[1])
