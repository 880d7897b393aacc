"""MindSpore's summary file format, encoded by hand: TFRecord-framed ``Event`` messages of MindSpore's
``summary.proto`` (proto2, package ``mindspore.irpb``), the fields in number order as protobuf writes
them, so a file here parses with MindSpore's schema (and MindInsight) as one MindSpore wrote::

    message Event { required double wall_time = 1; optional int64 step = 2;
                    oneof what { string version = 3; Summary summary = 5; ... } }
    message Summary { repeated Value value = 1;
        message Value { required string tag = 1;
                        oneof value { float scalar_value = 3; Image image = 4; TensorProto tensor = 8;
                                      Histogram histogram = 9; ... } }
        message Image { required int32 height = 1, width = 2, colorspace = 3; required bytes encoded_image = 4; }
        message Histogram { repeated bucket buckets = 1;   // bucket {double left = 1, width = 2; int64 count = 3}
                            int64 nan_count = 2, pos_inf_count = 3, neg_inf_count = 4;
                            double max = 5, min = 6, sum = 7; int64 count = 8; } }
    message TensorProto { repeated int64 dims = 1; DataType data_type = 2; repeated float float_data = 3 [packed]; }

A record is ``uint64 length | uint32 masked crc32c(length) | data | uint32 masked crc32c(data)``
(little-endian; TensorBoard's mask). The values are made as MindSpore's ``_summary_adapter`` makes
them: a scalar's first element, a tensor's values as floats, a histogram of an experience-based
number of equal buckets, images as one PNG canvas of at most 8 per row.
"""
from __future__ import annotations

import io
import struct
from typing import Any

import numpy as np
from PIL import Image

from ...checkpoint_proto import _len_key as len_key
from ...checkpoint_proto import _varint as varint

# the version the first event of a file names (MindSpore's EVENT_FILE_INIT_VERSION_MARK + VERSION)
EVENT_VERSION = "MindSpore.Event:1"
# anf_ir.proto's DataType numbers of the numpy dtypes a tensor summary may hold
PROTO_DTYPES = {"bool": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "uint8": 6, "uint16": 7, "uint32": 8,
                "uint64": 9, "float16": 10, "float32": 11, "float64": 12}
# histogram buckets: at most this many, about this many values per bucket (MindSpore's choice)
MAX_BINS, VALUES_PER_BIN = 90, 10
# images per row of the canvas a batch is drawn on
CANVAS_COLUMNS = 8
# the channel count MindSpore records as an image's colorspace (its canvases are RGB)
RGB_CHANNELS = 3


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum TFRecord frames carry."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """TensorBoard's masked CRC: rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """One TFRecord record of ``data``."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


def _msg(number: int, body: bytes) -> bytes:
    return len_key(number, len(body)) + body


def _double(number: int, value: float) -> bytes:
    return varint(number << 3 | 1) + struct.pack("<d", value)


def _int(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(int(value))


def init_event(wall_time: float) -> bytes:
    """The first event of a file: its wall time and the format version."""
    return _double(1, wall_time) + _msg(3, EVENT_VERSION.encode())


def summary_event(values: list[tuple[str, str, np.ndarray]], step: int, wall_time: float) -> bytes:
    """An Event of one step's summary values: (kind, tag, data) with kind Scalar/Tensor/Image/Histogram."""
    body = b""
    for kind, tag, data in values:
        value = _VALUE_FILLERS[kind](data)
        if value is not None:
            body += _msg(1, _msg(1, tag.encode()) + value)
    return _double(1, wall_time) + _int(2, step) + _msg(5, body)


def _scalar(data: np.ndarray) -> bytes | None:
    """The first element, as MindSpore takes it (an empty tensor records nothing)."""
    if data.size == 0:
        return None
    return varint(3 << 3 | 5) + struct.pack("<f", float(data.reshape(-1)[0]))


def _tensor(data: np.ndarray) -> bytes:
    if data.dtype.name not in PROTO_DTYPES:
        raise TypeError(f"Transform numpy type failed in Summary, expect numpy type is one of "
                        f"{list(PROTO_DTYPES)}, but got {data.dtype.name}.")
    floats = np.asarray(data, np.float32).reshape(-1).astype("<f4").tobytes()
    body = b"".join(_int(1, d) for d in data.shape) + _int(2, PROTO_DTYPES[data.dtype.name]) + _msg(3, floats)
    return _msg(8, body)


def histogram_bins(count: int) -> int:
    """MindSpore's bucket count for ``count`` finite values."""
    if not count:
        return 1
    if count <= 5:
        return 2
    if count <= 10:
        return 3
    return count // VALUES_PER_BIN + 1 if count <= (MAX_BINS - 1) * VALUES_PER_BIN else MAX_BINS


def _histogram(data: np.ndarray) -> bytes:
    finite = data[np.isfinite(data)] if data.dtype.kind == "f" else data.reshape(-1)
    counts = [int(np.count_nonzero(f(data))) if data.dtype.kind == "f" else 0
              for f in (np.isnan, np.isposinf, np.isneginf)]
    body = b""
    low = high = total = 0.0
    if finite.size:
        low, high, total = float(finite.min()), float(finite.max()), float(finite.sum(dtype=np.float64))
        first, last = (low, high) if low < high else (low - 0.5, high + 0.5)
        edges = np.linspace(first, last, histogram_bins(finite.size) + 1, dtype=data.dtype)
        hist, edges = np.histogram(finite, bins=edges)
        for count, left, right in zip(hist, edges, edges[1:]):
            body += _msg(1, _double(1, float(left)) + _double(2, float(right - left)) + _int(3, int(count)))
    body += _int(2, counts[0]) + _int(3, counts[1]) + _int(4, counts[2])
    body += _double(5, high) + _double(6, low) + _double(7, total) + _int(8, data.size)
    return _msg(9, body)


def _canvas(nchw: np.ndarray) -> np.ndarray:
    """A batch of NCHW images as one HWC canvas, ``CANVAS_COLUMNS`` images a row (grey made RGB)."""
    if nchw.shape[1] == 1:
        nchw = np.concatenate([nchw] * 3, 1)
    n, _, h, w = nchw.shape
    cols = min(n, CANVAS_COLUMNS)
    rows = -(-n // cols)
    out = np.zeros((3, h * rows, w * cols))
    for i in range(n):
        y, x = divmod(i, cols)
        out[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = nchw[i]
    return out.transpose(1, 2, 0)


def _image(data: np.ndarray) -> bytes | None:
    """An NCHW batch (C 1 or 3) as a PNG, scaled to [0, 255] as MindSpore scales it; else nothing."""
    if data.ndim != 4 or data.shape[1] not in (1, 3) or 0 in data.shape:
        return None
    canvas = _canvas(data)
    hi, lo = np.max(canvas), np.min(canvas)
    scale, shift = 1.0, 0.0
    if data.dtype != np.uint8:
        if hi <= 1 and lo >= 0:
            scale = 255.0
        else:
            scale, shift = (255 / (hi - lo + 1) if hi != lo else 1.0), lo
    pixels = ((canvas.astype(np.float32) - shift) * scale).astype(np.uint8)
    height, width, _ = pixels.shape
    body = _int(1, height) + _int(2, width) + _int(3, RGB_CHANNELS) + _msg(4, _png(pixels))
    return _msg(4, body)


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


_VALUE_FILLERS: dict[str, Any] = {"Scalar": _scalar, "Tensor": _tensor, "Image": _image, "Histogram": _histogram}
