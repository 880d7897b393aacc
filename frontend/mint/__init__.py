"""``mindspore.mint``: MindSpore's PyTorch-style functions (``mint.sum(input, dim, keepdim)``), each the
served ``mindspore.ops`` op under mint's own signature (``_routes.py``); ``mint.nn`` (with
``functional``), ``mint.special`` and ``mint.linalg`` alike. A name whose op is not served raises
UnsupportedOpError naming ``ascendemu api-coverage``.
"""
from __future__ import annotations

from typing import Any

from ..unsupported import unsupported
from . import _routes

_SERVED = _routes.serve("mindspore.mint")
globals().update(_SERVED)

from . import distributed, linalg, nn, optim, special  # noqa: E402  (the sub-namespaces)

__all__ = [*sorted(_SERVED), "nn", "special", "linalg", "optim"]


def __getattr__(name: str) -> Any:
    raise unsupported("mint", name, __all__)
