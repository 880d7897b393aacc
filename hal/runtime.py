"""The ACL-shaped runtime: one process-wide :class:`Runtime` composed from one mixin per ACL chapter.

Pythonic surface: handles are ints, results are returned, failures raise typed :class:`AclError`
subclasses whose ``code`` is the ACL error code (``hal.acl`` turns them back into return codes).
Calls are asynchronous like the real runtime: launches, async copies and event records enqueue device
tasks; the SimPy device model runs them when the host synchronises.

Layout. This module keeps what every call shares: the choke point :meth:`Runtime._dispatch` (every
public method is marked with :func:`.api.api`, which routes it here: the arguments are validated by
the checks :mod:`.validate` binds once below, the modelled host cost is charged on the simulated host
timeline and recorders, such as a trace recorder or a test, see the call), handles,
``init``/``finalize`` and observation. The chapters of the ACL reference are mixins, each in
its own module and owning its part of the state: :mod:`.devices` (devices, contexts), :mod:`.streams`
(streams, events, submitting and waiting), :mod:`.memory` (device and host memory, copies, memsets),
:mod:`.launch` (binaries, functions, kernel and graph launches) and :mod:`.hccl` (communicators,
collectives). Mixins rather than separate objects because the chapters are one runtime: ACL calls
cross chapters all the time (a launch needs a stream, a context creates one, a memcpy waits like a
synchronize), and plain methods on one object
keep those calls as cheap as they were on the launch path. What a stream runs is typed on both sides:
:mod:`.steps` on the HAL side, :mod:`ascendemu.device.tasks` on the device side.

Module-level API: ``from ascendemu.hal import runtime as rt; rt.init(); rt.malloc(...)`` calls the
process-wide runtime. The names are bound explicitly at the bottom of this file (``init`` and
``finalize`` keep the same object, so the bound methods stay valid) and listed in ``__all__``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ascendemu.device.spec import DeviceSpec, get_spec
from ascendemu.device.system import DEFAULT_DEVICE_COUNT, Node
from ascendemu.device.pool import DEFAULT_POOL_POLICY
from ascendemu.errors import AclError, ContextNullError, InvalidParamError, RtParamInvalidError
from ascendemu.traces.chrome import HOST_TID, ChromeTrace

from .api import API_CALL_COST_S, ApiCall, api
from .devices import Context, DevicesMixin
from .hccl import HcclMixin
from .launch import Binary, LaunchMixin
from .memory import (HOST_PTR_BASE, MEM_MALLOC_HUGE_FIRST, MEM_MALLOC_HUGE_ONLY, MEM_MALLOC_NORMAL_ONLY,
                     MEMCPY_DEFAULT, MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE,
                     MEMCPY_HOST_TO_HOST, HostAllocation, MemoryMixin)
from .steps import Communicate, LabelGoto, Launch, LoopTask, MemcpyAsync, RecordEvent, WaitEvent
from .events import EVENT_STATUS_COMPLETE, EVENT_STATUS_NOT_READY, EVENT_TIME_LINE, EventsMixin
from .streams import StreamsMixin
from .validate import bind_checks

_api = api     # the choke-point marker under its historical name


class Runtime(DevicesMixin, StreamsMixin, EventsMixin, MemoryMixin, LaunchMixin, HcclMixin):
    """One process-wide runtime (like libascendcl): call :meth:`init` first, then :meth:`set_device`."""

    # each step kind (hal.steps) -> the chapter's builder of its validated device task (StreamsMixin.step_task)
    STEP_TASKS = {Launch: LaunchMixin._launch_step_task, RecordEvent: StreamsMixin._record_step_task,
                  WaitEvent: StreamsMixin._wait_step_task, MemcpyAsync: MemoryMixin._memcpy_step_task,
                  Communicate: HcclMixin._collective_task, LabelGoto: StreamsMixin._goto_step_task,
                  LoopTask: StreamsMixin._loop_step_task}

    def __init__(self) -> None:
        self.node: Node | None = None
        self.recorders: list[Callable[[str, tuple, dict, Any, float], None]] = []
        self._reset_state()

    def _reset_state(self) -> None:
        self._next_handle = 1
        self._reset_devices()
        self._reset_streams()
        self._reset_memory()
        self._reset_launch()
        self._reset_hccl()

    # -- choke point -----------------------------------------------------------------------------
    def _dispatch(self, call: ApiCall, args: tuple, kwargs: dict):
        """Every public call: refuse it before init, charge its host cost, validate its arguments (a bad
        one raises its typed ACL error; there is no catch-all, see :mod:`.validate`), run it, tell the
        recorders (they see the arguments as validated, all positional)."""
        node = self.node
        name = call.name
        if node is None:
            if name not in ("init", "finalize"):
                raise ContextNullError(f"{name}() called before init(); call ascendemu.hal.runtime.init() first")
        else:
            cost = call.cost
            seconds = getattr(node.spec, cost) if isinstance(cost, str) else (cost or 0.0)
            start = node.host_advance(seconds)
            if node.trace is not None and seconds:
                node.trace.host_call(name, start, seconds)
        try:
            args = call.check(*args, **kwargs)
        except TypeError as e:
            if e.__traceback__.tb_next is not None:     # raised inside a validator: a bug, not a bad call
                raise
            error = InvalidParamError(f"{e}; see help(ascendemu.hal.runtime.{name})")
            self._note_failure(name, error)
            raise error from None
        except AclError as e:
            self._note_failure(name, e)
            raise
        if not self.recorders:
            return call.fn(self, *args)
        try:
            result = call.fn(self, *args)
        except AclError as e:       # a recorder that keeps the host timeline (hal.record) notes the failure
            self._note_failure(name, e)
            raise
        for rec in self.recorders:
            rec(name, args, {}, result, self.node.host_time if self.node else 0.0)
        return result

    def annotate(self, record: Any) -> None:
        """Tell the recorders that take annotations (``rec.annotate``) about something above the runtime
        that is no runtime call, such as the graph executor's step boundaries (``traces.aetrace.StepBegin``).
        Not an API call: no host cost, nothing changes."""
        for rec in self.recorders:
            note = getattr(rec, "annotate", None)
            if note is not None:
                note(record)

    def _note_failure(self, name: str, error: AclError) -> None:
        for rec in self.recorders:
            failed = getattr(rec, "failed", None)
            if failed is not None:
                failed(name, error)

    def _handle(self) -> int:
        h = self._next_handle
        self._next_handle += 1
        return h

    # -- init / finalize ---------------------------------------------------------------------------
    @api(cost=None)
    def init(self, spec: DeviceSpec | str | None = None, device_count: int = DEFAULT_DEVICE_COUNT,
             strict: bool = False, defrag: bool = True, trace: bool = False, backing: bool = True,
             pool: str = DEFAULT_POOL_POLICY) -> None:
        """Create the emulated node. ``strict`` reports races; ``trace`` collects a Chrome trace;
        ``backing=False`` (DryRun) gives the devices no host memory, so any device size is planned and
        priced on any host, and an operation that needs the bytes is refused with 207000; ``pool`` is
        the device pools' placement policy (``device.pool.POOL_POLICIES``: best-fit, first-fit)."""
        if self.node is not None:
            raise RtParamInvalidError("init() called twice; call finalize() first to start a new node")
        if isinstance(spec, str):
            spec = get_spec(spec)
        self.node = Node(spec, device_count, strict=strict, defrag=defrag, trace=ChromeTrace() if trace else None,
                         backing=backing, pool=pool)
        if self.node.trace is not None:
            self._name_tracks()

    @api(cost=None)
    def finalize(self) -> None:
        self.node = None
        self._reset_state()

    def _name_tracks(self) -> None:
        """Name the rank's process and host track, and sample every device's memory counters once."""
        node = self.node
        t = node.trace
        t.name_track(None, f"rank {t.rank} ({len(node.devices)} x {node.spec.name})")
        t.name_track(HOST_TID, "host API calls (simulated host timeline)")
        for d in node.devices:
            d.trace_memory(node.host_time)

    # -- observation (public calls too, so they are refused before init like any other) --------------
    @api(cost=None)
    def device_time(self) -> float:
        """Simulated device seconds elapsed so far."""
        return self.node.env.now

    @api(cost=None)
    def host_time(self) -> float:
        """Simulated host seconds (the modelled API timeline)."""
        return self.node.host_time

    @api(cost=None)
    def start_trace(self) -> None:
        """Collect a Chrome trace from now on, as ``init(trace=True)`` does from the start (a profiler
        started mid-run); a node that already traces keeps its trace."""
        if self.node.trace is not None:
            return
        self.node.attach_trace(ChromeTrace())
        self._name_tracks()
        for h, s in self.streams.items():
            self.node.trace.name_track(h, f"device {s.device.id} stream {h}")

    @api(cost=None)
    def trace_events(self) -> list[dict]:
        """The trace's events so far (Chrome trace "X"/"s"/"f" records, times in simulated microseconds)."""
        if self.node.trace is None:
            raise RtParamInvalidError("tracing is off; call start_trace() or init(trace=True) first")
        return list(self.node.trace.events)

    @api(cost=None)
    def write_trace(self, path: str | Path) -> Path:
        if self.node.trace is None:
            raise RtParamInvalidError("tracing is off; call init(trace=True) or start_trace() to collect a "
                                      "Chrome trace")
        return self.node.trace.write(path)


