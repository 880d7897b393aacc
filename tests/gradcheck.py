"""Gradient checking: an op's backward graph (built by autodiff from its rule, run on the emulated
device) against central finite differences of a float64 numpy reference of the forward op.

``autodiff_grads`` captures ``op(*inputs)`` with a random cotangent as sens, differentiates it with
respect to every input and runs forward + backward as one graph; ``numeric_grads`` differentiates
``sum(reference(*inputs) * cotangent)`` numerically. Both are independent of each other: the rule
under test only feeds the first.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ascendemu.graph.autodiff import differentiate
from ascendemu.graph.capture import Tracer
from ascendemu.graph.executor import DeviceExecutor
from ascendemu.kernels.signature import TensorDesc


def autodiff_grads(executor: DeviceExecutor, op: str, arrays: Sequence[np.ndarray], attrs: dict,
                   cotangent: np.ndarray, out_index: int = 0, jit_level: str = "O0") -> list[np.ndarray]:
    """[forward output, d/d input 0, d/d input 1, ...] computed on the device."""
    tracer = Tracer(f"grad_{op}")
    ins = [tracer.input(TensorDesc(a.shape, str(a.dtype))) for a in arrays]
    with tracer.active():
        outs = tracer.apply(op, ins, attrs)
        sens = tracer.literal(np.asarray(cotangent), str(cotangent.dtype))
        grads = differentiate(tracer, outs[out_index], ins, sens)
    tracer.graph.outputs = [outs[out_index]] + grads
    return executor.run_graph(tracer.graph, list(arrays), jit_level)


def numeric_grads(reference: Callable[..., np.ndarray], arrays: Sequence[np.ndarray], cotangent: np.ndarray,
                  wrt: Sequence[int] | None = None, eps: float = 1e-4) -> list[np.ndarray | None]:
    """Central differences of sum(reference(*x) * cotangent) in float64, for inputs ``wrt`` (default:
    every float input); None for the others."""
    xs = [np.array(a, dtype=np.float64) if a.dtype.kind == "f" else a for a in arrays]
    ct = np.asarray(cotangent, np.float64)
    wrt = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"] if wrt is None else wrt
    result: list[np.ndarray | None] = [None] * len(arrays)
    for i in wrt:
        g = np.zeros_like(xs[i])
        flat, gflat = xs[i].reshape(-1), g.reshape(-1)
        for k in range(flat.size):
            old = flat[k]
            flat[k] = old + eps
            plus = float(np.sum(reference(*xs) * ct))
            flat[k] = old - eps
            minus = float(np.sum(reference(*xs) * ct))
            flat[k] = old
            gflat[k] = (plus - minus) / (2 * eps)
        result[i] = g
    return result


def assert_grads_close(got: Sequence[np.ndarray], want: Sequence[np.ndarray | None], rtol: float = 2e-3,
                       atol: float = 2e-3) -> None:
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:
            continue
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")
