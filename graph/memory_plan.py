"""Memory reuse for compiled graphs: dynamic reference-count release points and a static plan.

Which values need activation memory: every value a node outputs. Graph inputs are device copies the
executor makes per run, constants are persistent (weights), and alias values live inside their root
value (a view of a contiguous block at its ``Graph.view_offsets`` offset); none of those get workspace
offsets. A root value lives from its producer (a block: its first part's) to the last node reading it or
any of its aliases; a graph output lives to the end of the graph.

* ``release_after`` (O0/O1, over the BestFit pool): after which node each value may be freed.
* ``static_plan`` (O2, SOMAS-like): one workspace, one offset per value, such that two values that
  may be alive at the same time never overlap. With several streams "at the same time" is decided by
  happens-before (data edges, events and stream order), not by position in the global order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascendemu.device.pool import ALIGN
from ascendemu.errors import InvalidParamError

from .ir import Graph


def _align(n: int, align: int) -> int:
    return -(-n // align) * align


def lifetimes(graph: Graph, node_order: list[int]) -> dict[int, tuple[int, int]]:
    """Root value nodes write -> (its first writer's position, last-use position) in ``node_order``; last use
    is ``len(node_order)`` for a graph output (alive until the host reads it). A root has one writer, its
    producer, except a contiguous block (``Graph.writers``)."""
    pos = {nid: i for i, nid in enumerate(node_order)}
    if len(pos) != len(graph.nodes) or any(n.id not in pos for n in graph.nodes):
        raise InvalidParamError("node_order must list every node of the graph exactly once")
    # an output written into another value's memory (an update in place) is that value's, not a new one; a
    # contiguous block (graph.passes.contiguous_buckets) is allocated when its first part is written
    span = {r: [min(pos[w] for w in ws), max(pos[w] for w in ws)] for r, ws in graph.writers().items()}
    for n in graph.nodes:
        for v in n.inputs:
            r = graph.root(v)
            if r in span:
                span[r][1] = max(span[r][1], pos[n.id])
    for v in graph.outputs:
        r = graph.root(v)
        if r in span:
            span[r][1] = len(node_order)
    return {v: (s, e) for v, (s, e) in span.items()}


def release_after(graph: Graph, node_order: list[int],
                  held_until: dict[int, int] | None = None) -> dict[int, tuple[int, ...]]:
    """node id -> values the executor may free once that node has run (reference count hits zero).

    Lists node outputs (including ones nothing reads, freed right after their producer) and graph
    inputs (their per-run device copies, after the last node); never constants or anything a graph output
    aliases. In a multi-stream plan a free must also wait until the consumer's stream has passed the node.
    A value of ``held_until`` (root -> position in ``node_order``) is freed after that position, or after its
    last reader if that comes later.
    """
    spans = lifetimes(graph, node_order)
    outputs = {graph.root(v) for v in graph.outputs}
    last: dict[int, int] = {v: e for v, (s, e) in spans.items() if v not in outputs}
    for v, until in (held_until or {}).items():
        if v in last:
            last[v] = max(last[v], until)
    # a graph input read by the graph (its per-run device copy) is held to the step's end, as MindSpore's runtime
    # holds the device tensors its data source fills (its DryRun of a DATA_PARALLEL MLP: x and y live through
    # the step, tests/fixtures/msdryrun/data_parallel_dryrun.json; mp_dryrun's MP=4 and 8 come within 5%)
    read = {graph.root(v) for n in graph.nodes for v in n.inputs}
    for r in read & set(graph.inputs) - outputs:
        last[r] = len(node_order) - 1
    result: dict[int, list[int]] = {nid: [] for nid in node_order}
    for v, p in sorted(last.items()):
        result[node_order[p]].append(v)
    return {nid: tuple(vs) for nid, vs in result.items()}


def live_bytes(graph: Graph, node_order: list[int], align: int = 1) -> list[int]:
    """Bytes of node outputs alive while each node of ``node_order`` runs (graph inputs and constants
    excluded). A value is allocated when its producer runs and freed after its last consumer (through
    aliases); graph outputs stay to the end. A node's inputs and outputs are both alive while it runs.
    """
    spans = lifetimes(graph, node_order)
    steps = [0] * (len(node_order) + 2)
    for vid, (start, end) in spans.items():
        size = _align(graph.values[vid].nbytes, align)
        steps[start] += size
        steps[end + 1] -= size
    live, result = 0, []
    for delta in steps[:len(node_order)]:
        live += delta
        result.append(live)
    return result


def peak_memory(graph: Graph, node_order: list[int], align: int = 1) -> int:
    """Peak of :func:`live_bytes` under ``node_order``."""
    return max(live_bytes(graph, node_order, align), default=0)


@dataclass
class MemoryPlan:
    """Static workspace layout: ``offsets[root value]`` inside a workspace of ``size`` bytes.

    ``lower_bound`` is the most bytes (aligned) alive at once under the execution order: no layout of
    this order can be smaller, so ``size / lower_bound`` measures the plan's fragmentation. With several
    streams more values may be alive together than in any single order; ``concurrent_bound`` is the
    heaviest set of values that pairwise conflict, the bound no plan of that schedule can beat.
    """

    offsets: dict[int, int]
    size: int
    lower_bound: int
    align: int = ALIGN
    concurrent_bound: int | None = None   # same bound under the plan's streams and events (None: too big)

    @property
    def ratio(self) -> float:
        return self.size / self.lower_bound if self.lower_bound else 1.0


def static_plan(graph: Graph, node_order: list[int], stream_of: dict[int, int] | None = None,
                align: int = ALIGN) -> MemoryPlan:
    """Greedy best fit: place values largest first; each goes into the smallest gap (lowest offset on
    ties) left between the already placed values it conflicts with, else on top of them.

    Two values conflict unless every user of one (producer and readers) happens before the other's
    producer. ``stream_of`` (node -> stream) adds the concurrency of a multi-stream plan; without it
    the order is one stream and conflicts are exactly overlapping lifetimes.
    """
    spans = lifetimes(graph, node_order)
    values = list(spans)
    sizes = {v: _align(max(graph.values[v].nbytes, 1), align) for v in spans}
    last_user, reached, concurrent_from = _stream_reach(graph, node_order, stream_of, values)
    # values in placement order (largest first), so the values placed before the k-th are the arrays' first k rows
    placing = sorted(range(len(values)), key=lambda i: (-sizes[values[i]], spans[values[i]][0], values[i]))
    last_user, reached = last_user[placing], reached[placing]
    # Each value's window in the order: from the first node that does not happen before its producer to
    # its last use. Values whose windows do not overlap cannot conflict (every node before a window
    # happens before its producer), so the exact test runs only on the few placed values whose windows
    # overlap: the placement stays exact and its cost follows the live set, not the graph's size.
    window_lo = concurrent_from[placing]
    window_hi = np.array([spans[values[i]][1] for i in placing], np.int64)
    to_end = np.array([spans[values[i]][1] == len(node_order) for i in placing], bool)
    size_arr = np.array([sizes[values[i]] for i in placing], np.int64)
    placed_offset = np.empty(len(values), np.int64)

    def conflicting(k: int, rows: slice | np.ndarray) -> np.ndarray:
        """Which values of ``rows`` conflict with the k-th: neither's users all happen before the other's
        producer (a value kept to the graph's end happens before nothing)."""
        u_before_v = ~to_end[rows] & (last_user[rows] <= reached[k]).all(axis=1)
        v_before_u = (not to_end[k]) & (last_user[k] <= reached[rows]).all(axis=1)
        return ~(u_before_v | v_before_u)

    offsets: dict[int, int] = {}
    top = 0
    for k, i in enumerate(placing):
        near = np.flatnonzero((window_lo[:k] <= window_hi[k]) & (window_hi[:k] >= window_lo[k]))
        hit = near[conflicting(k, near)]
        placed_offset[k] = _best_fit(placed_offset[hit], size_arr[hit], int(size_arr[k]))
        offsets[values[i]] = int(placed_offset[k])
        top = max(top, offsets[values[i]] + int(size_arr[k]))
    if len(spans) <= CLIQUE_MAX_VALUES:
        every = slice(0, len(values))
        conflicts = {values[i]: {values[placing[j]] for j in np.flatnonzero(conflicting(k, every)) if j != k}
                     for k, i in enumerate(placing)}
        concurrent = heaviest_clique(conflicts, sizes)
    lower = peak_memory(graph, node_order, align)
    if len(spans) > CLIQUE_MAX_VALUES:
        # the values alive together at the order's peak are alive together on any streams: a clique
        # of the lower bound's weight, so a plan of exactly that size proves both bounds equal
        concurrent = top if top == lower else None
    return MemoryPlan(offsets, top, lower, align, concurrent)


def _stream_reach(graph: Graph, node_order: list[int], stream_of: dict[int, int] | None,
                  values: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Happens-before (a node waits for its data producers and the previous node on its stream, and
    transitively theirs) in O(nodes x streams) instead of a bitset per node.

    Each stream is a chain (a node waits for the previous node on its stream), so the nodes of stream
    s finished before a node starts are a prefix of that stream's nodes: one index per stream says
    which. Returns, per value of ``values`` (rows) and stream (columns): ``last_user``, the index on
    that stream of its last user (producer or reader; -1: none there), and ``reached``, the index on
    that stream of the last node finished before its producer starts (-1: none). One value's users all
    happen before another's producer iff ``last_user[a] <= reached[b]`` on every stream. The third
    array, ``concurrent_from``, is per value the earliest position in ``node_order`` of a node that does
    not happen before its producer (every node before it does)."""
    streams = sorted({stream_of.get(nid, 0) for nid in node_order}) if stream_of else [0]
    column = {s: c for c, s in enumerate(streams)}
    stream = {nid: column[stream_of.get(nid, 0) if stream_of else 0] for nid in node_order}
    deps = graph.dependencies()
    at: dict[int, int] = {}                  # node -> its index on its stream
    count = [0] * len(streams)
    last_on_stream: dict[int, int] = {}
    reach: dict[int, list[int]] = {}
    for nid in node_order:
        c = stream[nid]
        at[nid], count[c] = count[c], count[c] + 1
        preds = list(deps[nid]) + ([last_on_stream[c]] if c in last_on_stream else [])
        mine = [-1] * len(streams)
        for p in preds:
            theirs = reach[p]
            for s in range(len(streams)):
                if theirs[s] > mine[s]:
                    mine[s] = theirs[s]
            if at[p] > mine[stream[p]]:
                mine[stream[p]] = at[p]
        reach[nid] = mine
        last_on_stream[c] = nid
    writers = graph.writers()
    last_user = np.full((len(values), len(streams)), -1, np.int64)
    row = {v: i for i, v in enumerate(values)}
    for v, i in row.items():
        for w in writers[v]:
            last_user[i, stream[w]] = max(last_user[i, stream[w]], at[w])
    for n in graph.nodes:
        for v in n.inputs:
            i = row.get(graph.root(v))
            if i is not None:
                last_user[i, stream[n.id]] = max(last_user[i, stream[n.id]], at[n.id])
    # a value exists from its first writer on: what every writer's start has reached (one writer but for a
    # contiguous block, whose parts' writers may run on several streams)
    reached = np.array([np.min([reach[w] for w in writers[v]], axis=0) if len(writers[v]) > 1 else reach[writers[v][0]]
                        for v in values], np.int64).reshape(len(values), len(streams))
    # order positions of each stream's nodes, then the end (a stream with no node after ``reached``)
    positions = [[] for _ in streams]
    for i, nid in enumerate(node_order):
        positions[stream[nid]].append(i)
    concurrent_from = np.full(len(values), len(node_order), np.int64)
    for c, pos in enumerate(positions):
        after = np.array(pos + [len(node_order)], np.int64)[reached[:, c] + 1]
        np.minimum(concurrent_from, after, out=concurrent_from)
    return last_user, reached, concurrent_from


def _best_fit(starts: np.ndarray, block_sizes: np.ndarray, size: int) -> int:
    """Offset for ``size`` bytes among blocks at ``starts``: the smallest gap that fits (lowest offset
    on ties) between the blocks, else on top of them all."""
    if not len(starts):
        return 0
    by_start = np.argsort(starts, kind="stable")
    starts, ends = starts[by_start], starts[by_start] + block_sizes[by_start]
    cursor = np.concatenate(([0], np.maximum.accumulate(ends)[:-1]))
    cursor = np.maximum(cursor, 0)
    gaps = starts - cursor
    fits = np.flatnonzero(gaps >= size)
    if not len(fits):
        return int(max(ends.max(), 0))
    return int(cursor[fits[np.argmin(gaps[fits])]])


# Exact max-weight clique is exponential in the worst case; conflict graphs of real networks (chains
# and a few parallel branches) are solved in milliseconds well past this size.
CLIQUE_MAX_VALUES = 400


def heaviest_clique(conflicts: dict[int, set[int]], weight: dict[int, int]) -> int:
    """Weight of the heaviest set of pairwise conflicting values (Bron-Kerbosch with pivoting)."""
    best = 0

    def grow(total: int, candidates: set[int], excluded: set[int]) -> None:
        nonlocal best
        if not candidates and not excluded:
            best = max(best, total)
            return
        if total + sum(weight[v] for v in candidates) <= best:
            return
        pivot = max(candidates | excluded, key=lambda u: len(candidates & conflicts[u]))
        for v in list(candidates - conflicts[pivot]):
            grow(total + weight[v], candidates & conflicts[v], excluded & conflicts[v])
            candidates = candidates - {v}
            excluded = excluded | {v}

    grow(0, set(conflicts), set())
    return best
