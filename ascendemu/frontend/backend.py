"""Where the front end sends work: the executor that runs ops (PyNative) and captured graphs.

The front end only builds graphs and signatures; running them on the emulated device belongs to the
executor, which registers itself with :func:`set_backend`. A backend provides::

    run_op(sig: OpSignature, inputs: list[np.ndarray]) -> list[np.ndarray]
        one kernel op in PyNative mode (inputs match sig.inputs; one array per inferred output).
    run_graph(graph: Graph, inputs: list[np.ndarray], jit_level: str) -> list[np.ndarray]
        a captured graph (ascendemu.graph.ir.Graph, constants carry their data); inputs match
        graph.inputs, the result has one array per graph.outputs entry. An output may be a graph
        input or a constant itself (``construct`` returned it unchanged).
"""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ascendemu.errors import FeatureNotSupportedError
from ascendemu.kernels.signature import OpSignature


class Backend(Protocol):
    def run_op(self, sig: OpSignature, inputs: list[np.ndarray]) -> list[np.ndarray]: ...

    def run_graph(self, graph: Any, inputs: list[np.ndarray], jit_level: str) -> list[np.ndarray]: ...


_backend: Backend | None = None


def set_backend(backend: Backend | None) -> Backend | None:
    """Install ``backend`` (None uninstalls); returns the previous one so callers can restore it."""
    global _backend
    previous, _backend = _backend, backend
    return previous


def get_backend() -> Backend:
    if _backend is None:
        raise FeatureNotSupportedError(
            "no executor is installed to run ops: install one with "
            "ascendemu.frontend.backend.set_backend(...) (the device executor registers itself when "
            "imported)")
    return _backend
