"""`python -m ascendemu run` as a user runs it: a fresh process, cwd = a scratch directory, no
MS_COMPILER_CACHE_PATH (so the seed's default ./rank_0/kernel_meta applies), the seed scripts copied
unchanged from examples/ under the seed's file name test_square.py.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from limits import SUBPROCESS_TIMEOUT_S

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES.parent))          # examples.networks / examples.reference for the oracles
SEED_OUTPUT = "output:  [ 1. 16. 81.]"          # print("output: ", Tensor) of the seed
KERNEL_FILE = re.compile(r"square_\d+_0\.(info|json|o)")
TIMEOUT_S = SUBPROCESS_TIMEOUT_S


def run_cli(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``python -m ascendemu run <args>`` in ``cwd``, with the cache location variables unset
    (and no pytest variables leaking into a nested pytest)."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("MS_COMPILER_CACHE_PATH", "RANK_ID") and not k.startswith("PYTEST_")}
    return subprocess.run([sys.executable, "-m", "ascendemu", "run", *args], cwd=cwd, env={**clean, **env},
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def seed_script(directory: Path, example: str) -> Path:
    script = directory / "test_square.py"
    shutil.copyfile(EXAMPLES / example, script)
    return script


def kernel_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if KERNEL_FILE.fullmatch(p.name)) if directory.is_dir() else []


@pytest.fixture(scope="module")
def seed_runs(tmp_path_factory):
    """The 2.x seed script run twice in one fresh directory: (directory, first run, second run)."""
    cwd = tmp_path_factory.mktemp("seed2x")
    seed_script(cwd, "square_2x.py")
    first = run_cli(cwd, "test_square.py")
    second = run_cli(cwd, "test_square.py")
    return cwd, first, second


def test_seed_2x_prints_the_square_and_builds_kernel_meta(seed_runs):
    cwd, first, _ = seed_runs
    assert first.returncode == 0, first.stderr
    assert "x:  [1. 4. 9.]" in first.stdout and SEED_OUTPUT in first.stdout
    files = kernel_files(cwd / "rank_0" / "kernel_meta")
    assert [f.rsplit(".", 1)[1] for f in files] == ["info", "json", "o"]
    stem = files[0].rsplit(".", 1)[0]
    assert {f.rsplit(".", 1)[0] for f in files} == {stem}
    result = json.loads((cwd / "rank_0" / "kernel_meta" / f"{stem}.json").read_text())
    assert result["binFileName"] == stem and result["kernelName"] == f"{stem}__kernel0"
    assert "0 reused, 1 built" in first.stdout
    assert "0 hit(s), 1 graph(s) compiled" in first.stdout
    assert "Net [O2]" in first.stdout                    # the 910A's default jit level


def test_second_run_reuses_the_kernel_and_the_graph(seed_runs):
    cwd, first, second = seed_runs
    assert second.returncode == 0, second.stderr
    assert SEED_OUTPUT in second.stdout
    assert "1 reused, 0 built" in second.stdout
    assert "1 hit(s), 0 graph(s) compiled" in second.stdout
    assert len(kernel_files(cwd / "rank_0" / "kernel_meta")) == 3


def test_seed_r15_script_is_a_test_case_that_runs_unchanged(tmp_path):
    """The r1.5 script only defines test_net (the seed "executes the test case"): run alone it
    computes nothing; run by pytest inside `ascendemu run` it prints the square and builds the kernel."""
    seed_script(tmp_path, "square.py")
    alone = run_cli(tmp_path, "test_square.py")
    assert alone.returncode == 0, alone.stderr
    assert "output:" not in alone.stdout and kernel_files(tmp_path / "rank_0" / "kernel_meta") == []
    as_test = run_cli(tmp_path, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_square.py")
    assert as_test.returncode == 0, as_test.stdout + as_test.stderr
    assert SEED_OUTPUT in as_test.stdout and "1 passed" in as_test.stdout
    assert len(kernel_files(tmp_path / "rank_0" / "kernel_meta")) == 3


def test_rank_id_selects_the_rank_directory(tmp_path):
    seed_script(tmp_path, "square_2x.py")
    proc = run_cli(tmp_path, "test_square.py", RANK_ID="3")
    assert proc.returncode == 0, proc.stderr
    assert len(kernel_files(tmp_path / "rank_3" / "kernel_meta")) == 3
    assert not (tmp_path / "rank_0").exists()


def test_trace_writes_chrome_json_with_a_kernel_span(seed_runs, tmp_path):
    cwd, _, _ = seed_runs
    trace = tmp_path / "t.json"
    proc = run_cli(cwd, "--trace", str(trace), "test_square.py")
    assert proc.returncode == 0, proc.stderr
    events = json.loads(trace.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    # named as MindSpore names the op (its full name), the kernel_meta entry beside it
    assert kernels and all(re.fullmatch(r"Default/Square-op\d+", k["name"]) and k["args"]["kernel"].startswith("square_")
                           and k["dur"] > 0 for k in kernels)


def test_jit_level_flag_overrides_the_script(seed_runs):
    cwd, _, _ = seed_runs
    proc = run_cli(cwd, "--jit-level", "O0", "test_square.py")
    assert proc.returncode == 0, proc.stderr
    assert SEED_OUTPUT in proc.stdout
    assert "Net [O0]" in proc.stdout and "[O2]" not in proc.stdout
    assert "1 reused, 0 built" in proc.stdout              # the same Square kernel at every level


@pytest.mark.parametrize("source, code, message", [
    pytest.param("from mindspore.boost import GradientFreeze\n", 1,
                 "No module named 'mindspore.boost' in ascendemu's MindSpore-compatible subset",
                 id="submodule"),
    pytest.param("import mindspore.ops as ops\nops.DeformableOffsets()\n", 2,
                 "ops.DeformableOffsets is not supported by the emulated Ascend front end", id="op"),
])
def test_unsupported_mindspore_api_fails_with_a_clear_message(tmp_path, source, code, message):
    (tmp_path / "script.py").write_text(source)
    proc = run_cli(tmp_path, "script.py")
    assert proc.returncode == code
    assert message in proc.stderr


def test_script_exit_status_passes_through_after_the_summary_and_trace(seed_runs, tmp_path):
    cwd, _, _ = seed_runs
    (cwd / "exits.py").write_text("import sys\nimport mindspore as ms\n"
                                  "print(ms.ops.Square()(ms.Tensor([2.0])))\nsys.exit(3)\n")
    trace = tmp_path / "exit.json"
    proc = run_cli(cwd, "--trace", str(trace), "exits.py")
    assert proc.returncode == 3
    assert "[4.]" in proc.stdout and "[ascendemu] kernel cache" in proc.stdout
    assert json.loads(trace.read_text())["traceEvents"]


def test_device_error_in_the_script_shows_its_traceback_then_the_summary(tmp_path):
    (tmp_path / "bad.py").write_text('import mindspore as ms\nms.set_context(jit_config={"jit_level": "O7"})\n')
    proc = run_cli(tmp_path, "bad.py")
    assert proc.returncode == 2
    assert 'bad.py", line 2' in proc.stderr and "[100000] jit_level must be one of" in proc.stderr
    assert "[ascendemu] kernel cache" in proc.stdout


def run_merged(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """Like run_cli, with stderr merged into stdout, so the order of the two is what a terminal shows."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("MS_COMPILER_CACHE_PATH", "RANK_ID") and not k.startswith("PYTEST_")}
    return subprocess.run([sys.executable, "-m", "ascendemu", "run", *args], cwd=cwd, env=clean,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S)


