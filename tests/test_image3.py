"""Round-3 breadth family ``image3``: signal windows, colour spaces, bit packing, unique with padding and the
host-computed data-dependent ops (ListDiff, RaggedRange, sparse_segment_mean, greedy CTC decoding, edit
distance, NMS over an overlap table).

Oracles: numpy's window functions (np.bartlett, np.blackman, np.hamming, np.kaiser), Python's colorsys,
np.packbits, np.unique, hand-computed sequences and distances, and central finite differences of a numpy
formula for sparse_segment_mean's gradient. MindSpore's own answers are in the conformance fixture."""
from __future__ import annotations

import colorsys

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn, ops


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


@pytest.mark.parametrize("n", [0, 1, 2, 7])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_are_numpys(n, periodic):
    """A periodic window is numpy's symmetric window one longer, without its last sample."""
    def ref(fn, *args):
        return fn(n + 1, *args)[:n] if periodic and n > 1 else fn(n, *args)
    length = Tensor(n, ms.int32)
    np.testing.assert_allclose(ops.bartlett_window(length, periodic).asnumpy(), ref(np.bartlett), atol=1e-6)
    np.testing.assert_allclose(ops.BlackmanWindow(periodic)(length).asnumpy(), ref(np.blackman), atol=1e-6)
    np.testing.assert_allclose(ops.hamming_window(n, periodic).asnumpy(), ref(np.hamming), atol=1e-6)
    np.testing.assert_allclose(ops.kaiser_window(n, periodic, 5.0).asnumpy(), ref(np.kaiser, 5.0), rtol=1e-12)


def test_window_dtypes_and_errors_are_mindsporess():
    assert ops.bartlett_window(Tensor(4, ms.int64), dtype=ms.float64).dtype == ms.float64
    assert ops.hamming_window(4, dtype=ms.float16).dtype == ms.float16
    assert ops.hamming_window(1).dtype == ms.float64            # MindSpore's np.ones for a length <= 1
    assert ops.kaiser_window(4).dtype == ms.float64
    general = ops.HammingWindow(False, 0.5, 0.3)(Tensor(np.array([5], np.int32))).asnumpy()
    np.testing.assert_allclose(general, 0.5 - 0.3 * np.cos(2 * np.pi * np.arange(5) / 4), atol=1e-6)
    with pytest.raises(TypeError):
        ops.bartlett_window(5)                                   # the length is a Tensor
    with pytest.raises(ValueError):
        ops.BartlettWindow()(Tensor(-1, ms.int32))
    with pytest.raises(TypeError):
        ops.blackman_window(Tensor(4, ms.int32), dtype=ms.int32)
    with pytest.raises(ValueError):
        ops.HammingWindow()(Tensor(5, ms.int32))                 # HammingWindow's length is 1-D
    with pytest.raises(TypeError):
        ops.kaiser_window(5.0)


RGB = np.array([[[0.1, 0.5, 0.9], [0.8, 0.2, 0.3], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0], [0.3, 0.9, 0.1],
                 [0.9, 0.9, 0.2], [0.2, 0.1, 0.1], [0.4, 0.4, 0.7]]], np.float32)


def _per_pixel(fn, image):
    flat = image.reshape(-1, 3).astype(np.float64)
    return np.array([fn(*p) for p in flat]).reshape(image.shape)


def test_rgb_hsv_round_trip_is_colorsyss():
    hsv = ops.RGBToHSV()(Tensor(RGB)).asnumpy()
    np.testing.assert_allclose(hsv, _per_pixel(colorsys.rgb_to_hsv, RGB), atol=2e-6)
    back = ops.HSVToRGB()(Tensor(hsv[None])).asnumpy()[0]
    np.testing.assert_allclose(back, RGB, atol=2e-6)


@pytest.mark.parametrize("delta", [0.3, -0.7, 2.6])
def test_adjust_hue_turns_colorsys_hue(delta):
    def turn(r, g, b):
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        return colorsys.hsv_to_rgb((h + delta) % 1.0, s, v)
    got = ops.AdjustHue()(Tensor(RGB), Tensor(delta, ms.float32)).asnumpy()
    np.testing.assert_allclose(got, _per_pixel(turn, RGB), atol=1e-5)


