"""``mindspore.Model``: train, evaluate and predict with a network, a loss, an optimizer and metrics.

The networks are MindSpore's: with an optimizer the training network is
``amp.build_train_network(network, optimizer, loss_fn, level=amp_level, ...)`` (TrainOneStepCell, or
TrainOneStepWithLossScaleCell when a loss scale manager asks for dropped overflow steps); without
one, ``WithLossCell(network, loss_fn)`` or the network itself. With metrics, the eval network is
``WithEvalCell(network, loss_fn)`` giving (loss, logits, label). Dataset columns are the network's
positional inputs: (data, label) when there is a loss function, else every column.

Dataset sink mode (GRAPH_MODE): each epoch is one sink of ``sink_size`` steps (default: the dataset
size; a smaller one makes an "epoch" that many steps and the data carries on where the previous sink
stopped). The sink runs as one loop on the device fed from a device data queue
(``common.api.run_sunk``); the step callbacks fire once per sink with ``cur_step_num`` advanced by
``sink_size`` and the last step's outputs. In PyNative mode the steps run one by one, as MindSpore
does there.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Iterator

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, check_int

from .. import amp
from ..context import GRAPH_MODE, ParallelMode, get_context
from ..nn import Cell, WithEvalCell, WithLossCell
from ..parallel._utils import _get_device_num, _get_parallel_mode
from ..common.tensor import Tensor
from ._model_eval import ModelEvaluator, run_sink
from .callback import ModelCheckpoint
from .callback import __all__ as INTERNAL_CALLBACKS
from .callback._callback import CallbackManager, InternalCallbackParam, RunContext
from .metrics import Loss, get_metric_fn, get_metrics  # noqa: F401  (Loss, get_metric_fn: as MindSpore's train.model)

# ParallelMode: zoo scripts (ResNet, ViT) import it from here, as MindSpore's train/model.py imports it
__all__ = ["Model", "ParallelMode"]

AMP_LEVELS = ("O0", "O1", "O2", "O3", "auto")
KWARGS = ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict", "acc_level")
BOOST_LEVELS = ("O1", "O2")       # the levels at which MindSpore's AutoBoost changes the training network


class Model:
    """High-level training and inference (see the module docstring). ``amp_level`` is
    ``build_train_network``'s level; ``kwargs``: ``loss_scale_manager``, ``keep_batchnorm_fp32``.
    ``boost_level`` "O1"/"O2" (MindSpore's boost algorithms) is not supported; with any other level
    ``boost_config_dict`` is ignored, as in MindSpore."""

    def __init__(self, network: Cell, loss_fn: Cell | None = None, optimizer: Cell | None = None,
                 metrics: dict | set | None = None, eval_network: Cell | None = None,
                 eval_indexes: list[int] | None = None, amp_level: str = "O0", boost_level: str = "O0",
                 **kwargs: Any):
        if not isinstance(network, Cell):
            raise InvalidParamError(f"Model: network must be a Cell, got {type(network).__name__}")
        for key in kwargs:
            if key not in KWARGS:
                raise InvalidParamError(f"Model: unknown argument {key!r}; kwargs may be {', '.join(KWARGS)}")
        boost_level = kwargs.get("acc_level", boost_level)
        if boost_level in BOOST_LEVELS:
            raise FeatureNotSupportedError(f"Model: boost_level={boost_level!r} (MindSpore's boost algorithms) is not "
                                           f"supported by the emulator; use boost_level='O0'")
        boost_level = "O0"        # as MindSpore's AutoBoost: any other level is O0, and boost_config_dict unused
        if amp_level not in AMP_LEVELS:
            raise InvalidParamError(f"Model: amp_level must be one of {AMP_LEVELS}, got {amp_level!r}")
        if optimizer is None and amp_level != "O0":
            raise InvalidParamError("Model: auto mixed precision needs an optimizer; set amp_level='O0' or give "
                                    "the optimizer")
        self._network, self._loss_fn, self._optimizer = network, loss_fn, optimizer
        self._amp_level, self._boost_level = amp_level, boost_level
        self._loss_scale_manager = kwargs.get("loss_scale_manager")
        self._loss_scale_manager_set = "loss_scale_manager" in kwargs
        self._keep_bn_fp32 = kwargs.get("keep_batchnorm_fp32")
        self._metrics = metrics
        self._train_network = self._build_train_network()
        self._train_network._get_attr_from_cell(network)
        self._metric_fns = get_metrics(metrics)
        self._eval_network, self._eval_indexes = self._build_eval_network(eval_network, eval_indexes)
        self._evaluator = ModelEvaluator(self._eval_network, self._eval_indexes, self._metric_fns)
        self._predict_network = network
        self._current_epoch_num = 0
        self._current_step_num = 0

    # ------------------------------------------------------------------ networks
    def _build_train_network(self) -> Cell:
        if self._loss_scale_manager is not None and self._optimizer is None:
            raise InvalidParamError("Model: loss_scale_manager needs an optimizer")
        if self._optimizer is not None:
            config = {}
            if self._loss_scale_manager_set:
                config["loss_scale_manager"] = self._loss_scale_manager
            if self._keep_bn_fp32 is not None:
                config["keep_batchnorm_fp32"] = self._keep_bn_fp32
            return amp.build_train_network(self._network, self._optimizer, self._loss_fn, level=self._amp_level,
                                           boost_level=self._boost_level, **config)
        if self._loss_fn is not None:
            return WithLossCell(self._network, self._loss_fn)
        return self._network

    def _build_eval_network(self, eval_network: Cell | None, eval_indexes: Any) -> tuple[Cell | None, Any]:
        if not self._metric_fns:
            return eval_network, None
        if eval_network is not None:
            if eval_indexes is not None and not (isinstance(eval_indexes, list) and len(eval_indexes) == 3):
                raise InvalidParamError(f"Model: eval_indexes must be None or a list of 3 positions (loss, "
                                        f"prediction, label), got {eval_indexes!r}")
            return eval_network, eval_indexes
        if self._loss_fn is None:
            raise InvalidParamError("Model: metrics need an eval_network, or a loss_fn from which Model builds "
                                    "one (WithEvalCell(network, loss_fn))")
        return WithEvalCell(self._network, self._loss_fn, self._amp_level in ("O2", "O3", "auto")), [0, 1, 2]

    @property
    def train_network(self) -> Cell:
        return self._train_network

    @property
    def eval_network(self) -> Cell | None:
        return self._eval_network

    @property
    def predict_network(self) -> Cell:
        return self._predict_network

    # ------------------------------------------------------------------ training
    def train(self, epoch: int, train_dataset: Any, callbacks: Any = None, dataset_sink_mode: bool = False,
              sink_size: int = -1, initial_epoch: int = 0) -> None:
        """Train ``epoch`` epochs (up to epoch ``epoch`` when resuming at ``initial_epoch``)."""
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch)

    def fit(self, epoch: int, train_dataset: Any, valid_dataset: Any = None, valid_frequency: int | list = 1,
            callbacks: Any = None, dataset_sink_mode: bool = False, valid_dataset_sink_mode: bool = False,
            sink_size: int = -1, initial_epoch: int = 0) -> None:
        """Train, and evaluate on ``valid_dataset`` after every ``valid_frequency``-th epoch (an int) or
        after the listed epochs; callbacks see ``metrics`` and ``eval_results`` (metrics + eval_loss)."""
        if not isinstance(valid_frequency, (int, list)) or isinstance(valid_frequency, bool):
            raise InvalidParamError(f"Model.fit: valid_frequency must be an int or a list of epochs, got "
                                    f"{valid_frequency!r}")
        if valid_dataset is not None and not self._metric_fns:
            raise InvalidParamError("Model.fit: a valid_dataset needs the Model's metrics")
        _check_bool("valid_dataset_sink_mode", valid_dataset_sink_mode)
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch,
                    (valid_dataset, valid_frequency, valid_dataset_sink_mode))

    def _train(self, epoch: int, train_dataset: Any, callbacks: Any, dataset_sink_mode: bool, sink_size: int,
               initial_epoch: int, valid_infos: tuple = (None, 1, False)) -> None:
        _check_bool("dataset_sink_mode", dataset_sink_mode)
        epoch = check_int(epoch, "Model.train: epoch", minimum=1)
        initial_epoch = check_int(initial_epoch, "Model.train: initial_epoch", minimum=0)
        if initial_epoch >= epoch:
            raise InvalidParamError(f"Model.train: epoch ({epoch}) must be bigger than initial_epoch ({initial_epoch})")
        dataset_size = train_dataset.get_dataset_size()
        if dataset_size == 0:
            raise InvalidParamError("Model.train: the dataset has no data; check the dataset files")
        sink_size = check_int(sink_size, "Model.train: sink_size", minimum=-1)
        if sink_size == 0:
            raise InvalidParamError("Model.train: sink_size must be -1 (the whole dataset) or positive, got 0")
        if sink_size == -1:
            sink_size = dataset_size
        manager = CallbackManager(callbacks)
        cb_params = InternalCallbackParam()
        cb_params.train_network = self._train_network
        cb_params.epoch_num = epoch - initial_epoch
        cb_params.batch_num = sink_size if dataset_sink_mode else dataset_size
        cb_params.mode = "train"
        cb_params.loss_fn = self._loss_fn
        cb_params.optimizer = self._optimizer
        cb_params.parallel_mode = _get_parallel_mode()
        cb_params.device_number = _get_device_num()
        cb_params.train_dataset = train_dataset
        cb_params.list_callback = list(manager._callbacks)
        cb_params.train_dataset_element = None
        cb_params.network = self._network
        cb_params.last_save_ckpt_step = None
        cb_params.latest_ckpt_file = None
        try:
            with manager as list_callback:
                if dataset_sink_mode:
                    self._train_dataset_sink_process(epoch, train_dataset, list_callback, cb_params, sink_size,
                                                     initial_epoch, valid_infos)
                else:
                    self._train_process(epoch, train_dataset, list_callback, cb_params, initial_epoch, valid_infos)
        except BaseException:
            for cb in manager._callbacks:
                if isinstance(cb, ModelCheckpoint) and cb._config.exception_save:
                    cb.save_breakpoint(self._train_network, self._current_epoch_num, self._current_step_num)
            raise

    def _train_process(self, epoch: int, train_dataset: Any, list_callback: CallbackManager,
                       cb_params: InternalCallbackParam, initial_epoch: int, valid_infos: tuple) -> None:
        """Not sunk: each step's batch goes from the host to the network, callbacks after each step."""
        iterator = train_dataset.create_tuple_iterator(num_epochs=epoch - initial_epoch)
        cb_params.cur_step_num = 0
        cb_params.dataset_sink_mode = False
        run_context = RunContext(cb_params)
        list_callback.on_train_begin(run_context)
        self._train_network.set_train(True)
        for i in range(initial_epoch, epoch):
            cb_params.cur_epoch_num = self._current_epoch_num = i + 1
            self._current_step_num = 0
            list_callback.on_train_epoch_begin(run_context)
            for element in iterator:
                if self._loss_fn is not None and len(element) != 2:
                    raise InvalidParamError(f"Model.train: with a loss_fn the dataset must give 2 columns (data, "
                                            f"label), but it gives {len(element)}; project() the two, or set "
                                            f"loss_fn=None and compute the loss in the network")
                cb_params.cur_step_num += 1
                self._current_step_num = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
                cb_params.train_dataset_element = element
                list_callback.on_train_step_begin(run_context)
                self._train_network.set_train(True)
                outputs = self._train_network(*element)
                cb_params.net_outputs = outputs
                manager = self._loss_scale_manager
                if manager is not None and manager.get_drop_overflow_update():
                    manager.update_loss_scale(bool(np.all(outputs[1].asnumpy())))
                list_callback.on_train_step_end(run_context)
                if run_context.get_stop_requested():
                    break
            self._eval_during_train(valid_infos, cb_params, list_callback)
            list_callback.on_train_epoch_end(run_context)
            cb_params.pop("metrics", None)
            cb_params.pop("eval_results", None)
            if run_context.get_stop_requested():
                break
        list_callback.on_train_end(run_context)

    def _train_dataset_sink_process(self, epoch: int, train_dataset: Any, list_callback: CallbackManager,
                                    cb_params: InternalCallbackParam, sink_size: int, initial_epoch: int,
                                    valid_infos: tuple) -> None:
        """Sunk: one sink of ``sink_size`` steps per epoch (see the module docstring)."""
        graph_mode = get_context("mode") == GRAPH_MODE
        stream = _batches(train_dataset, (epoch - initial_epoch) * sink_size)
        cb_params.cur_step_num = 0
        cb_params.dataset_sink_mode = True
        run_context = RunContext(cb_params)
        list_callback.on_train_begin(run_context)
        self._train_network.set_train(True)
        for i in range(initial_epoch, epoch):
            cb_params.cur_epoch_num = self._current_epoch_num = i + 1
            self._current_step_num = 0
            list_callback.on_train_epoch_begin(run_context)
            sink = list(itertools.islice(stream, sink_size))
            for step in ([sink] if graph_mode else [[b] for b in sink]):
                cb_params.cur_step_num += len(step)
                self._current_step_num = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
                cb_params.train_dataset_element = () if graph_mode else step[0]
                list_callback.on_train_step_begin(run_context)
                self._train_network.set_train(True)
                cb_params.net_outputs = run_sink(self._train_network, step) if graph_mode \
                    else self._train_network(*step[0])
                list_callback.on_train_step_end(run_context)
            self._eval_during_train(valid_infos, cb_params, list_callback)
            list_callback.on_train_epoch_end(run_context)
            cb_params.pop("metrics", None)
            cb_params.pop("eval_results", None)
            if run_context.get_stop_requested():
                break
        list_callback.on_train_end(run_context)

    def _eval_during_train(self, valid_infos: tuple, cb_params: InternalCallbackParam,
                           list_callback: CallbackManager) -> None:
        """fit: evaluate after this epoch if it is one of valid_frequency's, with the user's own callbacks
        (and TimeMonitor), then restore the training's callback parameters."""
        valid_dataset, frequency, sink_mode = valid_infos
        epoch = cb_params.cur_epoch_num
        if valid_dataset is None or not (epoch % frequency == 0 if isinstance(frequency, int) else epoch in frequency):
            return
        saved = {k: cb_params[k] for k in ("cur_step_num", "batch_num", "dataset_sink_mode", "net_outputs")}
        callbacks = [cb for cb in list_callback._callbacks
                     if type(cb).__name__ not in INTERNAL_CALLBACKS or type(cb).__name__ == "TimeMonitor"]
        self._evaluator.run(valid_dataset, CallbackManager(callbacks), cb_params, sink_mode, add_eval_loss=True)
        cb_params.mode = "train"
        cb_params.update(saved)
        self._train_network.set_train(True)

    # ------------------------------------------------------------------ evaluation and prediction
    def eval(self, valid_dataset: Any, callbacks: Any = None, dataset_sink_mode: bool = False) -> dict:
        """The metrics over one pass of ``valid_dataset``: ``{name: value}``."""
        _check_bool("dataset_sink_mode", dataset_sink_mode)
        if not self._metric_fns:
            raise InvalidParamError("Model.eval: the Model has no metrics; give Model(..., metrics={'acc'}) or a "
                                    "dict of Metric objects")
        manager = CallbackManager(callbacks)
        cb_params = InternalCallbackParam()
        cb_params.list_callback = list(manager._callbacks)
        cb_params.network = self._network
        return self._evaluator.run(valid_dataset, manager, cb_params, dataset_sink_mode)

    def predict(self, *predict_data: Any) -> Any:
        """The network's output on ``predict_data`` (inference mode)."""
        for i, data in enumerate(predict_data):
            if not isinstance(data, (Tensor, int, float, str, type(None))):
                raise InvalidParamError(f"Model.predict: input {i} is a {type(data).__name__}; give Tensors")
        self._predict_network.set_train(False)
        return self._predict_network(*predict_data)


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise InvalidParamError(f"Model: {name} must be a bool, got {value!r}")


def _batches(dataset: Any, count: int) -> Iterator[list[Tensor]]:
    """``count`` batches from ``dataset`` as one stream that carries on across passes (a sink may end
    inside a pass; the next one starts there)."""
    size = dataset.get_dataset_size()
    passes = math.ceil(count / size)
    iterator = dataset.create_tuple_iterator(num_epochs=passes)
    for _ in range(passes):
        yield from iterator

