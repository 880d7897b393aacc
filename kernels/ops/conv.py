"""Conv2D (NCHW, groups, stride, dilation, explicit/same/valid padding) as direct loops.

Work unit = one output plane (batch image, output channel). For each input channel and kernel tap
the kernel adds weight x a shifted, strided input row to the output plane; the valid output range of
each tap is precomputed so the inner loop has no padding tests and vectorises for stride 1. float32
outputs accumulate in place; float16 outputs accumulate in a float32 workspace plane per block.
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import nb
from .shapes import conv_geometry

MIN_FLOPS_PER_BLOCK = 1 << 22     # ~1 ms of host work: smaller convolutions use fewer blocks


def tap_ranges(out: int, size: int, stride: int, pad: int, dilation: int, taps: int):
    """Per kernel tap t: [lo, hi) of outputs whose input index o*stride - pad + t*dilation is inside."""
    lo, hi = [], []
    for t in range(taps):
        shift = t * dilation - pad
        first = min(out, max(0, -(shift // stride)))
        last = min(out, max(0, (size - 1 - shift) // stride + 1))
        lo.append(first)
        hi.append(max(first, last))
    return tuple(lo), tuple(hi)


def build(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    x_desc, w_desc = sig.inputs
    dtype = x_desc.dtype
    g = conv_geometry(sig)
    n, c, h, w, oc, kh, kw = g["n"], g["c"], g["h"], g["w"], g["oc"], g["kh"], g["kw"]
    oh, ow, sh, sw, dh, dw = g["oh"], g["ow"], g["sh"], g["sw"], g["dh"], g["dw"]
    cg, ocg = c // g["group"], oc // g["group"]
    oh_lo, oh_hi = tap_ranges(oh, h, sh, g["pt"], dh, kh)
    ow_lo, ow_hi = tap_ranges(ow, w, sw, g["pl"], dw, kw)
    plane = oh * ow
    units = n * oc
    flops = 2 * units * plane * cg * kh * kw
    block_dim = max(1, min(nb.MAX_BLOCKS, units, flops // MIN_FLOPS_PER_BLOCK))
    acc_ws = dtype == "float16"

    lines = nb.HEADER + nb.views(("x", 0, dtype), ("wt", 1, dtype), ("y", 2, dtype))
    lines += [f"    OHLO = {oh_lo!r}", f"    OHHI = {oh_hi!r}",
              f"    OWLO = {ow_lo!r}", f"    OWHI = {ow_hi!r}"]
    if acc_ws:
        lines += ["    " + nb.view("acc", 3, "float32"), f"    ab = block_idx * {plane}"]
    else:
        lines += ["    acc = y"]
    lines += nb.indent(nb.split_lines(str(units)))
    body = [f"nn = u // {oc}", f"oc = u % {oc}", f"cb = (oc // {ocg}) * {cg}"]
    if not acc_ws:
        body.append(f"ab = u * {plane}")
    body += [f"for t in range({plane}):", "    acc[ab + t] = f32(0.0)",
             f"for icg in range({cg}):",
             f"    xb = (nn * {c} + cb + icg) * {h * w}",
             f"    wb = (oc * {cg} + icg) * {kh * kw}",
             f"    for r in range({kh}):",
             "        ohl = OHLO[r]", "        ohh = OHHI[r]",
             f"        for s in range({kw}):",
             f"            wv = {nb.load(dtype, f'wt[wb + r * {kw} + s]')}",
             "            owl = OWLO[s]", "            owh = OWHI[s]",
             "            for o in range(ohl, ohh):",
             f"                xo = xb + (o * {sh} - {g['pt']} + r * {dh}) * {w} - {g['pl']} + s * {dw}",
             f"                ao = ab + o * {ow}",
             "                for q in range(owl, owh):",
             f"                    acc[ao + q] += wv * {nb.load(dtype, f'x[xo + q * {sw}]')}"]
    if acc_ws:
        body += [f"yb = u * {plane}", f"for t in range({plane}):",
                 f"    y[yb + t] = {nb.store(dtype, 'acc[ab + t]')}"]
    lines += ["    for u in range(lo, hi):"] + nb.indent(body, 2)
    workspace = (block_dim * plane * 4,) if acc_ws else ()
    moved = x_desc.nbytes + w_desc.nbytes + outputs[0].nbytes
    cost = KernelCost(cube_flops=flops, bytes=moved, dtype=dtype)
    return nb.Built(nb.compile_lines(lines), block_dim, cost, workspace)
