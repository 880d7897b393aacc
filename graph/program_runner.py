"""Running a graph with device loops and conditionals: its parts (``graph.program``) in order, loops repeated
and branches picked on the device (a tensor ``if``: LabelSwitch to the taken branch, see ``_branch``).

Each part is an ordinary graph, prepared as any (compile or graph cache, kernels, streams, memory plan).
Between parts, values stay on the device: the program keeps one buffer per value a later part reads
(per loop: one per carried variable and one for the predicate, reused by every iteration), and a part
runs bound to them (``graph.part_runner``: its kernels read its inputs where they live and write its
outputs in place; a loop body's carried outputs are D2D copies after it); no value goes to the host
until the graph's outputs are read. A loop, as Ascend runs it:

    carried <- initial values
    cond part -> predicate
    LabelSwitch(predicate)         the device reads it: body, or past the loop
    body part -> carried           (its outputs written over the carried buffers)
    LabelGoto                      back to the cond part

At O2 a loop's iteration (body, goto, next cond) is one list of steps built once per loop entry and
handed to the switch, which enqueues it when the predicate holds: no per-iteration host cost, as on the
chip, where the loop was sunk with the graph. At O0/O1 the host issues each part's kernels as it does
for any graph, after the switch. Either way the host's clock never waits for the predicate (see
``Runtime.label_switch``). A loop that exceeds MAX_LOOP_TRIPS trips is a :class:`LoopTripLimitError`
naming its line. The parts' fences (O2, more than one stream: every stream waits for the first before a
part, the first for every stream after it) order the parts and the copies on the first stream.

A graph with a loop's backward (``graph.while_grad``) gives the forward loop a stack: each taken trip first
copies its predicate and carried values into the trip's slot; the backward loop switches on those
predicates in reverse and runs its body on each slot. Parameter updates (always outside loops) are copied
into the parameters' buffers after the last part, as a plain step's are.
"""
from __future__ import annotations

import functools
import weakref

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, LoopTripLimitError
from ascendemu.hal import steps as hal_steps
from ascendemu.hal.runtime import Runtime
from ascendemu.kernels.signature import TensorDesc

from .ir import Graph, IfNode, WhileNode
from .part_runner import PartRunner
from .prepare import GraphPreparer
from .program import Branch, Loop, Program, merge_repeated, split
from .transfer import Transfers
from .while_grad import LoopStack, WhileGradNode, saved_loops

__all__ = ["MAX_LOOP_TRIPS", "ProgramRunner"]

# Trips a device loop may make before the emulator stops it. MindSpore has no such limit (a runaway loop
# on the chip runs until the host's sync times out); an emulated trip costs host time, so a loop that
# never ends must end here, with an error naming its line, instead of hanging the run.
MAX_LOOP_TRIPS = 100_000
PREDICATE = TensorDesc((), "bool")


