"""Mixed precision and loss scaling: the casts ``to_float`` and the amp levels put in the captured graph
(where MindSpore puts them), float16 training at O2 against the float32 run, and
TrainOneStepWithLossScaleCell against hand-computed scale sequences, MindSpore's host-side rule
(``DynamicLossScaleManager.update_loss_scale``) and the unscaled step."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, amp, nn, ops


@pytest.fixture(autouse=True)
def restore_context(ex):
    saved = {k: ms.get_context(k) for k in ("mode", "jit_config")}
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    yield
    ms.set_context(**saved)


class MLP(nn.Cell):
    """fc1 -> BatchNorm -> ops.relu (a white-listed primitive called directly) -> nn.ReLU -> fc2."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.act = nn.ReLU()
        self.fc2 = nn.Dense(8, 3)

    def construct(self, x):
        return self.fc2(self.act(ops.relu(self.bn(self.fc1(x)))))


def mlp() -> MLP:
    ms.set_seed(5)
    return MLP()


RNG = np.random.default_rng(3)
X = RNG.standard_normal((8, 4)).astype(np.float32)
Y = RNG.integers(0, 3, 8).astype(np.int32)


def loss_fn():
    return nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")


# ------------------------------------------------------------------------------------- captured casts

def compute_dtypes(net, *args) -> list[tuple[str, str, tuple[str, ...]]]:
    """(scope-free op label, op, input dtypes) of every node of the captured graph, in order."""
    graph, _ = ms.capture(net, *args)
    out = []
    for n in graph.nodes:
        scope = n.full_name.rsplit("/", 1)[0].replace("Default", "").replace("_backbone-", "")
        target = n.attrs.get("dst_type", "")
        out.append((scope.strip("/"), n.op + (f"->{target}" if target else ""),
                    tuple(graph.values[v].dtype for v in n.inputs)))
    return out


def test_to_float_casts_inputs_and_parameters_at_use():
    """A float16 Dense: Cast of the input, of the weight and the bias where they are read; MatMul and
    BiasAdd in float16; no cast back (to_float does not add one); the Parameters stay float32."""
    dense = nn.Dense(4, 3).to_float(ms.float16)
    graph, _ = ms.capture(dense, Tensor(X))
    assert [(n.op, n.attrs.get("dst_type")) for n in graph.nodes] == [
        ("Cast", "float16"), ("Cast", "float16"), ("MatMul", None), ("Cast", "float16"), ("BiasAdd", None)]
    assert [graph.values[v].dtype for v in graph.outputs] == ["float16"]
    assert {p.dtype for p in dense.get_parameters()} == {ms.float32}
    with pytest.raises(InvalidParamError, match="dst_type must be mstype.float16 or mstype.float32"):
        dense.to_float(ms.int32)


def test_add_flags_fp16_is_mixed_precision_of_that_cell():
    """MindSpore's Cell flags: ``add_flags_recursive(fp16=True)`` (the zoo's VGG16 eval) puts the same
    casts in the graph as ``to_float(float16)``; ``add_flags`` on one cell changes only that cell's
    construct; flags become attributes and ``get_flags`` entries, also from ``Cell(flags=...)``."""
    flagged = nn.Dense(4, 3).add_flags_recursive(fp16=True)
    assert flagged.fp16 is True and flagged.get_flags() == {"fp16": True}
    assert compute_dtypes(flagged, Tensor(X)) == compute_dtypes(nn.Dense(4, 3).to_float(ms.float16), Tensor(X))
    net = mlp()
    net.fc2.add_flags(fp16=True)
    ops_ = [(s, op) for s, op, _ in compute_dtypes(net, Tensor(X))]
    assert ("fc2-Dense", "Cast->float16") in ops_ and not any(s.startswith("fc1") and "Cast" in op for s, op in ops_)
    assert nn.Cell(flags={"sink_mode": True}).sink_mode is True
    with pytest.raises(InvalidParamError, match="bf16 mixed precision is not supported"):
        nn.Dense(4, 3).add_flags(bf16=True)


