"""JIT Fallback at run time: an ``@jit`` function that needs a tensor's value on the host runs as Python.

MindSpore's LAX syntax level (its default) compiles ``x.asnumpy()`` of a graph value into an
interpreted node (PyExecute) that runs the Python at run time, on the real data, so
``x.asnumpy() + y.asnumpy()``, ``isinstance(x.asnumpy(), np.ndarray)`` or ``Tensor(x.asnumpy())``
inside ``@jit`` give Python's results (static_graph.md "JIT Fallback"). A tracing capture has no data,
so :class:`HostValueNeeded` stops it, and ``jit`` runs the whole function as Python instead, its ops
dispatched one by one as in PyNative: the granularity differs (the function, not the node), the values
do not. An ``assert`` whose condition needs a graph tensor's data (``assert x in [2, 3, 4]``) is such a
node too (:func:`assert_`): it raises AssertionError only when the data fails it. Outside ``@jit`` (a
GRAPH_MODE ``construct``) the error reaches the user.
"""
from __future__ import annotations

from typing import Any, Callable

from ascendemu.graph.capture import GraphCaptureError, data_dependent_error

__all__ = ["HostValueNeeded", "assert_", "host_value_needed"]


class HostValueNeeded(GraphCaptureError):
    """Capture met Python that needs a graph tensor's data on the host (``Tensor.asnumpy()``)."""


def host_value_needed(what: str, tensor: str) -> HostValueNeeded:
    return HostValueNeeded(*data_dependent_error(what, tensor).args)


def assert_(test: Callable[[], Any], message: Callable[[], Any] | None, where: str) -> None:
    """``assert test, message`` in a converted function (:mod:`.parse`): Python's, on a static condition;
    :class:`HostValueNeeded` when the condition is a graph tensor or needs one's data."""
    try:
        cond = test()
        if getattr(cond, "is_symbolic", False):          # a graph Tensor (tensor.py imports this module)
            raise host_value_needed(f"assert at {where}", cond._where())
        ok = bool(cond)
    except HostValueNeeded:
        raise
    except GraphCaptureError as e:
        raise HostValueNeeded(*e.args) from e
    if not ok:
        raise AssertionError(message()) if message is not None else AssertionError
