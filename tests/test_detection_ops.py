"""Detection ops (issue 21): IOU, BoundingBoxEncode/Decode, CheckValid, L2Normalize (compositions),
NMSWithMask and ROIAlign (kernels in kernels/ops/misc.py, ROIAlign with its ROIAlignGrad), and the
overflow status ops (NPUAllocFloatStatus, NPUClearFloatStatus, NPUGetFloatStatus, FloatStatus).

Oracles: real MindSpore 2.10's CPU results recorded into tests/fixtures/detection_ops.json by
tools/record_detection_ops.py; numpy formulas written from MindSpore's definitions (float64); central
finite differences of those formulas for the gradients; hand-computed values."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn, ops

from gradcheck import autodiff_grads, numeric_grads

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "detection_ops.json").read_text())["cases"]


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def _attrs(attrs: dict) -> dict:
    """JSON lists back to MindSpore's tuples."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()}


def _cases(name: str) -> list:
    return [pytest.param(c, id=f"{name}-{i}") for i, c in enumerate(FIXTURE[name])]


# ----------------------------------------------------------------------------- recorded MindSpore values
@pytest.mark.parametrize("name", ["IOU", "BoundingBoxEncode", "BoundingBoxDecode", "CheckValid", "L2Normalize",
                                  "ROIAlign"])
def test_matches_recorded_mindspore(name):
    for case in FIXTURE[name]:
        inputs = [Tensor(np.array(a, np.float32)) for a in case["inputs"]]
        got = getattr(ops, name)(**_attrs(case["attrs"]))(*inputs).asnumpy()
        want = np.array(case["output"])
        if want.dtype == bool:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6, equal_nan=True, err_msg=str(case["attrs"]))


@pytest.mark.parametrize("case", _cases("NMSWithMask"))
def test_nms_matches_recorded_mindspore_on_sorted_boxes(case):
    boxes, idx, mask = ops.NMSWithMask(**case["attrs"])(Tensor(np.array(case["inputs"][0], np.float32)))
    want_boxes, want_idx, want_mask = case["output"]
    np.testing.assert_array_equal(boxes.asnumpy(), np.array(want_boxes, np.float32))
    assert idx.dtype == ms.int32 and mask.dtype == ms.bool_
    np.testing.assert_array_equal(idx.asnumpy(), want_idx)
    np.testing.assert_array_equal(mask.asnumpy(), want_mask)


@pytest.mark.parametrize("case", _cases("ROIAlignGrad"))
def test_roi_align_gradient_matches_recorded_mindspore(case, ex):
    feats, rois = (np.array(a, np.float32) for a in case["inputs"])
    dout = np.array(case["dout"], np.float32)
    grads = autodiff_grads(ex, "ROIAlign", [feats, rois], dict(case["attrs"]), dout)
    np.testing.assert_allclose(grads[1], np.array(case["output"]), rtol=1e-5, atol=1e-5)
    assert not grads[2].any()              # the rois get no gradient, as in MindSpore


# ----------------------------------------------------------------------------- numpy oracles
def iou_ref(a, g, mode="iou"):
    a, g = a.astype(np.float64), g.astype(np.float64)
    area = lambda b: (b[:, 2] - b[:, 0] + 1) * (b[:, 3] - b[:, 1] + 1)  # noqa: E731
    iw = np.clip(np.minimum(g[:, None, 2], a[None, :, 2]) - np.maximum(g[:, None, 0], a[None, :, 0]) + 1, 0, None)
    ih = np.clip(np.minimum(g[:, None, 3], a[None, :, 3]) - np.maximum(g[:, None, 1], a[None, :, 1]) + 1, 0, None)
    inter = iw * ih
    return inter / area(g)[:, None] if mode == "iof" else inter / (area(g)[:, None] + area(a)[None, :] - inter)


