"""A graph with device loops as a *program*: straight-line segments and loops, each part an ordinary graph.

A captured graph holding :class:`~.ir.WhileNode` s is split at its loops, in node order, into parts:

- a :class:`Segment` is the run of ordinary nodes between two loops, as a graph of its own whose inputs
  are the outer values it reads (graph inputs, earlier parts' results) and whose outputs are the values
  it defines that a later part or the graph's outputs read (a segment nobody reads is dropped);
- a :class:`Loop` is one While node: its cond and body graphs run as parts of their own, again and
  again, by the program runner (``graph.program_runner``), a body holding loops recursively;
- a :class:`Branch` is one If node (a tensor ``if``): both its branch graphs are parts, one runs per
  step, picked on the device (``graph.if_node``).

So every pass, both caches, the memory plans and O0/O1/O2 apply to each part unchanged: the passes never
see a While node (the split treats it as opaque and keeps it, whatever it reads), and a part's graph
cache entry is an ordinary compiled graph. The trip count is nowhere in a part: the device decides it
at run time, so one compiled program serves every trip count.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from ascendemu.kernels.signature import jsonable

from .ir import CONTROL_NODES, Graph, IfNode, OpNode, WhileNode

__all__ = ["Branch", "Loop", "Program", "Segment", "merge_repeated", "split"]


@dataclass
class Segment:
    """Ordinary nodes between loops: ``graph`` reads outer values ``inputs`` and defines ``outputs``."""

    graph: Graph
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass
class Loop:
    """One device loop of the outer graph (or a loop's backward, a ``graph.while_grad.WhileGradNode``)."""

    node: WhileNode


@dataclass
class Branch:
    """One tensor ``if`` of the outer graph (:class:`~.ir.IfNode`): its branches run as parts of their own,
    one of them per run, picked on the device (``graph.if_node``)."""

    node: IfNode


@dataclass
class Program:
    """The parts of ``graph`` in run order (values named by ``graph``'s ids)."""

    graph: Graph
    parts: list[Segment | Loop | Branch]


def merge_repeated(graph: Graph) -> Graph:
    """``graph`` with each loop (and each node) that repeats an earlier one on the same values merged into
    it, the later one's outputs renamed to the earlier one's, as CSE does within a part: a training step
    captures its forward twice (``loss = net(x)``, then the gradient's replayed forward), so a ``while``
    on a tensor would run twice and its backward would pop the second one's stack; merged, the loop runs
    once and the backward (``WhileGradNode.forward``) pops the first one's. Loops are compared by their
    graphs' :meth:`~.ir.Graph.anonymous_hash` (the two captures name their nodes differently); a loop's
    backward is never merged. Ops are pure (state changes are ``graph.updates``), so this is safe. Returns
    ``graph`` itself when no loop repeats (then the per-part CSE does the rest)."""
    seen: dict[str, OpNode] = {}
    rename: dict[int, int] = {}
    loops: dict[int, int] = {}           # merged loop node id -> the one kept
    kept: list[OpNode] = []
    for n in graph.nodes:
        inputs = tuple(rename.get(v, v) for v in n.inputs)
        key = None if hasattr(n, "forward") else _merge_key(n, inputs)
        first = seen.get(key) if key is not None else None
        if first is not None:
            rename.update(zip(n.outputs, first.outputs))
            if isinstance(n, WhileNode):
                loops[n.id] = first.id
            continue
        if key is not None:
            seen[key] = n
        changes = {"inputs": inputs} if inputs != n.inputs else {}
        if hasattr(n, "forward") and n.forward in loops:
            changes["forward"] = loops[n.forward]
        kept.append(dataclasses.replace(n, **changes) if changes else n)
    if not loops:
        return graph
    g = graph.copy()
    g.nodes = kept
    for old in rename:
        del g.values[old]
    g.outputs = [rename.get(v, v) for v in g.outputs]
    g.updates = {p: rename.get(v, v) for p, v in g.updates.items()}
    g.validate()
    return g


def _merge_key(n: OpNode, inputs: tuple[int, ...]) -> str:
    """What makes two nodes the same computation: op, attributes, inputs and, for a loop or a branch,
    its graphs (names aside)."""
    graphs = [n.cond, n.body, n.carried, n.cond_free] if isinstance(n, WhileNode) else \
        [n.then, n.other, n.then_free] if isinstance(n, IfNode) else []
    return json.dumps([n.op, jsonable(n.attrs), inputs,
                       [x.anonymous_hash() if isinstance(x, Graph) else x for x in graphs]], sort_keys=True)


def split(graph: Graph) -> Program:
    """Split ``graph`` at its While nodes (see the module docstring)."""
    groups: list[list[OpNode] | WhileNode | IfNode] = []
    for n in graph.nodes:
        if isinstance(n, CONTROL_NODES):
            groups.append(n)
        elif groups and isinstance(groups[-1], list):
            groups[-1].append(n)
        else:
            groups.append([n])
    # values each group's successors (and the graph's outputs) read
    read_later: list[set[int]] = [set() for _ in groups]
    # Parameter updates are outside every loop (a loop's graphs cannot assign): the runner copies their
    # values into the parameters after the last part, so they are read last
    reads = set(graph.outputs) | set(graph.updates.values())
    for k in range(len(groups) - 1, -1, -1):
        read_later[k] = set(reads)
        group = groups[k]
        for n in ([group] if isinstance(group, CONTROL_NODES) else group):
            reads.update(n.inputs)
    parts: list[Segment | Loop | Branch] = []
    for k, group in enumerate(groups):
        if isinstance(group, CONTROL_NODES):
            parts.append(Loop(group) if isinstance(group, WhileNode) else Branch(group))
            continue
        segment = _segment(graph, group, read_later[k], f"{graph.name}/segment{len(parts)}")
        if segment.outputs:
            parts.append(segment)
    return Program(graph, parts)


def _segment(graph: Graph, nodes: list[OpNode], needed: set[int], name: str) -> Segment:
    """``nodes`` as a graph of their own: outer values they read become inputs (constants stay
    constants, sharing their data), the values ``needed`` later become outputs."""
    g = Graph(name)
    local: dict[int, int] = {}
    inputs: list[int] = []
    for n in nodes:
        for v in n.inputs:
            if v in local:
                continue
            const = graph.constants.get(v)
            if const is not None:
                local[v] = g.new_value(graph.values[v])
                g.constants[local[v]] = const
            else:
                local[v] = g.add_input(graph.values[v])
                inputs.append(v)
        outs = []
        for v in n.outputs:
            local[v] = g.new_value(graph.values[v])
            outs.append(local[v])
        g.nodes.append(OpNode(g.new_node_id(), n.op, dict(n.attrs), tuple(local[v] for v in n.inputs), tuple(outs),
                              n.full_name, n.origins))
    outputs = tuple(v for n in nodes for v in n.outputs if v in needed)
    g.outputs = [local[v] for v in outputs]
    g.validate()
    return Segment(g, tuple(inputs), outputs)
