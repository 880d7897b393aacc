"""Image resizing (NCHW): ResizeNearestNeighbor and ResizeBilinearV2 with the coordinate conventions of
TensorFlow's kernels, which Ascend's TBE kernels and MindSpore follow, and their backward kernels
ResizeNearestNeighborGrad and ResizeBilinearGrad (the forward input's shape as attribute ``x_shape``).

Per axis of input length ``n`` and output length ``m``, in float32 arithmetic as those kernels:

* ``scale = (n - 1) / (m - 1)`` if ``align_corners`` and ``m > 1``, else ``n / m``;
* nearest: ``s = (o + 0.5) * scale`` with ``half_pixel_centers``, else ``o * scale``; the source index
  is ``round(s)`` (half away from zero) with ``align_corners``, else ``floor(s)``, at most ``n - 1``;
* bilinear: ``s = (o + 0.5) * scale - 0.5`` with ``half_pixel_centers``, else ``o * scale``; it reads
  ``lo = max(floor(s), 0)`` and ``hi = min(ceil(s), n - 1)`` with weight ``l = s - floor(s)`` on ``hi``:
  ``top = x[lo_y, lo_x] + (x[lo_y, hi_x] - x[lo_y, lo_x]) * l_x``, the same for the bottom row, then
  ``top + (bottom - top) * l_y``.

Forward kernels split output rows (plane, output row) over blocks. The backward kernels split rows of
*dx* over blocks (deterministic, like UnsortedSegmentSum: no element is written by two blocks, every
sum is taken in a fixed order): every index map above is non-decreasing in ``o``, so the outputs that
read input index ``i`` through a map are the contiguous range ``[start[i], start[i + 1])`` where
``start[i]`` is the first output whose index is >= i. Each block first writes the start tables of its
maps into its own int32 workspace slice (recomputing the forward's coordinates with the same source
lines), then each dx element sums its dy window in float32 (nearest: the dy block it was copied to;
bilinear: the four (lo|hi) x (lo|hi) ranges with their weights).
"""
from __future__ import annotations

import numpy as np

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import ANY, FLOAT, check_arity, check_bool, check_dtype, check_rank, fail
from .conv import shape_attr
from .elementwise import const_literal

BILINEAR = ("ResizeBilinearV2", "ResizeBilinearGrad")
GRADS = ("ResizeNearestNeighborGrad", "ResizeBilinearGrad")


# ------------------------------------------------------------------------------------------- infer

def size_attr(sig: OpSignature) -> tuple[int, int]:
    size = sig.attr("size")
    if not (isinstance(size, tuple) and len(size) == 2
            and all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in size)):
        raise fail(sig, f"attr size={size!r} must be (new_height, new_width): 2 ints >= 1")
    return size


def geometry(sig: OpSignature) -> dict:
    """Input (n, c, h, w), output (oh, ow) and the coordinate flags, validated."""
    align, half = check_bool(sig, "align_corners"), check_bool(sig, "half_pixel_centers")
    if align and half:
        raise fail(sig, "attrs align_corners and half_pixel_centers cannot both be True; "
                        "set half_pixel_centers only with align_corners=False")
    if sig.op in GRADS:
        n, c, h, w = shape_attr(sig, "x_shape")
        dy = check_rank(sig, 0, 4, "dy")
        if dy[:2] != (n, c):
            raise fail(sig, f"input 0 (dy) shape {dy} does not match attr x_shape {(n, c, h, w)} in N and C")
        oh, ow = dy[2:]
    else:
        n, c, h, w = check_rank(sig, 0, 4, "x")
        oh, ow = size_attr(sig)
    return dict(n=n, c=c, h=h, w=w, oh=oh, ow=ow, align=align, half=half)


def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
    if sig.op in GRADS:
        check_arity(sig, 1, ("dy",))
        dtype = check_dtype(sig, 0, FLOAT, "dy")
    else:
        check_arity(sig, 1, ("x",))
        dtype = check_dtype(sig, 0, FLOAT if sig.op in BILINEAR else ANY, "x")
    g = geometry(sig)
    shape = (g["n"], g["c"], g["h"], g["w"]) if sig.op in GRADS else (g["n"], g["c"], g["oh"], g["ow"])
    return (TensorDesc(shape, dtype),)


# -------------------------------------------------------------------------------------------- plan

