"""Conv2D + BNTrainingReduce at O1/O2 (graph/passes.py ``fuse_conv_bn_reduce``, MindSpore's Ascend buffer
fusion ConvBnReduceFusionPass): a training BatchNorm whose x only a Conv2D makes (and only the BatchNorm and
its grad read) takes its statistics from the convolution, so its KernelCost loses the second pass over x and
the convolution's gains the float32 channel sums. Oracles: bytes and element-ops counted by hand, and the
plain kernels' generated code (the fusion changes no value)."""
from __future__ import annotations

import numpy as np
from ascendemu.graph import passes
from ascendemu.graph.autodiff import differentiate
from ascendemu.graph.capture import Tracer
from ascendemu.graph.plan import optimize
from ascendemu.kernels.library import plan_kernel
from ascendemu.kernels.ops.norm_fusion import REDUCES_OUTPUT, STATS_FROM_CONV
from ascendemu.kernels.signature import TensorDesc

N, C, H, W, OC = 2, 3, 6, 6, 4
Y_SHAPE = (N, OC, H - 2, W - 2)          # 3x3 'valid' convolution
RNG = np.random.default_rng(5)


def _conv_bn(extra_reader: bool = False, grads: bool = True):
    """relu(bn(conv(x, w))), with its gradients wrt x and w when ``grads``; ``extra_reader``: the
    convolution's output is also a graph output (a reader MindSpore's pattern does not allow)."""
    t = Tracer("conv_bn")
    x, w = t.input(TensorDesc((N, C, H, W))), t.input(TensorDesc((OC, C, 3, 3)))
    params = [t.input(TensorDesc((OC,))) for _ in range(4)]
    ct = RNG.standard_normal(Y_SHAPE).astype(np.float32)
    with t.active():
        y = t.apply("Conv2D", [x, w], {"out_channel": OC, "kernel_size": (3, 3)})[0]
        z = t.apply("ReLU", [t.apply("BatchNorm", [y, *params], {"is_training": True})[0]], {})[0]
        dxw = differentiate(t, z, [x, w], t.literal(ct, "float32")) if grads else []
    t.graph.outputs = [z] + dxw + ([y] if extra_reader else [])
    return t.graph


def _cost(graph, node):
    return plan_kernel(node.signature(graph), tuple(graph.values[v] for v in node.outputs)).cost


def test_o1_marks_the_conv_and_its_batchnorm_and_their_costs_move_one_pass_of_y():
    g = _conv_bn()
    before = passes.fuse_norm_programs(passes.fuse_epilogues(passes.fuse_elementwise(passes.remove_no_task(g))))
    after = passes.fuse_conv_bn_reduce(before)
    conv0, bn0 = (next(n for n in before.nodes if n.op == op) for op in ("Conv2D", "BatchNorm"))
    conv1, bn1 = (next(n for n in after.nodes if n.op == op) for op in ("Conv2D", "BatchNorm"))
    assert conv1.attrs[REDUCES_OUTPUT] and bn1.attrs[STATS_FROM_CONV] and len(after.nodes) == len(before.nodes)
    y_bytes, y_size = 4 * int(np.prod(Y_SHAPE)), int(np.prod(Y_SHAPE))
    # the BatchNorm: no second pass over y for its statistics (it read y twice before), the rest as it was
    assert (_cost(before, bn0).reread, _cost(after, bn1).reread) == (y_bytes, 0)
    assert _cost(after, bn1).bytes == _cost(before, bn0).bytes
    # the convolution: y and y^2 summed per channel in float32 while y is on chip, two float32 sums written
    c0, c1 = _cost(before, conv0), _cost(after, conv1)
    assert (c1.vector_ops - c0.vector_ops, c1.bytes - c0.bytes) == (4 * y_size, 2 * 4 * OC)
    assert c1.cube_flops == c0.cube_flops and c1.gemm == c0.gemm
    assert "reduces_output" not in str([n.attrs for n in optimize(g, "O0").nodes])      # O0 fuses nothing


def test_a_conv_output_with_another_reader_is_not_fused():
    g = optimize(_conv_bn(extra_reader=True), "O2")
    assert not any(REDUCES_OUTPUT in n.attrs or STATS_FROM_CONV in n.attrs for n in g.nodes)


def test_the_marked_kernels_are_the_plain_kernels_source_for_source():
    """The fusion changes what the chip moves, not what is computed: the marked convolution and
    BatchNorm emit exactly the plain kernels' code (so the fused graph's values are the unfused one's)."""
    g = _conv_bn(grads=False)
    before = passes.fuse_norm_programs(passes.fuse_epilogues(passes.fuse_elementwise(passes.remove_no_task(g))))
    after = passes.fuse_conv_bn_reduce(before)
    for op in ("Conv2D", "BatchNorm"):
        plain, marked = (plan_kernel(next(n for n in graph.nodes if n.op == op).signature(graph))
                         for graph in (before, after))
        assert marked.cost != plain.cost
        assert marked.source().replace(marked.func_name, "f") == plain.source().replace(plain.func_name, "f")
