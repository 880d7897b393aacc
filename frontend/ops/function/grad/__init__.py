"""``mindspore.ops.function.grad``: ``grad``, ``value_and_grad``, ``stop_gradient``, ``get_grad``, ``vjp``, ``jvp``,
``linearize``, ``jacfwd`` and ``jacrev``."""
from .grad_func import get_grad, grad, jacfwd, jacrev, jvp, linearize, stop_gradient, value_and_grad, vjp

__all__ = ["grad", "value_and_grad", "stop_gradient", "get_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev"]
