"""Record real MindSpore 2.10's CPU results of the detection ops into tests/fixtures/detection_ops.json.

Run with real MindSpore (never a dependency of the tests), from outside the repo:
    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_detection_ops.py
Each case stores its inputs, attributes and outputs as lists (float32 values), so the tests rebuild the
inputs without numpy's random streams. NMSWithMask cases are sorted by descending score: there the CPU
kernel (which sorts) and Ascend's (which keeps the input order) agree, and the emulator is Ascend's.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "detection_ops.json"


def boxes(rng: np.random.Generator, n: int, size: float = 20.0) -> np.ndarray:
    """n boxes (x0, y0, x1, y1) with x1 >= x0, y1 >= y0, on a grid of quarters (exact in float16 too)."""
    x0y0 = np.round(rng.uniform(0, size, (n, 2)) * 4) / 4
    wh = np.round(rng.uniform(0.5, size / 2, (n, 2)) * 4) / 4
    return np.concatenate([x0y0, x0y0 + wh], axis=1).astype(np.float32)


def main() -> None:
    import mindspore as ms
    from mindspore import Tensor, ops
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    rng = np.random.default_rng(21)
    cases: dict[str, list] = {"IOU": [], "BoundingBoxEncode": [], "BoundingBoxDecode": [], "CheckValid": [],
                              "NMSWithMask": [], "ROIAlign": [], "ROIAlignGrad": [], "L2Normalize": []}
    for mode in ("iou", "iof"):
        a, g = boxes(rng, 5), boxes(rng, 3)
        out = ops.IOU(mode)(Tensor(a), Tensor(g)).asnumpy()
        cases["IOU"].append({"attrs": {"mode": mode}, "inputs": [a.tolist(), g.tolist()], "output": out.tolist()})
    for means, stds in (((0.0, 0.0, 0.0, 0.0), (1.0, 1.0, 1.0, 1.0)), ((0.1, -0.2, 0.0, 0.3), (0.1, 0.1, 0.2, 0.2))):
        a, g = boxes(rng, 6), boxes(rng, 6)
        out = ops.BoundingBoxEncode(means, stds)(Tensor(a), Tensor(g)).asnumpy()
        cases["BoundingBoxEncode"].append({"attrs": {"means": means, "stds": stds},
                                           "inputs": [a.tolist(), g.tolist()], "output": out.tolist()})
    for max_shape, wh_ratio_clip in (((30, 40), 0.016), ((12, 9), 0.5)):
        a = boxes(rng, 6)
        d = rng.normal(0, 2.0, (6, 4)).astype(np.float32)
        attrs = {"max_shape": max_shape, "means": (0.0, 0.1, 0.0, -0.1), "stds": (1.0, 1.0, 0.5, 2.0),
                 "wh_ratio_clip": wh_ratio_clip}
        out = ops.BoundingBoxDecode(**attrs)(Tensor(a), Tensor(d)).asnumpy()
        cases["BoundingBoxDecode"].append({"attrs": attrs, "inputs": [a.tolist(), d.tolist()], "output": out.tolist()})
    b = boxes(rng, 8, 30.0)
    b[0, 0] = -1.0
    metas = np.array([20.0, 15.0, 1.5], np.float32)
    out = ops.CheckValid()(Tensor(b), Tensor(metas)).asnumpy()
    cases["CheckValid"].append({"attrs": {}, "inputs": [b.tolist(), metas.tolist()], "output": out.tolist()})
    for thr in (0.5, 0.1, 0.7):
        b = boxes(rng, 12, 10.0)
        scores = np.sort(rng.uniform(0, 1, 12)).astype(np.float32)[::-1]
        x = np.concatenate([b, scores[:, None]], axis=1).astype(np.float32)
        out = ops.NMSWithMask(thr)(Tensor(x))
        cases["NMSWithMask"].append({"attrs": {"iou_threshold": thr}, "inputs": [x.tolist()],
                                     "output": [o.asnumpy().tolist() for o in out]})
    feats = rng.normal(0, 1, (2, 3, 7, 6)).astype(np.float32)
    rois = np.array([[0, 1.0, 1.5, 9.0, 10.0], [1, 0.0, 0.0, 11.0, 13.0], [0, 4.5, 2.0, 6.0, 3.0],
                     [1, -2.0, 3.0, 5.0, 14.0]], np.float32)
    for ph, pw, scale, sample_num, end_mode in ((2, 2, 0.5, 2, 1), (3, 2, 0.5, 0, 0), (2, 3, 0.25, 1, 1)):
        attrs = {"pooled_height": ph, "pooled_width": pw, "spatial_scale": scale, "sample_num": sample_num,
                 "roi_end_mode": end_mode}
        op = ops.ROIAlign(**attrs)
        out = op(Tensor(feats), Tensor(rois)).asnumpy()
        cases["ROIAlign"].append({"attrs": attrs, "inputs": [feats.tolist(), rois.tolist()], "output": out.tolist()})
        dout = rng.normal(0, 1, out.shape).astype(np.float32)
        grad = ms.grad(lambda f, r: op(f, r) * Tensor(dout), grad_position=0)(Tensor(feats), Tensor(rois)).asnumpy()
        cases["ROIAlignGrad"].append({"attrs": attrs, "inputs": [feats.tolist(), rois.tolist()], "dout": dout.tolist(),
                                      "output": grad.tolist()})
    for axis, eps in ((0, 1e-4), (1, 1e-4), (-1, 10.0)):
        x = rng.normal(0, 1, (3, 4, 2)).astype(np.float32)
        out = ops.L2Normalize(axis, eps)(Tensor(x)).asnumpy()
        cases["L2Normalize"].append({"attrs": {"axis": axis, "epsilon": eps}, "inputs": [x.tolist()],
                                     "output": out.tolist()})
    OUT.write_text(json.dumps({"mindspore": ms.__version__, "cases": cases}, indent=None) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
