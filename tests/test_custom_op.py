"""ops.Custom and ops.kernel: pyfunc runs the host function over numpy (one and several outputs,
out_shape/out_dtype as values or functions of the inputs' shapes and dtypes), a kernel-decorated
function runs with the hybrid DSL's intrinsics (func_type "hybrid", or as a pyfunc), checked against
numpy; MindSpore's argument errors; the kinds that cannot be served (aot, akg, tbe, aicpu) and a
host function inside a graph or a gradient refused with typed errors; MoveTo and GetNext."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import nn, ops

A = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
B = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


@ops.kernel
def fused_mul_add(a, b):
    """A hybrid-DSL kernel: output_tensor and range are the DSL's intrinsics."""
    c = output_tensor(a.shape, a.dtype)  # noqa: F821
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            c[i, j] = a[i, j] * b[i, j] + sqrt(abs(a[i, j]))  # noqa: F821
    return c


def test_pyfunc_outputs_follow_numpy():
    x, y = ms.Tensor(A), ms.Tensor(B)
    add = ops.Custom(lambda a, b: a + b, out_shape=lambda a, b: a, out_dtype=lambda a, b: a, func_type="pyfunc")
    got = add(x, y)
    assert got.dtype == ms.float32 and np.array_equal(got.asnumpy(), A + B)
    floor = ops.Custom(lambda a: np.floor(a), (2, 3), ms.int32)(x)              # cast to out_dtype
    assert floor.dtype == ms.int32 and np.array_equal(floor.asnumpy(), np.floor(A).astype(np.int32))
    lo, hi = ops.Custom(lambda a: (a.min(axis=1), a.max()), ((2,), (1,)), (ms.float32, ms.float64))(x)
    assert np.array_equal(lo.asnumpy(), A.min(axis=1)) and hi.dtype == ms.float64 and hi.asnumpy()[0] == A.max()
    total = ops.Custom(lambda a, k: a.sum() * k, (), ms.float32)(x, 2)           # () is MindSpore's (1,)
    assert total.shape == (1,) and total.asnumpy()[0] == pytest.approx(2 * A.sum())


def test_kernel_functions_run_with_the_dsl_intrinsics():
    want = A * B + np.sqrt(np.abs(A))
    for func_type in ("hybrid", "pyfunc"):
        got = ops.Custom(fused_mul_add, out_shape=(2, 3), out_dtype=ms.float32, func_type=func_type)(
            ms.Tensor(A), ms.Tensor(B))
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(fused_mul_add(A, B), want, rtol=1e-6)             # called directly: numpy
    assert "output_tensor" not in globals()                                       # the module is untouched
    assert ops.ms_kernel(lambda a: a).ms_kernel_flag and ops.operations.kernel is ops.kernel


def test_mindspores_errors_and_the_refused_kinds():
    f = lambda a: a  # noqa: E731
    with pytest.raises(ValueError, match=r"'func_type' must be one of \['hybrid', 'akg', 'tbe', 'aicpu', 'aot', "):
        ops.Custom(f, (1,), ms.float32, "julia")
    with pytest.raises(TypeError, match="'func' must be of type str"):
        ops.Custom(f, (1,), ms.float32, "aot")
    with pytest.raises(TypeError, match="must be a function decorated by kernel"):
        ops.Custom(f, (1,), ms.float32, "hybrid")
    with pytest.raises(InvalidParamError, match="aot.*native .so.*func_type='pyfunc'"):
        ops.Custom("./add.so:CustomAdd", (1,), ms.float32, "aot")
    for kind in ("akg", "tbe", "aicpu"):
        with pytest.raises(InvalidParamError, match=f"func_type='{kind}' is not supported by the emulator"):
            ops.Custom(f, (1,), ms.float32, kind)
    with pytest.raises(TypeError, match="'out_dtype' must be one of"):
        ops.Custom(f, (2, 3))(ms.Tensor(A))
    with pytest.raises(TypeError, match="'out_shape' must be one of"):
        ops.Custom(f, None, ms.float32)(ms.Tensor(A))
    with pytest.raises(ValueError, match=r"output 0 of the function has shape \(3,\) but out_shape gives \(2, 2\)"):
        ops.Custom(lambda a: a[0], (2, 2), ms.float32)(ms.Tensor(A))
    bprop = lambda x, out, dout: (dout,)  # noqa: E731
    assert ops.Custom(f, (1,), ms.float32, bprop=bprop).get_bprop() is bprop


def test_a_host_function_in_a_graph_or_a_gradient_is_refused(ex, restore_context):
    custom = ops.Custom(lambda a: a * 2, lambda a: a, lambda a: a)
    with pytest.raises(InvalidParamError, match="cannot run inside an emulated device graph"):
        ms.grad(lambda x: custom(x).sum())(ms.Tensor(A))
    ms.set_context(mode=ms.GRAPH_MODE)

    class Net(nn.Cell):
        def construct(self, x):
            return custom(x)

    with pytest.raises(InvalidParamError, match="cannot run inside an emulated device graph"):
        Net()(ms.Tensor(A))


def test_move_to_copies_and_get_next_names_the_sink(ex, restore_context):
    x = ms.Tensor(A)
    for got in (ops.move_to(x), ops.move_to(x, "Ascend", False), x.move_to("CPU"), ops.MoveTo()(x, "CPU", True)):
        assert got is not x and np.array_equal(got.asnumpy(), A)
    assert np.array_equal(ops.move_to([1, 2]).asnumpy(), [1, 2])
    with pytest.raises(RuntimeError, match=r"should be one of \['Ascend', 'CPU'\], but got to:GPU"):
        x.move_to("GPU")
    with pytest.raises(TypeError, match="'blocking' must be bool"):
        ops.move_to(x, "CPU", 1)
    ms.set_context(mode=ms.GRAPH_MODE)

    class Net(nn.Cell):
        def construct(self, x):
            return ops.move_to(x * 2, "Ascend")

    assert np.array_equal(Net()(x).asnumpy(), 2 * A)
    get_next = ops.GetNext([ms.float32], [[2]], 1, "queue")
    with pytest.raises(InvalidParamError, match="'queue' is not exposed by the emulator"):
        get_next()
    with pytest.raises(TypeError, match="'types' should be one of"):
        ops.GetNext(ms.float32, [[2]], 1, "queue")
