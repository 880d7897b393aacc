"""``mindspore.nn.optim.momentum``: where MindSpore defines ``Momentum``."""
from ..optim import Momentum

__all__ = ["Momentum"]
