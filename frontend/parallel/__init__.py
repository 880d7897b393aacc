"""``mindspore.parallel``: ``Layout`` and the parameters of the auto-parallel strategy search
(``set_algo_parameters``).

MindSpore reads the algo parameters only in AUTO_PARALLEL mode, to search how to shard each op over devices;
here they are checked as MindSpore checks them (a wrong type is a TypeError, an unknown key or an out-of-range
align size a ValueError, an epsilon outside (0, 1] a RuntimeError), recorded, and read back by
``get_algo_parameters``. SEMI_AUTO_PARALLEL's sharding (``Primitive.shard`` with tuples or ``Layout``s, and
MatMul's ``out_strategy``) is ``_sharding`` over ``ascendemu.graph.parallel``; ``Layout`` is ``_layout``
(also ``mindspore.Layout``); AUTO_PARALLEL's search (``search_mode``), its strategy checkpoint and
``Cell.shard`` are ``_auto_parallel``. Checkpoint transforms are outside the subset. ``_utils`` and
``_auto_parallel_context`` hold the private helpers the model zoo's training cells import to find out
whether they run data parallel.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidTypeError, InvalidValueError, RuntimeParamError

from ..unsupported import unsupported
from ._layout import Layout

__all__ = ["Layout", "set_algo_parameters", "get_algo_parameters", "reset_algo_parameters"]

class AlgoParameterTypeError(InvalidTypeError):
    """An algo parameter of the wrong type (MindSpore raises TypeError)."""


class AlgoParameterValueError(InvalidValueError):
    """An unknown algo parameter or an align size out of its range (MindSpore raises ValueError)."""


class AlgoEpsilonError(RuntimeParamError):
    """algo_approxi_epsilon outside (0, 1] (MindSpore's cost model context raises RuntimeError)."""


# name -> (type, default) as MindSpore 2.x declares them; algo_approxi_epsilon is held as a float32
_DEFAULTS: dict[str, tuple[type, Any]] = {
    "fully_use_devices": (bool, False),
    "elementwise_op_strategy_follow": (bool, False),
    "enable_algo_approxi": (bool, False),
    "algo_approxi_epsilon": (float, 0.1),
    "tensor_slice_align_enable": (bool, False),
    "tensor_slice_align_size": (int, 16),
}
_values: dict[str, Any] = {}


def _stored(key: str, value: Any) -> Any:
    kind, _ = _DEFAULTS[key]
    if key == "algo_approxi_epsilon":
        return float(np.float32(value))
    return value if kind is not int else int(value)


def reset_algo_parameters() -> None:
    """Every algo parameter back to its default."""
    _values.clear()
    _values.update({key: _stored(key, default) for key, (_, default) in _DEFAULTS.items()})


def set_algo_parameters(**kwargs: Any) -> None:
    """Record algo parameters (all checked before any is applied, so a bad call changes nothing)."""
    updates = {}
    for key, value in kwargs.items():
        if key not in _DEFAULTS:
            raise AlgoParameterValueError(f"set_algo_parameters: keyword {key!r} is not recognized; the algo "
                                          f"parameters are {', '.join(_DEFAULTS)}")
        kind, _ = _DEFAULTS[key]
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise AlgoParameterTypeError(f"set_algo_parameters: the parameter {key!r} must be {kind.__name__}, "
                                         f"but got {type(value).__name__}")
        if key == "tensor_slice_align_size" and not 1 <= value <= 1024:
            raise AlgoParameterValueError(f"set_algo_parameters: tensor_slice_align_size must be in [1, 1024], "
                                          f"but got {value}")
        if key == "algo_approxi_epsilon" and not 0.0 < value <= 1.0:
            raise AlgoEpsilonError(f"set_algo_parameters: algo_approxi_epsilon must be in (0, 1], but got {value}")
        updates[key] = _stored(key, value)
    _values.update(updates)


def get_algo_parameters(attr_key: str) -> Any:
    if attr_key not in _DEFAULTS:
        raise AlgoParameterValueError(f"get_algo_parameters: keyword {attr_key!r} is not recognized; the algo "
                                      f"parameters are {', '.join(_DEFAULTS)}")
    return _values[attr_key]


reset_algo_parameters()


def __getattr__(name: str) -> Any:
    raise unsupported("parallel", name, __all__,
                      hint="of the sharding APIs, Primitive.shard (tuples or Layouts) under SEMI_AUTO_PARALLEL is "
                           "supported; "
                           "data parallel is supported")
