"""The run's steps and the summary a user reads.

:class:`RunLog` keeps what each execution (an op in PyNative, a graph step, a dataset sink) cost on both
clocks, marks its boundaries for a recorder (``StepBegin``/``StepEnd``, which ``hal.record.StepClock``
measures the same way), and names the training step (:meth:`RunLog.step_time`, read by the DryRun table
of ``ascendemu msrun``). :func:`run_summary` writes the summary: where kernels and graphs came from, each
graph's runs and memory plan, and the device's figures from ``hal.figures.device_figures``, the one home
of a run's device figures (the trace's ``End`` record holds the same).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from ascendemu.hal.figures import device_figures
from ascendemu.hal.runtime import Runtime
from ascendemu.units import format_bytes

from .dynamic import family_stats
from .memory_report import AT_PEAK, PERSISTENT
from .modes import RunMode
from .plan import CompiledGraph

if TYPE_CHECKING:
    from .bindings import Prepared
    from .prepare import GraphPreparer

__all__ = ["PYNATIVE", "STEP_HISTORY", "RunLog", "StepRecord", "run_summary"]

PYNATIVE = "PyNative"      # the level of an op run alone
STEP_HISTORY = 1024        # step records kept for inspection (executor.steps); totals are kept for all


@dataclass
class StepRecord:
    """One execution: which graph (or op), at which level, and what it cost on both clocks."""

    name: str
    jit_level: str
    kernels: int
    host_wall_s: float
    device_s: float          # simulated: from the host's first call of the step to the device's last task
    host_s: float = 0.0      # simulated host time the step took (its calls, and its waits for the device)


@dataclass
class _Totals:
    """Every run of one graph (or op) at one level, summed for the summary."""

    first: StepRecord
    runs: int = 0
    host_wall_s: float = 0.0
    device_s: float = 0.0
    host_s: float = 0.0      # simulated host time, for the comparison with dataset sink mode

    def steady(self) -> tuple[float, float]:
        """(simulated device s, host wall s) per run; the first run (builds, uploads) is excluded once
        there are more."""
        steady = max(self.runs - 1, 1)
        first = self.runs > 1
        return ((self.device_s - (self.first.device_s if first else 0.0)) / steady,
                (self.host_wall_s - (self.first.host_wall_s if first else 0.0)) / steady)


@dataclass
class _SinkTotals:
    """Every dataset sink of one graph at one level: steps run, simulated host time, and the host API
    time the modelled step-by-step run would have spent on the round trips the sinks avoided."""

    sinks: int = 0
    steps: int = 0
    host_s: float = 0.0
    avoided_api_s: float = 0.0
    depth: int = 0
    device_s: float = 0.0    # simulated: from each sink's first host call to its device's last task
    first_steps: int = 0     # the first sink (it also fills the data queue's first slots) ...
    first_device_s: float = 0.0   # ... and its simulated device time

    def steady(self) -> float:
        """Simulated device seconds per sunk step, as MindSpore's sink mode reports a step: a sink's
        time over its steps; once there are more sinks, the first (queue setup, first uploads) is
        excluded, as :meth:`_Totals.steady` excludes a graph's first run."""
        if self.sinks > 1:
            return (self.device_s - self.first_device_s) / (self.steps - self.first_steps)
        return self.device_s / self.steps


