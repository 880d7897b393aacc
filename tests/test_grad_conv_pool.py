"""Backward kernels and rules of Conv2D, MaxPool and AvgPool (training, issue 9).

Each case differentiates the forward op on the emulated device (the op's backward rule builds
Conv2DBackpropInput/Conv2DBackpropFilter, MaxPoolGrad or AvgPoolGrad into the graph) and checks the
backward kernels' outputs twice: against an analytic numpy reference written here with plain window
loops (the adjoint of test_ops' forward references), and against central finite differences of the
forward reference (tests/gradcheck.py).
"""
from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_grads_close, autodiff_grads, numeric_grads
from test_ops import conv_ref, launch, pool_ref, pool_windows, same_pad

from ascendemu.errors import InvalidParamError
from ascendemu.graph.autodiff import differentiate
from ascendemu.graph.capture import Tracer
from ascendemu.graph.executor import DeviceExecutor
from ascendemu.kernels.library import infer_outputs, plan_kernel
from ascendemu.kernels.signature import OpSignature, TensorDesc

RNG = np.random.default_rng(99)
# float16 forward ops: inputs, stored outputs and gradients are float16 (accumulation is float32)
TOL = {"float32": dict(rtol=1e-4, atol=1e-4), "float16": dict(rtol=2e-2, atol=2e-2)}
FD_TOL = {"float32": {}, "float16": dict(rtol=2e-2, atol=3e-2)}


def build(ex: DeviceExecutor, sigs: list[OpSignature]) -> None:
    """Build the kernels a case will launch in this process (jobs=1): the executor's default, a
    spawned build pool per graph, takes seconds to start, more than these small kernels take to compile."""
    ex.kernel_cache.get_many(sigs, jobs=1, progress=False)


def rand(shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def f64(a):
    return np.asarray(a, np.float64)


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v[-2:])


# ------------------------------------------------------------------------------------------ conv

