"""ReduceSum, ReduceMean, ReduceProd, ReduceMax, ReduceMin (numbers) and ReduceAll (bools) over any set
of axes; AllFinite.

The input dims are coalesced into alternating runs of kept and reduced dims. Blocks split the
output elements. If the innermost run is reduced, every output folds one contiguous row per
combination of the outer reduced dims (eight partial accumulators break the add latency chain).
If the innermost run is kept, the kernel walks the input in memory order and folds whole contiguous
output runs at a time into a per-output accumulator in the workspace. Sums accumulate in float64
(int64 for the integer types, stored wrapped), maxima and minima in the compute type (NaN wins, as in numpy);
ReduceAll folds 0/1 bytes with min. AllFinite (the overflow check of loss scaling) reads any number of
tensors in one pass and writes one bool: no inf or NaN anywhere.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .src import PARTIALS
from .common import FLOATS, NUMBER, check_arity, check_dtype, fail, norm_axis

# dtypes each reduction accepts (a mean of ints has no int result)
DTYPES = {"ReduceSum": NUMBER, "ReduceMean": FLOATS, "ReduceMax": NUMBER, "ReduceMin": NUMBER,
          "ReduceAll": ("bool",), "ReduceProd": NUMBER}
# the int64 range: the identity of an integer maximum / minimum (ints fold in int64 registers)
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
# the reductions that pick an element (no maximum or minimum of an empty axis)
EXTREMA = ("ReduceMax", "ReduceMin")


def reduce_axes(sig: OpSignature) -> tuple[int, ...]:
    """Sorted distinct reduced axes; () means every axis."""
    rank = len(sig.inputs[0].shape)
    axis = sig.attr("axis", ())
    axes = (axis,) if isinstance(axis, int) and not isinstance(axis, bool) else axis
    if not isinstance(axes, tuple):
        raise fail(sig, f"attr axis={axis!r} must be an int or a tuple of ints")
    normed = sorted({norm_axis(sig, a, rank) for a in axes}) if rank else []
    if len(normed) != len(axes):
        raise fail(sig, f"attr axis={axis!r} names an axis twice")
    return tuple(normed) if normed else tuple(range(rank))


def infer_reduce(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, DTYPES[sig.op], "x")
    keep = sig.attr("keep_dims", False)
    if not isinstance(keep, bool):
        raise fail(sig, f"attr keep_dims={keep!r} must be a bool")
    axes = reduce_axes(sig)
    shape = sig.inputs[0].shape
    if any(shape[a] == 0 for a in axes) and sig.op in EXTREMA:
        raise fail(sig, f"input 0 (x) shape {shape} reduces over an empty axis, which has no "
                        f"{'maximum' if sig.op == 'ReduceMax' else 'minimum'}")
    if keep:
        out = tuple(1 if d in axes else s for d, s in enumerate(shape))
    else:
        out = tuple(s for d, s in enumerate(shape) if d not in axes)
    return (TensorDesc(out, dtype),)


def runs(shape: tuple[int, ...], axes: tuple[int, ...]) -> list[tuple[int, bool, int]]:
    """Coalesced (size, reduced, input stride) runs of ``shape``; size-1 dims dropped; the first run is
    kept (of size 1 when the first dims are reduced)."""
    merged: list[list] = []
    for d, size in enumerate(shape):
        if size == 1:
            continue
        reduced = d in axes
        if merged and merged[-1][1] == reduced:
            merged[-1][0] *= size
        else:
            merged.append([size, reduced])
    if not merged:
        merged = [[1, False]]
    elif merged[0][1]:
        # A leading kept run of one (an outer loop of one trip: the same folds in the same order), so a
        # whole-tensor reduction shares the row reduction's kernel and a column reduction (bias
        # gradients) the middle-axis one's: the reduced pattern always starts with a kept run.
        merged.insert(0, [1, False])
    out, stride = [], 1
    for size, reduced in reversed(merged):
        out.append((size, reduced, stride))
        stride *= size
    return list(reversed(out))


def fold(op: str, acc: str, value: str, compute: str) -> str:
    if op == "ReduceAll":
        return f"{acc} = min({acc}, {value})"
    if op == "ReduceProd":
        return f"{acc} *= {value}"
    if op not in EXTREMA:
        return f"{acc} += {value}"
    pick = "max" if op == "ReduceMax" else "min"
    if compute == "i":
        return f"{acc} = {pick}({acc}, {value})"
    return f"{acc} = nan{pick}({acc}, {value})"


# What the kernels read at run time (dynamic-shape kernels): the runs' sizes and strides, the output count
# and the reduced count; which runs are reduced shapes the loops and stays a literal.
RUNTIME_TILING = ("sizes", "strides", "n_out", "count")


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x = sig.inputs[0]
    n_out = outputs[0].size
    dims = runs(x.shape, reduce_axes(sig))
    # innermost run kept: a per-output accumulator in the workspace (8 bytes: float64 or int64)
    workspace = () if dims[-1][1] else (max(n_out, 1) * 8,)
    block_dim = max(1, min(src.MAX_BLOCKS, n_out, x.size // src.MIN_ELEMENTS_PER_BLOCK))
    cost = KernelCost(vector_ops=x.size, bytes=x.nbytes + outputs[0].nbytes, dtype=x.dtype)
    count = math.prod(x.shape[a] for a in reduce_axes(sig))
    tiling = dict(reduced=tuple(red for _, red, _ in dims), sizes=tuple(size for size, _, _ in dims),
                  strides=tuple(stride for _, _, stride in dims), n_out=n_out, count=count)
    return Plan(block_dim, cost, workspace, tiling)


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    dtype, op = x.dtype, sig.op
    compute = "f" if dtype in FLOATS else "i"
    if op == "ReduceAll":
        init = "i64(1)"
    elif op == "ReduceMax":
        init = f"i64({INT64_MIN})" if compute == "i" else "f32(-np.inf)"
    elif op == "ReduceMin":
        init = f"i64({INT64_MAX})" if compute == "i" else "f32(np.inf)"
    elif op == "ReduceProd":
        init = "i64(1)" if compute == "i" else "f64(1.0)"
    else:
        init = "i64(0)" if compute == "i" else "f64(0.0)"
    # extrema of float32/16/bfloat16 fold in float32 (exact: they pick an element), float64's in float64
    acc_type = "int64" if compute == "i" else ("float32" if op in EXTREMA and dtype != "float64" else "float64")
    t = plan.tiling
    dims = list(zip(t["sizes"], t["reduced"], t["strides"]))
    count, n_out = t["count"], t["n_out"]
    kept = [(s, st) for s, red, st in dims if not red]
    reduced = [(s, st) for s, red, st in dims if red]

    def finish(value: str) -> str:
        if op == "ReduceMean":
            value = f"fdiv({value}, f64({count}))"
        return src.store(dtype, value) if compute == "f" or dtype == "bool" else f"np.{dtype}({value})"

    def unravel(index: str, dims_strides: list[tuple[int, int]], target: str) -> list[str]:
        lines = [f"{target} = 0", f"r = {index}"]
        for size, stride in reversed(dims_strides):
            lines += [f"{target} += (r % {size}) * {stride}", f"r = r // {size}"]
        return lines

    def reduced_loops(dims_strides: list[tuple[int, int]], base: str, body) -> list[str]:
        """Nested loops over ``dims_strides`` with offset variable o<depth>; body(offset) at the bottom."""
        lines, offset = [], base
        for depth, (size, stride) in enumerate(dims_strides):
            lines += src.indent([f"for q{depth} in range({size}):",
                                f"    o{depth} = {offset} + q{depth} * {stride}"], depth)
            offset = f"o{depth}"
        return lines + src.indent(body(offset), len(dims_strides))

    lines = src.HEADER + src.views(("x", 0, dtype), ("y", 1, dtype))
    if t["reduced"][-1]:
        # Innermost run reduced: one contiguous row fold per outer reduced combination.
        inner = dims[-1][0]

        def row(offset: str) -> list[str]:
            parts = [f"p{k}" for k in range(PARTIALS)]
            body = ["j = 0", f"while j + {PARTIALS} <= {inner}:"]
            body += ["    " + fold(op, parts[k], src.load(dtype, f"x[{offset} + j + {k}]"), compute)
                     for k in range(PARTIALS)]
            body += [f"    j += {PARTIALS}", f"while j < {inner}:",
                     "    " + fold(op, "p0", src.load(dtype, f"x[{offset} + j]"), compute), "    j += 1"]
            return body

        body = unravel("u", kept, "base") + [f"p{k} = {init}" for k in range(PARTIALS)]
        body += reduced_loops(reduced[:-1], "base", row)
        body += [fold(op, "p0", f"p{k}", compute) for k in range(1, PARTIALS)]
        body.append(f"y[u] = {finish('p0')}")
        lines += src.indent(src.split_lines(str(n_out)))
        lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    else:
        # Innermost run kept: fold contiguous output runs into a per-output workspace accumulator.
        inner = dims[-1][0]
        lines += src.views(("w", 2, acc_type))
        lines += src.indent(src.split_lines(str(n_out)))
        body = [f"start = row * {inner}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {inner})",
                "for j in range(j0, j1):", f"    w[start + j] = {init}"]
        body += unravel("row", kept[:-1], "base")

        def run(offset: str) -> list[str]:
            return ["for j in range(j0, j1):",
                    "    v = " + src.load(dtype, f"x[{offset} + j]"),
                    "    " + fold(op, "w[start + j]", "v", compute)]

        body += reduced_loops(reduced, "base", run)
        body += ["for j in range(j0, j1):", f"    y[start + j] = {finish('w[start + j]')}", "row += 1"]
        lines += [f"    row = lo // {inner}", f"    while row * {inner} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


# ------------------------------------------------------------------------------------------ AllFinite

def infer_all_finite(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, None)
    for i in range(len(sig.inputs)):
        check_dtype(sig, i, NUMBER)
    return (TensorDesc((), "bool"),)


def plan_all_finite(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    n = sum(d.size for d in sig.inputs)
    return Plan(1, KernelCost(vector_ops=n, bytes=sum(d.nbytes for d in sig.inputs) + 1, dtype=sig.inputs[0].dtype),
                tiling={"sizes": tuple(d.size for d in sig.inputs)})


def emit_all_finite(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """The inputs' sizes are tiling data (their count and dtypes compiled in)."""
    floats = [(i, d) for i, d in enumerate(sig.inputs) if d.dtype in FLOATS]     # ints are always finite
    lines = src.HEADER + src.views(*((f"x{i}", i, d.dtype) for i, d in floats), ("y", len(sig.inputs), "bool"))
    lines.append("    ok = i64(1)")
    for i, d in floats:
        lines += [f"    for j in range({plan.tiling['sizes'][i]}):",
                  f"        ok = min(ok, i64(math.isfinite({src.load(d.dtype, f'x{i}[j]')})))"]
    lines.append("    y[0] = np.uint8(ok)")
    return src.finish(lines)


