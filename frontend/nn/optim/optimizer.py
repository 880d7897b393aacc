"""``mindspore.nn.optim.optimizer``: where MindSpore defines the ``Optimizer`` base class."""
from ..optim import Optimizer

__all__ = ["Optimizer"]
