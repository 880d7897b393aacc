"""LlamaModel and LlamaForCausalLM as MindFormers writes them (mindformers/models/llama/llama.py), for
training, sharded by ``config.parallel_config`` (dp, mp) under SEMI_AUTO_PARALLEL: token embedding, a CellList of decoder layers, the final
RMSNorm, the lm_head (untied, or the embedding's weight when ``tie_word_embeddings``), and the loss of
pretraining: input_ids (B, seq_length + 1) -> tokens input_ids[:, :-1], labels input_ids[:, 1:], the
cross entropy of the float32 logits averaged over the tokens that are not padding."""
from __future__ import annotations

import numpy as np

import mindspore as ms
from mindspore import Tensor, lazy_inline, nn, ops

from llama_config import LlamaConfig, set_layer_recompute, set_layer_stage
from llama_layer import FreqsMgr, Linear, LlamaEmbedding, LlamaRMSNorm
from llama_transformer import LLamaDecodeLayer

# MindFormers' compressed causal mask (use_attn_mask_compression: sparse_mode 2 reads a 2048 x 2048 triangle)
COMPRESSED_MASK_SIZE = 2048


class LowerTriangularMaskWithDynamic(nn.Cell):
    """The causal mask as FlashAttentionScore takes it: uint8, 1 above the diagonal (discard), shaped
    (1, 1, S, S); or MindFormers' compressed (2048, 2048) triangle."""

    def __init__(self, seq_length: int, compressed: bool = False):
        super().__init__()
        size = COMPRESSED_MASK_SIZE if compressed else seq_length
        mask = np.triu(np.ones((size, size), np.uint8), 1)
        self.lower_triangle_mask = Tensor(mask if compressed else mask.reshape(1, 1, size, size))

    def construct(self, tokens):
        return self.lower_triangle_mask


class LlamaModel(nn.Cell):
    """Embedding -> decoder layers -> RMSNorm; hidden states (B, S, hidden) in compute_dtype."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.dtype = config.compute_dtype
        self.head_dim = config.hidden_size // config.num_heads
        self.freqs_mgr = FreqsMgr(self.head_dim, config.seq_length, config.rotary_dtype, config.theta)
        self.casual_mask = LowerTriangularMaskWithDynamic(config.seq_length, config.use_attn_mask_compression)
        self.tok_embeddings = LlamaEmbedding(config.vocab_size, config.hidden_size, config.param_init_type,
                                             config.init_method_std)
        self.layers = nn.CellList()
        for layer_id in range(config.num_layers):
            self.layers.append(LLamaDecodeLayer(
                layer_id, dim=config.hidden_size, n_heads=config.num_heads, n_kv_heads=config.n_kv_heads,
                intermediate_size=config.intermediate_size, norm_eps=config.rms_norm_eps,
                compute_dtype=config.compute_dtype, layernorm_compute_dtype=config.layernorm_compute_type,
                softmax_compute_dtype=config.softmax_compute_type, rotary_dtype=config.rotary_dtype,
                param_init_type=config.param_init_type, use_flash_attention=config.use_flash_attention,
                use_attn_mask_compression=config.use_attn_mask_compression,
                init_method_std=config.init_method_std))
        if config.parallel_config is not None:
            for layer in self.layers:
                set_layer_recompute(layer, config.parallel_config.recompute)
        self.norm_out = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps,
                                     compute_type=config.layernorm_compute_type)
        pp = 1 if config.parallel_config is None else config.parallel_config.pipeline_stage
        if pp > 1:                                  # MindFormers' stages: embedding first, norm last
            self.tok_embeddings.pipeline_stage = 0
            for layer_id, layer in enumerate(self.layers):
                set_layer_stage(layer, layer_id, config.parallel_config, config.num_layers)
            self.norm_out.pipeline_stage = pp - 1
        self.cast = ops.Cast()
        if config.parallel_config is not None:
            self.shard(config.parallel_config)

    def shard(self, parallel_config):
        self.tok_embeddings.shard(parallel_config)
        for layer in self.layers:
            layer.shard(parallel_config)
        self.norm_out.shard((parallel_config.data_parallel, 1, 1))

    def construct(self, tokens):
        mask = self.casual_mask(tokens)
        freqs_cis = self.freqs_mgr()
        h = self.cast(self.tok_embeddings(tokens), self.dtype)
        for layer in self.layers:
            h = layer(h, freqs_cis, mask)
        return self.norm_out(h)


class LlamaForCausalLM(nn.Cell):
    """LlamaModel + lm_head; ``construct(input_ids)`` returns the pretraining loss."""

    @lazy_inline                 # as MindFormers decorates it (compiles each layer once there; a no-op here)
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.config = config
        self.model = LlamaModel(config)
        self.lm_head = Linear(config.hidden_size, config.vocab_size, has_bias=False,
                              compute_dtype=config.compute_dtype, param_init_type=config.param_init_type,
                              init_method_std=config.init_method_std)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.tok_embeddings.embedding_weight
        self.loss = nn.CrossEntropyLoss(reduction="none")
        self.slice = ops.StridedSlice()
        self.not_equal = ops.NotEqual()
        self.cast = ops.Cast()
        self.reshape = ops.Reshape()
        self.pad_token_id = config.pad_token_id
        if config.parallel_config is not None:
            self.shard(config.parallel_config)
            if config.parallel_config.pipeline_stage > 1:
                self.lm_head.pipeline_stage = config.parallel_config.pipeline_stage - 1

    def shard(self, parallel_config):
        """The lm_head column parallel over the vocabulary (MindFormers: unless vocab_emb_dp or the vocabulary
        does not divide by mp); the loss on the batch default (MindFormers' vocabulary-parallel
        CrossEntropyLoss is not written here: the logits' columns are gathered for its softmax)."""
        dp, mp = parallel_config.data_parallel, parallel_config.model_parallel
        if parallel_config.vocab_emb_dp or self.config.vocab_size % mp:
            self.lm_head.shard(((dp, 1), (1, 1)))
        else:
            self.lm_head.shard(((dp, 1), (mp, 1)))

    def construct(self, input_ids):
        bsz, seqlen = input_ids.shape
        tokens = self.slice(input_ids, (0, 0), (bsz, seqlen - 1), (1, 1))
        labels = self.slice(input_ids, (0, 1), (bsz, seqlen), (1, 1))
        output = self.model(tokens)
        logits = self.cast(self.lm_head(output), ms.float32)
        logits = self.reshape(logits, (-1, self.config.vocab_size))
        input_mask = self.reshape(self.cast(self.not_equal(tokens, self.pad_token_id), ms.float32), (-1,))
        loss = self.loss(logits, self.reshape(labels, (-1,)))
        return (loss * input_mask).sum() / input_mask.sum()
