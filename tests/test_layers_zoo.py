"""Layers the model zoo uses (issue 10): transposed convolution, Conv1d, nearest and bilinear resizing,
mirror padding, Embedding, LSTM and BatchNorm1d, forward and backward.

Oracles written here, independently of the kernels: the transposed convolution as a scatter of every
input pixel through the kernel taps; resizing by the TensorFlow/Ascend coordinate formulas in float32
(and MindSpore's documented examples); mirror padding by np.pad; the LSTM as a float64 numpy loop with
MindSpore's gate order (input, forget, cell, output); BatchNorm by its textbook formula and MindSpore's
moving-statistics rule. Gradients against central finite differences of those references
(tests/gradcheck.py for single ops; a float64 difference quotient per parameter for whole training
steps through nn.TrainOneStepCell with SGD, whose update is p - lr * grad). The new scatter-add
backward kernels (ResizeBilinearGrad, MirrorPadGrad) are checked for block ownership and determinism.
"""
from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_grads_close, autodiff_grads, numeric_grads
from test_ops import kernel, launch, sig

import ascendemu.frontend as ms
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.frontend.backend import set_backend
from ascendemu.frontend.common.api import capture
from ascendemu.graph.executor import DeviceExecutor

RNG = np.random.default_rng(910)


@pytest.fixture(scope="module")
def ex(ascendemu_kernel_cache):
    from ascendemu.hal.runtime import get_runtime
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    executor = DeviceExecutor(cache_root=str(ascendemu_kernel_cache), progress=False)
    previous = set_backend(executor)
    yield executor
    set_backend(previous)
    rt.finalize()


@pytest.fixture
def graph_mode():
    saved = {k: ms.get_context(k) for k in ("mode", "jit_config")}
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(**saved)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def f64(a):
    return np.asarray(a, np.float64)


def fd_step_grads(loss, params: dict[str, np.ndarray], eps: float = 1e-6) -> dict[str, np.ndarray]:
    """Central differences of the float64 scalar ``loss(params)`` with respect to every parameter."""
    p = {k: f64(v).copy() for k, v in params.items()}
    grads = {}
    for name, value in p.items():
        g = np.zeros_like(value)
        flat, gflat = value.reshape(-1), g.reshape(-1)
        for k in range(flat.size):
            old = flat[k]
            flat[k] = old + eps
            plus = loss(p)
            flat[k] = old - eps
            minus = loss(p)
            flat[k] = old
            gflat[k] = (plus - minus) / (2 * eps)
        grads[name] = g
    return grads


def check_sgd_step(net: nn.Cell, loss_ref, inputs: tuple, lr: float, rtol: float = 1e-4) -> None:
    """One TrainOneStepCell(WithLossCell(net, MSELoss()), SGD) step in GRAPH_MODE against the reference:
    its loss, then every trainable parameter at p - lr * d loss_ref / d p (finite differences)."""
    before = {p.name: p.asnumpy() for p in net.trainable_params()}
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), learning_rate=lr))
    loss = step(*[Tensor(a) for a in inputs])
    np.testing.assert_allclose(float(loss.asnumpy()), loss_ref(before), rtol=rtol)
    grads = fd_step_grads(loss_ref, before)
    for p in net.trainable_params():
        want = before[p.name] - lr * grads[p.name]
        moved = np.abs(want - before[p.name]).max()
        assert moved > 0, p.name
        np.testing.assert_allclose(p.asnumpy(), want, rtol=rtol, atol=1e-3 * moved, err_msg=p.name)


# ------------------------------------------------------------------------- transposed convolution

def deconv_ref(dy, w, stride, pads, dilation, group, out_hw):
    """Transposed convolution by scatter: input pixel (i, j) of channel ci adds dy x w[ci, :, r, s] at
    output (i * stride + r * dilation, j * stride + s * dilation) of its group's channels, on a canvas
    that the padding (top, bottom, left, right) is then cropped from."""
    n, cin, h, wd = dy.shape
    _, cog, kh, kw = w.shape
    (sh, sw), (dh, dw), (pt, _, pl, _) = stride, dilation, pads
    oh, ow = out_hw
    cig = cin // group
    canvas = np.zeros((n, cog * group, max((h - 1) * sh + (kh - 1) * dh + 1, pt + oh),
                       max((wd - 1) * sw + (kw - 1) * dw + 1, pl + ow)))
    for ci in range(cin):
        g = ci // cig
        for r in range(kh):
            for s in range(kw):
                canvas[:, g * cog:(g + 1) * cog, r * dh:r * dh + (h - 1) * sh + 1:sh,
                       s * dw:s * dw + (wd - 1) * sw + 1:sw] += f64(dy)[:, ci, None] * f64(w)[ci, :, r, s, None, None]
    return canvas[:, :, pt:pt + oh, pl:pl + ow]


