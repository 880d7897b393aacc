"""``mindspore.ops.composite`` (``C``): ``MultitypeFuncGraph``, ``HyperMap``, ``Map``, ``partial``,
``add_flags`` and ``GradOperation`` (defined in ``composite.base``, as in MindSpore), and the graph
internals of ``composite.multitype_ops`` (``tail``, ``hyper_add``, ``augassign_add`` ...). MindSpore's
composite also re-exports the functions of ``mindspore.ops`` (``C.zeros_like``): read from
``ops.function`` when used.
"""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from .base import GradOperation, HyperMap, Map, MultitypeFuncGraph, add_flags, partial, recompute_block
from .multitype_ops import (augassign_add, augassign_div, augassign_floordiv, augassign_mod, augassign_mul,  # noqa: F401
                            augassign_sub, hyper_add, tail, zip_operation)
from . import multitype_ops

OWN = ("MultitypeFuncGraph", "HyperMap", "Map", "partial", "add_flags", "GradOperation", "recompute_block") + \
    tuple(multitype_ops.__all__)
__all__ = list(OWN)


def __getattr__(name: str) -> Any:
    from .. import function
    if name in function.FUNCTIONS:
        return getattr(function, name)
    raise unsupported("ops.composite", name, OWN + function.FUNCTIONS)
