"""BatchNorm fusion at O1/O2 (graph/passes.py ``fuse_norm_programs``, kernels/ops/norm_fusion.py):
BatchNorm + (Add +) ReLU becomes one BatchNorm kernel with an epilogue, ReluGrad + BatchNormGrad one
BatchNormGrad with a prologue. The fused graph computes what the unfused one does (against it, a
float64 numpy reference and finite differences) and moves two activation passes less per fusion."""
from __future__ import annotations

import numpy as np
import pytest

from ascendemu.errors import InvalidParamError
from ascendemu.graph import passes
from ascendemu.graph.autodiff import differentiate
from ascendemu.graph.capture import Tracer
from ascendemu.graph.plan import optimize
from ascendemu.kernels.library import infer_outputs, plan_kernel
from ascendemu.kernels.signature import OpSignature, TensorDesc

from gradcheck import assert_grads_close, numeric_grads

SHAPE = (2, 3, 4, 4)
EPS = 1e-5
RNG = np.random.default_rng(23)


def _bn(x, scale, bias):
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    var = x.var(axis=(0, 2, 3), keepdims=True)
    c = (1, -1, 1, 1)
    return (x - mean) / np.sqrt(var + EPS) * scale.reshape(c) + bias.reshape(c)


def _reference(x, r, scale, bias):
    """relu(bn(relu(bn(x) + r))) in float64: a residual block's end and the next block's start."""
    a = np.maximum(_bn(x, scale, bias) + r, 0)
    return np.maximum(_bn(a, scale, bias), 0)


def _block(dtype: str = "float32", cast: bool = False):
    """The graph of _reference with its gradients wrt x, r, scale and bias (training BatchNorm).
    ``cast``: the second BatchNorm's y is cast to float16 before its ReLU (amp O2's black list)."""
    t = Tracer("bn_relu_block")
    x, r = t.input(TensorDesc(SHAPE, dtype)), t.input(TensorDesc(SHAPE, dtype))
    params = [t.input(TensorDesc((SHAPE[1],))) for _ in range(4)]
    ct = RNG.standard_normal(SHAPE).astype(dtype)
    with t.active():
        y = t.apply("BatchNorm", [x, *params], {"is_training": True})[0]
        a = t.apply("ReLU", [t.apply("Add", [y, r], {})[0]], {})[0]
        if cast:
            a = t.apply("Cast", [a], {"dst_type": "float32"})[0]
        y2 = t.apply("BatchNorm", [a, *params], {"is_training": True})[0]
        if cast:
            y2 = t.apply("Cast", [y2], {"dst_type": "float16"})[0]
        z = t.apply("ReLU", [y2], {})[0]
        grads = differentiate(t, z, [x, r, params[0], params[1]], t.literal(ct, dtype))
    t.graph.outputs = [z] + grads
    return t.graph, ct


def _inputs(dtype: str = "float32"):
    x, r = (RNG.standard_normal(SHAPE).astype(dtype) for _ in range(2))
    scale, bias = RNG.uniform(0.5, 1.5, 3).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    return [x, r, scale, bias, np.zeros(3, np.float32), np.ones(3, np.float32)]


def test_o1_fuses_bn_relu_forward_and_relugrad_backward():
    g, _ = _block()
    o1 = optimize(g, "O1")
    fused = {(n.op, "epilogue" in n.attrs, "prologue" in n.attrs) for n in o1.nodes}
    bns = [n for n in o1.nodes if n.op == "BatchNorm"]
    assert [n.attrs["epilogue"] for n in bns] == [(("Add", ("in", 0), ("in", 1)), ("ReLU", ("t", 0))),
                                                  (("ReLU", ("in", 0)),)]
    assert len(bns[0].inputs) == 6                     # x, scale, bias, mean, variance and the residual
    # the second block's ReluGrad feeds its BatchNormGrad alone; the first's is also r's gradient
    grads = [n for n in o1.nodes if n.op == "BatchNormGrad"]
    assert [n.attrs.get("prologue") for n in grads] == [(("ReluGrad", ("in", 0), ("in", 1)),), None]
    assert ("BatchNormGrad", False, True) in fused
    assert [n.op for n in o1.nodes].count("ReLU") == 0 and [n.op for n in o1.nodes].count("ReluGrad") == 1
    assert len(optimize(g, "O0").nodes) - len(o1.nodes) == 3 + 1        # Add+ReLU, ReLU; one ReluGrad


