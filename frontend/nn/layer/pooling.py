"""``mindspore.nn.layer.pooling``: MaxPool2d, AvgPool2d, where MindSpore defines them."""
from __future__ import annotations

from typing import Any

from ... import ops
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.pooling has it)
from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ["AvgPool2d", "MaxPool2d"]


class _Pool2d(Cell):
    prim: type = ops.MaxPool

    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid", data_format: str = "NCHW"):
        super().__init__()
        self.pool = self.prim(kernel_size, stride, pad_mode, data_format)
        self.kernel_size, self.stride, self.pad_mode = kernel_size, stride, str(pad_mode).upper()

    def construct(self, x: Tensor) -> Tensor:
        return self.pool(x)

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


class MaxPool2d(_Pool2d):
    prim = ops.MaxPool


class AvgPool2d(_Pool2d):
    prim = ops.AvgPool
