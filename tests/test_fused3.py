"""Fused and sparse optimizer primitives (breadth round 3, family ``fused3``): SparseApply*, FusedSparse*,
FusedWeightScaleApplyMomentum, FusedCastAdamWeightDecay, FusedAdaFactor(WithGlobalNorm).

Oracles: numpy float64 formulas from MindSpore's documentation (and, for FusedWeightScaleApplyMomentum, its GPU
kernel's), for the primitives MindSpore 2.10 CPU cannot run; numbers recorded once from MindSpore 2.10 CPU
(literals below, recorded with the inputs of ``_inputs()``). The CPU-runnable ones are also compared with
MindSpore in tests/conformance/fused3.py."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops

F32 = np.float32


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def _inputs():
    """var, accum (positive), linear, a (3, 3) gradient; the probe inputs the MindSpore literals come from."""
    rng = np.random.RandomState(0)
    var = rng.rand(4, 3).astype(F32)
    accum = rng.rand(4, 3).astype(F32) + 0.5
    linear = rng.rand(4, 3).astype(F32)
    grad = rng.randn(3, 3).astype(F32)
    return var, accum, linear, grad


def _dense(grad, indices, rows):
    """The gradient rows summed per index (repeated indices add), zeros elsewhere; the touched rows."""
    out = np.zeros((rows,) + grad.shape[1:], np.float64)
    np.add.at(out, indices, grad.astype(np.float64))
    touched = np.zeros(rows, bool)
    touched[indices] = True
    return out, touched[:, None]


def _params(*arrays):
    return [Parameter(Tensor(a.copy()), name=f"p{i}") for i, a in enumerate(arrays)]


UNIQUE = np.array([0, 2, 3], np.int32)
REPEATED = np.array([0, 2, 0], np.int32)


def proximal_adagrad_ref(var, accum, lr, l1, l2, g):
    acc = accum + g * g
    rate = lr / np.sqrt(acc)
    prox = var - rate * g
    return np.sign(prox) * np.maximum(np.abs(prox) - rate * l1, 0) / (1 + rate * l2), acc


def ftrl_v2_ref(var, accum, linear, g, lr, l1, l2, shrinkage, lr_power):
    """TensorFlow's/MindSpore's FTRL with l2 shrinkage (the documented SparseApplyFtrlV2 formula)."""
    shrunk = g + 2 * shrinkage * var
    acc = accum + g * g
    lin = linear + shrunk - (acc ** -lr_power - accum ** -lr_power) / lr * var
    quadratic = acc ** -lr_power / lr + 2 * l2
    new = np.where(np.abs(lin) > l1, (np.sign(lin) * l1 - lin) / quadratic, 0.0)
    return new, acc, lin


def adadelta_ref(var, accum, update, lr, rho, eps, g):
    acc = rho * accum + (1 - rho) * g * g
    step = np.sqrt(update + eps) / np.sqrt(acc + eps) * g
    return var - lr * step, acc, rho * update + (1 - rho) * step * step


@pytest.mark.parametrize("indices", [UNIQUE, REPEATED], ids=["unique", "repeated"])
def test_sparse_proximal_adagrad_updates_only_the_indexed_rows(indices):
    var, accum, _, grad = _inputs()
    dense, touched = _dense(grad, indices, 4)
    want_var, want_acc = proximal_adagrad_ref(var.astype(np.float64), accum.astype(np.float64), 0.1, 0.01, 0.02, dense)
    pv, pa = _params(var, accum)
    out = ops.SparseApplyProximalAdagrad()(pv, pa, 0.1, 0.01, 0.02, Tensor(grad), Tensor(indices))
    np.testing.assert_allclose(out[0].asnumpy(), np.where(touched, want_var, var), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pa.asnumpy(), np.where(touched, want_acc, accum), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(pv.asnumpy(), out[0].asnumpy())
    np.testing.assert_array_equal(pv.asnumpy()[1], var[1])        # an untouched row is kept bit for bit


def test_sparse_ftrl_v2_adds_the_l2_shrinkage_to_the_linear_gradient():
    var, accum, linear, grad = _inputs()
    dense, touched = _dense(grad, UNIQUE, 4)
    want = ftrl_v2_ref(var.astype(np.float64), accum.astype(np.float64), linear.astype(np.float64), dense,
                       0.1, 0.01, 0.02, 0.1, -0.5)
    params = _params(var, accum, linear)
    out = ops.SparseApplyFtrlV2(0.1, 0.01, 0.02, 0.1, -0.5)(*params, Tensor(grad), Tensor(UNIQUE))
    for got, param, ref, old in zip(out, params, want, (var, accum, linear)):
        np.testing.assert_allclose(got.asnumpy(), np.where(touched, ref, old), rtol=2e-5, atol=2e-6)
        np.testing.assert_array_equal(param.asnumpy(), got.asnumpy())


def test_sparse_adadelta_matches_its_documented_formula():
    var, accum, update, _ = _inputs()
    grad = np.random.RandomState(1).randn(4, 3).astype(F32)
    indices = np.array([3, 1, 0, 2], np.int32)
    dense, _ = _dense(grad, indices, 4)
    want = adadelta_ref(var.astype(np.float64), accum.astype(np.float64), update.astype(np.float64), 0.01, 0.9,
                        1e-6, dense)
    out = ops.SparseApplyAdadelta(1e-6)(*_params(var, accum, update), 0.01, 0.9, Tensor(grad), Tensor(indices))
    for got, ref in zip(out, want):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=2e-5, atol=2e-6)


def test_repeated_indices_sum_their_rows_as_mindspore_cpu_sparse_adagrad_does():
    """Recorded once from MindSpore 2.10 CPU: SparseApplyAdagrad(lr=0.1) and FusedSparseAdam on ``_inputs()``
    with indices [0, 2, 0] (FusedSparseAdam: m = accum, v = linear, beta powers 0.9/0.999, lr 0.01,
    betas 0.9/0.999, epsilon 1e-8)."""
    var, accum, linear, grad = _inputs()
    pv, pa = _params(var, accum)
    ops.SparseApplyAdagrad(lr=0.1)(pv, pa, Tensor(grad), Tensor(REPEATED))
    np.testing.assert_allclose(pv.asnumpy().ravel()[:6],
                               [0.47345203, 0.63459134, 0.514976, 0.5448832, 0.4236548, 0.6458941], rtol=1e-5)
    np.testing.assert_allclose(pa.asnumpy().ravel()[:6],
                               [2.4719543, 4.0685225, 2.4899206, 0.5871293, 0.5202184, 1.3326199], rtol=1e-5)
    pv, pm, pvv = _params(var, accum, linear)
    s = [Tensor(np.array([x], F32)) for x in (0.9, 0.999, 0.01, 0.9, 0.999, 1e-8)]
    out = ops.FusedSparseAdam()(pv, pm, pvv, *s, Tensor(grad), Tensor(REPEATED))
    np.testing.assert_allclose(pv.asnumpy().ravel()[:6],
                               [0.53893894, 0.7094837, 0.59734744, 0.5431631, 0.42160425, 0.6400014], rtol=1e-5)
    np.testing.assert_allclose(pm.asnumpy().ravel()[:6],
                               [1.0797268, 1.4456079, 0.6524562, 0.52841634, 0.4681965, 1.1993579], rtol=1e-5)
    np.testing.assert_array_equal(out[1].asnumpy(), np.zeros((4, 3), F32))     # a placeholder, as on CPU


def test_fused_weight_scale_apply_momentum_is_the_gpu_kernels_formula():
    var, accum, _, grad = _inputs()
    g = np.random.RandomState(2).randn(4, 3)
    pv, pa = _params(var, accum)
    out = ops.FusedWeightScaleApplyMomentum()(Tensor(F32(0.1)), Tensor(F32(0.5)), pv, pa, Tensor(F32(0.1)),
                                              Tensor(g.astype(F32)), Tensor(F32(0.9)))
    scaled = (var * 0.1 + g.astype(F32).astype(np.float64)) * 0.5
    acc = 0.9 * accum + scaled
    np.testing.assert_allclose(pa.asnumpy(), acc, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), var - 0.1 * acc, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(pv.asnumpy(), out.asnumpy())


class _SparseNet(nn.Cell):
    """SparseApplyFtrlV2 on the Cell's Parameters: in GRAPH_MODE the graph assigns the new values."""

    def __init__(self, var, accum, linear):
        super().__init__()
        self.ftrl = ops.SparseApplyFtrlV2(0.1, 0.01, 0.02, 0.1, -0.5)
        self.var, self.accum, self.linear = _params(var, accum, linear)

    def construct(self, grad, indices):
        return self.ftrl(self.var, self.accum, self.linear, grad, indices)[0]


