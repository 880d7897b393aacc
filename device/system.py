"""A node of emulated devices sharing one simulated clock, plus the simulated host timeline.

Two clocks, kept apart: ``env.now`` is simulated device time; ``host_time`` is the simulated host
timeline that API calls advance by their modelled cost (a kernel launch costs 8-24 us on real hosts).
Host wall time is whatever Python takes and is measured separately by callers. The simulation runs
lazily: only when the host must observe the device (a synchronisation, a query), and never past what
the host waits for, so ``env.now <= host_time`` holds between API calls and a task the host enqueues at
``host_time`` never starts in the past.
"""
from __future__ import annotations

import simpy
from simpy.core import StopSimulation

from ascendemu.errors import InvalidParamError

from .model import Device
from .spec import DeviceSpec, get_spec

DEFAULT_DEVICE_COUNT = 8   # one Atlas 800 training server


class DeadlockError(Exception):
    """The simulation ran out of work before the awaited event: something waits forever."""


class Node:
    def __init__(self, spec: DeviceSpec | None = None, device_count: int = DEFAULT_DEVICE_COUNT,
                 strict: bool = False, defrag: bool = True, trace=None):
        if not isinstance(device_count, int) or device_count <= 0:
            raise InvalidParamError(f"device_count must be a positive int, got {device_count!r}")
        self.spec = spec or get_spec()
        self.env = simpy.Environment()
        self.host_time = 0.0
        self.strict = strict
        self.trace = trace
        self.devices = [Device(self, i, self.spec, defrag=defrag) for i in range(device_count)]

    def host_advance(self, seconds: float) -> float:
        """Charge a host-side cost on the simulated host timeline; returns the call's start time."""
        start = self.host_time
        self.host_time += seconds
        return start

    def catch_up(self) -> None:
        """Run the device up to the current host time (what has finished by now, has finished)."""
        if self.host_time > self.env.now:
            self.env.run(until=self.host_time)

    def run_until(self, event: simpy.Event) -> None:
        """Run the simulation until ``event``; raise DeadlockError if it can never trigger."""
        try:
            self.env.run(until=event)
        except RuntimeError as e:
            if "No scheduled events left" not in str(e):
                raise
            # SimPy leaves its stop hook on the event; remove it so a later run is not cut short
            if event.callbacks and StopSimulation.callback in event.callbacks:
                event.callbacks.remove(StopSimulation.callback)
            raise DeadlockError(str(e)) from None
        self.host_time = max(self.host_time, self.env.now)
