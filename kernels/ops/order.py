"""Order statistics: Argmax/Argmin, ArgMaxWithValue/ArgMinWithValue (index and value of the extremum
along one axis), TopK (the k largest, or smallest, along the last axis, best first) and Sort (every
element along any axis, ascending or ``descending``, with the indices it came from).

Ties go to the lowest index, and NaN is picked first as numpy's argmax/argmin pick it (the arg
reductions return the first NaN, as ReduceMax/ReduceMin return NaN); TopK orders NaN above every
number, as a descending sort does: its largest k put NaNs first, its smallest k last. Sort orders
the same way (ascending: NaN last, like numpy; descending: NaN first) and keeps equal elements in
index order (a stable sort).

The arg reductions split their output elements over blocks; each scans its axis in order. TopK splits
rows over blocks; each row streams its n elements through a binary heap of the k best seen so far
(worst at the root) kept in the block's own workspace slice, then pops the heap from the back of the
output, so values come out sorted: O(n log k + k log k) per row, no allocation. Sort is the same
kernel with k = n, its lines strided along any axis. Values compare in float64 registers, exact
for float16, float32 and int32. All are dynamic-shape kernels (ORDER_RUNTIME_TILING).

Backward rules: ArgMaxWithValue/ArgMinWithValue send the value's gradient to the chosen element
(a OneHot of the index times the broadcast gradient); TopK scatters the values' gradient to the
chosen elements with UnsortedSegmentSum over flat indices (row * n + index), as MindSpore's bprop
does with ScatterNd; Sort scatters it along its axis with GatherDGrad (index.py). Indices carry no
gradient.
"""
from __future__ import annotations

import math

import numpy as np

from ascendemu.device.cost import KernelCost
from ascendemu.errors import InvalidValueError, check_int
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import ANY, check_arity, check_bool, check_dtype, fail, norm_axis
from .elementwise import no_grad
from .misc import odometer

WITH_VALUE = ("ArgMaxWithValue", "ArgMinWithValue")
LARGEST = ("Argmax", "ArgMaxWithValue")


def _better(largest: bool, nan_first: bool, a: str, ia: str, b: str, ib: str) -> str:
    """Source: element (a, index ia) ranks before (b, ib): larger (or smaller) first, ties by the lower
    index, NaN before every number (``nan_first``) or after them."""
    beats = ">" if largest else "<"
    if nan_first:
        return (f"((({a} != {a}) and ({b} == {b} or {ia} < {ib})) or "
                f"({b} == {b} and ({a} {beats} {b} or ({a} == {b} and {ia} < {ib}))))")
    return (f"((({a} == {a}) and ({b} != {b} or {a} {beats} {b} or ({a} == {b} and {ia} < {ib}))) or "
            f"({a} != {a} and {b} != {b} and {ia} < {ib}))")


# ------------------------------------------------------------------------------- Argmax and friends

def _axis(sig: OpSignature) -> int:
    """The axis an op reduces or orders along: attr axis (default and TopK: the last)."""
    return norm_axis(sig, sig.attr("axis", -1), len(sig.inputs[0].shape))


def infer_arg(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, ANY, "x")
    x = sig.inputs[0].shape
    if not x:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    axis = _axis(sig)
    if x[axis] == 0:
        raise fail(sig, f"input 0 (x) shape {x} has an empty axis {axis}, which has no extremum")
    keep = check_bool(sig, "keep_dims")
    out = x[:axis] + ((1,) if keep else ()) + x[axis + 1:]
    index = TensorDesc(out, arg_index_dtype(sig))
    return (index, TensorDesc(out, dtype)) if sig.op in WITH_VALUE else (index,)


# The index dtype of the arg reductions, as MindSpore 2.10's: Argmax/Argmin take attr output_type (int32,
# its default, or int64); ArgMaxWithValue/ArgMinWithValue always give int64 indices.
ARG_INDEX_DTYPES = ("int32", "int64")
WITH_VALUE_INDEX_DTYPE = "int64"