def conv_grads_ref(x, w, dout, stride, pad, dilation, group):
    """(dx, dw) of conv_ref: every output pixel's window gets dout x weight (dx) and gives dout x
    window (dw), on the explicitly padded input; dx is the padded gradient cropped back."""
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    ocg = oc // group
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for o in range(oc):
        ch = slice(o // ocg * cg, (o // ocg + 1) * cg)
        for i in range(dout.shape[2]):
            for j in range(dout.shape[3]):
                rows = slice(i * stride[0], i * stride[0] + (kh - 1) * dilation[0] + 1, dilation[0])
                cols = slice(j * stride[1], j * stride[1] + (kw - 1) * dilation[1] + 1, dilation[1])
                g = dout[:, o, i, j][:, None, None, None]
                dxp[:, ch, rows, cols] += g * w[o]
                dw[o] += (g * xp[:, ch, rows, cols]).sum(axis=0)
    return dxp[:, :, pad[0]:pad[0] + h, pad[2]:pad[2] + wd], dw


def conv_geometry_ref(xs, ws, attrs):
    """(stride, pad, dilation, group) of a Conv2D attrs dict, SAME padding computed as in test_ops."""
    stride, dil = pair(attrs.get("stride", 1)), pair(attrs.get("dilation", 1))
    if attrs.get("pad_mode") == "same":
        pad = same_pad(xs[2], ws[2], stride[0], dil[0]) + same_pad(xs[3], ws[3], stride[1], dil[1])
    else:
        pad = attrs.get("pad", (0, 0, 0, 0))
    return stride, pad, dil, attrs.get("group", 1)


def conv_sigs(x, w, attrs) -> list[OpSignature]:
    """Conv2D's signature and those of the two backprops its rule emits."""
    fwd = OpSignature.make("Conv2D", [(x.shape, str(x.dtype)), (w.shape, str(w.dtype))], **attrs)
    (y,) = infer_outputs(fwd)
    return [fwd,
            OpSignature.make("Conv2DBackpropInput", [y, fwd.inputs[1]], input_size=x.shape, **attrs),
            OpSignature.make("Conv2DBackpropFilter", [y, fwd.inputs[0]], filter_size=w.shape, **attrs)]


# Few cases, each covering several features: every case costs three kernel builds. Stride 1 in both
# dimensions, SAME with an odd kernel and float32 SAME are in the block-split test below.
CONV_CASES = {
    # stride 2, dilation 1, valid, groups 1 (a LeNet-like layer)
    "valid-s2": ((2, 3, 7, 8), (4, 3, 3, 3), "float32", {"stride": 2}),
    # explicit asymmetric padding, stride (2, 1), dilation 2, groups 2
    "pad-s2-d2-g2": ((1, 4, 7, 8), (4, 2, 3, 2), "float32",
                     {"pad_mode": "pad", "pad": (1, 0, 2, 1), "stride": (1, 1, 2, 1), "dilation": 2, "group": 2}),
    # float16 depthwise (groups = channels), SAME with asymmetric implicit padding (pads (0, 1, 2, 2)),
    # stride (1, 2), dilation (1, 2)
    "f16-depthwise-same": ((2, 3, 6, 7), (3, 1, 2, 3), "float16",
                           {"pad_mode": "same", "stride": (1, 2), "dilation": (1, 2), "group": 3}),
}


def conv_case(name):
    xs, ws, dtype, extra = CONV_CASES[name]
    attrs = {"out_channel": ws[0], "kernel_size": ws[2:], **extra}
    x, w = rand(xs, dtype), rand(ws, dtype)
    stride, pad, dil, group = conv_geometry_ref(xs, ws, attrs)
    ct = rand(infer_outputs(conv_sigs(x, w, attrs)[0])[0].shape, dtype)
    return x, w, attrs, ct, (stride, pad, dil, group)


@pytest.mark.parametrize("name", list(CONV_CASES))
def test_conv2d_backprops_match_the_adjoint_and_finite_differences(ex, name):
    x, w, attrs, ct, geometry = conv_case(name)
    build(ex, conv_sigs(x, w, attrs))
    y, dx, dw = autodiff_grads(ex, "Conv2D", [x, w], attrs, ct)
    dtype = str(x.dtype)
    assert dx.dtype == dw.dtype == x.dtype and dx.shape == x.shape and dw.shape == w.shape
    np.testing.assert_allclose(f64(y), conv_ref(f64(x), f64(w), *geometry), **TOL[dtype])
    want_dx, want_dw = conv_grads_ref(f64(x), f64(w), f64(ct), *geometry)
    np.testing.assert_allclose(f64(dx), want_dx, **TOL[dtype], err_msg="Conv2DBackpropInput")
    np.testing.assert_allclose(f64(dw), want_dw, **TOL[dtype], err_msg="Conv2DBackpropFilter")
    numeric = numeric_grads(lambda a, b: conv_ref(a, b, *geometry), [x, w], ct)
    assert_grads_close([f64(dx), f64(dw)], numeric, **FD_TOL[dtype])


def test_conv2d_rule_builds_only_the_wanted_backprop():
    """A first layer needs no input gradient: differentiating w.r.t. the weight alone emits no
    Conv2DBackpropInput, and w.r.t. the input alone no Conv2DBackpropFilter."""
    x, w, attrs, ct, _ = conv_case("valid-s2")
    for wrt, want in ((1, "Conv2DBackpropFilter"), (0, "Conv2DBackpropInput")):
        tracer = Tracer("wants")
        ins = [tracer.input(TensorDesc(a.shape, str(a.dtype))) for a in (x, w)]
        with tracer.active():
            (y,) = tracer.apply("Conv2D", ins, attrs)
            differentiate(tracer, y, [ins[wrt]])
        backward = [n.op for n in tracer.graph.nodes if n.op.startswith("Conv2DBackprop")]
        assert backward == [want]


@pytest.mark.parametrize("op", ["Conv2DBackpropInput", "Conv2DBackpropFilter"])
def test_conv_backprop_blocks_write_disjoint_slices(op):
    """Each block alone writes its own share of dx (input planes) or dw (filter slices); together
    they write all of it, and the whole equals the reference."""
    x, w = rand((3, 16, 32, 32)), rand((16, 16, 3, 3))
    attrs = {"out_channel": 16, "kernel_size": (3, 3), "pad_mode": "same"}
    sig = next(s for s in conv_sigs(x, w, attrs) if s.op == op)
    dout = rand(sig.inputs[0].shape)
    arrays = [dout, w] if op == "Conv2DBackpropInput" else [dout, x]
    blocks = plan_kernel(sig).block_dim
    assert blocks > 1
    (full,) = launch(sig, arrays)
    want = conv_grads_ref(f64(x), f64(w), f64(dout), (1, 1), (1, 1, 1, 1), (1, 1), 1)
    np.testing.assert_allclose(f64(full), want[0 if op == "Conv2DBackpropInput" else 1], rtol=1e-4, atol=1e-3)
    owner = np.zeros(full.shape, np.int64)
    for b in range(blocks):
        (part,) = launch(sig, arrays, blocks=[b], sentinel=True)
        mine = ~np.isnan(part)
        assert mine.any(), f"block {b} wrote nothing"
        np.testing.assert_array_equal(part[mine], full[mine])
        owner += mine
    assert (owner == 1).all()


# ------------------------------------------------------------------------------------------ pools

def pool_grad_ref(x, dout, op, kernel, stride, mode):
    """MaxPool: each window's dout to its first maximum in row-major order (numpy's argmax: the first
    NaN if any); AvgPool: dout / (window size) to every element of the clipped window."""
    n, c = x.shape[:2]
    dx = np.zeros(x.shape)
    nn, cc = np.meshgrid(np.arange(n), np.arange(c), indexing="ij")
    for i, j, rows, cols in pool_windows(x.shape, kernel, stride, mode):
        win = x[:, :, rows, cols]
        if op == "MaxPool":
            r, q = np.unravel_index(np.argmax(win.reshape(n, c, -1), axis=2), win.shape[2:])
            np.add.at(dx, (nn, cc, rows.start + r, cols.start + q), dout[:, :, i, j])
        else:
            dx[:, :, rows, cols] += dout[:, :, i, j][:, :, None, None] / win[0, 0].size
    return dx


POOL_CASES = {
    # overlapping windows (kernel 3, stride 2), SAME: clipped border windows
    "max-k3s2-same": ("MaxPool", (1, 2, 7, 6), 3, 2, "SAME", "float32"),
    "avg-k3s2-same": ("AvgPool", (1, 2, 7, 6), 3, 2, "SAME", "float32"),
    # overlapping, VALID; non-overlapping (kernel 2, stride 2) with a dropped last row, float16
    "max-k3s2-valid": ("MaxPool", (2, 1, 8, 7), 3, 2, "VALID", "float32"),
    "avg-k2s2-valid-f16": ("AvgPool", (1, 3, 5, 6), 2, 2, "VALID", "float16"),
    "max-k2s2-valid-f16": ("MaxPool", (1, 3, 5, 6), 2, 2, "VALID", "float16"),
}


def pool_sigs(op, x, attrs) -> list[OpSignature]:
    """The pool's signature and that of the gradient op its rule emits."""
    fwd = OpSignature.make(op, [(x.shape, str(x.dtype))], **attrs)
    (y,) = infer_outputs(fwd)
    if op == "MaxPool":
        return [fwd, OpSignature.make("MaxPoolGrad", [fwd.inputs[0], y, y], **attrs)]
    return [fwd, OpSignature.make("AvgPoolGrad", [y], x_shape=x.shape, **attrs)]


def pool_case(name):
    op, shape, k, s, mode, dtype = POOL_CASES[name]
    attrs = {"kernel_size": k, "strides": s, "pad_mode": mode}
    # distinct values, 0.05 apart: no window has two maxima within a finite-difference step
    x = (RNG.permutation(int(np.prod(shape))).reshape(shape) * 0.05 - 2.0).astype(dtype)
    ct = rand(infer_outputs(pool_sigs(op, x, attrs)[0])[0].shape, dtype)
    return op, x, attrs, ct, (pair(k), pair(s), mode)


@pytest.mark.parametrize("name", list(POOL_CASES))
def test_pool_grads_match_the_window_reference_and_finite_differences(ex, name):
    op, x, attrs, ct, (k, s, mode) = pool_case(name)
    build(ex, pool_sigs(op, x, attrs))
    y, dx = autodiff_grads(ex, op, [x], attrs, ct)
    dtype = str(x.dtype)
    assert dx.dtype == x.dtype and dx.shape == x.shape
    np.testing.assert_allclose(f64(y), pool_ref(f64(x), op, k, s, mode), **TOL[dtype])
    np.testing.assert_allclose(f64(dx), pool_grad_ref(f64(x), f64(ct), op, k, s, mode), **TOL[dtype])
    numeric = numeric_grads(lambda a: pool_ref(a, op, k, s, mode), [x], ct)
    assert_grads_close([f64(dx)], numeric, **FD_TOL[dtype])


def test_max_pool_grad_follows_the_forward_on_ties_nan_and_inf(ex):
    """Ties: the first maximum in row-major window order gets the gradient (once per window,
    accumulated where overlapping windows share it); a window holding NaN sends it to its first NaN
    (MaxPool's result); an all -inf window to its first element."""
    op, x, attrs, ct, (k, s, mode) = pool_case("max-k3s2-same")
    x = RNG.integers(0, 3, x.shape).astype(np.float32)        # many ties
    # 7x6 input, SAME: window (a, b) covers rows [2a - 1, 2a + 2) and columns [2b, 2b + 3), clipped
    x[0, 0, 0:2, 0:3] = -np.inf                # window (0, 0): all -inf
    x[0, 1, 2, 3] = x[0, 1, 3, 3] = np.nan     # window (1, 1) holds both NaNs, window (2, 1) the second
    build(ex, pool_sigs(op, x, attrs))
    y, dx = autodiff_grads(ex, op, [x], attrs, ct)
    np.testing.assert_array_equal(y, pool_ref(f64(x), op, k, s, mode).astype(np.float32))
    assert np.isneginf(y[0, 0, 0, 0]) and np.isnan(y[0, 1]).sum() == 2
    want = pool_grad_ref(f64(x), f64(ct), op, k, s, mode)
    np.testing.assert_allclose(f64(dx), want, rtol=1e-6, atol=1e-6)
    assert dx[0, 0, 0, 0] == ct[0, 0, 0, 0]
    assert dx[0, 1, 2, 3] == ct[0, 1, 1, 1] and dx[0, 1, 3, 3] == ct[0, 1, 2, 1]


# -------------------------------------------------------------------------------------- jit levels

@pytest.mark.parametrize("kind,name", [("conv", "pad-s2-d2-g2"), ("pool", "max-k3s2-same"),
                                       ("pool", "avg-k3s2-same")])
def test_rules_give_the_same_numbers_at_every_jit_level(ex, kind, name):
    if kind == "conv":
        x, w, attrs, ct, _ = conv_case(name)
        op, arrays, sigs = "Conv2D", [x, w], conv_sigs(x, w, attrs)
    else:
        op, x, attrs, ct, _ = pool_case(name)
        arrays, sigs = [x], pool_sigs(op, x, attrs)
    build(ex, sigs)
    o0 = autodiff_grads(ex, op, arrays, attrs, ct, jit_level="O0")
    for level in ("O1", "O2"):
        for got, want in zip(autodiff_grads(ex, op, arrays, attrs, ct, jit_level=level), o0):
            np.testing.assert_array_equal(got, want, err_msg=level)


# ------------------------------------------------------------------------------ plans and errors

def test_backprop_plans_price_the_forward_cube_work():
    """LeNet's second conv (8x6x14x14 -> 16x10x10, 5x5): each backprop multiplies the same
    2*8*16*10*10*6*25 flops as the forward, on the cube; its bytes are its own inputs and output."""
    x, w = np.zeros((8, 6, 14, 14), np.float32), np.zeros((16, 6, 5, 5), np.float32)
    fwd, bin_, bfil = (plan_kernel(s) for s in conv_sigs(x, w, {"out_channel": 16, "kernel_size": 5}))
    flops = 2 * 8 * 16 * 10 * 10 * 6 * 25
    dout_bytes = 8 * 16 * 10 * 10 * 4
    assert fwd.cost.cube_flops == bin_.cost.cube_flops == bfil.cost.cube_flops == flops
    assert bin_.cost.vector_ops == bfil.cost.vector_ops == 0
    assert bin_.cost.bytes == dout_bytes + w.nbytes + x.nbytes == bfil.cost.bytes
    assert (bin_.func_name, bfil.func_name) == ("conv2d_backprop_input_d", "conv2d_backprop_filter_d")
    assert bin_.outputs == (TensorDesc(x.shape, "float32"),) and bfil.outputs == (TensorDesc(w.shape, "float32"),)
    assert bin_.workspace_sizes == ()                                   # float32 dx accumulates in place
    assert bfil.workspace_sizes == (bfil.block_dim * 10 * 4,)           # one float32 row of ow sums per block


BAD = [
    (("Conv2DBackpropInput", [((1, 4, 6, 6), "float32"), ((4, 3, 3, 3), "float32")],
      {"out_channel": 4, "kernel_size": 3}), "attr input_size=None"),
    (("Conv2DBackpropInput", [((1, 4, 5, 6), "float32"), ((4, 3, 3, 3), "float32")],
      {"out_channel": 4, "kernel_size": 3, "input_size": (1, 3, 8, 8)}), "input 0 (dout) has shape (1, 4, 5, 6)"),
    (("Conv2DBackpropFilter", [((1, 4, 6, 6), "float32"), ((1, 3, 8, 8), "float32")],
      {"out_channel": 4, "kernel_size": 3, "filter_size": (4, 2, 3, 3)}), "attr filter_size shape (4, 2, 3, 3)"),
    (("Conv2DBackpropFilter", [((1, 4, 6, 6), "float16"), ((1, 3, 8, 8), "float32")],
      {"out_channel": 4, "kernel_size": 3, "filter_size": (4, 3, 3, 3)}), "input 1 has dtype float32"),
    (("MaxPoolGrad", [((1, 2, 6, 6), "float32"), ((1, 2, 3, 3), "float32"), ((1, 2, 2, 3), "float32")],
      {"kernel_size": 2, "strides": 2}), "input 2 (dout) has shape (1, 2, 2, 3)"),
    (("AvgPoolGrad", [((1, 2, 3, 3), "float32")], {"kernel_size": 2, "strides": 2, "x_shape": (1, 2, 6)}),
     "attr x_shape"),
]


@pytest.mark.parametrize("s,fragment", BAD, ids=[f"{b[0][0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_backward_signatures_raise(s, fragment):
    op, inputs, attrs = s
    with pytest.raises(InvalidParamError) as info:
        infer_outputs(OpSignature.make(op, inputs, **attrs))
    assert fragment in str(info.value) and op in str(info.value)
