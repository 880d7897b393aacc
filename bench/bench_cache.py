"""Kernel cache bench: cold vs warm start, warm load vs a numba cache=True hit, parallel cold build.

Every measurement runs in a fresh process and is timed inside it from the first line of the script,
so interpreter start-up is excluded. Columns: "work" (the cache calls, or numba's decoration, plus
one kernel call), "imports" (the modules that work needs: numpy and ascendemu.cache, or numpy and
numba), their sum, and the wall time of the whole process for reference.

1. A 30-kernel set shaped like a small CNN (conv, pool, matmul, softmax, elementwise): cold build
   (empty cache, default jobs = a worker per core) against a warm start (every kernel reused).
2. One kernel (elementwise Add, 4096 float32): warm load from the cache plus one call, against the
   same computation under the same kernel ABI as a numba ``cfunc(cache=True)`` whose on-disk cache
   is hot (cache_hits == 1 is checked).
3. The cold build with default jobs against jobs=1 (in-process, no worker pool), interleaved, best of
   two each: other jobs on the machine make single cold runs vary by up to 2x.
4. What authentication costs the warm start: the 30-kernel warm start with the MAC check switched off
   in the child (bench only; there is no such switch in the product), interleaved with the normal one,
   and the MAC checks alone over the same 30 entries already in memory (best of MAC_LOOPS).
5. Five graphs of six kernels built one after the other in one process (as a script's graphs are):
   the worker pool kept between builds against a new pool per build (what the cache did before).

Run: python bench/bench_cache.py [--repeats N]   (about 2 minutes on 2 cores)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

os.environ.setdefault("ACL_OP_COMPILER_CACHE_MODE", "disable")    # cold = nothing cached anywhere (cache/store.py)

F32 = "float32"


def net_sigs() -> list:
    """30 signatures, as the graph of a small CNN (batch 8) would request them."""
    from ascendemu.kernels.signature import OpSignature as S

    def t(*shape):
        return (shape, F32)

    return [
        S.make("Conv2D", [t(8, 1, 32, 32), t(6, 1, 5, 5)], kernel_size=5, out_channel=6),
        S.make("BiasAdd", [t(8, 6, 28, 28), t(6)]),
        S.make("ReLU", [t(8, 6, 28, 28)]),
        S.make("MaxPool", [t(8, 6, 28, 28)], kernel_size=2, strides=2),
        S.make("Conv2D", [t(8, 6, 14, 14), t(16, 6, 5, 5)], kernel_size=5, out_channel=16),
        S.make("BiasAdd", [t(8, 16, 10, 10), t(16)]),
        S.make("ReLU", [t(8, 16, 10, 10)]),
        S.make("MaxPool", [t(8, 16, 10, 10)], kernel_size=2, strides=2),
        S.make("MatMul", [t(8, 400), t(400, 120)]),
        S.make("BiasAdd", [t(8, 120), t(120)]),
        S.make("ReLU", [t(8, 120)]),
        S.make("MatMul", [t(8, 120), t(120, 84)]),
        S.make("BiasAdd", [t(8, 84), t(84)]),
        S.make("ReLU", [t(8, 84)]),
        S.make("MatMul", [t(8, 84), t(84, 10)]),
        S.make("BiasAdd", [t(8, 10), t(10)]),
        S.make("Softmax", [t(8, 10)]),
        S.make("LogSoftmax", [t(8, 10)]),
        S.make("ReduceSum", [t(8, 10)], axis=(1,)),
        S.make("ReduceMean", [t(8, 10)], axis=(0,)),
        S.make("Sub", [t(8, 10), t(8, 10)]),
        S.make("Mul", [t(8, 10), t(8, 10)]),
        S.make("Add", [t(8, 120), t(8, 120)]),
        S.make("Square", [t(8, 84)]),
        S.make("Exp", [t(8, 10)]),
        S.make("Neg", [t(8, 10)]),
        S.make("Sigmoid", [t(8, 84)]),
        S.make("Tanh", [t(8, 120)]),
        S.make("Maximum", [t(8, 84), t(8, 84)]),
        S.make("Transpose", [t(8, 120)], perm=(1, 0)),
    ]


COLD_REPEATS = 2
# Compiles (and caches) the bytecode of every module a build touches, so no measured child does.
BYTECODE_WARMUP = ("import concurrent.futures, multiprocessing, numpy, numba, tqdm, ascendemu.cache, "
                   "ascendemu.kernels.codegen, ascendemu.kernels.library; from ascendemu.kernels.ops import "
                   "elementwise, norm, reduce, matmul, conv, pool, misc")

# Child scripts: each prints one JSON line with seconds since its first line: "imports" (up to the
# measured work), "internal" (to the end of it); "work" = internal - imports.
BUILD_CHILD = textwrap.dedent("""
    import time; t0 = time.perf_counter()
    import json, sys
    sys.path.insert(0, sys.argv[3])
    from bench_cache import net_sigs
    from ascendemu.cache import KernelCache
    sigs = net_sigs()
    jobs = None if sys.argv[2] == "default" else int(sys.argv[2])
    if sys.argv[4:] == ["nomac"]:          # bench only: the same warm path without the MAC check
        import ascendemu.cache.entry as entry
        entry.entry_auth_problem = lambda binary, key: None
    t1 = time.perf_counter()
    cache = KernelCache(sys.argv[1], rank=0)
    if sys.argv[4:5] == ["graphs"]:        # five graphs of six kernels built one after the other
        import ascendemu.cache.parallel as parallel
        for g in range(0, len(sigs), 6):
            cache.get_many(sigs[g:g + 6], jobs=jobs, progress=False)
            if sys.argv[5] == "fresh":     # bench only: a new worker pool per build, as before
                parallel._discard_pool()
    else:
        cache.get_many(sigs, jobs=jobs, progress=False)
    t2 = time.perf_counter()
    import resource
    cpu = time.process_time() + sum(getattr(resource.getrusage(resource.RUSAGE_CHILDREN), f)
                                    for f in ("ru_utime", "ru_stime"))
    print(json.dumps({"imports": t1 - t0, "internal": t2 - t0, "cpu": cpu, "built": cache.stats.built,
                      "reused": cache.stats.reused, "numba": "numba" in sys.modules}))
