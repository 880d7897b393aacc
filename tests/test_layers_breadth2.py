"""The nn layers of issue 21 (breadth), round 2: image metrics (SSIM, MSSSIM, PSNR, ImageGradients),
Conv3dTranspose, Unfold, MultiheadAttention and the Transformer cells, 3-D and adaptive max pooling, LRN,
the math and matrix cells, CellDict and TimeDistributed.

Oracles: numpy formulas in float64 written from the definitions (a scatter loop for the transposed
convolution, window loops for pooling and SSIM, plain attention math), central finite differences for
the gradients, and numbers recorded from real MindSpore 2.10 CPU (tests/fixtures/layer_params.json,
written by tools/record_layer_params.py: parameter names, shapes and order, and Conv3dTranspose outputs)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops

from gradcheck import numeric_grads

FIXTURE = Path(__file__).parent / "fixtures" / "layer_params.json"
RECORDED = json.loads(FIXTURE.read_text())
RNG = np.random.default_rng(2110)


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def close(got: Tensor, want: np.ndarray, rtol: float = 2e-5, atol: float = 2e-5) -> None:
    np.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=atol)


def grads_of(fn, arrays, cotangent):
    """ms.grad of sum(fn(*inputs) * cotangent) for every input."""
    ct = Tensor(cotangent)
    positions = tuple(range(len(arrays)))
    grads = ms.grad(lambda *xs: (fn(*xs) * ct).sum(), grad_position=positions)(*map(Tensor, arrays))
    return [g.asnumpy() for g in (grads if isinstance(grads, tuple) else (grads,))]


# ---- parameter names and Conv3dTranspose numbers against real MindSpore ----------------------------
class _Holder(nn.Cell):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer


ROUND2 = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "Transformer", "SSIM", "MSSSIM",
          "Conv3dTranspose", "PReLUExt", "LayerNormExt", "BiDense"]


@pytest.mark.parametrize("name", ROUND2)
def test_parameter_names_shapes_and_order_are_mindsporess(name):
    args, kwargs = RECORDED["args"][name]
    holder = _Holder(getattr(nn, name)(*args, **kwargs))
    got = [[p.name, list(p.shape), bool(p.requires_grad)] for _, p in holder.parameters_and_names()]
    want = [["layer." + path, shape, grad] for path, _, shape, grad in RECORDED["parameters"][name]]
    assert got == want


def _conv3d_transpose_inputs():
    sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))
    try:
        from record_layer_params import CONV3D_TRANSPOSE, conv3d_transpose_inputs
    finally:
        sys.path.pop(0)
    return CONV3D_TRANSPOSE, conv3d_transpose_inputs()


@pytest.mark.parametrize("key", sorted(RECORDED["conv3d_transpose"]))
def test_conv3d_transpose_matches_recorded_mindspore(key):
    configs, (x, w) = _conv3d_transpose_inputs()
    kwargs = configs[key]
    cell = nn.Conv3dTranspose(2, 2 * kwargs.get("group", 1), (2, 3, 2), weight_init=Tensor(w), **kwargs)
    close(cell(Tensor(x)), np.array(RECORDED["conv3d_transpose"][key]), rtol=1e-5, atol=1e-5)


def conv3d_transpose_ref(x, w, stride, dilation, pads, group=1):
    """Scatter each input element times the kernel into the full output, then crop (head, tail) pads."""
    n, c, *size = x.shape
    ci, og, *kernel = w.shape
    full = [(s - 1) * st + (k - 1) * d + 1 for s, st, k, d in zip(size, stride, kernel, dilation)]
    out = np.zeros((n, og * group, *full))
    cg = c // group
    for g in range(group):
        for i in np.ndindex(*size):
            for a in np.ndindex(*kernel):
                pos = tuple(ii * st + aa * d for ii, st, aa, d in zip(i, stride, a, dilation))
                contrib = np.einsum("nc,co->no", x[(slice(None), slice(g * cg, (g + 1) * cg)) + i],
                                    w[(slice(g * cg, (g + 1) * cg), slice(None)) + a])
                out[(slice(None), slice(g * og, (g + 1) * og)) + pos] += contrib
    return out[:, :, pads[0]:full[0] - pads[1], pads[2]:full[1] - pads[3], pads[4]:full[2] - pads[5]]


def test_conv3d_transpose_functional_matches_scatter_and_checks():
    x, w = rand(2, 4, 2, 3, 2), rand(4, 1, 2, 2, 3)
    got = ops.conv3d_transpose(Tensor(x), Tensor(w), pad_mode="pad", padding=(1, 0, 0, 1, 1, 1), stride=(1, 2, 2),
                               group=2)
    close(got, conv3d_transpose_ref(x, w, (1, 2, 2), (1, 1, 1), (1, 0, 0, 1, 1, 1), group=2), 1e-4, 1e-4)
    with pytest.raises(InvalidParamError, match="depth of dilation"):
        nn.Conv3dTranspose(2, 2, 2, dilation=(2, 1, 1))(Tensor(rand(1, 2, 2, 2, 2)))
    with pytest.raises(InvalidParamError, match="padding"):
        nn.Conv3dTranspose(2, 2, 2, pad_mode="same", padding=1)


# ---- image metrics -----------------------------------------------------------------------------------
def _blur(img, window):
    """Valid 2-D correlation of (N, C, H, W) with a (k, k) window."""
    k = window.shape[0]
    n, c, h, w = img.shape
    out = np.zeros((n, c, h - k + 1, w - k + 1))
    for a in range(k):
        for b in range(k):
            out += window[a, b] * img[:, :, a:a + h - k + 1, b:b + w - k + 1]
    return out


def _window(size, sigma):
    offsets = np.arange(-size // 2 + 1, size // 2 + 1)       # MindSpore's offsets (an even size leans left)
    g = np.exp(-(offsets[:, None] ** 2 + offsets[None, :] ** 2) / (2 * sigma ** 2))
    return g / g.sum()


def ssim_maps(x, y, max_val, size, sigma, k1=0.01, k2=0.03):
    win = _window(size, sigma)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mx, my = _blur(x, win), _blur(y, win)
    vx, vy, cxy = _blur(x * x, win) - mx * mx, _blur(y * y, win) - my * my, _blur(x * y, win) - mx * my
    cs = (2 * cxy + c2) / (vx + vy + c2)
    ssim = (2 * mx * my + c1) / (mx * mx + my * my + c1) * cs
    return ssim.mean((2, 3)), cs.mean((2, 3))


def test_ssim_msssim_psnr_match_numpy():
    x = RNG.random((2, 3, 12, 12)).astype(np.float32)
    y = np.clip(x + 0.1 * rand(2, 3, 12, 12), 0, 1).astype(np.float32)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    close(nn.SSIM(filter_size=5)(Tensor(x), Tensor(y)), ssim_maps(x64, y64, 1.0, 5, 1.5)[0].mean(-1), 1e-4, 1e-5)
    close(nn.SSIM(max_val=2, filter_size=4, filter_sigma=1.0)(Tensor(x), Tensor(y)),
          ssim_maps(x64, y64, 2.0, 4, 1.0)[0].mean(-1), 1e-4, 1e-5)
    # MSSSIM with two scales: cs at full size, ssim after one 2x2 average pool
    pooled = [a.reshape(2, 3, 6, 2, 6, 2).mean((3, 5)) for a in (x64, y64)]
    cs0 = np.maximum(ssim_maps(x64, y64, 1.0, 3, 1.5)[1], 0)
    ssim1 = np.maximum(ssim_maps(*pooled, 1.0, 3, 1.5)[0], 0)
    want = (cs0 ** 0.4 * ssim1 ** 0.6).mean(-1)
    close(nn.MSSSIM(power_factors=(0.4, 0.6), filter_size=3)(Tensor(x), Tensor(y)), want, 1e-4, 1e-5)
    mse = ((x64 - y64) ** 2).mean((1, 2, 3))
    close(nn.PSNR(2.0)(Tensor(x), Tensor(y)), 10 * np.log10(4.0 / mse), 1e-5, 1e-4)
    with pytest.raises(InvalidParamError, match="filter_size"):
        nn.SSIM(filter_size=13)(Tensor(x), Tensor(y))
    with pytest.raises(InvalidParamError, match="max_val"):
        nn.PSNR(0)


def test_image_gradients():
    x = rand(2, 3, 4, 5)
    dy, dx = nn.ImageGradients()(Tensor(x))
    want_dy = np.concatenate([x[:, :, 1:] - x[:, :, :-1], np.zeros((2, 3, 1, 5))], 2)
    want_dx = np.concatenate([x[..., 1:] - x[..., :-1], np.zeros((2, 3, 4, 1))], 3)
    close(dy, want_dy)
    close(dx, want_dx)


# ---- attention and transformers -------------------------------------------------------------------
def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mha_ref(cell, q, k, v, attn_mask=None, key_padding_mask=None):
    """Sequence-first (L, N, E) multi-head attention from the cell's parameters, in float64."""
    e, h = cell.embed_dim, cell.num_heads
    w = cell.in_proj_weight.asnumpy().astype(np.float64)
    b = cell.in_proj_bias.asnumpy().astype(np.float64)
    qp, kp, vp = q @ w[:e].T + b[:e], k @ w[e:2 * e].T + b[e:2 * e], v @ w[2 * e:].T + b[2 * e:]
    ll, n, _ = q.shape
    s = k.shape[0]
    d = e // h
    split = lambda t: t.reshape(t.shape[0], n, h, d).transpose(1, 2, 0, 3)  # noqa: E731
    scores = split(qp) @ split(kp).transpose(0, 1, 3, 2) / np.sqrt(d)
    if attn_mask is not None:
        scores = scores + np.where(attn_mask, -np.inf, 0.0)
    if key_padding_mask is not None:
        scores = scores + np.where(key_padding_mask, -np.inf, 0.0)[:, None, None, :]
    weights = _softmax(scores)
    out = (weights @ split(vp)).transpose(2, 0, 1, 3).reshape(ll, n, e)
    out = out @ cell.out_proj.weight.asnumpy().T + cell.out_proj.bias.asnumpy()
    return out, weights.mean(1)


