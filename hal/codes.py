"""ACL and HCCL enumeration values that a step's fields carry and the runtime's chapters interpret:
memcpy kinds (``aclrtMemcpyKind``) and the HCCL data types the emulated device holds.

Their one home, below both :mod:`.steps` (a ``MemcpyAsync.kind``, a ``Communicate.dtype``) and the
chapters (:mod:`.memory`, :mod:`.hccl`, which re-export them under their historical names), so the
steps import no chapter and the HAL's imports form no cycle.
"""
from __future__ import annotations

__all__ = ["HCCL_DATA_TYPES", "HCCL_DATA_TYPE_FP16", "HCCL_DATA_TYPE_FP32", "HCCL_DATA_TYPE_INT32",
           "HCCL_DATA_TYPE_INT8", "MEMCPY_DEFAULT", "MEMCPY_DEVICE_TO_DEVICE", "MEMCPY_DEVICE_TO_HOST",
           "MEMCPY_HOST_TO_DEVICE", "MEMCPY_HOST_TO_HOST"]

# memcpy kinds (aclrtMemcpyKind)
MEMCPY_HOST_TO_HOST = 0
MEMCPY_HOST_TO_DEVICE = 1
MEMCPY_DEVICE_TO_HOST = 2
MEMCPY_DEVICE_TO_DEVICE = 3
MEMCPY_DEFAULT = 4

# HcclDataType values the emulated device holds (others, e.g. INT16=1 or INT64=5, are not supported)
HCCL_DATA_TYPE_INT8 = 0
HCCL_DATA_TYPE_INT32 = 2
HCCL_DATA_TYPE_FP16 = 3
HCCL_DATA_TYPE_FP32 = 4
HCCL_DATA_TYPES = {HCCL_DATA_TYPE_INT8: "int8", HCCL_DATA_TYPE_INT32: "int32", HCCL_DATA_TYPE_FP16: "float16",
                   HCCL_DATA_TYPE_FP32: "float32"}
