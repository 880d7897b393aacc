"""Typed errors carrying the ACL error codes users of the real runtime know.

Every public call of the runtime raises an :class:`AclError` subclass; the pyACL-shaped layer turns
it back into the integer return code. Messages say what was wrong and what to do about it.
"""
from __future__ import annotations

ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
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


class KernelLookupError(AclError):
    code = ACL_ERROR_RT_KERNEL_LOOKUP


class KernelDuplicateError(AclError):
    code = ACL_ERROR_RT_KERNEL_DUPLICATE


class StreamSyncTimeoutError(AclError):
    code = ACL_ERROR_RT_STREAM_SYNC_TIMEOUT


class EventSyncTimeoutError(AclError):
    code = ACL_ERROR_RT_EVENT_SYNC_TIMEOUT


class RaceError(AclError):
    """Strict mode: the host or a stream read memory that an unfinished task still writes."""

    code = ACL_ERROR_RT_INTERNAL_ERROR
