"""``ascendemu profile replay|fidelity PROFILE``: a real Ascend profile on the emulated device.

PROFILE is MindSpore's ``kernel_details.csv`` (in ``ASCEND_PROFILER_OUTPUT``, written by MindSpore's
Profiler on Ascend and by ours) or msprof's ``op_summary_*.csv``, or a directory holding one of them.
Both list one device task per row: name, op type, stream, start, duration, block dim and (kernel_details
from Level1 on, op_summary always) the shapes and data types of its tensors. Columns are found by
name (:data:`COLUMNS` lists each field's spellings in the two files and their versions).

* ``replay`` runs the tasks on an emulated device with their recorded durations: each recorded stream
  becomes a stream of the device and gets its tasks in recorded order (by start time) as
  :class:`~ascendemu.device.tasks.TimedTask`, a task whose duration is given. A stream runs its tasks
  back to back: the gaps between them (the host, or another stream it waited for: a profile does not
  record why) are printed beside the replay, not replayed. Prints the simulated time per stream.
* ``fidelity`` compares each kernel's recorded duration with the cost model's for the same op, shapes
  and dtypes, planned from the op registry (``plan_kernel``: nothing is built) and priced on an idle
  device (``kernel_time``), and ranks the kernels by relative error: a table, and a CSV of every kernel.
  A profile has no attributes: where they change the output shapes (MatMul's transposes, a
  convolution's stride and padding, reduced axes ...), the first of :func:`attr_candidates` whose
  inferred outputs are the recorded ones is taken.

A row that cannot be read (a duration that is not a number, a malformed shape) is an
:class:`~ascendemu.errors.InvalidFileError` naming the file, line and column. A kernel the cost model
cannot price (an op type outside the registry, a dtype or layout the device does not have, attributes
the shapes do not determine) is listed with its lines and the reason; the others are still compared.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from ascendemu.device.cost import kernel_time
from ascendemu.device.model import Stream
from ascendemu.device.spec import DeviceSpec, get_spec
from ascendemu.device.system import Node
from ascendemu.device.tasks import TimedTask
from ascendemu.errors import AclError, InvalidFileError, InvalidParamError
from ascendemu.frontend.profiler import CANN_DTYPES
from ascendemu.kernels.library import KernelPlan, infer_outputs, plan_kernel
from ascendemu.kernels.registry import REGISTRY
from ascendemu.kernels.signature import OpSignature, TensorDesc
from ascendemu.traces.chrome import ChromeTrace

__all__ = ["COLUMNS", "ProfiledTask", "Profile", "read_profile", "replay", "fidelity", "main"]

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
# CANN's names of ops the registry knows by MindSpore's name
CANN_OP_TYPES = {"MatMulV2": "MatMul", "MatMulV3": "MatMul", "BatchMatMulV2": "BatchMatMul", "Relu": "ReLU",
                 "SoftmaxV2": "Softmax", "RealDiv": "Div", "Gelu": "GeLU"}
DTYPES = {**{v: k for k, v in CANN_DTYPES.items()}, "FLOAT32": "float32"}
ND_FORMATS = ("", "ND", "NCHW")            # layouts whose shapes are the logical ones
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
    path: Path
    tasks: tuple[ProfiledTask, ...]


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


# -- replay -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StreamReplay:
    """One recorded stream: its tasks, the simulated time its replay took, and the recorded span."""

    stream: str
    tasks: int
    replayed_us: float             # simulated: from the start until its last task ended
    busy_us: float                 # the recorded durations, summed
    recorded_span_us: float        # first recorded start to last recorded end


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


# -- fidelity ---------------------------------------------------------------------------------------
class NotPriced(Exception):
    """Why a recorded kernel has no cost-model figure (reported, not raised to the user)."""


@dataclass
class KernelFidelity:
    """One distinct recorded kernel (op type, tensors): its recorded durations and the model's."""

    type: str
    inputs: tuple[Tensor, ...] | None
    outputs: tuple[Tensor, ...] | None
    lines: list[int] = field(default_factory=list)
    recorded_us: list[float] = field(default_factory=list)
    block_nums: set = field(default_factory=set)
    plan: KernelPlan | None = None
    model_us: float | None = None
    reason: str | None = None

    @property
    def mean_us(self) -> float:
        return sum(self.recorded_us) / len(self.recorded_us)

    @property
    def error(self) -> float:
        """(model - recorded mean) / recorded mean."""
        if self.mean_us == 0:
            return math.inf if self.model_us else 0.0
        return (self.model_us - self.mean_us) / self.mean_us


