"""Operator library: every op's kernel against an independent numpy reference, the block split,
the kernel metadata and the validation errors.

Kernels are compiled in-process with numba (compile_inprocess) and launched block by block through
the uniform ABI exactly as the runtime does: one host address per argument, inputs, outputs,
workspaces, allocated from the kernel's own ArgSpec list.
"""
from __future__ import annotations

import ctypes
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ascendemu.errors import InvalidParamError
from ascendemu.kernels.library import (FUNC_NAMES, SUPPORTED_OPS, KernelSource, compile_inprocess,
                                       generate, infer_outputs)
from ascendemu.kernels.signature import OpSignature, TensorDesc

RNG = np.random.default_rng(1234)
_KERNELS: dict = {}


def sig(op: str, inputs, **attrs) -> OpSignature:
    return OpSignature.make(op, [(tuple(a.shape), str(a.dtype)) if isinstance(a, np.ndarray) else a
                                 for a in inputs], **attrs)


def kernel(s: OpSignature):
    if s not in _KERNELS:
        _KERNELS[s] = compile_inprocess(s)
    return _KERNELS[s]


CANARY = 256      # guard bytes after every written buffer; a kernel must never touch them


def launch(s: OpSignature, arrays, blocks=None, sentinel: bool = False, threads: int = 0):
    """Run ``blocks`` (default: all, in reverse order) of the kernel of ``s``; return the outputs.

    Outputs start as 0xFF bytes when ``sentinel`` (NaN for floats) else zeros; ``threads`` > 0 runs
    the blocks concurrently on that many threads, as the runtime's workers may.
    """
    k = kernel(s)
    outs_desc = infer_outputs(s)
    n_in = len(s.inputs)
    assert [spec.role for spec in k.args] == (["in"] * n_in + ["out"] * len(outs_desc)
                                              + ["workspace"] * (len(k.args) - n_in - len(outs_desc)))
    inputs = [np.ascontiguousarray(a) for a in arrays]
    for a, spec in zip(inputs, k.args):
        assert a.nbytes == spec.nbytes
    written = [np.full(spec.nbytes + CANARY, 0xA5, np.uint8) for spec in k.args[n_in:]]
    for buf, spec in zip(written[:len(outs_desc)], k.args[n_in:]):
        buf[:spec.nbytes] = 0xFF if sentinel else 0
    buffers = inputs + written
    host = k.argv([b.ctypes.data for b in buffers])
    order = list(reversed(range(k.block_dim)) if blocks is None else blocks)
    if threads:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda b: k.call_block(host, b), order))
    else:
        for b in order:
            k.call_block(host, b)
    for buf, spec in zip(written, k.args[n_in:]):
        assert (buf[spec.nbytes:] == 0xA5).all(), f"{s.op} wrote past the end of a {spec.role} buffer"
    return [buf[:d.nbytes].view(d.dtype).reshape(d.shape) for buf, d in zip(written, outs_desc)]


def check(out: np.ndarray, ref, dtype: str | None = None, exact: bool = False):
    ref = np.asarray(ref)
    dtype = dtype or str(out.dtype)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    if exact or dtype == "int32":
        np.testing.assert_array_equal(out, ref.astype(out.dtype))
        return
    finite = np.abs(ref[np.isfinite(ref)])
    scale = max(1.0, float(finite.max()) if finite.size else 1.0)
    rtol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=rtol, atol=rtol * scale,
                               equal_nan=True)


def rand(shape, dtype="float32", low=None, high=None, scale=1.0):
    if dtype == "int32":
        values = RNG.integers(-1000 if low is None else low, 1000 if high is None else high, size=shape)
    elif low is not None:
        values = RNG.uniform(low, high, size=shape)
    else:
        values = RNG.standard_normal(shape) * scale
    return np.asarray(values).astype(dtype)


def f64(a):
    return np.asarray(a).astype(np.float64)


# -------------------------------------------------------------------------------- elementwise

def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


UNARY = [
    ("Square", "float32", None, np.square),
    ("Neg", "float16", None, np.negative),
    ("Abs", "float32", None, np.abs),
    ("Exp", "float16", None, np.exp),
    ("Log", "float32", (0.01, 10), np.log),
    ("Sqrt", "float16", (0.0, 10), np.sqrt),
    ("Rsqrt", "float32", (0.01, 10), lambda x: 1 / np.sqrt(x)),
    ("ReLU", "float16", None, lambda x: np.maximum(x, 0)),
    ("Sigmoid", "float32", None, lambda x: 1 / (1 + np.exp(-x))),
    ("Tanh", "float16", None, np.tanh),
    ("GeLU", "float32", None, gelu),
    ("Abs", "int32", None, np.abs),
    ("ReLU", "int32", None, lambda x: np.maximum(x, 0)),
    ("Square", "int32", None, lambda x: x.astype(np.int64) ** 2),
    ("Reciprocal", "float32", (0.1, 10), lambda x: 1 / x),
    ("Floor", "float32", None, np.floor),
    ("Ceil", "float16", None, np.ceil),
    ("Sin", "float32", None, np.sin),
    ("Cos", "float16", None, np.cos),
]


@pytest.mark.parametrize("op,dtype,domain,ref", UNARY, ids=[f"{u[0]}-{u[1]}" for u in UNARY])
def test_unary(op, dtype, domain, ref):
    shape = (3, 1, 37)
    x = rand(shape, dtype, *(domain or (None, None)), scale=3.0)
    (out,) = launch(sig(op, [x]), [x])
    expected = ref(x.astype(np.int64) if dtype == "int32" else f64(x))
    check(out, expected.astype(np.int64).astype(np.int32) if dtype == "int32" else expected, dtype)


def test_unary_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1e-30], np.float32)
    (out,) = launch(sig("Rsqrt", [x]), [x])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, (1 / np.sqrt(f64(x))).astype(np.float32))


@pytest.mark.parametrize("src,dst", [("float32", "float16"), ("float16", "float32"),
                                     ("float32", "int32"), ("int32", "float16")])
