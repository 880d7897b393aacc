"""The front end's side of SEMI_AUTO_PARALLEL: the sharding pass (``ascendemu.graph.parallel``) attached
to a GRAPH_MODE capture, with what it needs from here: communicators of groups of ranks
(``communication.create_group``, named as MindSpore names them, ``<size>-<hash>``), and Parameters sliced
in place to this rank's share (an abstract weight stays abstract: its slice is computed on first read).
"""
from __future__ import annotations

import functools
import hashlib
from typing import Any

import numpy as np

from ascendemu.errors import RuntimeParamError
from ascendemu.graph.parallel.auto_strategy import AutoPass, RecordingPass
from ascendemu.graph.parallel.layout import Layout
from ascendemu.graph.parallel.optimizer_shard import OptShardConfig
from ascendemu.graph.parallel.pipeline import Pipeline
from ascendemu.graph.parallel.sharding import ShardingPass, strategy_scope
from ascendemu.graph.parallel.strategy import LayoutStrategy, ShardTypeError, check_strategy

from .. import context
from ..common.initializer import DeferredFill
from ..common.scoped_class import scoped_class
from ..communication import management
from ._layout import Layout as MsLayout
from ._layout import LayoutValueError
from ._utils import _get_device_num, _get_global_rank

__all__ = ["sharding_pass", "shard_primitive", "SlicedFill"]

# the parallel modes whose captures are sharded (AUTO_PARALLEL's: searched first, ``_auto_parallel``)
SHARDED_MODES = (context.ParallelMode.SEMI_AUTO_PARALLEL, context.ParallelMode.AUTO_PARALLEL)


class DeviceNumError(RuntimeParamError):
    """device_num differs from the number of ranks (MindSpore's parallel compiler raises RuntimeError)."""


class SlicedFill(DeferredFill):
    """An abstract weight's slice: the whole fill's values (same seeds on every rank), cut."""

    def __init__(self, whole: DeferredFill, index: tuple[slice, ...], shape: tuple[int, ...]):
        super().__init__(whole.init, shape, whole.dtype)
        self.whole, self.index, self.seeds = whole, index, whole.seeds

    def pin(self) -> "SlicedFill":
        self.whole.pin()
        self.seeds = self.whole.seeds
        return self

    def values(self) -> np.ndarray:
        return np.ascontiguousarray(self.whole.values()[self.index])


class _Host:
    """The pass's :class:`~ascendemu.graph.parallel.sharding.ShardingHost`."""

    def __init__(self, rank: int, device_num: int, first: int = 0):
        self.rank, self.device_num, self.first = rank, device_num, first     # first: the stage's first rank

    def group(self, ranks: tuple[int, ...]) -> str:
        ranks = tuple(self.first + r for r in ranks)        # the stage's ranks -> world ranks
        if ranks == tuple(range(management.get_group_size())):
            return management.HCCL_WORLD_COMM_GROUP
        digest = int(hashlib.sha256(",".join(map(str, ranks)).encode()).hexdigest()[:15], 16)
        name = f"{len(ranks)}-{digest}"
        management.create_group(name, list(ranks))
        return name

    def state_layout(self, source: Any) -> tuple[Layout, tuple[int, ...]] | None:
        return getattr(source, "_shard_layout", None)

    def param_plan(self, source: Any) -> Any:
        return getattr(source, "_param_plan", None)        # set by Cell.shard (_cell_shard)

    def slice_state(self, source: Any, layout: Layout, global_shape: tuple[int, ...]) -> None:
        source._shard_layout = (layout, tuple(global_shape))
        if layout.is_replicated:
            return
        index = layout.slices(self.rank, tuple(global_shape))
        if source.has_init:
            source._set_abstract(SlicedFill(source._fill, index, layout.local_shape(tuple(global_shape))))
        else:
            source._data = np.ascontiguousarray(source._data[index])


