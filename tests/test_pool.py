"""BestFitPool: placement, splitting, coalescing, expansion, defragmentation, errors and snapshots.

Oracles: hand-computed layouts, and for random sequences an independent model of the live blocks
plus the pool's own snapshot walked block by block.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascendemu.device.pool import DEFAULT_BASE, PAGE, SEGMENT_GUARD, BestFitPool
from ascendemu.errors import InvalidParamError, MemoryAllocationError, MemoryFreeError

KiB, MiB = 1 << 10, 1 << 20
B = DEFAULT_BASE


def round512(n: int) -> int:
    return -(-n // 512) * 512


def active_blocks(pool: BestFitPool) -> dict[int, tuple[int, int]]:
    return {b["address"]: (b["size"], b["requested_size"])
            for seg in pool.snapshot()["segments"] for b in seg["blocks"] if b["state"] == "active_allocated"}


# ---------------------------------------------------------------- hand-computed placement
def test_request_leaving_less_than_512_bytes_takes_the_whole_block():
    pool = BestFitPool(2 * MiB, expand_unit=2 * MiB)
    a = pool.malloc(1024)
    b = pool.malloc(512)
    assert (a, b) == (B, B + 1024)
    pool.free(a)                                   # hole of 1024 B at B; tail free from B + 1536
    c = pool.malloc(700)                           # 1024 - 700 = 324 B would remain: no split
    assert c == B
    assert pool.find(c + 1023) == (B, 1024)
    st_ = pool.stats()
    assert (st_.used, st_.free_blocks, st_.free_total) == (1536, 1, 2 * MiB - 1536)
    assert pool.free(c) == 1024


def test_split_leaves_the_rest_free_after_the_block():
    pool = BestFitPool(2 * MiB, expand_unit=2 * MiB)
    a = pool.malloc(2048)
    pool.malloc(512)
    pool.free(a)
    c = pool.malloc(1000)                          # rounds to 1024; 1024 B remain at B + 1024
    assert c == B
    assert active_blocks(pool)[B] == (1024, 1000)
    blocks = pool.snapshot()["segments"][0]["blocks"]
    assert [(b["address"], b["size"], b["state"]) for b in blocks[:3]] == [
        (B, 1024, "active_allocated"), (B + 1024, 1024, "inactive"), (B + 2048, 512, "active_allocated")]


def test_best_fit_picks_the_smallest_adequate_block_lowest_address_on_ties():
    pool = BestFitPool(2 * MiB, expand_unit=2 * MiB)
    holes = []
    for size in (4096, 1024, 2048, 2048):          # each hole followed by a 512 B live separator
        holes.append(pool.malloc(size))
        pool.malloc(512)
    assert holes == [B, B + 4608, B + 6144, B + 8704]
    for h in holes:
        pool.free(h)
    assert pool.malloc(1500) == B + 6144           # 2048 B holes tie: the lower one (first fit would take B)
    assert pool.malloc(1024) == B + 4608           # exact 1024 B hole, not the 512 B remainder at B + 7680
    assert pool.malloc(2000) == B + 8704           # the other 2048 B hole
    assert pool.malloc(3000) == B                  # only the 4096 B hole is left that fits
    assert pool.malloc(512) == B + 7680            # the 512 B remainder of the first 2048 B hole
    assert pool.malloc(600) == B + 3072            # the 1024 B remainder of the 4096 B hole, whole


def test_free_merges_with_both_neighbours():
    pool = BestFitPool(2 * MiB, expand_unit=2 * MiB)
    a, b, c = pool.malloc(512), pool.malloc(1024), pool.malloc(1536)
    pool.malloc(512)
    pool.free(a)
    pool.free(c)
    assert pool.stats().free_blocks == 3           # a, c and the tail: not adjacent
    pool.free(b)                                   # joins a and c
    blocks = pool.snapshot()["segments"][0]["blocks"]
    assert (blocks[0]["address"], blocks[0]["size"], blocks[0]["state"]) == (B, 3072, "inactive")
    assert pool.stats().free_blocks == 2


def test_expansion_doubles_the_unit_until_the_request_fits_capped_by_capacity():
    pool = BestFitPool(16 * MiB, expand_unit=2 * MiB)
    pool.malloc(5 * MiB)                           # 2 -> 4 -> 8 MiB segment
    assert (pool.stats().reserved, pool.stats().num_segments) == (8 * MiB, 1)
    second = pool.malloc(7 * MiB)                  # 3 MiB tail does not fit: a second 8 MiB segment
    assert second == B + 8 * MiB + SEGMENT_GUARD
    assert pool.stats().reserved == 16 * MiB
    assert pool.malloc(1 * MiB) == second + 7 * MiB    # best fit: the 1 MiB tail, not the 3 MiB one
    assert pool.malloc(2 * MiB) == B + 5 * MiB
    with pytest.raises(MemoryAllocationError) as err:  # 1 MiB free and the capacity all reserved
        pool.malloc(4 * MiB)
    assert "free tensors you no longer need" in err.value.message


def test_actual_peak_counts_mapped_memory_up_to_the_highest_live_byte():
    pool = BestFitPool(4 * MiB, expand_unit=2 * MiB)
    a = pool.malloc(1 * MiB)
    pool.malloc(512 * KiB)
    pool.free(a)                                   # segment 1: hole [0, 1M), live [1M, 1.5M)
    pool.malloc(1280 * KiB)                        # fits neither hole nor 512 KiB tail: segment 2
    st_ = pool.stats()
    assert st_.used == 1792 * KiB and st_.peak_used == 1792 * KiB
    assert st_.actual_peak == 1536 * KiB + 1280 * KiB   # segment 1 up to 1.5 MiB + segment 2 up to 1.25 MiB


# ---------------------------------------------------------------- defragmentation
def _fragmented(defrag: bool) -> tuple[BestFitPool, list[int]]:
    """64 MiB filled with 2 MiB blocks, every other one freed: 32 MiB free in 2 MiB holes."""
    pool = BestFitPool(64 * MiB, expand_unit=64 * MiB, defrag=defrag)
    blocks = [pool.malloc(2 * MiB) for _ in range(32)]
    for addr in blocks[1::2]:
        pool.free(addr)
    return pool, blocks[0::2]


def test_fragmented_pool_fails_without_defrag_with_stats_in_the_message():
    pool, _ = _fragmented(defrag=False)
    before = pool.snapshot()
    with pytest.raises(MemoryAllocationError) as err:
        pool.malloc(16 * MiB)
    assert err.value.code == 207001
    msg = err.value.message
    for fragment in ("16777216 bytes", "total 64.0 MiB", "reserved 64.0 MiB", "used 32.0 MiB",
                     "largest free block 2.0 MiB", "fragmentation 93.8%", "defrag=True"):
        assert fragment in msg
    assert pool.snapshot() == before


def test_defrag_remaps_free_pages_and_keeps_every_live_address():
    pool, live = _fragmented(defrag=True)
    big = pool.malloc(16 * MiB)
    st_ = pool.stats()
    assert st_.defrag_count == 1
    assert big >= B + 64 * MiB                     # a fresh VA range, beyond the first segment
    assert all(pool.find(addr) == (addr, 2 * MiB) for addr in live)
    assert set(active_blocks(pool)) == set(live) | {big}
    assert st_.reserved == 64 * MiB                # 32 MiB kept under live blocks + 32 MiB remapped
    assert st_.used == 48 * MiB
    assert sum(pool.free(addr) for addr in live) == 32 * MiB


def test_defrag_cannot_reclaim_holes_smaller_than_a_page():
    pool = BestFitPool(64 * MiB, expand_unit=64 * MiB)
    blocks = [pool.malloc(1 * MiB) for _ in range(64)]
    for addr in blocks[1::2]:
        pool.free(addr)
    with pytest.raises(MemoryAllocationError, match="smaller than a page"):
        pool.malloc(4 * MiB)
    assert pool.stats().defrag_count == 0


# ---------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("size, fragment", [(0, "positive"), (-1, "positive"), (1.5, "must be a positive int"),
                                            (True, "must be a positive int")])
def test_malloc_rejects_bad_sizes(size, fragment):
    pool = BestFitPool(2 * MiB)
    with pytest.raises(InvalidParamError) as err:
        pool.malloc(size)
    assert err.value.code == 100000 and fragment in err.value.message


def test_free_errors_name_the_address_and_the_reason():
    pool = BestFitPool(2 * MiB, expand_unit=2 * MiB)
    a = pool.malloc(4096)
    pool.malloc(512)
    cases = [(0x5000, "0x5000", "outside every mapped segment"),
             (a + 1024, hex(a + 1024), f"inside the live block starting at {a:#x}"),
             (B + 8192, hex(B + 8192), "never returned by malloc")]
    for addr, hex_addr, reason in cases:
        with pytest.raises(MemoryFreeError) as err:
            pool.free(addr)
        assert err.value.code == 207002 and hex_addr in err.value.message and reason in err.value.message
    assert pool.free(a) == 4096
    with pytest.raises(MemoryFreeError) as err:
        pool.free(a)
    assert err.value.code == 207002 and hex(a) in err.value.message and "already freed" in err.value.message
    with pytest.raises(InvalidParamError):
        pool.free("0x100000000")


def test_numpy_ints_are_sizes_and_addresses_and_bools_are_not():
    pool = BestFitPool(np.int64(4 * MiB), expand_unit=np.int64(2 * MiB))
    a = pool.malloc(np.int32(1000))
    assert pool.find(a) == (a, 1024) and pool.stats().reserved == 2 * MiB
    assert pool.free(np.uint64(a)) == 1024
    for bad in (lambda: pool.malloc(True), lambda: pool.free(False), lambda: BestFitPool(True)):
        with pytest.raises(InvalidParamError, match="must be"):
            bad()


def test_constructor_rejects_sizes_that_are_not_whole_pages():
    for kwargs in ({"capacity": 1000}, {"capacity": 0}, {"capacity": 4 * MiB, "expand_unit": 3 * MiB},
                   {"capacity": 4 * MiB, "base": 4096}):
        with pytest.raises(InvalidParamError, match="multiple"):
            BestFitPool(**kwargs)


# ---------------------------------------------------------------- snapshot
def test_snapshot_covers_reserved_memory_and_round_trips_as_pickle(tmp_path):
    pool, live = _fragmented(defrag=True)
    pool.malloc(16 * MiB)
    snap = pool.snapshot()
    st_ = pool.stats()
    assert sum(seg["total_size"] for seg in snap["segments"]) == st_.reserved
    for seg in snap["segments"]:
        assert sum(b["size"] for b in seg["blocks"]) == seg["total_size"]
        assert seg["allocated_size"] == sum(b["size"] for b in seg["blocks"] if b["state"] == "active_allocated")
    assert sum(seg["allocated_size"] for seg in snap["segments"]) == st_.used
    assert snap["device_traces"] == [[]]
    path = tmp_path / "pool.pickle"
    pool.dump_snapshot(path)
    with open(path, "rb") as f:
        assert pickle.load(f) == snap


# ---------------------------------------------------------------- random sequences
CAP = 32 * MiB
UNIT = 4 * MiB
big_size = st.builds(lambda halves, jitter: halves * 512 * KiB - jitter, st.integers(1, 12), st.integers(0, 1000))
op_strategy = st.lists(
    st.one_of(st.tuples(st.just("alloc"), st.integers(1, 8 * KiB)),
              st.tuples(st.just("alloc"), big_size),
              st.tuples(st.just("free"), st.integers(0, 10_000))),
    min_size=10, max_size=100)


def _page_span(addr: int, size: int) -> int:
    lo, hi = -(-addr // PAGE) * PAGE, (addr + size) // PAGE * PAGE
    return max(0, hi - lo)


def _va_fits(need: int, mapped: list[tuple[int, int]], va_next: int) -> bool:
    """The documented VA rule: never-used VA above every segment so far, else a gap between mapped ranges
    with SEGMENT_GUARD to each neighbour (the VA space is [B, B + 4 * CAP))."""
    if B + 4 * CAP - va_next >= need:
        return True
    edges = [B - SEGMENT_GUARD] + [x for s, e in sorted(mapped) for x in (s, e)] + [B + 4 * CAP + SEGMENT_GUARD]
    return any(nxt - prev - 2 * SEGMENT_GUARD >= need for prev, nxt in zip(edges[::2], edges[1::2]))


def _mapped_after_defrag(snap: dict) -> list[tuple[int, int]]:
    """Segments minus the whole pages of their free blocks, from the snapshot."""
    mapped = []
    for seg in snap["segments"]:
        start, end = seg["address"], seg["address"] + seg["total_size"]
        for b in seg["blocks"]:
            lo = -(-b["address"] // PAGE) * PAGE
            hi = (b["address"] + b["size"]) // PAGE * PAGE
            if b["state"] == "inactive" and hi > lo:
                if lo > start:
                    mapped.append((start, lo))
                start = hi
        if end > start:
            mapped.append((start, end))
    return mapped


def _check(pool: BestFitPool, live: dict[int, int]) -> dict:
    snap = pool.snapshot()
    segs = sorted((s["address"], s["address"] + s["total_size"]) for s in snap["segments"])
    for (_, end), (nxt, _) in zip(segs, segs[1:]):
        assert end < nxt                           # segments neither overlap nor touch
    free_sizes = []
    for seg in snap["segments"]:
        addr, prev_state = seg["address"], None
        for b in seg["blocks"]:
            assert b["address"] == addr and b["address"] % 512 == 0 and b["size"] % 512 == 0
            assert not (prev_state == b["state"] == "inactive")     # always coalesced
            if b["state"] == "inactive":
                free_sizes.append(b["size"])
            addr += b["size"]
            prev_state = b["state"]
        assert addr == seg["address"] + seg["total_size"]
    # The live blocks are exactly the model's, do not overlap and lie inside segments.
    assert active_blocks(pool) == {a: (round512(n), n) for a, n in live.items()}
    spans = sorted((a, a + round512(n)) for a, n in live.items())
    for (_, end), (nxt, _) in zip(spans, spans[1:]):
        assert end <= nxt
    for a, e in spans:
        assert any(s <= a and e <= t for s, t in segs)
        assert pool.find(a) == pool.find(e - 1) == (a, e - a)
    st_ = pool.stats()
    used = sum(round512(n) for n in live.values())
    assert st_.used == used
    assert st_.reserved == sum(t - s for s, t in segs) <= CAP
    assert st_.reserved >= used and st_.peak_used >= used
    assert st_.free_total + used == st_.reserved == sum(free_sizes) + used
    assert st_.largest_free == max(free_sizes, default=0) and st_.free_blocks == len(free_sizes)
    expected_frag = 1 - st_.largest_free / st_.free_total if st_.free_total else 0.0
    assert st_.fragmentation == pytest.approx(expected_frag)
    return snap


@settings(max_examples=150, deadline=None)
@given(op_strategy)
def test_random_sequences_keep_the_pool_consistent(ops):
    pool = BestFitPool(CAP, expand_unit=UNIT)
    live: dict[int, int] = {}
    order: list[int] = []
    va_next = B
    peak_used = actual_peak = 0
    snap = _check(pool, live)
    for kind, arg in ops:
        if kind == "free":
            if not order:
                continue
            addr = order.pop(arg % len(order))
            assert pool.free(addr) == round512(live.pop(addr))
        else:
            need = round512(arg)
            st_ = pool.stats()
            unreserved = CAP - st_.reserved
            reclaimable = sum(_page_span(b["address"], b["size"]) for s in snap["segments"]
                              for b in s["blocks"] if b["state"] == "inactive")
            segments = [(s["address"], s["address"] + s["total_size"]) for s in snap["segments"]]
            fits = st_.largest_free >= need
            grows = unreserved >= need and _va_fits(need, segments, va_next)
            defrags = (not fits and not grows and unreserved + reclaimable >= need
                       and _va_fits(need, _mapped_after_defrag(snap), va_next))
            if fits or grows or defrags:
                addr = pool.malloc(arg)
                live[addr] = arg
                order.append(addr)
                assert pool.stats().defrag_count == st_.defrag_count + defrags
            else:
                with pytest.raises(MemoryAllocationError):
                    pool.malloc(arg)
                assert pool.snapshot() == snap     # a failed malloc changes nothing
        snap = _check(pool, live)
        for seg in snap["segments"]:               # every mapped range consumed VA up to its end + guard
            va_next = max(va_next, seg["address"] + seg["total_size"] + SEGMENT_GUARD)
        # Mapped bytes up to the highest live byte of each segment = segment minus its trailing free block.
        actual = sum(seg["total_size"] - (seg["blocks"][-1]["size"] if seg["blocks"][-1]["state"] == "inactive"
                                          else 0) for seg in snap["segments"])
        peak_used = max(peak_used, sum(round512(n) for n in live.values()))
        actual_peak = max(actual_peak, actual)
        assert (pool.stats().peak_used, pool.stats().actual_peak) == (peak_used, actual_peak)
    for addr in order:
        pool.free(addr)
    snap = _check(pool, {})
    assert all(len(seg["blocks"]) == 1 and seg["blocks"][0]["state"] == "inactive" for seg in snap["segments"])
    assert pool.stats().used == 0


# ---------------------------------------------------------------- hooks and VA recycling
def test_repeated_defrags_recycle_unmapped_va_and_the_hooks_mirror_the_segments():
    """Twenty defragmentations of a 64 MiB pool remap 640 MiB, more than its 256 MiB of VA: unmapped
    holes are reused (only once unmapped), live blocks never move, and on_map / on_unmap describe
    exactly the segments the snapshot lists."""
    mapped: set[tuple[int, int]] = set()
    unmapped: list[tuple[int, int]] = []
    recycled: list[tuple[int, int]] = []

    def on_map(start: int, end: int) -> None:
        assert not any(s < end and start < e for s, e in mapped)     # never over a mapped range
        if any(s < end and start < e for s, e in unmapped):
            recycled.append((start, end))
        mapped.add((start, end))

    def on_unmap(start: int, end: int) -> None:
        (s, e), = [r for r in mapped if r[0] <= start and end <= r[1]]
        mapped.remove((s, e))
        mapped.update(r for r in ((s, start), (end, e)) if r[0] < r[1])
        unmapped.append((start, end))

    pool = BestFitPool(64 * MiB, expand_unit=64 * MiB, on_map=on_map, on_unmap=on_unmap)
    for cycle in range(20):
        small = [pool.malloc(2 * MiB) for _ in range(32)]
        for addr in small[::2]:
            pool.free(addr)
        big = [pool.malloc(4 * MiB) for _ in range(8)]
        assert pool.stats().defrag_count == cycle + 1
        assert all(pool.find(addr) == (addr, 2 * MiB) for addr in small[1::2])
        segments = {(s["address"], s["address"] + s["total_size"]) for s in pool.snapshot()["segments"]}
        assert mapped == segments
        for addr in small[1::2] + big:
            pool.free(addr)
    assert max(e for _, e in segments) <= B + 4 * 64 * MiB
    assert recycled                                                  # unmapped VA was mapped again


def test_a_refused_mapping_leaves_the_pool_unchanged():
    def refuse(start: int, end: int) -> None:
        raise MemoryAllocationError("host refused")

    pool = BestFitPool(8 * MiB, expand_unit=2 * MiB, on_map=refuse)
    before = (pool.snapshot(), pool.stats())
    with pytest.raises(MemoryAllocationError, match="host refused"):
        pool.malloc(1024)
    assert (pool.snapshot(), pool.stats()) == before
