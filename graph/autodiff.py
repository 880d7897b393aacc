"""Reverse-mode automatic differentiation of a captured graph, from each op's backward rule.

``differentiate`` appends the backward graph of one output to the graph being captured: it walks the
nodes between the differentiated values (``wrt``) and the output in reverse capture order and calls
each op's ``grad`` rule (its :class:`~ascendemu.kernels.opdef.OpDef` stanza), which emits ordinary
ops of the kernel library through a :class:`Builder`. Backward ops are therefore graph nodes like any
other: O0 launches each as its own kernel, O1 fuses elementwise backward chains, O2 sinks forward,
backward and update together under one static memory plan. Names follow MindSpore's
``Gradients/<forward scope>/grad<Op>/<Op>-op<N>``.

Gradients of one value from several consumers are summed (Add); a value the output does not depend
on gets zeros; integer and bool values carry no gradient. The no-task ops (Reshape, ExpandDims,
Squeeze, Flatten) differentiate to a Reshape back to their input's shape; StopGradient blocks.
A :class:`GradientHook` (the front end's HookBackward, InsertGradientOf, Morph's bprop) runs a user
function on gradients while the backward graph is built; its ops become backward nodes too. A device
loop (While node) differentiates to a backward loop (``graph.while_grad``).
"""
from __future__ import annotations

import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.kernels.opdef import GradCall
from ascendemu.kernels.registry import REGISTRY
from ascendemu.kernels.signature import OpSignature, TensorDesc

from .capture import Tracer
from .ir import NO_TASK_OPS, Graph, OpNode, WhileNode
from .while_grad import while_backward

__all__ = ["Builder", "differentiate", "DIFFERENTIABLE_DTYPES", "GRADIENTS_SCOPE", "GradientHook", "add_gradient_hook"]

# Floating values carry gradients; integers only as INTEGER_DTYPES says.
DIFFERENTIABLE_DTYPES = ("float32", "float16", "float64", "bfloat16")
# Integer tensors MindSpore 2.10 differentiates (measured: grad of ``x + y`` over int tensors is ones in
# their dtype, static_graph.md): gradients run along integer paths that start at an integer input being
# differentiated, and an integer output takes ones as its sens. An integer output of float inputs
# (ArgMax) still passes no gradient back (zeros, as MindSpore).
INTEGER_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
GRADIENTS_SCOPE = "Gradients"


class Builder:
    """The :class:`~ascendemu.kernels.opdef.GradBuilder` over a Tracer: rules' ops become nodes of
    the graph being captured, named in the backward scope of the forward node they differentiate."""

    def __init__(self, tracer: Tracer):
        self.tracer = tracer
        self.graph = tracer.graph

    def op(self, name: str, *inputs: int, **attrs: Any) -> int:
        return self.ops(name, *inputs, **attrs)[0]

    def ops(self, name: str, *inputs: int, **attrs: Any) -> tuple[int, ...]:
        return self.tracer.apply(name, list(inputs), attrs)

    def desc(self, value: int) -> TensorDesc:
        return self.graph.values[value]

    def scalar(self, value: float, dtype: str) -> int:
        return self.tracer.literal(np.asarray(value, dtype=dtype), dtype)

    def constant(self, value: Any, dtype: str) -> int:
        return self.tracer.literal(np.ascontiguousarray(value, dtype=dtype), dtype)

    def broadcast(self, value: int, shape: tuple[int, ...]) -> int:
        if self.desc(value).shape == tuple(shape):
            return value
        return self.op("BroadcastTo", value, shape=tuple(shape))

    def sum_to(self, value: int, shape: tuple[int, ...]) -> int:
        have = self.desc(value).shape
        shape = tuple(shape)
        if have == shape:
            return value
        lead = len(have) - len(shape)
        axes = tuple(range(lead)) + tuple(lead + d for d, s in enumerate(shape) if s == 1 and have[lead + d] != 1)
        if axes:
            value = self.op("ReduceSum", value, axis=axes, keep_dims=False)
        if self.desc(value).shape != shape:
            value = self.op("Reshape", value, shape=shape)
        return value

    def zeros(self, desc: TensorDesc) -> int:
        return self.broadcast(self.scalar(0, desc.dtype), desc.shape)

    @contextmanager
    def scope_of(self, node: OpNode) -> Iterator[None]:
        """Name the ops emitted inside as the backward of ``node``: Gradients/<its scope>/grad<Op>."""
        saved = self.tracer.scopes
        forward_scope = node.full_name.split("/")[:-1]
        self.tracer.scopes = [GRADIENTS_SCOPE, *forward_scope, f"grad{node.op}"]
        try:
            yield
        finally:
            self.tracer.scopes = saved


def _no_task_grad(b: Builder, call: GradCall) -> tuple[int | None, ...]:
    (dy,) = call.douts
    return (b.op("Reshape", dy, shape=call.sig.inputs[0].shape),)


def _rule(node: OpNode):
    if node.op in NO_TASK_OPS:
        return _no_task_grad
    op = REGISTRY.get(node.op)
    if op is None or op.grad is None:
        raise FeatureNotSupportedError(
            f"cannot differentiate {node.full_name}: op {node.op} has no backward rule; wrap the input in "
            f"ops.stop_gradient if no gradient should flow through it")
    return op.grad


@dataclass(frozen=True)
class GradientHook:
    """A user function on gradients (ops.HookBackward, InsertGradientOf, Morph's bprop), run while the
    backward graph is built: when the gradients of ``outputs`` (values of consecutive nodes, so all of
    them are final together) are known, ``fn(douts)`` gives one gradient (or None) per ``targets``
    value, which replaces (``replace``) or adds to that value's gradient."""
    outputs: tuple[int, ...]
    targets: tuple[int, ...]
    fn: Callable[[list[int]], Sequence[int | None]]
    replace: bool


