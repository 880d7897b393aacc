"""What an op of the kernel library is: one :class:`OpDef` record, defined once in its family module.

An op is one stanza (like a JAX primitive): its name and kernel function name, shape and dtype
inference (``infer``), the launch plan of its kernel (``plan``: block_dim, workspaces, cost, tiling
facts; pure Python), the kernel's numba source (``emit``: Python source text, compiled only on a
cache miss), and the slots later features fill: the fusion lowering of elementwise ops
(``elementwise``), the backward rule (``grad``) and the front-end names (``frontend``).

``infer``, ``plan`` and ``emit`` never import numba: a DryRun prices and plans memory from ``plan``
alone, and a warm start needs nothing but ``infer`` and ``plan``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from ascendemu.device.collectives import Collective
from ascendemu.device.cost import KernelCost

from .signature import OpSignature, TensorDesc

__all__ = ["Plan", "Elementwise", "Exposure", "Communication", "OpDef", "Infer", "PlanFn", "Emit", "GradBuilder", "GradCall", "Grad"]


@dataclass(frozen=True)
class Plan:
    """How one signature's kernel launches: blocks, workspace sizes (bytes), total work, and the
    tiling facts ``emit`` writes into the source (so they are computed once, here): as literals, or,
    for the op's ``runtime_tiling`` facts, as reads of the kernel's tiling data."""

    block_dim: int
    cost: KernelCost
    workspace_sizes: tuple[int, ...] = ()
    tiling: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # the kernel's outputs do not depend on its block count (it splits its work by the run-time block_dim,
    # each block using its own workspace share): the host may compute it as fewer, larger blocks
    host_blocks: bool = False
    # A kernel that checks its inputs: its last workspace is its status word (``device.kernel_status``,
    # STATUS_BYTES, zeroed before each launch) and this words a fault it reports, as MindSpore does
    fault: Callable[[Sequence[int]], str] | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class Elementwise:
    """The scalar lowering of an elementwise op, used by its own kernel and by fused programs.

    ``float_expr``/``int_expr`` are source templates over operand names ``{0}``, ``{1}``: float32
    registers, or int64 registers for int32 tensors (None: the op has no int form).
    """

    arity: int
    float_expr: str
    int_expr: str | None = None


@dataclass(frozen=True)
class Exposure:
    """Front-end names of an op: ``mindspore.ops`` primitive classes and functional names.

    ``generated``: the front end makes the classes and functions itself (elementwise ops whose only
    arguments are their operands); otherwise they are written by hand in ``ascendemu.frontend.ops``
    and a test checks that every name listed here exists there.
    """

    primitives: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    generated: bool = False


class GradBuilder(Protocol):
    """What a backward rule may do: emit ops into the backward graph and read value descs.

    Values are opaque handles (the graph's value ids). Implemented by ``ascendemu.graph.autodiff``;
    rules live with their ops here, in the kernels layer, and never import the graph.
    """

    def op(self, name: str, *inputs: int, **attrs: Any) -> int:
        """Apply op ``name``; its first output (shape and dtype inferred, the op validated)."""

    def ops(self, name: str, *inputs: int, **attrs: Any) -> tuple[int, ...]:
        """Apply op ``name``; all its outputs."""

    def desc(self, value: int) -> TensorDesc:
        """Shape and dtype of a value."""

    def scalar(self, value: float, dtype: str) -> int:
        """A 0-d literal constant."""

    def constant(self, value: Any, dtype: str) -> int:
        """A literal constant tensor (an array known when the rule runs, e.g. TopK's row offsets)."""

    def sum_to(self, value: int, shape: tuple[int, ...]) -> int:
        """Reduce a broadcast gradient back to ``shape`` (sum over the broadcast axes, then reshape)."""

    def broadcast(self, value: int, shape: tuple[int, ...]) -> int:
        """``value`` broadcast to ``shape`` (numpy rules) as a tensor of its own."""


@dataclass(frozen=True)
class GradCall:
    """One forward application a backward rule differentiates: its signature (input descs and
    attrs), the handles of its inputs and outputs, the gradient flowing into each output (None: that
    output does not reach the differentiated result) and which inputs need a gradient (a rule may
    skip the others, e.g. Conv2D's input gradient for a network's first layer)."""

    sig: OpSignature
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    douts: tuple[int | None, ...]
    wants: tuple[bool, ...]


# A backward rule: the gradient of each input (None: not differentiable, or no gradient).
Grad = Callable[[GradBuilder, GradCall], tuple["int | None", ...]]

Infer = Callable[[OpSignature], tuple[TensorDesc, ...]]
PlanFn = Callable[[OpSignature, tuple[TensorDesc, ...]], Plan]
Emit = Callable[[OpSignature, tuple[TensorDesc, ...], Plan], str]


@dataclass(frozen=True)
class Communication:
    """How a collective op runs instead of a kernel: the device collective its signature performs
    (:mod:`ascendemu.device.collectives`, carrying the reduce op) and the element count of that call
    (HCCL's ``count``). The graph compiler puts such a node on a communication stream and the executor
    lowers it to the HAL's collective step; it has no kernel, plan or source."""

    kind: Callable[[OpSignature], Collective]
    count: Callable[[OpSignature], int]


@dataclass(frozen=True)
class OpDef:
    """One op of the library. ``emit`` returns Python source defining ``kernel(args, block_idx,
    block_dim)`` under the uniform kernel ABI, specialised to the signature. A collective has no
    kernel: ``plan`` and ``emit`` are None and ``communication`` says what it runs.

    ``runtime_tiling`` makes the op's kernels dynamic-shape kernels, as Ascend's are: the named
    ``Plan.tiling`` facts (sizes, strides, pads) are not baked in but read at run time from tiling
    data after the workspaces, so one compiled kernel serves every signature whose other facts (the
    static tiling facts and the dtypes) agree. Its ``emit`` must then read everything but dtypes from
    ``plan.tiling``: it is called with a signature stripped of shapes and attributes, and the runtime
    facts as :class:`~ascendemu.kernels.ops.src.RuntimeInt` expressions."""

    name: str
    func_name: str
    infer: Infer
    plan: PlanFn | None
    emit: Emit | None
    elementwise: Elementwise | None = None
    grad: Grad | None = None              # backward rule (None: not differentiable)
    frontend: Exposure | None = None
    communication: Communication | None = None
    runtime_tiling: tuple[str, ...] = ()  # Plan.tiling facts read at run time (dynamic-shape kernels)

    @property
    def generator(self) -> str:
        """The ops module that generates this op's kernels (its sources name the kernels)."""
        return (self.emit or self.infer).__module__.rsplit(".", 1)[-1]
