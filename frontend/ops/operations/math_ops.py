"""``mindspore.ops.operations.math_ops``: the math primitives, where MindSpore defines them: the
registry's operand-only elementwise ops (generated, ``primitive.generated_primitives``), the
reductions and the matrix products."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError, RuntimeParamError

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _axes, _flag, _static_int, check_arg_int, defined_here
from ..composite_op import composite
from ..primitive import _Op, _binary_operands, _cast, _promote, _same_dtype, _tensor, apply_op, generated_primitives
from .array_ops import Concat, Select
from .array_ops import CumProd, CumSum  # noqa: F401  MindSpore serves the scans from both modules
from .array_ops import (IndexAdd, InplaceAdd, InplaceIndexAdd, InplaceSub, InplaceUpdateV2, Roll,  # noqa: F401
                        TrilIndices, TriuIndices)  # array breadth 2: composed there, defined here by MindSpore
from .other_ops import Assign, StopGradient

# Square, Add, Equal, ...: the registry's operand-only elementwise ops
globals().update(generated_primitives("math_ops"))


class _Reduce(_Op):
    op = ""

    def __init__(self, keep_dims: bool = False):
        super().__init__()
        self.keep_dims = bool(keep_dims)

    def __call__(self, x: Any, axis: Any = ()) -> Tensor:
        return apply_op(self.op, [x], {"axis": _axes(axis), "keep_dims": self.keep_dims})[0]


class ReduceSum(_Reduce):
    """``ReduceSum(keep_dims=False, skip_mode=False)(x, axis=())``: with ``skip_mode``, an empty
    ``axis`` reduces nothing (x itself) instead of every axis, as MindSpore."""
    op = "ReduceSum"

    def __init__(self, keep_dims: bool = False, skip_mode: bool = False):
        super().__init__(keep_dims)
        self.skip_mode = _flag("ReduceSum: skip_mode", skip_mode)

    def __call__(self, x: Any, axis: Any = ()) -> Tensor:
        if self.skip_mode and not _axes(axis):
            return _tensor(x)
        return super().__call__(x, axis)


class ReduceMean(_Reduce):
    op = "ReduceMean"


class ReduceMax(_Reduce):
    op = "ReduceMax"


class ReduceAll(_Reduce):
    """Logical AND of bool elements over ``axis`` (all axes by default)."""
    op = "ReduceAll"

    def __call__(self, input: Any, axis: Any = None) -> Tensor:      # MindSpore's names, unlike the others
        return super().__call__(input, axis)


class ReduceMin(_Reduce):
    op = "ReduceMin"


class MatMul(_Op):
    op = "MatMul"

    def __init__(self, transpose_a: bool = False, transpose_b: bool = False):
        super().__init__()
        self.transpose_a, self.transpose_b = bool(transpose_a), bool(transpose_b)

    def __call__(self, input: Any, mat2: Any) -> Tensor:
        return apply_op(self.op, _same_dtype(self.op, _tensor(input), _tensor(mat2)),
                        {"transpose_a": self.transpose_a, "transpose_b": self.transpose_b})[0]


class BatchMatMul(MatMul):
    op = "BatchMatMul"

    def __call__(self, x: Any, y: Any) -> Tensor:        # MindSpore's names, unlike MatMul's
        return super().__call__(x, y)


# ---- math ops served as compositions and scans (issue 21) ----

def _unary(op: str, x: Any) -> Tensor:
    """One registry elementwise op of one operand."""
    return apply_op(op, [x])[0]


def _binary(op: str, x: Any, y: Any) -> Tensor:
    """One registry elementwise op of two operands, promoted as MindSpore's binary ops promote (a
    Python number takes the tensor's dtype)."""
    return apply_op(op, list(_binary_operands(x, y)))[0]


def floating(x: Any) -> Tensor:
    """``x`` as a tensor of a float dtype: ints and bools become float32 (MindSpore's promotion for
    the ops that compute in floats)."""
    x = _tensor(x)
    return x if x.dtype.name in FLOAT_DTYPES else _cast(x, mstype.float32)


# the float dtypes, with their largest finite value (nan_to_num's default replacement of +inf)
FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": float(np.finfo(np.float32).max),
             "float64": float(np.finfo(np.float64).max)}
FLOAT_DTYPES = tuple(FLOAT_MAX)


def host_number(label: str, value: Any) -> int | float:
    """A Python number from an argument MindSpore also takes as a 0-d tensor, where the output's
    shape depends on it (range, arange, linspace's count): a tensor must be concrete."""
    if isinstance(value, Tensor):
        if value.is_symbolic:
            raise InvalidParamError(f"{label} is a tensor computed in the graph, but the output's length depends on "
                                    "it and shapes are static here: pass a Python number or a constant tensor")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{label} must be an int, a float or a 0-d tensor, got {type(value).__name__}")
    return value.item() if isinstance(value, np.generic) else value


class ReduceProd(_Reduce):
    """The product over ``axis`` (all axes by default); its gradient is exact where x has zeros."""
    op = "ReduceProd"


class ReduceAny(_Reduce):
    """Logical OR of bool elements over ``axis`` (all axes by default): not all(not x)."""
    op = "ReduceAll"

    def __call__(self, x: Any, axis: Any = ()) -> Tensor:
        return _unary("LogicalNot", super().__call__(_unary("LogicalNot", x), axis))


def add_n(label: str, inputs: Any) -> Tensor:
    """The sum of a tuple or list of tensors of one shape and dtype: a chain of Adds (one kernel at O1)."""
    if not isinstance(inputs, (tuple, list)):
        raise TypeError(f"{label}: inputs must be a tuple or list of tensors, got {type(inputs).__name__}")
    tensors = list(inputs)
    if not tensors:
        raise InvalidParamError(f"{label}: inputs must hold at least one tensor")
    if not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{label}: every input must be a Tensor, got {[type(t).__name__ for t in tensors]}")
    first = tensors[0]
    total = first
    for t in tensors[1:]:
        if t.dtype != first.dtype:
            raise TypeError(f"{label}: every input must have the first one's dtype {first.dtype}, got {t.dtype}")
        if t.shape != first.shape:
            raise InvalidValueError(f"{label}: every input must have the first one's shape {first.shape}, "
                                    f"got {t.shape}")
        total = apply_op("Add", [total, t])[0]
    return total


class AddN(_Op):
    """``AddN()(inputs)``: the elementwise sum of a tuple or list of tensors."""

    def __call__(self, *args: Any) -> Tensor:
        return add_n(self.name, args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args)


class AccumulateNV2(AddN):
    """MindSpore's other name of :class:`AddN`."""


@composite("Inv", functions=("inv",))
def Inv(x):
    """1 / x."""
    return _unary("Reciprocal", x)


@composite("Logit", functions=("logit",))
def Logit(input, eps=-1.0):
    """log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps >= 0 (``ops.logit``'s eps=None and
    the primitive's -1.0: no clamp)."""
    if eps is not None and (isinstance(eps, bool) or not isinstance(eps, float)):
        raise InvalidTypeError(f"Logit: eps must be a float, got {type(eps).__name__} {eps!r}; write e.g. eps=1.0")
    x = floating(input)
    if eps is not None and eps >= 0:
        x = _binary("Minimum", _binary("Maximum", x, float(eps)), 1.0 - eps)
    return _unary("Log", x / (1 - x))


@composite("Lerp", functions=("lerp",))
def Lerp(input, end, weight):
    """start + weight * (end - start)."""
    start = _tensor(input)
    return start + (end - start) * weight


@composite("IsClose", functions=("isclose",))
def IsClose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|x - y| <= atol + rtol * |y|, or x == y (equal infinities); NaNs equal only with ``equal_nan``."""
    x, y = _binary_operands(floating(input), floating(other))
    close = _binary("LessEqual", _unary("Abs", x - y), atol + rtol * _unary("Abs", y))
    out = _binary("LogicalOr", _binary("Equal", x, y), close)
    if equal_nan:
        out = _binary("LogicalOr", out, _binary("LogicalAnd", _unary("IsNan", x), _unary("IsNan", y)))
    return out


@composite("NanToNum", functions=("nan_to_num",))
def NanToNum(input, nan=None, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan`` (default 0), ``posinf`` and ``neginf`` (default the dtype's
    largest and smallest finite values)."""
    x = _tensor(input)
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and not isinstance(value, (bool, int, float)):
            raise InvalidTypeError(f"For 'NanToNum', the type of '{name}' should be one of '[bool, int, float]', "
                                   f"but got {type(value)}.")
    if x.dtype.name not in FLOAT_MAX:
        return x
    big = FLOAT_MAX[x.dtype.name]
    nan_v, pos_v, neg_v = (Tensor(value, x.dtype) for value in (0.0 if nan is None else nan,
                                                                  big if posinf is None else posinf,
                                                                  -big if neginf is None else neginf))
    out = Select()(_binary("Equal", x, Tensor(np.inf, x.dtype)), pos_v, x)
    out = Select()(_binary("Equal", x, Tensor(-np.inf, x.dtype)), neg_v, out)
    return Select()(_unary("IsNan", x), nan_v, out)


@composite("Hypot", functions=("hypot",))
def Hypot(input, other):
    """sqrt(x^2 + y^2)."""
    x, y = _binary_operands(input, other)
    return _unary("Sqrt", x * x + y * y)


@composite("Trace", functions=("trace",))
def Trace(input):
    """The sum of a matrix's main diagonal: the sum of x times the identity's mask (whose gradient is
    that mask times dout)."""
    x = _tensor(input)
    if x.ndim != 2:
        raise RuntimeParamError(f"Trace: input must be a 2-D tensor, got shape {x.shape}")
    return ReduceSum()(x * Tensor(np.eye(*x.shape), x.dtype))


@composite("Addcmul", functions=("addcmul",))
def Addcmul(input, tensor1, tensor2, value):
    """input + value * tensor1 * tensor2."""
    return input + tensor1 * tensor2 * value


@composite("Addcdiv", functions=("addcdiv",))
def Addcdiv(input, tensor1, tensor2, value):
    """input + value * tensor1 / tensor2."""
    return input + tensor1 / tensor2 * value


@composite("Heaviside", functions=("heaviside",))
def Heaviside(input, values):
    """0 where x < 0, 1 where x > 0, ``values`` where x == 0."""
    x, v = _binary_operands(input, values)
    return Select()(_binary("Less", x, 0), 0, Select()(_binary("Greater", x, 0), 1, v))


@composite("Sinc", functions=("sinc",))
def Sinc(input):
    """sin(pi x) / (pi x), and 1 at x == 0 (computed at a safe x there, so the gradient stays finite)."""
    x = floating(input)
    at_zero = _binary("Equal", x, 0)
    scaled = Select()(at_zero, 1.0, x) * float(np.pi)
    return Select()(at_zero, 1.0, _unary("Sin", scaled) / scaled)


@composite("MulNoNan")
def MulNoNan(x, y):
    """x * y, and 0 where y == 0 (even where x is inf or NaN)."""
    x, y = _binary_operands(x, y)
    return Select()(_binary("Equal", y, 0), 0, x * y)


@composite("LinSpace", functions=("linspace",), rename={"end": "stop", "steps": "num"})
def LinSpace(start, stop, num):
    """``num`` evenly spaced values from start to stop inclusive: start + i * (stop - start) / (num - 1)
    (start alone for num 1), float32 unless start is a tensor of another float dtype."""
    count = _static_int("LinSpace: num", num, minimum=1)
    dtype = start.dtype if isinstance(start, Tensor) and start.dtype.name in FLOAT_DTYPES else mstype.float32
    first, last = (_cast(v, dtype) if isinstance(v, Tensor) else Tensor(float(v), dtype) for v in (start, stop))
    index = Tensor(np.arange(count), dtype)
    if count == 1:
        return first + index
    return first + index * ((last - first) / (count - 1))


