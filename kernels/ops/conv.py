"""Conv2D (NCHW, groups, stride, dilation, explicit/same/valid padding) as direct loops.

Work unit = one output plane (batch image, output channel). For each input channel and kernel tap
the kernel adds weight x a shifted, strided input row to the output plane; the valid output range of
each tap is precomputed so the inner loop has no padding tests and vectorises for stride 1. float32
outputs accumulate in place; float16 outputs accumulate in a float32 workspace plane per block.
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.errors import check_int
from ascendemu.kernels.opdef import Exposure, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOAT, check_arity, check_format, check_rank, fail, hw_pair, int_tuple, same_dtype

MIN_FLOPS_PER_BLOCK = 1 << 22     # ~1 ms of host work: smaller convolutions use fewer blocks


def conv_geometry(sig: OpSignature) -> dict:
    """Validated Conv2D geometry: strides, dilations, explicit pads and output size."""
    x = check_rank(sig, 0, 4, "x")
    w = check_rank(sig, 1, 4, "weight")
    check_format(sig)
    n, c, h, wd = x
    group = sig.attr("group", 1)
    check_int(group, f"{sig.op}: attr group", minimum=1)
    if c % group:
        raise fail(sig, f"attr group={group!r} must divide the {c} input channels")
    out_channel = sig.attr("out_channel", w[0])
    if out_channel != w[0] or w[0] % group:
        raise fail(sig, f"attr out_channel={out_channel!r} must equal weight dim 0 ({w[0]}) "
                        f"and be divisible by group={group}")
    if w[1] * group != c:
        raise fail(sig, f"input 1 (weight) shape {w} needs {w[1] * group} input channels "
                        f"(group={group}) but x {x} has {c}")
    kh, kw = hw_pair(sig, "kernel_size", sig.attr("kernel_size", (w[2], w[3])), 1)
    if (kh, kw) != (w[2], w[3]):
        raise fail(sig, f"attr kernel_size={sig.attr('kernel_size')!r} disagrees with weight shape {w}")
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
        raise fail(sig, f"kernel {kh}x{kw} (dilation {dh}x{dw}) does not fit input {x} with pad {pad}")
    return dict(n=n, c=c, h=h, w=wd, oc=w[0], kh=kh, kw=kw, sh=sh, sw=sw, dh=dh, dw=dw,
                pt=pad[0], pl=pad[2], oh=oh, ow=ow, group=group)


def infer_conv2d(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("x", "weight"))
    dtype = same_dtype(sig, FLOAT)
    g = conv_geometry(sig)
    return (TensorDesc((g["n"], g["oc"], g["oh"], g["ow"]), dtype),)


def tap_range_lines(lo: str, hi: str, tap: str, out: int, size: int, stride: int, pad: int,
                    dilation: int) -> list[str]:
    """Kernel source for [lo, hi): the outputs whose input index o*stride - pad + tap*dilation lies
    inside the input, for a runtime tap index. Arithmetic, not a constant-tuple lookup, whose bounds
    check would leave a call to numba's exception helper (not on the loader's allowlist) in the object."""
    shift = f"({tap} * {dilation} - {pad})"
    return [f"{lo} = min({out}, max(0, -({shift} // {stride})))",
            f"{hi} = max({lo}, min({out}, max(0, ({size} - 1 - {shift}) // {stride} + 1)))"]


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x_desc, w_desc = sig.inputs
    g = conv_geometry(sig)
    units = g["n"] * g["oc"]
    plane = g["oh"] * g["ow"]
    flops = 2 * units * plane * (g["c"] // g["group"]) * g["kh"] * g["kw"]
    block_dim = max(1, min(src.MAX_BLOCKS, units, flops // MIN_FLOPS_PER_BLOCK))
    # float16 outputs accumulate in a float32 workspace plane per block
    workspace = (block_dim * plane * 4,) if x_desc.dtype == "float16" else ()
    moved = x_desc.nbytes + w_desc.nbytes + outputs[0].nbytes
    return Plan(block_dim, KernelCost(cube_flops=flops, bytes=moved, dtype=x_desc.dtype), workspace, g)


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    dtype = sig.inputs[0].dtype
    g = plan.tiling
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
             "                for q in range(owl, owh):",
             f"                    acc[ao + q] += wv * {src.load(dtype, f'x[xo + q * {sw}]')}"]
    if acc_ws:
        body += [f"yb = u * {plane}", f"for t in range({plane}):",
                 f"    y[yb + t] = {src.store(dtype, 'acc[ab + t]')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


OPS: tuple[OpDef, ...] = (
    OpDef("Conv2D", "conv2d", infer_conv2d, plan, emit, frontend=Exposure(("Conv2D",), ("conv2d",))),
)
