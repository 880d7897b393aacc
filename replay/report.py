"""The HTML report of one or more traces (``ascendemu report``): one self-contained page a person reads at
a glance. Every figure comes from replaying the trace (:class:`~.replayer.Replayer`): nothing here
simulates anything.

What the page shows, per run (a trace as recorded, or under a what-if):

* a summary table, runs side by side: the figures of ``compare.rows`` (simulated step times, device
  and host time, peak memory with and without fragments, kernels run), graph launches and the host
  wall time the recording measured;
* memory over time: the pool's allocated and reserved bytes (the replay's Chrome trace counter track,
  sampled at every malloc and free on the host timeline), the peak marked, and the largest
  allocations live at the peak named (size, the step that allocated them, what wrote them first: a
  kernel's op and output, a host-to-device copy ...);
* a timeline per stream, AI core and DMA engine (the replay's Chrome trace spans), drawn by a small
  inline script that zooms (wheel, drag, buttons) and merges spans narrower than a pixel;
* time per kernel type: the kernel spans' device time by kernel name, sorted, with their share.

How it watches the replay: :class:`Observer` is the replayer's ``observe`` hook. It is called with each
record before the replayer issues it, so it sees the replay's node as every earlier record left it;
after each ``Malloc``/``Free`` it reads the pools' live bytes (``PoolStats.used``) and notes where a
device's peak was reached, and it follows the recorded addresses (allocations, launch arguments,
copies) to say what each allocation held. The page is plain HTML with inline SVG, CSS and script: no
network access, no external font.
"""
from __future__ import annotations

import html
import json
from bisect import bisect_right, insort
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ascendemu.device.spec import DeviceSpec
from ascendemu.errors import InvalidParamError
from ascendemu.traces import aetrace as fmt
from ascendemu.traces.chrome import CORE_TID_BASE, DMA_TID_BASE, HOST_TID
from ascendemu.units import format_bytes

from . import compare
from .replayer import Replayer, ReplayResult, WhatIf, spec_of

__all__ = ["Allocation", "Observer", "RunReport", "TOP_ALLOCATIONS", "render", "replay_for_report", "write_report"]

TOP_ALLOCATIONS = 8           # allocations named at a device's peak
TRACK_SPANS = 4000            # spans kept per timeline track; more are merged into this many bins
MEMORY_COLUMNS = 900          # memory samples kept (the largest per column) for the chart
KERNEL_BARS = 25              # kernel types drawn; the rest are summed as "other"
SETUP = "before the first step (set-up: weights, inputs, plans)"


@dataclass
class Allocation:
    """A device allocation of the trace, named by what the records say about it."""

    device: int
    address: int                  # as recorded
    size: int                     # bytes the malloc asked for
    step: str                     # the step (graph or op, level) running when it was allocated
    writer: str | None = None     # what wrote it first: "<Op> output k <shape> <dtype>", a copy ...
    users: Counter = field(default_factory=Counter)   # kernel name -> launches that touched it

    def describe_users(self) -> str:
        if not self.users:
            return "no kernel"
        names = ", ".join(name for name, _ in self.users.most_common(4))
        more = "" if len(self.users) <= 4 else f" and {len(self.users) - 4} more"
        return f"{sum(self.users.values())} launch(es) of {len(self.users)} kernel(s): {names}{more}"


@dataclass
class KernelInfo:
    name: str
    op: str | None
    roles: list[str]
    outputs: list[str]            # "shape dtype" of each output, when the identity says