def arg_index_dtype(sig: OpSignature) -> str:
    if sig.op in WITH_VALUE:
        return WITH_VALUE_INDEX_DTYPE
    dtype = sig.attr("output_type", "int32")
    if dtype not in ARG_INDEX_DTYPES:
        raise fail(sig, f"attr output_type={dtype!r} must be one of {ARG_INDEX_DTYPES}")
    return dtype


def _layout(sig: OpSignature) -> tuple[int, int, int]:
    """(outer, n, inner): x viewed around the reduced or ordered axis."""
    x = sig.inputs[0].shape
    axis = _axis(sig)
    return math.prod(x[:axis]), x[axis], math.prod(x[axis + 1:])


# What the arg reductions, TopK and Sort read at run time (one kernel per op, dtypes and, for TopK and
# Sort, order serves every shape): x around the axis (outer, n, inner) and the count of results along
# it (k; the arg reductions: 1). A block decodes its first line's (outer, inner) coordinates once and
# advances them per line (misc.odometer): no line divides by a run-time dim.
ORDER_RUNTIME_TILING = ("outer", "n", "inner", "k")


def order_tiling(sig: OpSignature, k: int) -> dict:
    outer, n, inner = _layout(sig)
    return dict(outer=outer, n=n, inner=inner, k=k)


