"""Optimizer updates as device kernels: ApplyMomentum, SGD, Adam, AdamWeightDecay, ApplyRMSProp,
ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdadelta, ApplyAdaMax, ApplyProximalAdagrad, ApplyFtrl; round 2:
ApplyAdagradV2, ApplyAdagradDA, ApplyAdamWithAmsgrad, ApplyAddSign, ApplyPowerSign, ApplyGradientDescent,
ApplyProximalGradientDescent, ApplyKerasMomentum, AdamNoUpdateParam and AdamW (mint.optim's PyTorch AdamW).

Each is one elementwise program over the parameter and its state (the elementwise family's
:func:`~.elementwise.program_op`): every element is read once and its new parameter and state values
written once, as the chip's fused optimizer kernels do. The front end assigns the outputs back to the
Parameters (``graph.updates``) and the compiler makes each output an alias of its Parameter
(``graph.passes.write_updates_in_place``): the kernel writes the weights and states in place, as Ascend's. Scalars (learning
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


def _sign(p: _Program, x: tuple) -> tuple:
    """sign(x): 1, -1 or 0."""
    return p("Select", p("Greater", x, _c(0.0)), _c(1.0), p("Select", p("Less", x, _c(0.0)), _c(-1.0), _c(0.0)))


def apply_rms_prop(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, mean_square, moment, lr, grad, decay, momentum, epsilon) -> (var', ms', mom'):
    ms' = decay ms + (1 - decay) g^2; mom' = momentum mom + lr g / sqrt(ms' + eps); var' = var - mom'."""
    p = _Program()
    var, ms, mom, lr, grad, decay, momentum, eps = (_in(i) for i in range(8))
    ms_new = p("Add", p("Mul", decay, ms), p("Mul", p("Sub", _c(1.0), decay), p("Mul", grad, grad)))
    mom_new = p("Add", p("Mul", momentum, mom), p("Div", p("Mul", lr, grad), p("Sqrt", p("Add", ms_new, eps))))
    new = p("Sub", var, mom_new)
    return tuple(p.steps), (new[1], ms_new[1], mom_new[1])


def apply_centered_rms_prop(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, mean_grad, mean_square, moment, grad, lr, decay, momentum, epsilon) -> (var', mg', ms',
    mom'): as ApplyRMSProp with the variance ms' - mg'^2 under the root (mg' = decay mg + (1 - decay) g)."""
    p = _Program()
    var, mg, ms, mom, grad, lr, decay, momentum, eps = (_in(i) for i in range(9))
    rest = p("Sub", _c(1.0), decay)
    mg_new = p("Add", p("Mul", decay, mg), p("Mul", rest, grad))
    ms_new = p("Add", p("Mul", decay, ms), p("Mul", rest, p("Mul", grad, grad)))
    denom = p("Sqrt", p("Add", p("Sub", ms_new, p("Mul", mg_new, mg_new)), eps))
    mom_new = p("Add", p("Mul", momentum, mom), p("Div", p("Mul", lr, grad), denom))
    new = p("Sub", var, mom_new)
    return tuple(p.steps), (new[1], mg_new[1], ms_new[1], mom_new[1])


def apply_adagrad(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, accum, lr, grad) -> (var', accum'): accum' = accum + g^2 (only with update_slots);
    var' = var - lr g / sqrt(accum')."""
    p = _Program()
    var, accum, lr, grad = (_in(i) for i in range(4))
    acc = p("Add", accum, p("Mul", grad, grad)) if sig.attr("update_slots", True) else p("Add", accum, _c(0.0))
    new = p("Sub", var, p("Div", p("Mul", lr, grad), p("Sqrt", acc)))
    return tuple(p.steps), (new[1], acc[1])


