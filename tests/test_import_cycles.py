"""No import cycle in the library: its modules form a DAG, so each can be read, tested and imported
from the bottom up (a cycle is how a layer's "shared piece" ends up owned by two modules at once).

The import graph is the one tests/test_layers.py reads with ``ast`` (lazy imports inside functions
and ``TYPE_CHECKING`` blocks count: a type-only import still ties two modules' meanings together).
Cycles are its strongly connected components of more than one module (Tarjan's algorithm, iterative).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_layers import imports, modules  # noqa: E402



def import_graph() -> dict[str, set[str]]:
    """module -> the library modules it imports (a package import is an import of its ``__init__``)."""
    found = dict(modules())
    return {m: {t for _, t in imports(m, p) if t in found and t != m} for m, p in found.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted, in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


def describe(graph: dict[str, set[str]], component: list[str]) -> str:
    members = set(component)
    edges = [f"    {a} -> {b}" for a in component for b in sorted(graph[a] & members)]
    return f"cycle of {len(component)} modules:\n" + "\n".join(edges)


def test_the_cycle_finder_finds_a_known_cycle_and_nothing_else():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}, "f": {"g"}, "g": {"f"}}
    assert cycles(graph) == [["a", "b", "c"], ["f", "g"]]


def test_no_import_cycle_anywhere_in_the_library():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(describe(graph, c) for c in found)


def test_hal_steps_use_only_the_runtimes_public_calls():
    """Calls go one way (hal/steps.py): a step issues public runtime calls and the runtime builds the
    step's task; a step never reaches into the runtime's private helpers (``rt._kernel_task``)."""
    import ast
    path = Path(__file__).resolve().parent.parent / "hal" / "steps.py"
    private = [f"hal/steps.py:{n.lineno}: rt.{n.attr}" for n in ast.walk(ast.parse(path.read_text()))
               if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "rt"
               and n.attr.startswith("_")]
    assert not private, "steps calling the runtime's private helpers:\n" + "\n".join(private)
