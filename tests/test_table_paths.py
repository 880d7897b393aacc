"""Every path real MindSpore 2.10 gives a served name under ``mindspore.nn``, ``mindspore.train`` and
``mindspore.amp`` resolves to the same object in the front end, wherever the front end serves that
path's module (``mindspore.X`` is ``ascendemu.frontend.X``, as ``ascendemu run`` maps it).

The oracle is the signature table ``frontend/signatures.json``, recorded from an installed MindSpore:
each entry lists all the module paths that expose the name (``mindspore.nn.layer.basic.Dense``,
``mindspore.nn.layer.Dense``, ...). A module path the front end does not serve (``nn.layer.transformer``)
is out of scope; one it serves must hold the name, as the same object, as MindSpore's does.
"""
from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from ascendemu.frontend.api_coverage import is_served, load_table

FRONT = "ascendemu.frontend"
SCOPES = ("mindspore.nn", "mindspore.train", "mindspore.amp")   # the namespaces this file checks
# module files MindSpore defines the served nn names in: each must be served (the layout of issue 26)
MINDSPORE_HOMES = ("mindspore.nn.layer.activation", "mindspore.nn.layer.basic", "mindspore.nn.layer.conv",
                   "mindspore.nn.layer.normalization", "mindspore.nn.layer.pooling", "mindspore.nn.layer.container",
                   "mindspore.nn.layer.embedding", "mindspore.nn.layer.image", "mindspore.nn.layer.rnns",
                   "mindspore.nn.loss.loss", "mindspore.nn.optim.optimizer", "mindspore.nn.optim.momentum",
                   "mindspore.nn.optim.sgd", "mindspore.nn.optim.adam", "mindspore.nn.wrap.cell_wrapper",
                   "mindspore.nn.wrap.loss_scale", "mindspore.nn.wrap.grad_reducer", "mindspore.nn.cell",
                   "mindspore.nn.learning_rate_schedule", "mindspore.nn.dynamic_lr", "mindspore.train.serialization",
                   "mindspore.train.model", "mindspore.train.metrics")


def _in_scope(module: str) -> bool:
    return any(module == scope or module.startswith(scope + ".") for scope in SCOPES)


def _front_module(path: str) -> ModuleType | None:
    """The front end's module for ``mindspore.X`` (``ascendemu.frontend.X``), or None if it serves none."""
    try:
        return importlib.import_module(FRONT + path[len("mindspore"):])
    except ModuleNotFoundError:
        return None


def _served_paths() -> list[tuple[str, str]]:
    """(qualified table name, one of its paths) for each served name's path in scope whose module the
    front end serves."""
    out = []
    for qualified, entry in load_table()["entries"].items():
        paths = [p for p in entry.get("paths", ()) if _in_scope(p.rsplit(".", 1)[0])]
        if paths and is_served(qualified):
            out += [(qualified, path) for path in paths if _front_module(path.rsplit(".", 1)[0]) is not None]
    return out


SERVED_PATHS = _served_paths()


def _table_object(qualified: str):
    namespace, name = qualified.rsplit(".", 1)
    return getattr(_front_module(namespace), name)


@pytest.mark.parametrize("qualified, path", SERVED_PATHS, ids=[p for _, p in SERVED_PATHS])
def test_each_table_path_of_a_served_module_is_the_same_object(qualified, path):
    module_path, name = path.rsplit(".", 1)
    module = _front_module(module_path)
    assert getattr(module, name, None) is _table_object(qualified), (
        f"{path} (MindSpore's path of {qualified}) is not {qualified} in {module.__name__}")


@pytest.mark.parametrize("home", MINDSPORE_HOMES)
def test_mindspore_home_modules_are_served(home):
    """The files MindSpore defines the served names in are modules here, and each name the table says is
    defined there (``defined_in``) is defined in that very module, not only re-exported by it."""
    module = _front_module(home)
    assert module is not None, f"{home} is not served"
    defined = [q for q, e in load_table()["entries"].items() if e.get("defined_in") == home and is_served(q)]
    for qualified in defined:
        obj = _table_object(qualified)
        assert getattr(obj, "__module__", None) == FRONT + home[len("mindspore"):], (qualified, obj.__module__)


def test_the_table_paths_cover_the_layout():
    """The table's paths reach the new modules: a layer by its file, an optimizer family by its file, a
    primitive MindSpore's module imports (``ops.Cast`` in ``train.serialization``)."""
    paths = {path for _, path in SERVED_PATHS}
    assert {"mindspore.nn.layer.basic.Dense", "mindspore.nn.layer.image.Conv2d", "mindspore.nn.optim.momentum.Momentum",
            "mindspore.nn.wrap.loss_scale.TrainOneStepCell", "mindspore.nn.wrap.grad_reducer.AllReduce",
            "mindspore.train.serialization.Cast", "mindspore.amp.constexpr"} <= paths
    assert _front_module("mindspore.nn.layer.basic").Dense is _front_module("mindspore.nn").Dense
