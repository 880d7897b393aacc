"""The later optimizers (RMSProp, Adagrad, Adadelta, AdaMax, ProximalAdagrad, FTRL, LazyAdam, Rprop,
ASGD, Lamb) and the Apply* update primitives, against real MindSpore 2.10 and float64 numpy.

tools/record_optim_formulas.py (``BREADTH_CASES``) trains the tiny network of tests/test_optim_formulas.py
three steps with each optimizer (name-filtered weight decay; group decay with a fixed loss scale of 1024)
and records the losses, the final parameters and the optimizer's state names (what a checkpoint lists)
into tests/fixtures/optim_formulas.json; the same code runs here on ascendemu. Lamb has no CPU kernel
in MindSpore, so its steps are checked against the documented formula in numpy only.
"""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Parameter, Tensor, nn, ops

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("record_optim_formulas", ROOT / "tools" / "record_optim_formulas.py")
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)
MINDSPORE = json.loads((ROOT / "tests" / "fixtures" / "optim_formulas.json").read_text())["cases"]
RTOL, ATOL = 2e-5, 1e-7         # float32 against float32: summation orders differ


@pytest.fixture(autouse=True)
def graph_mode(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})


def _state_names(case: str) -> list[str]:
    name, decay, scale = case.split("-")
    net = record._network(ms)
    opt = record._optimizer(ms, name, decay, record.LOSS_SCALE if scale == "fixed" else 1.0, net)
    own = {q.name for q in net.trainable_params()}
    return sorted(n for n, _ in opt.parameters_and_names() if n not in own)


PROBES = json.loads((ROOT / "tests" / "fixtures" / "optim_formulas.json").read_text())["probes"]


@pytest.mark.parametrize("case", record.BREADTH_CASES)
def test_optimizer_matches_mindspore(case):
    """Three steps: real MindSpore 2.10's losses and final parameters, and its state names."""
    ours = record.run_case(ms, case)
    want = MINDSPORE[case]
    np.testing.assert_allclose(ours["losses"], want["losses"], rtol=RTOL, atol=ATOL, err_msg="losses")
    for k, value in want["params"].items():
        np.testing.assert_allclose(ours["params"][k], value, rtol=RTOL, atol=ATOL, err_msg=k)
    assert ours["state"] == want["state"]


def test_lamb_matches_numpy():
    """Lamb's three steps against its formula in float64 (bias-corrected moments, trust ratio
    ||p|| / ||r||, decay inside r for the decayed parameters: not gamma and beta)."""
    ours = record.run_case(ms, "Lamb-weight_decay-none")
    from test_optim_formulas import _gradients
    w = {k: v.astype(np.float64) for k, v in record.initial_weights().items()}
    m = {k: np.zeros_like(v) for k, v in w.items()}
    v2 = {k: np.zeros_like(v) for k, v in w.items()}
    wd = {"w1": record.WEIGHT_DECAY, "gamma": 0.0, "beta": 0.0, "w2": record.WEIGHT_DECAY}
    for t, (x, y) in enumerate(record.batches(), start=1):
        _, grads = _gradients(w, x.astype(np.float64), y.astype(np.float64))
        for k, g in grads.items():
            m[k] = 0.9 * m[k] + 0.1 * g
            v2[k] = 0.999 * v2[k] + 0.001 * g * g
            r = (m[k] / (1 - 0.9 ** t)) / (np.sqrt(v2[k] / (1 - 0.999 ** t)) + 1e-6) + wd[k] * w[k]
            w_norm, r_norm = np.linalg.norm(w[k]), np.linalg.norm(r)
            ratio = w_norm / r_norm if w_norm > 0 and r_norm > 0 else 1.0
            w[k] = w[k] - 0.01 * ratio * r
    for k, value in w.items():
        np.testing.assert_allclose(ours["params"][k], value, rtol=1e-4, atol=1e-6, err_msg=k)
    assert ours["state"] == _state_names("Lamb-weight_decay-none")


def _param(values) -> Parameter:
    return Parameter(Tensor(np.asarray(values, np.float32)), name="var")


