"""Chakra execution traces to and from the emulated device: export a recorded run, run an imported one.

**Export** (:func:`export_chakra`): a trace (``.aetrace``, one per rank) is replayed as recorded while an
observer (``device.model.TaskObserver``) turns every device task into a Chakra node, in the order the
host issued them:

* a kernel is a ``COMP_NODE`` (``num_ops`` = its cube FLOPs + vector element-ops, ``tensor_size`` = the
  HBM bytes it moves, and our own ``cube_flops``, ``vector_ops``, ``dtype``, ``block_dim``);
* a copy is a ``MEM_LOAD_NODE`` when bytes come into device memory (host to device, device to device,
  a memset) and a ``MEM_STORE_NODE`` when they leave it (device to host), ``tensor_size`` its bytes;
* a collective is a ``COMM_COLL_NODE`` (``comm_type``, ``comm_size`` = the bytes of this rank's send
  buffer, ``pg_name`` its communicator, ``comm_ranks`` its world ranks, ``count``, ``dtype``, its op or
  root) or a ``COMM_SEND_NODE``/``COMM_RECV_NODE`` (``comm_dst``/``comm_src``), with what it waited for
  (``comm_arrival_s``, ``comm_start_s``: this rank's arrival, the latest arrival, from the trace);
* event records and waits are no nodes: they become control dependencies (a node after a wait depends on
  the last node before the record), as does stream order (a node depends on the one before it on its
  stream) and the order of collectives; a node that reads device memory has a data dependency on the
  last node that wrote it.

Every node has ``duration_micros``/``start_time_micros`` (Chakra's integer microseconds) and, exactly,
``issue_s`` (the host's issue time), ``start_s``, ``end_s`` (simulated seconds), ``stream``, ``device``.

**Import** (:func:`run_chakra`): each ``.et`` file is one rank, run alone on a device of the chosen preset.
Nodes are issued in dependency order (by id where free), each on the stream its ``stream`` attribute
names (stream 0 without one), at its ``issue_s`` (0 without one); a dependency on a node of another
stream is an event record after the parent and a wait before the child, so a node starts when its
stream reaches it and its parents have ended. Pricing: a COMP node with our ``cube_flops``/``block_dim``
is that kernel; another COMP node (a PyTorch run converted by Chakra) is a roofline kernel on every AI
core: ``num_ops`` as cube FLOPs when its name says matrix math (:data:`MATRIX_OPS`), else vector ops,
``tensor_size`` as HBM bytes, the dtype from its input types (fp16 for Half/BFloat16, else fp32); a CPU
op (``is_cpu_op``) holds a host lane of its own for its recorded duration; MEM nodes are copies priced
by the DMA model; COMM nodes are collectives priced by the interconnect model on their communicator
(``comm_ranks``, else every rank of the job), whose peers arrive when the trace says the latest did (our
``comm_arrival_s``/``comm_start_s``) or with this rank. So an exported run imports to the same
simulated times, node for node.
"""
from __future__ import annotations

import dataclasses
import heapq
import math
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ascendemu.device.collectives import (AllGather, AllReduce, AllToAll, Barrier, Broadcast, Collective,
                                          Communicator, Recv, ReduceOp, ReduceScatter, Send)
from ascendemu.device.cost import KernelCost
from ascendemu.device.fabric import DEFAULT_EXEC_TIMEOUT_S, RecordedWait, ReplayedFabric
from ascendemu.device.model import Event, Stream
from ascendemu.device.spec import DeviceSpec
from ascendemu.device.system import Node
from ascendemu.device.tasks import (CollectiveTask, CopyTask, KernelTask, RecordTask, Task, TimedTask,
                                    WaitTask)
from ascendemu.errors import InvalidFileError, short_repr
from ascendemu.hal.kernel import MAX_BLOCK_DIM, KernelFunction
from ascendemu.hal.validate import MAX_DEVICE_COUNT, MAX_U32, MAX_U64
from ascendemu.traces import aetrace as fmt
from ascendemu.traces import chakra as et
from ascendemu.traces.chakra import pb

from .replayer import MAX_WORLD_RANKS, Replayer

__all__ = ["MATRIX_OPS", "COMM_TYPES", "export_chakra", "rank_traces", "RankRun", "run_chakra"]

