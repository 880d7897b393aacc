"""Running prepared graphs: step by step (:class:`StepRunner`) and in dataset sink mode (:class:`SinkRunner`).

O0/O1 are single-op executors: every kernel is one ``launch_kernel`` that pays the modelled host
launch cost, and node outputs come from the device's BestFit pool in host order and go back to it
when their reference count drops (stream order makes that safe, as in MindSpore's pool). O2 sinks
the whole graph: one ``launch_graph`` carries every kernel, record and wait of every stream, with no
per-op host cost, and node outputs live at static offsets in one workspace planned at compile time.

Dataset sink mode (MindSpore's ``Model.train(dataset_sink_mode=True)``) goes one step further: an O2
step graph runs ``sink_size`` times in one launch, fed from a device data queue. The batches are copied
host to device into the queue's slots on a stream of their own, and each iteration starts with GetNext,
a device copy from its slot into the graph's input buffers; parameter updates are copied in place
between iterations, so no step needs the host until the sink ends.
"""
from __future__ import annotations

import functools
import time

import numpy as np

from ascendemu.device.cost import GetNext, LoopCounterAssignAdd, StreamActive, StreamSwitch
from ascendemu.errors import InvalidParamError
from ascendemu.hal import steps as hal_steps
from ascendemu.hal.api import API_CALL_COST_S
from ascendemu.hal.runtime import MEMCPY_DEVICE_TO_DEVICE, MEMCPY_HOST_TO_DEVICE, Runtime

from .bindings import DataQueue, DynamicBinding, Prepared
from .ir import Graph
from .prepare import GraphPreparer
from .program_runner import ProgramRunner
from .summary import RunLog, StepRecord
from .transfer import Transfers, contiguous

__all__ = ["QUEUE_BYTES", "QUEUE_DEPTH", "SinkRunner", "StepRunner"]

# MindSpore's device data queue holds at most 100 batches and 2 GB (mindspore.data_sink); a longer sink
# reuses the slots, each push waiting until GetNext has taken the batch before it out of its slot
QUEUE_DEPTH = 100
QUEUE_BYTES = 2 << 30


def update_copies(p: Prepared, buffers: dict[int, int]) -> list[tuple[int, int, int]]:
    """(parameter buffer, updated value's address, bytes) of each update that must be copied."""
    c, copies = p.compiled, []
    for param, value in c.updates.items():
        root = c.root(param)
        dst, src = p.constants[root], p.address(value, buffers)
        if dst != src and c.values[root].nbytes:
            copies.append((dst, src, c.values[root].nbytes))
    return copies


class _GraphRunner:
    """What both runners share: the graph's outputs downloaded, its parameters told of their updates."""

    def __init__(self, rt: Runtime, preparer: GraphPreparer, transfers: Transfers, log: RunLog):
        self.rt, self.preparer, self.transfers, self.log = rt, preparer, transfers, log

    def _outputs(self, p: Prepared, buffers: dict[int, int]) -> list[np.ndarray]:
        """The graph's outputs, downloaded (a constant output is its data)."""
        c, results = p.compiled, []
        for v in c.outputs:
            r, desc = c.root(v), c.values[v]
            if r in c.constants and r not in c.updates:
                results.append(np.array(c.constant_refs[r].data).reshape(desc.shape))
            else:
                whole = desc if v in c.view_offsets else c.values[r]        # a part of a block: its own bytes
                results.append(self.transfers.download(p.address(v, buffers), whole).reshape(desc.shape))
        return results

    def _device_updated(self, p: Prepared) -> None:
        """Tell each updated parameter that its newest values are on the device now."""
        c = p.compiled
        for param in c.updates:
            root = c.root(param)
            source = c.constant_refs[root].source
            if source is not None:
                source.device_updated(functools.partial(self.transfers.download, p.constants[root], c.values[root]))


