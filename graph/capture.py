"""GRAPH_MODE capture: run a Cell's ``construct`` once on symbolic tensors and record every op.

A symbolic tensor knows its shape and dtype (from shape inference) but has no data, so Python code
that needs tensor *values* (``if x > 0``, ``float(t)``, iterating a tensor, ``t.asnumpy()``) cannot
be captured and raises :class:`GraphCaptureError`. Python control flow over static things (shapes,
Python numbers, ``range``) simply runs during capture: loops unroll, branches pick one side.

Full names follow MindSpore: ``Default/<attr>-<CellClass>/.../<Op>-op<N>``, N counting ops of the graph
from 1 in capture order; the top-level cell is ``Default`` itself (as in the seed's
``Default/Square-op1``).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.kernels.signature import TensorDesc

from .ir import Graph, first_element, uniform

ROOT_SCOPE = "Default"
# Literal constants up to this many elements are deduplicated by value (scalars from `x * 2 + 1`).
LITERAL_DEDUP_MAX_ELEMENTS = 16
# Ops MindSpore's compiler evaluates while it compiles when every input is a literal (their infer_value; its
# opt_a pass, after the parallel split, so at each rank's shapes): the result is a graph constant, held in
# device memory for the graph's life (memory_block.csv "ConstantValue"), not a kernel each step.
# ``ops.zeros_like`` / ``ones_like`` / ``fill`` are BroadcastTo of a scalar literal: the zeros
# _TrainGradAccuStepCell assigns to its accu_grads are 4 MiB constants in MindSpore 2.10's DryRun of
# tests/fixtures/msdryrun/mlp_pipeline.py (docs/ARCHITECTURE.md, DryRun memory)
FOLDED_OPS = ("BroadcastTo",)


class GraphCaptureError(FeatureNotSupportedError):
    """Capture met Python code that GRAPH_MODE cannot express (e.g. control flow on tensor values)."""


def data_dependent_error(what: str, tensor: str) -> GraphCaptureError:
    return GraphCaptureError(
        f"{what} needs the value of {tensor}, which is unknown while GRAPH_MODE captures the graph: "
        f"data-dependent control flow is not supported in GRAPH_MODE. Use "
        f"context.set_context(mode=context.PYNATIVE_MODE) for this network, or make the condition "
        f"static (depend on shapes or Python values, not on tensor data).")


_local = threading.local()
# A Parameter assigned inside a device loop's cond or body (Tracer.assign in a nested capture)
_LOOP_ASSIGN = ("a Parameter assigned inside the `while` loop on a tensor condition at {where}: ascendemu's device "
                "loops carry tensors, not Parameter updates; carry the new value in a variable and assign it "
                "after the loop")


def current_tracer() -> "Tracer | None":
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


class Folding:
    """The literals one capture's :data:`FOLDED_OPS` made, in order: a new one per fold, as MindSpore keeps one
    constant per folded node, except that a gradient's replayed forward (:meth:`Tracer.replay`, which counts
    from 0 again) takes the first pass's, fold for fold, so common-subexpression elimination still merges the
    two passes."""

    def __init__(self) -> None:
        self.made: list[int] = []
        self.count = 0                                      # folds traced so far

    @staticmethod
    def applies(graph: Graph, op: str, inputs: list[int], attrs: dict[str, Any]) -> bool:
        """Whether ``op`` folds: one of FOLDED_OPS, every input a literal, a static shape."""
        consts = graph.constants
        return op in FOLDED_OPS and all(v in consts and not consts[v].is_parameter for v in inputs) and \
            -1 not in attrs["shape"]

    def literal(self, tracer: "Tracer", data: np.ndarray, dtype: str) -> int:
        index, self.count = self.count, self.count + 1
        if index < len(self.made):
            vid = self.made[index]
            same = tracer.graph.constants[vid].data
            if same.shape == data.shape and str(tracer.graph.values[vid].dtype) == dtype and \
                    np.array_equal(first_element(same), first_element(data), equal_nan=True):
                return vid
        vid = tracer.literal(data, dtype)
        self.made.append(vid)
        return vid


class Tracer:
    """Builds one Graph while a capture is active; ops call :meth:`apply`."""

    def __init__(self, name: str, parent: "Tracer | None" = None):
        self.graph = Graph(name)
        self.scopes = [ROOT_SCOPE] if parent is None else list(parent.scopes)
        # a loop's cond or body is captured into a graph of its own, nested in the capture around it
        # (``parent``); the values it reads from there become its inputs after the leading ones
        # (``free``: the parent's value ids, in input order)
        self.parent = parent
        self.where = ""                                     # a nested capture's loop: its file:line
        self.free: list[int] = []
        self._free_of: dict[tuple[int, int], int] = {}
        self.op_count = 0
        self._objects: dict[int, tuple[Any, int]] = {}   # id(tensor) -> (tensor kept alive, value id)
        self._literals: dict[tuple, int] = {}
        self._states: dict[int, int] = {}                   # id(parameter) -> its constant's value id
        self._first_reads: dict[int, int] = {}              # id(parameter) -> the value its first read saw
        self._draws = 0                                     # functional random calls traced so far
        self.folds = Folding()
        self._literal_count = 0
        self._replaying = 0
        self._prints: list[tuple[bool, tuple]] = []         # (made in a replay, items) per ops.Print
        # a tensor `if` becomes Select of both branches, not an If node (see if_converts); inherited
        self.select_branches = parent.select_branches if parent is not None else False
        # SEMI_AUTO_PARALLEL: the sharding pass (graph.parallel.sharding.ShardingPass) every op goes through
        self.sharding: Any = None

    @contextmanager
    def active(self) -> Iterator["Tracer"]:
        stack = _local.__dict__.setdefault("stack", [])
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    @contextmanager
    def scope(self, label: str) -> Iterator[None]:
        self.scopes.append(label)
        try:
            yield
        finally:
            self.scopes.pop()

    def input(self, desc: TensorDesc) -> int:
        return self.graph.add_input(desc)

    def constant(self, obj: Any, data: np.ndarray, name: str | None, is_parameter: bool, dtype: str) -> int:
        """The value for a concrete tensor ``obj`` (one value per object, however often it is used)."""
        known = self._objects.get(id(obj))
        if known is not None:
            return known[1]
        key = None
        if not is_parameter and data.size <= LITERAL_DEDUP_MAX_ELEMENTS:
            key = (dtype, data.shape, data.tobytes())
            if key in self._literals:
                return self._literals[key]
        if name is None:
            name = f"const{self._literal_count}"
            self._literal_count += 1
        vid = self.graph.add_constant(name, data, is_parameter, dtype)
        self._objects[id(obj)] = (obj, vid)
        if key is not None:
            self._literals[key] = vid
        return vid

    def state(self, obj: Any, name: str, desc: TensorDesc) -> int:
        """Read parameter ``obj``: its constant, or what the graph last assigned to it. The first read
        is remembered for :meth:`replay`."""
        vid = self._current(obj, name, desc)
        self._first_reads.setdefault(id(obj), vid)
        return vid

    def _current(self, obj: Any, name: str, desc: TensorDesc) -> int:
        known = self._objects.get(id(obj))
        if known is not None:
            return known[1]
        if self.parent is not None:     # a loop's graph reads the parameter as a free value: what it holds
            vid = self.import_value(self.parent, self.parent.state(obj, name, desc))   # where the loop runs,
            self._objects[id(obj)] = (obj, vid)             # and its gradient is the loop's (graph.while_grad)
            return vid
        vid = self.graph.add_state(name, desc, obj)
        self._objects[id(obj)] = (obj, vid)
        self._states[id(obj)] = vid
        return vid

    def assign(self, obj: Any, name: str, desc: TensorDesc, value: int) -> None:
        """Parameter ``obj`` holds ``value`` from here on: later reads in this graph see it, and the
        parameter's own memory receives it when the graph has run."""
        if self.parent is not None:
            raise GraphCaptureError(_LOOP_ASSIGN.format(where=self.where))
        self._current(obj, name, desc)
        if self.sharding is not None and self.sharding.computed_elsewhere(value):
            # another pipeline stage's Parameter (its stage updates it; the capture's end drops this): recorded
            # unchecked, its placeholder holds that stage's slice
            self.graph.updates[self._states[id(obj)]] = value
            self._objects[id(obj)] = (obj, value)
            return
        shape = self.graph.values[self._states[id(obj)]].shape
        if self.graph.values[value].shape != shape:    # a folded zeros_like of a sliced Parameter's global shape
            refolded = self.refold(value, shape)
            value = value if refolded is None else refolded
        self.graph.add_update(self._states[id(obj)], value)
        self._objects[id(obj)] = (obj, value)

    @contextmanager
    def replay(self) -> Iterator[None]:
        """Trace a forward pass again: a gradient's own forward after ``loss = net(x)``
        (TrainOneStepCell), which must compute what the first pass computed.

        Inside, every parameter read so far reads what its first read saw (BatchNorm's moving
        statistics, random generator states: as before the first pass assigned them) and functional
        random calls are counted from 0 again (:meth:`draw`), so the pass computes the same nodes from
        the same values, draws the same random numbers (one dropout mask per step), and
        common-subexpression elimination merges the two passes: a network with BatchNorm runs its
        forward once per step. After it, every state already assigned before keeps its first new
        value, so a training step moves BatchNorm's moving statistics and the generators' offsets
        once, as MindSpore's does.
        """
        before = dict(self.graph.updates)
        rewound = {key: self._objects[key] for key in self._first_reads}
        for key, (obj, _) in rewound.items():
            self._objects[key] = (obj, self._first_reads[key])
        draws, self._draws = self._draws, 0
        folds, self.folds.count = self.folds.count, 0
        self._replaying += 1
        try:
            yield
        finally:
            self._replaying -= 1
            self._draws = max(draws, self._draws)
            self.folds.count = max(folds, self.folds.count)
            self._objects.update(rewound)
            owner = {vid: key for key, vid in self._states.items()}
            for param, value in before.items():
                if self.graph.updates.get(param) != value:
                    self.graph.updates[param] = value
                    obj = self._objects[owner[param]][0]
                    self._objects[owner[param]] = (obj, value)

    def if_converts(self) -> bool:
        """Whether a tensor ``if`` captured here is if-converted (both branches, joined by Select) rather
        than an If node: inside a gradient's forward (:meth:`replay`; autodiff differentiates a Select,
        not an If), in a capture made with ``select_branches``, or nested in either."""
        t: Tracer | None = self
        while t is not None:
            if t._replaying or t.select_branches:
                return True
            t = t.parent
        return False

    def draw(self) -> int:
        """The index of this functional random call among the graph's (``ops.dropout``): with the
        graph's name it identifies the call site, whose generator state persists across steps."""
        self._draws += 1
        return self._draws - 1

    @contextmanager
    def updates_unless(self, skip: int) -> Iterator[None]:
        """State updates made inside take effect only where the bool value ``skip`` is False: each
        becomes ``Select(skip, old, new)`` (old: the state's value when the block began), so a
        skipped optimizer step leaves its parameters and their state bit for bit as they were,
        decided on the device (MindSpore's ``if not overflow: optimizer(grads)``)."""
        before = {key: self._objects[key][1] for key in self._states}
        yield
        for key, state in self._states.items():
            new = self.graph.updates.get(state)
            old = before.get(key, state)
            if new is None or new == old:
                continue
            (kept,) = self.apply("Select", [skip, old, new], {})
            self.graph.updates[state] = kept
            self._objects[key] = (self._objects[key][0], kept)

    def branch_state(self) -> dict[int, int]:
        """What each parameter read so far currently holds (id(parameter) -> value): the state a
        branch of a tensor ``if`` starts from and ends with (:meth:`join_branches`)."""
        return {key: self._objects[key][1] for key in self._states}

    def rewind(self, state: dict[int, int]) -> None:
        """Every parameter holds what it held in ``state`` again (the other branch starts from there);
        a parameter first read since keeps its constant."""
        for key, state_vid in self._states.items():
            vid = state.get(key, state_vid)
            self._objects[key] = (self._objects[key][0], vid)
            if vid == state_vid:
                self.graph.updates.pop(state_vid, None)
            else:
                self.graph.updates[state_vid] = vid

    def join_branches(self, cond: int, then: dict[int, int], other: dict[int, int]) -> None:
        """After both branches of a tensor ``if`` were traced (``then`` and ``other``: their
        :meth:`branch_state`), each parameter that the branches left holding different values holds
        ``Select(cond, then's, other's)``: the device picks the branch's state update (an optimizer
        step skipped on overflow leaves every parameter bit for bit)."""
        for key, state_vid in self._states.items():
            t, o = then.get(key, state_vid), other.get(key, state_vid)
            if t == o:
                continue
            (kept,) = self.apply("Select", [cond, t, o], {})
            self.graph.updates[state_vid] = kept
            self._objects[key] = (self._objects[key][0], kept)

    def print_(self, items: tuple) -> None:
        """Record one ``ops.Print``: its items are text, or values the host prints once the graph has run."""
        self._prints.append((self._replaying > 0, items))

    def prints(self) -> list[tuple]:
        """The recorded prints, in order. A replayed forward repeats the first one's prints, so replay
        prints count only when the graph has no others (a gradient called without a forward)."""
        first = [items for replayed, items in self._prints if not replayed]
        return first or [items for _, items in self._prints]

    def literal(self, data: np.ndarray, dtype: str) -> int:
        """A literal constant made by the compiler itself (autodiff's ones and zeros, scalars)."""
        return self.constant(data, data, None, False, dtype)

    def apply(self, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        if self.sharding is not None:          # the pass records this rank's share of the op
            return self.sharding.apply(self, op, inputs, attrs)
        return self.record_node(op, inputs, attrs)

    def record_node(self, op: str, inputs: list[int], attrs: dict[str, Any]) -> tuple[int, ...]:
        """Record one op node as it is (``apply`` without the sharding pass); an op of :data:`FOLDED_OPS`
        whose inputs are all literals becomes its result, a literal (a zero-copy broadcast view)."""
        if self.folds.applies(self.graph, op, inputs, attrs):
            return (self.folds.literal(self, np.broadcast_to(self.graph.constants[inputs[0]].data, attrs["shape"]),
                                       self.graph.values[inputs[0]].dtype),)
        self.op_count += 1
        full_name = "/".join(self.scopes) + f"/{op}-op{self.op_count}"
        try:
            node = self.graph.add_node(op, inputs, attrs, full_name)
        except InvalidParamError as exc:
            raise type(exc)(f"while capturing {full_name}: {exc.message}") from None
        return node.outputs

    def refold(self, vid: int, shape: tuple[int, ...]) -> int | None:
        """The folded literal ``vid`` (one element broadcast) folded again at ``shape``, a slice's: MindSpore
        folds after its parallel split, so each rank holds its slice's constant; None for any other value."""
        const = self.graph.constants.get(vid)
        if const is None or const.is_parameter or not uniform(const.data):
            return None
        return self.literal(np.broadcast_to(first_element(const.data), shape), self.graph.values[vid].dtype)

    def nested(self, label: str, where: str = "") -> "Tracer":
        """A capture nested in this one, for a loop's cond or body: its nodes are named under ``label``;
        ``where`` is the loop's file:line (errors name it)."""
        sub = Tracer(f"{self.graph.name}/{label}", parent=self)
        sub.scopes.append(label)
        sub.where = where or label
        return sub

    def import_value(self, owner: "Tracer", vid: int) -> int:
        """Value ``vid`` of ``owner``, this capture or one it is nested in (a loop body reading a tensor
        computed before the loop), as a value of this graph: owner's own, or an input fed with it."""
        if owner is self:
            return vid
        key = (id(owner), vid)
        local = self._free_of.get(key)
        if local is None:
            if self.parent is None:
                raise GraphCaptureError("a symbolic tensor from another graph capture was used here; tensors "
                                        "created inside one construct cannot be kept and reused in another")
            outer = self.parent.import_value(owner, vid)
            local = self.graph.add_input(self.parent.graph.values[outer])
            self.free.append(outer)
            self._free_of[key] = local
        return local

    def finish(self, outputs: list[int], where: str) -> Graph:
        """The nested graph of a loop's cond or body, with ``outputs``: a Parameter it assigns or a value
        it prints would need the loop's every iteration to reach the host, which is refused."""
        if self.graph.updates:
            raise GraphCaptureError(_LOOP_ASSIGN.format(where=where))
        if self._prints:
            raise GraphCaptureError(f"ops.Print inside the `while` loop on a tensor condition at {where} is not "
                                    f"supported; print the carried values after the loop")
        self.graph.outputs = list(outputs)
        self.graph.validate()
        return self.graph

    def describe(self, vid: int) -> str:
        """A user-facing name for a value: which op produced it, or which graph input it is."""
        if vid in self.graph.inputs:
            return f"graph input {self.graph.inputs.index(vid)}"
        for node in reversed(self.graph.nodes):
            if vid in node.outputs:
                return f"tensor {node.full_name} output {node.outputs.index(vid)}"
        return f"tensor %{vid}"


# ------------------------------------------------------------------------------------ outputs

def rebuild_outputs(structure: Any, tensors: list[Any]) -> Any:
    """Put result tensors back into the shape ``construct`` returned."""
    kind, payload = structure
    if kind == "tensor":
        return tensors[payload]
    if kind == "static":
        return payload
    if kind == "dict":
        return {k: rebuild_outputs(s, tensors) for k, s in payload}
    items = [rebuild_outputs(s, tensors) for s in payload]
    return tuple(items) if kind == "tuple" else items
