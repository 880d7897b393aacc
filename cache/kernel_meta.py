"""The incremental per-rank kernel cache: reuse what is on disk, build only what is new or bad.

Unlike MindSpore (reuse decided by the name alone, ``.info`` never compared, a half-written cache
breaks the next run), an entry is reused only when its ``.info`` equals what this build would
write, its ``.json``/``.o`` verify, its launch facts are the plan's and this user's key made its MAC
(``auth.py``); anything else is quarantined with its reason and rebuilt, never fatal and never
loaded. The warm path (every kernel found) reads, verifies and links objects and never imports numba.
"""
from __future__ import annotations

import functools
import os
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ascendemu.device.spec import get_spec
from ascendemu.errors import InternalError, InvalidParamError, check_int
from ascendemu.hal.binary import KernelBinary
from ascendemu.hal.kernel import CorruptKernelError, KernelFunction
from ascendemu.hal.loader import link, prepare_in_background
from ascendemu.kernels.binary import build_info
from ascendemu.kernels.library import KernelFamily, KernelPlan, plan_kernel
from ascendemu.kernels.signature import OpSignature

from .auth import load_key
from .entry import Outcome, entry_path, entry_problem, read_entry
from .layout import QUARANTINE_DIR, kernel_meta_dir, prepare
from .parallel import Request, settle
from .store import limits, store_dir


class CacheWarning(UserWarning):
    """A cache entry was bad (corrupt, stale, foreign/unauthenticated); it was quarantined and rebuilt."""


@dataclass
class CacheStats:
    """What one KernelCache did: kernels built new, reused from disk, imported from a sibling rank's
    kernel_meta (built there), rebuilt over a bad entry, loaded."""

    directory: str
    built: int = 0
    reused: int = 0
    rebuilt: int = 0
    imported: int = 0
    loaded: int = 0
    quarantined: tuple[str, ...] = ()     # quarantine directories created by this cache
    cleaned: int = 0                      # temp files of killed writers removed


@dataclass(frozen=True)
class LinkedBinary:
    """An entry linked into this process: its native entry point and what keeps the code alive."""

    binary: KernelBinary
    entry: int
    keepalive: object


