"""How much of a device's simulated time went to communication, and how much of that computation did not hide.

A DryRun of one rank of a large cluster is read for three figures per rank (``ascendemu msrun --sim_level``):
step time, communication time and *exposed* communication, the time a collective ran while no kernel did
(MindSpore's profiler calls it communication not overlapped). :class:`CommOverlap` is a device's task
observer (``Device.observer``): it keeps the interval of each kernel (compute) and of each collective's
transfer, ``[end - modelled seconds, end]`` (not the time it queued behind the process's previous
collective), and measures their unions when asked.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .model import Stream, Task
from .tasks import CollectiveTask, KernelTask

__all__ = ["COMM_LINE", "EXPOSED_LINE", "CommOverlap", "union_length", "uncovered_length"]

# The DryRun lines a launcher reads back from each rank's log (``ascendemu msrun --sim_level``), beside
# graph.modes' peak memory and step time lines.
COMM_LINE = "DryRun: Simulated communication time: "
EXPOSED_LINE = "DryRun: Simulated exposed communication: "


def _merged(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of ``intervals`` as disjoint sorted intervals."""
    out: list[tuple[float, float]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def union_length(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one interval."""
    return sum(end - start for start, end in _merged(intervals))


def uncovered_length(intervals: list[tuple[float, float]], cover: list[tuple[float, float]]) -> float:
    """Seconds covered by ``intervals`` and by none of ``cover``."""
    cover_m = _merged(cover)
    total, i = 0.0, 0
    for start, end in _merged(intervals):
        while i < len(cover_m) and cover_m[i][1] <= start:
            i += 1
        t, j = start, i
        while t < end:
            if j >= len(cover_m) or cover_m[j][0] >= end:
                total += end - t
                break
            c0, c1 = cover_m[j]
            if c0 > t:
                total += c0 - t
            t = max(t, c1)
            j += 1
    return total


@dataclass
class CommOverlap:
    """A device's observer collecting compute and communication intervals (simulated seconds)."""

    compute: list[tuple[float, float]] = field(default_factory=list)
    communication: list[tuple[float, float]] = field(default_factory=list)
    collectives: int = 0

    def issued(self, stream: Stream, task: Task) -> None:
        """Nothing to do when a task is enqueued."""

    def finished(self, stream: Stream, task: Task, start: float, end: float) -> None:
        if isinstance(task, KernelTask):
            self.compute.append((start, end))
        elif isinstance(task, CollectiveTask):
            comm = task.comm
            seconds = task.kind.seconds(comm, task.count, np.dtype(task.dtype).itemsize, comm.gamma(task.dtype))
            self.communication.append((max(start, end - seconds), end))
            self.collectives += 1

    def communication_s(self) -> float:
        """Seconds during which at least one collective was transferring."""
        return union_length(self.communication)

    def exposed_s(self) -> float:
        """Seconds during which a collective transferred and no kernel ran."""
        return uncovered_length(self.communication, self.compute)

    def lines(self) -> list[str]:
        """The DryRun's communication lines (whole run; a DryRun script usually runs one step)."""
        return [f"{COMM_LINE}{self.communication_s() * 1e3:.3f} ms ({self.collectives} collective(s) over the run)",
                f"{EXPOSED_LINE}{self.exposed_s() * 1e3:.3f} ms (collectives transferring while no kernel ran)"]
