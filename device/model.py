"""SimPy model of one Ascend910A-like device: AI cores, DMA engines, streams, events, tasks.

Streams are FIFO task queues, each drained by one SimPy process. A task runs in simulated time:
kernel blocks occupy AI cores (blocks beyond the core count wait, i.e. run in waves), copies occupy a
DMA engine, event records release waits. A kernel's numerics run natively when its last block ends in
simulated time, and a copy moves bytes when it ends, so results are right exactly when the program's
stream/event synchronisation is right, as on hardware. Errors inside a task (a freed buffer, a kernel
fault) are kept on the stream and raised at the host's next synchronisation, as ACL reports them.
"""
from __future__ import annotations

import ctypes
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import simpy

from ascendemu.errors import AclError, RaceError
from ascendemu.traces.chrome import CORE_TID_BASE, DMA_TID_BASE, device_pid

from .cost import block_time, copy_time
from .memory import DeviceMemory
from .spec import DeviceSpec

if TYPE_CHECKING:
    from ascendemu.hal.kernel import KernelFunction

    from .system import Node

# Blocks of one launch run on host worker threads when the launch moves at least this much data;
# below it, thread hand-off costs more than it saves.
PARALLEL_BLOCKS_MIN_BYTES = 1 << 20
_block_workers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="aicore")


@dataclass(slots=True)
class Task:
    """One entry of a stream: what to do (``kind``), its operands, and when the host issued it."""

    kind: str                      # "kernel" | "copy" | "memset" | "record" | "wait"
    name: str
    submit_time: float
    kernel: KernelFunction | None = None
    block_dim: int = 1
    args: tuple[int, ...] = ()     # device addresses (kernel)
    host_args: tuple[int, ...] = ()               # host addresses of the args, checked at launch
    copy: Callable[[], None] | None = None       # moves the bytes when the task ends (copy/memset)
    nbytes: int = 0
    copy_kind: str = ""
    event: "Event | None" = None
    generation: simpy.Event | None = None        # record: what it triggers; wait: what it waits for
    reads: Sequence[tuple[int, int]] = ()    # device [start, end) ranges (kept for strict mode)
    writes: Sequence[tuple[int, int]] = ()


class Units:
    """A pool of identical numbered units (AI cores, DMA engines) that tasks hold for a while.

    Like ``simpy.Resource`` but a free unit is taken without scheduling an event, which halves the
    simulation cost of a small kernel; a task finding none free waits on an event in FIFO order.
    Unit numbers name the trace tracks.
    """

    def __init__(self, env: simpy.Environment, count: int):
        self.env = env
        self.free = list(range(count - 1, -1, -1))
        self.waiters: deque[simpy.Event] = deque()

    def acquire(self) -> int | None:
        return self.free.pop() if self.free else None

    def wait(self) -> simpy.Event:
        ev = self.env.event()
        self.waiters.append(ev)
        return ev

    def release(self, unit: int) -> None:
        if self.waiters:
            self.waiters.popleft().succeed(unit)
        else:
            self.free.append(unit)


class Event:
    """An ACL event. Each record issued creates a generation; a wait issued later waits for it."""

    def __init__(self, device: "Device", event_id: int, flags: int):
        self.device = device
        self.id = event_id
        self.flags = flags
        self.destroyed = False
        self.next_generation = device.env.event()   # what the next record will trigger
        self.last_issued: simpy.Event | None = None  # generation of the most recent record issued
        self.timestamp: float | None = None          # simulated time the last record executed
        self.record_stream: "Stream | None" = None
        self.flow_src: tuple[int, int, float] | None = None

    def issue_record(self) -> simpy.Event:
        gen = self.next_generation
        self.next_generation = self.device.env.event()
        self.last_issued = gen
        return gen

    def wait_target(self) -> simpy.Event:
        """ACL semantics: wait for the most recent record issued; if none, for the next one."""
        return self.last_issued if self.last_issued is not None else self.next_generation

    @property
    def complete(self) -> bool:
        return self.last_issued is not None and self.last_issued.processed


