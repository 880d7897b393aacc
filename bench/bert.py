"""BERT-large pre-training network, written MindSpore-style against the front end, as the model zoo's
official/nlp/Bert (src/bert_model.py, src/bert_for_pre_training.py) builds it: token, position and
segment embeddings + LayerNorm + dropout; ``num_layers`` post-norm encoder layers (self-attention
with an additive padding mask, GeLU feed-forward); the pooler (first token, Dense + tanh); the
masked-LM head (the ``max_predictions`` masked positions gathered, Dense + GeLU + LayerNorm, logits
against the transposed word-embedding table + bias) and the next-sentence head; the loss is the
mean masked-LM cross-entropy weighted by the label weights plus the next-sentence cross-entropy.

Precision as the zoo's ``compute_type=float16`` sets it (no amp level): the encoder layers, the pooler,
the masked-LM transform (Dense + LayerNorm) and the next-sentence Dense compute in float16 (``to_float``,
their LayerNorms included); the embeddings and their LayerNorm, the masked-LM logits and bias, the
log-softmaxes and the loss in float32. :class:`BertTrainCell` is the zoo's BertTrainOneStepWithLossScaleCell
(src/bert_for_pre_training.py): a dynamic loss scale, the gradients unscaled and each clipped to norm 1.0
(``nn.ClipByNorm``), the update skipped on overflow.

Used by bench/bench_fidelity.py (BERT-large, seq 128, batch 96; BERT-base with Lamb, batch 256) and by the
fidelity test with one layer. Any optimizer trains it (the zoo: Lamb for base; the calibration's BERT-large
AdamWeightDecay).
"""
from __future__ import annotations

import math

import numpy as np

from ascendemu.frontend import Tensor, nn, ops
from ascendemu.frontend.common import dtype as mstype
from ascendemu.frontend.common.initializer import Initializer, TruncatedNormal

# BERT-large (Devlin et al. 2019; the zoo's large config)
LARGE = dict(vocab_size=30522, hidden_size=1024, num_layers=24, num_heads=16, intermediate_size=4096,
             max_position=512, type_vocab_size=2, max_predictions=20, dropout=0.1)


class SelfAttention(nn.Cell):
    """Multi-head self-attention with an additive mask (0 where attended, -10000 where padded)."""

    def __init__(self, hidden: int, heads: int, dropout: float, init: Initializer):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.query = nn.Dense(hidden, hidden, weight_init=init)
        self.key = nn.Dense(hidden, hidden, weight_init=init)
        self.value = nn.Dense(hidden, hidden, weight_init=init)
        self.output = nn.Dense(hidden, hidden, weight_init=init)
        self.qk = ops.BatchMatMul(transpose_b=True)
        self.av = ops.BatchMatMul()
        self.softmax = nn.Softmax(axis=-1)
        self.dropout = nn.Dropout(p=dropout)

    def _heads(self, x, batch: int, seq: int):
        return ops.transpose(ops.reshape(x, (batch, seq, self.heads, self.head_dim)), (0, 2, 1, 3))

    def construct(self, x, mask):
        batch, seq, hidden = x.shape
        flat = ops.reshape(x, (batch * seq, hidden))
        q = self._heads(self.query(flat), batch, seq)
        k = self._heads(self.key(flat), batch, seq)
        v = self._heads(self.value(flat), batch, seq)
        scores = self.qk(q, k) * self.scale + mask
        ctx = self.av(self.dropout(self.softmax(scores)), v)
        ctx = ops.reshape(ops.transpose(ctx, (0, 2, 1, 3)), (batch * seq, hidden))
        return self.output(ctx)


class EncoderLayer(nn.Cell):
    """x = LN(x + drop(attn(x))); x = LN(x + drop(W2 gelu(W1 x))), on (batch*seq, hidden) rows."""

    def __init__(self, hidden: int, heads: int, intermediate: int, dropout: float, init: Initializer):
        super().__init__()
        self.attention = SelfAttention(hidden, heads, dropout, init)
        self.norm1 = nn.LayerNorm((hidden,))
        self.intermediate = nn.Dense(hidden, intermediate, weight_init=init, activation="gelu")
        self.output = nn.Dense(intermediate, hidden, weight_init=init)
        self.norm2 = nn.LayerNorm((hidden,))
        self.drop1, self.drop2 = nn.Dropout(p=dropout), nn.Dropout(p=dropout)

    def construct(self, x, mask):
        batch, seq, hidden = x.shape
        flat = ops.reshape(x, (batch * seq, hidden))
        h = self.norm1(flat + self.drop1(self.attention(x, mask)))
        h = self.norm2(h + self.drop2(self.output(self.intermediate(h))))
        return ops.reshape(h, (batch, seq, hidden))


