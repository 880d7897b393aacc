"""Data movement: Transpose, Concat, Split, Slice, Pad, MirrorPad, Gather, UnsortedSegmentSum, and
their backward rules. Bit copies in the storage type, no conversion (except the scatter-adds
UnsortedSegmentSum and MirrorPadGrad).

Transpose, Concat, Split, Slice, Pad and Gather split the flat range of one tensor over blocks like
an elementwise op: the output, or the input for Split (whose pieces are disjoint ranges of it), so
every output element is written by exactly one block. UnsortedSegmentSum also splits its output over
blocks: each block zeroes its own range, then scans every segment id and adds the rows of x that fall
into it, in ascending row order. No two blocks write the same element, so the scatter-add has no race
and its rounding does not depend on block scheduling (float16 sums accumulate in a float32
workspace, one element per output element).

Slice and Pad are one kernel, a window: output element o reads x[o - before] (per dimension), or the
fill value where that index is outside x. Slice's window starts at -begin, Pad's at the front padding.
MirrorPad is the same window with the outside indices mirrored back into x instead of filled: REFLECT
mirrors about the edge element (x[2] x[1] | x[0] x[1] x[2] ...), SYMMETRIC about the edge itself
(x[1] x[0] | x[0] x[1] ...). Its backward kernel, MirrorPadGrad, splits rows of dx over blocks: each
dx row sums, in a fixed order, the dout rows that read it, at most three per padded dimension (itself
and a mirror on either side), so it is deterministic like UnsortedSegmentSum.

Backward rules (as MindSpore builds them): Transpose by the inverse permutation; Concat slices dout
per input; Split concatenates the douts (zeros for an output that does not reach the result); Slice
pads dout back into zeros and Pad slices it back out; MirrorPad folds dout back with MirrorPadGrad;
Gather scatters dout with UnsortedSegmentSum over the gathered axis (moved to the front and back with
Transposes); UnsortedSegmentSum gathers dout by segment id. Ids and indices outside the valid range
get and give no gradient, as the forward ops read zeros for them (Gather) or drop their rows
(UnsortedSegmentSum). MindSpore's Gather refuses such an index: with ``check_indices`` (set by the
front end) the Gather kernel reports it through its status word, an AI Core fault raised at the
host's next synchronisation (``device.kernel_status``).

Transpose, Concat, Split, Slice, Pad, Gather and UnsortedSegmentSum are dynamic-shape kernels: their
sizes, strides and offsets are tiling data read at run time; what shapes the loops (dtypes, the number
of pieces, a window's outer rank, a transpose's coalesced stride kinds and the stride of a strided
inner loop) is compiled in.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import numpy as np

from ascendemu.device.cost import KernelCost
from ascendemu.device.kernel_status import CODE, HIGH, LOW, STATUS_BYTES, VALUE, IndexOutOfRange
from ascendemu.errors import check_int
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import ITEMSIZE, OpSignature, TensorDesc

from . import src
from .common import ALL, ANY, COMPLEX, FLOAT, INDEX, check_arity, check_dtype, fail, int_tuple, norm_axis, same_dtype
from .elementwise import BROADCAST, STRIDED, UNIT, const_literal, strided_layout

ZERO = {"float32": "f32(0.0)", "float16": "np.uint16(0)", "int32": "np.int32(0)", "bfloat16": "np.uint16(0)",
        "float64": "f64(0.0)", "bool": "np.uint8(0)",
        **{d: f"np.{d}(0)" for d in ("int8", "int16", "int64", "uint8", "uint16", "uint32", "uint64", "complex64",
                                     "complex128")}}

# ------------------------------------------------------------------------------------------- infer


def transpose_perm(sig: OpSignature) -> tuple[int, ...]:
    rank = len(sig.inputs[0].shape)
    perm = sig.attr("perm")
    ok = (isinstance(perm, tuple) and len(perm) == rank
          and all(isinstance(p, int) and not isinstance(p, bool) and -rank <= p < rank for p in perm)
          and sorted(p % rank for p in perm) == list(range(rank)))
    if not ok:
        raise fail(sig, f"attr perm={perm!r} must be a permutation of 0..{rank - 1}")
    return tuple(p % rank for p in perm)


def infer_transpose(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, ALL + COMPLEX, "x")
    x = sig.inputs[0].shape
    return (TensorDesc(tuple(x[p] for p in transpose_perm(sig)), dtype),)


def infer_concat(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, None)
    dtype = same_dtype(sig, ALL + COMPLEX)
    first = sig.inputs[0].shape
    if not first:
        raise fail(sig, "inputs must have rank >= 1, got scalars")
    axis = norm_axis(sig, sig.attr("axis", 0), len(first))
    total = 0
    for i, desc in enumerate(sig.inputs):
        s = desc.shape
        if len(s) != len(first) or s[:axis] + s[axis + 1:] != first[:axis] + first[axis + 1:]:
            raise fail(sig, f"input {i} shape {s} does not match input 0 shape {first} "
                            f"outside axis {axis}")
        total += s[axis]
    return (TensorDesc(first[:axis] + (total,) + first[axis + 1:], dtype),)


def split_sections(sig: OpSignature) -> tuple[int, int, int]:
    """(axis, number of sections, section length) of a Split: output_num equal sections of x along axis."""
    x = sig.inputs[0].shape
    if not x:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    axis = norm_axis(sig, sig.attr("axis", 0), len(x))
    count = check_int(sig.attr("output_num", 1), f"{sig.op}: attr output_num", minimum=1)
    if x[axis] % count:
        raise fail(sig, f"attr output_num={count} does not divide dimension {axis} of x shape {x} "
                        f"({x[axis]}); use ops.split with a list of section sizes for unequal parts")
    return axis, count, x[axis] // count


def infer_split(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, ALL + COMPLEX, "x")
    x = sig.inputs[0].shape
    axis, count, length = split_sections(sig)
    return (TensorDesc(x[:axis] + (length,) + x[axis + 1:], dtype),) * count


def paddings_attr(sig: OpSignature, shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """Pad's and MirrorPad's attr ``paddings``: one (before, after) pair of ints >= 0 per dimension."""
    pairs = sig.attr("paddings")
    ok = (isinstance(pairs, tuple) and len(pairs) == len(shape)
          and all(isinstance(p, tuple) and len(p) == 2
                  and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in p) for p in pairs))
    if not ok:
        raise fail(sig, f"attr paddings={pairs!r} must be {len(shape)} pairs (before, after) of ints >= 0, "
                        f"one per dimension of input shape {shape}")
    return pairs


def window(sig: OpSignature) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(output shape, before) of a Slice or Pad: output index o of dimension d reads x at o - before[d]."""
    x = sig.inputs[0].shape
    if not x:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    if sig.op == "Pad":
        pairs = paddings_attr(sig, x)
        return tuple(n + a + b for n, (a, b) in zip(x, pairs)), tuple(a for a, _ in pairs)
    begin = int_tuple(sig, "begin", sig.attr("begin"), (len(x),))
    size = int_tuple(sig, "size", sig.attr("size"), (len(x),))
    out = []
    for d, (b, s, n) in enumerate(zip(begin, size, x)):
        if not 0 <= b <= n:
            raise fail(sig, f"attr begin={begin}: begin[{d}]={b} is outside dimension {d} of x shape {x} "
                            f"(valid: 0..{n})")
        s = n - b if s == -1 else s
        if not 0 <= s <= n - b:
            raise fail(sig, f"attr size={size}: size[{d}]={size[d]} from begin[{d}]={b} does not fit dimension "
                            f"{d} of x shape {x}; give 0..{n - b}, or -1 for the rest")
        out.append(s)
    return tuple(out), tuple(-b for b in begin)


