"""``mindspore.ops`` laid out as MindSpore lays it out (issue 26, part A).

Oracles: the import statements of the library read with ``ast`` (tests/test_layers.py's
``modules()``/``imports()``, lazy imports included), and the signature table recorded from real
MindSpore 2.10 (frontend/signatures.json): which module defines each primitive and function.
"""
from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_layers import imports  # noqa: E402

from ascendemu.frontend import Tensor, ops, set_backend  # noqa: E402
from ascendemu.frontend.api_coverage import load_table  # noqa: E402
from ascendemu.frontend.ops import function  # noqa: E402
from test_graph import NumpyBackend  # noqa: E402

FRONT = "ascendemu.frontend"


@pytest.fixture
def numpy_backend():
    """Ops run on numpy (tests/test_graph.py's backend): no device, no kernel cache."""
    previous = set_backend(NumpyBackend())
    yield
    set_backend(previous)


def test_tensor_never_imports_ops(numpy_backend):
    """Tensor's operators and methods come from the table ops fills (tensor_operator_registry)."""
    for rel in ("common/tensor.py", "common/parameter.py"):
        path = Path(__file__).resolve().parents[1] / "frontend" / rel
        targets = [t for _, t in imports(f"{FRONT}.{rel[:-3].replace('/', '.')}", path)]
        assert not [t for t in targets if t.startswith(f"{FRONT}.ops") or t == "importlib"], (rel, targets)
        assert "import_module" not in path.read_text()
    x = Tensor(np.array([[1.0, -2.0], [3.0, 4.0]], np.float32))
    np.testing.assert_array_equal((x * 2 + 1).asnumpy(), np.array([[3.0, -3.0], [7.0, 9.0]], np.float32))
    np.testing.assert_array_equal(x.sum(axis=1).asnumpy(), np.array([-1.0, 7.0], np.float32))
    np.testing.assert_array_equal(x[1].asnumpy(), np.array([3.0, 4.0], np.float32))


def _homes(entry: dict, name: str, package: str) -> set[str]:
    """The modules under ``package`` (mindspore.ops.operations / .function) the table says hold ``name``."""
    paths = [entry.get("defined_in", "")] + [p.rpartition(".")[0] for p in entry.get("paths", []) if
                                              p.endswith("." + name)]
    return {p for p in paths if p.startswith(package + ".")}


def _served(module: str):
    try:
        return importlib.import_module(FRONT + module[len("mindspore"):])
    except ImportError:
        return None


def test_every_primitive_is_importable_from_where_mindspore_defines_it():
    entries = load_table()["entries"]
    checked, wrong, unplaced = 0, [], []
    for name in ops.PRIMITIVES:
        entry = entries.get(f"mindspore.ops.{name}")
        if entry is None:                   # an older name MindSpore 2.10 no longer has (ResizeBilinear, GELU)
            continue
        homes = _homes(entry, name, "mindspore.ops.operations")
        served = [(home, mod) for home in sorted(homes) if (mod := _served(home)) is not None]
        if homes and not served:
            unplaced.append(f"{name}: {sorted(homes)}")
        for home, module in served:
            checked += 1
            if getattr(module, name, None) is not getattr(ops, name):
                wrong.append(f"{home}.{name}")
    assert not wrong and not unplaced, f"not served where MindSpore defines them: {wrong}; no home served: {unplaced}"
    # MindSpore's deprecated names (Pack, Unpack, InplaceUpdate) live in no operations module: none to check
    deprecated = sum(entries.get(f"mindspore.ops.{name}", {}).get("defined_in") == "mindspore.ops.deprecated"
                     for name in ops.PRIMITIVES)
    assert checked >= len(ops.PRIMITIVES) - 2 - deprecated
    from ascendemu.frontend.ops.operations.nn_ops import Conv2D
    assert Conv2D.__module__ == f"{FRONT}.ops.operations.nn_ops" and ops.ReLU.__module__.endswith(".nn_ops")


def test_functions_live_in_the_function_module_mindspore_defines_them_in():
    entries = load_table()["entries"]
    checked, wrong = 0, []
    for name in function.FUNCTIONS:
        home = entries.get(f"mindspore.ops.{name}", {}).get("defined_in", "")
        if not home.startswith("mindspore.ops.function.") or (module := _served(home)) is None:
            continue
        checked += 1
        if getattr(module, name, None) is not getattr(ops, name):
            wrong.append(f"{home}.{name}")
    assert not wrong and checked >= 40, (wrong, checked)


def test_a_name_a_home_module_lacks_is_a_clear_error():
    from ascendemu.frontend.unsupported import UnsupportedOpError
    from ascendemu.frontend.ops.operations import nn_ops, random_ops
    with pytest.raises(UnsupportedOpError, match="ops.operations.nn_ops.DeformableOffsets is not supported"):
        nn_ops.DeformableOffsets
    with pytest.raises(UnsupportedOpError, match="random_ops.NonDeterministicInts is not supported"):
        random_ops.NonDeterministicInts


def test_get_backend_names_the_groups_backend(ex):
    """MindSpore's ops.get_backend(group) is the group's communication backend: "hccl" on Ascend. (On the
    module's live device: init() joins the world through the runtime, which another test may have
    finalized.)"""
    from ascendemu.frontend.communication import management
    from ascendemu.frontend.communication.management import CommTypeError
    with pytest.raises(CommTypeError):
        ops.get_backend(3)
    if not management.GlobalComm.INITED:
        management.init()
    assert ops.get_backend() == "hccl"
    assert ast.parse("ops.get_backend()")       # the call the zoo makes


def test_the_facade_defines_nothing_but_re_exports():
    path = Path(__file__).resolve().parents[1] / "frontend" / "ops" / "__init__.py"
    tree = ast.parse(path.read_text())
    defined = [node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))]
    assert defined == ["__getattr__"]
