"""Kernel sources that numba builds cheaply: the block test, block shares, selections and NaN-propagating
folds are nb.py's njit helpers (typed once per process) instead of conditional expressions in every
kernel, and a one-dim elementwise layout is one flat loop. The values must be what the expressions
computed: oracles are hand-written numpy formulas of each op's documented semantics (NaN, +-inf and
signed zeros included), compared bit for bit, and the partition property of the block shares.
"""
from __future__ import annotations

import functools
import re

import numpy as np
import pytest

from ascendemu.kernels.library import plan_kernel
from ascendemu.kernels.ops import nb
from ascendemu.kernels.signature import OpSignature, TensorDesc
from test_ops import launch

SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 6.0, -3.0, 7.5, 1e-3], np.float32)


def values(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    """Normal values with the special ones (NaN, +-inf, +-0, the ReLU6 bounds) at the front."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 4
    flat = x.reshape(-1)
    k = min(flat.size, SPECIALS.size)
    flat[:k] = SPECIALS[np.roll(np.arange(SPECIALS.size), seed)[:k]]
    return x.astype(dtype)


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


@functools.cache
def _call(helper):
    """A Python-callable njit function calling ``helper`` (helpers have no CPython wrapper of their own)."""
    import numba
    return numba.njit(lambda *args: helper(*args))


@pytest.mark.parametrize("total", [0, 1, 5, 1001])
@pytest.mark.parametrize("block_dim", [1, 3, 32])
def test_block_shares_partition_the_range(total, block_dim):
    """block_share: consecutive shares of ceil(total / block_dim), covering range(total) once;
    balanced_share: the same partition with sizes differing by at most one."""
    chunk = -(-total // block_dim)
    for share, sizes_ok in ((_call(nb.block_share), lambda s: all(n <= chunk for n in s)),
                            (_call(nb.balanced_share), lambda s: max(s) - min(s) <= 1)):
        spans = [share(total, b, block_dim) for b in range(block_dim)]
        covered = [i for lo, hi in spans for i in range(lo, hi)]
        assert covered == list(range(total)), (share, spans)
        assert sizes_ok([max(hi - lo, 0) for lo, hi in spans])
    outside = _call(nb.outside_blocks)
    assert [outside(b, block_dim) for b in (-1, 0, block_dim - 1, block_dim)] == [True, False, False, True]
    assert outside(0, 0)


def _select(c, x, y):
    return np.where(c != 0, x, y)


# op -> (operand count, reference on float32 operands): the lowering's documented semantics
SELECTIONS = {
    "Maximum": (2, lambda x, y: np.where((x > y) | np.isnan(x), x, y)),
    "Minimum": (2, lambda x, y: np.where((x < y) | np.isnan(x), x, y)),
    "ReLU": (1, lambda x: np.where(x < 0, np.float32(0), x)),
    "ReLU6": (1, lambda x: np.where(x < 0, np.float32(0), np.where(x > 6, np.float32(6), x))),
    "ReluGrad": (2, lambda dy, y: np.where(y > 0, dy * np.float32(1), dy * np.float32(0))),
    "Sign": (1, lambda x: np.where(x > 0, np.float32(1), np.where(x < 0, np.float32(-1), np.float32(0)))),
}
# (first operand's shape, second's): a dense layout (the flat loop) and a broadcast one (the row walk)
LAYOUTS = {"dense": ((5, 9), (5, 9)), "broadcast": ((4, 3, 5), (3, 1))}


@pytest.mark.parametrize("op", list(SELECTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_selections_match_their_formula_bit_for_bit(op, dtype, layout):
    arity, ref = SELECTIONS[op]
    shapes = LAYOUTS[layout][:arity] if arity == 2 else LAYOUTS[layout][:1]
    xs = [values(shape, dtype, seed) for seed, shape in enumerate(shapes)]
    s = OpSignature(op, tuple(TensorDesc(x.shape, dtype) for x in xs))
    (out,) = launch(s, xs, sentinel=True)
    with np.errstate(invalid="ignore"):          # inf * 0 is NaN in the reference as in the kernel
        want = ref(*np.broadcast_arrays(*[x.astype(np.float32) for x in xs])).astype(dtype)
    assert np.array_equal(bits(out), bits(want)), f"{op} {dtype} {layout}: {out} vs {want}"


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_select_picks_bit_for_bit(dtype):
    cond = (np.arange(24).reshape(4, 6) % 3 == 0)
    x = (np.arange(24, dtype=dtype) - 7).reshape(4, 6) if dtype == "int32" else values((4, 6), dtype, 1)
    y = np.arange(6, dtype=dtype)
    s = OpSignature("Select", (TensorDesc(cond.shape, "bool"), TensorDesc(x.shape, dtype), TensorDesc((6,), dtype)))
    (out,) = launch(s, [cond, x, y], sentinel=True)
    assert np.array_equal(bits(out), bits(_select(cond, x, np.broadcast_to(y, x.shape)).astype(dtype)))


@pytest.mark.parametrize("op,fold", [("ReduceMax", np.max), ("ReduceMin", np.min)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_extrema_folds_propagate_nan(op, fold, dtype):
    x = np.random.default_rng(3).standard_normal((6, 21)).astype(dtype)
    x[1, 4], x[3, 20], x[4, 0] = np.nan, np.inf, -np.inf
    s = OpSignature(op, (TensorDesc(x.shape, dtype),), (("axis", (1,)), ("keep_dims", False)))
    (out,) = launch(s, [x], sentinel=True)
    assert np.array_equal(bits(out), bits(fold(x, axis=1))), (out, fold(x, axis=1))


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_rows_with_nan_are_nan_and_the_others_match_numpy(op):
    x = np.random.default_rng(4).standard_normal((5, 19)).astype(np.float32)
    x[2, 7] = np.nan
    (out,) = launch(OpSignature(op, (TensorDesc(x.shape, "float32"),), (("axis", -1),)), [x], sentinel=True)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True) if op == "Softmax" else np.log(e / e.sum(axis=1, keepdims=True))
    assert np.isnan(out[2]).all()
    rows = [0, 1, 3, 4]
    np.testing.assert_allclose(out[rows], want[rows], rtol=2e-6, atol=2e-6)


# a conditional expression ("a if c else b") in a generated kernel: what the helpers replace
_CONDITIONAL = re.compile(r"=.* if .* else ")


@pytest.mark.parametrize("s", [
    OpSignature("Maximum", (TensorDesc((4, 5), "float32"), TensorDesc((5,), "float32"))),
    OpSignature("ReLU", (TensorDesc((4, 5), "float32"),)),
    OpSignature("ReduceMax", (TensorDesc((4, 5), "float32"),), (("axis", (1,)), ("keep_dims", False))),
    OpSignature("LogSoftmax", (TensorDesc((4, 5), "float32"),), (("axis", -1),)),
    OpSignature("SparseSoftmaxCrossEntropyWithLogits", (TensorDesc((4, 5), "float32"), TensorDesc((4,), "int32"))),
], ids=lambda s: s.op)
def test_kernels_branch_through_helpers(s):
    """The sources select through nb.py's helpers; a one-dim elementwise loop has no row walk."""
    source = plan_kernel(s).source()
    assert not _CONDITIONAL.search(source), source
    assert "outside_blocks(block_idx, block_dim)" in source and " or " not in source.split("\n")[1]
    if s.op == "ReLU":
        assert "row" not in source and "for j in range(lo, hi):" in source


def _t(shape, dtype="float32"):
    return TensorDesc(shape, dtype)


LEAN_SAMPLES = [
    OpSignature("Add", (_t((4, 9)), _t((1, 9)))),
    OpSignature("Exp", (_t((4, 8), "float16"),)),
    OpSignature("MatMul", (_t((4, 8)), _t((8, 3)))),
    OpSignature("LogSoftmax", (_t((4, 10)),), (("axis", -1),)),
    OpSignature("Conv2D", (_t((1, 3, 8, 8)), _t((4, 3, 3, 3))), (("pad_mode", "same"),)),
    OpSignature("OneHot", (_t((5,), "int32"), _t((), "float32"), _t((), "float32")), (("depth", 4), ("axis", -1))),
]


@pytest.mark.parametrize("s", LEAN_SAMPLES, ids=lambda s: f"{s.op}-{s.inputs[0].dtype}")
def test_the_lean_pipeline_builds_numbas_bytes(s):
    """codegen.KernelPipeline (numba's pipeline less the passes kernels never need) gives the object
    numba's full pipeline gives, byte for byte."""
    from numba.core import compiler

    from ascendemu.kernels.codegen import compile_object
    from ascendemu.kernels.library import generate

    pyfunc = generate(s).pyfunc
    assert compile_object(pyfunc, "k", b"meta") == compile_object(pyfunc, "k", b"meta", compiler.Compiler)


ONE_PASS_SAMPLES = [
    OpSignature("Softmax", (_t((6, 40)),), (("axis", -1),)),
    OpSignature("Mul", (_t((5, 24), "float16"), _t((24,), "float16"))),
    OpSignature("ReduceMax", (_t((6, 40)),), (("axis", (1,)), ("keep_dims", False))),
]


@pytest.mark.parametrize("s", ONE_PASS_SAMPLES, ids=lambda s: f"{s.op}-{s.inputs[0].dtype}")
def test_cache_objects_compute_the_bits_of_numbas_own_jit(s):
    """The cache's object (codegen: numba's front end, then one LLVM O3 run over the linked kernel) gives
    the bits numba's own JIT of the same kernel gives (its three optimisation rounds, test_ops.launch),
    NaN, infinities and signed zeros included."""
    from ascendemu.hal.kernel import KernelFunction
    from ascendemu.hal.loader import link
    from ascendemu.kernels.binary import build_binary

    plan = plan_kernel(s)
    entry, keepalive = link(build_binary(plan, 0))
    cached = KernelFunction(name="k", entry=entry, block_dim=plan.block_dim, args=plan.args, cost=plan.cost,
                            keepalive=keepalive, tiling=plan.tiling_data)
    arrays = [values(d.shape, d.dtype, seed) for seed, d in enumerate(s.inputs)]
    outputs = [np.zeros(a.nbytes, np.uint8) for a in plan.args[len(arrays):]]
    argv = cached.argv([a.ctypes.data for a in [*arrays, *outputs]])
    for block in range(cached.block_dim):
        cached.call_block(argv, block)
    for got, want in zip(outputs, launch(s, arrays)):
        assert got[:want.nbytes].tobytes() == want.tobytes()