class Observer:
    """The replayer's ``observe`` hook for the report (see the module docstring)."""

    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer
        self.node = None
        self.kernels: dict[int, KernelInfo] = {}
        self.graph_launches = 0
        self.steps: list[str] = []
        self.seen_step = False
        self._pending: fmt.Record | None = None
        self._reset()

    def _reset(self) -> None:
        self.live: dict[int, Allocation] = {}      # recorded start -> allocation
        self._starts: list[int] = []
        self.log: list[tuple[bool, Allocation]] = []       # (malloc?, allocation) in pool order
        self.used: dict[int, int] = {}                      # device -> live bytes the pool counts
        self.peak: dict[int, int] = {}                      # device -> highest used seen
        self.peak_at: dict[int, int] = {}                   # device -> len(log) when it was reached

    # -- the hook ---------------------------------------------------------------------------------------
    def __call__(self, rec: fmt.Record) -> None:
        if self._pending is not None:
            self._settle()
        kind = type(rec)
        if kind is fmt.Malloc or kind is fmt.Free:
            self._pending = rec
        elif kind is fmt.Kernel:
            self._kernel(rec)
        elif kind is fmt.LaunchKernel:
            if type(rec.func) is fmt.KernelRef:
                self._launch(rec.func.id, rec.args)
        elif kind is fmt.LaunchGraph:
            self.graph_launches += 1
            for step in rec.steps:
                if step[0] == "Launch" and type(step[1]) is fmt.KernelRef:
                    self._launch(step[1].id, step[2])
                elif step[0] == "MemcpyAsync":
                    self._written(step[1], step[3], step[5])
        elif kind is fmt.Memcpy or kind is fmt.MemcpyAsyncCall:
            self._written(rec.dst, rec.src, rec.kind)
        elif kind is fmt.Memset or kind is fmt.MemsetAsync:
            self._written(rec.ptr, None, None)
        elif kind is fmt.StepBegin:
            self.steps.append(f"{rec.name} [{rec.level}]")
            self.seen_step = True
        elif kind is fmt.StepEnd:
            if self.steps:
                self.steps.pop()
        elif kind is fmt.Init:
            self._reset()
        if self.replayer.rt.node is not None:
            self.node = self.replayer.rt.node

    def finish(self) -> None:
        """After the replay: the last record's effect (the node stays readable after finalize)."""
        if self._pending is not None:
            self._settle()

    # -- memory ------------------------------------------------------------------------------------------
    def _settle(self) -> None:
        """The pending malloc or free has been issued: find the device whose pool changed, log it."""
        rec, self._pending = self._pending, None
        node = self.replayer.rt.node or self.node
        if node is None:
            return
        changed = None
        for d in node.devices:
            used = d.memory.stats().used
            if used != self.used.get(d.id, 0):
                self.used[d.id] = used
                changed = d.id
        if changed is None:
            return                                   # refused, or a host pointer freed
        if type(rec) is fmt.Malloc:
            a = Allocation(changed, rec.result, rec.size,
                           self.steps[-1] if self.steps else ("between steps" if self.seen_step else SETUP))
            self.live[rec.result] = a
            insort(self._starts, rec.result)
            self.log.append((True, a))
            if self.used[changed] > self.peak.get(changed, 0):
                self.peak[changed] = self.used[changed]
                self.peak_at[changed] = len(self.log)
        else:
            a = self.live.pop(rec.ptr, None)
            if a is not None:
                del self._starts[bisect_right(self._starts, rec.ptr) - 1]
                self.log.append((False, a))

    def _find(self, addr: Any) -> Allocation | None:
        if type(addr) is not int:
            return None
        i = bisect_right(self._starts, addr) - 1
        if i < 0:
            return None
        a = self.live[self._starts[i]]
        return a if addr < a.address + a.size else None

    def _written(self, dst: Any, src: Any, kind: int | None) -> None:
        a = self._find(dst)
        if a is None or a.writer is not None:
            return
        if kind is None:
            a.writer = "memset"
        elif type(src) is fmt.HostData or kind == 1:
            a.writer = "host-to-device copy"
        else:
            a.writer = "device-to-device copy"

    def _kernel(self, rec: fmt.Kernel) -> None:
        ident = rec.identity or {}
        op = (ident.get("signature") or {}).get("op")
        outs = [f"{'x'.join(map(str, o.get('shape', []))) or 'scalar'} {o.get('dtype', '')}".strip()
                for o in ident.get("outputs") or []]
        self.kernels[rec.id] = KernelInfo(rec.name, op, [a[1] for a in rec.args], outs)

    def _launch(self, kid: int, args: list) -> None:
        k = self.kernels.get(kid)
        if k is None:
            return
        out = 0
        for i, addr in enumerate(args):
            role = k.roles[i] if i < len(k.roles) else "in"
            a = self._find(addr)
            if a is not None:
                a.users[k.name] += 1
                if a.writer is None and role != "in":
                    what = k.op or k.name
                    if role == "out":
                        shape = f" {k.outputs[out]}" if out < len(k.outputs) else ""
                        a.writer = f"{what} output {out}{shape} ({k.name})"
                    else:
                        a.writer = f"{what} workspace ({k.name})"
            if role == "out":
                out += 1

    def at_peak(self, device: int) -> list[Allocation]:
        """The allocations of ``device`` live when its pool first reached its peak, largest first."""
        live: dict[int, Allocation] = {}
        for is_malloc, a in self.log[:self.peak_at.get(device, 0)]:
            if a.device != device:
                continue
            if is_malloc:
                live[id(a)] = a
            else:
                live.pop(id(a), None)
        return sorted(live.values(), key=lambda a: -a.size)