def apply_adadelta(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, accum, accum_update, lr, rho, epsilon, grad) -> (var', accum', accum_update'):
    accum' = rho accum + (1 - rho) g^2; u = sqrt(accum_update + eps) / sqrt(accum' + eps) g;
    accum_update' = rho accum_update + (1 - rho) u^2; var' = var - lr u."""
    p = _Program()
    var, accum, acc_up, lr, rho, eps, grad = (_in(i) for i in range(7))
    rest = p("Sub", _c(1.0), rho)
    acc = p("Add", p("Mul", rho, accum), p("Mul", rest, p("Mul", grad, grad)))
    update = p("Mul", p("Div", p("Sqrt", p("Add", acc_up, eps)), p("Sqrt", p("Add", acc, eps))), grad)
    up = p("Add", p("Mul", rho, acc_up), p("Mul", rest, p("Mul", update, update)))
    new = p("Sub", var, p("Mul", lr, update))
    return tuple(p.steps), (new[1], acc[1], up[1])


def apply_ada_max(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, m, v, beta1_power, lr, beta1, beta2, epsilon, grad) -> (var', m', v'):
    m' = beta1 m + (1 - beta1) g; v' = max(beta2 v, |g|); var' = var - lr / (1 - beta1_power) m' / (v' + eps)."""
    p = _Program()
    var, m, v, b1p, lr, b1, b2, eps, grad = (_in(i) for i in range(9))
    m_new = p("Add", p("Mul", b1, m), p("Mul", p("Sub", _c(1.0), b1), grad))
    v_new = p("Maximum", p("Mul", b2, v), p("Abs", grad))
    rate = p("Div", lr, p("Sub", _c(1.0), b1p))
    new = p("Sub", var, p("Mul", rate, p("Div", m_new, p("Add", v_new, eps))))
    return tuple(p.steps), (new[1], m_new[1], v_new[1])


def apply_proximal_adagrad(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, accum, lr, l1, l2, grad) -> (var', accum'): accum' = accum + g^2; with the adaptive rate
    a = lr / sqrt(accum'): prox = var - a g; var' = sign(prox) max(|prox| - a l1, 0) / (1 + a l2)."""
    p = _Program()
    var, accum, lr, l1, l2, grad = (_in(i) for i in range(6))
    acc = p("Add", accum, p("Mul", grad, grad))
    rate = p("Div", lr, p("Sqrt", acc))
    prox = p("Sub", var, p("Mul", rate, grad))
    shrunk = p("Maximum", p("Sub", p("Abs", prox), p("Mul", rate, l1)), _c(0.0))
    new = p("Div", p("Mul", _sign(p, prox), shrunk), p("Add", _c(1.0), p("Mul", rate, l2)))
    return tuple(p.steps), (new[1], acc[1])


def apply_ftrl(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, accum, linear, grad, lr, l1, l2, lr_power) -> (var', accum', linear'): accum' = accum + g^2;
    linear' = linear + g - (accum'^-lr_power - accum^-lr_power) / lr var; var' = (sign(linear') l1 -
    linear') / (accum'^-lr_power / lr + 2 l2) where |linear'| > l1, else 0. This is MindSpore's documented
    formula and its CPU SparseApplyFtrl's; its 2.10 CPU ApplyFtrl alone takes sign(linear') as +1 (a negative
    linear' gets l1 - linear'), which tests/test_optim_breadth.py records and does not follow."""
    p = _Program()
    var, accum, linear, grad, lr, l1, l2, lr_power = (_in(i) for i in range(8))
    power = p("Neg", lr_power)
    acc = p("Add", accum, p("Mul", grad, grad))
    acc_pow = p("Pow", acc, power)
    sigma = p("Div", p("Sub", acc_pow, p("Pow", accum, power)), lr)
    lin = p("Sub", p("Add", linear, grad), p("Mul", sigma, var))
    quadratic = p("Add", p("Div", acc_pow, lr), p("Mul", l2, _c(2.0)))
    value = p("Div", p("Sub", p("Mul", _sign(p, lin), l1), lin), quadratic)
    new = p("Select", p("Greater", p("Abs", lin), l1), value, p("Mul", var, _c(0.0)))
    return tuple(p.steps), (new[1], acc[1], lin[1])



# ---- round 2: the remaining Apply* updates and the PyTorch-style AdamW (mint.optim) ----

def apply_adagrad_v2(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, accum, lr, grad) -> (var', accum'): accum' = accum + g^2 (only with update_slots);
    var' = var - lr g / (sqrt(accum') + epsilon), epsilon an attribute."""
    p = _Program()
    var, accum, lr, grad = (_in(i) for i in range(4))
    eps = _c(_number(sig, "epsilon", 1e-6))
    acc = p("Add", accum, p("Mul", grad, grad)) if sig.attr("update_slots", True) else p("Add", accum, _c(0.0))
    new = p("Sub", var, p("Div", p("Mul", lr, grad), p("Add", p("Sqrt", acc), eps)))
    return tuple(p.steps), (new[1], acc[1])


def apply_adagrad_da(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, grad_accum, grad_squared_accum, grad, lr, l1, l2, global_step) -> (var', ga', gsa'):
    ga' = ga + g; gsa' = gsa + g^2; tmp = sign(ga') max(|ga'| - l1 step, 0) if l1 > 0 else ga';
    var' = -lr tmp / (l2 step lr + sqrt(gsa'))."""
    p = _Program()
    _var, ga, gsa, grad, lr, l1, l2, step = (_in(i) for i in range(8))
    ga_new = p("Add", ga, grad)
    gsa_new = p("Add", gsa, p("Mul", grad, grad))
    shrunk = p("Mul", _sign(p, ga_new), p("Maximum", p("Sub", p("Abs", ga_new), p("Mul", l1, step)), _c(0.0)))
    tmp = p("Select", p("Greater", l1, _c(0.0)), shrunk, ga_new)
    x = p("Mul", p("Neg", lr), tmp)
    y = p("Add", p("Mul", p("Mul", l2, step), lr), p("Sqrt", gsa_new))
    new = p("Div", x, y)
    return tuple(p.steps), (new[1], ga_new[1], gsa_new[1])