def test_fused_block_computes_the_unfused_values_and_gradients(ex):
    g, ct = _block()
    ins = _inputs()
    o0 = ex.run_graph(g, ins, "O0")
    for level in ("O1", "O2"):
        for got, want in zip(ex.run_graph(g, ins, level), o0):
            np.testing.assert_array_equal(got, want)   # the same float32 operations, fused
    x, r, scale, bias = (a.astype(np.float64) for a in ins[:4])
    np.testing.assert_allclose(o0[0], _reference(x, r, scale, bias), rtol=1e-5, atol=1e-5)
    assert_grads_close(o0[1:], numeric_grads(_reference, [x, r, scale, bias], ct))


def test_float16_epilogue_stores_the_cast_result(ex):
    """amp O2: a float32 BatchNorm's y cast to float16 and ReLU'd: the Cast joins the epilogue, whose
    store rounds to float16 as the unfused Cast did."""
    g, _ = _block("float16", cast=True)
    o1 = optimize(g, "O1")
    second = [n for n in o1.nodes if n.op == "BatchNorm"][1]
    assert second.attrs["epilogue_type"] == "float16"
    ins = _inputs("float16")
    for got, want in zip(ex.run_graph(g, ins, "O1"), ex.run_graph(g, ins, "O0")):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_fusion_removes_two_activation_passes_from_the_declared_bytes():
    """The fused BatchNorm's KernelCost moves the unfused pair's bytes less y's write and read."""
    g, _ = _block()
    g1 = passes.fuse_epilogues(passes.fuse_elementwise(passes.remove_no_task(g)))
    g2 = passes.fuse_norm_programs(g1)

    def cost(graph, node):
        sig = node.signature(graph)
        return plan_kernel(sig, tuple(graph.values[v] for v in node.outputs)).cost

    y = 4 * np.prod(SHAPE)
    bn, add_relu = g1.nodes[0], g1.nodes[1]
    fused = g2.nodes[0]
    assert add_relu.op == "FusedElemwise" and fused.attrs["epilogue"]
    assert cost(g1, bn).bytes + cost(g1, add_relu).bytes - cost(g2, fused).bytes == 2 * y
    assert cost(g2, fused).reread == cost(g1, bn).reread == y     # the statistics' second pass over x
    assert cost(g2, fused).vector_ops == cost(g1, bn).vector_ops + 2 * np.prod(SHAPE)


@pytest.mark.parametrize("reader", ["graph output", "second reader"])
def test_y_with_another_reader_stays_unfused(reader):
    t = Tracer("kept")
    x = t.input(TensorDesc(SHAPE))
    params = [t.input(TensorDesc((SHAPE[1],))) for _ in range(4)]
    with t.active():
        y = t.apply("BatchNorm", [x, *params], {"is_training": True})[0]
        z = t.apply("ReLU", [y], {})[0]
        other = y if reader == "graph output" else t.apply("Neg", [y], {})[0]
    t.graph.outputs = [z, other]
    assert not any("epilogue" in n.attrs for n in optimize(t.graph, "O1").nodes)


def test_epilogue_on_inference_batchnorm_is_refused():
    """Only training BatchNorm takes a program: inference BatchNorm is element-wise and fuses as such."""
    x, c = TensorDesc(SHAPE), TensorDesc((SHAPE[1],))
    sig = OpSignature("BatchNorm", (x, c, c, c, c), (("epilogue", (("ReLU", ("in", 0)),)), ("is_training", False)))
    with pytest.raises(InvalidParamError, match="needs is_training=True"):
        infer_outputs(sig)
