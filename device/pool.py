"""BestFit device memory pool over an opaque device virtual address space.

The pool only hands out integer device addresses; it never touches host memory (the data of an
allocation lives elsewhere, keyed by its address). Policy follows MindSpore's dynamic memory pool and
PyTorch's caching allocator with expandable segments:

* every block is a multiple of ``ALIGN`` bytes and starts on an ``ALIGN`` boundary;
* free blocks are indexed by size: best fit is the smallest free block that is large enough, the
  lowest address among equal sizes; the rest of a block is split off as a new free block;
* a freed block is merged with its free neighbours on both sides, so no two free blocks ever touch;
* memory is reserved in segments (contiguous mapped VA ranges) of ``expand_unit`` bytes, doubled until
  the request fits and capped by the capacity not yet reserved;
* defragmentation never moves a live block: when nothing fits and the capacity cannot grow a large
  enough segment, the physical pages (``PAGE`` bytes) lying wholly inside free blocks are unmapped and
  the same amount of physical memory is mapped again behind a fresh VA range - the virtual-memory
  remapping of MindSpore's ``enable_vmm`` and PyTorch's expandable segments. The VA space spans
  ``VA_RESERVE_FACTOR`` times the capacity. A new segment takes never-used VA above every segment
  mapped so far while there is room; once that is used up it takes the lowest gap between the mapped
  segments, so unmapped holes are recycled and repeated defragmentation never exhausts the VA space
  (a gap is reused only after everything in it was freed and unmapped, so no live pointer changes
  meaning). Only when live blocks keep segments scattered so that no gap fits does an allocation that
  needs a new segment fail (the error says so). ``defrag=False`` turns this off, to show what
  fragmentation costs.
* ``on_map(start, end)`` / ``on_unmap(start, end)`` tell the layer above which VA ranges become mapped
  (called before the pool commits: raising there leaves the pool unchanged) and unmapped (called once
  the pool is consistent again): the device memory backs the first with host pages and returns the
  second to the host.

Where segments lie in the VA space (placement, guards, gaps, cutting unmapped pages out) is the
``SegmentMap`` the pool owns (device/segments.py); the pool decides what to map and unmap.

``snapshot()`` / ``dump_snapshot()`` export the state in the format of ``torch.cuda.memory._snapshot()``,
so the pickle opens in PyTorch's memory_viz page (https://pytorch.org/memory_viz).

Costs: malloc and free search a sorted list of free-block keys with bisect (O(log n)); inserting or
deleting a key is a memmove of the list, which is cheap next to the Python-level work for the sizes a
device pool sees. The pool is not thread-safe; the runtime serialises calls.
"""
from __future__ import annotations

import pickle
from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ascendemu.errors import InvalidParamError, MemoryAllocationError, MemoryFreeError, check_int

from .segments import SEGMENT_GUARD  # noqa: F401  (the pool's policy constants stay importable from here)
from .segments import PAGE, SegmentMap, page_span, whole_pages
from .spec import DeviceSpec

ALIGN = 512                       # block size granularity and address alignment (MindSpore, PyTorch)
SPLIT_MIN = ALIGN                 # split a block only if this much would remain (MindSpore's rule; with
                                  # ALIGN rounding every non-zero remainder qualifies)
DEFAULT_BASE = 0x1_0000_0000      # first device virtual address
VA_RESERVE_FACTOR = 4             # the VA space spans this many times the capacity
DEFAULT_EXPAND_UNIT = DeviceSpec().pool_expand_unit
ADDR_BITS = 48                    # free-list key = size << ADDR_BITS | address (one int compares fast)
ADDR_MASK = (1 << ADDR_BITS) - 1
FREED_HISTORY = 1 << 16           # freed addresses remembered (per generation) to name double frees

RangeHook = Callable[[int, int], None]      # on_map / on_unmap: (start, end) of a VA range