""")

MAC_LOOPS = 20
# The MAC checks of a warm start alone: every entry read once, then checked MAC_LOOPS times.
MAC_COST_CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from ascendemu.cache.auth import entry_auth_problem, load_key
    from ascendemu.cache.cli import scan
    from ascendemu.cache.entry import read_entry
    directory = Path(sys.argv[1]) / "rank_0" / "kernel_meta"
    t0 = time.perf_counter()
    key = load_key()
    t1 = time.perf_counter()
    binaries = [read_entry(directory, name).binary for name in scan(directory).committed]
    best = float("inf")
    for _ in range(int(sys.argv[2])):
        start = time.perf_counter()
        assert not any(entry_auth_problem(b, key) for b in binaries)
        best = min(best, time.perf_counter() - start)
    print(json.dumps({"entries": len(binaries), "mac_s": best, "key_s": t1 - t0,
                      "obj_bytes": sum(len(b.obj) for b in binaries)}))
""")

CACHE_ONE_CHILD = textwrap.dedent("""
    import time; t0 = time.perf_counter()
    import json, sys
    import numpy as np
    from ascendemu.cache import KernelCache
    from ascendemu.kernels.signature import OpSignature
    t1 = time.perf_counter()
    sig = OpSignature.make("Add", [((4096,), "float32"), ((4096,), "float32")])
    kernel = KernelCache(sys.argv[1], rank=0).get(sig)
    a, b, y = np.ones(4096, np.float32), np.full(4096, 2, np.float32), np.zeros(4096, np.float32)
    args = kernel.argv([a.ctypes.data, b.ctypes.data, y.ctypes.data])     # + its tiling data
    for blk in range(kernel.block_dim):
        kernel.call_block(args, blk)
    t2 = time.perf_counter()
    assert (y == 3).all()
    print(json.dumps({"imports": t1 - t0, "internal": t2 - t0, "numba": "numba" in sys.modules}))
""")

