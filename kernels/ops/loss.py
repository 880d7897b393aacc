"""Softmax cross-entropy losses: SparseSoftmaxCrossEntropyWithLogits and SoftmaxCrossEntropyWithLogits.

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
"""
from __future__ import annotations

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOAT, check_arity, check_dtype, check_rank, fail, same_dtype
from .norm import row_blocks

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
    return Plan(row_blocks(x.shape[0], x.size), cost)


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    logits, labels = sig.inputs
    dtype = logits.dtype
    n, c = logits.shape
    x = src.load(dtype, "x[base + j]")
    body = [f"base = u * {c}", "m = f32(-np.inf)",
            f"for j in range({c}):", f"    v = {x}", "    m = v if (v > m or v != v) else m",
            "s = f64(0.0)", f"for j in range({c}):", f"    s += math.exp({x} - m)",
            "ls = math.log(s)", "s32 = f32(s)"]
    if sig.op == "SparseSoftmaxCrossEntropyWithLogits":
        body += ["t = i64(lab[u])",
                 f"if t >= 0 and t < {c}:",
                 "    loss[u] = " + src.store(dtype, f"(f64(m) - f64({src.load(dtype, 'x[base + t]')})) + ls"),
                 f"    for j in range({c}):",
                 "        p = fdiv(math.exp(" + x + " - m), s32)",
                 "        bp[base + j] = " + src.store(dtype, "p - f32(1.0) if j == t else p"),
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
# d logits = backprop * dloss[:, None]; the dense op's labels get -log_softmax(logits) * dloss[:, None].

def _per_row(b: GradBuilder, c: GradCall) -> int:
    """dloss as an (N, 1) column, to broadcast over the classes."""
    return b.op("Reshape", c.douts[0], shape=(c.sig.inputs[0].shape[0], 1))


def _g_sparse(b: GradBuilder, c: GradCall) -> tuple[int | None, None]:
    if c.douts[0] is None:
        return None, None
    return b.op("Mul", c.outputs[1], _per_row(b, c)), None


def _g_dense(b: GradBuilder, c: GradCall) -> tuple[int | None, int | None]:
    if c.douts[0] is None:
        return None, None
    dl = _per_row(b, c)
    dlogits = b.op("Mul", c.outputs[1], dl) if c.wants[0] else None
    dlabels = b.op("Mul", b.op("Neg", b.op("LogSoftmax", c.inputs[0], axis=-1)), dl) if c.wants[1] else None
    return dlogits, dlabels


OPS: tuple[OpDef, ...] = (
    OpDef("SparseSoftmaxCrossEntropyWithLogits", "sparse_softmax_cross_entropy_with_logits", infer_sparse, plan,
          emit, grad=_g_sparse),
    OpDef("SoftmaxCrossEntropyWithLogits", "softmax_cross_entropy_with_logits", infer_dense, plan, emit,
          grad=_g_dense),
)
