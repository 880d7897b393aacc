"""Training-mode normalisation, loss kernels and their backward rules.

Each new kernel (BatchNorm training, BatchNormGrad, LayerNormGrad, the two softmax cross-entropy
losses) is checked against a float64 numpy reference written here; each backward rule (Softmax,
LogSoftmax, LayerNorm, BatchNorm in both modes, the losses) against central finite differences of a
numpy forward (tests/gradcheck.py), and the rules' graphs at O0, O1 and O2 against each other.
Kernels run on the emulated device through one DeviceExecutor per test over the session's kernel cache.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascendemu.errors import InvalidParamError
from ascendemu.graph.executor import DeviceExecutor
from ascendemu.hal.runtime import get_runtime
from ascendemu.kernels.library import infer_outputs, plan_kernel
from ascendemu.kernels.signature import OpSignature

from gradcheck import assert_grads_close, autodiff_grads, numeric_grads

RNG = np.random.default_rng(2024)
# one shape per op family, so kernel tests, rule tests and jit-level tests share kernels
LOSS_SHAPE = (6, 10)
SOFTMAX_SHAPE, SOFTMAX_AXIS = (2, 3, 4), 1
BN_SHAPE = (2, 3, 2, 2)


@pytest.fixture
def ex(ascendemu_kernel_cache):
    """A fresh emulated node and executor; kernels come from the session's cache once built."""
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    yield DeviceExecutor(cache_root=str(ascendemu_kernel_cache), progress=False)
    rt.finalize()


def signature(op: str, arrays, **attrs) -> OpSignature:
    return OpSignature.make(op, [(a.shape, str(a.dtype)) for a in arrays], **attrs)


def run(ex: DeviceExecutor, op: str, arrays, blocks: int | None = None, **attrs) -> list[np.ndarray]:
    """The op's kernel on the device; ``blocks``: the block count its plan must have."""
    sig = signature(op, arrays, **attrs)
    if blocks is not None:
        assert plan_kernel(sig).block_dim == blocks
    return ex.run_op(sig, list(arrays), infer_outputs(sig))


def normal(shape, dtype="float32", scale=1.0, shift=0.0):
    return (RNG.standard_normal(shape) * scale + shift).astype(dtype)


def f64(a):
    return np.asarray(a, np.float64)


# --------------------------------------------------------------------------- numpy references

def channel_axes(x) -> tuple[int, ...]:
    return (0,) + tuple(range(2, x.ndim))


def per_channel(v, x):
    return f64(v).reshape((1, -1) + (1,) * (x.ndim - 2))


def bn_train_ref(x, scale, bias, mean, var, eps=1e-5):
    """Training BatchNorm's y: the batch's own mean and biased variance (mean/var are not read)."""
    axes = channel_axes(x)
    mu, v = f64(x).mean(axes, keepdims=True), f64(x).var(axes, keepdims=True)
    return (f64(x) - mu) / np.sqrt(v + eps) * per_channel(scale, x) + per_channel(bias, x)


def bn_infer_ref(x, scale, bias, mean, var, eps=1e-5):
    return (f64(x) - per_channel(mean, x)) / np.sqrt(per_channel(var, x) + eps) * per_channel(scale, x) \
        + per_channel(bias, x)


def layer_norm_ref(norm, params, eps):
    def ref(x, gamma, beta):
        axes = tuple(range(norm, x.ndim))
        mu, v = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
        return (x - mu) / np.sqrt(v + eps) * gamma + beta
    return ref


def log_softmax(x, axis=-1):
    x = f64(x)
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def sparse_ce_ref(logits, labels):
    """Per-sample loss; a label outside [0, C) gives 0 (this library's documented choice)."""
    lsm = log_softmax(logits)
    c = logits.shape[1]
    ok = (labels >= 0) & (labels < c)
    return np.where(ok, -lsm[np.arange(len(labels)), np.clip(labels, 0, c - 1)], 0.0)


def dense_ce_ref(logits, labels):
    return -(f64(labels) * log_softmax(logits)).sum(-1)


# ------------------------------------------------------------------------------- forward kernels

