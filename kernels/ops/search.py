"""Search and integer loops: SearchSorted (where each value would be inserted into a sorted sequence,
the first such place or, ``right``, the last), PopulationCount (the set bits of each integer) and
Gcd/Lcm (Euclid's algorithm per element pair).

SearchSorted serves MindSpore's SearchSorted, LowerBound and UpperBound, ``searchsorted`` and
``bucketize``: the sequence is one sorted row (1-D, shared by every value) or one row per leading index
of the values (its leading dims equal theirs). Blocks split the flat values; each value is a binary
search of its row: O(log n) compares in float64 registers (exact for every float type and for integers
up to 2^53), so the result never depends on the block count. The index is stored as ``out_type``
(int32 or int64, as MindSpore's ``dtype``/``out_int32``/``out_type`` ask).

PopulationCount counts the bits of each element's own width (an int8 -1 has 8), as uint8; it loads the
element as int64 and masks it to that width, then clears the lowest set bit until none is left.

Gcd and Lcm are dynamic-shape kernels (the element count is tiling data: one kernel per op and dtype).
PopulationCount and SearchSorted stay specialised: PopulationCount is the suite's kernel of that kind
(tests/test_binary.py, test_hal_binary.py, test_replay.py and test_cache_faults.py load it by path, which
the HAL refuses for a dynamic-shape kernel).

None carries a gradient: their outputs are integers.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, OpDef, Plan
from ascendemu.kernels.signature import ITEMSIZE, OpSignature, TensorDesc

from . import src
from .common import INDEX, INTS, NUMBER, check_arity, check_bool, check_dtype, fail, same_dtype
from .elementwise import no_grad

# ------------------------------------------------------------------------------------- SearchSorted


def _out_type(sig: OpSignature) -> str:
    out = sig.attr("out_type", "int64")
    if out not in INDEX:
        raise fail(sig, f"attr out_type={out!r} must be one of {INDEX}")
    return out


def infer_search(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("sorted_sequence", "values"))
    same_dtype(sig, NUMBER)
    seq, values = sig.inputs[0].shape, sig.inputs[1].shape
    check_bool(sig, "right")
    if not seq:
        raise fail(sig, "input 0 (sorted_sequence) must have rank >= 1, got a scalar")
    if len(seq) > 1 and seq[:-1] != values[:-1]:
        raise fail(sig, f"input 0 (sorted_sequence) {seq} and input 1 (values) {values} must have the same "
                        "leading dims (or the sequence must be 1-D)")
    return (TensorDesc(values, _out_type(sig)),)


def plan_search(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """log2(n) + 1 compares per value; the values read and the indices written once, about log2(n)
    sequence elements read per value."""
    seq, values = sig.inputs
    n = seq.shape[-1]
    steps = max(1, math.ceil(math.log2(n + 1)))
    block_dim = max(1, min(src.MAX_BLOCKS, values.size // 1024))
    cost = KernelCost(vector_ops=values.size * steps,
                      bytes=values.nbytes + outputs[0].nbytes + values.size * steps * ITEMSIZE[seq.dtype],
                      dtype=values.dtype)
    return Plan(block_dim, cost)


def emit_search(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Per value: the first position whose element is >= it (< ... > for ``right``), in [0, n]."""
    seq, values = sig.inputs
    n = seq.shape[-1]
    m = values.shape[-1] if values.shape else 1
    goes_left = "s >= v" if not sig.attr("right", False) else "s > v"
    row = f"(u // {m}) * {n}" if len(seq.shape) > 1 and m else "0"
    out = outputs[0].dtype
    body = [f"v = f64({src.load(values.dtype, 'x[u]')})",
            f"base = {row}", "lo_ = 0", f"hi_ = {n}",
            "while lo_ < hi_:",
            "    mid = (lo_ + hi_) // 2",
            f"    s = f64({src.load(seq.dtype, 'q[base + mid]')})",
            f"    if {goes_left}:",
            "        hi_ = mid",
            "    else:",
            "        lo_ = mid + 1",
            f"y[u] = np.{out}(lo_)"]
    lines = src.HEADER + src.views(("q", 0, seq.dtype), ("x", 1, values.dtype), ("y", 2, out))
    lines += src.indent(src.split_lines(str(values.size)))
    return src.finish(lines + ["    for u in range(lo, hi):"] + src.indent(body, 2))


