"""Warm speed of the special-function kernels (bench_kernels' timing: best of 5 after a first call) on
1M float32 elements against scipy, and with ``--baseline FILE`` against the kernels of another version
of kernels/ops/special.py (``git show REV:kernels/ops/special.py > FILE``; bench_linalg's swap of the
registry's OpDefs), side by side in one process. ``--cpu`` times the work per core (thread CPU)."""
from __future__ import annotations

import sys

import numpy as np
import scipy.special as sp
from bench_kernels import CPU_MODE, case
from bench_linalg import ops_of

from ascendemu.kernels.signature import OpSignature, TensorDesc


def main() -> None:
    baseline = sys.argv[sys.argv.index("--baseline") + 1] if "--baseline" in sys.argv else None
    rng = np.random.default_rng(0)
    n = 1 << 20
    x = rng.uniform(0.1, 30.0, n).astype(np.float32)
    a = rng.uniform(0.5, 20.0, (1024, 1)).astype(np.float32)       # broadcast against x's rows
    rows = x.reshape(1024, 1024)
    f32 = TensorDesc((n,), "float32")
    cases = [("Lgamma fp32 1M", OpSignature.make("Lgamma", [f32]), [x], lambda: sp.gammaln(x)),
             ("BesselK1 fp32 1M", OpSignature.make("BesselK1", [f32]), [x], lambda: sp.k1(x)),
             ("Igamma fp32 1024x1 by 1024x1024",
              OpSignature.make("Igamma", [TensorDesc(a.shape), TensorDesc(rows.shape)]), [a, rows],
              lambda: sp.gammainc(a, rows))]
    label = "thread CPU, 1 thread" if CPU_MODE else "wall"
    print(f"{'kernel':32s} {'ours ms':>9s} {'baseline ms':>12s} {'scipy ms':>9s} {'ours/scipy':>11s}"
          f" {'ours/baseline':>14s}   ({label})")
    for name, sig, inputs, reference in cases:
        _, ours, _, t_ref = case(name, sig, inputs, reference)
        old = float("nan")
        if baseline is not None:
            with ops_of(baseline):
                old = case(name, sig, inputs, reference)[1]
        print(f"{name:32s} {ours * 1e3:9.2f} {old * 1e3:12.2f} {t_ref * 1e3:9.2f} {ours / t_ref:11.2f}"
              f" {ours / old:14.2f}")


if __name__ == "__main__":
    main()
