"""Network bench: build cost (cold vs warm cache) and per-step cost at O0/O1/O2 for the example networks.

For each network, three fresh processes (this file with ``--child``), all in GRAPH_MODE through the
front end, as ``ascendemu run`` would:

1. cold build: an empty cache directory; time the capture and ``DeviceExecutor.prepare`` of the O2
   graph (graph compile, kernel builds, loads, device set-up), and the whole process wall time.
2. warm build: the same directory again (kernels and the compiled graph come from the caches).
3. steps: ``WARMUP`` rounds (building the O0/O1 kernels, untimed), then ``--steps`` rounds of one
   step at each of O0, O1, O2 (interleaved, so that other load on the machine hits all levels
   alike). Host wall per step is the executor's measurement of ``run_graph`` (upload, launches,
   synchronise, download); simulated device time per step is the executor's too (from the host's
   first call of the step to the device's last task). The O2 static plan is reported against
   ``CompiledGraph.concurrent_bound`` (the most bytes that may be alive at once on its streams; the
   single-stream peak ``lower_bound`` is shown beside it).

Run: python bench/bench_networks.py [--steps 20] [--only lenet5,...]   (a few minutes on 2 cores)
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ACL_OP_COMPILER_CACHE_MODE", "disable")    # cold = nothing cached anywhere (cache/store.py)

ROOT = Path(__file__).resolve().parents[1]
LEVELS = ("O0", "O1", "O2")
WARMUP = 2
RESULT_TAG = "BENCH_RESULT "

# name: (label, factory taking the examples.networks module, input shape).
NETWORKS = {
    "mlp": ("MLP 784-256-128-10, batch 32", lambda nets: nets.MLP(), (32, 784)),
    "lenet5": ("LeNet-5, batch 32", lambda nets: nets.LeNet5(), (32, 1, 32, 32)),
    "resnet_block": ("ResNet BasicBlock 64->128 /2 + downsample, (8, 64, 16, 16)",
                     lambda nets: nets.BasicBlock(64, 128, stride=2), (8, 64, 16, 16)),
    "transformer": ("Transformer encoder layer d64 h4 ff256, (4, 16, 64)",
                    lambda nets: nets.TransformerEncoderLayer(64, 4, 256), (4, 16, 64)),
}


# ------------------------------------------------------------------------------------ child process

def child(name: str, cache: str, mode: str, steps: int) -> dict:
    t_start = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    import numpy as np

    import ascendemu.frontend as ms
    from ascendemu.graph.executor import DeviceExecutor
    from examples import networks

    _, factory, shape = NETWORKS[name]
    executor = DeviceExecutor(cache_root=cache, progress=False)
    ms.set_backend(executor)
    ms.set_context(mode=ms.GRAPH_MODE)
    net = factory(networks)
    x = ms.Tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    imports_s = time.perf_counter() - t_start
    if mode == "build":
        t0 = time.perf_counter()
        graph, _ = ms.capture(net, x)
        compiled = executor.prepare(graph, "O2").compiled
        build_s = time.perf_counter() - t0
        stats = executor.kernel_cache.stats
        return {"build_s": build_s, "imports_s": imports_s, "built": stats.built, "reused": stats.reused,
                "graph_hits": executor.graph_cache.hits, "kernels": len(compiled.kernels),
                "numba_imported": "numba" in sys.modules}
    result: dict = {}
    for _ in range(WARMUP + steps):    # levels interleaved, so load changes hit all three alike
        for level in LEVELS:
            ms.set_context(jit_config={"jit_level": level})
            net(x)
    for level in LEVELS:
        timed = [s for s in executor.steps if s.jit_level == level][WARMUP:]
        result[level] = {"host_wall_s": statistics.median(s.host_wall_s for s in timed),
                         "device_s": statistics.median(s.device_s for s in timed),
                         "kernels": timed[0].kernels}
    graph, _ = ms.capture(net, x)
    compiled = executor.prepare(graph, "O2").compiled
    result["plan"] = {"size": compiled.workspace_size, "lower_bound": compiled.lower_bound,
                      "concurrent_bound": compiled.concurrent_bound,
                      "streams": compiled.num_streams, "events": len(compiled.events)}
    return result


def run_child(name: str, cache: str, mode: str, steps: int) -> tuple[dict, float]:
    """(the child's result, wall seconds of the whole child process)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MS_COMPILER_CACHE_PATH", "RANK_ID")}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", name, "--cache", cache, "--mode", mode,
                           "--steps", str(steps)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"child {name} {mode} failed:\n{proc.stderr}")
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_TAG))
    return json.loads(line[len(RESULT_TAG):]), wall


