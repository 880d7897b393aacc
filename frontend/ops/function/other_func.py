"""``mindspore.ops.function.other_func``: MindSpore's miscellaneous functional forms. Here:
``ops.rotary_position_embedding`` (the Ascend RotaryPositionEmbedding kernel as a composition)."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import ArgumentError, InvalidParamError

from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..composite_op import install_composite_functions
from ..operations.array_ops import Concat, Reshape, Split
from ..operations.nn_ops import FUSED_FLOATS, _dtype_in, _typed
from ..primitive import _tensor

# rotary_position_embedding's modes: 0 rotates the two halves of D (GPT-NeoX), 1 adjacent pairs (GPT-J)
ROTATE_HALF, ROTATE_INTERLEAVED = 0, 1


def rotary_position_embedding(x: Any, cos: Any, sin: Any, mode: int = 0) -> Tensor:
    """``x * cos + rotate(x) * sin`` for 4-D x (cos/sin broadcast to it, x's dtype): ``rotate`` maps
    halves (a, b) to (-b, a) (mode 0) or each pair (x0, x1) to (-x1, x0) (mode 1); D must be even."""
    owner = "RotaryPositionEmbedding"
    x, cos, sin = _tensor(x), _tensor(cos), _tensor(sin)
    _dtype_in(owner, "x", x, FUSED_FLOATS)
    for name, t in (("cos", cos), ("sin", sin)):
        if t.dtype != x.dtype:
            raise ArgumentError(f"For '{owner}', '{name}' must have the dtype of 'x' ({x.dtype}), but got {t.dtype}.")
    mode = _typed(owner, "mode", mode, (int,))
    if mode not in (ROTATE_HALF, ROTATE_INTERLEAVED):
        raise InvalidParamError(f"{owner}: mode={mode} must be 0 (rotate half) or 1 (rotate interleaved)")
    if x.ndim != 4 or x.shape[-1] % 2:
        raise InvalidParamError(f"{owner}: x must be 4-D with an even last dimension, got shape {x.shape}")
    if mode == ROTATE_HALF:
        a, b = Split(-1, 2)(x)
        rotated = Concat(-1)((-b, a))
    else:
        pairs = Reshape()(x, tuple(x.shape[:-1]) + (x.shape[-1] // 2, 2))
        a, b = Split(-1, 2)(pairs)
        rotated = Reshape()(Concat(-1)((-b, a)), tuple(x.shape))
    return x * cos + rotated * sin


install_composite_functions(globals(), "mindspore.ops.function.other_func")

__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.other_func", name, __all__)








# ---- collectives ----
from ..operations.other_ops import MoveTo  # noqa: E402


def move_to(input: Any, to: str = "CPU", blocking: bool = True) -> Tensor:  # noqa: A002
    """``input`` copied to the device ``to`` ("Ascend" or "CPU"); see ``ops.MoveTo``."""
    return MoveTo()(input, to, blocking)


__all__ += ["move_to"]


import numpy as np  # noqa: E402

from ...communication.management import get_group_size as _group_size  # noqa: E402
from ..operations.comm_ops import AllGather as _AllGather  # noqa: E402
from ..operations.comm_ops import ReduceScatter as _ReduceScatter  # noqa: E402
from ..operations.math_ops import MatMul as _MatMul  # noqa: E402

# What MindSpore's fused communication matmuls (Ascend kernels) accept: the dtypes, the ranks of the
# group, and the range of the shared dimension k
FUSED_COMM_DTYPES = ("float16", "bfloat16")
FUSED_COMM_WORLD_SIZES = (2, 4, 8)
FUSED_COMM_K_RANGE = (256, 65535)


def _fused_comm_checks(name: str, input: Any, x2: Any, group: Any, world_size: Any, bias: Any, comm_turn: Any,
                       trans_input: Any, trans_x2: Any) -> int:
    """MindSpore's checks of all_gather_matmul / matmul_reduce_scatter; returns k."""
    for what, value, kind in (("input", input, Tensor), ("x2", x2, Tensor), ("group", group, str),
                              ("world_size", world_size, int), ("comm_turn", comm_turn, int),
                              ("trans_input", trans_input, bool), ("trans_x2", trans_x2, bool)):
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"For '{name}', the '{what}' must be {kind.__name__}, but got {type(value).__name__}.")
    if input.dtype.name not in FUSED_COMM_DTYPES or x2.dtype != input.dtype:
        raise RuntimeError(f"For '{name}', 'input' and 'x2' must both be float16 or bfloat16, but got "
                           f"{input.dtype} and {x2.dtype}.")
    if input.ndim != 2 or x2.ndim != 2:
        raise RuntimeError(f"For '{name}', 'input' and 'x2' must be 2-D, but got {input.shape} and {x2.shape}.")
    k = input.shape[1]
    if (x2.shape[1] if trans_x2 else x2.shape[0]) != k:
        raise RuntimeError(f"For '{name}', the k axes of 'input' {input.shape} and 'x2' {x2.shape} must be equal.")
    if not FUSED_COMM_K_RANGE[0] <= k < FUSED_COMM_K_RANGE[1]:
        raise RuntimeError(f"For '{name}', k must be in [{FUSED_COMM_K_RANGE[0]}, {FUSED_COMM_K_RANGE[1]}), but got "
                           f"{k}.")
    for what, value, only in (("bias", bias, None), ("comm_turn", comm_turn, 0), ("trans_input", trans_input, False)):
        if value is not only and value != only:
            raise RuntimeError(f"For '{name}', '{what}' only supports {only!r}, but got {value!r}.")
    if world_size not in FUSED_COMM_WORLD_SIZES or world_size != _group_size(group):
        raise RuntimeError(f"For '{name}', 'world_size' must be the size of group {group!r} ({_group_size(group)}) "
                           f"and one of {FUSED_COMM_WORLD_SIZES}, but got {world_size}.")
    return k


