"""Llama's attention and decoder layer as MindFormers writes them (mindformers/models/llama/
llama_transformer.py: LLamaAttention, LLamaDecodeLayer; mindformers/modules/flash_attention.py:
FlashAttention), with the semi-auto parallel strategies of MindFormers' parallel_config (dp, mp: each
cell's ``shard``) and without the inference (use_past) paths.

Attention: wq/wk/wv/wo Linears; q and k reshaped to (B, N, S, D) with rotary embedding applied; grouped-
query attention when n_kv_heads < num_heads (FlashAttentionScore reads each key/value head for
num_heads / n_kv_heads query heads); causal through the FlashAttentionScore primitive: a (1, 1, S, S) uint8
mask with next_tokens=0 (sparse_mode 0), or MindFormers' compressed mask (sparse_mode 2). Without flash
attention, the scores are composed (softmax in softmax_compute_type) with key/value heads repeated."""
from __future__ import annotations

import math

import mindspore as ms
from mindspore import nn, ops
from mindspore.ops.operations.nn_ops import FlashAttentionScore

from llama_layer import Linear, LlamaFeedForward, LlamaRMSNorm, RotaryEmbedding


class FlashAttention(nn.Cell):
    """mindformers.modules.FlashAttention: the FlashAttentionScore primitive, its attention_out."""

    def __init__(self, head_num: int, keep_prob: float = 1.0, scale_value: float = 1.0, pre_tokens: int = 2147483647,
                 next_tokens: int = 2147483647, input_layout: str = "BSH", sparse_mode: int = 0,
                 use_attention_mask: bool = True):
        super().__init__()
        self.use_attention_mask = use_attention_mask
        self.compressed_mask = sparse_mode == 2      # MindFormers' (2048, 2048) triangle
        self.flash_attention = FlashAttentionScore(head_num=head_num, keep_prob=keep_prob, scale_value=scale_value,
                                                   pre_tokens=pre_tokens, next_tokens=next_tokens, inner_precise=0,
                                                   input_layout=input_layout, sparse_mode=sparse_mode)

    def construct(self, query, key, value, attn_mask=None):
        if not self.use_attention_mask:
            attn_mask = None
        _, _, _, output = self.flash_attention(query, key, value, None, None, None, attn_mask, None)
        return output

    def shard(self, parallel_config):
        """Query, key and value (B, N, S, D) split by batch (dp) and heads (mp); the mask, one (1, 1, S, S)
        triangle for the whole batch, whole on every rank (MindSpore refuses a split of its size-1 batch
        dimension, as MindFormers' compressed mask's (1, 1))."""
        dp, mp = parallel_config.data_parallel, parallel_config.model_parallel
        qkv = (dp, mp, 1, 1)
        mask = (1, 1) if self.compressed_mask else (1, 1, 1, 1)
        self.flash_attention.shard((qkv, qkv, qkv, mask))


