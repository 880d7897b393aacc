"""Per-op sharding rules, one stanza per kind of op (like the op registry): given an op's strategy (or
the one MindSpore's semi-auto gives an op without one) and its inputs' global shapes, which layout each
input must have, which layouts the local op's outputs get, its local attributes, and the partial sums
its outputs hold (a MatMul whose reduction dimension is split, a reduction over a split dimension),
which the pass combines with an AllReduce right after the op, as MindSpore's forward communication does.

An op without a strategy gets MindSpore's semi-auto default, data parallel on the batch dimension
(``OpRule.default``). An op without a rule runs on the whole tensors (``Replicated``): every input
gathered, the outputs the same on every rank; correct for any op, at the price of memory and gathers.

A strategy of ``ms.Layout``s (``LayoutStrategy``) is planned as the tuple of its shard counts, then the
plan's device axes are renamed to the user's (``plan_op``); ``out_strategy`` is checked and applied by the
rule (``OpRule.with_out_strategy``: MatMul's ReduceScatter; other ops refuse it, as MindSpore's do).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ascendemu.kernels.registry import REGISTRY

from .layout import Layout, tensor_map_entry
from .redistribution import Emitter
from .strategy import LayoutStrategy, RepeatFirst, Strategy, StrategyError, with_repeat

__all__ = ["PartialSum", "ShardPlan", "OpRule", "ElementwiseRule", "MatMulRule", "SoftmaxRule", "ReduceRule",
           "ReshapeRule", "FollowRule", "TransposeRule",
           "FlashAttentionRule", "GatherRule", "GatherDRule", "BatchRule", "ParameterUpdateRule", "ReplicatedRule",
           "rule_for", "plan_op"]

Shape = tuple[int, ...]
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartialSum:
    """An output that holds partial results over device-matrix ``axes``: combined with AllReduce(``reduce_op``),
    then divided by ``mean`` (a mean over a split dimension); with ``scatter``, ReduceScatter along dimension 0
    instead (MatMul's ``out_strategy``: each rank keeps its block of the sum's rows)."""

    axes: tuple[int, ...]
    reduce_op: str = "sum"
    mean: int = 1
    scatter: bool = False


@dataclass
class ShardPlan:
    inputs: list[Layout]
    outputs: list[Layout]
    attrs: dict[str, Any]
    partial: dict[int, PartialSum] = field(default_factory=dict)     # output index -> its partial sums


def _right_axis(axis: int, axes: int) -> int:
    """Axis ``axis`` of a repeat-first device matrix of ``axes`` axes, in the repeat-last one."""
    return -1 if axis < 0 else axes - 1 if axis == 0 else axis - 1


def _repeat_right(lay: Layout) -> Layout:
    dev = lay.dev_matrix
    if not isinstance(dev, RepeatFirst) or dev[0] == 1:
        return lay                    # passed through (already MindSpore's), or no repeat: the same placement
    return Layout((*dev[1:], dev[0]), tuple(_right_axis(a, len(dev)) for a in lay.tensor_map))


def repeat_on_the_right(plan: ShardPlan) -> ShardPlan:
    """The plan with each repeat-first device matrix (``strategy.with_repeat``) as MindSpore's, the repeat
    axis last, and the partial sums' axes renumbered with it."""
    partial = {}
    for i, part in plan.partial.items():
        dev = plan.outputs[i].dev_matrix
        if isinstance(dev, RepeatFirst) and dev[0] > 1:
            part = PartialSum(tuple(_right_axis(a, len(dev)) for a in part.axes), part.reduce_op, part.mean)
        partial[i] = part
    return ShardPlan([_repeat_right(x) for x in plan.inputs], [_repeat_right(x) for x in plan.outputs],
                     plan.attrs, partial)