# A COMP node whose name has a word of this form does matrix math (its num_ops go to the cube
# unit: aten::mm, aten::addmm, ampere_sgemm_128x64_nn, aten::convolution ...); others are vector work.
MATRIX_OPS = re.compile(r"b?mm|addmm|baddbmm|matmul|linear|einsum|conv[a-z0-9]*|[a-z0-9]*gemm[a-z0-9]*")
# Chakra's CollectiveCommType of each collective kind (device.collectives); Send/Recv are node types
COMM_TYPES: dict[type[Collective], int] = {AllReduce: pb.ALL_REDUCE, AllGather: pb.ALL_GATHER,
                                           ReduceScatter: pb.REDUCE_SCATTER, Broadcast: pb.BROADCAST,
                                           AllToAll: pb.ALL_TO_ALL, Barrier: pb.BARRIER}
_KIND_OF_COMM_TYPE = {v: k for k, v in COMM_TYPES.items()}
HOST_LANE = -(1 << 20)            # the stream an imported CPU op runs on (not a device stream: the sync one is -1)
_ITEMSIZE = {"int8": 1, "float16": 2, "int32": 4, "float32": 4}
COPY_KINDS = ("H2D", "D2H", "D2D", "H2H")      # device.tasks.CopyTask.copy_kind


# -- export -------------------------------------------------------------------------------------------
class _Graph:
    """The Chakra nodes of one rank's replay (a ``device.model.TaskObserver``; module docstring)."""

    def __init__(self) -> None:
        self.nodes: list[pb.Node] = []
        self.waits: deque[fmt.CollectiveWait] = deque()      # the trace's, consumed as collectives issue
        self._open: dict[int, pb.Node] = {}                   # id(task) -> its node, until it has run
        self._last: dict[tuple[int, int], int] = {}           # (device, stream) -> its last node
        self._after_wait: dict[tuple[int, int], set[int]] = {}  # ctrl deps for the stream's next node
        self._recorded: dict[int, int | None] = {}            # id(event) -> the node its last record follows
        self._writes: dict[tuple[int, int], tuple[int, int]] = {}   # (device, start) -> (end, writer)
        self._collective: int | None = None                   # the last collective's node

    def issued(self, stream: Stream, task: Task) -> None:
        lane = (stream.device.id, stream.id)
        if isinstance(task, RecordTask):
            self._recorded[id(task.event)] = self._last.get(lane)
            return
        if isinstance(task, WaitTask):
            src = self._recorded.get(id(task.event))
            if src is not None:
                self._after_wait.setdefault(lane, set()).add(src)
            return
        node = pb.Node(id=len(self.nodes), name=task.name)
        ctrl = self._after_wait.pop(lane, set())
        if lane in self._last:
            ctrl.add(self._last[lane])
        reads, writes = self._describe(node, stream, task)
        if isinstance(task, CollectiveTask):
            if self._collective is not None:
                ctrl.add(self._collective)
            self._collective = node.id
        data = {w for s, e in reads for w in self._writers(stream.device.id, s, e)}
        node.data_deps.extend(sorted(data))
        node.ctrl_deps.extend(sorted(ctrl - data))
        for s, e in writes:
            self._wrote(stream.device.id, s, e, node.id)
        node.attr.extend([et.attr("stream", stream.id), et.attr("device", stream.device.id),
                          et.attr("issue_s", float(task.submit_time))])
        self._last[lane] = node.id
        self._open[id(task)] = node
        self.nodes.append(node)

    def finished(self, stream: Stream, task: Task, start: float, end: float) -> None:
        node = self._open.pop(id(task), None)
        if node is None:
            return
        node.start_time_micros = round(start * 1e6)
        node.duration_micros = round((end - start) * 1e6)
        node.attr.extend([et.attr("start_s", float(start)), et.attr("end_s", float(end))])
        if isinstance(task, CollectiveTask) and self.waits:     # its wait was read before it ran
            wait = self.waits.popleft()
            node.attr.extend([et.attr("comm_arrival_s", float(wait.arrival)),
                              et.attr("comm_start_s", float(wait.start))])

    def _writers(self, device: int, start: int, end: int) -> list[int]:
        return [w for (d, s), (e, w) in self._writes.items() if d == device and s < end and start < e]

    def _wrote(self, device: int, start: int, end: int, node: int) -> None:
        for key in [k for k, (e, _) in self._writes.items() if k[0] == device and start <= k[1] and e <= end]:
            del self._writes[key]
        self._writes[(device, start)] = (end, node)

    def _describe(self, node: pb.Node, stream: Stream, task: Task) -> tuple[list, list]:
        """Fill in the node's type and attributes; return the device ranges the task reads and writes."""
        add = node.attr.append
        if isinstance(task, KernelTask):
            cost = task.kernel.cost
            node.type = pb.COMP_NODE
            for name, value in (("is_cpu_op", False), ("num_ops", cost.cube_flops + cost.vector_ops),
                                ("tensor_size", cost.bytes), ("cube_flops", cost.cube_flops),
                                ("vector_ops", cost.vector_ops), ("dtype", cost.dtype),
                                ("block_dim", task.block_dim)):
                add(et.attr(name, value))
            reads, writes = [], []
            for spec, addr in zip(task.kernel.args, task.args):
                if spec.role in ("in", "out"):
                    (reads if spec.role == "in" else writes).append((addr, addr + spec.nbytes))
            return reads, writes
        if isinstance(task, CopyTask):
            node.type = pb.MEM_STORE_NODE if task.copy_kind == "D2H" else pb.MEM_LOAD_NODE
            add(et.attr("tensor_size", task.nbytes))
            add(et.attr("copy_kind", task.copy_kind))
            return list(task.reads), list(task.writes)
        if isinstance(task, CollectiveTask):
            self._collective_attrs(node, task)
            return list(task.reads), list(task.writes)
        node.type = pb.COMP_NODE                 # work of a given duration (a TimedTask ...)
        add(et.attr("is_cpu_op", False))
        add(et.attr("timed", True))
        return [], []

    def _collective_attrs(self, node: pb.Node, task: CollectiveTask) -> None:
        kind, comm = task.kind, task.comm
        add = node.attr.append
        if isinstance(kind, Send):
            node.type = pb.COMM_SEND_NODE
            add(et.attr("comm_dst", kind.peer))
        elif isinstance(kind, Recv):
            node.type = pb.COMM_RECV_NODE
            add(et.attr("comm_src", kind.peer))
        else:
            node.type = pb.COMM_COLL_NODE
            add(et.attr("comm_type", COMM_TYPES[type(kind)]))
        itemsize = _ITEMSIZE[task.dtype]
        add(et.attr("comm_size", kind.send_count(task.count, comm.size) * itemsize))
        add(et.attr("pg_name", comm.name))
        add(et.attr("comm_ranks", list(comm.ranks)))
        add(et.attr("count", task.count))
        add(et.attr("dtype", task.dtype))
        for f in dataclasses.fields(kind):
            add(et.attr(f.name, int(getattr(kind, f.name))))


