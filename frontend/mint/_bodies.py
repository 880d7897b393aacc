"""What ``mindspore.mint``'s functions do where a renaming of an ``ops`` function cannot say it: the route
bodies of ``_routes.MINT_ROUTES`` (each ``body(op, **arguments)``, arguments under the table's names).
Each is a composition of served ops, so shapes, dtypes and gradients come from the parts.
"""
from __future__ import annotations

import inspect
import math
from typing import Any, Callable

import numpy as np

from ascendemu.errors import InvalidParamError

from ..common import dtype as mstype
from ..common.tensor import Tensor, hold_value
from ..ops import function
from ..ops._utils import bind_arguments

__all__ = ["unpacked", "inplace_capable", "inplace", "pad", "gelu", "one_hot", "normalize", "linear", "embedding",
           "batch_norm", "conv_transpose2d", "squeeze", "empty", "empty_like", "einsum", "meshgrid", "allclose",
           "bitwise_not", "clone", "vdot"]

# torch.meshgrid's (and mint's) default indexing: matrix ('ij'), where ops.meshgrid defaults to 'xy'
MESHGRID_DEFAULT_INDEXING = "ij"
# the devices a ``device=`` argument may name: the emulated Ascend device (None: the current one)
DEVICES = (None, "Ascend", "npu")


def unpacked(signature_of: Callable, body: Callable | None = None) -> Callable:
    """A body for a mint name the table records as ``(*args, **kwargs)`` (MindSpore wraps it in C++ or a
    decorator): the call is bound to ``signature_of``'s own signature (Python's TypeError text when it
    does not bind), then passed to ``body(op, **arguments)`` or, without a body, to the op in order."""
    signature = inspect.signature(signature_of)

    def call(op: Callable, args: tuple, kwargs: dict) -> Any:
        bound = bind_arguments(signature_of.__name__, signature, args, kwargs).arguments
        return body(op, **bound) if body is not None else op(*bound.values())
    return call


def inplace_capable(op: Callable, input: Tensor, *, inplace: bool = False, **rest: Any) -> Any:
    """``relu(input, inplace)``-style activations: the op of ``input`` and the other arguments in order;
    with ``inplace=True`` ``input`` holds the result too (``common.tensor.hold_value``), as MindSpore's."""
    if not isinstance(inplace, bool):
        raise InvalidParamError(f"inplace={inplace!r} must be a bool")
    out = op(input, *rest.values())
    return hold_value(input, out) if inplace else out


def inplace(op: Callable, input: Tensor, **rest: Any) -> Any:
    """``relu_(input)``-style functions: the op's result, held by ``input``."""
    return hold_value(input, op(input, *rest.values()))


def _edge_pad(x: Tensor, pairs: list[tuple[int, int]], mode: str) -> Tensor:
    """Replicate (edge values repeated) or circular (wrapped) padding of the last dims, one dim at a time:
    slices and a concat, so the gradient is theirs."""
    for axis, (before, after) in zip(range(x.ndim - len(pairs), x.ndim), pairs):
        n = x.shape[axis]
        if mode == "circular" and (before > n or after > n):
            raise InvalidParamError(f"pad: circular padding {before, after} is larger than dim {axis} of size {n}")
        index = [slice(None)] * x.ndim
        parts = []
        if before:
            index[axis] = slice(0, 1) if mode == "replicate" else slice(n - before, n)
            part = x[tuple(index)]
            parts.append(function.broadcast_to(part, x.shape[:axis] + (before,) + x.shape[axis + 1:])
                         if mode == "replicate" else part)
        parts.append(x)
        if after:
            index[axis] = slice(n - 1, n) if mode == "replicate" else slice(0, after)
            part = x[tuple(index)]
            parts.append(function.broadcast_to(part, x.shape[:axis] + (after,) + x.shape[axis + 1:])
                         if mode == "replicate" else part)
        x = function.concat(parts, axis) if len(parts) > 1 else x
    return x


def pad(op: Callable, input: Tensor, pad: Any, mode: str = "constant", value: Any = None) -> Tensor:
    """``mint.nn.functional.pad``: 'constant' and 'reflect' are ``ops.pad``; 'replicate' and 'circular'
    are composed here (the pairs start at the last dim, as ``ops.pad``'s)."""
    if mode not in ("replicate", "circular"):
        return op(input, pad, mode, value)
    if value is not None:
        raise InvalidParamError(f"pad: value={value!r} is only used with mode='constant'")
    flat = tuple(int(p) for p in pad)
    if len(flat) % 2 or len(flat) // 2 > input.ndim or any(p < 0 for p in flat):
        raise InvalidParamError(f"pad: pad={list(flat)} must be an even number of ints >= 0, at most 2 per "
                                f"dimension of the input's shape {input.shape}")
    pairs = [tuple(flat[i:i + 2]) for i in reversed(range(0, len(flat), 2))]
    return _edge_pad(input, pairs, mode)


