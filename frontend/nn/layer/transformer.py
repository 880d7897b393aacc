"""``mindspore.nn.layer.transformer``: MultiheadAttention and the Transformer encoder/decoder cells, where
MindSpore defines them, with its parameter names (``in_proj_weight``, ``out_proj``, ``dense1``, ``norm1``...)
and its arithmetic: packed input projections, scores ``(q / d^0.25) @ (k / d^0.25)^T`` plus the masks
(a bool mask is -inf where True), softmax, dropout, the output projection; head-averaged weights."""
from __future__ import annotations

import copy
import math
from typing import Any, Callable, Optional

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, XavierUniform, initializer
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell
from .activation import GELU, ReLU
from .basic import Dense, Dropout
from .container import CellList
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerDecoder", "Transformer"]


def _linear(x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
    out = ops.matmul(x, ops.transpose(weight, (1, 0)))
    return out if bias is None else out + bias


def _additive_mask(mask: Optional[Tensor], dtype: Any) -> Optional[Tensor]:
    """A bool mask as 0 / -inf (True masks a position out); a float mask is added as it is."""
    if mask is None or mask.dtype != mstype.bool_:
        return mask
    return ops.masked_fill(ops.zeros(mask.shape, dtype), mask, float("-inf"))


def _check_mask_dtype(name: str, mask: Optional[Tensor]) -> None:
    if mask is not None and mask.dtype != mstype.bool_ and not ops.is_floating_point(mask):
        raise InvalidParamError(f"{name}: only bool and floating types of key_padding_mask are supported, got "
                                f"{mask.dtype}")


class MultiheadAttention(Cell):
    """``MultiheadAttention(embed_dim, num_heads, ...)(query, key, value, key_padding_mask=None,
    need_weights=True, attn_mask=None, average_attn_weights=True)``: sequence-first (L, N, E) inputs
    unless ``batch_first``; returns ``(output, weights)`` or ``(output,)``. ``add_bias_kv`` and
    ``add_zero_attn`` are not served (InvalidParamError)."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, has_bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Optional[int] = None,
                 vdim: Optional[int] = None, batch_first: bool = False, dtype: Any = mstype.float32):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise InvalidParamError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported; leave them "
                                    "False (append the extra key/value rows to key and value yourself)")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise InvalidParamError("MultiheadAttention: the init argument 'embed_dim' must be divisible by "
                                    "'num_heads'.")
        dtype = mstype.float32 if dtype is None else dtype
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(initializer(XavierUniform(), (3 * embed_dim, embed_dim), dtype),
                                            "in_proj_weight")
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, embed_dim), dtype), "q_proj_weight")
            self.k_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, self.kdim), dtype), "k_proj_weight")
            self.v_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, self.vdim), dtype), "v_proj_weight")
            self.in_proj_weight = None
        self.in_proj_bias = (Parameter(initializer("zeros", (3 * embed_dim,), dtype), "in_proj_bias") if has_bias
                             else None)
        self.out_proj = Dense(embed_dim, embed_dim, has_bias=has_bias, weight_init=HeUniform(math.sqrt(5)),
                              bias_init=Uniform(1 / math.sqrt(embed_dim)), dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self.dtype = dtype

    def _projections(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        e = self.embed_dim
        b = self.in_proj_bias
        biases = (None,) * 3 if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            weights = (w[:e], w[e:2 * e], w[2 * e:])
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        return tuple(_linear(x, w, bias) for x, w, bias in zip((query, key, value), weights, biases))

    def construct(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor] = None,
                  need_weights: bool = True, attn_mask: Optional[Tensor] = None,
                  average_attn_weights: bool = True) -> tuple:
        _check_mask_dtype("MultiheadAttention", key_padding_mask)
        batched = query.ndim == 3
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise InvalidParamError(f"MultiheadAttention: query, key and value must all be 2-D (unbatched) or 3-D, "
                                    f"got shapes {query.shape}, {key.shape}, {value.shape}")
        if not batched:
            query, key, value = (ops.expand_dims(t, 1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = ops.expand_dims(key_padding_mask, 0)
        elif self.batch_first:
            query, key, value = (ops.swapaxes(t, 0, 1) for t in (query, key, value))
        tgt_len, bsz, embed = query.shape
        src_len = key.shape[0]
        if embed != self.embed_dim:
            raise InvalidParamError(f"MultiheadAttention: query's last dimension {embed} must be embed_dim "
                                    f"{self.embed_dim}")
        heads, hd = self.num_heads, self.head_dim
        q, k, v = self._projections(query, key, value)
        # (L, N, E) -> (N, H, L, d)
        q, k, v = (ops.transpose(ops.reshape(t, (t.shape[0], bsz, heads, hd)), (1, 2, 0, 3)) for t in (q, k, v))
        mask = _additive_mask(attn_mask, q.dtype)
        if mask is not None:
            if mask.ndim == 2:
                if mask.shape != (tgt_len, src_len):
                    raise InvalidParamError(f"MultiheadAttention: the 2-D attn_mask must be {(tgt_len, src_len)}, got "
                                            f"{mask.shape}")
            elif mask.ndim == 3 and mask.shape == (bsz * heads, tgt_len, src_len):
                mask = ops.reshape(mask, (bsz, heads, tgt_len, src_len))
            else:
                raise InvalidParamError(f"MultiheadAttention: the 3-D attn_mask must be "
                                        f"{(bsz * heads, tgt_len, src_len)}, got {mask.shape}")
        pad = _additive_mask(key_padding_mask, q.dtype)
        if pad is not None:
            if pad.shape != (bsz, src_len):
                raise InvalidParamError(f"MultiheadAttention: key_padding_mask must be {(bsz, src_len)}, got "
                                        f"{pad.shape}")
            pad = ops.reshape(pad, (bsz, 1, 1, src_len))
            mask = pad if mask is None else mask + pad
        scale = float(hd) ** 0.25
        scores = ops.matmul(q / scale, ops.swapaxes(k / scale, -2, -1))
        if mask is not None:
            scores = scores + mask
        weights = ops.softmax(scores, -1)
        if self.training and self.dropout > 0:
            weights = ops.dropout(weights, p=self.dropout)
        out = ops.reshape(ops.transpose(ops.matmul(weights, v), (2, 0, 1, 3)), (tgt_len * bsz, embed))
        out = ops.reshape(self.out_proj(out), (tgt_len, bsz, embed))
        if average_attn_weights:
            weights = ops.sum(weights, 1) / heads
        if not batched:
            out, weights = ops.squeeze(out, 1), ops.squeeze(weights, 0)
        elif self.batch_first:
            out = ops.swapaxes(out, 0, 1)
        return (out, weights) if need_weights else (out,)


def _activation(activation: Any) -> Callable:
    """MindSpore's accepted activations: 'relu'/'gelu', an nn.ReLU/nn.GELU cell, or ops.relu/ops.gelu."""
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise InvalidParamError(f"The activation must be relu/gelu, but get {activation}")
        return ops.relu if activation == "relu" else ops.gelu
    if isinstance(activation, Cell):
        if not isinstance(activation, (ReLU, GELU)):
            raise InvalidParamError(f"The argument 'activation' must be nn.ReLU or nn.GELU instance, but get "
                                    f"{activation}.")
        return activation
    if callable(activation):
        if activation is not ops.relu and activation is not ops.gelu:
            raise InvalidParamError(f"The argument 'activation' must be ops.relu or ops.gelu instance, but get "
                                    f"{activation}.")
        return activation
    raise InvalidParamError(f"The argument 'activation' must be str, callable or Cell instance, but get "
                            f"{activation}.")


class _TransformerLayer(Cell):
    """The attributes and feed-forward block both Transformer layers share (``dense1`` -> activation ->
    dropout -> ``dense2``), built as MindSpore builds them."""

    def _common(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float, activation: Any,
                layer_norm_eps: float, batch_first: bool, norm_first: bool, dtype: Any, norms: int) -> None:
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, dtype=dtype)
        if norms == 3:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                     dtype=dtype)
        self.dense1 = Dense(d_model, dim_feedforward, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(d_model)), dtype=dtype)
        self.dropout = Dropout(p=dropout)
        self.dense2 = Dense(dim_feedforward, d_model, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(dim_feedforward)), dtype=dtype)
        for i in range(1, norms + 1):
            setattr(self, f"norm{i}", LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        for i in range(1, norms + 1):
            setattr(self, f"dropout{i}", Dropout(p=dropout))
        self.activation1 = activation
        self.activation = _activation(activation)
        self.d_model, self.nhead, self.dim_feedforward = d_model, nhead, dim_feedforward
        self.dropout_num, self.layernorm_eps = dropout, layer_norm_eps
        self.batch_first, self.norm_first, self.dtype = batch_first, norm_first, dtype

    def _sa_block(self, x: Tensor, attn_mask: Optional[Tensor], key_padding_mask: Optional[Tensor]) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor, last_dropout: Cell) -> Tensor:
        return last_dropout(self.dense2(self.dropout(self.activation(self.dense1(x)))))


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then feed-forward, each a residual block; LayerNorm after each (``norm_first``
    False) or before each (True)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, dtype: Any = mstype.float32):
        super().__init__()
        self._common(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                     dtype, norms=2)

    def construct(self, src: Tensor, src_mask: Optional[Tensor] = None,
                  src_key_padding_mask: Optional[Tensor] = None) -> Tensor:
        _check_mask_dtype("TransformerEncoderLayer", src_key_padding_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x, self.dropout2))


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, attention over ``memory``, feed-forward: three residual blocks, each with its
    LayerNorm after (``norm_first`` False) or before (True)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, dtype: Any = mstype.float32):
        super().__init__()
        self._common(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                     dtype, norms=3)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Optional[Tensor],
                   key_padding_mask: Optional[Tensor]) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False)[0]
        return self.dropout2(x)

    def construct(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                  memory_mask: Optional[Tensor] = None, tgt_key_padding_mask: Optional[Tensor] = None,
                  memory_key_padding_mask: Optional[Tensor] = None) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._ff_block(x, self.dropout3))


