"""The ``.aetrace`` format: a recorded run of the emulated runtime, read back for replay, what-if and export.

A trace holds every public runtime call of a run as one typed record (``Malloc``, ``LaunchKernel``,
``LaunchGraph`` ...), the kernels those calls launched (``Kernel``: name, blockDim, arguments, cost and
identity), the graph executor's step boundaries (``StepBegin``/``StepEnd``) and, last, what the run
measured (``End``: figures and summary). The layout is specified in ``docs/TRACE_FORMAT.md``; in short:

* ``b"AETRACE\\0"``, then the format version as two little-endian u16 (major, minor);
* chunks until the end of the file, each ``u32 size, u32 records`` (little-endian) and one zstd frame of
  ``size`` bytes (content size and checksum in its header) holding ``records`` msgpack arrays back to back;
* a record is ``[code, field, field, ...]``: ``code`` names its class (``Record.CODE``), the fields
  follow in the class's order. Three msgpack extension types carry what plain msgpack has no word for:
  1 = host bytes (:class:`HostData` with its data), 2 = host bytes not recorded (u64 size), 3 =
  :class:`KernelRef` (u32 id of a ``Kernel`` record).

Why so: chunks are written whole as the run goes (:class:`TraceWriter`), so a run that dies leaves
every earlier chunk readable, and the reader (:class:`TraceReader`) stops at the first chunk that is
cut short or damaged, keeps the complete records before the damage and says where it stopped
(record number, byte offset). msgpack needs no length prefix (each array says how long it is), zstd
frames carry a checksum. A minor version adds record kinds or appends fields with defaults, so a
reader yields a kind it does not know as :class:`Unknown` (a replay refuses it: it cannot issue what it
does not know) and ignores extra trailing fields; a major version is incompatible and refused.

A trace is data, possibly hostile: the reader bounds what a file can make it allocate (a chunk's
declared and decompressed size, one record's bytes and items: the ``MAX_*`` limits below), streams each
chunk twice (once to check its size and checksum, once to decode its records one at a time) so memory
follows the largest record, not the chunk, and checks every field's type against its class's
annotation (:meth:`Record.problem`), raising :class:`InvalidFileError` naming the file and the record.
There is no generic "call by name" record: a replay issues only the kinds defined here.

This module is pure (msgpack and zstandard, no runtime): the recorder (``ascendemu.hal.record``) fills
a trace, the replayer (``ascendemu.replay``) and the exporters read one. A new runtime call is one
record class here: ``CALL`` names the runtime method, its fields are the call's parameters in order
(then ``result`` when ``RESULT`` says what the call returns), and the operand kinds of its fields are
named by field (:data:`FIELD_OPERANDS`), so the recorder and the replayer need nothing else.
"""
from __future__ import annotations

import dataclasses
import enum
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, Iterator

import msgpack
import zstandard

from ascendemu.errors import InvalidFileError, InvalidParamError, short_repr

__all__ = ["MAGIC", "FORMAT_VERSION", "PARTIAL_SUFFIX", "Operand", "FIELD_OPERANDS", "HostData", "KernelRef",
           "Record", "RECORDS", "RECORD_OF_CALL", "TraceFormatError", "Stop", "TraceWriter", "TraceReader",
           "read_trace", "Header", "End", "Kernel", "StepBegin", "StepEnd", "Failed", "Unknown",
           "MAX_CHUNK_BYTES", "MAX_CHUNK_DATA_BYTES", "MAX_CHUNK_RECORDS", "MAX_RECORD_BYTES", "MAX_RECORD_ITEMS",
           "MAX_HOST_DATA_BYTES",
           "Init", "Finalize", "CollectiveWait", "STEP_FIELD_OPERANDS", "step_operand", "rank_trace_path"]

MAGIC = b"AETRACE\0"
FORMAT_VERSION = (1, 1)
PARTIAL_SUFFIX = ".partial"         # a trace being written (or left by a run that died) has this suffix
_PREAMBLE = struct.Struct("<8sHH")
_CHUNK = struct.Struct("<II")
# a chunk is written once it holds this much (uncompressed) or this many records, once it has waited
# this long since the last chunk was written (what a run killed outright can lose), or at every flush
CHUNK_BYTES = 1 << 20
CHUNK_RECORDS = 8192
CHUNK_SECONDS = 1.0
_SIZE_CHECK_EVERY = 128              # records between two looks at the packed size
MAX_CHUNK_BYTES = 1 << 30           # a chunk header asking for more is damage, not data
# What a reader lets a file make it do (a trace is data, possibly hostile; docs/TRACE_FORMAT.md, Limits).
# The writer stays far below each: its chunks hold ~1 MiB or CHUNK_RECORDS records, plus one record's
# recorded host bytes, which it keeps only up to MAX_HOST_DATA_BYTES per record.
MAX_CHUNK_DATA_BYTES = 1 << 30      # a chunk's decompressed bytes (declared in its frame, then counted)
MAX_CHUNK_RECORDS = 1 << 16         # records one chunk may hold (its header says how many)
MAX_RECORD_BYTES = 512 << 20        # one record's msgpack bytes (recorded host bytes and the rest)
MAX_RECORD_ITEMS = 1 << 22          # list items and map entries of one record (a graph launch's steps ...)
MAX_HOST_DATA_BYTES = 256 << 20     # host bytes one record keeps (--record-data); more: their size only
_READ_BYTES = 1 << 20               # decompressed bytes read at a time
_FRAME_HEADER_BYTES = 18            # the longest zstd frame header (it declares the content size)
EXT_HOST_DATA, EXT_HOST_SIZE, EXT_KERNEL = 1, 2, 3