class Stream:
    """A FIFO of tasks drained by one SimPy process."""

    def __init__(self, device: "Device", stream_id: int, internal: bool = False):
        self.device = device
        self.id = stream_id
        self.internal = internal
        self.destroyed = False
        self.queue: deque[Task] = deque()
        self.busy = False
        self.blocked_on: Event | None = None
        self.errors: list[AclError] = []
        self._wake: simpy.Event | None = None
        self._drain_waiters: list[simpy.Event] = []
        self._room_waiters: list[simpy.Event] = []
        device.env.process(self._loop())

    @property
    def idle(self) -> bool:
        return not self.queue and not self.busy

    def enqueue(self, task: Task) -> None:
        self.queue.append(task)
        if self.device.strict and (task.writes or task.reads):
            self.device.pending[id(task)] = (self, task)
        if self._wake is not None and not self._wake.triggered:
            self._wake.succeed()

    def room(self) -> simpy.Event:
        """An event that triggers once the queue has drained to half the stream queue depth (a blocked
        host resumes in batches, so the simulation is not restarted for every single launch)."""
        ev = self.device.env.event()
        self._room_waiters.append(ev)
        return ev

    def drained(self) -> simpy.Event:
        """An event that triggers once every task enqueued so far has finished."""
        ev = self.device.env.event()
        if self.idle:
            ev.succeed()
        else:
            self._drain_waiters.append(ev)
        return ev

    def _loop(self):
        env = self.device.env
        while True:
            if not self.queue:
                for ev in self._drain_waiters:
                    ev.succeed()
                self._drain_waiters = []
                self._wake = env.event()
                yield self._wake
                self._wake = None
                continue
            task = self.queue.popleft()
            if self._room_waiters and len(self.queue) <= self.device.spec.stream_queue_depth // 2:
                for ev in self._room_waiters:
                    ev.succeed()
                self._room_waiters = []
            self.busy = True
            if task.submit_time > env.now:
                yield env.timeout(task.submit_time - env.now)
            if self.device.strict and (task.writes or task.reads):
                self.device.running[id(task)] = (self, task)
            try:
                yield from self.device.run_task(self, task)
            except AclError as e:
                self.errors.append(e)
            finally:
                self.device.pending.pop(id(task), None)
                self.device.running.pop(id(task), None)
            self.busy = False


