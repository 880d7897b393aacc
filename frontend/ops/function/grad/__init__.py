"""``mindspore.ops.function.grad``: ``grad``, ``value_and_grad`` and ``stop_gradient``."""
from .grad_func import grad, stop_gradient, value_and_grad

__all__ = ["grad", "value_and_grad", "stop_gradient"]
