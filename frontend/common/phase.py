"""The phase cache: a GRAPH_MODE call that matches an earlier one reuses its captured graph.

MindSpore compiles a cell once per *phase* (its input signature and the graph-shaping state of the
network) and runs the compiled graph on later calls without parsing ``construct`` again. Here a
GRAPH_MODE call of a Cell (or an ``@jit`` function) looks up the graph it captured before under a key:

- the owner (the Cell, or the function) and the jit level;
- the input signature: each Tensor argument's shape and dtype, each other argument's value (a call
  with an argument that is neither a Tensor nor a plain Python value is not cached);
- the network's *state fingerprint*: for the owner and every sub-cell, every attribute that is not a
  sub-cell (numbers, strings, flags such as ``training``, tuples/lists/dicts of them, the identity and
  data identity of Tensors, the identity, shape, dtype and ``requires_grad`` of Parameters, the
  identity and simple attributes of other objects such as primitives); for a function, its closure's
  values and defaults in the same way; and the global seed.

So a hit is exactly a call whose capture would record the same graph, unless ``construct`` reads
state the fingerprint does not cover: module globals, objects reached through other objects' mutable
attributes more than one level down, or NumPy random numbers drawn in ``construct`` (MindSpore also
freezes these when it compiles). A parameter added or replaced, a sub-cell swapped, ``set_train``,
a changed Python attribute, a Tensor attribute given new data or a new global seed: each changes the
key and the next call captures again. Parameters' *values* are not part of the key: the graph reads
them when it runs. ``PHASES_PER_OWNER`` bounds what one owner keeps.

A cell with an input signature (``Cell.set_inputs``) keys its calls by the signature, not by their
shapes: one phase serves every matching shape (``ascendemu.graph.dynamic.ShapeFamily``).
"""
from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from ascendemu.graph.dynamic import ShapeFamily

from .dynamic_inputs import signature_args
from .parameter import Parameter
from .seed import get_seed
from .tensor import Tensor

__all__ = ["PhaseCache", "PHASE_CACHE", "PHASES_PER_OWNER", "jit_phase_key"]

# Compiled phases kept per cell or function (least recently used dropped): a network called with a few
# input shapes (train and eval batch, a last partial batch) keeps all of them.
PHASES_PER_OWNER = 8
# A Cell method decorated with @jit: MindSpore keys its compiled graph by the method, the object and the
# inputs, so a number or string attribute the Cell is given afterwards is not perceived (static_graph.md:
# "the modification of the attributes of the class outside the graph will not take effect"; real
# MindSpore 2.10 prints out2: 3). Such attributes are left out of an @jit phase's key (the first call's
# values stay); bools (flags such as ``training``), Tensors, Parameters and sub-cells still recapture.
# A GRAPH_MODE call of a Cell without @jit keeps them in its key and recaptures (MindSpore 2.10 does not:
# a deliberate difference, the safer one for training scripts that change a Python hyper-parameter).
JIT_FROZEN = (int, float, complex, str)
# the extra key entry api.jit adds to its calls' phases
JIT_KEY = "__jit__"
# Containers longer than this are fingerprinted by identity and length, not element by element.
MAX_ELEMENTS = 64
_SIMPLE = (bool, int, float, complex, str, bytes, type(None))
_UNCACHEABLE = object()


def jit_phase_key(construct: Any) -> tuple:
    """The extra phase key entry of a GRAPH_MODE call whose ``construct`` is decorated with ``@jit``
    (its Python attributes frozen as under ``@jit`` in PyNative: :data:`JIT_FROZEN`); () otherwise."""
    fn = getattr(construct, "__func__", construct)
    return ((JIT_KEY, id(fn)),) if getattr(fn, "__ascendemu_jit__", False) else ()


def _value_key(value: Any, depth: int = 0) -> Any:
    """What of ``value`` a capture may depend on, as a hashable key."""
    if isinstance(value, _SIMPLE):
        return (type(value), value)
    if isinstance(value, Parameter):
        return ("P", id(value), value.desc, value.requires_grad)
    if isinstance(value, Tensor):                   # shape, not desc: a set_inputs placeholder has -1 dims
        return ("T", id(value), id(value._data), tuple(value.shape), value.dtype)
    if isinstance(value, np.ndarray):
        return ("A", id(value), value.shape, value.dtype.str)
    if hasattr(value, "cells_and_names"):                   # a sub-cell: fingerprinted as a cell
        return ("C", id(value))
    if isinstance(value, (tuple, list, dict)) and len(value) <= MAX_ELEMENTS and depth < 2:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        return (type(value), tuple((k, _value_key(v, depth + 1)) for k, v in items))
    if isinstance(value, (tuple, list, dict, set, frozenset)):
        return (type(value), id(value), len(value))
    if callable(value) and not hasattr(value, "__dict__"):
        return ("F", id(value))
    attrs = getattr(value, "__dict__", None)
    if depth == 0 and isinstance(attrs, dict):           # a primitive, a manager: its own plain attributes
        return (type(value), id(value), tuple((k, v) for k, v in attrs.items() if isinstance(v, _SIMPLE)))
    return (type(value), id(value))


