"""The ACL runtime changes nothing when it reports an error, and leaves no half state when it succeeds.

Each test drives a call into the situation that used to leave the runtime half changed (or leaked a
raw Python exception) and checks the outcome against an independent oracle: ACL's error codes written
out by hand, bytes computed with numpy or set by hand, byte counts of the pool computed by hand, and
the documented invariant of the two clocks. :func:`runtime_state` is the observable state of the
runtime that a refused call must leave equal; the stateful fuzz (tests/test_runtime_fuzz.py) checks it
after every failed call too.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascendemu import errors
from ascendemu.device.cost import KernelCost
from ascendemu.device.spec import get_spec
from ascendemu.hal.runtime import MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE
from ascendemu.hal.steps import Launch, RecordEvent

N = 4096
SLOW = KernelCost(vector_ops=10**9, bytes=0, dtype="float16")    # 7.8125 ms on one core
STREAM_SYNC_TIMEOUT = 507046       # ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
CONTEXT_NULL = 107002              # ACL_ERROR_RT_CONTEXT_NULL
HCCL_FP32, HCCL_SUM = 4, 0         # HcclDataType FP32, HcclReduceOp SUM


def runtime_state(rt) -> dict:
    """What a refused call must not change: the live handles of every chapter (streams with their
    device and the number of tasks ever enqueued on them, events with the generation of their last
    record, contexts, the current one), each device's allocations and pool counters, host buffers,
    kernels and communicators. Device progress (tasks finishing while a call waited) is not state a
    call changes: it is the device running."""
    return {
        "streams": {h: (s.device.id, s.issued) for h, s in rt.streams.items()},
        "sync streams": {d: s.issued for d, s in rt._sync_streams.items()},
        "events": {h: (e.device.id, e.last_issued) for h, e in rt.events.items()},
        "contexts": {h: (c.device_id, c.default_stream, c.destroyed) for h, c in rt.contexts.items()},
        "current": None if rt.current_context is None else rt.current_context.handle,
        "memory": [(dict(d.memory.allocations), d.memory.stats().used, d.memory.stats().reserved)
                   for d in rt.node.devices],
        "host": sorted(rt._host),
        "functions": sorted(rt.functions), "binaries": sorted(rt.binaries),
        "comms": sorted(rt.comms), "comm names": dict(rt._comm_names),
    }


def _pending_task_count(rt, device: int) -> int:
    d = rt.node.devices[device]
    return len(d.pending) + len(d.running)


# --------------------------------------------------------------------------------------------- free
def test_free_waits_for_every_user_even_one_that_finished_while_it_waited_for_another(rt):
    """Before: the 4 KiB copy on stream b finished while free waited for the 1 MiB copy on stream a, and
    its stale (stream, task number) then indexed an empty queue: IndexError out of the runtime."""
    rt.init(device_count=1)
    rt.set_device(0)
    a, b = rt.create_stream(), rt.create_stream()
    n = 1 << 20
    p = rt.malloc(n + 4096)
    rt.memset(p + n, 4096, 7, 4096)                                         # the part stream b reads
    rt.memcpy_async(p, n, np.ones(n, np.uint8), n, MEMCPY_HOST_TO_DEVICE, a)          # first user: 1 MiB
    out = np.zeros(4096, np.uint8)
    rt.memcpy_async(out, 4096, p + n, 4096, MEMCPY_DEVICE_TO_HOST, b)                # second user: 4 KiB
    rt.free(p)
    assert np.array_equal(out, np.full(4096, 7, np.uint8))     # b's copy had finished when free returned
    free, total = rt.get_mem_info()
    assert free == total and rt.node.devices[0].memory.allocations == {}
    assert rt.query_stream(a) and rt.query_stream(b)


def test_a_free_that_can_never_finish_changes_nothing_and_keeps_the_clocks_in_order(rt, make_scale):
    """The host waited until the device stalled (after a 7.8 ms kernel): its clock is not behind the
    device's afterwards (the invariant env.now <= host_time), and the buffer stays allocated."""
    rt.init(device_count=1)
    rt.set_device(0)
    s = rt.create_stream()
    never = rt.create_event()
    dx, dy = rt.malloc(4 * N), rt.malloc(4 * N)
    rt.launch_kernel(make_scale(N, 1, SLOW, "slow_scale"), 1, [dx, dy], s)
    rt.stream_wait_event(s, never)
    rt.memcpy_async(np.zeros(16, np.uint8), 16, dy, 16, MEMCPY_DEVICE_TO_HOST, s)
    before = runtime_state(rt)
    with pytest.raises(errors.AclError) as e:
        rt.free(dy)
    assert e.value.code == STREAM_SYNC_TIMEOUT
    assert runtime_state(rt) == before
    assert rt.device_time() >= 7.8125e-3 and rt.device_time() <= rt.host_time()
    rt.reset_device(0)


