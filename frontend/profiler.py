"""``mindspore.profiler``: the Profiler, reading the emulated device's own trace.

``Profiler()`` starts collecting the run's Chrome trace (the runtime's ``start_trace``: device streams,
AI cores, DMA engines and host API calls on the simulated clocks); ``analyse()`` writes what MindSpore
2.x writes on Ascend, under ``output_path``: ``{worker}_{timestamp}_ascend_ms/ASCEND_PROFILER_OUTPUT/``
with

* ``trace_view.json``: the Chrome-trace event list of the profiled span (times in microseconds), which
  Perfetto and chrome://tracing open;
* ``kernel_details.csv``: one row per kernel launch with MindSpore's Level0 columns (Name, Type,
  Accelerator Core, Start Time(us), Duration(us), Wait Time(us) since the stream's previous task, Block
  Num, ...), ``Type`` being the op of the library that built the kernel; at ``profiler_level`` Level1 and
  Level2 also the tensor columns (Input Shapes ``"2,3;3,5"``, Input Data Types ``FLOAT;FLOAT``, formats
  ``ND``, the same for the outputs), which ``ascendemu profile fidelity`` reads back. The PMU metric
  columns a real device adds (``aic_metrics``) have no counterpart here and are not written.

Times are simulated device microseconds: the figures the real chip would show under the cost model,
not host wall time. The directory is written whole or not at all (built beside it, then renamed).
A kernel's Name is MindSpore's full op name (``Default/fc1-Dense/MatMul-op1``: the Cell scope, the op
type, the graph's op counter) when the launch came from a graph, else the kernel's own name.

MindSpore 2.x's newer API is here too: ``profile`` (a context manager with ``step()``, a ``schedule``
of wait/warmup/active steps and an ``on_trace_ready`` handler such as ``tensorboard_trace_handler``),
each active cycle written as the Profiler writes its directory.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import socket
import time
from enum import Enum
from pathlib import Path
from typing import Any, Callable

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.kernels.registry import REGISTRY

from . import log
from .backend import get_backend

__all__ = ["Profiler", "ProfilerLevel", "ProfilerActivity", "AicoreMetrics", "ProfilerAction", "profile", "schedule",
           "tensorboard_trace_handler"]

# Level0 columns of kernel_details.csv (MindSpore 2.10 OpSummaryHeaders, renamed as kernel_details names them)
KERNEL_DETAILS_COLUMNS = ("Step ID", "Model Name", "Model ID", "Task ID", "Stream ID", "Name", "Type",
                          "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Num")
# ascendemu's own last column: the kernel_meta entry that ran (``mat_mul_<digest>_0``), Name being the op's
KERNEL_META_COLUMN = "Kernel Meta Name"
# what Level1 and Level2 add after them (the columns Level0 drops)
TENSOR_COLUMNS = ("Mix Block Num", "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats",
                  "Output Shapes", "Output Data Types", "Output Formats", "Context ID")
# MindSpore 2.x Profiler keywords: accepted (their collection switches have nothing to switch here)
OPTIONS = ("profiler_level", "activities", "aic_metrics", "profile_memory", "with_stack", "data_simplification",
           "l2_cache", "hbm_ddr", "pcie", "sync_enable", "data_process", "parallel_strategy",
           "profile_communication", "op_time", "timeline_limit", "profile_framework", "host_stack", "schedule",
           "on_trace_ready", "mstx", "export_type", "record_shapes", "sys_io", "sys_interconnection")
# MindSpore's Profiler writes under ./data unless told otherwise (Profiler(output_path=...), tensorboard_trace_handler)
DEFAULT_OUTPUT_PATH = "./data"
_KERNEL_SUFFIX = re.compile(r"_\d+_\d+$")            # <op func name>_<source digest>_<block variant>
_OP_OF_FUNC = {op.func_name: op.name for op in REGISTRY.values()}


class ProfilerLevel:
    Level0, Level1, Level2 = "Level0", "Level1", "Level2"
    LEVELS = (Level0, Level1, Level2)


class ProfilerActivity:
    CPU, NPU = "CPU", "NPU"


class AicoreMetrics:
    PipeUtilization, ArithmeticUtilization, Memory, MemoryL0, ResourceConflictRatio, MemoryUB, L2Cache, None_ = (
        "PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0", "ResourceConflictRatio", "MemoryUB",
        "L2Cache", "None")


class Profiler:
    """Collect the emulated device's trace between ``start()`` (at construction unless
    ``start_profile=False``) and ``stop()``/``analyse()``, and write MindSpore's Ascend profiler files."""

    def __init__(self, output_path: str = DEFAULT_OUTPUT_PATH, start_profile: bool = True, **kwargs: Any):
        if not isinstance(output_path, (str, os.PathLike)):
            raise InvalidParamError(f"Profiler: output_path must be a path, got {type(output_path).__name__}")
        unknown = sorted(set(kwargs) - set(OPTIONS))
        if unknown:
            raise InvalidParamError(f"Profiler: unknown argument(s) {unknown}; MindSpore's are {list(OPTIONS)}")
        self.output_path = Path(output_path)
        self.profiler_level = kwargs.get("profiler_level", ProfilerLevel.Level0)
        if self.profiler_level not in ProfilerLevel.LEVELS:     # MindSpore warns and falls back to Level0
            log.warning(f"profiler_level must be one of {list(ProfilerLevel.LEVELS)}, got {self.profiler_level!r}; "
                        "it is set to Level0")
            self.profiler_level = ProfilerLevel.Level0
        self._span: list[float | None] = [None, None]
        if start_profile:
            self.start()

    @staticmethod
    def _runtime() -> Any:
        rt = getattr(get_backend(), "rt", None)
        if rt is None:
            raise FeatureNotSupportedError("Profiler: the current backend has no emulated device to profile")
        return rt

    def start(self) -> None:
        rt = self._runtime()
        rt.start_trace()
        self._span = [rt.device_time() * 1e6, None]

    def stop(self) -> None:
        if self._span[0] is None:
            raise InvalidParamError("Profiler.stop(): the profiler was never started; call start() first")
        self._span[1] = self._runtime().device_time() * 1e6

    def analyse(self, offline_path: str | None = None, pretty: bool = False, step_list: Any = None,
                mode: str = "sync") -> Path:
        """Write the profiler directory; returns its ASCEND_PROFILER_OUTPUT path."""
        if offline_path is not None:
            raise FeatureNotSupportedError("Profiler.analyse(offline_path=...): offline parsing of a real "
                                           "device's raw data is not supported; analyse the emulated run instead")
        if self._span[0] is None:
            raise InvalidParamError("Profiler.analyse(): the profiler was never started; call start() first")
        if self._span[1] is None:
            self.stop()
        start, stop = self._span
        events = [e for e in self._runtime().trace_events() if start <= e["ts"] <= stop]
        name = f"{socket.gethostname()}_{os.getpid()}_{time.strftime('%Y%m%d%H%M%S')}{int(time.time() * 1e3) % 1000:03d}_ascend_ms"
        final = self.output_path / name
        building = self.output_path / f".{name}.tmp"
        out = building / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True)
        try:
            (out / "trace_view.json").write_text(json.dumps(events, indent=1 if pretty else None))
            write_kernel_details(out / "kernel_details.csv", events,
                                 tensors=self.profiler_level != ProfilerLevel.Level0)
            os.replace(building, final)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        return final / "ASCEND_PROFILER_OUTPUT"

    @classmethod
    def offline_analyse(cls, path: str, pretty: bool = False, step_list: Any = None, data_simplification: bool = True
                        ) -> None:
        raise FeatureNotSupportedError("Profiler.offline_analyse: offline parsing of a real device's raw data is "
                                       "not supported; the emulator's Profiler writes its files in analyse()")


