"""The modules of ``nn``, ``train`` and ``amp`` import each other without a cycle, and none fakes a
package with ``__path__`` (MindSpore's packages are packages here).

The import graph is read with ``ast`` by tests/test_layers.py's ``modules()``/``imports()`` (lazy
imports inside functions included), so a cycle a lazy import hides at run time still shows.
"""
from __future__ import annotations

import ast

from test_layers import imports, modules

FRONT = "ascendemu.frontend"
# the modules whose imports must form a DAG
PREFIXES = (f"{FRONT}.nn", f"{FRONT}.train")
SINGLES = (f"{FRONT}.amp",)


def _owned(module: str) -> bool:
    return module in SINGLES or any(module == p or module.startswith(p + ".") for p in PREFIXES)


def import_graph() -> dict[str, set[str]]:
    """module -> the owned modules it imports."""
    owned = {name: path for name, path in modules() if _owned(name)}
    return {name: {t for _, t in imports(name, path) if t in owned and t != name} for name, path in owned.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as [a, b, ..., a], or None (depth-first search, iterative)."""
    state: dict[str, int] = {}              # 1: on the current path, 2: done
    for root in sorted(graph):
        if state.get(root):
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        state[root] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append(iter(sorted(graph.get(child, ()))))
    return None


def test_find_cycle_finds_one_and_accepts_a_dag():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_the_new_packages():
    graph = import_graph()
    assert f"{FRONT}.nn.layer.basic" in graph[f"{FRONT}.nn.layer"]
    assert f"{FRONT}.nn.layer.activation" in graph[f"{FRONT}.nn.layer.basic"]
    assert f"{FRONT}.nn.wrap.loss_scale" in graph[f"{FRONT}.amp"]


def test_no_import_cycle_among_nn_train_and_amp():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_module_sets_path():
    """``__path__ = ...`` in a plain module made it a fake package; MindSpore's packages are real ones."""
    bad = []
    for name, path in modules():
        if _owned(name):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AnnAssign) else []
                if any(isinstance(t, ast.Name) and t.id == "__path__" for t in targets):
                    bad.append(f"{path}:{node.lineno}")
    assert not bad, "modules faking a package with __path__: " + ", ".join(bad)
