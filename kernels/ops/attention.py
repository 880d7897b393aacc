"""Fused attention as Ascend runs it: FlashAttentionScore and its backward kernel FlashAttentionScoreGrad.

FlashAttentionScore computes ``softmax(mask(scale_value * q k^T)) v`` without ever holding the
B x N x S1 x S2 scores: a work unit is one (batch, head, block of FA_Q_BLOCK query rows); it walks the
keys in tiles of FA_KV_BLOCK with an online softmax (running row maximum and sum, the accumulator
rescaled when the maximum grows), so a block's scratch is O(FA_Q_BLOCK * (D + FA_KV_BLOCK)), never S^2.
It saves what its backward needs and nothing more: the output, and each row's softmax maximum and sum
(``softmax_max``/``softmax_sum``, (B, N1, S1, 8) float32, the value repeated 8 times as Ascend's
kernel writes it). FlashAttentionScoreGrad recomputes the scores tile by tile from q, k and those
statistics (P = exp(s - max) / sum) and accumulates dq in a float32 workspace, dk and dv per key tile:
a work unit is one (batch, key/value head), which owns its dk/dv and its query heads' dq (GQA: N1 / N2
query heads read one key/value head), so no block reads another's results.

Layouts BSH, SBH, BNSD and BSND are element strides over (B, N, S, D): one kernel body serves all.
Masks: ``attn_mask`` (bool/uint8, True discards; (S1, S2) or (B|1, N1|1, S1, S2)) in sparse_mode 0/1,
the pre/next-token band in sparse_mode 0 (with a mask), causal from the top left (2) or bottom right
(3); a discarded score becomes FA_MASKED_SCORE, so a fully discarded row averages v, as MindSpore's
composition does. Products run through sgemm in float32 whatever the dtype (inputs are converted
into the block's tiles). The cost is Ascend's FA kernel: cube flops 4*B*N1*S1*S2*D forward (2.5x that
backward, the recompute included) times the share of (query, key) pairs the band keeps (the chip
skips the tiles outside it), HBM traffic O(B*N*S*D) plus the mask.
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import check_dtype, fail

__all__ = ["OPS", "FA_LAYOUTS", "FA_MASKED_SCORE", "fa_geometry"]

FA_LAYOUTS = ("BSH", "SBH", "BNSD", "BSND")
FA_FLOATS = ("float16", "bfloat16", "float32")
FA_MASK_DTYPES = ("bool", "uint8")
# the score a discarded (query, key) pair gets before the softmax (MindSpore's composition uses it too:
# exp of it is 0 next to any real score, and a row of nothing else averages v)
FA_MASKED_SCORE = -1.0e30
FA_STAT_WIDTH = 8          # softmax_max/softmax_sum repeat each row's value 8 times (Ascend's layout)
FA_Q_BLOCK = 64            # query rows per work unit (forward) / per inner step (backward)
FA_KV_BLOCK = 256          # key rows per tile of the online softmax
FA_SPARSE_MODES = (0, 1, 2, 3)
# Vector work per (query, key) pair on the chip: scale, mask select, max, subtract, exp, sum, cast
# (forward); the backward recomputes P (4) and forms dS = P * (dP - D) * scale (3), plus casts.
FA_VECTOR_OPS_FORWARD = 7
FA_VECTOR_OPS_BACKWARD = 10
# Backward cube work over forward: five S1 x S2 x D products (q k^T again, P^T dO, dO v^T, dS k, dS^T q)
# against the forward's two.
FA_BACKWARD_CUBE_RATIO = 2.5
_BIG = 1 << 40             # "no band limit"


# ------------------------------------------------------------------------------------------- infer

def _strides(layout: str, b: int, n: int, s: int, d: int) -> tuple[int, int, int]:
    """Element strides (batch, head, sequence) of a (B, N, S, D) tensor stored in ``layout``."""
    if layout == "BNSD":
        return n * s * d, s * d, d
    if layout == "SBH":
        return n * d, d, b * n * d
    return s * n * d, d, n * d               # BSH and BSND store the same order


def _bnsd(sig: OpSignature, index: int, name: str, layout: str, heads: int | None, d: int | None
          ) -> tuple[int, int, int, int]:
    """(B, N, S, D) of input ``index`` in ``layout``; BSH/SBH need the head count (query) or D (key)."""
    shape = sig.inputs[index].shape
    want = 3 if layout in ("BSH", "SBH") else 4
    if len(shape) != want:
        raise fail(sig, f"input {index} ({name}) must have rank {want} in layout {layout}, got shape {shape}")
    if layout == "BNSD":
        return shape
    if layout == "BSND":
        return shape[0], shape[2], shape[1], shape[3]
    b, s, h = (shape[1], shape[0], shape[2]) if layout == "SBH" else shape
    if heads is not None:
        if heads <= 0 or h % heads:
            raise fail(sig, f"input {index} ({name}) hidden size {h} must be a multiple of head_num={heads}")
        return b, heads, s, h // heads
    if d is None or d <= 0 or h % d:
        raise fail(sig, f"input {index} ({name}) hidden size {h} must be a multiple of the head dim {d}")
    return b, h // d, s, d


def _masked(sig: OpSignature) -> bool:
    """Whether input 3 is an attn_mask the kernel reads (sparse modes 2/3 define their own triangle)."""
    return sig.op == "FlashAttentionScore" and len(sig.inputs) == 4 or \
        sig.op == "FlashAttentionScoreGrad" and len(sig.inputs) == 8


def fa_geometry(sig: OpSignature) -> dict:
    """Sizes and strides of a FlashAttentionScore(Grad) signature, validated: b, n1, n2, s1, s2, d, the
    query and key/value (batch, head, sequence) strides, the mask's (batch, head) strides, the band."""
    layout = sig.attr("input_layout", "BSH")
    if layout not in FA_LAYOUTS:
        raise fail(sig, f"attr input_layout={layout!r} must be one of {FA_LAYOUTS}")
    heads = sig.attr("head_num")
    if isinstance(heads, bool) or not isinstance(heads, int) or heads <= 0:
        raise fail(sig, f"attr head_num={heads!r} must be a positive int")
    mode = sig.attr("sparse_mode", 0)
    if mode not in FA_SPARSE_MODES:
        raise fail(sig, f"attr sparse_mode={mode!r} is not supported here; use 0, 1, 2 or 3")
    dtype = check_dtype(sig, 0, FA_FLOATS, "query")
    for i, name in ((1, "key"), (2, "value")):
        if sig.inputs[i].dtype != dtype:
            raise fail(sig, f"input {i} ({name}) has dtype {sig.inputs[i].dtype} but query has {dtype}")
    b, n1, s1, d = _bnsd(sig, 0, "query", layout, heads, None)
    if n1 != heads:
        raise fail(sig, f"query has {n1} heads in layout {layout} but head_num={heads}")
    kb, n2, s2, kd = _bnsd(sig, 1, "key", layout, None, d)
    if sig.inputs[2].shape != sig.inputs[1].shape:
        raise fail(sig, f"input 2 (value) shape {sig.inputs[2].shape} must equal key's {sig.inputs[1].shape}")
    if kb != b or kd != d or n1 % n2:
        raise fail(sig, f"key (B, N, S, D) = {(kb, n2, s2, kd)} must share B and D with query {(b, n1, s1, d)}, "
                        f"and its heads must divide head_num")
    g = dict(b=b, n1=n1, n2=n2, s1=s1, s2=s2, d=d, dtype=dtype, layout=layout, mode=mode,
             q_strides=_strides(layout, b, n1, s1, d), kv_strides=_strides(layout, b, n2, s2, d),
             mask=None, mask_strides=(0, 0))
    if _masked(sig) and mode in (0, 1):
        g["mask"], g["mask_strides"] = _mask_strides(sig, 3 if sig.op == "FlashAttentionScore" else 4, b, n1, s1, s2)
    # allowed keys of query row i: [i - lo, i + hi] (FA's pre/next tokens; causal: hi = 0 or S2 - S1)
    lo = hi = _BIG
    if mode == 0 and g["mask"] is not None:
        lo, hi = _tokens(sig, "pre_tokens"), _tokens(sig, "next_tokens")
    elif mode == 2:
        hi = 0
    elif mode == 3:
        hi = s2 - s1
    g["band"] = (lo, hi)
    return g


