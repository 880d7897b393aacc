"""Recompute: the backward reads copies of forward nodes computed late instead of the kept activations.

MindSpore's recompute (``Cell.recompute()``, ``Primitive.recompute()``, ``mindspore.recompute``) marks forward
nodes (``Graph.recompute``, by captured full name; a cell's outputs are never marked). A marked node's output
that only the backward reads is not kept from the forward to the backward: :func:`recompute_activations`
duplicates the node (and the marked nodes it reads the same way) just before the backward node that reads
it, named ``recompute_<forward name>`` as MindSpore's copies are, and makes the copies wait (``Graph.control``)
for the backward values their readers take besides them, so they run when the backward reaches the cell, not
when the forward ends. The forward's own value dies after its forward readers (MindSpore: "a primitive set
recomputed [that] feeds into some backward nodes" is recomputed there); one the host reads is kept. A cell's
outputs are kept because they are not marked. The copies compute what the originals computed from the same
values with the same kernels, so the gradients are bit for bit the same.
"""
from __future__ import annotations

import heapq
from collections import deque

from .ir import Graph, OpNode
from .memory_report import is_backward
from .parallel.optimizer_shard import SHARD_GATHER_SCOPE

__all__ = ["RECOMPUTE_PREFIX", "recompute_activations"]

# MindSpore names a recomputed copy after its forward node in the scope ``recompute_<scope>``
RECOMPUTE_PREFIX = "recompute_"


def _never_copied(node: OpNode) -> bool:
    """A pipeline's Send/Receive (a second Receive would have no Send: the received value is kept, as the
    stage's input) and optimizer parallel's AllGather of a weight (MindSpore's parallel_optimizer_comm_recompute
    is False by default, and True only warns: the gathered weight is kept, not gathered again)."""
    return node.op in ("Send", "Receive") or SHARD_GATHER_SCOPE in node.full_name.split("/")


class _Cloner:
    """Copies of marked nodes, made once per forward value, appended to ``out`` before their first reader."""

    def __init__(self, g: Graph):
        self.g = g
        backward = {n.id for n in g.nodes if is_backward(n.origins or (n.full_name,))}
        self.backward = backward
        self.producer = {v: n for n in g.nodes for v in n.outputs}
        marked = {n.id for n in g.nodes if type(n) is OpNode and n.id not in backward and not _never_copied(n)
                  and all(o in g.recompute for o in (n.origins or (n.full_name,)))}
        kept = {g.root(v) for v in g.outputs} | {g.root(v) for v in g.updates.values()}
        # roots a copy replaces in the backward: made by a marked node, not read by the host
        self.recomputed = {v for n in g.nodes if n.id in marked for v in n.outputs if v not in kept}
        self.copy_of: dict[int, int] = {}        # forward value -> the copy's value (same shape; views too)
        self.copies: dict[int, OpNode] = {}      # forward node id -> its copy (in the current phase)
        self.copy_ids: set[int] = set()          # every copy made, over all phases
        self.out: list[OpNode] = []

    def new_phase(self) -> None:
        """Later readers get their own copies: a pipeline's micro-batches share forward nodes after CSE (a
        weight's Cast), and one copy read by two micro-batches' backwards would tie their phases in a cycle."""
        self.copy_of.clear()
        self.copies.clear()

    def value(self, v: int) -> int:
        """``v`` as the backward reads it: the copy of its root's producer if that root is recomputed."""
        g = self.g
        root = g.root(v)
        if root not in self.recomputed:
            return v
        if v not in self.copy_of:
            copy = self._copy(self.producer[root])
            new_root = copy.outputs[self.producer[root].outputs.index(root)]
            if v == root:
                self.copy_of[v] = new_root
            else:                                 # a view (Reshape...) of the root: the same view of the copy
                view = g.new_value(g.values[v])
                g.aliases[view] = new_root
                self.copy_of[v] = view
        return self.copy_of[v]

    def _copy(self, node: OpNode) -> OpNode:
        copy = self.copies.get(node.id)
        if copy is None:
            g = self.g
            inputs = tuple(self.value(v) for v in node.inputs)
            outputs = tuple(g.new_value(g.values[v]) for v in node.outputs)
            copy = OpNode(g.new_node_id(), node.op, dict(node.attrs), inputs, outputs,
                          RECOMPUTE_PREFIX + node.full_name, tuple(RECOMPUTE_PREFIX + o for o in node.origins))
            self.copies[node.id] = copy
            self.copy_ids.add(copy.id)
            self.out.append(copy)
        return copy


