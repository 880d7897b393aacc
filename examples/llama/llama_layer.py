"""Llama's layers as MindFormers writes them (mindformers/models/llama/llama_layer.py and
mindformers/modules/layers.py): the embedding, RMSNorm, the SwiGLU feed-forward, the rotary frequencies
(FreqsMgr) and the rotary embedding (rotate_half as a matmul with the swap mask), and the Linear whose
weight is (out, in) in param_init_type and whose product runs in compute_dtype."""
from __future__ import annotations

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import Normal, initializer


class Linear(nn.Cell):
    """MindFormers' Linear: y = x @ weight^T (+ bias), weight (out, in), cast to compute_dtype."""

    def __init__(self, in_channels: int, out_channels: int, has_bias: bool = False, compute_dtype=ms.float16,
                 param_init_type=ms.float32, init_method_std: float = 0.01):
        super().__init__()
        self.in_channels, self.out_channels, self.dtype = in_channels, out_channels, compute_dtype
        self.weight = Parameter(initializer(Normal(init_method_std), (out_channels, in_channels), param_init_type),
                                name="weight")
        self.has_bias = has_bias
        if has_bias:
            self.bias = Parameter(initializer("zeros", (out_channels,), param_init_type), name="bias")
        self.matmul = ops.MatMul(transpose_b=True)
        self.cast = ops.Cast()
        self.reshape = ops.Reshape()

    def construct(self, x):
        out_shape = x.shape[:-1] + (self.out_channels,)
        x = self.reshape(self.cast(x, self.dtype), (-1, self.in_channels))
        x = self.matmul(x, self.cast(self.weight, self.dtype))
        if self.has_bias:
            x = x + self.cast(self.bias, self.dtype)
        return self.reshape(x, out_shape)

    def shard(self, strategy_matmul, strategy_bias=None):
        """The product's strategy in the inputs' own orientation (x (M, in), weight (out, in)):
        ``((dp, 1), (mp, 1))`` column parallel, ``((dp, mp), (1, mp))`` row parallel."""
        self.matmul.shard(strategy_matmul)
        return self


class LlamaEmbedding(nn.Cell):
    """Token embedding: a gather of rows of ``embedding_weight`` (vocab, hidden)."""

    def __init__(self, vocab_table_size: int, embedding_size: int, param_init_type=ms.float32,
                 init_method_std: float = 0.01):
        super().__init__()
        self.embedding_weight = Parameter(
            initializer(Normal(init_method_std), (vocab_table_size, embedding_size), param_init_type),
            name="embedding_weight")
        self.gather = ops.Gather()

    def construct(self, input_ids):
        return self.gather(self.embedding_weight, input_ids, 0)

    def shard(self, parallel_config):
        """Data-parallel lookup (vocab_emb_dp), or the table's rows split over mp (vocabulary parallel)."""
        dp, mp = parallel_config.data_parallel, parallel_config.model_parallel
        vocab = self.embedding_weight.shape[0]
        if parallel_config.vocab_emb_dp or vocab % mp:
            self.gather.shard(((1, 1), (dp, 1)))
        else:
            self.gather.shard(((mp, 1), (dp, 1)))


class LlamaRMSNorm(nn.Cell):
    """RMSNorm in compute_type: the fused RmsNorm kernel, or MindFormers' self-defined composition."""

    def __init__(self, dim: int, eps: float = 1e-6, compute_type=ms.float32, fused_kernel: bool = True):
        super().__init__()
        self.eps, self.compute_type, self.self_define = eps, compute_type, not fused_kernel
        self.weight = Parameter(initializer("ones", (dim,), compute_type), name="weight")
        self.cast = ops.Cast()
        self.rcast = ops.Cast()
        if fused_kernel:
            self.norm = ops.RmsNorm(eps)
        else:
            self.square, self.mean, self.rsqrt = ops.Square(), ops.ReduceMean(keep_dims=True), ops.Rsqrt()

    def _self_norm(self, x):
        original_type = x.dtype
        h = self.cast(x, self.compute_type)
        norm_factor = self.rsqrt(self.mean(self.square(h), -1) + self.eps)
        return self.cast(h * norm_factor, original_type) * self.cast(self.weight, original_type)

    def _rms_norm(self, x):
        original_type = x.dtype
        return self.rcast(self.norm(self.cast(x, self.compute_type), self.weight)[0], original_type)

    def construct(self, x):
        return self._self_norm(x) if self.self_define else self._rms_norm(x)

    def shard(self, strategy_in):
        """The normalised input's strategy (the normalised dimension is never split), gamma whole."""
        if self.self_define:
            self.square.shard((strategy_in,))
            self.mean.shard((strategy_in,))
        else:
            self.norm.shard((strategy_in, (1,)))


