"""The ``.ascend.meta`` section of a kernel object: what the runtime must know before it launches it.

Type-length-value records, each ``<u16 type><u16 length><value>`` in little endian, the value padded
with zeros to a 4-byte boundary. Types (every value a little-endian u32): 1 function type (1 = AI
core), 2 block dim, 3 kernel ABI version, 4 version of this record layout. Unknown types are skipped,
so later layouts can add records.
"""
from __future__ import annotations

import struct

from .kernel import KERNEL_ABI_VERSION, CorruptKernelError

__all__ = ["META_SECTION", "META_FUNCTION_TYPE", "META_BLOCK_DIM", "META_ABI_VERSION", "META_LAYOUT_VERSION",
           "META_REQUIRED", "FUNCTION_TYPE_AICORE", "META_LAYOUT", "encode_meta", "meta_block_dim", "decode_meta"]

META_SECTION = ".ascend.meta"
META_FUNCTION_TYPE = 1
META_BLOCK_DIM = 2
META_ABI_VERSION = 3
META_LAYOUT_VERSION = 4
META_REQUIRED = (META_FUNCTION_TYPE, META_BLOCK_DIM, META_ABI_VERSION, META_LAYOUT_VERSION)
FUNCTION_TYPE_AICORE = 1
META_LAYOUT = 1


def encode_meta(block_dim: int) -> bytes:
    """The ``.ascend.meta`` records of a kernel (layout in the module docstring); a dynamic-shape
    kernel's block dim (``DYNAMIC``, -1) is stored as its u32 two's complement (see :func:`meta_block_dim`)."""
    records = ((META_FUNCTION_TYPE, FUNCTION_TYPE_AICORE), (META_BLOCK_DIM, meta_block_dim(block_dim)),
               (META_ABI_VERSION, KERNEL_ABI_VERSION), (META_LAYOUT_VERSION, META_LAYOUT))
    return b"".join(struct.pack("<HHI", kind, 4, value) for kind, value in records)


def meta_block_dim(block_dim: int) -> int:
    """The u32 a block dim is recorded as (the .json's -1 of a dynamic-shape kernel as 0xFFFFFFFF)."""
    return block_dim & 0xFFFFFFFF


def decode_meta(data: bytes) -> dict[int, int]:
    """Records of a ``.ascend.meta`` section by type; raises CorruptKernelError if malformed."""
    records: dict[int, int] = {}
    offset = 0
    while offset < len(data):
        if offset + 4 > len(data):
            raise CorruptKernelError(f"{META_SECTION} has a truncated record header at byte {offset}")
        kind, length = struct.unpack_from("<HH", data, offset)
        end = offset + 4 + length
        if end > len(data):
            raise CorruptKernelError(f"{META_SECTION} record type {kind} claims {length} bytes past the end")
        if kind in META_REQUIRED:
            if length != 4:
                raise CorruptKernelError(f"{META_SECTION} record type {kind} has length {length}, expected 4")
            if kind in records:
                raise CorruptKernelError(f"{META_SECTION} repeats record type {kind}")
            records[kind] = struct.unpack_from("<I", data, offset + 4)[0]
        offset = end + (-length % 4)
    missing = [kind for kind in META_REQUIRED if kind not in records]
    if missing:
        raise CorruptKernelError(f"{META_SECTION} lacks record type(s) {missing}")
    return records
