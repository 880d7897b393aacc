"""The operator library: shape inference and numba kernel generators, one specialised kernel per signature.

Two halves with different import costs:

* :func:`infer_outputs` validates a signature and returns its output descs. It is pure python (see
  ``ops/shapes.py``) because the graph compiler calls it on the warm path, which never imports numba.
* :func:`generate` builds a :class:`KernelSource`: a python function with the uniform kernel ABI
  ``(args, block_idx, block_dim) -> None`` that ``numba.cfunc(kernel_signature())`` compiles, plus
  its launch geometry, argument list and cost. numba is imported only here, lazily.

Every kernel bakes the signature's shapes, strides and attributes in as compile-time constants, splits
its work over ``block_dim`` blocks (block ``b`` touches only its own share of the outputs and of the
workspace) and calls no allocator, so the compiled object needs no runtime beyond libm.

FusedElemwise (graph-kernel fusion) takes attrs ``program``: a tuple of steps ``(op_name, operand, ...)``
where ``op_name`` is any float unary/binary elementwise op of this library (or "Cast", a no-op on the
float32 registers) and an operand is ``("in", i)`` (kernel input i, broadcast like binary ops),
``("t", j)`` (the result of an earlier step j) or ``("c", number)``; optional ``outputs``: step indices
written as outputs (default: the last step); optional ``dst_type``: output dtype(s) (default: the
inputs' common dtype). Inputs may be float32 or float16; every step computes in float32 registers.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from ascendemu.device.cost import KernelCost
from ascendemu.errors import InvalidParamError
from ascendemu.hal.kernel import ArgSpec, KernelFunction
from ascendemu.kernels.ops.shapes import INFER
from ascendemu.kernels.signature import OpSignature, TensorDesc

SUPPORTED_OPS: tuple[str, ...] = tuple(INFER)

# The generated kernels never raise (float division and int32 Div use IEEE / guarded intrinsics);
# numpy's error model also keeps numba's exception helpers out of the compiled code.
KERNEL_ERROR_MODEL = "numpy"

# Kernel function names as MindSpore's .info spells them (op_info "func_name").
FUNC_NAMES = {
    "Square": "square", "Neg": "neg", "Abs": "abs", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
    "Rsqrt": "rsqrt", "ReLU": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "GeLU": "gelu",
    "Cast": "cast", "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Maximum": "maximum",
    "Minimum": "minimum", "Pow": "pow", "BiasAdd": "bias_add", "FusedElemwise": "fused_elemwise",
    "Softmax": "softmax", "LogSoftmax": "log_softmax", "ReduceSum": "reduce_sum",
    "ReduceMean": "reduce_mean", "ReduceMax": "reduce_max", "MatMul": "mat_mul",
    "BatchMatMul": "batch_matmul", "Conv2D": "conv2d", "MaxPool": "max_pool", "AvgPool": "avg_pool",
    "BatchNorm": "batch_norm", "LayerNorm": "layer_norm", "Transpose": "transpose",
    "Concat": "concat", "Gather": "gather",
}

# op -> generator module in ascendemu.kernels.ops (imported on first use: they import numba).
GENERATORS = {
    **{op: "elementwise" for op in ("Square", "Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "ReLU",
                                    "Sigmoid", "Tanh", "GeLU", "Cast", "Add", "Sub", "Mul", "Div",
                                    "Maximum", "Minimum", "Pow", "BiasAdd", "FusedElemwise")},
    "Softmax": "norm", "LogSoftmax": "norm", "BatchNorm": "norm", "LayerNorm": "norm",
    "ReduceSum": "reduce", "ReduceMean": "reduce", "ReduceMax": "reduce",
    "MatMul": "matmul", "BatchMatMul": "matmul",
    "Conv2D": "conv", "MaxPool": "pool", "AvgPool": "pool",
    "Transpose": "misc", "Concat": "misc", "Gather": "misc",
}
assert set(FUNC_NAMES) == set(SUPPORTED_OPS) == set(GENERATORS)


@dataclass(frozen=True)
class KernelSource:
    """A generated kernel before native compilation: the function plus what a launch needs to know."""

    pyfunc: Callable[[Any, int, int], None]
    block_dim: int
    args: tuple[ArgSpec, ...]
    cost: KernelCost
    outputs: tuple[TensorDesc, ...]
    workspace_sizes: tuple[int, ...]
    func_name: str


def infer_outputs(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Output descs of ``sig``; raises InvalidParamError for an unknown op or a bad signature."""
    if not isinstance(sig, OpSignature):
        raise InvalidParamError(f"expected an OpSignature, got {type(sig).__name__}")
    infer = INFER.get(sig.op)
    if infer is None:
        raise InvalidParamError(f"op {sig.op!r} is not supported; supported ops: {', '.join(SUPPORTED_OPS)}")
    return infer(sig)


def generate(sig: OpSignature) -> KernelSource:
    """Validate ``sig`` and generate its specialised kernel (imports numba)."""
    outputs = infer_outputs(sig)
    if all(d.size == 0 for d in outputs):
        built = _empty_kernel(sig)
    else:
        module = importlib.import_module(f"ascendemu.kernels.ops.{GENERATORS[sig.op]}")
        built = module.build(sig, outputs)
    # Every kernel initialises its own accumulators, so no argument needs zeroing before launch.
    args = (tuple(ArgSpec(d.nbytes, "in") for d in sig.inputs)
            + tuple(ArgSpec(d.nbytes, "out") for d in outputs)
            + tuple(ArgSpec(size, "workspace") for size in built.workspace_sizes))
    return KernelSource(pyfunc=built.pyfunc, block_dim=built.block_dim, args=args, cost=built.cost,
                        outputs=outputs, workspace_sizes=built.workspace_sizes,
                        func_name=FUNC_NAMES[sig.op])


def _nothing(args, block_idx, block_dim):
    """Kernel of a signature whose outputs are all empty: there is nothing to compute."""


def _empty_kernel(sig: OpSignature):
    from ascendemu.kernels.ops.nb import Built
    return Built(_nothing, 1, KernelCost(dtype=sig.inputs[0].dtype if sig.inputs else "float32"))


def dry_run_function(sig: OpSignature) -> KernelFunction:
    """The kernel for ``sig`` without native code (entry 0), for DryRun: launches are checked, memory
    is allocated and time is priced exactly as for the real kernel, but nothing is computed and
    nothing is compiled."""
    source = generate(sig)
    return KernelFunction(name=source.func_name, entry=0, block_dim=source.block_dim, args=source.args,
                          cost=source.cost)


def kernel_signature():
    """The numba signature of the uniform kernel ABI: void(uint64 *args, int64 block_idx, int64 block_dim)."""
    from numba import types
    return types.void(types.CPointer(types.uint64), types.int64, types.int64)


def __getattr__(name: str):
    # KERNEL_SIG is built on first access so that importing this module never imports numba.
    if name == "KERNEL_SIG":
        return kernel_signature()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def compile_inprocess(sig: OpSignature) -> KernelFunction:
    """Compile ``sig``'s kernel with numba in this process (tests, O0 debugging; no ELF involved)."""
    import numba

    source = generate(sig)
    cfunc = numba.cfunc(kernel_signature(), error_model=KERNEL_ERROR_MODEL)(source.pyfunc)
    return KernelFunction(name=source.func_name, entry=cfunc.address, block_dim=source.block_dim,
                          args=source.args, cost=source.cost, keepalive=cfunc)
