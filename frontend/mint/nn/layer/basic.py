"""``mindspore.mint.nn.layer.basic``: mint's Flatten (PyTorch's: dims ``start_dim``..``end_dim`` merged)."""
from __future__ import annotations

from ....common.tensor import Tensor
from ....nn.cell import Cell
from .. import functional as F

__all__ = ["Flatten"]


class Flatten(Cell):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, input: Tensor) -> Tensor:
        return F.flatten(input, self.start_dim, self.end_dim)
