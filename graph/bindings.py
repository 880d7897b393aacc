"""A compiled graph made ready on the device (:class:`Prepared`) and the two ways its schedule is lowered
to HAL steps: :class:`StaticBinding` (O2: every address fixed, lowered once) and :class:`DynamicBinding`
(O0/O1: node outputs and workspaces from the pool around each kernel, during one run)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ascendemu.errors import HcclNotSupportedError
from ascendemu.hal import steps as hal_steps
from ascendemu.hal.hccl import HCCL_DATA_TYPES
from ascendemu.hal.kernel import KernelFunction
from ascendemu.hal.runtime import Runtime
from ascendemu.kernels.registry import communication
from ascendemu.kernels.signature import OpSignature, TensorDesc

from .memory_plan import ALIGN
from .plan import CompiledGraph, GraphKernel

__all__ = ["DataQueue", "DynamicBinding", "Prepared", "StaticBinding", "collective_step", "scratch_layout",
           "split_scratch"]


@dataclass
class DataQueue:
    """The device data queue of a graph run in dataset sink mode: ``depth`` slots of device buffers
    (graph input value -> address); ``filled[i]`` is recorded on the queue stream once a batch is in
    slot i, ``consumed[i]`` on the graph's first stream once GetNext has copied it out; ``fence``
    orders the graph's streams around each iteration."""

    slots: list[dict[int, int]]
    filled: list[int]
    consumed: list[int]
    fence: int

    @property
    def depth(self) -> int:
        return len(self.slots)


@dataclass
class Prepared:
    """A compiled graph made ready on the device: kernels loaded, streams, events, constants, memory.

    O2 (static memory) also keeps its graph inputs at fixed device buffers and its schedule lowered
    once to HAL steps (``sunk``): each run copies the inputs in and sinks ``sunk`` as is.
    """

    compiled: CompiledGraph
    kernels: dict[int, KernelFunction]                              # node id -> its kernel
    tasks: dict[int, GraphKernel]                                    # node id -> its launch
    streams: list[int]
    events: list[int]
    constants: dict[int, int] = field(default_factory=dict)         # value id -> device address
    constant_data: dict[int, int] = field(default_factory=dict)     # value id -> id() of the uploaded array
    workspace: int = 0                                              # O2 static plan base address
    scratch: dict[int, list[int]] = field(default_factory=dict)     # O2: node id -> its workspace addresses
    inputs: dict[int, int] = field(default_factory=dict)            # O2: graph input value -> device buffer
    sunk: list[hal_steps.Step] = field(default_factory=list)        # O2: the schedule lowered once
    queue: DataQueue | None = None                                  # O2 in dataset sink mode
    comms: dict[int, int] = field(default_factory=dict)             # collective node id -> communicator

    def address(self, vid: int, buffers: dict[int, int]) -> int:
        """Device address of value ``vid`` (through its alias root, plus its offset there if it is a part
        of a contiguous block): a constant, a per-run buffer, or its offset in the static workspace."""
        c = self.compiled
        r = c.root(vid)
        found = self.constants.get(r, buffers.get(r))
        return (found if found is not None else self.workspace + c.offsets[r]) + c.view_offsets.get(vid, 0)

    def collective(self, node: int, buffers: dict[int, int], stream: int) -> hal_steps.Communicate:
        """The HAL collective step of collective node ``node``: its input and output buffers."""
        task = self.tasks[node]
        send = self.address(task.inputs[0], buffers) if task.inputs else None
        return collective_step(task.signature, self.compiled.values[task.outputs[0]], send,
                               self.address(task.outputs[0], buffers), self.comms[node], stream)

    def kernel_args(self, node: int, buffers: dict[int, int], scratch: list[int]) -> list[int]:
        task = self.tasks[node]
        return ([self.address(v, buffers) for v in task.inputs] + [self.address(v, buffers) for v in task.outputs]
                + scratch)

    def lowered(self) -> list[hal_steps.Step]:
        """O2: the schedule lowered to HAL steps, once (again after an address moved: ``sunk`` emptied)."""
        if not self.sunk:
            binding = StaticBinding(self)
            self.sunk = [step.lower(binding) for step in self.compiled.schedule]
        return self.sunk


