"""Resampling and patch ops of round 2 (frontend/ops/operations/image_ops.py, the resampling section of
nn_ops.py, AffineGrid/ResizeNearestNeighborV2 in array_ops.py) against float64 numpy references written
from the kernels' documented rules (TensorFlow's crop/bicubic/area resizes, PyTorch's grid sampler and
linear/trilinear/nearest upsampling), and their gradients against central finite differences."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn, ops

from gradcheck import numeric_grads

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    yield


# ------------------------------------------------------------------------------- numpy references

def grid_sample_ref(x, grid, mode="bilinear", padding="zeros", align=False):
    """PyTorch's grid_sampler in float64 for 4-D or 5-D x (N, C, *S) and grid (N, *O, dims)."""
    x, grid = np.asarray(x, np.float64), np.asarray(grid, np.float64)
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    dims = len(spatial)
    out = np.zeros((n, c) + grid.shape[1:-1])

    def reflect(v, lo2, hi2):
        if lo2 == hi2:
            return 0.0
        lo, span = lo2 / 2, (hi2 - lo2) / 2
        v = abs(v - lo)
        flips, extra = np.floor(v / span), np.fmod(v, span)
        return extra + lo if flips % 2 == 0 else span - extra + lo

    for b in range(n):
        for pos in itertools.product(*(range(s) for s in grid.shape[1:-1])):
            coords = []
            for a in range(dims):
                g, size = grid[(b,) + pos + (dims - 1 - a,)], spatial[a]
                v = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
                if padding == "reflection":
                    v = reflect(v, 0, 2 * (size - 1)) if align else reflect(v, -1, 2 * size - 1)
                if padding != "zeros":
                    v = min(max(v, 0), size - 1)
                coords.append(v)
            if mode == "nearest":
                idx = [int(np.rint(v)) for v in coords]
                if all(0 <= i < s for i, s in zip(idx, spatial)):
                    out[(b, slice(None)) + pos] = x[(b, slice(None)) + tuple(idx)]
                continue
            lows = [int(np.floor(v)) for v in coords]
            for corner in itertools.product((0, 1), repeat=dims):
                idx = [lo + k for lo, k in zip(lows, corner)]
                w = np.prod([(v - lo) if k else 1 - (v - lo) for v, lo, k in zip(coords, lows, corner)])
                if all(0 <= i < s for i, s in zip(idx, spatial)):
                    out[(b, slice(None)) + pos] += w * x[(b, slice(None)) + tuple(idx)]
    return out


def crop_ref(image, boxes, index, crop, method="bilinear", extrapolation=0.0):
    image, boxes = np.asarray(image, np.float64), np.asarray(boxes, np.float64)
    _, h, w, depth = image.shape
    ch, cw = crop
    out = np.zeros((len(boxes), ch, cw, depth))
    for k, (y1, x1, y2, x2) in enumerate(boxes):
        img = image[index[k]]
        for i in range(ch):
            y = y1 * (h - 1) + i * (y2 - y1) * (h - 1) / (ch - 1) if ch > 1 else 0.5 * (y1 + y2) * (h - 1)
            for j in range(cw):
                xx = x1 * (w - 1) + j * (x2 - x1) * (w - 1) / (cw - 1) if cw > 1 else 0.5 * (x1 + x2) * (w - 1)
                if not (0 <= y <= h - 1 and 0 <= xx <= w - 1):
                    out[k, i, j] = extrapolation
                elif method == "nearest":
                    out[k, i, j] = img[int(np.floor(y + 0.5)), int(np.floor(xx + 0.5))]
                else:
                    t, b_, lft, r = int(np.floor(y)), int(np.ceil(y)), int(np.floor(xx)), int(np.ceil(xx))
                    ly, lx = y - t, xx - lft
                    top = img[t, lft] + (img[t, r] - img[t, lft]) * lx
                    bot = img[b_, lft] + (img[b_, r] - img[b_, lft]) * lx
                    out[k, i, j] = top + (bot - top) * ly
    return out


def taps_matrix(n, m, fn):
    """The (m, n) resampling matrix of a per-output rule fn(o) -> [(index, weight), ...]."""
    a = np.zeros((m, n))
    for o in range(m):
        for i, wgt in fn(o):
            a[o, i] += wgt
    return a