def deconv_length(mode, size, k, s, d, pad_sum):
    """MindSpore's nn.Conv2dTranspose output length (its _deconv_output_length)."""
    span = (k - 1) * d + 1
    return {"same": size * s, "valid": size * s + max(span - s, 0), "pad": size * s - pad_sum + span - s}[mode]


def same_pads(out, size, k, s, d):
    """TensorFlow SAME padding (top, bottom) of the Conv2D from length ``out`` to ``size``."""
    total = max((size - 1) * s + (k - 1) * d + 1 - out, 0)
    return total // 2, total - total // 2


DECONV_CASES = {
    # name: (dy shape, weight shape, pad_mode, pad, stride, dilation, group)
    "same-s2": ((1, 4, 3, 3), (4, 2, 3, 3), "same", (0, 0, 0, 0), (2, 2), (1, 1), 1),
    "valid-s2-d2-g2": ((2, 4, 3, 2), (4, 1, 2, 3), "valid", (0, 0, 0, 0), (2, 1), (2, 2), 2),
    "pad-s2": ((1, 3, 3, 4), (3, 2, 3, 3), "pad", (1, 0, 2, 1), (2, 2), (1, 1), 1),
}


@pytest.mark.parametrize("case", list(DECONV_CASES))
def test_conv2d_transpose_forward_and_grads(ex, case):
    """Conv2DBackpropInput as a forward op (ops.Conv2DTranspose): the scatter reference, and its
    backward rule (Conv2D for the input, Conv2DBackpropFilter for the weight) against finite
    differences and the adjoint identity <deconv(dy, w), ct> = <dy, conv(ct, w)>."""
    dy_shape, w_shape, mode, pad, stride, dilation, group = DECONV_CASES[case]
    dy, w = rand(*dy_shape), rand(*w_shape)
    (kh, kw), (h, wd) = w_shape[2:], dy_shape[2:]
    out_hw = (deconv_length(mode, h, kh, stride[0], dilation[0], pad[0] + pad[1]),
              deconv_length(mode, wd, kw, stride[1], dilation[1], pad[2] + pad[3]))
    pads = (same_pads(out_hw[0], h, kh, stride[0], dilation[0]) + same_pads(out_hw[1], wd, kw, stride[1], dilation[1])
            if mode == "same" else pad)
    attrs = dict(out_channel=w_shape[0], kernel_size=(kh, kw), pad_mode=mode, pad=pad, stride=stride,
                 dilation=dilation, group=group, input_size=(dy_shape[0], w_shape[1] * group) + out_hw)

    def reference(a, b):
        return deconv_ref(a, b, stride, pads, dilation, group, out_hw)

    ct = rand(*reference(dy, w).shape)
    got = autodiff_grads(ex, "Conv2DBackpropInput", [dy, w], attrs, ct)
    np.testing.assert_allclose(got[0], reference(dy, w), rtol=1e-5, atol=1e-5)
    assert_grads_close(got[1:], numeric_grads(reference, [dy, w], ct))
    # adjoint: d<out, ct>/d dy is the plain convolution of ct
    np.testing.assert_allclose(np.sum(f64(got[1]) * dy), np.sum(reference(dy, w) * ct), rtol=1e-5)


