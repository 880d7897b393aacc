"""Data movement: Transpose, Concat, Gather. Bit copies in the storage type, no conversion.

All three split the flat output range over blocks like an elementwise op.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import ANY, check_arity, check_dtype, fail, norm_axis, same_dtype
from .elementwise import strided_source

ZERO = {"float32": "f32(0.0)", "float16": "np.uint16(0)", "int32": "np.int32(0)"}

# ------------------------------------------------------------------------------------------- infer


def transpose_perm(sig: OpSignature) -> tuple[int, ...]:
    rank = len(sig.inputs[0].shape)
    perm = sig.attr("perm")
    ok = (isinstance(perm, tuple) and len(perm) == rank
          and all(isinstance(p, int) and not isinstance(p, bool) and -rank <= p < rank for p in perm)
          and sorted(p % rank for p in perm) == list(range(rank)))
    if not ok:
        raise fail(sig, f"attr perm={perm!r} must be a permutation of 0..{rank - 1}")
    return tuple(p % rank for p in perm)


def infer_transpose(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, ANY, "x")
    x = sig.inputs[0].shape
    return (TensorDesc(tuple(x[p] for p in transpose_perm(sig)), dtype),)


def infer_concat(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, None)
    dtype = same_dtype(sig, ANY)
    first = sig.inputs[0].shape
    if not first:
        raise fail(sig, "inputs must have rank >= 1, got scalars")
    axis = norm_axis(sig, sig.attr("axis", 0), len(first))
    total = 0
    for i, desc in enumerate(sig.inputs):
        s = desc.shape
        if len(s) != len(first) or s[:axis] + s[axis + 1:] != first[:axis] + first[axis + 1:]:
            raise fail(sig, f"input {i} shape {s} does not match input 0 shape {first} "
                            f"outside axis {axis}")
        total += s[axis]
    return (TensorDesc(first[:axis] + (total,) + first[axis + 1:], dtype),)


def infer_gather(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("params", "indices"))
    dtype = check_dtype(sig, 0, ANY, "params")
    check_dtype(sig, 1, ("int32",), "indices")
    p = sig.inputs[0].shape
    if not p:
        raise fail(sig, "input 0 (params) must have rank >= 1, got a scalar")
    axis = norm_axis(sig, sig.attr("axis", 0), len(p))
    return (TensorDesc(p[:axis] + sig.inputs[1].shape + p[axis + 1:], dtype),)


# -------------------------------------------------------------------------------------- plan, emit

def plan_copy(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Every op of this family reads and writes its output's bytes (Gather also its indices)."""
    out = outputs[0]
    extra = sig.inputs[1].nbytes if sig.op == "Gather" else 0
    return Plan(src.elementwise_blocks(out.size), KernelCost(bytes=2 * out.nbytes + extra, dtype=out.dtype))


def emit_transpose(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    perm = transpose_perm(sig)
    in_strides = [math.prod(x.shape[d + 1:]) for d in range(len(x.shape))]
    full = [[in_strides[p] for p in perm]]
    return strided_source((x,), full, outputs[0].shape, ["t0 = v0"], [("t0", x.dtype)], "raw")


def emit_concat(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    out = outputs[0]
    axis = norm_axis(sig, sig.attr("axis", 0), len(out.shape))
    inner = math.prod(out.shape[axis + 1:])
    row = out.shape[axis] * inner
    lines = src.HEADER + src.views(*[(f"x{i}", i, d.dtype) for i, d in enumerate(sig.inputs)],
                                   ("y", len(sig.inputs), out.dtype))
    lines += src.indent(src.split_lines(str(out.size)))
    body = [f"start = row * {row}"]
    offset = 0
    for i, d in enumerate(sig.inputs):
        length = d.shape[axis] * inner
        if length:
            body += [f"s0 = max(lo, start + {offset})", f"s1 = min(hi, start + {offset + length})",
                     f"src = row * {length} - start - {offset}",
                     "for f in range(s0, s1):", f"    y[f] = x{i}[src + f]"]
        offset += length
    body.append("row += 1")
    lines += [f"    row = lo // {max(row, 1)}", f"    while row * {row} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


def emit_gather(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Out-of-range indices (negative or >= the axis size) produce zeros, never a wild read."""
    params, indices = sig.inputs
    out = outputs[0]
    axis = norm_axis(sig, sig.attr("axis", 0), len(params.shape))
    inner = math.prod(params.shape[axis + 1:])
    limit = params.shape[axis]
    count = indices.size
    lines = src.HEADER + src.views(("p", 0, params.dtype), ("ix", 1, "int32"), ("y", 2, out.dtype))
    lines += src.indent(src.split_lines(str(out.size)))
    body = [f"o = row // {max(count, 1)}", f"t = i64(ix[row % {max(count, 1)}])",
            f"start = row * {inner}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {inner})",
            f"if t >= 0 and t < {limit}:",
            f"    src = (o * {limit} + t) * {inner}",
            "    for j in range(j0, j1):", "        y[start + j] = p[src + j]",
            "else:",
            "    for j in range(j0, j1):", f"        y[start + j] = {ZERO[out.dtype]}",
            "row += 1"]
    lines += [f"    row = lo // {max(inner, 1)}", f"    while row * {inner} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


OPS: tuple[OpDef, ...] = (
    OpDef("Transpose", "transpose", infer_transpose, plan_copy, emit_transpose,
          frontend=Exposure(("Transpose",), ("transpose", "permute"))),
    OpDef("Concat", "concat", infer_concat, plan_copy, emit_concat, frontend=Exposure(("Concat",), ("concat", "cat"))),
    OpDef("Gather", "gather", infer_gather, plan_copy, emit_gather, frontend=Exposure(("Gather",), ("gather",))),
)