class OpRule:
    """How one kind of op is split. ``plan`` checks the strategy's shape and calls ``split``."""

    ops: ClassVar[tuple[str, ...]] = ()
    takes_strategy: ClassVar[bool] = True

    def plan(self, n: int, strategy: Strategy | None, shapes: list[Shape], out_shapes: list[Shape],
             attrs: dict[str, Any], current: list[Layout | None], op: str) -> ShardPlan:
        if strategy is None or not self.takes_strategy:
            strategy = self.default(n, shapes, attrs)
        elif len(strategy) != len(shapes) or any(len(s) != len(x) for s, x in zip(strategy, shapes)):
            raise StrategyError(f"For {op}, Invalid strategy {strategy}: it needs one tuple per input, each as long as "
                                f"the input's rank (the input shapes are {shapes})")
        else:
            for s, x in zip(strategy, shapes):
                if any(size % k for size, k in zip(x, s)):
                    raise StrategyError(f"For {op}, Invalid strategy {strategy}: the splits must divide the input "
                                        f"shapes {shapes}")
        return repeat_on_the_right(self.split(n, strategy, shapes, out_shapes, attrs, current, op))

    def default(self, n: int, shapes: list[Shape], attrs: dict[str, Any]) -> Strategy:
        """MindSpore's semi-auto strategy for an op without one: dimension 0 of each input of the
        highest rank split over every device (when it divides), nothing else split."""
        top = max((len(s) for s in shapes), default=0)
        return tuple(tuple((n if i == 0 and len(s) == top and s[0] % n == 0 else 1) for i in range(len(s)))
                     for s in shapes)

    def split(self, n: int, strategy: Strategy, shapes: list[Shape], out_shapes: list[Shape], attrs: dict[str, Any],
              current: list[Layout | None], op: str) -> ShardPlan:
        raise NotImplementedError

    def emit(self, out: Emitter, op: str, inputs: list[int], plan: ShardPlan, rank: int) -> tuple[int, ...]:
        """Record the local op (most rules: the op itself with the plan's attributes)."""
        return out.record(op, inputs, plan.attrs)

    def with_out_strategy(self, plan: ShardPlan, strategy: Strategy, out: Strategy, shapes: list[Shape],
                          out_shapes: list[Shape], attrs: dict[str, Any], op: str) -> ShardPlan:
        """``plan`` with the outputs ``shard(out_strategy=out)`` asks for; MindSpore sets it on MatMul only."""
        raise StrategyError(f"For {op}: It does not support to set output strategy now, please modify the shard set "
                            f"(out_strategy is supported on MatMul)")


class ElementwiseRule(OpRule):
    """Elementwise ops with broadcasting (shapes aligned on the right): a dimension of size 1 is never
    split, the others are split alike in every input; the outputs are split as the broadcast shape."""

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        rank = len(out_shapes[0])
        dims = [0] * rank
        for s, x in zip(strategy, shapes):
            off = rank - len(x)
            for j, (k, size) in enumerate(zip(s, x)):
                if size == 1 and k != 1:
                    raise StrategyError(f"For {op}, Invalid strategy {strategy}: a broadcast dimension (size 1) cannot "
                                        f"be split")
                if size == 1:
                    continue
                if dims[off + j] not in (0, k):
                    raise StrategyError(f"For {op}, Invalid strategy {strategy}: the inputs' strategies must be "
                                        f"equal in the dimensions that are not broadcast")
                dims[off + j] = k
        dims = [max(k, 1) for k in dims]
        dev = with_repeat(dims, n, op, strategy)
        ins = [Layout(dev, tuple(-1 if size == 1 else 1 + rank - len(x) + j for j, size in enumerate(x)))
               for x in shapes]
        outs = [Layout(dev, tuple(1 + rank - len(o) + j for j in range(len(o)))) for o in out_shapes]
        return ShardPlan(ins, outs, dict(attrs))


