"""Roofline cost model: how long a kernel block, a copy or a launch takes in simulated time.

A kernel declares its total work (cube FLOPs, vector element-ops, HBM bytes); the work is spread
evenly over its blocks. A block's time is max(compute / per-core peak, bytes / its share of HBM
bandwidth) plus a fixed per-block cost. Blocks beyond the core count queue for cores (waves), which
the SimPy model does; this module only prices one block.
"""
from __future__ import annotations

from dataclasses import dataclass

from .spec import DeviceSpec

# fp32 runs at a quarter of the fp16 cube rate and half the vector rate on the 910 cube/vector units.
# bool is one byte per element, like int8.
DTYPE_CUBE_SLOWDOWN = {"float16": 1.0, "int8": 0.5, "bool": 0.5, "float32": 4.0, "int32": 4.0}
DTYPE_VECTOR_SLOWDOWN = {"float16": 1.0, "int8": 0.5, "bool": 0.5, "float32": 2.0, "int32": 2.0}


@dataclass(frozen=True)
class KernelCost:
    """Total work of one launch of a kernel, over all its blocks."""

    cube_flops: int = 0
    vector_ops: int = 0
    bytes: int = 0
    dtype: str = "float16"

    def to_json(self) -> dict:
        return {"cube_flops": self.cube_flops, "vector_ops": self.vector_ops, "bytes": self.bytes,
                "dtype": self.dtype}

    @classmethod
    def from_json(cls, d: dict) -> "KernelCost":
        return cls(int(d.get("cube_flops", 0)), int(d.get("vector_ops", 0)), int(d.get("bytes", 0)),
                   str(d.get("dtype", "float16")))


def block_time(spec: DeviceSpec, cost: KernelCost, block_dim: int) -> float:
    """Simulated seconds one block of a ``block_dim``-block launch occupies an AI core."""
    concurrent = max(1, min(block_dim, spec.ai_cores))
    cube = cost.cube_flops / block_dim * DTYPE_CUBE_SLOWDOWN.get(cost.dtype, 4.0) / spec.cube_flops_per_core
    vector = cost.vector_ops / block_dim * DTYPE_VECTOR_SLOWDOWN.get(cost.dtype, 2.0) / spec.vector_ops_per_core
    memory = cost.bytes / block_dim / (spec.hbm_bandwidth / concurrent)
    return max(cube + vector, memory) + spec.block_overhead_s


def kernel_time(spec: DeviceSpec, cost: KernelCost, block_dim: int) -> float:
    """Expected device time of a whole launch on an idle device: waves x block time + task overhead."""
    waves = -(-block_dim // spec.ai_cores)
    return spec.task_overhead_s + waves * block_time(spec, cost, block_dim)


def copy_time(spec: DeviceSpec, nbytes: int, kind: str) -> float:
    """Simulated seconds of a memcpy: host link for H2D/D2H, HBM read+write for D2D."""
    if kind == "D2D":
        return spec.task_overhead_s + 2 * nbytes / spec.hbm_bandwidth
    return spec.host_link_latency_s + nbytes / spec.host_link_bandwidth
