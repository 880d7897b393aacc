"""Runtime chapter "events" (aclrtCreateEvent, aclrtRecordEvent, aclrtSynchronizeEvent, ...).

An *event* orders work across streams: a record on one stream, a wait on another; its timestamp is the
simulated instant its record ran. Records and waits are steps enqueued through the streams' plumbing
(:meth:`~.streams.StreamsMixin._enqueue`). One of the mixins composed into :class:`ascendemu.hal.runtime.Runtime`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ascendemu.device.model import Event, Stream
from ascendemu.errors import EventSyncTimeoutError, NoEventResourceError, RtParamInvalidError

from .api import api
from .steps import RecordEvent

if TYPE_CHECKING:
    from ascendemu.device.system import Node

__all__ = ["EVENT_STATUS_COMPLETE", "EVENT_STATUS_NOT_READY", "EVENT_TIME_LINE", "EventsMixin"]

# event flags and status
EVENT_TIME_LINE = 0x8
EVENT_STATUS_COMPLETE = 0
EVENT_STATUS_NOT_READY = 1


class EventsMixin:
    """Events: handles, records, status and elapsed time."""

    node: Node | None
    events: dict[int, Event]
    _destroyed: dict[int, str]          # handle -> "stream" | "event", for "it was destroyed" hints

    def _event(self, event: int) -> Event:
        """The live event of a handle (an int: the layer in :mod:`.validate` checked it)."""
        ev = self.events.get(event)
        if ev is None:
            hint = "it was destroyed" if self._destroyed.get(event) == "event" else "it was never created"
            raise RtParamInvalidError(f"event {event!r} is not a live event ({hint}); use create_event()")
        return ev

    @staticmethod
    def _check_same_device(s: Stream, ev: Event) -> None:
        if s.device is not ev.device:
            raise RtParamInvalidError(f"stream {s.id} is on device {s.device.id} but event {ev.id} "
                                      f"on device {ev.device.id}; events work within one device")

    @api()
    def create_event(self, flags: int = 0) -> int:
        dev = self._cur_device()
        if len(dev.events) >= dev.spec.max_events:
            raise NoEventResourceError(f"device {dev.id} already has {len(dev.events)} events "
                                       f"(limit {dev.spec.max_events}); destroy unused events")
        h = self._handle()
        ev = Event(dev, h, flags)
        dev.events[h] = ev
        self.events[h] = ev
        return h

    @api()
    def destroy_event(self, event: int) -> None:
        ev = self._event(event)
        ev.destroyed = True
        del self.events[event]
        del ev.device.events[event]
        self._destroyed[event] = "event"

    @api()
    def record_event(self, event: int, stream: int | None = None) -> None:
        self._enqueue(RecordEvent(event, stream))

    @api()
    def reset_event(self, event: int, stream: int | None = None) -> None:
        """Return the event to the never-recorded state (later waits wait for the next record)."""
        ev = self._event(event)
        self._stream(stream)
        ev.last_issued = None
        ev.timestamp = None

    @api()
    def query_event_status(self, event: int) -> int:
        ev = self._event(event)
        self.node.catch_up()
        return EVENT_STATUS_COMPLETE if ev.complete else EVENT_STATUS_NOT_READY

    @api()
    def synchronize_event(self, event: int) -> None:
        ev = self._event(event)
        if ev.last_issued is None:
            return
        self._wait(ev.last_issued, f"synchronize of event {ev.id}", EventSyncTimeoutError)

    @api()
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