def test_multihead_attention_matches_numpy_with_masks():
    cell = nn.MultiheadAttention(8, 2)
    cell.out_proj.bias.set_data(Tensor(rand(8)))
    cell.in_proj_bias.set_data(Tensor(rand(24)))
    q, k = rand(3, 2, 8), rand(4, 2, 8)
    mask = np.array([[False, True, False, False]] * 3)
    pad = np.array([[False, False, False, True], [False, False, False, False]])
    out, weights = cell(Tensor(q), Tensor(k), Tensor(k), key_padding_mask=Tensor(pad), attn_mask=Tensor(mask))
    want_out, want_w = mha_ref(cell, q.astype(np.float64), k.astype(np.float64), k.astype(np.float64), mask, pad)
    close(out, want_out, 1e-4, 1e-5)
    close(weights, want_w, 1e-4, 1e-5)
    # batch_first and unbatched inputs: the same numbers, transposed / squeezed
    first = nn.MultiheadAttention(8, 2, batch_first=True)
    for name in ("in_proj_weight", "in_proj_bias"):
        getattr(first, name).set_data(Tensor(getattr(cell, name).asnumpy()))
    first.out_proj.weight.set_data(Tensor(cell.out_proj.weight.asnumpy()))
    first.out_proj.bias.set_data(Tensor(cell.out_proj.bias.asnumpy()))
    (got,) = first(Tensor(q.transpose(1, 0, 2)), Tensor(k.transpose(1, 0, 2)), Tensor(k.transpose(1, 0, 2)),
                   need_weights=False)
    close(got, mha_ref(cell, q, k, k)[0].transpose(1, 0, 2), 1e-4, 1e-5)
    single, _ = cell(Tensor(q[:, 0]), Tensor(k[:, 0]), Tensor(k[:, 0]))
    close(single, mha_ref(cell, q[:, :1], k[:, :1], k[:, :1])[0][:, 0], 1e-4, 1e-5)
    with pytest.raises(InvalidParamError, match="add_bias_kv"):
        nn.MultiheadAttention(8, 2, add_bias_kv=True)
    with pytest.raises(InvalidParamError, match="divisible"):
        nn.MultiheadAttention(8, 3)


