"""Device tasks: the units of work a stream runs, one class per kind.

A *task* is one entry of a stream's FIFO. It carries everything needed to perform it (a kernel and
its checked arguments, bytes to move, an event to trigger or wait for), the simulated host time at
which it was issued (it never starts earlier), and the device memory ranges it reads and writes
(strict mode checks those for races). Every kind follows one protocol:

* ``enqueued()`` runs once when the host puts the task on a stream, in host order. Most kinds do
  nothing; a record binds the event generation it will trigger, a wait the one it will wait for, so
  that generations follow host issue order even when a whole graph is validated before it is enqueued.
* ``run(device, stream)`` is always a SimPy generator performing the task in simulated time: holding
  AI cores or a DMA engine, moving bytes when it ends, triggering or awaiting events, writing its
  trace spans. Instantaneous kinds are generators that yield nothing.
* ``buffers()`` lists device addresses inside every allocation the task touches; the stream records
  them when it enqueues the task, so those allocations are not freed under it (:mod:`.memory`).
* ``dropped()`` runs if the stream drops the task unfinished (reset_device): it then counts as
  finished, so a kind that other work waits for (a collective) releases it.

Why classes rather than a ``kind`` string: the stream loop and the device know no kinds, they call
``task.run``; a new kind (a collective, say) is one new subclass here and nothing else. The classes
are slots dataclasses because a task is created per launch, on the runtime's hottest path.
"""
from __future__ import annotations

import ctypes
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol, Sequence

import numpy as np
import simpy

from ascendemu.errors import HcclParamError

from .collectives import Collective, CollectiveChain, Communicator, Exchange
from .cost import LABEL_GOTO_S, LABEL_SWITCH_S, KernelCost, block_time, copy_time
from .kernel_status import STATUS_BYTES, check_status
from .model import Task

if TYPE_CHECKING:
    from collections.abc import Generator

    from .model import Device, Event, Stream

# Blocks of one launch run on host worker threads when the launch moves at least this much data;
# below it, thread hand-off costs more than it saves.
PARALLEL_BLOCKS_MIN_BYTES = 1 << 20
# Host threads computing a launch's blocks; a kernel whose outputs do not depend on its block count
# (``host_blocks``) runs as this many larger blocks, whatever the device's count (1024^3 MatMul: 2 large
# sgemms instead of 32 small ones that each pack their operands again)
HOST_BLOCK_THREADS = 2
_block_workers = ThreadPoolExecutor(max_workers=HOST_BLOCK_THREADS, thread_name_prefix="aicore")
_argv_types: dict[int, type] = {}     # argument count -> ctypes uint64 array type (built once, not per launch)

class LaunchedKernel(Protocol):
    """What the device needs of a launched kernel (the HAL's ``KernelFunction`` is one; the device
    layer does not import the HAL above it)."""

    name: str
    entry: int                     # native entry point; 0: none (a DryRun kernel: checked, priced, not run)
    cost: KernelCost
    op_info: dict | None           # what it computes, for traces and profilers (op type, tensors); None: unknown
    args: Sequence[Any]            # argument specs: ``nbytes``, ``zero_init``
    zero_init_args: Sequence[int]  # indices of the arguments zeroed before the blocks run
    status_args: Sequence[int]     # indices of its status words (``kernel_status``), read when it ends
    host_blocks: bool              # its work split comes from the run-time block_dim: any count computes it

    def call_block(self, host_args: ctypes.Array, block_idx: int, block_dim: int | None = None) -> None: ...


