"""A node of emulated devices sharing one simulated clock, plus the simulated host timeline.

Two clocks, kept apart: ``env.now`` is simulated device time; ``host_time`` is the simulated host
timeline that API calls advance by their modelled cost (a kernel launch costs 8-24 us on real hosts).
Host wall time is whatever Python takes and is measured separately by callers. The simulation runs
lazily: only when the host must observe the device (a synchronisation, a query), and never past what
the host waits for, so ``env.now <= host_time`` holds between API calls and a task the host enqueues at
``host_time`` never starts in the past.

A wait that can never end (a stream waiting on an event no record will trigger) is found by stepping
the simulation ourselves until the awaited event is processed: if ``env.step()`` reports
``EmptySchedule`` first (its documented signal that nothing is scheduled any more), nothing ever will
trigger the event, and :class:`DeadlockError` says so. This relies only on SimPy's public
``step``/``EmptySchedule``, not on its error text, and leaves no stop hook on the event that could cut
a later run short. (Checking ``env.peek()`` before every step works too but costs 5% of a launch.)
"""
from __future__ import annotations

import simpy
from simpy.core import EmptySchedule

from ascendemu.errors import check_int

from .collectives import CollectiveChain
from .interconnect import DEVICES_PER_SERVER
from .model import Device
from .pool import DEFAULT_POOL_POLICY
from .spec import DeviceSpec, get_spec

DEFAULT_DEVICE_COUNT = DEVICES_PER_SERVER   # one Atlas 800 training server


class DeadlockError(Exception):
    """The simulation ran out of work before the awaited event: something waits forever."""


class Node:
    def __init__(self, spec: DeviceSpec | None = None, device_count: int = DEFAULT_DEVICE_COUNT,
                 strict: bool = False, defrag: bool = True, trace=None, backing: bool = True,
                 pool: str = DEFAULT_POOL_POLICY):
        """``backing=False`` gives the devices no host memory (DryRun): allocation, checks and time as
        usual, but no bytes; see :mod:`.memory`. ``pool``: the device pools' placement policy
        (:data:`.pool.POOL_POLICIES`)."""
        check_int(device_count, "device_count", minimum=1)
        self.spec = spec or get_spec()
        self.env = simpy.Environment()
        self.host_time = 0.0
        self.strict = strict
        self.trace = trace
        self.collectives = CollectiveChain()     # collectives run in issue order (device/collectives.py)
        self.devices = [Device(self, i, self.spec, defrag=defrag, backing=backing, pool=pool)
                        for i in range(device_count)]

    def attach_trace(self, trace) -> None:
        """Record into ``trace`` from now on (a profiler started mid-run); the devices share it."""
        self.trace = trace
        for d in self.devices:
            d.trace = trace

    def host_advance(self, seconds: float) -> float:
        """Charge a host-side cost on the simulated host timeline; returns the call's start time."""
        start = self.host_time
        self.host_time += seconds
        return start

    def catch_up(self) -> None:
        """Run the device up to the current host time (what has finished by now, has finished)."""
        if self.host_time > self.env.now:
            self.env.run(until=self.host_time)

    def run_ahead(self, event: simpy.Event) -> None:
        """Run the simulation until ``event`` has been processed *without* moving the host's clock: the
        device deciding on its own (a device loop's LabelSwitch reads its predicate), where the host does
        not wait. The one exception to ``env.now <= host_time``: the device may be ahead of the host
        afterwards, and tasks the host enqueues later start when their stream reaches them. DeadlockError
        as :meth:`run_until`."""
        env = self.env
        step = env.step
        try:
            while event.callbacks is not None:
                step()
        except EmptySchedule:
            raise DeadlockError(f"nothing is scheduled after simulated time {env.now * 1e3:.6f} ms, so the "
                                f"awaited {event!r} can never trigger") from None

    def run_until(self, event: simpy.Event) -> None:
        """Run the simulation until ``event`` has been processed; raise DeadlockError if it never can be
        (nothing is scheduled any more, so nothing will ever trigger it)."""
        env = self.env
        step = env.step
        try:
            while event.callbacks is not None:     # ``event.processed``, without a property call per step
                step()
        except EmptySchedule:
            # the host waited until the device stalled: its clock is not behind the device's either way
            self.host_time = max(self.host_time, env.now)
            raise DeadlockError(f"nothing is scheduled after simulated time {env.now * 1e3:.6f} ms, so the "
                                f"awaited {event!r} can never trigger") from None
        self.host_time = max(self.host_time, env.now)