def cubic_matrix(n, m, align=False, half=False):
    """Keys' cubic (a = -0.75 legacy, clamped taps; -0.5 half-pixel, outside taps dropped, renormalised)."""
    a = -0.5 if half else -0.75
    scale = (n - 1) / (m - 1) if align and m > 1 else n / m

    def kernel(t):
        t = abs(t)
        return ((a + 2) * t - (a + 3)) * t * t + 1 if t <= 1 else ((a * t - 5 * a) * t + 8 * a) * t - 4 * a

    def rule(o):
        src = (o + 0.5) * scale - 0.5 if half else o * scale
        base = int(np.floor(src))
        taps = [(base - 1 + k, kernel(src - (base - 1 + k))) for k in range(4)]
        if half:
            taps = [(i, wgt) for i, wgt in taps if 0 <= i < n]
            total = sum(wgt for _, wgt in taps)
            return [(i, wgt / total) for i, wgt in taps]
        return [(min(max(i, 0), n - 1), wgt) for i, wgt in taps]
    return taps_matrix(n, m, rule)


def area_matrix(n, m, align=False):
    scale = (n - 1) / (m - 1) if align and m > 1 else n / m

    def rule(o):
        lo, hi = o * scale, (o + 1) * scale
        return [(min(i, n - 1), (min(i + 1, hi) - max(i, lo)) / scale)
                for i in range(int(np.floor(lo)), int(np.ceil(hi)))]
    return taps_matrix(n, m, rule)


def linear_matrix(n, m, align, scale=None):
    def rule(o):
        if align:
            src = o * (n - 1) / (m - 1) if m > 1 else 0.0
        else:
            src = max((o + 0.5) * (n / m if scale is None else scale) - 0.5, 0.0)
        lo = min(int(np.floor(src)), n - 1)
        return [(lo, 1 - (src - lo)), (min(lo + 1, n - 1), src - lo)]
    return taps_matrix(n, m, rule)


def apply_axes(x, mats):
    """x with each trailing-axis matrix applied (mats for the last len(mats) axes)."""
    x = np.asarray(x, np.float64)
    for k, a in enumerate(mats):
        axis = x.ndim - len(mats) + k
        x = np.moveaxis(np.tensordot(x, a, axes=([axis], [1])), -1, axis)
    return x


def check_grad(fn, ref, arrays, wrt, rtol=2e-3, atol=2e-3):
    """ms.grad of sum(fn(*tensors) * ct) against central differences of the float64 reference."""
    ct = RNG.standard_normal(np.shape(ref(*arrays))).astype(np.float32)
    tensors = [Tensor(a) for a in arrays]
    got = ms.grad(lambda *t: (fn(*t) * Tensor(ct)).sum(), grad_position=tuple(wrt))(*tensors)
    got = got if isinstance(got, tuple) else (got,)
    want = numeric_grads(ref, arrays, ct, wrt=wrt, eps=1e-4)
    for g, i in zip(got, wrt):
        np.testing.assert_allclose(g.asnumpy(), want[i], rtol=rtol, atol=atol)


# -------------------------------------------------------------------------------------- forwards

X4 = RNG.uniform(-1, 1, (2, 3, 4, 5)).astype(np.float32)
X5 = RNG.uniform(-1, 1, (1, 2, 3, 4, 5)).astype(np.float32)
GRID2 = RNG.uniform(-1.3, 1.3, (2, 3, 4, 2)).astype(np.float32)
GRID3 = RNG.uniform(-1.3, 1.3, (1, 2, 3, 2, 3)).astype(np.float32)


@pytest.mark.parametrize("mode,padding,align", [("bilinear", "zeros", False), ("bilinear", "border", True),
                                                ("bilinear", "reflection", False), ("nearest", "zeros", True),
                                                ("nearest", "reflection", True), ("bilinear", "reflection", True)])
def test_grid_sample_matches_pytorchs_rule(mode, padding, align):
    got = ops.grid_sample(Tensor(X4), Tensor(GRID2), mode, padding, align).asnumpy()
    np.testing.assert_allclose(got, grid_sample_ref(X4, GRID2, mode, padding, align), rtol=1e-5, atol=1e-5)
    got3 = ops.GridSampler3D(mode, padding, align)(Tensor(X5), Tensor(GRID3)).asnumpy()
    np.testing.assert_allclose(got3, grid_sample_ref(X5, GRID3, mode, padding, align), rtol=1e-5, atol=1e-5)