@dataclass(slots=True)
class KernelTask(Task):
    """A kernel launch: ``block_dim`` blocks on the AI cores (in waves beyond the core count), then the
    kernel's numerics run natively on the host backing of its arguments, as the last block ends."""

    kernel: LaunchedKernel
    block_dim: int
    args: tuple[int, ...]          # device addresses: inputs, outputs, workspaces
    host_args: tuple[int, ...]     # their host addresses, checked at launch
    launch: tuple[int, float] | None = field(default=None, kw_only=True)   # traced: (host tid, time) of the launch call

    def buffers(self) -> Sequence[int]:
        return self.args

    def run(self, device: Device, stream: Stream) -> Generator:
        env, spec = device.env, device.spec
        start = env.now
        t_block = self._block_time(device)
        workers = min(self.block_dim, spec.ai_cores)
        if workers == 1:
            yield from self._blocks(device, 0, 1, t_block, spec.task_overhead_s)
        else:
            yield env.timeout(spec.task_overhead_s)
            yield simpy.AllOf(env, [env.process(self._blocks(device, w, workers, t_block)) for w in range(workers)])
        self._finish(device, stream, start)

    def run_from(self, device: Device, stream: Stream, at: float) -> Generator | None:
        """A 1-block launch on a free core, due at ``at``: take the core now and wait for the submit time
        and the block in one timeout (one SimPy event instead of two). The stream calls this only when
        no other event can happen before ``at`` (so the same core is free then, and taken in the same
        order); None when the single timeout would not end at exactly the float the two would."""
        if self.block_dim != 1:
            return None
        env = device.env
        t_block = self._block_time(device)
        end = at + (t_block + device.spec.task_overhead_s)
        delay = end - env.now
        if env.now + delay != end:
            return None
        core = device.cores.acquire()
        if core is None:
            return None
        return self._folded(device, stream, at, core, delay, t_block)

    def _folded(self, device: Device, stream: Stream, at: float, core: int, delay: float,
                t_block: float) -> Generator:
        yield device.env.timeout(delay)
        self._block_done(device, core, 0, at, t_block)
        self._finish(device, stream, at)

    def _block_time(self, device: Device) -> float:
        key = (self.kernel.cost, self.block_dim)
        t_block = device.block_times.get(key)
        if t_block is None:
            t_block = device.block_times[key] = block_time(device.spec, self.kernel.cost, self.block_dim)
        return t_block

    def _finish(self, device: Device, stream: Stream, start: float) -> None:
        """The last block has ended: the numerics run, and the launch's span (and flow) is traced."""
        self._compute(device)
        device.kernels_run += 1
        trace = device.trace
        if trace is not None:
            func, now = self.kernel, device.env.now
            args = {"blockDim": self.block_dim, "cost": func.cost.to_json()}
            if self.name != func.name:          # the span is named after the op it computes
                args["kernel"] = func.name
            if func.op_info is not None:
                args["op"] = func.op_info
            trace.span(stream.id, self.name, start, now - start, "kernel", args)
            if self.launch is not None:
                trace.flow("launch", self.launch, (stream.id, (start + now) / 2), cat="launch")

    def _blocks(self, device: Device, first: int, step: int, t_block: float, lead: float = 0.0) -> Generator:
        """Blocks first, first+step, ... of the launch, each holding one AI core for ``t_block``."""
        env, cores = device.env, device.cores
        for b in range(first, self.block_dim, step):
            core = cores.acquire()
            if core is None:
                core = yield cores.wait()
            t0 = env.now
            yield env.timeout(t_block + lead)
            lead = 0.0
            self._block_done(device, core, b, t0, t_block)

    def _block_done(self, device: Device, core: int, b: int, t0: float, t_block: float) -> None:
        """Block ``b`` held ``core`` from ``t0`` for ``t_block``: free the core, count and trace it."""
        device.cores.release(core)
        device.busy_time += t_block
        device.core_busy[core] += t_block
        if device.trace is not None:
            device.trace.span(device.trace.core_track(device.id, core), self.name, t0, t_block, "block",
                              {"block": b})

    def _compute(self, device: Device) -> None:
        """Run the kernel's blocks natively on the host backing of its arguments (live until the task
        ends: their allocations cannot be freed before). A device without backing computes nothing."""
        func = self.kernel
        if not device.memory.backed:
            if func.entry:
                raise device.memory.no_backing(f"kernel {func.name!r}, which has native code,")
            return
        host = self.host_args
        for i in func.zero_init_args:
            device.memory.view(self.args[i], func.args[i].nbytes)[:] = 0
        n = max(1, len(host))
        argv_type = _argv_types.get(n)
        if argv_type is None:
            argv_type = _argv_types[n] = ctypes.c_uint64 * n
        argv = argv_type(*host)
        blocks = min(self.block_dim, HOST_BLOCK_THREADS) if func.host_blocks else self.block_dim
        if blocks > 1 and func.cost.bytes >= PARALLEL_BLOCKS_MIN_BYTES:
            list(_block_workers.map(lambda b: func.call_block(argv, b, blocks), range(blocks)))
        else:
            for b in range(blocks):
                func.call_block(argv, b, blocks)
        for i in func.status_args:       # a fault the kernel reported: the AI Core exception
            words = device.memory.view(self.args[i], STATUS_BYTES).view(np.int64)
            check_status(words, func.name, func.op_info["type"] if func.op_info else func.name, func.args[i].fault)


