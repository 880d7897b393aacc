"""How the executor runs: computing (kernels from the kernel cache, numerics on the host backing), or DryRun.

A mode is passed to the executor's parts (op runner, graph preparation, transfers, summary) and is the
one place where the two differ: where kernels come from, what a download reads, what a compiled graph
leaves behind (DryRun keeps MindSpore's execution order files) and how the summary starts and ends.

DryRun (``--dry-run`` / ``MS_SIMULATION_LEVEL``): kernels are ``dry_run_function(plan)`` (entry 0:
checked, priced, memory allocated; nothing emitted, compiled or computed; numba is never imported), the
node has no host backing (``DryRun.backing``), downloads read zeros, a parameter's upload reads none of
its values (``state_data``: an abstract weight stays unfilled), and the summary ends with the
DryRun lines a launcher reads back from each rank's log (``ascendemu msrun --sim_level``).
"""
from __future__ import annotations

import os
from typing import Callable, Sequence

import numpy as np

from ascendemu.cache.kernel_meta import KernelCache
from ascendemu.errors import FeatureNotSupportedError
from ascendemu.hal.kernel import KernelFunction
from ascendemu.kernels.library import KernelPlan, dry_run_function
from ascendemu.kernels.signature import TensorDesc

from .execute_order import ExecuteOrderTracker
from .ir import StateSource
from .plan import CompiledGraph

__all__ = ["DRYRUN_ACTUAL", "DRYRUN_OVER_HBM", "DRYRUN_STEP", "DRYRUN_USED", "Compute", "DryRun", "RunMode", "run_mode"]

# The DryRun lines a launcher reads back from each rank's log (``ascendemu msrun --sim_level``).
DRYRUN_USED = "DryRun: Used peak memory usage (without fragments): "
DRYRUN_ACTUAL = "DryRun: Actual peak memory usage (with fragments): "
DRYRUN_STEP = "DryRun: Simulated step time: "
DRYRUN_OVER_HBM = "DryRun: Actual peak exceeds the device's HBM by "


