"""Stateful fuzz of the ACL runtime against a shadow model (issue 8, item 9).

A hypothesis RuleBasedStateMachine issues random sequences of runtime calls on a 2-device node:
malloc/free, malloc_host/free_host, memcpy (H2D, D2H, D2D, H2H; synchronous and asynchronous, with numpy
arrays, bytes or malloc_host pointers on the host side), memset, streams, events, set/reset device,
kernel and graph launches. In about half the calls one argument is replaced by a bad value: a wrong type
(None, a bool, a float, a numpy float or bool, a str, a list, a dict, an object or strided array, an int
no 64-bit argument holds, a negative int) or a wrong state (a freed pointer, another device's pointer,
an offset past the end, a destroyed stream or event, a count over dest_max, another device's stream).
Each call goes to the Pythonic runtime or, at random, through the pyACL layer. The shadow (dicts and
numpy byte arrays) predicts every outcome:

* a failure is an AclError subclass (pyACL: a return code) with the code the shadow predicts; any other
  exception fails the test (the runtime has no catch-all that could hide one);
* a success agrees with the shadow: bytes read back equal the shadow's (the bytes the test wrote: fresh
  memory keeps whatever its pages held, like HBM), a new allocation overlaps no live one;
* the pool agrees with the shadow after every call: live allocations, their sizes, used bytes; and so do
  the live streams, events and host buffers and the current device;
* a call that fails changes nothing: the runtime's observable state (``test_hal_atomic.runtime_state``:
  handles of every chapter, tasks enqueued per stream, event records, contexts, allocations and pool
  counters) is the same after it as before.

Asynchronous work goes to one stream at a time (the harness synchronises it before anything else touches
memory), so the shadow applies it in issue order.

Budget: ASCENDEMU_FUZZ_EXAMPLES sequences (default 80, derandomized: the same sequences in every CI run,
a few seconds) of up to ASCENDEMU_FUZZ_STEPS calls (default 40). A long random run:
``ASCENDEMU_FUZZ_EXAMPLES=3000 .venv/bin/python -m pytest -s tests/test_runtime_fuzz.py`` prints the
sequences and calls made and the failures by ACL code.
"""
from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test
from test_hal_atomic import runtime_state
from test_runtime_validation import expected_code

from ascendemu import errors
from ascendemu.device.cost import KernelCost
from ascendemu.errors import AclError
from ascendemu.hal import acl
from ascendemu.hal.kernel import ArgSpec, KernelFunction
from ascendemu.hal.runtime import (EVENT_STATUS_COMPLETE, EVENT_STATUS_NOT_READY, MEMCPY_DEFAULT,
                                   MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE,
                                   MEMCPY_HOST_TO_HOST, get_runtime)
from ascendemu.hal.steps import Launch, MemcpyAsync, RecordEvent

LONG_RUN = "ASCENDEMU_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("ASCENDEMU_FUZZ_EXAMPLES", "80"))
STEPS = int(os.environ.get("ASCENDEMU_FUZZ_STEPS", "40"))

OK = errors.ACL_SUCCESS
INVALID_PARAM, RT_PARAM = errors.ACL_ERROR_INVALID_PARAM, errors.ACL_ERROR_RT_PARAM_INVALID
DEVICE_ID, ALLOC, FREE = errors.ACL_ERROR_RT_INVALID_DEVICEID, errors.ACL_ERROR_RT_MEMORY_ALLOCATION, \
    errors.ACL_ERROR_RT_MEMORY_FREE
LOOKUP = errors.ACL_ERROR_RT_KERNEL_LOOKUP
SYNC_TIMEOUT = errors.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
H2H, H2D, D2H, D2D, DEFAULT = (MEMCPY_HOST_TO_HOST, MEMCPY_HOST_TO_DEVICE, MEMCPY_DEVICE_TO_HOST,
                               MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEFAULT)
DEVICES = 2
MAX_SIZE = 2000
ARG_BYTES = 64                   # the fuzz kernel reads 64 bytes and writes 64 bytes

# Values of the wrong type for every int parameter (sizes, counts, handles, enums), and for the others
# unless filtered below: the kinds of bad argument the issue lists, and a few more.
JUNK = (None, True, False, 1.5, 1.0, np.float32(1.0), np.float64(2.0), np.bool_(True), "1", b"1", [1], (1,),
        {}, {1}, object(), complex(1), 2**64, 2**70, -1, np.int64(-1), np.array([1]), np.zeros(3, object),
        np.zeros((4, 4))[:, ::2])


def _plain_buffer(v: object) -> bool:
    return isinstance(v, np.ndarray) and not v.dtype.hasobject and v.flags.c_contiguous


# JUNK values that are valid for some parameters: filtered out of their bad values
VALID_AS = {"dst": _plain_buffer, "src": lambda v: _plain_buffer(v) or isinstance(v, bytes),
            "stream": lambda v: v is None, "block_dim": lambda v: v is None}
