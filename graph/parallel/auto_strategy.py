"""AUTO_PARALLEL: a strategy for every op the script leaves without one, searched over the whole graph
before the sharding pass splits it.

The sharding pass runs as ops are captured, so a search that needs the whole graph takes two captures:
the first (:class:`RecordingPass`) is the semi-auto capture with its communicators and Parameter slicing
switched off, and records each op the pass plans (its global input shapes, attributes, the strategy the
script gave, which values it reads and writes); :class:`StrategySearch` chooses strategies on those
records; the second capture (:class:`AutoPass`) is the ordinary pass, each op taking the strategy chosen
for its position (captures of a script are deterministic: the n-th planned op is the same op).

Two searches, MindSpore's ``search_mode``s, on one cost: the bytes a rank sends or receives for a
choice: moving an input from its producer's layout (``redistribution_cost``), the AllReduce of partial
sums, the gradient AllReduce of a Parameter repeated over ranks (MindSpore's mirror operator), plus a
small computation term (the local output's elements) that breaks ties towards using every device.
- ``sharding_propagation``: from the ops given strategies (``Primitive.shard``, ``Cell.shard``'s inputs),
  breadth first to their neighbours in both directions, each neighbour taking the candidate of least cost
  against its already decided neighbours (MindSpore's propagation); then again from the ops reading a dataset
  input the batch splits (not full_batch: MindSpore's _VirtualDataset, a source of a training graph's
  propagation); ops nothing reaches run whole (all splits 1), as MindSpore 2.10's do.
- ``recursive_programming``: every op in graph order takes the candidate of least cost against its
  decided producers. A simplification of MindSpore's rec_core (which partitions each op's dimensions
  by halving the device number with per-op cost formulas): the same kind of cost, chosen greedily.
Ops whose rule takes no strategy (Reshape, Transpose, Cast, optimizer updates) follow their inputs as in
semi-auto; a Gather along a table's rows splits only its indices; FlashAttentionScore is not searched (the
default, or the script's strategy). A Parameter with a ``parameter_plan`` is placed before the search (its
readers start propagation). Under pipeline stages the edges between two stages are cut: each stage is searched
from its Receives as from graph inputs, as MindSpore searches a stage's graph.
"""
from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ascendemu.errors import InvalidValueError

from .layout import Layout, LayoutError
from .redistribution import refinement
from .rules import (BatchRule, ElementwiseRule, GatherRule, MatMulRule, ReduceRule, ShardPlan, SoftmaxRule, plan_op,
                    rule_for)
from .sharding import ShardingPass
from .strategy import Strategy, StrategyError

__all__ = ["SEARCH_MODES", "SearchModeError", "OpRecord", "RecordingPass", "AutoPass", "StrategySearch",
           "redistribution_cost"]

Shape = tuple[int, ...]
SEARCH_MODES = ("sharding_propagation", "recursive_programming")
# the computation term's weight against bytes communicated: a tie-breaker, not a cost of its own
COMPUTE_WEIGHT = 1e-3
# a local Slice's bytes against a transfer's
SLICE_WEIGHT = 0.1
# a ring AllReduce moves each byte twice (a ReduceScatter, then an AllGather)
ALLREDUCE_WEIGHT = 2.0
# the share of a Parameter's gradient AllReduce that is exposed: it runs on the communication stream while the
# rest of the backward computes (graph.passes.order); 0.3 makes the search pick what MindSpore 2.10 picks on
# the recorded nets (tests/test_auto_parallel.py), where 0.25 or less and 0.375 or more would not
MIRROR_WEIGHT = 0.3


class SearchModeError(InvalidValueError):
    """A search_mode the emulator does not search with (dynamic_programming)."""


@dataclass
class OpRecord:
    """One op the first capture planned: what the search needs to know of it."""

    index: int
    op: str
    inputs: list[int]                       # value ids in the first capture
    shapes: list[Shape]                     # global
    out_shapes: list[Shape]
    itemsize: int
    attrs: dict[str, Any]
    given: Strategy | None                  # the script's strategy
    external: list[Layout | None]           # per input: its layout when no recorded op produces it
    params: list[str | None]                # per input: the Parameter's name
    update: bool                            # reads a gradient (the optimizer's ops keep the Parameter's layout)
    outputs: list[int] = field(default_factory=list)
    stage: int | None = None                # its pipeline stage (None: no pipeline, or every stage's op)


