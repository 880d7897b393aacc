"""``mindspore.mint.nn.functional``: mint's PyTorch-style layer functions (``relu``, ``softmax``,
``conv2d``, losses), each a served ``mindspore.ops`` op under mint's signature (``mint/_routes.py``)."""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from .. import _routes

_SERVED = _routes.serve("mindspore.mint.nn.functional")
globals().update(_SERVED)
__all__ = sorted(_SERVED)


def __getattr__(name: str) -> Any:
    raise unsupported("mint.nn.functional", name, __all__)
