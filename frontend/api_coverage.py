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
import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import AclError, InvalidFileError, InvalidParamError

SIGNATURES = Path(__file__).with_name("signatures.json")
# how often real code uses each name (tools/count_api_usage.py over the model zoos): the order of the work
USAGE = Path(__file__).with_name("api_usage.json")
ROOT = "mindspore"
# the signatures an entry may record: a function's overloads, a primitive's __init__ and __call__
SIGNATURE_PARTS = ("signatures", "init", "call")
# the table's parameter kinds (inspect's names) -> inspect's kinds; nothing else is looked up by name
PARAMETER_KINDS = {kind.name: kind for kind in (
    inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_POSITIONAL,
    inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD)}

# group name -> (which table entries belong to it: namespace prefix, kinds)
GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ops-functions": ("mindspore.ops", ("function",)),
    "ops-primitives": ("mindspore.ops", ("primitive",)),
    "nn-cells": ("mindspore.nn", ("cell",)),
    "tensor-methods": ("mindspore.Tensor", ("tensor_method", "tensor_property")),
    "mint": ("mindspore.mint", ("function", "cell", "class")),
}


# Names that only make sense on other hardware or deployments, with the reason: not served, and not
# counted against the front end (``ascendemu api-coverage`` lists them with the reason).
EXCLUDED: dict[str, str] = {
    "mindspore.ops.Pull": "parameter-server mode (PS): a host-side server process the Ascend device never runs",
    "mindspore.ops.Push": "parameter-server mode (PS): a host-side server process the Ascend device never runs",
    "mindspore.nn.AdamOffload": "host offload: Adam computed on the host CPU, an internal of CPU offload training",
    "mindspore.Tensor.offload": "host offload internals: moves a tensor's storage to host memory or a file",
    "mindspore.Tensor.offload_file_path": "host offload internals: the file a tensor was offloaded to",
    "mindspore.ops.AkgGpuRegOp": "registers a custom AKG kernel for GPU",
    "mindspore.ops.CpuRegOp": "registers a custom kernel for the CPU back end",
    "mindspore.ops.AiCPURegOp": "registers a custom AI CPU kernel (the emulated device runs numba kernels only)",
}


@dataclass
class GroupCoverage:
    """One group's served names against MindSpore's; ``excluded`` names (:data:`EXCLUDED`) are neither."""
    group: str
    served: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        """MindSpore's count of the group's names."""
        return len(self.served) + len(self.missing) + len(self.excluded)

    @property
    def share(self) -> float:
        """Served names per name that belongs on this device (the excluded ones left out)."""
        return len(self.served) / max(len(self.served) + len(self.missing), 1)


@functools.lru_cache(maxsize=1)
def load_table() -> dict:
    """The recorded table: ``{"mindspore_version": ..., "entries": {qualified name: entry}}``."""
    return json.loads(SIGNATURES.read_text())


@functools.lru_cache(maxsize=1)
def _entry_texts() -> dict[str, str]:
    """Qualified name -> the JSON text of its entry. ``tools/record_signatures.py`` writes one entry per
    line, so the front end's import (which reads a few hundred of 2,546 entries) parses only those, not
    the whole 0.8 MB table (``load_table``, for coverage and tests, parses everything)."""
    texts = {}
    for line in SIGNATURES.read_text().splitlines():
        name, sep, rest = line.partition('": ')
        if sep and name.startswith('"mindspore.') and "\\" not in name:
            texts[name[1:]] = rest[:-1] if rest.endswith(",") else rest
    return texts


def table_entry(qualified: str) -> dict | None:
    """The table's entry for ``qualified``, or None if the table lacks it."""
    text = _entry_texts().get(qualified)
    if text is None:
        return None
    try:
        entry = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidFileError(f"{SIGNATURES}: the entry of {qualified} is not JSON ({exc}); re-record it with "
                               "tools/record_signatures.py") from exc
    if not isinstance(entry, dict):
        raise InvalidFileError(f"{SIGNATURES}: the entry of {qualified} is {type(entry).__name__}, not an object; "
                               "re-record it with tools/record_signatures.py")
    return entry


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
        from .common.tensor import Tensor
        return hasattr(Tensor, name)
    module = _frontend_module(namespace)
    if module is None:
        return False
    try:
        return getattr(module, name, None) is not None
    except AclError:          # the module's __getattr__ refuses it: unsupported
        return False


