"""``mindspore.communication``: rank queries of a one-rank world (``management``); collectives are not
emulated yet."""
from typing import Any

from ..unsupported import unsupported
from . import management
from .management import (HCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, GlobalComm,
                         get_group_size, get_local_rank, get_local_rank_size, get_rank, init, release)

__all__ = ["management", *management.__all__]


def __getattr__(name: str) -> Any:
    raise unsupported("communication", name, __all__,
                      hint="communication groups and collectives come with their own issue")
