"""A tensor layout: how a global tensor is split over the ranks of a parallel job.

MindSpore's representation: a *device matrix* (the ranks 0..N-1 arranged row-major as an N-d grid,
e.g. ``(dp, mp)``) and a *tensor map* (for each tensor dimension, the device-matrix axis that splits it,
or -1 when it is not split). Rank r holds, in dimension d, shard ``coord(r)[tensor_map[d]]`` of
``dev_matrix[tensor_map[d]]`` equal shards; the device-matrix axes no dimension uses are *replica* axes:
the ranks along them hold the same slice (their gradients are summed over them). Axes are counted from
the left here (MindSpore's tensor map counts them from the right; the placement is the same). A dimension
may be split over several axes (``ms.Layout``'s ``("dp", "mp")`` on one dim): its entry is then a tuple of
axes in device-matrix order, the first the most significant, so its shard is the row-major index of the
rank's coordinates along them.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property

from ascendemu.errors import RuntimeParamError

__all__ = ["Layout", "LayoutError", "tensor_map_entry"]


class LayoutError(RuntimeParamError):
    """A tensor that cannot take a layout (a dimension not divisible by its shards): MindSpore's
    parallel compiler raises RuntimeError there."""


def tensor_map_entry(axes: tuple[int, ...]) -> int | tuple[int, ...]:
    """The tensor-map entry of a dimension split over ``axes``: -1 (whole), the one axis, or the tuple."""
    return -1 if not axes else axes[0] if len(axes) == 1 else tuple(axes)


@dataclass(frozen=True)
class Layout:
    dev_matrix: tuple[int, ...]
    tensor_map: tuple[int | tuple[int, ...], ...]   # per tensor dim: the axis (or axes) splitting it, or -1

    @staticmethod
    def replicated(device_num: int, ndim: int) -> "Layout":
        """Every rank holds the whole tensor."""
        return Layout((device_num,), (-1,) * ndim)

    @property
    def device_num(self) -> int:
        return math.prod(self.dev_matrix)

    @cached_property
    def _strides(self) -> tuple[int, ...]:
        strides, s = [], 1
        for n in reversed(self.dev_matrix):
            strides.append(s)
            s *= n
        return tuple(reversed(strides))

    def coord(self, rank: int) -> tuple[int, ...]:
        """The rank's position in the device matrix (row-major)."""
        return tuple((rank // s) % n for s, n in zip(self._strides, self.dev_matrix))

    def axes(self, dim: int) -> tuple[int, ...]:
        """The device-matrix axes splitting dimension ``dim``, most significant first (none: whole)."""
        entry = self.tensor_map[dim]
        if isinstance(entry, tuple):
            return tuple(a for a in entry if a >= 0)
        return () if entry < 0 else (entry,)

    def shards(self, dim: int) -> int:
        return math.prod(self.dev_matrix[a] for a in self.axes(dim))

    def index(self, rank: int, dim: int) -> int:
        """Which shard of dimension ``dim`` rank ``rank`` holds."""
        coord, shard = self.coord(rank), 0
        for a in self.axes(dim):
            shard = shard * self.dev_matrix[a] + coord[a]
        return shard

    def shard_stride(self, dim: int) -> int | None:
        """``s`` when rank r holds shard ``(r // s) % shards(dim)`` of split dimension ``dim`` (the device
        matrix's row-major stride of its axis, or of the last of adjacent axes); None when :meth:`index` is not of
        that form (axes not adjacent, a subclass's)."""
        axes = self.axes(dim)
        if not axes or any(b != a + 1 for a, b in zip(axes, axes[1:])):
            return None if axes else 1
        return self._strides[axes[-1]]

    @property
    def is_replicated(self) -> bool:
        return all(self.shards(d) == 1 for d in range(len(self.tensor_map)))

    def local_shape(self, global_shape: tuple[int, ...], what: str = "tensor") -> tuple[int, ...]:
        if len(global_shape) != len(self.tensor_map):
            raise LayoutError(f"{what}: a layout of rank {len(self.tensor_map)} for a tensor of shape {global_shape}")
        out = []
        for d, size in enumerate(global_shape):
            n = self.shards(d)
            if size % n:
                raise LayoutError(f"{what}: dimension {d} of shape {global_shape} is not divisible by its {n} "
                                  f"shards; choose a strategy whose splits divide the shape")
            out.append(size // n)
        return tuple(out)

    def slices(self, rank: int, global_shape: tuple[int, ...]) -> tuple[slice, ...]:
        """Rank ``rank``'s slice of the global tensor."""
        local = self.local_shape(global_shape)
        return tuple(slice(self.index(rank, d) * n, (self.index(rank, d) + 1) * n) for d, n in enumerate(local))

    def group(self, rank: int, axes: tuple[int, ...]) -> tuple[int, ...]:
        """The ranks that differ from ``rank`` only along ``axes``, in row-major order of those axes
        (the communicator of a collective over those axes; rank ``rank`` is one of them)."""
        base, strides = self.coord(rank), self._strides
        moving = sorted({a for a in axes if 0 <= a < len(base)})
        first = rank - sum(base[a] * strides[a] for a in moving)
        # row-major over the moving axes is ascending rank order: the group's members, never the whole world
        return tuple(first + sum(i * strides[a] for i, a in zip(idx, moving))
                     for idx in itertools.product(*(range(self.dev_matrix[a]) for a in moving)))

    def dim_group(self, rank: int, dim: int) -> tuple[int, ...]:
        """The ranks holding the other shards of dimension ``dim`` (and the same shard of every other), in
        shard order: ascending ranks, unless the dimension lists its axes out of device-matrix order."""
        axes = self.axes(dim)
        if not axes:
            return (rank,)
        group = self.group(rank, axes)
        return group if list(axes) == sorted(axes) else tuple(sorted(group, key=lambda r: self.index(r, dim)))

    @property
    def used_axes(self) -> tuple[int, ...]:
        """The device-matrix axes some dimension is split over."""
        return tuple(a for d in range(len(self.tensor_map)) for a in self.axes(d))

    @property
    def replica_axes(self) -> tuple[int, ...]:
        used = self.used_axes
        return tuple(a for a, n in enumerate(self.dev_matrix) if n > 1 and a not in used)

    def replica_group(self, rank: int) -> tuple[int, ...]:
        """The ranks holding the same slice as ``rank`` (a Parameter's gradient is summed over them)."""
        return self.group(rank, self.replica_axes)

    @property
    def replicas(self) -> int:
        return math.prod(self.dev_matrix[a] for a in self.replica_axes)

    def same_dim(self, other: "Layout", dim: int) -> bool:
        """Whether every rank holds the same shard of dimension ``dim`` under both layouts."""
        if self.shards(dim) != other.shards(dim):
            return False
        if self.shards(dim) == 1:
            return True
        mine, theirs = self.shard_stride(dim), other.shard_stride(dim)
        if mine is None or theirs is None:          # shards not by a stride (optimizer_shard's dim 0): walk
            return all(self.index(r, dim) == other.index(r, dim) for r in range(self.device_num))
        # rank r holds shard (r // stride) % n: two splits into n > 1 shards agree on every rank exactly when
        # their strides do (rank min(s, s') tells them apart otherwise), so no walk over a 1024-rank world
        return mine == theirs

    def same(self, other: "Layout") -> bool:
        return len(self.tensor_map) == len(other.tensor_map) and \
            all(self.same_dim(other, d) for d in range(len(self.tensor_map)))

    def with_dim(self, dim: int, axis: int | tuple[int, ...]) -> "Layout":
        """This layout with dimension ``dim`` split along ``axis`` (-1: not split; a tuple: several axes)."""
        tmap = list(self.tensor_map)
        tmap[dim] = axis
        return Layout(self.dev_matrix, tuple(tmap))
