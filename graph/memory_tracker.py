"""MindSpore's memory tracker files: ``MS_ALLOC_CONF=memory_tracker:True`` makes a run write
``rank_<id>/memory_block.csv`` (one row per device memory block: when it was allocated and freed, its size,
what allocated it, which tasks used it) and ``rank_<id>/task.csv`` (one row per task: kernel launches,
collectives, host-to-device copies) when the process ends, as MindSpore 2.10 does (columns recorded from a
real DryRun through the stub CANN: tests/fixtures/msdryrun/memory_tracker_sample/).

The tracker is one of the runtime's recorders (``Runtime.recorders``): it sees every ``malloc``, ``free``,
launch, collective and copy as validated, so it names nothing the runtime did not do. Meaning as MindSpore's:
time stamps are one counter over allocations, frees and tasks (a block lives from ``start_time_stamp`` to
``end_time_stamp``, INT64_MAX if never freed); ``size`` is the pool block's (aligned) size, so at any time
stamp the live blocks' sizes sum to the pool's used bytes and their maximum over time is the "Used peak
memory usage"; ``actual_used_memory`` / ``actual_peak_memory`` are the pool's used bytes and their peak after
the allocation. A block allocated right before a kernel (or collective) is that task's (``Kernel``, named by
the op's full name); one written by a host-to-device copy before any task uses it is ``Weight`` (parameters
and literals; MindSpore tells literals apart as ``ConstantValue``, which the runtime cannot see); else
``Other``. ``file_name``, ``line_num`` and ``python_stack`` (MindSpore's C++ allocation site and the script's
stack) are left empty.
"""
from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascendemu.cache.atomic import replace_atomic
from ascendemu.hal.runtime import Runtime

__all__ = ["BLOCK_COLUMNS", "TASK_COLUMNS", "MemoryTracker", "tracker_enabled"]

# MindSpore 2.10's columns, in its order (each row, the header too, ends with a comma)
BLOCK_COLUMNS = ("start_time_stamp", "end_time_stamp", "device_addr", "stream_id", "pool_type", "size",
                 "actual_used_memory", "actual_peak_memory", "file_name", "line_num", "type", "producer_task",
                 "task_name", "node_name", "graph_name", "user_tasks", "last_user_task", "python_stack",
                 "is_persistent", "is_small")
TASK_COLUMNS = ("time_stamp", "task_name", "node_name", "graph_name", "file_name", "line_num", "python_stack")
NEVER_FREED = 2 ** 63 - 1
BLOCK_FILE, TASK_FILE = "memory_block.csv", "task.csv"
# the runtime calls that are tasks on a stream (allocations just before one are its outputs and workspaces)
COLLECTIVE_CALLS = frozenset({"all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "send",
                              "recv"})
COPY_CALLS = frozenset({"memcpy", "memcpy_async"})


def tracker_enabled(env: dict[str, str] | None = None) -> bool:
    """Whether ``MS_ALLOC_CONF`` (comma-separated ``key:value``) sets ``memory_tracker:True``, MindSpore's
    spelling (its ``enable_vmm``, ``acl_allocator`` ... keys are ignored here)."""
    conf = (os.environ if env is None else env).get("MS_ALLOC_CONF", "")
    pairs = dict(item.split(":", 1) for item in conf.replace(" ", "").split(",") if ":" in item)
    return pairs.get("memory_tracker", "").lower() == "true"


@dataclass
class _Block:
    start: int
    addr: int
    size: int
    used: int
    peak: int
    stream: int = 0
    kind: str = "Other"
    producer: int = -1           # time stamp of the task that allocated it (-1: none yet)
    task_name: str = ""
    node_name: str = ""
    end: int = NEVER_FREED
    users: list[int] = field(default_factory=list)


