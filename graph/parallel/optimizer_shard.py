"""Optimizer parallel (MindSpore's ``enable_parallel_optimizer``): a Parameter whose slice is repeated over
k ranks is split further along its first dimension over those ranks, so each holds 1/k of the weight and,
through the update rules that give states their Parameter's layout, 1/k of its optimizer states.

The forward AllGathers the slice back before its first use (after a Cast of it: the gather moves the
compute dtype, as MindSpore inserts it after the Cast), once per value. Autodiff differentiates that
AllGather as a ReduceScatter, which replaces the mirror AllReduce of the gradient over those ranks; the
update runs on the rank's piece only. With ``optimizer_weight_shard_size`` s < k the pieces are spread over
groups of s consecutive ranks of the k, and the rest of the mirror (an AllReduce over the k/s groups) stays.
Which piece a rank holds is MindSpore's: its position in the group, within the slice it held before.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ascendemu.kernels.registry import REGISTRY
from ascendemu.kernels.signature import TensorDesc

from .layout import Layout
from .redistribution import _all_gather
from .rules import FollowRule, ParameterUpdateRule, rule_for

__all__ = ["OptShardConfig", "OptShardLayout", "OptimizerShard", "DEFAULT_THRESHOLD_KB", "SHARD_GATHER_SCOPE"]

# MindSpore's parallel_optimizer_threshold when it is left at -1: Parameters smaller than 64 KB stay whole
DEFAULT_THRESHOLD_KB = 64


@dataclass(frozen=True)
class OptShardConfig:
    """``parallel_optimizer_config`` as the pass uses it (-1: MindSpore's defaults)."""
    threshold_kb: int = -1          # parallel_optimizer_threshold
    shard_size: int = -1            # optimizer_weight_shard_size: the group's size, -1 all the repeated ranks


@dataclass(frozen=True)
class OptShardLayout(Layout):
    """A layout whose dimension 0 is further split over ``opt_axes`` (device-matrix axes the base layout
    repeats over), inside the base layout's own split of it: a rank's piece is its row-major position along
    ``opt_axes``, which is its position in the (rank-ordered) group of those axes."""
    opt_axes: tuple[int, ...] = ()

    @property
    def group_size(self) -> int:
        return math.prod(self.dev_matrix[a] for a in self.opt_axes)

    @property
    def base(self) -> Layout:
        """The layout the pieces make up (what a forward use of the value sees)."""
        return Layout(self.dev_matrix, self.tensor_map)

    def shards(self, dim: int) -> int:
        return super().shards(dim) * (self.group_size if dim == 0 else 1)

    def shard_stride(self, dim: int) -> int | None:
        return None if dim == 0 and self.opt_axes else super().shard_stride(dim)

    def index(self, rank: int, dim: int) -> int:
        outer = super().index(rank, dim)
        if dim != 0:
            return outer
        coord, inner = self.coord(rank), 0
        for a in self.opt_axes:
            inner = inner * self.dev_matrix[a] + coord[a]
        return outer * self.group_size + inner

    @property
    def replica_axes(self) -> tuple[int, ...]:
        return tuple(a for a in super().replica_axes if a not in self.opt_axes)


def _split_axis(layout: Layout, axis: int, inner: int) -> Layout:
    """``layout`` with device-matrix axis ``axis`` of size n cut into (n / inner, inner): the same ranks in the
    same places (row-major), so the inner part can carry a split of its own."""
    dev = (*layout.dev_matrix[:axis], layout.dev_matrix[axis] // inner, inner, *layout.dev_matrix[axis + 1:])
    def moved(a: int) -> int:
        return a + 1 if a > axis else a
    tmap = tuple(tuple(moved(a) for a in e) if isinstance(e, tuple) else moved(e) for e in layout.tensor_map)
    return Layout(dev, tmap)


def _shard_axes(layout: Layout, size: int) -> tuple[Layout, tuple[int, ...]] | None:
    """The device matrix and the innermost repeat axes whose ranks make groups of ``size`` consecutive
    repeated ranks (MindSpore's optimizer shard groups), or None when ``size`` does not factor so."""
    chosen: list[int] = []
    left = size
    for axis in reversed(layout.replica_axes):
        if left == 1:
            break
        n = layout.dev_matrix[axis]
        if left % n == 0:
            chosen.append(axis)
            left //= n
        elif n % left == 0:
            layout = _split_axis(layout, axis, left)
            chosen = [a + 1 for a in chosen] + [axis + 1]
            left = 1
        else:
            return None
    return (layout, tuple(sorted(chosen))) if left == 1 else None


# the scope of a sharded value's AllGather; its backward, the ReduceScatter of the weight's gradient, replaces the
# mirror AllReduce, and MindSpore's runtime holds its input as the mirror's (``plan.mirror_inputs``)
SHARD_GATHER_SCOPE = "_OptimizerShard"


class OptimizerShard:
    """One capture's optimizer parallel: which Parameters it shards, and the AllGather of each sharded value
    before a use that needs it whole (one per value)."""

    def __init__(self, config: OptShardConfig):
        self.config = config
        self._gathered: dict[int, int] = {}
        self.forward_over = False       # set by the backward: what is placed later (optimizer states) is not split

    def storage(self, source: Any, want: Layout, whole: TensorDesc) -> Layout:
        """The layout Parameter ``source`` is stored in when its first consumer wants ``want``: ``want`` split
        further on dim 0 over its repeated ranks when the Parameter takes part (``parallel_optimizer``, trainable),
        its slice is at least the threshold and its first dimension divides; else ``want`` itself (always, after the
        backward: an optimizer state takes its Parameter's layout from the update that places it)."""
        if self.forward_over or isinstance(want, OptShardLayout) or not getattr(source, "parallel_optimizer", True) or \
                not getattr(source, "requires_grad", True) or not whole.shape or want.replicas == 1:
            return want
        local = want.local_shape(whole.shape)
        threshold = DEFAULT_THRESHOLD_KB if self.config.threshold_kb < 0 else self.config.threshold_kb
        if TensorDesc(local, whole.dtype).nbytes < threshold * 1024:
            return want
        size = want.replicas if self.config.shard_size < 0 else min(self.config.shard_size, want.replicas)
        split = _shard_axes(want, size) if size > 1 else None
        if split is None or local[0] % size:
            return want
        layout, axes = split
        return OptShardLayout(layout.dev_matrix, layout.tensor_map, axes)

    def gather(self, sp: Any, vid: int, layout: OptShardLayout) -> int:
        """``vid``'s pieces gathered into its base layout's slice (AllGather along dim 0 over the group) by the
        sharding pass ``sp``, which places the result."""
        out = self._gathered.get(vid)
        if out is None:
            group = layout.group(sp.rank, layout.opt_axes)
            saved = sp.tracer.scopes
            sp.tracer.scopes = [*saved, SHARD_GATHER_SCOPE]
            try:
                out = self._gathered[vid] = _all_gather(sp, vid, 0, group)
            finally:
                sp.tracer.scopes = saved
            sp._place(out, layout.base, sp.global_shape(vid))
        return out

    def whole_inputs(self, sp: Any, op: str, inputs: list[int], current: list[Layout | None]
                     ) -> tuple[list[int], list[Layout | None]]:
        """The inputs of ``op`` with each sharded value gathered first, unless ``op`` runs on the pieces: an
        update (the optimizer's), a Cast (the gather follows it) or an elementwise op (its rule moves its inputs
        to the layout it picks, through :meth:`gather` when that is not the pieces')."""
        rule = rule_for(op)
        if isinstance(rule, (ParameterUpdateRule, FollowRule)) or \
                (REGISTRY.get(op) is not None and REGISTRY[op].elementwise is not None):
            return inputs, current
        ins, cur = list(inputs), list(current)
        for i, lay in enumerate(current):
            if isinstance(lay, OptShardLayout):
                ins[i], cur[i] = self.gather(sp, inputs[i], lay), lay.base
        return ins, cur

