"""The GRAPH_MODE parser: a function's ``if``/``while`` statements rewritten into functional control flow.

MindSpore parses ``construct`` (its ``_extends/parse``) and compiles tensor control flow; this front end
traces, so :func:`convert` rewrites the function's source once (the code object is cached) into calls
of :mod:`.control_flow`'s helpers, which decide at run time whether a condition is static (plain
Python) or a tensor the graph computes:

- ``if``/``elif``/``else`` -> ``if_stmt(test, then, else, values, names, where)``; the branches become
  functions taking and returning the variables either branch assigns (found by AST analysis);
- ``while`` -> ``while_stmt(cond, body, ...)`` the same way; ``for`` stays Python (it unrolls, as
  MindSpore unrolls for-loops; a symbolic tensor iterates its first dimension);
- ``print(...)`` -> ``print_(print, ...)``: a graph print, every run (:mod:`.graph_print`);
- ``assert test, msg`` -> ``assert_(lambda: test, lambda: msg, where)``: checked on the data at run
  time when the condition needs a graph tensor's (:mod:`.fallback`);
- ``obj.keys()``/``values()``/``items()``/``has_key(k)`` -> ``dict_method(obj, name, ...)``: a dict
  gives MindSpore's graph results (:mod:`.graph_builtins`);
- ``a if c else b`` -> ``if_exp``; ``not``/``and``/``or`` inside conditions -> ``not_``/``and_``/``or_``;
- an early ``return`` in a branch: the statements after the ``if`` move into the branches that do not
  return, each return becomes an assignment of one result variable, returned after the ``if``.

- ``break``/``continue``/``return`` inside loops and ``while``/``for`` ... ``else`` first become flags
  (:class:`_LoopExits`), so a tensor condition may decide them without unrolling a device loop.
- a module global the function assigns but reads first (``z += i``) is bound from the module at entry
  (:func:`_globals_read_first`), as MindSpore's parser resolves it;
- ``try`` is refused with MindSpore's RuntimeError (:func:`refuse_unsupported`).

Left as Python (a tensor condition there still raises GraphCaptureError at its line): a loop exit
inside ``try``/``with``/``match`` (a ``return`` there leaves the function unconverted),
``global``/``nonlocal``, ``yield`` or zero-argument ``super()``. Functions with no ``if``/``while``,
conditional expression, ``print``, ``assert`` or dict method call are never rewritten. The rewritten
code keeps the user's file name and line numbers, so errors name them.
"""
from __future__ import annotations

import ast
import copy
import inspect
import textwrap
import types
from typing import Any, Callable

from ..context import GRAPH_MODE, get_context
from . import control_flow, graph_builtins

__all__ = ["convert", "convert_method", "refuse_unsupported"]

RT = "ascf_rt"            # the name of control_flow inside rewritten code
RET = "ascf_ret"          # the result variable of a function whose branches return
LIBRARY = "ascendemu"     # functions of this package's modules are the library's, never rewritten
_NOT_CONVERTED = object()
# rewritten function per original code object (None: left as it is)
_CODE_CACHE: dict[types.CodeType, Any] = {}
# Statements MindSpore's parser refuses (its parse.cc ParseStatement: "Unsupported statement 'Try'.");
# node class -> the name its message gives
UNSUPPORTED_STATEMENTS: dict[type, str] = {ast.Try: "Try", **({ast.TryStar: "TryStar"} if hasattr(ast, "TryStar")
                                                              else {})}
# the refusal per code object (None: nothing refused), so a graph's functions are read once
_REFUSED: dict[types.CodeType, str | None] = {}