class _Capture(Replayer):
    """A replay as recorded whose device tasks become a Chakra graph (:class:`_Graph`)."""

    def __init__(self, reader: fmt.TraceReader) -> None:
        super().__init__(reader)
        self.graph = _Graph()

    def _init(self, rec: fmt.Init) -> None:
        super()._init(rec)
        for d in self.rt.node.devices:
            d.observer = self.graph

    def _collective_wait(self, rec: fmt.CollectiveWait) -> None:
        super()._collective_wait(rec)
        self.graph.waits.append(rec)


def rank_traces(path: str | Path) -> list[Path]:
    """The traces of a job asked for as ``path``: itself, or its ranks' (``run.rank<N>.aetrace``)."""
    path = Path(path)
    if path.exists():
        return [path]
    found = sorted(path.parent.glob(f"{path.stem}.rank*{path.suffix}"),
                   key=lambda p: int(p.stem.rsplit(".rank", 1)[1]) if p.stem.rsplit(".rank", 1)[1].isdigit() else -1)
    if not found:
        raise InvalidFileError(f"{path}: no such trace, nor rank traces {path.stem}.rank<N>{path.suffix} beside it; "
                               "record one with `ascendemu run --record FILE script.py`")
    return found


def export_chakra(path: str | Path, directory: str | Path) -> list[Path]:
    """Write the Chakra ET of each rank of the trace(s) at ``path`` (:func:`rank_traces`) into ``directory``
    as ``<prefix>.<rank>.et``; returns their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for trace in rank_traces(path):
        reader = fmt.read_trace(trace)
        capture = _Capture(reader)
        capture.run()
        opts = reader.header.options
        rank = int(opts.get("world_rank", opts.get("rank", 0)) or 0)
        meta = pb.GlobalMetadata(version=et.VERSION)
        for name, value in (("schema", et.SCHEMA), ("producer", f"ascendemu {reader.header.ascendemu}"),
                            ("device", str(reader.header.preset.get("name"))), ("rank", rank),
                            ("rank_size", int(opts.get("rank_size", 1) or 1)), ("source", trace.name)):
            meta.attr.append(et.attr(name, value))
        prefix = trace.stem.rsplit(".rank", 1)[0]
        out.append(et.write_et(et.et_path(directory, prefix, rank), meta, capture.graph.nodes))
    return out


# -- import -------------------------------------------------------------------------------------------
@dataclass
class RankRun:
    """One rank's ET run on the emulated device: simulated seconds from the first issue to the last end
    (``makespan_s``), per node its simulated end, how its nodes were priced, and the ET's own recorded
    span (the first start to the last end, microseconds; 0 when it records no start times)."""

    path: Path
    rank: int
    nodes: int
    makespan_s: float
    recorded_us: float
    ends: dict[int, float] = field(default_factory=dict)
    priced: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    ignored_ctrl: int = 0          # control dependencies not followed (a cycle, an absent node)


class _Attrs:
    """A node's (or the metadata's) attributes, read with the type and range the import needs: a Chakra ET
    is data, so a value of another type or out of range is an :class:`InvalidFileError` naming the file,
    the node and the attribute (an int attribute may be any of the protobuf int fields, a number also a
    double)."""

    def __init__(self, path: Path, where: str, message: pb.Node | pb.GlobalMetadata) -> None:
        self.path, self.where, self.values = path, where, et.attrs(message)

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def _bad(self, name: str, rule: str) -> InvalidFileError:
        return InvalidFileError(f"{self.path}: {self.where}: attribute {name!r} is {short_repr(self.values[name])}: "
                                f"must be {rule}")

    def int(self, name: str, default: int, low: int = 0, high: int = MAX_U64) -> int:
        v = self.values.get(name, default)
        if type(v) is not int or not low <= v <= high:
            raise self._bad(name, f"an int in {low}..{high}")
        return v

    def number(self, name: str, default: float) -> float:
        """A finite, non-negative number (seconds)."""
        v = self.values.get(name, default)
        if type(v) not in (int, float) or not math.isfinite(v) or v < 0:
            raise self._bad(name, "a finite, non-negative number")
        return float(v)

    def text(self, name: str, default: str) -> str:
        v = self.values.get(name, default)
        if type(v) is not str:
            raise self._bad(name, "a string")
        return v

    def flag(self, name: str) -> bool:
        v = self.values.get(name, False)
        if type(v) is not bool and v not in (0, 1):
            raise self._bad(name, "a bool")
        return bool(v)

    def ints(self, name: str, default: list[int], high: int) -> list[int]:
        v = self.values.get(name, default)
        if type(v) is not list or any(type(x) is not int or not 0 <= x <= high for x in v):
            raise self._bad(name, f"a list of ints in 0..{high}")
        return v


def run_chakra(path: str | Path, spec: DeviceSpec | None = None) -> list[RankRun]:
    """Run the Chakra ET file, or every ``.et`` of the directory, ``path`` on devices of ``spec`` (default:
    the preset the ET was exported from, else the default preset); one :class:`RankRun` per file."""
    files = et.et_files(path)
    return [_Importer(f, index, len(files), spec).run() for index, f in enumerate(files)]


class _Importer:
    """One rank's ET on a node of its own (module docstring)."""

    def __init__(self, path: Path, index: int, world: int, spec: DeviceSpec | None) -> None:
        self.path = path
        self.meta, nodes = et.read_et(path)
        meta = _Attrs(path, "GlobalMetadata", self.meta)
        if spec is None:
            from ascendemu.device.spec import PRESETS, get_spec
            device = meta.text("device", "")
            spec = get_spec(device) if device in PRESETS else get_spec()
        self.spec = spec
        self.world = max(meta.int("rank_size", world, 1, MAX_WORLD_RANKS), world)
        self.rank = meta.int("rank", index, 0, self.world - 1)
        self.nodes = {n.id: n for n in nodes}
        self.attrs = {n.id: _Attrs(path, f"node {n.id} ({short_repr(n.name)})", n) for n in nodes}
        devices = 1 + max((a.int("device", 0, 0, MAX_DEVICE_COUNT - 1) for a in self.attrs.values()), default=0)
        self.node = Node(spec, device_count=devices, backing=False)
        self.streams: dict[tuple[int, int], Stream] = {}
        self.events: dict[int, Event] = {}
        self.comms: dict[tuple[str, tuple[int, ...]], Communicator] = {}
        self.waits: deque[RecordedWait] = deque()
        self.fabric = ReplayedFabric(self.rank, self.world, self.waits)
        self.result = RankRun(path, self.rank, len(nodes), 0.0, _recorded_span(nodes))
        self._node_of: dict[int, int] = {}          # id(task) -> its node, until it has run
        for d in self.node.devices:
            d.observer = self

    def issued(self, stream: Stream, task: Task) -> None:
        """(``device.model.TaskObserver``) nothing to note when a task is enqueued."""

    def finished(self, stream: Stream, task: Task, start: float, end: float) -> None:
        i = self._node_of.pop(id(task), None)
        if i is not None:
            self.result.ends[i] = end

    def run(self) -> RankRun:
        order, parents, missing, ignored = _dependencies(self.path, self.nodes)
        if missing:
            self.result.notes.append(f"{missing} data dependency(ies) on nodes the file does not hold were ignored")
        self.result.ignored_ctrl = ignored
        if ignored:
            self.result.notes.append(f"{ignored} control dependency(ies) ignored (as Chakra's feeder, which follows "
                                     "data dependencies): they would close a cycle or name nodes the file does "
                                     "not hold")
        lane_of = {i: self._lane(i) for i in order}
        crossing = {p for i in order for p in parents[i] if lane_of[p] != lane_of[i]}
        for i in order:
            stream = self._stream(lane_of[i])
            submit = self.attrs[i].number("issue_s", 0.0)
            for p in parents[i]:
                if lane_of[p] != lane_of[i]:
                    stream.enqueue(WaitTask(f"wait for {p}", submit, self.events[p]))
            task = self._task(i, submit)
            self._node_of[id(task)] = i
            stream.enqueue(task)
            if i in crossing:
                self.events[i] = Event(stream.device, i, 0)
                stream.enqueue(RecordTask(f"after {i}", submit, self.events[i]))
        self.node.env.run()
        self.result.makespan_s = self.node.env.now
        return self.result

    def _lane(self, i: int) -> tuple[int, int]:
        a = self.attrs[i]
        if a.flag("is_cpu_op"):
            return (0, HOST_LANE)
        return (a.int("device", 0, 0, MAX_DEVICE_COUNT - 1), a.int("stream", 0, -(1 << 63), (1 << 63) - 1))

    def _stream(self, lane: tuple[int, int]) -> Stream:
        s = self.streams.get(lane)
        if s is None:
            s = self.streams[lane] = Stream(self.node.devices[lane[0]], lane[1])
        return s

    def _count(self, how: str) -> None:
        self.result.priced[how] = self.result.priced.get(how, 0) + 1

    def _task(self, i: int, submit: float) -> Task:
        n, a = self.nodes[i], self.attrs[i]
        name = n.name or f"node {i}"
        if n.type == pb.COMP_NODE:
            if a.flag("is_cpu_op") or a.flag("timed"):
                self._count("recorded duration")
                if "end_s" in a:
                    seconds = a.number("end_s", 0.0) - a.number("start_s", 0.0)
                    if seconds < 0:
                        raise InvalidFileError(f"{self.path}: {a.where}: it ends (end_s) before it starts (start_s)")
                else:
                    seconds = n.duration_micros * 1e-6
                return TimedTask(name, submit, seconds)
            if "block_dim" in a:
                self._count("kernel (exported cost)")
                cost = KernelCost(a.int("cube_flops", 0), a.int("vector_ops", 0), a.int("tensor_size", 0),
                                  a.text("dtype", "float16"))
                block_dim = a.int("block_dim", 1, 1, MAX_BLOCK_DIM)
            else:
                self._count("roofline (num_ops, tensor_size)")
                cost = roofline_cost(n, a)
                block_dim = self.spec.ai_cores
            return KernelTask(name, submit, KernelFunction(name, 0, block_dim, (), cost), block_dim, (), ())
        if n.type in (pb.MEM_LOAD_NODE, pb.MEM_STORE_NODE):
            self._count("copy")
            kind = a.text("copy_kind", "D2H" if n.type == pb.MEM_STORE_NODE else "H2D")
            if kind not in COPY_KINDS:
                raise InvalidFileError(f"{self.path}: {a.where}: copy_kind {kind!r} is none of {COPY_KINDS}")
            return CopyTask(name, submit, _nothing, a.int("tensor_size", 0), kind)
        if n.type in (pb.COMM_COLL_NODE, pb.COMM_SEND_NODE, pb.COMM_RECV_NODE):
            self._count("collective")
            return self._collective(n, a, name, submit)
        self._count("skipped (no work)")
        return TimedTask(name, submit, 0.0)

    def _collective(self, n: pb.Node, a: _Attrs, name: str, submit: float) -> CollectiveTask:
        ranks = tuple(a.ints("comm_ranks", list(range(self.world)), MAX_WORLD_RANKS - 1))
        if self.rank not in ranks or len(set(ranks)) != len(ranks):
            raise InvalidFileError(f"{self.path}: {a.where} is a collective of ranks {short_repr(list(ranks))}, "
                                   f"which must be distinct and include this file's rank {self.rank}")
        key = (a.text("pg_name", "world"), ranks)
        comm = self.comms.get(key)
        if comm is None:
            comm = self.comms[key] = Communicator(key[0], ranks, self.fabric, self.spec, DEFAULT_EXEC_TIMEOUT_S)
        kind = _kind(n, a, len(ranks))
        dtype = a.text("dtype", "float32")
        if dtype not in _ITEMSIZE:
            raise InvalidFileError(f"{self.path}: {a.where}: dtype {dtype!r} is none of {sorted(_ITEMSIZE)}")
        if "count" in a:
            count = a.int("count", 0)
        else:
            per = kind.send_count(1, comm.size) or kind.recv_count(1, comm.size)
            count = a.int("comm_size", 0) // _ITEMSIZE[dtype] // per if per else 0
        arrival, start = a.values.get("comm_arrival_s", -1.0), a.values.get("comm_start_s", -1.0)
        if "comm_arrival_s" in a or "comm_start_s" in a:
            arrival, start = a.number("comm_arrival_s", 0.0), a.number("comm_start_s", 0.0)
        self.waits.append(RecordedWait(comm.key, 0, arrival, start))
        return CollectiveTask(name, submit, kind, comm, count, dtype, None, None, self.node.collectives,
                              self.node.env.event())


