"""The mapped segments of a device memory pool and the device virtual address space they lie in.

A ``BestFitPool`` owns one ``SegmentMap``: the pool decides *how much* to map and which blocks are
free; the map decides *where* a new segment goes and keeps the segments' bounds. Split out of the
pool so each class holds one concern (the pool's module docstring gives the whole policy).

* A new segment takes never-used VA above every segment mapped so far while there is room; once that
  is used up it takes the lowest gap between the mapped segments (recycling unmapped holes), leaving
  ``SEGMENT_GUARD`` unmapped to each neighbour so blocks of two segments never touch.
* Defragmentation unmaps the whole pages (``PAGE`` bytes) inside free blocks: :meth:`SegmentMap.cut`
  takes such a range out of its segment, keeping the mapped pieces on either side as segments of their own.

Costs: the segment starts are a sorted list searched with bisect (O(log n)); the end -> start dict
lets the pool's malloc/free tell in O(1) whether a free block ends a segment.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right, insort

PAGE = 2 << 20                    # physical page: unit of mapping, unmapping and defragmentation
SEGMENT_GUARD = PAGE              # unmapped VA left between segments: blocks of two segments never touch

Range = tuple[int, int]           # (start, end) of a VA range


def page_span(addr: int, size: int) -> Range:
    """The whole pages inside [addr, addr + size): (first page start, end of last page)."""
    return (addr + PAGE - 1) & -PAGE, (addr + size) & -PAGE


def whole_pages(free: dict[int, int]) -> int:
    """Bytes in the whole pages of the ``free`` blocks (address -> size): what defragmentation unmaps."""
    total = 0
    for addr, size in free.items():
        lo, hi = page_span(addr, size)
        if hi > lo:
            total += hi - lo
    return total


class SegmentMap:
    """Bounds of the mapped segments in [va_base, va_end), and the placement of new ones."""

    __slots__ = ("va_base", "va_next", "va_end", "starts", "end_of", "start_by_end")

    def __init__(self, va_base: int, va_end: int):
        self.va_base = va_base
        self.va_next = va_base                      # never-used VA starts here
        self.va_end = va_end
        self.starts: list[int] = []                 # sorted starts of mapped segments
        self.end_of: dict[int, int] = {}            # segment start -> end
        self.start_by_end: dict[int, int] = {}      # segment end -> start (mutated in place, never replaced)

    def __len__(self) -> int:
        return len(self.starts)

    def ranges(self) -> list[Range]:
        """(start, end) of every segment, in address order."""
        return [(start, self.end_of[start]) for start in self.starts]

    def containing(self, addr: int) -> Range | None:
        """(start, end) of the segment holding ``addr``, or None."""
        i = bisect_right(self.starts, addr) - 1
        if i < 0:
            return None
        start = self.starts[i]
        end = self.end_of[start]
        return (start, end) if addr < end else None

    def place(self, need: int, want: int, mapped: list[Range] | None = None) -> tuple[int, int] | None:
        """(start, size) of the VA for a new segment of ``want`` bytes, at least ``need``: never-used VA
        while it has room, else the lowest gap between the ``mapped`` ranges (default: the segments)
        leaving ``SEGMENT_GUARD`` to each neighbour; a place for all of ``want`` first. None if none fits."""
        places = [(self.va_next, self.va_end - self.va_next)]
        if places[0][1] < want:
            if mapped is None:
                mapped = self.ranges()
            lo = self.va_base
            for start, end in mapped + [(self.va_end + SEGMENT_GUARD, self.va_end)]:
                places.append((lo, start - SEGMENT_GUARD - lo))
                lo = max(lo, end + SEGMENT_GUARD)
        for enough in (want, need):
            for start, size in places:
                if size >= enough:
                    return start, min(want, size)
        return None

    def claim(self, start: int, end: int) -> None:
        """Record a newly mapped segment placed by :meth:`place`."""
        self.va_next = max(self.va_next, end + SEGMENT_GUARD)
        self._add(start, end)

    def cut(self, lo: int, hi: int) -> None:
        """Take the unmapped range [lo, hi) out of the segment holding it; the pieces left on either
        side stay mapped as segments of their own."""
        seg_start = self.starts[bisect_right(self.starts, lo) - 1]
        seg_end = self.end_of[seg_start]
        del self.starts[bisect_left(self.starts, seg_start)]
        del self.start_by_end[self.end_of.pop(seg_start)]
        if lo > seg_start:
            self._add(seg_start, lo)
        if seg_end > hi:
            self._add(hi, seg_end)

    def ranges_without(self, free: dict[int, int]) -> list[Range]:
        """The mapped ranges, in address order, that unmapping every whole page of the ``free`` blocks
        (address -> size) would leave."""
        holes = sorted(span for span in map(page_span, free, free.values()) if span[1] > span[0])
        ranges, i = [], 0
        for start in self.starts:
            end = self.end_of[start]
            while i < len(holes) and holes[i][0] < end:
                lo, hi = holes[i]
                if lo > start:
                    ranges.append((start, lo))
                start = hi
                i += 1
            if end > start:
                ranges.append((start, end))
        return ranges

    def _add(self, start: int, end: int) -> None:
        insort(self.starts, start)
        self.end_of[start] = end
        self.start_by_end[end] = start

