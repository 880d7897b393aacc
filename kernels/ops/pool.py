"""MaxPool and AvgPool (NCHW, VALID/SAME) and their gradients: direct window loops, one input plane
per work unit.

SAME padding is never read: windows are clipped to the input, and AvgPool divides by the number of
elements actually inside the window (padding excluded, as TensorFlow-style SAME pooling does).
MaxPool takes the first maximum of a window in row-major order (a later equal value does not replace
it) and propagates NaN: the first NaN of a window is its result.

The gradients (MindSpore's MaxPoolGrad(x, y, dout) and AvgPoolGrad(dout) with attr ``x_shape``) walk
the same clipped windows and scatter into their input plane, accumulating where windows overlap:
MaxPoolGrad sends each window's dout to the window's first position holding the forward result y
(the first maximum, or the first NaN when y is NaN: the position the forward kept); AvgPoolGrad
spreads dout / (the forward's divisor) over the clipped window. float32 planes accumulate in place,
float16 ones in a float32 workspace plane per block.
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOAT, check_arity, check_dtype, check_format, check_rank, fail, hw_pair, same_dtype
from .conv import shape_attr


# What the kernels read at run time (dynamic-shape kernels): sizes and SAME's pads; the window and the
# strides stay literals (they shape the loops).
RUNTIME_TILING = ("n", "c", "h", "w", "oh", "ow", "pt", "pb", "pl", "pr")


def pool_geometry(sig: OpSignature) -> dict:
    """Validated window geometry of the forward pool an op of this family computes or differentiates;
    SAME's implicit pads are ``pt, pb, pl, pr`` (top, bottom, left, right), what the ONNX export writes."""
    n, c, h, w = shape_attr(sig, "x_shape") if sig.op == "AvgPoolGrad" else check_rank(sig, 0, 4, "x")
    check_format(sig)
    kh, kw = hw_pair(sig, "kernel_size", sig.attr("kernel_size", 1), 1)
    sh, sw = hw_pair(sig, "strides", sig.attr("strides", 1), 1)
    mode = sig.attr("pad_mode", "VALID")
    mode = mode.upper() if isinstance(mode, str) else mode
    if mode == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + kh - h, 0), max((ow - 1) * sw + kw - w, 0)
        pt, pb, pl, pr = ph // 2, ph - ph // 2, pw // 2, pw - pw // 2
    elif mode == "VALID":
        oh, ow, pt, pb, pl, pr = (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0, 0, 0
        if h < kh or w < kw:
            raise fail(sig, f"attr kernel_size=({kh}, {kw}) is larger than the input {h}x{w} "
                            f"(pad_mode VALID)")
    else:
        raise fail(sig, f"attr pad_mode={sig.attr('pad_mode')!r} must be 'VALID' or 'SAME'")
    return dict(n=n, c=c, h=h, w=w, kh=kh, kw=kw, sh=sh, sw=sw, pt=pt, pb=pb, pl=pl, pr=pr, oh=oh, ow=ow)


def infer_pool(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, FLOAT, "x")
    g = pool_geometry(sig)
    return (TensorDesc((g["n"], g["c"], g["oh"], g["ow"]), dtype),)


def infer_pool_grad(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """dx of the forward input's shape; y and dout must have the forward output's shape."""
    names = ("x", "y", "dout") if sig.op == "MaxPoolGrad" else ("dout",)
    check_arity(sig, len(names), names)
    dtype = same_dtype(sig, FLOAT)
    g = pool_geometry(sig)
    forward = (g["n"], g["c"], g["oh"], g["ow"])
    for i, name in enumerate(names):
        if name != "x" and sig.inputs[i].shape != forward:
            raise fail(sig, f"input {i} ({name}) has shape {sig.inputs[i].shape} but the forward pool's output "
                            f"has shape {forward}")
    return (TensorDesc((g["n"], g["c"], g["h"], g["w"]), dtype),)


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Forward and gradient are priced alike: one vector op per (output, window element) pair."""
    dtype = sig.inputs[0].dtype
    g = pool_geometry(sig)
    units = g["n"] * g["c"]
    work = units * g["oh"] * g["ow"] * g["kh"] * g["kw"]
    block_dim = max(1, min(src.MAX_BLOCKS, units, work // src.MIN_ELEMENTS_PER_BLOCK))
    # float16 gradients accumulate in a float32 plane per block
    is_grad = sig.op in ("MaxPoolGrad", "AvgPoolGrad")
    workspace = (block_dim * g["h"] * g["w"] * 4,) if is_grad and dtype == "float16" else ()
    moved = sum(d.nbytes for d in sig.inputs) + outputs[0].nbytes
    return Plan(block_dim, KernelCost(vector_ops=work, bytes=moved, dtype=dtype), workspace, g)


def window_lines(g: dict) -> list[str]:
    """Kernel source opening the loops over output pixels (a, b) and clipping each one's window to
    rows [h0, h1) and columns [w0, w1) of the input; the caller's lines go at depth 2."""
    return [f"for a in range({g['oh']}):",
            f"    h0 = a * {g['sh']} - {g['pt']}", f"    h1 = min(h0 + {g['kh']}, {g['h']})", "    h0 = max(h0, 0)",
            f"    for b in range({g['ow']}):",
            f"        w0 = b * {g['sw']} - {g['pl']}", f"        w1 = min(w0 + {g['kw']}, {g['w']})",
            "        w0 = max(w0, 0)"]


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    h, w, oh, ow = g["h"], g["w"], g["oh"], g["ow"]
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
    body = [f"xb = u * {h * w}", f"yb = u * {oh * ow}"] + window_lines(g) + src.indent(fold, 2)
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """MaxPoolGrad / AvgPoolGrad: per input plane, zero it, then scatter every window's share of dout."""
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    w, ow = g["w"], g["ow"]
    plane = g["h"] * w
    acc_ws = dtype == "float16"
    dout = src.load(dtype, f"dy[yb + a * {ow} + b]")
    if sig.op == "MaxPoolGrad":
        lines = src.HEADER + src.views(("x", 0, dtype), ("y", 1, dtype), ("dy", 2, dtype), ("dx", 3, dtype))
        # the first position of the window holding y (NaN: the first NaN), as the forward fold kept it
        scatter = [f"m = {src.load(dtype, f'y[yb + a * {ow} + b]')}", "p = -1",
                   "for i in range(h0, h1):", "    for j in range(w0, w1):",
                   f"        v = {src.load(dtype, f'x[xb + i * {w} + j]')}",
                   "        if p < 0 and (v == m or (v != v and m != m)):",
                   f"            p = i * {w} + j",
                   "if p >= 0:",
                   f"    acc[ab + p] += {dout}"]
    else:
        lines = src.HEADER + src.views(("dy", 0, dtype), ("dx", 1, dtype))
        # the forward divides by the clipped window's size (SAME padding excluded)
        scatter = [f"d = fdiv({dout}, f32((h1 - h0) * (w1 - w0)))",
                   "for i in range(h0, h1):", "    for j in range(w0, w1):",
                   f"        acc[ab + i * {w} + j] += d"]
    if acc_ws:
        lines += ["    " + src.view("acc", len(sig.inputs) + 1, "float32"), f"    ab = block_idx * {plane}"]
    else:
        lines += ["    acc = dx"]
    lines += src.indent(src.split_lines(str(g["n"] * g["c"])))
    body = [f"xb = u * {plane}", f"yb = u * {g['oh'] * ow}"]
    if not acc_ws:
        body.append("ab = xb")
    body += [f"for t in range({plane}):", "    acc[ab + t] = f32(0.0)"] + window_lines(g) + src.indent(scatter, 2)
    if acc_ws:
        body += [f"for t in range({plane}):", f"    dx[xb + t] = {src.store(dtype, 'acc[ab + t]')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def grad_max_pool(b: GradBuilder, c: GradCall) -> tuple[int]:
    return (b.op("MaxPoolGrad", c.inputs[0], c.outputs[0], c.douts[0], **dict(c.sig.attrs)),)


def grad_avg_pool(b: GradBuilder, c: GradCall) -> tuple[int]:
    return (b.op("AvgPoolGrad", c.douts[0], x_shape=c.sig.inputs[0].shape, **dict(c.sig.attrs)),)


OPS: tuple[OpDef, ...] = (
    OpDef("MaxPool", "max_pool", infer_pool, plan, emit, grad=grad_max_pool, frontend=Exposure(("MaxPool",)),
          runtime_tiling=RUNTIME_TILING),
    OpDef("AvgPool", "avg_pool", infer_pool, plan, emit, grad=grad_avg_pool, frontend=Exposure(("AvgPool",)),
          runtime_tiling=RUNTIME_TILING),
    # MindSpore's backward primitives (TBE kernels max_pool_grad, avg_pool_grad_d)
    OpDef("MaxPoolGrad", "max_pool_grad", infer_pool_grad, plan, emit_grad, runtime_tiling=RUNTIME_TILING),
    OpDef("AvgPoolGrad", "avg_pool_grad_d", infer_pool_grad, plan, emit_grad, runtime_tiling=RUNTIME_TILING),
)
