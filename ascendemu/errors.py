"""Typed errors carrying the ACL error codes users of the real runtime know.

Every public call of the runtime raises an :class:`AclError` subclass; the pyACL-shaped layer turns
it back into the integer return code. Messages say what was wrong and what to do about it.
:func:`check_int` is the one validator of integer arguments, here at the bottom layer so that every
package raises the same error class, code and message shape for a bad size, count or id.
"""
from __future__ import annotations

import reprlib

import numpy as np

ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_INVALID_FILE = 100003
ACL_ERROR_BAD_ALLOC = 200000
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
ACL_ERROR_RT_MEMORY_FREE = 207002
ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007
ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008
ACL_ERROR_RT_INTERNAL_ERROR = 507000
ACL_ERROR_RT_AICORE_EXCEPTION = 507015
ACL_ERROR_RT_KERNEL_LOOKUP = 507027
ACL_ERROR_RT_KERNEL_DUPLICATE = 507028
ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047
# HCCL's own result codes (HcclResult of hccl_types.h): the collective API's errors carry these
HCCL_E_PARA = 1
HCCL_E_INTERNAL = 4
HCCL_E_NOT_SUPPORT = 5
HCCL_E_TIMEOUT = 9
HCCL_E_REMOTE = 21


class AclError(Exception):
    """Base of all runtime errors; ``code`` is the ACL return code."""

    code = ACL_ERROR_RT_INTERNAL_ERROR

    def __init__(self, message: str, code: int | None = None):
        if code is not None:
            self.code = code
        super().__init__(f"[{self.code}] {message}")
        self.message = message

    def __reduce__(self):
        # rebuilt from the bare message and code (not the formatted text) when it crosses processes
        return type(self), (self.message, self.code)


class InvalidParamError(AclError):
    code = ACL_ERROR_INVALID_PARAM


class TensorIndexError(InvalidParamError, IndexError):
    """A tensor index past a dimension's end, or with more entries than the tensor has dimensions: an
    invalid parameter, and the IndexError MindSpore raises (so ``except IndexError`` still works)."""


class ArgumentError(InvalidParamError, TypeError):
    """A call with a missing, extra or duplicated argument: an invalid parameter, and the TypeError (with
    Python's text) MindSpore's functions raise (so ``except TypeError`` still works)."""


class InvalidValueError(InvalidParamError, ValueError):
    """An argument of the right type with a value out of its range (a negative momentum, decay_steps=0, a
    2-d image): an invalid parameter, and the ValueError MindSpore's validators raise (so ``except
    ValueError`` still works)."""


class InvalidTypeError(InvalidParamError, TypeError):
    """An argument of a type or dtype the op does not take (a float32 index, a string attribute): an
    invalid parameter, and the TypeError MindSpore's validators raise (so ``except TypeError`` still
    works)."""


class RuntimeParamError(InvalidParamError, RuntimeError):
    """An input MindSpore refuses in its C++ op (shape inference or kernel) with a RuntimeError, not
    the ValueError of a Python validator: a 1-d tensor given to Trace, ``diff`` with n != 1. An invalid
    parameter (code 100000), and the RuntimeError MindSpore raises (so ``except RuntimeError`` still
    works). Everything else out of range is an :class:`InvalidValueError`."""


class InvalidFileError(AclError):
    """A file or directory a caller named is missing, unreadable, truncated or not in the expected format
    (a dataset's IDX/CIFAR/image files); the message names the path and what was expected."""

    code = ACL_ERROR_INVALID_FILE


class RtParamInvalidError(AclError):
    code = ACL_ERROR_RT_PARAM_INVALID


class InvalidDeviceError(AclError):
    code = ACL_ERROR_RT_INVALID_DEVICEID


class ContextNullError(AclError):
    code = ACL_ERROR_RT_CONTEXT_NULL


class FeatureNotSupportedError(AclError):
    code = ACL_ERROR_RT_FEATURE_NOT_SUPPORT


class MemoryAllocationError(AclError):
    code = ACL_ERROR_RT_MEMORY_ALLOCATION


class MemoryFreeError(AclError):
    code = ACL_ERROR_RT_MEMORY_FREE


class NoEventResourceError(AclError):
    code = ACL_ERROR_RT_NO_EVENT_RESOURCE


class NoStreamResourceError(AclError):
    code = ACL_ERROR_RT_NO_STREAM_RESOURCE


class InternalError(AclError):
    code = ACL_ERROR_RT_INTERNAL_ERROR


class AicoreExceptionError(AclError):
    code = ACL_ERROR_RT_AICORE_EXCEPTION


