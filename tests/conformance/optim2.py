"""Optimizer specs (round 2): the Apply* update primitives (var and its state given as Parameters, the
new values returned; PyNative only, as a Parameter is made per call) and mint.optim's optimizers (their
state names as a checkpoint lists them, one jitted step where MindSpore's CPU runs it, argument errors).
ApplyAdagradDA samples keep the gradient accumulators positive: MindSpore 2.10's CPU kernel shrinks a
negative one by +l1 * global_step instead of its documented sign(ga) * max(|ga| - l1 * step, 0),
which the emulator follows (as for ApplyFtrl)."""
from __future__ import annotations

from .core import Py, T, op

POS = T((2, 3), low=0.1, high=1.0)


def _apply(name: str, states: int):
    """The primitive called with its first ``states`` inputs wrapped in Parameters."""
    def fn(ms, *xs, **kw):
        held = [ms.Parameter(x, name=f"state{i}") for i, x in enumerate(xs[:states])]
        return getattr(ms.ops, name)(**kw)(*held, *xs[states:])
    return fn


def _scalar(value: float) -> T:
    return T(values=value)


def _keras_momentum_oracle(ms, var, accum, lr, grad, momentum, use_nesterov=False):
    """ApplyKerasMomentum's documented update: accum = accum * momentum - grad * lr; var + accum * momentum
    - grad * lr with use_nesterov, else var + accum; the new (var, accum)."""
    accum = accum * momentum - grad * lr
    var = var + accum * momentum - grad * lr if use_nesterov else var + accum
    return var, accum


def _mint_state(name: str, count: int = 2):
    """The optimizer's Cell parameters (name, shape) after construction: what a checkpoint lists. FusedAdamW
    takes one Parameter: MindSpore 2.10 CPU cannot build its flat buffer of several (an InplaceCopy error)."""
    def fn(ms, w, **kw):
        params = [ms.Parameter(w, name="w"), ms.Parameter(ms.Tensor(w.asnumpy()[0]), name="b")][:count]
        opt = getattr(ms.mint.optim, name)(params, **kw)
        return [f"{n}:{tuple(q.shape)}" for n, q in opt.parameters_and_names()]
    return fn


def _mint_steps(name: str):
    """Two jitted optimizer steps on one Parameter; the new values."""
    def fn(ms, w, g, **kw):
        p = ms.Parameter(w, name="w")
        opt = getattr(ms.mint.optim, name)([p], **kw)

        @ms.jit
        def step(grad):
            opt((grad,))
            return p
        step(g)
        return step(g) * 1
    return fn


