"""Traces and profiles are data: hostile or malformed `.aetrace` files, Chakra ETs and profile CSVs give
typed errors naming the file, the record (node, line) and what is wrong, in bounded time and memory.

Oracles: the trace's records counted by hand (record 1 is the first after the header), the chunk layout
parsed with ``struct`` (docs/TRACE_FORMAT.md), zstd frames and gzip members built with the zstandard and
zlib libraries, node end times of a hand-built Chakra ET computed here from its durations, and a victim
file's bytes read back.
"""
from __future__ import annotations

import dataclasses
import gzip
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import zstandard

from ascendemu.cli.main import main as cli
from ascendemu.device.spec import get_spec
from ascendemu.errors import AclError, InvalidFileError
from ascendemu.replay.ascend_profile import MAX_LINE_BYTES, read_profile
from ascendemu.replay.chakra import run_chakra
from ascendemu.replay.replayer import MAX_PRESET_UNITS, replay
from ascendemu.traces import aetrace as A
from ascendemu.traces import chakra as et
from ascendemu.traces import et_def_pb2 as pb

PRESET = dataclasses.asdict(get_spec("Ascend910A"))
X, Y = 1 << 32, (1 << 32) + 512            # two recorded device addresses


def trace(path: Path, *records, end: bool = True) -> Path:
    """A trace of a header, Init, SetDevice(0), then ``records`` (wire lists or records)."""
    w = A.TraceWriter(path)
    w.write(A.Header("aetrace", list(A.FORMAT_VERSION), "0", "now", PRESET, 1, {"script": "s.py"}))
    for r in (A.Init(PRESET, 1, False, True, False), A.SetDevice(0), *records):
        w.write(r)
    return w.close(A.End(0, {}) if end else None)


def kernel(block_dim=1, cost=(0, 4, 32, "float32", None, 0), args=((16, "in", False), (16, "out", False))) -> list:
    return [A.Kernel.CODE, 0, "square", block_dim, [list(a) for a in args], list(cost), None]


def launch() -> list:
    return [A.LaunchKernel.CODE, A.KernelRef(0), None, [X, Y], 0]


ALLOCS = ([A.Malloc.CODE, 16, 0, X], [A.Malloc.CODE, 16, 0, Y])


def refused(path: Path, match: str, error: type[AclError] = InvalidFileError) -> None:
    with pytest.raises(error, match=match) as info:
        replay(str(path))
    assert str(path) in info.value.message


