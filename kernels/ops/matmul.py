"""MatMul and BatchMatMul. float32 calls OpenBLAS's sgemm (``hal.blas``) once per output tile of a
near-square grid (see :func:`blas_grid`). float16 runs a blocked i-k-j kernel over output tiles:

Work unit = (batch index, tile of MATMUL_ROW_TILE rows, tile of MATMUL_COL_TILE columns); blocks take
contiguous ranges of units. Inside a unit the contraction goes in slices of MATMUL_K_SLICE so the B
slice stays in L2 while four output rows are updated per B row (one B load feeds four multiply-adds;
the j loop vectorises). B's slice is copied into a float32 workspace tile when it is transposed or
float16 (each unit copies only its own columns, so the copies cost 1/MATMUL_ROW_TILE of the work);
float16 outputs accumulate in a float32 workspace tile and are stored rounded.

Both are dynamic-shape kernels (``RUNTIME_TILING``): sizes, tiles, grids and batch strides are read at
run time; dtype, the route (BLAS, B packing, float32 accumulator), the batch rank and the fused
epilogue's program are compiled in, so the products of a network share a handful of kernels. The
BLAS route reads its transposes at run time too (sgemm takes them as arguments, so the code is the
same): a float32 layer's forward and its two gradient products (NT, NN, TN) are one kernel, not
three. The blocked route keeps them compiled in: they decide its loads' strides and B's packing order.
"""
from __future__ import annotations

import math
import struct

from ascendemu.device.cost import Gemm, KernelCost
from ascendemu.device.tasks import HOST_BLOCK_THREADS
from ascendemu.errors import InvalidParamError
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOAT, broadcast_shapes, check_arity, check_bool, check_rank, fail, same_dtype
from .elementwise import broadcast_strides, infer_fused, program_steps, store_value

MATMUL_ROW_TILE = 64       # output rows per work unit (a multiple of ROW_GROUP)
MATMUL_COL_TILE = 256      # output columns per work unit
MATMUL_K_SLICE = 256       # contraction slice kept in cache
ROW_GROUP = 4              # rows updated together from one B row
MIN_FLOPS_PER_BLOCK = 1 << 22     # ~1 ms of host work: smaller matmuls use fewer blocks
# BatchMatMul's batch dims are walked as at least this many (leading 1s added: a size-1 dim adds 0 to
# every offset), so attention's 3-D and 4-D products share one kernel; the rank is compiled in.
BATCH_RANK = 4

# What the kernels read at run time (dynamic-shape kernels): sizes, batch strides (0 where an operand
# is broadcast), the tiles of the blocked route, the BLAS route's grids and leading dimensions, and the
# block count the host runs a BLAS launch as, the BLAS route's transposes. Dtype, route, batch rank, epilogue
# and the blocked route's transposes are literals.
RUNTIME_TILING = ("out_batch", "batch", "a_strides", "b_strides", "e_strides", "m", "n", "k", "row_tile",
                  "col_tile", "tiles_m", "tiles_n", "units", "k_slice", "k_step", "pack_size", "per_block",
                  "grid", "host_grid", "host_block_dim", "lda", "ldb", "ldc",
                  "blas_ta", "blas_tb", "a_row_step", "b_col_step", "epi_select", "epi_consts")

