"""O1/O2 fusion keeps a graph's meaning: random small graphs in the shape mixed precision writes them
(casts between float32 and float16, biases cast before BiasAdd, elementwise chains after a Conv2D or
MatMul, whose elementwise consumers become its epilogue) run on the emulated device at O0, O1 and O2.

The oracle is the numpy evaluator of the unfused graph (tests/test_graph.py: float64-free, each op
rounded to its output dtype as the device stores it). O1/O2 are compared with O0: bit for bit when the
graph is float32; within float16 rounding when it casts, because a fused program keeps its
intermediates in float32 registers where the unfused graph stores (and rounds) them as float16.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ascendemu.graph import passes  # noqa: E402
from ascendemu.graph.ir import Graph  # noqa: E402
from ascendemu.graph.plan import compile_graph  # noqa: E402
from ascendemu.kernels.signature import TensorDesc  # noqa: E402
from test_graph import eval_graph  # noqa: E402

UNARY = ("ReLU", "Neg", "Abs", "Tanh", "Sigmoid")
BINARY = ("Add", "Sub", "Mul", "Maximum", "Minimum")
DTYPES = ("float32", "float16")
# float16 keeps 11 significant bits; a few roundings the fused program skips stay well inside this
FP16_TOLERANCE = 2e-2


class _Builder:
    """A random graph in mixed-precision shape, drawn from hypothesis' ``data``."""

    def __init__(self, data):
        self.data = data
        self.g = Graph("fusion_property")
        self.rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16), label="seed"))

    def draw(self, strategy, label):
        return self.data.draw(strategy, label=label)

    def param(self, name: str, shape: tuple[int, ...]) -> int:
        return self.g.add_constant(name, (self.rng.standard_normal(shape) * 0.5).astype(np.float32), True)

    def scalar(self, like: int) -> int:
        value = self.draw(st.sampled_from([0.5, 2.0, -1.5]), "scalar")
        dtype = self.g.values[like].dtype
        return self.g.add_constant(f"const{len(self.g.constants)}", np.dtype(dtype).type(value), False, dtype)

    def op(self, op: str, inputs: list[int], **attrs) -> int:
        return self.g.add_node(op, inputs, attrs).outputs[0]

    def cast(self, v: int, dtype: str) -> int:
        return v if self.g.values[v].dtype == dtype else self.op("Cast", [v], dst_type=dtype)

    def trunk(self, dtype: str) -> tuple[int, int]:
        """A Conv2D (NCHW) or MatMul on ``dtype`` operands, as amp casts them: (product, channels)."""
        g = self.g
        if self.draw(st.booleans(), "conv"):
            x = g.add_input(TensorDesc((2, 3, 5, 5)))
            w = self.param("conv.weight", (4, 3, 3, 3))
            return self.op("Conv2D", [self.cast(x, dtype), self.cast(w, dtype)], out_channel=4,
                           kernel_size=(3, 3), pad_mode="same"), 4
        x = g.add_input(TensorDesc((4, 6)))
        w = self.param("dense.weight", (5, 6))
        return self.op("MatMul", [self.cast(x, dtype), self.cast(w, dtype)], transpose_b=True), 5

    def bias(self, y: int, channels: int) -> int:
        """BiasAdd with a float32 parameter brought to y's dtype, maybe through an op of its own first."""
        b = self.param("bias", (channels,))
        if self.draw(st.booleans(), "scaled bias"):
            b = self.op("Mul", [b, self.scalar(b)])
        b = self.cast(b, self.g.values[y].dtype)
        if self.draw(st.booleans(), "bias op"):
            b = self.op(self.draw(st.sampled_from(UNARY), "bias unary"), [b])
        return self.op("BiasAdd", [y, b])

    def chain(self, y: int) -> int:
        """0-4 elementwise steps: unary, with a scalar, with an earlier value or a new input, a cast."""
        pool = [y]
        for _ in range(self.draw(st.integers(0, 4), "steps")):
            last = pool[-1]
            kind = self.draw(st.sampled_from(["unary", "scalar", "value", "input", "cast"]), "kind")
            if kind == "unary":
                last = self.op(self.draw(st.sampled_from(UNARY), "unary"), [last])
            elif kind == "cast":
                last = self.cast(last, self.draw(st.sampled_from(DTYPES), "cast to"))
            else:
                other = (self.scalar(last) if kind == "scalar"
                         else self.cast(self.draw(st.sampled_from(pool), "operand"), self.g.values[last].dtype)
                         if kind == "value" else self.g.add_input(self.g.values[last]))
                last = self.op(self.draw(st.sampled_from(BINARY), "binary"), [last, other])
            pool.append(last)
        return pool[-1]

    def build(self) -> Graph:
        dtype = self.draw(st.sampled_from(DTYPES), "amp dtype")
        y, channels = self.trunk(dtype)
        if self.draw(st.booleans(), "bias"):
            y = self.bias(y, channels)
        self.g.outputs = [self.chain(y)]
        return self.g