class _DryHost:
    """The first capture's host: communicators are named, never created; Parameters are never sliced."""

    def __init__(self, host: Any):
        self.host = host

    def group(self, ranks: tuple[int, ...]) -> str:
        return f"{len(ranks)}-search"

    def state_layout(self, source: Any) -> Any:
        return self.host.state_layout(source)

    def slice_state(self, source: Any, layout: Layout, global_shape: Shape) -> None:
        pass

    def param_plan(self, source: Any) -> Any:
        return self.host.param_plan(source)


class RecordingPass(ShardingPass):
    """The first capture (see the module docstring): the semi-auto pass, recording the ops it plans."""

    def __init__(self, host: Any, *args: Any, **kwargs: Any):
        super().__init__(_DryHost(host), *args, **kwargs)
        self.records: list[OpRecord] = []
        self.trainable: set[str] = set()        # the trainable Parameters' names
        self.planned: dict[str, Strategy] = {}  # Parameters with a parameter_plan: its splits (AShardIdentity's)

    def strategy_for(self, op: str, given: Strategy | None, inputs: list[int], shapes: list[Shape],
                     out_shapes: list[Shape], attrs: dict[str, Any]) -> Strategy | None:
        graph = self.tracer.graph
        params, external = [], []
        for v in inputs:
            const = graph.constants.get(self.param_casts.get(v, v))
            if const is not None and const.is_parameter:
                params.append(const.name)
                known = self.host.state_layout(const.source)        # placed by an earlier capture
                planned = self.planned_layout(self.param_casts.get(v, v)) if known is None else None
                external.append(known[0] if known is not None else planned)
                if planned is not None:
                    self.planned[const.name] = (tuple(planned.shards(d) for d in range(len(planned.tensor_map))),)
                if getattr(const.source, "requires_grad", False):
                    self.trainable.add(const.name)
            else:
                params.append(None)     # a value received from another pipeline stage: as a graph input (cut)
                received = self.pipeline is not None and v in self.pipeline.received.values()
                external.append(None if received else self.layouts.get(v))
        self.records.append(OpRecord(len(self.records), op, list(inputs), shapes, out_shapes,
                                     np.dtype(graph.values[inputs[0]].dtype).itemsize if inputs else 4,
                                     dict(attrs), given, external, params, any(v in self.updates for v in inputs),
                                     stage=None if self.pipeline is None else self.pipeline.op_stage))
        return given

    def apply(self, tracer: Any, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        count = len(self.records)
        outs = super().apply(tracer, op, inputs, attrs)
        if len(self.records) > count and not self.records[count].outputs:     # another stage's op: placeholders
            self.records[count].outputs = list(outs)
        return outs

    def apply_local(self, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        count = len(self.records)
        outs = super().apply_local(op, inputs, attrs)
        if len(self.records) > count:
            self.records[count].outputs = list(outs)
        return outs


class AutoPass(ShardingPass):
    """The second capture: the sharding pass, each op without the script's strategy taking the chosen one."""

    def __init__(self, chosen: dict[int, tuple[str, Strategy]], *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.chosen, self._planned = chosen, 0

    def strategy_for(self, op: str, given: Strategy | None, inputs: list[int], shapes: list[Shape],
                     out_shapes: list[Shape], attrs: dict[str, Any]) -> Strategy | None:
        index, self._planned = self._planned, self._planned + 1
        pick = self.chosen.get(index)
        if given is not None or pick is None or pick[0] != op:
            return given
        return pick[1]


def redistribution_cost(have: Layout, want: Layout, shape: Shape, itemsize: int) -> float:
    """Bytes a rank moves to hold ``want``'s slice of a tensor it holds as ``have``, forward and backward: none
    when the layouts agree or ``have`` is whole (each rank keeps its part, as MindSpore's _VirtualDataset
    hands out a whole batch); a tenth of ``want``'s slice when ``want`` only cuts each rank's own slice finer (a
    local copy, as MindSpore's redistribution prices its StridedSlice), else ``want``'s slice twice (an
    AllGather, and its backward's ReduceScatter)."""
    if have.same(want) or have.is_replicated:
        return 0.0
    local = float(math.prod(want.local_shape(shape))) * itemsize
    if all(have.shards(d) == 1 or have.same_dim(want, d) or refinement(have, want, d) for d in range(len(shape))):
        return SLICE_WEIGHT * local
    return 2 * local


def _splits(dims: Shape, n: int) -> list[tuple[int, ...]]:
    """Every power-of-two split of ``dims`` whose product divides ``n`` and whose parts divide the dims."""
    options = [[k for k in (2 ** i for i in range(n.bit_length())) if k <= n and size % k == 0] for size in dims]
    found = [c for c in itertools.product(*options) if n % math.prod(c) == 0]
    return sorted(found, key=lambda c: -c[0] if c else 0)      # the batch first among equals (stable sort)


def candidates(rec: OpRecord, n: int) -> list[Strategy]:
    """The strategies the search considers for ``rec`` (empty: the op is not searched)."""
    rule = rule_for(rec.op)
    if rec.update:
        return []
    if isinstance(rule, MatMulRule) and len(rec.shapes) == 2:
        x, w = rec.shapes
        nb = len(x) - 2
        ta, tb = rec.attrs.get("transpose_a"), rec.attrs.get("transpose_b")
        m, k = (x[-1], x[-2]) if ta else (x[-2], x[-1])
        cols = w[-2] if tb else w[-1]
        out = []
        for c in _splits((*x[:nb], m, k, cols), n):
            b, (cm, ck, cn) = c[:nb], c[nb:]
            sx = (*b, *((ck, cm) if ta else (cm, ck)))
            sw = (*(b if len(w) == len(x) else ()), *((cn, ck) if tb else (ck, cn)))
            out.append((sx, sw))
        return out
    if isinstance(rule, (ElementwiseRule, SoftmaxRule)):
        shape = rec.out_shapes[0]
        fixed = set()
        if isinstance(rule, SoftmaxRule):
            axis = rec.attrs.get("axis", -1)
            fixed = {a % len(shape) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
        out = []
        for c in _splits(shape, n):
            if any(c[d] > 1 for d in fixed):
                continue
            out.append(tuple(tuple(1 if size == 1 else c[len(shape) - len(s) + j] for j, size in enumerate(s))
                             for s in rec.shapes))
        return out
    if isinstance(rule, ReduceRule) and len(rec.shapes) == 1:
        return [(c,) for c in _splits(rec.shapes[0], n)]
    if isinstance(rule, GatherRule) and len(rec.shapes) == 2 and len(rec.shapes[0]) == 2 and \
            rec.attrs.get("axis", 0) in (0, -2):
        # an embedding lookup: the indices split, the table whole (MindSpore's pick for nn.Embedding); vocabulary
        # or column parallel tables only as the script gives them
        return [((1, 1), c) for c in _splits(rec.shapes[1], n)]
    if isinstance(rule, BatchRule):
        return [((c[0], *(1,) * (len(rec.shapes[0]) - 1)), *((1,) * len(s) for s in rec.shapes[1:]))
                for c in _splits(rec.shapes[0][:1], n)]
    return []


class StrategySearch:
    """The search over one capture's records (see the module docstring): a plan per decided op."""

    def __init__(self, records: list[OpRecord], n: int, planned: frozenset[str] = frozenset()):
        self.records, self.n, self.planned = records, n, planned        # planned: Parameters with a parameter_plan
        self.plans: dict[int, ShardPlan] = {}
        self.strategies: dict[int, Strategy] = {}
        self.param_layouts: dict[str, Layout] = {}
        self.producer: dict[int, tuple[int, int]] = {}
        self.consumers: dict[int, list[tuple[int, int]]] = {}
        self.propagating = False
        self.from_dataset = False       # propagation's second round: the dataset's split inputs count as decided
        for rec in records:
            for j, v in enumerate(rec.outputs):
                self.producer[v] = (rec.index, j)
        # inputs from another pipeline stage: MindSpore searches each stage alone, its Receives as graph inputs
        self.cut = {(rec.index, i) for rec in records for i, v in enumerate(rec.inputs) if v in self.producer and
                    None not in (rec.stage, records[self.producer[v][0]].stage) and
                    records[self.producer[v][0]].stage != rec.stage}
        for rec in records:
            for i, v in enumerate(rec.inputs):
                if (rec.index, i) not in self.cut:
                    self.consumers.setdefault(v, []).append((rec.index, i))
            for name, lay in zip(rec.params, rec.external):
                if name in planned:
                    self.param_layouts.setdefault(name, lay)

    def run(self, mode: str) -> dict[int, tuple[str, Strategy]]:
        """The chosen strategy of each op the script left without one, by its position in the capture."""
        if mode not in SEARCH_MODES:
            raise SearchModeError(f"AUTO_PARALLEL: search_mode {mode!r} is not supported by the emulator; use one "
                                  f"of {', '.join(SEARCH_MODES)}")
        if mode == "sharding_propagation":
            self._propagate()
        else:
            for rec in self.records:
                self._decide(rec, self._best(rec))
        return {i: (self.records[i].op, s) for i, s in self.strategies.items() if self.records[i].given is None}

    def _propagate(self) -> None:
        """Breadth first from the given strategies, then from the dataset's split inputs; what nothing reaches
        runs whole (all splits 1), as MindSpore's propagation leaves an op no source reaches."""
        self.propagating = True
        self._spread(deque(rec.index for rec in self.records if (rec.given is not None or self._reads_planned(rec))
                           and self._decide(rec, self._best(rec))))
        # then from the batch split of the dataset's inputs (MindSpore's _VirtualDataset, whose strategy is the
        # dataset's: a training graph's propagation starts from it too), to the ops the first sources left
        self.from_dataset = True
        self._spread(deque(rec.index for rec in self.records if rec.index not in self.plans and
                           any(self._dataset_input(rec, i) for i in range(len(rec.inputs))) and
                           self._decide(rec, self._best(rec))))
        self.from_dataset = False
        for rec in self.records:
            if rec.index not in self.plans:
                whole = tuple((1,) * len(x) for x in rec.shapes)
                self._decide(rec, self._choice(rec, whole) if candidates(rec, self.n) else self._best(rec))

    def _spread(self, queue: deque) -> None:
        """Breadth first from the decided ops of ``queue`` to their undecided neighbours, both directions."""
        while queue:
            u = self.records[queue.popleft()]
            forward = [q for v in u.outputs for q, _ in self.consumers.get(v, ())]
            backward = [self.producer[v][0] for i, v in enumerate(u.inputs) if v in self.producer and
                        (u.index, i) not in self.cut]
            for idx in (*forward, *backward):
                if idx not in self.plans and self._decide(self.records[idx], self._best(self.records[idx])):
                    queue.append(idx)

    def _dataset_input(self, rec: OpRecord, i: int) -> bool:
        """Whether input ``i`` of ``rec`` is a graph input the dataset splits (not full_batch): no recorded op
        makes it, no Parameter, not received from another stage."""
        lay = rec.external[i]
        return (rec.inputs[i] not in self.producer and rec.params[i] is None and (rec.index, i) not in self.cut and
                lay is not None and any(lay.shards(d) > 1 for d in range(len(lay.tensor_map))))

    def _reads_planned(self, rec: OpRecord) -> bool:
        """Whether ``rec`` reads a Parameter with a ``parameter_plan`` (behind MindSpore's AShardIdentity, an op
        of configured strategy that propagation starts from)."""
        return any(name in self.planned for name in rec.params)

    def _plan(self, rec: OpRecord, strategy: Strategy | None, current: list[Layout | None] | None = None
              ) -> ShardPlan | None:
        current = [self._have(rec, i) for i in range(len(rec.inputs))] if current is None else current
        try:
            return plan_op(rule_for(rec.op), self.n, strategy, rec.shapes, rec.out_shapes, rec.attrs, current, rec.op)
        except (StrategyError, LayoutError):
            return None

    def _choice(self, rec: OpRecord, strategy: Strategy | None) -> tuple[Strategy | None, ShardPlan | None]:
        return strategy, self._plan(rec, strategy)

    def _decide(self, rec: OpRecord, choice: tuple[Strategy | None, ShardPlan | None]) -> bool:
        strategy, plan = choice
        if plan is None:
            return False
        self.plans[rec.index] = plan
        if strategy is not None:
            self.strategies[rec.index] = strategy
        for name, lay in zip(rec.params, plan.inputs):
            if name is not None:
                self.param_layouts.setdefault(name, lay)
        return True

    def _have(self, rec: OpRecord, i: int) -> Layout | None:
        """Input ``i``'s layout as decided so far (None: its producer is undecided, or an unplaced Parameter)."""
        v = rec.inputs[i]
        if (rec.index, i) in self.cut:
            return None
        if v in self.producer:
            q, j = self.producer[v]
            return self.plans[q].outputs[j] if q in self.plans else None
        if rec.params[i] is not None and rec.external[i] is None:
            return self.param_layouts.get(rec.params[i])
        return rec.external[i]

    def _options(self, rec: OpRecord) -> list[tuple[Strategy | None, ShardPlan | None]]:
        """What ``rec`` may do: the script's strategy; else its candidates; else (an op that follows its input)
        the plan for its input's layout, or, when the input is undecided (reached from a consumer), for each
        layout the input could have."""
        if rec.given is not None:
            return [self._choice(rec, rec.given)]
        options = candidates(rec, self.n)
        if options:
            return [self._choice(rec, s) for s in options]
        if not rec.inputs or rec.update:
            return [self._choice(rec, None)]
        have = self._have(rec, 0)
        if have is not None and (rec.inputs[0] in self.producer or not self.propagating or
                                 (self.from_dataset and self._dataset_input(rec, 0))):
            return [self._choice(rec, None)]
        rest = [self._have(rec, i) for i in range(1, len(rec.inputs))]
        layouts = [ElementwiseRule().plan(self.n, (c,), rec.shapes[:1], rec.shapes[:1], {}, [None], rec.op).inputs[0]
                   for c in _splits(rec.shapes[0], self.n)]
        return [(None, self._plan(rec, None, [lay, *rest])) for lay in layouts]

    def _best(self, rec: OpRecord) -> tuple[Strategy | None, ShardPlan | None]:
        """The option of least cost (propagation: least redistribution to the decided ops around it first)."""
        best, best_key = (None, None), None
        for strategy, plan in self._options(rec):
            if plan is not None:
                moved, own = self.cost(rec, plan)
                # rounded: equal costs tie exactly, and the first candidate (the batch split first) wins
                key = (round(moved), round(own)) if self.propagating else (round(moved + own),)
                if best_key is None or key < best_key:
                    best, best_key = (strategy, plan), key
        return best

    def cost(self, rec: OpRecord, plan: ShardPlan) -> tuple[float, float]:
        """Bytes moved between ``plan`` and its decided neighbours (propagation: not from graph inputs), and the
        op's own: partial sums' AllReduce, the gradients' (an input replicated over an axis that
        splits the output gets a partial gradient; a Parameter's is mirrored), the computation tie-breaker."""
        moved = own = 0.0
        size = rec.itemsize
        out_axes = {a for lay in plan.outputs for a in lay.used_axes if lay.dev_matrix[a] > 1}
        for i, want in enumerate(plan.inputs):
            have = self._have(rec, i)
            local = math.prod(want.local_shape(rec.shapes[i])) * size
            if have is not None and (rec.inputs[i] in self.producer or rec.params[i] is not None or
                                     not self.propagating or (self.from_dataset and self._dataset_input(rec, i))):
                moved += redistribution_cost(have, want, rec.shapes[i], size)
            if rec.params[i] is not None:
                own += MIRROR_WEIGHT * ALLREDUCE_WEIGHT * local if want.replicas > 1 else 0.0
            elif out_axes - set(want.used_axes) and not rec.update:
                own += ALLREDUCE_WEIGHT * local
        for j, lay in enumerate(plan.outputs):
            local = math.prod(lay.local_shape(rec.out_shapes[j])) * size
            own += COMPUTE_WEIGHT * local + (ALLREDUCE_WEIGHT * local if j in plan.partial else 0.0)
            for q, k in self.consumers.get(rec.outputs[j], ()) if j < len(rec.outputs) else ():
                if q in self.plans:
                    moved += redistribution_cost(lay, self.plans[q].inputs[k], rec.out_shapes[j], size)
        return moved, own
