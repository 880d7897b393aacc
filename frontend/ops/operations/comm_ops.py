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
        self.rank = self.dest_rank                        # MindSpore's attribute name
        self.group = _check_group(self.name, group)
        self.group_back = _check_group(self.name, group_back)
        for key, value in (("sr_tag", sr_tag), ("dest_rank", dest_rank), ("group", group), ("group_back", group_back)):
            self.add_prim_attr(key, value)

    def __call__(self, input_x: Any) -> Tensor:
        _check(self.name, self.group)
        attrs = {"dest_rank": _group_rank(self.name, self.dest_rank, self.group), "sr_tag": self.sr_tag,
                 "group": self.group}
        return apply_op("Send", [input_x], attrs)[0]


# the dtypes MindSpore's Receive takes (its check_scalar_or_tensor_types_same list)
_RECEIVE_DTYPES = (mstype.float16, mstype.float32, mstype.float64, mstype.bfloat16, mstype.int8, mstype.int16,
                   mstype.int32, mstype.int64, mstype.uint8, mstype.uint16, mstype.uint32, mstype.uint64)


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
        if self.dtype not in _RECEIVE_DTYPES:
            raise CommTypeError(f"For '{self.name}', the type of 'dtype' must be in "
                                f"{[str(t) for t in _RECEIVE_DTYPES]}, but got {self.dtype}.")
        self.tag, self.rank = self.sr_tag, self.src_rank     # MindSpore's attribute names
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








# ---- collectives ----
# The uneven exchanges (AlltoAllV, AllGatherV, ReduceScatterV, AlltoAllVC and comm_func's functions) pad
# every block to the largest one any rank sends and run one AlltoAll; the padded width comes from an
# AllGather of the send sizes run on the host, so they are PyNative-only here (a captured graph would
# need it before the graph is built).
import numpy as np  # noqa: E402

from ascendemu.errors import InvalidParamError  # noqa: E402
from ascendemu.graph.capture import current_tracer  # noqa: E402

from ...communication.management import get_rank  # noqa: E402
from .array_ops import Identity  # noqa: E402

__all__ += ["Reduce", "CollectiveGather", "CollectiveScatter", "Barrier", "AlltoAllV", "AlltoAllVC", "AllGatherV",
            "ReduceScatterV"]


def _flat_zeros(count: int, dtype: mstype.Type) -> Tensor:
    return Tensor(np.zeros(count, dtype.np_type), dtype)


def _cat0(parts: list[Tensor]) -> Tensor:
    return parts[0] if len(parts) == 1 else Concat(0)(parts)


def _pad_to(block: Tensor, width: int) -> Tensor:
    """A flat block padded with zeros to ``width`` elements."""
    if block.size == width:
        return block.reshape(-1)
    if block.size == 0:
        return _flat_zeros(width, block.dtype)
    return _cat0([block.reshape(-1), _flat_zeros(width - block.size, block.dtype)])


def _eager_only(name: str) -> None:
    if current_tracer() is not None:
        raise InvalidParamError(f"{name} in GRAPH_MODE: its padded exchange needs every rank's sizes on the host "
                                f"before the graph is built; call it in PyNative mode, or use AlltoAll/AllGather/"
                                f"ReduceScatter with equal blocks in the graph")


def _uneven_exchange(name: str, blocks: list[Tensor], recv_numels: list[int], group: str) -> list[Tensor]:
    """Flat ``blocks[j]`` goes to group rank j; returns the flat block each rank sent here. The send sizes
    are gathered first: they give the padded width and check each rank expects what its peers send."""
    _eager_only(name)
    n, me = get_group_size(group), get_rank(group)
    dtype = blocks[0].dtype
    sizes = Tensor(np.array([b.size for b in blocks], np.int32))
    matrix = AllGather(group)(sizes).asnumpy().reshape(n, n)          # row i: what rank i sends to each rank
    if list(matrix[:, me]) != list(recv_numels):
        raise CommValueError(f"For {name}, rank {me} expects {list(recv_numels)} elements from the ranks of group "
                             f"{group!r}, but they send {matrix[:, me].tolist()}")
    width = int(matrix.max())
    if width == 0:
        return [_flat_zeros(0, dtype) for _ in range(n)]
    got = AlltoAll(n, 0, 0, group)(_cat0([_pad_to(b, width) for b in blocks]))
    return [got[j * width:j * width + recv_numels[j]] for j in range(n)]