def roi_align_ref(feats, rois, pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1):
    """MindSpore's ROIAlign (its CPU kernel's geometry), in float64: padding rois (x0 and x1 both ~0)
    give zeros; roi_end_mode 0 widens rois to at least 1; the adaptive grid is floor(size / pooled)."""
    n, c, h, w = feats.shape
    out = np.zeros((len(rois), c, pooled_height, pooled_width))
    f64 = feats.astype(np.float64)
    for r, roi in enumerate(rois.astype(np.float64)):
        if abs(roi[1]) < 1e-3 and abs(roi[3]) < 1e-3:
            continue
        b = int(np.rint(roi[0]))
        sx, sy = roi[1] * spatial_scale, roi[2] * spatial_scale
        rw = (roi[3] + roi_end_mode) * spatial_scale - sx
        rh = (roi[4] + roi_end_mode) * spatial_scale - sy
        if roi_end_mode == 0:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / pooled_height, rw / pooled_width
        gh = sample_num if sample_num > 0 else math.floor(bh)
        gw = sample_num if sample_num > 0 else math.floor(bw)
        for p in range(pooled_height):
            for q in range(pooled_width):
                acc = np.zeros(c)
                for iy in range(gh):
                    y = sy + p * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        x = sx + q * bw + (ix + 0.5) * bw / gw
                        if y < -1 or y > h or x < -1 or x > w:
                            continue
                        y, x = max(y, 0.0), max(x, 0.0)
                        yl, xl = int(y), int(x)
                        yl, yh, y = (h - 1, h - 1, float(h - 1)) if yl >= h - 1 else (yl, yl + 1, y)
                        xl, xh, x = (w - 1, w - 1, float(w - 1)) if xl >= w - 1 else (xl, xl + 1, x)
                        ly, lx = y - yl, x - xl
                        acc += ((1 - ly) * (1 - lx) * f64[b, :, yl, xl] + (1 - ly) * lx * f64[b, :, yl, xh]
                                + ly * (1 - lx) * f64[b, :, yh, xl] + ly * lx * f64[b, :, yh, xh])
                out[r, :, p, q] = acc / (gh * gw) if gh * gw else np.nan
    return out


RNG = np.random.default_rng(7)
FEATS = RNG.normal(0, 1, (2, 2, 5, 4)).astype(np.float32)
# inside, over the top-left, over the bottom-right, a point, a padding roi (x0 = x1 = 0: zeros)
ROIS = np.array([[1, 0.5, 0.25, 6.0, 7.5], [0, -3.0, -2.0, 2.0, 1.0], [1, 5.0, 6.0, 9.0, 12.0],
                 [0, 1.0, 1.0, 1.0, 1.0], [1, 0.0, 2.0, 0.0, 3.0]], np.float32)


@pytest.mark.parametrize("attrs", [dict(pooled_height=2, pooled_width=3, spatial_scale=0.5),
                                   dict(pooled_height=3, pooled_width=2, spatial_scale=1.0, sample_num=3,
                                        roi_end_mode=0),
                                   dict(pooled_height=1, pooled_width=1, spatial_scale=0.75, sample_num=1)])
def test_roi_align_forward_and_gradient_against_numpy(attrs, ex):
    want = roi_align_ref(FEATS, ROIS, **attrs)
    got = ops.ROIAlign(**attrs)(Tensor(FEATS), Tensor(ROIS)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert not got[4].any()                                   # the padding roi
    dout = RNG.normal(0, 1, want.shape).astype(np.float32)
    grads = autodiff_grads(ex, "ROIAlign", [FEATS, ROIS], attrs, dout)
    # bilinear sampling is linear in the features: central differences are exact up to rounding. The
    # gradient uses roi_end_mode 1 whatever the forward's (MindSpore's ROIAlignGrad has no such attr)
    mode1 = {**attrs, "roi_end_mode": 1}
    numeric = numeric_grads(lambda f, r: roi_align_ref(f, r, **mode1), [FEATS, ROIS], dout, wrt=[0])
    np.testing.assert_allclose(grads[1], numeric[0], rtol=1e-4, atol=1e-4)


def test_roi_align_float16_keeps_dtype():
    got = ops.ROIAlign(2, 2, 0.5)(Tensor(FEATS.astype(np.float16)), Tensor(ROIS.astype(np.float16)))
    assert got.dtype == ms.float16
    want = roi_align_ref(FEATS.astype(np.float16), ROIS.astype(np.float16), 2, 2, 0.5)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=5e-3, atol=5e-3)


