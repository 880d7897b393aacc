"""Model.train on LeNet-5 / MNIST-format data: dataset sink mode vs step by step, and real MindSpore's CPU
back end on the same script and data when a MindSpore interpreter is given.

One script (the model zoo's way: MnistDataset -> map -> batch, Model(net, loss, Momentum, metrics),
model.train with a callback that times every step) runs in fresh processes:
  ascendemu run, dataset_sink_mode=False   (O2 graph launched once per step)
  ascendemu run, dataset_sink_mode=True    (one launch per sink of sink_size steps, GetNext from a queue)
  real MindSpore CPU (MINDSPORE_PYTHON=/path/to/python with mindspore installed; else skipped)
Each run trains 2 epochs of 32 steps (batch 32, 1,024 images) after a warm-up epoch excluded from the
figure; the step time is the host wall time between step ends (sunk: sink ends / sink_size). The
emulator's runs also report the simulated device time per step from its summary.

Run: [MINDSPORE_PYTHON=...] python bench/bench_model.py
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from datafiles import learnable_mnist  # noqa: E402

SCRIPT = '''
import sys, time
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import mindspore.dataset.transforms as transforms
from mindspore import nn
from mindspore.train import Model, Callback

sink = sys.argv[1] == "sink"
ms.set_context(mode=ms.GRAPH_MODE, device_target=sys.argv[2])
ms.set_seed(1)

data = ds.MnistDataset("MNIST_Data/train", shuffle=False)
data = data.map([vision.Resize((32, 32)), vision.Rescale(1 / 255.0, 0), vision.HWC2CHW()], "image")
data = data.map(transforms.TypeCast(ms.int32), "label").batch(32, drop_remainder=True)

class LeNet5(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1, self.fc2, self.fc3 = nn.Dense(400, 120), nn.Dense(120, 84), nn.Dense(84, 10)
        self.relu, self.pool, self.flatten = nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten()
    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.flatten(self.pool(self.relu(self.conv2(x))))
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))

class StepTimes(Callback):
    def __init__(self):
        self.ends = []
    def on_train_step_end(self, run_context):
        self.ends.append((run_context.original_args().cur_step_num, time.perf_counter()))

net = LeNet5()
model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
              nn.Momentum(net.trainable_params(), 0.01, 0.9), metrics={"acc"})
times = StepTimes()
model.train(3, data, callbacks=[times], dataset_sink_mode=sink)
steps = data.get_dataset_size()
(s0, t0), (s1, t1) = next(e for e in times.ends if e[0] >= steps), times.ends[-1]   # after the warm-up epoch
print(f"STEP_MS {(t1 - t0) / (s1 - s0) * 1e3:.3f}")
'''


def run(python: list[str], cwd: Path, mode: str, target: str) -> tuple[float, str]:
    proc = subprocess.run([*python, "bench_model_script.py", mode, target], cwd=cwd, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode:
        raise SystemExit(f"{python} {mode} failed:\n{proc.stderr[-3000:]}")
    return float(re.search(r"STEP_MS ([\d.]+)", proc.stdout).group(1)), proc.stdout


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        learnable_mnist(cwd / "MNIST_Data", train=1024, test=64)
        (cwd / "bench_model_script.py").write_text(SCRIPT)
        ours = [sys.executable, "-m", "ascendemu", "run"]
        rows = []
        for mode in ("steps", "sink"):
            ms_step, out = run(ours, cwd, mode, "Ascend")
            sim = re.search(r"simulated device time ([\d.]+) ms/run", out)
            rows.append((f"ascendemu, dataset_sink_mode={mode == 'sink'}", ms_step,
                         f"{float(sim.group(1)):.3f} ms/run" if sim else "-"))
        peer = os.environ.get("MINDSPORE_PYTHON")
        if peer:
            ms_step, _ = run([peer], cwd, "steps", "CPU")
            rows.append(("real MindSpore CPU, dataset_sink_mode=False", ms_step, "-"))
        print(f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; LeNet-5, batch 32, "
              "Momentum, 2 timed epochs of 32 steps after a warm-up epoch")
        print("| run | host wall ms/step | simulated device (from the summary) |")
        print("|---|---|---|")
        for name, step, sim in rows:
            print(f"| {name} | {step:.2f} | {sim} |")
        if not peer:
            print("real MindSpore: MINDSPORE_PYTHON not set, skipped")
        else:
            print(f"ascendemu step-by-step / real MindSpore CPU: {rows[0][1] / rows[-1][1]:.2f}x; "
                  f"sunk / step-by-step: {rows[1][1] / rows[0][1]:.2f}x")


if __name__ == "__main__":
    main()
