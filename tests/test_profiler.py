"""mindspore.profiler.Profiler on the emulated device: the files MindSpore 2.x writes on Ascend, from the
runtime's own trace, checked against the same run's full Chrome trace (``ascendemu run --trace``, written
by the trace's own writer) and the run summary's kernel count."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from test_run_cli import run_cli

SCRIPT = '''
import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
from mindspore.profiler import Profiler

ms.set_context(mode=ms.GRAPH_MODE)
net = nn.SequentialCell(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Dense(4 * 8 * 8, 3))
x = Tensor(np.ones((2, 1, 8, 8), np.float32))
net(x)                                  # before the profiler: not profiled
profiler = Profiler(output_path="./prof")
for _ in range(3):
    net(x)
out = profiler.analyse()
print("OUT", out)
'''


def test_profiler_writes_mindsporess_ascend_files_from_the_device_trace(tmp_path: Path, ascendemu_kernel_cache: Path):
    (tmp_path / "prof_script.py").write_text(SCRIPT)
    proc = run_cli(tmp_path, "--trace", "full.json", "prof_script.py",
                   MS_COMPILER_CACHE_PATH=str(ascendemu_kernel_cache))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / re.search(r"OUT (.*)", proc.stdout).group(1)
    (run_dir,) = list((tmp_path / "prof").iterdir())
    assert re.fullmatch(r".+_\d+_\d{17}_ascend_ms", run_dir.name)
    assert out == run_dir / "ASCEND_PROFILER_OUTPUT"
    per_run = int(re.search(r"SequentialCell \[O2\]: 4 run\(s\), (\d+) kernel\(s\)/run", proc.stdout).group(1))

    with open(out / "kernel_details.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["Step ID", "Model Name", "Model ID", "Task ID", "Stream ID", "Name", "Type",
                             "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Num",
                             "Kernel Meta Name"]
    assert len(rows) == 3 * per_run                              # the three profiled runs, not the first
    full = json.loads((tmp_path / "full.json").read_text())["traceEvents"]
    kernels = sorted((e for e in full if e.get("cat") == "kernel"), key=lambda e: e["ts"])[-3 * per_run:]
    assert [r["Name"] for r in rows] == [e["name"] for e in kernels]
    for r, e in zip(rows, kernels):
        assert float(r["Start Time(us)"]) == round(e["ts"], 3) and float(r["Duration(us)"]) == round(e["dur"], 3)
        assert int(r["Block Num"]) == e["args"]["blockDim"] and r["Accelerator Core"] == "AI_CORE"
        assert float(r["Wait Time(us)"]) >= 0
    assert {"Conv2D", "MatMul"} <= {r["Type"] for r in rows}       # kernels named by the library's ops
    view = json.loads((out / "trace_view.json").read_text())
    assert {e["name"] for e in view if e.get("cat") == "kernel"} == {e["name"] for e in kernels}
    assert min(e["ts"] for e in view) >= kernels[0]["ts"] - 1e3    # nothing from before the profiler
