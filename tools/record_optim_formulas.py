"""Record real MindSpore's optimizer updates for tests/test_optim_formulas.py.

SGD, Momentum, Adam, AdamWeightDecay x
{``weight_decay`` (MindSpore's beta/gamma name filter applies), per-group weight decay (no name filter)}
x {no loss scale, ``FixedLossScaleManager(1024, drop_overflow_update=False)`` with ``loss_scale=1024``
in the optimizer, a ``DynamicLossScaleManager``'s update cell}, and two cases of each of the later
optimizers (``BREADTH_OPTIMIZERS``), train a tiny fixed network for three steps; the losses, the final
parameters, the optimizer's state names (as a checkpoint lists them) and the final loss scale go to
tests/fixtures/optim_formulas.json.

Run it with real MindSpore (CI never needs it; ascendemu is not imported)::

    /work/msvenv/bin/python tools/record_optim_formulas.py

The test imports ``CASES``, ``batches``, ``initial_weights`` and ``run_case`` from this file and runs
them with ``ascendemu.frontend`` as the ``mindspore`` module, so both sides run the same code.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "optim_formulas.json"
STEPS = 3
LOSS_SCALE = 1024.0                     # the fixed scale (optimizer's loss_scale and the manager's)
DYNAMIC = {"init_loss_scale": 2.0 ** 12, "scale_factor": 2, "scale_window": 2}   # grows after 2 clean steps
WEIGHT_DECAY = 0.05
# MomentumNesterov is left out of the recording: real MindSpore's CPU ApplyMomentum ignores use_nesterov
# (2.10 CPU gives the plain Momentum numbers bit for bit), so only the numpy oracle checks it.
OPTIMIZERS = ("SGD", "Momentum", "Adam", "AdamWeightDecay")
DECAYS = ("weight_decay", "group")
SCALES = ("none", "fixed", "dynamic")
# AdamWeightDecay takes no loss_scale, so it cannot unscale a FixedLossScaleManager's sens=1024
def cases(optimizers: tuple[str, ...] = OPTIMIZERS) -> list[str]:
    """``optimizer-decay-scale`` names of the cases of ``optimizers``."""
    return [f"{o}-{d}-{s}" for o in optimizers for d in DECAYS for s in SCALES
            if not (o == "AdamWeightDecay" and s == "fixed")]


# The later optimizers, two cases each (the base Optimizer's decay and loss-scale rules are what the
# full grid above checks): the name-filtered decay without a loss scale, and group decay with the
# fixed loss scale (without one for those that take no loss_scale); "*C" is RMSProp(centered=True).
# Lamb is left out: real MindSpore's CPU backend has no Lamb kernel, so only the numpy oracle of
# tests/test_optim_breadth.py checks it.
BREADTH_OPTIMIZERS = ("RMSProp", "RMSPropC", "Adagrad", "Adadelta", "AdaMax", "ProximalAdagrad", "FTRL", "LazyAdam",
                      "Rprop", "ASGD", "AdaFactor")
NO_LOSS_SCALE = ("Rprop", "ASGD", "Lamb", "AdamWeightDecay")
BREADTH_CASES = [f"{o}-{c}" for o in BREADTH_OPTIMIZERS
                 for c in ("weight_decay-none", "group-none" if o in NO_LOSS_SCALE else "group-fixed")]
CASES = cases()


def initial_weights() -> dict[str, np.ndarray]:
    """The network's parameters, in the order the optimizer holds them."""
    rng = np.random.RandomState(11)
    return {"w1": (rng.randn(4, 3) * 0.5).astype(np.float32),
            "gamma": (1.0 + 0.1 * rng.randn(3)).astype(np.float32),
            "beta": (0.1 * rng.randn(3)).astype(np.float32),
            "w2": (rng.randn(3, 2) * 0.5).astype(np.float32)}


def batches() -> list[tuple[np.ndarray, np.ndarray]]:
    """One (x, y) batch per step."""
    rng = np.random.RandomState(12)
    return [(rng.randn(8, 4).astype(np.float32), rng.randn(8, 2).astype(np.float32)) for _ in range(STEPS)]


def group_decay() -> dict[str, float]:
    """The per-parameter decay of the group case: ``gamma`` sits in a decayed group (a group's decay
    applies to every parameter in it, whatever its name), ``beta`` in a group without decay."""
    return {"w1": WEIGHT_DECAY, "gamma": WEIGHT_DECAY, "w2": 0.02, "beta": 0.0}


