"""One meaning per class name: no two classes of the library share a name (outside the front end,
which keeps MindSpore's names). Two ``Step`` or ``KernelTask`` classes in two layers make every
import, docstring and traceback ambiguous; each class is named for what it is.

Every module is read with ``ast`` (tests/test_layers.py's ``modules()``), nested classes included.
"""
from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_layers import ROOT, modules  # noqa: E402

FRONTEND = "ascendemu.frontend"


def class_names(source: str) -> list[tuple[str, int]]:
    """(name, line) of every class defined in ``source``, at any depth."""
    return [(n.name, n.lineno) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)]


def duplicates(found: dict[str, list[str]]) -> dict[str, list[str]]:
    return {name: places for name, places in sorted(found.items()) if len(places) > 1}


def test_class_names_are_read_at_any_depth():
    source = "class A:\n    class B:\n        pass\ndef f():\n    class C: ...\n"
    assert class_names(source) == [("A", 1), ("B", 2), ("C", 5)]
    assert duplicates({"A": ["x:1"], "B": ["x:2", "y:3"]}) == {"B": ["x:2", "y:3"]}


def test_no_two_library_classes_share_a_name():
    found: dict[str, list[str]] = defaultdict(list)
    for module, path in modules():
        if module == FRONTEND or module.startswith(FRONTEND + "."):
            continue
        for name, line in class_names(path.read_text()):
            found[name].append(f"{path.relative_to(ROOT)}:{line}")
    dup = duplicates(found)
    assert not dup, "class names defined more than once (rename the less central one):\n" + "\n".join(
        f"  {name}: {', '.join(places)}" for name, places in dup.items())


# Small facts with one home each (docs/ARCHITECTURE.md, Invariants): the literal may appear only there.
FACT_HOMES = {"Ascend910A": "device/spec.py", "dfs": "graph/passes.py", "bfs": "graph/passes.py"}
# Modules that name runtime calls: they take the name from the trace format (a record's ``CALL``).
CALL_NAME_USERS = ("hal/record.py", "replay/replayer.py")


def string_constants(source: str) -> list[tuple[str, int]]:
    return [(n.value, n.lineno) for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_small_facts_are_spelled_only_in_their_home():
    copies = []
    for module, path in modules():
        if module == FRONTEND or module.startswith(FRONTEND + "."):
            continue
        rel = str(path.relative_to(ROOT))
        for value, line in string_constants(path.read_text()):
            if FACT_HOMES.get(value, rel) != rel:
                copies.append(f"{rel}:{line}: {value!r} (its home: {FACT_HOMES[value]})")
    assert not copies, "literal copies of a fact with a home:\n" + "\n".join(copies)


def test_runtime_call_names_come_from_the_trace_format():
    from ascendemu.traces.aetrace import RECORD_OF_CALL
    copies = []
    for rel in CALL_NAME_USERS:
        for value, line in string_constants((ROOT / rel).read_text()):
            if value in RECORD_OF_CALL:
                copies.append(f"{rel}:{line}: {value!r} (use the record's CALL)")
    assert not copies, "runtime call names spelled out:\n" + "\n".join(copies)


# No class of the library (front end included) may span more than this many lines: a longer one holds
# more than one concern; split it into a helper class it owns (as BestFitPool owns a SegmentMap).
MAX_CLASS_LINES = 300


def long_classes(source: str, limit: int = MAX_CLASS_LINES) -> list[tuple[str, int, int]]:
    """(name, line, length in lines) of every class in ``source``, at any depth, longer than ``limit``."""
    return [(n.name, n.lineno, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.ClassDef) and n.end_lineno - n.lineno + 1 > limit]


def test_long_classes_are_measured_from_class_line_to_last_line():
    source = "class A:\n    x = 1\n    class B:\n        y = 2\n\n\nclass C:\n    pass\n"
    assert long_classes(source, limit=1) == [("A", 1, 4), ("C", 7, 2), ("B", 3, 2)]
    assert long_classes(source, limit=3) == [("A", 1, 4)]


def test_no_library_class_is_over_300_lines():
    found = [f"{path.relative_to(ROOT)}:{line}: class {name} is {length} lines"
             for module, path in modules() for name, line, length in long_classes(path.read_text())]
    assert not found, (f"classes over {MAX_CLASS_LINES} lines (split each by concern into a helper class it "
                       "owns):\n" + "\n".join(found))
