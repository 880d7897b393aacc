"""The compile entry: Graph + jit level -> CompiledGraph, the executor's whole input.

Passes per level (the seed's multi-level compilation):

======  =============================  ===============================  ==================
level   graph passes                   memory                           streams
======  =============================  ===============================  ==================
O0      no-task nodes -> aliases       dynamic reference counting       1 unless asked
O1      + elementwise/epilogue fusion  dynamic reference counting       1 unless asked
O2      + elementwise/epilogue fusion  static plan (one workspace)      up to 4 by default
======  =============================  ===============================  ==================
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascendemu.errors import InvalidParamError
from ascendemu.kernels.signature import TensorDesc

from .ir import Constant, Graph
from .memory_plan import ALIGN, peak_memory, release_after, static_plan
from .memory_report import MemoryReport, memory_report
from .passes import (DEFAULT_ORDER_POLICY, ORDER_POLICIES, assign_streams, defer_to_first_use,
                     eliminate_common_subexpressions, fuse_conditional_updates, fuse_conv_bn_reduce,
                     contiguous_buckets, fuse_elementwise, fuse_epilogues, fuse_norm_programs, gradient_reductions,
                     optimizer_after_backward, order, remove_no_task, write_updates_in_place)
from .parallel.pipeline import order_phases
from .autodiff import GRADIENTS_SCOPE
from .parallel.optimizer_shard import SHARD_GATHER_SCOPE
from .parallel.sharding import MIRROR_SCOPE
from .recompute import recompute_activations
from .schedule import GraphKernel, ScheduleStep, step_from_json

JIT_LEVELS = ("O0", "O1", "O2")
# O2 sinks the whole graph, so it can spread independent branches over streams by default.
DEFAULT_O2_STREAMS = 4
FORMAT_VERSION = 10    # 2: lower_bound set at every level; 3: concurrent_bound; 4: typed schedule; 5: updates;
# 6: memory_report; 7: collective-aware execution order (a cached order would lose the overlap);
# 8: nodes deferred to their first use (a cached order would keep the larger plan); 9: updates written
# in place (an updated value may alias its parameter); 10: view_offsets (a fused AllReduce's contiguous blocks)


@dataclass
class CompiledGraph:
    """Everything an executor needs to run one captured graph; values are named by int ids.

    Values and memory
      ``values``: value id -> TensorDesc, for every value any field below mentions.
      ``inputs``: graph input value ids, in argument order; the executor copies the user's arrays to
      device buffers of their own. ``outputs``: value ids to read back, in order; an output may be a
      graph input, a constant or an alias.
      ``constants``: value id -> name of model parameters and literals (``constant_refs`` holds the
      graph's Constants, whose data never goes to JSON); persistent device buffers: literals uploaded
      once per graph, parameters shared by every graph that reads them (the executor's state buffers).
      ``updates``: parameter constant -> value id written into the parameter's buffer once the graph
      has run (optimizer updates, Assign, moving statistics); those values live to the graph's end.
      Most are written in place: the value is an alias of its parameter (``passes.write_updates_in_place``),
      so it has no memory of its own and there is nothing to copy.
      ``aliases``: alias value -> root value. An alias (output of a removed Reshape/ExpandDims/Squeeze/
      Flatten, or a broadcast view of a bias in a fused kernel) has its own desc but lives at its
      root's address; the root may be a node output, a graph input or a constant. Resolve every value
      id through ``aliases`` before looking up an address. ``view_offsets``: alias -> its byte offset in
      its root, for the parts of a fused AllReduce's contiguous blocks (``passes.contiguous_buckets``): such
      a block is a root no kernel outputs whole; the kernels writing its parts allocate it (the first one).
      ``memory == "static"`` (O2): node outputs live at ``workspace base + offsets[root id]`` in one
      workspace of ``workspace_size`` bytes (512-B aligned). ``lower_bound`` = peak live bytes of node
      outputs under the execution order (every level), what no allocator of this order can beat;
      ``concurrent_bound`` (O2) the same under the plan's streams and events (None if not computed).
      ``memory == "dynamic"`` (O0/O1): allocate each node output from the pool before its kernel,
      free the values in ``release_after[node_id]`` after it (node outputs and graph input copies).
      ``memory_report``: bytes by kind (weights, optimizer state, inputs; at the peak activations,
      gradients, update temporaries), see ``memory_report.py``.

    Kernels and streams
      ``kernels``: GraphKernel per launch in the global execution order (``exec_order``), each with the
      OpSignature (for the kernel cache), value ids of its inputs/outputs (in kernel argument order),
      its stream and full name (``origins``: the captured ops a fused kernel replaces). Kernel
      workspaces (KernelSource.workspace_sizes) are the executor's to allocate per launch.
      ``schedule``: the typed steps (``schedule.py``: Wait, Run, RecordAfter) in issue order over
      ``num_streams`` streams; ``events[e] = (producer node, consumer node)``. Any interleaving that
      keeps each stream's order is valid; the events order every cross-stream data edge. Same-stream
      edges carry no event.

    Identity
      ``graph_hash``: ``Graph.structure_hash()`` of the captured graph; ``cache_name`` adds the compile
      options and names the file ``rank_N/graph_cache/<cache_name>.json`` holding ``to_json()``.
    """

    graph_hash: str
    name: str
    jit_level: str
    exec_order: str
    max_streams: int
    values: dict[int, TensorDesc]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    constants: dict[int, str]
    aliases: dict[int, int]
    kernels: list[GraphKernel]
    schedule: list[ScheduleStep]
    num_streams: int
    events: list[tuple[int, int]]
    memory: str
    offsets: dict[int, int] = field(default_factory=dict)
    workspace_size: int = 0
    lower_bound: int = 0
    concurrent_bound: int | None = None
    release_after: dict[int, tuple[int, ...]] = field(default_factory=dict)
    updates: dict[int, int] = field(default_factory=dict)
    memory_report: MemoryReport | None = None
    constant_refs: dict[int, Constant] = field(default_factory=dict, repr=False)
    view_offsets: dict[int, int] = field(default_factory=dict)

    @property
    def cache_name(self) -> str:
        return cache_name(self.graph_hash, self.jit_level, self.exec_order, self.max_streams)

    def root(self, vid: int) -> int:
        return self.aliases.get(vid, vid)

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        """Structure only: parameter data stays out (``bind_constants`` reattaches it)."""
        return {
            "format_version": FORMAT_VERSION, "graph_hash": self.graph_hash, "name": self.name,
            "jit_level": self.jit_level, "exec_order": self.exec_order, "max_streams": self.max_streams,
            "values": {str(v): d.to_json() for v, d in self.values.items()},
            "inputs": list(self.inputs), "outputs": list(self.outputs),
            "constants": {str(v): n for v, n in self.constants.items()},
            "aliases": {str(a): r for a, r in self.aliases.items()},
            "kernels": [k.to_json() for k in self.kernels],
            "schedule": [step.to_json() for step in self.schedule], "num_streams": self.num_streams,
            "events": [list(e) for e in self.events],
            "memory": self.memory, "offsets": {str(v): o for v, o in self.offsets.items()},
            "workspace_size": self.workspace_size, "lower_bound": self.lower_bound,
            "concurrent_bound": self.concurrent_bound,
            "release_after": {str(n): list(vs) for n, vs in self.release_after.items()},
            "updates": {str(p): v for p, v in self.updates.items()},
            "memory_report": self.memory_report.to_json() if self.memory_report else None,
            "view_offsets": {str(v): o for v, o in self.view_offsets.items()},
        }

    @classmethod
    def from_json(cls, d: dict) -> "CompiledGraph":
        if d.get("format_version") != FORMAT_VERSION:
            raise InvalidParamError(f"compiled graph format {d.get('format_version')!r} is not "
                                    f"{FORMAT_VERSION}; recompile the graph")
        ints = lambda m: {int(k): v for k, v in m.items()}  # noqa: E731
        return cls(
            graph_hash=d["graph_hash"], name=d["name"], jit_level=d["jit_level"], exec_order=d["exec_order"],
            max_streams=d["max_streams"],
            values={int(v): TensorDesc(tuple(x["shape"]), x["dtype"]) for v, x in d["values"].items()},
            inputs=tuple(d["inputs"]), outputs=tuple(d["outputs"]), constants=ints(d["constants"]),
            aliases=ints(d["aliases"]), kernels=[GraphKernel.from_json(k) for k in d["kernels"]],
            schedule=[step_from_json(item) for item in d["schedule"]], num_streams=d["num_streams"],
            events=[tuple(e) for e in d["events"]], memory=d["memory"], offsets=ints(d["offsets"]),
            workspace_size=d["workspace_size"], lower_bound=d["lower_bound"],
            concurrent_bound=d["concurrent_bound"],
            release_after={int(n): tuple(vs) for n, vs in d["release_after"].items()},
            updates=ints(d["updates"]),
            memory_report=MemoryReport.from_json(d["memory_report"]) if d["memory_report"] else None,
            view_offsets=ints(d["view_offsets"]))

    def bind_constants(self, graph: Graph) -> "CompiledGraph":
        """Attach parameter data from a freshly captured ``graph`` of the same structure (in place)."""
        if graph.structure_hash() != self.graph_hash:
            raise InvalidParamError(f"graph {graph.name!r} (hash {graph.structure_hash()}) is not the graph "
                                    f"this plan was compiled from ({self.graph_hash})")
        self.constant_refs = {v: graph.constants[v] for v in self.constants}
        return self


# The modules whose code decides what a graph compiles to: a cached compiled graph is valid only for
# the compiler that made it, so their sources' digest is part of every graph cache name.
COMPILER_MODULES = ("passes", "plan", "memory_plan", "memory_report", "schedule", "execute_order", "ir",
                    "recompute", "parallel/pipeline")


@functools.lru_cache(maxsize=1)
def compiler_digest() -> str:
    """sha256 over the graph compiler's sources (:data:`COMPILER_MODULES`), computed once per process."""
    digest = hashlib.sha256()
    for name in COMPILER_MODULES:
        digest.update((Path(__file__).parent / f"{name}.py").read_bytes())
    return digest.hexdigest()


def cache_name(graph_hash: str, jit_level: str, exec_order: str, max_streams: int) -> str:
    options = hashlib.sha256(json.dumps([jit_level, exec_order, max_streams, compiler_digest()]).encode())
    return f"{graph_hash}_{jit_level}_{options.hexdigest()[:8]}"


def default_max_streams(jit_level: str) -> int:
    """Streams a level may use unless told otherwise: O2 spreads branches, O0/O1 keep one stream."""
    return DEFAULT_O2_STREAMS if jit_level == "O2" else 1


def optimize(graph: Graph, jit_level: str) -> Graph:
    """The graph passes of ``jit_level`` on a copy of ``graph``: what the execution order and the
    memory plan are computed for (bench/bench_memory_plan.py plans it under other orders)."""
    if jit_level not in JIT_LEVELS:
        raise InvalidParamError(f"jit_level must be one of {JIT_LEVELS}, got {jit_level!r}")
    g = graph.copy()
    user_outputs = len(g.outputs)
    # updated values are read after the graph has run: for every pass they are outputs
    g.outputs = g.outputs + [v for v in g.updates.values() if v not in g.outputs]
    g = remove_no_task(eliminate_common_subexpressions(g))
    if jit_level in ("O1", "O2"):
        g = fuse_conv_bn_reduce(fuse_norm_programs(fuse_epilogues(fuse_elementwise(g))))
    g = contiguous_buckets(g)
    # every level: the Selects stand for MindSpore's branch, which has no pass of its own at any level
    g = fuse_conditional_updates(g)
    g = optimizer_after_backward(order_phases(recompute_activations(g)))
    return write_updates_in_place(g, {g.root(v) for v in g.outputs[:user_outputs]})


def compile_graph(graph: Graph, jit_level: str, exec_order: str = DEFAULT_ORDER_POLICY,
                  max_streams: int | None = None) -> CompiledGraph:
    """Run the passes of ``jit_level`` on ``graph`` (unchanged) and lay out the result."""
    if jit_level not in JIT_LEVELS:
        raise InvalidParamError(f"jit_level must be one of {JIT_LEVELS}, got {jit_level!r}")
    if exec_order not in ORDER_POLICIES:
        raise InvalidParamError(f"exec_order must be one of {ORDER_POLICIES}, got {exec_order!r}")
    if max_streams is None:
        max_streams = default_max_streams(jit_level)
    if graph.has_loops():
        raise InvalidParamError(f"graph {graph.name!r} has While loops: compile its parts (graph.program.split); "
                                f"the step runner runs such a graph as a program")
    graph_hash = graph.structure_hash()
    g = optimize(graph, jit_level)
    node_order = defer_to_first_use(g, order(g, exec_order))
    streams = assign_streams(g, node_order, max_streams)
    nodes = {n.id: n for n in g.nodes}
    kernels = [GraphKernel(nid, nodes[nid].signature(g), nodes[nid].inputs, nodes[nid].outputs,
                          streams.stream_of[nid], nodes[nid].full_name, nodes[nid].origins)
               for nid in node_order]
    compiled = CompiledGraph(
        graph_hash=graph_hash, name=graph.name, jit_level=jit_level, exec_order=exec_order,
        max_streams=max_streams, values=dict(g.values), inputs=tuple(g.inputs),
        outputs=tuple(g.outputs[:len(graph.outputs)]),        # renamed by CSE; updated values excluded
        constants={v: c.name for v, c in g.constants.items()}, aliases=dict(g.aliases), kernels=kernels,
        schedule=streams.schedule, num_streams=streams.num_streams, events=streams.events, memory="dynamic",
        updates=dict(g.updates), memory_report=memory_report(g, node_order), constant_refs=dict(g.constants),
        view_offsets=dict(g.view_offsets))
    if jit_level == "O2":
        plan = static_plan(g, node_order, streams.stream_of, ALIGN)
        compiled.memory, compiled.offsets = "static", plan.offsets
        compiled.workspace_size, compiled.lower_bound = plan.size, plan.lower_bound
        compiled.concurrent_bound = plan.concurrent_bound
    else:
        compiled.release_after = release_after(g, node_order, mirror_inputs(g, node_order))
        compiled.lower_bound = peak_memory(g, node_order, ALIGN)
    return compiled


# MindSpore's kernel-by-kernel runtime (O0/O1) frees a gradient its mirror AllReduce read on the
# communication stream only when the compute stream next synchronises with it (waits for that AllReduce or a
# later one): its DryRun holds every raw gradient beside its AllReduce's output until the first kernel reading
# a reduced gradient (mp_dryrun.py MP=1: 128 MiB of each at the peak; the Llama's are freed just before its
# AdamWeightDecay's first gradient Cast). Other cross-stream values (a forward AllGather's input) are freed
# after their last reader, as there.
MIRROR_INPUTS_HELD_TO_END = True


def mirror_inputs(g: Graph, node_order: list[int]) -> dict[int, int]:
    """Root values the gradient mirror AllReduces (``parallel.sharding.MIRROR_SCOPE``; a sharded weight's gradient
    ReduceScatter, ``optimizer_shard.SHARD_GATHER_SCOPE``; data parallel's gradient AllReduces,
    ``passes.gradient_reductions``: MindSpore's DryRun holds a bucket's contiguous input block until its mean's
    first Mul, data_parallel_dryrun.json) read -> the position in
    ``node_order`` after which they may be freed (just before the first node reading the output of that
    AllReduce or of a later one; the last node if none), when :data:`MIRROR_INPUTS_HELD_TO_END`."""
    if not MIRROR_INPUTS_HELD_TO_END:
        return {}
    nodes = {n.id: n for n in g.nodes}
    names = {nid: nodes[nid].full_name for nid in node_order}
    reductions = gradient_reductions(g)
    mirrors = [i for i, nid in enumerate(node_order) if f"/{MIRROR_SCOPE}/" in names[nid] or nid in reductions or
               names[nid].startswith(f"{GRADIENTS_SCOPE}/") and f"/{SHARD_GATHER_SCOPE}/" in names[nid]]
    mirror_at = {g.root(v): i for i in mirrors for v in nodes[node_order[i]].outputs}
    first_reader: dict[int, int] = {}          # mirror position -> position of the first node reading its output
    on_comm = set(mirrors)                     # a mirror reading another's (communication stream) syncs nothing
    for i, nid in enumerate(node_order):
        if i in on_comm:
            continue
        for v in nodes[nid].inputs:
            q = mirror_at.get(g.root(v))
            if q is not None and q != i:
                first_reader.setdefault(q, i)
    held: dict[int, int] = {}
    sync = len(node_order)                     # suffix minimum over mirrors at or after this one
    for i in reversed(mirrors):
        sync = min(sync, first_reader.get(i, len(node_order)))
        for v in nodes[node_order[i]].inputs:
            held[g.root(v)] = max(held.get(g.root(v), 0), sync - 1)
    return held


def describe(compiled: CompiledGraph) -> dict[str, Any]:
    """A small summary for logs and reports."""
    return {"graph": compiled.name, "hash": compiled.graph_hash, "jit_level": compiled.jit_level,
            "kernels": len(compiled.kernels), "streams": compiled.num_streams, "events": len(compiled.events),
            "aliases": len(compiled.aliases), "memory": compiled.memory,
            "workspace_size": compiled.workspace_size, "lower_bound": compiled.lower_bound}
