"""Indexing: OneHot, Tile, StridedSlice (and its backward StridedSliceGrad), GatherNd, ScatterNd and
GatherD (``gather_elements``, and its backward GatherDGrad).

OneHot, Tile, StridedSlice, StridedSliceGrad and GatherNd split their output's flat range over blocks
like an elementwise op, so every output element is written by exactly one block. Tile and
StridedSlice are the elementwise family's strided loop over bit copies: Tile walks the output as the
shape (m0, s0, m1, s1, ...) and reads x through stride 0 on the repeat dims; StridedSlice reads x from
the slice's first element through step-scaled strides (negative for a reversed slice).
StridedSliceGrad walks dx (x's shape) and writes dout where an element is on the slice's lattice,
zeros elsewhere: a strided slice never reads one element twice, so its backward needs no scatter.
ScatterNd is UnsortedSegmentSum's deterministic scatter-add (misc.py: each block owns an output range
and adds every row landing in it, rows in ascending order) with an index tuple per row. GatherD
reads, for each index element, x at the same coordinates with dimension ``dim`` replaced by the
index (negative counts from the end, as in MindSpore). Its backward GatherDGrad is the same kind of
scatter-add: blocks own whole lines of dx along ``dim`` and sum each line in a float32 workspace row,
adding the line's dout elements in index order.

Out-of-range index rows read zeros (GatherNd, GatherD) or drop their row (ScatterNd, GatherDGrad), as
Gather and UnsortedSegmentSum do; MindSpore raises at run time, and so does GatherD with
``check_indices`` (the front end's GatherD): a fault report in its status word; OneHot writes
off_value for an index outside [0, depth).

Backward rules: Tile sums dout over the tiles (Reshape to (m0, s0, m1, s1, ...), ReduceSum over the
m axes); StridedSlice is StridedSliceGrad; GatherNd scatters dout with ScatterNd, ScatterNd gathers it
with GatherNd; GatherD scatters it with GatherDGrad, GatherDGrad gathers it with GatherD; OneHot
passes no gradient (MindSpore's bprop gives zeros).

Every kernel here is a dynamic-shape kernel: sizes, strides, slice starts and steps are tiling data
read at run time; dtypes, ranks, an index tuple's length and the strided loop's stride kinds are
compiled in.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from ascendemu.device.cost import KernelCost
from ascendemu.device.kernel_status import CODE, HIGH, LOW, STATUS_BYTES, VALUE, IndexOutOfRange
from ascendemu.errors import check_int
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import ITEMSIZE, OpSignature, TensorDesc

from . import src
from .common import ALL, ANY, COMPLEX, FLOAT, INDEX, check_arity, check_dtype, fail, norm_axis
from .elementwise import no_grad
from .misc import (SCATTER_ADD_TILING, STRIDED_COPY_TILING, ZERO, emit_strided_copy, infer_segment_sum,
                   scatter_add_plan, scatter_add_source, strided_copy_plan, zeros)

# StridedSlice's bit masks, MindSpore's attribute names
MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
COPYABLE = ALL + COMPLEX        # bit copies move any dtype's bytes

# What the dynamic-shape kernels of this module read at run time, by kernel (Tile and StridedSlice are
# misc.py's strided copy, ScatterNd its scatter-add): OneHot's output count, row length and depth;
# StridedSliceGrad's dx dims, the slice's starts, steps and counts and dout's strides (the rank is
# compiled in); GatherNd's and ScatterNd's dims an index tuple indexes (its length is compiled in).
ONE_HOT_TILING = ("n", "inner", "depth")
SLICE_GRAD_TILING = ("n", "dims", "starts", "steps", "counts", "dy_strides")
GATHER_ND_TILING = ("n", "dims", "inner")
SCATTER_ND_TILING = SCATTER_ADD_TILING + ("dims",)
# The row folds (TensorScatter*, UnsortedSegmentMax/Min/Prod): the rows folded in, the output rows and
# their length; a TensorScatter's also the input_x dims an index tuple (of compiled-in length) indexes.
FOLD_ROWS_TILING = ("rows", "count", "inner")
TENSOR_SCATTER_TILING = FOLD_ROWS_TILING + ("dims",)
# GatherD's and GatherDGrad's loop dims (:func:`_gather_dims`; their number and which one is ``dim``
# compiled in): sizes in index and x, strides in x and index, and dim's length in x and index.
GATHER_D_TILING = ("total", "isizes", "xsizes", "xstrides", "istrides", "n", "m", "xstep", "istep", "slot")


def contiguous_strides(shape: tuple[int, ...]) -> list[int]:
    return [math.prod(shape[d + 1:]) for d in range(len(shape))]


# ------------------------------------------------------------------------------------------ OneHot

def one_hot_axis(sig: OpSignature) -> int:
    """Where the depth dimension goes in the output: -1 (the end) or 0..rank of indices."""
    rank = len(sig.inputs[0].shape)
    axis = check_int(sig.attr("axis", -1), f"{sig.op}: attr axis", minimum=-1, maximum=rank)
    return rank if axis == -1 else axis


def infer_one_hot(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 3, ("indices", "on_value", "off_value"))
    check_dtype(sig, 0, INDEX, "indices")
    dtype = check_dtype(sig, 1, ALL, "on_value")   # the values are copied: any dtype
    if sig.inputs[2].dtype != dtype:
        raise fail(sig, f"input 2 (off_value) has dtype {sig.inputs[2].dtype} but on_value has {dtype}; "
                        f"give both values one dtype")
    for i, name in ((1, "on_value"), (2, "off_value")):
        if sig.inputs[i].shape:
            raise fail(sig, f"input {i} ({name}) must be a scalar tensor (shape ()), got shape "
                            f"{sig.inputs[i].shape}")
    depth = check_int(sig.attr("depth"), f"{sig.op}: attr depth", minimum=0)
    axis = one_hot_axis(sig)
    indices = sig.inputs[0].shape
    return (TensorDesc(indices[:axis] + (depth,) + indices[axis:], dtype),)


def plan_one_hot(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One compare and one store per output element; indices and the two values read once."""
    out = outputs[0]
    moved = out.nbytes + sig.inputs[0].nbytes + 2 * ITEMSIZE[out.dtype]
    inner = math.prod(sig.inputs[0].shape[one_hot_axis(sig):])
    tiling = dict(last=inner == 1, n=out.size, inner=inner, depth=sig.attr("depth"))
    return Plan(src.elementwise_blocks(out.size), KernelCost(vector_ops=out.size, bytes=moved, dtype=out.dtype),
                tiling=tiling)


