"""SimPy model of one Ascend910A-like device: AI cores, DMA engines, streams and events.

Streams are FIFO task queues, each drained by one SimPy process. A task runs in simulated time:
kernel blocks occupy AI cores (blocks beyond the core count wait, i.e. run in waves), copies occupy a
DMA engine, event records release waits. A kernel's numerics run natively when its last block ends in
simulated time, and a copy moves bytes when it ends, so results are right exactly when the program's
stream/event synchronisation is right, as on hardware. Errors inside a task (a kernel fault, a kernel
with native code on a device without backing) are kept on the stream and raised at the host's next
synchronisation, as ACL reports them.

Tasks are numbered per stream in enqueue order. Enqueuing a task records the allocations it touches
with its number (:meth:`DeviceMemory.note_use`), and :meth:`Stream.unfinished` tells from the number
alone whether it is still queued or running, so the runtime's free can wait for exactly the tasks
that still use a buffer (:meth:`Stream.finished`), and a buffer is never reused under them.

What a task does is defined by its class in :mod:`.tasks` (their base, :class:`Task`, lives here, so
the tasks import the device they run on and not the other way round); this module only queues and runs tasks
(``task.enqueued()`` when the host issues one, ``task.run(device, stream)`` when it reaches the head
of its stream); adding a kind of work never touches it.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Sequence

import simpy

from ascendemu.errors import AclError, RaceError

from .memory import DeviceMemory
from .pool import DEFAULT_POOL_POLICY
from .spec import DeviceSpec

if TYPE_CHECKING:
    from collections.abc import Generator

Ranges = Sequence[tuple[int, int]]     # device [start, end) byte ranges


@dataclass(slots=True)
class Task:
    """Base of every task: its name (trace and error messages), when the host issued it, and the
    device memory it reads and writes (kept for strict mode; empty when strict mode is off)."""

    name: str
    submit_time: float
    reads: Ranges = field(default=(), kw_only=True)
    writes: Ranges = field(default=(), kw_only=True)
    seq: int = field(default=0, init=False, repr=False, compare=False)   # number on its stream, set at enqueue
    busy: ClassVar[bool] = True     # its time on the stream counts as busy (a wait's blocked time does not)

    def enqueued(self) -> None:
        """The host has just enqueued this task (host order). Nothing to do for most kinds."""

    def buffers(self) -> Sequence[int]:
        """Device addresses inside each allocation the task reads or writes."""
        return [start for start, _ in (*self.reads, *self.writes)]

    def dropped(self) -> None:
        """Its stream dropped it without finishing it (reset_device, ``Stream.drop``): it counts as
        finished. Nothing to do for most kinds; one that others wait for releases them."""

    def run(self, device: Device, stream: Stream) -> Generator:
        """Perform the task in simulated time on ``device`` for ``stream`` (a SimPy generator)."""
        raise NotImplementedError(f"{type(self).__name__} does not define run()")

    def run_from(self, device: Device, stream: Stream, at: float) -> Generator | None:
        """Run as if started at ``at`` (later than now) without a separate wait for it, or None: the
        stream then waits for ``at`` and calls :meth:`run`. Most kinds have no shortcut."""
        return None


class NodeClocks(Protocol):
    """What a device needs of its node (``device.system.Node`` is one; this module does not import it,
    the node is built from devices): the simulation environment, strict mode and the trace."""

    env: simpy.Environment
    strict: bool
    trace: Any


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
        self.flow_src: tuple[int, float] | None = None   # traced: (stream tid, time) of the last record run

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


class TaskObserver(Protocol):
    """Sees every task of a device: ``issued`` when the host enqueues it on ``stream`` (host order),
    ``finished`` when it has run, from ``start`` (its stream reached it) to ``end``, simulated seconds."""

    def issued(self, stream: "Stream", task: Task) -> None: ...

    def finished(self, stream: "Stream", task: Task, start: float, end: float) -> None: ...


class Stream:
    """A FIFO of tasks drained by one SimPy process."""

    def __init__(self, device: "Device", stream_id: int, internal: bool = False):
        self.device = device
        self.id = stream_id
        self.internal = internal
        self.destroyed = False
        self.queue: deque[Task] = deque()
        self.current: Task | None = None     # the task running now
        self.issued = 0                      # number of the last task enqueued (tasks are numbered from 1)
        self.blocked_on: Event | None = None
        self.errors: list[AclError] = []
        self._wake: simpy.Event | None = None
        self._drain_waiters: list[simpy.Event] = []
        self._room_waiters: list[simpy.Event] = []
        self._finish_waiters: list[tuple[int, simpy.Event]] = []
        # what the stream ran, in simulated seconds: busy is the time its tasks ran, a wait's blocked
        # time excluded (``Task.busy``); last_end when its last task ended
        self.tasks_run = 0
        self.busy_time = 0.0
        self.last_end = 0.0
        device.stream_log[stream_id] = self
        self._process = device.env.process(self._loop())

    @property
    def idle(self) -> bool:
        return not self.queue and self.current is None

    def enqueue(self, task: Task) -> None:
        task.enqueued()
        self.queue.append(task)
        self.issued = task.seq = self.issued + 1
        buffers = task.buffers()
        if buffers:
            self.device.memory.note_use(buffers, self, task.seq)
        if self.device.strict and (task.writes or task.reads):
            self.device.pending[id(task)] = (self, task)
        if self.device.observer is not None:
            self.device.observer.issued(self, task)
        if self._wake is not None and not self._wake.triggered:
            self._wake.succeed()

    def drop(self) -> None:
        """Drop every unfinished task, as reset_device does once the device has run what it can: queued
        tasks never run, and the running one, which can never finish (it waits for an event nothing will
        trigger), is interrupted where it waits, so it never resumes to touch memory. Dropped tasks
        count as finished (:meth:`unfinished`, their ``Task.dropped``), and whoever waits for them is
        released. Changes nothing on an idle stream."""
        dropped = list(self.queue)
        self.queue.clear()
        current = self.current
        if current is not None:
            dropped.append(current)
            self.current = None
            self.blocked_on = None
            self._process.interrupt("dropped by reset_device")
        device = self.device
        for task in dropped:
            device.pending.pop(id(task), None)
            device.running.pop(id(task), None)
            task.dropped()
        self.errors.clear()
        for ev in self._drain_waiters + self._room_waiters:
            ev.succeed()
        self._drain_waiters, self._room_waiters = [], []
        self._release_finish_waiters(self.issued)

    def room(self) -> simpy.Event:
        """An event that triggers once the queue has drained to half the stream queue depth (a blocked
        host resumes in batches, so the simulation is not restarted for every single launch)."""
        ev = self.device.env.event()
        self._room_waiters.append(ev)
        return ev

    def unfinished(self, seq: int) -> bool:
        """Is task number ``seq`` still queued or running? (Tasks dropped from the queue, as reset_device
        does, are not: they will never run.)"""
        return seq > self.issued - len(self.queue) or (self.current is not None and self.current.seq == seq)

    def task_at(self, seq: int) -> Task:
        """The unfinished task number ``seq`` (for messages)."""
        if self.current is not None and self.current.seq == seq:
            return self.current
        return self.queue[seq - (self.issued - len(self.queue)) - 1]

    def finished(self, seq: int) -> simpy.Event:
        """An event that triggers once task number ``seq`` has finished."""
        ev = self.device.env.event()
        if self.unfinished(seq):
            self._finish_waiters.append((seq, ev))
        else:
            ev.succeed()
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
        device = self.device
        env, queue = device.env, self.queue
        half_depth = device.spec.stream_queue_depth // 2
        while True:
            if not queue:
                for ev in self._drain_waiters:
                    ev.succeed()
                self._drain_waiters = []
                self._wake = env.event()
                yield self._wake
                self._wake = None
                continue
            task = queue.popleft()
            if self._room_waiters and len(queue) <= half_depth:
                for ev in self._room_waiters:
                    ev.succeed()
                self._room_waiters = []
            self.current = task
            run = None
            now = env.now
            tracked = dropped = False
            try:
                if task.submit_time > now:      # the host issued it later: wait for its submit time
                    delay = task.submit_time - now
                    started = now + delay       # the float the timeout would end at
                    if not device.strict and env.peek() > started:
                        # nothing else happens before then: the task may fold the wait into its own
                        run = task.run_from(device, self, started)
                    if run is None:
                        yield env.timeout(delay)
                if run is None:
                    started = env.now
                tracked = device.strict and (task.writes or task.reads)
                if tracked:
                    device.running[id(task)] = (self, task)
                # run_task adds strict mode's race check; without it, the task runs itself directly
                if run is None:
                    run = device.run_task(self, task) if device.strict else task.run(device, self)
                yield from run
            except AclError as e:
                self.errors.append(e)
            except simpy.Interrupt:         # dropped (:meth:`drop`): it never finishes, nothing is counted
                dropped = True
            finally:
                if tracked:
                    device.pending.pop(id(task), None)
                    device.running.pop(id(task), None)
            if dropped:
                task = run = None
                continue
            self.current = None
            self.tasks_run += 1
            if task.busy:
                self.busy_time += env.now - started
            self.last_end = env.now
            if device.observer is not None:
                device.observer.finished(self, task, started, env.now)
            if self._finish_waiters:
                self._release_finish_waiters(task.seq)
            task = run = None      # a finished task (and the views a copy holds) must not outlive its run

    def _release_finish_waiters(self, done: int) -> None:
        """Trigger the waits for task ``done`` and earlier ones (the stream runs its tasks in order)."""
        waiting = []
        for seq, ev in self._finish_waiters:
            if seq <= done:
                ev.succeed()
            else:
                waiting.append((seq, ev))
        self._finish_waiters = waiting


class Device:
    """One emulated chip: cores and DMA engines as SimPy resources, memory, streams and events."""

    def __init__(self, node: NodeClocks, device_id: int, spec: DeviceSpec, defrag: bool = True, backing: bool = True,
                 pool: str = DEFAULT_POOL_POLICY):
        self.node = node
        self.env: simpy.Environment = node.env
        self.id = device_id
        self.spec = spec
        self.strict: bool = node.strict    # fixed for the node's life (init(strict=))
        self.trace = node.trace            # init(trace=True), or Node.attach_trace later
        self.cores = Units(self.env, spec.ai_cores)
        self.dma = Units(self.env, spec.dma_engines)
        self.block_times: dict = {}     # (KernelCost, block_dim) -> seconds per block, for KernelTask
        self.memory = DeviceMemory(spec, device_id, defrag=defrag, backing=backing, pool=pool)
        self.streams: dict[int, Stream] = {}
        self.stream_log: dict[int, Stream] = {}     # every stream the device ever had (destroyed ones too)
        # told of every task as the host enqueues it and when it has run: an exporter that turns the
        # run into a dependency graph (replay.chakra)
        self.observer: TaskObserver | None = None
        self.core_busy = [0.0] * spec.ai_cores      # simulated seconds each AI core ran blocks
        self.events: dict[int, Event] = {}
        # strict mode: tasks touching memory that the host enqueued / a stream started, not yet finished
        self.pending: dict[int, tuple[Stream, Task]] = {}
        self.running: dict[int, tuple[Stream, Task]] = {}
        self.busy_time = 0.0
        self.kernels_run = 0

    # -- task execution -------------------------------------------------------------------------
    def run_task(self, stream: Stream, task: Task) -> Generator:
        """Start ``task`` on ``stream``: strict mode first checks it against the tasks running on the
        other streams, then the task runs itself (see :mod:`.tasks`)."""
        if self.strict:
            self.check_race(f"task {task.name!r} on stream {stream.id}", task.reads, task.writes, exclude=stream,
                            against=self.running)
        return task.run(self, stream)

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

    def trace_memory(self, time_s: float) -> None:
        """Traced: a sample of this device's memory counters (its pool's allocated and reserved bytes)
        at ``time_s``. The runtime calls it after every change of the pool, at the host time it happened."""
        if self.trace is not None:
            stats = self.memory.stats()
            self.trace.counter(f"device {self.id} memory", time_s,
                               {"allocated": stats.used, "reserved": stats.reserved})

    def utilization(self) -> float:
        """Fraction of core-time busy since the start of the simulation."""
        return self.busy_time / (self.env.now * self.spec.ai_cores) if self.env.now > 0 else 0.0
