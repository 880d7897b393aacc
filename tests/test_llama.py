"""The MindFormers-style Llama of examples/llama (RMSNorm, rotary embedding, SwiGLU, grouped-query attention
through FlashAttentionScore, causal) trained in GRAPH_MODE.

Oracle: a float64 numpy forward of the same weights (written here from the Llama equations, not from the
example's cells): the first step's loss must equal it within float16 compute's tolerance; the loss must
then fall under AdamWeightDecay.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.cli.run import install_mindspore_alias

install_mindspore_alias()            # the example imports `mindspore`, as under `ascendemu run`
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "llama"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.frontend import Tensor, context, nn  # noqa: E402
from llama import LlamaForCausalLM  # noqa: E402
from llama_config import LlamaConfig  # noqa: E402
from record_msdryrun_parallel import memory_blocks_summary  # noqa: E402  (how MindSpore's file is read)

VOCAB, SEQ = 64, 16


def numpy_loss(net: LlamaForCausalLM, cfg: LlamaConfig, ids: np.ndarray) -> float:
    """The pretraining loss of ``net``'s weights in float64: causal softmax attention with rotary
    position embedding and grouped key/value heads, SwiGLU, RMSNorm, mean cross entropy over non-pad tokens."""
    def w(p):
        return p.asnumpy().astype(np.float64)

    def rms(x, weight):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + cfg.rms_norm_eps) * w(weight)

    tokens, labels = ids[:, :-1], ids[:, 1:]
    b, s = tokens.shape
    n, hd = cfg.num_heads, cfg.hidden_size // cfg.num_heads
    n_kv = cfg.n_kv_heads or n
    inv = cfg.theta ** (-np.arange(0, hd, 2) / hd)
    angles = np.arange(s)[:, None] * inv[None, :]
    cos, sin = np.cos(np.concatenate([angles, angles], -1)), np.sin(np.concatenate([angles, angles], -1))

    def rope(x):                      # x (B, N, S, hd): x * cos + rotate_half(x) * sin
        return x * cos + np.concatenate([-x[..., hd // 2:], x[..., :hd // 2]], -1) * sin

    def heads(x, count):
        return x.reshape(b, s, count, hd).transpose(0, 2, 1, 3)

    h = w(net.model.tok_embeddings.embedding_weight)[tokens]
    causal = np.triu(np.ones((s, s), bool), 1)
    for layer in net.model.layers:
        att = layer.attention
        x = rms(h, layer.attention_norm.weight)
        q = rope(heads(x @ w(att.wq.weight).T, n))
        k = np.repeat(rope(heads(x @ w(att.wk.weight).T, n_kv)), n // n_kv, 1)
        v = np.repeat(heads(x @ w(att.wv.weight).T, n_kv), n // n_kv, 1)
        scores = np.where(causal, -np.inf, q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd))
        p = np.exp(scores - scores.max(-1, keepdims=True))
        o = (p / p.sum(-1, keepdims=True)) @ v
        h = h + o.transpose(0, 2, 1, 3).reshape(b, s, n * hd) @ w(att.wo.weight).T
        x = rms(h, layer.ffn_norm.weight)
        ff = layer.feed_forward
        gate = x @ w(ff.w1.weight).T
        h = h + (x @ w(ff.w3.weight).T * gate / (1 + np.exp(-gate))) @ w(ff.w2.weight).T
    logits = rms(h, net.model.norm_out.weight) @ w(net.lm_head.weight).T
    top = logits.max(-1, keepdims=True)
    lse = (top + np.log(np.exp(logits - top).sum(-1, keepdims=True)))[..., 0]
    ce = lse - np.take_along_axis(logits, labels[..., None], -1)[..., 0]
    keep = tokens != cfg.pad_token_id
    return float((ce * keep).sum() / keep.sum())


@pytest.mark.parametrize("variant", [dict(n_kv_heads=2), dict(n_kv_heads=4, tie_word_embeddings=True,
                                                               use_attn_mask_compression=True)])
def test_tiny_llama_trains_in_graph_mode_from_the_numpy_loss(ex, restore_context, variant):
    """GQA with the (1, 1, S, S) causal mask (sparse_mode 0, next_tokens 0), or MHA with MindFormers'
    compressed mask (sparse_mode 2) and tied embeddings; float16 compute, float32 weights."""
    context.set_context(mode=context.GRAPH_MODE)
    ms.set_seed(0)
    cfg = LlamaConfig(seq_length=SEQ, hidden_size=32, num_layers=2, num_heads=4, vocab_size=VOCAB, multiple_of=16,
                      compute_dtype="float16", param_init_type="float32", use_flash_attention=True,
                      init_method_std=0.05, **variant)
    net = LlamaForCausalLM(cfg)
    ids = np.random.default_rng(1).integers(0, VOCAB, (2, SEQ + 1)).astype(np.int32)
    ids[1, -3:] = cfg.pad_token_id                     # padding: those tokens leave the mean
    want = numpy_loss(net, cfg, ids)
    step = nn.TrainOneStepCell(net, nn.AdamWeightDecay(net.trainable_params(), 5e-3))
    losses = [float(step(Tensor(ids)).asnumpy()) for _ in range(5)]
    assert losses[0] == pytest.approx(want, rel=5e-3)
    assert losses[-1] < 0.85 * losses[0] and max(losses[1:]) < losses[0], losses


def dry_run_peak_mib(tmp_path: Path, *flags: str) -> float:
    """examples/llama/dryrun_7b.py under ``ascendemu run --dry-run``: the peak of the network's forward and
    backward (MiB), before the optimizer's first block, from the memory tracker's memory_block.csv read as
    MindSpore's is (the step's own peak is AdamWeightDecay's float32 update of the embedding, the same with
    either attention); the plain training cell at O0, whose kernels allocate block by block."""
    tmp_path.mkdir()
    script = Path(__file__).resolve().parents[1] / "examples" / "llama" / "dryrun_7b.py"
    cli = Path(sys.executable).parent / "ascendemu"
    proc = subprocess.run([str(cli), "run", "--dry-run", str(script), "--num_layers", "1", "--train_cell", "plain",
                           "--jit_level", "O0", *flags], cwd=tmp_path,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S,
                          env={**os.environ, "MS_ALLOC_CONF": "memory_tracker:True"})
    assert proc.returncode == 0 and "step done" in proc.stdout, proc.stdout + proc.stderr
    return memory_blocks_summary(tmp_path / "rank_0" / "memory_block.csv")["network_peak_mb"]


def test_dry_run_of_a_7b_layer_keeps_no_attention_scores(tmp_path):
    """One Llama-2-7B layer's training step at seq 4096 (32 heads): with FlashAttentionScore the DryRun
    peak is lower than the composed attention's by at least one float16 S x S score tensor of the layer
    (32 * 4096 * 4096 * 2 bytes = 1 GiB), which only the composition keeps for its backward."""
    scores_mib = 32 * 4096 * 4096 * 2 / 2 ** 20
    fused = dry_run_peak_mib(tmp_path / "fa")
    composed = dry_run_peak_mib(tmp_path / "composed", "--no_flash_attention")
    assert composed - fused >= scores_mib
