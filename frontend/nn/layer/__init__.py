"""``mindspore.nn.layer``: the layer cells, one MindSpore file each (``activation``, ``basic``, ``conv``,
``normalization``, ``pooling``, ``container``, ``embedding``, ``image``, ``rnns``), re-exported here as
MindSpore's ``nn.layer`` does. MindSpore's other layer files (``combined``, ``math``, ``rnn_cells``,
``thor_layer``...) define no layer of the supported subset, so they have no module here.
"""
from __future__ import annotations

from . import activation, basic, container, conv, embedding, image, normalization, pooling, rnns
from .activation import (GELU, HSigmoid, HSwish, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, Softmax, Tanh,
                         get_activation)
from .basic import ClipByNorm, Dense, Dropout, Flatten, Identity, OneHot, Pad
from .container import CellList, SequentialCell
from .conv import Conv1d, Conv2d, Conv2dTranspose
from .embedding import Embedding
from .image import CentralCrop, ResizeBilinear
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .pooling import AvgPool2d, MaxPool2d
from .rnns import LSTM

__all__ = [*activation.__all__, *basic.__all__, *container.__all__, *conv.__all__, *embedding.__all__,
           *image.__all__, *normalization.__all__, *pooling.__all__, *rnns.__all__]
