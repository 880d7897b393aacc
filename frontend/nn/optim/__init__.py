"""``mindspore.nn.optim``: the optimizers, one family a file as MindSpore keeps them (``optimizer``,
``momentum``, ``sgd``, ``adam``, ``rmsprop``, ``ada_grad``, ...), re-exported as MindSpore's package does."""
from __future__ import annotations

from . import (ada_grad, adadelta, adafactor, adam, adamax, adasum, asgd, ftrl, lamb, lars, lazyadam, momentum,
               optimizer, proximal_ada_grad, rmsprop, rprop, sgd)
from .ada_grad import Adagrad
from .adafactor import AdaFactor
from .adadelta import Adadelta
from .adam import Adam, AdamWeightDecay
from .adamax import AdaMax
from .adasum import AdaSumByDeltaWeightWrapCell, AdaSumByGradWrapCell
from .asgd import ASGD
from .ftrl import FTRL
from .lamb import Lamb
from .lars import LARS
from .lazyadam import LazyAdam
from .momentum import Momentum
from .optimizer import Optimizer
from .proximal_ada_grad import ProximalAdagrad
from .rmsprop import RMSProp
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "Momentum", "SGD", "Adam", "AdamWeightDecay", "RMSProp", "Adagrad", "Adadelta", "AdaMax",
           "ProximalAdagrad", "FTRL", "LazyAdam", "Rprop", "ASGD", "Lamb", "LARS", "AdaFactor", "AdaSumByGradWrapCell",
           "AdaSumByDeltaWeightWrapCell"]
