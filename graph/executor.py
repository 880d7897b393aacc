"""Executors: run single ops (PyNative) and compiled graphs (O0/O1/O2) on the emulated device.

O0/O1 are single-op executors: every kernel is one ``launch_kernel`` that pays the modelled host
launch cost, and node outputs come from the device's BestFit pool in host order and go back to it
when their reference count drops (stream order makes that safe, as in MindSpore's pool). O2 sinks
the whole graph: one ``launch_graph`` carries every kernel, record and wait of every stream, with no
per-op host cost, and node outputs live at static offsets in one workspace planned at compile time.

Dataset sink mode (``run_graph_sunk``, MindSpore's ``Model.train(dataset_sink_mode=True)``) goes one
step further: an O2 step graph runs ``sink_size`` times in one launch, fed from a device data queue.
The batches are copied host to device into the queue's slots on a stream of their own, and each
iteration starts with GetNext, a device copy from its slot into the graph's input buffers; parameter
updates are copied in place between iterations, so no step needs the host until the sink ends.

The executor is the front end's backend (``ascendemu.frontend.backend``): ``run_op`` and
``run_graph``. Kernels come from the per-rank kernel cache, compiled graphs from the graph cache.
"""
from __future__ import annotations

import functools
import time
import weakref
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ascendemu.cache.kernel_meta import KernelCache
from ascendemu.errors import HcclNotSupportedError, InvalidParamError
from ascendemu.ranks import resolve_rank
from ascendemu.units import format_bytes
from ascendemu.hal import steps as hal_steps
from ascendemu.hal.api import API_CALL_COST_S
from ascendemu.hal.hccl import HCCL_DATA_TYPES
from ascendemu.hal.kernel import KernelFunction
from ascendemu.hal.runtime import (MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE, Runtime,
                                   get_runtime)
from ascendemu.kernels.library import KernelPlan, dry_run_function, plan_kernel
from ascendemu.kernels.registry import communication
from ascendemu.kernels.signature import OpSignature, TensorDesc

from .execute_order import ExecuteOrderTracker
from .graph_cache import GraphCache
from .ir import Graph, StateSource
from .memory_plan import ALIGN
from .memory_report import AT_PEAK, PERSISTENT
from .plan import CompiledGraph, KernelTask, cache_name, compile_graph, default_max_streams
from .schedule import event_slots

PYNATIVE = "PyNative"      # the level of an op run alone
# The DryRun lines a launcher reads back from each rank's log (``ascendemu msrun --sim_level``).
DRYRUN_USED = "DryRun: Used peak memory usage (without fragments): "
DRYRUN_ACTUAL = "DryRun: Actual peak memory usage (with fragments): "
DRYRUN_STEP = "DryRun: Simulated step time: "


@dataclass
class StepRecord:
    """One execution: which graph (or op), at which level, and what it cost on both clocks."""

    name: str
    jit_level: str
    kernels: int
    host_wall_s: float
    device_s: float          # simulated: from the host's first call of the step to the device's last task
    host_s: float = 0.0      # simulated host time the step took (its calls, and its waits for the device)


STEP_HISTORY = 1024        # step records kept for inspection (executor.steps); totals are kept for all
# MindSpore's device data queue holds at most 100 batches and 2 GB (mindspore.data_sink); a longer sink
# reuses the slots, each push waiting until GetNext has taken the batch before it out of its slot
QUEUE_DEPTH = 100
QUEUE_BYTES = 2 << 30


@dataclass
class _Totals:
    """Every run of one graph (or op) at one level, summed for the summary."""

    first: StepRecord
    runs: int = 0
    host_wall_s: float = 0.0
    device_s: float = 0.0
    host_s: float = 0.0      # simulated host time, for the comparison with dataset sink mode

    def steady(self) -> tuple[float, float]:
        """(simulated device s, host wall s) per run; the first run (builds, uploads) is excluded once
        there are more."""
        steady = max(self.runs - 1, 1)
        first = self.runs > 1
        return ((self.device_s - (self.first.device_s if first else 0.0)) / steady,
                (self.host_wall_s - (self.first.host_wall_s if first else 0.0)) / steady)


@dataclass
class _SinkTotals:
    """Every dataset sink of one graph at one level: steps run, simulated host time, and the host API
    time the modelled step-by-step run would have spent on the round trips the sinks avoided."""

    sinks: int = 0
    steps: int = 0
    host_s: float = 0.0
    avoided_api_s: float = 0.0
    depth: int = 0
    device_s: float = 0.0    # simulated: from each sink's first host call to its device's last task
    first_steps: int = 0     # the first sink (it also fills the data queue's first slots) ...
    first_device_s: float = 0.0   # ... and its simulated device time

    def steady(self) -> float:
        """Simulated device seconds per sunk step, as MindSpore's sink mode reports a step: a sink's
        time over its steps; once there are more sinks, the first (queue setup, first uploads) is
        excluded, as :meth:`_Totals.steady` excludes a graph's first run."""
        if self.sinks > 1:
            return (self.device_s - self.first_device_s) / (self.steps - self.first_steps)
        return self.device_s / self.steps


