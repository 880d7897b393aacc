"""Training step of LeNet-5, batch 32 (Momentum, weight decay; the real-MindSpore oracle's network and
data): host wall time per step at O0/O1/O2 and simulated device time per step, cold and warm build,
static-plan peak vs its bound; next to real MindSpore's CPU step (measured side by side when `mindspore`
is importable, else the recorded figure). Usage: python bench/bench_training.py [--steps N]
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ACL_OP_COMPILER_CACHE_MODE", "disable")    # cold = nothing cached anywhere (cache/store.py)

ORACLES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "oracles" / "training"
RECORDED_MINDSPORE_CPU_STEP_MS = (75.0, 96.0)     # real MindSpore 2.10 CPU, LeNet-5 batch 32, these 2 cores


def run(cwd: Path, level: str, steps: int) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--jit-level", level, "train_oracle.py",
                           "lenet_momentum", "Ascend", str(steps)], cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    return time.perf_counter() - t0, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    steps = parser.parse_args().steps
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        for name in ("train_oracle.py", "lenet_momentum.npz"):
            shutil.copyfile(ORACLES / name, cwd / name)
        print(f"LeNet-5 batch 32, nn.Momentum, {steps} steps (host wall: whole process; per step: steady state)")
        print("| level | build | process wall s | host wall ms/step | simulated device ms/step | plan |")
        print("|---|---|---|---|---|---|")
        for level in ("O0", "O1", "O2"):
            for build in ("cold", "warm"):
                wall, out = run(cwd, level, steps)
                line = re.search(rf"TrainOneStepCell \[{level}\].*?simulated device time ([\d.]+) ms/run, "
                                 rf"host wall ([\d.]+) ms/run", out)
                plan = re.search(r"static memory plan ([\d.]+ \w+) \(([\d.]+)x that peak", out)
                print(f"| {level} | {build} | {wall:.2f} | {line.group(2)} | {line.group(1)} | "
                      f"{plan.group(1) + ', ' + plan.group(2) + 'x peak' if plan else '-'} |")
        low, high = RECORDED_MINDSPORE_CPU_STEP_MS
        print(f"real MindSpore CPU step (recorded, mindspore not importable here): {low:.0f}-{high:.0f} ms")


if __name__ == "__main__":
    main()
