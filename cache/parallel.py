"""Compile cache misses in worker processes, one kernel per task.

numba compiles hold the GIL, so parallelism needs processes. Workers start with 'spawn' (a fork of a
process that runs the device simulation's threads or has LLVM state could deadlock). A spawned worker
normally re-runs the caller's main script first, which breaks every script without an
``if __name__ == "__main__":`` guard (its top level runs again in each worker, then the pool dies);
the workers need nothing from that script, so it is hidden from them while they start.

Each task runs the whole locked protocol (:func:`ensure_entry`) in the worker, so concurrent
processes still compile each kernel once. A worker costs ~1.5 CPU-s to start that is never won back,
so :func:`builders` starts one only where it can win wall time (enough misses, an idle core) and the
calling process builds beside the workers rather than waiting (it imports numba then).
"""
from __future__ import annotations

import atexit
import contextlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from ascendemu.errors import InvalidParamError
from ascendemu.kernels.library import KernelPlan
from ascendemu.process import die_with_parent

from .auth import CacheKey
from .entry import Outcome, ensure_entry

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

START_METHOD = "spawn"


@dataclass(frozen=True)
class Request:
    """One cache miss to settle."""

    kernel: KernelPlan
    distrust: str | None = None     # why the committed entry failed to load although it verified


# CANN's variable for the most operator build processes (its range 1-32); unset, a build may use every core.
# A run whose processes already fill the cores (pytest-xdist workers, MPI ranks) sets it to 1: then each
# process compiles its misses itself, and no pool of workers is started (each pays ~1.5 s of imports and
# numba set-up) only to wait for the same cores.
PARALLEL_COMPILER_ENV = "TE_PARALLEL_COMPILER"
PARALLEL_COMPILER_MAX = 32


def pool_size(jobs: int | None) -> int:
    """Worker processes a build may use: ``jobs``, else one per core, at most ``TE_PARALLEL_COMPILER``."""
    if jobs:
        return max(1, jobs)
    cores = os.cpu_count() or 1
    setting = os.environ.get(PARALLEL_COMPILER_ENV, "").strip()
    if not setting:
        return cores
    try:
        limit = int(setting)
    except ValueError:
        limit = 0
    if not 1 <= limit <= PARALLEL_COMPILER_MAX:
        raise InvalidParamError(f"{PARALLEL_COMPILER_ENV}={setting!r}: must be an int in 1..{PARALLEL_COMPILER_MAX} "
                                f"(the most kernel build processes); unset it to use every core")
    return min(cores, limit)


# The automatic policy (``jobs`` not given). A build worker costs ~1.5 CPU-s to start (a Python, the
# kernel library's imports, numba's set-up) where this process pays numba's set-up once for its life, and
# one kernel costs 0.2-0.7 CPU-s: fewer misses than this are built here, as PyNative's one-op misses
# always are. From this many on, the wall time the spare cores win (about half the builds on 2 cores)
# outweighs one worker's start-up, which the kept pool pays once per process.
POOL_MIN_MISSES = 8
# The idle share of the cores (cores minus the 1-minute load average) from which a worker is started: a
# worker on a core already in use slows this process's own builds as much as it adds.
IDLE_CORE_MIN = 0.5


@dataclass(frozen=True)
class Builders:
    """Who builds one batch of misses: ``workers`` pool processes (0: none) and whether this process
    builds too (it takes what no worker has started, from the end of the batch)."""

    workers: int
    here: bool


def builders(jobs: int | None, misses: int, load: float | None = None) -> Builders:
    """Who builds ``misses``: with ``jobs`` given, that many workers while this process waits (one: this
    process alone); else this process alone below :data:`POOL_MIN_MISSES` or on one core, and otherwise
    one worker per core but this one's, beside this process (so 2 cores start one worker, not two), when
    a core is idle (:func:`idle_core`; ``load`` the 1-minute load average, default the machine's)."""
    if jobs:
        return Builders(pool_size(jobs), False) if min(jobs, misses) > 1 else Builders(0, True)
    processes = pool_size(None)
    if processes == 1 or misses < POOL_MIN_MISSES or not idle_core(load):
        return Builders(0, True)
    return Builders(processes - 1, True)       # the pool's size stays the same between builds: it is kept


def idle_core(load: float | None = None) -> bool:
    """Whether a build worker would find a core nobody uses: the cores minus the 1-minute load average
    (``load``, default the machine's; it counts this process) leave at least :data:`IDLE_CORE_MIN`.

    On a busy machine a worker only competes for the cores this process builds on: measured over the
    nine first-run scripts at load 3.6-4 on 2 cores, one process building alone took 85.8 CPU-s and
    109 s wall, this process beside one worker 95.7 CPU-s and 124 s (bench/README.md)."""
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):      # no load average on this system: assume the cores are free
            return True
    return (os.cpu_count() or 1) - load >= IDLE_CORE_MIN