def test_nn_conv2d_transpose_output_shapes_follow_mindspore():
    """Shapes from a capture (no kernel runs): MindSpore's documented example and each pad_mode,
    output_padding adding rows and columns in 'pad' mode."""
    def shape(net, x_shape):
        graph, _ = capture(net, Tensor(np.zeros(x_shape, np.float32)))
        return graph.values[graph.outputs[0]].shape

    assert shape(nn.Conv2dTranspose(3, 64, 4, has_bias=False, weight_init="normal", pad_mode="pad"),
                 (1, 3, 16, 50)) == (1, 64, 19, 53)
    for mode, k, s, d, pad, extra in (("same", 3, 2, 1, 0, 0), ("valid", 3, 2, 2, 0, 0), ("valid", 1, 3, 1, 0, 0),
                                      ("pad", 4, 2, 1, (1, 2, 0, 1), 1)):
        net = nn.Conv2dTranspose(4, 6, k, stride=s, pad_mode=mode, padding=pad, dilation=d, output_padding=extra,
                                 group=2)
        assert net.weight.shape == (4, 3, k, k)
        pt, pb, pl, pr = (pad,) * 4 if isinstance(pad, int) else pad
        assert shape(net, (2, 4, 5, 7)) == (2, 6, deconv_length(mode, 5, k, s, d, pt + pb) + extra,
                                            deconv_length(mode, 7, k, s, d, pl + pr) + extra)


# --------------------------------------------------------------------------------------- Conv1d

def conv1d_ref(x, w, b, stride, pads, dilation):
    """out[n, o, t] = b[o] + sum over (i, r) of w[o, i, r] * x_padded[n, i, t * stride + r * dilation]."""
    xp = np.pad(f64(x), ((0, 0), (0, 0), pads))
    k = w.shape[-1]
    length = (xp.shape[-1] - (k - 1) * dilation - 1) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], length)) + f64(b)[None, :, None]
    for r in range(k):
        taps = xp[:, :, r * dilation:r * dilation + (length - 1) * stride + 1:stride]
        out += np.einsum("oi,nit->not", f64(w)[:, :, r], taps)
    return out


def test_conv1d_forward_and_grads(ex, graph_mode):
    """nn.Conv1d (Conv2D between ExpandDims and Squeeze) against the 1-D reference; gradients of x,
    the (out, in, 1, k) weight and the bias against finite differences."""
    net = nn.Conv1d(3, 4, 3, stride=2, pad_mode="pad", padding=2, dilation=2, has_bias=True)
    assert net.weight.shape == (4, 3, 1, 3) and [p.name for p in net.trainable_params()] == ["weight", "bias"]
    x = rand(2, 3, 9)

    def reference(xx, ww, bb):
        return conv1d_ref(xx, ww[:, :, 0], bb, 2, (2, 2), 2)

    w, b = net.weight.asnumpy(), net.bias.asnumpy()
    ct = rand(*reference(x, w, b).shape)

    def objective(xx):
        return ops.sum(net(xx) * Tensor(ct))

    value, (dx, (dw, db)) = ms.value_and_grad(objective, grad_position=0, weights=net.trainable_params())(Tensor(x))
    np.testing.assert_allclose(float(value.asnumpy()), np.sum(reference(x, w, b) * ct), rtol=1e-5)
    want = numeric_grads(reference, [x, w, b], ct)
    assert_grads_close([dx.asnumpy(), dw.asnumpy(), db.asnumpy()], want)
    same = nn.Conv1d(3, 4, 4, stride=3)                          # 'same': ceil(L / stride) outputs
    graph, _ = capture(same, Tensor(np.zeros((1, 3, 10), np.float32)))
    assert graph.values[graph.outputs[0]].shape == (1, 4, 4)


# -------------------------------------------------------------------------------------- resizing

def axis_scale(n, m, align):
    return np.float32(n - 1) / np.float32(m - 1) if align and m > 1 else np.float32(n) / np.float32(m)


def nearest_index(n, m, align, half):
    """TensorFlow's nearest source index, in float32: floor of o * scale (or of (o + 0.5) * scale with
    half-pixel centers), rounded half up instead with align_corners, at most n - 1."""
    o = np.arange(m, dtype=np.float32)
    s = (o + np.float32(0.5)) * axis_scale(n, m, align) if half else o * axis_scale(n, m, align)
    picked = np.floor(f64(s) + 0.5) if align else np.floor(s)
    return np.minimum(picked.astype(np.int64), n - 1)


def bilinear_taps(n, m, align, half):
    """(lo, hi, weight of hi) per output index: s = o * scale, or (o + 0.5) * scale - 0.5 with
    half-pixel centers; lo = max(floor(s), 0), hi = min(ceil(s), n - 1), weight s - floor(s)."""
    o = np.arange(m, dtype=np.float32)
    scale = axis_scale(n, m, align)
    s = (o + np.float32(0.5)) * scale - np.float32(0.5) if half else o * scale
    fl = np.floor(s)
    return np.maximum(fl, 0).astype(np.int64), np.minimum(np.ceil(s), n - 1).astype(np.int64), f64(s - fl)