def test_batch_norm_training_kernel_matches_numpy_over_several_blocks(ex):
    x = normal((8, 4, 64, 64), scale=2.0, shift=0.5)
    scale, bias, mean = normal(4), normal(4), normal(4)
    var = RNG.uniform(0.5, 2.0, 4).astype(np.float32)
    y, new_mean, new_var, saved_mean, saved_invstd = run(ex, "BatchNorm", [x, scale, bias, mean, var], blocks=2,
                                                         is_training=True, epsilon=1e-3, momentum=0.25)
    axes, n = channel_axes(x), x.size // 4
    mu, biased = f64(x).mean(axes), f64(x).var(axes)
    np.testing.assert_allclose(y, bn_train_ref(x, scale, bias, mean, var, 1e-3), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(saved_mean, mu, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(saved_invstd, 1 / np.sqrt(biased + 1e-3), rtol=1e-6)
    np.testing.assert_allclose(new_mean, 0.75 * f64(mean) + 0.25 * mu, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(new_var, 0.75 * f64(var) + 0.25 * biased * n / (n - 1), rtol=1e-6)


def test_batch_norm_1d_training_moving_statistics_by_hand(ex):
    """(N, C) float16 x with float32 parameters, values chosen so every statistic is exact:
    channel 0 = [1, 3, 1, 3] (mean 2, biased variance 1, unbiased 4/3), channel 1 = [0, 0, 0, 4]
    (mean 1, biased variance 3, unbiased 4)."""
    x = np.array([[1, 0], [3, 0], [1, 0], [3, 4]], np.float16)
    scale, bias = np.array([2, 1], np.float32), np.array([0.5, 0], np.float32)
    mean, var = np.array([10, -2], np.float32), np.array([1, 2], np.float32)
    y, new_mean, new_var, saved_mean, saved_invstd = run(ex, "BatchNorm", [x, scale, bias, mean, var],
                                                         is_training=True, epsilon=0.0, momentum=0.1)
    assert y.dtype == np.float16 and new_mean.dtype == saved_invstd.dtype == np.float32
    np.testing.assert_allclose(new_mean, [0.9 * 10 + 0.1 * 2, 0.9 * -2 + 0.1 * 1], rtol=1e-6)
    np.testing.assert_allclose(new_var, [0.9 * 1 + 0.1 * 4 / 3, 0.9 * 2 + 0.1 * 4], rtol=1e-6)
    np.testing.assert_allclose(saved_mean, [2, 1], rtol=1e-7)
    np.testing.assert_allclose(saved_invstd, [1, 1 / np.sqrt(3)], rtol=1e-6)
    # y uses the biased variance: channel 0 -> +-1 * 2 + 0.5, channel 1 -> (x - 1) / sqrt(3)
    np.testing.assert_allclose(y[:, 0], [-1.5, 2.5, -1.5, 2.5])
    np.testing.assert_allclose(y[:, 1], np.array([-1, -1, -1, 3]) / np.sqrt(3), rtol=1e-3)


def test_batch_norm_training_all_float16_matches_numpy(ex):
    """Every input float16 (amp O2 with keep_batchnorm_fp32=False, as the zoo's VGG16 trains): the
    kernel stores float64 moving statistics into float16 parameters. It builds (LLVM leaves a float16
    converter call in this kernel, which the codegen inlines, see tests/test_binary.py) and matches
    numpy to float16 rounding."""
    x = normal((2, 64, 4, 4), "float16", scale=2.0, shift=0.5)
    scale, bias, mean = normal(64, "float16"), normal(64, "float16"), normal(64, "float16")
    var = RNG.uniform(0.5, 2.0, 64).astype(np.float16)
    y, new_mean, new_var, saved_mean, _ = run(ex, "BatchNorm", [x, scale, bias, mean, var],
                                              is_training=True, epsilon=1e-5, momentum=0.1)
    assert y.dtype == new_mean.dtype == new_var.dtype == np.float16 and saved_mean.dtype == np.float32
    axes, n = channel_axes(x), x.size // 64
    mu, biased = f64(x).mean(axes), f64(x).var(axes)
    np.testing.assert_allclose(y, bn_train_ref(x, scale, bias, mean, var), rtol=2e-3, atol=4e-3)
    np.testing.assert_allclose(new_mean, 0.9 * f64(mean) + 0.1 * mu, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(new_var, 0.9 * f64(var) + 0.1 * biased * n / (n - 1), rtol=1e-3)


def test_batch_norm_grad_kernel_matches_numpy_over_several_blocks(ex):
    x, dy = normal((8, 4, 64, 64), shift=1.0), normal((8, 4, 64, 64))
    scale = normal(4)
    axes, n = channel_axes(x), x.size // 4
    mu, invstd = f64(x).mean(axes), 1 / np.sqrt(f64(x).var(axes) + 1e-5)
    dx, dscale, dbias = run(ex, "BatchNormGrad", [dy, x, scale, mu.astype(np.float32),
                                                  invstd.astype(np.float32)], blocks=2, is_training=True)
    xhat = (f64(x) - per_channel(mu, x)) * per_channel(invstd, x)
    want_dbias, want_dscale = f64(dy).sum(axes), (f64(dy) * xhat).sum(axes)
    want_dx = per_channel(f64(scale) * invstd, x) * (
        f64(dy) - per_channel(want_dbias / n, x) - xhat * per_channel(want_dscale / n, x))
    np.testing.assert_allclose(dbias, want_dbias, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(dscale, want_dscale, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-4, atol=1e-5)


# the small float32 cases are also the signatures the LayerNorm rule tests build
@pytest.mark.parametrize("shape,norm,params,dtype,blocks", [((64, 2048), 1, 1, "float32", 2),
                                                            ((2, 3, 8), 1, 2, "float16", 1),
                                                            ((2, 3, 4), 1, 2, "float32", 1),  # gamma repeats in a row
                                                            ((2, 3, 4), 2, 1, "float32", 1)])  # gamma spans rows
def test_layer_norm_grad_kernel_matches_numpy(ex, shape, norm, params, dtype, blocks):
    x, dy, gamma = normal(shape, dtype, 2.0, 1.0), normal(shape, dtype), normal(shape[params:], dtype)
    axes = tuple(range(norm, len(shape)))
    mean, var = f64(x).mean(axes, keepdims=True), f64(x).var(axes, keepdims=True)
    dx, dgamma, dbeta = run(ex, "LayerNormGrad", [dy, x, gamma, mean.astype(dtype), var.astype(dtype)],
                            blocks, begin_norm_axis=norm, begin_params_axis=params, epsilon=1e-5)
    # the reference uses the statistics the kernel was given (rounded to dtype)
    m, rstd = f64(mean.astype(dtype)), 1 / np.sqrt(f64(var.astype(dtype)) + 1e-5)
    xhat, g = (f64(x) - m) * rstd, f64(dy) * f64(gamma)
    want_dx = rstd * (g - g.mean(axes, keepdims=True) - xhat * (g * xhat).mean(axes, keepdims=True))
    lead = tuple(range(params))
    tol = dict(rtol=1e-2, atol=1e-2) if dtype == "float16" else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx, want_dx, **tol)
    np.testing.assert_allclose(dgamma, (f64(dy) * xhat).sum(lead), **tol)
    np.testing.assert_allclose(dbeta, f64(dy).sum(lead), **tol)


def test_sparse_cross_entropy_kernel_is_stable_and_zeroes_out_of_range_labels(ex):
    logits = normal(LOSS_SHAPE, scale=3.0)
    logits[1] += 1000.0                          # exp(x) alone would overflow float32
    logits[2, 4] = 15.0                          # a confident row: a loss of ~1e-5, exact to 1e-6
    labels = np.array([3, 7, 4, 0, -1, 10], np.int32)
    loss, backprop = run(ex, "SparseSoftmaxCrossEntropyWithLogits", [logits, labels])
    np.testing.assert_allclose(loss, sparse_ce_ref(logits, labels), rtol=1e-6, atol=1e-30)
    want = np.exp(log_softmax(logits)) - np.eye(10)[np.clip(labels, 0, 9)]
    want[4:] = 0.0                               # labels -1 and 10: zero loss and zero gradient row
    np.testing.assert_allclose(backprop, want, rtol=1e-6, atol=1e-7)
    assert loss[4] == loss[5] == 0.0


def probabilities(shape=LOSS_SHAPE):
    return RNG.dirichlet(np.ones(shape[1]), shape[0]).astype(np.float32)


def test_dense_cross_entropy_kernel_matches_numpy(ex):
    logits, labels = normal(LOSS_SHAPE, scale=3.0), probabilities()
    logits[0] += 1000.0
    loss, backprop = run(ex, "SoftmaxCrossEntropyWithLogits", [logits, labels])
    np.testing.assert_allclose(loss, dense_ce_ref(logits, labels), rtol=1e-6)
    np.testing.assert_allclose(backprop, np.exp(log_softmax(logits)) - f64(labels), rtol=1e-6, atol=1e-7)


# --------------------------------------------------------------------------------- backward rules

def gradcheck(ex, op, arrays, attrs, reference, wrt=None, rtol=2e-3, atol=2e-3):
    """The rule's gradients (autodiff graph on the device, O0) against finite differences of
    ``reference`` (output 0 of ``op``); also checks the forward value. Returns [y, grads...]."""
    out = infer_outputs(signature(op, arrays, **attrs))[0]
    cotangent = normal(out.shape, out.dtype)
    got = autodiff_grads(ex, op, arrays, attrs, cotangent)
    np.testing.assert_allclose(got[0], reference(*[f64(a) if a.dtype.kind == "f" else a for a in arrays]),
                               rtol=rtol, atol=atol)
    assert_grads_close(got[1:], numeric_grads(reference, arrays, cotangent, wrt), rtol, atol)
    return got


@pytest.mark.parametrize("op,ref", [("Softmax", lambda x: np.exp(log_softmax(x, SOFTMAX_AXIS))),
                                    ("LogSoftmax", lambda x: log_softmax(x, SOFTMAX_AXIS))])
def test_softmax_rules_match_finite_differences(ex, op, ref):
    gradcheck(ex, op, [normal(SOFTMAX_SHAPE)], {"axis": SOFTMAX_AXIS}, ref)


@pytest.mark.parametrize("shape,norm,params", [((2, 3, 4), 1, 2), ((2, 3, 4), 2, 1)])
def test_layer_norm_rule_matches_finite_differences(ex, shape, norm, params):
    arrays = [normal(shape, scale=2.0), normal(shape[params:]), normal(shape[params:])]
    gradcheck(ex, "LayerNorm", arrays, {"begin_norm_axis": norm, "begin_params_axis": params, "epsilon": 1e-5},
              layer_norm_ref(norm, params, 1e-5))


def bn_arrays(shape, dtype="float32"):
    c = shape[1]
    return [normal(shape, dtype, 2.0, 0.5), normal(c), normal(c), normal(c),
            RNG.uniform(0.5, 2.0, c).astype(np.float32)]


def test_batch_norm_training_rule_matches_finite_differences(ex):
    """dx, dscale, dbias through BatchNormGrad; the moving statistics get zeros (y does not read them)."""
    got = gradcheck(ex, "BatchNorm", bn_arrays(BN_SHAPE),
                    {"is_training": True, "epsilon": 1e-5, "momentum": 0.1}, bn_train_ref)
    assert not got[4].any() and not got[5].any()


def test_batch_norm_training_rule_float16_input(ex):
    """float16 (N, C) x with float32 parameters (the signature of the by-hand test): dx comes back
    float16, dscale/dbias float32."""
    got = gradcheck(ex, "BatchNorm", bn_arrays((4, 2), "float16"),
                    {"is_training": True, "epsilon": 0.0, "momentum": 0.1},
                    lambda *a: bn_train_ref(*a, eps=0.0), rtol=2e-2, atol=2e-2)
    assert got[1].dtype == np.float16 and got[2].dtype == got[3].dtype == np.float32


def test_batch_norm_inference_rule_matches_finite_differences(ex):
    """Fixed statistics: y is affine in x; scale and bias gradients as in training, mean and
    variance get none (they are state)."""
    gradcheck(ex, "BatchNorm", bn_arrays((3, 2, 2, 3)), {"epsilon": 1e-3},
              lambda *a: bn_infer_ref(*a, eps=1e-3), wrt=[0, 1, 2])


def test_sparse_cross_entropy_rule_matches_finite_differences(ex):
    logits, labels = normal(LOSS_SHAPE, scale=2.0), np.array([0, 9, 2, 2, 5, 1], np.int32)
    gradcheck(ex, "SparseSoftmaxCrossEntropyWithLogits", [logits, labels], {}, sparse_ce_ref)


def test_dense_cross_entropy_rule_gives_labels_no_gradient_as_mindspore(ex):
    """Logits' gradient against finite differences; labels get zeros, as MindSpore's bprop returns
    zeros_like(labels) (recorded: tests/conformance/losses.py's SoftmaxCrossEntropyWithLogits)."""
    logits, labels = normal(LOSS_SHAPE, scale=2.0), probabilities()
    got = gradcheck(ex, "SoftmaxCrossEntropyWithLogits", [logits, labels], {}, dense_ce_ref, wrt=[0])
    np.testing.assert_array_equal(got[2], np.zeros_like(labels))


@pytest.mark.parametrize("op,arrays,attrs", [
    ("BatchNorm", bn_arrays(BN_SHAPE), {"is_training": True, "epsilon": 1e-5, "momentum": 0.1}),
    ("LayerNorm", [normal((2, 3, 4)), normal((4,)), normal((4,))],
     {"begin_norm_axis": 1, "begin_params_axis": 2, "epsilon": 1e-5}),
    ("Softmax", [normal(SOFTMAX_SHAPE)], {"axis": SOFTMAX_AXIS}),
    ("SoftmaxCrossEntropyWithLogits", [normal(LOSS_SHAPE), probabilities()], {}),
])
def test_rules_agree_at_every_jit_level(ex, op, arrays, attrs):
    cotangent = normal(infer_outputs(signature(op, arrays, **attrs))[0].shape)
    base = autodiff_grads(ex, op, arrays, attrs, cotangent, 0, "O0")
    for level in ("O1", "O2"):
        for got, want in zip(autodiff_grads(ex, op, arrays, attrs, cotangent, 0, level), base):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=level)


# --------------------------------------------------------------------------------------- validation

BAD = [
    (("BatchNorm", [((2, 3), "float32")] + [((3,), "float32")] * 4, {"is_training": True, "momentum": 1.5}),
     "attr momentum"),
    (("BatchNorm", [((1, 3), "float32")] + [((3,), "float32")] * 4, {"is_training": True}),
     "at least 2 values per channel"),
    (("BatchNorm", [((2, 3), "float32")] + [((3,), "float32")] * 4, {"is_training": 1}), "attr is_training"),
    (("BatchNormGrad", [((2, 3), "float32"), ((2, 4), "float32")] + [((4,), "float32")] * 3), "input 0 (dy)"),
    (("BatchNormGrad", [((2, 3), "float32")] * 2 + [((3,), "float32")] * 2 + [((3,), "int32")],
      {"is_training": True}), "input 4 (saved_invstd)"),
    (("BatchNormGrad", [((2, 3), "float32")] * 2 + [((3,), "float32")] * 2 + [((3,), "int32")]),
     "input 4 (variance)"),
    (("LayerNormGrad", [((2, 4), "float32")] * 2 + [((4,), "float32"), ((2, 1), "float32"), ((2,), "float32")]),
     "input 4 (variance)"),
    (("SparseSoftmaxCrossEntropyWithLogits", [((4, 5), "float32"), ((4,), "float32")]), "input 1 (labels)"),
    (("SparseSoftmaxCrossEntropyWithLogits", [((4, 5), "float32"), ((5,), "int32")]), "shape (4,)"),
    (("SoftmaxCrossEntropyWithLogits", [((4, 0), "float32"), ((4, 0), "float32")]), "at least one class"),
]


@pytest.mark.parametrize("s,fragment", BAD, ids=[f"{b[0][0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_signatures_raise(s, fragment):
    op, inputs, *attrs = s
    with pytest.raises(InvalidParamError) as info:
        infer_outputs(OpSignature.make(op, inputs, **(attrs[0] if attrs else {})))
    assert fragment in str(info.value) and op in str(info.value)
