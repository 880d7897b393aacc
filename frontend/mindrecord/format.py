"""MindRecord, MindSpore's own data set format, as MindSpore 2.10 writes and reads it.

Every fact below was measured on files real MindSpore wrote (``tests/fixtures/oracles/mindrecord``);
FileWriter reproduces them byte for byte (the shard files; the ``.db`` index table by table).

**Files.** ``FileWriter(name, shard_num=S)`` writes ``name`` (S = 1) or ``name0`` .. ``name{S-1}`` (the
suffix zero-padded to the width of S-1), each with an SQLite index ``<file>.db``. Rows are split among
the shards per ``write_raw_data`` call: contiguous runs of ``n // S`` rows in shard order, the ``n % S``
remaining rows one each to some shards (MindSpore picks them at random; here they rotate, so rows
written one at a time spread evenly). Both are mode 0600.

**Shard file.** ``[0, 8)`` little-endian u64 ``n``; ``[8, 8 + n)`` the header JSON (compact, UTF-8, keys
in the order ``header_size, index_fields, page, page_size, compression_size, schema, shard_addresses,
shard_id, statistics (null), version ("3.0")``, nested objects with sorted keys); zeros up to
``header_size`` (default 16 MiB; 16 KiB..128 MiB, a multiple of 4). Page ``p`` starts at
``header_size + p * page_size`` (default 32 MiB; 32 KiB..256 MiB, a multiple of 4). The file ends at the
last byte written: 16 MiB + 32 MiB + a few bytes for a small data set with the defaults (sparse).
``shard_addresses`` are the base names of all shards; a reader given one file finds the others there.

**Pages.** A shard's pages are numbered in the order they are opened; ``page_size`` of a page entry is
the bytes it holds. A ``BLOB_DATA`` page holds shard rows ``start_row_id .. end_row_id - 1``, each as a
u64 LE length and the row's blob; blob pages are numbered 0, 1, ... by ``page_type_id``, which is also
the id of their *row group*; they always list ``row_group_ids [{"id": 0, "offset": 0}]``. A ``RAW_DATA``
page holds, per row, a u64 LE length and the msgpack of the row's non-blob fields (a map, keys sorted;
``{"id": 0}`` when every field is a blob); its ``row_group_ids`` say where each row group's rows start;
``start_row_id = end_row_id = 0`` and its ``page_type_id`` is the previous raw page's *page id* + 1 (0 for
the first). A write call first appends to the last blob page, then opens new blob pages, then writes
the raw rows: a new row group (and blob page) starts when the blob page or the row group's raw bytes
would pass ``page_size``; a row group never straddles raw pages: when the last raw page overflows, its
last row group moves to a new raw page.

**Blob of a row.** One blob field (``bytes``, or any field with a ``shape``): its bytes. Several: per
blob field in sorted order a u64 *big-endian* length and the bytes. No blob field: 4 zero bytes. Arrays
are C-order bytes of the schema type. When the schema has an int32/int64 array field, int arrays are
compressed: u32 BE element count, 2-bit size codes (4 per byte, first element in the top bits; 0 int8,
1 int16, 2 int32, 3 int64: the smallest signed type holding the value), then each value little-endian
in that size. The header's ``compression_size`` is the bytes saved, at least 0.

**msgpack** as nlohmann::json writes it: ints >= 0 in the smallest unsigned form, negative ints as
fixint or int8..int64, a float as float32 when it converts exactly (else float64), strings as
fixstr/str8/16/32.

**Index** ``<file>.db``: table ``SHARD_NAME(NAME)`` holds the shard's base name (so a renamed file
fails); table ``INDEXES`` one row per shard row: ``ROW_ID``, ``PAGE_ID_RAW``, ``PAGE_OFFSET_RAW``,
``PAGE_OFFSET_RAW_END``, ``ROW_GROUP_ID``, ``PAGE_ID_BLOB``, ``PAGE_OFFSET_BLOB``, ``PAGE_OFFSET_BLOB_END``
(offsets within the page, spanning the 8-byte length), then per index field ``INC_k`` (0) and the value
as ``<field>_0`` INTEGER/REAL/TEXT. Index fields: ``add_index``'s list in its order, else every scalar
number and string field (sorted); ``"index_fields": null`` when there is none.

**Reading** (MindDataset, FileReader): the files in the order given (one file: its ``shard_addresses``),
each file's rows by ROW_ID; columns in sorted order unless ``columns_list`` says otherwise.
"""
from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ascendemu.errors import InvalidFileError, InvalidParamError, RuntimeParamError, short_repr

VERSION = "3.0"
DEFAULT_HEADER_SIZE = 1 << 24
DEFAULT_PAGE_SIZE = 1 << 25
HEADER_SIZE_RANGE = (1 << 14, 1 << 27)
PAGE_SIZE_RANGE = (1 << 15, 1 << 28)
MAX_SHARD_COUNT = 1000
U64 = struct.Struct("<Q")
BLOB, RAW = "BLOB_DATA", "RAW_DATA"
NO_BLOB = bytes(4)                         # the blob of a row when the schema has no blob field
DUMMY_RAW = {"id": 0}                      # the raw fields of a row when every field is a blob
# A row's raw fields are one flat map; deeper nesting is refused before Python's recursion limit.
MSGPACK_MAX_DEPTH = 64

