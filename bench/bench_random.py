"""Warm speed of the dynamic-shape random and integer-loop kernels (Dropout, the CPU samplers, Gcd) on
1M elements (best of REPEATS launches: one sequential sampler launch swings 1.3-1.8x at best of 5),
and with ``--baseline FILE`` against the kernels of another version of
kernels/ops/random.py (``git show REV:kernels/ops/random.py > FILE``; ``--search-baseline FILE`` the
same for search.py's Gcd), side by side in one process, outputs compared bit for bit. A launch runs
the kernel's blocks one after another; ``--cpu`` times the work per core (thread CPU)."""
from __future__ import annotations

import sys

import numpy as np
from bench_kernels import CPU_MODE, best, runner
from bench_linalg import ops_of

from ascendemu.kernels.library import infer_outputs
from ascendemu.kernels.ops.random import engine_state
from ascendemu.kernels.signature import OpSignature, TensorDesc

N = 1 << 20
REPEATS = 15


def timed(sig: OpSignature, inputs: list[np.ndarray]) -> tuple[float, list[np.ndarray]]:
    """Best time of one launch and its outputs (the inputs copied fresh: a sampler advances its state)."""
    outs = [np.zeros(d.shape, d.dtype) for d in infer_outputs(sig)]
    arrays = [x.copy() for x in inputs] + outs
    func, serial, _ = runner(sig, arrays)
    ws = [np.zeros(a.nbytes, np.uint8) for a in func.args if a.role == "workspace"]
    if ws:
        func, serial, _ = runner(sig, arrays + ws)
    seconds = best(serial, REPEATS)
    for x, fresh in zip(arrays, inputs):
        x[...] = fresh
    serial()
    return seconds, [o.copy() for o in outs]


def cases() -> list[tuple[str, str, OpSignature, list[np.ndarray]]]:
    rng = np.random.default_rng(0)
    x32 = rng.standard_normal((8, 128, 1024), dtype=np.float32)
    philox = np.array([1234, 5678, 3], np.int32)
    state_mt, state_minstd = engine_state("UniformReal", 1, 2), engine_state("StandardNormal", 1, 2)
    a, b = (rng.integers(-10 ** 6, 10 ** 6, N).astype(np.int32) for _ in range(2))

    def dropout(x: np.ndarray) -> OpSignature:
        return OpSignature.make("Dropout", [TensorDesc(x.shape, str(x.dtype)), TensorDesc((3,), "int32")],
                                keep_prob=0.9)
    return [("random", "Dropout fp32 8x128x1024", dropout(x32), [x32, philox]),
            ("random", "Dropout fp16 8x128x1024", dropout(x32.astype(np.float16)), [x32.astype(np.float16), philox]),
            ("random", "UniformReal 1M", OpSignature.make("UniformReal", [TensorDesc(state_mt.shape, "int64")],
                                                          shape=(N,)), [state_mt]),
            ("random", "StandardNormal 1M", OpSignature.make("StandardNormal", [TensorDesc((1,), "int64")],
                                                             shape=(N,)), [state_minstd]),
            ("search", "Gcd int32 1M", OpSignature.make("Gcd", [TensorDesc((N,), "int32")] * 2), [a, b])]


def main() -> None:
    baselines = {"random": sys.argv[sys.argv.index("--baseline") + 1] if "--baseline" in sys.argv else None,
                 "search": sys.argv[sys.argv.index("--search-baseline") + 1] if "--search-baseline" in sys.argv
                 else None}
    label = "thread CPU, 1 thread" if CPU_MODE else "wall"
    print(f"{'kernel':28s} {'ours ms':>9s} {'baseline ms':>12s} {'ours/baseline':>14s} {'same bits':>10s}   ({label})")
    for module, name, sig, inputs in cases():
        ours, out = timed(sig, inputs)
        old, same = float("nan"), "-"
        if baselines[module] is not None:
            with ops_of(baselines[module]):
                old, old_out = timed(sig, inputs)
            same = str(all(p.tobytes() == q.tobytes() for p, q in zip(out, old_out)))
        print(f"{name:28s} {ours * 1e3:9.2f} {old * 1e3:12.2f} {ours / old:14.2f} {same:>10s}")


if __name__ == "__main__":
    main()
