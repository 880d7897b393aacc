"""``mindspore.mint.distributed.distributed``: mint's PyTorch-style distributed functions. MindSpore's
are copies of ``mindspore.ops``'s communication functions with the same signatures and semantics, so
the served ones are the very functions of ``ops.function.comm_func`` (one implementation), together
with ``gather``/``scatter`` (which ``mindspore.ops`` names for its array ops)."""
from __future__ import annotations

from typing import Any

from ...ops.function import comm_func
from ...ops.operations.comm_ops import ReduceOp
from ...unsupported import unsupported

# mint.distributed's names (MindSpore's ``__all__``), each comm_func's function of that name.
NAMES = ("init_process_group", "destroy_process_group", "get_rank", "get_world_size", "new_group", "get_backend",
         "get_global_rank", "get_process_group_ranks", "get_group_rank", "all_reduce", "all_gather_into_tensor",
         "all_gather_into_tensor_uneven", "all_to_all", "all_to_all_single", "reduce_scatter_tensor",
         "reduce_scatter_tensor_uneven", "isend", "irecv", "send", "recv", "send_object_list", "recv_object_list",
         "gather", "scatter", "all_gather", "reduce_scatter", "barrier", "broadcast", "reduce", "P2POp",
         "batch_isend_irecv", "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list",
         "is_available", "is_initialized")
globals().update({name: getattr(comm_func, name) for name in NAMES})
__all__ = [*NAMES, "ReduceOp"]


def __getattr__(name: str) -> Any:
    raise unsupported("mint.distributed.distributed", name, __all__)
