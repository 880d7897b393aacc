"""``TimeMonitor``: prints the epoch time, MindSpore's line
``Train epoch time: T ms, per step time: P ms``."""
from __future__ import annotations

import time

from ascendemu.errors import InvalidParamError, check_int

from ._callback import Callback, RunContext

__all__ = ["TimeMonitor"]


class TimeMonitor(Callback):
    """Print the wall time of each epoch (training and evaluation) and per step; the steps are the
    run's ``batch_num`` (``data_size`` when there is none). ``data_time=True`` adds the host time
    spent fetching data between steps (not sink mode). Times are the host's wall clock, as in
    MindSpore, not the simulated device's."""

    def __init__(self, data_size: int | None = None, data_time: bool = False):
        super().__init__()
        if data_size is not None:
            check_int(data_size, "TimeMonitor: data_size", minimum=1)
        if not isinstance(data_time, bool):
            raise InvalidParamError(f"TimeMonitor: data_time must be a bool, got {data_time!r}")
        self.data_size = data_size
        self.data_time = data_time
        self.epoch_time = time.time()
        self.data_time_sum = 0.0
        self.data_time_start = 0.0

    def _measures_data(self, run_context: RunContext) -> bool:
        return self.data_time and not run_context.original_args().get("dataset_sink_mode", False)

    def on_train_step_begin(self, run_context: RunContext) -> None:
        if self._measures_data(run_context):
            self.data_time_sum += time.time() - self.data_time_start

    def on_train_step_end(self, run_context: RunContext) -> None:
        if self._measures_data(run_context):
            self.data_time_start = time.time()

    def epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_time = time.time()
        if self._measures_data(run_context):
            self.data_time_sum = 0.0
            self.data_time_start = time.time()

    def epoch_end(self, run_context: RunContext) -> None:
        epoch_ms = (time.time() - self.epoch_time) * 1000
        cb_params = run_context.original_args()
        step_size = self.data_size
        batch_num = cb_params.get("batch_num")
        if isinstance(batch_num, int) and batch_num > 0:
            step_size = batch_num
        if step_size is None:
            raise InvalidParamError("TimeMonitor: the run has no batch_num; give TimeMonitor(data_size=steps per "
                                    "epoch)")
        log = "{} epoch time: {:5.3f} ms, per step time: {:5.3f} ms".format(
            cb_params.get("mode", "").title(), epoch_ms, epoch_ms / step_size)
        if self._measures_data(run_context):
            log += " (data time: {:5.3f} ms)".format(self.data_time_sum * 1000 / step_size)
        print(log, flush=True)
