"""Graph passes: no-task aliasing, O1 elementwise, epilogue and BatchNorm fusion, execution order, multi-stream
assignment.

Every pass takes a Graph and returns a new Graph (or a plan object); the input graph is never changed,
so a test can compare before and after. Memory planning lives in ``memory_plan.py``.
"""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field, replace

from ascendemu.device.memory import acl_padded
from ascendemu.device.pool import ALIGN
from ascendemu.errors import InvalidParamError, check_int
from ascendemu.kernels.ops.common import FLOAT
from ascendemu.kernels.ops import elementwise, norm_fusion
from ascendemu.kernels.registry import communication, get_op, lowerings
from ascendemu.kernels.signature import ITEMSIZE, TensorDesc, jsonable

from .ir import NO_TASK_OPS, Graph, OpNode
from .memory_report import is_backward
from .memory_plan import peak_memory  # noqa: F401  (part of this module's API: order + peak)
from .schedule import RunCollective, RecordAfter, Run, ScheduleStep, Wait

ORDER_POLICIES = ("bfs", "dfs")
DEFAULT_ORDER_POLICY = "dfs"     # depth first: a value is consumed soon after it is made, so fewer live at once
FUSED_OP = "FusedElemwise"
# Ops with a scalar lowering in the registry; BiasAdd is elementwise too: inside a fused program it
# becomes Add with the bias viewed as (C, 1, ..).
FUSABLE_OPS = frozenset(lowerings()) | {"BiasAdd"}


# ------------------------------------------------------------------------------------------- no-task

def remove_no_task(graph: Graph) -> Graph:
    """Drop Reshape/ExpandDims/Squeeze/Flatten nodes; their outputs become aliases of the input's root.

    Consumers keep reading the alias value (it has its own shape); ``graph.aliases`` tells the executor
    that it lives at the root's address, so no kernel and no copy is needed.
    """
    g = graph.copy()
    kept = []
    for n in g.nodes:
        if n.op in NO_TASK_OPS:
            g.aliases[n.outputs[0]] = g.root(n.inputs[0])
        else:
            kept.append(n)
    g.nodes = kept
    return g


# ------------------------------------------------------------------------------------------------ CSE

def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """Merge nodes that apply the same op with the same attributes to the same values: the later one's
    outputs become the earlier one's. A training step computes its forward twice (``loss =
    net(x)`` then the gradient's own forward), so this halves its forward kernels, as MindSpore's CSE
    does. Ops are pure (state changes are ``graph.updates``, applied after the run), so merging is
    always safe."""
    g = graph.copy()
    seen: dict[tuple, OpNode] = {}
    rename: dict[int, int] = {}
    kept = []
    for n in g.nodes:
        inputs = tuple(rename.get(v, v) for v in n.inputs)
        key = (n.op, json.dumps(jsonable(n.attrs), sort_keys=True), inputs)
        first = seen.get(key)
        if first is None:
            n.inputs = inputs
            seen[key] = n
            kept.append(n)
            continue
        for old, new in zip(n.outputs, first.outputs):
            rename[old] = new
            del g.values[old]
    if not rename:
        return g
    g.nodes = kept
    g.outputs = [rename.get(v, v) for v in g.outputs]
    g.updates = {p: rename.get(v, v) for p, v in g.updates.items()}
    return g


# -------------------------------------------------------------------------------------------- fusion

def _fusable(graph: Graph, node: OpNode) -> bool:
    """Whether ``node`` may join a fused tree: a one-output elementwise op on float values, or a
    comparison of float values whose bool result stays inside the tree (a composite's ``Select``
    condition), since a fused program holds it in a register and never stores it."""
    if node.op not in FUSABLE_OPS or len(node.outputs) != 1:
        return False
    if not all(graph.values[v].dtype in FLOAT for v in node.inputs):
        return False
    return graph.values[node.outputs[0]].dtype in FLOAT + ("bool",)


def _joins(graph: Graph, node: OpNode, producers: dict, consumers: dict, pinned: set[int]) -> bool:
    """Whether ``node`` may join a tree: fusable, or a Select whose condition is made by a fusable
    comparison read by it alone, which then joins with it (a fused program keeps that condition as a
    register truth value, which only a Select's choice reads: arithmetic on it, even through a Cast,
    would compute on integers). ``pinned``: values that must stay in memory (outputs, aliased values)."""
    if node.op not in FUSABLE_OPS or len(node.outputs) != 1:
        return False
    for i, v in enumerate(node.inputs):
        if graph.values[v].dtype in FLOAT:
            continue
        p = producers.get(v)
        if (graph.values[v].dtype != "bool" or node.op != "Select" or i != 0 or p is None
                or not _fusable(graph, p) or len(consumers[v]) != 1 or v in pinned):
            return False
    return graph.values[node.outputs[0]].dtype in FLOAT + ("bool",)


def _rounds_inside(graph: Graph, node: OpNode, root: OpNode) -> bool:
    """A Cast to a narrower float (float32 -> float16) feeding a tree that stores a wider result: the
    Cast must round, but in a fused program it is a no-op on the float32 registers and no narrow
    store rounds after it, so it stays out (``Cast(Cast(x, float16), float32)`` is x rounded to
    float16 in every mode). Under a tree storing the narrow type (amp's Cast of a float32 bias into a
    float16 BiasAdd) it joins: the store rounds, as the design of fused float16 arithmetic accepts."""
    if node.op != "Cast":
        return False
    narrow = ITEMSIZE[graph.values[node.outputs[0]].dtype]
    return narrow < ITEMSIZE[graph.values[node.inputs[0]].dtype] and \
        narrow < ITEMSIZE[graph.values[root.outputs[0]].dtype]


def _is_literal_scalar(graph: Graph, vid: int) -> bool:
    c = graph.constants.get(vid)
    return c is not None and not c.is_parameter and c.data.ndim == 0


def _groups(graph: Graph) -> list[list[OpNode]]:
    """Maximal trees of fusable nodes whose internal values have exactly one consumer.

    Grown from the last node backwards: a producer joins its consumer's group when the value between
    them is read by nothing else (no other node, no alias, not a graph output).
    """
    producers = graph.producers()
    consumers = graph.consumers()
    pinned = set(graph.outputs) | set(graph.aliases.values())
    position = {n.id: i for i, n in enumerate(graph.nodes)}
    taken: set[int] = set()
    groups = []
    for root in reversed(graph.nodes):
        if (root.id in taken or not _joins(graph, root, producers, consumers, pinned)
                or graph.values[root.outputs[0]].dtype not in FLOAT):      # a tree stores a float result
            continue
        group, stack = [root], [root]
        taken.add(root.id)
        while stack:
            for v in stack.pop().inputs:
                p = producers.get(v)
                if (p is not None and p.id not in taken and _joins(graph, p, producers, consumers, pinned)
                        and len(consumers[v]) == 1 and v not in pinned and not _rounds_inside(graph, p, root)):
                    taken.add(p.id)
                    group.append(p)
                    stack.append(p)
        if len(group) > 1:
            groups.append(sorted(group, key=lambda n: position[n.id]))
    return groups