def infer_window(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, ALL + COMPLEX, "x")
    value = sig.attr("value", 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(sig, f"attr value={value!r} must be a number")
    return (TensorDesc(window(sig)[0], dtype),)


# MirrorPad modes: 1 if the mirror skips the edge element (REFLECT), 0 if it repeats it (SYMMETRIC);
# a dimension of length n can be padded by at most n - skip per side
MIRROR_SKIP = {"REFLECT": 1, "SYMMETRIC": 0}


def mirror_mode(sig: OpSignature) -> str:
    mode = sig.attr("mode", "REFLECT")
    if mode not in MIRROR_SKIP:
        raise fail(sig, f"attr mode={mode!r} must be one of {tuple(MIRROR_SKIP)}")
    return mode


def mirror_window(sig: OpSignature) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], str]:
    """(x shape, padded shape, front paddings, mode) of a MirrorPad or of the MirrorPad a MirrorPadGrad
    differentiates (its input is the padded shape), with MindSpore's per-side limits checked."""
    mode = mirror_mode(sig)
    shape = sig.inputs[0].shape
    if not shape:
        raise fail(sig, "input 0 must have rank >= 1, got a scalar")
    pairs = paddings_attr(sig, shape)
    if sig.op == "MirrorPadGrad":
        x = tuple(n - a - b for n, (a, b) in zip(shape, pairs))
        if min(x) < 1:
            raise fail(sig, f"attr paddings={pairs} do not fit input 0 (dout) shape {shape}")
    else:
        x = shape
    skip = MIRROR_SKIP[mode]
    for d, (n, (a, b)) in enumerate(zip(x, pairs)):
        if max(a, b) > n - skip:
            raise fail(sig, f"attr paddings={pairs}: dimension {d} of length {n} can be padded by at most "
                            f"{n - skip} per side in mode {mode}")
    return x, tuple(n + a + b for n, (a, b) in zip(x, pairs)), tuple(a for a, _ in pairs), mode