# ------------------------------------------------------------------------------------ backward rules

def _kept(b: GradBuilder, c: GradCall, value: int) -> int:
    """An output-shaped value with the reduced axes restored as size 1 (keep_dims' shape)."""
    x = c.sig.inputs[0].shape
    axes = reduce_axes(c.sig)
    kept = tuple(1 if d in axes else s for d, s in enumerate(x))
    return value if b.desc(value).shape == kept else b.op("Reshape", value, shape=kept)


def _spread(b: GradBuilder, c: GradCall, value: int) -> int:
    """An output-shaped value put back on the input's shape: reduced axes restored as size 1, then
    broadcast (a scalar broadcasts as it is, so a literal one, a loss's sens, folds into a constant)."""
    shape = c.sig.inputs[0].shape
    return b.broadcast(value if b.desc(value).shape == () else _kept(b, c, value), shape)


def grad_sum(b: GradBuilder, c: GradCall) -> tuple[int]:
    return (_spread(b, c, c.douts[0]),)


def grad_mean(b: GradBuilder, c: GradCall) -> tuple[int]:
    """MindSpore's bprop: the sum's gradient (dout spread over the input's shape), then divided by the count.
    Spread first, a literal dout (a loss's sens) folds into a constant of the input's shape (MindSpore's
    DryRun holds it as a ConstantValue block) and the division is the one input-sized kernel."""
    x = c.sig.inputs[0]
    count = math.prod(x.shape[a] for a in reduce_axes(c.sig))
    return (b.op("Div", _spread(b, c, c.douts[0]), b.scalar(float(max(count, 1)), b.desc(c.douts[0]).dtype)),)


