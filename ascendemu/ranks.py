"""Which rank this process is and where it stands among the ranks (bottom layer), from its environment.

MindSpore reads a rank's place from environment variables only: ``RANK_ID``, ``RANK_SIZE`` and
``DEVICE_ID``, set by msrun, by a rank table script, or copied from Open MPI's
``OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK`` under ``mpirun``. This module is the one reader of
those variables and of the MPI launchers' (Open MPI's and MPICH hydra's ``PMI_RANK``, ``PMI_SIZE``,
``MPI_LOCALRANKID``, which the ``mpich`` wheel's ``mpiexec`` sets): the kernel and graph caches live
under ``rank_N/``, a Chrome trace names its process after the rank, ``ascendemu run`` exports MPI's
place as MindSpore's variables before the script starts (so ``mpiexec -n 8 ascendemu run train.py``
gives each rank its RANK_ID, its device and its own ``rank_N/kernel_meta``), and
``mindspore.communication.init`` and the HCCL chapter join the MPI world it describes. Nothing here
imports mpi4py: the environment is the whole contract.

As in MindSpore, MPI's numbers replace a RANK_ID/RANK_SIZE/DEVICE_ID inherited from the shell (a stale
``export RANK_ID=0`` must not give eight ranks one directory), except in a dynamic-cluster process
(``MS_ROLE`` set, as msrun's workers are): there msrun's numbers stand, with MindSpore's warning when
MPI's disagree.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Mapping, MutableMapping

from .errors import InvalidParamError, check_int

__all__ = ["RANK_ID", "RANK_SIZE", "DEVICE_ID", "resolve_rank", "env_device_id", "MpiPlace", "mpi_place",
           "apply_mpi_place", "process_world", "in_dynamic_cluster", "DYNAMIC_CLUSTER_WARNING"]

RANK_ID, RANK_SIZE, DEVICE_ID = "RANK_ID", "RANK_SIZE", "DEVICE_ID"
ROLE = "MS_ROLE"
# (rank, size, local rank) variables of each MPI launcher, in the order they are tried
LAUNCHERS = (("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
             ("MPICH hydra", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"))
DYNAMIC_CLUSTER_WARNING = ("Launching distributed job using both dynamic cluster and OpenMPI at the same time. "
                           "MindSpore will prioritize the use of dynamic cluster. Do not set env from OpenMPI.")


@dataclass(frozen=True)
class MpiPlace:
    """This process's place in an MPI world, as its launcher's environment states it."""

    launcher: str
    rank: int
    size: int
    local_rank: int

    def env(self) -> dict[str, str]:
        """MindSpore's variables for this place: RANK_ID, RANK_SIZE, and DEVICE_ID = the local rank."""
        return {RANK_ID: str(self.rank), RANK_SIZE: str(self.size), DEVICE_ID: str(self.local_rank)}


def _int(environ: Mapping[str, str], name: str) -> int | None:
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise InvalidParamError(f"environment variable {name}={raw!r} set by the MPI launcher is not a "
                                "non-negative integer; start the script with that launcher's mpiexec/mpirun")
    return int(raw)


def mpi_place(environ: Mapping[str, str] = os.environ) -> MpiPlace | None:
    """The MPI world place the environment describes (Open MPI first, then hydra), or None outside one."""
    for launcher, rank_var, size_var, local_var in LAUNCHERS:
        rank = _int(environ, rank_var)
        if rank is None:
            continue
        size = _int(environ, size_var)
        if size is None or rank >= size:
            raise InvalidParamError(f"{launcher}: {rank_var}={rank} but {size_var}="
                                    f"{environ.get(size_var)!r}; the launcher's environment is inconsistent")
        local = _int(environ, local_var)
        return MpiPlace(launcher, rank, size, rank if local is None else local)
    return None


def in_dynamic_cluster(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether this process is a worker of msrun's dynamic cluster (``MS_ROLE`` set, as msrun exports it)."""
    return bool(environ.get(ROLE))


def apply_mpi_place(environ: MutableMapping[str, str] = os.environ) -> MpiPlace | None:
    """Export RANK_ID / RANK_SIZE / DEVICE_ID from the MPI launcher's variables, as MindSpore does under
    mpirun; returns the place (None outside MPI). A dynamic-cluster process keeps its own numbers."""
    place = mpi_place(environ)
    if place is None:
        return None
    wanted = place.env()
    if in_dynamic_cluster(environ):
        if any(environ.get(k, v) != v for k, v in wanted.items()):
            print(f"[WARNING] {DYNAMIC_CLUSTER_WARNING}", file=sys.stderr)
        return place
    environ.update(wanted)
    return place


def process_world() -> tuple[int, int]:
    """(world size, world rank) of this process: its MPI launcher's, else ``RANK_SIZE``/``RANK_ID`` (as
    MindSpore's launchers set them; unset: a world of one)."""
    place = mpi_place()
    if place is not None:
        return place.size, place.rank
    raw = os.environ.get(RANK_SIZE, "").strip()
    if raw and not raw.isdigit():
        raise InvalidParamError(f"environment variable {RANK_SIZE}={raw!r} must be an integer: the number of "
                                "ranks (or unset it for one)")
    return (int(raw) if raw else 1), resolve_rank()


def resolve_rank(rank: int | None = None) -> int:
    """The explicit rank, else ``RANK_ID`` (empty or unset means 0)."""
    if rank is not None:
        return check_int(rank, "rank", minimum=0)
    raw = os.environ.get(RANK_ID, "").strip()
    if raw == "":
        return 0
    if not raw.isdigit():
        raise InvalidParamError(
            f"environment variable {RANK_ID}={raw!r} is not a non-negative integer; "
            f"set it to the rank number (e.g. {RANK_ID}=0) or unset it")
    return int(raw)


def env_device_id() -> int | None:
    """``DEVICE_ID`` as MindSpore's context takes it at start-up (the device this rank runs on), or None
    when unset."""
    raw = os.environ.get(DEVICE_ID, "").strip()
    if raw == "":
        return None
    if not raw.isdigit():
        raise InvalidParamError(f"environment variable {DEVICE_ID}={raw!r} is not a device number; set it "
                                "to 0..7 (the local rank) or unset it")
    return int(raw)