def _fused_name(names: list[str], label: str = FUSED_OP) -> str:
    """``<common scope>/<label>[<fused op names relative to it>]``."""
    parts = [n.split("/") for n in names]
    common = []
    for level in zip(*(p[:-1] for p in parts)):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    rel = ["/".join(p[len(common):]) for p in parts]
    return "/".join(common + [f"{label}[{','.join(rel)}]"])


def _channel_rank(graph: Graph, node: OpNode) -> int:
    """For a BiasAdd whose channel axis is 1 (NCHW, NCDHW) and rank > 2: the rank of x, which its
    bias must be viewed at inside a fused program ((C,) -> (C, 1, ...)); else 0 (no view: a rank-2
    x or a channel-last layout broadcasts a (C,) bias along its last axis as it is)."""
    rank = len(graph.values[node.inputs[0]].shape)
    channel_last = node.attrs.get("data_format", node.attrs.get("format", "NCHW")) == "NHWC"
    return 0 if rank <= 2 or channel_last else rank


def _channel_view(graph: Graph, rank: int, v: int) -> int:
    """``v`` (rank <= 1) as an alias of shape ``v.shape + (1,) * (rank - 2)``: in a fused program every
    operand broadcasts against the output from the right, so a per-channel vector must carry the
    trailing unit axes to land on axis 1."""
    desc = graph.values[v]
    if not desc.shape:
        return v
    view = graph.new_value(TensorDesc(desc.shape + (1,) * (rank - 2), desc.dtype))
    graph.aliases[view] = graph.root(v)
    return view


def _channel_steps(graph: Graph, group: list[OpNode], step_of: dict[int, int]) -> dict[int, int]:
    """Steps of ``group`` that compute (part of) a BiasAdd's bias, -> the rank to view their external
    operands at. Under amp the bias is ``Cast(bias)``, and that Cast joins the tree: its result never
    exists in memory, so the view must be taken of the tree's external inputs, not of the bias value."""
    rank_of: dict[int, int] = {}
    for j in reversed(range(len(group))):
        n = group[j]
        if n.op == "BiasAdd" and n.inputs[1] in step_of and _channel_rank(graph, n):
            rank_of[step_of[n.inputs[1]]] = _channel_rank(graph, n)
        if j in rank_of:
            for v in n.inputs:
                if v in step_of:
                    rank_of[step_of[v]] = rank_of[j]
    return rank_of


def _fuse_group(graph: Graph, group: list[OpNode]) -> OpNode | None:
    step_of = {n.outputs[0]: j for j, n in enumerate(group)}
    rank_of = _channel_steps(graph, group, step_of)
    views: dict[tuple[int, int], int] = {}

    def view(rank: int, v: int) -> int:
        if (rank, v) not in views:
            views[rank, v] = _channel_view(graph, rank, v)
        return views[rank, v]

    ext: list[int] = []
    program = []
    for j, n in enumerate(group):
        inputs = list(n.inputs)
        op = n.op
        if op == "BiasAdd":
            op, rank = "Add", _channel_rank(graph, n)
            if rank and inputs[1] not in step_of:
                inputs[1] = view(rank, inputs[1])
        elif j in rank_of:
            inputs = [v if v in step_of or _is_literal_scalar(graph, v) else view(rank_of[j], v) for v in inputs]
        operands = []
        for v in inputs:
            if v in step_of:
                operands.append(("t", step_of[v]))
            elif _is_literal_scalar(graph, v):
                operands.append(("c", graph.constants[v].data.item()))
            else:
                if v not in ext:
                    ext.append(v)
                operands.append(("in", ext.index(v)))
        program.append((op,) + tuple(operands))
    if not ext:
        return None
    root = group[-1]
    attrs = {"program": tuple(program), "dst_type": graph.values[root.outputs[0]].dtype}
    return OpNode(graph.new_node_id(), FUSED_OP, attrs, tuple(ext), root.outputs,
                _fused_name([n.full_name for n in group]), tuple(o for n in group for o in n.origins))


def fuse_elementwise(graph: Graph) -> Graph:
    """O1 graph-kernel fusion: each maximal elementwise tree becomes one FusedElemwise node.

    The fused node sits where the tree's root was (so the node list stays topological), reads the
    tree's distinct external inputs, and writes the root's output value. 0-d literal constants become
    ``("c", value)`` operands. Values internal to a tree disappear from the graph.
    """
    g = graph.copy()
    replaced: dict[int, OpNode] = {}
    gone: set[int] = set()
    for group in _groups(g):
        fused = _fuse_group(g, group)
        if fused is None:
            continue
        fused.signature(g)  # validate the program against the kernel library's shape inference
        replaced[group[-1].id] = fused
        gone |= {n.id for n in group[:-1]}
        for n in group[:-1]:
            for v in n.outputs:
                del g.values[v]
    _replace_nodes(g, replaced, gone)
    prune_constants(g)
    return g


def _replace_nodes(graph: Graph, replaced: dict[int, OpNode], gone: set[int]) -> None:
    """In place, in one walk of the node list: each node of ``replaced`` becomes its fused node (at its
    place, so the list stays topological) and the nodes of ``gone`` leave. A fusion pass collects its
    disjoint fusions and applies them here at the end: rebuilding the list per fusion made the pass
    quadratic in graph size."""
    if replaced or gone:
        graph.nodes = [replaced.get(n.id, n) for n in graph.nodes if n.id not in gone]


