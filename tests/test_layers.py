"""Imports point down: front end / CLI -> graph -> replay -> cache -> kernels -> hal -> device -> traces -> errors.

Every ``import`` and ``from ... import`` in every module of the package is read with ``ast`` (lazy
imports inside functions and ``TYPE_CHECKING`` blocks included) and checked against the layer order:
a module may import its own package and the packages below it, never one above. Each package also
declares ``__all__`` in its ``__init__``.
"""
from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Packages, bottom first. The root package holds only the bottom layer (errors, units). Where each
# lives on disk is pyproject.toml's package-dir mapping (its one home).
ORDER = ["ascendemu", "ascendemu.traces", "ascendemu.device", "ascendemu.hal", "ascendemu.kernels",
         "ascendemu.cache", "ascendemu.replay", "ascendemu.graph", "ascendemu.frontend", "ascendemu.cli"]
_SECTION = (ROOT / "pyproject.toml").read_text().split("[tool.setuptools.package-dir]", 1)[1].split("\n[", 1)[0]
PACKAGE_DIR = dict(re.findall(r'^"([\w.]+)" = "([\w/]+)"$', _SECTION, re.MULTILINE))   # tomllib needs 3.11
LAYERS = [(package, PACKAGE_DIR[package]) for package in ORDER]
RANK = {package: i for i, (package, _) in enumerate(LAYERS)}
# ``python -m ascendemu`` is the entry point: it sits above everything, like the CLI it runs.
ENTRY_POINTS = {"ascendemu.__main__": RANK["ascendemu.cli"]}


def layer_of(module: str) -> str | None:
    """The package (layer) a module name belongs to: the longest matching package prefix."""
    best = None
    for package, _ in LAYERS:
        if module == package or module.startswith(package + "."):
            if best is None or len(package) > len(best):
                best = package
    return best


def modules() -> list[tuple[str, Path]]:
    found = []
    for package, directory in LAYERS:
        for path in sorted((ROOT / directory).rglob("*.py")):
            rel = path.relative_to(ROOT / directory).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            found.append((".".join([package, *parts]), path))
    return found


def imports(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, at any depth."""
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                # `from . import x` imports the submodule x
                names = [f"{target}.{a.name}" for a in node.names] if node.module is None else [target]
            else:
                names = [node.module]
            out += [(node.lineno, name) for name in names]
    return out


def test_every_import_points_down():
    bad = []
    for module, path in modules():
        rank = ENTRY_POINTS.get(module, RANK[layer_of(module)])
        for line, target in imports(module, path):
            if not target.startswith("ascendemu"):
                continue
            layer = layer_of(target)
            if layer is not None and RANK[layer] > rank:
                bad.append(f"{path.relative_to(ROOT)}:{line} ({layer_of(module)}) imports {target} ({layer})")
    assert not bad, "imports pointing up:\n" + "\n".join(bad)


def test_the_checker_sees_lazy_and_relative_imports(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text("def f():\n    from ..graph import plan\n    import ascendemu.cli.run\n")
    found = sorted(name for _, name in imports("ascendemu.hal.x", sample))
    assert found == ["ascendemu.cli.run", "ascendemu.graph"]
    assert layer_of("ascendemu.graph.plan") == "ascendemu.graph" and layer_of("ascendemu.errors") == "ascendemu"


@pytest.mark.parametrize("package", [p for p, _ in LAYERS])
def test_each_package_declares_all(package):
    module = importlib.import_module(package)
    assert isinstance(getattr(module, "__all__", None), (list, tuple)) and module.__all__, package
    for name in module.__all__:
        assert hasattr(module, name) or importlib.util.find_spec(f"{package}.{name}"), (package, name)


def test_the_layer_order_names_every_mapped_package():
    assert sorted(ORDER) == sorted(PACKAGE_DIR)