def test_graph_mode_updates_the_parameters():
    ms.set_context(mode=ms.GRAPH_MODE)
    var, accum, linear, grad = _inputs()
    net = _SparseNet(var, accum, linear)
    out = net(Tensor(grad), Tensor(UNIQUE)).asnumpy()
    dense, touched = _dense(grad, UNIQUE, 4)
    want = ftrl_v2_ref(var.astype(np.float64), accum.astype(np.float64), linear.astype(np.float64), dense,
                       0.1, 0.01, 0.02, 0.1, -0.5)
    np.testing.assert_allclose(out, np.where(touched, want[0], var), rtol=2e-5, atol=2e-6)
    np.testing.assert_array_equal(net.var.asnumpy(), out)
    np.testing.assert_allclose(net.linear.asnumpy(), np.where(touched, want[2], linear), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("grad_shape, indices, message", [
    ((3, 3), np.array([[0, 1, 2]], np.int32), "1-D"),
    ((3, 2), UNIQUE, "var.shape"),
    ((2, 3), UNIQUE, "indices.shape"),
])
def test_sparse_updates_refuse_inconsistent_shapes(grad_shape, indices, message):
    var, accum, _, _ = _inputs()
    with pytest.raises(ValueError, match=message):
        ops.SparseApplyAdagrad(lr=0.1)(*_params(var, accum), Tensor(np.ones(grad_shape, F32)), Tensor(indices))


@pytest.mark.parametrize("weight_decay, lr, use_clip", [(0.0, 1.0, False), (0.1, 0.5, False), (0.1, 0.5, True)])
def test_lars_update_is_the_layerwise_trust_ratio(weight_decay, lr, use_clip):
    """MindSpore's docstring example (first case: [[0.0005265 0.0005265 0.00065813] ...]) and nn.LARS's formula."""
    w = np.array([[0.5, 0.8, 0.2], [0.6, 0.4, 0.2]], F32)
    g = np.array([[0.4, 0.4, 0.5], [0.2, 0.4, 0.3]], F32)
    w_norm, g_norm = np.sqrt((w.astype(np.float64) ** 2).sum()), np.sqrt((g.astype(np.float64) ** 2).sum())
    ratio = 0.001 * w_norm / (g_norm + weight_decay * w_norm + 1e-5)
    ratio = min(ratio / lr, 1.0) if use_clip else ratio
    got = ops.LARSUpdate(use_clip=use_clip)(Tensor(w), Tensor(g), Tensor(F32((w * w).sum())),
                                             Tensor(F32((g * g).sum())), weight_decay, lr).asnumpy()
    np.testing.assert_allclose(got, (g + weight_decay * w) * ratio, rtol=1e-5)
    if weight_decay == 0.0:
        np.testing.assert_allclose(got[0], [0.0005265, 0.0005265, 0.00065813], rtol=1e-4)


def _ring_ref(po, pm, ps, co, cm, cs):
    m = np.maximum(pm, cm)
    w1, w2 = ps * np.exp(pm - m), cs * np.exp(cm - m)
    s = w1 + w2
    return w1 / s, w2 / s, m, s


@pytest.mark.parametrize("layout", ["SBH", "TND"])
def test_ring_attention_update_merges_two_partial_softmaxes(layout):
    rng = np.random.RandomState(123)
    heads, dim = 2, 4
    out_shape, stat_shape = ((3, 2, heads * dim), (2, heads, 3, 8)) if layout == "SBH" else ((5, heads, dim),
                                                                                             (5, heads, 8))
    po, co = (rng.uniform(-1, 1, out_shape).astype(F32) for _ in range(2))
    pm, cm = (np.repeat(rng.uniform(-1, 1, stat_shape[:-1] + (1,)), 8, -1).astype(F32) for _ in range(2))
    ps, cs = (np.repeat(rng.uniform(0.5, 2, stat_shape[:-1] + (1,)), 8, -1).astype(F32) for _ in range(2))
    r1, r2, m, s = _ring_ref(po, pm, ps, co, cm, cs)
    if layout == "SBH":        # (B, N, S) ratios against the (S, B, N, D) view
        r1, r2 = (r[..., 0].transpose(2, 0, 1)[..., None] for r in (r1, r2))
        want = (po.reshape(3, 2, heads, dim) * r1 + co.reshape(3, 2, heads, dim) * r2).reshape(out_shape)
        seq = None
    else:
        want = po * r1[..., :1] + co * r2[..., :1]
        seq = Tensor(np.array([0, 2, 5], np.int64))
    got = ops.ring_attention_update(*(Tensor(a) for a in (po, pm, ps, co, cm, cs)), actual_seq_qlen=seq,
                                    layout=layout)
    np.testing.assert_allclose(got[0].asnumpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1].asnumpy(), m, rtol=1e-6)
    np.testing.assert_allclose(got[2].asnumpy(), s, rtol=1e-5)
    with pytest.raises(RuntimeError, match="actual_seq_qlen"):
        ops.ring_attention_update(*(Tensor(a) for a in (po, pm, ps, co, cm, cs)), layout="TND")


