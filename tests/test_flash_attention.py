"""FlashAttentionScore as Ascend runs it (kernels/ops/attention.py): one fused kernel forward, the
FlashAttentionScoreGrad kernel backward, and no B x N x S x S tensor kept.

Oracles: a float64 numpy attention (softmax of the masked, scaled scores; its max and sum), central
finite differences of it (tests/gradcheck.py), the registry composition MindSpore's function used before
(``nn_func._attention``: BatchMatMul, Softmax, BatchMatMul), and for memory the composition's own DryRun
peak, which holds the S^2 scores the fused kernel never materialises.
"""
from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_grads_close, autodiff_grads, numeric_grads
from test_abstract_weights import dry_run

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, context, ops
from ascendemu.frontend.ops.function.nn_func import _attention
from ascendemu.hal.runtime import get_runtime
from ascendemu.kernels.library import plan_kernel
from ascendemu.kernels.ops.attention import FA_STAT_WIDTH
from ascendemu.kernels.signature import OpSignature

RNG = np.random.default_rng(24)


def reference(q, k, v, scale, discard=None):
    """(out, row max, row sum) of BNSD float64 attention; key/value heads repeated for GQA."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, 1), np.repeat(v, group, 1)
    s = q @ k.transpose(0, 1, 3, 2) * scale
    if discard is not None:
        s = np.where(discard, -1e30, s)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    return e / e.sum(-1, keepdims=True) @ v, m, e.sum(-1, keepdims=True)


def to_layout(x, layout):
    b, n, s, d = x.shape
    return {"BNSD": x, "BSND": x.transpose(0, 2, 1, 3), "BSH": x.transpose(0, 2, 1, 3).reshape(b, s, n * d),
            "SBH": x.transpose(2, 0, 1, 3).reshape(s, b, n * d)}[layout]


def qkv(b, n, n_kv, s1, s2, d, dtype="float32"):
    return (RNG.standard_normal((b, n, s1, d)).astype(dtype), RNG.standard_normal((b, n_kv, s2, d)).astype(dtype),
            RNG.standard_normal((b, n_kv, s2, d)).astype(dtype))


def band(s1, s2, mode):
    i, j = np.arange(s1)[:, None], np.arange(s2)[None, :]
    return {2: j > i, 3: j > i + (s2 - s1)}[mode]


@pytest.mark.parametrize("layout", ["BSH", "BNSD", "SBH", "BSND"])
def test_primitive_outputs_match_numpy_in_every_layout_with_gqa(ex, layout):
    """float16, 4 query heads on 2 key/value heads, S1 = 70 (two query blocks), S2 = 300 (two key tiles)."""
    q, k, v = qkv(2, 4, 2, 70, 300, 16, "float16")
    prim = ops.operations.nn_ops.FlashAttentionScore(4, scale_value=0.25, input_layout=layout)
    smax, ssum, _, out = prim(*(Tensor(to_layout(a, layout)) for a in (q, k, v)))
    want, m, s = reference(q, k, v, 0.25)
    assert out.dtype == ms.float16 and out.shape == to_layout(q, layout).shape
    assert smax.shape == ssum.shape == (2, 4, 70, FA_STAT_WIDTH) and smax.dtype == ms.float32
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), to_layout(want, layout), rtol=1e-2, atol=2e-3)
    np.testing.assert_allclose(smax.asnumpy(), np.broadcast_to(m, smax.shape), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ssum.asnumpy(), np.broadcast_to(s, ssum.shape), rtol=1e-4)


@pytest.mark.parametrize("kwargs", [{"sparse_mode": 2}, {"sparse_mode": 3}, {"mask": "BNSS"}, {"mask": "SS"},
                                    {"mask": "SS", "pre_tokens": 3, "next_tokens": 0}])
def test_fused_function_equals_the_composition_under_masks(ex, kwargs):
    """bfloat16 BSH with causal modes, a uint8 (B, 1, S1, S2) mask, an (S1, S2) bool mask and a band:
    the fused kernel gives the registry composition's numbers (the old implementation, the oracle)."""
    q, k, v = (Tensor(to_layout(a, "BSH")).astype(ms.bfloat16) for a in qkv(2, 4, 4, 40, 72, 8))
    kwargs = dict(kwargs)
    kind = kwargs.pop("mask", None)
    if kind is not None:
        m = RNG.random((2, 1, 40, 72) if kind == "BNSS" else (40, 72)) < 0.3
        kwargs["attn_mask"] = Tensor(m.astype(np.uint8) if kind == "BNSS" else m)
    got = ops.flash_attention_score(q, k, v, 4, scalar_value=0.4, **kwargs)
    want, _ = _attention("FlashAttentionScore", q, k, v, heads=4, kv_heads=0, layout="BSH", scale=0.4,
                         mask=kwargs.get("attn_mask"), sparse_mode=kwargs.get("sparse_mode", 0),
                         pre_tokens=kwargs.get("pre_tokens", 2147483647),
                         next_tokens=kwargs.get("next_tokens", 2147483647))
    np.testing.assert_allclose(got.astype(ms.float32).asnumpy(), want.astype(ms.float32).asnumpy(), rtol=2e-2,
                               atol=2e-2)