def _range(start, end, step, maxlen=1000000, dtype=None):
    """``ops.range(start, end, step, maxlen)`` and ``ops.arange(start=0, end=None, step=1, dtype=None)``:
    start, start + step, ... up to end (excluded), a constant. Its length depends on the values, so a
    tensor argument must be concrete. Ints give int64, a float anywhere float32, unless ``dtype``."""
    values = [host_number(f"range: {name}", v) for name, v in (("start", start), ("end", end), ("step", step))
              if v is not None]
    if end is None:                                        # arange(n): 0 .. n
        values = [0] + values[:1] + values[1:]
    first, last, stride = values
    if stride == 0:
        raise InvalidValueError("range: step must not be 0")
    if (last - first) * stride < 0:
        raise InvalidValueError(f"range: step={stride} points away from end={last} (start={first})")
    data = np.arange(first, last, stride)
    if data.size > check_arg_int(maxlen, "range: maxlen", minimum=1):
        raise InvalidParamError(f"range: the output has {data.size} elements, more than maxlen={maxlen}")
    if dtype is None:
        dtype = mstype.float32 if any(isinstance(v, float) for v in values) else mstype.int64
    return Tensor(data, mstype.to_type(dtype))


# MindSpore defines the Range primitive in array_ops; this stanza serves the functional forms only
_RangeComposite = composite("Range", functions=("range", "arange"))(_range)


def _check_assign_shape(op: str, variable: Any, value: Any) -> None:
    """MindSpore's AssignAdd/AssignSub check: value has variable's shape (a 0-d and a (1,) pass for each
    other); it does not broadcast."""
    var, val = tuple(_tensor(variable).shape), tuple(_tensor(value).shape)
    if var == val or {var, val} == {(), (1,)}:
        return
    what = "rank" if len(var) != len(val) else "shape"
    raise InvalidValueError(f"For '{op}','value' must have the same {what} as 'variable'. But got 'value' {what}: "
                            f"{len(val) if what == 'rank' else val}, 'variable' {what}: "
                            f"{len(var) if what == 'rank' else var}; give value variable's shape")


@composite("AssignAdd")
def AssignAdd(variable, value):
    """The Parameter ``variable`` holds variable + value from here on (an Assign of the sum)."""
    _check_assign_shape("AssignAdd", variable, value)
    return Assign()(variable, variable + value)


@composite("AssignSub")
def AssignSub(variable, value):
    """The Parameter ``variable`` holds variable - value from here on (an Assign of the difference)."""
    _check_assign_shape("AssignSub", variable, value)
    return Assign()(variable, variable - value)


def p_norm(x: Tensor, p: Any, axes: tuple[int, ...], keep_dims: bool) -> Tensor:
    """(sum |x|^p)^(1/p) over ``axes`` (() = every axis): p 1 and 2 without powers, +-inf the max/min |x|,
    0 the count of non-zero elements."""
    if isinstance(p, (str, bool)):
        raise InvalidParamError(f"norm: ord={p!r} is not a vector norm order; use a number or inf")
    magnitude = _unary("Abs", x)
    attrs = {"axis": axes, "keep_dims": keep_dims}
    if p in (math.inf, -math.inf):
        return apply_op("ReduceMax" if p > 0 else "ReduceMin", [magnitude], attrs)[0]
    if p == 0:
        return apply_op("ReduceSum", [_cast(_binary("NotEqual", x, 0), x.dtype)], attrs)[0]
    if p == 1:
        return apply_op("ReduceSum", [magnitude], attrs)[0]
    if p == 2:
        return _unary("Sqrt", apply_op("ReduceSum", [x * x], attrs)[0])
    return _binary("Pow", apply_op("ReduceSum", [_binary("Pow", magnitude, p)], attrs)[0], 1.0 / p)


class LpNorm(_Op):
    """``LpNorm(axis, p=2, keep_dims=False, epsilon=1e-12)(input)``: the p-norm over ``axis``, at least
    ``epsilon`` (MindSpore's floor, so a zero norm can divide)."""

    def __init__(self, axis: Any, p: int = 2, keep_dims: bool = False, epsilon: float = 1e-12):
        super().__init__()
        self.axis, self.p, self.epsilon = _axes(axis), check_arg_int(p, "LpNorm: p", minimum=0), float(epsilon)
        self.keep_dims = _flag("LpNorm: keep_dims", keep_dims)

    def __call__(self, input: Any) -> Tensor:
        return _binary("Maximum", p_norm(floating(input), self.p, self.axis, self.keep_dims), self.epsilon)


@composite("Cdist", functions=("cdist",))
def Cdist(x1, x2, p=2.0):
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M): (..., P, R),
    the differences broadcast and reduced over M."""
    a, b = _binary_operands(floating(x1), floating(x2))
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[-1] != b.shape[-1]:
        raise InvalidValueError(f"Cdist: x1 and x2 must have one rank >= 2 and one last dim, got {a.shape} and "
                                f"{b.shape}")
    rows = apply_op("ExpandDims", [a], {"axis": a.ndim - 1})[0]         # (..., P, 1, M)
    cols = apply_op("ExpandDims", [b], {"axis": b.ndim - 2})[0]         # (..., 1, R, M)
    return p_norm(rows - cols, p, (-1,), False)


@composite("Ger", functions=("ger",))
def Ger(input, vec2):
    """The outer product input[i] * vec2[j] of two 1-D tensors."""
    x, y = _binary_operands(input, vec2)
    if x.ndim != 1 or y.ndim != 1:
        raise InvalidValueError(f"Ger: inputs must be 1-D, got shapes {x.shape} and {y.shape}")
    column = apply_op("Reshape", [x], {"shape": (x.shape[0], 1)})[0]
    return column * apply_op("Reshape", [y], {"shape": (1, y.shape[0])})[0]


def einsum_terms(equation: str, count: int) -> tuple[list[str], str]:
    """The operands' subscripts and the output's of an einsum ``equation`` (the output implied, in
    alphabetical order of the letters seen once, when there is no ``->``)."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a str, got {type(equation).__name__}")
    text = equation.replace(" ", "")
    if "." in text:
        raise InvalidParamError(f"einsum: equation={equation!r}: an ellipsis is not supported here; name every dim")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != count or not all(t.isalpha() for t in terms) or not (output.isalpha() or output == ""):
        raise InvalidValueError(f"einsum: equation={equation!r} must name the dims of its {count} operand(s) with "
                                "letters, separated by commas")
    if any(len(set(t)) != len(t) for t in terms):
        raise InvalidParamError(f"einsum: equation={equation!r} repeats a letter in one operand (a diagonal), which "
                                "is not supported here")
    if not arrow:
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return terms, output


def einsum_of(equation: str, operands: Any) -> Tensor:
    """einsum as broadcast products: each operand transposed into one letter order and given size-1
    dims for the letters it lacks, multiplied, then summed over the letters the output lacks."""
    tensors = [_tensor(t) for t in operands]
    terms, output = einsum_terms(equation, len(tensors))
    order = output + "".join(sorted({c for t in terms for c in t} - set(output)))
    sizes: dict[str, int] = {}
    product = None
    for term, t in zip(terms, tensors):
        if t.ndim != len(term):
            raise InvalidParamError(f"einsum: operand {term!r} has shape {t.shape}, of rank {t.ndim}")
        for c, size in zip(term, t.shape):
            if sizes.setdefault(c, size) != size and 1 not in (size, sizes[c]):
                raise InvalidParamError(f"einsum: dim {c!r} has sizes {sizes[c]} and {size}")
        present = [c for c in order if c in term]
        perm = tuple(term.index(c) for c in present)
        if perm != tuple(range(len(perm))):
            t = apply_op("Transpose", [t], {"perm": perm})[0]
        shape = tuple(t.shape[present.index(c)] if c in term else 1 for c in order)
        t = apply_op("Reshape", [t], {"shape": shape})[0]
        product = t if product is None else product * t
    summed = tuple(range(len(output), len(order)))
    return apply_op("ReduceSum", [product], {"axis": summed, "keep_dims": False})[0] if summed else product


class Einsum(_Op):
    """``Einsum(equation)(operands)``: Einstein summation over a tuple of tensors (letters only, no
    ellipsis or diagonal)."""

    def __init__(self, equation: str):
        super().__init__()
        if not isinstance(equation, str):
            raise TypeError(f"Einsum: equation must be a str, got {type(equation).__name__}")
        self.equation = equation

    def __call__(self, *args: Any) -> Tensor:
        operands = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        return einsum_of(self.equation, operands)


@composite("Fmax", functions=("fmax",))
def Fmax(input, other):
    """The larger of x and y, ignoring a NaN (NaN only where both are): x where x >= y or y is NaN, else
    y, so the gradient goes where MindSpore's Fmax bprop sends it (to x on ties and where both are NaN)."""
    x, y = _binary_operands(input, other)
    return Select()(_binary("LogicalOr", _binary("GreaterEqual", x, y), _unary("IsNan", y)), x, y)


@composite("Fmin", functions=("fmin",))
def Fmin(input, other):
    """The smaller of x and y, ignoring a NaN (NaN only where both are): x where x <= y or y is NaN, else
    y, so the gradient goes where MindSpore's Fmin bprop sends it (to x on ties and where both are NaN)."""
    x, y = _binary_operands(input, other)
    return Select()(_binary("LogicalOr", _binary("LessEqual", x, y), _unary("IsNan", y)), x, y)


def log_cum_sum_exp(input: Any, axis: Any, exclusive: bool = False, reverse: bool = False) -> Tensor:
    """log(cumsum(exp(x))) along ``axis``, shifted by the (finite) maximum along it so exp never
    overflows; the shift carries no gradient."""
    x = floating(input)
    dim = _static_int("logcumsumexp: axis", axis)
    peak = apply_op("ReduceMax", [x], {"axis": (dim,), "keep_dims": True})[0]
    shift = StopGradient()(Select()(_unary("IsFinite", peak), peak, 0))
    summed = CumSum(exclusive, reverse)(_unary("Exp", x - shift), dim)
    return _unary("Log", summed) + shift


class CumulativeLogsumexp(_Op):
    """``CumulativeLogsumexp(exclusive=False, reverse=False)(x, axis)``: log(cumsum(exp(x))) along axis.
    An exclusive scan's empty sum is the dtype's lowest finite value, not -inf: MindSpore's kernel starts
    its running log-sum there."""

    def __init__(self, exclusive: bool = False, reverse: bool = False):
        super().__init__()
        self.exclusive = _flag("CumulativeLogsumexp: exclusive", exclusive)
        self.reverse = _flag("CumulativeLogsumexp: reverse", reverse)

    def __call__(self, x: Any, axis: Any) -> Tensor:
        rank = _tensor(x).ndim
        dim = _static_int("CumulativeLogsumexp: axis", axis)
        if not -rank <= dim < rank:        # MindSpore's kernel checks it (a RuntimeError)
            raise RuntimeParamError(f"CumulativeLogsumexp: 'axis' must be in range [{-rank}, {rank}), got {dim}")
        out = log_cum_sum_exp(x, axis, self.exclusive, self.reverse)
        if not self.exclusive:
            return out
        return _binary("Maximum", out, float(np.finfo(mstype.dtype_to_nptype(out.dtype)).min))


# ---- detection and Ascend's overflow status (issue 21) ----
# NMSWithMask runs the kernel of kernels/ops/misc.py. The float status ops emulate Ascend's status
# register (see _OverflowWatch); FloatStatus is the GPU op that tests one tensor.
import weakref  # noqa: E402

from ascendemu.graph.capture import current_tracer  # noqa: E402
from ascendemu.kernels.ops.common import FLOATS  # noqa: E402