def convert(fn: Callable) -> Callable:
    """``fn`` with its tensor control flow made functional, or ``fn`` itself when nothing needs it
    (a bound method stays bound to its object; a Cell or a partial is returned as it is: a Cell
    converts its own ``construct``)."""
    if isinstance(fn, types.MethodType):
        return convert_method(fn)
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None or _is_library(fn):
        return fn
    if get_context("mode") == GRAPH_MODE:
        refuse_unsupported(fn)
    entry = _CODE_CACHE.get(code, _NOT_CONVERTED)
    if entry is _NOT_CONVERTED:
        entry = _transform(fn)
        _CODE_CACHE[code] = entry
    if entry is None:
        return fn
    new_code, rt_cell = entry
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    closure = tuple(rt_cell if name == RT else cells[name] for name in new_code.co_freevars)
    new = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def convert_method(method: Callable) -> Callable:
    """A bound method (``cell.construct``) converted and bound to the same object."""
    func = getattr(method, "__func__", None)
    if not isinstance(func, types.FunctionType):
        return convert(method)
    new = convert(func)
    return method if new is func else types.MethodType(new, method.__self__)


def refuse_unsupported(fn: Callable) -> None:
    """MindSpore's RuntimeError for a statement its graph syntax does not compile (``try``), raised where
    MindSpore raises it: compiling a GRAPH_MODE ``construct`` or an ``@jit`` function (a PyNative
    gradient runs Python, which has them)."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None or _is_library(fn):
        return
    if code not in _REFUSED:
        _REFUSED[code] = None
        parsed = _parse(fn)
        if parsed is not None:
            func, filename, _ = parsed
            for node in _own_nodes(func):
                kind = UNSUPPORTED_STATEMENTS.get(type(node))
                if kind is not None:
                    _REFUSED[code] = (f"Unsupported statement '{kind}'.\nMore details please refer to syntax "
                                      f"support at https://www.mindspore.cn\n\n# In file {filename}:"
                                      f"{code.co_firstlineno + node.lineno - 1}")
                    break
    if _REFUSED[code] is not None:
        raise RuntimeError(_REFUSED[code])


def _is_library(fn: types.FunctionType) -> bool:
    """One of ascendemu's own functions (``ms.grad``'s wrapper, a Cell's helpers): never rewritten, only
    user code is. Its module, not ``__module__`` (``functools.wraps`` copies the user's there)."""
    module = fn.__globals__.get("__name__", "")
    return module == LIBRARY or module.startswith(LIBRARY + ".")


# ------------------------------------------------------------------------------------ the transform

def _parse(fn: types.FunctionType) -> tuple[ast.FunctionDef, str, int] | None:
    """The function's own definition (AST, lines from 1), its file and first line; None if its source
    cannot be read or parsed."""
    try:
        # the code object's own source: inspect.getsource(fn) follows ``__wrapped__`` (functools.wraps)
        # to the wrapped function, whose source is not this code's
        source = textwrap.dedent(inspect.getsource(fn.__code__))
        filename = inspect.getsourcefile(fn) or "<unknown>"
        first_line = fn.__code__.co_firstlineno
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:                  # a lambda inside an expression, a decorator's odd source
        return None
    func = tree.body[0] if tree.body else None
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.name != fn.__code__.co_name:
        return None
    return func, filename, first_line


def _transform(fn: Callable) -> tuple[types.CodeType, Any] | None:
    parsed = _parse(fn)
    if parsed is None:
        return None
    func, filename, first_line = parsed
    tree = ast.Module(body=[func], type_ignores=[])
    rebound = _globals_read_first(func, fn.__globals__)
    if not (_worth_converting(func) or rebound and _worth_converting(func, flow_needed=False)):
        return None
    func.body = _global_prelude(rebound, func) + _LoopExits().block(func.body, None)
    if _return_in_loop(func):
        return None
    ast.increment_lineno(tree, first_line - 1)
    func.decorator_list = []
    func.returns = None
    for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs + [func.args.vararg, func.args.kwarg]:
        if a is not None:
            a.annotation = None
    func.args.defaults, func.args.kw_defaults = [], [None] * len(func.args.kwonlyargs)
    owner = fn.__qualname__.split(".")[-2] if "." in fn.__qualname__ else None
    if owner is not None and owner != "<locals>":
        _Mangler(owner).visit(func)
    func.body = _lift_returns(func.body + [ast.Return(ast.Constant(None))] if not _always_returns(func.body)
                              else func.body)
    _Converter(filename).visit(func)
    freevars = list(fn.__code__.co_freevars)
    factory = ast.FunctionDef(name="ascf_factory", args=ast.arguments(
        posonlyargs=[], args=[ast.arg(RT)] + [ast.arg(v) for v in freevars], kwonlyargs=[], kw_defaults=[],
        defaults=[]), body=[func, ast.Return(ast.Name(func.name, ast.Load()))], decorator_list=[])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace: dict[str, Any] = {}
    exec(compile(module, filename, "exec"), fn.__globals__, namespace)      # noqa: S102 - the user's own code
    inner = namespace["ascf_factory"](control_flow, *([None] * len(freevars)))
    rt_cell = dict(zip(inner.__code__.co_freevars, inner.__closure__ or ())).get(RT)
    return inner.__code__, rt_cell


def _worth_converting(func: ast.FunctionDef, flow_needed: bool = True) -> bool:
    """Has control flow to convert (unless not ``flow_needed``) and nothing that makes the rewrite unsafe."""
    has_flow = not flow_needed
    for node in _own_nodes(func):
        if isinstance(node, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super" \
                and not node.args:
            return False
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)) or _is_print(node) or _is_dict_method(node):
            has_flow = True
    return has_flow