def _inputs(g: Graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(g.values[v].shape).astype(g.values[v].dtype) for v in g.inputs]


def _casts(g: Graph) -> bool:
    return any(d.dtype == "float16" for d in g.values.values())


def _assert_close(got: np.ndarray, want: np.ndarray, fp16: bool) -> None:
    want = want.astype(np.float64)
    if fp16:
        scale = 1.0 + float(np.max(np.abs(want)))
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=FP16_TOLERANCE, atol=FP16_TOLERANCE * scale)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-5, atol=1e-5)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fused_levels_compute_what_the_unfused_graph_does(ex, data):
    g = _Builder(data).build()
    ins = _inputs(g, 11)
    (want,) = eval_graph(g, ins)
    (o0,) = ex.run_graph(g, ins, "O0")
    fp16 = _casts(g)
    _assert_close(o0, want, fp16)
    for level in ("O1", "O2"):
        (got,) = ex.run_graph(g, ins, level)
        assert got.dtype == o0.dtype and got.shape == o0.shape
        if fp16:
            _assert_close(got, o0, fp16)
        else:
            np.testing.assert_array_equal(got, o0)      # float32: the same float32 operations


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_fusion_passes_keep_the_graph_meaning(data):
    """The same graphs through the passes alone, evaluated by numpy: every fused node is a valid
    kernel signature, every alias points at a value that exists, and the result is the unfused one's."""
    g = _Builder(data).build()
    fused = passes.fuse_epilogues(passes.fuse_elementwise(passes.remove_no_task(g)))
    for n in fused.nodes:
        n.signature(fused)
        assert all(fused.root(v) in fused.values for v in n.inputs)
    for level in ("O1", "O2"):
        compile_graph(g, level)
    ins = _inputs(g, 5)
    _assert_close(eval_graph(fused, ins)[0], eval_graph(g, ins)[0], _casts(g))


def test_amp_conv_bias_cast_joins_the_fused_program():
    """The repro's shape (nn.Conv2d(has_bias=True) under amp O2): Conv2D in float16, its float32 bias
    cast to float16 and added. The Cast joins the BiasAdd's program, so the bias is viewed as (C, 1, 1)
    at the program's external input, the float32 parameter itself (hand-checked program)."""
    g = Graph("amp_conv_bias")
    x = g.add_input(TensorDesc((1, 2, 3, 3), "float16"))
    w = g.add_constant("w", np.ones((2, 2, 1, 1), np.float16), True)
    b = g.add_constant("b", np.array([1.0, -2.0], np.float32), True)
    y = g.add_node("Conv2D", [x, w], {"out_channel": 2, "kernel_size": (1, 1)}).outputs[0]
    bf = g.add_node("Cast", [b], {"dst_type": "float16"}).outputs[0]
    z = g.add_node("BiasAdd", [y, bf]).outputs[0]
    g.outputs = [g.add_node("ReLU", [z]).outputs[0]]
    fused = passes.fuse_elementwise(g)
    conv, node = fused.nodes
    assert node.op == "FusedElemwise"
    assert node.attrs["program"] == (("Cast", ("in", 0)), ("Add", ("in", 1), ("t", 0)), ("ReLU", ("t", 1)))
    view = node.inputs[0]
    assert fused.aliases[view] == b and fused.values[view] == TensorDesc((2, 1, 1), "float32")
    assert node.inputs[1] == conv.outputs[0]
    xs = np.arange(18, dtype=np.float16).reshape(1, 2, 3, 3) - 9
    # conv with a ones 1x1 kernel sums the two channels; channel 0 adds 1, channel 1 adds -2
    s = xs[0, 0] + xs[0, 1]
    want = np.maximum(np.stack([s + 1, s - 2]), 0)[None]
    np.testing.assert_array_equal(eval_graph(fused, [xs])[0], want.astype(np.float16))