SCALAR_TYPES = ("int32", "int64", "float32", "float64", "string", "bytes")
ARRAY_TYPES = ("int32", "int64", "float32", "float64")
SQL_TYPES = {"int32": "INTEGER", "int64": "INTEGER", "float32": "REAL", "float64": "REAL", "string": "TEXT"}
# Python type name -> schema types it may fill (MindSpore's VALUE_TYPE_MAP; a str is matched as a substring)
VALUE_TYPES = {"int": ["int32", "int64"], "float": ["float32", "float64"], "str": "string", "bytes": "bytes",
               "int32": "int32", "int64": "int64", "float32": "float32", "float64": "float64",
               "ndarray": ["int32", "int64", "float32", "float64"]}
_FIELD_NAME = re.compile(r"^[0-9a-zA-Z_]+$")
_FORBIDDEN = set("\\/:*?\"<>|`&';")     # characters MindSpore refuses in a file name


# ----------------------------------------------------------------------------------------- errors
class MindRecordException(InvalidParamError):
    """A bad argument or schema, refused by MindSpore's mindrecord Python layer under these names."""


class ParamValueError(MindRecordException):
    pass


class ParamTypeError(MindRecordException):
    pass


class MRMInvalidSchemaError(MindRecordException):
    pass


class MRMAddSchemaError(MindRecordException):
    pass


class MRMDefineIndexError(MindRecordException):
    pass


class MindRecordFileError(InvalidFileError, RuntimeError):
    """A MindRecord file or its ``.db`` is missing, not MindRecord, truncated, corrupt or renamed, or (when
    writing) already exists; MindSpore raises a RuntimeError for these."""


class MindRecordRuntimeError(RuntimeParamError):
    """What MindSpore's writer refuses with a RuntimeError: no valid row, a row larger than a page, a page or
    header size out of range, a write after commit, a header larger than ``header_size``."""


def check_filename(path: Any) -> str:
    """A MindRecord file path by MindSpore's rules (``check_filename``)."""
    if not path:
        raise ParamValueError("File path is not allowed None or empty!")
    if not isinstance(path, str):
        raise ParamValueError(f"File path: {path} is not string.")
    if path.endswith("/"):
        raise ParamValueError("File path can not end with '/'")
    name = os.path.basename(path)
    if set(name) & _FORBIDDEN:
        raise ParamValueError("File name should not contains \\/:*?\"<>|`&;'")
    if name.startswith(" ") or name.endswith(" "):
        raise ParamValueError("File name should not start/end with space.")
    return path


# ----------------------------------------------------------------------------------------- msgpack
_F32 = struct.Struct(">f")
_UNSIGNED = ((0xFF, (0xCC, ">B")), (0xFFFF, (0xCD, ">H")), (0xFFFFFFFF, (0xCE, ">I")), (2**64 - 1, (0xCF, ">Q")))
_SIGNED = ((2**7, (0xD0, ">b")), (2**15, (0xD1, ">h")), (2**31, (0xD2, ">i")), (2**63, (0xD3, ">q")))
_STR_HEADS = ((0xFF, (0xD9, ">B")), (0xFFFF, (0xDA, ">H")), (0xFFFFFFFF, (0xDB, ">I")))
_MAP_HEADS = ((0xFFFF, (0xDE, ">H")), (0xFFFFFFFF, (0xDF, ">I")))
_FLT_MAX = float(np.finfo(np.float32).max)


def pack(value: Any) -> bytes:
    """msgpack of a JSON-like value, as nlohmann::json::to_msgpack encodes it."""
    out = bytearray()
    _pack(value, out)
    return bytes(out)


def _pack(v: Any, out: bytearray) -> None:
    if v is None:
        out.append(0xC0)
    elif v is True or v is False:
        out.append(0xC3 if v else 0xC2)
    elif isinstance(v, int):
        if -32 <= v < 0x80:                                   # positive / negative fixint
            out += struct.pack(">b" if v < 0 else ">B", v)
        else:
            tag, fmt = next(form for limit, form in (_UNSIGNED if v >= 0 else _SIGNED) if abs(v) <= limit)
            out.append(tag)
            out += struct.pack(fmt, v)
    elif isinstance(v, float):
        if -_FLT_MAX <= v <= _FLT_MAX and _F32.unpack(_F32.pack(v))[0] == v:
            out += b"\xca" + _F32.pack(v)
        else:
            out += b"\xcb" + struct.pack(">d", v)
    elif isinstance(v, str):
        data = v.encode("utf-8")
        out += _head(len(data), 0xA0, 32, _STR_HEADS) + data
    elif isinstance(v, dict):
        out += _head(len(v), 0x80, 16, _MAP_HEADS)
        for key in sorted(v):
            _pack(key, out)
            _pack(v[key], out)
    else:
        raise TypeError(f"msgpack: cannot encode {type(v).__name__}")


def _head(n: int, fixed: int, fixed_limit: int, wide: tuple) -> bytes:
    """A string's or map's type byte and length: the fixed form below ``fixed_limit``, else the first of
    ``wide`` ((limit, (tag, struct format)), ...) that holds ``n``."""
    if n < fixed_limit:
        return bytes([fixed | n])
    tag, fmt = next(form for limit, form in wide if n <= limit)
    return bytes([tag]) + struct.pack(fmt, n)


