"""Kernel build CPU (numba + LLVM) and run speed, this tree against a git revision's kernels, side by side.

A new user's first run is mostly kernel builds (bench_speed.py --only first-run). This builds a fixed set of
representative kernels in a fresh process per side, as a cold cache-miss process does (so each side pays
its own per-process set-up: numba's, and its njit helpers' first builds), alternating the sides, and times
each build's CPU (user + sys of the process); then runs the elementwise kernels of bench_kernels.py's rows
(16M float32 elements, one thread, thread CPU time) and two row softmaxes, each from the object the cache
would store (codegen, linked as a warm run links it), to show the run speed is unchanged.

    python bench/bench_build_cost.py [--baseline REV] [--repeats N]

The baseline side serves ``ascendemu.kernels`` from ``git archive REV kernels`` (the rest of the tree is
this one) through a ``sitecustomize`` on its PYTHONPATH.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = '''import importlib.util, sys
import ascendemu
spec = importlib.util.spec_from_file_location("ascendemu.kernels", {init!r}, submodule_search_locations=[{pkg!r}])
mod = importlib.util.module_from_spec(spec); sys.modules["ascendemu.kernels"] = mod; spec.loader.exec_module(mod)
'''

CHILD = r'''
import json, resource, time
import numpy as np
from ascendemu.kernels import codegen, library
from ascendemu.kernels.signature import OpSignature, TensorDesc

def t(*shape, dtype="float32"):
    return TensorDesc(shape, dtype)

def cached(sig):
    """The kernel as a warm run loads it: the cache's object (codegen), linked."""
    from ascendemu.hal.kernel import KernelFunction
    from ascendemu.hal.loader import link
    from ascendemu.kernels.binary import build_binary
    plan = library.plan_kernel(sig)
    entry, keepalive = link(build_binary(plan, 0))
    return KernelFunction(name=plan.func_name, entry=entry, block_dim=plan.block_dim, args=plan.args, cost=plan.cost,
                          keepalive=keepalive, tiling=plan.tiling_data)

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

SIGS = [
    ("Add dense", OpSignature("Add", (t(64, 32), t(64, 32)))),
    ("Mul broadcast", OpSignature("Mul", (t(8, 16, 32), t(16, 1)))),
    ("ReLU", OpSignature("ReLU", (t(64, 32),))),
    ("Maximum", OpSignature("Maximum", (t(64, 32), t(32,)))),
    ("Cast fp32->fp16", OpSignature("Cast", (t(64, 32),), (("dst_type", "float16"),))),
    ("FusedElemwise ReluGrad*x", OpSignature("FusedElemwise", (t(64, 32), t(64, 32)), (("program", (
        ("ReluGrad", ("in", 0), ("in", 1)), ("Mul", ("t", 0), ("c", 0.5)))),))),
    ("ReduceSum row", OpSignature("ReduceSum", (t(64, 32),), (("axis", (1,)), ("keep_dims", False)))),
    ("ReduceMax row fp16", OpSignature("ReduceMax", (t(64, 32, dtype="float16"),), (("axis", (1,)), ("keep_dims", False)))),
    ("Softmax", OpSignature("Softmax", (t(64, 10),), (("axis", -1),))),
    ("LogSoftmax", OpSignature("LogSoftmax", (t(64, 10),), (("axis", -1),))),
    ("SparseSoftmaxCE grad", OpSignature("SparseSoftmaxCrossEntropyWithLogits", (t(64, 10), t(64, dtype="int32")),
                                        (("is_grad", True),))),
    ("MatMul fp32", OpSignature("MatMul", (t(64, 32), t(32, 16)))),
    ("MatMul fp16", OpSignature("MatMul", (t(64, 32, dtype="float16"), t(32, 16, dtype="float16")))),
    ("Conv2D 3x3", OpSignature("Conv2D", (t(2, 3, 16, 16), t(8, 3, 3, 3)), (("pad_mode", "same"),))),
    ("MaxPool 2x2", OpSignature("MaxPool", (t(2, 3, 16, 16),), (("kernel_size", (2, 2)), ("strides", (2, 2)),
                                                              ("pad_mode", "valid")))),
    ("Transpose", OpSignature("Transpose", (t(4, 5, 6),), (("perm", (2, 0, 1)),))),
]
start = cpu()
codegen._load_numba_without_blas_probe()
builds = {"numba set-up": cpu() - start}
for name, sig in SIGS:
    t0 = cpu()
    codegen.compile_object(library.generate(sig).pyfunc, "k", b"meta")
    builds[name] = cpu() - t0
builds["total"] = cpu() - start

n = 16 * 1024 * 1024
rng = np.random.default_rng(0)
x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
runs = {}
for name, sig, arrays in (("Add fp32 16M", OpSignature("Add", (t(n), t(n))), [x, y]),
                          ("Exp fp32 16M", OpSignature("Exp", (t(n),)), [x]),
                          ("ReLU fp32 16M", OpSignature("ReLU", (t(n),)), [x]),
                          ("Maximum fp32 4096x4096 by row", OpSignature("Maximum", (t(4096, 4096), t(4096))), [x, y[:4096]]),
                          ("Softmax fp32 4096x1000", OpSignature("Softmax", (t(4096, 1000),), (("axis", -1),)), [x[:4096000]]),
                          ("LogSoftmax fp32 4096x1000", OpSignature("LogSoftmax", (t(4096, 1000),), (("axis", -1),)), [x[:4096000]])):
    k = cached(sig)
    out = np.empty(n, np.float32)
    argv = k.argv([a.ctypes.data for a in [*arrays, out]])
    best = float("inf")
    for _ in range(5):
        t0 = time.thread_time()
        for b in range(k.block_dim):
            k.call_block(argv, b)
        best = min(best, time.thread_time() - t0)
    runs[name] = best
print(json.dumps({"builds": builds, "runs": runs}))
'''


def side(pythonpath: str | None) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="HEAD", help="git revision whose kernels/ is the 'before' side")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "kernels"], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        pkg = str(Path(tmp) / "kernels")
        site = Path(tmp) / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(SITE.format(init=pkg + "/__init__.py", pkg=pkg))
        results = {"before": [], "after": []}
        for _ in range(args.repeats):
            results["before"].append(side(str(site)))
            results["after"].append(side(None))
    best = {key: {kind: {name: min(r[kind][name] for r in runs) for name in runs[0][kind]} for kind in ("builds", "runs")}
            for key, runs in results.items()}
    print(f"load {os.getloadavg()[0]:.1f}; best of {args.repeats}, fresh process per side, alternating; "
          f"before = {args.baseline}'s kernels/\n")
    print("| build (CPU s, this process) | before | after | after / before |\n|---|---|---|---|")
    for name, before in best["before"]["builds"].items():
        after = best["after"]["builds"][name]
        print(f"| {name} | {before:.3f} | {after:.3f} | {after / before:.2f} |")
    print("\n| run, one thread (thread CPU ms) | before | after | after / before |\n|---|---|---|---|")
    for name, before in best["before"]["runs"].items():
        after = best["after"]["runs"][name]
        print(f"| {name} | {before * 1e3:.1f} | {after * 1e3:.1f} | {after / before:.2f} |")


if __name__ == "__main__":
    main()
