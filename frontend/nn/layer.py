"""``mindspore.nn`` layers of the supported subset: Dense, Conv2d, pooling, normalisation, activations,
containers.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Iterable, Iterator

import numpy as np

from ascendemu.errors import InvalidParamError

from .. import ops
from ..common import dtype as mstype
from ..common.initializer import HeUniform, Uniform, initializer
from ..common.seed import graph_seed
from ..tensor import Parameter, Tensor
from .cell import Cell

# ------------------------------------------------------------------------------------------- layers

def get_activation(name: Any) -> Cell | None:
    if name is None or isinstance(name, Cell) or isinstance(name, ops.Primitive):
        return name
    table = {"relu": ReLU, "gelu": GELU, "sigmoid": Sigmoid, "tanh": Tanh, "softmax": Softmax,
             "logsoftmax": LogSoftmax}
    if not isinstance(name, str) or name.lower() not in table:
        raise InvalidParamError(f"activation {name!r} is not supported; use one of {sorted(table)}")
    return table[name.lower()]()


def _init_param(layer: str, what: str, init: Any, default: Any, shape: tuple[int, ...], dtype: Any) -> Tensor:
    """``initializer(init, shape, dtype)`` for a layer's ``weight_init``/``bias_init``; None takes the
    layer's default. ``init`` is never tested for truth: a Tensor has none, and 0 is a valid constant."""
    if init is None:
        init = default
    elif isinstance(init, Tensor):
        init = init.asnumpy()
    if isinstance(init, np.ndarray) and init.shape != tuple(shape):
        raise InvalidParamError(f"{layer}: {what} has shape {init.shape}, but this layer's "
                                f"{what.removesuffix('_init')} has shape {tuple(shape)}")
    return initializer(init, shape, dtype)


class Dense(Cell):
    """y = activation(x @ W.T + b), W of shape (out, in); inputs of rank > 2 are flattened to 2-D
    around the MatMul (Reshape nodes, which compile to aliases)."""

    def __init__(self, in_channels: int, out_channels: int, weight_init: Any = None, bias_init: Any = None,
                 has_bias: bool = True, activation: Any = None, dtype: Any = mstype.float32):
        super().__init__()
        self.in_channels, self.out_channels, self.has_bias = int(in_channels), int(out_channels), bool(has_bias)
        self.weight = Parameter(_init_param("Dense", "weight_init", weight_init, HeUniform(math.sqrt(5)),
                                            (self.out_channels, self.in_channels), dtype), name="weight")
        if self.has_bias:
            bound = 1 / math.sqrt(self.in_channels)
            self.bias = Parameter(_init_param("Dense", "bias_init", bias_init, Uniform(bound),
                                              (self.out_channels,), dtype), name="bias")
            self.bias_add = ops.BiasAdd()
        self.matmul = ops.MatMul(transpose_b=True)
        self.activation = get_activation(activation)

    def construct(self, x: Tensor) -> Tensor:
        shape = x.shape
        if len(shape) != 2:
            x = ops.reshape(x, (-1, shape[-1]))
        x = self.matmul(x, self.weight)
        if self.has_bias:
            x = self.bias_add(x, self.bias)
        if self.activation is not None:
            x = self.activation(x)
        if len(shape) != 2:
            x = ops.reshape(x, shape[:-1] + (self.out_channels,))
        return x

    def extend_repr(self) -> str:
        return f"input_channels={self.in_channels}, output_channels={self.out_channels}, has_bias={self.has_bias}"