@dataclass
class RunReport:
    """One column of the report: a trace replayed as recorded or under a what-if."""

    label: str
    path: str
    header: fmt.Header
    whatif: list[str]
    result: ReplayResult
    chrome: dict                     # the replay's Chrome trace (``ChromeTrace.to_json``)
    observer: Observer

    @property
    def figures(self) -> dict:
        return self.result.figures


def _label(header: fmt.Header, path: str, whatif: list[str]) -> str:
    o = header.options
    script = Path(o.get("script") or path).stem
    level = o.get("jit_level") or "default jit level"
    parts = [script, level, header.preset.get("name", "?")]
    if o.get("dry_run"):
        parts.append("DryRun")
    label = " · ".join(parts)
    return label + (" · what-if: " + "; ".join(whatif) if whatif else "")


def replay_for_report(path: str, whatif: WhatIf | None = None) -> RunReport:
    """Replay the trace at ``path`` (as recorded, or under ``whatif``), watching it for the report."""
    whatif = whatif or WhatIf()
    reader = fmt.read_trace(path)
    replayer = Replayer(reader, whatif, collect_trace=True)
    observer = Observer(replayer)
    replayer.observe = observer
    result = replayer.run()
    observer.finish()
    node = observer.node
    chrome = node.trace.to_json() if node is not None and node.trace is not None else {"traceEvents": []}
    changes = whatif.describe(spec_of(reader.header.preset), reader.header.options.get("pool", "best-fit")) \
        if whatif.active else []
    return RunReport(_label(reader.header, path, changes), str(path), reader.header, changes, result, chrome,
                     observer)


def write_report(paths: list[str], out: str | Path, whatif: WhatIf | None = None) -> tuple[Path, list[RunReport]]:
    """Replay each trace (and, with an active ``whatif``, each trace under it) and write the page."""
    out = Path(out)
    for p in paths:
        fmt.read_trace(p)                   # a missing or foreign file fails here, before any replay
    if not out.parent.is_dir():
        raise InvalidParamError(f"cannot write the report to {out}: the directory {out.parent} does not exist")
    runs = []
    for p in paths:
        runs.append(replay_for_report(p))
        if whatif is not None and whatif.active:
            runs.append(replay_for_report(p, whatif))
    labels = Counter(r.label for r in runs)
    for r in runs:
        if labels[r.label] > 1:
            r.label += f" ({Path(r.path).name})"
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(render(runs), encoding="utf-8")
    tmp.replace(out)
    return out, runs


# -- rendering ---------------------------------------------------------------------------------------------
def _e(s: Any) -> str:
    return html.escape(str(s), quote=True)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4f} ms"


STEP_PREFIX = "simulated step time of "


def _rows(run: RunReport) -> dict[str, tuple[compare.Figure, str]]:
    """``compare.rows`` of a run, by label, with a note. A graph's step time drops its level from the
    label (noted instead) when the run has it at one level only, so O0/O1/O2 runs of a network line up."""
    rows = compare.rows(run.figures)
    levels = Counter(lb.rsplit(" [", 1)[0] for lb in rows if lb.startswith(STEP_PREFIX) and lb.endswith("]"))
    out = {}
    for label, f in rows.items():
        base, _, level = label.rpartition(" [")
        if label.startswith(STEP_PREFIX) and base and levels[base] == 1:
            out[base] = (replace(f, label=base), level.rstrip("]"))
        else:
            out[label] = (f, "")
    return out