class RunMode:
    """What the executor's parts ask of the way it runs. ``backing``: whether the node it initialises
    gives device memory host pages (a DryRun plans a graph larger than host RAM without them)."""

    backing = True
    dry_run = False

    @classmethod
    def create(cls, kernel_cache: KernelCache, progress: bool) -> "RunMode":
        """The mode for an executor whose kernel cache is ``kernel_cache`` (``progress``: show builds)."""
        raise NotImplementedError

    def kernels(self, plans: list[KernelPlan]) -> list[KernelFunction]:
        """The launchable kernel of each plan, in order."""
        raise NotImplementedError

    def host_array(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """The host array a download of ``shape`` and ``dtype`` lands in."""
        return np.empty(shape, dtype)

    def state_data(self, source: StateSource, desc: TensorDesc) -> np.ndarray:
        """What uploading the parameter ``source`` (of ``desc``) copies to its device buffer: its values."""
        return source.host_data()

    def literal_data(self, value: np.ndarray, desc: TensorDesc) -> np.ndarray:
        """What uploading a graph's literal (of ``desc``) copies to its device buffer: its values."""
        return value

    def compiled(self, compiled: CompiledGraph, group_ranks: Callable[[str], Sequence[int]]) -> None:
        """Told of every graph made ready on the device (``group_ranks``: a group's world ranks)."""

    def device_loop(self, graph_name: str, where: str) -> None:
        """A graph with a `while` loop on a tensor condition (at ``where``) is about to run: computing
        modes run it (the device reads each predicate)."""

    def write_execute_order(self, save_graphs_path: str | os.PathLike, rank: int) -> list:
        """The execution order files this mode writes when the process ends (none)."""
        return []

    def summary_head(self) -> str:
        """The summary's first line: where the kernels came from."""
        raise NotImplementedError

    def summary_tail(self, pool: dict, step: tuple[str, float] | None) -> list[str]:
        """The summary's last lines, from the device pool's figures (``hal.record.figures``, plus ``hbm``, the
        device's HBM bytes) and the executor's step time; none by default."""
        return []


class Compute(RunMode):
    """The ordinary run: kernels built or loaded by the per-rank kernel cache, and computed."""

    def __init__(self, kernel_cache: KernelCache, progress: bool = True):
        self.kernel_cache = kernel_cache
        self.progress = progress

    @classmethod
    def create(cls, kernel_cache: KernelCache, progress: bool) -> "Compute":
        return cls(kernel_cache, progress)

    def kernels(self, plans: list[KernelPlan]) -> list[KernelFunction]:
        return self.kernel_cache.get_many(plans, progress=self.progress and len(plans) > 1)

    def summary_head(self) -> str:
        return self.kernel_cache.summary()


class DryRun(RunMode):
    """Nothing compiled or computed; memory and time still are. Keeps the execution order of every
    compiled graph, as MindSpore does in a DryRun (``write_execute_order``)."""

    backing = False
    dry_run = True

    def __init__(self) -> None:
        self.execute_order = ExecuteOrderTracker()

    @classmethod
    def create(cls, kernel_cache: KernelCache, progress: bool) -> "DryRun":
        return cls()                    # no kernel is built or loaded

    def kernels(self, plans: list[KernelPlan]) -> list[KernelFunction]:
        return [dry_run_function(plan) for plan in plans]

    def device_loop(self, graph_name: str, where: str) -> None:
        """Nothing computes a DryRun's predicates, so a device loop's trip count is unknown: refused."""
        raise FeatureNotSupportedError(
            f"graph {graph_name!r} has a `while` loop on a tensor condition (at {where}): its trip count "
            f"depends on values a DryRun does not compute; run it without --dry-run / MS_SIMULATION_LEVEL")

    def host_array(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        # zeros: np.zeros maps untouched pages, and a copy from a device without backing moves no byte,
        # so a 10 GB output takes its simulated time but no host memory
        return np.zeros(shape, dtype)

    def state_data(self, source: StateSource, desc: TensorDesc) -> np.ndarray:
        # priced, not copied: a copy to a device without backing moves no byte, so the parameter's values
        # are never read (an abstract weight is never filled) and the zeros take no host pages
        return self.host_array(desc.shape, np.dtype(desc.dtype))

    def literal_data(self, value: np.ndarray, desc: TensorDesc) -> np.ndarray:
        # likewise: a folded zeros_like (a broadcast view) is never made contiguous (a 7B stage's are 3 GiB)
        return self.host_array(desc.shape, np.dtype(desc.dtype))

    def compiled(self, compiled: CompiledGraph, group_ranks: Callable[[str], Sequence[int]]) -> None:
        self.execute_order.record(compiled, group_ranks)

    def write_execute_order(self, save_graphs_path: str | os.PathLike, rank: int) -> list:
        return self.execute_order.write(save_graphs_path, rank)

    def summary_head(self) -> str:
        return "DryRun: no kernel was compiled or computed; outputs are not meaningful"

    def summary_tail(self, pool: dict, step: tuple[str, float] | None) -> list[str]:
        mib = lambda n: f"{n / (1 << 20):.2f}M"  # noqa: E731
        hbm = pool.get("hbm", pool["total"])
        lines = [f"DryRun: Device HBM memory size: {mib(hbm)}",
                 f"{DRYRUN_USED}{mib(pool['peak_used'])}",
                 f"{DRYRUN_ACTUAL}{mib(pool['actual_peak'])}"]
        if pool["actual_peak"] > hbm:       # the device grew past its HBM to measure it (device.memory)
            lines.append(f"{DRYRUN_OVER_HBM}{mib(pool['actual_peak'] - hbm)}: this strategy does not fit the "
                         f"device (on hardware the step runs out of memory)")
        if step is not None:
            lines.append(f"{DRYRUN_STEP}{step[1] * 1e3:.3f} ms ({step[0]}, simulated device time)")
        return lines


def run_mode(dry_run: bool) -> type[RunMode]:
    """The mode of an executor asked for ``dry_run``: the one place the flag is read."""
    return DryRun if dry_run else Compute
