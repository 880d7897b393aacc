"""MindSpore's ``checkpoint.proto`` (2.10) wire format, encoded and decoded by hand.

The schema is proto2 with no package::

    message Checkpoint {
        message Value {
            required string tag = 1;                   // the parameter's name
            oneof value { TensorProto tensor = 2; MapTensorProto maptensor = 3; }
        }
        repeated Value value = 1;
    }
    message TensorProto {
        repeated int64 dims = 1;                       // proto2: not packed, one varint per dim
        required string tensor_type = 2;               // "Float32", "Int32", "str", ...
        required bytes tensor_content = 3;             // little-endian C-order array bytes
    }
    message MapTensorProto { repeated TensorProto tensor = 1; }

Why by hand: google.protobuf's Python API copies a large ``bytes`` field several times (measured,
64 MiB of float32: 0.5 to 1.3 s to build and serialise one Value, against 0.06 s for one memcpy).
Here the writer emits a record's few header bytes (:func:`value_head`) and then the array's own
buffer, and the reader streams the file: it reads the small fields of each record and returns
each entry's content as offsets into the file, so a file of any size is parsed in bounded memory. The encoding
is protobuf's canonical one (fields in number order, as MindSpore's protobuf writes them), so the
bytes are MindSpore's; the reader accepts any valid encoding of the schema (fields in any order,
packed dims, unknown fields skipped). ``tests/test_checkpoint.py`` checks both against
google.protobuf with its own copy of the schema and against files real MindSpore wrote.
"""
from __future__ import annotations

import os
from typing import BinaryIO, Iterator, NamedTuple, Sequence

__all__ = ["Value", "WireError", "iter_values", "value_head"]

# protobuf wire types; the fixed-size ones only ever appear in fields a reader skips
VARINT, I64, LEN, I32 = 0, 1, 2, 5
FIXED_SIZES = {I64: 8, I32: 4}
# field numbers of checkpoint.proto
CHECKPOINT_VALUE = 1
VALUE_TAG, VALUE_TENSOR, VALUE_MAPTENSOR = 1, 2, 3
TENSOR_DIMS, TENSOR_TYPE, TENSOR_CONTENT = 1, 2, 3
RECORD_KEY = CHECKPOINT_VALUE << 3 | LEN          # 0x0a: every top-level record of a .ckpt body
MAX_VARINT_BYTES = 10
# Bounds on what the reader holds in memory for one record besides the tensor itself: a tag or a
# tensor_type longer than this is not a parameter name or a type name (MindSpore's are < 100 bytes),
# and numpy holds at most this many dims.
MAX_TEXT_BYTES = 1 << 16
MAX_DIMS = 64
# The reader reads the file ahead in windows of this size (records' heads are a few dozen bytes).
READ_WINDOW = 1 << 16
_U64 = 1 << 64


class WireError(ValueError):
    """Bytes that are not a well-formed record; ``offset`` is where the record starts (-1: unknown),
    ``tag`` the parameter it holds if that much was read."""

    def __init__(self, problem: str, offset: int = -1, tag: str | None = None):
        super().__init__(problem)
        self.problem, self.offset, self.tag = problem, offset, tag


class Value(NamedTuple):
    """One decoded ``Checkpoint.Value``; its tensor_content is bytes ``start:stop`` of the file."""

    tag: str
    kind: str                    # "tensor" or "maptensor" (the oneof's case)
    dims: list[int]
    tensor_type: str
    start: int
    stop: int


# ------------------------------------------------------------------------------------------ encoding

def _varint(n: int) -> bytes:
    n %= _U64                                       # int64: a negative value is its two's complement
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _len_key(number: int, size: int) -> bytes:
    return _varint(number << 3 | LEN) + _varint(size)