class BertPreTraining(nn.Cell):
    """The pre-training network with its loss: inputs (input_ids, input_mask, token_type_ids,
    next_sentence_labels, masked_positions, masked_ids, masked_weights), output the scalar loss.
    ``init``: the weights' initializer (the zoo's TruncatedNormal(0.02) by default; a DryRun that
    only prices the step may pass a cheaper one)."""

    def __init__(self, vocab_size: int, hidden_size: int, num_layers: int, num_heads: int,
                 intermediate_size: int, max_position: int, type_vocab_size: int, max_predictions: int,
                 dropout: float, init: Initializer | None = None):
        super().__init__()
        init = TruncatedNormal(0.02) if init is None else init
        self.vocab = vocab_size
        self.word = nn.Embedding(vocab_size, hidden_size, embedding_table=init)
        self.position = nn.Embedding(max_position, hidden_size, embedding_table=init)
        self.segment = nn.Embedding(type_vocab_size, hidden_size, embedding_table=init)
        self.embed_norm = nn.LayerNorm((hidden_size,))
        self.embed_drop = nn.Dropout(p=dropout)
        self.layers = nn.CellList([EncoderLayer(hidden_size, num_heads, intermediate_size, dropout, init)
                                   for _ in range(num_layers)])
        self.pooler = nn.Dense(hidden_size, hidden_size, weight_init=init, activation="tanh")
        self.mlm_dense = nn.Dense(hidden_size, hidden_size, weight_init=init, activation="gelu")
        self.mlm_norm = nn.LayerNorm((hidden_size,))
        self.mlm_bias = nn.Dense(1, vocab_size, has_bias=False)      # zoo: output_bias, added to the logits
        self.nsp = nn.Dense(hidden_size, 2, weight_init=init)
        self.logits = ops.MatMul(transpose_b=True)
        self.log_softmax = nn.LogSoftmax(axis=-1)
        self.max_predictions = max_predictions
        self.reduce_sum, self.reduce_mean = ops.ReduceSum(), ops.ReduceMean()
        for cell in (*self.layers, self.pooler, self.mlm_dense, self.mlm_norm, self.nsp):
            cell.to_float(mstype.float16)          # the zoo's compute_type

    def construct(self, input_ids, input_mask, token_type_ids, next_sentence_labels, masked_positions,
                  masked_ids, masked_weights):
        batch, seq = input_ids.shape
        # the zoo's full_position_ids: a constant 0..seq-1
        positions = Tensor(np.arange(seq, dtype=np.int32))
        x = self.word(input_ids) + self.position(positions) + self.segment(token_type_ids)
        hidden = x.shape[-1]
        x = ops.reshape(self.embed_drop(self.embed_norm(ops.reshape(x, (batch * seq, hidden)))), (batch, seq, hidden))
        mask = ops.reshape((1.0 - ops.cast(input_mask, x.dtype)) * -10000.0, (batch, 1, 1, seq))
        for layer in self.layers:
            x = layer(x, mask)
        pooled = self.pooler(x[:, 0])
        # masked LM: the masked positions' rows of the flattened sequence output
        offsets = Tensor(np.arange(batch, dtype=np.int32).reshape(batch, 1) * seq)
        rows = ops.reshape(masked_positions + offsets, (-1,))
        picked = ops.gather(ops.reshape(x, (batch * seq, hidden)), rows, 0)
        h = ops.cast(self.mlm_norm(self.mlm_dense(picked)), mstype.float32)
        logits = self.logits(h, self.word.embedding_table) + ops.reshape(self.mlm_bias.weight, (1, self.vocab))
        log_probs = self.log_softmax(logits)
        labels = ops.one_hot(ops.reshape(masked_ids, (-1,)), self.vocab, 1.0, 0.0)
        weights = ops.reshape(masked_weights, (-1,))
        per_token = -self.reduce_sum(log_probs * labels, -1)
        mlm = self.reduce_sum(per_token * weights) / (self.reduce_sum(weights) + 1e-5)
        nsp_log = self.log_softmax(ops.cast(self.nsp(pooled), mstype.float32))
        nsp = -self.reduce_mean(self.reduce_sum(nsp_log * ops.one_hot(next_sentence_labels, 2, 1.0, 0.0), -1))
        return mlm + nsp


def bert_large(**overrides) -> BertPreTraining:
    """BERT-large pre-training network; ``overrides`` change any of :data:`LARGE` (e.g. num_layers=1)."""
    return BertPreTraining(**{**LARGE, **overrides})


# the zoo's pretrain_config.yaml: loss_scale_value, scale_factor, scale_window; GRADIENT_CLIP_VALUE
LOSS_SCALE = dict(loss_scale_value=2.0 ** 16, scale_factor=2, scale_window=1000)
CLIP_NORM = 1.0


def decay_groups(params, weight_decay: float) -> list[dict]:
    """The zoo's decay_filter: weight decay except on LayerNorm parameters (gamma and beta here) and biases."""
    def plain(p):
        return p.name.endswith((".gamma", ".beta")) or "bias" in p.name.lower()
    return [{"params": [p for p in params if not plain(p)], "weight_decay": weight_decay},
            {"params": [p for p in params if plain(p)], "weight_decay": 0.0}]


class BertTrainCell(nn.TrainOneStepWithLossScaleCell):
    """The zoo's BertTrainOneStepWithLossScaleCell: gradients at the loss scale, unscaled, each clipped to norm
    :data:`CLIP_NORM`, the update skipped when one overflows; returns (loss, overflow, loss scale)."""

    def __init__(self, network: nn.Cell, optimizer: nn.Cell):
        super().__init__(network, optimizer, scale_sense=nn.DynamicLossScaleUpdateCell(**LOSS_SCALE))
        self.clip = nn.ClipByNorm()
        self.clip_norm = Tensor(np.array([CLIP_NORM], np.float32))

    def construct(self, *inputs):
        loss = self.network(*inputs)
        scaling_sens = self.scale_sense
        status, scaling_sens = self.start_overflow_check(loss, scaling_sens)
        grads = self.grad(self.network, self.weights)(*inputs, ops.cast(scaling_sens, mstype.float32))
        grads = self.grad_reducer(grads)
        grads = tuple(self.clip(g * ops.reciprocal(scaling_sens), self.clip_norm) for g in grads)
        cond = self.get_overflow_status(status, grads)
        overflow = self.process_loss_scale(cond)
        if not overflow:
            self.optimizer(grads)
        return loss, cond, scaling_sens
