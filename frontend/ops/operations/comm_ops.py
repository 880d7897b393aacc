"""MindSpore's collective primitives (``mindspore.ops.AllReduce`` ..., ``ops.operations.comm_ops``).

Each primitive checks its arguments as MindSpore's does, reads the group's size where shapes depend
on it (AllGather, ReduceScatter, AlltoAll, as MindSpore's read ``get_group_size`` when built), and
applies one collective op of the registry (``kernels/ops/comm.py``): in PyNative it runs at once on
the default stream through the runtime's HCCL chapter; in GRAPH_MODE it is a node of the captured
graph, which the compiler puts on a communication stream and autodiff differentiates with
MindSpore's rules (AllReduce(sum) -> AllReduce(sum) of dout, AllGather -> ReduceScatter, ...).
"""
from __future__ import annotations

from typing import Any

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...communication.management import (HCCL_WORLD_COMM_GROUP, CommTypeError, CommValueError, _check,
                                         get_group_rank_from_world_rank, get_group_size)
from ..primitive import _Op, apply_op
from .array_ops import Concat, Reshape, Split

__all__ = ["ReduceOp", "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "AlltoAll", "Send", "Receive",
           "barrier"]


class ReduceOp:
    """The reduce operations of AllReduce and ReduceScatter (MindSpore's strings)."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


_REDUCE_OPS = (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD)


def _check_op(prim: str, op: Any) -> str:
    if not isinstance(op, str):
        raise CommTypeError(f"For '{prim}', the 'op' must be str, but got {type(op).__name__}.")
    if op not in _REDUCE_OPS:
        raise CommValueError(f"For '{prim}', the 'op' must be one of {_REDUCE_OPS} (ReduceOp), but got {op!r}.")
    return op


def _check_group(prim: str, group: Any) -> str:
    if not isinstance(group, str):
        raise CommTypeError(f"For '{prim}', the 'group' must be str, but got {type(group).__name__}.")
    return group


def _check_int(prim: str, name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise CommTypeError(f"For '{prim}', the '{name}' must be int, but got {type(value).__name__}.")
    return value


class _Collective(_Op):
    """Applies its op to one tensor in the group (checked to exist when called)."""

    op_name = ""

    def _attrs(self) -> dict[str, Any]:
        raise NotImplementedError

    def __call__(self, x: Any) -> Tensor:
        _check(self.name, self.group)
        return apply_op(self.op_name, [x], self._attrs())[0]


class AllReduce(_Collective):
    """Every rank of ``group`` gets the ``op`` reduction of all ranks' tensors."""

    op_name = "AllReduce"

    def __init__(self, op: str = ReduceOp.SUM, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.op = _check_op(self.name, op)
        self.group = _check_group(self.name, group)
        for key, value in (("op", op), ("group", group), ("fusion", 0), ("index", 0), ("no_eliminate", True)):
            self.add_prim_attr(key, value)

    def _attrs(self) -> dict[str, Any]:
        return {"reduce_op": self.op, "group": self.group}


class AllGather(_Collective):
    """Every rank gets all ranks' tensors concatenated along dimension 0, in rank order."""

    op_name = "AllGather"

    def __init__(self, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.group = _check_group(self.name, group)
        self.rank_size = get_group_size(group)
        for key, value in (("group", group), ("rank_size", self.rank_size), ("fusion", 0), ("mean_flag", False),
                           ("no_eliminate", True)):
            self.add_prim_attr(key, value)

    def _attrs(self) -> dict[str, Any]:
        return {"group": self.group, "rank_size": self.rank_size}


class ReduceScatter(_Collective):
    """Rank i gets the ``op`` reduction of the i-th block (along dimension 0) of every rank's tensor."""

    op_name = "ReduceScatter"

    def __init__(self, op: str = ReduceOp.SUM, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.op = _check_op(self.name, op)
        self.group = _check_group(self.name, group)
        self.rank_size = get_group_size(group)
        for key, value in (("op", op), ("group", group), ("rank_size", self.rank_size), ("fusion", 0),
                           ("no_eliminate", True)):
            self.add_prim_attr(key, value)

    def _attrs(self) -> dict[str, Any]:
        return {"reduce_op": self.op, "group": self.group, "rank_size": self.rank_size}


class Broadcast(_Op):
    """Every rank's tensors become those of world rank ``root_rank``; takes and returns a tuple."""

    def __init__(self, root_rank: int, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.root_rank = _check_int(self.name, "root_rank", root_rank)
        self.group = _check_group(self.name, group)
        self._root = (root_rank if group == HCCL_WORLD_COMM_GROUP
                      else get_group_rank_from_world_rank(root_rank, group))
        for key, value in (("root_rank", root_rank), ("group", group), ("no_eliminate", True)):
            self.add_prim_attr(key, value)

    def __call__(self, input_x: Any) -> tuple[Tensor, ...]:
        if not isinstance(input_x, tuple):
            raise CommTypeError(f"For '{self.name}', the 'input_x' must be a tuple, but got "
                                f"{type(input_x).__name__}.")
        _check(self.name, self.group)
        return tuple(apply_op("Broadcast", [x], {"root_rank": self._root, "group": self.group})[0] for x in input_x)


class AlltoAll(_Op):
    """Split the tensor along ``split_dim`` into ``split_count`` blocks, send block j to rank j, and
    concatenate the blocks received, in rank order, along ``concat_dim``."""

    def __init__(self, split_count: int, split_dim: int, concat_dim: int, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.split_count = _check_int(self.name, "split_count", split_count)
        self.split_dim = _check_int(self.name, "split_dim", split_dim)
        self.concat_dim = _check_int(self.name, "concat_dim", concat_dim)
        self.group = _check_group(self.name, group)
        self.rank_size = get_group_size(group)
        if split_count != self.rank_size:
            raise CommValueError(f"For '{self.name}', the 'split_count' must be equal to the group size "
                                 f"{self.rank_size}, but got {split_count}.")
        for key, value in (("split_count", split_count), ("split_dim", split_dim), ("concat_dim", concat_dim),
                           ("group", group)):
            self.add_prim_attr(key, value)

    def __call__(self, x: Any) -> Tensor:
        _check(self.name, self.group)
        x = x if isinstance(x, Tensor) else Tensor(x)
        rank = len(x.shape)
        split_dim, concat_dim = self.split_dim % rank, self.concat_dim % rank
        n = self.split_count
        if x.shape[split_dim] % n:
            raise CommValueError(f"For '{self.name}', the dimension {split_dim} of the input {tuple(x.shape)} must be "
                                 f"divisible by split_count {n}.")
        attrs = {"group": self.group, "rank_size": n}
        if split_dim == 0 and concat_dim == 0:
            return apply_op("AlltoAll", [x], attrs)[0]
        blocks = Split(split_dim, n)(x)
        block_shape = tuple(blocks[0].shape)
        rows = apply_op("AlltoAll", [Concat(0)([Reshape()(b, (1, -1)) for b in blocks])], attrs)[0]
        return Concat(concat_dim)([Reshape()(r, block_shape) for r in Split(0, rows.shape[0])(rows)])


def _group_rank(prim: str, world_rank: int, group: str) -> int:
    """A world rank (what MindSpore's Send/Receive/Broadcast take) as a rank of ``group``."""
    return world_rank if group == HCCL_WORLD_COMM_GROUP else get_group_rank_from_world_rank(world_rank, group)


class Send(_Op):
    """Send the tensor to world rank ``dest_rank``, whose Receive with the same ``sr_tag`` takes it.
    Returns an empty tensor (order it with ``ops.Depend(x, send(x))`` as MindSpore's examples do);
    sends and receives are matched in the order each pair of ranks issues them."""

    def __init__(self, sr_tag: int, dest_rank: int, group: str = HCCL_WORLD_COMM_GROUP,
                 group_back: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.sr_tag = _check_int(self.name, "sr_tag", sr_tag)
        self.dest_rank = _check_int(self.name, "dest_rank", dest_rank)
        self.group = _check_group(self.name, group)
        self.group_back = _check_group(self.name, group_back)
        for key, value in (("sr_tag", sr_tag), ("dest_rank", dest_rank), ("group", group), ("group_back", group_back)):
            self.add_prim_attr(key, value)

    def __call__(self, input_x: Any) -> Tensor:
        _check(self.name, self.group)
        attrs = {"dest_rank": _group_rank(self.name, self.dest_rank, self.group), "sr_tag": self.sr_tag,
                 "group": self.group}
        return apply_op("Send", [input_x], attrs)[0]


class Receive(_Op):
    """Receive a tensor of ``shape`` and ``dtype`` from world rank ``src_rank`` (its Send with ``sr_tag``)."""

    def __init__(self, sr_tag: int, src_rank: int, shape: Any, dtype: Any, group: str = HCCL_WORLD_COMM_GROUP,
                 group_back: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.sr_tag = _check_int(self.name, "sr_tag", sr_tag)
        self.src_rank = _check_int(self.name, "src_rank", src_rank)
        if not isinstance(shape, (list, tuple)) or any(not isinstance(d, int) or d < 0 for d in shape):
            raise CommTypeError(f"For '{self.name}', the 'shape' must be a list or tuple of non-negative ints, "
                                f"but got {shape!r}.")
        self.shape = tuple(shape)
        self.dtype = mstype.to_type(dtype)
        self.group = _check_group(self.name, group)
        self.group_back = _check_group(self.name, group_back)
        for key, value in (("sr_tag", sr_tag), ("src_rank", src_rank), ("shape", list(shape)), ("dtype", self.dtype),
                           ("group", group), ("group_back", group_back)):
            self.add_prim_attr(key, value)

    def __call__(self) -> Tensor:
        _check(self.name, self.group)
        attrs = {"src_rank": _group_rank(self.name, self.src_rank, self.group), "sr_tag": self.sr_tag,
                 "shape": self.shape, "dtype": self.dtype.name, "group": self.group}
        return apply_op("Receive", [], attrs)[0]


def barrier(group: str = HCCL_WORLD_COMM_GROUP) -> None:
    """Return once every rank of ``group`` has reached its barrier (a Barrier op: in a graph, a node)."""
    _check("barrier", _check_group("barrier", group))
    apply_op("Barrier", [], {"group": group})