def _summary(runs: list[RunReport]) -> str:
    """The runs side by side: the figures of ``compare.rows`` (streams and cores in the details below)."""
    rows = [_rows(r) for r in runs]
    labels: list[str] = []
    for r in rows:
        labels += [label for label in r if label not in labels]
    main = [lb for lb in labels if " stream " not in lb and " AI core " not in lb]
    rest = [lb for lb in labels if lb not in main]
    head = "<tr><th></th>" + "".join(f"<th>{_e(r.label)}</th>" for r in runs) + "</tr>"

    def body(names: list[str]) -> str:
        out = []
        for label in names:
            cells, base = [], None
            for r in rows:
                if label not in r:
                    cells.append("<td>-</td>")
                    continue
                f, note = r[label]
                change = ""
                if base is None:
                    base = f.value
                elif base and f.value != base:
                    change = f' <span class="chg">{(f.value - base) / base:+.1%}</span>'
                note = f" ({_e(note)})" if note else ""
                cells.append(f'<td data-value="{f.value!r}">{_e(f.show())}{note}{change}</td>')
            out.append(f'<tr><th>{_e(label)}</th>{"".join(cells)}</tr>')
        return "".join(out)

    extra = []
    extra.append("<tr><th>graph launches</th>" + "".join(
        f"<td>{r.observer.graph_launches}</td>" for r in runs) + "</tr>")
    extra.append("<tr><th>host wall of the recorded run (measured, not simulated)</th>" + "".join(
        f"<td>{r.result.recorded.host_wall_s:.3f} s</td>" if r.result.recorded is not None and not r.whatif
        else "<td>-</td>" for r in runs) + "</tr>")
    extra.append("<tr><th>host wall of this replay (measured)</th>" + "".join(
        f"<td>{r.result.host_wall_s:.3f} s</td>" for r in runs) + "</tr>")
    table = f'<table class="summary" id="summary">{head}{body(main)}{"".join(extra)}</table>'
    if rest:
        table += (f'<details><summary>busy time per stream and AI core</summary><table class="summary">{head}'
                  f'{body(rest)}</table></details>')
    return table


def _bars(title: str, items: list[tuple[str, float, str]], cls: str) -> str:
    """A horizontal bar chart (static SVG): (label, value, shown value) per bar, longest = full width."""
    if not items:
        return ""
    top = max(v for _, v, _ in items) or 1.0
    h, bar_w = 22, 420
    label_w = min(12 + 6.5 * max(len(label) for label, _, _ in items), 620)
    width, height = label_w + bar_w + 260, h * len(items) + 8
    # a viewBox: the chart scales down with a narrow window instead of overflowing it (CSS max-width)
    parts = [f'<svg class="{cls}" width="{width:.0f}" height="{height}" viewBox="0 0 {width:.0f} {height}" '
             f'role="img" aria-label="{_e(title)}">']
    for i, (label, v, shown) in enumerate(items):
        y = 4 + i * h
        w = max(1.0, bar_w * v / top)
        parts.append(f'<text x="{label_w - 6:.1f}" y="{y + 15}" text-anchor="end">{_e(label)}</text>'
                     f'<rect x="{label_w:.1f}" y="{y + 3}" width="{w:.1f}" height="{h - 6}" class="bar" '
                     f'data-label="{_e(label)}" data-value="{v!r}">'
                     f'<title>{_e(label)}: {_e(shown)}</title></rect>'
                     f'<text x="{label_w + w + 6:.1f}" y="{y + 15}">{_e(shown)}</text>')
    parts.append("</svg>")
    return f"<h3>{_e(title)}</h3>" + "".join(parts)


def _compare_charts(runs: list[RunReport]) -> str:
    """With several runs: the gated figures (step times, peaks) of each run as bars side by side."""
    if len(runs) < 2:
        return ""
    rows = [_rows(r) for r in runs]
    out = []
    gated = []
    for r in rows:
        gated += [lb for lb, (f, _) in r.items() if f.gated and lb not in gated]
    for label in gated:
        items = [(r.label, rw[label][0].value, rw[label][0].show()) for r, rw in zip(runs, rows) if label in rw]
        out.append(_bars(label, items, "cmp"))
    return '<section id="compare"><h2>Comparison</h2>' + "".join(out) + "</section>"


def _kernel_times(run: RunReport) -> tuple[list[tuple[str, float, int]], float]:
    """(kernel name with its op, device seconds, launches) per kernel type, largest first; the total.
    A span named after the op it computed (a graph's full op name) says its kernel in ``args.kernel``."""
    ops = {k.name: k.op for k in run.observer.kernels.values()}
    total: dict[str, list] = {}
    for ev in run.chrome["traceEvents"]:
        if ev.get("ph") == "X" and ev.get("cat") == "kernel":
            t = total.setdefault(ev.get("args", {}).get("kernel", ev["name"]), [0.0, 0])
            t[0] += ev["dur"] * 1e-6
            t[1] += 1
    items = [(f"{name} ({ops[name]})" if ops.get(name) else name, s, n) for name, (s, n) in total.items()]
    items.sort(key=lambda it: -it[1])
    return items, sum(s for _, s, _ in items)


