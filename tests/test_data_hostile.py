"""Checkpoints and data sets against concurrent writers and hostile files.

Oracles: constant arrays written by each writer (a torn file mixes them), the directory listing (no
temp file left), an address-space limit (a reader that holds the whole file fails it), Pillow's own
verdict on the images, and file sizes and header fields computed by hand.
"""
from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import textwrap
import threading
import zlib
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S
from PIL import Image

import ascendemu.frontend.dataset as ds
from ascendemu.errors import InvalidFileError, InvalidParamError
from ascendemu.frontend.checkpoint_proto import value_head
from ascendemu.frontend.dataset import vision
from ascendemu.frontend.mindrecord import FileReader, FileWriter, MindRecordFileError
from ascendemu.frontend.train.serialization import CheckpointFileError, load_checkpoint, save_checkpoint
from ascendemu.frontend.train.callback._checkpoint import CheckpointManager

sys.path.insert(0, str(Path(__file__).parent))
from datafiles import write_idx  # noqa: E402

GiB = 1 << 30


# ------------------------------------------------------------------ checkpoints: concurrent writers

def test_concurrent_saves_to_one_path_neither_fail_nor_tear(tmp_path):
    """Two writers save to one path over and over while a reader loads it: every save succeeds and
    every load sees all entries of one writer (their values differ: 1.0 or 2.0)."""
    path = str(tmp_path / "net.ckpt")
    entries, size, rounds = 8, 1 << 16, 15
    errors: list[str] = []
    torn: list[set] = []

    def saver(v: float) -> None:
        data = {f"p{k}": np.full(size, v, np.float32) for k in range(entries)}
        for _ in range(rounds):
            try:
                save_checkpoint(data, path)
            except Exception as e:  # noqa: BLE001 - any failure is what the test counts
                errors.append(f"{type(e).__name__}: {e}")

    def reader(stop: threading.Event) -> None:
        while not stop.is_set():
            if not os.path.exists(path):
                continue
            got = load_checkpoint(path)
            values = {float(x) for p in got.values() for x in p.asnumpy()[[0, -1]]}
            if len(got) != entries or len(values) != 1:
                torn.append(values)

    stop = threading.Event()
    threads = [threading.Thread(target=saver, args=(v,)) for v in (1.0, 2.0)]
    watcher = threading.Thread(target=reader, args=(stop,))
    for t in threads + [watcher]:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    watcher.join()
    assert errors == [] and torn == []
    assert os.listdir(tmp_path) == ["net.ckpt"]                         # no temp file left behind
    final = {float(x) for p in load_checkpoint(path).values() for x in p.asnumpy()}
    assert final in ({1.0}, {2.0})


def test_a_save_that_fails_midway_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "net.ckpt"
    save_checkpoint({"w": np.ones(4, np.float32)}, str(path))
    before = path.read_bytes()
    with pytest.raises(TypeError, match="complex64"):                 # the second entry has no checkpoint type
        save_checkpoint({"a": np.zeros(1 << 16, np.float32), "b": np.zeros(2, np.complex64)}, str(path))
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["net.ckpt"]


def test_checkpoint_files_another_writer_removed_are_no_error(tmp_path):
    """Ranks saving to one directory: the manager's oldest file may be gone already."""
    for name, mtime in (("CKP-1_1.ckpt", 100), ("CKP-1_2.ckpt", 200), ("CKP-1_3.ckpt", 300)):
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, (mtime, mtime))
    manager = CheckpointManager()
    manager.update_ckpoint_filelist(str(tmp_path), "CKP")
    (tmp_path / "CKP-1_2.ckpt").unlink()                               # another rank removed it
    manager.remove_oldest_ckpoint_file()                               # it counts as the oldest: gone already
    assert sorted(os.listdir(tmp_path)) == ["CKP-1_1.ckpt", "CKP-1_3.ckpt"]
    manager.remove_oldest_ckpoint_file()
    assert os.listdir(tmp_path) == ["CKP-1_3.ckpt"] and manager.ckpoint_num == 1


# ------------------------------------------------------------------ checkpoints: bounded reading

def test_load_checkpoint_reads_huge_files_in_bounded_memory(tmp_path):
    """Under a 3 GiB address-space limit: an 8 GiB sparse file of zeros, and an 8 GiB file whose one
    entry announces 8 GiB of Float32, are refused with MindSpore's ValueError text, typed."""
    zeros = tmp_path / "zeros.ckpt"
    with open(zeros, "wb") as f:
        f.truncate(8 * GiB)
    big = tmp_path / "big.ckpt"
    head = value_head("w", [2 * GiB], "Float32", 8 * GiB)
    with open(big, "wb") as f:
        f.write(head)
        f.truncate(len(head) + 8 * GiB)
    script = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        from ascendemu.frontend.train.serialization import CheckpointFileError, load_checkpoint
        for path in ({str(zeros)!r}, {str(big)!r}):
            try:
                load_checkpoint(path)
                print("loaded")
            except CheckpointFileError as e:
                print(isinstance(e, ValueError), e.message)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout + result.stderr
    assert lines[0].startswith(f"True Failed to read the checkpoint file {zeros}") and "not a MindSpore" in lines[0]
    assert lines[1].startswith(f"True Failed to read the checkpoint file {big}: entry 'w' holds {8 * GiB} bytes, "
                               "more than this process can allocate")