_FIXED = {0xC0: None, 0xC2: False, 0xC3: True}
_NUMBERS = {0xCA: ">f", 0xCB: ">d", 0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q",
            0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}
_LENGTHS = {0xC4: ">B", 0xC5: ">H", 0xC6: ">I", 0xD9: ">B", 0xDA: ">H", 0xDB: ">I",
            0xDC: ">H", 0xDD: ">I", 0xDE: ">H", 0xDF: ">I"}


def unpack(data: bytes) -> Any:
    """The value msgpack ``data`` holds (raises ValueError if it is not exactly one msgpack value, as
    nlohmann::json would write it: map keys are strings, nesting at most MSGPACK_MAX_DEPTH deep)."""
    value, end = _unpack(data, 0, 0)
    if end != len(data):
        raise ValueError(f"{len(data) - end} bytes after the msgpack value")
    return value


def _unpack(b: bytes, i: int, depth: int) -> tuple[Any, int]:
    if i >= len(b):
        raise ValueError("msgpack value is truncated")
    if depth > MSGPACK_MAX_DEPTH:
        raise ValueError(f"msgpack arrays or maps are nested more than {MSGPACK_MAX_DEPTH} deep")
    tag = b[i]
    i += 1
    if tag < 0x80 or tag >= 0xE0:                          # positive / negative fixint
        return tag - 256 * (tag >= 0xE0), i
    if tag in _FIXED:
        return _FIXED[tag], i
    if tag in _NUMBERS:
        fmt = struct.Struct(_NUMBERS[tag])
        if i + fmt.size > len(b):
            raise ValueError("msgpack number is truncated")
        return fmt.unpack_from(b, i)[0], i + fmt.size
    if 0x80 <= tag < 0xC0:                                  # fixmap, fixarray, fixstr
        kind = ("map", "array", "str", "str")[(tag - 0x80) >> 4]
        n = tag & (0x1F if kind == "str" else 0x0F)
    elif tag in _LENGTHS:
        fmt = struct.Struct(_LENGTHS[tag])
        if i + fmt.size > len(b):
            raise ValueError("msgpack length is truncated")
        n, i = fmt.unpack_from(b, i)[0], i + fmt.size
        kind = "bin" if tag <= 0xC6 else "str" if tag <= 0xDB else "array" if tag <= 0xDD else "map"
    else:
        raise ValueError(f"msgpack type byte 0x{tag:02x} is not supported")
    if kind in ("str", "bin"):
        if i + n > len(b):
            raise ValueError("msgpack string is truncated")
        raw = bytes(b[i:i + n])
        return (raw.decode("utf-8") if kind == "str" else raw), i + n
    items = []
    for _ in range(n * (2 if kind == "map" else 1)):
        item, i = _unpack(b, i, depth + 1)
        items.append(item)
    if kind == "array":
        return items, i
    if not all(isinstance(key, str) for key in items[::2]):
        raise ValueError("a msgpack map has a key that is not a string (a JSON object's keys are)")
    return dict(zip(items[::2], items[1::2])), i


# ----------------------------------------------------------------------------------------- int compression
_INT_TYPES = (np.int8, np.int16, np.int32, np.int64)
_SHIFTS = np.array([6, 4, 2, 0], np.uint8)