def _cell_fingerprint(cell: Any, frozen: bool = False) -> tuple:
    """The cells' state as a key; ``frozen``: without their number and string attributes
    (:data:`JIT_FROZEN`)."""
    out = []
    for _, c in cell.cells_and_names():
        out.append((id(c), type(c), tuple((k, _value_key(v)) for k, v in c.__dict__.items()
                                          if k not in ("_cells", "_params")
                                          and not (frozen and _frozen_under_jit(v)))))
    return tuple(out)


def _frozen_under_jit(value: Any) -> bool:
    return isinstance(value, JIT_FROZEN) and not isinstance(value, bool)


def _function_fingerprint(fn: Any) -> tuple:
    closure = getattr(fn, "__closure__", None) or ()
    cells = tuple(_value_key(c.cell_contents) if c.cell_contents is not None else None for c in closure
                  if _has_contents(c))
    return (getattr(fn, "__code__", None), cells, _value_key(getattr(fn, "__defaults__", None)))


def _has_contents(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:                              # a closure variable not yet bound
        return False
    return True


def _arg_key(value: Any) -> Any:
    if isinstance(value, Tensor):                   # a graph input: its data is read at each call
        return ("T", tuple(value.shape), value.dtype)
    if isinstance(value, _SIMPLE):
        return (type(value), value)
    if isinstance(value, (tuple, list)) and len(value) <= MAX_ELEMENTS:
        keys = tuple(_arg_key(v) for v in value)
        return _UNCACHEABLE if any(k is _UNCACHEABLE for k in keys) else (type(value), keys)
    return _UNCACHEABLE


class PhaseCache:
    """Captured graphs by owner (weakly: a cell or function that dies takes its phases with it)."""

    def __init__(self) -> None:
        self._phases: "weakref.WeakKeyDictionary[Any, OrderedDict]" = weakref.WeakKeyDictionary()
        self.enabled = True             # False: every call captures anew (the before/after bench)
        self.hits = 0
        self.misses = 0

    def key(self, owner: Any, args: tuple, extra: tuple, jit_level: str) -> tuple | None:
        """The phase of a call, or None when it cannot be cached (an argument of another kind)."""
        keys = tuple(_arg_key(a) for a in args) + tuple(_arg_key(v) for _, v in extra)
        if any(k is _UNCACHEABLE for k in keys):
            return None
        keys += tuple(k for k, _ in extra)
        frozen = any(k == JIT_KEY for k, _ in extra)
        state = _cell_fingerprint(owner, frozen) if hasattr(owner, "cells_and_names") \
            else _function_fingerprint(owner)
        return (jit_level, keys, state, get_seed())

    def get(self, owner: Any, key: tuple) -> Any | None:
        phases = self._phases.get(owner)
        entry = phases.get(key) if phases is not None else None
        if entry is None:
            self.misses += 1
            return None
        phases.move_to_end(key)
        self.hits += 1
        return entry

    def put(self, owner: Any, key: tuple, entry: Any) -> None:
        try:
            phases = self._phases.setdefault(owner, OrderedDict())
        except TypeError:                               # not weakly referable (a builtin): not cached
            return
        phases[key] = entry
        while len(phases) > PHASES_PER_OWNER:
            phases.popitem(last=False)

    def clear(self) -> None:
        self._phases.clear()


PHASE_CACHE = PhaseCache()


def cached_capture(owner: Any | None, args: tuple, extra: tuple, jit_level: str,
                   capture: Callable[[], tuple], signature: tuple | None = None) -> tuple:
    """``capture()`` (a (graph, structure) pair), or the pair an earlier matching call captured.

    With a ``signature`` (``Cell.set_inputs``; the call was checked against it), every call matching
    it shares one phase: a ``graph.dynamic.ShapeFamily``, which serves each concrete shape."""
    keyed = args if signature is None else signature_args(signature, args)
    key = PHASE_CACHE.key(owner, keyed, extra, jit_level) if owner is not None and PHASE_CACHE.enabled else None
    entry = PHASE_CACHE.get(owner, key) if key is not None else None
    if signature is not None and key is not None:
        if entry is None:
            family = ShapeFamily(*capture())
            PHASE_CACHE.put(owner, key, family)
            return family.template, family.structure
        return entry.graph_for([a.desc for a in args if isinstance(a, Tensor)], capture)
    if entry is not None:
        return entry
    entry = capture()
    if key is not None:
        PHASE_CACHE.put(owner, key, entry)
    return entry
