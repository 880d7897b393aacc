"""The HTML report (issue 12, "See it"): ``ascendemu report`` of LeNet recorded at O0 and O2.

Oracles: the recorded run's live node (its pool statistics, read from the runtime after the run), the
roofline cost model over the trace's own launches (``kernel_time``: what each kernel task lasts on an
idle single-stream device), LeNet's shapes (fc1's weight is 120 x 400 float32), and the page as headless
Chromium leaves it after its scripts ran (``--dump-dom``), with Chromium's console log for errors.
"""
from __future__ import annotations

import html
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.cli.main import main as cli_main
from ascendemu.cli.run import main as run_main
from ascendemu.device.cost import KernelCost, kernel_time
from ascendemu.device.spec import get_spec
from ascendemu.errors import InvalidFileError
from ascendemu.hal.runtime import get_runtime
from ascendemu.replay.report import TRACK_SPANS, _merge, write_report
from ascendemu.traces import aetrace as fmt
from ascendemu.units import format_bytes

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if p and Path(p).exists()), None)


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    """LeNet recorded at O0 and O2 (DryRun, batch 1, two steps): {level: (trace, live pool stats)},
    and the report of both written by the CLI."""
    import os
    work = tmp_path_factory.mktemp("report")
    old_cache, old_cwd = os.environ.get("MS_COMPILER_CACHE_PATH"), os.getcwd()
    os.environ["MS_COMPILER_CACHE_PATH"] = str(work)
    os.chdir(work)
    rt = get_runtime()
    traces = {}
    try:
        for level in ("O0", "O2"):
            if rt.node is not None:
                rt.finalize()
            path = work / f"lenet_{level}.aetrace"
            run_main(["--quiet", "--dry-run", "--jit-level", level, "--record", str(path),
                      str(EXAMPLES / "lenet.py"), "--steps", "2", "--batch", "1"])
            traces[level] = (path, rt.mem_stats(0))
            rt.finalize()
    finally:
        os.chdir(old_cwd)
        if old_cache is None:
            os.environ.pop("MS_COMPILER_CACHE_PATH", None)
        else:
            os.environ["MS_COMPILER_CACHE_PATH"] = old_cache
    out = work / "report.html"
    assert cli_main(["report", str(traces["O0"][0]), str(traces["O2"][0]), "-o", str(out)]) == 0
    return traces, out


def sections(page: str) -> list[str]:
    """The page's per-run sections, in order."""
    return re.findall(r'<section class="run" id="run-\d+">.*?</section>', page, re.S)


def test_the_page_is_self_contained(lenet):
    _, out = lenet
    page = out.read_text()
    assert not re.search(r"https?://", page, re.I)                     # no network reference at all
    assert not re.search(r"<(link|img|iframe)\b|\bsrc\s*=|@import|url\(", page, re.I)


def test_peaks_and_what_was_live_at_them(lenet):
    traces, out = lenet
    page = out.read_text()
    o0, o2 = sections(page)
    for level, sec in (("O0", o0), ("O2", o2)):
        live = traces[level][1]                                        # the recorded run's own pool
        peak = int(re.search(r'data-peak="(\d+)"', sec).group(1))
        actual = int(re.search(r'data-actual-peak="(\d+)"', sec).group(1))
        assert (peak, actual) == (live.peak_used, live.actual_peak), level
        assert f"peak {format_bytes(peak)} at " in sec                 # marked on the chart
        # the allocations live at the peak: what they asked for, plus at most the pool's padding each
        count = int(re.search(r"The largest of the (\d+) allocation", sec).group(1))
        rows = re.findall(r'<tr><td>\d+</td><td data-bytes="(\d+)">.*?</td><td>(.*?)</td><td>(.*?)</td>', sec)
        sizes = [int(s) for s, _, _ in rows]
        assert sizes == sorted(sizes, reverse=True) and len(rows) == min(count, 8)
        asked = int(re.search(r'data-asked="(\d+)"', sec).group(1))
        assert 0 <= peak - asked < count * (32 + 32 + 512)      # DeviceMemory's 32 B pad and guard, 512 B align
        # fc1's weight, 120 x 400 float32, is the largest tensor of LeNet: uploaded before the first step
        assert rows[0] == (str(120 * 400 * 4), html.escape("before the first step (set-up: weights, inputs, plans)"),
                           "host-to-device copy")
    # O0: a workspace allocated inside the step is live at the peak: conv1's im2col matrix, 28x28 output
    # positions by a 1x5x5 window, float32 (the Conv2D kernel's sgemm operand)
    assert (str(28 * 28 * 5 * 5 * 4), "LeNet5 [O0]", "Conv2D workspace (conv2d)") in \
        re.findall(r'<td data-bytes="(\d+)">.*?</td><td>(.*?)</td><td>(.*?)</td>', o0)
    # O2: the static memory plan is one allocation that conv1 writes first and every kernel shares
    assert re.search(r"Conv2D output 0 1x6x28x28 float32 \(conv2d\)</td><td>\d+ launch\(es\) of 4 kernel", o2)


