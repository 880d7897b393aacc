"""Host speed against real MindSpore's CPU back end, side by side in one run (issue 13's speed goals):

1. The first run of a model-zoo CNN script (bench/zoo_forward.py: the zoo's ResNet-18 CIFAR-10 and
   MobileNetV2, batch 32, 3 forward steps): the whole process, from an empty kernel cache (cold, what a
   new user waits for) and again with it filled (warm), against the same script on MindSpore CPU.
2. A LeNet-5 training step, batch 32 (Momentum; tests/fixtures/oracles/training/train_oracle.py, which
   runs unchanged on both): the steady-state step, as the difference of two whole runs of N1 and N2
   steps divided by N2 - N1, so start-up, graph compile and kernel builds cancel out.

The peer is a Python with real MindSpore: ``--peer-python`` (or $ASCENDEMU_PEER_PYTHON; it needs
numpy<2 beside mindspore), else this interpreter when it can import real MindSpore. Without one the
recorded peer figures below are printed and named so.
Every figure is the best of ``--repeats`` runs (wall clock: a shared machine only adds time).

    python bench/bench_speed.py [--peer-python /path/to/python] [--repeats 2]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
TRAINING = BENCH.parent / "tests" / "fixtures" / "oracles" / "training"
NETS = ("resnet18", "mobilenetv2")
STEPS = (5, 45)                      # LeNet-5 runs whose difference is the steady-state step
# real MindSpore 2.10 CPU on this 2-core machine (2026-11-22), used when no peer Python is given
RECORDED_PEER = {"resnet18": 7.62, "mobilenetv2": 3.76, "lenet_step_ms": 75.0}


def timed(cmd: list[str], cwd: Path, env: dict | None = None) -> float:
    """Wall seconds of one whole process; fails loudly with its stderr."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return wall


def ours(script: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "ascendemu", "run", "--quiet", script, *args]


def first_runs(work: Path, peer: str | None, repeats: int) -> None:
    print("First run of a model-zoo CNN script (bench/zoo_forward.py, batch 32, 3 forward steps; whole process, s)")
    print("| network | ours cold | ours warm | MindSpore CPU | cold / MindSpore |")
    print("|---|---|---|---|---|")
    script = str(BENCH / "zoo_forward.py")
    for net in NETS:
        cold = warm = float("inf")
        for _ in range(repeats):
            shutil.rmtree(work / "rank_0", ignore_errors=True)      # an empty kernel and graph cache
            cold = min(cold, timed(ours(script, net), work))
            warm = min(warm, timed(ours(script, net), work))
        if peer:
            theirs = min(timed([peer, script, net], work) for _ in range(repeats))
            label = f"{theirs:.2f}"
        else:
            theirs = RECORDED_PEER[net]
            label = f"{theirs:.2f} (recorded)"
        print(f"| {net} | {cold:.2f} | {warm:.2f} | {label} | {cold / theirs:.2f}x |")


def training_step(work: Path, peer: str | None, repeats: int) -> None:
    for name in ("train_oracle.py", "lenet_momentum.npz"):
        shutil.copyfile(TRAINING / name, work / name)
    n1, n2 = STEPS

    def step_ms(cmd_of) -> float:
        runs = {n: min(timed(cmd_of(n), work) for _ in range(repeats)) for n in (n1, n2)}
        return (runs[n2] - runs[n1]) / (n2 - n1) * 1e3

    mine = step_ms(lambda n: ours("train_oracle.py", "lenet_momentum", "Ascend", str(n)))
    if peer:
        theirs = step_ms(lambda n: [peer, "train_oracle.py", "lenet_momentum", "CPU", str(n)])
        label = f"{theirs:.1f}"
    else:
        theirs = RECORDED_PEER["lenet_step_ms"]
        label = f"{theirs:.1f} (recorded)"
    print(f"\nLeNet-5 training step, batch 32 (steady state: runs of {n1} and {n2} steps, ms/step)")
    print("| ours (O2, emulated 910A) | MindSpore CPU | ours / MindSpore |")
    print("|---|---|---|")
    print(f"| {mine:.1f} | {label} | {mine / theirs:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-python", default=os.environ.get("ASCENDEMU_PEER_PYTHON"),
                        help="a Python with real MindSpore (default: $ASCENDEMU_PEER_PYTHON)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    peer = args.peer_python
    if peer is None and importlib.util.find_spec("mindspore") is not None:
        peer = sys.executable                # real MindSpore here (ascendemu serves `mindspore` only under `run`)
    if peer and subprocess.run([peer, "-c", "import mindspore"], capture_output=True).returncode:
        raise SystemExit(f"{peer} cannot import mindspore; give a Python with real MindSpore (and numpy<2)")
    print(f"peer: {'real MindSpore via ' + peer if peer else 'recorded figures (no --peer-python)'}; "
          f"best of {args.repeats} runs each\n")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        first_runs(work, peer, args.repeats)
        training_step(work, peer, args.repeats)


if __name__ == "__main__":
    main()