def fuse_conditional_updates(graph: Graph) -> Graph:
    """An update skipped on a device flag is decided inside the update's own kernel.

    ``graph.capture``'s ``updates_unless`` and a tensor ``if`` around an optimizer (MindSpore's ``if not
    overflow: optimizer(grads)``) make each Parameter and optimizer state it updates ``Select(flag, old,
    new)`` (or ``(flag, new, old)``): a pass over every parameter and state of its own. MindSpore compiles
    the ``if`` as a branch whose kernels run or not, with no such pass. Here an optimizer program
    (``ApplyMomentum``, ``Adam``, ...: one elementwise program over the parameter and its states) whose
    outputs only such Selects read, each choosing between the program's own input and its output, becomes
    one multi-output ``FusedElemwise``: the program, then per output the same choice, on the flag cast once
    to float32 (a fused program's inputs are floats). Same values bit for bit (the Select stores the chosen
    operand unchanged), one pass over memory, the program node's id and place kept."""
    g = graph.copy()
    producers, consumers = g.producers(), g.consumers()
    position = {n.id: i for i, n in enumerate(g.nodes)}
    updates = set(g.updates.values())
    absorbed: dict[int, list[OpNode]] = {}          # program node id -> the Selects of its outputs
    for n in g.nodes:
        if n.op != "Select" or n.outputs[0] not in updates or g.values[n.inputs[0]].size != 1:
            continue
        for new, old in (n.inputs[2], n.inputs[1]), (n.inputs[1], n.inputs[2]):   # either branch the update's
            p = producers.get(new)
            if (p is not None and p.op in elementwise.PROGRAMS and old in p.inputs and len(consumers[new]) == 1
                    and g.values[n.outputs[0]] == g.values[new]):
                absorbed.setdefault(p.id, []).append(n)
                break
    # one flag per program, made before it (the flag's Cast goes right after the flag's producer)
    absorbed = {pid: sel for pid, sel in absorbed.items() if len({s.inputs[0] for s in sel}) == 1
                and position.get(getattr(producers.get(sel[0].inputs[0]), "id", None), -1) < position[pid]}
    if not absorbed:
        return g
    flags: dict[int, int] = {}                       # skip value -> its float32 copy
    casts: dict[int, OpNode] = {}                    # node id after which a Cast goes (-1: first) -> the Cast
    fused: dict[int, OpNode] = {}
    for pid, sel in absorbed.items():
        p = g.node(pid)
        skip = sel[0].inputs[0]
        if skip not in flags:
            flags[skip] = g.new_value(TensorDesc(g.values[skip].shape, "float32"))
            at = producers[skip].id if skip in producers else -1
            casts[at] = OpNode(g.new_node_id(), "Cast", {"dst_type": "float32"}, (skip,), (flags[skip],),
                               f"{sel[0].full_name}_flag", sel[0].origins)
        steps, outs = elementwise.PROGRAMS[p.op](p.signature(g))
        program, outputs = list(steps), list(outs)
        flag = ("in", len(p.inputs))
        values = list(p.outputs)
        program.append(("NotEqual", flag, ("c", 0.0)))         # the flag, as the Select's condition
        cond = ("t", len(program) - 1)
        for s in sel:
            k = next(p.outputs.index(v) for v in s.inputs[1:] if v in p.outputs)
            picks = tuple(("t", outputs[k]) if v == p.outputs[k] else ("in", p.inputs.index(v)) for v in s.inputs[1:])
            program.append(("Select", cond) + picks)
            del g.values[p.outputs[k]]
            outputs[k], values[k] = len(program) - 1, s.outputs[0]
        attrs = {"program": tuple(program), "outputs": tuple(outputs),
                 "dst_type": tuple(g.values[v].dtype for v in values)}
        fused[pid] = OpNode(pid, FUSED_OP, attrs, p.inputs + (flags[skip],), tuple(values),
                            _fused_name([p.full_name] + [s.full_name for s in sel]),
                            p.origins + tuple(o for s in sel for o in s.origins))
        fused[pid].signature(g)      # validate the program against the kernel library's shape inference
    nodes = [casts[-1]] if -1 in casts else []
    owner = {s.id: pid for pid, sel in absorbed.items() for s in sel}      # each absorbed Select's program
    for n in g.nodes:
        if n.id not in owner:
            nodes.append(fused.get(n.id, n))
        if n.id in casts:
            nodes.append(casts[n.id])
    g.nodes = nodes
    # a control dependency on an absorbed Select becomes one on the program that absorbed it
    g.control = {nid: tuple(dict.fromkeys(owner.get(d, d) for d in deps))
                 for nid, deps in g.control.items() if nid not in owner}
    return g


MATMUL_OPS = ("MatMul", "BatchMatMul")


def fuse_epilogues(graph: Graph) -> Graph:
    """O1 epilogue fusion: an elementwise node (or fused tree) that alone reads a MatMul/BatchMatMul
    product of its own shape and dtype becomes that matmul's ``epilogue``, applied to each finished
    output tile, so the product never makes a round trip through memory.

    Runs after :func:`fuse_elementwise`. The fused node sits where the elementwise node was and writes
    its output; the kernel applies the program to the stored product, so results are bit-identical.
    """
    g = graph.copy()
    producers, consumers = g.producers(), g.consumers()
    outputs, aliased = set(g.outputs), set(g.aliases.values())
    replaced: dict[int, OpNode] = {}
    gone: set[int] = set()

    def absorbable(v: int, node: OpNode) -> bool:
        m = producers.get(v)
        return (m is not None and m.op in MATMUL_OPS and "epilogue" not in m.attrs and len(consumers[v]) == 1
                and v not in outputs and v not in aliased and g.values[v] == g.values[node.outputs[0]])

    for node in list(g.nodes):
        if not (node.op == FUSED_OP and "outputs" not in node.attrs) and not _fusable(g, node):
            continue
        v = next((v for v in node.inputs if absorbable(v, node)), None)
        if v is None:
            continue
        if node.op == FUSED_OP:
            program, ext = node.attrs["program"], list(node.inputs)
        else:
            single = _fuse_group(g, [node])
            program, ext = single.attrs["program"], list(single.inputs)
        m = producers[v]
        epilogue, extras = _reading_first(program, ext, v)
        fused = OpNode(g.new_node_id(), m.op, {**m.attrs, "epilogue": epilogue}, m.inputs + tuple(extras),
                     node.outputs, _fused_name([m.full_name, node.full_name], m.op), m.origins + node.origins)
        fused.signature(g)   # validate against the kernel library's shape inference
        replaced[node.id] = fused
        gone.add(m.id)
        del g.values[v]
    _replace_nodes(g, replaced, gone)
    prune_constants(g)
    return g


def _reading_first(program: tuple, ext: list[int], v: int) -> tuple[tuple, list[int]]:
    """``program`` over inputs ``ext`` rewritten so that ("in", 0) is ``v`` and ("in", i) the i-th of
    the returned other inputs: the form of an epilogue, where input 0 is the value it is applied to."""
    extras = [e for e in ext if e != v]
    slot = {i: 0 if e == v else 1 + extras.index(e) for i, e in enumerate(ext)}
    return tuple((op, *((("in", slot[x]) if kind == "in" else (kind, x)) for kind, x in operands))
                 for op, *operands in program), extras


def _elementwise_program(graph: Graph, node: OpNode) -> tuple[tuple, list[int]] | None:
    """(program, external inputs) of a single-output FusedElemwise node or a fusable op, else None."""
    if node.op == FUSED_OP and "outputs" not in node.attrs:
        return node.attrs["program"], list(node.inputs)
    if node.op != FUSED_OP and _fusable(graph, node) and graph.values[node.outputs[0]].dtype in FLOAT:
        single = _fuse_group(graph, [node])
        return (single.attrs["program"], list(single.inputs)) if single is not None else None
    return None


def _training_norm(node: OpNode, op: str) -> bool:
    return node.op == op and bool(node.attrs.get("is_training")) and not {"epilogue", "prologue"} & set(node.attrs)