# Epilogues a kernel selects at run time, by its number of epilogue inputs: the forms O1 fusion makes
# of Dense layers (bias either side, bias + ReLU, ReLU's gradient, amp O2's float32 bias cast in, an
# LSTM gate's two biases) and of attention's scaling (a product times or divided by a constant, written
# EPILOGUE_CONST: its value is tiling data), as the nine first-run scripts make them. A network's products with
# these epilogues, or none, share one kernel per epilogue input count instead of one per epilogue
# (4 -> 2 builds for a training script's Dense layers; ~0.2-0.45 CPU-s each). One epilogue loop
# branches on the selection (loop-invariant) per element: each form's steps are the expressions a kernel
# of its own would compute, on the same values. Only the BLAS
# route (float32) has the menu: the blocked route's kernels already differ by transposes, and each form's
# float16 loop added ~0.15 CPU-s to every one of them. Other epilogues are compiled in (a kernel each).
EPILOGUE_CONST = ("src", "ek")
EPILOGUE_MENU: dict[int, tuple[tuple, ...]] = {
    0: ((("ReLU", ("in", 0)),), (("Mul", ("in", 0), EPILOGUE_CONST),), (("Div", ("in", 0), EPILOGUE_CONST),)),
    1: ((("Add", ("in", 0), ("in", 1)),), (("Add", ("in", 0), ("in", 1)), ("ReLU", ("t", 0))),
        (("ReluGrad", ("in", 0), ("in", 1)),), (("Add", ("in", 1), ("in", 0)),),
        (("Cast", ("in", 1)), ("Add", ("in", 0), ("t", 0))),
        (("Cast", ("in", 1)), ("Add", ("in", 0), ("t", 0)), ("ReLU", ("t", 1)))),
    2: ((("Add", ("in", 1), ("in", 2)), ("Add", ("in", 0), ("t", 0))),),
}


def matmul_dims(sig: OpSignature) -> tuple[tuple[int, ...], int, int, int]:
    """(broadcast batch shape, M, N, K) of a MatMul or BatchMatMul signature."""
    ta, tb = check_bool(sig, "transpose_a"), check_bool(sig, "transpose_b")
    a, b = sig.inputs[0].shape, sig.inputs[1].shape
    if sig.op == "MatMul":
        check_rank(sig, 0, 2, "x1")
        check_rank(sig, 1, 2, "x2")
    else:
        for i, (s, n) in enumerate(((a, "x1"), (b, "x2"))):
            if len(s) < 2:
                raise fail(sig, f"input {i} ({n}) must have rank >= 2, got shape {s}")
    m, ka = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if ka != kb:
        raise fail(sig, f"input 0 (x1) shape {a} (transpose_a={ta}) and input 1 (x2) shape {b} "
                        f"(transpose_b={tb}) disagree on the contracted dimension ({ka} vs {kb})")
    batch = ()
    if sig.op == "BatchMatMul":
        try:
            batch = broadcast_shapes(sig, [a[:-2], b[:-2]])
        except InvalidParamError:
            raise fail(sig, f"input 0 (x1) shape {a} and input 1 (x2) shape {b}: batch dimensions {a[:-2]} and "
                            f"{b[:-2]} do not broadcast (each pair of dims must be equal or 1)") from None
    return batch, m, n, ka