def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Forward: one unit per output row; backward: one unit per dx row, plus each block's start tables
    (one per index map and axis: nearest one map, bilinear lo and hi; ``n + 1`` int32 entries each).
    Priced as one vector op per output element read (bilinear: 4 reads and 3 lerps)."""
    g = geometry(sig)
    planes = g["n"] * g["c"]
    grad = sig.op in GRADS
    units = planes * (g["h"] if grad else g["oh"])
    out = outputs[0]
    block_dim = max(1, min(units, src.elementwise_blocks(out.size)))
    bilinear = sig.op in BILINEAR
    work = planes * g["oh"] * g["ow"] * (7 if bilinear else 1)
    workspace = ()
    if grad:
        g["table"] = (2 if bilinear else 1) * (g["h"] + 1 + g["w"] + 1)
        workspace = (block_dim * g["table"] * 4,)
    moved = sig.inputs[0].nbytes + out.nbytes
    return Plan(block_dim, KernelCost(vector_ops=work, bytes=moved, dtype=out.dtype), workspace, g)


# -------------------------------------------------------------------------------------------- emit

def scale_literal(g: dict, axis: str) -> str:
    """The float32 scale of an axis ('h' or 'w'), as a literal that reproduces its bits."""
    n, m = g[axis], g["o" + axis]
    if g["align"] and m > 1:
        scale = np.float32(n - 1) / np.float32(m - 1)
    else:
        scale = np.float32(n) / np.float32(m)
    return const_literal(float(scale), "f")


def source_lines(g: dict, axis: str, o: str, bilinear: bool, tag: str) -> list[str]:
    """Kernel lines mapping output index ``o`` of an axis to its source coordinate: nearest sets
    ``at{tag}``; bilinear sets ``lo{tag}``, ``hi{tag}`` and the float32 weight ``l{tag}`` of ``hi``."""
    n, scale = g[axis], scale_literal(g, axis)
    if bilinear:
        s = (f"(f32({o}) + f32(0.5)) * {scale} - f32(0.5)" if g["half"] else f"f32({o}) * {scale}")
        return [f"s{tag} = {s}", f"f{tag} = math.floor(s{tag})",
                f"lo{tag} = min(max(f{tag}, 0), {n - 1})", f"hi{tag} = min(math.ceil(s{tag}), {n - 1})",
                f"l{tag} = s{tag} - f32(f{tag})"]
    s = f"(f32({o}) + f32(0.5)) * {scale}" if g["half"] else f"f32({o}) * {scale}"
    pick = f"math.floor(f64(s{tag}) + 0.5)" if g["align"] else f"math.floor(s{tag})"
    return [f"s{tag} = {s}", f"at{tag} = min({pick}, {n - 1})"]


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Forward: per output row, its source row(s) once, then every column."""
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    h, w, oh, ow = g["h"], g["w"], g["oh"], g["ow"]
    bilinear = sig.op in BILINEAR
    lines = src.HEADER + src.views(("x", 0, dtype), ("y", 1, dtype))
    lines += src.indent(src.split_lines(str(g["n"] * g["c"] * oh)))
    body = [f"p = u // {oh}", f"oy = u % {oh}", f"yb = u * {ow}"]
    if bilinear:
        def at(row: str, col: str) -> str:
            return src.load(dtype, f"x[{row} + {col}]")
        body += source_lines(g, "h", "oy", True, "y")
        body += [f"r0 = (p * {h} + loy) * {w}", f"r1 = (p * {h} + hiy) * {w}",
                 f"for ox in range({ow}):"]
        body += src.indent(source_lines(g, "w", "ox", True, "x") + [
            f"tl = {at('r0', 'lox')}", f"tr = {at('r0', 'hix')}",
            f"bl = {at('r1', 'lox')}", f"br = {at('r1', 'hix')}",
            "top = tl + (tr - tl) * lx", "bottom = bl + (br - bl) * lx",
            f"y[yb + ox] = {src.store(dtype, 'top + (bottom - top) * ly')}"])
    else:
        body += source_lines(g, "h", "oy", False, "y")
        body += [f"r = (p * {h} + aty) * {w}", f"for ox in range({ow}):"]
        body += src.indent(source_lines(g, "w", "ox", False, "x") + ["y[yb + ox] = x[r + atx]"])
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def table_lines(g: dict, axis: str, var: str, base: int, bilinear: bool) -> list[str]:
    """Kernel lines writing the start table of one index map (``var`` of :func:`source_lines`: at, lo
    or hi) into ``tab[tb + base ...]``: entry i is the first output whose index is >= i (m if none)."""
    n, m = g[axis], g["o" + axis]
    tag = "y" if axis == "h" else "x"
    return ["i = 0", f"for o in range({m}):",
            *src.indent(source_lines(g, axis, "o", bilinear, tag)),
            f"    while i <= {var}{tag}:", f"        tab[tb + {base} + i] = np.int32(o)", "        i += 1",
            f"while i <= {n}:", f"    tab[tb + {base} + i] = np.int32({m})", "    i += 1"]


