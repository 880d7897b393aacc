"""No module of ``nn``, ``train`` or ``amp`` fakes a package with ``__path__`` (MindSpore's packages are
packages here). Their imports form no cycle: tests/test_import_cycles.py checks the whole library.
"""
from __future__ import annotations

import ast

from test_layers import modules

FRONT = "ascendemu.frontend"
# the modules of the nn/train/amp part of the layout
PREFIXES = (f"{FRONT}.nn", f"{FRONT}.train")
SINGLES = (f"{FRONT}.amp",)


def _owned(module: str) -> bool:
    return module in SINGLES or any(module == p or module.startswith(p + ".") for p in PREFIXES)


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
