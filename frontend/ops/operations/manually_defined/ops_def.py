"""``mindspore.ops.operations.manually_defined.ops_def``: MindSpore's hand-written primitives. Here: the
scalar arithmetic and comparison instances (``ops.scalar_add`` ...: Python's operators on Python
numbers, which MindSpore runs in PyNative and folds while compiling a graph), ``scalar_cast`` and
``DtypeToEnum``; the other primitives MindSpore defines here are served from their modules
(array_ops, nn_ops) and re-exported."""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

from ....common import dtype as mstype
from ....unsupported import unsupported
from ...primitive import Primitive, PrimitiveWithInfer, _Op, prim_attr_register  # noqa: F401
from ..array_ops import Cast, Rank, ScalarToTensor, Shape, Tile  # noqa: F401  (MindSpore defines them here)
from ..nn_ops import BatchNorm  # noqa: F401
from ..other_ops import prim_arg_register  # noqa: F401
from ._inner import ScalarCast, _scalar_cast  # noqa: F401  (MindSpore re-exports it here)
from .._control_flow import ForiLoop, Scan, WhileLoop  # noqa: F401  (MindSpore defines them here)

# MindSpore's TypeId of each dtype (mindspore/core/ir/dtype/type_id.h): what DtypeToEnum returns
TYPE_IDS = {"bool": 30, "int8": 32, "int16": 33, "int32": 34, "int64": 35, "uint8": 37, "uint16": 38,
            "uint32": 39, "uint64": 40, "float16": 42, "float32": 43, "float64": 44, "bfloat16": 45}
ZERO_DIVISOR = "The divisor could not be zero. But the divisor is zero now."


class _ScalarBinary(_Op):
    """A scalar primitive of two operands: Python's operator on them, as MindSpore's ``__call__``."""
    _fn: Callable[[Any, Any], Any] = staticmethod(operator.add)

    def __call__(self, x: Any, y: Any) -> Any:
        return type(self)._fn(x, y)


class _ScalarUnary(_Op):
    _fn: Callable[[Any], Any] = staticmethod(operator.pos)

    def __call__(self, x: Any) -> Any:
        return type(self)._fn(x)


def _div(x: Any, y: Any) -> Any:
    if y == 0:
        raise ValueError(ZERO_DIVISOR)
    return x / y


def _floordiv(x: Any, y: Any) -> Any:
    if y == 0:
        raise ValueError(ZERO_DIVISOR)
    return x // y


def _mod(x: Any, y: Any) -> Any:
    if y == 0:
        raise ValueError("Cannot perform modulo operation on zero.")
    return x % y


def _scalar_class(name: str, base: type, fn: Callable) -> type:
    """MindSpore's ``Scalar<Op>`` primitive class (named so: ``Prim[ScalarAdd]``)."""
    return type(name, (base,), {"_fn": staticmethod(fn), "__module__": __name__,
                                "__doc__": f"``{name}()``: the scalar primitive behind ``ops.scalar_*``."})


ScalarAdd = _scalar_class("ScalarAdd", _ScalarBinary, operator.add)
ScalarSub = _scalar_class("ScalarSub", _ScalarBinary, operator.sub)
ScalarMul = _scalar_class("ScalarMul", _ScalarBinary, operator.mul)
ScalarDiv = _scalar_class("ScalarDiv", _ScalarBinary, _div)
ScalarFloorDiv = _scalar_class("ScalarFloorDiv", _ScalarBinary, _floordiv)
ScalarMod = _scalar_class("ScalarMod", _ScalarBinary, _mod)
ScalarPow = _scalar_class("ScalarPow", _ScalarBinary, operator.pow)
ScalarEq = _scalar_class("ScalarEq", _ScalarBinary, operator.eq)
ScalarGt = _scalar_class("ScalarGt", _ScalarBinary, operator.gt)
ScalarGe = _scalar_class("ScalarGe", _ScalarBinary, operator.ge)
ScalarLt = _scalar_class("ScalarLt", _ScalarBinary, operator.lt)
ScalarLe = _scalar_class("ScalarLe", _ScalarBinary, operator.le)
ScalarMax = _scalar_class("ScalarMax", _ScalarBinary, max)
ScalarMin = _scalar_class("ScalarMin", _ScalarBinary, min)
ScalarLog = _scalar_class("ScalarLog", _ScalarUnary, math.log)
ScalarUadd = _scalar_class("ScalarUadd", _ScalarUnary, operator.pos)
ScalarUsub = _scalar_class("ScalarUsub", _ScalarUnary, operator.neg)

scalar_add, scalar_sub, scalar_mul, scalar_div = ScalarAdd(), ScalarSub(), ScalarMul(), ScalarDiv()
scalar_floordiv, scalar_mod, scalar_pow = ScalarFloorDiv(), ScalarMod(), ScalarPow()
scalar_eq, scalar_gt, scalar_ge, scalar_lt, scalar_le = ScalarEq(), ScalarGt(), ScalarGe(), ScalarLt(), ScalarLe()
scalar_max, scalar_min, scalar_log = ScalarMax(), ScalarMin(), ScalarLog()
scalar_uadd, scalar_usub = ScalarUadd(), ScalarUsub()


def scalar_cast(input_x: Any, input_y: Any) -> Any:
    """Deprecated in MindSpore 2.3: ``ScalarCast()(input_x, input_y)``."""
    return _scalar_cast(input_x, input_y)


class DtypeToEnum(_Op):
    """``DtypeToEnum()(op_name, arg_name, dtype)``: MindSpore's TypeId number of ``dtype``."""

    def __call__(self, op_name: str, arg_name: str, dtype: Any) -> int:
        if not isinstance(dtype, mstype.Type) or dtype.name not in TYPE_IDS:
            raise TypeError(f"For '{op_name}', the input '{arg_name}' should be mindspore dtype, but got {dtype}.")
        return TYPE_IDS[dtype.name]


# the scalar functions (instances) of mindspore.ops this module defines
SCALAR_FUNCTIONS = ("scalar_add", "scalar_sub", "scalar_mul", "scalar_div", "scalar_floordiv", "scalar_mod",
                    "scalar_pow", "scalar_eq", "scalar_gt", "scalar_ge", "scalar_lt", "scalar_le", "scalar_max",
                    "scalar_min", "scalar_log", "scalar_uadd", "scalar_usub", "scalar_cast")
# the primitives of mindspore.ops served from here (the Scalar* classes are not public names of ops)
__all__ = ["ScalarCast", "DtypeToEnum", "BatchNorm", "Cast", "Rank", "ScalarToTensor", "Shape", "Tile",
           *SCALAR_FUNCTIONS]
__all__ += ["ForiLoop", "WhileLoop", "Scan"]


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.manually_defined.ops_def", name, __all__)