from ..primitive import PYNATIVE_OBSERVERS  # noqa: E402
from .array_ops import BroadcastTo, Reshape  # noqa: E402

# Ascend's float status tensor: 8 float32 elements. After an overflow every element here is 1.0 (the
# scripts test sum > 0); with none, all are 0.0
FLOAT_STATUS_SIZE = 8


class NMSWithMask(_Op):
    """``NMSWithMask(iou_threshold=0.5)(bboxes)``: (boxes, indices, mask) of non-maximum suppression
    over (N, 5) boxes (x0, y0, x1, y1, score), as Ascend runs it: in input order, the scores not
    sorted (sort them descending first); boxes pass through, indices are 0..N-1, mask marks the kept."""

    def __init__(self, iou_threshold: float = 0.5):
        super().__init__()
        if isinstance(iou_threshold, bool) or not isinstance(iou_threshold, float):
            raise TypeError(f"For '{self.name}', the type of 'iou_threshold' must be float, "
                            f"but got {type(iou_threshold).__name__}")
        self.iou_threshold = iou_threshold

    def __call__(self, bboxes: Any) -> tuple[Tensor, Tensor, Tensor]:
        return apply_op("NMSWithMask", [bboxes], {"iou_threshold": self.iou_threshold})


def _float_operand(owner: str, x: Any, dtypes: tuple[str, ...] = ("float16", "float32")) -> Tensor:
    x = _tensor(x)
    if x.dtype.name not in dtypes:
        raise TypeError(f"For '{owner}', the dtype of 'x' must be in {list(dtypes)}, but got {x.dtype}")
    return x


@composite("FloatStatus")
def FloatStatus(x: Any) -> Tensor:
    """(1,) float32: 1.0 if x holds an inf or NaN, else 0.0."""
    x = _float_operand("FloatStatus", x, ("float16", "float32", "float64"))
    overflow = _unary("LogicalNot", apply_op("AllFinite", [x])[0])
    return Reshape()(_cast(overflow, mstype.float32), (1,))


class _OverflowWatch:
    """The emulator's float status register: did any float op give an inf or NaN since the last
    NPUClearFloatStatus?

    GRAPH_MODE: Clear marks the capture's node count; Get reads one AllFinite over every float output
    of the nodes traced since (the backward nodes a gradient call emits in between included), in this
    graph only (no Clear in it: from the graph's start). Those values stay live until Get reads them,
    which the memory plan shows (Ascend's register costs no memory).
    PyNative: from the first Clear on, every op's float outputs are checked on the host as they arrive
    (``primitive.PYNATIVE_OBSERVERS``); a gradient call is one graph there, so its own intermediate
    values are not seen, only the tensors it returns and the ops run on them."""

    def __init__(self) -> None:
        self.starts: "weakref.WeakKeyDictionary[Any, int]" = weakref.WeakKeyDictionary()
        self.pynative_overflow = False
        self.watching = False

    def clear(self) -> None:
        tracer = current_tracer()
        if tracer is not None:
            self.starts[tracer] = len(tracer.graph.nodes)
            return
        self.pynative_overflow = False
        if not self.watching:
            PYNATIVE_OBSERVERS.append(self.observe)
            self.watching = True

    def observe(self, outputs: tuple[Tensor, ...]) -> None:
        if self.pynative_overflow:
            return
        for t in outputs:
            if t.dtype.name in FLOATS and not np.isfinite(t.asnumpy().astype(np.float64)).all():
                self.pynative_overflow = True
                return

    def overflow(self) -> Tensor:
        """A bool scalar: True when a float value overflowed since the last Clear."""
        tracer = current_tracer()
        if tracer is None:
            return Tensor(self.pynative_overflow)
        graph = tracer.graph
        watched = [v for node in graph.nodes[self.starts.get(tracer, 0):] for v in node.outputs
                   if graph.values[v].dtype in FLOATS]
        if not watched:
            return Tensor(False)
        (finite,) = tracer.apply("AllFinite", watched, {})
        return _unary("LogicalNot", Tensor._symbolic(tracer, finite))


_OVERFLOW = _OverflowWatch()


def _write_in_place(x: Tensor, value: Tensor) -> None:
    """Ascend's status ops write their input: ``x`` holds ``value`` from here on (in a capture, when x
    is a value of the graph; a concrete tensor there is a constant and keeps its contents)."""
    if value.is_symbolic:
        if x.is_symbolic:
            x._sym = value._sym
    else:
        x._data = value.asnumpy().copy()


def _status_zeros(like: Tensor) -> Tensor:
    """Zeros shaped like ``like``, made by a node in a capture (so they can be written in place)."""
    return BroadcastTo(like.shape)(_cast(Tensor(0.0), like.dtype))


class NPUAllocFloatStatus(_Op):
    """``NPUAllocFloatStatus()()``: a float32 (8,) status tensor of zeros."""

    def __call__(self) -> Tensor:
        return BroadcastTo((FLOAT_STATUS_SIZE,))(Tensor(0.0, mstype.float32))


def _status_operand(owner: str, x: Any) -> Tensor:
    """The status tensor NPUClear/GetFloatStatus take: a float16/float32 Tensor (MindSpore's TypeError
    for anything else, a list of numbers included)."""
    if not isinstance(x, Tensor):
        raise InvalidTypeError(f"For '{owner}', 'x' must be a Tensor (the output of NPUAllocFloatStatus), but got "
                               f"{type(x).__name__}")
    return _float_operand(owner, x)


class NPUClearFloatStatus(_Op):
    """``NPUClearFloatStatus()(status)``: clears the overflow register (see _OverflowWatch); the status
    tensor becomes zeros (written in place) and is returned."""

    def __call__(self, x: Any) -> Tensor:
        x = _status_operand(self.name, x)
        _OVERFLOW.clear()
        zeros = _status_zeros(x)
        _write_in_place(x, zeros)
        return zeros


class NPUGetFloatStatus(_Op):
    """``NPUGetFloatStatus()(status)``: the overflow register into the status tensor (written in
    place, and returned): all ones if a float op overflowed since the last clear, else zeros."""

    def __call__(self, x: Any) -> Tensor:
        x = _status_operand(self.name, x)
        status = BroadcastTo(x.shape)(_cast(_OVERFLOW.overflow(), x.dtype))
        _write_in_place(x, status)
        return status


@composite("Invert", functions=("invert",))
def Invert(x):
    """Bitwise NOT of an integer tensor (-x - 1 in two's complement); a float tensor is refused."""
    t = _tensor(x)
    if t.dtype.name in FLOAT_DTYPES:
        raise InvalidTypeError(f"Invert: x must be an integer tensor, got {t.dtype}")
    if t.dtype == mstype.bool_:
        return _unary("LogicalNot", t)
    return _unary("Neg", t) - 1


@composite("ApproximateEqual")
def ApproximateEqual(x, y, tolerance=1e-05):
    """|x - y| < tolerance."""
    return _binary("Less", _unary("Abs", _binary("Sub", x, y)), tolerance)


class EuclideanNorm(_Reduce):
    """``EuclideanNorm(keep_dims=False)(x, axes)``: sqrt(sum(x^2)) over ``axes``."""
    op = "ReduceSum"

    def __init__(self, keep_dims: bool = False):
        if not isinstance(keep_dims, bool):
            raise InvalidTypeError(f"For 'EuclideanNorm', the type of 'keep_dims' should be 'bool', but got type "
                                   f"'{type(keep_dims).__name__}'.")
        super().__init__(keep_dims)

    def __call__(self, x: Any, axes: Any = ()) -> Tensor:
        t = _tensor(x)
        return _unary("Sqrt", super().__call__(t * t, axes))


class SquareSumAll(_Op):
    """``SquareSumAll()(x, y)``: (sum(x^2), sum(y^2)) over every element."""

    def __call__(self, x: Any, y: Any) -> tuple[Tensor, Tensor]:
        a, b = _tensor(x), _tensor(y)
        if a.shape != b.shape:
            raise InvalidValueError(f"SquareSumAll: x and y must have the same shape, got {a.shape} and {b.shape}")
        return ReduceSum()(a * a), ReduceSum()(b * b)


class EqualCount(_Op):
    """``EqualCount()(x, y)``: the number of equal elements, as a (1,) tensor of x's dtype."""

    def __call__(self, x: Any, y: Any) -> Tensor:
        a = _tensor(x)
        equal = _cast(_binary("Equal", a, y), mstype.int32)
        return _cast(apply_op("Reshape", [ReduceSum()(equal)], {"shape": (1,)})[0], a.dtype)


# Cross's dim default: the first dimension of size 3
CROSS_FIRST_DIM_OF_3 = -65530


@composite("Cross", functions=("cross",))
def Cross(input, other, dim=CROSS_FIRST_DIM_OF_3):
    """The cross product of 3-vectors along ``dim`` (default: the first dimension of size 3)."""
    x, y = _binary_operands(input, other)
    if x.shape != y.shape:
        raise InvalidParamError(f"Cross: input and other must have one shape, got {x.shape} and {y.shape}")
    if dim is None or dim == CROSS_FIRST_DIM_OF_3:
        dim = next((d for d, size in enumerate(x.shape) if size == 3), None)
        if dim is None:
            raise InvalidValueError(f"Cross: input shape {x.shape} has no dimension of size 3")
    d = check_arg_int(dim, "Cross: dim") % max(x.ndim, 1)
    if x.shape[d] != 3:
        raise InvalidValueError(f"Cross: dimension {d} of {x.shape} must have size 3")
    lead = (slice(None),) * d
    (x0, x1, x2), (y0, y1, y2) = ([t[lead + (slice(i, i + 1),)] for i in range(3)] for t in (x, y))
    return Concat(d)([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0])


# ---- statistics, search, segments, bits (round 2) ----
import builtins  # noqa: E402

# MindSpore's dtypes for Gcd and Lcm
_GCD_DTYPES = ("int16", "int32", "int64")


def _gcd_like(op: str, input: Any, other: Any) -> Tensor:
    """Gcd/Lcm: the operands promoted and broadcast to one shape (the search family's kernels take
    equal shapes), int16/32/64 only as MindSpore."""
    x, y = _binary_operands(input, other)
    if x.dtype.name not in _GCD_DTYPES:
        raise TypeError(f"For Primitive[{op}], the type of the input tensor must be [Int16, Int32, Int64], "
                        f"but got {x.dtype}!")
    shape = tuple(np.broadcast_shapes(x.shape, y.shape))
    if x.shape != shape:
        x = apply_op("BroadcastTo", [x], {"shape": shape})[0]
    if y.shape != shape:
        y = apply_op("BroadcastTo", [y], {"shape": shape})[0]
    return apply_op(op, [x, y], {})[0]


@composite("Gcd", functions=("gcd",))
def Gcd(input, other):
    """``gcd(input, other)``: the greatest common divisor of |input| and |other| (gcd(0, 0) = 0)."""
    return _gcd_like("Gcd", input, other)


@composite("Lcm", functions=("lcm",))
def Lcm(input, other):
    """``lcm(input, other)``: the least common multiple of |input| and |other| (0 if either is 0)."""
    return _gcd_like("Lcm", input, other)


def bucketize_of(input: Any, boundaries: Any, right: bool) -> Tensor:
    """The bucket index of each element among the sorted ``boundaries`` (a list of floats): the first
    boundary >= it, or > it with ``right``, as int32 (the SearchSorted kernel)."""
    x = _tensor(input)
    if not isinstance(boundaries, (list, tuple)):
        raise TypeError(f"For 'Bucketize', 'boundaries' must be a list of floats, but got {type(boundaries).__name__}")
    edges = Tensor(np.asarray(boundaries, np.float64), x.dtype)
    return apply_op("SearchSorted", [edges, x], {"right": _flag("bucketize: right", right), "out_type": "int32"})[0]


