"""Phase cache bench: steady training-step host time with and without re-capturing ``construct``.

A GRAPH_MODE call that matches an earlier one runs the graph captured then (frontend/common/phase.py),
as MindSpore runs a compiled phase. This bench trains small networks from examples/networks.py
(TrainOneStepCell + Momentum, GRAPH_MODE O0 and O2) in one process, alternating the cache on and off
step by step so background load hits both alike, and prints per network: the median host wall time per
step off and on, their ratio, and how much of the "off" step capture and the phase lookup take.

Run: python bench/bench_phase_cache.py [--steps 20]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.frontend import Tensor, nn  # noqa: E402
import ascendemu.frontend.capture  # noqa: E402,F401  (the module; ms.capture is the function)
from ascendemu.frontend.common import phase  # noqa: E402
from ascendemu.graph.executor import DeviceExecutor  # noqa: E402
from examples import networks  # noqa: E402

# name: (factory, input shape, classes)
NETWORKS = {
    "MLP": (lambda: networks.MLP(), (32, 784), 10),
    "LeNet-5": (lambda: networks.LeNet5(), (32, 1, 32, 32), 10),
    "ResNet BasicBlock": (lambda: nn.SequentialCell([networks.BasicBlock(16, 16), nn.Flatten(),
                                                     nn.Dense(16 * 8 * 8, 10)]), (8, 16, 8, 8), 10),
}
LEVELS = ("O0", "O2")
WARMUP = 2


class _Timer:
    """Wall time spent in a function, summed (wraps it in place for the bench's lifetime)."""

    def __init__(self, owner: object, name: str) -> None:
        self.total = 0.0
        inner = getattr(owner, name)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.total += time.perf_counter() - t0
        setattr(owner, name, timed)


def bench(name: str, level: str, steps: int) -> dict:
    factory, shape, classes = NETWORKS[name]
    rng = np.random.default_rng(0)
    net = factory()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")),
                               nn.Momentum(net.trainable_params(), 0.01, 0.9))
    step.set_train()
    x = Tensor(rng.standard_normal(shape).astype(np.float32))
    y = Tensor((np.arange(shape[0]) % classes).astype(np.int32))
    ms.set_context(jit_config={"jit_level": level})
    times: dict[bool, list[float]] = {True: [], False: []}
    capture_s = lookup_s = 0.0
    for i in range(WARMUP + steps):
        for enabled in (False, True):
            phase.PHASE_CACHE.enabled = enabled
            c0, l0 = TRACE.total, LOOKUP.total
            t0 = time.perf_counter()
            step(x, y)
            if i >= WARMUP:
                times[enabled].append(time.perf_counter() - t0)
                if enabled:
                    lookup_s += LOOKUP.total - l0
                else:
                    capture_s += TRACE.total - c0
    off, on = statistics.median(times[False]), statistics.median(times[True])
    return {"off": off, "on": on, "capture": capture_s / steps, "lookup": lookup_s / steps}


TRACE = _Timer(sys.modules["ascendemu.frontend.capture"], "trace")
LOOKUP = _Timer(phase.PHASE_CACHE, "key")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="bench-phase-")
    os.chmod(cache, 0o700)
    ms.set_backend(DeviceExecutor(cache_root=cache, progress=False))
    ms.set_context(mode=ms.GRAPH_MODE)
    load = os.getloadavg()[0]
    print(f"phase cache: training step host wall time, median of {args.steps} steps (cache off/on alternating); "
          f"load average {load:.1f} on {os.cpu_count()} cores\n")
    print("| network, level | step, capture every call | step, phase cache | on/off | capture per step (off) "
          "| phase lookup per step (on) |")
    print("|---|---|---|---|---|---|")
    for name in NETWORKS:
        for level in LEVELS:
            r = bench(name, level, args.steps)
            print(f"| {name}, {level} | {r['off'] * 1e3:.2f} ms | {r['on'] * 1e3:.2f} ms | {r['on'] / r['off']:.2f} | "
                  f"{r['capture'] * 1e3:.2f} ms | {r['lookup'] * 1e3:.3f} ms |", flush=True)


if __name__ == "__main__":
    main()
