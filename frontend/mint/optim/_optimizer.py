"""The base of ``mindspore.mint.optim``'s optimizers: MindSpore's ``experimental.optim.Optimizer``
(PyTorch's ``torch.optim.Optimizer`` shape): parameter groups as dicts that inherit the optimizer's
``defaults``, each group's ``lr`` held as a float32 Parameter ``learning_rate_group_<i>``.

As in MindSpore the Cell registers the parameters and the state the subclasses clone from them
(``exp_avg.<name>``, ``momentum_buf.<name>``, ``state_step`` ...), not the group learning rates (a list)
nor a group's ``max_exp_avg_sq`` (a dict entry), so checkpoints list the same entries. ``construct``
emits ordinary ops and ``ops.assign``s: inside a captured training step the update is a graph update.
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ... import ops
from ...common.parameter import Parameter, ParameterTuple
from ...common.tensor import Tensor
from ...nn.cell import Cell
from ...ops._utils import check_value_type

__all__ = ["Optimizer"]


def check_adam_args(owner: str, lr: Any, betas: Any, eps: Any, weight_decay: Any, amsgrad: Any, maximize: Any,
                    betas_types: tuple[type, ...] = (tuple,)) -> None:
    """The argument checks Adam, AdamW and FusedAdamW share (MindSpore's ``_check_param_value`` and ranges)."""
    check_value_type(owner, "betas", betas, betas_types)
    if len(betas) != 2:
        raise ValueError(f"For '{owner}', the 'betas size' must be in [2], but got {len(betas)}.")
    for i, beta in enumerate(betas):
        check_value_type(owner, f"betas[{i}]", beta, (float,))
    for name, value in (("eps", eps), ("weight_decay", weight_decay), ("lr", lr)):
        check_value_type(owner, name, value, (float,))
    check_value_type(owner, "amsgrad", amsgrad, (bool,))
    check_value_type(owner, "maximize", maximize, (bool,))
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def scalar(value: float) -> Tensor:
    """A float32 0-d constant, as MindSpore's Python floats reach its float32 kernels."""
    return Tensor(np.float32(value))


class Optimizer(Cell):
    """``params``: Parameters or group dicts ``{"params": [...], <any default overridden>}``; ``defaults``:
    the optimizer's hyper-parameters. ``param_groups``, ``parameters`` (a ParameterTuple in group order),
    ``group_start_id`` and ``lrs`` as MindSpore's experimental Optimizer keeps them."""

    def __init__(self, params: Iterable[Any], defaults: dict):
        super().__init__(auto_prefix=False)
        groups = self._parameters_base_check(params)
        self.defaults = defaults
        self.param_groups: list[dict] = []
        self.lrs: list[Parameter] = []
        self.group_start_id = [0]
        self._group_params: list[Parameter] = []
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)
        self.parameters = ParameterTuple(self._group_params)

    @staticmethod
    def _parameters_base_check(params: Any) -> list:
        if params is None:
            raise ValueError("For 'Optimizer', the argument params can not be None.")
        if not isinstance(params, Iterable):
            raise TypeError(f"For 'Optimizer', the argument params must be Iterable type, but got {type(params)}.")
        params = list(params)
        if not params:
            raise ValueError("For 'Optimizer', the argument params must not be empty.")
        return params

    def add_param_group(self, param_group: dict) -> None:
        """Append a group: its parameters checked, the defaults it lacks filled in, its lr a Parameter."""
        if not isinstance(param_group, dict):
            raise TypeError("Param group must be a dict.")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("Optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        params = [params] if isinstance(params, Parameter) else list(params)
        for p in params:
            if not isinstance(p, Parameter):
                raise TypeError(f"Optimizer can only optimize Parameters, but one of the params is {type(p)}")
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group.")
        param_group["params"] = params
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        group_id = len(self.param_groups)
        param_group["lr"] = self._build_single_lr(param_group["lr"], f"learning_rate_group_{group_id}")
        param_group["weight_decay"] = self._weight_decay(param_group.get("weight_decay", 0.0))
        if param_group.get("amsgrad") and getattr(self, "max_v_group", False):
            param_group["max_exp_avg_sq"] = ParameterTuple(params).clone(prefix="max_exp_avg_sq", init="zeros")
        self.lrs.append(param_group["lr"])
        self._group_params.extend(params)
        self.param_groups.append(param_group)
        self.group_start_id.append(self.group_start_id[-1] + len(params))

    def _build_single_lr(self, learning_rate: Any, name: str) -> Parameter:
        if isinstance(learning_rate, (float, int)) and not isinstance(learning_rate, bool):
            if learning_rate < 0:
                raise ValueError(f"For '{self.cls_name}', the 'learning rate' must be >= 0, but got {learning_rate}.")
            return Parameter(np.float32(learning_rate), name=name, requires_grad=False)
        if isinstance(learning_rate, Tensor):
            if learning_rate.ndim == 0:
                return Parameter(learning_rate.asnumpy().astype(np.float32), name=name, requires_grad=False)
            raise ValueError("For 'Optimizer', if 'learning_rate' is a Tensor, then it should be scalar Tensor")
        raise TypeError(f"For 'Optimizer', the argument 'learning_rate' must be int, float or Tensor, but got "
                        f"{type(learning_rate)}.")

    def _weight_decay(self, weight_decay: Any) -> float:
        if isinstance(weight_decay, bool) or not isinstance(weight_decay, (float, int)):
            raise TypeError(f"For 'Optimizer', the argument 'Weight_decay' must be int or float.but got "
                            f"{type(weight_decay)}")
        if weight_decay < 0:
            raise ValueError(f"For '{self.cls_name}', the 'weight_decay' must be >= 0, but got {weight_decay}.")
        return float(weight_decay)

    @property
    def cls_name(self) -> str:
        return type(self).__name__

    def group_slices(self) -> Iterable[tuple[dict, slice]]:
        """Each group with the slice of ``parameters`` (and of every cloned state tuple) it owns."""
        for i, group in enumerate(self.param_groups):
            yield group, slice(self.group_start_id[i], self.group_start_id[i + 1])

    @staticmethod
    def lr_value(group: dict) -> float:
        """The group's rate as the Python float MindSpore's ``float(lr)`` reads from its Parameter."""
        lr = group["lr"]
        return float(np.asarray(lr.asnumpy()).reshape(())) if isinstance(lr, Tensor) else float(lr)

    @staticmethod
    def decay(weight_decay: float, params: Iterable[Parameter], grads: Iterable[Any]) -> list[Any]:
        """L2 decay added to the gradients: ``p * float32(wd) + g`` (the base's ``_decay_weight``)."""
        if weight_decay == 0.0:
            return list(grads)
        return [ops.add(ops.mul(p, scalar(weight_decay)), g) for p, g in zip(params, grads)]

    def construct(self, *hyper_params: Any) -> Any:
        raise NotImplementedError


class AdamFamily(Optimizer):
    """What Adam, AdamW and FusedAdamW set up alike: their argument checks, the defaults of every group,
    ``exp_avg.*`` and ``exp_avg_sq.*`` per parameter and the ``state_step`` counter (from
    ``STEP_START``); a group with ``amsgrad`` keeps ``max_exp_avg_sq`` (``max_v_group``)."""

    BETAS_TYPES: tuple[type, ...] = (tuple,)
    STEP_START = 0.0
    max_v_group = True

    def __init__(self, params: Any, lr: float, betas: tuple, eps: float, weight_decay: float, amsgrad: bool,
                 maximize: bool):
        check_adam_args(type(self).__name__, lr, betas, eps, weight_decay, amsgrad, maximize, self.BETAS_TYPES)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": maximize})
        self.exp_avg = self.parameters.clone(prefix="exp_avg", init="zeros")
        self.exp_avg_sq = self.parameters.clone(prefix="exp_avg_sq", init="zeros")
        self.state_step = Parameter(np.full((1,), self.STEP_START, np.float32), name="state_step",
                                    requires_grad=False)