def test_cast(src, dst):
    x = rand((5, 13), src, scale=300.0)
    if src == "float32" and dst == "float16":
        x[0, :6] = [65504.0, 65520.0, 1e-8, -3e-5, np.inf, np.nan]
    (out,) = launch(sig("Cast", [x], dst_type=dst), [x])
    assert out.dtype == np.dtype(dst)
    with np.errstate(all="ignore"):
        expected = x.astype(dst)
    np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))


COMPARE = {"Equal": np.equal, "NotEqual": np.not_equal, "Greater": np.greater,
           "GreaterEqual": np.greater_equal, "Less": np.less, "LessEqual": np.less_equal}


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
@pytest.mark.parametrize("op", sorted(COMPARE))
def test_comparisons_write_bool_bytes_like_numpy(op, dtype):
    a = rand((3, 1, 70), dtype, -4, 4) if dtype == "int32" else np.round(rand((3, 1, 70), dtype, scale=2.0))
    b = rand((5, 1), dtype, -4, 4) if dtype == "int32" else np.round(rand((5, 1), dtype, scale=2.0))
    if dtype != "int32":
        a[0, 0, :3] = [np.nan, np.inf, -0.0]     # NaN compares unequal to everything; -0 == 0
        b[:2, 0] = [np.nan, 0.0]
    (out,) = launch(sig(op, [a, b]), [a, b], sentinel=True)
    assert out.dtype == np.bool_ and out.shape == (3, 5, 70)
    np.testing.assert_array_equal(out.view(np.uint8), COMPARE[op](a, b).view(np.uint8))   # exactly 0 or 1


@pytest.mark.parametrize("src,dst", [("float32", "bool"), ("bool", "float32"), ("int32", "bool"), ("bool", "int32")])
def test_cast_to_and_from_bool(src, dst):
    x = (rand((4, 9), "int32", -2, 3) if src != "float32" else rand((4, 9), "float32")).astype(src)
    if src == "float32":
        x[0, :3] = [0.0, -0.0, np.nan]
    (out,) = launch(sig("Cast", [x], dst_type=dst), [x])
    np.testing.assert_array_equal(out, x.astype(dst))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_is_finite(dtype):
    x = rand((3, 41), dtype, scale=10.0)
    if dtype != "int32":
        x[0, :5] = [np.inf, -np.inf, np.nan, -0.0, 65504.0]
    (out,) = launch(sig("IsFinite", [x]), [x], sentinel=True)
    np.testing.assert_array_equal(out.view(np.uint8), np.isfinite(x).view(np.uint8))


def test_logical_ops_broadcast_bools():
    a, b = rand((4, 1, 5), "int32", 0, 2).astype(bool), rand((3, 1), "int32", 0, 2).astype(bool)
    for op, ref in (("LogicalAnd", np.logical_and), ("LogicalOr", np.logical_or)):
        (out,) = launch(sig(op, [a, b]), [a, b], sentinel=True)
        np.testing.assert_array_equal(out.view(np.uint8), ref(a, b).view(np.uint8))
    (out,) = launch(sig("LogicalNot", [a]), [a], sentinel=True)
    np.testing.assert_array_equal(out.view(np.uint8), np.logical_not(a).view(np.uint8))
    # MindSpore 2.10 takes any real dtype, mixed, non-zero as True (its CPU kernels' answer, recorded)
    f, i = np.array([[1.5, 0.0, -2.0]], np.float32), np.array([[2], [0]], np.int32)
    for op, ref in (("LogicalAnd", np.logical_and), ("LogicalOr", np.logical_or), ("LogicalXor", np.logical_xor)):
        (out,) = launch(sig(op, [f, i]), [f, i], sentinel=True)
        np.testing.assert_array_equal(out.view(np.uint8), ref(f, i).view(np.uint8))
    (out,) = launch(sig("LogicalNot", [f]), [f], sentinel=True)
    np.testing.assert_array_equal(out.view(np.uint8), np.array([[0, 1, 0]], np.uint8))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_select_copies_the_chosen_bits(dtype):
    cond = rand((4, 1, 5), "int32", 0, 2).astype(bool)
    x, y = rand((3, 1), dtype, scale=10.0), rand((4, 3, 5), dtype, scale=10.0)
    if dtype != "int32":
        x[0, 0], y[0, 0, 0] = np.nan, -0.0
    (out,) = launch(sig("Select", [cond, x, y]), [cond, x, y], sentinel=True)
    np.testing.assert_array_equal(out.view(np.uint8), np.where(cond, x, y).astype(dtype).view(np.uint8))


BINARY = [
    ("Add", "float32", (4, 1, 5), (3, 1), np.add),
    ("Sub", "float16", (2, 33), (2, 33), np.subtract),
    ("Mul", "int32", (6, 7), (), lambda a, b: a * b),
    ("Div", "float32", (1, 9), (9, 1), np.divide),
    ("Maximum", "float16", (3, 4, 5), (4, 1), np.maximum),
    ("Minimum", "int32", (8,), (3, 1), np.minimum),
    ("Pow", "float32", (2, 3, 7), (7,), np.power),
]


