"""Runtime chapter "kernels" (rtDevBinaryRegister, rtFunctionRegister, rtKernelLaunch, graph launch).

A *binary* is a loaded, verified kernel object; a *function* handle names one launchable
:class:`~.kernel.KernelFunction`. A launch is validated once, in :meth:`LaunchMixin._kernel_task`
(function, blockDim, argument count, every device address against the live allocations), into a
device :class:`~ascendemu.device.tasks.KernelTask`. ``launch_kernel`` enqueues one such task (a
:class:`~.steps.Launch` step is validated the same way, :meth:`_launch_step_task`); ``launch_graph`` sinks a whole typed schedule (:mod:`.steps`) for one
host cost, validating every step before enqueuing any.
One of the mixins composed into :class:`ascendemu.hal.runtime.Runtime`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ascendemu.device.tasks import KernelTask
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, KernelLookupError, RtParamInvalidError

from .api import api
from .kernel import KernelFunction
from .steps import Launch, Step

if TYPE_CHECKING:
    from ascendemu.device.model import Device, Stream
    from ascendemu.device.system import Node

__all__ = ["Binary", "LaunchMixin"]


@dataclass
class Binary:
    """A loaded kernel binary: its functions by kernel name."""

    handle: int
    path: str
    functions: dict[str, KernelFunction] = field(default_factory=dict)


class LaunchMixin:
    """Kernel binaries, function handles and launches of the runtime."""

    node: Node | None
    binaries: dict[int, Binary]
    functions: dict[int, KernelFunction]

    def _reset_launch(self) -> None:
        self.binaries = {}
        self.functions = {}

    # -- binaries and functions ---------------------------------------------------------------------
    @api()
    def load_binary(self, path: str | Path, magic: int | None = None) -> int:
        """Load a kernel binary from its ``.o`` or ``.json`` (the three files side by side), like
        ``rtDevBinaryRegister``: the magic must be RT_DEV_BINARY_MAGIC_ELF, the one Ascend910A kernels use,
        and the files are verified (magic string, sha256, ELF header and symbols, host CPU) before linking."""
        from .binary import RT_DEV_BINARY_MAGIC_ELF, read_binary
        from .loader import load_binary          # llvmlite: imported only when a binary is loaded
        if magic is not None and magic != RT_DEV_BINARY_MAGIC_ELF:
            raise FeatureNotSupportedError(f"binary magic {magic:#x} is not supported: Ascend910A kernels are "
                                           f"RT_DEV_BINARY_MAGIC_ELF ({RT_DEV_BINARY_MAGIC_ELF:#x})")
        p = Path(path)
        if p.suffix in (".json", ".o", ".info"):
            p = p.with_suffix("")
        kb = read_binary(p.parent, p.name)
        func = load_binary(kb)
        h = self._handle()
        self.binaries[h] = Binary(h, str(p), {kb.json["kernelName"]: func})
        return h

    @api()
    def register_function(self, func: KernelFunction) -> int:
        """Register an in-process kernel (e.g. a numba cfunc under the uniform ABI) and return its handle."""
        h = self._handle()
        self.functions[h] = func
        return h

    @api()
    def unload_binary(self, binary: int) -> None:
        if binary not in self.binaries:
            raise RtParamInvalidError(f"binary handle {binary!r} is not loaded")
        del self.binaries[binary]

    @api()
    def get_function(self, binary: int, name: str) -> int:
        b = self.binaries.get(binary)
        if b is None:
            raise RtParamInvalidError(f"binary handle {binary!r} is not loaded; load_binary() first")
        func = b.functions.get(name)
        if func is None:
            raise KernelLookupError(f"kernel {name!r} is not in binary {b.path}; it has {sorted(b.functions)}")
        h = self._handle()
        self.functions[h] = func
        return h

    def _function(self, func: int | KernelFunction) -> KernelFunction:
        if isinstance(func, KernelFunction):
            return func
        f = self.functions.get(func)        # an int handle: the layer in .validate checked its type
        if f is None:
            raise KernelLookupError(f"function handle {func!r} is unknown; get_function() or register_function() first")
        return f

    # -- launches -------------------------------------------------------------------------------------
    def _kernel_task(self, func: int | KernelFunction, block_dim: int | None, args: Sequence[int] | bytes,
                     dev: Device, name: str | None = None) -> KernelTask:
        """The one validation of a kernel launch on ``dev`` against the runtime's state (the function, its
        blockDim and argument count, every address against the live allocations); the arguments' types
        and ranges were checked at the choke point (:mod:`.validate`). ``block_dim`` None means the
        kernel's own; ``name`` the task's name in traces (an op's full name), None the kernel's."""
        f = self._function(func)
        if block_dim is None:
            block_dim = f.block_dim
        elif block_dim != f.block_dim:
            raise InvalidParamError(f"kernel {f.name!r} was built for blockDim {f.block_dim}, "
                                    f"launched with {block_dim}")
        if isinstance(args, (bytes, bytearray)):
            if len(args) % 8:
                raise InvalidParamError(f"args buffer must hold 8-byte addresses; {len(args)} bytes is not a multiple of 8")
            args = struct.unpack(f"<{len(args) // 8}Q", args)
        args = tuple(args)
        if len(args) != len(f.args):
            raise InvalidParamError(f"kernel {f.name!r} takes {len(f.args)} arguments "
                                    f"(inputs, outputs, workspaces), got {len(args)}")
        host_address = dev.memory.host_address
        try:
            host_args = tuple([host_address(a, spec.nbytes) for a, spec in zip(args, f.args)]) + f.tiling_args
        except InvalidParamError:    # check again one by one, to name the bad argument
            for i, (a, spec) in enumerate(zip(args, f.args)):
                host_address(a, spec.nbytes, f"argument {i} ({spec.role}) of kernel {f.name!r}")
            raise
        task = KernelTask(f.name if name is None else name, self.node.host_time, f, block_dim, args, host_args)
        if self.node.trace is not None:      # the launch call being dispatched: its kernel's flow arrow starts there
            task.launch = self.node.trace.current_call
        if self.node.strict:
            task.reads = [(a, a + spec.nbytes) for a, spec in zip(args, f.args) if not spec.writes]
            task.writes = [(a, a + spec.nbytes) for a, spec in zip(args, f.args) if spec.writes]
        return task

    @api(cost="launch_overhead_s")
    def launch_kernel(self, func: int | KernelFunction, block_dim: int | None, args: Sequence[int] | bytes,
                      stream: int | None = None, name: str | None = None) -> None:
        """Enqueue a kernel: ``args`` are device addresses (inputs, outputs, workspaces) or a packed buffer.
        ``block_dim`` must be the one the kernel was built for (None: take it from the kernel). ``name``:
        the launch's name in traces and profiles (a graph op's full name), None the kernel's."""
        s = self._stream(stream)
        self._submit(s, self._kernel_task(func, block_dim, args, s.device, name))

    def _launch_step_task(self, step: Launch) -> tuple[Stream, KernelTask]:
        """A :class:`~.steps.Launch` step as its stream and validated kernel task."""
        s = self._stream(step.stream)
        return s, self._kernel_task(step.kernel, step.block_dim, step.args, s.device, step.name)

    @api(cost="graph_launch_overhead_s")
    def launch_graph(self, steps: Sequence[Step]) -> None:
        """Sink a whole schedule in one launch (O2): no per-kernel host cost.

        ``steps`` are :mod:`ascendemu.hal.steps` objects (Launch, RecordEvent, WaitEvent, MemcpyAsync),
        in issue order (the layer in :mod:`.validate` checked that each is one and its fields' types).
        Every step is validated before anything is enqueued, so a bad step leaves the streams and events
        untouched; once validated, the whole graph is enqueued (a full stream that only the graph's own
        later steps could release takes the rest beyond its queue depth, see ``_submit_sunk``), never
        part of it.
        """
        planned = [self.step_task(step) for step in steps]
        for s, task in planned:
            self._submit_sunk(s, task)
