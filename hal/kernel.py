"""What the runtime launches: a native kernel entry point behind the uniform kernel ABI.

Uniform ABI (ABI version 1), the same for every kernel so that one launcher runs them all::

    void <binFileName>__kernel0(uint64_t *args, int64_t block_idx, int64_t block_dim);

``args`` holds one 8-byte *host* address per argument, in the order inputs, outputs, workspaces, then,
for a dynamic-shape kernel, the address of its tiling data (int64 values; the .json's opParaSize bytes).
The runtime receives *device* addresses from the user, checks each against the live allocations
(bounds from :class:`ArgSpec`), translates them to the host addresses of the backing storage and
calls the entry once per block, when the block runs in simulated time.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ascendemu.device.cost import KernelCost
from ascendemu.errors import ACL_ERROR_RT_INTERNAL_ERROR, AclError

__all__ = ["KERNEL_ABI_VERSION", "MAX_BLOCK_DIM", "DYNAMIC", "KernelEntry", "ArgSpec", "KernelFunction",
           "CorruptKernelError", "IncompatibleKernelError", "UnresolvedSymbolError", "MissingKernelError"]

KERNEL_ABI_VERSION = 1
MAX_BLOCK_DIM = 65535                # rtKernelLaunch's blockDim range (1..65535)
# What a dynamic-shape kernel's .json says of the facts its tiling decides per launch (CANN: blockDim -1)
DYNAMIC = -1
KernelEntry = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument: how many bytes the kernel touches from its address, and how."""

    nbytes: int
    role: str = "in"            # "in", "out" or "workspace"
    zero_init: bool = False     # the .json "parameters" flag: must be zeroed before launch
    # A workspace that is the kernel's status word (``device.kernel_status``): words a fault the kernel
    # reports in it as MindSpore does for the op (None: an ordinary argument). Launch facts, not data.
    fault: Callable[[Sequence[int]], str] | None = field(default=None, compare=False, repr=False)

    @property
    def writes(self) -> bool:
        return self.role in ("out", "workspace")


@dataclass
class KernelFunction:
    """A launchable kernel: a native entry point plus what the runtime needs to check and price it."""

    name: str
    entry: int                           # native address of the ABI-v1 entry point
    block_dim: int
    args: tuple[ArgSpec, ...]
    cost: KernelCost = field(default_factory=KernelCost)
    keepalive: Any = None                # whatever owns the code (JIT library, numba cfunc)
    # Where the kernel comes from, for a trace recorder (``hal.record``): the layer that made the kernel
    # passes a function returning plain JSON data, e.g. {"signature": ..., "outputs": [...],
    # "kernel_meta": name, "json": {...}}; called once per kernel recorded, never on the launch path.
    identity: Callable[[], dict] | None = field(default=None, repr=False, compare=False)
    # What the kernel computes, for traces and profilers: {"type": op, "inputs"/"outputs": [{"shape",
    # "dtype"}]}, filled by the layer that planned it; None when unknown (a binary loaded by path).
    op_info: dict | None = None
    # A dynamic-shape kernel's tiling data: the runtime facts of this signature, passed after the
    # workspaces as the address of int64 values the kernel object owns (like the tiling data CANN
    # appends to a launch's argument block). Empty for a kernel specialised to its signature.
    tiling: tuple[int, ...] = ()
    # The kernel takes its work split from the run-time block_dim, so the host may compute a launch as
    # fewer, larger blocks (the device still prices and traces ``block_dim`` blocks).
    host_blocks: bool = False

    def __post_init__(self):
        # entry 0: a DryRun kernel, checked and priced by the device but with no code to run
        self._cfunc = KernelEntry(self.entry) if self.entry else None
        # computed once: the device reads it on every launch
        self.zero_init_args = tuple(i for i, a in enumerate(self.args) if a.zero_init)
        # the status words the device reads when a launch ends (zeroed before it: zero_init)
        self.status_args = tuple(i for i, a in enumerate(self.args) if a.fault is not None)
        self._tiling_data = (ctypes.c_int64 * len(self.tiling))(*self.tiling) if self.tiling else None
        # host addresses appended to the arguments' at every launch
        self.tiling_args = (ctypes.addressof(self._tiling_data),) if self.tiling else ()

    def argv(self, addresses: Sequence[int]) -> ctypes.Array:
        """The ABI's argument array for host ``addresses`` of the inputs, outputs and workspaces (the
        tiling data's address appended): what a caller outside the runtime passes to :meth:`call_block`."""
        host = (*addresses, *self.tiling_args)
        return (ctypes.c_uint64 * max(1, len(host)))(*host)

    def call_block(self, host_args: ctypes.Array, block_idx: int, block_dim: int | None = None) -> None:
        """Run block ``block_idx`` of ``block_dim`` (default: the kernel's) natively (ctypes releases the
        GIL for the call); another count than the kernel's only if it has ``host_blocks``."""
        if self._cfunc is not None:
            self._cfunc(ctypes.addressof(host_args), block_idx, self.block_dim if block_dim is None else block_dim)


class CorruptKernelError(AclError):
    """A kernel binary that must not load: its files disagree, are damaged or were tampered with."""

    code = ACL_ERROR_RT_INTERNAL_ERROR


class MissingKernelError(CorruptKernelError):
    """No kernel binary at that path: its ``.json`` (the commit marker) does not exist."""


class IncompatibleKernelError(CorruptKernelError):
    """An intact kernel built for another host CPU or kernel ABI; rebuild it here."""


class UnresolvedSymbolError(CorruptKernelError):
    """A kernel that needs a symbol the loader does not provide."""