@composite("Bucketize")
def Bucketize(input, boundaries=None):
    """``Bucketize(boundaries)(input)``: TensorFlow's buckets: the first boundary greater than each
    element (a value equal to a boundary goes to the bucket above it)."""
    return bucketize_of(input, boundaries, True)


@composite("Histogram", functions=("histc",))
def Histogram(input, bins=100, min=0.0, max=0.0):
    """``histc(input, bins=100, min=0., max=0.)``: counts of the elements in ``bins`` equal-width bins
    over [min, max] (both 0: the data's own min and max); elements outside are not counted; the
    result has the input's dtype (float32 for float inputs)."""
    x = _tensor(input)
    bins = check_arg_int(bins, "histc: bins", minimum=1)
    if min > max:
        raise ValueError(f"For 'Histogram', 'max' must be larger than 'min', but got min {min} and max {max}")
    flat = _cast(apply_op("Reshape", [x], {"shape": (-1,)})[0], mstype.float32)
    if min == 0.0 and max == 0.0 and flat.size:
        low, high = ReduceMin()(flat), ReduceMax()(flat)
    else:
        low, high = Tensor(float(min), mstype.float32), Tensor(float(max), mstype.float32)
    width = _binary("Sub", high, low)
    width = Select()(_binary("Greater", width, 0.0), width, Tensor(1.0, mstype.float32))
    index = _cast(_unary("Floor", _binary("Mul", _binary("Div", _binary("Sub", flat, low), width), float(bins))),
                  mstype.int32)
    index = _binary("Minimum", index, Tensor(bins - 1, mstype.int32))       # max itself is in the last bin
    inside = _binary("LogicalAnd", _binary("GreaterEqual", flat, low), _binary("LessEqual", flat, high))
    index = Select()(inside, index, Tensor(-1, mstype.int32))              # dropped by the segment sum
    ones = _binary("Add", _binary("Mul", flat, 0.0), 1.0)
    counts = apply_op("UnsortedSegmentSum", [ones, index], {"num_segments": bins})[0]
    return _cast(counts, x.dtype if x.dtype.name in ("int32", "float16", "float64") else mstype.float32)


@composite("ReduceStd")
def ReduceStd(x, axis=(), unbiased=True, keep_dims=False):
    """``ReduceStd(axis=(), unbiased=True, keep_dims=False)(x)``: (the standard deviation, the mean)
    over ``axis`` (all by default)."""
    x = floating(x)
    axes = tuple(a % builtins.max(x.ndim, 1) for a in _axes(axis)) or tuple(range(x.ndim))
    mean_kept = ReduceMean(True)(x, axes)
    centred = _binary("Sub", x, mean_kept)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64)) - (1 if unbiased else 0)
    variance = _binary("Div", ReduceSum(keep_dims)(_binary("Mul", centred, centred), axes), float(count))
    return _unary("Sqrt", variance), (mean_kept if keep_dims else ReduceMean(False)(x, axes))


@composite("Renorm", functions=("renorm",), rename={"axis": "dim"})
def Renorm(input, p=None, dim=None, maxnorm=None):
    """``renorm(input, p, axis, maxnorm)``: each slice along ``axis`` whose p-norm exceeds ``maxnorm``
    scaled to it (by maxnorm / (norm + 1e-7)), the others unchanged."""
    x = floating(input)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p <= 0:
        raise ValueError(f"For 'Renorm', 'p' must be a positive number, but got {p!r}")
    d = check_arg_int(dim, "Renorm: dim", minimum=-x.ndim, maximum=x.ndim - 1) % x.ndim
    others = tuple(a for a in range(x.ndim) if a != d)
    norm = _binary("Pow", ReduceSum(True)(_binary("Pow", _unary("Abs", x), float(p)), others), 1.0 / p)
    scale = _binary("Div", Tensor(float(maxnorm), x.dtype), _binary("Add", norm, 1e-7))
    factor = Select()(_binary("Greater", norm, float(maxnorm)), scale, _binary("Add", _binary("Mul", norm, 0.0), 1.0))
    return _binary("Mul", x, factor)


# ---- special functions and linear algebra (round 2) ----
# Each primitive below is a thin stanza over its registry op (kernels/ops/linalg.py and special.py:
# batched small-matrix kernels and elementwise special functions, float64 inside) or a composition of
# them; argument checks raise MindSpore's exception types, which its ops raise before any kernel runs.

# the float dtypes MindSpore's CPU kernels of the matrix decompositions take (its complex ones aside)
LINALG_DTYPES = ("float32", "float64")
# the float dtypes of the elementwise special functions
SPECIAL_DTYPES = ("float16", "float32", "float64")


def _typed(prim: str, x: Any, allowed: tuple[str, ...], name: str = "x") -> Tensor:
    """``x`` as a Tensor of one of ``allowed`` dtypes, else MindSpore's TypeError."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For primitive[{prim}], the input argument[{name}] must be a Tensor, but got "
                        f"{type(x).__name__}.")
    if x.dtype.name not in allowed:
        raise TypeError(f"For primitive[{prim}], the input argument[{name}] must be a type of "
                        f"{{{', '.join('Tensor[' + a.capitalize() + ']' for a in allowed)}}}, but got Tensor[{x.dtype}].")
    return x


def _square(prim: str, x: Any, allowed: tuple[str, ...] = LINALG_DTYPES) -> Tensor:
    """A (batch of) square matrix, checked as MindSpore checks it (ValueError for the shape)."""
    x = _typed(prim, x, allowed)
    if x.ndim < 2:
        raise ValueError(f"For primitive[{prim}], the x rank must be greater than or equal to 2, but got {x.ndim}.")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"For primitive[{prim}], the row size must be equal to {x.shape[-2]}, but got "
                         f"{x.shape[-1]}.")
    return x


def _same_float_dtypes(prim: str, *xs: Tensor) -> None:
    if len({x.dtype for x in xs}) != 1:
        raise TypeError(f"For primitive[{prim}], the input type must be same.")


def _eye_like(x: Tensor) -> Tensor:
    """The identity, batched to x's shape, in x's dtype (a constant)."""
    n = x.shape[-1]
    return Tensor(np.broadcast_to(np.eye(n), x.shape).astype(mstype.dtype_to_nptype(x.dtype)))


def _matrix_transpose(x: Tensor) -> Tensor:
    return apply_op("Transpose", [x], {"perm": tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)})[0]


def _matmul_any(a: Tensor, b: Tensor) -> Tensor:
    """a @ b over one batch shape: BatchMatMul where the cube takes the dtype, else (float64) products
    summed over the shared axis."""
    if a.dtype.name in ("float16", "float32"):
        return apply_op("BatchMatMul" if a.ndim > 2 else "MatMul", [a, b],
                        {"transpose_a": False, "transpose_b": False})[0]
    prod = _binary("Mul", apply_op("ExpandDims", [a], {"axis": -1})[0], apply_op("ExpandDims", [b], {"axis": -3})[0])
    return apply_op("ReduceSum", [prod], {"axis": (-2,), "keep_dims": False})[0]


def _tri_solve(matrix: Tensor, rhs: Tensor, lower: bool, adjoint: bool) -> Tensor:
    return apply_op("MatrixTriangularSolve", [matrix, rhs], {"lower": lower, "adjoint": adjoint})[0]


@composite("MatrixDeterminant", functions=("det", "matrix_determinant"))
def MatrixDeterminant(input):
    """det of each matrix (LU with partial pivoting, in float64); float16 through float32."""
    x = _square("MatrixDeterminant", input, ("float16",) + LINALG_DTYPES)
    if x.dtype == mstype.float16:
        return _cast(apply_op("MatrixDeterminant", [_cast(x, mstype.float32)])[0], mstype.float16)
    return apply_op("MatrixDeterminant", [x])[0]


@composite("LogMatrixDeterminant", functions=("slogdet", "log_matrix_determinant"))
def LogMatrixDeterminant(input):
    """(sign, log|det|) of each matrix."""
    x = _square("LogMatrixDeterminant", input)
    sign, logabs = apply_op("LogMatrixDeterminant", [x])
    return sign, logabs


@composite("MatrixInverse", functions=("inverse",))
def MatrixInverse(input, adjoint=False):
    """inv of each matrix (or of its transpose with ``adjoint``)."""
    x = _square("MatrixInverse", input)
    return apply_op("MatrixInverse", [x], {"adjoint": _flag("MatrixInverse: adjoint", adjoint)})[0]


@composite("Cholesky", functions=("cholesky",))
def Cholesky(input_x, upper=False):
    """The lower (or ``upper``) Cholesky factor; a matrix that is not positive definite gives NaN where
    MindSpore's CPU kernel raises."""
    x = _typed("Cholesky", input_x, LINALG_DTYPES)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"For Cholesky, input x must be batch squares, but got batch {' x '.join(map(str, x.shape))} "
                         f"matrices.")
    return apply_op("Cholesky", [x], {"upper": _flag("Cholesky: upper", upper)})[0]


@composite("CholeskySolve", functions=("cholesky_solve",))
def CholeskySolve(input, input2, upper=False):
    """(U^T U)^-1 b or (L L^T)^-1 b from the factor ``input2``: two triangular solves."""
    b = _typed("CholeskySolve", input, LINALG_DTYPES)
    factor = _square("CholeskySolve", input2)
    _same_float_dtypes("CholeskySolve", b, factor)
    if _flag("CholeskySolve: upper", upper):
        return _tri_solve(factor, _tri_solve(factor, b, False, True), False, False)
    return _tri_solve(factor, _tri_solve(factor, b, True, False), True, True)


@composite("CholeskyInverse", functions=("cholesky_inverse",))
def CholeskyInverse(input_x, upper=False):
    """(U^T U)^-1 or (L L^T)^-1 of one factor (MindSpore's CholeskyInverse takes a 2-D matrix)."""
    factor = _square("CholeskyInverse", input_x)
    if factor.ndim != 2:
        raise ValueError(f"For CholeskyInverse, the dimension of input_x must be equal to 2, but got {factor.ndim}.")
    return CholeskySolve(upper=upper)(_eye_like(factor), factor)


@composite("MatrixSolve", functions=("matrix_solve",))
def MatrixSolve(matrix, rhs, adjoint=False):
    """x with matrix x = rhs (or matrix^T x = rhs with ``adjoint``), LU with partial pivoting."""
    a = _square("MatrixSolve", matrix)
    b = _typed("MatrixSolve", rhs, LINALG_DTYPES, "rhs")
    if b.ndim != a.ndim:
        raise ValueError(f"For primitive[MatrixSolve], the dimension of 'matrix' must be equal to the dimension of "
                         f"'rhs' which is {b.ndim} , but got {a.ndim}.")
    _same_float_dtypes("MatrixSolve", a, b)
    return apply_op("MatrixSolve", [a, b], {"adjoint": _flag("MatrixSolve: adjoint", adjoint)})[0]


@composite("MatrixTriangularSolve")
def MatrixTriangularSolve(matrix, rhs, lower=True, adjoint=False):
    """x with T x = rhs, T the ``lower`` (or upper) triangle of matrix (its transpose with ``adjoint``)."""
    a = _square("MatrixTriangularSolve", matrix)
    b = _typed("MatrixTriangularSolve", rhs, LINALG_DTYPES, "rhs")
    _same_float_dtypes("MatrixTriangularSolve", a, b)
    return _tri_solve(a, b, _flag("MatrixTriangularSolve: lower", lower),
                      _flag("MatrixTriangularSolve: adjoint", adjoint))


