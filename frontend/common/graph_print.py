"""Python's ``print`` inside a graph: MindSpore's graph print, one item a line, every time the graph runs.

MindSpore 2.10 compiles a ``print(...)`` in ``construct`` or an ``@jit`` function into a print node that
runs with the graph, so every call prints again (recorded: ``print("y:", y, n, (1, 2), [3, 4], 2.5)``
prints six lines per call): each argument on its own line, text as it is, a Python value as ``str`` of
it (a list as the tuple MindSpore makes of it), a tensor as its value once the graph has run.
:mod:`.parse` rewrites the ``print(...)`` calls of a function it converts into :func:`print_`, which
records them with the capture (the Tracer's prints: the path ``ops.Print`` takes, so a tensor shows as
``ops.Print`` shows it).
"""
from __future__ import annotations

import builtins
from typing import Any, Callable

from ascendemu.graph.capture import current_tracer

from .tensor import Tensor

__all__ = ["print_"]


def print_(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` where ``fn`` is what the name ``print`` meant at the call: the builtin
    inside a capture is recorded as a graph print; anything else (a shadowing ``print``, ``sep``/``end``/
    ``file`` keywords, no capture) runs as Python."""
    tracer = current_tracer()
    if fn is not builtins.print or tracer is None or kwargs:
        return fn(*args, **kwargs)
    from ..capture import tracer_value

    tracer.print_(tuple(tracer_value(tracer, a) if isinstance(a, Tensor) else _text(a) for a in args))
    return None


def _text(value: Any) -> str:
    if isinstance(value, list):
        value = tuple(value)
    return value if isinstance(value, str) else str(value)
