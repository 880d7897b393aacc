"""``mindspore.nn.layer.channel_shuffle``: ChannelShuffle, where MindSpore defines it."""
from __future__ import annotations

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Cell):
    """``ops.channel_shuffle``: the C channels of (N, C, *) seen as (groups, C / groups) and transposed."""

    def __init__(self, groups: int):
        super().__init__()
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
            raise InvalidParamError(f"ChannelShuffle: groups={groups!r} must be an int >= 1")
        self.groups = groups

    def construct(self, x: Tensor) -> Tensor:
        return ops.channel_shuffle(x, self.groups)
