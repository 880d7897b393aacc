"""PyNative mode: one op at a time, as the front end calls it (``apply_op`` -> ``run_op``)."""
from __future__ import annotations

import time

import numpy as np

from ascendemu.hal.runtime import Runtime
from ascendemu.kernels.library import plan_kernel
from ascendemu.kernels.registry import communication
from ascendemu.kernels.signature import OpSignature, TensorDesc

from .bindings import collective_step
from .modes import RunMode
from .summary import PYNATIVE, RunLog, StepRecord
from .transfer import Transfers

__all__ = ["OpRunner"]


class OpRunner:
    """Runs single ops on the default stream: upload, launch, wait, download, free; each is a step of
    level ``PyNative`` in the run log."""

    def __init__(self, rt: Runtime, mode: RunMode, transfers: Transfers, log: RunLog):
        self.rt, self.mode, self.transfers, self.log = rt, mode, transfers, log

    def run(self, sig: OpSignature, inputs: list[np.ndarray], outputs: tuple[TensorDesc, ...]) -> list[np.ndarray]:
        """One op: upload, launch on the default stream, wait, download (PyNative mode). ``outputs``:
        the op's inferred output descs (the front end has them; they are not inferred again)."""
        rt, io = self.rt, self.transfers
        wall0, host0 = time.perf_counter(), rt.host_time()
        if communication(sig.op) is not None:
            return self._run_collective(sig, inputs, outputs, wall0, host0)
        self.log.begin(sig.op, PYNATIVE)
        func = self.mode.kernels([plan_kernel(sig, outputs)])[0]
        owned = [io.upload(a, d) for a, d in zip(inputs, sig.inputs)]
        out_ptrs = [rt.malloc(max(d.nbytes, 1)) for d in outputs]
        scratch = [rt.malloc(a.nbytes) for a in func.args if a.role == "workspace"]
        rt.launch_kernel(func, func.block_dim, owned + out_ptrs + scratch, 0)
        rt.synchronize_stream(0)
        results = [io.download(p, d) for p, d in zip(out_ptrs, outputs)]
        for p in owned + out_ptrs + scratch:
            rt.free(p)
        self.log.end(sig.op, PYNATIVE)
        self.log.record(StepRecord(sig.op, PYNATIVE, 1, time.perf_counter() - wall0, rt.device_time() - host0))
        return results

    def _run_collective(self, sig: OpSignature, inputs: list[np.ndarray], outputs: tuple[TensorDesc, ...],
                        wall0: float, host0: float) -> list[np.ndarray]:
        """One collective op in PyNative mode: through its HCCL-shaped runtime call on the default stream."""
        rt, io = self.rt, self.transfers
        comm = rt.comm_find(sig.attr("group"))
        src = io.upload(inputs[0], sig.inputs[0]) if inputs else None
        dst = rt.malloc(max(outputs[0].nbytes, 1))
        try:
            collective_step(sig, outputs[0], src, dst, comm, 0).issue(rt)
            rt.synchronize_stream(0)
            result = io.download(dst, outputs[0])
        finally:
            for ptr in (src, dst):
                if ptr is not None:
                    rt.free(ptr)
        self.log.record(StepRecord(sig.op, PYNATIVE, 1, time.perf_counter() - wall0, rt.device_time() - host0))
        return [result]