def _uneven_reduce_scatter(name: str, blocks: list[Tensor], op: str, group: str) -> Tensor:
    """The ``op`` reduction over the ranks of block <this rank> of ``blocks`` (flat, the same sizes on
    every rank), padded to one width and reduced by one ReduceScatter; ``op`` "avg" is the sum / size."""
    _eager_only(name)
    n, me = get_group_size(group), get_rank(group)
    dtype = blocks[0].dtype
    width = max(b.size for b in blocks)
    if width == 0:
        return _flat_zeros(0, dtype)
    rows = _cat0([_pad_to(b, width).reshape((1, width)) for b in blocks])
    mine = ReduceScatter("sum" if op == "avg" else op, group)(rows).reshape(-1)[:blocks[me].size]
    return (mine / n).astype(dtype) if op == "avg" else mine


def _split_flat(tensor: Tensor, numels: list[int]) -> list[Tensor]:
    flat, offset, out = tensor.reshape(-1), 0, []
    for count in numels:
        out.append(flat[offset:offset + count])
        offset += count
    return out


def _counts(prim: str, what: str, value: Any, n: int) -> list[int]:
    """A list/tuple/Tensor of ``n`` non-negative element counts."""
    if isinstance(value, Tensor):
        value = value.asnumpy().reshape(-1).tolist()
    if not isinstance(value, (list, tuple)) or any(not isinstance(v, int) or isinstance(v, bool) or v < 0
                                                   for v in value):
        raise CommTypeError(f"For '{prim}', the '{what}' must be a tuple, list or Tensor of non-negative ints, "
                            f"but got {value!r}.")
    if len(value) != n:
        raise CommValueError(f"For '{prim}', the '{what}' must hold one count per rank of the group ({n}), but got "
                             f"{len(value)}.")
    return [int(v) for v in value]