class LlamaFeedForward(nn.Cell):
    """SwiGLU: w2(silu(w1 x) * w3 x), the hidden size from the config."""

    def __init__(self, dim: int, intermediate_size: int, compute_dtype=ms.float16, param_init_type=ms.float32,
                 init_method_std: float = 0.01):
        super().__init__()
        self.dtype = compute_dtype
        kw = dict(compute_dtype=compute_dtype, param_init_type=param_init_type, init_method_std=init_method_std)
        self.w1 = Linear(dim, intermediate_size, **kw)
        self.w2 = Linear(intermediate_size, dim, **kw)
        self.w3 = Linear(dim, intermediate_size, **kw)
        self.sigmoid = ops.Sigmoid()
        self.silu_mul = ops.Mul()
        self.mul = ops.Mul()
        self.cast = ops.Cast()

    def construct(self, x):
        x = self.cast(x, self.dtype)
        gate = self.w1(x)
        hidden = self.w3(x)
        hidden = self.mul(hidden, self.silu_mul(gate, self.sigmoid(gate)))       # LlamaSiLU
        return self.w2(hidden)

    def shard(self, parallel_config):
        """MindFormers' semi-auto strategies: w1 and w3 column parallel, w2 row parallel, the SwiGLU
        product split as the columns (B, S, ffn / mp)."""
        dp, mp = parallel_config.data_parallel, parallel_config.model_parallel
        self.w1.shard(((dp, 1), (mp, 1)))
        self.w3.shard(((dp, 1), (mp, 1)))
        self.w2.shard(((dp, mp), (1, mp)))
        self.sigmoid.shard(((dp, 1, mp),))
        self.silu_mul.shard(((dp, 1, mp), (dp, 1, mp)))
        self.mul.shard(((dp, 1, mp), (dp, 1, mp)))


def get_swap_mask(head_dim: int) -> np.ndarray:
    """x @ swap_mask = concat(-x2, x1): rotate_half as one product (MindFormers' layers.get_swap_mask)."""
    zero_block = np.zeros((head_dim // 2, head_dim // 2), dtype=np.float32)
    id_block = np.identity(head_dim // 2, dtype=np.float32)
    return np.block([[zero_block, id_block], [-id_block, zero_block]])


class FreqsMgr(nn.Cell):
    """The rotary frequencies: cos and sin of position * theta^(-2i/d), (seq, head_dim), and the swap mask."""

    def __init__(self, head_dim: int, seq_length: int, rotary_dtype=ms.float16, theta: float = 10000.0):
        super().__init__()
        freqs_base = np.arange(0, head_dim, 2)[: (head_dim // 2)].astype(np.float32)
        freqs = 1.0 / (theta ** (freqs_base / head_dim))
        t = np.arange(0, seq_length, 1).astype(np.float32)
        freqs = np.outer(t, freqs)
        emb = np.concatenate((freqs, freqs), axis=-1)
        self.freqs_cos = Tensor(np.cos(emb), dtype=rotary_dtype)
        self.freqs_sin = Tensor(np.sin(emb), dtype=rotary_dtype)
        self.swap_mask = Tensor(get_swap_mask(head_dim), dtype=rotary_dtype)

    def construct(self):
        return self.freqs_cos, self.freqs_sin, self.swap_mask


class RotaryEmbedding(nn.Cell):
    """x * cos + rotate_half(x) * sin on (B, N, S, D) queries and keys, in compute_dtype."""

    def __init__(self, head_dim: int = 128, compute_dtype=ms.float32):
        super().__init__()
        self.dtype = compute_dtype
        self.bmm_swap = ops.BatchMatMul()
        self.mul, self.mul_inc, self.add = ops.Mul(), ops.Mul(), ops.Add()
        self.cast = ops.Cast()

    def construct(self, xq, xk, freqs_cis):
        original_type = xq.dtype
        xq, xk = self.cast(xq, self.dtype), self.cast(xk, self.dtype)
        freqs_cos, freqs_sin, swap_mask = freqs_cis
        xq_out = self.add(self.mul(xq, freqs_cos), self.mul_inc(self.bmm_swap(xq, swap_mask), freqs_sin))
        xk_out = self.add(self.mul(xk, freqs_cos), self.mul_inc(self.bmm_swap(xk, swap_mask), freqs_sin))
        return self.cast(xq_out, original_type), self.cast(xk_out, original_type)

    def shard(self, parallel_config):
        """(B, N, S, D) queries and keys split by batch and heads, the frequencies (S, D) whole."""
        dp, mp = parallel_config.data_parallel, parallel_config.model_parallel
        strategy_in = (dp, mp, 1, 1)
        self.add.shard((strategy_in, strategy_in))
        self.bmm_swap.shard((strategy_in, (1, 1)))
        self.mul.shard((strategy_in, (1, 1)))
        self.mul_inc.shard((strategy_in, (1, 1)))