class SoftmaxRule(ElementwiseRule):
    """Softmax and LogSoftmax: elementwise, except that the softmax axis cannot be split."""

    ops = ("Softmax", "LogSoftmax")

    def default(self, n, shapes, attrs):
        axis = _axes(attrs.get("axis", -1), len(shapes[0]))
        batch = super().default(n, shapes, attrs)
        return tuple(tuple(k if i not in axis else 1 for i, k in enumerate(s)) for s in batch)

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        for d in _axes(attrs.get("axis", -1), len(shapes[0])):
            if strategy[0][d] != 1:
                raise StrategyError(f"For {op}, Invalid strategy {strategy}: the softmax axis {d} cannot be split")
        return super().split(n, strategy, shapes, out_shapes, attrs, current, op)


class MatMulRule(OpRule):
    """MatMul and BatchMatMul, their strategies given in the inputs' own orientation (``transpose_a``/
    ``transpose_b`` swap the last two dims). Device matrix ``(repeat, *batch, m, k, n)``; a split ``k``
    leaves partial sums, combined by an AllReduce over the ``k`` axis."""

    ops = ("MatMul", "BatchMatMul")

    def default(self, n, shapes, attrs):
        x, w = shapes
        batch = len(w) == len(x) > 2         # a BatchMatMul of two batches: both split alike
        split = n if x[0] % n == 0 and (not batch or w[0] % n == 0) else 1
        return (tuple(split if i == 0 else 1 for i in range(len(x))),
                tuple(split if i == 0 and batch else 1 for i in range(len(w))))

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        sx, sw = strategy
        x, w = shapes
        nb = len(x) - 2
        if len(w) not in (2, len(x)):
            raise StrategyError(f"For {op}, a weight of rank {len(w)} with an input of rank {len(x)} is not "
                                f"supported by the sharding pass yet; give both the same rank or a rank-2 weight")
        m_s, kx = (sx[-1], sx[-2]) if attrs.get("transpose_a") else (sx[-2], sx[-1])
        kw, n_s = (sw[-1], sw[-2]) if attrs.get("transpose_b") else (sw[-2], sw[-1])
        if kx != kw:
            raise StrategyError(f"For {op}, Invalid strategy {strategy}: the reduction dimension must be split the "
                                f"same way in both inputs, got {kx} and {kw}")
        if len(w) == len(x) and tuple(sw[:nb]) != tuple(sx[:nb]):
            raise StrategyError(f"For {op}, Invalid strategy {strategy}: the batch dimensions must be split alike")
        dev = with_repeat([*sx[:nb], m_s, kx, n_s], n, op, strategy)
        batch = tuple(range(1, 1 + nb))
        m, k, nn = 1 + nb, 2 + nb, 3 + nb
        xm = batch + ((k, m) if attrs.get("transpose_a") else (m, k))
        wm = (batch if len(w) == len(x) else ()) + ((nn, k) if attrs.get("transpose_b") else (k, nn))
        out = Layout(dev, batch + (m, nn))
        partial = {0: PartialSum((k,))} if kx > 1 else {}
        return ShardPlan([Layout(dev, xm), Layout(dev, wm)], [out], dict(attrs), partial)

    def with_out_strategy(self, plan, strategy, out, shapes, out_shapes, attrs, op):
        """MindSpore's ``MatMul::CheckOutputStrategy`` / ``CheckOutputLayout``: 2-d operands only; the output
        split as the plan's (the partial sums AllReduced) or, with the reduction dimension's split appended to
        dimension 0's, ReduceScattered over it (``forward_reduce_scatter``)."""
        if any(len(s) != 2 for s in shapes):
            raise StrategyError(f"For {op}: The dimension of mat a and mat b must be 2 if set output strategy")
        if len(out) != 1 or len(out[0] if not isinstance(out, LayoutStrategy) else out[0].tensor_map) != 2:
            raise StrategyError(f"For {op}: Invalid output strategy {out}: it needs one entry of rank 2")
        reduced = plan.outputs[0]
        part = plan.partial.get(0)
        k_axes = tuple(sorted(part.axes)) if part else ()
        scattered = reduced.with_dim(0, tensor_map_entry(reduced.axes(0) + k_axes))
        if isinstance(out, LayoutStrategy):
            if out[0].dev_matrix != reduced.dev_matrix:
                raise StrategyError(f"For {op}: the output layout's device_matrix {out[0].dev_matrix} must be the "
                                    f"inputs' {reduced.dev_matrix}")
            if _same_map(out[0], reduced):
                return plan
            if part is None or not _same_map(out[0], scattered):
                raise StrategyError(f"For {op}: The user configured output layout {out[0]} does not match the "
                                    f"inferred output layout {reduced} (using all_reduce) or {scattered} (using "
                                    f"reduce_scatter)")
        else:
            sx, sw = strategy
            a, b = (sx[1], sx[0]) if attrs.get("transpose_a") else (sx[0], sx[1])
            c = sw[0] if attrs.get("transpose_b") else sw[1]
            (o0, o1), = out
            if o1 != c:
                raise StrategyError(f"For {op}: The input strategy is {strategy}, the second dimension of output "
                                    f"strategy must be {c}, but got {o1}")
            if o0 == a:
                return plan
            if o0 != a * b:
                raise StrategyError(f"For {op}: The input strategy is {strategy}, the first dimension of output "
                                    f"strategy must be {a} or {a * b}, but got {o0}")
            if math.prod(reduced.dev_matrix) > a * b * c or out_shapes[0][0] % (a * b):     # a repeat axis
                _log.warning("For %s: forward reduce scatter needs no repeated calculation and the output's rows "
                             "divisible by %d; AllReduce instead, as MindSpore falls back", op, a * b)
                return plan
        return ShardPlan(plan.inputs, [scattered], plan.attrs, {0: replace(part, scatter=True)})