def test_apply_primitives_update_in_place():
    """The Apply* primitives on Parameters, one step each, against their formulas by hand (float64)."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    g = np.array([0.5, -1.0, 2.0])
    var0 = np.array([1.0, 2.0, -3.0])
    # ApplyRMSProp: ms = 0.9 + 0.1 g^2; mom = lr g / sqrt(ms + eps); var -= mom
    var, mean_sq, mom = _param(var0), _param(np.ones(3)), _param(np.zeros(3))
    out = ops.ApplyRMSProp()(var, mean_sq, mom, 0.1, Tensor(g.astype(np.float32)), 0.9, 0.0, 1e-10)
    want_ms = 0.9 + 0.1 * g * g
    want = var0 - 0.1 * g / np.sqrt(want_ms + 1e-10)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(mean_sq.asnumpy(), want_ms, rtol=1e-6)
    # ApplyAdagrad returns (var, accum)
    var, accum = _param(var0), _param(np.full(3, 0.1))
    new_var, new_accum = ops.ApplyAdagrad()(var, accum, 0.5, Tensor(g.astype(np.float32)))
    np.testing.assert_allclose(new_accum.asnumpy(), 0.1 + g * g, rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), var0 - 0.5 * g / np.sqrt(0.1 + g * g), rtol=1e-6)
    # ApplyProximalAdagrad: with a = lr / sqrt(accum), shrinkage by a l1, scale 1 / (1 + a l2)
    var, accum = _param(var0), _param(np.full(3, 0.1))
    ops.ApplyProximalAdagrad()(var, accum, 0.5, 0.4, 0.2, Tensor(g.astype(np.float32)))
    rate = 0.5 / np.sqrt(0.1 + g * g)
    prox = var0 - rate * g
    want = np.sign(prox) * np.maximum(np.abs(prox) - rate * 0.4, 0) / (1 + rate * 0.2)
    np.testing.assert_allclose(var.asnumpy(), want, rtol=1e-6)
    # ApplyFtrl: a weight whose |linear| <= l1 is set to 0
    var, accum, linear = _param(var0), _param(np.full(3, 0.1)), _param(np.zeros(3))
    ops.ApplyFtrl()(var, accum, linear, Tensor(g.astype(np.float32)), 0.1, 3.0, 0.0, -0.5)
    acc = 0.1 + g * g
    lin = g - (np.sqrt(acc) - np.sqrt(0.1)) / 0.1 * var0
    want = np.where(np.abs(lin) > 3.0, (np.sign(lin) * 3.0 - lin) / (np.sqrt(acc) / 0.1), 0.0)
    np.testing.assert_allclose(linear.asnumpy(), lin, rtol=1e-5)
    np.testing.assert_allclose(var.asnumpy(), want, rtol=1e-5, atol=1e-7)


def test_optimizers_refuse_bad_hyper_parameters():
    p = [Parameter(Tensor(np.ones(2, np.float32)), name="w")]
    with pytest.raises(InvalidParamError, match="beta1"):
        nn.AdaMax(p, beta1=1.0)
    with pytest.raises(InvalidParamError, match="rho"):
        nn.Adadelta(p, rho=1.5)
    with pytest.raises(InvalidParamError, match="etas"):
        nn.Rprop(p, etas=(0.5, 0.9))
    with pytest.raises(InvalidParamError, match="dynamic"):
        nn.FTRL(p, learning_rate=[0.1, 0.2])
    with pytest.raises(InvalidParamError, match="gradient_scale"):
        ops.ApplyMomentum(gradient_scale=2.0)
    assert math.isclose(nn.RMSProp(p).epsilon, 1e-10)


def test_apply_ftrl_matches_mindspore_sparse_apply_ftrl():
    """ApplyFtrl's l1 shrinkage: two steps against MindSpore's CPU SparseApplyFtrl (the documented
    formula, sign(linear) l1 - linear). MindSpore 2.10's CPU ApplyFtrl differs where linear < 0 (it takes
    the sign as +1, also recorded): the emulator keeps the documented formula."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    f = record.FTRL_PROBE
    var, accum = _param(f["var"]), _param(np.full(4, f["accum"]))
    linear = _param(np.zeros(4))
    for g in f["grads"]:
        ops.ApplyFtrl()(var, accum, linear, Tensor(np.array(g, np.float32)), f["lr"], f["l1"], f["l2"], f["lr_power"])
    want = PROBES["SparseApplyFtrl"]
    for name, got in (("var", var), ("accum", accum), ("linear", linear)):
        np.testing.assert_allclose(got.asnumpy(), want[name], rtol=1e-5, atol=1e-7, err_msg=name)
    quirk = np.array(PROBES["ApplyFtrl"]["var"])
    assert not np.allclose(var.asnumpy(), quirk, rtol=1e-5)       # the CPU quirk is not reproduced


def test_lars_matches_numpy():
    """LARS(Momentum): three steps against LARSUpdate's formula in float64 (trust ratio coefficient ||w|| /
    (||g|| + wd ||w|| + eps), decay (w1, w2 only: the Momentum's name filter) moved into the ratio's
    gradient, Momentum's own decay off); its state names as MindSpore 2.10 lists them."""
    from test_optim_formulas import _gradients
    ours = record.run_case(ms, "LARS-weight_decay-none")
    w = {k: v.astype(np.float64) for k, v in record.initial_weights().items()}
    mom = {k: np.zeros_like(v) for k, v in w.items()}
    wd = {"w1": record.WEIGHT_DECAY, "gamma": 0.0, "beta": 0.0, "w2": record.WEIGHT_DECAY}
    for x, y in record.batches():
        _, grads = _gradients(w, x.astype(np.float64), y.astype(np.float64))
        for k, g in grads.items():
            w_norm, g_norm = np.linalg.norm(w[k]), np.linalg.norm(g)
            ratio = 0.02 * w_norm / (g_norm + wd[k] * w_norm + 1e-5) if w_norm > 0 and g_norm > 0 else 1.0
            mom[k] = 0.9 * mom[k] + (g + wd[k] * w[k]) * ratio
            w[k] = w[k] - 0.1 * mom[k]
    for k, value in w.items():
        np.testing.assert_allclose(ours["params"][k], value, rtol=1e-4, atol=1e-6, err_msg=k)
    net = record._network(ms)
    lars = record._optimizer(ms, "LARS", "weight_decay", 1.0, net)
    own = {q.name for q in net.trainable_params()}
    assert sorted(p.name for _, p in lars.parameters_and_names() if p.name not in own) == PROBES["LARS_state"]


def test_lars_adafactor_adasum_refuse_as_mindspore():
    p = [Parameter(Tensor(np.ones((2, 2), np.float32)), name="w")]
    with pytest.raises(TypeError, match="optimizer"):
        nn.LARS(p)
    with pytest.raises(ValueError, match="relative_step"):
        nn.AdaFactor(p, learning_rate=0.1)
    with pytest.raises(ValueError, match="warmup_init"):
        nn.AdaFactor(p, learning_rate=0.1, relative_step=False, warmup_init=True)
    with pytest.raises(ValueError, match="decay_rate"):
        nn.AdaFactor(p, decay_rate=1.0)
    for wrap in (nn.AdaSumByGradWrapCell, nn.AdaSumByDeltaWeightWrapCell):
        with pytest.raises(RuntimeError, match="Stand alone mode is not supported to apply adasum"):
            wrap(nn.Momentum(p, 0.1, 0.9))
