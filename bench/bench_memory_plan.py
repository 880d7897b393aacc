"""Static O2 memory plans against the chip: planned workspace vs the bounds no plan can beat vs HBM.

For each case the training step is captured through the front end (``import mindspore`` served as in
``ascendemu run``), put through the O2 graph passes (``graph.plan.optimize``) and planned twice, on
4 streams as compile_graph does:

* before: Kahn's dfs execution order as it is (``passes.order``), the plan the compiler used to make;
* after: the same order with nodes deferred to their first use (``passes.defer_to_first_use``).

Printed per plan: the static workspace (``static_plan``), the single-stream peak of the order (no
layout of that order is smaller), the concurrency-aware bound (the heaviest set of values that may
be alive together on the plan's streams: exact up to ``CLIQUE_MAX_VALUES`` values or when the plan
reaches the peak, else only known to lie between the peak and the plan, ">= peak"), what
stays on the device besides (weights, optimizer state, the step's inputs: ``memory_report``) and
the device preset's HBM.

The published case: SSD-MobileNetV1-FPN (bench/ssd_mobilenet_v1_fpn.py, mindspore-ai/models
official/cv/SSD), batch 32 per card, 640x640, float32, trained on a 32 GiB Ascend 910A.

Run: python bench/bench_memory_plan.py [--only ssd,lenet5]   (about 3 minutes on 2 cores)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STREAMS = 4          # compile_graph's default for O2 (graph.plan.DEFAULT_O2_STREAMS)


def _ssd():
    sys.path.insert(0, str(ROOT / "bench"))
    import ssd_mobilenet_v1_fpn as ssd
    return "SSD-MobileNetV1-FPN train step, batch 32, 640x640, fp32", *ssd.build(32, 640)


def _lenet5():
    sys.path.insert(0, str(ROOT))
    import mindspore.nn as nn
    from examples.networks import LeNet5
    net = LeNet5()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    step = nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))
    return ("LeNet-5 train step, batch 256", step,
            (np.zeros((256, 1, 32, 32), np.float32), np.zeros((256,), np.int32)))


CASES = {"ssd": _ssd, "lenet5": _lenet5}


def plan_both(graph) -> dict:
    """The O2 graph of ``graph`` planned under the order before and after deferral."""
    from ascendemu.graph.memory_plan import static_plan
    from ascendemu.graph.memory_report import PERSISTENT, memory_report
    from ascendemu.graph.passes import assign_streams, defer_to_first_use, order
    from ascendemu.graph.plan import optimize

    g = optimize(graph, "O2")
    kahn = order(g, "dfs")
    report = memory_report(g, kahn)
    result = {"nodes": len(g.nodes), "persistent": sum(report.bytes[k] for k in PERSISTENT)}
    for label, node_order in (("before", kahn), ("after", defer_to_first_use(g, kahn))):
        t0 = time.perf_counter()
        streams = assign_streams(g, node_order, STREAMS)
        plan = static_plan(g, node_order, streams.stream_of)
        result[label] = (plan.size, plan.lower_bound, plan.concurrent_bound, time.perf_counter() - t0)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(CASES), help=f"cases, comma-separated ({', '.join(CASES)})")
    opts = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from ascendemu.cli.run import install_mindspore_alias
    from ascendemu.device.spec import get_spec
    from ascendemu.frontend import Tensor, context
    from ascendemu.frontend.common.api import capture
    from ascendemu.units import format_bytes

    install_mindspore_alias()
    context.set_context(mode=context.GRAPH_MODE)
    spec = get_spec()
    print(f"device {spec.name}: HBM {format_bytes(spec.hbm_bytes)}; O2 plans on {STREAMS} streams")
    print(f"{'case':58} {'order':7} {'planned':>10} {'peak':>10} {'concurrent':>10} {'+ held':>9} "
          f"{'= total':>10} {'fits':>5} {'plan s':>7}")
    for name in opts.only.split(","):
        label, cell, inputs = CASES[name]()
        graph, _ = capture(cell, *[Tensor(a) for a in inputs])
        r = plan_both(graph)
        for when in ("before", "after"):
            size, peak, concurrent, secs = r[when]
            total = size + r["persistent"]
            case = label if when == "before" else f"  ({r['nodes']} kernels)"
            print(f"{case:58} {when:7} "
                  f"{format_bytes(size):>10} {format_bytes(peak):>10} "
                  f"{format_bytes(concurrent) if concurrent is not None else '>= peak':>10} "
                  f"{format_bytes(r['persistent']):>9} {format_bytes(total):>10} "
                  f"{'yes' if total <= spec.hbm_bytes else 'NO':>5} {secs:7.1f}")


if __name__ == "__main__":
    main()