def settle(directory: Path, requests: list[Request], device_id: int, soc: str, key: CacheKey, jobs: int | None,
           progress: bool) -> Iterator[tuple[Request, Outcome]]:
    """Yield each request with its outcome, in completion order; who builds is :func:`builders`' choice.

    ``key`` signs what the workers build; it reaches them through the pool's private pipe, so a
    worker never looks for a key file of its own (and parent and workers always agree on the key).

    A failing build does not stop the others (their entries are still worth keeping); the first
    failure is raised once all are done.
    """
    bar = _progress_bar(len(requests)) if progress and len(requests) > 1 else None
    who = builders(jobs, len(requests))
    errors: list[BaseException] = []
    try:
        if who.workers == 0:
            for req in requests:
                outcome = _build_here(directory, req, device_id, soc, key, bar, errors)
                if outcome is not None:
                    yield req, outcome
        else:
            yield from _build_in_pool(directory, requests, device_id, soc, key, who, bar, errors)
    finally:
        if bar is not None:
            bar.close()
    if errors:
        raise errors[0]


def _build_here(directory: Path, req: Request, device_id: int, soc: str, key: CacheKey, bar,
                errors: list[BaseException]) -> Outcome | None:
    """Build ``req`` in this process; a failure is kept in ``errors`` (as a worker's: the others go on)."""
    try:
        return ensure_entry(directory, req.kernel, device_id, soc, key, req.distrust)
    except Exception as exc:
        errors.append(exc)
        return None
    finally:
        if bar is not None:
            bar.update(1)


def _build_in_pool(directory: Path, requests: list[Request], device_id: int, soc: str, key: CacheKey,
                   who: Builders, bar, errors: list[BaseException]) -> Iterator[tuple[Request, Outcome]]:
    """Submit every request to the kept pool; with ``who.here``, this process builds beside the workers,
    taking from the end of the batch each request no worker has started (``Future.cancel`` succeeds
    only on a queued one, so a request is claimed once: by a worker or by this process)."""
    from concurrent.futures import FIRST_COMPLETED, wait      # here: a warm start never needs it

    pool = _pool(who.workers)
    with _main_hidden():           # workers are spawned by submit()
        futures = {pool.submit(ensure_entry, directory, req.kernel, device_id, soc, key, req.distrust): req
                   for req in requests}
    pending = set(futures)
    claimable = list(futures) if who.here else []
    try:
        while pending:
            claimed = None
            while claimable and claimed is None:
                future = claimable.pop()
                if future.cancel():
                    claimed = future
            if claimed is not None:
                pending.discard(claimed)
                outcome = _build_here(directory, futures[claimed], device_id, soc, key, bar, errors)
                if outcome is not None:
                    yield futures[claimed], outcome
                finished = {f for f in pending if f.done()}
            else:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                pending.discard(future)
                if bar is not None:
                    bar.update(1)
                exc = future.exception()
                if exc is not None:
                    errors.append(exc)
                    if _is_broken(exc):  # a worker died (OOM killer, a signal): never reuse that pool
                        _discard_pool()
                    continue
                yield futures[future], future.result()
    finally:                       # a consumer that stops early leaves no queued build behind
        for future in futures:
            future.cancel()


# One pool per process, kept between builds: a spawned worker pays ~1.5 s of imports and numba set-up
# once, not once per graph. It is replaced when a build asks for another size or a worker died.
_POOL: tuple[int, ProcessPoolExecutor] | None = None


def _pool(workers: int) -> ProcessPoolExecutor:
    global _POOL
    if _POOL is not None and _POOL[0] == workers:
        return _POOL[1]
    _discard_pool()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(START_METHOD),
                               initializer=die_with_parent, initargs=(os.getpid(),))
    _POOL = (workers, pool)
    return pool


def _discard_pool(wait: bool = False) -> None:
    global _POOL
    if _POOL is not None:
        _POOL[1].shutdown(wait=wait, cancel_futures=True)
        _POOL = None


# Shut the pool down while the interpreter is whole: left to garbage collection at teardown, its
# manager thread's callback finds its modules gone and prints a traceback.
atexit.register(_discard_pool, wait=True)


def _is_broken(exc: BaseException) -> bool:
    from concurrent.futures.process import BrokenProcessPool
    return isinstance(exc, BrokenProcessPool)


@contextlib.contextmanager
def _main_hidden():
    """Hide ``__main__``'s file and spec, which is how 'spawn' decides to re-run the main script."""
    main = sys.modules["__main__"]
    saved = {key: main.__dict__[key] for key in ("__file__", "__spec__") if key in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


PROGRESS_LABEL = "building kernels"


class _LineProgress:
    """Progress for a stream that is not a terminal (a log, a pipe, CI): no redraws, one final line
    such as ``building kernels: 9/9 kernels in 3.2 s (host wall time)``, written when the build ends."""

    def __init__(self, total: int, file):
        self.total, self.done, self.file = total, 0, file
        self._start = time.perf_counter()

    def update(self, n: int = 1) -> None:
        self.done += n

    def close(self) -> None:
        if self.file is None:
            return
        seconds = time.perf_counter() - self._start
        print(f"{PROGRESS_LABEL}: {self.done}/{self.total} kernels in {seconds:.1f} s (host wall time)",
              file=self.file, flush=True)
        self.file = None


def _progress_bar(total: int):
    """A live tqdm bar on a terminal (cleared when done); one plain line per build anywhere else."""
    stream = sys.stderr
    isatty = getattr(stream, "isatty", None)
    try:
        on_terminal = bool(isatty and isatty())
    except ValueError:            # a closed stream
        on_terminal = False
    if not on_terminal:
        return _LineProgress(total, stream)
    from tqdm import tqdm

    return tqdm(total=total, desc=PROGRESS_LABEL, unit="kernel", file=stream, leave=False)
