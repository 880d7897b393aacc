"""``mindspore.ops.function.comm_func``: the communication functions of ``mindspore.ops`` served here
(``ops.get_backend``); the collectives themselves are ``operations.comm_ops``'s primitives and
``mindspore.communication.comm_func``'s functions."""
from __future__ import annotations

from typing import Any

from ...communication.management import HCCL_WORLD_COMM_GROUP, GlobalComm, _check
from ...unsupported import unsupported
from .._utils import defined_here


def get_backend(group: str | None = None) -> str:
    """The communication backend of ``group`` (None: the world group; "hccl": every group here is an
    HCCL group), after the checks MindSpore makes (a str naming an existing group, after
    ``communication.init()``)."""
    _check("get_backend", HCCL_WORLD_COMM_GROUP if group is None else group)
    return GlobalComm.BACKEND


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.comm_func", name, __all__)