class MemoryTracker:
    """Records a runtime's device blocks and tasks (attach it with :meth:`attach`) and writes MindSpore's two
    files (:meth:`write`)."""

    def __init__(self) -> None:
        self.clock = 0
        self.blocks: list[_Block] = []
        self.live: dict[int, _Block] = {}
        self.pending: list[_Block] = []          # allocated since the last task: the next task's
        self.tasks: list[dict[str, str]] = []
        self.rt: Runtime | None = None

    def attach(self, rt: Runtime) -> "MemoryTracker":
        self.rt = rt
        rt.recorders.append(self)
        return self

    def _tick(self) -> int:
        self.clock += 1
        return self.clock

    def _device_memory(self, addr: int) -> Any:
        for d in self.rt.node.devices:
            if addr in d.memory.sizes:
                return d.memory
        return None

    def __call__(self, name: str, args: tuple, kwargs: dict, result: Any, host_time: float) -> None:
        if name == "malloc":
            self._malloc(result)
        elif name == "free":
            block = self.live.pop(args[0], None)
            if block is not None:
                block.end = self._tick()
        elif name == "launch_kernel":
            self._task(args[4] or "kernel", args[3], [a for a in args[2] if isinstance(a, int)]
                       if not isinstance(args[2], (bytes, bytearray)) else [], "Kernel")
        elif name in COLLECTIVE_CALLS:
            self._task(name, args[-1], [a for a in args[:2] if isinstance(a, int)], "Kernel")
        elif name in COPY_CALLS and isinstance(args[0], int) and args[0] in self.live:
            self._task("SyncTensorData", args[5] if len(args) > 5 else None, [args[0]], "Weight")

    def _malloc(self, addr: int) -> None:
        memory = self._device_memory(addr)
        stats = memory.stats()
        block = _Block(self._tick(), addr, memory.pool.find(addr)[1], stats.used, stats.peak_used)
        self.blocks.append(block)
        self.live[addr] = block
        self.pending.append(block)

    def _task(self, node_name: str, stream: Any, addrs: list[int], kind: str) -> None:
        stamp = self._tick()
        task_name = f"{len(self.tasks)}_{node_name}" if kind == "Kernel" else node_name
        self.tasks.append({"time_stamp": str(stamp), "task_name": task_name, "node_name": node_name})
        for block in self.pending:
            block.kind, block.producer, block.task_name, block.node_name = kind, stamp, task_name, node_name
            block.stream = stream if isinstance(stream, int) else 0
        self.pending = []
        for addr in addrs:
            block = self.live.get(addr)
            if block is not None:
                block.users.append(stamp)

    def block_rows(self) -> list[dict[str, str]]:
        pool_type = type(self.rt.node.devices[0].memory.pool).__name__ if self.rt and self.rt.node else ""
        return [{"start_time_stamp": str(b.start), "end_time_stamp": str(b.end), "device_addr": f"{b.addr:#x}",
                 "stream_id": str(b.stream), "pool_type": pool_type, "size": str(b.size),
                 "actual_used_memory": str(b.used), "actual_peak_memory": str(b.peak), "file_name": "",
                 "line_num": "0", "type": b.kind, "producer_task": str(max(b.producer, 0)),
                 "task_name": b.task_name, "node_name": b.node_name, "graph_name": "",
                 "user_tasks": "{" + "-".join(map(str, b.users)) + "}",
                 "last_user_task": str(b.users[-1] if b.users else 0), "python_stack": "",
                 "is_persistent": str(int(b.end == NEVER_FREED)), "is_small": "0"} for b in self.blocks]

    def write(self, save_path: str | os.PathLike, rank: int) -> list[Path]:
        """Write ``<save_path>/rank_<rank>/memory_block.csv`` and ``task.csv``, each atomically; returns them."""
        directory = Path(save_path) / f"rank_{rank}"
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for name, columns, rows in ((BLOCK_FILE, BLOCK_COLUMNS, self.block_rows()), (TASK_FILE, TASK_COLUMNS,
                                                                                    self.tasks)):
            text = _csv(columns, rows)
            replace_atomic(directory / name, lambda tmp, text=text: Path(tmp).write_text(text), 0o644)
            written.append(directory / name)
        return written


def _csv(columns: tuple[str, ...], rows: list[dict[str, str]]) -> str:
    """MindSpore's layout: a header and rows, each field followed by a comma (so each line ends with one)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*columns, ""])
    for row in rows:
        writer.writerow([*(row.get(c, "") for c in columns), ""])
    return out.getvalue()
