"""``mindspore.nn.wrap.cell_wrapper``: the training wrappers WithLossCell, WithGradCell, WithEvalCell,
ForwardValueAndGrad, TrainOneStepCell, where MindSpore defines them (loss scaling: ``nn.wrap.loss_scale``).

``TrainOneStepCell(net_with_loss, optimizer)(*inputs)`` is MindSpore's training step: loss, gradients of
the loss with respect to the optimizer's parameters (sens = ``sens`` filled to the loss's shape), the
optimizer update; it returns the loss. Called in GRAPH_MODE it is captured whole, so forward, backward
and update are one graph (at O2 one sunk launch with one static memory plan).
"""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError
from ascendemu.graph.capture import current_tracer
from ascendemu.graph.parallel.pipeline import GradAccumulation, accumulating, micro_scope, note_micro_output

from ... import ops
from ...common.parameter import Parameter
from ...capture import tracer_value
from ...context import ParallelMode
from ...ops.composite.base import GradOperation
from ...parallel._utils import (_get_device_num, _get_enable_parallel_optimizer, _get_gradients_mean,
                               _get_parallel_mode, _get_parameter_broadcast)
from ..cell import Cell
from .grad_reducer import DistributedGradReducer

__all__ = ["WithLossCell", "WithGradCell", "WithEvalCell", "ForwardValueAndGrad", "TrainOneStepCell", "ParameterUpdate",
           "GradAccumulationCell", "PipelineCell", "MicroBatchInterleaved", "VirtualDatasetCellTriple"]


class WithLossCell(Cell):
    """loss_fn(backbone(data), label)."""

    def __init__(self, backbone: Cell, loss_fn: Cell):
        super().__init__(auto_prefix=False)
        self._backbone, self._loss_fn = backbone, loss_fn
        self._get_attr_from_cell(backbone)

    def construct(self, data: Any, label: Any) -> Any:
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self) -> Cell:
        return self._backbone


class WithEvalCell(Cell):
    """(loss, outputs, label) of the network on one batch, for evaluation."""

    def __init__(self, network: Cell, loss_fn: Cell, add_cast_fp32: bool = False):
        super().__init__(auto_prefix=False)
        self._network, self._loss_fn, self.add_cast_fp32 = network, loss_fn, bool(add_cast_fp32)
        self._get_attr_from_cell(network)

    def construct(self, data: Any, label: Any) -> Any:
        outputs = self._network(data)
        if self.add_cast_fp32:
            label = ops.cast(label, "float32")
            outputs = ops.cast(outputs, "float32")
        return self._loss_fn(outputs, label), outputs, label


class WithGradCell(Cell):
    """The weight gradients of network (with loss_fn appended when given)."""

    def __init__(self, network: Cell, loss_fn: Cell | None = None, sens: Any = None):
        super().__init__(auto_prefix=False)
        self.network = network if loss_fn is None else WithLossCell(network, loss_fn)
        self._get_attr_from_cell(network)
        self.weights = tuple(network.trainable_params())
        self.sens = sens
        self.grad = GradOperation(get_by_list=True, sens_param=sens is not None)

    def construct(self, *inputs: Any) -> Any:
        grad_fn = self.grad(self.network, self.weights)
        return grad_fn(*inputs, self.sens) if self.sens is not None else grad_fn(*inputs)


class ForwardValueAndGrad(Cell):
    """(network's output, gradients) with GradOperation's get_all / get_by_list / sens_param choices."""

    def __init__(self, network: Cell, weights: Any = None, get_all: bool = False, get_by_list: bool = False,
                 sens_param: bool = False):
        super().__init__(auto_prefix=False)
        if get_by_list and weights is None:
            raise InvalidParamError("ForwardValueAndGrad: get_by_list=True needs weights")
        self.network, self.weights, self.sens_param = network, weights, bool(sens_param)
        self._get_attr_from_cell(network)
        self.grad = GradOperation(get_all=get_all, get_by_list=get_by_list, sens_param=sens_param)

    def construct(self, *inputs: Any) -> Any:
        value = self.network(*(inputs[:-1] if self.sens_param else inputs))
        return value, self.grad(self.network, self.weights)(*inputs)