@pytest.mark.parametrize("op,dtype,sa,sb,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcast(op, dtype, sa, sb, ref):
    if op == "Pow":
        a, b = rand(sa, dtype, 0.5, 2.0), rand(sb, dtype, -2.0, 2.0)
    elif op == "Mul":
        a, b = rand(sa, dtype, -2 ** 31, 2 ** 31 - 1), np.array(77777, np.int32)
    else:
        a, b = rand(sa, dtype, scale=10.0), rand(sb, dtype, scale=10.0)
    if op == "Maximum":
        a[0, 0, :2] = np.nan
    if op == "Div":
        b[0, 0] = 0.0
    (out,) = launch(sig(op, [a, b]), [a, b])
    with np.errstate(all="ignore"):
        expected = ref(a, b) if dtype == "int32" else ref(f64(a), f64(b))
    check(out, expected, dtype)


def test_int_division_truncates_and_zero_divisor_gives_zero():
    a = np.array([7, -7, 7, -7, 5, 0, -2147483648], np.int32)
    b = np.array([2, 2, -2, -2, 0, 3, 1], np.int32)
    (out,) = launch(sig("Div", [a, b]), [a, b])
    np.testing.assert_array_equal(out, [3, -3, -3, 3, 0, 0, -2147483648])


@pytest.mark.parametrize("fmt,dtype", [("NCHW", "float32"), ("NHWC", "float16")])
def test_bias_add(fmt, dtype):
    x = rand((2, 3, 4, 5), dtype)
    channels = 5 if fmt == "NHWC" else 3
    bias = rand((channels,), dtype)
    (out,) = launch(sig("BiasAdd", [x, bias], data_format=fmt), [x, bias])
    shaped = f64(bias) if fmt == "NHWC" else f64(bias).reshape(1, 3, 1, 1)
    check(out, f64(x) + shaped, dtype)


# ------------------------------------------------------------------------------ FusedElemwise

def test_fused_program_multi_output_broadcast():
    x, y, z = rand((4, 1, 6)), rand((3, 1)), rand(())
    program = (("Mul", ("in", 0), ("in", 1)),        # t0 = x * y
               ("Add", ("t", 0), ("c", 0.5)),         # t1 = t0 + 0.5
               ("Sigmoid", ("t", 1)),                 # t2
               ("Maximum", ("t", 2), ("in", 2)),      # t3 = max(t2, z)
               ("GeLU", ("t", 0)),                    # t4
               ("Minimum", ("t", 3), ("c", float("inf"))))
    s = sig("FusedElemwise", [x, y, z], program=program, outputs=(5, 4, 1))
    outs = launch(s, [x, y, z])
    t0 = f64(x) * f64(y)
    t1 = t0 + 0.5
    t2 = 1 / (1 + np.exp(-t1))
    for out, ref in zip(outs, (np.maximum(t2, f64(z)), gelu(t0), t1)):
        check(out, ref, "float32")


def test_fused_mixed_dtypes_with_dst_type():
    x, y = rand((5, 31), "float16"), rand((31,), "float32")
    program = (("Cast", ("in", 0)), ("Sub", ("t", 0), ("in", 1)), ("Square", ("t", 1)),
               ("Div", ("c", 1), ("t", 2)), ("Sqrt", ("t", 2)))
    (out,) = launch(sig("FusedElemwise", [x, y], program=program, dst_type="float16"), [x, y])
    assert out.dtype == np.float16
    check(out, np.abs(f64(x) - f64(y)), "float16")


def test_exp_is_within_one_ulp_over_the_whole_float32_range():
    """Exp is a polynomial expf (kernels.ops.nb.fexp, vectorisable): against float64 numpy, rounded to
    float32, within 1 ulp where the result is normal, exact specials (inf, 0, NaN) and overflow/underflow
    where numpy's float32 exp has them."""
    x = np.concatenate([np.linspace(-110, 95, 400_003, dtype=np.float32),
                        np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 88.72283, 88.7229, -87.33655, -103.97,
                                  -103.98, 1e-30, -1e-30], np.float32)])
    (out,) = launch(sig("Exp", [x]), [x])
    want = np.exp(f64(x))
    normal = (want > np.finfo(np.float32).tiny) & (want < np.finfo(np.float32).max)
    ulp = np.abs(f64(out[normal]) - want[normal]) / f64(np.spacing(want[normal].astype(np.float32)))
    assert ulp.max() <= 1.0, ulp.max()
    with np.errstate(over="ignore"):
        ref = np.exp(x)
    assert np.array_equal(np.isinf(out), np.isinf(ref)) and np.array_equal(out == 0, ref == 0)
    assert np.isnan(out[np.isnan(x)]).all() and not np.isnan(out[~np.isnan(x)]).any()
    tiny = (want > 0) & (want <= np.finfo(np.float32).tiny)        # subnormal results: within one step
    assert (np.abs(f64(out[tiny]) - want[tiny]) <= 1.5e-45).all()


def test_softmax_rows_of_any_length_with_infinities_and_nan():
    """The max and sum folds run 8 accumulators and a tail; -inf entries weigh nothing, a NaN row is NaN."""
    rows = []
    for n in (1, 7, 8, 9, 23):
        r = rand((n,), "float32", scale=4.0)
        rows.append(r)
    for r in rows:
        (out,) = launch(sig("Softmax", [r]), [r])
        e = np.exp(f64(r) - f64(r).max())
        check(out, e / e.sum(), "float32")
    x = rand((3, 11), "float32", scale=4.0)
    x[0, 3] = -np.inf
    x[1, 9] = np.nan
    (out,) = launch(sig("Softmax", [x]), [x])
    assert out[0, 3] == 0 and np.isnan(out[1]).all()
    e = np.exp(f64(x[[0, 2]]) - f64(x[[0, 2]]).max(1, keepdims=True))
    check(out[[0, 2]], e / e.sum(1, keepdims=True), "float32")


# ---------------------------------------------------------------------------------- rows

@pytest.mark.parametrize("op,shape,axis,dtype", [("Softmax", (3, 17), -1, "float32"),
                                                 ("LogSoftmax", (5, 4, 3), 1, "float16"),
                                                 ("Softmax", (6, 1), 0, "float16"),
                                                 ("LogSoftmax", (2, 9), (-1,), "float32")])
def test_softmax(op, shape, axis, dtype):
    x = rand(shape, dtype, scale=4.0)
    (out,) = launch(sig(op, [x], axis=axis), [x])
    a = axis[0] if isinstance(axis, tuple) else axis
    e = np.exp(f64(x) - f64(x).max(a, keepdims=True))
    sm = e / e.sum(a, keepdims=True)
    check(out, sm if op == "Softmax" else np.log(sm), dtype)


