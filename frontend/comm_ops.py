"""The collective primitives live in ``ops.operations.comm_ops``, as in MindSpore; this path stays for
the modules that import it (nn.wrap.grad_reducer, communication.comm_func)."""
from .ops.operations.comm_ops import *  # noqa: F401,F403
