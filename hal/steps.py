"""Launch steps: the typed schedule the HAL enqueues, one frozen class per kind of stream work.

A *step* is one piece of work the host issues to a stream: launch a kernel (:class:`Launch`), record
an event (:class:`RecordEvent`), wait on an event (:class:`WaitEvent`), copy memory asynchronously
(:class:`MemcpyAsync`), run a collective (:class:`Communicate`). A step is data, and knows one thing:
``issue(rt)``, issuing itself as the equivalent single public runtime call (``rt.launch_kernel(...)``,
``rt.record_event(...)``, ...), through the choke point and with that call's host cost.

The runtime turns a step into a validated device task (:mod:`ascendemu.device.tasks`) for its stream,
without enqueuing anything, in ``Runtime.step_task(step)``: each kind's builder lives in the chapter
that owns it (``Runtime.STEP_TASKS``). ``Runtime.launch_graph(steps)`` validates a whole schedule this
way before it enqueues any of it, and the single calls validate through the same builders, so each
kind is validated in exactly one place. Calls go one way: the steps call the runtime's public calls
(and ``step_task``), the runtime never calls back into a step, and this module imports no chapter.

Why typed steps: an O2 graph is sunk in one launch, and its schedule used to be tuples tagged with a
kind string that the runtime dispatched on. Steps name their fields, are checked where they are built,
and a new kind is one new class here, its task builder in its chapter and one row in ``STEP_TASKS``.
They are frozen (a schedule can be built once and launched every training step) and slotted (a step
is built per launch on the hot path).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ascendemu.device.collectives import (AllGather, AllReduce, AllToAll, Barrier, Broadcast, Collective, Recv,
                                          ReduceScatter, Send)
from ascendemu.device.cost import LoopSinkTask

from .codes import HCCL_DATA_TYPES, MEMCPY_DEVICE_TO_DEVICE

if TYPE_CHECKING:
    from .kernel import KernelFunction

# The runtime a step is issued on (a hal.runtime.Runtime; not imported: the runtime imports the steps).
Runtime = Any

__all__ = ["Communicate", "LabelGoto", "Launch", "LoopTask", "MemcpyAsync", "RecordEvent", "Step", "WaitEvent"]


class Step:
    """Base of every step (see the module docstring for the protocol)."""

    __slots__ = ()

    def issue(self, rt: Runtime) -> None:
        """Issue this step as the equivalent single runtime call."""
        raise NotImplementedError(f"{type(self).__name__} does not define issue()")


@dataclass(frozen=True, slots=True, init=False)
class Launch(Step):
    """Launch ``kernel`` (a KernelFunction or function handle) with ``args`` (device addresses of its
    inputs, outputs, workspaces, or a packed 8-byte buffer) on ``stream``; ``block_dim`` None is the
    kernel's own. ``name``: what the launch computes, for traces and profiles (a graph's op full name,
    ``Default/fc1-Dense/MatMul-op1``, as MindSpore's profiler names a task); None: the kernel's name."""

    kernel: int | KernelFunction
    args: Sequence[int] | bytes
    stream: int | None
    block_dim: int | None = None
    name: str | None = None

    def __init__(self, kernel: int | KernelFunction, args: Sequence[int] | bytes, stream: int | None,
                 block_dim: int | None = None, name: str | None = None) -> None:
        # Same signature as the generated one, but it stores through the slot descriptors: the generated
        # frozen __init__ pays an object.__setattr__ lookup per field, and every launch_kernel builds a Launch.
        _set_kernel(self, kernel)
        _set_args(self, args)
        _set_stream(self, stream)
        _set_block_dim(self, block_dim)
        _set_name(self, name)

    def issue(self, rt: Runtime) -> None:
        rt.launch_kernel(self.kernel, self.block_dim, self.args, self.stream, self.name)


_set_kernel, _set_args, _set_stream, _set_block_dim, _set_name = (
    Launch.__dict__[f].__set__ for f in ("kernel", "args", "stream", "block_dim", "name"))


@dataclass(frozen=True, slots=True)
class RecordEvent(Step):
    """Record ``event`` on ``stream``: waits issued after it wait until the stream reaches it."""

    event: int
    stream: int | None

    def issue(self, rt: Runtime) -> None:
        rt.record_event(self.event, self.stream)


@dataclass(frozen=True, slots=True)
class WaitEvent(Step):
    """Make ``stream`` wait for the most recent record of ``event`` issued before this step (or, if
    there is none, for the next one)."""

    event: int
    stream: int | None

    def issue(self, rt: Runtime) -> None:
        rt.stream_wait_event(self.stream, self.event)


@dataclass(frozen=True, slots=True)
class LabelGoto(Step):
    """Jump back to a device loop's head on ``stream`` (the last task of a loop's body)."""

    stream: int | None

    def issue(self, rt: Runtime) -> None:
        rt.label_goto(self.stream)


@dataclass(frozen=True, slots=True)
class LoopTask(Step):
    """One of the tasks a sunk training loop runs every iteration on ``stream``, of kind ``task`` (a
    device/cost.py ``LOOP_SINK_TASKS`` class: StreamSwitch, StreamActive, LoopCounterAssignAdd, GetNext): it
    costs what its kind costs for the ``count`` bytes of user data it moves (GetNext: the batch it takes off
    the data queue; 0 for the others), shows in the trace under MindSpore's op name."""

    task: type[LoopSinkTask]
    stream: int | None
    count: int = 0

    def issue(self, rt: Runtime) -> None:
        rt.loop_task(self.task, self.stream, self.count)


