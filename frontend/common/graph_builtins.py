"""Python built-ins whose result MindSpore's static-graph syntax defines differently from Python.

MindSpore's parser resolves these calls itself (its ``_extends/parse/standard_method.py``); a
converted function (:mod:`.parse`) calls the helpers here instead, so a graph gives what MindSpore's
graph gives (static_graph.md "Dictionary"): ``dict.keys()``/``values()`` as tuples, ``items()`` as a
list of (key, value) tuples, and Python 2's ``has_key``. Any other object's method of the same name
runs as it is.
"""
from __future__ import annotations

from typing import Any

__all__ = ["DICT_METHODS", "dict_method"]


def _has_key(d: dict, key: Any) -> bool:
    return key in d


# method name -> what a graph's dict gives for it
DICT_METHODS = {
    "keys": lambda d: tuple(d.keys()),
    "values": lambda d: tuple(d.values()),
    "items": lambda d: list(d.items()),
    "has_key": _has_key,
}


def dict_method(obj: Any, name: str, *args: Any) -> Any:
    """``obj.<name>(*args)`` as MindSpore's graph syntax runs it."""
    if isinstance(obj, dict):
        return DICT_METHODS[name](obj, *args)
    return getattr(obj, name)(*args)
