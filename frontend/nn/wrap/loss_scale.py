"""``mindspore.nn.wrap.loss_scale``: TrainOneStepWithLossScaleCell and its DynamicLossScaleUpdateCell and
FixedLossScaleUpdateCell, where MindSpore defines them, and ``all_finite`` (``mindspore.amp.all_finite``).

Loss scaling stays on the device: the overflow flag is an all-finite reduction of the gradients, the
scale is a Parameter the update cell assigns with Select, and a step that overflowed keeps every
parameter and optimizer state bit for bit through ``Tracer.updates_unless`` (a Select per updated
state), so the host never waits for the flag. In PyNative mode the host reads the flag, as MindSpore's
``if not overflow:`` does there.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError
from ascendemu.graph.capture import current_tracer

from ... import ops
from ...capture import tracer_value
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell
from .cell_wrapper import TrainOneStepCell

__all__ = ["TrainOneStepWithLossScaleCell", "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell", "all_finite"]


def all_finite(inputs: Any) -> Tensor:
    """``mindspore.amp.all_finite``: a bool scalar, True when no element of any input is inf or NaN; one
    AllFinite kernel reads them all (as Ascend's float status register sums a whole step)."""
    tensors = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not tensors:
        raise InvalidParamError("all_finite: give at least one tensor")
    return ops.apply_op("AllFinite", tensors)[0]


class DynamicLossScaleUpdateCell(Cell):
    """MindSpore's dynamic loss scale rule, on the device. On overflow the scale becomes
    max(scale / scale_factor, 1); after ``scale_window`` steps since the last overflow (or the last
    increase) without one, it is multiplied by ``scale_factor``. State: ``current_iterator_step``
    (from 1) and ``last_overflow_iterator_step`` (from 0). ``construct(loss_scale, overflow)`` assigns
    the new scale to the ``loss_scale`` Parameter and returns ``overflow``."""

    def __init__(self, loss_scale_value: float, scale_factor: int, scale_window: int):
        super().__init__()
        if isinstance(scale_window, bool) or not isinstance(scale_window, (int, np.integer)) or scale_window < 1:
            raise InvalidParamError(f"DynamicLossScaleUpdateCell: scale_window={scale_window!r} must be an int >= 1")
        if not isinstance(scale_factor, (int, float, np.number)) or scale_factor <= 0:
            raise InvalidParamError(f"DynamicLossScaleUpdateCell: scale_factor={scale_factor!r} must be > 0")
        self.loss_scale_value = loss_scale_value
        self.scale_window = Tensor(int(scale_window), mstype.int32)
        self.scale_factor = Tensor(float(scale_factor), mstype.float32)
        self.cur_iter = Parameter(Tensor(1, mstype.int32), name="current_iterator_step", requires_grad=False)
        self.last_overflow_iter = Parameter(Tensor(0, mstype.int32), name="last_overflow_iterator_step",
                                            requires_grad=False)
        self.minimum_loss_scale = Tensor(1.0, mstype.float32)

    def get_loss_scale(self) -> float:
        return self.loss_scale_value

    def construct(self, loss_scale: Parameter, overflow: Tensor) -> Tensor:
        decreased = ops.maximum(loss_scale * ops.reciprocal(self.scale_factor), self.minimum_loss_scale)
        on_overflow = ops.select(overflow, decreased, loss_scale)
        should_inc = ops.less_equal(self.scale_window, self.cur_iter - self.last_overflow_iter)
        ops.assign(self.last_overflow_iter, ops.select(ops.logical_or(overflow, should_inc), self.cur_iter,
                                                       self.last_overflow_iter))
        increase = ops.logical_and(should_inc, ops.logical_not(overflow))
        ops.assign(loss_scale, ops.select(increase, on_overflow * self.scale_factor, on_overflow))
        ops.assign(self.cur_iter, self.cur_iter + 1)
        return overflow


class FixedLossScaleUpdateCell(Cell):
    """A loss scale that never changes; ``construct(loss_scale, overflow)`` returns ``overflow``."""

    def __init__(self, loss_scale_value: float):
        super().__init__()
        self.loss_scale_value = loss_scale_value

    def get_loss_scale(self) -> float:
        return self.loss_scale_value

    def construct(self, loss_scale: Any, overflow: Tensor) -> Tensor:
        return overflow


class TrainOneStepWithLossScaleCell(TrainOneStepCell):
    """One training step with loss scaling; returns ``(loss, overflow, loss_scale)``.

    The gradients are taken with sens = the scale, multiplied by its reciprocal, checked for inf/NaN;
    ``scale_sense`` (an update cell, or a Tensor of shape () or (1,) kept fixed unless
    ``set_sense_scale`` changes it) becomes the Parameter ``scale_sense``; on overflow the update cell
    adjusts it and the optimizer update is skipped. The returned scale is the one this step used.
    """

    def __init__(self, network: Cell, optimizer: Cell, scale_sense: Any):
        super().__init__(network, optimizer, sens=None)
        self.hyper_map = ops.HyperMap()          # MindSpore's attribute, which subclasses' construct use
        self.loss_scaling_manager = None
        if isinstance(scale_sense, Cell):
            self.loss_scaling_manager = scale_sense
            value = Tensor(float(scale_sense.get_loss_scale()), mstype.float32)
        elif isinstance(scale_sense, Tensor):
            if scale_sense.shape not in ((), (1,)):
                raise InvalidValueError(f"For 'TrainOneStepWithLossScaleCell', the shape of 'scale_sense' must be "
                                        f"(1,) or (), but got {scale_sense.shape}.")
            value = scale_sense
        else:
            raise InvalidTypeError(f"For 'TrainOneStepWithLossScaleCell', the 'scale_sense' must be Cell (an update "
                                   f"cell) or Tensor, but got 'scale_sense' type: {type(scale_sense).__name__}.")
        self.scale_sense = Parameter(value, name="scale_sense", requires_grad=False)

    def set_sense_scale(self, sens: Tensor) -> None:
        """Replace the loss scale (a Tensor of the same shape)."""
        if not isinstance(sens, Tensor):
            raise InvalidTypeError(f"For 'TrainOneStepWithLossScaleCell', the type of 'sens' must be Tensor, but got "
                                   f"{type(sens).__name__}")
        self.scale_sense.set_data(sens)

    def start_overflow_check(self, pre_cond: Any, compute_input: Any) -> tuple[bool, Any]:
        """No status register to clear: the overflow check reads the gradients themselves."""
        return False, compute_input

    def get_overflow_status(self, status: Any, compute_output: Any) -> Tensor:
        """True when some gradient holds inf or NaN."""
        return ops.logical_not(all_finite(compute_output))

    def process_loss_scale(self, overflow: Tensor) -> Tensor:
        """Let the update cell adjust the scale; returns the overflow flag."""
        if self.loss_scaling_manager is not None:
            return self.loss_scaling_manager(self.scale_sense, overflow)
        return overflow

    def construct(self, *inputs: Any) -> Any:
        loss = self.network(*inputs)
        scaling_sens = ops.stop_gradient(self.scale_sense)      # the value before this step's update
        status, scaling_sens = self.start_overflow_check(loss, scaling_sens)
        sens = ops.fill(loss.dtype, loss.shape, 1) * ops.reshape(ops.cast(scaling_sens, loss.dtype), ())
        grads = self.grad(self.network, self.weights)(*inputs, sens)
        unscale = ops.reciprocal(scaling_sens)
        grads = tuple(g * ops.reshape(ops.cast(unscale, g.dtype), ()) for g in grads)
        grads = self.grad_reducer(grads)          # reduced first: an overflow on any rank is one on all
        cond = self.get_overflow_status(status, grads)
        overflow = self.process_loss_scale(cond)
        tracer = current_tracer()
        if tracer is None:                       # PyNative: the host reads the flag
            if not bool(overflow.asnumpy()):
                self.optimizer(grads)
        else:
            with tracer.updates_unless(tracer_value(tracer, overflow)):
                self.optimizer(grads)
        return loss, cond, scaling_sens
