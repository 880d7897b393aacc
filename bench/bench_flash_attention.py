"""FlashAttentionScore (the fused kernels of kernels/ops/attention.py) against the registry composition it
replaced (BatchMatMul, Softmax, BatchMatMul; nn_func._attention): one causal attention layer's forward +
backward (grads of sum(out) wrt q, k, v), B=1, N=8, D=128, float16, GRAPH_MODE.

    .venv/bin/python bench/bench_flash_attention.py [--seq 1024] [--dry-seqs 1024 4096]

Prints the warm host wall time per step (computed, --seq) and, under DryRun, the peak device memory and
the simulated step time at each of --dry-seqs.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, context, ops, set_backend
from ascendemu.frontend.ops.function.nn_func import _attention
from ascendemu.graph.executor import DeviceExecutor
from ascendemu.hal.runtime import get_runtime

HEADS, HEAD_DIM = 8, 128
WARM_RUNS = 3        # the first run compiles; the last is reported


class Layer(ms.nn.Cell):
    def __init__(self, fused: bool):
        super().__init__()
        self.fused = fused

    def construct(self, q, k, v):
        def loss(a, b, c):
            scale = 1.0 / HEAD_DIM ** 0.5
            if self.fused:
                out = ops.flash_attention_score(a, b, c, HEADS, scalar_value=scale, input_layout="BNSD",
                                                sparse_mode=2)
            else:
                out, _ = _attention("FlashAttentionScore", a, b, c, heads=HEADS, kv_heads=0, layout="BNSD",
                                    scale=scale, sparse_mode=2)
            return out.sum()
        return ms.grad(loss, grad_position=(0, 1, 2))(q, k, v)


def inputs(seq: int) -> list[Tensor]:
    rng = np.random.default_rng(0)
    return [Tensor(rng.standard_normal((1, HEADS, seq, HEAD_DIM)).astype(np.float16)) for _ in range(3)]


def run(fused: bool, seq: int, dry: bool, cache: str) -> tuple[float, int, float]:
    """(warm host seconds per step, peak device bytes, simulated step seconds)."""
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    executor = DeviceExecutor(cache_root=cache, dry_run=dry, progress=False)
    previous = set_backend(executor)
    try:
        context.set_context(mode=context.GRAPH_MODE)
        layer, x = Layer(fused), inputs(seq)
        for _ in range(1 if dry else WARM_RUNS):
            start = time.perf_counter()
            out = layer(*x)
            if not dry:
                out[0].asnumpy()
            wall = time.perf_counter() - start
        return wall, get_runtime().mem_stats().peak_used, executor.steps[-1].device_s
    finally:
        set_backend(previous)
        rt.finalize()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--dry-seqs", type=int, nargs="*", default=[1024, 4096])
    parser.add_argument("--cache", default="/tmp/ascendemu_bench_fa")
    args = parser.parse_args()
    for fused in (True, False):
        name = "fused" if fused else "composed"
        wall, peak, device = run(fused, args.seq, False, args.cache)
        print(f"{name:8s} S={args.seq}: warm host {wall * 1e3:.0f} ms/step, simulated {device * 1e3:.3f} ms, "
              f"peak {peak / 2**20:.0f} MiB")
        for seq in args.dry_seqs:
            _, peak, device = run(fused, seq, True, args.cache)
            print(f"{name:8s} S={seq} DryRun: peak {peak / 2**20:.0f} MiB, simulated step {device * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
