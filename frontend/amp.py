"""``mindspore.amp``: automatic mixed precision and loss scaling.

Levels (MindSpore's ``_config_level`` and ``auto_mixed_precision``):

* O0: unchanged, float32.
* O1: white-listed cells (Dense, Conv2d) run in float16 with their outputs cast back to float32, and
  white-listed primitives (MatMul, BatchMatMul, Conv2D, ReLU, ...) called in user-defined cells get
  float16 inputs and a float32 output. As in MindSpore's rewrite, cells of the framework itself
  (nn.ReLU, containers, losses) are not looked into, and white-listed cells inside containers are left
  alone.
* O2: the network in float16 except the black list (BatchNorm, LayerNorm: float32, output cast back to
  float16); ``build_train_network`` adds a dynamic loss scale.
* O3: the whole network in float16, no loss scale.

``auto_mixed_precision`` wraps O2/O3 networks so their outputs are float32; ``build_train_network``
casts the network's output and the label to float32 before a loss it adds. Parameters always stay
float32: the casts sit where they are used, so their gradients and updates are float32.
"""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from . import context, nn, ops
from .common import dtype as mstype
from .nn.wrap.cell_wrapper import _TrainGradAccuStepCell
from .nn.wrap.loss_scale import all_finite
from .ops import constexpr  # noqa: F401  (MindSpore's amp has it)
from .common.parameter import Parameter
from .common.tensor import Tensor
from .train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager

__all__ = ["auto_mixed_precision", "build_train_network", "get_white_list", "get_black_list", "all_finite",
           "LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager", "LossScaler",
           "StaticLossScaler", "DynamicLossScaler"]

AMP_WHITE_LIST = [nn.Conv2d, nn.Dense, ops.Conv2D, ops.MatMul, ops.BatchMatMul, ops.ReLU]
AMP_BLACK_LIST = [nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm]
LEVELS = ("O0", "O1", "O2", "O3")

# build_train_network's defaults per level (MindSpore's _config_level)
_CONFIG_LEVEL = {
    "O0": {"keep_batchnorm_fp32": False, "cast_model_type": mstype.float32, "loss_scale_manager": None},
    "O1": {"keep_batchnorm_fp32": False, "cast_model_type": mstype.float32, "loss_scale_manager": None},
    "O2": {"keep_batchnorm_fp32": True, "cast_model_type": mstype.float16, "loss_scale_manager": "dynamic"},
    "O3": {"keep_batchnorm_fp32": False, "cast_model_type": mstype.float16, "loss_scale_manager": None},
}
_CONTAINERS = (nn.SequentialCell, nn.CellList)


def get_white_list() -> list:
    return list(AMP_WHITE_LIST)


def get_black_list() -> list:
    return list(AMP_BLACK_LIST)


class _OutputTo16(nn.Cell):
    """A black-listed cell kept in float32 inside a float16 network: its output goes back to float16."""

    def __init__(self, backbone: nn.Cell, dtype: mstype.Type = mstype.float16):
        super().__init__(auto_prefix=False)
        self._backbone, self.dtype = backbone, dtype

    def construct(self, *args: Any, **kwargs: Any) -> Any:
        return ops.cast(self._backbone(*args, **kwargs), self.dtype)


class _OutputTo32(nn.Cell):
    """The network of an O2/O3 ``auto_mixed_precision``: its float outputs come back as float32."""

    def __init__(self, backbone: nn.Cell):
        super().__init__(auto_prefix=False)
        self._backbone = backbone

    def construct(self, *args: Any, **kwargs: Any) -> Any:
        return ops.mixed_precision_cast(mstype.float32, self._backbone(*args, **kwargs))


class _AmpWithLossCell(nn.Cell):
    """build_train_network's loss wrapper for a float16 network: output and label cast to float32."""

    def __init__(self, backbone: nn.Cell, loss_fn: nn.Cell):
        super().__init__(auto_prefix=False)
        self._backbone, self._loss_fn = backbone, loss_fn

    def construct(self, data: Any, label: Any) -> Any:
        out = self._backbone(data)
        label = ops.mixed_precision_cast(mstype.float32, label)
        return self._loss_fn(ops.mixed_precision_cast(mstype.float32, out), label)


def _is_framework_cell(cell: nn.Cell) -> bool:
    """A cell class of the front end itself (rewrite does not look into these)."""
    return type(cell).__module__.startswith(nn.__name__)


def _replace_child(parent: nn.Cell, name: str, child: nn.Cell) -> None:
    """Put ``child`` where ``parent``'s sub-cell ``name`` was, without renaming any Parameter."""
    object.__setattr__(child, "_attr_name", name)
    parent._cells[name] = child
    object.__setattr__(parent, name, child)


