"""pyACL-shaped layer: ``ret = acl.rt.set_device(0)``, ``ptr, ret = acl.rt.malloc(size, policy)``.

Results first, the ACL return code last, handles as ints, as in Huawei's pyACL. Each function calls
the Pythonic runtime and turns an :class:`AclError` into its code (the message is kept in
:func:`get_recent_err_msg`, like ``aclGetRecentErrMsg``). Scripts written for pyACL run unchanged.
A bad argument is a code too, never a Python exception: the runtime checks every argument's type and
range at its choke point (:mod:`.validate`, a missing or extra argument included) and raises only
AclErrors, so catching AclError here is enough (tests/test_runtime_fuzz.py holds it to that).
"""
from __future__ import annotations

import functools
from types import SimpleNamespace

from ascendemu.errors import ACL_SUCCESS, AclError

from . import runtime as _rt

_recent_error = ""


def _wrap(method_name: str, returns_value: bool, pyacl_name: str | None = None):
    method = getattr(_rt.Runtime, method_name)

    @functools.wraps(method)
    def call(*args, **kwargs):
        global _recent_error
        try:
            result = getattr(_rt.get_runtime(), method_name)(*args, **kwargs)
        except AclError as e:
            _recent_error = e.message
            return (None, e.code) if returns_value else e.code
        if not returns_value:
            return ACL_SUCCESS
        if isinstance(result, tuple):
            return (*result, ACL_SUCCESS)
        return result, ACL_SUCCESS
    call.__name__ = pyacl_name or method_name
    return call


def get_recent_err_msg() -> str:
    return _recent_error


_VOID = ["set_device", "reset_device", "destroy_context", "set_current_context", "destroy_stream",
         "synchronize_stream", "stream_wait_event", "destroy_event", "record_event", "reset_event",
         "synchronize_event", "free", "free_host", "memcpy", "memcpy_async", "memset", "memset_async",
         "unload_binary", "launch_kernel", "synchronize_device"]
_VALUED = ["get_device_count", "get_device", "create_context", "create_stream", "query_stream", "create_event",
           "query_event_status", "event_elapsed_time", "malloc", "malloc_host", "get_mem_info",
           "load_binary", "get_function"]

rt = SimpleNamespace(**{n: _wrap(n, False) for n in _VOID}, **{n: _wrap(n, True) for n in _VALUED})
rt.binary_load_from_file = _wrap("load_binary", True, "binary_load_from_file")
rt.binary_get_function = _wrap("get_function", True, "binary_get_function")
init = _wrap("init", False)
finalize = _wrap("finalize", False)

# constants under pyACL's names
ACL_MEMCPY_HOST_TO_HOST = _rt.MEMCPY_HOST_TO_HOST
ACL_MEMCPY_HOST_TO_DEVICE = _rt.MEMCPY_HOST_TO_DEVICE
ACL_MEMCPY_DEVICE_TO_HOST = _rt.MEMCPY_DEVICE_TO_HOST
ACL_MEMCPY_DEVICE_TO_DEVICE = _rt.MEMCPY_DEVICE_TO_DEVICE
ACL_MEMCPY_DEFAULT = _rt.MEMCPY_DEFAULT
ACL_MEM_MALLOC_HUGE_FIRST = _rt.MEM_MALLOC_HUGE_FIRST
ACL_MEM_MALLOC_HUGE_ONLY = _rt.MEM_MALLOC_HUGE_ONLY
ACL_MEM_MALLOC_NORMAL_ONLY = _rt.MEM_MALLOC_NORMAL_ONLY
ACL_EVENT_TIME_LINE = _rt.EVENT_TIME_LINE
ACL_EVENT_RECORDED_STATUS_COMPLETE = _rt.EVENT_STATUS_COMPLETE
ACL_EVENT_RECORDED_STATUS_NOT_READY = _rt.EVENT_STATUS_NOT_READY
