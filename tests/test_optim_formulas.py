"""Optimizers x weight decay x loss scaling, against real MindSpore 2.10 and a float64 numpy oracle.

tools/record_optim_formulas.py trains a tiny fixed network three steps with every optimizer served
(SGD, Momentum, Adam, AdamWeightDecay) x {``weight_decay`` (the beta/gamma name filter applies),
per-group weight decay (a group's decay applies to all its parameters)} x {no loss scale, a fixed
1024 with ``loss_scale=1024`` in the optimizer, a dynamic loss scale}; real MindSpore's numbers are in
tests/fixtures/optim_formulas.json and the same code runs here on ascendemu.

MindSpore's rule under test: the optimizer multiplies its weight decay by its ``loss_scale``
(``Optimizer._preprocess_weight_decay``) before adding ``wd * p`` to the still-scaled gradient and
unscaling, so the decay is the same whatever the loss scale. The numpy oracle says so in float64: the
update never depends on the scale.
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
from ascendemu.frontend import Parameter, Tensor, nn

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("record_optim_formulas", ROOT / "tools" / "record_optim_formulas.py")
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)
MINDSPORE = json.loads((ROOT / "tests" / "fixtures" / "optim_formulas.json").read_text())["cases"]
RTOL = 1e-5                  # float32 against float32: summation orders differ
NUMPY_RTOL, NUMPY_ATOL = 1e-4, 1e-6   # float32 against float64


@pytest.fixture(autouse=True)
def graph_mode(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})


# ------------------------------------------------------------------------------------ numpy oracle

def _gradients(w: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
    """MSE loss of relu((x @ w1) * gamma + beta) @ w2 and its gradients, by hand in float64."""
    h = x @ w["w1"]
    z = h * w["gamma"] + w["beta"]
    a = np.maximum(z, 0.0)
    out = a @ w["w2"]
    d_out = 2.0 * (out - y) / out.size
    dz = (d_out @ w["w2"].T) * (z > 0)
    grads = {"w1": x.T @ (dz * w["gamma"]), "gamma": (dz * h).sum(0), "beta": dz.sum(0), "w2": a.T @ d_out}
    return float(((out - y) ** 2).mean()), grads


def numpy_run(case: str) -> dict:
    """MindSpore's documented update formulas in float64, with the effective gradient g + wd * p
    (the loss scale cancels: (s g + s wd p) / s)."""
    name, decay, _ = case.split("-")
    if decay == "group":
        wd = record.group_decay()
    else:                                           # the name filter: no decay on gamma and beta
        wd = {"w1": record.WEIGHT_DECAY, "gamma": 0.0, "beta": 0.0, "w2": record.WEIGHT_DECAY}
    w = {k: v.astype(np.float64) for k, v in record.initial_weights().items()}
    m = {k: np.zeros_like(v) for k, v in w.items()}
    v2 = {k: np.zeros_like(v) for k, v in w.items()}
    losses = []
    for t, (x, y) in enumerate(record.batches(), start=1):
        loss, grads = _gradients(w, x.astype(np.float64), y.astype(np.float64))
        losses.append(loss)
        for k, g in grads.items():
            if name != "AdamWeightDecay":
                g = g + wd[k] * w[k]
            if name == "SGD":                       # momentum 0.9, dampening 0.1; the first step takes v = g
                m[k] = g if t == 1 else 0.9 * m[k] + 0.9 * g
                w[k] = w[k] - 0.1 * m[k]
            elif name.startswith("Momentum"):
                m[k] = 0.9 * m[k] + g
                w[k] = w[k] - 0.1 * (g + 0.9 * m[k] if name == "MomentumNesterov" else m[k])
            else:
                m[k] = 0.9 * m[k] + 0.1 * g
                v2[k] = 0.999 * v2[k] + 0.001 * g * g
                if name == "Adam":                  # ApplyAdam: bias correction in the rate, eps outside
                    lr_t = 0.01 * math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
                    w[k] = w[k] - lr_t * m[k] / (np.sqrt(v2[k]) + 1e-8)
                else:                               # no bias correction, decoupled decay
                    w[k] = w[k] - 0.01 * (m[k] / (np.sqrt(v2[k]) + 1e-6) + wd[k] * w[k])
    return {"losses": losses, "params": w}


def assert_same_run(ours: dict, want: dict, rtol: float, atol: float = 0.0) -> None:
    np.testing.assert_allclose(ours["losses"], want["losses"], rtol=rtol, atol=atol, err_msg="losses")
    assert list(ours["params"]) == ["w1", "gamma", "beta", "w2"]
    for k, value in want["params"].items():
        np.testing.assert_allclose(ours["params"][k], value, rtol=rtol, atol=atol, err_msg=k)


# ---------------------------------------------------------------------------------------- the tests

@pytest.mark.parametrize("case", record.CASES)
def test_optimizer_matches_mindspore_and_numpy(case):
    """Three steps of each optimizer x decay x loss scale: real MindSpore 2.10's losses and final
    parameters (rtol 1e-5), and the float64 formulas; a dynamic scale ends where MindSpore's did."""
    ours = record.run_case(ms, case)
    assert_same_run(ours, MINDSPORE[case], RTOL)
    assert_same_run(ours, numpy_run(case), NUMPY_RTOL, NUMPY_ATOL)
    if case.endswith("dynamic"):
        assert ours["loss_scale"] == MINDSPORE[case]["loss_scale"] == 2.0 ** 13   # grew once, at step 2


