"""``mindspore.ops.function.sparse_unary_func``: ``coo_X`` / ``csr_X``, the dense unary op ``X`` applied
to a sparse tensor's stored values (``ops.coo_exp``, ``ops.csr_relu`` ...).

One table, :data:`UNARY_OPS`: each entry makes the COO and the CSR function, which keep the index
structure and run the served dense op on ``values`` (an ordinary Tensor), so both modes, dtypes and
gradients are the dense op's.
"""
from __future__ import annotations

from typing import Any, Callable

from ...common.sparse_tensor import COOTensor, CSRTensor
from . import math_func, nn_func

# MindSpore 2.10's sparse unary functions: op name -> the module of the dense op it applies (as
# MindSpore's sparse_unary_func.py calls math_func.X / nn_func.X)
UNARY_OPS: dict[str, Any] = {
    **{name: math_func for name in (
        "cos", "tan", "exp", "inv", "expm1", "isfinite", "asin", "sqrt", "log", "isnan", "acos", "floor", "atan",
        "square", "sinh", "ceil", "cosh", "log1p", "round", "tanh", "asinh", "neg", "acosh", "isinf", "atanh",
        "abs", "sin")},
    **{name: nn_func for name in ("relu", "relu6", "softsign", "sigmoid")},
}


def _coo_unary(op: str, dense: Callable[[Any], Any]) -> Callable[[COOTensor], COOTensor]:
    def fn(x: COOTensor) -> COOTensor:
        if not isinstance(x, COOTensor):
            raise TypeError(f"For 'coo_{op}', the input must be a COOTensor, but got {type(x).__name__}.")
        return COOTensor(x.indices, dense(x.values), x.shape)
    fn.__name__ = fn.__qualname__ = f"coo_{op}"
    fn.__doc__ = f"``ops.{op}`` of a COOTensor's values; the indices and shape stay."
    return fn


def _csr_unary(op: str, dense: Callable[[Any], Any]) -> Callable[[CSRTensor], CSRTensor]:
    def fn(x: CSRTensor) -> CSRTensor:
        if not isinstance(x, CSRTensor):
            raise TypeError(f"For 'csr_{op}', the input must be a CSRTensor, but got {type(x).__name__}.")
        return CSRTensor(x.indptr, x.indices, dense(x.values), x.shape)
    fn.__name__ = fn.__qualname__ = f"csr_{op}"
    fn.__doc__ = f"``ops.{op}`` of a CSRTensor's values; the structure and shape stay."
    return fn


_FUNCTIONS = {}
for _op, _module in UNARY_OPS.items():
    _FUNCTIONS[f"csr_{_op}"] = _csr_unary(_op, getattr(_module, _op))
    _FUNCTIONS[f"coo_{_op}"] = _coo_unary(_op, getattr(_module, _op))
globals().update(_FUNCTIONS)

__all__ = sorted(_FUNCTIONS)
del _op, _module