class StepRunner(_GraphRunner):
    """One step of a graph: inputs uploaded, the schedule issued (O0/O1) or sunk (O2), outputs downloaded,
    parameter updates copied into the parameters' buffers."""

    def __init__(self, rt: Runtime, preparer: GraphPreparer, transfers: Transfers, log: RunLog):
        super().__init__(rt, preparer, transfers, log)
        self.programs = ProgramRunner(rt, preparer, transfers)     # graphs with device loops

    def run(self, graph: Graph, inputs: list[np.ndarray], jit_level: str) -> list[np.ndarray]:
        wall0 = time.perf_counter()
        if graph.has_loops():
            host0 = self.rt.host_time()
            self.log.begin(graph.name, jit_level)
            results = self.programs.run(graph, inputs, jit_level)
            kernels = self.programs.kernels
            stacks = self.programs.stacks
            if stacks:
                self.log.record_loop_stacks(graph.name, sum(st.trips for st in stacks),
                                            sum(st.reserved for st in stacks))
        else:
            prepared = self.preparer.prepare(graph, jit_level)
            self.preparer.bind_constants(prepared, graph)
            host0 = self.rt.host_time()
            self.log.begin(graph.name, jit_level)
            results = self._execute(prepared, inputs)
            kernels = len(prepared.kernels)
        self.log.end(graph.name, jit_level)
        self.log.record(StepRecord(graph.name, jit_level, kernels, time.perf_counter() - wall0,
                                   self.rt.device_time() - host0, self.rt.host_time() - host0))
        return results

    def _execute(self, p: Prepared, inputs: list[np.ndarray]) -> list[np.ndarray]:
        rt, c, io = self.rt, p.compiled, self.transfers
        if len(inputs) != len(c.inputs):
            raise InvalidParamError(f"graph {c.name!r} takes {len(c.inputs)} inputs, got {len(inputs)}")
        if c.memory == "static":
            for v, a in zip(c.inputs, inputs):
                io.upload(a, c.values[v], p.inputs[v])
            rt.launch_graph(p.lowered())
            buffers = p.inputs
        else:
            buffers = {v: io.upload(a, c.values[v]) for v, a in zip(c.inputs, inputs)}
            binding = DynamicBinding(rt, p, buffers)
            for step in c.schedule:
                step.lower(binding).issue(rt)
                step.retire(binding)
        for s in p.streams:
            rt.synchronize_stream(s)
        results = self._outputs(p, buffers)
        self._apply_updates(p, buffers)
        if c.memory != "static":
            for ptr in buffers.values():
                rt.free(ptr)
        return results

    def _apply_updates(self, p: Prepared, buffers: dict[int, int]) -> None:
        """Write each updated value into its parameter's buffer (device to device, after the graph)."""
        for dst, src, nbytes in update_copies(p, buffers):
            self.rt.memcpy(dst, nbytes, src, nbytes, MEMCPY_DEVICE_TO_DEVICE)
        self._device_updated(p)