@composite("MatrixPower", functions=("matrix_power",))
def MatrixPower(input, n=None):
    """input^n by repeated squaring; a negative n powers the inverse; n = 0 is the identity."""
    x = _square("MatrixPower", input, ("float16",) + LINALG_DTYPES)
    power = check_arg_int(n, "MatrixPower: n")
    if power < 0:
        x = _cast(MatrixInverse()(_cast(x, mstype.float32)), x.dtype) if x.dtype == mstype.float16 else \
            MatrixInverse()(x)
        power = -power
    result = None
    while power:
        if power & 1:
            result = x if result is None else _matmul_any(result, x)
        power >>= 1
        if power:
            x = _matmul_any(x, x)
    return _eye_like(x) if result is None else result


# matrix_exp's scaling and squaring: A / 2^s with ||A / 2^s||_1 <= MATRIX_EXP_NORM (s per matrix, at most
# MATRIX_EXP_SQUARINGS: beyond ||A||_1 = 128 float32's exp overflows anyway), a Taylor polynomial of
# MATRIX_EXP_TERMS terms there (error < 1e-15), then squared s times
MATRIX_EXP_NORM = 0.5
MATRIX_EXP_SQUARINGS = 8
MATRIX_EXP_TERMS = 14


@composite("MatrixExp", functions=("matrix_exp",))
def MatrixExp(input):
    """exp of each matrix by scaling and squaring; s comes from each matrix's 1-norm as tensor ops, and
    each squaring is taken where s asks for it, so one composition serves every value (and a graph)."""
    x = _square("MatrixExp", input, ("float16",) + LINALG_DTYPES)
    compute = _cast(x, mstype.float32) if x.dtype == mstype.float16 else x
    norm = apply_op("ReduceMax", [apply_op("ReduceSum", [_unary("Abs", compute)], {"axis": (-2,), "keep_dims": True})[0]],
                    {"axis": (-1,), "keep_dims": True})[0]
    # s = clip(ceil(log2(norm / MATRIX_EXP_NORM)), 0, MATRIX_EXP_SQUARINGS); norm 0 gives -inf -> 0
    steps = _unary("Ceil", _binary("Div", _unary("Log", _binary("Div", norm, MATRIX_EXP_NORM)), math.log(2.0)))
    steps = _binary("Minimum", _binary("Maximum", steps, 0.0), float(MATRIX_EXP_SQUARINGS))
    total = term = _eye_like(compute)
    scaled = _binary("Mul", compute, _unary("Exp", _binary("Mul", steps, -math.log(2.0))))
    for k in range(1, MATRIX_EXP_TERMS + 1):
        term = _binary("Mul", _matmul_any(term, scaled), 1.0 / k)
        total = _binary("Add", total, term)
    for k in range(MATRIX_EXP_SQUARINGS):
        total = Select()(_binary("Greater", steps, float(k)), _matmul_any(total, total), total)
    return _cast(total, x.dtype) if x.dtype == mstype.float16 else total


@composite("Qr")
def Qr(x, full_matrices=False):
    """(Q, R) by Householder reflections (LAPACK's signs: R's diagonal may be negative)."""
    a = _typed("Qr", x, LINALG_DTYPES)
    if a.ndim < 2:
        raise ValueError(f"For 'Qr', the dimension of input must be at least 2, but got {a.ndim}.")
    q, r = apply_op("Qr", [a], {"full_matrices": _flag("Qr: full_matrices", full_matrices)})
    return q, r


@composite("Orgqr", functions=("orgqr",), rename={"input2": "tau"})
def Orgqr(input, tau):
    """The first n columns of Q = H_0 ... H_(k-1) from Householder vectors and factors (geqrf's)."""
    x = _typed("Orgqr", input, LINALG_DTYPES)
    t = _typed("Orgqr", tau, LINALG_DTYPES, "tau")
    _same_float_dtypes("Orgqr", x, t)
    if x.ndim < 2 or x.shape[-2] < x.shape[-1] or t.shape[:-1] != x.shape[:-2] or t.shape[-1] > x.shape[-1]:
        raise ValueError(f"For 'Orgqr', x must be (*, m, n) with m >= n and tau (*, k) with k <= n, but got "
                         f"{x.shape} and {t.shape}.")
    return apply_op("Orgqr", [x, t])[0]


@composite("Ormqr", functions=("ormqr",))
def Ormqr(input, tau, other, left=True, transpose=False):
    """Q other, other Q (``left`` False), or with Q^T (``transpose``), Q from Householder vectors."""
    x = _typed("Ormqr", input, LINALG_DTYPES)
    t = _typed("Ormqr", tau, LINALG_DTYPES, "tau")
    c = _typed("Ormqr", other, LINALG_DTYPES, "other")
    _same_float_dtypes("Ormqr", x, t, c)
    try:
        return apply_op("Ormqr", [x, t, c], {"left": _flag("Ormqr: left", left),
                                            "transpose": _flag("Ormqr: transpose", transpose)})[0]
    except InvalidParamError as error:
        raise ValueError(f"For 'Ormqr', {error}") from None


def _special(prim: str, x: Any, ints: bool = False) -> Tensor:
    """A special function's float operand (an int32 one cast to float32 where MindSpore takes it)."""
    t = _typed(prim, x, SPECIAL_DTYPES + (("int32",) if ints else ()))
    return _cast(t, mstype.float32) if t.dtype == mstype.int32 else t


@composite("Lgamma", functions=("lgamma",))
def Lgamma(input):
    """log|Gamma(x)|."""
    return apply_op("Lgamma", [_special("Lgamma", input, ints=True)])[0]


@composite("Digamma", functions=("digamma",))
def Digamma(input):
    """psi(x) = d log Gamma(x) / dx."""
    return apply_op("Digamma", [_special("Digamma", input)])[0]


@composite("Polygamma", functions=("polygamma",))
def Polygamma(n, input):
    """The n-th derivative of digamma; n a 0-d integer Tensor, as MindSpore requires."""
    if not isinstance(n, Tensor):
        raise TypeError(f"For primitive[Polygamma], the input[0] should be a Tensor, but got {type(n).__name__}.")
    if n.ndim != 0:
        raise ValueError(f"For 'Polygamma', 'a' should be a 0-dim Tensor, but got rank: {n.ndim}.")
    order = _typed("Polygamma", n, ("int32", "int64"), "a")
    return apply_op("Polygamma", [order, _special("Polygamma", input)])[0]


def _special_pair(prim: str, input: Any, other: Any) -> tuple[Tensor, Tensor]:
    """Two float operands of one dtype (a Python number takes the tensor's); broadcast by the kernel."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"For '{prim.lower()}', at least one of the inputs should be Tensor.")
    if not isinstance(input, Tensor):
        input = Tensor(input, other.dtype)
    if not isinstance(other, Tensor):
        other = Tensor(other, input.dtype)
    a, x = _typed(prim, input, LINALG_DTYPES, "a"), _typed(prim, other, LINALG_DTYPES)
    _same_float_dtypes(prim, a, x)
    return a, x


@composite("Igamma", functions=("igamma",))
def Igamma(input, other):
    """The lower regularised incomplete gamma function P(a, x)."""
    return apply_op("Igamma", list(_special_pair("Igamma", input, other)))[0]


@composite("Igammac", functions=("igammac",))
def Igammac(input, other):
    """The upper regularised incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return apply_op("Igammac", list(_special_pair("Igammac", input, other)))[0]


@composite("Zeta", functions=("zeta",))
def Zeta(input, other):
    """The Hurwitz zeta function sum_k (k + q)^-x."""
    return apply_op("Zeta", list(_special_pair("Zeta", input, other)))[0]


@composite("Betainc")
def Betainc(a, b, x):
    """The regularised incomplete beta function I_x(a, b)."""
    operands = [_typed("Betainc", v, LINALG_DTYPES, name) for v, name in ((a, "a"), (b, "b"), (x, "x"))]
    _same_float_dtypes("Betainc", *operands)
    return apply_op("Betainc", operands)[0]


def _bessel(name: str):
    """The stanza of Bessel function ``name`` (BesselJ0 ...): its primitive and ``bessel_j0``."""
    def body(x):
        return apply_op(name, [_special(name, x)])[0]
    body.__name__ = body.__qualname__ = name
    body.__doc__ = f"The Bessel function {name[6:]} of each element."
    return composite(name, functions=("bessel_" + name[6:].lower(),))(body)


BesselI0 = _bessel("BesselI0")
BesselI0e = _bessel("BesselI0e")
BesselI1 = _bessel("BesselI1")
BesselI1e = _bessel("BesselI1e")
BesselJ0 = _bessel("BesselJ0")
BesselJ1 = _bessel("BesselJ1")
BesselK0 = _bessel("BesselK0")
BesselK0e = _bessel("BesselK0e")
BesselK1 = _bessel("BesselK1")
BesselK1e = _bessel("BesselK1e")
BesselY0 = _bessel("BesselY0")
BesselY1 = _bessel("BesselY1")


# ---- internals round 2: Eps ----
class Eps(_Op):
    """``Eps()(x)``: a tensor like ``x`` filled with its float dtype's machine epsilon (numpy's
    ``finfo(dtype).eps``: 2**-10, 2**-23, 2**-52); it does not depend on ``x``'s values (zero gradient)."""

    def __call__(self, *args: Any) -> Tensor:
        if len(args) != 1:
            raise TypeError(f"Eps() takes 1 input but {len(args)} were given")
        x = args[0]
        if not isinstance(x, Tensor):
            raise TypeError(f"For Primitive[Eps], the type of input argument[x] must be Tensor but got "
                            f"{type(x).__name__}.")
        if x.dtype.name not in ("float16", "float32", "float64"):
            raise TypeError(f"For primitive[Eps], the input argument[x] must be a type of {{Tensor[Float16], "
                            f"Tensor[Float32], Tensor[Float64]}}, but got Tensor[{x.dtype}].")
        dtype = np.dtype(x.dtype.name)
        return Tensor(np.full(x.shape, np.finfo(dtype).eps, dtype))


# ---- complex numbers ----
from .array_ops import Gather as _Gather, Stack as _Stack, Transpose as _Transpose  # noqa: E402

# the complex dtypes, and each one's real part type (MindSpore's Real/Imag/Angle/ComplexAbs outputs)
COMPLEX_DTYPES = ("complex64", "complex128")
COMPLEX_PARTS = {"complex64": "float32", "complex128": "float64"}
# Complex's and Polar's operand dtypes
COMPLEX_PART_DTYPES = tuple(COMPLEX_PARTS.values())


def _is_complex(x: Tensor) -> bool:
    return x.dtype.name in COMPLEX_DTYPES


