"""Autodiff: backward rules (against finite differences of numpy references), MindSpore's gradient APIs
(return structures from ../shared/REFERENCE-training.md 4.1), optimizer update kernels (against their
formulas in numpy) and parameters updated in device memory by a training step."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import nn, ops
from ascendemu.graph.autodiff import differentiate
from ascendemu.graph.capture import Tracer
from ascendemu.graph.plan import compile_graph
from ascendemu.kernels.library import infer_outputs
from ascendemu.kernels.signature import OpSignature, TensorDesc

from gradcheck import assert_grads_close, autodiff_grads, numeric_grads


pytestmark = pytest.mark.usefixtures("restore_context")


RNG = np.random.default_rng(7)


def rand(*shape, low=None):
    a = RNG.standard_normal(shape).astype(np.float32)
    return np.abs(a) + low if low is not None else a


def gelu(a):
    return 0.5 * a * (1 + np.tanh(0.7978845608028654 * (a + 0.044715 * a ** 3)))


UNARY = [("Square", np.square, None), ("Neg", np.negative, None), ("Abs", np.abs, None), ("Exp", np.exp, None),
         ("Log", np.log, 0.5), ("Sqrt", np.sqrt, 0.5), ("Rsqrt", lambda a: 1 / np.sqrt(a), 0.5),
         ("ReLU", lambda a: np.maximum(a, 0), None), ("Sigmoid", lambda a: 1 / (1 + np.exp(-a)), None),
         ("Tanh", np.tanh, None), ("GeLU", gelu, None), ("Reciprocal", lambda a: 1 / a, 0.5),
         ("Sin", np.sin, None), ("Cos", np.cos, None)]


@pytest.mark.parametrize("op,ref,low", UNARY, ids=[u[0] for u in UNARY])
def test_unary_rules_match_finite_differences(ex, op, ref, low):
    x, ct = rand(3, 5, low=low), rand(3, 5)
    got = autodiff_grads(ex, op, [x], {}, ct)
    assert_grads_close(got[1:], numeric_grads(ref, [x], ct))


BINARY = [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply), ("Div", np.divide),
          ("Maximum", np.maximum), ("Minimum", np.minimum), ("Pow", np.power)]


@pytest.mark.parametrize("op,ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("sx,sy", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4))])
def test_binary_rules_sum_broadcast_gradients(ex, op, ref, sx, sy):
    positive = op in ("Div", "Pow")
    x, y = rand(*sx, low=0.5 if positive else None), rand(*sy, low=0.5 if positive else None)
    ct = rand(*np.broadcast_shapes(sx, sy))
    got = autodiff_grads(ex, op, [x, y], {}, ct)
    assert got[1].shape == sx and got[2].shape == sy
    assert_grads_close(got[1:], numeric_grads(ref, [x, y], ct))


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_rule_all_transposes(ex, ta, tb):
    a, b = rand(3, 5), rand(5, 4)
    a, b = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
    ct = rand(3, 4)
    got = autodiff_grads(ex, "MatMul", [a, b], {"transpose_a": ta, "transpose_b": tb}, ct)
    assert_grads_close(got[1:], numeric_grads(lambda p, q: (p.T if ta else p) @ (q.T if tb else q), [a, b], ct))


def test_batch_matmul_rule_reduces_broadcast_batch(ex):
    a, b, ct = rand(2, 3, 5), rand(5, 4), rand(2, 3, 4)
    got = autodiff_grads(ex, "BatchMatMul", [a, b], {}, ct)
    assert got[2].shape == (5, 4)
    assert_grads_close(got[1:], numeric_grads(np.matmul, [a, b], ct))


@pytest.mark.parametrize("op,ref", [("ReduceSum", np.sum), ("ReduceMean", np.mean), ("ReduceMax", np.max)])
@pytest.mark.parametrize("axis,keep", [((1,), False), ((0, 2), True), ((), False)])
def test_reduce_rules(ex, op, ref, axis, keep):
    x = rand(2, 3, 4)
    ct = rand(*np.shape(ref(x, axis=axis or None, keepdims=keep)))
    got = autodiff_grads(ex, op, [x], {"axis": axis, "keep_dims": keep}, ct)
    assert_grads_close(got[1:], numeric_grads(lambda a: ref(a, axis=axis or None, keepdims=keep), [x], ct))


def test_select_rule_routes_the_gradient_to_the_chosen_operand(ex):
    cond, x, y, ct = RNG.random((3, 4)) > 0.5, rand(3, 1), rand(3, 4), rand(3, 4)
    tracer = Tracer("grad_select")
    c, xi, yi = (tracer.input(TensorDesc(a.shape, str(a.dtype))) for a in (cond, x, y))
    with tracer.active():
        (out,) = tracer.apply("Select", [c, xi, yi], {})
        grads = differentiate(tracer, out, [xi, yi], tracer.literal(ct, "float32"))
    tracer.graph.outputs = grads
    gx, gy = ex.run_graph(tracer.graph, [cond, x, y], "O0")
    np.testing.assert_allclose(gx, np.where(cond, ct, 0).sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(gy, np.where(cond, 0, ct))


def test_broadcast_to_and_cast_rules(ex):
    x, ct = rand(3, 1), rand(2, 3, 4)
    got = autodiff_grads(ex, "BroadcastTo", [x], {"shape": (2, 3, 4)}, ct)
    np.testing.assert_allclose(got[1], ct.sum(axis=(0, 2)).reshape(3, 1), rtol=1e-5)
    got = autodiff_grads(ex, "Cast", [x], {"dst_type": "float16"}, rand(3, 1).astype(np.float16))
    assert got[1].dtype == np.float32


# ---------------------------------------------------------------------------- gradient front ends

class XWY(nn.Cell):
    """f(x, y) = sum(x * w * y), the probe of REFERENCE-training.md 4.1 (x=3, y=5, w=2)."""

    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.array([2.0], np.float32)), name="w")

    def construct(self, x, y):
        return ops.sum(x * self.w * y)


@pytest.mark.parametrize("mode", [ms.GRAPH_MODE, ms.PYNATIVE_MODE])
def test_grad_operation_return_structures_match_mindspore(ex, mode):
    ms.set_context(mode=mode)
    net = XWY()
    x, y = ms.Tensor(np.array([3.0], np.float32)), ms.Tensor(np.array([5.0], np.float32))
    val = lambda t: float(np.asarray(t.asnumpy()).reshape(-1)[0])  # noqa: E731
    assert val(ops.GradOperation()(net)(x, y)) == 10.0
    gx, gy = ops.GradOperation(get_all=True)(net)(x, y)
    assert (val(gx), val(gy)) == (10.0, 6.0)
    (gw,) = ops.GradOperation(get_by_list=True)(net, net.trainable_params())(x, y)
    assert val(gw) == 15.0
    (ins, ws) = ops.GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())(x, y)
    assert [val(t) for t in ins] == [10.0, 6.0] and [val(t) for t in ws] == [15.0]
    sens = ms.Tensor(np.float32(2.0))
    assert val(ops.GradOperation(sens_param=True)(net)(x, y, sens)) == 20.0
    g, (gw,) = ms.grad(net, 0, net.trainable_params())(x, y)
    assert (val(g), val(gw)) == (10.0, 15.0)
    (gw,) = ms.grad(net, None, net.trainable_params())(x, y)
    assert val(gw) == 15.0
    gx, gy = ms.grad(net, (0, 1))(x, y)
    assert (val(gx), val(gy)) == (10.0, 6.0)
    value, g = ms.value_and_grad(net)(x, y)
    assert (val(value), val(g)) == (30.0, 10.0)


def test_has_aux_differentiates_the_first_output_only(ex):
    ms.set_context(mode=ms.PYNATIVE_MODE)

    def f(x):
        return ops.sum(x * x), x * 100.0

    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    g, (aux,) = ms.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g.asnumpy(), [2.0, 4.0])
    np.testing.assert_allclose(aux.asnumpy(), [100.0, 200.0])
    (value, aux), g = ms.value_and_grad(f, has_aux=True)(x)
    assert float(value.asnumpy()) == 5.0


def test_stop_gradient_blocks(ex):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    x = ms.Tensor(np.array([3.0], np.float32))
    g = ms.grad(lambda t: ops.sum(t * ops.stop_gradient(t)))(x)
    np.testing.assert_allclose(g.asnumpy(), [3.0])


# ---------------------------------------------------------------------------- optimizer kernels

def run_op(ex, op, arrays, **attrs):
    sig = OpSignature.make(op, [TensorDesc(np.shape(a), "float32") for a in arrays], **attrs)
    return ex.run_op(sig, [np.asarray(a, np.float32) for a in arrays], infer_outputs(sig))


@pytest.mark.parametrize("nesterov", [False, True])
def test_apply_momentum_kernel(ex, nesterov):
    var, acc, g = rand(4, 3), rand(4, 3), rand(4, 3)
    lr, mom, wd = 0.05, 0.9, 1e-2
    new_var, new_acc = run_op(ex, "ApplyMomentum", [var, acc, np.float32(lr), g, np.float32(mom)],
                              use_nesterov=nesterov, weight_decay=wd)
    g = g + wd * var
    a = acc * mom + g
    want = var - lr * g - lr * mom * a if nesterov else var - lr * a
    np.testing.assert_allclose(new_acc, a, rtol=1e-6)
    np.testing.assert_allclose(new_var, want, rtol=1e-5, atol=1e-7)


def test_adam_kernels(ex):
    var, m, v, g = rand(5), rand(5), rand(5, low=0.1), rand(5)
    b1, b2, eps, lr = 0.9, 0.999, 1e-3, 0.01
    b1p, b2p = b1 ** 3, b2 ** 3
    new_var, new_m, new_v = run_op(ex, "Adam", [var, m, v, np.float32(b1p), np.float32(b2p), np.float32(lr),
                                                np.float32(b1), np.float32(b2), np.float32(eps), g])
    m2, v2 = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
    np.testing.assert_allclose(new_m, m2, rtol=1e-6)
    np.testing.assert_allclose(new_v, v2, rtol=1e-6)
    np.testing.assert_allclose(new_var, var - lr_t * m2 / (np.sqrt(v2) + eps), rtol=1e-5)
    wd = 0.01
    new_var, _, _ = run_op(ex, "AdamWeightDecay", [var, m, v, np.float32(lr), np.float32(b1), np.float32(b2),
                                                   np.float32(eps), np.float32(wd), g])
    np.testing.assert_allclose(new_var, var - lr * (m2 / (np.sqrt(v2) + eps) + wd * var), rtol=1e-5)


def test_sgd_kernel_first_step_takes_the_gradient(ex):
    var, acc, g = rand(6), rand(6), rand(6)
    lr, mom, damp = 0.1, 0.9, 0.2
    v1, a1, s1 = run_op(ex, "SGD", [var, acc, np.ones(6, np.float32), np.float32(lr), g, np.float32(mom)],
                        dampening=damp)
    np.testing.assert_allclose(a1, g, rtol=1e-6)
    np.testing.assert_allclose(v1, var - lr * g, rtol=1e-6)
    assert not s1.any()
    v2, a2, _ = run_op(ex, "SGD", [v1, a1, s1, np.float32(lr), g, np.float32(mom)], dampening=damp)
    np.testing.assert_allclose(a2, mom * a1 + (1 - damp) * g, rtol=1e-6)


# ---------------------------------------------------------------------------- training in device memory

class Linear(nn.Cell):
    def __init__(self, w, b):
        super().__init__()
        self.fc = nn.Dense(3, 2, weight_init=ms.Tensor(w), bias_init=ms.Tensor(b))

    def construct(self, x):
        return self.fc(x)


@pytest.mark.parametrize("jit_level", ["O0", "O1", "O2"])
def test_train_step_updates_parameters_in_device_memory(ex, jit_level):
    """Dense + MSELoss + Momentum(weight decay) for 3 steps against the same steps in numpy; set_data
    between steps is honoured (the device copy is uploaded again)."""
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": jit_level})
    w, b = rand(2, 3), rand(2)
    x, y = rand(4, 3), rand(4, 2)
    net = Linear(w, b)
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9, weight_decay=0.01)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    W, B = w.astype(np.float64), b.astype(np.float64)
    vw, vb = np.zeros_like(W), np.zeros_like(B)
    for i in range(3):
        if i == 2:            # the user replaces the weights between steps
            W = W * 0.5
            net.fc.weight.set_data(ms.Tensor(W.astype(np.float32)))
        loss = step(ms.Tensor(x), ms.Tensor(y))
        out = x @ W.T + B
        diff = out - y
        assert float(loss.asnumpy()) == pytest.approx(np.mean(diff ** 2), rel=1e-5)
        gout = 2 * diff / diff.size
        gw, gb = gout.T @ x + 0.01 * W, gout.sum(0) + 0.01 * B
        vw, vb = 0.9 * vw + gw, 0.9 * vb + gb
        W, B = W - 0.1 * vw, B - 0.1 * vb
    np.testing.assert_allclose(net.fc.weight.asnumpy(), W, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(opt.moments[1].asnumpy(), vb, rtol=1e-5, atol=1e-6)
    assert opt.global_step.asnumpy().tolist() == [3]


class NormNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn, self.flat, self.fc = nn.BatchNorm2d(3), nn.Flatten(), nn.Dense(12, 2)

    def construct(self, x):
        return self.fc(self.flat(self.bn(x)))


def test_batchnorm_network_runs_its_forward_once_per_step(ex):
    """TrainOneStepCell traces the forward twice (the loss, then the gradient's own); the second reads
    BatchNorm's moving statistics as the first did, so CSE leaves one BatchNorm and one BiasAdd kernel,
    and the step moves the statistics once: moving = 0.9 * moving + 0.1 * batch statistic (unbiased
    variance), as MindSpore's nn.BatchNorm2d(momentum=0.9) does."""
    ms.set_context(mode=ms.GRAPH_MODE)
    net = NormNet()
    x, y = rand(4, 3, 2, 2), rand(4, 2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                              nn.Momentum(net.trainable_params(), 0.1, 0.9)).set_train()
    graph, _ = ms.capture(step, ms.Tensor(x), ms.Tensor(y))
    kernels = [k.signature.op for k in compile_graph(graph, "O0").kernels]
    assert kernels.count("BatchNorm") == 1 and kernels.count("BiasAdd") == 1
    step(ms.Tensor(x), ms.Tensor(y))
    np.testing.assert_allclose(net.bn.moving_mean.asnumpy(), 0.1 * x.mean((0, 2, 3)), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(net.bn.moving_variance.asnumpy(), 0.9 + 0.1 * x.var((0, 2, 3), ddof=1), rtol=1e-5)


@pytest.mark.parametrize("mode", ["GRAPH_MODE", "PYNATIVE_MODE"])
def test_train_step_return_grad_gives_the_gradients_by_parameter_name(ex, mode):
    """TrainOneStepCell(return_grad=True) returns (loss, {parameter name: gradient}), the gradients of
    the loss before the update (MSE of a Dense layer, by hand), in both modes."""
    ms.set_context(mode=getattr(ms, mode))
    w, b = rand(2, 3), rand(2)
    x, y = rand(4, 3), rand(4, 2)
    net = Linear(w, b)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1),
                               return_grad=True)
    loss, grads = step(ms.Tensor(x), ms.Tensor(y))
    gout = 2 * (x @ w.T + b - y) / (4 * 2)
    assert list(grads) == ["fc.weight", "fc.bias"]
    np.testing.assert_allclose(grads["fc.weight"].asnumpy(), gout.T @ x, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(grads["fc.bias"].asnumpy(), gout.sum(0), rtol=1e-5, atol=1e-7)
    assert float(loss.asnumpy()) == pytest.approx(np.mean((x @ w.T + b - y) ** 2), rel=1e-5)
