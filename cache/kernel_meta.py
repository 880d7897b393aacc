"""The incremental per-rank kernel cache: reuse what is on disk, build only what is new or bad.

Unlike MindSpore (reuse decided by the name alone, ``.info`` never compared, a half-written cache
breaks the next run), an entry is reused only when its ``.info`` equals what this build would
write and its ``.json``/``.o`` verify; anything else is quarantined with its reason and rebuilt,
never fatal and never loaded. The warm path (every kernel found) reads, verifies and links objects
and never imports numba.
"""
from __future__ import annotations

import os
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ascendemu.errors import InvalidParamError
from ascendemu.hal.kernel import KernelFunction
from ascendemu.kernels.binary import CorruptKernelError, KernelBinary, build_info
from ascendemu.kernels.loader import load_binary
from ascendemu.kernels.signature import OpSignature

from .entry import Outcome, entry_path, info_mismatch, read_entry
from .layout import QUARANTINE_DIR, kernel_meta_dir, prepare
from .parallel import Request, settle

DEFAULT_SOC = "Ascend910A"


class CacheWarning(UserWarning):
    """A cache entry was bad (corrupt, stale, foreign); it was quarantined and rebuilt."""


@dataclass
class CacheStats:
    """What one KernelCache did: kernels built new, reused from disk, rebuilt over a bad entry, loaded."""

    directory: str
    built: int = 0
    reused: int = 0
    rebuilt: int = 0
    loaded: int = 0
    quarantined: tuple[str, ...] = ()     # quarantine directories created by this cache
    cleaned: int = 0                      # temp files of killed writers removed


class KernelCache:
    """Kernels for one rank and device, backed by ``<root>/rank_<rank>/kernel_meta``.

    ``root`` defaults to ``MS_COMPILER_CACHE_PATH`` (else the current directory) and ``rank`` to
    ``RANK_ID`` (else 0). Thread-safe; several processes may share one directory.
    """

    def __init__(self, root: str | os.PathLike | None = None, rank: int | None = None, device_id: int = 0,
                 soc: str = DEFAULT_SOC):
        if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
            raise InvalidParamError(f"device_id {device_id!r} is not a non-negative integer")
        if not isinstance(soc, str) or not soc:
            raise InvalidParamError(f"soc {soc!r} is not a SoC name such as {DEFAULT_SOC!r}")
        self.directory: Path = kernel_meta_dir(root, rank)
        prepare(self.directory)
        self.device_id = device_id
        self.soc = soc
        self.stats = CacheStats(str(self.directory))
        self._kernels: dict[OpSignature, KernelFunction] = {}
        self._lock = threading.Lock()

    @property
    def report(self) -> CacheStats:
        """The same counters as :attr:`stats` (the name the per-run summary uses)."""
        return self.stats

    def get(self, sig: OpSignature) -> KernelFunction:
        """The kernel for ``sig``: from this process, else from disk, else built (and cached)."""
        return self.get_many([sig], progress=False)[0]

    def get_many(self, sigs: Iterable[OpSignature], jobs: int | None = None,
                 progress: bool = True) -> list[KernelFunction]:
        """Kernels for ``sigs`` in order; misses compile in up to ``jobs`` processes (default: all cores)."""
        sigs = list(sigs)
        for sig in sigs:
            if not isinstance(sig, OpSignature):
                raise InvalidParamError(f"expected OpSignature objects, got {type(sig).__name__}")
        if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
            raise InvalidParamError(f"jobs {jobs!r} is not a positive integer")
        with self._lock:
            misses = []
            for sig in dict.fromkeys(sigs):
                if sig in self._kernels:
                    continue
                info = build_info(sig, self.device_id, soc=self.soc)
                name = info["job_content"]["fusion_op_name"]    # = kernel_name(sig, ...), already hashed
                found = read_entry(self.directory, name)
                distrust = None
                if found.binary is not None and info_mismatch(found.binary, info) is None:
                    try:
                        self._load(sig, found.binary)      # verifies the binary before linking it
                        self.stats.reused += 1
                        continue
                    except CorruptKernelError as exc:      # settled (quarantined) under the lock
                        distrust = exc.message
                misses.append(Request(sig, distrust))
            for req, outcome in settle(self.directory, misses, self.device_id, self.soc, jobs, progress):
                self._record(outcome)
                self._load(req.sig, outcome.binary)
            return [self._kernels[sig] for sig in sigs]

    def summary(self) -> str:
        s = self.stats
        line = f"kernel cache {s.directory}: {s.reused} reused, {s.built} built, {s.rebuilt} rebuilt"
        if s.quarantined:
            n = len(s.quarantined)
            line += f" ({n} bad {'entry' if n == 1 else 'entries'} quarantined in {self.directory / QUARANTINE_DIR})"
        return line

    def _record(self, outcome: Outcome) -> None:
        if outcome.status == "reused":
            self.stats.reused += 1
        elif outcome.status == "built":
            self.stats.built += 1
        else:
            self.stats.rebuilt += 1
            self.stats.quarantined += (outcome.quarantined,)
            warnings.warn(CacheWarning(
                f"bad kernel cache entry {entry_path(self.directory, outcome.name, '.json')}: "
                f"{outcome.problem}; moved to {outcome.quarantined} and rebuilt"), stacklevel=3)
        self.stats.cleaned += len(outcome.cleaned)

    def _load(self, sig: OpSignature, binary: KernelBinary) -> None:
        self._kernels[sig] = load_binary(binary)
        self.stats.loaded += 1