@dataclass(frozen=True)
class PoolStats:
    """Counters of a pool, in bytes unless named otherwise.

    ``actual_peak`` is the peak "with fragments": at every moment the pool counts, per segment, the
    mapped bytes from the segment start up to the end of its highest live block (that is, the segment
    minus its trailing free block, which could be unmapped without moving anything); ``actual_peak``
    is the maximum of that sum over time. ``peak_used`` is the peak without fragments (live bytes).
    """

    total: int
    reserved: int
    used: int
    peak_used: int
    actual_peak: int
    free_total: int
    largest_free: int
    free_blocks: int
    fragmentation: float
    num_segments: int
    defrag_count: int

    def describe(self) -> str:
        return (f"total {_fmt(self.total)}, reserved {_fmt(self.reserved)}, used {_fmt(self.used)}, "
                f"free in pool {_fmt(self.free_total)} in {self.free_blocks} block(s), largest free block "
                f"{_fmt(self.largest_free)}, fragmentation {self.fragmentation:.1%}, peak used "
                f"{_fmt(self.peak_used)}, actual peak {_fmt(self.actual_peak)}, segments {self.num_segments}, "
                f"defrags {self.defrag_count}")


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.2f} GiB"


def _page_multiple(name: str, value: object, minimum: int) -> int:
    """``value`` as a plain int (never a numpy int: free-list keys shift sizes left by ADDR_BITS)."""
    hint = f"give a multiple of the {PAGE >> 20} MiB page"
    value = check_int(value, f"BestFitPool {name}", minimum=minimum, hint=hint)
    if value % PAGE:
        raise InvalidParamError(f"invalid BestFitPool {name} {value!r}: not a multiple of {PAGE} bytes; {hint}")
    return value


def _torch_snapshot(ranges: list[tuple[int, int]], live: dict[int, tuple[int, int]],
                    free: dict[int, int]) -> dict:
    """``torch.cuda.memory._snapshot()``'s dict of the mapped segments ``ranges`` (start, end), whose
    blocks are the ``live`` (address -> (size, requested size)) and ``free`` (address -> size) ones."""
    segments = []
    for start, end in ranges:
        blocks = []
        allocated = requested_total = 0
        addr = start
        while addr < end:
            entry = live.get(addr)
            if entry is None:
                size = free[addr]
                blocks.append({"address": addr, "size": size, "requested_size": 0, "state": "inactive",
                               "frames": []})
            else:
                size, requested = entry
                allocated += size
                requested_total += requested
                blocks.append({"address": addr, "size": size, "requested_size": requested,
                               "state": "active_allocated", "frames": []})
            addr += size
        segments.append({"device": 0, "address": start, "total_size": end - start,
                         "allocated_size": allocated, "active_size": allocated,
                         "requested_size": requested_total, "stream": 0, "segment_type": "large",
                         "segment_pool_id": (0, 0), "is_expandable": True, "frames": [],
                         "blocks": blocks})
    return {"segments": segments, "device_traces": [[]]}


