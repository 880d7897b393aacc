"""``mindspore.nn.optim.optimizer``: ``Optimizer``, the base of the optimizers (Momentum, SGD, Adam,
AdamWeightDecay: one file each, as MindSpore keeps them).

An optimizer is a Cell whose ``construct(gradients)`` emits one device update kernel per parameter
(``kernels/ops/optim.py``) and assigns the results back to the parameter and its state, so inside a
training step graph the weights are updated in device memory. State Parameters are named as MindSpore
names them (``global_step``, ``learning_rate``, ``momentum``, ``moments.<param>``, ``beta1_power``,
``moment1.<param>`` ...), so checkpoints carry the same entries in the same order.

Rules kept from MindSpore: weight decay applies to parameters whose names contain neither ``beta`` nor
``gamma``, unless given per parameter group (then to every parameter of a group whose decay is > 0);
with a ``loss_scale`` the decay is multiplied by it and added to the still-scaled gradient, which is
then multiplied by 1 / loss_scale (``Optimizer._preprocess_weight_decay``, ``decay_weight``,
``scale_grad``): the decay is the same whatever the loss scale; ``global_step`` counts
optimizer calls; a dynamic learning rate (a list, indexed by ``global_step``, or a
``LearningRateSchedule`` cell, called on it) is read before the increment, which ``get_lr`` makes
(a fixed one leaves it to the optimizer's ``construct``, as MindSpore's optimizers do).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError

from ... import ops
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell, ParameterTuple
from ..layer.container import CellList  # noqa: F401  (MindSpore's nn.optim.optimizer has it)
from ..learning_rate_schedule import LearningRateSchedule

__all__ = ["Optimizer"]


def _decays(param: Parameter) -> bool:
    """MindSpore's default decay filter: no weight decay on BatchNorm/LayerNorm gamma and beta."""
    return "beta" not in param.name and "gamma" not in param.name