class LLamaAttention(nn.Cell):
    """Multi-head (grouped-query) self-attention with rotary position embedding."""

    def __init__(self, dim: int = 512, n_heads: int = 8, n_kv_heads=None, compute_dtype=ms.float16,
                 softmax_compute_dtype=ms.float32, rotary_dtype=ms.float32, param_init_type=ms.float32,
                 use_flash_attention: bool = False, use_attn_mask_compression: bool = False,
                 init_method_std: float = 0.01):
        super().__init__()
        self.hidden_size, self.n_head = dim, n_heads
        self.head_dim = dim // n_heads
        self.n_kv_head = n_heads if n_kv_heads is None else n_kv_heads
        self.n_rep = self.n_head // self.n_kv_head
        self.kv_dim = self.n_kv_head * self.head_dim
        self.dtype, self.softmax_dtype = compute_dtype, softmax_compute_dtype
        self.use_flash_attention = use_flash_attention
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        kw = dict(compute_dtype=compute_dtype, param_init_type=param_init_type, init_method_std=init_method_std)
        self.wq = Linear(self.hidden_size, self.hidden_size, **kw)
        self.wk = Linear(self.hidden_size, self.kv_dim, **kw)
        self.wv = Linear(self.hidden_size, self.kv_dim, **kw)
        self.wo = Linear(self.hidden_size, self.hidden_size, **kw)
        self.apply_rotary_emb = RotaryEmbedding(self.head_dim, rotary_dtype)
        self.transpose, self.reshape, self.cast = ops.Transpose(), ops.Reshape(), ops.Cast()
        self.merger_head_transpose = ops.Transpose()
        self.batch_matmul, self.batch_matmul_q_k = ops.BatchMatMul(), ops.BatchMatMul(transpose_b=True)
        self.softmax = ops.Softmax()
        if use_flash_attention:
            self.flash_attention = FlashAttention(head_num=self.n_head, pre_tokens=65536, next_tokens=0,
                                                  input_layout="BNSD", keep_prob=1.0,
                                                  scale_value=self.inv_norm_factor,
                                                  sparse_mode=2 if use_attn_mask_compression else 0)

    def construct(self, x, freqs_cis, mask=None):
        ori_dtype = x.dtype
        bs, seq_len, _ = x.shape
        query = self.cast(self.wq(x), self.dtype)
        key = self.cast(self.wk(x), self.dtype)
        value = self.cast(self.wv(x), self.dtype)
        query = self.transpose(self.reshape(query, (bs, seq_len, self.n_head, self.head_dim)), (0, 2, 1, 3))
        key = self.transpose(self.reshape(key, (bs, seq_len, self.n_kv_head, self.head_dim)), (0, 2, 1, 3))
        query, key = self.apply_rotary_emb(query, key, freqs_cis)
        value = self.transpose(self.reshape(value, (bs, seq_len, self.n_kv_head, self.head_dim)), (0, 2, 1, 3))
        if self.use_flash_attention:
            context_layer = self.flash_attention(query, key, value, mask)
        else:
            context_layer = self._attn(self._repeat_kv(query, 1), self._repeat_kv(key, self.n_rep),
                                       self._repeat_kv(value, self.n_rep), mask)
        context_layer = self._merge_heads(context_layer)
        return self.cast(self.wo(context_layer), ori_dtype)

    def _repeat_kv(self, x, rep):
        if rep == 1:
            return x
        bs, n_kv_head, seqlen, head_dim = x.shape
        x = ops.broadcast_to(self.reshape(x, (bs, n_kv_head, 1, seqlen, head_dim)),
                             (bs, n_kv_head, rep, seqlen, head_dim))
        return self.reshape(x, (bs, n_kv_head * rep, seqlen, head_dim))

    def _merge_heads(self, x):
        bs, n_head, seq_len, head_dim = x.shape
        return self.reshape(self.merger_head_transpose(x, (0, 2, 1, 3)), (bs, seq_len, n_head * head_dim))

    def shard(self, parallel_config):
        """MindFormers' semi-auto strategies: wq / wk / wv column parallel (heads split over mp), wo row
        parallel (an AllReduce of its partial sums), the heads split through rotary embedding and attention."""
        dp, mp = parallel_config.data_parallel, parallel_config.model_parallel
        for linear in (self.wq, self.wk, self.wv):
            linear.shard(((dp, 1), (mp, 1)))
        self.wo.shard(((dp, mp), (1, mp)))
        self.transpose.shard(((dp, 1, mp, 1),))
        self.merger_head_transpose.shard(((dp, mp, 1, 1),))
        self.apply_rotary_emb.shard(parallel_config)
        if self.use_flash_attention:
            self.flash_attention.shard(parallel_config)
        else:
            self.batch_matmul_q_k.shard(((dp, mp, 1, 1), (dp, mp, 1, 1)))
            self.batch_matmul.shard(((dp, mp, 1, 1), (dp, mp, 1, 1)))
            self.softmax.shard(((dp, mp, 1, 1),))

    def _attn(self, query, key, value, mask):
        """softmax(q k^T / sqrt(d) + mask * -10000) v (MindFormers' composed path; mask 1 = discard)."""
        score = self.batch_matmul_q_k(query, key) * self.inv_norm_factor
        if mask is not None:
            score = score + self.cast(mask, score.dtype) * -10000.0
        probs = self.cast(self.softmax(self.cast(score, self.softmax_dtype)), self.dtype)
        return self.batch_matmul(probs, value)


class LLamaDecodeLayer(nn.Cell):
    """h = x + attention(norm(x)); out = h + feed_forward(norm(h))."""

    def __init__(self, layer_id: int, dim: int = 512, n_heads: int = 8, n_kv_heads=None, intermediate_size=None,
                 norm_eps: float = 1e-5, compute_dtype=ms.float16, layernorm_compute_dtype=ms.float32,
                 softmax_compute_dtype=ms.float32, rotary_dtype=ms.float32, param_init_type=ms.float32,
                 use_flash_attention: bool = False, use_attn_mask_compression: bool = False,
                 init_method_std: float = 0.01):
        super().__init__()
        self.layer_id = layer_id
        self.attention_norm = LlamaRMSNorm(dim, norm_eps, compute_type=layernorm_compute_dtype)
        self.ffn_norm = LlamaRMSNorm(dim, norm_eps, compute_type=layernorm_compute_dtype)
        self.attention = LLamaAttention(dim, n_heads, n_kv_heads, compute_dtype, softmax_compute_dtype, rotary_dtype,
                                        param_init_type, use_flash_attention, use_attn_mask_compression,
                                        init_method_std)
        self.feed_forward = LlamaFeedForward(dim, intermediate_size, compute_dtype, param_init_type, init_method_std)
        self.add = ops.Add()
        self.ffn_add = ops.Add()

    def construct(self, x, freqs_cis, mask=None):
        h = self.add(x, self.attention(self.attention_norm(x), freqs_cis, mask))
        return self.ffn_add(h, self.feed_forward(self.ffn_norm(h)))

    def shard(self, parallel_config):
        """The residual stream (B, S, hidden) split by batch; attention and feed-forward as they shard."""
        dp = parallel_config.data_parallel
        self.attention_norm.shard((dp, 1, 1))
        self.ffn_norm.shard((dp, 1, 1))
        self.add.shard(((dp, 1, 1), (dp, 1, 1)))
        self.ffn_add.shard(((dp, 1, 1), (dp, 1, 1)))
        self.attention.shard(parallel_config)
        self.feed_forward.shard(parallel_config)
