"""``mindspore.nn.optim.sgd``: where MindSpore defines ``SGD``."""
from ..optim import SGD

__all__ = ["SGD"]