def resize_ref(x, size, bilinear, align, half):
    (h, w), (oh, ow) = x.shape[2:], size
    x = f64(x)
    if not bilinear:
        return x[:, :, nearest_index(h, oh, align, half)][:, :, :, nearest_index(w, ow, align, half)]
    y0, y1, ly = bilinear_taps(h, oh, align, half)
    x0, x1, lx = bilinear_taps(w, ow, align, half)
    top = x[:, :, y0][:, :, :, x0] * (1 - lx) + x[:, :, y0][:, :, :, x1] * lx
    bottom = x[:, :, y1][:, :, :, x0] * (1 - lx) + x[:, :, y1][:, :, :, x1] * lx
    return top * (1 - ly)[:, None] + bottom * ly[:, None]


RESIZE_CASES = [(op, align, half) for op in ("ResizeNearestNeighbor", "ResizeBilinearV2")
                for align, half in ((False, False), (True, False), (False, True))]


@pytest.mark.parametrize("op,align,half", RESIZE_CASES)
def test_resize_forward_and_grads(ex, op, align, half):
    """(1, 2, 3, 5) -> (7, 4): H upsampled, W downsampled. Forward against the coordinate formulas;
    the backward kernel (a deterministic scatter by dx rows) against finite differences."""
    x, size = rand(1, 2, 3, 5), (7, 4)
    bilinear = op == "ResizeBilinearV2"

    def reference(a):
        return resize_ref(a, size, bilinear, align, half)

    ct = rand(1, 2, *size)
    got = autodiff_grads(ex, op, [x], dict(size=size, align_corners=align, half_pixel_centers=half), ct)
    np.testing.assert_allclose(got[0], reference(x), rtol=1e-6, atol=1e-6)
    assert_grads_close(got[1:], numeric_grads(reference, [x], ct), rtol=1e-4, atol=1e-4)


def test_resize_front_ends_match_mindspore(ex, graph_mode):
    """MindSpore's documented examples, ops.interpolate's choice of conventions (nearest: floor,
    bilinear: half-pixel unless align_corners) and nn.ResizeBilinear's scale_factor, on the shapes of
    the cases above where they coincide (so their kernels are shared)."""
    doc = Tensor(np.array([[[[1, 2, 3, 4], [5, 6, 7, 8]]]], np.float32))
    np.testing.assert_allclose(nn.ResizeBilinear()(doc, size=(5, 5)).asnumpy()[0, 0],
                               [[1, 1.8, 2.6, 3.4, 4], [2.6, 3.4, 4.2, 5, 5.6], [4.2, 5, 5.8, 6.6, 7.2],
                                [5, 5.8, 6.6, 7.4, 8], [5, 5.8, 6.6, 7.4, 8]], rtol=1e-6)
    near = ops.ResizeNearestNeighbor((2, 2))(Tensor(np.array([[[[-0.1, 0.3, 3.6], [0.4, 0.5, -3.2]]]], np.float32)))
    np.testing.assert_array_equal(near.asnumpy(), np.array([[[[-0.1, 0.3], [0.4, 0.5]]]], np.float32))
    x = rand(1, 2, 3, 5)
    for out, (bilinear, align, half) in (
            (ops.interpolate(Tensor(x), size=(7, 4)), (False, False, False)),
            (ops.interpolate(Tensor(x), size=(7, 4), mode="bilinear"), (True, False, True)),
            (ops.interpolate(Tensor(x), size=(7, 4), mode="bilinear", align_corners=True), (True, True, False)),
            (ops.ResizeBilinear((7, 4), align_corners=True)(Tensor(x)), (True, True, False))):
        np.testing.assert_allclose(out.asnumpy(), resize_ref(x, (7, 4), bilinear, align, half), rtol=1e-6, atol=1e-6)
    up = nn.ResizeBilinear()(Tensor(x), scale_factor=2)
    np.testing.assert_allclose(up.asnumpy(), resize_ref(x, (6, 10), True, False, False), rtol=1e-6, atol=1e-6)
    same = ops.interpolate(Tensor(x), scale_factor=(2.4, 0.8), recompute_scale_factor=True)  # floor(3 * 2.4) = 7
    np.testing.assert_array_equal(same.asnumpy(), resize_ref(x, (7, 4), False, False, False).astype(np.float32))


