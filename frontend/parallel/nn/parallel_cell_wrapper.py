"""``mindspore.parallel.nn.parallel_cell_wrapper``: ``Pipeline`` and its ``PipelineCell``, which refuse a
``stage_config`` entry that names no cell (KeyError) where ``nn.PipelineCell`` prints it and goes on."""
from __future__ import annotations

from ...nn.cell import Cell
from ...nn.wrap import cell_wrapper

__all__ = ["PipelineCell", "Pipeline"]


class PipelineCell(cell_wrapper.PipelineCell):
    """``nn.PipelineCell`` (micro-batches, summed outputs, the pipeline's 1F1B schedule) whose stage_config must
    name sub-cells of ``network``."""

    def __init__(self, network: Cell, micro_size: int, stage_config: dict | None = None,
                 segment_config: dict | None = None):
        super().__init__(network, micro_size)
        left = self._set_stages(stage_config)
        if left:
            raise KeyError(f"For 'PipelineCell', the argument 'stage_config' : {left} is not found in 'network' : "
                           f"{network}")


class Pipeline(PipelineCell):
    """MindSpore 2.x's name for the pipeline wrapper: the number of micro-batches and each cell's stage."""
