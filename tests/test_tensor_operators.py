"""Python's operators on a Tensor that MindSpore 2.10 defines beyond + - * / ** @: // and % (FloorDiv,
FloorMod), & | ^ (BitwiseAnd/Or/Xor: bool stays bool, bool with int promotes), ~ (LogicalNot, whatever the
dtype), round() (Round) and ``in`` (any element equal); and the integer rules of division and sums: Div
(``/``, ops.div) of integer or bool operands is float32 true division (RealDiv keeps the integers), and
ops.sum / Tensor.sum / mint.sum / ops.prod of integers or bools are int64. The expected values are what
real MindSpore 2.10 CPU printed for the same expressions (PyNative); each also runs inside a GRAPH_MODE
Cell. The ones MindSpore refuses (`1 & x`, divmod) are refused here too, with Python's TypeError."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn

X = np.array([5, -3], np.int32)
Y = np.array([2, 2], np.int32)
F = np.array([5.5, -3.5], np.float32)
A = np.array([True, False])
B = np.array([True, True])

# expression -> (MindSpore 2.10's printed value, its dtype)
RECORDED = {
    "x // y": ([2, -2], "Int32"), "x % y": ([1, 1], "Int32"),
    "f // 2": ([2.0, -2.0], "Float32"), "f % 2": ([1.5, 0.5], "Float32"),
    "7 // x": ([1, -3], "Int32"), "7 % x": ([2, -2], "Int32"),
    "x & y": ([0, 0], "Int32"), "x | y": ([7, -1], "Int32"), "x ^ y": ([7, -1], "Int32"),
    "~x": ([False, False], "Bool"), "~a": ([False, True], "Bool"),
    "a & b": ([True, False], "Bool"), "a | b": ([True, True], "Bool"), "a ^ b": ([False, True], "Bool"),
    "a | x": ([5, -3], "Int32"), "x & 1": ([1, 1], "Int32"), "a & True": ([True, False], "Bool"),
    "round(f)": ([6.0, -4.0], "Float32"),
    "x / y": ([2.5, -1.5], "Float32"), "x / 2": ([2.5, -1.5], "Float32"), "a / 2": ([0.5, 0.0], "Float32"),
    'ms.ops.div(x, y, rounding_mode="floor")': ([2, -2], "Int32"),
    'ms.ops.div(x, y, rounding_mode="trunc")': ([2, -1], "Int32"),
    "ms.ops.Div()(x, y)": ([2.5, -1.5], "Float32"), "ms.ops.RealDiv()(x, y)": ([2, -1], "Int32"),
    "ms.ops.sum(x)": (2, "Int64"), "x.sum()": (2, "Int64"), "x.sum(0)": (2, "Int64"), "a.sum()": (1, "Int64"),
    "ms.mint.sum(x)": (2, "Int64"), "ms.ops.prod(x)": (-15, "Int64"), "ms.ops.sum(x, dtype=ms.int32)": (2, "Int32"),
    "ms.ops.sum(f)": (2.0, "Float32"),
    # bool + - * bool: the integer result's truth (ops.add itself refuses bools); an integer mean truncates
    "a + b": ([True, True], "Bool"), "a - b": ([False, True], "Bool"), "b - a": ([False, True], "Bool"),
    "a * b": ([True, False], "Bool"), "ms.ops.mean(x)": (1, "Int32"), "x.mean()": (1, "Int32"),
    "ms.ops.mean(x - y * 4)": (-7, "Int32"),
    "ms.ops.mean(ms.Tensor(np.array([-3, -1, -3], np.int32)))": (-2, "Int32"),
}
# Python values MindSpore gave (``in`` reads the tensor on the host: PyNative only)
RECORDED_PYTHON = {"5 in x": True, "4 in x": False, "5.5 in f": True}


def _evaluate(expr: str, x, y, f, a, b):
    return eval(expr)       # noqa: S307 - the expressions are this module's constants


@pytest.mark.parametrize("expr", sorted(RECORDED))
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_operator_gives_what_mindspore_printed(ex, restore_context, expr, mode):
    want, dtype = RECORDED[expr]
    inputs = [Tensor(v) for v in (X, Y, F, A, B)]
    if mode == "graph":
        ms.set_context(mode=ms.GRAPH_MODE)

        class Net(nn.Cell):
            def construct(self, x, y, f, a, b):
                return _evaluate(expr, x, y, f, a, b)
        out = Net()(*inputs)
    else:
        out = _evaluate(expr, *inputs)
    assert str(out.dtype) == dtype
    np.testing.assert_array_equal(out.asnumpy(), np.array(want, out.asnumpy().dtype))


@pytest.mark.parametrize("expr", sorted(RECORDED_PYTHON))
def test_python_valued_operator_gives_what_mindspore_printed(ex, expr):
    assert _evaluate(expr, Tensor(X), Tensor(Y), Tensor(F), Tensor(A), Tensor(B)) is RECORDED_PYTHON[expr]


@pytest.mark.parametrize("expr", ["1 & x", "True ^ a", "divmod(x, y)"])
def test_what_mindspore_refuses_is_refused(expr):
    with pytest.raises(TypeError):
        _evaluate(expr, Tensor(X), Tensor(Y), Tensor(F), Tensor(A), Tensor(B))


# integer powers (Pow of int operands: MindSpore's kernel casts std::pow, so a negative exponent truncates
# toward zero and a result past the type wraps): what MindSpore 2.10 CPU printed
POW_BASE = np.array([2, -1, 1, 3, -2, 2, 0], np.int32)
POW_EXP = np.array([-1, -1, -2, 0, 3, 31, 2], np.int32)
RECORDED_POW = {
    "ms.ops.pow(p, q)": ([0, -1, 1, 1, -8, -2147483648, 0], "Int32"),
    "p ** 2": ([4, 1, 1, 9, 4, 4, 0], "Int32"),
    "2 ** q": ([0, 0, 0, 1, 8, -2147483648, 4], "Int32"),
    "ms.ops.pow(ms.Tensor(np.array([3, -2], np.int8)), ms.Tensor(np.array([5, 7], np.int8)))": ([-13, -128], "Int8"),
}


@pytest.mark.parametrize("expr", sorted(RECORDED_POW))
def test_integer_power_gives_what_mindspore_printed(ex, expr):
    want, dtype = RECORDED_POW[expr]
    out = eval(expr, {"ms": ms, "np": np, "p": Tensor(POW_BASE), "q": Tensor(POW_EXP)})   # noqa: S307
    assert str(out.dtype) == dtype
    assert out.asnumpy().tolist() == want
