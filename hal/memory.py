"""Runtime chapter "memory" (aclrtMalloc, aclrtMallocHost, aclrtMemcpy, aclrtMemset, ...).

Device memory is the current device's HBM (:class:`ascendemu.device.memory.DeviceMemory`: opaque,
checked addresses); host memory from ``malloc_host`` is numpy-backed and addressed from
``HOST_PTR_BASE`` so host and device pointers never collide. A copy or memset becomes a device
:class:`~ascendemu.device.tasks.CopyTask` built and validated in one place (:meth:`MemoryMixin._copy_task`,
:meth:`MemoryMixin._memset_task`): the asynchronous calls enqueue it on a user stream (memcpy_async as a
:class:`~.steps.MemcpyAsync` step), the synchronous ones on the device's internal sync stream and wait.
One of the mixins composed into :class:`ascendemu.hal.runtime.Runtime`.

``free`` follows aclrtFree: memory that queued or running tasks still use is freed once they finish
(the host waits for exactly those tasks, on the simulated clocks), so a kernel never writes into the
next owner's bytes; strict mode reports such a free at once instead. On a device without backing
(DryRun) copies and memsets are checked and take their modelled time but move no bytes: writes to the
device are dropped and the host side of a read is left as it was.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ascendemu.device.tasks import CopyTask
from ascendemu.errors import (InvalidParamError, MemoryAllocationError, MemoryFreeError, RaceError,
                              RtParamInvalidError)

from .api import api
from .codes import (MEMCPY_DEFAULT, MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE,
                    MEMCPY_HOST_TO_HOST)
from .steps import MemcpyAsync

if TYPE_CHECKING:
    from ascendemu.device.memory import DeviceMemory
    from ascendemu.device.model import Device, Stream
    from ascendemu.device.pool import PoolStats
    from ascendemu.device.system import Node

__all__ = ["HOST_PTR_BASE", "MEMCPY_DEFAULT", "MEMCPY_DEVICE_TO_DEVICE", "MEMCPY_DEVICE_TO_HOST",
           "MEMCPY_HOST_TO_DEVICE", "MEMCPY_HOST_TO_HOST", "MEM_MALLOC_HUGE_FIRST", "MEM_MALLOC_HUGE_ONLY",
           "MEM_MALLOC_NORMAL_ONLY", "HostAllocation", "MemoryMixin"]

_KIND_NAMES = {0: "H2H", 1: "H2D", 2: "D2H", 3: "D2D"}

# malloc policies (aclrtMemMallocPolicy); the emulated HBM has one page size, so all behave alike
MEM_MALLOC_HUGE_FIRST = 0
MEM_MALLOC_HUGE_ONLY = 1
MEM_MALLOC_NORMAL_ONLY = 2

HOST_PTR_BASE = 0x7E00_0000_0000


@dataclass
class HostAllocation:
    start: int
    data: np.ndarray


class MemoryMixin:
    """Device and host memory, copies and memsets of the runtime."""

    node: Node | None
    _host: dict[int, HostAllocation]
    _host_starts: list[int]
    _next_host: int

    def _reset_memory(self) -> None:
        self._host = {}
        self._host_starts = []
        self._next_host = HOST_PTR_BASE

    # -- device memory ----------------------------------------------------------------------------
    @api()
    def malloc(self, size: int, policy: int = MEM_MALLOC_HUGE_FIRST) -> int:
        dev = self._cur_device()
        addr = dev.memory.malloc(size)
        if dev.trace is not None:
            dev.trace_memory(self.node.host_time)
        return addr

    @api()
    def free(self, ptr: int) -> None:
        """Free device memory, after the unfinished tasks that use it (strict mode: raise RaceError instead).
        The tasks are waited for one by one; one may finish while the host waits for another, so each
        is looked at again before its wait. A refusal (a bad pointer, a race, a wait that can never end)
        frees nothing."""
        dev = self._cur_device()
        mem = dev.memory
        for stream, seq in mem.unfinished_users(ptr):
            if not stream.unfinished(seq):       # it finished while the host waited for an earlier user
                continue
            task = stream.task_at(seq)
            if self.node.strict:
                raise RaceError(
                    f"strict mode: free({ptr:#x}) of a {mem.sizes[ptr]}-byte buffer that task {task.name!r} on "
                    f"stream {stream.id} (device {dev.id}) has not finished using; synchronize that stream, or an "
                    "event recorded after the task, before freeing the buffer")
            self._wait(stream.finished(seq), f"free({ptr:#x}), waiting for task {task.name!r} on stream {stream.id},")
        mem.free(ptr)
        if dev.trace is not None:
            dev.trace_memory(self.node.host_time)

    @api()
    def get_mem_info(self) -> tuple[int, int]:
        """(free, total) bytes of the current device's HBM."""
        return self._cur_device().memory.get_mem_info()

    @api(cost=None)
    def mem_stats(self, device_id: int | None = None) -> PoolStats:
        dev = self._cur_device() if device_id is None else self._device(device_id)
        return dev.memory.stats()

    @api(cost=None)
    def dump_memory_snapshot(self, path: str | Path, device_id: int | None = None) -> Path:
        """Write the device pool's snapshot as a pickle for https://pytorch.org/memory_viz."""
        dev = self._cur_device() if device_id is None else self._device(device_id)
        dev.memory.pool.dump_snapshot(path)
        return Path(path)

    # -- host memory ------------------------------------------------------------------------------
    @api()
    def malloc_host(self, size: int) -> int:
        try:
            data = np.zeros(size, np.uint8)
        except (MemoryError, ValueError):      # the host refused: nothing is taken, the address stays free
            raise MemoryAllocationError(f"malloc_host({size}): the host cannot provide {size} bytes; "
                                        f"free host buffers or ask for less") from None
        start = self._next_host
        self._next_host += -(-size // 4096) * 4096 + 4096   # a guard page between buffers
        self._host[start] = HostAllocation(start, data)
        bisect.insort(self._host_starts, start)
        return start

    @api()
    def free_host(self, ptr: int) -> None:
        if ptr not in self._host:
            raise MemoryFreeError(f"free_host({ptr!r}): not a live host allocation from malloc_host "
                                  "(double free, interior pointer, or a device pointer)")
        del self._host[ptr]
        self._host_starts.remove(ptr)

    @api(cost=None)
    def host_buffer(self, ptr: int) -> np.ndarray:
        """The uint8 numpy view of host memory from malloc_host (to fill or read it)."""
        return self._host_view(ptr, None, "host pointer")

    def _host_view(self, ptr: int, nbytes: int | None, what: str) -> np.ndarray:
        i = bisect.bisect_right(self._host_starts, ptr) - 1
        alloc = self._host.get(self._host_starts[i]) if i >= 0 else None
        if alloc is None or ptr >= alloc.start + alloc.data.size:
            raise InvalidParamError(f"{what} {ptr:#x} is not inside a live malloc_host allocation")
        off = ptr - alloc.start
        n = alloc.data.size - off if nbytes is None else nbytes
        if off + n > alloc.data.size:
            raise InvalidParamError(f"{what} {ptr:#x} + {n} bytes runs past its host allocation "
                                    f"({alloc.data.size} bytes) by {off + n - alloc.data.size}")
        return alloc.data[off:off + n]

    def _host_side(self, obj: Any, count: int, what: str, writable: bool) -> np.ndarray:
        """A uint8 view of ``count`` bytes of host memory: a numpy array, bytes (read only) or a host pointer,
        already validated as one (hal.validate.DESTINATION / SOURCE)."""
        if isinstance(obj, np.ndarray):
            view = obj.reshape(-1).view(np.uint8)
            if count > view.size:
                raise InvalidParamError(f"{what} has {view.size} bytes but count is {count}")
            return view[:count]
        if isinstance(obj, int):
            return self._host_view(obj, count, what)
        view = np.frombuffer(obj, np.uint8)
        if count > view.size:
            raise InvalidParamError(f"{what} has {view.size} bytes but count is {count}")
        return view[:count]

    def _is_device_ptr(self, obj: Any) -> bool:
        if not isinstance(obj, int) or isinstance(obj, bool):     # a type test, not a validation
            return False
        return any(d.memory.pool.find(obj) is not None for d in self.node.devices)

    # -- copies and memsets -------------------------------------------------------------------------
    def _copy_task(self, dst: Any, dest_max: int, src: Any, count: int, kind: int) -> tuple[Device, CopyTask]:
        """The one validation of a copy: checked views of both sides, as a task that moves the bytes."""
        if count > dest_max:
            raise InvalidParamError(f"memcpy count {count} exceeds dest_max {dest_max}")
        if kind == MEMCPY_DEFAULT:
            kind = {(False, False): 0, (False, True): 1, (True, False): 2, (True, True): 3}[
                (self._is_device_ptr(src), self._is_device_ptr(dst))]
        dev = self._cur_device()
        mem = dev.memory
        src_dev, dst_dev = kind in (2, 3), kind in (1, 3)
        dst_view = (self._device_side(mem, dst, count, "memcpy destination") if dst_dev
                    else self._host_side(dst, count, "memcpy destination", writable=True))
        src_view = (self._device_side(mem, src, count, "memcpy source") if src_dev
                    else self._host_side(src, count, "memcpy source", writable=False))

        def move() -> None:
            # None: device memory without backing (DryRun). No byte moves either way: the host side of a
            # copy from such a device is left as it was, so a DryRun output costs no host pages.
            if dst_view is not None and src_view is not None:
                dst_view[:] = src_view
        name = f"memcpy {_KIND_NAMES[kind]} {count}B"
        task = CopyTask(name, self.node.host_time, move, count, _KIND_NAMES[kind],
                        reads=[(src, src + count)] if src_dev else [], writes=[(dst, dst + count)] if dst_dev else [])
        return dev, task

    @api()
    def memcpy(self, dst: Any, dest_max: int, src: Any, count: int, kind: int = MEMCPY_DEFAULT) -> None:
        """Synchronous copy. It does not wait for other streams: synchronize the writer first."""
        dev, task = self._copy_task(dst, dest_max, src, count, kind)
        if not (task.reads or task.writes):      # host to host: no device memory, nothing to wait for
            task.move()
            return
        if self.node.strict:
            dev.check_race(f"synchronous {task.name}", task.reads, task.writes)
        s = self._sync_stream_of(dev)
        self._submit(s, task)
        self._drain(s, what=f"synchronous {task.name}")

    @api()
    def memcpy_async(self, dst: Any, dest_max: int, src: Any, count: int, kind: int = MEMCPY_DEFAULT,
                     stream: int | None = None) -> None:
        """Asynchronous copy on ``stream``; host buffers are read/written when the copy runs."""
        self._enqueue(MemcpyAsync(dst, dest_max, src, count, kind, stream))

    def _memcpy_step_task(self, step: MemcpyAsync) -> tuple[Stream, CopyTask]:
        """A :class:`~.steps.MemcpyAsync` step as its stream and validated copy task."""
        s = self._stream(step.stream)
        dev, task = self._copy_task(step.dst, step.dest_max, step.src, step.count, step.kind)
        self._check_stream_device(s, dev, "memcpy_async")
        return s, task

    def _memset_task(self, ptr: int, max_count: int, value: int, count: int) -> tuple[Device, CopyTask]:
        """The one validation of a memset: a D2D-priced copy task whose move fills the bytes."""
        if count > max_count:
            raise InvalidParamError(f"memset count {count} exceeds max_count {max_count}")
        dev = self._cur_device()
        view = self._device_side(dev.memory, ptr, count, "memset destination")

        def fill() -> None:
            if view is not None:
                view[:] = value
        return dev, CopyTask(f"memset {count}B", self.node.host_time, fill, count, "D2D", writes=[(ptr, ptr + count)])

    @api()
    def memset(self, ptr: int, max_count: int, value: int, count: int) -> None:
        dev, task = self._memset_task(ptr, max_count, value, count)
        s = self._sync_stream_of(dev)
        self._submit(s, task)
        self._drain(s, what="synchronous memset")

    @api()
    def memset_async(self, ptr: int, max_count: int, value: int, count: int, stream: int | None = None) -> None:
        s = self._stream(stream)
        dev, task = self._memset_task(ptr, max_count, value, count)
        self._check_stream_device(s, dev, "memset_async")
        self._submit(s, task)

    @staticmethod
    def _device_side(mem: DeviceMemory, ptr: int, count: int, what: str) -> np.ndarray | None:
        """A checked uint8 view of device memory for a copy, or None on a device without backing (DryRun):
        the copy is checked and timed all the same, reads zeros and drops what it writes."""
        if mem.backed:
            return mem.view(ptr, count, what)
        mem.resolve(ptr, count, what)
        return None

    @staticmethod
    def _check_stream_device(s: Stream, dev: Device, what: str) -> None:
        """Copies and memsets work on the current device's memory: their stream must be on that device."""
        if s.device is not dev:
            raise RtParamInvalidError(f"{what}: stream {s.id} is on device {s.device.id}, but the current device "
                                      f"is {dev.id}; use a stream of device {dev.id} (or set_device first)")
