"""The 3-D and argmax pools (kernels/ops/pool.py), LP pools and max unpooling against float64 numpy
references of PyTorch's/MindSpore's window rules, and their gradients against finite differences."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn, ops

from gradcheck import assert_grads_close, autodiff_grads, numeric_grads


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    yield


def pool_ref(x, kernel, stride, pads, ceil=False, mode="max", count_pad=True, divisor=0, dilation=(1, 1, 1)):
    """(y, argmax) of a 3-D pool of (N, C, D, H, W) in float64: PyTorch's output rule and window walk."""
    x = np.asarray(x, np.float64)
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    outs = []
    for s, k, st, dl, p0, p1 in zip(sizes, kernel, stride, dilation, pads[::2], pads[1::2]):
        span = s + p0 + p1 - dl * (k - 1) - 1
        o = (span + (st - 1 if ceil else 0)) // st + 1
        if ceil and (o - 1) * st >= s + p0:
            o -= 1
        outs.append(o)
    y = np.zeros((n, c, *outs))
    arg = np.zeros((n, c, *outs), np.int64)
    for pos in itertools.product(*(range(o) for o in outs)):
        starts = [o * st - p0 for o, st, p0 in zip(pos, stride, pads[::2])]
        taps = [[b + t * dl for t in range(k) if 0 <= b + t * dl < s]
                for b, k, dl, s in zip(starts, kernel, dilation, sizes)]
        flat = [(i * sizes[1] + j) * sizes[2] + q for i in taps[0] for j in taps[1] for q in taps[2]]
        window = x.reshape(n, c, -1)[:, :, flat]
        if mode == "max":
            y[(slice(None), slice(None), *pos)] = window.max(-1)
            arg[(slice(None), slice(None), *pos)] = np.asarray(flat)[window.argmax(-1)]
        else:
            if divisor:
                div = divisor
            elif count_pad:
                div = np.prod([min(b + k, s + p1) - b for b, k, s, p1 in zip(starts, kernel, sizes, pads[1::2])])
            else:
                div = window.shape[-1]
            y[(slice(None), slice(None), *pos)] = window.sum(-1) / div
    return y, arg


RNG = np.random.RandomState(7)
VOL = RNG.permutation(2 * 2 * 4 * 5 * 5).reshape(2, 2, 4, 5, 5).astype(np.float32) / 50 - 2   # no ties

MAX_CASES = [
    dict(kernel_size=2, strides=1),
    dict(kernel_size=(2, 3, 2), strides=(1, 2, 2), pad_mode="same"),
    dict(kernel_size=3, strides=2, pad_mode="pad", pad_list=1, ceil_mode=True),
    dict(kernel_size=3, strides=2, pad_mode="pad", pad_list=(1, 0, 1, 1, 0, 1)),
]


