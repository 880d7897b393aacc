"""Gradients through device loops: the backward of a ``while`` on a tensor condition is a second device loop.

MindSpore differentiates a ``while`` whose trip count the data decides; its backend keeps each trip's
values on a stack and runs the backward body in reverse. Here, as there, nothing is unrolled:

- **Forward, saving.** A loop that a :class:`WhileGradNode` differentiates pushes, at the start of each
  trip (after its LabelSwitch was taken), the predicate it read and the carried values the body is about
  to read onto a :class:`LoopStack` of device buffers: D2D ``MemcpyAsync`` copies on the loop's stream,
  priced as DMA copies (where Ascend's backend runs StackPush tasks; no task kind of their own here, so
  traces, ``.aetrace`` and replay need nothing new). The trip count is the stack's depth.
- **Backward.** :func:`body_vjp` derives, with ``graph.autodiff``, one backward trip from the body graph:
  it recomputes the body's forward from the saved carried values and returns the carried values'
  cotangents for the trip before, plus the free values' gradients added to their running sums. The
  :class:`WhileGradNode` runs it as a loop of its own whose carried values are (cotangents, sums): per trip
  a LabelSwitch reads the next predicate popped off the stack (the bottom is a False sentinel), the
  backward body reads that trip's saved values straight from their stack slot, and LabelGoto goes back.
  Zero trips: the switch reads the sentinel at once, the cotangents pass straight through, sums stay zero.

Free values are the tensors from outside the loop the body reads, Parameters included (a loop's graphs
read a Parameter as a free value of the capture around it), so weight gradients are free-value sums.
The stack is device memory: ``STACK_CHUNK_TRIPS`` trips are reserved at a time, and every trip counts
against ``program_runner.MAX_LOOP_TRIPS``; the run summary says what the stacks reserved.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from ascendemu.errors import FeatureNotSupportedError
from ascendemu.hal.runtime import Runtime
from ascendemu.kernels.signature import TensorDesc

from .capture import Tracer
from .ir import Graph, WhileNode

__all__ = ["STACK_ALIGN", "STACK_CHUNK_TRIPS", "LoopStack", "WhileGradNode", "body_vjp", "saved_loops",
           "while_backward"]

# Trips' worth of stack slots reserved by one device allocation: a loop of a few trips costs one malloc,
# a long one a malloc every this many trips (Ascend reserves its stack up front; the depth is unknown here).
STACK_CHUNK_TRIPS = 64
# Each saved value starts on this boundary inside a slot (DMA-friendly, as the pool's own alignment is).
STACK_ALIGN = 32
# The autodiff entry point, passed in by graph.autodiff (which imports this module, not the other way)
Differentiate = Callable[[Tracer, Sequence[int], Sequence[int], Sequence[int | None]], list]


@dataclass
class WhileGradNode(WhileNode):
    """The backward loop of the forward :class:`~.ir.WhileNode` whose node id is ``forward``.

    ``inputs``: the carried cotangents' initial values (the loop outputs' gradients, for the float carried
    values ``grad_carried``), the gradient sums' initial zeros (for the body's free values ``grad_free``),
    then every free value of the forward body. ``body`` is :func:`body_vjp`'s graph, taking (carried
    cotangents, sums, one trip's saved carried values, free values) and returning (cotangents, sums).
    ``outputs``: the gradients of the forward loop's initial carried values, then of its free values.
    ``cond`` is the forward's cond graph (it decided the trips this loop replays)."""

    forward: int = -1
    grad_carried: tuple[int, ...] = ()
    grad_free: tuple[int, ...] = ()


def saved_loops(graph: Graph) -> set[int]:
    """Node ids of ``graph``'s forward loops that a backward loop of the same graph pops: they save."""
    return {n.forward for n in graph.nodes if isinstance(n, WhileGradNode)}


def while_backward(tracer: Tracer, node: WhileNode, douts: Sequence[int | None], live: Sequence[bool],
                   differentiate: Differentiate, differentiable: Sequence[str]) -> tuple[int | None, ...]:
    """The gradients of ``node``'s inputs given its outputs' (``douts``): appends a WhileGradNode to the
    graph being captured. ``live[k]``: input k depends on a differentiated value; ``differentiate`` and
    ``differentiable`` (the dtypes that carry gradients) are graph.autodiff's."""
    if isinstance(node, WhileGradNode):
        raise FeatureNotSupportedError(
            f"cannot differentiate the backward of the `while` loop at {node.where} again (a second-order "
            f"gradient through a device loop); take higher-order gradients in PYNATIVE_MODE with a Python loop")
    graph, body = tracer.graph, node.body
    n, nc = node.carried, node.carried + node.cond_free
    grad_carried = tuple(j for j in range(n) if graph.values[node.inputs[j]].dtype in differentiable)
    free = node.inputs[nc:]
    grad_free = tuple(i for i, v in enumerate(free) if live[nc + i] and graph.values[v].dtype in differentiable)
    if not grad_carried:
        return (None,) * len(node.inputs)
    vjp = body_vjp(body, grad_carried, grad_free, differentiate, node.full_name)
    zero = _zeros(tracer)
    d_init = [douts[j] if douts[j] is not None else zero(graph.values[node.inputs[j]]) for j in grad_carried]
    sums = [zero(graph.values[free[i]]) for i in grad_free]
    inputs = tuple(d_init) + tuple(sums) + tuple(free)
    tracer.op_count += 1
    name = "/".join(tracer.scopes) + f"/WhileGrad-op{tracer.op_count}"
    outs = tuple(graph.new_value(graph.values[v]) for v in d_init + sums)
    grad = WhileGradNode(graph.new_node_id(), "WhileGrad", {}, inputs, outs, name, (name,), cond=node.cond,
                         body=vjp, carried=len(d_init) + len(sums), cond_free=0, where=node.where,
                         forward=node.id, grad_carried=grad_carried, grad_free=grad_free)
    graph.nodes.append(grad)
    graph._hash = None
    result: list[int | None] = [None] * len(node.inputs)
    for k, j in enumerate(grad_carried):
        result[j] = outs[k] if live[j] else None
    for k, i in enumerate(grad_free):
        result[nc + i] = outs[len(grad_carried) + k]
    return tuple(result)


