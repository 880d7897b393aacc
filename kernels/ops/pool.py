"""MaxPool and AvgPool (NCHW, VALID/SAME): direct window loops, one input plane per work unit.

SAME padding is never read: windows are clipped to the input, and AvgPool divides by the number of
elements actually inside the window (padding excluded, as TensorFlow-style SAME pooling does).
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import nb
from .shapes import pool_geometry


def build(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    x = sig.inputs[0]
    dtype = x.dtype
    g = pool_geometry(sig)
    h, w, oh, ow, kh, kw = g["h"], g["w"], g["oh"], g["ow"], g["kh"], g["kw"]
    units = g["n"] * g["c"]
    lines = nb.HEADER + nb.views(("x", 0, dtype), ("y", 1, dtype))
    lines += nb.indent(nb.split_lines(str(units)))
    value = nb.load(dtype, f"x[xb + i * {w} + j]")
    if sig.op == "MaxPool":
        fold = ["m = f32(-np.inf)", "for i in range(h0, h1):", "    for j in range(w0, w1):",
                f"        v = {value}", "        m = v if (v > m or v != v) else m",
                f"y[yb + a * {ow} + b] = {nb.store(dtype, 'm')}"]
    else:
        fold = ["s = f32(0.0)", "for i in range(h0, h1):", "    for j in range(w0, w1):",
                f"        s += {value}",
                f"y[yb + a * {ow} + b] = {nb.store(dtype, 'fdiv(s, f32((h1 - h0) * (w1 - w0)))')}"]
    body = [f"xb = u * {h * w}", f"yb = u * {oh * ow}",
            f"for a in range({oh}):",
            f"    h0 = a * {g['sh']} - {g['pt']}", f"    h1 = min(h0 + {kh}, {h})", "    h0 = max(h0, 0)",
            f"    for b in range({ow}):",
            f"        w0 = b * {g['sw']} - {g['pl']}", f"        w1 = min(w0 + {kw}, {w})",
            "        w0 = max(w0, 0)"]
    body += nb.indent(fold, 2)
    lines += ["    for u in range(lo, hi):"] + nb.indent(body, 2)
    work = outputs[0].size * kh * kw
    block_dim = max(1, min(nb.MAX_BLOCKS, units, work // nb.MIN_ELEMENTS_PER_BLOCK))
    cost = KernelCost(vector_ops=work, bytes=x.nbytes + outputs[0].nbytes, dtype=dtype)
    return nb.Built(nb.compile_lines(lines), block_dim, cost)
