"""``mindspore.ops.function.comm_func``: MindSpore's PyTorch-distributed-style communication functions
(``ops.all_reduce``, ``ops.broadcast``, ``ops.init_process_group`` ...), also served as
``mindspore.mint.distributed``.

Each runs the collective primitives of ``operations.comm_ops`` and, as MindSpore's do by default
(``set_comm_ops_inplace(True)``), writes its result into the tensor it is given (``hold_value``) and
returns the handle: None, or with ``async_op=True`` a :class:`CommHandle`. PyNative collectives complete
before they return here, so a handle has nothing left to wait for. ``set_comm_ops_inplace(False)``
makes the functions MindSpore serves out of place return ``(output, handle)`` instead.

Uneven exchanges (``all_to_all``, ``all_to_all_single`` with split sizes) pad every block to the
largest one any rank sends and run one AlltoAll, after an AllGather of the send sizes that also checks
each rank receives what its peers send. ``scatter``/``gather`` are sends and receives between the root
and each rank. The ``*_object`` functions carry JSON, never pickle: unpickling bytes a peer sends would
run its code here, so an object must be JSON data (dict, list, str, numbers, bool, None; tuples arrive
as lists) of at most :data:`MAX_OBJECT_BYTES`.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ... import log
from ...common import dtype as mstype
from ...common.tensor import Tensor, hold_value
from ...communication import management
from ...communication.management import HCCL_WORLD_COMM_GROUP, CommTypeError, CommValueError, GlobalComm, _check
from ...unsupported import unsupported
from ..operations.array_ops import Concat
from ..operations.comm_ops import AllGather, AllReduce, Broadcast, Receive, ReduceOp, ReduceScatter, Send
from ..operations.comm_ops import _uneven_exchange, _uneven_reduce_scatter
from ..operations.comm_ops import barrier as _barrier
from .._utils import defined_here

# The reductions MindSpore's functions take: the primitives' four, and "avg" (sum / group size).
_FUNCTION_OPS = ("sum", "prod", "min", "max", "avg")
# The most bytes one object of the *_object functions may serialise to (and the most a peer's announced
# size may claim): a bound on what a peer can make this rank allocate.
MAX_OBJECT_BYTES = 16 * 1024 * 1024
_BACKENDS = ("hccl", "mccl")

# The functions whose in-place mode set_comm_ops_inplace switches (MindSpore's list), all in place at first.
_COMM_FUNCS = ("all_reduce", "all_gather_into_tensor", "all_gather_into_tensor_uneven", "all_to_all",
               "all_to_all_single", "reduce_scatter_tensor", "reduce_scatter_tensor_uneven", "isend", "irecv",
               "send", "recv", "gather", "scatter", "all_gather", "reduce_scatter", "barrier", "broadcast",
               "reduce", "batch_isend_irecv", "all_gather_object", "broadcast_object_list", "gather_object",
               "scatter_object_list", "send_object_list", "recv_object_list", "gather_into_tensor",
               "scatter_tensor", "all_to_all_v_c")
_INPLACE = {name: True for name in _COMM_FUNCS}


class CommHandle:
    """The handle of an asynchronous communication (``async_op=True``): ``wait()`` returns once it is
    done, at once here (PyNative collectives complete before the function returns)."""

    def wait(self) -> None:
        return None


def _handle(async_op: bool) -> CommHandle | None:
    return CommHandle() if async_op else None


def set_comm_ops_inplace(is_enable: bool, func_list: Any = None) -> None:
    """Switch the communication functions (all, or those ``func_list`` names) between writing into
    their tensor (True, the default) and returning their output."""
    if not isinstance(is_enable, bool):
        raise CommTypeError("For 'set_comm_ops_inplace', the argument 'is_enable' must be type of bool, "
                            f"but got 'is_enable' type : {type(is_enable)}.")
    if func_list is None:
        func_list = _COMM_FUNCS
    if not isinstance(func_list, (list, tuple)):
        raise CommTypeError(f"Expected list or tuple, but got {type(func_list)}.")
    for name in func_list:
        if name not in _INPLACE:
            raise CommValueError(f"The function name in `func_list` must be correct, but got {name}.")
    for name in func_list:
        _INPLACE[name] = is_enable


def _inplace_only(name: str) -> None:
    if not _INPLACE[name]:
        raise CommValueError(f"For '{name}', non-inplace mode is currently not supported (as in MindSpore); "
                             "call set_comm_ops_inplace(True)")


# ---------------------------------------------------------------------------------------------- checks
def _group(group: Any) -> str:
    """``group`` (None: the world group), a str naming a group that exists after init()."""
    group = GlobalComm.WORLD_COMM_GROUP if group is None else group
    if not isinstance(group, str):
        raise CommTypeError(f"The argument 'group' must be type of string, but got 'group' type : {type(group)}.")
    return group


def _tensor(name: str, what: str, value: Any) -> Tensor:
    if not isinstance(value, Tensor):
        raise CommTypeError(f"For {name}, the {what} must be tensor, but got {type(value).__name__}.")
    return value


def _tensors(value: Any) -> list[Tensor]:
    if not isinstance(value, (list, tuple)):
        raise CommTypeError(f"Expected list or tuple, but got {type(value)}.")
    for t in value:
        if not isinstance(t, Tensor):
            raise CommTypeError(f"Expected tensor, but got {type(t)}")
    return list(value)


def _same_dtype_shape(name: str, tensors: list[Tensor], shape: bool = True) -> None:
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise CommTypeError(f"For {name}, the tensors' dtype must be the same, but got {tensors[0].dtype} "
                                f"and {t.dtype}.")
        if shape and tuple(t.shape) != tuple(tensors[0].shape):
            raise CommTypeError(f"For {name}, the tensors' shape must be the same, but got {tuple(tensors[0].shape)} "
                                f"and {tuple(t.shape)}.")


def _flag(async_op: Any) -> bool:
    if not isinstance(async_op, bool):
        raise CommTypeError(f"The argument 'async_op' must be a bool, but got {type(async_op)}.")
    return async_op


def _int(name: str, what: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise CommTypeError(f"For {name}, the {what} must be int, but got {type(value).__name__}.")
    return value


def _reduce_op(name: str, op: Any, ops: tuple[str, ...] = _FUNCTION_OPS) -> str:
    if not isinstance(op, str):
        raise CommTypeError(f"For {name}, the input op type must be str")
    if op not in ops:
        raise CommTypeError(f"For {name}, the input op value must be one of {', '.join(ops)}")
    return op


def _size(group: str) -> int:
    return management.get_group_size(group)


def _my_rank(group: str) -> int:
    return management.get_rank(group)


def _group_rank(world_rank: int, group: str) -> int:
    return world_rank if group == HCCL_WORLD_COMM_GROUP else management.get_group_rank_from_world_rank(world_rank,
                                                                                                      group)


def _world_rank(group_rank: int, group: str) -> int:
    return group_rank if group == HCCL_WORLD_COMM_GROUP else management.get_world_rank_from_group_rank(group,
                                                                                                      group_rank)


def _zeros(count: int, dtype: mstype.Type) -> Tensor:
    return Tensor(np.zeros(count, dtype.np_type), dtype)


def _cat(parts: list[Tensor]) -> Tensor:
    return parts[0] if len(parts) == 1 else Concat(0)(parts)


def _output_shape(prim: str, output: Tensor, shape: tuple) -> None:
    """An in-place collective's output must have the result's shape (MindSpore's infer: ValueError)."""
    if tuple(output.shape) != tuple(shape):
        raise CommValueError(f"For '{prim}', output_tensor shape must be equal to {list(shape)}, but got "
                             f"{list(output.shape)}")


def _shape_check(name: str, output: Tensor, shape: tuple, dtype: Any) -> None:
    if tuple(output.shape) != tuple(shape):
        raise CommTypeError(f"For {name}, the output shape should be {tuple(shape)}, but got {tuple(output.shape)}.")
    if output.dtype != dtype:
        raise CommTypeError(f"For {name}, the output dtype should be {dtype}, but got {output.dtype}.")


# ------------------------------------------------------------------------------------ process groups
def is_available() -> bool:
    """Whether distributed communication is available: always, the emulator serves HCCL."""
    return True


def is_initialized() -> bool:
    """Whether ``init_process_group`` (or ``communication.init``) has run."""
    return GlobalComm.INITED


def init_process_group(backend: str = "hccl", init_method: Any = None, timeout: Any = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Join the world of ranks (``communication.init``); the launcher (mpiexec, msrun) gives the ranks.
    A TCP rendezvous (``init_method``/``store``) is not emulated: refused with what to do instead."""
    if backend != "hccl":
        raise CommValueError("Only support hccl now, please setting backend to hccl or using default value")
    for arg, value, kind in (("world_size", world_size, int), ("rank", rank, int), ("group_name", group_name, str)):
        if not isinstance(value, kind) or isinstance(value, bool):
            raise CommTypeError(f"The parameter '{arg}' must be {kind.__name__}, but got {type(value).__name__}.")
    if init_method is not None and store is not None:
        raise CommValueError("Only one of init_method and store is supported.")
    if init_method is not None or store is not None:
        raise InvalidParamError("init_process_group: init_method/store (a TCP rendezvous) is not "
                                           "emulated; launch the ranks with `mpiexec -n N ascendemu run script.py` "
                                           "or msrun and call init_process_group() without them")
    if pg_options is not None:
        log.warning("pg_options is ignored, setting is invalid")
    if device_id is not None:
        log.warning("device_id is ignored, setting is invalid")
    management.init(backend)
    size = _size(group_name) if group_name else _size(HCCL_WORLD_COMM_GROUP)
    if world_size not in (-1, size):
        raise CommValueError(f"world_size is wrong, please using default value or setting: {size}")
    if rank not in (-1, _my_rank(HCCL_WORLD_COMM_GROUP)):
        raise CommValueError(f"rank {rank} is not this process's rank {_my_rank(HCCL_WORLD_COMM_GROUP)} (the "
                             "launcher gives the ranks); use the default -1")


def destroy_process_group(group: Any = None) -> None:
    """Destroy ``group``, or (None, the world group) every group and the world communicator."""
    if group is None or group == GlobalComm.WORLD_COMM_GROUP:
        management.release()
    elif not isinstance(group, str):
        raise CommTypeError("For 'destroy_group', the argument 'group' must be type of string or None, but got "
                            f"'group' type : {type(group)}.")
    else:
        management.destroy_group(group)


def get_rank(group: Any = None) -> int:
    """This process's rank in ``group``; -1 (with a warning, as MindSpore) before init()."""
    group = GlobalComm.WORLD_COMM_GROUP if group is None else group
    if not isinstance(group, str):
        raise CommTypeError(f"For 'get_rank', the argument 'group' must be type of string, but got 'group' type : "
                            f"{type(group)}.")
    try:
        return management.get_rank(group)
    except RuntimeError as exc:
        log.warning(str(exc))
        return -1


def get_world_size(group: Any = None) -> int:
    """The number of ranks of ``group``; -1 (with a warning, as MindSpore) before init()."""
    group = GlobalComm.WORLD_COMM_GROUP if group is None else group
    if not isinstance(group, str):
        raise CommTypeError(f"For 'get_world_size', the argument 'group' must be type of string, but got 'group' "
                            f"type : {type(group)}.")
    try:
        return management.get_group_size(group)
    except RuntimeError as exc:
        log.warning(str(exc))
        return -1


def new_group(ranks: Any = None, timeout: Any = None, backend: Any = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: Any = None) -> str:
    """A group of the world ranks ``ranks`` (sorted), named as MindSpore names it
    (``hccl_<n>_<sha1 of the ranks>``); None: the world group. Every member calls it."""
    if ranks is None:
        return GlobalComm.WORLD_COMM_GROUP
    if not isinstance(ranks, list):
        raise CommTypeError(f"ranks must be list, but got {type(ranks)}")
    ranks = sorted(ranks)
    backend = "hccl" if backend is None else backend
    if not isinstance(backend, str) or backend not in _BACKENDS:
        raise CommTypeError(f"the input backend must be hccl or mccl, but got {backend}")
    if backend != "hccl":
        raise InvalidParamError(f"new_group: backend={backend!r} is not emulated; use 'hccl' (or None)")
    if pg_options is not None:
        raise InvalidParamError("new_group: pg_options (GroupOptions) are not emulated; pass None")
    name = f"{backend}_{len(ranks)}_{hashlib.sha1('_'.join(map(str, ranks)).encode()).hexdigest()}"
    management.create_group(name, ranks)
    return name


def get_backend(group: Any = None) -> str:
    """The communication backend of ``group`` (None: the world group's, "hccl")."""
    if group is None:
        return "hccl"
    if not isinstance(group, str):
        raise CommTypeError(f"For 'get_backend', the argument 'group' must be type of string or None, but got "
                            f"'group' type : {type(group)}.")
    for backend in _BACKENDS:
        if backend in group:
            return backend
    _check("get_backend", group)
    return GlobalComm.BACKEND


def get_global_rank(group: Any, group_rank: int) -> int:
    """The world rank of rank ``group_rank`` of ``group`` (None: the world group)."""
    if not isinstance(group_rank, int):
        raise CommTypeError(f"The group_rank argument must be integer, but got {type(group_rank)}.")
    if group is None or group == GlobalComm.WORLD_COMM_GROUP:
        return group_rank
    if not isinstance(group, str):
        raise CommTypeError(f"For 'get_global_rank', the argument 'group' must be type of string or None, but got "
                            f"'group' type : {type(group)}.")
    return management.get_world_rank_from_group_rank(group, group_rank)


def get_group_rank(group: Any, global_rank: int) -> int:
    """The rank in ``group`` (None: the world group) of world rank ``global_rank``."""
    if not isinstance(global_rank, int):
        raise CommTypeError(f"The global_rank argument must be integer, but got {type(global_rank)}.")
    group = GlobalComm.WORLD_COMM_GROUP if group is None else group
    if not isinstance(group, str):
        raise CommTypeError(f"For 'get_group_rank_from_world_rank', the argument 'group' must be type of string, "
                            f"but got 'group' type : {type(group)}.")
    return management.get_group_rank_from_world_rank(global_rank, group)


def get_process_group_ranks(group: Any = None) -> list[int]:
    """The world ranks of ``group`` (None: the world group), in its rank order."""
    group = GlobalComm.WORLD_COMM_GROUP if group is None else group
    if not isinstance(group, str):
        raise CommTypeError(f"For 'get_process_group_ranks', the argument 'group' must be type of string or None, "
                            f"but got 'group' type : {type(group)}.")
    return management.get_process_group_ranks(group)


# ------------------------------------------------------------------------------------------ collectives
def _all_reduce(tensor: Tensor, op: str, group: str) -> Tensor:
    """The ``op`` reduction over ``group`` ("avg": the sum divided by the group's size, in the tensor's dtype)."""
    if op != "avg":
        return AllReduce(op, group)(tensor)
    total = AllReduce(ReduceOp.SUM, group)(tensor)
    return (total / _size(group)).astype(tensor.dtype)


def all_reduce(tensor: Tensor, op: str = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Any:
    """Every rank's ``tensor`` becomes the ``op`` reduction of all ranks' tensors."""
    _tensor("all_reduce", "input tensor", tensor)
    op, group, async_op = _reduce_op("all_reduce", op), _group(group), _flag(async_op)
    out = _all_reduce(tensor, op, group)
    if not _INPLACE["all_reduce"]:
        return out, _handle(async_op)
    hold_value(tensor, out)
    return _handle(async_op)


def all_gather_into_tensor(output_tensor: Any, input_tensor: Tensor, group: Any = None, async_op: bool = False) -> Any:
    """``output_tensor`` becomes every rank's ``input_tensor`` concatenated along dimension 0, in rank order."""
    _tensor("all_gather_into_tensor", "input tensor", input_tensor)
    inplace = _INPLACE["all_gather_into_tensor"]
    if inplace:
        _tensor("all_gather_into_tensor", "output tensor", output_tensor)
    group, async_op = _group(group), _flag(async_op)
    if inplace and input_tensor.shape:
        _output_shape("DistCommAllGatherIntoTensor", output_tensor,
                      (input_tensor.shape[0] * _size(group), *input_tensor.shape[1:]))
    out = AllGather(group)(input_tensor)
    if not inplace:
        return out, _handle(async_op)
    hold_value(output_tensor, out)
    return _handle(async_op)


def reduce_scatter_tensor(output: Any, input: Tensor, op: str = ReduceOp.SUM, group: Any = None,
                          async_op: bool = False) -> Any:
    """``output`` becomes the ``op`` reduction of block <rank> (along dimension 0) of every rank's ``input``."""
    _tensor("reduce_scatter_tensor", "input tensor", input)
    inplace = _INPLACE["reduce_scatter_tensor"]
    if inplace:
        _tensor("reduce_scatter_tensor", "output tensor", output)
    op, group, async_op = _reduce_op("reduce_scatter_tensor", op), _group(group), _flag(async_op)
    if inplace and input.shape and input.shape[0] % _size(group) == 0:
        _output_shape("DistCommReduceScatterTensor", output, (input.shape[0] // _size(group), *input.shape[1:]))
    out = ReduceScatter("sum" if op == "avg" else op, group)(input)
    if op == "avg":
        out = (out / _size(group)).astype(input.dtype)
    if not inplace:
        return out, _handle(async_op)
    hold_value(output, out)
    return _handle(async_op)


def reduce(tensor: Tensor, dst: int, op: str = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Any:
    """World rank ``dst``'s ``tensor`` becomes the ``op`` reduction of all ranks' tensors (the others keep theirs)."""
    _inplace_only("reduce")
    _tensor("reduce", "input tensor", tensor)
    dst = _int("reduce", "dst", dst)
    op, group, async_op = _reduce_op("reduce", op), _group(group), _flag(async_op)
    _group_rank(dst, group)                                   # dst must be a rank of the group
    out = _all_reduce(tensor, op, group)
    if management.get_rank() == dst:
        hold_value(tensor, out)
    return _handle(async_op)


def broadcast(tensor: Tensor, src: int, group: Any = None, async_op: bool = False) -> Any:
    """Every rank's ``tensor`` becomes world rank ``src``'s."""
    _inplace_only("broadcast")
    _tensor("broadcast", "input tensor", tensor)
    src, group, async_op = _int("broadcast", "src", src), _group(group), _flag(async_op)
    hold_value(tensor, Broadcast(src, group)((tensor,))[0])
    return _handle(async_op)


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Any:
    """Return once every rank of ``group`` has called barrier (``device_ids`` is unused, as in MindSpore)."""
    group, async_op = _group(group), _flag(async_op)
    _barrier(group)
    return _handle(async_op)


def all_gather(tensor_list: list, tensor: Tensor, group: Any = None, async_op: bool = False) -> Any:
    """``tensor_list[i]`` becomes group rank i's ``tensor``."""
    _inplace_only("all_gather")
    tensor_list = _tensors(tensor_list)
    _same_dtype_shape("all_gather", tensor_list, shape=False)
    _tensor("all_gather", "input tensor", tensor)
    group, async_op = _group(group), _flag(async_op)
    n = _size(group)
    if len(tensor_list) != n:
        raise CommTypeError(f"The argument list tensor len must be equal to group rank size, but got "
                            f"{len(tensor_list)}.")
    _shape_check("all_gather", tensor, tensor_list[_my_rank(group)].shape, tensor_list[0].dtype)
    _same_dtype_shape("all_gather", tensor_list)
    gathered = AllGather(group)(tensor.reshape((1,) + tuple(tensor.shape)) if tensor.ndim == 0 else tensor)
    rows = max(1, tensor.shape[0] if tensor.ndim else 1)
    for i, out in enumerate(tensor_list):
        hold_value(out, gathered[i * rows:(i + 1) * rows].reshape(tuple(out.shape)))
    return _handle(async_op)


def reduce_scatter(output: Tensor, input_list: list, op: str = ReduceOp.SUM, group: Any = None,
                   async_op: bool = False) -> Any:
    """``output`` becomes the ``op`` reduction of every rank's ``input_list[<rank>]``."""
    _inplace_only("reduce_scatter")
    input_list = _tensors(input_list)
    _same_dtype_shape("reduce_scatter", input_list, shape=False)
    _tensor("reduce_scatter", "output tensor", output)
    op, group, async_op = _reduce_op("reduce_scatter", op), _group(group), _flag(async_op)
    n = _size(group)
    if len(input_list) != n:
        raise CommTypeError(f"The argument list tensor len must be equal to group rank size, but got "
                            f"{len(input_list)}.")
    _shape_check("reduce_scatter", output, input_list[_my_rank(group)].shape, input_list[0].dtype)
    _same_dtype_shape("reduce_scatter", input_list)
    stacked = _cat([t.reshape((1, -1)) for t in input_list])
    out = ReduceScatter("sum" if op == "avg" else op, group)(stacked)
    if op == "avg":
        out = (out / n).astype(output.dtype)
    hold_value(output, out.reshape(tuple(output.shape)))
    return _handle(async_op)


# ------------------------------------------------------------------------------------------ point to point
def _send(name: str, tensor: Any, dst: Any, group: Any, tag: Any) -> None:
    _tensor(name, "input tensor", tensor)
    dst, group = _int(name, "dst", dst), _group(group)
    if management.get_rank() == dst:
        raise CommValueError("Invalid destination rank: destination rank should not be the same as the rank of "
                             "the current process.")
    Send(tag, dst, group)(tensor)


def _recv(name: str, tensor: Any, src: Any, group: Any, tag: Any) -> Tensor:
    _tensor(name, "input tensor", tensor)
    src, group = _int(name, "src", src), _group(group)
    return Receive(tag, src, tuple(tensor.shape), tensor.dtype, group)()


def send(tensor: Tensor, dst: int = 0, group: Any = None, tag: int = 0) -> None:
    """Send ``tensor`` to world rank ``dst``, whose recv with this rank as ``src`` takes it."""
    _send("send", tensor, dst, group, tag)


def recv(tensor: Tensor, src: int = 0, group: Any = None, tag: int = 0) -> Any:
    """``tensor`` becomes what world rank ``src`` sends; returns 0 (out of place: the received tensor)."""
    out = _recv("recv", tensor, src, group, tag)
    if not _INPLACE["recv"]:
        return out
    hold_value(tensor, out)
    return 0


def isend(tensor: Tensor, dst: int = 0, group: Any = None, tag: int = 0) -> CommHandle:
    """``send``, returning its handle."""
    _send("isend", tensor, dst, group, tag)
    return CommHandle()


def irecv(tensor: Tensor, src: int = 0, group: Any = None, tag: int = 0) -> Any:
    """``recv``, returning its handle (out of place: the received tensor and the handle)."""
    out = _recv("irecv", tensor, src, group, tag)
    if not _INPLACE["irecv"]:
        return out, CommHandle()
    hold_value(tensor, out)
    return CommHandle()


class P2POp:
    """One send (``"isend"``/``isend``) or receive (``"irecv"``/``irecv``) of ``tensor`` with world rank
    ``peer``, for :func:`batch_isend_irecv`."""

    def __init__(self, op: Any, tensor: Tensor, peer: int, group: Any = None, tag: int = 0) -> None:
        if isinstance(op, str):
            if op not in ("isend", "irecv"):
                raise CommTypeError(f"Expected op to be of type isend or irecv, but got {op}")
        elif op not in (isend, irecv):
            raise CommTypeError(f"Expected op to be of type isend or irecv, but got {op}")
        if not isinstance(tensor, Tensor):
            raise CommTypeError(f"Expected tensor to be Tensor, but got {type(tensor)}.")
        if not isinstance(peer, int):
            raise CommTypeError("For P2POp, the peer must be int")
        if tag != 0:
            raise NotImplementedError("tag is not support yet.")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag

    @property
    def is_send(self) -> bool:
        return self.op == "isend" or self.op is isend


def batch_isend_irecv(p2p_op_list: list) -> list:
    """Run the sends and receives of ``p2p_op_list``: with each peer in rank order, the lower rank of the
    pair sends first (an order every rank agrees on, so no two ranks wait on each other); returns
    ``[handle]``."""
    _inplace_only("batch_isend_irecv")
    if not p2p_op_list:
        raise CommTypeError("p2p_op_list can not be empty list.")
    if any(not isinstance(p, P2POp) for p in p2p_op_list):
        raise CommTypeError("The elements in p2p_op_list must be type of P2POp.")
    group = p2p_op_list[0].group
    if any(p.group != group for p in p2p_op_list):
        raise CommTypeError("The group name in p2p_op_list must be consistent.")
    me = management.get_rank()
    for peer in sorted({p.peer for p in p2p_op_list}):
        mine = [p for p in p2p_op_list if p.peer == peer]
        if peer == me:                          # to itself: each receive takes the next send, in order
            sends, recvs = [p for p in mine if p.is_send], [p for p in mine if not p.is_send]
            if len(sends) != len(recvs):
                raise CommValueError(f"For batch_isend_irecv, rank {me} sends {len(sends)} tensors to itself but "
                                     f"receives {len(recvs)}")
            for s, r in zip(sends, recvs):
                hold_value(r.tensor, s.tensor)
            continue
        for sending in ((True, False) if me < peer else (False, True)):
            for p in mine:
                if p.is_send == sending:
                    if sending:
                        _send("batch_isend_irecv", p.tensor, peer, group, p.tag)
                    else:
                        hold_value(p.tensor, _recv("batch_isend_irecv", p.tensor, peer, group, p.tag))
    return [CommHandle()]


def scatter_tensor(output_tensor: Tensor, input_tensor: Tensor, src: int = 0, group: Any = None,
                   async_op: bool = False) -> Any:
    """``output_tensor`` becomes block <rank> (along dimension 0) of world rank ``src``'s ``input_tensor``."""
    _inplace_only("scatter_tensor")
    _tensor("scatter_tensor", "input tensor", input_tensor)
    _tensor("scatter_tensor", "output tensor", output_tensor)
    src, group, async_op = _int("scatter_tensor", "src", src), _group(group), _flag(async_op)
    n, me = _size(group), _my_rank(group)
    if _group_rank(src, group) == me:
        rows = input_tensor.shape[0] // n if input_tensor.ndim else 0
        if input_tensor.ndim == 0 or rows * n != input_tensor.shape[0]:
            raise CommValueError(f"For scatter_tensor, the input's dimension 0 {tuple(input_tensor.shape)} must be "
                                 f"divisible by the group size {n}")
        blocks = [input_tensor[i * rows:(i + 1) * rows] for i in range(n)]
    else:
        blocks = []
    _scatter_blocks(output_tensor, blocks, src, group)
    return _handle(async_op)


def _scatter_blocks(output: Tensor, blocks: list[Tensor], src: int, group: str) -> None:
    """The root (world rank ``src``) sends ``blocks[i]`` to group rank i; each rank's ``output`` becomes its block."""
    if _group_rank(src, group) == _my_rank(group):
        for i, block in enumerate(blocks):
            if i != _my_rank(group):
                Send(0, _world_rank(i, group), group)(block)
        hold_value(output, blocks[_my_rank(group)].reshape(tuple(output.shape)))
    else:
        hold_value(output, Receive(0, src, tuple(output.shape), output.dtype, group)())


def _gather_blocks(tensor: Tensor, dst: int, group: str) -> list[Tensor]:
    """Every rank's ``tensor`` at the root (world rank ``dst``), in group rank order; [] elsewhere."""
    if _group_rank(dst, group) != _my_rank(group):
        Send(0, dst, group)(tensor)
        return []
    return [tensor if i == _my_rank(group) else
            Receive(0, _world_rank(i, group), tuple(tensor.shape), tensor.dtype, group)() for i in range(_size(group))]


def gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, dst: int = 0, group: Any = None,
                       async_op: bool = False) -> Any:
    """World rank ``dst``'s ``output_tensor`` becomes every rank's ``input_tensor`` concatenated along dimension 0."""
    _inplace_only("gather_into_tensor")
    _tensor("gather_into_tensor", "input tensor", input_tensor)
    _tensor("gather_into_tensor", "output tensor", output_tensor)
    dst, group, async_op = _int("gather_into_tensor", "dst", dst), _group(group), _flag(async_op)
    parts = _gather_blocks(input_tensor, dst, group)
    if parts:
        flat = _cat([p.reshape((1,) + tuple(p.shape)) if p.ndim == 0 else p for p in parts])
        hold_value(output_tensor, flat.reshape(tuple(output_tensor.shape)))
    return _handle(async_op)


def scatter(tensor: Tensor, scatter_list: list, src: int = 0, group: Any = None, async_op: bool = False) -> Any:
    """``tensor`` becomes world rank ``src``'s ``scatter_list[<rank>]``."""
    _inplace_only("scatter")
    scatter_list = _tensors(scatter_list)
    _same_dtype_shape("scatter", scatter_list)
    _tensor("scatter", "output tensor", tensor)
    src, group, async_op = _int("scatter", "src", src), _group(group), _flag(async_op)
    if _group_rank(src, group) == _my_rank(group):
        if len(scatter_list) != _size(group):
            raise CommTypeError(f"The argument list tensor len must be equal to group rank size, but got "
                                f"{len(scatter_list)}.")
        _shape_check("scatter", tensor, scatter_list[0].shape, scatter_list[0].dtype)
    _scatter_blocks(tensor, scatter_list, src, group)
    return _handle(async_op)


def gather(tensor: Tensor, gather_list: list, dst: int = 0, group: Any = None, async_op: bool = False) -> Any:
    """World rank ``dst``'s ``gather_list[i]`` becomes group rank i's ``tensor``."""
    _inplace_only("gather")
    _tensor("gather", "input tensor", tensor)
    gather_list = _tensors(gather_list)
    _same_dtype_shape("gather", gather_list)
    dst, group, async_op = _int("gather", "dst", dst), _group(group), _flag(async_op)
    if _group_rank(dst, group) == _my_rank(group):
        if len(gather_list) != _size(group):
            raise CommTypeError(f"The argument list tensor len must be equal to group rank size, but got "
                                f"{len(gather_list)}.")
        _shape_check("gather", tensor, gather_list[0].shape, gather_list[0].dtype)
    for out, part in zip(gather_list, _gather_blocks(tensor, dst, group)):
        hold_value(out, part)
    return _handle(async_op)


# ------------------------------------------------------------------------------------------ uneven exchanges
def _exchange(name: str, blocks: list[Tensor], recv_numels: list[int], group: str) -> list[Tensor]:
    """Flat ``blocks[j]`` goes to group rank j; returns the flat block each rank sent here (comm_ops'
    padded exchange, shared with AlltoAllV)."""
    return _uneven_exchange(name, blocks, recv_numels, group)


def _flat_split(tensor: Tensor, numels: list[int]) -> list[Tensor]:
    flat, offset, out = tensor.reshape(-1), 0, []
    for count in numels:
        out.append(flat[offset:offset + count])
        offset += count
    return out


def all_to_all(output_tensor_list: list, input_tensor_list: list, group: Any = None, async_op: bool = False) -> Any:
    """``input_tensor_list[j]`` goes to group rank j; ``output_tensor_list[i]`` becomes what rank i sent here
    (out of place: the received tensors, shaped like ``output_tensor_list``'s tensors or shapes)."""
    group, async_op = _group(group), _flag(async_op)
    inputs = _tensors(input_tensor_list)
    _same_dtype_shape("all_to_all", inputs, shape=False)
    n = _size(group)
    inplace = _INPLACE["all_to_all"]
    if inplace:
        outputs = _tensors(output_tensor_list)
        _same_dtype_shape("all_to_all", outputs, shape=False)
        shapes = [tuple(t.shape) for t in outputs]
    else:
        if not isinstance(output_tensor_list, (list, tuple)):
            raise CommTypeError(f"Expected list or tuple, but got {type(output_tensor_list)}.")
        shapes = [tuple(t.shape) if isinstance(t, Tensor) else tuple(t) for t in output_tensor_list]
    if len(inputs) != n or len(shapes) != n:
        raise CommValueError(f"For all_to_all, the input and output lists must hold one tensor per rank of the "
                             f"group ({n}), but got {len(inputs)} and {len(shapes)}.")
    recv = _exchange("all_to_all", [t.reshape(-1) for t in inputs],
                     [int(np.prod(s, dtype=np.int64)) for s in shapes], group)
    results = [r.reshape(s) for r, s in zip(recv, shapes)]
    if not inplace:
        return tuple(results), _handle(async_op)
    for out, r in zip(outputs, results):
        hold_value(out, r)
    return _handle(async_op)


def _split_numels(name: str, tensor: Tensor, split_sizes: Any, n: int) -> list[int]:
    """The element counts of the dimension-0 blocks ``split_sizes`` gives (empty: n equal blocks)."""
    rows = tensor.shape[0] if tensor.ndim else 1
    if split_sizes is None or len(split_sizes) == 0:
        if rows % n:
            raise CommValueError(f"{name} shape at dim 0 must be divided by world_size, but got {rows} and {n}.")
        split_sizes = [rows // n] * n
    if len(split_sizes) != n or sum(split_sizes) != rows:
        raise CommValueError(f"{name} split sizes {list(split_sizes)} must give one block per rank ({n}) and sum "
                             f"to dimension 0 ({rows})")
    inner = int(np.prod(tensor.shape[1:], dtype=np.int64))
    return [int(s) * inner for s in split_sizes]


def all_to_all_single(output: Any, input: Tensor, output_split_sizes: Any = None, input_split_sizes: Any = None,
                      group: Any = None, async_op: bool = False) -> Any:
    """Block j (along dimension 0, ``input_split_sizes``) of ``input`` goes to group rank j; ``output``
    becomes the blocks received, in rank order (``output_split_sizes`` rows each)."""
    _tensors([input])
    group, async_op = _group(group), _flag(async_op)
    n = _size(group)
    inplace = _INPLACE["all_to_all_single"]
    out_like = _tensors([output])[0] if inplace else input
    send = _split_numels("input", input, input_split_sizes, n)
    recv = _split_numels("output", out_like, output_split_sizes, n)
    got = _cat(_exchange("all_to_all_single", _flat_split(input, send), recv, group))
    if not inplace:
        return got.reshape((-1,) + tuple(input.shape[1:])), _handle(async_op)
    hold_value(output, got.reshape(tuple(output.shape)))
    return _handle(async_op)


def all_to_all_v_c(output: Tensor, input: Tensor, send_count_matrix: list, group: Any = None,
                   async_op: bool = False) -> Any:
    """Rank i sends ``send_count_matrix[i * n + j]`` elements of its flat ``input`` (in order) to rank j;
    ``output`` becomes what this rank receives, in rank order."""
    _inplace_only("all_to_all_v_c")
    _tensors([input])
    _tensors([output])
    group, async_op = _group(group), _flag(async_op)
    if not isinstance(send_count_matrix, list):
        raise CommTypeError(f"send_count_matrix must be list, but got {type(send_count_matrix)}")
    if not all(isinstance(x, int) for x in send_count_matrix):
        raise CommTypeError("send_count_matrix elements must be of type int")
    n, me = _size(group), _my_rank(group)
    if n * n != len(send_count_matrix):
        raise CommTypeError(f"send_count_matrix must be square matrix, but got {len(send_count_matrix)}.")
    matrix = np.array(send_count_matrix).reshape(n, n)
    if matrix[me].sum() > input.size or matrix[:, me].sum() != output.size:
        raise CommValueError(f"For all_to_all_v_c, rank {me} sends {matrix[me].tolist()} elements of an input of "
                             f"{input.size} and receives {matrix[:, me].tolist()} into an output of {output.size}")
    send = _flat_split(input, matrix[me].tolist())
    got = _cat(_exchange("all_to_all_v_c", send, matrix[:, me].tolist(), group))
    hold_value(output, got.reshape(tuple(output.shape)))
    return _handle(async_op)


def all_gather_into_tensor_uneven(output: Tensor, input: Tensor, output_split_sizes: Any = None, group: Any = None,
                                  async_op: bool = False) -> Any:
    """``output`` becomes every rank's ``input`` (whose dimension 0 may differ: ``output_split_sizes``)
    concatenated along dimension 0, in rank order."""
    _inplace_only("all_gather_into_tensor_uneven")
    _tensors([input])
    _tensors([output])
    group, async_op = _group(group), _flag(async_op)
    n = _size(group)
    recv = _split_numels("output", output, output_split_sizes, n)
    got = _cat(_exchange("all_gather_into_tensor_uneven", [input.reshape(-1)] * n, recv, group))
    hold_value(output, got.reshape(tuple(output.shape)))
    return _handle(async_op)


def reduce_scatter_tensor_uneven(output: Tensor, input: Tensor, input_split_sizes: Any = None, op: str = ReduceOp.SUM,
                                 group: Any = None, async_op: bool = False) -> Any:
    """``output`` becomes the ``op`` reduction of block <rank> (``input_split_sizes`` rows along dimension 0,
    the same on every rank) of every rank's ``input``."""
    _inplace_only("reduce_scatter_tensor_uneven")
    op = _reduce_op("reduce_scatter_tensor_uneven", op, ("sum", "min", "max", "avg"))
    _tensors([input])
    _tensors([output])
    group, async_op = _group(group), _flag(async_op)
    n, me = _size(group), _my_rank(group)
    numels = _split_numels("input", input, input_split_sizes, n)
    if numels[me] != output.size:
        raise CommValueError(f"For reduce_scatter_tensor_uneven, rank {me}'s block has {numels[me]} elements but "
                             f"the output has {output.size}")
    if max(numels):
        mine = _uneven_reduce_scatter("reduce_scatter_tensor_uneven", _flat_split(input, numels), op, group)
        hold_value(output, mine.reshape(tuple(output.shape)))
    return _handle(async_op)


# ------------------------------------------------------------------------------------------ objects (JSON)
def _encode(name: str, obj: Any) -> Tensor:
    """``obj`` as JSON bytes in an int32 tensor (one byte an element); never pickle."""
    try:
        data = json.dumps(obj).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise CommTypeError(f"For {name}, an object must be JSON data (dict, list, str, number, bool, None): {exc}. "
                            "Objects are not pickled here: unpickling bytes a peer sends would run its code") from exc
    if len(data) > MAX_OBJECT_BYTES:
        raise CommValueError(f"For {name}, the object serialises to {len(data)} bytes, more than "
                             f"MAX_OBJECT_BYTES={MAX_OBJECT_BYTES}; send a tensor instead")
    return Tensor(np.frombuffer(data, np.uint8).astype(np.int32))


def _checked_sizes(name: str, sizes: Tensor) -> list[int]:
    """The object sizes a peer announced, each within the bound (before anything that size is allocated)."""
    out = [int(s) for s in sizes.asnumpy().reshape(-1)]
    if any(not 0 <= s <= MAX_OBJECT_BYTES for s in out):
        raise CommValueError(f"For {name}, a peer announced object sizes {out}, outside 0..{MAX_OBJECT_BYTES}")
    return out


def _decode(name: str, codes: Tensor, size: int) -> Any:
    data = codes.asnumpy().reshape(-1)[:size]
    if data.size and (data.min() < 0 or data.max() > 255):
        raise CommValueError(f"For {name}, a peer sent bytes that are not serialised JSON")
    try:
        return json.loads(data.astype(np.uint8).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CommValueError(f"For {name}, a peer sent bytes that are not serialised JSON: {exc}") from exc


def _padded(codes: Tensor, width: int) -> Tensor:
    return codes if codes.size == width else _cat([codes, _zeros(width - codes.size, mstype.int32)])


def _gather_sizes(name: str, size: int, group: str) -> list[int]:
    return _checked_sizes(name, AllGather(group)(Tensor(np.array([size], np.int32))))


def all_gather_object(object_list: list, obj: Any, group: Any = None) -> None:
    """``object_list[i]`` becomes group rank i's ``obj`` (JSON data)."""
    _inplace_only("all_gather_object")
    group = _group(group)
    n = _size(group)
    if not isinstance(object_list, list) or len(object_list) != n:
        raise CommTypeError(f"The len of argument object_list must be equal to group rank size, but got "
                            f"{len(object_list) if isinstance(object_list, list) else type(object_list)}.")
    codes = _encode("all_gather_object", obj)
    sizes = _gather_sizes("all_gather_object", codes.size, group)
    width = max(sizes)
    if width:
        gathered = AllGather(group)(_padded(codes, width))
    for i, size in enumerate(sizes):
        object_list[i] = _decode("all_gather_object", gathered[i * width:(i + 1) * width], size) if width else None


def gather_object(obj: Any, object_gather_list: Any = None, dst: int = 0, group: Any = None) -> None:
    """World rank ``dst``'s ``object_gather_list[i]`` becomes group rank i's ``obj`` (JSON data)."""
    _inplace_only("gather_object")
    group = _group(group)
    dst = _int("gather_object", "dst", dst)
    n, root = _size(group), _group_rank(dst, group) == _my_rank(group)
    if root and (not isinstance(object_gather_list, list) or len(object_gather_list) != n):
        raise CommTypeError(f"The len of object_gather_list must be equal to group rank size, but got "
                            f"{len(object_gather_list) if isinstance(object_gather_list, list) else None}.")
    codes = _encode("gather_object", obj)
    sizes = _gather_sizes("gather_object", codes.size, group)
    width = max(sizes)
    parts = _gather_blocks(_padded(codes, width), dst, group) if width else [None] * n
    if root:
        for i, (part, size) in enumerate(zip(parts, sizes)):
            object_gather_list[i] = _decode("gather_object", part, size) if width else None


def broadcast_object_list(object_list: list, src: int = 0, group: Any = None, device: Any = None) -> None:
    """Every rank's ``object_list`` items become world rank ``src``'s (JSON data; the lists have one length)."""
    _inplace_only("broadcast_object_list")
    group = _group(group)
    src = _int("broadcast_object_list", "src", src)
    if not isinstance(object_list, list) or not object_list:
        raise CommTypeError("The object_list can not be empty.")
    root = _group_rank(src, group) == _my_rank(group)
    codes = [_encode("broadcast_object_list", obj) for obj in object_list] if root else []
    sizes = Tensor(np.array([c.size for c in codes] if root else [0] * len(object_list), np.int32))
    sizes = _checked_sizes("broadcast_object_list", Broadcast(src, group)((sizes,))[0])
    total = sum(sizes)
    if total:
        data = _cat([c for c in codes if c.size]) if root else _zeros(total, mstype.int32)
        data = Broadcast(src, group)((data,))[0]
    if not root:
        offset = 0
        for i, size in enumerate(sizes):
            object_list[i] = _decode("broadcast_object_list", data[offset:offset + size], size) if size else None
            offset += size


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list: Any, src: int = 0,
                        group: Any = None) -> None:
    """``scatter_object_output_list[0]`` becomes world rank ``src``'s ``scatter_object_input_list[<rank>]``."""
    _inplace_only("scatter_object_list")
    group = _group(group)
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise CommTypeError("The scatter_object_output_list can not be empty.")
    src = _int("scatter_object_list", "src", src)
    n, me = _size(group), _my_rank(group)
    root = _group_rank(src, group) == me
    if root:
        given = len(scatter_object_input_list) if isinstance(scatter_object_input_list, list) else None
        if given != n:
            raise CommTypeError(f"The len of scatter_object_input_list must be equal to group rank size, but got "
                                f"{given}.")
        codes = [_encode("scatter_object_list", obj) for obj in scatter_object_input_list]
    sizes = Tensor(np.array([c.size for c in codes] if root else [0] * n, np.int32))
    sizes = _checked_sizes("scatter_object_list", Broadcast(src, group)((sizes,))[0])
    width = max(sizes)
    if not width:
        scatter_object_output_list[0] = None
        return
    out = _zeros(width, mstype.int32)
    _scatter_blocks(out, [_padded(c, width) for c in codes] if root else [], src, group)
    scatter_object_output_list[0] = _decode("scatter_object_list", out, sizes[me])


def send_object_list(object_list: list, dst: int, group: Any = None, device: Any = None) -> None:
    """Send the items of ``object_list`` (JSON data) to world rank ``dst`` (its recv_object_list)."""
    _inplace_only("send_object_list")
    dst, group = _int("send_object_list", "dst", dst), _group(group)
    if not isinstance(object_list, list):
        raise CommTypeError("For send_object_list, the object_list must be a list")
    codes = [_encode("send_object_list", obj) for obj in object_list]
    _send("send_object_list", Tensor(np.array([c.size for c in codes], np.int32)), dst, group, 0)
    if any(c.size for c in codes):
        _send("send_object_list", _cat([c for c in codes if c.size]), dst, group, 0)


def recv_object_list(object_list: list, src: int = 0, group: Any = None, device: Any = None) -> int:
    """``object_list``'s items become those world rank ``src`` sends (send_object_list); returns 0."""
    _inplace_only("recv_object_list")
    src, group = _int("recv_object_list", "src", src), _group(group)
    if not isinstance(object_list, list):
        raise CommTypeError("For recv_object_list, the object_list must be a list")
    sizes = _checked_sizes("recv_object_list", _recv("recv_object_list", _zeros(len(object_list), mstype.int32),
                                                     src, group, 0))
    if sum(sizes) > MAX_OBJECT_BYTES:
        raise CommValueError(f"For recv_object_list, the peer announced {sum(sizes)} bytes in all, more than "
                             f"MAX_OBJECT_BYTES={MAX_OBJECT_BYTES}")
    data = _recv("recv_object_list", _zeros(sum(sizes), mstype.int32), src, group, 0) if sum(sizes) else None
    offset = 0
    for i, size in enumerate(sizes):
        object_list[i] = _decode("recv_object_list", data[offset:offset + size], size) if size else None
        offset += size
    return 0


# gather and scatter are served by mint.distributed; mindspore.ops.gather/scatter are array_func's.
_NOT_OPS = ("gather", "scatter", "CommHandle")
__all__ = [name for name in defined_here(globals(), __name__) if name not in _NOT_OPS]


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.comm_func", name, __all__)
