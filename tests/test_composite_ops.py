"""Composite ops (frontend/ops/composite_op.py): one stanza of registry ops gives the primitive, the
functional form (with the signature recorded from real MindSpore 2.10), the shape rule and the gradient
(from the parts), and at O1 one fused kernel.

Oracles: numpy formulas (float64, rounded to float32), central finite differences of those formulas,
and the signature table recorded from MindSpore 2.10."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.frontend.api_coverage import table_signature
from ascendemu.frontend.ops.composite_op import COMPOSITES, function_home
from ascendemu.graph import passes
from ascendemu.graph.plan import compile_graph



@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


X = np.array([-100.0, -3.0, -0.5, 0.0, 0.25, 2.0, 19.0, 30.0], np.float32)


def softplus_ref(x, beta=1.0, threshold=20.0):
    z = x.astype(np.float64) * beta
    return np.where(z > threshold, x, np.logaddexp(0.0, z) / beta)


def elu_ref(x, alpha=1.0):
    x = x.astype(np.float64)
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


@pytest.mark.parametrize("beta,threshold", [(1, 20), (2, 5), (0.5, 20)])
def test_softplus_is_mindsporess_formula(beta, threshold):
    got = ops.softplus(Tensor(X), beta=beta, threshold=threshold).asnumpy()
    np.testing.assert_allclose(got, softplus_ref(X, beta, threshold), rtol=2e-6, atol=1e-6)
    if beta == 1:
        np.testing.assert_array_equal(ops.Softplus()(Tensor(X)).asnumpy(), got)


def test_elu_primitive_and_function_agree_with_numpy():
    np.testing.assert_allclose(ops.elu(Tensor(X)).asnumpy(), elu_ref(X), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(ops.Elu(alpha=1.0)(Tensor(X)).asnumpy(), elu_ref(X), rtol=2e-6, atol=1e-7)
    with pytest.raises(ValueError, match="alpha must be 1.0"):    # MindSpore 2.10's Elu takes no other alpha
        ops.elu(Tensor(X), alpha=0.5)
    half = Tensor(X.astype(np.float16))
    out = ops.elu(half)
    assert out.dtype == ms.float16
    np.testing.assert_allclose(out.asnumpy(), elu_ref(X.astype(np.float16)), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("fn,ref", [(lambda t: ops.softplus(t, beta=2), lambda x: softplus_ref(x, 2.0)),
                                    (lambda t: ops.elu(t), lambda x: elu_ref(x))])
def test_gradient_comes_from_the_parts_and_matches_finite_differences(fn, ref):
    x = np.array([-4.0, -1.3, -0.2, 0.3, 1.1, 3.0], np.float32)       # away from the kinks
    got = ms.grad(lambda t: fn(t).sum())(Tensor(x)).asnumpy()
    h = 1e-5
    numeric = (ref(x.astype(np.float64) + h) - ref(x.astype(np.float64) - h)) / (2 * h)
    np.testing.assert_allclose(got, numeric, rtol=1e-4, atol=1e-6)


def test_softplus_gradient_stays_finite_where_exp_overflows():
    g = ms.grad(lambda t: ops.softplus(t).sum())(Tensor(np.array([-200.0, 90.0, 200.0], np.float32))).asnumpy()
    np.testing.assert_allclose(g, [0.0, 1.0, 1.0], atol=1e-30)


def test_signatures_are_the_recorded_ones():
    assert inspect.signature(ops.softplus) == table_signature("mindspore.ops.softplus")
    assert inspect.signature(ops.elu) == table_signature("mindspore.ops.elu")
    init = inspect.signature(ops.Elu.__init__)
    assert list(init.parameters)[1:] == list(table_signature("mindspore.ops.Elu", "init").parameters)
    assert function_home("elu") == "mindspore.ops.function.nn_func"       # 2.x defines it in auto_generate
    from ascendemu.frontend.ops.function import nn_func
    from ascendemu.frontend.ops.operations import nn_ops
    assert nn_func.softplus is ops.softplus and nn_ops.Elu is ops.Elu
    assert {c.name for c in COMPOSITES} >= {"Softplus", "Elu"}


def test_bad_arguments_get_python_and_mindspore_errors():
    with pytest.raises(TypeError, match=r"softplus\(\) got an unexpected keyword argument 'alpha'"):
        ops.softplus(Tensor(X), alpha=1)
    with pytest.raises(TypeError, match=r"Elu\(\) takes from 0 to 1 positional arguments but 2 were given"):
        ops.Elu(1.0, 2.0)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'input_x'"):
        ops.Elu()()
    assert issubclass(InvalidParamError, Exception)


def test_graph_mode_fuses_a_composite_into_one_kernel():
    class Net(nn.Cell):
        def construct(self, x):
            return ops.elu(x)

    net = Net()
    graph, _ = ms.capture(net, Tensor(X))
    ops_before = [n.op for n in graph.nodes]
    assert {"Exp", "Select", "Greater"} <= set(ops_before)
    fused = passes.fuse_elementwise(passes.remove_no_task(graph))
    assert [n.op for n in fused.nodes] == ["FusedElemwise"]
    compile_graph(graph, "O1")            # the fused program is a valid kernel signature
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O1"})
    got = net(Tensor(X)).asnumpy()
    np.testing.assert_allclose(got, elu_ref(X), rtol=2e-6, atol=1e-7)
