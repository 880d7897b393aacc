"""Argument validation of the runtime's public calls: one table of parameter kinds, one validator each.

Every public call passes the choke point (``Runtime._dispatch``), and there each argument is checked
against the *kind* of its parameter before the call runs. :data:`PARAMS` maps a parameter name (or
``"<call>.<parameter>"`` where a name means something else in one call) to its kind; a kind is one
validator factory, so a fact such as "a stream is None, 0 or a non-negative int handle" has one home.
:func:`bind_checks` binds the kinds to every call's signature once, when ``hal/runtime.py`` composes
the Runtime (a parameter with no kind fails that import, so a new call cannot skip validation); a call
then costs one validator per argument, each a type test on its fast path, and nothing is inspected per
call. The fields of the steps a graph launch sinks (:mod:`.steps`) are bound by name the same way.

What the layer checks and what it leaves to the chapters. The layer checks what an argument *is*: its
type and static range (an int, never a bool, float or numpy float; a byte count a size_t holds; an enum
value; a C-contiguous numpy buffer of plain data, not of Python objects). The chapters check what it
*refers to*, which needs the runtime's state: a live stream, an allocation holding ``count`` bytes, a
device the node has, ``count <= dest_max``. A bad argument raises the error its parameter's chapter
raises for an unknown value of it (a stream 107000, a device id 107001, a context 107002, a function
handle 507027, a pointer to free 207002, anything else 100000): the code says which argument was
wrong, not how. Validators return the argument normalised (a numpy int as an int, an ndarray subclass
as a plain ndarray view), so the chapters see plain values. No other exception may leave the runtime;
there is deliberately no catch-all, which would hide bugs: ``tests/test_runtime_fuzz.py`` drives the
runtime with arguments of every wrong type and checks that only typed ACL errors come out.
"""
from __future__ import annotations

import dataclasses
import inspect
import os
from typing import Any, Callable

import numpy as np

from ascendemu.device.collectives import Collective
from ascendemu.device.cost import LOOP_SINK_TASKS
from ascendemu.device.memory import DEVICE_VA_BASE, DEVICE_VA_STRIDE
from ascendemu.device.pool import POOL_POLICIES
from ascendemu.device.spec import DeviceSpec
from ascendemu.errors import (AclError, ContextNullError, HcclParamError, InvalidDeviceError, InvalidParamError,
                              KernelLookupError, MemoryFreeError, RtParamInvalidError, check_int, short_repr)

from . import steps as _steps
from .api import ApiCall, api_call
from .hccl import HCCL_DATA_TYPES
from .kernel import MAX_BLOCK_DIM, KernelFunction
from .memory import (HOST_PTR_BASE, MEM_MALLOC_HUGE_FIRST, MEM_MALLOC_HUGE_ONLY, MEM_MALLOC_NORMAL_ONLY,
                     MEMCPY_DEFAULT, MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE,
                     MEMCPY_HOST_TO_HOST)

__all__ = ["MAX_DEVICE_COUNT", "MAX_U32", "MAX_U64", "PARAMS", "bind_call", "bind_checks"]

Validator = Callable[[Any], Any]          # returns the argument normalised, or raises an AclError
Kind = Callable[[str, bool], Validator]   # (name in messages, None allowed) -> the parameter's validator

# Sizes, counts, addresses and handles are size_t or pointers in ACL: 64 bits. A larger int cannot be
# passed to the real runtime; here it would reach numpy or ctypes and come out as an OverflowError.
MAX_U64 = (1 << 64) - 1
MAX_U32 = (1 << 32) - 1              # event flags (aclrtCreateEventWithFlag) and binary magics are uint32_t
# Each device has its own DEVICE_VA_STRIDE-byte address range from DEVICE_VA_BASE; the ranges must stay
# below the host pointers of malloc_host (HOST_PTR_BASE), so that the two never collide: 125 devices.
MAX_DEVICE_COUNT = (HOST_PTR_BASE - DEVICE_VA_BASE) // DEVICE_VA_STRIDE

MEMCPY_KINDS = {MEMCPY_HOST_TO_HOST: "HOST_TO_HOST", MEMCPY_HOST_TO_DEVICE: "HOST_TO_DEVICE",
                MEMCPY_DEVICE_TO_HOST: "DEVICE_TO_HOST", MEMCPY_DEVICE_TO_DEVICE: "DEVICE_TO_DEVICE",
                MEMCPY_DEFAULT: "DEFAULT"}
