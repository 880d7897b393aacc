"""Moving a value between two layouts of the same global tensor: the collectives and slices a rank runs.

Each dimension split differently in the two layouts is cut locally when each rank's new shard lies in
its old one (Slice: no communication), gathered over the sub-group that holds the pieces of its new
shard when the new split is coarser, else gathered whole (AllGather over the ranks holding its other
shards; it concatenates along dimension 0, so for another dimension AllGather, Split, Concat, as
MindSpore does) and then cut locally where the target splits it. With ``enable_alltoall``, a split
moved from a dimension to dimension 0 over the same ranks is one AlltoAll (MindSpore's AlltoAll +
Reshape + Transpose + Reshape). Autodiff differentiates what is emitted
here like any op (AllGather's backward is ReduceScatter, Slice's a zero pad), so the backward's
redistribution is the adjoint of the forward's. Partial sums are combined by :func:`all_reduce`.
"""
from __future__ import annotations

from typing import Any, Protocol

from .layout import Layout

__all__ = ["Emitter", "move", "all_reduce", "reduce_scatter", "refinement"]


class Emitter(Protocol):
    """Where redistribution and the rules emit local ops: the capture being built, and the communicators
    of groups of ranks (the sharding pass)."""

    rank: int
    alltoall: bool            # MindSpore's enable_alltoall: re-split one dim as dim 0 with AlltoAll

    def record(self, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]: ...

    def shape(self, vid: int) -> tuple[int, ...]: ...

    def dtype(self, vid: int) -> str: ...

    def literal(self, value: float, dtype: str) -> int:
        """A scalar constant of ``dtype``."""

    def group(self, ranks: tuple[int, ...]) -> str: ...


def all_reduce(emit: Emitter, vid: int, ranks: tuple[int, ...], reduce_op: str = "sum") -> int:
    if len(ranks) == 1:
        return vid
    return emit.record("AllReduce", [vid], {"reduce_op": reduce_op, "group": emit.group(ranks)})[0]


def reduce_scatter(emit: Emitter, vid: int, ranks: tuple[int, ...]) -> int:
    """Partial sums over ``ranks`` summed, the i-th rank keeping the i-th block of dimension 0's rows."""
    if len(ranks) == 1:
        return vid
    return emit.record("ReduceScatter", [vid], {"reduce_op": "sum", "group": emit.group(ranks),
                                                "rank_size": len(ranks)})[0]


def _all_gather(emit: Emitter, vid: int, dim: int, ranks: tuple[int, ...]) -> int:
    """The shards of dimension ``dim`` from ``ranks``, concatenated; as MindSpore does it for a dim other
    than 0: AllGather (along dim 0), Split into the ranks' pieces, Concat along ``dim``."""
    attrs = {"group": emit.group(ranks), "rank_size": len(ranks)}
    whole = emit.record("AllGather", [vid], attrs)[0]
    if dim == 0:
        return whole
    pieces = emit.record("Split", [whole], {"axis": 0, "output_num": len(ranks)})
    return emit.record("Concat", list(pieces), {"axis": dim})[0]