@dataclass(slots=True)
class CopyTask(Task):
    """A copy on a DMA engine (memcpy, or memset with a ``move`` that fills): it holds an engine for
    the modelled transfer time, and ``move`` moves the bytes when it ends."""

    move: Callable[[], None]
    nbytes: int
    copy_kind: str                 # "H2D" | "D2H" | "D2D" | "H2H": prices the transfer

    def run(self, device: Device, stream: Stream) -> Generator:
        env, dma = device.env, device.dma
        engine = dma.acquire()
        if engine is None:
            engine = yield dma.wait()
        t0 = env.now
        yield env.timeout(copy_time(device.spec, self.nbytes, self.copy_kind))
        dma.release(engine)
        self.move()
        if device.trace is not None:
            args = {"bytes": self.nbytes, "kind": self.copy_kind}
            device.trace.span(device.trace.dma_track(device.id, engine), self.name, t0, env.now - t0, "dma", args)
            device.trace.span(stream.id, self.name, t0, env.now - t0, "copy", args)


@dataclass(slots=True)
class RecordTask(Task):
    """An event record: when it runs it stamps the event and triggers the generation it bound when it
    was enqueued, releasing the waits issued after it."""

    event: Event
    generation: simpy.Event | None = None     # bound by enqueued()

    def enqueued(self) -> None:
        self.generation = self.event.issue_record()

    def run(self, device: Device, stream: Stream) -> Generator:
        ev, now = self.event, device.env.now
        ev.timestamp = now
        ev.record_stream = stream
        ev.flow_src = (stream.id, now)
        if not self.generation.triggered:
            self.generation.succeed(now)
        if device.trace is not None:
            device.trace.span(stream.id, self.name, now, 0.0, "event")
        yield from ()     # instantaneous


@dataclass(slots=True)
class WaitTask(Task):
    """A stream wait: blocks its stream until the generation of the event it bound when enqueued
    (the most recent record issued before it, else the next one) has triggered."""

    event: Event
    generation: simpy.Event | None = None     # bound by enqueued()
    busy: ClassVar[bool] = False

    def enqueued(self) -> None:
        self.generation = self.event.wait_target()

    def run(self, device: Device, stream: Stream) -> Generator:
        env = device.env
        t0 = env.now
        if not self.generation.processed:
            stream.blocked_on = self.event
            yield self.generation
            stream.blocked_on = None
        if device.trace is not None:
            device.trace.span(stream.id, self.name, t0, env.now - t0, "event")
            if self.event.flow_src is not None:
                device.trace.flow(self.name, self.event.flow_src, (stream.id, env.now))


@dataclass(slots=True)
class LabelSwitchTask(Task):
    """The device's own branch (Ascend's LabelSwitchByIndex at a device loop's head): when its stream
    reaches it, it reads the predicate byte at device address ``pred`` (``host_pred``: that byte's host
    view; None without backing, or when the branch is already known, a replay) and the stream goes on
    with the loop's body if it is nonzero, past the loop otherwise (``taken``). It holds its stream for
    LABEL_SWITCH_S (device/cost.py) and nothing else."""

    pred: int
    host_pred: np.ndarray | None
    taken: bool | None = None

    def buffers(self) -> Sequence[int]:
        return (self.pred,)

    def run(self, device: Device, stream: Stream) -> Generator:
        env = device.env
        t0 = env.now
        if self.host_pred is not None:
            self.taken = bool(self.host_pred[0])
        yield env.timeout(LABEL_SWITCH_S)
        if device.trace is not None:
            device.trace.span(stream.id, self.name, t0, LABEL_SWITCH_S, "control", {"taken": self.taken})


@dataclass(slots=True)
class LabelGotoTask(Task):
    """The jump back to a device loop's head at the end of its body (Ascend's LabelGotoEx): it holds its
    stream for LABEL_GOTO_S (device/cost.py)."""

    def run(self, device: Device, stream: Stream) -> Generator:
        t0 = device.env.now
        yield device.env.timeout(LABEL_GOTO_S)
        if device.trace is not None:
            device.trace.span(stream.id, self.name, t0, LABEL_GOTO_S, "control")