def fuse_norm_programs(graph: Graph) -> Graph:
    """O1/O2 BatchNorm fusion, CANN's buffer fusions on Ascend (docs/FIDELITY.md): the element-wise
    node (ReLU, or a fused Add + ReLU of the residual) that alone reads a training BatchNorm's y
    becomes the BatchNorm's ``epilogue``, applied to y before it is stored (BNTrainingUpdate + ReLU,
    + Add + ReLU); the element-wise node (ReluGrad, or a fused tree ending in it) whose result only a
    training BatchNormGrad reads as dy becomes its ``prologue``, recomputed where the kernel reads dy
    (ReluGrad + BNTrainingUpdateGrad/ReduceGrad). Each removes a kernel and a full write and read of
    an activation. Their other inputs must have the activation's shape (the fused kernel reads them
    at its index); literal scalars are folded in. Runs after :func:`fuse_epilogues`."""
    g = graph.copy()
    producers, consumers = g.producers(), g.consumers()
    pinned = set(g.outputs) | set(g.aliases.values())
    position = {n.id: i for i, n in enumerate(g.nodes)}
    taken: set[int] = set()
    fusions: list[tuple[OpNode, OpNode, OpNode]] = []      # (node replaced, node removed, fused node)
    for node in g.nodes:
        if node.id in taken:
            continue
        if _training_norm(node, "BatchNormGrad"):
            p = producers.get(node.inputs[0])
            fused = _prologue(g, node, p, consumers, pinned) if p is not None and p.id not in taken else None
            gone = p
        else:
            bn = next((producers[v] for v in node.inputs if v in producers and producers[v].id not in taken
                       and _training_norm(producers[v], "BatchNorm") and producers[v].outputs[0] == v), None)
            fused = _epilogue(g, bn, node, consumers, pinned, position) if bn is not None else None
            gone = bn
        if fused is not None:
            taken |= {node.id, gone.id}
            fusions.append((node, gone, fused))
    for node, gone, fused in fusions:
        fused.signature(g)   # validate against the kernel library's shape inference
        for v in (set(gone.outputs) | set(node.outputs)) - set(fused.outputs):
            del g.values[v]
    _replace_nodes(g, {node.id: fused for node, _, fused in fusions}, {gone.id for _, gone, _ in fusions})
    prune_constants(g)
    return g


def fuse_conv_bn_reduce(graph: Graph) -> Graph:
    """O1/O2 Conv2D + BNTrainingReduce, MindSpore's Ascend buffer fusion ConvBnReduceFusionPass: a training
    BatchNorm whose x a Conv2D makes gets its channel statistics from that convolution, which sums its
    output (and its square) while the output is still on chip; the BatchNorm then reads x once, to
    normalise it, instead of twice. As MindSpore's pass requires (the convolution's output used by the
    BatchNorm's four Ascend kernels and nothing else), x has no reader but the BatchNorm and its grad.
    Both nodes keep their inputs and outputs (the values they compute are unchanged); the attrs
    (kernels/ops/norm_fusion.py) mark the work each kernel does on the chip."""
    g = graph.copy()
    producers, consumers = g.producers(), g.consumers()
    marked: dict[int, OpNode] = {}
    for node in g.nodes:
        if node.op != "BatchNorm" or not node.attrs.get("is_training"):
            continue
        x = node.inputs[0]
        conv = producers.get(x)
        if (conv is None or conv.op != "Conv2D" or conv.id in marked or x in g.outputs
                or any(c is not node and c.op != "BatchNormGrad" for c in consumers.get(x, ()))):
            continue
        marked[conv.id] = replace(conv, attrs={**conv.attrs, norm_fusion.REDUCES_OUTPUT: True})
        marked[node.id] = replace(node, attrs={**node.attrs, norm_fusion.STATS_FROM_CONV: True})
    _replace_nodes(g, marked, set())
    return g


def _epilogue(g: Graph, bn: OpNode, node: OpNode, consumers: dict, pinned: set[int],
              position: dict[int, int]) -> OpNode | None:
    """``bn`` with ``node`` as its epilogue, where ``node`` is the fused node's place: so no reader
    of bn's other outputs (the saved statistics) may come before it."""
    found = _elementwise_program(g, node)
    y = bn.outputs[0]
    shape = g.values[y].shape
    if (found is None or len(consumers[y]) != 1 or y in pinned or g.values[node.outputs[0]].shape != shape
            or any(g.values[e].shape != shape for e in found[1])
            or any(position[c.id] < position[node.id] for v in bn.outputs[1:] for c in consumers.get(v, ()))):
        return None
    epilogue, extras = _reading_first(*found, y)
    attrs = {**bn.attrs, "epilogue": epilogue, "epilogue_type": g.values[node.outputs[0]].dtype}
    return OpNode(g.new_node_id(), bn.op, attrs, bn.inputs + tuple(extras), node.outputs + bn.outputs[1:],
                  _fused_name([bn.full_name, node.full_name], bn.op), bn.origins + node.origins)


def _prologue(g: Graph, grad: OpNode, p: OpNode, consumers: dict, pinned: set[int]) -> OpNode | None:
    """``grad`` with its dy's element-wise producer ``p`` as its prologue (input 0 is p's first input)."""
    dy = grad.inputs[0]
    found = _elementwise_program(g, p)
    shape = g.values[grad.inputs[1]].shape
    if found is None or len(consumers[dy]) != 1 or dy in pinned or any(g.values[e].shape != shape for e in found[1]):
        return None
    program, ext = found
    return OpNode(g.new_node_id(), grad.op, {**grad.attrs, "prologue": program},
                  (ext[0],) + grad.inputs[1:] + tuple(ext[1:]), grad.outputs,
                  _fused_name([p.full_name, grad.full_name], grad.op), p.origins + grad.origins)


def prune_constants(graph: Graph) -> None:
    """Remove constants (and their aliases) that no node, output or update reads any more (in place)."""
    used = graph.read_values()
    used |= {graph.root(v) for v in used}
    for vid in [v for v in graph.constants if v not in used]:
        del graph.constants[vid]
        del graph.values[vid]
    for alias in [a for a, r in graph.aliases.items() if r not in graph.values]:
        del graph.aliases[alias]
        graph.values.pop(alias, None)


# ------------------------------------------------------------------------------ contiguous buckets