def emit_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """dx row by row (see the module docstring); every sum in float32, dy rows in ascending order."""
    dtype = sig.inputs[0].dtype
    g = plan.tiling
    h, w, oh, ow = g["h"], g["w"], g["oh"], g["ow"]
    bilinear = sig.op in BILINEAR
    maps = ("lo", "hi") if bilinear else ("at",)
    # table offsets inside a block's slice: every y map (h + 1 entries), then every x map (w + 1)
    ybase = {var: k * (h + 1) for k, var in enumerate(maps)}
    xbase = {var: len(maps) * (h + 1) + k * (w + 1) for k, var in enumerate(maps)}
    lines = src.HEADER + src.views(("dy", 0, dtype), ("dx", 1, dtype), ("tab", 2, "int32"))
    lines += [f"    tb = block_idx * {g['table']}"]
    for var in maps:
        lines += src.indent(table_lines(g, "h", var, ybase[var], bilinear))
        lines += src.indent(table_lines(g, "w", var, xbase[var], bilinear))
    lines += src.indent(src.split_lines(str(g["n"] * g["c"] * h)))
    body = [f"p = u // {h}", f"iy = u % {h}", f"db = p * {oh * ow}", f"xb = u * {w}",
            f"for ix in range({w}):", "    acc = f32(0.0)"]
    value = src.load(dtype, f"dy[db + oy * {ow} + ox]")
    for ym in maps:
        inner = [f"for oy in range(tab[tb + {ybase[ym]} + iy], tab[tb + {ybase[ym]} + iy + 1]):"]
        if bilinear:
            inner += src.indent(source_lines(g, "h", "oy", True, "y"))
            inner += ["    wy = ly" if ym == "hi" else "    wy = f32(1.0) - ly", "    row = f32(0.0)"]
        for xm in maps:
            inner += [f"    for ox in range(tab[tb + {xbase[xm]} + ix], tab[tb + {xbase[xm]} + ix + 1]):"]
            if bilinear:
                inner += src.indent(source_lines(g, "w", "ox", True, "x"), 2)
                weight = "lx" if xm == "hi" else "(f32(1.0) - lx)"
                inner += [f"        row += {weight} * {value}"]
            else:
                inner += [f"        acc += {value}"]
        if bilinear:
            inner += ["    acc += wy * row"]
        body += src.indent(inner)
    body += [f"    dx[xb + ix] = {src.store(dtype, 'acc')}"]
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


# ---------------------------------------------------------------------------------- backward rules

def grad_resize(b: GradBuilder, c: GradCall) -> tuple[int]:
    """The backward op of the same coordinate mapping, given the forward input's shape."""
    grad_op = "ResizeBilinearGrad" if c.sig.op in BILINEAR else "ResizeNearestNeighborGrad"
    attrs = {k: v for k, v in dict(c.sig.attrs).items() if k != "size"}
    return (b.op(grad_op, c.douts[0], x_shape=c.sig.inputs[0].shape, **attrs),)


OPS: tuple[OpDef, ...] = (
    OpDef("ResizeNearestNeighbor", "resize_nearest_neighbor_v2_d", infer, plan, emit, grad=grad_resize,
          frontend=Exposure(("ResizeNearestNeighbor",), ("interpolate",))),
    OpDef("ResizeBilinearV2", "resize_bilinear_v2_d", infer, plan, emit, grad=grad_resize,
          frontend=Exposure(("ResizeBilinearV2", "ResizeBilinear"), ("interpolate",))),
    OpDef("ResizeNearestNeighborGrad", "resize_nearest_neighbor_v2_grad_d", infer, plan, emit_grad),
    OpDef("ResizeBilinearGrad", "resize_bilinear_v2_grad", infer, plan, emit_grad),
)
