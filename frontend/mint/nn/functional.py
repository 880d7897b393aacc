"""``mindspore.mint.nn.functional``: mint's PyTorch-style layer functions (``relu``, ``softmax``,
``conv2d``, losses), each a served ``mindspore.ops`` op under mint's signature (``mint/_routes.py``)."""
from __future__ import annotations

from typing import Any

from ...nn.layer import pooling as _pooling
from ...unsupported import unsupported
from .. import _routes

_SERVED = _routes.serve("mindspore.mint.nn.functional")
globals().update(_SERVED)
__all__ = sorted(_SERVED)

# MindSpore's nn.layer.pooling also serves two of these under ``*_ext`` names; mint sits above nn, so it
# puts them there (nn.layer.pooling importing mint would be a cycle)
for _ext, _name in (("avg_pool1d_ext", "avg_pool1d"), ("max_pool2d_ext", "max_pool2d")):
    if _name in _SERVED:
        setattr(_pooling, _ext, _SERVED[_name])


def __getattr__(name: str) -> Any:
    raise unsupported("mint.nn.functional", name, __all__)