def infer_matmul(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """MatMul/BatchMatMul; with attr ``epilogue`` (a FusedElemwise program where ("in", 0) is the
    product and ("in", i) input i + 1) the inputs after x1, x2 are the epilogue's, broadcast to the output."""
    epilogue = sig.attr("epilogue")
    if epilogue is None:
        check_arity(sig, 2, ("x1", "x2"))
    elif len(sig.inputs) < 2:
        raise fail(sig, f"takes x1, x2 and the epilogue's inputs, got {len(sig.inputs)} input(s)")
    matmul = OpSignature(sig.op, sig.inputs[:2], tuple((k, v) for k, v in sig.attrs if k != "epilogue"))
    dtype = same_dtype(matmul, FLOAT)
    batch, m, n, _ = matmul_dims(matmul)
    out = TensorDesc(batch + (m, n), dtype)
    if epilogue is not None:
        extras = sig.inputs[2:]
        # the epilogue stores in the product's dtype (a mixed-precision bias is cast inside it)
        fused = OpSignature("FusedElemwise", (out,) + extras, (("dst_type", dtype), ("program", epilogue)))
        (result,) = infer_fused(fused)
        if result != out:
            raise fail(sig, f"epilogue makes {result}, but it must keep the product's shape and dtype {out}")
    return (out,)


def epilogue_menu(sig: OpSignature) -> tuple[tuple, ...]:
    """The EPILOGUE_MENU forms a kernel of ``sig``'s dtypes compiles in: those with a Cast only when an
    epilogue input's dtype is not the product's (amp O2's float32 bias), the others only when none is."""
    cast = any(d.dtype != sig.inputs[0].dtype for d in sig.inputs[2:])
    return tuple(form for form in EPILOGUE_MENU.get(len(sig.inputs) - 2, ())
                 if any(step[0] == "Cast" for step in form) == cast)


def epilogue_choice(sig: OpSignature, epilogue: tuple | None) -> tuple[int, int] | None:
    """(menu index + 1, the float64 bits of its constant) of an epilogue the kernel selects at run
    time, (0, 0) for none, None for an epilogue compiled in (not in EPILOGUE_MENU). The constant is
    read back as float64 and rounded to float32 as the literal ``f32(value)`` is."""
    if epilogue is None:
        return 0, 0
    consts = [value for step in epilogue for kind, value in step[1:] if kind == "c"]
    if len(consts) > 1 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in consts):
        return None
    form = tuple((step[0], *(EPILOGUE_CONST if kind == "c" else (kind, value) for kind, value in step[1:]))
                 for step in epilogue)
    menu = epilogue_menu(sig)
    if form not in menu:
        return None
    bits = struct.unpack("<q", struct.pack("<d", float(consts[0])))[0] if consts else 0
    return menu.index(form) + 1, bits


def batch_strides(out_batch: tuple[int, ...], batch: tuple[int, ...], matrix: int) -> list[int]:
    """Element strides of one operand over the broadcast batch dims (0 where it is broadcast)."""
    padded = (1,) * (len(out_batch) - len(batch)) + batch
    strides, acc = [0] * len(padded), matrix
    for d in reversed(range(len(padded))):
        if padded[d] != 1:
            strides[d] = acc
        acc *= padded[d]
    return strides