def recompute_activations(graph: Graph) -> Graph:
    """``graph`` (after CSE and fusion) with the backward's reads of recomputed activations moved to late
    copies of their forward nodes; unchanged when nothing is marked or nothing marked reaches the backward."""
    if not graph.recompute:
        return graph
    g = graph.copy()
    cloner = _Cloner(g)
    if not cloner.recomputed:
        return graph
    phase = None
    for n in g.nodes:
        if n.id in cloner.backward:
            if g.phases.get(n.id, phase) != phase:        # a pipeline's next micro-batch (order_phases)
                phase = g.phases[n.id]
                cloner.new_phase()
            n.inputs = tuple(cloner.value(v) for v in n.inputs)
        cloner.out.append(n)
    g.nodes = cloner.out
    edges = _late_edges(g, cloner.copy_ids, cloner.backward)
    ordered = _topological(g, edges)
    if ordered is not None:           # else (a cycle through two groups' waits) the copies run unordered
        for nid, before in edges.items():
            g.control[nid] = tuple(dict.fromkeys(g.control.get(nid, ()) + tuple(before)))
        g.nodes = ordered
    return g


def _late_edges(g: Graph, copies: set[int], backward: set[int]) -> dict[int, list[int]]:
    """copy id -> the nodes it waits for: each group of connected copies waits for the backward values its
    readers take besides the copies (MindSpore's Depend on the recompute's inputs), the nearest backward
    producers not downstream of the group (else those of its readers' readers)."""
    producer = {v: n for n in g.nodes for v in n.outputs}
    readers: dict[int, list[OpNode]] = {}
    for n in g.nodes:
        for v in dict.fromkeys(g.root(u) for u in n.inputs):
            readers.setdefault(v, []).append(n)
    parent: dict[int, int] = {}                # union-find over copies joined by copy -> copy edges

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    copy_inputs: dict[int, list[int]] = {}
    for n in g.nodes:
        if n.id in copies:
            parent[n.id] = n.id
            copy_inputs[n.id] = [p.id for v in n.inputs if (p := producer.get(g.root(v))) is not None
                                 and p.id in copies]
            for p in copy_inputs[n.id]:
                parent[find(p)] = find(n.id)
    members: dict[int, list[OpNode]] = {}
    for n in g.nodes:
        if n.id in copies:
            members.setdefault(find(n.id), []).append(n)
    bit = {gid: 1 << i for i, gid in enumerate(members)}
    downstream: dict[int, int] = {}            # node id -> bitset of the groups it depends on
    for n in g.nodes:
        mask = bit[find(n.id)] if n.id in copies else 0
        for v in n.inputs:
            p = producer.get(g.root(v))
            if p is not None:
                mask |= downstream[p.id]
        downstream[n.id] = mask
    edges: dict[int, list[int]] = {}
    for gid, group in members.items():
        frontier = deque(r for m in group for v in m.outputs for r in readers.get(v, ()) if r.id not in copies)
        seen: set[int] = set()
        before: list[int] = []
        while frontier and not before:
            for _ in range(len(frontier)):
                r = frontier.popleft()
                if r.id in seen:
                    continue
                seen.add(r.id)
                before += [p.id for v in r.inputs if (p := producer.get(g.root(v))) is not None
                           and p.id in backward and not downstream[p.id] & bit[gid]]
                frontier.extend(x for v in r.outputs for x in readers.get(v, ()))
        for m in group:
            if before and not copy_inputs[m.id]:
                edges[m.id] = list(dict.fromkeys(before))
    return edges


def _topological(g: Graph, edges: dict[int, list[int]]) -> list[OpNode] | None:
    """``g.nodes`` reordered so that the new waits point backwards too (each node as early as the list allows);
    None if they make a cycle."""
    position = {n.id: i for i, n in enumerate(g.nodes)}
    deps = g.dependencies()
    succs: dict[int, list[int]] = {n.id: [] for n in g.nodes}
    pending = {}
    for n in g.nodes:
        before = set(deps[n.id]) | set(edges.get(n.id, ()))
        pending[n.id] = len(before)
        for p in before:
            succs[p].append(n.id)
    ready = [position[n.id] for n in g.nodes if pending[n.id] == 0]
    heapq.heapify(ready)
    result = []
    while ready:
        n = g.nodes[heapq.heappop(ready)]
        result.append(n)
        for s in succs[n.id]:
            pending[s] -= 1
            if pending[s] == 0:
                heapq.heappush(ready, position[s])
    return result if len(result) == len(g.nodes) else None
