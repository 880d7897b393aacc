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
from typing import Any, Callable, Mapping

from ascendemu.device.cost import KernelCost

from .signature import OpSignature, TensorDesc

__all__ = ["Plan", "Elementwise", "Exposure", "OpDef", "Infer", "PlanFn", "Emit"]


@dataclass(frozen=True)
class Plan:
    """How one signature's kernel launches: blocks, workspace sizes (bytes), total work, and the
    tiling facts ``emit`` bakes into the source (so they are computed once, here)."""

    block_dim: int
    cost: KernelCost
    workspace_sizes: tuple[int, ...] = ()
    tiling: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)


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


Infer = Callable[[OpSignature], tuple[TensorDesc, ...]]
PlanFn = Callable[[OpSignature, tuple[TensorDesc, ...]], Plan]
Emit = Callable[[OpSignature, tuple[TensorDesc, ...], Plan], str]


@dataclass(frozen=True)
class OpDef:
    """One op of the library. ``emit`` returns Python source defining ``kernel(args, block_idx,
    block_dim)`` under the uniform kernel ABI, specialised to the signature."""

    name: str
    func_name: str
    infer: Infer
    plan: PlanFn
    emit: Emit
    elementwise: Elementwise | None = None
    grad: Callable | None = None          # backward rule: filled by the training work
    frontend: Exposure | None = None

    @property
    def generator(self) -> str:
        """The ops module that generates this op's kernels (its sources name the kernels)."""
        return self.emit.__module__.rsplit(".", 1)[-1]
