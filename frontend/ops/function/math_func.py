"""``mindspore.ops.function.math_func``: the functional forms of the math ops: the registry's
elementwise ones (generated), reductions (``ops.sum``, ``ops.mean`` ...) and ``ops.matmul``."""
from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError, RuntimeParamError, check_int
from ascendemu.kernels.ops.common import INTS

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .. import operations
from .._utils import _axes, _static_int, check_arg_int, defined_here
from ..operations.array_ops import Concat, ExpandDims, Reshape, Select, Sort, Squeeze, Transpose
from ..operations.math_ops import (FLOAT_DTYPES, Abs, Add, BatchMatMul, CumProd, CumSum, Div, Equal, Exp, FloorDiv,
                                   Greater, GreaterEqual, IsFinite, IsNan, Less, LessEqual, LinSpace, Log, Log1p,
                                   LogicalAnd, LogicalNot, LogicalOr, LogicalXor, MatMul, Maximum, Mul, Neg, NotEqual,
                                   Pow, ReduceAll, ReduceAny, ReduceMax, ReduceMean, ReduceMin, ReduceProd,
                                   ReduceSum, Sign, Sqrt, Sub, Trunc, TruncateDiv, add_n, einsum_of, floating,
                                   log_cum_sum_exp, p_norm)
from ..operations.other_ops import StopGradient
from ..composite_op import install_composite_functions
from ..primitive import _functional, _promote, _tensor, apply_op, generated_functions
from .array_func import _arg_reduce, cast
# array breadth 2: composed in array_func, defined here by MindSpore
from .array_func import (block_diag, cartesian_prod, combinations, diag_embed, dstack, rot90,  # noqa: F401
                         row_stack, tril_indices, triu_indices, vander, vstack)

# square, add, equal, ...: the functional forms of the registry's operand-only ops
globals().update(generated_functions("math_func", vars(operations)))


def _integral_as_int64(x: Any, dtype: Any) -> Any:
    """The dtype a sum or product computes in: ``dtype`` if given, else int64 for integer and bool inputs
    (MindSpore's SumExt/ProdExt: ``ops.sum`` of int32 is an int64 tensor), else the input's own."""
    if dtype is None and _tensor(x).dtype.name in INTS + ("bool",):
        return mstype.int64
    return dtype


def sum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The sum over ``dim``; with ``dtype``, of ``input`` cast to it first (MindSpore's result dtype;
    integer and bool inputs sum as int64)."""
    return ReduceSum(keepdim)(_cast_to(input, _integral_as_int64(input, dtype)), dim)


def mean(x: Any, axis: Any = None, keep_dims: bool = False) -> Tensor:
    """The mean over ``axis``; of integers, the float64 mean truncated toward zero in their dtype
    (MindSpore 2.10: ops.mean of int32 [-3, -1, -3] is int32 -2)."""
    x = _tensor(x)
    if x.dtype.name in INTS:
        return cast(ReduceMean(keep_dims)(cast(x, mstype.float64), axis), x.dtype)
    return ReduceMean(keep_dims)(x, axis)


def _no_initial_where(name: str, initial: Any, where: Any) -> None:
    """amax/amin's ``initial`` and ``where`` (numpy's) are not served: refused unless left None."""
    for arg, value in (("initial", initial), ("where", where)):
        if value is not None:
            raise InvalidParamError(f"{name}: {arg}={value!r} is not supported here; leave it None")


def amax(input: Any, axis: Any = None, keepdims: bool = False, *, initial: Any = None, where: Any = None) -> Tensor:
    _no_initial_where("amax", initial, where)
    return ReduceMax(keepdims)(input, axis)


def all(input: Any, axis: Any = None, keep_dims: bool = False) -> Tensor:
    return ReduceAll(keep_dims)(input, axis)


def amin(input: Any, axis: Any = None, keepdims: bool = False, *, initial: Any = None, where: Any = None) -> Tensor:
    _no_initial_where("amin", initial, where)
    return ReduceMin(keepdims)(input, axis)


def matmul(input: Any, other: Any) -> Tensor:
    """numpy.matmul's rules, as MindSpore's ops.matmul: 2-D @ 2-D is MatMul, higher ranks (broadcast
    batch dims) BatchMatMul; a 1-D operand is a row (left) or column (right) vector whose dimension
    is dropped from the result."""
    x, y = _tensor(input), _tensor(other)
    if x.ndim == 0 or y.ndim == 0:
        raise InvalidParamError(f"matmul: inputs must have rank >= 1, got {x.shape} and {y.shape}; "
                                "use ops.mul for a scalar")
    vector_x, vector_y = x.ndim == 1, y.ndim == 1
    if vector_x:
        x = ExpandDims()(x, 0)
    if vector_y:
        y = ExpandDims()(y, 1)
    out = (MatMul() if x.ndim == y.ndim == 2 else BatchMatMul())(x, y)
    if vector_y:
        out = Squeeze(-1)(out)
    if vector_x:
        out = Squeeze(-2 if out.ndim >= 2 and not vector_y else -1)(out)
    return out


def bmm(input_x: Any, mat2: Any) -> Tensor:
    return BatchMatMul()(input_x, mat2)


def argmin(input: Any, axis: int | None = None, keepdims: bool = False) -> Tensor:
    return _arg_reduce("Argmin", input, axis, keepdims)[0]


def permute(input: Any, axis: Sequence[int]) -> Tensor:
    """``ops.permute(input, axis)``: input's dimensions in the order ``axis`` (a Transpose)."""
    return Transpose()(input, axis)


# ---- math functions composed of ops (issue 21) ----
# MindSpore's other names of served elementwise ops, with the table's signatures
for _alias, _prim in (("tensor_add", Add), ("tensor_mul", Mul), ("tensor_div", Div), ("tensor_exp", Exp),
                      ("tensor_ge", GreaterEqual), ("tensor_gt", Greater), ("tensor_le", LessEqual),
                      ("tensor_pow", Pow), ("pows", Pow), ("tensor_muls", Mul), ("multiply", Mul),
                      ("negative", Neg), ("true_divide", Div), ("eq", Equal), ("absolute", Abs)):
    globals()[_alias] = _functional(_prim, _alias, __name__)

LN2, LN10 = math.log(2.0), math.log(10.0)
# the norm orders that need singular values (an SVD, which is not served)
SPECTRAL_ORDERS = ("nuc", 2, -2)


def positive(input: Any) -> Tensor:
    """The input itself (MindSpore refuses bool tensors)."""
    x = _tensor(input)
    if x.dtype == mstype.bool_:
        raise TypeError("positive: input must not be a bool tensor")
    return x


def reduce_sum(x: Any, axis: Any = ()) -> Tensor:
    return ReduceSum()(x, axis)


def reduce_mean(x: Any, axis: Any = ()) -> Tensor:
    return ReduceMean()(x, axis)


