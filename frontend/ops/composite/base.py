"""``mindspore.ops.composite.base``: higher-order functions over Python structure, as the zoo's
optimizers and gradient wrappers use them, and ``GradOperation``.

``MultitypeFuncGraph`` is a function overloaded on its arguments' kinds (``@f.register("Tensor",
"Number")``); ``HyperMap`` applies a function over the elements of tuples or lists (nested ones
too), ``Map`` over one level; ``partial`` binds leading arguments. They only arrange Python calls: in
a GRAPH_MODE capture the calls they make record the ops, so nothing here has a kernel of its own.

Gradients (``GradOperation`` here, ``ops.grad``/``ops.value_and_grad`` in ``function.grad``) all end
in :func:`_grad_call`: the function runs on symbolic tensors inside a capture and the graph compiler
appends its backward graph (``ascendemu.graph.autodiff``) from each op's backward rule. Inside
``construct`` or ``@jit`` that happens in the enclosing capture (forward, backward and an optimizer
update become one graph); called from plain Python (PyNative), the call is captured and run as one
graph of its own, so backward ops are device kernels in both modes. Return structures are
MindSpore's (../shared/REFERENCE-training.md 4.1).
"""
from __future__ import annotations

import functools
import inspect
import numbers
from typing import Any, Callable

import numpy as np

from ascendemu.errors import ArgumentError, InvalidParamError
from ascendemu.graph.parallel.sharding import differentiate_sharded
from ascendemu.graph.capture import current_tracer

from ...capture import tracer_value
from ...common.api import run_graph
from ...common.parse import convert
from ...common.parameter import Parameter
from ...common.recompute import check_bool, recompute
from ...common.tensor import Tensor

__all__ = ["MultitypeFuncGraph", "HyperMap", "Map", "partial", "add_flags", "GradOperation", "recompute_block"]


def _is_function(x: Any) -> bool:
    return callable(x) and not isinstance(x, (type, Tensor))


# The type names MindSpore's `register` takes, and which Python values each one matches (MindSpore's
# `get_py_obj_dtype` + `issubclass_`: Bool and Int and Float are Numbers; a Parameter is a Tensor).
TYPE_NAMES: dict[str, Callable[[Any], bool]] = {
    "Tensor": lambda x: isinstance(x, Tensor),
    "Number": lambda x: isinstance(x, (numbers.Number, np.bool_)),
    "Bool": lambda x: isinstance(x, (bool, np.bool_)),
    "Int": lambda x: isinstance(x, (int, np.integer)) and not isinstance(x, bool),
    "Float": lambda x: isinstance(x, (float, np.floating)),
    "String": lambda x: isinstance(x, str),
    "Tuple": lambda x: isinstance(x, tuple),
    "List": lambda x: isinstance(x, list),
    "Dictionary": lambda x: isinstance(x, dict),
    "None": lambda x: x is None,
    "NoneType": lambda x: x is None,
    "Function": _is_function,
    # sparse tensors do not exist here: functions registered for them are never chosen
    "RowTensor": lambda x: False,
    "COOTensor": lambda x: False,
    "CSRTensor": lambda x: False,
}


def _kind(x: Any) -> str:
    for name in ("Tensor", "Bool", "Int", "Float", "String", "Tuple", "List", "Dictionary", "None", "Function"):
        if TYPE_NAMES[name](x):
            return name
    return type(x).__name__


class MultitypeFuncGraph:
    """``MultitypeFuncGraph(name)``: a function chosen by the kinds of its arguments.

    ``@f.register("Tensor", "Tensor")`` adds an overload; a call runs the first registered overload
    whose type names all match (MindSpore's order), and raises InvalidParamError when none does.
    """

    def __init__(self, name: str, read_value: bool = False, doc_url: str = ""):
        if not isinstance(name, str):
            raise InvalidParamError(f"MultitypeFuncGraph: name must be a str, got {name!r}")
        self.name = name
        self.read_value = bool(read_value)
        self.entries: list[tuple[tuple[str, ...], Callable]] = []

    def register(self, *type_names: str) -> Callable[[Callable], Callable]:
        for t in type_names:
            if not isinstance(t, str):
                raise InvalidParamError(f"MultitypeFuncGraph {self.name!r}: register takes type names (str), "
                                        f"got {t!r}")
            if t not in TYPE_NAMES:
                raise InvalidParamError(f"MultitypeFuncGraph {self.name!r}: unknown type name {t!r}; use one of "
                                        f"{', '.join(TYPE_NAMES)}")

        def deco(fn: Callable) -> Callable:
            self.entries.append((tuple(type_names), fn))
            return fn
        return deco

    def __call__(self, *args: Any) -> Any:
        for names, fn in self.entries:
            if len(names) == len(args) and all(TYPE_NAMES[n](a) for n, a in zip(names, args)):
                return fn(*args)
        raise InvalidParamError(f"MultitypeFuncGraph {self.name!r}: no registered function matches the arguments "
                         f"({', '.join(_kind(a) for a in args)}); registered: "
                         f"{[list(names) for names, _ in self.entries]}")

    def __repr__(self) -> str:
        return f"MultitypeFuncGraph({self.name!r})"