# -- the record kinds a replay issues -------------------------------------------------------------------
def test_the_retired_call_by_name_record_is_refused_and_calls_nothing(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    path = trace(tmp_path / "t.aetrace", [7, "dump_memory_snapshot", [str(victim)], None])
    assert not hasattr(A, "Call") and 7 not in A.RECORDS
    refused(path, r"record 3 \(Unknown\): record kind 7 is none this ascendemu's trace format")
    assert cli(["replay", str(path)]) == 2 and "record 3 (Unknown)" in capsys.readouterr().err
    assert victim.read_bytes() == b"precious\n"


@pytest.mark.parametrize("records, match", [
    ((*ALLOCS, launch()), r"record 5 \(LaunchKernel\): kernel 0 is defined by no earlier Kernel record"),
    ((*ALLOCS, kernel(2 ** 31), launch()), r"record 5 \(Kernel\): block_dim is 2147483648: must be an int in 1\.\.65535"),
    ((kernel(2 ** 40),), r"record 3 \(Kernel\): block_dim is 1099511627776"),
    ((kernel(cost=(-5, 0, 0, "float32")),), r"record 3 \(Kernel\): cube_flops is -5"),
    ((kernel(cost=(0, 0, 0, "float16", [0, 16, 16, 16, 1, 1, 0])),), r"gemm\[0\] is 0: must be an int in 1\.\."),
    ((kernel(args=((16, "sideways", False),)),), r"argument 0 is \[16, 'sideways', False\]"),
    (([A.Free.CODE, [1, 2], 16],), r"record 3 \(Free\): field 'ptr' holds list \[1, 2\], not int"),
    (([A.Free.CODE, X, 16],), r"record 3 \(Free\): it frees 4294967296, which no live Malloc record returned"),
    (([A.SynchronizeStream.CODE, 77],), r"record 3 \(SynchronizeStream\): handle 77 was returned by no earlier"),
    (([A.Failed.CODE, "__class__", 1, "x"],), r"record 3 \(Failed\): it names '__class__', which is no runtime"),
    (([A.CollectiveWait.CODE, 1, 0, float("nan"), 0.0, 0.0, []],), r"record 3 \(CollectiveWait\): arrival nan"),
    (([A.Memcpy.CODE, X, 16, A.HostData(1 << 60), 16, 1, None],), r"record 3 \(Memcpy\): a host buffer of "),
    (([A.LaunchGraph.CODE, [["Eval", 1]]],), r"record 3 \(LaunchGraph\): graph launch step 0 \['Eval', 1\]"),
    (([A.Finalize.CODE], [A.SynchronizeDevice.CODE]), r"record 4 \(SynchronizeDevice\): it comes before the trace's"),
])
def test_a_malformed_record_is_a_typed_error_naming_the_file_and_the_record(tmp_path, records, match):
    refused(trace(tmp_path / "t.aetrace", *records), match)


def test_the_runtime_s_own_refusal_names_the_record_too(tmp_path):
    """A malloc of no bytes: the runtime's argument check refuses it, the replay says which record."""
    path = trace(tmp_path / "t.aetrace", [A.Malloc.CODE, 0, 0, X])
    refused(path, r"record 3 \(Malloc\): invalid malloc size 0", AclError)


def test_a_preset_no_node_can_be_built_of_is_refused(tmp_path):
    preset = dict(PRESET, ai_cores=1 << 40)
    w = A.TraceWriter(tmp_path / "t.aetrace")
    w.write(A.Header("aetrace", list(A.FORMAT_VERSION), "0", "now", PRESET, 1, {}))
    w.write(A.Init(preset, 1))
    path = w.close(A.End(0, {}))
    refused(path, rf"record 1 \(Init\): device preset field 'ai_cores' is 1099511627776: must be an int in "
                  rf"1\.\.{MAX_PRESET_UNITS}", AclError)
    w = A.TraceWriter(tmp_path / "u.aetrace")
    w.write(A.Header("aetrace", list(A.FORMAT_VERSION), "0", "now", PRESET, 1, {}))
    w.write(A.Init(dict(PRESET, clock_hz=float("nan")), 1))
    refused(w.close(A.End(0, {})), r"'clock_hz' is nan: must be a positive finite number", AclError)


def test_a_header_of_the_wrong_types_is_refused_by_the_reader(tmp_path):
    w = A.TraceWriter(tmp_path / "t.aetrace")
    w.write([A.Header.CODE, "aetrace", [1, 0], "0", "now", ["not", "a", "dict"], 1, {}])
    path = w.close(A.End(0, {}))
    with pytest.raises(InvalidFileError, match=r"the header \(Header\): field 'preset' holds list"):
        A.read_trace(path)


# -- bounded reading -----------------------------------------------------------------------------------
def chunk(frame: bytes, records: int) -> bytes:
    return struct.pack("<II", len(frame), records) + frame


def test_a_chunk_that_declares_or_inflates_to_more_than_a_chunk_holds_stops_the_reader(tmp_path):
    base = trace(tmp_path / "base.aetrace").read_bytes()
    # a frame header declaring 1 TiB (magic, descriptor with an 8-byte content size, the size), then junk
    lie = bytes.fromhex("28b52ffd") + bytes([0xE0]) + struct.pack("<Q", 1 << 40) + b"\0" * 19
    (tmp_path / "lie.aetrace").write_bytes(base + chunk(lie, 1))
    reader = A.read_trace(tmp_path / "lie.aetrace")
    assert len(list(reader)) == 3                         # Init, SetDevice, End: the good chunks are kept
    assert reader.stop.offset == len(base) and f"declares {1 << 40} bytes" in reader.stop.reason
    # a frame that does not declare its size and inflates past the limit (zeros: a few KiB on disk)
    out = zstandard.ZstdCompressor(level=1, write_content_size=False).compressobj()
    zeros = bytes(16 << 20)
    frame = b"".join(out.compress(zeros) for _ in range((A.MAX_CHUNK_DATA_BYTES >> 24) + 1)) + out.flush()
    assert len(frame) < 1 << 20
    (tmp_path / "bomb.aetrace").write_bytes(base + chunk(frame, 1))
    reader = A.read_trace(tmp_path / "bomb.aetrace")
    assert len(list(reader)) == 3
    assert f"decompresses to more than {A.MAX_CHUNK_DATA_BYTES} bytes" in reader.stop.reason


def test_replaying_a_bomb_stays_in_bounded_memory(tmp_path):
    """A 512 MiB frame of a few KiB: the replay reads it in pieces (its peak RSS, read back from the kernel
    through getrusage, stays far below what the frame holds). The replay runs as the child of a small
    launcher, since a process inherits its parent's peak RSS across fork and exec."""
    base = trace(tmp_path / "base.aetrace").read_bytes()
    out = zstandard.ZstdCompressor(level=1).compressobj()
    frame = b"".join(out.compress(b"\x91\x21" * (8 << 20)) for _ in range(32)) + out.flush()   # [SynchronizeDevice]
    (tmp_path / "bomb.aetrace").write_bytes(base + chunk(frame, 1))
    launcher = ("import resource, subprocess, sys; r = subprocess.run([sys.argv[1], 'replay', sys.argv[2]], "
                "capture_output=True, text=True); print(r.stdout, r.stderr); "
                "print('MAXRSS', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    asc = str(Path(sys.executable).with_name("ascendemu"))
    r = subprocess.run([sys.executable, "-c", launcher, asc, str(tmp_path / "bomb.aetrace")], capture_output=True,
                       text=True, timeout=600)
    assert "Traceback" not in r.stdout + r.stderr
    assert "chunk holds more records than its header's 1" in r.stdout
    assert int(r.stdout.rsplit("MAXRSS ", 1)[1]) < 200 << 10            # KiB: under 200 MiB for 512 MiB


def test_recorded_host_bytes_count_towards_a_chunk(tmp_path):
    w = A.TraceWriter(tmp_path / "t.aetrace", chunk_bytes=2500)
    w.write(A.Header("aetrace", list(A.FORMAT_VERSION), "0", "now", PRESET, 1, {}))
    for _ in range(4):
        w.write(A.Memcpy(X, 1000, A.HostData(1000, b"\1" * 1000), 1000, 1, None))
    w.close(A.End(0, {}))
    data = (tmp_path / "t.aetrace").read_bytes()
    at, counts = 12, []
    while at < len(data):
        size, n = struct.unpack("<II", data[at:at + 8])
        counts.append(n)
        at += 8 + size
    assert counts == [4, 2]          # header + 3 copies reach 3000 >= 2500 bytes of data; then 1 copy + End
    with pytest.raises(AclError, match="chunk_records"):
        A.TraceWriter(tmp_path / "u.aetrace", chunk_records=A.MAX_CHUNK_RECORDS + 1)


# -- Chakra ETs ----------------------------------------------------------------------------------------
def timed(i: int, stream: int, micros: float, data=(), ctrl=()) -> pb.Node:
    n = pb.Node(id=i, name=f"op{i}", type=pb.COMP_NODE, data_deps=list(data), ctrl_deps=list(ctrl))
    n.attr.extend([et.attr("timed", True), et.attr("stream", stream), et.attr("start_s", 0.0),
                   et.attr("end_s", micros * 1e-6)])
    return n


def test_control_dependencies_on_a_cycle_or_an_absent_node_are_ignored_and_counted(tmp_path, capsys):
    """Node 1 reads what node 0 wrote, node 2 waits for node 1 and for node 99 (absent), node 0 waits for
    node 2: a cycle through control dependencies, as real ETs hold. The data dependency is followed and the
    control ones where they are consistent with it: 0 ends at 5 us, 1 at 5 + 3, 2 at 8 + 2."""
    meta = pb.GlobalMetadata(version=et.VERSION)
    path = et.write_et(tmp_path / "cycle.0.et", meta, [timed(0, 1, 5, ctrl=[2]), timed(1, 2, 3, data=[0]),
                                                        timed(2, 3, 2, ctrl=[1, 99])])
    (run,) = run_chakra(path)
    assert {i: round(t * 1e6, 9) for i, t in run.ends.items()} == {0: 5.0, 1: 8.0, 2: 10.0}
    assert run.ignored_ctrl == 2
    assert cli(["trace", "import-chakra", str(path)]) == 0
    assert "2 control dependency(ies) ignored" in capsys.readouterr().out
    # a cycle of data dependencies alone is no ET
    et.write_et(path, meta, [timed(0, 1, 5, data=[1]), timed(1, 2, 3, data=[0])])
    with pytest.raises(InvalidFileError, match=r"data dependencies of nodes \[0, 1\] .* form a cycle"):
        run_chakra(path)


@pytest.mark.parametrize("attrs, match", [
    ({"block_dim": 1 << 40}, r"node 0 \('n0'\): attribute 'block_dim' is 1099511627776: must be an int in 1\.\.65535"),
    ({"timed": True, "start_s": 5.0, "end_s": 1.0}, r"node 0 \('n0'\): it ends \(end_s\) before it starts"),
    ({"timed": True, "end_s": -1.0}, r"attribute 'end_s' is -1\.0: must be a finite, non-negative number"),
    ({"device": 1 << 40}, r"attribute 'device' is 1099511627776"),
    ({"block_dim": "lots"}, r"attribute 'block_dim' is 'lots': must be an int"),
    ({"num_ops": -7}, r"attribute 'num_ops' is -7"),
])
def test_hostile_chakra_node_fields_are_typed_errors(tmp_path, attrs, match):
    node = pb.Node(id=0, name="n0", type=pb.COMP_NODE, duration_micros=5)
    node.attr.extend(et.attr(k, v) for k, v in attrs.items())
    path = et.write_et(tmp_path / "t.0.et", pb.GlobalMetadata(version=et.VERSION), [node])
    with pytest.raises(InvalidFileError, match=match):
        run_chakra(path)


def test_a_collective_of_an_unknown_kind_or_a_gzip_bomb_is_refused(tmp_path):
    node = pb.Node(id=0, name="c", type=pb.COMM_COLL_NODE, attr=[et.attr("comm_type", 250)])
    path = et.write_et(tmp_path / "t.0.et", pb.GlobalMetadata(version=et.VERSION), [node])
    with pytest.raises(InvalidFileError, match="comm_type 250 has no HCCL collective"):
        run_chakra(path)
    # a gzip member of zeros past the limit: one fully flushed deflate block of 16 MiB of zeros (it refers
    # to nothing before it), repeated; no trailer is needed to be refused before the end
    deflate = zlib.compressobj(1, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(bytes(16 << 20)) + deflate.flush(zlib.Z_FULL_FLUSH)
    bomb = tmp_path / "bomb.0.et"
    bomb.write_bytes(gzip.compress(b"")[:10] + block * ((et.MAX_ET_BYTES >> 24) + 1))
    assert bomb.stat().st_size < 8 << 20                 # deflate inflates at most ~1000 times
    with pytest.raises(et.ChakraFormatError, match=f"decompresses to more than {et.MAX_ET_BYTES} bytes"):
        run_chakra(bomb)


# -- profile CSVs ----------------------------------------------------------------------------------------
HEADER = "Name,Type,Stream ID,Start Time(us),Duration(us)\n"


@pytest.mark.parametrize("row, match", [
    ("D\xe9fault/MatMul,MatMul,1,0,5\n".encode("latin-1"), r"line 2: byte 0xe9 at byte 2 of the line is not UTF-8"),
    (b"x" * (200 << 10) + b",MatMul,1,0,5\n", r"line 2: field larger than field limit"),
    (b"x" * (MAX_LINE_BYTES + 1), rf"line 2 is longer than {MAX_LINE_BYTES} bytes"),
])
def test_an_unreadable_profile_line_is_a_typed_error_naming_the_line(tmp_path, row, match):
    path = tmp_path / "kernel_details.csv"
    path.write_bytes(HEADER.encode() + row)
    with pytest.raises(InvalidFileError, match=match) as info:
        read_profile(path)
    assert str(path) in info.value.message
    path.write_bytes(b"\xef\xbb\xbf" + HEADER.encode() + b"op,MatMul,1,0,5\n")      # a BOM is no error
    assert [t.duration_us for t in read_profile(path).tasks] == [5.0]