# The same computation under the same ABI, compiled by numba with its on-disk cache (cache=True).
NUMBA_ONE_SCRIPT = textwrap.dedent("""
    import time; t0 = time.perf_counter()
    import ctypes, json
    import numpy as np
    import numba
    from numba import carray, types
    from numba.extending import intrinsic
    t1 = time.perf_counter()

    N = 4096

    @intrinsic
    def f32_pointer(typingctx, addr):
        ptr = types.CPointer(types.float32)
        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(ptr))
        return ptr(types.uint64), codegen

    @numba.cfunc(types.void(types.CPointer(types.uint64), types.int64, types.int64), cache=True)
    def add_kernel(args, block_idx, block_dim):
        x = carray(f32_pointer(args[0]), (N,))
        y = carray(f32_pointer(args[1]), (N,))
        z = carray(f32_pointer(args[2]), (N,))
        chunk = (N + block_dim - 1) // block_dim
        for i in range(block_idx * chunk, min(N, (block_idx + 1) * chunk)):
            z[i] = x[i] + y[i]

    a, b, y = np.ones(N, np.float32), np.full(N, 2, np.float32), np.zeros(N, np.float32)
    args = (ctypes.c_uint64 * 3)(a.ctypes.data, b.ctypes.data, y.ctypes.data)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(add_kernel.address)(
        ctypes.addressof(args), 0, 1)
    t2 = time.perf_counter()
    assert (y == 3).all()
    print(json.dumps({"imports": t1 - t0, "internal": t2 - t0, "cache_hits": add_kernel.cache_hits}))
""")


def child_env(tmp: Path, **extra: str) -> dict:
    """Children write bytecode to a private prefix (as an installed package has .pyc files), whatever
    PYTHONDONTWRITEBYTECODE says here; the first run of each kind warms it and is not counted."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(tmp / "pycache"), **extra}


def run_child(argv: list[str], env: dict) -> dict:
    """Run a child python, return its JSON report plus "wall" (whole process, start-up included)."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"child {argv[:2]} failed:\n{proc.stderr}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    report["wall"] = wall
    return report


def build(root: Path, jobs: str, env: dict, *mode: str) -> dict:
    return run_child(["-c", BUILD_CHILD, str(root), jobs, str(Path(__file__).parent), *mode], env)