def infer_mirror(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """MirrorPad(x) -> the padded shape; MirrorPadGrad(dout) -> x's shape (float only: it adds)."""
    check_arity(sig, 1, ("dout",) if sig.op == "MirrorPadGrad" else ("x",))
    dtype = check_dtype(sig, 0, FLOAT if sig.op == "MirrorPadGrad" else ANY)
    x, padded, _, _ = mirror_window(sig)
    return (TensorDesc(x if sig.op == "MirrorPadGrad" else padded, dtype),)


def infer_gather(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("params", "indices"))
    dtype = check_dtype(sig, 0, ALL + COMPLEX, "params")
    check_dtype(sig, 1, INDEX, "indices")
    p = sig.inputs[0].shape
    if not p:
        raise fail(sig, "input 0 (params) must have rank >= 1, got a scalar")
    axis = norm_axis(sig, sig.attr("axis", 0), len(p))
    return (TensorDesc(p[:axis] + sig.inputs[1].shape + p[axis + 1:], dtype),)


def infer_segment_sum(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(num_segments,) + the dimensions of x after those segment_ids covers."""
    check_arity(sig, 2, ("x", "segment_ids"))
    dtype = check_dtype(sig, 0, ANY, "x")
    check_dtype(sig, 1, ("int32",), "segment_ids")
    x, ids = sig.inputs[0].shape, sig.inputs[1].shape
    if not ids or x[:len(ids)] != ids:
        raise fail(sig, f"input 1 (segment_ids) shape {ids} must be a non-empty prefix of input 0 (x) shape {x}")
    count = check_int(sig.attr("num_segments"), f"{sig.op}: attr num_segments", minimum=1)
    return (TensorDesc((count,) + x[len(ids):], dtype),)


# -------------------------------------------------------------------------------------- plan, emit

def plan_copy(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Transpose, Concat, Split and Gather read and write every byte they move once (Gather also its
    indices; Split walks its input, the sum of its outputs)."""
    moved = sum(d.nbytes for d in outputs)
    extra = sig.inputs[1].nbytes if sig.op == "Gather" else 0
    walked = sig.inputs[0].size if sig.op == "Split" else outputs[0].size
    return Plan(src.elementwise_blocks(walked), KernelCost(bytes=2 * moved + extra, dtype=outputs[0].dtype))


# What the dynamic-shape kernels of this module read at run time, by kernel. A strided copy (Transpose;
# Tile and StridedSlice in index.py): the coalesced loop's element count, dims, strides and x's first
# element (the strides' kinds shape the loop). A window (Slice, Pad): the output rows' outer dims, x's,
# the window's offsets in them and the row's inside range. Concat/Split: each piece's row length and
# offset in the whole's row. Gather: the index count, the axis length and the row length after it.
# A scatter-add (UnsortedSegmentSum, ScatterNd): its row count, output rows and row length.
STRIDED_COPY_TILING = ("n", "dims", "strides", "base")
WINDOW_TILING = ("n", "outer", "x_outer", "before_outer", "row", "in_row", "v0", "v1", "shift")
PIECES_TILING = ("n", "row", "lengths", "offsets")
GATHER_TILING = ("n", "count", "inner", "limit")
# MirrorPad(Grad): the dims up to the last padded one (x's, the padded ones, the paddings), the rows
# and the contiguous tail after them; the mode, that last padded dim (the loops' depth) and, for the
# grad, which of those dims are padded (its candidate loops) are compiled in, and whether the tail is one
# element (the last dim padded; a grad with a run-time tail of 1 ran 2-4x slower: no loop to unroll).
MIRROR_TILING = ("x", "padded", "before", "after", "tail", "rows")
SCATTER_ADD_TILING = ("n", "rows", "count", "inner")


def strided_copy_plan(plan: Plan, out_shape: tuple[int, ...], full: list[int], base: int = 0) -> Plan:
    """``plan`` with the tiling of a bit copy of x into ``out_shape`` whose element o reads x at
    ``base + sum(o[d] * full[d])`` (the loop :func:`emit_strided_copy` writes)."""
    layout = strided_layout(out_shape, [full])
    # a strided inner loop's stride is a literal: LLVM vectorises a gather of a known stride only
    step = layout["strides"][0][-1] if layout["kinds"][0][-1] == STRIDED else None
    return replace(plan, tiling=dict(layout, base=base, step=step))


def odometer(dims: tuple) -> tuple[list[str], list[str]]:
    """Kernel lines decoding ``row`` into its coordinates ``q0, q1, ...`` over ``dims`` (the last
    fastest), and lines advancing them to the next row: a kernel decodes its first row once and
    advances per row, so no row pays divisions by run-time dims (a literal divisor is a cheap multiply,
    a run-time one ~25 cycles: a row of a transpose or a pad is often a few dozen elements)."""
    decode = ["r = row"]
    for d in reversed(range(len(dims))):
        decode += [f"q{d} = r % {dims[d]}", f"r = r // {dims[d]}"]
    advance: list[str] = []
    for d in range(len(dims)):
        level = [f"q{d} += 1", f"if q{d} == {dims[d]}:", f"    q{d} = 0"]
        advance = level + src.indent(advance) if advance else level
    return decode, advance


def emit_strided_copy(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """The strided copy, row by row of the coalesced loop's inner dim (x offset ``b`` of each row from
    its :func:`odometer` coordinates)."""
    t = plan.tiling
    dims, strides, kinds = t["dims"], t["strides"][0], t["kinds"][0]
    inner, last = dims[-1], kinds[-1]
    decode, advance = odometer(dims[:-1])
    offset = [f"b += q{d}" if kinds[d] == UNIT else f"b += q{d} * {strides[d]}"
              for d in range(len(dims) - 1) if kinds[d] != BROADCAST]
    read = "x[b]" if last == BROADCAST else "x[b + j]" if last == UNIT else f"x[b + j * {t['step']}]"
    body = [f"start = row * {inner}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {inner})",
            f"b = {t['base']}", *offset, "for j in range(j0, j1):", f"    y[start + j] = {read}", "row += 1", *advance]
    lines = src.HEADER + src.views(("x", 0, sig.inputs[0].dtype), ("y", 1, outputs[0].dtype))
    lines += src.indent(src.split_lines(str(t["n"])) + [f"row = lo // {inner}", *decode])
    lines += [f"    while row * {inner} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


def plan_transpose(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x = sig.inputs[0].shape
    in_strides = [math.prod(x[d + 1:]) for d in range(len(x))]
    return strided_copy_plan(plan_copy(sig, outputs), outputs[0].shape, [in_strides[p] for p in transpose_perm(sig)])


def plan_pieces(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Concat and Split: row r of the whole holds row r of every piece, one after the other."""
    if sig.op == "Concat":
        whole, pieces = outputs[0], sig.inputs
        axis = norm_axis(sig, sig.attr("axis", 0), len(whole.shape))
    else:
        whole, pieces = sig.inputs[0], outputs
        axis = split_sections(sig)[0]
    inner = math.prod(whole.shape[axis + 1:])
    lengths = tuple(d.shape[axis] * inner for d in pieces)
    offsets = tuple(sum(lengths[:i]) for i in range(len(lengths)))
    tiling = dict(n=whole.size, row=max(whole.shape[axis] * inner, 1), lengths=lengths, offsets=offsets)
    return replace(plan_copy(sig, outputs), tiling=tiling)


def plan_gather(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """With ``check_indices`` (what MindSpore's Gather is: the front end sets it) the kernel reports an
    index outside [0, axis size) as a fault in its status word (``device.kernel_status``); without it
    (the backward rules' own gathers) such an index reads zeros."""
    params, indices = sig.inputs
    axis = norm_axis(sig, sig.attr("axis", 0), len(params.shape))
    check = bool(sig.attr("check_indices", False))
    tiling = dict(n=outputs[0].size, count=max(indices.size, 1), inner=max(math.prod(params.shape[axis + 1:]), 1),
                  limit=params.shape[axis], check=check)
    plan = replace(plan_copy(sig, outputs), tiling=tiling)
    # each gathered row is a DMA transfer of its own from a scattered address (device/cost.py DMA_SETUP_BYTES)
    plan = replace(plan, cost=replace(plan.cost, transfers=outputs[0].size // tiling["inner"]))
    return replace(plan, workspace_sizes=(STATUS_BYTES,), fault=gather_fault) if check else plan


def gather_fault(report: Sequence[int]) -> str:
    """MindSpore's text for an out-of-range Gather index (its CPU kernel's, gather_cpu_kernel.cc)."""
    return (f"For 'Gather', the 'input_indices' should be in the range [{report[LOW]}, {report[HIGH]}), but got "
            f"{report[VALUE]}")


def plan_window(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Every output byte is written once; only the part of x inside the window is read. Trailing
    dimensions the window leaves whole merge into one contiguous row: dimension ``k`` (compiled in,
    with the fill value) is the last one it cuts or pads."""
    out = outputs[0]
    x = sig.inputs[0].shape
    shape, before = window(sig)
    inside = math.prod(max(0, min(n, b + m) - max(0, b)) for n, b, m in zip(shape, before, x))
    cost = KernelCost(bytes=out.nbytes + inside * ITEMSIZE[out.dtype], dtype=out.dtype)
    k = max([d for d in range(len(x)) if before[d] or out.shape[d] != x[d]], default=0)
    tail = math.prod(x[k + 1:])
    row = out.shape[k] * tail
    tiling = dict(k=k, value=sig.attr("value", 0), n=out.size, outer=out.shape[:k], x_outer=x[:k],
                  before_outer=before[:k], row=max(row, 1), in_row=x[k] * tail, v0=max(before[k] * tail, 0),
                  v1=min((before[k] + x[k]) * tail, row), shift=before[k] * tail)
    return Plan(src.elementwise_blocks(out.size), cost, tiling=tiling)


def plan_mirror(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Rows: the output rows of MirrorPad, the dx rows of MirrorPadGrad (a row is the dimensions from
    the last padded one on, contiguous in both tensors). MirrorPadGrad reads every dout element once
    and sums each dx row in a float32 workspace row per block."""
    x, padded, before, mode = mirror_window(sig)
    grad = sig.op == "MirrorPadGrad"
    pairs = sig.attr("paddings")
    k = max([d for d, p in enumerate(pairs) if p != (0, 0)], default=0)
    tail = math.prod(x[k + 1:])
    rows = math.prod((x if grad else padded)[:k + 1])
    out = outputs[0]
    block_dim = max(1, min(rows, src.elementwise_blocks(out.size)))
    workspace = (block_dim * tail * 4,) if grad else ()
    moved = sig.inputs[0].nbytes + out.nbytes
    cost = KernelCost(vector_ops=sig.inputs[0].size if grad else 0, bytes=moved, dtype=out.dtype)
    tiling = dict(x=x[:k + 1], padded=padded[:k + 1], before=before[:k + 1],
                  after=tuple(b for _, b in pairs[:k + 1]), tail=tail, rows=rows, mode=mode, k=k, unit=tail == 1)
    if grad:        # which dims have dout rows to look for (the candidate loops' nesting)
        tiling["pads"] = tuple(p != (0, 0) for p in pairs[:k + 1])
    return Plan(block_dim, cost, workspace, tiling=tiling)


def plan_segment_sum(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x, ids = sig.inputs
    return scatter_add_plan(x, ids, outputs[0], ids.size)


def scatter_add_plan(x: TensorDesc, ids: TensorDesc, out: TensorDesc, rows: int) -> Plan:
    """A scatter-add of the ``rows`` rows of ``x`` by ``ids`` (UnsortedSegmentSum, ScatterNd): one add
    per element of x, one zeroing store per output element; every block reads all the ids. float16
    sums accumulate in a float32 workspace element per output element."""
    block_dim = src.elementwise_blocks(out.size)
    wide = out.dtype == "float16"
    workspace = (block_dim * -(-out.size // block_dim) * 4,) if wide else ()
    moved = x.nbytes + block_dim * ids.nbytes + out.nbytes + (2 * 4 * out.size if wide else 0)
    tiling = dict(n=out.size, rows=rows, count=out.shape[0], inner=math.prod(out.shape[1:]))
    # On Ascend each row of x goes to its output row by an atomic add in the MTE3 path, one DMA transfer per
    # row after the output is zeroed: the rows are written once more, as ``rows`` transfers (device/cost.py)
    cost = KernelCost(vector_ops=x.size + out.size, bytes=moved + x.nbytes, dtype=out.dtype, transfers=rows)
    return Plan(block_dim, cost, workspace, tiling)


def emit_pieces(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Concat and Split: a whole tensor made of pieces laid side by side along an axis. Concat walks
    the whole (its output) and copies each piece in; Split walks the whole (its input) and copies
    each piece out. Row r of the whole holds row r of every piece, one after the other."""
    t = plan.tiling
    if sig.op == "Concat":
        whole, pieces = outputs[0], sig.inputs
        names = [(f"p{i}", i, d.dtype) for i, d in enumerate(pieces)] + [("w", len(pieces), whole.dtype)]
        copy = "w[f] = {piece}[at + f]"
    else:
        whole, pieces = sig.inputs[0], outputs
        names = [("w", 0, whole.dtype)] + [(f"p{i}", 1 + i, d.dtype) for i, d in enumerate(pieces)]
        copy = "{piece}[at + f] = w[f]"
    row = t["row"]
    # a dynamic-shape kernel loops over its pieces instead of writing one copy each (an LSTM's 16-piece
    # Concat/Split built in ~1.45 CPU-s): piece i is argument first + i, its length and offset are
    # tiling values read with a run-time index. The same copies, in the same order.
    looped = isinstance(row, src.RuntimeInt) and len(pieces) > 1
    if looped:
        first = 0 if sig.op == "Concat" else 1
        names = [spec for spec in names if spec[0] == "w"] + [("piece", f"{first} + i", pieces[0].dtype)]
    lines = src.HEADER + src.views(*names[:-1 if looped else None]) + src.indent(src.split_lines(str(t["n"])))
    body = [f"start = row * {row}"]
    if looped:
        at = src.tiling_offset(t, PIECES_TILING, "lengths")
        body += [f"for i in range({len(pieces)}):", f"    length = {src.TILING_POINTER}[{at} + i]",
                 f"    offset = {src.TILING_POINTER}[{at + len(pieces)} + i]", "    " + src.view(*names[-1]),
                 "    s0 = max(lo, start + offset)", "    s1 = min(hi, start + offset + length)",
                 "    at = row * length - start - offset",
                 "    for f in range(s0, s1):", "        " + copy.format(piece="piece")]
    for i, (length, offset) in enumerate(() if looped else zip(t["lengths"], t["offsets"])):
        # an empty piece's range is empty
        body += [f"s0 = max(lo, start + {offset})", f"s1 = min(hi, start + {offset + length})",
                 f"at = row * {length} - start - {offset}",
                 "for f in range(s0, s1):", "    " + copy.format(piece=f"p{i}")]
    body.append("row += 1")
    lines += [f"    row = lo // {row}", f"    while row * {row} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


def fill_literal(dtype: str, value: float) -> str:
    """Source literal of ``value`` in the storage type of ``dtype`` (float16: its bits)."""
    if dtype == "float16":
        return f"np.uint16({int(np.float16(value).view(np.uint16))})"
    if dtype == "int32":
        return f"np.int32({int(value)})"
    if dtype != "float32":      # the other dtypes: the store conversion of a constant (LLVM folds it)
        return src.store(dtype, const_literal(value, "d" if dtype in ("float64", "bfloat16") else "i"))
    return const_literal(value, "f")


def emit_window(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Slice and Pad. Trailing dimensions the window leaves whole merge into one contiguous row, so
    a Slice along axis k copies rows of shape[k:]; each output row is an outside part (fill), the
    part inside x (a contiguous copy) and another outside part."""
    x, out = sig.inputs[0], outputs[0]
    t = plan.tiling
    k, row, in_row, v0, v1 = t["k"], t["row"], t["in_row"], t["v0"], t["v1"]
    fill = fill_literal(out.dtype, t["value"])
    lines = src.HEADER + src.views(("x", 0, x.dtype), ("y", 1, out.dtype))
    lines += src.indent(src.split_lines(str(t["n"])))
    decode, advance = odometer(t["outer"])
    body = [f"start = row * {row}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {row})",
            "base = 0", "ok = True"]
    if k:
        # map the output row's outer coordinates into x
        body += ["scale = 1"]
        for d in reversed(range(k)):
            body += [f"i = q{d} - {t['before_outer'][d]}",
                     f"ok = ok and i >= 0 and i < {t['x_outer'][d]}", "base += i * scale",
                     f"scale *= {t['x_outer'][d]}"]
    body += ["if ok:",
             f"    for j in range(j0, min(j1, {v0})):", f"        y[start + j] = {fill}",
             f"    at = base * {in_row} - {t['shift']}",
             f"    for j in range(max(j0, {v0}), min(j1, {v1})):", "        y[start + j] = x[at + j]",
             f"    for j in range(max(j0, {v1}), j1):", f"        y[start + j] = {fill}",
             "else:",
             "    for j in range(j0, j1):", f"        y[start + j] = {fill}",
             "row += 1", *advance]
    lines += src.indent([f"row = lo // {row}", *decode]) + [f"    while row * {row} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


def mirror_lines(i: str, o: str, n: int, before: int, mode: str) -> list[str]:
    """Kernel lines setting ``i``, the index of x that padded index ``o`` of a dimension reads."""
    skip = MIRROR_SKIP[mode]
    return [f"{i} = {o} - {before}",
            f"if {i} < 0:", f"    {i} = -{i} - {1 - skip}",
            f"elif {i} >= {n}:", f"    {i} = {2 * n - 1 - skip} - {i}"]


def emit_mirror(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """MirrorPad: per output row (dimensions up to the last padded one, coordinates from
    :func:`odometer`), each dimension's index mirrored into x, then the row's tail copied bit for bit."""
    t = plan.tiling
    x, padded, before, k = t["x"], t["padded"], t["before"], t["k"]
    tail = 1 if t["unit"] else t["tail"]
    lines = src.HEADER + src.views(("x", 0, sig.inputs[0].dtype), ("y", 1, outputs[0].dtype))
    decode, advance = odometer(padded)
    lines += src.indent(src.split_lines(str(t["rows"])) + ["row = lo", *decode])
    body = ["base = 0", "scale = 1"]
    for d in reversed(range(k + 1)):
        body += mirror_lines("i", f"q{d}", x[d], before[d], t["mode"])
        body += ["base += i * scale", f"scale *= {x[d]}"]
    body += [f"for j in range({tail}):", f"    y[u * {tail} + j] = x[base * {tail} + j]", *advance]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit_mirror_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """MirrorPadGrad: per dx row, the dout rows that read it, found per padded dimension among three
    candidates (the row itself, its mirror in the front padding, its mirror in the back padding),
    summed in that order into the block's float32 row."""
    t = plan.tiling
    x, padded, before, after, k = t["x"], t["padded"], t["before"], t["after"], t["k"]
    tail = 1 if t["unit"] else t["tail"]
    skip = MIRROR_SKIP[t["mode"]]
    dtype = sig.inputs[0].dtype
    lines = src.HEADER + src.views(("dy", 0, dtype), ("dx", 1, dtype), ("acc", 2, "float32"))
    decode, advance = odometer(x)
    lines += [f"    ab = block_idx * {tail}"] + src.indent(src.split_lines(str(t["rows"])) + ["row = lo", *decode])
    body = [f"for j in range({tail}):", "    acc[ab + j] = f32(0.0)"]
    # one candidate loop per padded dimension, each nested in the previous one
    nested: list[str] = []
    depth = 0
    for d in range(k + 1):
        n, b, a = x[d], before[d], after[d]
        if not t["pads"][d]:
            nested += src.indent([f"o{d} = q{d}"], depth)
            continue
        nested += src.indent([f"for c{d} in range(3):",
                              f"    if c{d} == 0:", f"        o{d} = q{d} + {b}",
                              f"    elif c{d} == 1:", f"        o{d} = {b - 1 + skip} - q{d}",
                              f"        if o{d} < 0 or o{d} >= {b}:", "            continue",
                              "    else:", f"        o{d} = {b + 2 * n - 1 - skip} - q{d}",
                              f"        if o{d} < {b + n} or o{d} >= {b + n + a}:", "            continue"], depth)
        depth += 1
    flat = " + ".join(f"o{d} * {math.prod(padded[d + 1:k + 1])}" for d in range(k + 1))
    nested += src.indent([f"db = ({flat}) * {tail}", f"for j in range({tail}):",
                          f"    acc[ab + j] += {src.load(dtype, 'dy[db + j]')}"], depth)
    body += nested
    body += [f"for j in range({tail}):", f"    dx[u * {tail} + j] = {src.store(dtype, 'acc[ab + j]')}", *advance]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit_gather(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Out-of-range indices (negative or >= the axis size) never read outside params: they produce
    zeros and, in a checking kernel, a fault report in the status word (argument 3)."""
    params, indices = sig.inputs
    out = outputs[0]
    t = plan.tiling
    inner, limit, count = t["inner"], t["limit"], t["count"]
    lines = src.HEADER + src.views(("p", 0, params.dtype), ("ix", 1, indices.dtype), ("y", 2, out.dtype))
    if t["check"]:
        lines += src.views(("status", 3, "int64"))
    report = [f"status[{VALUE}] = t", f"status[{LOW}] = 0", f"status[{HIGH}] = {limit}",
              f"status[{CODE}] = {IndexOutOfRange.code}"] if t["check"] else []
    lines += src.indent(src.split_lines(str(t["n"])))
    body = [f"o = row // {count}", f"t = i64(ix[row % {count}])",
            f"start = row * {inner}", "j0 = max(lo - start, 0)", f"j1 = min(hi - start, {inner})",
            f"if t >= 0 and t < {limit}:",
            f"    src = (o * {limit} + t) * {inner}",
            "    for j in range(j0, j1):", "        y[start + j] = p[src + j]",
            "else:",
            *src.indent(report),
            "    for j in range(j0, j1):", f"        y[start + j] = {ZERO[out.dtype]}",
            "row += 1"]
    lines += [f"    row = lo // {inner}", f"    while row * {inner} < hi:"] + src.indent(body, 2)
    return src.finish(lines)


def emit_segment_sum(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x, ids = sig.inputs
    return scatter_add_source(x, 0, 1, outputs[0], plan, ["s = i64(ix[r])"])


def scatter_add_source(x: TensorDesc, x_arg: int, ids_arg: int, out: TensorDesc, plan: Plan,
                       segment: list[str]) -> str:
    """Kernel source adding row r of ``x`` (argument ``x_arg``) into output row s, for r in ascending
    order; ``segment`` are lines computing s from the int32 ids ``ix`` (argument ``ids_arg``) and r.
    Block b owns output elements [lo, hi): it zeroes them, then adds every row landing in them. A row
    whose s is outside [0, out rows) is dropped. Output at argument 2, float16's float32 accumulator at 3.
    Sizes come from ``plan``'s tiling (:func:`scatter_add_plan`)."""
    t = plan.tiling
    inner, count, rows = t["inner"], t["count"], t["rows"]
    lines = src.HEADER + src.views(("x", x_arg, x.dtype), ("ix", ids_arg, "int32"), ("y", 2, out.dtype))
    if out.dtype == "float16":
        lines += ["    " + src.view("acc", 3, "float32")]
        zero, add = "f32(0.0)", f"acc[f] += {src.load('float16', 'x[at + f]')}"
    elif out.dtype == "int32":
        lines += ["    acc = y"]
        zero, add = "np.int32(0)", "acc[f] = np.int32(i64(acc[f]) + i64(x[at + f]))"
    else:
        lines += ["    acc = y"]
        zero, add = "f32(0.0)", "acc[f] += x[at + f]"
    lines += src.indent(src.split_lines(str(t["n"])))
    body = ["for f in range(lo, hi):", f"    acc[f] = {zero}",
            f"for r in range({rows}):"] + src.indent(segment) + [
            f"    if s >= 0 and s < {count}:",
            f"        s0 = max(lo, s * {inner})", f"        s1 = min(hi, s * {inner} + {inner})",
            f"        at = (r - s) * {inner}",
            "        for f in range(s0, s1):", "            " + add]
    if out.dtype == "float16":
        body += ["for f in range(lo, hi):", f"    y[f] = {src.store('float16', 'acc[f]')}"]
    return src.finish(lines + src.indent(body))


# ---------------------------------------------------------------------------------- backward rules

def zeros(b: GradBuilder, value: int) -> int:
    """Zeros shaped like ``value``."""
    desc = b.desc(value)
    return b.broadcast(b.scalar(0, desc.dtype), desc.shape)


def grad_transpose(b: GradBuilder, c: GradCall) -> tuple[int]:
    perm = transpose_perm(c.sig)
    inverse = tuple(sorted(range(len(perm)), key=perm.__getitem__))
    return (b.op("Transpose", c.douts[0], perm=inverse),)


def grad_concat(b: GradBuilder, c: GradCall) -> tuple[int | None, ...]:
    """Each wanted input's gradient is its slice of dout."""
    (dout,) = c.douts
    shape = b.desc(dout).shape
    axis = norm_axis(c.sig, c.sig.attr("axis", 0), len(shape))
    grads, offset = [], 0
    for want, desc in zip(c.wants, c.sig.inputs):
        begin = tuple(offset if d == axis else 0 for d in range(len(shape)))
        grads.append(b.op("Slice", dout, begin=begin, size=desc.shape) if want else None)
        offset += desc.shape[axis]
    return tuple(grads)


def grad_split(b: GradBuilder, c: GradCall) -> tuple[int]:
    """The douts side by side; an output that does not reach the result contributes zeros."""
    axis = split_sections(c.sig)[0]
    parts = [zeros(b, out) if d is None else d for d, out in zip(c.douts, c.outputs)]
    return (parts[0] if len(parts) == 1 else b.op("Concat", *parts, axis=axis),)


def grad_slice(b: GradBuilder, c: GradCall) -> tuple[int]:
    shape, before = window(c.sig)
    paddings = tuple((-f, n - s + f) for n, s, f in zip(c.sig.inputs[0].shape, shape, before))
    return (b.op("Pad", c.douts[0], paddings=paddings),)


def grad_pad(b: GradBuilder, c: GradCall) -> tuple[int]:
    _, before = window(c.sig)
    return (b.op("Slice", c.douts[0], begin=before, size=c.sig.inputs[0].shape),)


def grad_mirror(b: GradBuilder, c: GradCall) -> tuple[int]:
    return (b.op("MirrorPadGrad", c.douts[0], **dict(c.sig.attrs)),)


def grad_gather(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    """UnsortedSegmentSum of dout by the indices over the gathered axis. The segment sum works on
    leading dimensions, so dout's index dimensions move to the front and the result's segment
    dimension moves back to the axis (no Transpose when axis is 0)."""
    if not c.wants[0]:
        return None, None
    params, indices = c.sig.inputs
    (dout,), index = c.douts, c.inputs[1]
    if indices.dtype != "int32":        # the segment sum takes int32 ids
        index = b.op("Cast", index, dst_type="int32")
    p = params.shape
    axis = norm_axis(c.sig, c.sig.attr("axis", 0), len(p))
    k = len(indices.shape)
    if k == 0:              # a scalar index removed the axis: give both back a length-1 dimension
        index = b.op("Reshape", index, shape=(1,))
        dout = b.op("Reshape", dout, shape=p[:axis] + (1,) + p[axis + 1:])
        k = 1
    if axis:
        rank = len(b.desc(dout).shape)
        front = tuple(range(axis, axis + k)) + tuple(range(axis)) + tuple(range(axis + k, rank))
        dout = b.op("Transpose", dout, perm=front)
    grad = b.op("UnsortedSegmentSum", dout, index, num_segments=p[axis])
    if axis:
        back = tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, len(p)))
        grad = b.op("Transpose", grad, perm=back)
    return grad, None


def grad_segment_sum(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    """Each row of x receives its segment's dout (zeros for a dropped row, as Gather reads them)."""
    if not c.wants[0]:
        return None, None
    return b.op("Gather", c.douts[0], c.inputs[1], axis=0), None


# ------------------------------------------------------------------ detection: NMSWithMask, ROIAlign
# NMSWithMask and ROIAlign are kernels, not compositions: NMS is a sequential greedy suppression over
# the boxes in order, ROIAlign samples the feature map at data-dependent points (bilinear), and its
# backward scatters into it.

# NMSWithMask's boxes: (x0, y0, x1, y1, score) rows
NMS_COLUMNS = 5
# ROIAlign's rois: (batch index, x0, y0, x1, y1) rows
ROI_COLUMNS = 5
# MindSpore's ROIAlign kernels: a roi whose x0 and x1 are both within ROI_PAD_EPS of 0 is padding (its
# output stays zero, it gets no gradient); the image index is rint(index + ROI_INDEX_EPS)
ROI_PAD_EPS = 0.001
ROI_INDEX_EPS = 0.00007


def infer_nms(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """NMSWithMask(bboxes (N, 5)) -> (boxes (N, 5), indices (N,) int32, mask (N,) bool)."""
    check_arity(sig, 1, ("bboxes",))
    dtype = check_dtype(sig, 0, FLOAT, "bboxes")
    shape = sig.inputs[0].shape
    if len(shape) != 2 or shape[1] != NMS_COLUMNS or shape[0] < 1:
        raise fail(sig, f"input 0 (bboxes) must have shape (N, {NMS_COLUMNS}) with N >= 1, got {shape}")
    threshold = sig.attr("iou_threshold", 0.5)
    if isinstance(threshold, bool) or not isinstance(threshold, float):
        raise fail(sig, f"attr iou_threshold={threshold!r} must be a float")
    n = shape[0]
    return TensorDesc(shape, dtype), TensorDesc((n,), "int32"), TensorDesc((n,), "bool")


def plan_nms(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One block: the suppression is sequential (box j's fate depends on every kept box before it);
    up to N^2 / 2 overlap tests."""
    n = sig.inputs[0].shape[0]
    moved = sig.inputs[0].nbytes + sum(d.nbytes for d in outputs)
    return Plan(1, KernelCost(vector_ops=12 * n * n // 2 + n, bytes=moved, dtype=sig.inputs[0].dtype))


def emit_nms(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Ascend's NMSWithMask: boxes are taken in input order (the scores are not sorted: sort them
    descending first, as the detectors do), each box not yet suppressed suppresses every later box
    whose IoU with it (areas (x1 - x0) * (y1 - y0)) exceeds the threshold. The boxes pass through,
    the indices are 0..N-1, the mask is True for the boxes kept."""
    dtype = sig.inputs[0].dtype
    n = sig.inputs[0].shape[0]
    thr = const_literal(float(sig.attr("iou_threshold", 0.5)), "f")
    ld = lambda expr: src.load(dtype, expr)  # noqa: E731
    lines = src.HEADER + src.views(("b", 0, dtype), ("o", 1, dtype), ("ix", 2, "int32"), ("m", 3, "bool"))
    lines += src.indent([
        f"for i in range({n * NMS_COLUMNS}):", "    o[i] = b[i]",
        f"for i in range({n}):", "    ix[i] = np.int32(i)", "    m[i] = np.uint8(1)",
        f"for i in range({n}):",
        "    if m[i] == 0:", "        continue",
        f"    ax0 = {ld(f'b[i * {NMS_COLUMNS}]')}", f"    ay0 = {ld(f'b[i * {NMS_COLUMNS} + 1]')}",
        f"    ax1 = {ld(f'b[i * {NMS_COLUMNS} + 2]')}", f"    ay1 = {ld(f'b[i * {NMS_COLUMNS} + 3]')}",
        "    area_a = (ax1 - ax0) * (ay1 - ay0)",
        f"    for j in range(i + 1, {n}):",
        "        if m[j] == 0:", "            continue",
        f"        bx0 = {ld(f'b[j * {NMS_COLUMNS}]')}", f"        by0 = {ld(f'b[j * {NMS_COLUMNS} + 1]')}",
        f"        bx1 = {ld(f'b[j * {NMS_COLUMNS} + 2]')}", f"        by1 = {ld(f'b[j * {NMS_COLUMNS} + 3]')}",
        "        w = max(min(ax1, bx1) - max(ax0, bx0), f32(0.0))",
        "        h = max(min(ay1, by1) - max(ay0, by0), f32(0.0))",
        "        inter = w * h",
        f"        if fdiv(inter, area_a + (bx1 - bx0) * (by1 - by0) - inter) > {thr}:",
        "            m[j] = np.uint8(0)"])
    return src.finish(lines)


def roi_attrs(sig: OpSignature) -> tuple[int, int, float, int, int]:
    """(pooled_height, pooled_width, spatial_scale, sample_num, roi_end_mode), checked as MindSpore does."""
    ph = check_int(sig.attr("pooled_height"), f"{sig.op}: attr pooled_height", minimum=1)
    pw = check_int(sig.attr("pooled_width"), f"{sig.op}: attr pooled_width", minimum=1)
    scale = sig.attr("spatial_scale")
    if isinstance(scale, bool) or not isinstance(scale, float):
        raise fail(sig, f"attr spatial_scale={scale!r} must be a float")
    sample_num = check_int(sig.attr("sample_num", 2), f"{sig.op}: attr sample_num")
    end_mode = check_int(sig.attr("roi_end_mode", 1), f"{sig.op}: attr roi_end_mode", minimum=0, maximum=1)
    return ph, pw, scale, sample_num, end_mode


def infer_roi_align(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """ROIAlign(features (N, C, H, W), rois (R, 5)) -> (R, C, pooled_height, pooled_width);
    ROIAlignGrad(dy (R, C, ph, pw), rois (R, 5)) -> attr xdiff_shape (the features' shape)."""
    grad = sig.op == "ROIAlignGrad"
    check_arity(sig, 2, ("dy", "rois") if grad else ("features", "rois"))
    dtype = same_dtype(sig, FLOAT)
    ph, pw, _, _, _ = roi_attrs(sig)
    x, rois = sig.inputs[0].shape, sig.inputs[1].shape
    if len(rois) != 2 or rois[1] != ROI_COLUMNS:
        raise fail(sig, f"input 1 (rois) must have shape (R, {ROI_COLUMNS}), got {rois}")
    if grad:
        shape = int_tuple(sig, "xdiff_shape", sig.attr("xdiff_shape"), (4,))
        if x != (rois[0], shape[1], ph, pw):
            raise fail(sig, f"input 0 (dy) shape {x} must be {(rois[0], shape[1], ph, pw)}")
        return (TensorDesc(shape, dtype),)
    if len(x) != 4:
        raise fail(sig, f"input 0 (features) must have shape (N, C, H, W), got {x}")
    return (TensorDesc((rois[0], x[1], ph, pw), dtype),)


def roi_samples(sig: OpSignature, height: int, width: int) -> int:
    """Sampling points per output bin: sample_num^2, or (adaptive, sample_num <= 0) at most the
    feature map's pixels per bin (what the cost model charges)."""
    ph, pw, _, sample_num, _ = roi_attrs(sig)
    return sample_num * sample_num if sample_num > 0 else max(1, -(-height // ph)) * max(1, -(-width // pw))


def plan_roi_align(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Blocks own (roi, channel) pairs of the output (forward) or (image, channel) planes of dx
    (backward, each summed in a float32 workspace plane per block); each sample reads four pixels."""
    grad = sig.op == "ROIAlignGrad"
    feats = outputs[0] if grad else sig.inputs[0]
    n, c, h, w = feats.shape
    bins = (sig.inputs[0] if grad else outputs[0]).size
    reads = bins * roi_samples(sig, h, w) * 4
    units = n * c if grad else outputs[0].shape[0] * c
    block_dim = max(1, min(units, src.elementwise_blocks(reads)))
    workspace = (block_dim * h * w * 4,) if grad else ()
    moved = sig.inputs[0].nbytes + sig.inputs[1].nbytes + outputs[0].nbytes + reads * ITEMSIZE[feats.dtype]
    return Plan(block_dim, KernelCost(vector_ops=reads * 3, bytes=moved, dtype=feats.dtype), workspace)


def roi_geometry_lines(sig: OpSignature, rois_dtype: str) -> list[str]:
    """Kernel lines setting, for roi ``r``, ``skip`` (a padding roi: x0 and x1 both within
    ROI_PAD_EPS of 0, which MindSpore's kernels leave out), ``bi`` (its image: rint(index + eps)),
    ``sx, sy`` (its start), ``bw, bh`` (bin sizes), ``gw, gh`` (sampling grid) and ``count``: the end
    shifted by +1 pixel when roi_end_mode is 1, widths at least 1 when it is 0, the adaptive grid
    floor(roi size / pooled size)."""
    ph, pw, scale, sample_num, end_mode = roi_attrs(sig)
    sc = const_literal(scale, "f")
    ld = lambda k: src.load(rois_dtype, f"rois[r * {ROI_COLUMNS} + {k}]")  # noqa: E731
    eps = const_literal(ROI_PAD_EPS, "f")
    lines = [f"skip = abs({ld(1)}) < {eps} and abs({ld(3)}) < {eps}",
             f"bi = i64(np.rint({ld(0)} + {const_literal(ROI_INDEX_EPS, 'f')}))",
             f"sx = {ld(1)} * {sc}", f"sy = {ld(2)} * {sc}",
             f"rw = ({ld(3)} + f32({end_mode}.0)) * {sc} - sx", f"rh = ({ld(4)} + f32({end_mode}.0)) * {sc} - sy"]
    if end_mode == 0:
        lines += ["rw = max(rw, f32(1.0))", "rh = max(rh, f32(1.0))"]
    lines += [f"bw = fdiv(rw, f32({pw}.0))", f"bh = fdiv(rh, f32({ph}.0))"]
    if sample_num > 0:
        lines += [f"gw = {sample_num}", f"gh = {sample_num}"]
    else:
        lines += ["gw = i64(math.floor(bw))", "gh = i64(math.floor(bh))"]
    return lines + ["count = f32(gh * gw)"]


def bilinear_lines(h: int, w: int) -> list[str]:
    """Kernel lines for sample (yy, xx) of bin (p, q), sample (iy, ix): ``inside``, the four pixel
    offsets ``o1..o4`` within a plane and their weights ``w1..w4`` (MindSpore's bilinear_interpolate:
    zero outside [-1, H] x [-1, W], clamped to the last row/column)."""
    return ["yy = sy + f32(p) * bh + fdiv((f32(iy) + f32(0.5)) * bh, f32(gh))",
            "xx = sx + f32(q) * bw + fdiv((f32(ix) + f32(0.5)) * bw, f32(gw))",
            f"inside = not (yy < f32(-1.0) or yy > f32({h}.0) or xx < f32(-1.0) or xx > f32({w}.0))",
            "yy = max(yy, f32(0.0))", "xx = max(xx, f32(0.0))",
            "yl = i64(yy)", "xl = i64(xx)",
            f"if yl >= {h - 1}:", f"    yl = {h - 1}", f"    yh = {h - 1}", "    yy = f32(yl)",
            "else:", "    yh = yl + 1",
            f"if xl >= {w - 1}:", f"    xl = {w - 1}", f"    xh = {w - 1}", "    xx = f32(xl)",
            "else:", "    xh = xl + 1",
            "ly = yy - f32(yl)", "lx = xx - f32(xl)", "hy = f32(1.0) - ly", "hx = f32(1.0) - lx",
            "w1 = hy * hx", "w2 = hy * lx", "w3 = ly * hx", "w4 = ly * lx",
            f"o1 = yl * {w} + xl", f"o2 = yl * {w} + xh", f"o3 = yh * {w} + xl", f"o4 = yh * {w} + xh"]


def emit_roi_align(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Per (roi, channel): each output bin the mean of its grid of bilinear samples (0/0, NaN, for an
    empty adaptive grid, as MindSpore's kernel gives). A padding roi, or one whose image index is
    outside the batch, gives zeros."""
    feats, rois = sig.inputs
    out = outputs[0]
    n, c, h, w = feats.shape
    r_count, _, ph, pw = out.shape
    dtype = feats.dtype
    ld = lambda expr: src.load(dtype, expr)  # noqa: E731
    lines = src.HEADER + src.views(("x", 0, dtype), ("rois", 1, rois.dtype), ("y", 2, dtype))
    lines += src.indent(src.split_lines(str(r_count * c)))
    body = [f"r = u // {c}", f"ch = u % {c}"] + roi_geometry_lines(sig, rois.dtype)
    body += [f"ok = not skip and bi >= 0 and bi < {n}", f"base = (bi * {c} + ch) * {h * w}",
             f"for p in range({ph}):", f"    for q in range({pw}):", "        acc = f32(0.0)",
             "        if ok:", "            for iy in range(gh):", "                for ix in range(gw):"]
    sample = bilinear_lines(h, w) + ["if inside:",
                                     f"    acc += w1 * {ld('x[base + o1]')} + w2 * {ld('x[base + o2]')} "
                                     f"+ w3 * {ld('x[base + o3]')} + w4 * {ld('x[base + o4]')}"]
    body += src.indent(sample, 5)
    body += [f"        y[(u * {ph} + p) * {pw} + q] = {src.store(dtype, 'fdiv(acc, count)')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit_roi_align_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Per dx plane (image, channel), owned by one block: zeroed in the block's float32 workspace
    plane, then every roi of that image adds dy * weight / count to the four pixels of each sample, in
    roi, bin and sample order (deterministic: no two blocks share a plane)."""
    dy, rois = sig.inputs
    n, c, h, w = outputs[0].shape
    r_count, _, ph, pw = dy.shape
    dtype = dy.dtype
    lines = src.HEADER + src.views(("dy", 0, dtype), ("rois", 1, rois.dtype), ("dx", 2, dtype),
                                   ("acc", 3, "float32"))
    lines += [f"    ab = block_idx * {h * w}"] + src.indent(src.split_lines(str(n * c)))
    body = [f"img = u // {c}", f"ch = u % {c}", f"for k in range({h * w}):", "    acc[ab + k] = f32(0.0)",
            f"for r in range({r_count}):"]
    roi = roi_geometry_lines(sig, rois.dtype) + [
        "if skip or bi != img:", "    continue",
        f"for p in range({ph}):", f"    for q in range({pw}):",
        f"        g = {src.load(dtype, f'dy[((r * {c} + ch) * {ph} + p) * {pw} + q]')}",
        "        for iy in range(gh):", "            for ix in range(gw):"]
    sample = bilinear_lines(h, w) + ["if inside:",
                                     "    acc[ab + o1] += fdiv(g * w1, count)", "    acc[ab + o2] += fdiv(g * w2, count)",
                                     "    acc[ab + o3] += fdiv(g * w3, count)", "    acc[ab + o4] += fdiv(g * w4, count)"]
    body += src.indent(roi + src.indent(sample, 4))
    body += [f"for k in range({h * w}):", f"    dx[u * {h * w} + k] = {src.store(dtype, 'acc[ab + k]')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def grad_roi_align(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    """ROIAlignGrad scatters dout back onto the features; the rois get no gradient. As MindSpore's
    ROIAlignGrad has no roi_end_mode (its kernels use 1), a roi_end_mode 0 forward is differentiated
    with the mode-1 geometry, exactly as MindSpore does."""
    if not c.wants[0]:
        return None, None
    attrs = {k: v for k, v in c.sig.attrs if k != "roi_end_mode"}
    return b.op("ROIAlignGrad", c.douts[0], c.inputs[1], xdiff_shape=c.sig.inputs[0].shape, **attrs), None


OPS: tuple[OpDef, ...] = (
    OpDef("Transpose", "transpose", infer_transpose, plan_transpose, emit_strided_copy, grad=grad_transpose,
          frontend=Exposure(("Transpose",), ("transpose", "permute")), runtime_tiling=STRIDED_COPY_TILING),
    OpDef("Concat", "concat", infer_concat, plan_pieces, emit_pieces, grad=grad_concat,
          frontend=Exposure(("Concat",), ("concat", "cat")), runtime_tiling=PIECES_TILING),
    OpDef("Split", "split_d", infer_split, plan_pieces, emit_pieces, grad=grad_split,
          frontend=Exposure(("Split",), ("split",)), runtime_tiling=PIECES_TILING),
    OpDef("Slice", "slice_d", infer_window, plan_window, emit_window, grad=grad_slice,
          frontend=Exposure(("Slice",), ("slice",)), runtime_tiling=WINDOW_TILING),
    OpDef("Pad", "pad_d", infer_window, plan_window, emit_window, grad=grad_pad,
          frontend=Exposure(("Pad",), ("pad",)), runtime_tiling=WINDOW_TILING),
    OpDef("MirrorPad", "mirror_pad", infer_mirror, plan_mirror, emit_mirror, grad=grad_mirror,
          frontend=Exposure(("MirrorPad",), ("pad",)), runtime_tiling=MIRROR_TILING),
    OpDef("MirrorPadGrad", "mirror_pad_grad", infer_mirror, plan_mirror, emit_mirror_grad,
          runtime_tiling=MIRROR_TILING),
    OpDef("Gather", "gather", infer_gather, plan_gather, emit_gather, grad=grad_gather,
          frontend=Exposure(("Gather",), ("gather",)), runtime_tiling=GATHER_TILING),
    OpDef("UnsortedSegmentSum", "unsorted_segment_sum_d", infer_segment_sum, plan_segment_sum, emit_segment_sum,
          grad=grad_segment_sum, frontend=Exposure(("UnsortedSegmentSum",), ("unsorted_segment_sum",)),
          runtime_tiling=SCATTER_ADD_TILING),
    OpDef("NMSWithMask", "nms_with_mask", infer_nms, plan_nms, emit_nms, frontend=Exposure(("NMSWithMask",))),
    OpDef("ROIAlign", "roi_align", infer_roi_align, plan_roi_align, emit_roi_align, grad=grad_roi_align,
          frontend=Exposure(("ROIAlign",))),
    OpDef("ROIAlignGrad", "roi_align_grad", infer_roi_align, plan_roi_align, emit_roi_align_grad),
)
