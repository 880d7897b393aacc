"""``mindspore.Tensor`` methods that alias an elementwise op (``x.acos()`` ~ ``ops.acos``, ``x.eq(y)`` ~
``ops.equal``) or are its in-place ``_`` form: one small float32 sample each (the kernels are the ops'),
and a broadcasting misuse MindSpore refuses for the binary ones. The rest of the Tensor methods are in
sampled_tensor4b.py."""
from __future__ import annotations

from .core import Py, T, method_call, op

POS = dict(low=0.2, high=3.0)
UNIT = dict(low=-0.9, high=0.9)
SHAPE = (2, 3)
BAD_BROADCAST = [([(2, 3), (4,)], {})]

# name -> input domain (None: the default [-2, 2))
UNARY = {"absolute": None, "inv": POS, "deg2rad": None, "tan": UNIT, "erf": None, "arccos": UNIT, "acos": UNIT,
         "log1p": POS, "trunc": None, "arctan": None, "erfinv": UNIT, "negative": None, "rad2deg": None,
         "acosh": dict(low=1.1, high=3.0), "arccosh": dict(low=1.1, high=3.0), "arcsin": UNIT, "arcsinh": None,
         "arctanh": UNIT, "asin": UNIT, "asinh": None, "atan": None, "atanh": UNIT, "cosh": None, "erfc": None,
         "expm1": None, "frac": None, "positive": None, "sgn": None, "sinc": None, "sinh": None}
# in-place forms: the method updates x and returns it (log_, sigmoid_, sign_, erfinv_, floor_, tanh_, zero_
# and clamp_ are Ascend-only kernels MindSpore 2.10 CPU refuses, so they stay unsampled)
INPLACE_UNARY = {"exp_": None}
BINARY = {"subtract": None, "divide": POS, "arctan2": None, "true_divide": POS, "fmax": None,
          "atan2": None, "floor_divide": POS, "remainder": POS, "copysign": None, "fmod": POS, "hypot": None,
          "logaddexp": None, "logaddexp2": None, "xdivy": POS, "xlogy": POS, "float_power": POS}
INPLACE_BINARY = {"mul_": None, "add_": None, "div_": POS, "sub_": None, "floor_divide_": POS, "remainder_": POS}
COMPARE = ("greater_equal", "eq", "ge", "gt", "ne", "le", "lt")
LOGICAL = ("logical_or", "logical_xor")
BITWISE = ("bitwise_or", "bitwise_and", "bitwise_xor")

# MindSpore 2.10 CPU runs these out of place (x keeps its values; on Ascend x takes the result, as in the
# emulator), so only the returned value is compared, and no gradient (the first call changed x)
INPLACE_NOTE = "MindSpore 2.10 CPU leaves x unchanged; Ascend (and the emulator) updates x in place"
SPECS = []
for _name, _domain in UNARY.items():
    SPECS.append(op(f"mindspore.Tensor.{_name}", method_call(_name), shapes=[T(SHAPE, **(_domain or {}))]))
for _name, _domain in INPLACE_UNARY.items():
    SPECS.append(op(f"mindspore.Tensor.{_name}", method_call(_name), shapes=[T(SHAPE, **(_domain or {}))], grad=False,
                    note=INPLACE_NOTE))
for _name, _domain in BINARY.items():
    SPECS.append(op(f"mindspore.Tensor.{_name}", method_call(_name),
                    shapes=[[(2, 3), T(SHAPE, **(_domain or {}))]], errors=BAD_BROADCAST))
for _name, _domain in INPLACE_BINARY.items():
    SPECS.append(op(f"mindspore.Tensor.{_name}", method_call(_name), shapes=[[(2, 3), T(SHAPE, **(_domain or {}))]],
                    errors=BAD_BROADCAST, grad=False, note=INPLACE_NOTE))
for _name in COMPARE:
    SPECS.append(op(f"mindspore.Tensor.{_name}", method_call(_name),
                    shapes=[[T(SHAPE, low=-2, high=2), T(SHAPE, low=-2, high=2)], [T(SHAPE, low=-2, high=2), Py(0)]],
                    dtypes=("int32",), grad=False, errors=BAD_BROADCAST))
for _name in LOGICAL:
    SPECS.append(op(f"mindspore.Tensor.{_name}", method_call(_name), shapes=[[SHAPE, SHAPE]], dtypes=("bool",),
                    errors=BAD_BROADCAST))
for _name in BITWISE:
    SPECS.append(op(f"mindspore.Tensor.{_name}", method_call(_name), shapes=[[SHAPE, SHAPE]], dtypes=("int32",),
                    errors=[([SHAPE, SHAPE], {})]))
SPECS += [
    op("mindspore.Tensor.invert", method_call("invert"), shapes=[SHAPE], dtypes=("int32",), errors=[(SHAPE, {})]),
    op("mindspore.Tensor.isfinite", method_call("isfinite"),
       shapes=[T((4,), values=[1.0, float("inf"), float("nan"), -2.0])], grad=False),
    op("mindspore.Tensor.isneginf", method_call("isneginf"),
       shapes=[T((4,), values=[1.0, float("-inf"), float("inf"), float("nan")])], grad=False),
    op("mindspore.Tensor.isposinf", method_call("isposinf"),
       shapes=[T((4,), values=[1.0, float("-inf"), float("inf"), float("nan")])], grad=False),
    op("mindspore.Tensor.signbit", method_call("signbit"), shapes=[T((4,), values=[1.0, -0.0, -2.5, 0.0])], grad=False),
    op("mindspore.Tensor.isreal", method_call("isreal"), shapes=[SHAPE], grad=False),
    op("mindspore.Tensor.nan_to_num", method_call("nan_to_num"),
       shapes=[T((4,), values=[1.0, float("nan"), float("inf"), float("-inf")])],
       kwargs=[{}, {"nan": 1.0, "posinf": 5.0, "neginf": -5.0}]),
    op("mindspore.Tensor.isclose", method_call("isclose"), shapes=[[SHAPE, SHAPE]], grad=False,
       kwargs=[{}, {"rtol": 0.5, "atol": 0.5}], errors=BAD_BROADCAST),
    op("mindspore.Tensor.approximate_equal", method_call("approximate_equal"), shapes=[[SHAPE, SHAPE]], grad=False,
       kwargs=[{"tolerance": 0.5}]),
    op("mindspore.Tensor.hardshrink", method_call("hardshrink"), shapes=[SHAPE], kwargs=[{}, {"lambd": 1.0}]),
    op("mindspore.Tensor.logit", method_call("logit"), shapes=[T(SHAPE, low=0.1, high=0.9)], kwargs=[{}, {"eps": 0.2}]),
    op("mindspore.Tensor.ldexp", method_call("ldexp"), shapes=[[SHAPE, T(SHAPE, dtype="int32", low=-2, high=3)]]),
    op("mindspore.Tensor.lerp", method_call("lerp"), shapes=[[SHAPE, SHAPE, Py(0.3)], [SHAPE, SHAPE, SHAPE]],
       errors=[([(2, 3), (4,), Py(0.3)], {})]),
    op("mindspore.Tensor.addcmul", method_call("addcmul"), shapes=[[SHAPE, SHAPE, SHAPE]],
       kwargs=[{}, {"value": 0.5}], errors=[([(2, 3), (4,), (4,)], {})]),
    # MindSpore has no gradient for Heaviside
    op("mindspore.Tensor.heaviside", method_call("heaviside"), shapes=[[SHAPE, SHAPE]], grad=False, errors=BAD_BROADCAST),
]
