"""Functional control flow: what a converted ``if``/``while`` (:mod:`.parse`) calls at run time.

MindSpore's static-graph syntax compiles ``if``/``while`` on tensors; a tracing front end cannot run
them as Python because a symbolic tensor has no truth value. :mod:`.parse` rewrites a GRAPH_MODE
function's statements into calls of the helpers here, with the branches and loop bodies as functions
that take and return the variables they assign. Each helper decides when it runs:

- a condition that is a Python value, or a concrete Tensor (a constant in the graph, PyNative data),
  runs plain Python: constant conditions fold and Python values stay Python (JIT Fallback);
- a symbolic tensor condition (a value the graph computes) is one ``graph.ir.IfNode``
  (:func:`_device_if`): both branches captured as graphs of their own, the device runs the taken one
  (LabelSwitch/LabelGoto);
- where it cannot be (``Tracer.if_converts``: a gradient's forward, a DryRun, a graph assigning
  Parameters; or a branch assigning a Parameter or printing), it traces *both* branches into the graph
  and joins each assigned variable, and each parameter the branches updated, with ``Select(cond, then,
  else)``: the device picks, no host round trip, and autodiff differentiates through the Select (a
  branch's gradient is masked by the condition). Both branches' kernels run (priced as such).

A symbolic ``while`` condition becomes a loop on the device (``graph.ir.WhileNode``): the condition and
the body are each captured once, into graphs of their own, on symbolic carried variables (every Tensor
the body assigns; each keeps its shape and dtype across iterations, as MindSpore requires), and the
device repeats the body while the condition holds, so the trip count is the data's, not the capture's
(``for`` loops unroll as MindSpore's do).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ascendemu.graph.capture import GraphCaptureError, current_tracer

from .fallback import assert_  # noqa: F401 - the parser's runtime: assert in a converted function
from .graph_builtins import dict_method  # noqa: F401 - the parser's runtime: d.keys() etc. in a graph
from .graph_print import print_  # noqa: F401 - the parser's runtime: print(...) in a converted function
from .tensor import Tensor

__all__ = ["LOOP_FLAG", "Undefined", "and_", "assert_", "dict_method", "if_exp", "if_stmt", "load", "not_", "or_",
           "print_", "while_stmt"]


# the name prefix of the flags the parser adds for break/continue/return inside loops (parse._LoopExits)
LOOP_FLAG = "ascf_flag_"


class Undefined:
    """A variable that is not bound on every path to here (assigned in one branch of a tensor ``if``
    only, or not before the statement): fine until it is used, as in Python."""

    def __init__(self, name: str, where: str):
        self.name, self.where = name, where

    def _fail(self, *_: Any, **__: Any) -> Any:
        raise GraphCaptureError(
            f"variable {self.name!r} is not assigned on every path through the control flow at "
            f"{self.where}: GRAPH_MODE compiles both branches of a tensor condition, so assign it in "
            f"both branches (or before the statement)")

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):           # copy, pickle and hasattr probes see a plain object
            raise AttributeError(attr)
        return self._fail()

    __call__ = __getitem__ = __iter__ = __bool__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __neg__ = _fail

    def __repr__(self) -> str:
        return f"<undefined {self.name}>"


def load(getter: Callable[[], Any], name: str, where: str) -> Any:
    """The variable's current value, or :class:`Undefined` if it is not bound yet."""
    try:
        return getter()
    except NameError:              # UnboundLocalError, or a closure cell still empty
        return Undefined(name, where)


def _symbolic(x: Any) -> bool:
    return isinstance(x, Tensor) and x.is_symbolic


def _truth(x: Any, where: str) -> bool:
    """A static condition's truth: Python's, or a concrete tensor's single element."""
    if isinstance(x, Tensor):
        if x.size != 1:
            raise ValueError(f"The truth value of an array with more than one element is ambiguous. ({where})")
        return bool(x.asnumpy().reshape(()))
    return bool(x)


def _value(tracer: Any, x: Any) -> int:
    from ..capture import tracer_value

    return tracer_value(tracer, x if isinstance(x, Tensor) else Tensor(x))


def _predicate(tracer: Any, cond: Tensor, where: str) -> int:
    """A tensor condition as the graph's bool scalar (a non-bool tensor is ``!= 0``)."""
    if cond.size != 1:
        raise ValueError(f"The truth value of an array with more than one element is ambiguous. ({where})")
    vid = _value(tracer, cond)
    if cond.shape != ():
        (vid,) = tracer.apply("Reshape", [vid], {"shape": ()})
    if cond.dtype.name != "bool":
        zero = tracer.literal(np.zeros((), cond.dtype.np_type), cond.dtype.name)
        (vid,) = tracer.apply("NotEqual", [vid, zero], {})
    return vid