@pytest.mark.parametrize("mode", [0, 3])
def test_gradients_match_finite_differences(ex, mode):
    """float32 BNSD, GQA (2 query heads per key/value head), causal from the bottom right or none:
    autodiff runs FlashAttentionScoreGrad, which recomputes the scores from the saved statistics."""
    q, k, v = qkv(1, 4, 2, 5, 7, 3)
    attrs = dict(head_num=4, scale_value=0.7, input_layout="BNSD", sparse_mode=mode)
    ct = RNG.standard_normal(q.shape)
    got = autodiff_grads(ex, "FlashAttentionScore", [q, k, v], attrs, ct.astype(np.float32), out_index=3)
    discard = band(5, 7, 3) if mode == 3 else None
    want = numeric_grads(lambda a, b, c: reference(a, b, c, 0.7, discard)[0], [q, k, v], ct)
    np.testing.assert_allclose(got[0], reference(q, k, v, 0.7, discard)[0], rtol=1e-5, atol=1e-5)
    assert_grads_close(got[1:], want, rtol=1e-3, atol=1e-4)


def test_masked_gradient_is_zero_where_discarded(ex):
    """With a user mask, a discarded score passes no gradient (dq, dk from the unmasked pairs only)."""
    q, k, v = qkv(1, 2, 2, 4, 6, 3)
    mask = RNG.random((1, 1, 4, 6)) < 0.4
    mask[..., 0] = False
    attrs = dict(head_num=2, scale_value=0.5, input_layout="BNSD")
    ct = RNG.standard_normal(q.shape)
    got = autodiff_grads(ex, "FlashAttentionScore", [q, k, v, mask], attrs, ct.astype(np.float32), out_index=3)
    want = numeric_grads(lambda a, b, c, _m: reference(a, b, c, 0.5, mask)[0], [q, k, v, mask], ct, wrt=[0, 1, 2])
    assert_grads_close(got[1:4], want[:3], rtol=1e-3, atol=1e-4)


def test_cost_is_ascends_fa_kernel():
    """Cube work 4*B*N*S*S*D forward (halved-plus-diagonal when causal), 2.5x backward; HBM traffic
    linear in S (inputs, outputs, statistics), never the S^2 scores."""
    b, n, s, d = 1, 32, 4096, 128
    q = ((b, s, n * d), "float16")
    attrs = dict(head_num=n, scale_value=0.088, input_layout="BSH")
    fwd = plan_kernel(OpSignature.make("FlashAttentionScore", [q, q, q], **attrs))
    assert fwd.cost.cube_flops == 4 * b * n * s * s * d
    assert fwd.cost.bytes < 5 * b * n * s * d * 2 + 2 * b * n * s * FA_STAT_WIDTH * 4 + 64
    causal = plan_kernel(OpSignature.make("FlashAttentionScore", [q, q, q], sparse_mode=2, **attrs))
    assert causal.cost.cube_flops == 4 * b * n * (s * (s + 1) // 2) * d
    stat = ((b, n, s, FA_STAT_WIDTH), "float32")
    bwd = plan_kernel(OpSignature.make("FlashAttentionScoreGrad", [q, q, q, q, stat, stat, q], **attrs))
    assert bwd.cost.cube_flops == int(2.5 * 4 * b * n * s * s * d)
    assert bwd.cost.bytes < 16 * b * n * s * d * 4


class _Layer(ms.nn.Cell):
    """One attention layer's training step: out = attention(q, k, v); grads of sum(out) wrt q, k, v."""

    def __init__(self, fused: bool):
        super().__init__()
        self.fused = fused

    def construct(self, q, k, v):
        def loss(a, b, c):
            if self.fused:
                out = ops.flash_attention_score(a, b, c, 8, scalar_value=0.088, input_layout="BNSD", sparse_mode=2)
            else:
                out, _ = _attention("FlashAttentionScore", a, b, c, heads=8, kv_heads=0, layout="BNSD", scale=0.088,
                                    sparse_mode=2)
            return out.sum()
        return ms.grad(loss, grad_position=(0, 1, 2))(q, k, v)


def test_dry_run_of_a_layer_at_seq_4096_keeps_no_s_squared_tensor(tmp_path):
    """DryRun of forward + backward at S = 4096, 8 heads, D = 128, float16: the composition's peak
    holds the float32 scores (B*N*S*S*4 = 512 MiB); the fused kernels' is linear in S: a few tensors of
    q's size (inputs, output, gradients, dq's float32 accumulator) and the kernels' tile scratch."""
    s2_bytes = 1 * 8 * 4096 * 4096 * 4
    q_bytes = 1 * 8 * 4096 * 128 * 2
    peaks = {}
    for fused in (True, False):
        with dry_run(tmp_path / str(fused)):
            context.set_context(mode=context.GRAPH_MODE)
            x = [Tensor(np.zeros((1, 8, 4096, 128), np.float16)) for _ in range(3)]
            _Layer(fused)(*x)
            peaks[fused] = get_runtime().mem_stats().peak_used
    assert peaks[False] > s2_bytes
    assert peaks[True] < 14 * q_bytes < s2_bytes / 4
