"""``mindspore.ops.operations`` (``P``): the primitive classes of ``mindspore.ops`` (``P.ReduceSum()``).

A view, not a second home: each name is read from ``mindspore.ops`` when it is used, so every
primitive the op registry or ``frontend/ops.py`` adds is here too.
"""
from __future__ import annotations

from typing import Any

from .. import ops as _ops
from ..unsupported import unsupported


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return list(_ops.PRIMITIVES)
    if name in _ops.PRIMITIVES:
        return getattr(_ops, name)
    raise unsupported("ops.operations", name, _ops.PRIMITIVES)


def __dir__() -> list[str]:
    return sorted(_ops.PRIMITIVES)