def test_grid_sample_float16_computes_in_float32_and_rounds_once():
    out = ops.GridSampler2D("bilinear", "border", False)(Tensor(X4.astype(np.float16)), Tensor(GRID2.astype(np.float16)))
    assert out.dtype == ms.float16
    want = grid_sample_ref(X4.astype(np.float16), GRID2.astype(np.float16), "bilinear", "border")
    np.testing.assert_allclose(out.asnumpy(), want, rtol=2e-3, atol=2e-3)


BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [0.5, -0.2, 1.2, 0.7], [0.3, 0.3, 0.3, 0.6]], np.float32)
NHWC = RNG.uniform(-1, 1, (2, 4, 5, 3)).astype(np.float32)
BOX_INDEX = np.array([0, 1, 1], np.int32)


@pytest.mark.parametrize("method,crop,extrapolation", [("bilinear", (3, 4), 0.0), ("nearest", (3, 4), 0.5),
                                                       ("bilinear", (1, 2), -1.0)])
def test_crop_and_resize_matches_tensorflows_rule(method, crop, extrapolation):
    got = ops.crop_and_resize(Tensor(NHWC.astype(np.float16)), Tensor(BOXES), Tensor(BOX_INDEX), crop, method,
                              extrapolation)
    assert got.dtype == ms.float32
    want = crop_ref(NHWC.astype(np.float16), BOXES, BOX_INDEX, crop, method, extrapolation)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
def test_resize_bicubic_is_keys_cubic(align, half):
    got = ops.ResizeBicubic(align, half)(Tensor(X4), (6, 3)).asnumpy()
    want = apply_axes(X4, [cubic_matrix(4, 6, align, half), cubic_matrix(5, 3, align, half)])
    np.testing.assert_allclose(got, want, atol=3e-3)         # the kernel's weights come from a 1/1024 table


@pytest.mark.parametrize("align", [False, True])
def test_resize_area_averages_the_covered_cells(align):
    got = ops.ResizeArea(align)(Tensor(NHWC), Tensor(np.array([3, 2], np.int32)))
    assert got.dtype == ms.float32
    want = np.moveaxis(apply_axes(np.moveaxis(NHWC, -1, 1), [area_matrix(4, 3, align), area_matrix(5, 2, align)]),
                       1, -1)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_linear_trilinear_and_nearest_upsampling():
    x3 = X4[0]
    got = ops.ResizeLinear1D("half_pixel")(Tensor(x3), (8,)).asnumpy()
    np.testing.assert_allclose(got, apply_axes(x3, [linear_matrix(5, 8, False)]), rtol=1e-5, atol=1e-6)
    got = ops.ResizeLinear1D()(Tensor(x3), Tensor(np.array([3], np.int64))).asnumpy()
    np.testing.assert_allclose(got, apply_axes(x3, [linear_matrix(5, 3, True)]), rtol=1e-5, atol=1e-6)
    for align in (False, True):
        got = ops.UpsampleTrilinear3D(align)(Tensor(X5), (4, 6, 7)).asnumpy()
        want = apply_axes(X5, [linear_matrix(n, m, align) for n, m in zip((3, 4, 5), (4, 6, 7))])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    got = ops.UpsampleTrilinear3D()(Tensor(X5), None, (1.5, 2.0, 1.3)).asnumpy()
    want = apply_axes(X5, [linear_matrix(n, int(np.floor(n * s)), False, 1 / s) for n, s in
                           zip((3, 4, 5), (1.5, 2.0, 1.3))])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    got = ops.UpsampleNearest3D()(Tensor(X5), (5, 8, 4)).asnumpy()
    picks = [np.minimum(np.floor(np.arange(m) * (n / m)).astype(int), n - 1) for n, m in zip((3, 4, 5), (5, 8, 4))]
    np.testing.assert_array_equal(got, X5[:, :, picks[0]][:, :, :, picks[1]][..., picks[2]])


def test_resize_nearest_neighbor_v2_keeps_ints_and_flags():
    xi = np.arange(20, dtype=np.int32).reshape(1, 1, 4, 5)
    got = ops.ResizeNearestNeighborV2()(Tensor(xi), (2, 3)).asnumpy()
    np.testing.assert_array_equal(got, xi[:, :, [0, 2]][..., [0, 1, 3]])      # floor(o * in / out)
    got = ops.ResizeNearestNeighborV2(align_corners=True)(Tensor(xi), (3, 3)).asnumpy()
    np.testing.assert_array_equal(got, xi[:, :, [0, 2, 3]][..., [0, 2, 4]])   # round(o * (in-1)/(out-1))


