"""Graph compile time vs graph size, per phase: is every phase near-linear in nodes?

Builds synthetic training steps through the front end (DryRun: abstract weights, no kernel computed):

* ``mlp``: a chain of N blocks (Dense + ReLU), MSE loss, Momentum;
* ``lstm``: an LSTMCell unrolled over a sequence of S steps (the shape of issue 24's measurement:
  6.4 / 32.8 / 176.6 CPU s at S = 25 / 50 / 100), a Dense head, Momentum.

Each is captured once and compiled at O0/O1/O2, with each phase of ``graph.plan.compile_graph`` timed
on its own, in process CPU seconds (the machine is shared: CPU time is steadier than wall time):
capture, structure hash, each graph pass, execution order, deferral to first use, stream
assignment, kernel signatures, memory report, the memory plan (O2 static / O0-O1 release points and
peak), and the lowering's event slots). Printed: nodes (captured / after the passes) and seconds per
phase, then the growth exponent of each phase between successive sizes, log(t2/t1) / log(n2/n1) on
captured nodes (1 = linear, 2 = quadratic). Phases under ``NOISE_S`` get no exponent (timer noise).

    .venv/bin/python bench/bench_compile_scaling.py                       # mlp + lstm, O0/O1/O2
    .venv/bin/python bench/bench_compile_scaling.py --case lstm --sizes 25,50,100 --levels O2
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# Default sizes: blocks of the MLP chain / steps of the LSTM; ~1k to ~100k+ captured nodes.
DEFAULT_SIZES = {"mlp": (50, 200, 800, 3200), "lstm": (25, 50, 100, 400)}
WIDTH, BATCH = 16, 4          # tiny tensors: only the graph's size matters in a DryRun compile
NOISE_S = 0.02                # phases faster than this at both sizes get no exponent


def build(case: str, size: int):
    """(train step cell, input arrays) of ``case`` at ``size``."""
    from ascendemu.frontend import nn, ops

    if case == "mlp":
        net = nn.SequentialCell([nn.SequentialCell([nn.Dense(WIDTH, WIDTH), nn.ReLU()]) for _ in range(size)])
        loss = nn.WithLossCell(net, nn.MSELoss())
        x = np.zeros((BATCH, WIDTH), np.float32)
        return nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), 0.01, 0.9)), (x, x)

    class Unrolled(nn.Cell):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(WIDTH, WIDTH)
            self.head = nn.Dense(WIDTH, 1)

        def construct(self, xs):
            h = c = ops.zeros((BATCH, WIDTH), xs.dtype)
            for t in range(size):
                h, c = self.cell(xs[t], (h, c))
            return self.head(h)

    net = Unrolled()
    loss = nn.WithLossCell(net, nn.MSELoss())
    xs = np.zeros((size, BATCH, WIDTH), np.float32)
    return nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), 0.01, 0.9)), \
        (xs, np.zeros((BATCH, 1), np.float32))


def compile_phases(graph, level: str) -> tuple[dict[str, float], int]:
    """``compile_graph(graph, level)`` phase by phase: (seconds per phase, nodes after the passes)."""
    from ascendemu.graph import passes
    from ascendemu.graph.memory_plan import ALIGN, peak_memory, release_after, static_plan
    from ascendemu.graph.memory_report import memory_report
    from ascendemu.graph.plan import default_max_streams
    from ascendemu.graph.schedule import event_slots

    times: dict[str, float] = {}

    def timed(name, fn, *args):
        t0 = time.process_time()
        out = fn(*args)
        times[name] = times.get(name, 0.0) + time.process_time() - t0
        return out

    timed("hash", graph.structure_hash)
    g = timed("copy", graph.copy)
    g.outputs = g.outputs + [v for v in g.updates.values() if v not in g.outputs]
    g = timed("cse", passes.eliminate_common_subexpressions, g)
    g = timed("no_task", passes.remove_no_task, g)
    if level in ("O1", "O2"):
        g = timed("fuse_elem", passes.fuse_elementwise, g)
        g = timed("fuse_epi", passes.fuse_epilogues, g)
        g = timed("fuse_norm", passes.fuse_norm_programs, g)
    node_order = timed("order", passes.order, g, passes.DEFAULT_ORDER_POLICY)
    node_order = timed("defer", passes.defer_to_first_use, g, node_order)
    streams = timed("streams", passes.assign_streams, g, node_order, default_max_streams(level))
    nodes = {n.id: n for n in g.nodes}
    timed("signatures", lambda: [nodes[nid].signature(g) for nid in node_order])
    timed("mem_report", memory_report, g, node_order)
    if level == "O2":
        timed("mem_plan", static_plan, g, node_order, streams.stream_of, ALIGN)
    else:
        timed("mem_plan", lambda: (release_after(g, node_order), peak_memory(g, node_order, ALIGN)))
    timed("events", event_slots, streams.schedule)
    return times, len(g.nodes)


def exponent(n1: int, t1: float, n2: int, t2: float) -> str:
    if max(t1, t2) < NOISE_S or t1 <= 0 or n1 == n2:
        return "   -"
    return f"{math.log(t2 / t1) / math.log(n2 / n1):4.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="mlp,lstm", help="mlp, lstm or both, comma-separated")
    parser.add_argument("--sizes", default=None, help="comma-separated sizes (blocks / sequence length)")
    parser.add_argument("--levels", default="O0,O1,O2")
    opts = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from ascendemu.frontend import Tensor, context, set_backend
    from ascendemu.frontend.common.api import capture
    from ascendemu.graph.executor import DeviceExecutor

    set_backend(DeviceExecutor(dry_run=True, progress=False))
    context.set_context(mode=context.GRAPH_MODE)
    for case in opts.case.split(","):
        sizes = [int(s) for s in opts.sizes.split(",")] if opts.sizes else DEFAULT_SIZES[case]
        rows = []
        for size in sizes:
            cell, arrays = build(case, size)
            t0 = time.process_time()
            graph, _ = capture(cell, *[Tensor(a) for a in arrays])
            t_capture = time.process_time() - t0
            for level in opts.levels.split(","):
                times, kept = compile_phases(graph, level)
                rows.append((size, level, len(graph.nodes), kept, {"capture": t_capture, **times}))
        phases = list(dict.fromkeys(p for r in rows for p in r[4]))
        print(f"\n{case}: CPU seconds per phase (nodes: captured / after passes)")
        print(f"{'size':>6} {'lvl':>3} {'nodes':>13} " + " ".join(f"{p[:10]:>10}" for p in phases) + f" {'total':>8}")
        for size, level, n, kept, t in rows:
            total = sum(t.get(p, 0.0) for p in phases if p != "capture")
            print(f"{size:>6} {level:>3} {n:>6}/{kept:<6} " + " ".join(f"{t.get(p, 0.0):10.3f}" for p in phases)
                  + f" {total:8.2f}")
        print(f"{case}: growth exponent between successive sizes (1 = linear; compile total excludes capture)")
        for level in opts.levels.split(","):
            mine = [r for r in rows if r[1] == level]
            for a, b in zip(mine, mine[1:]):
                ta = {**a[4], "total": sum(v for k, v in a[4].items() if k != "capture")}
                tb = {**b[4], "total": sum(v for k, v in b[4].items() if k != "capture")}
                print(f"{a[0]:>5}->{b[0]:<5} {level} " + " ".join(
                    f"{p[:6]}={exponent(a[2], ta.get(p, 0.0), b[2], tb.get(p, 0.0))}" for p in phases + ["total"]))


if __name__ == "__main__":
    main()
