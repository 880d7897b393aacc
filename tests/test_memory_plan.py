"""The execution order the memory plan is made for: nodes deferred to their first use.

Kahn's order runs a node as soon as its inputs exist, so a training step's gradient masks (ReLU6's
``Cast(Greater(y, 0))``, ready when the forward ends) sat in memory through the whole forward rest
and backward: SSD-MobileNetV1-FPN at batch 32 planned 36.3 GiB, more than a 32 GiB 910A
(bench/bench_memory_plan.py). The small graphs here have peaks computed by hand, in MiB.
"""
from __future__ import annotations

import numpy as np

from ascendemu.graph.ir import Graph
from ascendemu.graph.memory_plan import peak_memory, static_plan
from ascendemu.graph.passes import defer_to_first_use, order
from ascendemu.graph.plan import compile_graph
from ascendemu.kernels.signature import TensorDesc

MiB = 1 << 20
N = MiB // 4              # float32 elements in 1 MiB; a bool mask of them is 0.25 MiB


def _mask_graph() -> tuple[Graph, dict[str, int]]:
    """a = Exp(x) is read by a three-branch forward (f1..f5) and, last, by out; the mask chain
    g = Greater(a, 0), m = Cast(g) is captured first but read only by d, near the end."""
    g = Graph("mask")
    x = g.add_input(TensorDesc((N,)))
    zero = g.add_constant("const0", np.float32(0.0), False)
    ids = {}

    def node(name, op, *inputs, **attrs):
        n = g.add_node(op, list(inputs), attrs)
        ids[name] = n.id
        return n.outputs[0]

    a = node("a", "Exp", x)
    m = node("m", "Cast", node("g", "Greater", a, zero), dst_type="float32")
    f1, f2, f3 = node("f1", "Neg", a), node("f2", "Abs", a), node("f3", "Sqrt", a)
    f5 = node("f5", "Add", node("f4", "Add", f1, f2), f3)
    g.outputs = [node("out", "Mul", node("d", "Mul", f5, m), a)]
    return g, ids


def test_gradient_mask_waits_for_its_reader():
    g, ids = _mask_graph()
    kahn = order(g, "dfs")
    names = {v: k for k, v in ids.items()}
    # dfs: a makes g, f1, f2, f3 ready; g (captured first) runs first and makes m ready
    assert [names[n] for n in kahn] == ["a", "g", "m", "f1", "f2", "f4", "f3", "f5", "d", "out"]
    # m (1 MiB) lives from position 2 to d: beside a, f1, f2, f4 at f4 (5) and a, f4, f3, f5 at f5 (5)
    assert peak_memory(g, kahn) == 5 * MiB
    deferred = defer_to_first_use(g, kahn)
    assert [names[n] for n in deferred] == ["a", "f1", "f2", "f4", "f3", "f5", "g", "m", "d", "out"]
    # now the widest points hold four values: a, f1, f2, f4 / a, f4, f3, f5 / a, f5, m, d
    assert peak_memory(g, deferred) == 4 * MiB
    assert static_plan(g, deferred).size == 4 * MiB           # one stream: the plan reaches the peak
    assert compile_graph(g, "O0").lower_bound == 4 * MiB      # compile_graph plans this order


def test_a_move_that_would_raise_the_peak_is_not_made():
    """s = ReduceSum(a) (4 bytes) is ready early and read only at the end. Deferring it makes it the
    last reader of a, keeping a (1 MiB) alive beside b and c: 3 MiB instead of 2 MiB + 4 B."""
    g = Graph("reduce")
    x = g.add_input(TensorDesc((N,)))
    a = g.add_node("Exp", [x]).outputs[0]
    s = g.add_node("ReduceSum", [a], {"axis": (0,), "keep_dims": False}).outputs[0]
    c = g.add_node("Abs", [g.add_node("Neg", [a]).outputs[0]]).outputs[0]
    g.outputs = [g.add_node("Mul", [c, s]).outputs[0]]
    kahn = order(g, "dfs")
    assert peak_memory(g, kahn) == 2 * MiB + 4                # a, s, Neg's output while Neg runs
    assert defer_to_first_use(g, kahn) == kahn
