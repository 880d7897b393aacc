"""Row-wise normalisations: Softmax, LogSoftmax, LayerNorm, and inference BatchNorm.

Softmax/LogSoftmax and LayerNorm split rows over blocks (a row is the reduced axis, strided when the
softmax axis is not innermost); statistics accumulate in float64. BatchNorm splits the flat range
like an elementwise op, with per-channel constants loaded once per contiguous spatial run.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOAT, check_arity, check_dtype, check_epsilon, check_format, fail, norm_axis, same_dtype

# ------------------------------------------------------------------------------------------- infer


def softmax_axis(sig: OpSignature) -> int:
    rank = len(sig.inputs[0].shape)
    axis = sig.attr("axis", -1)
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise fail(sig, f"attr axis={axis!r} must be one int (or a 1-tuple)")
        axis = axis[0]
    if rank == 0:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    return norm_axis(sig, axis, rank)


def infer_softmax(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, FLOAT, "x")
    softmax_axis(sig)
    return (TensorDesc(sig.inputs[0].shape, dtype),)


def infer_batch_norm(sig: OpSignature) -> tuple[TensorDesc, ...]:
    names = ("x", "scale", "bias", "mean", "variance")
    check_arity(sig, 5, names)
    dtype = check_dtype(sig, 0, FLOAT, "x")
    if sig.attr("is_training", False):
        raise fail(sig, "attr is_training=True is not supported; only inference BatchNorm is")
    check_format(sig)
    check_epsilon(sig, 1e-5)
    x = sig.inputs[0].shape
    if len(x) < 2:
        raise fail(sig, f"input 0 (x) must have rank >= 2, got shape {x}")
    for i in range(1, 5):
        check_dtype(sig, i, FLOAT, names[i])
        if sig.inputs[i].shape != (x[1],):
            raise fail(sig, f"input {i} ({names[i]}) must have shape ({x[1]},), got {sig.inputs[i].shape}")
    return (TensorDesc(x, dtype),)


def layer_norm_axes(sig: OpSignature) -> tuple[int, int]:
    rank = len(sig.inputs[0].shape)
    if rank == 0:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    norm = norm_axis(sig, sig.attr("begin_norm_axis", 1), rank, "begin_norm_axis")
    params = norm_axis(sig, sig.attr("begin_params_axis", 1), rank, "begin_params_axis")
    return norm, params


def infer_layer_norm(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 3, ("x", "gamma", "beta"))
    dtype = same_dtype(sig, FLOAT)
    check_epsilon(sig, 1e-7)
    norm, params = layer_norm_axes(sig)
    x = sig.inputs[0].shape
    for i, name in ((1, "gamma"), (2, "beta")):
        if sig.inputs[i].shape != x[params:]:
            raise fail(sig, f"input {i} ({name}) must have shape {x[params:]} (x dims from "
                            f"begin_params_axis={params}), got {sig.inputs[i].shape}")
    stats = x[:norm] + (1,) * (len(x) - norm)
    return TensorDesc(x, dtype), TensorDesc(stats, dtype), TensorDesc(stats, dtype)


# -------------------------------------------------------------------------------------- plan, emit

def row_blocks(rows: int, size: int) -> int:
    return max(1, min(src.MAX_BLOCKS, rows, size // src.MIN_ELEMENTS_PER_BLOCK))


def plan_softmax(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x = sig.inputs[0]
    axis = softmax_axis(sig)
    length, inner = x.shape[axis], math.prod(x.shape[axis + 1:])
    rows = math.prod(x.shape[:axis]) * inner
    cost = KernelCost(vector_ops=4 * x.size, bytes=2 * x.nbytes, dtype=x.dtype)
    return Plan(row_blocks(rows, x.size), cost, (), dict(length=length, inner=inner, rows=rows))


def emit_softmax(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    dtype = x.dtype
    length, inner, rows = plan.tiling["length"], plan.tiling["inner"], plan.tiling["rows"]

    def at(j: str) -> str:
        return src.load(dtype, f"x[base + {j} * {inner}]" if inner != 1 else f"x[base + {j}]")

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
                 f"    {out('j')} = " + src.store(dtype, "fdiv(math.exp(" + at("j") + " - m), s32)")]
    else:
        body += ["ls = f32(math.log(s))", f"for j in range({length}):",
                 f"    {out('j')} = " + src.store(dtype, "(" + at("j") + " - m) - ls")]
    lines = src.HEADER + src.views(("x", 0, dtype), ("y", 1, dtype))
    lines += src.indent(src.split_lines(str(rows)))
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def plan_layer_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x = sig.inputs[0]
    norm, _ = layer_norm_axes(sig)
    rows = math.prod(x.shape[:norm])
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    cost = KernelCost(vector_ops=8 * x.size, bytes=moved, dtype=x.dtype)
    return Plan(row_blocks(rows, x.size), cost, (), dict(rows=rows, length=math.prod(x.shape[norm:])))


def emit_layer_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x, gamma, _ = sig.inputs
    dtype = x.dtype
    eps = float(sig.attr("epsilon", 1e-7))
    rows, length, params = plan.tiling["rows"], plan.tiling["length"], gamma.size

    def scaled(j: str, p: str) -> str:
        value = f"f32((({src.load(dtype, f'x[base + {j}]')} - mean) * rstd))"
        return src.store(dtype, f"{value} * {src.load(dtype, f'g[{p}]')} + {src.load(dtype, f'b[{p}]')}")

    body = [f"base = u * {length}", "s = f64(0.0)",
            f"for j in range({length}):", f"    s += {src.load(dtype, 'x[base + j]')}",
            f"mean = fdiv(s, f64({float(max(length, 1))!r}))", "ss = f64(0.0)",
            f"for j in range({length}):", f"    d = {src.load(dtype, 'x[base + j]')} - mean",
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
    body += [f"mo[u] = {src.store(dtype, 'mean')}", f"vo[u] = {src.store(dtype, 'var')}"]
    lines = src.HEADER + ["    " + src.view(name, i, dtype)
                          for i, name in enumerate(("x", "g", "b", "y", "mo", "vo"))]
    lines += src.indent(src.split_lines(str(rows)))
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def plan_batch_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x = sig.inputs[0]
    moved = sum(d.nbytes for d in sig.inputs) + outputs[0].nbytes
    cost = KernelCost(vector_ops=2 * x.size, bytes=moved, dtype=x.dtype)
    return Plan(src.elementwise_blocks(x.size), cost)


def emit_batch_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    dtype = x.dtype
    channels, spatial = x.shape[1], math.prod(x.shape[2:])
    eps = float(sig.attr("epsilon", 1e-5))
    names = ("x", "scale", "bias", "mean", "var")
    p = {name: sig.inputs[i].dtype for i, name in enumerate(names)}
    lines = src.HEADER + src.views(*[(name, i, sig.inputs[i].dtype) for i, name in enumerate(names)],
                                   ("y", 5, dtype))
    lines += src.indent(src.split_lines(str(x.size)))
    body = [f"c = row % {channels}",
            f"m = {src.load(p['mean'], 'mean[c]')}",
            f"sd = math.sqrt({src.load(p['var'], 'var[c]')} + f32({eps!r}))",
            f"a = fdiv({src.load(p['scale'], 'scale[c]')}, sd)",
            f"bb = {src.load(p['bias'], 'bias[c]')}",
            f"start = row * {spatial}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {spatial})",
            "for j in range(j0, j1):",
            "    y[start + j] = " + src.store(dtype, "(" + src.load(dtype, "x[start + j]") + " - m) * a + bb"),
            "row += 1"]
    lines += [f"    row = lo // {max(spatial, 1)}", f"    while row * {spatial} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


OPS: tuple[OpDef, ...] = (
    OpDef("Softmax", "softmax", infer_softmax, plan_softmax, emit_softmax,
          frontend=Exposure(("Softmax",), ("softmax",))),
    OpDef("LogSoftmax", "log_softmax", infer_softmax, plan_softmax, emit_softmax,
          frontend=Exposure(("LogSoftmax",), ("log_softmax",))),
    OpDef("BatchNorm", "batch_norm", infer_batch_norm, plan_batch_norm, emit_batch_norm,
          frontend=Exposure(("BatchNorm",))),
    OpDef("LayerNorm", "layer_norm", infer_layer_norm, plan_layer_norm, emit_layer_norm,
          frontend=Exposure(("LayerNorm",))),
)
