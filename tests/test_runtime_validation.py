"""Argument validation at the runtime's choke point (hal/validate.py), in the Pythonic and pyACL layers.

The oracle is the ACL contract written out here by hand: which code a bad value of each parameter gets
(:data:`CODES`), independent of the table in hal/validate.py. Every public call is enumerated from the
Runtime class, so a new call without a template here fails :func:`test_every_call_has_a_template`.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascendemu import errors
from ascendemu.device.cost import GetNext
from ascendemu.hal import acl
from ascendemu.hal.api import api_call, is_api
from ascendemu.hal.runtime import (MEMCPY_DEFAULT, MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE, Runtime,
                                   get_runtime)
from ascendemu.hal.steps import Launch, MemcpyAsync, RecordEvent, WaitEvent

# The code a bad value of a parameter gets: its chapter's code for an unknown value of it (ACL's codes).
CODES = {
    "device_id": errors.ACL_ERROR_RT_INVALID_DEVICEID,          # 107001
    "context": errors.ACL_ERROR_RT_CONTEXT_NULL,                # 107002
    "stream": errors.ACL_ERROR_RT_PARAM_INVALID,                # 107000
    "event": errors.ACL_ERROR_RT_PARAM_INVALID,
    "start": errors.ACL_ERROR_RT_PARAM_INVALID,
    "end": errors.ACL_ERROR_RT_PARAM_INVALID,
    "binary": errors.ACL_ERROR_RT_PARAM_INVALID,
    "func": errors.ACL_ERROR_RT_KERNEL_LOOKUP,                  # 507027
    "kernel": errors.ACL_ERROR_RT_KERNEL_LOOKUP,                # the same, as a graph step's field
    "name": errors.ACL_ERROR_RT_KERNEL_LOOKUP,
    "launch_kernel.name": errors.ACL_ERROR_INVALID_PARAM,       # the launch's trace name, not a kernel to look up
    "free.ptr": errors.ACL_ERROR_RT_MEMORY_FREE,                # 207002
    "free_host.ptr": errors.ACL_ERROR_RT_MEMORY_FREE,
    "register_function.func": errors.ACL_ERROR_INVALID_PARAM,   # a KernelFunction object, not a handle
    "loop_task.task": errors.ACL_ERROR_RT_PARAM_INVALID,        # not one of a sunk loop's tasks
    # the collective chapter: HCCL's HCCL_E_PARA for a bad communicator, data type, reduce op, rank or group
    **dict.fromkeys(("comm", "dtype", "op", "root", "peer", "rank_size", "rank_id", "ranks",
                     "comm_create_group.name", "comm_find.name", "comm_init_world.name"), errors.HCCL_E_PARA),
}


def expected_code(call: str, param: str) -> int:
    return CODES.get(f"{call}.{param}", CODES.get(param, errors.ACL_ERROR_INVALID_PARAM))


# Values no parameter accepts: wrong types (unhashable ones too), floats however integral, bools and
# numpy bools, ints no 64-bit argument can hold, negative ints.
NUMPY_TRUE, NUL_BYTES = np.bool_(True), b"\0"
ALWAYS_BAD = [object(), 1.5, 1.0, np.float32(1.0), {}, {1}, complex(1), NUMPY_TRUE, 2**64, 2**70, -1,
              np.int64(-1), NUL_BYTES]
FLAGS = ("strict", "defrag", "trace", "backing", "taken")   # the only parameters that take True/False
STRINGS = ("spec", "path", "name")             # the only parameters that take a str
NONE_OK = ("stream", "block_dim", "taken")     # None is a value of these (default stream, kernel's blockDim, no branch)


def bad_values(call: str, param: inspect.Parameter) -> list:
    values = list(ALWAYS_BAD)
    if param.name in FLAGS:                     # a numpy bool is a bool
        values = [v for v in values if v is not NUMPY_TRUE]
    else:
        values += [True, False]
    if param.name in ("src", "args"):           # bytes are a memcpy source and a packed argument buffer
        values = [v for v in values if v is not NUL_BYTES]
    if param.name not in STRINGS:
        values += ["1"]
    if param.default is not None and param.name not in NONE_OK:
        values.append(None)
    if param.name not in ("args", "steps", "ranks"):     # containers; their items are checked by their own rules
        values += [[1], (1,)]
    return values


def public_calls() -> dict[str, inspect.Signature]:
    """Every public call of the Runtime and its signature (self first)."""
    return {name: inspect.signature(getattr(Runtime, name)) for name in dir(Runtime) if is_api(getattr(Runtime, name))}


@pytest.fixture
def ready(rt, make_scale):
    """A node with live objects of every kind, and one type-valid argument tuple per public call. The
    tuples need only be of the right types: the layer checks every argument's type before a call runs."""
    rt.init(device_count=2)
    rt.set_device(0)
    k = make_scale(16, 1)
    d, s, e = rt.malloc(256), rt.create_stream(), rt.create_event()
    h = rt.malloc_host(256)
    host = np.zeros(64, np.uint8)
    templates = {
        "init": (None, 2, False, True, False, True), "finalize": (), "device_time": (), "host_time": (),
        "write_trace": ("/nonexistent/trace.json",), "start_trace": (), "trace_events": (),
        "get_device_count": (), "set_device": (0,), "reset_device": (1,), "get_device": (),
        "create_context": (1,), "destroy_context": (10**6,), "set_current_context": (10**6,),
        "create_stream": (), "destroy_stream": (10**6,), "synchronize_stream": (s,), "synchronize_device": (),
        "query_stream": (s,), "stream_wait_event": (s, 10**6), "create_event": (0,), "destroy_event": (10**6,),
        "record_event": (10**6, s), "reset_event": (10**6, s), "query_event_status": (e,),
        "synchronize_event": (e,), "event_elapsed_time": (e, 10**6),
        "malloc": (64, 0), "free": (d + 64,), "malloc_host": (64,), "free_host": (h + 64,), "get_mem_info": (),
        "memcpy": (d, 256, host, 64, MEMCPY_HOST_TO_DEVICE), "memcpy_async": (host, 64, d, 64, 2, s),
        "memset": (d, 256, 7, 16), "memset_async": (d, 256, 7, 16, s),
        "load_binary": ("/nonexistent/kernel.o", None), "register_function": (k,), "unload_binary": (10**6,),
        "get_function": (10**6, "scale2"), "launch_kernel": (k, 1, [d, d], s), "launch_graph": ([],),
        # memory observation calls, for when they pass the choke point too
        "host_buffer": (h,), "mem_stats": (0,), "dump_memory_snapshot": ("/nonexistent/snapshot.pickle", 0),
        # collective communication (no communicator is live: every call fails after its checks)
        "comm_init_world": (2, 0, "w"), "comm_create_group": (10**6, "g", [0]), "comm_destroy": (10**6,),
        "comm_find": ("g",), "comm_rank": (10**6,), "comm_size": (10**6,), "comm_world_ranks": (10**6,),
        "all_reduce": (d, d, 4, 4, 0, 10**6, s), "all_gather": (d, d, 4, 4, 10**6, s),
        "reduce_scatter": (d, d, 4, 4, 0, 10**6, s), "broadcast": (d, 4, 4, 0, 10**6, s),
        "alltoall": (d, d, 4, 4, 10**6, s), "send": (d, 4, 4, 1, 10**6, s), "recv": (d, 4, 4, 1, 10**6, s),
        "barrier": (10**6, s),
        # device loops: the predicate's branch and the jump back (no loop is live: the switch reads d)
        "label_switch": (d, s, (), None), "label_goto": (s,),
        # a sunk training loop's per-iteration task (issue 23)
        "loop_task": (GetNext, s, 1024),
    }
    return rt, templates


