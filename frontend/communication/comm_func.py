"""``mindspore.communication.comm_func``: the collectives as functions returning ``(Tensor, CommHandle)``.

Each runs the primitive of ``mindspore.ops`` (:mod:`ascendemu.frontend.ops.operations.comm_ops`). PyNative collectives
complete before they return here, so the handle of ``async_op=True`` has nothing left to wait for.
"""
from __future__ import annotations

from typing import Any

from ..ops.operations.comm_ops import AllGather, AllReduce, Broadcast, Receive, ReduceOp, ReduceScatter, Send
from ..ops.operations.comm_ops import barrier as _barrier
from ..common.tensor import Tensor
from ..unsupported import unsupported
from .management import HCCL_WORLD_COMM_GROUP, CommTypeError

__all__ = ["CommHandle", "all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "broadcast", "barrier",
           "send", "recv"]


class CommHandle:
    """The handle of an asynchronous collective (``async_op=True``): ``wait()`` returns once it is done."""

    def wait(self) -> None:
        return None


def _checked(name: str, tensor: Any, async_op: Any) -> CommHandle | None:
    if not isinstance(tensor, Tensor):
        raise CommTypeError(f"For '{name}', the input tensor must be a Tensor, but got {type(tensor).__name__}.")
    if not isinstance(async_op, bool):
        raise CommTypeError(f"For '{name}', the 'async_op' must be a bool, but got {type(async_op).__name__}.")
    return CommHandle() if async_op else None


def all_reduce(tensor: Tensor, op: str = ReduceOp.SUM, group: str = HCCL_WORLD_COMM_GROUP,
               async_op: bool = False) -> tuple[Tensor, CommHandle | None]:
    handle = _checked("all_reduce", tensor, async_op)
    return AllReduce(op, group)(tensor), handle


def all_gather_into_tensor(tensor: Tensor, group: str = HCCL_WORLD_COMM_GROUP,
                           async_op: bool = False) -> tuple[Tensor, CommHandle | None]:
    handle = _checked("all_gather_into_tensor", tensor, async_op)
    return AllGather(group)(tensor), handle


def reduce_scatter_tensor(tensor: Tensor, op: str = ReduceOp.SUM, group: str = HCCL_WORLD_COMM_GROUP,
                          async_op: bool = False) -> tuple[Tensor, CommHandle | None]:
    handle = _checked("reduce_scatter_tensor", tensor, async_op)
    return ReduceScatter(op, group)(tensor), handle


def broadcast(tensor: Tensor, src: int = 0, group: str = HCCL_WORLD_COMM_GROUP) -> Tensor:
    _checked("broadcast", tensor, False)
    return Broadcast(src, group)((tensor,))[0]


def barrier(group: str = HCCL_WORLD_COMM_GROUP) -> None:
    """Wait until every rank of ``group`` has called barrier."""
    _barrier(group)


def send(tensor: Tensor, dst: int = 0, group: str = HCCL_WORLD_COMM_GROUP, tag: int = 0) -> None:
    """Send ``tensor`` to world rank ``dst`` (which calls recv with this rank as ``src``)."""
    _checked("send", tensor, False)
    Send(tag, dst, group)(tensor)


def recv(tensor: Tensor, src: int = 0, group: str = HCCL_WORLD_COMM_GROUP, tag: int = 0) -> Tensor:
    """Receive into a tensor shaped like ``tensor`` from world rank ``src``; returns it."""
    _checked("recv", tensor, False)
    return Receive(tag, src, tuple(tensor.shape), tensor.dtype, group)()


def __getattr__(name: str) -> Any:
    raise unsupported("communication.comm_func", name, __all__)
