"""The operator library: what the graph compiler, the kernel cache and DryRun ask of an op signature.

Three steps, in order of cost:

* :func:`infer_outputs` validates a signature and returns its output descs (the op's ``infer`` rule);
* :func:`plan_kernel` adds the launch plan (block_dim, argument layout, workspaces, cost): pure Python,
  so DryRun and warm starts get everything a launch needs without numba;
* :func:`generate` emits the kernel's source and compiles it with numba into a Python-callable
  function under the uniform kernel ABI ``(args, block_idx, block_dim) -> None`` (cache misses only).

A kernel bakes the signature's shapes, strides and attributes in as compile-time constants, or, for
an op with ``runtime_tiling`` (a dynamic-shape kernel, :class:`KernelFamily`), reads the runtime ones
from its tiling data, so signatures that differ only there share one compiled kernel. Every kernel
splits its work over ``block_dim`` blocks (block ``b`` touches only its own share of the outputs and
of the workspace) and calls no allocator, so the compiled object needs no runtime beyond libm.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

from ascendemu.device.cost import KernelCost
from ascendemu.errors import InvalidParamError
from ascendemu.hal.kernel import DYNAMIC, ArgSpec, KernelFunction

from .opdef import Plan
from .ops import src
from .registry import REGISTRY, SUPPORTED_OPS, get_op
from .signature import OpSignature, TensorDesc, attrs_from_json

__all__ = ["KERNEL_ERROR_MODEL", "FUNC_NAMES", "SUPPORTED_OPS", "KernelFamily", "KernelPlan", "KernelSource",
           "infer_outputs", "plan_kernel", "generate", "dry_run_function", "compile_inprocess", "kernel_signature"]

KERNEL_ERROR_MODEL = src.KERNEL_ERROR_MODEL

# Kernel function names as MindSpore's .info spells them (op_info "func_name"), by op.
FUNC_NAMES: dict[str, str] = {name: op.func_name for name, op in REGISTRY.items()}


def _structure(value: Any) -> Any:
    """The nesting of a runtime tiling fact: None for an int, a tuple of its items' for a tuple."""
    return None if isinstance(value, int) else tuple(_structure(v) for v in value)


def _leaves(value: Any) -> tuple:
    """The items of a nested tuple, flat, in order (a value that is no tuple is its own leaf)."""
    return tuple(x for v in value for x in _leaves(v)) if isinstance(value, tuple) else (value,)


def _stand_in(name: str, structure: Any) -> Any:
    """The runtime fact ``name`` of this nesting as the kernel's local names (``t_dims_0``, ...)."""
    if structure is None:
        return src.RuntimeInt(name)
    return tuple(_stand_in(f"{name}_{i}", s) for i, s in enumerate(structure))


@dataclass(frozen=True)
class KernelFamily:
    """What a dynamic-shape kernel is compiled from: its op, dtypes, workspace count and static tiling
    facts (sorted by name), and the facts its tiling data carries, in order, each with its nesting (an
    int, or a tuple of a fixed length such as a loop's dims: the length is compiled in, the values are
    not). Signatures with equal families share one compiled kernel and one kernel_meta entry."""

    op: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    workspaces: int
    static: tuple[tuple[str, Any], ...]
    runtime: tuple[tuple[str, Any], ...]

    def signature(self) -> tuple[OpSignature, tuple[TensorDesc, ...]]:
        """The signature and outputs ``emit`` sees: dtypes only (no shapes, no attributes), so a
        generator that reads anything else from them writes a visibly wrong kernel, not one that is
        right for one signature of the family only."""
        return (OpSignature(self.op, tuple(TensorDesc((), t) for t in self.inputs)),
                tuple(TensorDesc((), t) for t in self.outputs))

    def stand_ins(self) -> dict[str, Any]:
        """Each runtime fact as the kernel's local name(s) for it (:class:`~.ops.src.RuntimeInt`)."""
        return {name: _stand_in(f"t_{name}", structure) for name, structure in self.runtime}

    def names(self) -> tuple[str, ...]:
        """The kernel's local names of its tiling data's int64 values, in order."""
        return tuple(str(x) for x in _leaves(tuple(self.stand_ins().values())))

    def launch_facts(self) -> dict:
        """The ``.json`` facts of a dynamic-shape kernel: what its tiling decides per launch is ``DYNAMIC``;
        its tiling data is 8 bytes per runtime value (opParaSize)."""
        roles = ["in"] * len(self.inputs) + ["out"] * len(self.outputs) + ["workspace"] * self.workspaces
        return {"blockDim": DYNAMIC, "args": [{"nbytes": DYNAMIC, "role": r} for r in roles],
                "parameters": [0] * len(roles),
                "workspace": {"num": self.workspaces, "size": [DYNAMIC] * self.workspaces},
                "cost": {}, "opParaSize": 8 * len(self.names())}

    def plan(self) -> Plan:
        """The plan ``emit`` sees: static facts as values, runtime facts as the names the kernel binds
        them to (``src.with_tiling``), block_dim as the ABI's run-time argument."""
        tiling = {**dict(self.static), **self.stand_ins()}
        return Plan(src.RuntimeInt("block_dim"), KernelCost(),
                    (src.RuntimeInt("workspace_bytes"),) * self.workspaces, tiling)