def _kernel_chart(run: RunReport) -> str:
    items, total = _kernel_times(run)
    if not items:
        return "<p>No kernel ran.</p>"
    shown = items[:KERNEL_BARS]
    if len(items) > KERNEL_BARS:
        rest = items[KERNEL_BARS:]
        shown.append((f"other ({len(rest)} kernel types)", sum(s for _, s, _ in rest), sum(n for _, _, n in rest)))
    bars = [(name, s, f"{_ms(s)} · {s / total:.1%} · {n} launch(es)") for name, s, n in shown]
    return _bars(f"Time per kernel type (device time of the kernel tasks, total {_ms(total)})", bars, "kernels")


def _memory_samples(run: RunReport) -> dict[str, list[tuple[float, int, int]]]:
    out: dict[str, list] = {}
    for ev in run.chrome["traceEvents"]:
        if ev.get("ph") == "C" and ev["name"].endswith(" memory"):
            a = ev["args"]
            out.setdefault(ev["name"], []).append((ev["ts"] * 1e-6, a["allocated"], a["reserved"]))
    return out


def _memory_chart(run: RunReport, device: str, samples: list[tuple[float, int, int]], peak: int) -> str:
    """Allocated and reserved bytes over the simulated host timeline (static SVG), the peak marked."""
    w, h, left, bottom = 900, 220, 70, 28
    t_end = max(samples[-1][0], run.figures.get("host_time_s", 0.0), 1e-12)
    reserved = max(s[2] for s in samples)
    # the pool reserves in 1 GiB segments: a scale that fits them would flatten the allocated line
    top = max(reserved, peak, 1) if reserved <= 4 * peak else max(int(peak * 1.15), 1)
    x = lambda t: left + (w - left - 10) * t / t_end               # noqa: E731
    y = lambda b: 8 + (h - bottom - 8) * (1 - min(b, top) / top)   # noqa: E731
    cols: dict[int, list] = {}
    for t, alloc, res in samples:                                   # the largest value per pixel column
        c = int(MEMORY_COLUMNS * t / t_end)
        cur = cols.get(c)
        cols[c] = [t, max(alloc, cur[1]), max(res, cur[2])] if cur else [t, alloc, res]
    pts = sorted(cols.values())

    def steps(i: int) -> str:
        out, prev = [], None
        for t, *vals in pts:
            if prev is not None:
                out.append(f"{x(t):.1f},{y(prev):.1f}")
            out.append(f"{x(t):.1f},{y(vals[i]):.1f}")
            prev = vals[i]
        out.append(f"{x(t_end):.1f},{y(prev):.1f}")
        return " ".join(out)

    peak_t = next((t for t, alloc, _ in samples if alloc == peak), None)
    ticks = "".join(f'<line x1="{left}" x2="{w - 10}" y1="{y(top * f):.1f}" y2="{y(top * f):.1f}" class="grid"/>'
                    f'<text x="{left - 4}" y="{y(top * f) + 4:.1f}" text-anchor="end">{format_bytes(int(top * f))}'
                    f'</text>' for f in (0, 0.5, 1))
    # the first and last time labels are anchored inside the chart, so neither is cut at its edge
    ticks += "".join(f'<text x="{x(t_end * f):.1f}" y="{h - 8}" text-anchor="{anchor}">{_ms(t_end * f)}</text>'
                     for f, anchor in ((0, "start"), (0.25, "middle"), (0.5, "middle"), (0.75, "middle"),
                                       (1, "end")))
    mark = ""
    if peak_t is not None:
        px, py = x(peak_t), y(peak)
        anchor = "end" if px > w * 0.6 else "start"
        dx = -8 if anchor == "end" else 8
        mark = (f'<line x1="{px:.1f}" x2="{px:.1f}" y1="8" y2="{h - bottom}" class="peakline"/>'
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" class="peak"/>'
                f'<text x="{px + dx:.1f}" y="{max(py - 6, 16):.1f}" text-anchor="{anchor}" class="peaklabel">'
                f'peak {_e(format_bytes(peak))} at {_ms(peak_t)}</text>')
    clipped = f" (up to {_e(format_bytes(reserved))}, above the scale)" if reserved > top else ""
    return (f'<svg class="memory" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
            f'aria-label="{_e(device)} over time">'
            f'{ticks}<polyline class="reserved" points="{steps(1)}"/><polyline class="allocated" '
            f'points="{steps(0)}"/>{mark}</svg><p class="legend"><span class="k allocated"></span> allocated '
            f'<span class="k reserved"></span> reserved{clipped} (simulated host timeline of the mallocs and '
            f'frees)</p>')