MALLOC_POLICIES = {MEM_MALLOC_HUGE_FIRST: "HUGE_FIRST", MEM_MALLOC_HUGE_ONLY: "HUGE_ONLY",
                   MEM_MALLOC_NORMAL_ONLY: "NORMAL_ONLY"}


def _reject(error: type[AclError], what: str, value: object, rule: str) -> AclError:
    return error(f"invalid {what} {short_repr(value)}: must be {rule}")


# -- kinds ----------------------------------------------------------------------------------------
def int_kind(minimum: int, maximum: int, error: type[AclError] = InvalidParamError, hint: str = "",
             none: bool = False) -> Kind:
    """An int in [minimum, maximum] (numpy ints accepted, bools and floats not); ``none``: None is a
    valid value of the kind itself (the default stream, the kernel's own blockDim)."""
    def kind(what: str, optional: bool) -> Validator:
        none_ok = none or optional

        def check(v):
            if type(v) is int and minimum <= v <= maximum:
                return v
            if v is None and none_ok:
                return v
            return check_int(v, what, minimum=minimum, maximum=maximum, error=error, hint=hint)
        return check
    return kind


def enum_kind(names: dict[int, str], error: type[AclError] = InvalidParamError) -> Kind:
    """One of the int values of an ACL enum, named in the message."""
    rule = "one of " + ", ".join(f"{name}={value}" for value, name in names.items())

    def kind(what: str, optional: bool) -> Validator:
        def check(v):
            if type(v) is int and v in names:
                return v
            if v is None and optional:
                return v
            v = check_int(v, what, error=error, hint=rule)
            if v not in names:
                raise _reject(error, what, v, rule)
            return v
        return check
    return kind


def loop_task_kind(what: str, optional: bool) -> Validator:
    """One of the kinds of a sunk loop's per-iteration tasks: exactly a device/cost.py ``LOOP_SINK_TASKS``
    class (not its name, not an instance or a subclass of one)."""
    rule = (f"a sunk loop's task kind: one of the classes {', '.join(k.__name__ for k in LOOP_SINK_TASKS)} "
            "of ascendemu.device.cost")

    def check(v):
        if any(v is k for k in LOOP_SINK_TASKS):
            return v
        raise _reject(RtParamInvalidError, what, v, rule)
    return check


def type_kind(types: tuple[type, ...], rule: str, error: type[AclError] = InvalidParamError) -> Kind:
    """An instance of one of ``types``."""
    def kind(what: str, optional: bool) -> Validator:
        def check(v):
            if isinstance(v, types) or (v is None and optional):
                return v
            raise _reject(error, what, v, rule)
        return check
    return kind


def function_kind(what: str, optional: bool) -> Validator:
    """A KernelFunction, or the int handle get_function/register_function returned for one."""
    handle = int_kind(0, MAX_U64, KernelLookupError, "a function handle from get_function() or "
                      "register_function(), or a KernelFunction")(what, optional)

    def check(v):
        if isinstance(v, KernelFunction):
            return v
        return handle(v)
    return check


def flag_kind(what: str, optional: bool) -> Validator:
    """True or False (a numpy bool too); never 0/1 or None, which say the caller meant something else."""
    def check(v):
        if v is True or v is False:
            return v
        if isinstance(v, np.bool_):
            return bool(v)
        if v is None and optional:
            return v
        raise _reject(InvalidParamError, what, v, "True or False")
    return check


def path_kind(what: str, optional: bool) -> Validator:
    """A file system path (str or os.PathLike of str) the OS can take: no NUL byte, encodable."""
    rule = "a path (str or os.PathLike) without NUL bytes"

    def check(v):
        if v is None and optional:
            return v
        try:
            s = os.fspath(v)
        except TypeError:
            raise _reject(InvalidParamError, what, v, rule) from None
        if not isinstance(s, str) or "\0" in s:
            raise _reject(InvalidParamError, what, v, rule)
        try:
            os.fsencode(s)
        except UnicodeEncodeError:
            raise _reject(InvalidParamError, what, v, rule + " that the file system encoding can represent") from None
        return v
    return check


_POINTER_RULE = "an address (an int from malloc or malloc_host, or an offset into one)"