def gelu(op: Callable, input: Tensor, approximate: str = "none") -> Tensor:
    """GELU, MindSpore's (PyTorch's) default the exact erf form ``x / 2 * (1 + erf(x / sqrt 2))``;
    'tanh' is ``ops.gelu``."""
    if approximate == "tanh":
        return function.gelu(input, "tanh")
    if approximate != "none":
        raise InvalidParamError(f"gelu: approximate={approximate!r} must be 'none' or 'tanh'")
    return input * 0.5 * (function.erf(input * (1.0 / math.sqrt(2.0))) + 1.0)


def one_hot(op: Callable, tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot rows on a new last dim; ``num_classes=-1`` is the largest index + 1, which depends
    on the data (PyNative only: a graph's shapes are fixed when it is traced)."""
    if tensor.dtype not in (mstype.int32, mstype.int64):
        raise InvalidParamError(f"one_hot: tensor must be int32 or int64, got {tensor.dtype}")
    if num_classes == -1:
        if tensor.is_symbolic:
            raise InvalidParamError("one_hot: num_classes=-1 reads the data; in GRAPH_MODE give num_classes")
        num_classes = int(np.max(tensor.asnumpy())) + 1 if tensor.size else 0
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 0:
        raise InvalidParamError(f"one_hot: num_classes={num_classes!r} must be -1 or an int >= 0")
    out = op(tensor, num_classes, Tensor(1, mstype.int64), Tensor(0, mstype.int64), -1)
    return out if out.dtype == mstype.int64 else function.cast(out, mstype.int64)


def normalize(op: Callable, input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input / max(||input||_p along dim, eps)``."""
    if p == 2.0:
        norm = function.sqrt((input * input).sum(dim, keepdims=True))
    elif p == 1.0:
        norm = function.abs(input).sum(dim, keepdims=True)
    else:
        norm = (function.abs(input) ** p).sum(dim, keepdims=True) ** (1.0 / p)
    return input / function.maximum(norm, Tensor(eps, input.dtype))


def linear(op: Callable, input: Tensor, weight: Tensor, bias: Any = None) -> Tensor:
    """``input @ weight.T + bias`` (weight (out, in), or (in,) for a vector product)."""
    out = op(input, function.t(weight) if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


def embedding(op: Callable, input: Tensor, weight: Tensor, padding_idx: Any = None, max_norm: Any = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False) -> Tensor:
    """Rows of ``weight`` gathered by ``input``; the rows at ``padding_idx`` are returned but give
    ``weight`` no gradient (as MindSpore's Embedding)."""
    if max_norm is not None:
        raise InvalidParamError("embedding: max_norm (renormalising weight rows in place) is not supported here; "
                                "leave it None")
    if scale_grad_by_freq is not False:
        raise InvalidParamError("embedding: scale_grad_by_freq=True is not supported here; leave it False")
    rows = op(weight, input, 0)
    if padding_idx is None:
        return rows
    n = weight.shape[0]
    if not -n <= padding_idx < n:
        raise InvalidParamError(f"embedding: padding_idx={padding_idx} must be in [{-n}, {n})")
    mask = function.expand_dims(function.equal(input, padding_idx % n), -1)
    return function.where(mask, function.stop_gradient(rows), rows)


def batch_norm(op: Callable, input: Tensor, running_mean: Any, running_var: Any, weight: Any = None,
               bias: Any = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch norm over dim 1 (N, C, ...): training normalises with the batch's mean and biased variance
    and updates the running ones in place, PyTorch's way (running = (1 - momentum) * running + momentum *
    batch, the variance unbiased); else the running statistics, which get no gradient (BatchNormExt's)."""
    if input.ndim < 2:
        raise InvalidParamError(f"batch_norm: input must have rank >= 2 (N, C, ...), got shape {input.shape}")
    axes = (0,) + tuple(range(2, input.ndim))
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if training:
        mean = op(input, axes, True)
        centred = input - mean
        var = op(centred * centred, axes, True)
        count = input.size // input.shape[1]
        if running_mean is not None:
            hold_value(running_mean, running_mean * (1.0 - momentum) + function.reshape(mean, (-1,)) * momentum)
        if running_var is not None:
            unbiased = function.reshape(var, (-1,)) * (count / max(count - 1, 1))
            hold_value(running_var, running_var * (1.0 - momentum) + unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise InvalidParamError("batch_norm: running_mean and running_var are needed when training=False")
        # running statistics are buffers: BatchNormExt's bprop gives them zero gradients (OutZeros)
        mean = function.stop_gradient(function.reshape(running_mean, shape))
        var = function.stop_gradient(function.reshape(running_var, shape))
        centred = input - mean
    out = centred * function.rsqrt(var + eps)
    if weight is not None:
        out = out * function.reshape(weight, shape)
    if bias is not None:
        out = out + function.reshape(bias, shape)
    return out


def conv_transpose2d(op: Callable, input: Tensor, weight: Tensor, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """``ops.conv_transpose2d`` (its home: MindSpore serves one op under both names)."""
    return function.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


# ------------------------------------------------------------------ top-level mint functions
def squeeze(op: Callable, input: Tensor, dim: Any) -> Tensor:
    """The dims in ``dim`` (an int or a tuple) of size 1 removed; any other is kept (PyTorch's rule)."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int) or not -max(input.ndim, 1) <= d < max(input.ndim, 1):
            raise InvalidParamError(f"squeeze: dim {d!r} is out of range for a {input.ndim}-d input")
    keep = tuple(sorted({d % input.ndim for d in dims if input.ndim and input.shape[d] == 1}))
    return op(input, keep) if keep else function.reshape(input, input.shape)


def _size(size: tuple) -> tuple:
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)


def _check_device(name: str, device: Any) -> None:
    """``device=``: the one emulated Ascend device (None, 'Ascend', 'npu'); another is refused."""
    if device not in DEVICES:
        raise InvalidParamError(f"{name}: device={device!r} is not served; the emulator has one Ascend device "
                                f"(leave it None or use one of {DEVICES[1:]})")


def empty(op: Callable, size: tuple, dtype: Any = None, device: Any = None) -> Tensor:
    """``mint.empty(*size, dtype=None, device=None)``: a float32 (or ``dtype``) tensor of ``size``; its
    values are unspecified in MindSpore, zeros here."""
    _check_device("empty", device)
    return op(_size(size), mstype.float32 if dtype is None else dtype)


def empty_like(op: Callable, input: Tensor, dtype: Any = None, device: Any = None, pin_memory: bool = False) -> Tensor:
    """A tensor of ``input``'s shape and (or ``dtype``) dtype; unspecified values in MindSpore, zeros here."""
    _check_device("empty_like", device)
    if pin_memory is not False:
        raise InvalidParamError("empty_like: pin_memory=True (page-locked host memory) is not served; leave it False")
    return op(input, dtype=dtype)


def einsum(op: Callable, equation: str, operands: tuple) -> Tensor:
    """``mint.einsum(equation, *operands)``, the operands also as one list or tuple (PyTorch's form)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return op(equation, *operands)


def meshgrid(op: Callable, tensors: tuple, indexing: Any = None) -> tuple:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return op(*tensors, indexing=MESHGRID_DEFAULT_INDEXING if indexing is None else indexing)


def allclose(op: Callable, input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    """A Python bool: whether ``isclose`` holds everywhere (PyNative: it reads the data)."""
    return bool(op(input, other, rtol, atol, equal_nan).all().item())


def bitwise_not(op: Callable, input: Tensor) -> Tensor:
    """``~input``: logical not for bool, two's complement not for integers."""
    if input.dtype == mstype.bool_:
        return function.logical_not(input)
    if mstype.dtype_to_pytype(input.dtype) is not int:
        raise InvalidParamError(f"bitwise_not: input must be bool or an integer type, got {input.dtype}")
    return op(input)


def clone(op: Callable, input: Tensor) -> Tensor:
    """A new tensor with ``input``'s values (a new Tensor: in-place ops on one leave the other)."""
    return op(input, input.shape)


def vdot(op: Callable, input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-d tensors (real dtypes: no conjugate)."""
    if input.ndim != 1 or other.ndim != 1:
        raise InvalidParamError(f"vdot: input and other must be 1-d, got shapes {input.shape} and {other.shape}")
    return op(input, other).sum()


def running_extreme(op: Callable, input: Any, dim: int) -> tuple[Tensor, Tensor]:
    """``mint.cummax`` / ``mint.cummin``: the op's (values, indices) with int64 indices, as mint returns them
    (``ops.cummin``'s are int32)."""
    values, indices = op(input, dim)
    return values, function.cast(indices, mstype.int64)