def _number(name: str, value: Any, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise InvalidParamError(f"{name}={value!r} must be a number >= {minimum}")
    if value < minimum:
        raise InvalidValueError(f"{name}={value!r} must be a number >= {minimum}")
    return float(value)


def _open_unit(name: str, value: Any) -> float:
    """A rate in (0, 1), as MindSpore checks beta1 and beta2."""
    value = _number(name, value)
    if not 0.0 < value < 1.0:
        raise InvalidValueError(f"{name}={value!r} must be in (0, 1)")
    return value


class _IteratorLearningRate(LearningRateSchedule):
    """A list of learning rates, one per step, as MindSpore holds it: a schedule cell owning the
    Parameter ``learning_rate``, so a checkpoint lists it after the optimizer's own state (as
    MindSpore's does). Past its end the last rate stays."""

    def __init__(self, values: np.ndarray):
        super().__init__()
        self.learning_rate = Parameter(values, name="learning_rate", requires_grad=False)

    def construct(self, global_step: Tensor) -> Tensor:
        step = ops.minimum(global_step, self.learning_rate.shape[0] - 1)
        return ops.gather(self.learning_rate, step, 0)


class Optimizer(Cell):
    """Base of the optimizers: parameters (or parameter groups), learning rate, weight decay, loss scale.

    ``parameters``: Parameters, or dicts ``{"params": [...], "weight_decay": wd, "lr": lr}`` plus an
    optional ``{"order_params": [...]}`` fixing the order. ``learning_rate``: a number, a list/array (one
    value per step), a 0-/1-d Tensor, or a LearningRateSchedule cell (then ``self.learning_rate`` is
    that cell and the checkpoint has no ``learning_rate`` entry, as in MindSpore). A list or 1-d
    Tensor becomes such a cell too (``_IteratorLearningRate``), whose ``learning_rate`` Parameter a
    checkpoint lists after the optimizer's moments, where MindSpore's does.
    """

    def __init__(self, learning_rate: Any, parameters: Any, weight_decay: float = 0.0, loss_scale: float = 1.0):
        super().__init__(auto_prefix=False)
        params, decay, order = self._groups(parameters, weight_decay)
        self.loss_scale = _number("loss_scale", loss_scale, 1e-30)
        self.parameters = ParameterTuple(order or params)
        index = {id(p): i for i, p in enumerate(params)}
        self._weight_decay = [decay[index[id(p)]] for p in self.parameters]
        self.global_step = Parameter(np.zeros((1,), np.int32), name="global_step", requires_grad=False)
        self.dynamic_lr = False
        self.learning_rate = self._lr_parameter(learning_rate)

    @staticmethod
    def _groups(parameters: Any, weight_decay: float) -> tuple[list[Parameter], list[float], list[Parameter]]:
        items = list(parameters) if parameters is not None else []
        if not items:
            raise InvalidValueError("For 'Optimizer', the argument parameters must not be empty: pass "
                                    "net.trainable_params()")
        params, decay, order = [], [], []
        for item in items:
            if isinstance(item, Parameter):
                params.append(item)
                decay.append(_number("weight_decay", weight_decay) if _decays(item) else 0.0)
            elif isinstance(item, dict) and "order_params" in item:
                order = list(item["order_params"])
            elif isinstance(item, dict) and "params" in item:
                # a group's decay applies to all its parameters: MindSpore's group decay_flags are wd > 0,
                # the beta/gamma name filter is only for an ungrouped parameter list
                wd = _number("weight_decay", item.get("weight_decay", weight_decay))
                for p in item["params"]:
                    params.append(p)
                    decay.append(wd)
            else:
                raise InvalidTypeError(f"For 'Optimizer', all elements of the argument 'parameters' must be "
                                       f"'Parameter' or 'dict' (a group with 'params'), got {type(item).__name__}")
        for p in params:
            if not isinstance(p, Parameter):
                raise InvalidTypeError(f"For 'Optimizer', the 'params' of a group must be Parameters, got "
                                       f"{type(p).__name__}")
        return params, decay, order

    def _lr_parameter(self, learning_rate: Any) -> Parameter | LearningRateSchedule:
        if isinstance(learning_rate, LearningRateSchedule):
            self.dynamic_lr = True
            return learning_rate
        if isinstance(learning_rate, Tensor):
            learning_rate = learning_rate.asnumpy()
        if isinstance(learning_rate, (list, tuple, np.ndarray)) and np.ndim(learning_rate) == 1:
            values = np.asarray(learning_rate, np.float32)
            if values.size == 0 or (values < 0).any():
                raise InvalidParamError("learning_rate: a list of learning rates must be non-empty and >= 0")
            self.dynamic_lr = True
            return _IteratorLearningRate(values)
        return Parameter(np.float32(_number("learning_rate", float(np.asarray(learning_rate)))),
                         name="learning_rate", requires_grad=False)

    def get_lr(self) -> Tensor:
        """The learning rate of this step: the fixed rate's Parameter; or, for a dynamic rate, its
        schedule called on ``global_step`` (a list: its value there), after which global_step += 1
        (MindSpore's ``get_lr``)."""
        if not self.dynamic_lr:
            return self.learning_rate
        lr = self.learning_rate(self.global_step)
        ops.assign(self.global_step, self.global_step + 1)
        return ops.reshape(lr, ())

    def _step_lr(self) -> Tensor:
        """``get_lr()`` and, for a fixed rate (which does not count), global_step += 1: what each
        optimizer's ``construct`` does, so global_step counts every update."""
        lr = self.get_lr()
        if not self.dynamic_lr:
            ops.assign(self.global_step, self.global_step + 1)
        return lr

    def prepare_gradients(self, gradients: Sequence[Any], decay_in_kernel: bool) -> list[Any]:
        """Weight decay (unless the update kernel adds it) and the loss scale, as MindSpore computes
        them: g = (g + p * float32(wd * loss_scale)) * float32(1 / loss_scale). The gradients still
        carry the loss scale here (TrainOneStepCell's sens), so the decay is scaled with them and the
        unscaled step decays by wd, not wd / loss_scale."""
        grads = list(gradients)
        if len(grads) != len(self.parameters):
            raise InvalidParamError(f"{type(self).__name__}: got {len(grads)} gradients for "
                                    f"{len(self.parameters)} parameters")
        out = []
        for p, g, wd in zip(self.parameters, grads, self._weight_decay):
            if wd and not decay_in_kernel:
                g = g + p * self._scalar(wd * self.loss_scale)
            if self.loss_scale != 1.0:
                g = g * self._scalar(1.0 / self.loss_scale)
            out.append(g)
        return out

    # the steps MindSpore's Optimizer offers user-defined optimizers for their construct, each on the
    # tuple of gradients (same order as self.parameters)
    def flatten_gradients(self, gradients: Sequence[Any]) -> tuple:
        """The gradients as they are (parameters are never flattened into chunks here)."""
        return tuple(gradients)

    def decay_weight(self, gradients: Sequence[Any]) -> tuple:
        """Weight decay: g + p * float32(wd * loss_scale) for each parameter that decays (MindSpore's
        ``decay_weight``, before ``scale_grad``)."""
        return tuple(g + p * self._scalar(wd * self.loss_scale) if wd else g
                     for p, g, wd in zip(self.parameters, gradients, self._weight_decay))

    def gradients_centralization(self, gradients: Sequence[Any]) -> tuple:
        """The gradients as they are: MindSpore centralizes only the gradients of parameter groups given
        ``grad_centralization=True``, which this emulator's groups do not take."""
        return tuple(gradients)

    def scale_grad(self, gradients: Sequence[Any]) -> tuple:
        """The gradients times float32(1 / loss_scale) (as they are with loss_scale 1)."""
        if self.loss_scale == 1.0:
            return tuple(gradients)
        return tuple(g * self._scalar(1.0 / self.loss_scale) for g in gradients)

    def _scalar(self, value: float) -> Tensor:
        return Tensor(np.float32(value))

    @staticmethod
    def _update(op: str, state: tuple[Parameter, ...], inputs: list[Any], attrs: dict | None = None) -> None:
        """Run update kernel ``op`` and assign its outputs, in order, to ``state`` (the parameter first,
        then its optimizer state)."""
        for target, new in zip(state, ops.apply_op(op, inputs, attrs), strict=True):
            ops.assign(target, new)
