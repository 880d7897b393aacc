"""MatMul and BatchMatMul: a blocked i-k-j kernel over output tiles.

Work unit = (batch index, tile of MATMUL_ROW_TILE rows, tile of MATMUL_COL_TILE columns); blocks take
contiguous ranges of units. Inside a unit the contraction goes in slices of MATMUL_K_SLICE so the B
slice stays in L2 while four output rows are updated per B row (one B load feeds four multiply-adds;
the j loop vectorises). B's slice is copied into a float32 workspace tile when it is transposed or
float16 (each unit copies only its own columns, so the copies cost 1/MATMUL_ROW_TILE of the work);
float16 outputs accumulate in a float32 workspace tile and are stored rounded.
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import nb
from .elementwise import broadcast_strides, program_steps, store_value
from .shapes import matmul_dims

MATMUL_ROW_TILE = 64       # output rows per work unit (a multiple of ROW_GROUP)
MATMUL_COL_TILE = 256      # output columns per work unit
MATMUL_K_SLICE = 256       # contraction slice kept in cache
ROW_GROUP = 4              # rows updated together from one B row
MIN_FLOPS_PER_BLOCK = 1 << 22     # ~1 ms of host work: smaller matmuls use fewer blocks


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
    return lines + nb.indent(body)


def build(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> nb.Built:
    a_desc, b_desc = sig.inputs[:2]
    dtype = a_desc.dtype
    out_batch, m, n, k = matmul_dims(sig)
    ta, tb = bool(sig.attr("transpose_a", False)), bool(sig.attr("transpose_b", False))
    batch = 1
    for s in out_batch:
        batch *= s
    row_tile, col_tile = min(MATMUL_ROW_TILE, max(m, 1)), min(MATMUL_COL_TILE, max(n, 1))
    tiles_m, tiles_n = -(-m // row_tile), -(-n // col_tile)
    units = batch * tiles_m * tiles_n
    flops = 2 * batch * m * n * k
    block_dim = max(1, min(nb.MAX_BLOCKS, units, flops // MIN_FLOPS_PER_BLOCK))

    nc, k_slice = col_tile, min(k, MATMUL_K_SLICE)
    pack_b = tb or dtype == "float16"
    acc_ws = dtype == "float16"
    pack_size = k_slice * nc if pack_b else 0
    per_block = pack_size + (row_tile * nc if acc_ws else 0)
    workspace = (block_dim * per_block * 4,) if per_block else ()

    def a_index(i: str, kk: str) -> str:
        return f"aoff + ({kk}) * {m} + {i}" if ta else f"aoff + ({i}) * {k} + {kk}"

    def a_load(index: str) -> str:
        return nb.load(dtype, f"a[{index}]")

    a_strides = batch_strides(out_batch, a_desc.shape[:-2], m * k)
    b_strides = batch_strides(out_batch, b_desc.shape[:-2], k * n)
    extras = sig.inputs[2:]
    epilogue = sig.attr("epilogue")
    c_arg = 2 + len(extras)
    lines = nb.HEADER + nb.views(("a", 0, dtype), ("b", 1, dtype),
                                 *((f"e{x}", 2 + x, d.dtype) for x, d in enumerate(extras)), ("c", c_arg, dtype))
    if workspace:
        lines += ["    " + nb.view("w", c_arg + 1, "float32"), f"    wb = block_idx * {per_block}"]
    # epilogue inputs broadcast over (batch..., m, n): element strides of each (0 where broadcast)
    e_strides = [broadcast_strides(out_batch + (m, n), d.shape) for d in extras]
    lines += nb.indent(nb.split_lines(str(units)))
    unit = [f"bi = u // {tiles_m * tiles_n}",
            f"i0 = ((u // {tiles_n}) % {tiles_m}) * {row_tile}",
            f"i1 = min({m}, i0 + {row_tile})",
            f"jc = (u % {tiles_n}) * {col_tile}",
            "aoff = 0", "boff = 0", f"coff = bi * {m * n}", *(f"eoff{x} = 0" for x in range(len(extras)))]
    if out_batch:
        unit.append("r = bi")
        for d in reversed(range(len(out_batch))):
            unit += [f"q = r % {out_batch[d]}", f"r = r // {out_batch[d]}"]
            unit += [f"aoff += q * {a_strides[d]}"] if a_strides[d] else []
            unit += [f"boff += q * {b_strides[d]}"] if b_strides[d] else []
            unit += [f"eoff{x} += q * {st[d]}" for x, st in enumerate(e_strides) if st[d]]
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
                       f"        w[wb + kk * {nc} + j] = {nb.load(dtype, f'b[{src_index}]')}"]
        else:
            src_index = f"boff + (kc + kk) * {n} + jc + j"
            kslice += ["for kk in range(nk):", "    for j in range(nj):",
                       f"        w[wb + kk * {nc} + j] = {nb.load(dtype, f'b[{src_index}]')}"]
        b_ptr, b_row = "w", f"wb + k * {nc}"
    else:
        b_ptr, b_row = "b", f"boff + (kc + k) * {n} + jc"
    kslice += ["i = i0", f"while i + {ROW_GROUP} <= i1:"]
    kslice += nb.indent(row_group_lines(ROW_GROUP, a_index, acc_row, ldc, b_ptr, b_row, a_load))
    kslice += [f"    i += {ROW_GROUP}", "while i < i1:"]
    kslice += nb.indent(row_group_lines(1, a_index, acc_row, ldc, b_ptr, b_row, a_load))
    kslice += ["    i += 1"]
    tile += [f"for kc in range(0, {k}, {max(k_slice, 1)}):"] + nb.indent(kslice)
    if acc_ws:
        tile += ["for i in range(i0, i1):", f"    ro = {acc_row}", f"    co = coff + i * {n} + jc",
                 "    for j in range(nj):", f"        c[co + j] = {nb.store(dtype, 'w[ro + j]')}"]
    if epilogue is not None:
        # in place over the finished tile, reading the stored product exactly as an unfused kernel would
        body = [f"v0 = {nb.load(dtype, 'c[co + j]')}"]
        for x, (d, st) in enumerate(zip(extras, e_strides)):
            index = f"eoff{x} + i * {st[-2]} + (jc + j) * {st[-1]}"
            body.append(f"v{x + 1} = {nb.load(d.dtype, f'e{x}[{index}]')}")
        body += program_steps(epilogue, "f")
        body.append(f"c[co + j] = {store_value(dtype, f't{len(epilogue) - 1}', 'f')}")
        tile += ["for i in range(i0, i1):", f"    co = coff + i * {n} + jc", "    for j in range(nj):"]
        tile += nb.indent(body, 2)
    unit += tile
    lines += ["    for u in range(lo, hi):"] + nb.indent(unit, 2)
    src = "\n".join(lines) + "\n"
    moved = a_desc.nbytes + b_desc.nbytes + outputs[0].nbytes + sum(d.nbytes for d in extras)
    cost = KernelCost(cube_flops=flops, vector_ops=outputs[0].size * len(epilogue or ()), bytes=moved, dtype=dtype)
    return nb.Built(nb.compile_source(src), block_dim, cost, workspace)
