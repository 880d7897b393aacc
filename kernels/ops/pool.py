"""MaxPool and AvgPool (NCHW, VALID/SAME): direct window loops, one input plane per work unit.

SAME padding is never read: windows are clipped to the input, and AvgPool divides by the number of
elements actually inside the window (padding excluded, as TensorFlow-style SAME pooling does).
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOAT, check_arity, check_dtype, check_format, check_rank, fail, hw_pair


def pool_geometry(sig: OpSignature) -> dict:
    n, c, h, w = check_rank(sig, 0, 4, "x")
    check_format(sig)
    kh, kw = hw_pair(sig, "kernel_size", sig.attr("kernel_size", 1), 1)
    sh, sw = hw_pair(sig, "strides", sig.attr("strides", 1), 1)
    mode = sig.attr("pad_mode", "VALID")
    mode = mode.upper() if isinstance(mode, str) else mode
    if mode == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + kh - h, 0), max((ow - 1) * sw + kw - w, 0)
        pt, pl = ph // 2, pw // 2
    elif mode == "VALID":
        oh, ow, pt, pl = (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0
        if h < kh or w < kw:
            raise fail(sig, f"attr kernel_size=({kh}, {kw}) is larger than the input {h}x{w} "
                            f"(pad_mode VALID)")
    else:
        raise fail(sig, f"attr pad_mode={sig.attr('pad_mode')!r} must be 'VALID' or 'SAME'")
    return dict(n=n, c=c, h=h, w=w, kh=kh, kw=kw, sh=sh, sw=sw, pt=pt, pl=pl, oh=oh, ow=ow)


def infer_pool(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, FLOAT, "x")
    g = pool_geometry(sig)
    return (TensorDesc((g["n"], g["c"], g["oh"], g["ow"]), dtype),)


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x = sig.inputs[0]
    g = pool_geometry(sig)
    units = g["n"] * g["c"]
    work = outputs[0].size * g["kh"] * g["kw"]
    block_dim = max(1, min(src.MAX_BLOCKS, units, work // src.MIN_ELEMENTS_PER_BLOCK))
    cost = KernelCost(vector_ops=work, bytes=x.nbytes + outputs[0].nbytes, dtype=x.dtype)
    return Plan(block_dim, cost, (), g)


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    h, w, oh, ow, kh, kw = g["h"], g["w"], g["oh"], g["ow"], g["kh"], g["kw"]
    units = g["n"] * g["c"]
    lines = src.HEADER + src.views(("x", 0, dtype), ("y", 1, dtype))
    lines += src.indent(src.split_lines(str(units)))
    value = src.load(dtype, f"x[xb + i * {w} + j]")
    if sig.op == "MaxPool":
        fold = ["m = f32(-np.inf)", "for i in range(h0, h1):", "    for j in range(w0, w1):",
                f"        v = {value}", "        m = v if (v > m or v != v) else m",
                f"y[yb + a * {ow} + b] = {src.store(dtype, 'm')}"]
    else:
        fold = ["s = f32(0.0)", "for i in range(h0, h1):", "    for j in range(w0, w1):",
                f"        s += {value}",
                f"y[yb + a * {ow} + b] = {src.store(dtype, 'fdiv(s, f32((h1 - h0) * (w1 - w0)))')}"]
    body = [f"xb = u * {h * w}", f"yb = u * {oh * ow}",
            f"for a in range({oh}):",
            f"    h0 = a * {g['sh']} - {g['pt']}", f"    h1 = min(h0 + {kh}, {h})", "    h0 = max(h0, 0)",
            f"    for b in range({ow}):",
            f"        w0 = b * {g['sw']} - {g['pl']}", f"        w1 = min(w0 + {kw}, {w})",
            "        w0 = max(w0, 0)"]
    body += src.indent(fold, 2)
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


OPS: tuple[OpDef, ...] = (
    OpDef("MaxPool", "max_pool", infer_pool, plan, emit, frontend=Exposure(("MaxPool",))),
    OpDef("AvgPool", "avg_pool", infer_pool, plan, emit, frontend=Exposure(("AvgPool",))),
)
