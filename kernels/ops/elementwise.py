"""Elementwise ops: unary, Cast, broadcasting binary ops, comparisons, logical ops, Select, BiasAdd,
SigmoidCrossEntropyWithLogits and FusedElemwise.

All of them are one generated loop: the broadcast output is walked in rows of its innermost
(coalesced) dimension; every input is read through its own broadcast strides (0 on broadcast dims),
each step of the element's program is a scalar in registers, and only the outputs are stored.
Blocks split the flat output range, so block b writes exactly elements [b*chunk, (b+1)*chunk).

FusedElemwise (graph-kernel fusion) takes attrs ``program``: a tuple of steps ``(op_name, operand, ...)``
where ``op_name`` is any op of this family with a float lowering (Cast is a no-op on the float32
registers) and an operand is ``("in", i)`` (kernel input i, broadcast like binary ops), ``("t", j)``
(the result of an earlier step j) or ``("c", number)``; optional ``outputs``: step indices written as
outputs (default: the last step); optional ``dst_type``: output dtype(s) (default: the inputs' common
dtype). Inputs may be float32 or float16; every step computes in float32 registers.

A lowering's choices are nb.py's helpers (``pick(cond, a, b)`` for ``a if cond else b``, ``nanmax``/``nanmin``)
rather than conditional expressions: the same values, but numba types a helper once per process and a
conditional expression once per kernel (src.HEADER).

Each op is one stanza at the bottom: name, kernel function name, scalar lowering (float registers and,
where the op has one, int64 registers; an int lowering makes the op accept every integer type),
front-end names. Ops compute by their operands' dtype (:func:`compute_kind`): float64 in float64,
float32/float16/bfloat16 in float32, the integer types and bool in int64; the store converts.
"""
from __future__ import annotations

import math
from typing import Callable

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Elementwise, Exposure, Grad, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import DTYPES, OpSignature, TensorDesc

from . import src
from .common import (ALL, COMPLEX, FLOAT, FLOATS, NUMBER, broadcast_shapes, check_arity, check_dtype, check_format,
                     check_rank, fail, same_dtype)

# the integer dtypes (bit and shift ops)
INTEGERS = tuple(d for d in NUMBER if d not in FLOATS)

# ------------------------------------------------------------------------------------------- infer


def _dtypes(lowering: Elementwise) -> tuple[str, ...]:
    """Every number type for an op with an int lowering, else every float type."""
    return NUMBER if lowering.int_expr is not None else FLOATS


def compute_kind(dtype: str) -> str:
    """The registers an op on ``dtype`` operands computes in: "d" float64 for float64, "f" float32 for
    the other floats (float16 and bfloat16 are converted on load and store), "i" int64 for the
    integer types and bool, "c" complex (complex64 or complex128, as loaded) for the complex types."""
    if dtype in COMPLEX:
        return "c"
    if dtype == "float64":
        return "d"
    return "f" if dtype in FLOATS else "i"


# Complex lowerings (compute kind "c": numba's complex registers) of the ops MindSpore 2.10 serves on
# complex64/complex128 on CPU (measured: arithmetic, exp/log/sqrt, trigonometric, comparisons for
# equality; Abs keeps the complex dtype, |x| + 0j). An op listed here accepts the complex dtypes.
COMPLEX_EXPRS = {
    "Add": "{0} + {1}", "Sub": "{0} - {1}", "Mul": "{0} * {1}", "Div": "cdiv({0}, {1})", "Neg": "-{0}",
    "Square": "{0} * {0}", "Reciprocal": "cdiv(complex(1.0), {0})", "Abs": "complex(abs({0}))",
    "Exp": "cmath.exp({0})", "Log": "cmath.log({0})", "Sqrt": "csqrt({0})", "Rsqrt": "cdiv(complex(1.0), csqrt({0}))",
    "Sin": "cmath.sin({0})", "Cos": "cmath.cos({0})", "Tanh": "cmath.tanh({0})", "Tan": "(-1j * cmath.tanh(1j * {0}))",
    "Sinh": "cmath.sinh({0})", "Cosh": "cmath.cosh({0})",
    "Sign": "(complex(0.0) if {0} == 0 else cdiv({0}, complex(abs({0}))))",
    "Cast": "{0}", "Equal": "({0} == {1})", "NotEqual": "({0} != {1})",
    "Real": "{0}.real", "Imag": "{0}.imag", "Conj": "{0}.conjugate()", "Angle": "cmath.phase({0})",
    "ComplexAbs": "abs({0})",
}


def with_complex(name: str, dtypes: tuple[str, ...]) -> tuple[str, ...]:
    """``dtypes`` plus the complex types when op ``name`` has a complex lowering."""
    return dtypes + COMPLEX if name in COMPLEX_EXPRS else dtypes


def complex_part(name: str, func_name: str, expr: str, real_out: bool) -> OpDef:
    """A one-operand op on a complex tensor (Real, Imag, Conj, Angle, ComplexAbs): its complex lowering is
    ``COMPLEX_EXPRS[name]``; ``real_out``: the output is the part's real type (complex64 -> float32).
    ``expr`` is its float lowering (never compiled: infer takes complex operands only)."""
    def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
        check_arity(sig, 1, ("input",))
        dtype = check_dtype(sig, 0, COMPLEX, "input")
        out = ("float32" if dtype == "complex64" else "float64") if real_out else dtype
        return (TensorDesc(sig.inputs[0].shape, out),)

    return loop_op(name, func_name, infer, Elementwise(1, expr), no_grad)