class TrainOneStepCell(Cell):
    """One training step: loss, weight gradients (sens-scaled), optimizer update; returns the loss.

    In DATA_PARALLEL (and HYBRID_PARALLEL) mode, as MindSpore's, the gradients pass a
    DistributedGradReducer (mean: the context's gradients_mean, degree: its device_num) before the
    optimizer, so every rank applies the update of the global batch; with ``parameter_broadcast`` the
    first call first gives every rank rank 0's parameters (MindSpore broadcasts them when it compiles
    the training graph).
    """

    def __init__(self, network: Cell, optimizer: Cell, sens: float | None = None, return_grad: bool = False):
        super().__init__(auto_prefix=False)
        if sens is not None and sens == 0:
            raise InvalidParamError("TrainOneStepCell: sens must not be 0 (every gradient would be 0)")
        self.network = network
        self._get_attr_from_cell(network)
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.grad = GradOperation(get_by_list=True, sens_param=True)
        self.sens = 1.0 if sens is None else float(sens)
        self.return_grad = bool(return_grad)
        self.parallel_mode = _get_parallel_mode()
        self.reducer_flag = self.parallel_mode in (ParallelMode.DATA_PARALLEL, ParallelMode.HYBRID_PARALLEL)
        self.grad_reducer = ops.identity
        if self.reducer_flag:
            self.mean = _get_gradients_mean()
            self.degree = _get_device_num()
            self.grad_reducer = DistributedGradReducer(self.weights, self.mean, self.degree)
        self._broadcast_pending = self.reducer_flag and _get_parameter_broadcast()

    def __call__(self, *inputs: Any) -> Any:
        if self._broadcast_pending and current_tracer() is None:
            self._broadcast_pending = False
            broadcast = ops.Broadcast(0)
            for param in self.parameters_dict().values():
                param.set_data(broadcast((param,))[0])
        return super().__call__(*inputs)

    def construct(self, *inputs: Any) -> Any:
        loss = self.network(*inputs)
        sens = ops.fill(loss.dtype, loss.shape, self.sens)
        grads = self.grad(self.network, self.weights)(*inputs, sens)
        grads = self.grad_reducer(grads)
        self.optimizer(grads)
        if self.return_grad:
            return loss, {w.name: g for w, g in zip(self.weights, grads)}
        return loss


class ParameterUpdate(Cell):
    """Assigns its input to ``param`` and returns the input (MindSpore's way to set a Parameter, e.g. a
    learning rate, from inside a graph)."""

    def __init__(self, param: Parameter):
        super().__init__(auto_prefix=False)
        if not isinstance(param, Parameter):
            raise TypeError(f"For 'ParameterUpdate', 'param' must be 'Parameter', but got {type(param)}.")
        self._param = param

    def construct(self, x: Any) -> Any:
        ops.assign(self._param, x)
        return x


def _micro_batch(inputs: tuple, index: int, count: int) -> tuple:
    """Micro batch ``index`` of ``count`` along axis 0 of every input (MindSpore's ``_MicroBatch``)."""
    out = []
    for x in inputs:
        rows = x.shape[0]
        if rows % count != 0:
            raise ValueError(f"For micro batch initialization, the 0th dimension shape of input({rows}) must be "
                             f"divided by micro size({count})")
        size = rows // count
        out.append(ops.narrow(x, 0, size * index, size))
    return tuple(out)