def _tokens(sig: OpSignature, name: str) -> int:
    """attr pre_tokens/next_tokens, clamped to +-_BIG (MindSpore's default 2147483647: no limit)."""
    tokens = sig.attr(name, 2147483647)
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        raise fail(sig, f"attr {name}={tokens!r} must be an int")
    return max(-_BIG, min(_BIG, tokens))


def _mask_strides(sig: OpSignature, index: int, b: int, n1: int, s1: int, s2: int) -> tuple[str, tuple[int, int]]:
    mask = sig.inputs[index]
    check_dtype(sig, index, FA_MASK_DTYPES, "attn_mask")
    shape = mask.shape
    if len(shape) == 2 and shape == (s1, s2):
        return mask.dtype, (0, 0)
    if len(shape) == 4 and shape[2:] == (s1, s2) and shape[0] in (1, b) and shape[1] in (1, n1):
        return mask.dtype, (shape[1] * s1 * s2 if shape[0] > 1 else 0, s1 * s2 if shape[1] > 1 else 0)
    raise fail(sig, f"input {index} (attn_mask) of shape {shape} does not fit (S1, S2) or (B|1, N1|1, S1, S2) = "
                    f"(B, N1, S1, S2) {(b, n1, s1, s2)}")


def _stat_desc(g: dict) -> TensorDesc:
    return TensorDesc((g["b"], g["n1"], g["s1"], FA_STAT_WIDTH), "float32")