def emit_one_hot(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Output row (a, d) of the layout (outer, depth, inner) compares indices row a with d. With the
    depth last (inner 1: a literal, the common case) output row a is index a's depth values instead,
    so no element pays a division by the run-time depth."""
    out = outputs[0]
    n, inner, depth = plan.tiling["n"], plan.tiling["inner"], plan.tiling["depth"]
    lines = src.HEADER + src.views(("ix", 0, sig.inputs[0].dtype), ("on", 1, out.dtype), ("off", 2, out.dtype),
                                   ("y", 3, out.dtype))
    lines += ["    von = on[0]", "    voff = off[0]"] + src.indent(src.split_lines(str(n)))
    if plan.tiling["last"]:
        body = [f"start = row * {depth}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {depth})",
                "t = i64(ix[row])", "for j in range(j0, j1):", "    y[start + j] = pick(j == t, von, voff)",
                "row += 1"]
        lines += [f"    row = lo // {depth}", f"    while row * {depth} < hi:"] + src.indent(body, 2)
        return src.finish(lines)
    body = [f"start = row * {inner}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {inner})",
            f"d = row % {depth}", f"at = (row // {depth}) * {inner}",
            "for j in range(j0, j1):", "    y[start + j] = pick(i64(ix[at + j]) == d, von, voff)",
            "row += 1"]
    lines += [f"    row = lo // {inner}", f"    while row * {inner} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


# -------------------------------------------------------------------------------------------- Tile

def tile_layout(sig: OpSignature) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(x's shape, multiples), the shorter one padded with leading 1s (MindSpore's rule)."""
    x = sig.inputs[0].shape
    multiples = sig.attr("multiples")
    if (not isinstance(multiples, tuple) or not multiples
            or not all(isinstance(m, int) and not isinstance(m, bool) and m >= 0 for m in multiples)):
        raise fail(sig, f"attr multiples={multiples!r} must be a non-empty tuple of ints >= 0")
    rank = max(len(x), len(multiples))
    return (1,) * (rank - len(x)) + x, (1,) * (rank - len(multiples)) + multiples


def infer_tile(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, COPYABLE, "x")
    shape, multiples = tile_layout(sig)
    return (TensorDesc(tuple(s * m for s, m in zip(shape, multiples)), dtype),)


def plan_copy(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Tile, StridedSlice, GatherNd: every output byte written once and read once from x (GatherNd
    also reads its indices)."""
    out = outputs[0]
    extra = sig.inputs[1].nbytes if sig.op == "GatherNd" else 0
    return Plan(src.elementwise_blocks(out.size), KernelCost(bytes=2 * out.nbytes + extra, dtype=out.dtype))


def plan_tile(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    shape, multiples = tile_layout(sig)
    expanded = tuple(v for pair in zip(multiples, shape) for v in pair)
    strides = [v for st in contiguous_strides(shape) for v in (0, st)]
    return strided_copy_plan(plan_copy(sig, outputs), expanded, strides)


def grad_tile(b: GradBuilder, c: GradCall) -> tuple[int]:
    """dout viewed as (m0, s0, m1, s1, ...), summed over the repeated axes."""
    shape, multiples = tile_layout(c.sig)
    expanded = tuple(v for pair in zip(multiples, shape) for v in pair)
    axes = tuple(2 * d for d, m in enumerate(multiples) if m != 1)
    g = b.op("Reshape", c.douts[0], shape=expanded)
    if axes:
        g = b.op("ReduceSum", g, axis=axes, keep_dims=False)
    return (b.op("Reshape", g, shape=c.sig.inputs[0].shape),)


# ------------------------------------------------------------------------------------ StridedSlice

def _attr_ints(sig: OpSignature, name: str) -> tuple[int, ...]:
    value = sig.attr(name)
    if not isinstance(value, tuple) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise fail(sig, f"attr {name}={value!r} must be a tuple of ints")
    return value


def strided_spec(sig: OpSignature, shape: tuple[int, ...]) -> tuple[list[int], list[int], list[int], tuple[int, ...]]:
    """(start, step, count) per dimension of an x of ``shape``, and the output shape, of a StridedSlice.

    TensorFlow's rules, which MindSpore follows: entry i of begin/end/strides indexes the next
    dimension of x unless bit i of ellipsis_mask is set (it stands for every dimension the other
    entries leave over) or of new_axis_mask (a new dimension of size 1, consuming none of x). A
    begin_mask/end_mask bit means "from the start"/"to the end" (reversed for a negative step); a
    shrink_axis_mask bit takes element begin[i] and drops the dimension. Negative begin/end count
    from the end; out-of-range ones are clamped as Python clamps slices. Dimensions the entries do not
    reach are taken whole.
    """
    begin, end, strides = (_attr_ints(sig, name) for name in ("begin", "end", "strides"))
    if not len(begin) == len(end) == len(strides):
        raise fail(sig, f"attrs begin {begin}, end {end} and strides {strides} must have one length")
    masks = {name: check_int(sig.attr(name, 0), f"{sig.op}: attr {name}", minimum=0) for name in MASKS}

    def bit(name: str, i: int) -> bool:
        return bool(masks[name] >> i & 1)

    entries = range(len(begin))
    if sum(bit("ellipsis_mask", i) for i in entries) > 1:
        raise fail(sig, f"attr ellipsis_mask={masks['ellipsis_mask']} sets more than one bit; an index "
                        f"has at most one Ellipsis")
    indexing = sum(1 for i in entries if not bit("ellipsis_mask", i) and not bit("new_axis_mask", i))
    if indexing > len(shape):
        raise fail(sig, f"{indexing} entries index dimensions of x, but x has shape {shape} "
                        f"(rank {len(shape)}); too many indices")
    starts, steps, counts, out = [], [], [], []

    def whole(d: int) -> None:
        starts.append(0), steps.append(1), counts.append(shape[d]), out.append(shape[d])

    d = 0
    for i in entries:
        if bit("ellipsis_mask", i):
            for _ in range(len(shape) - indexing):
                whole(d)
                d += 1
            continue
        if bit("new_axis_mask", i):
            out.append(1)
            continue
        size, step = shape[d], strides[i]
        if bit("shrink_axis_mask", i):
            index = begin[i] + size if begin[i] < 0 else begin[i]
            if not 0 <= index < size:
                raise fail(sig, f"index {begin[i]} is out of bounds for dimension {d} with size {size}")
            starts.append(index), steps.append(1), counts.append(1)
        else:
            if step == 0:
                raise fail(sig, f"attr strides={strides}: strides[{i}] is 0; a slice step cannot be zero")
            low, high = (0, size) if step > 0 else (-1, size - 1)

            def clamp(v: int) -> int:
                return min(max(v + size if v < 0 else v, low), high)

            first = (0 if step > 0 else size - 1) if bit("begin_mask", i) else clamp(begin[i])
            stop = (size if step > 0 else -1) if bit("end_mask", i) else clamp(end[i])
            count = max(0, -(-(stop - first) // step))
            starts.append(first if count else 0), steps.append(step), counts.append(count), out.append(count)
        d += 1
    while d < len(shape):
        whole(d)
        d += 1
    return starts, steps, counts, tuple(out)


def infer_strided_slice(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, COPYABLE, "x")
    if not sig.inputs[0].shape:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    return (TensorDesc(strided_spec(sig, sig.inputs[0].shape)[3], dtype),)


def plan_strided_slice(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x = sig.inputs[0]
    starts, steps, counts, _ = strided_spec(sig, x.shape)
    strides = contiguous_strides(x.shape)
    base = sum(s * st for s, st in zip(starts, strides))
    full = [step * st for step, st in zip(steps, strides)]
    return strided_copy_plan(plan_copy(sig, outputs), tuple(counts), full, base)


def slice_shape(sig: OpSignature) -> tuple[int, ...]:
    """StridedSliceGrad's attr shapex: the forward input's shape."""
    shape = sig.attr("shapex")
    if (not isinstance(shape, tuple) or not shape
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise fail(sig, f"attr shapex={shape!r} must be a non-empty tuple of ints >= 0")
    return shape


def infer_strided_slice_grad(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("dy",))
    dtype = check_dtype(sig, 0, ANY, "dy")
    shape = slice_shape(sig)
    want = strided_spec(sig, shape)[3]
    if sig.inputs[0].shape != want:
        raise fail(sig, f"input 0 (dy) has shape {sig.inputs[0].shape}, but the slice of x {shape} has {want}")
    return (TensorDesc(shape, dtype),)


def plan_strided_slice_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """dx written once (zeros or dy), dy read once."""
    out = outputs[0]
    cost = KernelCost(bytes=out.nbytes + sig.inputs[0].nbytes, dtype=out.dtype)
    starts, steps, counts, _ = strided_spec(sig, out.shape)
    tiling = dict(n=out.size, dims=out.shape, starts=tuple(starts), steps=tuple(steps), counts=tuple(counts),
                  dy_strides=tuple(contiguous_strides(tuple(counts))))
    return Plan(src.elementwise_blocks(out.size), cost, tiling=tiling)


def emit_strided_slice_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Each dx row (last dimension) is zeroed, and if its outer index is on the slice's lattice in
    every dimension, the row's slice elements are copied from dy."""
    out = outputs[0]
    t = plan.tiling
    shape, starts, steps, counts, dy_strides = t["dims"], t["starts"], t["steps"], t["counts"], t["dy_strides"]
    row = shape[-1]
    lines = src.HEADER + src.views(("dy", 0, out.dtype), ("y", 1, out.dtype))
    lines += src.indent(src.split_lines(str(t["n"])))
    body = [f"start = row * {row}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {row})",
            "for j in range(j0, j1):", f"    y[start + j] = {ZERO[out.dtype]}",
            "ok = True", "base = 0", "r = row"]
    for d in reversed(range(len(shape) - 1)):
        body += [f"q = r % {shape[d]} - {starts[d]}", f"r = r // {shape[d]}",
                 f"ok = ok and q % {steps[d]} == 0 and q // {steps[d]} >= 0 and q // {steps[d]} < {counts[d]}",
                 f"base += (q // {steps[d]}) * {dy_strides[d]}"]
    body += ["if ok:",
             f"    for t in range({counts[-1]}):",
             f"        p = {starts[-1]} + t * {steps[-1]}",
             "        if p >= j0 and p < j1:",
             "            y[start + p] = dy[base + t]",
             "row += 1"]
    lines += [f"    row = lo // {row}", f"    while row * {row} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


def grad_strided_slice(b: GradBuilder, c: GradCall) -> tuple[int]:
    attrs: dict[str, Any] = dict(c.sig.attrs)
    return (b.op("StridedSliceGrad", c.douts[0], shapex=c.sig.inputs[0].shape, **attrs),)


# ------------------------------------------------------------------------------- GatherNd, ScatterNd

def index_depth(sig: OpSignature, indices: tuple[int, ...], shape: tuple[int, ...], name: str) -> int:
    """m, the length of one index tuple (indices' last dimension), 1..rank of the indexed tensor."""
    if not indices:
        raise fail(sig, "indices must have rank >= 1 (the last dimension holds one index tuple)")
    m = indices[-1]
    if not 1 <= m <= len(shape):
        raise fail(sig, f"indices shape {indices} holds index tuples of length {m}, but {name} has shape "
                        f"{shape}; the last dimension of indices must be in 1..{len(shape)}")
    return m


def infer_gather_nd(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("input_x", "indices"))
    dtype = check_dtype(sig, 0, ANY, "input_x")
    check_dtype(sig, 1, ("int32",), "indices")
    x, indices = sig.inputs[0].shape, sig.inputs[1].shape
    m = index_depth(sig, indices, x, "input_x")
    return (TensorDesc(indices[:-1] + x[m:], dtype),)


def linear_index(shape: tuple[int, ...], m: int) -> list[str]:
    """Source lines: ``s``, the row of index tuple r of ``ix`` in ``shape[:m]``, -1 if out of range."""
    lines = ["s = 0", "ok = True"]
    for j in range(m):
        lines += [f"c = i64(ix[r * {m} + {j}])", f"ok = ok and c >= 0 and c < {shape[j]}", f"s = s * {shape[j]} + c"]
    return lines + ["if not ok:", "    s = -1"]


def plan_gather_nd(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Index tuples of length ``m`` (compiled in) into x's first m dims, each selecting a row of the rest."""
    x, m = sig.inputs[0].shape, sig.inputs[1].shape[-1]
    tiling = dict(n=outputs[0].size, dims=x[:m], inner=max(math.prod(x[m:]), 1))
    return replace(plan_copy(sig, outputs), tiling=tiling)


def emit_gather_nd(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    out = outputs[0]
    t = plan.tiling
    inner = t["inner"]
    lines = src.HEADER + src.views(("p", 0, x.dtype), ("ix", 1, "int32"), ("y", 2, out.dtype))
    lines += src.indent(src.split_lines(str(t["n"])))
    body = ["r = row"] + linear_index(t["dims"], len(t["dims"])) + [
        f"start = row * {inner}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {inner})",
        "if s >= 0:",
        "    for j in range(j0, j1):", f"        y[start + j] = p[s * {inner} + j]",
        "else:",
        "    for j in range(j0, j1):", f"        y[start + j] = {ZERO[out.dtype]}",
        "row += 1"]
    lines += [f"    row = lo // {inner}", f"    while row * {inner} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


def scatter_shape(sig: OpSignature) -> tuple[int, ...]:
    shape = sig.attr("shape")
    if (not isinstance(shape, tuple) or not shape
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise fail(sig, f"attr shape={shape!r} must be a non-empty tuple of ints >= 0")
    return shape


def infer_scatter_nd(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("indices", "updates"))
    check_dtype(sig, 0, ("int32",), "indices")
    dtype = check_dtype(sig, 1, ANY, "updates")
    shape = scatter_shape(sig)
    indices, updates = sig.inputs[0].shape, sig.inputs[1].shape
    m = index_depth(sig, indices, shape, "the output")
    if updates != indices[:-1] + shape[m:]:
        raise fail(sig, f"input 1 (updates) has shape {updates}; indices {indices} into shape {shape} "
                        f"need updates of shape {indices[:-1] + shape[m:]}")
    return (TensorDesc(shape, dtype),)


def _scatter_rows(sig: OpSignature) -> TensorDesc:
    """ScatterNd's output as the scatter-add sees it: one row per index tuple's target."""
    shape, m = scatter_shape(sig), sig.inputs[0].shape[-1]
    return TensorDesc((math.prod(shape[:m]),) + shape[m:], sig.inputs[1].dtype)


def plan_scatter_nd(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """The scatter-add's plan, plus the output dims an index tuple (of compiled-in length) indexes."""
    indices, updates = sig.inputs
    plan = scatter_add_plan(updates, indices, _scatter_rows(sig), math.prod(indices.shape[:-1]))
    return replace(plan, tiling=dict(plan.tiling, dims=scatter_shape(sig)[:indices.shape[-1]]))


def emit_scatter_nd(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    dims = plan.tiling["dims"]
    return scatter_add_source(sig.inputs[1], 1, 0, outputs[0], plan, linear_index(dims, len(dims)))


def grad_gather_nd(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    if not c.wants[0]:
        return None, None
    return b.op("ScatterNd", c.inputs[1], c.douts[0], shape=c.sig.inputs[0].shape), None


def grad_scatter_nd(b: GradBuilder, c: GradCall) -> tuple[None, int | None]:
    if not c.wants[1]:
        return None, None
    return None, b.op("GatherNd", c.douts[0], c.inputs[0])


# ------------------------------------------------------------------------------- GatherD, GatherDGrad

def gather_dim(sig: OpSignature, x: tuple[int, ...], index: tuple[int, ...]) -> int:
    """GatherD's ``dim`` (normalised), after checking that index fits x: one rank, and index no larger
    than x along every other dimension (MindSpore's rules)."""
    if not x:
        raise fail(sig, "input x must have rank >= 1, got a scalar")
    if len(index) != len(x):
        raise fail(sig, f"index shape {index} must have the rank of x {x}")
    dim = norm_axis(sig, sig.attr("dim"), len(x), "dim")
    for d, (i, n) in enumerate(zip(index, x)):
        if d != dim and i > n:
            raise fail(sig, f"index shape {index} is larger than x {x} in dimension {d}; only dimension "
                            f"{dim} (dim) may be larger")
    return dim


def infer_gather_d(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("x", "index"))
    dtype = check_dtype(sig, 0, ANY, "x")
    check_dtype(sig, 1, INDEX, "index")
    gather_dim(sig, sig.inputs[0].shape, sig.inputs[1].shape)
    return (TensorDesc(sig.inputs[1].shape, dtype),)


def gather_d_shape(sig: OpSignature) -> tuple[int, ...]:
    """GatherDGrad's attr shape: the forward input's shape."""
    shape = sig.attr("shape")
    if (not isinstance(shape, tuple) or not shape
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise fail(sig, f"attr shape={shape!r} must be a non-empty tuple of ints >= 0")
    return shape


def infer_gather_d_grad(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("index", "dout"))
    check_dtype(sig, 0, INDEX, "index")
    dtype = check_dtype(sig, 1, FLOAT, "dout")
    index, dout = sig.inputs[0].shape, sig.inputs[1].shape
    if dout != index:
        raise fail(sig, f"input 1 (dout) has shape {dout}; it must have index's shape {index}")
    shape = gather_d_shape(sig)
    gather_dim(sig, shape, index)
    return (TensorDesc(shape, dtype),)


def _gather_dims(x: tuple[int, ...], index: tuple[int, ...], dim: int) -> list[list]:
    """GatherD's loop dimensions: [index size, x size, x stride, index stride, is dim] per dimension,
    adjacent dimensions on one side of ``dim`` merged where index and x agree on both (one coordinate
    then walks both tensors contiguously), so the common case is three loops (before, dim, after)."""
    xs, ist = contiguous_strides(x), contiguous_strides(index)
    dims: list[list] = []
    for d in range(len(x)):
        entry = [index[d], x[d], xs[d], ist[d], d == dim]
        last = dims[-1] if dims else None
        if last is not None and not last[4] and d != dim and last[0] == last[1] and index[d] == x[d]:
            last[0] *= index[d]
            last[1] *= x[d]
            last[2], last[3] = xs[d], ist[d]
        else:
            dims.append(entry)
    return dims


def _decompose(var: str, sizes: list[int]) -> list[str]:
    """Source lines splitting ``var`` into coordinates c0, c1, ... over ``sizes`` (last fastest)."""
    lines = [f"r = {var}"]
    for k in reversed(range(len(sizes))):
        lines += [f"c{k} = r % {sizes[k]}", f"r = r // {sizes[k]}"] if k else ["c0 = r"]
    return lines


def gather_d_tiling(x: tuple[int, ...], index: tuple[int, ...], dim: int, total: int) -> dict:
    """The loop of a GatherD (x, index) or GatherDGrad (dx, index): ``at`` and ``count`` (which loop
    dim is ``dim``, how many there are) compiled in, sizes and strides per loop dim other than ``dim``
    read at run time, ``total`` work units."""
    dims = _gather_dims(x, index, dim)
    at = next(k for k, e in enumerate(dims) if e[4])
    others = [e for e in dims if not e[4]]
    return dict(at=at, count=len(dims), total=total, isizes=tuple(e[0] for e in dims),
                xsizes=tuple(e[1] for e in others), xstrides=tuple(e[2] for e in others),
                istrides=tuple(e[3] for e in others), n=x[dim], m=index[dim], xstep=dims[at][2], istep=dims[at][3],
                slot=max(x[dim], 1))


def plan_gather_d(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Every output element reads its index and one element of x. With ``check_indices`` (MindSpore's
    GatherD: the front end sets it) an index outside [-n, n) is a fault report in the kernel's status
    word (``device.kernel_status``), else it reads zero (GatherDGrad's adjoint gathers)."""
    out = outputs[0]
    cost = KernelCost(vector_ops=out.size, bytes=2 * out.nbytes + sig.inputs[1].nbytes, dtype=out.dtype)
    x, index = sig.inputs[0].shape, sig.inputs[1].shape
    check = bool(sig.attr("check_indices", False))
    tiling = {**gather_d_tiling(x, index, gather_dim(sig, x, index), out.size), "check": check}
    if check:
        return Plan(src.elementwise_blocks(out.size), cost, (STATUS_BYTES,), tiling, fault=gather_d_fault)
    return Plan(src.elementwise_blocks(out.size), cost, tiling=tiling)


def gather_d_fault(report: Sequence[int]) -> str:
    """MindSpore's text for an out-of-range GatherD index (its CPU kernel's, gather_d_cpu_kernel.cc)."""
    return f"For 'GatherD', the value of 'index' must be in [{report[LOW]}, {report[HIGH]}), but got: {report[VALUE]}"


def emit_gather_d(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Output element f (index's shape) reads x at f's coordinates with dimension ``dim`` replaced by
    index[f] (negative: counted from the end); an index outside [-n, n) reads zero."""
    x, index = sig.inputs
    out = outputs[0]
    t = plan.tiling
    n, step, at = t["n"], t["xstep"], t["at"]
    body = _decompose("f", list(t["isizes"])) + ["off = 0"]
    coords = [k for k in range(t["count"]) if k != at]      # loop dim k of x's other dims
    body += [f"off += c{k} * {st}" for k, st in zip(coords, t["xstrides"])]
    report = [f"status[{VALUE}] = i64(ix[f])", f"status[{LOW}] = -{n}", f"status[{HIGH}] = {n}",
              f"status[{CODE}] = {IndexOutOfRange.code}"] if t["check"] else []
    body += ["p = i64(ix[f])", "if p < 0:", f"    p += {n}",
             f"if p >= 0 and p < {n}:", f"    y[f] = x[off + p * {step}]",
             "else:", *src.indent(report), f"    y[f] = {ZERO[out.dtype]}"]
    lines = src.HEADER + src.views(("x", 0, x.dtype), ("ix", 1, sig.inputs[1].dtype), ("y", 2, out.dtype))
    if t["check"]:                  # the status word: GatherD's one workspace (argument 3)
        lines += src.views(("status", 3, "int64"))
    lines += src.indent(src.split_lines(str(t["total"]))) + ["    for f in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def plan_gather_d_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Blocks own lines of dx along ``dim`` (x's other coordinates); each line is summed in a float32
    workspace row of n elements, adding every dout element of its index line once."""
    index, dout = sig.inputs
    out = outputs[0]
    dim = gather_dim(sig, out.shape, index.shape)
    n = out.shape[dim]
    lines = out.size // n if n else 0
    block_dim = max(1, min(lines, src.elementwise_blocks(out.size)))
    cost = KernelCost(vector_ops=dout.size + out.size,
                      bytes=index.nbytes + dout.nbytes + out.nbytes + 8 * out.size, dtype=out.dtype)
    return Plan(block_dim, cost, (block_dim * max(n, 1) * 4,), gather_d_tiling(out.shape, index.shape, dim, lines))


def emit_gather_d_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """dx line (the other coordinates fixed) = the sum, in index order, of the dout elements of the
    same coordinates whose index (wrapped like GatherD's) points into the line; a line outside index's
    extent is zeros. No two blocks write one element: deterministic, like UnsortedSegmentSum."""
    out = outputs[0]
    t = plan.tiling
    n, m, xstep, istep = t["n"], t["m"], t["xstep"], t["istep"]
    isizes = [size for k, size in enumerate(t["isizes"]) if k != t["at"]]
    body = _decompose("u", list(t["xsizes"])) + ["xo = 0", "io = 0", "ok = True"]
    for k, (xst, ist, isize) in enumerate(zip(t["xstrides"], t["istrides"], isizes)):
        # past index's extent in a loop dim (index smaller than dx there) the line gets no dout
        body += [f"xo += c{k} * {xst}", f"io += c{k} * {ist}", f"ok = ok and c{k} < {isize}"]
    body += [f"for p in range({n}):", "    acc[w + p] = f32(0.0)",
             "if ok:",
             f"    for t in range({m}):",
             f"        q = i64(ix[io + t * {istep}])",
             "        if q < 0:", f"            q += {n}",
             f"        if q >= 0 and q < {n}:",
             f"            acc[w + q] += {src.load(out.dtype, f'dy[io + t * {istep}]')}",
             f"for p in range({n}):", f"    dx[xo + p * {xstep}] = {src.store(out.dtype, 'acc[w + p]')}"]
    lines = src.HEADER + src.views(("ix", 0, sig.inputs[0].dtype), ("dy", 1, out.dtype), ("dx", 2, out.dtype),
                                   ("acc", 3, "float32"))
    lines += [f"    w = block_idx * {t['slot']}"] + src.indent(src.split_lines(str(t["total"])))
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def grad_gather_d(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    """dout scattered back to where each element was read (GatherDGrad); index has no gradient."""
    if not c.wants[0]:
        return None, None
    return b.op("GatherDGrad", c.inputs[1], c.douts[0], dim=c.sig.attr("dim"), shape=c.sig.inputs[0].shape), None


def grad_gather_d_grad(b: GradBuilder, c: GradCall) -> tuple[None, int | None]:
    """GatherDGrad is linear in dout; its adjoint is GatherD of the incoming gradient."""
    if not c.wants[1]:
        return None, None
    return None, b.op("GatherD", c.douts[0], c.inputs[0], dim=c.sig.attr("dim"))


# ------------------------------------------- TensorScatter{Update,Add,...}, UnsortedSegment{Max,Min,Prod}
# Both kinds fold rows of updates (x for the segment ops) into output rows in ascending row order:
# block b owns output elements [lo, hi), initialises them (a copy of input_x; the reduction's
# identity), then folds in every row landing in them. No two blocks write one element, so repeated
# indices are deterministic: the last update wins, sums and products run in row order.

# how each op folds the update ``{u}`` into the output element ``{a}`` (compute values, src.load's types)
SCATTER_FOLDS = {"TensorScatterUpdate": "{u}", "TensorScatterAdd": "{a} + {u}", "TensorScatterSub": "{a} - {u}",
                 "TensorScatterMul": "{a} * {u}", "TensorScatterDiv": "{a} / {u}", "TensorScatterMax": "max({a}, {u})",
                 "TensorScatterMin": "min({a}, {u})"}
# TensorScatterDiv of integers: C's division, truncating toward zero (MindSpore 2.10: -7 / 2 = -3; x / 0 is 0
# here, undefined there)
INT_DIVIDE_FOLD = "sdiv({a}, {u})"
SEGMENT_FOLDS = {"UnsortedSegmentMax": "max({a}, {u})", "UnsortedSegmentMin": "min({a}, {u})",
                 "UnsortedSegmentProd": "{a} * {u}"}


def segment_identity(op: str, dtype: str) -> str:
    """An empty segment's value, as MindSpore gives it: the lowest finite value for Max, the highest
    for Min, 1 for Prod (in the output's storage type)."""
    if op == "UnsortedSegmentProd":
        return src.store(dtype, "1")
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
    value = info.min if op == "UnsortedSegmentMax" else info.max
    return src.store(dtype, repr(float(value)) if dtype.startswith("float") else str(int(value)))


def infer_tensor_scatter(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """input_x's shape and dtype; updates holds one slice of input_x per index tuple."""
    check_arity(sig, 3, ("input_x", "indices", "updates"))
    dtype = check_dtype(sig, 0, ANY, "input_x")
    check_dtype(sig, 1, ("int32",), "indices")
    x, indices, updates = (d.shape for d in sig.inputs)
    if sig.inputs[2].dtype != dtype:
        raise fail(sig, f"input 2 (updates) has dtype {sig.inputs[2].dtype} but input_x has {dtype}; give both "
                        f"one dtype")
    m = index_depth(sig, indices, x, "input_x")
    if updates != indices[:-1] + x[m:]:
        raise fail(sig, f"input 2 (updates) has shape {updates}; indices {indices} into input_x {x} need updates "
                        f"of shape {indices[:-1] + x[m:]}")
    return (TensorDesc(x, dtype),)


def infer_segment_reduce(sig: OpSignature) -> tuple[TensorDesc, ...]:
    return infer_segment_sum(sig)


def plan_fold_rows(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One fold per element of the rows, one initialising store per output element; every block reads
    all the indices (and, for the scatters, copies its share of input_x)."""
    out = outputs[0]
    scatter = sig.op in SCATTER_FOLDS
    rows, ids = (sig.inputs[2], sig.inputs[1]) if scatter else (sig.inputs[0], sig.inputs[1])
    block_dim = src.elementwise_blocks(out.size)
    moved = rows.nbytes + block_dim * ids.nbytes + out.nbytes + (sig.inputs[0].nbytes if scatter else 0)
    if scatter:
        x, m = sig.inputs[0].shape, ids.shape[-1]
        tiling = dict(rows=math.prod(ids.shape[:-1]), count=math.prod(x[:m]), inner=math.prod(x[m:]), dims=x[:m])
    else:
        tiling = dict(rows=ids.size, count=out.shape[0], inner=math.prod(out.shape[1:]))
    return Plan(block_dim, KernelCost(vector_ops=rows.size + out.size, bytes=moved, dtype=out.dtype), (), tiling)


def fold_rows_source(names: tuple, t: dict, segment: list[str], init: str, fold: str, dtype: str) -> str:
    """Kernel source folding row r of ``u`` into output row s of ``y`` for r ascending; ``segment`` are
    lines computing s (out of [0, count): the row is dropped), ``init`` the line initialising y[f]."""
    value = "u[at + f]" if fold == "{u}" else src.store(
        dtype, fold.format(a=src.load(dtype, "y[f]"), u=src.load(dtype, "u[at + f]")))
    rows, count, inner = t["rows"], t["count"], t["inner"]
    lines = src.HEADER + src.views(*names) + src.indent(src.split_lines(str(count * inner)))
    body = ["for f in range(lo, hi):", "    " + init, f"for r in range({rows}):"] + src.indent(segment) + [
        f"    if s >= 0 and s < {count}:",
        f"        s0 = max(lo, s * {inner})", f"        s1 = min(hi, s * {inner} + {inner})",
        f"        at = (r - s) * {inner}",
        "        for f in range(s0, s1):", f"            y[f] = {value}"]
    return src.finish(lines + src.indent(body))


def emit_tensor_scatter(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    dims = plan.tiling["dims"]
    names = (("x", 0, x.dtype), ("ix", 1, "int32"), ("u", 2, x.dtype), ("y", 3, x.dtype))
    fold = SCATTER_FOLDS[sig.op]
    if sig.op == "TensorScatterDiv" and x.dtype not in FLOAT:
        fold = INT_DIVIDE_FOLD
    return fold_rows_source(names, plan.tiling, linear_index(dims, len(dims)), "y[f] = x[f]", fold, x.dtype)


def emit_segment_reduce(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    out = outputs[0]
    names = (("u", 0, x.dtype), ("ix", 1, "int32"), ("y", 2, out.dtype))
    return fold_rows_source(names, plan.tiling, ["s = i64(ix[r])"], f"y[f] = {segment_identity(sig.op, out.dtype)}",
                            SEGMENT_FOLDS[sig.op], out.dtype)


def grad_tensor_scatter(b: GradBuilder, c: GradCall) -> tuple[int | None, None, int | None]:
    """MindSpore's rules: input_x gets dout (Update: with the overwritten slices zeroed), updates the
    slices of dout they landed on (Sub: negated)."""
    dout, indices = c.douts[0], c.inputs[1]
    dx = dupdates = None
    if c.wants[0]:
        dx = dout if c.sig.op != "TensorScatterUpdate" else b.op("TensorScatterUpdate", dout, indices,
                                                                   zeros(b, c.inputs[2]))
    if c.wants[2]:
        dupdates = b.op("GatherNd", dout, indices)
        if c.sig.op == "TensorScatterSub":
            dupdates = b.op("Neg", dupdates)
    return dx, None, dupdates


def grad_tensor_scatter_scale(b: GradBuilder, c: GradCall) -> tuple[int | None, None, int | None]:
    """MindSpore's rules for TensorScatterMul/Div: input_x gets dout scattered through the same op with
    the updates; updates get dout's slices times x's (Div: times -x / u^2)."""
    x, indices, updates = c.inputs
    dout = c.douts[0]
    dx = b.op(c.sig.op, dout, indices, updates) if c.wants[0] else None
    dupdates = None
    if c.wants[2]:
        dout_slices, x_slices = b.op("GatherNd", dout, indices), b.op("GatherNd", x, indices)
        if c.sig.op == "TensorScatterMul":
            dupdates = b.op("Mul", x_slices, dout_slices)
        else:
            dupdates = b.op("Mul", dout_slices, b.op("Div", x_slices, b.op("Neg", b.op("Mul", updates, updates))))
    return dx, None, dupdates


def grad_tensor_scatter_extremum(b: GradBuilder, c: GradCall) -> tuple[int | None, None, int | None]:
    """MindSpore's rule for TensorScatterMax/Min: dout is shared equally by the input elements and the
    updates that equal the output where they land."""
    x, indices, updates = c.inputs
    dout, out = c.douts[0], c.outputs[0]
    dtype = c.sig.inputs[0].dtype
    x_hits = b.op("Cast", b.op("Equal", x, out), dst_type=dtype)
    update_hits = b.op("Cast", b.op("Equal", updates, b.op("GatherNd", out, indices)), dst_type=dtype)
    hits = b.op("Add", x_hits, b.op("ScatterNd", indices, update_hits, shape=c.sig.inputs[0].shape))
    share = b.op("Div", dout, hits)
    dx = b.op("Mul", share, x_hits) if c.wants[0] else None
    dupdates = b.op("Mul", b.op("GatherNd", share, indices), update_hits) if c.wants[2] else None
    return dx, None, dupdates


def grad_segment_extremum(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    """MindSpore's rule for UnsortedSegmentMax/Min: each segment's dout is shared equally by the
    elements that equal its result."""
    if not c.wants[0]:
        return None, None
    x, ids = c.inputs
    dtype = c.sig.inputs[0].dtype
    chosen = b.op("Equal", x, b.op("Gather", c.outputs[0], ids, axis=0))
    count = b.op("UnsortedSegmentSum", b.op("Cast", chosen, dst_type=dtype), ids,
                 num_segments=c.sig.attr("num_segments"))
    share = b.op("Gather", b.op("Div", c.douts[0], count), ids, axis=0)
    return b.op("Select", chosen, share, zeros(b, share)), None


def grad_segment_prod(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    """MindSpore's rule for UnsortedSegmentProd: each element's dout times the product of the rest of its
    segment (the segment's product over x, or over its non-zero elements for the segment's only zero;
    a segment with two zeros passes no gradient)."""
    if not c.wants[0]:
        return None, None
    x, ids = c.inputs
    dtype, segments = c.sig.inputs[0].dtype, c.sig.attr("num_segments")
    is_zero = b.op("Equal", x, b.scalar(0, dtype))
    zero_count = b.op("UnsortedSegmentSum", b.op("Cast", is_zero, dst_type="int32"), ids, num_segments=segments)
    dout = b.op("Select", b.op("Greater", zero_count, b.scalar(1, "int32")), zeros(b, c.douts[0]), c.douts[0])
    non_zero = b.op("Select", is_zero, b.broadcast(b.scalar(1, dtype), c.sig.inputs[0].shape), x)
    non_zero_prod = b.op("Gather", b.op("UnsortedSegmentProd", non_zero, ids, num_segments=segments), ids, axis=0)
    others = b.op("Select", is_zero, non_zero_prod, b.op("Div", b.op("Gather", c.outputs[0], ids, axis=0), x))
    return b.op("Mul", b.op("Gather", dout, ids, axis=0), others), None


# each TensorScatter's backward rule (MindSpore has one for all seven)
TENSOR_SCATTER_GRADS = {"TensorScatterUpdate": grad_tensor_scatter, "TensorScatterAdd": grad_tensor_scatter,
                        "TensorScatterSub": grad_tensor_scatter, "TensorScatterMul": grad_tensor_scatter_scale,
                        "TensorScatterDiv": grad_tensor_scatter_scale, "TensorScatterMax": grad_tensor_scatter_extremum,
                        "TensorScatterMin": grad_tensor_scatter_extremum}

OPS: tuple[OpDef, ...] = (
    OpDef("OneHot", "one_hot", infer_one_hot, plan_one_hot, emit_one_hot, grad=no_grad,
          frontend=Exposure(("OneHot",), ("one_hot",)), runtime_tiling=ONE_HOT_TILING),
    OpDef("Tile", "tile", infer_tile, plan_tile, emit_strided_copy, grad=grad_tile,
          frontend=Exposure(("Tile",), ("tile",)), runtime_tiling=STRIDED_COPY_TILING),
    OpDef("StridedSlice", "strided_slice_d", infer_strided_slice, plan_strided_slice, emit_strided_copy,
          grad=grad_strided_slice, frontend=Exposure(("StridedSlice",), ("strided_slice",)),
          runtime_tiling=STRIDED_COPY_TILING),
    OpDef("StridedSliceGrad", "strided_slice_grad_d", infer_strided_slice_grad, plan_strided_slice_grad,
          emit_strided_slice_grad, runtime_tiling=SLICE_GRAD_TILING),
    OpDef("GatherNd", "gather_nd", infer_gather_nd, plan_gather_nd, emit_gather_nd, grad=grad_gather_nd,
          frontend=Exposure(("GatherNd",), ("gather_nd",)), runtime_tiling=GATHER_ND_TILING),
    OpDef("ScatterNd", "scatter_nd", infer_scatter_nd, plan_scatter_nd, emit_scatter_nd, grad=grad_scatter_nd,
          frontend=Exposure(("ScatterNd",), ("scatter_nd",)), runtime_tiling=SCATTER_ND_TILING),
    OpDef("GatherD", "gather_d", infer_gather_d, plan_gather_d, emit_gather_d, grad=grad_gather_d,
          frontend=Exposure(("GatherD",), ("gather_elements", "gather_d")), runtime_tiling=GATHER_D_TILING),
    OpDef("GatherDGrad", "gather_d_grad_v2", infer_gather_d_grad, plan_gather_d_grad, emit_gather_d_grad,
          grad=grad_gather_d_grad, runtime_tiling=GATHER_D_TILING),
    *(OpDef(name, f"tensor_scatter_{name[len('TensorScatter'):].lower()}", infer_tensor_scatter, plan_fold_rows,
            emit_tensor_scatter, grad=TENSOR_SCATTER_GRADS[name],
            runtime_tiling=TENSOR_SCATTER_TILING)
      for name in SCATTER_FOLDS),
    *(OpDef(name, f"unsorted_segment_{name[len('UnsortedSegment'):].lower()}", infer_segment_reduce, plan_fold_rows,
            emit_segment_reduce, grad=grad_segment_extremum if name != "UnsortedSegmentProd" else grad_segment_prod,
            runtime_tiling=FOLD_ROWS_TILING)
      for name in SEGMENT_FOLDS),
)
