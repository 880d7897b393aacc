"""``mindspore.ops.functional`` (``F``): the functions of ``mindspore.ops`` (``F.square(x)``), with the
older names MindSpore keeps here (``F.tensor_add``, ``F.tensor_pow``, ``F.make_range``, ...), and the
instances MindSpore defines here (``F.dtype``, ``F.identity``).

It also fills the Tensor's method table (``tensor_operator_registry``, as MindSpore's functional.py
does): ``x + y``, ``x.reshape(...)``, ``x.sum()`` run the ops registered here, so ``common/tensor.py``
never imports ops.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

from ascendemu.errors import InvalidParamError
from ascendemu.graph.capture import current_tracer

from ..common.tensor import Tensor, tensor_operator_registry
from ..unsupported import unsupported
from . import function
from .composite.base import add_flags, partial
from .op_info_register import custom_info_register, op_info_register
from .function import (abs, add, argmax, argmin, cast, div, equal, exp, expand_dims, flatten, greater,
                       greater_equal, less, less_equal, log, matmul, max, min, mul, neg, not_equal, pow, reshape,
                       sqrt, square, squeeze, sub, transpose)
from .operations import DType, ReduceMax, ReduceMin
from .operations import LogicalNot, Range
from .operations import identity as _identity
from .operations._sequence_ops import TensorToTuple
from .operations.manually_defined import ops_def
from .operations.manually_defined.ops_def import DtypeToEnum
from .operations.other_ops import prim_arg_register
from .primitive import Primitive, ValuePrimitive, constexpr, mixed_precision_cast, prim_attr_register
from .tensor_method import install_tensor_methods
from ._graph_internals import INTERNALS as _GRAPH_INTERNALS

# MindSpore's functional names for ops that mindspore.ops calls otherwise (ops/functional.py there).
ALIASES = {"tensor_add": "add", "tensor_sub": "sub", "tensor_mul": "mul", "tensor_div": "div",
           "tensor_pow": "pow", "tensor_exp": "exp", "neg_tensor": "neg", "absolute": "abs",
           "tensor_lt": "less", "tensor_le": "less_equal", "tensor_gt": "greater", "tensor_ge": "greater_equal",
           "reduce_sum": "sum"}

dtype = DType()                 # ops.dtype(x): the tensor's dtype
identity = _identity()          # MindSpore's ops.identity / F.identity: an instance of P.identity


def make_range(start: int, limit: int | None = None, delta: int = 1) -> tuple[int, ...]:
    """``F.make_range(n)`` is ``(0, 1, ..., n - 1)``; ``make_range(start, limit, delta)`` the ints of
    ``range(start, limit, delta)`` as a tuple (a constant of the graph)."""
    if limit is None:
        start, limit = 0, start
    for name, value in (("start", start), ("limit", limit), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidParamError(f"make_range: {name}={value!r} must be an int")
    if delta == 0:
        raise InvalidParamError("make_range: delta must not be 0")
    return tuple(range(start, limit, delta))


OWN = ("make_range",)
# the functions of mindspore.ops defined outside ops.function (read through F too)
OTHERS = {"mixed_precision_cast": mixed_precision_cast, "dtype": dtype, "identity": identity,
          "prim_attr_register": prim_attr_register, "constexpr": constexpr, "partial": partial}


# ---- internals round 2 ----
# MindSpore's graph-internal functions over Python values (tuples, dicts, scalars, strings), which
# functional.py there makes as ``Primitive(name)`` instances: they run in PyNative and are folded while
# a graph compiles; here a GRAPH_MODE capture runs them on the same Python values.




def _arity(label: str, args: tuple, count: int) -> tuple:
    if len(args) != count:
        raise TypeError(f"For '{label}', the number of input should be {count}, but got {len(args)}")
    return args


def _sequence(label: str, value: Any, kinds: tuple[type, ...] = (tuple, list)) -> Any:
    if not isinstance(value, kinds):
        raise TypeError(f"For '{label}', the input should be {' or '.join(k.__name__ for k in kinds)}, but got "
                        f"{type(value).__name__}")
    return value


def _sequence_len(*args: Any) -> int:
    (seq,) = _arity("sequence_len", args, 1)
    if not isinstance(seq, (tuple, list)):
        raise RuntimeError(f"For 'sequence_len', the input must be a tuple or list, but got {type(seq).__name__}")
    return len(seq)


def _getitem(label: str) -> Callable[..., Any]:
    def get(*args: Any) -> Any:
        seq, index = _arity(label, args, 2)
        _sequence(label, seq)
        if not -len(seq) <= index < len(seq):
            raise IndexError(f"{label} evaluator index should be in range[{-len(seq)}, {len(seq)}), but got {index}.")
        return seq[index]
    return get


def _setitem(label: str, kind: type) -> Callable[..., Any]:
    def put(*args: Any) -> Any:
        seq, index, value = _arity(label, args, 3)
        _sequence(label, seq)
        if not -len(seq) <= index < len(seq):
            raise IndexError(f"{label} evaluator the index: {index} to set out of range: [{-len(seq)},{len(seq) - 1}].")
        items = list(seq)
        items[index] = value
        return kind(items)
    return put


def _make_slice(*args: Any) -> slice:
    if len(args) != 3:
        raise RuntimeError(f"For 'make_slice', the number of input should be 3, but got {len(args)}")
    return slice(*args)


def _make_dict(*args: Any) -> dict:
    keys, values = _arity("make_dict", args, 2)
    if len(_sequence("make_dict", keys)) != len(_sequence("make_dict", values)):
        raise ValueError(f"For 'make_dict', the keys and values must have the same length, got {len(keys)} and "
                         f"{len(values)}")
    return dict(zip(keys, values))


def _dict_getitem(*args: Any) -> Any:
    data, key = _arity("dict_getitem", args, 2)
    _sequence("dict_getitem", data, (dict,))
    if key not in data:
        raise ValueError(f"The key {key} does not exist in the dict:{data}")
    return data[key]


def _dict_setitem(*args: Any) -> dict:
    data, key, value = _arity("dict_setitem", args, 3)
    return {**_sequence("dict_setitem", data, (dict,)), key: value}


def _in_dict(negate: bool) -> Callable[..., bool]:
    label = "not_in_dict" if negate else "in_dict"

    def check(*args: Any) -> bool:
        key, data = _arity(label, args, 2)
        return (key in _sequence(label, data, (dict,))) != negate
    return check


def _equal(label: str, kind: type) -> Callable[..., bool]:
    def check(*args: Any) -> bool:
        a, b = _arity(label, args, 2)
        return _sequence(label, a, (kind,)) == _sequence(label, b, (kind,))
    return check


def _tuple_reversed(*args: Any) -> tuple:
    (seq,) = _arity("tuple_reversed", args, 1)
    if not isinstance(seq, tuple):
        raise TypeError(f"For 'tuple_reversed', input[0] should be Tuple, but got {type(seq).__name__}.")
    return seq[::-1]


def _tuple_div(*args: Any) -> tuple:
    """Each dividend divided by its divisor; MindSpore requires them to divide exactly."""
    x, y = (_sequence("tuple_div", a, (tuple,)) for a in _arity("tuple_div", args, 2))
    if len(x) != len(y):
        raise RuntimeError(f"The size of inputs of 'tuple_div' operator must be the same, but the size of divisor tuple "
                           f"is {len(y)}, the size of dividend tuple is {len(x)}.")
    for a, b in zip(x, y):
        if b == 0 or a % b:
            raise RuntimeError(f"The inputs of 'tuple_div' operator should be divisible, but they are not divisible "
                               f"now, the dividend is {a}, the divisor is {b}.")
    return tuple(a // b for a, b in zip(x, y))


def _reduced_shape(*args: Any) -> tuple[int, ...]:
    """The shape ``shape`` keeps after reducing ``axis`` with keep_dims (``()`` reduces every axis)."""
    shape, axis = _arity("reduced_shape", args, 2)
    rank = len(_sequence("reduced_shape", shape, (tuple, list)))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -rank <= a < rank:
            raise RuntimeError(f"For primitive[reduced_shape], input_x's rank is {rank}, while the 'axis' value should "
                               f"be in the range [{-rank}, {rank}), but got {a}")
    reduced = {a % rank for a in axes} if axes else set(range(rank))
    return tuple(1 if d in reduced else s for d, s in enumerate(shape))


def _shape_mul(input_data: Any) -> int:
    if not isinstance(input_data, tuple):
        raise ValueError("For primitive [shape_mul], input must be tuple")
    return math.prod(input_data)


class _ShapeMul(Primitive):
    """``F.shape_mul(shape)``: the product of a shape tuple's elements (1 for ``()``)."""

    def __init__(self) -> None:
        super().__init__("shape_mul")

    def __call__(self, input_data: Any) -> int:
        return _shape_mul(input_data)


