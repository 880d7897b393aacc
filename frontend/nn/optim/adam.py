"""``mindspore.nn.optim.adam``: where MindSpore defines ``Adam`` and ``AdamWeightDecay``."""
from ..optim import Adam, AdamWeightDecay

__all__ = ["Adam", "AdamWeightDecay"]