bind_checks(Runtime)     # every public call's argument check, bound once (hal/validate.py)

_runtime = Runtime()


def get_runtime() -> Runtime:
    """The process-wide runtime (like the one libascendcl a process has)."""
    return _runtime


# -- module-level API: the process-wide runtime's calls, by chapter -----------------------------------
init = _runtime.init
finalize = _runtime.finalize
# devices and contexts
get_device_count = _runtime.get_device_count
set_device = _runtime.set_device
reset_device = _runtime.reset_device
get_device = _runtime.get_device
create_context = _runtime.create_context
destroy_context = _runtime.destroy_context
set_current_context = _runtime.set_current_context
# streams and events
create_stream = _runtime.create_stream
destroy_stream = _runtime.destroy_stream
synchronize_stream = _runtime.synchronize_stream
synchronize_device = _runtime.synchronize_device
query_stream = _runtime.query_stream
stream_wait_event = _runtime.stream_wait_event
create_event = _runtime.create_event
destroy_event = _runtime.destroy_event
record_event = _runtime.record_event
reset_event = _runtime.reset_event
query_event_status = _runtime.query_event_status
synchronize_event = _runtime.synchronize_event
event_elapsed_time = _runtime.event_elapsed_time
label_switch = _runtime.label_switch
label_goto = _runtime.label_goto
loop_task = _runtime.loop_task
# memory
malloc = _runtime.malloc
free = _runtime.free
malloc_host = _runtime.malloc_host
free_host = _runtime.free_host
host_buffer = _runtime.host_buffer
memcpy = _runtime.memcpy
memcpy_async = _runtime.memcpy_async
memset = _runtime.memset
memset_async = _runtime.memset_async
get_mem_info = _runtime.get_mem_info
mem_stats = _runtime.mem_stats
dump_memory_snapshot = _runtime.dump_memory_snapshot
# kernels
load_binary = _runtime.load_binary
register_function = _runtime.register_function
unload_binary = _runtime.unload_binary
get_function = _runtime.get_function
launch_kernel = _runtime.launch_kernel
launch_graph = _runtime.launch_graph
# collective communication
comm_init_world = _runtime.comm_init_world
comm_create_group = _runtime.comm_create_group
comm_destroy = _runtime.comm_destroy
comm_find = _runtime.comm_find
comm_rank = _runtime.comm_rank
comm_size = _runtime.comm_size
comm_world_ranks = _runtime.comm_world_ranks
all_reduce = _runtime.all_reduce
all_gather = _runtime.all_gather
reduce_scatter = _runtime.reduce_scatter
broadcast = _runtime.broadcast
alltoall = _runtime.alltoall
send = _runtime.send
recv = _runtime.recv
barrier = _runtime.barrier
# observation
device_time = _runtime.device_time
host_time = _runtime.host_time
start_trace = _runtime.start_trace
trace_events = _runtime.trace_events
write_trace = _runtime.write_trace

