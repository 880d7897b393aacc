"""``mindspore.mint.optim``: MindSpore's PyTorch-style optimizers (Adam, AdamW, SGD, FusedAdamW), one
module each where MindSpore defines them, on the experimental Optimizer base (``_optimizer.py``)."""
from __future__ import annotations

from .adam import Adam
from .adamw import AdamW
from .fused_adamw import FusedAdamW
from .sgd import SGD

__all__ = ["AdamW", "Adam", "SGD", "FusedAdamW"]