class TraceFormatError(InvalidFileError):
    """A file that is not a trace this reader can read (wrong magic, a newer major version)."""


# -- operands ----------------------------------------------------------------------------------------
class Operand(enum.Enum):
    """What a field's value refers to, so a replay knows how to translate it: a recorded handle or address
    names something the replay made again, under the handle or address the replay got."""

    VALUE = "value"              # taken as is
    DEVICE_PTR = "device_ptr"    # an address in device memory (the start of an allocation or inside one)
    HOST_PTR = "host_ptr"        # an address from malloc_host
    POINTER = "pointer"          # either side of a copy: a device or host address, or HostData
    ADDRESSES = "addresses"      # a kernel's argument list: device addresses
    STREAM = "stream"            # a stream handle (None or 0: the current context's default stream)
    EVENT = "event"
    CONTEXT = "context"
    BINARY = "binary"
    FUNCTION = "function"        # a function handle, or a KernelRef
    KERNEL = "kernel"            # a KernelRef
    STEPS = "steps"              # a graph launch's steps: [step class name, field, ...] each
    COMM = "comm"                # a communicator handle
    COLLECTIVE = "collective"    # a collective kind (ascendemu.device.collectives): [class name, field, ...]
    LOOP_TASK = "loop_task"      # a sunk loop's task kind (ascendemu.device.cost.LoopSinkTask): its op name


# Operand kind by field name, for call records and for the steps of a graph launch alike (a field's name
# says what it holds, as the runtime's own argument check (hal.validate.PARAMS) reads it). A field not
# named here is a VALUE; so is every field of a record that is no call (Kernel, End ...).
FIELD_OPERANDS: dict[str, Operand] = {
    "ptr": Operand.POINTER, "dst": Operand.POINTER, "src": Operand.POINTER, "args": Operand.ADDRESSES,
    "stream": Operand.STREAM, "event": Operand.EVENT, "start": Operand.EVENT, "end": Operand.EVENT,
    "context": Operand.CONTEXT, "binary": Operand.BINARY, "func": Operand.FUNCTION, "kernel": Operand.FUNCTION,
    "steps": Operand.STEPS, "comm": Operand.COMM, "send": Operand.DEVICE_PTR, "recv": Operand.DEVICE_PTR,
    "buf": Operand.DEVICE_PTR, "task": Operand.LOOP_TASK,
}
# Where a step's field name means something else than in FIELD_OPERANDS (a Communicate's ``kind`` is its
# collective, a MemcpyAsync's ``kind`` a copy direction): (step class name, field) -> operand kind.
STEP_FIELD_OPERANDS: dict[tuple[str, str], Operand] = {("Communicate", "kind"): Operand.COLLECTIVE}


def step_operand(step: str, name: str) -> Operand:
    """The operand kind of field ``name`` of the graph launch step class called ``step``."""
    return STEP_FIELD_OPERANDS.get((step, name)) or FIELD_OPERANDS.get(name, Operand.VALUE)


def rank_trace_path(path: str | os.PathLike, rank: int, size: int) -> Path:
    """Where rank ``rank`` of a world of ``size`` writes the trace asked for as ``path``: ``path`` itself
    for a world of one, else ``run.aetrace`` -> ``run.rank3.aetrace`` (one trace per rank, side by side)."""
    path = Path(path)
    if size <= 1:
        return path
    return path.with_name(f"{path.stem}.rank{rank}{path.suffix}" if path.suffix else f"{path.name}.rank{rank}")


@dataclass(frozen=True, slots=True)
class HostData:
    """Host bytes a call read (a copy's source): their size, and the bytes when the run recorded them
    (``ascendemu run --record-data``), else None."""

    nbytes: int
    data: bytes | None = None


@dataclass(frozen=True, slots=True)
class KernelRef:
    """A kernel by the id of its ``Kernel`` record."""

    id: int


def _ext_default(value: Any) -> Any:
    if type(value) is KernelRef:
        return msgpack.ExtType(EXT_KERNEL, struct.pack("<I", value.id))
    if type(value) is HostData:
        if value.data is None:
            return msgpack.ExtType(EXT_HOST_SIZE, struct.pack("<Q", value.nbytes))
        return msgpack.ExtType(EXT_HOST_DATA, value.data)
    if isinstance(value, Record):
        return value.to_wire()
    raise TypeError(f"cannot record a {type(value).__name__} in a trace")