__all__ = [
    "Runtime", "get_runtime", "Context", "Binary", "HostAllocation", "API_CALL_COST_S", "HOST_PTR_BASE",
    "MEMCPY_HOST_TO_HOST", "MEMCPY_HOST_TO_DEVICE", "MEMCPY_DEVICE_TO_HOST", "MEMCPY_DEVICE_TO_DEVICE",
    "MEMCPY_DEFAULT", "MEM_MALLOC_HUGE_FIRST", "MEM_MALLOC_HUGE_ONLY", "MEM_MALLOC_NORMAL_ONLY",
    "EVENT_TIME_LINE", "EVENT_STATUS_COMPLETE", "EVENT_STATUS_NOT_READY",
    "init", "finalize",
    "get_device_count", "set_device", "reset_device", "get_device", "create_context", "destroy_context",
    "set_current_context",
    "create_stream", "destroy_stream", "synchronize_stream", "synchronize_device", "query_stream",
    "stream_wait_event", "create_event", "destroy_event", "record_event", "reset_event", "query_event_status",
    "synchronize_event", "event_elapsed_time", "label_switch", "label_goto", "loop_task",
    "malloc", "free", "malloc_host", "free_host", "host_buffer", "memcpy", "memcpy_async", "memset",
    "memset_async", "get_mem_info", "mem_stats", "dump_memory_snapshot",
    "load_binary", "register_function", "unload_binary", "get_function", "launch_kernel", "launch_graph",
    "comm_init_world", "comm_create_group", "comm_destroy", "comm_find", "comm_rank", "comm_size", "comm_world_ranks",
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "send", "recv", "barrier",
    "device_time", "host_time", "start_trace", "trace_events", "write_trace",
]