# ------------------------------------------------------------------------------------ reset_device
def test_reset_device_completes_when_one_stream_reports_a_race_while_another_still_runs(rt, make_scale):
    """Strict mode: the copy on stream a races with the long kernel on stream b. Before: the reset
    stopped draining at a's error, destroyed both streams, then refused to free y (207002)."""
    rt.init(device_count=1, strict=True)
    rt.set_device(0)
    a, b = rt.create_stream(), rt.create_stream()
    x, y = rt.malloc(4 * N), rt.malloc(4 * N)
    rt.launch_kernel(make_scale(N, 1, SLOW, "slow_scale"), 1, [x, y], b)
    rt.memcpy_async(np.zeros(4 * N, np.uint8), 4 * N, y, 4 * N, MEMCPY_DEVICE_TO_HOST, a)
    rt.reset_device(0)
    assert a not in rt.streams and b not in rt.streams
    assert rt.node.devices[0].memory.allocations == {} and rt.mem_stats(0).used == 0
    assert rt.device_time() >= 7.8125e-3             # the kernel ran to its end before its memory went
    rt.set_device(0)                                  # the device works again
    host = np.arange(256, dtype=np.uint8)
    p = rt.malloc(256)
    rt.memcpy(p, 256, host, 256, MEMCPY_HOST_TO_DEVICE)
    out = np.zeros(256, np.uint8)
    rt.memcpy(out, 256, p, 256, MEMCPY_DEVICE_TO_HOST)
    assert np.array_equal(out, host)


def test_reset_device_forgets_the_dropped_tasks_in_strict_mode(rt):
    """Before: a copy dropped from a blocked stream stayed among the device's unfinished tasks, and a
    later synchronous copy of memory at the same address was refused as a race with it."""
    rt.init(device_count=1, strict=True)
    rt.set_device(0)
    s = rt.create_stream()
    never = rt.create_event()
    p = rt.malloc(4096)
    rt.stream_wait_event(s, never)
    rt.memcpy_async(p, 4096, np.ones(4096, np.uint8), 4096, MEMCPY_HOST_TO_DEVICE, s)   # never runs
    rt.reset_device(0)
    assert _pending_task_count(rt, 0) == 0
    rt.set_device(0)
    q = rt.malloc(4096)
    assert q == p                                      # the same block, as the pool hands it out again
    rt.memset(q, 4096, 9, 4096)
    out = np.zeros(4096, np.uint8)
    rt.memcpy(out, 4096, q, 4096, MEMCPY_DEVICE_TO_HOST)
    assert np.array_equal(out, np.full(4096, 9, np.uint8))


def test_reset_device_drops_a_collective_that_waits_forever_and_releases_later_ones(rt):
    """All-reduce #2 (stream b, device 0) runs after #1, which sits behind a wait nothing will record;
    #3 (device 1) runs after #2. Before: the reset refused to free #2's buffer (207002) with its
    streams destroyed. Now #1 and #2 are dropped (counting as finished): #3 runs, and #2 never
    resumes to write into memory the device has handed out again."""
    rt.init(device_count=2)
    rt.set_device(0)
    world = rt.comm_init_world(1, 0)
    a, b = rt.create_stream(), rt.create_stream()
    never = rt.create_event()
    x1, x2 = rt.malloc(64), rt.malloc(64)
    rt.stream_wait_event(a, never)
    rt.all_reduce(x1, x1, 16, HCCL_FP32, HCCL_SUM, world, a)          # #1: queued behind the wait
    rt.all_reduce(x2, x2, 16, HCCL_FP32, HCCL_SUM, world, b)          # #2: waits for #1
    rt.set_device(1)
    c = rt.create_stream()
    data = np.arange(16, dtype=np.float32)
    z = rt.malloc(64)
    rt.memcpy(z, 64, data, 64, MEMCPY_HOST_TO_DEVICE)
    rt.all_reduce(z, z, 16, HCCL_FP32, HCCL_SUM, world, c)            # #3: waits for #2
    rt.reset_device(0)
    assert rt.node.devices[0].memory.allocations == {} and a not in rt.streams and b not in rt.streams
    rt.set_device(0)
    again = rt.malloc(64)
    rt.memset(again, 64, 0x5A, 64)
    rt.set_device(1)
    rt.synchronize_stream(c)                         # #3 ran: a world of one rank sums to its own data
    out = np.zeros(16, np.float32)
    rt.memcpy(out, 64, z, 64, MEMCPY_DEVICE_TO_HOST)
    assert np.array_equal(out, data)
    rt.set_device(0)
    mine = np.zeros(64, np.uint8)
    rt.memcpy(mine, 64, again, 64, MEMCPY_DEVICE_TO_HOST)
    assert np.array_equal(mine, np.full(64, 0x5A, np.uint8))


