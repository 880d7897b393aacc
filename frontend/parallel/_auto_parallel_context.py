"""``mindspore.parallel._auto_parallel_context``: the getters and setters behind
``set_auto_parallel_context``, as the model zoo's scripts call them (``auto_parallel_context().X()``)."""
from __future__ import annotations

from typing import Any

from .. import context
from ._utils import _get_device_num

__all__ = ["auto_parallel_context"]


class _AutoParallelContext:
    """A view of the one auto-parallel context (``frontend.context``); it holds no state of its own."""

    def get_parallel_mode(self) -> str:
        return context.get_auto_parallel_context("parallel_mode")

    def get_device_num(self) -> int:
        return _get_device_num()

    def get_device_num_is_set(self) -> bool:
        return context._device_num_set[0]

    def get_gradients_mean(self) -> bool:
        return context.get_auto_parallel_context("gradients_mean")

    def get_pipeline_stages(self) -> int:
        return context.get_auto_parallel_context("pipeline_stages")

    def get_enable_parallel_optimizer(self) -> bool:
        return context.get_auto_parallel_context("enable_parallel_optimizer")

    def get_grad_accumulation_shard(self) -> bool:
        return context.get_auto_parallel_context("parallel_optimizer_config").get("gradient_accumulation_shard", False)

    def get_parallel_optimizer_threshold(self) -> int:
        """In KB; -1 (unset) means MindSpore's default, 64."""
        return context.get_auto_parallel_context("parallel_optimizer_config").get("parallel_optimizer_threshold", -1)

    def get_optimizer_weight_shard_size(self) -> int:
        return context.get_auto_parallel_context("parallel_optimizer_config").get("optimizer_weight_shard_size", -1)

    def get_all_reduce_fusion_split_indices(self, group: str = "") -> list[int]:
        return context.get_auto_parallel_context("all_reduce_fusion_config")

    def set_all_reduce_fusion_split_indices(self, indices: Any, group: str = "") -> None:
        context.set_auto_parallel_context(all_reduce_fusion_config=indices)


_CONTEXT = _AutoParallelContext()


def auto_parallel_context() -> _AutoParallelContext:
    return _CONTEXT
