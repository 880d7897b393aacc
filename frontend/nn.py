"""``mindspore.nn``: Cell and the layers of the supported subset (inference semantics).

Calling a Cell runs ``construct``: directly in PyNative mode, or captured as one graph in GRAPH_MODE.
Sub-cells called inside a capture add a name scope ``<attr>-<Class>`` to the ops they record, so
full names read like MindSpore's ``Default/fc1-Dense/MatMul-op1``.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Iterable, Iterator

import numpy as np

from ascendemu.errors import InvalidParamError
from ascendemu.graph.capture import current_tracer

from . import ops
from .common import dtype as mstype
from .common.api import run_graph
from .common.initializer import HeUniform, Uniform, initializer
from .context import GRAPH_MODE, get_context
from .tensor import Parameter, Tensor
from .unsupported import unsupported


class Cell:
    """Base of every network: register Parameters and sub-cells as attributes, define ``construct``."""

    def __init__(self, auto_prefix: bool = True, flags: dict | None = None):
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_attr_name", None)
        object.__setattr__(self, "_auto_prefix", auto_prefix)
        object.__setattr__(self, "training", False)

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name: str, value: Any) -> None:
        registry = self.__dict__.get("_params")
        if registry is None:
            if isinstance(value, (Parameter, Cell)):
                raise InvalidParamError(f"{type(self).__name__}: call super().__init__() in __init__ before "
                                        f"assigning parameters or cells (assigning {name!r})")
            object.__setattr__(self, name, value)
            return
        self._params.pop(name, None)
        self._cells.pop(name, None)
        if isinstance(value, Parameter):
            if value.name == Parameter.DEFAULT_NAME:
                value.name = name
            self._params[name] = value
        elif isinstance(value, Cell):
            self._adopt(name, value)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._params.pop(name, None)
        self._cells.pop(name, None)
        object.__delattr__(self, name)

    def _adopt(self, name: str, cell: "Cell") -> None:
        object.__setattr__(cell, "_attr_name", name)
        if self._auto_prefix:
            for _, p in cell.parameters_and_names():
                p.name = f"{name}.{p.name}"
        self._cells[name] = cell

    def insert_child_to_cell(self, child_name: str, child_cell: "Cell") -> None:
        if not isinstance(child_cell, Cell):
            raise InvalidParamError(f"insert_child_to_cell: {child_name!r} must be a Cell, "
                                    f"got {type(child_cell).__name__}")
        self._adopt(child_name, child_cell)
        object.__setattr__(self, child_name, child_cell)

    # ------------------------------------------------------------------ queries
    def parameters_and_names(self, name_prefix: str = "", expand: bool = True) -> Iterator[tuple[str, Parameter]]:
        seen: set[int] = set()
        for cell in [self] + ([c for _, c in self.cells_and_names()][1:] if expand else []):
            for p in cell._params.values():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield p.name, p

    def get_parameters(self, expand: bool = True) -> Iterator[Parameter]:
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def parameters_dict(self, recurse: bool = True) -> "OrderedDict[str, Parameter]":
        return OrderedDict(self.parameters_and_names(expand=recurse))

    def trainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(recurse) if p.requires_grad]

    def untrainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(recurse) if not p.requires_grad]

    def cells_and_names(self, cells: set | None = None, name_prefix: str = "") -> Iterator[tuple[str, "Cell"]]:
        seen = cells if cells is not None else set()
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self._cells.items():
            yield from cell.cells_and_names(seen, f"{name_prefix}.{name}" if name_prefix else name)

    def name_cells(self) -> "OrderedDict[str, Cell]":
        return OrderedDict(self._cells)

    def cells(self) -> Iterable["Cell"]:
        return self._cells.values()

    def set_train(self, mode: bool = True) -> "Cell":
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", bool(mode))
        return self

    # ------------------------------------------------------------------ running
    def construct(self, *args: Any, **kwargs: Any) -> Any:
        raise InvalidParamError(f"{type(self).__name__} does not define construct(); every Cell must")

    def scope_label(self) -> str:
        name = self._attr_name
        return f"{name}-{type(self).__name__}" if name is not None else type(self).__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is not None:
            with tracer.scope(self.scope_label()):
                return self.construct(*args, **kwargs)
        if get_context("mode") == GRAPH_MODE:
            if any(isinstance(v, Tensor) for v in kwargs.values()):
                raise InvalidParamError(f"{type(self).__name__}: pass tensors positionally in GRAPH_MODE")
            construct = self.construct
            if kwargs:
                def construct(*a: Any) -> Any:
                    return self.construct(*a, **kwargs)
            return run_graph(construct, args, type(self).__name__)
        return self.construct(*args, **kwargs)

    # ------------------------------------------------------------------ printing
    def extend_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        head = f"{type(self).__name__}<{self.extend_repr()}"
        if not self._cells:
            return head + ">"
        body = "".join(f"\n  ({n}): " + repr(c).replace("\n", "\n  ") for n, c in self._cells.items())
        return head + body + "\n  >"


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


class BatchNorm2d(Cell):
    """Inference batch norm over NCHW channels with the moving statistics."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", moving_mean_init: Any = "zeros",
                 moving_var_init: Any = "ones", use_batch_statistics: Any = None, data_format: str = "NCHW",
                 dtype: Any = mstype.float32):
        super().__init__()
        if use_batch_statistics:
            raise InvalidParamError("BatchNorm2d: use_batch_statistics=True (training statistics) is not supported")
        self.num_features, self.eps = int(num_features), float(eps)
        self.gamma = Parameter(initializer(gamma_init, num_features, dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, num_features, dtype), name="beta", requires_grad=affine)
        self.moving_mean = Parameter(initializer(moving_mean_init, num_features, dtype), name="moving_mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer(moving_var_init, num_features, dtype),
                                         name="moving_variance", requires_grad=False)
        self.bn_infer = ops.BatchNorm(is_training=False, epsilon=eps, data_format=data_format)

    def construct(self, x: Tensor) -> Tensor:
        if self.training:
            raise InvalidParamError("BatchNorm2d: training mode is not supported; call set_train(False)")
        return self.bn_infer(x, self.gamma, self.beta, self.moving_mean, self.moving_variance)[0]

    def extend_repr(self) -> str:
        return f"num_features={self.num_features}, eps={self.eps}"


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


SUPPORTED = ("Cell", "Dense", "Conv2d", "MaxPool2d", "AvgPool2d", "BatchNorm2d", "LayerNorm", "ReLU", "GELU",
             "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Flatten", "SequentialCell", "CellList", "get_activation")


def __getattr__(name: str) -> Any:
    raise unsupported("nn", name, SUPPORTED)