def body_vjp(body: Graph, grad_carried: Sequence[int], grad_free: Sequence[int], differentiate: Differentiate,
             scope: str) -> Graph:
    """One backward trip of a loop ``body`` (inputs: carried..., free...; outputs: the next carried).

    The graph's inputs: the cotangents of the next carried values ``grad_carried`` (float ones), the running
    gradient sums of the free values ``grad_free``, the trip's saved carried values, the free values. It
    recomputes the body from the saved values, differentiates it (``graph.autodiff``) and returns the
    cotangents of this trip's carried values and each sum plus this trip's gradient of its free value."""
    tracer = Tracer(f"{body.name}/grad")
    tracer.scopes = scope.split("/") + ["grad_body"]
    g = tracer.graph
    local: dict[int, int] = {}
    for v in body.inputs:
        local[v] = g.add_input(body.values[v])
    for v, c in body.constants.items():
        local[v] = g.new_value(body.values[v])
        g.constants[local[v]] = c
    for node in body.nodes:
        outs = tuple(g.new_value(body.values[v]) for v in node.outputs)
        local.update(zip(node.outputs, outs))
        g.nodes.append(replace(node, id=g.new_node_id(), attrs=dict(node.attrs),
                               inputs=tuple(local[v] for v in node.inputs), outputs=outs))
    tracer.op_count = len(body.nodes)
    n = len(body.outputs)
    saved, frees = g.inputs[:n], g.inputs[n:]
    dcs = [g.add_input(body.values[body.inputs[j]]) for j in grad_carried]
    sums = [g.add_input(body.values[body.inputs[n + i]]) for i in grad_free]
    outputs = [local[body.outputs[j]] for j in grad_carried]
    wrt = [saved[j] for j in grad_carried] + [frees[i] for i in grad_free]
    grads = differentiate(tracer, outputs, wrt, dcs)
    new_sums = [tracer.apply("Add", [s, d], {})[0] for s, d in zip(sums, grads[len(grad_carried):])]
    g.inputs = dcs + sums + saved + frees
    g.outputs = list(grads[:len(grad_carried)]) + new_sums
    g._hash = None
    g.validate()
    return g


def _zeros(tracer: Tracer) -> Callable[[TensorDesc], int]:
    def zero(desc: TensorDesc) -> int:
        scalar = tracer.literal(np.zeros((), desc.dtype), desc.dtype)
        return scalar if desc.shape == () else tracer.apply("BroadcastTo", [scalar], {"shape": desc.shape})[0]
    return zero


class LoopStack:
    """One forward loop's per-trip saves on the device: slot k holds trip k's predicate and the carried
    values it started with (each at a STACK_ALIGN boundary); slots live in chunks of STACK_CHUNK_TRIPS,
    allocated when the loop reaches them (``owned`` frees them once the step has synchronised; at O2 a
    trip's copies are built before its switch decides, so a loop ending on a chunk boundary reserves one
    chunk more). Below slot 0 is a False sentinel: the predicate that ends the backward loop."""

    def __init__(self, rt: Runtime, descs: Sequence[TensorDesc], sentinel: int, owned: list[int]):
        self.rt, self.sentinel, self.owned = rt, sentinel, owned
        self.offsets, at = [], STACK_ALIGN          # the predicate's byte at offset 0
        for d in descs:
            self.offsets.append(at)
            at += -(-max(d.nbytes, 1) // STACK_ALIGN) * STACK_ALIGN
        self.nbytes = [d.nbytes for d in descs]
        self.slot_bytes = at
        self.chunks: list[int] = []
        self.trips = 0

    @property
    def reserved(self) -> int:
        """Bytes of device memory the stack holds."""
        return len(self.chunks) * STACK_CHUNK_TRIPS * self.slot_bytes

    def slot(self, k: int) -> int:
        return self.chunks[k // STACK_CHUNK_TRIPS] + (k % STACK_CHUNK_TRIPS) * self.slot_bytes

    def save(self, trip: int, pred: int, carried: Sequence[int]) -> list[tuple[int, int, int]]:
        """The copies (dst, src, bytes) that save trip ``trip`` (its predicate and starting carried values), in
        issue order; the runner sets ``trips`` once the loop has ended."""
        while trip >= len(self.chunks) * STACK_CHUNK_TRIPS:
            ptr = self.rt.malloc(STACK_CHUNK_TRIPS * self.slot_bytes)
            self.owned.append(ptr)
            self.chunks.append(ptr)
        base = self.slot(trip)
        return [(base, pred, 1)] + [(base + off, src, nb) for off, src, nb in zip(self.offsets, carried, self.nbytes)
                                    if nb]

    def pop(self, j: int) -> tuple[int, list[int] | None]:
        """Backward trip ``j`` (0 first): the predicate it switches on and the saved carried values it reads
        (trip trips-1-j's); past the last trip, the sentinel and None."""
        k = self.trips - 1 - j
        if k < 0:
            return self.sentinel, None
        base = self.slot(k)
        return base, [base + off for off in self.offsets]
