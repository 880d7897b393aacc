"""``mindspore.ops.function.debug_func``: ``ops.print_``."""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from .._utils import defined_here
from ..operations.debug_ops import Print


def print_(*input_x: Any) -> None:
    Print()(*input_x)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.debug_func", name, __all__)