def _ext_hook(code: int, payload: bytes) -> Any:
    if code == EXT_KERNEL:
        if len(payload) != 4:
            raise ValueError(f"a kernel reference is 4 bytes, this one {len(payload)}")
        return KernelRef(struct.unpack("<I", payload)[0])
    if code == EXT_HOST_SIZE:
        if len(payload) != 8:
            raise ValueError(f"a host buffer's size is 8 bytes, this one {len(payload)}")
        return HostData(struct.unpack("<Q", payload)[0])
    if code == EXT_HOST_DATA:
        return HostData(len(payload), payload)
    return msgpack.ExtType(code, payload)


# -- records -----------------------------------------------------------------------------------------
class Record:
    """Base of every record kind. ``CODE`` is its number on the wire; ``CALL`` the runtime method it
    records (None for records that are no call); ``RESULT`` the operand kind of the call's result, kept
    in the last field, ``result`` (None: the call returns nothing worth keeping)."""

    __slots__ = ()
    CODE: ClassVar[int]
    CALL: ClassVar[str | None] = None
    RESULT: ClassVar[Operand | None] = None
    FIELDS: ClassVar[tuple[str, ...]] = ()
    TYPES: ClassVar[tuple[tuple[type, ...] | None, ...]] = ()   # per field: the types it may hold (None: any)

    def problem(self) -> str | None:
        """What is wrong with this record's field types (its class's annotations), or None. A field
        annotated ``Any`` holds an operand its reader checks (a pointer: an int or HostData)."""
        for name, types in zip(self.FIELDS, self.TYPES):
            value = getattr(self, name)
            if types is not None and type(value) not in types:
                return (f"field {name!r} holds {type(value).__name__} {short_repr(value)}, not "
                        f"{' or '.join(t.__name__ for t in types)}")
        return None

    def to_wire(self) -> list:
        return [self.CODE, *(getattr(self, f) for f in self.FIELDS)]

    @classmethod
    def from_wire(cls, values: list) -> "Record":
        """The record of ``values`` (the wire array after the code): fields this reader does not know (a
        newer minor version appended them) are dropped, missing trailing ones take their defaults."""
        return cls(*values[:len(cls.FIELDS)])

    @classmethod
    def operands(cls) -> dict[str, Operand]:
        """Each field's operand kind: for a call record by :data:`FIELD_OPERANDS` (``result`` by
        :attr:`RESULT`); a record that is no call (``Kernel``, ``End`` ...) holds plain values."""
        if cls.CALL is None:
            return {f: Operand.VALUE for f in cls.FIELDS}
        kinds = {f: FIELD_OPERANDS.get(f, Operand.VALUE) for f in cls.FIELDS}
        if "result" in kinds:
            kinds["result"] = cls.RESULT or Operand.VALUE
        return kinds


RECORDS: dict[int, type[Record]] = {}          # code -> class
# A field's annotation -> the types its value may have on the wire (exact types: a bool is no int)
_ANNOTATION_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,), "float": (float, int), "bool": (bool,), "str": (str,), "bytes": (bytes,), "list": (list,),
    "dict": (dict,), "None": (type(None),), "KernelRef": (KernelRef,)}


def _field_types(cls: type, f: dataclasses.Field) -> tuple[type, ...] | None:
    """The types field ``f`` of record class ``cls`` may hold, from its annotation (None for ``Any``)."""
    if f.type == "Any":
        return None
    try:
        return sum((_ANNOTATION_TYPES[part.strip()] for part in str(f.type).split("|")), ())
    except KeyError:
        raise TypeError(f"{cls.__name__}.{f.name}: annotation {f.type!r} names no wire type "
                        f"({sorted(_ANNOTATION_TYPES)} or Any)") from None
RECORD_OF_CALL: dict[str, type[Record]] = {}   # runtime method name -> the class recording it


def record(code: int, call: str | None = None, result: Operand | None = None):
    """Declare a record kind: a slotted dataclass registered under ``code`` (and ``call``)."""
    def wrap(cls: type) -> type[Record]:
        cls = dataclass(slots=True)(cls)
        cls.CODE, cls.CALL, cls.RESULT = code, call, result
        cls.FIELDS = tuple(f.name for f in dataclasses.fields(cls))
        cls.TYPES = tuple(_field_types(cls, f) for f in dataclasses.fields(cls))
        if code in RECORDS:
            raise TypeError(f"record code {code} is taken by {RECORDS[code].__name__}")
        RECORDS[code] = cls
        if call is not None:
            RECORD_OF_CALL[call] = cls
        return cls
    return wrap