def _globals_read_first(func: ast.FunctionDef, module: dict[str, Any]) -> list[str]:
    """Module globals the function assigns (so Python makes them locals) but reads first, as ``z += i``
    on a global ``z``: MindSpore's parser resolves such a first read from the module, Python would raise
    UnboundLocalError. Parameters and names declared ``global``/``nonlocal`` are not among them."""
    params = {a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}
    params |= {a.arg for a in (func.args.vararg, func.args.kwarg) if a is not None}
    declared = {name for n in _own_nodes(func) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    uses: list[tuple[int, int, str, bool]] = []          # (line, column, name, is a read)
    for n in _own_nodes(func):
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            uses.append((n.lineno, n.col_offset - 1, n.target.id, True))
        elif isinstance(n, ast.Name):
            uses.append((n.lineno, n.col_offset, n.id, isinstance(n.ctx, ast.Load)))
    first: dict[str, bool] = {}
    for _, _, name, read in sorted(uses):
        first.setdefault(name, read)
    stored = {n.id for n in _own_nodes(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return [name for name, read in first.items()
            if read and name in stored and name in module and name not in params | declared]


def _global_prelude(names: list[str], func: ast.FunctionDef) -> list[ast.stmt]:
    """``name = globals()["name"]`` for each global :func:`_globals_read_first` found."""
    return [_at(ast.Assign([ast.Name(name, ast.Store())], ast.Subscript(
        ast.Call(ast.Name("globals", ast.Load()), [], []), ast.Constant(name), ast.Load())), func.body[0])
        for name in names]


def _is_print(node: ast.AST) -> bool:
    """A call of the name ``print`` (a graph print: :mod:`.graph_print`)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"


def _is_dict_method(node: ast.AST) -> bool:
    """A call ``obj.keys()``/``values()``/``items()``/``has_key(k)`` (positional arguments only): a dict's
    gives MindSpore's graph result (:mod:`.graph_builtins`)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in graph_builtins.DICT_METHODS and not node.keywords \
        and not any(isinstance(a, ast.Starred) for a in node.args)


def _return_in_loop(func: ast.FunctionDef) -> bool:
    """A ``return`` left inside a loop (one :class:`_LoopExits` could not lower)."""
    return any(isinstance(node, (ast.For, ast.While, ast.AsyncFor)) and any(
        isinstance(n, ast.Return) for stmt in node.body + node.orelse for n in _own_nodes(stmt))
        for node in _own_nodes(func))


def _own_nodes(node: ast.AST):
    """Every node of ``node`` outside nested functions, lambdas, classes and comprehensions."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
                              ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.extend(ast.iter_child_nodes(n))


def _has_return(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in [s, *_own_nodes(s)])


def _always_returns(stmts: list[ast.stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _lift_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Move what follows an ``if`` with a return into its branches that do not return, so every return
    ends a branch (then each becomes an assignment of ``ascf_ret``)."""
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.If) and (_has_return(s.body) or _has_return(s.orelse)):
            s.body, s.orelse = _lift_returns(s.body), _lift_returns(s.orelse)
            rest = stmts[i + 1:]
            if not _always_returns(s.body):
                s.body = _lift_returns(s.body + copy.deepcopy(rest))
            if not _always_returns(s.orelse):
                s.orelse = _lift_returns(s.orelse + copy.deepcopy(rest))
            out.append(s)
            return out
        out.append(s)
    return out


def _assigned(stmts: list[ast.stmt]) -> list[str]:
    """Names the statements bind (in order of first binding), outside nested scopes."""
    names: dict[str, None] = {}
    for s in stmts:
        for n in [s, *_own_nodes(s)]:
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.setdefault(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.setdefault(n.name)
            elif isinstance(n, ast.alias):
                names.setdefault((n.asname or n.name).split(".")[0])
            elif isinstance(n, ast.ExceptHandler) and n.name:
                names.setdefault(n.name)
    return [n for n in names if not n.startswith("ascf_") or n == RET or n.startswith(control_flow.LOOP_FLAG)]


def _loop_exits(stmts: list[ast.stmt]) -> bool:
    """A ``break``/``continue`` that leaves these statements for an enclosing loop."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Break, ast.Continue)):
            return True
        if isinstance(n, (ast.For, ast.While, ast.AsyncFor)):
            stack.extend(n.orelse)
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


class _Mangler(ast.NodeTransformer):
    """Private names (``self.__x``) mangled as the class body would have (the rewrite compiles outside it)."""

    def __init__(self, owner: str):
        self.prefix = "_" + owner.lstrip("_")

    def _mangle(self, name: str) -> str:
        return self.prefix + name if name.startswith("__") and not name.endswith("__") else name

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        node.attr = self._mangle(node.attr)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._mangle(node.id)
        return node


def _rt(attr: str) -> ast.Attribute:
    return ast.Attribute(ast.Name(RT, ast.Load()), attr, ast.Load())


def _call(attr: str, *args: ast.expr) -> ast.Call:
    return ast.Call(_rt(attr), list(args), [])


def _thunk(expr: ast.expr) -> ast.Lambda:
    return ast.Lambda(ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), expr)


def _tuple(names: list[str], ctx: ast.expr_context) -> ast.Tuple:
    return ast.Tuple([ast.Name(n, ctx if isinstance(ctx, ast.Load) else ast.Store()) for n in names], ctx)


class _Converter(ast.NodeTransformer):
    """Rewrites the statements of one function (not of functions nested in it)."""

    def __init__(self, filename: str):
        self.filename = filename
        self.count = 0
        self.depth = 0

    def _where(self, node: ast.AST) -> ast.Constant:
        return ast.Constant(f"{self.filename}:{node.lineno}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.depth += 1
        if self.depth == 1:
            node.body = self._block(node.body)
        self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return node

    def _block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            new = self.visit(s)
            out.extend(new if isinstance(new, list) else [new])
        return out or [ast.Pass()]

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, self._block(block))
        for field, value in ast.iter_fields(node):
            if field in ("body", "orelse", "finalbody", "handlers"):
                if field == "handlers":
                    for h in value:
                        h.body = self._block(h.body)
                continue
            if isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
            elif isinstance(value, list):
                setattr(node, field, [self.visit(v) if isinstance(v, ast.AST) else v for v in value])
        return node

    # -- conditions
    def _test(self, node: ast.expr) -> ast.expr:
        """A condition with ``not``/``and``/``or`` made tensor-aware."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ast.copy_location(_call("not_", self._test(node.operand)), node)
        if isinstance(node, ast.BoolOp):
            fn = "and_" if isinstance(node.op, ast.And) else "or_"
            values = [self._test(v) for v in node.values]
            acc = values[0]
            for v in values[1:]:
                acc = ast.copy_location(_call(fn, acc, _thunk(v)), node)
            return acc
        return self.visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if _is_print(node):
            node.args = [node.func] + node.args
            node.func = _rt("print_")
        elif _is_dict_method(node):
            node.args = [node.func.value, ast.Constant(node.func.attr)] + node.args
            node.func = _rt("dict_method")
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        msg = _thunk(self.visit(node.msg)) if node.msg is not None else ast.Constant(None)
        call = _call("assert_", _thunk(self.visit(node.test)), msg, self._where(node))
        return ast.copy_location(ast.Expr(call), node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        return ast.copy_location(_call("if_exp", self._test(node.test), _thunk(self.visit(node.body)),
                                       _thunk(self.visit(node.orelse)), self._where(node)), node)

    # -- statements
    def _branch(self, name: str, params: list[str], body: list[ast.stmt]) -> ast.FunctionDef:
        args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[], kw_defaults=[],
                             defaults=[])
        return ast.FunctionDef(name=name, args=args, body=body + [ast.Return(_tuple(params, ast.Load()))],
                               decorator_list=[])

    def _loads(self, names: list[str], node: ast.AST) -> ast.Tuple:
        return ast.Tuple([_call("load", _thunk(ast.Name(n, ast.Load())), ast.Constant(n), self._where(node))
                          for n in names], ast.Load())

    def visit_If(self, node: ast.If) -> Any:
        if _loop_exits(node.body + node.orelse):
            return self.generic_visit(node)
        returns = _has_return(node.body) or _has_return(node.orelse)
        if returns:
            _returns_to_assignments(node.body)
            _returns_to_assignments(node.orelse)
        body, orelse = self._block(node.body), self._block(node.orelse)
        self.count += 1
        k = self.count
        names = _assigned(body + orelse)
        then_fn = self._branch(f"ascf_then_{k}", names, body)
        else_fn = self._branch(f"ascf_else_{k}", names, orelse)
        call = _call("if_stmt", self._test(node.test), ast.Name(then_fn.name, ast.Load()),
                     ast.Name(else_fn.name, ast.Load()), self._loads(names, node),
                     ast.Tuple([ast.Constant(n) for n in names], ast.Load()), self._where(node))
        stmt = ast.Assign([_tuple(names, ast.Store())], call) if names else ast.Expr(call)
        out = [then_fn, else_fn, stmt]
        if returns:
            out.append(ast.Return(ast.Name(RET, ast.Load())))
        for s in out:
            ast.copy_location(s, node)
        return out

    def visit_While(self, node: ast.While) -> Any:
        if node.orelse or _loop_exits(node.body) or _has_return(node.body):
            return self.generic_visit(node)
        body = self._block(node.body)
        self.count += 1
        k = self.count
        names = _assigned(body)
        args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in names], kwonlyargs=[], kw_defaults=[],
                             defaults=[])
        cond_fn = ast.FunctionDef(name=f"ascf_cond_{k}", args=args, body=[ast.Return(self._test(node.test))],
                                  decorator_list=[])
        body_fn = self._branch(f"ascf_body_{k}", names, body)
        call = _call("while_stmt", ast.Name(cond_fn.name, ast.Load()), ast.Name(body_fn.name, ast.Load()),
                     self._loads(names, node), ast.Tuple([ast.Constant(n) for n in names], ast.Load()),
                     self._where(node))
        stmt = ast.Assign([_tuple(names, ast.Store())], call) if names else ast.Expr(call)
        out = [cond_fn, body_fn, stmt]
        for s in out:
            ast.copy_location(s, node)
        return out


def _returns_to_assignments(stmts: list[ast.stmt]) -> None:
    """Each return that ends a branch (after :func:`_lift_returns`) becomes ``ascf_ret = value``."""
    if not stmts:
        return
    last = stmts[-1]
    if isinstance(last, ast.Return):
        stmts[-1] = ast.copy_location(ast.Assign([ast.Name(RET, ast.Store())], last.value or ast.Constant(None)),
                                      last)
    elif isinstance(last, ast.If):
        _returns_to_assignments(last.body)
        _returns_to_assignments(last.orelse)


# ------------------------------------------------------------------------------------ loop exits

class _CannotLower(Exception):
    """An exit inside a statement the lowering does not rewrite (``try``, ``with``, ``match``)."""


def _at(node: ast.AST, like: ast.AST) -> ast.AST:
    """``node`` and its new children (those without a position) at ``like``'s source position, so
    errors and ``where`` name the line."""
    for n in ast.walk(node):
        if "lineno" in n._attributes and getattr(n, "lineno", None) is None:
            ast.copy_location(n, like)
    return node


def _set(name: str, value: ast.expr, like: ast.AST) -> ast.Assign:
    return _at(ast.Assign([ast.Name(name, ast.Store())], value), like)


class _LoopExits:
    """``break``, ``continue`` and ``return`` inside loops rewritten into flags, as MindSpore's parser
    turns them into conditions of its loop subgraphs, so a tensor condition may decide them:

    - ``break`` sets the loop's break flag; a ``while`` condition becomes ``not flag and (cond)`` (a
      tensor ``break`` inside a device loop joins the loop condition); a ``for`` loop (unrolled) leaves
      as Python once the flag is a Python True and otherwise guards each later trip by ``if not flag``;
    - ``continue`` sets the loop's continue flag, cleared at the top of each trip;
    - ``return v`` inside a loop: ``ascf_flag_value = v``, the return flag and the break flag set; after the
      loop ``if flag: return ascf_ret`` (inside an enclosing loop: ``break`` from it, lowered in turn);
    - the statements after an ``if`` that may exit run under ``if not (break or continue flag)``;
    - ``while``/``for`` ... ``else``: the ``else`` block runs after the loop under ``if not break flag``.

    The flags are Python bools while every condition deciding them is (so plain Python loops behave
    as Python's), and become bool Tensors joined by the tensor ``if``s that set them. A loop whose exit
    sits in a ``try``/``with``/``match`` is left as it is."""

    RETURN_FLAG = control_flow.LOOP_FLAG + "return"
    RETURN_VALUE = control_flow.LOOP_FLAG + "value"      # unbound until a return in a loop runs

    def __init__(self) -> None:
        self.count = 0

    def block(self, stmts: list[ast.stmt], loop: ast.stmt | None) -> list[ast.stmt]:
        """``stmts`` with every loop in them lowered (``loop``: the loop they are the body of, or None)."""
        out: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, (ast.For, ast.While)):
                out.extend(self._loop(s, inside_loop=loop is not None))
                continue
            if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(s, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        setattr(s, field, self.block(inner, loop))
                for handler in getattr(s, "handlers", ()):
                    handler.body = self.block(handler.body, loop)
            out.append(s)
        return out

    def _loop(self, node: ast.For | ast.While, inside_loop: bool) -> list[ast.stmt]:
        node.body = self.block(node.body, node)
        node.orelse = self.block(node.orelse, node if inside_loop else None)
        kinds = _exit_kinds(node.body)
        if kinds is None:                      # an exit in a try/with/match: left to Python
            return [node]
        if not kinds:
            post, node.orelse = node.orelse, []
            return [node, *post]
        self.count += 1
        brk = f"{control_flow.LOOP_FLAG}break_{self.count}"
        cont = f"{control_flow.LOOP_FLAG}continue_{self.count}"
        flags = ([brk] if kinds & {ast.Break, ast.Return} else []) + ([cont] if ast.Continue in kinds else [])
        body = self._guard(node.body, brk, cont, flags)
        pre: list[ast.stmt] = []
        if brk in flags:
            pre.append(_set(brk, ast.Constant(False), node))
        if ast.Return in kinds:
            pre.append(_set(self.RETURN_FLAG, ast.Constant(False), node))
        if cont in flags:
            body.insert(0, _set(cont, ast.Constant(False), node))
        if brk in flags and isinstance(node, ast.While):
            node.test = _at(ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), ast.Name(brk, ast.Load())), node.test]),
                            node.test)
        elif brk in flags:
            body = [_at(ast.If(ast.Compare(ast.Name(brk, ast.Load()), [ast.Is()], [ast.Constant(True)]),
                               [ast.Break()], []), node),
                    _at(ast.If(ast.UnaryOp(ast.Not(), ast.Name(brk, ast.Load())), body, []), node)]
        node.body = body
        post: list[ast.stmt] = []
        if node.orelse:
            post = [_at(ast.If(ast.UnaryOp(ast.Not(), ast.Name(brk, ast.Load())), node.orelse, []), node)] \
                if brk in flags else node.orelse
            node.orelse = []
        inner_return = any(isinstance(n, ast.Name) and n.id == self.RETURN_FLAG and isinstance(n.ctx, ast.Store)
                           for stmt in node.body for n in ast.walk(stmt))       # a nested loop's return
        if ast.Return in kinds or inner_return:
            leave = [ast.Break()] if inside_loop else [ast.Return(ast.Name(self.RETURN_VALUE, ast.Load()))]
            post.append(_at(ast.If(ast.Name(self.RETURN_FLAG, ast.Load()), leave, []), node))
        return pre + [node] + post

    def _guard(self, stmts: list[ast.stmt], brk: str, cont: str, flags: list[str]) -> list[ast.stmt]:
        """The loop body's own statements with its exits as flag assignments and what follows an exit
        under ``if not (flags)``."""
        out: list[ast.stmt] = []
        for i, s in enumerate(stmts):
            if isinstance(s, ast.Break):
                return out + [_set(brk, ast.Constant(True), s)]
            if isinstance(s, ast.Continue):
                return out + [_set(cont, ast.Constant(True), s)]
            if isinstance(s, ast.Return):
                return out + [_set(self.RETURN_VALUE, s.value or ast.Constant(None), s),
                              _set(self.RETURN_FLAG, ast.Constant(True), s), _set(brk, ast.Constant(True), s)]
            if isinstance(s, ast.If) and _exit_kinds([s]):
                s.body = self._guard(s.body, brk, cont, flags) or [ast.Pass()]
                s.orelse = self._guard(s.orelse, brk, cont, flags)
                out.append(s)
                rest = self._guard(stmts[i + 1:], brk, cont, flags)
                if rest:
                    names = [ast.Name(f, ast.Load()) for f in flags]
                    test = ast.UnaryOp(ast.Not(), names[0] if len(names) == 1 else ast.BoolOp(ast.Or(), names))
                    out.append(_at(ast.If(test, rest, []), s))
                return out
            out.append(s)
        return out


def _exit_kinds(stmts: list[ast.stmt]) -> set[type] | None:
    """The kinds of exit (Break, Continue, Return) these statements of a loop body make from it (not
    from loops or functions nested in them); None if one sits where the lowering cannot reach it."""
    kinds: set[type] = set()
    stack = [(s, False) for s in stmts]
    while stack:
        n, hidden = stack.pop()
        if isinstance(n, (ast.Break, ast.Continue, ast.Return)):
            if hidden:
                return None
            kinds.add(type(n))
        elif isinstance(n, ast.If):
            stack.extend((c, hidden) for c in n.body + n.orelse)
        elif isinstance(n, (ast.For, ast.While, ast.AsyncFor)):
            stack.extend((c, True) for c in n.orelse)      # left there only by a loop not lowered
        elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.expr)):
            stack.extend((c, True) for c in ast.iter_child_nodes(n) if isinstance(c, (ast.stmt, ast.excepthandler,
                                                                                     ast.match_case)))
    return kinds
