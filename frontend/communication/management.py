"""``mindspore.communication.management``: the process's place among the ranks of a distributed job.

One process is one rank with its own emulated device, as on hardware. ``init()`` joins the world:
under an MPI launcher (``mpiexec -n N``, or msrun's workers) MPI's size and rank become
``RANK_SIZE``/``RANK_ID`` and the rank's place on its server ``DEVICE_ID`` (as MindSpore does under
mpirun), else ``RANK_SIZE``/``RANK_ID`` come from the environment (default a world of one). It
builds the world communicator ``hccl_world_group`` through the runtime's HCCL chapter
(``ascendemu.hal.hccl``), which carries bytes over MPI, or simulates the other ranks when this one
runs alone under DryRun (``MS_SIMULATION_LEVEL`` with ``RANK_SIZE=8 RANK_ID=3``). Groups are
communicators of the runtime too. The queries answer as MindSpore's do after ``init()`` and, as
there, raise before it.
"""
from __future__ import annotations

import os
from typing import Any

from ascendemu.errors import ContextNullError, InvalidParamError, InvalidTypeError, InvalidValueError
from ascendemu.ranks import mpi_place, process_world

from .. import context
from ..unsupported import unsupported

__all__ = ["GlobalComm", "init", "release", "get_rank", "get_group_size", "get_local_rank", "get_local_rank_size",
           "create_group", "destroy_group", "get_group_rank_from_world_rank", "get_world_rank_from_group_rank",
           "get_process_group_ranks", "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP", "MCCL_WORLD_COMM_GROUP"]

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"


class NotInitializedError(ContextNullError, RuntimeError):
    """A rank query before ``init()`` (MindSpore raises RuntimeError there too)."""


class CommTypeError(InvalidTypeError):
    """An argument of the wrong type (MindSpore raises TypeError)."""


class CommValueError(InvalidValueError):
    """An argument of the right type but a wrong value (MindSpore raises ValueError)."""


class GlobalComm:
    """The world communication group and backend, as MindSpore's ``GlobalComm`` holds them."""
    BACKEND = "hccl"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False
    CHECK_ENVS = True


class _World:
    """This process's rank, the world's size, the local rank and size (ranks on this server), and the
    runtime handle of each live group."""

    rank = 0
    size = 1
    local_rank = 0
    local_size = 1
    groups: dict[str, int] = {}


def _runtime():
    """The runtime of this process's device (the front end's backend creates it on the context's device)."""
    from ascendemu.hal.runtime import get_runtime

    from ..backend import get_backend
    get_backend()
    return get_runtime()


def init(backend_name: str | None = None) -> None:
    """Join the world of ranks and build its communicator, ``hccl_world_group`` (see the module docstring)."""
    from ascendemu.device.interconnect import DEVICES_PER_SERVER

    backend = "hccl" if backend_name is None else backend_name
    if not isinstance(backend, str):
        raise CommTypeError(f"For 'init', the argument 'backend_name' must be type of string, but got "
                            f"'backend_name' type : {type(backend)}.")
    if backend != "hccl":
        raise InvalidParamError(f"init: backend_name={backend!r} is not available on the emulated "
                                f"{context.get_context('device_target')} device; use 'hccl' (or None)")
    if GlobalComm.INITED:
        return
    launched = mpi_place()
    size, rank = process_world()
    if launched is not None:
        os.environ.update(RANK_SIZE=str(size), RANK_ID=str(rank))
    if size < 1 or not 0 <= rank < size:
        raise InvalidParamError(f"init: RANK_ID={rank} is not a rank of a world of RANK_SIZE={size}; "
                                "unset them or use RANK_ID=0 RANK_SIZE=1")
    device = rank % DEVICES_PER_SERVER                     # the rank's chip on its server
    os.environ["DEVICE_ID"] = str(device)
    context.set_context(device_id=device)
    rt = _runtime()
    world = rt.comm_init_world(size, rank, HCCL_WORLD_COMM_GROUP)
    _World.rank, _World.size = rank, size
    _World.local_rank, _World.local_size = device, min(DEVICES_PER_SERVER, size - (rank - device))
    _World.groups = {HCCL_WORLD_COMM_GROUP: world}
    GlobalComm.BACKEND, GlobalComm.WORLD_COMM_GROUP, GlobalComm.INITED = "hccl", HCCL_WORLD_COMM_GROUP, True


def release() -> None:
    """Destroy every group and the world communicator (the process stays in its MPI job)."""
    if GlobalComm.INITED:
        from ascendemu.hal.runtime import get_runtime
        rt = get_runtime()
        if rt.node is not None:
            for handle in _World.groups.values():
                if handle in rt.comms:
                    rt.comm_destroy(handle)
    _World.groups = {}
    GlobalComm.INITED = False


def _check(what: str, group: Any) -> int:
    """The runtime handle of ``group`` after the checks MindSpore makes (a str, init() called, exists)."""
    if not isinstance(group, str):
        raise CommTypeError(f"For '{what}', the argument 'group' must be type of string, but got 'group' type : "
                            f"{type(group)}.")
    if not GlobalComm.INITED:
        raise NotInitializedError(f"{what}: distributed communication has not been initialized; call "
                                  "mindspore.communication.init() first")
    handle = _World.groups.get(group)
    if handle is None:
        raise CommValueError(f"For '{what}', group {group!r} does not exist: create it with create_group() "
                             f"(existing groups: {sorted(_World.groups)})")
    return handle


