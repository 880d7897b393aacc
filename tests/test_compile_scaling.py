"""The compile-time rewrites of issue 24 item 2 change no result: the static memory plan, made with
one happens-before index per stream and vectorised conflict tests, equals the plan of the pairwise
reference (a bitset of finished nodes per node, every pair of values tested, best fit over the
conflicting blocks sorted by offset: the planner as it was, written out here as the oracle), on
captured training steps at 1, 2 and 4 streams; and the stream reach equals the bitsets pair by pair.
(The fusion passes' one-walk rebuild is covered by the fusion tests' expected graphs.)
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.frontend import Tensor, nn  # noqa: E402
from ascendemu.graph import passes  # noqa: E402
from ascendemu.graph.ir import Graph  # noqa: E402
from ascendemu.graph.memory_plan import ALIGN, _stream_reach, lifetimes, peak_memory, static_plan  # noqa: E402
from ascendemu.graph.plan import optimize  # noqa: E402
from bench.bench_compile_scaling import build  # noqa: E402
from examples.networks import BasicBlock  # noqa: E402

STEPS = 6                    # the unrolled LSTM's sequence length


def happens_before(graph: Graph, node_order: list[int], stream_of: dict[int, int] | None = None) -> dict[int, int]:
    """node id -> bitset (by order position) of the nodes guaranteed finished before it starts:
    its data producers, the previous node on its stream, and transitively theirs."""
    deps = graph.dependencies()
    pos = {nid: i for i, nid in enumerate(node_order)}
    last_on_stream: dict[int, int] = {}
    anc: dict[int, int] = {}
    for nid in node_order:
        s = stream_of.get(nid, 0) if stream_of else 0
        preds = list(deps[nid]) + ([last_on_stream[s]] if s in last_on_stream else [])
        mask = 0
        for p in preds:
            mask |= anc[p] | (1 << pos[p])
        anc[nid] = mask
        last_on_stream[s] = nid
    return anc


def _train(net, x, y):
    loss = nn.WithLossCell(net, nn.MSELoss())
    step = nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))
    graph, _ = ms.capture(step, Tensor(x), Tensor(y))
    return graph


@pytest.fixture(scope="module")
def graphs():
    step, inputs = build("lstm", STEPS)      # the bench's unrolled LSTMCell training step
    lstm, _ = ms.capture(step, *map(Tensor, inputs))
    block = _train(BasicBlock(4, 8, stride=2), np.zeros((2, 4, 8, 8), np.float32), np.zeros((2, 8, 4, 4), np.float32))
    return {"lstm": lstm, "block": block}


def user_bitsets(graph: Graph, node_order: list[int], values) -> dict[int, int]:
    """value -> bitset (by order position) of its producer and every node reading it (through aliases)."""
    pos = {nid: i for i, nid in enumerate(node_order)}
    producer = {v: n.id for n in graph.nodes for v in n.outputs}
    users = {v: 1 << pos[producer[v]] for v in values}
    for n in graph.nodes:
        for v in n.inputs:
            if graph.root(v) in users:
                users[graph.root(v)] |= 1 << pos[n.id]
    return users


def reference_plan(graph, node_order, stream_of, align=ALIGN):
    """The pairwise best fit: (offsets, size)."""
    spans = lifetimes(graph, node_order)
    anc = happens_before(graph, node_order, stream_of)
    producer = {v: n.id for n in graph.nodes for v in n.outputs}
    users = user_bitsets(graph, node_order, spans)
    to_end = {v for v, (_, e) in spans.items() if e == len(node_order)}

    def before(a, b):
        return a not in to_end and users[a] & ~anc[producer[b]] == 0

    size = {v: -(-max(graph.values[v].nbytes, 1) // align) * align for v in spans}
    offsets, top = {}, 0
    for v in sorted(spans, key=lambda v: (-size[v], spans[v][0], v)):
        blocks = sorted((offsets[u], offsets[u] + size[u]) for u in offsets if not (before(u, v) or before(v, u)))
        best, cursor = None, 0
        for start, end in blocks:
            if start - cursor >= size[v] and (best is None or start - cursor < best[0]):
                best = (start - cursor, cursor)
            cursor = max(cursor, end)
        offsets[v] = best[1] if best else cursor
        top = max(top, offsets[v] + size[v])
    return offsets, top


@pytest.mark.parametrize("name", ["lstm", "block"])
@pytest.mark.parametrize("streams", [None, 1, 2, 4])
def test_static_plan_equals_the_pairwise_reference(graphs, name, streams):
    g = optimize(graphs[name], "O2")
    node_order = passes.defer_to_first_use(g, passes.order(g))
    stream_of = passes.assign_streams(g, node_order, streams).stream_of if streams else None
    plan = static_plan(g, node_order, stream_of)
    offsets, size = reference_plan(g, node_order, stream_of)
    assert len(offsets) >= 25          # optimizer updates write their Parameters in place: not planned
    assert plan.offsets == offsets and plan.size == size
    assert plan.lower_bound == peak_memory(g, node_order, ALIGN) <= size


@pytest.mark.parametrize("streams", [1, 4])
def test_stream_reach_is_the_happens_before_bitset(graphs, streams):
    """``last_user[a] <= reached[b]`` on every stream iff every user of a is in b's producer's bitset;
    ``concurrent_from`` is the first position not in the producer's bitset."""
    g = optimize(graphs["block"], "O2")
    node_order = passes.order(g)
    stream_of = passes.assign_streams(g, node_order, streams).stream_of
    anc = happens_before(g, node_order, stream_of)
    pos = {nid: i for i, nid in enumerate(node_order)}
    values = list(lifetimes(g, node_order))
    producer = {v: n.id for n in g.nodes for v in n.outputs}
    users = user_bitsets(g, node_order, values)
    last_user, reached, concurrent_from = _stream_reach(g, node_order, stream_of, values)
    for a, va in enumerate(values):    # the first node in the order that does not happen before the producer
        not_before = [i for i in range(len(node_order)) if not anc[producer[va]] >> i & 1]
        assert concurrent_from[a] == not_before[0] <= pos[producer[va]]
    pairs = 0
    for a, va in enumerate(values):
        for b, vb in enumerate(values):
            assert bool((last_user[a] <= reached[b]).all()) == (users[va] & ~anc[producer[vb]] == 0)
            pairs += 1
    assert pairs > 500


def test_a_longer_sequence_needs_no_more_device_events():
    """The unrolled LSTM's backward reads every step's forward values, on other streams: with an event
    per cross-stream edge the events in flight grew with the sequence (past the 910A's 1024 events at 400
    steps); with the implied edges left out the count is the same at any length."""
    from ascendemu.graph.plan import default_max_streams
    from ascendemu.graph.schedule import event_slots

    counts = []
    for steps in (2 * STEPS, 4 * STEPS):
        step, inputs = build("lstm", steps)
        g = optimize(ms.capture(step, *map(Tensor, inputs))[0], "O2")
        node_order = passes.defer_to_first_use(g, passes.order(g))
        plan = passes.assign_streams(g, node_order, default_max_streams("O2"))
        deps = g.dependencies()
        cross = sum(plan.stream_of[p] != plan.stream_of[c] for c in deps for p in deps[c])
        counts.append((cross, len(plan.events), len(set(event_slots(plan.schedule)))))
    (cross_a, events_a, slots_a), (cross_b, events_b, slots_b) = counts
    assert cross_b > cross_a and (events_a, slots_a) == (events_b, slots_b), counts
