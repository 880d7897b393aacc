"""``mindspore.nn.grad.cell_grad``: ``Jvp`` and ``Vjp``, where MindSpore defines them.

``Vjp(fn)(*inputs, v)`` is (fn(*inputs), v^T J): one reverse-mode gradient with ``v`` as the sens.
``Jvp(fn)(*inputs, v)`` is (fn(*inputs), J v), forward mode by MindSpore's double-vjp trick over the
reverse-mode autodiff: g(u) = u^T J (a gradient with sens ``u``) is linear in ``u``, so the gradient of
g with respect to ``u`` under the sens ``v`` is J v. ``u`` is ones shaped like the output (its value
does not matter: g is linear in it).
"""
from __future__ import annotations

from typing import Any, Callable

from ... import ops
from ...ops.composite.base import GradOperation
from ..cell import Cell

__all__ = ["Jvp", "Vjp"]


def _ones_like(output: Any) -> Any:
    if isinstance(output, tuple):
        return tuple(ops.ones_like(o) for o in output)
    return ops.ones_like(output)


class _FirstGrad(Cell):
    """u -> u^T J of ``fn`` at ``inputs``: all inputs' gradients, or the one input's alone."""

    def __init__(self, fn: Callable, single: bool):
        super().__init__()
        self.fn = fn
        self.grad_op = GradOperation(sens_param=True, get_all=not single)

    def construct(self, u: Any, inputs: tuple) -> Any:
        return self.grad_op(self.fn)(*inputs, u)


class Jvp(Cell):
    """``Jvp(fn)(*inputs, v)``: (fn(*inputs), J v), with ``v`` shaped like the inputs (a tuple for
    several inputs)."""

    def __init__(self, fn: Callable):
        super().__init__()
        self.fn = fn
        self.first_grad = _FirstGrad(fn, single=False)
        self.first_grad_single_value = _FirstGrad(fn, single=True)
        self.second_grad_op = GradOperation(sens_param=True)

    def construct(self, *args: Any) -> Any:
        inputs, v = args[:-1], args[-1]
        output = self.fn(*inputs)
        first = self.first_grad_single_value if len(inputs) == 1 else self.first_grad
        return output, self.second_grad_op(first)(_ones_like(output), inputs, v)


class Vjp(Cell):
    """``Vjp(fn)(*inputs, v)``: (fn(*inputs), v^T J), the inputs' gradients under the sens ``v`` (one
    tensor for one input, else a tuple)."""

    def __init__(self, fn: Callable):
        super().__init__()
        self.fn = fn
        self.grad = GradOperation(get_all=True, sens_param=True)
        self.grad_single_value = GradOperation(sens_param=True)

    def construct(self, *args: Any) -> Any:
        output = self.fn(*args[:-1])
        grad = self.grad_single_value if len(args) == 2 else self.grad
        return output, grad(self.fn)(*args)