REDUCE = [
    ("ReduceSum", (3, 4, 5), (1,), True, "float32"),
    ("ReduceSum", (3, 1, 5, 7), (), False, "int32"),
    ("ReduceMean", (6, 5, 9), (0, 2), False, "float16"),
    ("ReduceMax", (40, 1, 33), (0,), False, "float32"),
    ("ReduceMax", (4, 9), -1, True, "int32"),
    ("ReduceMean", (2, 0, 3), (1,), False, "float32"),
]


@pytest.mark.parametrize("op,shape,axis,keep,dtype", REDUCE, ids=[f"{r[0]}-{r[4]}" for r in REDUCE])
def test_reduce(op, shape, axis, keep, dtype):
    x = rand(shape, dtype, scale=10.0)
    if op == "ReduceMax" and dtype == "float32":
        x[5, 0, 7] = np.nan
    (out,) = launch(sig(op, [x], axis=axis, keep_dims=keep), [x])
    axes = tuple(range(len(shape))) if axis == () else axis
    fn = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max}[op]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # the mean of an empty axis is NaN
        if dtype == "int32":
            expected = fn(x.astype(np.int64), axis=axes, keepdims=keep).astype(np.int32)
        else:
            expected = fn(f64(x), axis=axes, keepdims=keep)
    check(out, expected, dtype)


@pytest.mark.parametrize("shape,axis,keep", [((4, 1, 5), (), False), ((3, 7, 5), (1,), True),
                                            ((3, 7, 5), (0, 2), False), ((3, 0), (1,), False)])
def test_reduce_all(shape, axis, keep):
    x = rand(shape, "int32", 0, 12) > 0
    x.reshape(-1)[:1] = False
    (out,) = launch(sig("ReduceAll", [x], axis=axis, keep_dims=keep), [x], sentinel=True)
    expected = np.all(x, axis=axis or None, keepdims=keep)
    assert out.shape == np.shape(expected)
    np.testing.assert_array_equal(out.view(np.uint8), np.asarray(expected).view(np.uint8))


@pytest.mark.parametrize("bad", [None, (0, 3, np.inf), (1, 17, -np.inf), (0, 0, np.nan), (1, 39, np.nan)])
def test_all_finite_reads_every_input(bad):
    """One bool for a float32, a float16 and an int32 tensor: False iff some float element is inf or
    NaN."""
    arrays = [rand((5, 7)), rand((40,), "float16"), rand((3,), "int32")]
    if bad is not None:
        arrays[bad[0]].reshape(-1)[bad[1]] = bad[2]
    (out,) = launch(sig("AllFinite", arrays), arrays, sentinel=True)
    assert out.shape == () and out.view(np.uint8) == (bad is None)


def test_one_all_finite_kernel_serves_every_size_of_its_inputs():
    """AllFinite's input sizes are tiling data: one kernel per input count and dtypes, whatever the shapes."""
    from ascendemu.kernels.library import plan_kernel
    from ascendemu.kernels.signature import OpSignature, TensorDesc

    def plan(*inputs):
        return plan_kernel(OpSignature.make("AllFinite", [TensorDesc(s, d) for s, d in inputs]))
    a = plan(((5, 7), "float32"), ((40,), "float16"), ((3,), "int32"))
    b = plan(((2,), "float32"), ((0,), "float16"), ((9, 9), "int32"))
    assert a.family is not None and a.family == b.family
    assert (a.tiling_data, b.tiling_data) == ((35, 40, 3), (2, 0, 81))
    assert plan(((5, 7), "float32"), ((40,), "float16")).family != a.family


@pytest.mark.parametrize("shape,norm,params,dtype", [((4, 6), 1, 1, "float32"),
                                                     ((2, 3, 8), 1, 2, "float16"),
                                                     ((2, 3, 4), 2, 1, "float32")])
def test_layer_norm(shape, norm, params, dtype):
    x, g, b = rand(shape, dtype, scale=3.0), rand(shape[params:], dtype), rand(shape[params:], dtype)
    y, mean, var = launch(sig("LayerNorm", [x, g, b], begin_norm_axis=norm, begin_params_axis=params,
                              epsilon=1e-5), [x, g, b])
    axes = tuple(range(norm, len(shape)))
    m, v = f64(x).mean(axes, keepdims=True), f64(x).var(axes, keepdims=True)
    check(y, (f64(x) - m) / np.sqrt(v + 1e-5) * f64(g) + f64(b), dtype)
    check(mean, m, dtype)
    check(var, v, dtype)


@pytest.mark.parametrize("shape,dtype,pdtype", [((2, 3, 4, 5), "float32", "float32"),
                                                ((7, 3), "float16", "float32")])
def test_batch_norm(shape, dtype, pdtype):
    x = rand(shape, dtype, scale=2.0)
    scale, bias, mean = rand((3,), pdtype), rand((3,), pdtype), rand((3,), pdtype)
    var = rand((3,), pdtype, 0.5, 2.0)
    (out,) = launch(sig("BatchNorm", [x, scale, bias, mean, var], epsilon=1e-3),
                    [x, scale, bias, mean, var])
    bshape = (1, 3) + (1,) * (len(shape) - 2)
    p = [f64(a).reshape(bshape) for a in (scale, bias, mean, var)]
    check(out, (f64(x) - p[2]) / np.sqrt(p[3] + 1e-3) * p[0] + p[1], dtype)


# ------------------------------------------------------------------------------- matmul

@pytest.mark.parametrize("op,sa,sb,ta,tb,dtype", [
    ("MatMul", (67, 29), (29, 45), False, False, "float32"),
    ("MatMul", (29, 67), (45, 29), True, True, "float16"),
    ("BatchMatMul", (2, 1, 13, 9), (3, 5, 9), False, True, "float32"),
    ("BatchMatMul", (3, 9, 13), (9, 6), True, False, "float16"),
    ("MatMul", (5, 0), (0, 3), False, False, "float32"),
    ("BatchMatMul", (2, 3, 9, 13), (3, 6, 9), True, True, "float32"),
])
def test_matmul(op, sa, sb, ta, tb, dtype):
    a, b = rand(sa, dtype), rand(sb, dtype)
    (out,) = launch(sig(op, [a, b], transpose_a=ta, transpose_b=tb), [a, b])
    A = np.swapaxes(f64(a), -1, -2) if ta else f64(a)
    B = np.swapaxes(f64(b), -1, -2) if tb else f64(b)
    check(out, A @ B, dtype)