@pytest.mark.parametrize("scale", [0.4, 1.7, -1.0])
def test_adjust_saturation_scales_colorsys_saturation(scale):
    def saturate(r, g, b):
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        return colorsys.hsv_to_rgb(h, min(max(s * scale, 0.0), 1.0), v)
    got = ops.AdjustSaturation()(Tensor(RGB), Tensor(scale, ms.float32)).asnumpy()
    np.testing.assert_allclose(got, _per_pixel(saturate, RGB), atol=1e-5)


def test_colour_ops_in_graph_mode():
    class Net(nn.Cell):
        def construct(self, x):
            return ops.RGBToHSV()(x)
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(Net()(Tensor(RGB)).asnumpy(), _per_pixel(colorsys.rgb_to_hsv, RGB), atol=2e-6)


def test_compare_and_bitpack_is_packbits():
    x = np.random.RandomState(0).uniform(-1, 1, (3, 16)).astype(np.float32)
    got = ops.CompareAndBitpack()(Tensor(x), Tensor(0.2, ms.float32))
    assert got.dtype == ms.uint8
    np.testing.assert_array_equal(got.asnumpy(), np.packbits(x > 0.2, axis=-1))
    bits = x > 0
    packed = ops.CompareAndBitpack()(Tensor(bits), Tensor(False)).asnumpy()
    np.testing.assert_array_equal(packed, np.packbits(bits, axis=-1, bitorder="little"))   # MindSpore CPU's order
    with pytest.raises(ValueError):
        ops.CompareAndBitpack()(Tensor(x[:, :6]), Tensor(0.2, ms.float32))


def _unique_with_pad_ref(x, pad):
    values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    y = np.full(x.shape, pad, x.dtype)
    y[:order.size] = values[order]
    return y, rank[inverse]


@pytest.mark.parametrize("dtype,pad", [(np.int32, 0)])     # int64 and float32: the conformance samples
def test_unique_with_pad_is_first_seen_unique(dtype, pad):
    x = np.array([4, 1, 4, 4, 7, 1, 0, 9], dtype)
    y, idx = ops.unique_with_pad(Tensor(x), pad)
    want_y, want_idx = _unique_with_pad_ref(x, pad)
    np.testing.assert_array_equal(y.asnumpy(), want_y)
    np.testing.assert_array_equal(idx.asnumpy(), want_idx)
    assert idx.dtype == (ms.int64 if dtype == np.int64 else ms.int32)
    y2, _ = Tensor(x).unique_with_pad(pad)
    np.testing.assert_array_equal(y2.asnumpy(), want_y)


def test_unique_with_pad_in_graph_mode():
    class Net(nn.Cell):
        def construct(self, x):
            return ops.UniqueWithPad()(x, 0)
    x = np.array([3, 3, 2, 8, 2, 5], np.int32)
    ms.set_context(mode=ms.GRAPH_MODE)
    y, idx = Net()(Tensor(x))
    want_y, want_idx = _unique_with_pad_ref(x, 0)
    np.testing.assert_array_equal(y.asnumpy(), want_y)
    np.testing.assert_array_equal(idx.asnumpy(), want_idx)


def test_list_diff_and_ragged_range():
    out, idx = ops.ListDiff(out_idx=ms.int64)(Tensor(np.array([5, 1, 7, 3, 1], np.int32)),
                                               Tensor(np.array([1, 9], np.int32)))
    np.testing.assert_array_equal(out.asnumpy(), [5, 7, 3])
    np.testing.assert_array_equal(idx.asnumpy(), [0, 2, 3])
    assert idx.dtype == ms.int64
    splits, values = ops.RaggedRange(Tsplits=ms.int32)(Tensor(np.array([0.0, 5.0, 1.0], np.float32)),
                                                        Tensor(np.array([3.0, 1.0, 1.0], np.float32)),
                                                        Tensor(np.array([1.5, -2.0, 1.0], np.float32)))
    np.testing.assert_array_equal(splits.asnumpy(), [0, 2, 4, 4])
    np.testing.assert_allclose(values.asnumpy(), [0.0, 1.5, 5.0, 3.0])
    with pytest.raises(ValueError):
        ops.RaggedRange(Tsplits=ms.int32)(Tensor(np.array([1], np.int32)), Tensor(np.array([3], np.int32)),
                                          Tensor(np.array([0], np.int32)))


X = np.random.RandomState(1).uniform(-1, 1, (5, 3)).astype(np.float32)
ROWS = np.array([4, 0, 0, 2, 3], np.int32)
IDS = np.array([0, 0, 1, 3, 3], np.int32)