@dataclass(frozen=True, slots=True)
class MemcpyAsync(Step):
    """Copy ``count`` bytes from ``src`` to ``dst`` (capacity ``dest_max``) on ``stream``; ``kind`` is a
    MEMCPY_* constant. Host buffers are read or written when the copy runs on the device."""

    dst: Any
    dest_max: int
    src: Any
    count: int
    kind: int
    stream: int | None

    def issue(self, rt: Runtime) -> None:
        rt.memcpy_async(self.dst, self.dest_max, self.src, self.count, self.kind, self.stream)


@dataclass(frozen=True, slots=True)
class Communicate(Step):
    """Run collective ``kind`` (:mod:`ascendemu.device.collectives`, carrying its reduce op, root or peer)
    of ``count`` elements of HCCL data type ``dtype`` in communicator ``comm`` on ``stream``: read
    ``send``, write ``recv`` (device addresses; None where the kind has no such buffer)."""

    kind: Collective
    send: int | None
    recv: int | None
    count: int
    dtype: int
    comm: int
    stream: int | None

    def issue(self, rt: Runtime) -> None:
        _ISSUE[type(self.kind)](rt, self)


def _issue_broadcast(rt: Runtime, s: Communicate) -> None:
    """HcclBroadcast works in place: a step from one buffer to another copies the input over first. The
    broadcast is validated before the copy is issued, so a refused step enqueues nothing."""
    if s.send != s.recv:
        rt.step_task(s)
        n = s.count * np.dtype(HCCL_DATA_TYPES[s.dtype]).itemsize
        rt.memcpy_async(s.recv, n, s.send, n, MEMCPY_DEVICE_TO_DEVICE, s.stream)
    rt.broadcast(s.recv, s.count, s.dtype, s.kind.root, s.comm, s.stream)


# each kind issued as its HCCL-shaped runtime call (hal/hccl.py)
_ISSUE = {
    AllReduce: lambda rt, s: rt.all_reduce(s.send, s.recv, s.count, s.dtype, int(s.kind.op), s.comm, s.stream),
    AllGather: lambda rt, s: rt.all_gather(s.send, s.recv, s.count, s.dtype, s.comm, s.stream),
    ReduceScatter: lambda rt, s: rt.reduce_scatter(s.send, s.recv, s.count, s.dtype, int(s.kind.op), s.comm, s.stream),
    Broadcast: lambda rt, s: _issue_broadcast(rt, s),
    AllToAll: lambda rt, s: rt.alltoall(s.send, s.recv, s.count, s.dtype, s.comm, s.stream),
    Send: lambda rt, s: rt.send(s.send, s.count, s.dtype, s.kind.peer, s.comm, s.stream),
    Recv: lambda rt, s: rt.recv(s.recv, s.count, s.dtype, s.kind.peer, s.comm, s.stream),
    Barrier: lambda rt, s: rt.barrier(s.comm, s.stream),
}
