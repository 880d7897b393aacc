"""What a run measured on the simulated node, as plain data: the one home of a run's device figures.

The trace recorder writes :func:`figures` in a trace's ``End`` record (``hal.record``), a replay computes
them the same way, the regression gate compares them (``replay.compare``), and the executor's summary
prints its device's :func:`device_figures`. Kept apart from the recorder so that a plain run's summary
does not import the trace format.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ascendemu.device.model import Device
    from ascendemu.device.system import Node

__all__ = ["device_figures", "figures"]


def device_figures(d: Device) -> dict:
    """One device's figures: kernels run, each stream's [tasks, busy seconds, end of its last task] (the
    internal stream of synchronous copies is ``sync``), each AI core's busy seconds and the pool's
    statistics (``device.pool.PoolStats``)."""
    return {
        "kernels_run": d.kernels_run,
        "streams": {("sync" if s.internal else str(h)): [s.tasks_run, s.busy_time, s.last_end]
                    for h, s in d.stream_log.items()},
        "cores": list(d.core_busy),
        "pool": dataclasses.asdict(d.memory.stats()),
    }


def figures(node: Node, steps: dict[str, list] | None = None) -> dict:
    """What a run measured, as plain data (JSON- and msgpack-able, keys are strings): simulated device and
    host seconds, the steps (``hal.record.StepClock``), and :func:`device_figures` of each device that was
    used (that has had a stream)."""
    devices = {str(d.id): device_figures(d) for d in node.devices if d.stream_log}
    return {"device_time_s": node.env.now, "host_time_s": node.host_time,
            "steps": {k: list(v) for k, v in (steps or {}).items()}, "devices": devices}