class RunLog:
    """Every execution of the run: the recent ones (``steps``: a long PyNative run records one per op)
    and totals per (graph or op, level) for all of them, step by step and in dataset sink mode."""

    def __init__(self, rt: Runtime):
        self.rt = rt
        self.steps: deque[StepRecord] = deque(maxlen=STEP_HISTORY)
        self.totals: dict[tuple[str, str], _Totals] = {}
        self.sinks: dict[tuple[str, str], _SinkTotals] = {}
        # graph -> (most trips saved, most bytes reserved) by its device loops' stacks in one step
        self.loop_stacks: dict[str, tuple[int, int]] = {}

    def record_loop_stacks(self, name: str, trips: int, reserved: int) -> None:
        """One step of ``name`` saved ``trips`` loop trips for its backward in stacks of ``reserved`` bytes
        (graph.while_grad): device memory no compile-time plan sees, since the trip count is the data's."""
        old = self.loop_stacks.get(name, (0, 0))
        self.loop_stacks[name] = (max(old[0], trips), max(old[1], reserved))

    def begin(self, name: str, level: str) -> None:
        """Mark a step's start for the runtime's recorders, if any listen."""
        if self.rt.recorders:
            self.rt.annotate(_marks().StepBegin(name, level))

    def end(self, name: str, level: str) -> None:
        """Mark a step's end for the runtime's recorders, if any listen."""
        if self.rt.recorders:
            self.rt.annotate(_marks().StepEnd(name, level))

    def record(self, step: StepRecord) -> None:
        """One op or graph step run."""
        self.steps.append(step)
        t = self.totals.setdefault((step.name, step.jit_level), _Totals(step))
        t.runs += 1
        t.host_wall_s += step.host_wall_s
        t.device_s += step.device_s
        t.host_s += step.host_s

    def record_sink(self, step: StepRecord, batches: int, avoided_api_s: float, depth: int) -> None:
        """One dataset sink of ``batches`` steps (``step``: the whole sink); ``avoided_api_s``: the host
        API time its step-by-step run would have spent; ``depth``: its data queue's slots."""
        self.steps.append(step)
        t = self.sinks.setdefault((step.name, step.jit_level), _SinkTotals())
        if not t.sinks:
            t.first_steps, t.first_device_s = batches, step.device_s
        t.sinks += 1
        t.steps += batches
        t.host_s += step.host_s
        t.device_s += step.device_s
        t.avoided_api_s += avoided_api_s
        t.depth = max(t.depth, depth)

    def step_time(self) -> tuple[str, float] | None:
        """(graph, simulated device seconds per steady-state step) of the graph that took the most
        simulated device time (a training script's step), or None when no graph ran. A graph run in
        dataset sink mode counts its sunk steps (each sink's time over its steps); one that ran both
        ways is named by whichever took more of the device."""
        runs = [(key, t.device_s, t.steady()[0], "") for key, t in self.totals.items() if key[1] != PYNATIVE]
        sinks = [(key, t.device_s, t.steady(), ", dataset sink mode") for key, t in self.sinks.items()]
        if not runs + sinks:
            return None
        (name, level), _, per_step, how = max(runs + sinks, key=lambda item: item[1])
        return f"{name} [{level}{how}]", per_step

    def lines(self) -> list[str]:
        """One line per graph (or op) and level, then one per graph run in dataset sink mode."""
        lines = []
        for (name, level), t in self.totals.items():
            dev, wall = t.steady()
            lines.append(f"{name} [{level}]: {t.runs} run(s), {t.first.kernels} kernel(s)/run; "
                         f"simulated device time {dev * 1e3:.3f} ms/run, host wall {wall * 1e3:.1f} ms/run"
                         + (" (steady state, first run excluded)" if t.runs > 1 else ""))
        for (name, level), t in self.sinks.items():
            lines.append(_sink_line(name, level, t, self.totals.get((name, level))))
        for name, (trips, reserved) in self.loop_stacks.items():
            lines.append(f"{name}: gradients through `while` loops saved up to {trips} trip(s) per step on device "
                         f"stacks that reserved up to {format_bytes(reserved)} (summed over the step's stacks; "
                         f"graph.while_grad)")
        return lines


def run_summary(rt: Runtime, device_id: int, mode: RunMode, preparer: GraphPreparer, log: RunLog) -> list[str]:
    """The per-run summary a user reads: both clocks named, files named."""
    cache = preparer.graph_cache
    lines = [mode.summary_head(),
             f"graph cache {cache.directory}: {cache.hits} hit(s), {preparer.graphs_compiled} graph(s) compiled"]
    lines += log.lines()
    dynamic = family_stats().line()             # set_inputs signatures: one line for their shape families
    lines += [dynamic] if dynamic else []
    lines += _graph_lines(preparer.prepared.values())
    device = rt.node.devices[device_id]
    figures = device_figures(device)
    pool, cores, device_s = figures["pool"], figures["cores"], rt.device_time()
    busy = sum(cores) / (device_s * len(cores)) if device_s > 0 else 0.0
    lines.append(f"device {device_id} ({device.spec.name}, simulated): {figures['kernels_run']} kernel(s) run, "
                 f"AI cores {busy:.1%} busy over {device_s * 1e3:.3f} ms; memory peak "
                 f"used {format_bytes(pool['peak_used'])}, actual peak with fragments "
                 f"{format_bytes(pool['actual_peak'])}, reserved {format_bytes(pool['reserved'])}")
    return lines + mode.summary_tail({**pool, "hbm": device.spec.hbm_bytes}, log.step_time())


