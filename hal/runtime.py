"""The ACL-shaped runtime: devices, contexts, streams, events, memory, kernel binaries, launches.

Pythonic surface: handles are ints, results are returned, failures raise typed :class:`AclError`
subclasses whose ``code`` is the ACL error code (``hal.acl`` turns them back into return codes).
Every public call goes through :meth:`Runtime._api`, the one choke point where argument errors get
their context, the modelled host cost is charged on the simulated host timeline, and recorders (the
trace recorder, tests) see the call.

Calls are asynchronous like the real runtime: launches, async copies and event records enqueue tasks;
the SimPy device model runs them when the host synchronises.
"""
from __future__ import annotations

import bisect
import functools
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ascendemu.device.model import Device, Event, Stream, Task
from ascendemu.device.spec import DeviceSpec, get_spec
from ascendemu.device.system import DEFAULT_DEVICE_COUNT, DeadlockError, Node
from ascendemu.errors import (ContextNullError, EventSyncTimeoutError, FeatureNotSupportedError, InvalidDeviceError,
                              InvalidParamError, KernelLookupError, MemoryFreeError,
                              NoEventResourceError, NoStreamResourceError, RtParamInvalidError,
                              StreamSyncTimeoutError)
from ascendemu.traces.chrome import HOST_PID, ChromeTrace, device_pid

from .kernel import KernelFunction

# memcpy kinds (aclrtMemcpyKind)
MEMCPY_HOST_TO_HOST = 0
MEMCPY_HOST_TO_DEVICE = 1
MEMCPY_DEVICE_TO_HOST = 2
MEMCPY_DEVICE_TO_DEVICE = 3
MEMCPY_DEFAULT = 4
_KIND_NAMES = {0: "H2H", 1: "H2D", 2: "D2H", 3: "D2D"}

# malloc policies (aclrtMemMallocPolicy); the emulated HBM has one page size, so all behave alike
MEM_MALLOC_HUGE_FIRST = 0
MEM_MALLOC_HUGE_ONLY = 1
MEM_MALLOC_NORMAL_ONLY = 2

# event flags and status
EVENT_TIME_LINE = 0x8
EVENT_STATUS_COMPLETE = 0
EVENT_STATUS_NOT_READY = 1

# Modelled host cost of an API call that does not launch anything (argument checks, a driver ioctl).
API_CALL_COST_S = 1e-6
HOST_PTR_BASE = 0x7E00_0000_0000


@dataclass
class Context:
    handle: int
    device_id: int
    default_stream: int
    destroyed: bool = False


@dataclass
class HostAllocation:
    start: int
    data: np.ndarray


@dataclass
class Binary:
    """A loaded kernel binary: its functions by kernel name."""

    handle: int
    path: str
    functions: dict[str, KernelFunction] = field(default_factory=dict)


def _api(cost: float | str | None = API_CALL_COST_S):
    """Route a public method through the runtime's choke point. ``cost``: seconds, or a spec field name."""
    def wrap(fn: Callable) -> Callable:
        name = fn.__name__

        @functools.wraps(fn)
        def call(self: "Runtime", *args, **kwargs):
            return self._dispatch(name, fn, cost, args, kwargs)
        call.__acl_api__ = True
        return call
    return wrap


