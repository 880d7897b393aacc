"""Record real MindSpore's public API surface into the signature table the front end serves from.

Run with an installed MindSpore (never a dependency of the project, never needed by CI)::

    /path/to/venv-with-mindspore/bin/python tools/record_signatures.py [--out frontend/signatures.json]

The table holds, per namespace MindSpore serves (``mindspore.ops`` functions and Primitives,
``mindspore.nn`` Cells, ``Tensor`` methods, ``mindspore.mint`` and its sub-namespaces): every public name,
its kind, its parameters as ``inspect.signature`` gives them (name, kind, default), and every module
path it can be imported from. Tensor methods are C++ builtins without an introspectable signature; their
signatures are parsed from the first lines of their docstrings (``add(other) -> Tensor``), one per
overload. A default that is not plain data (a dtype, an object) is kept as its ``repr``.

The file is written one entry per line, sorted, so that a regeneration against a newer MindSpore
shows as a readable diff.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "frontend" / "signatures.json"

# (namespace, what its entries are); the kinds are decided per name below
NAMESPACES = ("mindspore.ops", "mindspore.nn", "mindspore.mint", "mindspore.mint.nn",
              "mindspore.mint.nn.functional", "mindspore.mint.optim", "mindspore.mint.linalg",
              "mindspore.mint.special", "mindspore.mint.distributed")
# packages whose modules are walked for the import paths of each recorded name (MindSpore's own layout:
# mindspore/ops/operations/math_ops.py, mindspore/nn/layer/conv.py, ...)
PATH_PACKAGES = ("mindspore.ops.operations", "mindspore.ops.function", "mindspore.ops.composite",
                 "mindspore.nn.layer", "mindspore.nn.loss", "mindspore.nn.optim", "mindspore.nn.wrap",
                 "mindspore.common", "mindspore.train", "mindspore.mint")
PATH_MODULES = ("mindspore", "mindspore.ops", "mindspore.ops.functional", "mindspore.ops.operations",
                "mindspore.nn", "mindspore.amp", "mindspore.communication")
_DOC_SIGNATURE = re.compile(r"^\s*(\w+)\((.*)\)\s*(->.*)?$")


def plain(value: object) -> object:
    """A default as JSON data when it is plain data, else ``{"repr": ...}``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else {"repr": repr(value)}
    if isinstance(value, (tuple, list)) and all(isinstance(v, (bool, int, float, str, type(None))) for v in value):
        return {"tuple" if isinstance(value, tuple) else "list": list(value)}
    return {"repr": repr(value)}


def parameters(sig: inspect.Signature, drop_self: bool = False) -> list[list]:
    """``[[name, kind, default], ...]``; kind is inspect's (POSITIONAL_OR_KEYWORD, ...); no default -> absent."""
    out = []
    for p in sig.parameters.values():
        if drop_self and not out and p.name == "self":
            drop_self = False
            continue
        row = [p.name, p.kind.name]
        if p.default is not inspect.Parameter.empty:
            row.append(plain(p.default))
        out.append(row)
    return out


def signature_of(obj: object, drop_self: bool = False) -> list[list] | None:
    try:
        return parameters(inspect.signature(obj), drop_self)
    except (TypeError, ValueError):
        return None