# --------------------------------------------------------------------------------- destroy_context
def test_destroy_context_that_cannot_drain_changes_nothing(rt):
    """Before: 507046, but the context was destroyed anyway and its default stream left alive."""
    rt.init(device_count=1)
    ctx = rt.create_context(0)
    default = rt.current_context.default_stream
    never = rt.create_event()
    rt.stream_wait_event(None, never)
    before = runtime_state(rt)
    with pytest.raises(errors.AclError) as e:
        rt.destroy_context(ctx)
    assert e.value.code == STREAM_SYNC_TIMEOUT
    assert runtime_state(rt) == before
    rt.set_current_context(ctx)                       # still usable
    other = rt.create_stream()
    rt.record_event(never, other)                     # the wait can end now
    rt.destroy_context(ctx)
    assert default not in rt.streams
    with pytest.raises(errors.AclError) as e:
        rt.set_current_context(ctx)
    assert e.value.code == CONTEXT_NULL


# ------------------------------------------------------------------------------------ launch_graph
def test_launch_graph_enqueues_the_whole_graph_when_only_its_own_record_releases_a_full_stream(rt, make_scale):
    """Queue depth 4: stream s waits for an event the graph records at its end. Before: the 4th launch
    waited for room that only the graph's record could make, and launch_graph failed (507046) with 3
    of its launches enqueued. Now the graph goes in whole and runs: y = 2 x (numpy)."""
    rt.init(spec=get_spec(stream_queue_depth=4), device_count=1)
    rt.set_device(0)
    s, s2 = rt.create_stream(), rt.create_stream()
    ev = rt.create_event()
    x = np.arange(N, dtype=np.float32)
    dx, dy = rt.malloc(4 * N), rt.malloc(4 * N)
    rt.memcpy(dx, 4 * N, x, 4 * N, MEMCPY_HOST_TO_DEVICE)
    rt.stream_wait_event(s, ev)
    k = make_scale(N, 1)
    issued = rt.streams[s].issued
    rt.launch_graph([Launch(k, [dx, dy], s) for _ in range(4)] + [RecordEvent(ev, s2)])
    assert rt.streams[s].issued == issued + 4 and rt.streams[s2].issued == 1
    rt.synchronize_device()
    out = np.zeros(N, np.float32)
    rt.memcpy(out, 4 * N, dy, 4 * N, MEMCPY_DEVICE_TO_HOST)
    assert np.array_equal(out, 2 * x)


def test_a_graph_that_can_never_finish_is_enqueued_whole_and_reported_at_the_sync(rt, make_scale):
    rt.init(spec=get_spec(stream_queue_depth=4), device_count=1)
    rt.set_device(0)
    s = rt.create_stream()
    never = rt.create_event()
    dx, dy = rt.malloc(4 * N), rt.malloc(4 * N)
    rt.stream_wait_event(s, never)
    rt.launch_graph([Launch(make_scale(N, 1), [dx, dy], s) for _ in range(6)])
    assert rt.streams[s].issued == 7                  # the wait and all 6 launches
    with pytest.raises(errors.AclError) as e:
        rt.synchronize_stream(s)
    assert e.value.code == STREAM_SYNC_TIMEOUT
    rt.reset_device(0)
    assert rt.mem_stats(0).used == 0


# ---------------------------------------------------------------------------------- collective steps
@pytest.mark.parametrize("root, dtype, code", [(3, HCCL_FP32, 1), (0, 99, 5)])   # HCCL_E_PARA, HCCL_E_NOT_SUPPORT
def test_a_refused_broadcast_step_between_two_buffers_enqueues_no_copy(rt, root, dtype, code):
    """A Broadcast step from one buffer to another is issued as a copy, then the in-place broadcast.
    Before: the copy was enqueued and then the broadcast refused (a rank the communicator lacks), or
    a data type the device does not hold leaked KeyError."""
    from ascendemu.device.collectives import Broadcast
    from ascendemu.hal.steps import Communicate
    rt.init(device_count=1)
    rt.set_device(0)
    world = rt.comm_init_world(1, 0)
    s = rt.create_stream()
    send, recv = rt.malloc(64), rt.malloc(64)
    before = runtime_state(rt)
    with pytest.raises(errors.AclError) as e:
        Communicate(Broadcast(root), send, recv, 16, dtype, world, s).issue(rt)
    assert e.value.code == code
    assert runtime_state(rt) == before and rt.streams[s].issued == 0
