"""``mindspore.nn.optim``: the optimizers, one family a file as MindSpore keeps them (``optimizer``,
``momentum``, ``sgd``, ``adam``), re-exported as MindSpore's package does."""
from __future__ import annotations

from . import adam, momentum, optimizer, sgd
from .adam import Adam, AdamWeightDecay
from .momentum import Momentum
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "Momentum", "SGD", "Adam", "AdamWeightDecay"]