def test_every_call_has_a_template(ready):
    _, templates = ready
    assert set(public_calls()) <= set(templates)


def _call(rt, name: str, args: tuple):
    if name == "init":
        rt.finalize()            # init takes its arguments on a finalized runtime
    return getattr(rt, name)(*args)


def test_every_bad_argument_of_every_call_is_its_acl_error_in_both_layers(ready):
    """Each parameter of each public call, given each value its kind refuses (the others type-valid):
    the Pythonic call raises the AclError subclass whose code is that parameter's, naming the call and
    the parameter; the pyACL call returns the same code. Before the validation layer, 24 calls raised
    TypeError/ValueError for some of these and others accepted floats, bools and numpy floats."""
    rt, templates = ready
    pyacl = {f.__wrapped__.__name__: f for f in vars(acl.rt).values()}     # by the runtime call's name
    pyacl.update(init=acl.init, finalize=acl.finalize)
    checked = 0
    for name, sig in public_calls().items():
        params = list(sig.parameters.values())[1:]
        for i, param in enumerate(params):
            want = expected_code(name, param.name)
            for bad in bad_values(name, param):
                args = templates[name][:i] + (bad,) + templates[name][i + 1:]
                with pytest.raises(errors.AclError) as e:
                    _call(rt, name, args)
                    pytest.fail(f"{name}({param.name}={bad!r}) was accepted")
                assert e.value.code == want, (name, param.name, bad, e.value)
                assert f"{name} {param.name}" in e.value.message, e.value.message
                if name in pyacl:
                    if name == "init":
                        rt.finalize()
                    ret = pyacl[name](*args)
                    assert (ret if isinstance(ret, int) else ret[-1]) == want, (name, param.name, bad)
                if rt.node is None:
                    rt.init(device_count=2)
                checked += 1
    assert checked > 1000          # 1146 when written


