"""``mindspore.nn.loss``: the loss cells of ``nn.loss.loss``, re-exported as MindSpore's package does."""
from __future__ import annotations

from . import loss
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, DiceLoss, FocalLoss,
                   GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, LossBase, MAELoss,
                   MarginRankingLoss, MSELoss, MultiClassDiceLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss,
                   PoissonNLLLoss, RMSELoss, SmoothL1Loss, SoftMarginLoss, SoftmaxCrossEntropyWithLogits,
                   TripletMarginLoss)
from .loss import CTCLoss, L1LossExt, MultilabelMarginLoss, TripletMarginWithDistanceLoss

__all__ = list(loss.__all__)
