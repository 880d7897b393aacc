"""The front end's side of SEMI_AUTO_PARALLEL: the sharding pass (``ascendemu.graph.parallel``) attached
to a GRAPH_MODE capture, with what it needs from here: communicators of groups of ranks
(``communication.create_group``, named as MindSpore names them, ``<size>-<hash>``), and Parameters sliced
in place to this rank's share (an abstract weight stays abstract: its slice is computed on first read).
"""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.graph.parallel.layout import Layout
from ascendemu.graph.parallel.optimizer_shard import OptShardConfig
from ascendemu.graph.parallel.pipeline import Pipeline
from ascendemu.graph.parallel.sharding import ShardingPass, strategy_scope
from ascendemu.graph.parallel.strategy import check_strategy

from .. import context
from ..common.initializer import DeferredFill
from ..common.scoped_class import scoped_class
from ..communication import management
from ._utils import _get_device_num, _get_global_rank

__all__ = ["sharding_pass", "shard_primitive", "SlicedFill"]

# the parallel modes whose captures are sharded (AUTO_PARALLEL's strategy search is not built yet)
SHARDED_MODES = (context.ParallelMode.SEMI_AUTO_PARALLEL,)


class DeviceNumError(InvalidParamError, RuntimeError):
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

    def slice_state(self, source: Any, layout: Layout, global_shape: tuple[int, ...]) -> None:
        source._shard_layout = (layout, tuple(global_shape))
        if layout.is_replicated:
            return
        index = layout.slices(self.rank, tuple(global_shape))
        if source.has_init:
            source._set_abstract(SlicedFill(source._fill, index, layout.local_shape(tuple(global_shape))))
        else:
            source._data = np.ascontiguousarray(source._data[index])


def sharding_pass() -> ShardingPass | None:
    """The pass for a new capture: under SEMI_AUTO_PARALLEL on more than one device, else None."""
    if context.get_auto_parallel_context("parallel_mode") not in SHARDED_MODES:
        return None
    n = _get_device_num()
    if n <= 1:
        return None
    world = management.get_group_size() if management.GlobalComm.INITED else 1
    if n != world:
        raise DeviceNumError(f"SEMI_AUTO_PARALLEL: device_num={n} but the job has {world} rank(s); call "
                             f"mindspore.communication.init() and launch {n} ranks (mpiexec -n {n}, msrun, or a "
                             f"DryRun with RANK_SIZE={n} RANK_ID=r)")
    rank = _get_global_rank()
    stages = context.get_auto_parallel_context("pipeline_stages")
    if n % stages:
        raise DeviceNumError(f"SEMI_AUTO_PARALLEL: device_num={n} is not a multiple of pipeline_stages={stages}; "
                             f"give a device_num that the stages divide")
    per_stage = n // stages        # the sharding pass shards each op over its stage's ranks
    sp = ShardingPass(_Host(rank % per_stage, per_stage, rank - rank % per_stage), rank % per_stage, per_stage,
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
    return f"Prim[{self.name}]<in_strategy={self.in_strategy}, out_strategy=None>"


def shard_primitive(prim: Any, in_strategy: Any, out_strategy: Any) -> Any:
    """``Primitive.shard``: record the strategy (checked as MindSpore checks it) and return the primitive;
    it acts only in SEMI_AUTO_PARALLEL GRAPH_MODE captures, as in MindSpore."""
    if in_strategy is None and out_strategy is None:
        return prim
    if out_strategy is not None:
        check_strategy(out_strategy, "out_strategy", prim.name)
        raise FeatureNotSupportedError(f"For {prim.name}, shard(out_strategy=...) is not supported by the emulator's "
                                       f"sharding pass yet; give in_strategy only (the output layout follows from it)")
    strategy = check_strategy(in_strategy, "in_strategy", prim.name)
    prim.in_strategy = strategy
    prim.add_prim_attr("in_strategy", strategy)
    if type(prim) not in _SHARDED.values():
        prim.__class__ = scoped_class(type(prim), _SHARDED, lambda p: strategy_scope(getattr(p, "op", "") or p.name,
                                                                                     p.in_strategy),
                                      __repr__=_repr_sharded)
    return prim
