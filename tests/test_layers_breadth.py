"""The nn layers of issue 21 (breadth) and their ops: activations, Conv3d/Conv1dTranspose, the norms,
pooling, padding and the small basic layers.

Oracles: numpy formulas in float64 (a direct loop convolution, np.pad, reshapes written from the
definitions), central finite differences of those formulas for the gradients, and the parameter names,
shapes and order recorded from real MindSpore 2.10 (tests/fixtures/layer_params.json, written by
tools/record_layer_params.py)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops

FIXTURE = Path(__file__).parent / "fixtures" / "layer_params.json"
RNG = np.random.default_rng(21)


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def close(got: Tensor, want: np.ndarray, rtol: float = 2e-5, atol: float = 2e-5) -> None:
    np.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=atol)


# ---- activations -------------------------------------------------------------------------------
def _softplus(x):
    return np.logaddexp(0.0, x)


def _elu(x, a=1.0):
    return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))


SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)
ACTIVATIONS = [
    (nn.ELU(), lambda x: _elu(x)),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.LogSigmoid(), lambda x: -_softplus(-x)),
    (nn.Hardtanh(-0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7)),
    (nn.SeLU(), lambda x: SELU[1] * _elu(x, SELU[0])),
    (nn.CELU(0.6), lambda x: np.maximum(x, 0) + np.minimum(0, 0.6 * np.expm1(x / 0.6))),
    (nn.HShrink(0.4), lambda x: np.where(np.abs(x) > 0.4, x, 0)),
    (nn.SoftShrink(0.4), lambda x: np.where(x > 0.4, x - 0.4, np.where(x < -0.4, x + 0.4, 0))),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (nn.Threshold(0.1, 20.0), lambda x: np.where(x > 0.1, x, 20.0)),
    (nn.Mish(), lambda x: x * np.tanh(_softplus(x))),
    (nn.FastGelu(), lambda x: x / (1 + np.exp(-1.702 * np.abs(x))) * np.exp(0.851 * (x - np.abs(x)))),
    (nn.Softmin(1), lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True)),
    (nn.GLU(1), lambda x: x[:, :2] / (1 + np.exp(-x[:, 2:]))),
    (nn.Softmax2d(), lambda x: np.exp(x) / np.exp(x).sum(-3, keepdims=True)),
]


@pytest.mark.parametrize("cell,ref", ACTIVATIONS, ids=[type(c).__name__ for c, _ in ACTIVATIONS])
def test_activation_cells_match_numpy(cell, ref):
    x = rand(2, 4, 3) * 2
    close(cell(Tensor(x)), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_prelu_cell_op_and_errors():
    x = rand(2, 3, 4)
    cell = nn.PReLU(3, [0.1, 0.2, 0.3])
    w = np.array([0.1, 0.2, 0.3], np.float64)[None, :, None]
    close(cell(Tensor(x)), np.where(x > 0, x, x * w))
    close(ops.prelu(Tensor(x), Tensor(np.array([0.5], np.float32))), np.where(x > 0, x, 0.5 * x))
    with pytest.raises(InvalidParamError, match="channels"):
        ops.prelu(Tensor(x), Tensor(np.ones(2, np.float32)))
    with pytest.raises(InvalidParamError, match="list of 3 floats"):
        nn.PReLU(3, [0.1, 0.2])


def test_elu_cell_keeps_mindsporess_alpha_check_and_shrink_rejects_negative_lambda():
    with pytest.raises(InvalidParamError, match="alpha"):
        nn.ELU(0.5)
    with pytest.raises(InvalidParamError, match="lambd"):
        ops.softshrink(Tensor(rand(3)), -1.0)
    with pytest.raises(InvalidParamError, match="alpha"):
        ops.celu(Tensor(rand(3)), 0.0)


def test_activation_primitives_and_get_activation():
    x = rand(5)
    np.testing.assert_array_equal(ops.Mish()(Tensor(x)).asnumpy(), ops.mish(Tensor(x)).asnumpy())
    np.testing.assert_array_equal(ops.HShrink(0.3)(Tensor(x)).asnumpy(), ops.hardshrink(Tensor(x), 0.3).asnumpy())
    assert isinstance(nn.get_activation("silu"), nn.SiLU) and isinstance(nn.get_activation("prelu"), nn.PReLU)


# ---- convolutions ------------------------------------------------------------------------------
def conv3d_ref(x, w, stride, dilation, pads, group):
    """Direct 3-D convolution in float64; pads (head, tail, top, bottom, left, right)."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pads[0:2], pads[2:4], pads[4:6]))
    n, c, d, h, wd = x.shape
    o, cg, kd, kh, kw = w.shape
    (sd, sh, sw), (dd, dh, dw) = stride, dilation
    od, oh, ow = ((d - (kd - 1) * dd - 1) // sd + 1, (h - (kh - 1) * dh - 1) // sh + 1,
                  (wd - (kw - 1) * dw - 1) // sw + 1)
    out = np.zeros((n, o, od, oh, ow))
    og = o // group
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg]
        for a in range(kd):
            for b in range(kh):
                for e in range(kw):
                    patch = xs[:, :, a * dd:a * dd + (od - 1) * sd + 1:sd, b * dh:b * dh + (oh - 1) * sh + 1:sh,
                               e * dw:e * dw + (ow - 1) * sw + 1:sw]
                    tap = w[g * og:(g + 1) * og, :, a, b, e]
                    out[:, g * og:(g + 1) * og] += np.einsum("ncdhw,oc->nodhw", patch, tap)
    return out