def all_gather_matmul(input: Any, x2: Any, group: str, world_size: int, *, bias: Any = None,  # noqa: A002
                      gather_index: int = 0, gather_output: bool = True, comm_turn: int = 0,
                      trans_input: bool = False, trans_x2: bool = False) -> tuple[Tensor, Tensor]:
    """``(allgather(input) @ x2, allgather(input))``: an AllGather along dimension 0, then a MatMul (the
    emulated device runs them one after the other; Ascend pipelines them in one fused kernel). Without
    ``gather_output`` the second is an empty tensor."""
    _fused_comm_checks("all_gather_matmul", input, x2, group, world_size, bias, comm_turn, trans_input, trans_x2)
    if not isinstance(gather_output, bool):
        raise TypeError(f"For 'all_gather_matmul', the 'gather_output' must be bool, but got "
                        f"{type(gather_output).__name__}.")
    if gather_index != 0:
        raise RuntimeError(f"For 'all_gather_matmul', 'gather_index' only supports 0, but got {gather_index!r}.")
    gathered = _AllGather(group)(input)
    output = _MatMul(transpose_b=trans_x2)(gathered, x2)
    return output, (gathered if gather_output else Tensor(np.zeros(0, np.float32), input.dtype))


def matmul_reduce_scatter(input: Any, x2: Any, group: str, world_size: int, *,  # noqa: A002
                          reduce_op: str = "sum", bias: Any = None, comm_turn: int = 0, trans_input: bool = False,
                          trans_x2: bool = False) -> Tensor:
    """``reducescatter(input @ x2)``: a MatMul, then a ReduceScatter(sum) along dimension 0 (fused on
    Ascend, one after the other here)."""
    _fused_comm_checks("matmul_reduce_scatter", input, x2, group, world_size, bias, comm_turn, trans_input,
                       trans_x2)
    if reduce_op != "sum":
        raise RuntimeError(f"For 'matmul_reduce_scatter', 'reduce_op' only supports 'sum', but got {reduce_op!r}.")
    if input.shape[0] % world_size:
        raise RuntimeError(f"For 'matmul_reduce_scatter', the m axis of 'input' {input.shape} must be divisible by "
                           f"world_size {world_size}.")
    return _ReduceScatter("sum", group)(_MatMul(transpose_b=trans_x2)(input, x2))


__all__ += ["all_gather_matmul", "matmul_reduce_scatter"]


# ---- fused and sparse optimizers, inner ops ----
import numpy as _np  # noqa: E402

from ...common import dtype as _mstype  # noqa: E402
from ..operations.array_ops import Cast as _Cast, Gather as _Gather, UnsortedSegmentSum as _SegmentSum  # noqa: E402
from ..operations.math_ops import FloorDiv as _FloorDiv, FloorMod as _FloorMod  # noqa: E402
from .array_func import sort as _sort  # noqa: E402
from .math_func import cumsum as _cumsum  # noqa: E402


