"""The ``Tensor`` methods served by ``mindspore.ops`` (MindSpore's ``ops/tensor_method.py``), and the
routing that ``mindspore.mint`` shares with them.

Most of MindSpore 2.10's Tensor methods are the ops function of the same (or a related) name with the
tensor as its first argument, under the method's own signature (``x.split(split_size, dim=0)`` is
``ops.split(x, split_size_or_sections, axis)``). :data:`TENSOR_METHODS` lists them as *routes*: the
method binds a call to the signature the table (frontend/signatures.json) records for it, then calls
the op with each argument under the op's parameter of the same name, the rest in order
(:func:`route`). A method whose op ``mindspore.ops`` does not serve is not installed: it stays
missing, never a stub, and becomes a method as soon as the op is served.

MindSpore dispatches a method between overloads; the table records the first. A call that does not
bind to it is tried against the op's own parameters (the older overload, ``x.split(2, axis=1)``)
when the method and the op share a name.

In-place methods (``x.add_(y)``) compute the out-of-place result, cast to the tensor's dtype, and make
the tensor hold it (``common.tensor.hold_value``): its data in PyNative; in GRAPH_MODE later reads of the
tensor see the new value, and a Parameter is assigned (a graph update), as MindSpore does.
"""
from __future__ import annotations

import builtins
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from ascendemu.errors import ArgumentError, InvalidParamError

from ..api_coverage import table_entry, table_signature
from ..common import dtype as mstype
from ..common.tensor import Tensor, hold_value, sequence_as_tensor
from . import function
from ._utils import _static_ints, bind_arguments, check_arg_int, check_kept_default