@dataclass(slots=True)
class TimedTask(Task):
    """Work whose duration is given rather than modelled: a task of a recorded profile, replayed, or one of
    a sunk loop's per-iteration tasks, priced by its kind (``cost.LoopSinkTask.time``). It holds its stream
    for ``duration`` simulated seconds and nothing else (no AI core, engine or memory: a recorded duration
    already contains whatever the task waited for on the real chip; a loop task's kernel is one block)."""

    duration: float
    category: str = "recorded"          # its trace spans' category

    def run(self, device: Device, stream: Stream) -> Generator:
        t0 = device.env.now
        yield device.env.timeout(self.duration)
        if device.trace is not None:
            device.trace.span(stream.id, self.name, t0, self.duration, self.category)


@dataclass(slots=True)
class CollectiveTask(Task):
    """A collective (:mod:`.collectives`) on a stream. It starts when its stream reaches it and, after
    the process's previous collective has finished (``after``: collectives run in host issue order
    whatever stream they are on), exchanges its arrival time and data with the other ranks through the
    communicator's fabric. It ends for every rank at the same simulated instant, the latest arrival
    plus the modelled duration, so a rank that arrives late stalls the others (the trace shows the wait
    as its own span), and writes its result into the receive buffer then, as a kernel writes at its end."""

    kind: Collective
    comm: Communicator
    count: int
    dtype: str
    send: np.ndarray | None          # checked views of the buffers (None: no buffer, or no backing)
    recv: np.ndarray | None
    chain: CollectiveChain                # the process's chain of collectives (its node's)
    done: simpy.Event                     # triggered when this collective has ended (or failed)
    after: simpy.Event | None = None      # the previous collective's ``done``; bound by enqueued()
    # told (task, communicator header, this rank's arrival, every rank's arrival by communicator rank,
    # seconds) once the ranks have exchanged their arrivals: a trace recorder keeps what it waited for
    observe: Callable[["CollectiveTask", tuple, float, dict, float], None] | None = None

    def enqueued(self) -> None:
        self.after = self.chain.last
        self.chain.last = self.done

    def dropped(self) -> None:
        """A dropped collective counts as ended: the process's later collectives (on other devices too)
        do not wait for it forever."""
        if not self.done.triggered:
            self.done.succeed()

    def run(self, device: Device, stream: Stream) -> Generator:
        env, comm, kind = device.env, self.comm, self.kind
        try:
            if self.after is not None and not self.after.processed:
                yield self.after
            arrival = env.now
            dtype = np.dtype(self.dtype)
            data = None if self.send is None else self.send.view(dtype)
            if not comm.fabric.carries_data and comm.size > 1:
                data = None
            peers = kind.peers(comm)
            header = comm.header(peers, 0)
            ex = Exchange(comm, peers, f"{kind.label()} #{header[1]} on communicator {comm.name!r}", arrival)
            try:
                result = kind.perform(ex, data, self.count, dtype)
            except ValueError:           # pieces of other sizes: the ranks passed different counts or types
                raise HcclParamError(f"{ex.what}: the data of the ranks do not fit together; every rank must pass "
                                     f"the same count ({self.count}) and data type ({self.dtype})") from None
            finally:
                comm.next_collective(peers)
            start = max(ex.arrivals.values())
            seconds = kind.seconds(comm, self.count, dtype.itemsize, comm.gamma(self.dtype))
            if self.observe is not None:
                self.observe(self, header, arrival, ex.arrivals, seconds)
            if start + seconds > env.now:
                yield env.timeout(start + seconds - env.now)
            if result is not None and self.recv is not None:
                out = self.recv.view(dtype)
                if result.size != out.size:
                    raise HcclParamError(f"{ex.what}: {result.size} element(s) arrived for a receive buffer of "
                                         f"{out.size}; every rank must pass the same count and data type")
                out[:] = result
            if device.trace is not None:
                late = [comm.ranks[i] for i, t in ex.arrivals.items() if t == start and t > arrival]
                if start > arrival:
                    device.trace.span(stream.id, f"{kind.name} wait", arrival, start - arrival, "collective",
                                      {"waiting for rank(s)": late})
                device.trace.span(stream.id, kind.label(), start, seconds, "collective",
                                  {"communicator": comm.name, "ranks": comm.size, "count": self.count,
                                   "dtype": self.dtype, "algorithm": comm.algorithm.describe()})
        finally:
            if not self.done.triggered:
                self.done.succeed()