def compress_ints(values: np.ndarray) -> bytes:
    """MindRecord's int array compression: u32 BE count, 2-bit size codes, each value in its smallest size."""
    v = np.ascontiguousarray(values, "<i8").reshape(-1)
    n = v.size
    codes = np.full(n, 3, np.uint8)
    for code in (2, 1, 0):
        info = np.iinfo(_INT_TYPES[code])
        codes[(v >= info.min) & (v <= info.max)] = code
    padded = np.zeros(-(-n // 4) * 4, np.uint8)
    padded[:n] = codes
    bitmap = np.bitwise_or.reduce(padded.reshape(-1, 4) << _SHIFTS, axis=1).astype(np.uint8)
    data = v.view(np.uint8).reshape(n, 8)[np.arange(8) < (1 << codes.astype(np.int64))[:, None]]
    return struct.pack(">I", n) + bitmap.tobytes() + data.tobytes()


def uncompress_ints(blob: bytes, dtype: np.dtype) -> np.ndarray:
    """The int array ``compress_ints`` made (raises ValueError if ``blob`` is not one)."""
    if len(blob) < 4:
        raise ValueError("compressed int array shorter than its 4-byte count")
    n = struct.unpack_from(">I", blob)[0]
    nbitmap = -(-n // 4)
    if len(blob) < 4 + nbitmap:
        raise ValueError(f"compressed int array of {n} values is truncated")
    bitmap = np.frombuffer(blob, np.uint8, nbitmap, 4)
    sizes = 1 << ((bitmap[:, None] >> _SHIFTS) & 3).reshape(-1)[:n].astype(np.int64)
    if len(blob) != 4 + nbitmap + int(sizes.sum()):
        raise ValueError(f"compressed int array of {n} values holds {len(blob)} bytes, expected "
                         f"{4 + nbitmap + int(sizes.sum())}")
    mask = np.arange(8) < sizes[:, None]
    out = np.zeros((n, 8), np.uint8)
    out[mask] = np.frombuffer(blob, np.uint8, offset=4 + nbitmap)
    negative = out[np.arange(n), sizes - 1] >= 0x80
    out[~mask & negative[:, None]] = 0xFF                    # sign extension
    return out.view("<i8").reshape(n).astype(dtype)


# ----------------------------------------------------------------------------------------- schema
@dataclass(frozen=True)
class Schema:
    """A MindRecord schema: ``fields`` maps each field (sorted) to ``{"type": t}`` or ``{"shape": [...],
    "type": t}``; blob fields are the arrays and ``bytes`` fields, stored in the blob pages."""

    fields: dict[str, dict]
    desc: str = ""
    blob_fields: tuple[str, ...] = field(init=False)
    compressed: bool = field(init=False)          # int arrays are compressed when the schema has one

    def __post_init__(self):
        object.__setattr__(self, "fields", {k: _field(v) for k, v in sorted(self.fields.items())})
        object.__setattr__(self, "blob_fields", tuple(k for k, v in self.fields.items()
                                                      if "shape" in v or v["type"] == "bytes"))
        object.__setattr__(self, "compressed", any("shape" in v and v["type"] in ("int32", "int64")
                                                   for v in self.fields.values()))

    def to_json(self) -> dict:
        return {"blob_fields": list(self.blob_fields), "desc": self.desc, "schema": self.fields}

    def default_index_fields(self) -> list[str]:
        """The fields indexed when ``add_index`` was not called: scalar numbers and strings."""
        return [k for k, v in self.fields.items() if "shape" not in v and v["type"] != "bytes"]


def _field(spec: dict) -> dict:
    return {"shape": list(spec["shape"]), "type": spec["type"]} if "shape" in spec else {"type": spec["type"]}


def schema_error(content: Any) -> str | None:
    """Why ``content`` is not a valid schema (MindSpore's ``_validate_schema`` messages), or None."""
    if not content:
        return "Schema content is empty."
    if not isinstance(content, dict):
        return "Schema content should be dict."
    for name, spec in content.items():
        if not isinstance(name, str) or not _FIELD_NAME.match(name):
            return f"Field '{name}' should be composed of '0-9' or 'a-z' or 'A-Z' or '_'."
        if not spec or not isinstance(spec, dict):
            return f"Field '{name}' should be dict."
        if len(spec) == 1 and "type" in spec:
            if spec["type"] not in SCALAR_TYPES:
                return f"Field '{name}' contain illegal attribute '{spec['type']}'."
        elif len(spec) == 2 and "type" in spec and "shape" in spec:
            if spec["type"] not in ARRAY_TYPES:
                return f"Field '{name}' contain illegal attribute '{spec['type']}'."
            shape = spec["shape"]
            if not isinstance(shape, list) or not shape or \
                    not all(isinstance(d, int) and not isinstance(d, bool) and (d > 0 or d == -1) for d in shape) \
                    or shape.count(-1) > 1:
                return f"Field '{name}' contain illegal attribute '{shape}'; give a list of positive dims and at " \
                       "most one -1"
        else:
            return f"Field '{spec}' contains illegal attributes."
    return None


def row_error(schema: Schema, number: int, row: dict) -> str | None:
    """Why ``row`` (the ``number``-th of a write) does not fit ``schema``, in MindSpore's words, or None."""
    for name, spec in schema.fields.items():
        if name not in row:
            return f"for schema, {number} th data is wrong, there is not field: '{name}' in the raw data."
        value, kind = row[name], type(row[name]).__name__
        if kind not in VALUE_TYPES or spec["type"] not in VALUE_TYPES[kind] or ("shape" in spec and kind != "ndarray"):
            shown = kind if kind not in VALUE_TYPES else spec["type"]
            return f"for schema, {number} th data is wrong, data type: '{shown}' for field: '{name}' is not matched."
        if kind == "ndarray":
            if "shape" not in spec:
                return f"for schema, {number} th data is wrong, data shape for field: '{name}' is not specified."
            if spec["type"] != str(value.dtype):
                return f"for schema, {number} th data is wrong, data type: '{value.dtype}' for field: '{name}' " \
                       "is not matched."
            if resolve_shape(spec["shape"], value.size) is None:
                return f"for schema, {number} th data is wrong, data shape: '{value.shape}' for field: '{name}' " \
                       "is not matched."
        elif spec["type"] in ("int32", "int64"):        # MindSpore writes these (and a number for an array
                                                        # field) and cannot read them back
            info = np.iinfo(spec["type"])
            if not info.min <= value <= info.max:
                return f"for schema, {number} th data is wrong, value: {value} for field: '{name}' is out of " \
                       f"the range of {spec['type']}."
    return None


def resolve_shape(shape: Sequence[int], size: int) -> tuple[int, ...] | None:
    """``shape`` with its -1 filled in for ``size`` elements, or None when it cannot hold them."""
    known = math.prod(d for d in shape if d != -1)
    if -1 in shape:
        if known == 0 or size % known:
            return None
        return tuple(size // known if d == -1 else d for d in shape)
    return tuple(shape) if known == size else None


def encode_row(schema: Schema, row: dict) -> tuple[bytes, bytes, int]:
    """The raw (msgpack) and blob bytes of a valid row, and the bytes int compression saved."""
    raw = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()
           if k in schema.fields and k not in schema.blob_fields}
    parts = []
    for name in schema.blob_fields:
        value, kind = row[name], schema.fields[name]["type"]
        data = np.ascontiguousarray(value).tobytes() if isinstance(value, np.ndarray) else bytes(value)
        compressible = schema.compressed and kind in ("int32", "int64")
        parts.append((data, compress_ints(np.frombuffer(data, kind)) if compressible else data))
    if not parts:
        blob, saved = NO_BLOB, 0
    elif len(parts) == 1:
        blob, saved = parts[0][1], len(parts[0][0]) - len(parts[0][1])
    else:
        blob = b"".join(struct.pack(">Q", len(packed)) + packed for _, packed in parts)
        saved = sum(len(plain) - len(packed) for plain, packed in parts)
    return pack(raw or DUMMY_RAW), blob, saved


def decode_row(schema: Schema, raw: bytes, blob: bytes, columns: Sequence[str]) -> dict[str, Any]:
    """``columns`` of a stored row: raw fields as their JSON values (int, float, str), ``bytes`` fields as
    bytes, arrays as numpy arrays of the schema's type and shape. Raises ValueError on malformed data."""
    fields = unpack(raw)
    if not isinstance(fields, dict):
        raise ValueError("the raw fields are not a msgpack map")
    out: dict[str, Any] = {}
    blobs = _split_blob(schema, blob) if any(c in schema.blob_fields for c in columns) else {}
    for name in columns:
        spec = schema.fields[name]
        if name not in schema.blob_fields:
            if name not in fields:
                raise ValueError(f"the raw fields {sorted(fields)} lack {name!r}")
            out[name] = fields[name]
        elif spec["type"] == "bytes":
            out[name] = blobs[name]
        else:
            dtype = np.dtype(spec["type"])
            if schema.compressed and spec["type"] in ("int32", "int64"):
                flat = uncompress_ints(blobs[name], dtype)
            elif len(blobs[name]) % dtype.itemsize:
                raise ValueError(f"field {name!r} holds {len(blobs[name])} bytes, not a whole number of {dtype}")
            else:
                flat = np.frombuffer(blobs[name], dtype)
            shape = resolve_shape(spec["shape"], flat.size)
            if shape is None:
                raise ValueError(f"field {name!r} holds {flat.size} values, which shape {spec['shape']} cannot hold")
            out[name] = flat.reshape(shape)
    return out


def _split_blob(schema: Schema, blob: bytes) -> dict[str, bytes]:
    if len(schema.blob_fields) == 1:
        return {schema.blob_fields[0]: blob}
    parts, i = {}, 0
    for name in schema.blob_fields:
        if i + 8 > len(blob):
            raise ValueError(f"the blob ends before field {name!r}")
        n = struct.unpack_from(">Q", blob, i)[0]
        if i + 8 + n > len(blob):
            raise ValueError(f"field {name!r} announces {n} bytes, past the end of the blob")
        parts[name], i = blob[i + 8:i + 8 + n], i + 8 + n
    if i != len(blob):
        raise ValueError(f"{len(blob) - i} bytes after the last blob field")
    return parts


# ----------------------------------------------------------------------------------------- pages (writing)
@dataclass
class Page:
    """One page entry of the header; ``size`` is the bytes the page holds."""

    page_id: int
    kind: str
    type_id: int
    start_row: int
    end_row: int
    groups: list[list[int]]           # raw pages: [row group id, offset of its first row]
    size: int

    def to_json(self, shard_id: int) -> dict:
        groups = self.groups if self.kind == RAW else [[0, 0]]
        return {"end_row_id": self.end_row, "page_id": self.page_id, "page_size": self.size, "page_type": self.kind,
                "page_type_id": self.type_id, "row_group_ids": [{"id": g, "offset": o} for g, o in groups],
                "shard_id": shard_id, "start_row_id": self.start_row}


class ShardPages:
    """The pages of one shard file being written, laid out as MindSpore's ShardWriter lays them out."""

    def __init__(self, fd: int, header_size: int, page_size: int):
        self.fd, self.header_size, self.page_size = fd, header_size, page_size
        self.pages: list[Page] = []
        self.last_blob: Page | None = None
        self.last_raw: Page | None = None

    def _at(self, page: int, offset: int) -> int:
        return self.header_size + page * self.page_size + offset

    def write(self, raws: list[bytes], blobs: list[bytes]) -> None:
        """Append rows (their raw and blob bytes; each fits a page) to the shard."""
        raw_sizes, blob_sizes = [8 + len(r) for r in raws], [8 + len(b) for b in blobs]
        groups = self._cut(raw_sizes, blob_sizes)
        first, rest = groups[0], groups[1:]
        if first[0] < first[1]:                         # rows that join the last blob page
            blob_page = self.last_blob
            os.pwrite(self.fd, _chunk(blobs[first[0]:first[1]]), self._at(blob_page.page_id, blob_page.size))
            blob_page.size += sum(blob_sizes[first[0]:first[1]])
            blob_page.end_row += first[1] - first[0]
        type_id = self.last_blob.type_id if self.last_blob else -1
        row = self.last_blob.end_row if self.last_blob else 0
        for start, end in rest:                          # one new blob page per further row group
            type_id += 1
            page = Page(len(self.pages), BLOB, type_id, row, row + end - start, [], sum(blob_sizes[start:end]))
            os.pwrite(self.fd, _chunk(blobs[start:end]), self._at(page.page_id, 0))
            self.pages.append(page)
            self.last_blob, row = page, page.end_row
        if first[0] < first[1] and self.last_raw.size + sum(raw_sizes[first[0]:first[1]]) > self.page_size:
            self._move_last_group()
        group_id = self.last_raw.groups[-1][0] if self.last_raw else -1
        for i, (start, end) in enumerate(groups):
            if start == end:
                continue
            size = sum(raw_sizes[start:end])
            if self.last_raw is None or self.last_raw.size + size > self.page_size:
                self._open_raw_page([], 0)
            page = self.last_raw
            os.pwrite(self.fd, _chunk(raws[start:end]), self._at(page.page_id, page.size))
            if i > 0:
                group_id += 1
                page.groups.append([group_id, page.size])
            page.size += size

    def _cut(self, raw_sizes: list[int], blob_sizes: list[int]) -> list[tuple[int, int]]:
        """Row groups: the first continues the last blob page (may be empty), each further one opens one."""
        n_blob = self.last_blob.size if self.last_blob else 0
        n_raw = self.last_raw.size - self.last_raw.groups[-1][1] if self.last_raw else 0
        groups, start = [], 0
        for i, (r, b) in enumerate(zip(raw_sizes, blob_sizes)):
            if n_blob == 0 or n_blob + b > self.page_size or n_raw + r > self.page_size:
                groups.append((start, i))
                start, n_blob, n_raw = i, b, r
            else:
                n_blob, n_raw = n_blob + b, n_raw + r
        groups.append((start, len(raw_sizes)))
        return groups

    def _move_last_group(self) -> None:
        """The last raw page's last row group, moved to a new raw page (a row group never straddles two)."""
        old = self.last_raw
        group_id, offset = old.groups.pop()
        data = os.pread(self.fd, old.size - offset, self._at(old.page_id, offset))
        old.size = offset
        self._open_raw_page([[group_id, 0]], len(data))
        os.pwrite(self.fd, data, self._at(self.last_raw.page_id, 0))

    def _open_raw_page(self, groups: list[list[int]], size: int) -> None:
        type_id = self.last_raw.page_id + 1 if self.last_raw else 0      # MindSpore numbers them by page id
        self.last_raw = Page(len(self.pages), RAW, type_id, 0, 0, groups, size)
        self.pages.append(self.last_raw)

    def index_rows(self, index_fields: list[str]) -> list[tuple]:
        """The ``INDEXES`` rows of the shard, read back from the pages as MindSpore's index generator does."""
        blob_pages = {p.type_id: p for p in self.pages if p.kind == BLOB}
        rows = []
        for raw_page in (p for p in self.pages if p.kind == RAW):
            for group_id, raw_offset in raw_page.groups:
                blob_page, blob_offset = blob_pages[group_id], 0
                for row_id in range(blob_page.start_row, blob_page.end_row):
                    raw_len = U64.unpack(os.pread(self.fd, 8, self._at(raw_page.page_id, raw_offset)))[0]
                    values = unpack(os.pread(self.fd, raw_len, self._at(raw_page.page_id, raw_offset + 8)))
                    blob_len = U64.unpack(os.pread(self.fd, 8, self._at(blob_page.page_id, blob_offset)))[0]
                    rows.append((row_id, raw_page.page_id, raw_offset, raw_offset + 8 + raw_len, group_id,
                                 blob_page.page_id, blob_offset, blob_offset + 8 + blob_len,
                                 *[v for name in index_fields for v in (0, values[name])]))
                    raw_offset += 8 + raw_len
                    blob_offset += 8 + blob_len
        return rows


def _chunk(items: list[bytes]) -> bytes:
    return b"".join(U64.pack(len(item)) + item for item in items)


def header_bytes(schema: Schema, index_fields: list[str] | None, pages: list[Page], addresses: list[str],
                 shard_id: int, header_size: int, page_size: int, compression_size: int) -> bytes:
    """The header as MindSpore serialises it: u64 LE length, then the JSON."""
    header = {"header_size": header_size,
              "index_fields": [{"index_field": f, "schema_id": 0} for f in index_fields] if index_fields else None,
              "page": [p.to_json(shard_id) for p in pages], "page_size": page_size,
              "compression_size": max(compression_size, 0), "schema": [schema.to_json()],
              "shard_addresses": addresses, "shard_id": shard_id, "statistics": None, "version": VERSION}
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return U64.pack(len(text)) + text


def write_index(path: str, shard_name: str, schema: Schema, index_fields: list[str], rows: list[tuple]) -> None:
    """Create the SQLite index ``path`` with MindSpore's tables."""
    columns = "".join(f",INC_{k} INT, {name}_0 {SQL_TYPES[schema.fields[name]['type']]}"
                      for k, name in enumerate(index_fields))
    keys = "".join(f",INC_{k}" for k in range(len(index_fields)))
    names = "".join(f",INC_{k},{name}_0" for k, name in enumerate(index_fields))
    db = sqlite3.connect(path)
    try:
        db.execute("CREATE TABLE INDEXES(  ROW_ID               INT  NOT NULL, PAGE_ID_RAW          INT  NOT NULL"
                   ", PAGE_OFFSET_RAW      INT  NOT NULL, PAGE_OFFSET_RAW_END  INT  NOT NULL"
                   ", ROW_GROUP_ID         INT  NOT NULL, PAGE_ID_BLOB         INT  NOT NULL"
                   ", PAGE_OFFSET_BLOB     INT  NOT NULL, PAGE_OFFSET_BLOB_END INT  NOT NULL"
                   f"{columns}, PRIMARY KEY(ROW_ID{keys}));")
        db.execute("CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL);")
        db.execute("INSERT INTO SHARD_NAME (NAME) VALUES (?);", (shard_name,))
        db.executemany("INSERT INTO INDEXES (ROW_ID,PAGE_ID_RAW,PAGE_OFFSET_RAW,PAGE_OFFSET_RAW_END,ROW_GROUP_ID,"
                       f"PAGE_ID_BLOB,PAGE_OFFSET_BLOB,PAGE_OFFSET_BLOB_END{names}) "
                       f"VALUES ({','.join('?' * (8 + 2 * len(index_fields)))})", rows)
        db.commit()
    finally:
        db.close()


# ----------------------------------------------------------------------------------------- reading
_HEADER_KEYS = {"header_size": int, "page": list, "page_size": int, "schema": list, "shard_addresses": list,
                "shard_id": int}


class ShardFile:
    """One shard file opened for reading: its header (checked against the file) and its index (checked
    against the header). Rows are read with ``pread`` on demand."""

    def __init__(self, path: str, who: str):
        self.path, self.who, self._fd = path, who, None
        self.name = os.path.basename(path)
        if not os.path.isfile(path):
            raise MindRecordFileError(f"{who}: the MindRecord file {path} does not exist or is not a file; give "
                                      "the path FileWriter wrote (for several shards, any one of them)")
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise self._bad(f"it is {size} bytes, shorter than the 8-byte header length")
            n = U64.unpack(head)[0]
            if n + 8 > HEADER_SIZE_RANGE[1] or n + 8 > size:
                raise self._bad(f"its header length field says {n} bytes (the file has {size}); it is not a "
                                "MindRecord file or it is truncated")
            text = f.read(n)
        try:
            header = json.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise self._bad(f"its header is not JSON ({exc})") from None
        if not isinstance(header, dict) or any(not isinstance(header.get(k), t) for k, t in _HEADER_KEYS.items()) \
                or len(header["schema"]) != 1 or not isinstance(header["schema"][0], dict):
            raise self._bad("its header lacks the MindRecord keys (header_size, page, page_size, schema, "
                            "shard_addresses, shard_id)")
        self.header = header
        self.header_size, self.page_size = header["header_size"], header["page_size"]
        if not (HEADER_SIZE_RANGE[0] <= self.header_size <= HEADER_SIZE_RANGE[1]
                and PAGE_SIZE_RANGE[0] <= self.page_size <= PAGE_SIZE_RANGE[1]):
            raise self._bad(f"its header gives header_size {self.header_size} and page_size {self.page_size}, "
                            f"outside MindRecord's ranges {HEADER_SIZE_RANGE} and {PAGE_SIZE_RANGE}")
        spec = header["schema"][0]
        error = schema_error(spec.get("schema"))
        if error is not None:
            raise self._bad(f"its schema is invalid: {error}")
        self.schema = Schema(spec["schema"], spec.get("desc", ""))
        self.pages = self._pages(header["page"])
        end = max((self.header_size + p["page_id"] * self.page_size + p["page_size"] for p in self.pages),
                  default=0)
        if size < end:
            raise self._bad(f"it is truncated: {size} bytes, but its pages reach byte {end}; copy or write it again")
        self.index = self._read_index()

    def _bad(self, why: str) -> MindRecordFileError:
        return MindRecordFileError(f"{self.who}: {self.path} is not a readable MindRecord file: {why}")

    def _pages(self, entries: list) -> list[dict]:
        keys = ("page_id", "page_size", "page_type", "page_type_id", "start_row_id", "end_row_id")
        for p in entries:
            if not isinstance(p, dict) or any(not isinstance(p.get(k), str if k == "page_type" else int)
                                              for k in keys) or p["page_type"] not in (BLOB, RAW) \
                    or p["page_id"] < 0 or not 0 <= p["page_size"] <= self.page_size:
                raise self._bad(f"its header has a malformed page entry {short_repr(p)}")
        return entries

    def _read_index(self) -> np.ndarray:
        """``(rows, 6)`` int64: raw page, raw start, raw end, blob page, blob start, blob end, by ROW_ID."""
        db_path = self.path + ".db"
        if not os.path.isfile(db_path):
            raise MindRecordFileError(f"{self.who}: the index {db_path} of {self.path} does not exist; FileWriter "
                                      "writes it on commit(), copy it along with the data file")
        try:
            db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
            try:
                names = db.execute("SELECT NAME FROM SHARD_NAME").fetchall()
                rows = db.execute("SELECT ROW_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, PAGE_ID_BLOB, "
                                  "PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END FROM INDEXES ORDER BY ROW_ID").fetchall()
            finally:
                db.close()
        except sqlite3.Error as exc:
            raise MindRecordFileError(f"{self.who}: the index {db_path} is not a MindRecord index ({exc}); write "
                                      "the data set again") from None
        if names != [(self.name,)]:
            raise MindRecordFileError(f"{self.who}: the index {db_path} belongs to {names[0][0] if names else None!r}"
                                      f", not to {self.name!r}: MindRecord files cannot be renamed; use the names "
                                      "FileWriter wrote") from None
        index = np.array(rows, np.int64).reshape(-1, 7)
        expected = sum(p["end_row_id"] - p["start_row_id"] for p in self.pages if p["page_type"] == BLOB)
        if len(index) != expected or (index[:, 0] != np.arange(len(index))).any():
            raise MindRecordFileError(f"{self.who}: the index {db_path} lists {len(index)} rows but {self.path} holds "
                                      f"{expected}; the two files do not belong together, write the data set again")
        last = max((p["page_id"] for p in self.pages), default=0)
        kind, used = np.full(last + 1, "", object), np.zeros(last + 1, np.int64)
        for p in self.pages:
            kind[p["page_id"]], used[p["page_id"]] = p["page_type"], p["page_size"]
        for page_col, want in ((1, RAW), (4, BLOB)):
            page, start, end = index[:, page_col], index[:, page_col + 1], index[:, page_col + 2]
            inside = (page >= 0) & (page <= last)
            ok = inside & (start >= 0) & (start < end)
            ok[inside] &= (kind[page[inside]] == want) & (end[inside] <= used[page[inside]])
            if not ok.all():
                bad = int(np.flatnonzero(~ok)[0])
                raise MindRecordFileError(f"{self.who}: the index {db_path} points row {bad} outside the {want} pages "
                                          f"of {self.path} (page {page[bad]}, bytes {start[bad]}..{end[bad]}); "
                                          "write the data set again")
        return index[:, 1:]

    def __len__(self) -> int:
        return len(self.index)

    def read(self, row: int, columns: Sequence[str]) -> dict[str, Any]:
        """``columns`` of shard row ``row`` (see :func:`decode_row`)."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        raw_page, raw_start, raw_end, blob_page, blob_start, blob_end = self.index[row].tolist()
        raw = os.pread(self._fd, raw_end - raw_start, self.header_size + raw_page * self.page_size + raw_start)
        blob = os.pread(self._fd, blob_end - blob_start, self.header_size + blob_page * self.page_size + blob_start)
        try:
            if U64.unpack_from(raw)[0] != len(raw) - 8 or U64.unpack_from(blob)[0] != len(blob) - 8:
                raise ValueError("its length fields disagree with the index")
            return decode_row(self.schema, raw[8:], blob[8:], columns)
        except (ValueError, struct.error) as exc:
            raise MindRecordFileError(f"{self.who}: row {row} of {self.path} is corrupt: {exc}") from None
        except MemoryError:
            raise MindRecordFileError(f"{self.who}: row {row} of {self.path} is corrupt: decoding it needs more "
                                      "memory than this process can allocate") from None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self):
        self.close()


def open_shards(dataset_files: Any, who: str) -> list[ShardFile]:
    """The shard files a data set argument names: a path (that file and the shards its header lists, in
    the header's order) or a list of paths (exactly those, in that order). All must share one schema."""
    if isinstance(dataset_files, (str, os.PathLike)):
        first = ShardFile(os.fspath(dataset_files), who)
        addresses = first.header["shard_addresses"]
        if first.name not in addresses:
            raise MindRecordFileError(f"{who}: {first.path} calls its shards {addresses}, which do not include "
                                      f"{first.name!r}: MindRecord files cannot be renamed; use the names FileWriter "
                                      "wrote")
        folder = os.path.dirname(first.path)
        shards = [first if name == first.name else ShardFile(os.path.join(folder, name), who) for name in addresses]
    elif isinstance(dataset_files, (list, tuple)) and dataset_files and \
            all(isinstance(f, (str, os.PathLike)) for f in dataset_files):
        shards = [ShardFile(os.fspath(f), who) for f in dataset_files]
    else:
        raise InvalidParamError(f"{who}: dataset_files {short_repr(dataset_files)} must be a MindRecord file path or "
                                "a non-empty list of them")
    for shard in shards[1:]:
        if shard.schema != shards[0].schema:
            raise MindRecordFileError(f"{who}: {shard.path} has the schema {shard.schema.fields}, but {shards[0].path} "
                                      f"has {shards[0].schema.fields}; read files of one data set together")
    return shards


__all__ = ["check_filename", "Schema", "ShardFile", "ShardPages", "open_shards", "pack", "unpack", "compress_ints",
           "uncompress_ints", "resolve_shape", "encode_row", "decode_row", "schema_error", "row_error", "header_bytes",
           "write_index", "MindRecordException", "ParamValueError", "ParamTypeError", "MRMInvalidSchemaError",
           "MRMAddSchemaError", "MRMDefineIndexError", "MindRecordFileError", "MindRecordRuntimeError"]
