"""The sharding pass: rank r's local graph from the global graph a SEMI_AUTO_PARALLEL script describes.

It runs as the graph is captured (the Tracer hands it every op, ``Tracer.sharding``), because autodiff
appends the backward to the capture: each forward op is split by its rule (``rules``) under its
``Primitive.shard`` strategy or the semi-auto default; its inputs are first moved to the layouts the
rule needs (``redistribution``: AllGather, Slice); partial sums it leaves are combined at once
(AllReduce); the local op is recorded with local shapes. A Parameter takes the layout of its first
consumer and is sliced in place (the front end's ``ShardingHost``), as MindSpore slices parameters
after compiling; an op that updates it (the optimizer) keeps that layout for the Parameter, its gradient
and its states. Values the pass has not seen (constants, backward values) are whole on every rank. With
optimizer parallel a Parameter repeated over ranks is stored split further among them (``optimizer_shard``).

The backward is the adjoint of the local forward: autodiff differentiates the inserted collectives by
their own rules, with the pass switched off (:func:`differentiate_sharded`), which also adds the
gradient AllReduce of each Parameter over the ranks holding the same slice of it (MindSpore's mirror
operator) and scales the loss's sens by 1/(ranks holding the same loss), so the gradients are those of
one global loss: the single-device gradients.
"""
from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Protocol

import numpy as np

from ascendemu.errors import InternalError
from ascendemu.kernels.registry import REGISTRY
from ascendemu.kernels.signature import TensorDesc

from ..autodiff import GRADIENTS_SCOPE, differentiate
from ..ir import infer_node_outputs
from .layout import Layout
from .optimizer_shard import OptimizerShard, OptShardConfig, OptShardLayout
from .redistribution import all_reduce, move, reduce_scatter
from .rules import ShardPlan, plan_op, rule_for
from .strategy import LayoutStrategy, Strategy, StrategyError, with_repeat

__all__ = ["ShardingHost", "ShardingPass", "strategy_scope", "differentiate_sharded", "DATA_PARALLEL_INPUTS"]

Shape = tuple[int, ...]
# dataset_strategy "data_parallel": each rank's batch is one of N equal row blocks of the global batch
DATA_PARALLEL_INPUTS = "data_parallel"


class ShardingHost(Protocol):
    """What the pass needs from the front end: communicators and in-place slicing of Parameters."""

    def group(self, ranks: tuple[int, ...]) -> str:
        """The name of the communicator of ``ranks`` (created, on every member, when first asked for)."""

    def state_layout(self, source: Any) -> tuple[Layout, Shape] | None:
        """The layout and global shape a Parameter was sliced to by an earlier capture, else None."""

    def slice_state(self, source: Any, layout: Layout, global_shape: Shape) -> None:
        """Make the Parameter this rank's slice of itself under ``layout``."""

    def param_plan(self, source: Any) -> Strategy | Layout | None:
        """The layout ``Cell.shard(parameter_plan=...)`` fixed for the Parameter (a split per dim, or a tensor
        layout), else None."""


_pending = threading.local()
# MindSpore's name of the op a parameter_plan puts after its Parameter (its strategy checkpoint's key)
PLAN_OP = "AShardIdentity"


@contextmanager
def strategy_scope(op: str, strategy: Strategy | LayoutStrategy,
                   out_strategy: Strategy | LayoutStrategy | None = None) -> Iterator[None]:
    """A sharded primitive's call: the first ``op`` it applies takes ``strategy`` (and ``out_strategy``)."""
    stack = _pending.__dict__.setdefault("stack", [])
    stack.append([op, strategy, out_strategy])
    try:
        yield
    finally:
        stack.pop()


def _inside_sharded_composite(op: str) -> bool:
    """Whether ``op`` is applied inside a call of a sharded primitive that never applies an op of its own
    name (a composite such as RmsNorm): its strategy, meant for the one fused op, is still pending."""
    stack = getattr(_pending, "stack", None)
    return bool(stack) and stack[-1][0] != op and stack[-1][1] is not None


def _take_strategies(op: str) -> tuple[Strategy | LayoutStrategy | None, Strategy | LayoutStrategy | None]:
    """The pending (in_strategy, out_strategy) of ``op``'s sharded call, taken: only its first ``op`` has them."""
    stack = getattr(_pending, "stack", None)
    if stack and stack[-1][0] == op and stack[-1][1] is not None:
        taken = stack[-1][1], stack[-1][2]
        stack[-1][1] = stack[-1][2] = None
        return taken
    return None, None


