"""``mindspore.ops.function.grad.grad_func``: ``ops.grad``, ``ops.value_and_grad`` and
``ops.stop_gradient``."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ascendemu.errors import InvalidParamError

import numpy as np

from ....common.parameter import Parameter
from ....common.tensor import Tensor
from ....unsupported import unsupported
from ..._utils import defined_here
from ...composite.base import _grad_call, _positions, _weights
from ..array_func import ones_like, reshape, stack
from ...operations.other_ops import StopGradient


def stop_gradient(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(stop_gradient(v) for v in value)
    return StopGradient()(value) if isinstance(value, Tensor) else value


def _grad_fn(fn: Callable, grad_position: Any, weights: Any, has_aux: bool, with_value: bool,
             return_ids: bool, sens_param: bool) -> Callable:
    if grad_position is None and weights is None:
        raise InvalidParamError("grad_position and weights cannot both be None: nothing to differentiate")
    params = _weights(weights)

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        sens = None
        if sens_param:          # the call's last argument is the gradient of the output (sens)
            if not args:
                raise InvalidParamError("sens_param=True: the call must end with the sens (the gradient of "
                                        "the output), got no arguments")
            args, sens = args[:-1], args[-1]
        positions = () if grad_position is None else _tensor_positions(_positions(grad_position, len(args)), args)
        out, inputs, weight_grads = _grad_call(fn, args, positions, params, sens, has_aux)
        if return_ids:
            inputs = [(p, g) for p, g in zip(positions, inputs)]
            weight_grads = [(w.name, g) for w, g in zip(params, weight_grads)]
        ins = inputs[0] if len(inputs) == 1 else tuple(inputs)
        grads = tuple(weight_grads) if grad_position is None else (ins, tuple(weight_grads)) if params else ins
        if has_aux and isinstance(out, (tuple, list)):
            aux = tuple(out[1:])
            if with_value:
                return (out[0],) + aux, grads
            return grads, aux
        return (out, grads) if with_value else grads
    return call


def _tensor_positions(positions: tuple[int, ...], args: tuple) -> tuple[int, ...]:
    """The positions whose argument is a Tensor. MindSpore 2.10 (measured, static_graph.md's
    ``grad_position=(0, 1, 2)`` with a Python int in the middle) treats a Python number there as a
    constant: it gets no gradient and leaves the result; one gradient left is returned as a Tensor, not
    a tuple (an int or a one-element tuple alike), none as ``()``."""
    return tuple(p for p in positions if isinstance(args[p], Tensor))


def grad(fn: Callable, grad_position: Any = 0, weights: Any = None, has_aux: bool = False,
         return_ids: bool = False, sens_param: bool = False) -> Callable:
    """``ms.grad``: gradients of ``fn``'s (first, with ``has_aux``) output with respect to the inputs
    at ``grad_position`` (an int: one tensor; a tuple: a tuple; None: weights only) and ``weights``;
    with ``sens_param``, the call's last argument scales them (the output's gradient)."""
    return _grad_fn(fn, grad_position, weights, has_aux, False, return_ids, sens_param)


def value_and_grad(fn: Callable, grad_position: Any = 0, weights: Any = None, has_aux: bool = False,
                   return_ids: bool = False, sens_param: bool = False) -> Callable:
    """``ms.value_and_grad``: (``fn``'s output, gradients as :func:`grad` gives them)."""
    return _grad_fn(fn, grad_position, weights, has_aux, True, return_ids, sens_param)


def get_grad(gradients: Any, identifier: Any) -> Tensor:
    """``ops.get_grad(gradients, identifier)``: the gradient that ``grad(..., return_ids=True)`` paired
    with ``identifier`` (an input position, or a Parameter, matched by name)."""
    key = identifier.name if isinstance(identifier, Parameter) else identifier
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise TypeError(f"For 'get_grad', the identifier must be an int position or a Parameter, but got "
                        f"{type(identifier).__name__}")
    for ident, grad_value in _id_pairs(gradients):
        if ident == key:
            return grad_value
    raise RuntimeError(f"For 'get_grad', can not find the gradient for position or Parameter {key!r}")


def _id_pairs(gradients: Any) -> list[tuple[Any, Tensor]]:
    """The (identifier, gradient) pairs of a ``return_ids`` result, however nested."""
    if isinstance(gradients, tuple) and len(gradients) == 2 and isinstance(gradients[1], Tensor) \
            and isinstance(gradients[0], (int, str)):
        return [gradients]
    if isinstance(gradients, (tuple, list)):
        return [pair for item in gradients for pair in _id_pairs(item)]
    return []


def _check_inputs(label: str, inputs: tuple) -> None:
    for item in inputs:
        if not isinstance(item, Tensor):
            raise TypeError(f"For '{label}', the inputs must be Tensors, but got {type(item).__name__}")


def _split_aux(label: str, out: Any) -> tuple[Any, Any]:
    """``has_aux``: (the first output, the rest: one value alone, several as a tuple), as MindSpore."""
    if not isinstance(out, tuple) or len(out) < 2:
        raise ValueError(f"For '{label}', when 'has_aux' is True, origin 'fn' requires more than one outputs.")
    return out[0], out[1] if len(out) == 2 else out[1:]


def vjp(fn: Callable, *inputs: Any, weights: Any = None, has_aux: bool = False) -> tuple:
    """``ops.vjp(fn, *inputs)``: (fn's output, vjp_fn[, aux]); ``vjp_fn(*v)`` is the tuple of every
    input's gradient under the sens ``v`` (one tensor per output), and with ``weights``
    ((input grads), (weight grads))."""
    _check_inputs("vjp", inputs)
    if not isinstance(has_aux, bool):
        raise TypeError(f"For 'vjp', the 'has_aux' must be bool, but got {type(has_aux).__name__}")
    out = fn(*inputs)
    aux = None
    if has_aux:
        out, aux = _split_aux("vjp", out)
    params = _weights(weights)

    def vjp_fn(*v: Any) -> tuple:
        _check_inputs("vjp", v)
        sens = v[0] if len(v) == 1 else v
        _, ins, ws = _grad_call(fn, inputs, tuple(range(len(inputs))), params, sens, has_aux)
        return (tuple(ins), tuple(ws)) if params else tuple(ins)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _as_tuple(label: str, name: str, value: Any) -> tuple:
    if isinstance(value, Tensor):
        return (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(v, Tensor) for v in value):
        return tuple(value)
    raise TypeError(f"For '{label}', the '{name}' must be a Tensor or a tuple of Tensors, but got "
                    f"{type(value).__name__}")


def _jvp_values(fn: Callable, inputs: tuple, v: tuple, out: Any, has_aux: bool) -> Any:
    """J v by the double-vjp trick: g(u) = u^T J (inputs' gradients under the sens u) is linear in u,
    so the gradient of g with respect to u under the sens v is J v (nn.Jvp's method)."""
    outs = _as_tuple("jvp", "output of fn", out)
    nout = len(outs)

    def first(*args: Any) -> Any:
        us, xs = args[:nout], args[nout:]
        _, grads, _ = _grad_call(fn, xs, tuple(range(len(xs))), [], us[0] if nout == 1 else us, has_aux)
        return grads[0] if len(grads) == 1 else tuple(grads)
    us = tuple(ones_like(o) for o in outs)
    _, tangents, _ = _grad_call(first, us + inputs, tuple(range(nout)), [], v[0] if len(v) == 1 else v, False)
    return tangents[0] if isinstance(out, Tensor) else tuple(tangents)


def jvp(fn: Callable, inputs: Any, v: Any, has_aux: bool = False) -> tuple:
    """``ops.jvp(fn, inputs, v)``: (fn(*inputs), J v[, aux]): forward mode by the double-vjp trick
    over the reverse-mode autodiff (grad of grad, as MindSpore computes it)."""
    xs, vs = _as_tuple("jvp", "inputs", inputs), _as_tuple("jvp", "v", v)
    if len(xs) != len(vs):
        raise ValueError(f"For 'jvp', the size of 'v' should be equal to the size of 'inputs': {len(xs)}, but "
                         f"got {len(vs)}")
    out = fn(*xs)
    if has_aux:
        main, aux = _split_aux("jvp", out)
        return main, _jvp_values(fn, xs, vs, main, True), aux
    return out, _jvp_values(fn, xs, vs, out, False)


def linearize(fn: Callable, inputs: Any) -> tuple:
    """``ops.linearize(fn, inputs)``: (fn(*inputs), jvp_fn) with ``jvp_fn(v)`` = J v at ``inputs``."""
    xs = _as_tuple("linearize", "inputs", inputs)
    out = fn(*xs)

    def jvp_fn(v: Any) -> Any:
        vs = _as_tuple("linearize", "v", v)
        if len(vs) != len(xs):
            raise ValueError(f"For 'linearize', the size of 'v' should be equal to the size of 'inputs': "
                             f"{len(xs)}, but got {len(vs)}")
        return _jvp_values(fn, xs, vs, out, False)
    return out, jvp_fn


def _jacobian(label: str, fn: Callable, grad_position: Any, has_aux: bool) -> Callable:
    """The Jacobians of ``fn``'s outputs with respect to the inputs at ``grad_position``, each shaped
    output.shape + input.shape, arranged as MindSpore arranges them (one tensor; a tuple over outputs
    or over inputs; a tuple over outputs of tuples over inputs). Row by row: one reverse-mode gradient
    per output element under a one-hot sens. jacfwd and jacrev give the same matrix; they differ in
    MindSpore only by which mode is cheaper for a wide or a tall Jacobian."""
    @functools.wraps(fn)
    def wrapped(*args: Any) -> Any:
        positions = _positions(grad_position, len(args))
        if len(set(positions)) != len(positions):
            raise ValueError(f"For '{label}', 'grad_position' should not contain duplicated positions, but got "
                             f"{grad_position}")
        out = fn(*args)
        aux = None
        if has_aux:
            out, aux = _split_aux(label, out)
        outs = _as_tuple(label, "output of fn", out)
        blocks = [[[] for _ in positions] for _ in outs]       # [output][input] -> rows
        for k, o in enumerate(outs):
            for e in range(int(np.prod(o.shape, dtype=np.int64))):
                sens = []
                for j, other in enumerate(outs):
                    onehot = np.zeros(other.shape, np.float64)
                    if j == k:
                        onehot.reshape(-1)[e] = 1
                    sens.append(Tensor(onehot, dtype=other.dtype))
                _, grads, _ = _grad_call(fn, args, positions, [], sens[0] if len(outs) == 1 else tuple(sens),
                                         has_aux)
                for i, g in enumerate(grads):
                    blocks[k][i].append(g)
        jac = [[reshape(stack(rows), tuple(o.shape) + tuple(args[p].shape)) for rows, p in zip(row, positions)]
               for row, o in zip(blocks, outs)]
        if len(outs) == 1 and len(positions) == 1:
            result: Any = jac[0][0]
        elif len(positions) == 1:
            result = tuple(r[0] for r in jac)
        elif len(outs) == 1:
            result = tuple(jac[0])
        else:
            result = tuple(tuple(r) for r in jac)
        return (result, aux) if has_aux else result
    return wrapped


def jacfwd(fn: Callable, grad_position: Any = 0, has_aux: bool = False) -> Callable:
    """``ops.jacfwd(fn, grad_position)``: the Jacobian of ``fn`` (see :func:`_jacobian`)."""
    return _jacobian("jacfwd", fn, grad_position, has_aux)


def jacrev(fn: Callable, grad_position: Any = 0, has_aux: bool = False) -> Callable:
    """``ops.jacrev(fn, grad_position)``: the Jacobian of ``fn`` (see :func:`_jacobian`)."""
    return _jacobian("jacrev", fn, grad_position, has_aux)


def stop_gradient_(input: Any) -> Tensor:
    """In place (nn3): later uses of ``input`` carry no gradient (it holds its stop-gradient value)."""
    from ....common.tensor import hold_value
    return hold_value(input, stop_gradient(input))


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.grad.grad_func", name, __all__)
