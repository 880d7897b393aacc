"""Max and average pooling (NCHW 2-D, NCDHW 3-D) and their gradients: direct window loops, one input
plane (one (n, c) volume) per work unit. A 2-D pool is the 3-D one with depth 1.

Windows. Per axis of input size ``s``, window ``k``, stride ``st``, dilation ``dl`` and pads ``p0, p1``,
output ``o`` reads taps ``o * st - p0 + t * dl`` (t < k) that lie inside the input: padding is never read
(max: padding is -inf; mean: see the divisor). 2-D MaxPool/AvgPool take MindSpore's ``pad_mode``
(VALID/SAME, TensorFlow-style SAME pads, the smaller half first); the 3-D ops take explicit ``pads``
(head, tail, top, bottom, left, right), ``dilation`` and ``ceil_mode`` (PyTorch's rule: the last window
must start inside the input or its head padding), which the front end computes from MindSpore's
arguments.

Max takes the first maximum of a window in (depth, row, column) order (a later equal value does not
replace it) and propagates NaN: the first NaN of a window is its result. MaxPool3DWithArgmax also gives
that position, as a flat index into the input volume (MindSpore's argmax). Mean divides the window's
sum by ``divisor_override`` if given, else by the window's size clipped to the padded input when
``count_include_pad`` (2-D SAME: clipped to the input, TensorFlow's rule).

The gradients (MindSpore's MaxPoolGrad / MaxPool3DGrad (x, y, dout) and AvgPoolGrad / AvgPool3DGrad
(dout) with attr ``x_shape``) walk the same windows per input plane: a block owns whole planes of dx,
zeroes them and adds every window's share in a fixed order, so the sums never depend on block
scheduling (ARCHITECTURE, "Scatter-adds are deterministic"). MaxPool*Grad recomputes each window's
kept position with the forward's own fold and sends it the window's dout; AvgPool*Grad spreads
dout / divisor over the window. float32 planes accumulate in place, float16 ones in a float32
workspace plane per block.
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import (FLOAT, INDEX, check_arity, check_bool, check_dtype, check_format, check_rank, fail,
                     hw_pair, int_tuple, same_dtype)
from .conv import shape_attr


# What the kernels read at run time (dynamic-shape kernels): sizes and pads; the windows, strides,
# dilations and divisor rules stay literals (they shape the loops).
RUNTIME_TILING = ("n", "c", "d", "h", "w", "od", "oh", "ow", "pf", "pk", "pt", "pb", "pl", "pr")
POOL3D = ("MaxPool3D", "AvgPool3D", "MaxPool3DGrad", "AvgPool3DGrad", "MaxPool3DWithArgmax")
MAX_OPS = ("MaxPool", "MaxPool3D", "MaxPool3DWithArgmax")
GRAD_OPS = ("MaxPoolGrad", "AvgPoolGrad", "MaxPool3DGrad", "AvgPool3DGrad")
AXES = ("d", "h", "w")


def _geometry_2d(sig: OpSignature) -> dict:
    """MaxPool/AvgPool (and grads): MindSpore's kernel_size, strides and pad_mode VALID/SAME."""
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
    return dict(n=n, c=c, d=1, h=h, w=w, kd=1, kh=kh, kw=kw, sd=1, sh=sh, sw=sw, dd=1, dh=1, dw=1,
                pf=0, pk=0, pt=pt, pb=pb, pl=pl, pr=pr, od=1, oh=oh, ow=ow, count_pad=False, divisor=0)