def test_wrong_number_of_arguments_is_invalid_param_in_both_layers(rt):
    rt.init(device_count=1)
    rt.set_device(0)
    for call, message in ((lambda r: r.malloc(), "missing 1 required positional argument: 'size'"),
                          (lambda r: r.malloc(1, 0, 3), "takes from 1 to 2 positional arguments but 3 were given"),
                          (lambda r: r.malloc(sizee=64), "unexpected keyword argument 'sizee'"),
                          (lambda r: r.memset(1, 2, 3, 4, count=4), "multiple values for argument 'count'")):
        with pytest.raises(errors.InvalidParamError, match=message) as e:
            call(rt)
        assert e.value.code == 100000
        ret = call(acl.rt)
        assert (ret[-1] if isinstance(ret, tuple) else ret) == 100000
    assert acl.rt.malloc() == (None, 100000)
    assert acl.rt.free() == 100000 and "free() missing" in acl.get_recent_err_msg()
    # keywords still work, validated like positional arguments
    ptr = rt.malloc(size=np.int64(64), policy=np.int8(1))
    assert type(ptr) is int
    with pytest.raises(errors.InvalidParamError, match="invalid malloc policy 7: must be one of HUGE_FIRST=0"):
        rt.malloc(64, policy=7)


def test_defects_from_the_issue(rt):
    """The examples of issue 8 item 9, each once: raised a plain Python exception or was accepted."""
    rt.init(device_count=1)
    rt.set_device(0)
    ptr, host = rt.malloc(64), np.zeros(64, np.uint8)
    cases = [
        (lambda: rt.memcpy(ptr, 64, host, 64, [1]), 100000, "memcpy kind"),                  # TypeError
        (lambda: rt.memcpy(ptr, 64, host, 64, 1.0), 100000, "memcpy kind"),                  # accepted
        (lambda: rt.memset(ptr, None, 0, 8), 100000, "memset max_count"),                   # TypeError
        (lambda: rt.memcpy(ptr, 64, np.zeros(8, object), 8, 1), 100000, "object dtype"),     # TypeError
        (lambda: rt.memcpy(ptr, 64, np.zeros((8, 8))[:, ::2], 8, 1), 100000, "C-contiguous"),
        (lambda: rt.malloc_host(2**70), 100000, "malloc_host size"),                         # OverflowError
        (lambda: rt.load_binary(None), 100000, "load_binary path"),                          # TypeError
        (lambda: rt.load_binary("a\0b.o"), 100000, "load_binary path"),                      # ValueError
        (lambda: rt.launch_graph(None), 100000, "launch_graph steps"),                       # TypeError
        (lambda: rt.destroy_event([1]), 107000, "destroy_event event"),                      # unhashable
        (lambda: rt.set_current_context({}), 107002, "set_current_context context"),         # unhashable
        (lambda: rt.synchronize_stream(True), 107000, "synchronize_stream stream"),          # was stream 1
        (lambda: rt.record_event(np.float32(1.0)), 107000, "record_event event"),
        (lambda: rt.create_event(2**70), 100000, "create_event flags"),                      # accepted
        (lambda: rt.init(), 107000, r"init\(\) called twice"),
    ]
    for call, code, words in cases:
        with pytest.raises(errors.AclError, match=words) as e:
            call()
        assert e.value.code == code
    with pytest.raises(errors.MemoryAllocationError) as e:
        rt.malloc_host(2**50)                 # a valid size the host cannot provide: 207001, as before
    assert e.value.code == 207001
    rt.finalize()
    with pytest.raises(errors.InvalidParamError, match="device_count"):
        rt.init(device_count=10**6)           # refused at once, not a million devices built
    with pytest.raises(errors.InvalidParamError, match="init strict 1: must be True or False"):
        rt.init(strict=1)
    with pytest.raises(errors.ContextNullError, match="before init"):
        rt.host_time()                        # was AttributeError on the finalized runtime


