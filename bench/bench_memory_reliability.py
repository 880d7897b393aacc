"""Host memory under repeated defragmentation, next to what the device holds, in one run.

The issue's case: a 256 MiB device; each cycle fills it with 4 MiB blocks, touches every byte, frees
every other block and allocates 8 MiB blocks, which needs a defragmentation that remaps 128 MiB; then
frees everything. Per cycle the script prints the pool's reserved and live bytes beside the process's
resident set growth (/proc/self/statm, the host's own count) and the open host mappings beside the
pool's segments. Host RSS should follow reserved memory, not the number of defragmentations, and the
cycles should go on past the point where the VA space (4x the capacity) has been remapped once over.

Run: python bench/bench_memory_reliability.py [--cycles N]
"""
from __future__ import annotations

import argparse
import os

from ascendemu.device.spec import get_spec
from ascendemu.errors import MemoryAllocationError
from ascendemu.hal.runtime import get_runtime
from ascendemu.units import MiB

CAPACITY = 256 * MiB
SMALL = 4 * MiB - 32          # + aclrtMalloc's 32-byte pad: exactly 4 MiB of pool
BIG = 8 * MiB - 32


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=12)
    opts = parser.parse_args()
    rt = get_runtime()
    rt.init(spec=get_spec(hbm_bytes=CAPACITY, pool_expand_unit=CAPACITY), device_count=1)
    rt.set_device(0)
    memory = rt.node.devices[0].memory
    rss0 = rss()
    print(f"{CAPACITY // MiB} MiB device, {opts.cycles} cycles; MiB columns; RSS growth since init")
    print(f"{'defrags':>7s} {'reserved':>9s} {'live':>6s} {'RSS growth':>11s} {'RSS/reserved':>13s} "
          f"{'host maps':>10s} {'segments':>9s}")
    for _ in range(opts.cycles):
        try:
            small = [rt.malloc(SMALL) for _ in range(CAPACITY // (4 * MiB))]
            for p in small:
                rt.memset(p, SMALL, 1, SMALL)
            for p in small[::2]:
                rt.free(p)
            big = [rt.malloc(BIG) for _ in range(CAPACITY // (4 * MiB) // 4)]
            for p in big:
                rt.memset(p, BIG, 2, BIG)
        except MemoryAllocationError as e:
            print(f"allocation failed: {e.message}")
            break
        s = rt.mem_stats()
        grown = rss() - rss0
        print(f"{s.defrag_count:7d} {s.reserved / MiB:9.0f} {s.used / MiB:6.0f} {grown / MiB:11.0f} "
              f"{grown / s.reserved:13.2f} {memory.host_mappings:10d} {s.num_segments:9d}")
        for p in small[1::2] + big:
            rt.free(p)
    rt.finalize()


if __name__ == "__main__":
    main()