def _sym(tracer: Any, vid: int) -> Tensor:
    return Tensor._symbolic(tracer, vid)


# ------------------------------------------------------------------------------------ boolean operators

def not_(x: Any) -> Any:
    """``not x``: LogicalNot of a symbolic tensor, Python's ``not`` otherwise."""
    if not _symbolic(x):
        return not _truth(x, "not")
    tracer = current_tracer()
    return _sym(tracer, tracer.apply("LogicalNot", [_predicate(tracer, x, "not")], {})[0])


def _logical(op: str, a: Tensor, b: Any) -> Tensor:
    tracer = current_tracer()
    if not isinstance(b, Tensor):
        b = Tensor(bool(b))
    return _sym(tracer, tracer.apply(op, [_predicate(tracer, a, op), _predicate(tracer, b, op)], {})[0])


def and_(a: Any, b: Callable[[], Any]) -> Any:
    """``a and b``: short-circuits on a static ``a``; a symbolic ``a`` evaluates both (LogicalAnd)."""
    if _symbolic(a):
        return _logical("LogicalAnd", a, b())
    if not _truth(a, "and"):
        return a
    rhs = b()
    return _logical("LogicalAnd", rhs, a) if _symbolic(rhs) else rhs


def or_(a: Any, b: Callable[[], Any]) -> Any:
    """``a or b``: short-circuits on a static ``a``; a symbolic ``a`` evaluates both (LogicalOr)."""
    if _symbolic(a):
        return _logical("LogicalOr", a, b())
    if _truth(a, "or"):
        return a
    return b()


# ------------------------------------------------------------------------------------ statements

def if_stmt(cond: Any, then: Callable[..., tuple], other: Callable[..., tuple], values: tuple,
            names: tuple[str, ...], where: str) -> tuple:
    """``if cond: then else: other``, each branch a function of the assigned variables returning them."""
    if not _symbolic(cond):
        return then(*values) if _truth(cond, where) else other(*values)
    tracer = current_tracer()
    if tracer is None:
        raise GraphCaptureError(f"the condition at {where} is a tensor of another graph capture")
    pred = _predicate(tracer, cond, where)
    if not tracer.if_converts():
        joined = _device_if(tracer, pred, then, other, values, names, where)
        if joined is not None:
            return joined
    before = tracer.branch_state()
    then_out = then(*values)
    then_state = tracer.branch_state()
    tracer.rewind(before)
    other_out = other(*values)
    other_state = tracer.branch_state()
    tracer.join_branches(pred, then_state, other_state)
    return tuple(_join(tracer, pred, t, o, name, where) for t, o, name in zip(then_out, other_out, names))


def _device_if(tracer: Any, pred: int, then: Callable[..., tuple], other: Callable[..., tuple], values: tuple,
               names: tuple[str, ...], where: str) -> tuple | None:
    """``if`` on the bool value ``pred`` as one If node (``graph.ir.IfNode``): each branch captured once,
    into a graph of its own, by a nested Tracer (a tensor of the enclosing capture read inside becomes
    an input), the Tensors the branches assign joined as the node's outputs. None, with the enclosing
    capture untouched, where the branches must be if-converted instead: one cannot be captured on its
    own (it assigns a Parameter: the Select join keeps every parameter bit for bit when the branch is
    not taken; the Select path raises any other capture error again, in place), prints, or they leave
    a variable holding something other than a Tensor, or equal Python values, in both."""
    tracer.op_count += 1
    label = f"If-op{tracer.op_count}"
    subs, outs = [], []
    for branch, part in ((then, "then"), (other, "else")):
        sub = tracer.nested(f"{label}/{part}", where)
        try:
            with sub.active():
                outs.append(branch(*values))
        except GraphCaptureError:
            return None
        if sub.graph.updates or sub.prints():
            return None
        subs.append(sub)
    joined: list[Any] = list(outs[0])           # one per variable (an `x if c else y` has no `values`)
    then_vals, other_vals = [], []
    for i, (t, o) in enumerate(zip(*outs)):
        if t is o:
            joined[i] = t
        elif isinstance(t, Undefined) or isinstance(o, Undefined):
            joined[i] = Undefined(names[i], where)
        elif isinstance(t, Tensor) and isinstance(o, Tensor):
            _join_check(t, o, names[i], where)
            with subs[0].active():
                then_vals.append(_value(subs[0], t))
            with subs[1].active():
                other_vals.append(_value(subs[1], o))
            joined[i] = _JOINED
        elif type(t) is type(o) and not isinstance(t, (Tensor, tuple, list)) and _same(t, o):
            joined[i] = t
        else:
            return None
    if not then_vals:
        return tuple(joined)
    then_graph = subs[0].finish(then_vals, where)
    other_graph = subs[1].finish(other_vals, where)
    node = tracer.graph.add_if(pred, then_graph, other_graph, subs[0].free, subs[1].free,
                               "/".join(tracer.scopes) + f"/{label}", where)
    results = iter(node.outputs)
    return tuple(_sym(tracer, next(results)) if v is _JOINED else v for v in joined)