# --------------------------------------------------------------------------------- mirror padding

@pytest.mark.parametrize("mode,pads", [("REFLECT", ((0, 0), (1, 2), (2, 0), (3, 4))),
                                       ("SYMMETRIC", ((1, 0), (0, 0), (3, 2), (0, 5)))])
def test_mirror_pad_forward_and_grads(ex, mode, pads):
    """MirrorPad against np.pad's reflect/symmetric; MirrorPadGrad (dx rows summing the dout rows that
    read them) against finite differences."""
    x = rand(2, 3, 3, 5)

    def reference(a):
        return np.pad(a, pads, mode=mode.lower())

    ct = rand(*reference(x).shape)
    got = autodiff_grads(ex, "MirrorPad", [x], dict(paddings=pads, mode=mode), ct)
    np.testing.assert_array_equal(got[0], reference(x))
    assert_grads_close(got[1:], numeric_grads(reference, [x], ct), rtol=1e-4, atol=1e-4)


def test_pad_front_ends(ex):
    """nn.Pad's three modes and ops.pad's 'reflect' (last-dimension-first pairs) against np.pad."""
    x = rand(2, 3, 3, 5)
    pads = ((0, 0), (1, 2), (2, 0), (3, 4))
    np.testing.assert_array_equal(nn.Pad(pads, "REFLECT")(Tensor(x)).asnumpy(), np.pad(x, pads, mode="reflect"))
    np.testing.assert_array_equal(nn.Pad(pads)(Tensor(x)).asnumpy(), np.pad(x, pads))
    sym = ((1, 0), (0, 0), (3, 2), (0, 5))
    np.testing.assert_array_equal(nn.Pad(sym, "SYMMETRIC")(Tensor(x)).asnumpy(), np.pad(x, sym, mode="symmetric"))
    np.testing.assert_array_equal(ops.pad(Tensor(x), (3, 4, 2, 0, 1, 2), mode="reflect").asnumpy(),
                                  np.pad(x, pads, mode="reflect"))


# -------------------------------------------------------------------------------------- Embedding

def test_embedding_lookup_padding_row_and_gradient(ex, graph_mode):
    """Rows of the table by id; the padding_idx row starts at zero and, as in MindSpore, still receives
    its gradient. An id outside the vocabulary is MindSpore's RuntimeError (For 'Gather', ... [0, 6),
    but got 7), raised at synchronisation (tests/test_kernel_faults.py)."""
    net = nn.Embedding(6, 3, padding_idx=2)
    table = net.embedding_table.asnumpy()
    assert net.embedding_table.name == "embedding_table" and table.shape == (6, 3)
    assert not table[2].any() and table[[0, 1, 3, 4, 5]].all()
    with pytest.raises(RuntimeError, match=r"range \[0, 6\), but got 7"):
        net(Tensor(np.array([[2, 5, 7]], np.int32))).asnumpy()
    ids = np.array([[2, 5, 1], [0, 2, 5]], np.int32)
    ct = rand(2, 3, 3)

    def objective(i):
        return ops.sum(net(i) * Tensor(ct))

    value, (grad,) = ms.value_and_grad(objective, grad_position=None, weights=net.trainable_params())(Tensor(ids))
    rows = np.where((ids < 6)[..., None], table[np.minimum(ids, 5)], 0)
    np.testing.assert_allclose(float(value.asnumpy()), np.sum(rows * ct), rtol=1e-5)
    want = np.zeros((6, 3))
    for (a, b), i in np.ndenumerate(ids):
        if i < 6:
            want[i] += ct[a, b]
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-6, atol=1e-6)
    assert want[2].any()


# ------------------------------------------------------------------------------------------- LSTM