def test_affine_grid_is_theta_times_the_identity_grid():
    theta = RNG.uniform(-1, 1, (2, 2, 3)).astype(np.float32)
    for align in (False, True):
        got = ops.affine_grid(Tensor(theta), (2, 1, 3, 4), align).asnumpy()
        xs = np.linspace(-1, 1, 4) if align else (2 * np.arange(4) + 1) / 4 - 1
        ys = np.linspace(-1, 1, 3) if align else (2 * np.arange(3) + 1) / 3 - 1
        base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], np.ones((3, 4))), -1)
        np.testing.assert_allclose(got, np.einsum("hwk,njk->nhwj", base, theta), rtol=1e-5, atol=1e-6)
    theta3 = RNG.uniform(-1, 1, (1, 3, 4)).astype(np.float32)
    assert ops.AffineGrid()(Tensor(theta3), (1, 2, 2, 3, 4)).shape == (1, 2, 3, 4, 3)


def test_adaptive_max_pools_give_values_and_first_argmax():
    x = np.round(RNG.uniform(-2, 2, (2, 3, 5, 7)), 0).astype(np.float32)       # many ties
    y, arg = ops.AdaptiveMaxPool2D((2, 3))(Tensor(x))
    assert arg.dtype == ms.int64
    for (i, j) in itertools.product(range(2), range(3)):
        h0, h1, w0, w1 = (i * 5) // 2, -(-(i + 1) * 5 // 2), (j * 7) // 3, -(-(j + 1) * 7 // 3)
        win = x[:, :, h0:h1, w0:w1].reshape(2, 3, -1)
        np.testing.assert_array_equal(y.asnumpy()[:, :, i, j], win.max(-1))
        local = win.argmax(-1)
        np.testing.assert_array_equal(arg.asnumpy()[:, :, i, j], (h0 + local // (w1 - w0)) * 7 + w0 + local % (w1 - w0))
    y3, arg3 = ops.AdaptiveMaxPool3D()(Tensor(X5), Tensor(np.array([1, 2, 1], np.int32)))
    assert arg3.dtype == ms.int32
    flat = X5.reshape(1, 2, 3, 2, 2, 5).transpose(0, 1, 3, 2, 4, 5).reshape(1, 2, 2, -1)
    np.testing.assert_array_equal(y3.asnumpy().reshape(1, 2, 2), flat.max(-1))
    np.testing.assert_array_equal(X5.reshape(1, 2, -1)[0, 0, arg3.asnumpy().reshape(1, 2, 2)[0, 0]],
                                  flat.max(-1)[0, 0])


# ------------------------------------------------------------------------------------- gradients

@pytest.mark.parametrize("padding,align", [("zeros", False), ("border", True), ("reflection", False)])
def test_grid_sample_gradient_wrt_input_and_grid(padding, align):
    x, g = X4[:1, :2], GRID2[:1, :2, :3]
    check_grad(lambda a, b: ops.grid_sample(a, b, "bilinear", padding, align),
               lambda a, b: grid_sample_ref(a, b, "bilinear", padding, align), [x, g], (0, 1))


def test_crop_and_resize_gradient_wrt_image_and_boxes():
    boxes = BOXES[:2]
    check_grad(lambda a, b: ops.crop_and_resize(a, b, Tensor(BOX_INDEX[:2]), (3, 2)),
               lambda a, b: crop_ref(a, b, BOX_INDEX[:2], (3, 2)), [NHWC, boxes], (0, 1))


@pytest.mark.parametrize("name", ["bicubic", "area", "trilinear"])
def test_resize_gradients(name):
    if name == "bicubic":
        check_grad(lambda a: ops.ResizeBicubic(False, True)(a, (3, 7)),
                   lambda a: apply_axes(a, [cubic_matrix(4, 3, half=True), cubic_matrix(5, 7, half=True)]),
                   [X4[:1, :1]], (0,), atol=3e-3)
    elif name == "area":
        check_grad(lambda a: ops.ResizeArea()(a, Tensor(np.array([3, 2], np.int32))),
                   lambda a: np.moveaxis(apply_axes(np.moveaxis(a, -1, 1), [area_matrix(4, 3), area_matrix(5, 2)]),
                                         1, -1), [NHWC[:1]], (0,))
    else:
        check_grad(lambda a: ops.UpsampleTrilinear3D()(a, (4, 5, 6)),
                   lambda a: apply_axes(a, [linear_matrix(n, m, False) for n, m in zip((3, 4, 5), (4, 5, 6))]),
                   [X5[:, :1]], (0,))


def test_affine_grid_into_grid_sample_trains_theta_in_graph_mode():
    """A spatial transformer: affine_grid then grid_sample in one GRAPH_MODE cell; theta's gradient
    against finite differences of the float64 references."""
    ms.set_context(mode=ms.GRAPH_MODE)
    x = X4[:1, :1]
    theta = np.array([[[0.9, 0.2, 0.1], [-0.1, 0.8, 0.05]]], np.float32)

    class Stn(nn.Cell):
        def construct(self, img, t):
            return ops.grid_sample(img, ops.affine_grid(t, (1, 1, 3, 4)), "bilinear", "zeros", False)

    def ref(img, t):
        xs, ys = (2 * np.arange(4) + 1) / 4 - 1, (2 * np.arange(3) + 1) / 3 - 1
        base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], np.ones((3, 4))), -1)
        return grid_sample_ref(img, np.einsum("hwk,njk->nhwj", base, t), "bilinear", "zeros")

    np.testing.assert_allclose(Stn()(Tensor(x), Tensor(theta)).asnumpy(), ref(x, theta), rtol=1e-5, atol=1e-5)
    ct = RNG.standard_normal((1, 1, 3, 4)).astype(np.float32)
    got = ms.grad(lambda a, t: (Stn()(a, t) * Tensor(ct)).sum(), grad_position=1)(Tensor(x), Tensor(theta))
    want = numeric_grads(ref, [x, theta], ct, wrt=[1])[1]
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-3, atol=2e-3)