class Conv2d(Cell):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 pad_mode: str = "same", padding: Any = 0, dilation: Any = 1, group: int = 1,
                 has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 data_format: str = "NCHW", dtype: Any = mstype.float32):
        super().__init__()
        kh, kw = ops._pair("kernel_size", kernel_size)
        if in_channels % group or out_channels % group:
            raise InvalidParamError(f"Conv2d: in_channels={in_channels} and out_channels={out_channels} "
                                    f"must be divisible by group={group}")
        self.in_channels, self.out_channels, self.has_bias = in_channels, out_channels, bool(has_bias)
        self.weight = Parameter(_init_param("Conv2d", "weight_init", weight_init, HeUniform(math.sqrt(5)),
                                            (out_channels, in_channels // group, kh, kw), dtype), name="weight")
        if self.has_bias:
            bound = 1 / math.sqrt(in_channels // group * kh * kw)
            self.bias = Parameter(_init_param("Conv2d", "bias_init", bias_init, Uniform(bound),
                                              (out_channels,), dtype), name="bias")
            self.bias_add = ops.BiasAdd()
        self.conv2d = ops.Conv2D(out_channels, (kh, kw), pad_mode=pad_mode, pad=padding, stride=stride,
                                 dilation=dilation, group=group, data_format=data_format)

    def construct(self, x: Tensor) -> Tensor:
        out = self.conv2d(x, self.weight)
        return self.bias_add(out, self.bias) if self.has_bias else out

    def extend_repr(self) -> str:
        a = self.conv2d.conv_attrs
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={a['kernel_size']}, stride={a['stride']}, pad_mode={a['pad_mode']}, "
                f"padding={a['pad']}, dilation={a['dilation']}, group={a['group']}, has_bias={self.has_bias}")


class _Pool2d(Cell):
    prim: type = ops.MaxPool

    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid", data_format: str = "NCHW"):
        super().__init__()
        self.pool = self.prim(kernel_size, stride, pad_mode, data_format)

    def construct(self, x: Tensor) -> Tensor:
        return self.pool(x)


class MaxPool2d(_Pool2d):
    prim = ops.MaxPool


class AvgPool2d(_Pool2d):
    prim = ops.AvgPool


class _BatchNorm(Cell):
    """Batch norm over channel dim 1. Training mode (``set_train()``, or ``use_batch_statistics=True``)
    normalises with the batch's statistics and updates the moving ones with ``momentum`` (MindSpore's
    nn convention: moving = momentum * moving + (1 - momentum) * batch); eval mode uses the moving ones.
    """

    rank = 4

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", moving_mean_init: Any = "zeros",
                 moving_var_init: Any = "ones", use_batch_statistics: Any = None, data_format: str = "NCHW",
                 dtype: Any = mstype.float32):
        super().__init__()
        if not 0.0 <= momentum <= 1.0:
            raise InvalidParamError(f"{type(self).__name__}: momentum={momentum!r} must be in [0, 1]")
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), float(momentum)
        self.use_batch_statistics = use_batch_statistics
        self.gamma = Parameter(initializer(gamma_init, num_features, dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, num_features, dtype), name="beta", requires_grad=affine)
        self.moving_mean = Parameter(initializer(moving_mean_init, num_features, dtype), name="moving_mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer(moving_var_init, num_features, dtype),
                                         name="moving_variance", requires_grad=False)
        self.bn_train = ops.BatchNorm(is_training=True, epsilon=eps, momentum=1.0 - momentum, data_format=data_format)
        self.bn_infer = ops.BatchNorm(is_training=False, epsilon=eps, data_format=data_format)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim != self.rank:
            raise InvalidParamError(f"{type(self).__name__}: input must have rank {self.rank}, got shape {x.shape}")
        batch_stats = self.training if self.use_batch_statistics is None else bool(self.use_batch_statistics)
        bn = self.bn_train if batch_stats else self.bn_infer
        return bn(x, self.gamma, self.beta, self.moving_mean, self.moving_variance)[0]

    def extend_repr(self) -> str:
        return f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}"


class BatchNorm2d(_BatchNorm):
    rank = 4


class BatchNorm1d(_BatchNorm):
    rank = 2


class LayerNorm(Cell):
    def __init__(self, normalized_shape: Any, begin_norm_axis: int = -1, begin_params_axis: int = -1,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", epsilon: float = 1e-7,
                 dtype: Any = mstype.float32):
        super().__init__()
        if not isinstance(normalized_shape, (tuple, list)):
            raise InvalidParamError(f"LayerNorm: normalized_shape must be a tuple or list, got {normalized_shape!r}")
        self.normalized_shape = tuple(normalized_shape)
        self.gamma = Parameter(initializer(gamma_init, self.normalized_shape, dtype), name="gamma")
        self.beta = Parameter(initializer(beta_init, self.normalized_shape, dtype), name="beta")
        self.layer_norm = ops.LayerNorm(begin_norm_axis, begin_params_axis, epsilon)

    def construct(self, x: Tensor) -> Tensor:
        return self.layer_norm(x, self.gamma, self.beta)[0]

    def extend_repr(self) -> str:
        return f"normalized_shape={self.normalized_shape}"