# --------------------------------------------------------------------------------- PopulationCount

def infer_popcount(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("input_x",))
    check_dtype(sig, 0, INTS, "input_x")
    return (TensorDesc(sig.inputs[0].shape, "uint8"),)


def plan_popcount(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """At most one step per bit of the element's width."""
    x = sig.inputs[0]
    cost = KernelCost(vector_ops=x.size * ITEMSIZE[x.dtype] * 8, bytes=x.nbytes + outputs[0].nbytes, dtype=x.dtype)
    return Plan(src.elementwise_blocks(x.size), cost)


def emit_popcount(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    x = sig.inputs[0]
    bits = ITEMSIZE[x.dtype] * 8
    mask = "" if bits == 64 else f" & i64({(1 << bits) - 1})"
    body = [f"v = {src.load(x.dtype, 'x[u]')}{mask}", "c = 0",
            "while v != 0:",
            "    v &= v - 1",
            "    c += 1",
            "y[u] = np.uint8(c)"]
    lines = src.HEADER + src.views(("x", 0, x.dtype), ("y", 1, "uint8")) + src.indent(src.split_lines(str(x.size)))
    return src.finish(lines + ["    for u in range(lo, hi):"] + src.indent(body, 2))


# -------------------------------------------------------------------------------------- Gcd and Lcm
# MindSpore's dtypes for Gcd and Lcm
GCD_DTYPES = ("int16", "int32", "int64")


def infer_gcd(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Two operands of one integer dtype and one shape (the front end broadcasts them first)."""
    check_arity(sig, 2, ("x1", "x2"))
    dtype = same_dtype(sig, GCD_DTYPES)
    if sig.inputs[0].shape != sig.inputs[1].shape:
        raise fail(sig, f"inputs must have one shape (broadcast first), got {sig.inputs[0].shape} and "
                        f"{sig.inputs[1].shape}")
    return (TensorDesc(sig.inputs[0].shape, dtype),)


def plan_gcd(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """Euclid's algorithm: at most about 1.44 log2 of the width's range steps per element (64 priced)."""
    x = sig.inputs[0]
    cost = KernelCost(vector_ops=x.size * 64, bytes=2 * x.nbytes + outputs[0].nbytes, dtype=x.dtype)
    return Plan(src.elementwise_blocks(x.size), cost, tiling={"n": x.size})


def emit_gcd(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """gcd(|a|, |b|) by Euclid (gcd(0, 0) = 0); lcm = |a / gcd * b|, 0 when either is 0 (wrapped to the
    width on store, as the integer ops are). The element count is tiling data."""
    dtype = sig.inputs[0].dtype
    body = [f"a = {src.load(dtype, 'x[u]')}", f"b = {src.load(dtype, 'z[u]')}",
            "g = abs(a)", "r = abs(b)",
            "while r != 0:",
            "    t = g % r", "    g = r", "    r = t"]
    body += [f"y[u] = np.{dtype}(g)"] if sig.op == "Gcd" else [f"y[u] = np.{dtype}(0 if g == 0 else abs((a // g) * b))"]
    lines = src.HEADER + src.views(("x", 0, dtype), ("z", 1, dtype), ("y", 2, dtype))
    lines += src.indent(src.split_lines(plan.tiling["n"]))
    return src.finish(lines + ["    for u in range(lo, hi):"] + src.indent(body, 2))


# The front ends are hand-written (frontend/ops/operations/array_ops.py and math_ops.py, where MindSpore
# defines SearchSorted/LowerBound/UpperBound/Bucketize, PopulationCount and Gcd/Lcm)
OPS: tuple[OpDef, ...] = (
    OpDef("SearchSorted", "search_sorted", infer_search, plan_search, emit_search, grad=no_grad),
    OpDef("PopulationCount", "population_count", infer_popcount, plan_popcount, emit_popcount, grad=no_grad),
    OpDef("Gcd", "gcd", infer_gcd, plan_gcd, emit_gcd, grad=no_grad, runtime_tiling=("n",)),
    OpDef("Lcm", "lcm", infer_gcd, plan_gcd, emit_gcd, grad=no_grad, runtime_tiling=("n",)),
)