def _following(current: list[Layout | None], descs: list[TensorDesc]) -> Strategy:
    """The strategy that keeps each input split as it is (a Parameter, not yet placed, whole): the ops of
    a sharded composite run on the shards their fused op would (MindSpore's RmsNorm is one kernel taking
    the ``(dp, 1, 1)`` strategy; ours is Cast, Square, ReduceMean, Rsqrt, Mul, ...), rather than each
    taking the batch default and gathering a batch that does not divide over every device."""
    return tuple(tuple(1 if lay is None else lay.shards(d) for d in range(len(desc.shape)))
                 for lay, desc in zip(current, descs))


class ShardingPass:
    """One capture's sharding: the layout and global shape of every value it has placed."""

    def __init__(self, host: ShardingHost, rank: int, device_num: int, full_batch: bool,
                 dataset_strategy: Any = DATA_PARALLEL_INPUTS, alltoall: bool = False,
                 opt_shard: OptShardConfig | None = None):
        self.host, self.rank, self.n, self.alltoall = host, rank, device_num, alltoall
        self.opt = None if opt_shard is None else OptimizerShard(opt_shard)     # enable_parallel_optimizer
        self.full_batch, self.dataset_strategy = full_batch, dataset_strategy
        self.layouts: dict[int, Layout] = {}
        self.globals: dict[int, Shape] = {}
        self.param_scopes: dict[int, list[str]] = {}     # Parameter value -> its first consumer's scope
        self.param_casts: dict[int, int] = {}            # a Cast of an unplaced Parameter -> that Parameter
        self.updates: set[int] = set()                   # Parameters' gradients and values computed from them
        # (graph, value, layout) -> the value already moved to it: one redistribution per tensor and layout, as
        # MindSpore's, so the gradients of its readers are summed before the one backward of the move
        self.moved: dict[tuple[int, int, Layout], int] = {}
        self._local = 0
        self.tracer: Any = None
        self.pipeline: Any = None          # pipeline.Pipeline when pipeline_stages > 1 (set by the front end)

    # -- the Emitter of redistribution
    def record(self, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        return self.tracer.record_node(op, inputs, attrs)

    def shape(self, vid: int) -> Shape:
        return self.tracer.graph.values[vid].shape

    def dtype(self, vid: int) -> str:
        return self.tracer.graph.values[vid].dtype

    def literal(self, value: float, dtype: str) -> int:
        """A scalar constant of ``dtype``."""
        return self.tracer.literal(np.asarray(value, np.dtype(dtype)), dtype)

    def group(self, ranks: tuple[int, ...]) -> str:
        return self.host.group(tuple(ranks))

    @contextmanager
    def local(self) -> Iterator[None]:
        """Ops recorded inside are local ops on local values, recorded as they are (the backward)."""
        self._local += 1
        try:
            yield
        finally:
            self._local -= 1

    # -- layouts of values
    def attach(self, tracer: Any) -> "ShardingPass":
        """Shard the ops ``tracer`` captures."""
        self.tracer = tracer
        tracer.sharding = self
        return self

    def global_shape(self, vid: int) -> Shape:
        """The shape the script sees (a graph input, a Parameter, an op's output: the global tensor's)."""
        if vid not in self.globals:
            self.layout(vid)
        return self.globals.get(vid, self.shape(vid))

    def layout(self, vid: int) -> Layout | None:
        """The value's layout; None for a Parameter not placed yet (its first consumer places it)."""
        lay = self.layouts.get(vid)
        if lay is not None:
            return lay
        if vid in self.param_casts:                 # placed with its Parameter by their first consumer
            return None
        graph = self.tracer.graph
        const = graph.constants.get(vid)
        if const is not None and const.is_parameter and const.source is not None:
            known = self.host.state_layout(const.source)
            if known is None:
                return self._place_planned(vid)
            desc = graph.values[vid]                # read in the script's view: the global shape
            graph.values[vid] = TensorDesc(known[0].local_shape(known[1], const.name), desc.dtype)
            graph._hash = None
            self._place(vid, *known)
            return known[0]
        shape = self.shape(vid)
        if vid in graph.inputs and self.tracer.parent is None:
            lay, whole = self._input_layout(graph.inputs.index(vid), shape)
        else:
            lay, whole = Layout.replicated(self.n, len(shape)), shape
        self._place(vid, lay, whole)
        return lay

    def _place(self, vid: int, layout: Layout, global_shape: Shape) -> None:
        self.layouts[vid], self.globals[vid] = layout, tuple(global_shape)

    def planned_layout(self, vid: int) -> Layout | None:
        """The layout the Parameter ``vid``'s ``parameter_plan`` fixes (MindSpore puts an AShardIdentity with the
        plan as its strategy after the Parameter: its readers take the Parameter in that layout, and move it
        from there when their strategy wants another), else None."""
        const = self.tracer.graph.constants[vid]
        plan = self.host.param_plan(const.source)
        if plan is None or isinstance(plan, Layout):
            return plan
        shape = self.globals.get(vid, self.tracer.graph.values[vid].shape)     # placed or not: the global shape
        return plan_op(rule_for("Cast"), self.n, (tuple(plan),), [shape], [shape], {}, [None], PLAN_OP).inputs[0]

    def _place_planned(self, vid: int) -> Layout | None:
        """A Parameter with a ``parameter_plan``: sliced to it at once; any other waits for its first consumer."""
        lay = self.planned_layout(vid)
        if lay is None:
            return None
        if math.prod(lay.dev_matrix) != self.n:
            raise StrategyError(f"parameter_plan of {self.tracer.graph.constants[vid].name}: the layout's device "
                                f"matrix {lay.dev_matrix} must have the device number of the stage, {self.n}")
        return self._place_parameter(vid, lay)

    def _place_parameter(self, vid: int, want: Layout) -> Layout:
        """Slice the unplaced Parameter ``vid`` (or its Cast) in place to ``want`` (optimizer parallel: its
        storage piece); its layout."""
        graph = self.tracer.graph
        param = self.param_casts.get(vid, vid)
        desc = graph.values[param]
        source = graph.constants[param].source
        store = want if self.opt is None else self.opt.storage(source, want, desc)
        self.host.slice_state(source, store, desc.shape)
        local = store.local_shape(desc.shape, graph.constants[param].name)
        for v in (param, *(c for c, p in self.param_casts.items() if p == param)):
            graph.values[v] = TensorDesc(local, graph.values[v].dtype)
            self._place(v, store, desc.shape)
        graph._hash = None
        return store

    def _input_layout(self, index: int, shape: Shape) -> tuple[Layout, Shape]:
        """A graph input: the whole batch on every rank (full_batch), or this rank's block of it
        (dataset_strategy: "data_parallel", or a strategy per input)."""
        if self.full_batch or not shape:
            return Layout.replicated(self.n, len(shape)), shape
        if self.dataset_strategy == DATA_PARALLEL_INPUTS:
            split = (self.n,) + (1,) * (len(shape) - 1)
        else:
            split = tuple(self.dataset_strategy[index])
        dev = with_repeat(list(split), self.n, "dataset_strategy", self.dataset_strategy)
        return Layout(dev, tuple(range(1, 1 + len(shape)))), tuple(s * k for s, k in zip(shape, split))

    def computed_elsewhere(self, vid: int) -> bool:
        """Whether ``vid`` is a value another pipeline stage computes (this rank holds a placeholder)."""
        return self.pipeline is not None and vid in self.pipeline.foreign

    def finish(self, outputs: list[int]) -> list[int]:
        """The capture's outputs, once it has ended (a pipeline stage's: see ``Pipeline.finish``)."""
        if self.pipeline is None:
            return outputs
        tracer = self.tracer
        return self.pipeline.finish(tracer.graph, outputs,
                                    lambda d: tracer.literal(np.zeros(d.shape, np.dtype(d.dtype)), d.dtype))

    def replicas(self, vid: int) -> int:
        lay = self.layout(vid)
        return 1 if lay is None else lay.replicas

    # -- the pass
    def apply(self, tracer: Any, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        """Record ``op`` on ``inputs`` as this rank's share of the global op."""
        self.tracer = tracer
        if self._local or tracer.parent is not None:
            return tracer.record_node(op, inputs, attrs)
        if self.pipeline is not None:          # an op of another pipeline stage is only planned (pipeline.py)
            return self.pipeline.apply(self, op, inputs, attrs)
        return self.apply_local(op, inputs, attrs)

    def apply_local(self, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        """``apply`` of an op this rank computes."""
        tracer = self.tracer
        current = [self.layout(v) for v in inputs]
        graph = tracer.graph
        if op == "Cast" and current[0] is None:
            return self._cast_parameter(tracer, inputs, attrs)
        for v in inputs:
            if v in graph.constants and graph.constants[v].is_parameter:
                self.param_scopes.setdefault(v, list(tracer.scopes))
        if self.opt is not None:
            inputs, current = self.opt.whole_inputs(self, op, inputs, current)
        rule, plan, whole = self.plan(op, inputs, attrs, current)
        local = [self._relayout(v, cur, want) for v, cur, want in zip(inputs, current, plan.inputs)]
        outs = list(rule.emit(self, op, local, plan, self.rank))
        for i, (lay, desc) in enumerate(zip(plan.outputs, whole)):
            part = plan.partial.get(i)
            if part is not None and part.scatter:
                outs[i] = reduce_scatter(self, outs[i], lay.group(self.rank, part.axes))
            elif part is not None:
                outs[i] = all_reduce(self, outs[i], lay.group(self.rank, part.axes), part.reduce_op)
                if part.mean > 1:
                    outs[i] = tracer.record_node("Mul", [outs[i], self.literal(1.0 / part.mean, desc.dtype)], {})[0]
            expected = lay.local_shape(desc.shape, op)
            if self.shape(outs[i]) != expected:
                raise InternalError(f"sharding {op}: its local output {i} has shape {self.shape(outs[i])}, the layout "
                                    f"{lay} of {desc.shape} says {expected}")
            self._place(outs[i], lay, desc.shape)
        if any(v in self.updates for v in inputs):
            self.updates.update(outs)
        return tuple(outs)

    def plan(self, op: str, inputs: list[int], attrs: dict[str, Any],
             current: list[Layout | None]) -> tuple[Any, ShardPlan, tuple[TensorDesc, ...]]:
        """The rule, layouts and global output descs of ``op`` under its strategy (or the default)."""
        descs = [TensorDesc(self.global_shape(v), self.tracer.graph.values[v].dtype) for v in inputs]
        whole = infer_node_outputs(op, descs, attrs)
        shapes, out_shapes = [d.shape for d in descs], [d.shape for d in whole]
        given, out_strategy = _take_strategies(op)
        strategy = self.strategy_for(op, given, inputs, shapes, out_shapes, attrs)
        rule = rule_for(op)
        if strategy is None and rule.takes_strategy and _inside_sharded_composite(op):
            strategy = _following(current, descs)
        plan = self._update_plan(op, inputs, current, whole, attrs) if strategy is None else None
        if plan is None:
            try:
                plan = plan_op(rule, self.n, strategy, shapes, out_shapes, attrs, current, op, out_strategy)
            except StrategyError:
                if not _inside_sharded_composite(op):
                    raise
                plan = rule.plan(self.n, None, shapes, out_shapes, attrs, current, op)
        return rule, plan, whole

    def strategy_for(self, op: str, given: Strategy | None, inputs: list[int], shapes: list[Shape],
                     out_shapes: list[Shape], attrs: dict[str, Any]) -> Strategy | None:
        """The strategy ``op`` runs with: the script's (``Primitive.shard``), else None (the semi-auto default);
        AUTO_PARALLEL's passes (``auto_strategy``) record it or give the one their search chose."""
        return given

    def _update_plan(self, op: str, inputs: list[int], current: list[Layout | None], whole: list[TensorDesc],
                     attrs: dict[str, Any]) -> ShardPlan | None:
        """An elementwise op on a Parameter's gradient (the loss scale's unscaling, clipping, the optimizer's
        arithmetic) without a strategy keeps the gradient's layout, as MindSpore gives the ops between a
        gradient (or a Parameter, an optimizer state) and its update the Parameter's layout; not the batch default, which would
        gather and re-slice every gradient of a model-parallel weight."""
        consts = self.tracer.graph.constants
        grads = [i for i, v in enumerate(inputs) if current[i] is not None and
                 (v in self.updates or v in consts and consts[v].is_parameter)
                 and self.global_shape(v) == whole[0].shape]      # not Select's overflow flag (a skippable update)
        if not grads or REGISTRY.get(op) is None or REGISTRY[op].elementwise is None:
            return None
        lay = current[grads[0]]
        shape = self.global_shape(inputs[grads[0]])
        if any(d.shape != shape for d in whole):
            return None
        ins = [lay if self.global_shape(v) == shape else Layout.replicated(self.n, len(self.global_shape(v)))
               for v in inputs]
        return ShardPlan(ins, [lay] * len(whole), dict(attrs))

    def _cast_parameter(self, tracer: Any, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        """A Parameter's Cast before its first consumer (MindFormers' Linear casts its weight to the compute
        dtype): recorded on the whole Parameter and left unplaced, so that the consumer's layout slices the
        Parameter itself, and the Cast with it, rather than a whole weight on every rank."""
        self.param_scopes.setdefault(inputs[0], list(tracer.scopes))
        out = tracer.record_node("Cast", inputs, attrs)
        self.param_casts[out[0]] = inputs[0]
        return out

    def _relayout(self, vid: int, current: Layout | None, want: Layout) -> int:
        graph = self.tracer.graph
        if current is not None and not current.same(want):     # a folded zeros_like: at the local shape, no Slice
            out = self.tracer.refold(vid, want.local_shape(self.global_shape(vid)))
            if out is not None:
                self._place(out, want, self.global_shape(vid))
                return out
        if current is None:                 # a Parameter's first consumer: slice it in place
            current = self._place_parameter(vid, want)
        if current.same(want):
            return vid
        if isinstance(current, OptShardLayout):         # optimizer parallel's pieces: gathered first
            vid, current = self.opt.gather(self, vid, current), current.base
            if current.same(want):
                return vid
        key = (id(graph), vid, want)
        if self.pipeline is None and key in self.moved:
            return self.moved[key]
        out = move(self, vid, current, want)
        self._place(out, want, self.global_shape(vid))
        self.moved[key] = out
        return out


def differentiate_sharded(tracer: Any, outputs: list[int], wrt: list[int], senses: list[int | None]) -> list[int]:
    """``autodiff.differentiate`` of a sharded capture (see the module docstring); the plain one otherwise."""
    sp: ShardingPass | None = getattr(tracer, "sharding", None)
    if sp is None or tracer.parent is not None:
        return differentiate(tracer, outputs, wrt, senses)
    sp.tracer = tracer
    graph = tracer.graph
    if sp.opt is not None:
        sp.opt.forward_over = True
    with sp.local():
        if sp.pipeline is not None:         # per micro-batch, between Send/Receive pairs (pipeline.py)
            return sp.pipeline.differentiate(sp, tracer, outputs, wrt, senses,
                                             lambda out, sens: _scaled_sens(sp, tracer, out, sens),
                                             lambda w, g, lay: _mirror(sp, tracer, w, g, lay))
        scaled = [_scaled_sens(sp, tracer, out, sens) for out, sens in zip(outputs, senses)]
        grads = differentiate(tracer, outputs, wrt, scaled)
        result = []
        for w, g in zip(wrt, grads):
            lay = sp.layouts.get(w)
            const = graph.constants.get(w)
            if lay is not None:
                if const is not None and const.is_parameter:
                    g = _mirror(sp, tracer, w, g, lay)
                    sp.updates.add(g)
                sp._place(g, lay, sp.global_shape(w))
            result.append(g)
    return result


def _scaled_sens(sp: ShardingPass, tracer: Any, out: int, sens: int | None) -> int | None:
    """The sens of output ``out``: this rank's slice of it, divided by the ranks holding the same ``out``."""
    copies = sp.replicas(out)
    desc = tracer.graph.values[out]
    lay = sp.layout(out)
    if sens is not None and lay is not None and not sp.layout(sens).same(lay):
        sens = move(sp, sens, sp.layout(sens), lay)         # a whole sens: this rank's slice of it
    if copies > 1:
        if sens is None:
            sens = tracer.literal(np.ones(desc.shape, np.dtype(desc.dtype)), desc.dtype)
        share = tracer.literal(np.asarray(1.0 / copies, np.dtype(desc.dtype)), desc.dtype)
        sens = tracer.record_node("Mul", [sens, share], {})[0]
    return sens


# MindSpore's name of the scope of a Parameter's gradient AllReduce (its mirror operator's backward)
MIRROR_SCOPE = "Grad__MirrorOperator"


def _mirror(sp: ShardingPass, tracer: Any, param: int, grad: int, layout: Layout) -> int:
    """The gradient of ``param`` summed over the ranks holding the same slice, named as MindSpore names it:
    ``Gradients/<its first consumer's scope>/Grad__MirrorOperator/AllReduce-opN``."""
    saved = tracer.scopes
    tracer.scopes = [GRADIENTS_SCOPE, *sp.param_scopes.get(param, saved), MIRROR_SCOPE]
    try:
        return all_reduce(sp, grad, layout.replica_group(sp.rank))
    finally:
        tracer.scopes = saved
