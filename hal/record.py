"""Recording a run at the choke point: every runtime call into an ``.aetrace`` trace, and the run's figures.

:class:`Recorder` is one of the runtime's recorders (``Runtime.recorders``): ``Runtime._dispatch`` calls it
after every public call with the validated arguments and the result, and tells it about refused calls
(``failed``) and about step boundaries of the layers above (``annotate``). It turns each call into the
wire array of the call's record class (``traces.aetrace.RECORD_OF_CALL``), field by field according to
the field's operand kind, so a new runtime call needs only its record class. Kernels are recorded once,
as ``Kernel`` records, before their first launch, and launches refer to them (``KernelRef``).

:class:`StepClock` measures the graph executor's steps as the executor does (device time at the step's
end minus host time at its start) and :func:`figures` collects what a run measured: simulated device and
host time, per stream and per AI core busy time, pool statistics. The recorder writes them in the trace's
``End`` record; a replay computes them the same way, so the two compare bit for bit.

Record before ``init``: a trace starts with the node (its header holds the device preset), so a
recorder attached to a running node is refused.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import struct
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ascendemu.errors import AclError, RtParamInvalidError
from ascendemu.traces import aetrace as fmt

from .api import api_call
from .figures import figures  # the one home of a run's figures; re-exported
from .kernel import KernelFunction
from .memory import MEMCPY_DEFAULT, MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE, MEMCPY_HOST_TO_HOST

if TYPE_CHECKING:
    from ascendemu.device.cost import LoopSinkTask
    from ascendemu.device.system import Node

    from .runtime import Runtime

__all__ = ["DIGEST_BYTES", "Recorder", "StepClock", "figures", "digest"]

DIGEST_BYTES = 16            # BLAKE2b-128 of the bytes a device-to-host copy delivered (--record-data)
FAILED_MESSAGE_CHARS = 500


def digest(data: np.ndarray | bytes) -> bytes:
    """The digest a trace keeps of host bytes (a copy's result), to check a replay computed the same."""
    return hashlib.blake2b(memoryview(data).cast("B"), digest_size=DIGEST_BYTES).digest()


class StepClock:
    """The graph executor's steps, measured on the simulated clocks: a step is named by its graph (or op)
    and level; its time is the device time when it ended minus the host time when it began (what the
    executor's StepRecord keeps). Fed ``StepBegin``/``StepEnd`` annotations."""

    def __init__(self) -> None:
        self.rt: Runtime | None = None
        self.node: Node | None = None
        self.steps: dict[str, list] = {}      # "name [level]" -> [runs, first run's seconds, total seconds]
        self._open: list[float] = []

    def attach(self, rt: Runtime) -> "StepClock":
        """Measure ``rt``'s steps from now on (as one of its recorders)."""
        self.rt, self.node = rt, rt.node
        rt.recorders.append(self)
        return self

    def detach(self) -> None:
        if self.rt is not None and self in self.rt.recorders:
            self.rt.recorders.remove(self)

    def __call__(self, name: str, args: tuple, kwargs: dict, result: Any, host_time: float) -> None:
        if name == fmt.Init.CALL:        # a new node (after finalize the last one's figures stay readable)
            self.node, self._open = self.rt.node, []

    def annotate(self, record: Any) -> None:
        if self.node is None:
            return
        if type(record) is fmt.StepBegin:
            self._open.append(self.node.host_time)
        elif type(record) is fmt.StepEnd and self._open:
            seconds = self.node.env.now - self._open.pop()
            entry = self.steps.setdefault(f"{record.name} [{record.level}]", [0, seconds, 0.0])
            entry[0] += 1
            entry[2] += seconds

    def figures(self) -> dict:
        return figures(self.node, self.steps) if self.node is not None else {}


class Recorder(StepClock):
    """Records every runtime call of a run into ``path`` (see the module docstring).

    ``record_data``: also keep the bytes every host-to-device copy reads and a digest of what every
    synchronous device-to-host copy delivers, so a replay can compute and check the same outputs.
    ``options``: what the header keeps about the run (``ascendemu run`` passes its options);
    ``writer_options`` go to the trace writer (chunk size and age).
    """

    def __init__(self, path: str | os.PathLike, record_data: bool = False, options: dict | None = None,
                 **writer_options: Any) -> None:
        super().__init__()
        self.path = path
        self.writer_options = writer_options     # traces.aetrace.TraceWriter's chunking options
        self.record_data = record_data
        self.options = dict(options or {}, record_data=record_data)
        self.writer: fmt.TraceWriter | None = None
        self._kernel_ids: dict[int, int] = {}       # id(KernelFunction) -> Kernel record id
        self._kernel_keys: dict[tuple, int] = {}    # what a kernel is -> its id (a DryRun op makes new objects)
        self._keep: list[KernelFunction] = []       # the recorded functions stay alive, so their ids stay theirs
        self._encoders: dict[str, Callable[[tuple, Any], list]] = {}
        for name, cls in fmt.RECORD_OF_CALL.items():
            self._encoders[name] = self._generic(cls)
        self._encoders.update(init=self._init, launch_kernel=self._launch, launch_graph=self._launch_graph,
                              label_switch=self._label_switch,
                              memcpy=self._memcpy, memcpy_async=self._memcpy_async, load_binary=self._load_binary,
                              malloc=self._malloc, free=self._free)
        self._sizes: dict[int, int] = {}            # live device allocation -> the size its malloc asked for

    # -- attaching -------------------------------------------------------------------------------
    def attach(self, rt: Runtime) -> "Recorder":
        """Start recording ``rt``'s calls; it must not be initialised yet (a trace starts with init)."""
        if rt.node is not None:
            raise RtParamInvalidError("a trace starts with init(): attach the recorder before init(), or "
                                      "finalize() the runtime first")
        super().attach(rt)
        return self

    def close(self, status: int = 0, summary: list[str] | None = None, host_wall_s: float = 0.0) -> str | None:
        """Stop recording; write the ``End`` record (the run's figures) and move the trace into place.
        Returns the trace's path (None if the runtime was never initialised while recording)."""
        self.detach()
        if self.writer is None:
            return None
        end = fmt.End(status, self.figures(), list(summary or []), host_wall_s)
        return str(self.writer.close(end))

    def abandon(self) -> str | None:
        """Stop recording without an ``End`` record: the trace stays ``.partial`` (a run that failed)."""
        self.detach()
        return str(self.writer.close()) if self.writer is not None else None

    # -- the recorder protocol (Runtime._dispatch) ----------------------------------------------------
    def __call__(self, name: str, args: tuple, kwargs: dict, result: Any, host_time: float) -> None:
        encode = self._encoders.get(name)
        if encode is None:
            if self._is_costless(name):
                return                       # observation (device_time, mem_stats ...): changes nothing
            # every call with a host cost has a record kind (tests/test_replay.py checks): a trace never
            # names a method for a replay to call
            raise TypeError(f"runtime call {name!r} has no record kind in ascendemu.traces.aetrace; add one "
                            "(docs/TRACE_FORMAT.md, Adding a record kind)")
        wire = encode(args, result)
        if wire is not None and self.writer is not None:
            self.writer.write(wire)

    def failed(self, name: str, error: AclError) -> None:
        if self.writer is not None:
            self.writer.write([fmt.Failed.CODE, name, error.code, error.message[:FAILED_MESSAGE_CHARS]])

    def annotate(self, record: Any) -> None:
        super().annotate(record)
        if self.writer is not None and isinstance(record, fmt.Record):
            self.writer.write(record)

    def _is_costless(self, name: str) -> bool:
        call = api_call(getattr(type(self.rt), name, None))
        return call is not None and call.cost is None

    # -- encoders: (validated args, result) -> wire array -------------------------------------------
    def _generic(self, cls: type[fmt.Record]) -> Callable[[tuple, Any], list]:
        """The encoder of a record class whose fields are the call's parameters (then ``result``)."""
        kinds = [k for f, k in cls.operands().items() if f != "result"]
        encoders = [self._operand_encoder(k) for k in kinds]
        with_result = "result" in cls.FIELDS
        code = cls.CODE
        if all(e is None for e in encoders):
            if with_result:
                return lambda args, result: [code, *args, _plain(result)]
            return lambda args, result: [code, *args]

        def encode(args: tuple, result: Any) -> list:
            wire = [code, *(a if e is None else e(a) for a, e in zip(args, encoders))]
            if with_result:
                wire.append(_plain(result))
            return wire
        return encode

    def _operand_encoder(self, kind: fmt.Operand) -> Callable[[Any], Any] | None:
        if kind is fmt.Operand.FUNCTION or kind is fmt.Operand.KERNEL:
            return self._function
        if kind is fmt.Operand.ADDRESSES:
            return _addresses
        if kind is fmt.Operand.POINTER:
            return _pointer
        if kind is fmt.Operand.STEPS:
            return self._steps
        if kind is fmt.Operand.LOOP_TASK:
            return _loop_task_name
        return None

    def _init(self, args: tuple, result: Any) -> list | None:
        spec, device_count, strict, defrag, trace, backing, pool = args
        node = self.rt.node
        preset = dataclasses.asdict(node.spec)
        if self.writer is None:
            from ascendemu import __version__
            self.writer = fmt.TraceWriter(self.path, **self.writer_options)
            self.writer.write(fmt.Header("aetrace", list(fmt.FORMAT_VERSION), __version__,
                                         datetime.now(timezone.utc).isoformat(timespec="seconds"), preset,
                                         device_count, self.options))
        self.node = node
        self._open = []
        self._sizes.clear()
        return [fmt.Init.CODE, preset, device_count, strict, defrag, trace, backing, pool]

    def _function(self, func: Any) -> Any:
        """A launch's function: a handle stays an int, a KernelFunction becomes a KernelRef to its
        ``Kernel`` record (written now if this is its first launch)."""
        if type(func) is not KernelFunction and not isinstance(func, KernelFunction):
            return func
        kid = self._kernel_ids.get(id(func))
        if kid is None:
            kid = self._kernel_id(func)
        return fmt.KernelRef(kid)

    def _kernel_id(self, func: KernelFunction) -> int:
        identity = func.identity() if func.identity is not None else None
        args = [[a.nbytes, a.role, a.zero_init] for a in func.args]
        cost = func.cost.to_list()
        key = (func.name, func.block_dim, func.args, func.cost, repr(identity))
        kid = self._kernel_keys.get(key)
        if kid is None:
            kid = self._kernel_keys[key] = len(self._kernel_keys)
            self.writer.write(fmt.Kernel(kid, func.name, func.block_dim, args, cost, identity))
        self._kernel_ids[id(func)] = kid
        self._keep.append(func)
        return kid

    def _malloc(self, args: tuple, result: Any) -> list:
        self._sizes[result] = args[0]
        return [fmt.Malloc.CODE, args[0], args[1], result]

    def _free(self, args: tuple, result: Any) -> list:
        return [fmt.Free.CODE, args[0], self._sizes.pop(args[0], 0)]

    def _launch(self, args: tuple, result: Any) -> list:
        func, block_dim, kargs, stream, name = args
        if type(kargs) is bytes or type(kargs) is bytearray:
            kargs = _addresses(kargs)
        kid = self._kernel_ids.get(id(func)) if type(func) is KernelFunction else None
        return [fmt.LaunchKernel.CODE, fmt.KernelRef(kid) if kid is not None else self._function(func), block_dim,
                kargs, stream, name]

    def _steps(self, steps: list) -> list:
        out = []
        for step in steps:
            names = _STEP_FIELDS.get(type(step))
            if names is None:
                names = _STEP_FIELDS[type(step)] = tuple(f.name for f in dataclasses.fields(step))
            wire = [type(step).__name__]
            for f in names:
                v = getattr(step, f)
                kind = fmt.step_operand(wire[0], f)
                if kind is fmt.Operand.COLLECTIVE:
                    v = [type(v).__name__, *(int(getattr(v, k.name)) for k in dataclasses.fields(v))]
                elif kind is fmt.Operand.LOOP_TASK:
                    v = _loop_task_name(v)
                elif kind is fmt.Operand.FUNCTION:
                    v = self._function(v)
                elif kind is fmt.Operand.ADDRESSES:
                    v = _addresses(v)
                elif kind is fmt.Operand.POINTER and type(v) is not int:
                    count = getattr(step, "count", None)
                    count = _nbytes(v) if count is None else count
                    data = bytes(_host_bytes(v)[:count]) if self.record_data and f == "src" else None
                    v = fmt.HostData(count, data)
                wire.append(v)
            out.append(wire)
        return out

    def _launch_graph(self, args: tuple, result: Any) -> list:
        return [fmt.LaunchGraph.CODE, self._steps(args[0])]

    def _label_switch(self, args: tuple, result: Any) -> list:
        ptr, stream, steps, _ = args
        return [fmt.LabelSwitch.CODE, ptr, stream, self._steps(steps), bool(result)]

    def _copy_operands(self, dst: Any, src: Any, count: int, kind: int) -> tuple[Any, Any]:
        """A copy's two sides as recorded: a host buffer as HostData (with the bytes it reads, with
        ``record_data``; a source given as a malloc_host address too), addresses as they are."""
        if type(dst) is not int:
            dst = fmt.HostData(count)
        if type(src) is not int:
            src = fmt.HostData(count, bytes(_host_bytes(src)[:count]) if self.record_data else None)
        elif self.record_data and kind in (MEMCPY_HOST_TO_DEVICE, MEMCPY_HOST_TO_HOST, MEMCPY_DEFAULT) \
                and not self.rt._is_device_ptr(src):
            src = fmt.HostData(count, bytes(self.rt._host_view(src, count, "memcpy source")))
        return dst, src

    def _memcpy(self, args: tuple, result: Any) -> list:
        dst, dest_max, src, count, kind = args
        check = None
        if self.record_data and count and self.node.devices[0].memory.backed:
            to_host = kind == MEMCPY_DEVICE_TO_HOST or (kind == MEMCPY_DEFAULT and self.rt._is_device_ptr(src)
                                                        and not self.rt._is_device_ptr(dst))
            if to_host:
                received = (dst.reshape(-1).view(np.uint8)[:count] if isinstance(dst, np.ndarray)
                            else self.rt._host_view(dst, count, "memcpy destination"))
                check = digest(received)
        dst, src = self._copy_operands(dst, src, count, kind)
        return [fmt.Memcpy.CODE, dst, dest_max, src, count, kind, check]

    def _memcpy_async(self, args: tuple, result: Any) -> list:
        dst, dest_max, src, count, kind, stream = args
        dst, src = self._copy_operands(dst, src, count, kind)
        return [fmt.MemcpyAsyncCall.CODE, dst, dest_max, src, count, kind, stream]

    def _load_binary(self, args: tuple, result: Any) -> list:
        path, magic = args
        functions = self.rt.binaries[result].functions
        return [fmt.LoadBinary.CODE, os.fspath(path), magic, result,
                {name: fmt.KernelRef(self._function(f).id) for name, f in functions.items()}]


_STEP_FIELDS: dict[type, tuple[str, ...]] = {}


def _addresses(args: Any) -> Any:
    """A launch's argument list as addresses (a packed buffer unpacked)."""
    if type(args) is bytes or type(args) is bytearray:
        return list(struct.unpack(f"<{len(args) // 8}Q", args))
    return args


def _nbytes(buf: Any) -> int:
    return buf.nbytes if isinstance(buf, (np.ndarray, memoryview)) else len(buf)


def _host_bytes(buf: Any) -> memoryview:
    if isinstance(buf, np.ndarray):
        return memoryview(buf.reshape(-1).view(np.uint8))
    return memoryview(buf).cast("B")


def _pointer(v: Any) -> Any:
    """A pointer operand of a call without a copy's count (memset): an int, or a host buffer's size."""
    return v if type(v) is int else fmt.HostData(_nbytes(v))


def _loop_task_name(kind: type[LoopSinkTask]) -> str:
    """A sunk loop's task kind as traces write it: MindSpore's op name (the replay maps it back)."""
    return kind.name


def _plain(value: Any) -> Any:
    """A call's argument or result as plain trace data (a host buffer as its size, a kernel as its name)."""
    if value is None or type(value) in (int, float, bool, str, bytes):
        return value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.ndarray, bytearray, memoryview)):
        return fmt.HostData(_nbytes(value))
    if isinstance(value, KernelFunction):
        return value.name
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return repr(value)