@dataclass
class DataQueue:
    """The device data queue of a graph run in dataset sink mode: ``depth`` slots of device buffers
    (graph input value -> address); ``filled[i]`` is recorded on the queue stream once a batch is in
    slot i, ``consumed[i]`` on the graph's first stream once GetNext has copied it out; ``fence``
    orders the graph's streams around each iteration."""

    slots: list[dict[int, int]]
    filled: list[int]
    consumed: list[int]
    fence: int

    @property
    def depth(self) -> int:
        return len(self.slots)


@dataclass
class Prepared:
    """A compiled graph made ready on the device: kernels loaded, streams, events, constants, memory.

    O2 (static memory) also keeps its graph inputs at fixed device buffers and its schedule lowered
    once to HAL steps (``sunk``): each run copies the inputs in and sinks ``sunk`` as is.
    """

    compiled: CompiledGraph
    kernels: dict[int, KernelFunction]                              # node id -> its kernel
    tasks: dict[int, KernelTask]                                    # node id -> its launch
    streams: list[int]
    events: list[int]
    constants: dict[int, int] = field(default_factory=dict)         # value id -> device address
    constant_data: dict[int, int] = field(default_factory=dict)     # value id -> id() of the uploaded array
    workspace: int = 0                                              # O2 static plan base address
    scratch: dict[int, list[int]] = field(default_factory=dict)     # O2: node id -> its workspace addresses
    inputs: dict[int, int] = field(default_factory=dict)            # O2: graph input value -> device buffer
    sunk: list[hal_steps.Step] = field(default_factory=list)        # O2: the schedule lowered once
    queue: DataQueue | None = None                                  # O2 in dataset sink mode
    comms: dict[int, int] = field(default_factory=dict)             # collective node id -> communicator

    def address(self, vid: int, buffers: dict[int, int]) -> int:
        """Device address of value ``vid`` (through its alias root): a constant, a per-run buffer, or
        its offset in the static workspace."""
        r = self.compiled.root(vid)
        found = self.constants.get(r, buffers.get(r))
        return found if found is not None else self.workspace + self.compiled.offsets[r]

    def collective(self, node: int, buffers: dict[int, int], stream: int) -> hal_steps.Communicate:
        """The HAL collective step of collective node ``node``: its input and output buffers."""
        task = self.tasks[node]
        send = self.address(task.inputs[0], buffers) if task.inputs else None
        return _collective_step(task.signature, self.compiled.values[task.outputs[0]], send,
                                self.address(task.outputs[0], buffers), self.comms[node], stream)

    def kernel_args(self, node: int, buffers: dict[int, int], scratch: list[int]) -> list[int]:
        task = self.tasks[node]
        return ([self.address(v, buffers) for v in task.inputs] + [self.address(v, buffers) for v in task.outputs]
                + scratch)


class StaticBinding:
    """Lowers an O2 schedule once: every address is fixed (workspace offsets, input buffers)."""

    def __init__(self, p: Prepared):
        self.p, self.streams, self.events = p, p.streams, p.events

    def launch(self, node: int, stream: int) -> hal_steps.Launch:
        p = self.p
        return hal_steps.Launch(p.kernels[node], p.kernel_args(node, p.inputs, p.scratch[node]), stream,
                                name=p.tasks[node].full_name)

    def communicate(self, node: int, stream: int) -> hal_steps.Communicate:
        return self.p.collective(node, self.p.inputs, stream)

    def retire(self, node: int) -> None:
        """Nothing to release: static memory lives as long as the prepared graph."""


class DynamicBinding:
    """Lowers an O0/O1 schedule step by step during one run: node outputs and kernel workspaces come
    from the pool right before their kernel and go back when their reference count drops."""

    def __init__(self, rt: Runtime, p: Prepared, buffers: dict[int, int]):
        self.rt, self.p, self.buffers = rt, p, buffers
        self.streams, self.events = p.streams, p.events
        self._scratch: list[int] = []

    def _outputs(self, node: int) -> None:
        rt, c, buffers = self.rt, self.p.compiled, self.buffers
        for v in self.p.tasks[node].outputs:
            r = c.root(v)
            if r not in buffers:
                buffers[r] = rt.malloc(max(c.values[r].nbytes, 1))

    def communicate(self, node: int, stream: int) -> hal_steps.Communicate:
        self._outputs(node)
        return self.p.collective(node, self.buffers, stream)

    def launch(self, node: int, stream: int) -> hal_steps.Launch:
        rt, buffers = self.rt, self.buffers
        self._outputs(node)
        func = self.p.kernels[node]
        self._scratch = [rt.malloc(a.nbytes) for a in func.args if a.role == "workspace"]
        return hal_steps.Launch(func, self.p.kernel_args(node, buffers, self._scratch), stream,
                                name=self.p.tasks[node].full_name)

    def retire(self, node: int) -> None:
        for ptr in self._scratch:
            self.rt.free(ptr)
        self._scratch = []
        for v in self.p.compiled.release_after.get(node, ()):
            self.rt.free(self.buffers.pop(v))


