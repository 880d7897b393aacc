"""The evaluation loop of ``mindspore.Model`` (``Model.eval`` and ``Model.fit``'s validation), and the
sink helper training shares with it.

A ``Model`` owns one ``ModelEvaluator`` built from its eval network, eval indexes and metrics; split
out of ``Model`` so the class holds the training concern and this module the evaluation one.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ..common.api import run_sunk
from ..context import GRAPH_MODE, get_context
from ..nn import Cell
from ..common.tensor import Tensor
from .callback._callback import CallbackManager, InternalCallbackParam, RunContext
from .metrics import Loss


class ModelEvaluator:
    """One pass of an eval network over a dataset, feeding the metrics; ``eval_indexes`` (None or the
    positions of loss, prediction and label in the network's outputs) as ``Model``'s."""

    def __init__(self, network: Cell | None, eval_indexes: list[int] | None, metric_fns: dict):
        self._network = network
        self._eval_indexes = eval_indexes
        self._metric_fns = metric_fns

    def run(self, valid_dataset: Any, manager: CallbackManager, cb_params: InternalCallbackParam,
            dataset_sink_mode: bool, add_eval_loss: bool = False) -> dict:
        """One pass over ``valid_dataset``. Sunk, each step is a sink of one (MindSpore's eval loop size)."""
        network = self._network
        cb_params.eval_network = network
        cb_params.valid_dataset = valid_dataset
        cb_params.batch_num = valid_dataset.get_dataset_size()
        cb_params.mode = "eval"
        cb_params.cur_step_num = 0
        cb_params.dataset_sink_mode = dataset_sink_mode
        sunk = dataset_sink_mode and get_context("mode") == GRAPH_MODE
        for metric in self._metric_fns.values():
            metric.clear()
        eval_loss = Loss() if add_eval_loss else None
        run_context = RunContext(cb_params)
        with manager as list_callback:
            list_callback.on_eval_begin(run_context)
            list_callback.on_eval_epoch_begin(run_context)
            network.set_train(False)
            for element in valid_dataset.create_tuple_iterator(num_epochs=1):
                cb_params.cur_step_num += 1
                cb_params.eval_dataset_element = element
                list_callback.on_eval_step_begin(run_context)
                outputs = run_sink(network, [element]) if sunk else network(*element)
                cb_params.net_outputs = outputs
                list_callback.on_eval_step_end(run_context)
                self._update_metrics(outputs)
                if eval_loss is not None:
                    eval_loss.update(outputs[self._eval_indexes[0]])
                if run_context.get_stop_requested():
                    break
            list_callback.on_eval_epoch_end(run_context)
            metrics = {name: _plain(metric.eval()) for name, metric in self._metric_fns.items()}
            cb_params.metrics = metrics
            if eval_loss is not None:
                cb_params.eval_results = dict(metrics, eval_loss=_plain(eval_loss.eval()))
            list_callback.on_eval_end(run_context)
        return metrics

    def _update_metrics(self, outputs: Any) -> None:
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        if not isinstance(outputs, tuple):
            raise InvalidParamError(f"Model.eval: the eval network must return a Tensor or a tuple, got "
                                    f"{type(outputs).__name__}")
        if self._eval_indexes is not None and len(outputs) < 3:
            raise InvalidParamError(f"Model.eval: with eval_indexes the eval network must return at least 3 "
                                    f"outputs (loss, prediction, label), got {len(outputs)}")
        for metric in self._metric_fns.values():
            if self._eval_indexes is None:
                metric.update(*outputs)
            elif isinstance(metric, Loss):
                metric.update(outputs[self._eval_indexes[0]])
            else:
                metric.update(outputs[self._eval_indexes[1]], outputs[self._eval_indexes[2]])


def run_sink(network: Cell, batches: list[list[Tensor]]) -> Any:
    """One sink on the device; batches whose shapes differ from the one before (a short last batch)
    start a sunk loop of their own, each on its own captured graph. The last step's outputs."""
    outputs = None
    for _, group in itertools.groupby(batches, key=lambda b: tuple((t.shape, t.dtype) for t in b)):
        outputs = run_sunk(network, list(group), network._jit_level())
    return outputs


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number it is: a metrics dict prints as MindSpore's does
    (``{'acc': 0.55}``) whatever numpy prints for its scalars."""
    return value.item() if isinstance(value, np.generic) else value
