"""``mindspore.mint.nn.layer.normalization``: mint's BatchNorm1d/2d/3d, SyncBatchNorm and GroupNorm,
PyTorch's parameters and conventions (``weight``/``bias``, ``running_mean``/``running_var``,
``num_batches_tracked``; momentum weighs the new batch: running = (1 - momentum) * running +
momentum * batch). Each Cell is ``mint.nn.functional.batch_norm`` / ``group_norm``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ....common import dtype as mstype
from ....common.initializer import initializer
from ....common.parameter import Parameter
from ....common.tensor import Tensor
from ....nn.cell import Cell
from ....ops import function
from .. import functional as F

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "GroupNorm"]


class _BatchNorm(Cell):
    """Training (``set_train()``): the batch's statistics, and with ``track_running_stats`` the running
    ones updated and ``num_batches_tracked`` counted (``momentum=None``: a cumulative average); eval: the
    running statistics (the batch's when there are none). ``ranks``: the input ranks accepted."""

    ranks: tuple[int, ...] = (4,)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Any = 0.1, affine: bool = True,
                 track_running_stats: bool = True, dtype: Any = None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.dtype = mstype.float32 if dtype is None else dtype
        self.weight = self.bias = None
        if affine:
            self.weight = Parameter(Tensor(np.ones(num_features), self.dtype), name="weight")
            self.bias = Parameter(Tensor(np.zeros(num_features), self.dtype), name="bias")
        self.running_mean = self.running_var = self.num_batches_tracked = None
        if track_running_stats:
            self.running_mean = Parameter(Tensor(np.zeros(num_features), self.dtype), name="running_mean",
                                          requires_grad=False)
            self.running_var = Parameter(Tensor(np.ones(num_features), self.dtype), name="running_var",
                                         requires_grad=False)
            self.num_batches_tracked = Parameter(Tensor(0, mstype.int64), name="num_batches_tracked",
                                                 requires_grad=False)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self.ranks:
            want = " or ".join(f"{r}D" for r in self.ranks)
            raise ValueError(f"expected {want} input, but got {input.ndim}D input")

    def construct(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            function.assign(self.num_batches_tracked, self.num_batches_tracked + 1)
            if self.momentum is None:
                factor = 1.0 / function.cast(self.num_batches_tracked, mstype.float32)
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch, factor, self.eps)

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    ranks = (4,)


class BatchNorm3d(_BatchNorm):
    ranks = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics MindSpore gathers over a process group; the emulator runs one device
    per process, so the group is this device (``process_group`` None, the world) and it is a BatchNorm
    of ranks 2 to 5."""

    ranks = (2, 3, 4, 5)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Any = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, dtype: Any = None):
        if process_group is not None:
            raise InvalidParamError(f"SyncBatchNorm: process_group={process_group!r} is not served (one device "
                                    f"per process here); leave it None")
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)
        self.process_group = process_group


class GroupNorm(Cell):
    """Group norm of (N, C, ...) over ``num_groups`` groups of channels; weight ones, bias zeros."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, dtype: Any = None):
        super().__init__()
        for what, value in (("num_groups", num_groups), ("num_channels", num_channels)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"For 'GroupNorm', the '{what}' must be a positive int, but got {value!r}.")
        if num_channels % num_groups:
            raise ValueError(f"For 'GroupNorm', the 'num_channels' must be divided by 'num_groups', but got "
                             f"'num_channels': {num_channels}, 'num_groups': {num_groups}.")
        if not isinstance(eps, float):
            raise TypeError(f"For 'GroupNorm', the type of 'eps' must be float, but got {type(eps).__name__}.")
        if not isinstance(affine, bool):
            raise TypeError(f"For 'GroupNorm', the type of 'affine' must be bool, but got {type(affine).__name__}.")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        dtype = mstype.float32 if dtype is None else dtype
        self.weight = Parameter(initializer("ones", num_channels, dtype), name="weight", requires_grad=affine)
        self.bias = Parameter(initializer("zeros", num_channels, dtype), name="bias", requires_grad=affine)

    def construct(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extend_repr(self) -> str:
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}, eps={self.eps}, affine={self.affine}"
