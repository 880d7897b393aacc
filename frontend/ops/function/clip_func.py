"""``mindspore.ops.function.clip_func``: clipping by value and by global norm (``ops.clip_by_value``,
``ops.clip_by_global_norm``, ``ops.clamp``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidValueError

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..primitive import _tensor
from .array_func import cast, expand_dims, select
from .math_func import add, greater_equal, maximum, minimum, sqrt, square
from .math_func import sum as tensor_sum  # mindspore.ops.sum, not the builtin


def clip_by_value(x: Any, clip_value_min: Any = None, clip_value_max: Any = None) -> Any:
    """x clipped to [clip_value_min, clip_value_max] (either may be None), MindSpore's way: Minimum
    with the upper bound, then Maximum with the lower one (so min > max gives min everywhere). A
    tuple or list of tensors is clipped tensor by tensor."""
    if clip_value_min is None and clip_value_max is None:
        raise InvalidValueError("clip_by_value: give clip_value_min, clip_value_max or both")  # MindSpore: ValueError
    if isinstance(x, (tuple, list)):
        return type(x)(clip_by_value(t, clip_value_min, clip_value_max) for t in x)
    out = _tensor(x)
    if clip_value_max is not None:
        out = minimum(out, clip_value_max)
    if clip_value_min is not None:
        out = maximum(out, clip_value_min)
    return out


def clip_by_global_norm(x: Any, clip_norm: Any = 1.0, use_norm: Any = None) -> Any:
    """The tensors of ``x`` scaled by ``clip_norm / max(global_norm, clip_norm)``, where global_norm is
    the L2 norm of all of them together (a tuple of tensors, as MindSpore's _ClipByGlobalNorm builds
    it: float32 square sums, Sqrt of their sum, Select, each tensor scaled in float32 and cast back
    to its dtype). A single tensor is clipped by its own norm. ``use_norm`` must be None."""
    if use_norm is not None:
        raise InvalidParamError(f"clip_by_global_norm: use_norm only supports None (as in MindSpore), got "
                                f"{use_norm!r}")
    limit = clip_norm.item() if isinstance(clip_norm, Tensor) else clip_norm
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit > 0:
        raise InvalidParamError(f"clip_by_global_norm: clip_norm={clip_norm!r} must be a number > 0")
    tensors = [_tensor(t) for t in x] if isinstance(x, (tuple, list)) else [_tensor(x)]
    if not tensors:
        raise InvalidParamError("clip_by_global_norm: x is an empty tuple; give the tensors to clip")
    squares = [expand_dims(cast(tensor_sum(square(t)), mstype.float32), 0) for t in tensors]
    total = squares[0]
    for part in squares[1:]:
        total = add(total, part)
    clip = Tensor(np.array([limit], np.float32))
    norm = sqrt(total)
    norm = select(greater_equal(norm, clip), norm, clip)
    clipped = tuple(cast(t * clip / norm, t.dtype) for t in tensors)
    return clipped if isinstance(x, (tuple, list)) else clipped[0]


def clamp(input: Any, min: Any = None, max: Any = None) -> Tensor:
    return clip_by_value(input, min, max)


clip = clamp


def clamp_(input: Any, min: Any = None, max: Any = None) -> Tensor:
    """In place (nn3): ``input`` holds ``clamp(input, min, max)`` and is returned."""
    from ...common.tensor import hold_value
    return hold_value(input, clamp(input, min, max))


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.clip_func", name, __all__)