# meta records --------------------------------------------------------------------------------------
@record(1)
class Header(Record):
    """The first record: what wrote the trace, the device preset (every ``DeviceSpec`` field) and the
    options of the run (``ascendemu run``'s: jit level, DryRun, what was recorded, the kernel cache)."""

    format: str
    version: list
    ascendemu: str
    created: str
    preset: dict
    device_count: int
    options: dict


@record(2)
class End(Record):
    """The last record of a complete trace: the script's exit status, the run's figures
    (``hal.record.figures``), the summary lines it printed and its host wall time."""

    status: int
    figures: dict
    summary: list = field(default_factory=list)
    host_wall_s: float = 0.0      # the run's measured host wall time (not a simulated figure)


@record(3)
class Kernel(Record):
    """A kernel some launch used, recorded before its first launch: ``args`` are [nbytes, role,
    zero_init] per argument (inputs, outputs, workspaces), ``cost``
    [cube_flops, vector_ops, bytes, dtype, gemm, reread, (transfers)] (:meth:`KernelCost.to_list`);
    ``identity`` says where it came from ({"signature", "outputs"} and, from the kernel cache,
    "kernel_meta" (the entry's name) and "json" (its .json)), None for a kernel nobody named."""

    id: int
    name: str
    block_dim: int
    args: list
    cost: list
    identity: dict | None = None


@record(4)
class StepBegin(Record):
    """The graph executor starts a step: one run of a graph (``level`` O0/O1/O2) or of an op
    (``level`` "PyNative"). Its simulated step time is the device time at ``StepEnd`` minus the host
    time here, as the executor measures it."""

    name: str
    level: str


@record(5)
class StepEnd(Record):
    """The step begun by the last ``StepBegin`` has ended (the host has seen its results)."""

    name: str
    level: str


@record(6)
class Failed(Record):
    """A call the runtime refused (``code``: its ACL error code): it cost its host time all the same."""

    call: str
    code: int
    message: str


# code 7 is retired: it was a generic "call by name" record, which would let a file choose what a replay
# calls; every runtime call has a record kind of its own (tests/test_replay.py checks it)


@record(8)
class CollectiveWait(Record):
    """What a collective waited for, written when its ranks have exchanged their arrival times (during the
    runtime call whose simulation reached it, so before that call's record): communicator ``comm_key``
    (``Communicator.key``) and its collective number ``seq`` there, this rank's ``arrival``, the latest
    arrival of all ranks (``start``: the collective runs from there), its modelled ``seconds`` and the
    world ranks that arrived last (``late``). A rank's trace replays alone from it: the replay's peers
    arrive when these say they did."""

    comm_key: int
    seq: int
    arrival: float
    start: float
    seconds: float
    late: list = field(default_factory=list)


@dataclass(slots=True)
class Unknown(Record):
    """A record of a kind this reader does not know (a newer minor version wrote it): skipped by replays."""

    code: int
    values: list

    def to_wire(self) -> list:
        return [self.code, *self.values]


# init / devices ------------------------------------------------------------------------------------
@record(10, "init")
class Init(Record):
    """``init``: ``spec`` is the device preset as a dict of every ``DeviceSpec`` field."""

    spec: dict
    device_count: int
    strict: bool = False
    defrag: bool = True
    trace: bool = False
    backing: bool = True
    pool: str = "best-fit"


@record(11, "finalize")
class Finalize(Record):
    pass


@record(20, "get_device_count")
class GetDeviceCount(Record):
    result: int = 0


@record(21, "set_device")
class SetDevice(Record):
    device_id: int


@record(22, "reset_device")
class ResetDevice(Record):
    device_id: int


@record(23, "get_device")
class GetDevice(Record):
    result: int = 0


@record(24, "create_context", Operand.CONTEXT)
class CreateContext(Record):
    device_id: int
    result: int = 0


@record(25, "destroy_context")
class DestroyContext(Record):
    context: int


@record(26, "set_current_context")
class SetCurrentContext(Record):
    context: int


# streams and events --------------------------------------------------------------------------------
@record(30, "create_stream", Operand.STREAM)
class CreateStream(Record):
    result: int = 0


@record(31, "destroy_stream")
class DestroyStream(Record):
    stream: int


@record(32, "synchronize_stream")
class SynchronizeStream(Record):
    stream: int | None = None


@record(33, "synchronize_device")
class SynchronizeDevice(Record):
    pass


@record(34, "query_stream")
class QueryStream(Record):
    stream: int | None = None
    result: bool = False


@record(35, "stream_wait_event")
class StreamWaitEvent(Record):
    stream: int | None
    event: int


@record(36, "create_event", Operand.EVENT)
class CreateEvent(Record):
    flags: int = 0
    result: int = 0


@record(37, "destroy_event")
class DestroyEvent(Record):
    event: int


@record(38, "record_event")
class RecordEventCall(Record):
    event: int
    stream: int | None = None


@record(39, "reset_event")
class ResetEvent(Record):
    event: int
    stream: int | None = None


