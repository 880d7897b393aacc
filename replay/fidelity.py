"""Fidelity against a real profile: the cost model's duration of each recorded kernel beside the chip's.

Each distinct kernel of a :class:`~ascendemu.replay.ascend_profile.Profile` (op type and tensors) is
planned from the op registry (``plan_kernel``: nothing is built) for the same op, shapes and dtypes,
priced on an idle device (``kernel_time``), and the kernels are ranked by relative error
(model - recorded mean) / recorded mean, largest first: :func:`fidelity`, and the CSV of every kernel,
:func:`write_fidelity_csv`.

A profile has no attributes: where they change the output shapes (MatMul's transposes, a
convolution's stride and padding, reduced axes ...), the first of :func:`attr_candidates` whose
inferred outputs are the recorded ones is taken. A kernel the cost model cannot price (an op type
outside the registry, a dtype or layout the device does not have, attributes the shapes do not
determine) is kept with the reason (:attr:`KernelFidelity.reason`); the others are still compared.
"""
from __future__ import annotations

import csv
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ascendemu.device.cost import kernel_time
from ascendemu.device.spec import DeviceSpec
from ascendemu.errors import AclError
from ascendemu.kernels.library import KernelPlan, infer_outputs, plan_kernel
from ascendemu.kernels.registry import REGISTRY
from ascendemu.kernels.signature import OpSignature, TensorDesc

from ascendemu.cache.atomic import replace_atomic

from .ascend_profile import CANN_DTYPES, Profile, ProfiledTask, Tensor, tensor_cells

__all__ = ["FIDELITY_COLUMNS", "KernelFidelity", "FidelityTotals", "attr_candidates", "price", "fidelity",
           "totals", "write_fidelity_csv"]

# CANN's names of ops the registry knows by MindSpore's name
CANN_OP_TYPES = {"MatMulV2": "MatMul", "MatMulV3": "MatMul", "BatchMatMulV2": "BatchMatMul", "Relu": "ReLU",
                 "SoftmaxV2": "Softmax", "RealDiv": "Div", "Gelu": "GeLU"}
DTYPES = {**{v: k for k, v in CANN_DTYPES.items()}, "FLOAT32": "float32"}
ND_FORMATS = ("", "ND", "NCHW")            # layouts whose shapes are the logical ones
FIDELITY_COLUMNS = ("Rank", "Type", "Op", "Input Shapes", "Input Data Types", "Output Shapes", "Output Data Types",
                    "Count", "Recorded Mean(us)", "Recorded Min(us)", "Recorded Max(us)", "Model(us)", "Error(%)",
                    "Recorded Block Num", "Model Block Dim", "Status", "Reason", "Lines")


class NotPriced(Exception):
    """Why a recorded kernel has no cost-model figure (reported, not raised to the user)."""


@dataclass
class KernelFidelity:
    """One distinct recorded kernel (op type, tensors): its recorded durations and the model's."""

    type: str
    inputs: tuple[Tensor, ...] | None
    outputs: tuple[Tensor, ...] | None
    lines: list[int] = field(default_factory=list)
    recorded_us: list[float] = field(default_factory=list)
    block_nums: set = field(default_factory=set)
    plan: KernelPlan | None = None
    model_us: float | None = None
    reason: str | None = None

    @property
    def mean_us(self) -> float:
        return sum(self.recorded_us) / len(self.recorded_us)

    @property
    def error(self) -> float:
        """(model - recorded mean) / recorded mean."""
        if self.mean_us == 0:
            return math.inf if self.model_us else 0.0
        return (self.model_us - self.mean_us) / self.mean_us


@dataclass(frozen=True)
class FidelityTotals:
    """The priced kernels taken together: their tasks, recorded and modelled time, mean |error|."""

    kernels: int
    tasks: int
    recorded_us: float
    model_us: float
    mean_abs_error: float