def _memory(run: RunReport) -> str:
    parts = []
    samples = _memory_samples(run)
    for dev, d in run.figures.get("devices", {}).items():
        pool = d["pool"]
        name = f"device {dev} memory"
        parts.append(f'<h3>{_e(name)}</h3><p class="peakfig" data-device="{_e(dev)}" '
                     f'data-peak="{pool["peak_used"]}" data-actual-peak="{pool["actual_peak"]}">peak memory '
                     f'{_e(format_bytes(pool["peak_used"]))} ({pool["peak_used"]} B) without fragments, '
                     f'{_e(format_bytes(pool["actual_peak"]))} ({pool["actual_peak"]} B) with fragments; reserved '
                     f'{_e(format_bytes(pool["reserved"]))}</p>')
        if name in samples:
            parts.append(_memory_chart(run, name, samples[name], pool["peak_used"]))
        live = run.observer.at_peak(int(dev))
        if live:
            rows = "".join(
                f'<tr><td>{i + 1}</td><td data-bytes="{a.size}">{_e(format_bytes(a.size))}</td><td>{_e(a.step)}</td>'
                f'<td>{_e(a.writer or "nothing recorded")}</td><td>{_e(a.describe_users())}</td></tr>'
                for i, a in enumerate(live[:TOP_ALLOCATIONS]))
            asked = sum(a.size for a in live)
            parts.append(f'<table class="peak-allocs" data-asked="{asked}"><caption>The largest of the {len(live)} '
                         f'allocation(s) live at the peak ({_e(format_bytes(asked))} asked for)</caption><tr><th>#</th>'
                         f'<th>size</th><th>allocated during</th><th>written first by</th><th>used by</th></tr>'
                         f'{rows}</table>')
    return "".join(parts)


def _timeline_data(run: RunReport) -> dict:
    """The Chrome trace's spans per track for the timeline script: names interned, at most
    :data:`TRACK_SPANS` items per track (more are merged into equal time bins)."""
    names: dict[str, int] = {}
    cats: dict[str, int] = {}
    track_names = {ev["tid"]: ev["args"]["name"] for ev in run.chrome["traceEvents"]
                   if ev.get("ph") == "M" and ev.get("name") == "thread_name"}
    spans: dict[int, list] = {}
    for ev in run.chrome["traceEvents"]:
        if ev.get("ph") != "X":
            continue
        kernel = ev.get("args", {}).get("kernel")       # a graph op's span: its kernel_meta entry too
        n = names.setdefault(ev["name"] if kernel is None else f"{ev['name']} · {kernel}", len(names))
        c = cats.setdefault(ev["cat"], len(cats))
        spans.setdefault(ev["tid"], []).append([ev["ts"], ev["dur"], n, c, 1])

    def order(tid: int) -> tuple:
        kind = 0 if tid == HOST_TID else 2 if CORE_TID_BASE <= tid < DMA_TID_BASE else 3 if tid >= DMA_TID_BASE else 1
        return (kind, tid)

    tracks = []
    for tid in sorted(spans, key=order):
        items = sorted(spans[tid])
        if len(items) > TRACK_SPANS:
            items = _merge(items)
        tracks.append({"name": track_names.get(tid, f"track {tid}"), "items": items})
    end = max((s[0] + s[1] for t in tracks for s in t["items"]), default=0.0)
    return {"names": list(names), "cats": list(cats), "tracks": tracks, "end": end}


def _merge(items: list[list]) -> list[list]:
    """At most TRACK_SPANS items: spans in the same equal-width time bin become one item (its extent,
    the most frequent name, the count); the timeline says how many tasks an item stands for."""
    t0, t1 = items[0][0], max(s[0] + s[1] for s in items)
    width = (t1 - t0) / TRACK_SPANS or 1.0
    bins: dict[int, list] = {}
    for s in items:
        b = int((s[0] - t0) / width)
        cur = bins.get(b)
        if cur is None:
            bins[b] = [s[0], s[0] + s[1], Counter({s[2]: s[4]}), s[3], s[4]]
        else:
            cur[1] = max(cur[1], s[0] + s[1])
            cur[2][s[2]] += s[4]
            cur[4] += s[4]
    return [[b[0], b[1] - b[0], b[2].most_common(1)[0][0], b[3], b[4]] for _, b in sorted(bins.items())]


