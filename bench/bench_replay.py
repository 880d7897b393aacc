"""Replay speed: a recorded 10,000-launch run against its replay (host wall time, same machine, same run).

The run is a real one (kernels built once, then loaded from the cache and computed): the examples'
MLP (784-256-128-10, batch 32) at O0,
whose every node is one ``launch_kernel``, run step by step in GRAPH_MODE until at least 10,000 kernels
were launched, under ``ascendemu run --record``. The replay re-issues the trace's calls against a fresh
runtime without the script, the front end or numerics (the default: kernels priced from their recorded
launch facts). The figures are host wall times of the same work: the run's from the moment the script
starts (what its summary prints), with and without recording, and the replay's from opening the trace;
the kernel builds happen in a warm-up run before, so none pays for them. Also printed: the trace's
size, and that the replay reproduced the run's simulated figures bit for bit.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ascendemu.replay.compare import differences
from ascendemu.replay.replayer import replay
from ascendemu.traces.aetrace import LaunchKernel, read_trace

LAUNCHES = 10_000
REPEATS = 3                    # best of: this VM's timings vary by 2x from run to run
KERNELS_PER_STEP = 8           # MLP 784-256-128-10 at O0: MatMul, BiasAdd, ReLU x2, MatMul, BiasAdd
SCRIPT = f"""
import numpy as np
import mindspore as ms
from mindspore import Tensor
from networks import MLP
ms.set_context(mode=ms.GRAPH_MODE)
net = MLP()
x = Tensor(np.random.default_rng(0).standard_normal((32, 784)).astype(np.float32))
for _ in range({-(-LAUNCHES // KERNELS_PER_STEP)}):
    net(x)
"""


def run(directory: Path, *options: str) -> float:
    """Run the script under ``ascendemu run``; the host wall time its summary reports."""
    env = {**os.environ, "MS_COMPILER_CACHE_PATH": str(directory)}
    out = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--jit-level", "O0", *options,
                          str(directory / "steps.py")], cwd=directory, env=env, check=True, capture_output=True,
                         text=True).stdout
    return float(re.search(r"host wall time ([0-9.]+) s", out).group(1))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench_replay_") as tmp:
        directory = Path(tmp)
        examples = Path(__file__).resolve().parents[1] / "examples"
        (directory / "networks.py").write_text((examples / "networks.py").read_text())
        (directory / "steps.py").write_text(SCRIPT)
        run(directory)                                           # builds the kernels once
        plain_wall = min(run(directory) for _ in range(REPEATS))
        trace = directory / "run.aetrace"
        record_wall = min(run(directory, "--record", str(trace)) for _ in range(REPEATS))
        reader = read_trace(trace)
        records = list(reader)
        launches = sum(isinstance(r, LaunchKernel) for r in records)
        replay_wall = float("inf")
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            result = replay(str(trace))
            replay_wall = min(replay_wall, time.perf_counter() - t0)
        same = not differences(reader.end.figures, result.figures)
        print(f"recorded run: {launches:,} kernel launches, {len(records):,} records, trace "
              f"{trace.stat().st_size / 1024:.0f} KiB ({trace.stat().st_size / len(records):.2f} B/record); "
              f"best of {REPEATS}")
        print(f"| host wall, run (script, front end, kernels computed) | {plain_wall:.2f} s |")
        print(f"| host wall, the same run recording (--record) | {record_wall:.2f} s ({record_wall / plain_wall:.2f}x) |")
        print(f"| host wall, replay of the trace (no script, no numerics) | {replay_wall:.2f} s |")
        print(f"| replay / run | {replay_wall / plain_wall:.3f}x |")
        print(f"replay reproduces the run's simulated figures bit for bit: {same} "
              f"(simulated device time {result.figures['device_time_s'] * 1e3:.3f} ms)")


if __name__ == "__main__":
    main()
