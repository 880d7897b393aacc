"""Device memory: HBM address space from the BestFit pool, backed lazily by host pages.

Device addresses are opaque integers handed out by the pool; they are never host pointers. Each
segment the pool maps gets one anonymous host mapping of the same size (``MAP_NORESERVE``: untouched
pages cost no RAM, so a 32 GiB device runs on a laptop). Because backing follows the segment, not the
allocation, memory behaves like HBM: a block freed and handed out again keeps its bytes. Every address
entering the runtime is checked against the live allocations, so a bad pointer is an error, not a
segfault.

Host memory follows the pool's mappings. When defragmentation unmaps the free pages of a segment, their
host pages are returned at once (``MADV_DONTNEED``), and the pieces of the segment that stay mapped keep
their part of the host mapping (and their live blocks' bytes); once no piece of a mapping is left, the
mapping itself is closed, returning its address space, as soon as no numpy view of it is alive. So
host RSS follows the reserved device memory, not the history of defragmentations. (The released part
of a mapping whose other pieces live on keeps host address space, not memory; mmap cannot unmap part.)

Freeing memory that unfinished work still uses: every task a stream enqueues records the allocations
it touches (:meth:`DeviceMemory.note_use`: allocation -> stream -> the task's number on that stream);
:meth:`DeviceMemory.unfinished_users` names the tasks still queued or running on an allocation, which
the runtime's free waits for (or, in strict mode, reports), and :meth:`DeviceMemory.free` refuses to
free it before they finish. So a block is never handed to a new allocation while a kernel or copy may
still touch it, and a backing is closed only when nothing can touch it any more.

A device created with ``backing=False`` (DryRun) has the same pool, addresses, checks and statistics
but no host memory at all: copies are checked and timed without moving bytes, and whatever needs the
bytes themselves (:meth:`DeviceMemory.view`, a kernel with native code) raises FeatureNotSupportedError.
Where a backed device would run out of memory, it grows past its HBM (``DRYRUN_CAPACITY``) instead: up to
then everything is the backed twin's, and the DryRun reports the whole peak of a strategy that does not fit.
"""
from __future__ import annotations

import mmap
import sys
from bisect import bisect_right
from typing import Callable, Hashable, Iterable, Protocol

import numpy as np

from ascendemu.errors import (FeatureNotSupportedError, InvalidParamError, MemoryAllocationError, MemoryFreeError,
                              check_int)

from .pool import DEFAULT_POOL_POLICY, PoolStats, pool_class
from .segments import SEGMENT_GUARD
from .spec import DeviceSpec


class _Named(Protocol):
    name: str


class StreamUser(Hashable, Protocol):
    """What the memory needs of a stream that uses a buffer (``device.model.Stream`` is one; this
    module does not import it, the device above builds on the memory): its id and whether its task
    number ``seq`` is still unfinished."""

    id: int

    def unfinished(self, seq: int) -> bool: ...

    def task_at(self, seq: int) -> _Named: ...


# aclrtMalloc rounds the size up to 32 B and adds 32 B (REFERENCE.md); start addresses come from the
# pool, 512-B aligned, which satisfies ACL's 64-B alignment.
ACL_SIZE_ROUND = 32
ACL_SIZE_PAD = 32


def acl_padded(size: int) -> int:
    """The bytes aclrtMalloc asks its pool for, for ``size`` bytes (the pool rounds that to its ALIGN)."""
    return -(-size // ACL_SIZE_ROUND) * ACL_SIZE_ROUND + ACL_SIZE_PAD
# Each device gets its own address range, so a pointer of device 0 is unknown on device 1.
DEVICE_VA_BASE = 0x1_0000_0000
DEVICE_VA_STRIDE = 1 << 40
# A device without backing (DryRun) that runs out of HBM grows to this much (its pool's VA factor within the
# stride), so a strategy that does not fit still plans and runs, and the DryRun reports its whole peak.
DRYRUN_CAPACITY = DEVICE_VA_STRIDE // 4
FREE_HINT = "pass the device address that malloc returned"
CHECKED_RANGES_MAX = 4096     # checked (addr, nbytes) ranges remembered for the launch path


# Linux's MAP_NORESERVE (asm-generic/mman-common.h): Python's mmap module exports it only from 3.12 on,
# and without it the kernel's overcommit heuristic refuses a mapping larger than host RAM + swap.
MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform.startswith("linux") else 0)


