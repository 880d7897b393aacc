"""``mindspore.mint`` breadth (frontend/mint/_bodies.py, mint/nn/layer/, mint/nn/__init__.py): mint's
PyTorch-style functions and Cells compute what numpy computes, differentiate as central differences
of the numpy formula say, keep MindSpore's parameter names and shapes, and work in GRAPH_MODE.

Oracles: numpy formulas in float64 (rounded to float32), central finite differences of them
(tests/gradcheck.numeric_grads), hand-computed values, and the signature table."""
from __future__ import annotations

import inspect
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, mint, nn
from ascendemu.frontend.api_coverage import table_entry, rows_signature

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gradcheck import numeric_grads  # noqa: E402

F = mint.nn.functional


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


RNG = np.random.default_rng(7)
A = RNG.uniform(-2, 2, (2, 3)).astype(np.float32)
X4 = RNG.uniform(-1, 1, (2, 3, 4, 4)).astype(np.float32)


def _erf(x):
    return np.vectorize(math.erf)(x)


def _bn_ref(x, w, b, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


def _conv_transpose2d_ref(x, w, stride, padding, output_padding):
    """Scatter form: every input pixel adds its weight patch at stride steps, then the padding is cut."""
    n, cin, h, wd = x.shape
    _, cout, kh, kw = w.shape
    full = np.zeros((n, cout, (h - 1) * stride + kh + output_padding, (wd - 1) * stride + kw + output_padding))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum(
                "nc,cokl->nokl", x[:, :, i, j], w)
    oh = (h - 1) * stride - 2 * padding + kh + output_padding
    ow = (wd - 1) * stride - 2 * padding + kw + output_padding
    return full[:, :, padding:padding + oh, padding:padding + ow]


@pytest.mark.parametrize("call, expected", [
    (lambda: mint.reshape(Tensor(A), (3, 2)), A.reshape(3, 2)),
    (lambda: mint.flatten(Tensor(X4)), X4.reshape(-1)),
    (lambda: mint.flatten(Tensor(X4), 1, 2), X4.reshape(2, 12, 4)),
    (lambda: mint.squeeze(Tensor(A), 0), A),                                       # size 2: kept (PyTorch)
    (lambda: mint.squeeze(Tensor(A.reshape(1, 2, 1, 3)), (0, 2)), A),
    (lambda: mint.t(Tensor(A)), A.T),
    (lambda: mint.addcdiv(Tensor(A), Tensor(A), Tensor(A * A + 1), value=2), A + 2 * A / (A * A + 1)),
    (lambda: mint.empty(2, 3), np.zeros((2, 3))),
    (lambda: mint.empty_like(Tensor(A)), np.zeros((2, 3))),
    (lambda: mint.einsum("ij,ij->i", Tensor(A), Tensor(A)), (A * A).sum(1)),
    (lambda: mint.einsum("ij->ji", [Tensor(A)]), A.T),
    (lambda: mint.meshgrid(Tensor(A[0]), Tensor(A[1, :2]))[0], np.meshgrid(A[0], A[1, :2], indexing="ij")[0]),
    (lambda: mint.clone(Tensor(A)), A),
    (lambda: mint.vdot(Tensor(A[0]), Tensor(A[1])), A[0] @ A[1]),
    (lambda: mint.npu_gelu(Tensor(A)), A * 0.5 * (1 + _erf(A / np.sqrt(2)))),
    (lambda: F.gelu(Tensor(A)), A * 0.5 * (1 + _erf(A / np.sqrt(2)))),
    (lambda: F.normalize(Tensor(A)), A / np.linalg.norm(A, axis=1, keepdims=True)),
    (lambda: F.normalize(Tensor(A), p=1.0, dim=0), A / np.abs(A).sum(0, keepdims=True)),
    (lambda: F.linear(Tensor(A), Tensor(A[:, :3]), Tensor(A[0, :2])), A @ A[:, :3].T + A[0, :2]),
    (lambda: F.pad(Tensor(A), (1, 2), mode="replicate"), np.pad(A, ((0, 0), (1, 2)), mode="edge")),
    (lambda: F.pad(Tensor(A), (1, 1, 1, 0), mode="circular"), np.pad(A, ((1, 0), (1, 1)), mode="wrap")),
    (lambda: F.batch_norm(Tensor(X4), Tensor(np.zeros(3, np.float32)), Tensor(np.ones(3, np.float32)),
                          Tensor(np.full(3, 2, np.float32)), Tensor(np.ones(3, np.float32)), training=True),
     _bn_ref(X4.astype(np.float64), np.full(3, 2.0), np.ones(3))),
    (lambda: F.conv_transpose2d(Tensor(X4[:, :, :3, :3]), Tensor(X4[0, :, :2, :].reshape(3, 2, 2, 2)), stride=2,
                                padding=1, output_padding=1),
     _conv_transpose2d_ref(X4[:, :, :3, :3].astype(np.float64), X4[0, :, :2, :].reshape(3, 2, 2, 2), 2, 1, 1)),
])
def test_mint_functions_compute_what_numpy_computes(call, expected):
    np.testing.assert_allclose(call().asnumpy(), np.asarray(expected, np.float32), rtol=1e-5, atol=1e-5)


def test_integer_and_bool_results():
    idx = Tensor(np.array([0, 2, 1], np.int64))
    one_hot = F.one_hot(idx)
    assert one_hot.dtype == ms.int64
    np.testing.assert_array_equal(one_hot.asnumpy(), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(idx, 5).shape == (3, 5)
    np.testing.assert_array_equal(mint.bitwise_not(Tensor(np.array([0, 5, -3], np.int32))).asnumpy(), [-1, -6, 2])
    np.testing.assert_array_equal(mint.bitwise_not(Tensor(np.array([True, False]))).asnumpy(), [False, True])
    assert mint.allclose(Tensor(A), Tensor(A + 1e-9)) is True
    assert mint.allclose(Tensor(A), Tensor(A + 1)) is False
    assert mint.empty((2, 3), dtype=ms.int32).dtype == ms.int32


def test_embedding_rows_and_padding_idx_gradient():
    weight = np.arange(8, dtype=np.float32).reshape(4, 2)
    idx = Tensor(np.array([[0, 2], [2, 3]], np.int32))
    np.testing.assert_array_equal(F.embedding(idx, Tensor(weight), padding_idx=2).asnumpy(), weight[[[0, 2], [2, 3]]])
    g = ms.grad(lambda w: F.embedding(idx, w, padding_idx=2).sum())(Tensor(weight)).asnumpy()
    np.testing.assert_array_equal(g, [[1, 1], [0, 0], [0, 0], [1, 1]])       # row 2 (padding) gets none
    with pytest.raises(InvalidParamError, match="max_norm"):
        F.embedding(idx, Tensor(weight), max_norm=1.0)


def test_batch_norm_updates_running_statistics_pytorch_style():
    x = (np.arange(12, dtype=np.float32).reshape(4, 3) ** 1.5)
    mean, var = Tensor(np.zeros(3, np.float32)), Tensor(np.ones(3, np.float32))
    F.batch_norm(Tensor(x), mean, var, training=True, momentum=0.1)
    np.testing.assert_allclose(mean.asnumpy(), 0.1 * x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(var.asnumpy(), 0.9 + 0.1 * x.var(0, ddof=1), rtol=1e-5)
    out = F.batch_norm(Tensor(x), mean, var).asnumpy()                         # eval: the running ones
    np.testing.assert_allclose(out, (x - mean.asnumpy()) / np.sqrt(var.asnumpy() + 1e-5), rtol=1e-5)


def test_inplace_functions_make_the_input_hold_the_result():
    for fn, ref in ((F.relu_, lambda a: np.maximum(a, 0)), (F.sigmoid_, lambda a: 1 / (1 + np.exp(-a))),
                    (lambda t: F.hardtanh_(t, -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
                    (lambda t: F.threshold_(t, 0.1, 9.0), lambda a: np.where(a > 0.1, a, 9.0)),
                    (lambda t: F.silu(t, inplace=True), lambda a: a / (1 + np.exp(-a)))):
        t = Tensor(A.copy())
        out = fn(t)
        np.testing.assert_allclose(t.asnumpy(), ref(A.astype(np.float64)), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out.asnumpy(), t.asnumpy())


@pytest.mark.parametrize("fn, ref, arrays", [
    (lambda x: F.gelu(x), lambda x: x * 0.5 * (1 + _erf(x / np.sqrt(2))), [A]),
    (lambda x: F.normalize(x), lambda x: x / np.linalg.norm(x, axis=1, keepdims=True), [A]),
    (lambda x: F.pad(x, (2, 1), mode="replicate"), lambda x: np.pad(x, ((0, 0), (2, 1)), mode="edge"), [A]),
    (lambda x, w: F.linear(x, w), lambda x, w: x @ w.T, [A, A[:, :3] * 2]),
    (lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1),
     lambda x, w: _conv_transpose2d_ref(x, w, 2, 1, 0), [X4[:1, :2, :2, :2], X4[0, :2, :3, :3].reshape(2, 1, 3, 3)]),
])
def test_gradients_match_finite_differences(fn, ref, arrays):
    got = ms.grad(lambda *t: fn(*t).sum(), grad_position=tuple(range(len(arrays))))(*map(Tensor, arrays))
    got = got if isinstance(got, tuple) else (got,)
    cot = np.ones_like(ref(*[a.astype(np.float64) for a in arrays]))
    for g, w in zip(got, numeric_grads(ref, arrays, cot, eps=1e-5)):
        np.testing.assert_allclose(g.asnumpy(), w, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("cell, x, expected", [
    (lambda: mint.nn.SiLU(), A, A / (1 + np.exp(-A))),
    (lambda: mint.nn.Sigmoid(), A, 1 / (1 + np.exp(-A))),
    (lambda: mint.nn.LogSigmoid(), A, -np.log1p(np.exp(-A))),
    (lambda: mint.nn.ELU(0.5), A, np.where(A > 0, A, 0.5 * np.expm1(A))),
    (lambda: mint.nn.Tanh(), A, np.tanh(A)),
    (lambda: mint.nn.Threshold(0.2, -3.0), A, np.where(A > 0.2, A, -3.0)),
    (lambda: mint.nn.GELU(), A, A * 0.5 * (1 + _erf(A / np.sqrt(2)))),
    (lambda: mint.nn.Hardtanh(-0.5, 1.0), A, np.clip(A, -0.5, 1.0)),
    (lambda: mint.nn.ReLU6(), A * 4, np.clip(A * 4, 0, 6)),
    (lambda: mint.nn.Mish(), A, A * np.tanh(np.log1p(np.exp(A)))),
    (lambda: mint.nn.SELU(), A, 1.0507009873554805 * np.where(A > 0, A, 1.6732632423543772 * np.expm1(A))),
    (lambda: mint.nn.Flatten(), X4, X4.reshape(2, -1)),
    (lambda: mint.nn.ZeroPad2d((1, 0, 2, 1)), X4, np.pad(X4, ((0, 0), (0, 0), (2, 1), (1, 0)))),
    (lambda: mint.nn.ConstantPad1d(2, 1.5), A, np.pad(A, ((0, 0), (2, 2)), constant_values=1.5)),
    (lambda: mint.nn.ReflectionPad2d(1), X4, np.pad(X4, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect")),
    (lambda: mint.nn.ReplicationPad1d((0, 2)), A, np.pad(A, ((0, 0), (0, 2)), mode="edge")),
    (lambda: mint.nn.ReplicationPad3d(1), X4, np.pad(X4, ((0, 0), (1, 1), (1, 1), (1, 1)), mode="edge")),
    (lambda: mint.nn.AdaptiveAvgPool2d((2, 2)), X4, X4.reshape(2, 3, 2, 2, 2, 2).mean((3, 5))),
    (lambda: mint.nn.AdaptiveAvgPool1d(2), X4[0], X4[0].reshape(3, 4, 2, 2).mean(3)),
    (lambda: mint.nn.PixelShuffle(2), X4[:, :1].reshape(2, 4, 2, 2),
     X4[:, :1].reshape(2, 1, 2, 2, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(2, 1, 4, 4)),
    (lambda: mint.nn.UpsamplingNearest2d(scale_factor=2.0), X4, X4.repeat(2, 2).repeat(2, 3)),
    (lambda: mint.nn.GroupNorm(1, 3), X4, _bn_ref(X4.reshape(1, 2, -1).astype(np.float64), np.ones(2),
                                                     np.zeros(2)).reshape(X4.shape)),
])
def test_mint_cells_compute_what_numpy_computes(cell, x, expected):
    np.testing.assert_allclose(cell()(Tensor(x)).asnumpy(), np.asarray(expected, np.float32), rtol=1e-5, atol=2e-5)


T, Y = RNG.uniform(0.1, 0.9, (2, 3)).astype(np.float32), RNG.uniform(0.1, 0.9, (2, 3)).astype(np.float32)


@pytest.mark.parametrize("cell, expected", [
    (lambda: mint.nn.MSELoss(), ((A - T) ** 2).mean()),
    (lambda: mint.nn.MSELoss("sum"), ((A - T) ** 2).sum()),
    (lambda: mint.nn.L1Loss(), np.abs(A - T).mean()),
    (lambda: mint.nn.SmoothL1Loss(beta=0.5), np.where(np.abs(A - T) < 0.5, 0.5 * (A - T) ** 2 / 0.5,
                                                      np.abs(A - T) - 0.25).mean()),
    (lambda: mint.nn.BCEWithLogitsLoss(), (np.logaddexp(0, A) - T * A).mean()),
    (lambda: mint.nn.KLDivLoss(reduction="sum"), (T * (np.log(T) - A)).sum()),
    (lambda: mint.nn.SoftMarginLoss(), np.log1p(np.exp(-T * A)).mean()),
])
def test_mint_losses(cell, expected):
    np.testing.assert_allclose(cell()(Tensor(A), Tensor(T)).asnumpy(), expected, rtol=1e-5)


def test_bce_loss_and_cosine_embedding_loss():
    np.testing.assert_allclose(mint.nn.BCELoss()(Tensor(Y), Tensor(T)).asnumpy(),
                               -(T * np.log(Y) + (1 - T) * np.log(1 - Y)).mean(), rtol=1e-5)
    target = np.array([1, -1], np.float32)
    cos = (A * T).sum(1) / np.linalg.norm(A, axis=1) / np.linalg.norm(T, axis=1)
    want = np.where(target > 0, 1 - cos, np.maximum(cos - 0.1, 0)).mean()
    got = mint.nn.CosineEmbeddingLoss(0.1)(Tensor(A), Tensor(T), Tensor(target)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_conv_cells_have_pytorch_parameters_and_compute_the_convolution():
    ms.set_seed(1)
    conv = mint.nn.Conv2d(3, 4, 3, padding=1, bias=True)
    assert [p.name for p in conv.get_parameters()] == ["weight", "bias"]
    assert conv.weight.shape == (4, 3, 3, 3) and conv.bias.shape == (4,)
    w, b = conv.weight.asnumpy(), conv.bias.asnumpy()
    assert np.abs(w).max() <= 1 / math.sqrt(27) + 1e-7 and np.abs(b).max() <= 1 / math.sqrt(27) + 1e-7
    xp = np.pad(X4, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((2, 4, 4, 4))
    for i in range(4):
        for j in range(4):
            want[:, :, i, j] = np.einsum("nckl,ockl->no", xp[:, :, i:i + 3, j:j + 3], w)
    np.testing.assert_allclose(conv(Tensor(X4)).asnumpy(), want + b.reshape(1, 4, 1, 1), rtol=1e-4, atol=1e-5)
    reflect = mint.nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect", bias=False)
    xr = np.pad(X4, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect")
    want = np.einsum("nckl,ockl->no", xr[:, :, :3, :3], reflect.weight.asnumpy())
    np.testing.assert_allclose(reflect(Tensor(X4)).asnumpy()[:, :, 0, 0], want, rtol=1e-4, atol=1e-5)
    assert mint.nn.Conv1d(3, 2, 2)(Tensor(X4[:, :, 0])).shape == (2, 2, 3)
    assert mint.nn.Conv3d(3, 2, 2, bias=False)(Tensor(X4[:, :, None].repeat(2, 2))).shape == (2, 2, 1, 3, 3)
    deconv = mint.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    assert deconv.weight.shape == (3, 2, 3, 3)
    assert deconv(Tensor(X4)).shape == (2, 2, 7, 7)
    assert deconv(Tensor(X4), output_size=(8, 8)).shape == (2, 2, 8, 8)
    with pytest.raises(ValueError, match="divisible by groups"):
        mint.nn.Conv2d(3, 4, 3, groups=2)


def test_batch_norm_cells_train_and_eval():
    bn = mint.nn.BatchNorm2d(3)
    assert [p.name for p in bn.get_parameters()] == ["weight", "bias", "running_mean", "running_var",
                                                      "num_batches_tracked"]
    bn.set_train()
    out = bn(Tensor(X4)).asnumpy()
    np.testing.assert_allclose(out, _bn_ref(X4.astype(np.float64), np.ones(3), np.zeros(3)), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.running_mean.asnumpy(), 0.1 * X4.mean((0, 2, 3)), rtol=1e-5, atol=1e-7)
    assert int(bn.num_batches_tracked.asnumpy()) == 1
    bn.set_train(False)
    mean, var = bn.running_mean.asnumpy(), bn.running_var.asnumpy()
    np.testing.assert_allclose(bn(Tensor(X4)).asnumpy(),
                               (X4 - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5), rtol=1e-5)
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        mint.nn.BatchNorm1d(3)(Tensor(X4))
    assert mint.nn.BatchNorm3d(3)(Tensor(X4[:, :, None])).shape == (2, 3, 1, 4, 4)


def test_cells_are_nns_classes_where_mindspore_says_so_and_keep_the_table_signatures():
    assert mint.nn.Linear is nn.Linear and mint.nn.Hardshrink is nn.HShrink and mint.nn.PReLU is nn.PReLUExt
    for name in ("SiLU", "Conv2d", "ConvTranspose2d", "BatchNorm2d", "GroupNorm", "ZeroPad2d", "ReflectionPad3d",
                 "AdaptiveMaxPool1d", "MaxUnpool2d", "BCEWithLogitsLoss", "GELU", "UpsamplingBilinear2d"):
        want = rows_signature(table_entry(f"mindspore.mint.nn.{name}")["init"])
        got = inspect.signature(getattr(mint.nn, name).__init__)
        assert [(p.name, p.default) for p in list(got.parameters.values())[1:]] == \
            [(p.name, p.default) for p in want.parameters.values()], name


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="length of parameter 'padding'"):
        mint.nn.ReflectionPad2d((1, 2))
    with pytest.raises(ValueError, match="positive int"):
        mint.nn.ReplicationPad1d(0)
    with pytest.raises(InvalidParamError, match="approximate"):
        F.gelu(Tensor(A), approximate="erf")
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'shape'"):
        mint.reshape(Tensor(A))
    with pytest.raises(InvalidParamError, match="device"):
        mint.empty(2, device="CPU")


def test_mint_cells_in_graph_mode():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pad = mint.nn.ReplicationPad2d(1)
            self.act = mint.nn.GELU()
            self.flat = mint.nn.Flatten()

        def construct(self, x):
            return self.flat(self.act(F.normalize(self.pad(x))))

    want = np.pad(X4, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="edge").astype(np.float64)
    want = want / np.linalg.norm(want, axis=1, keepdims=True)
    want = (want * 0.5 * (1 + _erf(want / np.sqrt(2)))).reshape(2, -1)
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(Net()(Tensor(X4)).asnumpy(), want, rtol=1e-5, atol=1e-6)