PYACL = {f.__wrapped__.__name__: f for f in vars(acl.rt).values()}
STATS: Counter = Counter()


def block(size: int) -> int:
    """Bytes the pool takes for malloc(size): ACL rounds to 32 B and adds 32 B, the pool aligns to 512 B."""
    return -(-(-(-size // 32) * 32 + 32) // 512) * 512


def junk(param: str) -> st.SearchStrategy:
    """A value of a wrong type for ``param``."""
    valid = VALID_AS.get(param, lambda v: False)
    return st.sampled_from([v for v in JUNK if not valid(v)])


@dataclass
class Alloc:
    """A live allocation in the shadow: its bytes and which of them the test wrote."""

    ptr: int
    size: int
    device: int | None          # None: host memory from malloc_host
    data: np.ndarray
    known: np.ndarray

    @classmethod
    def new(cls, ptr: int, size: int, device: int | None) -> Alloc:
        known = np.full(size, device is None)        # malloc_host memory starts zeroed; HBM holds anything
        return cls(ptr, size, device, np.zeros(size, np.uint8), known)


@dataclass
class EventState:
    device: int
    recorded: bool = False       # a record was issued since creation or reset
    complete: bool = False       # ... and the host has waited for it


class RuntimeMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        STATS["sequences"] += 1
        self.rt = get_runtime()
        if self.rt.node is not None:
            self.rt.finalize()
        self.rt.init(device_count=DEVICES)
        self.rt.set_device(0)
        self.dev = 0
        self.allocs: dict[int, Alloc] = {}      # live device allocations (device ranges never overlap)
        self.hosts: dict[int, Alloc] = {}       # live malloc_host allocations
        self.stale: list[int] = [0x1234, 10**6]  # freed pointers and destroyed handles, reused as bad values
        self.streams: dict[int, int] = {}       # live user stream -> device
        self.events: dict[int, EventState] = {}
        self.pending: tuple[int, object] | None = None   # (device, stream key) of unsynchronised work
        self.host_checks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []   # async D2H: array, bytes, known
        self.kernel = KernelFunction("fuzz", 0, 1, (ArgSpec(ARG_BYTES, "in"), ArgSpec(ARG_BYTES, "out")),
                                     KernelCost())
        self.function = self.rt.register_function(self.kernel)

    # -- calling and predicting ----------------------------------------------------------------------
    def call(self, data, name: str, args: tuple, expect: int | set[int]):
        """Call ``name`` on the runtime or through pyACL; its outcome must be one the shadow expects."""
        allowed = expect if isinstance(expect, set) else {expect}
        STATS["calls"] += 1
        message = ""
        before = runtime_state(self.rt)
        if name in PYACL and data.draw(st.booleans(), label="via pyACL"):
            ret = PYACL[name](*args)
            code, result = (ret, None) if isinstance(ret, int) else (ret[-1], ret[0] if len(ret) == 2 else ret[:-1])
            if code:
                message = acl.get_recent_err_msg()
        else:
            try:
                code, result = OK, getattr(self.rt, name)(*args)
            except AclError as e:
                code, result, message = e.code, None, e.message
        STATS[f"failed with {code}" if code else "succeeded"] += 1
        STATS[f"call {name}"] += 1
        assert code in allowed, f"{name}{args!r:.300} -> {code} {message}; the shadow expected {sorted(allowed)}"
        if code:
            assert runtime_state(self.rt) == before, f"{name}{args!r:.300} failed with {code} but changed the runtime"
        return code, result

    def bad(self, data, name: str, params: list[str]) -> str | None:
        """Which argument of this call to corrupt: None (a valid call) about half the time."""
        return data.draw(st.one_of(st.none(), st.sampled_from(params)), label=f"{name}: corrupt")

    def live(self, device: int | None = None) -> list[Alloc]:
        return [a for a in self.allocs.values() if a.device == (self.dev if device is None else device)]

    def device_alloc_at(self, ptr: object, device: int | None) -> Alloc | None:
        """The live allocation whose pool block holds ``ptr`` (on ``device``; None: on any device)."""
        if type(ptr) is not int:
            return None
        for a in self.allocs.values():
            if (device is None or a.device == device) and a.ptr <= ptr < a.ptr + block(a.size):
                return a
        return None

    def device_span(self, ptr: object, count: int) -> tuple[Alloc, int] | None:
        """(allocation, offset) if [ptr, ptr + count) lies in one live allocation of the current device."""
        a = self.device_alloc_at(ptr, self.dev)
        return (a, ptr - a.ptr) if a is not None and ptr - a.ptr + count <= a.size else None

    def host_span(self, ptr: object, count: int) -> tuple[Alloc, int] | None:
        if type(ptr) is not int:
            return None
        for a in self.hosts.values():
            if a.ptr <= ptr < a.ptr + a.size and ptr - a.ptr + count <= a.size:
                return a, ptr - a.ptr
        return None

    def stream_device(self, stream: object) -> int | None:
        """The device of a stream argument that names a live stream (None and 0: the default stream)."""
        if type(stream) is not int:
            return self.dev if stream is None else None
        return self.dev if stream == 0 else self.streams.get(stream)

    def stream_key(self, stream: object) -> object:
        return ("default", self.dev) if stream is None or stream == 0 else stream

    def sync_pending(self) -> None:
        """Harness: finish the one stream with asynchronous work, then check the host arrays it filled."""
        if self.pending is None:
            return
        device = self.pending[0]
        if device != self.dev:
            self.rt.set_device(device)
        self.rt.synchronize_device()
        if device != self.dev:
            self.rt.set_device(self.dev)
        self.pending = None
        for ev in self.events.values():
            ev.complete = ev.recorded
        for array, expected, known in self.host_checks:
            np.testing.assert_array_equal(array[:expected.size][known], expected[known])
        self.host_checks.clear()

    def stream_work(self, stream: object) -> None:
        """Harness: work is about to go to ``stream``; only one stream may have unfinished work."""
        key = (self.stream_device(stream), self.stream_key(stream))
        if self.pending is not None and self.pending != key:
            self.sync_pending()
        self.pending = key

    # -- arguments -------------------------------------------------------------------------------------
    def any_stream(self, data, device: int) -> object:
        return data.draw(st.sampled_from([None, 0] + [s for s, d in self.streams.items() if d == device]))

    def bad_stream(self, data) -> object:
        """A stream argument that names no usable stream: a wrong type, stale, or another device's."""
        others = [s for s, d in self.streams.items() if d != self.dev]
        return data.draw(st.one_of(junk("stream"), st.sampled_from(self.stale + others)))

    def has_memory(self, need: int = 1) -> bool:
        return any(a.size >= need for a in self.live())

    def count(self, data, device_side: bool) -> int:
        """A byte count for a copy or memset: up to 256, and for device memory, what the largest live
        allocation of the current device holds."""
        return data.draw(st.integers(0, min(256, max(a.size for a in self.live())) if device_side else 256))

    def device_pointer(self, data, need: int) -> int:
        """A pointer into a live allocation of the current device with room for ``need`` bytes."""
        a = data.draw(st.sampled_from([a for a in self.live() if a.size >= need]))
        return a.ptr + data.draw(st.integers(0, a.size - need))

    def bad_pointer(self, data, room: int) -> int:
        """A pointer that is (most likely) wrong here: freed, another device's, past an allocation's end."""
        choices = list(self.stale)
        choices += [a.ptr for a in self.allocs.values() if a.device != self.dev]
        choices += [a.ptr + a.size - room + 1 for a in self.live() if a.size - room + 1 >= 0]
        choices += [h.ptr + h.size for h in self.hosts.values()]
        return data.draw(st.sampled_from(choices))

    def host_source(self, data, count: int) -> object:
        """A host source of ``count`` bytes: an array of some dtype, bytes, or a malloc_host pointer."""
        raw = np.frombuffer(data.draw(st.binary(min_size=count, max_size=count)), np.uint8).copy()
        hosts = [h for h in self.hosts.values() if h.size >= count]
        form = data.draw(st.sampled_from(["array", "float32", "bytes"] + (["pointer"] if hosts else [])))
        if form == "bytes":
            return raw.tobytes()
        if form == "pointer":
            h = data.draw(st.sampled_from(hosts))
            return h.ptr + data.draw(st.integers(0, h.size - count))
        return raw.view(np.float32) if form == "float32" and count % 4 == 0 else raw

    def host_destination(self, data, count: int) -> object:
        """A host destination with room for ``count`` bytes: a fresh array, or a malloc_host pointer."""
        hosts = [h for h in self.hosts.values() if h.size >= count]
        if hosts and data.draw(st.booleans()):
            h = data.draw(st.sampled_from(hosts))
            return h.ptr + data.draw(st.integers(0, h.size - count))
        return np.zeros(data.draw(st.integers(count, count + 8)), np.uint8)

    # -- memory --------------------------------------------------------------------------------------
    @rule(data=st.data())
    def malloc(self, data) -> None:
        size, policy = data.draw(st.integers(1, MAX_SIZE)), data.draw(st.integers(0, 2))
        bad = self.bad(data, "malloc", ["size", "policy"])
        expect = OK
        if bad == "size":
            size, expect = data.draw(st.one_of(junk("size").map(lambda v: (v, INVALID_PARAM)),
                                               st.just((0, INVALID_PARAM)), st.just((1 << 60, ALLOC))))
        elif bad == "policy":
            policy, expect = data.draw(st.one_of(junk("policy"), st.integers(3, 9))), INVALID_PARAM
        code, ptr = self.call(data, "malloc", (size, policy), expect)
        if code == OK:
            assert type(ptr) is int
            for a in self.live():
                assert ptr + block(size) <= a.ptr or a.ptr + block(a.size) <= ptr, "overlaps a live allocation"
            self.allocs[ptr] = Alloc.new(ptr, size, self.dev)

    @rule(data=st.data())
    def free(self, data) -> None:
        live = self.live()
        bad = self.bad(data, "free", ["ptr"]) if live else "ptr"
        if bad is None:
            ptr = data.draw(st.sampled_from(live)).ptr
        else:
            ptr = data.draw(st.one_of(junk("ptr"), st.just(self.bad_pointer(data, 1)),
                                      st.sampled_from([a.ptr + 32 for a in live] or [1])))
        a = self.allocs.get(ptr) if type(ptr) is int else None
        ok = a is not None and a.device == self.dev
        code, _ = self.call(data, "free", (ptr,), OK if ok else FREE)
        if code == OK:
            del self.allocs[ptr]
            self.stale.append(ptr)

    @rule(data=st.data())
    def malloc_host(self, data) -> None:
        size, expect = data.draw(st.integers(1, MAX_SIZE)), OK
        if self.bad(data, "malloc_host", ["size"]):
            size, expect = data.draw(st.one_of(junk("size"), st.just(0))), INVALID_PARAM
        code, ptr = self.call(data, "malloc_host", (size,), expect)
        if code == OK:
            assert type(ptr) is int and self.host_span(ptr, 0) is None and self.device_alloc_at(ptr, None) is None
            self.hosts[ptr] = Alloc.new(ptr, size, None)

    @rule(data=st.data())
    def free_host(self, data) -> None:
        hosts = list(self.hosts)
        bad = self.bad(data, "free_host", ["ptr"]) if hosts else "ptr"
        ptr = (data.draw(st.sampled_from(hosts)) if bad is None
               else data.draw(st.one_of(junk("ptr"), st.just(self.bad_pointer(data, 1)))))
        self.sync_pending()              # an async copy may still read the buffer
        code, _ = self.call(data, "free_host", (ptr,), OK if type(ptr) is int and ptr in self.hosts else FREE)
        if code == OK:
            del self.hosts[ptr]
            self.stale.append(ptr)

    @precondition(has_memory)
    @rule(data=st.data(), direction=st.sampled_from(["H2D", "D2H", "D2D", "H2H"]), asynchronous=st.booleans())
    def memcpy(self, data, direction: str, asynchronous: bool) -> None:
        dst_dev, src_dev = direction in ("H2D", "D2D"), direction in ("D2H", "D2D")
        count = self.count(data, dst_dev or src_dev)
        src = self.device_pointer(data, count) if src_dev else self.host_source(data, count)
        dst = self.device_pointer(data, count) if dst_dev else self.host_destination(data, count)
        dest_max = count + data.draw(st.integers(0, 64))
        kind = data.draw(st.sampled_from([{"H2D": H2D, "D2H": D2H, "D2D": D2D, "H2H": H2H}[direction], DEFAULT]))
        stream = self.any_stream(data, self.dev)
        params = ["dst", "dest_max", "src", "count", "kind"] + (["stream"] if asynchronous else [])
        bad = self.bad(data, "memcpy", params)
        type_bad = False
        if bad in ("dst", "src"):
            if data.draw(st.booleans()):
                value, type_bad = data.draw(junk(bad)), True
            elif (dst_dev if bad == "dst" else src_dev) or data.draw(st.booleans()):
                value = self.bad_pointer(data, count)
            else:
                value = np.zeros(max(count - 1, 0), np.uint8) if count else np.zeros(1, np.uint8)[1:]
            dst, src = (value, src) if bad == "dst" else (dst, value)
        elif bad in ("count", "dest_max"):
            if data.draw(st.booleans()):
                value, type_bad = data.draw(junk(bad)), True
            else:
                value = dest_max + 1 if bad == "count" else max(count - 1, 0)
            count, dest_max = (value, dest_max) if bad == "count" else (count, value)
        elif bad == "kind":
            kind, type_bad = data.draw(st.one_of(junk("kind"), st.integers(5, 9))), True
        elif bad == "stream":
            stream = self.bad_stream(data)
        name = "memcpy_async" if asynchronous else "memcpy"
        args = (dst, dest_max, src, count, kind) + ((stream,) if asynchronous else ())
        expect, effect = (expected_code(name, bad), None) if type_bad else self.predict_copy(*args)
        if not asynchronous or expect != OK:
            self.sync_pending()
        if asynchronous and expect == OK:
            self.stream_work(stream)
        code, _ = self.call(data, name, args, expect)
        if code == OK:
            self.apply_copy(effect, asynchronous)

    def predict_copy(self, dst, dest_max, src, count, kind, stream=None):
        """(expected code, effect) of a type-valid memcpy, in the runtime's order of checks."""
        stream_dev = self.stream_device(stream)
        if stream_dev is None:
            return RT_PARAM, None
        if count > dest_max:
            return INVALID_PARAM, None
        if kind == DEFAULT:
            kind = {(False, False): H2H, (False, True): H2D, (True, False): D2H, (True, True): D2D}[
                (self.device_alloc_at(src, None) is not None, self.device_alloc_at(dst, None) is not None)]
        sides = []
        for side, device_side, writable in ((dst, kind in (H2D, D2D), True), (src, kind in (D2H, D2D), False)):
            if device_side:
                span = self.device_span(side, count)
            elif isinstance(side, np.ndarray):
                span = (side.reshape(-1).view(np.uint8), 0) if side.nbytes >= count else None
            elif isinstance(side, bytes):
                span = (np.frombuffer(side, np.uint8), 0) if not writable and len(side) >= count else None
            else:
                span = self.host_span(side, count)
            if span is None:
                return INVALID_PARAM, None
            sides.append(span)
        if stream_dev != self.dev:
            return RT_PARAM, None
        return OK, (sides[0], sides[1], count)

    def apply_copy(self, effect, asynchronous: bool) -> None:
        """Apply a successful copy to the shadow; a host array it fills is checked now, or after the sync."""
        (dst, dst_at), (src, src_at), count = effect
        if isinstance(src, Alloc):
            moved, known = src.data[src_at:src_at + count].copy(), src.known[src_at:src_at + count].copy()
        else:       # the bytes of a host array or bytes object
            moved, known = src[:count].copy(), np.ones(count, bool)
        if isinstance(dst, Alloc):
            dst.data[dst_at:dst_at + count] = moved
            dst.known[dst_at:dst_at + count] = known
        elif asynchronous:
            self.host_checks.append((dst, moved, known))
        else:
            np.testing.assert_array_equal(dst[:count][known], moved[known])

    @precondition(has_memory)
    @rule(data=st.data(), asynchronous=st.booleans())
    def memset(self, data, asynchronous: bool) -> None:
        count = self.count(data, True)
        ptr = self.device_pointer(data, count)
        max_count = count + data.draw(st.integers(0, 64))
        value, stream = data.draw(st.integers(0, 255)), self.any_stream(data, self.dev)
        bad = self.bad(data, "memset", ["ptr", "max_count", "value", "count"] + (["stream"] if asynchronous else []))
        type_bad = bad is not None and bad != "stream" and data.draw(st.booleans())
        if type_bad:
            given = {"ptr": ptr, "max_count": max_count, "value": value, "count": count}
            given[bad] = data.draw(junk(bad))
            ptr, max_count, value, count = given.values()
        elif bad == "ptr":
            ptr = self.bad_pointer(data, count)
        elif bad in ("max_count", "count"):
            max_count, count = (count - 1, count) if bad == "max_count" and count else (max_count, max_count + 1)
        elif bad == "value":
            value, type_bad = data.draw(st.sampled_from([256, 1000, 2**63])), True
        elif bad == "stream":
            stream = self.bad_stream(data)
        name = "memset_async" if asynchronous else "memset"
        args = (ptr, max_count, value, count) + ((stream,) if asynchronous else ())
        span = None
        if type_bad:
            expect = expected_code(name, bad)
        elif asynchronous and self.stream_device(stream) is None:
            expect = RT_PARAM
        elif count > max_count or (span := self.device_span(ptr, count)) is None:
            expect = INVALID_PARAM
        elif asynchronous and self.stream_device(stream) != self.dev:
            expect = RT_PARAM
        else:
            expect = OK
        if not asynchronous or expect != OK:
            self.sync_pending()
        if asynchronous and expect == OK:
            self.stream_work(stream)
        code, _ = self.call(data, name, args, expect)
        if code == OK:
            a, at = span
            a.data[at:at + count] = value
            a.known[at:at + count] = True

    @precondition(has_memory)
    @rule(data=st.data())
    def read_back(self, data) -> None:
        """A plain D2H copy of a whole allocation: the known bytes must be the shadow's."""
        a = data.draw(st.sampled_from(self.live()))
        self.sync_pending()
        out = np.full(a.size, 0xEE, np.uint8)
        self.call(data, "memcpy", (out, a.size, a.ptr, a.size, D2H), OK)
        np.testing.assert_array_equal(out[a.known], a.data[a.known])

    # -- streams, events, devices -------------------------------------------------------------------------
    @rule(data=st.data())
    def create_stream(self, data) -> None:
        code, s = self.call(data, "create_stream", (), OK)
        assert type(s) is int and s not in self.streams
        self.streams[s] = self.dev

    @rule(data=st.data())
    def destroy_stream(self, data) -> None:
        live = list(self.streams)
        bad = self.bad(data, "destroy_stream", ["stream"]) if live else "stream"
        stream = data.draw(st.sampled_from(live)) if bad is None else data.draw(
            st.one_of(junk("stream"), st.sampled_from(self.stale + [0])))
        self.sync_pending()
        code, _ = self.call(data, "destroy_stream", (stream,), OK if bad is None else RT_PARAM)
        if code == OK:
            del self.streams[stream]
            self.stale.append(stream)

    @rule(data=st.data())
    def synchronize(self, data) -> None:
        self.sync_pending()
        if data.draw(st.booleans()):
            self.call(data, "synchronize_device", (), OK)
            return
        stream = self.any_stream(data, self.dev) if not self.bad(data, "synchronize_stream", ["stream"]) \
            else self.bad_stream(data)
        live = self.stream_device(stream) is not None
        self.call(data, "synchronize_stream", (stream,), OK if live else RT_PARAM)
        if live:
            code, idle = self.call(data, "query_stream", (stream,), OK)
            assert idle is True

    @rule(data=st.data())
    def create_event(self, data) -> None:
        flags, expect = data.draw(st.sampled_from([0, 8, 1, 2**32 - 1])), OK
        if self.bad(data, "create_event", ["flags"]):
            flags, expect = data.draw(st.one_of(junk("flags"), st.just(2**32))), INVALID_PARAM
        code, ev = self.call(data, "create_event", (flags,), expect)
        if code == OK:
            assert type(ev) is int and ev not in self.events and ev not in self.streams
            self.events[ev] = EventState(self.dev)

    def event_arg(self, data, bad: bool, recorded: bool = False) -> object:
        live = [e for e, st_ in self.events.items() if st_.recorded or not recorded]
        if bad or not live:
            return data.draw(st.one_of(junk("event"), st.sampled_from(self.stale)))
        return data.draw(st.sampled_from(live))

    @rule(data=st.data())
    def destroy_event(self, data) -> None:
        ev = self.event_arg(data, self.bad(data, "destroy_event", ["event"]) is not None)
        code, _ = self.call(data, "destroy_event", (ev,), OK if type(ev) is int and ev in self.events else RT_PARAM)
        if code == OK:
            del self.events[ev]
            self.stale.append(ev)

    @rule(data=st.data(), wait=st.booleans())
    def record_or_wait(self, data, wait: bool) -> None:
        """record_event(event, stream) or stream_wait_event(stream, event) (on a recorded event only: a wait
        nothing will ever satisfy blocks its stream for good)."""
        bad = self.bad(data, "record_event", ["event", "stream"])
        ev = self.event_arg(data, bad == "event", recorded=wait)
        state = self.events.get(ev) if type(ev) is int else None
        if bad == "stream":
            stream = self.bad_stream(data)
        elif state is not None and state.device != self.dev:    # None and 0 name the current device's stream
            stream = data.draw(st.sampled_from([s for s, d in self.streams.items() if d == state.device] or [None]))
        else:
            stream = self.any_stream(data, self.dev)
        ok = state is not None and self.stream_device(stream) == state.device
        if ok:
            self.stream_work(stream)
        name, args = ("stream_wait_event", (stream, ev)) if wait else ("record_event", (ev, stream))
        code, _ = self.call(data, name, args, OK if ok else RT_PARAM)
        if code == OK and not wait:
            self.events[ev].recorded, self.events[ev].complete = True, False

    @rule(data=st.data())
    def observe_event(self, data) -> None:
        """synchronize_event, query_event_status, reset_event, event_elapsed_time against the shadow."""
        bad = self.bad(data, "event", ["event"]) is not None
        ev, other = self.event_arg(data, bad), self.event_arg(data, False)
        state = self.events.get(ev) if type(ev) is int else None
        expect = OK if state is not None else RT_PARAM
        what = data.draw(st.sampled_from(["synchronize_event", "query_event_status", "reset_event",
                                          "event_elapsed_time"]))
        if what == "synchronize_event":
            code, _ = self.call(data, what, (ev,), expect)
            if code == OK:
                state.complete = state.recorded
        elif what == "query_event_status":
            code, status = self.call(data, what, (ev,), expect)
            if code == OK and (state.complete or not state.recorded):
                assert status == (EVENT_STATUS_COMPLETE if state.complete else EVENT_STATUS_NOT_READY)
        elif what == "reset_event":
            code, _ = self.call(data, what, (ev, None), expect)
            if code == OK:
                state.recorded = state.complete = False
        else:
            end = self.events.get(other) if type(other) is int else None
            if expect == OK and end is None:
                expect = RT_PARAM
            elif expect == OK and not (state.recorded and end.recorded):
                expect = RT_PARAM                                  # never recorded
            elif expect == OK and not (state.complete and end.complete):
                expect = {OK, RT_PARAM}                            # may have finished on its own by now
            code, ms = self.call(data, what, (ev, other), expect)
            if code == OK:
                assert math.isfinite(ms)

    @rule(data=st.data())
    def set_device(self, data) -> None:
        if data.draw(st.integers(0, 7), label="reset instead") == 0:      # rarely: it frees everything
            self.reset_device(data)
            return
        device, expect = data.draw(st.integers(0, DEVICES - 1)), OK
        if self.bad(data, "set_device", ["device_id"]):
            device, expect = data.draw(st.one_of(junk("device_id"), st.integers(DEVICES, 200))), DEVICE_ID
        code, _ = self.call(data, "set_device", (device,), expect)
        if code == OK:
            self.dev = device
            code, current = self.call(data, "get_device", (), OK)
            assert current == device

    def reset_device(self, data) -> None:
        """Frees the device's memory and retires its streams and events (then the harness sets it again)."""
        device = data.draw(st.integers(0, DEVICES - 1))
        if self.bad(data, "reset_device", ["device_id"]):
            self.call(data, "reset_device", (data.draw(st.one_of(junk("device_id"), st.just(DEVICES))),), DEVICE_ID)
            return
        self.sync_pending()
        self.call(data, "reset_device", (device,), OK)
        gone = ([a.ptr for a in self.live(device)] + [s for s, d in self.streams.items() if d == device]
                + [e for e, state in self.events.items() if state.device == device])
        for h in gone:
            for table in (self.allocs, self.streams, self.events):
                table.pop(h, None)
        self.stale += gone
        if device == self.dev:
            self.rt.set_device(device)           # harness: a current context again

    @rule(data=st.data(), stuck=st.integers(0, 3).map(lambda i: i == 0))
    def context_cycle(self, data, stuck: bool) -> None:
        """create_context, then destroy_context, which waits for the context's default stream. ``stuck``:
        that stream first waits on an event nothing has recorded, so the first destroy_context fails
        (507046) and must change nothing; a record on another stream then releases the wait. The
        harness makes its device current again afterwards."""
        device = data.draw(st.integers(0, DEVICES - 1))
        self.sync_pending()
        code, ctx = self.call(data, "create_context", (device,), OK)
        if stuck:
            _, ev = self.call(data, "create_event", (0,), OK)
            self.call(data, "stream_wait_event", (None, ev), OK)
            self.call(data, "destroy_context", (ctx,), SYNC_TIMEOUT)
            _, other = self.call(data, "create_stream", (), OK)
            self.call(data, "record_event", (ev, other), OK)
            self.call(data, "destroy_stream", (other,), OK)
            self.call(data, "destroy_event", (ev,), OK)
            self.stale += [ev, other]
        if self.bad(data, "destroy_context", ["context"]):
            value = data.draw(st.one_of(junk("context"), st.sampled_from(self.stale)))
            self.call(data, "destroy_context", (value,), expected_code("destroy_context", "context"))
        self.call(data, "destroy_context", (ctx,), OK)
        self.stale.append(ctx)
        self.rt.set_device(self.dev)

    @rule(data=st.data())
    def mem_info(self, data) -> None:
        code, (free, total) = self.call(data, "get_mem_info", (), OK)
        assert total - free == sum(block(a.size) for a in self.live())

    # -- launches ------------------------------------------------------------------------------------
    def launch_step(self, data, bad: str | None) -> tuple[tuple, int]:
        """Arguments of a launch of the fuzz kernel (one argument bad if ``bad``) and the expected code."""
        func = data.draw(st.sampled_from([self.kernel, self.function]))
        block_dim = data.draw(st.sampled_from([1, None]))
        args = [self.device_pointer(data, ARG_BYTES) for _ in range(2)]
        stream = self.any_stream(data, self.dev)
        expect = OK
        if bad == "func":
            func, expect = data.draw(st.one_of(junk("func"), st.sampled_from(self.stale))), LOOKUP
        elif bad == "block_dim":
            block_dim, expect = data.draw(st.one_of(junk("block_dim"), st.integers(2, 70000))), INVALID_PARAM
        elif bad == "args":
            choice = data.draw(st.sampled_from(["type", "short", "pointer", "element"]))
            args = {"type": data.draw(junk("args")), "short": args[:1],
                    "pointer": [args[0], self.bad_pointer(data, ARG_BYTES)],
                    "element": [args[0], data.draw(junk("element"))]}[choice]
            ok = type(args) is list and len(args) == 2 and all(self.device_span(p, ARG_BYTES) for p in args)
            expect = OK if ok else INVALID_PARAM       # a "bad" pointer may have been reallocated since
        elif bad == "stream":
            stream, expect = self.bad_stream(data), RT_PARAM
            if self.stream_device(stream) is not None:     # another device's stream: our pointers are foreign there
                expect = INVALID_PARAM
        return (func, block_dim, args, stream), expect

    def can_launch(self) -> bool:
        return self.has_memory(ARG_BYTES)

    @precondition(can_launch)
    @rule(data=st.data())
    def launch_kernel(self, data) -> None:
        args, expect = self.launch_step(data, self.bad(data, "launch_kernel", ["func", "block_dim", "args", "stream"]))
        if expect == OK:
            self.stream_work(args[3])
        self.call(data, "launch_kernel", args, expect)

    @precondition(can_launch)
    @rule(data=st.data())
    def launch_graph(self, data) -> None:
        """A launch, an H2D copy and (given an event) a record on one stream, sunk at once; one step or
        field may be bad."""
        (func, block_dim, args, stream), _ = self.launch_step(data, None)
        count = data.draw(st.integers(0, ARG_BYTES))
        dst = self.device_pointer(data, count)
        src = np.frombuffer(data.draw(st.binary(min_size=count, max_size=count)), np.uint8).copy()
        ev = data.draw(st.sampled_from([e for e, s in self.events.items() if s.device == self.dev] or [None]))
        fields = {"kernel": func, "args": args, "block_dim": block_dim, "dst": dst, "src": src, "count": count}
        if ev is not None:
            fields["event"] = ev
        bad = self.bad(data, "launch_graph", list(fields) + ["item", "steps"])
        if bad in fields:
            fields[bad] = data.draw(junk(bad))
        steps = [Launch(fields["kernel"], fields["args"], stream, fields["block_dim"]),
                 MemcpyAsync(fields["dst"], count, fields["src"], fields["count"], H2D, stream)]
        if ev is not None:
            steps.append(RecordEvent(fields["event"], stream))
        if bad == "item":
            steps.insert(data.draw(st.integers(0, 3)), data.draw(junk("item")))
        if bad == "steps":
            steps = data.draw(junk("steps"))
        if bad in ("item", "steps"):
            expect = INVALID_PARAM
        else:
            expect = OK if bad is None else expected_code("launch_graph", bad)
        if expect == OK:
            self.stream_work(stream)
        else:
            self.sync_pending()
        code, _ = self.call(data, "launch_graph", (steps,), expect)
        if code == OK:
            a, at = self.device_span(dst, count)
            a.data[at:at + count] = src
            a.known[at:at + count] = True
            if ev is not None:
                self.events[ev].recorded, self.events[ev].complete = True, False

    # -- invariants ------------------------------------------------------------------------------------
    @invariant()
    def pool_matches_shadow(self) -> None:
        for device in range(DEVICES):
            live = self.live(device)
            assert self.rt.node.devices[device].memory.allocations == {a.ptr: a.size for a in live}
            assert self.rt.mem_stats(device).used == sum(block(a.size) for a in live)

    @invariant()
    def handles_match_shadow(self) -> None:
        """The runtime's live user streams, events and host buffers are the shadow's, on its devices."""
        rt = self.rt
        defaults = {c.default_stream for c in rt.contexts.values() if not c.destroyed}
        assert {h: s.device.id for h, s in rt.streams.items() if h not in defaults} == self.streams
        assert {h: e.device.id for h, e in rt.events.items()} == {h: e.device for h, e in self.events.items()}
        assert set(rt._host) == set(self.hosts)
        assert rt.current_context.device_id == self.dev

    @invariant()
    def host_memory_matches_shadow(self) -> None:
        if self.pending is None:
            for h in self.hosts.values():
                np.testing.assert_array_equal(self.rt.host_buffer(h.ptr)[h.known], h.data[h.known])

    def teardown(self) -> None:
        """Every live allocation read back: its known bytes are the shadow's."""
        try:
            self.sync_pending()
            for device in range(DEVICES):
                self.rt.set_device(device)
                for a in self.live(device):
                    out = np.zeros(a.size, np.uint8)
                    self.rt.memcpy(out, a.size, a.ptr, a.size, D2H)
                    np.testing.assert_array_equal(out[a.known], a.data[a.known])
        finally:
            self.rt.finalize()


def test_runtime_against_shadow_model():
    """Random call sequences (a few seconds in CI; ASCENDEMU_FUZZ_EXAMPLES for a long run): only typed ACL
    errors with the predicted codes, results the shadow agrees with."""
    STATS.clear()
    run_state_machine_as_test(RuntimeMachine, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, derandomize=not LONG_RUN,
        database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]))
    failures = {k: v for k, v in sorted(STATS.items()) if k.startswith("failed")}
    print(f"\nfuzz: {STATS['sequences']} sequences, {STATS['calls']} calls, {STATS['succeeded']} succeeded, "
          f"failures by ACL code: {failures}")
    print("calls by name:", {k[5:]: v for k, v in sorted(STATS.items()) if k.startswith("call ")})
    assert STATS["calls"] > STATS["sequences"] and failures and STATS["succeeded"]