SPECS = [
    op("mindspore.ops.ApplyAdagradV2", _apply("ApplyAdagradV2", 2), shapes=[[(2, 3), POS, Py(0.01), (2, 3)]],
       kwargs=[{"epsilon": 1e-6}, {"epsilon": 1e-3, "update_slots": False}], grad=False, graph=False,
       errors=[([(2, 3), POS, Py(0.01), (2, 3)], {"epsilon": 1})]),
    op("mindspore.ops.ApplyAdagradDA", _apply("ApplyAdagradDA", 3),
       shapes=[[(2, 3), T((2, 3), low=0.5, high=1.0), POS, T((2, 3), low=0.0, high=0.5), Py(0.01), Py(0.001),
                Py(0.001), T(values=2, dtype="int32")]], grad=False, graph=False),
    op("mindspore.ops.ApplyAdamWithAmsgrad", _apply("ApplyAdamWithAmsgrad", 4),
       shapes=[[(2, 3), (2, 3), POS, POS, _scalar(0.9), _scalar(0.999), _scalar(0.01), (2, 3)]], grad=False,
       graph=False, errors=[([(2, 3), (2, 3), POS, POS, Py(0.9), Py(0.999), Py(0.01), (2, 3)], {})]),
    op("mindspore.ops.ApplyAdamWithAmsgradV2", _apply("ApplyAdamWithAmsgradV2", 4),
       shapes=[[(2, 3), (2, 3), POS, POS, Py(0.9), Py(0.999), Py(0.01), Py(0.9), Py(0.999), Py(1e-8), (2, 3)]],
       grad=False, graph=False),
    op("mindspore.ops.ApplyAddSign", _apply("ApplyAddSign", 2),
       shapes=[[(2, 3), (2, 3), Py(0.01), Py(1.0), Py(0.99), Py(0.9), (2, 3)]], grad=False, graph=False),
    op("mindspore.ops.ApplyPowerSign", _apply("ApplyPowerSign", 2),
       shapes=[[(2, 3), (2, 3), Py(0.01), Py(2.718), Py(0.99), Py(0.9), (2, 3)]], grad=False, graph=False),
    op("mindspore.ops.ApplyGradientDescent", _apply("ApplyGradientDescent", 1),
       shapes=[[(2, 3), Py(0.01), (2, 3)], [(4,), _scalar(0.5), (4,)]], grad=False, graph=False),
    op("mindspore.ops.ApplyProximalGradientDescent", _apply("ApplyProximalGradientDescent", 1),
       shapes=[[(2, 3), Py(0.1), Py(0.5), Py(0.2), (2, 3)]], grad=False, graph=False),
    # no CPU kernel (Ascend only): the ok samples through the documented formula; the error sample (lr a
    # Python float) is MindSpore's own refusal, made before it looks for a kernel
    op("mindspore.ops.ApplyKerasMomentum", _apply("ApplyKerasMomentum", 2),
       shapes=[[(2, 3), (2, 3), _scalar(0.01), (2, 3), _scalar(0.9)]], kwargs=[{}, {"use_nesterov": True}],
       grad=False, graph=False, oracle=_keras_momentum_oracle,
       note="oracle: ApplyKerasMomentum's documented formula with MindSpore CPU ops (no CPU kernel in "
            "MindSpore 2.10); the error sample is ApplyKerasMomentum's own refusal"),
    op("mindspore.ops.ApplyKerasMomentum", _apply("ApplyKerasMomentum", 2), grad=False, graph=False,
       errors=[([(2, 3), (2, 3), Py(0.01), (2, 3), _scalar(0.9)], {})]),
    op("mindspore.ops.SGD", _apply("SGD", 1),
       shapes=[[(2, 3), (2, 3), _scalar(0.01), (2, 3), _scalar(0.9), T(values=[[1.0] * 3, [0.0] * 3])]],
       kwargs=[{}, {"dampening": 0.1, "weight_decay": 0.01}], grad=False, graph=False,
       errors=[([(2, 3), (2, 3), _scalar(0.01), (2, 3), _scalar(0.9), (2, 3)], {"dampening": 0.1,
                                                                                  "nesterov": True})]),
    op("mindspore.ops.AdamNoUpdateParam", _apply("AdamNoUpdateParam", 2),
       shapes=[[(2, 3), POS, T(values=[0.9]), T(values=[0.999]), T(values=[0.01]), T(values=[0.9]),
                T(values=[0.999]), T(values=[1e-8]), (2, 3)]], grad=False, graph=False),
    op("mindspore.mint.optim.Adam", _mint_steps("Adam"), shapes=[[(2, 3), (2, 3)]],
       kwargs=[{"lr": 0.1}, {"lr": 0.05, "weight_decay": 0.1, "maximize": True}], grad=False, graph=False,
       errors=[([(2, 3), (2, 3)], {"lr": 1}), ([(2, 3), (2, 3)], {"betas": (1.0, 0.9)}),
               ([(2, 3), (2, 3)], {"lr": -0.1})]),
    op("mindspore.mint.optim.SGD", _mint_steps("SGD"), shapes=[[(2, 3), (2, 3)]],
       kwargs=[{"lr": 0.1, "momentum": 0.9}, {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1},
               {"lr": 0.1, "momentum": 0.5, "dampening": 0.2, "maximize": True}, {"lr": 0.1}],
       grad=False, graph=False,
       errors=[([(2, 3), (2, 3)], {"lr": 0.1, "nesterov": True}), ([(2, 3), (2, 3)], {"lr": 0.1, "momentum": -1.0})]),
    op("mindspore.mint.optim.AdamW", _mint_state("AdamW"), shapes=[[(2, 3)]], kwargs=[{}, {"amsgrad": True}],
       grad=False, graph=False, errors=[([(2, 3)], {"eps": -1.0}), ([(2, 3)], {"weight_decay": 1})]),
    op("mindspore.mint.optim.FusedAdamW", _mint_state("FusedAdamW", 1), shapes=[[(2, 3)]],
       kwargs=[{}, {"amsgrad": True, "betas": [0.8, 0.9]}], grad=False, graph=False,
       errors=[([(2, 3)], {"lr": -1.0})]),
]
