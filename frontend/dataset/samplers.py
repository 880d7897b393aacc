"""Samplers: which rows of a random-access source one pass reads, and in which order.

A source never shuffles or shards by itself: ``shuffle``, ``num_samples``, ``num_shards`` and
``shard_id`` are turned into one sampler by :func:`select_sampler`, with MindSpore's rules
(``datasets/samplers.py``): a shuffled source with ``num_samples`` samples *with* replacement, a
sharded one gets a :class:`DistributedSampler` whose permutation is shared by all shards.
Random samplers draw from the Generator the source hands them (seeded by ``dataset.config``), so
each pass (epoch or repeat) has its own order and the same run gives the same orders.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, check_int, short_repr

INT32_MAX = 2**31 - 1


def _num_samples(value: Any, owner: str) -> int | None:
    if value is None:
        return None
    return check_int(value, f"{owner}: num_samples", minimum=0, maximum=INT32_MAX,
                     hint="give None (all rows) or the number of rows to read")


class BuiltinSampler:
    """Base of the built-in samplers. ``num_samples`` caps the rows one pass reads (None: all)."""

    def __init__(self, num_samples: int | None = None):
        self.num_samples = _num_samples(num_samples, type(self).__name__)

    def get_num_samples(self) -> int | None:
        return self.num_samples

    def is_shuffled(self) -> bool:
        return False

    def is_sharded(self) -> bool:
        return False

    def _cap(self, n: int) -> int:
        return n if not self.num_samples else min(n, self.num_samples)

    def _size(self, num_rows: int) -> int:
        """Rows one pass yields from a source of ``num_rows`` rows."""
        return self._cap(num_rows)

    def _indices(self, num_rows: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError


class SequentialSampler(BuiltinSampler):
    """Rows ``start_index, start_index + 1, ...`` in order."""

    def __init__(self, start_index: int | None = None, num_samples: int | None = None):
        super().__init__(num_samples)
        self.start_index = 0 if start_index is None else check_int(
            start_index, "SequentialSampler: start_index", minimum=0, maximum=INT32_MAX)

    def _size(self, num_rows: int) -> int:
        return self._cap(max(num_rows - self.start_index, 0))

    def _indices(self, num_rows: int, rng: np.random.Generator) -> np.ndarray:
        return np.arange(self.start_index, self.start_index + self._size(num_rows), dtype=np.int64)


class RandomSampler(BuiltinSampler):
    """A fresh random order every pass; with ``replacement`` rows are drawn independently."""

    def __init__(self, replacement: bool = False, num_samples: int | None = None):
        super().__init__(num_samples)
        if not isinstance(replacement, bool):
            raise InvalidParamError(f"RandomSampler: replacement={short_repr(replacement)} must be a bool")
        self.replacement = replacement

    def is_shuffled(self) -> bool:
        return True

    def _indices(self, num_rows: int, rng: np.random.Generator) -> np.ndarray:
        k = self._size(num_rows)
        if self.replacement:
            return rng.integers(0, num_rows, size=k, dtype=np.int64) if num_rows else np.zeros(0, np.int64)
        return rng.permutation(num_rows)[:k].astype(np.int64)


class DistributedSampler(BuiltinSampler):
    """Shard ``shard_id`` of ``num_shards``: rows ``shard_id, shard_id + num_shards, ...`` of the (shared,
    shuffled if ``shuffle``) order, ``ceil(rows / num_shards)`` of them, wrapping around to the first rows
    so that every shard has the same size (MindSpore's even distribution, ``offset=-1``)."""

    def __init__(self, num_shards: int, shard_id: int, shuffle: bool = True, num_samples: int | None = None,
                 offset: int = -1):
        super().__init__(num_samples)
        self.num_shards, self.shard_id = _check_shards(num_shards, shard_id)
        self.shuffle = True if shuffle is None else shuffle
        if offset != -1:
            raise InvalidParamError(f"DistributedSampler: offset={short_repr(offset)} is not supported; "
                                    "only the even distribution (offset=-1) is")
        self.offset = offset

    def is_shuffled(self) -> bool:
        return bool(self.shuffle)

    def is_sharded(self) -> bool:
        return True

    def _size(self, num_rows: int) -> int:
        return self._cap(math.ceil(num_rows / self.num_shards))

    def _indices(self, num_rows: int, rng: np.random.Generator) -> np.ndarray:
        if num_rows == 0:
            return np.zeros(0, np.int64)
        ids = (self.num_shards * np.arange(self._size(num_rows), dtype=np.int64) + self.shard_id) % num_rows
        return rng.permutation(num_rows)[ids].astype(np.int64) if self.shuffle else ids


class Shuffle(str, Enum):
    """``mindspore.dataset.Shuffle``: how a file-based source shuffles. ADAPTIVE (the default), GLOBAL and
    PARTIAL shuffle all rows (MindSpore's PARTIAL shuffles within blocks of a million rows, ADAPTIVE
    switches to it past 100 million: beyond what a host pipeline here reads); FILES reads whole files in
    a random order; INFILE reads the files in order, each one's rows shuffled; FALSE keeps the order."""

    FALSE = "false"
    ADAPTIVE = "adaptive"
    GLOBAL = "global"
    PARTIAL = "partial"
    FILES = "files"
    INFILE = "infile"


class FileShuffleSampler(BuiltinSampler):
    """Shuffle.FILES / Shuffle.INFILE over a source whose rows are ``file_rows[0]`` rows of the first file,
    then the second's, ...: each pass a new order of whole files (``shuffle_files``) or of the rows inside
    each file; with ``num_shards``, shard ``shard_id`` reads rows ``shard_id, shard_id + num_shards, ...``
    of that order, ``ceil(rows / num_shards)`` of them (wrapping around), as DistributedSampler does."""

    def __init__(self, file_rows: Sequence[int], shuffle_files: bool, num_shards: int | None = None,
                 shard_id: int | None = None):
        super().__init__(None)
        self.file_rows, self.shuffle_files = [int(n) for n in file_rows], shuffle_files
        self.num_shards, self.shard_id = shard_pair(num_shards, shard_id) or (None, None)

    def is_shuffled(self) -> bool:
        return True

    def is_sharded(self) -> bool:
        return self.num_shards is not None

    def _size(self, num_rows: int) -> int:
        return num_rows if self.num_shards is None else math.ceil(num_rows / self.num_shards)

    def _indices(self, num_rows: int, rng: np.random.Generator) -> np.ndarray:
        starts = np.concatenate([[0], np.cumsum(self.file_rows)[:-1]]).astype(np.int64)
        if self.shuffle_files:
            parts = [np.arange(starts[f], starts[f] + self.file_rows[f]) for f in rng.permutation(len(starts))]
        else:
            parts = [start + rng.permutation(n) for start, n in zip(starts, self.file_rows)]
        order = np.concatenate(parts or [np.zeros(0, np.int64)]).astype(np.int64)
        if self.num_shards is None or num_rows == 0:
            return order
        return order[(self.num_shards * np.arange(self._size(num_rows), dtype=np.int64) + self.shard_id) % num_rows]


class SubsetSampler(BuiltinSampler):
    """Exactly the given row indices, in the given order."""

    def __init__(self, indices: Iterable[int], num_samples: int | None = None):
        super().__init__(num_samples)
        self.indices = _index_array(indices, type(self).__name__)

    def _size(self, num_rows: int) -> int:
        return self._cap(len(self.indices))

    def _indices(self, num_rows: int, rng: np.random.Generator) -> np.ndarray:
        return self.indices[:self._size(num_rows)]


class SubsetRandomSampler(SubsetSampler):
    """The given row indices in a fresh random order every pass."""

    def is_shuffled(self) -> bool:
        return True

    def _indices(self, num_rows: int, rng: np.random.Generator) -> np.ndarray:
        return rng.permutation(self.indices)[:self._size(num_rows)]


class Sampler(BuiltinSampler):
    """Base of user-defined samplers: override ``__iter__`` to yield row indices; ``self.dataset_size``
    holds the source's row count when it is called."""

    def __init__(self, num_samples: int | None = None):
        super().__init__(num_samples)
        self.dataset_size = 0

    def __iter__(self):
        raise NotImplementedError("a user-defined Sampler must implement __iter__ yielding row indices")

    def _indices(self, num_rows: int, rng: np.random.Generator) -> np.ndarray:
        self.dataset_size = num_rows
        ids = [check_int(i, f"{type(self).__name__}: sampled index", minimum=0) for i in self]
        return np.asarray(ids, np.int64)[:self._cap(len(ids))]

    def _size(self, num_rows: int) -> int:
        return len(self._indices(num_rows, np.random.default_rng(0)))


class IterSampler(Sampler):
    """Any iterable of indices given as ``sampler=`` (e.g. a model zoo's own DistributedSampler class)."""

    def __init__(self, iterable: Iterable[int], num_samples: int | None = None):
        super().__init__(num_samples)
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)