@pytest.mark.parametrize("kwargs,pads", [
    (dict(), (0,) * 6),
    (dict(stride=2, pad_mode="pad", padding=1), (1,) * 6),
    (dict(stride=(1, 2, 1), dilation=(2, 1, 1), pad_mode="pad", padding=(1, 0, 0, 1, 2, 1), group=2),
     (1, 0, 0, 1, 2, 1)),
])
def test_conv3d_matches_a_direct_convolution(kwargs, pads):
    x, w = rand(2, 4, 6, 5, 5), rand(6, 4 // kwargs.get("group", 1), 3, 2, 3)
    stride = kwargs.get("stride", 1)
    stride = (stride,) * 3 if isinstance(stride, int) else stride
    dilation = kwargs.get("dilation", (1, 1, 1))
    want = conv3d_ref(x, w, stride, dilation, pads, kwargs.get("group", 1))
    got = ops.conv3d(Tensor(x), Tensor(w), None, stride, kwargs.get("pad_mode", "valid"), kwargs.get("padding", 0),
                     dilation, kwargs.get("group", 1))
    close(got, want, rtol=1e-4, atol=1e-4)


def test_conv3d_cell_same_padding_and_bias():
    net = nn.Conv3d(2, 3, 3, stride=2, has_bias=True, weight_init="normal", bias_init="normal")
    x = rand(1, 2, 5, 4, 6)
    w, b = net.weight.asnumpy(), net.bias.asnumpy()
    # 'same': out = ceil(in / 2); total pad = (out - 1) * 2 + 3 - in, the smaller half first
    pads = []
    for size in (5, 4, 6):
        total = max((math.ceil(size / 2) - 1) * 2 + 3 - size, 0)
        pads += [total // 2, total - total // 2]
    want = conv3d_ref(x, w, (2, 2, 2), (1, 1, 1), pads, 1) + b.reshape(1, -1, 1, 1, 1)
    out = net(Tensor(x))
    assert out.shape == (1, 3, 3, 2, 3)
    close(out, want, rtol=1e-4, atol=1e-4)


def test_conv1d_transpose_is_the_adjoint_of_conv1d():
    """<conv1d(y), x> == <y, conv1d_transpose(x)> for the same weight: the transposed convolution's
    defining property, checked in float64 against a direct Conv1d computed in numpy."""
    net = nn.Conv1dTranspose(3, 2, 3, stride=2, pad_mode="valid", weight_init="normal")
    w = net.weight.asnumpy()[:, :, 0, :].astype(np.float64)           # (in=3, out=2, k)
    x = rand(2, 3, 4)
    out = net(Tensor(x)).asnumpy()
    assert out.shape == (2, 2, (4 - 1) * 2 + 3)
    want = np.zeros(out.shape)
    for i in range(4):
        for k in range(3):
            want[:, :, i * 2 + k] += np.einsum("nc,co->no", x[:, :, i], w[:, :, k])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


# ---- normalisation ------------------------------------------------------------------------------
def group_norm_ref(x, groups, gamma, beta, eps=1e-5):
    x = x.astype(np.float64)
    g = x.reshape(x.shape[0], groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return y * gamma.reshape(shape) + beta.reshape(shape)


def test_group_norm_and_instance_norms():
    x = rand(2, 4, 3, 5) * 3 + 1
    gamma, beta = rand(4), rand(4)
    net = nn.GroupNorm(2, 4, gamma_init=Tensor(gamma), beta_init=Tensor(beta))
    close(net(Tensor(x)), group_norm_ref(x, 2, gamma, beta), rtol=1e-4, atol=1e-4)
    for cell, shape in ((nn.InstanceNorm1d(4), (2, 4, 7)), (nn.InstanceNorm2d(4), (2, 4, 3, 5)),
                        (nn.InstanceNorm3d(4), (2, 4, 2, 3, 2))):
        xi = rand(*shape)
        close(cell(Tensor(xi)), group_norm_ref(xi, 4, np.ones(4), np.zeros(4)), rtol=1e-4, atol=1e-4)
    with pytest.raises(InvalidParamError, match="rank 4"):
        nn.InstanceNorm2d(4)(Tensor(rand(2, 4, 3)))
    with pytest.raises(InvalidParamError, match="num_groups"):
        nn.GroupNorm(3, 4)


def test_batchnorm3d_and_syncbatchnorm_training_and_eval():
    x = rand(3, 2, 2, 3, 4) * 2 + 0.5
    net = nn.BatchNorm3d(2)
    net.set_train()
    mean, var = x.mean((0, 2, 3, 4), dtype=np.float64), x.var((0, 2, 3, 4), dtype=np.float64)
    want = (x - mean.reshape(1, 2, 1, 1, 1)) / np.sqrt(var.reshape(1, 2, 1, 1, 1) + 1e-5)
    close(net(Tensor(x)), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(net.bn2d.moving_mean.asnumpy(), 0.1 * mean, rtol=1e-4, atol=1e-5)
    net.set_train(False)
    moving_mean, moving_var = net.bn2d.moving_mean.asnumpy(), net.bn2d.moving_variance.asnumpy()
    want = (x - moving_mean.reshape(1, 2, 1, 1, 1)) / np.sqrt(moving_var.reshape(1, 2, 1, 1, 1) + 1e-5)
    close(net(Tensor(x)), want, rtol=1e-4, atol=1e-4)
    sync = nn.SyncBatchNorm(2)
    sync.set_train()
    x4 = rand(4, 2, 3, 3)
    m4, v4 = x4.mean((0, 2, 3), dtype=np.float64), x4.var((0, 2, 3), dtype=np.float64)
    close(sync(Tensor(x4)), (x4 - m4.reshape(1, 2, 1, 1)) / np.sqrt(v4.reshape(1, 2, 1, 1) + 1e-5), rtol=1e-4,
          atol=1e-4)
    with pytest.raises(InvalidParamError, match="process_groups"):
        nn.SyncBatchNorm(2, process_groups=[[0, 1]])


# ---- pooling ------------------------------------------------------------------------------------
def adaptive_ref(x, sizes):
    """Adaptive average pooling from its definition: window [floor(i n / o), ceil((i + 1) n / o))."""
    x = x.astype(np.float64)
    for k, out in enumerate(sizes):
        axis = x.ndim - len(sizes) + k
        n = x.shape[axis]
        parts = [np.take(x, range(i * n // out, -(-(i + 1) * n // out)), axis).mean(axis, keepdims=True)
                 for i in range(out)]
        x = np.concatenate(parts, axis)
    return x


def test_pooling_cells():
    x = rand(2, 3, 9)
    close(nn.MaxPool1d(3, 2)(Tensor(x)), np.stack([x[:, :, i:i + 3].max(-1) for i in range(0, 7, 2)], -1))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    close(nn.AvgPool1d(3, 2, pad_mode="pad", padding=1)(Tensor(x)),
          np.stack([padded[:, :, i:i + 3].mean(-1) for i in range(0, 9, 2)], -1), rtol=1e-5, atol=1e-6)
    close(nn.AdaptiveAvgPool1d(4)(Tensor(x)), adaptive_ref(x, (4,)), rtol=1e-5, atol=1e-6)
    x4 = rand(2, 3, 7, 5)
    close(nn.AdaptiveAvgPool2d((3, None))(Tensor(x4)), adaptive_ref(x4, (3, 5)), rtol=1e-5, atol=1e-6)
    close(ops.AdaptiveAvgPool2D(2)(Tensor(x4)), adaptive_ref(x4, (2, 2)), rtol=1e-5, atol=1e-6)
    x5 = rand(1, 2, 5, 4, 6)
    close(nn.AdaptiveAvgPool3d((2, 3, 4))(Tensor(x5)), adaptive_ref(x5, (2, 3, 4)), rtol=1e-5, atol=1e-6)
    with pytest.raises(InvalidParamError, match="dilation"):
        nn.MaxPool1d(2, dilation=2)


# ---- padding ------------------------------------------------------------------------------------
@pytest.mark.parametrize("cell,mode,pads,kw", [
    (nn.ConstantPad1d((1, 2), 0.5), "constant", ((1, 2),), {"constant_values": 0.5}),
    (nn.ConstantPad2d(1, -1.0), "constant", ((1, 1), (1, 1)), {"constant_values": -1.0}),
    (nn.ConstantPad3d((1, 0, 0, 2, 1, 1), 2.0), "constant", ((1, 1), (0, 2), (1, 0)), {"constant_values": 2.0}),
    (nn.ZeroPad2d((0, 1, 2, 0)), "constant", ((2, 0), (0, 1)), {}),
    (nn.ReflectionPad1d(2), "reflect", ((2, 2),), {}),
    (nn.ReflectionPad2d((1, 2, 2, 1)), "reflect", ((2, 1), (1, 2)), {}),
    (nn.ReplicationPad1d((3, 1)), "edge", ((3, 1),), {}),
    (nn.ReplicationPad2d((1, 2, 0, 3)), "edge", ((0, 3), (1, 2)), {}),
    (nn.ReplicationPad3d(1), "edge", ((1, 1),) * 3, {}),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Cell) else None)
def test_padding_cells_match_np_pad(cell, mode, pads, kw):
    x = rand(2, 3, 4, 5)
    full = ((0, 0),) * (x.ndim - len(pads)) + pads
    close(cell(Tensor(x)), np.pad(x, full, mode, **kw))


# ---- basic, image, embedding, combined -----------------------------------------------------------
def test_basic_cells():
    x = rand(2, 3, 4)
    lin = nn.Linear(4, 5)
    close(lin(Tensor(x)), x @ lin.weight.asnumpy().T + lin.bias.asnumpy(), rtol=1e-5, atol=1e-5)
    a, b = rand(2, 4, 3), rand(5, 3)
    close(nn.MatMul(transpose_x2=True)(Tensor(a), Tensor(b)), a @ b.T, rtol=1e-5, atol=1e-5)
    assert nn.Unflatten(1, (2, 2))(Tensor(x.reshape(2, 4, 3))).shape == (2, 2, 2, 3)
    m = rand(2, 4, 4)
    close(nn.Tril()(Tensor(m)), np.tril(m))
    close(nn.Triu()(Tensor(m), 1), np.triu(m, 1))
    close(nn.L1Regularizer(0.5)(Tensor(m)), 0.5 * np.abs(m).sum(), rtol=1e-5)
    close(nn.Roll((1, -2), (0, 2))(Tensor(x)), np.roll(x, (1, -2), (0, 2)))


def test_channel_dropout_drops_whole_channels():
    net = nn.Dropout2d(0.5)
    x = np.ones((4, 8, 3, 3), np.float32)
    np.testing.assert_array_equal(net(Tensor(x)).asnumpy(), x)        # eval mode: the identity
    net.set_train()
    out = net(Tensor(x)).asnumpy()
    per_channel = out.reshape(4, 8, -1)
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()          # a channel is all kept or all dropped
    assert 0 < (per_channel[:, :, 0] == 0).sum() < 32


def test_pixel_and_channel_shuffle():
    x = rand(2, 8, 3, 2)
    r = 2
    want = x.reshape(2, 2, r, r, 3, 2).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 4)
    out = nn.PixelShuffle(2)(Tensor(x))
    close(out, want)
    close(nn.PixelUnshuffle(2)(out), x)
    close(nn.ChannelShuffle(4)(Tensor(x)), x.reshape(2, 4, 2, 3, 2).transpose(0, 2, 1, 3, 4).reshape(x.shape))


def test_embedding_lookup_with_max_norm():
    net = nn.EmbeddingLookup(6, 3, max_norm=1.0)
    table = net.embedding_table.asnumpy().astype(np.float64)
    ids = np.array([[0, 5], [2, 2]], np.int32)
    rows = table[ids]
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    close(net(Tensor(ids)), rows * 1.0 / np.maximum(norms, 1.0), rtol=1e-5, atol=1e-6)
    with pytest.raises(InvalidParamError, match="manual_shapes"):
        nn.EmbeddingLookup(6, 3, manual_shapes=((3, 3),))


def test_conv2d_bn_act_and_dense_bn_act_are_their_parts():
    net = nn.Conv2dBnAct(2, 3, 3, has_bn=True, activation="relu")
    net.set_train(False)
    x = rand(1, 2, 5, 5)
    want = np.maximum(net.batchnorm(net.conv(Tensor(x))).asnumpy(), 0)
    close(net(Tensor(x)), want)
    dense = nn.DenseBnAct(4, 3, activation="leakyrelu", alpha=0.1)
    y = rand(5, 4)
    pre = y @ dense.dense.weight.asnumpy().T + dense.dense.bias.asnumpy()
    close(dense(Tensor(y)), np.where(pre > 0, pre, 0.1 * pre), rtol=1e-5, atol=1e-5)


# ---- gradients (finite differences of the numpy references) -------------------------------------
def numeric_grad(ref, arrays, index, eps=1e-4):
    xs = [a.astype(np.float64) for a in arrays]
    g = np.zeros_like(xs[index])
    flat, gflat = xs[index].reshape(-1), g.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + eps
        plus = ref(*xs).sum()
        flat[k] = old - eps
        minus = ref(*xs).sum()
        flat[k] = old
        gflat[k] = (plus - minus) / (2 * eps)
    return g


GRADS = [
    ("prelu", lambda x, w: ops.prelu(x, w), lambda x, w: np.where(x > 0, x, x * w.reshape(1, -1, 1)),
     [rand(2, 3, 4), np.array([0.1, 0.2, 0.3], np.float32)]),
    ("group_norm", lambda x, w: ops.group_norm(x, 2, w), lambda x, w: group_norm_ref(x, 2, w, np.zeros(4)) ** 2,
     [rand(2, 4, 3), rand(4)]),
    ("conv3d", lambda x, w: ops.conv3d(x, w, stride=(2, 1, 1), pad_mode="pad", padding=1),
     lambda x, w: conv3d_ref(x, w, (2, 1, 1), (1, 1, 1), (1,) * 6, 1) ** 2, [rand(1, 2, 4, 3, 3), rand(2, 2, 2, 2, 2)]),
    ("adaptive_avg_pool2d", lambda x, w: ops.adaptive_avg_pool2d(x * w, (2, 3)),
     lambda x, w: adaptive_ref(x * w, (2, 3)) ** 3, [rand(1, 2, 5, 4), rand(4)]),
]


@pytest.mark.parametrize("name,fn,ref,arrays", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_match_finite_differences(name, fn, ref, arrays):
    if name in ("group_norm", "conv3d"):
        wrapped = lambda x, w: fn(x, w) ** 2                                  # noqa: E731
    elif name == "adaptive_avg_pool2d":
        wrapped = lambda x, w: fn(x, w) ** 3                                  # noqa: E731
    else:
        wrapped = fn
    grads = ms.grad(lambda x, w: wrapped(x, w).sum(), grad_position=(0, 1))(*map(Tensor, arrays))
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g.asnumpy(), numeric_grad(ref, arrays, i), rtol=2e-3, atol=2e-3)


# ---- GRAPH_MODE ---------------------------------------------------------------------------------
class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm3d(4)
        self.act = nn.PReLU(4)
        self.gn = nn.GroupNorm(2, 4)
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.pad = nn.ReplicationPad2d(1)

    def construct(self, x):
        y = self.act(self.bn(self.conv(x)))
        n, c, d, h, w = y.shape
        y = self.gn(ops.reshape(y, (n, c, d * h, w)))
        return nn.SiLU()(self.pool(self.pad(y)))


def test_graph_mode_matches_pynative():
    net = _Net()
    net.set_train(False)
    x = Tensor(rand(2, 2, 3, 4, 4))
    eager = net(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = net(x).asnumpy()
    assert graph.shape == (2, 4, 2, 2)
    np.testing.assert_allclose(graph, eager, rtol=1e-5, atol=1e-5)


# ---- parameter names against real MindSpore ------------------------------------------------------
RECORDED = json.loads(FIXTURE.read_text())


class _Holder(nn.Cell):
    """Holds a layer as attribute ``layer``: MindSpore's checkpoint keys are the attribute paths then."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer


@pytest.mark.parametrize("name", [n for n in RECORDED["parameters"] if hasattr(nn, n)])
def test_parameter_names_shapes_and_order_are_mindsporess(name):
    args, kwargs = RECORDED["args"][name]
    holder = _Holder(getattr(nn, name)(*args, **kwargs))
    got = [[p.name, list(p.shape), bool(p.requires_grad)] for _, p in holder.parameters_and_names()]
    want = [["layer." + path, shape, grad] for path, _, shape, grad in RECORDED["parameters"][name]]
    assert got == want


# ---- recurrent layers and cells -------------------------------------------------------------------
def _sig(v):
    return 1 / (1 + np.exp(-v))


def gru_ref(x, h, w_ih, w_hh, b_ih, b_hh):
    """PyTorch/MindSpore GRU step in float64: gates reset, update, new."""
    i_r, i_z, i_n = np.split(x @ w_ih.T + b_ih, 3, 1)
    h_r, h_z, h_n = np.split(h @ w_hh.T + b_hh, 3, 1)
    r, z = _sig(i_r + h_r), _sig(i_z + h_z)
    n = np.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


def _params(cell, names):
    return [getattr(cell, n).asnumpy().astype(np.float64) for n in names]


def test_rnn_cells_match_numpy_steps():
    x, h, c = rand(3, 4), rand(3, 5), rand(3, 5)
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    gru = nn.GRUCell(4, 5)
    close(gru(Tensor(x), Tensor(h)), gru_ref(x, h, *_params(gru, names)), rtol=1e-5, atol=1e-5)
    rnn = nn.RNNCell(4, 5, nonlinearity="relu")
    w_ih, w_hh, b_ih, b_hh = _params(rnn, names)
    close(rnn(Tensor(x), Tensor(h)), np.maximum(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 0), rtol=1e-5, atol=1e-5)
    lstm = nn.LSTMCell(4, 5)
    w_ih, w_hh, b_ih, b_hh = _params(lstm, names)
    i, f, g, o = np.split(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, 1)
    c2 = _sig(f) * c + _sig(i) * np.tanh(g)
    h2, c2_got = lstm(Tensor(x), (Tensor(h), Tensor(c)))
    close(c2_got, c2, rtol=1e-5, atol=1e-5)
    close(h2, _sig(o) * np.tanh(c2), rtol=1e-5, atol=1e-5)


def test_gru_and_rnn_layers_unroll_their_cells():
    x = rand(4, 2, 3)                                     # (seq, batch, input)
    gru = nn.GRU(3, 5, bidirectional=True)
    out, h_n = gru(Tensor(x))
    assert out.shape == (4, 2, 10) and h_n.shape == (2, 2, 5)
    for direction, suffix in enumerate(("", "_reverse")):
        w = [getattr(gru, f"{k}_list")[direction].asnumpy().astype(np.float64) for k in ("w_ih", "w_hh", "b_ih",
                                                                                        "b_hh")]
        h = np.zeros((2, 5))
        steps = range(4) if not direction else reversed(range(4))
        for t in steps:
            h = gru_ref(x[t].astype(np.float64), h, *w)
            close(out[t, :, direction * 5:(direction + 1) * 5], h, rtol=1e-4, atol=1e-5)
        close(h_n[direction], h, rtol=1e-4, atol=1e-5)
    rnn = nn.RNN(3, 5, batch_first=True)
    h0 = rand(1, 4, 5)
    out, h_n = rnn(Tensor(x), Tensor(h0))                 # batch first: (batch=4, seq=2, input)
    w_ih, w_hh, b_ih, b_hh = (getattr(rnn, f"{k}_list")[0].asnumpy().astype(np.float64)
                              for k in ("w_ih", "w_hh", "b_ih", "b_hh"))
    h = h0[0].astype(np.float64)
    for t in range(2):
        h = np.tanh(x[:, t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh)
        close(out[:, t], h, rtol=1e-4, atol=1e-5)
    close(h_n[0], h, rtol=1e-4, atol=1e-5)
    with pytest.raises(InvalidParamError, match="hx must be a Tensor"):
        rnn(Tensor(x), (Tensor(h0), Tensor(h0)))
