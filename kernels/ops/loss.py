"""Losses as kernels: the softmax cross-entropies (SparseSoftmaxCrossEntropyWithLogits,
SoftmaxCrossEntropyWithLogits) and CTC (CTCLossV2 and its backward, CTCLossV2Grad; see their section).

Both take logits (N, C) and return the per-sample loss (N,) and ``backprop`` (N, C), the gradient of
each sample's loss with respect to its logits (softmax - labels), as MindSpore's
SoftmaxCrossEntropyWithLogits primitive does. (MindSpore's SparseSoftmaxCrossEntropyWithLogits
primitive returns the batch mean instead; its front end reduces this op's per-sample loss.)

Rows (samples) split over blocks. A row is computed stably like the chip's softmax: the maximum m is
subtracted, exp(x - m) is a float32 value, s = sum(exp(x - m)) accumulates in float64, and the loss
is sum_j labels_j * ((m - x_j) + log s), so a confident prediction keeps its small loss exact.

Sparse labels outside [0, C) give a zero loss and a zero backprop row. MindSpore does not document
that case (its CPU kernel raises); a kernel cannot raise at run time, and zeros are what the library's
Gather gives for an out-of-range index, and what an ignored sample (ignore_index) needs.

The cross-entropies are dynamic-shape kernels: N and C are read at run time (``XENT_TILING``).
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOAT, check_arity, check_dtype, check_rank, fail, same_dtype
from .norm import row_blocks

# What the softmax cross-entropy kernels read at run time (dynamic-shape kernels): samples and classes.
XENT_TILING = ("n", "c")

# ------------------------------------------------------------------------------------------- infer


def _logits(sig: OpSignature) -> tuple[int, int]:
    """(N, C) of input 0; at least one class."""
    n, c = check_rank(sig, 0, 2, "logits")
    if c == 0:
        raise fail(sig, f"input 0 (logits) has shape {(n, c)}: it needs at least one class")
    return n, c


def infer_sparse(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("logits", "labels"))
    dtype = check_dtype(sig, 0, FLOAT, "logits")
    check_dtype(sig, 1, ("int32",), "labels")
    n, c = _logits(sig)
    if sig.inputs[1].shape != (n,):
        raise fail(sig, f"input 1 (labels) must have shape ({n},), one class index per row of logits "
                        f"{(n, c)}, got {sig.inputs[1].shape}")
    return TensorDesc((n,), dtype), TensorDesc((n, c), dtype)


def infer_dense(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("logits", "labels"))
    dtype = same_dtype(sig, FLOAT)
    n, c = _logits(sig)
    if sig.inputs[1].shape != (n, c):
        raise fail(sig, f"input 1 (labels) must have logits' shape {(n, c)}, got {sig.inputs[1].shape}")
    return TensorDesc((n,), dtype), TensorDesc((n, c), dtype)


# -------------------------------------------------------------------------------------- plan, emit

def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    x = sig.inputs[0]
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    cost = KernelCost(vector_ops=6 * x.size, bytes=moved, dtype=x.dtype)
    n, c = x.shape
    return Plan(row_blocks(n, x.size), cost, tiling=dict(n=n, c=c))


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    logits, labels = sig.inputs
    dtype = logits.dtype
    n, c = plan.tiling["n"], plan.tiling["c"]
    x = src.load(dtype, "x[base + j]")
    body = [f"base = u * {c}", "m = f32(-np.inf)",
            f"for j in range({c}):", f"    v = {x}", "    m = nanmax(m, v)",
            "s = f64(0.0)", f"for j in range({c}):", f"    s += math.exp({x} - m)",
            "ls = math.log(s)", "s32 = f32(s)"]
    if sig.op == "SparseSoftmaxCrossEntropyWithLogits":
        body += ["t = i64(lab[u])",
                 f"if t >= 0 and t < {c}:",
                 "    loss[u] = " + src.store(dtype, f"(f64(m) - f64({src.load(dtype, 'x[base + t]')})) + ls"),
                 f"    for j in range({c}):",
                 "        p = fdiv(math.exp(" + x + " - m), s32)",
                 "        bp[base + j] = " + src.store(dtype, "pick(j == t, p - f32(1.0), p)"),
                 "else:",
                 "    loss[u] = " + src.store(dtype, "f32(0.0)"),
                 f"    for j in range({c}):",
                 "        bp[base + j] = " + src.store(dtype, "f32(0.0)")]
    else:
        y = src.load(dtype, "lab[base + j]")
        body += ["acc = f64(0.0)", f"for j in range({c}):", f"    v = {x}", f"    t = {y}",
                 "    acc += f64(t) * ((f64(m) - f64(v)) + ls)",
                 "    bp[base + j] = " + src.store(dtype, "fdiv(math.exp(v - m), s32) - t"),
                 "loss[u] = " + src.store(dtype, "acc")]
    lines = src.HEADER + src.views(("x", 0, dtype), ("lab", 1, labels.dtype), ("loss", 2, dtype), ("bp", 3, dtype))
    lines += src.indent(src.split_lines(str(n)))
    lines += ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


# ------------------------------------------------------------------------------------ backward rules
# Only the loss's gradient flows (as in MindSpore: backprop is not differentiated again):
# d logits = backprop * dloss[:, None]; labels get none (MindSpore's bprop returns zeros_like(labels)).

def _per_row(b: GradBuilder, c: GradCall) -> int:
    """dloss as an (N, 1) column, to broadcast over the classes."""
    return b.op("Reshape", c.douts[0], shape=(c.sig.inputs[0].shape[0], 1))


def _g_xent(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    """Both cross-entropies' rule: logits get backprop * dloss, labels nothing."""
    if c.douts[0] is None or not c.wants[0]:
        return None, None
    return b.op("Mul", c.outputs[1], _per_row(b, c)), None


