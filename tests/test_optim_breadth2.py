"""mint.optim (Adam, AdamW, SGD, FusedAdamW) and the round-2 Apply* primitives.

Oracles: real MindSpore 2.10's training steps (tests/fixtures/mint_optim.json, tools/record_mint_optim.py)
for Adam and SGD in PyNative and GRAPH_MODE; a float64 numpy AdamW (PyTorch's formula, Ascend's
ApplyAdamWV2 with t = step + 1) for AdamW/FusedAdamW, which MindSpore's CPU cannot run; float64 numpy
formulas (MindSpore's documented ones) for the primitives, run inside a GRAPH_MODE Cell.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, mint, nn, ops

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("record_mint_optim", ROOT / "tools" / "record_mint_optim.py")
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)
MINDSPORE = json.loads((ROOT / "tests" / "fixtures" / "mint_optim.json").read_text())["cases"]
# SGD matches bit for bit; Adam's bias correction 1 - beta2^t cancels: MindSpore CPU's Pow of the scalar
# base is ~16 float32 ulp from the rounded power, which the cancellation makes ~2e-6 of the step
RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


@pytest.mark.parametrize("case", sorted(record.CASES))
def test_mint_optim_training_matches_mindspore(case):
    got = record.run_case(ms, case)      # GRAPH_MODE, value_and_grad + optimizer in one jitted step
    want = MINDSPORE[case]
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=RTOL, atol=ATOL)
    assert list(got["state"]) == list(want["state"])
    for name, values in want["state"].items():
        np.testing.assert_allclose(np.asarray(got["state"][name], np.float32), np.asarray(values, np.float32),
                                   rtol=RTOL, atol=ATOL, err_msg=name)
    if case.startswith("sgd") and "decay" not in case:
        assert got["state"] == want["state"]          # every bit (with decay: 1 ulp, the g + wd p rounding)


def test_mint_sgd_pynative_steps_are_the_graphs():
    """PyNative updates too (MindSpore 2.10 CPU's PyNative leaves the parameters unchanged: a bug)."""
    w = Parameter(Tensor(np.array([1.0, -2.0], np.float32)), name="w")
    opt = mint.optim.SGD([w], lr=0.1, momentum=0.9)
    g = Tensor(np.array([0.5, 0.25], np.float32))
    opt((g,))
    opt((g,))
    buf = 0.5 * 0.9 + 0.5, 0.25 * 0.9 + 0.25
    np.testing.assert_allclose(w.asnumpy(), [1.0 - 0.05 - 0.1 * buf[0], -2.0 - 0.025 - 0.1 * buf[1]], rtol=1e-6)
    assert int(opt.step_t.asnumpy()) == 2


def adamw_ref(p, grads, lr, b1, b2, eps, wd, amsgrad, maximize):
    """PyTorch's AdamW in float64."""
    p, m, v, vmax = p.astype(np.float64), 0.0 * p, 0.0 * p, 0.0 * p
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        p = p * (1 - lr * wd)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / np.sqrt(1 - b2 ** t) + eps
        p = p - lr / (1 - b1 ** t) * m / denom
    return p, m, v, vmax


@pytest.mark.parametrize("cls", ["AdamW", "FusedAdamW"])
@pytest.mark.parametrize("amsgrad,maximize", [(False, False), (True, True)])
def test_adamw_is_pytorchs(cls, amsgrad, maximize):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    rng = np.random.RandomState(3)
    w0 = rng.randn(3, 2).astype(np.float32)
    grads = [rng.randn(3, 2).astype(np.float32) for _ in range(3)]
    w = Parameter(Tensor(w0), name="w")
    opt = getattr(mint.optim, cls)([w], lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, amsgrad=amsgrad,
                                   maximize=maximize)

    class Step(nn.Cell):
        def __init__(self):
            super().__init__()
            self.opt = opt

        def construct(self, g):
            return self.opt((g,))
    step = Step()
    for g in grads:
        step(Tensor(g))
    p, m, v, vmax = adamw_ref(w0, grads, 0.01, 0.8, 0.9, 1e-6, 0.1, amsgrad, maximize)
    np.testing.assert_allclose(w.asnumpy(), p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(opt.exp_avg[0].asnumpy(), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(opt.exp_avg_sq[0].asnumpy(), v, rtol=1e-5, atol=1e-7)
    assert float(opt.state_step.asnumpy()[0]) == 2.0
    if amsgrad:
        maxima = opt.max_exp_avg_sq if cls == "FusedAdamW" else opt.param_groups[0]["max_exp_avg_sq"]
        np.testing.assert_allclose(maxima[0].asnumpy(), vmax, rtol=1e-5, atol=1e-7)


def test_mint_optim_groups_and_errors():
    a, b = Parameter(Tensor(np.ones(2, np.float32)), name="a"), Parameter(Tensor(np.ones(3, np.float32)), name="b")
    opt = mint.optim.AdamW([{"params": [a], "lr": 0.5}, {"params": [b], "weight_decay": 0.0}], lr=0.1)
    assert [g["lr"].name for g in opt.param_groups] == ["learning_rate_group_0", "learning_rate_group_1"]
    assert float(opt.param_groups[0]["lr"].asnumpy()) == 0.5 and opt.param_groups[1]["weight_decay"] == 0.0
    assert [n for n, _ in opt.parameters_and_names()] == ["a", "b", "exp_avg.a", "exp_avg.b", "exp_avg_sq.a",
                                                         "exp_avg_sq.b", "state_step"]
    with pytest.raises(ValueError, match="more than one parameter group"):
        mint.optim.Adam([{"params": [a]}, {"params": [a]}])
    with pytest.raises(TypeError, match="'lr' should be 'float'"):
        mint.optim.Adam([a], lr=1)
    with pytest.raises(ValueError, match="mixed amsgrad"):
        mint.optim.FusedAdamW([{"params": [a], "amsgrad": True}, {"params": [b]}])
    with pytest.raises(ValueError, match="'nesterov' is true"):
        mint.optim.SGD([a], lr=0.1, nesterov=True)


def _sign(x):
    return np.sign(x)


RNG = np.random.RandomState(5)
V, S1, S2, S3, G = (RNG.randn(2, 3) for _ in range(5))
POS1, POS2 = np.abs(S1) + 0.1, np.abs(S2) + 0.1


def _keras(nesterov):
    acc = S1 * 0.9 - G * 0.01
    return [V + acc * 0.9 - G * 0.01 if nesterov else V + acc, acc]


def _adagrad_da():
    ga, gsa, step = S1 + G, POS2 + G * G, 3.0
    tmp = _sign(ga) * np.maximum(np.abs(ga) - 0.01 * step, 0)
    return [-0.1 * tmp / (0.02 * step * 0.1 + np.sqrt(gsa))]


def _prox_gd():
    prox = V - 0.1 * G
    return [_sign(prox) * np.maximum(np.abs(prox) - 0.1 * 0.5, 0) / (1 + 0.1 * 0.2)]


def _sign_ref(scale_of):
    m = 0.9 * S1 + 0.1 * G
    return [V - 0.01 * scale_of(_sign(G) * _sign(m)) * G, m]


def _amsgrad():
    m, v = 0.9 * S1 + 0.1 * G, 0.999 * POS1 + 0.001 * G * G
    vhat = np.maximum(POS2, v)
    return [V - 0.01 * np.sqrt(1 - 0.99) / (1 - 0.8) * m / (np.sqrt(vhat) + 1e-8), m, v, vhat]


# (primitive, constructor kwargs, number of state inputs, inputs, numpy outputs)
PRIMITIVES = [
    ("ApplyKerasMomentum", {}, 2, [V, S1, 0.01, G, 0.9], _keras(False)),
    ("ApplyKerasMomentum", {"use_nesterov": True}, 2, [V, S1, 0.01, G, 0.9], _keras(True)),
    ("ApplyAdagradDA", {}, 3, [V, S1, POS2, G, 0.1, 0.01, 0.02, 3.0], _adagrad_da()),
    ("ApplyProximalGradientDescent", {}, 1, [V, 0.1, 0.5, 0.2, G], _prox_gd()),
    ("ApplyAddSign", {}, 2, [V, S1, 0.01, 1.0, 0.5, 0.9, G], _sign_ref(lambda s: 1.0 + 0.5 * s)),
    ("ApplyPowerSign", {}, 2, [V, S1, 0.01, np.e, 0.5, 0.9, G], _sign_ref(lambda s: np.exp(np.e * 0.5 * s))),
    ("ApplyAdagradV2", {"epsilon": 1e-3}, 2, [V, POS1, 0.1, G],
     [V - 0.1 * G / (np.sqrt(POS1 + G * G) + 1e-3), POS1 + G * G]),
    ("ApplyAdamWithAmsgradV2", {}, 4, [V, S1, POS1, POS2, 0.8, 0.99, 0.01, 0.9, 0.999, 1e-8, G], _amsgrad()),
]


@pytest.mark.parametrize("name,kwargs,states,inputs,want", PRIMITIVES,
                         ids=[f"{p[0]}-{i}" for i, p in enumerate(PRIMITIVES)])
def test_primitive_updates_parameters_in_graph_mode(name, kwargs, states, inputs, want):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    held = [Parameter(Tensor(np.asarray(x, np.float32)), name=f"s{i}") for i, x in enumerate(inputs[:states])]
    rest = [Tensor(np.asarray(x, np.float32)) for x in inputs[states:]]
    prim = getattr(ops, name)(**kwargs)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.held = held

        def construct(self, *xs):
            return prim(*held, *xs)
    out = Net()(*rest)
    outs = out if isinstance(out, tuple) else (out,)
    for got, ref in zip(outs, want):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=2e-5, atol=1e-6)
    for param, ref in zip(held, want):             # updated in place, in state order
        np.testing.assert_allclose(param.asnumpy(), ref, rtol=2e-5, atol=1e-6)


def test_sgd_and_adam_no_update_param_primitives():
    var, accum = Parameter(Tensor(V.astype(np.float32)), name="v"), Parameter(Tensor(S1.astype(np.float32)), name="a")
    stat = Parameter(Tensor(np.ones((2, 3), np.float32)), name="s")
    lr, mom = Tensor(np.float32(0.1)), Tensor(np.float32(0.9))
    ops.SGD(weight_decay=0.1)(var, Tensor(G.astype(np.float32)), lr, accum, mom, stat)
    g = G + 0.1 * V
    np.testing.assert_allclose(var.asnumpy(), V - 0.1 * g, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(stat.asnumpy(), 0.0)
    m, v = Parameter(Tensor(S1.astype(np.float32)), name="m"), Parameter(Tensor(POS1.astype(np.float32)), name="v2")
    scalars = [Tensor(np.array([x], np.float32)) for x in (0.9, 0.999, 0.01, 0.9, 0.999, 1e-8)]
    delta = ops.AdamNoUpdateParam()(m, v, *scalars, Tensor(G.astype(np.float32)))
    m_ref, v_ref = 0.9 * S1 + 0.1 * G, 0.999 * POS1 + 0.001 * G * G
    np.testing.assert_allclose(delta.asnumpy(), -0.01 * np.sqrt(0.001) / 0.1 * m_ref / (np.sqrt(v_ref) + 1e-8),
                               rtol=2e-5, atol=1e-7)
    np.testing.assert_allclose(m.asnumpy(), m_ref, rtol=1e-5, atol=1e-7)
