"""Replaying a recorded run: the trace's calls re-issued against a fresh runtime, with no script and no
front end, as recorded or under a what-if (another preset, clock, HBM bandwidth, pool policy, one stream).

The replay drives the HAL through its public calls, in the recorded order, so every call pays its
modelled host cost and every task its simulated time exactly as in the run: on the same preset the
figures (``hal.record.figures``: simulated time per stream, per AI core, pool statistics, step times)
come out bit for bit as recorded. Handles and addresses the replay gets are mapped from the recorded
ones (a record's field says what it holds: ``traces.aetrace.FIELD_OPERANDS``), so a what-if that moves
allocations (``--pool first-fit``) or merges streams replays the same program.

By default a replay is fast: the node has no host memory behind the device (as in DryRun) and each
kernel is its recorded launch facts (blockDim, arguments, cost) without code, so nothing is computed.
``compute=True`` gives the device host memory, loads each kernel the trace names from the kernel cache
(by its recorded signature; ``build=True`` builds the missing ones, else they are priced only) and feeds
the host bytes the run recorded (``--record-data``); every device-to-host copy the run digested is
checked against the bytes the replay computed. Code is never loaded from a path a trace names.

A trace is data, possibly hostile: the replay issues only the record kinds the format defines, each
through the runtime method its class names (never a name read from the file), after checking what the
runtime does not: handles and kernels a record names were made by earlier records, a kernel's launch
facts are ones the runtime launches (blockDim within ``hal.kernel.MAX_BLOCK_DIM``, non-negative costs),
the preset is one a node can be built of. Anything wrong is a typed error naming the file, the record's
number and what is wrong (the runtime's own refusals too, with the same context).
"""
from __future__ import annotations

import dataclasses
import math
import time
from bisect import bisect_right, insort
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ascendemu.device import collectives
from ascendemu.device.collectives import Collective
from ascendemu.device.cost import LOOP_SINK_TASK_BY_NAME, Gemm, KernelCost, LoopSinkTask
from ascendemu.device.fabric import RecordedWait, ReplayedFabric
from ascendemu.device.pool import POOL_POLICIES
from ascendemu.device.spec import DeviceSpec, get_spec
from ascendemu.errors import (AclError, FeatureNotSupportedError, InvalidFileError, InvalidParamError,
                              MemoryAllocationError, short_repr)
from ascendemu.hal import steps as hal_steps
from ascendemu.hal.api import ApiCall, api_call
from ascendemu.hal.kernel import MAX_BLOCK_DIM, ArgSpec, KernelFunction
from ascendemu.hal.launch import Binary
from ascendemu.hal.record import StepClock, digest
from ascendemu.hal.runtime import Runtime
from ascendemu.hal.validate import MAX_U32, MAX_U64
from ascendemu.traces import aetrace as fmt

__all__ = ["MAX_PRESET_UNITS", "MAX_WORLD_RANKS", "PRESET_UNIT_FIELDS", "ReplayResult", "Replayer", "WhatIf",
           "replay", "spec_of"]

# What a replay lets a trace ask of it (docs/TRACE_FORMAT.md, Limits): the node keeps state per AI core,
# DMA engine ... of its preset, and a collective meets every peer of its communicator.
PRESET_UNIT_FIELDS = ("ai_cores", "vector_cores", "aicpu_cores", "dma_engines", "hccs_ports")
MAX_PRESET_UNITS = 4096              # each of PRESET_UNIT_FIELDS: far beyond any chip, small enough to build
MAX_WORLD_RANKS = 1 << 16            # ranks of a replayed (or imported) world
KERNEL_ARG_ROLES = ("in", "out", "workspace")     # hal.kernel.ArgSpec.role
# Every public runtime call by name (names from the Runtime class, never from a file): its host cost
_API_CALLS: dict[str, ApiCall] = {name: call for name in dir(Runtime)
                                  if (call := api_call(getattr(Runtime, name))) is not None}