def attr_candidates(op: str, x: list[TensorDesc], out: list[TensorDesc] | None) -> Iterator[dict]:
    """Attribute sets to try for a recorded ``op`` whose attributes the profile does not record: the
    defaults first, then, for ops whose attributes show in the output shapes, the settings MindSpore's
    layers use (or the ones the shapes imply); the caller keeps the first that gives the recorded outputs."""
    yield {}
    rank = len(x[0].shape) if x else 0
    if op in ("MatMul", "BatchMatMul"):
        for ta, tb in ((False, True), (True, False), (True, True)):
            yield {"transpose_a": ta, "transpose_b": tb}
    elif op == "Conv2D" and len(x) == 2 and rank == 4 and len(x[1].shape) == 4 and x[1].shape[1]:
        kh = x[1].shape[2]
        group = x[0].shape[1] // x[1].shape[1]
        for stride, mode in itertools.product((1, 2, 3, 4), ("same", "valid", "pad")):
            yield {"stride": stride, "pad_mode": mode, "pad": (kh // 2,) * 4 if mode == "pad" else 0, "group": group}
    elif op in ("MaxPool", "AvgPool"):
        for (k, s), mode in itertools.product(((2, 2), (3, 2), (3, 1), (1, 1), (2, 1), (1, 2)), ("VALID", "SAME")):
            yield {"kernel_size": k, "strides": s, "pad_mode": mode}
    elif out is None:
        return
    elif op == "Cast":
        yield {"dst_type": out[0].dtype}
    elif op == "BroadcastTo":
        yield {"shape": out[0].shape}
    elif op == "Tile" and len(out[0].shape) >= rank:
        padded = (1,) * (len(out[0].shape) - rank) + x[0].shape
        yield {"multiples": tuple(o // i if i else 0 for o, i in zip(out[0].shape, padded))}
    elif op == "Transpose" and rank <= 6:
        for perm in itertools.permutations(range(rank)):
            yield {"perm": perm}
    elif op == "Concat":
        for axis in range(rank):
            yield {"axis": axis}
    elif op.startswith("Reduce"):
        for keep in (len(out[0].shape) == rank, len(out[0].shape) != rank):
            for n in range(rank + 1):
                for axes in itertools.combinations(range(rank), n):
                    yield {"axis": axes, "keep_dims": keep}


def _desc(t: Tensor) -> TensorDesc:
    dtype = DTYPES.get(t.dtype.upper().removeprefix("DT_"))
    if dtype is None:
        raise NotPriced(f"data type {t.dtype!r} has no counterpart on the emulated device "
                        f"(it has {', '.join(sorted(set(DTYPES)))})")
    if t.format.upper().removeprefix("FORMAT_") not in ND_FORMATS:
        raise NotPriced(f"format {t.format!r} is a private layout of the chip; the cost model needs shapes "
                        "in ND/NCHW")
    return TensorDesc(t.shape, dtype)


def price(task: ProfiledTask, spec: DeviceSpec) -> tuple[KernelPlan, float]:
    """The plan of ``task``'s kernel from the op registry, and its modelled duration (seconds) on an idle
    device of ``spec``; raises NotPriced saying why there is none."""
    op = CANN_OP_TYPES.get(task.type, task.type)
    if op not in REGISTRY:
        raise NotPriced(f"unknown op type {task.type!r} (column 'Type'): the op registry has no such op")
    if task.inputs is None:
        raise NotPriced("no input shapes recorded (profile with profiler_level=Level1 or above)")
    inputs = [_desc(t) for t in task.inputs]
    outputs = [_desc(t) for t in task.outputs] if task.outputs is not None else None
    for attrs in attr_candidates(op, inputs, outputs):
        sig = OpSignature(op, tuple(inputs), attrs)
        try:
            inferred = infer_outputs(sig)
        except AclError:
            continue
        if outputs is None or list(inferred) == outputs:
            plan = plan_kernel(sig, inferred)
            return plan, kernel_time(spec, plan.cost, plan.block_dim)
    recorded = "; ".join(",".join(map(str, d.shape)) for d in outputs) if outputs else "none"
    raise NotPriced(f"no attributes of {op} that the profile implies give these inputs the recorded outputs "
                    f"({recorded}); its attributes are not in the profile")


def fidelity(profile: Profile, spec: DeviceSpec) -> list[KernelFidelity]:
    """Every distinct kernel of ``profile``: priced ones ranked by |error| (largest first), then the others."""
    kernels: dict[tuple, KernelFidelity] = {}
    for task in profile.tasks:
        key = (task.type, task.inputs, task.outputs)
        k = kernels.get(key)
        if k is None:
            k = kernels[key] = KernelFidelity(task.type, task.inputs, task.outputs)
            try:
                k.plan, seconds = price(task, spec)
                k.model_us = seconds * 1e6
            except NotPriced as why:
                k.reason = str(why)
        k.lines.append(task.line)
        k.recorded_us.append(task.duration_us)
        if task.block_dim is not None:
            k.block_nums.add(task.block_dim)
    priced = sorted((k for k in kernels.values() if k.reason is None), key=lambda k: -abs(k.error))
    return priced + [k for k in kernels.values() if k.reason is not None]


def totals(kernels: list[KernelFidelity]) -> FidelityTotals | None:
    """The priced ones of ``kernels`` taken together (each weighted by its recorded tasks); None if none is."""
    priced = [k for k in kernels if k.reason is None]
    if not priced:
        return None
    return FidelityTotals(kernels=len(priced), tasks=sum(len(k.recorded_us) for k in priced),
                          recorded_us=sum(sum(k.recorded_us) for k in priced),
                          model_us=sum(k.model_us * len(k.recorded_us) for k in priced),
                          mean_abs_error=sum(abs(k.error) for k in priced) / len(priced))


def write_fidelity_csv(path: Path, kernels: list[KernelFidelity]) -> None:
    """One row per kernel of :func:`fidelity` (:data:`FIDELITY_COLUMNS`): rank and figures if priced, else why not.
    Written atomically (a crash leaves the previous file or none, never half of one)."""
    replace_atomic(path, lambda tmp: _write_rows(tmp, kernels), mode=0o644)


def _write_rows(tmp: str, kernels: list[KernelFidelity]) -> None:
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(FIDELITY_COLUMNS)
        for rank, k in enumerate(kernels, 1):
            priced = k.reason is None
            w.writerow((rank if priced else "", k.type, k.plan.sig.op if priced else "", *tensor_cells(k.inputs),
                        *tensor_cells(k.outputs), len(k.recorded_us), f"{k.mean_us:.3f}", f"{min(k.recorded_us):.3f}",
                        f"{max(k.recorded_us):.3f}", f"{k.model_us:.3f}" if priced else "",
                        f"{100 * k.error:+.2f}" if priced else "", ";".join(map(str, sorted(k.block_nums))),
                        k.plan.block_dim if priced else "", "priced" if priced else "not priced", k.reason or "",
                        " ".join(map(str, k.lines))))