@record(40, "query_event_status")
class QueryEventStatus(Record):
    event: int
    result: int = 0


@record(41, "synchronize_event")
class SynchronizeEvent(Record):
    event: int


@record(42, "event_elapsed_time")
class EventElapsedTime(Record):
    start: int
    end: int
    result: float = 0.0


# memory --------------------------------------------------------------------------------------------
@record(50, "malloc", Operand.DEVICE_PTR)
class Malloc(Record):
    size: int
    policy: int = 0
    result: int = 0


@record(51, "free")
class Free(Record):
    """``free``; ``nbytes`` is the size its ``Malloc`` asked for (so a reader needs no address table)."""

    ptr: int
    nbytes: int = 0


@record(52, "malloc_host", Operand.HOST_PTR)
class MallocHost(Record):
    size: int
    result: int = 0


@record(53, "free_host")
class FreeHost(Record):
    ptr: int


@record(54, "memcpy")
class Memcpy(Record):
    """A synchronous copy. A host side is an address from malloc_host or :class:`HostData` (a buffer of
    the caller's); ``digest`` (with ``--record-data``, device to host) is the BLAKE2b-128 of the bytes
    the host received, so a replay that computes can check it produced the same."""

    dst: Any
    dest_max: int
    src: Any
    count: int
    kind: int = 4
    digest: bytes | None = None


@record(55, "memcpy_async")
class MemcpyAsyncCall(Record):
    dst: Any
    dest_max: int
    src: Any
    count: int
    kind: int = 4
    stream: int | None = None


@record(56, "memset")
class Memset(Record):
    ptr: int
    max_count: int
    value: int
    count: int


@record(57, "memset_async")
class MemsetAsync(Record):
    ptr: int
    max_count: int
    value: int
    count: int
    stream: int | None = None


@record(58, "get_mem_info")
class GetMemInfo(Record):
    result: list = field(default_factory=list)


# kernels -------------------------------------------------------------------------------------------
@record(60, "load_binary", Operand.BINARY)
class LoadBinary(Record):
    """``load_binary``; ``kernels`` maps each kernel name in the binary to its ``Kernel`` record."""

    path: str
    magic: int | None = None
    result: int = 0
    kernels: dict = field(default_factory=dict)


@record(61, "register_function", Operand.FUNCTION)
class RegisterFunction(Record):
    func: KernelRef
    result: int = 0


@record(62, "unload_binary")
class UnloadBinary(Record):
    binary: int


@record(63, "get_function", Operand.FUNCTION)
class GetFunction(Record):
    binary: int
    name: str
    result: int = 0


@record(64, "launch_kernel")
class LaunchKernel(Record):
    """A kernel launch: ``func`` a KernelRef (or a function handle), ``args`` its device addresses,
    ``name`` the launch's name in traces (a graph op's full name; None or absent: the kernel's)."""

    func: Any
    block_dim: int | None
    args: list
    stream: int | None = None
    name: str | None = None


@record(65, "launch_graph")
class LaunchGraph(Record):
    """A graph launch: ``steps`` are [step class name, field, ...] in issue order, the fields of the
    ``ascendemu.hal.steps`` class of that name in its order (operand kinds by field name)."""

    steps: list


@record(66, "label_switch")
class LabelSwitch(Record):
    """A device loop's branch: the predicate at ``ptr`` read on ``stream``, ``steps`` (as in ``LaunchGraph``)
    enqueued if it held; ``taken`` the branch the device took (a replay takes it, reading nothing)."""

    ptr: Any
    stream: int | None
    steps: list
    taken: bool


@record(67, "label_goto")
class LabelGotoCall(Record):
    """The jump back to a device loop's head at the end of its body."""

    stream: int | None = None


@record(68, "loop_task")
class LoopTaskCall(Record):
    """One of a sunk training loop's per-iteration tasks on ``stream``; ``task`` is its kind's MindSpore op
    name (``ascendemu.device.cost.LoopSinkTask.name``: StreamSwitch, StreamActive, AssignAdd, GetNext);
    ``count``: the bytes it moves (GetNext's batch)."""

    task: str
    stream: int | None = None
    count: int = 0


# collective communication (ascendemu.hal.hccl) --------------------------------------------------------
@record(70, "comm_init_world", Operand.COMM)
class CommInitWorld(Record):
    rank_size: int
    rank_id: int
    name: str = "world"
    result: int = 0


@record(71, "comm_create_group", Operand.COMM)
class CommCreateGroup(Record):
    comm: int
    name: str
    ranks: list
    result: int = 0


@record(72, "comm_destroy")
class CommDestroy(Record):
    comm: int


@record(73, "comm_find", Operand.COMM)
class CommFind(Record):
    name: str
    result: int = 0


@record(74, "comm_rank")
class CommRank(Record):
    comm: int
    result: int = 0


@record(75, "comm_size")
class CommSize(Record):
    comm: int
    result: int = 0