_JOINED = object()         # a variable that is one of the If node's outputs


def _join_check(t: Tensor, o: Tensor, name: str, where: str) -> None:
    """Both branches of a tensor ``if`` leave ``name`` a Tensor of one shape and dtype (MindSpore's join)."""
    if t.shape != o.shape or t.dtype != o.dtype:
        raise TypeError(f"Cannot join the return values of different branches, perhaps you need to make "
                        f"them equal. Shape Join Failed: {name!r} at {where} is {t.dtype}{list(t.shape)} in "
                        f"the true branch and {o.dtype}{list(o.shape)} in the false branch")


def if_exp(cond: Any, then: Callable[[], Any], other: Callable[[], Any], where: str) -> Any:
    """``then() if cond else other()``."""
    return if_stmt(cond, lambda: (then(),), lambda: (other(),), (), ("<expression>",), where)[0]


def _join(tracer: Any, pred: int, t: Any, o: Any, name: str, where: str) -> Any:
    """One variable after a tensor ``if``: the branches' values joined by a Select on the device."""
    if t is o:
        return t
    if isinstance(t, Undefined) or isinstance(o, Undefined):
        if name.startswith(LOOP_FLAG):      # a loop's return value: read only where its flag says it is set
            return o if isinstance(t, Undefined) else t
        return Undefined(name, where)
    if isinstance(t, Tensor) and isinstance(o, Tensor):
        _join_check(t, o, name, where)
        return _sym(tracer, tracer.apply("Select", [pred, _value(tracer, t), _value(tracer, o)], {})[0])
    if isinstance(t, (tuple, list)) and isinstance(o, (tuple, list)) and type(t) is type(o) and len(t) == len(o):
        return type(t)(_join(tracer, pred, a, b, f"{name}[{i}]", where) for i, (a, b) in enumerate(zip(t, o)))
    if type(t) is type(o) and not isinstance(t, Tensor):
        try:
            if t == o:
                return t
        except Exception:      # noqa: BLE001 - an object without equality: treated as different
            pass
    scalars = _scalar_join(tracer, pred, t, o)
    if scalars is not None:
        return scalars
    raise TypeError(f"Cannot join the return values of different branches, perhaps you need to make them "
                    f"equal. Type Join Failed: {name!r} at {where} is {t!r} in the true branch and {o!r} in "
                    f"the false branch of a tensor condition; make both Tensors of one shape and dtype")


# MindSpore's dtype of a Python scalar that a tensor condition makes a graph value (its join of scalars)
_SCALAR_DTYPES = ((bool, np.bool_), (int, np.int64), (float, np.float32))


def _scalar_join(tracer: Any, pred: int, t: Any, o: Any) -> Tensor | None:
    """Two Python scalars of one kind (or a Python scalar and a 0-d Tensor) that a tensor condition
    chooses between: MindSpore joins them into one scalar the device selects (``out = 1 if c else 2``,
    a loop's break flag), so here a 0-d Tensor of the scalars' dtype. None where they do not join."""
    def kind(x: Any) -> Any:
        if isinstance(x, Tensor):
            return x.dtype.np_type if x.shape == () else None
        for py, np_type in _SCALAR_DTYPES:
            if type(x) is py:
                return np_type
        return None

    kt, ko = kind(t), kind(o)
    if kt is None or ko is None or (kt != ko and not (isinstance(t, Tensor) or isinstance(o, Tensor))):
        return None
    np_type = kt if isinstance(t, Tensor) else ko
    a, b = (x if isinstance(x, Tensor) else Tensor(np.asarray(x, np_type)) for x in (t, o))
    if a.dtype != b.dtype:
        return None
    return _sym(tracer, tracer.apply("Select", [pred, _value(tracer, a), _value(tracer, b)], {})[0])


