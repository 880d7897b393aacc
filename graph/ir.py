"""The graph IR: values with static TensorDescs, kernel-op nodes, graph inputs, constants and outputs.

A *value* is one tensor, named by an int id, with a known shape and dtype. A *node* applies one op of
the kernel library (or a no-task op such as Reshape) to input values and defines output values.
Constants carry data (model parameters and literal tensors/scalars); graph inputs do not. ``nodes`` is
kept in a topological order (capture order), and every pass preserves that.

Shapes and dtypes come from ``ascendemu.kernels.library.infer_outputs`` for kernel ops, so the graph and
the kernels can never disagree; the no-task ops (which never reach a kernel) are inferred here.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidValueError
from ascendemu.kernels.library import infer_outputs
from ascendemu.kernels.signature import OpSignature, TensorDesc, jsonable

# Ops that only reinterpret the shape of their input: no kernel, the output aliases the input's memory.
# StopGradient is the identity that autodiff does not look through.
NO_TASK_OPS = ("Reshape", "ExpandDims", "Squeeze", "Flatten", "StopGradient")


@dataclass
class OpNode:
    """One op application. ``origins`` names the captured nodes a fused node replaces (else itself)."""

    id: int
    op: str
    attrs: dict[str, Any]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    full_name: str
    origins: tuple[str, ...] = ()

    def signature(self, graph: "Graph") -> OpSignature:
        return OpSignature.make(self.op, [graph.values[v] for v in self.inputs], **self.attrs)

    def to_json(self) -> dict:
        return {"id": self.id, "op": self.op, "attrs": jsonable(self.attrs), "inputs": list(self.inputs),
                "outputs": list(self.outputs), "full_name": self.full_name, "origins": list(self.origins)}


@dataclass
class WhileNode(OpNode):
    """A loop on the device: while ``cond`` computes true, ``body`` runs again (MindSpore's ``while`` on a
    tensor condition, which Ascend runs as LabelSwitch / LabelGoto tasks around the body's kernels).

    ``inputs`` are the outer graph's values: first the ``carried`` loop variables' initial values, then
    the values ``cond`` reads from outside the loop (``cond_free`` of them), then those ``body`` reads.
    ``cond`` takes (carried..., its free values...) and outputs one bool scalar; ``body`` takes
    (carried..., its free values...) and outputs the carried variables' next values, each of the shape
    and dtype it came in with. ``outputs`` are the carried variables' values when ``cond`` is false.
    ``where`` is the loop's file:line in the user's code (the trip-count guard names it). Passes never
    see one: the compiler splits a graph at its loops first (``graph.program``)."""

    cond: Graph | None = None
    body: Graph | None = None
    carried: int = 0
    cond_free: int = 0
    where: str = ""

    def signature(self, graph: "Graph") -> OpSignature:
        raise InvalidParamError(f"{self.full_name} is a While loop (at {self.where}), not a kernel op: compile "
                                f"its graph with graph.program.split, which runs its parts as ordinary graphs")

    def to_json(self) -> dict:
        return {**super().to_json(), "carried": self.carried, "cond_free": self.cond_free, "where": self.where,
                "cond": self.cond.structure_hash(), "body": self.body.structure_hash()}


@dataclass
class IfNode(OpNode):
    """A conditional on the device: ``then`` runs when the bool scalar ``inputs[0]`` is true, ``other``
    when it is false (MindSpore's ``if`` on a tensor condition, which Ascend runs as a LabelSwitch to the
    taken branch's tasks and a LabelGoto to the join; both branches are compiled, one runs).

    ``inputs`` are the outer graph's values: the predicate, then the values ``then`` reads from outside
    (``then_free`` of them), then those ``other`` reads. Each branch takes its free values and outputs
    the joined variables in order, of one shape and dtype in both; ``outputs`` are the taken branch's.
    ``where`` is the statement's file:line. Passes never see one: the compiler splits a graph at its
    control flow first (``graph.program``)."""

    then: Graph | None = None
    other: Graph | None = None
    then_free: int = 0
    where: str = ""

    def signature(self, graph: "Graph") -> OpSignature:
        raise InvalidParamError(f"{self.full_name} is an If (at {self.where}), not a kernel op: compile its graph "
                                f"with graph.program.split, which runs its branches as ordinary graphs")

    def to_json(self) -> dict:
        return {**super().to_json(), "then_free": self.then_free, "where": self.where,
                "then": self.then.structure_hash(), "other": self.other.structure_hash()}


CONTROL_NODES = (WhileNode, IfNode)     # nodes that hold graphs of their own: run as a program's parts


class StateSource(Protocol):
    """A model Parameter as graphs see it: mutable state whose newest copy may live on the device.

    ``version`` changes whenever the host data changes (so a device copy knows it is stale);
    ``host_data()`` reads the newest values (fetching them from the device if a graph updated them
    there); ``device_updated(fetch)`` says a graph wrote new values on the device, which ``fetch``
    copies back on the host's next read. Implemented by the front end's Parameter.
    """

    version: int

    def host_data(self) -> np.ndarray: ...

    def device_updated(self, fetch: Callable[[], np.ndarray]) -> None: ...


@dataclass
class Constant:
    """Data a graph carries: a model Parameter (``is_parameter``) or a literal tensor or scalar.

    Parameters are hashed by shape only (new weights reuse a compiled graph); literals are hashed by
    value too, because fusion folds scalar literals into kernel programs. A parameter with a
    ``source`` reads its data from it only when someone needs the bytes (capture never does).
    """

    name: str
    value: np.ndarray | None
    is_parameter: bool
    source: StateSource | None = None

    @property
    def data(self) -> np.ndarray:
        return self.value if self.source is None else self.source.host_data()


@dataclass
class Graph:
    name: str = "graph"
    values: dict[int, TensorDesc] = field(default_factory=dict)
    nodes: list[OpNode] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    constants: dict[int, Constant] = field(default_factory=dict)
    outputs: list[int] = field(default_factory=list)
    # value id -> the value whose memory it shares (filled by the no-task pass; always a root, never an alias)
    aliases: dict[int, int] = field(default_factory=dict)
    # parameter constant -> the value that becomes its new contents when the graph has run (Assign,
    # optimizer updates, BatchNorm moving statistics); reads inside the graph see the old contents
    updates: dict[int, int] = field(default_factory=dict)
    _next_value: int = 0
    _next_node: int = 0
    _hash: str | None = field(default=None, repr=False, compare=False)
    # node id -> nodes that must finish before it though it reads none of their outputs (MindSpore's
    # UpdateState/Depend): an update written in place waits for every other reader of the old contents.
    # Set by compile passes after capture (graph.passes.write_updates_in_place); not part of the hash.
    control: dict[int, tuple[int, ...]] = field(default_factory=dict, compare=False)
    # full names of captured forward nodes whose outputs the backward recomputes instead of keeping
    # (``Cell.recompute``, ``Primitive.recompute``; the pass is ``graph.recompute``); part of the hash
    recompute: set[str] = field(default_factory=set)
    # node id -> its pipeline phase's place in the stage's 1F1B order (graph.parallel.pipeline); part of the
    # hash (it orders the compiled schedule)
    phases: dict[int, int] = field(default_factory=dict, compare=False)
    # alias -> its byte offset inside its root, for the views of a contiguous block (a fused AllReduce's
    # gradients, graph.passes.contiguous_buckets); an alias not listed starts at its root's address.
    # Set by compile passes after capture; not part of the hash
    view_offsets: dict[int, int] = field(default_factory=dict, compare=False)

    # ------------------------------------------------------------------ building
    def new_value(self, desc: TensorDesc) -> int:
        self._hash = None
        vid = self._next_value
        self._next_value += 1
        self.values[vid] = desc
        return vid

    def add_input(self, desc: TensorDesc) -> int:
        vid = self.new_value(desc)
        self.inputs.append(vid)
        return vid

    def add_constant(self, name: str, data: np.ndarray, is_parameter: bool, dtype: str | None = None) -> int:
        arr = np.asarray(data)
        if not uniform(arr):                       # a broadcast scalar stays a view: no bytes until uploaded
            arr = np.ascontiguousarray(arr)
        vid = self.new_value(TensorDesc(arr.shape, dtype or str(arr.dtype)))
        self.constants[vid] = Constant(name, arr, is_parameter)
        return vid

    def add_state(self, name: str, desc: TensorDesc, source: StateSource) -> int:
        """A parameter constant whose data stays with ``source`` (read only when bytes are needed)."""
        vid = self.new_value(desc)
        self.constants[vid] = Constant(name, None, True, source)
        return vid

    def add_update(self, param: int, value: int) -> None:
        """After the graph runs, parameter ``param`` holds ``value`` (same shape and dtype)."""
        c = self.constants.get(param)
        if c is None or not c.is_parameter:
            raise InvalidParamError(f"graph {self.name!r}: only a Parameter can be assigned, not value {param}")
        if self.values[value] != self.values[param]:
            raise InvalidParamError(f"assigning {self.values[value]} to parameter {c.name} of "
                                    f"{self.values[param]}: shape and dtype must match")
        self._hash = None
        self.updates[param] = value

    def set_recompute(self, names: Iterable[str], on: bool) -> None:
        """Mark (``on``) or unmark the captured nodes ``names`` as recomputed in the backward."""
        self._hash = None
        if on:
            self.recompute.update(names)
        else:
            self.recompute.difference_update(names)

    def new_node_id(self) -> int:
        nid = self._next_node
        self._next_node += 1
        return nid

    def add_node(self, op: str, inputs: list[int] | tuple[int, ...], attrs: dict[str, Any] | None = None,
                 full_name: str | None = None) -> OpNode:
        """Append a node; its output descs come from shape inference (which validates the op)."""
        attrs = dict(attrs or {})
        for v in inputs:
            if v not in self.values:
                raise InvalidParamError(f"{op}: input value {v} is not defined in graph {self.name!r}")
        descs = infer_node_outputs(op, [self.values[v] for v in inputs], attrs)
        nid = self.new_node_id()
        outs = tuple(self.new_value(d) for d in descs)
        name = full_name or f"Default/{op}-op{nid + 1}"
        node = OpNode(nid, op, attrs, tuple(inputs), outs, name, (name,))
        self.nodes.append(node)
        self._hash = None
        return node

    def add_while(self, cond: "Graph", body: "Graph", init: list[int], cond_free: list[int], body_free: list[int],
                  full_name: str, where: str) -> WhileNode:
        """Append a device loop (:class:`WhileNode`) over the carried values ``init``; its outputs are
        the carried values once ``cond`` is false (same shapes and dtypes as ``init``)."""
        inputs = tuple(init) + tuple(cond_free) + tuple(body_free)
        for v in inputs:
            if v not in self.values:
                raise InvalidParamError(f"While: input value {v} is not defined in graph {self.name!r}")
        nid = self.new_node_id()
        outs = tuple(self.new_value(self.values[v]) for v in init)
        node = WhileNode(nid, "While", {}, inputs, outs, full_name, (full_name,), cond=cond, body=body,
                         carried=len(init), cond_free=len(cond_free), where=where)
        self.nodes.append(node)
        self._hash = None
        return node

    def add_if(self, pred: int, then: "Graph", other: "Graph", then_free: list[int], other_free: list[int],
               full_name: str, where: str) -> IfNode:
        """Append a conditional (:class:`IfNode`) on the bool scalar ``pred``; its outputs are the taken
        branch's (``then``'s and ``other``'s outputs agree in shape and dtype)."""
        inputs = (pred,) + tuple(then_free) + tuple(other_free)
        for v in inputs:
            if v not in self.values:
                raise InvalidParamError(f"If: input value {v} is not defined in graph {self.name!r}")
        nid = self.new_node_id()
        outs = tuple(self.new_value(then.values[v]) for v in then.outputs)
        node = IfNode(nid, "If", {}, inputs, outs, full_name, (full_name,), then=then, other=other,
                      then_free=len(then_free), where=where)
        self.nodes.append(node)
        self._hash = None
        return node

    def has_loops(self) -> bool:
        """Whether the graph holds control flow on the device (While or If nodes): it runs as a program."""
        return any(isinstance(n, CONTROL_NODES) for n in self.nodes)

    # ------------------------------------------------------------------ queries
    def producers(self) -> dict[int, OpNode]:
        return {v: n for n in self.nodes for v in n.outputs}

    def consumers(self) -> dict[int, list[OpNode]]:
        """value id -> nodes reading it, in node order (a node reading a value twice is listed once)."""
        out: dict[int, list[OpNode]] = {v: [] for v in self.values}
        for n in self.nodes:
            for v in dict.fromkeys(n.inputs):
                out[v].append(n)
        return out

    def writers(self) -> dict[int, list[int]]:
        """Root value -> ids of the nodes writing it, in node order: a node output's producer, or every
        producer of a view of a contiguous block (``view_offsets``: the block has no producer of its own).
        Never a graph input or constant: an update written into its Parameter is ordered by ``control``."""
        fixed = set(self.inputs) | set(self.constants)
        out: dict[int, list[int]] = {}
        for n in self.nodes:
            for v in n.outputs:
                r = self.root(v)
                if r in fixed or (r != v and v not in self.view_offsets):   # written in place (an Assign into
                    continue                                                # a tensor): ordered by ``control``
                if n.id not in out.setdefault(r, []):
                    out[r].append(n.id)
        return out

    def dependencies(self) -> dict[int, list[int]]:
        """node id -> ids of the nodes writing its inputs (through aliases: every writer of a contiguous
        block), in input order, then the nodes it must wait for without reading them (``control``)."""
        writers = self.writers()
        deps = {}
        for n in self.nodes:
            seen: list[int] = []
            for v in n.inputs:
                for p in writers.get(self.root(v), ()):
                    if p != n.id and p not in seen:
                        seen.append(p)
            seen += [p for p in self.control.get(n.id, ()) if p not in seen]
            deps[n.id] = seen
        return deps

    def root(self, vid: int) -> int:
        return self.aliases.get(vid, vid)

    def read_values(self, outputs: list[int] | None = None) -> set[int]:
        """Values something reads: a node's input, an output (``outputs``, else the graph's), a Parameter an
        update writes or the value it writes (as listed, not through aliases)."""
        outs = self.outputs if outputs is None else outputs
        return ({v for n in self.nodes for v in n.inputs} | set(outs) | set(self.updates)
                | set(self.updates.values()))

    def node(self, nid: int) -> OpNode:
        for n in self.nodes:
            if n.id == nid:
                return n
        raise InvalidParamError(f"graph {self.name!r} has no node {nid}")

    def copy(self) -> "Graph":
        """A structural copy (nodes, maps) sharing constant data, for passes that rewrite."""
        g = Graph(self.name, dict(self.values), [dataclasses.replace(n, attrs=dict(n.attrs)) for n in self.nodes],
                  list(self.inputs), dict(self.constants), list(self.outputs), dict(self.aliases),
                  dict(self.updates), self._next_value, self._next_node)
        g.view_offsets = dict(self.view_offsets)
        g.control = dict(self.control)
        g.recompute = set(self.recompute)
        g.phases = self.phases
        return g

    def validate(self) -> None:
        """Every value is defined once, before use, and every used value is known."""
        defined = set(self.inputs) | set(self.constants)
        for n in self.nodes:
            for v in n.inputs:
                if v not in defined and self.root(v) not in defined:
                    raise InvalidParamError(f"node {n.full_name} reads value {v} before it is defined")
            for v in n.outputs:
                if v in defined:
                    raise InvalidParamError(f"value {v} is defined twice (node {n.full_name})")
                defined.add(v)
        for v in self.outputs + list(self.updates.values()):
            if v not in defined and self.root(v) not in defined:
                raise InvalidParamError(f"graph output {v} is never defined")

    def structure_hash(self) -> str:
        """Stable identity for the compile cache: ops, attrs, names, shapes; parameter data excluded.

        Value ids are renumbered in order of definition so the hash does not depend on id gaps.
        Computed once per graph and carried (a captured graph is complete when it is hashed; passes
        rewrite copies, which hash afresh).
        """
        if self._hash is None:
            self._hash = self._compute_hash()
        return self._hash

    def anonymous_hash(self) -> str:
        """:meth:`structure_hash` without node names or literal constants' names: equal for two captures
        of the same code (a training step's loss and its gradient's replayed forward capture one loop
        twice, under different ``While-opN`` names), which ``graph.program.merge_repeated`` merges."""
        return self._compute_hash(names=False)

    def _compute_hash(self, names: bool = True) -> str:
        ids: dict[int, int] = {}

        def ren(v: int) -> int:
            return ids.setdefault(v, len(ids))

        doc: dict[str, Any] = {"inputs": [[ren(v), self.values[v].to_json()] for v in self.inputs]}
        consts = []
        for v in sorted(self.constants):
            c = self.constants[v]
            entry = [ren(v), self.values[v].to_json(), c.name if names or c.is_parameter else "", c.is_parameter]
            if not c.is_parameter:
                data = first_element(c.data) if uniform(c.data) else c.data   # one element says it all
                entry.append(hashlib.sha256(data.tobytes()).hexdigest())
            consts.append(entry)
        doc["constants"] = consts
        def sub(g: "Graph") -> str:
            return g.structure_hash() if names else g.anonymous_hash()

        doc["nodes"] = [[n.op, jsonable(n.attrs), [ren(v) for v in n.inputs],
                         [[ren(v), self.values[v].to_json()] for v in n.outputs], n.full_name if names else ""]
                        + ([sub(n.cond), sub(n.body), n.carried, n.cond_free] if isinstance(n, WhileNode) else [])
                        + ([sub(n.then), sub(n.other), n.then_free] if isinstance(n, IfNode) else [])
                        for n in self.nodes]
        doc["aliases"] = sorted([ren(a), ren(r), self.values[a].to_json()] for a, r in self.aliases.items())
        doc["outputs"] = [ren(v) for v in self.outputs]
        doc["updates"] = sorted([ren(p), ren(v)] for p, v in self.updates.items())
        if self.recompute:          # only then: the hashes of graphs without recompute stay as they were
            doc["recompute"] = [i for i, n in enumerate(self.nodes) if n.full_name in self.recompute]
        if self.phases:             # likewise: only pipeline stages' graphs have phases
            doc["phases"] = [self.phases.get(n.id, -1) for n in self.nodes]
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def summary(self) -> str:
        lines = [f"graph {self.name}: inputs {self.inputs}, outputs {self.outputs}"]
        for n in self.nodes:
            outs = ", ".join(f"%{v}:{list(self.values[v].shape)}" for v in n.outputs)
            lines.append(f"  {outs} = {n.op}({', '.join(f'%{v}' for v in n.inputs)}) {n.full_name}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------- shape inference

def uniform(arr: np.ndarray) -> bool:
    """Whether ``arr`` is one element broadcast (every stride 0): a folded ``zeros_like`` keeps no bytes of
    its own until it is uploaded, however large its shape."""
    return arr.size > 0 and not any(arr.strides)


def first_element(arr: np.ndarray) -> np.ndarray:
    """``arr``'s first element (all of a :func:`uniform` array), as a 0-d numpy value of its dtype."""
    return arr[(0,) * arr.ndim]


def infer_node_outputs(op: str, inputs: list[TensorDesc], attrs: dict[str, Any]) -> tuple[TensorDesc, ...]:
    if op in NO_TASK_OPS:
        if len(inputs) != 1:
            raise InvalidParamError(f"{op}: takes 1 input (x), got {len(inputs)}")
        return (TensorDesc(no_task_shape(op, inputs[0].shape, attrs), inputs[0].dtype),)
    return infer_outputs(OpSignature.make(op, inputs, **attrs))


def no_task_shape(op: str, shape: tuple[int, ...], attrs: dict[str, Any]) -> tuple[int, ...]:
    """Output shape of a no-task op (these never reach the kernel library, so they are inferred here)."""
    size = int(np.prod(shape, dtype=np.int64))
    if op == "Reshape":
        target = list(attrs["shape"])
        if target.count(-1) > 1:
            raise InvalidValueError(f"Reshape: shape {tuple(target)} has more than one -1")
        known = int(np.prod([t for t in target if t != -1], dtype=np.int64))
        if -1 in target:
            if known == 0 or size % known:
                raise InvalidValueError(f"Reshape: cannot reshape {shape} to {tuple(target)}")
            target[target.index(-1)] = size // known
        if int(np.prod(target, dtype=np.int64)) != size or any(t < 0 for t in target):
            raise InvalidValueError(f"Reshape: cannot reshape {shape} ({size} elements) to {tuple(target)}")
        return tuple(target)
    if op == "ExpandDims":
        axis = attrs["axis"]
        rank = len(shape) + 1
        if not -rank <= axis < rank:
            raise InvalidValueError(f"ExpandDims: axis {axis} out of range for output rank {rank}")
        axis %= rank
        return shape[:axis] + (1,) + shape[axis:]
    if op == "Squeeze":
        axes = attrs.get("axis", ())
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        if not axes:
            return tuple(s for s in shape if s != 1)
        normed = set()
        for a in axes:
            if not -len(shape) <= a < len(shape) or shape[a] != 1:
                raise InvalidValueError(f"Squeeze: axis {a} of shape {shape} is not a dimension of size 1")
            normed.add(a % len(shape))
        return tuple(s for d, s in enumerate(shape) if d not in normed)
    if op == "StopGradient":
        return shape
    if op == "Flatten":
        if not shape:
            raise InvalidValueError("Flatten: input must have rank >= 1, got a scalar")
        return (shape[0], int(np.prod(shape[1:], dtype=np.int64)))
    raise InvalidParamError(f"{op} is not a no-task op; no-task ops are {NO_TASK_OPS}")