# ------------------------------------------------------------------------------------------- parent

def bench(names: list[str], steps: int) -> list[dict]:
    rows = []
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as cache:
            os.chmod(cache, 0o700)
            cold, cold_wall = run_child(name, cache, "build", steps)
            warm, warm_wall = run_child(name, cache, "build", steps)
            per_step, _ = run_child(name, cache, "steps", steps)
        assert cold["reused"] == 0 and cold["graph_hits"] == 0, cold
        assert warm["built"] == 0 and warm["graph_hits"] == 1, warm
        rows.append({"name": name, "cold": cold, "cold_wall": cold_wall, "warm": warm, "warm_wall": warm_wall,
                     "steps": per_step})
        print(f"  {name}: done (cold build {cold['build_s']:.2f} s, warm {warm['build_s'] * 1e3:.0f} ms)",
              file=sys.stderr)
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| network | kernels O0/O1/O2 | cold build (process) | warm build (process) | cold/warm build | "
        "host wall/step O0 / O1 / O2 | O1/O0, O2/O1 host | simulated device/step O0 / O1 / O2 | "
        "O1/O0, O2/O1 device | O2 plan / concurrent bound (streams) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s, c, w = r["steps"], r["cold"], r["warm"]
        host = [s[lv]["host_wall_s"] * 1e3 for lv in LEVELS]
        dev = [s[lv]["device_s"] * 1e3 for lv in LEVELS]
        plan = s["plan"]
        lines.append(
            f"| {NETWORKS[r['name']][0]} | {'/'.join(str(s[lv]['kernels']) for lv in LEVELS)} | "
            f"{c['build_s']:.2f} s ({r['cold_wall']:.1f} s), {c['built']} built | "
            f"{w['build_s'] * 1e3:.0f} ms ({r['warm_wall']:.1f} s), {w['reused']} reused"
            f"{'' if w['numba_imported'] else ', numba not imported'} | "
            f"{c['build_s'] / w['build_s']:.0f}x | "
            f"{host[0]:.2f} / {host[1]:.2f} / {host[2]:.2f} ms | {host[1] / host[0]:.2f}, {host[2] / host[1]:.2f} | "
            f"{dev[0]:.4f} / {dev[1]:.4f} / {dev[2]:.4f} ms | {dev[1] / dev[0]:.2f}, {dev[2] / dev[1]:.2f} | "
            f"{plan['size'] / plan['concurrent_bound']:.3f} ({plan['size']} / {plan['concurrent_bound']} B, "
            f"{plan['streams']} stream(s); single-stream peak {plan['lower_bound']} B) |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="timed steps per level (median reported)")
    parser.add_argument("--only", help="comma-separated subset of " + ",".join(NETWORKS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=("build", "steps"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(RESULT_TAG + json.dumps(child(args.child, args.cache, args.mode, args.steps)))
        return
    names = args.only.split(",") if args.only else list(NETWORKS)
    print(f"bench_networks: {len(names)} network(s), {args.steps} timed steps per level; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    rows = bench(names, args.steps)
    print(f"{datetime.date.today().isoformat()}, {os.cpu_count()} cores, CPython {platform.python_version()}, "
          f"{platform.machine()}; median of {args.steps} interleaved steps per level after {WARMUP} warm-up rounds\n")
    print(table(rows))


if __name__ == "__main__":
    main()
