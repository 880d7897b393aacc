"""``mindspore.nn.loss.loss``: the loss cells, where MindSpore defines them; each is a thin Cell over its
functional form in ``ops``."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common.tensor import Tensor
from ...ops.function import nn_func
from ...ops.operations import nn_ops
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.loss.loss has it)
from ..cell import Cell
from ..layer.activation import get_activation  # noqa: F401  (as in MindSpore's nn.loss.loss)

__all__ = ["LossBase", "SoftmaxCrossEntropyWithLogits", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss",
           "BCEWithLogitsLoss", "SmoothL1Loss", "BCELoss", "RMSELoss", "MAELoss", "DiceLoss", "MultiClassDiceLoss",
           "SoftMarginLoss", "KLDivLoss", "HuberLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss",
           "MultiLabelSoftMarginLoss", "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
           "FocalLoss", "L1LossExt", "TripletMarginWithDistanceLoss", "MultilabelMarginLoss", "CTCLoss"]


class LossBase(Cell):
    """Base of the losses: ``reduction`` ('mean', 'sum', 'none') and ``get_loss(x, weights)``."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = nn_ops.check_reduction(reduction)

    def get_loss(self, x: Any, weights: Any = 1.0) -> Any:
        return nn_ops.reduce_loss(x, self.reduction, None if weights == 1.0 else weights)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Cross entropy of (N, C) logits; ``sparse``: labels are class indices. Default reduction 'none'
    (one loss per sample), as in MindSpore."""

    def __init__(self, sparse: bool = False, reduction: str = "none"):
        super().__init__(reduction)
        self.sparse = bool(sparse)

    def construct(self, logits: Any, labels: Any) -> Any:
        return self.get_loss(nn_func.softmax_cross_entropy(logits, labels, self.sparse))


class CrossEntropyLoss(LossBase):
    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__(reduction)
        self.weight, self.ignore_index, self.label_smoothing = weight, int(ignore_index), float(label_smoothing)

    def construct(self, logits: Any, labels: Any) -> Any:
        return nn_func.cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction,
                                    self.label_smoothing)


class NLLLoss(LossBase):
    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, int(ignore_index)

    def construct(self, logits: Any, labels: Any) -> Any:
        return nn_func.nll_loss(logits, labels, self.weight, self.ignore_index, self.reduction)


class MSELoss(LossBase):
    def construct(self, logits: Any, labels: Any) -> Any:
        return nn_func.mse_loss(logits, labels, self.reduction)


class L1Loss(LossBase):
    def construct(self, logits: Any, labels: Any) -> Any:
        return nn_func.l1_loss(logits, labels, self.reduction)


class BCEWithLogitsLoss(LossBase):
    def __init__(self, reduction: str = "mean", weight: Any = None, pos_weight: Any = None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def construct(self, logits: Any, labels: Any) -> Any:
        return nn_func.binary_cross_entropy_with_logits(logits, labels, self.weight, self.pos_weight,
                                                       self.reduction)


class SmoothL1Loss(LossBase):
    """``SmoothL1Loss(beta=1.0, reduction='none')``: ``ops.smooth_l1_loss`` (0.5 d^2 / beta inside
    ``|d| < beta``, ``|d| - 0.5 beta`` outside); default reduction 'none', as in MindSpore."""

    def __init__(self, beta: float = 1.0, reduction: str = "none"):
        super().__init__(reduction)
        self.beta, _ = nn_ops.check_smooth_l1(beta, reduction)

    def construct(self, logits: Any, labels: Any) -> Any:
        return nn_func.smooth_l1_loss(logits, labels, self.beta, self.reduction)


class BCELoss(LossBase):
    """``ops.binary_cross_entropy`` of probabilities (weight per element, broadcast)."""

    def __init__(self, weight: Any = None, reduction: str = "mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, logits: Any, labels: Any) -> Any:
        return ops.binary_cross_entropy(logits, labels, self.weight, self.reduction)


class RMSELoss(LossBase):
    """``sqrt(MSELoss()(logits, label))``: the root of the mean squared error."""

    def __init__(self):
        super().__init__()

    def construct(self, logits: Any, label: Any) -> Any:
        return ops.sqrt(nn_func.mse_loss(logits, label, "mean"))


class MAELoss(LossBase):
    """``|logits - label|``, reduced."""

    def construct(self, logits: Any, label: Any) -> Any:
        return self.get_loss(ops.abs(logits - label))


class DiceLoss(LossBase):
    """``1 - 2 sum(x y) / (sum(x^2) + sum(y^2) + smooth)`` over every element."""

    def __init__(self, smooth: float = 1e-5):
        super().__init__()
        if isinstance(smooth, bool) or not isinstance(smooth, (int, float)) or smooth <= 0:
            raise InvalidParamError(f"DiceLoss: smooth={smooth!r} must be a positive float")
        self.smooth = float(smooth)

    def construct(self, logits: Any, label: Any) -> Any:
        if logits.shape != label.shape:
            raise InvalidParamError(f"DiceLoss: logits shape {logits.shape} and label shape {label.shape} must be "
                                    f"equal")
        intersection = ops.sum(logits * label)
        union = ops.sum(logits * logits) + ops.sum(label * label)
        return 1.0 - (2.0 * intersection) / (union + self.smooth)


# MindSpore's activations for MultiClassDiceLoss
DICE_ACTIVATIONS = ("softmax", "logsoftmax", "relu", "relu6", "tanh", "sigmoid")


class MultiClassDiceLoss(LossBase):
    """The mean over classes (dimension 1) of DiceLoss of each class's column after ``activation``,
    times ``weights[i]``; class ``ignore_indiex`` (MindSpore's spelling) left out of the sum."""

    def __init__(self, weights: Any = None, ignore_indiex: int | None = None, activation: Any = "softmax"):
        super().__init__()
        if weights is not None and (not isinstance(weights, Tensor) or weights.ndim != 2):
            raise InvalidParamError("MultiClassDiceLoss: weights must be None or a 2-D Tensor")
        if isinstance(activation, str) and activation not in DICE_ACTIVATIONS:
            raise InvalidParamError(f"MultiClassDiceLoss: activation={activation!r} must be in {DICE_ACTIVATIONS}")
        self.weights, self.ignore_indiex = weights, ignore_indiex
        self.binarydiceloss = DiceLoss(smooth=1e-5)
        self.activation = get_activation(activation) if isinstance(activation, str) else activation

    def construct(self, logits: Any, label: Any) -> Any:
        if logits.shape != label.shape or logits.ndim < 2:
            raise InvalidParamError(f"MultiClassDiceLoss: logits {logits.shape} and label {label.shape} must have "
                                    f"one shape of rank >= 2")
        if self.activation is not None:
            logits = self.activation(logits)
        total = 0
        for i in range(label.shape[1]):
            if i != self.ignore_indiex:
                loss = self.binarydiceloss(logits[:, i], label[:, i])
                total = total + (loss if self.weights is None else loss * self.weights[i])
        return total / label.shape[1]


class SoftMarginLoss(LossBase):
    def construct(self, logits: Any, labels: Any) -> Any:
        return ops.soft_margin_loss(logits, labels, self.reduction)


class KLDivLoss(Cell):
    """``ops.kl_div`` (reductions 'none', 'mean', 'batchmean', 'sum')."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        if reduction not in nn_ops.KL_REDUCTIONS:
            raise InvalidParamError(f"KLDivLoss: reduction={reduction!r} must be one of {nn_ops.KL_REDUCTIONS}")
        self.reduction = reduction

    def construct(self, logits: Any, labels: Any) -> Any:
        return ops.kl_div(logits, labels, self.reduction)


class HuberLoss(LossBase):
    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction)
        self.delta = delta

    def construct(self, logits: Any, labels: Any) -> Any:
        return ops.huber_loss(logits, labels, self.reduction, self.delta)


class CosineEmbeddingLoss(LossBase):
    def __init__(self, margin: float = 0.0, reduction: str = "mean"):
        super().__init__(reduction)
        self.margin = margin

    def construct(self, logits_x1: Any, logits_x2: Any, labels: Any) -> Any:
        return ops.cosine_embedding_loss(logits_x1, logits_x2, labels, self.margin, self.reduction)


class MarginRankingLoss(LossBase):
    def __init__(self, margin: float = 0.0, reduction: str = "mean"):
        super().__init__(reduction)
        self.margin = margin

    def construct(self, input1: Any, input2: Any, target: Any) -> Any:
        return ops.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class MultiMarginLoss(LossBase):
    """``ops.multi_margin_loss``; the cell's ``weight`` wins over the call's."""

    def __init__(self, p: int = 1, margin: float = 1.0, reduction: str = "mean", weight: Any = None):
        super().__init__(reduction)
        self.p, self.margin, self.weight = p, margin, weight

    def construct(self, x: Any, target: Any, weight: Any = None) -> Any:
        weight = self.weight if self.weight is not None else weight
        return ops.multi_margin_loss(x, target, self.p, self.margin, weight, self.reduction)


class MultiLabelSoftMarginLoss(LossBase):
    def __init__(self, weight: Any = None, reduction: str = "mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, x: Any, target: Any) -> Any:
        return ops.multilabel_soft_margin_loss(x, target, self.weight, self.reduction)


class TripletMarginLoss(LossBase):
    """``ops.triplet_margin_loss``; a cell ``margin`` other than 1.0 wins over the call's."""

    def __init__(self, p: int = 2, swap: bool = False, eps: float = 1e-06, reduction: str = "mean",
                 margin: float = 1.0):
        super().__init__(reduction)
        self.p, self.swap, self.eps, self.margin = p, swap, eps, margin

    def construct(self, x: Any, positive: Any, negative: Any, margin: Any = 1.0) -> Any:
        if self.margin != 1.0:
            margin = self.margin
        return ops.triplet_margin_loss(x, positive, negative, margin=margin, p=self.p, eps=self.eps, swap=self.swap,
                                       reduction=self.reduction)


class PoissonNLLLoss(LossBase):
    """``exp(x) - y x`` (``log_input``) or ``x - y log(x + eps)``; with ``full``, Stirling's term
    ``y log(y) - y + 0.5 log(2 pi y)`` where y > 1 (y clamped at eps first)."""

    def __init__(self, log_input: bool = True, full: bool = False, eps: float = 1e-08, reduction: str = "mean"):
        super().__init__(reduction)
        self.log_input, self.full, self.eps = bool(log_input), bool(full), float(eps)

    def construct(self, input: Any, target: Any) -> Any:
        target = ops.cast(target, input.dtype)
        if self.log_input:
            loss = ops.exp(input) - target * input
        else:
            loss = input - target * ops.log(input + self.eps)
        if self.full:
            target = ops.maximum(target, self.eps)
            stirling = (target + 0.5) * ops.log(target) - target + 0.5 * math.log(2 * math.pi)
            loss = loss + stirling * ops.cast(target > 1, input.dtype)
        return self.get_loss(loss)


class GaussianNLLLoss(LossBase):
    def __init__(self, *, full: bool = False, eps: float = 1e-06, reduction: str = "mean"):
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def construct(self, logits: Any, labels: Any, var: Any) -> Any:
        return ops.gaussian_nll_loss(logits, labels, var, self.full, self.eps, self.reduction)


class HingeEmbeddingLoss(LossBase):
    def __init__(self, margin: float = 1.0, reduction: str = "mean"):
        super().__init__(reduction)
        self.margin = margin

    def construct(self, logits: Any, labels: Any) -> Any:
        return ops.hinge_embedding_loss(logits, labels, self.margin, self.reduction)


class FocalLoss(LossBase):
    """``-(1 - p)^gamma log(p)`` of the softmax over dimension 1 (times the class weight), meaned over
    the classes (one-hot or probability labels, the same shape as logits) or taken at the class index
    (labels of one channel), then reduced."""

    def __init__(self, weight: Any = None, gamma: float = 2.0, reduction: str = "mean"):
        super().__init__(reduction)
        if not isinstance(gamma, float):
            raise InvalidParamError(f"FocalLoss: gamma={gamma!r} must be a float")
        if weight is not None and (not isinstance(weight, Tensor) or weight.ndim != 1):
            raise InvalidParamError("FocalLoss: weight must be None or a 1-D Tensor")
        self.weight, self.gamma = weight, gamma

    def construct(self, logits: Any, labels: Any) -> Any:
        if logits.ndim < 2 or labels.ndim != logits.ndim:
            raise InvalidParamError(f"FocalLoss: logits {logits.shape} and labels {labels.shape} must have one "
                                    f"rank >= 2")
        n, c = logits.shape[0], logits.shape[1]
        logits = ops.reshape(logits, (n, c, -1))
        labels = ops.reshape(labels, (n, labels.shape[1], -1))
        log_p = nn_func.log_softmax(logits, 1)
        weight = None if self.weight is None else ops.reshape(ops.cast(self.weight, logits.dtype), (1, c, 1))
        if labels.shape[1] == 1:        # class indices: keep each position's true class
            hot = ops.cast(ops.equal(ops.cast(labels, logits.dtype),
                                     Tensor(np.arange(c, dtype=np.float32).reshape(1, c, 1))), logits.dtype)
            log_p = ops.sum(log_p * hot, 1)
            if weight is not None:
                weight = ops.sum(weight * hot, 1)
            factor = ops.pow(1.0 - ops.exp(log_p), self.gamma)
            loss = ops.mean(-factor * (log_p if weight is None else log_p * weight), 1)
        else:
            factor = ops.pow(1.0 - ops.exp(log_p), self.gamma)
            loss = ops.mean(-factor * labels * (log_p if weight is None else log_p * weight), -1)
        return self.get_loss(loss)


class L1LossExt(LossBase):
    """``mint.nn.L1Loss``: the mean (or sum, or none) of |logits - labels|."""

    def __init__(self, reduction: str = "mean"):
        super().__init__(reduction)

    def construct(self, logits: Any, labels: Any) -> Any:
        return nn_func.l1_loss(logits, labels, self.reduction)


def _check_tensor(cell: str, name: str, value: Any) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{cell}', the '{name}' must be 'Tensor', but got '{type(value).__name__}'")


def _pairwise_distance(x: Any, y: Any) -> Any:
    """TripletMarginWithDistanceLoss's default distance: the 2-norm of |x - y| over axis 1."""
    d = ops.abs(x - y)
    if d.ndim == 0:
        raise ValueError("For 'pairwise_distance' in 'TripletMarginWithDistanceLoss', 'ndim' of the input must be "
                         "positive, but got 0")
    return ops.LpNorm(axis=1, p=2)(d)


class TripletMarginWithDistanceLoss(LossBase):
    """``max(d(x, positive) - d(x, negative) + margin, 0)`` with ``distance_function`` (default: the 2-norm
    over axis 1); ``swap`` takes d(x, negative) as the smaller of it and d(positive, negative)."""

    def __init__(self, distance_function: Any = None, swap: bool = False, reduction: str = "mean",
                 margin: float = 1.0):
        super().__init__(reduction)
        if not isinstance(margin, float):
            raise TypeError(f"For 'TripletMarginWithDistanceLoss', the 'margin' must be float, but got "
                            f"{type(margin).__name__}.")
        if not isinstance(swap, bool):
            raise TypeError(f"For 'TripletMarginWithDistanceLoss', the 'swap' must be bool, but got "
                            f"{type(swap).__name__}.")
        self.distance_function = _pairwise_distance if distance_function is None else distance_function
        self.swap, self.margin = swap, margin

    def construct(self, x: Any, positive: Any, negative: Any) -> Any:
        for name, value in (("x", x), ("positive", positive), ("negative", negative)):
            _check_tensor("TripletMarginWithDistanceLoss", name, value)
        d1 = self.distance_function(x, positive)
        d2 = self.distance_function(x, negative)
        if self.swap:
            d2 = ops.minimum(d2, self.distance_function(positive, negative))
        return self.get_loss(ops.maximum(d1 - d2 + self.margin, 0.0))


class MultilabelMarginLoss(LossBase):
    """The loss of ``ops.MultilabelMarginLoss(reduction)``."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.multilabel_margin_loss = nn_ops.MultilabelMarginLoss(reduction=reduction)

    def construct(self, x: Any, target: Any) -> Any:
        return self.multilabel_margin_loss(x, target)[0]


class CTCLoss(LossBase):
    """``ops.ctc_loss`` of (T, N, C) log probabilities; (T, C) log probabilities are one sample (targets
    1-D or (1, S)), whose loss comes back without the batch dimension."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def construct(self, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any) -> Any:
        _check_tensor("CTCLoss", "log_probs", log_probs)
        _check_tensor("CTCLoss", "targets", targets)
        if log_probs.ndim != 2:
            return ops.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                                self.zero_infinity)[0]
        if targets.ndim > 2:
            raise ValueError(f"For CTCLoss, when the shape of log_probs is (T, C), the dimension of targets should"
                             f"be 1 or 2, but got {targets.ndim}.")
        if targets.ndim == 2 and targets.shape[0] != 1:
            raise ValueError(f"For CTCLoss, the first dimension of 2-D targets should be 1,but got "
                             f"{targets.shape[0]}.")
        if targets.ndim == 1:
            targets = ops.expand_dims(targets, 0)
        loss = ops.ctc_loss(ops.expand_dims(log_probs, -2), targets, input_lengths, target_lengths, self.blank,
                            self.reduction, self.zero_infinity)[0]
        return ops.squeeze(loss, 0) if loss.ndim else loss
