"""A skipped-on-overflow update decided inside the optimizer's own kernel (graph.passes.fuse_conditional_updates):
MindSpore's ``if not overflow: optimizer(grads)`` is a branch with no pass of its own, where the capture's
``Select(skip, old, new)`` per parameter and state would be one. Oracles: the fused graph's structure and declared
bytes by hand, and its values against numpy's ApplyMomentum (MindSpore's formula) and, when skipped, the old
values bit for bit."""
from __future__ import annotations

import numpy as np

from ascendemu.graph import passes
from ascendemu.graph.ir import Graph
from ascendemu.kernels.library import plan_kernel
from ascendemu.kernels.signature import TensorDesc

SHAPE = (8, 16)
LR, MOMENTUM = 0.1, 0.9


def _step() -> tuple[Graph, np.ndarray, np.ndarray]:
    """ApplyMomentum on (w, accum) whose two updates are kept unless ``skip`` (updates_unless' form)."""
    rng = np.random.default_rng(0)
    w0, a0 = rng.standard_normal(SHAPE).astype(np.float32), rng.standard_normal(SHAPE).astype(np.float32)
    g = Graph("momentum_unless_overflow")
    w, acc = g.add_constant("w", w0, True), g.add_constant("moments.w", a0, True)
    lr = g.add_constant("lr", np.float32(LR), False)
    mom = g.add_constant("momentum", np.float32(MOMENTUM), False)
    grad, skip = g.add_input(TensorDesc(SHAPE, "float32")), g.add_input(TensorDesc((), "bool"))
    w_new, a_new = g.add_node("ApplyMomentum", [w, acc, lr, grad, mom]).outputs
    kept_w = g.add_node("Select", [skip, w, w_new]).outputs[0]
    kept_a = g.add_node("Select", [skip, acc, a_new]).outputs[0]
    g.add_update(w, kept_w)
    g.add_update(acc, kept_a)
    g.outputs = [kept_w, kept_a]
    return g, w0, a0


def _cost(graph: Graph, node):
    return plan_kernel(node.signature(graph), tuple(graph.values[v] for v in node.outputs)).cost


def test_the_selects_join_the_optimizer_program():
    g, _, _ = _step()
    fused = passes.fuse_conditional_updates(g)
    ops = [n.op for n in fused.nodes]
    assert ops == ["Cast", "FusedElemwise"]                 # the flag cast once, one kernel for the update
    program = fused.nodes[1]
    assert program.id == g.nodes[0].id and program.outputs == tuple(g.outputs)
    assert program.inputs == g.nodes[0].inputs + fused.nodes[0].outputs
    # bytes by hand: the program's one pass and a 4-byte flag; each Select's pass (read old and new, write) gone
    momentum, select = _cost(g, g.nodes[0]), _cost(g, g.nodes[1])
    assert _cost(fused, program).bytes == momentum.bytes + 4
    assert select.bytes >= 3 * 4 * np.prod(SHAPE)


def test_fused_update_values_match_numpy_and_a_skip_keeps_them(ex):
    g, w0, a0 = _step()
    grad = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    accum = a0 * np.float32(MOMENTUM) + grad                # MindSpore's ApplyMomentum
    want = (w0 - np.float32(LR) * accum, accum)
    got = ex.run_graph(g, [grad, np.bool_(False)], "O2")
    for x, y in zip(got, want):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)
    g, w0, a0 = _step()
    kept = ex.run_graph(g, [grad, np.bool_(True)], "O2")
    np.testing.assert_array_equal(kept[0], w0)
    np.testing.assert_array_equal(kept[1], a0)
