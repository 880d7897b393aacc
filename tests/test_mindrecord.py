"""mindspore.mindrecord (FileWriter, FileReader) and mindspore.dataset.MindDataset against real MindSpore 2.10.

Oracle (tests/fixtures/oracles/mindrecord, README.md there): the data sets of ``cases.py`` as real MindSpore
wrote them, and what its MindDataset read from them and from files ascendemu wrote (``expected.json``).
FileWriter must write the same bytes (shard files) and the same index tables; MindDataset must read the
same rows, dtypes and shapes in the same order, under sharding, num_samples, columns_list and padding.
The dataset tutorial's MindRecord cells must print what MindSpore printed. Format facts checked by hand:
``[0, 1000]`` int64 compresses to ``00000002 10 00 e803``; msgpack of ``{"f32": 1.5, "i32": -2}`` is
``82 a3 'f32' ca 3fc00000 a3 'i32' fe`` (float32 when exact, negative fixint).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from PIL import Image

import ascendemu.frontend.dataset as ds
from ascendemu.errors import InvalidFileError, InvalidParamError
from ascendemu.frontend.mindrecord import (FileReader, FileWriter, MindRecordFileError, MindRecordRuntimeError,
                                           MRMAddSchemaError, MRMDefineIndexError, MRMInvalidSchemaError,
                                           ParamValueError)
from ascendemu.frontend.mindrecord.format import compress_ints, pack, uncompress_ints, unpack
from test_run_cli import run_cli

ORACLE = Path(__file__).parent / "fixtures" / "oracles" / "mindrecord"
sys.path.insert(0, str(ORACLE))
import cases  # noqa: E402

EXPECTED = json.loads((ORACLE / "expected.json").read_text())
SCHEMA = {"id": {"type": "int32"}, "name": {"type": "string"}, "img": {"type": "bytes"},
          "box": {"type": "int32", "shape": [-1, 2]}}


@pytest.fixture(autouse=True)
def _seed():
    ds.config.set_seed(ds.config.DEFAULT_SEED)
    yield
    ds.config.set_seed(ds.config.DEFAULT_SEED)


def tables(db: str) -> list:
    connection = sqlite3.connect(db)
    try:
        return [connection.execute(q).fetchall() for q in ("SELECT sql FROM sqlite_master", "SELECT * FROM SHARD_NAME",
                                                            "SELECT * FROM INDEXES")]
    finally:
        connection.close()


def write(path: Path, rows: list[dict], shard_num: int = 1, **options) -> None:
    writer = FileWriter(str(path), shard_num=shard_num, **options)
    writer.set_header_size(cases.SMALL["header_size"])
    writer.set_page_size(cases.SMALL["page_size"])
    writer.add_schema(SCHEMA, "test")
    writer.write_raw_data(rows)
    writer.commit()


def sample(i: int) -> dict:
    return {"id": i, "name": f"n{i}", "img": bytes([i]) * (i + 1), "box": np.arange(2 * (i % 3 + 1), dtype=np.int32)}


def ids(dataset) -> list[int]:
    return [int(row[0]) for row in dataset.create_tuple_iterator(columns=["id"], output_numpy=True)]


# ------------------------------------------------------------------------------------------- the oracle
@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_writer_writes_the_bytes_mindspore_writes(tmp_path, name):
    case = cases.CASES[name]
    os.makedirs(tmp_path / name)
    cases.write(case, FileWriter, cases.fixture_path(str(tmp_path), name))
    for ours in cases.files(case, cases.fixture_path(str(tmp_path), name)):
        theirs = ORACLE / name / os.path.basename(ours)
        assert Path(ours).read_bytes() == theirs.read_bytes(), ours
        assert tables(ours + ".db") == tables(str(theirs) + ".db")
        assert oct(os.stat(ours).st_mode & 0o777) == oct(os.stat(ours + ".db").st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_minddataset_reads_mindspore_files_as_mindspore_does(name):
    got = cases.recorded_reads(ds, name, cases.CASES[name], cases.fixture_path(str(ORACLE), name))
    assert got == EXPECTED["mindspore"][name]


@pytest.mark.parametrize("name", sorted(cases.OURS_ONLY))
def test_mindspore_reads_our_files_as_minddataset_does(tmp_path, name):
    """Files only ascendemu writes this way (leftover rows rotated over the shards, the parallel writer's
    one data set per shard): these are the bytes real MindSpore read, and it read what MindDataset reads."""
    case, recorded = cases.OURS_ONLY[name], EXPECTED["ours"][name]
    os.makedirs(tmp_path / name)
    path = cases.fixture_path(str(tmp_path), name)
    cases.write(case, FileWriter, path)
    assert {os.path.basename(f): hashlib.sha256(Path(f).read_bytes()).hexdigest()
            for f in cases.files(case, path)} == recorded["sha256"]
    assert cases.recorded_reads(ds, name, case, path) == recorded["reads"]


def test_dataset_tutorial_prints_what_mindspore_printed(tmp_path):
    """The tutorial's MindRecord cells under ``ascendemu run``: the same output, and the same 48 MiB file
    (default header and page sizes) as MindSpore wrote."""
    shutil.copy(ORACLE / "tutorial_mindrecord.py", tmp_path)
    proc = run_cli(tmp_path, "--quiet", "tutorial_mindrecord.py")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == (ORACLE / "tutorial.mindspore-2.10-cpu.txt").read_text()
    data = (tmp_path / "test.mindrecord").read_bytes()
    assert len(data) == (16 << 20) + (32 << 20) + 128
    assert hashlib.sha256(data).hexdigest() == "cc5bc20a52911d354d82ad04deee0ea4b8edc4a01227305d95868db7d7103d38"


# ------------------------------------------------------------------------------------------- encodings
def test_encodings_by_hand():
    assert compress_ints(np.array([0, 1000], np.int64)) == bytes.fromhex("00000002" "10" "00" "e803")
    assert pack({"i32": -2, "f32": 1.5}) == b"\x82\xa3f32\xca\x3f\xc0\x00\x00\xa3i32\xfe"
    assert pack({"x": 0.1, "n": -129, "u": 2**40}) == (b"\x83\xa1n\xd1\xff\x7f\xa1u\xcf" + (2**40).to_bytes(8, "big")
                                                       + b"\xa1x\xcb" + struct.pack(">d", 0.1))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1) | st.sampled_from([-129, -128, 127, 128, -2**31, 2**31, 0]),
                max_size=30))
def test_int_compression_round_trips_at_the_smallest_widths(values):
    array = np.array(values, np.int64)
    packed = compress_ints(array)
    widths = [next(w for w in (1, 2, 4, 8) if -2**(8 * w - 1) <= v < 2**(8 * w - 1)) for v in values]
    assert len(packed) == 4 + -(-len(values) // 4) + sum(widths)
    np.testing.assert_array_equal(uncompress_ints(packed, np.int64), array)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(max_size=40), st.integers(-2**63, 2**64 - 1) | st.floats(allow_nan=False)
                       | st.text(max_size=300) | st.booleans() | st.none(), max_size=20))
def test_msgpack_round_trips(value):
    assert unpack(pack(value)) == value


# ------------------------------------------------------------------------------------------- round trips
@settings(max_examples=8, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9000), min_size=1, max_size=12), min_size=1, max_size=4),
       st.integers(1, 3))
def test_rows_spanning_many_pages_read_back(tmp_path_factory, calls, shard_num):
    """Rows up to 9 KB in 32 KB pages, written in several calls over several shards (row groups cut and
    moved between raw pages): every row comes back whole, from the file set the first shard names."""
    path = tmp_path_factory.mktemp("paged") / "p.mindrecord"
    writer = FileWriter(str(path), shard_num=shard_num)
    writer.set_header_size(1 << 14)
    writer.set_page_size(1 << 15)
    writer.add_schema(SCHEMA)
    written, n = [], 0
    for sizes in calls:
        rows = [{"id": n + k, "name": "s" * (size // 3), "img": bytes([k % 256]) * size,
                 "box": np.full((k % 4, 2), n + k, np.int32)} for k, size in enumerate(sizes)]
        writer.write_raw_data(rows)
        written += rows
        n += len(rows)
    writer.commit()
    first = f"{path}0" if shard_num > 1 else str(path)
    got = {row["id"]: row for row in FileReader(first).get_next()}
    assert sorted(got) == list(range(n))
    for row in written:
        back = got[row["id"]]
        assert back["name"] == row["name"] and back["img"] == row["img"]
        np.testing.assert_array_equal(back["box"], row["box"])
    assert ds.MindDataset(first).get_dataset_size() == n


def test_columns_dtypes_and_shapes(tmp_path):
    write(tmp_path / "a.mindrecord", [sample(i) for i in range(4)])
    data = ds.MindDataset(str(tmp_path / "a.mindrecord"), shuffle=False)
    assert data.get_col_names() == ["box", "id", "img", "name"]
    box, id_, img, name = next(data.create_tuple_iterator(output_numpy=True))
    assert (box.dtype, box.shape, id_.dtype, id_.shape, img.dtype, img.shape, name.dtype, name.shape) == \
        (np.int32, (1, 2), np.int32, (), np.dtype("S1"), (1,), np.dtype("<U2"), ())
    row = next(data.create_dict_iterator())                   # text and bytes stay numpy, as in MindSpore
    assert isinstance(row["name"], np.ndarray) and isinstance(row["img"], np.ndarray)
    assert row["id"].asnumpy() == 0 and str(row["name"]) == "n0"


def test_decode_takes_the_bytes_column(tmp_path):
    image = (np.arange(6 * 7 * 3) % 251).astype(np.uint8).reshape(6, 7, 3)
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="PNG")
    row = {**sample(0), "img": buf.getvalue()}
    write(tmp_path / "i.mindrecord", [row])
    data = ds.MindDataset(str(tmp_path / "i.mindrecord")).map(ds.vision.Decode(), input_columns="img")
    np.testing.assert_array_equal(next(data.create_dict_iterator(output_numpy=True))["img"], image)


def test_shuffle_modes(tmp_path):
    write(tmp_path / "s.mindrecord", [sample(i) for i in range(12)], shard_num=3)   # 4 rows per shard file
    files = [str(tmp_path / f"s.mindrecord{i}") for i in range(3)]
    by_file = [ids(ds.MindDataset([f], shuffle=False)) for f in files]
    assert sorted(sum(by_file, [])) == list(range(12))
    data = ds.MindDataset(files[0])                             # default: a fresh permutation each epoch
    it = data.create_tuple_iterator(columns=["id"], output_numpy=True, num_epochs=2)
    epochs = [[int(r[0]) for r in it] for _ in range(2)]
    assert sorted(epochs[0]) == sorted(epochs[1]) == list(range(12)) and epochs[0] != epochs[1]
    assert ids(ds.MindDataset(files[0])) == epochs[0]           # and the same permutation every run
    whole = ids(ds.MindDataset(files, shuffle=ds.Shuffle.FILES))
    chunks = [whole[i:i + 4] for i in range(0, 12, 4)]
    assert sorted(chunks) == sorted(by_file)                    # whole files, each in its order
    infile = ids(ds.MindDataset(files, shuffle=ds.Shuffle.INFILE))
    assert [sorted(infile[i:i + 4]) for i in range(0, 12, 4)] == [sorted(f) for f in by_file]
    shards = [ids(ds.MindDataset(files, shuffle=ds.Shuffle.FILES, num_shards=3, shard_id=s)) for s in range(3)]
    assert sorted(sum(shards, [])) == list(range(12))
    with pytest.raises(InvalidParamError, match="num_samples"):
        ds.MindDataset(files, shuffle=ds.Shuffle.INFILE, num_samples=3)


def test_padding_and_its_rules(tmp_path):
    write(tmp_path / "p.mindrecord", [sample(i) for i in range(5)])
    path = str(tmp_path / "p.mindrecord")
    pad = {"id": -1, "name": "pad", "img": b"", "box": np.zeros((1, 2), np.int32)}
    got = [ids(ds.MindDataset(path, ["id", "name"], shuffle=False, num_shards=4, shard_id=s, padded_sample=pad,
                              num_padded=3)) for s in range(4)]
    assert got == [[0, 4], [1, -1], [2, -1], [3, -1]]
    for kwargs, message in (
            ({"padded_sample": pad}, "requires num_padded"), ({"num_padded": 1}, "padded_sample is not"),
            ({"padded_sample": pad, "num_padded": 2, "num_shards": 4, "shard_id": 0, "columns_list": ["id"]},
             "divisible"),
            ({"padded_sample": {"name": "x"}, "num_padded": 1, "columns_list": ["id"]}, "cannot match")):
        with pytest.raises(InvalidParamError, match=message):
            ds.MindDataset(path, **kwargs)


def test_filereader_gives_the_written_values(tmp_path):
    rows = [sample(i) for i in range(3)]
    write(tmp_path / "r.mindrecord", rows)
    reader = FileReader(str(tmp_path / "r.mindrecord"), columns=["name", "box"])
    assert reader.len() == 3 and reader.schema()["box"] == {"shape": [-1, 2], "type": "int32"}
    got = list(reader.get_next())
    assert [r["name"] for r in got] == ["n0", "n1", "n2"] and set(got[0]) == {"name", "box"}
    np.testing.assert_array_equal(got[2]["box"], rows[2]["box"].reshape(-1, 2))
    reader.close()


# ------------------------------------------------------------------------------------------- writing errors
def test_rows_that_do_not_match_the_schema_are_dropped_with_mindspores_warning(tmp_path, capfd):
    path = tmp_path / "d.mindrecord"
    writer = FileWriter(str(path))
    writer.add_schema(SCHEMA)
    bad = [{**sample(1), "id": np.int64(1)}, {**sample(2), "box": np.zeros(3, np.int32)},
           {k: v for k, v in sample(3).items() if k != "img"}, {**sample(4), "name": 4}]
    writer.write_raw_data([sample(0), *bad, {**sample(5), "extra": 1}])
    err = capfd.readouterr().err
    for message in ("1 th data is wrong, data type: 'int32' for field: 'id' is not matched",
                    "2 th data is wrong, data shape: '(3,)' for field: 'box' is not matched",
                    "3 th data is wrong, there is not field: 'img' in the raw data",
                    "4 th data is wrong, data type: 'string' for field: 'name' is not matched"):
        assert message in err
    with pytest.raises(MindRecordRuntimeError, match="There is no valid data") as info:
        writer.write_raw_data(bad)
    assert isinstance(info.value, RuntimeError)
    writer.commit()
    assert ids(ds.MindDataset(str(path), shuffle=False)) == [0, 5]


def test_existing_files_need_overwrite_and_commit_is_atomic(tmp_path):
    path = tmp_path / "o.mindrecord"
    write(path, [sample(0)])
    before = path.read_bytes()
    writer = FileWriter(str(path))
    writer.add_schema(SCHEMA)
    with pytest.raises(MindRecordFileError, match=r"already exist: .*o\.mindrecord.*overwrite=True") as info:
        writer.write_raw_data([sample(1)])
    assert isinstance(info.value, (InvalidFileError, RuntimeError)) and path.read_bytes() == before
    writer = FileWriter(str(path), overwrite=True)
    writer.add_schema(SCHEMA)
    writer.write_raw_data([sample(7), sample(8)])
    assert path.read_bytes() == before                          # not replaced before commit
    writer.commit()
    assert ids(ds.MindDataset(str(path), shuffle=False)) == [7, 8]
    assert sorted(os.listdir(tmp_path)) == ["o.mindrecord", "o.mindrecord.db"]      # no temp file left

    new = tmp_path / "big.mindrecord"                           # a commit that fails leaves nothing
    writer = FileWriter(str(new))
    writer.set_header_size(1 << 14)
    writer.add_schema(SCHEMA, "x" * (1 << 14))
    writer.write_raw_data([sample(0)])
    with pytest.raises(MindRecordRuntimeError, match="set_header_size"):
        writer.commit()
    assert sorted(os.listdir(tmp_path)) == ["o.mindrecord", "o.mindrecord.db"]


def test_bad_writer_arguments(tmp_path):
    path = str(tmp_path / "w.mindrecord")
    for call, error, message in (
            (lambda: FileWriter("a:b.mindrecord"), ParamValueError, "should not contains"),
            (lambda: FileWriter(path, shard_num=0), ParamValueError, "shard_num"),
            (lambda: FileWriter(path).add_schema({"a": {"type": "uint8"}}), MRMInvalidSchemaError, "illegal attribute"),
            (lambda: FileWriter(path).add_schema({"a-b": {"type": "int32"}}), MRMInvalidSchemaError, "composed of"),
            (lambda: FileWriter(path).set_page_size(1000), MindRecordRuntimeError, "page size"),
            (lambda: FileWriter(str(tmp_path / "no" / "x.mindrecord")).commit(), MindRecordRuntimeError, "schema")):
        with pytest.raises(error, match=message):
            call()
    writer = FileWriter(path)
    writer.add_schema(SCHEMA)
    with pytest.raises(MRMAddSchemaError):
        writer.add_schema(SCHEMA)
    with pytest.raises(MRMDefineIndexError, match="not primitive"):
        writer.add_index(["img"])
    writer.set_page_size(1 << 15)
    with pytest.raises(MindRecordRuntimeError, match="set_page_size"):
        writer.write_raw_data([{**sample(0), "img": bytes(1 << 15)}])
    writer.write_raw_data([sample(0)])
    writer.commit()
    with pytest.raises(MindRecordRuntimeError, match="flushed"):
        writer.write_raw_data([sample(1)])
    with pytest.raises(MindRecordFileError, match="directory"):
        missing = FileWriter(str(tmp_path / "no" / "x.mindrecord"))
        missing.add_schema(SCHEMA)
        missing.write_raw_data([sample(0)])


# ------------------------------------------------------------------------------------------- reading errors
def corrupt(path: Path, kind: str) -> str:
    """A copy of ``path``'s data set (under the same name, in a sibling folder) damaged as ``kind`` says."""
    folder = path.parent / kind
    folder.mkdir()
    target = folder / path.name
    shutil.copy(path, target)
    shutil.copy(f"{path}.db", f"{target}.db")
    data = target.read_bytes()
    if kind == "truncated":
        target.write_bytes(data[:-10])
    elif kind == "not_mindrecord":
        target.write_bytes(b"hello world" * 10)
    elif kind == "no_db":
        os.remove(f"{target}.db")
    elif kind == "bad_db":
        Path(f"{target}.db").write_bytes(b"not sqlite" * 100)
    elif kind == "renamed":
        os.rename(target, folder / "other.mindrecord")
        os.rename(f"{target}.db", folder / "other.mindrecord.db")
        return str(folder / "other.mindrecord")
    elif kind == "row":                                       # a length field inside the raw page
        header = struct.unpack_from("<Q", data)[0]
        layout = json.loads(data[8:8 + header])
        raw = next(p for p in layout["page"] if p["page_type"] == "RAW_DATA")
        offset = layout["header_size"] + raw["page_id"] * layout["page_size"]
        target.write_bytes(data[:offset] + b"\xff" + data[offset + 1:])
    return str(target)


@pytest.mark.parametrize("kind, message", [
    ("truncated", "truncated"), ("not_mindrecord", "not a MindRecord file"),
    ("no_db", r"index .*\.db of .* does not exist"), ("bad_db", "not a MindRecord index"),
    ("renamed", "cannot be renamed"), ("row", "row 0 of .* is corrupt")])
def test_damaged_files_are_refused_naming_the_file(tmp_path, kind, message):
    write(tmp_path / "c.mindrecord", [sample(i) for i in range(3)])
    target = corrupt(tmp_path / "c.mindrecord", kind)
    with pytest.raises(MindRecordFileError, match=message) as info:
        for dataset_files in (target, [target]):
            list(ds.MindDataset(dataset_files, shuffle=False).create_tuple_iterator(output_numpy=True))
    assert os.path.basename(target) in str(info.value)
    with pytest.raises(MindRecordFileError, match="does not exist"):
        ds.MindDataset(str(tmp_path / "missing.mindrecord"))
    with pytest.raises(InvalidParamError, match="can not found in schema"):
        ds.MindDataset(str(tmp_path / "c.mindrecord"), columns_list=["nope"])