__all__ = ["Route", "route", "recorded_signature", "alpha_scaled", "TENSOR_METHODS", "install_tensor_methods", "served_op"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@dataclass(frozen=True)
class Route:
    """How a caller (a Tensor method, a mint function) reaches an ops function.

    ``op``: the ops function's name. ``body``: None to pass the caller's arguments on by name, else in
    order (:func:`route`); or ``body(op, **arguments)``, for what a renaming cannot say. ``inplace``:
    the tensor takes the result (a Tensor method only)."""

    op: str
    body: Callable[..., Any] | None = None
    inplace: bool = False


def served_op(name: str) -> Callable | None:
    """The ops function ``name`` as ``mindspore.ops`` serves it now, or None."""
    return getattr(function, name) if name in function.FUNCTIONS else None


def _argument_map(caller: inspect.Signature, op: Callable, skip: int) -> dict[str, str | None]:
    """Caller parameter -> the op's parameter it is passed as: the one of the same name, else the next
    op parameter not yet taken, in order; None where the op has no place for it (it must keep its
    default). ``skip``: the op's leading parameters the caller fills itself (a method's tensor)."""
    op_params = [p.name for p in list(inspect.signature(op).parameters.values())[skip:]
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    free = [p for p in op_params if p not in caller.parameters]
    out: dict[str, str | None] = {}
    for name in caller.parameters:
        out[name] = name if name in op_params else (free.pop(0) if free else None)
    return out


def route(label: str, qualified: str, spec: Route, *, method: bool) -> Callable | None:
    """The callable serving ``qualified`` (``mindspore.Tensor.split``, ``mindspore.mint.sum``) through
    ``spec``, with the table's signature; None if ``spec.op`` is not served (or the table lacks it).
    ``method``: the callable takes the tensor first (``self``), in front of the table's parameters."""
    op = served_op(spec.op)
    signature = recorded_signature(qualified)
    if op is None or signature is None:
        return None
    mapping = None if spec.body is not None else _argument_map(signature, op, 1 if method else 0)
    # MindSpore's other overload: the body's own parameters, or (a method named as its op) the op's
    legacy = (inspect.signature(spec.body) if spec.body is not None
              else inspect.signature(op) if method and spec.op == label.rstrip("_") else None)

    def call(head: tuple, args: tuple, kwargs: dict) -> Any:
        try:
            bound = bind_arguments(label, signature, args, kwargs).arguments
        except ArgumentError as error:
            if legacy is None:
                raise
            lead = (op, *head) if spec.body is not None else head
            try:
                legacy.bind(*lead, *args, **kwargs)
            except TypeError:
                raise error from None
            return spec.body(*lead, *args, **kwargs) if spec.body is not None else op(*head, *args, **kwargs)
        if spec.body is not None:
            return spec.body(op, *head, **bound)
        passed = {}
        for name, value in bound.items():
            target = mapping[name]
            if target is None:
                check_kept_default(label, signature.parameters[name], value)
            else:
                passed[target] = value
        return op(*head, **passed)

    if method:
        def fn(self: Tensor, *args: Any, **kwargs: Any) -> Any:
            result = call((self,), args, kwargs)
            return hold_value(self, result) if spec.inplace else result
        params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                  *signature.parameters.values()]
        fn.__signature__ = signature.replace(parameters=params)
    else:
        def fn(*args: Any, **kwargs: Any) -> Any:
            return call((), args, kwargs)
        fn.__signature__ = signature
    fn.__name__ = fn.__qualname__ = label
    fn.__doc__ = f"``{qualified}``: ``ops.{spec.op}``" + (" in place" if spec.inplace else "")
    return fn


def recorded_signature(qualified: str) -> inspect.Signature | None:
    """The table's signature of ``qualified``; a method MindSpore defines in C++ without a Python
    signature (``Tensor.dim``, ``Tensor.t``: recorded with no overload) takes no argument; None if the
    table lacks the name."""
    entry = table_entry(qualified)
    if entry is None:
        return None
    return table_signature(qualified) if entry.get("signatures") else inspect.Signature()


# ------------------------------------------------------------------ bodies (what a renaming cannot say)
def _shape_args(shape: tuple) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` alike: MindSpore's ``*shape`` methods take either."""
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)


def _dim(x: Tensor, dim: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int) or not -x.ndim <= dim < builtins.max(x.ndim, 1):
        raise InvalidParamError(f"dim={dim!r} must be an int in [{-x.ndim}, {x.ndim})")
    return dim % builtins.max(x.ndim, 1)


def _select(op: Callable, x: Tensor, dim: int, index: int) -> Tensor:
    """``x.select(dim, index)``: the slice at ``index`` along ``dim``, that dimension removed (an index
    past the end is MindSpore's ValueError here, not the IndexError of ``x[...]``)."""
    axis = _dim(x, dim)
    if x.ndim:
        check_arg_int(index, "Tensor.select: index", minimum=-x.shape[axis], maximum=x.shape[axis] - 1)
    return x[(slice(None),) * axis + (index,)]


def _where(op: Callable, x: Tensor, condition: Any, y: Any) -> Tensor:
    """``x.where(condition, y)``: x where condition holds, else y (``ops.where(condition, x, y)``)."""
    return op(condition, x, y)


def _scatter_add(op: Callable, x: Tensor, dim: Any, index: Any, src: Any = None) -> Tensor:
    """``x.scatter_add(dim, index, src)`` is PyTorch's (``tensor_scatter_elements`` adding along dim);
    MindSpore's older overload ``x.scatter_add(indices, updates)`` (two tensors) is ``tensor_scatter_add``.
    Both give a new tensor: ``ops.scatter_add`` (which updates a Parameter) is neither."""
    if src is None:
        return function.tensor_scatter_add(x, dim, index)
    return op(x, index, src, dim, "add")


def _gather(op: Callable, x: Tensor, dim: Any, index: Any) -> Tensor:
    """``x.gather(dim, index)`` is PyTorch's gather (``gather_elements``); MindSpore's older overload
    ``x.gather(input_indices, axis)`` (a tensor first) is ``ops.gather``."""
    if isinstance(dim, Tensor):
        return function.gather(x, dim, index)
    return op(x, dim, index)


def _expanded(x: Tensor, size: tuple) -> tuple[int, ...]:
    """``size`` with each -1 replaced by x's size there (dims aligned from the right)."""
    size, lead = _shape_args(size), None
    lead = len(size) - x.ndim
    if lead < 0:
        raise InvalidParamError(f"expand: size {size} has fewer dims than the tensor's shape {x.shape}")
    return tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(size))


def _expand(op: Callable, x: Tensor, size: tuple) -> Tensor:
    """``x.expand(2, 3)``, ``x.expand((2, 3))`` or, as MindSpore 2.10 takes it too, ``x.expand(Tensor([2, 3]))``."""
    if len(size) == 1 and isinstance(size[0], Tensor):
        size = (_static_ints("expand: size", size[0]),)
    return op(x, _expanded(x, size))


def _broadcast_to(op: Callable, x: Tensor, shape: tuple) -> Tensor:
    return op(x, _expanded(x, shape))


def _permute(op: Callable, x: Tensor, dims: tuple) -> Tensor:
    return op(x, _shape_args(dims))


def _repeat(op: Callable, x: Tensor, repeats: tuple) -> Tensor:
    """``x.repeat(*repeats)``, PyTorch's: the tensor tiled ``repeats`` times per dim (``ops.tile``)."""
    repeats = _shape_args(repeats)
    if len(repeats) < x.ndim:
        raise InvalidParamError(f"repeat: {len(repeats)} repeats for a {x.ndim}-d tensor; give at least one per dim")
    return op(x, repeats)


def _resize(op: Callable, x: Tensor, new_shape: tuple) -> Tensor:
    """``x.resize(*new_shape)``: the elements in order, cut or padded with zeros to the new shape (a
    new tensor, as MindSpore returns)."""
    shape = _shape_args(new_shape)
    n, m = x.size, int(np.prod(shape, dtype=np.int64))
    flat = op(x, (-1,))
    if m < n:
        flat = function.slice(flat, (0,), (m,))
    elif m > n:
        flat = function.cat((flat, function.zeros((m - n,), x.dtype)))
    return op(flat, shape)


def _like(op: Callable, x: Tensor, other: Tensor) -> Tensor:
    return op(x, other.shape)


def _copy(op: Callable, x: Tensor) -> Tensor:
    """A new tensor with x's values (a no-task reshape to x's own shape: its own value in a graph)."""
    return op(x, x.shape)


def _cast_to(dtype: Any) -> Callable:
    def body(op: Callable, x: Tensor) -> Tensor:
        return op(x, dtype)
    return body


def _type(op: Callable, x: Tensor, dtype: Any = None) -> Any:
    """``x.type()``: the dtype's name (``'Float32'``); ``x.type(dtype)``: x cast."""
    return str(x.dtype) if dtype is None else op(x, dtype)


def _type_as(op: Callable, x: Tensor, other: Tensor) -> Tensor:
    return op(x, other.dtype)


def _new_filled(value: Any) -> Callable:
    def body(op: Callable, x: Tensor, size: Any, dtype: Any = None) -> Tensor:
        return op(dtype or x.dtype, (size,) if isinstance(size, int) else tuple(size), value)
    return body


def _new_full(op: Callable, x: Tensor, size: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    return op(dtype or x.dtype, (size,) if isinstance(size, int) else tuple(size), fill_value)


def _fill_(op: Callable, x: Tensor, value: Any) -> Tensor:
    return op(x.dtype, x.shape, value)


def _zero_(op: Callable, x: Tensor) -> Tensor:
    return op(x)


def _copy_(op: Callable, x: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """``x.copy_(src)``: x takes src's values, broadcast to x's shape and cast to its dtype."""
    return op(src if isinstance(src, Tensor) else Tensor(src), x.shape)


def _assign_value(op: Callable, x: Tensor, value: Any) -> Tensor:
    return op(value if isinstance(value, Tensor) else Tensor(value), x.shape)


def alpha_scaled(op: Callable, input: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    """``x.add(other, alpha=a)`` / ``sub`` (and mint's): x with ``a * other`` added (subtracted)."""
    other = sequence_as_tensor(other)       # x.add([1, 2]) converts, as MindSpore's add/sub methods do
    return op(input, other if alpha == 1 else function.mul(other, alpha))


def _metadata(value: Callable[[Tensor], Any]) -> Callable:
    def body(op: Callable, x: Tensor) -> Any:
        return value(x)
    return body


def _transposed(op: Callable, x: Tensor) -> Tensor:
    """``x.T``: the dims reversed."""
    return op(x, tuple(reversed(range(x.ndim))))


def _t(op: Callable, x: Tensor) -> Tensor:
    """``x.t()``: a matrix transposed (a 0-d or 1-d tensor as it is)."""
    if x.ndim > 2:
        raise InvalidParamError(f"Tensor.t: the tensor is {x.ndim}-d; t() takes at most 2 dims (use transpose)")
    return op(x, tuple(reversed(range(x.ndim))))


def _last_two_swapped(op: Callable, x: Tensor) -> Tensor:
    """``x.mT``: ``x.swapaxes(-2, -1)``, as MindSpore defines it (a tensor under 2-D gets swapaxes' error)."""
    return op(x, -2, -1)


def _conj_transposed(op: Callable, x: Tensor) -> Tensor:
    """``x.H``: a matrix (or vector) transposed and conjugated."""
    if x.ndim > 2:
        raise ValueError(f"For 'Tensor.H', the tensor must be 0-D, 1-D or 2-D, but got {x.ndim}-D.")
    return op(function.transpose(x, tuple(reversed(range(x.ndim)))))


def _matrix_adjoint(op: Callable, x: Tensor) -> Tensor:
    """``x.mH`` / ``x.adjoint()``: the last two dims swapped and conjugated."""
    if x.ndim < 2:
        raise ValueError(f"For 'Tensor.mH', the tensor must be at least 2-D, but got {x.ndim}-D.")
    return op(function.transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)))


def _numpy(op: Callable, x: Tensor) -> np.ndarray:
    return x.asnumpy()


# ---- statistics, search, segments, bits (round 2) ----
def _allclose(op: Callable, x: Tensor, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
              equal_nan: bool = False) -> bool:
    """``x.allclose(other)``: whether every element is close (``isclose``), a Python bool."""
    return bool(np.all(op(x, other, rtol, atol, equal_nan).asnumpy()))


def _unique(op: Callable, x: Tensor, sorted: bool = True, return_inverse: bool = False,
            return_counts: bool = False, dim: Any = None) -> Any:
    """``x.unique(sorted=True, return_inverse=False, return_counts=False, dim=None)``: the distinct
    values (sorted; ``sorted=False`` keeps them in order of first appearance), with the int64 inverse
    indices and counts; computed from host data (PyNative or constants), as ``ops.unique``."""
    if dim is not None:
        raise InvalidParamError(f"Tensor.unique: dim={dim!r} is not supported here; leave it None (flattened)")
    op(x)                                                   # the host data must exist (GRAPH_MODE refuses)
    flat = x.asnumpy().reshape(-1)
    values, first, inverse, counts = np.unique(flat, return_index=True, return_inverse=True, return_counts=True)
    if not sorted:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values, counts, inverse = values[order], counts[order], rank[inverse]
    out = [Tensor(values, x.dtype)]
    if return_inverse:
        out.append(Tensor(inverse.reshape(x.shape).astype(np.int64)))
    if return_counts:
        out.append(Tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def _count_nonzero(op: Callable, x: Tensor, dim: Any = None) -> Tensor:
    return op(x, () if dim is None else dim)


def _with_value(op: Callable, x: Tensor, axis: int = 0, keep_dims: bool = False) -> tuple[Tensor, Tensor]:
    """``x.argmax_with_value(axis=0, keep_dims=False)``: (values, int64 indices), as MindSpore's method."""
    values, indices = op(x, axis, keep_dims)
    return values, function.cast(indices, mstype.int64)


def _ptp(op: Callable, x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``x.ptp(axis=None, keepdims=False)``: max - min along ``axis`` (all elements by default)."""
    return function.sub(op(x, axis, keepdims), function.amin(x, axis, keepdims))


def _sum_to_size(op: Callable, x: Tensor, size: Any) -> Tensor:
    """``x.sum_to_size(*size)``: x summed down to ``size`` (x's trailing dims broadcast from it)."""
    size = _shape_args(size)
    lead = x.ndim - len(size)
    if lead < 0 or builtins.any(s not in (1, x.shape[lead + i]) for i, s in enumerate(size)):
        raise ValueError(f"For 'sum_to_size', size {size} is not expandable to the tensor's shape {x.shape}")
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and x.shape[lead + i] != 1)
    out = op(x, axes, True) if axes else x
    return function.reshape(out, size)


def _qr_some(op: Callable, x: Tensor, some: bool = True) -> Any:
    """``x.qr(some=True)``: ``ops.qr`` with mode 'reduced' (``some``) or 'complete'."""
    if not isinstance(some, bool):
        raise TypeError(f"For 'Tensor.qr', the type of 'some' should be bool, but got {type(some).__name__}.")
    return op(x, "reduced" if some else "complete")


# method -> Route: the ops function of the method's name unless listed otherwise
_SAME_NAME = """abs  acos acosh add addbmm addcdiv addcmul addmm addmv addr all allclose amax amin aminmax
angle any approximate_equal arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax_with_value argmin_with_value
argsort argwhere asin asinh atan atan2 atanh baddbmm bernoulli bincount bitwise_and bitwise_left_shift bitwise_not
bitwise_or bitwise_right_shift bitwise_xor bmm ceil chunk cholesky cholesky_inverse cholesky_solve clamp clip
col2im conj copysign cos cosh cov cross cummax cummin cumprod cumsum deg2rad det diag diagflat
diagonal diagonal_scatter diff digamma div  dot dsplit eigvals equal erf erfc erfinv exp expm1 flip fliplr
flipud float_power floor floor_divide fmax fmin fmod fold frac gather_elements gather_nd gcd ge geqrf ger
greater greater_equal gt hardshrink heaviside histc hsplit hypot i0 igamma igammac imag index_add index_fill
index_put index_select inner inverse invert isclose isfinite isinf isnan isneginf isposinf isreal kthvalue lcm
ldexp le lerp less less_equal lgamma log log10 log1p log2 log_matrix_determinant logaddexp logaddexp2
logcumsumexp logdet logical_and logical_not logical_or logical_xor logit logsumexp lt lu_solve masked_fill
masked_scatter masked_select matmul matrix_determinant matrix_power maximum median minimum  moveaxis movedim msort
mul multinomial  mvlgamma nan_to_num nanmean nanmedian nanquantile nansum narrow ne neg  nextafter
nonzero norm not_equal orgqr ormqr outer positive pow prod qr quantile rad2deg ravel real reciprocal remainder
renorm repeat_interleave reverse reverse_sequence roll rot90 round rsqrt scatter
searchsorted select_scatter sgn sigmoid sign signbit sin sinc sinh
slice_scatter slogdet soft_shrink softmax sort split sqrt square std sub subtract svd swapaxes swapdims t take tan
tanh tensor_split tile topk trace triangular_solve tril triu  trunc unbind unfold 
unique_consecutive unique_with_pad unsorted_segment_max unsorted_segment_min unsorted_segment_prod unsqueeze var
vsplit xdivy xlogy""".split()

# methods named otherwise than their op (MindSpore's aliases)
_ALIASES = {"eq": "equal", "top_k": "topk", "absolute": "abs", "divide": "div", "true_divide": "div",
            "mm": "matmul", "multiply": "mul", "negative": "neg", "inv": "reciprocal",
            # x.scatter_<reduce>(indices, updates) is MindSpore's tensor_scatter_<reduce> (a new tensor), not the
            # Parameter-updating ops.scatter_<reduce>
            **{f"scatter_{r}": f"tensor_scatter_{r}" for r in ("div", "max", "min", "mul", "sub")}}

_CASTS = {"float": mstype.float32, "half": mstype.float16, "double": mstype.float64, "int": mstype.int32,
          "long": mstype.int64, "short": mstype.int16, "byte": mstype.uint8, "bool": mstype.bool_,
          "bfloat16": mstype.bfloat16}

TENSOR_METHODS: dict[str, Route] = {
    **{name: Route(name) for name in _SAME_NAME},
    **{name: Route(op) for name, op in _ALIASES.items()},
    **{name: Route("cast", _cast_to(dtype)) for name, dtype in _CASTS.items()},
    "add": Route("add", alpha_scaled), "sub": Route("sub", alpha_scaled), "subtract": Route("sub", alpha_scaled),
    "select": Route("reshape", _select), "where": Route("select", _where), "gather": Route("gather_elements", _gather),
    "scatter_add": Route("tensor_scatter_elements", _scatter_add),
    "expand": Route("broadcast_to", _expand), "broadcast_to": Route("broadcast_to", _broadcast_to),
    "expand_as": Route("broadcast_to", _like), "view_as": Route("reshape", _like),
    "reshape_as": Route("reshape", _like), "permute": Route("permute", _permute), "repeat": Route("tile", _repeat),
    "resize": Route("reshape", _resize), "copy": Route("reshape", _copy), "clone": Route("reshape", _copy),
    "contiguous": Route("reshape", _copy), "numpy": Route("reshape", _numpy),
    "type": Route("cast", _type), "type_as": Route("cast", _type_as),
    "dim": Route("reshape", _metadata(lambda x: x.ndim)), "ndimension": Route("reshape", _metadata(lambda x: x.ndim)),
    "numel": Route("reshape", _metadata(lambda x: x.size)), "nelement": Route("reshape", _metadata(lambda x: x.size)),
    "is_contiguous": Route("reshape", _metadata(lambda x: True)),
    "is_floating_point": Route("reshape", _metadata(lambda x: x.dtype.name.startswith(("float", "bfloat")))),
    "is_signed": Route("reshape", _metadata(lambda x: not x.dtype.name.startswith(("uint", "bool")))),
    "is_complex": Route("reshape", _metadata(lambda x: x.dtype.name.startswith("complex"))),
    "new_zeros": Route("fill", _new_filled(0)), "new_ones": Route("fill", _new_filled(1)),
    "new_full": Route("fill", _new_full), "fill": Route("fill", _fill_),
    "T": Route("transpose", _transposed), "t": Route("transpose", _t),
    # in place: the tensor takes the result
    "add_": Route("add", alpha_scaled, inplace=True), "sub_": Route("sub", alpha_scaled, inplace=True),
    "fill_": Route("fill", _fill_, inplace=True), "zero_": Route("zeros_like", _zero_, inplace=True),
    "copy_": Route("broadcast_to", _copy_, inplace=True),
    "assign_value": Route("broadcast_to", _assign_value, inplace=True),
    # statistics, search, segments, bits (round 2)
    "allclose": Route("isclose", _allclose), "unique": Route("unique", _unique),
    "count_nonzero": Route("count_nonzero", _count_nonzero), "argmax_with_value": Route("max", _with_value),
    "argmin_with_value": Route("min", _with_value), "ptp": Route("amax", _ptp), "sum_to_size": Route("sum", _sum_to_size),
    # linear algebra (round 2)
    "qr": Route("qr", _qr_some),
    # random (bodies in ops/function/random_func.py)
    "uniform": Route("uniform_", function.random_func._uniform_method), "uniform_": Route("uniform_", inplace=True),
    "normal_": Route("normal_", inplace=True),
    # array breadth 2 (bodies in ops/function/array_func.py)
    "take": Route("take", function.array_func._take_method), "inplace_update": Route("inplace_update"),
    "index_add_": Route("index_add", function.array_func._index_add_dim, inplace=True),
    **{name + tail: Route(gate, body, inplace=tail == "_") for tail in ("", "_") for name, gate, body in (
        ("masked_scatter", "masked_fill", function.array_func._masked_scatter_method),
        ("fill_diagonal", "diagflat", function.array_func._fill_diagonal_method),
        ("index_put", "index_fill", function.array_func._index_put_method))},
    # complex numbers
    "H": Route("conj", _conj_transposed), "mH": Route("conj", _matrix_adjoint),
    "adjoint": Route("conj", _matrix_adjoint), "mT": Route("swapaxes", _last_two_swapped),
    # samplers and generators (MindSpore 2.10's Tensor.bernoulli is BernoulliExt's: input is the probability)
    "bernoulli": Route("bernoulli_ext"), "bernoulli_": Route("bernoulli_", inplace=True),
    "random_categorical": Route("random_categorical"),
    "exponential_": Route("exponential_", inplace=True), "random_": Route("random_", inplace=True),
    # linear algebra and statistics
    "lstsq": Route("lstsq"),
    "triangular_solve": Route("matrix_solve", function.math_func._triangular_solve_method),
    # nn compositions
    "put_": Route("put_"), "scatter_sub": Route("tensor_scatter_sub"),
    "choose": Route("gather_elements", function.array_func._choose_method),
    "itemset": Route("tensor_scatter_update", function.array_func._itemset_method),
    "index_copy_": Route("tensor_scatter_elements", function.array_func._index_copy_method, inplace=True),
    "new_empty": Route("zeros", function.array_func._new_empty_method),
    # image, detection and windows
    "unique_with_pad": Route("unique_with_pad"),
    # collectives
    "move_to": Route("move_to"),
}
# the in-place forms of routed methods: ``x.mul_(y)`` is ``x.mul(y)`` taken by x
for _name in ("mul div clamp exp log floor sigmoid tanh sign floor_divide remainder masked_fill index_add "
              "index_fill scatter scatter_add addmm erfinv").split():
    TENSOR_METHODS.setdefault(_name + "_", Route(TENSOR_METHODS[_name].op, TENSOR_METHODS[_name].body, inplace=True))


_PROPERTIES = frozenset({"T", "H", "mH", "mT"})       # routed names MindSpore's Tensor has as properties


def install_tensor_methods(register: Callable[[str, Callable], None]) -> list[str]:
    """Register each method of :data:`TENSOR_METHODS` whose op is served (``register(name, method)``);
    returns the names registered."""
    names = []
    for name, spec in TENSOR_METHODS.items():
        method = route(name, f"mindspore.Tensor.{name}", spec, method=True)
        if method is not None and name in _PROPERTIES:
            method = property(method, doc=method.__doc__)
        if method is not None:
            register(name, method)
            names.append(name)
    return names
