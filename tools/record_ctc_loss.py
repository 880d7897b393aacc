"""Record real MindSpore's CTC loss for tests/test_losses_breadth.py.

``ops.ctc_loss`` (CTCLossV2) on small fixed cases: the per-sample losses, ``log_alpha`` (-inf where
unreachable), the reduced losses, and the gradient of the summed loss with respect to ``log_probs``
(MindSpore's backward: exp(lp) minus the alignment posterior, also for log_probs that are not a
log_softmax); ``nn.CTCLoss`` on 2-D log_probs; the TensorFlow-style ``ops.CTCLoss`` primitive. Run it
with real MindSpore (CI never needs it)::

    /work/msvenv/bin/python tools/record_ctc_loss.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "ctc_loss.json"


def cases() -> dict[str, dict[str, Any]]:
    """name -> inputs and options; log_probs are raw normal draws around log(1/C) (not normalised)."""
    rng = np.random.RandomState(21)
    base = np.log(np.full((6, 3, 5), 0.2)) + 0.3 * rng.randn(6, 3, 5)
    return {
        "repeats": {"log_probs": base.tolist(), "targets": [[1, 1, 2, 3], [4, 2, 0, 0], [3, 0, 0, 0]],
                    "input_lengths": [6, 5, 6], "target_lengths": [4, 2, 0], "blank": 0, "zero_infinity": False},
        "blank2-impossible": {"log_probs": base[:4].tolist(), "targets": [[1, 1, 1], [0, 1, 3], [4, 4, 0]],
                              "input_lengths": [4, 4, 3], "target_lengths": [3, 3, 2], "blank": 2,
                              "zero_infinity": True},
    }


def run_case(ms: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The losses per reduction, log_alpha and the summed loss's gradient for ``case``."""
    ops, T = ms.ops, ms.Tensor
    lp = T(np.asarray(case["log_probs"], np.float32))
    args = (T(np.asarray(case["targets"], np.int32)), T(np.asarray(case["input_lengths"], np.int32)),
            T(np.asarray(case["target_lengths"], np.int32)))
    opts = (case["blank"], case["zero_infinity"])
    out: dict[str, Any] = {}
    for reduction in ("none", "sum", "mean"):
        loss, log_alpha = ops.ctc_loss(lp, *args, opts[0], reduction, opts[1])
        out[reduction] = loss.asnumpy().tolist()
    la = log_alpha.asnumpy()
    out["log_alpha"] = np.where(np.isinf(la), -1e30, la).tolist()        # JSON has no -inf
    grad = ms.grad(lambda x: ops.ctc_loss(x, *args, opts[0], "sum", opts[1])[0])(lp)
    out["grad"] = grad.asnumpy().tolist()
    return out


def run_cell(ms: ModuleType) -> float:
    """nn.CTCLoss on (T, C) log_probs and 1-D targets (one sample)."""
    rng = np.random.RandomState(22)
    lp = np.log(np.full((5, 4), 0.25)) + 0.2 * rng.randn(5, 4)
    loss = ms.nn.CTCLoss(blank=3)(ms.Tensor(lp.astype(np.float32)), ms.Tensor(np.array([0, 1, 1], np.int32)),
                                  ms.Tensor(np.array([5], np.int32)), ms.Tensor(np.array([3], np.int32)))
    return float(loss.asnumpy())


PRIMITIVE_CASE = {"labels_indices": [[0, 0], [0, 1], [0, 2], [1, 0]], "labels_values": [1, 1, 2, 0],
                  "sequence_length": [5, 3]}


def run_primitive(ms: ModuleType) -> dict[str, Any]:
    """ops.CTCLoss (TensorFlow-style: logits, sparse labels, blank = last class): loss and gradient."""
    x = np.random.RandomState(23).randn(5, 2, 4).astype(np.float32)
    c = PRIMITIVE_CASE
    loss, grad = ms.ops.CTCLoss()(ms.Tensor(x), ms.Tensor(np.array(c["labels_indices"], np.int64)),
                                  ms.Tensor(np.array(c["labels_values"], np.int32)),
                                  ms.Tensor(np.array(c["sequence_length"], np.int32)))
    return {"loss": loss.asnumpy().tolist(), "gradient": grad.asnumpy().tolist()}


def main() -> int:
    import mindspore as ms

    ms.set_device("CPU")
    record = {"recorded_with": f"mindspore {ms.__version__} CPU PYNATIVE_MODE", "script": "tools/record_ctc_loss.py",
              "cases": {name: run_case(ms, case) for name, case in cases().items()}, "cell_2d": run_cell(ms),
              "primitive": run_primitive(ms)}
    FIXTURE.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