def _keep_fp32(network: nn.Cell, black_list: list) -> nn.Cell:
    """Black-listed sub-cells run in float32 and hand float16 back (MindSpore's _do_keep_batchnorm_fp32)."""
    for name, child in list(network.name_cells().items()):
        if isinstance(child, tuple(black_list)):
            _replace_child(network, name, _OutputTo16(child.to_float(mstype.float32)))
        else:
            _keep_fp32(child, black_list)
    return network


def _white_list(cell: nn.Cell, white_list: list) -> None:
    """O1: mark ``cell`` (a user-defined cell) and what it calls."""
    white_cells = tuple(c for c in white_list if issubclass(c, nn.Cell))
    white_ops = frozenset(getattr(c, "op", "") or c.__name__ for c in white_list if issubclass(c, ops.Primitive))
    object.__setattr__(cell, "_amp", ops.AmpScope(white_ops=white_ops))
    for child in cell.name_cells().values():
        if child._amp is not None and child._amp.dtype == "float16":
            continue                                   # to_float(float16) by the user: left as it is
        if isinstance(child, white_cells):
            child.to_float(mstype.float16)
            object.__setattr__(child, "_amp", ops.AmpScope(dtype="float16", output="float32"))
        elif not _is_framework_cell(child):
            _white_list(child, white_list)
        else:
            _plain(child, white_list)


def _plain(cell: nn.Cell, white_list: list) -> None:
    """A framework cell under O1: its own ops stay as they are; a container's user cells are rewritten."""
    object.__setattr__(cell, "_amp", ops.AmpScope())
    if isinstance(cell, _CONTAINERS):
        for child in cell.name_cells().values():
            if not _is_framework_cell(child):
                _white_list(child, white_list)


def auto_mixed_precision(network: nn.Cell, amp_level: str = "O0", dtype: mstype.Type = mstype.float16) -> nn.Cell:
    """The network at ``amp_level`` (see the module docstring); O2/O3 return it wrapped so that its
    outputs are float32."""
    if not isinstance(network, nn.Cell):
        raise InvalidParamError(f"auto_mixed_precision: network must be a Cell, got {type(network).__name__}")
    if dtype != mstype.float16:
        raise InvalidParamError(f"auto_mixed_precision: dtype={dtype!r} is not supported; use mstype.float16")
    if amp_level not in LEVELS:
        raise InvalidParamError(f"auto_mixed_precision: amp_level={amp_level!r} is not supported; use one of {LEVELS}")
    if amp_level == "O0":
        return network
    if amp_level == "O1":
        if network._amp is None or network._amp.dtype != "float16":
            _white_list(network, AMP_WHITE_LIST)
    else:
        network.to_float(mstype.float16)
        if amp_level == "O2":
            _keep_fp32(network, AMP_BLACK_LIST)
        network = _OutputTo32(network)
    object.__setattr__(network, "_amp_level", amp_level)
    return network


def _check_level(level: Any, boost_level: Any) -> str:
    if level == "auto":
        return "O3"                                     # MindSpore's choice on Ascend
    if level not in LEVELS:
        raise InvalidParamError(f"build_train_network: level={level!r} must be one of {LEVELS} or 'auto'")
    if boost_level not in ("O0", "O1", "O2"):
        raise InvalidParamError(f"build_train_network: boost_level={boost_level!r} must be 'O0', 'O1' or 'O2'")
    return level


def _config(level: str, kwargs: dict) -> dict:
    for key in kwargs:
        if key not in ("cast_model_type", "keep_batchnorm_fp32", "loss_scale_manager"):
            raise InvalidParamError(f"build_train_network: unsupported argument {key!r}; it takes cast_model_type, "
                                    f"keep_batchnorm_fp32 and loss_scale_manager")
    config = dict(_CONFIG_LEVEL[level], **kwargs)
    if config["loss_scale_manager"] == "dynamic":
        config["loss_scale_manager"] = DynamicLossScaleManager()
    if config["cast_model_type"] not in (mstype.float16, mstype.float32):
        raise InvalidParamError(f"build_train_network: cast_model_type must be mstype.float16 or mstype.float32, "
                                f"got {config['cast_model_type']!r}")
    manager = config["loss_scale_manager"]
    if manager is not None and not isinstance(manager, LossScaleManager):
        raise InvalidParamError(f"build_train_network: loss_scale_manager must be a LossScaleManager, got "
                                f"{type(manager).__name__}")
    return config