@dataclass
class _StateSlot:
    """A parameter's device buffer: lives as long as the parameter; ``version`` = host version uploaded."""

    source: weakref.ref
    ptr: int
    version: int


def _dtype(desc: TensorDesc) -> np.dtype:
    return np.dtype(desc.dtype)


class DeviceExecutor:
    """Runs the front end's ops and graphs on one emulated device, through the HAL."""

    def __init__(self, device_id: int = 0, cache_root: str | None = None, rank: int | None = None,
                 exec_order: str = "dfs", trace: bool = False, progress: bool = True,
                 jit_level: str | None = None, dry_run: bool = False, device: str | None = None):
        self.rt: Runtime = get_runtime()
        if self.rt.node is None:
            self.rt.init(spec=device, trace=trace, backing=not dry_run)
        elif device is not None and self.rt.node.spec.name != device:
            raise InvalidParamError(f"the runtime already runs a {self.rt.node.spec.name} node; finalize() it "
                                    f"before asking for {device}")
        self.rt.set_device(device_id)
        self.device_id = device_id
        self.exec_order = exec_order
        self.progress = progress
        self.forced_jit_level = jit_level     # overrides what the script asks for (ascendemu run --jit-level)
        self.dry_run = dry_run                # DryRun: nothing compiled or computed; memory and time still are
        # the device preset's SoC is part of every kernel's identity: a 910B never reuses a 910A kernel
        self.kernel_cache = KernelCache(cache_root, rank, device_id, soc=self.rt.node.spec.soc_version)
        self.graph_cache = GraphCache(cache_root, rank)
        self.rank = resolve_rank(rank)
        # MindSpore keeps the execution order of every compiled graph in a DryRun (write_execute_order)
        self.execute_order = ExecuteOrderTracker() if dry_run else None
        self.graphs_compiled = 0
        # recent steps only: a long PyNative run records one step per op; the summary keeps totals
        self.steps: deque[StepRecord] = deque(maxlen=STEP_HISTORY)
        self._totals: dict[tuple[str, str], _Totals] = {}
        self._prepared: dict[str, Prepared] = {}
        self._states: dict[int, _StateSlot] = {}     # id(parameter) -> its device buffer
        self._sinks: dict[tuple[str, str], _SinkTotals] = {}
        self._queue_stream: int | None = None        # the data queue's stream (dataset sink mode)

    # -- PyNative ---------------------------------------------------------------------------------
    def run_op(self, sig: OpSignature, inputs: list[np.ndarray], outputs: tuple[TensorDesc, ...]) -> list[np.ndarray]:
        """One op: upload, launch on the default stream, wait, download (PyNative mode). ``outputs``:
        the op's inferred output descs (the front end has them; they are not inferred again)."""
        rt = self.rt
        wall0, host0 = time.perf_counter(), rt.host_time()
        if communication(sig.op) is not None:
            return self._run_collective(sig, inputs, outputs, wall0, host0)
        if rt.recorders:
            rt.annotate(_marks().StepBegin(sig.op, PYNATIVE))
        func = self._kernels([plan_kernel(sig, outputs)])[0]
        outs = outputs
        owned = [self._upload(a, d) for a, d in zip(inputs, sig.inputs)]
        out_ptrs = [rt.malloc(max(d.nbytes, 1)) for d in outs]
        scratch = [rt.malloc(a.nbytes) for a in func.args if a.role == "workspace"]
        rt.launch_kernel(func, func.block_dim, owned + out_ptrs + scratch, 0)
        rt.synchronize_stream(0)
        results = [self._download(p, d) for p, d in zip(out_ptrs, outs)]
        for p in owned + out_ptrs + scratch:
            rt.free(p)
        if rt.recorders:
            rt.annotate(_marks().StepEnd(sig.op, PYNATIVE))
        self._record(StepRecord(sig.op, PYNATIVE, 1, time.perf_counter() - wall0, rt.device_time() - host0))
        return results

    def _run_collective(self, sig: OpSignature, inputs: list[np.ndarray], outputs: tuple[TensorDesc, ...],
                        wall0: float, host0: float) -> list[np.ndarray]:
        """One collective op in PyNative mode: through its HCCL-shaped runtime call on the default stream."""
        rt = self.rt
        comm = rt.comm_find(sig.attr("group"))
        src = self._upload(inputs[0], sig.inputs[0]) if inputs else None
        dst = rt.malloc(max(outputs[0].nbytes, 1))
        try:
            _collective_step(sig, outputs[0], src, dst, comm, 0).issue(rt)
            rt.synchronize_stream(0)
            result = self._download(dst, outputs[0])
        finally:
            for ptr in (src, dst):
                if ptr is not None:
                    rt.free(ptr)
        self._record(StepRecord(sig.op, PYNATIVE, 1, time.perf_counter() - wall0, rt.device_time() - host0))
        return [result]

    # -- graphs ---------------------------------------------------------------------------------
    def run_graph(self, graph: Graph, inputs: list[np.ndarray], jit_level: str) -> list[np.ndarray]:
        wall0 = time.perf_counter()
        jit_level = self.forced_jit_level or jit_level
        prepared = self.prepare(graph, jit_level)
        self._bind_constants(prepared, graph)
        host0 = self.rt.host_time()
        if self.rt.recorders:
            self.rt.annotate(_marks().StepBegin(graph.name, jit_level))
        results = self._execute(prepared, inputs)
        if self.rt.recorders:
            self.rt.annotate(_marks().StepEnd(graph.name, jit_level))
        self._record(StepRecord(graph.name, jit_level, len(prepared.kernels), time.perf_counter() - wall0,
                                self.rt.device_time() - host0, self.rt.host_time() - host0))
        return results

    def run_graph_sunk(self, graph: Graph, batches: list[list[np.ndarray]], jit_level: str) -> list[np.ndarray]:
        """Dataset sink mode: run ``graph`` once per batch (each a list of arrays matching
        ``graph.inputs``) and return the last step's outputs, as MindSpore's sunk loop does.

        An O2 graph (static memory) runs all the steps in one ``launch_graph`` fed by the device data
        queue (see :meth:`_execute_sunk`); the host waits once, at the end. An O0/O1 graph runs kernel
        by kernel, so the host issues every kernel of every step anyway: each step is run as usual.
        """
        if not batches:
            raise InvalidParamError(f"graph {graph.name!r}: a sink needs at least one batch")
        wall0 = time.perf_counter()
        jit_level = self.forced_jit_level or jit_level
        prepared = self.prepare(graph, jit_level)
        if prepared.compiled.memory != "static":
            return [self.run_graph(graph, inputs, jit_level) for inputs in batches][-1]
        self._bind_constants(prepared, graph)
        host0 = self.rt.host_time()
        sink = f"{jit_level} sink of {len(batches)}"
        if self.rt.recorders:
            self.rt.annotate(_marks().StepBegin(graph.name, sink))
        results = self._execute_sunk(prepared, batches)
        if self.rt.recorders:
            self.rt.annotate(_marks().StepEnd(graph.name, sink))
        host_s, device_s = self.rt.host_time() - host0, self.rt.device_time() - host0
        self.steps.append(StepRecord(graph.name, jit_level, len(prepared.kernels) * len(batches),
                                     time.perf_counter() - wall0, device_s, host_s))
        t = self._sinks.setdefault((graph.name, jit_level), _SinkTotals())
        if not t.sinks:
            t.first_steps, t.first_device_s = len(batches), device_s
        t.sinks += 1
        t.steps += len(batches)
        t.host_s += host_s
        t.device_s += device_s
        t.avoided_api_s += self._avoided_api_s(prepared, len(batches))
        t.depth = max(t.depth, prepared.queue.depth)
        return results

    def prepare(self, graph: Graph, jit_level: str) -> Prepared:
        """Compile (or take from the graph cache), build/load kernels, set up streams and memory."""
        name = cache_name(graph.structure_hash(), jit_level, self.exec_order, default_max_streams(jit_level))
        prepared = self._prepared.get(name)
        if prepared is not None:
            # this capture's parameters: a new network (or generator) may share a compiled structure,
            # and its updates and constant outputs must reach it, not the first capture's
            prepared.compiled.bind_constants(graph)
            return prepared
        compiled = self.graph_cache.load(name)
        if compiled is not None:
            compiled.bind_constants(graph)
        else:
            compiled = compile_graph(graph, jit_level, self.exec_order)
            self.graphs_compiled += 1
            self.graph_cache.store(compiled)
        launched = [k for k in compiled.kernels if communication(k.signature.op) is None]
        if self.execute_order is not None:
            self.execute_order.record(compiled, lambda group: self.rt.comms[self.rt.comm_find(group)].ranks)
        kernels = self._kernels([plan_kernel(k.signature, tuple(compiled.values[v] for v in k.outputs))
                                 for k in launched])
        rt = self.rt
        streams = [rt.create_stream() for _ in range(compiled.num_streams)]
        slots = event_slots(compiled.schedule)       # edges whose record/wait spans do not overlap share one
        handles = [rt.create_event() for _ in range(max(slots, default=-1) + 1)]
        events = [handles[slot] for slot in slots]
        prepared = Prepared(compiled, {k.node_id: f for k, f in zip(launched, kernels)},
                            {k.node_id: k for k in compiled.kernels}, streams, events,
                            comms={k.node_id: rt.comm_find(k.signature.attr("group")) for k in compiled.kernels
                                   if communication(k.signature.op) is not None})
        if compiled.memory == "static":
            prepared.workspace = rt.malloc(max(compiled.workspace_size, 1))
            need: dict[int, int] = {}
            for k, f in zip(launched, kernels):
                need[k.stream] = max(need.get(k.stream, 0), _scratch_layout(f)[1])
            # one scratch area per stream: kernels on a stream run one at a time
            area = {s: rt.malloc(n) for s, n in need.items() if n}
            prepared.scratch = {k.node_id: _split_scratch(f, area.get(k.stream, 0)) for k, f in zip(launched, kernels)}
            prepared.inputs = {v: rt.malloc(max(compiled.values[v].nbytes, 1)) for v in compiled.inputs}
        self._prepared[name] = prepared
        return prepared

    def _kernels(self, plans: list[KernelPlan]) -> list[KernelFunction]:
        if self.dry_run:
            return [dry_run_function(plan) for plan in plans]
        return self.kernel_cache.get_many(plans, progress=self.progress and len(plans) > 1)

    def _bind_constants(self, prepared: Prepared, graph: Graph) -> None:
        """Point the graph's constants at device memory: parameters at their state buffers (shared by
        every graph, uploaded when the host changed them), literals at buffers of this graph
        (uploaded once; again only when the captured graph carries new arrays). An O2 graph whose
        addresses moved is lowered again."""
        compiled = prepared.compiled
        for v, const in graph.constants.items():
            root = compiled.root(v)
            if v not in compiled.constants:
                continue
            if const.source is not None:
                ptr = self._state_buffer(const.source, compiled.values[root])
            elif prepared.constant_data.get(root) == id(const.value):
                continue
            else:
                if root in prepared.constants:
                    self.rt.free(prepared.constants[root])
                ptr = self._upload(const.value, compiled.values[root])
                prepared.constant_data[root] = id(const.value)
            if prepared.constants.get(root) != ptr:
                prepared.constants[root] = ptr
                prepared.sunk = []

    def _state_buffer(self, source: StateSource, desc: TensorDesc) -> int:
        """The device buffer of a parameter, uploaded from the host when its version changed."""
        slot = self._states.get(id(source))
        if slot is None or slot.source() is not source:
            slot = _StateSlot(weakref.ref(source), self.rt.malloc(max(desc.nbytes, 1)), -1)
            self._states[id(source)] = slot
            weakref.finalize(source, self._drop_state, id(source), slot.ptr)
        if slot.version != source.version:
            self._upload(source.host_data(), desc, slot.ptr)
            slot.version = source.version
        return slot.ptr

    def _drop_state(self, key: int, ptr: int) -> None:
        slot = self._states.get(key)
        if slot is not None and slot.ptr == ptr:
            del self._states[key]
            if self.rt.node is not None and ptr in self.rt.node.devices[self.device_id].memory.allocations:
                self.rt.free(ptr)

    def _update_copies(self, p: Prepared, buffers: dict[int, int]) -> list[tuple[int, int, int]]:
        """(parameter buffer, updated value's address, bytes) of each update that must be copied."""
        c, copies = p.compiled, []
        for param, value in c.updates.items():
            root = c.root(param)
            dst, src = p.constants[root], p.address(value, buffers)
            if dst != src and c.values[root].nbytes:
                copies.append((dst, src, c.values[root].nbytes))
        return copies

    def _device_updated(self, p: Prepared) -> None:
        """Tell each updated parameter that its newest values are on the device now."""
        c = p.compiled
        for param in c.updates:
            root = c.root(param)
            source = c.constant_refs[root].source
            if source is not None:
                source.device_updated(functools.partial(self._download, p.constants[root], c.values[root]))

    def _apply_updates(self, p: Prepared, buffers: dict[int, int]) -> None:
        """Write each updated value into its parameter's buffer (device to device, after the graph)."""
        for dst, src, nbytes in self._update_copies(p, buffers):
            self.rt.memcpy(dst, nbytes, src, nbytes, MEMCPY_DEVICE_TO_DEVICE)
        self._device_updated(p)

    def _execute(self, p: Prepared, inputs: list[np.ndarray]) -> list[np.ndarray]:
        rt, c = self.rt, p.compiled
        if len(inputs) != len(c.inputs):
            raise InvalidParamError(f"graph {c.name!r} takes {len(c.inputs)} inputs, got {len(inputs)}")
        if c.memory == "static":
            for v, a in zip(c.inputs, inputs):
                self._upload(a, c.values[v], p.inputs[v])
            if not p.sunk:
                binding = StaticBinding(p)
                p.sunk = [step.lower(binding) for step in c.schedule]
            rt.launch_graph(p.sunk)
            buffers = p.inputs
        else:
            buffers = {v: self._upload(a, c.values[v]) for v, a in zip(c.inputs, inputs)}
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

    def _outputs(self, p: Prepared, buffers: dict[int, int]) -> list[np.ndarray]:
        """The graph's outputs, downloaded (a constant output is its data)."""
        c, results = p.compiled, []
        for v in c.outputs:
            r, desc = c.root(v), c.values[v]
            if r in c.constants and r not in c.updates:
                results.append(np.array(c.constant_refs[r].data).reshape(desc.shape))
            else:
                results.append(self._download(p.address(v, buffers), c.values[r]).reshape(desc.shape))
        return results

    # -- dataset sink mode ------------------------------------------------------------------------
    def _execute_sunk(self, p: Prepared, batches: list[list[np.ndarray]]) -> list[np.ndarray]:
        """One launch for all the steps. Issue order, per step k (slot = k mod the queue depth):

        * queue stream (the host's data channel): wait until slot's previous batch was consumed,
          copy batch k host to device into the slot, record ``filled[slot]``;
        * first graph stream: wait for ``filled[slot]``, GetNext (copy the slot into the graph's input
          buffers), record ``consumed[slot]``; the other graph streams wait for that;
        * the compiled schedule (every stream);
        * the other streams' ends recorded, awaited by the first stream, which then copies the
          parameter updates in place, so step k+1 reads them.

        Every wait comes after the record it needs in issue order, so the loop runs without the host;
        the host synchronises once and downloads the last step's outputs.
        """
        rt, c = self.rt, p.compiled
        for k, batch in enumerate(batches):
            if len(batch) != len(c.inputs):
                raise InvalidParamError(f"graph {c.name!r} takes {len(c.inputs)} inputs, batch {k} of the sink "
                                        f"has {len(batch)}")
        if not p.sunk:
            binding = StaticBinding(p)
            p.sunk = [step.lower(binding) for step in c.schedule]
        queue, qs = self._data_queue(p, batches), self._data_stream()
        first, others = p.streams[0], p.streams[1:]
        fence_out = ([hal_steps.RecordEvent(queue.fence, first)] + [hal_steps.WaitEvent(queue.fence, s) for s in others]
                     if others else [])
        fence_in = [step for s in others for step in (hal_steps.RecordEvent(queue.fence, s),
                                                      hal_steps.WaitEvent(queue.fence, first))]
        updates = [hal_steps.MemcpyAsync(dst, n, src, n, MEMCPY_DEVICE_TO_DEVICE, first)
                   for dst, src, n in self._update_copies(p, p.inputs)]
        descs = [c.values[v] for v in c.inputs]
        steps: list[hal_steps.Step] = []
        for k, batch in enumerate(batches):
            slot = k % queue.depth
            if k >= queue.depth:
                steps.append(hal_steps.WaitEvent(queue.consumed[slot], qs))
            for v, a, desc in zip(c.inputs, batch, descs):
                data = _contiguous(a, desc)
                if data.nbytes:
                    steps.append(hal_steps.MemcpyAsync(queue.slots[slot][v], data.nbytes, data, data.nbytes,
                                                       MEMCPY_HOST_TO_DEVICE, qs))
            steps.append(hal_steps.RecordEvent(queue.filled[slot], qs))
            steps.append(hal_steps.WaitEvent(queue.filled[slot], first))
            steps += [hal_steps.MemcpyAsync(p.inputs[v], d.nbytes, queue.slots[slot][v], d.nbytes,
                                            MEMCPY_DEVICE_TO_DEVICE, first)
                      for v, d in zip(c.inputs, descs) if d.nbytes]
            steps.append(hal_steps.RecordEvent(queue.consumed[slot], first))
            steps += fence_out + p.sunk + fence_in + updates
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
        return (steps - 1) * per_round_trip + steps * API_CALL_COST_S * len(self._update_copies(p, p.inputs))

    def _record(self, step: StepRecord) -> None:
        self.steps.append(step)
        t = self._totals.setdefault((step.name, step.jit_level), _Totals(step))
        t.runs += 1
        t.host_wall_s += step.host_wall_s
        t.device_s += step.device_s
        t.host_s += step.host_s

    # -- data movement ----------------------------------------------------------------------------
    def _upload(self, array: np.ndarray, desc: TensorDesc, ptr: int | None = None) -> int:
        """Copy ``array`` to the device: into ``ptr``, or a new buffer (returned)."""
        data = _contiguous(array, desc)
        if ptr is None:
            ptr = self.rt.malloc(max(data.nbytes, 1))
        if data.nbytes:
            self.rt.memcpy(ptr, data.nbytes, data, data.nbytes, MEMCPY_HOST_TO_DEVICE)
        return ptr

    def _download(self, ptr: int, desc: TensorDesc) -> np.ndarray:
        # DryRun reads zeros: np.zeros maps untouched pages, and a copy from a device without backing
        # moves no byte, so a 10 GB output takes its simulated time but no host memory
        out = (np.zeros if self.dry_run else np.empty)(desc.shape, _dtype(desc))
        if out.nbytes:
            self.rt.memcpy(out, out.nbytes, ptr, out.nbytes, MEMCPY_DEVICE_TO_HOST)
        return out

    # -- reporting --------------------------------------------------------------------------------
    def write_execute_order(self, save_graphs_path: str | None) -> list:
        """Write ``<save_graphs_path or .>/rank_<rank>/execute_order/*.csv`` as MindSpore does when a
        DryRun process ends; nothing outside a DryRun. Returns the files written."""
        if self.execute_order is None:
            return []
        return self.execute_order.write(save_graphs_path or ".", self.rank)

    def step_time(self) -> tuple[str, float] | None:
        """(graph, simulated device seconds per steady-state step) of the graph that took the most
        simulated device time (a training script's step), or None when no graph ran. A graph run in
        dataset sink mode counts its sunk steps (each sink's time over its steps); one that ran both
        ways is named by whichever took more of the device."""
        runs = [(key, t.device_s, t.steady()[0], "") for key, t in self._totals.items() if key[1] != PYNATIVE]
        sinks = [(key, t.device_s, t.steady(), ", dataset sink mode") for key, t in self._sinks.items()]
        if not runs + sinks:
            return None
        (name, level), _, per_step, how = max(runs + sinks, key=lambda item: item[1])
        return f"{name} [{level}{how}]", per_step

    def summary(self) -> list[str]:
        """The per-run summary a user reads: both clocks named, files named."""
        rt = self.rt
        stats = rt.mem_stats(self.device_id)
        lines = [self.kernel_cache.summary(),
                 f"graph cache {self.graph_cache.directory}: {self.graph_cache.hits} hit(s), "
                 f"{self.graphs_compiled} graph(s) compiled"]
        for (name, level), t in self._totals.items():
            dev, wall = t.steady()
            lines.append(f"{name} [{level}]: {t.runs} run(s), {t.first.kernels} kernel(s)/run; "
                         f"simulated device time {dev * 1e3:.3f} ms/run, host wall {wall * 1e3:.1f} ms/run"
                         + (" (steady state, first run excluded)" if t.runs > 1 else ""))
        for (name, level), t in self._sinks.items():
            lines.append(_sink_line(name, level, t, self._totals.get((name, level))))
        for p in self._prepared.values():
            c = p.compiled
            line = (f"{c.name} [{c.jit_level}] {c.exec_order} execution order: peak live bytes "
                    f"{format_bytes(c.lower_bound)} (single-stream order), {len(p.streams)} stream(s)")
            if c.memory == "static":
                line += (f"; static memory plan {format_bytes(c.workspace_size)} "
                         f"({c.workspace_size / max(c.lower_bound, 1):.3f}x that peak")
                if c.concurrent_bound is not None and len(p.streams) > 1:
                    line += (f", {c.workspace_size / max(c.concurrent_bound, 1):.3f}x the "
                             f"{format_bytes(c.concurrent_bound)} that may be alive at once on its "
                             f"{len(p.streams)} streams")
                line += ")"
            lines.append(line)
            if c.memory_report is not None and c.memory_report.trains:
                lines.append(_step_memory_line(c))
        device = rt.node.devices[self.device_id]
        lines.append(f"device {self.device_id} ({device.spec.name}, simulated): {device.kernels_run} kernel(s) run, "
                     f"AI cores {device.utilization():.1%} busy over {rt.device_time() * 1e3:.3f} ms; memory peak "
                     f"used {format_bytes(stats.peak_used)}, actual peak with fragments "
                     f"{format_bytes(stats.actual_peak)}, reserved {format_bytes(stats.reserved)}")
        if self.dry_run:
            mib = lambda n: f"{n / (1 << 20):.2f}M"  # noqa: E731
            lines[0] = "DryRun: no kernel was compiled or computed; outputs are not meaningful"
            lines += [f"DryRun: Device HBM memory size: {mib(stats.total)}",
                      f"{DRYRUN_USED}{mib(stats.peak_used)}",
                      f"{DRYRUN_ACTUAL}{mib(stats.actual_peak)}"]
            step = self.step_time()
            if step is not None:
                lines.append(f"{DRYRUN_STEP}{step[1] * 1e3:.3f} ms ({step[0]}, simulated device time)")
        return lines