class BestFitPool:
    """Best-fit allocator of device addresses with segment expansion and VA-remapping defragmentation."""

    __slots__ = ("capacity", "expand_unit", "defrag", "_on_map", "_on_unmap", "_segments", "_seg_start_by_end",
                 "_free_keys", "_free", "_free_by_end", "_live", "_live_starts", "_freed", "_freed_old",
                 "_reserved", "_used", "_peak_used", "_tail_free", "_actual_peak", "_defrag_count")

    def __init__(self, capacity: int, *, base: int = DEFAULT_BASE, expand_unit: int = DEFAULT_EXPAND_UNIT,
                 defrag: bool = True, on_map: RangeHook | None = None, on_unmap: RangeHook | None = None):
        capacity = _page_multiple("capacity", capacity, minimum=PAGE)
        expand_unit = _page_multiple("expand_unit", expand_unit, minimum=PAGE)
        base = _page_multiple("base", base, minimum=0)
        va_end = base + VA_RESERVE_FACTOR * capacity
        if va_end > ADDR_MASK:
            raise InvalidParamError(f"BestFitPool address space [{base:#x}, {va_end:#x}) exceeds {ADDR_BITS} bits; "
                                    f"use a smaller base or capacity")
        self.capacity = capacity
        self.expand_unit = expand_unit
        self.defrag = bool(defrag)
        self._on_map = on_map
        self._on_unmap = on_unmap
        self._segments = SegmentMap(base, va_end)   # where segments lie in the VA space
        # The map's segment end -> start dict itself (never replaced): malloc and free test it every call.
        self._seg_start_by_end = self._segments.start_by_end
        self._free_keys: list[int] = []             # sorted size << ADDR_BITS | addr
        self._free: dict[int, int] = {}             # free block addr -> size
        self._free_by_end: dict[int, int] = {}      # free block end -> addr
        self._live: dict[int, tuple[int, int]] = {}  # live block addr -> (size, requested size)
        self._live_starts: list[int] = []           # sorted, for interior-pointer lookups
        # Recently freed addresses, in two generations so the memory stays bounded.
        self._freed: set[int] = set()
        self._freed_old: set[int] = set()
        self._reserved = 0
        self._used = 0
        self._peak_used = 0
        self._tail_free = 0                         # sum of free blocks that end a segment
        self._actual_peak = 0
        self._defrag_count = 0

    # ------------------------------------------------------------------ public API
    def malloc(self, size: int) -> int:
        """Return the address of a new block of ``size`` bytes rounded up to ``ALIGN``.

        Raises InvalidParamError for a size that is not a positive int, MemoryAllocationError (with the
        pool's stats and a hint) when neither a free block, a new segment nor defragmentation can serve it.
        """
        if type(size) is not int or size <= 0:
            size = check_int(size, "malloc size", minimum=1, hint="give a positive number of bytes")
        need = (size + ALIGN - 1) & -ALIGN
        keys = self._free_keys
        i = self._fit(keys, need)
        if i == len(keys):
            self._grow(size, need)
            i = self._fit(keys, need)
        key = keys.pop(i)
        addr = key & ADDR_MASK
        bsize = key >> ADDR_BITS
        free = self._free
        free_by_end = self._free_by_end
        del free[addr]
        end = addr + bsize
        del free_by_end[end]
        rest = bsize - need
        if rest >= SPLIT_MIN:
            split = addr + need
            insort(keys, rest << ADDR_BITS | split, 0, i)
            free[split] = rest
            free_by_end[end] = split
        else:
            need = bsize
        if end in self._seg_start_by_end:
            # The block came from a segment's trailing free block: the segment's used extent grew.
            self._tail_free -= need
            actual = self._reserved - self._tail_free
            if actual > self._actual_peak:
                self._actual_peak = actual
        self._live[addr] = (need, size)
        insort(self._live_starts, addr)
        used = self._used = self._used + need
        if used > self._peak_used:
            self._peak_used = used
        return addr

    @staticmethod
    def _fit(keys: list[int], need: int) -> int:
        """Index in ``keys`` of the free block to take for ``need`` bytes, ``len(keys)`` if none fits.
        Best fit: the smallest that fits, the lowest address among equal sizes (the first key)."""
        return bisect_left(keys, need << ADDR_BITS)

    def free(self, addr: int) -> int:
        """Release the block starting at ``addr``; return its size in bytes.

        Raises MemoryFreeError naming the address and why it is not a live block: interior to one (with
        that block's start), already freed, never allocated, or outside the pool.
        """
        if type(addr) is not int:
            addr = check_int(addr, "free address", hint="pass the address malloc returned")
        entry = self._live.pop(addr, None)
        if entry is None:
            raise self._free_error(addr)
        size = entry[0]
        starts = self._live_starts
        del starts[bisect_left(starts, addr)]
        self._used -= size
        keys = self._free_keys
        free = self._free
        free_by_end = self._free_by_end
        tail_ends = self._seg_start_by_end
        start, end = addr, addr + size
        nxt = free.pop(end, None)
        if nxt is not None:
            del keys[bisect_left(keys, nxt << ADDR_BITS | end)]
            end += nxt
            del free_by_end[end]
            if end in tail_ends:
                self._tail_free -= nxt
        prev = free_by_end.pop(start, None)
        if prev is not None:
            del keys[bisect_left(keys, (start - prev) << ADDR_BITS | prev)]
            del free[prev]
            start = prev
        insort(keys, (end - start) << ADDR_BITS | start)
        free[start] = end - start
        free_by_end[end] = start
        if end in tail_ends:
            self._tail_free += end - start
        freed = self._freed
        freed.add(addr)
        if len(freed) > FREED_HISTORY:
            self._freed_old = freed
            self._freed = set()
        return size

    def grow_beyond(self, capacity: int, va_end: int) -> None:
        """Let the pool hold up to ``capacity`` bytes in VA up to ``va_end`` (never less than now): a DryRun
        device past its HBM (``device.memory``), so that a strategy that does not fit still runs and its peak
        is measured. Nothing was ever mapped past the old bounds, so the pool's state is unchanged."""
        self.capacity = max(self.capacity, _page_multiple("capacity", capacity, minimum=PAGE))
        self._segments.va_end = max(self._segments.va_end, va_end)

    def find(self, addr: int) -> tuple[int, int] | None:
        """(start, block size) of the live block containing ``addr``, or None: the runtime's pointer check.

        The size is the block's (rounded) size; the requested size is in :meth:`snapshot`.
        """
        starts = self._live_starts
        i = bisect_right(starts, addr) - 1
        if i < 0:
            return None
        start = starts[i]
        size = self._live[start][0]
        return (start, size) if addr < start + size else None

    def stats(self) -> PoolStats:
        free_total = self._reserved - self._used
        largest = self._free_keys[-1] >> ADDR_BITS if self._free_keys else 0
        return PoolStats(
            total=self.capacity, reserved=self._reserved, used=self._used, peak_used=self._peak_used,
            actual_peak=self._actual_peak, free_total=free_total, largest_free=largest,
            free_blocks=len(self._free), fragmentation=1.0 - largest / free_total if free_total else 0.0,
            num_segments=len(self._segments), defrag_count=self._defrag_count)

    def snapshot(self) -> dict:
        """The pool state in the format of ``torch.cuda.memory._snapshot()``.

        Each mapped segment lists its blocks in address order, covering it exactly. No allocation
        history is recorded, so ``device_traces`` is empty and memory_viz shows the current state.
        """
        return _torch_snapshot(self._segments.ranges(), self._live, self._free)

    def dump_snapshot(self, path: str | Path) -> None:
        """Write :meth:`snapshot` as a pickle; drag the file onto https://pytorch.org/memory_viz to view it."""
        with open(path, "wb") as f:
            pickle.dump(self.snapshot(), f)

    # ------------------------------------------------------------------ free-block index
    def _insert_free(self, addr: int, size: int) -> None:
        insort(self._free_keys, size << ADDR_BITS | addr)
        self._free[addr] = size
        end = addr + size
        self._free_by_end[end] = addr
        if end in self._seg_start_by_end:
            self._tail_free += size

    def _remove_free(self, addr: int, size: int) -> None:
        keys = self._free_keys
        del keys[bisect_left(keys, size << ADDR_BITS | addr)]
        del self._free[addr]
        end = addr + size
        del self._free_by_end[end]
        if end in self._seg_start_by_end:
            self._tail_free -= size

    # ------------------------------------------------------------------ segments
    def _grow(self, size: int, need: int) -> None:
        """Make a free block of at least ``need`` bytes exist, by expansion or else defragmentation
        (only when the defragmented pool will have both the memory and a VA range for it)."""
        if self._map_segment(need):
            return
        if (self.defrag and self.capacity - self._reserved + whole_pages(self._free) >= need
                and self._segments.place(need, need, self._segments.ranges_without(self._free)) is not None):
            self._unmap_free_pages()
            self._defrag_count += 1
            if self._map_segment(need):
                return
        raise MemoryAllocationError(self._oom_message(size, need))

    def _map_segment(self, need: int) -> bool:
        seg = self.expand_unit
        while seg < need:
            seg *= 2
        seg = min(seg, self.capacity - self._reserved)
        if seg < need:
            return False
        found = self._segments.place(need, seg)
        if found is None:
            return False
        start, seg = found
        if self._on_map is not None:
            self._on_map(start, start + seg)        # may refuse (raise): nothing has changed yet
        self._segments.claim(start, start + seg)
        self._reserved += seg
        self._insert_free(start, seg)
        return True

    def _unmap_free_pages(self) -> None:
        """Unmap every whole page inside a free block; live blocks keep their addresses."""
        unmapped = []
        for addr, size in list(self._free.items()):
            lo, hi = page_span(addr, size)
            if hi <= lo:
                continue
            self._remove_free(addr, size)
            if lo > addr:
                self._insert_free(addr, lo - addr)
            if addr + size > hi:
                self._insert_free(hi, addr + size - hi)
            self._segments.cut(lo, hi)
            self._reserved -= hi - lo
            unmapped.append((lo, hi))
        # Segment ends moved: recount the free blocks that now end a segment.
        self._tail_free = sum(end - self._free_by_end[end] for end in self._seg_start_by_end
                              if end in self._free_by_end)
        if self._on_unmap is not None:
            for lo, hi in unmapped:
                self._on_unmap(lo, hi)

    # ------------------------------------------------------------------ errors
    def _oom_message(self, size: int, need: int) -> str:
        st = self.stats()
        unreserved = self.capacity - self._reserved
        if st.free_total + unreserved < need:
            hint = "free tensors you no longer need earlier, or reduce the batch size / model size"
        elif not self.defrag:
            hint = ("enough memory is free in total but it is fragmented; enable defragmentation "
                    "(BestFitPool(..., defrag=True))")
        elif self._segments.place(need, need, self._segments.ranges_without(self._free)) is None:
            segments = self._segments
            hint = (f"no gap of the device virtual address space [{segments.va_base:#x}, {segments.va_end:#x}) fits "
                    f"a new segment: live blocks keep {len(segments)} segments scattered over it; free "
                    "long-lived tensors earlier or restart the device")
        else:
            hint = ("the free memory lies in pieces smaller than a page between live blocks; free long-lived "
                    "tensors or allocate them first")
        return (f"out of device memory: cannot allocate {size} bytes (rounded to {need}); {st.describe()}. "
                f"Hint: {hint}")

    def _free_error(self, addr: int) -> MemoryFreeError:
        owner = self.find(addr)
        was_freed = addr in self._freed or addr in self._freed_old
        if owner is not None:
            start, size = owner
            detail = (f"it is inside the live block starting at {start:#x} (size {size}), not its start"
                      f"{' (and was freed earlier)' if was_freed else ''}; pass the address malloc returned")
        elif was_freed:
            detail = "it was already freed (double free)"
        elif self.segment_of(addr) is not None:
            detail = "it lies in free pool memory and was never returned by malloc (or was freed long ago)"
        else:
            detail = "it is outside every mapped segment of this device's pool"
        return MemoryFreeError(f"free({addr:#x}): not a live allocation: {detail}")

    def segment_of(self, addr: int) -> tuple[int, int] | None:
        """(start, end) of the mapped segment holding ``addr``, or None; the memory layer backs
        each newly mapped segment with host pages when it first sees an address in it."""
        return self._segments.containing(addr)