def infer_complex(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Complex(real, imag): float32 -> complex64, float64 -> complex128, broadcast (MindSpore's Complex)."""
    check_arity(sig, 2, ("real", "imag"))
    dtype = same_dtype(sig, ("float32", "float64"))
    out = "complex64" if dtype == "float32" else "complex128"
    return (TensorDesc(broadcast_shapes(sig, [d.shape for d in sig.inputs]), out),)


def cast_target(sig: OpSignature) -> str:
    dst = sig.attr("dst_type")
    if not isinstance(dst, str) or dst.lower() not in DTYPES:
        raise fail(sig, f"attr dst_type={dst!r} must be one of {DTYPES}")
    return dst.lower()


def infer_cast(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    check_dtype(sig, 0, ALL + COMPLEX, "x")
    return (TensorDesc(sig.inputs[0].shape, cast_target(sig)),)


def infer_bias_add(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("x", "bias"))
    dtype = same_dtype(sig, NUMBER)
    fmt = check_format(sig, ("NCHW", "NHWC", "NCDHW"))
    x = sig.inputs[0].shape
    if len(x) < 2:
        raise fail(sig, f"input 0 (x) must have rank >= 2, got shape {x}")
    channels = x[-1] if fmt == "NHWC" else x[1]
    bias = check_rank(sig, 1, 1, "bias")
    if bias[0] != channels:
        raise fail(sig, f"input 1 (bias) has shape {bias} but x {x} has {channels} channels ({fmt})")
    return (TensorDesc(x, dtype),)


def infer_broadcast_to(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, ALL + COMPLEX, "x")
    target = sig.attr("shape")
    x = sig.inputs[0].shape
    if (not isinstance(target, tuple) or len(target) < len(x)
            or not all(isinstance(d, int) and not isinstance(d, bool) and d >= -1 for d in target)):
        raise fail(sig, f"attr shape={target!r} must be a tuple of ints (>= 0, or -1 to keep a dimension) "
                        f"of rank >= {len(x)}")
    lead = len(target) - len(x)
    out = tuple(x[d - lead] if t == -1 and d >= lead else t for d, t in enumerate(target))
    if -1 in out[:lead] or any(x[d] not in (1, out[lead + d]) for d in range(len(x))):
        raise fail(sig, f"input 0 (x) shape {x} cannot be broadcast to {target}")
    return (TensorDesc(out, dtype),)


def fused_program(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """Validated (steps, output step indices) of a FusedElemwise signature (or a matmul epilogue)."""
    program = sig.attr("program")
    if not isinstance(program, tuple) or not program:
        raise fail(sig, "attr program must be a non-empty tuple of steps (op_name, operand, ...)")
    n_in = len(sig.inputs)
    for j, step in enumerate(program):
        if not isinstance(step, tuple) or not step or step[0] not in LOWERINGS:
            raise fail(sig, f"attr program step {j} {step!r} must be (op_name, operand, ...) with op_name "
                            f"one of {tuple(LOWERINGS)}")
        arity = LOWERINGS[step[0]].arity
        if len(step) - 1 != arity:
            raise fail(sig, f"attr program step {j} {step!r}: {step[0]} takes {arity} operand(s)")
        for operand in step[1:]:
            ok = isinstance(operand, tuple) and len(operand) == 2 and (
                (operand[0] == "in" and isinstance(operand[1], int) and 0 <= operand[1] < n_in)
                or (operand[0] == "t" and isinstance(operand[1], int) and 0 <= operand[1] < j)
                or (operand[0] == "c" and isinstance(operand[1], (int, float))
                    and not isinstance(operand[1], bool)))
            if not ok:
                raise fail(sig, f"attr program step {j} operand {operand!r} must be ('in', i) with "
                                f"0 <= i < {n_in}, ('t', j) with j < {j}, or ('c', number)")
    outputs = sig.attr("outputs", (len(program) - 1,))
    if isinstance(outputs, int) and not isinstance(outputs, bool):
        outputs = (outputs,)
    if (not isinstance(outputs, tuple) or not outputs
            or not all(isinstance(o, int) and 0 <= o < len(program) for o in outputs)):
        raise fail(sig, f"attr outputs={outputs!r} must be a non-empty tuple of step indices "
                        f"in 0..{len(program) - 1}")
    return program, outputs


def infer_fused(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, None)
    for i in range(len(sig.inputs)):
        check_dtype(sig, i, FLOAT)
    _, outputs = fused_program(sig)
    shape = broadcast_shapes(sig, [d.shape for d in sig.inputs])
    dst = sig.attr("dst_type")
    if dst is None:
        dtypes = {d.dtype for d in sig.inputs}
        if len(dtypes) != 1:
            raise fail(sig, f"inputs mix dtypes {sorted(dtypes)}; give attr dst_type for the outputs")
        out_dtypes = (dtypes.pop(),) * len(outputs)
    else:
        out_dtypes = (dst,) * len(outputs) if isinstance(dst, str) else dst
        if (not isinstance(out_dtypes, tuple) or len(out_dtypes) != len(outputs)
                or not all(t in FLOAT for t in out_dtypes)):
            raise fail(sig, f"attr dst_type={dst!r} must be one of {FLOAT} or a tuple of those, "
                            f"one per output ({len(outputs)})")
    return tuple(TensorDesc(shape, t) for t in out_dtypes)


# ---------------------------------------------------------------------------------------- lowering

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
    """A compute value stored as ``dtype``: floats to an integer type truncate toward zero (through
    int64, then wrap to the type's width, as MindSpore's Cast); ints wrap to the type's width."""
    if compute == "raw":
        return value
    if compute == "c" and dtype not in COMPLEX and dtype != "bool":
        value = f"({value}).real"      # complex to a real type keeps the real part (MindSpore's Cast)
    if dtype in FLOATS or dtype == "bool" or dtype in COMPLEX:
        return src.store(dtype, value)
    if compute in ("f", "d"):
        return f"np.{dtype}(i64({value}))"
    return f"np.{dtype}({value})"


# Stride kinds of a coalesced loop dim, fixed when the kernel is generated (a dynamic-shape elementwise
# kernel reads the dims and strides themselves at run time): broadcast, unit, any other stride.
BROADCAST, UNIT, STRIDED = 0, 1, 2


def strided_layout(out_shape: tuple[int, ...], full_strides: list[list[int]]) -> dict:
    """The tiling facts of an elementwise loop over ``out_shape`` reading input i through
    ``full_strides[i]``: element count ``n``, the coalesced ``dims`` and per-input ``strides``, and the
    per-input stride ``kinds`` (what decides the loop's code)."""
    dims, strides = coalesce(out_shape, full_strides)
    if dims == [1]:
        # One element: every input is read at its base whatever its stride, so the loop is the dense
        # one's (unit strides): a scalar op (a loss's mean, a step counter) shares the dense op's kernel.
        strides = [[1] for _ in strides]
    kinds = tuple(tuple(BROADCAST if st == 0 else UNIT if st == 1 else STRIDED for st in per_input)
                  for per_input in strides)
    return dict(n=math.prod(out_shape), dims=tuple(dims), strides=tuple(tuple(st) for st in strides), kinds=kinds)


def strided_source(inputs: tuple[TensorDesc, ...], full_strides: list[list[int]],
                   out_shape: tuple[int, ...], steps: list[str], outputs: list[tuple[str, str]],
                   compute: str, bases: list[int] | None = None) -> str:
    """Kernel source of an elementwise loop over ``out_shape`` (contiguous outputs), specialised to it.

    Input i is read at bases[i] + sum(index[d] * full_strides[i][d]) (strides may be negative: a
    reversed slice; ``bases`` default to 0); ``steps`` are assignment lines over the
    loaded values v0, v1, ...; ``outputs`` are (variable, dtype); ``compute`` is "f" (float32
    registers), "d" (float64 registers), "i" (int64 registers) or "raw" (bit copies, no conversion).
    """
    return layout_source(tuple(d.dtype for d in inputs), strided_layout(out_shape, full_strides), steps, outputs,
                         compute, bases)


def layout_source(dtypes: tuple[str, ...], layout: dict, steps: list[str], outputs: list[tuple[str, str]],
                  compute: str, bases: list[int] | None = None) -> str:
    """Kernel source of the elementwise loop :func:`strided_layout` describes (see :func:`strided_source`);
    its ``n``, ``dims`` and ``strides`` may be runtime tiling values, its ``kinds`` are literal."""
    n, dims, strides, kinds = layout["n"], layout["dims"], layout["strides"], layout["kinds"]
    inner = dims[-1]
    lines = list(src.HEADER)
    for i, dtype in enumerate(dtypes):
        lines.append("    " + src.view(f"x{i}", i, dtype))
    for k, (_, dtype) in enumerate(outputs):
        lines.append("    " + src.view(f"y{k}", len(dtypes) + k, dtype))
    lines += src.indent(src.split_lines(str(n)))
    if len(dims) == 1:
        return _flat_source(lines, dtypes, strides, kinds, steps, outputs, compute, bases)
    lines += [f"    row = lo // {inner}",
              f"    while row * {inner} < hi:"]
    body = [f"b{i} = {bases[i] if bases else 0}" for i in range(len(dtypes))]
    if len(dims) > 1:
        body.append("r = row")
        for d in reversed(range(len(dims) - 1)):
            body.append(f"c = r % {dims[d]}")
            body.append(f"r = r // {dims[d]}")
            body += [f"b{i} += c" + ("" if kinds[i][d] == UNIT else f" * {strides[i][d]}")
                     for i in range(len(dtypes)) if kinds[i][d] != BROADCAST]
    body += [f"start = row * {inner}",
             "j0 = max(lo - start, 0)",
             f"j1 = min(hi - start, {inner})"]
    loads = []
    for i, dtype in enumerate(dtypes):
        kind = kinds[i][-1]
        index = f"b{i}" if kind == BROADCAST else f"b{i} + j" if kind == UNIT else f"b{i} + j * {strides[i][-1]}"
        value = f"x{i}[{index}]" if compute == "raw" else src.load(dtype, f"x{i}[{index}]")
        (body if kind == BROADCAST else loads).append(f"v{i} = {value}")
    loop = loads + steps + [f"y{k}[start + j] = {store_value(dtype, var, compute)}"
                            for k, (var, dtype) in enumerate(outputs)]
    body += ["for j in range(j0, j1):"] + src.indent(loop) + ["row += 1"]
    lines += src.indent(body, 2)
    return src.finish(lines)


def _flat_source(lines: list[str], dtypes: tuple[str, ...], strides, kinds, steps: list[str],
                 outputs: list[tuple[str, str]], compute: str, bases: list[int] | None) -> str:
    """:func:`layout_source`'s loop when the layout coalesces to one dim: that dim is all ``n`` elements,
    so the row walk has one row and the block's share is one flat loop. The same loads, steps and stores
    in the same order as the row walk, in a third fewer lines, and numba's build cost follows the lines
    (a dense Add: 0.175 -> 0.111 CPU-s, bench/README.md)."""
    loads, hoisted = [], []
    for i, dtype in enumerate(dtypes):
        base = bases[i] if bases else 0
        kind = kinds[i][0]
        index = (f"{base}" if kind == BROADCAST else f"{base} + j" if base else "j") if kind != STRIDED \
            else f"{base} + j * {strides[i][0]}"
        value = f"x{i}[{index}]" if compute == "raw" else src.load(dtype, f"x{i}[{index}]")
        (hoisted if kind == BROADCAST else loads).append(f"v{i} = {value}")
    loop = loads + steps + [f"y{k}[j] = {store_value(dtype, var, compute)}" for k, (var, dtype) in enumerate(outputs)]
    lines += src.indent(hoisted) + ["    for j in range(lo, hi):"] + src.indent(loop, 2)
    return src.finish(lines)


def const_literal(value, compute: str) -> str:
    if compute == "c":
        return f"complex({float(value)!r})"
    if compute not in ("f", "d"):
        return f"i64({int(value)})"
    kind = "f64" if compute == "d" else "f32"
    value = float(value)
    if math.isnan(value):
        return f"{kind}(np.nan)"
    if math.isinf(value):
        return f"{kind}(np.inf)" if value > 0 else f"{kind}(-np.inf)"
    return f"{kind}({value!r})"


def double_expr(template: str) -> str:
    """A float32 lowering as float64 code: its float32 literals become float64 and the float32 exp
    polynomial libm's exp, so float64 operands compute in float64 registers."""
    return template.replace("f32(", "f64(").replace("fexp(", "math.exp(")


def program_steps(program: tuple, compute: str) -> list[str]:
    """Assignment lines t0 = ..., t1 = ... of a FusedElemwise-style program. An operand ("src", name)
    is a kernel local (a constant the kernel reads at run time: MatMul's epilogue menu)."""
    lines = []
    for j, (op, *operands) in enumerate(program):
        names = []
        for kind, value in operands:
            names.append(f"v{value}" if kind == "in" else f"t{value}" if kind == "t"
                         else value if kind == "src" else const_literal(value, compute))
        lowering = LOWERINGS[op]
        template = (lowering.float_expr if compute == "f" else double_expr(lowering.float_expr) if compute == "d"
                    else COMPLEX_EXPRS[op] if compute == "c" else lowering.int_expr)
        lines.append(f"t{j} = " + template.format(*names))
    return lines


# Ops defined by a fixed scalar program (optimizer updates): op name -> signature -> (steps, outputs)
ProgramFn = Callable[[OpSignature], tuple[tuple, tuple[int, ...]]]
PROGRAMS: dict[str, ProgramFn] = {}


def program_op(name: str, func_name: str, operands: tuple[str, ...], program: ProgramFn,
               frontend: Exposure | None = None) -> OpDef:
    """An op whose kernel is one elementwise program over its (broadcast) float operands, with one
    output per program output: a multi-output update such as ApplyMomentum's (var, accum) is one
    pass over memory, like a fused kernel. ``program(sig)`` gives the steps (FusedElemwise's form)."""
    PROGRAMS[name] = program

    def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
        check_arity(sig, len(operands), operands)
        for i, operand in enumerate(operands):
            check_dtype(sig, i, FLOAT, operand)
        shape = broadcast_shapes(sig, [d.shape for d in sig.inputs])
        if shape != sig.inputs[0].shape:
            raise fail(sig, f"operands broadcast to {shape}, larger than input 0 ({operands[0]}) "
                            f"{sig.inputs[0].shape}")
        _, outs = program(sig)
        return tuple(TensorDesc(shape, sig.inputs[0].dtype) for _ in outs)

    return loop_op(name, func_name, infer, frontend=frontend)


def _program(sig: OpSignature) -> tuple[tuple[TensorDesc, ...], tuple, tuple[int, ...], str]:
    """(operand descs, program, output steps, compute) of any op of this family."""
    inputs = sig.inputs
    if sig.op == "FusedElemwise":
        program, out_steps = fused_program(sig)
        return inputs, program, out_steps, "f"
    if sig.op in PROGRAMS:
        program, out_steps = PROGRAMS[sig.op](sig)
        return inputs, program, out_steps, "f"
    if sig.op == "BroadcastTo":      # a bit copy through broadcast strides
        return inputs, (("Cast", ("in", 0)),), (0,), "raw"
    if sig.op == "Select":           # bit copies too: the chosen operand is stored unchanged
        return inputs, (("Select", ("in", 0), ("in", 1), ("in", 2)),), (0,), "raw"
    compute = compute_kind(inputs[0].dtype)
    if sig.op == "BiasAdd":
        x = inputs[0].shape
        channel_last = sig.attr("data_format", sig.attr("format", "NCHW")) == "NHWC"
        bias_shape = (x[-1],) if channel_last else (x[1],) + (1,) * (len(x) - 2)
        return (inputs[0], TensorDesc(bias_shape, inputs[1].dtype)), (("Add", ("in", 0), ("in", 1)),), (0,), compute
    return inputs, ((sig.op,) + tuple(("in", i) for i in range(len(inputs))),), (0,), compute


# What an elementwise kernel reads at run time (one kernel per program, dtypes and loop structure
# serves every shape): the element count, the coalesced dims and the inputs' strides along them.
RUNTIME_TILING = ("n", "dims", "strides")


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    inputs, program, out_steps, compute = _program(sig)
    n = outputs[0].size
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    # priced at the rate of the dtype it computes in: a comparison's operands, else its output
    dtype = sig.inputs[0].dtype if outputs[0].dtype == "bool" and sig.inputs else outputs[0].dtype
    out_shape = outputs[0].shape
    layout = strided_layout(out_shape, [broadcast_strides(out_shape, d.shape) for d in inputs])
    tiling = dict(layout, program=program, out_steps=out_steps, compute=compute)
    return Plan(src.elementwise_blocks(n), KernelCost(vector_ops=n * len(program), bytes=moved, dtype=dtype),
                (), tiling)


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    t = plan.tiling
    return layout_source(tuple(d.dtype for d in sig.inputs), t, program_steps(t["program"], t["compute"]),
                         [(f"t{s}", d.dtype) for s, d in zip(t["out_steps"], outputs)], t["compute"])


def loop_op(name: str, func_name: str, infer, lowering: Elementwise | None = None, grad: Grad | None = None,
            frontend: Exposure | None = None) -> OpDef:
    """An op of this family: its kernel is the family's one loop (:func:`plan`, :func:`emit`), a
    dynamic-shape kernel (``RUNTIME_TILING``)."""
    return OpDef(name, func_name, infer, plan, emit, lowering, grad, frontend, runtime_tiling=RUNTIME_TILING)


# ------------------------------------------------------------------------------------------ stanzas

def unary(name: str, func_name: str, float_expr: str, int_expr: str | None = None,
          primitives: tuple[str, ...] | None = None, functions: tuple[str, ...] | None = None,
          grad: Grad | None = None) -> OpDef:
    """An elementwise op of one operand; int_expr given = it accepts int32 too."""
    lowering = Elementwise(1, float_expr, int_expr)
    dtypes = _dtypes(lowering)

    def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
        check_arity(sig, 1, ("x",))
        return (TensorDesc(sig.inputs[0].shape, check_dtype(sig, 0, with_complex(name, dtypes), "x")),)

    exposure = Exposure(primitives or (name,), (func_name,) if functions is None else functions, generated=True)
    return loop_op(name, func_name, infer, lowering, grad, exposure)


def binary(name: str, func_name: str, float_expr: str, int_expr: str | None = None,
           primitives: tuple[str, ...] | None = None, functions: tuple[str, ...] | None = None,
           grad: Grad | None = None, exposed: bool = True) -> OpDef:
    """A broadcasting elementwise op of two operands of one dtype; ``exposed=False``: an internal op
    (a backward kernel) with no front-end names."""
    lowering = Elementwise(2, float_expr, int_expr)
    dtypes = _dtypes(lowering)

    def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
        check_arity(sig, 2, ("x", "y"))
        dtype = same_dtype(sig, with_complex(name, dtypes))
        return (TensorDesc(broadcast_shapes(sig, [d.shape for d in sig.inputs]), dtype),)

    exposure = Exposure(primitives or (name,), (func_name,) if functions is None else functions, generated=True)
    return loop_op(name, func_name, infer, lowering, grad, exposure if exposed else None)


def compare(name: str, func_name: str, symbol: str, functions: tuple[str, ...]) -> OpDef:
    """A broadcasting comparison of two operands of one dtype; the output is bool (0 or 1 per byte).
    NaN compares unequal to everything, as in numpy and on the device."""
    lowering = Elementwise(2, f"({{0}} {symbol} {{1}})", f"({{0}} {symbol} {{1}})")

    def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
        check_arity(sig, 2, ("x", "y"))
        same_dtype(sig, with_complex(name, ALL))
        return (TensorDesc(broadcast_shapes(sig, [d.shape for d in sig.inputs]), "bool"),)

    return loop_op(name, func_name, infer, lowering, no_grad, Exposure((name,), functions, generated=True))


def logical(name: str, func_name: str, arity: int, expr: str, functions: tuple[str, ...]) -> OpDef:
    """A broadcasting op giving bool: each operand true where non-zero (MindSpore 2.10 takes any real
    dtype, mixed: bool, ints, floats)."""
    lowering = Elementwise(arity, expr, expr)

    def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
        check_arity(sig, arity, ("x", "y")[:arity])
        shape = broadcast_shapes(sig, [d.shape for d in sig.inputs])    # MindSpore checks the shapes first
        for i in range(arity):
            check_dtype(sig, i, ALL, ("x", "y")[i])       # MindSpore 2.10: any number, non-zero is True
        return (TensorDesc(shape, "bool"),)

    return loop_op(name, func_name, infer, lowering, no_grad, Exposure((name,), functions, generated=True))


def infer_is_finite(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    check_dtype(sig, 0, ALL, "x")
    return (TensorDesc(sig.inputs[0].shape, "bool"),)


def infer_sigmoid_cross_entropy(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """SigmoidCrossEntropyWithLogits(logits, label): one shape and one float dtype, as MindSpore checks."""
    check_arity(sig, 2, ("logits", "label"))
    dtype = same_dtype(sig, FLOAT)
    logits, label = sig.inputs[0].shape, sig.inputs[1].shape
    if label != logits:
        raise fail(sig, f"input 1 (label) has shape {label}; it must have logits' shape {logits}")
    return (TensorDesc(logits, dtype),)


def infer_select(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Select(cond, x, y): x where cond else y, broadcast (MindSpore's ops.select); x and y share a dtype."""
    check_arity(sig, 3, ("cond", "x", "y"))
    check_dtype(sig, 0, ("bool",), "cond")
    x, y = sig.inputs[1].dtype, sig.inputs[2].dtype
    if x != y or x not in ALL + COMPLEX:
        raise fail(sig, f"inputs 1 (x) and 2 (y) have dtypes {x} and {y}; they must be one of {ALL + COMPLEX} "
                        f"and equal")
    return (TensorDesc(broadcast_shapes(sig, [d.shape for d in sig.inputs]), x),)


# ------------------------------------------------------------------------------------ backward rules
# Each rule gets the forward call (inputs x, y; output out) and the output gradient dy, and emits
# elementwise ops (which O1 fuses into one backward kernel). Broadcast operands sum their gradient
# back to their own shape.

def _k(b: GradBuilder, value: float, like: int) -> int:
    """A scalar of ``like``'s dtype."""
    return b.scalar(value, b.desc(like).dtype)


def _mask(b: GradBuilder, compare_op: str, x: int, y: int) -> int:
    """1.0 where ``x <compare_op> y``, else 0.0, in x's dtype."""
    return b.op("Cast", b.op(compare_op, x, y), dst_type=b.desc(x).dtype)


def no_grad(b: GradBuilder, c: GradCall) -> tuple[None, ...]:
    """Comparisons and other piecewise-constant ops: no gradient flows."""
    return (None,) * len(c.inputs)


def _unary_rule(local):
    """A rule dx = dy * local(b, x, out) for a one-operand op."""
    def rule(b: GradBuilder, c: GradCall) -> tuple[int]:
        return (b.op("Mul", c.douts[0], local(b, c.inputs[0], c.outputs[0])),)
    return rule


def _g_neg(b, c):
    return (b.op("Neg", c.douts[0]),)


def _g_sqrt(b, c):          # d sqrt(x) = 0.5 / sqrt(x)
    return (b.op("Div", b.op("Mul", c.douts[0], _k(b, 0.5, c.outputs[0])), c.outputs[0]),)


def _g_log(b, c):
    return (b.op("Div", c.douts[0], c.inputs[0]),)


def _gelu_local(b, x, out):
    # tanh approximation: d/dx = 0.5(1 + t) + 0.5 x (1 - t^2) k (1 + 3a x^2), t = tanh(k(x + a x^3))
    k, a = 0.7978845608028654, 0.044715
    x2 = b.op("Mul", x, x)
    inner = b.op("Mul", _k(b, k, x), b.op("Add", x, b.op("Mul", _k(b, a, x), b.op("Mul", x2, x))))
    t = b.op("Tanh", inner)
    left = b.op("Mul", _k(b, 0.5, x), b.op("Add", _k(b, 1.0, x), t))
    sech2 = b.op("Sub", _k(b, 1.0, x), b.op("Mul", t, t))
    slope = b.op("Mul", _k(b, k, x), b.op("Add", _k(b, 1.0, x), b.op("Mul", _k(b, 3 * a, x), x2)))
    return b.op("Add", left, b.op("Mul", b.op("Mul", _k(b, 0.5, x), x), b.op("Mul", sech2, slope)))


def _between(b: GradBuilder, x: int, low: float, high: float) -> int:
    """1.0 where low < x < high, else 0.0, in x's dtype."""
    return b.op("Mul", _mask(b, "Greater", x, _k(b, low, x)), _mask(b, "Less", x, _k(b, high, x)))


def _hswish_local(b, x, out):
    # d/dx x * relu6(x + 3) / 6: (2x + 3) / 6 on (-3, 3), 1 from 3 on, 0 up to -3
    ramp = b.op("Div", b.op("Add", b.op("Mul", x, _k(b, 2.0, x)), _k(b, 3.0, x)), _k(b, 6.0, x))
    return b.op("Add", b.op("Mul", _between(b, x, -3.0, 3.0), ramp), _mask(b, "GreaterEqual", x, _k(b, 3.0, x)))


# relu6(x + 3) as a lowering template over operand {0}
_RELU6_OF_X_PLUS_3 = "(f32(0.0) if {0} < f32(-3.0) else (f32(6.0) if {0} > f32(3.0) else {0} + f32(3.0)))"


def _binary_rule(dx, dy_):
    """A rule for a broadcasting two-operand op from its two partial gradients (None: no gradient)."""
    def rule(b: GradBuilder, c: GradCall) -> tuple[int | None, int | None]:
        x, y = c.inputs
        g = c.douts[0]
        gx = dx(b, g, x, y, c.outputs[0]) if dx else None
        gy = dy_(b, g, x, y, c.outputs[0]) if dy_ else None
        return (None if gx is None else b.sum_to(gx, b.desc(x).shape),
                None if gy is None else b.sum_to(gy, b.desc(y).shape))
    return rule


def _g_pow_y(b, g, x, y, out):
    # d x^y / dy = x^y ln x; MindSpore gives 0 where x <= 0
    safe = b.op("Maximum", x, _k(b, 1e-38, x))
    return b.op("Mul", _mask(b, "Greater", x, _k(b, 0.0, x)), b.op("Mul", g, b.op("Mul", out, b.op("Log", safe))))


def _g_cast(b, c):
    src = c.sig.inputs[0].dtype
    if src not in FLOATS:
        return (None,)
    return (b.op("Cast", c.douts[0], dst_type=src),)


def _g_bias_add(b, c):
    (g,) = c.douts
    x = c.sig.inputs[0].shape
    channel = len(x) - 1 if c.sig.attr("data_format", c.sig.attr("format", "NCHW")) == "NHWC" else 1
    axes = tuple(d for d in range(len(x)) if d != channel)
    return (g, b.op("ReduceSum", g, axis=axes, keep_dims=False))


def _g_broadcast_to(b, c):
    return (b.sum_to(c.douts[0], c.sig.inputs[0].shape),)


def _g_select(b, c):
    """The gradient goes to the chosen operand: select(cond, dy, 0) and select(cond, 0, dy)."""
    cond, x, y = c.inputs
    g = c.douts[0]
    zero = _k(b, 0.0, g)
    return (None, b.sum_to(b.op("Select", cond, g, zero), b.desc(x).shape),
            b.sum_to(b.op("Select", cond, zero, g), b.desc(y).shape))


def _g_sigmoid_cross_entropy(b, c):
    """MindSpore's bprop: dlogits = dout * (sigmoid(logits) - label); the label gets no gradient."""
    logits, label = c.inputs
    return b.op("Mul", c.douts[0], b.op("Sub", b.op("Sigmoid", logits), label)), None


# ---- the math ops' backward rules (trigonometric, hyperbolic, error functions, remainders) ----

def _one_plus_square(b: GradBuilder, x: int, sign: float) -> int:
    """1 + sign * x^2, in x's dtype (the denominators of the inverse trigonometric derivatives)."""
    return b.op("Add", _k(b, 1.0, x), b.op("Mul", _k(b, sign, x), b.op("Mul", x, x)))


def _erf_slope(b: GradBuilder, x: int, scale: float) -> int:
    """scale * exp(-x^2): d erf(x) = 2/sqrt(pi) exp(-x^2), d erfc(x) its negative."""
    return b.op("Mul", _k(b, scale, x), b.op("Exp", b.op("Neg", b.op("Mul", x, x))))


def _where_zero(b: GradBuilder, cond_of: int, value: int) -> int:
    """0 where ``cond_of`` == 0, else ``value`` (a Select, so an inf or NaN ``value`` there is dropped)."""
    zero = _k(b, 0.0, value)
    return b.op("Select", b.op("Equal", cond_of, _k(b, 0.0, cond_of)), zero, value)


def _g_atan2_x(b, g, x, y, out):            # d atan2(x, y) / dx = y / (x^2 + y^2)
    return b.op("Div", b.op("Mul", g, y), b.op("Add", b.op("Mul", x, x), b.op("Mul", y, y)))


def _g_atan2_y(b, g, x, y, out):            # d atan2(x, y) / dy = -x / (x^2 + y^2)
    return b.op("Neg", b.op("Div", b.op("Mul", g, x), b.op("Add", b.op("Mul", x, x), b.op("Mul", y, y))))


def _g_squared_difference(b, g, x, y, out):  # d (x - y)^2 / dx = 2 (x - y)
    return b.op("Mul", g, b.op("Mul", _k(b, 2.0, x), b.op("Sub", x, y)))


def _horner(coefficients: tuple[float, ...], w: str) -> str:
    """Source of the polynomial with ``coefficients`` (highest degree first) at ``w``, in Horner form."""
    expr = f"f32({coefficients[0]!r})"
    for c in coefficients[1:]:
        expr = f"(f32({c!r}) + {expr} * {w})"
    return expr


# erfinv in float32 (M. Giles, "Approximating the erfinv function", 2010): x times a polynomial in
# w = -log((1 - x)(1 + x)), one for the centre (w < 5) and one for the tails (in sqrt(w))
_ERFINV_W = "(-math.log((f32(1.0) - {0}) * (f32(1.0) + {0})))"
_ERFINV_CENTRE = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                0.00943887047, 1.00167406, 2.83297682)
ERFINV_EXPR = (f"({{0}} * ({_horner(_ERFINV_CENTRE, f'({_ERFINV_W} - f32(2.5))')} if {_ERFINV_W} < f32(5.0) else "
               f"{_horner(_ERFINV_TAIL, f'(math.sqrt({_ERFINV_W}) - f32(3.0))')}))")


def bitwise(name: str, func_name: str, symbol: str) -> OpDef:
    """A broadcasting bit operation on two integer (or bool) operands of one dtype, as MindSpore's
    BitwiseAnd/Or/Xor; floats are refused. Its float lowering is the int one: the fusion pass fuses
    float values only, so it is never compiled."""
    expr = f"({{0}} {symbol} {{1}})"
    integers = tuple(d for d in NUMBER if d not in FLOATS) + ("bool",)

    def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
        check_arity(sig, 2, ("x", "y"))
        dtype = same_dtype(sig, integers)
        return (TensorDesc(broadcast_shapes(sig, [d.shape for d in sig.inputs]), dtype),)

    return loop_op(name, func_name, infer, Elementwise(2, expr, expr), no_grad,
                   Exposure((name,), (func_name,), generated=True))


def typed(name: str, func_name: str, arity: int, float_expr: str | None, int_expr: str | None,
          dtypes: tuple[str, ...], generated: bool) -> OpDef:
    """A broadcasting op of ``arity`` operands of one dtype among ``dtypes`` (MindSpore's list: the shifts take
    integers, Rint floats), with no gradient; ``generated``: the front end makes its
    primitive and function, else they are written by hand (MindSpore defines them in array_ops).
    An integer-only op's float lowering is its int one (never compiled: fusion takes floats only)."""
    lowering = Elementwise(arity, float_expr or int_expr, int_expr)
    names = ("x", "y")[:arity]

    def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
        check_arity(sig, arity, names)
        dtype = same_dtype(sig, dtypes)
        return (TensorDesc(broadcast_shapes(sig, [d.shape for d in sig.inputs]), dtype),)

    exposure = Exposure((name,), (func_name,), generated=True) if generated else None
    return loop_op(name, func_name, infer, lowering, no_grad, exposure)


# nextafter(x, y) without libm's nextafter (numba's needs a runtime symbol a kernel cannot link, as do
# frexp/ldexp): x plus or minus one unit in the last place, eps times the power of two at or below |x|
# (half that stepping toward zero from a power of two), at least the smallest subnormal; NaN in, NaN out;
# x == y gives y; from 0 the smallest subnormal toward y; from +-inf the largest finite. The register's
# precision picks the float32 or float64 constants (1 + 2**-30 rounds to 1 only in float32): the float64
# kernel is the float32 source re-typed.
_IS_F32 = "(f32(1.0) + f32(9.313225746154785e-10) == f32(1.0))"
_POW2 = "math.pow(2.0, np.floor(math.log2(abs(float({0})))))"
_FLOOR_POW2 = f"({_POW2} * 0.5 if {_POW2} > abs({{0}}) else {_POW2} * 2.0 if {_POW2} * 2.0 <= abs({{0}}) else {_POW2})"
_ULP = (f"max({_FLOOR_POW2} * (1.1920928955078125e-07 if {_IS_F32} else 2.220446049250313e-16) * "
        f"(0.5 if (({{1}} > {{0}}) != ({{0}} > f32(0.0))) and abs({{0}}) == {_FLOOR_POW2} else 1.0), "
        f"(1.401298464324817e-45 if {_IS_F32} else 5e-324))")
NEXTAFTER = ("({0} + {1} if ({0} != {0} or {1} != {1}) else {1} if {0} == {1} else "
             f"math.copysign((3.4028234663852886e38 if {_IS_F32} else 1.7976931348623157e308), {{0}}) "
             "if math.isinf({0}) else "
             f"math.copysign((1.401298464324817e-45 if {_IS_F32} else 5e-324), {{1}}) if {{0}} == f32(0.0) else "
             f"{{0}} + (1.0 if {{1}} > {{0}} else -1.0) * {_ULP})")

OPS: tuple[OpDef, ...] = (
    unary("Square", "square", "{0} * {0}", "{0} * {0}",
          grad=_unary_rule(lambda b, x, out: b.op("Mul", x, _k(b, 2.0, x)))),
    unary("Neg", "neg", "-{0}", "-{0}", grad=_g_neg),
    unary("Abs", "abs", "abs({0})", "abs({0})",
          grad=_unary_rule(lambda b, x, out: b.op("Sub", _mask(b, "Greater", x, _k(b, 0.0, x)),
                                                   _mask(b, "Less", x, _k(b, 0.0, x))))),
    unary("Exp", "exp", "fexp({0})", grad=_unary_rule(lambda b, x, out: out)),
    unary("Log", "log", "math.log({0})", grad=_g_log),
    unary("Sqrt", "sqrt", "math.sqrt({0})", grad=_g_sqrt),
    unary("Rsqrt", "rsqrt", "fdiv(f32(1.0), math.sqrt({0}))",      # d x^-1/2 = -0.5 out^3
          grad=_unary_rule(lambda b, x, out: b.op("Mul", _k(b, -0.5, x), b.op("Mul", out, b.op("Mul", out, out))))),
    unary("ReLU", "relu", "pick({0} < f32(0.0), f32(0.0), {0})", "max({0}, i64(0))",
          grad=lambda b, c: (b.op("ReluGrad", c.douts[0], c.outputs[0]),)),
    unary("Sigmoid", "sigmoid", "fdiv(f32(1.0), f32(1.0) + fexp(-{0}))",
          grad=_unary_rule(lambda b, x, out: b.op("Mul", out, b.op("Sub", _k(b, 1.0, out), out)))),
    unary("Tanh", "tanh", "math.tanh({0})",
          grad=_unary_rule(lambda b, x, out: b.op("Sub", _k(b, 1.0, out), b.op("Mul", out, out)))),
    # MindSpore's GeLU: the tanh approximation, 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).
    # ops.gelu takes an `approximate` argument, so the functional form is written by hand.
    unary("GeLU", "gelu", "f32(0.5) * {0} * (f32(1.0) + math.tanh(f32(0.7978845608028654) * "
          "({0} + f32(0.044715) * {0} * {0} * {0})))", primitives=("GeLU", "GELU"), functions=(),
          grad=_unary_rule(_gelu_local)),
    unary("Reciprocal", "reciprocal", "fdiv(f32(1.0), {0})",         # d 1/x = -out^2
          grad=_unary_rule(lambda b, x, out: b.op("Neg", b.op("Mul", out, out)))),
    unary("Floor", "floor", "f32(np.floor({0}))", grad=no_grad),
    unary("Ceil", "ceil", "f32(np.ceil({0}))", grad=no_grad),
    unary("Sin", "sin", "math.sin({0})", grad=_unary_rule(lambda b, x, out: b.op("Cos", x))),
    unary("Cos", "cos", "math.cos({0})", grad=_unary_rule(lambda b, x, out: b.op("Neg", b.op("Sin", x)))),
    # MobileNet's activations: ReLU6 = min(max(x, 0), 6), HSigmoid = ReLU6(x + 3) / 6, HSwish = x * HSigmoid(x);
    # NaN propagates through each, and their gradients are MindSpore's (0 outside the open linear ranges)
    unary("ReLU6", "relu6", "pick({0} < f32(0.0), f32(0.0), pick({0} > f32(6.0), f32(6.0), {0}))",
          grad=_unary_rule(lambda b, x, out: _between(b, x, 0.0, 6.0))),
    unary("HSigmoid", "hard_sigmoid", "fdiv(" + _RELU6_OF_X_PLUS_3 + ", f32(6.0))", functions=("hardsigmoid",),
          grad=_unary_rule(lambda b, x, out: b.op("Div", _between(b, x, -3.0, 3.0), _k(b, 6.0, x)))),
    unary("HSwish", "hard_swish", "{0} * fdiv(" + _RELU6_OF_X_PLUS_3 + ", f32(6.0))", functions=("hardswish",),
          grad=_unary_rule(_hswish_local)),
    # MindSpore's ReluGrad(dy, y): dy where the ReLU output y > 0, else dy * 0 (so NaN/inf in dy
    # propagate as through a multiply by the mask); one kernel where the rule would need three
    binary("ReluGrad", "relu_grad", "pick({1} > f32(0.0), {0} * f32(1.0), {0} * f32(0.0))", exposed=False,
           grad=lambda b, c: (b.op("ReluGrad", c.douts[0], c.inputs[1]), None)),
    # MindSpore's Assign kernel on a tensor (``ops.assign`` of a kernel output in a graph): the value copied into
    # the tensor's own memory (graph.passes.write_updates_in_place aliases it there); a Parameter's Assign is
    # the graph's update, not this op
    binary("Assign", "assign", "{1}", "{1}", exposed=False, grad=no_grad),
    binary("Add", "add", "{0} + {1}", "{0} + {1}",
           grad=_binary_rule(lambda b, g, x, y, out: g, lambda b, g, x, y, out: g)),
    binary("Sub", "sub", "{0} - {1}", "{0} - {1}",
           grad=_binary_rule(lambda b, g, x, y, out: g, lambda b, g, x, y, out: b.op("Neg", g))),
    binary("Mul", "mul", "{0} * {1}", "{0} * {1}",
           grad=_binary_rule(lambda b, g, x, y, out: b.op("Mul", g, y), lambda b, g, x, y, out: b.op("Mul", g, x))),
    # int32 Div truncates toward zero and x / 0 = 0; float division is IEEE (x / 0 = inf or nan)
    binary("Div", "div", "fdiv({0}, {1})", "sdiv({0}, {1})", primitives=("Div", "RealDiv"),
           grad=_binary_rule(lambda b, g, x, y, out: b.op("Div", g, y),
                             lambda b, g, x, y, out: b.op("Neg", b.op("Div", b.op("Mul", g, out), y)))),
    # NaN-propagating like numpy.maximum / numpy.minimum; ties send the gradient to x, as MindSpore does
    binary("Maximum", "maximum", "nanmax({1}, {0})", "max({0}, {1})",
           grad=_binary_rule(lambda b, g, x, y, out: b.op("Mul", g, _mask(b, "GreaterEqual", x, y)),
                             lambda b, g, x, y, out: b.op("Mul", g, _mask(b, "Less", x, y)))),
    binary("Minimum", "minimum", "nanmin({1}, {0})", "min({0}, {1})",
           grad=_binary_rule(lambda b, g, x, y, out: b.op("Mul", g, _mask(b, "LessEqual", x, y)),
                             lambda b, g, x, y, out: b.op("Mul", g, _mask(b, "Greater", x, y)))),
    binary("Pow", "pow", "math.pow({0}, {1})", "ipow({0}, {1})",
           grad=_binary_rule(lambda b, g, x, y, out: b.op("Mul", g, b.op("Mul", y, b.op(
               "Pow", x, b.op("Sub", y, _k(b, 1.0, y))))), _g_pow_y)),
    # Cast is a no-op on registers: the store converts to the output dtype
    loop_op("Cast", "cast", infer_cast, Elementwise(1, "{0}", "{0}"), _g_cast,
            frontend=Exposure(("Cast",), ("cast",))),
    loop_op("BiasAdd", "bias_add", infer_bias_add, grad=_g_bias_add,
            frontend=Exposure(("BiasAdd",), ("bias_add",))),
    loop_op("BroadcastTo", "broadcast_to", infer_broadcast_to, grad=_g_broadcast_to,
            frontend=Exposure(("BroadcastTo",), ("broadcast_to",))),
    # ---- math ops (MindSpore's math_ops): float-only unless an int lowering is given ----
    unary("Log1p", "log1p", "math.log1p({0})",
          grad=_unary_rule(lambda b, x, out: b.op("Reciprocal", b.op("Add", x, _k(b, 1.0, x))))),
    unary("Expm1", "expm1", "math.expm1({0})", functions=("expm1", "tensor_expm1"),
          grad=_unary_rule(lambda b, x, out: b.op("Add", out, _k(b, 1.0, out)))),
    unary("Erf", "erf", "math.erf({0})", grad=_unary_rule(lambda b, x, out: _erf_slope(b, x, 1.1283791670955126))),
    unary("Erfinv", "erfinv", ERFINV_EXPR,          # d erfinv(x) = sqrt(pi) / 2 * exp(erfinv(x)^2)
          grad=_unary_rule(lambda b, x, out: b.op("Mul", _k(b, 0.886226925452758, x),
                                                   b.op("Exp", b.op("Mul", out, out))))),
    unary("Erfc", "erfc", "math.erfc({0})",
          grad=_unary_rule(lambda b, x, out: _erf_slope(b, x, -1.1283791670955126))),
    unary("Sinh", "sinh", "math.sinh({0})", grad=_unary_rule(lambda b, x, out: b.op("Cosh", x))),
    unary("Cosh", "cosh", "math.cosh({0})", grad=_unary_rule(lambda b, x, out: b.op("Sinh", x))),
    unary("Tan", "tan", "math.tan({0})",                               # d tan = 1 + tan^2
          grad=_unary_rule(lambda b, x, out: _one_plus_square(b, out, 1.0))),
    unary("Asin", "asin", "math.asin({0})", functions=("asin", "arcsin"),
          grad=_unary_rule(lambda b, x, out: b.op("Rsqrt", _one_plus_square(b, x, -1.0)))),
    unary("ACos", "acos", "math.acos({0})", functions=("acos", "arccos"),
          grad=_unary_rule(lambda b, x, out: b.op("Neg", b.op("Rsqrt", _one_plus_square(b, x, -1.0))))),
    unary("Atan", "atan", "math.atan({0})", functions=("atan", "arctan"),
          grad=_unary_rule(lambda b, x, out: b.op("Reciprocal", _one_plus_square(b, x, 1.0)))),
    unary("Asinh", "asinh", "math.asinh({0})", functions=("asinh", "arcsinh"),
          grad=_unary_rule(lambda b, x, out: b.op("Rsqrt", _one_plus_square(b, x, 1.0)))),
    unary("Acosh", "acosh", "math.acosh({0})", functions=("acosh", "arccosh"),   # d = 1 / sqrt(x^2 - 1)
          grad=_unary_rule(lambda b, x, out: b.op("Rsqrt", b.op("Sub", b.op("Mul", x, x), _k(b, 1.0, x))))),
    unary("Atanh", "atanh", "math.atanh({0})", functions=("atanh", "arctanh"),
          grad=_unary_rule(lambda b, x, out: b.op("Reciprocal", _one_plus_square(b, x, -1.0)))),
    # sign(NaN) is 0 and sign(-0.0) is 0, as MindSpore computes it
    unary("Sign", "sign", "pick({0} > f32(0.0), f32(1.0), pick({0} < f32(0.0), f32(-1.0), f32(0.0)))",
          "(i64(1) if {0} > 0 else (i64(-1) if {0} < 0 else i64(0)))", grad=no_grad),
    # halves round to even (MindSpore's Round, numpy's rint); ints are unchanged
    unary("Round", "round", "f32(np.rint({0}))", "{0}", grad=no_grad),
    unary("Trunc", "trunc", "f32(np.trunc({0}))", "{0}", grad=no_grad),
    # floor(x / y); int32: Python's floor division, x // 0 = 0
    binary("FloorDiv", "floor_div", "f32(np.floor(fdiv({0}, {1})))", "{0} // {1}",
           functions=("floor_div", "floordiv", "floor_divide", "tensor_floordiv"), grad=no_grad),
    binary("TruncateDiv", "truncate_div", "f32(np.trunc(fdiv({0}, {1})))", "sdiv({0}, {1})",
           functions=("truncate_div",), grad=no_grad),
    # the remainder with the divisor's sign (Python's %), x % 0 = NaN (int32: 0); d/dy = -floor(x / y)
    binary("FloorMod", "floor_mod", "{0} % {1}", "{0} % {1}",
           functions=("floor_mod", "floormod", "tensor_mod", "remainder"),
           grad=_binary_rule(lambda b, g, x, y, out: g,
                             lambda b, g, x, y, out: b.op("Mul", b.op("Neg", g), b.op("FloorDiv", x, y)))),
    # the remainder with the dividend's sign (C's fmod); d/dy = -trunc(x / y)
    binary("Mod", "mod", "f32(np.fmod({0}, {1}))", "{0} - sdiv({0}, {1}) * {1}", primitives=("Mod", "TruncateMod"),
           functions=("fmod", "truncate_mod"),
           grad=_binary_rule(lambda b, g, x, y, out: g,
                             lambda b, g, x, y, out: b.op("Mul", b.op("Neg", g), b.op("TruncateDiv", x, y)))),
    binary("Atan2", "atan2", "f32(math.atan2({0}, {1}))", functions=("atan2", "arctan2"),
           grad=_binary_rule(_g_atan2_x, _g_atan2_y)),
    binary("SquaredDifference", "squared_difference", "({0} - {1}) * ({0} - {1})", "({0} - {1}) * ({0} - {1})",
           functions=(), grad=_binary_rule(_g_squared_difference, lambda b, g, x, y, out: b.op(
               "Neg", _g_squared_difference(b, g, x, y, out)))),
    # x * log(y) (0 * log(0) is NaN, as MindSpore computes it); the x gradient is 0 where x == 0
    binary("Xlogy", "xlogy", "{0} * math.log({1})",
           grad=_binary_rule(lambda b, g, x, y, out: b.op("Mul", g, _where_zero(b, x, b.op("Log", y))),
                             lambda b, g, x, y, out: b.op("Div", b.op("Mul", g, x), y))),
    # x / y, and 0 where x == 0 (so 0 / 0 = 0)
    binary("Xdivy", "xdivy", "(f32(0.0) if {0} == f32(0.0) else fdiv({0}, {1}))",
           grad=_binary_rule(lambda b, g, x, y, out: b.op("Mul", g, _where_zero(b, x, b.op("Reciprocal", y))),
                             lambda b, g, x, y, out: b.op("Neg", b.op("Div", b.op("Mul", g, out), y)))),
    # x / y, and 0 where y == 0; its gradients are 0 there too
    binary("DivNoNan", "div_no_nan", "(f32(0.0) if {1} == f32(0.0) else fdiv({0}, {1}))", "sdiv({0}, {1})",
           functions=(), grad=_binary_rule(lambda b, g, x, y, out: b.op("DivNoNan", g, y), lambda b, g, x, y, out: b.op(
               "Neg", b.op("DivNoNan", b.op("Mul", g, out), y)))),
    loop_op("IsNan", "is_nan", infer_is_finite, Elementwise(1, "({0} != {0})", "False"),
            no_grad, Exposure(("IsNan",), ("isnan",), generated=True)),
    loop_op("IsInf", "is_inf", infer_is_finite, Elementwise(1, "math.isinf({0})", "False"),
            no_grad, Exposure(("IsInf",), ("isinf",), generated=True)),
    logical("LogicalXor", "logical_xor", 2, "(({0} != 0) != ({1} != 0))", ("logical_xor",)),
    bitwise("BitwiseAnd", "bitwise_and", "&"),
    bitwise("BitwiseOr", "bitwise_or", "|"),
    bitwise("BitwiseXor", "bitwise_xor", "^"),
    # statistics/bits round 2: integer and float-step ops (shift counts outside [0, 63] give 0, or the
    # sign for a right shift; the store wraps a left shift to the operand's width)
    typed("LeftShift", "left_shift", 2, None, "(i64(0) if ({1} < 0 or {1} > 63) else ({0} << {1}))", INTEGERS, False),
    typed("RightShift", "right_shift", 2, None, "(i64(0) if {1} < 0 else ({0} >> min({1}, i64(63))))", INTEGERS, False),
    typed("Rint", "rint", 1, "f32(np.rint({0}))", None, FLOATS, False),
    loop_op("FusedElemwise", "fused_elemwise", infer_fused),
    compare("Equal", "equal", "==", ("equal",)),
    compare("NotEqual", "not_equal", "!=", ("not_equal", "ne")),
    compare("Greater", "greater", ">", ("greater", "gt")),
    compare("GreaterEqual", "greater_equal", ">=", ("greater_equal", "ge")),
    compare("Less", "less", "<", ("less", "lt")),
    compare("LessEqual", "less_equal", "<=", ("less_equal", "le")),
    # ints are always finite; a float is finite unless it is +-inf or NaN
    loop_op("IsFinite", "is_finite", infer_is_finite, Elementwise(1, "math.isfinite({0})", "True"),
            no_grad, Exposure(("IsFinite",), ("isfinite",), generated=True)),
    logical("LogicalNot", "logical_not", 1, "({0} == 0)", ("logical_not",)),
    logical("LogicalAnd", "logical_and", 2, "({0} != 0 and {1} != 0)", ("logical_and",)),
    logical("LogicalOr", "logical_or", 2, "({0} != 0 or {1} != 0)", ("logical_or",)),
    # -(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))) in the stable form max(x, 0) - x y + log1p(exp(-|x|))
    loop_op("SigmoidCrossEntropyWithLogits", "sigmoid_cross_entropy_with_logits", infer_sigmoid_cross_entropy,
            Elementwise(2, "(({0} if {0} > f32(0.0) else f32(0.0)) - {0} * {1} + math.log1p(math.exp(-abs({0}))))"),
            _g_sigmoid_cross_entropy, Exposure(("SigmoidCrossEntropyWithLogits",), ())),
    loop_op("Select", "select", infer_select, Elementwise(3, "pick({0}, {1}, {2})", "pick({0}, {1}, {2})"),
            _g_select, Exposure(("Select",), ("select",))),
    # the next representable float after x toward y (C's nextafter), in the operands' own dtype
    typed("NextAfter", "nextafter", 2, NEXTAFTER, None, ("float32", "float64"), False),
    complex_part("Real", "real", "{0}", True),
    complex_part("Imag", "imag", "{0}", True),
    complex_part("Conj", "conj", "{0}", False),
    complex_part("Angle", "angle", "{0}", True),
    complex_part("ComplexAbs", "complex_abs", "abs({0})", True),
    loop_op("Complex", "complex", infer_complex, Elementwise(2, "complex({0}, {1})"), no_grad),
)

# op name -> scalar lowering: the steps a FusedElemwise program (or a matmul epilogue) may use
LOWERINGS: dict[str, Elementwise] = {op.name: op.elementwise for op in OPS if op.elementwise is not None}
