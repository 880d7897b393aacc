"""Data movement: Transpose, Concat, Gather. Bit copies in the storage type, no conversion.

All three split the flat output range over blocks like an elementwise op.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import nb
from .elementwise import strided_source
from .shapes import norm_axis, transpose_perm

ZERO = {"float32": "f32(0.0)", "float16": "np.uint16(0)", "int32": "np.int32(0)"}


def transpose(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    x = sig.inputs[0]
    perm = transpose_perm(sig)
    in_strides = [math.prod(x.shape[d + 1:]) for d in range(len(x.shape))]
    full = [[in_strides[p] for p in perm]]
    src = strided_source((x,), full, outputs[0].shape, ["t0 = v0"], [("t0", x.dtype)], "raw")
    cost = KernelCost(bytes=2 * x.nbytes, dtype=x.dtype)
    return nb.Built(nb.compile_source(src), nb.elementwise_blocks(x.size), cost)


def concat(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    out = outputs[0]
    axis = norm_axis(sig, sig.attr("axis", 0), len(out.shape))
    inner = math.prod(out.shape[axis + 1:])
    row = out.shape[axis] * inner
    lines = nb.HEADER + nb.views(*[(f"x{i}", i, d.dtype) for i, d in enumerate(sig.inputs)],
                                 ("y", len(sig.inputs), out.dtype))
    lines += nb.indent(nb.split_lines(str(out.size)))
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
    lines += [f"    row = lo // {max(row, 1)}", f"    while row * {row} < hi:"] + nb.indent(body, 2)
    cost = KernelCost(bytes=2 * out.nbytes, dtype=out.dtype)
    return nb.Built(nb.compile_lines(lines), nb.elementwise_blocks(out.size), cost)


def gather(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    """Out-of-range indices (negative or >= the axis size) produce zeros, never a wild read."""
    params, indices = sig.inputs
    out = outputs[0]
    axis = norm_axis(sig, sig.attr("axis", 0), len(params.shape))
    inner = math.prod(params.shape[axis + 1:])
    limit = params.shape[axis]
    count = indices.size
    lines = nb.HEADER + nb.views(("p", 0, params.dtype), ("ix", 1, "int32"), ("y", 2, out.dtype))
    lines += nb.indent(nb.split_lines(str(out.size)))
    body = [f"o = row // {max(count, 1)}", f"t = i64(ix[row % {max(count, 1)}])",
            f"start = row * {inner}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {inner})",
            f"if t >= 0 and t < {limit}:",
            f"    src = (o * {limit} + t) * {inner}",
            "    for j in range(j0, j1):", "        y[start + j] = p[src + j]",
            "else:",
            "    for j in range(j0, j1):", f"        y[start + j] = {ZERO[out.dtype]}",
            "row += 1"]
    lines += [f"    row = lo // {max(inner, 1)}", f"    while row * {inner} < hi:"] + nb.indent(body, 2)
    cost = KernelCost(bytes=2 * out.nbytes + indices.nbytes, dtype=out.dtype)
    return nb.Built(nb.compile_lines(lines), nb.elementwise_blocks(out.size), cost)


def build(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    return {"Transpose": transpose, "Concat": concat, "Gather": gather}[sig.op](sig, outputs)