_REDUCE_OPS = {"ReduceSum": "sum", "ReduceMean": "sum", "ReduceMax": "max", "ReduceMin": "min"}


def _axes(axis: Any, rank: int) -> set[int]:
    if axis is None or axis == ():
        return set(range(rank))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return {a % rank for a in axes} if rank else set()


class ReduceRule(OpRule):
    """ReduceSum/Mean/Max/Min: the kept dimensions keep their splits; a reduced dimension that is split
    leaves partial results, combined by an AllReduce (a mean: a sum of the shards' means, divided)."""

    ops = tuple(_REDUCE_OPS)

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        (s,), (x,) = strategy, shapes
        dev = with_repeat(list(s), n, op, strategy)
        reduced = _axes(attrs.get("axis", ()), len(x))
        keep = attrs.get("keep_dims", False)
        out_map = tuple(-1 if d in reduced else 1 + d for d in range(len(x)) if keep or d not in reduced)
        split_axes = tuple(1 + d for d in sorted(reduced) if s[d] > 1)
        partial = {}
        if split_axes:
            mean = 1
            if op == "ReduceMean":
                for d in reduced:
                    mean *= s[d]
            partial[0] = PartialSum(split_axes, _REDUCE_OPS[op], mean)
        in_map = tuple(1 + d for d in range(len(x)))
        return ShardPlan([Layout(dev, in_map)], [Layout(dev, out_map)], dict(attrs), partial)


class ReshapeRule(OpRule):
    """Reshape and Flatten keep the splits the new shape can hold: the dimensions are matched in groups of
    equal products (``(B, S, H) -> (B * S, H)``: ``(B, S)`` with ``B * S``; ``H -> (N, D)``), and a group's
    split moves to the new shape when only its leading dimension (not counting size-1 ones) is split and
    the new leading dimension divides by it (a batch merged with the sequence, a hidden size split into
    heads: each rank reshapes its own block). Any other reshape runs on the whole tensor."""

    ops = ("Reshape", "Flatten")
    takes_strategy = False

    def default(self, n, shapes, attrs):
        return ((1,) * len(shapes[0]),)

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        (x,), (o,) = shapes, out_shapes
        cur = current[0]
        out_map = _reshaped_map(cur, x, o) if cur is not None else None
        if out_map is None:
            return ReplicatedRule().split(n, strategy, shapes, out_shapes, attrs, current, op)
        out = Layout(cur.dev_matrix, out_map)
        local = attrs
        if "shape" in attrs:
            local = {**attrs, "shape": out.local_shape(tuple(o), op)}
        return ShardPlan([cur], [out], local)


