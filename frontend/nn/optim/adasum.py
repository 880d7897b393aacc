"""``mindspore.nn.optim.adasum``: ``AdaSumByGradWrapCell`` and ``AdaSumByDeltaWeightWrapCell``, where
MindSpore defines them.

AdaSum combines the gradients (or weight deltas) of groups of 8 devices pairwise by Send/Receive between
groups. MindSpore accepts it only under (semi-)auto or data parallel with at least 16 devices, a power of
two, no optimizer sharding and no pipeline: the same checks raise the same errors here (on one device:
"Stand alone mode is not supported"). The exchange itself is not served: a configuration MindSpore
accepts is refused with an InvalidParamError that says so.
"""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ... import context
from ...ops.operations.comm_ops import Receive, Send  # noqa: F401  (MindSpore's nn.optim.adasum has them)
from ...parallel._utils import _get_device_num
from ..cell import Cell
from .optimizer import Optimizer

__all__ = ["AdaSumByGradWrapCell", "AdaSumByDeltaWeightWrapCell"]

# MindSpore's smallest AdaSum world: two groups of its fixed 8 devices per group
ADASUM_MIN_DEVICES = 16


def _parallel_check() -> None:
    """MindSpore's ``_parallel_check``, in its order and with its messages."""
    if context.get_auto_parallel_context("parallel_mode") == context.ParallelMode.STAND_ALONE:
        raise RuntimeError("Stand alone mode is not supported to apply adasum.")
    if context.get_auto_parallel_context("enable_parallel_optimizer"):
        raise RuntimeError("Currently, the optimizer shard is not supported with applying adasum.")
    stages = context.get_auto_parallel_context("pipeline_stages")
    if stages > 1:
        raise RuntimeError("Currently, the pipeline parallel is not supported with applying adasum.")
    devices = _get_device_num() // stages
    if devices < ADASUM_MIN_DEVICES or devices & (devices - 1) != 0:
        raise RuntimeError("The device_num must be at least 16 and must be the power of 2 when applying adasum.")


class _AdaSumWrapCell(Cell):
    """What both wrappers check before building AdaSum's exchange."""

    def __init__(self, optimizer: Optimizer):
        super().__init__(auto_prefix=False)
        _parallel_check()
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"For '{type(self).__name__}', the type of 'optimizer' must be Optimizer, but got "
                            f"{type(optimizer).__name__}.")
        raise InvalidParamError(f"{type(self).__name__}: AdaSum's pairwise Send/Receive exchange between device "
                                f"groups is not served by the emulator; reduce gradients with "
                                f"nn.DistributedGradReducer (data parallel) instead")

    def construct(self, grads: Any) -> Any:
        raise InvalidParamError(f"{type(self).__name__} is not served")


class AdaSumByGradWrapCell(_AdaSumWrapCell):
    """AdaSum over the gradients, then ``optimizer`` (MindSpore's checks; the exchange is not served)."""


class AdaSumByDeltaWeightWrapCell(_AdaSumWrapCell):
    """``optimizer``, then AdaSum over the weight deltas (MindSpore's checks; the exchange is not served)."""