def grad_extremum(b: GradBuilder, c: GradCall) -> tuple[int | None]:
    """The gradient goes to the maxima (ReduceMin: minima), split evenly between ties (as MindSpore's
    ReduceMax and ReduceMin grads)."""
    x = c.inputs[0]
    dtype = c.sig.inputs[0].dtype
    if dtype not in FLOATS:
        return (None,)
    hits = b.op("Cast", b.op("Equal", x, _kept(b, c, c.outputs[0])), dst_type=dtype)
    ties = b.op("ReduceSum", hits, axis=reduce_axes(c.sig), keep_dims=True)
    # the share per reduced line in the kept shape, broadcast only by the last Mul: MindSpore's kernels
    # (Equal, Cast, SumExt, Div, Mul), so no other input-sized temporary
    share = b.op("Div", _kept(b, c, c.douts[0]), ties)
    return (b.op("Mul", hits, share),)


def grad_prod(b: GradBuilder, c: GradCall) -> tuple[int | None]:
    """The product of the other reduced elements, without a division (exact where x has zeros), as
    MindSpore's ReduceProd gradient: the reduced axes moved last and flattened, an exclusive CumProd
    from the left times one from the right."""
    x = c.sig.inputs[0]
    if x.dtype not in FLOATS:
        return (None,)
    axes = reduce_axes(c.sig)
    kept = tuple(d for d in range(len(x.shape)) if d not in axes)
    perm = kept + axes
    moved = tuple(x.shape[d] for d in perm)
    lines = b.op("Reshape", b.op("Transpose", c.inputs[0], perm=perm),
                 shape=tuple(x.shape[d] for d in kept) + (math.prod(x.shape[a] for a in axes),))
    last = len(kept)
    others = b.op("Mul", b.op("CumProd", lines, axis=last, exclusive=True, reverse=False),
                  b.op("CumProd", lines, axis=last, exclusive=True, reverse=True))
    inverse = tuple(perm.index(d) for d in range(len(perm)))
    others = b.op("Transpose", b.op("Reshape", others, shape=moved), perm=inverse)
    return (b.op("Mul", others, _spread(b, c, c.douts[0])),)


