"""``mindspore.nn.layer.basic``: Dense, Dropout, Flatten, Identity, OneHot, Pad, ClipByNorm, where MindSpore
defines them, and the parameter helpers the other layer files share."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, initializer
from ...common.seed import graph_seed
from ...ops import Primitive, constexpr  # noqa: F401  (MindSpore's nn.layer.basic has them)
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell
from .activation import get_activation

__all__ = ["Dropout", "Flatten", "Dense", "ClipByNorm", "OneHot", "Pad", "Identity", "Linear", "Dropout1d", "Dropout2d",
           "Dropout3d", "Unflatten", "Tril", "Triu", "L1Regularizer", "Roll", "Upsample", "Norm", "MatrixDiag",
           "MatrixDiagPart", "MatrixSetDiag", "Unfold", "DropoutExt", "Dropout2dExt"]


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



class Linear(Cell):
    """``x @ weight.T + bias`` over the last axis (MindSpore 2.10's ``nn.Linear``, also ``mint.nn.Linear``):
    weight (out_features, in_features), HeUniform(sqrt(5)) by default, bias Uniform(1 / sqrt(in_features))."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, weight_init: Any = None,
                 bias_init: Any = None, dtype: Any = None):
        super().__init__()
        self.in_features = _positive_int("Linear", "in_features", in_features)
        self.out_features = _positive_int("Linear", "out_features", out_features)
        if not isinstance(bias, bool):
            raise InvalidParamError(f"Linear: bias={bias!r} must be a bool")
        dtype = mstype.float32 if dtype is None else dtype
        self.has_bias = bias
        self.weight = Parameter(_init_param("Linear", "weight_init", weight_init, HeUniform(math.sqrt(5)),
                                            (out_features, in_features), dtype), name="weight")
        self.bias = None
        if bias:
            self.bias = Parameter(_init_param("Linear", "bias_init", bias_init, Uniform(1 / math.sqrt(in_features)),
                                              (out_features,), dtype), name="bias")
        self.matmul = ops.MatMul(transpose_b=True)

    def construct(self, x: Tensor) -> Tensor:
        shape = x.shape
        out = self.matmul(ops.reshape(x, (-1, shape[-1])), self.weight)
        if self.has_bias:
            out = out + self.bias
        return ops.reshape(out, shape[:-1] + (self.out_features,))

    def extend_repr(self) -> str:
        s = f"input_features={self.in_features}, output_features={self.out_features}"
        return s + (f", has_bias={self.has_bias}" if self.has_bias else "")


class _ChannelDropout(Cell):
    """Zero whole channels with probability ``p`` in training mode (``ops.dropout1d/2d/3d``), the
    identity in eval mode."""

    fn: Any = None

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not isinstance(p, float) or not 0.0 <= p <= 1.0:
            raise InvalidParamError(f"{type(self).__name__}: p={p!r} must be a float in [0, 1]")
        self.p, self.keep_prob = p, 1.0 - p

    def construct(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0:
            return x
        return type(self).fn(x, self.p, True)

    def extend_repr(self) -> str:
        return f"p={self.p}"


class Dropout1d(_ChannelDropout):
    fn = staticmethod(ops.dropout1d)


class Dropout2d(_ChannelDropout):
    fn = staticmethod(ops.dropout2d)


class Dropout3d(_ChannelDropout):
    fn = staticmethod(ops.dropout3d)


class Unflatten(Cell):
    """Axis ``axis`` of x reshaped to ``unflattened_size``."""

    def __init__(self, axis: int, unflattened_size: Any):
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise InvalidParamError(f"Unflatten: axis={axis!r} must be an int")
        if not isinstance(unflattened_size, (tuple, list)):
            raise InvalidParamError(f"Unflatten: unflattened_size={unflattened_size!r} must be a tuple or list")
        self.axis, self.unflattened_size = axis, tuple(unflattened_size)

    def construct(self, input_x: Tensor) -> Tensor:
        shape = input_x.shape
        axis = self.axis % len(shape)
        return ops.reshape(input_x, shape[:axis] + self.unflattened_size + shape[axis + 1:])


class _Triangle(Cell):
    """x times a constant 0/1 mask of its last two axes (MindSpore's Tril/Triu cells)."""

    lower = True

    def construct(self, x: Tensor, k: int = 0) -> Tensor:
        if x.ndim < 2:
            raise InvalidParamError(f"{type(self).__name__}: input must have rank >= 2, got shape {x.shape}")
        rows, cols = x.shape[-2:]
        make = np.tril if self.lower else np.triu
        mask = Tensor(make(np.ones((rows, cols), np.bool_), k))
        return ops.select(ops.broadcast_to(mask, x.shape), x, ops.zeros_like(x))


class Tril(_Triangle):
    lower = True


class Triu(_Triangle):
    lower = False


class L1Regularizer(Cell):
    """``scale * sum(|weights|)``."""

    def __init__(self, scale: float):
        super().__init__()
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < math.inf:
            raise InvalidValueError(f"L1Regularizer: scale={scale!r} must be a finite number > 0")
        self.scale = scale

    def construct(self, weights: Tensor) -> Tensor:
        return ops.sum(ops.abs(weights)) * self.scale


class Roll(Cell):
    """x rolled by ``shift`` along ``axis`` (ints or equal-length tuples): elements leaving one end
    enter at the other; two slices concatenated per axis."""

    def __init__(self, shift: Any, axis: Any):
        super().__init__()
        shift = list(shift) if isinstance(shift, (tuple, list)) else [shift]
        axis = list(axis) if isinstance(axis, (tuple, list)) else [axis]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in shift + axis):
            raise InvalidTypeError(f"Roll: shift={shift!r} and axis={axis!r} must be ints or tuples of ints")
        if len(shift) != len(axis):     # MindSpore: ValueError
            raise InvalidValueError(f"For 'Roll', the shape of 'shift' and the shape of 'axis' must be the same, but "
                                    f"got the length of 'shift' {len(shift)} and the length of 'axis' {len(axis)}.")
        self.shift, self.axis = shift, axis

    def construct(self, input_x: Tensor) -> Tensor:
        x = input_x
        for shift, axis in zip(self.shift, self.axis):
            axis %= x.ndim
            size = x.shape[axis]
            cut = (-shift) % size
            if cut == 0:
                continue
            head = ops.strided_slice(x, (0,) * x.ndim, tuple(cut if d == axis else n for d, n in enumerate(x.shape)),
                                     (1,) * x.ndim)
            tail = ops.strided_slice(x, tuple(cut if d == axis else 0 for d in range(x.ndim)), x.shape,
                                     (1,) * x.ndim)
            x = ops.concat((tail, head), axis)
        return x


