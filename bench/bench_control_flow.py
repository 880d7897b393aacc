"""Control-flow bench: simulated step time of a tensor `if` as a device conditional vs if-converted, and
the control tasks' count and time in the trace.

The network (GRAPH_MODE) routes its input through one of two different MLP stacks by a tensor `if`
(ReLU stack when the input's mean is positive, Tanh stack otherwise) and then refines it in a device
`while` loop (a Dense layer, `trips` times, a tensor input). It runs in two forms, each on both branches:

- IfNode: the `if` is a LabelSwitch to the taken stack's kernels and a LabelGoto to the join (what
  ascendemu captures for a graph without autodiff or Parameter updates, graph.ir.IfNode);
- Select: the `if` if-converted, both stacks' kernels run and a Select joins them (what a DryRun, a
  gradient's forward or a graph assigning Parameters captures), forced here by making every capture
  if-convert (``Tracer.if_converts``).

Printed per form, jit level and branch: simulated device time of one step (deterministic), kernels run,
and the LabelSwitch/LabelGoto spans (count, summed simulated time) read from the Chrome trace.

Run: python bench/bench_control_flow.py [--width 1024] [--depth 4] [--batch 256] [--trips 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.frontend import Tensor, nn, ops  # noqa: E402
from ascendemu.frontend.common import phase  # noqa: E402
from ascendemu.graph import capture  # noqa: E402
from ascendemu.graph.executor import DeviceExecutor  # noqa: E402

LEVELS = ("O0", "O2")


class Router(nn.Cell):
    """One of two MLP stacks by a tensor `if`, then a Dense applied `trips` times by a device `while`."""

    def __init__(self, width: int, depth: int):
        super().__init__()
        self.relu_stack = nn.SequentialCell([layer for _ in range(depth)
                                             for layer in (nn.Dense(width, width), nn.ReLU())])
        self.tanh_stack = nn.SequentialCell([layer for _ in range(depth)
                                             for layer in (nn.Dense(width, width), nn.Tanh())])
        self.refine = nn.Dense(width, width, activation="tanh")

    def construct(self, x, trips):
        if x.mean() > 0:
            y = self.relu_stack(x)
        else:
            y = self.tanh_stack(x)
        i = ops.zeros((), ms.int32)
        while i < trips:
            y = self.refine(y)
            i = i + 1
        return y


@contextmanager
def if_converted() -> Iterator[None]:
    """Every capture inside if-converts its tensor `if`s (both branches + Select), as a DryRun's does."""
    saved = capture.Tracer.if_converts
    capture.Tracer.if_converts = lambda self: True
    phase.PHASE_CACHE.clear()
    try:
        yield
    finally:
        capture.Tracer.if_converts = saved
        phase.PHASE_CACHE.clear()


def measure(ex: DeviceExecutor, net: Router, x: np.ndarray, trips: int) -> dict:
    """One warm step: simulated device time, kernels and control spans from its trace, and the output."""
    args = (Tensor(x), Tensor(np.array(trips, np.int32)))
    net(*args)                                   # compiled and warm
    rt = ex.rt
    rt.start_trace()
    try:
        t0 = rt.device_time()
        out = net(*args).asnumpy()
        device_s = rt.device_time() - t0
        spans = [e for e in rt.trace_events() if e.get("ph") == "X"]
    finally:
        rt.node.attach_trace(None)
    control = {name: [e["dur"] for e in spans if e["name"] == name] for name in ("LabelSwitch", "LabelGoto")}
    kernels = [e["dur"] for e in spans if e.get("cat") == "kernel"]
    copies = [e["dur"] for e in spans if e.get("cat") == "copy" and "D2D" in e["name"]]
    return {"device_s": device_s, "kernels": len(kernels), "kernel_us": sum(kernels), "d2d_us": sum(copies), "out": out,
            "control": {name: (len(d), sum(d)) for name, d in control.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--trips", type=int, default=3)
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="bench-control-flow-")
    os.chmod(cache, 0o700)
    ex = DeviceExecutor(cache_root=cache, progress=False)
    ms.set_backend(ex)
    ms.set_context(mode=ms.GRAPH_MODE)
    rng = np.random.default_rng(0)
    net = Router(args.width, args.depth)
    base = np.abs(rng.standard_normal((args.batch, args.width))).astype(np.float32)
    print(f"control flow: MLP stacks {args.depth} x Dense({args.width}) batch {args.batch} under a tensor `if`, "
          f"then {args.trips} trips of a device `while`; simulated device time of one warm step\n")
    print("| level, branch | IfNode step | Select step | IfNode/Select | kernels IfNode / Select "
          "| kernel time IfNode / Select | D2D copies IfNode / Select | LabelSwitch n, us | LabelGoto n, us |")
    print("|---|---|---|---|---|---|---|---|---|")
    for level in LEVELS:
        ms.set_context(jit_config={"jit_level": level})
        for branch, x in (("then (ReLU)", base), ("else (Tanh)", -base)):
            phase.PHASE_CACHE.clear()
            device_if = measure(ex, net, x, args.trips)
            with if_converted():
                select = measure(ex, net, x, args.trips)
            np.testing.assert_allclose(device_if["out"], select["out"], rtol=1e-5, atol=1e-6)
            (ns, s_us), (ng, g_us) = device_if["control"]["LabelSwitch"], device_if["control"]["LabelGoto"]
            print(f"| {level}, {branch} | {device_if['device_s'] * 1e6:.1f} us | {select['device_s'] * 1e6:.1f} us | "
                  f"{device_if['device_s'] / select['device_s']:.2f} | {device_if['kernels']} / {select['kernels']} | "
                  f"{device_if['kernel_us']:.1f} / {select['kernel_us']:.1f} us | "
                  f"{device_if['d2d_us']:.1f} / {select['d2d_us']:.1f} us | {ns}, {s_us:.1f} | {ng}, {g_us:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