class Dropout(Cell):
    """Zero each element with probability ``p`` (or ``1 - keep_prob``) in training mode
    (``set_train()``) and scale the rest by ``1 / (1 - p)``; the identity in eval mode, which is a
    fresh Cell's, and when nothing is dropped. ``p`` wins when given; ``keep_prob`` is MindSpore's
    deprecated form and ``dtype`` is accepted and unused, as there. Each layer owns an
    ``ops.Dropout`` with its own seed pair (the global seed's next, see ``set_seed``) and generator,
    so every step draws a new mask and a seeded run the same masks."""

    def __init__(self, keep_prob: float = 0.5, p: float | int | None = None, dtype: Any = mstype.float32):
        super().__init__()
        if p is None:
            keep = ops._probability("Dropout", "keep_prob", keep_prob, low_open=True)
        else:
            keep = 1.0 - ops._probability("Dropout", "p", p, low_open=False, allow_int=True)
        self.keep_prob, self.p = keep_prob, p
        self.dropout = ops.Dropout(keep, *graph_seed(0, "dropout"))

    def construct(self, x: Tensor) -> Tensor:
        if not self.training or self.keep_prob == 1 or self.p == 0:
            return x
        return self.dropout(x)[0]

    def extend_repr(self) -> str:
        return f"keep_prob={self.keep_prob}" if self.p is None else f"p={self.p}"


class _Activation(Cell):
    prim: type = ops.ReLU

    def __init__(self) -> None:
        super().__init__()
        self.act = self.prim()

    def construct(self, x: Tensor) -> Tensor:
        return self.act(x)


class ReLU(_Activation):
    prim = ops.ReLU


class Sigmoid(_Activation):
    prim = ops.Sigmoid


class Tanh(_Activation):
    prim = ops.Tanh


class GELU(_Activation):
    prim = ops.GeLU

    def __init__(self, approximate: bool = True):
        if not approximate:
            raise InvalidParamError("GELU: approximate=False (erf form) is not supported; GeLU uses tanh")
        super().__init__()


class Softmax(Cell):
    def __init__(self, axis: int = -1):
        super().__init__()
        self.softmax = ops.Softmax(axis)

    def construct(self, x: Tensor) -> Tensor:
        return self.softmax(x)


class LogSoftmax(Cell):
    def __init__(self, axis: int = -1):
        super().__init__()
        self.log_softmax = ops.LogSoftmax(axis)

    def construct(self, x: Tensor) -> Tensor:
        return self.log_softmax(x)


class Flatten(Cell):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x: Tensor) -> Tensor:
        return ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)


# ----------------------------------------------------------------------------------------- containers

class SequentialCell(Cell):
    """Cells applied in order; children are named "0", "1", ... (or by an OrderedDict's keys)."""

    def __init__(self, *args: Any):
        super().__init__()
        items = args[0] if len(args) == 1 and isinstance(args[0], (list, OrderedDict)) else args
        pairs = items.items() if isinstance(items, OrderedDict) else ((str(i), c) for i, c in enumerate(items))
        for name, cell in pairs:
            self.insert_child_to_cell(name, cell)

    def append(self, cell: Cell) -> "SequentialCell":
        self.insert_child_to_cell(str(len(self._cells)), cell)
        return self

    def __getitem__(self, index: int) -> Cell:
        return list(self._cells.values())[index]

    def __len__(self) -> int:
        return len(self._cells)

    def construct(self, x: Any) -> Any:
        for cell in self._cells.values():
            x = cell(x)
        return x


class CellList(Cell):
    """A list of cells whose parameters are registered; iterate it inside ``construct``."""

    def __init__(self, args: Iterable[Cell] | None = None):
        super().__init__()
        for cell in args or ():
            self.append(cell)

    def append(self, cell: Cell) -> None:
        self.insert_child_to_cell(str(len(self._cells)), cell)

    def extend(self, cells: Iterable[Cell]) -> "CellList":
        for cell in cells:
            self.append(cell)
        return self

    def __getitem__(self, index: int) -> Cell:
        return list(self._cells.values())[index]

    def __iter__(self) -> Iterator[Cell]:
        return iter(list(self._cells.values()))

    def __len__(self) -> int:
        return len(self._cells)

    def construct(self, *args: Any) -> Any:
        raise InvalidParamError("CellList is a container and cannot be called; call its cells")
