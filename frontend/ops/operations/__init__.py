"""``mindspore.ops.operations`` (``P``): the primitive classes of ``mindspore.ops`` (``P.ReduceSum()``),
each defined in the module MindSpore defines it in (``array_ops``, ``math_ops``, ``nn_ops``,
``image_ops``, ``debug_ops``, ``other_ops``, ``comm_ops``, ``random_ops``), gathered here.

Gathering them also registers them with ``primitive`` (:func:`register_primitives`), so a user's
primitive known only by its name runs the supported one of that name. MindSpore's deprecated
``identity`` class is here too, but not among :data:`PRIMITIVES` (``ops.identity`` is an instance).
"""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from ..primitive import Primitive, register_primitives
from . import array_ops, comm_ops, debug_ops, image_ops, math_ops, nn_ops, other_ops, random_ops
from . import sparse_ops
from . import linalg_ops
from . import spectral_ops
from . import _embedding_cache_ops
from . import inner_ops
from . import _inner_ops, _sequence_ops, manually_defined
from . import custom_ops
from ._ms_kernel import kernel, ms_kernel  # noqa: F401  (functions MindSpore serves from P)

MODULES = (math_ops, nn_ops, array_ops, image_ops, debug_ops, other_ops, comm_ops, random_ops, sparse_ops, linalg_ops,
           spectral_ops, _embedding_cache_ops, _inner_ops, inner_ops, _sequence_ops, manually_defined,
           custom_ops)
# P's own names that are not primitives of mindspore.ops (ops.identity is an instance of P.identity)
OWN = ("identity", "kernel", "ms_kernel")
_CLASSES = {name: getattr(module, name) for module in MODULES for name in module.__all__
            if isinstance(getattr(module, name), type) and issubclass(getattr(module, name), Primitive)}
PRIMITIVES = tuple(name for name in _CLASSES if name not in OWN)
globals().update(_CLASSES)
register_primitives({name: _CLASSES[name] for name in PRIMITIVES})

__all__ = list(PRIMITIVES) + list(OWN)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations", name, PRIMITIVES + OWN)


def __dir__() -> list[str]:
    return sorted(PRIMITIVES + OWN)