def test_time_per_kernel_type_is_the_cost_model_of_the_trace_s_launches(lenet):
    traces, out = lenet
    spec = get_spec("Ascend910A")
    for (level, (path, _)), sec in zip(traces.items(), sections(out.read_text())):
        kernels, want = {}, defaultdict(float)
        for r in fmt.read_trace(path):
            if isinstance(r, fmt.Kernel):
                kernels[r.id] = r
            launched = []
            if isinstance(r, fmt.LaunchKernel):
                launched = [(r.func.id, r.block_dim)]
            elif isinstance(r, fmt.LaunchGraph):
                launched = [(s[1].id, s[4]) for s in r.steps if s[0] == "Launch"]
            for kid, bd in launched:
                k = kernels[kid]
                want[k.name] += kernel_time(spec, KernelCost.from_list(k.cost), bd or k.block_dim)
        chart = sec.split("Time per kernel type", 1)[1]
        got = {html.unescape(label).split(" (")[0]: float(v)
               for label, v in re.findall(r'class="bar" data-label="([^"]+)" data-value="([^"]+)"', chart)}
        assert got.keys() == want.keys(), level
        for name in want:
            assert got[name] == pytest.approx(want[name], rel=1e-9), (level, name)
        values = list(got.values())
        assert values == sorted(values, reverse=True)                 # sorted, largest first
        assert "conv2d (Conv2D)" in chart and "mat_mul (MatMul)" in chart


def test_summary_puts_both_runs_side_by_side(lenet):
    traces, out = lenet
    page = out.read_text()
    summary = page.split('id="summary"', 1)[1].split("</table>", 1)[0]
    heads = re.findall(r"<th>(lenet[^<]*)</th>", summary)
    assert heads == ["lenet · O0 · Ascend910A · DryRun", "lenet · O2 · Ascend910A · DryRun"]
    for level, col in (("O0", 0), ("O2", 1)):
        end = fmt.read_trace(traces[level][0])
        list(end)
        figures = end.end.figures
        row = re.search(r"<th>simulated step time of LeNet5</th>(.*?)</tr>", summary).group(1)
        cell = re.findall(r'<td data-value="([^"]+)">', row)[col]
        steps = figures["steps"][f"LeNet5 [{level}]"]
        assert float(cell) == (steps[2] - steps[1]) / (steps[0] - 1)    # the steady step, as recorded
        kernels = re.search(r"<th>device 0 kernels run</th>(.*?)</tr>", summary).group(1)
        assert float(re.findall(r'data-value="([^"]+)"', kernels)[col]) == figures["devices"]["0"]["kernels_run"]
    assert re.search(r"<th>graph launches</th><td>0</td><td>2</td>", summary)      # O2 sinks each step


def test_timeline_merges_spans_beyond_its_budget_and_keeps_every_task():
    items = [[i * 10.0, 4.0, i % 3, 0, 1] for i in range(3 * TRACK_SPANS + 7)]
    merged = _merge(items)
    assert len(merged) <= TRACK_SPANS and sum(m[4] for m in merged) == len(items)
    assert merged[0][0] == 0.0 and merged[-1][0] + merged[-1][1] == items[-1][0] + 4.0
    assert all(a[0] + a[1] <= b[0] for a, b in zip(merged, merged[1:]))      # bins do not overlap


def test_bad_input_is_a_typed_error(tmp_path):
    with pytest.raises(InvalidFileError, match="no such trace file"):
        write_report([str(tmp_path / "missing.aetrace")], tmp_path / "r.html")
    assert cli_main(["report", str(tmp_path / "missing.aetrace"), "-o", str(tmp_path / "r.html")]) == 2


def chromium(page: Path, profile: Path) -> tuple[str, str]:
    """The DOM of ``page`` after its scripts ran, and Chromium's log (console messages included)."""
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--dump-dom",
                           page.as_uri()], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    return done.stdout, done.stderr


def console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line]


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium found (Debian: apt-get install chromium; .ci/run does "
                                             "it as root): the page cannot be rendered headless")
def test_the_page_renders_in_headless_chromium_without_console_errors(lenet, tmp_path):
    _, out = lenet
    # the detector sees a script error (so its silence below means something)
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><p>x</p><script>notDefined()</script>")
    assert any("Uncaught ReferenceError" in line for line in console_errors(chromium(bad, tmp_path / "p1")[1]))

    dom, log = chromium(out, tmp_path / "p2")
    assert console_errors(log) == []
    assert "<h1>ascendemu report</h1>" in dom and "Time per kernel type" in dom
    assert "lenet · O0 · Ascend910A · DryRun" in dom and "lenet · O2 · Ascend910A · DryRun" in dom
    raw = out.read_text()
    assert re.search(r'<div class="tl-svg"></div>', raw)                 # the timelines are drawn by the script
    for i, level in enumerate(("O0", "O2")):
        tl = dom.split(f'id="timeline-{i}"', 1)[1].split('class="tl-data"', 1)[0]
        tracks = re.findall(r'text-anchor="end">([^<]+)</text>', tl)
        assert "device 0 stream 3" in tracks and "device 0 AI core 0" in tracks, (level, tracks)
        titles = re.findall(r"<rect [^>]*><title>([^<]+)</title>", tl)
        # a graph's kernel spans are named by MindSpore's full op name, then their kernel_meta entry
        assert any(re.match(r"Default/\S*Conv2D\S* · conv2d\S* \(kernel\)", t) for t in titles), titles
        assert any(re.match(r"Default/\S*MatMul\S* · mat_mul\S* \(kernel\)", t) for t in titles), titles
        assert re.search(r'class="tl-window">0\.0000 ms – 0\.\d+ ms<', tl)
    peaks = re.findall(r'class="peaklabel">peak ([^<]+) at', dom)
    assert len(peaks) == 2
