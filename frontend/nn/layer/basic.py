"""``mindspore.nn.layer.basic``: Dense, Dropout, Flatten, Identity, OneHot, Pad, ClipByNorm, where MindSpore
defines them, and the parameter helpers the other layer files share."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, initializer
from ...common.seed import graph_seed
from ...ops import Primitive, constexpr  # noqa: F401  (MindSpore's nn.layer.basic has them)
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell
from .activation import get_activation

__all__ = ["Dropout", "Flatten", "Dense", "ClipByNorm", "OneHot", "Pad", "Identity"]


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



def _positive_int(layer: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParamError(f"{layer}: {name}={value!r} must be an int >= 1")
    return value



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
        else:
            self.bias = None                # as MindSpore's: zoo init loops test `cell.bias is not None`
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
        # MindSpore prints has_bias only when True, and the activation when there is one
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}"
        if self.has_bias:
            s += f", has_bias={self.has_bias}"
        if self.activation is not None:
            s += f", activation={self.activation}"
        return s



class OneHot(Cell):
    """``OneHot(axis=-1, depth=1, on_value=1.0, off_value=0.0, dtype=mstype.float32)(indices)``: the
    OneHot primitive with the values cast to ``dtype`` (MindSpore's deprecated layer, kept as
    ``ops.one_hot``'s cell form)."""

    def __init__(self, axis: int = -1, depth: int = 1, on_value: float = 1.0, off_value: float = 0.0,
                 dtype: Any = mstype.float32):
        super().__init__()
        self.onehot = ops.OneHot(axis)
        self.depth, self.dtype, self.on_value, self.off_value = depth, dtype, on_value, off_value

    def construct(self, indices: Tensor) -> Tensor:
        return self.onehot(indices, self.depth, ops.cast(self.on_value, self.dtype),
                           ops.cast(self.off_value, self.dtype))


class Pad(Cell):
    """``Pad(paddings, mode='CONSTANT')``: ``paddings`` is a tuple of (before, after) pairs, one per
    dimension of x (at most 4); CONSTANT pads zeros (Pad), REFLECT and SYMMETRIC mirror (MirrorPad)."""

    MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")

    def __init__(self, paddings: Any, mode: str = "CONSTANT"):
        super().__init__()
        if mode not in self.MODES:
            raise InvalidParamError(f"Pad: mode={mode!r} must be one of {self.MODES}")
        if not isinstance(paddings, tuple):
            raise InvalidParamError(f"Pad: paddings must be a tuple of (before, after) pairs, got "
                                    f"{type(paddings).__name__}")
        if any(not isinstance(p, (tuple, list)) or len(p) != 2 for p in paddings):
            raise InvalidParamError(f"Pad: paddings must have shape (n, 2), got {paddings}")
        if len(paddings) > 4:
            raise InvalidParamError(f"Pad: paddings of at most 4 dimensions are supported, got {len(paddings)}")
        self.paddings, self.mode = tuple(tuple(p) for p in paddings), mode
        self.pad = ops.Pad(self.paddings) if mode == "CONSTANT" else ops.MirrorPad(mode)

    def construct(self, x: Tensor) -> Tensor:
        return self.pad(x) if self.mode == "CONSTANT" else self.pad(x, self.paddings)

    def extend_repr(self) -> str:
        return f"paddings={self.paddings}, mode={self.mode}"



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



class Identity(Cell):
    """Returns its input unchanged (no op is recorded)."""

    def construct(self, x: Any) -> Any:
        return x


class ClipByNorm(Cell):
    """MindSpore's nn.ClipByNorm (deprecated in 2.8, still what BERT, GPT and Transformer in the zoo call):
    ``x * clip_norm / max(L2(x), clip_norm)`` in float32, the L2 norm over ``axis`` (None: all dimensions)
    kept broadcastable, so ``x`` is unchanged where its norm is at most ``clip_norm``."""

    def __init__(self, axis: int | tuple[int, ...] | None = None):
        super().__init__()
        if isinstance(axis, bool) or not (axis is None or isinstance(axis, int) or
                                          (isinstance(axis, tuple) and all(isinstance(a, int) for a in axis))):
            raise InvalidParamError(f"ClipByNorm: axis={axis!r} must be None, an int or a tuple of ints")
        self.axis = () if axis is None else axis
        self.reduce_sum = ops.ReduceSum(keep_dims=True)

    def construct(self, x: Tensor, clip_norm: Tensor) -> Tensor:
        if x.dtype not in (mstype.float32, mstype.float16):
            raise InvalidParamError(f"ClipByNorm: x must be float32 or float16, got {x.dtype}")
        x = ops.cast(x, mstype.float32)
        clip = ops.cast(clip_norm, mstype.float32)
        return x * clip / ops.maximum(ops.sqrt(self.reduce_sum(ops.square(x), self.axis)), clip)



class Flatten(Cell):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x: Tensor) -> Tensor:
        return ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)
