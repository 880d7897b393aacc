"""``mindspore.mint.distributed``: PyTorch-style process groups and collectives (``distributed``)."""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from . import distributed
from .distributed import NAMES

globals().update({name: getattr(distributed, name) for name in NAMES})
__all__ = list(NAMES)


def __getattr__(name: str) -> Any:
    raise unsupported("mint.distributed", name, __all__)
