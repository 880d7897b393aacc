"""What one run of a compiled graph keeps in device memory, by kind: the report a training step needs.

A training step's memory is persistent state (weights, optimizer state, literals, the step's inputs)
plus node outputs that come and go; its peak is taken at one node of the execution order. The kinds
are decided from the graph's structure alone, so a plan read back from the graph cache reports the
same as a fresh compile:

* a node is **backward** when it is (or fuses) an op autodiff emitted (full name under
  ``Gradients/``); **update** when it is not backward but reads, directly or through other nodes, a
  backward output (the optimizer and loss-scale arithmetic), or when only update nodes read it (an
  update's inputs prepared from state alone: AdamWeightDecay's float32 casts of a float16 Parameter and its
  moments); **forward** otherwise;
* node outputs alive at the peak are **activations** (forward), **gradients** (backward: the
  gradients and the backward pass's temporaries) or **update temporaries**;
* a parameter constant read by a forward node is a **weight** (so are BatchNorm's moving statistics
  and a step counter: state of the network); one read only by backward or update nodes is
  **optimizer state** (moments, learning rate, beta powers); literals are **constants**.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from .autodiff import GRADIENTS_SCOPE
from .ir import Graph
from .memory_plan import lifetimes, live_bytes

__all__ = ["AT_PEAK", "PERSISTENT", "MemoryKind", "MemoryReport", "memory_report"]


class MemoryKind(enum.Enum):
    """A kind of device memory in a step's report; the value is its label."""

    WEIGHTS = "weights"
    OPTIMIZER_STATE = "optimizer state"
    CONSTANTS = "constants"
    INPUTS = "inputs"
    ACTIVATIONS = "activations"
    GRADIENTS = "gradients"
    UPDATE = "update temporaries"


PERSISTENT = (MemoryKind.WEIGHTS, MemoryKind.OPTIMIZER_STATE, MemoryKind.CONSTANTS, MemoryKind.INPUTS)
AT_PEAK = (MemoryKind.ACTIVATIONS, MemoryKind.GRADIENTS, MemoryKind.UPDATE)


@dataclass(frozen=True)
class MemoryReport:
    """Bytes (unaligned tensor sizes) and tensor counts by kind; the peak of node outputs and the node
    (full name, position in the execution order) where it is reached."""

    bytes: dict[MemoryKind, int]
    counts: dict[MemoryKind, int]
    peak_node: str
    peak_position: int
    nodes: int
    trains: bool             # the graph has a backward pass

    def to_json(self) -> dict:
        return {"bytes": {k.name: v for k, v in self.bytes.items()},
                "counts": {k.name: v for k, v in self.counts.items()},
                "peak_node": self.peak_node, "peak_position": self.peak_position, "nodes": self.nodes,
                "trains": self.trains}

    @classmethod
    def from_json(cls, d: dict) -> "MemoryReport":
        return cls({MemoryKind[k]: v for k, v in d["bytes"].items()},
                   {MemoryKind[k]: v for k, v in d["counts"].items()},
                   d["peak_node"], d["peak_position"], d["nodes"], d["trains"])

    @property
    def persistent_bytes(self) -> int:
        return sum(self.bytes[k] for k in PERSISTENT)

    @property
    def peak_bytes(self) -> int:
        return sum(self.bytes[k] for k in AT_PEAK)


def is_backward(names: tuple[str, ...]) -> bool:
    """Whether a node of these origins (full names) is autodiff's (the ``Gradients/...`` scope)."""
    return any(n.startswith(GRADIENTS_SCOPE + "/") for n in names)


def memory_report(graph: Graph, node_order: list[int]) -> MemoryReport:
    """The report of ``graph`` (after its passes) run in ``node_order``."""
    nodes = {n.id: n for n in graph.nodes}
    writers = graph.writers()
    producer = {v: n.id for n in graph.nodes for v in n.outputs}
    kind_of_node: dict[int, MemoryKind] = {}
    for nid in node_order:                       # producers come first in any execution order
        n = nodes[nid]
        if is_backward(n.origins or (n.full_name,)):
            kind_of_node[nid] = MemoryKind.GRADIENTS
        elif any(kind_of_node.get(w) in (MemoryKind.GRADIENTS, MemoryKind.UPDATE) for v in n.inputs
                 for w in ((producer[v],) if v in producer else writers.get(graph.root(v), ()))):
            # a value written into a Parameter (an accumulator's add) is its own node's; a view of a contiguous
            # block is every writer's
            kind_of_node[nid] = MemoryKind.UPDATE
        else:
            kind_of_node[nid] = MemoryKind.ACTIVATIONS
    readers: dict[int, list[int]] = {}
    for n in graph.nodes:
        for v in n.inputs:
            readers.setdefault(graph.root(v), []).append(n.id)
    # an update's inputs prepared from state alone (AdamWeightDecay's float32 casts) are the update's
    for nid in reversed(node_order):
        kinds = {kind_of_node[r] for v in nodes[nid].outputs for r in readers.get(v, ())}
        if kind_of_node[nid] is MemoryKind.ACTIVATIONS and kinds == {MemoryKind.UPDATE}:
            kind_of_node[nid] = MemoryKind.UPDATE
    sizes: dict[MemoryKind, int] = {k: 0 for k in MemoryKind}
    counts: dict[MemoryKind, int] = {k: 0 for k in MemoryKind}

    def add(kind: MemoryKind, vid: int) -> None:
        sizes[kind] += graph.values[vid].nbytes
        counts[kind] += 1

    read_forward = {graph.root(v) for n in graph.nodes if kind_of_node[n.id] is MemoryKind.ACTIVATIONS
                    for v in n.inputs}
    for vid, c in graph.constants.items():
        add(MemoryKind.CONSTANTS if not c.is_parameter else
            MemoryKind.WEIGHTS if vid in read_forward else MemoryKind.OPTIMIZER_STATE, vid)
    for vid in graph.inputs:
        add(MemoryKind.INPUTS, vid)
    live = live_bytes(graph, node_order)
    at = live.index(max(live)) if live else 0          # the first position with the most bytes
    spans = lifetimes(graph, node_order)
    for vid, (start, end) in spans.items():
        if start <= at <= end:
            add(kind_of_node[writers[vid][0]], vid)
    return MemoryReport(sizes, counts, nodes[node_order[at]].full_name if node_order else "", at, len(node_order),
                        trains=any(k is MemoryKind.GRADIENTS for k in kind_of_node.values()))