def test_a_fifo_named_like_a_checkpoint_is_refused_not_waited_on(tmp_path):
    """Opening a FIFO for reading blocks until a writer comes: the loader must refuse it instead (in a
    subprocess, so that a loader that waits fails the test after the timeout instead of hanging it)."""
    os.mkfifo(tmp_path / "pipe.ckpt")
    os.mkfifo(tmp_path / "pipe.safetensors")
    script = textwrap.dedent(f"""
        from ascendemu.frontend.train.serialization import CheckpointFileError, load_checkpoint
        for name, fmt in (("pipe.ckpt", "ckpt"), ("pipe.safetensors", "safetensors")):
            try:
                load_checkpoint({str(tmp_path)!r} + "/" + name, format=fmt)
            except CheckpointFileError as e:
                print(e.message)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert result.stdout.splitlines() == [
        f"Failed to read the checkpoint file {tmp_path / name}: it is not a regular file (a FIFO, a device or a "
        "socket); give the path of a checkpoint file." for name in ("pipe.ckpt", "pipe.safetensors")], result.stderr


def test_names_and_types_longer_than_any_real_one_are_refused(tmp_path):
    path = tmp_path / "long.ckpt"
    content = np.arange(3, dtype=np.float32).tobytes()
    path.write_bytes(value_head("a" * 70000, [3], "Float32", len(content)) + content)
    with pytest.raises(CheckpointFileError, match="its tag is 70000 bytes long"):
        load_checkpoint(str(path))
    path.write_bytes(value_head("w", [1] * 65 + [3], "Float32", len(content)) + content)
    with pytest.raises(CheckpointFileError, match="'w' has more than 64 dims"):
        load_checkpoint(str(path))


def test_load_checkpoint_streams_slices_and_crc(tmp_path):
    """Two slices of one entry and a CRC trailer, built by hand, read back joined (crc32 from zlib)."""
    a, b = np.arange(6, dtype=np.float32), np.arange(6, 10, dtype=np.float32)
    body = (value_head("w", [10], "Float32", a.nbytes) + a.tobytes()
            + value_head("w", [10], "Float32", b.nbytes) + b.tobytes())
    path = tmp_path / "sliced.ckpt"
    path.write_bytes(body + b"crc_num" + zlib.crc32(body).to_bytes(10, "big"))
    np.testing.assert_array_equal(load_checkpoint(str(path), crc_check=True)["w"].asnumpy(), np.arange(10))
    path.write_bytes(body + b"crc_num" + (zlib.crc32(body) ^ 1).to_bytes(10, "big"))
    with pytest.raises(CheckpointFileError, match="crc check .* failed"):
        load_checkpoint(str(path), crc_check=True)


# ------------------------------------------------------------------ images

def bomb_png(side: int) -> bytes:
    """A 1-bit PNG of side x side black pixels: a few KiB that decode to side**2 pixels."""
    z = zlib.compressobj(9)
    row = b"\0" * (1 + (side + 7) // 8)
    data = b"".join(z.compress(row) for _ in range(side)) + z.flush()

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
            + chunk(b"IDAT", data) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def bomb() -> bytes:
    data = bomb_png(14000)                       # 196 M pixels: over twice Pillow's default limit
    with pytest.raises(Image.DecompressionBombError):                 # Pillow's own verdict
        Image.open(io.BytesIO(data))
    return data


def test_a_decompression_bomb_in_an_image_folder_is_a_typed_error_naming_the_file(tmp_path, bomb):
    (tmp_path / "cls").mkdir()
    (tmp_path / "cls" / "bomb.png").write_bytes(bomb)
    with pytest.raises(InvalidFileError, match="bomb.png.*decompression bomb") as e:
        for _ in ds.ImageFolderDataset(str(tmp_path), decode=True).create_dict_iterator(output_numpy=True):
            pass
    assert isinstance(e.value, RuntimeError)                          # MindSpore's dataset errors are


def test_decode_of_a_bomb_or_a_truncated_image_in_a_map_is_a_runtime_error(tmp_path, bomb):
    good = io.BytesIO()
    Image.fromarray(np.arange(64 * 64 * 3, dtype=np.uint8).reshape(64, 64, 3)).save(good, "PNG")
    truncated = good.getvalue()[:len(good.getvalue()) // 2]
    with pytest.raises(OSError):                                       # Pillow's own verdict
        Image.open(io.BytesIO(truncated)).convert("RGB")
    for data, message in ((bomb, "decompression bomb"), (truncated, "not a decodable"), (b"GIF89a\x01", "not a")):
        source = ds.NumpySlicesDataset([np.frombuffer(data, np.uint8)], ["image"], shuffle=False)
        with pytest.raises(RuntimeError, match=f"map over .*Decode: .*{message}") as e:
            for _ in source.map(vision.Decode(), "image").create_tuple_iterator(output_numpy=True):
                pass
        assert isinstance(e.value, InvalidParamError)
    (tmp_path / "cls").mkdir()
    (tmp_path / "cls" / "half.png").write_bytes(truncated)
    with pytest.raises(RuntimeError, match="half.png.*truncated"):
        for _ in ds.ImageFolderDataset(str(tmp_path), decode=True).create_dict_iterator(output_numpy=True):
            pass


# ------------------------------------------------------------------ MNIST headers

@pytest.mark.parametrize("header, extra, field", [
    ((2051, 4, -28, 28), 0, "rows = -28 \\(header field 2\\)"),
    ((2051, -1, 28, 28), 0, "image count = -1 \\(header field 1\\)"),
    ((2051, 4, 28, 0), 0, "columns = 0 \\(header field 3\\)"),
    ((2051, 2**31 - 1, 2**31 - 1, 2**31 - 1), 0, f"truncated: {16 + 4 * 784} bytes, but its header announces "
                                                 f"image count {2**31 - 1}, rows {2**31 - 1}, columns {2**31 - 1} "
                                                 f"\\({16 + (2**31 - 1)**3} bytes\\)"),
    ((2051, 4, 28, 28), 4, f"4 bytes too long: {16 + 4 * 784 + 4} bytes, but its header announces"),
])
def test_mnist_image_headers_are_checked_against_the_file(tmp_path, header, extra, field):
    write_idx(tmp_path, "train", np.zeros((4, 28, 28), np.uint8), np.zeros(4, np.uint8))
    images = tmp_path / "train-images-idx3-ubyte"
    images.write_bytes(struct.pack(">4i", *header) + bytes(4 * 784 + extra))
    with pytest.raises(InvalidFileError, match=f"{images} is .*{field}") as e:
        ds.MnistDataset(str(tmp_path), usage="train")
    assert isinstance(e.value, RuntimeError)


def test_mnist_label_headers_are_checked_too(tmp_path):
    write_idx(tmp_path, "train", np.zeros((4, 28, 28), np.uint8), np.zeros(4, np.uint8))
    labels = tmp_path / "train-labels-idx1-ubyte"
    labels.write_bytes(struct.pack(">ii", 2049, -4) + bytes(4))
    with pytest.raises(InvalidFileError, match=f"{labels} is damaged: .*label count = -4"):
        ds.MnistDataset(str(tmp_path), usage="train")


# ------------------------------------------------------------------ MindRecord rows

def mindrecord_with_raw(tmp_path: Path, raw: bytes) -> str:
    """A one-row MindRecord file whose row's raw (msgpack) bytes are replaced by ``raw`` (same length)."""
    path = str(tmp_path / "rows.mindrecord")
    writer = FileWriter(path)
    writer.set_header_size(1 << 14)
    writer.set_page_size(1 << 15)
    writer.add_schema({"s": {"type": "string"}})
    writer.write_raw_data([{"s": "x" * (len(raw) - 6)}])               # map {"s": str16}: 6 bytes + the text
    writer.commit()
    data = bytearray(Path(path).read_bytes())
    start = data.index(b"\x81\xa1s\xda")
    assert data[start + 6:start + len(raw)] == b"x" * (len(raw) - 6)
    data[start:start + len(raw)] = raw
    os.chmod(path, 0o600)
    Path(path).write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("raw, problem", [
    (b"\x91" * 2999 + b"\x00", "nested more than 64 deep"),              # past Python's recursion limit
    (b"\x81\x91\x00\x00" + b"\xc0" * 2996, "key that is not a string"),  # {[0]: 0}: unhashable in Python
])
def test_hostile_msgpack_rows_are_typed_errors(tmp_path, raw, problem):
    path = mindrecord_with_raw(tmp_path, raw)
    with pytest.raises(MindRecordFileError, match=f"row 0 of .*rows.mindrecord is corrupt: .*{problem}"):
        next(FileReader(path).get_next())
    with pytest.raises(MindRecordFileError, match=problem):
        for _ in ds.MindDataset(path).create_tuple_iterator(output_numpy=True):
            pass
