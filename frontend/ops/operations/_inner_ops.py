"""``mindspore.ops.operations._inner_ops``: MindSpore's internal primitives. Here: ``SelectView``
(``ops.isconstant``, an instance of MindSpore's ``IsConstant`` from here, is in ``ops.functional``)."""
from __future__ import annotations

from typing import Any

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import check_arg_int, defined_here
from ..primitive import _Op, _tensor


class SelectView(_Op):
    """``SelectView()(input, index, dim)``: the slice at ``index`` (>= 0) along dimension ``dim``, that
    dimension removed (``input[..., index, ...]``; a view in MindSpore, the same values here)."""

    def __call__(self, *args: Any) -> Tensor:
        if len(args) != 3:
            raise TypeError(f"SelectView() takes 3 inputs (input, index, dim) but {len(args)} were given")
        x = _tensor(args[0])
        if x.ndim == 0:
            raise ValueError("For 'SelectView', the input must have at least one dimension")
        index, dim = check_arg_int(args[1], "SelectView: index"), check_arg_int(args[2], "SelectView: dim")
        if not -x.ndim <= dim < x.ndim:
            raise ValueError(f"Dimension out of range (expected to be in range of [{-x.ndim}, {x.ndim}), but got "
                             f"{dim})")
        dim %= x.ndim
        if index < 0:
            raise RuntimeError(f"The int64_t value({index}) is less than 0.")
        if index >= x.shape[dim]:     # MindSpore reads past the dimension (garbage); refused here
            raise IndexError(f"For 'SelectView', index {index} is out of range for dimension {dim} of size "
                             f"{x.shape[dim]}")
        return x[(slice(None),) * dim + (index,)]


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations._inner_ops", name, __all__)
