"""Device memory: HBM address space from the BestFit pool, backed lazily by host pages.

Device addresses are opaque integers handed out by the pool; they are never host pointers. Each
segment the pool maps gets one anonymous host mapping of the same size (``MAP_NORESERVE``: untouched
pages cost no RAM, so a 32 GiB device runs on a laptop). Because backing follows the segment, not the
allocation, memory behaves like HBM: a block freed and handed out again keeps its bytes, so a
framework may reuse memory in host order on one stream (as MindSpore's pool does) and kernels queued
earlier still see their data. Virtual addresses are never reused by the pool, so a backing mapping
is never shared by two address ranges and defragmentation never moves data. Every address entering
the runtime is checked against the live allocations, so a bad pointer is an error, not a segfault.
"""
from __future__ import annotations

import mmap
import sys
from bisect import bisect_right
from typing import Callable

import numpy as np

from ascendemu.errors import InvalidParamError, MemoryAllocationError, MemoryFreeError

from .pool import BestFitPool, PoolStats
from .spec import DeviceSpec

# aclrtMalloc rounds the size up to 32 B and adds 32 B (REFERENCE.md); start addresses come from the
# pool, 512-B aligned, which satisfies ACL's 64-B alignment.
ACL_SIZE_ROUND = 32
ACL_SIZE_PAD = 32
# Each device gets its own address range, so a pointer of device 0 is unknown on device 1.
DEVICE_VA_BASE = 0x1_0000_0000
DEVICE_VA_STRIDE = 1 << 40


# Linux's MAP_NORESERVE (asm-generic/mman-common.h): Python's mmap module exports it only from 3.12 on,
# and without it the kernel's overcommit heuristic refuses a mapping larger than host RAM + swap.
MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform.startswith("linux") else 0)


class _Backing:
    """Host pages behind one mapped segment, reserved lazily: untouched pages cost no host memory."""

    def __init__(self, start: int, size: int):
        self.start = start
        self.size = size
        self._map = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE)
        self.array = np.frombuffer(self._map, dtype=np.uint8)
        self.host_base = self.array.ctypes.data


class DeviceMemory:
    """The HBM of one device: pool-managed addresses, their requested sizes and their host backing."""

    def __init__(self, spec: DeviceSpec, device_id: int, defrag: bool = True):
        self.device_id = device_id
        self.pool = BestFitPool(spec.hbm_bytes, base=DEVICE_VA_BASE + device_id * DEVICE_VA_STRIDE,
                                expand_unit=spec.pool_expand_unit, defrag=defrag)
        self.sizes: dict[int, int] = {}          # live allocation start -> size the user asked for
        self._host_of: dict[int, int] = {}       # live allocation start -> host address of its bytes
        self._backing_starts: list[int] = []
        self._backings: list[_Backing] = []

    def malloc(self, size: int) -> int:
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size <= 0:
            raise InvalidParamError(f"malloc size must be a positive integer number of bytes, got {size!r}")
        padded = -(-int(size) // ACL_SIZE_ROUND) * ACL_SIZE_ROUND + ACL_SIZE_PAD
        try:
            addr = self.pool.malloc(padded)
        except MemoryAllocationError as e:
            raise MemoryAllocationError(f"device {self.device_id}: cannot allocate {size} bytes. {e.message}") from None
        backing = self._backing_of(addr)
        if backing is None:
            start, end = self.pool.segment_of(addr)
            try:
                backing = _Backing(start, end - start)
            except OSError as exc:          # the host refused the mapping: give the block back, report 207001
                self.pool.free(addr)
                raise MemoryAllocationError(
                    f"device {self.device_id}: cannot allocate {size} bytes: the host refused "
                    f"{end - start} bytes of backing for the segment ({exc.strerror or exc}); free host memory "
                    f"or emulate a smaller device (get_spec(..., hbm_bytes=...))") from None
            i = bisect_right(self._backing_starts, start)
            self._backing_starts.insert(i, start)
            self._backings.insert(i, backing)
        self.sizes[addr] = int(size)
        self._host_of[addr] = backing.host_base + (addr - backing.start)
        return addr

    def free(self, addr: int) -> None:
        if not isinstance(addr, (int, np.integer)) or isinstance(addr, bool):
            raise MemoryFreeError(f"free expects a device address (int), got {type(addr).__name__}")
        try:
            self.pool.free(int(addr))
        except MemoryFreeError as e:
            raise MemoryFreeError(f"device {self.device_id}: {e.message}") from None
        del self.sizes[int(addr)]
        del self._host_of[int(addr)]

    @property
    def allocations(self) -> dict[int, int]:
        """Live allocations: start -> requested size."""
        return self.sizes

    def _backing_of(self, addr: int) -> _Backing | None:
        i = bisect_right(self._backing_starts, addr) - 1
        if i < 0:
            return None
        b = self._backings[i]
        return b if addr < b.start + b.size else None

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
        if not isinstance(addr, (int, np.integer)) or isinstance(addr, bool):
            raise InvalidParamError(f"{name} must be a device address (int), got {type(addr).__name__}")
        if type(addr) is not int:
            return self.resolve(int(addr), nbytes, name)
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
        start, offset = self.resolve(addr, nbytes, what)
        return self._host_of[start] + offset

    def view(self, addr: int, nbytes: int, what: str | Callable[[], str] = "pointer") -> np.ndarray:
        """A writable uint8 view of checked device memory."""
        self.resolve(addr, nbytes, what)
        b = self._backing_of(addr)
        offset = addr - b.start
        return b.array[offset:offset + nbytes]

    def stats(self) -> PoolStats:
        return self.pool.stats()

    def get_mem_info(self) -> tuple[int, int]:
        """(free, total) bytes as aclrtGetMemInfo reports them."""
        s = self.pool.stats()
        return s.total - s.used, s.total