def test_numpy_ints_are_accepted_as_ints_everywhere(rt, make_scale):
    """A size from an array's shape or a handle kept in an int64 array is a number: it works like an int
    (before: a numpy stream or event handle was "not a live stream")."""
    rt.init(device_count=1)
    rt.set_device(np.int32(0))
    n = 16
    k = make_scale(n, 1)
    x = np.arange(n, dtype=np.float32)
    handles = np.array([rt.malloc(np.int64(x.nbytes)), rt.malloc(np.uint32(x.nbytes)), rt.create_stream(),
                        rt.create_event(np.uint8(8))], np.int64)
    dx, dy, s, ev = handles
    rt.memcpy(dx, np.int64(x.nbytes), x, np.uint16(x.nbytes), np.int8(MEMCPY_HOST_TO_DEVICE))
    rt.launch_kernel(k, np.int64(1), [dx, dy], s)
    rt.record_event(ev, s)
    rt.synchronize_event(ev)
    out = np.zeros_like(x)
    rt.memcpy(out, out.nbytes, dy, out.nbytes, np.int64(MEMCPY_DEFAULT))
    np.testing.assert_array_equal(out, 2 * x)
    # the same numpy handles inside graph steps
    rt.memset(dy, np.int64(x.nbytes), np.uint8(0), np.int64(x.nbytes))
    out[:] = 0
    done = rt.create_event()
    rt.launch_graph([Launch(k, [dx, dy], s, np.int32(1)), RecordEvent(np.int64(done), s),
                     WaitEvent(np.int64(done), np.int64(0)),
                     MemcpyAsync(out, np.int64(out.nbytes), dy, np.int64(out.nbytes), np.int64(2), np.int64(0))])
    rt.synchronize_device()
    np.testing.assert_array_equal(out, 2 * x)
    recorded = []
    rt.recorders.append(lambda name, args, kwargs, result, t: recorded.append(args))
    try:
        rt.free(np.uint64(dx))
    finally:
        rt.recorders.clear()
    assert recorded == [(int(dx),)] and type(recorded[0][0]) is int     # the chapters see plain ints