def apply_adam_with_amsgrad(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, m, v, vhat, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad) -> (var', m', v',
    vhat'): lr_t = lr sqrt(1 - beta2_power) / (1 - beta1_power); vhat' = max(vhat, v');
    var' = var - lr_t m' / (sqrt(vhat') + eps). ApplyAdamWithAmsgrad passes its attributes as scalars."""
    p = _Program()
    var, m, v, vhat, b1p, b2p, lr, b1, b2, eps, grad = (_in(i) for i in range(11))
    m_new, v_new = _moments(p, m, v, grad, b1, b2)
    vhat_new = p("Maximum", vhat, v_new)
    lr_t = p("Div", p("Mul", lr, p("Sqrt", p("Sub", _c(1.0), b2p))), p("Sub", _c(1.0), b1p))
    new = p("Sub", var, p("Div", p("Mul", lr_t, m_new), p("Add", p("Sqrt", vhat_new), eps)))
    return tuple(p.steps), (new[1], m_new[1], v_new[1], vhat_new[1])


def _sign_agreement(p: _Program, m: tuple, beta: tuple, grad: tuple) -> tuple[tuple, tuple]:
    """m' = beta m + (1 - beta) g and sign(g) sign(m'), AddSign's and PowerSign's common part."""
    m_new = p("Add", p("Mul", beta, m), p("Mul", p("Sub", _c(1.0), beta), grad))
    return m_new, p("Mul", _sign(p, grad), _sign(p, m_new))


def apply_add_sign(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, m, lr, alpha, sign_decay, beta, grad) -> (var', m'): update = (alpha + sign_decay
    sign(g) sign(m')) g; var' = var - lr update."""
    p = _Program()
    var, m, lr, alpha, decay, beta, grad = (_in(i) for i in range(7))
    m_new, agree = _sign_agreement(p, m, beta, grad)
    update = p("Mul", p("Add", alpha, p("Mul", decay, agree)), grad)
    new = p("Sub", var, p("Mul", lr, update))
    return tuple(p.steps), (new[1], m_new[1])


def apply_power_sign(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, m, lr, logbase, sign_decay, beta, grad) -> (var', m'): update = exp(logbase sign_decay
    sign(g) sign(m')) g; var' = var - lr update."""
    p = _Program()
    var, m, lr, logbase, decay, beta, grad = (_in(i) for i in range(7))
    m_new, agree = _sign_agreement(p, m, beta, grad)
    update = p("Mul", p("Exp", p("Mul", p("Mul", logbase, decay), agree)), grad)
    new = p("Sub", var, p("Mul", lr, update))
    return tuple(p.steps), (new[1], m_new[1])


def apply_gradient_descent(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, alpha, delta) -> var - alpha delta."""
    p = _Program()
    new = p("Sub", _in(0), p("Mul", _in(1), _in(2)))
    return tuple(p.steps), (new[1],)


def apply_proximal_gradient_descent(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, alpha, l1, l2, delta) -> sign(prox) max(|prox| - alpha l1, 0) / (1 + alpha l2), prox = var -
    alpha delta."""
    p = _Program()
    var, alpha, l1, l2, delta = (_in(i) for i in range(5))
    prox = p("Sub", var, p("Mul", alpha, delta))
    shrunk = p("Maximum", p("Sub", p("Abs", prox), p("Mul", alpha, l1)), _c(0.0))
    new = p("Div", p("Mul", _sign(p, prox), shrunk), p("Add", _c(1.0), p("Mul", alpha, l2)))
    return tuple(p.steps), (new[1],)


def apply_keras_momentum(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, accum, lr, grad, momentum) -> (var', accum'): accum' = accum momentum - grad lr; var' = var +
    accum' (use_nesterov: var + accum' momentum - grad lr)."""
    p = _Program()
    var, accum, lr, grad, mom = (_in(i) for i in range(5))
    step = p("Mul", grad, lr)
    acc = p("Sub", p("Mul", accum, mom), step)
    if sig.attr("use_nesterov", False):
        new = p("Sub", p("Add", var, p("Mul", acc, mom)), step)
    else:
        new = p("Add", var, acc)
    return tuple(p.steps), (new[1], acc[1])


def adam_no_update_param(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad) -> (delta, m', v'): Adam's
    step without applying it: delta = -lr sqrt(1 - beta2_power) / (1 - beta1_power) m' / (sqrt(v') + eps)."""
    p = _Program()
    m, v, b1p, b2p, lr, b1, b2, eps, grad = (_in(i) for i in range(9))
    m_new, v_new = _moments(p, m, v, grad, b1, b2)
    lr_t = p("Mul", lr, p("Div", p("Sqrt", p("Sub", _c(1.0), b2p)), p("Sub", _c(1.0), b1p)))
    delta = p("Neg", p("Mul", lr_t, p("Div", m_new, p("Add", p("Sqrt", v_new), eps))))
    return tuple(p.steps), (delta[1], m_new[1], v_new[1])


def adam_w(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """(var, m, v, max_v, grad, step) -> (var', m', v', max_v'): MindSpore's AdamW primitive (Ascend's
    ApplyAdamWV2, PyTorch's AdamW), lr/beta1/beta2/decay/eps/amsgrad/maximize attributes. The kernel
    counts t = step + 1 (mint.optim.AdamW's state_step starts at -1): var_t = var (1 - lr decay);
    m' = b1 m + (1 - b1) g; v' = b2 v + (1 - b2) g^2; max_v' = max(max_v, v') with amsgrad;
    var' = var_t - lr / (1 - b1^t) m' / (sqrt(v' or max_v') / sqrt(1 - b2^t) + eps)."""
    p = _Program()
    var, m, v, max_v, grad, step = (_in(i) for i in range(6))
    lr, wd, eps = (_number(sig, n, 0.0) for n in ("lr", "weight_decay", "eps"))
    b1, b2 = _c(_number(sig, "beta1", 0.9)), _c(_number(sig, "beta2", 0.999))
    if sig.attr("maximize", False):
        grad = p("Neg", grad)
    var_t = p("Mul", var, _c(1.0 - lr * wd))
    m_new, v_new = _moments(p, m, v, grad, b1, b2)
    t = p("Add", step, _c(1.0))
    bc1 = p("Sub", _c(1.0), p("Pow", b1, t))
    bc2_sqrt = p("Sqrt", p("Sub", _c(1.0), p("Pow", b2, t)))
    max_new = p("Maximum", max_v, v_new) if sig.attr("amsgrad", False) else p("Add", max_v, _c(0.0))
    second = max_new if sig.attr("amsgrad", False) else v_new
    denom = p("Add", p("Div", p("Sqrt", second), bc2_sqrt), _c(eps))
    new = p("Sub", var_t, p("Mul", p("Div", _c(lr), bc1), p("Div", m_new, denom)))
    return tuple(p.steps), (new[1], m_new[1], v_new[1], max_new[1])

OPS: tuple[OpDef, ...] = (
    program_op("ApplyMomentum", "apply_momentum", ("var", "accum", "lr", "grad", "momentum"), apply_momentum),
    program_op("SGD", "sgd", ("var", "accum", "stat", "lr", "grad", "momentum"), sgd),
    program_op("Adam", "adam", ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2",
                                "epsilon", "grad"), adam),
    program_op("AdamWeightDecay", "adam_weight_decay", ("var", "m", "v", "lr", "beta1", "beta2", "epsilon",
                                                        "decay", "grad"), adam_weight_decay),
    program_op("ApplyRMSProp", "apply_rms_prop", ("var", "mean_square", "moment", "learning_rate", "grad", "decay",
                                                  "momentum", "epsilon"), apply_rms_prop),
    program_op("ApplyCenteredRMSProp", "apply_centered_rms_prop", ("var", "mean_gradient", "mean_square", "mom",
                                                                   "grad", "lr", "decay", "momentum", "epsilon"),
               apply_centered_rms_prop),
    program_op("ApplyAdagrad", "apply_adagrad", ("var", "accum", "lr", "grad"), apply_adagrad),
    program_op("ApplyAdadelta", "apply_adadelta", ("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad"),
               apply_adadelta),
    program_op("ApplyAdaMax", "apply_ada_max", ("var", "m", "v", "beta1_power", "lr", "beta1", "beta2", "epsilon",
                                                "grad"), apply_ada_max),
    program_op("ApplyProximalAdagrad", "apply_proximal_adagrad", ("var", "accum", "lr", "l1", "l2", "grad"),
               apply_proximal_adagrad),
    program_op("ApplyFtrl", "apply_ftrl", ("var", "accum", "linear", "grad", "lr", "l1", "l2", "lr_power"), apply_ftrl),
    program_op("ApplyAdagradV2", "apply_adagrad_v2", ("var", "accum", "lr", "grad"), apply_adagrad_v2),
    program_op("ApplyAdagradDA", "apply_adagrad_da", ("var", "gradient_accumulator", "gradient_squared_accumulator",
                                                      "grad", "lr", "l1", "l2", "global_step"), apply_adagrad_da),
    program_op("ApplyAdamWithAmsgrad", "apply_adam_with_amsgrad", ("var", "m", "v", "vhat", "beta1_power",
                                                                   "beta2_power", "lr", "beta1", "beta2", "epsilon",
                                                                   "grad"), apply_adam_with_amsgrad),
    program_op("ApplyAddSign", "apply_add_sign", ("var", "m", "lr", "alpha", "sign_decay", "beta", "grad"),
               apply_add_sign),
    program_op("ApplyPowerSign", "apply_power_sign", ("var", "m", "lr", "logbase", "sign_decay", "beta", "grad"),
               apply_power_sign),
    program_op("ApplyGradientDescent", "apply_gradient_descent", ("var", "alpha", "delta"), apply_gradient_descent),
    program_op("ApplyProximalGradientDescent", "apply_proximal_gradient_descent",
               ("var", "alpha", "l1", "l2", "delta"), apply_proximal_gradient_descent),
    program_op("ApplyKerasMomentum", "apply_keras_momentum", ("var", "accum", "lr", "grad", "momentum"),
               apply_keras_momentum),
    program_op("AdamNoUpdateParam", "adam_no_update_param", ("m", "v", "beta1_power", "beta2_power", "lr", "beta1",
                                                             "beta2", "epsilon", "grad"), adam_no_update_param),
    program_op("AdamW", "adam_w", ("var", "m", "v", "max_v", "grad", "step"), adam_w),
)
