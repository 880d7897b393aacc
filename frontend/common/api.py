"""Running Python code as a graph: capture, hand to the backend, rebuild the outputs; and ``jit``.

``capture`` is also the way to get a Graph without running it (tests, dry runs, the compiler CLI).
A Cell or ``jit`` call whose input signature and network state match an earlier call's reuses that
capture (the phase cache, :mod:`.phase`); the executor caches compiled graphs by
``Graph.structure_hash()``.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError
from ascendemu.graph.capture import current_tracer
from ascendemu.graph.ir import Graph
from ascendemu.graph.plan import JIT_LEVELS

from ..backend import get_backend
from ..context import get_context
from .fallback import HostValueNeeded
from .dtype import dtype_to_pytype
from .dynamic_inputs import any_shape, check_inputs
from .jit_config import jit_level_of
from .parse import convert, refuse_unsupported
from .phase import JIT_KEY, cached_capture


def _is_cell(obj: Any) -> bool:
    """A Cell (nn.cell sits above this module, so it is recognised by its ``_run_construct``, what
    capture calls) and not its class: a Cell *class* has the attribute too."""
    return not isinstance(obj, type) and callable(getattr(obj, "_run_construct", None))


def capture(obj: Any, *args: Any, if_convert: bool = False) -> tuple[Graph, Any]:
    """Capture a Cell's ``construct`` (or a function) on ``args`` into (Graph, output structure);
    ``if_convert``: tensor ``if``s as Select of both branches, not If nodes (``frontend.capture.trace``)."""
    from ..capture import trace

    if _is_cell(obj):
        return trace(obj._run_construct, args, type(obj).__name__, if_convert)
    return trace(obj, args, getattr(obj, "__name__", "graph"), if_convert)


def run_graph(fn: Callable, args: tuple, name: str, jit_level: str | None = None, owner: Any = None,
              static: tuple = (), signature: tuple | None = None) -> Any:
    """Capture ``fn(*args)`` and run it through the backend at ``jit_level`` (default: the context's).
    With an ``owner`` (the Cell or function called; ``static``: its keyword arguments as (name, value)
    pairs), a call matching an earlier one reuses that capture (:mod:`.phase`); with an input
    ``signature`` (``Cell.set_inputs``), one that matches it (:mod:`.dynamic_inputs`)."""
    from ..capture import trace

    level = jit_level or get_context("jit_level")
    if signature is not None:
        check_inputs(signature, args)
    held = _held_before(owner, args) if signature is None else frozenset()
    while True:
        call, free, key = _hold(fn, args, held)
        try:
            graph, structure = cached_capture(owner, free, static + key, level, lambda: trace(call, free, name),
                                              signature)
            break
        except Exception as e:              # a capture error that names a graph input (tensor.tag_input)
            position = _holdable(e, args, held, signature)
            if position is None:
                raise
            held = held | {position}
            _remember_held(owner, held)
    arrays = get_backend().run_graph(graph, _arrays(free), level)
    return _rebuild(graph, structure, arrays, name)


# A Tensor argument whose value the capture reads on the host (a shape, a size or an axis given as a
# Tensor: ``Expand()(x, Tensor([2, 3]))``, ``CumulativeLogsumexp()(x, Tensor(0))``; the mask of
# masked_select, the input of nonzero) is held as a constant of the graph, its value part of the phase
# key: MindSpore compiles such a graph with a dynamic output shape, here each value gets its own static
# graph. Only small integer or bool tensors are held; any other data read stays the capture error (or,
# under @jit, JIT Fallback). Per owner: the positions it held, so later calls hold them at once.
HOLD_MAX_ELEMENTS = 64
_HELD: "weakref.WeakKeyDictionary[Any, frozenset[int]]" = weakref.WeakKeyDictionary()


def _may_hold(arg: Any) -> bool:
    from .tensor import Tensor

    return (isinstance(arg, Tensor) and dtype_to_pytype(arg.dtype) in (int, bool)
            and arg.size <= HOLD_MAX_ELEMENTS)


def _held_before(owner: Any, args: tuple) -> frozenset[int]:
    """The positions ``owner``'s earlier calls held that these ``args`` may hold too."""
    try:
        known = _HELD.get(owner, frozenset()) if owner is not None else frozenset()
    except TypeError:                               # not weakly referable: nothing remembered
        return frozenset()
    return frozenset(i for i in known if i < len(args) and _may_hold(args[i]))


def _remember_held(owner: Any, held: frozenset[int]) -> None:
    try:
        if owner is not None:
            _HELD[owner] = held
    except TypeError:
        pass


def _hold(fn: Callable, args: tuple, held: frozenset[int]) -> tuple[Callable, tuple, tuple]:
    """(``fn`` with the arguments at ``held`` bound to their values, the other arguments, the phase key
    entries of the held values)."""
    if not held:
        return fn, args, ()
    free = tuple(a for i, a in enumerate(args) if i not in held)

    def call(*rest: Any) -> Any:
        it = iter(rest)
        return fn(*(args[i] if i in held else next(it) for i in range(len(args))))

    key = tuple((f"held {i}", (str(args[i].dtype), tuple(args[i].shape), args[i].asnumpy().tobytes()))
                for i in sorted(held))
    return call, free, key


def _holdable(error: Exception, args: tuple, held: frozenset[int], signature: tuple | None) -> int | None:
    """The position in ``args`` of the graph input whose data ``error`` says the capture read
    (``tensor.tag_input``), if it may be held (no input signature); else None."""
    from .tensor import Tensor

    index = getattr(error, "graph_input", None)
    if index is None or signature is not None:
        return None
    tensors = [i for i, a in enumerate(args) if i not in held and isinstance(a, Tensor)]
    position = tensors[index] if index < len(tensors) else None
    return position if position is not None and _may_hold(args[position]) else None


def run_sunk(cell: Any, batches: Sequence[Sequence[Any]], jit_level: str | None = None) -> Any:
    """Dataset sink mode: run ``cell`` once per batch (equal shapes and dtypes; each the cell's
    positional arguments) as one sunk loop on the device and return the last step's outputs, as
    MindSpore's ``Model.train(dataset_sink_mode=True)`` hands its callbacks the last step's.
    ``construct`` is captured once, on the first batch."""
    from ..capture import trace

    graph, structure = trace(cell._run_construct, tuple(batches[0]), type(cell).__name__)
    arrays = get_backend().run_graph_sunk(graph, [_arrays(b) for b in batches], jit_level or get_context("jit_level"))
    return _rebuild(graph, structure, arrays, type(cell).__name__)


def _arrays(args: Sequence[Any]) -> list[np.ndarray]:
    """The graph inputs of a call: its Tensor arguments' values."""
    from .tensor import Tensor

    return [a.asnumpy() for a in args if isinstance(a, Tensor)]


def _rebuild(graph: Graph, structure: Any, arrays: list[np.ndarray], name: str) -> Any:
    """The backend's output arrays as the Tensors (in tuples/lists/dicts) ``construct`` returned, after
    what its ``ops.Print`` calls recorded is printed."""
    from ..capture import rebuild
    from .tensor import Tensor

    if len(arrays) != len(graph.outputs):
        raise InvalidParamError(f"backend returned {len(arrays)} outputs for graph {name}, "
                                f"expected {len(graph.outputs)}")
    descs = [graph.values[v] for v in graph.outputs]
    tensors = [Tensor(np.asarray(a).reshape(d.shape), dtype=d.dtype) for a, d in zip(arrays, descs)]
    return rebuild(structure, tensors)


def jit(function: Callable | None = None, *, jit_level: str | None = None, jit_config: Any = None,
        dynamic: int = 0, **options: Any) -> Any:
    """Run the decorated function (or Cell method) as a captured graph, even in PyNative mode.

    Inside another capture it is simply inlined. ``jit_level`` (MindSpore 2.5+), or the level of
    ``jit_config`` (a JitConfig, MindSpore 2.0-2.4), picks the compile level; by default the
    context's. ``dynamic=1``: every Tensor argument's dims are open (``dynamic_inputs.any_shape``), so
    calls differing only in sizes share one phase (``graph.dynamic``). Other MindSpore options are
    accepted and ignored (``input_signature`` too: MindSpore 2.10 drops it with a warning).
    """
    if jit_config is not None and jit_level is None:
        jit_level = jit_level_of(jit_config, "jit")
    if jit_level is not None and jit_level not in JIT_LEVELS:
        raise InvalidParamError(f"jit: jit_level must be one of {JIT_LEVELS}, got {jit_level!r}")

    bytecode = _bytecode_capture(options)

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if bytecode and current_tracer() is None:
                return fn(*args, **kwargs)
            refuse_unsupported(fn)          # MindSpore's parser refuses `try` in a jit function in any mode
            if current_tracer() is not None:
                return convert(fn)(*args, **kwargs)
            try:
                return _run_jit(fn, args, kwargs)
            except HostValueNeeded:         # JIT Fallback at run time (common/fallback.py)
                return fn(*args, **kwargs)

        def _run_jit(fn: Callable, args: tuple, kwargs: dict) -> Any:
            call = functools.partial(convert(fn), **kwargs) if kwargs else convert(fn)
            static = tuple(sorted(kwargs.items()))
            if args and _is_cell(args[0]):
                return run_graph(functools.partial(call, args[0]), args[1:], type(args[0]).__name__, jit_level,
                                 owner=args[0], static=((JIT_KEY, id(fn)),) + static,
                                 signature=any_shape(args[1:]) if dynamic else None)
            return run_graph(call, args, getattr(fn, "__name__", "graph"), jit_level, owner=fn, static=static,
                             signature=any_shape(args) if dynamic else None)

        wrapper.__ascendemu_jit__ = True
        return wrapper

    return decorate(function) if function is not None else decorate


# jit(capture_mode=...): MindSpore 2.10's ways of building the graph. "ast" parses the source (this
# front end's capture); "bytecode" (PIJit) builds graphs from the bytecode and runs whatever it cannot
# compile as Python (a graph break); "trace" records the ops of one run.
CAPTURE_MODES = ("ast", "bytecode", "trace")


def _bytecode_capture(options: dict[str, Any]) -> bool:
    """Whether ``jit(capture_mode="bytecode")`` was asked for. Modelled as PIJit's graph-break limit: the
    function runs as Python, its ops dispatched one by one as in PyNative, so what PIJit runs as Python
    (``range`` of a tensor, a tensor stored on ``self``) gives MindSpore's values; no graph is built."""
    mode = options.get("capture_mode", "ast")
    if mode not in CAPTURE_MODES:
        raise ValueError(f"For 'jit', the 'capture_mode' must be str and must be in '{list(CAPTURE_MODES)}', "
                         f"but got {mode!r}.")
    return mode == "bytecode"


def jit_class(cls: type) -> type:
    """``@mindspore.jit_class``: marks a user class whose objects a graph may use. Tracing runs such
    objects' methods as Python already, so the class is only checked (MindSpore's errors) and marked."""
    import inspect

    if not inspect.isclass(cls):
        raise TypeError(f"Decorator jit_class can only be used for class type, but got {cls}.")
    if callable(getattr(cls, "_run_construct", None)):       # an nn.Cell subclass (see _is_cell)
        raise TypeError(f"Decorator jit_class is used for user-defined classes and cannot be used for nn.Cell: "
                        f"{cls}.")
    cls.__ms_class__ = True
    return cls