def test_amp_levels_put_casts_where_mindspore_does():
    f16 = ("float16",)
    o1 = compute_dtypes(amp.auto_mixed_precision(mlp(), "O1"), Tensor(X))
    # Dense (white-listed cell): float16 inside, float32 after; BatchNorm float32; ops.relu (white-listed
    # primitive in a user cell): float16 in, float32 out; nn.ReLU (a framework cell) untouched
    assert [(s, op) for s, op, _ in o1] == [
        ("fc1-Dense", "Cast->float16"), ("fc1-Dense", "Cast->float16"), ("fc1-Dense", "MatMul"),
        ("fc1-Dense", "Cast->float16"), ("fc1-Dense", "BiasAdd"), ("fc1-Dense", "Cast->float32"),
        ("bn-BatchNorm1d", "BatchNorm"), ("", "Cast->float16"), ("", "ReLU"), ("", "Cast->float32"),
        ("act-ReLU", "ReLU"), *[("fc2-Dense", op) for op in ("Cast->float16", "Cast->float16", "MatMul",
                                                             "Cast->float16", "BiasAdd", "Cast->float32")]]
    assert dict((f"{s}/{op}", d) for s, op, d in o1)["act-ReLU/ReLU"] == ("float32",)

    o2 = compute_dtypes(amp.auto_mixed_precision(mlp(), "O2"), Tensor(X))
    ops2 = {f"{s}/{op}": d for s, op, d in o2}
    assert ops2["MLP/fc1-Dense/MatMul"] == f16 * 2 and ops2["MLP/fc2-Dense/BiasAdd"] == f16 * 2
    assert ops2["MLP/bn-_OutputTo16/BatchNorm1d/BatchNorm"] == ("float32",) * 5     # black list: float32
    assert ops2["MLP/bn-_OutputTo16/Cast->float16"] == ("float32",)                 # ... handing back float16
    assert o2[-1] == ("", "Cast->float32", f16)                                      # _OutputTo32

    o3 = {f"{s}/{op}": d for s, op, d in compute_dtypes(amp.auto_mixed_precision(mlp(), "O3"), Tensor(X))}
    assert o3["MLP/bn-BatchNorm1d/BatchNorm"] == f16 * 5 and o3["MLP/act-ReLU/ReLU"] == f16


def test_amp_level_errors_and_manager_facts():
    with pytest.raises(InvalidParamError, match="amp_level='O4'"):
        amp.auto_mixed_precision(mlp(), "O4")
    opt = nn.Momentum(mlp().trainable_params(), 0.1, 0.9)
    with pytest.raises(InvalidParamError, match="unsupported argument 'loss_scale'"):
        amp.build_train_network(mlp(), opt, loss_fn(), "O2", loss_scale=8.0)
    fixed = ms.FixedLossScaleManager(1024.0, drop_overflow_update=False)
    assert fixed.get_loss_scale() == 1024.0 and not fixed.get_drop_overflow_update()
    assert fixed.get_update_cell() is None
    assert isinstance(ms.FixedLossScaleManager().get_update_cell(), nn.FixedLossScaleUpdateCell)
    dynamic = amp.DynamicLossScaleManager()
    assert (dynamic.get_loss_scale(), dynamic.scale_factor, dynamic.scale_window) == (2 ** 24, 2, 2000)
    assert dynamic.get_drop_overflow_update() and isinstance(dynamic.get_update_cell(), nn.DynamicLossScaleUpdateCell)
    with pytest.raises(InvalidParamError, match="loss_scale=0.5"):
        ms.FixedLossScaleManager(0.5)
    # what build_train_network builds per level
    assert type(amp.build_train_network(mlp(), opt, loss_fn(), "O2")).__name__ == "TrainOneStepWithLossScaleCell"
    step = amp.build_train_network(mlp(), opt, loss_fn(), "O3")
    assert type(step) is nn.TrainOneStepCell and step.sens == 1.0
    step = amp.build_train_network(mlp(), opt, loss_fn(), "O0", loss_scale_manager=fixed)
    assert type(step) is nn.TrainOneStepCell and step.sens == 1024.0


# ------------------------------------------------------------------------------------- loss scaling