@dataclass(frozen=True)
class KernelPlan:
    """One signature's kernel as a launch sees it: outputs, blocks, arguments, workspaces, cost.

    Computed once per signature (shape inference is not repeated when ``outputs`` are known) and
    carried: the kernel cache names and checks entries from it, DryRun launches it as is.
    """

    sig: OpSignature
    outputs: tuple[TensorDesc, ...]
    plan: Plan

    @property
    def func_name(self) -> str:
        return REGISTRY[self.sig.op].func_name

    @property
    def block_dim(self) -> int:
        return self.plan.block_dim

    @property
    def op_info(self) -> dict:
        """What the kernel computes, as traces and profilers show it: its op and tensors (no attributes)."""
        return {"type": self.sig.op, "inputs": [d.to_json() for d in self.sig.inputs],
                "outputs": [d.to_json() for d in self.outputs]}

    @property
    def cost(self) -> KernelCost:
        return self.plan.cost

    @property
    def workspace_sizes(self) -> tuple[int, ...]:
        return self.plan.workspace_sizes

    @property
    def args(self) -> tuple[ArgSpec, ...]:
        """Inputs, outputs, workspaces. Every kernel initialises its own accumulators, so no argument
        needs zeroing before launch, except a status word (a checking kernel's last workspace), which
        the kernel writes only on a fault."""
        sizes = self.plan.workspace_sizes
        status = len(sizes) - 1 if self.plan.fault is not None else -1
        return (tuple(ArgSpec(d.nbytes, "in") for d in self.sig.inputs)
                + tuple(ArgSpec(d.nbytes, "out") for d in self.outputs)
                + tuple(ArgSpec(size, "workspace", True, self.plan.fault) if i == status else ArgSpec(size, "workspace")
                        for i, size in enumerate(sizes)))

    @property
    def empty(self) -> bool:
        """All outputs are empty: the kernel has nothing to compute."""
        return all(d.size == 0 for d in self.outputs)

    def identity(self, **more: Any) -> dict:
        """What names this kernel in a trace (``hal.record``): its signature and inferred outputs as JSON
        data, from which a replay plans it again (``from_identity``), plus ``more`` (the kernel cache
        adds the kernel_meta name and the entry's ``.json``)."""
        return {"signature": self.sig.to_json(), "outputs": [d.to_json() for d in self.outputs], **more}

    @classmethod
    def from_identity(cls, identity: dict) -> "KernelPlan":
        """The plan of a kernel a trace names by :meth:`identity` (its signature planned again)."""
        s = identity["signature"]
        sig = OpSignature(s["op"], tuple(TensorDesc(tuple(d["shape"]), d["dtype"]) for d in s["inputs"]),
                          attrs_from_json(s["attrs"]))
        return plan_kernel(sig, tuple(TensorDesc(tuple(d["shape"]), d["dtype"]) for d in identity["outputs"]))

    @functools.cached_property
    def family(self) -> KernelFamily | None:
        """The dynamic-shape kernel this signature runs on, or None (a kernel of its own)."""
        runtime = REGISTRY[self.sig.op].runtime_tiling
        if not runtime or self.empty:
            return None
        tiling = self.plan.tiling
        static = tuple(sorted((k, v) for k, v in tiling.items() if k not in runtime))
        return KernelFamily(self.sig.op, tuple(d.dtype for d in self.sig.inputs), tuple(d.dtype for d in self.outputs),
                            len(self.plan.workspace_sizes), static,
                            tuple((name, _structure(tiling[name])) for name in runtime))

    @functools.cached_property
    def tiling_data(self) -> tuple[int, ...]:
        """The values of a dynamic-shape kernel's runtime facts, flat, in its tiling data's order (int64 each)."""
        family = self.family
        return tuple(int(x) for name, _ in family.runtime for x in _leaves(self.plan.tiling[name])) if family else ()

    def launch_facts(self) -> dict:
        """What the kernel's ``.json`` says of its launches (and the cache checks an entry against): block
        dim, argument sizes and roles, zero flags, workspaces, cost and tiling bytes (a dynamic-shape
        kernel's: :meth:`KernelFamily.launch_facts`). The runtime takes these facts from the plan, never
        from the file."""
        if self.family is not None:
            return self.family.launch_facts()
        return {"blockDim": self.block_dim, "args": [{"nbytes": a.nbytes, "role": a.role} for a in self.args],
                "parameters": [int(a.zero_init) for a in self.args],
                "workspace": {"num": len(self.workspace_sizes), "size": list(self.workspace_sizes)},
                "cost": self.cost.to_json(), "opParaSize": 0}

    def source(self) -> str:
        """The kernel's Python source (pure Python; compiling it is :func:`generate`'s job)."""
        if self.empty:
            return src.finish(src.HEADER)
        family = self.family
        if family is None:
            return REGISTRY[self.sig.op].emit(self.sig, self.outputs, self.plan)
        sig, outputs = family.signature()
        text = REGISTRY[self.sig.op].emit(sig, outputs, family.plan())
        return src.with_tiling(text, family.names(), len(self.args))


