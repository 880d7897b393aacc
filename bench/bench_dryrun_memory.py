"""DryRun host memory and wall time vs parameter count: abstract weights against eager ones.

A DryRun computes nothing, so its weights need no values: built under DryRun, a Parameter keeps shape,
dtype and its initializer's seeds (abstract weights, docs/ARCHITECTURE.md). This bench trains one step
of an MLP (Dense layers of ``width``, Momentum) in a DryRun at several sizes, each in a fresh child
process, twice: with the network built under the DryRun (abstract weights) and built before the DryRun
backend is installed (eager weights: every initializer fills its array, as before this change). It
prints the child's peak RSS, its wall time (building the network, and in all) and the simulated figures,
which must be equal for both.

    .venv/bin/python bench/bench_dryrun_memory.py                # 10M, 100M, 1B; eager up to 100M
    .venv/bin/python bench/bench_dryrun_memory.py --eager-max 1000000000
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

# (parameters, width, depth): square Dense layers width x width, depth of them
SIZES = {"10M": (1024, 10), "100M": (4096, 6), "1B": (8192, 15)}
BATCH = 32
DEFAULT_EAGER_MAX = 200_000_000     # eager weights of 1B take ~5 minutes of host Philox and 4+ GB: opt in


def params_of(width: int, depth: int) -> int:
    return depth * (width * width + width)


def peak_rss_mib() -> float:
    """This process's peak resident set (VmHWM), MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(width: int, depth: int, abstract: bool) -> dict:
    """One DryRun training step of the MLP; the figures as a dict (run in a fresh process)."""
    import numpy as np

    t0 = time.perf_counter()
    from ascendemu.frontend import Tensor, context, nn, set_backend
    from ascendemu.graph.executor import DeviceExecutor
    from ascendemu.hal.runtime import get_runtime

    def build():
        layers = [nn.Dense(width, width) for _ in range(depth)]
        net = nn.SequentialCell(layers)
        loss = nn.WithLossCell(net, nn.MSELoss())
        return nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))

    t_import = time.perf_counter()
    train = None if abstract else build()            # eager: no DryRun backend yet, every weight filled
    executor = DeviceExecutor(dry_run=True, progress=False)
    set_backend(executor)
    context.set_context(mode=context.GRAPH_MODE, jit_config={"jit_level": "O2"})
    if abstract:
        train = build()
    t_built = time.perf_counter()
    x = Tensor(np.zeros((BATCH, width), np.float32))
    train(x, x)
    train(x, x)
    mem = get_runtime().mem_stats()
    return {"params": params_of(width, depth), "abstract": abstract, "rss_mib": round(peak_rss_mib(), 1),
            "build_s": round(t_built - t_import, 2), "wall_s": round(time.perf_counter() - t0, 2),
            "step_s": executor.steps[-1].device_s, "peak_used": mem.peak_used, "actual_peak": mem.actual_peak}


def run_child(width: int, depth: int, abstract: bool) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(width), str(depth), str(int(abstract))],
                         capture_output=True, text=True, check=True, cwd=os.path.dirname(os.path.abspath(__file__)))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(SIZES), help=f"comma-separated, of {list(SIZES)}")
    parser.add_argument("--eager-max", type=int, default=DEFAULT_EAGER_MAX,
                        help="largest parameter count also run with eager weights")
    parser.add_argument("--child", nargs=3, type=int, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        print(json.dumps(child(opts.child[0], opts.child[1], bool(opts.child[2]))))
        return
    print(f"{'params':>14} {'weights':>10} {'peak RSS':>10} {'build':>8} {'wall':>8}  simulated (step, peak used)")
    for name in opts.sizes.split(","):
        width, depth = SIZES[name]
        runs = [run_child(width, depth, True)]
        if params_of(width, depth) <= opts.eager_max:
            runs.append(run_child(width, depth, False))
        for r in runs:
            print(f"{r['params']:>14,} {'abstract' if r['abstract'] else 'eager':>10} {r['rss_mib']:>8.0f}Mi "
                  f"{r['build_s']:>7.2f}s {r['wall_s']:>7.2f}s  {r['step_s'] * 1e3:.3f} ms, "
                  f"{r['peak_used'] / (1 << 20):.0f}M")
        if len(runs) == 2:
            same = all(runs[0][k] == runs[1][k] for k in ("step_s", "peak_used", "actual_peak"))
            print(f"{'':>14} simulated figures {'equal' if same else 'DIFFER'}")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
