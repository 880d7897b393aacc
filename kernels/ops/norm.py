"""Normalisations and their backward kernels: Softmax, LogSoftmax, LayerNorm (+ LayerNormGrad),
BatchNorm in inference and training mode (+ BatchNormGrad), and the backward rules of all four.

Softmax/LogSoftmax and LayerNorm split rows over blocks (a row is the reduced axis, strided when the
softmax axis is not innermost); statistics accumulate in float64. Inference BatchNorm splits the flat
range like an elementwise op, with per-channel constants loaded once per contiguous spatial run.
Training BatchNorm and BatchNormGrad split channels over blocks: a block reduces its channels over
N, H, W (float64 sums) and then writes them, so no block reads another block's results.
LayerNormGrad splits rows for dx and, in the same launch, gamma's elements for dgamma/dbeta
(float64 accumulators in its workspace), again with no block depending on another. All are
dynamic-shape kernels: sizes are tiling data (the *_RUNTIME_TILING constants).
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import norm_fusion, src
from .src import PARTIALS
from .misc import odometer
from .common import (FLOAT, check_arity, check_bool, check_dtype, check_epsilon, check_format, fail, norm_axis,
                     same_dtype)

# BatchNorm's attr ``momentum`` is MindSpore's primitive convention (ops.BatchNorm, default 0.1): the
# weight of the batch statistic, new_moving = (1 - momentum) * moving + momentum * batch.
# nn.BatchNorm2d(momentum=m) means the opposite weighting and passes 1 - m to the primitive.
BN_MOMENTUM = 0.1
BN_EPSILON = 1e-5
LN_EPSILON = 1e-7
# Training BatchNorm's outputs, in order (inference mode has only y). The front end assigns
# new_moving_mean/new_moving_variance to its moving-statistics parameters; BatchNormGrad takes
# saved_mean/saved_invstd (always float32, as the chip's reserve spaces are).
BN_TRAINING_OUTPUTS = ("y", "new_moving_mean", "new_moving_variance", "saved_mean", "saved_invstd")

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


def bn_training(sig: OpSignature) -> bool:
    return check_bool(sig, "is_training")


def bn_momentum(sig: OpSignature) -> float:
    value = sig.attr("momentum", BN_MOMENTUM)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise fail(sig, f"attr momentum={value!r} must be a number in [0, 1] (the weight of the batch "
                        f"statistic: new = (1 - momentum) * moving + momentum * batch)")
    return float(value)


def bn_layout(sig: OpSignature) -> tuple[int, int, int]:
    """(batch, channels, spatial) of an NCHW (or (N, C)) input 0; rank >= 2 is checked."""
    x = sig.inputs[0].shape
    return x[0], x[1], math.prod(x[2:])


def check_channel_params(sig: OpSignature, names: tuple[str, ...], first: int) -> None:
    """Inputs ``first``.. are float per-channel vectors of shape (C,), C = dim 1 of input 0."""
    x = sig.inputs[0].shape
    if len(x) < 2:
        raise fail(sig, f"input 0 ({names[0]}) must have rank >= 2, got shape {x}")
    for i in range(first, len(names)):
        check_dtype(sig, i, FLOAT, names[i])
        if sig.inputs[i].shape != (x[1],):
            raise fail(sig, f"input {i} ({names[i]}) must have shape ({x[1]},), got {sig.inputs[i].shape}")


def infer_batch_norm(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Inference: y from the given statistics. Training (is_training=True): y from the batch's own
    mean and biased variance over N, H, W, plus the outputs of BN_TRAINING_OUTPUTS; the moving
    variance is updated with the unbiased batch variance (times n / (n - 1)), as MindSpore and
    PyTorch do, so a channel needs n = N*H*W >= 2 values. With attr ``epilogue`` (training only) y
    is the fused program's result (kernels/ops/norm_fusion.py)."""
    if norm_fusion.fused_program(sig) is not None:
        out = infer_batch_norm(norm_fusion.base_signature(sig))
        if len(out) == 1:
            norm_fusion.check_no_program(sig)
        y = norm_fusion.infer_program(sig, out[0], sig.attr(norm_fusion.EPILOGUE_TYPE, out[0].dtype))
        return (y,) + out[1:]
    names = ("x", "scale", "bias", "mean", "variance")
    check_arity(sig, 5, names)
    dtype = check_dtype(sig, 0, FLOAT, "x")
    check_format(sig)
    check_epsilon(sig, BN_EPSILON)
    check_channel_params(sig, names, 1)
    x = sig.inputs[0].shape
    if not bn_training(sig):
        return (TensorDesc(x, dtype),)
    bn_momentum(sig)
    batch, channels, spatial = bn_layout(sig)
    if batch * spatial < 2:
        raise fail(sig, f"attr is_training=True needs at least 2 values per channel for the unbiased "
                        f"variance, but x {x} has {batch * spatial}")
    stats = TensorDesc((channels,), "float32")
    return (TensorDesc(x, dtype), TensorDesc((channels,), sig.inputs[3].dtype),
            TensorDesc((channels,), sig.inputs[4].dtype), stats, stats)