def attr_candidates(op: str, x: list[TensorDesc], out: list[TensorDesc] | None) -> Iterator[dict]:
    """Attribute sets to try for a recorded ``op`` whose attributes the profile does not record: the
    defaults first, then, for ops whose attributes show in the output shapes, the settings MindSpore's
    layers use (or the ones the shapes imply); the caller keeps the first that gives the recorded outputs."""
    yield {}
    rank = len(x[0].shape) if x else 0
    if op in ("MatMul", "BatchMatMul"):
        for ta, tb in ((False, True), (True, False), (True, True)):
            yield {"transpose_a": ta, "transpose_b": tb}
    elif op == "Conv2D" and len(x) == 2 and rank == 4 and len(x[1].shape) == 4 and x[1].shape[1]:
        kh = x[1].shape[2]
        group = x[0].shape[1] // x[1].shape[1]
        for stride, mode in itertools.product((1, 2, 3, 4), ("same", "valid", "pad")):
            yield {"stride": stride, "pad_mode": mode, "pad": (kh // 2,) * 4 if mode == "pad" else 0, "group": group}
    elif op in ("MaxPool", "AvgPool"):
        for (k, s), mode in itertools.product(((2, 2), (3, 2), (3, 1), (1, 1), (2, 1), (1, 2)), ("VALID", "SAME")):
            yield {"kernel_size": k, "strides": s, "pad_mode": mode}
    elif out is None:
        return
    elif op == "Cast":
        yield {"dst_type": out[0].dtype}
    elif op == "BroadcastTo":
        yield {"shape": out[0].shape}
    elif op == "Tile" and len(out[0].shape) >= rank:
        padded = (1,) * (len(out[0].shape) - rank) + x[0].shape
        yield {"multiples": tuple(o // i if i else 0 for o, i in zip(out[0].shape, padded))}
    elif op == "Transpose" and rank <= 6:
        for perm in itertools.permutations(range(rank)):
            yield {"perm": perm}
    elif op == "Concat":
        for axis in range(rank):
            yield {"axis": axis}
    elif op.startswith("Reduce"):
        for keep in (len(out[0].shape) == rank, len(out[0].shape) != rank):
            for n in range(rank + 1):
                for axes in itertools.combinations(range(rank), n):
                    yield {"axis": axes, "keep_dims": keep}


def _desc(t: Tensor) -> TensorDesc:
    dtype = DTYPES.get(t.dtype.upper().removeprefix("DT_"))
    if dtype is None:
        raise NotPriced(f"data type {t.dtype!r} has no counterpart on the emulated device "
                        f"(it has {', '.join(sorted(set(DTYPES)))})")
    if t.format.upper().removeprefix("FORMAT_") not in ND_FORMATS:
        raise NotPriced(f"format {t.format!r} is a private layout of the chip; the cost model needs shapes "
                        "in ND/NCHW")
    return TensorDesc(t.shape, dtype)


def price(task: ProfiledTask, spec: DeviceSpec) -> tuple[KernelPlan, float]:
    """The plan of ``task``'s kernel from the op registry, and its modelled duration (seconds) on an idle
    device of ``spec``; raises NotPriced saying why there is none."""
    op = CANN_OP_TYPES.get(task.type, task.type)
    if op not in REGISTRY:
        raise NotPriced(f"unknown op type {task.type!r} (column 'Type'): the op registry has no such op")
    if task.inputs is None:
        raise NotPriced("no input shapes recorded (profile with profiler_level=Level1 or above)")
    inputs = [_desc(t) for t in task.inputs]
    outputs = [_desc(t) for t in task.outputs] if task.outputs is not None else None
    for attrs in attr_candidates(op, inputs, outputs):
        sig = OpSignature(op, tuple(inputs), attrs)
        try:
            inferred = infer_outputs(sig)
        except AclError:
            continue
        if outputs is None or list(inferred) == outputs:
            plan = plan_kernel(sig, inferred)
            return plan, kernel_time(spec, plan.cost, plan.block_dim)
    recorded = "; ".join(",".join(map(str, d.shape)) for d in outputs) if outputs else "none"
    raise NotPriced(f"no attributes of {op} that the profile implies give these inputs the recorded outputs "
                    f"({recorded}); its attributes are not in the profile")


def fidelity(profile: Profile, spec: DeviceSpec) -> list[KernelFidelity]:
    """Every distinct kernel of ``profile``: priced ones ranked by |error| (largest first), then the others."""
    kernels: dict[tuple, KernelFidelity] = {}
    for task in profile.tasks:
        key = (task.type, task.inputs, task.outputs)
        k = kernels.get(key)
        if k is None:
            k = kernels[key] = KernelFidelity(task.type, task.inputs, task.outputs)
            try:
                k.plan, seconds = price(task, spec)
                k.model_us = seconds * 1e6
            except NotPriced as why:
                k.reason = str(why)
        k.lines.append(task.line)
        k.recorded_us.append(task.duration_us)
        if task.block_dim is not None:
            k.block_nums.add(task.block_dim)
    priced = sorted((k for k in kernels.values() if k.reason is None), key=lambda k: -abs(k.error))
    return priced + [k for k in kernels.values() if k.reason is not None]


def _cells(tensors: tuple[Tensor, ...] | None) -> tuple[str, str]:
    if tensors is None:
        return "N/A", "N/A"
    return ";".join(",".join(map(str, t.shape)) for t in tensors), ";".join(t.dtype for t in tensors)


def _lines(lines: list[int]) -> str:
    return " ".join(map(str, lines[:8])) + (f" ... ({len(lines)} rows)" if len(lines) > 8 else "")


FIDELITY_COLUMNS = ("Rank", "Type", "Op", "Input Shapes", "Input Data Types", "Output Shapes", "Output Data Types",
                    "Count", "Recorded Mean(us)", "Recorded Min(us)", "Recorded Max(us)", "Model(us)", "Error(%)",
                    "Recorded Block Num", "Model Block Dim", "Status", "Reason", "Lines")


def write_fidelity_csv(path: Path, kernels: list[KernelFidelity]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(FIDELITY_COLUMNS)
        for rank, k in enumerate(kernels, 1):
            priced = k.reason is None
            w.writerow((rank if priced else "", k.type, k.plan.sig.op if priced else "", *_cells(k.inputs),
                        *_cells(k.outputs), len(k.recorded_us), f"{k.mean_us:.3f}", f"{min(k.recorded_us):.3f}",
                        f"{max(k.recorded_us):.3f}", f"{k.model_us:.3f}" if priced else "",
                        f"{100 * k.error:+.2f}" if priced else "", ";".join(map(str, sorted(k.block_nums))),
                        k.plan.block_dim if priced else "", "priced" if priced else "not priced", k.reason or "",
                        " ".join(map(str, k.lines))))


# -- command line -------------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ascendemu profile",
                                description="Replay a real Ascend profile (MindSpore's kernel_details.csv or "
                                            "msprof's op_summary_*.csv) on the emulated device, or compare its "
                                            "kernel durations with the cost model's.")
    sub = p.add_subparsers(dest="verb", required=True)
    for verb, text in (("replay", "run the tasks with their recorded durations; print simulated time per stream"),
                       ("fidelity", "rank the kernels by the cost model's error against their recorded durations")):
        v = sub.add_parser(verb, help=text, description=text)
        v.add_argument("profile", help="kernel_details.csv, op_summary_*.csv, or a directory holding one")
        v.add_argument("--device", default="Ascend910A", help="device preset (ascendemu info lists them)")
        if verb == "replay":
            v.add_argument("--trace", help="write the replay's Chrome/Perfetto trace JSON here")
        else:
            v.add_argument("--csv", default="fidelity.csv", help="write every kernel's comparison here "
                                                                 "(default fidelity.csv)")
            v.add_argument("--top", type=int, default=20, help="kernels shown in the table (default 20)")
    return p


def cmd_replay(opts: argparse.Namespace) -> int:
    profile, spec = read_profile(opts.profile), get_spec(opts.device)
    trace = ChromeTrace() if opts.trace else None
    streams = replay(profile, spec, trace)
    print(f"{profile.path}: {len(profile.tasks)} task(s) on {len(streams)} stream(s), replayed on {spec.name} "
          "with their recorded durations (simulated device time)")
    print(f"{'stream':>8} {'tasks':>6} {'replayed(us)':>14} {'recorded span(us)':>18} {'recorded gaps(us)':>18}")
    for s in streams:
        print(f"{s.stream:>8} {s.tasks:>6} {s.replayed_us:>14.3f} {s.recorded_span_us:>18.3f} "
              f"{max(s.recorded_span_us - s.busy_us, 0.0):>18.3f}")
    print(f"simulated device time: {max(s.replayed_us for s in streams):.3f} us (the longest stream)")
    if trace is not None:
        print(f"trace: {trace.write(opts.trace)} (open in https://ui.perfetto.dev)")
    return 0


def cmd_fidelity(opts: argparse.Namespace) -> int:
    if opts.top < 0:
        raise InvalidParamError(f"--top must be >= 0, got {opts.top}")
    profile, spec = read_profile(opts.profile), get_spec(opts.device)
    kernels = fidelity(profile, spec)
    priced = [k for k in kernels if k.reason is None]
    write_fidelity_csv(Path(opts.csv), kernels)
    print(f"{profile.path}: {len(kernels)} distinct kernel(s) in {len(profile.tasks)} task(s); cost model of "
          f"{spec.name} (an idle device) against the recorded durations, largest error first")
    print(f"{'rank':>4} {'error':>9} {'recorded(us)':>13} {'model(us)':>11} {'count':>6}  {'type':<16} inputs")
    for rank, k in enumerate(priced[:opts.top], 1):
        shapes, dtypes = _cells(k.inputs)
        print(f"{rank:>4} {100 * k.error:>+8.1f}% {k.mean_us:>13.3f} {k.model_us:>11.3f} {len(k.recorded_us):>6}  "
              f"{k.type:<16} {shapes} {dtypes}")
    if len(priced) > opts.top:
        print(f"     ... {len(priced) - opts.top} more in {opts.csv}")
    if priced:
        recorded = sum(sum(k.recorded_us) for k in priced)
        model = sum(k.model_us * len(k.recorded_us) for k in priced)
        mean_abs = sum(abs(k.error) for k in priced) / len(priced)
        print(f"priced {len(priced)} kernel(s) in {sum(len(k.recorded_us) for k in priced)} task(s): recorded "
              f"{recorded:.3f} us in all, model {model:.3f} us; mean |error| {100 * mean_abs:.1f}%")
    for k in kernels[len(priced):]:
        print(f"not priced: {k.type} (line(s) {_lines(k.lines)}): {k.reason}")
    print(f"csv: {opts.csv}")
    if not priced:
        print("ascendemu profile fidelity: no kernel of the profile could be priced (see the reasons above)")
        return 1
    return 0


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        opts = parser.parse_args(argv)
    except SystemExit as exc:             # --help, or a usage error argparse printed
        return exc.code if isinstance(exc.code, int) else 0
    return cmd_replay(opts) if opts.verb == "replay" else cmd_fidelity(opts)
