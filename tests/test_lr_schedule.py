"""Learning-rate schedule cells (``nn.ExponentialDecayLR`` ...) against MindSpore's formulas written in
numpy and the values its documentation prints, and optimizers driven by a schedule (the rate computed
on the device from ``global_step`` inside the training step) against numpy SGD/Momentum."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn


pytestmark = pytest.mark.usefixtures("ex", "restore_context")


# MindSpore's construct() of each schedule, in float64 numpy (nn/learning_rate_schedule.py of MindSpore 2.x)
def exponential(lr, rate, steps, stair):
    return lambda s: lr * rate ** (np.floor(s / steps) if stair else s / steps)


def natural_exp(lr, rate, steps, stair):
    return lambda s: lr * math.e ** (-rate * (np.floor(s / steps) * steps if stair else s))


def inverse(lr, rate, steps, stair):
    return lambda s: lr / (1 + rate * (np.floor(s / steps) if stair else s / steps))


def cosine(min_lr, max_lr, steps):
    return lambda s: min_lr + 0.5 * (max_lr - min_lr) * (1 + np.cos(math.pi * np.minimum(s, steps) / steps))


def polynomial(lr, end, steps, power, update):
    def f(s):
        span = steps * np.maximum(np.ceil(s / steps), 1) if update else steps
        p = s / span if update else np.minimum(s, steps) / steps
        return (lr - end) * (1 - p) ** power + end
    return f


def warmup(lr, steps):
    return lambda s: lr * np.minimum(s, steps) / steps


CASES = [
    ("ExponentialDecayLR", (0.1, 0.9, 4, False), exponential),
    ("ExponentialDecayLR", (0.1, 0.5, 3, True), exponential),
    ("NaturalExpDecayLR", (0.1, 0.3, 4, False), natural_exp),
    ("NaturalExpDecayLR", (0.1, 0.3, 4, True), natural_exp),
    ("InverseDecayLR", (0.1, 0.5, 3, False), inverse),
    ("InverseDecayLR", (0.1, 0.5, 3, True), inverse),
    ("CosineDecayLR", (0.01, 0.1, 5), cosine),
    ("PolynomialDecayLR", (0.1, 0.01, 4, 0.5, False), polynomial),
    ("PolynomialDecayLR", (0.1, 0.01, 4, 2.0, True), polynomial),
    ("WarmUpLR", (0.1, 3), warmup),
]
STEPS = 10


def lr_values(cell, steps=range(STEPS)):
    """The schedule at each step, given as an optimizer gives it: a (1,) int32 global_step."""
    return np.concatenate([cell(Tensor(np.array([s], np.int32))).asnumpy() for s in steps])


@pytest.mark.parametrize("name,args,ref", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("mode", [ms.GRAPH_MODE, ms.PYNATIVE_MODE])
def test_schedule_values_match_mindspore_formulas(ex, name, args, ref, mode):
    """Steps 0..9 (past decay_steps, so the caps and stairs show), as graphs and op by op."""
    ms.set_context(mode=mode, jit_config={"jit_level": "O0"})
    got = lr_values(getattr(nn, name)(*args))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref(*args)(np.arange(STEPS, dtype=np.float64)), rtol=2e-6)


@pytest.mark.parametrize("name,args,value", [
    # the Examples of MindSpore's docstrings, at global_step = 2
    ("ExponentialDecayLR", (0.1, 0.9, 4), 0.1 * 0.9 ** 0.5),
    ("NaturalExpDecayLR", (0.1, 0.9, 4, True), 0.1),
    ("InverseDecayLR", (0.1, 0.9, 4, True), 0.1),
    ("CosineDecayLR", (0.01, 0.1, 4), 0.055),
    ("PolynomialDecayLR", (0.1, 0.01, 4, 0.5), 0.09 * 0.5 ** 0.5 + 0.01),
    ("WarmUpLR", (0.1, 2), 0.1),
])
def test_documented_examples(ex, name, args, value):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert lr_values(getattr(nn, name)(*args), [2]) == pytest.approx([value], rel=1e-6)


@pytest.mark.parametrize("make,fragment", [
    (lambda: nn.ExponentialDecayLR(0.1, 0.9, 0), "decay_steps=0"),
    (lambda: nn.ExponentialDecayLR(1, 0.9, 4), "learning_rate=1 must be a float"),
    (lambda: nn.InverseDecayLR(0.1, 0.9, 4, is_stair=1), "is_stair=1 must be a bool"),
    (lambda: nn.CosineDecayLR(0.1, 0.1, 4), "greater than min_lr"),
    (lambda: nn.PolynomialDecayLR(0.1, -0.1, 4, 1.0), "end_learning_rate=-0.1"),
    (lambda: nn.WarmUpLR(0.1, 2.5), "warmup_steps=2.5"),
])
def test_bad_arguments_are_typed_errors(make, fragment):
    with pytest.raises(InvalidParamError, match=fragment):
        make()


RNG = np.random.default_rng(11)


def mse_grads(x, y, w, b):
    diff = x @ w.T + b - y
    g = 2 * diff / diff.size
    return g.T @ x, g.sum(0)


@pytest.mark.parametrize("opt_name,mode", [("Momentum", ms.GRAPH_MODE), ("SGD", ms.GRAPH_MODE),
                                           ("Momentum", ms.PYNATIVE_MODE)])
def test_optimizer_driven_by_a_schedule(ex, opt_name, mode):
    """Dense + MSELoss, 5 steps, the rate a schedule of global_step (computed in the training graph):
    parameters, momentum and global_step against numpy; the checkpoint names have no learning_rate."""
    ms.set_context(mode=mode, jit_config={"jit_level": "O0"})
    w, b, x, y = RNG.standard_normal((2, 3)), RNG.standard_normal(2), RNG.standard_normal((4, 3)), \
        RNG.standard_normal((4, 2))
    net = nn.Dense(3, 2, weight_init=Tensor(w.astype(np.float32)), bias_init=Tensor(b.astype(np.float32)))
    schedule = nn.CosineDecayLR(0.01, 0.2, 3) if opt_name == "Momentum" else nn.ExponentialDecayLR(0.2, 0.5, 2, True)
    rates = (cosine(0.01, 0.2, 3) if opt_name == "Momentum" else exponential(0.2, 0.5, 2, True))(np.arange(5.0))
    opt = (nn.Momentum(net.trainable_params(), schedule, 0.9) if opt_name == "Momentum"
           else nn.SGD(net.trainable_params(), schedule, momentum=0.5))
    state = ["moments"] if opt_name == "Momentum" else ["accum", "stat"]
    assert [p.name for p in opt.get_parameters()] == ["weight", "bias", "global_step", "momentum",
                                                      *(f"{s}.{p}" for s in state for p in ("weight", "bias"))]
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    for i in range(5):
        step(Tensor(x.astype(np.float32)), Tensor(y.astype(np.float32)))
        gw, gb = mse_grads(x, y, w, b)
        if opt_name == "Momentum":
            vw, vb = 0.9 * vw + gw, 0.9 * vb + gb
        else:                                   # MindSpore's SGD: the first step takes the gradient
            vw, vb = (gw, gb) if i == 0 else (0.5 * vw + gw, 0.5 * vb + gb)
        w, b = w - rates[i] * vw, b - rates[i] * vb
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=1e-5, atol=1e-6)
    assert opt.global_step.asnumpy().tolist() == [5]


def test_get_lr_like_mindspore(ex):
    """A fixed rate: the learning_rate Parameter, global_step untouched; a dynamic one: its value at
    global_step, then global_step += 1 (a list past its end keeps its last value)."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    params = nn.Dense(3, 2).trainable_params()
    fixed = nn.Momentum(params, 0.05, 0.9)
    lr = fixed.get_lr()
    assert lr is fixed.learning_rate and lr.name == "learning_rate"
    assert fixed.global_step.asnumpy().tolist() == [0]
    scheduled = nn.Momentum(params, nn.WarmUpLR(0.1, 4), 0.9)
    assert [float(scheduled.get_lr().asnumpy()) for _ in range(3)] == pytest.approx([0.0, 0.025, 0.05])
    assert scheduled.global_step.asnumpy().tolist() == [3]
    listed = nn.SGD(params, [0.3, 0.2, 0.1])
    got = [listed.get_lr() for _ in range(4)]
    assert all(g.shape == () for g in got)
    assert [float(g.asnumpy()) for g in got] == pytest.approx([0.3, 0.2, 0.1, 0.1])
    # a per-step list (the zoo's lr generators) is a schedule cell owning Parameter learning_rate, so
    # the checkpoint lists it after the moments, as MindSpore 2.10 wrote for the zoo's ResNet
    stepped = nn.Momentum(params, Tensor(np.array([0.3, 0.2], np.float32)), 0.9)
    assert [p.name for p in stepped.get_parameters()] == ["weight", "bias", "global_step", "momentum",
                                                         "moments.weight", "moments.bias", "learning_rate"]
    assert [p.name for p in fixed.get_parameters()][2:4] == ["global_step", "learning_rate"]