class SinkRunner(_GraphRunner):
    """Dataset sink mode: every step of a sink in one graph launch, fed by the graph's device data queue."""

    def __init__(self, rt: Runtime, preparer: GraphPreparer, transfers: Transfers, log: RunLog,
                 stepwise: StepRunner):
        super().__init__(rt, preparer, transfers, log)
        self.stepwise = stepwise
        self._queue_stream: int | None = None        # the data queue's stream

    def run(self, graph: Graph, batches: list[list[np.ndarray]], jit_level: str) -> list[np.ndarray]:
        """Run ``graph`` once per batch (each a list of arrays matching ``graph.inputs``) and return the
        last step's outputs, as MindSpore's sunk loop does.

        An O2 graph (static memory) runs all the steps in one ``launch_graph`` fed by the device data
        queue (see :meth:`_execute`); the host waits once, at the end. An O0/O1 graph runs kernel by
        kernel, so the host issues every kernel of every step anyway: each step is run as usual.
        """
        if not batches:
            raise InvalidParamError(f"graph {graph.name!r}: a sink needs at least one batch")
        if graph.has_loops():          # its loops' trip counts are the device's: steps run one by one
            return [self.stepwise.run(graph, inputs, jit_level) for inputs in batches][-1]
        wall0 = time.perf_counter()
        prepared = self.preparer.prepare(graph, jit_level)
        if prepared.compiled.memory != "static":
            return [self.stepwise.run(graph, inputs, jit_level) for inputs in batches][-1]
        self.preparer.bind_constants(prepared, graph)
        host0 = self.rt.host_time()
        sink = f"{jit_level} sink of {len(batches)}"
        self.log.begin(graph.name, sink)
        results = self._execute(prepared, batches)
        self.log.end(graph.name, sink)
        step = StepRecord(graph.name, jit_level, len(prepared.kernels) * len(batches), time.perf_counter() - wall0,
                          self.rt.device_time() - host0, self.rt.host_time() - host0)
        self.log.record_sink(step, len(batches), self._avoided_api_s(prepared, len(batches)), prepared.queue.depth)
        return results

    def _execute(self, p: Prepared, batches: list[list[np.ndarray]]) -> list[np.ndarray]:
        """One launch for all the steps. Issue order, per step k (slot = k mod the queue depth):

        * queue stream (the host's data channel and MindSpore's GetNext loop), for batch 0 first: wait
          until slot's previous batch was consumed, copy the batch host to device into the slot, the
          GetNext loop's StreamSwitch and GetNext (the AI CPU takes the batch's bytes off the data
          channel), record ``filled[slot]``;
        * first graph stream: StreamSwitch on the loop counter, wait for ``filled[slot]``, AssignAdd of the
          next-loop counter, copy the slot into the graph's input buffers, StreamActive of the GetNext
          loop, record ``consumed[slot]``; then the queue stream's tasks for batch k+1 (issued before
          step k's kernels, so a step of thousands of kernels, which fills its streams' queues and
          blocks the host, cannot hold back the next batch's fetch); the other graph streams wait for that;
        * the compiled schedule (every stream);
        * the other streams' ends recorded, awaited by the first stream, which then copies the
          parameter updates in place, so step k+1 reads them, and runs the AssignAdd of the current-loop
          counter and the StreamActive that restarts the step's loop.

        The loop tasks (``hal_steps.LoopTask``) are those MindSpore's loop sink adds to every iteration on
        Ascend (KernelAdjust::ProcessLoopSink), kinds priced by their classes in device/cost.py (``LoopSinkTask``).

        Every wait comes after the record it needs in issue order, so the loop runs without the host;
        the host synchronises once and downloads the last step's outputs.
        """
        rt, c = self.rt, p.compiled
        for k, batch in enumerate(batches):
            if len(batch) != len(c.inputs):
                raise InvalidParamError(f"graph {c.name!r} takes {len(c.inputs)} inputs, batch {k} of the sink "
                                        f"has {len(batch)}")
        sunk = p.lowered()
        queue, qs = self._data_queue(p, batches), self._data_stream()
        first, others = p.streams[0], p.streams[1:]
        fence_out = ([hal_steps.RecordEvent(queue.fence, first)] + [hal_steps.WaitEvent(queue.fence, s) for s in others]
                     if others else [])
        fence_in = [step for s in others for step in (hal_steps.RecordEvent(queue.fence, s),
                                                      hal_steps.WaitEvent(queue.fence, first))]
        updates = [hal_steps.MemcpyAsync(dst, n, src, n, MEMCPY_DEVICE_TO_DEVICE, first)
                   for dst, src, n in update_copies(p, p.inputs)]
        descs = [c.values[v] for v in c.inputs]
        loop_end = [hal_steps.LoopTask(LoopCounterAssignAdd, first), hal_steps.LoopTask(StreamActive, first)]

        def fetch(k: int) -> list[hal_steps.Step]:
            """The queue stream's steps for batch k: its upload into its slot and the GetNext loop's tasks."""
            slot, out = k % queue.depth, []
            if k >= queue.depth:
                out.append(hal_steps.WaitEvent(queue.consumed[slot], qs))
            batch_bytes = 0
            for v, a, desc in zip(c.inputs, batches[k], descs):
                data = contiguous(a, desc)
                batch_bytes += data.nbytes
                if data.nbytes:
                    out.append(hal_steps.MemcpyAsync(queue.slots[slot][v], data.nbytes, data, data.nbytes,
                                                     MEMCPY_HOST_TO_DEVICE, qs))
            return out + [hal_steps.LoopTask(StreamSwitch, qs), hal_steps.LoopTask(GetNext, qs, batch_bytes),
                          hal_steps.RecordEvent(queue.filled[slot], qs)]

        steps: list[hal_steps.Step] = fetch(0)
        for k in range(len(batches)):
            slot = k % queue.depth
            steps += [hal_steps.LoopTask(StreamSwitch, first), hal_steps.WaitEvent(queue.filled[slot], first),
                      hal_steps.LoopTask(LoopCounterAssignAdd, first)]
            steps += [hal_steps.MemcpyAsync(p.inputs[v], d.nbytes, queue.slots[slot][v], d.nbytes,
                                            MEMCPY_DEVICE_TO_DEVICE, first)
                      for v, d in zip(c.inputs, descs) if d.nbytes]
            steps += [hal_steps.LoopTask(StreamActive, first), hal_steps.RecordEvent(queue.consumed[slot], first)]
            if k + 1 < len(batches):       # the StreamActive restarted the GetNext loop: the next batch is
                steps += fetch(k + 1)      # fetched while this step computes, whatever its kernel count
            steps += fence_out + sunk + fence_in + updates + loop_end
        rt.launch_graph(steps)
        for s in (qs, *p.streams):
            rt.synchronize_stream(s)
        results = self._outputs(p, p.inputs)
        self._device_updated(p)
        return results

    def _data_queue(self, p: Prepared, batches: list[list[np.ndarray]]) -> DataQueue:
        """The graph's device data queue for this sink: as many slots as batches, up to QUEUE_DEPTH and
        QUEUE_BYTES; kept while sinks keep that depth (every epoch's sink, usually), else made again."""
        batch_bytes = sum(max(p.compiled.values[v].nbytes, 1) for v in p.compiled.inputs)
        depth = max(1, min(len(batches), QUEUE_DEPTH, QUEUE_BYTES // max(batch_bytes, 1)))
        q = p.queue
        if q is not None and q.depth == depth:
            return q
        rt = self.rt
        if q is not None:
            for slot in q.slots:
                for ptr in slot.values():
                    rt.free(ptr)
            for ev in q.filled + q.consumed + [q.fence]:
                rt.destroy_event(ev)
        p.queue = DataQueue([{v: rt.malloc(max(p.compiled.values[v].nbytes, 1)) for v in p.compiled.inputs}
                             for _ in range(depth)],
                            [rt.create_event() for _ in range(depth)], [rt.create_event() for _ in range(depth)],
                            rt.create_event())
        return p.queue

    def _data_stream(self) -> int:
        if self._queue_stream is None:
            self._queue_stream = self.rt.create_stream()
        return self._queue_stream

    def _avoided_api_s(self, p: Prepared, steps: int) -> float:
        """Modelled host API time a step-by-step run of these steps would have spent that the sink did
        not: all but one graph launch, and the synchronisations and output downloads that go with
        them, and every step's update copies (the sink copies updates on the device)."""
        c = p.compiled
        per_round_trip = self.rt.node.spec.graph_launch_overhead_s + API_CALL_COST_S * (len(p.streams) + len(c.outputs))
        return (steps - 1) * per_round_trip + steps * API_CALL_COST_S * len(update_copies(p, p.inputs))

