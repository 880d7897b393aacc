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
    """The import cycles: sets of two or more modules each reaching every other, each sorted, in a stable
    order. Plain reachability from every module (quadratic, and the library has a few hundred modules):
    simple enough to trust as the oracle, and no copy of the library's own Tarjan (replay/chakra.py)."""
    reach: dict[str, set[str]] = {}
    for module in graph:
        seen: set[str] = set()
        todo = list(graph[module])
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(graph.get(m, ()))
        reach[module] = seen
    found = {frozenset({m} | {n for n in reach[m] if m in reach[n]}) for m in graph if m in reach[m]}
    return sorted(sorted(c) for c in found if len(c) > 1)


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