def test_bad_graph_steps_are_named_by_index_and_field_and_enqueue_nothing(rt, make_scale):
    rt.init(device_count=1)
    rt.set_device(0)
    k = make_scale(16, 1)
    dx, dy, s, ev = rt.malloc(64), rt.malloc(64), rt.create_stream(), rt.create_event()
    good = [Launch(k, [dx, dy], s), RecordEvent(ev, s)]
    for bad, code, words in ((Launch(k, [dx, dy], s, 0), 100000, r"steps\[2\]: invalid Launch.block_dim 0"),
                             (Launch(k, "ab", s), 100000, r"steps\[2\]: invalid Launch.args 'ab'"),
                             (Launch(1.5, [dx, dy], s), 507027, r"steps\[2\]: invalid Launch.kernel 1.5"),
                             (RecordEvent([ev], s), 107000, r"steps\[2\]: invalid RecordEvent.event \[\d+\]"),
                             (WaitEvent(ev, True), 107000, r"steps\[2\]: invalid WaitEvent.stream True"),
                             (MemcpyAsync(np.zeros(4, object), 4, dx, 4, 2, s), 100000, "object dtype"),
                             (MemcpyAsync(np.zeros(64, np.uint8), 64, dx, 64, 9, s), 100000, "MemcpyAsync.kind 9")):
        with pytest.raises(errors.AclError, match=words) as e:
            rt.launch_graph(good + [bad])
        assert e.value.code == code
        assert acl.rt.synchronize_stream(s) == 0
    assert rt.query_event_status(ev) == 1           # NOT_READY: never recorded, nothing was enqueued
    with pytest.raises(errors.InvalidParamError, match=r"launch_graph item 3 is not a step"):
        rt.launch_graph([3])


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_host_buffers_of_a_memcpy(rt):
    """What a memcpy takes on the host side: C-contiguous numpy arrays of plain data (a subclass as its
    plain view: a np.matrix destination once raised ValueError for a partial copy), bytes-likes as
    sources, host pointers; not object arrays, read-only or strided destinations, released views."""
    rt.init(device_count=1)
    rt.set_device(0)
    ptr = rt.malloc(64)
    data = np.arange(16, dtype=np.float32)
    rt.memcpy(ptr, 64, data, 64, MEMCPY_HOST_TO_DEVICE)
    m = np.asmatrix(np.zeros((1, 16), np.float32))
    rt.memcpy(m, m.nbytes, ptr, 32, MEMCPY_DEVICE_TO_HOST)
    np.testing.assert_array_equal(np.asarray(m).ravel(), np.r_[data[:8], np.zeros(8, np.float32)])
    for src in (data.tobytes(), bytearray(data.tobytes()), memoryview(data.tobytes())):
        rt.memset(ptr, 64, 0, 64)
        rt.memcpy(ptr, 64, src, 64, MEMCPY_HOST_TO_DEVICE)
        out = np.zeros(16, np.float32)
        rt.memcpy(out, 64, ptr, 64, MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_array_equal(out, data)
    released = memoryview(b"x" * 64)
    released.release()
    read_only = np.zeros(16, np.float32)
    read_only.flags.writeable = False
    for dst, src, words in ((ptr, released, "(?s)memcpy src .*released"),
                            (read_only, ptr, "(?s)memcpy dst .*read-only"),
                            (np.zeros(32, np.float32)[::2], ptr, "(?s)memcpy dst .*C-contiguous"),
                            (bytearray(64), ptr, "memcpy dst bytearray"),
                            (ptr, np.array([None] * 8), "(?s)memcpy src .*object dtype")):
        with pytest.raises(errors.InvalidParamError, match=words):
            rt.memcpy(dst, 64, src, 64, MEMCPY_DEFAULT)


def test_launch_path_checks_stay_in_one_place(rt, make_scale):
    """launch_kernel's argument types are checked once, at the choke point; the launch's state checks
    (addresses against live allocations, blockDim against the kernel's) still name the bad argument."""
    rt.init(device_count=1)
    rt.set_device(0)
    k = make_scale(16, 1)
    dx = rt.malloc(64)
    for args, code, words in (((k, 1, [dx, 1.5], 0), 100000, r"argument 1 \(out\) of kernel 'scale2'"),
                              ((k, 2, [dx, dx], 0), 100000, "built for blockDim 1, launched with 2"),
                              ((k, 1, {dx: 1}, 0), 100000, "launch_kernel args"),
                              ((k, 70000, [dx, dx], 0), 100000, "launch_kernel block_dim 70000"),
                              ((k, 1, [dx, dx], -5), 107000, "launch_kernel stream -5")):
        with pytest.raises(errors.AclError, match=words) as e:
            rt.launch_kernel(*args)
        assert e.value.code == code


def test_module_level_names_share_the_checks():
    """The bound module-level names go through the same choke point (one check per call, bound once)."""
    from ascendemu.hal import runtime as runtime_module

    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    runtime_module.init(device_count=1)
    try:
        runtime_module.set_device(0)
        with pytest.raises(errors.InvalidParamError, match="invalid malloc size True"):
            runtime_module.malloc(True)
        assert all(api_call(getattr(Runtime, n)).check is not None for n in public_calls())
    finally:
        runtime_module.finalize()


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.one_of(st.text(), st.text(alphabet="./\0\udcff\ud800xo").map(lambda s: s + ".o")),
       magic=st.one_of(st.none(), st.integers(-2, 2**33)))
def test_load_binary_of_any_path_is_an_acl_error(rt, path, magic):
    """No kernel binary lives at a random path (and no magic but ELF is supported): whatever the text, the
    answer is an ACL error (before: NUL bytes and lone surrogates raised ValueError, UnicodeEncodeError)."""
    if rt.node is None:
        rt.init(device_count=1)
    with pytest.raises(errors.AclError) as e:
        rt.load_binary(path, magic)
    assert e.value.code in (errors.ACL_ERROR_INVALID_PARAM, errors.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                            errors.ACL_ERROR_RT_INTERNAL_ERROR)     # bad argument, non-ELF magic, no such binary