def _dependencies(path: Path, nodes: dict[int, pb.Node]) -> tuple[list[int], dict[int, list[int]], int, int]:
    """Each node's parents as the import follows them, as Chakra's feeder does: every data dependency on a
    node the file holds (one on itself or an absent node is counted as missing); a control dependency
    only where it is consistent with them: one on an absent node, or one that lies on a cycle (its two
    nodes in one strongly connected component) where the import has to break the cycle, is ignored and
    counted. A cycle of data dependencies alone is refused. Returns the node ids in the order they are
    issued, each node's parents, and the counts of missing data and ignored control dependencies."""
    missing = ignored = 0
    data: dict[int, set[int]] = {}
    ctrl: dict[int, set[int]] = {}
    for i, n in nodes.items():
        data[i] = {p for p in n.data_deps if p in nodes and p != i}
        missing += sum(1 for p in n.data_deps if p not in nodes or p == i)
        ctrl[i] = {p for p in n.ctrl_deps if p in nodes and p != i} - data[i]
        ignored += sum(1 for p in n.ctrl_deps if p not in nodes or p == i)
    component = _components({i: data[i] | ctrl[i] for i in nodes})
    # Kahn's algorithm, the lowest id first among the ready ones; when no node is ready, the lowest-id
    # node whose unmet parents are all control ones within its component drops those (a cycle broken)
    hard = {i: sum(1 for p in data[i] | ctrl[i] if component[p] != component[i] or p in data[i]) for i in nodes}
    pending = {i: len(data[i]) + len(ctrl[i]) for i in nodes}
    children: dict[int, list[int]] = {}
    for i in nodes:
        for p in data[i] | ctrl[i]:
            children.setdefault(p, []).append(i)
    ready = [i for i in nodes if pending[i] == 0]
    breakable = [i for i in nodes if pending[i] and hard[i] == 0]
    heapq.heapify(ready)
    heapq.heapify(breakable)
    done: set[int] = set()
    order = []
    while len(done) < len(nodes):
        if not ready:
            while breakable and (breakable[0] in done or pending[breakable[0]] == 0):
                heapq.heappop(breakable)
            if not breakable:
                stuck = sorted(set(nodes) - done)[:5]
                raise InvalidFileError(f"{path}: the data dependencies of nodes {stuck} ... form a cycle; a Chakra "
                                       "ET is a directed acyclic graph")
            i = heapq.heappop(breakable)
            dropped = {p for p in ctrl[i] if p not in done}
            ctrl[i] -= dropped
            ignored += len(dropped)
            pending[i] = 0
            heapq.heappush(ready, i)
        i = heapq.heappop(ready)
        done.add(i)
        order.append(i)
        for c in children.get(i, ()):
            if c in done or pending[c] == 0 or (i not in data[c] and i not in ctrl[c]):
                continue                                 # released already, or an edge dropped
            pending[c] -= 1
            if i in data[c] or component[i] != component[c]:
                hard[c] -= 1
                if hard[c] == 0 and pending[c]:
                    heapq.heappush(breakable, c)
            if pending[c] == 0:
                heapq.heappush(ready, c)
    return order, {i: sorted(data[i] | ctrl[i]) for i in nodes}, missing, ignored


