"""``LossMonitor``: prints the training loss, MindSpore's line ``epoch: E step: S, loss is L``."""
from __future__ import annotations

import numpy as np

from ascendemu.errors import check_int

from ._callback import Callback, RunContext, handle_loss

__all__ = ["LossMonitor"]


class LossMonitor(Callback):
    """Print the loss every ``per_print_times`` steps (0: never); in dataset sink mode, at the end of
    each sink (the last step's loss). ``S`` is the step within the epoch. A NaN or infinite loss stops
    the training with MindSpore's ValueError. In ``Model.fit`` it also prints the evaluation result
    after each epoch that was evaluated."""

    def __init__(self, per_print_times: int = 1):
        super().__init__()
        self._per_print_times = check_int(per_print_times, "LossMonitor: per_print_times", minimum=0)
        self._last_print_time = 0

    def step_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        cur_epoch_num = cb_params.get("cur_epoch_num", 1)
        loss = handle_loss(cb_params.net_outputs)
        cur_step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        if isinstance(loss, float) and (np.isnan(loss) or np.isinf(loss)):
            raise ValueError(f"In epoch: {cur_epoch_num} step: {cur_step_in_epoch}, loss is NAN or INF, training "
                             f"process cannot continue, terminating training.")
        if self._per_print_times != 0:
            # a new run (another train() call) counts its steps from 1 again: step back as MindSpore does
            while cb_params.cur_step_num <= self._last_print_time:
                self._last_print_time -= max(self._per_print_times,
                                             cb_params.batch_num if cb_params.get("dataset_sink_mode") else 1)
        if self._per_print_times != 0 and cb_params.cur_step_num - self._last_print_time >= self._per_print_times:
            self._last_print_time = cb_params.cur_step_num
            print("epoch: %s step: %s, loss is %s" % (cur_epoch_num, cur_step_in_epoch, loss), flush=True)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        metrics = run_context.original_args().get("metrics")
        if metrics:
            print("Eval result: epoch %d, metrics: %s" % (run_context.original_args().cur_epoch_num, metrics))
