"""The compiled launch schedule: one list of typed steps in issue order, across all streams.

A *step* is one piece of stream work the compiler decided: run a kernel (:class:`Run`), run a
collective (:class:`RunCollective`, on the communication stream), record an event after it
(:class:`RecordAfter`), or wait on one before it (:class:`Wait`). Streams and events are
numbered within the compiled graph; kernels are named by their node id. The executor *lowers* each
step to the HAL's step (``ascendemu.hal.steps``) through a binding that supplies stream and event
handles and the kernel's function and argument addresses: the O0/O1 executor issues the lowered
steps one by one, the O2 executor lowers the whole list once and sinks it in one ``launch_graph``.

Order: steps appear in the global execution order; each kernel's waits come right before it and
its records right after it on its own stream, so any interleaving that keeps each stream's order
is valid. A new kind of step is one class here and one in the HAL.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Callable, ClassVar, Mapping, Protocol, Sequence

from ascendemu.errors import InvalidParamError
from ascendemu.hal import steps as hal
from ascendemu.kernels.signature import OpSignature, TensorDesc, attrs_from_json

__all__ = ["Binding", "GraphKernel", "ScheduleStep", "Wait", "Run", "RunCollective", "RecordAfter", "STEP_KINDS",
           "step_from_json", "event_slots"]


@dataclass(frozen=True)
class GraphKernel:
    """One kernel launch of a compiled graph (a :class:`Run` step names it by ``node_id``): the signature
    to build or look up, which values it reads and writes, on which stream. It lives here, not in
    ``plan``, so the schedule imports nothing of the compiler that builds it."""

    node_id: int
    signature: OpSignature
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    stream: int
    full_name: str
    origins: tuple[str, ...]

    def to_json(self) -> dict:
        return {"node_id": self.node_id, "signature": self.signature.to_json(), "inputs": list(self.inputs),
                "outputs": list(self.outputs), "stream": self.stream, "full_name": self.full_name,
                "origins": list(self.origins)}

    @classmethod
    def from_json(cls, d: dict) -> "GraphKernel":
        s = d["signature"]
        sig = OpSignature.make(s["op"], [TensorDesc(tuple(i["shape"]), i["dtype"]) for i in s["inputs"]],
                               **attrs_from_json(s["attrs"]))
        return cls(d["node_id"], sig, tuple(d["inputs"]), tuple(d["outputs"]), d["stream"], d["full_name"],
                   tuple(d["origins"]))



class Binding(Protocol):
    """What lowering needs: handles of the plan's streams and events, and each kernel's launch."""

    streams: list[int]
    events: list[int]

    def launch(self, node: int, stream: int) -> hal.Launch: ...

    def communicate(self, node: int, stream: int) -> hal.Communicate: ...

    def retire(self, node: int) -> None: ...


class ScheduleStep:
    """Base of the compiled steps; ``stream`` is the plan's stream index."""

    __slots__ = ()
    kind: ClassVar[str] = ""
    stream: int

    def lower(self, binding: Binding) -> hal.Step:
        """The HAL step this step issues, with handles and addresses from ``binding``."""
        raise NotImplementedError

    def retire(self, binding: Binding) -> None:
        """After the lowered step is issued (single-op executors): release what it no longer needs."""

    def to_json(self) -> list:
        raise NotImplementedError

    def order_info(self, kernels: Mapping[int, GraphKernel]) -> tuple[str, str, str, str]:
        """This step's row of MindSpore's ``execute_order.csv``: (node_name, node_info, event_id, group)."""
        raise NotImplementedError

    def comm_order_info(self, kernels: Mapping[int, GraphKernel], values: Sequence[TensorDesc],
                        group_ranks: Callable[[str], Sequence[int]]) -> dict[str, str] | None:
        """A collective's row of ``comm_execute_order.csv`` (its columns after ``index``; ``values`` are
        the graph's value descriptions, ``group_ranks`` gives a group's world ranks); None for any other
        step. A collective step kind returns it and its ``group`` in :meth:`order_info`."""
        return None


@dataclass(frozen=True, slots=True)
class Wait(ScheduleStep):
    """``stream`` waits for ``event`` (recorded after a producer on another stream)."""

    kind: ClassVar[str] = "wait"
    stream: int
    event: int

    def lower(self, binding: Binding) -> hal.Step:
        return hal.WaitEvent(binding.events[self.event], binding.streams[self.stream])

    def to_json(self) -> list:
        return [self.kind, self.stream, self.event]

    def order_info(self, kernels: Mapping[int, GraphKernel]) -> tuple[str, str, str, str]:
        # MindSpore's multi-stream graphs order streams with StreamRecv/StreamSend nodes carrying the event
        return f"Default/StreamRecv-op{self.event}", f"StreamRecv(event {self.event})", str(self.event), ""