# The kinds a graph launch's steps and a Communicate's collective may be, by class name
_STEP_KINDS: dict[str, type] = {name: getattr(hal_steps, name) for name in hal_steps.__all__ if name != "Step"}
_COLLECTIVE_KINDS: dict[str, type[Collective]] = {
    name: cls for name in collectives.__all__
    if isinstance(cls := getattr(collectives, name), type) and issubclass(cls, Collective) and cls is not Collective}
# Records a replay handles before the trace's Init (or after its Finalize): no runtime call among them
_WITHOUT_NODE = (fmt.Init, fmt.Kernel, fmt.StepBegin, fmt.StepEnd, fmt.Failed, fmt.End, fmt.CollectiveWait)


def spec_of(preset: Any) -> DeviceSpec:
    """The DeviceSpec a trace's preset dict describes (fields a newer version added are ignored, missing
    ones take their defaults). Each field is checked, as a trace is data: a name is a str, a flag a bool, a
    number a positive finite one of the field's type, a count of :data:`PRESET_UNIT_FIELDS` at most
    :data:`MAX_PRESET_UNITS` (the node keeps state per unit)."""
    if type(preset) is not dict:
        raise InvalidParamError(f"a device preset is a dict of DeviceSpec fields, not {type(preset).__name__}")
    values = {}
    for f in dataclasses.fields(DeviceSpec):
        if f.name not in preset:
            continue
        v = preset[f.name]
        if f.type == "str":
            ok, rule = type(v) is str, "a str"
        elif f.type == "bool":
            ok, rule = type(v) is bool, "true or false"
        elif f.type == "int":
            top = MAX_PRESET_UNITS if f.name in PRESET_UNIT_FIELDS else MAX_U64
            ok, rule = type(v) is int and 1 <= v <= top, f"an int in 1..{top}"
        else:
            ok, rule = type(v) in (int, float) and math.isfinite(v) and v > 0, "a positive finite number"
        if not ok:
            raise InvalidParamError(f"device preset field {f.name!r} is {short_repr(v)}: must be {rule}")
        values[f.name] = v
    return DeviceSpec(**values)


@dataclass(frozen=True)
class WhatIf:
    """What a replay changes. ``device``: another preset (every field of it); ``clock_mhz`` /
    ``hbm_gbps``: the AI core clock / HBM bandwidth of the (recorded or chosen) preset; ``hccs_gbps``: the
    bandwidth of each HCCS port (collectives re-priced by the interconnect model); ``streams=1``:
    every stream's work on one stream per device (events between them become no-ops in order);
    ``pool``: the pools' placement policy (``device.pool.POOL_POLICIES``). The execution order is no
    what-if: the graph compiler chose it before the first recorded call (record the run in the other
    order, ``ascendemu run --exec-order bfs --record``, and compare the two traces)."""

    device: str | None = None
    clock_mhz: float | None = None
    hbm_gbps: float | None = None
    hccs_gbps: float | None = None
    streams: int | None = None
    pool: str | None = None

    def __post_init__(self) -> None:
        if self.device is not None:
            get_spec(self.device)                  # an unknown preset raises, naming the valid ones
        for name in ("clock_mhz", "hbm_gbps", "hccs_gbps"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0):
                raise InvalidParamError(f"what-if {name} must be a positive number, got {v!r}")
        if self.streams is not None and self.streams != 1:
            raise FeatureNotSupportedError(f"what-if streams={self.streams!r}: only 1 (every stream collapsed "
                                           "into one) can be replayed; more streams need the graph's "
                                           "dependencies, which a trace of runtime calls does not hold")
        if self.pool is not None and self.pool not in POOL_POLICIES:
            raise InvalidParamError(f"unknown pool policy {self.pool!r}; choose one of {sorted(POOL_POLICIES)}")

    @property
    def active(self) -> bool:
        return any(getattr(self, f.name) is not None for f in dataclasses.fields(self))

    def spec(self, recorded: DeviceSpec) -> DeviceSpec:
        """The device preset to replay on."""
        spec = get_spec(self.device) if self.device is not None else recorded
        changes = {}
        if self.clock_mhz is not None:
            changes["clock_hz"] = self.clock_mhz * 1e6
        if self.hbm_gbps is not None:
            changes["hbm_bandwidth"] = self.hbm_gbps * 1e9
        if self.hccs_gbps is not None:
            changes["hccs_bandwidth"] = self.hccs_gbps * 1e9
        return dataclasses.replace(spec, **changes) if changes else spec

    def describe(self, recorded: DeviceSpec, recorded_pool: str) -> list[str]:
        """One line per change, from what was recorded to what the replay uses."""
        out, spec = [], self.spec(recorded)
        if self.device is not None:
            out.append(f"device preset {recorded.name} -> {spec.name}")
        if self.clock_mhz is not None:
            out.append(f"AI core clock {recorded.clock_hz / 1e6:g} -> {spec.clock_hz / 1e6:g} MHz")
        if self.hbm_gbps is not None:
            out.append(f"HBM bandwidth {recorded.hbm_bandwidth / 1e9:g} -> {spec.hbm_bandwidth / 1e9:g} GB/s")
        if self.hccs_gbps is not None:
            out.append(f"HCCS port bandwidth {recorded.hccs_bandwidth / 1e9:g} -> {spec.hccs_bandwidth / 1e9:g} GB/s")
        if self.streams is not None:
            out.append("every stream collapsed into its device's default stream")
        if self.pool is not None:
            out.append(f"pool placement {recorded_pool} -> {self.pool}")
        return out


