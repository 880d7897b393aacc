"""Compile cache misses in worker processes, one kernel per task.

numba compiles hold the GIL, so parallelism needs processes. Workers start with 'spawn' (a fork of a
process that runs the device simulation's threads or has LLVM state could deadlock). A spawned worker
normally re-runs the caller's main script first, which breaks every script without an
``if __name__ == "__main__":`` guard (its top level runs again in each worker, then the pool dies);
the workers need nothing from that script, so it is hidden from them while they start.

Each task runs the whole locked protocol (:func:`ensure_entry`) in the worker, so concurrent
processes still compile each kernel once; the parent only loads what the workers return and never
imports numba itself.
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


def worker_count(jobs: int | None, misses: int) -> int:
    return min(pool_size(jobs), max(1, misses))


def settle(directory: Path, requests: list[Request], device_id: int, soc: str, key: CacheKey, jobs: int | None,
           progress: bool) -> Iterator[tuple[Request, Outcome]]:
    """Yield each request with its outcome, in completion order; in this process when one worker suffices.

    ``key`` signs what the workers build; it reaches them through the pool's private pipe, so a
    worker never looks for a key file of its own (and parent and workers always agree on the key).

    A failing build does not stop the others (their entries are still worth keeping); the first
    failure is raised once all are done.
    """
    bar = _progress_bar(len(requests)) if progress and len(requests) > 1 else None
    workers = worker_count(jobs, len(requests))
    failure: BaseException | None = None
    try:
        if workers == 1:
            for req in requests:
                try:
                    outcome = ensure_entry(directory, req.kernel, device_id, soc, key, req.distrust)
                except Exception as exc:       # as in a worker: keep building the others
                    failure = failure or exc
                    continue
                finally:
                    if bar is not None:
                        bar.update(1)
                yield req, outcome
        else:
            from concurrent.futures import as_completed      # here: a warm start never needs it

            pool = _pool(pool_size(jobs))
            with _main_hidden():           # workers are spawned by submit()
                futures = {pool.submit(ensure_entry, directory, req.kernel, device_id, soc, key, req.distrust): req
                           for req in requests}
            try:
                for future in as_completed(futures):
                    if bar is not None:
                        bar.update(1)
                    exc = future.exception()
                    if exc is not None:
                        failure = failure or exc
                        if _is_broken(exc):  # a worker died (OOM killer, a signal): never reuse that pool
                            _discard_pool()
                        continue
                    yield futures[future], future.result()
            finally:                       # a consumer that stops early leaves no queued build behind
                for future in futures:
                    future.cancel()
    finally:
        if bar is not None:
            bar.close()
    if failure is not None:
        raise failure


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
