"""``mindspore.nn.wrap``: the training wrappers (``cell_wrapper``), loss scaling (``loss_scale``) and data
parallel's gradient reducer (``grad_reducer``), one MindSpore file each, re-exported as MindSpore's package does."""
from __future__ import annotations

from . import cell_wrapper, grad_reducer, loss_scale
from .cell_wrapper import (ForwardValueAndGrad, GradAccumulationCell, MicroBatchInterleaved, ParameterUpdate,
                           PipelineCell, TrainOneStepCell, VirtualDatasetCellTriple, WithEvalCell, WithGradCell, WithLossCell)
from .grad_reducer import DistributedGradReducer, PipelineGradReducer
from ..layer.timedistributed import TimeDistributed  # noqa: F401  (MindSpore's nn.wrap re-exports it)
from .loss_scale import (DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell,
                         all_finite)

__all__ = [*cell_wrapper.__all__, *loss_scale.__all__, *grad_reducer.__all__]
