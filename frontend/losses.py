"""Loss functions in ``mindspore.ops`` form (``ops.cross_entropy``, ``ops.nll_loss``, ``ops.mse_loss``,
``ops.l1_loss``, ``ops.binary_cross_entropy_with_logits``, ``ops.smooth_l1_loss``); ``nn``'s loss cells
call them.

They are compositions of library ops (and the fused softmax-cross-entropy kernels), so their gradients
come from the ops' backward rules. Class targets become one-hot rows by comparing the labels with a
constant row 0..C-1 (an Equal kernel), which also gives ``ignore_index`` its zero rows.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from . import ops
from .common import dtype as mstype
from .tensor import Tensor

__all__ = ["REDUCTIONS", "reduce_loss", "softmax_cross_entropy", "cross_entropy", "nll_loss", "mse_loss",
           "l1_loss", "binary_cross_entropy_with_logits", "check_smooth_l1", "smooth_l1_loss"]

REDUCTIONS = ("mean", "sum", "none")


def check_reduction(reduction: str) -> str:
    if reduction not in REDUCTIONS:
        raise InvalidParamError(f"reduction={reduction!r} must be one of {REDUCTIONS}")
    return reduction


def reduce_loss(loss: Tensor, reduction: str, weights: Any = None) -> Tensor:
    """MindSpore's LossBase.get_loss: weight, then mean / sum over every element, or keep them."""
    if weights is not None:
        loss = loss * weights
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.sum(loss)
    return loss


def softmax_cross_entropy(logits: Tensor, labels: Tensor, sparse: bool) -> Tensor:
    """Per-sample cross entropy of (N, C) logits: class indices (``sparse``) or probability rows."""
    if sparse:
        labels = ops.cast(labels, mstype.int32)
        return ops.apply_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels])[0]
    if labels.dtype != logits.dtype:
        labels = ops.cast(labels, logits.dtype)
    return ops.apply_op("SoftmaxCrossEntropyWithLogits", [logits, labels])[0]


def _one_hot(target: Tensor, classes: int, dtype: Any) -> Tensor:
    row = Tensor(np.arange(classes, dtype=np.int32).reshape(1, classes))
    column = ops.reshape(ops.cast(target, mstype.int32), (-1, 1))
    return ops.cast(ops.equal(column, row), dtype)


def _class_weights(weight: Any, dtype: Any) -> Tensor | None:
    return None if weight is None else ops.cast(ops.reshape(weight, (1, -1)), dtype)


def cross_entropy(input: Tensor, target: Tensor, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of (N, C) logits against class indices (int) or class probabilities (float)."""
    return nll_loss(ops.log_softmax(input, 1), target, weight, ignore_index, reduction, label_smoothing)


def nll_loss(inputs: Tensor, target: Tensor, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Negative log likelihood of (N, C) log-probabilities; the mean divides by the summed weights of
    the targets that count (``ignore_index`` excluded), as MindSpore and PyTorch do."""
    check_reduction(reduction)
    if inputs.ndim != 2:
        raise InvalidParamError(f"nll_loss/cross_entropy: input must be (N, C), got shape {inputs.shape}")
    classes = inputs.shape[1]
    w = _class_weights(weight, inputs.dtype)
    if target.dtype.name in ("float32", "float16"):         # class probabilities
        probs = ops.cast(target, inputs.dtype)
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / classes
        per = probs * inputs if w is None else probs * inputs * w
        loss = -ops.sum(per, 1)
        return reduce_loss(loss, reduction)
    hot = _one_hot(target, classes, inputs.dtype)
    keep = ops.cast(ops.not_equal(ops.reshape(ops.cast(target, mstype.int32), (-1,)), ignore_index), inputs.dtype)
    probs = hot
    if label_smoothing:
        probs = hot * (1 - label_smoothing) + label_smoothing / classes
    per = probs * inputs if w is None else probs * inputs * w
    loss = -ops.sum(per, 1) * keep
    if reduction == "none":
        return loss
    if reduction == "sum":
        return ops.sum(loss)
    counts = keep if w is None else ops.sum(hot * w, 1) * keep
    return ops.sum(loss) / ops.sum(counts)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return reduce_loss(ops.square(input - target), check_reduction(reduction))


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return reduce_loss(ops.abs(input - target), check_reduction(reduction))


def binary_cross_entropy_with_logits(logits: Tensor, label: Tensor, weight: Any = None, pos_weight: Any = None,
                                     reduction: str = "mean") -> Tensor:
    """Stable form: (1 - y) x + (1 + (pw - 1) y) (log(1 + exp(-|x|)) + max(-x, 0))."""
    check_reduction(reduction)
    label = ops.cast(label, logits.dtype)
    softplus = ops.log(ops.exp(-ops.abs(logits)) + 1.0) + ops.maximum(-logits, 0.0)
    scale = 1.0 if pos_weight is None else (ops.cast(pos_weight, logits.dtype) - 1.0) * label + 1.0
    loss = (1.0 - label) * logits + scale * softplus
    return reduce_loss(loss, reduction, None if weight is None else ops.cast(weight, logits.dtype))


def check_smooth_l1(beta: Any, reduction: str) -> tuple[float, str]:
    """SmoothL1Loss's arguments as MindSpore checks them: beta a number >= 0, a known reduction."""
    if isinstance(beta, bool) or not isinstance(beta, (int, float)):
        raise InvalidParamError(f"SmoothL1Loss: beta={beta!r} must be a float")
    if beta < 0:
        raise InvalidParamError(f"SmoothL1Loss: beta={beta!r} must be >= 0 (0 is the L1 loss)")
    return float(beta), check_reduction(reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, beta: float = 1.0, reduction: str = "none") -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (d = input - target, one shape;
    beta = 0 is the L1 loss), as MindSpore's SmoothL1Loss kernel computes it; built from Abs, Less,
    Select and arithmetic, so O1 fuses it into one kernel and its gradient is d / beta or sign(d)."""
    beta, reduction = check_smooth_l1(beta, reduction)
    input, target = ops._tensor(input), ops._tensor(target)
    if input.shape != target.shape:
        raise InvalidParamError(f"smooth_l1_loss: input shape {input.shape} and target shape {target.shape} "
                                f"must be equal")
    if input.dtype.name not in ("float32", "float16") or target.dtype.name not in ("float32", "float16"):
        raise InvalidParamError(f"smooth_l1_loss: input and target must be float16 or float32, got {input.dtype} "
                                f"and {target.dtype}")
    diff = input - target
    size = ops.abs(diff)
    if beta == 0:
        return reduce_loss(size, reduction)
    loss = ops.select(size < beta, diff * diff * (0.5 / beta), size - 0.5 * beta)
    return reduce_loss(loss, reduction)
