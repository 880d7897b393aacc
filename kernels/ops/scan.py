"""Scans along one axis: CumSum and CumProd (inclusive or ``exclusive``, forward or ``reverse``) and
Cummax/Cummin (the running extremum and the index it came from).

x is viewed as (outer, n, inner) around the scanned axis; each of the outer * inner lines is scanned in
order by one block (blocks split the lines), so every output element depends only on its own line and
the result never depends on the block count. CumSum and CumProd accumulate in float64 (int64 for the
integer types, stored wrapped), as the reductions do. Cummax/Cummin keep the later index on ties and
let NaN win (as MindSpore's CPU kernels do); their indices are int64 (Cummax) and int32 (Cummin), as
MindSpore's primitives return them. All are dynamic-shape kernels
(SCAN_RUNTIME_TILING).

Backward rules: CumSum's gradient is the cumulative sum of dout the other way round; CumProd's is
MindSpore's ``cumsum(cumprod(x) * dout, reversed) / x`` (NaN or inf where x is 0, as there);
Cummax/Cummin scatter dout back to the chosen elements with GatherDGrad, as their bprop does.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOATS, NUMBER, check_arity, check_bool, check_dtype, fail, norm_axis
from .misc import odometer

# the running extrema: op -> the comparison by which a new element replaces the one kept (ties: the later)
EXTREMA = {"Cummax": ">=", "Cummin": "<="}
# the dtype of their index output: MindSpore 2.10's Cummax gives int64, its Cummin int32
EXTREMUM_INDEX = {"Cummax": "int64", "Cummin": "int32"}
# What scan kernels read at run time (one kernel per op, dtype, exclusive and reverse serves every
# shape): x around the axis. Whether the axis is innermost (lines contiguous) is compiled in: a
# contiguous CumSum ran 1.4x slower stepping by a run-time stride of 1. A block decodes its first line's (outer, inner) coordinates once and
# advances them per line (misc.odometer): no line divides by a run-time dim.
SCAN_RUNTIME_TILING = ("outer", "n", "inner")


def scan_axis(sig: OpSignature) -> int:
    """The scanned axis (attr ``axis``, required; negative counts from the end)."""
    shape = sig.inputs[0].shape
    if not shape:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    if sig.attr("axis") is None:
        raise fail(sig, "attr axis is required")
    return norm_axis(sig, sig.attr("axis"), len(shape))


def infer_scan(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, NUMBER, "x")
    scan_axis(sig)
    if sig.op in EXTREMA:
        return TensorDesc(sig.inputs[0].shape, dtype), TensorDesc(sig.inputs[0].shape, EXTREMUM_INDEX[sig.op])
    check_bool(sig, "exclusive")
    check_bool(sig, "reverse")
    return (TensorDesc(sig.inputs[0].shape, dtype),)


def _layout(sig: OpSignature) -> tuple[int, int, int]:
    """(outer, n, inner): x viewed around the scanned axis."""
    x = sig.inputs[0].shape
    axis = scan_axis(sig)
    return math.prod(x[:axis]), x[axis], math.prod(x[axis + 1:])


def plan_scan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One multiply-add (or compare) per element; x read once, the outputs written once."""
    x = sig.inputs[0]
    outer, _, inner = _layout(sig)
    lines = outer * inner
    block_dim = max(1, min(src.MAX_BLOCKS, lines, x.size // src.MIN_ELEMENTS_PER_BLOCK))
    cost = KernelCost(vector_ops=x.size, bytes=x.nbytes + sum(d.nbytes for d in outputs), dtype=x.dtype)
    tiling = dict(outer=outer, n=_layout(sig)[1], inner=inner, strided=inner != 1)
    if sig.op not in EXTREMA:
        tiling.update(exclusive=sig.attr("exclusive", False), reverse=sig.attr("reverse", False))
    return Plan(block_dim, cost, (), tiling)


def _store(dtype: str, value: str) -> str:
    return src.store(dtype, value) if dtype in FLOATS else f"np.{dtype}({value})"


def emit_scan(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    dtype = x.dtype
    t = plan.tiling
    outer, n, inner = t["outer"], t["n"], t["inner"]
    integer = dtype not in FLOATS
    views = [("x", 0, dtype), ("y", 1, dtype)]
    decode, advance = odometer((outer, inner))
    body = [f"base = q0 * {n * inner} + q1"]
    stride = f" * {inner}" if t["strided"] else ""
    if sig.op in EXTREMA:
        views.append(("yi", 2, EXTREMUM_INDEX[sig.op]))
        beats = EXTREMA[sig.op]
        body += [f"best = {src.load(dtype, 'x[base]')}", "bi = 0",
                 f"for t in range({n}):",
                 f"    o = base + t{stride}",
                 f"    v = {src.load(dtype, 'x[o]')}",
                 f"    if v != v or (best == best and v {beats} best):",
                 "        best = v",
                 "        bi = t",
                 f"    y[o] = {_store(dtype, 'best')}",
                 f"    yi[o] = np.{EXTREMUM_INDEX[sig.op]}(bi)"]
    else:
        product = sig.op == "CumProd"
        init = ("i64(1)" if product else "i64(0)") if integer else ("f64(1.0)" if product else "f64(0.0)")
        fold = "acc *= v" if product else "acc += v"
        store = f"y[o] = {_store(dtype, 'acc')}"
        step = [store, fold] if t["exclusive"] else [fold, store]
        index = f"{n - 1} - s" if t["reverse"] else "s"
        body += [f"acc = {init}",
                 f"for s in range({n}):",
                 f"    o = base + ({index}){stride}",
                 f"    v = {src.load(dtype, 'x[o]')}"] + src.indent(step)
    lines = src.HEADER + src.views(*views) + src.indent(src.split_lines(str(outer * inner)) + ["row = lo", *decode])
    return src.finish(lines + ["    for u in range(lo, hi):"] + src.indent(body + advance, 2))


# ------------------------------------------------------------------------------------ backward rules

def grad_cumsum(b: GradBuilder, c: GradCall) -> tuple[int | None]:
    """d cumsum = cumsum of dout in the other direction (exclusive stays exclusive)."""
    if c.sig.inputs[0].dtype not in FLOATS:
        return (None,)
    return (b.op("CumSum", c.douts[0], axis=scan_axis(c.sig), exclusive=c.sig.attr("exclusive", False),
                 reverse=not c.sig.attr("reverse", False)),)


def grad_cumprod(b: GradBuilder, c: GradCall) -> tuple[int | None]:
    """MindSpore's rule: cumsum(cumprod(x) * dout, the other direction) / x."""
    if c.sig.inputs[0].dtype not in FLOATS:
        return (None,)
    exclusive, reverse = c.sig.attr("exclusive", False), c.sig.attr("reverse", False)
    summed = b.op("CumSum", b.op("Mul", c.outputs[0], c.douts[0]), axis=scan_axis(c.sig), exclusive=exclusive,
                  reverse=not reverse)
    return (b.op("Div", summed, c.inputs[0]),)


def grad_running_extremum(b: GradBuilder, c: GradCall) -> tuple[int | None]:
    """dout of the values scattered back to the elements their indices name (summed where repeated)."""
    if c.douts[0] is None or c.sig.inputs[0].dtype not in FLOATS:
        return (None,)
    return (b.op("GatherDGrad", c.outputs[1], c.douts[0], dim=scan_axis(c.sig), shape=c.sig.inputs[0].shape),)


OPS: tuple[OpDef, ...] = (
    OpDef("CumSum", "cumsum", infer_scan, plan_scan, emit_scan, grad=grad_cumsum,
          frontend=Exposure(("CumSum",), ("cumsum",)), runtime_tiling=SCAN_RUNTIME_TILING),
    OpDef("CumProd", "cum_prod", infer_scan, plan_scan, emit_scan, grad=grad_cumprod,
          frontend=Exposure(("CumProd",), ("cumprod",)), runtime_tiling=SCAN_RUNTIME_TILING),
    # the Cummax/Cummin primitives are array_ops ones in MindSpore; the functions are math_func's
    OpDef("Cummax", "cummax", infer_scan, plan_scan, emit_scan, grad=grad_running_extremum,
          frontend=Exposure((), ("cummax",)), runtime_tiling=SCAN_RUNTIME_TILING),
    OpDef("Cummin", "cummin", infer_scan, plan_scan, emit_scan, grad=grad_running_extremum,
          frontend=Exposure((), ("cummin",)), runtime_tiling=SCAN_RUNTIME_TILING),
)
