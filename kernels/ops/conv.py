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


def tap_range_lines(lo: str, hi: str, tap: str, out: int, size: int, stride: int, pad: int,
                    dilation: int) -> list[str]:
    """Kernel source for [lo, hi): the outputs whose input index o*stride - pad + tap*dilation lies
    inside the input, for a runtime tap index. Arithmetic, not a constant-tuple lookup, whose bounds
    check would leave a call to numba's exception helper (not on the loader's allowlist) in the object."""
    shift = f"({tap} * {dilation} - {pad})"
    return [f"{lo} = min({out}, max(0, -({shift} // {stride})))",
            f"{hi} = max({lo}, min({out}, max(0, ({size} - 1 - {shift}) // {stride} + 1)))"]


def build(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    x_desc, w_desc = sig.inputs
    dtype = x_desc.dtype
    g = conv_geometry(sig)
    n, c, h, w, oc, kh, kw = g["n"], g["c"], g["h"], g["w"], g["oc"], g["kh"], g["kw"]
    oh, ow, sh, sw, dh, dw = g["oh"], g["ow"], g["sh"], g["sw"], g["dh"], g["dw"]
    cg, ocg = c // g["group"], oc // g["group"]
    plane = oh * ow
    units = n * oc
    flops = 2 * units * plane * cg * kh * kw
    block_dim = max(1, min(nb.MAX_BLOCKS, units, flops // MIN_FLOPS_PER_BLOCK))
    acc_ws = dtype == "float16"

    lines = nb.HEADER + nb.views(("x", 0, dtype), ("wt", 1, dtype), ("y", 2, dtype))
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
             *("        " + line for line in tap_range_lines("ohl", "ohh", "r", oh, h, sh, g["pt"], dh)),
             f"        for s in range({kw}):",
             f"            wv = {nb.load(dtype, f'wt[wb + r * {kw} + s]')}",
             *("            " + line for line in tap_range_lines("owl", "owh", "s", ow, w, sw, g["pl"], dw)),
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