def _complex_typed(prim: str, x: Any, name: str = "input") -> Tensor:
    """``x`` as a complex Tensor, else MindSpore's TypeError."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For primitive[{prim}], the input argument[{name}] must be a Tensor, but got "
                        f"{type(x).__name__}.")
    if not _is_complex(x):
        raise TypeError(f"For primitive[{prim}], the input argument[{name}] must be a type of "
                        f"{{Tensor[Complex64], Tensor[Complex128]}}, but got {x.dtype}.")
    return x


@composite("Real", functions=("real",))
def Real(input):
    """The real part of a complex tensor; a real tensor is returned as it is (MindSpore's Real)."""
    x = _tensor(input)
    return apply_op("Real", [x])[0] if _is_complex(x) else x


@composite("Imag", functions=("imag",))
def Imag(input):
    """The imaginary part of a complex tensor; zeros for a real one."""
    x = _tensor(input)
    return apply_op("Imag", [x])[0] if _is_complex(x) else x * 0


@composite("Conj", functions=("conj",))
def Conj(input):
    """The complex conjugate; a real tensor is its own."""
    x = _tensor(input)
    return apply_op("Conj", [x])[0] if _is_complex(x) else x


@composite("Angle", functions=("angle",))
def Angle(input):
    """The argument atan2(imag, real) of each complex element (complex inputs only, as on MindSpore CPU)."""
    return apply_op("Angle", [_complex_typed("Angle", _tensor(input))])[0]


@composite("ComplexAbs")
def ComplexAbs(x):
    """|x| of each complex element, in the real part type."""
    return apply_op("ComplexAbs", [_complex_typed("ComplexAbs", _tensor(x), "x")])[0]


def _complex_pair(prim: str, a: Any, b: Any, names: tuple[str, str]) -> tuple[Tensor, Tensor]:
    """Two float32 or two float64 tensors (Complex's and Polar's operands), else MindSpore's TypeError."""
    a, b = _typed(prim, _tensor(a), COMPLEX_PART_DTYPES, names[0]), _typed(prim, _tensor(b), COMPLEX_PART_DTYPES,
                                                                        names[1])
    if a.dtype != b.dtype:
        raise TypeError(f"For primitive[{prim}], the input arguments '{names[0]}' and '{names[1]}' must have the "
                        f"same dtype, but got {a.dtype} and {b.dtype}.")
    return a, b


@composite("Complex")
def Complex(real, imag):
    """real + i imag: float32 -> complex64, float64 -> complex128, broadcast."""
    return apply_op("Complex", list(_complex_pair("Complex", real, imag, ("real", "imag"))))[0]


@composite("Polar", functions=("polar",))
def Polar(abs, angle):
    """abs (cos(angle) + i sin(angle))."""
    r, theta = _complex_pair("Polar", abs, angle, ("abs", "angle"))
    return apply_op("Complex", [r * apply_op("Cos", [theta])[0], r * apply_op("Sin", [theta])[0]])[0]


# FFTWithSize's norm modes and signal ranks (MindSpore's)
FFT_NORMS = ("backward", "forward", "ortho")
FFT_SIGNAL_NDIMS = (1, 2, 3)


@composite("FFTWithSize")
def FFTWithSize(x, signal_ndim, inverse, real, norm="backward", onesided=True, signal_sizes=()):
    """The old torch.fft/ifft/rfft/irfft in one primitive: a transform over the last ``signal_ndim``
    dims; ``real`` with ``inverse`` is irfft (output sizes ``signal_sizes``, else 2 * (bins - 1) on the
    last dim), ``real`` alone rfft (``onesided``: half the last dim's bins)."""
    x = _tensor(x)
    if signal_ndim not in FFT_SIGNAL_NDIMS or x.ndim < signal_ndim:
        raise ValueError(f"For 'FFTWithSize', 'signal_ndim' must be in {FFT_SIGNAL_NDIMS} and at most the rank "
                         f"of x ({x.ndim}), but got {signal_ndim}.")
    if norm not in FFT_NORMS:
        raise ValueError(f"For 'FFTWithSize', 'norm' must be one of {FFT_NORMS}, but got {norm!r}.")
    dims = list(range(x.ndim - signal_ndim, x.ndim))

    def dft(t: Tensor, mode: str, n: int, d: int, inv: bool) -> Tensor:
        return apply_op("DFT", [t], {"mode": mode, "n": n, "axis": d, "inverse": inv, "norm": norm})[0]

    if real and inverse:
        t = _complex_typed("FFTWithSize", x, "x")
        for d in dims[:-1]:
            t = dft(t, "c2c", t.shape[d], d, True)
        n = signal_sizes[-1] if signal_sizes else 2 * (t.shape[-1] - 1)
        if not onesided:
            n = t.shape[-1]
        return dft(t, "c2r", n, dims[-1], True)
    if real:
        t = _typed("FFTWithSize", x, COMPLEX_PART_DTYPES, "x")
        if onesided:
            t = dft(t, "r2c", t.shape[-1], dims[-1], False)
            dims = dims[:-1]
        else:
            t = _cast(t, "complex64" if t.dtype == mstype.float32 else "complex128")
    else:
        t = _complex_typed("FFTWithSize", x, "x")
    for d in dims:
        t = dft(t, "c2c", t.shape[d], d, inverse)
    return t


@composite("STFT")
def STFT(x, window, n_fft=None, hop_length=None, win_length=None, normalized=False, onesided=True,
         return_complex=True):
    """torch.stft without centring: frames of ``n_fft`` samples every ``hop_length``, each times the
    window (``win_length`` samples zero-padded to n_fft, centred), transformed; output
    (..., bins, frames) complex, or (..., bins, frames, 2) real and imaginary parts."""
    x, window = _tensor(x), _tensor(window)
    if x.ndim not in (1, 2) or window.shape != (win_length,) or not 0 < win_length <= n_fft <= x.shape[-1]:
        raise ValueError(f"For 'STFT', x must be 1-D or 2-D with at least n_fft ({n_fft}) samples and window of "
                         f"shape ({win_length},) with win_length <= n_fft, but got x {x.shape} and window "
                         f"{window.shape}.")
    if hop_length <= 0:
        raise ValueError(f"For 'STFT', 'hop_length' must be positive, but got {hop_length}.")
    frames = 1 + (x.shape[-1] - n_fft) // hop_length
    index = np.arange(frames)[:, None] * hop_length + np.arange(n_fft)[None, :]
    framed = _Gather()(x, Tensor(index.astype(np.int64)), x.ndim - 1)          # (..., frames, n_fft)
    left = (n_fft - win_length) // 2
    padded = Concat(0)([t for t in (Tensor(np.zeros(left), window.dtype), window,
                                    Tensor(np.zeros(n_fft - win_length - left), window.dtype)) if t.shape[0]])
    framed = framed * padded
    real_input = not _is_complex(framed)
    mode = "r2c" if onesided and real_input else "c2c"
    if mode == "c2c" and real_input:
        framed = _cast(framed, "complex128" if framed.dtype == mstype.float64 else "complex64")
    out = apply_op("DFT", [framed], {"mode": mode, "n": n_fft, "axis": -1, "inverse": False,
                                     "norm": "ortho" if normalized else "backward"})[0]
    perm = tuple(range(out.ndim - 2)) + (out.ndim - 1, out.ndim - 2)
    out = _Transpose()(out, perm)                                              # (..., bins, frames)
    if return_complex:
        return out
    return _Stack(-1)([apply_op("Real", [out])[0], apply_op("Imag", [out])[0]])


# ---- samplers and generators ----
from ascendemu.kernels.ops.random import op_seed as _op_seed  # noqa: E402

from ...common.parameter import Parameter as _Parameter  # noqa: E402
from ...common.tensor import hold_value as _hold_value  # noqa: E402
from ...common.seed import graph_seed as _graph_seed  # noqa: E402
from ..primitive import Primitive as _Primitive, apply_op as _apply_op  # noqa: E402

# Bernoulli's x dtypes (MindSpore's CPU kernel) and p dtypes
BERNOULLI_X_DTYPES = ("bool", "float32", "float64", "int16", "int32", "int64", "int8", "uint8")
BERNOULLI_P_DTYPES = ("float32", "float64")
BERNOULLI_RANDOM_SEED = -1      # MindSpore's "a new random seed per launch"


class Bernoulli(_Primitive):
    """``Bernoulli(seed=-1, offset=0)(x, p)``: 1 with probability p, else 0, in x's shape and dtype; ``p``
    one value or x's shape. A seed >= 0 draws MindSpore 2.10 CPU's very numbers (kernels/ops/random.py:
    Philox keyed by the seed, its counter restarted each launch after the words the last launch left;
    its CPU kernel ignores ``offset``), one generator per input signature as MindSpore's PyNative kernel
    cache keeps one kernel per signature. seed=-1 (MindSpore: a random seed each launch) takes a key from
    ``set_seed``'s graph seed and advances the counter's high half every call, so a seeded run repeats."""

    def __init__(self, seed: int = BERNOULLI_RANDOM_SEED, offset: int = 0):
        super().__init__("Bernoulli")
        for name, value in (("seed", seed), ("offset", offset)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"For 'Bernoulli', the type of '{name}' must be 'int', but got "
                                f"'{type(value).__name__}'.")
        if seed < BERNOULLI_RANDOM_SEED:
            raise ValueError(f"For 'Bernoulli', the 'seed' must be >= -1, but got {seed}.")
        self.seed, self.offset = seed, offset
        self._states: dict[tuple, Any] = {}

    def _generator(self, key: tuple) -> Any:
        """The kernel state of the calls with this input signature: (Philox key, counter high half, the
        left-over block, words of it used: all four at first)."""
        if key not in self._states:
            seed = self.seed
            if seed == BERNOULLI_RANDOM_SEED:
                seed = _op_seed(*_graph_seed(0, "Bernoulli")) & 0x7FFFFFFFFFFFFFFF
            self._states[key] = _Parameter(np.array([seed, 0, 0, 4], np.int64), name="Bernoulli_state",
                                           requires_grad=False)
        return self._states[key]

    def __call__(self, *args: Any) -> Tensor:
        if len(args) != 2:
            raise TypeError(f"For 'Bernoulli', the number of inputs must be 2, but got {len(args)}.")
        x, p = args
        if not isinstance(x, Tensor) or x.dtype.name not in BERNOULLI_X_DTYPES:
            got = f"Tensor[{x.dtype}]" if isinstance(x, Tensor) else type(x).__name__
            raise TypeError(f"For primitive[Bernoulli], the input argument[x] must be a type of "
                            f"{{Tensor[Bool], Tensor[Float32], Tensor[Float64], Tensor[Int16], Tensor[Int32], "
                            f"Tensor[Int64], Tensor[Int8], Tensor[UInt8]}}, but got {got}.")
        if not isinstance(p, Tensor):
            p = Tensor(np.array(p, np.float32))
        if p.dtype.name not in BERNOULLI_P_DTYPES:
            raise TypeError(f"For primitive[Bernoulli], the input argument[p] must be a type of "
                            f"{{Tensor[Float32], Tensor[Float64]}}, but got Tensor[{p.dtype}].")
        if p.size != 1 and p.shape != x.shape:
            raise ValueError("For 'Bernoulli', 'x' and 'p' should have same shape or 'p' have a size of 1.")
        if not p.is_symbolic:
            values = np.asarray(p.asnumpy(), np.float64)
            if values.size and (values.min() < 0 or values.max() > 1):
                shown = f" but got {values.reshape(-1)[0]:g}" if p.size == 1 else ""
                raise ValueError(f"For bernoulli, p should be in [0, 1],{shown}.".replace(",.", "."))
        state = self._generator((x.shape, x.dtype.name, p.shape, p.dtype.name))
        advance = int(self.seed == BERNOULLI_RANDOM_SEED)
        y, new_state = _apply_op("Bernoulli", [x, p, state], {"advance": advance})
        _hold_value(state, new_state)      # the Parameter's assign (a graph state update)
        return y


# ---- linear algebra and statistics ----
# statistics: Median, Quantile (sorted slices, NaN sorted last); LU: LuSolve, LuUnpack (row swaps as
# rank-one updates, two triangular solves).
def _gather_last(x: Tensor, index: Tensor) -> Tensor:
    """x[..., index[..., j]] along the last axis (GatherD)."""
    return apply_op("GatherD", [x, index], {"dim": x.ndim - 1})[0]


def _to_last(x: Tensor, axis: int) -> Tensor:
    """x with ``axis`` moved to the end (a Transpose)."""
    perm = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
    return x if axis == x.ndim - 1 else apply_op("Transpose", [x], {"perm": perm})[0]


def _from_last(x: Tensor, axis: int) -> Tensor:
    """The inverse of :func:`_to_last`."""
    if axis == x.ndim - 1:
        return x
    perm = list(range(x.ndim - 1))
    perm.insert(axis, x.ndim - 1)
    return apply_op("Transpose", [x], {"perm": tuple(perm)})[0]


def _non_nan_count(x: Tensor) -> Tensor:
    """How many elements of each last-axis slice are not NaN, (..., 1) int32."""
    kept = _cast(apply_op("LogicalNot", [apply_op("IsNan", [x])[0]])[0], mstype.int32)
    return apply_op("ReduceSum", [kept], {"axis": (-1,), "keep_dims": True})[0]


def _nan_like(x: Tensor) -> Tensor:
    """A NaN constant of x's shape and dtype (a constant, so no NaN reaches the gradient)."""
    return apply_op("BroadcastTo", [Tensor(np.array(np.nan), x.dtype)], {"shape": x.shape})[0]


@composite("Median")
def Median(input, global_median=False, axis=0, keep_dims=False, ignore_nan=False):
    """(the lower median, its index): element (n - 1) // 2 of a stable ascending sort, n counting only
    the non-NaN elements with ``ignore_nan``; ``global_median``: of all elements, index 0 (MindSpore's
    CPU kernel returns no index there)."""
    x = _tensor(input)
    if global_median:
        flat = apply_op("Reshape", [x], {"shape": (1, max(x.size, 1))})[0]
        value, _ = Median(axis=-1, ignore_nan=ignore_nan)(flat)
        value = apply_op("Reshape", [value], {"shape": ()})[0]
        return value, Tensor(np.zeros((), np.int64))
    dim = check_arg_int(axis, "Median: axis") % max(x.ndim, 1)
    values, indices = apply_op("Sort", [_to_last(x, dim)], {"axis": -1, "descending": False})
    n = _non_nan_count(values) if _flag("Median: ignore_nan", ignore_nan) else Tensor(
        np.full((1,) * x.ndim, x.shape[dim] if x.ndim else 1, np.int32))
    middle = apply_op("Maximum", [_binary("FloorDiv", _binary("Sub", n, Tensor(np.int32(1))), Tensor(np.int32(2))),
                                  Tensor(np.int32(0))])[0]
    middle = apply_op("BroadcastTo", [middle], {"shape": values.shape[:-1] + (1,)})[0]
    value, index = _gather_last(values, middle), _cast(_gather_last(indices, middle), mstype.int64)
    if not ignore_nan and x.dtype.name.startswith(("float", "bfloat")):
        # a slice with a NaN has median NaN at its first NaN's index (MindSpore's CPU kernel)
        nans = _cast(apply_op("IsNan", [_to_last(x, dim)])[0], mstype.float32)
        first_nan = _cast(apply_op("Argmax", [nans], {"axis": -1, "keep_dims": False})[0], mstype.int64)
        has_nan = apply_op("Greater", [apply_op("ReduceMax", [nans], {"axis": (-1,), "keep_dims": True})[0],
                                       Tensor(np.float32(0.0))])[0]
        value = apply_op("Select", [has_nan, _nan_like(value), value])[0]
        index = apply_op("Select", [has_nan, apply_op("ExpandDims", [first_nan], {"axis": -1})[0], index])[0]
    if not _flag("Median: keep_dims", keep_dims):
        return apply_op("Squeeze", [value], {"axis": (-1,)})[0], apply_op("Squeeze", [index], {"axis": (-1,)})[0]
    return _from_last(value, dim), _from_last(index, dim)


QUANTILE_DTYPES = ("float32", "float64")


def _quantile_q(q: Any, x: Tensor) -> Tensor:
    """q as a 1-D tensor of x's dtype, checked as MindSpore checks it: [0, 1], at most 1-D, same dtype."""
    if isinstance(q, float):
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"For 'Quantile', the 'q' must in the range [0, 1], but got: {q}.")
        return Tensor(np.array([q]), x.dtype)
    if not isinstance(q, Tensor):
        raise TypeError(f"For 'quantile', the type of 'q' must be float or Tensor, but got {type(q).__name__}.")
    if q.ndim > 1:
        raise ValueError(f"For 'Quantile', the dimension of 'q' must be at most 1, but got {q.ndim}.")
    if q.dtype != x.dtype:
        raise TypeError(f"For primitive[Quantile], the input type must be same.")
    values = None if q.is_symbolic else q.asnumpy()
    if values is not None and ((values < 0) | (values > 1)).any():
        raise ValueError(f"For 'Quantile', the 'q' must in the range [0, 1], but got: {values.tolist()}.")
    return apply_op("Reshape", [q], {"shape": (max(q.size, 1),)})[0]