def while_stmt(cond: Callable[..., Any], body: Callable[..., tuple], values: tuple, names: tuple[str, ...],
               where: str) -> tuple:
    """``while cond: body``: plain Python while the condition is static (a constant trip count unrolls);
    from the first symbolic condition on, one loop on the device (:func:`_device_loop`)."""
    while True:
        tracer = current_tracer()
        probe = len(tracer.graph.nodes) if tracer is not None else 0
        c = cond(*values)
        if _symbolic(c):
            del tracer.graph.nodes[probe:]      # the condition is computed by the loop's own cond graph
            tracer.graph._hash = None
            return _device_loop(tracer, cond, body, values, names, where)
        if not _truth(c, where):
            return values
        values = body(*values)


def _device_loop(tracer: Any, cond: Callable[..., Any], body: Callable[..., tuple], values: tuple,
                 names: tuple[str, ...], where: str) -> tuple:
    """Capture ``while cond: body`` as one While node: the Tensor variables the body assigns are carried
    (graph inputs of the cond and body graphs, the body's outputs their next values); every other
    variable must stay what it is (a Python value the loop changes has no device form)."""
    values = tuple(_flag(v, name) for v, name in zip(values, names))
    carried = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    for i, v in enumerate(values):
        if isinstance(v, (tuple, list, dict)) and not isinstance(v, Tensor):
            raise GraphCaptureError(f"the `while` loop on a tensor condition at {where} assigns {names[i]!r}, a "
                                    f"{type(v).__name__}: a device loop carries Tensors; carry each tensor in a "
                                    f"variable of its own")
    init = [_value(tracer, values[i]) for i in carried]
    descs = [tracer.graph.values[v] for v in init]
    tracer.op_count += 1
    label = f"While-op{tracer.op_count}"

    def entry(sub: Any) -> list:
        inner = list(values)
        for k, i in enumerate(carried):
            inner[i] = _sym(sub, sub.input(descs[k]))
        return inner

    cond_tracer = tracer.nested(f"{label}/cond", where)
    with cond_tracer.active():
        c = cond(*entry(cond_tracer))
        pred = _predicate(cond_tracer, c if isinstance(c, Tensor) else Tensor(_truth(c, where)), where)
    cond_graph = cond_tracer.finish([pred], where)
    body_tracer = tracer.nested(f"{label}/body", where)
    with body_tracer.active():
        out = body(*entry(body_tracer))
        nxt = []
        for k, i in enumerate(carried):
            o = _flag(out[i], names[i])
            if not isinstance(o, Tensor) or o.shape != descs[k].shape or o.dtype.name != descs[k].dtype:
                got = f"{o.dtype}{list(o.shape)}" if isinstance(o, Tensor) else repr(o)
                raise TypeError(f"Cannot join the return values of different branches, perhaps you need to make "
                                f"them equal. Shape Join Failed: the loop variable {names[i]!r} of the `while` "
                                f"loop at {where} enters as {descs[k].dtype}{list(descs[k].shape)} and the body "
                                f"makes it {got}; a loop variable must keep its shape and dtype")
            nxt.append(_value(body_tracer, o))
        for i, (before, after) in enumerate(zip(values, out)):
            if i not in carried and after is not before and not isinstance(after, Undefined) \
                    and not isinstance(before, Undefined) and not _same(before, after):
                raise TypeError(f"the `while` loop on a tensor condition at {where} changes {names[i]!r}, a "
                                f"Python {type(before).__name__}, from {before!r} to {after!r}: a device loop "
                                f"carries Tensors only; make it a Tensor before the loop")
    body_graph = body_tracer.finish(nxt, where)
    node = tracer.graph.add_while(cond_graph, body_graph, init, cond_tracer.free, body_tracer.free,
                                  "/".join(tracer.scopes) + f"/{label}", where)
    result = list(values)
    for k, i in enumerate(carried):
        result[i] = _sym(tracer, node.outputs[k])
    for i, v in enumerate(values):
        if isinstance(v, Undefined) and not isinstance(out[i], Undefined):
            result[i] = Undefined(names[i], where)     # assigned only inside the loop: unbound after it
    return tuple(result)


def _flag(value: Any, name: str) -> Any:
    """A loop-exit flag of the parser (``break``/``continue``/``return`` in a loop) that is still a Python
    bool, as a bool Tensor: a device loop carries it, since a tensor condition in the body may set it."""
    if name.startswith(LOOP_FLAG) and type(value) is bool:
        return Tensor(np.asarray(value))
    return value


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:      # noqa: BLE001 - an object without equality: treated as different
        return False