def _check_routing_int(name: str, value: Any, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For 'MoeInitRoutingV2', the '{name}' must be an int, but got {type(value).__name__}.")
    if value < low:
        raise ValueError(f"For 'MoeInitRoutingV2', the '{name}' must be >= {low}, but got {value}.")
    return value


def moe_init_routing_v2(x: Any, expert_idx: Any, active_num: int, expert_capacity: int, expert_num: int,
                        drop_pad_mode: int, expert_tokens_count_or_cumsum_flag: int,
                        expert_tokens_before_capacity_flag: bool) -> tuple:
    """MoE token routing: the NUM_ROWS * K (token, expert) pairs of ``expert_idx`` sorted by expert
    (stably, in row-major pair order); ``expanded_x`` holds each pair's token row in that order (the first
    ``active_num`` rows when active_num > 0), or, with drop_pad_mode 1, each expert's first
    ``expert_capacity`` pairs in an (expert_num, expert_capacity, H) block padded with zeros;
    ``expanded_row_idx[pair]`` is where that pair went (-1: dropped). The third output, where asked for,
    is the tokens per expert (flag 2), their running sum (flag 1), or per expert before the drop."""
    x, idx = _tensor(x), _tensor(expert_idx)
    if x.ndim != 2 or idx.ndim != 2 or idx.shape[0] != x.shape[0]:
        raise ValueError(f"For 'MoeInitRoutingV2', 'x' must be (NUM_ROWS, H) and 'expert_idx' (NUM_ROWS, K), but "
                         f"got {list(x.shape)} and {list(idx.shape)}.")
    if str(idx.dtype) not in ("Int32", "int32"):
        raise TypeError(f"For 'MoeInitRoutingV2', the 'expert_idx' must be int32, but got {idx.dtype}.")
    active_num = _check_routing_int("active_num", active_num)
    capacity = _check_routing_int("expert_capacity", expert_capacity)
    experts = _check_routing_int("expert_num", expert_num)
    if drop_pad_mode not in (0, 1):
        raise ValueError(f"For 'MoeInitRoutingV2', the 'drop_pad_mode' must be 0 or 1, but got {drop_pad_mode}.")
    if expert_tokens_count_or_cumsum_flag not in (0, 1, 2):
        raise ValueError(f"For 'MoeInitRoutingV2', the 'expert_tokens_count_or_cumsum_flag' must be 0, 1 or 2, "
                         f"but got {expert_tokens_count_or_cumsum_flag}.")
    if drop_pad_mode == 1 and not 0 < capacity <= x.shape[0]:
        raise ValueError(f"For 'MoeInitRoutingV2', the 'expert_capacity' must be in (0, {x.shape[0]}] when "
                         f"'drop_pad_mode' is 1, but got {capacity}.")
    pairs, k = idx.shape[0] * idx.shape[1], idx.shape[1]
    flat = Reshape()(idx, (pairs,))
    # one sort key per pair: expert * pairs + pair (a stable order by expert)
    order = Tensor(_np.arange(pairs, dtype=_np.int32))
    keys = _sort(flat * pairs + order)[0]
    sorted_pair, sorted_expert = _FloorMod()(keys, pairs), _FloorDiv()(keys, pairs)
    inverse = _sort(sorted_pair)[1]                       # inverse[pair] = its place in the sorted order
    counts = _SegmentSum()(Tensor(_np.ones(pairs, _np.float32)), sorted_expert, experts)    # tokens per expert
    rows = _Gather()(x, _FloorDiv()(sorted_pair, k), 0)
    third = None
    if drop_pad_mode == 0:
        expanded_x = rows if active_num == 0 else rows[:min(active_num, pairs)]
        expanded_row_idx = inverse
        if expert_tokens_count_or_cumsum_flag:
            tally = _cumsum(counts, 0) if expert_tokens_count_or_cumsum_flag == 1 else counts
            third = _Cast()(tally, _mstype.int32)
    else:
        starts = _cumsum(counts, 0) - counts
        rank = _Cast()(order, _mstype.float32) - _Gather()(starts, sorted_expert, 0)
        kept = rank < capacity
        slot = _Cast()(sorted_expert * capacity + _Cast()(rank, _mstype.int32), _mstype.int32)
        kept = _Cast()(kept, _mstype.int32)
        dest = slot * kept + (kept - 1)                                   # a dropped pair's place is -1
        block = _SegmentSum()(rows, dest + (1 - kept) * (experts * capacity + 1), experts * capacity)  # dropped: none
        expanded_x = Reshape()(block, (experts, capacity, x.shape[1]))
        expanded_row_idx = _Gather()(dest, inverse, 0)
        if expert_tokens_before_capacity_flag:
            third = _Cast()(counts, _mstype.int32)
    return (expanded_x, expanded_row_idx) if third is None else (expanded_x, expanded_row_idx, third)


__all__ += ["moe_init_routing_v2"]