def _network(ms: ModuleType) -> Any:
    nn, ops = ms.nn, ms.ops

    class Tiny(nn.Cell):
        """relu((x @ w1) * gamma + beta) @ w2."""

        def __init__(self):
            super().__init__()
            w = initial_weights()
            self.w1 = ms.Parameter(ms.Tensor(w["w1"]), name="w1")
            self.gamma = ms.Parameter(ms.Tensor(w["gamma"]), name="gamma")
            self.beta = ms.Parameter(ms.Tensor(w["beta"]), name="beta")
            self.w2 = ms.Parameter(ms.Tensor(w["w2"]), name="w2")

        def construct(self, x):
            return ops.matmul(ops.relu(ops.matmul(x, self.w1) * self.gamma + self.beta), self.w2)

    return Tiny()


def _optimizer(ms: ModuleType, name: str, decay: str, loss_scale: float, net: Any) -> Any:
    nn = ms.nn
    p = {q.name: q for q in net.trainable_params()}
    if decay == "group":
        params = [{"params": [p["w1"], p["gamma"]], "weight_decay": WEIGHT_DECAY},
                  {"params": [p["w2"]], "weight_decay": 0.02}, {"params": [p["beta"]]}]
        wd = 0.0
    else:
        params, wd = [p["w1"], p["gamma"], p["beta"], p["w2"]], WEIGHT_DECAY
    if name == "SGD":
        return nn.SGD(params, 0.1, momentum=0.9, dampening=0.1, weight_decay=wd, loss_scale=loss_scale)
    if name.startswith("Momentum"):
        return nn.Momentum(params, 0.1, 0.9, weight_decay=wd, loss_scale=loss_scale,
                           use_nesterov=name == "MomentumNesterov")
    if name == "Adam":
        return nn.Adam(params, 0.01, weight_decay=wd, loss_scale=loss_scale)
    if name == "AdamWeightDecay":
        return nn.AdamWeightDecay(params, 0.01, weight_decay=wd)
    scaled = {"weight_decay": wd, "loss_scale": loss_scale}
    breadth = {
        "RMSProp": lambda: nn.RMSProp(params, 0.01, momentum=0.5, **scaled),
        "RMSPropC": lambda: nn.RMSProp(params, 0.01, momentum=0.5, centered=True, **scaled),
        "Adagrad": lambda: nn.Adagrad(params, learning_rate=0.1, **scaled),
        "Adadelta": lambda: nn.Adadelta(params, learning_rate=1.0, **scaled),
        "AdaMax": lambda: nn.AdaMax(params, 0.01, **scaled),
        "ProximalAdagrad": lambda: nn.ProximalAdagrad(params, learning_rate=0.1, l1=0.01, l2=0.02, **scaled),
        # l1=0: MindSpore 2.10's CPU ApplyFtrl takes sign(linear) as +1 (it gives (l1 - linear) / quadratic for a
        # negative linear too), against its documented formula and its own CPU SparseApplyFtrl; the l1 shrinkage
        # is checked against SparseApplyFtrl's recorded numbers instead (``probes``)
        "FTRL": lambda: nn.FTRL(params, learning_rate=0.1, l1=0.0, l2=0.02, **scaled),
        "LazyAdam": lambda: nn.LazyAdam(params, 0.01, **scaled),
        "Rprop": lambda: nn.Rprop(params, 0.01, weight_decay=wd),
        "ASGD": lambda: nn.ASGD(params, 0.1, lambd=0.01, t0=1.0, weight_decay=wd),
        "Lamb": lambda: nn.Lamb(params, 0.01, weight_decay=wd),
        "AdaFactor": lambda: nn.AdaFactor(params, weight_decay=wd, **({"loss_scale": loss_scale} if loss_scale != 1.0
                                                                      else {})),
        "LARS": lambda: nn.LARS(nn.Momentum(params, 0.1, 0.9, weight_decay=wd, loss_scale=loss_scale),
                                epsilon=1e-5, coefficient=0.02),
    }
    return breadth[name]()


def _all_finite_cell(ms: ModuleType) -> type:
    """TrainOneStepWithLossScaleCell with the overflow flag from ``amp.all_finite`` of the gradients:
    real MindSpore's own check reads the NPU float status register, which its CPU backend lacks (the
    flag is False in every recorded step either way; ascendemu's cell checks the gradients so too)."""

    class AllFiniteLossScaleCell(ms.nn.TrainOneStepWithLossScaleCell):
        def get_overflow_status(self, status, compute_output):
            return ms.ops.logical_not(ms.amp.all_finite(compute_output))

    return AllFiniteLossScaleCell


