"""``mindspore.nn.layer``: the layer cells, one MindSpore file each (``activation``, ``basic``, ``conv``,
``normalization``, ``pooling``, ``padding``, ``container``, ``embedding``, ``image``, ``rnns``,
``combined``, ``math``, ``channel_shuffle``, ``rnn_cells``, ``transformer``, ``timedistributed``, ``dense``),
re-exported here as MindSpore's ``nn.layer`` does. MindSpore's other layer files (``thor_layer``...) define no
layer of the supported subset, so they have no module here.
"""
from __future__ import annotations

from . import (activation, basic, channel_shuffle, combined, container, conv, embedding, image, math, normalization,
               padding, pooling, rnn_cells, rnns, timedistributed, transformer, dense)
from .activation import (CELU, ELU, GELU, GLU, FastGelu, Hardtanh, HShrink, HSigmoid, HSwish, LeakyReLU, LogSigmoid,
                         LogSoftmax, Mish, PReLU, ReLU, ReLU6, SeLU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin,
                         SoftShrink, Softsign, Tanh, Tanhshrink, Threshold, get_activation)
from .activation import LRN, PReLUExt
from .basic import (ClipByNorm, Dense, Dropout, Dropout1d, Dropout2d, Dropout3d, Flatten, Identity, L1Regularizer,
                    Linear, OneHot, Pad, Roll, Tril, Triu, Unflatten)
from .basic import Dropout2dExt, DropoutExt, MatrixDiag, MatrixDiagPart, MatrixSetDiag, Norm, Unfold, Upsample
from .dense import BiDense
from .channel_shuffle import ChannelShuffle
from .combined import Conv2dBnAct, DenseBnAct
from .container import CellDict, CellList, SequentialCell
from .conv import Conv1d, Conv1dTranspose, Conv2d, Conv2dTranspose, Conv3d, Conv3dTranspose
from .embedding import Embedding, EmbeddingLookup
from .image import MSSSIM, PSNR, SSIM, CentralCrop, ImageGradients, PixelShuffle, PixelUnshuffle, ResizeBilinear
from .math import MatMul, Moments, Range, ReduceLogSumExp
from .math import DiGamma, IGamma, LBeta, LGamma, MatDet, MatInverse
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d, LayerNorm, SyncBatchNorm)
from .normalization import LayerNormExt
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad2d)
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .pooling import AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool3d, MaxPool3d
from .pooling import LPPool1d, LPPool2d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d
from .timedistributed import TimeDistributed
from .rnn_cells import GRUCell, LSTMCell, RNNCell
from .rnns import GRU, LSTM, RNN
from .transformer import (MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)

__all__ = [*activation.__all__, *basic.__all__, *container.__all__, *conv.__all__, *embedding.__all__,
           *image.__all__, *normalization.__all__, *pooling.__all__, *rnns.__all__, *combined.__all__, *math.__all__,
           *padding.__all__, *channel_shuffle.__all__, *rnn_cells.__all__, *transformer.__all__,
           *timedistributed.__all__, *dense.__all__]
