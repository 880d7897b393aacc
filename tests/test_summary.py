"""Summary files (mindspore.SummaryRecord and the ops.*Summary primitives): a file MindSpore 2.10 wrote
(tests/fixtures/summary, tools/record_summary.py) and one written here from the same values parse with
summary.proto (its schema rebuilt below for google.protobuf) to the same events, wall times and PNG
bytes aside (the PNGs decode to the same pixels); the TFRecord framing's masked CRC-32C against the
fixture's and a published test vector; GRAPH_MODE summaries; histograms against numpy; the errors."""
from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from PIL import Image

import ascendemu.frontend as ms
from ascendemu.frontend import nn, ops
from ascendemu.frontend.ops.operations import debug_ops
from ascendemu.frontend.train.summary._summary_adapter import crc32c, histogram_bins, masked_crc

FIXTURE = Path(__file__).parent / "fixtures" / "summary" / "mindspore_2_10.summary"
IMAGE = np.random.RandomState(0).rand(1, 3, 4, 5).astype(np.float32)


def summary_schema():
    """``Event`` of MindSpore's summary.proto (proto2, package mindspore.irpb): the fields summaries use."""
    F = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="test_summary.proto", package="irpb", syntax="proto2")

    def add(msg, name, number, kind, label=F.LABEL_OPTIONAL, type_name="", oneof=None, packed=False):
        field = msg.field.add(name=name, number=number, label=label, type=kind)
        if type_name:
            field.type_name = type_name
        if oneof is not None:
            field.oneof_index = oneof
        if packed:
            field.options.packed = True
    tensor = f.message_type.add(name="TensorProto")
    add(tensor, "dims", 1, F.TYPE_INT64, F.LABEL_REPEATED)
    add(tensor, "data_type", 2, F.TYPE_INT32)
    add(tensor, "float_data", 3, F.TYPE_FLOAT, F.LABEL_REPEATED, packed=True)
    summary = f.message_type.add(name="Summary")
    image = summary.nested_type.add(name="Image")
    for k, name in enumerate(("height", "width", "colorspace")):
        add(image, name, k + 1, F.TYPE_INT32, F.LABEL_REQUIRED)
    add(image, "encoded_image", 4, F.TYPE_BYTES, F.LABEL_REQUIRED)
    hist = summary.nested_type.add(name="Histogram")
    bucket = hist.nested_type.add(name="bucket")
    add(bucket, "left", 1, F.TYPE_DOUBLE, F.LABEL_REQUIRED)
    add(bucket, "width", 2, F.TYPE_DOUBLE, F.LABEL_REQUIRED)
    add(bucket, "count", 3, F.TYPE_INT64, F.LABEL_REQUIRED)
    add(hist, "buckets", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".irpb.Summary.Histogram.bucket")
    for number, name, kind in ((2, "nan_count", F.TYPE_INT64), (3, "pos_inf_count", F.TYPE_INT64),
                               (4, "neg_inf_count", F.TYPE_INT64), (5, "max", F.TYPE_DOUBLE),
                               (6, "min", F.TYPE_DOUBLE), (7, "sum", F.TYPE_DOUBLE), (8, "count", F.TYPE_INT64)):
        add(hist, name, number, kind)
    value = summary.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    add(value, "tag", 1, F.TYPE_STRING, F.LABEL_REQUIRED)
    add(value, "scalar_value", 3, F.TYPE_FLOAT, oneof=0)
    add(value, "image", 4, F.TYPE_MESSAGE, type_name=".irpb.Summary.Image", oneof=0)
    add(value, "tensor", 8, F.TYPE_MESSAGE, type_name=".irpb.TensorProto", oneof=0)
    add(value, "histogram", 9, F.TYPE_MESSAGE, type_name=".irpb.Summary.Histogram", oneof=0)
    add(summary, "value", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".irpb.Summary.Value")
    event = f.message_type.add(name="Event")
    event.oneof_decl.add(name="what")
    add(event, "wall_time", 1, F.TYPE_DOUBLE, F.LABEL_REQUIRED)
    add(event, "step", 2, F.TYPE_INT64)
    add(event, "version", 3, F.TYPE_STRING, oneof=0)
    add(event, "summary", 5, F.TYPE_MESSAGE, type_name=".irpb.Summary", oneof=0)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("irpb.Event"))


Event = summary_schema()