def _groups(x: Shape, o: Shape) -> list[tuple[list[int], list[int]]] | None:
    """The dimensions of ``x`` and ``o`` in consecutive groups of equal products, or None."""
    groups, i, j = [], 0, 0
    while i < len(x) or j < len(o):
        gi, gj, pi, pj = [], [], 1, 1
        while True:
            if i < len(x) and (not gi or pi < pj):
                pi *= x[i]
                gi.append(i)
                i += 1
            elif j < len(o) and (not gj or pj < pi):
                pj *= o[j]
                gj.append(j)
                j += 1
            else:
                break
        if pi != pj:
            return None
        groups.append((gi, gj))
    return groups


def _reshaped_map(cur: Layout, x: Shape, o: Shape) -> tuple[int, ...] | None:
    """The tensor map of ``o`` that keeps ``cur``'s splits of ``x`` (see ReshapeRule), or None."""
    groups = _groups(tuple(x), tuple(o))
    if groups is None:
        return None
    out = [-1] * len(o)
    for gi, gj in groups:
        split = [d for d in gi if cur.shards(d) > 1]
        if not split:
            continue
        lead_in = next((d for d in gi if x[d] > 1), None)
        lead_out = next((d for d in gj if o[d] > 1), None)
        if split != [lead_in] or lead_out is None or o[lead_out] % cur.shards(lead_in):
            return None
        out[lead_out] = cur.tensor_map[lead_in]
    return tuple(out)


class FollowRule(OpRule):
    """Ops that keep their input's layout whatever it is (Cast: MindSpore's parallel compiler gives a Cast
    its producer's layout rather than the batch default); a Parameter's Cast waits for its first real
    consumer (``ShardingPass``), as MindSpore slices a weight by the op that reads it through the Cast."""

    ops = ("Cast",)
    takes_strategy = False

    def plan(self, n, strategy, shapes, out_shapes, attrs, current, op):
        if strategy is not None:        # a Cast given a strategy (Cell.shard's inputs): split as it says
            return _ELEMENTWISE.plan(n, strategy, shapes, out_shapes, attrs, current, op)
        return super().plan(n, strategy, shapes, out_shapes, attrs, current, op)

    def default(self, n, shapes, attrs):
        return tuple((1,) * len(s) for s in shapes)

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        lay = current[0] or Layout.replicated(n, len(shapes[0]))
        return ShardPlan([lay], [lay], dict(attrs))


class TransposeRule(OpRule):
    """Transpose: the input split as its strategy says (or as it already is, without one); the output's
    dimensions carry the splits of the dimensions they come from."""

    ops = ("Transpose",)

    def plan(self, n, strategy, shapes, out_shapes, attrs, current, op):
        if strategy is None and current[0] is not None:
            return self._permuted(current[0], attrs)
        return super().plan(n, strategy, shapes, out_shapes, attrs, current, op)

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        (s,) = strategy
        dev = with_repeat(list(s), n, op, strategy)
        return self._permuted(Layout(dev, tuple(range(1, 1 + len(s)))), attrs)

    @staticmethod
    def _permuted(lay: Layout, attrs: dict[str, Any]) -> ShardPlan:
        perm = attrs["perm"]
        return ShardPlan([lay], [Layout(lay.dev_matrix, tuple(lay.tensor_map[p] for p in perm))], dict(attrs))