class StaticBinding:
    """Lowers an O2 schedule once: every address is fixed (workspace offsets, input buffers)."""

    def __init__(self, p: Prepared):
        self.p, self.streams, self.events = p, p.streams, p.events

    def launch(self, node: int, stream: int) -> hal_steps.Launch:
        p = self.p
        return hal_steps.Launch(p.kernels[node], p.kernel_args(node, p.inputs, p.scratch[node]), stream,
                                name=p.tasks[node].full_name)

    def communicate(self, node: int, stream: int) -> hal_steps.Communicate:
        return self.p.collective(node, self.p.inputs, stream)

    def retire(self, node: int) -> None:
        """Nothing to release: static memory lives as long as the prepared graph."""


class DynamicBinding:
    """Lowers an O0/O1 schedule step by step during one run: node outputs and kernel workspaces come
    from the pool right before their kernel and go back when their reference count drops."""

    def __init__(self, rt: Runtime, p: Prepared, buffers: dict[int, int]):
        self.rt, self.p, self.buffers = rt, p, buffers
        self.streams, self.events = p.streams, p.events
        self._scratch: list[int] = []

    def _outputs(self, node: int) -> None:
        rt, c, buffers = self.rt, self.p.compiled, self.buffers
        for v in self.p.tasks[node].outputs:
            r = c.root(v)
            # an update in place writes its parameter; a contiguous block is allocated by its first part's writer
            if r not in buffers and r not in self.p.constants:
                buffers[r] = rt.malloc(max(c.values[r].nbytes, 1))

    def communicate(self, node: int, stream: int) -> hal_steps.Communicate:
        self._outputs(node)
        return self.p.collective(node, self.buffers, stream)

    def launch(self, node: int, stream: int) -> hal_steps.Launch:
        rt, buffers = self.rt, self.buffers
        self._outputs(node)
        func = self.p.kernels[node]
        self._scratch = [rt.malloc(a.nbytes) for a in func.args if a.role == "workspace"]
        return hal_steps.Launch(func, self.p.kernel_args(node, buffers, self._scratch), stream,
                                name=self.p.tasks[node].full_name)

    def retire(self, node: int) -> None:
        for ptr in self._scratch:
            self.rt.free(ptr)
        self._scratch = []
        for v in self.p.compiled.release_after.get(node, ()):
            self.rt.free(self.buffers.pop(v))


_HCCL_DATA_TYPE = {dtype: value for value, dtype in HCCL_DATA_TYPES.items()}


def collective_step(sig: OpSignature, output: TensorDesc, send: int | None, recv: int, comm: int,
                    stream: int) -> hal_steps.Communicate:
    """The HAL step of a collective op (its registry stanza's ``communication``) between two buffers;
    its data type is its input's (its output's for Receive and Barrier, which have no input)."""
    desc = sig.inputs[0] if sig.inputs else output
    dtype = _HCCL_DATA_TYPE.get(desc.dtype)
    if dtype is None:
        raise HcclNotSupportedError(f"{sig.op}: HCCL has no {desc.dtype} collectives here; cast the "
                                    f"tensor to one of {sorted(_HCCL_DATA_TYPE)} first")
    how = communication(sig.op)
    return hal_steps.Communicate(how.kind(sig), send, recv, how.count(sig), dtype, comm, stream)


def scratch_layout(func: KernelFunction) -> tuple[list[int], int]:
    """Offsets of a kernel's workspaces packed into one scratch area (512-B aligned), and its size."""
    offsets, end = [], 0
    for a in func.args:
        if a.role == "workspace":
            offsets.append(end)
            end += -(-a.nbytes // ALIGN) * ALIGN
    return offsets, end


def split_scratch(func: KernelFunction, base: int) -> list[int]:
    """Addresses of a kernel's workspaces in its stream's scratch area (O2)."""
    return [base + o for o in scratch_layout(func)[0]]
