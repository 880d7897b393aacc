"""``mindspore.ops.operations.manually_defined``: MindSpore's hand-written primitives (``ops_def``,
``_inner``), re-exported as MindSpore's package does."""
from __future__ import annotations

from typing import Any

from ....unsupported import unsupported
from . import _inner, ops_def  # noqa: F401
from .ops_def import *  # noqa: F401,F403
from .ops_def import Primitive, PrimitiveWithInfer, prim_attr_register  # noqa: F401
from .ops_def import __all__ as _ops_def_all

__all__ = list(_ops_def_all)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.manually_defined", name, __all__)