@dataclass(frozen=True, slots=True)
class Run(ScheduleStep):
    """Run the kernel of node ``node`` on ``stream``."""

    kind: ClassVar[str] = "kernel"
    stream: int
    node: int

    def lower(self, binding: Binding) -> hal.Step:
        return binding.launch(self.node, binding.streams[self.stream])

    def retire(self, binding: Binding) -> None:
        binding.retire(self.node)

    def to_json(self) -> list:
        return [self.kind, self.stream, self.node]

    def order_info(self, kernels: Mapping[int, GraphKernel]) -> tuple[str, str, str, str]:
        k = kernels[self.node]
        outs = ", ".join(f"%{v}" for v in k.outputs)
        return k.full_name, f"{outs} = {k.signature.op}({', '.join(f'%{v}' for v in k.inputs)})", "", ""


@dataclass(frozen=True, slots=True)
class RunCollective(Run):
    """Run the collective of node ``node`` on ``stream`` (a communication stream): a node whose op
    has no kernel but a ``communication`` (kernels/ops/comm.py). It is a Run for every check of the
    schedule (it computes its outputs in order like a kernel); it lowers to the HAL's collective step."""

    kind: ClassVar[str] = "comm"

    def lower(self, binding: Binding) -> hal.Step:
        return binding.communicate(self.node, binding.streams[self.stream])

    def order_info(self, kernels: Mapping[int, GraphKernel]) -> tuple[str, str, str, str]:
        name, info, event, _ = Run.order_info(self, kernels)
        return name, info, event, kernels[self.node].signature.attr("group")

    def comm_order_info(self, kernels: Mapping[int, GraphKernel], values: Sequence[TensorDesc],
                        group_ranks: Callable[[str], Sequence[int]]) -> dict[str, str] | None:
        # MindSpore's ExecuteOrderTracker: the group's world ranks space-separated, a root/source/destination
        # attribute as a world rank, shapes as "(2, 3)", element types by MindSpore's names, sizes in bytes
        k = kernels[self.node]
        ranks = list(group_ranks(k.signature.attr("group")))
        row = {"group": k.signature.attr("group"), "comm_rank": " ".join(map(str, ranks)),
               "primitive": k.signature.op}
        for attr in ("src_rank", "dest_rank", "root_rank"):
            rank = k.signature.attr(attr)
            row[attr] = "" if rank is None else str(ranks[rank])
        out = values[k.outputs[0]]
        for side, desc in (("input", k.signature.inputs[0] if k.signature.inputs else out), ("output", out)):
            row[f"{side}_shape"] = "(" + ", ".join(map(str, desc.shape)) + ")"
            row[f"{side}_type"] = desc.dtype.capitalize()
            row[f"{side}_size"] = str(desc.nbytes)
        return row


@dataclass(frozen=True, slots=True)
class RecordAfter(ScheduleStep):
    """Record ``event`` on ``stream`` (right after the producer a consumer on another stream waits for)."""

    kind: ClassVar[str] = "record"
    stream: int
    event: int

    def lower(self, binding: Binding) -> hal.Step:
        return hal.RecordEvent(binding.events[self.event], binding.streams[self.stream])

    def to_json(self) -> list:
        return [self.kind, self.stream, self.event]

    def order_info(self, kernels: Mapping[int, GraphKernel]) -> tuple[str, str, str, str]:
        return f"Default/StreamSend-op{self.event}", f"StreamSend(event {self.event})", str(self.event), ""


STEP_KINDS: dict[str, type[ScheduleStep]] = {cls.kind: cls for cls in (Wait, Run, RunCollective, RecordAfter)}


def step_from_json(item: list) -> ScheduleStep:
    """Inverse of ``ScheduleStep.to_json``."""
    if not isinstance(item, list) or len(item) != 3 or item[0] not in STEP_KINDS:
        raise InvalidParamError(f"schedule step {item!r} is not [kind, stream, operand] with kind one of "
                                f"{tuple(STEP_KINDS)}")
    kind, stream, operand = item
    return STEP_KINDS[kind](stream, operand)


def event_slots(schedule: Sequence[ScheduleStep]) -> list[int]:
    """The device event each of the schedule's events (cross-stream edges) uses, by edge: an event is
    busy from its RecordAfter to its Wait in issue order, then free for a later edge. A wait binds the most
    recent record issued before it, so re-recording an event after its wait was issued never changes
    what that wait waits for; a large multi-stream graph (BERT-large: thousands of edges) thus needs
    as many device events as edges in flight at once, within the device's limit (1024 on the 910A)."""
    slot_of: dict[int, int] = {}
    free: list[int] = []
    used = 0
    for step in schedule:
        if isinstance(step, RecordAfter):
            if free:
                slot_of[step.event] = heapq.heappop(free)
            else:
                slot_of[step.event], used = used, used + 1
        elif isinstance(step, Wait):
            heapq.heappush(free, slot_of[step.event])
    return [slot_of[e] for e in range(len(slot_of))]