def _graph_lines(prepared: Iterable[Prepared]) -> list[str]:
    """Each prepared graph's order, streams and memory plan (and a training step's memory by kind)."""
    lines = []
    for p in prepared:
        c = p.compiled
        shapes = ", ".join(str(list(c.values[v].shape)) for v in c.inputs)    # a dynamic family's graphs differ here
        line = (f"{c.name} [{c.jit_level}] inputs {shapes or 'none'}, {c.exec_order} execution order: peak live bytes "
                f"{format_bytes(c.lower_bound)} (single-stream order), {len(p.streams)} stream(s)")
        if c.memory == "static":
            line += (f"; static memory plan {format_bytes(c.workspace_size)} "
                     f"({c.workspace_size / max(c.lower_bound, 1):.3f}x that peak")
            if c.concurrent_bound is not None and len(p.streams) > 1:
                line += (f", {c.workspace_size / max(c.concurrent_bound, 1):.3f}x the "
                         f"{format_bytes(c.concurrent_bound)} that may be alive at once on its "
                         f"{len(p.streams)} streams")
            line += ")"
        lines.append(line)
        if c.memory_report is not None and c.memory_report.trains:
            lines.append(_step_memory_line(c))
    return lines


def _marks():
    """The trace format's step records, imported only when a recorder listens (``ascendemu run --record``):
    the format's dozens of record classes cost tens of milliseconds to import, which a plain run skips."""
    from ascendemu.traces import aetrace
    return aetrace


def _sink_line(name: str, level: str, t: _SinkTotals, stepwise: _Totals | None) -> str:
    """Dataset sink mode of one graph: its steps and sinks, simulated host time per step, and the host
    time it saved: measured against the same graph's step-by-step runs in this process if there were
    any, else the modelled host API time of the round trips it avoided (a lower bound)."""
    per_step = t.host_s / t.steps
    line = (f"{name} [{level}] dataset sink mode: {t.steps} step(s) in {t.sinks} sink(s), one graph launch "
            f"each, fed by a device data queue of {t.depth} batch(es) (GetNext); simulated device time "
            f"{t.steady() * 1e3:.3f} ms/step, simulated host time {per_step * 1e3:.3f} ms/step")
    if not t.avoided_api_s:                     # one-step sinks (evaluation): nothing to save
        return line
    if stepwise is not None and stepwise.runs:
        unsunk = stepwise.host_s / stepwise.runs
        saved = unsunk - per_step
        return line + (f" vs {unsunk * 1e3:.3f} ms/step launched step by step ({stepwise.runs} run(s)): host time "
                       f"saved {saved * 1e3:.3f} ms/step, {saved * t.steps * 1e3:.3f} ms over the sunk steps")
    return line + (f"; host time saved >= {t.avoided_api_s / t.steps * 1e3:.3f} ms/step, "
                   f"{t.avoided_api_s * 1e3:.3f} ms in all (modelled: the graph launches, synchronisations and "
                   f"copies of step-by-step launches; no step-by-step run of this graph to measure)")


def _step_memory_line(c: CompiledGraph) -> str:
    """One line of a training step's memory by kind: persistent state, then node outputs at the peak."""
    r = c.memory_report
    held = ", ".join(f"{k.value} {format_bytes(r.bytes[k])} ({r.counts[k]} tensors)" for k in PERSISTENT)
    peak = ", ".join(f"{k.value} {format_bytes(r.bytes[k])}" for k in AT_PEAK)
    return (f"{c.name} [{c.jit_level}] step memory: {held}; node outputs at the peak "
            f"{format_bytes(r.peak_bytes)} (node {r.peak_position + 1} of {r.nodes}, {r.peak_node}): {peak}")