def value_head(tag: str, dims: Sequence[int], tensor_type: str, content_size: int) -> bytes:
    """The bytes of one serialised ``Checkpoint{value: [Value{tag, tensor}]}`` that come before its
    tensor_content: the whole record is ``value_head(...) + content``."""
    tag_bytes, type_bytes = tag.encode("utf-8"), tensor_type.encode("utf-8")
    tensor = (b"".join(_varint(TENSOR_DIMS << 3 | VARINT) + _varint(d) for d in dims)
              + _len_key(TENSOR_TYPE, len(type_bytes)) + type_bytes + _len_key(TENSOR_CONTENT, content_size))
    tensor_size = len(tensor) + content_size
    value = _len_key(VALUE_TAG, len(tag_bytes)) + tag_bytes + _len_key(VALUE_TENSOR, tensor_size)
    return _len_key(CHECKPOINT_VALUE, len(value) + tensor_size) + value + tensor


# ------------------------------------------------------------------------------------------ decoding

class _Reader:
    """A file read forwards through a window of READ_WINDOW bytes, with the byte position (for offsets
    in errors); the large fields (tensor_content, unknown fields) are skipped, never read here."""

    def __init__(self, file: BinaryIO, end: int):
        self.fd, self.pos, self.end = file.fileno(), 0, end
        self.window, self.window_start = b"", 0

    def _fill(self, size: int) -> int:
        """Index of ``pos`` in the window, after reading ahead so that it holds ``size`` bytes from
        there (fewer at the end of the file)."""
        at = self.pos - self.window_start
        if at < 0 or at + size > len(self.window):
            self.window, self.window_start, at = os.pread(self.fd, max(size, READ_WINDOW), self.pos), self.pos, 0
        return at

    def varint(self, end: int) -> int:
        at = self.pos - self.window_start
        if 0 <= at < len(self.window) and self.pos < end and self.window[at] < 0x80:
            self.pos += 1                         # the common case: a one-byte number in the window
            return self.window[at]
        at = self._fill(MAX_VARINT_BYTES)
        window, value = self.window, 0
        for shift in range(0, 7 * MAX_VARINT_BYTES, 7):
            if self.pos >= end or at >= len(window):
                raise WireError("a number runs past the end of its record" if self.pos >= end else
                                f"ends at byte {self.pos}: the file is truncated")
            byte = window[at]
            at += 1
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
        raise WireError(f"a number is longer than {MAX_VARINT_BYTES} bytes")

    def take(self, size: int, end: int, problem: str) -> bytes:
        if self.pos + size > end:
            raise WireError(problem)
        at = self._fill(size)
        data = self.window[at:at + size]
        if len(data) != size:                     # the file shrank under us
            raise WireError(f"ends at byte {self.pos + len(data)}: the file is truncated")
        self.pos += size
        return data

    def skip(self, size: int) -> None:
        self.pos += size

    def fields(self, end: int) -> Iterator[tuple[int, int, int]]:
        """(field number, wire type, a) of each field up to ``end``: a varint's value, or a
        length-delimited field's size, its bytes next in the file (the consumer reads or skips
        them); fixed-size fields are skipped."""
        while self.pos < end:
            key = self.varint(end)
            number, wire = key >> 3, key & 7
            if wire == VARINT:
                yield number, wire, self.varint(end)
            elif wire == LEN:
                size = self.varint(end)
                if self.pos + size > end:
                    raise WireError(f"field {number} needs {size} bytes but its record has {end - self.pos} left")
                stop = self.pos + size
                yield number, wire, size
                if self.pos != stop:              # not consumed: skip it
                    self.skip(stop - self.pos)
            elif wire in FIXED_SIZES and self.pos + FIXED_SIZES[wire] <= end:
                self.skip(FIXED_SIZES[wire])
            else:
                raise WireError(f"field {number} has wire type {wire}, which no checkpoint field uses")

    def text(self, size: int, what: str) -> str:
        if size > MAX_TEXT_BYTES:
            raise WireError(f"its {what} is {size} bytes long, more than {MAX_TEXT_BYTES}")
        try:
            return self.take(size, self.end, "").decode("utf-8")
        except UnicodeDecodeError:
            raise WireError(f"its {what} is not UTF-8") from None


