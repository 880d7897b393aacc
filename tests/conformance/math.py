"""Math specs: elementwise unary and binary ops (functions and Primitives), comparisons and logic,
reductions, matmuls."""
from __future__ import annotations

from .core import Py, T, op

F = ("float32", "float16")
FI = ("float32", "float16", "int32")
UNARY_SHAPES = [(2, 3), (), (0, 3)]
POSITIVE = dict(low=0.2, high=3.0)
# a Python list where a tensor is required: MindSpore refuses it with a TypeError
NOT_A_TENSOR = [([Py([1.0, 2.0])], {})]


def _fn(path: str):
    """ops.<name>(*xs, **kw) for a function path; ops.<Name>()(*xs) for a Primitive."""
    name = path.rsplit(".", 1)[-1]
    if name[0].isupper():
        return lambda ms, *xs, **kw: getattr(ms.ops, name)(**kw)(*xs)
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


def unary(path: str, domain: dict | None = None, dtypes=F, grad: bool = True, errors=(), **options):
    shapes = [T(s, **(domain or {})) for s in UNARY_SHAPES]
    return op(path, _fn(path), shapes=shapes, dtypes=dtypes, grad=grad, errors=errors, **options)


# (functions, Primitive, input domain)
UNARY = [
    (("exp",), "Exp", None), (("log",), "Log", POSITIVE), (("sqrt",), "Sqrt", POSITIVE),
    (("square",), "Square", None), (("abs",), "Abs", None), (("neg",), "Neg", None),
    (("reciprocal",), "Reciprocal", POSITIVE), (("rsqrt",), "Rsqrt", POSITIVE), (("floor",), "Floor", None),
    (("ceil",), "Ceil", None), (("sin",), "Sin", None), (("cos",), "Cos", None), (("tanh",), "Tanh", None),
    (("sigmoid",), "Sigmoid", None), (("relu",), "ReLU", None), (("relu6",), "ReLU6", dict(low=-3, high=8)),
    (("softplus",), "Softplus", None), (("elu",), "Elu", None), (("gelu",), "GeLU", None),
    (("hardswish",), "HSwish", dict(low=-4, high=4)), (("hardsigmoid",), "HSigmoid", dict(low=-4, high=4)),
]

SPECS = []
for functions, primitive, domain in UNARY:
    for name in functions:
        SPECS.append(unary(f"mindspore.ops.{name}", domain, errors=NOT_A_TENSOR))
    SPECS.append(unary(f"mindspore.ops.{primitive}", domain))

SPECS += [
    op("mindspore.ops.isfinite", _fn("isfinite"), shapes=[T((4,), values=[1.0, float("inf"), float("nan"), -2.0]),
                                                         (2, 3)], dtypes=F, grad=False),
    op("mindspore.ops.IsFinite", _fn("IsFinite"), shapes=[T((4,), values=[1.0, float("-inf"), float("nan"), 0.0])],
       dtypes=F, grad=False),
    op("mindspore.ops.logical_not", _fn("mindspore.ops.logical_not"), shapes=[(2, 3), ()], dtypes=("bool",)),
    op("mindspore.ops.LogicalNot", _fn("mindspore.ops.LogicalNot"), shapes=[(2, 3), ()], dtypes=("bool",)),
]

# attributes
SPECS += [
    op("mindspore.ops.softplus", _fn("softplus"), shapes=[T((2, 5), low=-30, high=30)], kwargs=[{"beta": 2, "threshold": 5}]),
    # MindSpore's Elu takes only alpha=1.0 (ValueError otherwise)
    op("mindspore.ops.elu", _fn("elu"), errors=[((2, 5), {"alpha": 0.5})]),
    op("mindspore.ops.Elu", _fn("Elu"), shapes=[(2, 5)], kwargs=[{"alpha": 1.0}]),
    op("mindspore.ops.gelu", _fn("gelu"), shapes=[(2, 5)], kwargs=[{"approximate": "tanh"}, {"approximate": "none"}]),
    op("mindspore.ops.relu", _fn("relu"), shapes=[(2, 5)], dtypes=("int32",), grad=False),
]

BINARY_SHAPES = [[(2, 3), (2, 3)], [(2, 1), (3,)], [(), (4,)], [(0, 3), (1, 3)]]
SCALAR_OPERAND = [[(2, 3), Py(2.0)]]
# Maximum/Minimum broadcast into an empty output only off CPU (MindSpore's CPU kernel refuses it)
ARITHMETIC = [("add", "Add", BINARY_SHAPES), ("sub", "Sub", BINARY_SHAPES), ("mul", "Mul", BINARY_SHAPES),
              ("maximum", "Maximum", BINARY_SHAPES[:3]), ("minimum", "Minimum", BINARY_SHAPES[:3])]
