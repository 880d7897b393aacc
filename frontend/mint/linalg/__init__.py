"""``mindspore.mint.linalg``: mint's linalg functions, each a served ``mindspore.ops`` op under the
signature MindSpore gives it (see ``mint/_routes.py``)."""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from .. import _routes

_SERVED = _routes.serve("mindspore.mint.linalg")
globals().update(_SERVED)
__all__ = sorted(_SERVED)


def __getattr__(name: str) -> Any:
    raise unsupported("mint.linalg", name, __all__)
