"""Graph preparation: a captured graph made ready to run on the device, once per structure and level.

Compile (or take from the per-rank graph cache), get its kernels from the run mode (the kernel cache,
or DryRun's kernels without code), create its streams and events, and for O2 allocate its static
workspace, one scratch area per stream and fixed input buffers. Before each run the graph's constants
are bound: parameters to their device buffers (one per Parameter, shared by every graph, uploaded when
the host changed it), literals to buffers of the graph.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

from ascendemu.hal.runtime import Runtime
from ascendemu.kernels.library import plan_kernel
from ascendemu.kernels.registry import communication
from ascendemu.kernels.signature import TensorDesc

from .bindings import Prepared, scratch_layout, split_scratch
from .graph_cache import GraphCache
from .ir import Graph, StateSource
from .modes import RunMode
from .plan import cache_name, compile_graph, default_max_streams
from .schedule import event_slots
from .transfer import Transfers

__all__ = ["GraphPreparer"]


@dataclass
class _StateSlot:
    """A parameter's device buffer: lives as long as the parameter; ``version`` = host version uploaded;
    ``node``: the emulated node it was allocated on (a finalized and re-initialised runtime hands the same
    addresses out again, so a slot of an earlier node is neither used nor freed)."""

    source: weakref.ref
    ptr: int
    version: int
    node: weakref.ref


class GraphPreparer:
    """Makes graphs ready on device ``device_id`` and keeps them (``prepared``: cache name -> Prepared)."""

    def __init__(self, rt: Runtime, device_id: int, mode: RunMode, transfers: Transfers, graph_cache: GraphCache,
                 exec_order: str):
        self.rt, self.device_id, self.mode, self.transfers = rt, device_id, mode, transfers
        self.graph_cache = graph_cache
        self.exec_order = exec_order
        self.graphs_compiled = 0
        self.prepared: dict[str, Prepared] = {}
        self._states: dict[int, _StateSlot] = {}     # id(parameter) -> its device buffer
        # Streams and events shared by every prepared graph: a graph's step runs to completion (its outputs
        # are downloaded) before another step starts, so graphs never hold them at the same time; a
        # process preparing thousands of graphs stays within the device's 1024 streams (as MindSpore
        # reuses its streams across graphs)
        self._streams: list[int] = []
        self._events: list[int] = []

    @staticmethod
    def _pooled(pool: list[int], count: int, create) -> list[int]:
        """The first ``count`` handles of ``pool``, creating the ones it lacks."""
        while len(pool) < count:
            pool.append(create())
        return pool[:count]

    def first_stream(self) -> int:
        """The first stream every prepared graph runs on (a device loop's copies and control go there)."""
        return self._pooled(self._streams, 1, self.rt.create_stream)[0]

    def prepare(self, graph: Graph, jit_level: str) -> Prepared:
        """Compile (or take from the graph cache), build/load kernels, set up streams and memory."""
        name = cache_name(graph.structure_hash(), jit_level, self.exec_order, default_max_streams(jit_level))
        prepared = self.prepared.get(name)
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
        rt = self.rt
        self.mode.compiled(compiled, lambda group: rt.comms[rt.comm_find(group)].ranks)
        kernels = self.mode.kernels([plan_kernel(k.signature, tuple(compiled.values[v] for v in k.outputs))
                                     for k in launched])
        streams = self._pooled(self._streams, compiled.num_streams, rt.create_stream)
        slots = event_slots(compiled.schedule)       # edges whose record/wait spans do not overlap share one
        handles = self._pooled(self._events, max(slots, default=-1) + 1, rt.create_event)
        events = [handles[slot] for slot in slots]
        prepared = Prepared(compiled, {k.node_id: f for k, f in zip(launched, kernels)},
                            {k.node_id: k for k in compiled.kernels}, streams, events,
                            comms={k.node_id: rt.comm_find(k.signature.attr("group")) for k in compiled.kernels
                                   if communication(k.signature.op) is not None})
        if compiled.memory == "static":
            prepared.workspace = rt.malloc(max(compiled.workspace_size, 1))
            need: dict[int, int] = {}
            for k, f in zip(launched, kernels):
                need[k.stream] = max(need.get(k.stream, 0), scratch_layout(f)[1])
            # one scratch area per stream: kernels on a stream run one at a time
            area = {s: rt.malloc(n) for s, n in need.items() if n}
            prepared.scratch = {k.node_id: split_scratch(f, area.get(k.stream, 0)) for k, f in zip(launched, kernels)}
            prepared.inputs = {v: rt.malloc(max(compiled.values[v].nbytes, 1)) for v in compiled.inputs}
        self.prepared[name] = prepared
        return prepared

    def bind_constants(self, prepared: Prepared, graph: Graph) -> None:
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
                ptr = self.state_buffer(const.source, compiled.values[root])
            elif prepared.constant_data.get(root) == id(const.value):
                continue
            else:
                if root in prepared.constants:
                    self.rt.free(prepared.constants[root])
                ptr = self.transfers.upload(self.mode.literal_data(const.value, compiled.values[root]),
                                            compiled.values[root])
                prepared.constant_data[root] = id(const.value)
            if prepared.constants.get(root) != ptr:
                prepared.constants[root] = ptr
                prepared.sunk = []

    def state_buffer(self, source: StateSource, desc: TensorDesc) -> int:
        """The device buffer of a parameter, uploaded from the host when its version changed."""
        slot = self._states.get(id(source))
        if slot is None or slot.source() is not source or slot.node() is not self.rt.node:
            slot = _StateSlot(weakref.ref(source), self.rt.malloc(max(desc.nbytes, 1)), -1,
                              weakref.ref(self.rt.node))
            self._states[id(source)] = slot
            weakref.finalize(source, self._drop_state, id(source), slot.ptr)
        if slot.version != source.version:
            self.transfers.upload(self.mode.state_data(source, desc), desc, slot.ptr)
            slot.version = source.version
        return slot.ptr

    def _drop_state(self, key: int, ptr: int) -> None:
        slot = self._states.get(key)
        if slot is not None and slot.ptr == ptr:
            del self._states[key]
            node = slot.node()
            if node is not None and node is self.rt.node and ptr in node.devices[self.device_id].memory.allocations:
                self.rt.free(ptr)
