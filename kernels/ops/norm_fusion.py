"""Element-wise programs fused into training BatchNorm (an epilogue on y) and BatchNormGrad (a
prologue on dy): CANN's buffer fusions of BNTrainingUpdate with the ReLU (and residual Add) after
it, and of the ReluGrad before BNTrainingUpdateGrad/BNTrainingReduceGrad, which MindSpore makes on
Ascend at O1/O2 (graph/passes.py ``fuse_norm_programs`` forms them).

A fused program is FusedElemwise's form: ``("in", 0)`` is the value the norm kernel makes (y) or
reads (dy), ``("in", i)`` the i-th extra input, which has that value's shape, so the kernel reads it
at the same flat index. The value passes through its storage dtype before the program reads it, so
the fused kernel computes bit for bit what the unfused pair does; only the round trip through
memory (and one kernel) is gone.
"""
from __future__ import annotations

from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import fail
from .elementwise import infer_fused, program_steps, store_value

# The attrs carrying a fused program, and the dtype the epilogue stores y in (a Cast to float16
# after a float32 BatchNorm under amp O2 joins the program).
EPILOGUE = "epilogue"
PROLOGUE = "prologue"
EPILOGUE_TYPE = "epilogue_type"
# inputs of BatchNorm / BatchNormGrad before a fused program's extra inputs
NORM_ARITY = 5
# Conv2D + BNTrainingReduce (MindSpore's Ascend buffer fusion ConvBnReduceFusionPass; graph/passes.py
# ``fuse_conv_bn_reduce``): the Conv2D marked REDUCES_OUTPUT sums its output per channel (x and x^2, in
# float32) while the output is still on chip, so the training BatchNorm marked STATS_FROM_CONV, which reads
# that output, makes no pass of its own over x for its statistics. The attrs are compiled-in facts of the
# two plans' costs; the values each kernel computes are unchanged.
REDUCES_OUTPUT = "reduces_output"
STATS_FROM_CONV = "stats_from_conv"


def base_signature(sig: OpSignature) -> OpSignature:
    """``sig`` without its fused program: the plain op's inputs and attrs."""
    drop = (EPILOGUE, PROLOGUE, EPILOGUE_TYPE, STATS_FROM_CONV)
    return OpSignature(sig.op, sig.inputs[:NORM_ARITY], tuple((k, v) for k, v in sig.attrs if k not in drop))


def fused_program(sig: OpSignature) -> tuple | None:
    """The epilogue (BatchNorm) or prologue (BatchNormGrad) program of ``sig``, or None."""
    return sig.attr(EPILOGUE if sig.op == "BatchNorm" else PROLOGUE)


def extras(sig: OpSignature) -> tuple[TensorDesc, ...]:
    return sig.inputs[NORM_ARITY:]


def infer_program(sig: OpSignature, value: TensorDesc, dtype: str) -> TensorDesc:
    """The result of the fused program on ``value`` (y or dy) and the extra inputs, checked to keep
    ``value``'s shape and every extra input at that shape (the kernel reads them at y's index)."""
    program = fused_program(sig)
    for i, d in enumerate(extras(sig)):
        if d.shape != value.shape:
            raise fail(sig, f"input {NORM_ARITY + i} (a fused program's input) must have shape {value.shape}, "
                            f"got {d.shape}")
    fused = OpSignature("FusedElemwise", (value,) + extras(sig), (("dst_type", dtype), ("program", program)))
    (result,) = infer_fused(fused)
    if result.shape != value.shape:
        raise fail(sig, f"the fused program makes shape {result.shape}, but it must keep {value.shape}")
    return result


def check_no_program(sig: OpSignature) -> None:
    """Only a training BatchNorm(Grad) takes a fused program (inference BatchNorm is element-wise
    and fuses as one already)."""
    if fused_program(sig) is not None or len(sig.inputs) > NORM_ARITY:
        raise fail(sig, f"attr {EPILOGUE}/{PROLOGUE} needs is_training=True")


def program_lines(sig: OpSignature, program: tuple, value: str, value_dtype: str, target: str,
                  target_dtype: str) -> list[str]:
    """Lines computing ``target = <program>(value, e0[base + j], ...)`` stored as ``target_dtype``;
    ``value`` (a compute expression) is rounded to ``value_dtype`` first, as its store would.
    ``program`` comes from the plan's tiling (the kernel's compiled-in facts)."""
    lines = [f"v0 = {src.load(value_dtype, src.store(value_dtype, value))}"]
    lines += [f"v{i + 1} = {src.load(d.dtype, f'e{i}[base + j]')}" for i, d in enumerate(extras(sig))]
    lines += program_steps(program, "f")
    return lines + [f"{target} = {store_value(target_dtype, f't{len(program) - 1}', 'f')}"]


def extra_specs(sig: OpSignature) -> tuple[tuple[str, int, str], ...]:
    """``src.views`` specs of the extra inputs (arguments NORM_ARITY..)."""
    return tuple((f"e{i}", NORM_ARITY + i, d.dtype) for i, d in enumerate(extras(sig)))