def _resolved(kw):
    """kernel, stride, pads of a MaxPool3D/AvgPool3D keyword set, computed independently here."""
    k = kw["kernel_size"] if isinstance(kw["kernel_size"], tuple) else (kw["kernel_size"],) * 3
    s = kw["strides"] if isinstance(kw["strides"], tuple) else (kw["strides"],) * 3
    pads = kw.get("pad_list", kw.get("pad", 0))
    pads = (pads,) * 6 if isinstance(pads, int) else pads
    if kw.get("pad_mode") == "same":
        pads = ()
        for size, kk, ss in zip(VOL.shape[2:], k, s):
            total = max((-(-size // ss) - 1) * ss + kk - size, 0)
            pads += (total // 2, total - total // 2)
    return k, s, pads


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("kw", MAX_CASES)
def test_max_pool3d_matches_numpy(kw, dtype):
    x = VOL.astype(dtype)
    k, s, pads = _resolved(kw)
    want, _ = pool_ref(x, k, s, pads, ceil=bool(kw.get("ceil_mode")))
    got = ops.MaxPool3D(**kw)(Tensor(x)).asnumpy()
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want.astype(dtype))


AVG_CASES = [
    dict(kernel_size=2, strides=1),
    dict(kernel_size=2, strides=2, pad_mode="same"),
    dict(kernel_size=3, strides=2, pad_mode="pad", pad=1),
    dict(kernel_size=3, strides=2, pad_mode="pad", pad=1, count_include_pad=False),
    dict(kernel_size=3, strides=2, pad_mode="pad", pad=1, ceil_mode=True),
    dict(kernel_size=2, strides=1, divisor_override=3),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("kw", AVG_CASES)
def test_avg_pool3d_matches_numpy(kw, dtype):
    x = VOL.astype(dtype)
    k, s, pads = _resolved(kw)
    want, _ = pool_ref(x, k, s, pads, ceil=kw.get("ceil_mode", False), mode="avg",
                       count_pad=kw.get("count_include_pad", True), divisor=kw.get("divisor_override", 0))
    got = ops.AvgPool3D(**kw)(Tensor(x)).asnumpy()
    tol = 1e-6 if dtype == "float32" else 2e-3
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)


def test_argmax_pools_give_the_first_maximum_position():
    """MaxPool3DWithArgmax (dilation too), MaxPoolWithArgmaxV2 / max_pool2d (plane index) and the
    deprecated MaxPoolWithArgmax (index into the sample's (C, H, W))."""
    y, arg = ops.MaxPool3DWithArgmax(ksize=2, strides=(1, 2, 1), pads=1, dilation=(1, 2, 1))(Tensor(VOL))
    want_y, want_arg = pool_ref(VOL, (2, 2, 2), (1, 2, 1), (1,) * 6, dilation=(1, 2, 1))
    np.testing.assert_array_equal(y.asnumpy(), want_y.astype(np.float32))
    np.testing.assert_array_equal(arg.asnumpy(), want_arg)
    assert arg.dtype == ms.int64
    img = VOL[:, :, 0]
    y2, arg2 = ops.max_pool2d(Tensor(img), 3, stride=2, padding=1, return_indices=True)
    want_y, want_arg = pool_ref(img[:, :, None], (1, 3, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1))
    np.testing.assert_array_equal(y2.asnumpy(), want_y[:, :, 0].astype(np.float32))
    np.testing.assert_array_equal(arg2.asnumpy(), want_arg[:, :, 0])
    y3, arg3 = ops.MaxPoolWithArgmax(kernel_size=2, strides=2)(Tensor(img))
    _, plane = pool_ref(img[:, :, None], (1, 2, 2), (1, 2, 2), (0,) * 6)
    channel = np.arange(img.shape[1]).reshape(1, -1, 1, 1) * 25
    np.testing.assert_array_equal(arg3.asnumpy(), plane[:, :, 0] + channel)
    assert arg3.dtype == ms.int32


def test_all_minus_inf_window_keeps_its_first_position():
    x = np.full((1, 1, 1, 2, 2), -np.inf, np.float32)
    y, arg = ops.MaxPool3DWithArgmax(ksize=(1, 2, 2), strides=1, pads=0)(Tensor(x))
    assert y.asnumpy().item() == -np.inf and arg.asnumpy().item() == 0


GRAD_CASES = [
    ("MaxPool3D", dict(kernel_size=(2, 2, 2), strides=(1, 1, 1), pads=(0,) * 6), "max"),
    ("MaxPool3D", dict(kernel_size=(3, 3, 3), strides=(2, 2, 2), pads=(1,) * 6, ceil_mode=True), "max"),
    ("AvgPool3D", dict(kernel_size=(2, 2, 2), strides=(1, 2, 1), pads=(0,) * 6), "avg"),
    ("AvgPool3D", dict(kernel_size=(3, 3, 3), strides=(2, 2, 2), pads=(1,) * 6, count_include_pad=False), "avg"),
    ("AvgPool3D", dict(kernel_size=(3, 3, 3), strides=(2, 2, 2), pads=(1,) * 6, ceil_mode=True), "avg"),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("op,attrs,mode", GRAD_CASES)
def test_pool3d_gradients_match_finite_differences(ex, op, attrs, mode, dtype):
    x = VOL[:1, :1].astype(dtype)

    def ref(v):
        return pool_ref(v, attrs["kernel_size"], attrs["strides"], attrs["pads"], attrs.get("ceil_mode", False),
                        mode, attrs.get("count_include_pad", True))[0]
    ct = np.random.RandomState(1).randn(*ref(x).shape).astype(dtype)
    got = autodiff_grads(ex, op, [x], attrs, ct)
    tol = 2e-3 if dtype == "float32" else 2e-2
    assert_grads_close(got[1:], numeric_grads(ref, [x], ct), rtol=tol, atol=tol)


def test_lp_pools_are_mindspores_formula():
    x = np.abs(VOL[:, :, 0]) + 0.1
    got = ops.lp_pool2d(Tensor(x), 2, (2, 3), stride=(1, 2)).asnumpy()
    want, _ = pool_ref(x[:, :, None] ** 2, (1, 2, 3), (1, 1, 2), (0,) * 6, mode="avg")
    np.testing.assert_allclose(got, np.sqrt(want[:, :, 0] * 6), rtol=1e-5)
    line = x[:, :, 0]
    got = nn.LPPool1d(3, 2, ceil_mode=True)(Tensor(line)).asnumpy()       # a partial last window: mean * 2
    want, _ = pool_ref(line[:, :, None, None] ** 3, (1, 1, 2), (1, 1, 2), (0,) * 6, ceil=True, mode="avg")
    np.testing.assert_allclose(got, np.cbrt(want[:, :, 0, 0] * 2), rtol=1e-5)
    with pytest.raises(ValueError):
        ops.lp_pool2d(Tensor(x), 0, 2)


def test_max_unpool_inverts_max_pool_and_differentiates():
    img = Tensor(VOL[:, :, 0, :4, :4])
    y, arg = ops.max_pool2d(img, 2, return_indices=True)
    out = nn.MaxUnpool2d(2)(y, arg).asnumpy()
    want = np.zeros((2, 2, 16), np.float32)
    np.put_along_axis(want, arg.asnumpy().reshape(2, 2, -1), y.asnumpy().reshape(2, 2, -1), axis=2)
    np.testing.assert_array_equal(out, want.reshape(2, 2, 4, 4))
    assert ops.max_unpool2d(y, arg, 2, output_size=(5, 5)).shape == (2, 2, 5, 5)
    grad = ms.grad(lambda v: (ops.max_unpool2d(v, arg, 2) * 3.0).sum())(y)
    np.testing.assert_array_equal(grad.asnumpy(), np.full(y.shape, 3.0, np.float32))


def test_graph_mode_runs_pool3d_and_its_gradient():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pool = ops.MaxPool3D(kernel_size=2, strides=2, pad_mode="same")
            self.avg = ops.AvgPool3D(kernel_size=2, strides=1)

        def construct(self, x):
            return self.avg(self.pool(x))

    ms.set_context(mode=ms.GRAPH_MODE)
    x = Tensor(VOL)
    got = Net()(x).asnumpy()
    want = pool_ref(pool_ref(VOL, (2, 2, 2), (2, 2, 2), (0, 0, 0, 1, 0, 1))[0], (2, 2, 2), (1, 1, 1), (0,) * 6,
                    mode="avg")[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    grad = ms.grad(Net())(x).asnumpy()
    assert grad.shape == VOL.shape and np.isclose(grad.sum(), np.prod(want.shape))


def test_bad_arguments_are_mindsporess_errors():
    with pytest.raises(ValueError, match="pad_list"):
        ops.MaxPool3D(kernel_size=2, pad_list=1)
    with pytest.raises(ValueError, match="ceil_mode"):
        ops.MaxPool3D(kernel_size=2, ceil_mode=True)
    with pytest.raises(ValueError, match="x_rank"):
        ops.MaxPool3D(kernel_size=2)(Tensor(VOL[0]))
    with pytest.raises(TypeError, match="argmax_type"):
        ops.MaxPoolWithArgmaxV2(2, argmax_type=ms.float32)