def _marks():
    """The trace format's step records, imported only when a recorder listens (``ascendemu run --record``):
    the format's dozens of record classes cost tens of milliseconds to import, which a plain run skips."""
    from ascendemu.traces import aetrace
    return aetrace


_HCCL_DATA_TYPE = {dtype: value for value, dtype in HCCL_DATA_TYPES.items()}


def _collective_step(sig: OpSignature, output: TensorDesc, send: int | None, recv: int, comm: int,
                     stream: int) -> hal_steps.Communicate:
    """The HAL step of a collective op (its registry stanza's ``communication``) between two buffers;
    its data type is its input's (its output's for Receive and Barrier, which have no input)."""
    desc = sig.inputs[0] if sig.inputs else output
    dtype = _HCCL_DATA_TYPE.get(desc.dtype)
    if dtype is None:
        raise HcclNotSupportedError(f"{sig.op}: HCCL has no {desc.dtype} collectives here; cast the "
                                    f"tensor to one of {sorted(_HCCL_DATA_TYPE)} first")
    how = communication(sig.op)
    return hal_steps.Communicate(how.kind(sig), send, recv, how.count(sig), dtype, comm, stream)


def _contiguous(array: np.ndarray, desc: TensorDesc) -> np.ndarray:
    """``array`` as the C-contiguous bytes of ``desc``'s dtype, checked against its size."""
    data = np.ascontiguousarray(array, dtype=_dtype(desc))
    if data.shape != desc.shape and data.size != desc.size:
        raise InvalidParamError(f"input of shape {data.shape} does not match {desc.shape}")
    return data


