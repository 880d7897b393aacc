"""Chrome trace / Perfetto JSON export of a simulated run.

One trace is one rank, and one rank is one Chrome process: its pid is derived from the rank
(``RANK_ID``, :func:`rank_pid`), so the traces the ranks of a job write side by side merge into one
timeline (:func:`merge`) without two ranks sharing a track. Its tracks:

* threads: the host's API calls on the simulated host timeline (tid 0), one per stream (tid = the
  stream handle), and per device one per AI core and one per DMA engine (:meth:`ChromeTrace.core_track`,
  :meth:`ChromeTrace.dma_track`);
* counters: ``device N memory``, the allocated and reserved bytes of the device's pool, sampled at
  every change (a malloc, a free) on the host timeline;
* flow arrows: from an event record to the wait it releases (cat ``event``) and from each host launch
  call to the execution of the kernel it launched (cat ``launch``).

Host and device spans share one axis, simulated seconds since the node started, written in
microseconds; the trace's metadata says so.

Under several ranks (``mpiexec -n N ascendemu run --trace t.json``) each rank writes its own trace
beside the one asked for, ``t.rank<N>.json`` (as ``--record`` names its per-rank files), and rank 0
merges them into ``t.json`` (:func:`read_trace`, :func:`merge`). Files are written whole or not at all
(:func:`write_json`), so a merge never reads half a trace.
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Iterable, Sequence

from ascendemu.errors import InvalidFileError, InvalidParamError
from ascendemu.ranks import resolve_rank

__all__ = ["HOST_TID", "ChromeTrace", "merge", "read_trace", "write_json", "rank_pid", "busy_time",
           "MAX_TRACE_BYTES"]

HOST_TID = 0
# Per-device unit tracks: 4096 units per device, devices stacked above the stream handles.
CORE_TID_BASE = 1 << 24
DMA_TID_BASE = 2 << 24
DEVICE_TID_STRIDE = 1 << 12
FLOW_ID_BITS = 40           # flow ids: rank << FLOW_ID_BITS | n, unique across merged ranks
# the largest rank trace a merge reads (its events are all held in memory as Python objects, ~10x the file)
MAX_TRACE_BYTES = 1 << 30


def rank_pid(rank: int) -> int:
    """The Chrome pid of a rank (rank + 1: Perfetto reserves pid 0 for the idle process)."""
    return rank + 1


class ChromeTrace:
    """Collects the spans, counters, flow arrows and track names of one rank; writes the JSON object format."""

    def __init__(self, rank: int | None = None) -> None:
        self.rank = resolve_rank(rank)
        self.pid = rank_pid(self.rank)
        self.events: list[dict] = []
        self._names: dict[int | None, str] = {None: f"rank {self.rank}"}
        self._next_flow = (self.rank << FLOW_ID_BITS) + 1
        self.current_call: tuple[int, float] | None = None    # (tid, time_s) inside the last host API span

    def name_track(self, tid: int | None, name: str) -> None:
        """Name thread ``tid`` (its first name stays), or with None rename the rank's process."""
        if tid is None:
            self._names[None] = name
        else:
            self._names.setdefault(tid, name)

    def core_track(self, device: int, core: int) -> int:
        """The tid of AI core ``core`` of ``device`` (named on first use)."""
        tid = CORE_TID_BASE + device * DEVICE_TID_STRIDE + core
        if tid not in self._names:
            self._names[tid] = f"device {device} AI core {core}"
        return tid

    def dma_track(self, device: int, engine: int) -> int:
        """The tid of DMA engine ``engine`` of ``device`` (named on first use)."""
        tid = DMA_TID_BASE + device * DEVICE_TID_STRIDE + engine
        if tid not in self._names:
            self._names[tid] = f"device {device} DMA {engine}"
        return tid

    def span(self, tid: int, name: str, start_s: float, dur_s: float, cat: str = "task",
             args: dict | None = None) -> None:
        ev = {"ph": "X", "pid": self.pid, "tid": tid, "name": name, "cat": cat,
              "ts": start_s * 1e6, "dur": max(dur_s, 0.0) * 1e6}
        if args:
            ev["args"] = args
        self.events.append(ev)

    def host_call(self, name: str, start_s: float, dur_s: float) -> None:
        """A host API call's span; the work it launches points back to it (:attr:`current_call`, the
        middle of the span, where a flow arrow binds to it unambiguously)."""
        self.span(HOST_TID, name, start_s, dur_s, "api")
        self.current_call = (HOST_TID, start_s + dur_s / 2)

    def flow(self, name: str, src: tuple[int, float], dst: tuple[int, float], cat: str = "event") -> None:
        """An arrow from (tid, time_s) to (tid, time_s) of this rank: the slices enclosing both ends."""
        fid = self._next_flow
        self._next_flow += 1
        self.events.append({"ph": "s", "id": fid, "pid": self.pid, "tid": src[0], "ts": src[1] * 1e6,
                            "name": name, "cat": cat})
        self.events.append({"ph": "f", "bp": "e", "id": fid, "pid": self.pid, "tid": dst[0],
                            "ts": dst[1] * 1e6, "name": name, "cat": cat})

    def counter(self, name: str, time_s: float, values: dict[str, float]) -> None:
        """A sample of a counter track: each key of ``values`` is one series of the track ``name``."""
        self.events.append({"ph": "C", "pid": self.pid, "name": name, "ts": time_s * 1e6, "args": values})

    def to_json(self) -> dict:
        meta = [{"ph": "M", "pid": self.pid, "name": "process_name", "args": {"name": self._names[None]}},
                {"ph": "M", "pid": self.pid, "name": "process_sort_index", "args": {"sort_index": self.rank}}]
        for tid, name in sorted((kv for kv in self._names.items() if kv[0] is not None), key=lambda kv: kv[0]):
            meta.append({"ph": "M", "pid": self.pid, "tid": tid, "name": "thread_name", "args": {"name": name}})
            meta.append({"ph": "M", "pid": self.pid, "tid": tid, "name": "thread_sort_index",
                         "args": {"sort_index": tid}})
        return {"traceEvents": meta + self.events, "displayTimeUnit": "ns",
                "otherData": {"clock": "simulated device time (us)", "generator": "ascendemu", "ranks": [self.rank]}}

    def write(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())


