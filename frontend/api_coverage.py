"""How much of real MindSpore's public API the emulated ``mindspore`` serves.

The reference is the signature table ``signatures.json`` beside this module, recorded once from an
installed MindSpore by ``tools/record_signatures.py`` (its version is in the table). A name counts as
served when the front end's module of the same path has it as a real attribute: a name the front end
only refuses (``unsupported``) is missing. The groups are the ones users measure the front end by:
``mindspore.ops`` functions and Primitives, ``mindspore.nn`` Cells, ``Tensor`` methods and
``mindspore.mint`` (with its sub-namespaces).
"""
from __future__ import annotations

import functools
import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import AclError

SIGNATURES = Path(__file__).with_name("signatures.json")
ROOT = "mindspore"

# group name -> (which table entries belong to it: namespace prefix, kinds)
GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ops-functions": ("mindspore.ops", ("function",)),
    "ops-primitives": ("mindspore.ops", ("primitive",)),
    "nn-cells": ("mindspore.nn", ("cell",)),
    "tensor-methods": ("mindspore.Tensor", ("tensor_method", "tensor_property")),
    "mint": ("mindspore.mint", ("function", "cell", "class")),
}


@dataclass
class GroupCoverage:
    """One group's served names against MindSpore's."""
    group: str
    served: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.served) + len(self.missing)


@functools.lru_cache(maxsize=1)
def load_table() -> dict:
    """The recorded table: ``{"mindspore_version": ..., "entries": {qualified name: entry}}``."""
    return json.loads(SIGNATURES.read_text())


def _frontend_module(namespace: str):
    """The front end's module serving ``namespace`` (``mindspore.nn`` -> ascendemu.frontend.nn), or None."""
    suffix = namespace[len(ROOT):]
    try:
        return importlib.import_module(__package__ + suffix)
    except ImportError:
        return None


def is_served(qualified: str) -> bool:
    """Whether ``mindspore.<path>.<name>`` resolves in the front end to something other than a refusal."""
    namespace, name = qualified.rsplit(".", 1)
    if namespace == "mindspore.Tensor":
        from .tensor import Tensor
        return hasattr(Tensor, name)
    module = _frontend_module(namespace)
    if module is None:
        return False
    try:
        return getattr(module, name, None) is not None
    except AclError:          # the module's __getattr__ refuses it: unsupported
        return False


def coverage() -> list[GroupCoverage]:
    """Per group, the names served and missing, in the table's (sorted) order."""
    entries = load_table()["entries"]
    out = []
    for group, (prefix, kinds) in GROUPS.items():
        g = GroupCoverage(group)
        for qualified, entry in entries.items():
            namespace = qualified.rsplit(".", 1)[0]
            in_group = namespace == prefix or (prefix == "mindspore.mint" and namespace.startswith(prefix + "."))
            if in_group and entry["kind"] in kinds:
                (g.served if is_served(qualified) else g.missing).append(qualified)
        out.append(g)
    return out