@pytest.mark.parametrize("case", record.cases(("MomentumNesterov",)))
def test_nesterov_momentum_matches_numpy(case):
    """Nesterov Momentum, against the formulas only (MindSpore's CPU backend ignores use_nesterov)."""
    assert_same_run(record.run_case(ms, case), numpy_run(case), NUMPY_RTOL, NUMPY_ATOL)


def test_fixed_loss_scale_keeps_the_decay():
    """The defect this file was written for: Momentum with group weight decay, loss_scale=1024 and a
    FixedLossScaleManager divided the decay by the scale. As in real MindSpore (whose fixture numbers
    are identical for both), the run with the loss scale ends where the run without one does."""
    unscaled, scaled = (record.run_case(ms, "Momentum-group-" + s)["params"] for s in ("none", "fixed"))
    for k in unscaled:
        np.testing.assert_allclose(scaled[k], unscaled[k], rtol=RTOL, err_msg=k)
    assert MINDSPORE["Momentum-group-none"]["params"] == MINDSPORE["Momentum-group-fixed"]["params"]


def test_group_decay_ignores_the_name_filter():
    """In a parameter group, MindSpore decays every parameter of a group with weight_decay > 0, gamma
    included; without groups gamma and beta are never decayed. One SGD step from g = 0 (lr 1) moves a
    parameter by exactly -wd * p."""
    gamma = Parameter(Tensor(np.array([2.0, 4.0], np.float32)), name="gamma")
    beta = Parameter(Tensor(np.array([1.0, 3.0], np.float32)), name="beta")
    zeros = (Tensor(np.zeros(2, np.float32)), Tensor(np.zeros(2, np.float32)))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    nn.SGD([{"params": [gamma], "weight_decay": 0.25}, {"params": [beta]}], 1.0, loss_scale=8.0)(zeros)
    np.testing.assert_array_equal(gamma.asnumpy(), [1.5, 3.0])
    np.testing.assert_array_equal(beta.asnumpy(), [1.0, 3.0])
    nn.SGD([gamma, beta], 1.0, weight_decay=0.25)(zeros)
    np.testing.assert_array_equal(gamma.asnumpy(), [1.5, 3.0])


def test_optimizer_refuses_a_bad_loss_scale_or_decay():
    p = Parameter(Tensor(np.ones(2, np.float32)), name="w")
    with pytest.raises(InvalidParamError, match="loss_scale"):
        nn.Momentum([p], 0.1, 0.9, loss_scale=0.0)
    with pytest.raises(InvalidParamError, match="weight_decay"):
        nn.Momentum([{"params": [p], "weight_decay": -1.0}], 0.1, 0.9)
