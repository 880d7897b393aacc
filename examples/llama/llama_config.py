"""LlamaConfig: MindFormers' field names and defaults (mindformers/models/llama/llama_config.py), minus the
MoE and inference fields this example does not use yet; ``parallel_config`` holds dp / mp.

dtypes are given as MindFormers' yaml gives them (strings) and read as mindspore dtypes by ``dtype``.
``intermediate_size`` defaults as MindFormers (and Meta's Llama) derive it: 2/3 of 4 * hidden, times
``ffn_dim_multiplier``, rounded up to ``multiple_of`` (Llama-2-7B: 11008).
"""
from __future__ import annotations

import mindspore as ms

# MindFormers' dtype strings -> mindspore dtypes
_DTYPES = {"float16": ms.float16, "bfloat16": ms.bfloat16, "float32": ms.float32}


def dtype(name):
    """A config dtype (a MindFormers string or a mindspore dtype) as a mindspore dtype."""
    return _DTYPES[name] if isinstance(name, str) else name


def llama_intermediate_size(hidden_size: int, multiple_of: int, ffn_dim_multiplier=None) -> int:
    hidden_dim = int(2 * (4 * hidden_size) / 3)
    if ffn_dim_multiplier is not None:
        hidden_dim = int(ffn_dim_multiplier * hidden_dim)
    return multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)


class TransformerRecomputeConfig:
    """MindFormers' recompute_config (mindformers/modules/transformer/transformer.py): ``recompute`` each
    decoder layer whole (its outputs kept), or ``select_recompute`` only the FFN's SwiGLU product;
    ``mp_comm_recompute`` also recomputes the layer's model-parallel collectives;
    ``parallel_optimizer_comm_recompute`` and ``recompute_slice_activation`` are passed to ``Cell.recompute``."""

    def __init__(self, recompute: bool = False, parallel_optimizer_comm_recompute: bool = False,
                 select_recompute: bool = False, mp_comm_recompute: bool = True,
                 recompute_slice_activation: bool = False, **kwargs):
        self.recompute, self.select_recompute = recompute, select_recompute
        self.parallel_optimizer_comm_recompute = parallel_optimizer_comm_recompute
        self.mp_comm_recompute, self.recompute_slice_activation = mp_comm_recompute, recompute_slice_activation
        self.extra = dict(kwargs)


def set_layer_recompute(layer, recompute_config) -> None:
    """The recompute part of MindFormers' ``set_layer_stage_recompute`` (mindformers/models/utils.py) for one
    decoder layer: the whole layer, or (select_recompute) the SwiGLU's SiLU and product."""
    if recompute_config.recompute and not recompute_config.select_recompute:
        layer.recompute(parallel_optimizer_comm_recompute=recompute_config.parallel_optimizer_comm_recompute,
                        mp_comm_recompute=recompute_config.mp_comm_recompute,
                        recompute_slice_activation=recompute_config.recompute_slice_activation)
    elif recompute_config.select_recompute:
        for prim in (layer.feed_forward.mul, layer.feed_forward.silu_mul, layer.feed_forward.sigmoid):
            prim.recompute()


