"""``mindspore.parallel.nn.parallel_grad_reducer``: ``PipelineGradReducer``, the one of ``nn.wrap.grad_reducer``
(MindSpore 2.10 defines it in both places)."""
from __future__ import annotations

from ...nn.wrap.grad_reducer import PipelineGradReducer

__all__ = ["PipelineGradReducer"]