def test_dynamic_update_cell_follows_mindspore_rule():
    """The device rule (DynamicLossScaleUpdateCell, one small graph per step) against MindSpore's host
    rule (DynamicLossScaleManager.update_loss_scale) and hand-computed values, window 3."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    cell = nn.DynamicLossScaleUpdateCell(16.0, 2, 3)
    scale = ms.Parameter(Tensor(16.0, ms.float32), name="scale_sense", requires_grad=False)
    host = amp.DynamicLossScaleManager(16.0, 2, 3)
    flags = [False, False, False, True, False, True, True, True, True, True, True, False, False, False]
    seen = []
    for flag in flags:
        out = cell(scale, Tensor(flag))
        host.update_loss_scale(flag)
        seen.append(float(scale.asnumpy()))
        assert bool(out.asnumpy()) == flag and seen[-1] == host.get_loss_scale()
    assert seen == [16, 16, 32, 16, 16, 8, 4, 2, 1, 1, 1, 1, 1, 2]
    assert cell.cur_iter.asnumpy() == len(flags) + 1 and cell.last_overflow_iter.asnumpy() == 14


# the loss-scale steps train test_lr_schedule's Dense(3, 2) + MSELoss (they share its kernels)
X3 = RNG.standard_normal((4, 3)).astype(np.float32)
Y3 = RNG.standard_normal((4, 2)).astype(np.float32)


def dense() -> nn.Dense:
    ms.set_seed(5)
    return nn.Dense(3, 2)


def train_cells(scale_sense):
    net = dense()
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    return net, opt, nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), opt, scale_sense)


def snapshot(cell):
    return {p.name: p.asnumpy().copy() for p in cell.get_parameters()}


def test_fixed_scale_step_equals_the_unscaled_step():
    """A fixed scale of 1024 (a Tensor): the same losses and, bit for bit, the same parameters as
    TrainOneStepCell, since scaling by a power of two and back is exact."""
    net, opt, scaled = train_cells(Tensor(1024.0, ms.float32))
    ref_net = dense()
    ref = nn.TrainOneStepCell(nn.WithLossCell(ref_net, nn.MSELoss()), nn.Momentum(ref_net.trainable_params(), 0.1, 0.9))
    for _ in range(3):
        loss, overflow, scale = scaled(Tensor(X3), Tensor(Y3))
        want = ref(Tensor(X3), Tensor(Y3))
        assert overflow.dtype == ms.bool_ and not overflow.asnumpy() and float(scale.asnumpy()) == 1024.0
        np.testing.assert_array_equal(loss.asnumpy(), want.asnumpy())
    for (name, p), q in zip(net.parameters_and_names(), ref_net.get_parameters()):
        np.testing.assert_array_equal(p.asnumpy(), q.asnumpy(), err_msg=name)    # 1024 scales exactly
    assert opt.global_step.asnumpy().tolist() == [3]


@pytest.mark.parametrize("mode", [ms.GRAPH_MODE, ms.PYNATIVE_MODE])
def test_overflow_skips_the_update_and_the_scale_follows(mode):
    """An inf in the input makes every gradient inf: the step reports overflow, leaves parameters and
    optimizer state bit for bit (in a graph: a Select on the device per updated state; in PyNative the
    host reads the flag), halves the scale; after scale_window good steps it doubles."""
    net, opt, step = train_cells(nn.DynamicLossScaleUpdateCell(2.0 ** 10, 2, 2))
    graph, _ = ms.capture(step, Tensor(X3), Tensor(Y3))
    producers = {v: n.op for n in graph.nodes for v in n.outputs}
    assert {producers[v] for p, v in graph.updates.items() if graph.constants[p].name in
            ("weight", "moments.bias", "global_step")} == {"Select"}
    ms.set_context(mode=mode)
    bad = X3.copy()
    bad[0, 0] = np.inf
    scales = []
    for i, x in enumerate([X3, bad, X3, X3, X3]):
        before = snapshot(step)
        loss, overflow, scale = step(Tensor(x), Tensor(Y3))
        after = snapshot(step)
        scales.append((float(scale.asnumpy()), float(step.scale_sense.asnumpy())))
        assert bool(overflow.asnumpy()) == (i == 1)
        unchanged = [k for k in before if np.array_equal(before[k], after[k])]
        if i == 1:
            assert set(unchanged) == set(before) - {"scale_sense", "current_iterator_step",
                                                    "last_overflow_iterator_step"}
        else:
            assert "weight" not in unchanged and "global_step" not in unchanged
    # (scale used, scale after): overflow at step 2 halves; 2 steps later it doubles
    assert scales == [(1024, 1024), (1024, 512), (512, 512), (512, 1024), (1024, 1024)]
    assert opt.global_step.asnumpy().tolist() == [4]
    assert {p.dtype for p in net.get_parameters()} == {ms.float32}


def mlp_reference(params: dict, steps: int, lr: float = 0.05, momentum: float = 0.9, eps: float = 1e-5):
    """The MLP's training steps in float64 numpy: BatchNorm on batch statistics, ReLU, sparse softmax
    cross-entropy (mean), Momentum. Returns the losses and the trained parameters (moving statistics
    left out)."""
    p = {k: v.astype(np.float64) for k, v in params.items() if "moving" not in k}
    vel = {k: np.zeros_like(a) for k, a in p.items()}
    n, rows, losses = len(X), np.arange(len(X)), []
    for _ in range(steps):
        h = X @ p["fc1.weight"].T + p["fc1.bias"]
        var = h.var(0)
        hn = (h - h.mean(0)) / np.sqrt(var + eps)
        z = p["bn.gamma"] * hn + p["bn.beta"]
        r = np.maximum(z, 0)
        o = r @ p["fc2.weight"].T + p["fc2.bias"]
        e = np.exp(o - o.max(1, keepdims=True))
        sm = e / e.sum(1, keepdims=True)
        losses.append(-np.log(sm[rows, Y]).mean())
        do = sm.copy()
        do[rows, Y] -= 1
        do /= n
        dz = (do @ p["fc2.weight"]) * (z > 0)
        dhn = dz * p["bn.gamma"]
        dh = (dhn - dhn.mean(0) - hn * (dhn * hn).mean(0)) / np.sqrt(var + eps)
        grads = {"fc1.weight": dh.T @ X, "fc1.bias": dh.sum(0), "bn.gamma": (dz * hn).sum(0),
                 "bn.beta": dz.sum(0), "fc2.weight": do.T @ r, "fc2.bias": do.sum(0)}
        for k in p:
            vel[k] = momentum * vel[k] + grads[k]
            p[k] = p[k] - lr * vel[k]
    return losses, p


def test_o2_training_tracks_float32_and_a_huge_scale_overflows_in_float16():
    """build_train_network at O2 (float16 compute, BatchNorm in float32, dynamic loss scale), run sunk
    (jit level O2: one launch, static memory plan, the skip decided on the device), against the same
    training in float64 numpy: losses and weights within float16 tolerance, Parameters float32. With
    a scale of 2**24 (MindSpore's default) the float16 backward overflows: the update is skipped and
    the scale halved until the gradients fit."""
    ms.set_context(jit_config={"jit_level": "O2"})

    def run(manager, steps):
        net = mlp()
        start = {k: p.asnumpy().copy() for k, p in net.parameters_dict().items()}
        step = amp.build_train_network(net, nn.Momentum(net.trainable_params(), 0.05, 0.9), loss_fn(), "O2",
                                       loss_scale_manager=manager)
        return net, start, [step(Tensor(X), Tensor(Y)) for _ in range(steps)]

    net, start, outs = run(amp.DynamicLossScaleManager(2.0 ** 10, 2, 1000), 4)
    losses, want = mlp_reference(start, 4)
    assert not any(bool(o[1].asnumpy()) for o in outs)
    np.testing.assert_allclose([float(o[0].asnumpy()) for o in outs], losses, rtol=2e-3)
    for name, p in net.parameters_dict().items():       # by name: amp wraps BatchNorm (its path gains _backbone)
        assert p.dtype == ms.float32, name
        if name in want:
            np.testing.assert_allclose(p.asnumpy(), want[name], rtol=1e-2, atol=2e-3, err_msg=name)

    net, start, outs = run(amp.DynamicLossScaleManager(2.0 ** 24, 2, 1000), 2)
    assert [bool(o[1].asnumpy()) for o in outs] == [True, True]
    assert [float(o[2].asnumpy()) for o in outs] == [2.0 ** 24, 2.0 ** 23]
    for name, p in net.parameters_dict().items():
        if "moving" not in name:                 # BatchNorm's statistics move in the forward pass
            np.testing.assert_array_equal(p.asnumpy(), start[name], err_msg=name)


def test_loss_scalers_and_all_finite():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    grads = (Tensor(np.array([1.5, 1.0], np.float32)), Tensor(np.array([np.inf], np.float32)))
    assert not bool(amp.all_finite(grads).asnumpy()) and bool(amp.all_finite(grads[:1]).asnumpy())
    static = amp.StaticLossScaler(2 ** 10)
    assert static.scale(Tensor(np.float32(1.0))).asnumpy() == 1024.0
    np.testing.assert_array_equal(static.unscale(grads[:1])[0].asnumpy(), [1.5 / 1024, 1.0 / 1024])
    dynamic = amp.DynamicLossScaler(scale_value=2 ** 10, scale_factor=2, scale_window=2)
    values = []
    for finite in (False, True, True, True):
        dynamic.adjust(Tensor(finite))
        values.append((float(dynamic.scale_value.asnumpy()), int(dynamic.counter.asnumpy())))
    assert values == [(512, 0), (512, 1), (1024, 0), (1024, 1)]
