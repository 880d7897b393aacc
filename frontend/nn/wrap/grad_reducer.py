"""``mindspore.nn.DistributedGradReducer`` (``mindspore.nn.wrap.grad_reducer``): data parallel's gradient
reduction. Every rank computed gradients on its own shard of the global batch; the reducer sums each
gradient over the ranks of ``group`` (AllReduce, in float32), multiplies by 1/``degree`` when ``mean``,
and casts back, so every rank applies the same update.

Fusion: MindSpore tags each gradient's AllReduce with a fusion id and its backend fuses the AllReduces
of one id into one collective. Here the fusion happens where the ids are assigned: the gradients of one
bucket are flattened, concatenated, all-reduced once and split back (then each multiplied by 1/``degree``,
a Mul per gradient as MindSpore's); the graph compiler turns the Concat and the split into views of one
contiguous block, as MindSpore's fused AllReduce reads and writes (``graph.passes.contiguous_buckets``). The ids follow MindSpore's rules:
parameters whose ``comm_fusion`` differ are fused by that attribute; otherwise
``all_reduce_fusion_config`` (or ``comm_fusion``'s ``index`` mode) splits the parameters into groups at
its indices (MindSpore's quirk kept: index i ends a group *after* parameter i); otherwise, when
``comm_fusion`` was set, every gradient shares ``fusion_type`` and buckets are cut by size (its ``size``
threshold in MB, default 64 MB, MindSpore's ``auto`` mode), walking from the last parameter, whose gradient
the backward pass produces first. Neither set (MindSpore's default), or ``comm_fusion={"openstate": False}``:
one AllReduce per gradient, as MindSpore 2.10's DryRun runs it. In GRAPH_MODE
each bucket's AllReduce is a node on the communication stream, so it overlaps the backward of the
layers in front of it (``graph.passes.order`` defers what reads a collective's output).
"""
from __future__ import annotations

from typing import Any, Sequence

from ... import context, ops
from ...ops.operations.comm_ops import AllReduce, ReduceOp
from ...common import dtype as mstype
from ...communication.management import CommTypeError, CommValueError, GlobalComm, get_group_size
from ...ops import AllGather  # noqa: F401  (MindSpore's nn.wrap.grad_reducer has it)
from ...parallel._utils import _get_gradients_mean
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell
from ..layer.basic import Identity  # noqa: F401  (MindSpore's nn.wrap.grad_reducer has it)

__all__ = ["DistributedGradReducer", "PipelineGradReducer"]

AUTO_FUSION_MB = 64          # MindSpore's comm_fusion "auto" threshold
INDEX_FUSION_BASE = 2 ** 10  # the first fusion id of all_reduce_fusion_config's groups


def _fusion_ids(parameters: Sequence[Parameter], split_indices: list[int], fusion_type: int) -> list[int] | None:
    """MindSpore's fusion id of each gradient's AllReduce, or None when they all share ``fusion_type``
    (then the size rule cuts the buckets)."""
    ids = [getattr(p, "comm_fusion", 1) for p in parameters]
    if len(set(ids)) > 1:
        return ids
    if split_indices and fusion_type == 1:
        out, fusion, split = [], INDEX_FUSION_BASE, 0
        for i in range(len(parameters)):
            out.append(fusion)
            if split < len(split_indices) and split_indices[split] <= i:
                fusion, split = fusion + 1, split + 1
        return out
    return None


def _by_size(sizes: list[int], limit: int) -> list[list[int]]:
    """Buckets of at most ``limit`` bytes (a bigger gradient alone), from the last index to the first."""
    buckets: list[list[int]] = []
    room = 0
    for i in reversed(range(len(sizes))):
        if not buckets or sizes[i] > room:
            buckets.append([])
            room = limit
        buckets[-1].insert(0, i)
        room -= sizes[i]
    return buckets


def _fusion_config() -> tuple[bool, str, Any]:
    """(fusion on, mode, config) of AllReduce from the auto-parallel context."""
    fusion = context.get_auto_parallel_context("comm_fusion")
    allreduce = fusion.get("allreduce", {})
    return bool(fusion.get("openstate", True)), allreduce.get("mode", "auto"), allreduce.get("config")


