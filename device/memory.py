"""Device memory: HBM address space from the BestFit pool, backed lazily by host memory.

Device addresses are opaque integers handed out by the pool; they are never host pointers. Each live
allocation owns a host buffer created on first touch (``np.zeros`` is calloc-backed, so untouched
pages cost no RAM), which is why a 32 GiB device runs on a laptop. Every address entering the
runtime is resolved here against the live allocations, so a bad pointer is an error, not a segfault.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ascendemu.errors import InvalidParamError, MemoryAllocationError, MemoryFreeError

from .pool import BestFitPool, PoolStats
from .spec import DeviceSpec

# aclrtMalloc rounds the size up to 32 B and adds 32 B (REFERENCE.md); start addresses come from the
# pool, 512-B aligned, which satisfies ACL's 64-B alignment.
ACL_SIZE_ROUND = 32
ACL_SIZE_PAD = 32


@dataclass
class Allocation:
    start: int
    size: int            # what the user asked for: the bounds every access is checked against
    _backing: np.ndarray | None = None
    _host_base: int | None = None

    @property
    def backing(self) -> np.ndarray:
        if self._backing is None:
            self._backing = np.zeros(self.size, dtype=np.uint8)
        return self._backing

    @property
    def touched(self) -> bool:
        return self._backing is not None

    @property
    def host_base(self) -> int:
        """Host address of the backing storage (created on first use)."""
        if self._host_base is None:
            self._host_base = self.backing.ctypes.data
        return self._host_base


class DeviceMemory:
    """The HBM of one device: pool-managed addresses plus their lazily created host backing."""

    def __init__(self, spec: DeviceSpec, device_id: int, defrag: bool = True):
        self.device_id = device_id
        # each device gets its own address range so a pointer from device 0 is unknown on device 1
        base = 0x1_0000_0000 + device_id * (1 << 40)
        self.pool = BestFitPool(spec.hbm_bytes, base=base, expand_unit=spec.pool_expand_unit, defrag=defrag)
        self.allocations: dict[int, Allocation] = {}

    def malloc(self, size: int) -> int:
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size <= 0:
            raise InvalidParamError(f"malloc size must be a positive integer number of bytes, got {size!r}")
        padded = -(-int(size) // ACL_SIZE_ROUND) * ACL_SIZE_ROUND + ACL_SIZE_PAD
        try:
            addr = self.pool.malloc(padded)
        except MemoryAllocationError as e:
            raise MemoryAllocationError(f"device {self.device_id}: cannot allocate {size} bytes. {e.message}") from None
        self.allocations[addr] = Allocation(addr, int(size))
        return addr

    def free(self, addr: int) -> None:
        if not isinstance(addr, (int, np.integer)) or isinstance(addr, bool):
            raise MemoryFreeError(f"free expects a device address (int), got {type(addr).__name__}")
        try:
            self.pool.free(int(addr))
        except MemoryFreeError as e:
            raise MemoryFreeError(f"device {self.device_id}: {e.message}") from None
        del self.allocations[int(addr)]

    def resolve(self, addr: int, nbytes: int, what: str | Callable[[], str] = "pointer") -> tuple[Allocation, int]:
        """The allocation holding [addr, addr+nbytes) and the offset of addr in it, or a clear error.

        ``what`` names the pointer in the error; pass a callable to build the name only on failure
        (this is on the launch path)."""
        if type(addr) is int:
            found = self.pool.find(addr)
            alloc = self.allocations.get(found[0]) if found is not None else None
            if alloc is not None and nbytes >= 0 and addr - alloc.start + nbytes <= alloc.size:
                return alloc, addr - alloc.start
        name = what() if callable(what) else what
        if not isinstance(addr, (int, np.integer)) or isinstance(addr, bool):
            raise InvalidParamError(f"{name} must be a device address (int), got {type(addr).__name__}")
        if type(addr) is not int:
            return self.resolve(int(addr), nbytes, name)
        if alloc is None:
            raise InvalidParamError(
                f"{name} {addr:#x} is not inside any live allocation on device {self.device_id} "
                "(freed, never allocated, or from another device)")
        offset = addr - alloc.start
        raise InvalidParamError(
            f"{name} {addr:#x} + {nbytes} bytes runs past the end of its allocation "
            f"({alloc.start:#x}, {alloc.size} bytes) by {offset + nbytes - alloc.size} bytes")

    def view(self, addr: int, nbytes: int, what: str = "pointer") -> np.ndarray:
        """A writable uint8 view of device memory (host backing), after bounds checks."""
        alloc, offset = self.resolve(addr, nbytes, what)
        return alloc.backing[offset:offset + nbytes]

    def is_live(self, alloc: Allocation) -> bool:
        """Whether ``alloc`` (resolved earlier) has not been freed since."""
        return self.allocations.get(alloc.start) is alloc

    def stats(self) -> PoolStats:
        return self.pool.stats()

    def get_mem_info(self) -> tuple[int, int]:
        """(free, total) bytes as aclrtGetMemInfo reports them."""
        s = self.pool.stats()
        return s.total - s.used, s.total