def _sink_line(name: str, level: str, t: _SinkTotals, stepwise: _Totals | None) -> str:
    """Dataset sink mode of one graph: its steps and sinks, simulated host time per step, and the host
    time it saved: measured against the same graph's step-by-step runs in this process if there were
    any, else the modelled host API time of the round trips it avoided (a lower bound)."""
    per_step = t.host_s / t.steps
    line = (f"{name} [{level}] dataset sink mode: {t.steps} step(s) in {t.sinks} sink(s), one graph launch "
            f"each, fed by a device data queue of {t.depth} batch(es) (GetNext); simulated device time "
            f"{t.steady() * 1e3:.3f} ms/step, simulated host time {per_step * 1e3:.3f} ms/step")
    if not t.avoided_api_s:                     # one-step sinks (evaluation): nothing to save
        return line
    if stepwise is not None and stepwise.runs:
        unsunk = stepwise.host_s / stepwise.runs
        saved = unsunk - per_step
        return line + (f" vs {unsunk * 1e3:.3f} ms/step launched step by step ({stepwise.runs} run(s)): host time "
                       f"saved {saved * 1e3:.3f} ms/step, {saved * t.steps * 1e3:.3f} ms over the sunk steps")
    return line + (f"; host time saved >= {t.avoided_api_s / t.steps * 1e3:.3f} ms/step, "
                   f"{t.avoided_api_s * 1e3:.3f} ms in all (modelled: the graph launches, synchronisations and "
                   f"copies of step-by-step launches; no step-by-step run of this graph to measure)")


def _step_memory_line(c: CompiledGraph) -> str:
    """One line of a training step's memory by kind: persistent state, then node outputs at the peak."""
    r = c.memory_report
    held = ", ".join(f"{k.value} {format_bytes(r.bytes[k])} ({r.counts[k]} tensors)" for k in PERSISTENT)
    peak = ", ".join(f"{k.value} {format_bytes(r.bytes[k])}" for k in AT_PEAK)
    return (f"{c.name} [{c.jit_level}] step memory: {held}; node outputs at the peak "
            f"{format_bytes(r.peak_bytes)} (node {r.peak_position + 1} of {r.nodes}, {r.peak_node}): {peak}")


def _scratch_layout(func: KernelFunction) -> tuple[list[int], int]:
    """Offsets of a kernel's workspaces packed into one scratch area (512-B aligned), and its size."""
    offsets, end = [], 0
    for a in func.args:
        if a.role == "workspace":
            offsets.append(end)
            end += -(-a.nbytes // ALIGN) * ALIGN
    return offsets, end


def _split_scratch(func: KernelFunction, base: int) -> list[int]:
    """Addresses of a kernel's workspaces in its stream's scratch area (O2)."""
    return [base + o for o in _scratch_layout(func)[0]]