def sharding_pass(chosen: dict[int, Any] | None = None) -> ShardingPass | None:
    """The pass for a new capture: under SEMI_AUTO_PARALLEL or AUTO_PARALLEL on more than one device, else None. Under
    AUTO_PARALLEL, a ``RecordingPass`` (the capture to search on), then, given the ``chosen`` strategies,
    an ``AutoPass``."""
    mode = context.get_auto_parallel_context("parallel_mode")
    if mode not in SHARDED_MODES:
        return None
    n = _get_device_num()
    if n <= 1:
        return None
    world = management.get_group_size() if management.GlobalComm.INITED else 1
    if n != world:
        raise DeviceNumError(f"{mode.upper()}: device_num={n} but the job has {world} rank(s); call "
                             f"mindspore.communication.init() and launch {n} ranks (mpiexec -n {n}, msrun, or a "
                             f"DryRun with RANK_SIZE={n} RANK_ID=r)")
    rank = _get_global_rank()
    stages = context.get_auto_parallel_context("pipeline_stages")
    if n % stages:
        raise DeviceNumError(f"{mode.upper()}: device_num={n} is not a multiple of pipeline_stages={stages}; "
                             f"give a device_num that the stages divide")
    per_stage = n // stages        # the sharding pass shards each op over its stage's ranks
    kind = ShardingPass if mode != context.ParallelMode.AUTO_PARALLEL else \
        RecordingPass if chosen is None else functools.partial(AutoPass, chosen)
    sp = kind(_Host(rank % per_stage, per_stage, rank - rank % per_stage), rank % per_stage, per_stage,
                      context.get_auto_parallel_context("full_batch"),
                      context.get_auto_parallel_context("dataset_strategy"),
                      context.get_auto_parallel_context("enable_alltoall"), _opt_shard_config())
    if stages > 1:
        sp.pipeline = Pipeline(stages, rank // per_stage, per_stage, rank)
    return sp


def _opt_shard_config() -> OptShardConfig | None:
    """Optimizer parallel's settings (``enable_parallel_optimizer``, ``parallel_optimizer_config``), or None."""
    if not context.get_auto_parallel_context("enable_parallel_optimizer"):
        return None
    config = context.get_auto_parallel_context("parallel_optimizer_config")
    return OptShardConfig(config.get("parallel_optimizer_threshold", -1), config.get("optimizer_weight_shard_size", -1))


_SHARDED: dict[type, type] = {}


def _repr_sharded(self: Any) -> str:
    if "in_layout" in self.attrs:
        out = f", out_layout={self.attrs['out_layout']}" if "out_layout" in self.attrs else ""
        return f"Prim[{self.name}]<in_layout={self.attrs['in_layout']}{out}>"
    return f"Prim[{self.name}]<in_strategy={self.in_strategy}, out_strategy={self.out_strategy}>"


def _is_layout(strategy: Any, what: str) -> bool:
    """Whether ``strategy`` is given as Layouts (MindSpore's ``_check_shard_strategy``: decided by its first item;
    an item neither a tuple nor a Layout is a TypeError)."""
    if not isinstance(strategy, tuple):
        raise ShardTypeError(f"{what} must be tuple type, but got:{type(strategy)}")
    for item in strategy:
        if not isinstance(item, (tuple, MsLayout)):
            raise ShardTypeError(f"The element of strategy must be tuple/Layout type, but got:{type(item)}")
    return bool(strategy) and isinstance(strategy[0], MsLayout)


def _layouts(prim: Any, strategy: Any, what: str, attr: str) -> LayoutStrategy:
    """A strategy of Layouts as the sharding pass takes it; the prim attribute ``attr`` as MindSpore sets it."""
    for item in strategy:
        if not isinstance(item, MsLayout):
            raise ShardTypeError(f"The {what} item should be a object of class Layout.")
    prim.add_prim_attr(attr, tuple({k: v for k, v in lay.to_dict().items() if k != "rank_list"} for lay in strategy))
    return LayoutStrategy(lay.tensor_layout() for lay in strategy)


def shard_primitive(prim: Any, in_strategy: Any, out_strategy: Any) -> Any:
    """``Primitive.shard``: record the strategies (tuples of split counts, or ``ms.Layout``s; checked as MindSpore
    checks them) and return the primitive; they act only in SEMI_AUTO_PARALLEL GRAPH_MODE captures, as in
    MindSpore. ``out_strategy`` needs an in_strategy of the same kind; which ops take it is the rules' (MatMul)."""
    if in_strategy is None and out_strategy is None:
        return prim
    in_layout = None if in_strategy is None else _is_layout(in_strategy, "in_strategy")
    out_layout = None if out_strategy is None else _is_layout(out_strategy, "out_strategy")
    if in_layout is not None and out_layout is not None and in_layout != out_layout:
        raise LayoutValueError("The in_strategy type must equal to the out_strategy type, one using tuple(tuple) and "
                               "the other using tuple(Layout) is not allowed.")
    if in_strategy is None:
        raise LayoutValueError(f"The out_strategy of {prim.name} is {out_strategy}, need to set in_strategy, but got "
                               f"none")
    if in_layout:
        strategy = _layouts(prim, in_strategy, "in_strategy", "in_layout")
        out = None if out_strategy is None else _layouts(prim, out_strategy, "out_strategy", "out_layout")
    else:
        strategy = check_strategy(in_strategy, "in_strategy", prim.name)
        out = None if out_strategy is None else check_strategy(out_strategy, "out_strategy", prim.name)
        prim.add_prim_attr("in_strategy", strategy)
        if out is not None:
            prim.add_prim_attr("out_strategy", out)
    prim.in_strategy, prim.out_strategy = strategy, out
    if type(prim) not in _SHARDED.values():
        prim.__class__ = scoped_class(type(prim), _SHARDED, lambda p: strategy_scope(getattr(p, "op", "") or p.name,
                                                                                     p.in_strategy, p.out_strategy),
                                      __repr__=_repr_sharded)
    return prim
