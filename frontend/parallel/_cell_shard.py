"""``Cell.shard``: the layouts of a cell's inputs in a sharded GRAPH_MODE capture (SEMI_AUTO_PARALLEL, or
AUTO_PARALLEL's sharding propagation, which spreads them to the rest of the graph). Its own module because it
applies them as ops (``ops.primitive``), which import the capture, which imports the search
(``_auto_parallel``): kept apart, the imports point one way."""
from __future__ import annotations

import logging
from typing import Any

from ascendemu.errors import InvalidTypeError, InvalidValueError
from ascendemu.graph.parallel.sharding import strategy_scope

from ..common.tensor import Tensor
from ..communication import management
from ..ops.primitive import apply_op
from ._layout import Layout

__all__ = ["shard_cell", "shard_cell_inputs"]

logger = logging.getLogger(__name__)


class CellShardTypeError(InvalidTypeError):
    """``Cell.shard`` given a strategy of the wrong type (MindSpore's ``Shard`` raises TypeError)."""


class CellShardValueError(InvalidValueError):
    """A ``parameter_plan`` strategy that does not fit its Parameter's shape (MindSpore raises ValueError)."""


def shard_cell(cell: Any, in_strategy: Any, out_strategy: Any = None, parameter_plan: Any = None) -> None:
    """``Cell.shard``, checked as MindSpore 2.10's ``Shard`` checks it: the layouts of the cell's inputs
    (applied as it is called in a sharded capture, :func:`shard_cell_inputs`); out_strategy is accepted and
    unused, as MindSpore warns; parameter_plan fixes the layouts of the named Parameters
    (:func:`_set_parameter_plan`). On one rank it does nothing, unchecked, as MindSpore's."""
    if not management.GlobalComm.INITED or management.get_group_size() == 1:
        return
    if not isinstance(in_strategy, tuple):
        raise CellShardTypeError(f"For 'Shard', the 'in_strategy' should be a tuple, but got "
                                 f"{type(in_strategy).__name__}.")
    for item in in_strategy:
        if not isinstance(item, tuple):
            raise CellShardTypeError(f"The 'in_strategy' should be a tuple(tuple(int)) or "
                                     f"tuple(mindspore.parallel.Layout), but got {type(item).__name__}")
        if not all(isinstance(x, int) for x in item):
            raise CellShardTypeError("The tuple strategy for each dimension should be tuple(int).")
    if not isinstance(out_strategy, (type(None), tuple)):
        raise CellShardTypeError(f"For 'Shard', the 'out_strategy' should be None or tuple, but got "
                                 f"{type(out_strategy).__name__}.")
    if out_strategy is not None:
        logger.warning("Out_strategy is not in use currently, will be ignored in the following procedures.")
    if parameter_plan is not None:
        _set_parameter_plan(cell, parameter_plan)
    object.__setattr__(cell, "_in_strategy", in_strategy)


def _set_parameter_plan(cell: Any, parameter_plan: Any) -> None:
    """Give each named trainable Parameter of ``cell`` its layout (``"self."`` dropped from the name, as
    MindSpore's ``_search_parameter_by_name``): a split per dim, or an ``ms.Layout``; the sharding pass slices
    the Parameter to it and its readers take it from there (``ShardingPass.planned_layout``). As MindSpore 2.10:
    an unknown name or an already planned Parameter is a warning and ignored, a wrong type a TypeError, a split
    that does not fit the shape a ValueError."""
    if not isinstance(parameter_plan, dict):
        raise CellShardTypeError(f"For 'Shard', the 'parameter_plan' should be a dict or None, but got "
                                 f"{type(parameter_plan).__name__}")
    for key, value in parameter_plan.items():
        if not isinstance(key, str) or not isinstance(value, (tuple, Layout)):
            raise CellShardTypeError("For 'Shard', the type of each key and value in 'parameter_plan' must be str "
                                     f"and tuple/Layout, but got {type(key).__name__} and {type(value).__name__}")
    params = {p.name: p for p in cell.trainable_params()}
    for key, value in parameter_plan.items():
        param = params.get(key.replace("self.", ""))
        if param is None:
            logger.warning(f"{key} is not exist, ignored its setting.")
            continue
        planned = getattr(param, "_param_plan", None)
        if planned is not None:
            logger.warning(f"The layout of parameter '{key}' has been set to {list(planned)}, current setting will "
                           "be ignored." if isinstance(planned, tuple) else
                           f"The layout of parameter '{key}' has been set, current setting will be ignored.")
            continue
        if isinstance(value, Layout):
            param._param_plan = value.tensor_layout()
            continue
        shape = tuple(param.shape)
        if len(value) != len(shape):
            raise CellShardValueError(f"For {key}, the length of param_strategy: {len(value)}, is not equal to "
                                      f"param_shape len: {len(shape)}.")
        for i, (size, split) in enumerate(zip(shape, value)):
            if size % split:
                raise CellShardValueError(f"For '{key}', the param_shape is {shape} and the setting param_strategy "
                                          f"is {value}. The param_shape[{i}]: {size} cannot be divisible by "
                                          f"param_strategy[{i}]: {split}.")
        param._param_plan = tuple(value)


def shard_cell_inputs(cell: Any, args: tuple, tracer: Any) -> tuple:
    """The cell's Tensor inputs moved to its ``Cell.shard`` layouts in a sharded capture: each passes a Cast to
    its own dtype carrying the strategy (so the sharding pass moves the input and the search propagates from
    it); other arguments, cells without ``shard`` and unsharded captures are as they are."""
    strategy = cell.__dict__.get("_in_strategy")
    if strategy is None or getattr(tracer, "sharding", None) is None:
        return args
    out = list(args)
    for i, (arg, dims) in enumerate(zip(args, strategy)):
        if isinstance(arg, Tensor) and dims is not None:
            with strategy_scope("Cast", (dims,)):
                out[i] = apply_op("Cast", [arg], {"dst_type": arg.dtype.name})[0]
    return tuple(out)