def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def lstm_ref(x, p, layers, bidirectional, batch_first, hx=None):
    """Stacked LSTM as a float64 loop: gates i, f, g, o from x_t W_ih^T + h W_hh^T + b_ih + b_hh."""
    seq = f64(x).transpose(1, 0, 2) if batch_first else f64(x)
    steps, batch = seq.shape[:2]
    hidden = p["weight_hh_l0"].shape[1]
    directions = 2 if bidirectional else 1
    h_n, c_n = [], []
    for layer in range(layers):
        outs = []
        for d in range(directions):
            sfx = f"l{layer}" + ("_reverse" if d else "")
            k = layer * directions + d
            h = f64(hx[0][k]) if hx else np.zeros((batch, hidden))
            c = f64(hx[1][k]) if hx else np.zeros((batch, hidden))
            out = np.zeros((steps, batch, hidden))
            for t in (reversed(range(steps)) if d else range(steps)):
                z = seq[t] @ f64(p[f"weight_ih_{sfx}"]).T + h @ f64(p[f"weight_hh_{sfx}"]).T
                z = z + f64(p.get(f"bias_ih_{sfx}", 0)) + f64(p.get(f"bias_hh_{sfx}", 0))
                i, f, g, o = np.split(z, 4, axis=1)
                c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
                h = sigmoid(o) * np.tanh(c)
                out[t] = h
            outs.append(out)
            h_n.append(h)
            c_n.append(c)
        seq = np.concatenate(outs, axis=2)
    return (seq.transpose(1, 0, 2) if batch_first else seq), np.stack(h_n), np.stack(c_n)


def test_lstm_matches_numpy_loop(ex, graph_mode):
    """A 2-layer bidirectional batch-first LSTM with initial states, and a 1-layer one without bias or
    states: outputs and final states, parameters named and shaped as MindSpore's."""
    net = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    names = [p.name for p in net.trainable_params()]
    assert names[:4] == ["weight_ih_l0", "weight_ih_l0_reverse", "weight_ih_l1", "weight_ih_l1_reverse"]
    assert names[-1] == "bias_hh_l1_reverse" and len(names) == 16
    params = {p.name: p.asnumpy() for p in net.trainable_params()}
    assert params["weight_ih_l1"].shape == (16, 8) and params["weight_hh_l0"].shape == (16, 4)
    assert np.abs(params["weight_ih_l0"]).max() <= 0.5                        # U(-1/sqrt(4), 1/sqrt(4))
    x, h0, c0 = rand(2, 3, 3), rand(4, 2, 4), rand(4, 2, 4)
    out, (h, c) = net(Tensor(x), (Tensor(h0), Tensor(c0)))
    want = lstm_ref(x, params, 2, True, True, (h0, c0))
    for got, ref in zip((out, h, c), want):
        assert got.shape == ref.shape
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    plain = nn.LSTM(3, 4, has_bias=False)
    params = {p.name: p.asnumpy() for p in plain.trainable_params()}
    assert sorted(params) == ["weight_hh_l0", "weight_ih_l0"]
    out, (h, c) = plain(Tensor(x.transpose(1, 0, 2).copy()))
    for got, ref in zip((out, h, c), lstm_ref(x.transpose(1, 0, 2), params, 1, False, False)):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-5)


class LSTMRegressor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def construct(self, x):
        return self.lstm(x)[0]


def test_lstm_trains_one_step(ex, graph_mode):
    """TrainOneStepCell with SGD over an LSTM: the loss and every updated weight against the numpy
    loop's finite-difference gradient (autodiff through the unrolled steps)."""
    net = LSTMRegressor()
    x, target = rand(3, 2, 3), rand(3, 2, 4)

    def loss_ref(p):
        out = lstm_ref(x, {k.removeprefix("lstm."): v for k, v in p.items()}, 1, False, False)[0]
        return float(np.mean((out - target) ** 2))

    check_sgd_step(net, loss_ref, (x, target), lr=0.5)


# ----------------------------------------------------------------------- training a decoder, BN1d

class Decoder(nn.Cell):
    """A conv-transpose decoder: (2, 3, 3) -> (3, 6, 6) (pad mode, output_padding) -> tanh -> (2, 12, 12)."""

    def __init__(self):
        super().__init__()
        self.up1 = nn.Conv2dTranspose(2, 3, 3, stride=2, pad_mode="pad", padding=1, output_padding=1, has_bias=True)
        self.act = nn.Tanh()
        self.up2 = nn.Conv2dTranspose(3, 2, 2, stride=2, pad_mode="valid", has_bias=True)

    def construct(self, x):
        return self.up2(self.act(self.up1(x)))