OPS: tuple[OpDef, ...] = (
    OpDef("ReduceSum", "reduce_sum", infer_reduce, plan, emit, grad=grad_sum,
          frontend=Exposure(("ReduceSum",), ("sum",)), runtime_tiling=RUNTIME_TILING),
    OpDef("ReduceMean", "reduce_mean", infer_reduce, plan, emit, grad=grad_mean,
          frontend=Exposure(("ReduceMean",), ("mean",)), runtime_tiling=RUNTIME_TILING),
    OpDef("ReduceMax", "reduce_max", infer_reduce, plan, emit, grad=grad_extremum,
          frontend=Exposure(("ReduceMax",), ("amax",)), runtime_tiling=RUNTIME_TILING),
    OpDef("ReduceMin", "reduce_min", infer_reduce, plan, emit, grad=grad_extremum,
          frontend=Exposure(("ReduceMin",), ("amin",)), runtime_tiling=RUNTIME_TILING),
    OpDef("ReduceAll", "reduce_all", infer_reduce, plan, emit,
          frontend=Exposure(("ReduceAll",), ("all",)), runtime_tiling=RUNTIME_TILING),
    OpDef("ReduceProd", "reduce_prod", infer_reduce, plan, emit, grad=grad_prod,
          frontend=Exposure(("ReduceProd",), ("prod",)), runtime_tiling=RUNTIME_TILING),
    OpDef("AllFinite", "all_finite", infer_all_finite, plan_all_finite, emit_all_finite, runtime_tiling=("sizes",)),
)
