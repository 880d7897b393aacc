"""Conv2D (NCHW, groups, stride, dilation, explicit/same/valid padding) and its two backprops.

float32 Conv2D with at least GEMM_MIN_CHANNELS output channels per group is im2col + OpenBLAS sgemm
(see :func:`emit_gemm`); the rest are direct loops. The direct Conv2D's work unit = one output plane (batch image, output channel). For each input channel and
kernel tap the kernel adds weight x a shifted, strided input row to the output plane; the valid
output range of each tap is precomputed so the inner loop has no padding tests and vectorises for
stride 1. float32 outputs accumulate in place; float16 outputs accumulate in a float32 workspace
plane per block.

The backprops (MindSpore's Conv2DBackpropInput / Conv2DBackpropFilter, built by Conv2D's backward
rule) walk the same taps and the same valid output ranges, so they are the exact adjoints of the
forward loops:

* Conv2DBackpropInput(dout, weight), attrs as Conv2D plus ``input_size``: work unit = one input
  plane (batch image, input channel); every tap scatters weight x a dout row into the strided input
  row it was read from (float16: a float32 workspace plane per block, as the forward). It is also
  MindSpore's transposed convolution (ops.Conv2DTranspose, nn.Conv2dTranspose), so it has a
  backward rule of its own: Conv2D and Conv2DBackpropFilter.
* Conv2DBackpropFilter(dout, x), attrs as Conv2D plus ``filter_size``: work unit = one (output
  channel, input channel of its group) pair, i.e. kh*kw weights; each tap sums dout x the shifted
  input over batch and output rows into a float32 row of partial sums (a workspace row per block,
  so the inner loop is an independent multiply-add per column and vectorises), then adds the row.

Blocks split work units, so each block writes its own output planes (or filter slices) only.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import FRACTAL, Gemm, KernelCost, Window, fractal_pad
from ascendemu.errors import check_int
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import norm_fusion, src
from .common import FLOAT, check_arity, check_format, check_rank, fail, hw_pair, int_tuple, same_dtype

# What the kernels read at run time (dynamic-shape kernels): sizes, channels, groups, pads, kernel size,
# stride, dilation and the GEMM route's bands. Only the route (GEMM, its 1x1 "direct" case, the direct
# loops) and dtype are literals: a network's convolutions of one dtype share one kernel per route and
# op (ResNet-18's 7x7/2, 3x3/1, 3x3/2 and 1x1/2 convolutions were four builds of ~0.7 CPU-s each). A
# stride-1 inner loop still vectorises: each strided loop is emitted twice, behind a run-time
# ``stride == 1`` test (:func:`strided_loop_lines`).
RUNTIME_TILING = ("n", "c", "h", "w", "oc", "oh", "ow", "group", "pt", "pb", "pl", "pr", "band", "bands",
                  "kh", "kw", "sh", "sw", "dh", "dw")
MIN_FLOPS_PER_BLOCK = 1 << 22     # ~1 ms of host work: smaller convolutions use fewer blocks
GEMM_MIN_CHANNELS = 4             # float32 Conv2D with this many output channels per group runs as GEMMs
IM2COL_FLOATS = 1 << 17           # im2col columns per band: 512 KiB, about an L2


def conv_geometry(sig: OpSignature, x: tuple[int, ...], w: tuple[int, ...], x_name: str, w_name: str) -> dict:
    """Validated geometry of a Conv2D of input shape ``x`` and weight shape ``w`` (named in errors as
    ``x_name``/``w_name``: an input of ``sig`` or a backprop's shape attribute): strides, dilations,
    explicit pads (top, bottom, left, right: ``pt, pb, pl, pr``, also what the ONNX export writes)
    and output size."""
    check_format(sig)
    n, c, h, wd = x
    group = sig.attr("group", 1)
    check_int(group, f"{sig.op}: attr group", minimum=1)
    if c % group:
        raise fail(sig, f"attr group={group!r} must divide the {c} input channels")
    out_channel = sig.attr("out_channel", w[0])
    if out_channel != w[0] or w[0] % group:
        raise fail(sig, f"attr out_channel={out_channel!r} must equal {w_name} dim 0 ({w[0]}) "
                        f"and be divisible by group={group}")
    if w[1] * group != c:
        raise fail(sig, f"{w_name} shape {w} needs {w[1] * group} input channels "
                        f"(group={group}) but {x_name} shape {x} has {c}")
    kh, kw = hw_pair(sig, "kernel_size", sig.attr("kernel_size", (w[2], w[3])), 1)
    if (kh, kw) != (w[2], w[3]):
        raise fail(sig, f"attr kernel_size={sig.attr('kernel_size')!r} disagrees with {w_name} shape {w}")
    sh, sw = hw_pair(sig, "stride", sig.attr("stride", 1), 1)
    dh, dw = hw_pair(sig, "dilation", sig.attr("dilation", 1), 1)
    mode = sig.attr("pad_mode", "valid")
    mode = mode.lower() if isinstance(mode, str) else mode
    pad = int_tuple(sig, "pad", sig.attr("pad", 0), (4,))
    if any(p < 0 for p in pad):
        raise fail(sig, f"attr pad={pad!r} must be >= 0")
    if mode not in ("valid", "same", "pad"):
        raise fail(sig, f"attr pad_mode={sig.attr('pad_mode')!r} must be 'valid', 'same' or 'pad'")
    if mode != "pad" and any(pad):
        raise fail(sig, f"attr pad={pad!r} must be 0 unless pad_mode is 'pad' (pad_mode={mode!r})")
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if mode == "same":
        oh, ow = -(-h // sh), -(-wd // sw)
        ph, pw = max((oh - 1) * sh + ekh - h, 0), max((ow - 1) * sw + ekw - wd, 0)
        pad = (ph // 2, ph - ph // 2, pw // 2, pw - pw // 2)
    oh = (h + pad[0] + pad[1] - ekh) // sh + 1
    ow = (wd + pad[2] + pad[3] - ekw) // sw + 1
    if oh < 1 or ow < 1:
        raise fail(sig, f"kernel {kh}x{kw} (dilation {dh}x{dw}) does not fit {x_name} shape {x} with pad {pad}")
    return dict(n=n, c=c, h=h, w=wd, oc=w[0], kh=kh, kw=kw, sh=sh, sw=sw, dh=dh, dw=dw,
                pt=pad[0], pb=pad[1], pl=pad[2], pr=pad[3], oh=oh, ow=ow, group=group)


# backprop -> names of its two inputs
BACKPROP_INPUTS = {"Conv2DBackpropInput": ("dout", "weight"), "Conv2DBackpropFilter": ("dout", "x")}


def shape_attr(sig: OpSignature, name: str) -> tuple[int, ...]:
    """A forward tensor's NCHW shape that a backward op takes as attribute ``name`` (Conv2DBackpropInput's
    input_size, Conv2DBackpropFilter's filter_size, AvgPoolGrad's x_shape)."""
    value = sig.attr(name)
    if not (isinstance(value, tuple) and len(value) == 4
            and all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in value)):
        raise fail(sig, f"attr {name}={value!r} must be the forward op's shape: a tuple of 4 ints >= 1 (NCHW)")
    return value


def geometry(sig: OpSignature) -> dict:
    """Validated geometry of the Conv2D that an op of this family computes (Conv2D) or differentiates
    (the backprops, whose missing forward shape is an attribute)."""
    if sig.op == "Conv2DBackpropInput":
        return conv_geometry(sig, shape_attr(sig, "input_size"), check_rank(sig, 1, 4, "weight"),
                             "attr input_size", "input 1 (weight)")
    if sig.op == "Conv2DBackpropFilter":
        return conv_geometry(sig, check_rank(sig, 1, 4, "x"), shape_attr(sig, "filter_size"),
                             "input 1 (x)", "attr filter_size")
    return conv_geometry(sig, check_rank(sig, 0, 4, "x"), check_rank(sig, 1, 4, "weight"),
                         "x", "input 1 (weight)")


def infer_conv2d(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("x", "weight"))
    dtype = same_dtype(sig, FLOAT)
    g = geometry(sig)
    return (TensorDesc((g["n"], g["oc"], g["oh"], g["ow"]), dtype),)


def infer_backprop(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Conv2DBackpropInput -> dx of shape input_size; Conv2DBackpropFilter -> dw of shape filter_size.
    dout must be the forward Conv2D's output shape."""
    check_arity(sig, 2, BACKPROP_INPUTS[sig.op])
    dtype = same_dtype(sig, FLOAT)
    g = geometry(sig)
    dout = check_rank(sig, 0, 4, "dout")
    forward = (g["n"], g["oc"], g["oh"], g["ow"])
    if dout != forward:
        raise fail(sig, f"input 0 (dout) has shape {dout} but the forward Conv2D's output has shape {forward}")
    name = "input_size" if sig.op == "Conv2DBackpropInput" else "filter_size"
    return (TensorDesc(sig.attr(name), dtype),)


