"""The front end's side of GRAPH_MODE capture: Tensors in, graph values out.

``ascendemu.graph.capture`` owns the Tracer and the Graph it builds and knows nothing of Tensors; this
module turns Tensor arguments into graph inputs, concrete Tensors into constants and symbolic ones back
into their values, so the graph package never reaches into front-end internals.
"""
from __future__ import annotations

import gc
import types
from typing import Any, Callable

import numpy as np

from ascendemu.graph.capture import GraphCaptureError, Tracer, rebuild_outputs
from ascendemu.graph.parallel.auto_strategy import RecordingPass
from ascendemu.graph.ir import Graph, IfNode

from .backend import is_dry_run
from .common.tensor import Tensor
from .parallel._auto_parallel import search
from .parallel._sharding import sharding_pass

__all__ = ["trace", "tracer_value", "rebuild"]


def trace(fn: Callable[..., Any], args: tuple, name: str, if_convert: bool = False) -> tuple[Graph, Any]:
    """Capture ``fn(*args)``: Tensor arguments become graph inputs, other arguments stay static.

    Returns the graph and the output structure (see :func:`rebuild`). Values that ``ops.Print``
    printed are extra graph outputs after construct's own, and the structure says how to print them.

    A tensor ``if`` becomes an If node (one branch runs on the device), except where it must be
    if-converted (``Tracer.if_converts``): a DryRun computes no predicate, so it prices both branches;
    and a graph that assigns Parameters is captured again with every ``if`` if-converted, since the
    program runner that runs If nodes applies no Parameter updates. ``if_convert``: every ``if`` is
    if-converted (an exported graph, whose formats' writers know no If node).
    """
    select = if_convert or is_dry_run()
    graph, structure = _trace(fn, args, name, select)
    if not select and graph.updates and any(isinstance(n, IfNode) for n in graph.nodes):
        graph, structure = _trace(fn, args, name, True)
    return graph, structure


def _trace(fn: Callable[..., Any], args: tuple, name: str, select_branches: bool) -> tuple[Graph, Any]:
    sharding = sharding_pass()
    if isinstance(sharding, RecordingPass):      # AUTO_PARALLEL: a capture to search on, then the sharded one
        _capture(fn, args, name, select_branches, sharding)
        sharding = sharding_pass(search(sharding))
    return _capture(fn, args, name, select_branches, sharding)


def _capture(fn: Callable[..., Any], args: tuple, name: str, select_branches: bool,
             sharding: Any) -> tuple[Graph, Any]:
    tracer = Tracer(name)
    tracer.select_branches = select_branches
    if sharding is not None:
        sharding.attach(tracer)
    sym_args = [Tensor._symbolic(tracer, tracer.input(a.desc)) if isinstance(a, Tensor) else a for a in args]
    with tracer.active():
        result = _run_in_graph(fn, sym_args)
        outputs: list[int] = []
        structure = _flatten(result, tracer, outputs)
    prints = []
    for items in tracer.prints():
        entry = []
        for item in items:
            if isinstance(item, tuple):          # (host callback, value): ops.TensorDump's file write
                outputs.append(item[1])
                item = (item[0], len(outputs) - 1)
            elif not isinstance(item, str):
                outputs.append(item)
                item = len(outputs) - 1
            entry.append(item)
        prints.append(tuple(entry))
    if prints:
        structure = ("printed", (structure, prints))
    if sharding is not None:
        outputs = sharding.finish(outputs)
    tracer.graph.outputs = outputs
    tracer.graph.validate()
    return tracer.graph, structure


def rebuild(structure: Any, tensors: list[Tensor]) -> Any:
    """A graph's results put back into the shape ``construct`` returned, after printing what its
    ``ops.Print`` calls recorded (text as is, tensors as MindSpore prints them, one item a line) and
    running its host callbacks (``ops.TensorDump``'s writes) on their tensors."""
    kind, payload = structure
    if kind != "printed":
        return rebuild_outputs(structure, tensors)
    inner, prints = payload
    for entry in prints:
        lines = [item if isinstance(item, str) else repr(tensors[item]) for item in entry if not isinstance(item, tuple)]
        if lines:
            print("\n".join(lines), flush=True)
        for item in entry:
            if isinstance(item, tuple):
                item[0](tensors[item[1]])
    return rebuild_outputs(inner, tensors)


def _flatten(obj: Any, tracer: Tracer, outputs: list[int]) -> Any:
    if isinstance(obj, Tensor):
        outputs.append(tracer_value(tracer, obj))
        return ("tensor", len(outputs) - 1)
    if isinstance(obj, list) and _global_python_list(obj):
        return ("static", obj)
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__, [_flatten(o, tracer, outputs) for o in obj])
    if isinstance(obj, dict):        # e.g. TrainOneStepCell(return_grad=True): {parameter name: gradient}
        return ("dict", [(k, _flatten(v, tracer, outputs)) for k, v in obj.items()])
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return ("static", obj)
    if isinstance(obj, (np.ndarray, np.generic)):    # JIT Fallback: a NumPy object is returned as it is
        return ("static", obj)
    if isinstance(obj, types.GeneratorType):    # a generator expression is a list in a graph (MindSpore's)
        return _flatten(list(obj), tracer, outputs)
    raise GraphCaptureError(f"construct returned a {type(obj).__name__}; GRAPH_MODE outputs must be "
                            f"Tensors, tuples/lists/dicts of them, or Python scalars")


def _run_in_graph(fn: Callable[..., Any], args: list) -> Any:
    """``fn(*args)`` while capturing. A Cell's missing attribute raises MindSpore's AttributeError text:
    its parser resolves ``self.<name>`` in the cell's ``ClassMemberNamespace``, named
    ``<module>..<<Class>::<id>>`` (mindspore/graph/_parse/namespace.py)."""
    try:
        return fn(*args)
    except AttributeError as e:
        obj = getattr(e, "obj", None)
        if e.name is None or isinstance(obj, type) or not hasattr(obj, "cells_and_names"):
            raise
        raise AttributeError(f"ClassMember: 'Namespace:{type(obj).__module__}..<{type(obj).__name__}::{id(obj)}>' "
                             f"object has no attribute '{e.name}'", name=e.name, obj=obj) from None


def _global_python_list(obj: list) -> bool:
    """A list of Python values that a module global names: a graph returns that very object (MindSpore's
    graph changes such a list in place, ``global_list.reverse()``, and returns it, static_graph.md "List").
    A list the graph built is returned as a new list."""
    if any(isinstance(o, (Tensor, list, tuple, dict)) for o in obj):
        return False
    return any(isinstance(r, dict) and "__builtins__" in r and "__name__" in r for r in gc.get_referrers(obj))


def tracer_value(tracer: Tracer, t: Tensor) -> int:
    """The graph value of a Tensor during capture (concrete tensors become constants)."""
    sym = t._sym
    if sym is not None:
        return sym[1] if sym[0] is tracer else tracer.import_value(sym[0], sym[1])
    if t.is_parameter:
        return tracer.state(t, t.name, t.desc)
    return tracer.constant(t, t._data, None, False, t.desc.dtype)