def _segment_mean_ref(x):
    out = np.zeros((IDS[-1] + 1, x.shape[1]))
    for row, seg in zip(ROWS, IDS):
        out[seg] += x[row] / np.sum(IDS == seg)
    return out


def test_sparse_segment_mean_and_its_gradient():
    got = ops.sparse_segment_mean(Tensor(X), Tensor(ROWS), Tensor(IDS)).asnumpy()
    np.testing.assert_allclose(got, _segment_mean_ref(X.astype(np.float64)), rtol=1e-6, atol=1e-7)
    weights = np.random.RandomState(2).uniform(-1, 1, got.shape)
    grad = ms.grad(lambda t: (ops.sparse_segment_mean(t, Tensor(ROWS), Tensor(IDS)) * Tensor(
        weights.astype(np.float32))).sum())(Tensor(X)).asnumpy()
    numeric = np.zeros(X.shape)
    for i in np.ndindex(X.shape):
        step = np.zeros(X.shape)
        step[i] = 1e-4
        x64 = X.astype(np.float64)
        numeric[i] = ((_segment_mean_ref(x64 + step) - _segment_mean_ref(x64 - step)) * weights).sum() / 2e-4
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError):
        ops.sparse_segment_mean(Tensor(X), Tensor(ROWS), Tensor(IDS[::-1].copy()))