@composite("Quantile")
def Quantile(input, q, dim=None, keep_dims=False, ignore_nan=False):
    """The q-th quantiles along ``dim`` (all elements when None) by linear interpolation between the two
    nearest order statistics (position q (n - 1)); a slice with a NaN gives NaN, or with ``ignore_nan``
    its NaNs are dropped (all NaN: NaN). A 1-D q puts its axis first; a float or 0-D q has none."""
    x = _typed("Quantile", input, QUANTILE_DTYPES, "input")
    scalar_q = isinstance(q, float) or (isinstance(q, Tensor) and q.ndim == 0)
    qs = _quantile_q(q, x)
    if dim is None:
        flat, axis = apply_op("Reshape", [x], {"shape": (max(x.size, 1),)})[0], 0
    else:
        axis = check_arg_int(dim, "Quantile: dim") % max(x.ndim, 1)
        flat = x
    values = apply_op("Sort", [_to_last(flat, axis)], {"axis": -1, "descending": False})[0]
    n = values.shape[-1]
    count = _non_nan_count(values) if _flag("Quantile: ignore_nan", ignore_nan) else Tensor(
        np.full((1,) * values.ndim, n, np.int32))
    last = _cast(apply_op("Maximum", [_binary("Sub", count, Tensor(np.int32(1))), Tensor(np.int32(0))])[0], x.dtype)
    lead = (qs.shape[0],) + values.shape[:-1] + (1,)
    position = _binary("Mul", apply_op("Reshape", [qs], {"shape": (qs.shape[0],) + (1,) * values.ndim})[0], last)
    position = apply_op("BroadcastTo", [position], {"shape": lead})[0]
    low = apply_op("Floor", [position])[0]
    high = apply_op("Ceil", [position])[0]
    stacked = apply_op("BroadcastTo", [values], {"shape": lead[:-1] + (n,)})[0]
    below = _gather_last(stacked, _cast(low, mstype.int32))
    above = _gather_last(stacked, _cast(high, mstype.int32))
    result = _binary("Add", below, _binary("Mul", _binary("Sub", above, below), _binary("Sub", position, low)))
    if ignore_nan:
        nan_slice = apply_op("Equal", [count, Tensor(np.int32(0))])[0]
    else:
        nans = apply_op("ReduceMax", [_cast(apply_op("IsNan", [values])[0], mstype.float32)],
                        {"axis": (-1,), "keep_dims": True})[0]
        nan_slice = apply_op("Greater", [nans, Tensor(np.float32(0.0))])[0]
    nan_slice = apply_op("BroadcastTo", [nan_slice], {"shape": lead})[0]
    result = apply_op("Select", [nan_slice, _nan_like(result), result])[0]
    result = apply_op("Squeeze", [result], {"axis": (-1,)})[0]
    if _flag("Quantile: keep_dims", keep_dims):
        if dim is None:
            result = apply_op("Reshape", [result], {"shape": (qs.shape[0],) + (1,) * x.ndim})[0]
        else:
            result = apply_op("ExpandDims", [result], {"axis": axis + 1})[0]
    if scalar_q:
        result = apply_op("Reshape", [result], {"shape": result.shape[1:]})[0]
    return result


def _row_swaps(target: Tensor, pivots: Tensor, reverse: bool = False) -> Tensor:
    """``target`` (..., m, c) with rows i and pivots[..., i] - 1 swapped for i = 0, 1, ... (LAPACK's
    1-based sequential pivots; ``reverse``: in the opposite order, the inverse permutation). A swap is the
    rank-one update t - d (d^T t), d = e_i - e_p: no data-dependent indexing, so it traces and has a
    gradient."""
    m = target.shape[-2]
    rows = Tensor(np.arange(m, dtype=np.int32))
    steps = range(pivots.shape[-1])
    for i in (reversed(steps) if reverse else steps):
        p = _binary("Sub", _cast(pivots[..., i:i + 1], mstype.int32), Tensor(np.int32(1)))
        e_p = _cast(apply_op("Equal", [rows, p])[0], target.dtype)
        d = apply_op("ExpandDims", [_binary("Sub", Tensor(np.eye(m)[i], target.dtype), e_p)], {"axis": -1})[0]
        swapped = apply_op("ReduceSum", [_binary("Mul", d, target)], {"axis": (-2,), "keep_dims": True})[0]
        target = _binary("Sub", target, _binary("Mul", d, swapped))
    return target


def _lu_factors(lu: Tensor) -> tuple[Tensor, Tensor]:
    """(L, U) of a packed (..., m, n) LU: L unit lower m x k, U upper k x n, k = min(m, n)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = _binary("Mul", lu[..., :, :k], Tensor(np.tril(np.ones((m, k)), -1), lu.dtype))
    lower = _binary("Add", lower, Tensor(np.eye(m, k), lu.dtype))
    upper = _binary("Mul", lu[..., :k, :], Tensor(np.triu(np.ones((k, n))), lu.dtype))
    return lower, upper


def _lu_operands(prim: str, lu_data: Any, lu_pivots: Any) -> tuple[Tensor, Tensor]:
    lu = _typed(prim, lu_data, LINALG_DTYPES, "lu_data")
    pivots = _tensor(lu_pivots)
    if pivots.dtype.name != "int32":
        raise TypeError(f"For primitive[{prim}], the input argument[lu_pivots] must be a type of {{Tensor[Int32]}}, "
                        f"but got Tensor[{pivots.dtype}].")
    if lu.ndim < 2 or pivots.shape[-1] != min(lu.shape[-2:]) or pivots.shape[:-1] != lu.shape[:-2]:
        raise ValueError(f"For '{prim}', the shape of 'lu_pivots' must be lu_data's batch plus (min(m, n),), but got "
                         f"{pivots.shape} for lu_data {lu.shape}.")
    return lu, pivots


@composite("LuSolve", functions=("lu_solve",), rename={"b": "x", "LU_data": "lu_data", "LU_pivots": "lu_pivots"})
def LuSolve(x, lu_data, lu_pivots):
    """x with A x = b from A's packed LU factorisation (lu_data) and its 1-based row pivots: the pivots'
    row swaps applied to b, then the unit-lower and the upper triangular solves."""
    lu, pivots = _lu_operands("LuSolve", lu_data, lu_pivots)
    b = _typed("LuSolve", x, LINALG_DTYPES)
    _same_float_dtypes("LuSolve", b, lu)
    if lu.shape[-1] != lu.shape[-2] or b.ndim < 2 or b.shape[-2] != lu.shape[-1]:
        raise ValueError(f"For 'LuSolve', lu_data must be batch squares matching x's rows, but got x {b.shape} and "
                         f"lu_data {lu.shape}.")
    lower, _ = _lu_factors(lu)
    return _tri_solve(lu, _tri_solve(lower, _row_swaps(b, pivots), True, False), False, False)


@composite("LuUnpack", functions=("lu_unpack",), rename={"LU_data": "lu_data", "LU_pivots": "lu_pivots"})
def LuUnpack(lu_data, lu_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) with A = P L U from the packed LU and its 1-based pivots (P: the swaps applied to the
    identity in reverse order)."""
    lu, pivots = _lu_operands("LuUnpack", lu_data, lu_pivots)
    lower, upper = _lu_factors(lu)
    m = lu.shape[-2]
    eye = apply_op("BroadcastTo", [Tensor(np.eye(m), lu.dtype)], {"shape": lu.shape[:-2] + (m, m)})[0]
    permutation = _row_swaps(eye, pivots, reverse=True) if _flag("LuUnpack: unpack_pivots", unpack_pivots) else None
    if not _flag("LuUnpack: unpack_data", unpack_data):
        return permutation, None, None
    return permutation, lower, upper


