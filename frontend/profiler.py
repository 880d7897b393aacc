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
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import socket
import time
from pathlib import Path
from typing import Any

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.kernels.registry import REGISTRY

from . import log
from .backend import get_backend

__all__ = ["Profiler", "ProfilerLevel", "ProfilerActivity", "AicoreMetrics"]

# Level0 columns of kernel_details.csv (MindSpore 2.10 OpSummaryHeaders, renamed as kernel_details names them)
KERNEL_DETAILS_COLUMNS = ("Step ID", "Model Name", "Model ID", "Task ID", "Stream ID", "Name", "Type",
                          "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Num")
# what Level1 and Level2 add after them (the columns Level0 drops)
TENSOR_COLUMNS = ("Mix Block Num", "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats",
                  "Output Shapes", "Output Data Types", "Output Formats", "Context ID")
# the device's dtypes as CANN's profiles name them
CANN_DTYPES = {"float32": "FLOAT", "float16": "FLOAT16", "int32": "INT32", "bool": "BOOL"}
# MindSpore 2.x Profiler keywords: accepted (their collection switches have nothing to switch here)
OPTIONS = ("profiler_level", "activities", "aic_metrics", "profile_memory", "with_stack", "data_simplification",
           "l2_cache", "hbm_ddr", "pcie", "sync_enable", "data_process", "parallel_strategy",
           "profile_communication", "op_time", "timeline_limit", "profile_framework", "host_stack", "schedule",
           "on_trace_ready", "mstx", "export_type", "record_shapes", "sys_io", "sys_interconnection")
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

    def __init__(self, output_path: str = "./data", start_profile: bool = True, **kwargs: Any):
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
            row = ("", "", "N/A", task_id, e["tid"], e["name"], op["type"] if op else kernel_type(e["name"]),
                   "AI_CORE", f"{e['ts']:.3f}", f"{e['dur']:.3f}", f"{wait:.3f}", args.get("blockDim", ""))
            if tensors:
                cells = (*tensor_cells(op["inputs"]), *tensor_cells(op["outputs"])) if op else ("N/A",) * 6
                row += ("N/A", "NO", *cells, "N/A")
            rows.append(row)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(KERNEL_DETAILS_COLUMNS + (TENSOR_COLUMNS if tensors else ()))
        writer.writerows(rows)