def _layer_norm(x, eps=1e-5):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)


def _dense(cell, x):
    return x @ cell.weight.asnumpy().T + cell.bias.asnumpy()


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_matches_numpy(norm_first):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first)
    layer.set_train(False)
    src = rand(3, 2, 8).astype(np.float64)
    attn = lambda t: mha_ref(layer.self_attn, t, t, t)[0]  # noqa: E731
    ff = lambda t: _dense(layer.dense2, np.maximum(_dense(layer.dense1, t), 0))  # noqa: E731
    if norm_first:
        x = src + attn(_layer_norm(src))
        want = x + ff(_layer_norm(x))
    else:
        x = _layer_norm(src + attn(src))
        want = _layer_norm(x + ff(x))
    close(layer(Tensor(src.astype(np.float32))), want, 1e-4, 1e-4)


def test_transformer_stacks_copies_and_decodes():
    model = nn.Transformer(8, 2, 2, 1, 16, dropout=0.0)
    model.set_train(False)
    enc = model.encoder.layers
    np.testing.assert_array_equal(enc[0].dense1.weight.asnumpy(), enc[0].dense1.weight.asnumpy())
    src, tgt = rand(4, 2, 8), rand(3, 2, 8)
    memory = _layer_norm(np.asarray(enc[1](enc[0](Tensor(src))).asnumpy(), np.float64))
    dec = model.decoder.layers[0]
    x = tgt.astype(np.float64)
    x = _layer_norm(x + mha_ref(dec.self_attn, x, x, x)[0])
    x = _layer_norm(x + mha_ref(dec.multihead_attn, x, memory, memory)[0])
    x = _layer_norm(x + _dense(dec.dense2, np.maximum(_dense(dec.dense1, x), 0)))
    close(model(Tensor(src), Tensor(tgt)), _layer_norm(x), 1e-4, 1e-4)
    with pytest.raises(InvalidParamError, match="relu/gelu"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_multihead_attention_gradient_matches_finite_differences():
    cell = nn.MultiheadAttention(4, 2)
    q, kv = rand(2, 1, 4), rand(3, 1, 4)
    ct = rand(2, 1, 4)
    got = grads_of(lambda a, b: cell(a, b, b, need_weights=False)[0], [q, kv], ct)
    ref = lambda a, b: mha_ref(cell, a, b, b)[0]  # noqa: E731
    for g, w in zip(got, numeric_grads(ref, [q, kv], ct)):
        np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3)


