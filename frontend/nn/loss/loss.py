"""``mindspore.nn.loss.loss``: the loss cells, where MindSpore defines them; each is a thin Cell over its
functional form in ``ops``."""
from __future__ import annotations

from typing import Any

from ...ops.function import nn_func
from ...ops.operations import nn_ops
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.loss.loss has it)
from ..cell import Cell
from ..layer.activation import get_activation  # noqa: F401  (as in MindSpore's nn.loss.loss)

__all__ = ["LossBase", "SoftmaxCrossEntropyWithLogits", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss",
           "BCEWithLogitsLoss", "SmoothL1Loss"]


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
