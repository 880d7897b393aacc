"""Dynamic shapes in GRAPH_MODE (graph/dynamic.py, frontend/common/placeholder.py, dynamic_inputs.py):
``Tensor(shape=[None, 4])`` placeholders, ``Cell.set_inputs``, one captured graph serving many shapes.

Oracles: numpy for every result; MindSpore's semantics that Python code in ``construct`` runs only
while compiling (a counter ``construct`` increments counts the captures); the kernel cache's build
count (a dynamic-shape kernel serves every size); MindSpore 2.10's errors and placeholder behaviour,
recorded by tools/record_set_inputs_errors.py into tests/fixtures/set_inputs_errors.json; PyNative
training for the GRAPH_MODE steps."""
from __future__ import annotations

import builtins
import json
import weakref
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops
from ascendemu.graph.dynamic import ShapeMismatch, family_stats, reinfer
from ascendemu.kernels.signature import TensorDesc

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "set_inputs_errors.json").read_text())
CAPTURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # cell -> times its construct ran (outside
# the cell, so not its state; weak, so a collected cell's count never passes to a new one at its address)
RNG = np.random.default_rng(22)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture(autouse=True)
def graph_mode(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    yield


def count(cell: nn.Cell) -> None:
    CAPTURES[cell] = CAPTURES.get(cell, 0) + 1


class DenseRelu(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        count(self)
        return ops.relu(self.fc(x))


class RowSum(nn.Cell):
    """Reshapes by ``x.shape[0]``: the batch size is baked into the Reshape's target."""

    def construct(self, x):
        count(self)
        return ops.reshape(x, (x.shape[0], 2, 2)).sum(axis=2)


def test_placeholder_reports_unknown_dims_as_minus_one_and_refuses_data_as_mindspore():
    t = Tensor(shape=[None, 3], dtype=ms.float32)
    assert t.shape == tuple(FIXTURE["placeholder"]["shape"]) == Tensor(shape=[-1, 3], dtype=ms.float32).shape
    assert repr(t) == FIXTURE["placeholder"]["repr"]
    for read in (t.asnumpy, lambda: str(t), lambda: np.asarray(t)):
        with pytest.raises(ValueError, match=FIXTURE["placeholder"]["asnumpy"]):
            read()
    static = Tensor(shape=[2, 3], dtype=ms.float32)       # known dims only: zeros, as in MindSpore
    np.testing.assert_array_equal(static.asnumpy(), np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_one_graph_serves_every_batch_size_without_rebuilding_kernels(ex, level):
    ms.set_context(jit_config={"jit_level": level})
    net = DenseRelu()
    net.set_inputs(Tensor(shape=[None, 4], dtype=ms.float32))
    assert net.get_inputs()[0].shape == (-1, 4)
    w, b = net.fc.weight.asnumpy(), net.fc.bias.asnumpy()
    before = family_stats().reinferred
    for i, batch in enumerate((2, 5, 3, 6)):
        x = rand(batch, 4)
        built = ex.kernel_cache.stats.built
        out = net(Tensor(x)).asnumpy()
        np.testing.assert_allclose(out, np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-6)
        if i:
            assert ex.kernel_cache.stats.built == built       # the first shape's kernels serve the others
    # the first batch size is captured; the second is captured too and compared with the first re-inferred
    # (the verification), and every later size is re-inferred without running construct
    assert CAPTURES[net] == 2
    assert family_stats().reinferred - before == 2
    net(Tensor(rand(3, 4)))                                   # a shape seen before: its graph is kept
    assert CAPTURES[net] == 2
    # memory is planned per concrete shape: the summary names the families and each shape's graph
    summary = ex.summary()
    assert any(line.startswith("dynamic shapes: ") for line in summary)
    for batch in (2, 5, 3, 6):
        assert any(line.startswith(f"DenseRelu [{level}] inputs [{batch}, 4], ") for line in summary)


def test_a_size_baked_into_an_attribute_is_detected_and_captured_per_shape():
    net = RowSum()
    net.set_inputs(Tensor(shape=[None, 4], dtype=ms.float32))
    for batch in (2, 3, 5, 4):
        x = rand(batch, 4)
        np.testing.assert_allclose(net(Tensor(x)).asnumpy(), x.reshape(batch, 2, 2).sum(2), rtol=1e-5)
    assert CAPTURES[net] == 4                             # specialised: never re-inferred


def test_reinfer_refuses_a_reshape_that_does_not_fit_the_new_shape():
    net = RowSum()
    graph, _ = ms.capture(net, Tensor(rand(2, 4)))
    with pytest.raises(ShapeMismatch, match="Reshape"):
        reinfer(graph, [TensorDesc((3, 4), "float32")])


@pytest.mark.parametrize("case", ["rank", "dtype", "static_dim"])
def test_a_call_that_does_not_match_the_signature_raises_mindspores_error(case):
    net = DenseRelu()
    net.set_inputs(Tensor(shape=[None, 4], dtype=ms.float32))
    bad = {"rank": np.ones((2, 4, 1), np.float32), "dtype": np.ones((2, 4), np.int32),
           "static_dim": np.ones((2, 5), np.float32)}[case]
    want = FIXTURE["errors"][case]
    with pytest.raises(getattr(builtins, want["type"])) as info:
        net(Tensor(bad))
    assert str(info.value) == want["message"]


class Linear(nn.Cell):
    def __init__(self, w: np.ndarray, b: np.ndarray):
        super().__init__()
        self.w = Parameter(Tensor(w), name="w")
        self.b = Parameter(Tensor(b), name="b")

    def construct(self, x):
        return ops.matmul(x, self.w) + self.b


def train(mode: int, batches: list[tuple[np.ndarray, np.ndarray]], dynamic: bool) -> tuple[list[float], np.ndarray]:
    ms.set_context(mode=mode)
    net = Linear(np.full((3, 2), 0.5, np.float32), np.zeros(2, np.float32))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    if dynamic:
        step.set_inputs(Tensor(shape=[None, 3], dtype=ms.float32), Tensor(shape=[None, 2], dtype=ms.float32))
    losses = [float(step(Tensor(x), Tensor(y)).asnumpy()) for x, y in batches]
    return losses, net.w.asnumpy()


def test_training_with_set_inputs_in_graph_mode_equals_pynative_for_two_batch_sizes():
    batches = [(rand(b, 3), rand(b, 2)) for b in (4, 2, 4, 3, 2)]
    graph_losses, graph_w = train(ms.GRAPH_MODE, batches, dynamic=True)
    native_losses, native_w = train(ms.PYNATIVE_MODE, batches, dynamic=False)
    np.testing.assert_allclose(graph_losses, native_losses, rtol=1e-5)
    np.testing.assert_allclose(graph_w, native_w, rtol=1e-5, atol=1e-6)


JIT_CAPTURES: list[int] = []


@ms.jit(dynamic=1)
def scaled_relu(x, y):
    JIT_CAPTURES.append(1)
    return ops.relu(x) * 2 + y


def test_jit_dynamic_serves_every_size_and_keeps_ranks_apart():
    """``jit(dynamic=1)``: sizes open, rank and dtype kept (a 1-D call is a phase of its own)."""
    for shape in ((2, 3), (4, 3), (5, 2), (3,), (2, 3)):
        x, y = rand(*shape), rand(*shape[-1:])
        np.testing.assert_allclose(scaled_relu(Tensor(x), Tensor(y)).asnumpy(), np.maximum(x, 0) * 2 + y,
                                   rtol=1e-6)
    assert len(JIT_CAPTURES) == 3            # (2, 3), the verifying (4, 3); (5, 2) re-inferred; (3,) a new rank
