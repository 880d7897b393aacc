"""Record real MindSpore's mint.optim training steps for tests/test_optim_breadth2.py.

A two-parameter network trains three steps with ``ms.value_and_grad`` + the optimizer inside one
``ms.jit`` step in GRAPH_MODE (MindSpore 2.10 CPU's PyNative leaves the parameters unchanged: its
in-place ``add_`` on a Parameter inside the optimizer Cell does not write back there). AdamW and
FusedAdamW are not recorded: their AdamW kernel is Ascend-only (``The kernel AdamW unregistered``).
The losses, final parameters and state (name -> values, as a checkpoint lists them) go to
tests/fixtures/mint_optim.json. Run with real MindSpore (CI never needs it)::

    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_mint_optim.py

The test imports ``CASES`` and ``run_case`` and runs them with ``ascendemu.frontend`` as ``mindspore``.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "mint_optim.json"
STEPS = 3
# case name -> (optimizer, kwargs)
CASES: dict[str, tuple[str, dict]] = {
    "adam": ("Adam", {"lr": 0.1}),
    "adam-decay-maximize": ("Adam", {"lr": 0.05, "weight_decay": 0.1, "maximize": True, "betas": (0.8, 0.99)}),
    "adam-amsgrad": ("Adam", {"lr": 0.1, "amsgrad": True}),
    "sgd-momentum": ("SGD", {"lr": 0.1, "momentum": 0.9}),
    "sgd-nesterov-decay": ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    "sgd-dampening-maximize": ("SGD", {"lr": 0.02, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
    "sgd-plain": ("SGD", {"lr": 0.1}),
}


def run_case(ms: ModuleType, case: str) -> dict[str, Any]:
    """Train three steps; the losses, final parameters and the optimizer's state by name."""
    name, kwargs = CASES[case]
    nn, mint = ms.nn, ms.mint

    class Net(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.array([[1.0, 2.0], [3.0, -4.0]], np.float32)), name="w")
            self.b = ms.Parameter(ms.Tensor(np.array([0.5, -0.5], np.float32)), name="b")

        def construct(self, x):
            return ((mint.matmul(x, self.w) + self.b) ** 2).sum()

    ms.set_context(mode=ms.GRAPH_MODE)
    net = Net()
    opt = getattr(mint.optim, name)(net.trainable_params(), **kwargs)
    grad_fn = ms.value_and_grad(net, None, opt.parameters)
    x = ms.Tensor(np.array([[0.1, 0.2], [-0.3, 0.4]], np.float32))

    @ms.jit
    def step(data):
        loss, grads = grad_fn(data)
        opt(grads)
        return loss

    losses = [float(step(x).asnumpy()) for _ in range(STEPS)]
    state = {n: np.asarray(p.asnumpy()).tolist() for n, p in opt.parameters_and_names()}
    return {"losses": losses, "state": state}


def main() -> None:
    import mindspore as ms
    out = {"recorded_with": f"mindspore {ms.__version__} CPU", "script": "tools/record_mint_optim.py",
           "cases": {case: run_case(ms, case) for case in CASES}}
    FIXTURE.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {FIXTURE}")


if __name__ == "__main__":
    main()