def _clones(layer: _TransformerLayer, num_layers: int) -> CellList:
    """``num_layers`` identical copies of a fresh layer built from ``layer``'s arguments (MindSpore
    deep-copies one new layer, so all start from the same values)."""
    fresh = type(layer)(layer.d_model, layer.nhead, layer.dim_feedforward, layer.dropout_num, layer.activation1,
                        layer.layernorm_eps, layer.batch_first, layer.norm_first, dtype=layer.dtype)
    return CellList([copy.deepcopy(fresh) for _ in range(num_layers)])


class TransformerEncoder(Cell):
    """``num_layers`` copies of ``encoder_layer`` applied in turn, then ``norm`` if given."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Optional[Cell] = None):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def construct(self, src: Tensor, src_mask: Optional[Tensor] = None,
                  src_key_padding_mask: Optional[Tensor] = None) -> Tensor:
        _check_mask_dtype("TransformerEncoder", src_key_padding_mask)
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return out if self.norm is None else self.norm(out)


class TransformerDecoder(Cell):
    """``num_layers`` copies of ``decoder_layer`` applied in turn (each attending to ``memory``), then
    ``norm`` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Optional[Cell] = None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def construct(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                  memory_mask: Optional[Tensor] = None, tgt_key_padding_mask: Optional[Tensor] = None,
                  memory_key_padding_mask: Optional[Tensor] = None) -> Tensor:
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)
        return out if self.norm is None else self.norm(out)


class Transformer(Cell):
    """An encoder (``num_encoder_layers`` layers, final LayerNorm) and a decoder over its output; every
    parameter of rank > 1 re-drawn Xavier-uniform, as MindSpore does."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", custom_encoder: Optional[Cell] = None,
                 custom_decoder: Optional[Cell] = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, dtype: Any = mstype.float32):
        super().__init__()
        args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*args, dtype=dtype), num_encoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*args, dtype=dtype), num_decoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        for _, p in self.parameters_and_names():
            if p.ndim > 1:
                p.set_data(initializer("xavier_uniform", p.shape, p.dtype))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def construct(self, src: Tensor, tgt: Tensor, src_mask: Optional[Tensor] = None, tgt_mask: Optional[Tensor] = None,
                  memory_mask: Optional[Tensor] = None, src_key_padding_mask: Optional[Tensor] = None,
                  tgt_key_padding_mask: Optional[Tensor] = None,
                  memory_key_padding_mask: Optional[Tensor] = None) -> Tensor:
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise InvalidParamError("The number of features for 'src' and 'tgt' must be equal to `d_model`.")
        memory = self.encoder(src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)