def doc_signatures(name: str, doc: str | None) -> list[list[list]]:
    """Overloads written at the top of a builtin's docstring (``add(other) -> Tensor``), their parameter
    lists parsed by ast as a ``def``'s; defaults are literals or kept as their source text."""
    found = []
    for line in (doc or "").splitlines()[:12]:
        m = _DOC_SIGNATURE.match(line)
        if not m or m.group(1) != name:
            continue
        try:
            args = ast.parse(f"def f({m.group(2)}): pass").body[0].args
        except SyntaxError:
            continue
        rows: list[list] = []
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for i, (a, d) in enumerate(zip(positional, defaults)):
            rows.append([a.arg, "POSITIONAL_ONLY" if i < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD"]
                        + ([] if d is None else [literal(d)]))
        if args.vararg:
            rows.append([args.vararg.arg, "VAR_POSITIONAL"])
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            rows.append([a.arg, "KEYWORD_ONLY"] + ([] if d is None else [literal(d)]))
        if args.kwarg:
            rows.append([args.kwarg.arg, "VAR_KEYWORD"])
        found.append(rows)
    return found


def overloads(name: str, obj: object, drop_self: bool = False) -> list[list[list]]:
    """A callable's signatures: inspect's, unless it has none or only ``(*args, **kwargs)`` (C++ builtins,
    MindSpore's overloaded functionals), then the overloads its docstring writes out."""
    sig = signature_of(obj, drop_self)
    if sig is not None and [k for _, k, *_ in sig] != ["VAR_POSITIONAL", "VAR_KEYWORD"]:
        return [sig]
    return doc_signatures(name, getattr(obj, "__doc__", None)) or ([sig] if sig is not None else [])


def literal(node: ast.expr) -> object:
    try:
        return plain(ast.literal_eval(node))
    except ValueError:
        return {"repr": ast.unparse(node)}


def kind_of(obj: object, primitive: type, cell: type) -> str | None:
    if inspect.isclass(obj):
        if issubclass(obj, primitive):
            return "primitive"
        if issubclass(obj, cell):
            return "cell"
        return "class"
    if inspect.ismodule(obj):
        return None
    return "function" if callable(obj) else None


def public(module) -> list[str]:
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    return sorted({n for n in names if not n.startswith("_")})


def import_paths(objects: dict[int, list[str]]) -> None:
    """Adds to ``objects`` (id -> paths) every module under PATH_PACKAGES/PATH_MODULES exposing the object."""
    modules = set(PATH_MODULES)
    for pkg_name in PATH_PACKAGES:
        pkg = importlib.import_module(pkg_name)
        modules.add(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, pkg_name + "."):
            if any(part.startswith("_") for part in info.name.split(".")):
                continue
            modules.add(info.name)
    for mod_name in sorted(modules):
        try:
            mod = importlib.import_module(mod_name)
        except Exception:          # a module that needs hardware or optional packages: not a user path here
            continue
        for attr in dir(mod):
            if attr.startswith("_"):
                continue
            paths = objects.get(id(getattr(mod, attr, None)))
            if paths is not None:
                paths.append(f"{mod_name}.{attr}")


def record() -> dict:
    import mindspore
    from mindspore import Tensor, nn
    from mindspore.ops import Primitive

    entries: dict[str, dict] = {}
    objects: dict[int, list[str]] = {}
    for ns_name in NAMESPACES:
        ns = importlib.import_module(ns_name)
        for name in public(ns):
            obj = getattr(ns, name, None)
            kind = kind_of(obj, Primitive, nn.Cell)
            if kind is None:
                continue
            entry: dict = {"kind": kind}
            if kind == "primitive":
                entry["init"] = signature_of(obj.__init__, drop_self=True)
                entry["call"] = signature_of(obj.__call__, drop_self=True)
            elif kind in ("cell", "class"):
                entry["init"] = signature_of(obj.__init__, drop_self=True)
            else:
                entry["signatures"] = overloads(name, obj)
            entry["defined_in"] = getattr(obj, "__module__", None)
            entries[f"{ns_name}.{name}"] = entry
            objects.setdefault(id(obj), [])
    for name in sorted(n for n in dir(Tensor) if not n.startswith("_")):
        attr = getattr(Tensor, name)
        if isinstance(attr, property) or not callable(attr):
            entries[f"mindspore.Tensor.{name}"] = {"kind": "tensor_property"}
            continue
        entries[f"mindspore.Tensor.{name}"] = {"kind": "tensor_method",
                                               "signatures": overloads(name, attr, drop_self=True)}
    import_paths(objects)
    by_id = {}
    for ns_name in NAMESPACES:
        ns = importlib.import_module(ns_name)
        for name in public(ns):
            full = f"{ns_name}.{name}"
            if full in entries:
                by_id[full] = id(getattr(ns, name))
    for full, oid in by_id.items():
        entries[full]["paths"] = sorted(set(objects.get(oid, [])) | {full})
    return {"mindspore_version": mindspore.__version__, "entries": entries}


def write(table: dict, out: Path) -> None:
    lines = ["{", f'"mindspore_version": {json.dumps(table["mindspore_version"])},', '"entries": {']
    items = sorted(table["entries"].items())
    for i, (name, entry) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"{json.dumps(name)}: {json.dumps(entry, sort_keys=True)}{comma}")
    lines += ["}", "}"]
    out.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    opts = parser.parse_args()
    table = record()
    write(table, opts.out)
    kinds: dict[str, int] = {}
    for e in table["entries"].values():
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    print(f"MindSpore {table['mindspore_version']}: {len(table['entries'])} names -> {opts.out} ({kinds})")


if __name__ == "__main__":
    main()