def _all_to_all(emit: Emitter, vid: int, src: Layout, dst: Layout, rank: int) -> tuple[int, int] | None:
    """MindSpore's AlltoAll redistribution (``enable_alltoall``): dimension 0 whole and dimension ``a``
    split over a group becomes dimension 0 split over the same group (shard i on the group's i-th rank)
    and ``a`` whole: AlltoAll along dim 0, then Reshape, Transpose, Reshape to put the received shards of
    ``a`` side by side. Returns (new value, ``a``), or None when the layouts are not such a pair."""
    n = len(src.tensor_map)
    moved = [d for d in range(1, n) if src.shards(d) > 1 and not src.same_dim(dst, d)]
    if n < 2 or src.shards(0) != 1 or len(moved) != 1 or dst.shards(moved[0]) != 1:
        return None
    a = moved[0]
    group = src.dim_group(rank, a)
    k = len(group)
    if dst.shards(0) != k or any(dst.index(r, 0) != src.index(r, a) for r in range(src.device_num)) or \
            any(not src.same_dim(dst, d) for d in range(1, n) if d != a):
        return None
    shape = emit.shape(vid)
    swapped = emit.record("AlltoAll", [vid], {"group": emit.group(group), "rank_size": k})[0]
    blocks = emit.record("Reshape", [swapped], {"shape": (k, shape[0] // k, *shape[1:])})[0]
    perm = (*range(1, a + 1), 0, *range(a + 1, n + 1))
    side = emit.record("Transpose", [blocks], {"perm": perm})[0]
    final = (shape[0] // k, *shape[1:a], shape[a] * k, *shape[a + 1:])
    return emit.record("Reshape", [side], {"shape": final})[0], a


def _slice(emit: Emitter, vid: int, dim: int, shards: int, index: int) -> int:
    shape = emit.shape(vid)
    size = list(shape)
    size[dim] = shape[dim] // shards
    begin = [0] * len(shape)
    begin[dim] = index * size[dim]
    return emit.record("Slice", [vid], {"begin": tuple(begin), "size": tuple(size)})[0]


def _coarsening_group(src: Layout, dst: Layout, dim: int, rank: int) -> tuple[int, ...] | None:
    """When ``dst`` splits ``dim`` into fewer shards, each the union of whole ``src`` shards, and every
    ``src`` shard lives on one rank: the ranks whose ``src`` shards make up this rank's ``dst`` shard
    (ordered by shard), so that a gather over them alone suffices (MindSpore gathers over that sub-group
    too: x split 8 ways read as 4 is an AllGather over pairs of ranks). Else None."""
    ks, kd = src.shards(dim), dst.shards(dim)
    if kd <= 1 or ks % kd or src.replicas > 1:
        return None
    f, n = ks // kd, src.device_num
    if any(src.index(r, dim) // f != dst.index(r, dim) for r in range(n)):
        return None
    others = [e for e in range(len(src.tensor_map)) if e != dim]

    def key(r: int) -> tuple:
        return dst.index(r, dim), tuple(src.index(r, e) for e in others)

    mine = key(rank)
    group = sorted((r for r in range(n) if key(r) == mine), key=lambda r: src.index(r, dim))
    return tuple(group) if len(group) == f else None


def refinement(src: Layout, dst: Layout, dim: int) -> int:
    """f when ``dst`` cuts every ``src`` shard of ``dim`` into f and each rank's new shard lies in its
    old one (a batch split 4 ways read as split 8: a local cut); else 0. In closed form when both layouts
    place the dimension's shards by a stride (rank r holds shard (r // s) % k): shard (r // sd) % kd lies in
    shard (r // ss) % ks on every rank exactly when sd * f == ss; else rank by rank."""
    ks, kd = src.shards(dim), dst.shards(dim)
    if kd % ks or kd == ks:
        return 0
    f = kd // ks
    ss, sd = src.shard_stride(dim), dst.shard_stride(dim)
    if ks > 1 and ss is not None and sd is not None:
        return f if sd * f == ss else 0
    return f if all(dst.index(r, dim) // f == src.index(r, dim) for r in range(src.device_num)) else 0


def move(emit: Emitter, vid: int, src: Layout, dst: Layout) -> int:
    """Value ``vid`` (this rank's slice under ``src``) as this rank's slice under ``dst``."""
    rank = emit.rank
    cur = src
    placed = set()                    # dimensions already split as ``dst`` splits them
    swapped = _all_to_all(emit, vid, src, dst, rank) if emit.alltoall else None
    if swapped is not None:
        return swapped[0]
    cuts = []                         # (dim, f): cut after every gather, so that the gathers' peers hold the
    for d in range(len(src.tensor_map)):      # same blocks of the other dimensions as this rank
        if cur.shards(d) > 1 and not cur.same_dim(dst, d):
            finer = refinement(cur, dst, d)
            if finer > 1:             # this rank's shard contains its new one: cut it, no communication
                cuts.append((d, finer))
                placed.add(d)
                continue
            group = _coarsening_group(cur, dst, d, rank)
            if group is not None:
                vid = _all_gather(emit, vid, d, group)
                placed.add(d)
                continue
            vid = _all_gather(emit, vid, d, cur.dim_group(rank, d))
            cur = cur.with_dim(d, -1)
    for d, finer in cuts:
        vid = _slice(emit, vid, d, finer, dst.index(rank, d) % finer)
    for d in range(len(dst.tensor_map)):
        if d not in placed and dst.shards(d) > 1 and cur.shards(d) == 1:
            vid = _slice(emit, vid, d, dst.shards(d), dst.index(rank, d))
    return vid
