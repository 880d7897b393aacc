"""``mindspore.nn.layer.timedistributed``: TimeDistributed, where MindSpore defines it."""
from __future__ import annotations

from typing import Any, Optional

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common.tensor import Tensor
from ...ops import Primitive, constexpr  # noqa: F401  (MindSpore's nn.layer.timedistributed has constexpr)
from ..cell import Cell

__all__ = ["TimeDistributed"]


def _swap_perm(axis_a: int, axis_b: int, length: int) -> tuple[int, ...]:
    """The permutation moving the later of two axes in front of the earlier one (MindSpore's
    ``_generate_perm``)."""
    perm = tuple(range(length))
    a, b = sorted((axis_a, axis_b))
    return perm[:a] + (perm[b],) + perm[a:b] + perm[b + 1:]


class TimeDistributed(Cell):
    """Applies ``layer`` to every time step of ``inputs`` (rank >= 3) along ``time_axis``: one call per
    step, restacked on ``time_axis``; or, with ``reshape_with_axis``, one call on the time axis merged
    into that axis, split back after."""

    def __init__(self, layer: Any, time_axis: int, reshape_with_axis: Optional[int] = None):
        if not isinstance(layer, (Cell, Primitive)):
            raise TypeError(f"For 'TimeDistributed', the 'layer' must be Cell or Primitive instance, but got type: "
                            f"{type(layer).__name__}.")
        super().__init__()
        for name, value in (("time_axis", time_axis), ("reshape_with_axis", reshape_with_axis)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise InvalidParamError(f"TimeDistributed: {name}={value!r} must be an int")
        self.layer, self.time_axis, self.reshape_with_axis = layer, time_axis, reshape_with_axis

    def construct(self, inputs: Tensor) -> Tensor:
        if not isinstance(inputs, Tensor):
            raise TypeError("For 'TimeDistributed', the inputs and outputs must be a Tensor.")
        rank = inputs.ndim
        if rank < 3:
            raise InvalidParamError(f"For 'TimeDistributed', the inputs shape must be at least 3D, but got {rank}.")
        time_axis = self.time_axis % rank
        if self.reshape_with_axis is None:
            steps = [self.layer(step) for step in ops.unstack(inputs, time_axis)]
            return ops.stack(steps, time_axis)
        merge = self.reshape_with_axis % rank
        if merge == rank - 1:
            new_time = rank - 2
        else:
            new_time = merge + 1 if time_axis > merge else merge - 1
        pos = min(new_time, merge)
        moved = ops.transpose(inputs, _swap_perm(new_time, time_axis, rank))
        shape = moved.shape
        out = self.layer(ops.reshape(moved, shape[:pos] + (-1,) + shape[pos + 2:]))
        if pos >= out.ndim or moved.shape[pos] * moved.shape[pos + 1] != out.shape[pos]:
            raise InvalidParamError(f"For 'TimeDistributed', the 'reshape_with_axis' is invalid in the input and "
                                    f"output: the layer changed the merged axis {pos} (output shape {out.shape})")
        new_shape = out.shape[:pos] + shape[pos:pos + 2] + out.shape[pos + 1:]
        return ops.reshape(out, (-1,) + new_shape[1:])