def buffer_kind(writable: bool) -> Kind:
    """One side of a memcpy: a pointer (device or malloc_host; which one is the chapter's business) or a
    host buffer numpy can view as bytes in place: a C-contiguous ndarray of plain data (writable for a
    destination) or, as a source only, bytes, bytearray or a contiguous memoryview."""
    rule = ("an address or a writable C-contiguous numpy array" if writable else
            "an address, a C-contiguous numpy array, bytes, bytearray or a contiguous memoryview")

    def kind(what: str, optional: bool) -> Validator:
        pointer = int_kind(0, MAX_U64, hint=rule)(what, optional)

        def check(v):
            if type(v) is int:
                return pointer(v)
            if isinstance(v, np.ndarray):
                if v.dtype.hasobject:
                    raise _reject(InvalidParamError, what, v, "an array of plain data: an object dtype holds "
                                  "Python references, not bytes (convert it, e.g. with astype)")
                if not v.flags.c_contiguous:
                    raise _reject(InvalidParamError, what, v, "a C-contiguous array (use np.ascontiguousarray)")
                if writable and not v.flags.writeable:
                    raise _reject(InvalidParamError, what, v, "a writable array (this one is read-only)")
                return v if type(v) is np.ndarray else v.view(np.ndarray)   # a subclass reshapes differently
            if not writable and isinstance(v, (bytes, bytearray)):
                return v
            if not writable and isinstance(v, memoryview):
                try:
                    contiguous = v.c_contiguous
                except ValueError:                    # a released memoryview
                    contiguous = False
                if contiguous:
                    return v
                raise _reject(InvalidParamError, what, v, "a C-contiguous memoryview that is not released")
            return pointer(v)
        return check
    return kind


def kernel_args_kind(what: str, optional: bool) -> Validator:
    """The launch arguments as a container: a list or tuple of device addresses, or a packed buffer of
    8-byte addresses. Each address is checked by the launch against the live allocations (a non-int
    address is InvalidParamError there, naming the argument)."""
    rule = "a list or tuple of device addresses, or bytes packing 8-byte addresses"

    def check(v):
        if type(v) in (list, tuple, bytes, bytearray):
            return v
        raise _reject(InvalidParamError, what, v, rule)
    return check


def ranks_kind(what: str, optional: bool) -> Validator:
    """A list or tuple of world ranks (non-negative ints), returned as a list of plain ints."""
    rank = int_kind(0, MAX_U32, HcclParamError, "a world rank")(what, False)

    def check(v):
        if type(v) not in (list, tuple, range):
            raise _reject(HcclParamError, what, v, "a list or tuple of world ranks")
        return [rank(r) for r in v]
    return check


def steps_kind(what: str, optional: bool) -> Validator:
    """A list or tuple of :mod:`.steps` objects, each field checked by its kind (:data:`_STEP_CHECKS`)."""
    kinds = ", ".join(cls.__name__ for cls in _STEP_CHECKS)

    def check(v):
        if type(v) not in (list, tuple):
            raise _reject(InvalidParamError, what, v, f"a list or tuple of steps ({kinds})")
        out = []
        for i, step in enumerate(v):
            step_check = _STEP_CHECKS.get(type(step))
            if step_check is None:
                raise InvalidParamError(f"launch_graph item {short_repr(step)} is not a step; build the schedule "
                                        f"from ascendemu.hal.steps: {kinds}")
            try:
                out.append(step_check(step))
            except AclError as e:
                raise type(e)(f"{what}[{i}]: {e.message}") from None
        return out
    return check


DEVICE_ID = int_kind(0, MAX_DEVICE_COUNT - 1, InvalidDeviceError, "a device index, 0..get_device_count()-1")
DEVICE_COUNT = int_kind(1, MAX_DEVICE_COUNT, hint="the number of devices of the node")
CONTEXT = int_kind(0, MAX_U64, ContextNullError, "a context handle from create_context()")
STREAM = int_kind(0, MAX_U64, RtParamInvalidError, "a stream handle from create_stream(), or None or 0 "
                  "for the current context's default stream", none=True)
