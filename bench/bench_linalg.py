"""Warm speed of the linear-algebra kernels (bench_kernels' timing: best of 5 after a first call): a
64x64 MatrixInverse and Svd against numpy, and with ``--baseline FILE`` against the kernels of another
version of kernels/ops/linalg.py (``git show REV:kernels/ops/linalg.py > FILE``), its OpDefs swapped
into the registry while its rows compile and run, so a change to the generators is timed side by side
in one process. ``--cpu`` times the work per core (thread CPU, numpy's OpenBLAS on 1 thread)."""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys

if "--cpu" in sys.argv:       # before numpy loads: its OpenBLAS on the timed thread only
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
from bench_kernels import CPU_MODE, case  # noqa: E402

from ascendemu.kernels import registry  # noqa: E402
from ascendemu.kernels.signature import OpSignature, TensorDesc  # noqa: E402


@contextlib.contextmanager
def ops_of(path: str | None):
    """The registry with the OpDefs of the linalg module at ``path`` (None: as it is)."""
    if path is None:
        yield
        return
    spec = importlib.util.spec_from_file_location("ascendemu.kernels.ops.linalg_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    saved = {op.name: registry.REGISTRY[op.name] for op in module.OPS}
    registry.REGISTRY.update({op.name: op for op in module.OPS})
    try:
        yield
    finally:
        registry.REGISTRY.update(saved)


def main() -> None:
    baseline = sys.argv[sys.argv.index("--baseline") + 1] if "--baseline" in sys.argv else None
    rng = np.random.default_rng(0)
    batch = 16
    a = rng.standard_normal((batch, 64, 64), dtype=np.float32) + 8 * np.eye(64, dtype=np.float32)
    f32 = TensorDesc(a.shape, "float32")
    cases = [(f"MatrixInverse fp32 {batch}x64x64", OpSignature.make("MatrixInverse", [f32]), lambda: np.linalg.inv(a)),
             (f"Svd fp32 {batch}x64x64", OpSignature.make("Svd", [f32]), lambda: np.linalg.svd(a)[1])]
    label = "thread CPU, 1 thread" if CPU_MODE else "wall"
    print(f"{'kernel':28s} {'ours ms':>9s} {'baseline ms':>12s} {'numpy ms':>9s} {'ours/numpy':>11s}"
          f" {'ours/baseline':>14s}   ({label})")
    for name, sig, reference in cases:
        _, ours, _, t_np = case(name, sig, [a], reference)
        old = float("nan")
        if baseline is not None:
            with ops_of(baseline):
                old = case(name, sig, [a], reference)[1]
        print(f"{name:28s} {ours * 1e3:9.2f} {old * 1e3:12.2f} {t_np * 1e3:9.2f} {ours / t_np:11.2f}"
              f" {ours / old:14.2f}")


if __name__ == "__main__":
    main()