def _components(parents: dict[int, set[int]]) -> dict[int, int]:
    """The strongly connected component of each node (Tarjan's algorithm, iterative: an ET may hold
    millions of nodes), numbered; two nodes share one when each reaches the other."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    component: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    count = 0
    for root in parents:
        if root in index:
            continue
        work = [(root, iter(parents[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(parents[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                count += 1
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component[w] = count
                    if w == v:
                        break
    return component


def _kind(n: pb.Node, a: _Attrs, size: int) -> Collective:
    """The collective a COMM node runs, on a communicator of ``size`` ranks."""
    if n.type == pb.COMM_SEND_NODE:
        return Send(a.int("peer", a.int("comm_dst", 0, 0, size - 1), 0, size - 1))
    if n.type == pb.COMM_RECV_NODE:
        return Recv(a.int("peer", a.int("comm_src", 0, 0, size - 1), 0, size - 1))
    cls = _KIND_OF_COMM_TYPE.get(a.int("comm_type", pb.ALL_REDUCE, 0, MAX_U32))
    if cls is None:
        raise InvalidFileError(f"{a.path}: {a.where}: comm_type {a.values.get('comm_type')} has no HCCL collective "
                               f"here; supported: {[pb.CollectiveCommType.Name(v) for v in COMM_TYPES.values()]}")
    fields = {}
    if "op" in a:
        fields["op"] = ReduceOp(a.int("op", 0, 0, max(ReduceOp)))
    if "root" in a and cls is Broadcast:
        fields["root"] = a.int("root", 0, 0, size - 1)
    return cls(**fields)


def roofline_cost(n: pb.Node, a: _Attrs) -> KernelCost:
    """A COMP node without an Ascend kernel as the cost model's work: ``num_ops`` as cube FLOPs for
    matrix math (a word of its name matches :data:`MATRIX_OPS`), else vector element-ops; ``tensor_size`` as HBM bytes;
    fp16 when its inputs are Half/BFloat16, else fp32."""
    ops = a.int("num_ops", 0)
    words = re.split(r"[^a-z0-9]+", n.name.lower())
    matrix = any(MATRIX_OPS.fullmatch(word) for word in words)
    types = n.inputs.types.lower()
    dtype = "float16" if ("half" in types or "bfloat16" in types or "float16" in types) else "float32"
    return KernelCost(ops if matrix else 0, 0 if matrix else ops, a.int("tensor_size", 0), dtype)


def _recorded_span(nodes: list[pb.Node]) -> float:
    """The ET's own timeline, first start to last end (microseconds); 0 when it records no start times."""
    timed = [n for n in nodes if n.start_time_micros]
    if not timed:
        return 0.0
    return float(max(n.start_time_micros + n.duration_micros for n in timed) - min(n.start_time_micros for n in timed))


def _nothing() -> None:
    """An imported copy moves no bytes (the device has no backing)."""