def tap_range_lines(lo: str, hi: str, tap: str, out: int, size: int, stride: int, pad: int,
                    dilation: int) -> list[str]:
    """Kernel source for [lo, hi): the outputs whose input index o*stride - pad + tap*dilation lies
    inside the input, for a runtime tap index. Arithmetic, not a constant-tuple lookup, whose bounds
    check would leave a call to numba's exception helper (not on the loader's allowlist) in the object."""
    shift = f"({tap} * {dilation} - {pad})"
    return [f"{lo} = min({out}, max(0, -({shift} // {stride})))",
            f"{hi} = max({lo}, min({out}, max(0, ({size} - 1 - {shift}) // {stride} + 1)))"]


def strided_loop_lines(lo: str, hi: str, stride, statement: str) -> list[str]:
    """Kernel source for ``for q in range(lo, hi): statement``, where ``statement`` writes its strided
    index as ``{qs}`` (``q * stride``). Emitted once for stride 1 (contiguous: the loop vectorises) and
    once for any stride, chosen at run time; both compute the same values in the same order."""
    loop = f"for q in range({lo}, {hi}):"
    return ([f"if {stride} == 1:", "    " + loop, "        " + statement.format(qs="q"), "else:",
             "    " + loop, "        " + statement.format(qs=f"q * {stride}")])


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Every op of the family is priced as the forward Conv2D's cube work (the backprops multiply
    the same pairs); blocks split work units (see the module docstring)."""
    dtype = sig.inputs[0].dtype
    g = geometry(sig)
    cg = g["c"] // g["group"]
    flops = 2 * g["n"] * g["oc"] * g["oh"] * g["ow"] * cg * g["kh"] * g["kw"]
    # work units, and the float32 scratch each block needs (an accumulator plane, or a row of sums)
    if sig.op == "Conv2D":
        units, scratch = g["n"] * g["oc"], (g["oh"] * g["ow"] if dtype == "float16" else 0)
    elif sig.op == "Conv2DBackpropInput":
        units, scratch = g["n"] * g["c"], (g["h"] * g["w"] if dtype == "float16" else 0)
    else:
        units, scratch = g["oc"] * cg, g["ow"]
    block_dim = max(1, min(src.MAX_BLOCKS, units, flops // MIN_FLOPS_PER_BLOCK))
    g = dict(g, gemm=sig.op == "Conv2D" and dtype == "float32" and g["oc"] // g["group"] >= GEMM_MIN_CHANNELS,
             band=0, bands=0, direct=False)
    if g["gemm"]:
        scratch = gemm_tiling(g, block_dim)
    workspace = (block_dim * scratch * 4,) if scratch else ()
    moved = sum(d.nbytes for d in sig.inputs) + outputs[0].nbytes
    reduce_ops = 0
    if sig.attr(norm_fusion.REDUCES_OUTPUT):    # + BNTrainingReduce: float32 sums of y and y^2 per channel
        reduce_ops, moved = 4 * outputs[0].size, moved + 2 * 4 * g["oc"]
    cost = KernelCost(cube_flops=flops, vector_ops=reduce_ops, bytes=moved, dtype=dtype,
                      gemm=implicit_gemm(sig.op, g, sig.inputs))
    return Plan(block_dim, cost, workspace, g)


def cube_groups(g: dict) -> tuple[int, int, int]:
    """(products, input channels, output channels per product) of a grouped convolution as CANN's
    convolutions lay it out (TBE conv2d ``_calculate_group``, GE ConvFusionPassUtils::CalculateGroup): ``mag``
    neighbouring groups share one product, their weights block-diagonal, so that a group's channels fill the
    16-wide C0 slices (mag = min(lcm(lcm(cin_g, 16) / cin_g, lcm(cout_g, 16) / cout_g), groups)); a depthwise
    convolution runs as C / 16 products of 16 channels each, not C products padded from 1 channel to 16. One
    group: (1, C, OC) as before, padded to 16 where the product is formed."""
    group, cg, ocg = g["group"], g["c"] // g["group"], g["oc"] // g["group"]
    mag = min(math.lcm(math.lcm(cg, FRACTAL) // cg, math.lcm(ocg, FRACTAL) // ocg), group)
    return -(-group // mag), fractal_pad(mag * cg), fractal_pad(mag * ocg)


def implicit_gemm(op: str, g: dict, inputs: tuple[TensorDesc, ...]) -> Gemm:
    """The product the cube runs for ``op`` (per :func:`cube_groups` product), as Ascend's convolutions lay it
    out: channels in 16-wide C0 slices (NC1HWC0), so the contraction over (channel, tap) is
    ``fractal_pad(channels) * kh * kw``.

    Conv2D: (N*OH*OW) x OC over C*kh*kw. Conv2DBackpropInput convolves dout, zero-dilated by the
    stride, with the flipped weights: (N*H*W) x C over OC*kh*kw, i.e. stride^2 the forward's work
    (a 1x1 kernel skips the zeros: a product at the strided positions, scattered). Conv2DBackpropFilter:
    OC x (C*kh*kw) over N*OH*OW, the batch split over cores with atomic adds of the partial tiles."""
    taps = g["kh"] * g["kw"]
    group, cg, ocg = cube_groups(g)
    a, b = inputs[0].nbytes, inputs[1].nbytes
    window = fmap_window(op, g)
    if op == "Conv2D":
        return Gemm(group, g["n"] * g["oh"] * g["ow"], ocg, cg * taps, a, b, conv=True, window=window)
    if op == "Conv2DBackpropInput":
        rows = g["n"] * (g["h"] * g["w"] if taps > 1 else g["oh"] * g["ow"])
        return Gemm(group, rows, cg, ocg * taps, a, b, conv=True, window=window)
    return Gemm(group, ocg, cg * taps, g["n"] * g["oh"] * g["ow"], a, b, split_k=True, conv=True, window=window)


def fmap_window(op: str, g: dict) -> Window:
    """The feature map's rows as load3d reads them from L1 (device/cost.py ``fmap_rereads``): Conv2D's and
    Conv2DBackpropFilter's x (padded width x C padded to C0; the filter's x is its B operand), and
    Conv2DBackpropInput's dout (width padded by the dilated kernel on both sides, OC padded to C0), which it
    walks one row at a time (stride 1 over the zero-dilated rows load3d inserts). The window's width is the
    im2col rows' positions per row, whose row switches slow load3d (device/cost.py ``load3d_rate``): the
    output's width, or dx's for Conv2DBackpropInput; with the dilated kernel's height and width it says whether
    load3d runs at all (a 1x1 kernel at stride 1 goes by load2d: ``Window.img2col``)."""
    ekh, ekw = (g["kh"] - 1) * g["dh"] + 1, (g["kw"] - 1) * g["dw"] + 1
    _, cg, ocg = cube_groups(g)
    if op == "Conv2DBackpropInput":
        return Window((g["ow"] + 2 * (ekw - 1)) * ocg, ekh, 1, width=g["w"], kw=ekw)
    return Window((g["w"] + g["pl"] + g["pr"]) * cg, ekh, g["sh"], on_b=op == "Conv2DBackpropFilter", width=g["ow"],
                  kw=ekw)


def gemm_tiling(g: dict, block_dim: int) -> int:
    """Fill in the GEMM route's band of output positions per work unit (``band``, ``bands``, ``direct``)
    and return the float32 scratch a block needs for one band's im2col columns (0 when the input is
    its own column matrix: a 1x1 kernel with stride 1 and no padding)."""
    plane, depth = g["oh"] * g["ow"], g["c"] // g["group"] * g["kh"] * g["kw"]
    direct = (g["kh"], g["kw"], g["sh"], g["sw"], g["pt"], g["pb"], g["pl"], g["pr"]) == (1, 1, 1, 1, 0, 0, 0, 0)
    band = plane if direct else max(1, min(plane, IM2COL_FLOATS // depth))
    planes = g["n"] * g["group"]
    band = min(band, -(-plane // -(-block_dim // planes)))     # enough units for every block
    g.update(band=band, bands=-(-plane // band), direct=direct)
    return 0 if direct else depth * band


def emit_gemm(g: dict) -> str:
    """float32 Conv2D as GEMMs: work unit = (image, group, band of output positions); the band's
    im2col columns (depth = cg*kh*kw rows of band values, zeros where a tap reads padding) go to the
    block's workspace, then one sgemm multiplies the group's weights (ocg x depth) by them into the
    band's output columns. A 1x1 kernel with stride 1 and no padding multiplies the input directly."""
    n, c, h, w, oc, kh, kw = g["n"], g["c"], g["h"], g["w"], g["oc"], g["kh"], g["kw"]
    oh, ow, sh, sw, dh, dw = g["oh"], g["ow"], g["sh"], g["sw"], g["dh"], g["dw"]
    group, band, bands = g["group"], g["band"], g["bands"]
    cg, ocg = c // group, oc // group
    plane, depth = oh * ow, cg * kh * kw
    lines = src.HEADER + src.views(("x", 0, "float32"), ("wt", 1, "float32"), ("y", 2, "float32"))
    if not g["direct"]:
        lines += ["    " + src.view("col", 3, "float32"), f"    wsb = block_idx * {depth * band}"]
    lines += src.indent(src.balanced_split_lines(n * group * bands))
    body = [f"p0 = (u % {bands}) * {band}", f"np_ = min({plane}, p0 + {band}) - p0", f"img = u // {bands}",
            f"nn = img // {group}", f"grp = img % {group}", f"xb = (nn * {c} + grp * {cg}) * {h * w}",
            f"yo = (nn * {oc} + grp * {ocg}) * {plane} + p0"]
    if g["direct"]:
        body.append(f"sgemm(0, 0, {ocg}, np_, {depth}, wt, grp * {ocg * depth}, {depth}, x, xb + p0, {h * w}, "
                    f"y, yo, {plane})")
    else:
        fill = [f"rowb = wsb + ((icg * {kh} + r) * {kw} + s) * np_ - p0",
                *tap_range_lines("owl", "owh", "s", ow, w, sw, g["pl"], dw),
                "p = p0", "while p < p0 + np_:",
                f"    o = p // {ow}", f"    q0 = p - o * {ow}", f"    q1 = min({ow}, q0 + p0 + np_ - p)",
                f"    ih = o * {sh} - {g['pt']} + r * {dh}",
                "    d = rowb + p - q0",
                f"    if ih < 0 or ih >= {h}:",
                "        for q in range(q0, q1):", "            col[d + q] = f32(0.0)",
                "    else:",
                "        ql = min(max(q0, owl), q1)", "        qh = max(min(q1, owh), ql)",
                f"        xo = xb + icg * {h * w} + ih * {w} - {g['pl']} + s * {dw}",
                "        for q in range(q0, ql):", "            col[d + q] = f32(0.0)",
                *src.indent(strided_loop_lines("ql", "qh", sw, "col[d + q] = x[xo + {qs}]"), 2),
                "        for q in range(qh, q1):", "            col[d + q] = f32(0.0)",
                "    p += q1 - q0"]
        body += [f"for icg in range({cg}):", f"    for r in range({kh}):", f"        for s in range({kw}):"]
        body += src.indent(fill, 3)
        body.append(f"sgemm(0, 0, {ocg}, np_, {depth}, wt, grp * {ocg * depth}, {depth}, col, wsb, np_, "
                    f"y, yo, {plane})")
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    if g["gemm"]:
        return emit_gemm(g)
    n, c, h, w, oc, kh, kw = g["n"], g["c"], g["h"], g["w"], g["oc"], g["kh"], g["kw"]
    oh, ow, sh, sw, dh, dw = g["oh"], g["ow"], g["sh"], g["sw"], g["dh"], g["dw"]
    cg, ocg = c // g["group"], oc // g["group"]
    plane = oh * ow
    units = n * oc
    acc_ws = dtype == "float16"

    lines = src.HEADER + src.views(("x", 0, dtype), ("wt", 1, dtype), ("y", 2, dtype))
    if acc_ws:
        lines += ["    " + src.view("acc", 3, "float32"), f"    ab = block_idx * {plane}"]
    else:
        lines += ["    acc = y"]
    lines += src.indent(src.split_lines(str(units)))
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
             f"            wv = {src.load(dtype, f'wt[wb + r * {kw} + s]')}",
             *("            " + line for line in tap_range_lines("owl", "owh", "s", ow, w, sw, g["pl"], dw)),
             "            for o in range(ohl, ohh):",
             f"                xo = xb + (o * {sh} - {g['pt']} + r * {dh}) * {w} - {g['pl']} + s * {dw}",
             f"                ao = ab + o * {ow}",
             *src.indent(strided_loop_lines("owl", "owh", sw, "acc[ao + q] += wv * "
                                            + src.load(dtype, "x[xo + {qs}]")), 4)]
    if acc_ws:
        body += [f"yb = u * {plane}", f"for t in range({plane}):",
                 f"    y[yb + t] = {src.store(dtype, 'acc[ab + t]')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit_backprop_input(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """dx: per input plane, every (output channel of its group, tap) scatters weight x dout rows back
    to the input positions the forward loop read them from (the same valid ranges)."""
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    n, c, h, w, oc, kh, kw = g["n"], g["c"], g["h"], g["w"], g["oc"], g["kh"], g["kw"]
    oh, ow, sh, sw, dh, dw = g["oh"], g["ow"], g["sh"], g["sw"], g["dh"], g["dw"]
    cg, ocg = c // g["group"], oc // g["group"]
    plane = h * w
    acc_ws = dtype == "float16"

    lines = src.HEADER + src.views(("dy", 0, dtype), ("wt", 1, dtype), ("dx", 2, dtype))
    if acc_ws:
        lines += ["    " + src.view("acc", 3, "float32"), f"    ab = block_idx * {plane}"]
    else:
        lines += ["    acc = dx"]
    lines += src.indent(src.split_lines(str(n * c)))
    body = [f"nn = u // {c}", f"ci = u % {c}", f"icg = ci % {cg}", f"ob = (ci // {cg}) * {ocg}"]
    if not acc_ws:
        body.append(f"ab = u * {plane}")
    body += [f"for t in range({plane}):", "    acc[ab + t] = f32(0.0)",
             f"for co in range(ob, ob + {ocg}):",
             f"    db = (nn * {oc} + co) * {oh * ow}",
             f"    wb = (co * {cg} + icg) * {kh * kw}",
             f"    for r in range({kh}):",
             *("        " + line for line in tap_range_lines("ohl", "ohh", "r", oh, h, sh, g["pt"], dh)),
             f"        for s in range({kw}):",
             f"            wv = {src.load(dtype, f'wt[wb + r * {kw} + s]')}",
             *("            " + line for line in tap_range_lines("owl", "owh", "s", ow, w, sw, g["pl"], dw)),
             "            for o in range(ohl, ohh):",
             f"                xo = ab + (o * {sh} - {g['pt']} + r * {dh}) * {w} - {g['pl']} + s * {dw}",
             f"                do = db + o * {ow}",
             *src.indent(strided_loop_lines("owl", "owh", sw, "acc[xo + {qs}] += wv * "
                                            + src.load(dtype, "dy[do + q]")), 4)]
    if acc_ws:
        body += [f"xb = u * {plane}", f"for t in range({plane}):",
                 f"    dx[xb + t] = {src.store(dtype, 'acc[ab + t]')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit_backprop_filter(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """dw: per (output channel, input channel of its group), each tap's weight is the sum over batch
    and output pixels of dout x the input pixel the forward loop multiplied it with."""
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    n, c, h, w, oc, kh, kw = g["n"], g["c"], g["h"], g["w"], g["oc"], g["kh"], g["kw"]
    oh, ow, sh, sw, dh, dw = g["oh"], g["ow"], g["sh"], g["sw"], g["dh"], g["dw"]
    cg, ocg = c // g["group"], oc // g["group"]

    lines = src.HEADER + src.views(("dy", 0, dtype), ("x", 1, dtype), ("dwt", 2, dtype), ("part", 3, "float32"))
    lines += [f"    pb = block_idx * {ow}"] + src.indent(src.split_lines(str(oc * cg)))
    body = [f"co = u // {cg}", f"ci = (co // {ocg}) * {cg} + u % {cg}",
            f"for r in range({kh}):",
            *("    " + line for line in tap_range_lines("ohl", "ohh", "r", oh, h, sh, g["pt"], dh)),
            f"    for s in range({kw}):",
            *("        " + line for line in tap_range_lines("owl", "owh", "s", ow, w, sw, g["pl"], dw)),
            "        for q in range(owl, owh):",
            "            part[pb + q] = f32(0.0)",
            f"        for nn in range({n}):",
            f"            xb = (nn * {c} + ci) * {h * w} + (r * {dh} - {g['pt']}) * {w} + s * {dw} - {g['pl']}",
            f"            db = (nn * {oc} + co) * {oh * ow}",
            "            for o in range(ohl, ohh):",
            f"                xo = xb + o * {sh * w}",
            f"                do = db + o * {ow}",
            *src.indent(strided_loop_lines("owl", "owh", sw, "part[pb + q] += " + src.load(dtype, "dy[do + q]")
                                           + " * " + src.load(dtype, "x[xo + {qs}]")), 4),
            "        t = f32(0.0)",
            "        for q in range(owl, owh):",
            "            t += part[pb + q]",
            f"        dwt[u * {kh * kw} + r * {kw} + s] = {src.store(dtype, 't')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def grad_conv2d(b: GradBuilder, c: GradCall) -> tuple[int | None, int | None]:
    """dx = Conv2DBackpropInput(dout, w), dw = Conv2DBackpropFilter(dout, x), each only if wanted
    (a network's first layer needs no dx). The backprops take the forward attrs plus its shapes."""
    x, w = c.inputs
    (dout,) = c.douts
    attrs = dict(c.sig.attrs)
    x_shape, w_shape = (d.shape for d in c.sig.inputs)
    dx = b.op("Conv2DBackpropInput", dout, w, input_size=x_shape, **attrs) if c.wants[0] else None
    dw = b.op("Conv2DBackpropFilter", dout, x, filter_size=w_shape, **attrs) if c.wants[1] else None
    return dx, dw


def grad_backprop_input(b: GradBuilder, c: GradCall) -> tuple[int | None, int | None]:
    """Conv2DBackpropInput as a forward op (Conv2DTranspose, nn.Conv2dTranspose) is the adjoint of
    x -> Conv2D(x, w): its input gradient is Conv2D(dout, w), its weight gradient
    Conv2DBackpropFilter(its input, dout), as MindSpore's bprop builds them."""
    dy, w = c.inputs
    (dout,) = c.douts
    attrs = {k: v for k, v in c.sig.attrs if k != "input_size"}
    ddy = b.op("Conv2D", dout, w, **attrs) if c.wants[0] else None
    dw = (b.op("Conv2DBackpropFilter", dy, dout, filter_size=c.sig.inputs[1].shape, **attrs)
          if c.wants[1] else None)
    return ddy, dw


OPS: tuple[OpDef, ...] = (
    OpDef("Conv2D", "conv2d", infer_conv2d, plan, emit, grad=grad_conv2d,
          frontend=Exposure(("Conv2D",), ("conv2d",)), runtime_tiling=RUNTIME_TILING),
    # MindSpore's backward primitives (TBE kernels conv2d_backprop_*_d: shapes as attributes)
    OpDef("Conv2DBackpropInput", "conv2d_backprop_input_d", infer_backprop, plan, emit_backprop_input,
          grad=grad_backprop_input, frontend=Exposure(("Conv2DBackpropInput", "Conv2DTranspose")),
          runtime_tiling=RUNTIME_TILING),
    OpDef("Conv2DBackpropFilter", "conv2d_backprop_filter_d", infer_backprop, plan, emit_backprop_filter,
          runtime_tiling=RUNTIME_TILING),
)