# ------------------------------------------------------------------------------- CTCLossV2 (+ Grad)
# Connectionist temporal classification (MindSpore's CTCLossV2, PyTorch's ctc_loss): log_probs (T, N, C),
# padded targets (N, S) int32, input_lengths and target_lengths (N,) int32; outputs the per-sample negative
# log likelihood (N,) and log_alpha (N, T, 2S + 1), the forward variables over the blank-extended label
# sequence l' (blank, l1, blank, l2, ..., blank) in log space: -inf where unreachable and past a sample's
# input length. Blocks own samples. The recursions read log_alpha (stored in the input's float type, as
# MindSpore's kernel stores it) and add in float64; beta lives in a float64 workspace row per block.
# The backward is MindSpore's (and PyTorch's): d log_probs = (exp(lp) - exp(lcab + nll - lp)) * dloss with
# lcab the log of sum over s with l'_s = c of alpha * beta, i.e. the gradient for log_probs that are a
# log_softmax (it is not the partial derivative for arbitrary log_probs: a class never aligned keeps
# exp(lp)); zero past a sample's input length, and for a sample whose loss zero_infinity set to 0.

CTC_FLOATS = ("float32", "float64")


def _ctc_sizes(sig: OpSignature, first: int) -> tuple[int, int, int, int]:
    """(T, N, C, S) of the CTC operands starting at input ``first`` (log_probs, targets, lengths, lengths)."""
    t, n, c = check_rank(sig, first, 3, "log_probs")
    check_dtype(sig, first, CTC_FLOATS, "log_probs")
    rows, s = check_rank(sig, first + 1, 2, "targets")
    for k, name in ((1, "targets"), (2, "input_lengths"), (3, "target_lengths")):
        check_dtype(sig, first + k, ("int32",), name)
    if rows != n or sig.inputs[first + 2].shape != (n,) or sig.inputs[first + 3].shape != (n,):
        raise fail(sig, f"targets {sig.inputs[first + 1].shape} and the lengths {sig.inputs[first + 2].shape}, "
                        f"{sig.inputs[first + 3].shape} must have log_probs' batch size {n}")
    blank = sig.attr("blank", 0)
    if isinstance(blank, bool) or not isinstance(blank, int) or not 0 <= blank < c:
        raise fail(sig, f"attr blank={blank!r} must be a class index in [0, {c})")
    return t, n, c, s