def get_rank(group: str = HCCL_WORLD_COMM_GROUP) -> int:
    """This process's rank in ``group``."""
    return _runtime().comm_rank(_check("get_rank", group))


def get_group_size(group: str = HCCL_WORLD_COMM_GROUP) -> int:
    """The number of ranks of ``group``."""
    return _runtime().comm_size(_check("get_group_size", group))


def get_local_rank(group: str = HCCL_WORLD_COMM_GROUP) -> int:
    """This process's rank among the ranks of ``group`` on its server."""
    ranks = _runtime().comm_world_ranks(_check("get_local_rank", group))
    server = _World.rank - _World.local_rank
    return [r for r in ranks if server <= r < server + _World.local_size].index(_World.rank)


def get_local_rank_size(group: str = HCCL_WORLD_COMM_GROUP) -> int:
    """How many ranks of ``group`` run on this process's server."""
    ranks = _runtime().comm_world_ranks(_check("get_local_rank_size", group))
    server = _World.rank - _World.local_rank
    return sum(1 for r in ranks if server <= r < server + _World.local_size)


def get_process_group_ranks(group: str = HCCL_WORLD_COMM_GROUP) -> list[int]:
    """The world ranks of ``group``, in its rank order."""
    return list(_runtime().comm_world_ranks(_check("get_process_group_ranks", group)))


def get_world_rank_from_group_rank(group: str, group_rank_id: int) -> int:
    """The world rank of rank ``group_rank_id`` of ``group``."""
    _check_rank_id("get_world_rank_from_group_rank", "group_rank_id", group_rank_id)
    ranks = _runtime().comm_world_ranks(_check("get_world_rank_from_group_rank", group))
    if group_rank_id >= len(ranks):
        raise CommValueError(f"For 'get_world_rank_from_group_rank', group_rank_id {group_rank_id} is not a rank "
                             f"of group {group!r} of size {len(ranks)}")
    return ranks[group_rank_id]


def get_group_rank_from_world_rank(world_rank_id: int, group: str) -> int:
    """The rank in ``group`` of world rank ``world_rank_id``."""
    _check_rank_id("get_group_rank_from_world_rank", "world_rank_id", world_rank_id)
    ranks = _runtime().comm_world_ranks(_check("get_group_rank_from_world_rank", group))
    if world_rank_id not in ranks:
        raise CommValueError(f"For 'get_group_rank_from_world_rank', world rank {world_rank_id} is not in group "
                             f"{group!r} (world ranks {list(ranks)})")
    return ranks.index(world_rank_id)


def _check_rank_id(what: str, name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise CommTypeError(f"For '{what}', the argument '{name}' must be type of int, but got '{name}' type : "
                            f"{type(value)}.")
    if value < 0:
        raise CommValueError(f"For '{what}', the argument '{name}' must be non-negative, got {value}")


def create_group(group: str, rank_ids: list[int], options: Any = None) -> None:
    """Make the ranks ``rank_ids`` (world ranks, in the new group's rank order) a group called ``group``.
    Every member calls it with the same ranks; it waits for them (HCCL_CONNECT_TIMEOUT)."""
    if not isinstance(group, str):
        raise CommTypeError(f"For 'create_group', the argument 'group' must be type of string, but got 'group' "
                            f"type : {type(group)}.")
    if not GlobalComm.INITED:
        raise NotInitializedError("create_group: distributed communication has not been initialized; call "
                                  "mindspore.communication.init() first")
    if group == HCCL_WORLD_COMM_GROUP:
        raise CommValueError(f"The function 'create_group' does not support group {group!r}: it is the world group "
                             "init() creates")
    if not isinstance(rank_ids, list):
        raise CommTypeError(f"For 'create_group', the argument 'rank_ids' must be type of list, but got 'rank_ids' "
                            f"type : {type(rank_ids)}.")
    if group in _World.groups:
        existing = list(_runtime().comm_world_ranks(_World.groups[group]))
        if rank_ids != existing:
            raise CommValueError(f"The group {group} has been created, the rank_list is {existing}, but current "
                                 f"rank_list for the group is {rank_ids}")
        return
    if len(rank_ids) < 1:
        raise CommValueError(f"For 'create_group', the argument 'rank_ids' size should be greater than 1, but got "
                             f"'rank_ids' size : {len(rank_ids)}.")
    if len(set(rank_ids)) != len(rank_ids):
        raise CommValueError(f"List rank_ids in Group {group} has duplicate data!")
    for r in rank_ids:
        _check_rank_id("create_group", "rank_ids", r)
        if r >= _World.size:
            raise CommValueError(f"For 'create_group', rank {r} of rank_ids is not a rank of the world of "
                                 f"{_World.size}")
    if _World.rank not in rank_ids:
        raise CommValueError(f"For 'create_group', the local rank {_World.rank} is not in rank_ids {rank_ids}: only "
                             "the group's members create it")
    rt = _runtime()
    _World.groups[group] = rt.comm_create_group(_World.groups[HCCL_WORLD_COMM_GROUP], group, rank_ids)


def destroy_group(group: str) -> None:
    """Destroy a group made by create_group (not the world group)."""
    handle = _check("destroy_group", group)
    if group == HCCL_WORLD_COMM_GROUP:
        raise CommValueError(f"The function 'destroy_group' does not support group {group!r}; use release()")
    _runtime().comm_destroy(handle)
    del _World.groups[group]


def __getattr__(name: str) -> Any:
    raise unsupported("communication.management", name, __all__)
