"""``mindspore.nn.loss.loss``: where MindSpore defines the loss cells (``LossBase`` and the losses)."""
from ..loss import *  # noqa: F401,F403  (the loss cells, as nn.loss lists them)
from ..loss import __all__  # noqa: F401