def kernel_type(kernel_name: str) -> str:
    """The library op that built a kernel, from its name (``conv2d_<digest>_0`` -> ``Conv2D``)."""
    func = _KERNEL_SUFFIX.sub("", kernel_name)
    return _OP_OF_FUNC.get(func, func)


def tensor_cells(tensors: list[dict]) -> tuple[str, str, str]:
    """Shapes, data types and formats of a kernel's tensors as profiles write them: ``2,3;3,5``,
    ``FLOAT;FLOAT``, ``ND;ND`` (a scalar's shape is empty)."""
    # imported here: the profile reader (12 ms of imports) is needed only when a profile is written
    from ascendemu.replay.ascend_profile import CANN_DTYPES
    return (";".join(",".join(str(d) for d in t["shape"]) for t in tensors),
            ";".join(CANN_DTYPES[t["dtype"]] for t in tensors), ";".join("ND" for _ in tensors))


def write_kernel_details(path: Path, events: list[dict], tensors: bool = False) -> None:
    """One row per kernel span, in start order; Wait Time is the gap since the previous task (kernel,
    copy or event) ended on the same stream. ``tensors``: Level1's columns too, from the kernel's op."""
    rows = []
    last_end: dict[tuple[int, int], float] = {}
    tasks = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "copy", "event")),
                   key=lambda e: e["ts"])
    for task_id, e in enumerate(tasks):
        lane = (e["pid"], e["tid"])
        wait = max(e["ts"] - last_end.get(lane, e["ts"]), 0.0)
        last_end[lane] = e["ts"] + e["dur"]
        if e["cat"] == "kernel":
            args = e.get("args", {})
            op = args.get("op")
            kernel = args.get("kernel", e["name"])          # the cache entry's name when the span is the op's
            row = ("", "", "N/A", task_id, e["tid"], e["name"], op["type"] if op else kernel_type(kernel),
                   "AI_CORE", f"{e['ts']:.3f}", f"{e['dur']:.3f}", f"{wait:.3f}", args.get("blockDim", ""))
            if tensors:
                cells = (*tensor_cells(op["inputs"]), *tensor_cells(op["outputs"])) if op else ("N/A",) * 6
                row += ("N/A", "NO", *cells, "N/A")
            rows.append(row + (kernel,))
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(KERNEL_DETAILS_COLUMNS + (TENSOR_COLUMNS if tensors else ()) + (KERNEL_META_COLUMN,))
        writer.writerows(rows)