def row_group_lines(rows: int, a_index, acc_row: str, ldc: int, b_ptr: str, b_row: str,
                    a_load) -> list[str]:
    """Lines updating ``rows`` accumulator rows starting at row i over this k slice."""
    lines = ["for k in range(nk):"]
    body = [f"a{r} = {a_load(a_index(f'i + {r}', 'kc + k'))}" for r in range(rows)]
    body += [f"bo = {b_row}", f"ro = {acc_row}", "for j in range(nj):", f"    bv = {b_ptr}[bo + j]"]
    body += [f"    acc[ro + {r * ldc} + j] += a{r} * bv" for r in range(rows)]
    return lines + src.indent(body)


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    a_desc, b_desc = sig.inputs[:2]
    dtype = a_desc.dtype
    out_batch, m, n, k = matmul_dims(sig)
    batch = math.prod(out_batch)
    row_tile, col_tile = min(MATMUL_ROW_TILE, max(m, 1)), min(MATMUL_COL_TILE, max(n, 1))
    tiles_m, tiles_n = -(-m // row_tile), -(-n // col_tile)
    units = batch * tiles_m * tiles_n
    flops = 2 * batch * m * n * k
    block_dim = max(1, min(src.MAX_BLOCKS, units, flops // MIN_FLOPS_PER_BLOCK))
    k_slice = min(k, MATMUL_K_SLICE)
    blas = dtype == "float32"
    pack_b = not blas and (bool(sig.attr("transpose_b", False)) or dtype == "float16")
    acc_ws = dtype == "float16"
    pack_size = k_slice * col_tile if pack_b else 0
    per_block = pack_size + (row_tile * col_tile if acc_ws else 0)
    workspace = (block_dim * per_block * 4,) if per_block else ()
    extras = sig.inputs[2:]
    moved = a_desc.nbytes + b_desc.nbytes + outputs[0].nbytes + sum(d.nbytes for d in extras)
    epilogue = sig.attr("epilogue")
    choice = epilogue_choice(sig, epilogue) if blas else None
    gemm = Gemm(batch, m, n, k, a_desc.nbytes, b_desc.nbytes)
    cost = KernelCost(cube_flops=flops, vector_ops=outputs[0].size * len(epilogue or ()), bytes=moved, dtype=dtype,
                      gemm=gemm)
    ta, tb = bool(sig.attr("transpose_a", False)), bool(sig.attr("transpose_b", False))
    host_block_dim = min(block_dim, HOST_BLOCK_THREADS)
    walked = (1,) * (BATCH_RANK - len(out_batch)) + out_batch if sig.op == "BatchMatMul" else out_batch
    tiling = dict(out_batch=walked, batch=batch, m=m, n=n, k=k, row_tile=row_tile, col_tile=col_tile,
                  tiles_m=tiles_m, tiles_n=tiles_n, units=units, k_slice=k_slice, k_step=max(k_slice, 1),
                  pack_b=pack_b, acc_ws=acc_ws, pack_size=pack_size, per_block=per_block, blas=blas,
                  epilogue=None if choice else epilogue, epi_menu=choice is not None,
                  epi_select=choice[0] if choice else 0, epi_consts=choice[1] if choice else 0,
                  **transpose_facts(blas, ta, tb, k),
                  a_strides=tuple(batch_strides(walked, a_desc.shape[:-2], m * k)),
                  b_strides=tuple(batch_strides(walked, b_desc.shape[:-2], k * n)),
                  e_strides=tuple(tuple(broadcast_strides(walked + (m, n), d.shape)) for d in extras),
                  grid=blas_grid(batch, m, n, block_dim), host_grid=blas_grid(batch, m, n, host_block_dim),
                  host_block_dim=host_block_dim, lda=max(m if ta else k, 1), ldb=max(k if tb else n, 1), ldc=max(n, 1))
    # the BLAS route picks its tile grid by the run-time block count, so the host may run it as fewer,
    # larger blocks (2 sgemms of 512x1024x1024 for a 1024^3 product instead of 32 small ones)
    return Plan(block_dim, cost, workspace, tiling, host_blocks=blas)


def transpose_facts(blas: bool, ta: bool, tb: bool, k: int) -> dict:
    """The transposes as tiling facts: run-time ints on the BLAS route (the flags sgemm takes and the
    element steps of A per output row and of B per output column), compiled-in bools (None on the BLAS
    route, so its kernels do not differ by them) on the blocked route."""
    if blas:
        return dict(transpose_a=None, transpose_b=None, blas_ta=int(ta), blas_tb=int(tb),
                    a_row_step=1 if ta else k, b_col_step=k if tb else 1)
    return dict(transpose_a=ta, transpose_b=tb, blas_ta=0, blas_tb=0, a_row_step=0, b_col_step=0)


def all_epilogue_lines(sig: OpSignature, plan: Plan) -> list[str]:
    """Lines applying the kernel's epilogue (see :func:`epilogue_lines`): the one compiled in, or on a
    menu kernel the EPILOGUE_MENU form its tiling selects (none: 0), its constant read as ``ek``: one
    loop whose body branches on the (loop-invariant) selection, so the menu adds only its steps' code."""
    t = plan.tiling
    if not t["epi_menu"]:
        return [] if t["epilogue"] is None else epilogue_lines(sig, plan, program_steps(t["epilogue"], "f"),
                                                               f"t{len(t['epilogue']) - 1}")
    menu = epilogue_menu(sig)
    if not menu:
        return []
    steps = []
    for index, form in enumerate(menu, 1):
        steps += [f"{'if' if index == 1 else 'elif'} {t['epi_select']} == {index}:"]
        steps += src.indent(program_steps(form, "f") + [f"r = t{len(form) - 1}"])
    steps += ["else:", "    r = v0"]
    lines = [f"if {t['epi_select']} != 0:"]
    if any(EPILOGUE_CONST in step[1:] for form in menu for step in form):
        # the tiling data (the argument after the workspaces) read as float64: cheaper to compile than
        # a bit cast of the bound int64
        arg = len(sig.inputs) + 1 + len(plan.workspace_sizes)
        lines.append(f"    {EPILOGUE_CONST[1]} = f32(ptr_float64(args[{arg}])"
                     f"[{src.tiling_offset(t, RUNTIME_TILING, 'epi_consts')}])")
    return lines + src.indent(epilogue_lines(sig, plan, steps, "r"))


def epilogue_lines(sig: OpSignature, plan: Plan, steps: list[str], result: str) -> list[str]:
    """Lines applying a fused epilogue's ``steps`` (computing ``result`` from the product v0 and the
    epilogue inputs v1, ...) in place over output rows [i0, i1), columns jc + [0, nj), reading the
    stored product exactly as an unfused kernel would."""
    dtype, extras = sig.inputs[0].dtype, sig.inputs[2:]
    e_strides, n = plan.tiling["e_strides"], plan.tiling["n"]
    body = [f"v0 = {src.load(dtype, 'c[co + j]')}"]
    for x, (d, st) in enumerate(zip(extras, e_strides)):
        index = f"eoff{x} + i * {st[-2]} + (jc + j) * {st[-1]}"
        body.append(f"v{x + 1} = {src.load(d.dtype, f'e{x}[{index}]')}")
    body += steps
    body.append(f"c[co + j] = {store_value(dtype, result, 'f')}")
    return ["for i in range(i0, i1):", f"    co = coff + i * {n} + jc", "    for j in range(nj):"] + src.indent(body, 2)


def batch_offset_lines(t: dict) -> list[str]:
    """Lines setting aoff, boff and eoff<x> for batch index ``bi`` from the tiling ``t``'s batch dims and
    strides (run-time values: a broadcast operand's stride is 0, so its offset stays 0)."""
    out_batch, e_strides = t["out_batch"], t["e_strides"]
    lines = ["aoff = 0", "boff = 0", *(f"eoff{x} = 0" for x in range(len(e_strides)))]
    if out_batch:
        lines.append("r = bi")
        for d in reversed(range(len(out_batch))):
            lines += [f"q = r % {out_batch[d]}", f"r = r // {out_batch[d]}",
                      f"aoff += q * {t['a_strides'][d]}", f"boff += q * {t['b_strides'][d]}"]
            lines += [f"eoff{x} += q * {st[d]}" for x, st in enumerate(e_strides)]
    return lines


def blas_grid(batch: int, m: int, n: int, block_dim: int) -> tuple[int, int]:
    """(row parts, column parts) each batch matrix is cut into so that every block has a tile: the
    split that keeps tiles closest to square, since each sgemm call packs its whole A band and B panel
    (cutting 1024^3 into 32 row bands packs B 32 times; an 8 x 4 grid packs 2.7x less)."""
    parts = -(-block_dim // max(batch, 1))
    grids = [(-(-parts // gn), gn) for gn in range(1, min(parts, max(n, 1)) + 1)]

    def badness(grid: tuple[int, int]) -> tuple[bool, float]:
        gm, gn = grid
        return gm * gn > parts * 5 // 4, abs(math.log(max(m, 1) / gm * gn / max(n, 1)))
    return min(grids, key=badness)


def emit_blas(sig: OpSignature, plan: Plan) -> str:
    """float32: work unit = one tile of one batch matrix on the ``grid`` (row parts x column parts);
    each is one OpenBLAS sgemm, then the epilogue over the tile. Blocks take balanced unit ranges."""
    t = plan.tiling
    m, n, k = t["m"], t["n"], t["k"]
    (gm, gn), (hm, hn) = t["grid"], t["host_grid"]
    ta, tb = t["blas_ta"], t["blas_tb"]
    extras = sig.inputs[2:]
    c_arg = 2 + len(extras)
    lines = src.HEADER + src.views(("a", 0, "float32"), ("b", 1, "float32"),
                                   *((f"e{x}", 2 + x, d.dtype) for x, d in enumerate(extras)), ("c", c_arg, "float32"))
    # the device's grid, or the host's when the host runs the launch as HOST_BLOCK_THREADS blocks (any
    # count computes the same product: blocks take balanced shares of the grid's tiles)
    lines += [f"    gm = pick(block_dim == {t['host_block_dim']}, {hm}, {gm})",
              f"    gn = pick(block_dim == {t['host_block_dim']}, {hn}, {gn})",
              "    rows, cols = (" + f"{m} + gm - 1) // gm, ({n} + gn - 1) // gn"]
    lines += src.indent(src.balanced_split_lines(f"({t['batch']} * gm * gn)"))
    unit = ["bi = u // (gm * gn)", "i0 = ((u // gn) % gm) * rows", f"i1 = min({m}, i0 + rows)",
            "jc = (u % gn) * cols", f"nj = min({n}, jc + cols) - jc", f"coff = bi * {m * n}",
            *batch_offset_lines(t),
            "if i1 > i0 and nj > 0:",
            f"    sgemm({ta}, {tb}, i1 - i0, nj, {k}, a, aoff + i0 * {t['a_row_step']}, {t['lda']}, "
            f"b, boff + jc * {t['b_col_step']}, {t['ldb']}, c, coff + i0 * {n} + jc, {t['ldc']})"]
    unit += all_epilogue_lines(sig, plan)
    lines += ["    for u in range(lo, hi):"] + src.indent(unit, 2)
    return src.finish(lines)


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    if plan.tiling["blas"]:
        return emit_blas(sig, plan)
    dtype = sig.inputs[0].dtype
    t = plan.tiling
    m, n, k = t["m"], t["n"], t["k"]
    row_tile, col_tile, tiles_m, tiles_n = t["row_tile"], t["col_tile"], t["tiles_m"], t["tiles_n"]
    k_slice, pack_b, acc_ws, pack_size, per_block = t["k_slice"], t["pack_b"], t["acc_ws"], t["pack_size"], t["per_block"]
    ta, tb = t["transpose_a"], t["transpose_b"]
    nc = col_tile

    def a_index(i: str, kk: str) -> str:
        return f"aoff + ({kk}) * {m} + {i}" if ta else f"aoff + ({i}) * {k} + {kk}"

    def a_load(index: str) -> str:
        return src.load(dtype, f"a[{index}]")

    extras = sig.inputs[2:]
    c_arg = 2 + len(extras)
    lines = src.HEADER + src.views(("a", 0, dtype), ("b", 1, dtype),
                                   *((f"e{x}", 2 + x, d.dtype) for x, d in enumerate(extras)), ("c", c_arg, dtype))
    if plan.workspace_sizes:
        lines += ["    " + src.view("w", c_arg + 1, "float32"), f"    wb = block_idx * {per_block}"]
    lines += src.indent(src.split_lines(str(t["units"])))
    unit = [f"bi = u // {tiles_m * tiles_n}",
            f"i0 = ((u // {tiles_n}) % {tiles_m}) * {row_tile}",
            f"i1 = min({m}, i0 + {row_tile})",
            f"jc = (u % {tiles_n}) * {col_tile}",
            f"coff = bi * {m * n}", *batch_offset_lines(t)]
    tile = [f"nj = min({n} - jc, {nc})"]
    if acc_ws:
        acc_row, ldc = f"wb + {pack_size} + (i - i0) * {nc}", nc
        tile += ["acc = w"]
    else:
        acc_row, ldc = f"coff + i * {n} + jc", n
        tile += ["acc = c"]
    tile += ["for i in range(i0, i1):", f"    ro = {acc_row}", "    for j in range(nj):",
             "        acc[ro + j] = f32(0.0)"]
    kslice = [f"nk = min({k} - kc, {k_slice})"]
    if pack_b:
        if tb:
            src_index = f"boff + (jc + j) * {k} + kc + kk"
            kslice += ["for j in range(nj):", "    for kk in range(nk):",
                       f"        w[wb + kk * {nc} + j] = {src.load(dtype, f'b[{src_index}]')}"]
        else:
            src_index = f"boff + (kc + kk) * {n} + jc + j"
            kslice += ["for kk in range(nk):", "    for j in range(nj):",
                       f"        w[wb + kk * {nc} + j] = {src.load(dtype, f'b[{src_index}]')}"]
        b_ptr, b_row = "w", f"wb + k * {nc}"
    else:
        b_ptr, b_row = "b", f"boff + (kc + k) * {n} + jc"
    kslice += ["i = i0", f"while i + {ROW_GROUP} <= i1:"]
    kslice += src.indent(row_group_lines(ROW_GROUP, a_index, acc_row, ldc, b_ptr, b_row, a_load))
    kslice += [f"    i += {ROW_GROUP}", "while i < i1:"]
    kslice += src.indent(row_group_lines(1, a_index, acc_row, ldc, b_ptr, b_row, a_load))
    kslice += ["    i += 1"]
    # a while loop: range() with a run-time step checks it for 0, which needs numba's runtime to raise
    tile += ["kc = 0", f"while kc < {k}:"] + src.indent(kslice + [f"kc += {t['k_step']}"])
    if acc_ws:
        tile += ["for i in range(i0, i1):", f"    ro = {acc_row}", f"    co = coff + i * {n} + jc",
                 "    for j in range(nj):", f"        c[co + j] = {src.store(dtype, 'w[ro + j]')}"]
    tile += all_epilogue_lines(sig, plan)
    unit += tile
    lines += ["    for u in range(lo, hi):"] + src.indent(unit, 2)
    return src.finish(lines)


def grad(b: GradBuilder, c: GradCall) -> tuple[int | None, int | None]:
    """y = op(a) @ op(b), op = transpose or not: each input's gradient is one more product of dy with
    the other input (transposes chosen so no Transpose op is needed); batch-broadcast inputs sum
    their gradient back to their own shape."""
    if c.sig.attr("epilogue") is not None:
        raise fail(c.sig, "a fused epilogue is never differentiated (autodiff runs before fusion)")
    ta, tb = bool(c.sig.attr("transpose_a", False)), bool(c.sig.attr("transpose_b", False))
    x1, x2 = c.inputs
    dy = c.douts[0]
    op = c.sig.op
    da = db = None
    if c.wants[0]:
        da = (b.op(op, x2, dy, transpose_a=tb, transpose_b=True) if ta
              else b.op(op, dy, x2, transpose_a=False, transpose_b=not tb))
        da = b.sum_to(da, c.sig.inputs[0].shape)
    if c.wants[1]:
        db = (b.op(op, dy, x1, transpose_a=True, transpose_b=ta) if tb
              else b.op(op, x1, dy, transpose_a=not ta, transpose_b=False))
        db = b.sum_to(db, c.sig.inputs[1].shape)
    return da, db


OPS: tuple[OpDef, ...] = (
    OpDef("MatMul", "mat_mul", infer_matmul, plan, emit, grad=grad, frontend=Exposure(("MatMul",), ("matmul",)),
          runtime_tiling=RUNTIME_TILING),
    OpDef("BatchMatMul", "batch_matmul", infer_matmul, plan, emit, grad=grad,
          frontend=Exposure(("BatchMatMul",), ("bmm",)), runtime_tiling=RUNTIME_TILING),
)
