"""The ACL-shaped runtime over the SimPy device model: ordering, timing, data, errors."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from ascendemu import errors
from ascendemu.device.cost import KernelCost, block_time
from ascendemu.device.spec import get_spec
from ascendemu.device.tasks import KernelTask
from ascendemu.hal import acl
from ascendemu.hal import runtime as runtime_module
from ascendemu.hal.api import is_api
from ascendemu.hal.steps import Launch, MemcpyAsync, RecordEvent, WaitEvent
from ascendemu.hal.runtime import (EVENT_STATUS_COMPLETE, EVENT_STATUS_NOT_READY, MEMCPY_DEVICE_TO_DEVICE,
                                   MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE)

N = 4096


def upload(rt, host: np.ndarray) -> int:
    ptr = rt.malloc(host.nbytes)
    rt.memcpy(ptr, host.nbytes, host, host.nbytes, MEMCPY_HOST_TO_DEVICE)
    return ptr


def download(rt, ptr: int, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    rt.memcpy(out, out.nbytes, ptr, out.nbytes, MEMCPY_DEVICE_TO_HOST)
    return out


def big_cost():
    # 1e9 fp16 vector ops: 1e9 / (128 lanes * 1 GHz) = 7.8125 ms on one core
    return KernelCost(vector_ops=10**9, bytes=0, dtype="float16")


def _ab_streams(rt, make_scale, wait: bool, strict: bool = False) -> float:
    """Kernel A on stream 1, kernel B on stream 2; returns start(B) - end(A) in simulated ms."""
    rt.init(strict=strict)
    rt.set_device(0)
    s1, s2 = rt.create_stream(), rt.create_stream()
    x = np.arange(N, dtype=np.float32)
    dx, dy, dz = upload(rt, x), rt.malloc(4 * N), rt.malloc(4 * N)
    a_done, b_start = rt.create_event(), rt.create_event()
    rt.launch_kernel(make_scale(N, 1, big_cost(), "A"), 1, [dx, dy], s1)
    rt.record_event(a_done, s1)
    if wait:
        rt.stream_wait_event(s2, a_done)
    rt.record_event(b_start, s2)
    rt.launch_kernel(make_scale(N, 1, big_cost(), "B"), 1, [dy, dz], s2)
    rt.synchronize_device()
    result = download(rt, dz, x)
    if wait:   # B read A's output only after A finished: 4x
        np.testing.assert_array_equal(result, 4 * x)
    return rt.event_elapsed_time(a_done, b_start)


def test_wait_event_orders_streams(rt, make_scale):
    # strict mode finds no race in a correctly synchronised program
    assert _ab_streams(rt, make_scale, wait=True, strict=True) >= 0.0


def test_without_wait_streams_overlap(rt, make_scale):
    gap = _ab_streams(rt, make_scale, wait=False)
    assert gap < -7.0   # B started while A (7.8 ms) was still running


def test_elapsed_time_matches_cost_model(rt, make_scale):
    spec = get_spec()
    rt.init()
    rt.set_device(0)
    s = rt.create_stream()
    dx, dy = rt.malloc(4 * N), rt.malloc(4 * N)
    cost = KernelCost(cube_flops=0, vector_ops=2 * 10**8, bytes=10**8, dtype="float16")
    e0, e1, e2 = rt.create_event(), rt.create_event(), rt.create_event()
    # a long kernel first keeps the stream busy, so the host's launch costs hide behind it
    rt.launch_kernel(make_scale(N, 1, big_cost()), 1, [dx, dy], s)
    rt.record_event(e0, s)
    rt.launch_kernel(make_scale(N, 32, cost), 32, [dx, dy], s)
    rt.record_event(e1, s)
    rt.launch_kernel(make_scale(N, 64, cost), 64, [dx, dy], s)
    rt.record_event(e2, s)
    rt.synchronize_stream(s)
    # by hand (device/cost.py): 1e8 B spread over all 32 cores: vector 2e8 / (32 x 128 lanes x 1 GHz) =
    # 48.8 us, HBM 1e8 / 1.2e12 = 83.3 us, the cores' ports 1e8 / (32 x 31.5 B x 1 GHz) = 99.2 us: port-bound
    body = 1e8 / (32 * spec.core_port_bytes_per_cycle * 1e9)
    assert body > 1e8 / 1.2e12 > 2e8 / (32 * 128e9)
    one_wave = 2e-6 + body + 1e-6
    assert rt.event_elapsed_time(e0, e1) == pytest.approx(one_wave * 1e3, rel=1e-9)
    # 64 blocks on 32 cores: two waves, each block holding its core for half the body
    t64 = block_time(spec, cost, 64)
    assert t64 == pytest.approx(body / 2 + 1e-6)
    assert rt.event_elapsed_time(e1, e2) == pytest.approx((2e-6 + 2 * t64) * 1e3, rel=1e-9)


def test_round_trip_and_memset(rt):
    rt.init()
    rt.set_device(0)
    data = np.random.default_rng(0).integers(0, 256, 100_003, dtype=np.uint8)
    a = upload(rt, data)
    b = rt.malloc(data.size)
    rt.memcpy(b, data.size, a, data.size, MEMCPY_DEVICE_TO_DEVICE)
    np.testing.assert_array_equal(download(rt, b, data), data)
    rt.memset(b, data.size, 0xAB, 1000)
    out = download(rt, b, data)
    assert (out[:1000] == 0xAB).all()
    np.testing.assert_array_equal(out[1000:], data[1000:])
    # async variants on a stream, host buffer from malloc_host
    s = rt.create_stream()
    h = rt.malloc_host(data.size)
    rt.memcpy_async(h, data.size, a, data.size, MEMCPY_DEVICE_TO_HOST, s)
    assert not rt.host_buffer(h).any()     # nothing moved before the stream ran
    rt.synchronize_stream(s)
    np.testing.assert_array_equal(rt.host_buffer(h), data)


def test_missing_sync_reads_stale_data_and_strict_mode_flags_it(rt, make_scale):
    x = np.arange(N, dtype=np.float32)
    for strict in (False, True):
        if rt.node is not None:
            rt.finalize()
        rt.init(strict=strict)
        rt.set_device(0)
        s = rt.create_stream()
        dx, dy = upload(rt, x), rt.malloc(4 * N)
        rt.launch_kernel(make_scale(N, 1, big_cost()), 1, [dx, dy], s)   # runs 7.8 ms
        if not strict:
            assert not download(rt, dy, x).any()       # the kernel has not run yet: zeros, like hardware
            rt.synchronize_stream(s)
            np.testing.assert_array_equal(download(rt, dy, x), 2 * x)
        else:
            with pytest.raises(errors.RaceError, match="has not finished writing"):
                download(rt, dy, x)


def test_stream_event_queries(rt, make_scale):
    rt.init()
    rt.set_device(0)
    s = rt.create_stream()
    dx, dy = rt.malloc(4 * N), rt.malloc(4 * N)
    ev = rt.create_event()
    rt.launch_kernel(make_scale(N, 1, big_cost()), 1, [dx, dy], s)
    rt.record_event(ev, s)
    assert rt.query_stream(s) is False
    assert rt.query_event_status(ev) == EVENT_STATUS_NOT_READY
    rt.synchronize_event(ev)
    assert rt.query_event_status(ev) == EVENT_STATUS_COMPLETE
    assert rt.query_stream(s) is True
    assert rt.host_time() >= rt.device_time() >= 7.8e-3


def test_deadlock_is_reported_not_hung(rt, make_scale):
    rt.init()
    rt.set_device(0)
    s = rt.create_stream()
    ev = rt.create_event()
    rt.stream_wait_event(s, ev)
    with pytest.raises(errors.StreamSyncTimeoutError) as info:
        rt.synchronize_stream(s)
    assert info.value.code == 507046
    assert f"stream {s}" in info.value.message and f"event {ev}" in info.value.message
    behind = rt.create_event()
    rt.record_event(behind, s)                      # queued behind the endless wait
    with pytest.raises(errors.EventSyncTimeoutError) as info:
        rt.synchronize_event(behind)
    assert info.value.code == 507047 and f"event {behind}" in info.value.message
    # recoverable: record the event and the stream drains
    other = rt.create_stream()
    rt.record_event(ev, other)
    rt.synchronize_stream(s)
    assert rt.query_stream(s)


def test_host_order_reuse_on_one_stream_is_safe(rt, make_scale):
    """Free and reuse in host order while kernels are queued (MindSpore's pool does this): the stream
    runs them in order and memory keeps its bytes like HBM, so results stay right."""
    rt.init()
    rt.set_device(0)
    s = rt.create_stream()
    x = np.arange(N, dtype=np.float32)
    dx = upload(rt, x)
    dy = rt.malloc(4 * N)
    rt.launch_kernel(make_scale(N, 1, big_cost()), 1, [dx, dy], s)      # y = 2x, still queued
    rt.free(dx)
    dz = rt.malloc(4 * N)                                               # best fit hands back x's block
    assert dz == dx
    rt.launch_kernel(make_scale(N, 1), 1, [dy, dz], s)                  # z = 2y, overwrites x's bytes
    rt.synchronize_stream(s)
    np.testing.assert_array_equal(download(rt, dz, x), 4 * x)


def test_strict_mode_flags_cross_stream_reuse_without_event(rt, make_scale):
    rt.init(strict=True)
    rt.set_device(0)
    s1, s2 = rt.create_stream(), rt.create_stream()
    dx, dy, dw = rt.malloc(4 * N), rt.malloc(4 * N), rt.malloc(4 * N)
    rt.launch_kernel(make_scale(N, 1, big_cost()), 1, [dx, dy], s1)     # reads x for 7.8 ms
    with pytest.raises(errors.RaceError, match="has not finished using"):
        rt.free(dx)                                                     # reported at once; x stays allocated
    rt.launch_kernel(make_scale(N, 1), 1, [dw, dx], s2)                 # writes x on stream 2, no event
    with pytest.raises(errors.RaceError, match="writes device memory .* has not finished reading"):
        rt.synchronize_device()


def test_bad_inputs(rt, make_scale):
    with pytest.raises(errors.ContextNullError, match="before init"):
        rt.malloc(16)
    rt.init(device_count=2)
    with pytest.raises(errors.InvalidDeviceError, match="devices 0..1") as e:
        rt.set_device(5)
    assert e.value.code == 107001
    with pytest.raises(errors.ContextNullError, match="set_device"):
        rt.malloc(16)
    rt.set_device(0)
    for size in (0, -1, 1.5):
        with pytest.raises(errors.InvalidParamError, match="positive integer") as e:
            rt.malloc(size)
        assert e.value.code == 100000
    p = rt.malloc(1000)
    rt.free(p)
    with pytest.raises(errors.MemoryFreeError) as e:
        rt.free(p)
    assert e.value.code == 207002 and "already freed" in e.value.message
    q = rt.malloc(1000)
    with pytest.raises(errors.MemoryFreeError, match="inside the live block starting at"):
        rt.free(q + 64)
    with pytest.raises(errors.MemoryFreeError):
        rt.free(0xDEAD_0000)
    host = np.zeros(2000, np.uint8)
    with pytest.raises(errors.InvalidParamError, match="runs past the end of its allocation"):
        rt.memcpy(q, 2000, host, 2000, MEMCPY_HOST_TO_DEVICE)
    with pytest.raises(errors.InvalidParamError, match="exceeds dest_max"):
        rt.memcpy(q, 10, host, 20, MEMCPY_HOST_TO_DEVICE)
    with pytest.raises(errors.InvalidParamError, match="not inside any live allocation"):
        rt.memcpy(0x1234, 10, host, 10, MEMCPY_HOST_TO_DEVICE)
    s = rt.create_stream()
    rt.destroy_stream(s)
    with pytest.raises(errors.RtParamInvalidError, match="destroyed") as e:
        rt.synchronize_stream(s)
    assert e.value.code == 107000
    ev = rt.create_event()
    rt.destroy_event(ev)
    with pytest.raises(errors.RtParamInvalidError, match="destroyed"):
        rt.record_event(ev, 0)
    e1, e2 = rt.create_event(), rt.create_event()
    with pytest.raises(errors.RtParamInvalidError, match="never recorded"):
        rt.event_elapsed_time(e1, e2)
    # a pointer of device 0 is unknown on device 1
    rt.set_device(1)
    with pytest.raises(errors.InvalidParamError, match="device 1"):
        rt.memcpy(host, 10, q, 10, MEMCPY_DEVICE_TO_HOST)
    rt.set_device(0)
    k = make_scale(N, 1)
    with pytest.raises(errors.InvalidParamError, match="takes 2 arguments"):
        rt.launch_kernel(k, 1, [q], 0)
    with pytest.raises(errors.InvalidParamError, match="runs past the end"):
        rt.launch_kernel(k, 1, [q, q], 0)
    with pytest.raises(errors.KernelLookupError) as e:
        rt.launch_kernel(12345, 1, [q, q], 0)
    assert e.value.code == 507027


def test_stream_and_event_limits(rt):
    rt.init(spec=get_spec(max_streams=4, max_events=3), device_count=1)
    rt.set_device(0)
    for _ in range(3):          # the default stream is the 4th
        rt.create_stream()
    with pytest.raises(errors.NoStreamResourceError) as e:
        rt.create_stream()
    assert e.value.code == 207008 and "limit 4" in e.value.message
    for _ in range(3):
        rt.create_event()
    with pytest.raises(errors.NoEventResourceError) as e:
        rt.create_event()
    assert e.value.code == 207007


def test_pyacl_layer_returns_codes(rt, make_scale):
    assert acl.init() == 0
    assert acl.rt.set_device(9) == 107001
    assert "invalid device id" in acl.get_recent_err_msg()
    assert acl.rt.set_device(0) == 0
    ptr, ret = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0 and isinstance(ptr, int)
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    free, total = rt.get_mem_info()
    (f2, t2, ret) = acl.rt.get_mem_info()
    assert ret == 0 and (f2, t2) == (free, total) and total == 32 << 30
    assert acl.rt.free(ptr) == 0
    assert acl.rt.free(ptr) == 207002
    _, ret = acl.rt.malloc(0, 0)
    assert ret == 100000
    assert acl.finalize() == 0


def test_defragmentation_keeps_data(rt):
    """Fill a small HBM with 1 MiB blocks, free every other one, then ask for 4 MiB contiguous."""
    rt.init(spec=get_spec(hbm_bytes=64 << 20, pool_expand_unit=64 << 20), device_count=1)
    rt.set_device(0)
    MiB = 1 << 20
    blocks = [rt.malloc(MiB * 2 - 64) for _ in range(31)]
    payload = {p: np.full(1000, i, np.uint8) for i, p in enumerate(blocks)}
    for p, data in payload.items():
        rt.memcpy(p, 1000, data, 1000, MEMCPY_HOST_TO_DEVICE)
    for p in blocks[::2]:
        rt.free(p)
        del payload[p]
    big = rt.malloc(8 * MiB)
    assert rt.mem_stats().defrag_count >= 1
    for p, data in payload.items():
        np.testing.assert_array_equal(download(rt, p, data), data)
    rt.memset(big, 8 * MiB, 7, 8 * MiB)
    assert (download(rt, big, np.zeros(8 * MiB, np.uint8)) == 7).all()


def _spans_nest(events):
    by_track = {}
    for ev in events:
        if ev.get("ph") == "X":
            by_track.setdefault((ev["pid"], ev["tid"]), []).append((ev["ts"], ev["ts"] + ev["dur"]))
    for spans in by_track.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end in spans:
            while stack and stack[-1] <= start + 1e-6:
                stack.pop()
            if stack and end > stack[-1] + 1e-6:
                return False
            stack.append(end)
    return True


def test_chrome_trace_is_valid_and_nested(rt, make_scale, tmp_path):
    rt.init(trace=True)
    rt.set_device(0)
    s1, s2 = rt.create_stream(), rt.create_stream()
    dx, dy = rt.malloc(4 * N), rt.malloc(4 * N)
    ev = rt.create_event()
    rt.launch_kernel(make_scale(N, 40), 40, [dx, dy], s1)
    rt.record_event(ev, s1)
    rt.stream_wait_event(s2, ev)
    rt.launch_kernel(make_scale(N, 1), 1, [dy, dx], s2)
    rt.synchronize_device()
    path = rt.write_trace(tmp_path / "run.trace.json")
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert {e["tid"] for e in kernels} == {s1, s2}
    assert len([e for e in events if e.get("cat") == "block"]) == 41
    assert {e["ph"] for e in events if e.get("cat") == "event" and e["ph"] in "sf"} == {"s", "f"}
    names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert f"device 0 stream {s1}" in names
    assert _spans_nest(events)


def test_contexts_and_multiple_devices_share_one_clock(rt, make_scale):
    rt.init(device_count=2)
    assert rt.get_device_count() == 2
    c0 = rt.create_context(0)
    p0 = rt.malloc(4 * N)
    c1 = rt.create_context(1)
    assert rt.get_device() == 1
    p1 = rt.malloc(4 * N)
    assert p0 != p1
    s1 = rt.create_stream()
    rt.set_current_context(c0)
    assert rt.get_device() == 0
    s0 = rt.create_stream()
    # a long kernel on each device: they run concurrently on the shared clock
    rt.launch_kernel(make_scale(N, 1, big_cost()), 1, [p0, rt.malloc(4 * N)], s0)
    rt.set_current_context(c1)
    rt.launch_kernel(make_scale(N, 1, big_cost()), 1, [p1, rt.malloc(4 * N)], s1)
    rt.synchronize_stream(s1)
    rt.set_current_context(c0)
    rt.synchronize_stream(s0)
    assert rt.device_time() == pytest.approx(7.8125e-3 + 3e-6 + 30e-6, abs=20e-6)   # not 2 x 7.8 ms
    rt.destroy_context(c1)
    with pytest.raises(errors.ContextNullError, match="destroyed"):
        rt.set_current_context(c1)


def test_full_stream_queue_blocks_the_host(rt, make_scale):
    """Like a full submission queue on the chip: the launching host waits for the device."""
    rt.init(spec=get_spec(stream_queue_depth=4), device_count=1)
    rt.set_device(0)
    s = rt.create_stream()
    dx, dy = rt.malloc(4 * N), rt.malloc(4 * N)
    for _ in range(20):
        rt.launch_kernel(make_scale(N, 1, big_cost()), 1, [dx, dy], s)
    assert len(rt.streams[s].queue) <= 4
    # the host could only run ahead of the device by the queue depth: >= 14 of 20 kernels (7.8 ms each) done
    assert rt.host_time() >= 14 * 7.8125e-3
    rt.synchronize_stream(s)
    assert rt.device_time() == pytest.approx(20 * (7.8125e-3 + 3e-6) + 10e-6 + 3e-6, rel=1e-3)


def test_memory_snapshot_for_memory_viz(rt, tmp_path):
    import pickle
    rt.init(device_count=1)
    rt.set_device(0)
    ptrs = [rt.malloc(1000), rt.malloc(5000)]
    rt.free(ptrs[0])
    path = rt.dump_memory_snapshot(tmp_path / "snap.pickle")
    snap = pickle.loads(path.read_bytes())
    blocks = [b for seg in snap["segments"] for b in seg["blocks"]]
    live = [b for b in blocks if b["state"] == "active_allocated"]
    assert [b["address"] for b in live] == [ptrs[1]]
    assert sum(seg["total_size"] for seg in snap["segments"]) == rt.mem_stats().reserved


def test_every_api_call_passes_the_choke_point(rt, make_scale):
    """Recorders (the hook a trace recorder uses) see each successful call with its result and host time."""
    seen = []
    rt.recorders.append(lambda name, args, kwargs, result, t: seen.append((name, result, t)))
    try:
        rt.init(device_count=1)
        rt.set_device(0)
        s = rt.create_stream()
        p = rt.malloc(4 * N)
        rt.launch_kernel(make_scale(N, 1), 1, [p, p], s)
        rt.synchronize_stream(s)
        with pytest.raises(errors.MemoryFreeError):
            rt.free(p + 64)
        rt.free(p)
    finally:
        rt.recorders.clear()
    assert [name for name, _, _ in seen] == ["init", "set_device", "create_stream", "malloc", "launch_kernel",
                                             "synchronize_stream", "free"]
    assert seen[2][1] == s and seen[3][1] == p
    times = [t for _, _, t in seen]
    assert times == sorted(times) and times[4] - times[3] == pytest.approx(10e-6)   # the launch's host cost


def test_wait_on_never_recorded_event_times_out_and_device_keeps_working(rt, make_scale):
    """The deadlock is found without SimPy's error text, and leaves no stop hook behind: a later run on
    another stream runs to its end (a run cut short would leave the kernel unfinished)."""
    rt.init(device_count=1)
    rt.set_device(0)
    stuck, other = rt.create_stream(), rt.create_stream()
    never = rt.create_event()
    rt.stream_wait_event(stuck, never)
    behind = rt.create_event()
    rt.record_event(behind, stuck)
    with pytest.raises(errors.EventSyncTimeoutError) as info:
        rt.synchronize_event(behind)
    assert info.value.code == 507047 and f"stream {stuck}" in info.value.message
    with pytest.raises(errors.StreamSyncTimeoutError) as info:
        rt.synchronize_stream(stuck)
    assert info.value.code == 507046
    x = np.arange(N, dtype=np.float32)
    dx, dy = upload(rt, x), rt.malloc(4 * N)
    start, end = rt.create_event(), rt.create_event()
    rt.record_event(start, other)
    rt.launch_kernel(make_scale(N, 1, big_cost()), 1, [dx, dy], other)
    rt.record_event(end, other)
    rt.synchronize_stream(other)
    assert rt.query_stream(other) and not rt.query_stream(stuck)
    np.testing.assert_array_equal(download(rt, dy, x), 2 * x)
    # the kernel starts when the host has issued it (10 us launch after the record), runs 7.8125 ms + 3 us
    assert rt.event_elapsed_time(start, end) == pytest.approx((10e-6 + 7.8125e-3 + 3e-6) * 1e3, rel=1e-9)


def test_launch_graph_takes_typed_steps_and_validates_all_before_enqueuing(rt, make_scale):
    rt.init(device_count=1)
    rt.set_device(0)
    s1, s2 = rt.create_stream(), rt.create_stream()
    ev = rt.create_event()
    k = make_scale(N, 1)
    x = np.arange(N, dtype=np.float32)
    dx, dy, dz = upload(rt, x), rt.malloc(4 * N), rt.malloc(4 * N)
    out = np.zeros_like(x)
    steps = [Launch(k, [dx, dy], s1), RecordEvent(ev, s1), WaitEvent(ev, s2), Launch(k, [dy, dz], s2, 1),
             MemcpyAsync(out, out.nbytes, dz, out.nbytes, MEMCPY_DEVICE_TO_HOST, s2)]
    # an old-style tuple item, or a bad step, is refused before anything is enqueued
    for bad in (("kernel", k, 1, [dx, dy], s1), Launch(k, [dx], s2)):
        with pytest.raises(errors.InvalidParamError) as e:
            rt.launch_graph(steps[:2] + [bad])
        assert e.value.code == 100000
    with pytest.raises(errors.InvalidParamError, match=r"launch_graph item \('kernel'.* is not a step"):
        rt.launch_graph([("kernel", k, 1, [dx, dy], s1)])
    assert rt.query_stream(s1) and rt.query_stream(s2)
    with pytest.raises(errors.RtParamInvalidError, match="never recorded"):      # the record was not issued
        rt.event_elapsed_time(ev, ev)
    host0 = rt.host_time()
    rt.launch_graph(steps)
    assert rt.host_time() - host0 == pytest.approx(get_spec().graph_launch_overhead_s)   # one host cost
    rt.synchronize_device()
    np.testing.assert_array_equal(out, 4 * x)
    # each step issued as its single call does the same work
    out[:] = 0
    rt.memset(dy, 4 * N, 0, 4 * N)
    for step in steps:
        step.issue(rt)
    rt.synchronize_device()
    np.testing.assert_array_equal(out, 4 * x)
    with pytest.raises(dataclasses.FrozenInstanceError):
        steps[0].stream = s2


def test_module_level_api_is_explicit_and_complete(rt):
    """Every public call is a statically bound name of ``ascendemu.hal.runtime`` (no module __getattr__)."""
    public = {n for n in dir(runtime_module.Runtime) if is_api(getattr(runtime_module.Runtime, n))}
    public |= {"device_time", "host_time", "mem_stats", "write_trace", "host_buffer", "dump_memory_snapshot"}
    assert public <= set(runtime_module.__all__)
    assert not hasattr(runtime_module, "__getattr__")
    for name in public:
        bound = runtime_module.__dict__[name]
        assert bound.__self__ is runtime_module.get_runtime() and bound.__func__ is getattr(type(rt), name)
    runtime_module.init(device_count=1)          # init/finalize keep the one runtime: names stay valid
    runtime_module.set_device(0)
    runtime_module.free(runtime_module.malloc(64))
    runtime_module.finalize()
    runtime_module.init(device_count=1)
    runtime_module.set_device(0)
    assert runtime_module.get_device() == 0


def test_check_int_is_the_one_int_validator():
    assert errors.check_int(7, "count", minimum=0) == 7
    for bad, valid in ((True, "an int in 1..65535"), (1.0, "an int in 1..65535"), (0, "an int in 1..65535"),
                       (70000, "an int in 1..65535")):
        with pytest.raises(errors.InvalidParamError) as e:
            errors.check_int(bad, "block_dim", minimum=1, maximum=65535)
        assert e.value.code == 100000 and f"invalid block_dim {bad!r}: must be {valid}" in e.value.message
    with pytest.raises(errors.InvalidParamError, match="must be a non-negative int"):
        errors.check_int(-1, "memcpy count", minimum=0)
    with pytest.raises(errors.InvalidDeviceError, match="invalid device id 3: must be an int in 0..1; see") as e:
        errors.check_int(3, "device id", minimum=0, maximum=1, error=errors.InvalidDeviceError, hint="see")
    assert e.value.code == 107001


def test_a_32_gib_device_serves_a_31_gib_malloc_on_a_smaller_host(rt):
    """Backing is reserved lazily (MAP_NORESERVE even where Python's mmap lacks the constant), so the
    emulated HBM may exceed host RAM; untouched pages cost nothing."""
    rt.init()
    rt.set_device(0)
    free0, total = rt.get_mem_info()
    assert total == 32 << 30
    ptr = rt.malloc(31 << 30)
    assert rt.get_mem_info()[0] < free0 - (30 << 30)
    rt.memset(ptr + (31 << 30) - 4096, 4096, 7, 4096)      # touch the last page only
    out = np.empty(4096, np.uint8)
    rt.memcpy(out, 4096, ptr + (31 << 30) - 4096, 4096, MEMCPY_DEVICE_TO_HOST)
    assert (out == 7).all()
    rt.free(ptr)
    assert rt.get_mem_info()[0] == free0


def test_a_host_refusal_is_acl_207001_and_leaves_the_pool_unchanged(rt, monkeypatch):
    from ascendemu.device import memory

    rt.init()
    rt.set_device(0)
    before = rt.mem_stats()

    def refuse(self, start, size):
        raise OSError(12, "Cannot allocate memory")
    monkeypatch.setattr(memory._Backing, "__init__", refuse)
    with pytest.raises(errors.MemoryAllocationError, match="host refused") as e:
        rt.malloc(1 << 20)
    assert e.value.code == 207001
    assert rt.mem_stats().used == before.used == 0
    monkeypatch.undo()
    assert rt.malloc(1 << 20)                                 # later mallocs work


def test_reset_device_always_cleans_up_after_a_deadlock_and_frees_event_slots(rt):
    """aclrtResetDevice succeeds even when a stream waits forever, and returns every event slot:
    four resets of 300 events each fit under the 1024-event limit."""
    rt.init()
    for _ in range(4):
        rt.set_device(0)
        stream = rt.create_stream()
        events = [rt.create_event() for _ in range(300)]
        rt.stream_wait_event(stream, events[0])          # never recorded: the stream can never finish
        with pytest.raises(errors.StreamSyncTimeoutError):
            rt.synchronize_stream(stream)
        rt.destroy_event(events[0])
        rt.reset_device(0)                               # succeeds, and the device is clean
        assert rt.node.devices[0].events == {}
    rt.set_device(0)
    ptr = rt.malloc(64)
    rt.memset(ptr, 64, 3, 64)
    rt.synchronize_device()


def test_async_copies_refuse_a_stream_of_another_device_and_host_refusals_take_nothing(rt):
    rt.init()
    rt.set_device(1)
    other = rt.create_stream()
    rt.set_device(0)
    ptr = rt.malloc(64)
    data = np.ones(64, np.uint8)
    with pytest.raises(errors.RtParamInvalidError, match="stream .* is on device 1"):
        rt.memcpy_async(ptr, 64, data, 64, MEMCPY_HOST_TO_DEVICE, other)
    with pytest.raises(errors.RtParamInvalidError, match="stream .* is on device 1"):
        rt.memset_async(ptr, 64, 0, 64, other)
    first = rt.malloc_host(16)
    with pytest.raises(errors.MemoryAllocationError) as e:
        rt.malloc_host(1 << 50)                         # the host refuses: ACL 207001, no address taken
    assert e.value.code == 207001
    assert rt.malloc_host(16) == first + 4096 + 4096    # the next buffer follows the first, guard page between


def test_destroy_context_releases_its_default_stream(rt):
    """1100 create/destroy cycles stay under the 1024-stream limit: each context's stream is released."""
    rt.init()
    for _ in range(1100):
        ctx = rt.create_context(0)
        rt.destroy_context(ctx)
    rt.set_device(0)
    assert len([s for s in rt.node.devices[0].streams.values() if not s.destroyed]) == 1


def _host_bound_trace(rt, make_scale, tmp_path, name: str) -> tuple[list, int]:
    """Host-bound 1-block launches on two streams, a 40-block launch in between (more blocks than
    cores) and launches that find every core busy: the trace's spans and the SimPy events it took."""
    rt.init(device_count=1, trace=True)
    rt.set_device(0)
    s1, s2 = rt.create_stream(), rt.create_stream()
    dx, dy = rt.malloc(4 * N), rt.malloc(4 * N)
    tiny, wide = make_scale(N, 1), make_scale(N, 40, big_cost(), "wide")
    for i in range(30):
        rt.launch_kernel(tiny, 1, [dx, dy], s2 if 10 <= i < 14 else s1)
        if i == 12:
            rt.launch_kernel(wide, 40, [dx, dy], s2)
    rt.synchronize_device()
    events = next(rt.node.env._eid)     # SimPy numbers every event it schedules
    spans = [(e["tid"], e["name"], e["ts"], e["dur"]) for e in
             json.loads(rt.write_trace(tmp_path / name).read_text())["traceEvents"] if e.get("ph") == "X"]
    rt.finalize()
    return spans, events


def test_folded_launch_wait_keeps_simulated_times(rt, make_scale, tmp_path, monkeypatch):
    # a host-bound 1-block launch waits for its submit time and holds its core in one SimPy event
    # (KernelTask.run_from); the reference is the same run with two events per launch
    folded, folded_events = _host_bound_trace(rt, make_scale, tmp_path, "folded.json")
    monkeypatch.setattr(KernelTask, "run_from", lambda self, device, stream, at: None)
    spans, events = _host_bound_trace(rt, make_scale, tmp_path, "unfolded.json")
    assert folded == spans
    assert sum(1 for s in spans if s[1] == "wide") == 41     # 40 blocks and the launch: the wide kernel ran
    assert folded_events < events - 10                      # eleven of the launches folded