def traceback_of(output: str) -> list[str]:
    lines = output.splitlines()
    return lines[lines.index("Traceback (most recent call last):"):]


@pytest.mark.parametrize("source, status, last", [
    pytest.param("import mindspore as ms\nprint('before')\nms.nn.Dense.no_such_attribute\n", 1,
                 "AttributeError: type object 'Dense' has no attribute 'no_such_attribute'", id="AttributeError"),
    pytest.param("import mindspore as ms\nprint('before')\nimport no_such_module_xyz\n", 1,
                 "ModuleNotFoundError: No module named 'no_such_module_xyz'", id="ImportError"),
    pytest.param("import mindspore as ms\nprint('before')\nms.set_context(jit_config={'jit_level': 'O7'})\n", 2,
                 "ascendemu.errors.InvalidParamError: [100000] jit_level must be one of ('O0', 'O1', 'O2'), "
                 "got 'O7'", id="AclError"),
])
def test_failing_script_prints_the_summary_then_its_own_traceback(tmp_path, source, status, last):
    """Any error of the script: the run summary, then a traceback that starts and ends in the script
    (no runpy or ascendemu frames), then the script's status (1 like python, 2 for an AclError)."""
    (tmp_path / "fails.py").write_text(source)
    proc = run_merged(tmp_path, "fails.py")
    assert proc.returncode == status
    lines = proc.stdout.splitlines()
    assert lines[0] == "before" and lines[1] == "[ascendemu] run of fails.py: " + lines[1].split(": ", 1)[1]
    assert any(line.startswith("[ascendemu] kernel cache ") for line in lines[1:lines.index(
        "Traceback (most recent call last):")])
    tb = traceback_of(proc.stdout)
    assert tb[1] == '  File "fails.py", line 3, in <module>'
    assert [line for line in tb if line.startswith("  File ")] == [tb[1]]
    assert tb[-1] == last
    assert "runpy" not in proc.stdout and "cli/run.py" not in proc.stdout