EVENT = int_kind(0, MAX_U64, RtParamInvalidError, "an event handle from create_event()")
EVENT_FLAGS = int_kind(0, MAX_U32, hint="a uint32 of ACL_EVENT_* bits, e.g. TIME_LINE=0x8")
BINARY = int_kind(0, MAX_U64, RtParamInvalidError, "a binary handle from load_binary()")
BINARY_MAGIC = int_kind(0, MAX_U32, hint="a uint32 RT_DEV_BINARY_MAGIC_* value")
ALLOC_SIZE = int_kind(1, MAX_U64, hint="an allocation is a positive integer number of bytes")
BYTE_COUNT = int_kind(0, MAX_U64, hint="a number of bytes")
BYTE_VALUE = int_kind(0, 255, hint="memset fills with one byte")
POINTER = int_kind(0, MAX_U64, hint=_POINTER_RULE)
FREED_POINTER = int_kind(0, MAX_U64, MemoryFreeError, "the address malloc or malloc_host returned")
BLOCK_DIM = int_kind(1, MAX_BLOCK_DIM, hint="the kernel's blockDim, or None for the one it was built for",
                     none=True)
MEMCPY_KIND = enum_kind(MEMCPY_KINDS)
MALLOC_POLICY = enum_kind(MALLOC_POLICIES)
SPEC = type_kind((DeviceSpec, str), "a DeviceSpec or a preset name (ascendemu.device.spec.get_spec)")


def pool_kind(what: str, optional: bool) -> Validator:
    """A pool placement policy name (``device.pool.POOL_POLICIES``)."""
    rule = "one of " + ", ".join(repr(n) for n in POOL_POLICIES)

    def check(v):
        if type(v) is str and v in POOL_POLICIES:
            return v
        raise _reject(InvalidParamError, what, v, rule)
    return check


POOL = pool_kind
KERNEL_FUNCTION = type_kind((KernelFunction,), "a KernelFunction")
KERNEL_NAME = type_kind((str,), "a kernel name (str)", KernelLookupError)
OP_NAME = type_kind((str,), "the launch's name in traces, e.g. an op's full name (str), or None")
FUNCTION, FLAG, PATH, KERNEL_ARGS, STEPS = function_kind, flag_kind, path_kind, kernel_args_kind, steps_kind
DESTINATION, SOURCE = buffer_kind(writable=True), buffer_kind(writable=False)
COMM = int_kind(0, MAX_U64, HcclParamError, "a communicator handle from comm_init_world() or comm_create_group()")
COMM_RANK = int_kind(0, MAX_U32, HcclParamError, "a rank of the communicator")
RANK_SIZE = int_kind(1, MAX_U32, HcclParamError, "the number of ranks of the world")
COMM_BUFFER = int_kind(0, MAX_U64, hint="a device address from malloc", none=True)
HCCL_DATA_TYPE = enum_kind({v: f"HCCL_DATA_TYPE({d})" for v, d in HCCL_DATA_TYPES.items()}, HcclParamError)
HCCL_REDUCE_OP = enum_kind({0: "HCCL_REDUCE_SUM", 1: "HCCL_REDUCE_PROD", 2: "HCCL_REDUCE_MAX", 3: "HCCL_REDUCE_MIN"},
                           HcclParamError)
COLLECTIVE = type_kind((Collective,), "a collective kind of ascendemu.device.collectives", HcclParamError)
COMM_NAME = type_kind((str,), "a communicator name (str)", HcclParamError)

# Parameter name -> kind; "<call>.<parameter>" where one call's parameter means something else.
PARAMS: dict[str, Kind] = {
    # init
    "spec": SPEC, "device_count": DEVICE_COUNT, "strict": FLAG, "defrag": FLAG, "trace": FLAG, "backing": FLAG,
    "pool": POOL,
    # devices and contexts
    "device_id": DEVICE_ID, "context": CONTEXT,
    # streams and events
    "stream": STREAM, "event": EVENT, "flags": EVENT_FLAGS,
    "event_elapsed_time.start": EVENT, "event_elapsed_time.end": EVENT, "label_switch.taken": FLAG,
    # memory
    "size": ALLOC_SIZE, "policy": MALLOC_POLICY, "ptr": POINTER,
    "free.ptr": FREED_POINTER, "free_host.ptr": FREED_POINTER,
    "dst": DESTINATION, "src": SOURCE, "kind": MEMCPY_KIND,
    "dest_max": BYTE_COUNT, "count": BYTE_COUNT, "max_count": BYTE_COUNT, "value": BYTE_VALUE,
    # kernels, launches, traces
    "path": PATH, "magic": BINARY_MAGIC, "binary": BINARY, "name": KERNEL_NAME,
    "func": FUNCTION, "kernel": FUNCTION, "register_function.func": KERNEL_FUNCTION,
    "block_dim": BLOCK_DIM, "args": KERNEL_ARGS, "steps": STEPS, "launch_kernel.name": OP_NAME, "Launch.name": OP_NAME,
    "loop_task.task": loop_task_kind, "LoopTask.task": loop_task_kind,
    # collective communication
    "rank_size": RANK_SIZE, "rank_id": COMM_RANK, "comm": COMM, "ranks": ranks_kind,
    "comm_create_group.name": COMM_NAME, "comm_find.name": COMM_NAME, "comm_init_world.name": COMM_NAME,
    "send": POINTER, "recv": POINTER, "buf": POINTER, "dtype": HCCL_DATA_TYPE, "op": HCCL_REDUCE_OP,
    "root": COMM_RANK, "peer": COMM_RANK, "Communicate.kind": COLLECTIVE, "Communicate.send": COMM_BUFFER,
    "Communicate.recv": COMM_BUFFER,
}