def plan_arg(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One compare per element of x; x read once, the outputs written once."""
    x = sig.inputs[0]
    n_out = outputs[0].size
    block_dim = max(1, min(src.MAX_BLOCKS, n_out, x.size // src.MIN_ELEMENTS_PER_BLOCK))
    cost = KernelCost(vector_ops=x.size, bytes=x.nbytes + sum(d.nbytes for d in outputs), dtype=x.dtype)
    return Plan(block_dim, cost, (), order_tiling(sig, 1))


def emit_arg(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    t = plan.tiling
    outer, n, inner = t["outer"], t["n"], t["inner"]
    index = outputs[0].dtype
    views = [("x", 0, x.dtype), ("yi", 1, index)] + ([("yv", 2, x.dtype)] if sig.op in WITH_VALUE else [])
    better = _better(sig.op in LARGEST, True, "v", "t", "best", "bi")
    decode, advance = odometer((outer, inner))
    body = [f"base = q0 * {n * inner} + q1",
            f"best = {src.load(x.dtype, 'x[base]')}", "bi = 0",
            f"for t in range(1, {n}):",
            f"    v = {src.load(x.dtype, f'x[base + t * {inner}]')}",
            f"    if {better}:",
            "        best = v", "        bi = t",
            f"yi[u] = np.{index}(bi)"]
    if sig.op in WITH_VALUE:
        body.append(f"yv[u] = x[base + bi * {inner}]")
    body += advance
    lines = src.HEADER + src.views(*views) + src.indent(src.split_lines(str(outer * inner)) + ["row = lo", *decode])
    return src.finish(lines + ["    for u in range(lo, hi):"] + src.indent(body, 2))


def grad_arg_with_value(b: GradBuilder, c: GradCall) -> tuple[int | None]:
    """The value's gradient lands on the chosen element: OneHot(index) * broadcast(dvalue)."""
    dvalue = c.douts[1]
    if dvalue is None or not c.wants[0]:
        return (None,)
    x = c.sig.inputs[0]
    axis = _axis(c.sig)
    index = c.outputs[0]
    reduced = x.shape[:axis] + x.shape[axis + 1:]
    if b.desc(index).shape != reduced:
        index = b.op("Reshape", index, shape=reduced)
    hot = b.op("OneHot", index, b.scalar(1, x.dtype), b.scalar(0, x.dtype), depth=x.shape[axis], axis=axis)
    kept = x.shape[:axis] + (1,) + x.shape[axis + 1:]
    if b.desc(dvalue).shape != kept:
        dvalue = b.op("Reshape", dvalue, shape=kept)
    return (b.op("Mul", hot, b.broadcast(dvalue, x.shape)),)


# -------------------------------------------------------------------------------------------- TopK

def topk_k(sig: OpSignature) -> int:
    n = sig.inputs[0].shape[-1]
    return check_int(sig.attr("k"), f"{sig.op}: k", minimum=0, maximum=n, error=InvalidValueError,
                     hint=f"k counts elements of the last dimension of x {sig.inputs[0].shape}")


def infer_topk(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, ANY, "x")
    x = sig.inputs[0].shape
    if not x:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    check_bool(sig, "largest")
    out = x[:-1] + (topk_k(sig),)
    return TensorDesc(out, dtype), TensorDesc(out, "int32")


def plan_topk(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Per row: n tests against the heap's root, then (for input in random order) about k pushes and
    k pops of log2(k + 1) sift steps each (input sorted from worst to best is the worst case, n
    sifts); x read once, the outputs written once. The heap lives in two workspaces of k float64
    values and k int64 indices per block. Sort is the same kernel with k = n along its axis."""
    x = sig.inputs[0]
    outer, n, inner = _layout(sig)
    k = outputs[0].shape[_axis(sig)]
    rows = outer * inner
    block_dim = max(1, min(src.MAX_BLOCKS, rows, x.size // src.MIN_ELEMENTS_PER_BLOCK))
    depth = max(1, math.ceil(math.log2(k + 1)))
    heap = block_dim * k * 8
    cost = KernelCost(vector_ops=rows * (n + 2 * k * depth), bytes=x.nbytes + sum(d.nbytes for d in outputs),
                      dtype=x.dtype)
    largest = sig.attr("largest", True) if sig.op == "TopK" else sig.attr("descending", False)
    return Plan(block_dim, cost, (heap, heap), dict(order_tiling(sig, k), largest=largest))


def emit_topk(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Each line of x along the axis (TopK: a row; Sort: any axis, strided by ``inner``) streams
    through the heap; the k best come out best first, along the same axis of the outputs."""
    x = sig.inputs[0]
    t = plan.tiling
    outer, n, inner, k = t["outer"], t["n"], t["inner"], t["k"]
    largest = t["largest"]

    def better(a: str, ia: str, b: str, ib: str) -> str:
        return _better(largest, largest, a, ia, b, ib)

    def sift_down(size: str, value: str, index: str) -> list[str]:
        """Put (value, index) at the root and restore the heap (worst at the root) over ``size``."""
        return ["p = 0",
                "while True:",
                "    c = 2 * p + 1",
                f"    if c >= {size}:",
                "        break",
                f"    if c + 1 < {size} and {better('hv[h + c]', 'hx[h + c]', 'hv[h + c + 1]', 'hx[h + c + 1]')}:",
                "        c += 1",
                f"    if {better(value, index, 'hv[h + c]', 'hx[h + c]')}:",
                "        hv[h + p] = hv[h + c]", "        hx[h + p] = hx[h + c]", "        p = c",
                "    else:",
                "        break",
                f"hv[h + p] = {value}", f"hx[h + p] = {index}"]

    def at(base: str, pos: str) -> str:
        return f"{base} + {pos} * {inner}"

    store = "np.int32(i64(hv[h]))" if x.dtype == "int32" else src.store(x.dtype, "f32(hv[h])")
    lines = src.HEADER + src.views(("x", 0, x.dtype), ("yv", 1, x.dtype), ("yi", 2, "int32"),
                                   ("hv", 3, "float64"), ("hx", 4, "int64"))
    decode, advance = odometer((outer, inner))
    lines += [f"    h = block_idx * {k}"] + src.indent(src.split_lines(str(outer * inner)) + ["row = lo", *decode])
    body = [f"base = q0 * {n * inner} + q1", f"obase = q0 * {k * inner} + q1", "size = 0",
             f"for j in range({n}):",
             f"    v = f64({src.load(x.dtype, 'x[' + at('base', 'j') + ']')})",
             f"    if size < {k}:",
             "        p = size",                                   # push: sift up past better parents
             "        size += 1",
             "        while p > 0:",
             "            q = (p - 1) // 2",
             f"            if {better('hv[h + q]', 'hx[h + q]', 'v', 'j')}:",
             "                hv[h + p] = hv[h + q]", "                hx[h + p] = hx[h + q]", "                p = q",
             "            else:",
             "                break",
             "        hv[h + p] = v", "        hx[h + p] = j",
             f"    elif {better('v', 'j', 'hv[h]', 'hx[h]')}:"]
    body += src.indent(sift_down(str(k), "v", "j"), 2)
    body += [f"for t in range({k - 1}, -1, -1):",                 # pop the worst into the last free slot
             f"    yv[{at('obase', 't')}] = {store}", f"    yi[{at('obase', 't')}] = np.int32(hx[h])",
             "    lv = hv[h + t]", "    li = hx[h + t]"]
    body += src.indent(sift_down("t", "lv", "li")) + advance
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


# -------------------------------------------------------------------------------------------- Sort

def infer_sort(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, ANY, "x")
    x = sig.inputs[0].shape
    if not x:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    _axis(sig)
    check_bool(sig, "descending")
    return TensorDesc(x, dtype), TensorDesc(x, "int32")


def grad_sort(b: GradBuilder, c: GradCall) -> tuple[int | None]:
    """The values' gradient goes back to where each value came from: GatherDGrad along the axis."""
    dvalues = c.douts[0]
    if dvalues is None or not c.wants[0]:
        return (None,)
    x = c.sig.inputs[0]
    return (b.op("GatherDGrad", c.outputs[1], dvalues, dim=_axis(c.sig), shape=x.shape),)


def grad_topk(b: GradBuilder, c: GradCall) -> tuple[int | None]:
    dvalues = c.douts[0]
    if dvalues is None or not c.wants[0]:
        return (None,)
    x = c.sig.inputs[0]
    n, k = x.shape[-1], topk_k(c.sig)
    rows = math.prod(x.shape[:-1])
    offsets = b.constant((np.arange(rows) * n).reshape(x.shape[:-1] + (1,)), "int32")
    flat = b.op("Reshape", b.op("Add", c.outputs[1], offsets), shape=(rows * k,))
    grad = b.op("UnsortedSegmentSum", b.op("Reshape", dvalues, shape=(rows * k,)), flat, num_segments=rows * n)
    return (b.op("Reshape", grad, shape=x.shape),)


OPS: tuple[OpDef, ...] = (
    OpDef("Argmax", "arg_max_d", infer_arg, plan_arg, emit_arg, grad=no_grad,
          frontend=Exposure(("Argmax",), ("argmax",)), runtime_tiling=ORDER_RUNTIME_TILING),
    OpDef("Argmin", "arg_min_d", infer_arg, plan_arg, emit_arg, grad=no_grad,
          frontend=Exposure(("Argmin",), ("argmin",)), runtime_tiling=ORDER_RUNTIME_TILING),
    OpDef("ArgMaxWithValue", "arg_max_with_value", infer_arg, plan_arg, emit_arg, grad=grad_arg_with_value,
          frontend=Exposure(("ArgMaxWithValue",), ("max",)), runtime_tiling=ORDER_RUNTIME_TILING),
    OpDef("ArgMinWithValue", "arg_min_with_value", infer_arg, plan_arg, emit_arg, grad=grad_arg_with_value,
          frontend=Exposure(("ArgMinWithValue",), ("min",)), runtime_tiling=ORDER_RUNTIME_TILING),
    OpDef("TopK", "top_k_d", infer_topk, plan_topk, emit_topk, grad=grad_topk, frontend=Exposure(("TopK",), ("topk",)),
          runtime_tiling=ORDER_RUNTIME_TILING),
    OpDef("Sort", "sort", infer_sort, plan_topk, emit_topk, grad=grad_sort, frontend=Exposure(("Sort",), ("sort",)),
          runtime_tiling=ORDER_RUNTIME_TILING),
)