class FirstFitPool(BestFitPool):
    """The same pool (segments, splitting, merging, defragmentation, statistics) with first-fit placement:
    the free block at the lowest address that is large enough, whatever its size. A named alternative
    to best fit for what-if replays (``ascendemu replay --pool first-fit``): first fit keeps low
    addresses busy and leaves the large free blocks at the top of each segment, best fit keeps the
    large blocks whole; which fragments less depends on the allocation pattern. Its search scans the
    blocks large enough (O(n)), where best fit bisects."""

    __slots__ = ()

    @staticmethod
    def _fit(keys: list[int], need: int) -> int:
        i = bisect_left(keys, need << ADDR_BITS)
        if len(keys) - i <= 1:
            return i
        return min(range(i, len(keys)), key=lambda j: keys[j] & ADDR_MASK)


# Placement policies by the name a user gives (``init(pool=...)``, ``ascendemu replay --pool``).
POOL_POLICIES: dict[str, type[BestFitPool]] = {"best-fit": BestFitPool, "first-fit": FirstFitPool}
DEFAULT_POOL_POLICY = "best-fit"


def pool_class(policy: str) -> type[BestFitPool]:
    """The pool class of a placement policy name; an unknown name raises with the valid ones listed."""
    cls = POOL_POLICIES.get(policy)
    if cls is None:
        raise InvalidParamError(f"unknown pool policy {policy!r}; choose one of {sorted(POOL_POLICIES)}")
    return cls