def _timeline(run: RunReport, index: int) -> str:
    data = json.dumps(_timeline_data(run), separators=(",", ":")).replace("</", "<\\/")
    return (f'<div class="timeline" id="timeline-{index}"><div class="tl-controls"><button data-zoom="in">zoom in'
            f'</button><button data-zoom="out">zoom out</button><button data-zoom="reset">reset</button> <span '
            f'class="tl-window"></span> (wheel: zoom, drag: pan; simulated time, ms)</div><div class="tl-svg"></div>'
            f'<script type="application/json" class="tl-data">{data}</script></div>')


def _run_section(run: RunReport, index: int) -> str:
    o = run.header.options
    spec: DeviceSpec = spec_of(run.header.preset)
    facts = [f"trace {Path(run.path).name}", f"recorded by ascendemu {run.header.ascendemu} on {spec.name}",
             f"jit level {o.get('jit_level') or 'default'}", f"execution order {o.get('exec_order') or 'default'}",
             f"{run.result.records} record(s), {run.result.kernels} kernel(s)"]
    if run.whatif:
        facts.append("what-if: " + "; ".join(run.whatif))
    if run.result.stop is not None:
        facts.append("partial trace: " + run.result.stop.describe())
    return (f'<section class="run" id="run-{index}"><h2>{_e(run.label)}</h2><p class="facts">{_e(" · ".join(facts))}'
            f'</p><h3>Memory</h3>{_memory(run)}<h3>Timeline per stream, AI core and DMA engine</h3>'
            f'{_timeline(run, index)}{_kernel_chart(run)}</section>')