@dataclass(frozen=True)
class KernelSource:
    """A generated kernel before native compilation: the compiled Python function plus its plan."""

    kernel: KernelPlan
    pyfunc: Callable[[Any, int, int], None]

    outputs = property(lambda self: self.kernel.outputs)
    block_dim = property(lambda self: self.kernel.block_dim)
    args = property(lambda self: self.kernel.args)
    cost = property(lambda self: self.kernel.cost)
    workspace_sizes = property(lambda self: self.kernel.workspace_sizes)
    func_name = property(lambda self: self.kernel.func_name)


def infer_outputs(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Output descs of ``sig``; raises InvalidParamError for an unknown op or a bad signature."""
    if not isinstance(sig, OpSignature):
        raise InvalidParamError(f"expected an OpSignature, got {type(sig).__name__}")
    return get_op(sig.op).infer(sig)


def plan_kernel(sig: OpSignature, outputs: tuple[TensorDesc, ...] | None = None) -> KernelPlan:
    """The launch plan of ``sig``'s kernel; pass ``outputs`` when they are already inferred."""
    if outputs is None:
        outputs = infer_outputs(sig)
    if REGISTRY[sig.op].plan is None:
        raise InvalidParamError(f"{sig.op} is a collective: it runs as a communication task, not a kernel")
    if all(d.size == 0 for d in outputs):
        plan = Plan(1, KernelCost(dtype=sig.inputs[0].dtype if sig.inputs else "float32"))
    else:
        plan = REGISTRY[sig.op].plan(sig, outputs)
    return KernelPlan(sig, tuple(outputs), plan)


def generate(sig: OpSignature | KernelPlan) -> KernelSource:
    """Validate ``sig``, emit its specialised kernel and compile it to a Python function (imports numba)."""
    from .ops import nb

    kernel = sig if isinstance(sig, KernelPlan) else plan_kernel(sig)
    return KernelSource(kernel, nb.compile_source(kernel.source()))


def dry_run_function(kernel: OpSignature | KernelPlan) -> KernelFunction:
    """The kernel without native code (entry 0), for DryRun: launches are checked, memory is allocated
    and time is priced exactly as for the real kernel, but nothing is computed and nothing is compiled."""
    if not isinstance(kernel, KernelPlan):
        kernel = plan_kernel(kernel)
    return KernelFunction(name=kernel.func_name, entry=0, block_dim=kernel.block_dim, args=kernel.args,
                          cost=kernel.cost, identity=kernel.identity, op_info=kernel.op_info)


def kernel_signature():
    """The numba signature of the uniform kernel ABI: void(uint64 *args, int64 block_idx, int64 block_dim)."""
    from numba import types
    return types.void(types.CPointer(types.uint64), types.int64, types.int64)


# The dynamic-shape kernels compile_inprocess compiled in this process, by family: as in the kernel
# cache, the signatures of one family share one compiled kernel (each with its own tiling data).
_INPROCESS_FAMILIES: dict[KernelFamily, Any] = {}


def compile_inprocess(sig: OpSignature) -> KernelFunction:
    """Compile ``sig``'s kernel with numba in this process (tests, O0 debugging; no ELF involved); a
    dynamic-shape kernel once per family."""
    import numba

    kernel = plan_kernel(sig)
    cfunc = _INPROCESS_FAMILIES.get(kernel.family) if kernel.family is not None else None
    if cfunc is None:
        cfunc = numba.cfunc(kernel_signature(), error_model=KERNEL_ERROR_MODEL)(generate(kernel).pyfunc)
        if kernel.family is not None:
            _INPROCESS_FAMILIES[kernel.family] = cfunc
    return KernelFunction(name=kernel.func_name, entry=cfunc.address, block_dim=kernel.block_dim,
                          args=kernel.args, cost=kernel.cost, keepalive=cfunc, op_info=kernel.op_info,
                          tiling=kernel.tiling_data, host_blocks=kernel.plan.host_blocks)