class ProgramRunner:
    """Runs graphs with While nodes on the device (one step: inputs up, the program, outputs down)."""

    def __init__(self, rt: Runtime, preparer: GraphPreparer, transfers: Transfers):
        self.rt, self.preparer, self.transfers = rt, preparer, transfers
        self._programs: dict[int, tuple[weakref.ref, Program]] = {}    # id(graph) -> its split, once
        self.parts = PartRunner(rt, preparer)   # loop-free parts, bound to the program's buffers
        self.stacks: list[LoopStack] = []   # the current step's loop stacks (graph.while_grad)

    @property
    def kernels(self) -> int:
        """Kernels of the parts run by the current step."""
        return self.parts.kernels

    @kernels.setter
    def kernels(self, count: int) -> None:
        self.parts.kernels = count

    def program(self, graph: Graph) -> Program:
        """``graph``'s parts, split once per captured graph (the phase cache runs one graph again), after
        merging a loop it captured twice (``merge_repeated``: the program's ``graph`` then differs)."""
        known = self._programs.get(id(graph))
        if known is not None and known[0]() is graph:
            return known[1]
        program = split(merge_repeated(graph))
        self._programs = {k: v for k, v in self._programs.items() if v[0]() is not None}
        self._programs[id(graph)] = (weakref.ref(graph), program)
        return program

    def run(self, graph: Graph, inputs: list[np.ndarray], jit_level: str) -> list[np.ndarray]:
        """One step of ``graph`` (it has loops) on ``inputs``: its outputs, downloaded."""
        loop = next((n for n in graph.nodes if isinstance(n, WhileNode)), None)
        if loop is not None:
            self.preparer.mode.device_loop(graph.name, loop.where)
        if len(inputs) != len(graph.inputs):
            raise FeatureNotSupportedError(f"graph {graph.name!r} takes {len(graph.inputs)} inputs, got {len(inputs)}")
        self.kernels = 0
        self.stacks = []
        rt, owned = self.rt, []
        try:
            ins = [self.transfers.upload(a, graph.values[v]) for v, a in zip(graph.inputs, inputs)]
            owned += ins
            outs = [self._alloc(graph.values[v], owned) for v in graph.outputs]
            merged = self.program(graph).graph
            env = self._run_graph(merged, ins, outs, jit_level, owned)
            updated = self._apply_updates(merged, env, owned)
            rt.synchronize_stream(self.parts.stream())
            for source, ptr, desc in updated:
                source.device_updated(functools.partial(self.transfers.download, ptr, desc))
            return [self.transfers.download(ptr, graph.values[v]).reshape(graph.values[v].shape)
                    for v, ptr in zip(graph.outputs, outs)]
        finally:
            for ptr in owned:
                rt.free(ptr)

    # -- parts -------------------------------------------------------------------------------------
    def _run_graph(self, g: Graph, ins: list[int], outs: list[int], level: str,
                   owned: list[int] | None = None) -> dict[int, int]:
        """Run ``g`` once: it reads the buffers ``ins`` (one per input) and writes its outputs into ``outs``.
        Its program's buffers go to ``owned`` (the step frees them once it has synchronised); a nested
        program (a loop body with loops) frees its own once its work is done. Returns the buffers of the
        program's values (value id -> device address) while ``owned`` holds them."""
        if not g.has_loops():
            steps = self.parts.run(g, ins, outs, level)
            if steps:
                self.rt.launch_graph(steps)
            return {}
        if owned is None:
            local: list[int] = []
            try:
                self._run_graph(g, ins, outs, level, local)
            finally:
                self.rt.synchronize_stream(self.parts.stream())
                for ptr in local:
                    self.rt.free(ptr)
            return {}
        program = self.program(g)
        g = program.graph
        env = dict(zip(g.inputs, ins))
        saves, stacks = saved_loops(g), {}
        for part in program.parts:
            if isinstance(part, Loop) and isinstance(part.node, WhileGradNode):
                self._grad_loop(g, part.node, env, owned, level, stacks.pop(part.node.forward))
                continue
            if isinstance(part, Loop):
                if part.node.id in saves:
                    stacks[part.node.id] = self._stack(g, part.node, owned)
                self._loop(g, part.node, env, owned, level, stacks.get(part.node.id))
                continue
            if isinstance(part, Branch):
                self._branch(g, part.node, env, owned, level)
                continue
            ptrs = [self._alloc(g.values[v], owned) for v in part.outputs]
            steps = self.parts.run(part.graph, [env[v] for v in part.inputs], ptrs, level)
            if steps:
                self.rt.launch_graph(steps)
            env.update(zip(part.outputs, ptrs))
        for v, dst in zip(g.outputs, outs):
            self.parts.copy(dst, self._value(g, v, env, owned), g.values[v].nbytes)
        return env

    def _loop(self, g: Graph, node: WhileNode, env: dict[int, int], owned: list[int], level: str,
              stack: LoopStack | None = None) -> None:
        """Run loop ``node`` of ``g`` (see the module docstring); its outputs are the carried buffers. With a
        ``stack`` (a backward loop pops it, graph.while_grad) each trip first pushes its predicate and
        starting carried values."""
        rt, s0 = self.rt, self.parts.stream()
        ins = [self._value(g, v, env, owned) for v in node.inputs]
        n, nc = node.carried, node.carried + node.cond_free
        carried = [self._alloc(g.values[v], owned) for v in node.inputs[:n]]
        for dst, src, v in zip(carried, ins, node.inputs):
            self.parts.copy(dst, src, g.values[v].nbytes, s0)
        pred = self._alloc(PREDICATE, owned)
        cond_in, body_in = carried + ins[n:nc], carried + ins[nc:]
        if level == "O2" and not node.cond.has_loops() and not node.body.has_loops():
            # an iteration is one list of sunk steps, built once per loop entry
            k0 = self.kernels
            cond = self.parts.run(node.cond, cond_in, [pred], level)
            k1 = self.kernels
            again = self.parts.run(node.body, body_in, carried, level) + [hal_steps.LabelGoto(s0)] + cond
            k2 = self.kernels
            rt.launch_graph(cond)
            trips = 0
            while rt.label_switch(pred, s0, self._push(stack, trips, pred, carried) + again
                                  if trips < MAX_LOOP_TRIPS else ()):
                trips += 1
                self._guard(node, trips)
            self.kernels = k0 + (k1 - k0) * (trips + 1) + (k2 - k1) * trips
        else:                       # O0/O1 (or parts with loops of their own): the host issues each part
            self._run_graph(node.cond, cond_in, [pred], level)
            trips = 0
            while rt.label_switch(pred, s0):
                trips += 1
                self._guard(node, trips)
                for step in self._push(stack, trips - 1, pred, carried):
                    step.issue(rt)
                self._run_graph(node.body, body_in, carried, level)
                rt.label_goto(s0)
                self._run_graph(node.cond, cond_in, [pred], level)
        if stack is not None:
            stack.trips = trips
        env.update(zip(node.outputs, carried))

    # -- gradients through loops (graph.while_grad) ---------------------------------------------------
    def _stack(self, g: Graph, node: WhileNode, owned: list[int]) -> LoopStack:
        """An empty stack for the forward loop ``node``, whose backward pops it later in this run."""
        sentinel = self.transfers.upload(np.zeros((), np.bool_), PREDICATE)
        owned.append(sentinel)
        stack = LoopStack(self.rt, [g.values[v] for v in node.inputs[:node.carried]], sentinel, owned)
        self.stacks.append(stack)
        return stack

    def _push(self, stack: LoopStack | None, trip: int, pred: int, carried: list[int]) -> list[hal_steps.Step]:
        if stack is None:
            return []
        s0 = self.parts.stream()
        return [self.parts.copy_step(dst, src, nbytes, s0) for dst, src, nbytes in stack.save(trip, pred, carried)]

    def _grad_loop(self, g: Graph, node: WhileGradNode, env: dict[int, int], owned: list[int], level: str,
                   stack: LoopStack) -> None:
        """Run the backward loop ``node`` of ``g``: trip j switches on the predicate popped off ``stack``
        (the forward's trip trips-1-j, or the False sentinel) and runs the backward body on that trip's saved
        carried values; its outputs are the carried (cotangents, gradient sums) buffers."""
        rt, s0 = self.rt, self.parts.stream()
        ins = [self._value(g, v, env, owned) for v in node.inputs]
        carried = [self._alloc(g.values[v], owned) for v in node.inputs[:node.carried]]
        for dst, src, v in zip(carried, ins, node.inputs):
            self.parts.copy(dst, src, g.values[v].nbytes, s0)
        free = ins[node.carried:]
        sunk = level == "O2" and not node.body.has_loops()
        for j in range(stack.trips + 1):
            pred, saved = stack.pop(j)
            if sunk:
                steps = [] if saved is None else (self.parts.run(node.body, carried + saved + free, carried, level)
                                                  + [hal_steps.LabelGoto(s0)])
                rt.label_switch(pred, s0, steps)
            elif rt.label_switch(pred, s0):
                self._run_graph(node.body, carried + saved + free, carried, level)
                rt.label_goto(s0)
        env.update(zip(node.outputs, carried))

    def _apply_updates(self, g: Graph, env: dict[int, int], owned: list[int]) -> list[tuple]:
        """Copy each Parameter update of ``g`` (outside every loop: a loop's graphs cannot assign) into the
        parameter's device buffer, after the program; (parameter, buffer, desc) of each, to tell it once the
        stream has synchronised."""
        updated = []
        for param, value in g.updates.items():
            const, desc = g.constants[param], g.values[param]
            dst = self.preparer.state_buffer(const.source, desc)
            self.parts.copy(dst, self._value(g, value, env, owned), desc.nbytes)
            updated.append((const.source, dst, desc))
        return updated

    def _branch(self, g: Graph, node: IfNode, env: dict[int, int], owned: list[int], level: str) -> None:
        """Run the tensor ``if`` ``node`` of ``g`` as Ascend lays it out on the stream:

            LabelSwitch(predicate)   the device reads it: the then branch, or fall through
              then part -> outputs, LabelGoto   (jump to the join, past the else part)
            else part -> outputs
            join

        Both branches write the node's output buffers; only the taken one's kernels run. O2: both branches'
        sunk steps are built (prepared once, as the graph's compile would), the switch enqueues the then
        branch's when the predicate holds, else the else branch's are launched in its place (the branches
        were sunk with the graph on the chip). O0/O1: the host issues the taken branch kernel by kernel."""
        rt, s0 = self.rt, self.parts.stream()
        pred = self._value(g, node.inputs[0], env, owned)
        ins = [self._value(g, v, env, owned) for v in node.inputs[1:]]
        then_in, other_in = ins[:node.then_free], ins[node.then_free:]
        outs = [self._alloc(g.values[v], owned) for v in node.outputs]
        if level == "O2" and not node.then.has_loops() and not node.other.has_loops():
            k0 = self.kernels
            then_steps = self.parts.run(node.then, then_in, outs, level) + [hal_steps.LabelGoto(s0)]
            k1 = self.kernels
            other_steps = self.parts.run(node.other, other_in, outs, level)
            taken = rt.label_switch(pred, s0, then_steps)
            if not taken and other_steps:
                rt.launch_graph(other_steps)
            self.kernels = k0 + (k1 - k0 if taken else self.kernels - k1)
        elif rt.label_switch(pred, s0):
            self._run_graph(node.then, then_in, outs, level)
            rt.label_goto(s0)
        else:
            self._run_graph(node.other, other_in, outs, level)
        env.update(zip(node.outputs, outs))

    @staticmethod
    def _guard(node: WhileNode, trips: int) -> None:
        if trips > MAX_LOOP_TRIPS:
            raise LoopTripLimitError(
                f"the `while` loop on a tensor condition at {node.where} is still running after {MAX_LOOP_TRIPS} "
                f"trips (graph.program_runner.MAX_LOOP_TRIPS): check that its condition becomes false, or bound it "
                f"(`while i < n and ...`)")

    # -- buffers and copies --------------------------------------------------------------------------
    def _value(self, g: Graph, v: int, env: dict[int, int], owned: list[int]) -> int:
        """The device buffer of value ``v`` of ``g``: computed by a part, or a constant uploaded now."""
        ptr = env.get(v)
        if ptr is None and g.constants[v].source is not None:   # a Parameter: its device buffer
            ptr = env[v] = self.preparer.state_buffer(g.constants[v].source, g.values[v])
        elif ptr is None:
            ptr = env[v] = self.transfers.upload(np.asarray(g.constants[v].data), g.values[v])
            owned.append(ptr)
        return ptr

    def _alloc(self, desc: TensorDesc, owned: list[int]) -> int:
        ptr = self.rt.malloc(max(desc.nbytes, 1))
        owned.append(ptr)
        return ptr