def test_conv_transpose_decoder_trains_one_step(ex, graph_mode):
    net = Decoder()
    x, target = rand(2, 2, 3, 3), rand(2, 2, 12, 12)

    def loss_ref(p):
        y = deconv_ref(x, p["up1.weight"], (2, 2), (1, 1, 1, 1), (1, 1), 1, (5, 5)) + p["up1.bias"][:, None, None]
        y = np.tanh(np.pad(y, ((0, 0), (0, 0), (0, 1), (0, 1))))            # output_padding: zero rows after bias
        y = deconv_ref(y, p["up2.weight"], (2, 2), (0, 0, 0, 0), (1, 1), 1, (12, 12)) + p["up2.bias"][:, None, None]
        return float(np.mean((y - target) ** 2))

    check_sgd_step(net, loss_ref, (x, target), lr=0.5)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)])
def test_batchnorm1d_trains_on_2d_and_3d(ex, graph_mode, shape):
    """BatchNorm1d in training mode on (N, C) and (N, C, L): batch statistics over N (and L), gamma and
    beta stepped by their gradients, moving statistics 0.9 * moving + 0.1 * batch (unbiased variance)."""
    net = nn.BatchNorm1d(3, gamma_init=Tensor(rand(3)), beta_init=Tensor(rand(3)))
    net.set_train()
    x, target = rand(*shape), rand(*shape)
    axes = (0,) if len(shape) == 2 else (0, 2)
    view = (1, 3) + (1,) * (len(shape) - 2)

    def loss_ref(p):
        mean, var = f64(x).mean(axes), f64(x).var(axes)
        y = (f64(x) - mean.reshape(view)) / np.sqrt(var.reshape(view) + 1e-5) * p["gamma"].reshape(view)
        return float(np.mean((y + p["beta"].reshape(view) - target) ** 2))

    check_sgd_step(net, loss_ref, (x, target), lr=0.5)
    count = x.size // 3
    np.testing.assert_allclose(net.moving_mean.asnumpy(), 0.1 * f64(x).mean(axes), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.moving_variance.asnumpy(), 0.9 + 0.1 * f64(x).var(axes) * count / (count - 1),
                               rtol=1e-5)


# ------------------------------------------------------------------------------------- bad input

def _x(*shape):
    return Tensor(np.zeros(shape, np.float32))


BAD = {
    "deconv-output-padding-mode": (InvalidParamError, "needs pad_mode='pad'",
                                   lambda: nn.Conv2dTranspose(2, 3, 3, stride=2, pad_mode="same", output_padding=1)),
    "deconv-output-padding-range": (InvalidParamError, "max(stride, dilation)",
                                    lambda: nn.Conv2dTranspose(2, 3, 3, stride=2, pad_mode="pad", output_padding=2)),
    "deconv-rank": (InvalidParamError, "rank 4", lambda: nn.Conv2dTranspose(2, 3, 3)(_x(2, 3, 3))),
    "deconv-input-size": (InvalidParamError, "forward Conv2D's output",
                          lambda: ops.Conv2DTranspose(2, 3, pad_mode="same")(_x(1, 2, 4, 4), _x(2, 3, 3, 3),
                                                                              (1, 3, 9, 9))),
    "conv1d-rank": (InvalidParamError, "rank 3", lambda: nn.Conv1d(3, 4, 3)(_x(1, 3, 5, 5))),
    "conv1d-kernel-type": (InvalidParamError, "kernel_size", lambda: nn.Conv1d(3, 4, (1, 3))),
    "resize-align-and-half": (InvalidParamError, "cannot both be True",
                              lambda: ops.ResizeBilinearV2(True, True)(_x(1, 1, 2, 2), (4, 4))),
    "resize-size": (InvalidParamError, "ints >= 1", lambda: ops.ResizeNearestNeighbor((0, 3))(_x(1, 1, 2, 2))),
    "resize-rank": (InvalidParamError, "rank 4", lambda: ops.ResizeNearestNeighbor((3, 3))(_x(2, 2))),
    "interpolate-mode": (ValueError, "'mode' must be in",
                         lambda: ops.interpolate(_x(1, 1, 2, 2), size=(3, 3), mode="cubic")),
    "interpolate-scale": (InvalidParamError, "recompute_scale_factor",
                          lambda: ops.interpolate(_x(1, 1, 2, 2), scale_factor=2.0)),
    "mirror-too-wide": (InvalidParamError, "at most 2 per side",
                        lambda: ops.MirrorPad("REFLECT")(_x(2, 3), ((0, 0), (3, 0)))),
    "mirror-mode": (InvalidParamError, "mode='EDGE'", lambda: ops.MirrorPad("EDGE")(_x(2, 3), ((0, 0), (1, 0)))),
    "nn-pad-mode": (InvalidParamError, "mode='EDGE'", lambda: nn.Pad(((1, 1),), mode="EDGE")),
    "pad-replicate": (FeatureNotSupportedError, "'replicate'", lambda: ops.pad(_x(2, 3), (1, 1), mode="replicate")),
    "embedding-padding-idx": (InvalidParamError, "padding_idx=5", lambda: nn.Embedding(5, 2, padding_idx=5)),
    "lstm-features": (InvalidParamError, "(seq_len, batch, 3)", lambda: nn.LSTM(3, 4)(_x(5, 2, 7))),
    "lstm-dropout": (InvalidParamError, "dropout=1.0", lambda: nn.LSTM(3, 4, dropout=1.0)),
    "lstm-state": (InvalidParamError, "h_0 has shape (1, 3, 4)",
                   lambda: nn.LSTM(3, 4)(_x(5, 2, 3), (_x(1, 3, 4), _x(1, 2, 4)))),
    "lstm-seq-length": (FeatureNotSupportedError, "seq_length",
                        lambda: nn.LSTM(3, 4)(_x(5, 2, 3), None, Tensor(np.array([5, 4], np.int32)))),
    "bn1d-rank": (InvalidParamError, "rank 2 or 3", lambda: nn.BatchNorm1d(3)(_x(2, 3, 4, 4))),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_inputs_raise_typed_errors(ex, case):
    error, fragment, call = BAD[case]
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value)


