"""``mindspore.ops.operations.math_ops``: the math primitives, where MindSpore defines them: the
registry's operand-only elementwise ops (generated, ``primitive.generated_primitives``), the
reductions and the matrix products."""
from __future__ import annotations

from typing import Any

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _axes, defined_here
from ..primitive import Primitive, _promote, _tensor, apply_op, generated_primitives

# Square, Add, Equal, ...: the registry's operand-only elementwise ops
globals().update(generated_primitives("math_ops"))


class _Reduce(Primitive):
    op = ""

    def __init__(self, keep_dims: bool = False):
        super().__init__()
        self.keep_dims = bool(keep_dims)

    def __call__(self, x: Any, axis: Any = ()) -> Tensor:
        return apply_op(self.op, [x], {"axis": _axes(axis), "keep_dims": self.keep_dims})[0]


class ReduceSum(_Reduce):
    op = "ReduceSum"


class ReduceMean(_Reduce):
    op = "ReduceMean"


class ReduceMax(_Reduce):
    op = "ReduceMax"


class ReduceAll(_Reduce):
    """Logical AND of bool elements over ``axis`` (all axes by default)."""
    op = "ReduceAll"


class ReduceMin(_Reduce):
    op = "ReduceMin"


class MatMul(Primitive):
    op = "MatMul"

    def __init__(self, transpose_a: bool = False, transpose_b: bool = False):
        super().__init__()
        self.transpose_a, self.transpose_b = bool(transpose_a), bool(transpose_b)

    def __call__(self, x: Any, y: Any) -> Tensor:
        return apply_op(self.op, _promote(_tensor(x), _tensor(y)),
                        {"transpose_a": self.transpose_a, "transpose_b": self.transpose_b})[0]


class BatchMatMul(MatMul):
    op = "BatchMatMul"


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.math_ops", name, __all__)
