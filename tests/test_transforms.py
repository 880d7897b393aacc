"""Functional transforms (``ops.vmap``, ``vjp``, ``jvp``, ``linearize``, ``jacfwd``, ``jacrev``,
``get_grad``), the loop primitives (``ForiLoop``, ``WhileLoop``, ``Scan``), the graph internals of
round 3 (``tail``, ``zip_operation``, ``hyper_add``, ``augassign_*``, ``switch``, ``switch_layer``) and
the Tensor's storage facts.

Oracles: numpy formulas in float64 (per example for vmap), hand-derived Jacobians and
Jacobian-vector products of polynomials, central finite differences (gradients through vmap),
MindSpore 2.10's documented results (``Scan``'s cumsum example, ``augassign_div(7, 2) == 3.5``) and
its error texts, recorded in tests/fixtures/conformance/transforms.json as well.
"""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn, ops

X = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
Y = np.array([[5.0, 6.0], [7.0, 8.0]], np.float32)
ONES = np.ones((2, 2), np.float32)


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def cube_plus(x, y):
    return x * x * x + y


def two_outputs(x, y):
    return x * y, x + y


def with_aux(x, y):
    return x * x * x + y, y * 2


# ------------------------------------------------------------------ vjp / jvp / linearize
def test_vjp_is_the_cotangent_times_the_jacobian():
    out, vjp_fn = ops.vjp(cube_plus, Tensor(X), Tensor(Y))
    np.testing.assert_allclose(out.asnumpy(), X.astype(np.float64) ** 3 + Y)
    v = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    gx, gy = vjp_fn(Tensor(v))
    np.testing.assert_allclose(gx.asnumpy(), 3 * X.astype(np.float64) ** 2 * v, rtol=1e-6)
    np.testing.assert_allclose(gy.asnumpy(), v)
    # several outputs: one cotangent each, summed into the inputs' gradients
    _, vjp2 = ops.vjp(two_outputs, Tensor(X), Tensor(Y))
    gx, gy = vjp2(Tensor(ONES), Tensor(v))
    np.testing.assert_allclose(gx.asnumpy(), Y + v)
    np.testing.assert_allclose(gy.asnumpy(), X + v)
    out, fn_aux, aux = ops.vjp(with_aux, Tensor(X), Tensor(Y), has_aux=True)
    np.testing.assert_allclose(aux.asnumpy(), Y * 2)
    assert len(fn_aux(Tensor(ONES))) == 2


