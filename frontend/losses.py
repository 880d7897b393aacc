"""The losses live in ``ops.function.nn_func`` (their reductions in ``ops.operations.nn_ops``), as in
MindSpore; this path stays for the module that imports it (nn.loss.loss)."""
from .ops.function.nn_func import (binary_cross_entropy_with_logits, cross_entropy, l1_loss, mse_loss,  # noqa: F401
                                   nll_loss, smooth_l1_loss, softmax_cross_entropy)
from .ops.operations.nn_ops import REDUCTIONS, check_reduction, check_smooth_l1, reduce_loss  # noqa: F401