def test_nms_keeps_input_order_as_ascend_does():
    """Ascend ignores the scores: boxes are suppressed in input order (hand-computed: box 1 overlaps
    box 0 with IoU 90/100 > 0.5, box 3 overlaps box 2 with IoU 25/175 < 0.5, box 4 is box 0's twin)."""
    boxes = np.array([[0, 0, 10, 10, 0.1], [0, 0, 10, 9, 0.9], [20, 20, 30, 30, 0.5], [25, 25, 35, 35, 0.8],
                      [0, 0, 10, 10, 0.7]], np.float32)
    out, idx, mask = ops.NMSWithMask(0.5)(Tensor(boxes))
    np.testing.assert_array_equal(out.asnumpy(), boxes)
    np.testing.assert_array_equal(idx.asnumpy(), np.arange(5))
    np.testing.assert_array_equal(mask.asnumpy(), [True, False, True, True, False])
    _, _, strict = ops.NMSWithMask(0.9)(Tensor(boxes))          # IoU exactly 0.9 does not suppress
    np.testing.assert_array_equal(strict.asnumpy(), [True, True, True, True, False])


def test_iou_float16_and_functional_form():
    a = np.array([[0, 0, 4, 4], [1, 1, 3, 5], [2, 2, 2, 2]], np.float16)
    g = np.array([[1, 1, 5, 5], [0, 0, 1, 1]], np.float16)
    got = ops.iou(Tensor(a), Tensor(g), mode="iof")
    assert got.dtype == ms.float16 and got.shape == (2, 3)
    np.testing.assert_allclose(got.asnumpy(), iou_ref(a, g, "iof"), rtol=2e-3)
    np.testing.assert_allclose(ops.IOU()(Tensor(a.astype(np.float32)), Tensor(g.astype(np.float32))).asnumpy(),
                               iou_ref(a, g), rtol=1e-6)


def test_bounding_box_round_trip_and_functional_forms():
    """decode(encode(gt)) is gt again (no clipping needed), with the same means and stds."""
    anchors = np.array([[2, 3, 10, 12], [0, 0, 5, 5], [4, 1, 20, 8]], np.float32)
    gt = np.array([[1, 4, 11, 14], [1, 0, 3, 7], [6, 2, 18, 9]], np.float32)
    means, stds = (0.1, 0.0, -0.1, 0.2), (0.1, 0.1, 0.2, 0.2)
    deltas = ops.bounding_box_encode(Tensor(anchors), Tensor(gt), means, stds)
    back = ops.bounding_box_decode(Tensor(anchors), deltas, (100, 100), means, stds, 0.016)
    np.testing.assert_allclose(back.asnumpy(), gt, rtol=1e-5, atol=1e-4)
    # limits x1 <= 19 * 1 - 1 = 18 and y1 <= 14 * 1 - 1 = 13: box 0's y1 14 is out, box 2's x1 18 is in
    valid = ops.check_valid(Tensor(gt), Tensor(np.array([14.0, 19.0, 1.0], np.float32)))
    np.testing.assert_array_equal(valid.asnumpy(), [False, True, True])