def _output_size(sig: OpSignature, axis: str, size: int, k: int, s: int, dl: int, p0: int, p1: int,
                 ceil: bool) -> int:
    span = size + p0 + p1 - dl * (k - 1) - 1
    if span < 0:
        raise fail(sig, f"the window along {axis} (kernel {k}, dilation {dl}) is larger than the padded input "
                        f"({size} + {p0} + {p1})")
    out = (span + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p0:    # the last window must start inside the input or its head pad
        out -= 1
    return out


def _geometry_3d(sig: OpSignature) -> dict:
    """The 3-D ops: kernel_size, strides, dilation (3 ints each), pads (6), ceil_mode,
    count_include_pad and divisor_override, as the front end resolves MindSpore's arguments."""
    if sig.op == "AvgPool3DGrad":
        shape = sig.attr("x_shape")
        if not (isinstance(shape, tuple) and len(shape) == 5 and all(isinstance(v, int) and v >= 1 for v in shape)):
            raise fail(sig, f"attr x_shape={shape!r} must be the forward input's shape: 5 ints >= 1 (NCDHW)")
        n, c, d, h, w = shape
    else:
        n, c, d, h, w = check_rank(sig, 0, 5, "x")
    check_format(sig, ("NCDHW",))
    k = int_tuple(sig, "kernel_size", sig.attr("kernel_size", 1), (3,))
    st = int_tuple(sig, "strides", sig.attr("strides", 1), (3,))
    dl = int_tuple(sig, "dilation", sig.attr("dilation", 1), (3,))
    pads = int_tuple(sig, "pads", sig.attr("pads", 0), (6,))
    if min(k + st + dl) < 1 or min(pads) < 0:
        raise fail(sig, f"attrs kernel_size={k}, strides={st}, dilation={dl} must be >= 1 and pads={pads} >= 0")
    ceil, count_pad = check_bool(sig, "ceil_mode"), sig.attr("count_include_pad", True)
    divisor = sig.attr("divisor_override", 0)
    if not isinstance(count_pad, bool) or isinstance(divisor, bool) or not isinstance(divisor, int) or divisor < 0:
        raise fail(sig, f"attrs count_include_pad={count_pad!r} must be a bool and divisor_override={divisor!r} "
                        f"an int >= 0")
    outs = [_output_size(sig, a, s, k[i], st[i], dl[i], pads[2 * i], pads[2 * i + 1], ceil)
            for i, (a, s) in enumerate(zip(AXES, (d, h, w)))]
    return dict(n=n, c=c, d=d, h=h, w=w, kd=k[0], kh=k[1], kw=k[2], sd=st[0], sh=st[1], sw=st[2],
                dd=dl[0], dh=dl[1], dw=dl[2], pf=pads[0], pk=pads[1], pt=pads[2], pb=pads[3], pl=pads[4],
                pr=pads[5], od=outs[0], oh=outs[1], ow=outs[2], count_pad=count_pad, divisor=divisor)


def pool_geometry(sig: OpSignature) -> dict:
    """Validated window geometry of the forward pool an op of this family computes or differentiates;
    the pads are ``pf, pk`` (depth head, tail) and ``pt, pb, pl, pr`` (top, bottom, left, right), what
    the ONNX export writes."""
    return _geometry_3d(sig) if sig.op in POOL3D else _geometry_2d(sig)


def _out_shape(sig: OpSignature, g: dict) -> tuple[int, ...]:
    spatial = (g["od"], g["oh"], g["ow"]) if sig.op in POOL3D else (g["oh"], g["ow"])
    return (g["n"], g["c"]) + spatial


def _in_shape(sig: OpSignature, g: dict) -> tuple[int, ...]:
    spatial = (g["d"], g["h"], g["w"]) if sig.op in POOL3D else (g["h"], g["w"])
    return (g["n"], g["c"]) + spatial


def infer_pool(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, FLOAT, "x")
    g = pool_geometry(sig)
    if sig.op not in MAX_OPS and (g["dd"], g["dh"], g["dw"]) != (1, 1, 1):
        raise fail(sig, "attr dilation must be 1 for average pooling")
    out = TensorDesc(_out_shape(sig, g), dtype)
    if sig.op == "MaxPool3DWithArgmax":
        index = sig.attr("argmax_type", "int64")
        if index not in INDEX:
            raise fail(sig, f"attr argmax_type={index!r} must be one of {INDEX}")
        return out, TensorDesc(out.shape, index)
    return (out,)


def infer_pool_grad(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """dx of the forward input's shape; y and dout must have the forward output's shape."""
    names = ("x", "y", "dout") if sig.op in ("MaxPoolGrad", "MaxPool3DGrad") else ("dout",)
    check_arity(sig, len(names), names)
    dtype = same_dtype(sig, FLOAT)
    g = pool_geometry(sig)
    forward = _out_shape(sig, g)
    for i, name in enumerate(names):
        if name != "x" and sig.inputs[i].shape != forward:
            raise fail(sig, f"input {i} ({name}) has shape {sig.inputs[i].shape} but the forward pool's output "
                            f"has shape {forward}")
    return (TensorDesc(_in_shape(sig, g), dtype),)


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Forward and gradient are priced alike: one vector op per (output, window element) pair."""
    dtype = sig.inputs[0].dtype
    g = pool_geometry(sig)
    units = g["n"] * g["c"]
    work = units * g["od"] * g["oh"] * g["ow"] * g["kd"] * g["kh"] * g["kw"]
    block_dim = max(1, min(src.MAX_BLOCKS, units, work // src.MIN_ELEMENTS_PER_BLOCK))
    # float16 gradients accumulate in a float32 plane per block
    workspace = (block_dim * g["d"] * g["h"] * g["w"] * 4,) if sig.op in GRAD_OPS and dtype == "float16" else ()
    moved = sum(d.nbytes for d in sig.inputs) + sum(o.nbytes for o in outputs)
    return Plan(block_dim, KernelCost(vector_ops=work, bytes=moved, dtype=dtype), workspace, g)


def _axis_lines(g: dict, axis: str, o: str, pad: str, tail: str, first: str, end: str, start: str) -> list[str]:
    """Kernel lines for output index ``o`` along ``axis``: the window's unclipped start ``start``, its
    first tap inside the input ``first`` and the end ``end`` of its taps inside the input."""
    k, s, dl, size = g["k" + axis], g["s" + axis], g["d" + axis], g[axis]
    lines = [f"{start} = {o} * {s} - {g[pad]}", f"{end} = min({start} + {dl * (k - 1) + 1}, {size})"]
    if dl == 1:
        return lines + [f"{first} = max({start}, 0)"]
    return lines + [f"{first} = {start}", f"if {first} < 0:", f"    {first} += ((-{first} + {dl - 1}) // {dl}) * {dl}"]


def window_lines(g: dict) -> list[str]:
    """Kernel source opening the loops over output positions (e, a, b) (depth, row, column) and
    clipping each one's window to taps in [d0, d1) x [h0, h1) x [w0, w1) of the input, step the
    dilation; the caller's lines go at depth 3."""
    return (["for e in range({}):".format(g["od"])]
            + src.indent(_axis_lines(g, "d", "e", "pf", "pk", "d0", "d1", "ds")
                         + [f"for a in range({g['oh']}):"])
            + src.indent(_axis_lines(g, "h", "a", "pt", "pb", "h0", "h1", "hs") + [f"for b in range({g['ow']}):"], 2)
            + src.indent(_axis_lines(g, "w", "b", "pl", "pr", "w0", "w1", "ws"), 3))


def _taps(g: dict, inner: list[str]) -> list[str]:
    """Loops over a window's taps (i, j, q) inside the input, ``p`` their flat index in the plane."""
    return [f"for i in range(d0, d1, {g['dd']}):", f"    for j in range(h0, h1, {g['dh']}):",
            f"        for q in range(w0, w1, {g['dw']}):", f"            p = (i * {g['h']} + j) * {g['w']} + q",
            *src.indent(inner, 3)]


def _max_fold(g: dict, dtype: str) -> list[str]:
    """``m``: the window's first maximum (or first NaN), ``at``: its flat index (-1: no tap)."""
    return ["m = f32(-np.inf)", "at = -1"] + _taps(g, [
        f"v = {src.load(dtype, 'x[xb + p]')}",
        "if at < 0 or v > m or (v != v and m == m):", "    m = v", "    at = p"])


def _divisor(g: dict) -> str:
    """The mean's divisor of the current window (see the module docstring)."""
    if g["divisor"]:
        return f"f32({g['divisor']})"
    if g["count_pad"]:
        spans = [f"(min({s} + {g['k' + a]}, {g[a]} + {g[tail]}) - {s})"
                 for a, s, tail in (("d", "ds", "pk"), ("h", "hs", "pb"), ("w", "ws", "pr"))]
        return f"f32({' * '.join(spans)})"
    return "f32((d1 - d0) * (h1 - h0) * (w1 - w0))"


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    plane, oplane = g["d"] * g["h"] * g["w"], g["od"] * g["oh"] * g["ow"]
    at = f"yb + (e * {g['oh']} + a) * {g['ow']} + b"
    specs = [("x", 0, dtype), ("y", 1, dtype)]
    if sig.op == "MaxPool3DWithArgmax":
        specs.append(("idx", 2, outputs[1].dtype))
    lines = src.HEADER + src.views(*specs)
    lines += src.indent(src.split_lines(str(g["n"] * g["c"])))
    if sig.op in MAX_OPS:
        fold = _max_fold(g, dtype) + [f"y[{at}] = {src.store(dtype, 'm')}"]
        if sig.op == "MaxPool3DWithArgmax":
            fold.append(f"idx[{at}] = {src.store(outputs[1].dtype, 'max(at, 0)')}")
    else:
        fold = ["s = f32(0.0)"] + _taps(g, [f"s += {src.load(dtype, 'x[xb + p]')}"])
        fold.append(f"y[{at}] = {src.store(dtype, f'fdiv(s, {_divisor(g)})')}")
    body = [f"xb = u * {plane}", f"yb = u * {oplane}"] + window_lines(g) + src.indent(fold, 3)
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Max/AvgPool(3D)Grad: per input plane, zero it, then add every window's share of dout."""
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    plane, oplane = g["d"] * g["h"] * g["w"], g["od"] * g["oh"] * g["ow"]
    acc_ws = dtype == "float16"
    dout = src.load(dtype, f"dy[yb + (e * {g['oh']} + a) * {g['ow']} + b]")
    if sig.op in ("MaxPoolGrad", "MaxPool3DGrad"):
        lines = src.HEADER + src.views(("x", 0, dtype), ("y", 1, dtype), ("dy", 2, dtype), ("dx", 3, dtype))
        # the position the forward kept, found by the forward's own fold
        scatter = _max_fold(g, dtype) + ["if at >= 0:", f"    acc[ab + at] += {dout}"]
    else:
        lines = src.HEADER + src.views(("dy", 0, dtype), ("dx", 1, dtype))
        scatter = [f"t = fdiv({dout}, {_divisor(g)})"] + _taps(g, ["acc[ab + p] += t"])
    if acc_ws:
        lines += ["    " + src.view("acc", len(sig.inputs) + 1, "float32"), f"    ab = block_idx * {plane}"]
    else:
        lines += ["    acc = dx"]
    lines += src.indent(src.split_lines(str(g["n"] * g["c"])))
    body = [f"xb = u * {plane}", f"yb = u * {oplane}"]
    if not acc_ws:
        body.append("ab = xb")
    body += [f"for z in range({plane}):", "    acc[ab + z] = f32(0.0)"] + window_lines(g) + src.indent(scatter, 3)
    if acc_ws:
        body += [f"for z in range({plane}):", f"    dx[xb + z] = {src.store(dtype, 'acc[ab + z]')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def grad_max_pool(b: GradBuilder, c: GradCall) -> tuple[int]:
    attrs = {k: v for k, v in dict(c.sig.attrs).items() if k != "argmax_type"}
    grad_op = "MaxPoolGrad" if c.sig.op == "MaxPool" else "MaxPool3DGrad"
    return (b.op(grad_op, c.inputs[0], c.outputs[0], c.douts[0], **attrs),)


def grad_avg_pool(b: GradBuilder, c: GradCall) -> tuple[int]:
    grad_op = "AvgPoolGrad" if c.sig.op == "AvgPool" else "AvgPool3DGrad"
    return (b.op(grad_op, c.douts[0], x_shape=c.sig.inputs[0].shape, **dict(c.sig.attrs)),)


OPS: tuple[OpDef, ...] = (
    OpDef("MaxPool", "max_pool", infer_pool, plan, emit, grad=grad_max_pool, frontend=Exposure(("MaxPool",)),
          runtime_tiling=RUNTIME_TILING),
    OpDef("AvgPool", "avg_pool", infer_pool, plan, emit, grad=grad_avg_pool, frontend=Exposure(("AvgPool",)),
          runtime_tiling=RUNTIME_TILING),
    # the 3-D pools; the front end's MaxPool3D/AvgPool3D/MaxPool3DWithArgmax (and the 2-D argmax pools,
    # as depth 1) resolve MindSpore's arguments into these ops' explicit pads
    OpDef("MaxPool3D", "max_pool3d", infer_pool, plan, emit, grad=grad_max_pool, runtime_tiling=RUNTIME_TILING),
    OpDef("AvgPool3D", "avg_pool3d", infer_pool, plan, emit, grad=grad_avg_pool, runtime_tiling=RUNTIME_TILING),
    OpDef("MaxPool3DWithArgmax", "max_pool3d_with_argmax", infer_pool, plan, emit, grad=grad_max_pool,
          runtime_tiling=RUNTIME_TILING),
    # MindSpore's backward primitives (TBE kernels max_pool_grad, avg_pool_grad_d, max_pool3d_grad, ...)
    OpDef("MaxPoolGrad", "max_pool_grad", infer_pool_grad, plan, emit_grad, runtime_tiling=RUNTIME_TILING),
    OpDef("AvgPoolGrad", "avg_pool_grad_d", infer_pool_grad, plan, emit_grad, runtime_tiling=RUNTIME_TILING),
    OpDef("MaxPool3DGrad", "max_pool3d_grad", infer_pool_grad, plan, emit_grad, runtime_tiling=RUNTIME_TILING),
    OpDef("AvgPool3DGrad", "avg_pool3d_grad_d", infer_pool_grad, plan, emit_grad, runtime_tiling=RUNTIME_TILING),
)