def contiguous_buckets(graph: Graph) -> Graph:
    """A fused AllReduce reads its gradients from one contiguous block and writes one, as MindSpore 2.10's
    does: its memory_block.csv lists the fused kernel's inputs and outputs as ContinuousMemory, each part a
    pool block of its own size (16777728 + 8704 B for a 2048 x 2048 weight and its bias), and its execute
    order has no Concat and no Slice (tests/fixtures/msdryrun/data_parallel_dryrun.json, FUSION=layers).

    ``nn.DistributedGradReducer`` captures a bucket as Concat(flat gradients) -> AllReduce -> a Slice per
    gradient. Here the Concat and the Slices leave: each gradient's producer writes straight into its part
    of the input block (its output becomes a view of the block, ``Graph.view_offsets``), the AllReduce
    reduces the whole block into an output block (the padding between parts too, as HCCL's count of a
    continuous input does), and each Slice's readers read their part of that. So no copy kernel, no device
    time, no bytes beyond the blocks; a block lives from its first part's writer to its last reader
    (``memory_plan.lifetimes``). Every part keeps its bits (the Concat and Slices only copied).

    A bucket stays as captured unless each part is a whole node output (its flat view read by the Concat
    alone) of the block's dtype that no graph output, update or other part keeps, and each reader of the
    AllReduce's output is a Slice of exactly one part."""
    g = graph.copy()
    producers, consumers = g.producers(), g.consumers()
    fixed = set(g.inputs) | set(g.constants)
    kept = {g.root(v) for v in g.outputs} | {g.root(v) for v in g.updates.values()}
    aliased = set(g.aliases.values())         # read through an alias too: not all readers in ``consumers``
    gone: set[int] = set()
    for n in list(g.nodes):
        found = _bucket(g, n, producers, consumers, fixed, kept, aliased)
        if found is None:
            continue
        concat, parts, slices = found
        desc = g.values[concat.outputs[0]]
        starts, end = [], 0
        for r in parts[:-1]:
            starts.append(end)
            end += -(-acl_padded(g.values[r].nbytes) // ALIGN) * ALIGN     # a pool block each, as MindSpore's
        starts.append(end)
        length = (end + g.values[parts[-1]].nbytes) // ITEMSIZE[desc.dtype]  # the pool pads the last part
        sent, got = (g.new_value(TensorDesc((length,), desc.dtype)) for _ in range(2))
        for r, start in zip(parts, starts):
            _view(g, r, sent, start)
        for sl, k in slices:
            _view(g, sl.outputs[0], got, starts[k])
        for v in (concat.outputs[0], n.outputs[0]):
            del g.values[v]
        n.inputs, n.outputs = (sent,), (got,)
        gone |= {concat.id} | {sl.id for sl, _ in slices}
        kept |= set(parts)
    if gone:
        g.nodes = [n for n in g.nodes if n.id not in gone]
    return g


def _bucket(g: Graph, n: OpNode, producers: dict, consumers: dict, fixed: set[int], taken: set[int],
            aliased: set[int]) -> tuple[OpNode, list[int], list[tuple[OpNode, int]]] | None:
    """(Concat, its parts' root values, (Slice, part index) per reader of the output) of AllReduce ``n`` when
    :func:`contiguous_buckets` may lay its bucket out contiguously, else None."""
    if n.op != "AllReduce" or len(n.inputs) != 1:
        return None
    flat, out = n.inputs[0], n.outputs[0]
    concat = producers.get(flat)
    if (concat is None or concat.op != "Concat" or len(concat.inputs) < 2 or len(g.values[flat].shape) != 1
            or consumers[flat] != [n] or {flat, out} & (taken | aliased)):
        return None
    parts = [g.root(x) for x in concat.inputs]
    if len(set(parts)) != len(parts):
        return None
    for x, r in zip(concat.inputs, parts):
        if (r in fixed or r in taken or r not in producers or consumers[x] != [concat]
                or g.values[r].dtype != g.values[flat].dtype or g.values[r].nbytes != g.values[x].nbytes):
            return None
    part_at, start = {}, 0                     # (first element, elements) of each part -> its index
    for k, x in enumerate(concat.inputs):
        part_at[start, g.values[x].size] = k
        start += g.values[x].size
    slices = []
    for reader in consumers[out]:
        if reader.op != "Slice" or reader.inputs != (out,):
            return None
        k = part_at.get((int(reader.attrs["begin"][0]), int(reader.attrs["size"][0])))
        if k is None:
            return None
        slices.append((reader, k))
    return concat, parts, slices


def _view(g: Graph, value: int, block: int, offset: int) -> None:
    """``value`` and its aliases become views of ``block`` at ``offset`` bytes (in place)."""
    for alias, root in list(g.aliases.items()):
        if root == value:
            g.aliases[alias] = block
            g.view_offsets[alias] = offset + g.view_offsets.get(alias, 0)
    g.aliases[value] = block
    g.view_offsets[value] = offset


# ------------------------------------------------------------------------------ updates in place

def _reads_at_own_index(node: OpNode) -> bool:
    """Whether ``node``'s kernel is of the elementwise family (ops with a scalar lowering, optimizer
    programs such as ApplyMomentum/Adam, FusedElemwise): its loop reads every input element at the
    output's index before writing that element, so an output may share an input of its own shape."""
    return get_op(node.op).plan is elementwise.plan


# MindSpore chains an optimizer's updates by their side effects (UpdateState) after the gradients it is given:
# none starts before the backward has made every gradient, so all gradients are alive together when the
# updates begin (an MLP 784-1024-1024-10 with Momentum: weights, moments and every gradient at its peak).
OPTIMIZER_AFTER_BACKWARD = True


def _backward_and_optimizer(graph: Graph) -> tuple[set[int], list[OpNode]]:
    """The backward's node ids, and the optimizer's nodes in capture order: outside the backward, reading a
    gradient directly or through another such node."""
    writers = graph.writers()
    backward = {n.id for n in graph.nodes if is_backward(n.origins or (n.full_name,))}
    optimizer: list[OpNode] = []
    downstream: set[int] = set()
    for n in graph.nodes:
        if n.id in backward:
            continue
        # two lookups, not `in backward | downstream`: that builds a set per input (quadratic in nodes)
        if any(w in backward or w in downstream for v in n.inputs for w in writers.get(graph.root(v), ())):
            downstream.add(n.id)
            optimizer.append(n)
    return backward, optimizer


def gradient_reductions(graph: Graph) -> set[int]:
    """The collectives outside the backward that read a gradient, directly or through optimizer-side nodes:
    data parallel's gradient AllReduces (``nn.DistributedGradReducer`` is captured after the backward; a
    sharded graph's mirror AllReduces are the backward's own)."""
    return {n.id for n in _backward_and_optimizer(graph)[1] if communication(n.op) is not None}


def _downstream(sources: set[int], graph: Graph) -> set[int]:
    """The nodes that read, directly or not, an output of a node of ``sources`` (``sources`` excluded)."""
    succs: dict[int, list[int]] = {}
    for nid, ps in graph.dependencies().items():
        for p in ps:
            succs.setdefault(p, []).append(nid)
    seen: set[int] = set()
    frontier = deque(sources)
    while frontier:
        for s in succs.get(frontier.popleft(), ()):
            if s not in seen:
                seen.add(s)
                frontier.append(s)
    return seen - sources


def optimizer_after_backward(graph: Graph) -> Graph:
    """The optimizer's nodes (outside the backward, reading a gradient directly or through another such
    node) each wait for the previous one in capture order, the first for every node of the backward
    that no backward node reads (each gradient's last node); :data:`OPTIMIZER_AFTER_BACKWARD`.

    Data parallel differs (:func:`gradient_reductions`): its Concats and AllReduces are not chained, so a
    bucket's AllReduce starts once its gradients exist and overlaps the rest of the backward; nor is what reads
    a reduced gradient, except that the updates wait for each other from the last Parameter's to the first's.
    MindSpore's DryRun of a data-parallel MLP (data_parallel_dryrun.json's execute orders) runs a bucket's
    mean Muls and updates once the next bucket's AllReduce is issued (``order`` releases them there), the
    updates in that order: with one AllReduce per gradient, the last weight's update waits for its bias's
    mean, so that weight's mean is held meanwhile."""
    if not OPTIMIZER_AFTER_BACKWARD:
        return graph
    g = graph.copy()
    backward, optimizer = _backward_and_optimizer(g)
    downstream = {n.id for n in optimizer}
    comm = {n.id for n in g.nodes if communication(n.op) is not None}
    reduction = set(_steps_to(comm, g.dependencies())) if comm else set()
    reduced = _downstream(gradient_reductions(g), g)
    updates = set(g.updates.values())
    reversed_updates = [n.id for n in reversed(optimizer) if n.id in reduced and updates.intersection(n.outputs)]
    for before, after in zip(reversed_updates, reversed_updates[1:]):
        _wait(g, after, [before])
    optimizer = [n for n in optimizer if n.id not in reduction and n.id not in reduced]
    if not optimizer:
        return g
    position = {n.id: i for i, n in enumerate(g.nodes)}
    first = optimizer[0]
    _wait(g, first.id, [b for b in gradient_ends(g) if position[b] < position[first.id]])
    for before, after in zip(optimizer, optimizer[1:]):
        _wait(g, after.id, [before.id])
    loads, results = first_update_loads(g, backward, downstream)
    for nid in loads:
        _wait(g, nid, [r for r in results if position[r] < position[nid]])
    return g


def first_update_loads(graph: Graph, backward: set[int] | None = None,
                       downstream: set[int] | None = None) -> tuple[list[int], list[int]]:
    """The optimizer's nodes captured after the backward and before its first gradient reader that read no
    gradient (the first Parameter's float32 Casts of its value and moments, the step counter), and the
    producers of the graph's outputs (the loss). MindSpore's auto-monad orders every optimizer read after
    the forward's output and each later Parameter's reads after the previous update, and its kernel order
    launches these first ones once ready, as the backward starts (a Llama's memory_block.csv: the
    embedding's three float32 Casts live through the whole backward). Ours: they wait for the loss and are
    never deferred (:func:`defer_to_first_use`); the later ones run just before their update, as there."""
    if backward is None or downstream is None:
        backward, optimizer = _backward_and_optimizer(graph)
        downstream = {n.id for n in optimizer}
    writers = graph.writers()
    position = {n.id: i for i, n in enumerate(graph.nodes)}
    if not backward or not downstream:
        return [], []
    after, first = max(position[b] for b in backward), min(position[d] for d in downstream)
    loads = [n.id for n in graph.nodes[after + 1:first]]
    results = [w for v in graph.outputs for w in writers.get(graph.root(v), ())]
    return loads, [r for r in results if r not in backward and r not in downstream]


def gradient_ends(graph: Graph) -> set[int]:
    """Nodes of the backward that no backward node reads: each gradient's last node (a weight gradient's
    MatMul, its mirror AllReduce), read only by the optimizer."""
    writers = graph.writers()
    backward = {n.id for n in graph.nodes if is_backward(n.origins or (n.full_name,))}
    read = {w for n in graph.nodes if n.id in backward for v in n.inputs for w in writers.get(graph.root(v), ())}
    return backward - read


def write_updates_in_place(graph: Graph, kept: set[int]) -> Graph:
    """Each Parameter update written by its producing kernel straight into the Parameter's buffer, as
    Ascend's ApplyMomentum/Adam kernels and MindSpore's Assign do: the updated value becomes an alias of
    the parameter (no memory of its own, no copy after the run), and the producer waits (``control``)
    for every other node reading the parameter's old contents.

    An update stays a copy after the run when writing in place could change what someone reads: its
    value is not a node output (an input, a constant, a view), it updates two parameters, the old
    contents are a graph output (``kept``: roots the host reads after the run), a reader of the old
    contents comes after the producer in capture order (it may depend on the new value), or the
    producer reads the parameter other than element for element (a MatMul into its own operand).
    """
    g = graph.copy()
    producers = {v: n for n in g.nodes for v in n.outputs}
    position = {n.id: i for i, n in enumerate(g.nodes)}
    readers: dict[int, list[OpNode]] = {}
    for n in g.nodes:
        for r in dict.fromkeys(g.root(v) for v in n.inputs):
            readers.setdefault(r, []).append(n)
    readers_of: dict[int, list[OpNode]] = {}         # value id as read (not through aliases) -> its readers
    for n in g.nodes:
        for v in dict.fromkeys(n.inputs):
            readers_of.setdefault(v, []).append(n)
    views_of: dict[int, list[int]] = {}              # root value -> its aliases
    for alias, root in g.aliases.items():
        views_of.setdefault(root, []).append(alias)
    claimed: dict[int, int] = {}
    for value in g.updates.values():
        claimed[value] = claimed.get(value, 0) + 1
    for param, value in g.updates.items():
        node = producers.get(value)
        if (node is None or value in g.aliases or claimed[value] > 1 or param in kept
                or g.values[value] != g.values[param]):
            continue
        others = [r for r in readers.get(param, ()) if r.id != node.id]
        if any(position[r.id] > position[node.id] for r in others):
            continue
        own = [v for v in node.inputs if g.root(v) == param]
        if own and not (_reads_at_own_index(node) and all(g.values[v].shape == g.values[param].shape for v in own)):
            continue
        views = [value] + views_of.get(value, [])
        for alias in views:
            g.aliases[alias] = param
        _wait(g, node.id, [r.id for r in others])
        # readers of the new value: through the alias their data edge now resolves to the parameter
        for n in {r.id: r for v in views for r in readers_of.get(v, ())}.values():
            if n.id != node.id:
                _wait(g, n.id, [node.id])
    for param, value in g.updates.items():
        if value in g.constants and param not in kept:
            _accumulate_in_place(g, param, position, readers_of)
    updated = set(g.updates.values())
    updaters = [n.id for n in g.nodes if not updated.isdisjoint(n.outputs)]       # the nodes computing updates
    for node in [n for n in g.nodes if n.op in WRITES_ITS_INPUT]:
        _assign_in_place(g, node, kept, position, readers, readers_of, updaters)
    return g


# ops whose effect is a write into their first input's memory (MindSpore's Assign kernel), not a value of their own
WRITES_ITS_INPUT = ("Assign",)


def _assign_in_place(g: Graph, node: OpNode, kept: set[int], position: dict[int, int], readers: dict,
                     readers_of: dict, updaters: list[int]) -> None:
    """MindSpore's Assign kernel on a tensor or a Parameter (the replicas' sum written into an accu_grads Parameter
    after its mirror AllReduce) writes into its memory: its output is an alias of the target's, which therefore
    lives until the write, after every other reader of the old contents and, as
    MindSpore's side effects run in program order (UpdateState), after every Parameter update captured
    before it (``_TrainGradAccuStepCell`` clears its scaled gradients once the optimizer has run)."""
    target, out = g.root(node.inputs[0]), node.outputs[0]
    literal = target in g.constants and not g.constants[target].is_parameter
    if literal or target in g.inputs or target in kept or out in g.aliases \
            or g.values[out].nbytes != g.values[target].nbytes:
        return
    others = [r for r in readers.get(target, ()) if r.id != node.id]
    if any(position[r.id] > position[node.id] for r in others):
        return
    g.aliases[out] = target
    _wait(g, node.id, [r.id for r in others] + [u for u in updaters if position[u] < position[node.id]])
    for reader in readers_of.get(out, ()):
        _wait(g, reader.id, [node.id])


# the links of an accumulation written into its Parameter: MindSpore's AssignAdd (an Add here) and the Assign of the
# replicas' sum after a mirror AllReduce; a scale or any other op computes a value of its own, as there
ACCUMULATING_OPS = ("Add", "Assign")


def _accumulate_in_place(g: Graph, param: int, position: dict[int, int], readers_of: dict) -> None:
    """An accumulator Parameter cleared by a literal after the run (``_TrainGradAccuStepCell``'s accu_grads):
    the chain of :data:`ACCUMULATING_OPS` that adds into it (p + g1, then + g2, ...; each link read only by the
    next) is written into its buffer link by link, as MindSpore's AssignAdd writes in place, instead of holding
    a running sum of its own; the chain's end stays readable (the scale, the mirror AllReduce) until the run
    ends and the literal is copied in. The first link waits for every other reader of the old contents."""
    desc, link, chain = g.values[param], param, []
    while True:
        readers = readers_of.get(link, [])
        if not readers or link != param and len(readers) > 1:     # a link is read by the next one alone
            break
        node = next((r for r in readers if r.op in ACCUMULATING_OPS and len(r.outputs) == 1
                     and g.values[r.outputs[0]] == desc and r.outputs[0] not in g.aliases), None)
        if node is None or link == param and any(position[r.id] > position[node.id] for r in readers):
            break
        chain.append(node)
        link = node.outputs[0]
    if not chain:
        return
    _wait(g, chain[0].id, [r.id for r in readers_of.get(param, []) if r is not chain[0]])
    for node in chain:                 # through the alias a reader's data edge resolves to the Parameter: it waits
        g.aliases[node.outputs[0]] = param
        for reader in readers_of.get(node.outputs[0], []):
            _wait(g, reader.id, [node.id])


def _wait(g: Graph, nid: int, before: list[int]) -> None:
    """Node ``nid`` starts only after the nodes ``before`` (``Graph.control``)."""
    if before:
        g.control[nid] = tuple(dict.fromkeys(g.control.get(nid, ()) + tuple(before)))


# --------------------------------------------------------------------------------- execution order

def order(graph: Graph, policy: str = DEFAULT_ORDER_POLICY) -> list[int]:
    """A topological order of the node ids.

    ``bfs``: Kahn's algorithm with a FIFO queue: every ready node runs before the nodes it makes
    ready, so sibling branches advance side by side (more values alive at once).
    ``dfs``: the same with a LIFO stack: the first successor a node makes ready runs next, so one
    branch is finished before the next starts (values die sooner). Ties follow capture order.
    Around collectives, both put the communication early and its consumers late, so it overlaps the
    rest of the computation (data parallel's gradient AllReduces overlap the remaining backward):
    among the nodes one node makes ready, those fewer steps away from a collective go first (a weight
    gradient before the data gradient that continues the backward), and a node that reads a
    collective's output waits until nothing else is ready (its stream would stall on the collective).
    A weight gradient (:func:`gradient_ends`) goes before the data gradient the same way, as in
    MindSpore's order. Graphs without either keep the plain order. When a gradient reduction
    (:func:`gradient_reductions`, data parallel's AllReduces) is issued, the nodes deferred so far run next:
    MindSpore runs the readers of one bucket's AllReduce (its mean's Muls, the updates) once the next bucket's
    is issued (data_parallel_dryrun.json's execute orders), so one bucket's reduced gradients are read while
    the next one's transfer.
    """
    if policy not in ORDER_POLICIES:
        raise InvalidParamError(f"execution order {policy!r} is not supported; use one of {ORDER_POLICIES}")
    deps = graph.dependencies()
    comm_nodes = {n.id for n in graph.nodes if communication(n.op) is not None}
    succs: dict[int, list[int]] = {n.id: [] for n in graph.nodes}
    for n in graph.nodes:
        for p in deps[n.id]:
            succs[p].append(n.id)
    pending = {nid: len(d) for nid, d in deps.items()}
    ready = [n.id for n in graph.nodes if pending[n.id] == 0]
    # weight gradients go first too: MindSpore's order computes a layer's weight gradient with its data
    # gradient, so it is held from there to the optimizer (its DryRun peaks with it)
    to_comm = _steps_to(comm_nodes | gradient_ends(graph), deps)
    reductions = gradient_reductions(graph) if comm_nodes else set()
    deferred: deque[int] = deque()
    result = []
    work: deque[int] = deque(ready if policy == "bfs" else reversed(ready))
    take = work.popleft if policy == "bfs" else work.pop
    while work or deferred:
        nid = take() if work else deferred.popleft()
        result.append(nid)
        released = list(deferred) if nid in reductions else []     # the readers of the collectives before it
        if released:
            deferred.clear()
        newly = []
        for s in succs[nid]:
            pending[s] -= 1
            if pending[s] == 0:
                (deferred if comm_nodes.intersection(deps[s]) else newly).append(s)
        newly.sort(key=lambda s: to_comm.get(s, len(succs)))
        work.extend(newly + released if policy == "bfs" else reversed(newly + released))
    if len(result) != len(graph.nodes):
        raise InvalidParamError(f"graph {graph.name!r} has a cycle; no execution order exists")
    return result


def defer_to_first_use(graph: Graph, node_order: list[int]) -> list[int]:
    """``node_order`` with each node that gains by waiting moved to just before its first reader.

    Kahn's order runs a node as soon as its inputs exist. In a training step that is too early for
    backward nodes that read only forward values: ReLU6's gradient masks ``Cast(Greater(y, 0))``
    are ready when the forward ends and then sit in memory, a float32 copy of each activation, until
    the backward reaches that layer. Run late, they live for a few nodes (MindSpore's kernel graph
    order emits a node when its user needs it, to the same effect).

    A node waits when its outputs outweigh the inputs it is the last reader of (waiting shrinks the
    former and stretches the latter); an input that another waiting node reads is stretched anyway
    (ReLU6's two masks both read y). Never a node that feeds a collective (its early start is what
    overlaps the communication, see :func:`order`) or whose outputs are kept to the end anyway. The
    estimate is per node, so the result is kept only if its peak live bytes are no higher.
    """
    deps = graph.dependencies()
    pos = {nid: i for i, nid in enumerate(node_order)}
    succs: dict[int, list[int]] = {nid: [] for nid in pos}
    for nid, ps in deps.items():
        for p in ps:
            succs[p].append(nid)
    readers: dict[int, list[int]] = {}
    for n in graph.nodes:
        for r in {graph.root(v) for v in n.inputs}:
            readers.setdefault(r, []).append(n.id)
    last_reader = {r: max(ids, key=pos.__getitem__) for r, ids in readers.items()}
    kept = {graph.root(v) for v in graph.outputs} | {graph.root(v) for v in graph.updates.values()}
    produced = set(graph.writers())
    # never deferred: what feeds a collective, and a gradient's last node (it runs where the backward
    # reaches it, as in MindSpore's order, not just before the optimizer)
    stays = set(_steps_to({n.id for n in graph.nodes if communication(n.op) is not None}, deps))
    stays |= gradient_ends(graph)
    if OPTIMIZER_AFTER_BACKWARD:
        stays.update(first_update_loads(graph)[0])
    size = lambda v: graph.values[v].nbytes  # noqa: E731
    held: set[int] = set()

    def waits(n: OpNode) -> bool:
        if n.id in held or n.id in stays or not succs[n.id] or kept.intersection(n.outputs):
            return False
        # an input n reads last is stretched, unless another reader of it waits too (and stretches it anyway)
        stretched = sum(size(r) for r in {graph.root(v) for v in n.inputs}
                        if r in produced and r not in kept and last_reader[r] == n.id
                        and not held.intersection(readers[r]))
        return sum(size(v) for v in n.outputs) > stretched

    grown = True
    while grown:                         # a few rounds: each new waiter can free its fellow readers
        waiting = [n.id for n in graph.nodes if waits(n)]
        held.update(waiting)
        grown = bool(waiting)
    result: list[int] = []
    placed: set[int] = set()
    for nid in node_order:
        if nid in held:
            continue
        # the node after its held producers, theirs first (iterative post-order DFS). A producer shared by
        # two held readers may be on the stack twice: the copy nearer the top places it, before whichever
        # reader needs it first; the other copy is skipped.
        stack = [(nid, False)]
        while stack:
            x, ready = stack.pop()
            if x in placed:
                continue
            if ready:
                placed.add(x)
                result.append(x)
                continue
            stack.append((x, True))
            stack.extend((p, False) for p in reversed(deps[x]) if p in held and p not in placed)
    result += [nid for nid in node_order if nid not in placed]     # unreachable (a held node has readers)
    return result if peak_memory(graph, result) <= peak_memory(graph, node_order) else list(node_order)


def _steps_to(targets: set[int], deps: dict[int, list[int]]) -> dict[int, int]:
    """For every node from which a node of ``targets`` can be reached: the fewest edges to one."""
    dist = {t: 0 for t in targets}
    frontier = deque(targets)
    while frontier:
        nid = frontier.popleft()
        for p in deps[nid]:
            if p not in dist:
                dist[p] = dist[nid] + 1
                frontier.append(p)
    return dist


# ------------------------------------------------------------------------------------------- streams

@dataclass
class StreamPlan:
    """Nodes on streams, with an event on every cross-stream data edge that stream order and earlier
    events do not already imply.

    ``schedule`` is the typed step list in issue order (see ``schedule.py``); ``events[e] = (producer
    node, consumer node)``: e is recorded on the producer's stream right after it and waited on the
    consumer's stream right before it.
    """

    stream_of: dict[int, int]
    schedule: list[ScheduleStep]
    events: list[tuple[int, int]] = field(default_factory=list)
    num_streams: int = 1


def _needed_edges(node_order: list[int], deps: dict[int, list[int]], stream_of: dict[int, int]) -> list[tuple[int, int]]:
    """The cross-stream data edges (producer, consumer) that need an event, in issue order: an edge is
    left out when the consumer's stream is already known to run after the producer, through an earlier
    wait on its stream and stream order, transitively (MindSpore's redundant-event elimination). The
    happens-before relation is the same as with an event on every edge, with far fewer events in flight:
    a backward pass reading hundreds of forward values of another stream waits once, not once each.

    ``reach[n][s]``: the index on stream s of the last node known finished before n starts (n's own
    stream included: the node before it)."""
    issued = {nid: i for i, nid in enumerate(node_order)}
    at: dict[int, int] = {}
    count: dict[int, int] = {}
    last_on: dict[int, int] = {}
    reach: dict[int, dict[int, int]] = {}
    needed: list[tuple[int, int]] = []
    for nid in node_order:
        s = stream_of[nid]
        at[nid] = count.get(s, 0)
        count[s] = at[nid] + 1
        mine = dict(reach[last_on[s]]) if s in last_on else {}
        if s in last_on:
            mine[s] = at[last_on[s]]
        # the latest issued producers first: waiting on them implies what they waited for
        for p in sorted(deps[nid], key=lambda p: -issued[p]):
            if stream_of[p] == s or mine.get(stream_of[p], -1) >= at[p]:
                continue
            needed.append((p, nid))
            for t, i in reach[p].items():
                if i > mine.get(t, -1):
                    mine[t] = i
            mine[stream_of[p]] = at[p]
        reach[nid] = mine
        last_on[s] = nid
    return needed


def assign_streams(graph: Graph, node_order: list[int], max_streams: int = 1) -> StreamPlan:
    """Put independent branches on their own streams, then insert events.

    Walking in execution order, a node continues the stream of its first input producer that has not
    handed its stream on yet (so a chain stays on one stream and a join continues one of its branches).
    The second and later consumers of a fork (and the second and later nodes that read only graph
    inputs/constants) open a new stream while fewer than ``max_streams`` exist; after that they stay on
    their first producer's stream (no event needed there). Collectives go to one communication stream
    of their own, beyond ``max_streams`` (as MindSpore runs HCCL tasks on their own stream), so they
    overlap the computation that does not need them; no computation continues that stream.
    """
    check_int(max_streams, "max_streams", minimum=1)
    deps = graph.dependencies()
    comm_nodes = {n.id for n in graph.nodes if communication(n.op) is not None}
    stream_of: dict[int, int] = {}
    handed_on: set[int] = set(comm_nodes)  # producers whose stream a consumer already continues
    source_stream_taken = False
    n_streams = 1
    comm_stream: int | None = None
    compute_nodes = [nid for nid in node_order if nid not in comm_nodes]
    for nid in compute_nodes:
        producers = [p for p in deps[nid] if p not in comm_nodes]
        heir = next((p for p in producers if p not in handed_on), None)
        if heir is not None:
            handed_on.add(heir)
            stream_of[nid] = stream_of[heir]
            continue
        if not producers and not source_stream_taken:
            source_stream_taken = True
            stream_of[nid] = 0
            continue
        if n_streams < max_streams:
            stream_of[nid] = n_streams
            n_streams += 1
        else:
            stream_of[nid] = stream_of[producers[0]] if producers else 0
    for nid in node_order:
        if nid in comm_nodes:
            if comm_stream is None:
                comm_stream, n_streams = n_streams, n_streams + 1
            stream_of[nid] = comm_stream
    events: list[tuple[int, int]] = []
    records: dict[int, list[int]] = {}
    waits: dict[int, list[int]] = {}
    for p, nid in _needed_edges(node_order, deps, stream_of):
        events.append((p, nid))
        records.setdefault(p, []).append(len(events) - 1)
        waits.setdefault(nid, []).append(len(events) - 1)
    schedule: list[ScheduleStep] = []
    for nid in node_order:
        s = stream_of[nid]
        schedule += [Wait(s, e) for e in waits.get(nid, ())]
        schedule.append(RunCollective(s, nid) if nid in comm_nodes else Run(s, nid))
        schedule += [RecordAfter(s, e) for e in records.get(nid, ())]
    return StreamPlan(stream_of, schedule, events, n_streams)