def set_layer_stage(layer, layer_id: int, parallel_config, n_layers: int, offset: int = 0) -> None:
    """The stage part of MindFormers' ``set_layer_stage_recompute``: decoder layer ``layer_id`` of ``n_layers``
    on stage min((layer_id + offset) // max((n_layers + 1) // pp, 1), pp - 1) (the embedding is on stage 0,
    the final norm and lm_head on the last)."""
    pp = parallel_config.pipeline_stage
    per_stage = max(int((n_layers + 1) / pp), 1)
    layer.pipeline_stage = min((layer_id + offset) // per_stage, pp - 1)


class TransformerOpParallelConfig:
    """MindFormers' parallel_config (mindformers/modules/transformer/op_parallel_config.py) as far as this
    example uses it: data_parallel (dp) x model_parallel (mp) ranks, the embedding's lookup data parallel
    (``vocab_emb_dp``) or split by vocabulary rows over mp, and the ``recompute`` config
    (a TransformerRecomputeConfig). The job's device count is dp * mp * ``pipeline_stage`` (pipeline stages of
    ``micro_batch_num`` micro-batches; context parallel is not modelled yet). ``optimizer_shard`` is recorded, as in MindFormers: the shard itself is
    the context's ``enable_parallel_optimizer`` (its yaml's ``parallel`` section; dryrun_7b.py --optimizer_shard)."""

    def __init__(self, data_parallel: int = 1, model_parallel: int = 1, vocab_emb_dp: bool = True,
                 recompute=None, optimizer_shard=None, pipeline_stage: int = 1, micro_batch_num: int = 1, **kwargs):
        self.data_parallel, self.model_parallel, self.vocab_emb_dp = data_parallel, model_parallel, vocab_emb_dp
        self.pipeline_stage, self.micro_batch_num = pipeline_stage, micro_batch_num
        self.optimizer_shard = optimizer_shard
        self.recompute = recompute or TransformerRecomputeConfig()
        self.extra = dict(kwargs)


class LlamaConfig:
    """Llama's hyper-parameters under MindFormers' names (see the module docstring)."""

    def __init__(self, batch_size: int = 1, seq_length: int = 2048, hidden_size: int = 4096, num_layers: int = 32,
                 num_heads: int = 32, n_kv_heads=None, intermediate_size=None, vocab_size: int = 32000,
                 multiple_of: int = 256, ffn_dim_multiplier=None, rms_norm_eps: float = 1e-5, bos_token_id: int = 1,
                 eos_token_id: int = 2, pad_token_id: int = 0, ignore_token_id: int = -100, theta: float = 10000.0,
                 compute_dtype: str = "float16", layernorm_compute_type: str = "float32",
                 softmax_compute_type: str = "float32", rotary_dtype: str = "float32",
                 param_init_type: str = "float16", use_flash_attention: bool = False,
                 use_attn_mask_compression: bool = False, tie_word_embeddings: bool = False,
                 init_method_std: float = 0.01, parallel_config=None, **kwargs):
        self.batch_size, self.seq_length, self.hidden_size = batch_size, seq_length, hidden_size
        self.num_layers, self.num_heads, self.n_kv_heads = num_layers, num_heads, n_kv_heads
        self.vocab_size, self.multiple_of, self.ffn_dim_multiplier = vocab_size, multiple_of, ffn_dim_multiplier
        self.intermediate_size = intermediate_size or llama_intermediate_size(hidden_size, multiple_of,
                                                                              ffn_dim_multiplier)
        self.rms_norm_eps, self.theta = rms_norm_eps, theta
        self.bos_token_id, self.eos_token_id = bos_token_id, eos_token_id
        self.pad_token_id, self.ignore_token_id = pad_token_id, ignore_token_id
        self.compute_dtype = dtype(compute_dtype)
        self.layernorm_compute_type = dtype(layernorm_compute_type)
        self.softmax_compute_type = dtype(softmax_compute_type)
        self.rotary_dtype = dtype(rotary_dtype)
        self.param_init_type = dtype(param_init_type)
        self.use_flash_attention, self.use_attn_mask_compression = use_flash_attention, use_attn_mask_compression
        self.tie_word_embeddings, self.init_method_std = tie_word_embeddings, init_method_std
        self.parallel_config = parallel_config     # a TransformerOpParallelConfig: the layers call .shard with it
        self.extra = dict(kwargs)      # MindFormers fields not modelled here


def llama2_7b(**overrides) -> LlamaConfig:
    """MindFormers' configs/llama2/pretrain_llama2_7b.yaml model_config."""
    fields = dict(batch_size=1, seq_length=4096, hidden_size=4096, num_layers=32, num_heads=32, vocab_size=32000,
                  multiple_of=256, rms_norm_eps=1.0e-5, compute_dtype="float16", layernorm_compute_type="float32",
                  softmax_compute_type="float16", rotary_dtype="float16", param_init_type="float16",
                  use_flash_attention=True)
    fields.update(overrides)
    return LlamaConfig(**fields)
