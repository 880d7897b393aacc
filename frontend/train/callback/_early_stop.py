"""``EarlyStopping``: stop training when a monitored value stops improving."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, check_int

from ..serialization import load_param_into_net
from ...common.parameter import Parameter
from ._callback import Callback, RunContext, handle_loss

__all__ = ["EarlyStopping"]

# monitors for which smaller is better when mode="auto" (MindSpore's list)
SMALLER_BETTER = ("hausdorff_distance", "mae", "mse", "loss", "perplexity", "mean_surface_distance",
                  "root_mean_square_distance", "eval_loss")


class EarlyStopping(Callback):
    """At each epoch end, compare ``monitor`` with the best value so far: "loss" is the last step's
    training loss; "eval_loss" and metric names come from the evaluation ``Model.fit`` runs after the
    epoch. An improvement (by more than ``min_delta``; and past ``baseline`` when given) resets the
    wait; after ``patience`` epochs without one, training stops (and ``restore_best_weights`` puts the
    best epoch's parameters back)."""

    def __init__(self, monitor: str = "eval_loss", min_delta: float = 0, patience: int = 0, verbose: bool = False,
                 mode: str = "auto", baseline: float | None = None, restore_best_weights: bool = False):
        super().__init__()
        if not isinstance(monitor, str):
            raise InvalidParamError(f"EarlyStopping: monitor must be a str, got {monitor!r}")
        if isinstance(min_delta, bool) or not isinstance(min_delta, (int, float)):
            raise InvalidParamError(f"EarlyStopping: min_delta must be a number, got {min_delta!r}")
        if mode not in ("auto", "min", "max"):
            raise InvalidParamError(f"EarlyStopping: mode should be 'auto', 'min' or 'max', but got {mode!r}")
        if baseline is not None and (isinstance(baseline, bool) or not isinstance(baseline, (int, float))):
            raise InvalidParamError(f"EarlyStopping: baseline must be a number or None, got {baseline!r}")
        for name, flag in (("verbose", verbose), ("restore_best_weights", restore_best_weights)):
            if not isinstance(flag, bool):
                raise InvalidParamError(f"EarlyStopping: {name} must be a bool, got {flag!r}")
        self.monitor = monitor
        self.min_delta = abs(min_delta)
        self.patience = check_int(patience, "EarlyStopping: patience", minimum=0)
        self.verbose = verbose
        self.mode = mode
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self._smaller = mode == "min" or (mode == "auto" and monitor in SMALLER_BETTER)
        self._reset()

    def is_improvement(self, a: Any, b: Any) -> bool:
        return bool(np.less(a, b - self.min_delta) if self._smaller else np.greater(a, b + self.min_delta))

    def on_train_begin(self, run_context: RunContext) -> None:
        self._reset()

    def _reset(self) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf if self._smaller else -np.inf
        self.best_weights_param_dict: dict[str, Parameter] | None = None

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        current = self._get_monitor_value(cb_params)
        if current is None:
            return
        if self.restore_best_weights and self.best_weights_param_dict is None:
            self.best_weights_param_dict = _snapshot(cb_params.train_network)
        self.wait += 1
        if self.is_improvement(current, self.best):
            self.best = current
            if self.restore_best_weights:
                self.best_weights_param_dict = _snapshot(cb_params.train_network)
            if self.baseline is None or self.is_improvement(current, self.baseline):
                self.wait = 0
        if self.wait >= self.patience:
            self.stopped_epoch = cb_params.get("cur_epoch_num")
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights_param_dict is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch.")
                load_param_into_net(cb_params.train_network, self.best_weights_param_dict)

    def on_train_end(self, run_context: RunContext) -> None:
        if self.stopped_epoch > 0 and self.verbose:
            print("Epoch %05d: early stopping" % self.stopped_epoch)

    def _get_monitor_value(self, cb_params: dict) -> np.ndarray | None:
        candidates: dict = {}
        if self.monitor == "loss":
            value = handle_loss(cb_params.get("net_outputs"))
            if hasattr(value, "asnumpy"):
                value = value.asnumpy()
        else:
            candidates = cb_params.get("eval_results", {})
            value = candidates.get(self.monitor)
        if value is None:
            warnings.warn(f"Early stopping is conditioned on {self.monitor}, which is not available. Available "
                          f"choices are: {sorted({'loss', *candidates})}", stacklevel=2)
            return None
        value = np.array(value)
        if value.shape != ():
            raise InvalidParamError(f"EarlyStopping only supports scalar monitor now; {self.monitor} has shape "
                                    f"{value.shape}")
        return value


def _snapshot(network: Any) -> dict[str, Parameter]:
    """A copy of the network's parameters (host values), for restore_best_weights."""
    return {name: Parameter(p.asnumpy(), name=name, requires_grad=p.requires_grad)
            for name, p in network.parameters_and_names()}
