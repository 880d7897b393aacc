"""``mindspore.ops.function.grad.grad_func``: ``ops.grad``, ``ops.value_and_grad`` and
``ops.stop_gradient``."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ascendemu.errors import InvalidParamError

from ....common.tensor import Tensor
from ....unsupported import unsupported
from ..._utils import defined_here
from ...composite.base import _grad_call, _positions, _weights
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
        positions = () if grad_position is None else _positions(grad_position, len(args))
        out, inputs, weight_grads = _grad_call(fn, args, positions, params, sens, has_aux)
        if return_ids:
            inputs = [(p, g) for p, g in zip(positions, inputs)]
            weight_grads = [(w.name, g) for w, g in zip(params, weight_grads)]
        ins = inputs[0] if isinstance(grad_position, int) else tuple(inputs)
        grads = tuple(weight_grads) if grad_position is None else (ins, tuple(weight_grads)) if params else ins
        if has_aux and isinstance(out, (tuple, list)):
            aux = tuple(out[1:])
            if with_value:
                return (out[0],) + aux, grads
            return grads, aux
        return (out, grads) if with_value else grads
    return call


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


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.grad.grad_func", name, __all__)
