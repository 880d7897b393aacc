"""Elementwise kernels: unary, Cast, broadcasting binary ops, BiasAdd and FusedElemwise.

All of them are one generated loop: the broadcast output is walked in rows of its innermost
(coalesced) dimension; every input is read through its own broadcast strides (0 on broadcast dims),
each step of the element's program is a scalar in registers, and only the outputs are stored.
Blocks split the flat output range, so block b writes exactly elements [b*chunk, (b+1)*chunk).
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import nb
from .shapes import fused_program

# Source templates of one step on float32 registers; {0}, {1} are operand variable names.
FLOAT_EXPR = {
    "Square": "{0} * {0}",
    "Neg": "-{0}",
    "Abs": "abs({0})",
    "Exp": "math.exp({0})",
    "Log": "math.log({0})",
    "Sqrt": "math.sqrt({0})",
    "Rsqrt": "fdiv(f32(1.0), math.sqrt({0}))",
    "ReLU": "f32(0.0) if {0} < f32(0.0) else {0}",
    "Sigmoid": "fdiv(f32(1.0), f32(1.0) + math.exp(-{0}))",
    "Tanh": "math.tanh({0})",
    # MindSpore's GeLU: the tanh approximation, 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).
    "GeLU": "f32(0.5) * {0} * (f32(1.0) + math.tanh(f32(0.7978845608028654) * "
            "({0} + f32(0.044715) * {0} * {0} * {0})))",
    "Cast": "{0}",
    "Add": "{0} + {1}",
    "Sub": "{0} - {1}",
    "Mul": "{0} * {1}",
    "Div": "fdiv({0}, {1})",
    # NaN-propagating like numpy.maximum / numpy.minimum.
    "Maximum": "{0} if ({0} > {1} or {0} != {0}) else {1}",
    "Minimum": "{0} if ({0} < {1} or {0} != {0}) else {1}",
    "Pow": "math.pow({0}, {1})",
}
# int32 ops compute on int64 registers; stores keep the low 32 bits (int32 wrap-around).
INT_EXPR = {
    "Square": "{0} * {0}",
    "Neg": "-{0}",
    "Abs": "abs({0})",
    "ReLU": "max({0}, i64(0))",
    "Cast": "{0}",
    "Add": "{0} + {1}",
    "Sub": "{0} - {1}",
    "Mul": "{0} * {1}",
    "Div": "sdiv({0}, {1})",    # truncates toward zero; x / 0 = 0
    "Maximum": "max({0}, {1})",
    "Minimum": "min({0}, {1})",
}


def broadcast_strides(out_shape: tuple[int, ...], shape: tuple[int, ...]) -> list[int]:
    """Element strides of a contiguous input over the output dims (0 on broadcast dims)."""
    rank = len(out_shape)
    padded = (1,) * (rank - len(shape)) + tuple(shape)
    strides, acc = [0] * rank, 1
    for d in reversed(range(rank)):
        if padded[d] != 1:
            strides[d] = acc
        acc *= padded[d]
    return strides


def coalesce(out_shape: tuple[int, ...], full: list[list[int]]):
    """Merge adjacent output dims that every input walks contiguously; drop size-1 dims.

    Returns (dims, strides per input), at least one dim, so a dense op becomes a single flat loop.
    """
    dims: list[int] = []
    strides: list[list[int]] = [[] for _ in full]
    for d, size in enumerate(out_shape):
        if size == 1:
            continue
        if dims and all(strides[i][-1] == st[d] * size for i, st in enumerate(full)):
            dims[-1] *= size
            for i, st in enumerate(full):
                strides[i][-1] = st[d]
        else:
            dims.append(size)
            for i, st in enumerate(full):
                strides[i].append(st[d])
    if not dims:
        dims, strides = [1], [[0] for _ in full]
    return dims, strides


def store_value(dtype: str, value: str, compute: str) -> str:
    if compute == "raw":
        return value
    if dtype == "int32" and compute == "f":
        return f"np.int32(i64({value}))"
    if dtype == "int32":
        return f"np.int32({value})"
    return nb.store(dtype, value)


def strided_source(inputs: tuple[TensorDesc, ...], full_strides: list[list[int]],
                   out_shape: tuple[int, ...], steps: list[str], outputs: list[tuple[str, str]],
                   compute: str) -> str:
    """Kernel source of an elementwise loop over ``out_shape`` (contiguous outputs).

    Input i is read at sum(index[d] * full_strides[i][d]); ``steps`` are assignment lines over the
    loaded values v0, v1, ...; ``outputs`` are (variable, dtype); ``compute`` is "f" (float32
    registers), "i" (int64 registers) or "raw" (bit copies, no conversion).
    """
    n = 1
    for s in out_shape:
        n *= s
    dims, strides = coalesce(out_shape, full_strides)
    inner = dims[-1]
    lines = list(nb.HEADER)
    for i, desc in enumerate(inputs):
        lines.append("    " + nb.view(f"x{i}", i, desc.dtype))
    for k, (_, dtype) in enumerate(outputs):
        lines.append("    " + nb.view(f"y{k}", len(inputs) + k, dtype))
    lines += nb.indent(nb.split_lines(str(n)))
    lines += [f"    row = lo // {inner}",
              f"    while row * {inner} < hi:"]
    body = [f"b{i} = 0" for i in range(len(inputs))]
    if len(dims) > 1:
        body.append("r = row")
        for d in reversed(range(len(dims) - 1)):
            body.append(f"c = r % {dims[d]}")
            body.append(f"r = r // {dims[d]}")
            body += [f"b{i} += c * {strides[i][d]}" for i in range(len(inputs)) if strides[i][d]]
    body += [f"start = row * {inner}",
             "j0 = max(lo - start, 0)",
             f"j1 = min(hi - start, {inner})"]
    loads = []
    for i, desc in enumerate(inputs):
        step = strides[i][-1]
        index = f"b{i}" if step == 0 else f"b{i} + j" if step == 1 else f"b{i} + j * {step}"
        value = f"x{i}[{index}]" if compute == "raw" else nb.load(desc.dtype, f"x{i}[{index}]")
        (body if step == 0 else loads).append(f"v{i} = {value}")
    loop = loads + steps + [f"y{k}[start + j] = {store_value(dtype, var, compute)}"
                            for k, (var, dtype) in enumerate(outputs)]
    body += ["for j in range(j0, j1):"] + nb.indent(loop) + ["row += 1"]
    lines += nb.indent(body, 2)
    return "\n".join(lines) + "\n"


def const_literal(value, compute: str) -> str:
    if compute != "f":
        return f"i64({int(value)})"
    value = float(value)
    if math.isnan(value):
        return "f32(np.nan)"
    if math.isinf(value):
        return "f32(np.inf)" if value > 0 else "f32(-np.inf)"
    return f"f32({value!r})"


def program_steps(program: tuple, compute: str) -> list[str]:
    """Assignment lines t0 = ..., t1 = ... of a FusedElemwise-style program."""
    table = FLOAT_EXPR if compute == "f" else INT_EXPR
    lines = []
    for j, (op, *operands) in enumerate(program):
        names = []
        for kind, value in operands:
            names.append(f"v{value}" if kind == "in" else f"t{value}" if kind == "t"
                         else const_literal(value, compute))
        lines.append(f"t{j} = " + table[op].format(*names))
    return lines


def build(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    inputs = sig.inputs
    if sig.op == "FusedElemwise":
        program, out_steps = fused_program(sig)
        compute = "f"
    else:
        compute = "i" if inputs[0].dtype == "int32" else "f"
        program = ((sig.op,) + tuple(("in", i) for i in range(len(inputs))),)
        out_steps = (0,)
        if sig.op == "BiasAdd":
            x = inputs[0].shape
            channel_last = sig.attr("data_format", sig.attr("format", "NCHW")) == "NHWC"
            bias_shape = (x[-1],) if channel_last else (x[1],) + (1,) * (len(x) - 2)
            inputs = (inputs[0], TensorDesc(bias_shape, inputs[1].dtype))
            program = (("Add", ("in", 0), ("in", 1)),)
    out_shape = outputs[0].shape
    steps = program_steps(program, compute)
    full = [broadcast_strides(out_shape, d.shape) for d in inputs]
    src = strided_source(inputs, full, out_shape, steps,
                         [(f"t{s}", d.dtype) for s, d in zip(out_steps, outputs)], compute)
    n = outputs[0].size
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    cost = KernelCost(vector_ops=n * len(program), bytes=moved, dtype=outputs[0].dtype)
    return nb.Built(nb.compile_source(src), nb.elementwise_blocks(n), cost)
