"""A MindSpore user's first ten minutes on the emulator, against what real MindSpore 2.10 printed and wrote
(tests/fixtures/first_contact.json, recorded with pip's mindspore 2.10.0 on CPU: run_check's lines, print()
of cells and Parameters, a BatchNorm net's parameter order and checkpoint sha256, the profiler's full op
names), and the command line's answers to the usual first mistakes."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ascendemu  # noqa: E402
import ascendemu.frontend as ms  # noqa: E402
from ascendemu.cli.main import main as cli_main  # noqa: E402
from ascendemu.cli.run import parse_tolerance, pytest_file_note  # noqa: E402
from ascendemu.frontend import Parameter, Tensor, nn  # noqa: E402
from ascendemu.frontend.unsupported import UnsupportedOpError  # noqa: E402
from test_run_cli import TIMEOUT_S, run_cli  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REAL = json.loads((ROOT / "tests" / "fixtures" / "first_contact.json").read_text())
ADDR = re.compile(r" object at 0x[0-9a-f]+>")


def printed(value: object) -> str:
    return ADDR.sub(" object at ADDR>", str(value))


# ---------------------------------------------------------------------------------------- mindspore.*

def test_version_is_mindsporess_with_the_emulator_as_local_label():
    v = Version(ms.__version__)
    assert v.release == Version(REAL["version"]).release and v.local == f"ascendemu.{ascendemu.__version__}"


def test_run_check_prints_mindsporess_lines_naming_the_emulated_device(ex):
    out = io.StringIO()
    with redirect_stdout(out):
        ms.run_check()
    lines = out.getvalue().splitlines()
    real = [line.replace(REAL["version"], ms.__version__) for line in REAL["run_check"]]
    assert lines[0] == real[0]
    head, tail = real[1].split("[CPU]")
    assert lines[1] == f"{head}[Ascend] (emulated Ascend910A, ascendemu {ascendemu.__version__}){tail}"


def test_profiler_and_onnx_module_paths_are_mindsporess():
    from ascendemu.frontend import onnx, profiler
    assert ms.Profiler is profiler.Profiler
    assert onnx.onnx_export.write_onnx is onnx.write_onnx
    with pytest.raises(Exception, match="output_names not supported"):
        onnx.export(nn.Dense(3, 2), Tensor(np.ones((1, 3), np.float32)), file_name="x", output_names=["y"])


def test_schedule_follows_mindsporess_arithmetic():
    from ascendemu.frontend.profiler import ProfilerAction as A
    from ascendemu.frontend.profiler import schedule
    s = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    assert [s(i) for i in range(7)] == [A.NONE, A.NONE, A.WARM_UP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.NONE]


# ------------------------------------------------------------------------------------------ printing

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(3, 4)
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm1d(4)
        self.seq = nn.SequentialCell(nn.Dense(4, 2), nn.Flatten())

    def construct(self, x):
        return self.seq(self.bn(self.relu(self.fc1(x))))


CELLS = {
    "Dense(3, 4)": lambda: nn.Dense(3, 4),
    "Dense(3, 4, has_bias=False, activation='relu')": lambda: nn.Dense(3, 4, has_bias=False, activation="relu"),
    "Conv2d(1, 6, 5)": lambda: nn.Conv2d(1, 6, 5),
    "Conv2d(3, 8, 3, stride=2, pad_mode='pad', padding=1, has_bias=True)":
        lambda: nn.Conv2d(3, 8, 3, stride=2, pad_mode="pad", padding=1, has_bias=True),
    "ReLU()": nn.ReLU, "Flatten()": nn.Flatten,
    "SequentialCell([Dense(3, 4), ReLU()])": lambda: nn.SequentialCell([nn.Dense(3, 4), nn.ReLU()]),
    "MaxPool2d(2, 2)": lambda: nn.MaxPool2d(2, 2), "AvgPool2d(2, 2)": lambda: nn.AvgPool2d(2, 2),
    "Dropout(p=0.5)": lambda: nn.Dropout(p=0.5), "LayerNorm((4,))": lambda: nn.LayerNorm((4,)), "Net": Net,
}


@pytest.mark.parametrize("what", sorted(CELLS))
def test_print_cell_is_what_mindspore_prints(what):
    assert printed(CELLS[what]()) == REAL["print_cell"][what]


def test_print_parameter_is_its_one_line_description():
    assert str(Parameter(Tensor(np.ones((2, 3), np.float32)), name="w")) == REAL["print_parameter"]


def test_batchnorm_parameters_and_checkpoint_match_mindspore_byte_for_byte(tmp_path):
    class CkNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3, has_bias=True)
            self.bn = nn.BatchNorm2d(2)
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(8, 3)

        def construct(self, x):
            return self.fc(self.flatten(self.bn(self.conv(x))))

    assert [n for n, _ in Net().parameters_and_names()] == REAL["net_parameters_and_names"]
    net = CkNet()
    for i, (_, p) in enumerate(net.parameters_and_names()):     # the values real MindSpore's net was given
        p.set_data(Tensor((np.arange(np.prod(p.shape)) * 0.25 + i).reshape(p.shape).astype(np.float32)))
    ms.save_checkpoint(net, str(tmp_path / "ck.ckpt"))
    data = (tmp_path / "ck.ckpt").read_bytes()
    assert [n for n, _ in net.parameters_and_names()] == REAL["checkpoint"]["parameters_and_names"]
    assert (len(data), hashlib.sha256(data).hexdigest()) == (REAL["checkpoint"]["size"], REAL["checkpoint"]["sha256"])


# -------------------------------------------------------------------------------- kernel full names

PROFILED = '''
import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(3, 4); self.relu = nn.ReLU(); self.fc2 = nn.Dense(4, 2)
    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))
net = Net()
with ms.profiler.profile(on_trace_ready=ms.profiler.tensorboard_trace_handler("./prof")) as prof:
    net(Tensor(np.ones((2, 3), np.float32)))
print("OUT", prof.saved[0])
'''


def test_profiler_trace_and_csv_name_kernels_by_mindsporess_full_op_names(tmp_path, ascendemu_kernel_cache):
    (tmp_path / "p.py").write_text(PROFILED)
    proc = run_cli(tmp_path, "--jit-level", "O0", "--trace", "t.json", "p.py",
                   MS_COMPILER_CACHE_PATH=str(ascendemu_kernel_cache))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / re.search(r"OUT (.*)", proc.stdout).group(1)
    with open(out / "kernel_details.csv") as f:
        rows = list(csv.DictReader(f))
    counter = re.compile(r"-op\d+$")           # MindSpore numbers ops its own way; scope and type must agree
    want = sorted(counter.sub("-opN", n) for n in REAL["profiler_full_op_names"]["names"])
    assert sorted(counter.sub("-opN", r["Name"]) for r in rows) == want
    assert all(r["Kernel Meta Name"].startswith(("mat_mul_", "bias_add_", "re_lu_", "relu_")) for r in rows), rows
    spans = [e for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"] if e.get("cat") == "kernel"]
    assert sorted(counter.sub("-opN", e["name"]) for e in spans) == want
    assert {e["args"]["kernel"] for e in spans} == {r["Kernel Meta Name"] for r in rows}


# ------------------------------------------------------------------------------------ command line

def test_tolerance_takes_percent_or_fraction_and_refuses_ambiguous_numbers():
    import argparse
    assert parse_tolerance("5%") == pytest.approx(0.05) and parse_tolerance("0.05") == 0.05
    assert parse_tolerance("1") == 1.0
    with pytest.raises(argparse.ArgumentTypeError, match=r"ambiguous.*5%.*0\.05"):
        parse_tolerance("5")


def test_check_against_a_baseline_of_another_preset_warns_naming_both(tmp_path, ascendemu_kernel_cache):
    (tmp_path / "s.py").write_text("import numpy as np\nimport mindspore as ms\n"
                                   "ms.ops.add(ms.Tensor(np.ones(4, np.float32)), 1.0).asnumpy()\n")
    cache = {"MS_COMPILER_CACHE_PATH": str(ascendemu_kernel_cache)}
    saved = run_cli(tmp_path, "--quiet", "--device", "Ascend910B1", "--save-baseline", "b.json", "s.py", **cache)
    assert saved.returncode == 0, saved.stderr[-2000:]
    proc = run_cli(tmp_path, "--quiet", "--check", "b.json", "s.py", **cache)
    assert re.search(r"warning: baseline b\.json was recorded on Ascend910B1, this run emulates Ascend910A",
                     proc.stdout), proc.stdout


def test_dry_run_of_an_example_skips_the_numeric_check_and_says_so(tmp_path):
    proc = run_cli(tmp_path, "--dry-run", "--quiet", str(ROOT / "examples" / "mlp.py"), "--steps", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "MISMATCH" not in proc.stdout and "DryRun (MS_SIMULATION_LEVEL set): nothing is computed" in proc.stdout


def test_a_pytest_file_run_as_a_script_is_named_with_how_to_run_it():
    square = str(ROOT / "examples" / "square.py")
    note = pytest_file_note(square)
    assert note is not None and "is a pytest file: it defines test_net" in note and f"pytest" in note
    assert pytest_file_note(str(ROOT / "examples" / "mlp.py")) is None       # a script with a __main__ block


def test_unsupported_name_points_to_api_coverage_instead_of_listing_everything(capsys):
    with pytest.raises(UnsupportedOpError) as info:
        nn.Denze
    message = str(info.value)
    assert "nn.Denze is not supported" in message and "similar supported names: Dense" in message
    assert "`ascendemu api-coverage`" in message and len(message) < 300
    assert cli_main(["api-coverage", "nn-cells"]) == 0
    listed = capsys.readouterr().out
    missing = listed.split("missing from nn-cells (", 1)[1]
    from ascendemu.frontend.api_coverage import coverage
    cells = next(g for g in coverage() if g.group == "nn-cells")
    assert f"/ {cells.total - len(cells.excluded):4d}" in listed and cells.missing[0] in missing
    assert "mindspore.nn.Dense," not in missing and "mindspore.nn.Dense " not in missing


@pytest.mark.parametrize("verb", [["info", "--json"], ["api-coverage"]])
def test_output_into_a_closed_pipe_ends_quietly(verb):
    """``ascendemu info --json | head``: the reader is gone before the command writes (the only read end is
    closed at once), so every write meets EPIPE."""
    writer = subprocess.Popen([sys.executable, "-m", "ascendemu", *verb], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    writer.stdout.close()
    err = writer.stderr.read()
    assert writer.wait(timeout=TIMEOUT_S) == 141, err          # 128 + SIGPIPE, as a shell reports it
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err


# ------------------------------------------------------------------------------- the report at 800 px

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if Path(p).exists()), None)
# appended to the page: after its own scripts drew the timelines, write what overflows the 800 px window
MEASURE = """<script>
var W=document.documentElement.clientWidth,bad=[];
document.querySelectorAll("svg,svg text,svg rect").forEach(function(e){var r=e.getBoundingClientRect();
  var box=e.closest(".tl-svg");var right=box?box.getBoundingClientRect().right:W;
  if(r.width>0&&(r.right>right+0.5||r.left<-0.5))bad.push(e.tagName+" "+(e.textContent||"").slice(0,40)+" "+
    r.left.toFixed(0)+".."+r.right.toFixed(0)+" > "+right.toFixed(0));});
var pre=document.createElement("pre");pre.id="measure";
pre.textContent=JSON.stringify({width:W,scroll:document.documentElement.scrollWidth,bad:bad});
document.body.appendChild(pre);
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium (Debian: apt-get install chromium)")
def test_report_fits_an_800_px_window_with_no_label_or_bar_cut(tmp_path):
    from ascendemu.replay.report import write_report
    traces = []
    for level in ("O0", "O2"):
        proc = run_cli(tmp_path, "--quiet", "--dry-run", "--jit-level", level, "--record", f"{level}.aetrace",
                       str(ROOT / "examples" / "mlp.py"), "--steps", "1", "--batch", "2")
        assert proc.returncode == 0, proc.stderr[-2000:]
        traces.append(str(tmp_path / f"{level}.aetrace"))
    page, _ = write_report(traces, tmp_path / "r.html")
    page.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=800,600",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    found = re.search(r'<pre id="measure">([^<]+)</pre>', done.stdout)
    assert found, done.stderr[-2000:]
    measured = json.loads(found.group(1).replace("&quot;", '"').replace("&gt;", ">").replace("&amp;", "&"))
    assert measured["width"] <= 800 and measured["scroll"] <= measured["width"], measured
    assert measured["bad"] == [], measured["bad"]
