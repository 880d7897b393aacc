"""``mindspore.ops.function.math_func``: the functional forms of the math ops: the registry's
elementwise ones (generated), reductions (``ops.sum``, ``ops.mean`` ...) and ``ops.matmul``."""
from __future__ import annotations

from typing import Any, Sequence

from ascendemu.errors import InvalidParamError

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .. import operations
from .._utils import defined_here
from ..operations.array_ops import ExpandDims, Squeeze, Transpose
from ..operations.math_ops import BatchMatMul, MatMul, ReduceAll, ReduceMax, ReduceMean, ReduceMin, ReduceSum
from ..composite_op import install_composite_functions
from ..primitive import _tensor, generated_functions
from .array_func import _arg_reduce, cast

# square, add, equal, ...: the functional forms of the registry's operand-only ops
globals().update(generated_functions("math_func", vars(operations)))


def sum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The sum over ``dim``; with ``dtype``, of ``input`` cast to it first (MindSpore's result dtype)."""
    return ReduceSum(keepdim)(input if dtype is None else cast(input, dtype), dim)


def mean(x: Any, axis: Any = None, keep_dims: bool = False) -> Tensor:
    return ReduceMean(keep_dims)(x, axis)


def _no_initial_where(name: str, initial: Any, where: Any) -> None:
    """amax/amin's ``initial`` and ``where`` (numpy's) are not served: refused unless left None."""
    for arg, value in (("initial", initial), ("where", where)):
        if value is not None:
            raise InvalidParamError(f"{name}: {arg}={value!r} is not supported here; leave it None")


def amax(input: Any, axis: Any = None, keepdims: bool = False, *, initial: Any = None, where: Any = None) -> Tensor:
    _no_initial_where("amax", initial, where)
    return ReduceMax(keepdims)(input, axis)


def all(input: Any, axis: Any = None, keep_dims: bool = False) -> Tensor:
    return ReduceAll(keep_dims)(input, axis)


def amin(input: Any, axis: Any = None, keepdims: bool = False, *, initial: Any = None, where: Any = None) -> Tensor:
    _no_initial_where("amin", initial, where)
    return ReduceMin(keepdims)(input, axis)


def matmul(input: Any, other: Any) -> Tensor:
    """numpy.matmul's rules, as MindSpore's ops.matmul: 2-D @ 2-D is MatMul, higher ranks (broadcast
    batch dims) BatchMatMul; a 1-D operand is a row (left) or column (right) vector whose dimension
    is dropped from the result."""
    x, y = _tensor(input), _tensor(other)
    if x.ndim == 0 or y.ndim == 0:
        raise InvalidParamError(f"matmul: inputs must have rank >= 1, got {x.shape} and {y.shape}; "
                                "use ops.mul for a scalar")
    vector_x, vector_y = x.ndim == 1, y.ndim == 1
    if vector_x:
        x = ExpandDims()(x, 0)
    if vector_y:
        y = ExpandDims()(y, 1)
    out = (MatMul() if x.ndim == y.ndim == 2 else BatchMatMul())(x, y)
    if vector_y:
        out = Squeeze(-1)(out)
    if vector_x:
        out = Squeeze(-2 if out.ndim >= 2 and not vector_y else -1)(out)
    return out


def bmm(input_x: Any, mat2: Any) -> Tensor:
    return BatchMatMul()(input_x, mat2)


def argmin(input: Any, axis: int | None = None, keepdims: bool = False) -> Tensor:
    return _arg_reduce("Argmin", input, axis, keepdims)[0]


def permute(input: Any, axis: Sequence[int]) -> Tensor:
    """``ops.permute(input, axis)``: input's dimensions in the order ``axis`` (a Transpose)."""
    return Transpose()(input, axis)


install_composite_functions(globals(), "mindspore.ops.function.math_func")

__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.math_func", name, __all__)