class Runtime:
    """One process-wide runtime (like libascendcl): call :meth:`init` first, then :meth:`set_device`."""

    def __init__(self) -> None:
        self.node: Node | None = None
        self.recorders: list[Callable[[str, tuple, dict, Any, float], None]] = []
        self._reset_state()

    def _reset_state(self) -> None:
        self._next_handle = 1
        self.current_context: Context | None = None
        self.contexts: dict[int, Context] = {}
        self.streams: dict[int, Stream] = {}
        self.events: dict[int, Event] = {}
        self.binaries: dict[int, Binary] = {}
        self.functions: dict[int, KernelFunction] = {}
        self._destroyed: dict[int, str] = {}
        self._host: dict[int, HostAllocation] = {}
        self._host_starts: list[int] = []
        self._next_host = HOST_PTR_BASE
        self._sync_streams: dict[int, Stream] = {}

    # -- choke point -----------------------------------------------------------------------------
    def _dispatch(self, name: str, fn: Callable, cost, args: tuple, kwargs: dict):
        if self.node is None and name not in ("init", "finalize"):
            raise ContextNullError(f"{name}() called before init(); call ascendemu.hal.runtime.init() first")
        if self.node is not None:
            seconds = getattr(self.node.spec, cost) if isinstance(cost, str) else (cost or 0.0)
            start = self.node.host_advance(seconds)
            if self.node.trace is not None and seconds:
                self.node.trace.span(HOST_PID, 0, name, start, seconds, "api")
        result = fn(self, *args, **kwargs)
        for rec in self.recorders:
            rec(name, args, kwargs, result, self.node.host_time if self.node else 0.0)
        return result

    def _handle(self) -> int:
        h = self._next_handle
        self._next_handle += 1
        return h

    # -- init / devices / contexts -----------------------------------------------------------------
    @_api(cost=None)
    def init(self, spec: DeviceSpec | str | None = None, device_count: int = DEFAULT_DEVICE_COUNT,
             strict: bool = False, defrag: bool = True, trace: bool = False) -> None:
        """Create the emulated node. ``strict`` reports races; ``trace`` collects a Chrome trace."""
        if self.node is not None:
            raise RtParamInvalidError("init() called twice; call finalize() first to start a new node")
        if isinstance(spec, str):
            spec = get_spec(spec)
        if spec is not None and not isinstance(spec, DeviceSpec):
            raise InvalidParamError(f"spec must be a DeviceSpec or a preset name, got {type(spec).__name__}")
        self.node = Node(spec, device_count, strict=strict, defrag=defrag, trace=ChromeTrace() if trace else None)
        if self.node.trace is not None:
            self._name_tracks()

    @_api(cost=None)
    def finalize(self) -> None:
        self.node = None
        self._reset_state()

    def _name_tracks(self) -> None:
        t = self.node.trace
        t.name_track(HOST_PID, None, "host (simulated API timeline)")
        t.name_track(HOST_PID, 0, "host API calls")
        for d in self.node.devices:
            t.name_track(device_pid(d.id), None, f"device {d.id} ({d.spec.name})")

    @_api()
    def get_device_count(self) -> int:
        return len(self.node.devices)

    def _device(self, device_id: int) -> Device:
        if not isinstance(device_id, int) or isinstance(device_id, bool) or not (0 <= device_id < len(self.node.devices)):
            raise InvalidDeviceError(f"invalid device id {device_id!r}; this node has devices "
                                     f"0..{len(self.node.devices) - 1} (init(device_count=...) to change)")
        return self.node.devices[device_id]

    @_api()
    def set_device(self, device_id: int) -> None:
        """Make ``device_id`` current, creating its default context (and default stream) on first use."""
        dev = self._device(device_id)
        for ctx in self.contexts.values():
            if ctx.device_id == device_id and not ctx.destroyed:
                self.current_context = ctx
                return
        self.current_context = self._new_context(dev)

    @_api()
    def reset_device(self, device_id: int) -> None:
        """Wait for the device, then release its streams, events and memory."""
        dev = self._device(device_id)
        self._sync_device(dev)
        for h, s in list(self.streams.items()):
            if s.device is dev:
                s.destroyed = True
                del self.streams[h]
                self._destroyed[h] = "stream"
        for h, e in list(self.events.items()):
            if e.device is dev:
                del self.events[h]
                self._destroyed[h] = "event"
        for addr in list(dev.memory.allocations):
            dev.memory.free(addr)
        for ctx in self.contexts.values():
            if ctx.device_id == device_id:
                ctx.destroyed = True
        if self.current_context and self.current_context.device_id == device_id:
            self.current_context = None

    @_api()
    def get_device(self) -> int:
        return self._ctx().device_id

    def _new_context(self, dev: Device) -> Context:
        stream = self._new_stream(dev)
        ctx = Context(self._handle(), dev.id, stream)
        self.contexts[ctx.handle] = ctx
        return ctx

    @_api()
    def create_context(self, device_id: int) -> int:
        ctx = self._new_context(self._device(device_id))
        self.current_context = ctx
        return ctx.handle

    def _context(self, context: int) -> Context:
        ctx = self.contexts.get(context)
        if ctx is None or ctx.destroyed:
            raise ContextNullError(f"context {context!r} does not exist or was destroyed")
        return ctx

    @_api()
    def destroy_context(self, context: int) -> None:
        ctx = self._context(context)
        ctx.destroyed = True
        if self.current_context is ctx:
            self.current_context = None

    @_api()
    def set_current_context(self, context: int) -> None:
        self.current_context = self._context(context)

    def _ctx(self) -> Context:
        if self.current_context is None or self.current_context.destroyed:
            raise ContextNullError("no current context: call set_device(device_id) or create_context() first")
        return self.current_context

    def _cur_device(self) -> Device:
        return self.node.devices[self._ctx().device_id]

    # -- streams --------------------------------------------------------------------------------
    def _new_stream(self, dev: Device) -> int:
        live = sum(1 for s in dev.streams.values() if not s.destroyed)
        if live >= dev.spec.max_streams:
            raise NoStreamResourceError(f"device {dev.id} already has {live} streams (limit {dev.spec.max_streams}); "
                                        "destroy unused streams")
        h = self._handle()
        s = Stream(dev, h)
        dev.streams[h] = s
        self.streams[h] = s
        if self.node.trace is not None:
            self.node.trace.name_track(device_pid(dev.id), h, f"stream {h}")
        return h

    def _stream(self, stream: int | None) -> Stream:
        if stream is None or stream == 0:
            stream = self._ctx().default_stream
        s = self.streams.get(stream) if isinstance(stream, int) else None
        if s is None:
            what = self._destroyed.get(stream) if isinstance(stream, int) else None
            hint = "it was destroyed" if what == "stream" else "it was never created"
            raise RtParamInvalidError(f"stream {stream!r} is not a live stream ({hint}); use create_stream()")
        return s

    @_api()
    def create_stream(self) -> int:
        return self._new_stream(self._cur_device())

    @_api()
    def destroy_stream(self, stream: int) -> None:
        s = self._stream(stream)
        if stream in (None, 0) or any(c.default_stream == stream for c in self.contexts.values()):
            raise RtParamInvalidError("the default stream of a context cannot be destroyed")
        self._drain(s)   # aclrtDestroyStream waits for the stream's tasks
        s.destroyed = True
        del self.streams[stream]
        del s.device.streams[stream]
        self._destroyed[stream] = "stream"

    def _blocked_report(self) -> str:
        lines = []
        for dev in self.node.devices:
            for s in dev.streams.values():
                if s.blocked_on is not None:
                    lines.append(f"stream {s.id} (device {dev.id}) waits on event {s.blocked_on.id}, "
                                 "which no record will ever trigger")
        return "; ".join(lines) or "no stream is blocked on an event"

    def _wait(self, event, what: str, error: type = StreamSyncTimeoutError) -> None:
        """Block the host until ``event``; a wait that can never end is an ACL sync timeout naming why."""
        try:
            self.node.run_until(event)
        except DeadlockError:
            raise error(f"{what} can never finish: {self._blocked_report()}. "
                        "Record the event (record_event) before waiting on it.") from None

    def _drain(self, s: Stream, what: str | None = None) -> None:
        self._wait(s.drained(), what or f"synchronize of stream {s.id}")
        self._raise_stream_errors(s)

    def _submit(self, s: Stream, task: Task) -> None:
        """Enqueue a task; when the stream's queue is full the host blocks until the device frees a slot,
        as the real runtime does when a stream's submission queue is full."""
        if len(s.queue) >= self.node.spec.stream_queue_depth:
            self._wait(s.room(), f"launch on full stream {s.id} ({len(s.queue)} tasks queued)")
        s.enqueue(task)

    def _raise_stream_errors(self, s: Stream) -> None:
        if s.errors:
            err = s.errors.pop(0)
            s.errors.clear()
            raise err

    @_api()
    def synchronize_stream(self, stream: int | None = None) -> None:
        self._drain(self._stream(stream))

    @_api()
    def query_stream(self, stream: int | None = None) -> bool:
        """True when every task enqueued on the stream has finished by the current host time."""
        s = self._stream(stream)
        self.node.catch_up()
        return s.idle

    @_api()
    def stream_wait_event(self, stream: int | None, event: int) -> None:
        s, ev = self._stream(stream), self._event(event)
        self._check_same_device(s, ev)
        self._submit(s, Task("wait", f"wait event {ev.id}", self.node.host_time, event=ev, generation=ev.wait_target()))

    # -- events ---------------------------------------------------------------------------------
    def _event(self, event: int) -> Event:
        ev = self.events.get(event) if isinstance(event, int) else None
        if ev is None:
            hint = "it was destroyed" if self._destroyed.get(event) == "event" else "it was never created"
            raise RtParamInvalidError(f"event {event!r} is not a live event ({hint}); use create_event()")
        return ev

    @staticmethod
    def _check_same_device(s: Stream, ev: Event) -> None:
        if s.device is not ev.device:
            raise RtParamInvalidError(f"stream {s.id} is on device {s.device.id} but event {ev.id} "
                                      f"on device {ev.device.id}; events work within one device")

    @_api()
    def create_event(self, flags: int = 0) -> int:
        if not isinstance(flags, int) or flags < 0:
            raise InvalidParamError(f"event flags must be a non-negative int (TIME_LINE=0x8), got {flags!r}")
        dev = self._cur_device()
        if len(dev.events) >= dev.spec.max_events:
            raise NoEventResourceError(f"device {dev.id} already has {len(dev.events)} events "
                                       f"(limit {dev.spec.max_events}); destroy unused events")
        h = self._handle()
        ev = Event(dev, h, flags)
        dev.events[h] = ev
        self.events[h] = ev
        return h

    @_api()
    def destroy_event(self, event: int) -> None:
        ev = self._event(event)
        ev.destroyed = True
        del self.events[event]
        del ev.device.events[event]
        self._destroyed[event] = "event"

    @_api()
    def record_event(self, event: int, stream: int | None = None) -> None:
        ev, s = self._event(event), self._stream(stream)
        self._check_same_device(s, ev)
        self._submit(s, Task("record", f"record event {ev.id}", self.node.host_time, event=ev, generation=ev.issue_record()))

    @_api()
    def reset_event(self, event: int, stream: int | None = None) -> None:
        """Return the event to the never-recorded state (later waits wait for the next record)."""
        ev = self._event(event)
        self._stream(stream)
        ev.last_issued = None
        ev.timestamp = None

    @_api()
    def query_event_status(self, event: int) -> int:
        ev = self._event(event)
        self.node.catch_up()
        return EVENT_STATUS_COMPLETE if ev.complete else EVENT_STATUS_NOT_READY

    @_api()
    def synchronize_event(self, event: int) -> None:
        ev = self._event(event)
        if ev.last_issued is None:
            return
        self._wait(ev.last_issued, f"synchronize of event {ev.id}", EventSyncTimeoutError)

    @_api()
    def event_elapsed_time(self, start: int, end: int) -> float:
        """Simulated milliseconds between two completed records."""
        a, b = self._event(start), self._event(end)
        self.node.catch_up()
        for ev in (a, b):
            if ev.last_issued is None:
                raise RtParamInvalidError(f"event {ev.id} was never recorded; record_event() both events first")
            if not ev.complete:
                raise RtParamInvalidError(f"event {ev.id} is recorded but not complete yet; "
                                          "synchronize_event() it before asking for the elapsed time")
        return (b.timestamp - a.timestamp) * 1e3

    # -- memory ---------------------------------------------------------------------------------
    @_api()
    def malloc(self, size: int, policy: int = MEM_MALLOC_HUGE_FIRST) -> int:
        if policy not in (MEM_MALLOC_HUGE_FIRST, MEM_MALLOC_HUGE_ONLY, MEM_MALLOC_NORMAL_ONLY):
            raise InvalidParamError(f"malloc policy {policy!r} is not one of HUGE_FIRST=0, HUGE_ONLY=1, NORMAL_ONLY=2")
        return self._cur_device().memory.malloc(size)

    @_api()
    def free(self, ptr: int) -> None:
        self._cur_device().memory.free(ptr)

    @_api()
    def malloc_host(self, size: int) -> int:
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise InvalidParamError(f"malloc_host size must be a positive integer, got {size!r}")
        start = self._next_host
        self._next_host += -(-size // 4096) * 4096 + 4096   # a guard page between buffers
        self._host[start] = HostAllocation(start, np.zeros(size, np.uint8))
        bisect.insort(self._host_starts, start)
        return start

    @_api()
    def free_host(self, ptr: int) -> None:
        if ptr not in self._host:
            raise MemoryFreeError(f"free_host({ptr!r}): not a live host allocation from malloc_host "
                                  "(double free, interior pointer, or a device pointer)")
        del self._host[ptr]
        self._host_starts.remove(ptr)

    def host_buffer(self, ptr: int) -> np.ndarray:
        """The uint8 numpy view of host memory from malloc_host (to fill or read it)."""
        return self._host_view(ptr, None, "host pointer")

    def _host_view(self, ptr: int, nbytes: int | None, what: str) -> np.ndarray:
        i = bisect.bisect_right(self._host_starts, ptr) - 1
        alloc = self._host.get(self._host_starts[i]) if i >= 0 else None
        if alloc is None or ptr >= alloc.start + alloc.data.size:
            raise InvalidParamError(f"{what} {ptr:#x} is not inside a live malloc_host allocation")
        off = ptr - alloc.start
        n = alloc.data.size - off if nbytes is None else nbytes
        if off + n > alloc.data.size:
            raise InvalidParamError(f"{what} {ptr:#x} + {n} bytes runs past its host allocation "
                                    f"({alloc.data.size} bytes) by {off + n - alloc.data.size}")
        return alloc.data[off:off + n]

    def _host_side(self, obj: Any, count: int, what: str, writable: bool) -> np.ndarray:
        """A uint8 view of ``count`` bytes of host memory: a numpy array, bytes (read only) or a host pointer."""
        if isinstance(obj, np.ndarray):
            if not obj.flags.c_contiguous:
                raise InvalidParamError(f"{what} numpy array must be C-contiguous (use np.ascontiguousarray)")
            if writable and not obj.flags.writeable:
                raise InvalidParamError(f"{what} numpy array is read-only")
            view = obj.reshape(-1).view(np.uint8)
            if count > view.size:
                raise InvalidParamError(f"{what} has {view.size} bytes but count is {count}")
            return view[:count]
        if isinstance(obj, (bytes, bytearray, memoryview)) and not writable:
            view = np.frombuffer(obj, np.uint8)
            if count > view.size:
                raise InvalidParamError(f"{what} has {view.size} bytes but count is {count}")
            return view[:count]
        if isinstance(obj, int) and not isinstance(obj, bool):
            return self._host_view(obj, count, what)
        raise InvalidParamError(f"{what} must be a numpy array, bytes or a malloc_host pointer, "
                                f"got {type(obj).__name__}")

    def _is_device_ptr(self, obj: Any) -> bool:
        if not isinstance(obj, int) or isinstance(obj, bool):
            return False
        return any(d.memory.pool.find(obj) is not None for d in self.node.devices)

    def _copy_task(self, dst: Any, dest_max: int, src: Any, count: int, kind: int) -> tuple[Device, Task]:
        for name, v in (("count", count), ("dest_max", dest_max)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise InvalidParamError(f"memcpy {name} must be a non-negative int, got {v!r}")
        if count > dest_max:
            raise InvalidParamError(f"memcpy count {count} exceeds dest_max {dest_max}")
        if kind == MEMCPY_DEFAULT:
            kind = {(False, False): 0, (False, True): 1, (True, False): 2, (True, True): 3}[
                (self._is_device_ptr(src), self._is_device_ptr(dst))]
        if kind not in _KIND_NAMES:
            raise InvalidParamError(f"memcpy kind {kind!r} is not one of HOST_TO_HOST=0, HOST_TO_DEVICE=1, "
                                    "DEVICE_TO_HOST=2, DEVICE_TO_DEVICE=3, DEFAULT=4")
        dev = self._cur_device()
        mem = dev.memory
        src_dev, dst_dev = kind in (2, 3), kind in (1, 3)
        dst_view = (mem.view(dst, count, "memcpy destination") if dst_dev
                    else self._host_side(dst, count, "memcpy destination", writable=True))
        src_view = (mem.view(src, count, "memcpy source") if src_dev
                    else self._host_side(src, count, "memcpy source", writable=False))

        def move() -> None:
            dst_view[:] = src_view
        name = f"memcpy {_KIND_NAMES[kind]} {count}B"
        task = Task("copy", name, self.node.host_time, copy=move, nbytes=count, copy_kind=_KIND_NAMES[kind],
                    reads=[(src, src + count)] if src_dev else [], writes=[(dst, dst + count)] if dst_dev else [])
        return dev, task

    def _sync_stream_of(self, dev: Device) -> Stream:
        """The internal stream synchronous copies run on (not visible to the user)."""
        s = self._sync_streams.get(dev.id)
        if s is None:
            s = self._sync_streams[dev.id] = Stream(dev, -1 - dev.id, internal=True)
            if self.node.trace is not None:
                self.node.trace.name_track(device_pid(dev.id), s.id, "sync copies")
        return s

    @_api()
    def memcpy(self, dst: Any, dest_max: int, src: Any, count: int, kind: int = MEMCPY_DEFAULT) -> None:
        """Synchronous copy. It does not wait for other streams: synchronize the writer first."""
        dev, task = self._copy_task(dst, dest_max, src, count, kind)
        if task.copy_kind == "H2H":
            task.copy()
            return
        if self.node.strict:
            dev.check_race(f"synchronous {task.name}", task.reads, task.writes)
        s = self._sync_stream_of(dev)
        self._submit(s, task)
        self._drain(s, what=f"synchronous {task.name}")

    @_api()
    def memcpy_async(self, dst: Any, dest_max: int, src: Any, count: int, kind: int = MEMCPY_DEFAULT,
                     stream: int | None = None) -> None:
        """Asynchronous copy on ``stream``; host buffers are read/written when the copy runs."""
        s = self._stream(stream)
        _, task = self._copy_task(dst, dest_max, src, count, kind)
        self._submit(s, task)

    def _memset_task(self, ptr: int, max_count: int, value: int, count: int) -> tuple[Device, Task]:
        if not isinstance(value, int) or not (0 <= value <= 255):
            raise InvalidParamError(f"memset value must be a byte 0..255, got {value!r}")
        if not isinstance(count, int) or count < 0 or count > max_count:
            raise InvalidParamError(f"memset count {count!r} must be a non-negative int <= max_count {max_count}")
        dev = self._cur_device()
        view = dev.memory.view(ptr, count, "memset destination")

        def fill() -> None:
            view[:] = value
        return dev, Task("memset", f"memset {count}B", self.node.host_time, copy=fill, nbytes=count,
                         copy_kind="D2D", writes=[(ptr, ptr + count)])

    @_api()
    def memset(self, ptr: int, max_count: int, value: int, count: int) -> None:
        dev, task = self._memset_task(ptr, max_count, value, count)
        s = self._sync_stream_of(dev)
        self._submit(s, task)
        self._drain(s, what="synchronous memset")

    @_api()
    def memset_async(self, ptr: int, max_count: int, value: int, count: int, stream: int | None = None) -> None:
        s = self._stream(stream)
        _, task = self._memset_task(ptr, max_count, value, count)
        self._submit(s, task)

    @_api()
    def get_mem_info(self) -> tuple[int, int]:
        """(free, total) bytes of the current device's HBM."""
        return self._cur_device().memory.get_mem_info()

    # -- kernels ----------------------------------------------------------------------------------
    @_api()
    def load_binary(self, path: str | Path, magic: int | None = None) -> int:
        """Load a kernel binary from its ``.o`` or ``.json`` (the three files side by side), like
        ``rtDevBinaryRegister``: the magic must be RT_DEV_BINARY_MAGIC_ELF, the one Ascend910A kernels use,
        and the files are verified (magic string, sha256, ELF header and symbols, host CPU) before linking."""
        from ascendemu.kernels.binary import RT_DEV_BINARY_MAGIC_ELF
        from ascendemu.kernels.loader import load_binary, read_binary
        if magic is not None and magic != RT_DEV_BINARY_MAGIC_ELF:
            raise FeatureNotSupportedError(f"binary magic {magic:#x} is not supported: Ascend910A kernels are "
                                           f"RT_DEV_BINARY_MAGIC_ELF ({RT_DEV_BINARY_MAGIC_ELF:#x})")
        p = Path(path)
        if p.suffix in (".json", ".o", ".info"):
            p = p.with_suffix("")
        kb = read_binary(p.parent, p.name)
        func = load_binary(kb)
        h = self._handle()
        self.binaries[h] = Binary(h, str(p), {kb.json["kernelName"]: func})
        return h

    @_api()
    def register_function(self, func: KernelFunction) -> int:
        """Register an in-process kernel (e.g. a numba cfunc under the uniform ABI) and return its handle."""
        if not isinstance(func, KernelFunction):
            raise InvalidParamError(f"register_function expects a KernelFunction, got {type(func).__name__}")
        h = self._handle()
        self.functions[h] = func
        return h

    @_api()
    def unload_binary(self, binary: int) -> None:
        if binary not in self.binaries:
            raise RtParamInvalidError(f"binary handle {binary!r} is not loaded")
        del self.binaries[binary]

    @_api()
    def get_function(self, binary: int, name: str) -> int:
        b = self.binaries.get(binary)
        if b is None:
            raise RtParamInvalidError(f"binary handle {binary!r} is not loaded; load_binary() first")
        func = b.functions.get(name)
        if func is None:
            raise KernelLookupError(f"kernel {name!r} is not in binary {b.path}; it has {sorted(b.functions)}")
        h = self._handle()
        self.functions[h] = func
        return h

    def _function(self, func: int | KernelFunction) -> KernelFunction:
        if isinstance(func, KernelFunction):
            return func
        f = self.functions.get(func) if isinstance(func, int) else None
        if f is None:
            raise KernelLookupError(f"function handle {func!r} is unknown; get_function() or register_function() first")
        return f

    def _kernel_task(self, func: int | KernelFunction, block_dim: int, args: Sequence[int] | bytes,
                     dev: Device) -> Task:
        f = self._function(func)
        if not isinstance(block_dim, int) or isinstance(block_dim, bool) or not (1 <= block_dim <= 65535):
            raise InvalidParamError(f"block_dim must be an int in 1..65535, got {block_dim!r}")
        if block_dim != f.block_dim:
            raise InvalidParamError(f"kernel {f.name!r} was built for blockDim {f.block_dim}, launched with {block_dim}")
        if isinstance(args, (bytes, bytearray)):
            if len(args) % 8:
                raise InvalidParamError(f"args buffer must hold 8-byte addresses; {len(args)} bytes is not a multiple of 8")
            args = struct.unpack(f"<{len(args) // 8}Q", args)
        args = tuple(args)
        if len(args) != len(f.args):
            raise InvalidParamError(f"kernel {f.name!r} takes {len(f.args)} arguments "
                                    f"(inputs, outputs, workspaces), got {len(args)}")
        host_address = dev.memory.host_address
        try:
            host_args = tuple([host_address(a, spec.nbytes) for a, spec in zip(args, f.args)])
        except InvalidParamError:    # check again one by one, to name the bad argument
            for i, (a, spec) in enumerate(zip(args, f.args)):
                host_address(a, spec.nbytes, f"argument {i} ({spec.role}) of kernel {f.name!r}")
            raise
        task = Task("kernel", f.name, self.node.host_time, kernel=f, block_dim=block_dim, args=args,
                    host_args=host_args)
        if self.node.strict:
            task.reads = [(a, a + spec.nbytes) for a, spec in zip(args, f.args) if not spec.writes]
            task.writes = [(a, a + spec.nbytes) for a, spec in zip(args, f.args) if spec.writes]
        return task

    @_api(cost="launch_overhead_s")
    def launch_kernel(self, func: int | KernelFunction, block_dim: int, args: Sequence[int] | bytes,
                      stream: int | None = None) -> None:
        """Enqueue a kernel: ``args`` are device addresses (inputs, outputs, workspaces) or a packed buffer."""
        s = self._stream(stream)
        self._submit(s, self._kernel_task(func, block_dim, args, s.device))

    @_api(cost="graph_launch_overhead_s")
    def launch_graph(self, items: Sequence[tuple]) -> None:
        """Sink a whole task list in one launch (O2): no per-kernel host cost.

        Items: ("kernel", func, block_dim, args, stream), ("record", event, stream),
        ("wait", event, stream). Everything is validated before anything is enqueued.
        """
        planned: list[tuple[Stream, Task]] = []
        for item in items:
            kind = item[0] if isinstance(item, tuple) and item else None
            if kind == "kernel" and len(item) == 5:
                s = self._stream(item[4])
                planned.append((s, self._kernel_task(item[1], item[2], item[3], s.device)))
            elif kind in ("record", "wait") and len(item) == 3:
                ev, s = self._event(item[1]), self._stream(item[2])
                self._check_same_device(s, ev)
                planned.append((s, ev if kind == "record" else ("wait", ev)))
            else:
                raise InvalidParamError(f"graph item {item!r} is not ('kernel', func, block_dim, args, stream), "
                                        "('record', event, stream) or ('wait', event, stream)")
        t = self.node.host_time
        for s, task in planned:
            if isinstance(task, Event):
                task = Task("record", f"record event {task.id}", t, event=task, generation=task.issue_record())
            elif isinstance(task, tuple):
                ev = task[1]
                task = Task("wait", f"wait event {ev.id}", t, event=ev, generation=ev.wait_target())
            self._submit(s, task)

    def _sync_device(self, dev: Device) -> None:
        for s in list(dev.streams.values()) + ([self._sync_streams[dev.id]] if dev.id in self._sync_streams else []):
            self._drain(s, what=f"synchronize of device {dev.id}")

    @_api()
    def synchronize_device(self) -> None:
        self._sync_device(self._cur_device())

    # -- observation ---------------------------------------------------------------------------
    def device_time(self) -> float:
        """Simulated device seconds elapsed so far."""
        return self.node.env.now

    def host_time(self) -> float:
        """Simulated host seconds (the modelled API timeline)."""
        return self.node.host_time

    def mem_stats(self, device_id: int | None = None):
        dev = self._cur_device() if device_id is None else self._device(device_id)
        return dev.memory.stats()

    def dump_memory_snapshot(self, path: str | Path, device_id: int | None = None) -> Path:
        """Write the device pool's snapshot as a pickle for https://pytorch.org/memory_viz."""
        dev = self._cur_device() if device_id is None else self._device(device_id)
        dev.memory.pool.dump_snapshot(path)
        return Path(path)

    def write_trace(self, path: str | Path) -> Path:
        if self.node is None or self.node.trace is None:
            raise RtParamInvalidError("tracing is off; call init(trace=True) to collect a Chrome trace")
        return self.node.trace.write(path)


_runtime = Runtime()


def get_runtime() -> Runtime:
    """The process-wide runtime (like the one libascendcl a process has)."""
    return _runtime


def __getattr__(name: str):
    """Module-level API: ``runtime.malloc(...)`` calls the process-wide runtime's method."""
    attr = getattr(Runtime, name, None)
    if attr is not None and getattr(attr, "__acl_api__", False):
        return getattr(_runtime, name)
    if name in ("device_time", "host_time", "mem_stats", "write_trace", "host_buffer", "dump_memory_snapshot"):
        return getattr(_runtime, name)
    raise AttributeError(f"module 'ascendemu.hal.runtime' has no attribute {name!r}")