class FlashAttentionRule(OpRule):
    """FlashAttentionScore (BNSD or BSND): query, key and value split by batch (dp) and heads (mp) as the
    query's strategy says, the sequence and head size whole; the mask whole, or split by batch when it has
    one; the outputs follow: the statistics (B, N, S, 8) and attention_out as the query. The local op runs
    ``head_num / mp`` heads (with grouped-query attention the key/value heads divide by mp too). Its
    backward, FlashAttentionScoreGrad, is derived from the local op, so it runs the same heads."""

    ops = ("FlashAttentionScore",)

    def plan(self, n, strategy, shapes, out_shapes, attrs, current, op):
        layout = attrs.get("input_layout", "BNSD")
        if layout not in ("BNSD", "BSND"):
            return ReplicatedRule().split(n, strategy, shapes, out_shapes, attrs, current, op)
        head = 1 if layout == "BNSD" else 2
        q = shapes[0]
        if strategy is None:
            dp, mp = (n if q[0] % n == 0 else 1), 1
        else:
            dp, mp = strategy[0][0], strategy[0][head]
            if any(k != 1 for d, k in enumerate(strategy[0]) if d not in (0, head)):
                raise StrategyError(f"For {op}, Invalid strategy {strategy}: only the batch and head dimensions of "
                                    f"the query can be split (sequence parallel is not supported here)")
        for s in shapes[:3]:
            if s[0] % dp or s[head] % mp:
                raise StrategyError(f"For {op}, Invalid strategy {strategy}: the batch {s[0]} and heads {s[head]} of "
                                    f"query, key and value must divide by dp={dp} and mp={mp}")
        dev = with_repeat([dp, mp], n, op, strategy)
        qkv = Layout(dev, tuple(1 if d == 0 else 2 if d == head else -1 for d in range(4)))
        ins = [qkv] * 3
        for mask in shapes[3:]:
            split = len(mask) == 4 and mask[0] > 1
            ins.append(Layout(dev, tuple(1 if split and d == 0 else -1 for d in range(len(mask)))))
        stats = Layout(dev, (1, 2, -1, -1))
        outs = [stats, stats, Layout(dev, ()), qkv]
        return ShardPlan(ins, outs, {**attrs, "head_num": attrs["head_num"] // mp})


class GatherRule(OpRule):
    """Gather (an embedding lookup) along axis 0 of a rank-2 table, the indices split as given. Columns
    split (``((1, mp), (dp, 1))``): each rank looks up its columns. Rows split (vocabulary parallel,
    ``((mp, 1), (dp, 1))``): each rank looks up the indices in its rows, zeros for the others, and an
    AllReduce over the row axis sums the one hit (MindSpore's vocab-parallel embedding)."""

    ops = ("Gather",)

    def default(self, n, shapes, attrs):
        p, i = shapes
        return ((1,) * len(p), tuple(n if d == 0 and i[0] % n == 0 else 1 for d in range(len(i))))

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        (sp, si), (p, i) = strategy, shapes
        if attrs.get("axis", 0) not in (0, -len(p)) or len(p) != 2:
            return ReplicatedRule().split(n, strategy, shapes, out_shapes, attrs, current, op)
        if sp[0] != 1 and sp[1] != 1:
            raise StrategyError(f"For {op}, Invalid strategy {strategy}: split the table's rows or its columns, "
                                f"not both")
        dev = with_repeat([*si, sp[0], sp[1]], n, op, strategy)
        row, col = 1 + len(i), 2 + len(i)
        imap = tuple(range(1, 1 + len(i)))
        partial = {0: PartialSum((row,))} if sp[0] > 1 else {}
        return ShardPlan([Layout(dev, (row, col)), Layout(dev, imap)], [Layout(dev, imap + (col,))], dict(attrs),
                         partial)

    def emit(self, out, op, inputs, plan, rank):
        table, ids = inputs
        lay = plan.inputs[0]
        if lay.shards(0) == 1:
            return out.record(op, inputs, plan.attrs)
        rows = out.shape(table)[0]
        itype = out.dtype(ids)
        shifted = out.record("Sub", [ids, out.literal(lay.index(rank, 0) * rows, itype)], {})[0]
        inside = out.record("LogicalAnd", [out.record("GreaterEqual", [shifted, out.literal(0, itype)], {})[0],
                                           out.record("Less", [shifted, out.literal(rows, itype)], {})[0]], {})[0]
        safe = out.record("Mul", [shifted, out.record("Cast", [inside], {"dst_type": itype})[0]], {})[0]
        found = out.record(op, [table, safe], plan.attrs)[0]
        keep = out.record("Cast", [inside], {"dst_type": out.dtype(table)})[0]
        keep = out.record("ExpandDims", [keep], {"axis": -1})[0]
        return (out.record("Mul", [found, keep], {})[0],)


class GatherDRule(OpRule):
    """GatherD (``out[i][j] = x[i][index[i][j]]`` along ``dim``): x and index split alike in every dimension
    but ``dim``, which stays whole (an index may point anywhere along it); the output is split as index
    (a cross entropy's label column picked from batch-split logits stays local)."""

    ops = ("GatherD",)

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        (sx, si), (x, _) = strategy, shapes
        dim = attrs["dim"] % len(x)
        if sx != si or sx[dim] != 1:
            raise StrategyError(f"For {op}, Invalid strategy {strategy}: x and index must be split alike and "
                                f"not along dim {dim}")
        dev = with_repeat(list(sx), n, op, strategy)
        lay = Layout(dev, tuple(1 + d for d in range(len(x))))
        return ShardPlan([lay, lay], [lay], dict(attrs))


class BatchRule(OpRule):
    """Ops split on the batch only (convolution, pooling, BiasAdd): dimension 0 of input 0 may be split,
    the weights and biases are whole on every rank, the outputs split as the batch."""

    ops = ("Conv2D", "MaxPool", "AvgPool", "BiasAdd")

    def default(self, n, shapes, attrs):
        x = shapes[0]
        return (tuple(n if d == 0 and x[0] % n == 0 else 1 for d in range(len(x))),
                *((1,) * len(s) for s in shapes[1:]))

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        if any(k != 1 for k in strategy[0][1:]) or any(k != 1 for s in strategy[1:] for k in s):
            raise StrategyError(f"For {op}, Invalid strategy {strategy}: only the batch dimension (dimension 0 of "
                                f"the first input) can be split by the sharding pass yet")
        dev = with_repeat([strategy[0][0]], n, op, strategy)
        batch = [Layout(dev, (1,) + (-1,) * (len(s) - 1)) for s in shapes[:1] + out_shapes]
        return ShardPlan([batch[0], *(Layout.replicated(n, len(s)) for s in shapes[1:])], batch[1:], dict(attrs))


class ParameterUpdateRule(OpRule):
    """Optimizer updates (input 0 the Parameter): every input and output of the Parameter's shape takes
    its layout (its gradient, its optimizer states: MindSpore gives cloned states the Parameter's
    layout), the rest (learning rate, scalars) is whole on every rank."""

    ops = ("SGD", "ApplyMomentum", "Adam", "ApplyAdam", "AdamWeightDecay", "Assign", "ApplyRMSProp",
           "ApplyCenteredRMSProp", "ApplyAdagrad", "ApplyAdagradV2", "ApplyProximalAdagrad", "Lamb", "LARSUpdate")
    takes_strategy = False

    def default(self, n, shapes, attrs):
        return tuple((1,) * len(s) for s in shapes)

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        lay = current[0] or Layout.replicated(n, len(shapes[0]))
        pick = [lay if s == shapes[0] else Layout.replicated(n, len(s)) for s in shapes]
        outs = [lay if s == shapes[0] else Layout.replicated(n, len(s)) for s in out_shapes]
        return ShardPlan(pick, outs, dict(attrs))


class ReplicatedRule(OpRule):
    """An op without a rule: runs on whole tensors, the same on every rank."""

    takes_strategy = False

    def default(self, n, shapes, attrs):
        return tuple((1,) * len(s) for s in shapes)

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        return ShardPlan([Layout.replicated(n, len(s)) for s in shapes],
                         [Layout.replicated(n, len(s)) for s in out_shapes], dict(attrs))


_RULES: dict[str, OpRule] = {}
for _rule in (SoftmaxRule(), MatMulRule(), ReduceRule(), ReshapeRule(), GatherRule(), GatherDRule(), BatchRule(),
              ParameterUpdateRule(), FollowRule(), TransposeRule(), FlashAttentionRule()):
    for _op in _rule.ops:
        _RULES[_op] = _rule
_ELEMENTWISE = ElementwiseRule()
_REPLICATED = ReplicatedRule()


def rule_for(op: str) -> OpRule:
    rule = _RULES.get(op)
    if rule is not None:
        return rule
    d = REGISTRY.get(op)
    if d is not None and d.elementwise is not None:
        return _ELEMENTWISE
    return _REPLICATED


def _same_map(a: Layout, b: Layout) -> bool:
    """The same device matrix and the same slice on every rank (an axis of size 1 named or not)."""
    return a.dev_matrix == b.dev_matrix and a.same(b)


def _renamed(plan: ShardPlan, layouts: LayoutStrategy, op: str) -> ShardPlan:
    """``plan`` (made from ``layouts.splits()``) over the user's device matrix: each device axis of the plan that
    splits something is the user's axes splitting the same input dimensions; one plan axis given different user
    axes in two places (MatMul's reduction dimension split by "dp" in x and "mp" in w) is MindSpore's error."""
    names: dict[int, tuple[int, ...]] = {}
    for want, lay in zip(plan.inputs, layouts):
        for d in range(len(lay.tensor_map)):
            for axis in want.axes(d):
                if want.dev_matrix[axis] > 1 and names.setdefault(axis, lay.axes(d)) != lay.axes(d):
                    raise StrategyError(f"For {op}: the layouts {tuple(layouts)} split dimensions the op ties "
                                        f"together over different device axes ({names[axis]} and {lay.axes(d)}): "
                                        f"the shard size of the tied dimensions is not equal; use the same alias")
    dev = layouts[0].dev_matrix

    def rename(lay: Layout) -> Layout:
        return Layout(dev, tuple(tensor_map_entry(tuple(u for a in lay.axes(d) for u in names.get(a, ())))
                                 for d in range(len(lay.tensor_map))))

    partial = {i: replace(p, axes=tuple(sorted(u for a in p.axes for u in names.get(a, ()))))
               for i, p in plan.partial.items()}
    return ShardPlan([rename(x) for x in plan.inputs], [rename(x) for x in plan.outputs], plan.attrs,
                     {i: p for i, p in partial.items() if p.axes})


def plan_op(rule: OpRule, n: int, strategy: Strategy | LayoutStrategy | None, shapes: list[Shape],
            out_shapes: list[Shape], attrs: dict[str, Any], current: list[Layout | None], op: str,
            out_strategy: Strategy | LayoutStrategy | None = None) -> ShardPlan:
    """The plan of ``op`` under a tuple strategy, a :class:`LayoutStrategy` or none, and its ``out_strategy``."""
    splits = strategy
    if isinstance(strategy, LayoutStrategy):
        dev = strategy[0].dev_matrix
        if any(lay.dev_matrix != dev for lay in strategy):
            raise StrategyError(f"For {op}: the device_matrix of every input's layout must be the same, got "
                                f"{[lay.dev_matrix for lay in strategy]}")
        if math.prod(dev) != n:
            raise StrategyError(f"For {op}: the product of the layout's device_matrix {dev} must be the device "
                                f"number of the stage, {n}")
        splits = strategy.splits()
    plan = rule.plan(n, splits, shapes, out_shapes, attrs, current, op)
    if isinstance(strategy, LayoutStrategy) and rule.takes_strategy:
        plan = _renamed(plan, strategy, op)
    if out_strategy is not None:
        plan = rule.with_out_strategy(plan, splits, out_strategy, shapes, out_shapes, attrs, op)
    return plan
