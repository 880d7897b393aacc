"""``mindspore.ops.function.other_func``: MindSpore's miscellaneous functional forms. Here:
``ops.rotary_position_embedding`` (the Ascend RotaryPositionEmbedding kernel as a composition)."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import ArgumentError, InvalidParamError

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..composite_op import install_composite_functions
from ..operations.array_ops import Concat, Reshape, Split
from ..operations.nn_ops import FUSED_FLOATS, _dtype_in, _typed
from ..primitive import _tensor

# rotary_position_embedding's modes: 0 rotates the two halves of D (GPT-NeoX), 1 adjacent pairs (GPT-J)
ROTATE_HALF, ROTATE_INTERLEAVED = 0, 1


def rotary_position_embedding(x: Any, cos: Any, sin: Any, mode: int = 0) -> Tensor:
    """``x * cos + rotate(x) * sin`` for 4-D x (cos/sin broadcast to it, x's dtype): ``rotate`` maps
    halves (a, b) to (-b, a) (mode 0) or each pair (x0, x1) to (-x1, x0) (mode 1); D must be even."""
    owner = "RotaryPositionEmbedding"
    x, cos, sin = _tensor(x), _tensor(cos), _tensor(sin)
    _dtype_in(owner, "x", x, FUSED_FLOATS)
    for name, t in (("cos", cos), ("sin", sin)):
        if t.dtype != x.dtype:
            raise ArgumentError(f"For '{owner}', '{name}' must have the dtype of 'x' ({x.dtype}), but got {t.dtype}.")
    mode = _typed(owner, "mode", mode, (int,))
    if mode not in (ROTATE_HALF, ROTATE_INTERLEAVED):
        raise InvalidParamError(f"{owner}: mode={mode} must be 0 (rotate half) or 1 (rotate interleaved)")
    if x.ndim != 4 or x.shape[-1] % 2:
        raise InvalidParamError(f"{owner}: x must be 4-D with an even last dimension, got shape {x.shape}")
    if mode == ROTATE_HALF:
        a, b = Split(-1, 2)(x)
        rotated = Concat(-1)((-b, a))
    else:
        pairs = Reshape()(x, tuple(x.shape[:-1]) + (x.shape[-1] // 2, 2))
        a, b = Split(-1, 2)(pairs)
        rotated = Reshape()(Concat(-1)((-b, a)), tuple(x.shape))
    return x * cos + rotated * sin


install_composite_functions(globals(), "mindspore.ops.function.other_func")

__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.other_func", name, __all__)
