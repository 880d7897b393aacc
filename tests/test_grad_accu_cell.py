"""``_TrainGradAccuStepCell`` (the cell Model.train builds under pipeline_stages > 1) as MindSpore 2.10 writes it:
micro-batch gradients summed into its ``accu_grads`` Parameters, scaled by 1 / micro_size, applied, and the
accumulators cleared; checked against numpy on one device, in both modes. Its memory under pipeline parallel
is checked against MindSpore's DryRun in tests/test_pipeline_parallel.py."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops
from ascendemu.frontend.nn.wrap.cell_wrapper import _TrainGradAccuStepCell
from ascendemu.graph.capture import FOLDED_OPS

MICRO, LR, MOMENTUM = 4, 0.1, 0.9


class Linear(nn.Cell):
    def __init__(self, w: np.ndarray):
        super().__init__()
        self.w = Parameter(Tensor(w), name="w")

    def construct(self, x):
        return ops.matmul(x, self.w)


def _numpy_steps(w, x, y, steps):
    """Momentum on the mean over micro-batches of each micro-batch's MSE gradient (what the cell applies)."""
    accum = np.zeros_like(w)
    for _ in range(steps):
        grad = np.zeros_like(w)
        for xm, ym in zip(np.split(x, MICRO), np.split(y, MICRO)):
            grad += xm.T @ (2.0 * (xm @ w - ym) / ym.size)
        grad = grad * (1.0 / MICRO)
        accum = MOMENTUM * accum + grad
        w = w - LR * accum
    return w


@pytest.mark.parametrize("mode", ["graph", "pynative"])
def test_accumulated_gradients_train_as_numpy_and_are_cleared(mode, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                     # rank_0/kernel_meta and graph_cache go there
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        rng = np.random.default_rng(0)
        w0 = rng.standard_normal((6, 3)).astype(np.float32)
        x = rng.standard_normal((16, 6)).astype(np.float32)
        y = rng.standard_normal((16, 3)).astype(np.float32)
        net = Linear(w0.copy())
        step = _TrainGradAccuStepCell(nn.PipelineCell(nn.WithLossCell(net, nn.MSELoss()), MICRO),
                                      nn.Momentum(net.trainable_params(), LR, MOMENTUM))
        step.set_train()
        for _ in range(2):
            step(Tensor(x), Tensor(y))
        np.testing.assert_allclose(net.w.asnumpy(), _numpy_steps(w0.astype(np.float64), x, y, 2), rtol=1e-5,
                                   atol=1e-6)
        accu = [p for p in step.parameters_dict().values() if p.name.startswith("accu_grads.")]
        assert [p.name for p in accu] == ["accu_grads.w"]
        assert not accu[0].asnumpy().any()                 # cleared after each update
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)


def test_zeros_like_folds_to_a_constant_and_assign_writes_a_tensor(tmp_path, monkeypatch):
    """MindSpore folds zeros_like of a static shape while compiling (a constant, no kernel); ops.assign of a
    tensor the graph computed is its Assign kernel, and later reads see the assigned value."""
    monkeypatch.chdir(tmp_path)
    assert "BroadcastTo" in FOLDED_OPS

    def f(x):
        y = x * 2.0
        z = ops.zeros_like(y)
        ops.assign(y, z + 1.0)
        return y

    graph, _ = ms.capture(f, Tensor(np.ones((2, 3), np.float32)))
    assert [n.op for n in graph.nodes] == ["Mul", "Add", "Assign"]
    zeros = graph.nodes[1].inputs[0]
    assert zeros in graph.constants and not graph.constants[zeros].data.any()
    assert graph.constants[zeros].data.shape == (2, 3)
    out = ms.jit(f)(Tensor(np.ones((2, 3), np.float32)))
    np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 3), np.float32))
