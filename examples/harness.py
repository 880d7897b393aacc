"""What every network example does: run a Cell for a few steps in GRAPH_MODE, check each step against
the numpy reference with the same weights, print the worst error, and fail loudly on a mismatch.

Written against the MindSpore API only (``import mindspore``), so it runs under ``ascendemu run``.
The jit level is whatever the context says (O2 by default on the 910A), or what
``ascendemu run --jit-level`` forces. Under DryRun (``ascendemu run --dry-run``, or MindSpore's own
``MS_SIMULATION_LEVEL``) no kernel computes anything, so the steps run for their time and memory and
the numbers are not checked.
"""
from __future__ import annotations

import argparse
import os
from typing import Callable, Mapping

import numpy as np

import mindspore as ms
from mindspore import Tensor

# float32 device results vs the float64 numpy reference: |out - ref| <= ATOL + RTOL * |ref|.
RTOL = 1e-4
ATOL = 1e-5
INPUT_SEED = 2024
DRY_RUN_ENV = "MS_SIMULATION_LEVEL"      # MindSpore's DryRun switch; `ascendemu run --dry-run` sets it too


def dry_run() -> bool:
    """True under DryRun: graphs are compiled, memory and time simulated, but outputs hold no results."""
    return bool(os.environ.get(DRY_RUN_ENV))


def parse_args(description: str, steps: int, batch: int) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=steps, help=f"forward steps to run (default {steps})")
    parser.add_argument("--batch", type=int, default=batch, help=f"batch size (default {batch})")
    return parser.parse_args()


def weights(net: ms.nn.Cell) -> dict[str, np.ndarray]:
    """Every parameter (BatchNorm moving statistics included) as a numpy array, by name."""
    return {name: p.asnumpy() for name, p in net.parameters_dict().items()}


def run_checked(title: str, net: ms.nn.Cell, input_shape: tuple[int, ...], steps: int,
                reference: Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray]) -> int:
    """Feed ``steps`` deterministic random batches through ``net``; 0 if every output matches numpy."""
    ms.set_context(mode=ms.GRAPH_MODE, device_target="Ascend")
    params = weights(net)
    rng = np.random.default_rng(INPUT_SEED)
    worst = 0.0
    ok = True
    print(f"{title}: input {input_shape}, {steps} step(s) in GRAPH_MODE")
    if dry_run():
        for step in range(1, steps + 1):
            out = net(Tensor(rng.standard_normal(input_shape).astype(np.float32)))
            print(f"  step {step}: output {out.shape}")
        print(f"{title}: DryRun ({DRY_RUN_ENV} set): nothing is computed, so the outputs are not checked "
              "against numpy; see the summary for simulated time and memory")
        return 0
    for step in range(1, steps + 1):
        x = rng.standard_normal(input_shape).astype(np.float32)
        out = net(Tensor(x)).asnumpy()
        want = reference(params, x)
        err = float(np.max(np.abs(out - want)))
        step_ok = out.shape == want.shape and bool(np.all(np.abs(out - want) <= ATOL + RTOL * np.abs(want)))
        print(f"  step {step}: output {out.shape}, max abs error {err:.3g} vs numpy"
              + ("" if step_ok else "  <-- MISMATCH"))
        worst, ok = max(worst, err), ok and step_ok
    verdict = "matches numpy" if ok else "DOES NOT match numpy"
    print(f"{title}: max abs error {worst:.3g} (tolerance {ATOL:g} + {RTOL:g} x |ref|): {verdict}")
    return 0 if ok else 1
