"""Row-wise normalisations: Softmax, LogSoftmax, LayerNorm, and inference BatchNorm.

Softmax/LogSoftmax and LayerNorm split rows over blocks (a row is the reduced axis, strided when the
softmax axis is not innermost); statistics accumulate in float64. BatchNorm splits the flat range
like an elementwise op, with per-channel constants loaded once per contiguous spatial run.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import nb
from .shapes import layer_norm_axes, softmax_axis


def row_blocks(rows: int, size: int) -> int:
    return max(1, min(nb.MAX_BLOCKS, rows, size // nb.MIN_ELEMENTS_PER_BLOCK))


def softmax(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    x = sig.inputs[0]
    dtype = x.dtype
    axis = softmax_axis(sig)
    length, inner = x.shape[axis], math.prod(x.shape[axis + 1:])
    rows = math.prod(x.shape[:axis]) * inner

    def at(j: str) -> str:
        return nb.load(dtype, f"x[base + {j} * {inner}]" if inner != 1 else f"x[base + {j}]")

    def out(j: str) -> str:
        return f"y[base + {j} * {inner}]" if inner != 1 else f"y[base + {j}]"

    first = f"(u // {inner}) * {length * inner} + u % {inner}" if inner != 1 else f"u * {length}"
    body = [f"base = {first}",
            "m = f32(-np.inf)",
            f"for j in range({length}):",
            f"    v = {at('j')}",
            "    m = v if (v > m or v != v) else m",
            "s = f64(0.0)",
            f"for j in range({length}):",
            f"    s += math.exp({at('j')} - m)"]
    if sig.op == "Softmax":
        body += ["s32 = f32(s)", f"for j in range({length}):",
                 f"    {out('j')} = " + nb.store(dtype, "fdiv(math.exp(" + at("j") + " - m), s32)")]
    else:
        body += ["ls = f32(math.log(s))", f"for j in range({length}):",
                 f"    {out('j')} = " + nb.store(dtype, "(" + at("j") + " - m) - ls")]
    lines = nb.HEADER + nb.views(("x", 0, dtype), ("y", 1, dtype))
    lines += nb.indent(nb.split_lines(str(rows)))
    lines += ["    for u in range(lo, hi):"] + nb.indent(body, 2)
    cost = KernelCost(vector_ops=4 * x.size, bytes=2 * x.nbytes, dtype=dtype)
    return nb.Built(nb.compile_lines(lines), row_blocks(rows, x.size), cost)


def layer_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    x, gamma, _ = sig.inputs
    dtype = x.dtype
    norm, _ = layer_norm_axes(sig)
    eps = float(sig.attr("epsilon", 1e-7))
    rows, length, params = math.prod(x.shape[:norm]), math.prod(x.shape[norm:]), gamma.size

    def scaled(j: str, p: str) -> str:
        value = f"f32((({nb.load(dtype, f'x[base + {j}]')} - mean) * rstd))"
        return nb.store(dtype, f"{value} * {nb.load(dtype, f'g[{p}]')} + {nb.load(dtype, f'b[{p}]')}")

    body = [f"base = u * {length}", "s = f64(0.0)",
            f"for j in range({length}):", f"    s += {nb.load(dtype, 'x[base + j]')}",
            f"mean = fdiv(s, f64({float(max(length, 1))!r}))", "ss = f64(0.0)",
            f"for j in range({length}):", f"    d = {nb.load(dtype, 'x[base + j]')} - mean",
            "    ss += d * d",
            f"var = fdiv(ss, f64({float(max(length, 1))!r}))",
            f"rstd = fdiv(f64(1.0), math.sqrt(var + f64({eps!r})))"]
    if params == length:
        body += [f"for j in range({length}):", f"    y[base + j] = {scaled('j', 'j')}"]
    elif params > length:       # gamma spans some normalised rows too: offset by the row
        body += [f"pb = (u % {params // length}) * {length}",
                 f"for j in range({length}):", f"    y[base + j] = {scaled('j', 'pb + j')}"]
    else:                       # gamma repeats within a row
        body += [f"for q in range({length // params}):", f"    for p in range({params}):",
                 f"        y[base + q * {params} + p] = {scaled(f'q * {params} + p', 'p')}"]
    body += [f"mo[u] = {nb.store(dtype, 'mean')}", f"vo[u] = {nb.store(dtype, 'var')}"]
    lines = nb.HEADER + ["    " + nb.view(name, i, dtype)
                      for i, name in enumerate(("x", "g", "b", "y", "mo", "vo"))]
    lines += nb.indent(nb.split_lines(str(rows)))
    lines += ["    for u in range(lo, hi):"] + nb.indent(body, 2)
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    cost = KernelCost(vector_ops=8 * x.size, bytes=moved, dtype=dtype)
    return nb.Built(nb.compile_lines(lines), row_blocks(rows, x.size), cost)


def batch_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    x = sig.inputs[0]
    dtype = x.dtype
    channels, spatial = x.shape[1], math.prod(x.shape[2:])
    eps = float(sig.attr("epsilon", 1e-5))
    names = ("x", "scale", "bias", "mean", "var")
    p = {name: sig.inputs[i].dtype for i, name in enumerate(names)}
    lines = nb.HEADER + nb.views(*[(name, i, sig.inputs[i].dtype) for i, name in enumerate(names)],
                                 ("y", 5, dtype))
    lines += nb.indent(nb.split_lines(str(x.size)))
    body = [f"c = row % {channels}",
            f"m = {nb.load(p['mean'], 'mean[c]')}",
            f"sd = math.sqrt({nb.load(p['var'], 'var[c]')} + f32({eps!r}))",
            f"a = fdiv({nb.load(p['scale'], 'scale[c]')}, sd)",
            f"bb = {nb.load(p['bias'], 'bias[c]')}",
            f"start = row * {spatial}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {spatial})",
            "for j in range(j0, j1):",
            "    y[start + j] = " + nb.store(dtype, "(" + nb.load(dtype, "x[start + j]") + " - m) * a + bb"),
            "row += 1"]
    lines += [f"    row = lo // {max(spatial, 1)}", f"    while row * {spatial} < hi:"] + nb.indent(body, 2)
    moved = sum(d.nbytes for d in sig.inputs) + outputs[0].nbytes
    cost = KernelCost(vector_ops=2 * x.size, bytes=moved, dtype=dtype)
    return nb.Built(nb.compile_lines(lines), nb.elementwise_blocks(x.size), cost)


def build(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    if sig.op == "LayerNorm":
        return layer_norm(sig, outputs)
    if sig.op == "BatchNorm":
        return batch_norm(sig, outputs)
    return softmax(sig, outputs)
