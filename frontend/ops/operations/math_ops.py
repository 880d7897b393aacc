"""``mindspore.ops.operations.math_ops``: the math primitives, where MindSpore defines them: the
registry's operand-only elementwise ops (generated, ``primitive.generated_primitives``), the
reductions and the matrix products."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, check_int

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import _axes, _flag, _static_int, defined_here
from ..composite_op import composite
from ..primitive import _Op, _binary_operands, _cast, _promote, _tensor, apply_op, generated_primitives
from .array_ops import Concat, Select
from .array_ops import CumProd, CumSum  # noqa: F401  MindSpore serves the scans from both modules
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
        return apply_op(self.op, _promote(_tensor(input), _tensor(mat2)),
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
    tensors = [_tensor(t) for t in inputs]
    if not tensors:
        raise InvalidParamError(f"{label}: inputs must hold at least one tensor")
    first = tensors[0]
    total = first
    for t in tensors[1:]:
        if t.shape != first.shape or t.dtype != first.dtype:
            raise InvalidParamError(f"{label}: every input must have the first one's shape {first.shape} and dtype "
                                    f"{first.dtype}, got {t.shape} {t.dtype}")
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
        raise InvalidParamError(f"Trace: input must be a 2-D tensor, got shape {x.shape}")
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
        raise InvalidParamError("range: step must not be 0")
    if (last - first) * stride < 0:
        raise InvalidParamError(f"range: step={stride} points away from end={last} (start={first})")
    data = np.arange(first, last, stride)
    if data.size > check_int(maxlen, "range: maxlen", minimum=1):
        raise InvalidParamError(f"range: the output has {data.size} elements, more than maxlen={maxlen}")
    if dtype is None:
        dtype = mstype.float32 if any(isinstance(v, float) for v in values) else mstype.int64
    return Tensor(data, mstype.to_type(dtype))


# MindSpore defines the Range primitive in array_ops; this stanza serves the functional forms only
_RangeComposite = composite("Range", functions=("range", "arange"))(_range)


@composite("AssignAdd")
def AssignAdd(variable, value):
    """The Parameter ``variable`` holds variable + value from here on (an Assign of the sum)."""
    return Assign()(variable, variable + value)


@composite("AssignSub")
def AssignSub(variable, value):
    """The Parameter ``variable`` holds variable - value from here on (an Assign of the difference)."""
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
        self.axis, self.p, self.epsilon = _axes(axis), check_int(p, "LpNorm: p", minimum=0), float(epsilon)
        self.keep_dims = _flag("LpNorm: keep_dims", keep_dims)

    def __call__(self, input: Any) -> Tensor:
        return _binary("Maximum", p_norm(floating(input), self.p, self.axis, self.keep_dims), self.epsilon)


@composite("Cdist", functions=("cdist",))
def Cdist(x1, x2, p=2.0):
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M): (..., P, R),
    the differences broadcast and reduced over M."""
    a, b = _binary_operands(floating(x1), floating(x2))
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[-1] != b.shape[-1]:
        raise InvalidParamError(f"Cdist: x1 and x2 must have one rank >= 2 and one last dim, got {a.shape} and "
                                f"{b.shape}")
    rows = apply_op("ExpandDims", [a], {"axis": a.ndim - 1})[0]         # (..., P, 1, M)
    cols = apply_op("ExpandDims", [b], {"axis": b.ndim - 2})[0]         # (..., 1, R, M)
    return p_norm(rows - cols, p, (-1,), False)


@composite("Ger", functions=("ger",))
def Ger(input, vec2):
    """The outer product input[i] * vec2[j] of two 1-D tensors."""
    x, y = _binary_operands(input, vec2)
    if x.ndim != 1 or y.ndim != 1:
        raise InvalidParamError(f"Ger: inputs must be 1-D, got shapes {x.shape} and {y.shape}")
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
        raise InvalidParamError(f"einsum: equation={equation!r} must name the dims of its {count} operand(s) with "
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
    """The larger of x and y, ignoring a NaN (NaN only where both are)."""
    x, y = _binary_operands(input, other)
    return Select()(_unary("IsNan", x), y, Select()(_unary("IsNan", y), x, _binary("Maximum", x, y)))


@composite("Fmin", functions=("fmin",))
def Fmin(input, other):
    """The smaller of x and y, ignoring a NaN (NaN only where both are)."""
    x, y = _binary_operands(input, other)
    return Select()(_unary("IsNan", x), y, Select()(_unary("IsNan", y), x, _binary("Minimum", x, y)))


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
    """``CumulativeLogsumexp(exclusive=False, reverse=False)(x, axis)``: log(cumsum(exp(x))) along axis."""

    def __init__(self, exclusive: bool = False, reverse: bool = False):
        super().__init__()
        self.exclusive = _flag("CumulativeLogsumexp: exclusive", exclusive)
        self.reverse = _flag("CumulativeLogsumexp: reverse", reverse)

    def __call__(self, x: Any, axis: Any) -> Tensor:
        return log_cum_sum_exp(x, axis, self.exclusive, self.reverse)



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


class NPUClearFloatStatus(_Op):
    """``NPUClearFloatStatus()(status)``: clears the overflow register (see _OverflowWatch); the status
    tensor becomes zeros (written in place) and is returned."""

    def __call__(self, x: Any) -> Tensor:
        x = _float_operand(self.name, x)
        _OVERFLOW.clear()
        zeros = _status_zeros(x)
        _write_in_place(x, zeros)
        return zeros


class NPUGetFloatStatus(_Op):
    """``NPUGetFloatStatus()(status)``: the overflow register into the status tensor (written in
    place, and returned): all ones if a float op overflowed since the last clear, else zeros."""

    def __call__(self, x: Any) -> Tensor:
        x = _float_operand(self.name, x)
        status = BroadcastTo(x.shape)(_cast(_OVERFLOW.overflow(), x.dtype))
        _write_in_place(x, status)
        return status



@composite("Invert", functions=("invert",))
def Invert(x):
    """Bitwise NOT of an integer tensor (-x - 1 in two's complement); a float tensor is refused."""
    t = _tensor(x)
    if t.dtype.name in FLOAT_DTYPES:
        raise InvalidParamError(f"Invert: x must be an integer tensor, got {t.dtype}")
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

    def __call__(self, x: Any, axes: Any = ()) -> Tensor:
        t = _tensor(x)
        return _unary("Sqrt", super().__call__(t * t, axes))


class SquareSumAll(_Op):
    """``SquareSumAll()(x, y)``: (sum(x^2), sum(y^2)) over every element."""

    def __call__(self, x: Any, y: Any) -> tuple[Tensor, Tensor]:
        a, b = _tensor(x), _tensor(y)
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
            raise InvalidParamError(f"Cross: input shape {x.shape} has no dimension of size 3")
    d = check_int(dim, "Cross: dim") % max(x.ndim, 1)
    if x.shape[d] != 3:
        raise InvalidParamError(f"Cross: dimension {d} of {x.shape} must have size 3")
    lead = (slice(None),) * d
    (x0, x1, x2), (y0, y1, y2) = ([t[lead + (slice(i, i + 1),)] for i in range(3)] for t in (x, y))
    return Concat(d)([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0])


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.math_ops", name, __all__)