@dataclass
class ReplayResult:
    """What a replay did and measured. ``figures`` are ``hal.record.figures`` of the replayed node;
    ``recorded`` the trace's ``End`` (None for a partial trace); ``stop`` where a partial trace ended."""

    figures: dict
    records: int
    kernels: int = 0
    from_cache: int = 0
    priced: int = 0
    digests_checked: int = 0
    digests_matched: int = 0
    stop: fmt.Stop | None = None
    recorded: fmt.End | None = None
    host_wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)


class _AddressMap:
    """Recorded allocations (device ``malloc``, host ``malloc_host``) -> the replay's: an address inside a
    recorded allocation maps to the same offset in the replay's, any other stays as recorded (the
    runtime checks every address it is given against its live allocations)."""

    def __init__(self) -> None:
        self.dev: dict[int, tuple[int, int]] = {}    # recorded start -> (replayed start, bytes)
        self.host: dict[int, tuple[int, int]] = {}
        self._starts: dict[int, list[int]] = {id(self.dev): [], id(self.host): []}   # sorted keys of each

    def add(self, table: dict, recorded: int, got: int, nbytes: int) -> None:
        if recorded in table:
            raise InvalidFileError(f"address {recorded:#x} is returned again while its allocation is live")
        table[recorded] = (got, nbytes)
        insort(self._starts[id(table)], recorded)

    def remove(self, table: dict, recorded: Any, call: str) -> int:
        """The replayed start of the live allocation the recording freed at ``recorded``."""
        entry = table.pop(recorded, None) if type(recorded) is int else None
        if entry is None:
            raise InvalidFileError(f"it frees {short_repr(recorded)}, which no live {call} record returned")
        starts = self._starts[id(table)]
        del starts[bisect_right(starts, recorded) - 1]
        return entry[0]

    def clear(self) -> None:
        for table in (self.dev, self.host):
            table.clear()
            self._starts[id(table)].clear()

    def device(self, addr: Any) -> Any:
        """A recorded device (or host) address as the replay's; None stays None (an absent buffer)."""
        if type(addr) is not int:
            if addr is None:
                return None
            raise InvalidFileError(f"address {short_repr(addr)} is a {type(addr).__name__}, not an int")
        hit = self.dev.get(addr)
        if hit is not None:
            return hit[0]
        return self._inside(self.dev, addr, self._inside(self.host, addr, addr))

    def host_ptr(self, addr: Any) -> Any:
        if type(addr) is not int:
            raise InvalidFileError(f"host address {short_repr(addr)} is a {type(addr).__name__}, not an int")
        return self._inside(self.host, addr, addr)

    def _inside(self, table: dict, addr: int, otherwise: int) -> int:
        starts = self._starts[id(table)]
        i = bisect_right(starts, addr) - 1
        if i >= 0:
            new, size = table[starts[i]]
            if addr < starts[i] + size:
                return new + (addr - starts[i])
        return otherwise


