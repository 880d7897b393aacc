"""Real MindSpore's training runs, reproduced: ../shared/oracles/training/train_oracle.py runs unchanged
under ``ascendemu run`` and prints the losses and eval line real MindSpore 2.10 printed (float32
agreement ~1e-5 relative: summation orders differ); the checkpoint it saves carries the same entries,
shapes and types as real MindSpore's and loads back to the parameters the run ended with."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from ascendemu.frontend.train.serialization import load_checkpoint

from test_run_cli import run_cli

# a copy of ../shared/oracles/training (real MindSpore 2.10's script, data, printed lines, checkpoints)
ORACLES = Path(__file__).resolve().parent / "fixtures" / "oracles" / "training"


def expected(case: str) -> tuple[list[float], tuple[float, float]]:
    text = (ORACLES / f"{case}.mindspore-2.10-cpu.txt").read_text()
    losses = [float(v) for v in re.findall(r"^step \d+ loss (\S+)$", text, re.M)]
    s, m = re.search(r"^eval sum (\S+) absmax (\S+)$", text, re.M).groups()
    return losses, (float(s), float(m))


def run_oracle(tmp_path: Path, cache: Path, case: str, *args: str) -> tuple[list[float], tuple[float, float], str]:
    """The oracle script under ``ascendemu run`` on the session's kernel cache (``cache``)."""
    for name in ("train_oracle.py", f"{case}.npz"):
        shutil.copyfile(ORACLES / name, tmp_path / name)
    proc = run_cli(tmp_path, *args, "train_oracle.py", case, MS_COMPILER_CACHE_PATH=str(cache))
    assert proc.returncode == 0, proc.stderr[-3000:]
    losses = [float(v) for v in re.findall(r"^step \d+ loss (\S+)$", proc.stdout, re.M)]
    found = re.search(r"^eval sum (\S+) absmax (\S+)$", proc.stdout, re.M)
    return losses, (float(found.group(1)), float(found.group(2))) if found else None, proc.stdout


@pytest.mark.parametrize("case", ["cnn_bn_adam", "lenet_momentum"])
def test_train_oracle_reproduces_mindspore_losses_eval_and_checkpoint(tmp_path, ascendemu_kernel_cache, case):
    losses, evaluation, _ = run_oracle(tmp_path, ascendemu_kernel_cache, case)
    want_losses, want_eval = expected(case)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    np.testing.assert_allclose(evaluation, want_eval, rtol=1e-5)
    ours = load_checkpoint(str(tmp_path / f"{case}_Ascend_final.ckpt"))
    theirs = load_checkpoint(str(ORACLES / f"{case}.mindspore-2.10-cpu.ckpt"))
    assert list(ours) == list(theirs)                                   # same entries, same order
    for name, p in theirs.items():
        assert ours[name].shape == p.shape and ours[name].dtype == p.dtype, name
        np.testing.assert_allclose(ours[name].asnumpy(), p.asnumpy(), rtol=2e-4, atol=2e-5, err_msg=name)


def test_o0_and_o1_steps_match_mindspore_too(tmp_path, ascendemu_kernel_cache):
    """Three LeNet steps one kernel per op (O0) and with fused backward chains (O1)."""
    want, _ = expected("lenet_momentum")
    for level in ("O0", "O1"):
        losses, _, out = run_oracle(tmp_path, ascendemu_kernel_cache, "lenet_momentum", "--jit-level", level)
        np.testing.assert_allclose(losses, want, rtol=1e-5, err_msg=level)
        assert f"TrainOneStepCell [{level}]" in out
