"""Composite ops: an op of ``mindspore.ops`` defined once, as a composition of registry ops.

Most of MindSpore's ops are compositions of a few dozen primitives (Softplus, Elu, GroupNorm, most
losses, most of ``mint``). Here such an op is one stanza: a body over Tensors, decorated with
:func:`composite` in the ``ops.operations`` module MindSpore defines its primitive in::

    @composite("Softplus", functions=("softplus",))
    def Softplus(input, beta=1, threshold=20):
        scaled = input * beta
        return select(scaled > threshold, input, log1p(exp(scaled)) / beta)

The body's parameters are the op's operands (no default) then its attributes (keywords with MindSpore's
defaults). From the stanza come:

- the Primitive class (named as MindSpore names it): ``__init__`` takes the recorded table's ``init``
  parameters as attributes, ``__call__`` its ``call`` parameters as operands;
- each functional form (``ops.softplus``) in the ``ops.function`` module MindSpore defines it in, with
  the table's signature (names, defaults, keyword handling, Python's TypeError text);
- shape and dtype rules and the gradient, from the parts: each part is a registry op applied through
  ``apply_op``, so PyNative runs the parts and a GRAPH_MODE capture records them; at O1/O2 the graph
  compiler fuses the elementwise parts into one kernel as it fuses any elementwise chain.

A parameter MindSpore has and the body does not (an option only one value of which is served) must keep
its default, or the call is an InvalidParamError naming it. ``rename`` maps a MindSpore parameter name
to the body's where the primitive and the function name one thing differently (``axis``/``dim``).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ascendemu.errors import InvalidParamError

from ..api_coverage import table_entry, table_signature
from ._utils import bind_arguments, check_kept_default
from .primitive import _Op

__all__ = ["composite", "composite_functions", "install_composite_functions", "function_home", "CompositeOp", "COMPOSITES"]


@dataclass(frozen=True)
class CompositeOp:
    """One composite stanza: the body and the MindSpore names it serves."""

    name: str                               # the primitive's MindSpore name
    body: Callable[..., Any]
    functions: tuple[str, ...] = ()         # the functional forms' names in mindspore.ops
    rename: Mapping[str, str] = field(default_factory=dict)

    @property
    def parameters(self) -> Mapping[str, inspect.Parameter]:
        return inspect.signature(self.body).parameters


FUNCTION_PACKAGE = "mindspore.ops.function."
# every composite stanza, in definition order; the function modules take theirs from here
COMPOSITES: list[CompositeOp] = []


def _body_kwargs(stanza: CompositeOp, label: str, signature: inspect.Signature,
                 bound: Mapping[str, Any]) -> dict[str, Any]:
    """The body's keyword arguments from a call bound to MindSpore's ``signature``: each name renamed
    into the body's; one the body lacks must keep MindSpore's default (the only behaviour served)."""
    params = stanza.parameters
    kwargs = {}
    for name, value in bound.items():
        target = stanza.rename.get(name, name)
        if target in params:
            kwargs[target] = value
            continue
        check_kept_default(label, signature.parameters[name], value)
    return kwargs


def _signature_or_body(qualified: str, part: str, fallback: inspect.Signature) -> inspect.Signature:
    recorded = table_signature(qualified, part)
    if recorded is None or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in recorded.parameters.values()):
        return fallback
    return recorded


class _Composite(_Op):
    """A composite op's primitive: attributes from ``__init__`` (the table's ``init``), operands from
    ``__call__`` (its ``call``), the body run on both."""

    stanza: CompositeOp
    init_signature: inspect.Signature
    call_signature: inspect.Signature

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        bound = bind_arguments(self.name, self.init_signature, args, kwargs)
        for key, value in bound.arguments.items():
            self.add_prim_attr(key, value)
            self.init_attrs[key] = value
        self._attrs = _body_kwargs(self.stanza, self.name, self.init_signature, bound.arguments)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = bind_arguments(self.name, self.call_signature, args, kwargs)
        operands = _body_kwargs(self.stanza, self.name, self.call_signature, bound.arguments)
        return self.stanza.body(**operands, **self._attrs)


def _split_body(body: Callable) -> tuple[inspect.Signature, inspect.Signature]:
    """(attributes, operands) of a body as signatures: its parameters with and without defaults."""
    params = list(inspect.signature(body).parameters.values())
    return (inspect.Signature([p for p in params if p.default is not p.empty]),
            inspect.Signature([p for p in params if p.default is p.empty]))


def composite(name: str, *, functions: tuple[str, ...] = (),
              rename: Mapping[str, str] | None = None) -> Callable[[Callable], type]:
    """Decorate a composite op's body: returns its Primitive class ``name`` (defined in the decorated
    function's module) and records the stanza so the ``ops.function`` modules make ``functions``."""
    if not isinstance(functions, tuple) or not all(isinstance(f, str) and f for f in functions):
        raise InvalidParamError(f"composite {name}: functions={functions!r} must be a tuple of names")

    def deco(body: Callable) -> type:
        stanza = CompositeOp(name, body, functions, dict(rename or {}))
        attrs, operands = _split_body(body)
        qualified = f"mindspore.ops.{name}"
        cls = type(name, (_Composite,), {
            "stanza": stanza, "__module__": body.__module__, "__doc__": body.__doc__,
            "init_signature": _signature_or_body(qualified, "init", attrs),
            "call_signature": _signature_or_body(qualified, "call", operands)})
        self_param = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        cls.__init__ = _with_signature(_Composite.__init__, cls.init_signature, self_param)
        cls.__call__ = _with_signature(_Composite.__call__, cls.call_signature, self_param)
        COMPOSITES.append(stanza)
        return cls
    return deco