def infer_ctc(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 4, ("log_probs", "targets", "input_lengths", "target_lengths"))
    t, n, c, s = _ctc_sizes(sig, 0)
    dtype = sig.inputs[0].dtype
    return TensorDesc((n,), dtype), TensorDesc((n, t, 2 * s + 1), dtype)


def infer_ctc_grad(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 7, ("dloss", "log_probs", "targets", "input_lengths", "target_lengths", "nll", "log_alpha"))
    t, n, c, s = _ctc_sizes(sig, 1)
    dtype = sig.inputs[1].dtype
    for k, shape in ((0, (n,)), (5, (n,)), (6, (n, t, 2 * s + 1))):
        if sig.inputs[k].shape != shape or sig.inputs[k].dtype != dtype:
            raise fail(sig, f"input {k} must be {dtype} of shape {shape}, got {sig.inputs[k].dtype} "
                            f"{sig.inputs[k].shape}")
    return (TensorDesc((t, n, c), dtype),)


def plan_ctc(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    grad = sig.op == "CTCLossV2Grad"
    t, n, c = sig.inputs[1 if grad else 0].shape
    width = 2 * sig.inputs[2 if grad else 1].shape[1] + 1
    block_dim = max(1, min(src.MAX_BLOCKS, n))
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    cost = KernelCost(vector_ops=(3 if grad else 1) * 8 * n * t * width + n * t * c, bytes=moved,
                      dtype=sig.inputs[1 if grad else 0].dtype)
    workspace = (block_dim * (t * width + c) * 8,) if grad else ()
    return Plan(block_dim, cost, workspace)


def merge_repeated(sig: OpSignature) -> bool:
    """Attr ``merge_repeated`` (default True, standard CTC): False is TensorFlow's (and MindSpore's
    CTCLoss) ``ctc_merge_repeated=False``: a label state has no self-transition, and two equal labels may
    follow each other without a blank between (a repeat is two labels, never merged)."""
    merge = sig.attr("merge_repeated", True)
    if not isinstance(merge, bool):
        raise fail(sig, f"attr merge_repeated={merge!r} must be a bool")
    return merge


def _ctc_prologue(t: int, s: int) -> list[str]:
    """Per sample u: its input length tn and extended label length ln, clipped to the padded sizes."""
    return [f"tn = min(max(i64(il[u]), 0), {t})", f"sn = min(max(i64(tl[u]), 0), {s})", "ln = 2 * sn + 1"]


def _lse3(a: str, b: str, c: str) -> list[str]:
    """Lines setting ``r`` = log(exp(a) + exp(b) + exp(c)) in float64, -inf when all are -inf."""
    return [f"m = max({a}, max({b}, {c}))",
            "if m == -np.inf:", "    r = m",
            "else:", f"    r = m + math.log(math.exp({a} - m) + math.exp({b} - m) + math.exp({c} - m))"]


def emit_ctc(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """log_alpha by the forward recursion over t, then nll = -log(alpha(T-1, L'-1) + alpha(T-1, L'-2))."""
    lpd = sig.inputs[0]
    dtype = lpd.dtype
    t, n, c = lpd.shape
    s = sig.inputs[1].shape[1]
    width, blank = 2 * s + 1, sig.attr("blank", 0)
    zero_inf, merge = bool(sig.attr("zero_infinity", False)), merge_repeated(sig)
    lp = lambda tt, k: src.load(dtype, f"lp[(({tt}) * {n} + u) * {c} + ({k})]")          # noqa: E731
    la = lambda tt, k: f"f64({src.load(dtype, f'la[a0 + ({tt}) * {width} + ({k})]')})"  # noqa: E731
    label = f"({blank} if k % 2 == 0 else i64(tg[u * {s} + k // 2]))"
    body = _ctc_prologue(t, s) + [
        f"a0 = u * {t * width}",
        f"for k in range({t * width}):", "    la[a0 + k] = " + src.store(dtype, "-np.inf"),
        "if tn > 0:",
        f"    la[a0] = {src.store(dtype, lp(0, blank))}",
        "    if ln > 1:",
        f"        la[a0 + 1] = {src.store(dtype, lp(0, f'i64(tg[u * {s}])'))}",
        "for tt in range(1, tn):",
        "    for k in range(ln):",
        f"        lk = {label}",
        f"        a = {la('tt - 1', 'k')}" + ("" if merge else " if k % 2 == 0 else -np.inf"),
        f"        b = {la('tt - 1', 'k - 1')} if k > 0 else -np.inf",
        "        cc = -np.inf",
        "        if k > 1 and k % 2 == 1" + (f" and lk != i64(tg[u * {s} + k // 2 - 1])" if merge else "") + ":",
        f"            cc = {la('tt - 1', 'k - 2')}"]
    body += src.indent(_lse3("a", "b", "cc"), 2) + [
        f"        la[a0 + tt * {width} + k] = " + src.store(dtype, f"r + f64({lp('tt', 'lk')})"),
        "nll = np.inf",
        "if tn > 0:",
        f"    e1 = {la('tn - 1', 'ln - 1')}",
        f"    e2 = {la('tn - 1', 'ln - 2')} if ln > 1 else -np.inf"]
    body += src.indent(_lse3("e1", "e2", "-np.inf"), 1) + ["    nll = -r"]
    if zero_inf:
        body += ["if nll == np.inf:", "    nll = 0.0"]
    body += ["loss[u] = " + src.store(dtype, "nll")]
    lines = src.HEADER + src.views(("lp", 0, dtype), ("tg", 1, "int32"), ("il", 2, "int32"), ("tl", 3, "int32"),
                                   ("loss", 4, dtype), ("la", 5, dtype))
    lines += src.indent(src.split_lines(str(n))) + ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def emit_ctc_grad(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """beta by the backward recursion (the block's workspace row), then per step the log of
    sum alpha * beta per class and the gradient formula above."""
    lpd = sig.inputs[1]
    dtype = lpd.dtype
    t, n, c = lpd.shape
    s = sig.inputs[2].shape[1]
    width, blank = 2 * s + 1, sig.attr("blank", 0)
    zero_inf, merge = bool(sig.attr("zero_infinity", False)), merge_repeated(sig)
    lp = lambda tt, k: f"f64({src.load(dtype, f'lp[(({tt}) * {n} + u) * {c} + ({k})]')})"  # noqa: E731
    la = lambda tt, k: f"f64({src.load(dtype, f'la[a0 + ({tt}) * {width} + ({k})]')})"  # noqa: E731
    be = lambda tt, k: f"be[w + ({tt}) * {width} + ({k})]"                               # noqa: E731
    label = lambda k: f"({blank} if ({k}) % 2 == 0 else i64(tg[u * {s} + ({k}) // 2]))"  # noqa: E731
    body = _ctc_prologue(t, s) + [
        f"a0 = u * {t * width}",
        f"nll = f64({src.load(dtype, 'nl[u]')})",
        f"go = f64({src.load(dtype, 'dl[u]')})",
        f"for tt in range({t}):",
        f"    for j in range({c}):",
        f"        gx[(tt * {n} + u) * {c} + j] = " + src.store(dtype, "0.0"),
        "skip = tn == 0"]
    if zero_inf:
        # a loss zero_infinity replaced: alpha at the end is -inf, so its gradient is zero
        body += [f"e1 = {la('tn - 1', 'ln - 1')} if tn > 0 else -np.inf",
                 f"e2 = {la('tn - 1', 'ln - 2')} if tn > 0 and ln > 1 else -np.inf",
                 "if e1 == -np.inf and e2 == -np.inf:", "    skip = True"]
    body += [
        "if not skip:",
        f"    for k in range({t * width}):", f"        be[w + k] = -np.inf",
        f"    {be('tn - 1', 'ln - 1')} = {lp('tn - 1', blank)}",
        "    if ln > 1:",
        f"        {be('tn - 1', 'ln - 2')} = {lp('tn - 1', label('ln - 2'))}",
        "    for tt in range(tn - 2, -1, -1):",
        "        for k in range(ln):",
        f"            lk = {label('k')}",
        f"            a = {be('tt + 1', 'k')}" + ("" if merge else " if k % 2 == 0 else -np.inf"),
        f"            b = {be('tt + 1', 'k + 1')} if k + 1 < ln else -np.inf",
        "            cc = -np.inf",
        "            if k + 2 < ln and k % 2 == 1" + (f" and lk != {label('k + 2')}" if merge else "") + ":",
        f"                cc = {be('tt + 1', 'k + 2')}"]
    body += src.indent(_lse3("a", "b", "cc"), 3) + [
        f"            {be('tt', 'k')} = r + {lp('tt', 'lk')}",
        "    for tt in range(tn):",
        f"        for j in range({c}):", f"            be[v + j] = -np.inf",
        "        for k in range(ln):",
        f"            lk = {label('k')}",
        f"            x = {la('tt', 'k')} + {be('tt', 'k')}",
        "            y = be[v + lk]",
        "            if x != -np.inf:",
        "                m = max(x, y)",
        "                be[v + lk] = m + math.log(math.exp(x - m) + math.exp(y - m))",
        f"        for j in range({c}):",
        f"            q = {lp('tt', 'j')}",
        "            g = (math.exp(q) - math.exp(be[v + j] + nll - q)) * go",
        f"            gx[(tt * {n} + u) * {c} + j] = " + src.store(dtype, "g")]
    lines = src.HEADER + src.views(("dl", 0, dtype), ("lp", 1, dtype), ("tg", 2, "int32"), ("il", 3, "int32"),
                                   ("tl", 4, "int32"), ("nl", 5, dtype), ("la", 6, dtype), ("gx", 7, dtype),
                                   ("be", 8, "float64"))
    lines += [f"    w = block_idx * {t * width + c}", f"    v = w + {t * width}"]
    lines += src.indent(src.split_lines(str(n))) + ["    for u in range(lo, hi):"] + src.indent(body, 2)
    return src.finish(lines)


def _g_ctc(b: GradBuilder, c: GradCall) -> tuple[int | None, None, None, None]:
    """log_probs' gradient (CTCLossV2Grad); log_alpha's incoming gradient is not propagated (as in MindSpore)."""
    if c.douts[0] is None or not c.wants[0]:
        return None, None, None, None
    attrs = dict(c.sig.attrs)
    dx = b.op("CTCLossV2Grad", c.douts[0], *c.inputs, c.outputs[0], c.outputs[1], **attrs)
    return dx, None, None, None


OPS: tuple[OpDef, ...] = (
    OpDef("CTCLossV2", "ctc_loss_v2", infer_ctc, plan_ctc, emit_ctc, grad=_g_ctc,
          frontend=Exposure(("CTCLossV2", "CTCLoss"), ("ctc_loss",))),
    OpDef("CTCLossV2Grad", "ctc_loss_v2_grad", infer_ctc_grad, plan_ctc, emit_ctc_grad),
    OpDef("SparseSoftmaxCrossEntropyWithLogits", "sparse_softmax_cross_entropy_with_logits", infer_sparse, plan,
          emit, grad=_g_xent, runtime_tiling=XENT_TILING),
    OpDef("SoftmaxCrossEntropyWithLogits", "softmax_cross_entropy_with_logits", infer_dense, plan, emit,
          grad=_g_xent, runtime_tiling=XENT_TILING),
)