def bn_grad_names(sig: OpSignature) -> tuple[str, ...]:
    """BatchNormGrad's inputs: the saved batch statistics in training mode, else the moving ones."""
    if bn_training(sig):
        return "dy", "x", "scale", "saved_mean", "saved_invstd"
    return "dy", "x", "scale", "mean", "variance"


def infer_batch_norm_grad(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(dx, dscale, dbias) of BatchNorm; dscale and dbias in scale's dtype. With attr ``prologue``
    (training only) dy is the fused program's result on input 0 (kernels/ops/norm_fusion.py)."""
    if norm_fusion.fused_program(sig) is not None:
        base = norm_fusion.base_signature(sig)
        if not bn_training(base):
            norm_fusion.check_no_program(sig)
        dy = norm_fusion.infer_program(sig, sig.inputs[0], sig.inputs[1].dtype)
        return infer_batch_norm_grad(OpSignature(base.op, (dy,) + base.inputs[1:], base.attrs))
    names = bn_grad_names(sig)
    check_arity(sig, 5, names)
    dtype = check_dtype(sig, 1, FLOAT, "x")
    if sig.inputs[0] != sig.inputs[1]:
        raise fail(sig, f"input 0 (dy) must match x {sig.inputs[1]}, got {sig.inputs[0]}")
    check_format(sig)
    check_epsilon(sig, BN_EPSILON)
    check_channel_params(sig, names, 2)
    channels = TensorDesc((sig.inputs[1].shape[1],), sig.inputs[2].dtype)
    return TensorDesc(sig.inputs[1].shape, dtype), channels, channels


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
    check_epsilon(sig, LN_EPSILON)
    norm, params = layer_norm_axes(sig)
    x = sig.inputs[0].shape
    for i, name in ((1, "gamma"), (2, "beta")):
        if sig.inputs[i].shape != x[params:]:
            raise fail(sig, f"input {i} ({name}) must have shape {x[params:]} (x dims from "
                            f"begin_params_axis={params}), got {sig.inputs[i].shape}")
    stats = x[:norm] + (1,) * (len(x) - norm)
    return TensorDesc(x, dtype), TensorDesc(stats, dtype), TensorDesc(stats, dtype)


def infer_layer_norm_grad(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(dx, dgamma, dbeta) of LayerNorm from its saved mean and variance (LayerNorm's outputs 1, 2)."""
    check_arity(sig, 5, ("dy", "x", "gamma", "mean", "variance"))
    dtype = same_dtype(sig, FLOAT)
    check_epsilon(sig, LN_EPSILON)
    x = sig.inputs[1].shape
    if sig.inputs[0].shape != x:
        raise fail(sig, f"input 0 (dy) must have x's shape {x}, got {sig.inputs[0].shape}")
    norm, params = layer_norm_axes(sig)
    stats = x[:norm] + (1,) * (len(x) - norm)
    for i, name, want in ((2, "gamma", x[params:]), (3, "mean", stats), (4, "variance", stats)):
        if sig.inputs[i].shape != want:
            raise fail(sig, f"input {i} ({name}) must have shape {want}, got {sig.inputs[i].shape}")
    return TensorDesc(x, dtype), TensorDesc(x[params:], dtype), TensorDesc(x[params:], dtype)


# -------------------------------------------------------------------------------------- plan, emit

def row_blocks(rows: int, size: int) -> int:
    return max(1, min(src.MAX_BLOCKS, rows, size // src.MIN_ELEMENTS_PER_BLOCK))


# What Softmax/LogSoftmax kernels read at run time: the axis length, the rows (reductions) and the
# rows' outer count. The row's stride (the elements after the axis; 1: contiguous) is compiled in:
# LLVM vectorises a gather of known stride only (a strided softmax ran 2-3x slower reading it).
SOFTMAX_RUNTIME_TILING = ("length", "rows", "outer")


def plan_softmax(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x = sig.inputs[0]
    axis = softmax_axis(sig)
    length, inner = x.shape[axis], math.prod(x.shape[axis + 1:])
    outer = math.prod(x.shape[:axis])
    cost = KernelCost(vector_ops=4 * x.size, bytes=2 * x.nbytes, dtype=x.dtype)
    tiling = dict(length=length, inner=inner, rows=outer * inner, outer=outer)
    return Plan(row_blocks(outer * inner, x.size), cost, (), tiling)


def emit_softmax(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Row ``u`` of a strided softmax (axis not innermost) starts at outer index * length * inner +
    inner index: a block decodes its first row's coordinates once and advances them per row
    (``misc.odometer``), so no row divides by a run-time dim."""
    dtype = sig.inputs[0].dtype
    t = plan.tiling
    length, inner, rows = t["length"], t["inner"], t["rows"]
    strided = inner != 1

    def at(j: str) -> str:
        return src.load(dtype, f"x[base + {j} * {inner}]" if strided else f"x[base + {j}]")

    def out(j: str) -> str:
        return f"y[base + {j} * {inner}]" if strided else f"y[base + {j}]"

    # the maximum and the sum fold into PARTIALS independent accumulators (which LLVM's SLP vectoriser
    # packs into vector registers), then into one; exps are fexp (vectorisable, no libm call)
    parts = range(PARTIALS)
    body = [f"base = q0 * {length * inner} + q1" if strided else f"base = u * {length}"]
    body += [f"m{k} = f32(-np.inf)" for k in parts]
    body += ["j = 0", f"while j + {PARTIALS} <= {length}:"]
    body += [line for k in parts for line in (f"    v{k} = {at(f'(j + {k})')}",
                                               f"    m{k} = nanmax(m{k}, v{k})")]
    body += [f"    j += {PARTIALS}", f"while j < {length}:", f"    v0 = {at('j')}",
             "    m0 = nanmax(m0, v0)", "    j += 1", "m = m0"]
    body += [f"m = nanmax(m, m{k})" for k in parts if k]
    body += [f"s{k} = f64(0.0)" for k in parts] + ["j = 0", f"while j + {PARTIALS} <= {length}:"]
    body += [f"    s{k} += fexp({at(f'(j + {k})')} - m)" for k in parts]
    body += [f"    j += {PARTIALS}", f"while j < {length}:", f"    s0 += fexp({at('j')} - m)", "    j += 1",
             "s = " + " + ".join(f"s{k}" for k in parts)]
    if sig.op == "Softmax":
        body += ["r32 = fdiv(f32(1.0), f32(s))", f"for j in range({length}):",
                 f"    {out('j')} = " + src.store(dtype, "fexp(" + at("j") + " - m) * r32")]
    else:
        body += ["ls = f32(math.log(s))", f"for j in range({length}):",
                 f"    {out('j')} = " + src.store(dtype, "(" + at("j") + " - m) - ls")]
    lines = src.HEADER + src.views(("x", 0, dtype), ("y", 1, dtype))
    lines += src.indent(src.split_lines(str(rows)))
    if strided:
        decode, advance = odometer((t["outer"], inner))
        lines += src.indent(["row = lo", *decode])
        body += advance
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


# How gamma/beta (x's dims from begin_params_axis, ``params`` elements) lie on a LayerNorm row (x's
# dims from begin_norm_axis, ``length`` elements), compiled in: one per row element, spanning ``reps``
# rows (begin_params_axis < begin_norm_axis), or repeated ``reps`` times within a row.
GAMMA_ROW, GAMMA_SPANS, GAMMA_REPEATS = 0, 1, 2
# What LayerNorm/LayerNormGrad kernels read at run time; gamma's layout and epsilon are compiled in.
LN_RUNTIME_TILING = ("rows", "length", "params", "reps")


def gamma_layout(length: int, params: int) -> tuple[int, int]:
    """(layout, reps) of gamma on a row (an empty row is GAMMA_REPEATS with no repeats)."""
    if params == length:
        return GAMMA_ROW, 0
    if params > length > 0:
        return GAMMA_SPANS, params // length
    return GAMMA_REPEATS, length // max(params, 1)


def row_elements(t: dict, body) -> list[str]:
    """Lines visiting every element of LayerNorm row ``u`` (``base = u * length`` set by the caller):
    ``body(j, p)`` gives the lines for element ``base + j``, whose gamma/beta index is ``p``
    (gamma covers x's dims from begin_params_axis, so p = (base + j) % params). A spanning gamma is
    offset by the row's place in its span, ``qp`` (:func:`span_lines`)."""
    length, params = t["length"], t["params"]
    if t["layout"] == GAMMA_ROW:
        return [f"for j in range({length}):"] + src.indent(body("j", "j"))
    if t["layout"] == GAMMA_SPANS:
        return [f"pb = qp * {length}", f"for j in range({length}):"] + src.indent(body("j", "pb + j"))
    return [f"for q in range({t['reps']}):", f"    for p in range({params}):"] + src.indent(
        body(f"q * {params} + p", "p"), 2)


def span_lines(t: dict, first: str) -> tuple[list[str], list[str]]:
    """Lines setting ``qp`` (row ``first``'s place in gamma's span: u % reps) once, and lines advancing
    it per row, so no row divides by a run-time dim (nothing when gamma does not span rows)."""
    if t["layout"] != GAMMA_SPANS:
        return [], []
    return [f"qp = {first} % {t['reps']}"], ["qp += 1", f"if qp == {t['reps']}:", "    qp = 0"]


def layer_norm_stats(dtype: str, eps: float) -> list[str]:
    """Lines reading row ``u``'s saved mean and variance as float64 ``mean`` and ``rstd``."""
    return [f"mean = f64({src.load(dtype, 'mo[u]')})",
            f"rstd = fdiv(f64(1.0), math.sqrt(f64({src.load(dtype, 'vo[u]')}) + f64({eps!r})))"]


def plan_layer_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """LayerNorm and LayerNormGrad; the grad adds 2 float64 accumulators per gamma element."""
    x = sig.inputs[0]           # LayerNormGrad's dy has x's shape
    norm, _ = layer_norm_axes(sig)
    rows, length = math.prod(x.shape[:norm]), math.prod(x.shape[norm:])
    grad = sig.op == "LayerNormGrad"
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    cost = KernelCost(vector_ops=(12 if grad else 8) * x.size, bytes=moved, dtype=x.dtype)
    workspace = (max(2 * outputs[1].size, 1) * 8,) if grad else ()
    params = sig.inputs[2 if grad else 1].size
    layout, reps = gamma_layout(length, params)
    tiling = dict(rows=rows, length=length, params=params, reps=reps, layout=layout,
                  eps=float(sig.attr("epsilon", LN_EPSILON)))
    return Plan(row_blocks(rows, x.size), cost, workspace, tiling)


def emit_layer_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    dtype = sig.inputs[0].dtype
    t = plan.tiling
    eps, rows, length = t["eps"], t["rows"], t["length"]

    def scaled(j: str, p: str) -> list[str]:
        value = f"f32((({src.load(dtype, f'x[base + {j}]')} - mean) * rstd))"
        return [f"y[base + {j}] = " + src.store(dtype, f"{value} * {src.load(dtype, f'g[{p}]')} + "
                                                      f"{src.load(dtype, f'b[{p}]')}")]

    count = f"f64(max({length}, 1))"
    body = [f"base = u * {length}", "s = f64(0.0)",
            f"for j in range({length}):", f"    s += {src.load(dtype, 'x[base + j]')}",
            f"mean = fdiv(s, {count})", "ss = f64(0.0)",
            f"for j in range({length}):", f"    d = {src.load(dtype, 'x[base + j]')} - mean",
            "    ss += d * d",
            f"var = fdiv(ss, {count})",
            f"rstd = fdiv(f64(1.0), math.sqrt(var + f64({eps!r})))"]
    body += row_elements(t, scaled)
    body += [f"mo[u] = {src.store(dtype, 'mean')}", f"vo[u] = {src.store(dtype, 'var')}"]
    first, advance = span_lines(t, "lo")
    lines = src.HEADER + ["    " + src.view(name, i, dtype)
                          for i, name in enumerate(("x", "g", "b", "y", "mo", "vo"))]
    lines += src.indent(src.split_lines(str(rows)) + first)
    lines += ["    for u in range(lo, hi):"] + src.indent(body + advance, 2)
    return src.finish(lines)


def emit_layer_norm_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """dx row by row: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma. dgamma =
    sum(dy * xhat), dbeta = sum(dy) over the rows, each block owning a slice of gamma's elements."""
    dtype = sig.inputs[0].dtype
    t = plan.tiling
    eps, rows, length, params = t["eps"], t["rows"], t["length"], t["params"]
    n = f"f64(max({length}, 1))"

    def terms(j: str, p: str) -> list[str]:
        return [f"g = f64({src.load(dtype, f'dy[base + {j}]')}) * {src.load(dtype, f'ga[{p}]')}",
                f"xh = ({src.load(dtype, f'x[base + {j}]')} - mean) * rstd"]

    def sums(j: str, p: str) -> list[str]:
        return terms(j, p) + ["sg += g", "sgx += g * xh"]

    def write(j: str, p: str) -> list[str]:
        return terms(j, p) + [f"dx[base + {j}] = " + src.store(dtype, "rstd * (g - a1 - xh * a2)")]

    first, advance = span_lines(t, "lo")
    row = [f"base = u * {length}"] + layer_norm_stats(dtype, eps) + ["sg = f64(0.0)", "sgx = f64(0.0)"]
    row += row_elements(t, sums)
    row += [f"a1 = fdiv(sg, {n})", f"a2 = fdiv(sgx, {n})"]
    row += row_elements(t, write) + advance

    def acc(e: str, k: str) -> list[str]:
        return [f"d = {src.load(dtype, f'dy[{e}]')}",
                f"w[{k}] += d * (({src.load(dtype, f'x[{e}]')} - mean) * rstd)", f"w[{params} + {k}] += d"]

    # the parameter pass: every row, only this block's gamma elements [lo, hi)
    par = [f"base = u * {length}"] + layer_norm_stats(dtype, eps)
    if t["layout"] == GAMMA_SPANS:
        par += [f"pb = qp * {length}", f"for k in range(max(lo, pb), min(hi, pb + {length})):"]
        par += src.indent(acc("base + k - pb", "k")) + advance
    else:
        reps = 1 if t["layout"] == GAMMA_ROW else t["reps"]
        par += [f"for q in range({reps}):", "    for k in range(lo, hi):"]
        par += src.indent(acc(f"base + q * {params} + k", "k"), 2)
    names = ("dy", "x", "ga", "mo", "vo", "dx", "dg", "db")
    lines = src.HEADER + ["    " + src.view(name, i, dtype) for i, name in enumerate(names)]
    lines += src.views(("w", len(names), "float64"))
    lines += src.indent(src.split_lines(str(rows)) + first)
    lines += ["    for u in range(lo, hi):"] + src.indent(row, 2)
    lines += src.indent(src.split_lines(str(params)))
    lines += ["    for k in range(lo, hi):", "        w[k] = f64(0.0)", f"        w[{params} + k] = f64(0.0)"]
    lines += src.indent(span_lines(t, "0")[0])
    lines += [f"    for u in range({rows}):"] + src.indent(par, 2)
    lines += ["    for k in range(lo, hi):", "        dg[k] = " + src.store(dtype, "w[k]"),
              "        db[k] = " + src.store(dtype, f"w[{params} + k]")]
    return src.finish(lines)


# BatchNorm's and BatchNormGrad's tiling: what the kernels read at run time (one kernel per mode,
# dtypes and epsilon/momentum serves every shape); the static facts are training, eps and momentum.
BN_RUNTIME_TILING = ("batch", "channels", "spatial", "size")


def plan_batch_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """BatchNorm and BatchNormGrad. Inference is elementwise; training and the grad split channels."""
    x = sig.inputs[1] if sig.op == "BatchNormGrad" else sig.inputs[0]
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    batch, channels, spatial = bn_layout(sig)
    training = bn_training(sig)
    tiling = dict(batch=batch, channels=channels, spatial=spatial, size=x.size, training=training,
                  eps=check_epsilon(sig, BN_EPSILON),
                  momentum=bn_momentum(sig) if training and sig.op == "BatchNorm" else 0.0)
    if sig.op == "BatchNorm" and not training:
        cost = KernelCost(vector_ops=2 * x.size, bytes=moved, dtype=x.dtype)
        return Plan(src.elementwise_blocks(x.size), cost, (), tiling)
    # training statistics need the whole channel before it can be normalised: a second pass over x
    # (and over dy for the grad), as Ascend's BNTrainingReduce + BNTrainingUpdate (and their grads) do
    # A fused epilogue runs in the last pass (its inputs read once); a fused prologue in both passes
    # over dy, so the grad's second pass reads its inputs again too.
    program = norm_fusion.fused_program(sig)
    if program is not None:            # a compiled-in fact (plain kernels keep their identity)
        tiling["program"] = program
    extras = norm_fusion.extras(sig)
    again = sum(d.nbytes for d in sig.inputs[:2] + extras) if sig.op == "BatchNormGrad" else x.nbytes
    if sig.attr(norm_fusion.STATS_FROM_CONV):     # the statistics came with x from its convolution
        again = 0
    cost = KernelCost(vector_ops=(8 + len(program or ())) * x.size, bytes=moved, dtype=x.dtype, reread=again)
    return Plan(row_blocks(channels, x.size), cost, (), tiling)


def channel_loop(plan: Plan, body: list[str]) -> list[str]:
    """Lines visiting every element of channel ``c``: ``body`` reads and writes index ``base + j``."""
    batch, channels, spatial = plan.tiling["batch"], plan.tiling["channels"], plan.tiling["spatial"]
    return [f"for n in range({batch}):", f"    base = n * {channels * spatial} + c * {spatial}",
            f"    for j in range({spatial}):"] + src.indent(body, 2)


def emit_batch_norm(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    t = plan.tiling
    if t["training"]:
        return emit_batch_norm_training(sig, outputs, plan)
    dtype = sig.inputs[0].dtype
    channels, spatial = t["channels"], t["spatial"]
    names = ("x", "scale", "bias", "mean", "var")
    p = {name: sig.inputs[i].dtype for i, name in enumerate(names)}
    lines = src.HEADER + src.views(*[(name, i, sig.inputs[i].dtype) for i, name in enumerate(names)],
                                   ("y", 5, dtype))
    lines += src.indent(src.split_lines(str(t["size"])))
    body = [f"c = row % {channels}",
            f"m = {src.load(p['mean'], 'mean[c]')}",
            f"sd = math.sqrt({src.load(p['var'], 'var[c]')} + f32({t['eps']!r}))",
            f"a = fdiv({src.load(p['scale'], 'scale[c]')}, sd)",
            f"bb = {src.load(p['bias'], 'bias[c]')}",
            f"start = row * {spatial}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {spatial})",
            "for j in range(j0, j1):",
            "    y[start + j] = " + src.store(dtype, "(" + src.load(dtype, "x[start + j]") + " - m) * a + bb"),
            "row += 1"]
    lines += [f"    row = lo // {spatial}", f"    while row * {spatial} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


def emit_batch_norm_training(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Per channel: mean and biased variance over N, H, W (two float64 passes), y with them, then the
    saved statistics and the moving averages (the variance's with the unbiased batch variance)."""
    dtype = sig.inputs[0].dtype
    t = plan.tiling
    eps, mom = t["eps"], t["momentum"]
    count = t["batch"] * t["spatial"]
    names = ("x", "scale", "bias", "mean", "var")
    p = {name: sig.inputs[i].dtype for i, name in enumerate(names)}
    x = src.load(dtype, "x[base + j]")
    body = [f"count = f64({count})", "s = f64(0.0)"] + channel_loop(plan, [f"s += {x}"])
    body += ["mu = fdiv(s, count)", "ss = f64(0.0)"]
    body += channel_loop(plan, [f"d = {x} - mu", "ss += d * d"])
    body += ["v = fdiv(ss, count)",
             f"invstd = fdiv(f64(1.0), math.sqrt(v + f64({eps!r})))",
             "m = f32(mu)",
             f"a = f32({src.load(p['scale'], 'scale[c]')} * invstd)",
             f"bb = {src.load(p['bias'], 'bias[c]')}"]
    y = f"({x} - m) * a + bb"
    if t.get("program") is None:
        body += channel_loop(plan, ["y[base + j] = " + src.store(dtype, y)])
    else:
        body += channel_loop(plan, norm_fusion.program_lines(sig, t["program"], y, dtype, "y[base + j]",
                                                             outputs[0].dtype))
    keep = 1.0 - mom
    body += ["sm[c] = f32(mu)", "si[c] = f32(invstd)",
             "nm[c] = " + src.store(p["mean"], f"f64({keep!r}) * {src.load(p['mean'], 'mean[c]')} + "
                                               f"f64({mom!r}) * mu"),
             "nv[c] = " + src.store(p["var"], f"f64({keep!r}) * {src.load(p['var'], 'var[c]')} + "
                                              f"f64({mom!r}) * v * fdiv(count, count - f64(1.0))")]
    out = len(sig.inputs)          # the outputs' arguments follow the inputs (and a program's extra inputs)
    lines = src.HEADER + src.views(*[(name, i, p[name]) for i, name in enumerate(names)],
                                   *norm_fusion.extra_specs(sig), ("y", out, outputs[0].dtype),
                                   ("nm", out + 1, p["mean"]), ("nv", out + 2, p["var"]),
                                   ("sm", out + 3, "float32"), ("si", out + 4, "float32"))
    lines += src.indent(src.split_lines(str(t["channels"])))
    lines += ["    for c in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit_batch_norm_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Per channel, with xhat = (x - mean) * invstd and n = N*H*W: dbias = sum(dy), dscale =
    sum(dy * xhat). Training (saved batch statistics): dx = scale * invstd * (dy - dbias / n - xhat *
    dscale / n). Inference (moving statistics, invstd = rsqrt(variance + epsilon) as the forward
    computes it): y is affine in x, dx = scale * invstd * dy."""
    dy, x, scale, mean, stat = sig.inputs[:norm_fusion.NORM_ARITY]
    t = plan.tiling
    training = t["training"]
    stat_value = src.load(stat.dtype, "st[c]")
    if training:
        invstd = f"f32({stat_value})"
    else:
        invstd = f"fdiv(f32(1.0), math.sqrt({stat_value} + f32({t['eps']!r})))"
    grad = src.load(dy.dtype, "dy[base + j]")
    if t.get("program") is None:
        terms = [f"d = {grad}"]
    else:        # the fused prologue's dy, stored in x's dtype as the unfused op's output would be
        terms = norm_fusion.program_lines(sig, t["program"], grad, dy.dtype, "dd", x.dtype)
        terms += [f"d = {src.load(x.dtype, 'dd')}"]
    terms += [f"xh = ({src.load(x.dtype, 'x[base + j]')} - m) * r"]
    body = [f"m = f32({src.load(mean.dtype, 'mean[c]')})", f"r = {invstd}", "sdy = f64(0.0)", "sdx = f64(0.0)"]
    body += channel_loop(plan, terms + ["sdy += d", "sdx += d * xh"])
    body += [f"db[c] = {src.store(scale.dtype, 'sdy')}", f"ds[c] = {src.store(scale.dtype, 'sdx')}",
             f"g = f32({src.load(scale.dtype, 'scale[c]')} * r)"]
    if training:
        count = t["batch"] * t["spatial"]
        body += [f"a1 = f32(fdiv(sdy, f64({count})))", f"a2 = f32(fdiv(sdx, f64({count})))"]
        body += channel_loop(plan, terms + ["dx[base + j] = " + src.store(x.dtype, "g * (d - a1 - xh * a2)")])
    else:
        body += channel_loop(plan, ["dx[base + j] = " + src.store(x.dtype, f"g * {grad}")])
    out = len(sig.inputs)          # the outputs' arguments follow the inputs (and a prologue's extra inputs)
    lines = src.HEADER + src.views(("dy", 0, dy.dtype), ("x", 1, x.dtype), ("scale", 2, scale.dtype),
                                   ("mean", 3, mean.dtype), ("st", 4, stat.dtype), *norm_fusion.extra_specs(sig),
                                   ("dx", out, x.dtype), ("ds", out + 1, scale.dtype), ("db", out + 2, scale.dtype))
    lines += src.indent(src.split_lines(str(t["channels"])))
    lines += ["    for c in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


# ------------------------------------------------------------------------------------ backward rules
# Only the gradient of each op's first output (y) flows back: LayerNorm's and BatchNorm's statistics
# outputs and BatchNorm's moving averages are not differentiated, as in MindSpore.

def _as(b: GradBuilder, value: int, dtype: str) -> int:
    """``value`` in ``dtype`` (a Cast only when it differs)."""
    return value if b.desc(value).dtype == dtype else b.op("Cast", value, dst_type=dtype)


def _g_softmax(b: GradBuilder, c: GradCall) -> tuple[int]:
    """dx = y * (dy - sum(dy * y)) along the softmax axis."""
    (dy,), (y,) = c.douts, c.outputs
    dot = b.op("ReduceSum", b.op("Mul", dy, y), axis=(softmax_axis(c.sig),), keep_dims=True)
    return (b.op("Mul", y, b.op("Sub", dy, dot)),)


def _g_log_softmax(b: GradBuilder, c: GradCall) -> tuple[int]:
    """dx = dy - exp(y) * sum(dy) along the axis."""
    (dy,), (y,) = c.douts, c.outputs
    total = b.op("ReduceSum", dy, axis=(softmax_axis(c.sig),), keep_dims=True)
    return (b.op("Sub", dy, b.op("Mul", b.op("Exp", y), total)),)


def _g_layer_norm(b: GradBuilder, c: GradCall) -> tuple[int | None, ...]:
    dy = c.douts[0]
    if dy is None:
        return (None,) * 3
    norm, params = layer_norm_axes(c.sig)
    _, mean, var = c.outputs
    return b.ops("LayerNormGrad", dy, c.inputs[0], c.inputs[1], mean, var, begin_norm_axis=norm,
                 begin_params_axis=params, epsilon=check_epsilon(c.sig, LN_EPSILON))


def _g_batch_norm(b: GradBuilder, c: GradCall) -> tuple[int | None, ...]:
    """(dx, dscale, dbias, None, None): the statistics inputs get no gradient (moving statistics are
    state, not trainable; in training mode y does not even read them)."""
    if norm_fusion.fused_program(c.sig) is not None:
        raise fail(c.sig, "a fused epilogue is never differentiated (autodiff runs before fusion)")
    dy = c.douts[0]
    if dy is None:
        return (None,) * 5
    x, scale, bias, mean, var = c.inputs
    training = bn_training(c.sig)
    if training:
        saved = [c.outputs[BN_TRAINING_OUTPUTS.index(name)] for name in ("saved_mean", "saved_invstd")]
        dx, dscale, dbias = b.ops("BatchNormGrad", dy, x, scale, *saved, is_training=True)
    else:
        dx, dscale, dbias = b.ops("BatchNormGrad", dy, x, scale, mean, var, is_training=False,
                                  epsilon=check_epsilon(c.sig, BN_EPSILON))
    return dx, dscale, _as(b, dbias, b.desc(bias).dtype), None, None


OPS: tuple[OpDef, ...] = (
    OpDef("Softmax", "softmax", infer_softmax, plan_softmax, emit_softmax, grad=_g_softmax,
          frontend=Exposure(("Softmax",), ("softmax",)), runtime_tiling=SOFTMAX_RUNTIME_TILING),
    OpDef("LogSoftmax", "log_softmax", infer_softmax, plan_softmax, emit_softmax, grad=_g_log_softmax,
          frontend=Exposure(("LogSoftmax",), ("log_softmax",)), runtime_tiling=SOFTMAX_RUNTIME_TILING),
    # attrs: epsilon; is_training (False: y only; True: BN_TRAINING_OUTPUTS); momentum (see BN_MOMENTUM)
    OpDef("BatchNorm", "batch_norm", infer_batch_norm, plan_batch_norm, emit_batch_norm, grad=_g_batch_norm,
          frontend=Exposure(("BatchNorm",)), runtime_tiling=BN_RUNTIME_TILING),
    # (dy, x, scale, saved_mean, saved_invstd) -> (dx, dscale, dbias) with is_training=True; with
    # is_training=False (the default, as BatchNorm's) the statistics are (mean, variance) and epsilon applies
    OpDef("BatchNormGrad", "batch_norm_grad", infer_batch_norm_grad, plan_batch_norm, emit_batch_norm_grad,
          runtime_tiling=BN_RUNTIME_TILING),
    OpDef("LayerNorm", "layer_norm", infer_layer_norm, plan_layer_norm, emit_layer_norm, grad=_g_layer_norm,
          frontend=Exposure(("LayerNorm",)), runtime_tiling=LN_RUNTIME_TILING),
    # (dy, x, gamma, mean, variance) -> (dx, dgamma, dbeta); attrs as LayerNorm's. It takes the
    # variance LayerNorm outputs (as MindSpore's LayerNormGrad did before rstd) and applies epsilon.
    OpDef("LayerNormGrad", "layer_norm_grad", infer_layer_norm_grad, plan_layer_norm, emit_layer_norm_grad,
          runtime_tiling=LN_RUNTIME_TILING),
)
