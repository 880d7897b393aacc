"""Device memory pool bench: BestFitPool against a plain first-fit heap, same events, same run.

Two generated patterns. "training" is shaped like a recorded training run: long-lived weights and
optimizer state, then steps whose forward pass allocates activations (sizes vary per step, as with
dynamic sequence lengths) plus workspaces of random lifetime, and whose backward pass frees the
activations in reverse while gradients come and go; fragmentation is sampled at each forward-pass end
(the memory peak). "churn" keeps a fixed number of tensors live and frees a random one per allocation,
the worst case for a first-fit scan. For each pool the bench prints malloc+free pairs per CPU second,
the speed ratio, the mean sampled fragmentation and actual_peak / peak_used.

Run: python bench/bench_pool.py [--steps N] [--churn PAIRS] [--repeats R]
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import time
from bisect import bisect_left

from ascendemu.device.pool import ALIGN, DEFAULT_BASE, BestFitPool, PoolStats
from ascendemu.errors import InvalidParamError, MemoryAllocationError, MemoryFreeError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
CAPACITY = 32 * GiB
SEED = 910
LAYERS = 48
WEIGHTS_PER_LAYER = 4
ACTS_PER_LAYER = 4
WORKSPACE_MAX_LIFETIME = 24       # ops a workspace may outlive its own (uniform 0..24)
SEQ_FACTORS = (0.25, 0.5, 0.75, 1.0)
CHURN_LIVE = 2000
CHURN_SAMPLE_EVERY = 500

MALLOC, FREE, SAMPLE = 0, 1, 2


class FirstFitPool:
    """Bench peer: one arena grown like ``brk``, free blocks kept in address order and scanned first to last.

    ``reserved`` is the arena top (a free block reaching the top is given back), so its actual peak is
    the peak of the top: the same "mapped up to the highest live byte" measure BestFitPool reports.
    """

    def __init__(self, capacity: int, *, base: int = DEFAULT_BASE):
        self.capacity = capacity
        self._base = base
        self._top = base
        self._free_addrs: list[int] = []
        self._free: dict[int, int] = {}
        self._live: dict[int, int] = {}
        self._used = self._peak_used = 0
        self._peak_top = base

    def malloc(self, size: int) -> int:
        if type(size) is not int or size <= 0:
            raise InvalidParamError(f"malloc size must be a positive int, got {size!r}")
        need = -(-size // ALIGN) * ALIGN
        free = self._free
        for i, addr in enumerate(self._free_addrs):
            have = free[addr]
            if have >= need:
                del free[addr]
                if have > need:
                    self._free_addrs[i] = addr + need
                    free[addr + need] = have - need
                else:
                    del self._free_addrs[i]
                break
        else:
            addr = self._top
            if addr + need > self._base + self.capacity:
                raise MemoryAllocationError(f"first-fit arena full: cannot allocate {size} bytes")
            self._top = addr + need
            self._peak_top = max(self._peak_top, self._top)
        self._live[addr] = need
        self._used += need
        self._peak_used = max(self._peak_used, self._used)
        return addr

    def free(self, addr: int) -> int:
        size = self._live.pop(addr, None)
        if size is None:
            raise MemoryFreeError(f"free({addr:#x}): not a live allocation")
        self._used -= size
        addrs, free = self._free_addrs, self._free
        start, end = addr, addr + size
        i = bisect_left(addrs, addr)
        if i < len(addrs) and addrs[i] == end:
            end += free.pop(end)
            del addrs[i]
        if i > 0 and addrs[i - 1] + free[addrs[i - 1]] == start:
            i -= 1
            start = addrs.pop(i)
            del free[start]
        if end == self._top:
            self._top = start
        else:
            addrs.insert(i, start)
            free[start] = end - start
        return size

    def stats(self) -> PoolStats:
        reserved = self._top - self._base
        free_total = reserved - self._used
        largest = max(self._free.values(), default=0)
        return PoolStats(total=self.capacity, reserved=reserved, used=self._used, peak_used=self._peak_used,
                         actual_peak=self._peak_top - self._base, free_total=free_total, largest_free=largest,
                         free_blocks=len(self._free),
                         fragmentation=1.0 - largest / free_total if free_total else 0.0,
                         num_segments=1, defrag_count=0)


def _log_uniform(rng: random.Random, lo: int, hi: int) -> int:
    return int(lo * (hi / lo) ** rng.random())


def training_pattern(steps: int, seed: int = SEED) -> list[tuple[int, int, int]]:
    """Events (kind, tensor id, size) of ``steps`` training steps; SAMPLE marks each forward-pass end."""
    rng = random.Random(seed)
    events: list[tuple[int, int, int]] = []
    next_id = 0

    def alloc(size: int) -> int:
        nonlocal next_id
        next_id += 1
        events.append((MALLOC, next_id, size))
        return next_id

    weights = [[_log_uniform(rng, 4 * KiB, 32 * MiB) for _ in range(WEIGHTS_PER_LAYER)] for _ in range(LAYERS)]
    acts = [[_log_uniform(rng, 256 * KiB, 24 * MiB) for _ in range(ACTS_PER_LAYER)] for _ in range(LAYERS)]
    for layer in weights:                       # parameters + two optimizer moments, never freed
        for size in layer:
            for _ in range(3):
                alloc(size)

    for _ in range(steps):
        seq = rng.choice(SEQ_FACTORS)
        pending: list[tuple[int, int]] = []     # (free after op number, id) of workspaces
        op = 0

        def workspace() -> None:
            nonlocal op
            op += 1
            pending.append((op + rng.randint(0, WORKSPACE_MAX_LIFETIME), alloc(_log_uniform(rng, 4 * KiB, 8 * MiB))))
            for item in [p for p in pending if p[0] <= op]:
                pending.remove(item)
                events.append((FREE, item[1], 0))

        saved: list[list[int]] = []
        for layer in range(LAYERS):
            ids = []
            for size in acts[layer]:
                ids.append(alloc(max(ALIGN, int(size * seq))))
                workspace()
            ids.append(alloc(_log_uniform(rng, 16, 4 * KiB)))       # small: shapes, scalars, masks
            saved.append(ids)
        events.append((SAMPLE, 0, 0))
        grads = []
        prev_dx: list[int] = []
        for layer in reversed(range(LAYERS)):
            dx = [alloc(max(ALIGN, int(size * seq))) for size in acts[layer]]
            workspace()
            grads += [alloc(size) for size in weights[layer]]
            for tid in reversed(saved[layer]):
                events.append((FREE, tid, 0))
            for tid in prev_dx:
                events.append((FREE, tid, 0))
            prev_dx = dx
        for tid in prev_dx:
            events.append((FREE, tid, 0))
        for _, tid in pending:
            events.append((FREE, tid, 0))
        for tid in grads:                       # optimizer step consumed the gradients
            events.append((FREE, tid, 0))
    return events


def churn_pattern(pairs: int, live: int = CHURN_LIVE, seed: int = SEED) -> list[tuple[int, int, int]]:
    """Random lifetimes in steady state: ``live`` tensors, each pair frees a random one and allocates anew."""
    rng = random.Random(seed)
    events: list[tuple[int, int, int]] = [(MALLOC, i, _log_uniform(rng, 512, 8 * MiB)) for i in range(live)]
    ids = list(range(live))
    for n in range(pairs):
        k = rng.randrange(live)
        events.append((FREE, ids[k], 0))
        ids[k] = live + n
        events.append((MALLOC, ids[k], _log_uniform(rng, 512, 8 * MiB)))
        if n % CHURN_SAMPLE_EVERY == 0:
            events.append((SAMPLE, 0, 0))
    return events


def replay(pool, events: list[tuple[int, int, int]]) -> tuple[float, list[float]]:
    """Run the events through ``pool``; return (CPU seconds, fragmentation at each SAMPLE).

    CPU time of this process, not wall time: other jobs share the machine's two cores.
    """
    addr: dict[int, int] = {}
    frag: list[float] = []
    malloc, free = pool.malloc, pool.free
    t0 = time.process_time()
    for kind, tid, size in events:
        if kind == MALLOC:
            addr[tid] = malloc(size)
        elif kind == FREE:
            free(addr.pop(tid))
        else:
            frag.append(pool.stats().fragmentation)
    return time.process_time() - t0, frag


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=150, help="training steps of the training pattern")
    ap.add_argument("--churn", type=int, default=40_000, help="malloc+free pairs of the churn pattern")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    patterns = {f"training, {args.steps} steps x {LAYERS} layers": training_pattern(args.steps),
                f"churn, {CHURN_LIVE} live, random lifetimes": churn_pattern(args.churn)}
    pools = {"BestFitPool": lambda: BestFitPool(CAPACITY), "first-fit peer": lambda: FirstFitPool(CAPACITY)}
    print(f"capacity {CAPACITY >> 30} GiB; rates are the best of {args.repeats} interleaved runs, in CPU time")
    print("\n| pattern | pool | malloc+free pairs/s | fragmentation (mean of samples) | actual_peak / peak_used |")
    print("|---|---|---|---|---|")
    notes = []
    for label, events in patterns.items():
        pairs = sum(1 for e in events if e[0] == FREE)
        rate: dict[str, float] = {}
        result: dict[str, tuple[PoolStats, list[float]]] = {}
        for _ in range(args.repeats):            # interleaved: other processes share the cores
            for name, make in pools.items():
                pool = make()
                seconds, frag = replay(pool, events)
                rate[name] = max(rate.get(name, 0.0), pairs / seconds)
                result[name] = (pool.stats(), frag)
        for name, (st, frag) in result.items():
            print(f"| {label}, {pairs} pairs | {name} | {rate[name]:,.0f} | {sum(frag) / len(frag):.3f} | "
                  f"{st.actual_peak / st.peak_used:.3f} |")
            notes.append(f"{label}, {name} at the end: {st.describe()}")
        notes.append(f"{label}: speed ratio BestFit / first-fit {rate['BestFitPool'] / rate['first-fit peer']:.2f}x")
    print()
    print("\n".join(notes))
    print(f"machine: {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} cores")

if __name__ == "__main__":
    main()