# ---- Unfold, pooling, LRN -------------------------------------------------------------------------
def unfold_ref(x, k, s, r, same):
    """TensorFlow's extract_image_patches on NCHW: depth ordered (row, col, channel)."""
    n, c, h, w = x.shape
    spans = [(kk - 1) * rr + 1 for kk, rr in zip(k, r)]
    if same:
        outs = [-(-size // ss) for size, ss in zip((h, w), s)]
        tot = [max((o - 1) * ss + sp - size, 0) for o, ss, sp, size in zip(outs, s, spans, (h, w))]
        x = np.pad(x, ((0, 0), (0, 0), (tot[0] // 2, tot[0] - tot[0] // 2), (tot[1] // 2, tot[1] - tot[1] // 2)))
    else:
        outs = [(size - sp) // ss + 1 for size, sp, ss in zip((h, w), spans, s)]
    out = np.zeros((n, k[0] * k[1] * c, *outs))
    for i in range(outs[0]):
        for j in range(outs[1]):
            patch = x[:, :, i * s[0]:i * s[0] + spans[0]:r[0], j * s[1]:j * s[1] + spans[1]:r[1]]
            out[:, :, i, j] = patch.transpose(0, 2, 3, 1).reshape(n, -1)
    return out


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_unfold_matches_extract_image_patches(padding):
    x = rand(2, 3, 7, 6)
    cell = nn.Unfold([1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1], padding)
    close(cell(Tensor(x)), unfold_ref(x, (2, 3), (2, 1), (1, 2), padding == "same"))
    with pytest.raises(InvalidParamError, match="ksizes"):
        nn.Unfold([2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])


def pool3d_ref(x, k, s, pads, fn, fill):
    x = np.pad(x, ((0, 0), (0, 0), pads[0:2], pads[2:4], pads[4:6]), constant_values=fill)
    outs = [(size - kk) // ss + 1 for size, kk, ss in zip(x.shape[2:], k, s)]
    out = np.zeros(x.shape[:2] + tuple(outs))
    for i in np.ndindex(*outs):
        win = x[:, :, i[0] * s[0]:i[0] * s[0] + k[0], i[1] * s[1]:i[1] * s[1] + k[1], i[2] * s[2]:i[2] * s[2] + k[2]]
        out[(slice(None), slice(None)) + i] = fn(win, axis=(2, 3, 4))
    return out


def adaptive_max_ref(x, sizes):
    for k, out in enumerate(sizes):
        axis = x.ndim - len(sizes) + k
        n = x.shape[axis]
        parts = [np.take(x, range(i * n // out, -(-(i + 1) * n // out)), axis).max(axis, keepdims=True)
                 for i in range(out)]
        x = np.concatenate(parts, axis)
    return x


def test_pool3d_and_adaptive_max_pool_match_numpy():
    x = rand(2, 3, 5, 6, 4)
    close(nn.MaxPool3d(2, (1, 2, 2))(Tensor(x)), pool3d_ref(x, (2, 2, 2), (1, 2, 2), (0,) * 6, np.max, 0))
    close(nn.MaxPool3d(3, 2, pad_mode="same")(Tensor(x)),
          pool3d_ref(x, (3, 3, 3), (2, 2, 2), (1, 1, 0, 1, 0, 1), np.max, -np.inf))
    close(nn.AvgPool3d(2, 1, pad_mode="pad", padding=1)(Tensor(x)),
          pool3d_ref(x, (2, 2, 2), (1, 1, 1), (1,) * 6, np.mean, 0))
    close(ops.avg_pool3d(Tensor(x), 2, 2, divisor_override=5),
          pool3d_ref(x, (2,) * 3, (2,) * 3, (0,) * 6, np.sum, 0) / 5)
    close(ops.max_pool3d(Tensor(x[0]), 2, padding=1), pool3d_ref(x[:1], (2,) * 3, (2,) * 3, (1,) * 6, np.max,
                                                              -np.inf)[0])
    close(nn.AdaptiveMaxPool3d((2, None, 3))(Tensor(x)), adaptive_max_ref(x, (2, 6, 3)))
    close(nn.AdaptiveMaxPool2d(4)(Tensor(x[0])), adaptive_max_ref(x[0], (4, 4)))
    close(nn.AdaptiveMaxPool1d(3)(Tensor(x[0, 0])), adaptive_max_ref(x[0, 0], (3,)))
    # return_indices: each window's first maximum as a flat index of its H x W plane (int64, as MindSpore's)
    plane = np.round(rand(2, 3, 5, 4) * 2) / 2          # halves: ties inside the windows
    values, indices = ops.adaptive_max_pool2d(Tensor(plane), (3, 2), return_indices=True)
    want = np.zeros((2, 3, 3, 2), np.int64)
    for i in range(3):
        for j in range(2):
            r0, r1, c0, c1 = i * 5 // 3, -(-(i + 1) * 5 // 3), j * 4 // 2, -(-(j + 1) * 4 // 2)
            local = plane[..., r0:r1, c0:c1].reshape(2, 3, -1).argmax(-1)
            want[..., i, j] = (r0 + local // (c1 - c0)) * 4 + c0 + local % (c1 - c0)
    assert indices.dtype == ms.int64
    np.testing.assert_array_equal(indices.asnumpy(), want)
    close(values, adaptive_max_ref(plane, (3, 2)))


def lrn_ref(x, r, bias, alpha, beta):
    sq = np.pad(x * x, ((0, 0), (r, r), (0, 0), (0, 0)))
    window = sum(sq[:, i:i + x.shape[1]] for i in range(2 * r + 1))
    return x / (bias + alpha * window) ** beta


def test_lrn_matches_numpy_and_its_gradient():
    x = rand(2, 5, 3, 2)
    close(nn.LRN(2, 1.5, 0.3, 0.75)(Tensor(x)), lrn_ref(x.astype(np.float64), 2, 1.5, 0.3, 0.75), 1e-5, 1e-5)
    close(ops.lrn(Tensor(x), 1), lrn_ref(x.astype(np.float64), 1, 1.0, 1.0, 0.5), 1e-5, 1e-5)
    ct = rand(2, 5, 3, 2)
    got = grads_of(lambda a: ops.lrn(a, 1, 1.0, 0.5, 0.75), [x], ct)
    want = numeric_grads(lambda a: lrn_ref(a, 1, 1.0, 0.5, 0.75), [x], ct)
    np.testing.assert_allclose(got[0], want[0], rtol=2e-3, atol=2e-3)


def test_pooling_and_transposed_conv_gradients_match_finite_differences():
    x, w = rand(1, 2, 2, 2, 3), rand(2, 1, 2, 2, 2)
    ct = rand(1, 1, 3, 4, 6)
    got = grads_of(lambda a, b: ops.conv3d_transpose(a, b, stride=(1, 2, 2)), [x, w], ct)
    want = numeric_grads(lambda a, b: conv3d_transpose_ref(a, b, (1, 2, 2), (1, 1, 1), (0,) * 6), [x, w], ct)
    for g, n in zip(got, want):
        np.testing.assert_allclose(g, n, rtol=2e-3, atol=2e-3)
    y = rand(1, 2, 5, 4)
    ct = rand(1, 2, 2, 3)
    got = grads_of(lambda a: ops.adaptive_max_pool2d(a, (2, 3)), [y], ct)
    want = numeric_grads(lambda a: adaptive_max_ref(a, (2, 3)), [y], ct)
    np.testing.assert_allclose(got[0], want[0], rtol=2e-3, atol=2e-3)


# ---- math, matrix and container cells ------------------------------------------------------------
def test_math_and_matrix_cells_match_numpy():
    x = rand(2, 3, 4)
    mean, var = nn.Moments(axis=(0, 2))(Tensor(x))
    close(mean, x.mean((0, 2)))
    close(var, x.var((0, 2)))
    mean, var = nn.Moments(axis=1, keep_dims=True)(Tensor(x))
    close(var, x.var(1, keepdims=True))
    close(nn.ReduceLogSumExp(1, True)(Tensor(x)), np.log(np.exp(x.astype(np.float64)).sum(1, keepdims=True)))
    close(nn.Norm(axis=2)(Tensor(x)), np.sqrt((x.astype(np.float64) ** 2).sum(2)))
    close(nn.Norm()(Tensor(x)), np.sqrt((x.astype(np.float64) ** 2).sum()))
    r = nn.Range(1, 8, 3)()
    assert r.dtype == ms.int32 and r.asnumpy().tolist() == [1, 4, 7]
    close(nn.Range(0.5, 2.0, 0.5)(), np.array([0.5, 1.0, 1.5]))
    with pytest.raises(InvalidParamError, match="delta"):
        nn.Range(0, 3, 0)
    v = rand(2, 3)
    close(nn.MatrixDiag()(Tensor(v)), np.stack([np.diag(row) for row in v]))
    tall = rand(2, 4, 3)
    close(nn.MatrixDiagPart()(Tensor(tall)), np.stack([np.diagonal(m) for m in tall]))
    wide = rand(2, 2, 3)
    want = wide.copy()
    for b in range(2):
        np.fill_diagonal(want[b], v[b, :2])
    close(nn.MatrixSetDiag()(Tensor(wide), Tensor(v[:, :2])), want)


def test_upsample_nearest():
    x = rand(1, 2, 2, 3)
    close(nn.Upsample(size=(4, 6))(Tensor(x)), x.repeat(2, 2).repeat(2, 3))


def test_cell_dict_registers_and_validates():
    cells = nn.CellDict({"dense": nn.Dense(2, 3), "act": nn.ReLU()})
    cells["conv"] = nn.Conv2d(1, 1, 1)
    assert list(cells.keys()) == ["dense", "act", "conv"] and len(cells) == 3 and "act" in cells
    holder = _Holder(cells)
    assert [p.name for _, p in holder.parameters_and_names()] == ["layer.dense.weight", "layer.dense.bias",
                                                                 "layer.conv.weight"]
    assert isinstance(cells.pop("act"), nn.ReLU) and "act" not in cells
    with pytest.raises(TypeError):
        cells["x"] = nn.CellList()
    with pytest.raises(KeyError):
        cells["a.b"] = nn.ReLU()


def test_time_distributed_both_paths():
    dense = nn.Dense(4, 3)
    x = rand(2, 5, 4)
    want = _dense(dense, x.astype(np.float64))
    close(nn.TimeDistributed(dense, time_axis=1)(Tensor(x)), want, 1e-5, 1e-5)
    close(nn.TimeDistributed(dense, time_axis=1, reshape_with_axis=0)(Tensor(x)), want, 1e-5, 1e-5)


def test_ext_cells_layer_norm_and_bidense_match_numpy():
    x = rand(2, 3, 4)
    cell = nn.LayerNormExt((3, 4), eps=1e-3)
    cell.weight.set_data(Tensor(rand(3, 4)))
    cell.bias.set_data(Tensor(rand(3, 4)))
    x64 = x.astype(np.float64)
    mean, var = x64.mean((1, 2), keepdims=True), x64.var((1, 2), keepdims=True)
    want = (x64 - mean) / np.sqrt(var + 1e-3) * cell.weight.asnumpy() + cell.bias.asnumpy()
    close(cell(Tensor(x)), want, 1e-5, 1e-5)
    assert nn.LayerNormExt(4, elementwise_affine=False).weight is None
    close(nn.PReLUExt(3, 0.1)(Tensor(x)), np.where(x > 0, x, 0.1 * x))
    dense = nn.BiDense(3, 4, 5)
    a, b = rand(2, 6, 3), rand(2, 6, 4)
    want = np.einsum("...i,oij,...j->...o", a, dense.weight.asnumpy(), b) + dense.bias.asnumpy()
    close(dense(Tensor(a), Tensor(b)), want, 1e-5, 1e-5)
    with pytest.raises(InvalidParamError, match="leading"):
        dense(Tensor(a), Tensor(b[:1]))
    ct = rand(2, 5)
    got = grads_of(lambda p, q: ops.bidense(p, q, dense.weight), [a[0, :2], b[0, :2]], ct)
    want = numeric_grads(lambda p, q: np.einsum("ni,oij,nj->no", p, dense.weight.asnumpy(), q), [a[0, :2], b[0, :2]],
                         ct)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3)


def test_conv1d_and_avg_pool_functions_match_numpy():
    x, w, b = rand(2, 3, 7), rand(4, 3, 3), rand(4)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 2))).astype(np.float64)
    want = np.stack([np.einsum("ncl,ocl->no", xp[:, :, i:i + 3], w) for i in range(0, 8, 2)], -1) + b[:, None]
    close(ops.conv1d(Tensor(x), Tensor(w), Tensor(b), stride=2, pad_mode="pad", padding=(1, 2)), want, 1e-5, 1e-5)
    y = rand(1, 2, 5, 6)
    yp = np.pad(y, ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    want = np.array([[yp[:, :, i:i + 3, j:j + 3].sum((2, 3)) for j in range(0, 6, 2)] for i in range(0, 5, 2)])
    want = want.transpose(2, 3, 0, 1)
    close(ops.avg_pool2d(Tensor(y), 3, 2, 1), want / 9)
    close(ops.avg_pool2d(Tensor(y), 3, 2, 1, divisor_override=4), want / 4, 1e-5, 1e-5)
    close(ops.avg_pool1d(Tensor(x), 2, 2), x[:, :, :6].reshape(2, 3, 3, 2).mean(-1))
    # count_include_pad=False: each window's sum over the input elements it covers, divided by their count
    counts = np.pad(np.ones_like(y), ((0, 0), (0, 0), (1, 1), (1, 1)))
    sums = np.array([[yp[:, :, i:i + 3, j:j + 3].sum((2, 3)) for j in range(6)] for i in range(5)]).transpose(2, 3, 0, 1)
    n = np.array([[counts[:, :, i:i + 3, j:j + 3].sum((2, 3)) for j in range(6)] for i in range(5)]).transpose(2, 3, 0, 1)
    close(ops.avg_pool2d(Tensor(y), 3, 1, 1, count_include_pad=False), sums / n, 1e-5, 1e-5)
    z = rand(1, 2, 4, 5, 3)
    zp = np.pad(z, ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1))).astype(np.float64)
    ones = np.pad(np.ones_like(z), ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1)))
    want = np.zeros((1, 2, 2, 3, 2))
    for a in range(2):
        for b in range(3):
            for c in range(2):
                win = np.s_[:, :, 2 * a:2 * a + 3, 2 * b:2 * b + 3, 2 * c:2 * c + 3]
                want[:, :, a, b, c] = zp[win].sum((2, 3, 4)) / ones[win].sum((2, 3, 4))
    close(ops.avg_pool3d(Tensor(z), 3, 2, 1, count_include_pad=False), want, 1e-5, 1e-5)


def test_dropout_ext_cells():
    x = np.abs(rand(4, 8, 3, 3)) + 0.1
    for cls in (nn.DropoutExt, nn.Dropout2dExt):
        cell = cls(0.5)
        close(cell(Tensor(x)), x)                                   # eval: identity
        cell.set_train(True)
        out = cell(Tensor(x)).asnumpy()
        assert np.all((out == 0) | np.isclose(out, 2 * x))          # kept values scaled by 1 / (1 - p)
        assert 0 < np.count_nonzero(out) < out.size
    kept = nn.Dropout2dExt(0.5)
    kept.set_train(True)
    out = kept(Tensor(x)).asnumpy()
    assert np.all((out == 0).all((2, 3)) | (out != 0).all((2, 3)))  # whole channels
    with pytest.raises(InvalidParamError, match="inplace"):
        nn.DropoutExt(0.5, inplace=True)


# ---- GRAPH_MODE ----------------------------------------------------------------------------------
class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.up = nn.Conv3dTranspose(2, 2, 2, stride=2)
        self.pool = nn.MaxPool3d(2, 2)
        self.encoder = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
        self.lrn = nn.LRN(1)

    def construct(self, x):
        y = self.pool(self.up(x))                               # (1, 2, 2, 2, 2)
        y = ops.reshape(y, (2, 1, 8))
        y = self.encoder(y)
        return self.lrn(ops.reshape(y, (1, 2, 2, 4)))


def test_graph_mode_matches_pynative():
    net = _Net()
    net.set_train(False)
    x = Tensor(rand(1, 2, 2, 2, 2))
    eager = net(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = net(x).asnumpy()
    assert graph.shape == (1, 2, 2, 4)
    np.testing.assert_allclose(graph, eager, rtol=1e-5, atol=1e-5)