def write_json(path: str | Path, doc: dict) -> Path:
    """Write a trace as JSON so that a reader sees all of it or none: a temporary file beside it, renamed."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def read_trace(path: str | Path) -> dict:
    """A trace one rank wrote (:meth:`ChromeTrace.write`), checked before :func:`merge` uses it: a
    regular file of at most :data:`MAX_TRACE_BYTES`, a JSON object whose ``traceEvents`` is a list of
    objects and whose ``otherData.ranks`` lists ints. Else InvalidFileError naming the file and why."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise InvalidFileError(f"rank trace {path}: cannot be read ({exc.strerror}); did that rank write its "
                               "trace (see its output)?") from None
    if not stat.S_ISREG(info.st_mode):
        raise InvalidFileError(f"rank trace {path} is not a regular file (a symlink, FIFO or directory); "
                               "remove it and run again")
    if info.st_size > MAX_TRACE_BYTES:
        raise InvalidFileError(f"rank trace {path} holds {info.st_size} bytes, more than the {MAX_TRACE_BYTES} "
                               "a merge reads; open the rank's own trace instead")
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        raise InvalidFileError(f"rank trace {path} is not a JSON trace ({exc}); the rank's run may have been "
                               "cut short: run again") from None
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    other = doc.get("otherData") if isinstance(doc, dict) else None
    ranks = other.get("ranks") if isinstance(other, dict) else None
    if (not isinstance(events, list) or not all(isinstance(ev, dict) for ev in events)
            or not isinstance(ranks, list) or not all(type(r) is int for r in ranks)):
        raise InvalidFileError(f"rank trace {path} is JSON but not an ascendemu trace (a traceEvents list of "
                               "objects and otherData.ranks); give the file `ascendemu run --trace` wrote")
    return doc


def merge(docs: Iterable[dict]) -> dict:
    """One trace of several ranks from their traces (the JSON objects :meth:`ChromeTrace.to_json` wrote).
    Their pids and flow ids are disjoint by construction; two traces of the same rank are refused."""
    events: list[dict] = []
    ranks: list[int] = []
    for doc in docs:
        mine = doc.get("otherData", {}).get("ranks", [])
        clash = sorted(set(mine) & set(ranks))
        if clash:
            raise InvalidParamError(f"merge: rank(s) {clash} appear in two traces; merge the traces of "
                                    "different ranks (set RANK_ID per process)")
        ranks += mine
        events += doc["traceEvents"]
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"clock": "simulated device time (us)", "generator": "ascendemu", "ranks": sorted(ranks)}}


def busy_time(spans: Iterable[Sequence[float]]) -> float:
    """The time covered by some span (``(ts, dur)`` pairs, as in "X" events): overlapping spans, e.g.
    kernels on several streams, count once, so a step's compute and communication can be compared
    with the step itself."""
    total, end = 0.0, float("-inf")
    for ts, dur in sorted(spans):
        if ts + dur > end:
            total += ts + dur - max(ts, end)
            end = ts + dur
    return total