# --------------------------------------------------------------------------- conv, pooling

def conv_ref(x, w, stride, pad, dilation, group):
    """Sliding-window reference: explicit padding, then one windowed product per output pixel."""
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    oh = (h + pad[0] + pad[1] - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (wd + pad[2] + pad[3] - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    out = np.zeros((n, oc, oh, ow))
    for o in range(oc):
        g = o // (oc // group)
        for i in range(oh):
            for j in range(ow):
                r0, c0 = i * stride[0], j * stride[1]
                win = xp[:, g * cg:(g + 1) * cg, r0:r0 + (kh - 1) * dilation[0] + 1:dilation[0],
                         c0:c0 + (kw - 1) * dilation[1] + 1:dilation[1]]
                out[:, o, i, j] = (win * w[o]).sum(axis=(1, 2, 3))
    return out


def same_pad(size, kernel, stride, dilation):
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


@pytest.mark.parametrize("xs,ws,dtype,attrs", [
    ((1, 3, 32, 32), (16, 3, 3, 3), "float32", {}),
    ((2, 4, 9, 11), (6, 4, 3, 3), "float16", {"pad_mode": "same", "stride": (1, 1, 2, 3)}),
    ((2, 4, 9, 11), (6, 2, 3, 2), "float32", {"pad_mode": "pad", "pad": (1, 0, 2, 1), "stride": 2,
                                              "dilation": (1, 1, 2, 1), "group": 2}),
    ((1, 5, 4, 3), (3, 5, 1, 1), "float16", {}),
    # float32 with >= 4 output channels per group: im2col + sgemm, and a 1x1 kernel as a plain sgemm
    ((2, 8, 9, 11), (8, 4, 3, 2), "float32", {"pad_mode": "pad", "pad": (1, 0, 2, 1), "stride": (1, 1, 2, 1),
                                              "dilation": (1, 1, 2, 1), "group": 2}),
    ((2, 8, 7, 5), (8, 8, 1, 1), "float32", {}),
])
def test_conv2d(xs, ws, dtype, attrs):
    x, w = rand(xs, dtype), rand(ws, dtype)
    s = sig("Conv2D", [x, w], out_channel=ws[0], kernel_size=ws[2:], **attrs)
    (out,) = launch(s, [x, w])
    stride = attrs.get("stride", 1)
    stride = (stride, stride) if isinstance(stride, int) else stride[-2:]
    dil = attrs.get("dilation", 1)
    dil = (dil, dil) if isinstance(dil, int) else dil[-2:]
    if attrs.get("pad_mode") == "same":
        pad = same_pad(xs[2], ws[2], stride[0], dil[0]) + same_pad(xs[3], ws[3], stride[1], dil[1])
    else:
        pad = attrs.get("pad", (0, 0, 0, 0))
    check(out, conv_ref(f64(x), f64(w), stride, pad, dil, attrs.get("group", 1)), dtype)


def pool_windows(shape, kernel, stride, mode):
    """(i, j, rows, cols) of every output pixel: its window clipped to the input (SAME padding is
    never part of a window)."""
    h, w = shape[2:]
    if mode == "SAME":
        oh, ow = -(-h // stride[0]), -(-w // stride[1])
        top = max((oh - 1) * stride[0] + kernel[0] - h, 0) // 2
        left = max((ow - 1) * stride[1] + kernel[1] - w, 0) // 2
    else:
        oh, ow, top, left = (h - kernel[0]) // stride[0] + 1, (w - kernel[1]) // stride[1] + 1, 0, 0
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * stride[0] - top, j * stride[1] - left
            yield i, j, slice(max(r0, 0), r0 + kernel[0]), slice(max(c0, 0), c0 + kernel[1])


def pool_ref(x, op, kernel, stride, mode):
    windows = list(pool_windows(x.shape, kernel, stride, mode))
    oh, ow = windows[-1][0] + 1, windows[-1][1] + 1
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i, j, rows, cols in windows:
        win = x[:, :, rows, cols]
        out[:, :, i, j] = win.max(axis=(2, 3)) if op == "MaxPool" else win.mean(axis=(2, 3))
    return out


@pytest.mark.parametrize("op,shape,kernel,stride,mode,dtype", [
    ("MaxPool", (1, 3, 8, 8), 2, 2, "VALID", "float32"),
    ("MaxPool", (2, 2, 7, 9), 3, (1, 1, 2, 2), "SAME", "float16"),
    ("AvgPool", (1, 2, 5, 6), (3, 2), 1, "same", "float32"),
    ("AvgPool", (2, 3, 7, 7), (1, 1, 3, 3), (1, 1, 2, 2), "VALID", "float16"),
])
def test_pool(op, shape, kernel, stride, mode, dtype):
    x = rand(shape, dtype)
    (out,) = launch(sig(op, [x], kernel_size=kernel, strides=stride, pad_mode=mode), [x])
    k = (kernel, kernel) if isinstance(kernel, int) else kernel[-2:]
    st = (stride, stride) if isinstance(stride, int) else stride[-2:]
    check(out, pool_ref(f64(x), op, k, st, mode.upper()), dtype)


# ------------------------------------------------------------------------------ data movement

@pytest.mark.parametrize("shape,perm,dtype", [((2, 3, 4), (2, 0, 1), "float32"),
                                              ((5, 1, 7), (2, 1, 0), "float16"),
                                              ((2, 3, 1, 4), (0, 3, -2, 1), "int32")])
def test_transpose(shape, perm, dtype):
    x = rand(shape, dtype)
    (out,) = launch(sig("Transpose", [x], perm=perm), [x])
    check(out, np.transpose(x, perm), exact=True)


@pytest.mark.parametrize("shapes,axis,dtype", [(((2, 3), (2, 5), (2, 1)), 1, "float32"),
                                               (((2, 3, 2), (2, 0, 2), (2, 4, 2)), -2, "int32")])
def test_concat(shapes, axis, dtype):
    xs = [rand(s, dtype) for s in shapes]
    (out,) = launch(sig("Concat", xs, axis=axis), xs)
    check(out, np.concatenate(xs, axis), exact=True)


@pytest.mark.parametrize("pshape,indices,axis,dtype", [
    ((5, 4, 3), [[4, 0], [1, 1]], 0, "float32"),
    ((5, 4, 3), [3, -1, 9, 0], 1, "float16"),
])
def test_gather_out_of_range_gives_zeros(pshape, indices, axis, dtype):
    params, idx = rand(pshape, dtype), np.array(indices, np.int32)
    (out,) = launch(sig("Gather", [params, idx], axis=axis), [params, idx])
    valid = (idx >= 0) & (idx < pshape[axis])
    expected = np.take(params, np.where(valid, idx, 0), axis=axis)
    mask = valid.reshape((1,) * axis + idx.shape + (1,) * (len(pshape) - axis - 1))
    check(out, np.where(mask, expected, 0), exact=True)


# ------------------------------------------------------------------------------- block split

SPLIT_CASES = {
    "elementwise": lambda: (sig("Add", [((3, 65537), "float32"), ((65537,), "float32")]),
                            [rand((3, 65537)), rand((65537,))], lambda a, b: f64(a) + f64(b)),
    "matmul": lambda: (sig("MatMul", [((200, 96), "float16"), ((96, 300), "float16")]),
                       [rand((200, 96), "float16"), rand((96, 300), "float16")],
                       lambda a, b: f64(a) @ f64(b)),
    "batch_matmul_blas": lambda: (sig("BatchMatMul", [((3, 200, 96), "float32"), ((96, 300), "float32")]),
                                  [rand((3, 200, 96)), rand((96, 300))], lambda a, b: f64(a) @ f64(b)),
    "conv": lambda: (sig("Conv2D", [((3, 16, 32, 32), "float32"), ((16, 16, 3, 3), "float32")],
                         out_channel=16, kernel_size=3, pad_mode="same"),
                     [rand((3, 16, 32, 32)), rand((16, 16, 3, 3))],
                     lambda x, w: conv_ref(f64(x), f64(w), (1, 1), (1, 1, 1, 1), (1, 1), 1)),
    "reduce": lambda: (sig("ReduceSum", [((300, 700), "float32")], axis=(0,)),
                       [rand((300, 700))], lambda x: f64(x).sum(0)),
    "softmax": lambda: (sig("Softmax", [((1000, 150), "float16")]),
                        [rand((1000, 150), "float16")],
                        lambda x: np.exp(f64(x)) / np.exp(f64(x)).sum(-1, keepdims=True)),
}


@pytest.mark.parametrize("case", list(SPLIT_CASES))
def test_blocks_partition_the_output(case):
    """Each block alone writes a disjoint share of the output; together they write all of it."""
    s, arrays, ref = SPLIT_CASES[case]()
    k = kernel(s)
    assert 1 < k.block_dim <= 32
    (full,) = launch(s, arrays)
    check(full, ref(*arrays), s.inputs[0].dtype)
    (concurrent,) = launch(s, arrays, threads=4)
    np.testing.assert_array_equal(concurrent, full)
    owner = np.zeros(full.shape, np.int64)
    for b in range(k.block_dim):
        (part,) = launch(s, arrays, blocks=[b], sentinel=True)
        bits = part.reshape(-1).view(np.uint16 if part.dtype == np.float16 else np.uint32)
        mine = (bits != np.iinfo(bits.dtype).max).reshape(full.shape)
        assert mine.any(), f"block {b} wrote nothing"
        np.testing.assert_array_equal(part[mine], full[mine])
        owner += mine
    assert (owner == 1).all()


def test_block_dim_policy():
    tiny = generate(sig("Add", [((100,), "float32"), ((100,), "float32")]))
    big = generate(sig("Add", [((1 << 24,), "float32"), ((1 << 24,), "float32")]))
    assert tiny.block_dim == 1 and big.block_dim == 32
    assert generate(sig("MatMul", [((4, 4), "float32"), ((4, 4), "float32")])).block_dim == 1
    assert 1 < generate(sig("MatMul", [((512, 512), "float32"), ((512, 512), "float32")])).block_dim <= 32


# --------------------------------------------------------------------------- kernel metadata

def test_kernel_source_metadata():
    s = sig("MatMul", [((64, 32), "float16"), ((48, 32), "float16")], transpose_b=True)
    src = generate(s)
    assert isinstance(src, KernelSource) and src.func_name == "mat_mul"
    assert src.outputs == (TensorDesc((64, 48), "float16"),)
    assert src.cost.cube_flops == 2 * 64 * 48 * 32 and src.cost.dtype == "float16"
    assert src.cost.bytes == (64 * 32 + 48 * 32 + 64 * 48) * 2
    assert [a.role for a in src.args] == ["in", "in", "out"] + ["workspace"] * len(src.workspace_sizes)
    assert [a.nbytes for a in src.args] == [64 * 32 * 2, 48 * 32 * 2, 64 * 48 * 2, *src.workspace_sizes]
    conv = generate(sig("Conv2D", [((1, 3, 32, 32), "float32"), ((16, 3, 3, 3), "float32")],
                        out_channel=16, kernel_size=3))
    assert conv.func_name == "conv2d" and conv.cost.cube_flops == 2 * 16 * 30 * 30 * 27
    square = generate(sig("Square", [((10, 10), "float32")]))
    assert square.func_name == "square" and square.cost.vector_ops == 100 and square.cost.bytes == 800
    assert set(FUNC_NAMES) == set(SUPPORTED_OPS)


def test_infer_never_imports_numba():
    code = ("import sys\n"
            "from ascendemu.kernels.library import infer_outputs, SUPPORTED_OPS\n"
            "from ascendemu.kernels.signature import OpSignature\n"
            "s = OpSignature.make('Conv2D', [((1, 3, 8, 8), 'float32'), ((4, 3, 3, 3), 'float32')],"
            " out_channel=4, kernel_size=3, pad_mode='same')\n"
            "assert infer_outputs(s)[0].shape == (1, 4, 8, 8)\n"
            "assert 'numba' not in sys.modules, 'numba was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("s,shapes", [
    (("Add", [((2, 1, 3), "float32"), ((4, 1), "float32")]), [(2, 4, 3)]),
    (("ReduceSum", [((2, 3, 4), "int32")], {"axis": (0, -1), "keep_dims": True}), [(1, 3, 1)]),
    (("BatchMatMul", [((2, 1, 3, 4), "float32"), ((5, 6, 4), "float32")], {"transpose_b": True}),
     [(2, 5, 3, 6)]),
    (("Conv2D", [((1, 3, 32, 32), "float16"), ((16, 3, 5, 5), "float16")],
      {"out_channel": 16, "kernel_size": 5, "stride": 2, "pad_mode": "same"}), [(1, 16, 16, 16)]),
    (("MaxPool", [((1, 3, 7, 7), "float32")], {"kernel_size": 2, "strides": 2}), [(1, 3, 3, 3)]),
    (("LayerNorm", [((2, 3, 4), "float32"), ((4,), "float32"), ((4,), "float32")],
      {"begin_norm_axis": -1, "begin_params_axis": -1}), [(2, 3, 4), (2, 3, 1), (2, 3, 1)]),
    (("Gather", [((10, 4), "float32"), ((2, 3), "int32")], {"axis": 0}), [(2, 3, 4)]),
    (("Concat", [((2, 3), "float32"), ((2, 5), "float32")], {"axis": -1}), [(2, 8)]),
])
def test_infer_shapes(s, shapes):
    op, inputs, *attrs = s
    outs = infer_outputs(OpSignature.make(op, inputs, **(attrs[0] if attrs else {})))
    assert [o.shape for o in outs] == shapes


BAD = [
    (("Foo", [((2,), "float32")]), "supported ops: Square"),
    (("Add", [((3, 4), "float32"), ((5,), "float32")]), "does not broadcast"),
    (("Add", [((3,), "float32"), ((3,), "float16")]), "input 1 has dtype float16"),
    (("Add", [((3,), "float32")]), "takes 2 input(s)"),
    (("Exp", [((3,), "int32")]), "input 0 (x) has dtype int32"),
    (("Cast", [((3,), "float32")], {"dst_type": "complex32"}), "attr dst_type"),
    (("MatMul", [((2, 3, 4), "float32"), ((4, 5), "float32")]), "input 0 (x1) must have rank 2"),
    (("MatMul", [((3, 4), "float32"), ((5, 6), "float32")]), "contracted dimension"),
    (("MatMul", [((3, 4), "float32"), ((4, 6), "float32")], {"transpose_a": 1}), "attr transpose_a"),
    (("Conv2D", [((1, 3, 8, 8), "float32"), ((4, 3, 3, 3), "float32")], {"out_channel": 4, "group": 2}),
     "attr group"),
    (("Conv2D", [((1, 3, 8, 8), "float32"), ((4, 2, 3, 3), "float32")], {"out_channel": 4}),
     "input 1 (weight)"),
    (("Conv2D", [((1, 3, 8, 8), "float32"), ((4, 3, 3, 3), "float32")],
      {"out_channel": 4, "pad_mode": "same", "pad": 1}), "attr pad"),
    (("MaxPool", [((1, 3, 8, 8), "float32")], {"kernel_size": 2, "pad_mode": "FULL"}), "attr pad_mode"),
    (("AvgPool", [((1, 3, 2, 2), "float32")], {"kernel_size": 3}), "larger than the input"),
    (("ReduceSum", [((2, 3), "float32")], {"axis": 5}), "attr axis=5"),
    (("ReduceMax", [((2, 3), "float32")], {"axis": (1, -1)}), "twice"),
    (("ReduceMean", [((2, 3), "int32")]), "dtype int32"),
    (("ReduceAll", [((2, 3), "float32")]), "dtype float32"),
    (("AllFinite", [((2, 3), "float32"), ((3,), "bool")]), "input 1 has dtype bool"),
    (("Select", [((3,), "bool"), ((3,), "float32"), ((3,), "float16")]), "must be one of"),
    (("Select", [((3,), "float32"), ((3,), "float32"), ((3,), "float32")]), "input 0 (cond)"),
    (("LogicalAnd", [((3,), "bool"), ((3,), "complex64")]), "input 1 (y)"),
    (("Softmax", [((2, 3), "float32")], {"axis": (0, 1)}), "attr axis"),
    (("Transpose", [((2, 3), "float32")], {"perm": (0, 0)}), "attr perm"),
    (("Concat", [((2, 3), "float32"), ((3, 3), "float32")], {"axis": 1}), "input 1 shape (3, 3)"),
    (("Gather", [((4, 3), "float32"), ((2,), "float32")]), "input 1 (indices)"),
    (("LayerNorm", [((2, 4), "float32"), ((3,), "float32"), ((4,), "float32")]), "input 1 (gamma)"),
    (("BatchNorm", [((1, 3), "float32")] + [((3,), "float32")] * 4, {"is_training": True}),
     "is_training"),
    (("BatchNorm", [((2, 3), "float32")] + [((3,), "float32")] * 3 + [((4,), "float32")]),
     "input 4 (variance)"),
    (("BiasAdd", [((2, 3, 4), "float32"), ((4,), "float32")]), "input 1 (bias)"),
    (("FusedElemwise", [((3,), "float32")], {"program": (("Foo", ("in", 0)),)}), "step 0"),
    (("FusedElemwise", [((3,), "float32")], {"program": (("Neg", ("t", 0)),)}), "operand ('t', 0)"),
    (("FusedElemwise", [((3,), "float32")], {"program": (("Add", ("in", 0)),)}), "takes 2 operand"),
    (("FusedElemwise", [((3,), "float32")], {"program": (("Neg", ("in", 0)),), "outputs": (1,)}),
     "attr outputs"),
    (("FusedElemwise", [((3,), "float32"), ((3,), "float16")], {"program": (("Add", ("in", 0), ("in", 1)),)}),
     "dst_type"),
]


@pytest.mark.parametrize("s,fragment", BAD, ids=[f"{b[0][0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_signatures_raise(s, fragment):
    op, inputs, *attrs = s
    bad = OpSignature.make(op, inputs, **(attrs[0] if attrs else {}))
    with pytest.raises(InvalidParamError) as info:
        infer_outputs(bad)
    assert fragment in str(info.value)
    assert op in str(info.value)
    with pytest.raises(InvalidParamError):
        generate(bad)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_matmul_epilogue_is_bitwise_the_unfused_pair(dtype):
    """MatMul + bias + ReLU in one kernel (O1 epilogue fusion) gives the bits of MatMul then FusedElemwise,
    every block, and numpy's result within tolerance."""
    a, b, bias = rand((70, 33), dtype), rand((33, 300), dtype), rand((300,), dtype)
    program = (("Add", ("in", 0), ("in", 1)), ("ReLU", ("t", 0)))
    (fused,) = launch(sig("MatMul", [a, b, bias], epilogue=program), [a, b, bias], sentinel=True)
    (product,) = launch(sig("MatMul", [a, b]), [a, b])
    (unfused,) = launch(sig("FusedElemwise", [product, bias], program=program), [product, bias])
    np.testing.assert_array_equal(fused, unfused)
    check(fused, np.maximum(f64(a) @ f64(b) + f64(bias), 0), dtype)


def test_float16_matmul_epilogue_with_a_float32_bias():
    """O2 mixed precision fuses a float16 product with Cast(float32 bias) + Add: the signature infers
    (as a graph cache entry re-checks it) and stores float16, numpy's result within tolerance."""
    a, b, bias = rand((8, 12), "float16"), rand((12, 5), "float16"), rand((5,))
    program = (("Cast", ("in", 1)), ("Add", ("in", 0), ("t", 0)), ("ReLU", ("t", 1)))
    s = sig("MatMul", [a, b, bias], epilogue=program)
    assert infer_outputs(s) == (TensorDesc((8, 5), "float16"),)
    (out,) = launch(s, [a, b, bias])
    check(out, np.maximum(f64(a) @ f64(b) + f64(bias.astype("float16")), 0), "float16")


def test_batch_matmul_epilogue_broadcasts_its_inputs():
    a, b, e = rand((3, 2, 17, 9)), rand((2, 40, 9)), rand((2, 1, 40))
    program = (("Mul", ("in", 0), ("c", 0.5)), ("Add", ("t", 0), ("in", 1)))
    s = sig("BatchMatMul", [a, b, e], transpose_b=True, epilogue=program)
    assert kernel(s).block_dim >= 1 and kernel(s).cost.vector_ops == 3 * 2 * 17 * 40 * 2
    (out,) = launch(s, [a, b, e])
    check(out, (f64(a) @ np.swapaxes(f64(b), -1, -2)) * 0.5 + f64(e))
    with pytest.raises(InvalidParamError, match="must keep the product's shape"):
        infer_outputs(sig("MatMul", [rand((4, 5)), rand((5, 6)), rand((3, 4, 6))], epilogue=program))


def test_batch_matmul_broadcast_error_names_the_whole_shapes():
    with pytest.raises(InvalidParamError, match=r"\(2, 3, 4, 5\).*\(3, 5, 6\).*\(2, 3\) and \(3,\)|"
                                                r"\(2, 3, 4, 5\).*\(4, 5, 6\)") as e:
        infer_outputs(sig("BatchMatMul", [((2, 3, 4, 5), "float32"), ((4, 5, 6), "float32")]))
    assert "(2, 3, 4, 5)" in e.value.message and "(4, 5, 6)" in e.value.message


def test_relu_grad_is_dy_where_the_output_is_positive():
    """MindSpore's ReluGrad(dy, y): dy where y > 0, else dy * 0 (y == 0 gives 0; NaN/inf in dy stay NaN
    where masked, as through a multiply by the mask)."""
    dy = np.array([[1.5, -2.0, 3.0, np.inf], [np.nan, 4.0, -1.0, 2.0]], np.float32)
    y = np.array([[0.5, 0.0, 2.0, 0.0], [1.0, 0.0, 3.0, 7.0]], np.float32)
    (out,) = launch(sig("ReluGrad", [dy, y]), [dy, y])
    with np.errstate(invalid="ignore"):                  # inf * 0 in the reference
        ref = np.where(y > 0, dy, dy * np.float32(0))
    np.testing.assert_array_equal(out, ref)


def test_a_blas_matmul_computes_the_same_product_with_any_block_count():
    """The device runs a float32 MatMul launch as HOST_BLOCK_THREADS large blocks (``host_blocks``): its
    tile grid follows the run-time block count, and every count covers every tile exactly once."""
    a, b = rand((600, 256)), rand((256, 300))      # 92 MFLOP: more blocks than host threads
    s = sig("MatMul", [a, b])
    k = kernel(s)
    assert k.host_blocks and k.block_dim > 2
    for blocks in sorted({1, 2, 3, k.block_dim}):
        out = np.full((600, 300), np.nan, np.float32)
        argv = k.argv([a.ctypes.data, b.ctypes.data, out.ctypes.data])
        for block in range(blocks):
            k.call_block(argv, block, blocks)
        check(out, f64(a) @ f64(b))
