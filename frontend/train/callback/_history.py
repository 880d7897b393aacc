"""``History``: the network output and the metrics of each epoch, kept in ``history``."""
from __future__ import annotations

import numpy as np

from ...common.tensor import Tensor
from ._callback import Callback, RunContext

__all__ = ["History"]


class History(Callback):
    """``epoch`` = ``{"epoch": [1, 2, ...]}``; ``history["net_output"]`` = per epoch the mean of the last
    step's output (the first element of a tuple output), plus one list per metric when the epoch was
    evaluated (``Model.fit``). Like MindSpore's, it hooks the 1.x names, so an evaluation run resets
    and records too."""

    def __init__(self):
        super().__init__()
        self.history: dict[str, list] = {}
        self.epoch: dict[str, list] | None = None

    def begin(self, run_context: RunContext) -> None:
        self.epoch = {"epoch": []}

    def epoch_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        self.epoch["epoch"].append(cb_params.get("cur_epoch_num", 1))
        net_output = cb_params.net_outputs
        if isinstance(net_output, (tuple, list)) and isinstance(net_output[0], Tensor):
            net_output = net_output[0]
        if isinstance(net_output, Tensor):
            net_output = np.mean(net_output.asnumpy())
        current = {"net_output": net_output}
        current.update(cb_params.get("metrics") or {})
        for k, v in current.items():
            self.history.setdefault(k, []).append(v)