def render(runs: list[RunReport]) -> str:
    """The page of ``runs`` (one column each in the summary), as one self-contained HTML string."""
    title = "ascendemu report: " + ", ".join(r.label for r in runs)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f'<style>{_CSS}</style></head><body><h1>ascendemu report</h1><p class="facts">Every figure comes from '
            f'replaying the trace(s) on the emulated device; times are simulated unless marked measured.</p>'
            f'<h2>Summary</h2>{_summary(runs)}{_compare_charts(runs)}'
            + "".join(_run_section(r, i) for i, r in enumerate(runs)) +
            f'<script>{_JS}</script></body></html>')


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
h3{font-size:15px;margin:18px 0 6px}.facts{color:#555}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right;
vertical-align:top}th{background:#f6f6f6;text-align:left}caption{text-align:left;color:#444;padding:4px 0}
.peak-allocs td:nth-child(3),.peak-allocs td:nth-child(4),.peak-allocs td:nth-child(5){text-align:left}
.chg{color:#a33;font-size:12px}svg text{font-size:11px;fill:#333}
.bar{fill:#4a7bd0}.cmp .bar{fill:#d08a4a}.grid{stroke:#eee}
polyline{fill:none;stroke-width:1.5}polyline.allocated{stroke:#c0392b}polyline.reserved{stroke:#7f8c8d;
stroke-dasharray:4 2}.peak{fill:#c0392b}.peakline{stroke:#c0392b;stroke-dasharray:2 2}.peaklabel{font-weight:bold;
fill:#c0392b}.legend{font-size:12px;color:#555}.k{display:inline-block;width:18px;height:3px;vertical-align:middle}
.k.allocated{background:#c0392b}.k.reserved{background:#7f8c8d}
.timeline{border:1px solid #ddd;padding:6px;user-select:none}.tl-svg{overflow:hidden;cursor:grab}
svg.memory,svg.cmp,svg.kernels{max-width:100%;height:auto}
.tl-controls button{font-size:12px}.tl-window{color:#555;font-size:12px}
"""

# The timeline: reads its JSON, draws the visible window as SVG markup (innerHTML: the HTML parser puts
# it in the SVG namespace), merges spans narrower than a pixel, zooms with the wheel and buttons, pans by
# dragging. Items are [start_us, dur_us, name, category, tasks].
_JS = r"""
(function(){
"use strict";
var ENT={"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"};
function esc(s){return String(s).replace(/[&<>"]/g,function(c){return ENT[c];});}
function hue(s){var h=0;for(var i=0;i<s.length;i++){h=(h*31+s.charCodeAt(i))|0;}return Math.abs(h)%360;}
var CAT={copy:"#27ae60",event:"#95a5a6",collective:"#8e44ad",api:"#5dade2",dma:"#27ae60"};
function color(name,cat){return CAT[cat]||("hsl("+hue(name)+",55%,55%)");}
function ms(us){return (us/1000).toFixed(us<1000?4:3)+" ms";}
var MIN_W=600,MAX_W=1340;  /* the timeline fills its box: no wider than the window, never too narrow to read */
function Timeline(root){
  var d=JSON.parse(root.querySelector(".tl-data").textContent);
  var box=root.querySelector(".tl-svg"),label=root.querySelector(".tl-window");
  var W=Math.max(MIN_W,Math.min(MAX_W,box.clientWidth||MAX_W)),LEFT=Math.min(270,W/3),ROW=18,
      end=d.end>0?d.end:1,t0=0,t1=end;
  function draw(){
    var span=t1-t0,px=(W-LEFT-10)/span,out=[],y=20;
    out.push('<svg class="tl" width="'+W+'" height="'+(24+ROW*d.tracks.length)+'">');
    for(var k=0;k<=4;k++){var tx=LEFT+(W-LEFT-10)*k/4;
      out.push('<line x1="'+tx+'" x2="'+tx+'" y1="14" y2="'+(20+ROW*d.tracks.length)+'" stroke="#eee"/>');
      out.push('<text x="'+tx+'" y="11" text-anchor="'+(k===4?"end":"middle")+'">'+ms(t0+span*k/4)+'</text>');}
    d.tracks.forEach(function(tr){
      out.push('<text x="'+(LEFT-6)+'" y="'+(y+12)+'" text-anchor="end">'+esc(tr.name)+'</text>');
      var run=null;
      function flush(){if(!run)return;
        var w=Math.max(run.x1-run.x0,0.8),nm=d.names[run.name],cat=d.cats[run.cat];
        var tip=run.n>1?(run.n+" tasks, e.g. "+nm):(nm+" ("+cat+")");
        out.push('<rect x="'+run.x0.toFixed(1)+'" y="'+(y+2)+'" width="'+w.toFixed(1)+'" height="'+(ROW-4)+
          '" fill="'+color(nm,cat)+'"'+(run.n>1?' opacity="0.6"':'')+'><title>'+esc(tip)+' · '+
          ms(run.t)+' + '+ms(run.dur)+'</title></rect>');
        if(run.n===1&&w>40){out.push('<text x="'+(run.x0+3).toFixed(1)+'" y="'+(y+12)+'" class="lbl">'+
          esc(nm.length>w/6?nm.slice(0,Math.floor(w/6))+"…":nm)+'</text>');}
        run=null;}
      tr.items.forEach(function(s){
        if(s[0]+s[1]<t0||s[0]>t1)return;
        var x0=LEFT+(Math.max(s[0],t0)-t0)*px,x1=LEFT+(Math.min(s[0]+s[1],t1)-t0)*px;
        if(run&&x1-x0<1&&run.x1-run.x0<1&&x0-run.x1<1){
          run.x1=Math.max(run.x1,x1);run.n+=s[4];run.dur=s[0]+s[1]-run.t;return;}
        flush();run={x0:x0,x1:x1,name:s[2],cat:s[3],n:s[4],t:s[0],dur:s[1]};});
      flush();y+=ROW;});
    out.push('</svg>');box.innerHTML=out.join("");
    label.textContent=ms(t0)+" – "+ms(t1);}
  function zoom(f,at){var span=t1-t0,c=at===undefined?t0+span/2:at,ns=Math.min(end,Math.max(span*f,end*1e-6));
    t0=Math.max(0,c-(c-t0)*ns/span);t1=Math.min(end,t0+ns);t0=Math.max(0,t1-ns);draw();}
  root.querySelectorAll("button").forEach(function(b){b.addEventListener("click",function(){
    var z=b.getAttribute("data-zoom");if(z==="reset"){t0=0;t1=end;draw();}else zoom(z==="in"?0.5:2);});});
  box.addEventListener("wheel",function(e){e.preventDefault();var r=box.getBoundingClientRect();
    var at=t0+(t1-t0)*Math.max(0,e.clientX-r.left-LEFT)/(W-LEFT-10);zoom(e.deltaY<0?0.8:1.25,at);},{passive:false});
  var drag=null;
  box.addEventListener("mousedown",function(e){drag={x:e.clientX,t0:t0,t1:t1};});
  window.addEventListener("mouseup",function(){drag=null;});
  window.addEventListener("mousemove",function(e){if(!drag)return;
    var dt=(drag.x-e.clientX)*(drag.t1-drag.t0)/(W-LEFT-10),s=drag.t1-drag.t0;
    t0=Math.min(Math.max(0,drag.t0+dt),end-s);t1=t0+s;draw();});
  draw();}
document.querySelectorAll(".timeline").forEach(Timeline);
})();
"""