for fname, prim, shapes in ARITHMETIC:
    SPECS.append(op(f"mindspore.ops.{fname}", _fn(fname), shapes=shapes + SCALAR_OPERAND, dtypes=FI,
                    errors=[([Py([1.0]), Py([2.0])], {})]))
    SPECS.append(op(f"mindspore.ops.{prim}", _fn(prim), shapes=shapes, dtypes=FI,
                    errors=[([(2, 3), (4, 5)], {})]))

NONZERO = T((2, 3), low=0.5, high=2.0)
SPECS += [
    op("mindspore.ops.div", _fn("div"), shapes=[[(2, 3), NONZERO], [(2, 1), T((3,), low=0.5, high=2)],
                                               [(2, 3), Py(4.0)]], dtypes=F),
    # rounding modes: float32 only (MindSpore's CPU FloorDiv has no float16 kernel with a scalar operand)
    op("mindspore.ops.div", _fn("div"), shapes=[[(2, 3), NONZERO], [(2, 3), Py(4.0)]],
       kwargs=[{"rounding_mode": "floor"}, {"rounding_mode": "trunc"}]),
    op("mindspore.ops.Div", _fn("Div"), shapes=[[(2, 3), NONZERO], [(), NONZERO]], dtypes=F),
    op("mindspore.ops.RealDiv", _fn("RealDiv"), shapes=[[(2, 3), NONZERO], [(2, 1), T((3,), low=0.5, high=2)]],
       dtypes=F),
    op("mindspore.ops.pow", _fn("pow"), shapes=[[T((2, 3), **POSITIVE), (2, 3)], [T((2, 3), **POSITIVE), Py(2.0)],
                                               [T((2, 1), **POSITIVE), (3,)]], dtypes=F),
    op("mindspore.ops.Pow", _fn("Pow"), shapes=[[T((2, 3), **POSITIVE), (2, 3)], [T((2, 3), **POSITIVE), Py(3.0)]],
       dtypes=F),
]

COMPARE = [("equal", "Equal"), ("not_equal", "NotEqual"), ("ne", None), ("greater", "Greater"), ("gt", None),
           ("greater_equal", "GreaterEqual"), ("ge", None), ("less", "Less"), ("lt", None),
           ("less_equal", "LessEqual"), ("le", None)]
# small ints make ties, so == and <= are exercised
COMPARE_SHAPES = [[T((2, 3), low=-2, high=2), T((2, 3), low=-2, high=2)], [T((2, 1), low=-2, high=2), (3,)],
                  [T((2, 3), low=-2, high=2), Py(1)]]
for fname, prim in COMPARE:
    SPECS.append(op(f"mindspore.ops.{fname}", _fn(fname), shapes=COMPARE_SHAPES, dtypes=("int32", "float32"),
                    grad=False))
    if prim:
        SPECS.append(op(f"mindspore.ops.{prim}", _fn(prim), shapes=COMPARE_SHAPES[:2], dtypes=("int32", "float16"),
                        grad=False))
for fname, prim in [("logical_and", "LogicalAnd"), ("logical_or", "LogicalOr")]:
    for name in (fname, prim):
        SPECS.append(op(f"mindspore.ops.{name}", _fn(name), shapes=[[(2, 3), (2, 3)], [(2, 1), (3,)]],
                        dtypes=("bool",), grad=False))