class KernelFaultError(AicoreExceptionError, RuntimeError):
    """A kernel reported a fault in its status word (``device.kernel_status``: an out-of-range index):
    the chip's AI Core exception (507015), raised at the host's next synchronisation, and the
    RuntimeError MindSpore raises then. ``fault`` is the fault's kind (a ``KernelFault`` class),
    ``op`` MindSpore's op name, ``kernel`` the kernel's name, ``value`` the offending value."""

    def __init__(self, message: str, code: int | None = None, *, fault: type | None = None, op: str = "",
                 kernel: str = "", value: int = 0):
        super().__init__(message, code)
        self.fault, self.op, self.kernel, self.value = fault, op, kernel, value


class KernelLookupError(AclError):
    code = ACL_ERROR_RT_KERNEL_LOOKUP


class KernelDuplicateError(AclError):
    code = ACL_ERROR_RT_KERNEL_DUPLICATE


class StreamSyncTimeoutError(AclError):
    code = ACL_ERROR_RT_STREAM_SYNC_TIMEOUT


class LoopTripLimitError(StreamSyncTimeoutError):
    """A device loop ran more trips than the emulator's guard allows (``graph.program_runner``): on the
    chip a runaway loop never ends and the host's synchronisation times out (507046), hence the code."""


class EventSyncTimeoutError(AclError):
    code = ACL_ERROR_RT_EVENT_SYNC_TIMEOUT


class RaceError(AclError):
    """Strict mode: the host or a stream read memory that an unfinished task still writes."""

    code = ACL_ERROR_RT_INTERNAL_ERROR


class HcclError(AclError, RuntimeError):
    """A collective communication (HCCL) failure; ``code`` is HCCL's result code. Also a RuntimeError,
    which is what MindSpore raises when a collective fails."""

    code = HCCL_E_INTERNAL


class HcclParamError(HcclError):
    """A bad argument of a collective call (communicator, data type, reduce op, rank, group)."""

    code = HCCL_E_PARA


class HcclNotSupportedError(HcclError):
    code = HCCL_E_NOT_SUPPORT


class HcclTimeoutError(HcclError):
    """Ranks of a communicator did not arrive at a collective (or at its creation) within the timeout:
    ``missing`` lists their world ranks, ``collective`` names what was waited for."""

    code = HCCL_E_TIMEOUT

    def __init__(self, message: str, code: int | None = None, missing: tuple[int, ...] = (), collective: str = ""):
        super().__init__(message, code)
        self.missing = tuple(missing)
        self.collective = collective


class HcclRemoteError(HcclError):
    """Another rank reported that a collective failed (a rank it waited for never arrived), so this
    rank fails too instead of waiting for its own timeout."""

    code = HCCL_E_REMOTE


def check_int(value: object, name: str, *, minimum: int | None = None, maximum: int | None = None,
              error: type[AclError] = InvalidParamError, type_error: type[AclError] | None = None,
              hint: str = "") -> int:
    """Return ``value`` as a plain int if it is an int within [minimum, maximum], else raise ``error`` naming it.

    The one validator for integer arguments (sizes, counts, ids, flags, handles) at the runtime's boundary.
    ``bool`` (and ``numpy.bool``) is rejected although it subclasses ``int``: ``malloc(True)`` or
    ``block_dim=False`` is a bug in the caller (a flag passed where a number belongs), never a deliberate
    1 or 0. numpy integers are accepted and returned as ``int`` (a size read from an array's shape or a
    handle kept in an int64 array is a number), as are other int subclasses (an ``IntEnum``); floats,
    numpy floats and strings are not, even when integral: ``malloc(1.0)`` is a type confusion. The
    message names the argument, the value and the valid range; ``hint`` adds what to do about it.
    ``type_error`` (default ``error``) is raised instead for a value that is no int at all: MindSpore's
    validators raise TypeError for the type and ValueError for the range.
    """
    is_int = type(value) is int or (isinstance(value, (int, np.integer)) and not isinstance(value, bool))
    if is_int and (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
        return int(value)
    if not is_int and type_error is not None:
        error = type_error
    if minimum is not None and maximum is not None:
        valid = f"an int in {_bound(minimum)}..{_bound(maximum)}"
    elif minimum == 0:
        valid = "a non-negative int"
    elif minimum == 1:
        valid = "a positive int"
    elif minimum is not None:
        valid = f"an int >= {_bound(minimum)}"
    elif maximum is not None:
        valid = f"an int <= {_bound(maximum)}"
    else:
        valid = "an int"
    raise error(f"invalid {name} {short_repr(value)}: must be {valid}" + (f"; {hint}" if hint else ""))


def short_repr(value: object) -> str:
    """``repr`` cut to a readable length: an error message quotes the bad argument, which may be a list of
    a million items or a large array."""
    return reprlib.repr(value)


def _bound(n: int) -> str:
    """A range bound as people write it: decimal, or hex from 2**32 on (``0xffffffffffffffff`` for size_t)."""
    return f"{n:#x}" if abs(n) >= 1 << 32 else str(n)
