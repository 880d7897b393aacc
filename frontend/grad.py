"""Gradients in MindSpore's front-end forms: ``ops.GradOperation``, ``ms.grad``, ``ms.value_and_grad``.

Every form ends in :func:`_grad_call`: the function runs on symbolic tensors inside a capture and the
graph compiler appends its backward graph (``ascendemu.graph.autodiff``) from each op's backward rule.
Inside ``construct`` or ``@jit`` that happens in the enclosing capture (forward, backward and an
optimizer update become one graph); called from plain Python (PyNative), the call is captured and run
as one graph of its own, so backward ops are device kernels in both modes. Return structures are
MindSpore's (../shared/REFERENCE-training.md 4.1).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ascendemu.errors import InvalidParamError
from ascendemu.graph.autodiff import differentiate
from ascendemu.graph.capture import current_tracer

from .capture import tracer_value
from .common.api import run_graph
from .tensor import Parameter, Tensor

__all__ = ["GradOperation", "grad", "value_and_grad"]


def _weights(weights: Any) -> list[Parameter]:
    if weights is None:
        return []
    if isinstance(weights, Parameter):
        return [weights]
    items = list(weights)
    for w in items:
        if not isinstance(w, Parameter):
            raise InvalidParamError(f"weights must be Parameters (e.g. net.trainable_params()), got "
                                    f"{type(w).__name__}")
    return items


def _positions(grad_position: Any, nargs: int) -> tuple[int, ...]:
    positions = (grad_position,) if isinstance(grad_position, int) else tuple(grad_position)
    for p in positions:
        if not isinstance(p, int) or isinstance(p, bool) or not -nargs <= p < nargs:
            raise InvalidParamError(f"grad_position={grad_position!r}: every position must be an int in "
                                    f"[{-nargs}, {nargs}) for a function called with {nargs} arguments")
    return tuple(p % nargs for p in positions)


def _tensors(obj: Any, what: str) -> list[Tensor]:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)) and obj and all(isinstance(o, Tensor) for o in obj):
        return list(obj)
    raise InvalidParamError(f"{what} must be a Tensor or a tuple of Tensors to be differentiated, got "
                            f"{type(obj).__name__}")


def _grad_call(fn: Callable, args: tuple, positions: tuple[int, ...], weights: list[Parameter],
               sens: Any, has_aux: bool) -> tuple[Any, list[Tensor], list[Tensor]]:
    """Run ``fn(*args)`` and differentiate it: (its output, input gradients, weight gradients)."""
    tracer = current_tracer()
    if tracer is None:        # PyNative: capture this call and run it (forward + backward) as a graph
        def whole(*a: Any) -> Any:
            return _grad_call(fn, a, positions, weights, sens, has_aux)
        return run_graph(whole, args, getattr(fn, "__name__", type(fn).__name__) + "_grad")
    for p in positions:
        if not isinstance(args[p], Tensor):
            raise InvalidParamError(f"argument {p} is a {type(args[p]).__name__}, not a Tensor: it cannot be "
                                    f"differentiated (change grad_position)")
    wrt = [tracer_value(tracer, args[p]) for p in positions] + [tracer_value(tracer, w) for w in weights]
    with tracer.replay():
        out = fn(*args)
    main = out[0] if has_aux and isinstance(out, (tuple, list)) else out
    outputs = _tensors(main, "the function's output")
    senses: list[Any] = [None] * len(outputs)
    if sens is not None:
        senses = _tensors(sens, "sens") if len(outputs) > 1 else [sens if isinstance(sens, Tensor) else Tensor(sens)]
        if len(senses) != len(outputs):
            raise InvalidParamError(f"sens has {len(senses)} tensors for {len(outputs)} outputs")
    grads = differentiate(tracer, [tracer_value(tracer, t) for t in outputs], wrt,
                          [None if s is None else tracer_value(tracer, s) for s in senses])
    tensors = [Tensor._symbolic(tracer, g) for g in grads]
    return out, tensors[:len(positions)], tensors[len(positions):]


class GradOperation:
    """``ops.GradOperation(get_all, get_by_list, sens_param)``: ``GradOperation()(net)(x, y)`` is the
    gradient with respect to the first input; ``get_all`` all inputs; ``get_by_list`` the weights given as
    ``GradOperation(get_by_list=True)(net, weights)``; both ((inputs), (weights)); ``sens_param``: the
    last call argument is the gradient of the output (sens)."""

    def __init__(self, get_all: bool = False, get_by_list: bool = False, sens_param: bool = False):
        self.get_all, self.get_by_list, self.sens_param = bool(get_all), bool(get_by_list), bool(sens_param)

    def __call__(self, fn: Callable, weights: Any = None) -> Callable:
        if self.get_by_list and weights is None:
            raise InvalidParamError("GradOperation(get_by_list=True) needs the weights: grad_op(net, weights)")
        params = _weights(weights) if self.get_by_list else []

        @functools.wraps(fn)
        def grad_fn(*args: Any) -> Any:
            sens = None
            if self.sens_param:
                if not args:
                    raise InvalidParamError("GradOperation(sens_param=True): pass the sens as the last argument")
                args, sens = args[:-1], args[-1]
            positions = tuple(range(len(args))) if self.get_all else ((0,) if args else ())
            if not self.get_all and self.get_by_list:
                positions = ()
            _, inputs, weight_grads = _grad_call(fn, args, positions, params, sens, False)
            if self.get_all and self.get_by_list:
                return tuple(inputs), tuple(weight_grads)
            if self.get_by_list:
                return tuple(weight_grads)
            if self.get_all:
                return tuple(inputs)
            return inputs[0]
        return grad_fn


def _grad_fn(fn: Callable, grad_position: Any, weights: Any, has_aux: bool, with_value: bool,
             return_ids: bool) -> Callable:
    if grad_position is None and weights is None:
        raise InvalidParamError("grad_position and weights cannot both be None: nothing to differentiate")
    params = _weights(weights)

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        positions = () if grad_position is None else _positions(grad_position, len(args))
        out, inputs, weight_grads = _grad_call(fn, args, positions, params, None, has_aux)
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
         return_ids: bool = False) -> Callable:
    """``ms.grad``: gradients of ``fn``'s (first, with ``has_aux``) output with respect to the inputs
    at ``grad_position`` (an int: one tensor; a tuple: a tuple; None: weights only) and ``weights``."""
    return _grad_fn(fn, grad_position, weights, has_aux, False, return_ids)


def value_and_grad(fn: Callable, grad_position: Any = 0, weights: Any = None, has_aux: bool = False,
                   return_ids: bool = False) -> Callable:
    """``ms.value_and_grad``: (``fn``'s output, gradients as :func:`grad` gives them)."""
    return _grad_fn(fn, grad_position, weights, has_aux, True, return_ids)