def _check_ops(owner: str, ops: Any) -> None:
    if ops is not None and not isinstance(ops, MultitypeFuncGraph):
        raise InvalidParamError(f"{owner}: ops must be a MultitypeFuncGraph or None, got {type(ops).__name__}")


class HyperMap:
    """``HyperMap(ops=None)(*args)``: ``ops`` applied to the leaves of same-shaped nested tuples/lists.

    With ``ops=None`` the function is the first argument. Where the arguments are tuples (or lists),
    all of them must be tuples (lists) of one length, and the result is a tuple (list) of the
    function mapped over their elements, recursively; otherwise the function is called on them.
    """

    def __init__(self, ops: MultitypeFuncGraph | None = None, reverse: bool = False):
        _check_ops("HyperMap", ops)
        self.ops, self.reverse = ops, bool(reverse)

    def __call__(self, *args: Any) -> Any:
        fn, args = (args[0], args[1:]) if self.ops is None else (self.ops, args)
        if not callable(fn):
            raise InvalidParamError(f"HyperMap: the function must be callable, got {type(fn).__name__}")
        return self._map(fn, args)

    def _map(self, fn: Callable, args: tuple) -> Any:
        sequences = [a for a in args if isinstance(a, (tuple, list))]
        if not sequences:
            return fn(*args)
        kind = list if isinstance(sequences[0], list) else tuple
        if any(not isinstance(a, kind) for a in args) or len({len(a) for a in args}) != 1:
            got = [f"{_kind(a)}[{len(a)}]" if isinstance(a, (tuple, list)) else _kind(a) for a in args]
            raise InvalidParamError(f"HyperMap cannot match up the arguments: where one is a {kind.__name__}, all "
                                    f"must be {kind.__name__}s of one length; got {got}")
        return kind(self._map(fn, items) for items in zip(*args))


class Map:
    """``Map(ops=None)(*args)``: ``ops`` applied to the elements of same-length tuples (one level)."""

    def __init__(self, ops: MultitypeFuncGraph | None = None, reverse: bool = False):
        _check_ops("Map", ops)
        self.ops, self.reverse = ops, bool(reverse)

    def __call__(self, *args: Any) -> tuple:
        fn, args = (args[0], args[1:]) if self.ops is None else (self.ops, args)
        if any(not isinstance(a, (tuple, list)) for a in args) or len({len(a) for a in args}) > 1:
            raise InvalidParamError(f"Map: the inputs must be tuples or lists of one length, got "
                                    f"{[_kind(a) for a in args]}")
        return tuple(map(fn, *args))


def partial(*args: Any, **kwargs: Any) -> Callable:
    """``ops.partial(func, *args)``: ``func`` with its leading arguments bound (MindSpore's signature
    is ``(*args)``: the function is the first). Keywords bind only inside a graph, where MindSpore's
    parser handles the call (``ops.partial(add, x=2)`` in the static-graph tutorial); outside one,
    Python's TypeError as MindSpore's ``(*args)`` function raises it."""
    if kwargs and current_tracer() is None:
        raise TypeError(f"partial() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not args:
        raise InvalidParamError("partial: takes the function to bind first, got no arguments")
    func, args = args[0], args[1:]
    if not callable(func):
        raise InvalidParamError(f"partial: func must be callable, got {type(func).__name__}")
    return functools.partial(func, *args, **kwargs)


# the signature Python code sees is MindSpore's (*args); the keywords above are the graph parser's own
partial.__signature__ = inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)])


def add_flags(fn: Any = None, **flags: bool) -> Any:
    """Record compile flags on a function or Cell (``fn._func_graph_flags``, as MindSpore, which
    ``Cell.get_flags`` reads); they change nothing here."""
    def deco(target: Any) -> Any:
        if getattr(target, "_func_graph_flags", None) is None:
            target._func_graph_flags = {}
        target._func_graph_flags.update(flags)
        return target
    return deco if fn is None else deco(fn)


def _weights(weights: Any) -> list[Parameter]:
    if weights is None:
        return []
    if isinstance(weights, Parameter):
        return [weights]
    items = list(weights)
    for w in items:
        if not isinstance(w, Parameter):
            raise InvalidParamError(f"weights must be Parameters (e.g. net.trainable_params()), got "
                                    f"{type(w).__name__}")
    return items


def _positions(grad_position: Any, nargs: int) -> tuple[int, ...]:
    positions = (grad_position,) if isinstance(grad_position, int) else tuple(grad_position)
    for p in positions:
        if not isinstance(p, int) or isinstance(p, bool) or not -nargs <= p < nargs:
            raise InvalidParamError(f"grad_position={grad_position!r}: every position must be an int in "
                                    f"[{-nargs}, {nargs}) for a function called with {nargs} arguments")
    return tuple(p % nargs for p in positions)