def run_case(ms: ModuleType, case: str) -> dict[str, Any]:
    """Train ``case`` (``optimizer-decay-scale``) for STEPS steps; the losses, the final parameters
    and the loss scale after the last step."""
    name, decay, scale = case.split("-")
    net = _network(ms)
    opt = _optimizer(ms, name, decay, LOSS_SCALE if scale == "fixed" else 1.0, net)
    with_loss = ms.nn.WithLossCell(net, ms.nn.MSELoss())
    if scale == "dynamic":          # what Model builds for a manager with an update cell
        manager = ms.amp.DynamicLossScaleManager(**DYNAMIC)
        step = _all_finite_cell(ms)(with_loss, opt, scale_sense=manager.get_update_cell())
    elif scale == "fixed":          # Model(..., loss_scale_manager=FixedLossScaleManager(1024, False))
        manager = ms.amp.FixedLossScaleManager(LOSS_SCALE, drop_overflow_update=False)
        step = ms.amp.build_train_network(with_loss, opt, level="O0", loss_scale_manager=manager)
    else:
        step = ms.nn.TrainOneStepCell(with_loss, opt)
    step.set_train()
    losses = []
    for x, y in batches():
        out = step(ms.Tensor(x), ms.Tensor(y))
        losses.append(float((out[0] if isinstance(out, tuple) else out).asnumpy()))
    result = {"losses": losses, "params": {q.name: q.asnumpy().tolist() for q in net.trainable_params()}}
    own = {q.name for q in net.trainable_params()}
    # the Parameters' own names: what a checkpoint lists (MindSpore's parameters_and_names keys are attribute
    # paths, e.g. AdaFactor's "step" for the Parameter "afactor_step")
    result["state"] = sorted(p.name for _, p in opt.parameters_and_names() if p.name not in own)
    if scale == "dynamic":
        result["loss_scale"] = float(step.scale_sense.asnumpy())
    return result


FTRL_PROBE = {"var": [1.0, 2.0, -3.0, 0.5], "accum": 0.1, "grads": [[0.5, -1.0, 2.0, 0.3], [0.2, 0.4, -0.6, 1.0]],
              "lr": 0.1, "l1": 0.01, "l2": 0.02, "lr_power": -0.5}


def probes(ms: ModuleType) -> dict[str, Any]:
    """Two FTRL steps of CPU SparseApplyFtrl (the documented formula) and ApplyFtrl (its sign quirk) on
    FTRL_PROBE; and LARS's state names (the Parameters' names; MindSpore's CPU has no LARSUpdate kernel)."""
    out: dict[str, Any] = {}
    for prim in ("SparseApplyFtrl", "ApplyFtrl"):
        f = FTRL_PROBE
        var = ms.Parameter(ms.Tensor(np.array(f["var"], np.float32)), name="var")
        accum = ms.Parameter(ms.Tensor(np.full(4, f["accum"], np.float32)), name="accum")
        linear = ms.Parameter(ms.Tensor(np.zeros(4, np.float32)), name="linear")
        for g in f["grads"]:
            grad = ms.Tensor(np.array(g, np.float32))
            if prim == "ApplyFtrl":
                ms.ops.ApplyFtrl()(var, accum, linear, grad, f["lr"], f["l1"], f["l2"], f["lr_power"])
            else:
                ms.ops.SparseApplyFtrl(f["lr"], f["l1"], f["l2"], f["lr_power"])(
                    var, accum, linear, grad, ms.Tensor(np.arange(4, dtype=np.int32)))
        out[prim] = {"var": var.asnumpy().tolist(), "accum": accum.asnumpy().tolist(),
                     "linear": linear.asnumpy().tolist()}
    net = _network(ms)
    lars = _optimizer(ms, "LARS", "weight_decay", 1.0, net)
    own = {q.name for q in net.trainable_params()}
    out["LARS_state"] = sorted(p.name for _, p in lars.parameters_and_names() if p.name not in own)
    return out


def main() -> int:
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    cases = {case: run_case(ms, case) for case in CASES + BREADTH_CASES}
    record = {"recorded_with": f"mindspore {ms.__version__} CPU GRAPH_MODE", "script": "tools/record_optim_formulas.py",
              "cases": cases, "probes": probes(ms)}
    tmp = FIXTURE.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(FIXTURE)
    print(f"wrote {len(cases)} cases to {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
