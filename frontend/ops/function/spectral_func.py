"""``mindspore.ops.function.spectral_func``: the functional forms of the signal windows
(``ops.bartlett_window``, ``ops.blackman_window``), calling their primitives in
``operations.spectral_ops``."""
from __future__ import annotations

from typing import Any

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..operations.spectral_ops import BartlettWindow, BlackmanWindow


def bartlett_window(window_length: Any, periodic: bool = True, *, dtype: Any = None) -> Tensor:
    """``BartlettWindow(periodic, dtype or float32)(window_length)``: the length a scalar int Tensor."""
    return BartlettWindow(periodic, _or_float32(dtype))(window_length)


def blackman_window(window_length: Any, periodic: bool = True, *, dtype: Any = None) -> Tensor:
    """``BlackmanWindow(periodic, dtype or float32)(window_length)``: the length a scalar int Tensor."""
    return BlackmanWindow(periodic, _or_float32(dtype))(window_length)


def _or_float32(dtype: Any) -> Any:
    return mstype.float32 if dtype is None else dtype

__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.spectral_func", name, __all__)
