"""The graph executor as small parts, one concern each (docs/ARCHITECTURE.md, graph row): DryRun is a run mode
passed to them, not branches; the summary's device figures come from their one home, ``hal.figures``."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.graph.executor import DeviceExecutor
from ascendemu.graph.modes import Compute, DryRun, run_mode
from ascendemu.hal.runtime import get_runtime
from ascendemu.kernels.library import infer_outputs, plan_kernel
from ascendemu.kernels.signature import OpSignature
from ascendemu.units import format_bytes

GRAPH = Path(__file__).resolve().parents[1] / "graph"


def test_dry_run_is_a_mode_not_a_branch_of_the_executor():
    """No ``if ... dry_run`` in the graph layer but the one choice of the mode (``graph.modes.run_mode``):
    what DryRun changes lives in ``graph.modes.DryRun``."""
    branches = [f"{p.name}:{node.lineno}" for p in GRAPH.glob("*.py") if p.name != "modes.py" for node in ast.walk(ast.parse(p.read_text()))
                if isinstance(node, (ast.If, ast.IfExp))
                and any(isinstance(n, (ast.Attribute, ast.Name)) and "dry_run" in (getattr(n, "attr", None)
                                                                                    or getattr(n, "id", ""))
                        for n in ast.walk(node.test))]
    assert branches == []
    assert run_mode(True) is DryRun and run_mode(False) is Compute


@pytest.fixture
def dry_executor(tmp_path):
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    yield DeviceExecutor(cache_root=str(tmp_path), dry_run=True, progress=False)
    rt.finalize()


def _add(ex: DeviceExecutor, n: int) -> list[np.ndarray]:
    a = np.arange(n, dtype=np.float32)
    sig = OpSignature.make("Add", [((n,), "float32"), ((n,), "float32")])
    return ex.run_op(sig, [a, a], infer_outputs(sig))


def test_dry_run_mode_gives_kernels_without_code_and_reads_zeros(dry_executor, tmp_path):
    sig = OpSignature.make("Add", [((1024,), "float32"), ((1024,), "float32")])
    plan = plan_kernel(sig, infer_outputs(sig))
    (func,) = DryRun().kernels([plan])
    assert (func.entry, func.block_dim, func.name) == (0, plan.block_dim, plan.func_name)
    assert isinstance(dry_executor.mode, DryRun) and dry_executor.dry_run
    (out,) = _add(dry_executor, 1024)
    assert out.shape == (1024,) and not out.any()              # nothing computed: 2 * arange would not be 0
    assert not list(tmp_path.rglob("*.o"))                       # nothing built
    assert dry_executor.summary()[0].startswith("DryRun: no kernel was compiled")


def test_compute_mode_takes_kernels_from_the_kernel_cache(tmp_path):
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    try:
        ex = DeviceExecutor(cache_root=str(tmp_path), progress=False)
        assert isinstance(ex.mode, Compute) and not ex.dry_run
        (out,) = _add(ex, 16)
        np.testing.assert_array_equal(out, 2 * np.arange(16, dtype=np.float32))
        assert ex.summary()[0] == ex.kernel_cache.summary()
    finally:
        rt.finalize()


def test_the_summary_device_line_is_the_run_figures(dry_executor):
    """One op of three 4 KiB buffers (two inputs, one output), each a 4608-B block (aclrtMalloc's 32 B
    added, rounded up to 512 B), live at once: the summary prints the figures a trace's End record holds
    (hal.record.figures), and the device's own utilisation."""
    from ascendemu.hal.record import figures

    BLOCKS = 3 * 4608

    _add(dry_executor, 1024)
    node = dry_executor.rt.node
    fig = figures(node)["devices"]["0"]
    assert fig["kernels_run"] == 1 and fig["pool"]["peak_used"] == BLOCKS
    (line,) = [s for s in dry_executor.summary() if s.startswith("device 0 (")]
    busy = node.devices[0].utilization()
    assert (f"1 kernel(s) run, AI cores {busy:.1%} busy over {node.env.now * 1e3:.3f} ms; memory peak used "
            f"{format_bytes(BLOCKS)}, actual peak with fragments {format_bytes(fig['pool']['actual_peak'])}, "
            f"reserved {format_bytes(fig['pool']['reserved'])}") in line


def test_a_plain_run_summary_does_not_import_the_trace_format(tmp_path):
    """The summary reads the device figures from ``hal.figures``, not from the recorder, whose trace format
    costs a plain run an import it does not need."""
    code = f"""
import sys
import numpy as np
from ascendemu.graph.executor import DeviceExecutor
from ascendemu.kernels.library import infer_outputs
from ascendemu.kernels.signature import OpSignature
ex = DeviceExecutor(cache_root={str(tmp_path)!r}, dry_run=True, progress=False)
sig = OpSignature.make("Neg", [((8,), "float32")])
ex.run_op(sig, [np.ones(8, np.float32)], infer_outputs(sig))
assert any(line.startswith("device 0 (") for line in ex.summary())
print(sorted(m for m in sys.modules if m in ("ascendemu.traces.aetrace", "ascendemu.hal.record")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
