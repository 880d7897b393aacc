"""Census of the MindSpore names a set of scripts uses, and how many of them the front end resolves.

Each directory given is one network (or tutorial). Its ``.py`` files are parsed with ``ast``; ``.md``
and ``.ipynb`` files contribute their Python code blocks (lines starting with ``!`` or ``%`` dropped).
A *name* is the fully qualified MindSpore path a script reaches: every ``import mindspore...`` /
``from mindspore... import x`` and every attribute chain on an imported alias
(``import mindspore.nn as nn; nn.Conv2d`` -> ``mindspore.nn.Conv2d``, ``P.ReduceSum`` ->
``mindspore.ops.operations.ReduceSum``). A name *resolves* when importing its longest module prefix
under ``ascendemu run``'s ``mindspore`` alias and taking the remaining attributes succeeds; anything
else (ModuleNotFoundError, UnsupportedOpError, ...) counts as missing.

Counts are distinct names per network, summed over networks (a name used by three networks counts
three times), as the issue's baseline counts them; the table also gives each network's share and the
names most networks miss.

Run: python bench/census.py DIR [DIR ...] [--missing N] [--json FILE]
"""
from __future__ import annotations

import argparse
import ast
import collections
import importlib
import json
import re
import sys
from pathlib import Path

ALIAS = "mindspore"
_FENCE = re.compile(r"```(?:python|py|ipython3?)\s*\n(.*?)```", re.DOTALL)


def code_blocks(path: Path) -> list[str]:
    """The Python sources of one file: the file itself, or the code blocks of a notebook/markdown."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".py":
        return [text]
    if path.suffix == ".ipynb":
        cells = json.loads(text).get("cells", [])
        blocks = ["".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code"]
    else:
        blocks = _FENCE.findall(text)
    return ["\n".join(line for line in block.splitlines() if not line.lstrip().startswith(("!", "%")))
            for block in blocks]


def _chain(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> list[str]:
    """The longest ``a.b.c`` attribute chain that starts at the Name ``node``."""
    parts = [node.id]
    while isinstance(parents.get(node), ast.Attribute) and parents[node].value is node:
        node = parents[node]
        parts.append(node.attr)
    return parts


def names_in_source(source: str, aliases: dict[str, str]) -> set[str]:
    """Qualified MindSpore names one source uses; ``aliases`` (local name -> qualified name) is updated,
    so the code blocks of one tutorial share their imports."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    found: set[str] = set()
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):     # imports first: a use may come before its import in walk order
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == ALIAS or a.name.startswith(ALIAS + "."):
                    found.add(a.name)
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases[ALIAS] = ALIAS
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                (node.module == ALIAS or node.module.startswith(ALIAS + ".")):
            for a in node.names:
                if a.name == "*":
                    continue
                found.add(f"{node.module}.{a.name}")
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in aliases and isinstance(node.ctx, ast.Load):
            parts = _chain(node, parents)
            found.add(".".join([aliases[parts[0]], *parts[1:]]))
    return found


def network_names(directory: Path) -> set[str]:
    names: set[str] = set()
    for path in sorted(p for p in directory.rglob("*") if p.suffix in (".py", ".md", ".ipynb") and p.is_file()):
        aliases: dict[str, str] = {}
        for block in code_blocks(path):
            names |= names_in_source(block, aliases)
    return names


def resolves(name: str) -> bool:
    """True when ``name`` imports (longest module prefix) and its remaining attributes exist."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        except Exception:
            return False
        try:
            for attr in parts[i:]:
                value = getattr(value, attr)
        except Exception:
            return False
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path, help="one directory per network or tutorial")
    parser.add_argument("--missing", type=int, default=25, help="list the N names most networks miss")
    parser.add_argument("--json", type=Path, help="write the per-network census here")
    opts = parser.parse_args(argv)

    from ascendemu.cli.run import install_mindspore_alias
    install_mindspore_alias()

    cache: dict[str, bool] = {}
    rows, missing = [], collections.Counter()
    for directory in opts.dirs:
        names = network_names(directory)
        ok = {n for n in names if cache.setdefault(n, resolves(n))}
        missing.update(names - ok)
        rows.append({"network": directory.name, "names": len(names), "resolved": len(ok),
                     "missing": sorted(names - ok)})

    width = max(len(r["network"]) for r in rows)
    print(f"{'network':<{width}}  names  resolved   share")
    for r in rows:
        share = r["resolved"] / max(r["names"], 1)
        print(f"{r['network']:<{width}}  {r['names']:5d}  {r['resolved']:8d}  {share:6.1%}")
    total, ok = sum(r["names"] for r in rows), sum(r["resolved"] for r in rows)
    unique = len(cache)
    unique_ok = sum(cache.values())
    complete = sum(1 for r in rows if r["names"] and not r["missing"])
    print(f"{'all':<{width}}  {total:5d}  {ok:8d}  {ok / max(total, 1):6.1%}   (names per network, summed)")
    print(f"distinct names: {unique_ok}/{unique} resolve ({unique_ok / max(unique, 1):.1%}); "
          f"networks with every name resolved: {complete}/{len(rows)}")
    if opts.missing:
        print(f"\nmost missed ({opts.missing}): networks  name")
        for name, count in missing.most_common(opts.missing):
            print(f"  {count:3d}  {name}")
    if opts.json:
        opts.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
