"""Pipeline parallel: rank r's share of a SEMI_AUTO_PARALLEL capture whose cells carry ``pipeline_stage``.

``pipeline_stages`` = P splits the ``device_num`` ranks into P stages of ``device_num / P`` consecutive ranks
(stage = rank // per_stage, as MindSpore numbers them); inside a stage the sharding pass shards ops over
the stage's ranks. Every rank captures the whole script, so each sees every op in the same order and
decides alone, per op, what it does:

* an op's stage is its cell's ``pipeline_stage`` (:func:`stage_scope`, set by ``Cell.__call__``), else the
  latest stage of its inputs (the loss, PipelineCell's sum, the optimizer's update of a Parameter take
  the stage of what they read), else none: it runs on every stage (the micro-batch slices);
* an op of this rank's stage is sharded and recorded as usual; an input another stage computed is first
  received (``Receive`` from the rank at this rank's place in that stage);
* an op of another stage is only planned (its layouts, so a receiver knows the shards it gets) and its
  outputs are placeholders no node reads; the rank that computed an input of it sends it (``Send``);
* a Parameter belongs to the stage of its first consumer and is never read elsewhere, so each rank holds
  only its stage's weights and optimizer states.

The backward (:meth:`Pipeline.differentiate`) runs per micro-batch (``nn.PipelineCell`` captures the
network once per micro-batch, :func:`micro_scope`): receive the gradients of the values this stage sent,
differentiate the local graph from them (and from the micro-batch's loss on the last stage), send the
gradients of the received values back, and accumulate the Parameters' gradients; the mirror AllReduce
of the data-parallel replicas follows once, after the last micro-batch. Under ``_TrainGradAccuStepCell``
(:func:`accumulating`) each micro-batch's gradient is added in place into the Parameter's ``accu_grads``
clone as it is computed, as MindSpore's pipeline pass AssignAdds it, so the sums are never values of their
own: the stage holds its accu_grads for the graph's life, not a second set of running sums. The nodes of each micro-batch's
forward and backward form a phase; :func:`order_phases` chains the phases in MindSpore's 1F1B order
(stage s runs P - s - 1 forwards ahead, then one forward and one backward in turn), so a stage holds the
activations of at most P - s micro-batches.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

from ascendemu.errors import FeatureNotSupportedError
from ascendemu.kernels.registry import communication

from ..autodiff import differentiate
from ..ir import Graph
from ..passes import WRITES_ITS_INPUT, _wait
from .layout import Layout

__all__ = ["Pipeline", "stage_scope", "micro_scope", "note_micro_output", "one_f_one_b", "order_phases",
           "WORLD_GROUP", "GradAccumulation", "accumulating"]

WORLD_GROUP = "hccl_world_group"
_BACKWARD_TAG = 1 << 20        # sr_tag of a gradient's transfer: the forward's tag + this
_AFTER_BACKWARD_TAG = 2 << 20  # sr_tag of a transfer after the backward (a value read by a later stage)
_CARRIED = ("float32", "float16", "int32")      # the dtypes a Send/Receive carries (HCCL's of the registry op)
_context = threading.local()


@contextmanager
def stage_scope(stage: int | None) -> Iterator[None]:
    """The ops applied inside belong to pipeline stage ``stage`` (None: the enclosing cell's)."""
    stack = _context.__dict__.setdefault("stages", [])
    stack.append(stage if stage is not None else (stack[-1] if stack else None))
    try:
        yield
    finally:
        stack.pop()


@contextmanager
def micro_scope(index: int) -> Iterator[None]:
    """PipelineCell's call of its network on micro-batch ``index``."""
    saved = getattr(_context, "micro", None)
    _context.micro = index
    try:
        yield
    finally:
        _context.micro = saved


class GradAccumulation:
    """The ``accu_grads`` Parameters of a ``_TrainGradAccuStepCell`` (MindSpore's clones of the weights, named
    ``accu_grads.<weight name>``, by which its pipeline pass finds them), offered to the backward captured
    under :func:`accumulating`; ``taken`` says whether a pipeline stage added the gradients into them (else
    the cell adds them itself)."""

    def __init__(self, accu_grads: Any):
        self.by_weight = {p.name.split(".", 1)[1]: p for p in accu_grads}
        self.taken = False


@contextmanager
def accumulating(accumulation: GradAccumulation) -> Iterator[GradAccumulation]:
    """The backward captured inside accumulates its Parameters' gradients into ``accumulation``'s Parameters."""
    saved = getattr(_context, "accumulation", None)
    _context.accumulation = accumulation
    try:
        yield accumulation
    finally:
        _context.accumulation = saved


def _cell_stage() -> int | None:
    stack = getattr(_context, "stages", None)
    return stack[-1] if stack else None


def note_micro_output(tracer: Any, index: int, vid: int) -> None:
    """PipelineCell: ``vid`` is the loss of micro-batch ``index`` (its backward starts there)."""
    sp = getattr(tracer, "sharding", None)
    if sp is not None and sp.pipeline is not None:
        sp.pipeline.micro_outputs[index] = vid


def one_f_one_b(stages: int, stage: int, micros: int) -> list[tuple[str, int]]:
    """MindSpore's 1F1B order of stage ``stage``: ("F", i) / ("B", i) phases, P - stage - 1 forwards ahead."""
    ahead = min(stages - stage - 1, micros)
    order = [("F", i) for i in range(ahead)]
    for i in range(micros - ahead):
        order += [("F", ahead + i), ("B", i)]
    return order + [("B", i) for i in range(micros - ahead, micros)]


class _Transfer:
    """One value sent across stages in a micro-batch's forward: this rank's end of it."""

    def __init__(self, local: int, peer: int, tag: int):
        self.local, self.peer, self.tag = local, peer, tag


class Pipeline:
    """One capture's pipeline state, owned by its :class:`~.sharding.ShardingPass` (``sp.pipeline``)."""

    def __init__(self, stages: int, stage: int, per_stage: int, rank: int):
        self.stages, self.stage, self.per_stage, self.rank = stages, stage, per_stage, rank
        self.value_stage: dict[int, int] = {}           # value -> the stage that computes it
        self.stage_of_name: dict[str, int] = {}         # Parameter name -> its stage
        self.foreign: set[int] = set()                  # placeholders of values other stages compute
        self.received: dict[int, int] = {}              # placeholder -> the value received for it
        self.sent: set[tuple[int, int]] = set()         # (value, destination stage) already sent
        self.sends: dict[int, list[_Transfer]] = {}     # micro-batch -> this rank's Sends, forward order
        self.receives: dict[int, list[_Transfer]] = {}  # micro-batch -> this rank's Receives
        self.micro_outputs: dict[int, int] = {}
        self.spans: list[tuple[tuple[str, int], int, int]] = []   # (phase, first node id, end node id)
        self._tags: dict[int, int] = {}
        self._last_stage_seen = -1
        self.op_stage: int | None = None                # the stage of the op being applied (None: every stage's)
        self.differentiated = False                     # the backward is captured: what follows is the update
        self._open: tuple[tuple[str, int], int] | None = None

    def peer(self, stage: int) -> int:
        """The world rank at this rank's place in ``stage``."""
        return stage * self.per_stage + self.rank % self.per_stage

    # -- the forward
    def apply(self, sp: Any, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        consts = sp.tracer.graph.constants
        for v in inputs:
            if v not in self.value_stage and v in consts and consts[v].is_parameter:
                self._state_stage(v, consts[v].name)
        if op == "AllFinite" and self.differentiated:
            return self._all_finite(sp, inputs, attrs)
        stage = _cell_stage()
        staged = [v for v in inputs if v in self.value_stage]
        if stage is None and staged:            # the stage of its largest input, the latest of equals: a Parameter's
            # update runs where the Parameter is (not where a shared learning rate or overflow flag is)
            values = sp.tracer.graph.values
            stage = max((values[v].size, self.value_stage[v]) for v in staged)[1]
        self.op_stage = stage
        micro = getattr(_context, "micro", None)
        self._phase(sp, ("F", micro) if stage is not None and micro is not None else None)
        if stage is None:
            return sp.apply_local(op, inputs, attrs)
        if stage < self._last_stage_seen and not self.differentiated:   # a new forward (a micro-batch, or the
            # gradient's forward: the same tags, so CSE merges its transfers with the first forward's)
            self._tags[self._micro()] = 0
            self.sends[self._micro()], self.receives[self._micro()] = [], []
        self._last_stage_seen = stage
        for v in inputs:
            if v in consts and consts[v].is_parameter and v not in self.value_stage:
                self.value_stage[v] = stage
                self.stage_of_name[consts[v].name] = stage
        for v in inputs:
            src = self.value_stage.get(v)
            if src is not None and src > stage and not self.differentiated:
                raise FeatureNotSupportedError(f"pipeline: {op} of stage {stage} reads a value of stage {src}; a "
                                               f"stage may read only earlier stages' values (check pipeline_stage)")
        if stage == self.stage:
            outs = sp.apply_local(op, [self._receive(sp, v) for v in inputs], attrs)
        else:
            for v in inputs:
                if self.value_stage.get(v) == self.stage and v not in consts and (v, stage) not in self.sent:
                    self._send(sp, v, stage)
            outs = self._placeholders(sp, op, inputs, attrs)
        for v in outs:
            self.value_stage[v] = stage
        return outs

    def _all_finite(self, sp: Any, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        """The overflow check after the backward (the loss-scale cell's AllFinite over every stage's gradients),
        as MindSpore's TrainOneStepWithLossScaleCell does it when distributed: each rank checks the values it
        holds (its stage's gradients, as sharded: never gathered), the float32 overflow flags are summed by
        an AllReduce over the world group, and the check passes where the sum is 0. No stage sends its
        gradients, and the result belongs to no stage, so every rank runs the loss-scale update alike."""
        mine = [v for v in inputs if v not in self.foreign and self.value_stage.get(v, self.stage) == self.stage]
        overflow = sp.literal(0.0, "float32")
        if mine:                        # this rank's shards as they are: the world's sum covers the other shards
            finite = sp.record("AllFinite", mine, attrs)[0]
            overflow = sp.record("Cast", [sp.record("LogicalNot", [finite], {})[0]], {"dst_type": "float32"})[0]
        flags = sp.record("AllReduce", [overflow], {"reduce_op": "sum", "group": WORLD_GROUP})[0]
        out = sp.record("Equal", [flags, sp.literal(0.0, "float32")], {})[0]
        sp._place(out, Layout.replicated(sp.n, 0), ())
        return (out,)

    def _state_stage(self, v: int, name: str) -> None:
        """An optimizer state (``adam_m.<name>``, ``moments.<name>``, ``accu_grads.<name>``: MindSpore's clones
        are named by prefix) belongs to the stage of the Parameter it was cloned from, though an op outside any
        staged cell (the optimizer's Cast to float32) reads it first."""
        rest = name
        while "." in rest:
            rest = rest.split(".", 1)[1]
            if rest in self.stage_of_name:
                self.value_stage[v] = self.stage_of_name[rest]
                return

    def _micro(self) -> int:
        return getattr(_context, "micro", None) or 0

    def _tag(self) -> int:
        micro = self._micro()
        tag = self._tags.get(micro, 0)
        self._tags[micro] = tag + 1
        return micro * 4096 + tag + (_AFTER_BACKWARD_TAG if self.differentiated else 0)

    def _send(self, sp: Any, v: int, stage: int) -> None:
        tag = self._tag()
        peer = self.peer(stage)
        value = v
        if sp.dtype(v) not in _CARRIED:                   # a bool travels as int32
            value = sp.record("Cast", [v], {"dst_type": "int32"})[0]
        sp.record("Send", [value], {"dest_rank": peer, "group": WORLD_GROUP, "sr_tag": tag})
        self.sent.add((v, stage))
        self.sends.setdefault(self._micro(), []).append(_Transfer(v, peer, tag))

    def _receive(self, sp: Any, v: int) -> int:
        if v not in self.foreign:
            return v
        got = self.received.get(v)
        if got is None:
            tag = self._tag()
            peer = self.peer(self.value_stage[v])
            desc = sp.tracer.graph.values[v]
            carried = desc.dtype if desc.dtype in _CARRIED else "int32"
            got = sp.record("Receive", [], {"src_rank": peer, "group": WORLD_GROUP, "shape": tuple(desc.shape),
                                            "dtype": carried, "sr_tag": tag})[0]
            if carried != desc.dtype:
                got = sp.record("Cast", [got], {"dst_type": desc.dtype})[0]
            sp._place(got, sp.layouts[v], sp.globals[v])
            self.received[v] = got
            self.receives.setdefault(self._micro(), []).append(_Transfer(got, peer, tag))
        return got

    def _placeholders(self, sp: Any, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        """Another stage's op: its outputs' layouts as that stage shards it, and values no node computes."""
        graph = sp.tracer.graph
        current = [sp.layout(v) for v in inputs]
        if op == "Cast" and current[0] is None:            # a Parameter's Cast: placed by its consumer
            desc = graph.values[inputs[0]]
            out = graph.new_value(type(desc)(desc.shape, attrs["dst_type"]))
            sp.param_casts[out] = inputs[0]
            self.foreign.add(out)
            return (out,)
        _, plan, whole = sp.plan(op, inputs, attrs, current)
        for v, cur, want in zip(inputs, current, plan.inputs):
            if cur is None:                                # another stage's Parameter (or its Cast): its layout,
                param = sp.param_casts.get(v, v)           # no slice
                for placed in {param, v}:
                    sp._place(placed, want, graph.values[param].shape)
        outs = []
        for lay, desc in zip(plan.outputs, whole):
            vid = graph.new_value(type(desc)(lay.local_shape(desc.shape, op), desc.dtype))
            sp._place(vid, lay, desc.shape)
            self.foreign.add(vid)
            outs.append(vid)
        return tuple(outs)

    def _phase(self, sp: Any, phase: tuple[str, int] | None) -> None:
        """Node ids from here belong to ``phase`` (None: to no phase)."""
        now = sp.tracer.graph._next_node
        if self._open is not None and self._open[0] != phase:
            self.spans.append((self._open[0], self._open[1], now))
            self._open = None
        if phase is not None and self._open is None:
            self._open = (phase, now)

    # -- the backward
    def differentiate(self, sp: Any, tracer: Any, outputs: list[int], wrt: list[int], senses: list[int | None],
                      scaled: Any, mirror: Any) -> list[int]:
        """The accumulated gradients of ``wrt`` (Parameters) over the micro-batches (module docstring);
        ``scaled(out, sens)`` is the sharding pass's sens of a loss held by several ranks, ``mirror(w, g,
        layout)`` its gradient AllReduce over a Parameter's replicas."""
        graph = tracer.graph
        consts = graph.constants
        if any(not (w in consts and consts[w].is_parameter) for w in wrt):
            raise FeatureNotSupportedError("pipeline parallel differentiates Parameters only; give GradOperation "
                                           "get_by_list=True and no input positions")
        self._phase(sp, None)
        self.differentiated = True
        micros = sorted(self.micro_outputs) or [0]
        if not self.micro_outputs:
            self.micro_outputs[0] = outputs[0]
        local = [w for w in wrt if self.value_stage.get(w, 0) == self.stage and w in sp.layouts]
        accumulation = getattr(_context, "accumulation", None)
        # not with optimizer parallel (MindSpore's cell hands the optimizer the gradients), nor yet where recompute
        # copies a reader of a weight (a recomputed cell's weight Cast, one node for every micro-batch after CSE:
        # its copies' waits and the in-place adds' 1F1B phases can order into a cycle; the gradients are then
        # summed as values and added by the cell after the backward). Recomputed activations alone (RmsNorm's
        # x * rstd) do not tie the phases.
        accu = {} if accumulation is None or sp.opt is not None or _recomputes_a_weight_reader(graph) else \
            {w: accumulation.by_weight[consts[w].name] for w in local if consts[w].name in accumulation.by_weight}
        if accumulation is not None and not accu:
            self._place_accumulators(sp, tracer, accumulation, wrt, local)
        total: dict[int, int] = {}
        for m in micros:
            self._phase(sp, ("B", m))
            outs, sens = [], []
            loss = self.micro_outputs[m]
            if loss not in self.foreign:
                outs.append(loss)
                sens.append(scaled(loss, senses[0]))
            for t in self.sends.get(m, []):
                desc = graph.values[t.local]
                outs.append(t.local)
                sens.append(sp.record("Receive", [], {"src_rank": t.peer, "group": WORLD_GROUP,
                                                      "shape": tuple(desc.shape), "dtype": desc.dtype,
                                                      "sr_tag": t.tag + _BACKWARD_TAG})[0])
            received = self.receives.get(m, [])
            if not outs:
                continue
            grads = differentiate(tracer, outs, local + [t.local for t in received], sens)
            for t, g in zip(received, grads[len(local):]):
                sp.record("Send", [g], {"dest_rank": t.peer, "group": WORLD_GROUP, "sr_tag": t.tag + _BACKWARD_TAG})
            for w, g in zip(local, grads):
                if w in accu:
                    total[w] = self._assign_add(sp, tracer, accu[w], g, sp.layouts[w], sp.global_shape(w))
                else:
                    total[w] = g if w not in total else sp.record("Add", [total[w], g], {})[0]
        self._phase(sp, None)
        if accu:
            accumulation.taken = True
        result = []
        for w in wrt:
            lay = sp.layouts.get(w) or Layout.replicated(sp.n, len(graph.values[w].shape))   # never read: whole
            if w in total:
                g = mirror(w, total[w], lay)
                if w in accu and g != total[w]:            # the replicas' sum written into the accumulator, as
                    g = sp.record("Assign", [total[w], g], {})[0]   # MindSpore's Assign after its mirror AllReduce
                    sp._place(g, lay, sp.global_shape(w))
                    tracer.assign(accu[w], accu[w].name, accu[w].desc, g)
                sp.updates.add(g)
                self.value_stage[g] = self.stage           # every rank places the ops on gradients alike
            else:                                          # another stage's Parameter: its placeholder
                desc = graph.values[w]
                g = graph.new_value(type(desc)(lay.local_shape(sp.global_shape(w)), desc.dtype))
                self.foreign.add(g)
                self.value_stage[g] = self.value_stage.get(w, 0)
            sp._place(g, lay, sp.global_shape(w))
            result.append(g)
        return result

    def _place_accumulators(self, sp: Any, tracer: Any, accumulation: GradAccumulation, wrt: list[int],
                            local: list[int]) -> None:
        """The accu_grads the cell clears itself (not added into here: optimizer parallel, or a recomputed weight
        reader) as MindSpore holds them: each on its weight's stage, sliced as its weight, so a stage keeps its
        own slices and drops the others' with their zeros (else every rank held the whole model's accu_grads and
        as many bytes of zeros: 12.5 GiB of each for the 7B at dp2 x mp2 x pp2 with optimizer shard)."""
        consts = tracer.graph.constants
        for w in wrt:
            param = accumulation.by_weight.get(consts[w].name)
            if param is not None:
                self._accumulator(sp, tracer, param, sp.layouts[w] if w in local else None, self.value_stage.get(w, 0))

    def _accumulator(self, sp: Any, tracer: Any, param: Any, layout: Layout | None, stage: int) -> int:
        """The accu_grads Parameter ``param``'s value, placed when first met: on ``stage``, and sliced as
        ``layout`` (its weight's) on the stage that holds it."""
        vid = tracer.state(param, param.name, param.desc)
        if vid not in sp.layouts:
            if layout is not None:
                sp._place_parameter(vid, layout)
            self.value_stage[vid] = stage
        return vid

    def _assign_add(self, sp: Any, tracer: Any, param: Any, grad: int, layout: Layout, whole: tuple) -> int:
        """``param`` += ``grad`` (MindSpore's AssignAdd into an accu_grads Parameter, sliced as its weight)."""
        vid = self._accumulator(sp, tracer, param, layout, self.stage)
        new = sp.record("Add", [vid, grad], {})[0]
        sp._place(new, layout, whole)
        sp.updates.add(new)
        self.value_stage[new] = self.stage
        tracer.assign(param, param.name, param.desc, new)
        return new

    # -- the end of the capture
    def finish(self, graph: Graph, outputs: list[int], literal: Any) -> list[int]:
        """The graph's outputs (another stage's loss: zeros of its shape, as a non-last stage returns) and
        its phases in 1F1B order (``graph.phases``); Parameter updates computed by other stages dropped."""
        self._phase_close(graph)
        outputs = [literal(graph.values[v]) if v in self.foreign else v for v in outputs]
        for param in [p for p, v in graph.updates.items()
                      if v in self.foreign or self.value_stage.get(p, self.stage) != self.stage]:
            del graph.updates[param]                       # another stage's (an accumulator's cleared by a literal)
        for v in self.foreign:
            graph.values.pop(v, None)
        _drop_unread(graph, outputs)
        read = graph.read_values(outputs)
        for v in [v for v, c in graph.constants.items() if v not in read and (
                not c.is_parameter or self.value_stage.get(v, self.stage) != self.stage)]:
            del graph.constants[v], graph.values[v]       # another stage's weight, state or their literals
        micros = len(self.micro_outputs) or 1
        rank = {phase: i for i, phase in enumerate(one_f_one_b(self.stages, self.stage, micros))}
        graph.phases = {nid: rank[phase] for phase, start, end in self.spans if phase in rank
                        for nid in range(start, end)}
        graph._hash = None                 # updates, constants and phases changed in place
        return outputs

    def _phase_close(self, graph: Graph) -> None:
        if self._open is not None:
            self.spans.append((self._open[0], self._open[1], graph._next_node))
            self._open = None


def _recomputes_a_weight_reader(graph: Graph) -> bool:
    """Whether a node recompute marks (``Graph.recompute``) reads a Parameter."""
    params = {v for v, c in graph.constants.items() if c.is_parameter}
    return any(n.full_name in graph.recompute and not params.isdisjoint(n.inputs) for n in graph.nodes)


def _drop_unread(graph: Graph, outputs: list[int]) -> None:
    """Drop the nodes a stage computes for nobody: no node, output or Parameter update reads them once the other
    stages' work is gone (the first stage's micro-batch slices of the label, which only the last stage's loss
    read), as MindSpore's stage graph holds no such kernel (its execute order on stage 0 slices the data
    input alone, and only the data input has a device copy). Collectives stay (a peer waits on each), and so
    does an Assign into a tensor (:data:`WRITES_ITS_INPUT`: ``_TrainGradAccuStepCell`` clears its scaled
    gradients with zeros nobody reads)."""
    needed = {*outputs, *graph.updates, *graph.updates.values()}
    needed |= {graph.root(v) for v in needed}
    kept: list = []
    for n in reversed(graph.nodes):
        if communication(n.op) is None and n.op not in WRITES_ITS_INPUT and needed.isdisjoint(n.outputs):
            for v in n.outputs:
                graph.values.pop(v, None)
            graph.control.pop(n.id, None)
            continue
        kept.append(n)
        needed.update(n.inputs)
        needed.update(graph.root(v) for v in n.inputs)
    graph.nodes[:] = kept[::-1]


def order_phases(graph: Graph) -> Graph:
    """Chain the pipeline phases of ``graph.phases`` (node id -> position in the 1F1B order): every node of
    a phase that reads no node of its own phase waits for every node of the previous phase that no node of
    that phase reads, so the phases run one after another in that order (``Graph.control``); a Send or
    Receive captured after them waits for the last, so no rank blocks on it while its peer needs a phase."""
    if not graph.phases:
        return graph
    g = graph.copy()
    producer = {v: n.id for n in g.nodes for v in n.outputs}
    by_phase: dict[int, list[int]] = {}
    reads: dict[int, set[int]] = {}
    for n in g.nodes:
        k = g.phases.get(n.id)
        if k is None:
            continue
        by_phase.setdefault(k, []).append(n.id)
        reads[n.id] = {producer[g.root(v)] for v in n.inputs if g.root(v) in producer}
    previous_sinks: list[int] = []
    for k in sorted(by_phase):
        ids = set(by_phase[k])
        read_inside = set().union(*(reads[i] & ids for i in ids))
        for nid in by_phase[k]:
            if previous_sinks and not reads[nid] & ids:
                _wait(g, nid, previous_sinks)
        previous_sinks = [i for i in by_phase[k] if i not in read_inside]
    last = max(graph.phases)
    for n in g.nodes:                      # transfers after the backward (the overflow flags' AllReduce) follow
        if n.id > last and (n.op in ("Send", "Receive")       # the phases, one after another in capture order
                            or n.op == "AllReduce" and n.attrs.get("group") == WORLD_GROUP):
            _wait(g, n.id, previous_sinks)
            previous_sinks = [n.id]
    return g