def test_jvp_is_the_jacobian_times_the_tangent():
    v = (Tensor(np.array([[1.0, 0.5], [-1.0, 2.0]], np.float32)), Tensor(ONES))
    out, tangent = ops.jvp(cube_plus, (Tensor(X), Tensor(Y)), v)
    want = 3 * X.astype(np.float64) ** 2 * v[0].asnumpy() + 1.0
    np.testing.assert_allclose(tangent.asnumpy(), want, rtol=1e-6)
    outs, tangents = ops.jvp(two_outputs, (Tensor(X), Tensor(Y)), (Tensor(ONES), Tensor(ONES)))
    np.testing.assert_allclose(tangents[0].asnumpy(), X + Y)        # d(xy) = y dx + x dy
    np.testing.assert_allclose(tangents[1].asnumpy(), 2 * ONES)
    main, tangent, aux = ops.jvp(with_aux, (Tensor(X), Tensor(Y)), (Tensor(ONES), Tensor(ONES)), has_aux=True)
    np.testing.assert_allclose(tangent.asnumpy(), 3 * X.astype(np.float64) ** 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(aux.asnumpy(), Y * 2)
    out, jvp_fn = ops.linearize(cube_plus, (Tensor(X), Tensor(Y)))
    np.testing.assert_allclose(jvp_fn(v).asnumpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="size of 'v'"):
        ops.jvp(cube_plus, (Tensor(X), Tensor(Y)), Tensor(ONES))


# ------------------------------------------------------------------ Jacobians
@pytest.mark.parametrize("jac", [ops.jacfwd, ops.jacrev])
def test_jacobians_are_output_shape_by_input_shape(jac):
    jx, jy = jac(two_outputs, grad_position=0)(Tensor(X), Tensor(Y))      # one input, two outputs
    eye = np.eye(4).reshape(2, 2, 2, 2)
    np.testing.assert_allclose(jx.asnumpy(), eye * Y.reshape(2, 2, 1, 1))
    np.testing.assert_allclose(jy.asnumpy(), eye)
    both = jac(cube_plus, grad_position=(0, 1))(Tensor(X), Tensor(Y))    # two inputs, one output
    np.testing.assert_allclose(both[0].asnumpy(), eye * 3 * X.reshape(2, 2, 1, 1) ** 2)
    np.testing.assert_allclose(both[1].asnumpy(), eye)
    nested = jac(two_outputs, grad_position=(0, 1))(Tensor(X), Tensor(Y))  # [output][input]
    np.testing.assert_allclose(nested[1][0].asnumpy(), eye)
    jacobian, aux = jac(with_aux, has_aux=True)(Tensor(X), Tensor(Y))
    assert jacobian.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(aux.asnumpy(), Y * 2)


def test_get_grad_finds_a_gradient_by_position():
    grads = ops.grad(lambda a, b: a * b, (0, 1), return_ids=True)(Tensor(X), Tensor(Y))
    np.testing.assert_allclose(ops.get_grad(grads, 1).asnumpy(), X)
    np.testing.assert_allclose(ms.get_grad(grads, 0).asnumpy(), Y)
    with pytest.raises(RuntimeError, match="can not find"):
        ops.get_grad(grads, 2)


# ------------------------------------------------------------------ vmap
def scale_shift(a, b):
    return a * b + 1


def test_vmap_maps_the_named_axes_as_a_per_example_loop():
    b = np.array([1.0, 2.0], np.float32)
    got = ops.vmap(scale_shift, in_axes=(0, None))(Tensor(X), Tensor(b))
    np.testing.assert_allclose(got.asnumpy(), np.stack([X[i] * b + 1 for i in range(2)]))
    got = ms.vmap(scale_shift, in_axes=(1, 0), out_axes=1)(Tensor(X), Tensor(Y))
    np.testing.assert_allclose(got.asnumpy(), np.stack([X[:, i] * Y[i] + 1 for i in range(2)], axis=1))
    total, doubled = ops.vmap(lambda a: (a.sum(), a * 2), in_axes=1, out_axes=(0, None))(Tensor(X))
    np.testing.assert_allclose(total.asnumpy(), X.sum(axis=0))
    np.testing.assert_allclose(doubled.asnumpy(), X[:, 0] * 2)      # out_axes None: one example's, unmapped
    # nested in_axes follow the arguments' nesting
    got = ops.vmap(lambda pair, c: pair[0] - pair[1] * c, in_axes=((0, 1), None))((Tensor(X), Tensor(Y)), 2.0)
    np.testing.assert_allclose(got.asnumpy(), np.stack([X[i] - Y[:, i] * 2 for i in range(2)]))
    # a Cell as fn
    np.testing.assert_allclose(ops.vmap(nn.ReLU(), in_axes=1, out_axes=1)(Tensor(X - 2.5)).asnumpy(),
                               np.maximum(X - 2.5, 0))
    # vmap of vmap: every element
    got = ops.vmap(ops.vmap(lambda a, b: a * b))(Tensor(X), Tensor(Y))
    np.testing.assert_allclose(got.asnumpy(), X * Y)


@pytest.mark.parametrize("in_axes, args, message", [
    ((0, 0, 0), (X, Y), "size must be equal to the number of arguments of 'fn': 2, but got size: 3"),
    (5, (X, Y), r"axis: 5 in 'in_axes' is out of bounds for array of dimension \[-2,2\)"),
    ((None, None), (X, Y), "cannot be all None"),
    (0, (X, np.ones((3, 2), np.float32)), "should be equal, but got 2 and 3"),
])
def test_vmap_refuses_bad_axes_with_mindsporess_runtime_error(in_axes, args, message):
    with pytest.raises(RuntimeError, match=message):
        ops.vmap(lambda a, b: a + b, in_axes=in_axes)(*(Tensor(a) for a in args))
    with pytest.raises(RuntimeError, match="only be of type Int or None"):
        ops.vmap(lambda a: a, in_axes=0.5)


class VmapNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mapped = ops.vmap(scale_shift, in_axes=(1, 0))

    def construct(self, a, b):
        return self.mapped(a, b)


class VmapInConstruct(nn.Cell):
    def construct(self, a, b):
        return ms.ops.vmap(scale_shift, in_axes=(1, 0))(a, b)


def test_vmap_compiles_in_graph_mode_and_differentiates():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = VmapNet()
    want = np.stack([X[:, i] * Y[i] + 1 for i in range(2)])
    np.testing.assert_allclose(net(Tensor(X), Tensor(Y)).asnumpy(), want)
    np.testing.assert_allclose(VmapInConstruct()(Tensor(X), Tensor(Y)).asnumpy(), want)
    gx, gy = ms.grad(net, (0, 1))(Tensor(X), Tensor(Y))
    # out[i, j] = x[j, i] * y[i, j]: d sum / dx[j, i] = y[i, j], d sum / dy[i, j] = x[j, i]
    np.testing.assert_allclose(gx.asnumpy(), Y.T)
    np.testing.assert_allclose(gy.asnumpy(), X.T)


# ------------------------------------------------------------------ loops and internals
def cumsum_step(res, el):
    res = res + el
    return res, res


def add_index(i, res):
    return i + res


def test_loop_primitives_are_mindsporess_documented_loops():
    assert ops.Scan()(cumsum_step, 0, [1, 2, 3, 4]) == (10, [1, 3, 6, 10])
    assert ops.Scan()(cumsum_step, 5, []) == (5, [])
    assert ops.ForiLoop()(0, 4, add_index, 0) == 6
    assert ops.WhileLoop()(lambda v: v < 100, lambda v: v + 1, 10) == 100
    carry, ys = ops.Scan()(cumsum_step, Tensor(np.zeros(2, np.float32)), [Tensor(X[0]), Tensor(X[1])])
    np.testing.assert_allclose(carry.asnumpy(), X.sum(axis=0))
    with pytest.raises(TypeError):
        ops.ForiLoop()(0, 4, nn.ReLU(), 0)
    with pytest.raises(ValueError, match="Invalid loop_func"):
        ops.Scan()(lambda c, x: c, 0, [1])          # the body must return (carry, y)


def test_graph_internals_over_python_values_and_tensors():
    x = Tensor(np.array([7.0, -3.0], np.float32))
    assert ops.tail((1, 2, 3)) == (2, 3)
    assert ops.zip_operation((1, 2), (3, 4)) == ((1, 3), (2, 4))
    assert ops.augassign_add((1,), (2,)) == (1, 2) and ops.augassign_div(7, 2) == 3.5
    assert ops.augassign_floordiv(7, 2) == 3 and ops.augassign_mod(-7, 3) == 2
    np.testing.assert_array_equal(ops.augassign_floordiv(x, 2).asnumpy(), [3.0, -2.0])
    np.testing.assert_array_equal(ops.augassign_mod(x, 2).asnumpy(), [1.0, 1.0])
    summed = ops.hyper_add([1, (2, x)], [3, (4, x)])
    assert summed[0] == 4 and summed[1][0] == 6
    np.testing.assert_array_equal(summed[1][1].asnumpy(), [14.0, -6.0])
    assert ops.hyper_add((1, 2), (1,)) == (2,)
    assert ops.switch(Tensor(True), "a", "b") == "a" and ops.switch(False, 1, 2) == 2
    assert ops.switch_layer(Tensor(np.int32(1)), (len, abs)) is abs
    assert ops.is_tensor_bool_cond(Tensor([True]))
    with pytest.raises(ValueError, match="shape is"):
        ops.is_tensor_bool_cond(Tensor([True, False]))
    np.testing.assert_array_equal(ops.TensorAdd()(x, x).asnumpy(), [14.0, -6.0])


def test_tensor_storage_facts_are_a_contiguous_host_buffer():
    t = Tensor(np.zeros((2, 3, 4), np.float32))
    assert t.stride() == [12, 4, 1] and t.stride(1) == 4
    assert t.strides == (48, 16, 4) == t.asnumpy().strides
    assert t.storage_offset() == 0 and t.data is t
    assert t.data_ptr() == t._data.ctypes.data
    assert (t.has_init, t.init, t.init_flag, t.is_meta, t.device, t.hooks()) == (False, None, False, False, "CPU", [])
    assert t.data_sync(True) is None
