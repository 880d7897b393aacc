"""Host wall time per kernel launch through the runtime + simulation, next to a bare SimPy loop.

Both figures come from the same run on the same machine: a tiny kernel (1 block, 64 B in and out)
launched N times on one stream and synchronised, versus N SimPy resource request + timeout pairs,
the cheapest thing a SimPy device model could do per task. Goal: <= 20 us per launch.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import simpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from conftest import scale_kernel  # noqa: E402  (the same tiny kernel the tests use)

from ascendemu.hal.runtime import get_runtime  # noqa: E402

N = 20_000
REPEATS = 5       # best of: this VM's timings vary by 2x from run to run


def bare_simpy(n: int) -> float:
    env = simpy.Environment()
    core = simpy.Resource(env, 32)

    def proc():
        for _ in range(n):
            with core.request() as req:
                yield req
                yield env.timeout(1e-6)
    env.process(proc())
    t0 = time.perf_counter()
    env.run()
    return (time.perf_counter() - t0) / n


def launches(n: int, block_dim: int = 1) -> tuple[float, float, float]:
    rt = get_runtime()
    rt.init()
    rt.set_device(0)
    s = rt.create_stream()
    x, y = rt.malloc(64), rt.malloc(64)
    k = scale_kernel(16, block_dim)
    rt.launch_kernel(k, block_dim, [x, y], s)     # warm up
    rt.synchronize_stream(s)
    t0 = time.perf_counter()
    for _ in range(n):
        rt.launch_kernel(k, block_dim, [x, y], s)
    t1 = time.perf_counter()
    rt.synchronize_stream(s)
    t2 = time.perf_counter()
    sim_per_launch = rt.device_time() / (n + 1)
    rt.finalize()
    return (t1 - t0) / n, (t2 - t1) / n, sim_per_launch


def main() -> None:
    bare = min(bare_simpy(N) for _ in range(REPEATS))
    enqueue, simulate, sim_time = min((launches(N) for _ in range(REPEATS)), key=lambda r: r[0] + r[1])
    total = enqueue + simulate
    enqueue8, simulate8, _ = min((launches(N // 5, 8) for _ in range(REPEATS)), key=lambda r: r[0] + r[1])
    print(f"best of {REPEATS} runs of {N} launches each")
    print(f"{'what':44s} {'us/launch':>10s}")
    print(f"{'bare SimPy request+timeout':44s} {bare * 1e6:10.2f}")
    print(f"{'launch_kernel (host enqueue only)':44s} {enqueue * 1e6:10.2f}")
    print(f"{'simulation + native run per launch':44s} {simulate * 1e6:10.2f}")
    print(f"{'total per launch, 1 block':44s} {total * 1e6:10.2f}  ({1 / total:,.0f} launches/s)")
    print(f"{'total per launch, 8 blocks':44s} {(enqueue8 + simulate8) * 1e6:10.2f}")
    print(f"ratio total/bare SimPy: {total / bare:.1f}x; goal <= 20 us: {'met' if total <= 20e-6 else 'NOT met'}")
    print(f"simulated device time per launch (host-bound stream): {sim_time * 1e6:.2f} us")


if __name__ == "__main__":
    main()
