"""Dynamic shapes: one captured graph serving the input shapes a ``set_inputs`` signature allows.

A *shape family* is the graphs of one phase (owner, signature with unknown dims, network state) that
differ only in the sizes of the unknown dims. MindSpore compiles such a family once, with symbolic
dims, and allocates memory at run time. Here the family keeps the graph captured first (its
*template*) and serves another input shape by :func:`reinfer`: the template's nodes again, their
outputs inferred again from the new input descs (each node's own infer rule), so the graph for the new
shape is made without tracing ``construct``. That graph is compiled, planned and its memory planned
per concrete shape (the executor caches each by its structure hash); its kernels are the dynamic-shape
families' kernels the template already built, with new tiling data, so nothing is rebuilt.

The rule that keeps this correct (:class:`ShapeFamily`): ``construct`` may have baked a size into the
graph (a Reshape target from ``x.shape[0]``, a constant of that many rows, a Python branch on it),
which the new input shapes do not change. So the family is *verified* before any graph is
re-inferred: the second distinct shape is captured for real and compared with the template re-inferred
to that shape. Equal (same ops, attributes, constants, inferred descs: the structure hash) means
nothing in the graph depends on the unknown dims' values, and every later shape is re-inferred. Not
equal (or a re-inference that fails its own checks) means the family is *specialised*: each shape is
captured on its own, as without a signature. The check compares two sizes, so a construct whose
graph changes only past a threshold neither size crosses (``if x.shape[0] > 64``) is not detected.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

from ascendemu.errors import InvalidParamError
from ascendemu.kernels.signature import TensorDesc

from .ir import CONTROL_NODES, Graph, infer_node_outputs

__all__ = ["FamilyStats", "ShapeFamily", "ShapeMismatch", "family_stats", "reinfer"]

# Concrete shapes whose graphs one family keeps (least recently used dropped): a run's batch sizes.
SHAPES_PER_FAMILY = 16


class ShapeMismatch(InvalidParamError):
    """Re-inferring a graph for new input shapes met a node whose captured attributes do not fit them."""


def reinfer(template: Graph, inputs: list[TensorDesc]) -> Graph:
    """``template`` with its inputs given ``inputs`` and every node's outputs inferred again.

    Raises :class:`ShapeMismatch` when a node refuses the new shapes, a parameter update would
    change its parameter's shape, or the graph has a device loop (its carried shapes are fixed)."""
    if len(inputs) != len(template.inputs):
        raise ShapeMismatch(f"graph {template.name!r} takes {len(template.inputs)} inputs, got {len(inputs)}")
    graph = template.copy()
    for vid, desc in zip(graph.inputs, inputs):
        if desc.dtype != template.values[vid].dtype:
            raise ShapeMismatch(f"input {vid} of graph {template.name!r} is {template.values[vid].dtype}, got "
                                f"{desc.dtype}")
        graph.values[vid] = desc
    for node in graph.nodes:
        if isinstance(node, CONTROL_NODES):
            raise ShapeMismatch(f"{node.full_name}: a device loop's or conditional's graphs are captured for "
                                f"their shapes, not inferred")
        try:
            descs = infer_node_outputs(node.op, [graph.values[v] for v in node.inputs], node.attrs)
        except InvalidParamError as exc:
            raise ShapeMismatch(f"{node.full_name}: {exc.message}") from None
        for vid, desc in zip(node.outputs, descs):
            graph.values[vid] = desc
    for param, value in graph.updates.items():
        if graph.values[param] != graph.values[value]:
            raise ShapeMismatch(f"parameter {graph.constants[param].name} would be assigned "
                                f"{graph.values[value]} for these input shapes")
    graph._hash = None
    return graph


@dataclass
class FamilyStats:
    """What the shape families of a run did, for the run's summary."""

    families: int = 0
    captures: int = 0           # graphs captured by tracing construct (the template, the verifying one, ...)
    reinferred: int = 0         # graphs made by re-inference, without tracing
    specialised: int = 0        # families whose graph depends on an unknown dim's value

    def line(self) -> str | None:
        """The summary's line, or None when no call had a dynamic signature."""
        if not self.families:
            return None
        return (f"dynamic shapes: {self.families} signature(s), {self.captures} capture(s), {self.reinferred} "
                f"graph(s) re-inferred without tracing, {self.specialised} specialised per shape; memory is "
                f"planned per concrete shape, each shape's graph below with its own plan (MindSpore "
                f"allocates dynamic-shape memory at run time)")


_STATS = FamilyStats()


def family_stats() -> FamilyStats:
    """The process's shape family figures (one home; the summary reads them)."""
    return _STATS


@dataclass
class ShapeFamily:
    """The graphs of one dynamic phase, by concrete input shapes (see the module's rule).

    ``verified``: None until a second shape was compared with the template, then True (re-infer every
    shape) or False (capture every shape)."""

    template: Graph
    structure: Any
    verified: bool | None = None
    graphs: "OrderedDict[tuple, tuple]" = field(default_factory=OrderedDict)   # shapes -> (graph, structure)

    def __post_init__(self) -> None:
        _STATS.families += 1
        _STATS.captures += 1
        self._keep(_shapes(self.template), (self.template, self.structure))

    def graph_for(self, inputs: list[TensorDesc], capture: Callable[[], tuple]) -> tuple:
        """The (graph, output structure) for concrete ``inputs``: kept, re-inferred, or captured
        (``capture()``: the pair traced at these shapes)."""
        key = tuple((d.shape, d.dtype) for d in inputs)
        entry = self.graphs.get(key)
        if entry is not None:
            self.graphs.move_to_end(key)
            return entry
        if self.verified:
            try:
                entry = (reinfer(self.template, inputs), self.structure)
                _STATS.reinferred += 1
            except ShapeMismatch:           # verified on two sizes, refused on this one: capture it
                entry = self._capture(capture)
        else:
            entry = self._capture(capture)
            if self.verified is None:
                self.verified = _same(self.template, inputs, entry[0])
                _STATS.specialised += not self.verified
        self._keep(key, entry)
        return entry

    def _capture(self, capture: Callable[[], tuple]) -> tuple:
        _STATS.captures += 1
        return capture()

    def _keep(self, key: tuple, entry: tuple) -> None:
        self.graphs[key] = entry
        while len(self.graphs) > SHAPES_PER_FAMILY:
            self.graphs.popitem(last=False)


def _shapes(graph: Graph) -> tuple:
    return tuple((graph.values[v].shape, graph.values[v].dtype) for v in graph.inputs)


def _same(template: Graph, inputs: list[TensorDesc], captured: Graph) -> bool:
    """Whether ``captured`` is exactly ``template`` re-inferred to ``inputs``."""
    try:
        return reinfer(template, inputs).structure_hash() == captured.structure_hash()
    except ShapeMismatch:
        return False