def test_device_error_deep_in_the_script_drops_ascendemu_frames(tmp_path):
    (tmp_path / "deep.py").write_text("import mindspore as ms\n\n\ndef build():\n    return ms.ops.DeformableOffsets()\n"
                                      "\n\nbuild()\n")
    proc = run_merged(tmp_path, "--quiet", "deep.py")
    assert proc.returncode == 2
    files = [line for line in traceback_of(proc.stdout) if line.startswith("  File ")]
    assert files == ['  File "deep.py", line 8, in <module>', '  File "deep.py", line 5, in build']
    assert traceback_of(proc.stdout)[-1].startswith(
        "ascendemu.frontend.unsupported.UnsupportedOpError: [207000] ops.DeformableOffsets is not supported")


def test_module_error_traceback_starts_in_the_module(tmp_path):
    (tmp_path / "failing_mod.py").write_text("import sys\n\nraise RuntimeError('from ' + sys.argv[1])\n")
    proc = run_merged(tmp_path, "--quiet", "-m", "failing_mod", "arg1")
    assert proc.returncode == 1
    tb = traceback_of(proc.stdout)
    assert tb == ["Traceback (most recent call last):",
                  f'  File "{tmp_path / "failing_mod.py"}", line 3, in <module>',
                  "    raise RuntimeError('from ' + sys.argv[1])",
                  "RuntimeError: from arg1"]


def test_syntax_error_is_reported_like_python_with_status_1(tmp_path):
    (tmp_path / "syntax.py").write_text("x = (\n")
    proc = run_merged(tmp_path, "--quiet", "syntax.py")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == '  File "syntax.py", line 1'
    assert proc.stdout.splitlines()[-1] == "SyntaxError: '(' was never closed"


def test_run_without_a_script_is_a_usage_error(tmp_path):
    proc = run_cli(tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "usage: ascendemu run [options] script.py [args] | ascendemu run [options] -m module [args]",
        "ascendemu run: error: give the script to run (ascendemu run script.py [args]) or a module "
        "(ascendemu run -m module [args])"]
    missing = run_cli(tmp_path, "--quiet", "missing.py")
    assert missing.returncode == 2
    assert missing.stderr.splitlines()[-1] == "ascendemu run: error: can't open file 'missing.py': no such file"
    assert not (tmp_path / "rank_0").exists()


