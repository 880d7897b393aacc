"""One loop-free part of a program (``graph.program``) run *bound to the program's buffers*.

A part is an ordinary compiled graph. Run alone, its inputs sit in buffers of its own (O2: fixed
``Prepared.inputs``) and its outputs in its workspace, so a program would copy every value into and out
of each part, loop-invariant ones on every trip. Here a part is bound instead, as Ascend binds a
subgraph's parameters to its caller's buffers:

- **inputs**: each input value is the program buffer it lives in (no copy in);
- **outputs**: each output whose root is the part's own node output is written by its kernel straight
  into the program's buffer for it (in place), unless that buffer is also one of the part's inputs (a
  loop body's carried variables: an in-place write could clobber a value a later kernel of the same trip
  still reads), so those, and outputs that alias an input or a constant or repeat an earlier output,
  are still D2D copies after the part.

O2 lowers the part's schedule with these addresses (:class:`BoundStatic`, once per binding: the runner
builds a loop's iteration once per loop entry); O0/O1 issue it kernel by kernel with the pool around
each kernel (:class:`BoundDynamic`, which never frees a program buffer).
"""
from __future__ import annotations

from ascendemu.hal import steps as hal_steps
from ascendemu.hal.runtime import MEMCPY_DEVICE_TO_DEVICE, Runtime

from .bindings import DynamicBinding, Prepared, StaticBinding
from .ir import Graph
from .prepare import GraphPreparer

__all__ = ["BoundDynamic", "BoundStatic", "PartRunner", "bind"]


def bind(p: Prepared, ins: list[int], outs: list[int]) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """The addresses of part ``p`` bound to the program's buffers: (value root -> program buffer for its
    inputs and the outputs written in place, [(program buffer, output value id)] still to copy after it)."""
    c = p.compiled
    buffers = dict(zip(c.inputs, ins))
    read = set(ins)
    copies: list[tuple[int, int]] = []
    for v, dst in zip(c.outputs, outs):
        r = c.root(v)
        if r in buffers or r in p.constants or r in c.inputs or dst in read or v in c.view_offsets:
            copies.append((dst, v))
        else:
            buffers[r] = dst
    return buffers, copies


class BoundStatic(StaticBinding):
    """An O2 schedule lowered with the program's buffers (:func:`bind`) in place of ``Prepared.inputs``."""

    def __init__(self, p: Prepared, buffers: dict[int, int]):
        super().__init__(p)
        self.buffers = buffers

    def launch(self, node: int, stream: int) -> hal_steps.Launch:
        p = self.p
        return hal_steps.Launch(p.kernels[node], p.kernel_args(node, self.buffers, p.scratch[node]), stream,
                                name=p.tasks[node].full_name)

    def communicate(self, node: int, stream: int) -> hal_steps.Communicate:
        return self.p.collective(node, self.buffers, stream)


class BoundDynamic(DynamicBinding):
    """An O0/O1 schedule issued with the program's buffers (:func:`bind`): node outputs and workspaces
    from the pool as usual, but a program buffer (``external``) is never freed by the part."""

    def __init__(self, rt: Runtime, p: Prepared, buffers: dict[int, int]):
        super().__init__(rt, p, buffers)
        self.external = set(buffers)

    def retire(self, node: int) -> None:
        for ptr in self._scratch:
            self.rt.free(ptr)
        self._scratch = []
        for v in self.p.compiled.release_after.get(node, ()):
            ptr = self.buffers.pop(v)
            if v not in self.external:
                self.rt.free(ptr)

    def release(self) -> None:
        """Free what the part still holds of its own (after its output copies)."""
        for v, ptr in self.buffers.items():
            if v not in self.external:
                self.rt.free(ptr)
        self.buffers = {}


class PartRunner:
    """Runs loop-free parts on the program's buffers and makes the program's D2D copies; counts the
    kernels of the parts it ran (``kernels``)."""

    def __init__(self, rt: Runtime, preparer: GraphPreparer):
        self.rt, self.preparer = rt, preparer
        self._fence: int | None = None
        self.kernels = 0

    def stream(self) -> int:
        """The first stream of every prepared graph: the program's copies and loop control run there."""
        return self.preparer.first_stream()

    def run(self, g: Graph, ins: list[int], outs: list[int], level: str) -> list[hal_steps.Step]:
        """Run graph ``g`` (no loops) reading the buffers ``ins`` and leaving its outputs in ``outs``: at O2
        its steps (fence, its schedule bound to the buffers, fence, the remaining output copies) for the
        caller to launch; at O0/O1 issued here kernel by kernel (nothing returned)."""
        p = self.preparer.prepare(g, level)
        self.preparer.bind_constants(p, g)
        c, s0 = p.compiled, p.streams[0]
        self.kernels += len(p.kernels)
        buffers, copies = bind(p, ins, outs)
        if c.memory == "static":
            binding = BoundStatic(p, buffers)
            steps = self._fence_steps(p, into=True) + [step.lower(binding) for step in c.schedule]
            steps += self._fence_steps(p, into=False)
            return steps + [self.copy_step(dst, p.address(v, buffers), c.values[v].nbytes, s0)
                            for dst, v in copies if c.values[v].nbytes and dst != p.address(v, buffers)]
        dynamic = BoundDynamic(self.rt, p, buffers)
        for step in c.schedule:
            step.lower(dynamic).issue(self.rt)
            step.retire(dynamic)
        for dst, v in copies:
            self.copy(dst, p.address(v, dynamic.buffers), c.values[v].nbytes, s0)
        dynamic.release()
        return []

    def copy(self, dst: int, src: int, nbytes: int, stream: int | None = None) -> None:
        if nbytes and dst != src:
            self.copy_step(dst, src, nbytes, self.stream() if stream is None else stream).issue(self.rt)

    @staticmethod
    def copy_step(dst: int, src: int, nbytes: int, stream: int) -> hal_steps.MemcpyAsync:
        return hal_steps.MemcpyAsync(dst, nbytes, src, nbytes, MEMCPY_DEVICE_TO_DEVICE, stream)

    def _fence_steps(self, p: Prepared, into: bool) -> list[hal_steps.Step]:
        """O2 with more than one stream: before a part (``into``) every stream waits for the first; after
        it the first waits for every stream, so the program's copies and the next part see the part whole."""
        first, others = p.streams[0], p.streams[1:]
        if not others:
            return []
        if self._fence is None:
            self._fence = self.rt.create_event()
        ev = self._fence
        if into:
            return [hal_steps.RecordEvent(ev, first)] + [hal_steps.WaitEvent(ev, s) for s in others]
        return [step for s in others for step in (hal_steps.RecordEvent(ev, s), hal_steps.WaitEvent(ev, first))]