class Upsample(Cell):
    """``ops.interpolate(x, size, scale_factor, mode, align_corners, recompute_scale_factor)`` with the
    arguments given at construction (the modes and ranks ``ops.interpolate`` serves)."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest", align_corners: Any = None,
                 recompute_scale_factor: Any = None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, x: Tensor) -> Tensor:
        return ops.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                               self.recompute_scale_factor)


class Norm(Cell):
    """``sqrt(sum(x^2, axis))`` (every axis when ``axis`` is ()); without ``keep_dims`` the reduced axes
    are squeezed as MindSpore squeezes them: ``Squeeze(axis)``, so () drops every size-1 axis."""

    def __init__(self, axis: Any = (), keep_dims: bool = False):
        super().__init__()
        if not isinstance(keep_dims, bool):
            raise InvalidParamError(f"Norm: keep_dims={keep_dims!r} must be a bool")
        self.axis, self.keep_dims = axis, keep_dims

    def construct(self, x: Tensor) -> Tensor:
        out = ops.sqrt(ops.ReduceSum(True)(ops.square(x), self.axis))
        return out if self.keep_dims else ops.Squeeze(self.axis)(out)

    def extend_repr(self) -> str:
        return f"axis={self.axis}, keep_dims={self.keep_dims}"


def _eye(rows: int, cols: int, dtype: Any) -> Tensor:
    return Tensor(np.eye(rows, cols, dtype=mstype.dtype_to_nptype(dtype)))


class MatrixDiag(Cell):
    """(..., n) -> (..., n, n): each last-axis vector on the diagonal of a zero matrix."""

    def construct(self, input_x: Tensor) -> Tensor:
        n = input_x.shape[-1]
        return ops.expand_dims(input_x, -1) * _eye(n, n, input_x.dtype)


class MatrixDiagPart(Cell):
    """(..., m, n) -> (..., min(m, n)): the main diagonal of each matrix."""

    def construct(self, input_x: Tensor) -> Tensor:
        if input_x.ndim < 2:
            raise InvalidValueError(f"MatrixDiagPart: input must have rank >= 2, got shape {input_x.shape}")
        m, n = input_x.shape[-2:]
        rows = ops.ReduceSum()(input_x * _eye(m, n, input_x.dtype), -1)
        return rows[..., :min(m, n)] if m > n else rows


class MatrixSetDiag(Cell):
    """x (..., m, n) with its main diagonal replaced by ``diagonal`` (..., min(m, n))."""

    def construct(self, input_x: Tensor, diagonal: Tensor) -> Tensor:
        if input_x.ndim < 2:
            raise InvalidParamError(f"MatrixSetDiag: x must have rank >= 2, got shape {input_x.shape}")
        m, n = input_x.shape[-2:]
        k = min(m, n)
        if diagonal.shape != input_x.shape[:-2] + (k,) or diagonal.dtype != input_x.dtype:
            # MindSpore: ValueError for the shape, TypeError for the dtype
            error = InvalidValueError if diagonal.shape != input_x.shape[:-2] + (k,) else InvalidTypeError
            raise error(f"MatrixSetDiag: diagonal must be {input_x.dtype}{list(input_x.shape[:-2] + (k,))}"
                                    f", got {diagonal.dtype}{list(diagonal.shape)}")
        eye = _eye(m, n, input_x.dtype)
        placed = ops.matmul(ops.expand_dims(diagonal, -2) * _eye(m, k, input_x.dtype), _eye(k, n, input_x.dtype))
        return input_x * (1 - eye) + placed


def _patch_arg(name: str, value: Any) -> tuple[int, int]:
    if not isinstance(value, (tuple, list)):
        raise InvalidParamError(f"Unfold: {name}s={value!r} must be a tuple or list")
    if len(value) != 4 or value[0] != 1 or value[3] != 1:
        raise InvalidValueError(f"For 'Unfold' the format of '{name}s' must be [1, {name}_row, {name}_col, 1], "
                                f"but got {value}.")
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value[1:3]):
        raise InvalidValueError(f"For 'Unfold' the {name}_row and {name}_col in '{name}s' must be an positive "
                                f"integer number, but got {value}")
    return value[1], value[2]


class Unfold(Cell):
    """Image patches of NCHW x (MindSpore's ExtractImagePatches, TensorFlow's extract_image_patches):
    (N, kh * kw * C, out_h, out_w), depth ordered (row, col, channel) as TensorFlow orders it; 'valid'
    keeps whole windows, 'same' pads (the smaller half first) to out = ceil(in / stride). The op has no
    CPU kernel in MindSpore, so the layout follows TensorFlow's definition, which MindSpore documents."""

    def __init__(self, ksizes: Any, strides: Any, rates: Any, padding: str = "valid"):
        super().__init__()
        self.ksizes, self.strides = _patch_arg("ksize", ksizes), _patch_arg("stride", strides)
        self.rates = _patch_arg("rate", rates)
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise InvalidParamError(f"Unfold: padding={padding!r} must be 'valid' or 'same'")

    def construct(self, input_x: Tensor) -> Tensor:
        if input_x.ndim != 4:
            raise InvalidParamError(f"Unfold: input must be 4-D (N, C, H, W), got shape {input_x.shape}")
        n, c, h, w = input_x.shape
        spans = [(k - 1) * r + 1 for k, r in zip(self.ksizes, self.rates)]
        if self.padding == "same":
            outs = [-(-size // s) for size, s in zip((h, w), self.strides)]
            totals = [max((o - 1) * s + span - size, 0) for o, s, span, size in zip(outs, self.strides, spans, (h, w))]
            input_x = ops.pad(input_x, (totals[1] // 2, totals[1] - totals[1] // 2, totals[0] // 2,
                                        totals[0] - totals[0] // 2))
        else:
            outs = [(size - span) // s + 1 for size, span, s in zip((h, w), spans, self.strides)]
        if min(outs) < 1:
            raise InvalidParamError(f"Unfold: the window {spans} does not fit the input {input_x.shape}")
        (sh, sw), (rh, rw) = self.strides, self.rates
        patches = []
        for i in range(self.ksizes[0]):
            for j in range(self.ksizes[1]):
                top, left = i * rh, j * rw
                end = (n, c, top + (outs[0] - 1) * sh + 1, left + (outs[1] - 1) * sw + 1)
                patches.append(ops.strided_slice(input_x, (0, 0, top, left), end, (1, 1, sh, sw)))
        return ops.reshape(ops.stack(patches, 1), (n, len(patches) * c, outs[0], outs[1]))


class DropoutExt(Cell):
    """Dropout with probability ``p`` of zeroing (survivors scaled by 1 / (1 - p)) in training; identity
    in eval or with p 0. ``inplace=True`` is not served (the result is a new Tensor)."""

    _fn = staticmethod(ops.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if inplace:
            raise InvalidParamError(f"{type(self).__name__}: inplace=True is not supported; leave it False and use "
                                    f"the returned Tensor")
        self.p, self.inplace = p, inplace

    def construct(self, input: Tensor) -> Tensor:
        if not self.training or self.p == 0:
            return input
        return type(self)._fn(input, p=self.p, training=True)


class Dropout2dExt(DropoutExt):
    """Channel dropout of (N, C, H, W): whole channels zeroed with probability ``p`` in training."""

    _fn = staticmethod(ops.dropout2d)
