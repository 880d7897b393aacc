"""``mindspore.mint.nn.layer.activation``: mint's activation Cells, each the mint functional of its name
(``mint.nn.functional``) applied in ``construct``."""
from __future__ import annotations

from typing import Any

from ....common.tensor import Tensor
from ....nn.cell import Cell
from .. import functional as F

__all__ = ["SiLU", "Sigmoid", "LogSigmoid", "ELU", "Tanh", "Threshold"]


class SiLU(Cell):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def construct(self, x: Tensor) -> Tensor:
        return F.silu(x, self.inplace)


class Sigmoid(Cell):
    def construct(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class LogSigmoid(Cell):
    def construct(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class ELU(Cell):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def construct(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)


class Tanh(Cell):
    def construct(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Threshold(Cell):
    """``value`` where ``input <= threshold``, else ``input``."""

    def __init__(self, threshold: Any, value: Any, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def construct(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)