@record(76, "comm_world_ranks")
class CommWorldRanks(Record):
    comm: int
    result: list = field(default_factory=list)


@record(80, "all_reduce")
class AllReduceCall(Record):
    send: int
    recv: int
    count: int
    dtype: int
    op: int
    comm: int
    stream: int | None = None


@record(81, "all_gather")
class AllGatherCall(Record):
    send: int
    recv: int
    count: int
    dtype: int
    comm: int
    stream: int | None = None


@record(82, "reduce_scatter")
class ReduceScatterCall(Record):
    send: int
    recv: int
    count: int
    dtype: int
    op: int
    comm: int
    stream: int | None = None


@record(83, "broadcast")
class BroadcastCall(Record):
    buf: int
    count: int
    dtype: int
    root: int
    comm: int
    stream: int | None = None


@record(84, "alltoall")
class AllToAllCall(Record):
    send: int
    recv: int
    count: int
    dtype: int
    comm: int
    stream: int | None = None


@record(85, "send")
class SendCall(Record):
    buf: int
    count: int
    dtype: int
    peer: int
    comm: int
    stream: int | None = None


@record(86, "recv")
class RecvCall(Record):
    buf: int
    count: int
    dtype: int
    peer: int
    comm: int
    stream: int | None = None


@record(87, "barrier")
class BarrierCall(Record):
    comm: int
    stream: int | None = None


# -- writing -----------------------------------------------------------------------------------------
class TraceWriter:
    """Writes a trace as it is recorded: records are packed into a chunk, and each chunk is compressed
    and written at once when it is full or has waited ``chunk_seconds``, so the file grows by whole
    chunks. The file is
    ``<path>.partial`` until :meth:`close` renames it to ``path`` (fsynced first): a run that dies
    leaves the ``.partial`` file, readable up to its last chunk (call :meth:`flush` to write the
    chunk being filled, e.g. at every synchronisation a crash should not lose).

    Recorded host bytes (``HostData`` with data) count towards ``chunk_bytes`` as they are packed, so a
    run of large copies writes one chunk each; a record keeps at most :data:`MAX_HOST_DATA_BYTES` of them
    (beyond that, a buffer is recorded by its size only), so every chunk stays readable
    (:data:`MAX_RECORD_BYTES`).
    """

    def __init__(self, path: str | os.PathLike, level: int = 3, chunk_records: int = CHUNK_RECORDS,
                 chunk_bytes: int = CHUNK_BYTES, chunk_seconds: float = CHUNK_SECONDS) -> None:
        if type(chunk_records) is not int or not 1 <= chunk_records <= MAX_CHUNK_RECORDS:
            raise InvalidParamError(f"TraceWriter chunk_records {chunk_records!r}: must be an int in "
                                    f"1..{MAX_CHUNK_RECORDS} (what a reader accepts per chunk)")
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + PARTIAL_SUFFIX)
        self._file: BinaryIO = open(self.partial, "wb")
        self._file.write(_PREAMBLE.pack(MAGIC, *FORMAT_VERSION))
        self._data_bytes = 0          # recorded host bytes packed into the pending chunk
        self._record_data = 0         # ... into the record being packed
        self._packer = msgpack.Packer(default=self._default, use_bin_type=True, autoreset=False)
        self._compressor = zstandard.ZstdCompressor(level=level, write_checksum=True, write_content_size=True)
        self.chunk_records, self.chunk_bytes, self.chunk_seconds = chunk_records, chunk_bytes, chunk_seconds
        self._pending = 0
        self._flushed_at = time.monotonic()
        self.records = 0
        self.chunks = 0
        self.closed = False

    def _default(self, value: Any) -> Any:
        """The packer's hook for what msgpack has no word for: recorded host bytes are counted (and kept
        only up to :data:`MAX_HOST_DATA_BYTES` per record)."""
        if type(value) is HostData and value.data is not None:
            if self._record_data + len(value.data) > MAX_HOST_DATA_BYTES:
                value = HostData(value.nbytes)
            else:
                self._record_data += len(value.data)
                self._data_bytes += len(value.data)
        return _ext_default(value)

    def write(self, rec: Record | list) -> None:
        """Append a record (or its wire array, as the recorder's hot path builds it)."""
        self._record_data = 0
        self._packer.pack(rec if type(rec) is list else rec.to_wire())
        self._pending += 1
        self.records += 1
        if (self._pending >= self.chunk_records or time.monotonic() - self._flushed_at >= self.chunk_seconds
                or self._data_bytes >= self.chunk_bytes
                or (self._pending % _SIZE_CHECK_EVERY == 0 and self._packed() >= self.chunk_bytes)):
            self.flush()

    def _packed(self) -> int:
        with self._packer.getbuffer() as buf:
            return buf.nbytes

    def flush(self) -> None:
        """Write the records packed so far as one chunk (to the OS: a crash of this process keeps it)."""
        self._flushed_at = time.monotonic()
        if not self._pending:
            return
        frame = self._compressor.compress(self._packer.bytes())
        self._file.write(_CHUNK.pack(len(frame), self._pending) + frame)
        self._file.flush()
        self._packer.reset()
        self._pending = 0
        self._data_bytes = 0
        self.chunks += 1

    def close(self, end: End | None = None) -> Path:
        """Write ``end`` (the record a complete trace ends with), fsync and rename the file into place.
        Without ``end`` the trace stays ``.partial``: readable, but marked incomplete by its name and
        by the missing ``End``. Returns the file's path."""
        if self.closed:
            return self.path if end is not None else self.partial
        if end is not None:
            self.write(end)
        self.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self.closed = True
        if end is None:
            return self.partial
        os.replace(self.partial, self.path)
        return self.path