def read_records(path: Path) -> list[bytes]:
    """The TFRecord payloads of a file, each frame's two masked CRCs checked."""
    data, pos, out = path.read_bytes(), 0, []
    while pos < len(data):
        head = data[pos:pos + 8]
        (size,) = struct.unpack("<Q", head)
        (head_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        body = data[pos + 12:pos + 12 + size]
        (body_crc,) = struct.unpack("<I", data[pos + 12 + size:pos + 16 + size])
        assert head_crc == masked_crc(head) and body_crc == masked_crc(body)
        out.append(body)
        pos += 16 + size
    assert pos == len(data)
    return out


def events(path: Path) -> list:
    """The file's events, wall times zeroed and each PNG replaced by its decoded pixels' bytes."""
    out = []
    for body in read_records(path):
        event = Event()
        event.ParseFromString(body)
        assert event.wall_time > 1.6e9
        event.wall_time = 0
        for value in event.summary.value:
            if value.HasField("image"):
                pixels = np.asarray(Image.open(io.BytesIO(value.image.encoded_image)))
                value.image.encoded_image = pixels.tobytes()
        out.append(event)
    return out


def write_sample(log_dir: Path) -> Path:
    """tools/record_summary.py's values, written here."""
    with ms.SummaryRecord(str(log_dir)) as record:
        ops.ScalarSummary()("loss", ms.Tensor(np.float32(1.5)))
        ops.TensorSummary()("t", ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))
        ops.HistogramSummary()("h", ms.Tensor(np.array([0., 1., 2., 3.], np.float32)))
        ops.ImageSummary()("img", ms.Tensor(IMAGE))
        assert record.record(3)
        record.add_value("scalar", "lr", ms.Tensor(np.float32(0.25)))
        assert record.record(4)
        assert not record.record(5)                       # nothing cached: no event
    (path,) = log_dir.glob("events.out.events.summary.*_MS")
    return path


def test_crc32c_is_castagnolis():
    assert crc32c(b"123456789") == 0xE3069283               # the published check value of CRC-32C
    assert crc32c(b"") == 0


def test_a_file_written_here_parses_to_mindspores_events(ex, tmp_path):
    ours, theirs = events(write_sample(tmp_path)), events(FIXTURE)
    assert [e.SerializeToString() for e in ours] == [e.SerializeToString() for e in theirs]
    assert theirs[0].version == "MindSpore.Event:1" and [e.step for e in theirs[1:]] == [3, 4]
    values = {v.tag: v for v in ours[1].summary.value}
    assert values["loss"].scalar_value == 1.5 and list(values["t"].tensor.dims) == [2, 3]
    pixels = np.frombuffer(values["img"].image.encoded_image, np.uint8).reshape(4, 5, 3)
    assert np.array_equal(pixels, (IMAGE[0].transpose(1, 2, 0) * 255).astype(np.uint8))


def test_histograms_follow_numpy(ex, tmp_path):
    data = np.concatenate([np.linspace(-2, 5, 37), [np.nan, np.inf, -np.inf, np.inf]]).astype(np.float32)
    with ms.SummaryRecord(str(tmp_path)) as record:
        record.add_value("histogram", "w", ms.Tensor(data))
        record.record(0)
    (path,) = tmp_path.glob("events*")
    hist = events(path)[1].summary.value[0].histogram
    finite = data[np.isfinite(data)]
    counts, edges = np.histogram(finite, bins=histogram_bins(finite.size), range=(finite.min(), finite.max()))
    assert histogram_bins(37) == 4 and [b.count for b in hist.buckets] == counts.tolist()
    assert [b.left for b in hist.buckets] == pytest.approx(edges[:-1].tolist())
    assert (hist.nan_count, hist.pos_inf_count, hist.neg_inf_count, hist.count) == (1, 2, 1, 41)
    assert (hist.min, hist.max) == (-2.0, 5.0) and hist.sum == pytest.approx(float(finite.sum()), rel=1e-6)


def test_summaries_in_a_graph_reach_the_record(ex, tmp_path, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.scalar, self.tensor = ops.ScalarSummary(), ops.TensorSummary()

        def construct(self, x):
            y = x * 2
            self.scalar("total", y.sum())
            self.tensor("y", y)
            return y + 1

    x = np.arange(4, dtype=np.float32)
    with ms.SummaryRecord(str(tmp_path)) as record:
        out = Net()(ms.Tensor(x))
        assert record.record(7)
    assert np.array_equal(out.asnumpy(), 2 * x + 1)
    (path,) = tmp_path.glob("events*")
    values = {v.tag: v for v in events(path)[1].summary.value}
    assert values["total"].scalar_value == 12.0 and list(values["y"].tensor.float_data) == (2 * x).tolist()


def test_errors(ex, tmp_path, restore_context):
    debug_ops.take_summary_data()
    with ms.SummaryRecord(str(tmp_path)) as record:
        with pytest.raises(TypeError, match="'step' must be int"):
            record.record("1")
        with pytest.raises(ValueError, match="No such plugin"):
            record.add_value("audio", "a", ms.Tensor(np.float32(1)))
        with pytest.raises(ValueError, match="not supported by the emulator"):
            record.add_value("graph", "g", ms.Tensor(np.float32(1)))
    with pytest.raises(ValueError, match="may only hold"):
        ms.SummaryRecord(str(tmp_path), file_prefix="a/b")
    ms.set_context(mode=ms.GRAPH_MODE)

    class Bad(nn.Cell):
        def construct(self, x):
            ops.ScalarSummary()("v", x)
            return x

    with pytest.raises(ValueError, match=r"shape of 'value' must be \[\] or \[1\]"):
        Bad()(ms.Tensor(np.ones(3, np.float32)))
