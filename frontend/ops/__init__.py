"""``mindspore.ops``: the facade of the package, laid out as MindSpore lays it out.

``primitive`` is the base (Primitive, ``apply_op``, promotion, mixed precision); ``operations`` (``P``)
holds the primitive classes, each in the module MindSpore defines it in (``operations.nn_ops.Conv2D``);
``function`` the functional forms (``function.array_func.reshape``); ``composite`` (``C``)
MultitypeFuncGraph, HyperMap, GradOperation; ``functional`` (``F``) MindSpore's older names and the
Tensor's method table. This module only re-exports them; a name outside the subset raises
UnsupportedOpError naming ``ascendemu api-coverage``.
"""
from __future__ import annotations

from typing import Any

from ..unsupported import unsupported
from . import composite, function, functional, operations, primitive
from ._utils import _MASKS, _pad4, _pair, _probability  # noqa: F401  (nn's layers check their arguments with them)
from .composite import GradOperation, HyperMap, Map, MultitypeFuncGraph, partial, recompute_block  # noqa: F401
from .function import *  # noqa: F401,F403
from .operations import *  # noqa: F401,F403
from .operations.comm_ops import ReduceOp  # noqa: F401
from .primitive import (AmpScope, Primitive, PrimitiveWithCheck, PrimitiveWithInfer, _amp_scope, _tensor,  # noqa: F401
                        apply_op, constexpr, mixed_precision_cast, prim_attr_register)

# instances, as in MindSpore (P.identity, the class, stays in operations)
dtype, identity = functional.dtype, functional.identity
# MindSpore's functions kept in ops.functional (graph internals over Python values, scalar ops, decorators)
globals().update(functional.INTERNALS)

PRIMITIVES = operations.PRIMITIVES
FUNCTIONS = function.FUNCTIONS + ("mixed_precision_cast", "dtype") + tuple(functional.INTERNALS)
SUPPORTED = PRIMITIVES + FUNCTIONS + (
    "Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register", "constexpr", "MultitypeFuncGraph",
    "HyperMap", "Map", "partial", "GradOperation", "identity", "kernel", "ms_kernel", "recompute_block")
__all__ = list(SUPPORTED)


def __getattr__(name: str) -> Any:
    raise unsupported("ops", name, SUPPORTED)
