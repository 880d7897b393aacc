"""Graph IR, passes, memory plans and CompiledGraph, checked against hand-computed numbers and a numpy
evaluator of the IR (defined here; tests/test_frontend.py reuses it as its reference backend)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascendemu.errors import InvalidParamError  # noqa: E402
from ascendemu.frontend import Tensor, capture, set_seed  # noqa: E402
from ascendemu.graph import passes  # noqa: E402
from ascendemu.graph.ir import Graph, OpNode  # noqa: E402
from ascendemu.graph.memory_plan import lifetimes, release_after, static_plan  # noqa: E402
from ascendemu.graph.plan import CompiledGraph, compile_graph  # noqa: E402
from ascendemu.graph.schedule import event_slots  # noqa: E402
from ascendemu.kernels.signature import TensorDesc  # noqa: E402
from examples.networks import MLP, BasicBlock, LeNet5, ResNet18, TransformerEncoderLayer  # noqa: E402

GiB = 1 << 30

# ------------------------------------------------------------------------------ numpy reference


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


UNARY = {"Square": lambda x: x * x, "Neg": np.negative, "Abs": np.abs, "Exp": np.exp, "Log": np.log,
         "Sqrt": np.sqrt, "Rsqrt": lambda x: 1 / np.sqrt(x), "ReLU": lambda x: np.maximum(x, 0),
         "Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Tanh": np.tanh, "GeLU": _gelu}
BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Maximum": np.maximum,
          "Minimum": np.minimum, "Pow": np.power, "Equal": np.equal, "NotEqual": np.not_equal,
          "Greater": np.greater, "GreaterEqual": np.greater_equal, "Less": np.less, "LessEqual": np.less_equal}


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v[-2:])


def _same_pads(size, k, s):
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def _conv2d(x, w, a):
    kh, kw = w.shape[2:]
    sh, sw = _pair(a.get("stride", 1))
    dh, dw = _pair(a.get("dilation", 1))
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    mode = a.get("pad_mode", "valid")
    if mode == "pad":
        pt, pb, pl, pr = a["pad"] if isinstance(a["pad"], tuple) else (a["pad"],) * 4
    elif mode == "same":
        (pt, pb), (pl, pr) = _same_pads(x.shape[2], ekh, sh), _same_pads(x.shape[3], ekw, sw)
    else:
        pt = pb = pl = pr = 0
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    n, c, h, wd = x.shape
    oh, ow = (h - ekh) // sh + 1, (wd - ekw) // sw + 1
    g = a.get("group", 1)
    oc = w.shape[0]
    out = np.zeros((n, oc, oh, ow), np.float64)
    for gi in range(g):
        xs = x[:, gi * c // g:(gi + 1) * c // g]
        ws = w[gi * oc // g:(gi + 1) * oc // g]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, gi * oc // g:(gi + 1) * oc // g] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    return out.astype(x.dtype)


def _pool(x, a, op):
    kh, kw = _pair(a["kernel_size"])
    sh, sw = _pair(a["strides"])
    if a["pad_mode"] == "SAME":
        (pt, pb), (pl, pr) = _same_pads(x.shape[2], kh, sh), _same_pads(x.shape[3], kw, sw)
        x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=-np.inf)
    oh, ow = (x.shape[2] - kh) // sh + 1, (x.shape[3] - kw) // sw + 1
    windows = [x[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw] for i in range(kh) for j in range(kw)]
    return np.max(windows, axis=0) if op == "MaxPool" else np.mean(windows, axis=0)


def _program(program, ins):
    results = []
    for step in program:
        args = [ins[o[1]] if o[0] == "in" else results[o[1]] if o[0] == "t" else o[1] for o in step[1:]]
        op = step[0]
        results.append(args[0] if op == "Cast" else UNARY[op](args[0]) if op in UNARY else BINARY[op](*args))
    return results[-1]


def eval_op(op, attrs, xs, out_descs):
    """Reference result of one op (a list of arrays, one per output desc)."""
    a = attrs
    if op in UNARY:
        r = [UNARY[op](xs[0])]
    elif op in BINARY:
        r = [BINARY[op](xs[0], xs[1])]
    elif op == "Cast":
        r = [xs[0]]
    elif op == "BiasAdd":
        r = [xs[0] + xs[1].reshape((1, -1) + (1,) * (xs[0].ndim - 2))]
    elif op == "FusedElemwise":
        r = [_program(a["program"], xs)]
    elif op in ("Softmax", "LogSoftmax"):
        ax = a.get("axis", -1)
        e = np.exp(xs[0] - xs[0].max(axis=ax, keepdims=True))
        sm = e / e.sum(axis=ax, keepdims=True)
        r = [sm if op == "Softmax" else np.log(sm)]
    elif op in ("ReduceSum", "ReduceMean", "ReduceMax"):
        axes = tuple(a.get("axis", ())) or None
        fn = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max}[op]
        r = [fn(xs[0], axis=axes, keepdims=a.get("keep_dims", False))]
    elif op in ("MatMul", "BatchMatMul"):
        x, y = xs[:2]
        x = np.swapaxes(x, -1, -2) if a.get("transpose_a") else x
        y = np.swapaxes(y, -1, -2) if a.get("transpose_b") else y
        r = [np.matmul(x, y)]
        if "epilogue" in a:                   # the elementwise program applied to the product
            r = [_program(a["epilogue"], [r[0].astype(out_descs[0].dtype)] + list(xs[2:]))]
    elif op == "Conv2D":
        r = [_conv2d(xs[0], xs[1], a)]
    elif op in ("MaxPool", "AvgPool"):
        r = [_pool(xs[0], a, op)]
    elif op == "BatchNorm":
        x, s, b, m, v = xs
        shape = (1, -1) + (1,) * (x.ndim - 2)
        r = [(x - m.reshape(shape)) / np.sqrt(v.reshape(shape) + a.get("epsilon", 1e-5)) * s.reshape(shape)
             + b.reshape(shape)]
    elif op == "LayerNorm":
        x, gamma, beta = xs
        axis = a["begin_norm_axis"] % x.ndim
        axes = tuple(range(axis, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        rstd = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + a["epsilon"])
        r = [(x - mean) * rstd * gamma + beta, mean, rstd]
    elif op == "Transpose":
        r = [np.transpose(xs[0], a["perm"])]
    elif op == "Concat":
        r = [np.concatenate(xs, axis=a.get("axis", 0))]
    elif op == "Gather":
        r = [np.take(xs[0], xs[1], axis=a.get("axis", 0))]
    elif op in ("Reshape", "ExpandDims", "Squeeze", "Flatten"):
        r = [xs[0]]
    else:
        raise NotImplementedError(op)
    return [np.asarray(v).astype(d.dtype).reshape(d.shape) for v, d in zip(r, out_descs)]


def eval_graph(graph: Graph, inputs: list[np.ndarray]) -> list[np.ndarray]:
    env = dict(zip(graph.inputs, inputs))
    env.update({v: c.data for v, c in graph.constants.items()})

    def get(v):
        if v in env:
            return env[v]
        return env[graph.aliases[v]].reshape(graph.values[v].shape)

    for n in graph.nodes:
        outs = eval_op(n.op, n.attrs, [get(v) for v in n.inputs], [graph.values[v] for v in n.outputs])
        env.update(zip(n.outputs, outs))
    return [get(v) for v in graph.outputs]


class NumpyBackend:
    """The reference backend: runs ops and graphs with the numpy evaluator."""

    def __init__(self):
        self.graphs = []

    def run_op(self, sig, inputs, outputs):
        return eval_op(sig.op, dict(sig.attrs), inputs, outputs)

    def run_graph(self, graph, inputs, jit_level):
        self.graphs.append((graph, jit_level))
        return eval_graph(graph, inputs)


# ------------------------------------------------------------------------------------ helpers

def _capture(net, *shapes):
    return capture(net, *[Tensor(np.zeros(s, np.float32)) for s in shapes])[0]


def _rand_inputs(graph, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(graph.values[v].shape).astype(graph.values[v].dtype) for v in graph.inputs]


NETWORKS = {
    # name: (factory, input shape, captured nodes, after no-task, after fusion)
    "mlp": (MLP, (4, 784), 8, 8, 6),
    "lenet5": (LeNet5, (2, 1, 32, 32), 15, 14, 12),
    "basic_block": (lambda: BasicBlock(8, 16, stride=2), (2, 8, 12, 12), 9, 9, 8),
    "transformer": (lambda: TransformerEncoderLayer(32, 4, 64), (2, 6, 32), 41, 25, 24),
}


@pytest.fixture(scope="module")
def graphs():
    set_seed(7)
    return {name: _capture(f(), shape) for name, (f, shape, *_rest) in NETWORKS.items()}


# ------------------------------------------------------------------------------------ capture

def test_mlp_capture_shapes(graphs):
    g = graphs["mlp"]
    # Dense = MatMul(transpose_b) + BiasAdd [+ ReLU]: 3 + 3 + 2 nodes.
    assert [n.op for n in g.nodes] == ["MatMul", "BiasAdd", "ReLU"] * 2 + ["MatMul", "BiasAdd"]
    assert [g.values[n.outputs[0]].shape for n in g.nodes if n.op == "MatMul"] == [(4, 256), (4, 128), (4, 10)]
    assert g.nodes[0].full_name == "Default/layers-SequentialCell/0-Dense/MatMul-op1"
    assert g.nodes[2].full_name == "Default/layers-SequentialCell/0-Dense/activation-ReLU/ReLU-op3"
    assert sorted(c.name for c in g.constants.values()) == sorted(
        ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias", "head.weight", "head.bias"])
    assert all(c.is_parameter for c in g.constants.values())


def test_lenet5_capture_shapes(graphs):
    g = graphs["lenet5"]
    ops = [n.op for n in g.nodes]
    assert ops == ["Conv2D", "ReLU", "MaxPool", "Conv2D", "ReLU", "MaxPool", "Flatten",
                   "MatMul", "BiasAdd", "ReLU", "MatMul", "BiasAdd", "ReLU", "MatMul", "BiasAdd"]
    shapes = [g.values[n.outputs[0]].shape for n in g.nodes]
    # 32 -5+1 = 28 -> pool 14 -> 14-5+1 = 10 -> pool 5; 16*5*5 = 400 -> 120 -> 84 -> 10
    assert shapes[:7] == [(2, 6, 28, 28), (2, 6, 28, 28), (2, 6, 14, 14), (2, 16, 10, 10), (2, 16, 10, 10),
                          (2, 16, 5, 5), (2, 400)]
    assert shapes[-1] == (2, 10)
    assert g.values[g.outputs[0]] == TensorDesc((2, 10), "float32")


def test_basic_block_capture_shapes(graphs):
    g = graphs["basic_block"]
    assert sorted(n.op for n in g.nodes) == sorted(["Conv2D", "BatchNorm"] * 3 + ["ReLU", "Add", "ReLU"])
    # stride 2, pad 1, 3x3: (12 + 2 - 3) // 2 + 1 = 6; the 1x1/2 shortcut gives 6 as well
    assert {g.values[n.outputs[0]].shape for n in g.nodes} == {(2, 16, 6, 6)}
    add = next(n for n in g.nodes if n.op == "Add")
    assert add.full_name == "Default/Add-op8"
    assert len(g.constants) == 3 + 3 * 4  # three conv weights, three BN (gamma, beta, mean, variance)


def test_transformer_capture_shapes(graphs):
    g = graphs["transformer"]
    count = {}
    for n in g.nodes:
        count[n.op] = count.get(n.op, 0) + 1
    # 6 Dense on 3-D input: Reshape, MatMul, BiasAdd, Reshape (+GeLU); heads: 3 x (Reshape, Transpose)
    assert count == {"Reshape": 16, "MatMul": 6, "BiasAdd": 6, "Transpose": 4, "BatchMatMul": 2, "Mul": 1,
                     "Softmax": 1, "Add": 2, "LayerNorm": 2, "GeLU": 1}
    bmm = [n for n in g.nodes if n.op == "BatchMatMul"]
    assert g.values[bmm[0].outputs[0]].shape == (2, 4, 6, 6)      # (batch, heads, seq, seq)
    assert g.values[bmm[1].outputs[0]].shape == (2, 4, 6, 8)      # (batch, heads, seq, head_dim)
    assert g.values[g.outputs[0]].shape == (2, 6, 32)
    ln = [n for n in g.nodes if n.op == "LayerNorm"]
    assert [g.values[v].shape for v in ln[0].outputs] == [(2, 6, 32), (2, 6, 1), (2, 6, 1)]


def test_resnet18_node_counts():
    g = _capture(ResNet18(num_classes=10), (1, 3, 32, 32))
    # stem 4 + 3 blocks with downsample x 9 + 5 plain blocks x 7 + head (ReduceMean, Flatten, MatMul, BiasAdd)
    assert len(g.nodes) == 4 + 27 + 35 + 4 == 70
    assert g.values[g.outputs[0]].shape == (1, 10)
    assert len(passes.fuse_elementwise(passes.remove_no_task(g)).nodes) == 70 - 1 - 8


def test_structure_hash_ignores_parameter_values_but_not_shapes():
    set_seed(1)
    a = _capture(MLP(), (4, 784))
    set_seed(2)
    b = _capture(MLP(), (4, 784))
    assert a.structure_hash() == b.structure_hash()
    assert _capture(MLP(), (8, 784)).structure_hash() != a.structure_hash()
    assert _capture(MLP(hidden=(64, 128)), (4, 784)).structure_hash() != a.structure_hash()


# ------------------------------------------------------------------------------------ no-task

def test_no_task_nodes_become_aliases(graphs):
    g = graphs["transformer"]
    g0 = passes.remove_no_task(g)
    assert len(g0.nodes) == 25 and not any(n.op == "Reshape" for n in g0.nodes)
    reshapes = [n for n in g.nodes if n.op == "Reshape"]
    assert set(g0.aliases) == {n.outputs[0] for n in reshapes}
    for n in reshapes:
        root = g0.aliases[n.outputs[0]]
        assert root not in g0.aliases                      # always resolved to the root
        assert g0.values[root].nbytes == g0.values[n.outputs[0]].nbytes
    # reshape of a reshape-free value chain: the first Dense reshapes the graph input itself
    assert g0.aliases[reshapes[0].outputs[0]] == g.inputs[0]
    assert len(g.nodes) == 41                              # the input graph is unchanged
    np.testing.assert_allclose(eval_graph(g0, _rand_inputs(g))[0], eval_graph(g, _rand_inputs(g))[0], rtol=1e-6)


def test_no_task_alias_chain_resolves_to_root():
    g = Graph("chain")
    x = g.add_input(TensorDesc((2, 3, 4)))
    a = g.add_node("Flatten", [x]).outputs[0]
    b = g.add_node("ExpandDims", [a], {"axis": 0}).outputs[0]
    c = g.add_node("Squeeze", [b], {"axis": (0,)}).outputs[0]
    y = g.add_node("Exp", [c]).outputs[0]
    g.outputs = [y]
    g0 = passes.remove_no_task(g)
    assert [n.op for n in g0.nodes] == ["Exp"]
    assert g0.aliases == {a: x, b: x, c: x}
    assert g0.values[c].shape == (2, 12)


# ------------------------------------------------------------------------------------ fusion

@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_fusion_node_counts_and_numerics(graphs, name):
    _, _, captured, no_task, fused = NETWORKS[name]
    g = graphs[name]
    g0 = passes.remove_no_task(g)
    g1 = passes.fuse_elementwise(g0)
    assert (len(g.nodes), len(g0.nodes), len(g1.nodes)) == (captured, no_task, fused)
    ins = _rand_inputs(g)
    for got, want in zip(eval_graph(g1, ins), eval_graph(g0, ins)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_epilogue_fusion_absorbs_elementwise_consumers_of_matmuls(graphs, name):
    g1 = passes.fuse_elementwise(passes.remove_no_task(graphs[name]))
    g2 = passes.fuse_epilogues(g1)
    matmuls = [n for n in g1.nodes if n.op in ("MatMul", "BatchMatMul")]
    fused = [n for n in g2.nodes if "epilogue" in n.attrs]
    # every matmul whose product had a single elementwise reader of the same shape absorbed it
    consumers = g1.consumers()
    absorbable = [m for m in matmuls if len(consumers[m.outputs[0]]) == 1
                  and m.outputs[0] not in g1.outputs
                  and consumers[m.outputs[0]][0].op in passes.FUSABLE_OPS | {"FusedElemwise"}
                  and g1.values[consumers[m.outputs[0]][0].outputs[0]] == g1.values[m.outputs[0]]]
    assert len(fused) == len(absorbable) and len(g2.nodes) == len(g1.nodes) - len(fused)
    ins = _rand_inputs(graphs[name])
    for got, want in zip(eval_graph(g2, ins), eval_graph(g1, ins)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_mlp_dense_layers_become_one_kernel_each(graphs):
    g2 = passes.fuse_epilogues(passes.fuse_elementwise(passes.remove_no_task(graphs["mlp"])))
    assert [n.op for n in g2.nodes] == ["MatMul"] * 3
    assert g2.nodes[0].attrs["epilogue"] == (("Add", ("in", 0), ("in", 1)), ("ReLU", ("t", 0)))
    assert g2.nodes[-1].attrs["epilogue"] == (("Add", ("in", 0), ("in", 1)),)
    assert all(len(n.inputs) == 3 for n in g2.nodes)          # x, weight, bias


def test_fused_node_reads_distinct_external_inputs(graphs):
    g1 = passes.fuse_elementwise(passes.remove_no_task(graphs["basic_block"]))
    (fused,) = [n for n in g1.nodes if n.op == "FusedElemwise"]
    assert fused.attrs["program"] == (("Add", ("in", 0), ("in", 1)), ("ReLU", ("t", 0)))
    assert fused.full_name == "Default/FusedElemwise[Add-op8,relu-ReLU/ReLU-op9]"
    assert fused.origins == ("Default/Add-op8", "Default/relu-ReLU/ReLU-op9")
    assert len(set(fused.inputs)) == len(fused.inputs) == 2


def test_fusion_folds_scalars_and_views_bias():
    g = Graph("f")
    x = g.add_input(TensorDesc((2, 3, 4, 4)))
    b = g.add_constant("b", np.arange(3, dtype=np.float32), True)
    two = g.add_constant("const0", np.float32(2.0), False)
    y = g.add_node("BiasAdd", [x, b]).outputs[0]
    z = g.add_node("Mul", [y, two]).outputs[0]
    w = g.add_node("Mul", [z, x]).outputs[0]          # x read twice by the tree: one external input
    g.outputs = [w]
    g1 = passes.fuse_elementwise(g)
    (n,) = g1.nodes
    assert n.op == "FusedElemwise"
    assert n.attrs["program"] == (("Add", ("in", 0), ("in", 1)), ("Mul", ("t", 0), ("c", 2.0)),
                                  ("Mul", ("t", 1), ("in", 0)))
    assert n.inputs[0] == x and g1.aliases[n.inputs[1]] == b and g1.values[n.inputs[1]].shape == (3, 1, 1)
    assert two not in g1.constants                    # folded into the program
    ins = _rand_inputs(g)
    np.testing.assert_allclose(eval_graph(g1, ins)[0], eval_graph(g, ins)[0], rtol=1e-6)


def test_fusion_keeps_values_with_other_readers():
    g = Graph("f")
    x = g.add_input(TensorDesc((8,)))
    a = g.add_node("Exp", [x]).outputs[0]
    b = g.add_node("Neg", [a]).outputs[0]
    c = g.add_node("Abs", [a]).outputs[0]            # a has two readers: it must be materialised
    d = g.add_node("Add", [b, c]).outputs[0]
    e = g.add_node("Softmax", [d], {"axis": 0}).outputs[0]
    f = g.add_node("Sqrt", [e]).outputs[0]
    g.outputs = [f, b]                               # b is a graph output: materialised too
    g1 = passes.fuse_elementwise(g)
    assert [n.op for n in g1.nodes] == ["Exp", "Neg", "FusedElemwise", "Softmax", "Sqrt"]
    fused = g1.nodes[2]
    assert fused.attrs["program"] == (("Abs", ("in", 0)), ("Add", ("in", 1), ("t", 0)))
    assert fused.inputs == (a, b)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_fusion_random_elementwise_graphs_match_reference(data):
    g = Graph("rand")
    pool = [g.add_input(TensorDesc((3, 4))), g.add_input(TensorDesc((4,))), g.add_input(TensorDesc((3, 1)))]
    pool.append(g.add_constant("const0", np.float32(data.draw(st.sampled_from([0.5, 2.0, -1.5]))), False))
    unary = ["Square", "Neg", "Abs", "Exp", "Tanh", "Sigmoid", "ReLU", "GeLU"]
    binary = ["Add", "Sub", "Mul", "Maximum", "Minimum"]
    for _ in range(data.draw(st.integers(1, 10))):
        if data.draw(st.booleans()):
            op, args = data.draw(st.sampled_from(unary)), [data.draw(st.sampled_from(pool))]
        else:
            op, args = data.draw(st.sampled_from(binary)), data.draw(st.lists(st.sampled_from(pool), min_size=2,
                                                                              max_size=2))
        if all(a in g.constants for a in args):
            args[0] = pool[0]
        pool.append(g.add_node(op, args).outputs[0])
    g.outputs = [pool[-1]] + ([pool[-2]] if data.draw(st.booleans()) and pool[-2] not in g.constants else [])
    g1 = passes.fuse_elementwise(g)
    assert len(g1.nodes) <= len(g.nodes)
    for n in g1.nodes:
        n.signature(g1)  # every node, fused or not, is a valid kernel signature
    ins = _rand_inputs(g, 3)
    for got, want in zip(eval_graph(g1, ins), eval_graph(g, ins)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------------ order and peak

def seed_example() -> tuple[Graph, dict[str, int]]:
    """The seed's six kernels: kernel1 feeds kernel2, kernel4 and kernel5; kernel2 feeds kernel3;
    kernel6 joins kernel3/4/5. kernel2's output is 2 GiB, every other output 1 GiB.

    bfs: k1 k2 k4 k5 k3 k6 (the seed's BFS order); dfs: k1 k2 k3 k4 k5 k6 (the seed's DFS order).
    Live GiB while each kernel runs (inputs and outputs alive; freed after the last reader):
      bfs  k1:1  k2:1+2=3  k4:3+1=4  k5:4+1=5 (then k1 freed)  k3:2+1+1+1=5 (k2 freed)  k6:1+1+1+1=4 -> 5 GiB
      dfs  k1:1  k2:3  k3:3+1=4 (k2 freed)  k4:1+1+1=3  k5:3+1=4 (k1 freed)  k6:4            -> 4 GiB
    """
    n = 16384  # (1, n, n) float32 = 1 GiB
    g = Graph("seed")
    x = g.add_input(TensorDesc((1, n, n)))
    k1 = g.add_node("Exp", [x])
    k2 = g.add_node("Concat", [k1.outputs[0]] * 2, {"axis": 0})
    k3 = g.add_node("ReduceSum", k2.outputs, {"axis": (0,), "keep_dims": True})
    k4 = g.add_node("Neg", k1.outputs)
    k5 = g.add_node("Abs", k1.outputs)
    program = (("Add", ("in", 0), ("in", 1)), ("Add", ("t", 0), ("in", 2)))
    k6 = g.add_node("FusedElemwise", k3.outputs + k4.outputs + k5.outputs, {"program": program})
    g.outputs = list(k6.outputs)
    return g, {"k1": k1.id, "k2": k2.id, "k3": k3.id, "k4": k4.id, "k5": k5.id, "k6": k6.id}


def test_seed_example_bfs_and_dfs_peaks():
    g, k = seed_example()
    name = {v: key for key, v in k.items()}
    bfs, dfs = passes.order(g, "bfs"), passes.order(g, "dfs")
    assert [name[i] for i in bfs] == ["k1", "k2", "k4", "k5", "k3", "k6"]
    assert [name[i] for i in dfs] == ["k1", "k2", "k3", "k4", "k5", "k6"]
    assert passes.peak_memory(g, bfs) == 5 * GiB
    assert passes.peak_memory(g, dfs) == 4 * GiB
    plan = static_plan(g, dfs)
    assert plan.lower_bound == 4 * GiB and plan.size == 4 * GiB


def test_order_rejects_unknown_policy():
    g, _ = seed_example()
    with pytest.raises(InvalidParamError, match="bfs"):
        passes.order(g, "gpto")


# ------------------------------------------------------------------------------------ streams

def unordered(node_order, stream_of, events, edges) -> set:
    """The ``edges`` (producer, consumer) whose producer is not sure to finish before the consumer starts
    under stream order and ``events`` alone (happens-before as bitsets over node ids)."""
    before: dict[int, int] = {}
    previous: dict[int, int] = {}
    waits_of: dict[int, list[int]] = {}
    for p, c in events:
        waits_of.setdefault(c, []).append(p)
    for nid in node_order:
        s, mask = stream_of[nid], 0
        for q in ([previous[s]] if s in previous else []) + waits_of.get(nid, []):
            mask |= before[q] | 1 << q
        before[nid], previous[s] = mask, nid
    return {(p, c) for p, c in edges if not before[c] >> p & 1}


def _check_streams(g: Graph, node_order, plan):
    """Events sit on cross-stream data edges only, each recorded right after its producer on the
    producer's stream and waited right before its consumer; every cross-stream data edge is ordered by
    them under any interleaving of the streams (the producer reaches the consumer through stream order
    and events: an edge without an event of its own is implied by earlier ones), and no event is
    redundant; and a simulation of the stream queues runs every kernel after all of its producers."""
    deps = g.dependencies()
    # each stream's issue list of (kind, operand), from the typed schedule
    tasks = [[(kind, ident) for kind, stream, ident in (step.to_json() for step in plan.schedule) if stream == s]
             for s in range(plan.num_streams)]
    kernels = [i for s in tasks for kind, i in s if kind == "kernel"]
    assert sorted(kernels) == sorted(node_order)
    cross = {(p, c) for c in deps for p in deps[c] if plan.stream_of[p] != plan.stream_of[c]}
    assert set(plan.events) <= cross and len(set(plan.events)) == len(plan.events)
    assert unordered(node_order, plan.stream_of, plan.events, cross) == set(), "a cross-stream edge no event orders"
    for e in range(len(plan.events)):            # and none is redundant: each orders an edge no other does
        assert unordered(node_order, plan.stream_of, plan.events[:e] + plan.events[e + 1:], cross), e
    for e, (p, c) in enumerate(plan.events):
        ps, cs = tasks[plan.stream_of[p]], tasks[plan.stream_of[c]]
        rec, kp = ps.index(("record", e)), ps.index(("kernel", p))
        assert all(kind == "record" for kind, _ in ps[kp + 1:rec + 1])
        wait, kc = cs.index(("wait", e)), cs.index(("kernel", c))
        assert all(kind == "wait" for kind, _ in cs[wait:kc])
    heads, done, recorded = [0] * len(tasks), set(), set()
    progress = True
    while progress:
        progress = False
        for s, items in enumerate(tasks):
            while heads[s] < len(items):
                kind, ident = items[heads[s]]
                if kind == "wait" and ident not in recorded:
                    break
                if kind == "kernel":
                    assert all(p in done for p in deps[ident]), f"kernel {ident} ran before a producer"
                    done.add(ident)
                if kind == "record":
                    recorded.add(ident)
                heads[s] += 1
                progress = True
    assert done == set(node_order), "the stream queues deadlock"


def test_streams_split_attention_branches(graphs):
    g = passes.remove_no_task(graphs["transformer"])
    node_order = passes.order(g, "dfs")
    plan = passes.assign_streams(g, node_order, max_streams=4)
    # Q, K and V projections all read the graph input: three streams, joined by the two BatchMatMuls.
    assert plan.num_streams == 3 and len(plan.events) == 2
    _check_streams(g, node_order, plan)
    single = passes.assign_streams(g, node_order, max_streams=1)
    assert single.num_streams == 1 and single.events == []
    _check_streams(g, node_order, single)


def test_streams_basic_block_shortcut():
    g = passes.remove_no_task(_capture(BasicBlock(8, 16, 2), (1, 8, 8, 8)))
    node_order = passes.order(g, "bfs")
    plan = passes.assign_streams(g, node_order, max_streams=8)
    assert plan.num_streams == 2 and len(plan.events) == 1
    _check_streams(g, node_order, plan)


def random_dag(draw_ints, draw_bool, n_nodes: int, n_inputs: int = 2) -> Graph:
    """A random DAG of placeholder nodes with random output sizes (memory and stream passes only look
    at structure and sizes, so no shape inference is involved)."""
    g = Graph("random")
    pool = [g.add_input(TensorDesc((draw_ints(1, 4000),))) for _ in range(n_inputs)]
    for _ in range(n_nodes):
        k = draw_ints(1, min(3, len(pool)))
        ins = tuple(dict.fromkeys(pool[draw_ints(0, len(pool) - 1)] for _ in range(k)))
        outs = tuple(g.new_value(TensorDesc((draw_ints(1, 4000),))) for _ in range(draw_ints(1, 2)))
        g.nodes.append(OpNode(g.new_node_id(), "Add", {}, ins, outs, f"Default/Add-op{len(g.nodes) + 1}"))
        pool.extend(outs)
    node_outputs = [v for n in g.nodes for v in n.outputs]
    g.outputs = [node_outputs[-1]] + [v for v in node_outputs[:-1] if draw_bool()][:2]
    return g


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_streams_cover_every_cross_stream_edge(data):
    ints = lambda a, b: data.draw(st.integers(a, b))  # noqa: E731
    g = random_dag(ints, lambda: data.draw(st.booleans()), ints(1, 25))
    node_order = passes.order(g, data.draw(st.sampled_from(["bfs", "dfs"])))
    plan = passes.assign_streams(g, node_order, max_streams=ints(1, 5))
    _check_streams(g, node_order, plan)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_events_are_reused_once_their_wait_is_issued(data):
    """Edges share a device event only when one's wait is issued before the other's record, and no more
    device events exist than edges in flight at the busiest point of the schedule (intervals in issue
    order, counted directly)."""
    ints = lambda a, b: data.draw(st.integers(a, b))  # noqa: E731
    g = random_dag(ints, lambda: data.draw(st.booleans()), ints(1, 25))
    node_order = passes.order(g, data.draw(st.sampled_from(["bfs", "dfs"])))
    plan = passes.assign_streams(g, node_order, max_streams=ints(2, 5))
    slots = event_slots(plan.schedule)
    assert len(slots) == len(plan.events)
    span = {}
    for i, step in enumerate(plan.schedule):
        if step.kind in ("record", "wait"):
            span.setdefault(step.event, [None, None])[step.kind == "wait"] = i
    for a in span:
        for b in span:
            if a < b and slots[a] == slots[b]:
                assert span[a][1] < span[b][0] or span[b][1] < span[a][0], (a, b, span[a], span[b])
    busiest = max((sum(1 for r, w in span.values() if r <= i <= w) for i in range(len(plan.schedule))), default=0)
    assert len(set(slots)) == busiest


# ------------------------------------------------------------------------------------ memory

def _ancestors(g: Graph, node_order, stream_of):
    """Reference happens-before: transitive closure over data edges and per-stream order."""
    deps = g.dependencies()
    prev, anc = {}, {}
    for nid in node_order:
        s = stream_of.get(nid, 0)
        preds = set(deps[nid]) | ({prev[s]} if s in prev else set())
        anc[nid] = set(preds).union(*(anc[p] for p in preds)) if preds else set()
        prev[s] = nid
    return anc


def _check_plan(g: Graph, node_order, plan, stream_of=None):
    pos = {nid: i for i, nid in enumerate(node_order)}
    producer = {v: n.id for n in g.nodes for v in n.outputs}
    readers = {v: set() for v in producer}
    for n in g.nodes:
        for v in n.inputs:
            r = g.aliases.get(v, v)
            if r in readers:
                readers[r].add(n.id)
    outputs = {g.aliases.get(v, v) for v in g.outputs}
    assert set(plan.offsets) == set(producer)
    assert all(o % 512 == 0 for o in plan.offsets.values())
    anc = _ancestors(g, node_order, stream_of or {})

    def done_before(a, b):  # every user of a finishes before b's producer starts
        return a not in outputs and (readers[a] | {producer[a]}) <= anc[producer[b]]

    def span(v):
        last = len(node_order) if v in outputs else max([pos[producer[v]]] + [pos[r] for r in readers[v]])
        return pos[producer[v]], last

    vals = sorted(producer)
    for i, a in enumerate(vals):
        for b in vals[i + 1:]:
            (sa, ea), (sb, eb) = span(a), span(b)
            live_together = sa <= eb and sb <= ea
            concurrent = not (done_before(a, b) or done_before(b, a))
            if live_together or concurrent:
                a0, b0 = plan.offsets[a], plan.offsets[b]
                assert a0 + g.values[a].nbytes <= b0 or b0 + g.values[b].nbytes <= a0, (a, b)
            assert plan.offsets[a] + g.values[a].nbytes <= plan.size
    assert plan.size >= plan.lower_bound


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_static_plan_never_overlaps_live_values(data):
    ints = lambda a, b: data.draw(st.integers(a, b))  # noqa: E731
    g = random_dag(ints, lambda: data.draw(st.booleans()), ints(1, 25))
    node_order = passes.order(g, data.draw(st.sampled_from(["bfs", "dfs"])))
    _check_plan(g, node_order, static_plan(g, node_order))
    streams = passes.assign_streams(g, node_order, max_streams=ints(2, 4))
    _check_plan(g, node_order, static_plan(g, node_order, streams.stream_of), streams.stream_of)


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_static_plan_close_to_lower_bound_on_networks(graphs, name):
    g = passes.fuse_elementwise(passes.remove_no_task(graphs[name]))
    node_order = passes.order(g, "dfs")
    plan = static_plan(g, node_order)
    _check_plan(g, node_order, plan)
    assert plan.size <= 1.05 * plan.lower_bound, (plan.size, plan.lower_bound)
    streams = passes.assign_streams(g, node_order, 4)
    _check_plan(g, node_order, static_plan(g, node_order, streams.stream_of), streams.stream_of)


def test_release_points_free_each_value_once_after_its_last_reader(graphs):
    g = passes.remove_no_task(graphs["transformer"])
    node_order = passes.order(g, "dfs")
    rel = release_after(g, node_order)
    freed = [v for nid in node_order for v in rel[nid]]
    assert len(freed) == len(set(freed))
    outputs = {g.root(v) for v in g.outputs}
    node_values = {v for n in g.nodes for v in n.outputs}
    assert set(freed) == (node_values | set(g.inputs)) - outputs
    pos = {nid: i for i, nid in enumerate(node_order)}
    spans = lifetimes(g, node_order)
    for nid, values in rel.items():
        for v in values:
            if v in g.inputs:             # a graph input's per-run copy lives to the step's end, as MindSpore's
                assert pos[nid] == len(node_order) - 1
                continue
            readers = [pos[n.id] for n in g.nodes if any(g.root(i) == v for i in n.inputs)]
            start = spans[v][0] if v in spans else -1
            assert pos[nid] == max(readers + [start])
    # The LayerNorm statistics nobody reads are freed right after LayerNorm.
    ln = next(n for n in g.nodes if n.op == "LayerNorm")
    assert set(ln.outputs[1:]) <= set(rel[ln.id])


# ------------------------------------------------------------------------------------ compiled graph

def test_compile_levels(graphs):
    g = graphs["transformer"]
    o0, o1, o2 = (compile_graph(g, lvl) for lvl in ("O0", "O1", "O2"))
    assert [len(c.kernels) for c in (o0, o1, o2)] == [25, 17, 17]   # 7 matmul epilogues at O1/O2
    assert o0.memory == o1.memory == "dynamic" and o2.memory == "static"
    assert o0.num_streams == o1.num_streams == 1 and o2.num_streams == 3
    assert o2.workspace_size >= o2.lower_bound > 0 and o2.release_after == {}
    assert set(o2.offsets) == {v for k in o2.kernels for v in k.outputs}
    assert {k.signature.op for k in o1.kernels} >= {"MatMul", "BatchMatMul", "LayerNorm"}
    assert sum("epilogue" in dict(k.signature.attrs) for k in o1.kernels) == 7
    for c in (o0, o1, o2):
        for k in c.kernels:
            assert k.signature.inputs == tuple(c.values[v] for v in k.inputs)
            assert all(c.root(v) in c.values for v in k.inputs)
    with pytest.raises(InvalidParamError, match="jit_level"):
        compile_graph(g, "O3")


def test_compiled_graph_json_round_trip(graphs, tmp_path):
    g = graphs["lenet5"]
    for level in ("O0", "O2"):
        c = compile_graph(g, level, exec_order="bfs")
        text = json.dumps(c.to_json())
        assert "weight" in text and len(text) < 20_000           # names only: no parameter data
        path = tmp_path / "rank_0" / "graph_cache" / f"{c.cache_name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        back = CompiledGraph.from_json(json.loads(path.read_text()))
        assert back.to_json() == c.to_json()
        assert back.kernels == c.kernels                          # signatures compare equal
        assert back.constant_refs == {}
        back.bind_constants(g)
        assert set(back.constant_refs) == set(c.constants)
        for v, const in back.constant_refs.items():
            np.testing.assert_array_equal(const.data, c.constant_refs[v].data)
    assert compile_graph(g, "O0").cache_name != compile_graph(g, "O2").cache_name
    other = _capture(LeNet5(), (4, 1, 32, 32))
    with pytest.raises(InvalidParamError, match="not the graph"):
        CompiledGraph.from_json(c.to_json()).bind_constants(other)


def test_a_graph_cache_name_belongs_to_the_compiler_that_made_it():
    """A compiled graph cached by another version of the passes must not be loaded: the name carries a
    digest of the compiler's sources (checked here with hashlib over the same files)."""
    import hashlib
    from pathlib import Path

    from ascendemu.graph import plan
    want = hashlib.sha256()
    for name in plan.COMPILER_MODULES:
        want.update((Path(plan.__file__).parent / f"{name}.py").read_bytes())
    assert plan.compiler_digest() == want.hexdigest()
    assert {"passes", "plan", "memory_plan", "schedule"} <= set(plan.COMPILER_MODULES)
    names = {plan.cache_name("h", "O1", "dfs", 1)}
    plan.compiler_digest.cache_clear()
    try:
        original = plan.compiler_digest
        plan.compiler_digest = lambda: "another compiler"        # as a different passes.py would hash
        names.add(plan.cache_name("h", "O1", "dfs", 1))
    finally:
        plan.compiler_digest = original
    assert len(names) == 2