@functools.lru_cache(maxsize=1)
def usage() -> dict[str, int]:
    """Uses of each qualified name counted over the model zoos (``api_usage.json``); {} without it."""
    if not USAGE.exists():
        return {}
    try:
        counts = json.loads(USAGE.read_text())["counts"]
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidFileError(f"{USAGE}: not a usage table ({exc}); re-count with tools/count_api_usage.py") from exc
    if not (isinstance(counts, dict) and all(isinstance(v, int) for v in counts.values())):
        raise InvalidFileError(f"{USAGE}: counts must map names to ints; re-count with tools/count_api_usage.py")
    return counts


def coverage() -> list[GroupCoverage]:
    """Per group, the names served and missing; missing names most-used first (:func:`usage`), then in
    the table's (sorted) order."""
    entries = load_table()["entries"]
    out = []
    for group, (prefix, kinds) in GROUPS.items():
        g = GroupCoverage(group)
        for qualified, entry in entries.items():
            namespace = qualified.rsplit(".", 1)[0]
            in_group = namespace == prefix or (prefix == "mindspore.mint" and namespace.startswith(prefix + "."))
            if in_group and entry["kind"] in kinds:
                (g.excluded if qualified in EXCLUDED else g.served if is_served(qualified) else
                 g.missing).append(qualified)
        counts = usage()
        g.missing.sort(key=lambda q: -counts.get(q, 0))
        out.append(g)
    return out


class RecordedDefault:
    """A default the table records only by its ``repr`` (``mindspore.float32``, a class): compared by
    that text, never evaluated (the table is data, not code)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordedDefault) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def table_default(value: object) -> object:
    """A recorded default as a Python value: JSON data as is, ``{"tuple": [...]}`` a tuple,
    ``{"list": [...]}`` a list, ``{"repr": text}`` a :class:`RecordedDefault`."""
    if isinstance(value, dict) and set(value) == {"tuple"}:
        return tuple(table_default(v) for v in value["tuple"])
    if isinstance(value, dict) and set(value) == {"list"}:
        return [table_default(v) for v in value["list"]]
    if isinstance(value, dict) and set(value) == {"repr"}:
        return RecordedDefault(str(value["repr"]))
    if isinstance(value, list):
        return [table_default(v) for v in value]
    return value


def rows_signature(rows: list) -> inspect.Signature:
    """An ``inspect.Signature`` from the table's rows ``[name, kind, default?]``."""
    if not isinstance(rows, list):
        raise InvalidFileError(f"{SIGNATURES}: a signature is {type(rows).__name__}, not a list of rows; re-record "
                               "it with tools/record_signatures.py")
    params = []
    for row in rows:
        if not (isinstance(row, list) and len(row) in (2, 3) and isinstance(row[0], str)
                and row[1] in PARAMETER_KINDS):
            raise InvalidFileError(f"{SIGNATURES}: signature row {row!r} is not [name, kind, default?] with a kind "
                                   f"among {sorted(PARAMETER_KINDS)}; re-record it with tools/record_signatures.py")
        name, kind = row[0], PARAMETER_KINDS[row[1]]
        default = table_default(row[2]) if len(row) == 3 else inspect.Parameter.empty
        try:
            params.append(inspect.Parameter(name, kind, default=default))
        except ValueError as exc:           # not an identifier, a default on *args, ...
            raise InvalidFileError(f"{SIGNATURES}: signature row {row!r}: {exc}") from exc
    try:
        return inspect.Signature(params)
    except ValueError as exc:               # parameters out of order, or named twice
        raise InvalidFileError(f"{SIGNATURES}: signature {rows!r}: {exc}") from exc


def table_signature(qualified: str, part: str = "signatures") -> inspect.Signature | None:
    """The signature MindSpore gives ``qualified`` (``mindspore.ops.add``), or None if the table lacks it.
    ``part``: "signatures" (a function's first overload), "init" or "call" (a primitive's)."""
    if part not in SIGNATURE_PARTS:
        raise InvalidParamError(f"table_signature: part={part!r} must be one of {SIGNATURE_PARTS}")
    entry = table_entry(qualified)
    if entry is None or entry.get(part) is None:
        return None
    rows = entry[part]
    if part == "signatures":                # a list of overloads: the first
        if not isinstance(rows, list) or not rows:
            raise InvalidFileError(f"{SIGNATURES}: {qualified} has no overload in 'signatures'; re-record it")
        rows = rows[0]
    return rows_signature(rows)