# ------------------------------------------------------------------- backward kernels over blocks

OWNERSHIP = {
    # dy shape and dtype, op, attrs; a dx of 2 * 65536 elements or more splits over blocks
    "resize-bilinear-grad": ((1, 8, 200, 180), "float32", "ResizeBilinearGrad",
                             dict(x_shape=(1, 8, 128, 128), align_corners=False, half_pixel_centers=True)),
    "mirror-pad-grad-f16": ((2, 4, 132, 134), "float16", "MirrorPadGrad",
                            dict(paddings=((0, 0), (0, 0), (2, 2), (3, 3)), mode="SYMMETRIC")),
}


@pytest.mark.parametrize("case", list(OWNERSHIP))
def test_backward_scatters_partition_dx_over_blocks(case):
    """Each block writes only its own rows of dx and together they write all of it; the result is
    bitwise the same whatever order or concurrency the blocks run in, and matches the adjoint."""
    shape, dtype, op, attrs = OWNERSHIP[case]
    dy = rand(*shape).astype(dtype)
    s = sig(op, [dy], **attrs)
    assert kernel(s).block_dim > 1
    (full,) = launch(s, [dy])
    (concurrent,) = launch(s, [dy], threads=4)
    np.testing.assert_array_equal(concurrent, full)
    owner = np.zeros(full.shape, np.int64)
    for b in range(kernel(s).block_dim):
        (part,) = launch(s, [dy], blocks=[b], sentinel=True)
        bits = part.reshape(-1).view(np.uint16 if part.dtype == np.float16 else np.uint32)
        mine = (bits != np.iinfo(bits.dtype).max).reshape(full.shape)
        np.testing.assert_array_equal(part[mine], full[mine])
        owner += mine
    assert (owner == 1).all()
    if op == "MirrorPadGrad":
        index = np.pad(np.arange(full.size).reshape(full.shape), attrs["paddings"], mode="symmetric")
        want = np.zeros(full.size)
        np.add.at(want, index.reshape(-1), f64(dy).reshape(-1))
        np.testing.assert_allclose(full.reshape(-1), want, rtol=2e-3, atol=2e-3)
    else:
        (y0, y1, ly), (x0, x1, lx) = bilinear_taps(128, 200, False, True), bilinear_taps(128, 180, False, True)
        want = np.zeros(full.shape)
        for rows, wy in ((y0, 1 - ly), (y1, ly)):
            for cols, wx in ((x0, 1 - lx), (x1, lx)):
                contrib = f64(dy) * wy[:, None] * wx[None, :]
                np.add.at(want, (slice(None), slice(None), rows[:, None], cols[None, :]), contrib)
        np.testing.assert_allclose(full, want, rtol=1e-4, atol=1e-4)