def test_ctc_greedy_decoder_by_hand():
    best = np.array([[1, 3], [1, 0], [3, 0], [2, 3], [2, 1]])           # (T, B): class 3 is the blank
    logits = np.full((5, 2, 4), -1.0, np.float32)
    for t, b in np.ndindex(best.shape):
        logits[t, b, best[t, b]] = 0.5 * (t + 1)
    lengths = Tensor(np.array([5, 4], np.int32))
    indices, values, shape, log_prob = ops.ctc_greedy_decoder(Tensor(logits), lengths)
    np.testing.assert_array_equal(values.asnumpy(), [1, 2, 0])         # 1 1 _ 2 2 -> 1 2;  _ 0 0 _ -> 0
    np.testing.assert_array_equal(indices.asnumpy(), [[0, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(shape.asnumpy(), [2, 2])
    np.testing.assert_allclose(log_prob.asnumpy(), [[-7.5], [-5.0]])
    _, unmerged, _, _ = ops.CTCGreedyDecoder(merge_repeated=False)(Tensor(logits), lengths)
    np.testing.assert_array_equal(unmerged.asnumpy(), [1, 1, 2, 2, 0, 0])
    with pytest.raises(RuntimeError):
        ops.ctc_greedy_decoder(Tensor(logits), Tensor(np.array([6, 4], np.int32)))


def test_edit_distance_by_hand():
    """hypothesis ("kitten", "ab") against truth ("sitting", "") in a batch of 2: distances 3 and inf/2."""
    def sparse(words):
        idx = [[b, i] for b, w in enumerate(words) for i in range(len(w))]
        vals = [ord(c) for w in words for c in w]
        return (Tensor(np.array(idx, np.int64).reshape(-1, 2)), Tensor(np.array(vals, np.int32)),
                Tensor(np.array([2, 7], np.int64)))
    hyp, truth = sparse(["kitten", "ab"]), sparse(["sitting", ""])
    np.testing.assert_allclose(ops.EditDistance(False)(*hyp, *truth).asnumpy(), [3.0, 2.0])
    np.testing.assert_allclose(ops.EditDistance()(*hyp, *truth).asnumpy(), [3.0 / 7.0, np.inf])


def test_nms_with_overlaps_is_greedy():
    overlaps = np.array([[1.0, 0.6, 0.2, 0.1], [0.6, 1.0, 0.7, 0.1], [0.2, 0.7, 1.0, 0.3], [0.1, 0.1, 0.3, 1.0]],
                        np.float32)
    scores = np.array([0.7, 0.8, 0.9, 0.3], np.float32)
    nms = ops.NonMaxSuppressionWithOverlaps()

    def run(limit, iou, floor):
        return nms(Tensor(overlaps), Tensor(scores), Tensor(limit, ms.int32), Tensor(iou, ms.float32),
                   Tensor(floor, ms.float32)).asnumpy().tolist()
    assert run(4, 0.5, 0.0) == [2, 0, 3]      # 2 first; 1 overlaps it by 0.7; 0 by 0.2
    assert run(4, 0.75, 0.0) == [2, 1, 0, 3]  # 1 overlaps 2 by 0.7 <= 0.75; 0 overlaps 1 by 0.6
    assert run(1, 0.5, 0.0) == [2]
    assert run(4, 0.5, 0.75) == [2]           # only scores above 0.75 are candidates


def _volume_patches_ref(x, kernel, strides, same):
    """TensorFlow's extract_volume_patches on NCDHW: zero padding (smaller half first) for SAME, channels
    ordered (kernel offset, channel)."""
    pads, outs = [], []
    for n, k, st in zip(x.shape[2:], kernel, strides):
        out = -(-n // st) if same else (n - k) // st + 1
        total = max((out - 1) * st + k - n, 0) if same else 0
        pads.append((total // 2, total - total // 2))
        outs.append(out)
    padded = np.pad(x, [(0, 0), (0, 0)] + pads)
    rows = []
    for a, b, c in np.ndindex(*kernel):
        rows.append(padded[:, :, a::strides[0], b::strides[1], c::strides[2]][:, :, :outs[0], :outs[1], :outs[2]])
    return np.concatenate(rows, axis=1)


@pytest.mark.parametrize("kernel,strides,padding", [((2, 2, 2), (1, 2, 2), "SAME")])
def test_extract_volume_patches_is_tensorflows(kernel, strides, padding):
    x = np.random.RandomState(4).uniform(-1, 1, (1, 2, 3, 5, 4)).astype(np.float32)
    got = ops.ExtractVolumePatches((1, 1, *kernel), (1, 1, *strides), padding)(Tensor(x)).asnumpy()
    np.testing.assert_array_equal(got, _volume_patches_ref(x, kernel, strides, padding == "SAME"))
    # the gradient of sum(patches * w) w.r.t. x: every patch adds its weight back where it read
    w = np.random.RandomState(5).uniform(-1, 1, got.shape).astype(np.float32)
    grad = ms.grad(lambda t: (ops.ExtractVolumePatches(kernel, strides, padding)(t) * Tensor(w)).sum())(Tensor(x))
    eps, numeric = 1e-3, np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[i] = eps
        numeric[i] = ((_volume_patches_ref(x + step, kernel, strides, padding == "SAME")
                       - _volume_patches_ref(x - step, kernel, strides, padding == "SAME")) * w).sum() / (2 * eps)
    np.testing.assert_allclose(grad.asnumpy(), numeric, rtol=1e-3, atol=1e-4)


def test_sub_and_filter():
    x = np.array([[1, 3, 5], [8, 9, 16]], np.int64)
    res, idx = ops.SubAndFilter()(Tensor(x), 4, 5)
    np.testing.assert_array_equal(res.asnumpy(), [0, 3])            # 5-5, 8-5 (9-5 = 4 is not below 4)
    np.testing.assert_array_equal(idx.asnumpy(), [2, 3])
    assert res.dtype == idx.dtype == ms.int64


def test_combined_nms_by_hand():
    """Two classes over three boxes: class 0 keeps boxes 0 and 2 (1 overlaps 0 by 0.82), class 1 keeps 1;
    all three best first, padded to 4 with zeros, clipped to [0, 1]."""
    boxes = np.array([[[[0.0, 0.0, 1.0, 1.0]], [[0.0, 0.1, 1.0, 1.1]], [[0.0, 2.0, 1.0, 3.0]]]], np.float32)
    scores = np.array([[[0.9, 0.2], [0.8, 0.7], [0.6, 0.1]]], np.float32)
    out = ops.CombinedNonMaxSuppression()(Tensor(boxes), Tensor(scores), Tensor(2, ms.int32), Tensor(4, ms.int32),
                                          Tensor(0.5, ms.float32), Tensor(0.15, ms.float32))
    nmsed_boxes, nmsed_scores, nmsed_classes, valid = (t.asnumpy() for t in out)
    np.testing.assert_allclose(nmsed_scores, [[0.9, 0.7, 0.6, 0.0]])
    np.testing.assert_array_equal(nmsed_classes, [[0, 1, 0, 0]])
    np.testing.assert_allclose(nmsed_boxes[0, :3], [[0, 0, 1, 1], [0, 0.1, 1, 1], [0, 1, 1, 1]])
    assert valid.tolist() == [3]
