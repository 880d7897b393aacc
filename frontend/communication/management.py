"""``mindspore.communication.management``: the process's place among the ranks of a distributed job.

The emulator runs one device per process and has no collectives yet (they come with their own issue),
so the world is one rank: ``init()`` reads ``RANK_SIZE`` and ``RANK_ID`` (default 1 and 0) as
MindSpore's launchers set them, accepts a world of one and refuses more with a clear error. The
queries answer as MindSpore's do after ``init()`` and, as there, raise before it.
"""
from __future__ import annotations

import os
from typing import Any

from ascendemu.errors import ContextNullError, FeatureNotSupportedError, InvalidParamError

from .. import context
from ..unsupported import unsupported

__all__ = ["GlobalComm", "init", "release", "get_rank", "get_group_size", "get_local_rank", "get_local_rank_size",
           "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP", "MCCL_WORLD_COMM_GROUP"]

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"


class NotInitializedError(ContextNullError, RuntimeError):
    """A rank query before ``init()`` (MindSpore raises RuntimeError there too)."""


class GlobalComm:
    """The world communication group and backend, as MindSpore's ``GlobalComm`` holds them."""
    BACKEND = "hccl"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False
    CHECK_ENVS = True


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise InvalidParamError(f"environment variable {name}={value!r} must be an integer") from None


def init(backend_name: str | None = None) -> None:
    """Join the world of ranks: here a world of one (rank 0 of 1 unless RANK_ID/RANK_SIZE say otherwise)."""
    backend = "hccl" if backend_name is None else backend_name
    if not isinstance(backend, str):
        raise InvalidParamError(f"init: backend_name must be a str, got {type(backend).__name__}")
    if backend != "hccl":
        raise InvalidParamError(f"init: backend_name={backend!r} is not available on the emulated "
                                f"{context.get_context('device_target')} device; use 'hccl' (or None)")
    size, rank = _env_int("RANK_SIZE", 1), _env_int("RANK_ID", 0)
    if size > 1:
        raise FeatureNotSupportedError(
            f"init: RANK_SIZE={size} asks for {size} ranks, but the emulated device runs one rank per process and "
            "collective communication (HCCL) is not emulated yet (it comes with its own issue); run with "
            "RANK_SIZE unset or 1")
    if size < 1 or rank != 0:
        raise InvalidParamError(f"init: RANK_ID={rank} is not a rank of a world of RANK_SIZE={size}; "
                                "unset them or use RANK_ID=0 RANK_SIZE=1")
    GlobalComm.BACKEND, GlobalComm.WORLD_COMM_GROUP, GlobalComm.INITED = "hccl", HCCL_WORLD_COMM_GROUP, True


def release() -> None:
    GlobalComm.INITED = False


def _check(what: str, group: Any) -> None:
    if not isinstance(group, str):
        raise InvalidParamError(f"{what}: group must be a str, got {type(group).__name__}")
    if not GlobalComm.INITED:
        raise NotInitializedError(f"{what}: distributed communication has not been initialized; call "
                                  "mindspore.communication.init() first")
    if group != GlobalComm.WORLD_COMM_GROUP:
        raise FeatureNotSupportedError(f"{what}: group {group!r} does not exist; the emulated world has one "
                                       f"group, {GlobalComm.WORLD_COMM_GROUP!r}, of one rank")


def get_rank(group: str = HCCL_WORLD_COMM_GROUP) -> int:
    _check("get_rank", group)
    return 0


def get_local_rank(group: str = HCCL_WORLD_COMM_GROUP) -> int:
    _check("get_local_rank", group)
    return 0


def get_group_size(group: str = HCCL_WORLD_COMM_GROUP) -> int:
    _check("get_group_size", group)
    return 1


def get_local_rank_size(group: str = HCCL_WORLD_COMM_GROUP) -> int:
    _check("get_local_rank_size", group)
    return 1


def __getattr__(name: str) -> Any:
    raise unsupported("communication.management", name, __all__,
                      hint="communication groups and collectives come with their own issue")