def build_train_network(network: nn.Cell, optimizer: nn.Optimizer, loss_fn: nn.Cell | None = None,
                        level: str = "O0", boost_level: str = "O0", **kwargs: Any) -> nn.Cell:
    """The training step of ``network`` at ``level``: the network in the level's precision, the loss
    (computed in float32 for a float16 network), then TrainOneStepWithLossScaleCell when the loss scale
    manager has an update cell (O2's DynamicLossScaleManager by default), else TrainOneStepCell with
    sens = the manager's scale (1 without one)."""
    if not isinstance(optimizer, nn.Optimizer):
        raise InvalidParamError(f"build_train_network: optimizer must be an nn.Optimizer, got "
                                f"{type(optimizer).__name__}")
    level = _check_level(level, boost_level)
    config = _config(level, kwargs)
    if config["cast_model_type"] == mstype.float16:
        network.to_float(mstype.float16)
        if config["keep_batchnorm_fp32"]:
            _keep_fp32(network, AMP_BLACK_LIST)
    elif not config["keep_batchnorm_fp32"] and level == "O2":
        network.to_float(mstype.float16)
    elif level not in ("O2", "O3"):
        network = auto_mixed_precision(network, level)
    if loss_fn is not None:
        if not isinstance(loss_fn, nn.Cell):
            raise InvalidParamError(f"build_train_network: loss_fn must be a Cell, got {type(loss_fn).__name__}")
        network = (_AmpWithLossCell(network, loss_fn) if config["cast_model_type"] == mstype.float16
                   else nn.WithLossCell(network, loss_fn))
    manager = config["loss_scale_manager"]
    loss_scale = None
    if manager is not None:
        loss_scale = manager.get_loss_scale()
        update_cell = manager.get_update_cell()
        if update_cell is not None:
            return nn.TrainOneStepWithLossScaleCell(network, optimizer, scale_sense=update_cell).set_train()
    if context.get_auto_parallel_context("pipeline_stages") > 1:      # as MindSpore's (its loss scale unused)
        return _TrainGradAccuStepCell(network, optimizer).set_train()
    return nn.TrainOneStepCell(network, optimizer, loss_scale).set_train()


# ------------------------------------------------------------------------------------- loss scalers

class LossScaler:
    """Base of the functional loss scalers: ``scale`` the loss, ``unscale`` the gradients, ``adjust``
    the scale from ``all_finite(grads)``."""

    def scale(self, inputs: Any) -> Any:
        raise NotImplementedError

    def unscale(self, inputs: Any) -> Any:
        raise NotImplementedError

    def adjust(self, grads_finite: Tensor) -> Any:
        raise NotImplementedError


def _scalar_value(cls: str, value: Any) -> Parameter:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1.0:
        raise InvalidParamError(f"{cls}: scale_value={value!r} must be a number >= 1")
    return Parameter(Tensor(float(value), mstype.float32), name="scale_value", requires_grad=False)


def _map(fn: Any, inputs: Any) -> Any:
    return type(inputs)(fn(x) for x in inputs) if isinstance(inputs, (tuple, list)) else fn(inputs)


class _Scaled(LossScaler):
    """``scale(x) = x * s`` and ``unscale(g) = g * (1 / s)`` with the Parameter ``scale_value`` s."""

    scale_value: Parameter

    def scale(self, inputs: Any) -> Any:
        return _map(lambda x: x * ops.cast(self.scale_value, x.dtype), inputs)

    def unscale(self, inputs: Any) -> Any:
        return _map(lambda g: g * ops.cast(ops.reciprocal(self.scale_value), g.dtype), inputs)


class StaticLossScaler(_Scaled):
    """A fixed scale; ``adjust`` changes nothing."""

    def __init__(self, scale_value: float):
        self.scale_value = _scalar_value("StaticLossScaler", scale_value)

    def adjust(self, grads_finite: Tensor) -> bool:
        return False


class DynamicLossScaler(_Scaled):
    """A scale divided by ``scale_factor`` (never below 1) when the gradients are not finite, and
    multiplied by it (if that stays finite) after ``scale_window`` finite steps in a row, which
    ``counter`` counts; both are Parameters updated on the device."""

    def __init__(self, scale_value: float, scale_factor: int, scale_window: int):
        self.scale_value = _scalar_value("DynamicLossScaler", scale_value)
        for name, v in (("scale_factor", scale_factor), ("scale_window", scale_window)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidParamError(f"DynamicLossScaler: {name}={v!r} must be an int >= 1")
        self.scale_factor, self.scale_window = scale_factor, scale_window
        self.counter = Parameter(Tensor(0, mstype.int32), name="counter", requires_grad=False)

    def adjust(self, grads_finite: Tensor) -> bool:
        grown = self.scale_value * self.scale_factor
        at_window = ops.equal(self.counter, self.scale_window - 1)
        kept = ops.select(at_window, ops.select(ops.isfinite(grown), grown, self.scale_value), self.scale_value)
        shrunk = ops.maximum(self.scale_value / self.scale_factor, 1.0)
        ops.assign(self.scale_value, ops.select(grads_finite, kept, shrunk))
        counter = ops.select(at_window, 0, self.counter + 1) * ops.cast(grads_finite, mstype.int32)
        ops.assign(self.counter, counter)
        return True
