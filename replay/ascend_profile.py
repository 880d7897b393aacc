"""A real Ascend profile: the device tasks a profiler recorded on the chip, read as a replayable run.

A profile is MindSpore's ``kernel_details.csv`` (in ``ASCEND_PROFILER_OUTPUT``, written by MindSpore's
Profiler on Ascend and by ours) or msprof's ``op_summary_*.csv``, or a directory holding one of them.
Both list one device task per row: name, op type, stream, start, duration, block dim and (kernel_details
from Level1 on, op_summary always) the shapes and data types of its tensors. Columns are found by
name (:data:`COLUMNS` lists each field's spellings in the two files and their versions).
:func:`read_profile` gives its :class:`Profile`.

:func:`replay` runs the tasks on an emulated device with their recorded durations: each recorded stream
becomes a stream of the device and gets its tasks in recorded order (by start time) as
:class:`~ascendemu.device.tasks.TimedTask`, a task whose duration is given. A stream runs its tasks
back to back: the gaps between them (the host, or another stream it waited for: a profile does not
record why) are reported beside the replay (:attr:`StreamReplay.gaps_us`), not replayed.

A row that cannot be read (a duration that is not a number, a malformed shape) is an
:class:`~ascendemu.errors.InvalidFileError` naming the file, line and column. The file is read a line
at a time, each line bounded (:data:`MAX_LINE_BYTES`), so a file that is no profile is refused
without being read whole. How close the cost model comes to the recorded durations is
:mod:`ascendemu.replay.fidelity`.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from ascendemu.device.model import Stream
from ascendemu.device.spec import DeviceSpec
from ascendemu.device.system import Node
from ascendemu.device.tasks import TimedTask
from ascendemu.errors import InvalidFileError
from ascendemu.traces.chrome import ChromeTrace

__all__ = ["COLUMNS", "CANN_DTYPES", "MAX_LINE_BYTES", "Tensor", "ProfiledTask", "Profile", "StreamReplay",
           "find_profile", "read_profile", "replay", "tensor_cells"]

# field -> its column names: MindSpore's kernel_details.csv first, then msprof's op_summary (with and
# without the unit in the name: CANN 6.0's documentation gives both)
COLUMNS: dict[str, tuple[str, ...]] = {
    "name": ("Name", "Op Name"),
    "type": ("Type", "OP Type"),
    "stream": ("Stream ID",),
    "start": ("Start Time(us)", "Task Start Time(us)", "Task Start Time"),
    "duration": ("Duration(us)", "Task Duration(us)", "Task Duration"),
    "block_dim": ("Block Num", "Block Dim"),
    "input_shapes": ("Input Shapes",),
    "input_dtypes": ("Input Data Types",),
    "input_formats": ("Input Formats",),
    "output_shapes": ("Output Shapes",),
    "output_dtypes": ("Output Data Types",),
    "output_formats": ("Output Formats",),
}
REQUIRED = ("name", "type", "stream", "start", "duration")
# the device's dtypes as CANN's profiles name them (the front end's Profiler writes them, fidelity reads them)
CANN_DTYPES = {"float32": "FLOAT", "float16": "FLOAT16", "int32": "INT32", "bool": "BOOL"}
# A profile line longer than this is no profile's (a row is a few hundred bytes; a cell is also bounded
# by the csv module's field_size_limit, 128 KiB): refused, so a file without newlines is not read whole
MAX_LINE_BYTES = 1 << 20
ABSENT = ("", "N/A")                       # a cell with nothing recorded (e.g. the tensors of an HCCL task)


@dataclass(frozen=True)
class Tensor:
    """One recorded tensor: its shape, and its data type and format as the profile spells them."""

    shape: tuple[int, ...]
    dtype: str
    format: str


@dataclass(frozen=True)
class ProfiledTask:
    """One row of a profile (``line``: its line in the file, the header being line 1)."""

    line: int
    name: str
    type: str
    stream: str
    start_us: float
    duration_us: float
    block_dim: int | None
    inputs: tuple[Tensor, ...] | None          # None: not recorded
    outputs: tuple[Tensor, ...] | None


@dataclass(frozen=True)
class Profile:
    """A profile file's tasks, in file order."""

    path: Path
    tasks: tuple[ProfiledTask, ...]