def reduce_max(x: Any, axis: Any = ()) -> Tensor:
    return ReduceMax()(x, axis)


def reduce_min(x: Any, axis: Any = ()) -> Tensor:
    return ReduceMin()(x, axis)


def subtract(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """input - alpha * other."""
    return Sub()(input, other if alpha == 1 else Mul()(other, alpha))


# divide's rounding modes: None (true division), "floor" and "trunc"
ROUNDING_MODES = (None, "floor", "trunc")


def divide(input: Any, other: Any, *, rounding_mode: Any = None) -> Tensor:
    """input / other, rounded down (``"floor"``) or toward zero (``"trunc"``) if asked."""
    if rounding_mode not in ROUNDING_MODES:
        raise InvalidParamError(f"divide: rounding_mode={rounding_mode!r} must be one of {ROUNDING_MODES}")
    prim = {None: Div, "floor": FloorDiv, "trunc": TruncateDiv}[rounding_mode]
    return prim()(input, other)


def div(input: Any, other: Any, *, rounding_mode: Any = None) -> Tensor:
    """MindSpore's ``ops.div``: :func:`divide` under its own name (so a misuse's TypeError names div)."""
    return divide(input, other, rounding_mode=rounding_mode)


def addn(x: Any) -> Tensor:
    return add_n("addn", x)


def accumulate_n(x: Any) -> Tensor:
    return add_n("accumulate_n", x)


def _cast_to(x: Any, dtype: Any) -> Tensor:
    return _tensor(x) if dtype is None else cast(x, dtype)


def cumsum(x: Any, axis: Any, dtype: Any = None) -> Tensor:
    return CumSum()(_cast_to(x, dtype), axis)


def cumprod(input: Any, dim: Any, dtype: Any = None) -> Tensor:
    return CumProd()(_cast_to(input, dtype), dim)


def cummax(input: Any, axis: Any) -> tuple[Tensor, Tensor]:
    """(running maxima along ``axis``, the index each came from: the later one on ties; int64)."""
    return apply_op("Cummax", [input], {"axis": _static_int("cummax: axis", axis)})


def cummin(input: Any, axis: Any) -> tuple[Tensor, Tensor]:
    """(running minima along ``axis``, the index each came from: the later one on ties; int32)."""
    return apply_op("Cummin", [input], {"axis": _static_int("cummin: axis", axis)})


def prod(input: Any, axis: Any = None, keep_dims: bool = False, dtype: Any = None) -> Tensor:
    return ReduceProd(keep_dims)(_cast_to(input, _integral_as_int64(input, dtype)), axis)


def any(input: Any, axis: Any = None, keep_dims: bool = False) -> Tensor:
    return ReduceAny(keep_dims)(input, axis)


def count_nonzero(x: Any, axis: Any = (), keep_dims: bool = False, dtype: Any = mstype.int32) -> Tensor:
    """The number of non-zero elements over ``axis`` (all by default), as ``dtype``."""
    nonzero = cast(NotEqual()(x, 0), mstype.int32)
    return cast(ReduceSum(keep_dims)(nonzero, axis), dtype)


# ----------------------------------------------------------------------------------------- norms

def _matrix_norm(x: Tensor, ord: Any, dims: tuple[int, int], keepdim: bool) -> Tensor:
    """The matrix norm over the two ``dims``: Frobenius, or the max/min absolute column (ord +-1) or
    row (ord +-inf) sum."""
    rows, cols = (d % x.ndim for d in dims)
    if rows == cols:
        raise InvalidParamError(f"norm: dim={dims} must name two different dimensions")
    if ord == "fro":
        return Sqrt()(ReduceSum(keepdim)(Mul()(x, x), (rows, cols)))
    if ord in SPECTRAL_ORDERS:
        raise InvalidParamError(f"norm: ord={ord!r} needs singular values (an SVD), which are not served here; use "
                                "'fro', 1, -1, inf or -inf")
    if ord not in (1, -1, math.inf, -math.inf) or isinstance(ord, bool):
        raise InvalidValueError(f"norm: ord={ord!r} is not a matrix norm order; use 'fro', 'nuc', 1, -1, 2, -2, "
                                "inf or -inf")
    summed, picked = (rows, cols) if ord in (1, -1) else (cols, rows)
    sums = ReduceSum(True)(Abs()(x), summed)
    out = (ReduceMax if ord > 0 else ReduceMin)(True)(sums, picked)
    return out if keepdim else Squeeze((rows, cols))(out)


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """MindSpore's ops.norm: a vector norm over one dim (or every element when ``dim`` and ``ord`` are
    None), a matrix norm over two (a 2-D input's default dims); ord 2, -2 and 'nuc' need an SVD and are
    refused."""
    x = floating(_cast_to(A, dtype))
    if isinstance(dim, int) and not isinstance(dim, bool):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return p_norm(x, 2, (), keepdim)
        if x.ndim not in (1, 2):
            raise InvalidParamError(f"norm: a {x.ndim}-D input with ord={ord!r} needs dim (one or two dimensions)")
        dim = tuple(range(x.ndim))
    dim = tuple(dim)
    if len(dim) == 1:
        return p_norm(x, 2 if ord is None else ord, dim, keepdim)
    if len(dim) == 2:
        return _matrix_norm(x, "fro" if ord is None else ord, dim, keepdim)
    raise InvalidParamError(f"norm: dim={dim} must name one or two dimensions")


def vector_norm(x: Any, ord: Any = 2, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
    return p_norm(floating(_cast_to(x, dtype)), ord, _axes(axis), keepdims)


def matrix_norm(A: Any, ord: Any = "fro", axis: Any = (-2, -1), keepdims: bool = False, *,
                dtype: Any = None) -> Tensor:
    return _matrix_norm(floating(_cast_to(A, dtype)), ord, tuple(axis), keepdims)


def dist(input: Any, other: Any, p: Any = 2) -> Tensor:
    """The p-norm of input - other over every element."""
    return p_norm(floating(Sub()(input, other)), p, (), False)


# -------------------------------------------------------------------------------- matrix products

def _permute(x: Tensor, perm: tuple[int, ...]) -> Tensor:
    """x transposed by ``perm`` (itself for the identity: no copy)."""
    return x if perm == tuple(builtins.range(len(perm))) else Transpose()(x, perm)


def _contraction_axes(x1: Tensor, x2: Tensor, axes: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """tensor_dot's axes as two tuples of non-negative dims: an int n is x1's last n and x2's first n."""
    if isinstance(axes, int) and not isinstance(axes, bool):
        if not 0 <= axes <= min(x1.ndim, x2.ndim):
            raise InvalidParamError(f"tensor_dot: axes={axes} must be in [0, {min(x1.ndim, x2.ndim)}]")
        return tuple(builtins.range(x1.ndim - axes, x1.ndim)), tuple(builtins.range(axes))
    if not isinstance(axes, (tuple, list)) or len(axes) != 2:
        raise InvalidParamError(f"tensor_dot: axes={axes!r} must be an int or two tuples of dims")
    pair = []
    for x, dims in zip((x1, x2), axes):
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        pair.append(tuple(check_arg_int(d, "tensor_dot: axes") % max(x.ndim, 1) for d in dims))
    if len(pair[0]) != len(pair[1]) or [x1.shape[a] for a in pair[0]] != [x2.shape[b] for b in pair[1]]:
        raise InvalidValueError(f"tensor_dot: axes={axes!r} pair dims of different sizes of {x1.shape} and {x2.shape}")
    return pair[0], pair[1]


def tensor_dot(x1: Any, x2: Any, axes: Any) -> Tensor:
    """The sum of products over the paired ``axes``: x1's free dims, then x2's (one MatMul between
    Transposes and Reshapes)."""
    a, b = _promote(_tensor(x1), _tensor(x2))
    axes_a, axes_b = _contraction_axes(a, b, axes)
    free_a = tuple(d for d in builtins.range(a.ndim) if d not in axes_a)
    free_b = tuple(d for d in builtins.range(b.ndim) if d not in axes_b)
    size = math.prod(a.shape[d] for d in axes_a)
    left = Reshape()(_permute(a, free_a + axes_a), (math.prod(a.shape[d] for d in free_a), size))
    right = Reshape()(_permute(b, axes_b + free_b), (size, math.prod(b.shape[d] for d in free_b)))
    return Reshape()(MatMul()(left, right), tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b))


def dot(input: Any, other: Any) -> Tensor:
    """numpy.dot for inputs of rank >= 2: input's last dim against other's second-to-last."""
    x, y = _tensor(input), _tensor(other)
    if x.ndim < 2 or y.ndim < 2:
        raise InvalidParamError(f"dot: both inputs must have rank >= 2, got shapes {x.shape} and {y.shape}")
    return tensor_dot(x, y, ((x.ndim - 1,), (y.ndim - 2,)))


def inner(input: Any, other: Any) -> Tensor:
    """The sum of products over the last dim of both (a product if either is a scalar)."""
    x, y = _tensor(input), _tensor(other)
    if x.ndim == 0 or y.ndim == 0:
        return Mul()(x, y)
    return tensor_dot(x, y, ((x.ndim - 1,), (y.ndim - 1,)))


def outer(input: Any, vec2: Any) -> Tensor:
    """input[i] * vec2[j] for two 1-D tensors."""
    x, y = _tensor(input), _tensor(vec2)
    if x.ndim != 1 or y.ndim != 1:
        raise InvalidParamError(f"outer: inputs must be 1-D, got shapes {x.shape} and {y.shape}")
    return Mul()(Reshape()(x, (x.shape[0], 1)), Reshape()(y, (1, y.shape[0])))


def vecdot(x: Any, y: Any, *, axis: int = -1) -> Tensor:
    return ReduceSum()(Mul()(x, y), axis)


def mv(mat: Any, vec: Any) -> Tensor:
    m, v = _tensor(mat), _tensor(vec)
    if m.ndim != 2 or v.ndim != 1:
        raise InvalidParamError(f"mv: mat must be 2-D and vec 1-D, got shapes {m.shape} and {v.shape}")
    return matmul(m, v)


def _scaled_sum(input: Any, product: Tensor, beta: Any, alpha: Any) -> Tensor:
    """beta * input + alpha * product (no multiply for a factor of 1)."""
    left = input if beta == 1 else Mul()(input, beta)
    right = product if alpha == 1 else Mul()(product, alpha)
    return Add()(left, right)


def addmm(input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _scaled_sum(input, MatMul()(mat1, mat2), beta, alpha)


def addmv(input: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def baddbmm(input: Any, batch1: Any, batch2: Any, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _scaled_sum(input, BatchMatMul()(batch1, batch2), beta, alpha)


def addbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _scaled_sum(input, ReduceSum()(BatchMatMul()(batch1, batch2), 0), beta, alpha)


def kron(input: Any, other: Any) -> Tensor:
    """The Kronecker product: the ranks padded to one, each pair of dims interleaved and broadcast,
    then merged."""
    x, y = _promote(_tensor(input), _tensor(other))
    rank = max(x.ndim, y.ndim)
    xs, ys = (1,) * (rank - x.ndim) + x.shape, (1,) * (rank - y.ndim) + y.shape
    spread_x = Reshape()(x, tuple(v for d in xs for v in (d, 1)))
    spread_y = Reshape()(y, tuple(v for d in ys for v in (1, d)))
    return Reshape()(Mul()(spread_x, spread_y), tuple(a * b for a, b in zip(xs, ys)))


# ------------------------------------------------------------------------- statistics, log-sum-exp

def _reduced_count(x: Tensor, axes: tuple[int, ...]) -> int:
    return math.prod(x.shape[a] for a in axes) if axes else x.size


def _moments(input: Any, axis: Any, ddof: Any, keepdims: bool) -> tuple[Tensor, Tensor]:
    """(variance with ``ddof`` subtracted from the count, mean) over ``axis`` (every axis by default)."""
    x = floating(input)
    axes = _axes(axis)
    mean_kept = ReduceMean(True)(x, axes)
    centred = Sub()(x, mean_kept)
    squares = ReduceSum(keepdims)(Mul()(centred, centred), axes)
    variance = Div()(squares, Tensor(float(_reduced_count(x, axes) - int(ddof)), x.dtype))
    return variance, (mean_kept if keepdims else ReduceMean(False)(x, axes))


def var(input: Any, axis: Any = None, ddof: Any = 0, keepdims: bool = False) -> Tensor:
    return _moments(input, axis, ddof, keepdims)[0]


def std(input: Any, axis: Any = None, ddof: Any = 0, keepdims: bool = False) -> Tensor:
    return Sqrt()(_moments(input, axis, ddof, keepdims)[0])


def var_mean(input: Any, axis: Any = None, ddof: Any = 0, keepdims: bool = False) -> tuple[Tensor, Tensor]:
    return _moments(input, axis, ddof, keepdims)


def std_mean(input: Any, axis: Any = None, ddof: Any = 0, keepdims: bool = False) -> tuple[Tensor, Tensor]:
    variance, mean_ = _moments(input, axis, ddof, keepdims)
    return Sqrt()(variance), mean_


def _without_nan(input: Any) -> Tensor:
    x = _tensor(input)
    return Select()(IsNan()(x), 0, x) if x.dtype.name in FLOAT_DTYPES else x


def nansum(input: Any, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
    """The sum over ``axis`` with NaNs counted as 0."""
    return ReduceSum(keepdims)(_without_nan(_cast_to(input, dtype)), axis)


def nanmean(input: Any, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
    """The mean over ``axis`` of the elements that are not NaN."""
    x = floating(_cast_to(input, dtype))
    present = cast(LogicalNot()(IsNan()(x)), x.dtype)
    return Div()(ReduceSum(keepdims)(_without_nan(x), axis), ReduceSum(keepdims)(present, axis))


def logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over ``dim``, shifted by the (finite) maximum so exp never overflows; the shift
    carries no gradient."""
    x = floating(input)
    axes = _axes(dim)
    peak = ReduceMax(True)(x, axes)
    shift = StopGradient()(Select()(IsFinite()(peak), peak, 0))
    out = Add()(Log()(ReduceSum(True)(Exp()(Sub()(x, shift)), axes)), shift)
    return out if keepdim else Squeeze(tuple(a % max(x.ndim, 1) for a in axes) if axes else ())(out)


def logaddexp(input: Any, other: Any) -> Tensor:
    """log(exp(x) + exp(y)) as max(x, y) + log1p(exp(-|x - y|))."""
    x, y = floating(input), floating(other)
    return Add()(Maximum()(x, y), Log1p()(Exp()(Neg()(Abs()(Sub()(x, y))))))


def logaddexp2(input: Any, other: Any) -> Tensor:
    """log2(2^x + 2^y) as max(x, y) + log1p(2^-|x - y|) / ln 2."""
    x, y = floating(input), floating(other)
    gap = Exp()(Mul()(Neg()(Abs()(Sub()(x, y))), LN2))
    return Add()(Maximum()(x, y), Div()(Log1p()(gap), LN2))


# ------------------------------------------------------------------------------ scalar functions

def rad2deg(x: Any) -> Tensor:
    return Mul()(floating(x), 180.0 / math.pi)


def deg2rad(x: Any) -> Tensor:
    return Mul()(floating(x), math.pi / 180.0)


def log2(input: Any) -> Tensor:
    return Div()(Log()(floating(input)), LN2)


def log10(input: Any) -> Tensor:
    return Div()(Log()(floating(input)), LN10)


def exp2(input: Any) -> Tensor:
    return Pow()(2.0, floating(input))


def frac(x: Any) -> Tensor:
    """The fractional part, with x's sign: x - trunc(x)."""
    return Sub()(x, Trunc()(x))


def copysign(x: Any, other: Any) -> Tensor:
    """|x| with the sign of ``other`` (negative where other < 0)."""
    magnitude = Abs()(floating(x))
    return Select()(Less()(other, 0), Neg()(magnitude), magnitude)


def approximate_equal(x: Any, y: Any, tolerance: float = 1e-05) -> Tensor:
    """|x - y| < tolerance."""
    return Less()(Abs()(Sub()(x, y)), tolerance)


def make_range(*args: Any) -> tuple[int, ...]:
    """``range(*args)`` as a tuple of ints (MindSpore's helper for loops over constants)."""
    return tuple(builtins.range(*(check_arg_int(a, "make_range: argument") for a in args)))


def mm(input: Any, mat2: Any) -> Tensor:
    """The product of two 2-D tensors."""
    x, y = _tensor(input), _tensor(mat2)
    if x.ndim != 2 or y.ndim != 2:
        raise InvalidValueError(f"mm: inputs must be 2-D, got shapes {x.shape} and {y.shape}")
    return MatMul()(x, y)


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation (letters only: no ellipsis or diagonal), as broadcast products and one sum."""
    return einsum_of(equation, operands[0] if len(operands) == 1 and isinstance(operands[0], (tuple, list))
                     else operands)


# logspace's output dtypes (MindSpore refuses the others)
LOGSPACE_DTYPES = ("float16", "float32", "float64")


def logspace(start: Any, end: Any, steps: Any, base: Any = 10, *, dtype: Any = mstype.float32) -> Tensor:
    """``steps`` values base^t for t evenly spaced from start to end inclusive."""
    target = mstype.to_type(dtype)
    if target.name not in LOGSPACE_DTYPES:
        raise InvalidParamError(f"logspace: dtype={target} must be one of {LOGSPACE_DTYPES}")
    exponents = LinSpace()(_tensor(start) if isinstance(start, Tensor) else float(start), end, steps)
    return cast(Pow()(float(base), exponents), target)


def diff(x: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Tensor:
    """x[i + 1] - x[i] along ``axis`` (after ``prepend``/``append`` are concatenated there); MindSpore
    serves n = 1 only."""
    if check_arg_int(n, "diff: n") != 1:
        raise RuntimeParamError(f"diff: n={n} is not supported; MindSpore computes n=1 only")
    t = _tensor(x)
    dim = check_arg_int(axis, "diff: axis") % max(t.ndim, 1)
    parts = [_tensor(v) for v in (prepend, t, append) if v is not None]
    if len(parts) > 1:
        t = Concat(dim)(parts)
    lead = (slice(None),) * dim
    later, earlier = t[lead + (slice(1, None),)], t[lead + (slice(None, -1),)]
    if t.dtype == mstype.bool_:
        return LogicalXor()(later, earlier)
    return Sub()(later, earlier)


def logcumsumexp(input: Any, axis: Any) -> Tensor:
    """log(cumsum(exp(x))) along ``axis``, without overflow."""
    return log_cum_sum_exp(input, axis)


def ldexp(x: Any, other: Any) -> Tensor:
    """x * 2^other."""
    return Mul()(x, Pow()(2.0, floating(other)))


def float_power(input: Any, exponent: Any) -> Tensor:
    """input^exponent computed in float64, as MindSpore's float_power."""
    def as_double(v: Any) -> Any:
        return cast(v, mstype.float64) if isinstance(v, Tensor) else float(v)
    base, power = as_double(input), as_double(exponent)
    return Pow()(base if isinstance(base, Tensor) else Tensor(base, mstype.float64), power)


def trapz(y: Any, x: Any = None, *, dx: Any = 1.0, dim: int = -1) -> Tensor:
    """The trapezoidal integral of y along ``dim``: with sample points ``x`` (1-D, or y's shape), else
    spacing ``dx``."""
    values = floating(y)
    axis = check_arg_int(dim, "trapz: dim") % max(values.ndim, 1)
    lead = (slice(None),) * axis
    heights = Div()(Add()(values[lead + (slice(1, None),)], values[lead + (slice(None, -1),)]), 2.0)
    if x is None:
        return ReduceSum()(Mul()(heights, dx), axis)
    points = floating(x)
    if points.ndim == 1:
        steps = Sub()(points[1:], points[:-1])
        steps = Reshape()(steps, (steps.shape[0],) + (1,) * (values.ndim - 1 - axis))
    else:
        steps = Sub()(points[lead + (slice(1, None),)], points[lead + (slice(None, -1),)])
    return ReduceSum()(Mul()(heights, steps), axis)


def isposinf(input: Any) -> Tensor:
    x = _tensor(input)
    return Equal()(x, Tensor(np.inf, x.dtype)) if x.dtype.name in FLOAT_DTYPES else NotEqual()(x, x)


def isneginf(input: Any) -> Tensor:
    x = _tensor(input)
    return Equal()(x, Tensor(-np.inf, x.dtype)) if x.dtype.name in FLOAT_DTYPES else NotEqual()(x, x)


def isreal(input: Any) -> Tensor:
    """True everywhere: no device tensor is complex."""
    return Tensor(np.ones(_tensor(input).shape, np.bool_))


def is_complex(input: Any) -> bool:
    """False: no device tensor is complex."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_complex: input must be a Tensor, got {type(input).__name__}")
    return False


def sgn(input: Any) -> Tensor:
    """The sign of a real tensor (ops.sign)."""
    return Sign()(input)


def signbit(input: Any) -> Tensor:
    """x < 0, as MindSpore documents and computes it on every platform (``ops.less``): False for -0.0,
    where numpy's signbit says True."""
    if not isinstance(input, Tensor):
        raise InvalidTypeError(f"For signbit, the input must be a Tensor, but got {type(input).__name__}")
    return Less()(input, 0)


def addr(x: Any, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * x + alpha * outer(vec1, vec2)."""
    return _scaled_sum(x, outer(vec1, vec2), beta, alpha)


def t(input: Any) -> Tensor:
    """A 2-D tensor transposed (a 0-D or 1-D one unchanged)."""
    x = _tensor(input)
    if x.ndim > 2:
        raise InvalidParamError(f"t: input must have rank <= 2, got shape {x.shape}")
    return Transpose()(x, (1, 0)) if x.ndim == 2 else x


def adjoint(x: Any) -> Tensor:
    """The conjugate transpose of the last two dims (a transpose: no device tensor is complex)."""
    v = _tensor(x)
    perm = tuple(builtins.range(v.ndim - 2)) + (v.ndim - 1, v.ndim - 2)
    return Transpose()(v, perm)


def _atleast(inputs: Any, rank: int) -> Any:
    """Each tensor given size-1 dims up to ``rank``: before a 1-D one's dim (and, for rank 3, after it),
    after a 2-D one's."""
    def lift(value: Any) -> Tensor:
        v = _tensor(value)
        if v.ndim >= rank:
            return v
        shape = {0: (1,) * rank, 1: ((1,) + v.shape + (1,))[:rank] if rank == 3 else (1,) * (rank - 1) + v.shape,
                 2: v.shape + (1,)}[v.ndim]
        return Reshape()(v, shape)
    if isinstance(inputs, (tuple, list)):
        return tuple(lift(v) for v in inputs)
    return lift(inputs)


def atleast_1d(inputs: Any) -> Any:
    return _atleast(inputs, 1)


def atleast_2d(inputs: Any) -> Any:
    return _atleast(inputs, 2)


def atleast_3d(inputs: Any) -> Any:
    return _atleast(inputs, 3)


def numel(input: Any) -> int:
    """The number of elements."""
    return _tensor(input).size


def tensor_sub(*args: Any) -> Tensor:
    return Sub()(*args)


def tensor_lt(*args: Any, **kwargs: Any) -> Tensor:
    return Less()(*args, **kwargs)


def median(input: Any, axis: int = -1, keepdims: bool = False) -> tuple[Tensor, Tensor]:
    """(the lower median along ``axis``, its int64 index as MindSpore's): element (n - 1) // 2 of a stable sort."""
    x = _tensor(input)
    rank = max(x.ndim, 1)
    dim = check_int(axis, "median: axis", minimum=-rank, maximum=rank - 1, error=InvalidValueError) % rank
    values, indices = Sort(dim)(x)
    middle = (x.shape[dim] - 1) // 2
    pick = (slice(None),) * dim + ((slice(middle, middle + 1),) if keepdims else (middle,))
    return values[pick], cast(indices[pick], mstype.int64)


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None) -> Tensor:
    """0.5 - 0.5 cos(2 pi k / (N - 1)) for k < N (``periodic``: of a window one longer, its last
    point dropped), a constant: float64 unless ``dtype`` says (MindSpore builds it with numpy)."""
    n = check_arg_int(window_length, "hann_window: window_length", minimum=0)
    length = n + 1 if periodic else n
    k = np.arange(n, dtype=np.float64)
    window = np.ones(n) if length <= 1 else 0.5 - 0.5 * np.cos(2 * np.pi * k / (length - 1))
    return Tensor(window, mstype.float64 if dtype is None else mstype.to_type(dtype))


install_composite_functions(globals(), "mindspore.ops.function.math_func")


# ---- statistics, search, segments, bits (round 2) ----
from ..operations.array_ops import LeftShift, RightShift, UnsortedSegmentSum, _host  # noqa: E402
from ..operations.math_ops import bucketize_of  # noqa: E402


def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Tensor:
    """How often each value in [0, max(input)] occurs (or the sum of its ``weights``), at least
    ``minlength`` bins, float32 as MindSpore's. The bins depend on the values: PyNative or constants."""
    x = _tensor(input)
    if x.ndim != 1:
        raise ValueError(f"For 'bincount', 'input' must be 1-D, but got shape {x.shape}")
    minlength = check_arg_int(minlength, "bincount: minlength", minimum=0)
    ids = _host("bincount", x).astype(np.int64)
    bins = builtins.max(int(ids.max()) + 1 if ids.size else 0, minlength)
    w = Tensor(np.ones(x.shape, np.float32)) if weights is None else cast(weights, mstype.float32)
    return UnsortedSegmentSum()(w, cast(x, mstype.int32), bins)


def cov(input: Any, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Tensor:
    """The covariance matrix of the rows of ``input`` (variables) over its columns (observations),
    numpy's formula with frequency and analytic weights; a 1-D input is one variable (a 0-d result)."""
    x = floating(input)
    if x.ndim > 2:
        raise ValueError(f"For 'cov', 'input' must be 1-D or 2-D, but got shape {x.shape}")
    rows = x if x.ndim == 2 else Reshape()(x, (1, -1))
    n = rows.shape[1]
    w = None
    if fweights is not None:
        w = cast(fweights, x.dtype)
    if aweights is not None:
        w = cast(aweights, x.dtype) if w is None else Mul()(w, cast(aweights, x.dtype))
    if w is None:
        w = Tensor(np.ones(n, np.float32), x.dtype)
    w_sum = ReduceSum()(w, ())
    mean = Div()(ReduceSum(True)(Mul()(rows, w), 1), w_sum)
    if aweights is None or correction == 0:
        norm = Sub()(w_sum, float(correction))
    else:
        norm = Sub()(w_sum, Div()(Mul()(ReduceSum()(Mul()(w, cast(aweights, x.dtype)), ()), float(correction)), w_sum))
    centred = Sub()(rows, mean)
    out = Div()(MatMul(transpose_b=True)(Mul()(centred, w), centred), norm)
    return Reshape()(out, ()) if x.ndim < 2 else out


def bucketize(input: Any, boundaries: Any, *, right: bool = False) -> Tensor:
    """PyTorch's buckets: the first boundary >= each element (> with ``right``), int32."""
    return bucketize_of(input, boundaries, right)


def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    return LeftShift()(input, other)


def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    return RightShift()(input, other)


def isnan_ext(tensor: Any) -> Tensor:
    return IsNan()(tensor)


def float_power_ext(input: Any, exponent: Any) -> Tensor:
    """input ** exponent computed in float64 (MindSpore's result dtype)."""
    base = cast(input, mstype.float64)
    return Pow()(base, cast(exponent, mstype.float64) if isinstance(exponent, Tensor) else float(exponent))


def diff_ext(input: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Tensor:
    """The n-th forward difference along ``dim`` (``prepend``/``append`` joined first): ``diff`` n times."""
    out = input
    for step in range(check_arg_int(n, "diff_ext: n", minimum=0)):
        out = diff(out, 1, dim, prepend, append) if step == 0 else diff(out, 1, dim)
    return out


# ---- special functions and linear algebra (round 2) ----

def logdet(input: Any) -> Tensor:
    """log(det(input)): NaN where the determinant is negative, -inf where it is 0 (MindSpore's formula)."""
    return Log()(operations.MatrixDeterminant()(input))


def i0(input: Any) -> Tensor:
    """The modified Bessel function I0 (``bessel_i0``)."""
    return operations.BesselI0()(input)


# ---- internals round 2: eps ----
def eps(x: Any) -> Tensor:
    """``ops.eps(x)``: ``Eps()(x)``, a tensor like ``x`` holding its dtype's machine epsilon."""
    return operations.Eps()(x)


# ---- complex numbers ----
from ..operations.math_ops import COMPLEX_DTYPES as _COMPLEX_DTYPES, STFT as _STFT  # noqa: E402
from ..operations.nn_ops import MirrorPad as _MirrorPad, Pad as _Pad  # noqa: E402


def view_as_real(input: Any) -> Tensor:
    """A complex tensor as real numbers: a last dim of 2 holding (real, imag)."""
    x = _tensor(input)
    if x.dtype.name not in _COMPLEX_DTYPES:
        raise TypeError("For view_as_real, the dtype of input Tensor must be complex.")
    return operations.Stack(-1)([operations.Real()(x), operations.Imag()(x)])


# stft's signal padding modes when centred (MindSpore's nn.Pad modes)
STFT_PAD_MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")


def stft(x: Any, n_fft: int, hop_length: Any = None, win_length: Any = None, window: Any = None,
         center: bool = True, pad_mode: str = "REFLECT", normalized: bool = False, onesided: Any = None,
         return_complex: Any = None) -> Tensor:
    """The short-time Fourier transform (torch.stft's semantics, MindSpore's defaults): ``center`` pads
    n_fft // 2 samples on both sides (``pad_mode``), then :class:`STFT`."""
    x = _tensor(x)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    window = Tensor(np.ones(win_length), mstype.float32) if window is None else _tensor(window)
    has_complex = x.dtype.name in _COMPLEX_DTYPES or window.dtype.name in _COMPLEX_DTYPES
    onesided = not has_complex if onesided is None else onesided
    return_complex = has_complex if return_complex is None else return_complex
    if center:
        if not isinstance(center, bool):
            raise TypeError(f"For 'stft', 'center' must be a bool, but got {type(center).__name__}.")
        if x.ndim not in (1, 2):
            raise ValueError(f"Expected a 1-D tensor or a 2-D tensor, but got {x.ndim}")
        if pad_mode.upper() not in STFT_PAD_MODES:
            raise ValueError(f"For 'stft', 'pad_mode' must be one of {STFT_PAD_MODES}, but got {pad_mode!r}.")
        paddings = ((0, 0),) * (x.ndim - 1) + ((n_fft // 2, n_fft // 2),)
        mode = pad_mode.upper()
        x = _Pad(paddings)(x) if mode == "CONSTANT" else _MirrorPad(mode)(x, paddings)
    return _STFT(n_fft, hop_length, win_length, normalized, onesided, return_complex)(x, window)


# ---- samplers and generators ----
from ascendemu.graph.capture import current_tracer as _current_tracer  # noqa: E402

from ...common.seed import call_site_op as _call_site_op  # noqa: E402
from ...common.tensor import hold_value  # noqa: E402


def bernoulli(input: Any, p: Any = 0.5, seed: Any = None) -> Tensor:
    """``Bernoulli(seed)(input, p)`` (seed None: -1, a new key from ``set_seed``'s graph seed per call,
    as MindSpore's kernel takes a new random seed per launch; inside a captured graph one op per call
    site); a number ``p`` becomes a one-element float32 Tensor."""
    if seed is None:
        seed = -1
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"For 'bernoulli', the type of 'seed' must be 'int', but got '{type(seed).__name__}'.")
    if not isinstance(p, Tensor):
        p = Tensor([p], mstype.float32)
    tracer = _current_tracer()
    make = lambda: operations.Bernoulli(seed)      # noqa: E731
    op = make() if tracer is None else _call_site_op((tracer.graph.name, tracer.draw(), "bernoulli", seed), make)
    return op(input, p)


# the dtypes the generator forms take (MindSpore's BernoulliExt / InplaceBernoulli)
BERNOULLI_EXT_DTYPES = ("float16", "float32", "float64", "bfloat16")


def _bernoulli_draw(owner: str, input: Any, p: Any, generator: Any) -> Tensor:
    """0/1 in input's shape and dtype, 1 with probability p (a number or a Tensor broadcast to input):
    MindSpore serves these generator forms on Ascend only (its Philox stream is not reproduced); here
    Bernoulli with a key from ``set_seed``'s graph seed, so a seeded run repeats."""
    if generator is not None:
        raise InvalidParamError(f"{owner}: generator={generator!r} is not supported here; leave it None (the "
                                f"default generator, which set_seed seeds)")
    if not isinstance(input, Tensor) or input.dtype.name not in BERNOULLI_EXT_DTYPES:
        got = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise TypeError(f"For '{owner}', the 'input' must be a float Tensor, but got {got}.")
    p = p if isinstance(p, Tensor) else Tensor(np.full(input.shape, p, np.float32))
    p = operations.Cast()(operations.BroadcastTo(input.shape)(p), mstype.float32)
    return operations.Cast()(bernoulli(p, p), input.dtype)


def bernoulli_ext(input: Any, *, generator: Any = None) -> Tensor:
    """``mint.bernoulli``: 0/1 per element, 1 with probability ``input`` (see ``_bernoulli_draw``)."""
    return _bernoulli_draw("bernoulli_ext", input, input, generator)


def bernoulli_(input: Any, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """``input`` filled in place with 0/1, 1 with probability ``p`` (see ``_bernoulli_draw``)."""
    return hold_value(input, _bernoulli_draw("bernoulli_", input, p, generator))


# ---- linear algebra and statistics ----
from ..operations.math_ops import Median as _Median, Quantile as _Quantile  # noqa: E402


def _quantile_dim(name: str, axis: Any, keepdims: Any) -> None:
    """MindSpore's checks of quantile's axis (an int or None) and keepdims (a bool)."""
    if axis is not None and (not isinstance(axis, int) or isinstance(axis, bool)):
        raise TypeError(f"For '{name}', the type of 'axis' must be int or None, but got {type(axis).__name__}.")
    if not isinstance(keepdims, bool):
        raise TypeError(f"For '{name}', the type of 'keepdims' must be bool, but got {type(keepdims).__name__}.")


def quantile(input: Any, q: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The q-th quantiles along ``axis`` (all elements when None), linear interpolation (ops.Quantile)."""
    _quantile_dim("quantile", axis, keepdims)
    return _Quantile(dim=axis, keep_dims=keepdims)(input, q)


def nanquantile(input: Any, q: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """:func:`quantile` ignoring NaN (a slice of NaN only: NaN)."""
    _quantile_dim("nanquantile", axis, keepdims)
    return _Quantile(dim=axis, keep_dims=keepdims, ignore_nan=True)(input, q)


def nanmedian(input: Any, axis: int = -1, keepdims: bool = False) -> tuple[Tensor, Tensor]:
    """(the lower median ignoring NaN along ``axis``, its index): ops.Median with ignore_nan."""
    return _Median(global_median=False, axis=axis, keep_dims=keepdims, ignore_nan=True)(input)


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-08) -> Tensor:
    """sum(x1 x2) / max(|x1| |x2|, eps) along ``dim`` (MindSpore's formula: the product of the norms is
    clipped, not each norm)."""
    a, b = _tensor(x1), _tensor(x2)
    axis = (check_arg_int(dim, "cosine_similarity: dim"),)
    dot = apply_op("ReduceSum", [a * b], {"axis": axis, "keep_dims": False})[0]
    norms = [apply_op("Sqrt", [apply_op("ReduceSum", [t * t], {"axis": axis, "keep_dims": False})[0]])[0]
             for t in (a, b)]
    denominator = apply_op("Maximum", [norms[0] * norms[1], Tensor(float(eps), norms[0].dtype)])[0]
    return dot / denominator


def _triangular_solve_method(op: Any, b: Any, A: Any, upper: bool = True, transpose: bool = False,
                             unitriangular: bool = False) -> tuple[Tensor, Tensor]:
    """``b.triangular_solve(A, upper, transpose, unitriangular)``: (X, A) with op(T) X = b, T the upper
    (or lower) triangle of A, op the transpose with ``transpose``, a unit diagonal with ``unitriangular``
    (the PyTorch-style method MindSpore 2.10 lists; its own CPU build has no kernel behind it)."""
    for name, flag in (("upper", upper), ("transpose", transpose), ("unitriangular", unitriangular)):
        if not isinstance(flag, bool):
            raise TypeError(f"For 'Tensor.triangular_solve', '{name}' must be bool, but got {type(flag).__name__}.")
    matrix = _tensor(A)
    if unitriangular:
        eye = Tensor(np.eye(matrix.shape[-1]), matrix.dtype)
        matrix = matrix * (1 - eye) + eye
    solution = operations.MatrixTriangularSolve(lower=not upper, adjoint=transpose)(matrix, b)
    return solution, _tensor(A)


# ---- nn compositions ----
from ...common.tensor import hold_value as _hold_value  # noqa: E402


def _batch_dot_axes(x1_ndim: int, x2_ndim: int, axes: Any) -> list[int]:
    """MindSpore's batch_dot axes: None (the last of x1, x2's last or second-to-last), an int for both,
    or a pair; negatives counted from the end; 0 (the batch axis) refused."""
    if axes is None:
        return [x1_ndim - 1, x2_ndim - 1 if x2_ndim == 2 else x2_ndim - 2]
    if isinstance(axes, (list, tuple)):
        if 0 in axes:
            raise ValueError(f"For 'batch_dot', the 'axes' cannot contain 0, but got axes: {axes}.")
        if len(axes) != 2:
            raise ValueError(f"For 'batch_dot', the length of 'axes' must be equal to 2, but got {len(axes)}.")
        pair = [check_arg_int(a, f"batch_dot: axes[{k}]") for k, a in enumerate(axes)]
        pair = [pair[0] + x1_ndim if pair[0] < 0 else pair[0], pair[1] + x2_ndim if pair[1] < 0 else pair[1]]
        if min(pair) < 0 or pair[0] > x1_ndim or pair[1] > x2_ndim:
            raise ValueError(f"For 'batch_dot', axes[0] must be less than or equal to len(x1_shape), and axes[1] "
                             f"must be less than or equal to len(x2_shape). But got 'axes': {axes}.")
        return pair
    if isinstance(axes, int) and not isinstance(axes, bool):
        if axes == 0:
            raise ValueError(f"For 'batch_dot', the 'axes' should not be equal to 0, but got {axes}.")
        if axes > x1_ndim or axes > x2_ndim:
            raise ValueError(f"For 'batch_dot', the 'axes' cannot be greater than the length of 'x1_shape' and "
                             f"'x2_shape', but got 'axes': {axes}.")
        return [axes + x1_ndim, axes + x2_ndim] if axes < 0 else [axes, axes]
    raise ValueError(f"For 'batch_dot', the type of 'axes' must be one of those: int, tuple(int), list(int), "
                     f"but got {type(axes).__name__}.")


def _batch_dot_operand(x: Tensor, axis: int, first: bool) -> tuple[Tensor, tuple[int, ...]]:
    """One operand as (batch, free, contraction) (first) or (batch, contraction, free), and its free dims."""
    free = tuple(i for i in range(1, x.ndim) if i != axis)
    free_dims = tuple(x.shape[i] for i in free)
    perm = (0,) + (free + (axis,) if first else (axis,) + free)
    size = int(np.prod(free_dims, dtype=np.int64))
    shape = (x.shape[0], size, x.shape[axis]) if first else (x.shape[0], x.shape[axis], size)
    return Reshape()(Transpose()(x, perm), shape), free_dims


def batch_dot(x1: Any, x2: Any, axes: Any = None) -> Tensor:
    """MindSpore's (deprecated) batch_dot: per batch row, the dot of ``x1`` and ``x2`` over ``axes``; the
    free dimensions of x1 then x2 remain. Float32 only, both at least 2-D, same batch size."""
    x1, x2 = _tensor(x1), _tensor(x2)
    if x1.ndim < 2 or x2.ndim < 2:
        raise ValueError(f"For 'batch_dot', the inputs x1, x2 should have 'dimension >= 2', but got "
                         f"'len(x1_shape)': ({x1.ndim}) and 'len(x2_shape)': ({x2.ndim}).")
    for label, x in (("x1", x1), ("x2", x2)):
        if x.dtype != mstype.float32:
            raise TypeError(f"The '{label}' must be float32, but got {x.dtype}.")
    if x1.shape[0] != x2.shape[0]:
        raise ValueError(f"For 'batch_dot', the inputs 'x1', 'x2' should have the same batch sizes, but got "
                         f"'x1_batch_size': {x1.shape[0]} and 'x2_batch_size': {x2.shape[0]}.")
    axes = _batch_dot_axes(x1.ndim, x2.ndim, axes)
    x1_2d, x2_2d = x1.ndim == 2, x2.ndim == 2
    if x1_2d:
        x1, axes[0] = ExpandDims()(x1, 1), axes[0] + 1
    if x2_2d:
        x2 = ExpandDims()(x2, 2)
    a, free1 = _batch_dot_operand(x1, axes[0], True)
    b, free2 = _batch_dot_operand(x2, axes[1], False)
    out = Reshape()(BatchMatMul()(a, b), (x1.shape[0],) + free1 + free2)
    if x1_2d:
        return Squeeze(1)(out)
    return Squeeze(-1)(out) if x2_2d else out


def tanhshrink(input: Any) -> Tensor:
    """``x - tanh(x)``; integer inputs are computed as float32."""
    if not isinstance(input, Tensor):
        raise TypeError(f"For tanhshrink, the input must be a Tensor, but got {type(input)}.")
    if input.dtype.name not in FLOAT_DTYPES and input.dtype != mstype.bool_:
        input = cast(input, mstype.float32)
    return input - tanh(input)


def baddbmm_ext(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` (baddbmm with keyword-only scalars)."""
    return baddbmm(input, batch1, batch2, beta, alpha)


def einsum_ext(equation: Any, *operands: Any) -> Tensor:
    """einsum (the string form; the sublist form is refused with what to write instead)."""
    if not isinstance(equation, str):
        raise InvalidParamError("einsum_ext: the sublist form (operand, [dims], ...) is not served; write the "
                                "equation as a string, e.g. einsum_ext('ij,jk->ik', a, b)")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return einsum(equation, *operands)


def tanh_(input: Any) -> Tensor:
    """In place: ``input`` holds ``tanh(input)`` and is returned."""
    return _hold_value(input, tanh(input))


def erfinv_(input: Any) -> Tensor:
    """In place: ``input`` holds ``erfinv(input)`` and is returned."""
    return _hold_value(input, erfinv(input))


# ---- image, detection and windows ----
from ..operations.spectral_ops import WINDOW_DTYPES as _WINDOW_DTYPES  # noqa: E402
from ..primitive import _cast  # noqa: E402


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - ((n - a)/a)^2)) / I0(beta)``, a = (N-1)/2, of an int length: a host
    constant in float64 (MindSpore's default) or cast to ``dtype``."""
    if not isinstance(periodic, bool):
        raise TypeError(f"For 'kaiser_window', 'periodic' must be a variable of Boolean type, but got {type(periodic)}")
    if isinstance(window_length, bool) or not isinstance(window_length, int):
        raise TypeError(f"For 'kaiser_window', 'window_length' must be a non-negative integer, but got "
                        f"{type(window_length)}")
    if window_length < 0:
        raise ValueError(f"For 'kaiser_window', 'window_length' must be a non-negative integer, but got "
                         f"{window_length}")
    if window_length <= 1:
        return Tensor(np.ones(window_length, np.float64))
    if dtype is not None and dtype not in _WINDOW_DTYPES:
        raise TypeError(f"For 'kaiser_window', 'dtype' must be floating point dtypes, but got {dtype}.")
    full = window_length + 1 if periodic else window_length
    half = (full - 1) / 2.0
    n = np.arange(window_length, dtype=np.float64)
    values = np.i0(beta * np.sqrt(1.0 - ((n - half) / half) ** 2)) / np.i0(float(beta))
    target = mstype.float64 if dtype is None else dtype
    return Tensor(values.astype(mstype.dtype_to_nptype(target)), target)


# the dtypes of sparse_segment_mean's data and of its indices and segment ids
_SEGMENT_MEAN_DTYPES = (mstype.float16, mstype.float32, mstype.float64)
_SEGMENT_INDEX_DTYPES = (mstype.int32, mstype.int64)


def sparse_segment_mean(x: Any, indices: Any, segment_ids: Any) -> Tensor:
    """The mean of the rows ``x[indices[k]]`` of each segment ``segment_ids[k]`` (sorted ids; rows of
    segments without any are 0): a Gather and an UnsortedSegmentSum divided by the constant counts,
    so the gradient reaches x. The number of segments is the last id plus one, read from host data
    (PyNative, or constant ids)."""
    x, indices, segment_ids = _tensor(x), _tensor(indices), _tensor(segment_ids)
    if x.dtype not in _SEGMENT_MEAN_DTYPES:
        raise TypeError(f"For primitive[SparseSegmentMean], the input argument[x] must be a type of "
                        f"{{Tensor[Float16], Tensor[Float32], Tensor[Float64]}}, but got Tensor[{x.dtype}].")
    if indices.dtype not in _SEGMENT_INDEX_DTYPES or indices.dtype != segment_ids.dtype:
        raise TypeError("For primitive[SparseSegmentMean], the input type must be same.")
    if x.ndim < 1 or indices.ndim != 1 or indices.shape != segment_ids.shape:
        raise ValueError(f"For 'SparseSegmentMean', x must have rank >= 1 and indices and segment_ids be 1-D of "
                         f"one length, but got shapes {x.shape}, {indices.shape} and {segment_ids.shape}.")
    ids = _host("sparse_segment_mean", segment_ids)
    rows = _host("sparse_segment_mean", indices)
    if ids.size and (np.any(np.diff(ids) < 0) or ids[0] < 0):
        raise RuntimeError("For 'SparseSegmentMean', segment_ids must be sorted and non-negative.")
    if rows.size and (rows.min() < 0 or rows.max() >= x.shape[0]):
        raise RuntimeError(f"For 'SparseSegmentMean', indices must be in [0, {x.shape[0]}).")
    segments = int(ids[-1]) + 1 if ids.size else 0
    counts = np.maximum(np.bincount(ids, minlength=segments), 1).astype(mstype.dtype_to_nptype(x.dtype))
    sums = UnsortedSegmentSum()(operations.Gather()(x, _cast(indices, mstype.int32), 0),
                                _cast(segment_ids, mstype.int32), segments)
    return sums / Tensor(counts.reshape((segments,) + (1,) * (x.ndim - 1)), x.dtype)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.math_func", name, __all__)
