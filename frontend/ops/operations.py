"""``mindspore.ops.operations`` (``P``): the primitive classes of ``mindspore.ops`` (``P.ReduceSum()``).

A view, not a second home: each name is read from ``mindspore.ops`` when it is used, so every
primitive the op registry or ``frontend/ops.py`` adds is here too. The one class of its own is
MindSpore's deprecated ``identity``, whose instance is ``ops.identity`` / ``F.identity``.
"""
from __future__ import annotations

from typing import Any

from .. import ops as _ops
from ..unsupported import unsupported


class identity(_ops.Primitive):
    """``P.identity()(x)`` returns x itself (MindSpore's deprecated side-effect-propagating identity;
    ``nn.Identity``/``ops.Identity`` are the current names)."""

    def __call__(self, x: Any) -> Any:
        return x


OWN = ("identity",)


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return list(_ops.PRIMITIVES) + list(OWN)
    if name in _ops.PRIMITIVES:
        return getattr(_ops, name)
    raise unsupported("ops.operations", name, _ops.PRIMITIVES + OWN)


def __dir__() -> list[str]:
    return sorted(_ops.PRIMITIVES + OWN)