def _signed(n: int) -> int:
    return n - _U64 if n >= 1 << 63 else n


def _value(reader: _Reader, end: int, found: list[str]) -> Value:
    """The Value in the file up to ``end``; its tag goes to ``found`` as soon as it is read, so that
    an error later in the record can name the parameter."""
    tag = tensor = None
    kind = ""
    for number, wire, size in reader.fields(end):
        if wire != LEN:
            continue
        if number == VALUE_TAG:
            tag = reader.text(size, "tag")
            found.append(tag)
        elif number == VALUE_TENSOR:
            kind, tensor = "tensor", _tensor(reader, reader.pos + size, tag or "")
        elif number == VALUE_MAPTENSOR:
            kind, tensor = "maptensor", None
    if tag is None:
        raise WireError("it has no tag (parameter name)")
    if tensor is None:
        return Value(tag, kind, [], "", 0, 0)
    return tensor._replace(tag=tag)


def _tensor(reader: _Reader, end: int, tag: str) -> Value:
    dims: list[int] = []
    tensor_type = content = None
    for number, wire, a in reader.fields(end):
        if number == TENSOR_DIMS and wire == VARINT:
            dims.append(_signed(a))
        elif number == TENSOR_DIMS and wire == LEN:              # packed, as proto3 writers do
            stop = reader.pos + a
            while reader.pos < stop and len(dims) <= MAX_DIMS:
                dims.append(_signed(reader.varint(stop)))
        elif number == TENSOR_TYPE and wire == LEN:
            tensor_type = reader.text(a, "tensor_type")
        elif number == TENSOR_CONTENT and wire == LEN:
            content = (reader.pos, reader.pos + a)             # left in the file: skipped by fields()
        if len(dims) > MAX_DIMS:
            raise WireError(f"entry {tag!r} has more than {MAX_DIMS} dims")
    if tensor_type is None or content is None:
        raise WireError(f"entry {tag!r} lacks its required tensor_type or tensor_content")
    return Value(tag, "tensor", dims, tensor_type, *content)


def iter_values(file: BinaryIO, size: int) -> Iterator[tuple[int, Value]]:
    """(offset, Value) of each top-level record of a .ckpt body: the first ``size`` bytes of ``file``
    (the file without its CRC trailer), read with pread in one forward pass; tensor_content is
    left in the file (``Value.start``, ``Value.stop``), so memory stays small whatever the file
    holds. A malformed record raises WireError with its offset and, if it got that far, its tag."""
    reader = _Reader(file, size)
    while reader.pos < size:
        start = reader.pos
        found: list[str] = []
        try:
            key = reader.varint(size)
            if key != RECORD_KEY:
                first = os.pread(reader.fd, 1, start)[0]
                raise WireError(f"starts with byte 0x{first:02x}, not 0x{RECORD_KEY:02x}: the file is not a "
                                f"MindSpore checkpoint, or it is damaged or encrypted")
            length = reader.varint(size)
            if reader.pos + length > size:
                found.extend(_peek_tag(reader, size))
                raise WireError(f"runs past the end of the file ({size - start} bytes left): the file is "
                                f"truncated")
            value = _value(reader, reader.pos + length, found)
        except WireError as e:
            raise WireError(e.problem, start, found[0] if found else None) from None
        yield start, value


def _peek_tag(reader: _Reader, size: int) -> list[str]:
    """The tag of a truncated record, if its head is intact (MindSpore writes the tag first)."""
    try:
        key = reader.varint(size)
        length = reader.varint(size)
        if key == VALUE_TAG << 3 | LEN and length <= MAX_TEXT_BYTES:
            return [reader.take(length, size, "").decode("utf-8", "replace")]
    except WireError:
        pass
    return []