class Device:
    """One emulated chip: cores and DMA engines as SimPy resources, memory, streams and events."""

    def __init__(self, node: "Node", device_id: int, spec: DeviceSpec, defrag: bool = True):
        self.node = node
        self.env: simpy.Environment = node.env
        self.id = device_id
        self.spec = spec
        self.cores = Units(self.env, spec.ai_cores)
        self.dma = Units(self.env, spec.dma_engines)
        self._block_times: dict = {}
        self.memory = DeviceMemory(spec, device_id, defrag=defrag)
        self.streams: dict[int, Stream] = {}
        self.events: dict[int, Event] = {}
        # strict mode: tasks touching memory that the host enqueued / a stream started, not yet finished
        self.pending: dict[int, tuple[Stream, Task]] = {}
        self.running: dict[int, tuple[Stream, Task]] = {}
        self.busy_time = 0.0
        self.kernels_run = 0

    @property
    def strict(self) -> bool:
        return self.node.strict

    @property
    def trace(self):
        return self.node.trace

    # -- task execution -------------------------------------------------------------------------
    def run_task(self, stream: Stream, task: Task):
        if self.strict:
            self.check_race(f"task {task.name!r} on stream {stream.id}", task.reads, task.writes, exclude=stream,
                            against=self.running)
        if task.kind == "kernel":
            yield from self._run_kernel(stream, task)
        elif task.kind in ("copy", "memset"):
            yield from self._run_copy(stream, task)
        elif task.kind == "record":
            self._run_record(stream, task)
        elif task.kind == "wait":
            yield from self._run_wait(stream, task)

    def _run_kernel(self, stream: Stream, task: Task):
        env, func = self.env, task.kernel
        start = env.now
        key = (func.cost, task.block_dim)
        t_block = self._block_times.get(key)
        if t_block is None:
            t_block = self._block_times[key] = block_time(self.spec, func.cost, task.block_dim)
        workers = min(task.block_dim, self.spec.ai_cores)
        if workers == 1:
            yield from self._blocks(task, 0, 1, t_block, self.spec.task_overhead_s)
        else:
            yield env.timeout(self.spec.task_overhead_s)
            yield simpy.AllOf(env, [env.process(self._blocks(task, w, workers, t_block)) for w in range(workers)])
        self._compute(task)
        self.kernels_run += 1
        if self.trace is not None:
            self.trace.span(device_pid(self.id), stream.id, task.name, start, env.now - start, "kernel",
                            {"blockDim": task.block_dim, "cost": func.cost.to_json()})

    def _blocks(self, task: Task, first: int, step: int, t_block: float, lead: float = 0.0):
        """Blocks first, first+step, ... of a launch, each holding one AI core for ``t_block``."""
        env = self.env
        for b in range(first, task.block_dim, step):
            core = self.cores.acquire()
            if core is None:
                core = yield self.cores.wait()
            t0 = env.now
            yield env.timeout(t_block + lead)
            lead = 0.0
            self.cores.release(core)
            self.busy_time += t_block
            if self.trace is not None:
                self.trace.span(device_pid(self.id), CORE_TID_BASE + core, task.name, t0, t_block, "block",
                                {"block": b})

    def _compute(self, task: Task) -> None:
        """Run the kernel's blocks natively on the host backing of its (re-checked) arguments."""
        func = task.kernel
        host = task.host_args
        for spec_, addr in zip(func.args, task.args):
            if spec_.zero_init:
                self.memory.view(addr, spec_.nbytes)[:] = 0
        argv = (ctypes.c_uint64 * max(1, len(host)))(*host)
        if task.block_dim > 1 and func.cost.bytes >= PARALLEL_BLOCKS_MIN_BYTES:
            list(_block_workers.map(lambda b: func.call_block(argv, b), range(task.block_dim)))
        else:
            for b in range(task.block_dim):
                func.call_block(argv, b)

    def _run_copy(self, stream: Stream, task: Task):
        env = self.env
        engine = self.dma.acquire()
        if engine is None:
            engine = yield self.dma.wait()
        t0 = env.now
        yield env.timeout(copy_time(self.spec, task.nbytes, task.copy_kind))
        self.dma.release(engine)
        task.copy()
        if self.trace is not None:
            args = {"bytes": task.nbytes, "kind": task.copy_kind}
            self.trace.span(device_pid(self.id), DMA_TID_BASE + engine, task.name, t0, env.now - t0, "dma", args)
            self.trace.span(device_pid(self.id), stream.id, task.name, t0, env.now - t0, "copy", args)

    def _run_record(self, stream: Stream, task: Task) -> None:
        ev = task.event
        ev.timestamp = self.env.now
        ev.record_stream = stream
        ev.flow_src = (device_pid(self.id), stream.id, self.env.now)
        if not task.generation.triggered:
            task.generation.succeed(self.env.now)
        if self.trace is not None:
            self.trace.span(device_pid(self.id), stream.id, task.name, self.env.now, 0.0, "event")

    def _run_wait(self, stream: Stream, task: Task):
        t0 = self.env.now
        if not task.generation.processed:
            stream.blocked_on = task.event
            yield task.generation
            stream.blocked_on = None
        if self.trace is not None:
            self.trace.span(device_pid(self.id), stream.id, task.name, t0, self.env.now - t0, "event")
            if task.event.flow_src is not None:
                self.trace.flow(task.name, task.event.flow_src, (device_pid(self.id), stream.id, self.env.now))

    # -- strict mode ----------------------------------------------------------------------------
    def check_race(self, who: str, reads: list[tuple[int, int]], writes: list[tuple[int, int]] = (),
                   exclude: Stream | None = None, against: dict | None = None) -> None:
        """Strict mode: raise if ``who`` reads memory an unfinished task writes, or writes memory an
        unfinished task reads or writes. The host checks against every task it enqueued (``pending``);
        a starting task against the tasks running now (``running``), except those of its own stream."""
        for other_stream, other in list((self.pending if against is None else against).values()):
            if other_stream is exclude:
                continue
            for mine, theirs, verb in ((reads, other.writes, "reads"), (writes, other.writes, "writes"),
                                       (writes, other.reads, "writes")):
                for (ms, me) in mine:
                    for (ts, te) in theirs:
                        if ms < te and ts < me:
                            their = "writing" if theirs is other.writes else "reading"
                            raise RaceError(
                                f"strict mode: {who} {verb} device memory [{ms:#x}, {me:#x}) that task "
                                f"{other.name!r} on stream {other_stream.id} (device {self.id}) has not finished "
                                f"{their}; synchronize that stream or wait on an event recorded after it")

    def utilization(self) -> float:
        """Fraction of core-time busy since the start of the simulation."""
        return self.busy_time / (self.env.now * self.spec.ai_cores) if self.env.now > 0 else 0.0