def tensor_cells(tensors: tuple[Tensor, ...] | None) -> tuple[str, str]:
    """The shapes and data types cells of ``tensors`` as the profile spells them (``"2,3;3,5"``,
    ``"FLOAT;FLOAT"``), ``N/A`` when not recorded."""
    if tensors is None:
        return "N/A", "N/A"
    return ";".join(",".join(map(str, t.shape)) for t in tensors), ";".join(t.dtype for t in tensors)


def find_profile(path: Path) -> Path:
    """``path`` itself, or the one kernel_details.csv (else op_summary_*.csv) under a directory."""
    if not path.is_dir():
        if not path.is_file():
            raise InvalidFileError(f"profile {path} does not exist; give a kernel_details.csv, an op_summary_*.csv "
                                   "or a directory holding one")
        return path
    for pattern in ("kernel_details.csv", "op_summary_*.csv"):
        found = sorted(path.rglob(pattern))
        if len(found) == 1:
            return found[0]
        if found:
            raise InvalidFileError(f"{path} holds {len(found)} {pattern} files ({', '.join(map(str, found[:4]))}"
                                   f"{' ...' if len(found) > 4 else ''}); name the one to read")
    raise InvalidFileError(f"{path} holds no kernel_details.csv or op_summary_*.csv; give the profiler's output "
                           "directory (ASCEND_PROFILER_OUTPUT, mindstudio_profiler_output) or the file")


class _Row:
    """The cells of one data row, read by field, with errors that name the file, line and column."""

    def __init__(self, path: Path, line: int, cells: list[str], index: dict[str, int], header: list[str]):
        self.path, self.line, self.cells, self.index, self.header = path, line, cells, index, header

    def has(self, name: str) -> bool:
        return name in self.index

    def text(self, name: str) -> str:
        return self.cells[self.index[name]].strip()

    def error(self, name: str, problem: str) -> InvalidFileError:
        column = self.header[self.index[name]]
        return InvalidFileError(f"{self.path}: line {self.line}, column {column!r}: {problem}")

    def number(self, name: str) -> float:
        raw = self.text(name)
        try:
            value = float(raw)
        except ValueError:
            raise self.error(name, f"{raw!r} is not a number of microseconds") from None
        if not math.isfinite(value) or value < 0:
            raise self.error(name, f"{raw!r} is not a finite, non-negative number of microseconds")
        return value

    def block_dim(self) -> int | None:
        if not self.has("block_dim") or self.text("block_dim") in ABSENT:
            return None
        raw = self.text("block_dim")
        if not raw.isdigit():
            raise self.error("block_dim", f"{raw!r} is not a block count (a non-negative integer or N/A)")
        return int(raw)

    def tensors(self, side: str) -> tuple[Tensor, ...] | None:
        shapes_col, dtypes_col, formats_col = f"{side}_shapes", f"{side}_dtypes", f"{side}_formats"
        if not self.has(shapes_col) or self.text(shapes_col) in ABSENT:
            return None
        shapes = [self._shape(shapes_col, part) for part in self.text(shapes_col).split(";")]
        dtypes = self.text(dtypes_col).split(";") if self.has(dtypes_col) else []
        formats = (self.text(formats_col).split(";") if self.has(formats_col) and self.text(formats_col) not in ABSENT
                   else [""] * len(shapes))
        for col, cells in ((dtypes_col, dtypes), (formats_col, formats)):
            if len(cells) != len(shapes):
                raise self.error(col if self.has(col) else shapes_col,
                                 f"{len(cells)} entries for the {len(shapes)} tensors of column "
                                 f"{self.header[self.index[shapes_col]]!r}")
        return tuple(Tensor(s, d.strip(), f.strip()) for s, d, f in zip(shapes, dtypes, formats))

    def _shape(self, name: str, part: str) -> tuple[int, ...]:
        part = part.strip().strip('"')
        if part == "":
            return ()                          # a scalar
        try:
            dims = tuple(int(d) for d in part.split(","))
        except ValueError:
            raise self.error(name, f"shape {part!r} is not a comma-separated list of dimensions") from None
        if any(d < 0 for d in dims):
            raise self.error(name, f"shape {part!r} has a negative dimension")
        return dims