# -- reading -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stop:
    """Where a reader stopped before the end of a complete trace: after ``records`` good records (counted
    after the header, as iterating the reader yields them), at file byte ``offset`` (the start of the
    chunk it could not read whole), and why."""

    records: int
    offset: int
    reason: str

    def describe(self) -> str:
        return f"stopped after record {self.records} at byte offset {self.offset}: {self.reason}"


class _Slice:
    """The next ``size`` bytes of a file, read as a stream (a chunk's frame: the decompressor reads it
    piece by piece and never past its end)."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f, self.left = f, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.f.read(n) if n else b""
        self.left -= len(data)
        return data


class _Damage(Exception):
    """Why a chunk cannot be read (a reader stops there, see :class:`Stop`)."""


class _ItemBudget:
    """Counts the list items and map entries of the record being decoded (msgpack's hooks), so one
    record cannot make a reader build more than :data:`MAX_RECORD_ITEMS` objects."""

    def __init__(self) -> None:
        self.items = 0

    def list(self, value: list) -> list:
        self._add(len(value) + 1)
        return value

    def map(self, value: dict) -> dict:
        self._add(len(value) + 1)
        return value

    def _add(self, n: int) -> None:
        self.items += n
        if self.items > MAX_RECORD_ITEMS:
            raise ValueError(f"a record of more than {MAX_RECORD_ITEMS} list items and map entries")


class TraceReader:
    """Reads a trace: :attr:`header` at once, then the records (after the header) by iterating, one chunk
    at a time. Damage never raises while iterating: the reader yields every complete record before the
    first chunk it cannot read and sets :attr:`stop`; :attr:`complete` tells whether the trace ended
    with its ``End`` record. A file that is not a trace raises :class:`TraceFormatError` at once; a
    record that decodes but whose fields have the wrong types (:meth:`Record.problem`) raises
    :class:`InvalidFileError` naming the file and the record: that is no accident of a dying run."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            partial = self.path.with_name(self.path.name + PARTIAL_SUFFIX)
            hint = (f"the run that writes it has not ended (or died): replay {partial} up to its last record"
                    if partial.is_file() else "record one with `ascendemu run --record FILE script.py`")
            raise InvalidFileError(f"{self.path}: no such trace file; {hint}")
        self.stop: Stop | None = None
        self.end: End | None = None
        self.version: tuple[int, int] = (0, 0)
        self._iter = self._records()
        first = next(self._iter, None)
        if not isinstance(first, Header):
            why = self.stop.describe() if self.stop else f"its first record is {type(first).__name__}"
            raise TraceFormatError(f"{self.path}: no trace header ({why}); record a trace with "
                                   "`ascendemu run --record FILE script.py`")
        self.header: Header = first

    @property
    def complete(self) -> bool:
        return self.end is not None

    def __iter__(self) -> Iterator[Record]:
        return self._iter

    def _records(self) -> Iterator[Record]:
        with open(self.path, "rb") as f:
            pre = f.read(_PREAMBLE.size)
            if len(pre) < _PREAMBLE.size or pre[:8] != MAGIC:
                raise TraceFormatError(f"{self.path} is not an ascendemu trace (no {MAGIC!r} magic); record one with "
                                       "`ascendemu run --record FILE script.py`")
            _, major, minor = _PREAMBLE.unpack(pre)
            self.version = (major, minor)
            if major != FORMAT_VERSION[0]:
                raise TraceFormatError(f"{self.path} is trace format {major}.{minor}; this ascendemu reads "
                                       f"{FORMAT_VERSION[0]}.x: use the ascendemu version that recorded it")
            count, offset = 0, _PREAMBLE.size
            decompressor = zstandard.ZstdDecompressor()
            while True:
                f.seek(offset)
                head = f.read(_CHUNK.size)
                if not head:
                    if self.end is None:
                        self.stop = Stop(max(count - 1, 0), offset, "the file ends before the trace's End record (the run "
                                                        "did not finish)")
                    return
                if len(head) < _CHUNK.size:
                    self.stop = Stop(max(count - 1, 0), offset, "the file ends inside a chunk header (cut short)")
                    return
                size, n = _CHUNK.unpack(head)
                if size > MAX_CHUNK_BYTES or n > MAX_CHUNK_RECORDS:
                    self.stop = Stop(max(count - 1, 0), offset, f"chunk header claims {size} bytes and {n} records, "
                                     f"more than a chunk holds ({MAX_CHUNK_BYTES} bytes, {MAX_CHUNK_RECORDS} "
                                     "records): damaged")
                    return
                frame_at = offset + _CHUNK.size
                cut = frame_at + size > os.fstat(f.fileno()).st_size
                # first pass: the frame's declared size, what it decompresses to and its checksum, in
                # bounded memory; nothing is yielded from a chunk that is damaged
                try:
                    for _ in self._inflate(decompressor, f, frame_at, size):
                        pass
                except _Damage as e:
                    why = f"the file ends inside a chunk ({e})" if cut else str(e)
                    self.stop = Stop(max(count - 1, 0), offset, why)
                    return
                # second pass: the records, one at a time
                budget = _ItemBudget()
                unpacker = msgpack.Unpacker(ext_hook=_ext_hook, raw=False, strict_map_key=False,
                                            max_buffer_size=MAX_RECORD_BYTES + _READ_BYTES,
                                            list_hook=budget.list, object_hook=budget.map)
                got = 0
                try:
                    for piece in self._inflate(decompressor, f, frame_at, size):
                        unpacker.feed(piece)
                        for wire in unpacker:
                            budget.items = 0
                            rec = _decode(wire)
                            got += 1
                            count += 1
                            if got > n:
                                raise ValueError(f"the chunk holds more records than its header's {n}")
                            self._check(rec, count - 1)
                            if isinstance(rec, End):
                                self.end = rec
                            yield rec
                except (_Damage, ValueError, TypeError, msgpack.UnpackException) as e:
                    self.stop = Stop(max(count - 1, 0), offset, f"the record after it is malformed ({e}): damaged")
                    return
                if cut:
                    self.stop = Stop(max(count - 1, 0), offset, f"the file ends inside a chunk (of its {size} bytes; "
                                                    f"{got} of its {n} records were complete)")
                    return
                if got != n:
                    self.stop = Stop(max(count - 1, 0), offset, f"chunk holds {got} records, its header says {n}: damaged")
                    return
                offset = frame_at + size

    @staticmethod
    def _inflate(decompressor: zstandard.ZstdDecompressor, f: BinaryIO, at: int, size: int) -> Iterator[bytes]:
        """The decompressed bytes of the frame of ``size`` bytes at file offset ``at``, piece by piece: its
        declared content size checked against :data:`MAX_CHUNK_DATA_BYTES` before anything is read, then
        what it gives counted against it (a frame cut short gives what its complete blocks hold)."""
        f.seek(at)
        try:
            declared = zstandard.frame_content_size(f.read(min(size, _FRAME_HEADER_BYTES)))
        except zstandard.ZstdError as e:
            raise _Damage(f"the chunk holds no zstd frame ({e}): damaged") from None
        known = 0 <= declared != zstandard.CONTENTSIZE_UNKNOWN          # -1: the frame does not say
        if known and declared > MAX_CHUNK_DATA_BYTES:
            raise _Damage(f"the chunk declares {declared} bytes of records, more than a chunk holds "
                          f"({MAX_CHUNK_DATA_BYTES}): damaged")
        limit = declared if known else MAX_CHUNK_DATA_BYTES
        f.seek(at)
        total = 0
        try:
            with decompressor.stream_reader(_Slice(f, size), read_size=_READ_BYTES, read_across_frames=False,
                                            closefd=False) as stream:
                while True:
                    piece = stream.read(_READ_BYTES)
                    if not piece:
                        return
                    total += len(piece)
                    if total > limit:
                        raise _Damage(f"the chunk decompresses to more than {limit} bytes: damaged")
                    yield piece
        except zstandard.ZstdError as e:
            raise _Damage(f"chunk does not decompress ({e}): damaged") from None

    def _check(self, rec: Record, index: int) -> None:
        """Refuse a record whose fields hold the wrong types (``index``: its number after the header)."""
        problem = rec.problem() if type(rec) is not Unknown else None
        if problem is not None:
            where = "the header" if index == 0 else f"record {index}"
            raise InvalidFileError(f"{self.path}: {where} ({type(rec).__name__}): {problem}; the trace is damaged "
                                   "or was not written by ascendemu: record it again with `ascendemu run --record`")


def _decode(wire: Any) -> Record:
    if type(wire) is not list or not wire or type(wire[0]) is not int:
        raise ValueError(f"a record is [code, fields...], got {type(wire).__name__}")
    cls = RECORDS.get(wire[0])
    if cls is None:
        return Unknown(wire[0], wire[1:])
    return cls.from_wire(wire[1:])


def read_trace(path: str | os.PathLike) -> TraceReader:
    """Open a trace for reading (see :class:`TraceReader`)."""
    return TraceReader(path)