class Replayer:
    """Replays one trace (see the module docstring) on a runtime of its own. ``trace``: write a
    Chrome/Perfetto trace of the replay to this path. ``observe`` / ``collect_trace``: for an observer
    such as the HTML report (``replay.report``), which reads the replay's own node as it goes."""

    def __init__(self, reader: fmt.TraceReader, whatif: WhatIf | None = None, compute: bool = False,
                 build: bool = False, cache_root: str | None = None, trace: str | None = None,
                 observe: Callable[[fmt.Record], None] | None = None, collect_trace: bool = False) -> None:
        self.reader = reader
        self.whatif = whatif or WhatIf()
        self.compute = compute
        self.build = build
        root = reader.header.options.get("kernel_cache_root")
        self.cache_root = cache_root if cache_root is not None else (root if type(root) is str else None)
        self.trace = trace
        # an observer (the HTML report): called with each record before it is issued, so it sees the
        # runtime (``self.rt``) as the records before it left it; ``collect_trace``: the node collects a
        # Chrome trace (``self.rt.node.trace``) even when no file is written
        self.observe = observe
        self.collect_trace = collect_trace or trace is not None
        self.rt = Runtime()              # a runtime of its own: the process-wide one is left alone
        self.clock = StepClock()
        self.kernels: dict[int, KernelFunction] = {}
        self.handles: dict[int, int] = {}            # recorded handle -> replayed handle
        self.addresses = _AddressMap()
        self._collapsed: set[int] = set()            # recorded streams merged into a default stream
        self._cache = None
        self.result = ReplayResult({}, 0)
        self._handlers: dict[type, Callable[[Any], None]] = {
            fmt.Init: self._init, fmt.Finalize: self._finalize, fmt.Kernel: self._kernel,
            fmt.StepBegin: self.clock.annotate, fmt.StepEnd: self.clock.annotate, fmt.Failed: self._failed,
            fmt.Malloc: self._malloc, fmt.Free: self._free, fmt.MallocHost: self._malloc_host,
            fmt.FreeHost: self._free_host, fmt.Memcpy: self._memcpy, fmt.CreateStream: self._create_stream,
            fmt.DestroyStream: self._destroy_stream, fmt.LoadBinary: self._load_binary, fmt.End: self._end,
            fmt.CollectiveWait: self._collective_wait, fmt.CommInitWorld: self._comm_init_world,
            fmt.Header: _refuse, fmt.Unknown: _refuse,
        }
        self._waits: deque[RecordedWait] = deque()   # what the recorded collectives waited for, in order
        self._translate = {
            fmt.Operand.VALUE: None, fmt.Operand.POINTER: self._pointer,
            fmt.Operand.DEVICE_PTR: self.addresses.device, fmt.Operand.HOST_PTR: self.addresses.host_ptr,
            fmt.Operand.ADDRESSES: self._addresses,
            fmt.Operand.STREAM: self._stream, fmt.Operand.EVENT: self._handle, fmt.Operand.CONTEXT: self._handle,
            fmt.Operand.BINARY: self._handle, fmt.Operand.FUNCTION: self._function,
            fmt.Operand.KERNEL: self._function, fmt.Operand.STEPS: self._steps, fmt.Operand.COMM: self._handle,
            fmt.Operand.COLLECTIVE: _collective, fmt.Operand.LOOP_TASK: _loop_task,
        }
        self._step_fields: dict[type, list] = {}

    # -- driving ----------------------------------------------------------------------------------
    def run(self) -> ReplayResult:
        """Issue every record in order. A record that is wrong, or that the runtime refuses, raises a typed
        error naming the trace, the record's number (1 = the first after the header) and its kind."""
        wall0 = time.perf_counter()
        result = self.result
        handlers = self._handlers
        n = 0
        observe = self.observe
        for rec in self.reader:
            n += 1
            if observe is not None:
                observe(rec)
            handler = handlers.get(type(rec))
            if handler is None:
                handler = handlers[type(rec)] = self._generic(type(rec))
            try:
                if self.rt.node is None and type(rec) not in _WITHOUT_NODE:
                    raise InvalidFileError("it comes before the trace's Init record (or after its Finalize): a "
                                           "runtime call needs an initialised runtime")
                handler(rec)
            except AclError as e:
                raise type(e)(f"{self.reader.path}: record {n} ({type(rec).__name__}): {e.message}", e.code) from None
        result.records = n
        result.stop = self.reader.stop
        result.recorded = self.reader.end
        result.figures = self.clock.figures()
        result.host_wall_s = time.perf_counter() - wall0
        if self.rt.node is not None:
            self._write_trace()
            self.rt.finalize()
        return result

    def _write_trace(self) -> None:
        """The replay's Chrome trace, when asked (a node the trace finalises writes it before it goes)."""
        if self.trace is not None and self.rt.node is not None:
            self.rt.write_trace(self.trace)

    def _generic(self, cls: type) -> Callable[[Any], None]:
        """The handler of a call record: its fields translated by operand kind, the runtime method its class
        names (``CALL``, this format's, never the file's) called, the result mapped."""
        kinds = {f: k for f, k in cls.operands().items() if f != "result"}
        names, translators = list(kinds), [self._translate[k] for k in kinds.values()]
        method = getattr(self.rt, cls.CALL)
        bind = self._binder(cls.RESULT) if "result" in cls.FIELDS else None

        def issue(rec: Any) -> None:
            args = [getattr(rec, f) if t is None else t(getattr(rec, f)) for f, t in zip(names, translators)]
            got = method(*args)
            if bind is not None:
                bind(rec, got)
        return issue

    def _binder(self, kind: fmt.Operand | None) -> Callable[[Any, Any], None] | None:
        if kind in (fmt.Operand.STREAM, fmt.Operand.EVENT, fmt.Operand.CONTEXT, fmt.Operand.BINARY,
                    fmt.Operand.FUNCTION, fmt.Operand.COMM):
            def bind(rec: Any, got: Any) -> None:
                self.handles[rec.result] = got
            return bind
        return None

    # -- translation: each checks what it is given, as the file chose it -------------------------------
    def _handle(self, h: Any) -> int:
        got = self.handles.get(h) if type(h) is int else None
        if got is None:
            raise InvalidFileError(f"handle {short_repr(h)} was returned by no earlier record (create_stream, "
                                   "create_event, create_context, load_binary, get_function, comm_init_world ...)")
        return got

    def _stream(self, h: Any) -> Any:
        return h if h is None or h == 0 and type(h) is int else self._handle(h)

    def _pointer(self, v: Any) -> Any:
        if type(v) is not fmt.HostData:
            return self.addresses.device(v)
        if v.data is not None and self.compute:
            return np.frombuffer(v.data, np.uint8)
        limit = self.rt.node.spec.hbm_bytes
        if v.nbytes > limit:
            raise InvalidFileError(f"a host buffer of {v.nbytes} bytes: a copy moves at most a device's memory "
                                   f"({limit} bytes)")
        try:
            return np.zeros(v.nbytes, np.uint8)
        except MemoryError:
            raise MemoryAllocationError(f"this host cannot allocate the recorded host buffer of {v.nbytes} "
                                        "bytes") from None

    def _addresses(self, args: Any) -> list:
        if type(args) is not list:
            raise InvalidFileError(f"a kernel's arguments are a list of addresses, not {short_repr(args)}")
        dev, device = self.addresses.dev, self.addresses.device
        out = []
        for a in args:
            hit = dev.get(a) if type(a) is int else None
            out.append(hit[0] if hit is not None else device(a))
        return out

    def _function(self, f: Any) -> Any:
        if type(f) is fmt.KernelRef:
            func = self.kernels.get(f.id)
            if func is None:
                raise InvalidFileError(f"kernel {f.id} is defined by no earlier Kernel record")
            return func
        return self._handle(f)

    def _steps(self, steps: list) -> list:
        out = []
        for i, wire in enumerate(steps):
            cls = _STEP_KINDS.get(wire[0]) if type(wire) is list and wire and type(wire[0]) is str else None
            if cls is None:
                raise InvalidFileError(f"graph launch step {i} {short_repr(wire)} is not a step of this ascendemu "
                                       f"({', '.join(_STEP_KINDS)}); replay with the version that recorded the trace")
            translators = self._step_fields.get(cls)
            if translators is None:
                translators = self._step_fields[cls] = [
                    self._translate[fmt.step_operand(wire[0], f.name)] for f in dataclasses.fields(cls)]
            required = sum(1 for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING)
            if len(wire) - 1 < required:
                raise InvalidFileError(f"graph launch step {i} ({wire[0]}) has {len(wire) - 1} fields, its class "
                                       f"{required} or more")
            out.append(cls(*(v if t is None else t(v) for v, t in zip(wire[1:], translators))))
        return out

    # -- records with more to do than one call --------------------------------------------------------
    def _init(self, rec: fmt.Init) -> None:
        self.rt.init(self.whatif.spec(spec_of(rec.spec)), rec.device_count, rec.strict, rec.defrag,
                     self.collect_trace, self.compute, self.whatif.pool or rec.pool)
        self.clock.node = self.rt.node
        self.clock._open = []
        self._waits.clear()
        if self.compute and self._cache is None:
            from ascendemu.cache.kernel_meta import KernelCache
            self._cache = KernelCache(self.cache_root, soc=self.rt.node.spec.soc_version)

    def _finalize(self, rec: fmt.Finalize) -> None:
        self._write_trace()
        self.rt.finalize()
        self.handles.clear()
        self.addresses.clear()
        self._collapsed.clear()

    def _collective_wait(self, rec: fmt.CollectiveWait) -> None:
        """What a recorded collective waited for: the replayed world's peers arrive accordingly. It precedes
        the record of the call during which the collective ran, so it is queued before the replay needs it."""
        for name in ("arrival", "start", "seconds"):
            v = getattr(rec, name)
            if not (math.isfinite(v) and v >= 0):
                raise InvalidFileError(f"{name} {v!r}: a simulated time is a finite, non-negative number of seconds")
        self._waits.append(RecordedWait(rec.comm_key, rec.seq, rec.arrival, rec.start))

    def _comm_init_world(self, rec: fmt.CommInitWorld) -> None:
        """The recorded rank's world, alone: a fabric that replays the other ranks' arrivals."""
        if not (1 <= rec.rank_size <= MAX_WORLD_RANKS and 0 <= rec.rank_id < rec.rank_size):
            raise InvalidFileError(f"rank {rec.rank_id} of a world of {rec.rank_size}: a replayed world has "
                                   f"1..{MAX_WORLD_RANKS} ranks, and the rank is one of them")
        self.rt.world_fabric = ReplayedFabric(rec.rank_id, rec.rank_size, self._waits)
        self._generic(fmt.CommInitWorld)(rec)

    def _end(self, rec: fmt.End) -> None:
        """The run's own figures; nothing to issue."""

    def _kernel(self, rec: fmt.Kernel) -> None:
        """A recorded kernel becomes its launch facts without code (priced, not computed), or, when
        computing, the kernel the cache holds for its recorded signature."""
        if not 0 <= rec.id <= MAX_U32 or rec.id in self.kernels:
            raise InvalidFileError(f"kernel id {rec.id}: each Kernel record has an id of its own, 0..{MAX_U32}")
        func = _launch_facts(rec)                    # checked even when the cache supplies the kernel
        self.result.kernels += 1
        cached = None
        if self.compute and rec.identity and "signature" in rec.identity:
            from ascendemu.kernels.library import KernelPlan
            try:
                plan = KernelPlan.from_identity(rec.identity)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
                raise InvalidFileError(f"its identity names no kernel signature ({type(e).__name__}: {e})") from None
            cached = self._cache.get_many([plan], progress=False, build=self.build)[0]
        if cached is None:
            self.result.priced += 1
        else:
            self.result.from_cache += 1
            func = cached
        self.kernels[rec.id] = func

    def _failed(self, rec: fmt.Failed) -> None:
        """A refused call cost its host time: charge it as the choke point did."""
        call = _API_CALLS.get(rec.call)
        if call is None:
            raise InvalidFileError(f"it names {short_repr(rec.call)}, which is no runtime call")
        if self.rt.node is not None:
            self._charge(rec.call)

    def _charge(self, name: str) -> None:
        """The host cost of call ``name`` (one of the runtime's) that the replay does not make."""
        cost = _API_CALLS[name].cost
        self.rt.node.host_advance(getattr(self.rt.node.spec, cost) if isinstance(cost, str) else (cost or 0.0))

    def _malloc(self, rec: fmt.Malloc) -> None:
        got = self.rt.malloc(rec.size, rec.policy)
        padded = -(-rec.size // 32) * 32 + 32                 # DeviceMemory's padded size
        self.addresses.add(self.addresses.dev, rec.result, got, padded)

    def _free(self, rec: fmt.Free) -> None:
        self.rt.free(self.addresses.remove(self.addresses.dev, rec.ptr, "Malloc"))

    def _malloc_host(self, rec: fmt.MallocHost) -> None:
        self.addresses.add(self.addresses.host, rec.result, self.rt.malloc_host(rec.size), rec.size)

    def _free_host(self, rec: fmt.FreeHost) -> None:
        self.rt.free_host(self.addresses.remove(self.addresses.host, rec.ptr, "MallocHost"))

    def _memcpy(self, rec: fmt.Memcpy) -> None:
        dst, src = self._pointer(rec.dst), self._pointer(rec.src)
        self.rt.memcpy(dst, rec.dest_max, src, rec.count, rec.kind)
        if rec.digest is not None and self.compute:
            received = dst[:rec.count] if isinstance(dst, np.ndarray) else self.rt.host_buffer(dst)[:rec.count]
            self.result.digests_checked += 1
            self.result.digests_matched += digest(received) == rec.digest

    def _create_stream(self, rec: fmt.CreateStream) -> None:
        if self.whatif.streams == 1:
            self._charge(rec.CALL)
            self.handles[rec.result] = self.rt._ctx().default_stream
            self._collapsed.add(rec.result)
            return
        self.handles[rec.result] = self.rt.create_stream()

    def _destroy_stream(self, rec: fmt.DestroyStream) -> None:
        if rec.stream in self._collapsed:
            self._charge(rec.CALL)
            return
        self.rt.destroy_stream(self._stream(rec.stream))

    def _load_binary(self, rec: fmt.LoadBinary) -> None:
        """A binary of the recorded kernels (their launch facts, or, when computing, the kernel cache's
        kernels for their signatures) under the next handle, for the call's host cost. Nothing is loaded
        from the path the record names: a trace must not choose the code a replay runs."""
        functions = {}
        for name, ref in rec.kernels.items():
            if type(name) is not str or type(ref) is not fmt.KernelRef:
                raise InvalidFileError(f"kernels entry {short_repr(name)}: {short_repr(ref)} is not a kernel "
                                       "name (str) and a Kernel record's reference")
            functions[name] = self._function(ref)
        self._charge(rec.CALL)
        h = self.rt._handle()
        self.rt.binaries[h] = Binary(h, rec.path, functions)
        self.handles[rec.result] = h


def _refuse(rec: fmt.Record) -> None:
    """A record a replay cannot issue: a kind this format does not define, or a second header."""
    if type(rec) is fmt.Unknown:
        raise InvalidFileError(f"record kind {rec.code} is none this ascendemu's trace format "
                               f"{'.'.join(map(str, fmt.FORMAT_VERSION))} defines (a newer minor version wrote it, "
                               "or the file is damaged); a replay issues only the kinds it knows: replay with the "
                               "ascendemu version that recorded the trace")
    raise InvalidFileError("only the first record of a trace is its Header")


def _count(v: Any, what: str, low: int = 0, high: int = MAX_U64) -> int:
    """``v`` as an int in [low, high], else the typed error naming ``what``."""
    if type(v) is not int or not low <= v <= high:
        raise InvalidFileError(f"{what} is {short_repr(v)}: must be an int in {low}..{high}")
    return v


def _launch_facts(rec: fmt.Kernel) -> KernelFunction:
    """A Kernel record's launch facts as a kernel without code, each checked as the runtime would for a
    kernel it builds: blockDim 1..``MAX_BLOCK_DIM`` (the device runs that many blocks), argument sizes,
    roles and zero flags, and a cost of non-negative work (the cost model prices it)."""
    block_dim = _count(rec.block_dim, "block_dim", 1, MAX_BLOCK_DIM)
    args = []
    for i, a in enumerate(rec.args):
        if not (type(a) is list and len(a) == 3 and a[1] in KERNEL_ARG_ROLES and type(a[2]) is bool):
            roles = "/".join(KERNEL_ARG_ROLES)
            raise InvalidFileError(f"argument {i} is {short_repr(a)}, not [nbytes, role ({roles}), zero_init]")
        args.append(ArgSpec(_count(a[0], f"argument {i}'s size"), a[1], a[2]))
    cost = rec.cost
    if not (4 <= len(cost) <= 7 and type(cost[3]) is str):
        raise InvalidFileError(f"cost {short_repr(cost)} is not [cube_flops, vector_ops, bytes, dtype, gemm, reread, "
                               f"(transfers)]")
    work = [_count(v, name) for v, name in zip(cost[:3], ("cube_flops", "vector_ops", "bytes"))]
    gemm = cost[4] if len(cost) > 4 else None
    if gemm is not None:
        if type(gemm) is not list or len(gemm) not in (7, 8, 12, 13, 14):
            raise InvalidFileError(f"gemm {short_repr(gemm)} is not [batch, m, n, k, a_bytes, b_bytes, split_k, "
                                   f"(conv, (row_elems, kh, stride, on_b, (width, (kw))))]")
        gemm = Gemm.from_json([_count(v, f"gemm[{i}]", 1 if i in (0, 9, 10) else 0) for i, v in enumerate(gemm)])
    reread = _count(cost[5], "reread") if len(cost) > 5 else 0
    transfers = _count(cost[6], "transfers") if len(cost) > 6 else 0
    return KernelFunction(rec.name, 0, block_dim, tuple(args), KernelCost(*work, cost[3], gemm, reread, transfers))


def _loop_task(wire: Any) -> type[LoopSinkTask]:
    """A sunk loop's task kind from its recorded MindSpore op name (the fixed table of the kinds)."""
    kind = LOOP_SINK_TASK_BY_NAME.get(wire) if type(wire) is str else None
    if kind is None:
        raise InvalidFileError(f"loop task {short_repr(wire)} is not a sunk loop's task of this ascendemu "
                               f"({', '.join(LOOP_SINK_TASK_BY_NAME)}); replay with the version that recorded "
                               "the trace")
    return kind


def _collective(wire: Any) -> Collective:
    """A collective kind from its recorded [class name, field, ...] (each field as its default's type)."""
    cls = _COLLECTIVE_KINDS.get(wire[0]) if type(wire) is list and wire and type(wire[0]) is str else None
    if cls is None:
        raise InvalidFileError(f"collective {short_repr(wire)} is not a collective of this ascendemu; replay "
                               "with the version that recorded the trace")
    fields = dataclasses.fields(cls)
    values = wire[1:]
    if len(values) > len(fields) or any(type(v) is not int for v in values):
        raise InvalidFileError(f"collective {short_repr(wire)}: its fields are {len(fields)} ints at most")
    try:
        return cls(*(type(f.default)(v) for f, v in zip(fields, values)))
    except ValueError as e:
        raise InvalidFileError(f"collective {short_repr(wire)}: {e}") from None


def replay(path: str, whatif: WhatIf | None = None, **options: Any) -> ReplayResult:
    """Replay the trace at ``path`` (see :class:`Replayer` for the options)."""
    return Replayer(fmt.read_trace(path), whatif, **options).run()