class KernelCache:
    """Kernels for one rank and device, backed by ``<root>/rank_<rank>/kernel_meta``.

    ``root`` defaults to ``MS_COMPILER_CACHE_PATH`` (else the current directory), ``rank`` to
    ``RANK_ID`` (else 0) and ``soc`` to the default device preset's SoC; the SoC is part of every
    kernel's identity, so kernels built for one chip are never reused for another. Entries are
    signed and checked with this user's cache key (``auth.load_key``, read once here). Thread-safe;
    several processes may share one directory.
    """

    def __init__(self, root: str | os.PathLike | None = None, rank: int | None = None, device_id: int = 0,
                 soc: str | None = None):
        check_int(device_id, "device_id", minimum=0)
        if soc is None:
            soc = get_spec().soc_version
        if not isinstance(soc, str) or not soc:
            raise InvalidParamError(f"soc {soc!r} is not a SoC name such as {get_spec().soc_version!r}")
        self.directory: Path = kernel_meta_dir(root, rank)
        prepare(self.directory)
        # the kernel store's settings are refused here (InvalidParamError), not in the middle of a build
        store_dir(soc)
        limits()
        self.key = load_key()
        self.device_id = device_id
        self.soc = soc
        self.stats = CacheStats(str(self.directory))
        self._kernels: dict[OpSignature, KernelFunction] = {}
        prepare_in_background()       # the JIT every entry is linked into, ready by the first link
        self._binaries: dict[str, LinkedBinary] = {}          # linked entries by name
        self._family_infos: dict[KernelFamily, dict] = {}
        self._lock = threading.Lock()

    @property
    def report(self) -> CacheStats:
        """The same counters as :attr:`stats` (the name the per-run summary uses)."""
        return self.stats

    def get(self, sig: OpSignature | KernelPlan) -> KernelFunction:
        """The kernel for ``sig``: from this process, else from disk, else built (and cached)."""
        return self.get_many([sig], progress=False)[0]

    def get_many(self, sigs: Iterable[OpSignature | KernelPlan], jobs: int | None = None,
                 progress: bool = True, build: bool = True) -> list[KernelFunction | None]:
        """Kernels for ``sigs`` in order; misses compile in up to ``jobs`` processes (default: all cores).

        Pass KernelPlans when the outputs are already known (the graph executor does), so shapes are
        not inferred again. ``build=False`` only looks: a kernel that is not in the cache (or whose entry
        is bad) comes back as None and nothing is built or quarantined (a replay prices it instead)."""
        kernels = []
        for sig in sigs:
            if isinstance(sig, OpSignature):
                sig = plan_kernel(sig)
            elif not isinstance(sig, KernelPlan):
                raise InvalidParamError(f"expected OpSignature or KernelPlan objects, got {type(sig).__name__}")
            kernels.append(sig)
        if jobs is not None:
            check_int(jobs, "jobs", minimum=1)
        with self._lock:
            # misses by entry name: a dynamic-shape kernel is one entry, built once, for all its signatures
            misses: dict[str, Request] = {}
            waiting: dict[str, list[KernelPlan]] = {}
            for kernel in dict.fromkeys(kernels):
                if kernel.sig in self._kernels:
                    continue
                info = self._info(kernel)
                name = info["job_content"]["fusion_op_name"]
                if name in self._binaries:
                    self._link(kernel, self._binaries[name].binary)
                    continue
                if name in misses:
                    waiting[name].append(kernel)
                    continue
                found = read_entry(self.directory, name)
                distrust = None
                if found.binary is not None and entry_problem(found.binary, kernel, info, self.key) is None:
                    try:
                        self._link(kernel, found.binary)
                        self.stats.reused += 1
                        continue
                    except CorruptKernelError as exc:      # settled (quarantined) under the lock
                        distrust = exc.message
                misses[name] = Request(kernel, distrust)
                waiting[name] = [kernel]
            if not build:
                return [self._kernels.get(k.sig) for k in kernels]
            for req, outcome in settle(self.directory, list(misses.values()), self.device_id, self.soc, self.key,
                                       jobs, progress):
                self._record(outcome)
                if outcome.name not in waiting:
                    # the build processes import the kernel library afresh: its sources changed on disk
                    # after this process named the kernel (an edit during the run)
                    raise InternalError(f"kernel {req.kernel.sig.op}: built as {outcome.name!r}, requested under "
                                        "another name; the kernel library's source files changed while it was "
                                        "being built: run again once they are stable")
                for kernel in waiting[outcome.name]:
                    self._link(kernel, outcome.binary)
            return [self._kernels[k.sig] for k in kernels]

    def summary(self) -> str:
        s = self.stats
        line = f"kernel cache {s.directory}: {s.reused} reused, {s.built} built, {s.rebuilt} rebuilt"
        if s.imported:
            line += f", {s.imported} imported from sibling ranks or the kernel store"
        if s.quarantined:
            n = len(s.quarantined)
            line += f" ({n} bad {'entry' if n == 1 else 'entries'} quarantined in {self.directory / QUARANTINE_DIR})"
        return line

    def _record(self, outcome: Outcome) -> None:
        if outcome.status == "reused":
            self.stats.reused += 1
        elif outcome.status == "built":
            self.stats.built += 1
        elif outcome.status == "imported":
            self.stats.imported += 1
        else:
            self.stats.rebuilt += 1
        if outcome.quarantined:
            self.stats.quarantined += (outcome.quarantined,)
            how = f"replaced by the copy in {outcome.source}" if outcome.source else "rebuilt"
            warnings.warn(CacheWarning(
                f"bad kernel cache entry {entry_path(self.directory, outcome.name, '.json')}: "
                f"{outcome.problem}; moved to {outcome.quarantined} and {how}"), stacklevel=3)
        self.stats.cleaned += len(outcome.cleaned)

    def _info(self, kernel: KernelPlan) -> dict:
        """The .info this build writes for ``kernel``: built once per dynamic-shape kernel family."""
        family = kernel.family
        if family is None:
            return build_info(kernel, self.device_id, self.soc)
        info = self._family_infos.get(family)
        if info is None:
            info = self._family_infos[family] = build_info(kernel, self.device_id, self.soc)
        return info

    def _link(self, kernel: KernelPlan, binary: KernelBinary) -> None:
        """Link a binary that verified against ``kernel`` (once per entry: the signatures of a dynamic-shape
        kernel share its code); its launch facts come from the kernel's plan."""
        linked = self._binaries.get(binary.bin_file_name)
        if linked is None:
            entry, keepalive = link(binary)
            linked = self._binaries[binary.bin_file_name] = LinkedBinary(binary, entry, keepalive)
            self.stats.loaded += 1
        identity = functools.partial(kernel.identity, kernel_meta=binary.bin_file_name, json=binary.json)
        self._kernels[kernel.sig] = KernelFunction(name=binary.bin_file_name, entry=linked.entry,
                                                   block_dim=kernel.block_dim, args=kernel.args,
                                                   cost=kernel.cost, keepalive=linked.keepalive, identity=identity,
                                                   op_info=kernel.op_info, tiling=kernel.tiling_data,
                                                   host_blocks=kernel.plan.host_blocks)