# ------------------------------------------------------------------------- MindSpore 2.x ``profile``

class ProfilerAction(Enum):
    """What a ``schedule`` asks of a step (MindSpore's ``mindspore.profiler.schedule.ProfilerAction``)."""
    NONE = 0
    WARM_UP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class schedule:      # noqa: N801  MindSpore's name
    """``schedule(wait=, active=, warmup=0, repeat=0, skip_first=0)``: after ``skip_first`` steps, cycles
    of ``wait`` idle, ``warmup`` and ``active`` recorded steps, the last of which saves; ``repeat`` cycles
    (0: until the profile stops). MindSpore's arithmetic, step for step."""

    def __init__(self, *, wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0):
        for name, value, low in (("wait", wait, 0), ("active", active, 1), ("warmup", warmup, 0),
                                 ("repeat", repeat, 0), ("skip_first", skip_first, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidParamError(f"schedule: {name}={value!r} must be an int >= {low}")
        self.wait, self.active, self.warmup, self.repeat, self.skip_first = wait, active, warmup, repeat, skip_first

    def __call__(self, step: int) -> ProfilerAction:
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise InvalidParamError(f"schedule: step={step!r} must be an int >= 0")
        if step < self.skip_first:
            return ProfilerAction.NONE
        step -= self.skip_first
        cycle = self.wait + self.warmup + self.active
        if 0 < self.repeat <= step / cycle:
            return ProfilerAction.NONE
        at = step % cycle
        if at < self.wait:
            return ProfilerAction.NONE
        if at < self.wait + self.warmup:
            return ProfilerAction.WARM_UP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    def __repr__(self) -> str:
        return (f"Schedule(wait={self.wait!r}, active={self.active!r}, warmup={self.warmup!r}, "
                f"repeat={self.repeat!r}, skip_first={self.skip_first!r})")


def tensorboard_trace_handler(dir_name: str | None = None, worker_name: str | None = None,
                              analyse_flag: bool = True, async_mode: bool = False) -> Callable[["profile"], Path]:
    """The ``on_trace_ready`` handler that writes each saved cycle as the Profiler's directory under
    ``dir_name`` (default ./data). ``worker_name`` and ``async_mode`` change nothing here."""
    path = DEFAULT_OUTPUT_PATH if dir_name is None else dir_name
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidParamError(f"tensorboard_trace_handler: dir_name must be a path, got {type(path).__name__}")

    def handler(prof: "profile") -> Path:
        return prof._save(Path(path))
    return handler


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:       # noqa: N801  MindSpore's name
    """``mindspore.profiler.profile``: record the steps its ``schedule`` marks active (every step from
    ``start()`` to ``stop()`` without one) and hand each finished cycle to ``on_trace_ready`` (default:
    ``tensorboard_trace_handler()``). Use as ``with profile(...) as prof: ... prof.step()``."""

    def __init__(self, activities: Any = None, with_stack: bool = False, profile_memory: bool = False,
                 data_process: bool = False, parallel_strategy: bool = False, start_profile: bool = True,
                 hbm_ddr: bool = False, pcie: bool = False, sync_enable: bool = True, record_shapes: bool = False,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[["profile"], Any] | None = None, experimental_config: Any = None):
        if schedule is not None and not callable(schedule):
            raise InvalidParamError(f"profile: schedule must be a mindspore.profiler.schedule(...), got "
                                    f"{type(schedule).__name__}")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise InvalidParamError(f"profile: on_trace_ready must be callable (e.g. tensorboard_trace_handler(dir)), "
                                    f"got {type(on_trace_ready).__name__}")
        self._schedule = schedule
        self._on_trace_ready = on_trace_ready or tensorboard_trace_handler()
        self._level = getattr(experimental_config, "profiler_level", ProfilerLevel.Level0)
        self.step_num = 0
        self._window: Profiler | None = None
        self._started = False
        self.saved: list[Path] = []        # the directories written so far, one per saved cycle
        if start_profile:
            self.start()

    def _action(self) -> ProfilerAction:
        return ProfilerAction.RECORD if self._schedule is None else self._schedule(self.step_num)

    def _follow(self, action: ProfilerAction) -> None:
        if action in _RECORDING and self._window is None:
            self._window = Profiler(start_profile=True, profiler_level=self._level)

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._follow(self._action())

    def step(self) -> None:
        """The end of a step: a cycle whose last active step this was is saved; the next step begins."""
        if not self._started:
            raise InvalidParamError("profile.step(): the profile was never started; call start() first")
        if self._action() is ProfilerAction.RECORD_AND_SAVE and self._window is not None:
            self._on_trace_ready(self)
        self.step_num += 1
        self._follow(self._action())

    def stop(self) -> None:
        """Save what is being recorded (a cycle cut short, or the whole profile without a schedule)."""
        if self._started and self._window is not None:
            self._on_trace_ready(self)
        self._started = False

    def _save(self, output_path: Path) -> Path:
        """Write the current window as the Profiler does under ``output_path``; called by the handler."""
        if self._window is None:
            raise InvalidParamError("profile: nothing is being recorded now; on_trace_ready handlers run when a "
                                    "cycle ends")
        window, self._window = self._window, None
        window.output_path = output_path
        out = window.analyse()
        self.saved.append(out)
        return out

    def add_metadata(self, key: str, value: str) -> None:
        """Accepted for compatibility: the emulator's profile directory has no metadata file."""

    def add_metadata_json(self, key: str, value: str) -> None:
        """Accepted for compatibility: the emulator's profile directory has no metadata file."""

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self.stop()