def _tensors(obj: Any, what: str) -> list[Tensor]:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)) and obj and all(isinstance(o, Tensor) for o in obj):
        return list(obj)
    raise InvalidParamError(f"{what} must be a Tensor or a tuple of Tensors to be differentiated, got "
                            f"{type(obj).__name__}")


# What MindSpore 2.10 raises differentiating an output that holds a dict (measured, static_graph.md's
# ``return a, (x, (1, 2))`` with ``x = {'a': a, 'b': 2}``): its RuntimeError, text as is.
DICT_OUTPUT_ERROR = "The pointer[host_tensor] is null."


def _refuse_dict_output(obj: Any) -> None:
    if isinstance(obj, dict):
        raise RuntimeError(DICT_OUTPUT_ERROR)
    if isinstance(obj, (tuple, list)):
        for o in obj:
            _refuse_dict_output(o)


def _grad_call(fn: Callable, args: tuple, positions: tuple[int, ...], weights: list[Parameter],
               sens: Any, has_aux: bool) -> tuple[Any, list[Tensor], list[Tensor]]:
    """Run ``fn(*args)`` and differentiate it: (its output, input gradients, weight gradients)."""
    tracer = current_tracer()
    if tracer is None:        # PyNative: capture this call and run it (forward + backward) as a graph
        def whole(*a: Any) -> Any:
            return _grad_call(fn, a, positions, weights, sens, has_aux)
        return run_graph(whole, args, getattr(fn, "__name__", type(fn).__name__) + "_grad")
    for p in positions:
        if not isinstance(args[p], Tensor):
            raise InvalidParamError(f"argument {p} is a {type(args[p]).__name__}, not a Tensor: it cannot be "
                                    f"differentiated (change grad_position)")
    wrt = [tracer_value(tracer, args[p]) for p in positions] + [tracer_value(tracer, w) for w in weights]
    with tracer.replay():            # a function's tensor control flow compiles as construct's does
        out = convert(fn)(*args)
    main = out[0] if has_aux and isinstance(out, (tuple, list)) else out
    _refuse_dict_output(main)
    outputs = _tensors(main, "the function's output")
    senses: list[Any] = [None] * len(outputs)
    if sens is not None:
        senses = _tensors(sens, "sens") if len(outputs) > 1 else [sens if isinstance(sens, Tensor) else Tensor(sens)]
        if len(senses) != len(outputs):
            raise InvalidParamError(f"sens has {len(senses)} tensors for {len(outputs)} outputs")
    grads = differentiate_sharded(tracer, [tracer_value(tracer, t) for t in outputs], wrt,
                          [None if s is None else tracer_value(tracer, s) for s in senses])
    tensors = [Tensor._symbolic(tracer, g) for g in grads]
    return out, tensors[:len(positions)], tensors[len(positions):]


class GradOperation:
    """``ops.GradOperation(get_all, get_by_list, sens_param)``: ``GradOperation()(net)(x, y)`` is the
    gradient with respect to the first input; ``get_all`` all inputs; ``get_by_list`` the weights given as
    ``GradOperation(get_by_list=True)(net, weights)``; both ((inputs), (weights)); ``sens_param``: the
    last call argument is the gradient of the output (sens)."""

    def __init__(self, get_all: bool = False, get_by_list: bool = False, sens_param: bool = False):
        self.get_all, self.get_by_list, self.sens_param = bool(get_all), bool(get_by_list), bool(sens_param)

    def __call__(self, fn: Callable, weights: Any = None) -> Callable:
        if self.get_by_list and weights is None:
            raise InvalidParamError("GradOperation(get_by_list=True) needs the weights: grad_op(net, weights)")
        params = _weights(weights) if self.get_by_list else []

        @functools.wraps(fn)
        def grad_fn(*args: Any) -> Any:
            sens = None
            if self.sens_param:
                if not args:
                    raise InvalidParamError("GradOperation(sens_param=True): pass the sens as the last argument")
                args, sens = args[:-1], args[-1]
            positions = tuple(range(len(args))) if self.get_all else ((0,) if args else ())
            if not self.get_all and self.get_by_list:
                positions = ()
            _, inputs, weight_grads = _grad_call(fn, args, positions, params, sens, False)
            if self.get_all and self.get_by_list:
                return tuple(inputs), tuple(weight_grads)
            if self.get_by_list:
                return tuple(weight_grads)
            if self.get_all:
                return tuple(inputs)
            return inputs[0]
        return grad_fn


def recompute_block(*args: Any) -> Callable[..., Any]:
    """``ops.recompute_block(block, output_recompute=False)`` (MindSpore's ``*args``): ``block`` as a callable
    whose calls are recomputed in the backward, the form ``mindspore.recompute`` takes inside a graph
    (``common.recompute``)."""
    if len(args) not in (1, 2):
        raise ArgumentError(f"recompute_block(block, output_recompute=False) takes 1 or 2 arguments, got {len(args)}")
    block = args[0]
    check_bool(args[1] if len(args) == 2 else False)

    def call(*inputs: Any, **kwargs: Any) -> Any:
        return recompute(block, *inputs, **kwargs)

    return call
