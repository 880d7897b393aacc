"""Optimizer updates as device kernels: ApplyMomentum, SGD, Adam, AdamWeightDecay.

Each is one elementwise program over the parameter and its state (the elementwise family's
:func:`~.elementwise.program_op`): every element is read once and its new parameter and state values
written once, as the chip's fused optimizer kernels do. The front end assigns the outputs back to the
Parameters (``graph.updates``), so the step graph updates weights in device memory. Scalars (learning
rate, momentum, beta powers) are 0-d or (1,) tensors broadcast over the parameter; hyper-parameters that
MindSpore keeps as attributes (weight decay, dampening, nesterov) are attributes here too. The update
formulas are MindSpore's (../shared/REFERENCE-training.md 4.2): Adam puts epsilon outside the bias
correction (ApplyAdam); AdamWeightDecay has no bias correction.
"""
from __future__ import annotations

from ascendemu.kernels.opdef import OpDef
from ascendemu.kernels.signature import OpSignature

from .common import fail
from .elementwise import program_op


def _number(sig: OpSignature, name: str, default: float) -> float:
    value = sig.attr(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(sig, f"attr {name}={value!r} must be a number")
    return float(value)


class _Program:
    """Builds a program step by step: ``emit`` returns the operand naming the new step."""

    def __init__(self) -> None:
        self.steps: list[tuple] = []

    def __call__(self, op: str, *operands: tuple) -> tuple:
        self.steps.append((op,) + operands)
        return ("t", len(self.steps) - 1)


def _in(i: int) -> tuple:
    return ("in", i)


def _c(value: float) -> tuple:
    return ("c", value)


def _decayed(p: _Program, sig: OpSignature, grad: tuple, var: tuple) -> tuple:
    """grad + weight_decay * var (MindSpore adds the decay to the gradient for Momentum/SGD)."""
    wd = _number(sig, "weight_decay", 0.0)
    return p("Add", grad, p("Mul", var, _c(wd))) if wd else grad


def apply_momentum(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, accum, lr, grad, momentum) -> (var', accum'): accum' = accum * momentum + grad;
    var' = var - lr * accum', or with use_nesterov var - lr * grad - lr * momentum * accum'."""
    p = _Program()
    var, accum, lr, grad, mom = (_in(i) for i in range(5))
    grad = _decayed(p, sig, grad, var)
    acc = p("Add", p("Mul", accum, mom), grad)
    if sig.attr("use_nesterov", False):
        new = p("Sub", p("Sub", var, p("Mul", lr, grad)), p("Mul", lr, p("Mul", mom, acc)))
    else:
        new = p("Sub", var, p("Mul", lr, acc))
    return tuple(p.steps), (new[1], acc[1])


def sgd(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, accum, stat, lr, grad, momentum) -> (var', accum', stat'): the first step (stat = 1)
    takes accum' = grad, later ones accum' = momentum * accum + (1 - dampening) * grad; var' = var -
    lr * accum' (nesterov: var - lr * (grad + momentum * accum')); stat' = 0."""
    p = _Program()
    var, accum, stat, lr, grad, mom = (_in(i) for i in range(6))
    grad = _decayed(p, sig, grad, var)
    damp = _number(sig, "dampening", 0.0)
    later = p("Add", p("Mul", mom, accum), p("Mul", grad, _c(1.0 - damp)))
    acc = p("Add", p("Mul", stat, grad), p("Mul", p("Sub", _c(1.0), stat), later))
    step = p("Add", grad, p("Mul", mom, acc)) if sig.attr("nesterov", False) else acc
    new = p("Sub", var, p("Mul", lr, step))
    zero = p("Mul", stat, _c(0.0))
    return tuple(p.steps), (new[1], acc[1], zero[1])


def _moments(p: _Program, m: tuple, v: tuple, grad: tuple, b1: tuple, b2: tuple) -> tuple[tuple, tuple]:
    m_new = p("Add", p("Mul", b1, m), p("Mul", p("Sub", _c(1.0), b1), grad))
    v_new = p("Add", p("Mul", b2, v), p("Mul", p("Sub", _c(1.0), b2), p("Mul", grad, grad)))
    return m_new, v_new


def adam(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad) -> (var', m', v'):
    lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); var' = var - lr_t * m' / (sqrt(v') + eps)
    (use_nesterov: m' replaced by beta1 * m' + (1 - beta1) * grad)."""
    p = _Program()
    var, m, v, b1p, b2p, lr, b1, b2, eps, grad = (_in(i) for i in range(10))
    m_new, v_new = _moments(p, m, v, grad, b1, b2)
    lr_t = p("Mul", lr, p("Div", p("Sqrt", p("Sub", _c(1.0), b2p)), p("Sub", _c(1.0), b1p)))
    num = m_new
    if sig.attr("use_nesterov", False):
        num = p("Add", p("Mul", b1, m_new), p("Mul", p("Sub", _c(1.0), b1), grad))
    new = p("Sub", var, p("Mul", lr_t, p("Div", num, p("Add", p("Sqrt", v_new), eps))))
    return tuple(p.steps), (new[1], m_new[1], v_new[1])


def adam_weight_decay(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, m, v, lr, beta1, beta2, epsilon, decay, grad) -> (var', m', v'): no bias correction;
    var' = var - lr * (m' / (sqrt(v') + eps) + decay * var)."""
    p = _Program()
    var, m, v, lr, b1, b2, eps, decay, grad = (_in(i) for i in range(9))
    m_new, v_new = _moments(p, m, v, grad, b1, b2)
    update = p("Add", p("Div", m_new, p("Add", p("Sqrt", v_new), eps)), p("Mul", decay, var))
    new = p("Sub", var, p("Mul", lr, update))
    return tuple(p.steps), (new[1], m_new[1], v_new[1])


OPS: tuple[OpDef, ...] = (
    program_op("ApplyMomentum", "apply_momentum", ("var", "accum", "lr", "grad", "momentum"), apply_momentum),
    program_op("SGD", "sgd", ("var", "accum", "stat", "lr", "grad", "momentum"), sgd),
    program_op("Adam", "adam", ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2",
                                "epsilon", "grad"), adam),
    program_op("AdamWeightDecay", "adam_weight_decay", ("var", "m", "v", "lr", "beta1", "beta2", "epsilon",
                                                        "decay", "grad"), adam_weight_decay),
)
