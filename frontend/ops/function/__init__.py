"""``mindspore.ops.function``: the functional forms of ``mindspore.ops`` (``ops.reshape``,
``ops.sum`` ...), each defined in the module MindSpore defines it in (``array_func``, ``math_func``,
``nn_func``, ``clip_func``, ``comm_func``, ``debug_func``, ``parameter_func``, ``random_func``, ``image_func``,
``grad``), gathered
here. :data:`FUNCTIONS` lists them.
"""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from . import array_func, clip_func, comm_func, debug_func, image_func, math_func, nn_func, parameter_func, random_func
from . import sparse_func, sparse_unary_func
from . import linalg_func
from . import other_func
from . import spectral_func
from . import fft_func
from .grad import grad_func
from . import vmap_func

MODULES = (math_func, nn_func, array_func, clip_func, comm_func, debug_func, parameter_func, random_func, grad_func,
           image_func, sparse_func, sparse_unary_func, linalg_func, other_func,
           spectral_func, vmap_func, fft_func)
_FUNCTIONS = {name: getattr(module, name) for module in MODULES for name in module.__all__}
FUNCTIONS = tuple(_FUNCTIONS)
globals().update(_FUNCTIONS)

__all__ = list(FUNCTIONS)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function", name, FUNCTIONS)
