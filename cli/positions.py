"""Distinct parallel positions: which ranks of a DryRun job need a simulation of their own.

``ascendemu msrun --sim_level L --worker_num N`` simulates one rank per *position*, not N ranks: two ranks hold
the same position when their graphs are the same up to which ranks their groups hold, so their memory and
time are the same. In a semi-auto parallel job every rank of a pipeline stage runs the same local graph (the
layouts split evenly, or the compile fails), so what can differ is the cost of a collective, which depends on
where the group's members sit (``device.interconnect.choose_algorithm``: one HCCS group, several, several
servers), and the stage (MindSpore's ``rank // (device_num / pipeline_stages)``). A stand-alone script
(no parallel mode) may build another network on each rank, so each of its ranks is simulated.

A simulated rank writes what decides that (:func:`write_position`, when the launcher sets
:data:`POSITION_ENV`): the world ranks of every communicator it built, its stage count and device preset. A
communicator is one of a *family* that tiles the world (the mp groups {0..7}, {8..15}, ...; the dp groups
{0, 8, 16, ...}, {1, 9, ...}): :func:`family_blocks` rebuilds the family from the one group by translation, and
rank r's position is its stage and the algorithm of its own group in each family (:func:`position_keys`). A
group whose translates do not tile the world makes every rank a position of its own (simulated).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

from ascendemu.device.interconnect import Algorithm, choose_algorithm
from ascendemu.device.spec import get_spec

__all__ = ["POSITION_ENV", "write_position", "read_position", "family_blocks", "position_keys"]

POSITION_ENV = "ASCENDEMU_SIM_POSITION"     # where a DryRun rank started by msrun writes its position
# The parallel modes in which MindSpore compiles one program for every rank (of a stage). A stand-alone
# script may build a different network on each rank (from get_rank()): each of its ranks is simulated.
SPMD_MODES = ("data_parallel", "semi_auto_parallel", "auto_parallel")


def write_position(rt: Any, rank: int, world: int, parallel_mode: str, pipeline_stages: int) -> Path | None:
    """Write this rank's position (module docstring) to the file :data:`POSITION_ENV` names, if any."""
    target = os.environ.get(POSITION_ENV)
    if not target or rt.node is None:
        return None
    groups = sorted({tuple(c.ranks) for c in rt.comms.values()})
    doc = {"rank": rank, "world": world, "parallel_mode": parallel_mode, "pipeline_stages": pipeline_stages,
           "device": rt.node.spec.name, "groups": [list(g) for g in groups]}
    path = Path(target)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, path)
    return path


def read_position(path: Path) -> dict | None:
    """A position file, or None when the rank wrote none (it failed before the end)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def family_blocks(group: Sequence[int], world: int) -> list[int] | None:
    """The block of each world rank in the family of ``group``'s translates that tiles 0..world-1 (taken in
    rank order: the lowest rank not placed yet starts the next block), or None when they do not tile it or
    ``group`` is not one of them."""
    offsets = sorted(r - min(group) for r in group)
    owner = [-1] * world
    block = 0
    for first in range(world):
        if owner[first] != -1:
            continue
        members = [first + o for o in offsets]
        if members[-1] >= world or any(owner[m] != -1 for m in members):
            return None
        for m in members:
            owner[m] = block
        block += 1
    home = {owner[r] for r in group}
    return owner if len(home) == 1 else None


def position_keys(doc: dict, ranks: Sequence[int]) -> dict[int, tuple | None]:
    """Each rank's position as seen from the simulated rank of ``doc``: its pipeline stage and the algorithm
    of its own group in each family of ``doc``'s groups; None for every rank when a family does not tile
    the world, or the script ran stand-alone (nothing can be said: each rank is simulated)."""
    world, spec = doc["world"], get_spec(doc["device"])
    families = [family_blocks(g, world) for g in doc["groups"]]
    if doc["parallel_mode"] not in SPMD_MODES or any(f is None for f in families):
        return {r: None for r in ranks}
    algorithms: list[dict[int, Algorithm]] = []
    for owner in families:
        members: dict[int, list[int]] = {}
        for r, block in enumerate(owner):
            members.setdefault(block, []).append(r)
        algorithms.append({block: choose_algorithm(m, spec) for block, m in members.items()})
    per_stage = max(1, world // max(1, int(doc.get("pipeline_stages") or 1)))
    return {r: (r // per_stage, tuple(alg[owner[r]] for alg, owner in zip(algorithms, families))) for r in ranks}