def test_l2_normalize_gradient_is_finite_differences():
    x = RNG.normal(0, 1, (3, 4)).astype(np.float32)

    def ref(t):
        return t / np.sqrt(np.maximum((t * t).sum(axis=1, keepdims=True), 1e-4))
    cot = RNG.normal(0, 1, (3, 4))
    got = ms.grad(lambda t: (ops.L2Normalize(1)(t) * Tensor(cot.astype(np.float32))).sum())(Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, numeric_grads(ref, [x], cot)[0], rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("make,error", [
    (lambda: ops.IOU("giou"), KeyError),
    (lambda: ops.NMSWithMask(1), TypeError),
    (lambda: ops.ROIAlign(2, 2, 1), TypeError),
    (lambda: ops.ROIAlign(2, 2, 0.5, 2, 2), ValueError),
    (lambda: ops.BoundingBoxEncode(means=(0.0, 0.0, 0.0)), ValueError),
    (lambda: ops.BoundingBoxDecode((10, 10), wh_ratio_clip=1), TypeError),
    (lambda: ops.L2Normalize(axis="0"), TypeError),
])
def test_argument_errors_are_mindspores(make, error):
    with pytest.raises(error):
        make()(Tensor(np.ones((2, 4), np.float32)), Tensor(np.ones((2, 4), np.float32)))


# ----------------------------------------------------------------------------- overflow status
def test_float_status_ops_in_pynative():
    assert ops.FloatStatus()(Tensor(np.array([np.log(0.5), np.inf], np.float32))).asnumpy().tolist() == [1.0]
    assert ops.FloatStatus()(Tensor(np.array([1.0, -2.0], np.float16))).asnumpy().tolist() == [0.0]
    status = ops.NPUAllocFloatStatus()()
    assert status.shape == (8,) and status.dtype == ms.float32
    ops.NPUClearFloatStatus()(status)
    _ = Tensor(np.array([60000.0], np.float16)) * 2                  # inf in float16
    got = ops.NPUGetFloatStatus()(status)
    np.testing.assert_array_equal(got.asnumpy(), np.ones(8))
    np.testing.assert_array_equal(status.asnumpy(), np.ones(8))    # written in place, as on Ascend
    ops.NPUClearFloatStatus()(status)
    np.testing.assert_array_equal(status.asnumpy(), np.zeros(8))
    _ = Tensor(np.array([1.0], np.float32)) * 2
    assert ops.NPUGetFloatStatus()(status).asnumpy().sum() == 0


class _LossScaleStep(nn.Cell):
    """The zoo's pre-AllFinite loss scaling pattern: clear, take the gradients, read the status."""

    def __init__(self):
        super().__init__()
        self.alloc, self.clear, self.get = ops.NPUAllocFloatStatus(), ops.NPUClearFloatStatus(), ops.NPUGetFloatStatus()
        self.grad = ops.GradOperation()

    def construct(self, x):
        init = self.alloc()
        clear = self.clear(init)
        x = ops.depend(x, clear)
        grads = self.grad(lambda t: ops.sqrt(t).sum())(x)     # the backward of sqrt at 0 is inf
        init = ops.depend(init, grads)
        self.get(init)
        return ops.ReduceSum()(init, (0,)), grads


def test_get_float_status_sees_the_backward_in_graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    step = _LossScaleStep()
    flag, grads = step(Tensor(np.array([1.0, 4.0], np.float32)))
    assert float(flag.asnumpy()) == 0.0
    np.testing.assert_allclose(grads.asnumpy(), [0.5, 0.25])
    flag, grads = step(Tensor(np.array([0.0, 4.0], np.float32)))
    assert float(flag.asnumpy()) == 8.0 and np.isinf(grads.asnumpy()[0])


def test_detection_ops_in_graph_mode():
    class Head(nn.Cell):
        def __init__(self):
            super().__init__()
            self.roi = ops.ROIAlign(2, 2, 0.5)
            self.nms = ops.NMSWithMask(0.5)

        def construct(self, feats, rois, boxes):
            _, _, mask = self.nms(boxes)
            return self.roi(feats, rois), ops.iou(boxes[:, :4], boxes[:, :4]), mask

    boxes = np.array([[0, 0, 10, 10, 0.9], [0, 0, 10, 9, 0.8], [50, 50, 60, 60, 0.7]], np.float32)
    ms.set_context(mode=ms.GRAPH_MODE)
    pooled, overlap, mask = Head()(Tensor(FEATS), Tensor(ROIS), Tensor(boxes))
    np.testing.assert_allclose(pooled.asnumpy(), roi_align_ref(FEATS, ROIS, 2, 2, 0.5), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(overlap.asnumpy(), iou_ref(boxes[:, :4], boxes[:, :4]), rtol=1e-6)
    np.testing.assert_array_equal(mask.asnumpy(), [True, False, True])
    assert math.isclose(float(overlap.asnumpy()[0, 0]), 1.0)