def test_moe_init_routing_v2_is_mindspores_documented_example():
    """MindSpore's docstring example (drop/pad), and the dropless routing against a numpy stable sort."""
    x = np.array([[0.1, 0.2, 0.3], [0.2, 0.7, 0.8], [0.3, 0.3, 0.5]], F32)     # the example's float16 as float32
    idx = np.array([[0, 1, 1], [2, 1, 1], [0, 0, 0]], np.int32)
    out, row_idx, before = ops.moe_init_routing_v2(Tensor(x), Tensor(idx), 3, 2, 3, 1, 0, True)
    np.testing.assert_array_equal(out.asnumpy(), np.array([[x[0], x[2]], [x[0], x[0]], [x[1], np.zeros(3)]], F32))
    np.testing.assert_array_equal(row_idx.asnumpy(), [0, 2, 3, 4, -1, -1, 1, -1, -1])
    np.testing.assert_array_equal(before.asnumpy(), [4, 4, 1])
    order = np.argsort(idx.ravel(), kind="stable")
    out, row_idx, cumsum = ops.moe_init_routing_v2(Tensor(x), Tensor(idx), 4, 0, 3, 0, 1, False)
    np.testing.assert_array_equal(out.asnumpy(), x[order // 3][:4])
    np.testing.assert_array_equal(row_idx.asnumpy(), np.argsort(order))
    np.testing.assert_array_equal(cumsum.asnumpy(), [4, 8, 9])


def test_paged_attention_reads_each_tokens_blocks_up_to_its_context_length():
    """GQA (4 heads over 2 kv heads), two blocks of 4 positions per token, context lengths 5, 8 and 1."""
    rng = np.random.RandomState(0)
    tokens, heads, kv_heads, dim, block = 3, 4, 2, 8, 4
    q = rng.randn(tokens, heads, dim).astype(F32)
    kc, vc = (rng.randn(6, block, kv_heads, dim).astype(F32) for _ in range(2))
    tables, lens = np.array([[0, 3], [5, 1], [2, 4]], np.int32), np.array([5, 8, 1], np.int32)
    got = ops.PagedAttention(heads, 0.3, kv_heads)(Tensor(q), Tensor(kc), Tensor(vc), Tensor(tables),
                                                   Tensor(lens)).asnumpy()
    want = np.zeros((tokens, heads, dim))
    for t in range(tokens):
        k = kc[tables[t]].reshape(-1, kv_heads, dim)[:lens[t]].astype(np.float64)
        v = vc[tables[t]].reshape(-1, kv_heads, dim)[:lens[t]].astype(np.float64)
        for n in range(heads):
            s = k[:, n // 2] @ q[t, n] * 0.3
            p = np.exp(s - s.max())
            want[t, n] = p @ v[:, n // 2] / p.sum()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_paged_attention_mask_adds_the_alibi_bias_to_the_scaled_scores():
    rng = np.random.RandomState(1)
    heads, dim, block = 2, 8, 4
    q = rng.randn(2, heads, dim).astype(F32)
    kc, vc = (rng.randn(4, block, heads, dim).astype(F32) for _ in range(2))
    tables, lens = np.array([[1, 2], [3, 0]], np.int32), np.array([6, 3], np.int32)
    alibi = rng.randn(2, heads, 1, 2 * block).astype(F32)
    got = ops.PagedAttentionMask(heads, 0.25, heads)(Tensor(q), Tensor(kc), Tensor(vc), Tensor(tables), Tensor(lens),
                                                     None, None, Tensor(alibi)).asnumpy()
    want = np.zeros(q.shape)
    for t in range(2):
        k = kc[tables[t]].reshape(-1, heads, dim)[:lens[t]].astype(np.float64)
        v = vc[tables[t]].reshape(-1, heads, dim)[:lens[t]].astype(np.float64)
        for n in range(heads):
            s = k[:, n] @ q[t, n] * 0.25 + alibi[t, n, 0, :lens[t]]
            p = np.exp(s - s.max())
            want[t, n] = p @ v[:, n] / p.sum()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