def _binary(label: str, kinds: tuple[type, ...], fn: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def run(*args: Any) -> Any:
        a, b = _arity(label, args, 2)
        for v in (a, b):
            if not isinstance(v, kinds):
                raise TypeError(f"For '{label}', the inputs must be {' or '.join(k.__name__ for k in kinds)}, but "
                                f"got {type(v).__name__}")
        return fn(a, b)
    return run


def _bool_not(*args: Any) -> Any:
    """``not x``: a bool (a bool Tensor in PyNative, as MindSpore returns it there); a Tensor's
    elements negated."""
    (x,) = _arity("BoolNot", args, 1)
    if isinstance(x, Tensor):
        return LogicalNot()(x)
    if not isinstance(x, bool):
        raise TypeError(f"For 'BoolNot', the input must be a bool or Tensor, but got {type(x).__name__}")
    return (not x) if current_tracer() is not None else Tensor(not x)


def _isconstant(x: Any) -> bool:
    """Whether ``x`` is known while compiling: False only for a tensor computed in a captured graph."""
    return not (isinstance(x, Tensor) and x.is_symbolic)


class _IsConstant(Primitive):
    """``F.isconstant(x)``: True unless ``x`` is a value only the running graph knows."""

    def __init__(self) -> None:
        super().__init__("IsConstant")

    def __call__(self, x: Any) -> bool:
        return _isconstant(x)


def _shape_unknown(*args: Any) -> bool:
    (seq,) = _arity("IsDimUnKnown", args, 1)
    if not isinstance(seq, (tuple, list)):
        raise TypeError(f"The input of IsDimUnKnown should be tuple but got {type(seq).__name__}")
    return False        # a sequence's length is always known here (no dynamic-length sequences)


def _value_unknown(*args: Any) -> bool:
    (seq,) = _arity("IsShapeUnKnown", args, 1)
    if not isinstance(seq, (tuple, list)):
        raise TypeError(f"The input of IsShapeUnKnown should be tuple or list but got {type(seq).__name__}")
    return any(not _isconstant(v) for v in seq)


def _is(negate: bool) -> Callable[..., bool]:
    def check(*args: Any) -> bool:
        a, b = _arity("is_not" if negate else "is_", args, 2)
        return (a is b) != negate
    return check


_STR, _BOOL = (str,), (bool,)
INTERNALS: dict[str, Any] = {
    "tuple_len": ValuePrimitive("sequence_len", _sequence_len, "The length of a tuple or list."),
    "list_len": ValuePrimitive("sequence_len", _sequence_len, "The length of a tuple or list."),
    "make_tuple": ValuePrimitive("MakeTuple", lambda *args: args, "Its arguments as a tuple."),
    "make_list": ValuePrimitive("make_list", lambda *args: list(args), "Its arguments as a list."),
    "make_dict": ValuePrimitive("make_dict", _make_dict, "A dict from a tuple of keys and one of values."),
    "make_slice": ValuePrimitive("make_slice", _make_slice, "slice(start, stop, step)."),
    "tuple_getitem": ValuePrimitive("TupleGetItem", _getitem("TupleGetItem"), "seq[index], index checked."),
    "list_getitem": ValuePrimitive("list_getitem", _getitem("list_getitem"), "seq[index], index checked."),
    "tuple_setitem": ValuePrimitive("tuple_setitem", _setitem("tuple_setitem", tuple), "A new tuple with seq[index] = value."),
    "list_setitem": ValuePrimitive("list_setitem", _setitem("list_setitem", list), "A new list with seq[index] = value."),
    "dict_getitem": ValuePrimitive("dict_getitem", _dict_getitem, "data[key]; a missing key is a ValueError."),
    "dict_setitem": ValuePrimitive("dict_setitem", _dict_setitem, "A new dict with data[key] = value."),
    "in_dict": ValuePrimitive("in_dict", _in_dict(False), "key in data."),
    "not_in_dict": ValuePrimitive("not_in_dict", _in_dict(True), "key not in data."),
    "tuple_equal": ValuePrimitive("tuple_equal", _equal("tuple_equal", tuple), "Two tuples equal."),
    "list_equal": ValuePrimitive("list_equal", _equal("list_equal", list), "Two lists equal."),
    "tuple_reversed": ValuePrimitive("tuple_reversed", _tuple_reversed, "A tuple reversed."),
    "tuple_div": ValuePrimitive("tuple_div", _tuple_div, "Two tuples divided element by element, exactly."),
    "reduced_shape": ValuePrimitive("reduced_shape", _reduced_shape, "A shape after a keep_dims reduction."),
    "shape_mul": _ShapeMul(),
    "is_": ValuePrimitive("is_", _is(False), "a is b."),
    "is_not": ValuePrimitive("is_not", _is(True), "a is not b."),
    "isconstant": _IsConstant(),
    "is_sequence_shape_unknown": ValuePrimitive("IsDimUnKnown", _shape_unknown, "Whether a sequence's length is dynamic."),
    "is_sequence_value_unknown": ValuePrimitive("IsShapeUnKnown", _value_unknown, "Whether a sequence holds graph values."),
    "scalar_ne": ValuePrimitive("scalar_ne", _binary("scalar_ne", (bool, int, float), operator.ne), "x != y."),
    "string_eq": ValuePrimitive("string_eq", _binary("string_eq", _STR, operator.eq), "Two strings equal."),
    "string_concat": ValuePrimitive("string_concat", _binary("string_concat", _STR, operator.add), "Two strings joined."),
    "bool_and": ValuePrimitive("bool_and", _binary("bool_and", _BOOL, operator.and_), "x and y."),
    "bool_or": ValuePrimitive("bool_or", _binary("bool_or", _BOOL, operator.or_), "x or y."),
    "bool_eq": ValuePrimitive("bool_eq", _binary("bool_eq", _BOOL, operator.eq), "x == y for bools."),
    "bool_not": ValuePrimitive("BoolNot", _bool_not, "not x."),
    "tensor_range": Range(),
    "DtypeToEnum": DtypeToEnum,
    "TensorToTuple": TensorToTuple,
    "add_flags": add_flags,
    "op_info_register": op_info_register,
    "custom_info_register": custom_info_register,
    "prim_arg_register": prim_arg_register,
    **{name: getattr(ops_def, name) for name in ops_def.SCALAR_FUNCTIONS},
    **_GRAPH_INTERNALS,
}


def functions() -> tuple[str, ...]:
    """The function names of ``mindspore.ops`` (classes are ``ops.operations``'), with this module's."""
    return function.FUNCTIONS + tuple(OTHERS) + tuple(ALIASES) + OWN + tuple(INTERNALS)


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return list(functions())
    target = ALIASES.get(name, name)
    if target in OTHERS:
        return OTHERS[target]
    if target in INTERNALS:
        return INTERNALS[target]
    if target in function.FUNCTIONS:
        return getattr(function, target)
    raise unsupported("ops.functional", name, functions())


def __dir__() -> list[str]:
    return sorted(functions())


# ------------------------------------------------------------------ the Tensor's operators and methods
for _name, _fn in {"add": add, "sub": sub, "mul": mul, "div": div, "pow": pow, "matmul": matmul, "neg": neg,
                   "abs": abs, "equal": equal, "not_equal": not_equal, "greater": greater,
                   "greater_equal": greater_equal, "less": less, "less_equal": less_equal, "reshape": reshape,
                   "transpose": transpose, "cast": cast, "expand_dims": expand_dims, "squeeze": squeeze,
                   "max": max, "min": min, "argmax": argmax, "argmin": argmin, "exp": exp, "log": log,
                   "sqrt": sqrt, "square": square,
                   "reduce_max": ReduceMax, "reduce_min": ReduceMin, "assign": function.assign,
                   "flatten": flatten, "floor_divide": function.floor_divide, "floor_mod": function.floor_mod,
                   "bitwise_and": function.bitwise_and, "bitwise_or": function.bitwise_or,
                   "bitwise_xor": function.bitwise_xor, "logical_not": function.logical_not,
                   "round": function.round, "sum": function.sum, "mean": function.mean}.items():
    tensor_operator_registry.register(_name, _fn)
# the Tensor's methods that are ops with the tensor first (x.split, x.clip, x.add_ ...): ops/tensor_method.py
install_tensor_methods(tensor_operator_registry.register_method)
