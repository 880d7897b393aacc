"""Chrome trace / Perfetto JSON export of a simulated run.

Tracks: one process per device (threads: one per stream, one per AI core, one per DMA engine) and one
process for the host (its API calls on the simulated host timeline). Event records and the waits they
release are joined by flow arrows. Timestamps are simulated microseconds; the trace's metadata says so.
"""
from __future__ import annotations

import json
from pathlib import Path

HOST_PID = 0
STREAM_TID_BASE = 0
CORE_TID_BASE = 10_000
DMA_TID_BASE = 20_000


def device_pid(device_id: int) -> int:
    return device_id + 1


class ChromeTrace:
    """Collects complete ("X") spans, flow arrows and track names; writes the JSON object format."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self._names: dict[tuple[int, int | None], str] = {}
        self._next_flow = 1

    def name_track(self, pid: int, tid: int | None, name: str) -> None:
        self._names.setdefault((pid, tid), name)

    def span(self, pid: int, tid: int, name: str, start_s: float, dur_s: float, cat: str = "task",
             args: dict | None = None) -> None:
        ev = {"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": cat,
              "ts": start_s * 1e6, "dur": max(dur_s, 0.0) * 1e6}
        if args:
            ev["args"] = args
        self.events.append(ev)

    def flow(self, name: str, src: tuple[int, int, float], dst: tuple[int, int, float]) -> None:
        """An arrow from (pid, tid, time_s) to (pid, tid, time_s): event record -> the wait it releases."""
        fid = self._next_flow
        self._next_flow += 1
        self.events.append({"ph": "s", "id": fid, "pid": src[0], "tid": src[1], "ts": src[2] * 1e6,
                            "name": name, "cat": "event"})
        self.events.append({"ph": "f", "bp": "e", "id": fid, "pid": dst[0], "tid": dst[1],
                            "ts": dst[2] * 1e6, "name": name, "cat": "event"})

    def to_json(self) -> dict:
        meta = []
        for (pid, tid), name in sorted(self._names.items(), key=lambda kv: (kv[0][0], kv[0][1] or -1)):
            if tid is None:
                meta.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}})
            else:
                meta.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}})
                meta.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index",
                             "args": {"sort_index": tid}})
        return {"traceEvents": meta + self.events, "displayTimeUnit": "ns",
                "otherData": {"clock": "simulated device time (us)", "generator": "ascendemu"}}

    def write(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_json()))
        return path