def _index_array(indices: Any, owner: str) -> np.ndarray:
    arr = np.asarray(list(indices) if not isinstance(indices, np.ndarray) else indices)
    if arr.ndim != 1 or (arr.size and (arr.dtype.kind not in "iu" or arr.min() < 0)):
        raise InvalidParamError(f"{owner}: indices {short_repr(indices)} must be a 1-D sequence of "
                                "non-negative ints")
    return arr.astype(np.int64)


def _check_shards(num_shards: Any, shard_id: Any) -> tuple[int, int]:
    num_shards = check_int(num_shards, "num_shards", minimum=1, maximum=INT32_MAX,
                           hint="give the number of data-parallel devices")
    shard_id = check_int(shard_id, "shard_id", minimum=0, maximum=num_shards - 1,
                         hint="give this device's rank, 0..num_shards-1")
    return num_shards, shard_id


def shard_pair(num_shards: Any, shard_id: Any) -> tuple[int, int] | None:
    """``(num_shards, shard_id)`` checked, or None when neither is given."""
    if (num_shards is None) != (shard_id is None):
        raise InvalidParamError("num_shards and shard_id go together: give both (the number of devices and "
                                "this device's rank) or neither")
    return None if num_shards is None else _check_shards(num_shards, shard_id)


def select_sampler(num_samples: int | None, sampler: Any, shuffle: bool | None, num_shards: int | None,
                   shard_id: int | None) -> BuiltinSampler:
    """The sampler a source's keyword arguments describe (MindSpore's ``select_sampler``)."""
    shard_pair(num_shards, shard_id)
    if shuffle is not None and not isinstance(shuffle, bool):
        raise InvalidParamError(f"shuffle={short_repr(shuffle)} must be True, False or None")
    if sampler is not None:
        if isinstance(sampler, BuiltinSampler):
            if any(a is not None for a in (num_samples, num_shards, shard_id, shuffle)):
                raise InvalidParamError(
                    f"conflicting arguments: sampler={type(sampler).__name__} with num_samples={num_samples}, "
                    f"num_shards={num_shards}, shard_id={shard_id}, shuffle={shuffle}; give the sampler alone")
            return sampler
        if isinstance(sampler, (list, tuple, np.ndarray)):
            return SubsetSampler(sampler, num_samples)
        if isinstance(sampler, Iterable) and not isinstance(sampler, (str, bytes)):
            return IterSampler(sampler, num_samples)
        raise InvalidParamError(f"sampler={short_repr(sampler)} must be a mindspore.dataset sampler or an "
                                "iterable of row indices")
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, shuffle=shuffle is not False, num_samples=num_samples)
    if shuffle is not False:
        return RandomSampler(replacement=num_samples is not None, num_samples=num_samples)
    return SequentialSampler(num_samples=num_samples)


__all__ = ["BuiltinSampler", "Sampler", "SequentialSampler", "RandomSampler", "DistributedSampler",
           "SubsetSampler", "SubsetRandomSampler", "Shuffle", "FileShuffleSampler", "shard_pair",
           "select_sampler"]
