"""The executor the front end and the CLI use: runs single ops (PyNative) and compiled graphs (O0/O1/O2)
on the emulated device, through the HAL.

:class:`DeviceExecutor` is a thin facade over parts with one concern each: the run mode
(``modes``: computing, or DryRun), host <-> device copies (``transfer``), graph preparation (``prepare``:
compile or graph cache, kernels, streams, memory, constants), the op runner (``pynative``), the step and
dataset sink runners (``runners``) and the run's log and summary (``summary``). It is the front end's
backend (``ascendemu.frontend.backend``): ``run_op``, ``run_graph`` and ``run_graph_sunk``.
"""
from __future__ import annotations

import numpy as np

from ascendemu.cache.kernel_meta import KernelCache
from ascendemu.errors import InvalidParamError
from ascendemu.hal.runtime import Runtime, get_runtime
from ascendemu.kernels.signature import OpSignature, TensorDesc
from ascendemu.ranks import resolve_rank

from .bindings import Prepared
from .graph_cache import GraphCache
from .ir import Graph
from .memory_tracker import MemoryTracker, tracker_enabled
from .modes import DRYRUN_ACTUAL, DRYRUN_STEP, DRYRUN_USED, RunMode, run_mode
from .passes import DEFAULT_ORDER_POLICY
from .prepare import GraphPreparer
from .pynative import OpRunner
from .runners import SinkRunner, StepRunner
from .summary import PYNATIVE, STEP_HISTORY, RunLog, StepRecord, run_summary
from .transfer import Transfers

__all__ = ["DRYRUN_ACTUAL", "DRYRUN_STEP", "DRYRUN_USED", "PYNATIVE", "STEP_HISTORY", "DeviceExecutor", "StepRecord"]


class DeviceExecutor:
    """Runs the front end's ops and graphs on one emulated device, through the HAL.

    ``dry_run``: the DryRun mode (nothing compiled or computed; memory and time still are), else kernels
    from the per-rank kernel cache under ``cache_root``. ``jit_level`` overrides what the script asks
    for (``ascendemu run --jit-level``); ``device`` names the node's preset if this initialises it.
    """

    def __init__(self, device_id: int = 0, cache_root: str | None = None, rank: int | None = None,
                 exec_order: str = DEFAULT_ORDER_POLICY, trace: bool = False, progress: bool = True,
                 jit_level: str | None = None, dry_run: bool = False, device: str | None = None):
        mode_kind = run_mode(dry_run)
        self.rt: Runtime = get_runtime()
        if self.rt.node is None:
            self.rt.init(spec=device, trace=trace, backing=mode_kind.backing)
        elif device is not None and self.rt.node.spec.name != device:
            raise InvalidParamError(f"the runtime already runs a {self.rt.node.spec.name} node; finalize() it "
                                    f"before asking for {device}")
        self.rt.set_device(device_id)
        # MS_ALLOC_CONF=memory_tracker:True: MindSpore's memory_block.csv / task.csv at the end
        self.memory_tracker = MemoryTracker().attach(self.rt) if tracker_enabled() else None
        self.device_id = device_id
        self.exec_order = exec_order
        self.progress = progress
        self.forced_jit_level = jit_level
        # the device preset's SoC is part of every kernel's identity: a 910B never reuses a 910A kernel
        self.kernel_cache = KernelCache(cache_root, rank, device_id, soc=self.rt.node.spec.soc_version)
        self.graph_cache = GraphCache(cache_root, rank)
        self.rank = resolve_rank(rank)
        self.mode: RunMode = mode_kind.create(self.kernel_cache, progress)
        self.dry_run = self.mode.dry_run
        self.log = RunLog(self.rt)
        transfers = Transfers(self.rt, self.mode)
        self.preparer = GraphPreparer(self.rt, device_id, self.mode, transfers, self.graph_cache, exec_order)
        self.op_runner = OpRunner(self.rt, self.mode, transfers, self.log)
        self.step_runner = StepRunner(self.rt, self.preparer, transfers, self.log)
        self.sink_runner = SinkRunner(self.rt, self.preparer, transfers, self.log, self.step_runner)
        # the parts' state, under the names callers and tests read
        self.steps = self.log.steps            # recent steps only; the summary keeps totals of all
        self._totals, self._sinks = self.log.totals, self.log.sinks
        self._prepared: dict[str, Prepared] = self.preparer.prepared

    @property
    def graphs_compiled(self) -> int:
        return self.preparer.graphs_compiled

    def run_op(self, sig: OpSignature, inputs: list[np.ndarray], outputs: tuple[TensorDesc, ...]) -> list[np.ndarray]:
        """One op: upload, launch on the default stream, wait, download (PyNative mode). ``outputs``:
        the op's inferred output descs (the front end has them; they are not inferred again)."""
        return self.op_runner.run(sig, inputs, outputs)

    def run_graph(self, graph: Graph, inputs: list[np.ndarray], jit_level: str) -> list[np.ndarray]:
        """One step of ``graph`` on ``inputs`` at ``jit_level`` (unless one was forced); its outputs."""
        return self.step_runner.run(graph, inputs, self.forced_jit_level or jit_level)

    def run_graph_sunk(self, graph: Graph, batches: list[list[np.ndarray]], jit_level: str) -> list[np.ndarray]:
        """Dataset sink mode: ``graph`` once per batch, the last step's outputs (``runners.SinkRunner``)."""
        return self.sink_runner.run(graph, batches, self.forced_jit_level or jit_level)

    def prepare(self, graph: Graph, jit_level: str) -> Prepared:
        """Compile (or take from the graph cache), build/load kernels, set up streams and memory."""
        return self.preparer.prepare(graph, jit_level)

    def write_execute_order(self, save_graphs_path: str | None) -> list:
        """Write ``<save_graphs_path or .>/rank_<rank>/execute_order/*.csv`` as MindSpore does when a
        DryRun process ends (nothing outside a DryRun), and the memory tracker's ``rank_<rank>/memory_block.csv``
        and ``task.csv`` when ``MS_ALLOC_CONF`` asks for them. Returns the files written."""
        written = self.mode.write_execute_order(save_graphs_path or ".", self.rank)
        if self.memory_tracker is not None:
            written += self.memory_tracker.write(save_graphs_path or ".", self.rank)
        return written

    def step_time(self) -> tuple[str, float] | None:
        """(graph, simulated device seconds per steady-state step) of the graph that took the most
        simulated device time, or None when no graph ran (``RunLog.step_time``)."""
        return self.log.step_time()

    def summary(self) -> list[str]:
        """The per-run summary a user reads: both clocks named, files named."""
        return run_summary(self.rt, self.device_id, self.mode, self.preparer, self.log)
