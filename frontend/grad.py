"""Gradients live in ``ops.composite.base`` (GradOperation) and ``ops.function.grad`` (grad,
value_and_grad), as in MindSpore; this path stays for the modules that import it (nn.wrap)."""
from .ops.composite.base import GradOperation  # noqa: F401
from .ops.function.grad import grad, value_and_grad  # noqa: F401

__all__ = ["GradOperation", "grad", "value_and_grad"]