def buckets(parameters: Sequence[Parameter], fusion_type: int = 1) -> list[list[int]]:
    """The parameter indices of each fused AllReduce, in the order the backward pass completes them."""
    reduced = [i for i, p in enumerate(parameters) if not getattr(p, "layerwise_parallel", False)]
    on, mode, config = _fusion_config()
    split = config if mode == "index" else context.get_auto_parallel_context("all_reduce_fusion_config")
    ids = _fusion_ids(parameters, list(split or []), fusion_type)
    # MindSpore 2.10 fuses only when asked (its enable_all_reduce_fusion starts False: comm_fusion or
    # all_reduce_fusion_config turn it on): its DryRun of a DATA_PARALLEL MLP without either runs one AllReduce
    # per gradient (tests/fixtures/msdryrun/data_parallel_dryrun.json)
    asked = bool(context.get_auto_parallel_context("comm_fusion")) or bool(split) or ids is not None
    if not on or not asked:
        return [[i] for i in reversed(reduced)]
    if ids is not None:
        groups: dict[int, list[int]] = {}
        for i in reduced:
            groups.setdefault(ids[i], []).append(i)
        return sorted(groups.values(), key=lambda g: -g[-1])
    limit = (config if mode == "size" and config else AUTO_FUSION_MB) * 1024 * 1024
    sizes = [4 * _numel(parameters[i]) for i in reduced]             # float32 bytes
    return [[reduced[j] for j in b] for b in _by_size(sizes, limit)]


def _numel(p: Parameter) -> int:
    n = 1
    for d in p.shape:
        n *= d
    return n


class DistributedGradReducer(Cell):
    """Sum (and with ``mean`` average over ``degree``) each gradient over the ranks of ``group``.

    ``mean`` None: the context's ``gradients_mean``; ``degree`` None: the group's size. Parameters
    with ``layerwise_parallel=True`` keep their local gradient. Returns the gradients as a tuple.
    """

    def __init__(self, parameters: Sequence[Parameter], mean: bool | None = None, degree: int | None = None,
                 fusion_type: int = 1, group: str = GlobalComm.WORLD_COMM_GROUP) -> None:
        super().__init__(auto_prefix=False)
        self.parameters = list(parameters)
        self.mean = _get_gradients_mean() if mean is None else mean
        if not isinstance(self.mean, bool):
            raise CommTypeError(f"For 'DistributedGradReducer', the 'mean' must be a bool, but got {mean!r}.")
        self.degree = get_group_size(group) if degree is None else degree
        if isinstance(self.degree, bool) or not isinstance(self.degree, int) or self.degree <= 0:
            raise CommValueError(f"For 'DistributedGradReducer', parameter 'degree' in DistributedGradReducer "
                                 f"should large than 0 and be int, degree: {degree}.")
        self.group = group
        self.allreduce = AllReduce(ReduceOp.SUM, group)
        self.buckets = buckets(self.parameters, fusion_type)

    def construct(self, grads: Sequence[Any]) -> tuple[Tensor, ...]:
        grads = tuple(grads)
        if len(grads) != len(self.parameters):
            raise CommValueError(f"For 'DistributedGradReducer', got {len(grads)} gradient(s) for "
                                 f"{len(self.parameters)} parameter(s); pass the gradients of the parameters "
                                 f"the reducer was built with, in their order")
        out = list(grads)
        scale = Tensor(1.0 / self.degree, mstype.float32) if self.mean else None
        for bucket in self.buckets:
            flat = [ops.cast(ops.reshape(grads[i], (-1,)), mstype.float32) for i in bucket]
            summed = self.allreduce(flat[0] if len(flat) == 1 else ops.concat(flat))
            parts = (summed,) if len(bucket) == 1 else ops.split(summed, [int(f.shape[0]) for f in flat])
            for i, part in zip(bucket, parts):
                if scale is not None:
                    part = part * scale      # a Mul per gradient, as MindSpore's (its DryRun's execute order)
                out[i] = ops.cast(ops.reshape(part, grads[i].shape), grads[i].dtype)
        return tuple(out)


class PipelineGradReducer(Cell):
    """MindSpore's PipelineGradReducer for ``value_and_grad`` over a PipelineCell: the gradients divided
    by ``scale_sense`` (MindSpore multiplies them by its reciprocal: the loss scale undone). The
    micro-batches' gradients are already accumulated, and mirrored over the data-parallel replicas, by
    the capture's backward (``graph.parallel.pipeline``), where MindSpore keeps them in ``accu_grads``
    Parameters until this cell reads them."""

    def __init__(self, parameters: Sequence[Parameter], scale_sense: float = 1.0, opt_shard: bool | None = None):
        super().__init__(auto_prefix=False)
        self.scale_sense = float(scale_sense)

    def construct(self, grads: Any) -> Any:
        if self.scale_sense == 1.0:
            return grads
        # MindSpore's grad_scale/shard_grad_scale: the gradients times reciprocal(scale_sense)
        return tuple(ops.mul(g, 1.0 / self.scale_sense) for g in grads)
