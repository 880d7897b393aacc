"""``mindspore.nn.grad``: the gradient cells ``Jvp`` and ``Vjp`` (``cell_grad``), as MindSpore's package has them."""
from __future__ import annotations

from . import cell_grad
from .cell_grad import Jvp, Vjp

__all__ = ["Jvp", "Vjp"]
