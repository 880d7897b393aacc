"""Per-op sharding rules, one stanza per kind of op (like the op registry): given an op's strategy (or
the one MindSpore's semi-auto gives an op without one) and its inputs' global shapes, which layout each
input must have, which layouts the local op's outputs get, its local attributes, and the partial sums
its outputs hold (a MatMul whose reduction dimension is split, a reduction over a split dimension),
which the pass combines with an AllReduce right after the op, as MindSpore's forward communication does.

An op without a strategy gets MindSpore's semi-auto default, data parallel on the batch dimension
(``OpRule.default``). An op without a rule runs on the whole tensors (``Replicated``): every input
gathered, the outputs the same on every rank; correct for any op, at the price of memory and gathers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ascendemu.kernels.registry import REGISTRY

from .layout import Layout
from .redistribution import Emitter
from .strategy import Strategy, StrategyError, with_repeat

__all__ = ["PartialSum", "ShardPlan", "OpRule", "ElementwiseRule", "MatMulRule", "SoftmaxRule", "ReduceRule",
           "ReshapeRule", "GatherRule", "BatchRule", "ParameterUpdateRule", "ReplicatedRule", "rule_for"]

Shape = tuple[int, ...]


@dataclass(frozen=True)
class PartialSum:
    """An output that holds partial results over device-matrix ``axes``: combined with AllReduce(``reduce_op``),
    then divided by ``mean`` (a mean over a split dimension)."""

    axes: tuple[int, ...]
    reduce_op: str = "sum"
    mean: int = 1


@dataclass
class ShardPlan:
    inputs: list[Layout]
    outputs: list[Layout]
    attrs: dict[str, Any]
    partial: dict[int, PartialSum] = field(default_factory=dict)     # output index -> its partial sums


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
        return self.split(n, strategy, shapes, out_shapes, attrs, current, op)

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
        return (tuple(n if i == 0 and x[0] % n == 0 else 1 for i in range(len(x))), (1,) * len(w))

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
    """Reshape and Flatten keep a split of dimension 0 when the new shape keeps dimension 0 (a batch
    reshaped in place: each rank reshapes its own rows); any other reshape runs on the whole tensor."""

    ops = ("Reshape", "Flatten")
    takes_strategy = False

    def default(self, n, shapes, attrs):
        return ((1,) * len(shapes[0]),)

    def split(self, n, strategy, shapes, out_shapes, attrs, current, op):
        (x,), (o,) = shapes, out_shapes
        cur = current[0]
        if cur is not None and x and o and x[0] == o[0] and all(cur.shards(d) == 1 for d in range(1, len(x))):
            local = attrs
            if "shape" in attrs:
                local = {**attrs, "shape": (o[0] // cur.shards(0), *o[1:])}
            return ShardPlan([cur], [Layout(cur.dev_matrix, (cur.tensor_map[0],) + (-1,) * (len(o) - 1))], local)
        return ReplicatedRule().split(n, strategy, shapes, out_shapes, attrs, current, op)


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
for _rule in (SoftmaxRule(), MatMulRule(), ReduceRule(), ReshapeRule(), GatherRule(), BatchRule(),
              ParameterUpdateRule()):
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