def median_of(reports: list[dict], key: str) -> float:
    if key == "work":
        return statistics.median(r["internal"] - r["imports"] for r in reports)
    return statistics.median(r[key] for r in reports)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per warm figure")
    args = parser.parse_args()
    n_sigs = len(net_sigs())
    from ascendemu.kernels.binary import kernel_name
    # entries: dynamic-shape kernels (elementwise, conv, pooling) serve several of the signatures each
    n_entries = len({kernel_name(s, 0) for s in net_sigs()})
    with tempfile.TemporaryDirectory(prefix="bench_cache_") as tmp:
        tmp = Path(tmp)
        env = child_env(tmp)
        subprocess.run([sys.executable, "-c", BYTECODE_WARMUP], env=env, check=True)
        # 1 + 3: cold builds, jobs=1 (in-process) and default jobs (a worker per core) interleaved,
        # best of COLD_REPEATS each (other jobs share the cores); then warm starts.
        cold1, cold2 = [], []
        for i in range(COLD_REPEATS):
            cold1.append(build(tmp / f"jobs1_{i}", "1", env))
            cold2.append(build(tmp / f"jobs2_{i}", "default", env))
        assert all(r["built"] == n_entries for r in cold1 + cold2), (cold1, cold2)
        cold1, cold2 = min(cold1, key=lambda r: r["internal"]), min(cold2, key=lambda r: r["internal"])
        # 5: five successive cold builds in one process: one worker pool kept vs a new pool per build
        kept, fresh = [], []
        for i in range(COLD_REPEATS):
            kept.append(build(tmp / f"kept_{i}", "default", env, "graphs", "keep"))
            fresh.append(build(tmp / f"fresh_{i}", "default", env, "graphs", "fresh"))
        assert all(r["built"] == n_entries for r in kept + fresh), (kept, fresh)
        kept, fresh = min(kept, key=lambda r: r["internal"]), min(fresh, key=lambda r: r["internal"])
        warm, warm_nomac = [], []
        for _ in range(args.repeats):            # 4: with and without the MAC check, interleaved
            warm.append(build(tmp / "jobs2_0", "default", env))
            warm_nomac.append(build(tmp / "jobs2_0", "default", env, "nomac"))
        assert all(w["reused"] == n_entries and w["built"] == 0 and not w["numba"] for w in warm + warm_nomac), warm
        mac = run_child(["-c", MAC_COST_CHILD, str(tmp / "jobs2_0"), str(MAC_LOOPS)], env)
        assert mac["entries"] == n_entries, mac

        # 2: one kernel, warm cache vs numba cache=True hit.
        ours_script = tmp / "cache_one.py"
        ours_script.write_text(CACHE_ONE_CHILD)
        run_child([str(ours_script), str(tmp / "one")], env)     # populate (builds the Add kernel)
        ours = [run_child([str(ours_script), str(tmp / "one")], env) for _ in range(args.repeats)]
        assert not any(r["numba"] for r in ours)
        peer_script = tmp / "numba_peer.py"
        peer_script.write_text(NUMBA_ONE_SCRIPT)
        peer_env = child_env(tmp, NUMBA_CACHE_DIR=str(tmp / "numba_cache"))
        run_child([str(peer_script)], peer_env)                  # populate numba's cache
        peer = [run_child([str(peer_script)], peer_env) for _ in range(args.repeats)]
        assert all(r["cache_hits"] == 1 for r in peer), peer

    rows = [
        (f"{n_sigs}-kernel CNN set ({n_entries} entries): cold, default jobs ({os.cpu_count()} workers; "
         f"best of {COLD_REPEATS})",
         [cold2]),
        (f"{n_sigs}-kernel CNN set: cold, jobs=1 (in-process; best of {COLD_REPEATS})", [cold1]),
        (f"{n_sigs}-kernel CNN set: warm, all reused (median of {args.repeats})", warm),
        (f"{n_sigs}-kernel CNN set: warm, MAC check switched off (median of {args.repeats}, same run)", warm_nomac),
        (f"5 graphs x 6 kernels built in turn, one worker pool kept (best of {COLD_REPEATS})", [kept]),
        (f"5 graphs x 6 kernels built in turn, a new pool per graph (best of {COLD_REPEATS})", [fresh]),
        (f"1 kernel: warm load from kernel_meta + 1 call (median of {args.repeats})", ours),
        (f"1 kernel: numba cfunc(cache=True) hit + 1 call (median of {args.repeats})", peer),
    ]
    print(f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, CPython {platform.python_version()}, "
          f"{platform.machine()}, load average at the end {os.getloadavg()[0]:.2f}:\n")
    print("| measurement | work s | imports s | in-process total s | whole process s |")
    print("|---|---|---|---|---|")
    for label, reports in rows:
        print(f"| {label} | {median_of(reports, 'work'):.3f} | {median_of(reports, 'imports'):.3f} | "
              f"{median_of(reports, 'internal'):.3f} | {median_of(reports, 'wall'):.3f} |")
    print()
    for what in ("work", "internal"):
        label = "work only" if what == "work" else "in-process total"
        print(f"- cold / warm ({label}): {median_of([cold2], what) / median_of(warm, what):.0f}x (goal >= 100x)")
        print(f"- warm load / numba cache hit ({label}): "
              f"{median_of(ours, what) / median_of(peer, what):.2f}x (goal <= 0.25x)")
    print(f"- authentication on the warm start: work with / without the MAC check "
          f"{median_of(warm, 'work') / median_of(warm_nomac, 'work'):.3f}x; the MAC checks alone take "
          f"{mac['mac_s'] * 1e3:.2f} ms for {mac['entries']} entries ({mac['mac_s'] / mac['entries'] * 1e6:.0f} us "
          f"each, {mac['obj_bytes'] / 1024:.0f} KiB of objects; best of {MAC_LOOPS}), reading the key "
          f"{mac['key_s'] * 1e3:.2f} ms")
    print(f"- parallel cold build, jobs=1 / default jobs (in-process total): "
          f"{median_of([cold1], 'internal') / median_of([cold2], 'internal'):.2f}x (goal >= 1.6x)")
    print(f"- successive cold builds in one process, new pool per graph / pool kept (work): "
          f"{median_of([fresh], 'work') / median_of([kept], 'work'):.2f}x")
    print(f"- CPU seconds of the cold builds (process and its workers): jobs=1 {cold1['cpu']:.1f}, "
          f"default jobs {cold2['cpu']:.1f}; with {os.cpu_count()} idle cores the parallel build could "
          f"reach at most {os.cpu_count() * cold1['cpu'] / cold2['cpu']:.2f}x")


if __name__ == "__main__":
    main()
