"""``mindspore.ops.primitive``: the base every primitive and op of the front end is built on, and the
classes and decorators users write their own primitives with.

The base: :class:`Primitive`; :func:`apply_op`, where every op ends (during a GRAPH_MODE capture it
records a node, otherwise it runs the op through the installed backend, PyNative; no-task ops reshape
the host data); implicit type promotion of binary operands; mixed precision (:class:`AmpScope`); the
primitive classes and functions generated from the op registry for operand-only elementwise ops
(:func:`generated_primitives`, :func:`generated_functions`), each placed in the module MindSpore
defines it in, with MindSpore's signature from the recorded table (``api_coverage.table_signature``).

For users: ``PrimitiveWithInfer``, ``PrimitiveWithCheck``, ``prim_attr_register``, ``constexpr``. A
user's primitive has no kernel here: MindSpore runs the kernel named like the primitive, so a call
runs the supported primitive of that name (``class Add(PrimitiveWithInfer)`` is ``ops.Add``) and any
other name fails with UnsupportedOpError (see ``Primitive.__call__``). ``constexpr`` functions run at
once on their constant arguments, as MindSpore runs them while compiling.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError, RuntimeParamError
from ascendemu.graph.capture import GraphCaptureError, current_tracer
from ascendemu.graph.ir import NO_TASK_OPS, infer_node_outputs
from ascendemu.kernels.library import infer_outputs
from ascendemu.kernels.ops.common import COMPLEX, FLOAT, FLOATS
from ascendemu.kernels.registry import REGISTRY
from ascendemu.kernels.signature import OpSignature

from ..api_coverage import table_signature
from ..backend import get_backend
from ..capture import tracer_value
from ..common import dtype as mstype
from ..common.recompute import check_bool, primitive_marks
from ..common.scoped_class import scoped_class
from ..common.tensor import Tensor
from ..unsupported import UnsupportedOpError, unsupported
from ._utils import bind_arguments, check_kept_default

__all__ = ["Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register", "constexpr"]


# Implicit type promotion of binary ops, as MindSpore 2.10 does it (recorded by
# tools/record_dtype_promotion.py into tests/fixtures/dtype_promotion.json): bool gives way to any
# type; signed ints (and uint8) widen to the wider, int8 + uint8 to int16; an int meets a float as
# that float; floats widen, float16 + bfloat16 to float32. uint16/32/64 mix with bool only.
PROMOTION_ORDER = {"int8": 1, "uint8": 1, "int16": 2, "int32": 3, "int64": 4,
                   "float16": 5, "bfloat16": 5, "float32": 6, "float64": 7, "complex64": 8, "complex128": 9}
# pairs of one rank that promote to a third type
PROMOTION_TIES = {frozenset(("int8", "uint8")): "int16", frozenset(("float16", "bfloat16")): "float32"}
# what a Python scalar operand is, by its type: it never widens a tensor of its own kind
_SCALAR_KIND = ((bool, "bool"), (int, "int"), (float, "float"), (np.bool_, "bool"), (np.integer, "int"),
                (np.floating, "float"))


class PromotionError(InvalidTypeError):
    """Operands whose dtypes MindSpore does not promote to a common one (a TypeError there too)."""


def promote_types(a: str, b: str) -> str:
    """The dtype a binary op on ``a`` and ``b`` operands computes in (MindSpore's promotion)."""
    if a == b or b == "bool":
        return a
    if a == "bool":
        return b
    if a not in PROMOTION_ORDER or b not in PROMOTION_ORDER:
        raise PromotionError(f"Type implicit conversion between {mstype.to_type(a)} and {mstype.to_type(b)} is "
                             f"not supported (as in MindSpore); cast one operand first")
    tie = PROMOTION_TIES.get(frozenset((a, b)))
    return tie or builtins.max(a, b, key=PROMOTION_ORDER.__getitem__)


def _tensor(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return Tensor(x)


@dataclass(frozen=True)
class AmpScope:
    """How the ops a cell runs compute under mixed precision (``Cell.to_float``, ``amp`` levels).

    ``dtype``: float Parameters an op reads here are cast to it at each use, while the Parameter itself
    stays the float32 master copy (MindSpore's MixedPrecisionCast); the cell's float inputs are cast
    to it too. ``white_ops``: ops whose float inputs are cast to float16 and whose float outputs are
    cast back to float32 (amp O1's white list of primitives). ``output``: the cell's float outputs
    are cast to it (amp O1 puts float32 after a white-listed cell).
    """

    dtype: str | None = None
    white_ops: frozenset = frozenset()
    output: str | None = None


_amp = threading.local()


@contextmanager
def _amp_scope(scope: AmpScope) -> Iterator[None]:
    stack = _amp.__dict__.setdefault("stack", [])
    stack.append(scope)
    try:
        yield
    finally:
        stack.pop()


def _current_amp() -> AmpScope | None:
    stack = getattr(_amp, "stack", None)
    return stack[-1] if stack else None


def mixed_precision_cast(dst_dtype: Any, x: Any) -> Any:
    """Cast the float tensors in ``x`` (a tensor, or tuples/lists of them) to ``dst_dtype``; anything
    else (int labels, Python values) passes unchanged."""
    if isinstance(x, (tuple, list)):
        return type(x)(mixed_precision_cast(dst_dtype, v) for v in x)
    if isinstance(x, Tensor) and x.dtype.name in FLOAT:
        return _cast(x, dst_dtype)
    return x


def apply_op(op: str, inputs: Sequence[Any], attrs: dict[str, Any] | None = None) -> tuple[Tensor, ...]:
    """Record (GRAPH_MODE capture) or run (PyNative) one op; returns its output tensors. Inside a
    mixed-precision cell, the amp casts are made around it (:class:`AmpScope`)."""
    tensors = [_tensor(x) for x in inputs]
    attrs = attrs or {}
    scope = _current_amp()
    if scope is not None and op != "Cast":
        if op in scope.white_ops:
            outs = _dispatch(op, [mixed_precision_cast("float16", t) for t in tensors], attrs)
            return tuple(mixed_precision_cast("float32", t) for t in outs)
        tensors = [_amp_parameter(t, scope) for t in tensors]
    return _dispatch(op, tensors, attrs)


def _amp_parameter(t: Tensor, scope: AmpScope | None) -> Tensor:
    """A float Parameter read under ``scope``'s dtype, cast to it; anything else unchanged."""
    if scope is None or scope.dtype is None or not t.is_parameter or t.dtype.name not in FLOAT:
        return t
    return _cast(t, scope.dtype)


def _dispatch(op: str, tensors: list[Tensor], attrs: dict[str, Any]) -> tuple[Tensor, ...]:
    tracer = current_tracer()
    if tracer is not None:
        vids = [tracer_value(tracer, t) for t in tensors]
        return tuple(Tensor._symbolic(tracer, v) for v in tracer.apply(op, vids, attrs))
    for t in tensors:
        if t.is_symbolic:
            raise GraphCaptureError("a symbolic tensor escaped its GRAPH_MODE capture and cannot be computed "
                                    "on; return it from construct instead of storing it")
    if op in NO_TASK_OPS:
        (desc,) = infer_node_outputs(op, [tensors[0].desc], attrs)
        return (Tensor(tensors[0]._data.reshape(desc.shape)),)
    sig = OpSignature.make(op, [t.desc for t in tensors], **attrs)
    descs = infer_outputs(sig)
    arrays = get_backend().run_op(sig, [t._data for t in tensors], descs)
    if len(arrays) != len(descs):
        raise InvalidParamError(f"{op}: backend returned {len(arrays)} outputs, expected {len(descs)}")
    outs = tuple(Tensor(np.asarray(a).reshape(d.shape), dtype=d.dtype) for a, d in zip(arrays, descs))
    for observe in PYNATIVE_OBSERVERS:
        observe(outs)
    return outs


# callables shown the outputs of every PyNative op (NPUClearFloatStatus's overflow watch, math_ops)
PYNATIVE_OBSERVERS: list[Callable[[tuple[Tensor, ...]], None]] = []


def _promote(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    scope = _current_amp()          # a Parameter read in a float16 cell is float16 before promotion
    x, y = _amp_parameter(x, scope), _amp_parameter(y, scope)
    if x.dtype == y.dtype:
        return x, y
    target = promote_types(x.dtype.name, y.dtype.name)
    return (_cast(x, target) if x.dtype.name != target else x), (_cast(y, target) if y.dtype.name != target else y)


def _same_dtype(op: str, x: Tensor, y: Tensor, names: tuple[str, str] = ("x1", "x2")) -> tuple[Tensor, Tensor]:
    """Operands of an op MindSpore does not promote (MatMul: float16 by float32 is a TypeError there, not a
    silent Cast); a float Parameter read under mixed precision is cast to the scope's dtype first."""
    scope = _current_amp()
    x, y = _amp_parameter(x, scope), _amp_parameter(y, scope)
    if x.dtype != y.dtype:
        raise TypeError(f"For '{op}', the type of '{names[1]}' should be same as '{names[0]}', but got "
                        f"'{names[0]}' with type Tensor[{x.dtype}] and '{names[1]}' with type Tensor[{y.dtype}].")
    return x, y


def _scalar_like(value: Any, ref: Tensor) -> Tensor:
    """A Python (or numpy) scalar operand of a binary op with tensor ``ref``, as MindSpore types it: a
    scalar keeps ``ref``'s dtype unless it is of a higher kind (a float with an int or bool tensor
    makes float32, an int with a bool tensor int64); uint16/32/64 tensors take bool scalars only."""
    kind = next((k for t, k in _SCALAR_KIND if isinstance(value, t)), None)
    if kind is None:
        return _tensor(value)
    dtype = ref.dtype.name
    if kind != "bool" and dtype not in PROMOTION_ORDER and dtype != "bool":
        raise PromotionError(f"Type implicit conversion between {ref.dtype} and a Python {kind} is not supported "
                             f"(as in MindSpore); cast the tensor first")
    if kind == "float" and dtype not in FLOATS:
        return Tensor(value, mstype.float32)
    if kind == "int" and dtype == "bool":
        return Tensor(value, mstype.int64)
    return Tensor(value, ref.dtype)


def _binary_operands(x: Any, y: Any) -> tuple[Tensor, Tensor]:
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = _tensor(x)
    if not isinstance(x, Tensor):
        x = _scalar_like(x, y)
    elif not isinstance(y, Tensor):
        y = _scalar_like(y, x)
    return _promote(x, y)


def _cast(x: Any, dtype: Any) -> Tensor:
    """x as ``dtype`` (itself when it already is): the Cast op, which promotion and mixed precision
    insert here and ``ops.Cast`` runs."""
    x, target = _tensor(x), mstype.to_type(dtype)
    if x.dtype == target:
        return x
    return apply_op("Cast", [x], {"dst_type": target.name})[0]


class Primitive:
    """Base of every primitive; ``Prim[Name]`` like MindSpore.

    ``Primitive(name)`` itself, or a user's subclass (``PrimitiveWithInfer`` with
    ``@prim_attr_register``, see ``ops.primitive``), is known by its name only: MindSpore runs the
    kernel of that name with the primitive's attributes. Here such a call runs the supported
    primitive of that name built from ``init_attrs``, or fails with UnsupportedOpError.
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise InvalidTypeError(f"Primitive: name={name!r} must be a str naming the primitive (MindSpore's "
                                   f"Primitive_(arg0: str))")
        if not name:
            raise InvalidValueError("Primitive: name='' must be a non-empty str naming the primitive")
        self.name = name
        self.attrs: dict[str, Any] = {}
        self.init_attrs: dict[str, Any] = {}

    def add_prim_attr(self, name: str, value: Any) -> "Primitive":
        """The attribute in ``attrs`` and on the instance (MindSpore's ``prim.k`` after ``add_prim_attr("k", v)``)."""
        self.__dict__[name] = value
        self.attrs[name] = value
        return self

    def shard(self, in_strategy: Any = None, out_strategy: Any = None) -> "Primitive":
        """MindSpore's ``Primitive.shard``: how SEMI_AUTO_PARALLEL splits this op's inputs over the devices
        (``frontend.parallel._sharding``); the primitive itself."""
        from ..parallel._sharding import shard_primitive
        return shard_primitive(self, in_strategy, out_strategy)

    def recompute(self, mode: bool = True) -> "Primitive":
        """MindSpore's ``Primitive.recompute``: this primitive's outputs are recomputed in the backward
        (``mode``) or kept, whatever its cell's ``recompute()`` says; the primitive itself."""
        self.add_prim_attr("recompute", check_bool(mode))
        if type(self) not in _RECOMPUTED.values():
            self.__class__ = scoped_class(type(self), _RECOMPUTED, lambda prim: primitive_marks(prim.attrs["recompute"]))
        return self

    def init_prim_io_names(self, inputs: Sequence[str], outputs: Sequence[str]) -> None:
        self.add_prim_attr("input_names", list(inputs))
        self.add_prim_attr("output_names", list(outputs))

    def __call__(self, *args: Any) -> Any:
        known = _SUPPORTED.get(self.name)
        if known is None or isinstance(self, known):
            raise unsupported("ops", self.name, tuple(_SUPPORTED),
                              hint=f"{type(self).__name__} is a primitive known only by its name, and only the "
                                   "primitives of mindspore.ops have kernels here: write it with them in construct")
        try:
            prim = known(**self.init_attrs)
        except InvalidParamError:          # an attribute the op refuses (typed, MindSpore's TypeError/ValueError)
            raise
        except TypeError as exc:           # attributes that are not the supported primitive's signature
            raise UnsupportedOpError(f"ops.{self.name}: the attributes {self.init_attrs} of {type(self).__name__} "
                                     f"do not build the supported {self.name}: {exc}") from exc
        try:
            inspect.signature(prim).bind(*args)
        except TypeError as exc:           # MindSpore checks a by-name primitive's input count in C++
            raise RuntimeParamError(f"For Operator[{self.name}], the inputs number does not fit "
                                    f"{self.name}{inspect.signature(prim)}: {exc}") from None
        except ValueError:                 # no signature to check against: the call itself will tell
            pass
        return prim(*args)

    def __repr__(self) -> str:
        return f"Prim[{self.name}]"


_RECOMPUTED: dict[type, type] = {}


# The supported primitive classes by MindSpore name, filled by ``ops.operations`` (register_primitives):
# a primitive known only by its name (a user's PrimitiveWithInfer subclass) runs the one named so.
_SUPPORTED: dict[str, type] = {}


def register_primitives(classes: Mapping[str, type]) -> None:
    """Make ``classes`` (MindSpore name -> primitive class) the ones a name-only primitive can run."""
    for name, cls in classes.items():
        if not (isinstance(cls, type) and issubclass(cls, Primitive)):
            raise InvalidParamError(f"register_primitives: {name}={cls!r} is not a Primitive subclass")
        _SUPPORTED[name] = cls


class _Op(Primitive):
    """A primitive of ``mindspore.ops`` without attributes: ``__init__(self)``, as MindSpore's (the base
    ``Primitive(name)`` is for users' primitives known by name)."""

    def __init__(self) -> None:
        super().__init__(type(self).__name__)


class _Generated(_Op):
    """A registry op's primitive: no attributes (``__init__(self)``, as MindSpore's), its operands as
    the table names them (``__call__`` is made per class by :func:`generated_primitives`)."""
    op = ""
    arity = 1

    def _run(self, operands: list[Any]) -> Tensor:
        if builtins.any(isinstance(v, (list, tuple)) for v in operands):
            raise _sequence_operand_error(type(self).__name__, self.arity, operands)
        if self.arity == 1:
            return apply_op(self.op, operands)[0]
        x, y = _binary_operands(*operands)
        if type(self).__name__ in TRUE_DIVISION and x.dtype.name not in FLOATS + COMPLEX:
            x, y = _cast(x, mstype.float32), _cast(y, mstype.float32)
        return apply_op(self.op, [x, y])[0]


# primitives whose integer or bool operands divide as float32 (MindSpore's DivFuncImpl infers float32 for
# them: ops.div(int32 3, 2) is 1.5); RealDiv keeps the integer dtype and truncates, as its kernel does
TRUE_DIVISION = frozenset({"Div"})


# the operand names used where the table records none (a primitive whose __call__ is MindSpore's *args)
DEFAULT_OPERANDS = {1: ("input",), 2: ("input", "other")}
# what MindSpore 2.10's argument check lists as valid for a registry op's operands: a unary op takes a Tensor, a
# binary one a Tensor or a Python number on either side (ops.add(x, 2)); neither a list nor a tuple
VALID_OPERANDS = {1: "<Tensor>", 2: "<Number, Tensor>"}


def _type_text(value: Any) -> str:
    """A value as MindSpore's argument check names it: ``List<float, float>``, ``Tensor``, ``int``."""
    if isinstance(value, (list, tuple)):
        kind = "List" if isinstance(value, list) else "Tuple"
        return f"{kind}<{', '.join(_type_text(v) for v in value)}>"
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _sequence_operand_error(name: str, arity: int, operands: list[Any]) -> TypeError:
    """MindSpore's TypeError for a list or tuple where a registry op takes a Tensor (it converts none)."""
    names = DEFAULT_OPERANDS[arity]
    given = ", ".join(f"{n}={_type_text(v)}" for n, v in zip(names, operands))
    valid = ", ".join(f"{n}={VALID_OPERANDS[arity]}" for n in names)
    return TypeError(f'Failed calling {name} with "{name}()({given})".\nThe valid calling should be: \n'
                     f'"{name}()({valid})". Wrap the values in a Tensor: mindspore.Tensor([...]).')


def _operand_signature(qualified: str, part: str, arity: int) -> inspect.Signature:
    """The table's signature of ``qualified`` when it names the operands, else ``input`` (, ``other``)."""
    recorded = table_signature(qualified, part)
    if recorded is not None and builtins.all(p.kind != p.VAR_POSITIONAL for p in recorded.parameters.values()):
        return recorded
    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                              for n in DEFAULT_OPERANDS[arity]])


def _bind_operands(label: str, signature: inspect.Signature, arity: int, args: tuple, kwargs: dict) -> list[Any]:
    """The ``arity`` operands of a call bound to ``signature``; any further parameter (``relu``'s
    ``inplace``, ``div``'s ``rounding_mode``) must keep MindSpore's default, the only behaviour here."""
    bound = bind_arguments(label, signature, args, kwargs)
    values = list(bound.arguments.items())
    for name, value in values[arity:]:
        check_kept_default(label, signature.parameters[name], value)
    return [value for _, value in values[:arity]]


def _generated_call(name: str, arity: int) -> Callable:
    signature = _operand_signature(f"mindspore.ops.{name}", "call", arity)

    def __call__(self: _Generated, *args: Any, **kwargs: Any) -> Tensor:
        return self._run(_bind_operands(name, signature, arity, args, kwargs))
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    __call__.__signature__ = signature.replace(parameters=[self_param, *signature.parameters.values()])
    return __call__


def _functional(prim: type, name: str, module: str) -> Callable:
    """The function ``mindspore.ops.<name>`` of the generated primitive ``prim``, with MindSpore's
    signature (the table's): names, defaults and keyword handling, and Python's TypeError text."""
    signature = _operand_signature(f"mindspore.ops.{name}", "signatures", prim.arity)

    def fn(*args: Any, **kwargs: Any) -> Tensor:
        return prim()._run(_bind_operands(name, signature, prim.arity, args, kwargs))
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    fn.__doc__ = f"Functional form of {prim.__name__}."
    fn.__signature__ = signature
    return fn


# The registry's generated primitives and functions that MindSpore defines in nn_ops / nn_func (the
# signature table's paths); all the others are math_ops / math_func ones.
NN_GENERATED_PRIMITIVES = frozenset({"ReLU", "Sigmoid", "Tanh", "GeLU", "GELU", "ReLU6", "HSigmoid", "HSwish"})
NN_GENERATED_FUNCTIONS = frozenset({"relu", "sigmoid", "relu6", "hardsigmoid", "hardswish"})


def _generated_ops() -> Iterator[Any]:
    for op in REGISTRY.values():
        if op.frontend is not None and op.frontend.generated:
            yield op


def generated_primitives(module: str) -> dict[str, type]:
    """The primitive classes of the registry's operand-only ops that MindSpore defines in
    ``mindspore.ops.operations.<module>`` ("math_ops" or "nn_ops"), one per MindSpore name, made
    with that module as their ``__module__`` and MindSpore's ``__call__`` signature (the table's)."""
    home = f"{__package__}.operations.{module}"
    classes = {}
    for op in _generated_ops():
        arity = op.elementwise.arity
        for name in op.frontend.primitives:
            if (name in NN_GENERATED_PRIMITIVES) == (module == "nn_ops"):
                doc = f"Elementwise {op.name}" + (" with broadcasting." if arity == 2 else ".")
                classes[name] = type(name, (_Generated,), {"op": op.name, "arity": arity, "__module__": home,
                                                           "__doc__": doc, "__call__": _generated_call(name, arity)})
    return classes


def generated_functions(module: str, primitives: Mapping[str, type]) -> dict[str, Callable]:
    """The functional forms of the registry's operand-only ops that MindSpore defines in
    ``mindspore.ops.function.<module>`` ("math_func" or "nn_func"); ``primitives`` maps the
    MindSpore names of the generated primitive classes to them."""
    functions = {}
    for op in _generated_ops():
        prim = primitives[op.frontend.primitives[0]]
        for name in op.frontend.functions:
            if (name in NN_GENERATED_FUNCTIONS) == (module == "nn_func"):
                functions[name] = _functional(prim, name, f"{__package__}.function.{module}")
    return functions


class ValuePrimitive(Primitive):
    """A primitive instance MindSpore's front end computes on Python values (``functional``'s ``Prim[<name>]``
    instances, ``composite``'s MetaFuncGraphs such as ``tail``): they run in PyNative and fold while a graph
    compiles; here a GRAPH_MODE capture runs them on the same Python values."""

    def __init__(self, name: str, fn: Callable[..., Any], doc: str) -> None:
        super().__init__(name)
        self._fn = fn
        self.__doc__ = doc

    def __call__(self, *args: Any) -> Any:
        return self._fn(*args)


class PrimitiveWithInfer(Primitive):
    """A primitive whose subclass infers its outputs (``infer_shape``/``infer_dtype``/``infer_value``)."""

    def infer_shape(self, *args: Any) -> Any:
        return None

    def infer_dtype(self, *args: Any) -> Any:
        return None

    def infer_value(self, *args: Any) -> Any:
        return None


class PrimitiveWithCheck(Primitive):
    """A primitive whose subclass checks its inputs (``check_shape``/``check_dtype``)."""

    def check_shape(self, *args: Any) -> None:
        return None

    def check_dtype(self, *args: Any) -> None:
        return None


def prim_attr_register(fn: Callable) -> Callable:
    """Decorates a primitive's ``__init__``: initialises the primitive under its class name and records
    every argument (defaults included) as an attribute (``attrs``, ``init_attrs``), then runs ``fn``."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def deco(self: Primitive, *args: Any, **kwargs: Any) -> None:
        Primitive.__init__(self, getattr(type(self), "substitute_name", type(self).__name__))
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name, value in list(bound.arguments.items())[1:]:
            self.add_prim_attr(name, value)
            self.init_attrs[name] = value
        fn(self, *args, **kwargs)
    deco.decorated_func = fn
    return deco


def constexpr(fn: Callable | None = None, get_instance: bool = True, name: str | None = None,
              reuse_result: bool = True, check: bool = True) -> Any:
    """``@constexpr``: a function of constants (shapes, numbers, dtypes) that MindSpore evaluates while
    compiling. Here it runs when called, since a GRAPH_MODE capture runs Python with constant
    shapes; a tensor computed inside the graph is refused, as MindSpore refuses a variable input."""
    def deco(func: Callable) -> Any:
        label = name or func.__name__

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            if check:
                for i, value in enumerate([*args, *kwargs.values()]):
                    if isinstance(value, Tensor) and value.is_symbolic:
                        raise InvalidParamError(
                            f"constexpr function {label}: argument {i} is a tensor computed in the graph; a "
                            "constexpr function runs at compile time on constants (shapes, numbers, dtypes) only")
            return func(*args, **kwargs)
        return run if get_instance else (lambda: run)
    return deco if fn is None else deco(fn)
