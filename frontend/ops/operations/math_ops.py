"""``mindspore.ops.operations.math_ops``: the math primitives, where MindSpore defines them: the
registry's operand-only elementwise ops (generated, ``primitive.generated_primitives``), the
reductions and the matrix products."""
from __future__ import annotations

from typing import Any

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _axes, _flag, defined_here
from ..primitive import _Op, _promote, _tensor, apply_op, generated_primitives

# Square, Add, Equal, ...: the registry's operand-only elementwise ops
globals().update(generated_primitives("math_ops"))


class _Reduce(_Op):
    op = ""

    def __init__(self, keep_dims: bool = False):
        super().__init__()
        self.keep_dims = bool(keep_dims)

    def __call__(self, x: Any, axis: Any = ()) -> Tensor:
        return apply_op(self.op, [x], {"axis": _axes(axis), "keep_dims": self.keep_dims})[0]


class ReduceSum(_Reduce):
    """``ReduceSum(keep_dims=False, skip_mode=False)(x, axis=())``: with ``skip_mode``, an empty
    ``axis`` reduces nothing (x itself) instead of every axis, as MindSpore."""
    op = "ReduceSum"

    def __init__(self, keep_dims: bool = False, skip_mode: bool = False):
        super().__init__(keep_dims)
        self.skip_mode = _flag("ReduceSum: skip_mode", skip_mode)

    def __call__(self, x: Any, axis: Any = ()) -> Tensor:
        if self.skip_mode and not _axes(axis):
            return _tensor(x)
        return super().__call__(x, axis)


class ReduceMean(_Reduce):
    op = "ReduceMean"


class ReduceMax(_Reduce):
    op = "ReduceMax"


class ReduceAll(_Reduce):
    """Logical AND of bool elements over ``axis`` (all axes by default)."""
    op = "ReduceAll"

    def __call__(self, input: Any, axis: Any = None) -> Tensor:      # MindSpore's names, unlike the others
        return super().__call__(input, axis)


class ReduceMin(_Reduce):
    op = "ReduceMin"


class MatMul(_Op):
    op = "MatMul"

    def __init__(self, transpose_a: bool = False, transpose_b: bool = False):
        super().__init__()
        self.transpose_a, self.transpose_b = bool(transpose_a), bool(transpose_b)

    def __call__(self, input: Any, mat2: Any) -> Tensor:
        return apply_op(self.op, _promote(_tensor(input), _tensor(mat2)),
                        {"transpose_a": self.transpose_a, "transpose_b": self.transpose_b})[0]


class BatchMatMul(MatMul):
    op = "BatchMatMul"

    def __call__(self, x: Any, y: Any) -> Tensor:        # MindSpore's names, unlike MatMul's
        return super().__call__(x, y)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.math_ops", name, __all__)