def _with_signature(method: Callable, signature: inspect.Signature, prefix: list) -> Callable:
    """``method`` under its own function object carrying ``signature`` (what ``inspect`` reports)."""
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        return method(self, *args, **kwargs)
    wrapper.__name__ = method.__name__
    wrapper.__signature__ = signature.replace(parameters=[*prefix, *signature.parameters.values()])
    return wrapper


def _function(stanza: CompositeOp, fname: str, module: str) -> Callable:
    """``mindspore.ops.<fname>``: the stanza's body behind the table's signature."""
    signature = _signature_or_body(f"mindspore.ops.{fname}", "signatures", inspect.signature(stanza.body))

    def fn(*args: Any, **kwargs: Any) -> Any:
        bound = bind_arguments(fname, signature, args, kwargs)
        return stanza.body(**_body_kwargs(stanza, fname, signature, bound.arguments))
    fn.__name__ = fn.__qualname__ = fname
    fn.__module__ = module
    fn.__doc__ = stanza.body.__doc__
    fn.__signature__ = signature
    return fn


def composite_functions(module: str) -> dict[str, Callable]:
    """The functional forms of the composite stanzas that MindSpore defines in ``module`` (a module
    path such as ``mindspore.ops.function.nn_func``, as the table's ``defined_in`` names it); each made
    with the front end's mirror of that module as its ``__module__``."""
    home = module.replace("mindspore.", f"{__package__.rsplit('.', 1)[0]}.", 1)
    functions = {}
    for stanza in COMPOSITES:
        for fname in stanza.functions:
            if function_home(fname) == module:
                functions[fname] = _function(stanza, fname, home)
    return functions


def install_composite_functions(namespace: dict[str, Any], module: str) -> None:
    """Put the composite functions MindSpore defines in ``module`` into that module's ``namespace``; a
    name the module already defines is an error (one home per op)."""
    functions = composite_functions(module)
    clash = sorted(set(functions) & set(namespace))
    if clash:
        raise InvalidParamError(f"{module}: {clash} are defined both by hand and by a composite stanza; keep one")
    namespace.update(functions)


def function_home(fname: str) -> str:
    """The ``mindspore.ops.function`` module MindSpore serves ``fname`` from: where the table says it is
    defined, else the ``*_func`` module among its import paths (2.x defines many in ``auto_generate``
    and re-exports them there), else ``math_func``."""
    entry = table_entry(f"mindspore.ops.{fname}") or {}
    modules = [entry.get("defined_in", "")] + [p.rpartition(".")[0] for p in entry.get("paths", [])
                                               if p.endswith("." + fname)]
    for module in modules:
        if module.startswith(FUNCTION_PACKAGE) and module.endswith("_func"):
            return module
    return FUNCTION_PACKAGE + "math_func"