def test_version_flag_prints_the_package_metadata_version():
    from importlib.metadata import version

    proc = subprocess.run([sys.executable, "-m", "ascendemu", "--version"], capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == f"ascendemu {version('ascendemu')}\n"


def test_warm_run_imports_no_numba(seed_runs):
    cwd, _, _ = seed_runs
    (cwd / "probe.py").write_text("import sys\nimport mindspore as ms\nprint(ms.ops.Square()(ms.Tensor([3.0])))\n"
                                  "print('numba imported:', 'numba' in sys.modules)\n")
    first = run_cli(cwd, "probe.py")         # builds the (1,)-element Square kernel unless a test did
    assert first.returncode == 0, first.stderr
    proc = run_cli(cwd, "probe.py")          # warm: every kernel reused
    assert proc.returncode == 0, proc.stderr
    assert "[9.]" in proc.stdout and "numba imported: False" in proc.stdout


def demo(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("MS_COMPILER_CACHE_PATH", "RANK_ID")}
    return subprocess.run([sys.executable, "-m", "ascendemu", "demo", *args], cwd=cwd, env=clean,
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def test_demo_leaves_no_cache_behind_unless_asked(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    proc = demo(scratch)
    assert proc.returncode == 0, proc.stderr
    assert "matches numpy" in proc.stdout and "0 reused, 2 built" in proc.stdout
    assert "(a temporary cache, removed after the demo; --cache DIR keeps it)" in proc.stdout
    assert "device memory: used 12.00 MiB, peak 12.00 MiB" in proc.stdout     # 3 x 2**20 float32
    assert sorted(os.listdir(scratch)) == []
    temp = re.search(r"kernel cache (\S+)/rank_0/kernel_meta", proc.stdout).group(1)
    assert not Path(temp).exists()

    kept = tmp_path / "kept"
    first, second = demo(scratch, "--cache", str(kept)), demo(scratch, "--cache", str(kept))
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "0 reused, 2 built" in first.stdout and "2 reused, 0 built" in second.stdout
    assert len(list((kept / "rank_0" / "kernel_meta").glob("*.o"))) == 2
    assert sorted(os.listdir(scratch)) == []


def test_device_preset_reaches_the_kernel_identity(seed_runs, tmp_path):
    """A 910B run writes its own SoC into .info and never reuses the 910A kernel (nor the reverse)."""
    cwd, first, _ = seed_runs
    for f in (cwd / "rank_0").iterdir():
        shutil.copytree(f, tmp_path / "rank_0" / f.name)
    seed_script(tmp_path, "square_2x.py")
    b1 = run_cli(tmp_path, "--device", "Ascend910B1", "test_square.py")
    assert b1.returncode == 0, b1.stderr
    assert SEED_OUTPUT in b1.stdout and "0 reused, 1 built" in b1.stdout
    infos = {json.loads(p.read_text())["job_content"]["SocInfo"]["socVersion"]: p.stem
             for p in (tmp_path / "rank_0" / "kernel_meta").glob("square_*.info")}
    assert set(infos) == {"Ascend910A", "Ascend910B1"} and len(set(infos.values())) == 2
    again = run_cli(tmp_path, "test_square.py")          # the default 910A finds its own kernel
    assert "1 reused, 0 built" in again.stdout, again.stdout


BIGGER_THAN_HOST = '''
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor

class Big(nn.Cell):
    def construct(self, x):                       # two 10 GB activations and a 10 GB output
        return ops.broadcast_to(x, (50000, 50000)) + ops.broadcast_to(x * 2, (50000, 50000))

ms.set_context(mode=ms.GRAPH_MODE)
print("shape", Big()(Tensor(np.ones((1, 1), np.float32))).shape)
'''


def test_dry_run_of_a_graph_bigger_than_host_memory_needs_no_host_backing(tmp_path):
    """A 30 GB graph on the 32 GiB device: DryRun plans and prices it with no host pages (the
    devices have no backing and the output is never filled), whatever RAM the host has."""
    import resource
    (tmp_path / "big.py").write_text(BIGGER_THAN_HOST)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = run_cli(tmp_path, "--dry-run", "big.py")
    assert proc.returncode == 0, proc.stderr
    assert "shape (50000, 50000)" in proc.stdout
    # 3 x 50000^2 x 4 B = 30,000,000,000 B = 27.94 GiB, and MindSpore's DryRun lines in MiB
    assert "static memory plan 27.94 GiB" in proc.stdout
    assert "Used peak memory usage (without fragments): 28610.23M" in proc.stdout
    child_rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert child_rss_kib < 1 << 20 or child_rss_kib == before     # under 1 GiB of host memory


def test_script_exports_lenet_to_onnx_and_onnxruntime_runs_it(tmp_path):
    """examples/export_onnx.py under ``ascendemu run``: ``ms.export(net, Tensor(x), file_name="lenet",
    file_format="ONNX")`` writes ./lenet.onnx and onnxruntime runs it in the script; the file holds
    the script's network (numpy LeNet-5 of the same seeded weights agrees with it, also on the
    classes the script printed)."""
    import numpy as np
    import onnx
    import onnxruntime as ort

    import ascendemu.frontend as ms
    from examples.networks import LeNet5
    from examples.reference import lenet5

    proc = run_cli(tmp_path, str(EXAMPLES / "export_onnx.py"))
    assert proc.returncode == 0, proc.stderr
    assert "lenet.onnx: input x [2, 1, 32, 32] tensor(float), output" in proc.stdout
    path = tmp_path / "lenet.onnx"
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    ms.set_seed(1)
    params = {k: p.asnumpy() for k, p in LeNet5().parameters_dict().items()}
    x = np.random.default_rng(0).standard_normal((2, 1, 32, 32)).astype(np.float32)
    want = lenet5(params, x)
    assert f"onnxruntime classes: {want.argmax(axis=1).tolist()}" in proc.stdout
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