@composite("NextAfter", functions=("nextafter",))
def NextAfter(input, other):
    """The next float after ``input`` toward ``other`` (kernels/ops/elementwise.py: NEXTAFTER); float32 or
    float64 operands of one dtype, as MindSpore's kernel takes."""
    x, y = _tensor(input), _tensor(other)
    for label, t in (("x1", x), ("x2", y)):
        if t.dtype.name not in ("float32", "float64"):
            raise TypeError(f"For primitive[NextAfter], the input argument[{label}] must be a type of "
                            f"{{Tensor[Float32], Tensor[Float64]}}, but got Tensor[{t.dtype}].")
    if x.dtype != y.dtype:
        raise TypeError(f"For primitive[NextAfter], the input type must be same, but got {x.dtype} and {y.dtype}.")
    return apply_op("NextAfter", [x, y])[0]


@composite("MatrixSolveLs")
def MatrixSolveLs(matrix, rhs, l2, fast=True):
    """The least-squares X of matrix X ~ rhs with the ridge ``l2``, by the regularised normal equations
    (MindSpore's and TensorFlow's ``fast`` path): (A^T A + l2 I) X = A^T B when rows >= columns, else
    X = A^T (A A^T + l2 I)^-1 B. ``fast=False`` (a complete orthogonal decomposition there) gives the
    same solution for a full-rank matrix."""
    a = _typed("MatrixSolveLs", matrix, LINALG_DTYPES, "matrix")
    b = _typed("MatrixSolveLs", rhs, LINALG_DTYPES, "rhs")
    _same_float_dtypes("MatrixSolveLs", a, b)
    if a.ndim < 2 or b.ndim != a.ndim or b.shape[-2] != a.shape[-2]:
        raise ValueError(f"For 'MatrixSolveLs', matrix (..., M, N) and rhs (..., M, K) must share the batch and M, "
                         f"but got {a.shape} and {b.shape}.")
    _flag("MatrixSolveLs: fast", fast)
    ridge = _cast(_tensor(l2), a.dtype)
    m, n = a.shape[-2:]
    at = _matrix_transpose(a)
    gram = _matmul_any(at, a) if m >= n else _matmul_any(a, at)
    gram = _binary("Add", gram, _binary("Mul", Tensor(np.eye(min(m, n)), a.dtype), ridge))
    if m >= n:
        return apply_op("MatrixSolve", [gram, _matmul_any(at, b)], {"adjoint": False})[0]
    return _matmul_any(at, apply_op("MatrixSolve", [gram, b], {"adjoint": False})[0])


@composite("TridiagonalMatMul")
def TridiagonalMatMul(superdiag, maindiag, subdiag, rhs):
    """T @ rhs for the tridiagonal T given by its three diagonals (..., 1, M): row i is
    maindiag[i] rhs[i] + superdiag[i] rhs[i + 1] + subdiag[i] rhs[i - 1] (superdiag's last and subdiag's
    first element are unused)."""
    b = _tensor(rhs)
    diags = [_tensor(d) for d in (superdiag, maindiag, subdiag)]
    if b.ndim < 2 or any(d.shape[-2:] != (1, b.shape[-2]) for d in diags):
        raise ValueError(f"For 'TridiagonalMatMul', the diagonals must be (..., 1, M) for rhs (..., M, N), but got "
                         f"{[d.shape for d in diags]} and {b.shape}.")
    for d in diags:
        if d.dtype != b.dtype:
            raise TypeError(f"For 'TridiagonalMatMul', the inputs must have one dtype, but got {d.dtype} and "
                            f"{b.dtype}.")
    upper, main, lower = (_matrix_transpose(d) for d in diags)
    zero_row = _binary("Mul", b[..., :1, :], Tensor(np.zeros(()), b.dtype))
    below = apply_op("Concat", [b[..., 1:, :], zero_row], {"axis": -2})[0]
    above = apply_op("Concat", [zero_row, b[..., :-1, :]], {"axis": -2})[0]
    total = _binary("Add", _binary("Mul", main, b), _binary("Mul", upper, below))
    return _binary("Add", total, _binary("Mul", lower, above))


HISTOGRAM_DTYPES = ("int32", "int64", "float16", "float32", "float64")


@composite("HistogramFixedWidth")
def HistogramFixedWidth(x, range, nbins=None, dtype="int32"):
    """Counts of x in ``nbins`` equal bins over range [lo, hi): bin floor((x - lo) / (hi - lo) nbins),
    values below lo counted in the first bin and from hi on in the last (TensorFlow's rule)."""
    values, bounds = _tensor(x), _tensor(range)
    count = check_arg_int(nbins, "HistogramFixedWidth: nbins")
    if count < 1:
        raise ValueError(f"For 'HistogramFixedWidth', 'nbins' must be greater than 0, but got {count}.")
    if dtype not in ("int32", mstype.int32):
        raise TypeError(f"For 'HistogramFixedWidth', the 'dtype' must be 'int32', but got {dtype!r}.")
    if values.dtype.name not in HISTOGRAM_DTYPES or bounds.dtype != values.dtype or bounds.shape != (2,):
        raise TypeError(f"For 'HistogramFixedWidth', x and range must share a dtype among {HISTOGRAM_DTYPES} and "
                        f"range must be (2,), but got {values.dtype}, {bounds.dtype} {bounds.shape}.")
    work = mstype.float64 if values.dtype.name in ("int64", "float64") else mstype.float32
    v, lo, hi = _cast(values, work), _cast(bounds[0:1], work), _cast(bounds[1:2], work)
    scaled = _binary("Mul", _binary("Div", _binary("Sub", v, lo), _binary("Sub", hi, lo)), float(count))
    index = apply_op("Minimum", [apply_op("Floor", [scaled])[0], Tensor(float(count - 1), work)])[0]
    index = apply_op("Maximum", [index, Tensor(0.0, work)])[0]
    index = apply_op("Reshape", [_cast(index, mstype.int32)], {"shape": (-1,)})[0]
    ones = Tensor(np.ones(index.shape, np.float32))
    counts = apply_op("UnsortedSegmentSum", [ones, index], {"num_segments": count})[0]
    return _cast(counts, mstype.int32)


# ---- nn compositions ----
@composite("LerpScalar")
def LerpScalar(input: Any, end: Any, weight: Any = None) -> Tensor:
    """``input + weight * (end - input)`` with a Python float ``weight``."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)):
        raise TypeError(f"For 'LerpScalar', the 'weight' must be a number, but got {type(weight).__name__}.")
    start = _tensor(input)
    return start + (_tensor(end) - start) * weight


# ---- image, detection and windows ----
from .array_ops import _host as _host_data  # noqa: E402

# the dtypes CompareAndBitpack packs (bool packs the values themselves, the others x > threshold)
BITPACK_DTYPES = (mstype.bool_, mstype.float16, mstype.float32, mstype.float64,
                  mstype.int8, mstype.int16, mstype.int32, mstype.int64)
# the bit weights of 8 packed elements: the first element is the most significant bit; MindSpore's CPU
# kernel packs bool input the other way round (the first element the least significant bit)
_BIT_WEIGHTS = np.array([128, 64, 32, 16, 8, 4, 2, 1], np.int32)
# RaggedRange's value dtypes and split dtypes
RAGGED_RANGE_DTYPES = (mstype.int32, mstype.int64, mstype.float32, mstype.float64)
RAGGED_SPLIT_DTYPES = (mstype.int32, mstype.int64)


@composite("CompareAndBitpack")
def CompareAndBitpack(x, threshold):
    """``CompareAndBitpack()(x, threshold)``: ``x > threshold`` packed eight to a uint8 along the last
    dimension (which must divide by 8); a bool x packs its own values."""
    x, threshold = _tensor(x), _tensor(threshold)
    if x.dtype not in BITPACK_DTYPES:
        raise TypeError(f"For primitive[CompareAndBitpack], x must be bool, float or a signed int, but got {x.dtype}.")
    if threshold.dtype != x.dtype:
        raise TypeError(f"For primitive[CompareAndBitpack], threshold must have x's dtype {x.dtype}, but got "
                        f"{threshold.dtype}.")
    if threshold.ndim != 0:
        raise ValueError(f"For primitive[CompareAndBitpack], the threshold's rank' must be equal to 0, but got "
                         f"{threshold.ndim}.")
    if x.ndim == 0 or x.shape[-1] % 8:
        raise ValueError(f"For primitive[CompareAndBitpack], the attribute[x innermost dimension % 8] must be equal "
                         f"to 0, but got {x.shape[-1] % 8 if x.ndim else x.ndim}.")
    bits = x if x.dtype == mstype.bool_ else apply_op("Greater", list(_binary_operands(x, threshold)))[0]
    grouped = apply_op("Reshape", [_cast(bits, mstype.int32)], {"shape": (*x.shape[:-1], x.shape[-1] // 8, 8)})[0]
    weights = Tensor(_BIT_WEIGHTS[::-1].copy() if x.dtype == mstype.bool_ else _BIT_WEIGHTS)
    packed = apply_op("ReduceSum", [grouped * weights], {"axis": (-1,), "keep_dims": False})[0]
    return _cast(packed, mstype.uint8)


class RaggedRange(_Op):
    """``RaggedRange(Tsplits)(starts, limits, deltas) -> (rt_nested_splits, rt_dense_values)``: the ranges
    ``range(starts[i], limits[i], deltas[i])`` one after another, and where each begins (a ragged tensor's
    row splits, of dtype ``Tsplits``). Its length depends on the values: computed from host data (PyNative,
    or constants), as Unique."""

    def __init__(self, Tsplits: Any) -> None:
        super().__init__()
        if Tsplits not in RAGGED_SPLIT_DTYPES:
            raise TypeError(f"For 'RaggedRange', 'Tsplits' must be mindspore.int32 or mindspore.int64, but got "
                            f"{Tsplits}.")
        self.Tsplits = Tsplits

    def __call__(self, starts: Any, limits: Any, deltas: Any) -> tuple[Tensor, Tensor]:
        tensors = [_tensor(t) for t in (starts, limits, deltas)]
        dtype = tensors[0].dtype
        if dtype not in RAGGED_RANGE_DTYPES or any(t.dtype != dtype for t in tensors):
            raise TypeError(f"For RaggedRange, starts, limits and deltas must have one dtype of int32, int64, "
                            f"float32 or float64, but got {[str(t.dtype) for t in tensors]}.")
        if any(t.ndim > 1 for t in tensors):
            raise ValueError(f"For RaggedRange, starts, limits and deltas must be 0-D or 1-D, but got shapes "
                             f"{[t.shape for t in tensors]}.")
        start, limit, delta = (_host_data("RaggedRange", t).reshape(-1) for t in tensors)
        if not start.shape == limit.shape == delta.shape:
            raise ValueError(f"For RaggedRange, starts, limits, and deltas must have the same shape, but got starts "
                             f"{start.shape}, limits {limit.shape}, deltas {delta.shape}.")
        if np.any(delta == 0):
            raise ValueError("For RaggedRange, requires delta != 0.")
        rows = [np.arange(a, b, d, dtype=start.dtype) for a, b, d in zip(start.tolist(), limit.tolist(),
                                                                        delta.tolist())]
        splits = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(mstype.dtype_to_nptype(self.Tsplits))
        values = np.concatenate(rows) if rows else np.zeros(0, start.dtype)
        return Tensor(splits, self.Tsplits), Tensor(values.astype(start.dtype), dtype)


# ---- function transforms ----
class TensorAdd(Add):
    """``ops.TensorAdd()``: MindSpore's deprecated name of :class:`Add` (``mindspore.ops.deprecated``)."""


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.math_ops", name, __all__)
