"""Where the front end sends work: the executor that runs ops (PyNative) and captured graphs.

The front end only builds graphs and signatures; running them on the emulated device belongs to the
executor; `ascendemu run` installs one with :func:`set_backend`, and the first use without one creates
the emulated device's executor. A backend provides::

    run_op(sig: OpSignature, inputs: list[np.ndarray], outputs: tuple[TensorDesc, ...]) -> list[np.ndarray]
        one kernel op in PyNative mode (inputs match sig.inputs; ``outputs`` are the op's inferred
        output descs; one array per output).
    run_graph(graph: Graph, inputs: list[np.ndarray], jit_level: str) -> list[np.ndarray]
        a captured graph (ascendemu.graph.ir.Graph, constants carry their data); inputs match
        graph.inputs, the result has one array per graph.outputs entry. An output may be a graph
        input or a constant itself (``construct`` returned it unchanged).
    run_graph_sunk(graph: Graph, batches: list[list[np.ndarray]], jit_level: str) -> list[np.ndarray]
        dataset sink mode: the graph once per batch (each like run_graph's inputs), one sunk loop;
        the last step's outputs.
"""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ascendemu.kernels.signature import OpSignature, TensorDesc


class Backend(Protocol):
    def run_op(self, sig: OpSignature, inputs: list[np.ndarray],
               outputs: tuple[TensorDesc, ...]) -> list[np.ndarray]: ...

    def run_graph(self, graph: Any, inputs: list[np.ndarray], jit_level: str) -> list[np.ndarray]: ...

    def run_graph_sunk(self, graph: Any, batches: list[list[np.ndarray]], jit_level: str) -> list[np.ndarray]: ...


_backend: Backend | None = None


def set_backend(backend: Backend | None) -> Backend | None:
    """Install ``backend`` (None uninstalls); returns the previous one so callers can restore it."""
    global _backend
    previous, _backend = _backend, backend
    return previous


def is_dry_run() -> bool:
    """Whether the installed backend is a DryRun (computes nothing); False while none is installed (the
    one :func:`get_backend` makes computes)."""
    return bool(getattr(_backend, "dry_run", False))


def get_backend() -> Backend:
    """The installed backend; on first use without one, the emulated device's executor (device 0)."""
    global _backend
    if _backend is None:
        from ascendemu.graph.executor import DeviceExecutor

        from .context import get_context
        _backend = DeviceExecutor(device_id=get_context("device_id"))
    return _backend
