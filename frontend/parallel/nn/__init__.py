"""``mindspore.parallel.nn``: the pipeline cells of MindSpore 2.x's parallel API (``Pipeline``, its
``PipelineCell``, ``PipelineGradReducer``); the training wrappers they build on are ``nn.wrap``'s."""
from __future__ import annotations

from . import parallel_cell_wrapper, parallel_grad_reducer
from .parallel_cell_wrapper import Pipeline, PipelineCell
from .parallel_grad_reducer import PipelineGradReducer

__all__ = [*parallel_cell_wrapper.__all__, *parallel_grad_reducer.__all__]
