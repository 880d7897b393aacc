"""Comparing what two runs measured: bit-for-bit checks, what-if tables and the regression gate.

Figures are ``hal.record.figures`` (from a trace's ``End`` record, a replay, or a baseline file written by
``ascendemu run --save-baseline``); it imports nothing of the trace format, so ``ascendemu run`` can
read and write baselines without it. :func:`rows` names each figure a person reads with its unit;
:func:`differences` lists every figure that is not bit for bit the same; :func:`side_by_side` prints two
runs as a table; :func:`regressions` is the gate: the simulated step times and peak memories that grew
past a tolerance.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ascendemu.errors import InvalidFileError
from ascendemu.units import format_bytes

__all__ = ["BASELINE_FORMAT", "DEFAULT_TOLERANCE", "Figure", "Regression", "differences", "load_baseline",
           "read_baseline", "regressions", "rows", "save_baseline", "side_by_side", "step_time"]

BASELINE_FORMAT = "ascendemu-baseline"
BASELINE_VERSION = 1
DEFAULT_TOLERANCE = 0.05          # the gate lets a figure grow by 5% before it calls it a regression


def step_time(entry: list) -> float:
    """Simulated seconds per step of a ``figures["steps"]`` entry: the steady state (the first run, which
    builds and uploads, excluded) once there are several runs, as the run summary prints it."""
    runs, first, total = entry
    return (total - first) / (runs - 1) if runs > 1 else total


@dataclass(frozen=True)
class Figure:
    """One figure of a run: what it is, its value and its unit ("s" or "B"); ``gated`` figures are the
    ones the regression gate watches (step times, peak memory, the whole run's simulated time)."""

    label: str
    value: float
    unit: str
    gated: bool = False

    def show(self) -> str:
        return _show(self.value, self.unit)


def _show(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1e3:.6f} ms"
    if unit == "B":
        return f"{format_bytes(int(value))} ({int(value)} B)"
    return f"{value:g}"


def rows(figures: dict) -> dict[str, Figure]:
    """The figures of a run by label, in reading order: run, steps, then per device its memory, streams
    and AI cores."""
    out: dict[str, Figure] = {}

    def add(label: str, value: float, unit: str, gated: bool = False) -> None:
        out[label] = Figure(label, value, unit, gated)

    add("simulated device time (whole run)", figures.get("device_time_s", 0.0), "s", gated=True)
    add("simulated host time (whole run)", figures.get("host_time_s", 0.0), "s")
    for name, entry in figures.get("steps", {}).items():
        add(f"simulated step time of {name}", step_time(entry), "s", gated=True)
    for dev, d in figures.get("devices", {}).items():
        pool = d["pool"]
        add(f"device {dev} peak memory without fragments", pool["peak_used"], "B", gated=True)
        add(f"device {dev} peak memory with fragments", pool["actual_peak"], "B", gated=True)
        add(f"device {dev} memory reserved", pool["reserved"], "B")
        add(f"device {dev} kernels run", d["kernels_run"], "")
        for stream, (tasks, busy, end) in d["streams"].items():
            if tasks:
                add(f"device {dev} stream {stream} busy", busy, "s")
        for core, busy in enumerate(d["cores"]):
            if busy:
                add(f"device {dev} AI core {core} busy", busy, "s")
    return out


def differences(a: dict, b: dict, path: str = "") -> list[str]:
    """Every figure that differs between ``a`` and ``b`` (exact comparison: bit for bit), by its path."""
    out = []
    for key in sorted(set(a) | set(b), key=str):
        where = f"{path}.{key}" if path else str(key)
        if key not in a or key not in b:
            out.append(f"{where}: only in {'the first' if key in a else 'the second'}")
        elif isinstance(a[key], dict) and isinstance(b[key], dict):
            out += differences(a[key], b[key], where)
        elif a[key] != b[key]:
            out.append(f"{where}: {a[key]!r} != {b[key]!r}")
    return out


def side_by_side(first: dict, second: dict, titles: tuple[str, str] = ("original", "what-if")) -> list[str]:
    """Two runs' figures as a table: label, both values and the relative change."""
    a, b = rows(first), rows(second)
    labels = list(a) + [label for label in b if label not in a]
    width = max((len(label) for label in labels), default=10)
    cols = [max(len(titles[0]), 30), max(len(titles[1]), 30)]
    lines = [f"{'':{width}}  {titles[0]:>{cols[0]}}  {titles[1]:>{cols[1]}}  change"]
    for label in labels:
        fa, fb = a.get(label), b.get(label)
        unit = (fa or fb).unit
        va, vb = (fa.value if fa else 0.0), (fb.value if fb else 0.0)
        change = "" if va == vb else (f"{(vb - va) / va:+.1%}" if va else "new")
        if fa is None or fb is None:
            change = "new" if fa is None else "gone"
        if change in ("+0.0%", "-0.0%"):
            change = "~0% (rounding)"
        lines.append(f"{label:{width}}  {_show(va, unit) if fa else '-':>{cols[0]}}  "
                     f"{_show(vb, unit) if fb else '-':>{cols[1]}}  {change}")
    return lines


@dataclass(frozen=True)
class Regression:
    """A gated figure that grew past the tolerance."""

    label: str
    baseline: float
    current: float
    unit: str
    tolerance: float

    def describe(self) -> str:
        growth = (self.current - self.baseline) / self.baseline if self.baseline else float("inf")
        return (f"REGRESSION: {self.label}: {_show(self.baseline, self.unit)} -> {_show(self.current, self.unit)} "
                f"({growth:+.1%}, tolerance {self.tolerance:.1%})")


def regressions(baseline: dict, current: dict, tolerance: float = DEFAULT_TOLERANCE) -> list[Regression]:
    """The gated figures (simulated step times, the whole run's simulated time, peak memory with and
    without fragments) of ``current`` that exceed ``baseline`` by more than ``tolerance`` (a fraction).
    A figure only one of the two runs has is not compared (a renamed graph is a new figure)."""
    if not isinstance(tolerance, (int, float)) or tolerance < 0:
        raise ValueError(f"tolerance must be a fraction >= 0, got {tolerance!r}")
    a, b = rows(baseline), rows(current)
    out = []
    for label, fa in a.items():
        fb = b.get(label)
        if fa.gated and fb is not None and fb.value > fa.value * (1 + tolerance):
            out.append(Regression(label, fa.value, fb.value, fa.unit, tolerance))
    return out


def save_baseline(path: str | os.PathLike, figures: dict, preset: str) -> Path:
    """Write a run's figures as a baseline file (JSON) for ``--check``, atomically."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"format": BASELINE_FORMAT, "version": BASELINE_VERSION, "preset": preset,
                               "figures": figures}, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return path


def load_baseline(path: str | os.PathLike) -> dict:
    """The figures of a baseline file written by :func:`save_baseline`."""
    return read_baseline(path)["figures"]


def read_baseline(path: str | os.PathLike) -> dict:
    """A baseline file written by :func:`save_baseline`, checked: its ``figures`` and the ``preset`` (device
    preset name, None when unknown) the figures were measured on."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise InvalidFileError(f"cannot read baseline {path}: {e}; write one with "
                               "`ascendemu run --save-baseline FILE script.py`") from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT or not isinstance(data.get("figures"), dict):
        raise InvalidFileError(f"{path} is not an ascendemu baseline (format {BASELINE_FORMAT!r}); write one with "
                               "`ascendemu run --save-baseline FILE script.py`")
    preset = data.get("preset")
    return {"figures": data["figures"], "preset": preset if isinstance(preset, str) else None}