def _check_count(cell: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{cell}', the argument '{name}' must be integer, but got the type : {type(value)}.")
    if value <= 0:
        raise ValueError(f"For '{cell}', the argument '{name}' must be large than 0, but got {value}.")
    return value


def _adopt_micro_batched(cell: Cell, name: str, network: Any, micro_size: Any) -> None:
    """``cell`` (MindSpore's class ``name``: GradAccumulationCell, PipelineCell) wraps ``network`` over
    ``micro_size`` micro-batches, checked with MindSpore's messages, and takes on the network's attributes."""
    if not isinstance(network, Cell):
        raise TypeError(f"For '{name}', the argument 'network' must cell type, but got the type : {type(network)}.")
    cell.network = network
    cell.micro_size = _check_count(name, "micro_size", micro_size)
    cell._get_attr_from_cell(network)


class GradAccumulationCell(Cell):
    """The network's outputs summed over ``micro_size`` micro batches (axis 0 split evenly), so the
    gradient of the sum is the micro batches' gradients accumulated before one optimizer step (as
    MindSpore's cell computes on one device; pipeline's per-stage scheduling is auto-parallel's)."""

    def __init__(self, network: Cell, micro_size: int):
        super().__init__(auto_prefix=False)
        _adopt_micro_batched(self, "GradAccumulationCell", network, micro_size)

    def construct(self, *inputs: Any) -> Any:
        ret = None
        for i in range(self.micro_size):
            output = self.network(*_micro_batch(inputs, i, self.micro_size))
            ret = output if ret is None else ret + output
        return ret


class PipelineCell(Cell):
    """MindSpore's PipelineCell: the network run on ``micro_size`` micro-batches (axis 0 split evenly) and
    the outputs summed. Under pipeline parallel (``pipeline_stages`` > 1) each run is one micro-batch of
    the 1F1B schedule, its gradients accumulated (``graph.parallel.pipeline``); on one device it computes
    what GradAccumulationCell does. ``stage_config`` ({cell name: stage}) sets sub-cells' pipeline_stage."""

    def __init__(self, network: Cell, micro_size: int, stage_config: dict | None = None,
                 segment_config: dict | None = None):
        super().__init__(auto_prefix=False)
        _adopt_micro_batched(self, "PipelineCell", network, micro_size)
        for name, stage in self._set_stages(stage_config).items():   # MindSpore prints what it could not place
            print("pipeline_cell stage_config set pipeline_stage fail!")
            print(f"config cell name:{name} config stage num:{stage}")

    def _set_stages(self, stage_config: dict | None) -> dict:
        """Each sub-cell named in ``stage_config`` takes its stage; the entries no cell matched are returned."""
        config = dict(stage_config or {})
        for name, cell in self.network.cells_and_names():
            if name and name in config:
                cell.pipeline_stage = config.pop(name)
        return config

    def construct(self, *inputs: Any) -> Any:
        ret = None
        for i in range(self.micro_size):
            micro = _micro_batch(inputs, i, self.micro_size)
            with micro_scope(i):
                output = self.network(*micro)
            tracer = current_tracer()
            if tracer is not None:
                note_micro_output(tracer, i, tracer_value(tracer, output))
            ret = output if ret is None else ops.add(ret, output)
        return ret


class _TrainGradAccuStepCell(TrainOneStepCell):
    """The training cell MindSpore's ``build_train_network`` (so ``Model.train``) makes under
    ``pipeline_stages`` > 1, as MindSpore 2.10 writes it: every micro-batch's gradient is added into
    ``accu_grads``, zero-initialised clones of the weights (Parameters: a stage holds them for the graph's
    life; the pipeline pass adds in place, ``graph.parallel.pipeline.accumulating``, else the cell adds);
    without a sens they are scaled by 1 / micro_size, each accumulator is cleared as soon as it is read and
    the optimizer applies the scaled sums; the scaled values are cleared again after the update (MindSpore's
    ``grad_scale`` and ``_pipeline_clear_grad``: ``zeros_like`` folds to a constant per Parameter, twice).
    With optimizer parallel the gradients go to the optimizer directly, as MindSpore's does."""

    def __init__(self, network: Cell, optimizer: Cell, sens: float | None = None):
        super().__init__(network, optimizer, sens)
        self.accu_grads = self.weights.clone(prefix="accu_grads", init="zeros")
        self.sense_flag = sens is not None
        self.opt_shard = _get_enable_parallel_optimizer()
        if not self.sense_flag:
            micro = next((c.micro_size for _, c in network.cells_and_names() if hasattr(c, "micro_size")), 1)
            self.sens = 1.0 / micro

    def construct(self, *inputs: Any) -> Any:
        loss = self.network(*inputs)
        sens = ops.fill(loss.dtype, loss.shape, self.sens if self.sense_flag else 1.0)
        with accumulating(GradAccumulation(self.accu_grads)) as accumulation:
            grads = self.grad(self.network, self.weights)(*inputs, sens)
        if self.opt_shard:
            if not self.sense_flag:
                grads = tuple(_grad_scale(self.sens, g) for g in grads)
            self.optimizer(grads)
            accu_grads = self.accu_grads
        else:
            if not accumulation.taken:
                for accu, grad in zip(self.accu_grads, grads):
                    ops.assign_add(accu, grad)
            accu_grads = tuple(self.accu_grads)
            if not self.sense_flag:
                accu_grads = tuple(_grad_scale(self.sens, a) for a in accu_grads)
            self.optimizer(accu_grads)
        for accu in accu_grads:
            ops.assign(accu, ops.zeros_like(accu))
        return loss


def _grad_scale(scale: float, grad: Any) -> Any:
    """MindSpore's ``grad_scale`` (cell_wrapper.py): ``scale * grad``, then ``grad`` (an accumulator) cleared."""
    new = scale * grad
    ops.assign(grad, ops.zeros_like(grad))
    return new


class _VirtualDatasetCell(Cell):
    """MindSpore's marker of the dataset's layout that ``Model`` wraps a semi-auto parallel network in (its
    ``_VirtualDataset`` has no kernel); the sharding pass places graph inputs itself, so it passes them on."""

    def __init__(self, backbone: Cell):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._get_attr_from_cell(backbone)

    def construct(self, *inputs: Any) -> Any:
        return self._backbone(*inputs)


class MicroBatchInterleaved(Cell):
    """The network run on ``interleave_num`` slices of the batch (axis 0) and the outputs summed: on one
    device the same numbers as one pass for a summed loss (MindSpore overlaps the slices' communication)."""

    def __init__(self, network: Cell, interleave_num: int = 2):
        super().__init__(auto_prefix=False)
        self.interleave_num = _check_count("MicroBatchInterleaved", "interleave_num", interleave_num)
        self.network = network
        self._get_attr_from_cell(network)

    def construct(self, *inputs: Any) -> Any:
        output = 0.0
        for i in range(self.interleave_num):
            output = ops.add(output, self.network(*_micro_batch(inputs, i, self.interleave_num)))
        return output


class VirtualDatasetCellTriple(Cell):
    """Passes three inputs to ``backbone`` (semi-auto parallel's dataset marker; deprecated in MindSpore)."""

    def __init__(self, backbone: Cell):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._get_attr_from_cell(backbone)

    def construct(self, a: Any, b: Any, c: Any) -> Any:
        return self._backbone(a, b, c)