def infer_fa(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(softmax_max, softmax_sum, softmax_out, attention_out): the statistics float32 (B, N1, S1, 8), the
    unused softmax_out a 0-d placeholder, attention_out query's shape and dtype. Inputs: query, key,
    value and optionally attn_mask."""
    if len(sig.inputs) not in (3, 4):
        raise fail(sig, f"takes query, key, value and optionally attn_mask, got {len(sig.inputs)} input(s)")
    g = fa_geometry(sig)
    q = sig.inputs[0]
    return _stat_desc(g), _stat_desc(g), TensorDesc((), q.dtype), TensorDesc(q.shape, q.dtype)


def infer_fa_grad(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """(dq, dk, dv, dpse) from query, key, value, dy, [attn_mask], softmax_max, softmax_sum,
    attention_in (FlashAttentionScore's outputs 0, 1, 3); dpse is a 0-d placeholder (no real_shift)."""
    if len(sig.inputs) not in (7, 8):
        raise fail(sig, f"takes query, key, value, dy, [attn_mask], softmax_max, softmax_sum, attention_in, got "
                        f"{len(sig.inputs)} input(s)")
    g = fa_geometry(sig)
    q = sig.inputs[0]
    stats = sig.inputs[-3:-1]
    if sig.inputs[3] != q or sig.inputs[-1] != q:
        raise fail(sig, f"dy and attention_in must match query {q}, got {sig.inputs[3]} and {sig.inputs[-1]}")
    if any(s != _stat_desc(g) for s in stats):
        raise fail(sig, f"softmax_max/softmax_sum must be {_stat_desc(g)}, got {stats}")
    return q, sig.inputs[1], sig.inputs[2], TensorDesc((), q.dtype)


# -------------------------------------------------------------------------------------- plan, cost

def band_pairs(s1: int, s2: int, lo: int, hi: int) -> int:
    """How many of the S1 x S2 (query, key) pairs lie inside the band [i - lo, i + hi]."""
    if lo >= _BIG and hi >= _BIG:
        return s1 * s2
    return sum(max(0, min(s2 - 1, i + hi) - max(0, i - lo) + 1) for i in range(s1))


def _cost(sig: OpSignature, outputs: tuple[TensorDesc, ...], g: dict, backward: bool) -> KernelCost:
    # the chip skips the tiles the band (causal modes, or pre/next tokens beside a mask) discards
    pairs = g["b"] * g["n1"] * band_pairs(g["s1"], g["s2"], *g["band"])
    cube = 4 * pairs * g["d"]
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    if backward:
        # dq accumulates in float32 through HBM (read and written once per key tile row of the unit)
        moved += 2 * g["b"] * g["n1"] * g["s1"] * g["d"] * 4
        return KernelCost(cube_flops=int(cube * FA_BACKWARD_CUBE_RATIO), vector_ops=FA_VECTOR_OPS_BACKWARD * pairs,
                          bytes=moved, dtype=g["dtype"])
    return KernelCost(cube_flops=cube, vector_ops=FA_VECTOR_OPS_FORWARD * pairs, bytes=moved, dtype=g["dtype"])


def _layout_facts(g: dict) -> dict:
    qb, kb = min(FA_Q_BLOCK, max(g["s1"], 1)), min(FA_KV_BLOCK, max(g["s2"], 1))
    return dict(g, group=g["n1"] // g["n2"], qb=qb, kb=kb, q_tiles=-(-g["s1"] // qb))


def plan_fa(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Units: (batch, head, query block); per block: q, k, v tiles, scores, accumulator, max, sum."""
    t = _layout_facts(fa_geometry(sig))
    t["scale"] = float(sig.attr("scale_value", 1.0))
    qb, kb, d = t["qb"], t["kb"], t["d"]
    units = t["b"] * t["n1"] * t["q_tiles"]
    per_block = 3 * qb * d + 2 * kb * d + qb * kb + 2 * qb
    block_dim = max(1, min(src.MAX_BLOCKS, units))
    t.update(units=units, per_block=per_block)
    return Plan(block_dim, _cost(sig, outputs, t, False), (block_dim * per_block * 4,), t)


def plan_fa_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Units: (batch, key/value head). Workspace: dq (float32, B*N1*S1*D) and each row's
    D = rowsum(dy * out), shared by position; per block: q, dy, k, v, dk, dv, P, dS and product tiles."""
    t = _layout_facts(fa_geometry(sig))
    t["scale"] = float(sig.attr("scale_value", 1.0))
    qb, kb, d = t["qb"], t["kb"], t["d"]
    rows = t["b"] * t["n1"] * t["s1"]
    units = t["b"] * t["n2"]
    per_block = 2 * qb * d + 4 * kb * d + 2 * qb * kb + max(qb, kb) * d
    block_dim = max(1, min(src.MAX_BLOCKS, units))
    t.update(units=units, per_block=per_block, shared=rows * d + rows)
    return Plan(block_dim, _cost(sig, outputs, t, True), ((rows * d + rows + block_dim * per_block) * 4,), t)


# -------------------------------------------------------------------------------------------- emit

def _discard(t: dict, i: str, j: str) -> str | None:
    """Source of the condition discarding pair (i, j) (None: nothing is discarded)."""
    lo, hi = t["band"]
    parts = []
    if hi < _BIG:
        parts.append(f"{j} > {i} + {hi}")
    if lo < _BIG:
        parts.append(f"{j} < {i} - {lo}")
    if t["mask"] is not None:
        element = f"msk[mo + {i} * {t['s2']} + {j}]"
        parts.append(f"{src.load(t['mask'], element)} != 0")
    return " or ".join(parts) if parts else None


def _kv_range(t: dict, first: str, last: str) -> list[str]:
    """Lines setting [jlo, jhi): the keys a band leaves query rows [first, last] (tile-aligned), all keys
    when there is a user mask or a row of the block keeps no key (it then averages every v)."""
    lo, hi = t["band"]
    s2, kb = t["s2"], t["kb"]
    if t["mask"] is not None or (lo >= _BIG and hi >= _BIG):
        return ["jlo = 0", f"jhi = {s2}"]
    lines = ["jlo = 0", f"jhi = {s2}", "empty = False", f"for i in range({first}, {last} + 1):",
             f"    if max(0, i - {lo}) > min({s2 - 1}, i + {hi}):", "        empty = True",
             "if not empty:", f"    jlo = max(0, {first} - {lo})", f"    jlo = jlo - jlo % {kb}",
             f"    jhi = min({s2}, {last} + {hi} + 1)"]
    return lines


def _copy_rows(dst: str, ptr: str, dtype: str, offset: str, stride: int, rows: str, d: int) -> list[str]:
    """Lines copying ``rows`` rows of D elements (row r at ``offset + r * stride``) into float32 w[dst:]."""
    return [f"for r in range({rows}):", f"    so = {offset} + r * {stride}", f"    do = {dst} + r * {d}",
            f"    for e in range({d}):", f"        w[do + e] = {src.load(dtype, f'{ptr}[so + e]')}"]


def emit_fa(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    t = plan.tiling
    dt, d, qb, kb, s1, s2 = t["dtype"], t["d"], t["qb"], t["kb"], t["s1"], t["s2"]
    qsb, qsn, qss = t["q_strides"]
    ksb, ksn, kss = t["kv_strides"]
    masked = t["mask"] is not None
    names = [("q", 0, dt), ("k", 1, dt), ("v", 2, dt)] + ([("msk", 3, t["mask"])] if masked else [])
    o = len(names)
    names += [("smax", o, "float32"), ("ssum", o + 1, "float32"), ("sout", o + 2, dt), ("out", o + 3, dt),
              ("w", o + 4, "float32")]
    lines = src.HEADER + src.views(*names)
    lines += [f"    qw = block_idx * {t['per_block']}", f"    kw = qw + {qb * d}", f"    vw = kw + {kb * d}",
              f"    sw = vw + {kb * d}", f"    tw = sw + {qb * kb}", f"    aw = tw + {qb * d}", f"    mw = aw + {qb * d}",
              f"    lw = mw + {qb}", "    if block_idx == 0:", f"        sout[0] = {src.store(dt, 'f32(0.0)')}"]
    lines += src.indent(src.split_lines(t["units"]))
    cond = _discard(t, "i", "j")
    unit = [f"bn = u // {t['q_tiles']}", f"i0 = (u % {t['q_tiles']}) * {qb}", f"bi = bn // {t['n1']}",
            f"n = bn % {t['n1']}", f"nk = n // {t['group']}", f"nq = min({s1} - i0, {qb})",
            f"qo = bi * {qsb} + n * {qsn} + i0 * {qss}", f"ko = bi * {ksb} + nk * {ksn}"]
    if masked:
        mb, mn = t["mask_strides"]
        unit.append(f"mo = bi * {mb} + n * {mn}")
    unit += _copy_rows("qw", "q", dt, "qo", qss, "nq", d)
    unit += ["for r in range(nq):", f"    w[mw + r] = f32(-3.0e38)", "    w[lw + r] = f32(0.0)",
             f"    for e in range({d}):", f"        w[aw + r * {d} + e] = f32(0.0)"]
    unit += _kv_range(t, "i0", "i0 + nq - 1")
    tile = [f"nj = min(jhi - j0, {kb})"]
    tile += _copy_rows("kw", "k", dt, f"ko + j0 * {kss}", kss, "nj", d)
    tile += _copy_rows("vw", "v", dt, f"ko + j0 * {kss}", kss, "nj", d)
    tile += [f"sgemm(0, 1, nq, nj, {d}, w, qw, {d}, w, kw, {d}, w, sw, {kb})"]
    row = ["i = i0 + r", f"so = sw + r * {kb}", "mold = w[mw + r]", "mx = mold", "for c in range(nj):",
           "    j = j0 + c", f"    s = w[so + c] * f32({t['scale']!r})"]
    if cond is not None:
        row += [f"    if {cond}:", f"        s = f32({FA_MASKED_SCORE!r})"]
    row += ["    w[so + c] = s", "    mx = s if s > mx else mx",
            "alpha = fexp(mold - mx)", "ls = f32(0.0)", "for c in range(nj):", "    p = fexp(w[so + c] - mx)",
            "    w[so + c] = p", "    ls += p", "w[lw + r] = w[lw + r] * alpha + ls", "w[mw + r] = mx",
            f"for e in range({d}):", f"    w[aw + r * {d} + e] *= alpha"]
    tile += ["for r in range(nq):"] + src.indent(row)
    tile += [f"sgemm(0, 0, nq, {d}, nj, w, sw, {kb}, w, vw, {d}, w, tw, {d})",
             f"for x in range(nq * {d}):", "    w[aw + x] += w[tw + x]", f"j0 += {kb}"]
    unit += ["j0 = jlo", "while j0 < jhi:"] + src.indent(tile)
    unit += ["for r in range(nq):", "    rl = fdiv(f32(1.0), w[lw + r])", f"    oo = qo + r * {qss}",
             f"    for e in range({d}):", f"        out[oo + e] = {src.store(dt, f'w[aw + r * {d} + e] * rl')}",
             f"    st = (bn * {s1} + i0 + r) * {FA_STAT_WIDTH}", f"    for e in range({FA_STAT_WIDTH}):",
             "        smax[st + e] = w[mw + r]", "        ssum[st + e] = w[lw + r]"]
    lines += ["    for u in range(lo, hi):"] + src.indent(unit, 2)
    return src.finish(lines)


def emit_fa_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    t = plan.tiling
    dt, d, qb, kb, s1, s2, n1 = t["dtype"], t["d"], t["qb"], t["kb"], t["s1"], t["s2"], t["n1"]
    qsb, qsn, qss = t["q_strides"]
    ksb, ksn, kss = t["kv_strides"]
    masked = t["mask"] is not None
    names = [("q", 0, dt), ("k", 1, dt), ("v", 2, dt), ("dy", 3, dt)] + ([("msk", 4, t["mask"])] if masked else [])
    o = len(names)
    names += [("smax", o, "float32"), ("ssum", o + 1, "float32"), ("att", o + 2, dt), ("dq", o + 3, dt),
              ("dk", o + 4, dt), ("dv", o + 5, dt), ("dpse", o + 6, dt), ("w", o + 7, "float32")]
    rows = t["b"] * n1 * s1
    lines = src.HEADER + src.views(*names)
    lines += [f"    qw = {t['shared']} + block_idx * {t['per_block']}", f"    ow = qw + {qb * d}", f"    kw = ow + {qb * d}",
              f"    vw = kw + {kb * d}", f"    dkw = vw + {kb * d}", f"    dvw = dkw + {kb * d}",
              f"    sw = dvw + {kb * d}", f"    pw = sw + {qb * kb}", f"    tw = pw + {qb * kb}",
              f"    dd = {rows * d}", "    if block_idx == 0:", f"        dpse[0] = {src.store(dt, 'f32(0.0)')}"]
    lines += src.indent(src.split_lines(t["units"]))
    cond = _discard(t, "i", "j")
    head = [f"n = nk * {t['group']} + g", f"bn = bi * {n1} + n", f"qo = bi * {qsb} + n * {qsn}"]
    if masked:
        mb, mn = t["mask_strides"]
        head.append(f"mo = bi * {mb} + n * {mn}")
    # D_i = rowsum(dy * out) and dq's accumulator zeroed, for this unit's query heads
    prep = head + [f"for i in range({s1}):", f"    oo = qo + i * {qss}", "    acc = f32(0.0)",
                   f"    for e in range({d}):",
                   f"        acc += {src.load(dt, 'dy[oo + e]')} * {src.load(dt, 'att[oo + e]')}",
                   f"    w[dd + bn * {s1} + i] = acc", f"    for e in range({d}):",
                   f"        w[(bn * {s1} + i) * {d} + e] = f32(0.0)"]
    unit = ["bi = u // " + str(t["n2"]), f"nk = u % {t['n2']}", f"ko = bi * {ksb} + nk * {ksn}",
            f"for g in range({t['group']}):"] + src.indent(prep)
    # one query block against the key tile [j0, j0 + nj)
    block = [f"nq = min({s1} - i0, {qb})"] + _kv_range(t, "i0", "i0 + nq - 1")
    step = _copy_rows("qw", "q", dt, f"qo + i0 * {qss}", qss, "nq", d)
    step += _copy_rows("ow", "dy", dt, f"qo + i0 * {qss}", qss, "nq", d)
    step += [f"sgemm(0, 1, nq, nj, {d}, w, qw, {d}, w, kw, {d}, w, sw, {kb})"]
    prow = ["i = i0 + r", f"st = (bn * {s1} + i) * {FA_STAT_WIDTH}", "m = smax[st]", "rl = fdiv(f32(1.0), ssum[st])",
            f"so = sw + r * {kb}", "for c in range(nj):", "    j = j0 + c", f"    s = w[so + c] * f32({t['scale']!r})"]
    if cond is not None:
        prow += [f"    if {cond}:", f"        s = f32({FA_MASKED_SCORE!r})"]
    prow += ["    w[so + c] = fexp(s - m) * rl"]
    step += ["for r in range(nq):"] + src.indent(prow)
    step += [f"sgemm(1, 0, nj, {d}, nq, w, sw, {kb}, w, ow, {d}, w, tw, {d})",
             f"for x in range(nj * {d}):", "    w[dvw + x] += w[tw + x]",
             f"sgemm(0, 1, nq, nj, {d}, w, ow, {d}, w, vw, {d}, w, pw, {kb})"]
    dsrow = ["i = i0 + r", f"di = w[dd + bn * {s1} + i]", f"so = sw + r * {kb}", f"po = pw + r * {kb}",
             "for c in range(nj):", "    j = j0 + c",
             f"    ds = w[so + c] * (w[po + c] - di) * f32({t['scale']!r})"]
    if cond is not None:
        dsrow += [f"    if {cond}:", "        ds = f32(0.0)"]
    dsrow += ["    w[po + c] = ds"]
    step += ["for r in range(nq):"] + src.indent(dsrow)
    step += [f"sgemm(0, 0, nq, {d}, nj, w, pw, {kb}, w, kw, {d}, w, tw, {d})",
             f"qa = (bn * {s1} + i0) * {d}", f"for x in range(nq * {d}):", "    w[qa + x] += w[tw + x]",
             f"sgemm(1, 0, nj, {d}, nq, w, pw, {kb}, w, qw, {d}, w, tw, {d})",
             f"for x in range(nj * {d}):", "    w[dkw + x] += w[tw + x]"]
    block += ["if j0 + nj > jlo and j0 < jhi:"] + src.indent(step)
    tile = [f"nj = min({s2} - j0, {kb})"]
    tile += _copy_rows("kw", "k", dt, f"ko + j0 * {kss}", kss, "nj", d)
    tile += _copy_rows("vw", "v", dt, f"ko + j0 * {kss}", kss, "nj", d)
    tile += [f"for x in range(nj * {d}):", "    w[dkw + x] = f32(0.0)", "    w[dvw + x] = f32(0.0)"]
    tile += [f"for g in range({t['group']}):"] + src.indent(head + ["i0 = 0", f"while i0 < {s1}:"] +
                                                             src.indent(block + [f"i0 += {qb}"]))
    tile += ["for r in range(nj):", f"    oo = ko + (j0 + r) * {kss}", f"    for e in range({d}):",
             f"        dk[oo + e] = {src.store(dt, f'w[dkw + r * {d} + e]')}",
             f"        dv[oo + e] = {src.store(dt, f'w[dvw + r * {d} + e]')}", f"j0 += {kb}"]
    unit += ["j0 = 0", f"while j0 < {s2}:"] + src.indent(tile)
    store = head + [f"for i in range({s1}):", f"    oo = qo + i * {qss}", f"    for e in range({d}):",
                    f"        dq[oo + e] = {src.store(dt, f'w[(bn * {s1} + i) * {d} + e]')}"]
    unit += [f"for g in range({t['group']}):"] + src.indent(store)
    lines += ["    for u in range(lo, hi):"] + src.indent(unit, 2)
    return src.finish(lines)


# -------------------------------------------------------------------------------------------- grad

def grad_fa(b: GradBuilder, c: GradCall) -> tuple[int | None, ...]:
    """FlashAttentionScore's backward is FlashAttentionScoreGrad on the saved statistics and output
    (the scores are recomputed, never kept); the mask gets no gradient, nor do the statistics."""
    dout = c.douts[3]
    extra = len(c.inputs) - 3
    if dout is None:
        return (None,) * len(c.inputs)
    smax, ssum, _, out = c.outputs
    q, k, v = c.inputs[:3]
    dq, dk, dv, _ = b.ops("FlashAttentionScoreGrad", q, k, v, dout, *c.inputs[3:], smax, ssum, out,
                          **dict(c.sig.attrs))
    return (dq, dk, dv) + (None,) * extra


OPS: tuple[OpDef, ...] = (
    OpDef("FlashAttentionScore", "flash_attention_score", infer_fa, plan_fa, emit_fa, grad=grad_fa,
          frontend=Exposure(("FlashAttentionScore",), ("flash_attention_score",))),
    OpDef("FlashAttentionScoreGrad", "flash_attention_score_grad", infer_fa_grad, plan_fa_grad, emit_fa_grad),
)
