"""``mindspore.train.loss_scale_manager`` (also ``mindspore.amp`` and ``mindspore``): what ``Model`` and
``amp.build_train_network`` ask about loss scaling.

A manager hands out the initial scale (``get_loss_scale``), the cell that updates it on the device
inside the training step (``get_update_cell``: a ``DynamicLossScaleUpdateCell``, a
``FixedLossScaleUpdateCell``, or None when overflowing steps are not dropped), and whether an
overflowing step's update is dropped (``get_drop_overflow_update``).
"""
from __future__ import annotations

import numbers

from ascendemu.errors import InvalidParamError

from ..nn import Cell, DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]


class LossScaleManager:
    """Base of the loss scale managers."""

    def get_loss_scale(self) -> float:
        raise NotImplementedError

    def update_loss_scale(self, overflow: bool) -> None:
        raise NotImplementedError

    def get_update_cell(self) -> Cell | None:
        raise NotImplementedError


class FixedLossScaleManager(LossScaleManager):
    """A constant scale. ``drop_overflow_update=False`` gives no update cell: the step is a plain
    TrainOneStepCell with sens = the scale, and the optimizer's ``loss_scale`` must be set to the same
    value to unscale the gradients (as in MindSpore)."""

    def __init__(self, loss_scale: float = 128.0, drop_overflow_update: bool = True):
        if not isinstance(loss_scale, numbers.Real) or isinstance(loss_scale, bool) or loss_scale < 1:
            raise InvalidParamError(f"FixedLossScaleManager: loss_scale={loss_scale!r} must be a number >= 1")
        self._loss_scale = loss_scale
        self._drop_overflow_update = bool(drop_overflow_update)

    def get_loss_scale(self) -> float:
        return self._loss_scale

    def get_drop_overflow_update(self) -> bool:
        return self._drop_overflow_update

    def update_loss_scale(self, overflow: bool) -> None:
        """The scale is fixed: nothing to update."""

    def get_update_cell(self) -> FixedLossScaleUpdateCell | None:
        return FixedLossScaleUpdateCell(self._loss_scale) if self._drop_overflow_update else None


class DynamicLossScaleManager(LossScaleManager):
    """Scale divided by ``scale_factor`` on overflow (never below 1) and multiplied by it after
    ``scale_window`` steps without one. ``get_update_cell`` gives the device-side rule;
    ``update_loss_scale`` is MindSpore's host-side version of it for scripts that drive it by hand."""

    BAD_STEP_MAX = 1000

    def __init__(self, init_loss_scale: float = 2 ** 24, scale_factor: int = 2, scale_window: int = 2000):
        if not isinstance(init_loss_scale, numbers.Real) or init_loss_scale < 1.0:
            raise InvalidParamError(f"DynamicLossScaleManager: init_loss_scale={init_loss_scale!r} must be >= 1")
        if isinstance(scale_window, bool) or not isinstance(scale_window, int) or scale_window < 1:
            raise InvalidParamError(f"DynamicLossScaleManager: scale_window={scale_window!r} must be an int >= 1")
        if not isinstance(scale_factor, numbers.Real) or scale_factor <= 0:
            raise InvalidParamError(f"DynamicLossScaleManager: scale_factor={scale_factor!r} must be > 0")
        self.loss_scale = init_loss_scale
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.increase_ratio = scale_factor
        self.decrease_ratio = 1 / scale_factor
        self.cur_iter = 1
        self.last_overflow_iter = 0
        self.bad_step = 0

    def get_loss_scale(self) -> float:
        return self.loss_scale

    def update_loss_scale(self, overflow: bool) -> None:
        if overflow:
            self.loss_scale = max(self.loss_scale * self.decrease_ratio, 1)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.loss_scale *= self.increase_ratio
            self.bad_step = 0
        if self.bad_step > self.BAD_STEP_MAX:
            raise InvalidParamError(f"DynamicLossScaleManager: {self.bad_step} overflowing steps in a row, more "
                                    f"than {self.BAD_STEP_MAX}; lower init_loss_scale or check the network")
        self.cur_iter += 1

    def get_drop_overflow_update(self) -> bool:
        return True

    def get_update_cell(self) -> DynamicLossScaleUpdateCell:
        return DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)