def _flat_input(prim: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise CommTypeError(f"For '{prim}', the 'input_x' must be a Tensor, but got {type(x).__name__}.")
    return x.reshape(-1)


def _gathered_or_empty(parts: list[Tensor], dtype: mstype.Type) -> Tensor:
    """The received blocks concatenated; MindSpore's empty result is a shape-() tensor."""
    parts = [p for p in parts if p.size]
    return _cat0(parts) if parts else Tensor(np.zeros((), dtype.np_type), dtype)


def _placeholder(dtype: mstype.Type) -> Tensor:
    """What MindSpore's Reduce/CollectiveGather give the ranks that are not the destination: shape [1]."""
    return Tensor(np.zeros(1, dtype.np_type), dtype)


class Reduce(_Op):
    """Rank ``dest_rank`` (of ``group``) gets the ``op`` reduction of every rank's tensor; the other
    ranks get a shape-[1] tensor without meaning, as in MindSpore. One AllReduce of the group."""

    def __init__(self, dest_rank: int, op: str = ReduceOp.SUM, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.group = _check_group(self.name, group)
        self.op = _check_op(self.name, op)
        self.dest_rank = _check_int(self.name, "dest_rank", dest_rank)
        self.add_prim_attr("group", group)
        self.add_prim_attr("dest_rank", dest_rank)

    def __call__(self, x: Any) -> Tensor:
        _check(self.name, self.group)
        if not isinstance(x, Tensor):
            raise TypeError(f"For '{self.name}', the 'input_x' must be a Tensor, but got {type(x).__name__}.")
        out = apply_op("AllReduce", [x], {"reduce_op": self.op, "group": self.group})[0]
        return out if get_rank(self.group) == self.dest_rank else _placeholder(x.dtype)


class CollectiveGather(_Op):
    """World rank ``dest_rank`` gets every rank's tensor concatenated along dimension 0 in rank order;
    the others a shape-[1] tensor without meaning. One AllGather of the group."""

    def __init__(self, dest_rank: int, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.group = _check_group(self.name, group)
        self.dest_rank = _check_int(self.name, "dest_rank", dest_rank)
        self.rank_size = get_group_size(group)
        self.rank_id = get_rank(group)
        for key, value in (("rank_size", self.rank_size), ("group", group), ("dest_rank", dest_rank),
                           ("rank_id", self.rank_id)):
            self.add_prim_attr(key, value)

    def __call__(self, x: Any) -> Tensor:
        out = AllGather(self.group)(x)
        return out if self.rank_id == _group_rank(self.name, self.dest_rank, self.group) else _placeholder(out.dtype)


class CollectiveScatter(_Op):
    """World rank ``src_rank``'s tensor split evenly along dimension 0: rank i gets block i. One Broadcast
    of the group, each rank keeping its block."""

    def __init__(self, src_rank: int = 0, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.group = _check_group(self.name, group)
        self.src_rank = _check_int(self.name, "src_rank", src_rank)
        self.rank_size = get_group_size(group)
        self.rank_id = get_rank(group)
        for key, value in (("rank_id", self.rank_id), ("src_rank", src_rank), ("rank_size", self.rank_size),
                           ("group", group)):
            self.add_prim_attr(key, value)

    def __call__(self, x: Any) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"For '{self.name}', the 'input_x' must be a Tensor, but got {type(x).__name__}.")
        n = self.rank_size
        if not x.shape or x.shape[0] % n:
            raise CommValueError(f"For '{self.name}', the dimension 0 of the input {tuple(x.shape)} must be divisible "
                                 f"by the group size {n}.")
        whole = Broadcast(self.src_rank, self.group)((x,))[0]
        rows = x.shape[0] // n
        return whole[self.rank_id * rows:(self.rank_id + 1) * rows]


class Barrier(_Op):
    """Returns once every rank of ``group`` has called it: a shape-[1] float32 tensor, as MindSpore's."""

    def __init__(self, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.group = _check_group(self.name, group)
        self.add_prim_attr("side_effect_mem", True)

    def __call__(self) -> Tensor:
        barrier(self.group)
        return _placeholder(mstype.float32)


def _check_block_size(name: str, block_size: Any) -> None:
    """The uneven exchanges' ``block_size``: an int (MindSpore's TypeError otherwise)."""
    if not isinstance(block_size, int) or isinstance(block_size, bool):
        raise TypeError(f"For '{name}', the type of 'block_size' should be int, but got {type(block_size).__name__}.")


class AlltoAllV(_Op):
    """``AlltoAllV(group, block_size)(input_x, send_numel_list, recv_numel_list)``: the flat ``input_x``
    split in order into ``send_numel_list[j] * block_size`` elements for rank j; returns the blocks
    received (``recv_numel_list[i] * block_size`` from rank i) concatenated in rank order. PyNative only."""

    def __init__(self, group: str = HCCL_WORLD_COMM_GROUP, block_size: int = 1) -> None:
        super().__init__()
        self.group = HCCL_WORLD_COMM_GROUP if group is None else _check_group(self.name, group)
        _check_block_size(self.name, block_size)
        self.rank_size = get_group_size(self.group)
        self.block_size = block_size
        self.add_prim_attr("group", self.group)
        self.add_prim_attr("block_size", block_size)

    def __call__(self, input_x: Any, send_numel_list: Any, recv_numel_list: Any) -> Tensor:
        _check(self.name, self.group)
        x, n = _flat_input(self.name, input_x), self.rank_size
        send = [c * self.block_size for c in _counts(self.name, "send_numel_list", send_numel_list, n)]
        recv = [c * self.block_size for c in _counts(self.name, "recv_numel_list", recv_numel_list, n)]
        if sum(send) > x.size:
            raise CommValueError(f"For '{self.name}', the ranks are sent {sum(send)} elements but the input has "
                                 f"{x.size}.")
        return _gathered_or_empty(_uneven_exchange(self.name, _split_flat(x, send), recv, self.group), x.dtype)


class AlltoAllVC(_Op):
    """``AlltoAllVC(group, block_size, transpose)(input_x, send_count_matrix)``: rank i sends
    ``send_count_matrix[i * n + j] * block_size`` elements of its flat input (in order) to rank j
    (``transpose``: the matrix transposed, for the backward exchange). PyNative only."""

    def __init__(self, group: str = HCCL_WORLD_COMM_GROUP, block_size: int = 1, transpose: bool = False) -> None:
        super().__init__()
        self.group = HCCL_WORLD_COMM_GROUP if group is None else _check_group(self.name, group)
        _check_block_size(self.name, block_size)
        self.rank_size = get_group_size(self.group)
        self.rank_id = get_rank(self.group)
        self.block_size, self.transpose = block_size, bool(transpose)
        for key, value in (("rank_size", self.rank_size), ("group", self.group), ("rank_id", self.rank_id),
                           ("block_size", block_size), ("transpose", self.transpose)):
            self.add_prim_attr(key, value)

    def __call__(self, input_x: Any, send_count_matrix: Any) -> Tensor:
        _check(self.name, self.group)
        x, n, me = _flat_input(self.name, input_x), self.rank_size, self.rank_id
        matrix = np.array(_counts(self.name, "send_count_matrix", send_count_matrix, n * n)).reshape(n, n)
        matrix = (matrix.T if self.transpose else matrix) * self.block_size
        if matrix[me].sum() > x.size:
            raise CommValueError(f"For '{self.name}', rank {me} sends {int(matrix[me].sum())} elements but the input "
                                 f"has {x.size}.")
        got = _uneven_exchange(self.name, _split_flat(x, matrix[me].tolist()), matrix[:, me].tolist(), self.group)
        return _gathered_or_empty(got, x.dtype)


class AllGatherV(_Op):
    """``AllGatherV(group)(input_x, output_split_sizes)``: every rank's flat ``input_x``
    (``output_split_sizes[i]`` elements on rank i) concatenated in rank order. PyNative only."""

    def __init__(self, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.group = _check_group(self.name, group)
        self.rank = get_rank(group)
        self.rank_size = get_group_size(group)
        for key, value in (("rank_size", self.rank_size), ("group", group), ("mean_flag", False),
                           ("rank_id", self.rank)):
            self.add_prim_attr(key, value)

    def __call__(self, input_x: Any, output_split_sizes: Any) -> Tensor:
        _check(self.name, self.group)
        x, n = _flat_input(self.name, input_x), self.rank_size
        recv = _counts(self.name, "output_split_sizes", output_split_sizes, n)
        return _gathered_or_empty(_uneven_exchange(self.name, [x] * n, recv, self.group), x.dtype)


class ReduceScatterV(_Op):
    """``ReduceScatterV(op, group)(input_x, input_split_sizes)``: rank i gets the ``op`` reduction over
    the ranks of block i (``input_split_sizes[i]`` elements, in order) of the flat ``input_x``. PROD is
    not supported (MindSpore documents so; refused when called). PyNative only."""

    def __init__(self, op: str = ReduceOp.SUM, group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.op = _check_op(self.name, op)
        self.group = _check_group(self.name, group)
        self.rank = get_rank(group)
        self.rank_size = get_group_size(group)
        for key, value in (("op", op), ("rank_size", self.rank_size), ("group", group), ("rank_id", self.rank)):
            self.add_prim_attr(key, value)

    def __call__(self, input_x: Any, input_split_sizes: Any) -> Tensor:
        _check(self.name, self.group)
        x, n = _flat_input(self.name, input_x), self.rank_size
        if self.op == ReduceOp.PROD:
            raise CommValueError(f"For '{self.name}', the 'op' must be sum, max or min, but got prod.")
        numels = _counts(self.name, "input_split_sizes", input_split_sizes, n)
        if sum(numels) > x.size:
            raise CommValueError(f"For '{self.name}', the blocks hold {sum(numels)} elements but the input has "
                                 f"{x.size}.")
        mine = _uneven_reduce_scatter(self.name, _split_flat(x, numels), self.op, self.group)
        return _gathered_or_empty([mine], x.dtype)


def _peer_exchange(name: str, steps: list[tuple[bool, int, Any]], group: str) -> list[Tensor | None]:
    """Run ``steps`` (is_send, world rank of the peer, a Tensor to send or the (shape, dtype) to receive)
    with Send/Receive: peers in rank order and, with each, the lower rank of the pair sending first (an
    order every rank agrees on, so no two ranks wait on each other); a rank's sends to itself are its
    receives from itself, in order. Returns the received tensor at each receive's position."""
    me = get_rank(HCCL_WORLD_COMM_GROUP)
    out: list[Tensor | None] = [None] * len(steps)
    for peer in sorted({peer for _, peer, _ in steps}):
        mine = [k for k, (_, p, _) in enumerate(steps) if p == peer]
        if peer == me:
            sends = [k for k in mine if steps[k][0]]
            recvs = [k for k in mine if not steps[k][0]]
            if len(sends) != len(recvs):
                raise CommValueError(f"For '{name}', rank {me} sends {len(sends)} tensors to itself but receives "
                                     f"{len(recvs)}.")
            for s, r in zip(sends, recvs):
                out[r] = Identity()(steps[s][2])
            continue
        for sending in ((True, False) if me < peer else (False, True)):
            for k in mine:
                is_send, _, item = steps[k]
                if is_send != sending:
                    continue
                if is_send:
                    Send(0, peer, group)(item)
                else:
                    out[k] = Receive(0, peer, item[0], item[1], group)()
    return out


def _int_list(prim: str, what: str, value: Any) -> list[int]:
    if not isinstance(value, (list, tuple)) or any(not isinstance(v, int) or isinstance(v, bool) for v in value):
        raise TypeError(f"For '{prim}', the '{what}' must be a list or tuple of ints, but got {value!r}.")
    return list(value)


def _tensor_tuple(prim: str, input_x: Any) -> list[Tensor]:
    if not isinstance(input_x, (list, tuple)) or any(not isinstance(t, Tensor) for t in input_x):
        raise TypeError(f"For '{prim}', the 'input_x' must be a tuple or list of Tensors, but got {input_x!r}.")
    return list(input_x)


class BatchISendIRecv(_Op):
    """``BatchISendIRecv(op_types, remote_ranks, receive_shapes, receive_dtypes, group)(input_x)``: the
    "isend"/"irecv" of ``op_types`` with the world ranks ``remote_ranks``; ``input_x`` holds the tensors
    sent, in order. Returns one tensor per op: the received one at an "irecv", a scalar 0 at an "isend"."""

    def __init__(self, op_types: Any, remote_ranks: Any, receive_shapes: Any = None, receive_dtypes: Any = None,
                 group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        receive_shapes = () if receive_shapes is None else receive_shapes
        receive_dtypes = () if receive_dtypes is None else receive_dtypes
        for what, value in (("receive_shapes", receive_shapes), ("receive_dtypes", receive_dtypes),
                            ("op_types", op_types), ("remote_ranks", remote_ranks)):
            if not isinstance(value, (tuple, list)):
                raise TypeError(f"For '{self.name}', the type of '{what}' should be one of '['tuple', 'list']', "
                                f"but got type '{type(value).__name__}'.")
        if len(receive_shapes) != len(receive_dtypes):
            raise ValueError(f"length of receive_shapes and receive_shapes must be the same, but got receive_shapes: "
                             f"{len(receive_shapes)}  and receive_shapes: {receive_dtypes}")
        if len(op_types) != len(remote_ranks):
            raise ValueError("length of op_types and remote_ranks must be the same.")
        if any(t not in ("isend", "irecv") for t in op_types):
            raise ValueError(f"For '{self.name}', the 'op_types' must be 'isend' or 'irecv', but got {op_types}.")
        if sum(t == "irecv" for t in op_types) != len(receive_shapes):
            raise ValueError(f"For '{self.name}', each 'irecv' needs one of 'receive_shapes' and 'receive_dtypes'.")
        self.group = HCCL_WORLD_COMM_GROUP if group is None else _check_group(self.name, group)
        self.op_types, self.remote_ranks = list(op_types), _int_list(self.name, "remote_ranks", remote_ranks)
        self.receive_shapes = [tuple(s) for s in receive_shapes]
        self.receive_dtypes = [mstype.to_type(d) for d in receive_dtypes]
        for key, value in (("group", self.group), ("op_types", self.op_types), ("remote_ranks", self.remote_ranks),
                           ("receive_shapes", receive_shapes), ("receive_dtypes", receive_dtypes),
                           ("no_eliminate", True)):
            self.add_prim_attr(key, value)

    def __call__(self, input_x: Any) -> tuple[Tensor, ...]:
        _check(self.name, self.group)
        sent = _tensor_tuple(self.name, input_x)
        if len(sent) != self.op_types.count("isend"):
            raise RuntimeError(f"For '{self.name}', the number of input tensors ({len(sent)}) must equal the number "
                               f"of 'isend' ({self.op_types.count('isend')}).")
        sends, recvs, steps = iter(sent), iter(zip(self.receive_shapes, self.receive_dtypes)), []
        for kind, peer in zip(self.op_types, self.remote_ranks):
            steps.append((True, peer, next(sends)) if kind == "isend" else (False, peer, next(recvs)))
        got = _peer_exchange(self.name, steps, self.group)
        return tuple(g if g is not None else Tensor(np.zeros((), s[2].dtype.np_type), s[2].dtype)
                     for g, s in zip(got, steps))


class NeighborExchange(_Op):
    """``NeighborExchange(send_rank_ids, recv_rank_ids, recv_shapes, send_shapes, recv_type, group)(input_x)``:
    ``input_x[i]`` (shaped ``send_shapes[i]``) goes to world rank ``send_rank_ids[i]``; returns the
    tensors received from ``recv_rank_ids`` (``recv_shapes``, dtype ``recv_type``)."""

    def __init__(self, send_rank_ids: Any, recv_rank_ids: Any, recv_shapes: Any, send_shapes: Any, recv_type: Any,
                 group: str = HCCL_WORLD_COMM_GROUP) -> None:
        super().__init__()
        self.send_rank_ids = _int_list(self.name, "send_rank_ids", send_rank_ids)
        self.recv_rank_ids = _int_list(self.name, "recv_rank_ids", recv_rank_ids)
        if len(recv_shapes) != len(self.recv_rank_ids) or len(send_shapes) != len(self.send_rank_ids):
            raise ValueError(f"For '{self.name}', one shape per rank is needed: got {len(send_shapes)} send_shapes "
                             f"for {len(self.send_rank_ids)} ranks and {len(recv_shapes)} recv_shapes for "
                             f"{len(self.recv_rank_ids)} ranks.")
        self.recv_shapes, self.send_shapes = [tuple(s) for s in recv_shapes], [tuple(s) for s in send_shapes]
        self.recv_type, self.group = mstype.to_type(recv_type), _check_group(self.name, group)
        self.add_prim_attr("group", group)
        self.add_prim_attr("no_eliminate", True)

    def __call__(self, tensor: Any) -> tuple[Tensor, ...]:
        _check(self.name, self.group)
        sent = _tensor_tuple(self.name, tensor)
        if [tuple(t.shape) for t in sent] != self.send_shapes:
            raise ValueError(f"For '{self.name}', the inputs' shapes {[tuple(t.shape) for t in sent]} must be "
                             f"send_shapes {self.send_shapes}.")
        steps = [(True, p, t) for p, t in zip(self.send_rank_ids, sent)]
        steps += [(False, p, (s, self.recv_type)) for p, s in zip(self.recv_rank_ids, self.recv_shapes)]
        return tuple(g for g in _peer_exchange(self.name, steps, self.group) if g is not None)


__all__ += ["BatchISendIRecv", "NeighborExchange"]
