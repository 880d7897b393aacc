"""``mindspore.nn.loss``: the loss cells of ``nn.loss.loss``, re-exported as MindSpore's package does."""
from __future__ import annotations

from . import loss
from .loss import (BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, LossBase, MSELoss, NLLLoss, SmoothL1Loss,
                   SoftmaxCrossEntropyWithLogits)

__all__ = list(loss.__all__)