# -- binding --------------------------------------------------------------------------------------
def _validator(owner: str, param: str, what: str, optional: bool) -> Validator:
    kind = PARAMS.get(f"{owner}.{param}") or PARAMS.get(param)
    if kind is None:
        raise TypeError(f"{owner}({param}): no kind for this parameter in ascendemu.hal.validate.PARAMS; "
                        "every argument of a public call is validated, so add one")
    return kind(what, optional)


def bind_call(call: ApiCall) -> Callable[..., tuple]:
    """The argument check of one public call: a function with the call's own parameters and defaults
    that returns every argument validated and normalised, in order (``fn(self, *check(*args, **kwargs))``
    then runs the call). Python binds keywords and defaults and refuses a missing or unexpected argument
    itself, with its usual message (``malloc() missing 1 required positional argument: 'size'``), which
    the choke point raises as InvalidParamError. The function is generated once per call, as dataclasses
    generates ``__init__``: its unrolled body costs half what a loop over the validators costs, and
    ``launch_kernel`` pays it on every launch."""
    params = list(inspect.signature(call.fn).parameters.values())[1:]      # after self
    namespace: dict[str, Any] = {}
    declared, checked = [], []
    for i, p in enumerate(params):
        if p.kind is not p.POSITIONAL_OR_KEYWORD:
            raise TypeError(f"{call.name}({p.name}): public calls take plain parameters (no *args, **kwargs "
                            "or keyword-only), so that one table validates them")
        namespace[f"_check{i}"] = _validator(call.name, p.name, f"{call.name} {p.name}", p.default is None)
        if p.default is p.empty:
            declared.append(p.name)
        else:
            namespace[f"_default{i}"] = p.default
            declared.append(f"{p.name}=_default{i}")
        checked.append(f"_check{i}({p.name}), ")
    exec(f"def {call.name}({', '.join(declared)}):\n    return ({''.join(checked)})\n", namespace)
    return namespace[call.name]


def bind_checks(cls: type) -> None:
    """Bind the argument check of every public call of ``cls`` (once, when the Runtime is composed)."""
    for name in dir(cls):
        call = api_call(getattr(cls, name))
        if call is not None:
            call.check = bind_call(call)


def _bind_step(cls: type) -> Callable[[_steps.Step], _steps.Step]:
    """The field check of one step kind: its fields validated by name like a call's parameters. It returns
    the step itself, or a new one (steps are frozen) when a field needed normalising. Generated once
    per kind, like :func:`bind_call`: a graph launch checks every step it sinks."""
    names = [f.name for f in dataclasses.fields(cls)]
    namespace: dict[str, Any] = {"_cls": cls}
    for i, f in enumerate(dataclasses.fields(cls)):
        namespace[f"_check{i}"] = _validator(cls.__name__, f.name, f"{cls.__name__}.{f.name}", f.default is None)
    exec(f"def check(step):\n"
         f"    {''.join(f'{n}, ' for n in names)}= {''.join(f'step.{n}, ' for n in names)}\n"
         f"    new = {''.join(f'_check{i}({n}), ' for i, n in enumerate(names))}\n"
         f"    if {' and '.join(f'new[{i}] is {n}' for i, n in enumerate(names))}:\n"
         f"        return step\n"
         f"    return _cls(*new)\n", namespace)
    return namespace["check"]


# every step kind of hal.steps (its __all__ lists the base Step and the kinds)
_STEP_CHECKS = {cls: _bind_step(cls) for cls in (getattr(_steps, n) for n in _steps.__all__) if cls is not _steps.Step}