# tracer -> {the last of a hook's outputs: its hook}; weak, so a finished capture drops its hooks
_HOOKS: "weakref.WeakKeyDictionary[Tracer, dict[int, GradientHook]]" = weakref.WeakKeyDictionary()


def add_gradient_hook(tracer: Tracer, hook: GradientHook) -> None:
    """Run ``hook`` when ``tracer``'s graph is differentiated through ``hook.outputs``."""
    _HOOKS.setdefault(tracer, {})[max(hook.outputs)] = hook


def _run_hook(b: Builder, hook: GradientHook, grads: dict[int, int]) -> None:
    douts = [grads[v] if v in grads else b.zeros(b.desc(v)) for v in hook.outputs]
    results = list(hook.fn(douts))
    if len(results) != len(hook.targets):
        raise InvalidParamError(f"a gradient hook gave {len(results)} gradients for {len(hook.targets)} inputs")
    for v, g in zip(hook.targets, results):
        if g is None:
            continue
        if b.desc(g) != b.desc(v):
            raise InvalidParamError(f"a gradient hook gave a {b.desc(g)} gradient for {b.desc(v)}")
        grads[v] = g if hook.replace or v not in grads else b.op("Add", grads[v], g)


def _carries_gradient(graph: Graph, node: OpNode, v: int, live: set[int]) -> bool:
    """Whether output ``v`` of ``node`` (which reads a live value) is differentiated: a float output, or
    an integer output on an integer path from an integer input being differentiated (INTEGER_DTYPES)."""
    dtype = graph.values[v].dtype
    if dtype in DIFFERENTIABLE_DTYPES:
        return True
    return dtype in INTEGER_DTYPES and any(u in live and graph.values[u].dtype in INTEGER_DTYPES
                                           for u in node.inputs)


def differentiate(tracer: Tracer, outputs: int | Sequence[int], wrt: Sequence[int],
                  sens: int | None | Sequence[int | None] = None) -> list[int]:
    """Append the gradients of ``outputs`` with respect to each ``wrt`` value to the graph being
    captured; one gradient value per ``wrt`` entry.

    ``sens`` is the gradient flowing into each output (MindSpore's sens; default ones): several
    outputs differentiate their weighted sum. Only nodes on a path from some ``wrt`` value to an
    output are differentiated.
    """
    graph = tracer.graph
    b = Builder(tracer)
    outputs = [outputs] if isinstance(outputs, int) else list(outputs)
    senses = [sens] * len(outputs) if sens is None or isinstance(sens, int) else list(sens)
    if len(senses) != len(outputs):
        raise InvalidParamError(f"differentiate: {len(senses)} sens values for {len(outputs)} outputs")
    grads: dict[int, int] = {}
    for output, s in zip(outputs, senses):
        out_desc = graph.values[output]
        if out_desc.dtype not in DIFFERENTIABLE_DTYPES + INTEGER_DTYPES:
            raise InvalidParamError(f"cannot differentiate a {out_desc.dtype} output; gradients need float "
                                    f"or integer outputs")
        if s is None:
            s = b.broadcast(b.scalar(1.0, out_desc.dtype), out_desc.shape)
        elif graph.values[s] != out_desc:
            if graph.values[s].dtype != out_desc.dtype:
                s = b.op("Cast", s, dst_type=out_desc.dtype)
            s = b.broadcast(s, out_desc.shape)
        grads[output] = s if output not in grads else b.op("Add", grads[output], s)
    nodes = list(graph.nodes)
    # values that depend on a wrt value; only nodes reading one are differentiated
    live = {v for v in wrt if graph.values[v].dtype in DIFFERENTIABLE_DTYPES + INTEGER_DTYPES}
    hooks = _HOOKS.get(tracer, {})
    for n in nodes:
        if n.op != "StopGradient" and any(v in live for v in n.inputs):
            live.update(v for v in n.outputs if _carries_gradient(graph, n, v, live))
        for v in n.outputs:      # a hook's outputs carry gradient to its targets (Morph's bprop)
            if v in hooks and any(t in live for t in hooks[v].targets):
                live.update(hooks[v].outputs)
    for n in reversed(nodes):
        for v in n.outputs:
            if v in hooks and any(u in grads for u in hooks[v].outputs):
                _run_hook(b, hooks[v], grads)
        douts = tuple(grads.get(v) for v in n.outputs)
        if all(d is None for d in douts) or not any(v in live for v in n.inputs):
            continue
        if n.op == "StopGradient":
            continue
        with b.scope_of(n):
            if isinstance(n, WhileNode):        # a device loop: its backward is a loop too (graph.while_grad)
                din = while_backward(tracer, n, douts, tuple(v in live for v in n.inputs), differentiate,
                                     DIFFERENTIABLE_DTYPES)
            else:
                call = GradCall(OpSignature.make(n.op, [graph.values[v] for v in n.inputs], **n.attrs),
                                n.inputs, n.outputs, douts, tuple(v in live for v in n.inputs))
                din = _rule(n)(b, call)
            if len(din) != len(n.inputs):
                raise InvalidParamError(f"backward rule of {n.op} returned {len(din)} gradients for "
                                        f"{len(n.inputs)} inputs")
            for v, g in zip(n.inputs, din):
                if g is None or v not in live:
                    continue
                if b.desc(g) != graph.values[v]:
                    raise InvalidParamError(
                        f"backward rule of {n.op} gave a {b.desc(g)} gradient for input {graph.values[v]}")
                grads[v] = g if v not in grads else b.op("Add", grads[v], g)
    result = []
    for v in wrt:
        g = grads.get(v)
        result.append(g if g is not None else b.zeros(graph.values[v]))
    return result