class _Backing:
    """Host pages behind one segment as the pool first mapped it at device address ``start``, reserved
    lazily: untouched pages cost no host memory. ``mapped`` counts the bytes still behind a segment."""

    def __init__(self, start: int, size: int):
        self.start = start
        self.mapped = size
        self._map = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE)
        self.array: np.ndarray | None = np.frombuffer(self._map, dtype=np.uint8)
        self.host_base = self.array.ctypes.data

    def release(self, start: int, end: int) -> None:
        """Return the host pages of device range [start, end), which the pool unmapped, to the host."""
        self._map.madvise(mmap.MADV_DONTNEED, start - self.start, end - start)
        self.mapped -= end - start

    def close(self) -> bool:
        """Unmap the whole mapping (returning its address space); False while numpy views of it are alive."""
        self.array = None
        try:
            self._map.close()
        except BufferError:       # a view (say, of a finished copy not yet collected) still exports it
            return False
        return True


class DeviceMemory:
    """The HBM of one device: pool-managed addresses, their requested sizes and their host backing."""

    def __init__(self, spec: DeviceSpec, device_id: int, defrag: bool = True, backing: bool = True,
                 pool: str = DEFAULT_POOL_POLICY):
        """``pool``: the placement policy (``device.pool.POOL_POLICIES``), best fit unless a what-if asks."""
        self.device_id = device_id
        self.backed = backing
        if not backing:
            self.host_address = self._no_host_address      # the launch path stays free of a backing test
        self.va_base = DEVICE_VA_BASE + device_id * DEVICE_VA_STRIDE
        self.pool = pool_class(pool)(spec.hbm_bytes, base=self.va_base,
                                expand_unit=spec.pool_expand_unit, defrag=defrag,
                                on_map=self._map if backing else None, on_unmap=self._unmap if backing else None)
        self.sizes: dict[int, int] = {}          # live allocation start -> size the user asked for
        self._host_of: dict[int, int] = {}       # live allocation start -> host address of its bytes
        # the pool's mapped segments, in address order: start, and (end, backing) of each
        self._segment_starts: list[int] = []
        self._segments: list[tuple[int, int, _Backing]] = []
        self._backings: set[_Backing] = set()    # host mappings not closed yet
        self._closing: list[_Backing] = []       # no segment left, but a numpy view kept them open
        # allocation start -> {stream: number of the last task enqueued on it that touches the allocation}
        self._uses: dict[int, dict[StreamUser, int]] = {}
        # (addr, nbytes) -> host address, for ranges already checked inside a live allocation: a launch
        # with the arguments of an earlier one skips the pool search. A free forgets them all.
        self._checked: dict[tuple[int, int], int] = {}

    # -- allocation ---------------------------------------------------------------------------------
    def malloc(self, size: int) -> int:
        size = check_int(size, "malloc size", minimum=1, hint="give a positive integer number of bytes")
        padded = acl_padded(size)
        try:
            addr = self.pool.malloc(padded)
        except MemoryAllocationError as e:
            if self.backed or self.pool.capacity >= DRYRUN_CAPACITY:
                raise MemoryAllocationError(f"device {self.device_id}: cannot allocate {size} bytes. {e.message}") \
                    from None
            # DryRun past the HBM, as MindSpore's DryRun reports a peak above it: the rest of the device's VA
            self.pool.grow_beyond(DRYRUN_CAPACITY, self.va_base + DEVICE_VA_STRIDE - SEGMENT_GUARD)
            return self.malloc(size)
        self.sizes[addr] = size
        if self.backed:
            backing = self._backing_of(addr)
            self._host_of[addr] = backing.host_base + (addr - backing.start)
        return addr

    def free(self, addr: int) -> None:
        """Free a live allocation. Refused while a task that touches it is unfinished: the runtime's
        free waits for those tasks first (:meth:`unfinished_users`)."""
        addr = check_int(addr, "free address", error=MemoryFreeError, hint=FREE_HINT)
        pending = self.unfinished_users(addr)
        if pending:
            stream, seq = pending[0]
            raise MemoryFreeError(
                f"device {self.device_id}: free({addr:#x}): task {stream.task_at(seq).name!r} on stream {stream.id} "
                "has not finished using it; synchronize that stream first (the runtime's free waits for it)")
        try:
            self.pool.free(addr)
        except MemoryFreeError as e:
            raise MemoryFreeError(f"device {self.device_id}: {e.message}") from None
        del self.sizes[addr]
        self._host_of.pop(addr, None)
        self._uses.pop(addr, None)
        self._checked.clear()
        if self._closing:
            self._close_released()

    @property
    def allocations(self) -> dict[int, int]:
        """Live allocations: start -> requested size."""
        return self.sizes

    # -- work in flight -------------------------------------------------------------------------------
    def note_use(self, addrs: Iterable[int], stream: StreamUser, seq: int) -> None:
        """Task number ``seq`` of ``stream`` touches the allocations holding ``addrs`` (addresses already
        checked at launch): remember it until they are freed. On the launch path: one dict lookup and one
        store per address, once the allocation has been used; a pool search only for an interior pointer."""
        uses = self._uses
        for a in addrs:
            users = uses.get(a)               # keys are allocation starts: a hit needs no other lookup
            if users is None:
                if a not in self.sizes:
                    a = self.pool.find(a)[0]
                users = uses.setdefault(a, {})
            users[stream] = seq

    def unfinished_users(self, addr: int) -> list[tuple[StreamUser, int]]:
        """(stream, task number) of each unfinished task that touches the allocation starting at ``addr``."""
        addr = check_int(addr, "free address", error=MemoryFreeError, hint=FREE_HINT)
        users = self._uses.get(addr)
        if not users:
            return []
        pending = [(stream, seq) for stream, seq in users.items() if stream.unfinished(seq)]
        if not pending:
            del self._uses[addr]
        return pending

    # -- host backing ---------------------------------------------------------------------------------
    def _map(self, start: int, end: int) -> None:
        """Pool hook: back the new segment [start, end) with host pages (or refuse, changing nothing)."""
        try:
            backing = _Backing(start, end - start)
        except OSError as exc:
            raise MemoryAllocationError(
                f"the host refused {end - start} bytes of backing for a new segment ({exc.strerror or exc}); "
                "free host memory or emulate a smaller device (get_spec(..., hbm_bytes=...))") from None
        self._backings.add(backing)
        self._add_segment(start, end, backing)

    def _unmap(self, start: int, end: int) -> None:
        """Pool hook: [start, end) is no longer mapped: return its host pages, close a mapping left empty."""
        i = bisect_right(self._segment_starts, start) - 1
        seg_start, seg_end, backing = self._segments.pop(i)
        del self._segment_starts[i]
        if seg_start < start:
            self._add_segment(seg_start, start, backing)
        if end < seg_end:
            self._add_segment(end, seg_end, backing)
        backing.release(start, end)
        if backing.mapped == 0:
            self._closing.append(backing)
            self._close_released()

    def _add_segment(self, start: int, end: int, backing: _Backing) -> None:
        i = bisect_right(self._segment_starts, start)
        self._segment_starts.insert(i, start)
        self._segments.insert(i, (start, end, backing))

    def _close_released(self) -> None:
        """Close the mappings no segment uses any more, unless a numpy view still holds one (then later)."""
        still_open = []
        for backing in self._closing:
            if backing.close():
                self._backings.discard(backing)
            else:
                still_open.append(backing)
        self._closing = still_open

    @property
    def host_mappings(self) -> int:
        """Host mappings currently open: at most one per mapped pool segment (none without backing)."""
        if self._closing:
            self._close_released()
        return len(self._backings)

    def _backing_of(self, addr: int) -> _Backing | None:
        i = bisect_right(self._segment_starts, addr) - 1
        if i < 0:
            return None
        _, end, backing = self._segments[i]
        return backing if addr < end else None

    def no_backing(self, what: str) -> FeatureNotSupportedError:
        """The error for ``what`` needing the bytes of a device that has none (DryRun)."""
        return FeatureNotSupportedError(
            f"{what} needs the bytes of device {self.device_id} memory, but this device has no host backing "
            "(DryRun: memory is allocated, checked and timed, never read or written); run without DryRun")

    # -- checked access ---------------------------------------------------------------------------------
    def resolve(self, addr: int, nbytes: int, what: str | Callable[[], str] = "pointer") -> tuple[int, int]:
        """(allocation start, offset) of [addr, addr+nbytes) inside one live allocation, or a clear error.

        ``what`` names the pointer in the error; pass a callable to build the name only on failure
        (this is on the launch path)."""
        if type(addr) is int:
            found = self.pool.find(addr)
            if found is not None:
                start = found[0]
                if nbytes >= 0 and addr - start + nbytes <= self.sizes[start]:
                    return start, addr - start
        name = what() if callable(what) else what
        if type(addr) is not int:      # a numpy int is a pointer too; anything else is refused
            return self.resolve(check_int(addr, name, hint="pass a device address that malloc returned"),
                                nbytes, name)
        if found is None:
            raise InvalidParamError(
                f"{name} {addr:#x} is not inside any live allocation on device {self.device_id} "
                "(freed, never allocated, or from another device)")
        start, size = found[0], self.sizes[found[0]]
        raise InvalidParamError(
            f"{name} {addr:#x} + {nbytes} bytes runs past the end of its allocation "
            f"({start:#x}, {size} bytes) by {addr - start + nbytes - size} bytes")

    def host_address(self, addr: int, nbytes: int, what: str | Callable[[], str] = "pointer") -> int:
        """Host address of checked device memory, for native kernels (the ABI takes host addresses)."""
        if type(addr) is int and type(nbytes) is int:     # anything else is checked (and refused) by resolve
            host = self._checked.get((addr, nbytes))
            if host is not None:
                return host
        start, offset = self.resolve(addr, nbytes, what)
        host = self._host_of[start] + offset
        if len(self._checked) >= CHECKED_RANGES_MAX:
            self._checked.clear()
        self._checked[(addr, nbytes)] = host
        return host

    def _no_host_address(self, addr: int, nbytes: int, what: str | Callable[[], str] = "pointer") -> int:
        """``host_address`` of a device without backing: checked like any pointer, but there is no host
        memory behind it: 0, which only a kernel without native code may be given (KernelTask checks)."""
        self.resolve(addr, nbytes, what)
        return 0

    def view(self, addr: int, nbytes: int, what: str | Callable[[], str] = "pointer") -> np.ndarray:
        """A writable uint8 view of checked device memory."""
        start, offset = self.resolve(addr, nbytes, what)
        if not self.backed:
            raise self.no_backing(what() if callable(what) else what)
        b = self._backing_of(start)
        offset += start - b.start
        return b.array[offset:offset + nbytes]

    # -- statistics -------------------------------------------------------------------------------------
    def stats(self) -> PoolStats:
        return self.pool.stats()

    def get_mem_info(self) -> tuple[int, int]:
        """(free, total) bytes as aclrtGetMemInfo reports them."""
        s = self.pool.stats()
        return s.total - s.used, s.total
