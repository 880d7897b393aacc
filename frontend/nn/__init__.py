"""``mindspore.nn``: Cell, layers, losses, optimizers and training wrappers of the supported subset.

Module layout follows MindSpore's: ``nn.cell`` (Cell), the ``nn.layer`` package (one file per MindSpore
layer file), ``nn.loss`` (``loss``), ``nn.optim`` (``optimizer``, ``momentum``, ``sgd``, ``adam``),
``nn.wrap`` (``cell_wrapper``, ``loss_scale``, ``grad_reducer``), ``nn.learning_rate_schedule`` and
``nn.dynamic_lr``; each name lives in the file MindSpore defines it in and is re-exported here.
"""
from __future__ import annotations

import importlib
from typing import Any

from ..unsupported import unsupported
from . import cell, dynamic_lr, grad, layer, learning_rate_schedule, loss, optim, wrap
from .cell import Cell, GraphCell, ParameterTuple
from .dynamic_lr import cosine_decay_lr, exponential_decay_lr, piecewise_constant_lr, polynomial_decay_lr, warmup_lr
from .layer import (LSTM, AvgPool2d, BatchNorm1d, BatchNorm2d, CellList, CentralCrop, ClipByNorm, Conv1d, Conv2d,
                    Conv2dTranspose, Dense, Dropout, Embedding, Flatten, GELU, HSigmoid, HSwish, Identity, LayerNorm,
                    LeakyReLU, LogSoftmax, MaxPool2d, OneHot, Pad, ReLU, ReLU6, ResizeBilinear, SequentialCell, Sigmoid,
                    Softmax, Tanh, get_activation)
from .layer import (CELU, ELU, GLU, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool1d, BatchNorm3d,
                    ChannelShuffle, ConstantPad1d, ConstantPad2d, ConstantPad3d, Conv1dTranspose, Conv2dBnAct, Conv3d,
                    DenseBnAct, Dropout1d, Dropout2d, Dropout3d, EmbeddingLookup, FastGelu, GroupNorm, Hardtanh,
                    HShrink, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, L1Regularizer, Linear, LogSigmoid, MatMul,
                    MaxPool1d, Mish, PixelShuffle, PixelUnshuffle, PReLU, ReflectionPad1d, ReflectionPad2d,
                    ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, Roll, SeLU, SiLU,
                    Softmax2d, Softmin, SoftShrink, Softsign, SyncBatchNorm, Tanhshrink, Threshold, Tril, Triu,
                    Unflatten, ZeroPad2d, GRU, RNN, GRUCell, RNNCell, LSTMCell)
from .layer import (MSSSIM, PSNR, SSIM, Conv3dTranspose, ImageGradients, MultiheadAttention, Transformer,
                    TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer)
from .layer import (AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool3d, CellDict, MatrixDiag,
                    MatrixDiagPart, MatrixSetDiag, MaxPool3d, Moments, Norm, Range, ReduceLogSumExp, TimeDistributed,
                    Unfold, Upsample, LRN)
from .layer import BiDense, Dropout2dExt, DropoutExt, LayerNormExt, PReLUExt
from .layer import DiGamma, IGamma, LBeta, LGamma, MatDet, MatInverse
from .layer import LPPool1d, LPPool2d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d
from .learning_rate_schedule import (CosineDecayLR, ExponentialDecayLR, InverseDecayLR, LearningRateSchedule,
                                     NaturalExpDecayLR, PolynomialDecayLR, WarmUpLR)
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, DiceLoss, FocalLoss,
                   GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, LossBase, MAELoss,
                   MarginRankingLoss, MSELoss, MultiClassDiceLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss,
                   PoissonNLLLoss, RMSELoss, SmoothL1Loss, SoftMarginLoss, SoftmaxCrossEntropyWithLogits,
                   TripletMarginLoss)
from .loss import CTCLoss, L1LossExt, MultilabelMarginLoss, TripletMarginWithDistanceLoss
from .optim import (ASGD, FTRL, SGD, AdaMax, Adadelta, Adagrad, Adam, AdamWeightDecay, Lamb, LazyAdam, Momentum,
                    Optimizer, ProximalAdagrad, RMSProp, Rprop)
from .optim import LARS, AdaFactor, AdaSumByDeltaWeightWrapCell, AdaSumByGradWrapCell
from .grad import Jvp, Vjp
from .sparse import SparseTensorDenseMatmul, SparseToDense
from .wrap import (DistributedGradReducer, DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, ForwardValueAndGrad,
                   TrainOneStepCell, TrainOneStepWithLossScaleCell, WithEvalCell, WithGradCell, WithLossCell)
from .wrap import (GradAccumulationCell, MicroBatchInterleaved, ParameterUpdate, PipelineCell, PipelineGradReducer,
                   VirtualDatasetCellTriple)

SUPPORTED = tuple(name for name in dir() if not name.startswith("_") and name not in
                  ("annotations", "Any", "importlib", "unsupported", "cell", "dynamic_lr", "grad", "layer", "loss",
                   "optim", "wrap", "learning_rate_schedule", "sparse"))
__all__ = list(SUPPORTED)


def __getattr__(name: str) -> Any:
    """``nn.metrics`` and the metric names (``nn.Accuracy``), imported on first use; else
    UnsupportedOpError."""
    if name.startswith("__"):
        raise unsupported("nn", name, SUPPORTED)
    metrics = importlib.import_module(f"{__name__}.metrics")
    if name == "metrics":
        return metrics
    if name in metrics.__all__:
        return getattr(metrics, name)
    raise unsupported("nn", name, SUPPORTED + tuple(metrics.__all__))
