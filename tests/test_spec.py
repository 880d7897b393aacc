"""Device presets, overrides and the info CLI, against REFERENCE.md's numbers."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu import errors
from ascendemu.device.cost import KernelCost, copy_time, kernel_time
from ascendemu.device.spec import PRESETS, get_spec


def test_910a_numbers():
    s = get_spec()
    assert (s.ai_cores, s.clock_hz, s.hbm_bytes, s.max_streams, s.max_events) == (32, 1e9, 32 << 30, 1024, 1024)
    assert s.peak_cube_flops == 32 * 4096 * 2 * 1e9          # 262 TFLOPS fp16
    assert get_spec("Ascend910B1").ai_cores == 24 and get_spec("Ascend910B4").hbm_bytes == 32 << 30
    assert get_spec("Ascend910ProA").clock_hz == 1.1e9
    assert set(PRESETS) >= {"Ascend910A", "Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4"}


def test_overrides_and_errors():
    assert get_spec(hbm_bytes=16 << 30).hbm_bytes == 16 << 30
    with pytest.raises(errors.InvalidParamError, match="unknown device preset 'Ascend999'"):
        get_spec("Ascend999")
    with pytest.raises(errors.InvalidParamError, match=r"unknown DeviceSpec field\(s\) \['cores'\]"):
        get_spec(cores=4)
    with pytest.raises(errors.InvalidParamError, match="must be a positive number"):
        get_spec(ai_cores=0)
    # a flag (MindSpore's precision mode on the preset's series) is a bool, not a number
    assert get_spec().fp32_matrix_in_fp16 and not get_spec("Ascend910B2").fp32_matrix_in_fp16
    assert get_spec(fp32_matrix_in_fp16=False).fp32_matrix_in_fp16 is False
    with pytest.raises(errors.InvalidParamError, match="must be True or False, got 0"):
        get_spec(fp32_matrix_in_fp16=0)


def test_cost_model_by_hand():
    """A kernel without a GEMM (flops only): cube at the sustained share of peak, bytes through the
    ports of the cores the data spreads to; plus the task and block costs (tests/test_cost_model.py
    prices the GEMM terms)."""
    s = get_spec()
    cost = KernelCost(cube_flops=2 * 1024 ** 3, bytes=3 * 1024 * 1024 * 2, dtype="float16")
    cube = 2 * 1024 ** 3 / (32 * 4096 * 2 * 1e9 * s.cube_efficiency)
    port = 3 * 1024 * 1024 * 2 / (32 * s.core_port_bytes_per_cycle * 1e9)
    assert cube > port
    assert kernel_time(s, cost, 32) == pytest.approx(2e-6 + cube + 1e-6)
    # the clock scales compute-bound time (ProA is 1.1x faster)
    pro = get_spec("Ascend910ProA")
    assert kernel_time(pro, cost, 32) == pytest.approx(2e-6 + cube / 1.1 + 1e-6)
    assert copy_time(s, 32 << 20, "H2D") == pytest.approx(2e-6 + (32 << 20) / 32e9)


def test_info_cli():
    out = subprocess.run([sys.executable, "-m", "ascendemu", "info", "--json"], capture_output=True, text=True,
                         check=True).stdout
    data = json.loads(out)
    assert data["ai_cores"] == 32 and data["peak_fp16_tflops"] == 262.1
    bad = subprocess.run([sys.executable, "-m", "ascendemu", "info", "--device", "Nope"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "unknown device preset" in bad.stderr


def test_demo_cli_runs_through_cache_and_device(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MS_COMPILER_CACHE_PATH", "RANK_ID")}
    out = subprocess.run([sys.executable, "-m", "ascendemu", "demo", "--trace", "t.json", "--cache", str(tmp_path)],
                         cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    assert "matches numpy" in out.stdout and "0 reused, 2 built" in out.stdout
    assert len(list((tmp_path / "rank_0" / "kernel_meta").glob("*.o"))) == 2
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert {e["name"].split("_")[0] for e in events if e.get("cat") == "kernel"} == {"square", "add"}