def test_bad_arguments_raise_mindsporess_errors():
    with pytest.raises(ValueError):
        ops.grid_sample(Tensor(X4), Tensor(GRID2), "bilinear", "edge")
    with pytest.raises(ValueError):
        ops.ResizeBicubic(True, True)(Tensor(X4), (3, 3))
    with pytest.raises(TypeError):
        ops.crop_and_resize(Tensor(NHWC), Tensor(BOXES.astype(np.float16)), Tensor(BOX_INDEX), (2, 2))
    with pytest.raises(ValueError):
        ops.UpsampleNearest3D()(Tensor(X5), (4, 5, 6), (1.0, 2.0, 2.0))
    with pytest.raises(TypeError):
        ops.AdaptiveMaxPool2D((2, None))(Tensor(X4))


# ------------------------------------------------- patches, dilation, depthwise (no MindSpore CPU kernel)

def windows_ref(x, kernel, stride, rate, same, fill):
    """(N, C, kh * kw, oh, ow) window taps of NCHW x, TensorFlow's VALID/SAME geometry, pads = fill."""
    x = np.asarray(x, np.float64)
    n, c, h, w = x.shape
    pads = []
    for size, k, s, r in zip((h, w), kernel, stride, rate):
        span = (k - 1) * r + 1
        total = max((-(-size // s) - 1) * s + span - size, 0) if same else 0
        pads.append((total // 2, total - total // 2))
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple(pads), constant_values=fill)
    oh = (xp.shape[2] - (kernel[0] - 1) * rate[0] - 1) // stride[0] + 1
    ow = (xp.shape[3] - (kernel[1] - 1) * rate[1] - 1) // stride[1] + 1
    taps = [xp[:, :, i * rate[0]:i * rate[0] + (oh - 1) * stride[0] + 1:stride[0],
               j * rate[1]:j * rate[1] + (ow - 1) * stride[1] + 1:stride[1]]
            for i in range(kernel[0]) for j in range(kernel[1])]
    return np.stack(taps, 2)


@pytest.mark.parametrize("kernel,stride,rate,same", [((2, 2), (1, 1), (1, 1), False),
                                                     ((2, 3), (2, 2), (1, 2), True)])
def test_extract_image_patches_orders_depth_row_col_channel(kernel, stride, rate, same):
    got = ops.ExtractImagePatches((1, 1) + kernel, (1, 1) + stride, (1, 1) + rate, "SAME" if same else "VALID")(
        Tensor(X4)).asnumpy()
    taps = windows_ref(X4, kernel, stride, rate, same, 0.0)                  # (N, C, K, oh, ow)
    np.testing.assert_array_equal(got, taps.transpose(0, 2, 1, 3, 4).reshape(X4.shape[0], -1, *taps.shape[3:]))


def test_dilation2d_and_its_gradient():
    f = RNG.uniform(-0.5, 0.5, (3, 2, 2)).astype(np.float32)

    def ref(x, flt, same=True, stride=(1, 1), rate=(1, 1)):
        taps = windows_ref(x, flt.shape[1:], stride, rate, same, -np.inf)
        return (taps + np.asarray(flt, np.float64).reshape(1, 3, -1, 1, 1)).max(2)

    got = ops.Dilation2D((1, 1, 1, 1), (1, 1, 1, 1))(Tensor(X4), Tensor(f)).asnumpy()
    np.testing.assert_allclose(got, ref(X4, f), rtol=1e-6, atol=1e-6)
    got = ops.Dilation2D(2, (1, 2), "VALID")(Tensor(X4), Tensor(f)).asnumpy()
    np.testing.assert_allclose(got, ref(X4, f, False, (2, 2), (1, 2)), rtol=1e-6, atol=1e-6)
    check_grad(lambda a, b: ops.Dilation2D(1, 1)(a, b), ref, [X4[:1], f], (0, 1))


def test_depthwise_conv2d_native_is_a_per_channel_convolution():
    w = RNG.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32)
    got = ops.DepthwiseConv2dNative(1, (3, 2), pad_mode="pad", pad=1)(Tensor(X4), Tensor(w)).asnumpy()
    xp = np.pad(X4.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = xp.shape[2] - 2, xp.shape[3] - 1
    want = sum(xp[:, :, i:i + oh, j:j + ow] * w[0, :, i, j].reshape(1, 3, 1, 1) for i in range(3) for j in range(2))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError):
        ops.DepthwiseConv2dNative(1, 3)(Tensor(X4), Tensor(np.zeros((2, 3, 3, 3), np.float32)))


def test_interpolate_serves_every_mode_of_mindspore():
    """The modes beyond 4-D nearest/bilinear, each as MindSpore maps it onto a primitive."""
    x3, x5 = X4[0], X5
    got = ops.interpolate(Tensor(x3), size=8, mode="linear").asnumpy()
    np.testing.assert_allclose(got, apply_axes(x3, [linear_matrix(5, 8, False)]), rtol=1e-5, atol=1e-6)
    got = ops.interpolate(Tensor(x5), size=(4, 6, 7), mode="trilinear", align_corners=True).asnumpy()
    want = apply_axes(x5, [linear_matrix(n, m, True) for n, m in zip((3, 4, 5), (4, 6, 7))])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    got = ops.interpolate(Tensor(X4), scale_factor=0.5, mode="area").asnumpy()            # adaptive average
    adaptive = taps_matrix(5, 2, lambda o: [(i, 1 / (-(-(o + 1) * 5 // 2) - (o * 5) // 2))
                                            for i in range((o * 5) // 2, -(-(o + 1) * 5 // 2))])
    np.testing.assert_allclose(got, apply_axes(X4, [area_matrix(4, 2), adaptive]), rtol=1e-5, atol=1e-6)
    got = ops.interpolate(Tensor(x5), scale_factor=(2.0, 1.5, 1.0), mode="nearest").asnumpy()
    picks = [np.minimum(np.floor(np.arange(m) / f).astype(int), n - 1) for n, m, f in
             zip((3, 4, 5), (6, 6, 5), (2.0, 1.5, 1.0))]
    np.testing.assert_array_equal(got, x5[:, :, picks[0]][:, :, :, picks[1]][..., picks[2]])
    got = ops.interpolate(Tensor(x3), size=7, mode="nearest").asnumpy()
    np.testing.assert_array_equal(got, x3[..., np.floor(np.arange(7) * 5 / 7).astype(int)])
    got = ops.interpolate(Tensor(X4), size=(6, 3), mode="nearest-exact").asnumpy()
    rows, cols = np.floor((np.arange(6) + 0.5) * 4 / 6).astype(int), np.floor((np.arange(3) + 0.5) * 5 / 3).astype(int)
    np.testing.assert_array_equal(got, X4[:, :, rows][..., cols])
    got = ops.interpolate(Tensor(X4), size=(6, 3), mode="bicubic").asnumpy()
    np.testing.assert_allclose(got, apply_axes(X4, [cubic_matrix(4, 6, half=True), cubic_matrix(5, 3, half=True)]),
                               atol=3e-3)
    with pytest.raises(ValueError):
        ops.interpolate(Tensor(X4), size=(6, 3), mode="trilinear")
    with pytest.raises(ValueError):
        ops.interpolate(Tensor(x3), scale_factor=2.0, mode="linear")