def _text_lines(f: BinaryIO, path: Path) -> Iterator[str]:
    """The file's lines as text (UTF-8, a byte order mark dropped), each at most :data:`MAX_LINE_BYTES`:
    what the csv module reads, with errors that name the line."""
    number = 0
    while True:
        raw = f.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise InvalidFileError(f"{path}: line {number} is longer than {MAX_LINE_BYTES} bytes: not a profile's "
                                   "row (kernel_details.csv, op_summary_*.csv)")
        try:
            yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as e:
            raise InvalidFileError(f"{path}: line {number}: byte {raw[e.start]:#04x} at byte {e.start + 1} of the line "
                                   "is not UTF-8; the profilers write UTF-8: convert the file (e.g. `iconv -f GBK "
                                   "-t UTF-8`)") from None


def read_profile(path: str | Path) -> Profile:
    """Read a profile's tasks (a directory: the profile file under it, see :func:`find_profile`)."""
    path = find_profile(Path(path))
    with open(path, "rb") as f:
        reader = csv.reader(_text_lines(f, path))
        try:
            return _read_rows(path, reader)
        except csv.Error as e:
            raise InvalidFileError(f"{path}: line {reader.line_num}: {e}; a profile is a CSV file of one task "
                                   "per row") from None


def _read_rows(path: Path, reader: Any) -> Profile:
    """The tasks of a profile's CSV rows (``reader``: a csv.reader of the file's lines)."""
    header = [h.strip() for h in next(reader, [])]
    index = {}
    for fld, names in COLUMNS.items():
        name = next((n for n in names if n in header), None)
        if name is not None:
            index[fld] = header.index(name)
    missing = [f"{fld} ({' or '.join(repr(n) for n in COLUMNS[fld])})" for fld in REQUIRED if fld not in index]
    if missing:
        raise InvalidFileError(f"{path}: no column for {', '.join(missing)}; its columns are {header}. Give "
                               "MindSpore's kernel_details.csv or msprof's op_summary_*.csv")
    tasks = []
    for cells in reader:
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise InvalidFileError(f"{path}: line {reader.line_num} has {len(cells)} cells, the header has "
                                   f"{len(header)}")
        row = _Row(path, reader.line_num, cells, index, header)
        tasks.append(ProfiledTask(row.line, row.text("name"), row.text("type"), row.text("stream"),
                                  row.number("start"), row.number("duration"), row.block_dim(),
                                  row.tensors("input"), row.tensors("output")))
    if not tasks:
        raise InvalidFileError(f"{path}: no task rows under the header")
    return Profile(path, tuple(tasks))


@dataclass(frozen=True)
class StreamReplay:
    """One recorded stream: its tasks, the simulated time its replay took, and the recorded span."""

    stream: str
    tasks: int
    replayed_us: float             # simulated: from the start until its last task ended
    busy_us: float                 # the recorded durations, summed
    recorded_span_us: float        # first recorded start to last recorded end

    @property
    def gaps_us(self) -> float:
        """The recorded time between the stream's tasks (what the replay leaves out)."""
        return max(self.recorded_span_us - self.busy_us, 0.0)


def replay(profile: Profile, spec: DeviceSpec, trace: ChromeTrace | None = None) -> list[StreamReplay]:
    """Replay ``profile``'s tasks on a device of ``spec``: one stream per recorded stream, tasks in
    recorded order with their recorded durations. Streams in order of their first task."""
    node = Node(spec, device_count=1, trace=trace)
    device = node.devices[0]
    streams: dict[str, Stream] = {}
    tasks: dict[str, list[ProfiledTask]] = {}
    for task in sorted(profile.tasks, key=lambda t: (t.start_us, t.line)):
        s = streams.get(task.stream)
        if s is None:
            sid = int(task.stream) if task.stream.isdigit() else -1 - len(streams)   # N/A (HCCL): a stream of its own
            s = streams[task.stream] = Stream(device, sid)
            tasks[task.stream] = []
            if trace is not None:
                trace.name_track(sid, f"recorded stream {task.stream}")
        s.enqueue(TimedTask(task.name, 0.0, task.duration_us * 1e-6))
        tasks[task.stream].append(task)
    ends: dict[str, float] = {}
    for key, s in streams.items():
        s.drained().callbacks.append(lambda _, key=key: ends.__setitem__(key, node.env.now))
    node.env.run()
    return [StreamReplay(key, len(ts), ends[key] * 1e6, sum(t.duration_us for t in ts),
                         max(t.start_us + t.duration_us for t in ts) - ts[0].start_us)
            for key, ts in tasks.items()]
