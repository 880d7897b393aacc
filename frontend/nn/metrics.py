"""``mindspore.nn.metrics``: MindSpore 2.x keeps the metrics' 1.x home as an alias of
``mindspore.train.metrics``; ``nn.Accuracy`` and the other metric names resolve here (on first use:
``train`` imports ``nn``, so ``nn`` cannot import it while it loads)."""
from __future__ import annotations

from ..train.metrics import *  # noqa: F401,F403
from ..train.metrics import __all__  # noqa: F401
