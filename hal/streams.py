"""Runtime chapter "streams" (aclrtCreateStream, aclrtSynchronizeStream, ...), and how the host hands work
to the device and waits for it (events are :mod:`.events`).

A *stream* is a FIFO of device tasks; an *event* orders work across streams (a record on one stream,
a wait on another). Everything that enqueues ends in :meth:`StreamsMixin._submit` (the host blocks
when a stream's queue is full), everything that waits for the device in :meth:`StreamsMixin._wait`
(which turns a wait that can never end into the ACL sync-timeout error naming the blocked streams).
Single calls build the same typed step as a graph launch would (:mod:`.steps`) and enqueue it with
:meth:`StreamsMixin._enqueue`, so each kind of work is validated in exactly one place.
One of the mixins composed into :class:`ascendemu.hal.runtime.Runtime`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from ascendemu.device.model import Device, Event, Stream
from ascendemu.device.system import DeadlockError
from ascendemu.device.cost import LoopSinkTask
from ascendemu.device.tasks import LabelGotoTask, LabelSwitchTask, RecordTask, TimedTask, WaitTask
from ascendemu.errors import FeatureNotSupportedError, NoStreamResourceError, RtParamInvalidError, StreamSyncTimeoutError

from .api import api
from .steps import LabelGoto, LoopTask, RecordEvent, WaitEvent

if TYPE_CHECKING:
    import simpy

    from ascendemu.device.system import Node
    from ascendemu.device.tasks import Task

    from .steps import Step

__all__ = ["StreamsMixin"]



class StreamsMixin:
    """Streams and the runtime's submit/wait plumbing (events: :class:`~.events.EventsMixin`)."""

    node: Node | None
    streams: dict[int, Stream]
    events: dict[int, Event]
    _destroyed: dict[int, str]          # handle -> "stream" | "event", for "it was destroyed" hints
    _sync_streams: dict[int, Stream]    # device id -> the internal stream synchronous copies run on
    STEP_TASKS: dict[type, Callable]    # step kind -> its task builder (set by Runtime, which has every chapter)

    def _reset_streams(self) -> None:
        self.streams = {}
        self.events = {}
        self._destroyed = {}
        self._sync_streams = {}

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
            self.node.trace.name_track(h, f"device {dev.id} stream {h}")
        return h

    def _stream(self, stream: int | None) -> Stream:
        """The live stream of a handle (the layer in :mod:`.validate` made it None or an int)."""
        if stream is None or stream == 0:
            stream = self._ctx().default_stream
        s = self.streams.get(stream)
        if s is None:
            hint = "it was destroyed" if self._destroyed.get(stream) == "stream" else "it was never created"
            raise RtParamInvalidError(f"stream {stream!r} is not a live stream ({hint}); use create_stream()")
        return s

    @api()
    def create_stream(self) -> int:
        return self._new_stream(self._cur_device())

    @api()
    def destroy_stream(self, stream: int) -> None:
        s = self._stream(stream)
        if stream in (None, 0) or any(c.default_stream == stream and not c.destroyed for c in self.contexts.values()):
            raise RtParamInvalidError("the default stream of a context cannot be destroyed")
        self._release_stream(s)

    def _release_stream(self, s: Stream) -> None:
        """Wait for the stream's tasks (as aclrtDestroyStream does), then retire it and its handle."""
        self._drain(s)
        s.destroyed = True
        del self.streams[s.id]
        del s.device.streams[s.id]
        self._destroyed[s.id] = "stream"

    def _sync_stream_of(self, dev: Device) -> Stream:
        """The internal stream synchronous copies run on (not visible to the user)."""
        s = self._sync_streams.get(dev.id)
        if s is None:
            s = self._sync_streams[dev.id] = Stream(dev, -1 - dev.id, internal=True)
            if self.node.trace is not None:
                self.node.trace.name_track(s.id, f"device {dev.id} sync copies")
        return s

    # -- submitting and waiting -------------------------------------------------------------------
    def _blocked_report(self) -> str:
        lines = []
        for dev in self.node.devices:
            for s in dev.streams.values():
                if s.blocked_on is not None:
                    lines.append(f"stream {s.id} (device {dev.id}) waits on event {s.blocked_on.id}, "
                                 "which no record will ever trigger")
        return "; ".join(lines) or "no stream is blocked on an event"

    def _wait(self, event: simpy.Event, what: str, error: type = StreamSyncTimeoutError) -> None:
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

    def _submit_sunk(self, s: Stream, task: Task) -> None:
        """Enqueue one task of a graph launch. The host waits for room as :meth:`_submit` does, but a graph
        is one unit (on the chip, one model execute): when waiting cannot help, because the device can
        make no progress without the graph's later steps (a record further on that a full stream waits
        for), the task goes in beyond the queue depth instead of the launch failing with part of the
        graph enqueued. A graph that can never finish is reported when the host synchronises with it
        (507046), as any stream work is."""
        if len(s.queue) >= self.node.spec.stream_queue_depth:
            try:
                self.node.run_until(s.room())
            except DeadlockError:
                pass
        s.enqueue(task)

    def step_task(self, step: Step) -> tuple[Stream, Task]:
        """Validate one step (:mod:`.steps`) into its stream and device task, enqueuing nothing: the one
        place each kind of stream work is validated, for single calls and graph launches alike. Not an ACL
        call (no host cost, not recorded): the step-facing entry of the runtime, so the steps, which are
        data and their ``issue`` in public calls, never reach into the runtime's helpers. Each kind's
        builder lives in the chapter that owns it (``Runtime.STEP_TASKS``)."""
        return self.STEP_TASKS[type(step)](self, step)

    def _enqueue(self, step: Step) -> None:
        """Validate one step (:mod:`.steps`) into its device task and enqueue it on its stream."""
        s, task = self.step_task(step)
        self._submit(s, task)

    def _record_step_task(self, step: RecordEvent) -> tuple[Stream, RecordTask]:
        """A :class:`~.steps.RecordEvent` step as its stream and record task."""
        ev, s = self._event(step.event), self._stream(step.stream)
        self._check_same_device(s, ev)
        return s, RecordTask(f"record event {ev.id}", self.node.host_time, ev)

    def _wait_step_task(self, step: WaitEvent) -> tuple[Stream, WaitTask]:
        """A :class:`~.steps.WaitEvent` step as its stream and wait task."""
        s, ev = self._stream(step.stream), self._event(step.event)
        self._check_same_device(s, ev)
        return s, WaitTask(f"wait event {ev.id}", self.node.host_time, ev)

    def _goto_step_task(self, step: LabelGoto) -> tuple[Stream, LabelGotoTask]:
        """A :class:`~.steps.LabelGoto` step as its stream and goto task."""
        s = self._stream(step.stream)
        return s, LabelGotoTask("LabelGoto", self.node.host_time)

    @api()
    def label_goto(self, stream: int | None = None) -> None:
        """Jump back to a device loop's head (rtLabelGotoEx): one small task at the end of a loop's body."""
        self._enqueue(LabelGoto(stream))

    def _loop_step_task(self, step: LoopTask) -> tuple[Stream, TimedTask]:
        """A :class:`~.steps.LoopTask` step as its stream and a task holding it for its kind's price."""
        s = self._stream(step.stream)
        return s, TimedTask(step.task.name, self.node.host_time, step.task.time(s.device.spec, step.count), "loop")

    @api()
    def loop_task(self, task: type[LoopSinkTask], stream: int | None = None, count: int = 0) -> None:
        """One of the tasks a sunk training loop runs each iteration (MindSpore's StreamSwitch, StreamActive,
        loop-counter AssignAdd, GetNext on Ascend) of kind ``task`` (a device/cost.py ``LOOP_SINK_TASKS``
        class), moving ``count`` bytes (GetNext's batch): it holds ``stream`` for what that kind costs
        (``task.time``), so a sunk step's fixed cost is simulated and traced under MindSpore's op name."""
        self._enqueue(LoopTask(task, stream, count))

    @api(cost=0.0)
    def label_switch(self, ptr: int, stream: int | None = None, steps: Sequence[Step] = (),
                     taken: bool | None = None) -> bool:
        """The device's branch at a device loop's head (rtLabelSwitchByIndex): when ``stream`` reaches
        it, the device reads the bool at ``ptr`` and goes on with ``steps`` (the loop body's sunk tasks,
        validated before anything is enqueued; none when the host issues the body itself, O0/O1) if it
        is true, past them otherwise. Returns the branch taken, for the host to issue what follows.

        The device decides, not the host: to know the branch the simulation runs until the switch has
        read its predicate (``Node.run_ahead``) and the host's clock does not move, so no host round trip
        (synchronise, copy back, decide) is priced; the call itself costs the host nothing, since on the
        chip the branch and its tasks were loaded with the graph. ``taken`` given (a replay of a
        recorded run) is the branch, and nothing is read (the simulation still runs to the switch). A device without backing (DryRun) cannot read
        a predicate: FeatureNotSupportedError."""
        s = self._stream(stream)
        mem = s.device.memory
        mem.resolve(ptr, 1, "label_switch predicate")
        planned = [self.step_task(step) for step in steps]
        host_pred = None
        if taken is None:
            if not mem.backed:
                raise FeatureNotSupportedError(
                    "label_switch: a device without backing (DryRun) computes no predicate, so a device loop's "
                    "trip count is unknown; run the script without --dry-run / MS_SIMULATION_LEVEL")
            host_pred = mem.view(ptr, 1, "label_switch predicate")
        task = LabelSwitchTask("LabelSwitch", self.node.host_time, ptr, host_pred, taken)
        if self.node.strict:
            task.reads = [(ptr, ptr + 1)]
        self._submit(s, task)
        # a replay runs ahead too, though it knows the branch: the body then meets the simulation in the
        # state the run's did, so every figure (which core ran which block) comes out bit for bit
        try:
            self.node.run_ahead(s.finished(task.seq))
        except DeadlockError:
            raise StreamSyncTimeoutError(f"label_switch on stream {s.id} can never run: "
                                         f"{self._blocked_report()}") from None
        if taken is None:
            self._raise_stream_errors(s)
            taken = bool(task.taken)
        if taken:
            for st, t in planned:
                self._submit_sunk(st, t)
        return taken

    def _raise_stream_errors(self, s: Stream) -> None:
        if s.errors:
            err = s.errors.pop(0)
            s.errors.clear()
            raise err

    def _queues_of(self, dev: Device) -> list[Stream]:
        """Every stream of ``dev`` work may be queued on: the user's and the internal synchronous one."""
        return list(dev.streams.values()) + ([self._sync_streams[dev.id]] if dev.id in self._sync_streams else [])

    def _sync_device(self, dev: Device) -> None:
        for s in self._queues_of(dev):
            self._drain(s, what=f"synchronize of device {dev.id}")

    @api()
    def synchronize_stream(self, stream: int | None = None) -> None:
        self._drain(self._stream(stream))

    @api()
    def synchronize_device(self) -> None:
        self._sync_device(self._cur_device())

    @api()
    def query_stream(self, stream: int | None = None) -> bool:
        """True when every task enqueued on the stream has finished by the current host time."""
        s = self._stream(stream)
        self.node.catch_up()
        return s.idle

    @api()
    def stream_wait_event(self, stream: int | None, event: int) -> None:
        self._enqueue(WaitEvent(event, stream))