# --- reductions --------------------------------------------------------------------------------------
R = (2, 3, 4)
SPECS += [
    op("mindspore.ops.sum", _fn("sum"), shapes=[R], dtypes=FI,
       kwargs=[{}, {"dim": 1}, {"dim": (0, 2), "keepdim": True}, {"dim": -1, "dtype": None}]),
    op("mindspore.ops.ReduceSum", lambda ms, x, axis=(), keep_dims=False: ms.ops.ReduceSum(keep_dims)(x, axis),
       shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": (0, 2), "keep_dims": True}]),
    op("mindspore.ops.mean", _fn("mean"), shapes=[R], dtypes=F,
       kwargs=[{}, {"axis": 1}, {"axis": (0, 2), "keep_dims": True}]),
    op("mindspore.ops.ReduceMean", lambda ms, x, axis=(), keep_dims=False: ms.ops.ReduceMean(keep_dims)(x, axis),
       shapes=[R], dtypes=F, kwargs=[{}, {"axis": 1}, {"axis": (0, 2), "keep_dims": True}]),
    op("mindspore.ops.ReduceMax", lambda ms, x, axis=(), keep_dims=False: ms.ops.ReduceMax(keep_dims)(x, axis),
       shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": (0, 2), "keep_dims": True}]),
    op("mindspore.ops.ReduceMin", lambda ms, x, axis=(), keep_dims=False: ms.ops.ReduceMin(keep_dims)(x, axis),
       shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": -1, "keep_dims": True}]),
    op("mindspore.ops.ReduceAll", lambda ms, x, axis=None, keep_dims=False: ms.ops.ReduceAll(keep_dims)(x, axis),
       shapes=[R], dtypes=("bool",), kwargs=[{}, {"axis": 1}, {"axis": -1, "keep_dims": True}], grad=False),
    op("mindspore.ops.all", _fn("all"), shapes=[R], dtypes=("bool",), kwargs=[{}, {"axis": 1}], grad=False),
    op("mindspore.ops.amax", _fn("amax"), shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": -1, "keepdims": True}]),
    op("mindspore.ops.amin", _fn("amin"), shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": -1, "keepdims": True}]),
    op("mindspore.ops.max", _fn("max"), shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": -1, "keepdims": True}]),
    op("mindspore.ops.min", _fn("min"), shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": -1, "keepdims": True}]),
    op("mindspore.ops.argmax", _fn("argmax"), shapes=[R], dtypes=FI, kwargs=[{}, {"dim": 1}, {"dim": -1, "keepdim": True}],
       grad=False),
    op("mindspore.ops.argmin", _fn("argmin"), shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": -1, "keepdims": True}],
       grad=False),
    op("mindspore.ops.Argmax", lambda ms, x, **kw: ms.ops.Argmax(**kw)(x), shapes=[R], dtypes=F,
       kwargs=[{}, {"axis": 1}], grad=False),
    op("mindspore.ops.Argmin", lambda ms, x, **kw: ms.ops.Argmin(**kw)(x), shapes=[R], dtypes=F,
       kwargs=[{}, {"axis": 1}], grad=False),
    op("mindspore.ops.ArgMaxWithValue", lambda ms, x, **kw: ms.ops.ArgMaxWithValue(**kw)(x), shapes=[R], dtypes=F,
       kwargs=[{}, {"axis": 1}, {"axis": -1, "keep_dims": True}]),
    op("mindspore.ops.ArgMinWithValue", lambda ms, x, **kw: ms.ops.ArgMinWithValue(**kw)(x), shapes=[R], dtypes=F,
       kwargs=[{}, {"axis": 1}, {"axis": -1, "keep_dims": True}]),
]

# --- matmul ------------------------------------------------------------------------------------------
SPECS += [
    op("mindspore.ops.matmul", _fn("matmul"), shapes=[[(2, 3), (3, 4)], [(2, 2, 3), (3, 4)], [(3,), (3, 2)],
                                                     [(2, 1, 2, 3), (3, 3, 2)]], dtypes=F),
    op("mindspore.ops.MatMul", lambda ms, a, b, **kw: ms.ops.MatMul(**kw)(a, b), shapes=[[(2, 3), (3, 4)]], dtypes=F,
       errors=[([(2, 3), (4, 4)], {})]),
    op("mindspore.ops.MatMul", lambda ms, a, b, **kw: ms.ops.MatMul(**kw)(a, b),
       shapes=[[(3, 2), (3, 4)]], kwargs={"transpose_a": True}),
    # batch broadcasting ((2, 1, 2, 3) @ (3, 3, 4)) is left out: MindSpore's CPU BatchMatMul refuses it
    op("mindspore.ops.BatchMatMul", lambda ms, a, b, **kw: ms.ops.BatchMatMul(**kw)(a, b),
       shapes=[[(2, 2, 3), (2, 3, 4)], [(2, 4, 3), (2, 3, 4)]], dtypes=F),
    op("mindspore.ops.BatchMatMul", lambda ms, a, b, **kw: ms.ops.BatchMatMul(**kw)(a, b),
       shapes=[[(2, 3, 2), (2, 4, 3)]], kwargs={"transpose_a": True, "transpose_b": True}),
    op("mindspore.ops.bmm", _fn("bmm"), shapes=[[(2, 2, 3), (2, 3, 4)]], dtypes=F),
]

# --- more elementwise functions (served later; usage counts are small, so one sweep each) -------------
UNIT = dict(low=-0.9, high=0.9)
ABOVE_ONE = dict(low=1.1, high=3.0)
MORE_UNARY = {
    "acos": UNIT, "arccos": UNIT, "asin": UNIT, "arcsin": UNIT, "atan": None, "arctan": None,
    "acosh": ABOVE_ONE, "arccosh": ABOVE_ONE, "asinh": None, "arcsinh": None, "atanh": UNIT, "arctanh": UNIT,
    "cosh": None, "sinh": None, "tan": UNIT, "erf": None, "erfc": None, "expm1": None, "log1p": dict(low=-0.5, high=3),
    "log10": POSITIVE, "log2": POSITIVE, "exp2": None, "sign": None, "trunc": None, "frac": None, "negative": None,
    "positive": None, "rad2deg": None, "deg2rad": None, "sinc": None, "logsigmoid": None, "silu": None,
    "mish": None, "selu": None, "celu": None, "softsign": None, "logit": dict(low=0.1, high=0.9), "absolute": None,
    "inv": POSITIVE, "hardshrink": None, "softshrink": None, "round": None,
}
MORE_PRIMS = {"ACos": UNIT, "Acosh": ABOVE_ONE, "Asin": UNIT, "Asinh": None, "Atan": None, "Atanh": UNIT,
              "Cosh": None, "Sinh": None, "Tan": UNIT, "Erf": None, "Erfc": None, "Expm1": None,
              "Log1p": dict(low=-0.5, high=3), "Sign": None, "Trunc": None, "Round": None, "Sinc": None,
              "Mish": None, "SeLU": None, "CeLU": None, "Softsign": None, "HShrink": None, "SoftShrink": None,
              "Inv": POSITIVE}
# no gradient samples for SeLU: MindSpore 2.10 CPU's SeLU gradient is negative for x < 0 (a CPU bug: the
# derivative scale * alpha * exp(x) is positive)
NO_CPU_GRAD = ("selu", "SeLU")
for _name, _domain in MORE_UNARY.items():
    SPECS.append(op(f"mindspore.ops.{_name}", _fn(_name), shapes=[T((2, 3), **(_domain or {})), T((), **(_domain or {}))],
                    grad=_name not in NO_CPU_GRAD))
for _name, _domain in MORE_PRIMS.items():
    SPECS.append(op(f"mindspore.ops.{_name}", _fn(_name), shapes=[T((2, 3), **(_domain or {}))], dtypes=F,
                    grad=_name not in NO_CPU_GRAD))
SPECS += [
    op("mindspore.ops.isnan", _fn("isnan"), shapes=[T((4,), values=[1.0, float("inf"), float("nan"), -2.0])], grad=False),
    op("mindspore.ops.isinf", _fn("isinf"), shapes=[T((4,), values=[1.0, float("-inf"), float("nan"), -2.0])], grad=False),
    op("mindspore.ops.IsNan", _fn("IsNan"), shapes=[T((4,), values=[1.0, float("inf"), float("nan"), -2.0])], grad=False),
    op("mindspore.ops.IsInf", _fn("IsInf"), shapes=[T((4,), values=[1.0, float("-inf"), float("nan"), -2.0])], grad=False),
]
MORE_BINARY = ["atan2", "arctan2", "hypot", "xlogy", "xdivy", "copysign", "logaddexp", "logaddexp2", "fmod",
               "remainder", "floor_divide", "floor_div", "floor_mod", "floordiv", "floormod", "true_divide",
               "divide", "multiply", "subtract", "heaviside", "truncate_div", "truncate_mod", "tensor_add",
               "tensor_mul", "tensor_div", "tensor_floordiv", "tensor_mod", "tensor_pow", "tensor_ge", "tensor_gt",
               "tensor_le", "eq", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"]
_INT_ONLY = ("bitwise_and", "bitwise_or", "bitwise_xor")
_BOOL_ONLY = ("logical_xor",)
_NO_GRAD = ("tensor_ge", "tensor_gt", "tensor_le", "eq", "heaviside", "floor_divide", "floor_div", "floordiv",
            "tensor_floordiv", "truncate_div")
for _name in MORE_BINARY:
    _dtypes = ("int32",) if _name in _INT_ONLY else ("bool",) if _name in _BOOL_ONLY else ("float32",)
    _y = T((2, 3), low=0.5, high=2.0) if _dtypes == ("float32",) else (2, 3)
    SPECS.append(op(f"mindspore.ops.{_name}", _fn(_name), shapes=[[T((2, 3), low=0.2, high=3.0), _y], [(2, 1), (3,)]]
                    if _dtypes == ("float32",) and _name not in ("xlogy",) else [[(2, 3), _y]],
                    dtypes=_dtypes, grad=_name not in _NO_GRAD))
MORE_BINARY_PRIMS = ["Atan2", "Xlogy", "Xdivy", "Hypot", "FloorDiv", "FloorMod", "Mod", "TruncateDiv", "TruncateMod",
                     "SquaredDifference", "DivNoNan", "MulNoNan", "Heaviside", "LogicalXor", "BitwiseAnd", "BitwiseOr",
                     "BitwiseXor"]
for _name in MORE_BINARY_PRIMS:
    _dtypes = ("int32",) if _name.startswith("Bitwise") else ("bool",) if _name == "LogicalXor" else ("float32",)
    SPECS.append(op(f"mindspore.ops.{_name}", _fn(_name), shapes=[[T((2, 3), low=0.2, high=3.0), T((2, 3), low=0.5, high=2.0)]]
                    if _dtypes == ("float32",) else [[(2, 3), (2, 3)]], dtypes=_dtypes,
                    grad=_name not in ("FloorDiv", "TruncateDiv", "Heaviside")))
SPECS += [
    op("mindspore.ops.norm", _fn("norm"), shapes=[(3, 4)], kwargs=[{}, {"dim": 1}, {"ord": 1, "dim": 0}, {"dim": 1, "keepdim": True}]),
    op("mindspore.ops.prod", _fn("prod"), shapes=[(2, 3)], kwargs=[{}, {"axis": 1}]),
    # axis=() without a gradient: MindSpore 2.10 CPU's ReduceProd gradient over all axes is ones (a CPU
    # bug; the product rule, which Ascend's documented gradient follows, gives prod / x)
    op("mindspore.ops.ReduceProd", lambda ms, x, axis=(), keep_dims=False: ms.ops.ReduceProd(keep_dims)(x, axis),
       shapes=[(2, 3)], kwargs=[{}], grad=False),
    op("mindspore.ops.ReduceProd", lambda ms, x, axis=(), keep_dims=False: ms.ops.ReduceProd(keep_dims)(x, axis),
       shapes=[(2, 3)], kwargs=[{"axis": 1}]),
    op("mindspore.ops.std", _fn("std"), shapes=[(3, 4)], kwargs=[{}, {"axis": 1}]),
    op("mindspore.ops.var", _fn("var"), shapes=[(3, 4)], kwargs=[{}, {"axis": 1}]),
    op("mindspore.ops.std_mean", _fn("std_mean"), shapes=[(3, 4)], kwargs=[{}, {"axis": 1}]),
    op("mindspore.ops.var_mean", _fn("var_mean"), shapes=[(3, 4)], kwargs=[{}, {"axis": 1}]),
    op("mindspore.ops.logsumexp", lambda ms, x, **kw: ms.ops.logsumexp(x, **kw), shapes=[(3, 4)], kwargs=[{"dim": 1}, {"dim": 0, "keepdim": True}]),
    op("mindspore.ops.nansum", _fn("nansum"), shapes=[(3, 4)], kwargs=[{}, {"axis": 1}]),
    op("mindspore.ops.nanmean", _fn("nanmean"), shapes=[(3, 4)], kwargs=[{}, {"axis": 1}]),
    op("mindspore.ops.any", _fn("any"), shapes=[(2, 3)], dtypes=("bool",), kwargs=[{}, {"axis": 1}], grad=False),
    op("mindspore.ops.ReduceAny", lambda ms, x, axis=(), keep_dims=False: ms.ops.ReduceAny(keep_dims)(x, axis),
       shapes=[(2, 3)], dtypes=("bool",), kwargs=[{}, {"axis": 1}], grad=False),
    op("mindspore.ops.cumsum", _fn("cumsum"), shapes=[(2, 3)], dtypes=("float32", "int32"), kwargs=[{"axis": 0}, {"axis": 1}]),
    op("mindspore.ops.CumSum", lambda ms, x, axis, **kw: ms.ops.CumSum(**kw)(x, axis), shapes=[(2, 3)],
       kwargs=[{"axis": 1}, {"axis": 1, "exclusive": True}, {"axis": 0, "reverse": True}]),
    op("mindspore.ops.cumprod", _fn("cumprod"), shapes=[(2, 3)], kwargs=[{"dim": 1}]),
    op("mindspore.ops.CumProd", lambda ms, x, axis, **kw: ms.ops.CumProd(**kw)(x, axis), shapes=[(2, 3)], kwargs=[{"axis": 1}]),
    # cummax/cummin: no gradient samples (MindSpore 2.10 CPU's gradient raises an empty RuntimeError)
    op("mindspore.ops.cummax", _fn("cummax"), shapes=[(2, 3)], kwargs=[{"axis": 1}], grad=False),
    op("mindspore.ops.cummin", _fn("cummin"), shapes=[(2, 3)], kwargs=[{"axis": 1}], grad=False),
    op("mindspore.ops.dot", _fn("dot"), shapes=[[(2, 3), (3, 4)]]),
    op("mindspore.ops.mm", _fn("mm"), shapes=[[(2, 3), (3, 4)]]),
    op("mindspore.ops.mv", _fn("mv"), shapes=[[(2, 3), (3,)]]),
    op("mindspore.ops.outer", _fn("outer"), shapes=[[(2,), (3,)]]),
    op("mindspore.ops.ger", _fn("ger"), shapes=[[(2,), (3,)]]),
    op("mindspore.ops.inner", _fn("inner"), shapes=[[(2, 3), (4, 3)]]),
    op("mindspore.ops.kron", _fn("kron"), shapes=[[(2, 2), (2, 3)]]),
    op("mindspore.ops.tensor_dot", lambda ms, a, b, axes: ms.ops.tensor_dot(a, b, axes), shapes=[[(2, 3, 4), (4, 3, 2)]],
       kwargs=[{"axes": ((1, 2), (1, 0))}]),
    op("mindspore.ops.addmm", _fn("addmm"), shapes=[[(2, 4), (2, 3), (3, 4)]], kwargs=[{}, {"beta": 0.5, "alpha": 2.0}]),
    op("mindspore.ops.addmv", _fn("addmv"), shapes=[[(2,), (2, 3), (3,)]]),
    op("mindspore.ops.baddbmm", _fn("baddbmm"), shapes=[[(2, 2, 4), (2, 2, 3), (2, 3, 4)]]),
    op("mindspore.ops.addbmm", _fn("addbmm"), shapes=[[(2, 4), (2, 2, 3), (2, 3, 4)]]),
    op("mindspore.ops.addcmul", _fn("addcmul"), shapes=[[(2, 3), (2, 3), (2, 3), T((), values=0.5)]]),
    op("mindspore.ops.addcdiv", _fn("addcdiv"), shapes=[[(2, 3), (2, 3), T((2, 3), low=0.5, high=2), T((), values=0.5)]]),
    op("mindspore.ops.lerp", _fn("lerp"), shapes=[[(2, 3), (2, 3), T((), values=0.3)]]),
    op("mindspore.ops.cdist", _fn("cdist"), shapes=[[(2, 3, 4), (2, 5, 4)]]),
    op("mindspore.ops.dist", _fn("dist"), shapes=[[(2, 3), (2, 3)]]),
    op("mindspore.ops.trace", _fn("trace"), shapes=[(3, 4)]),
    op("mindspore.ops.isclose", _fn("isclose"), shapes=[[(2, 3), (2, 3)]], kwargs=[{}, {"rtol": 1.0}], grad=False),
    op("mindspore.ops.approximate_equal", _fn("approximate_equal"), shapes=[[(2, 3), (2, 3)]], kwargs=[{"tolerance": 1.0}], grad=False),
    op("mindspore.ops.nan_to_num", _fn("nan_to_num"), shapes=[T((4,), values=[1.0, float("nan"), float("inf"), float("-inf")])],
       kwargs=[{}, {"nan": 1.0, "posinf": 9.0, "neginf": -9.0}], grad=False),
    op("mindspore.ops.addn", lambda ms, a, b, c: ms.ops.addn([a, b, c]), shapes=[[(2, 3), (2, 3), (2, 3)]]),
    op("mindspore.ops.AddN", lambda ms, a, b: ms.ops.AddN()((a, b)), shapes=[[(2, 3), (2, 3)]], dtypes=("float32", "int32")),
    op("mindspore.ops.L2Loss", _fn("L2Loss"), shapes=[(2, 3)]),
    op("mindspore.ops.LpNorm", lambda ms, x, **kw: ms.ops.LpNorm(**kw)(x), shapes=[(2, 3)], kwargs=[{"axis": [1]}, {"axis": [0, 1], "p": 1}]),
]
