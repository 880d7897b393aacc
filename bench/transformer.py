"""Transformer ("large", WMT English-German) training, written with the MindSpore API only, after
mindspore-ai/models official/nlp/Transformer at commit eab643f5 (src/transformer_model.py TransformerModel,
src/transformer_for_train.py TransformerNetworkWithLoss and TransformerTrainOneStepWithLossScaleCell,
src/weight_init.py, src/lr_schedule.py, default_config_large.yaml, train.py): a shared 36560 x 1024
embedding table (scaled by sqrt(1024), sinusoidal positions added), 6 pre-norm encoder layers and 6
pre-norm decoder layers (self-attention, cross-attention in the decoder, 16 heads, a ReLU 4096
feed-forward; LayerNorm in float32, the Dense layers in float16 (to_float), softmax in float32, dropout
0.2), a final LayerNorm per stack, logits against the transposed embedding table in float16, log-softmax
in float32; label-smoothed (0.1) cross-entropy weighted by the target mask. The training cell is the
zoo's TransformerTrainOneStepWithLossScaleCell: dynamic loss scale (DynamicLossScaleManager(1024, 2,
2000)), gradients unscaled then each clipped to norm 5 (ClipByNorm), the update skipped on overflow;
Adam (default betas on Ascend) on the "constant*rsqrt_hidden*linear_warmup*rsqrt_decay" learning rate
(2.0, 8000 warmup steps, decay from 16000). Six int32 input columns of (batch, 128), as
src/dataset.py gives them; batch 96, as the README's Ascend row (400 ms/step, 8pcs, MindSpore 1.3.0);
213.7 M parameters, as that table says.

Deviations: one card is simulated (the 8-card run's gradient AllReduce is left out); the step is
trained in dataset sink mode (train.py passes dataset_sink_mode=False, so the published figure also
holds a host round trip per step); every batch is at seq_length 128 (the zoo's dataset mixes buckets of
16, 32, 48, 64 and 128 tokens, and its figure is the epoch's mean step); the learning-rate table covers
LR_STEPS steps (the zoo's: the dataset's size times 52 epochs, which changes only the table's length).

    ascendemu run --dry-run bench/transformer.py [--batch 96] [--steps 2]
"""
import math

import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore import Parameter, Tensor, jit
from mindspore.ops import constexpr
from mindspore.common.initializer import Normal, Uniform, initializer

from sunk_main import train_sunk

SEQ = 128                    # default_config_large.yaml seq_length (= max_position_embeddings)
VOCAB = 36560                # vocab_size
HIDDEN = 1024                # hidden_size
LAYERS = 6                   # num_hidden_layers
HEADS = 16                   # num_attention_heads
FFN = 4096                   # intermediate_size
DROPOUT = 0.2                # hidden_dropout_prob = attention_probs_dropout_prob
LABEL_SMOOTHING = 0.1
COMPUTE = ms.float16         # compute_type (train.py)
LOSS_SCALE, SCALE_FACTOR, SCALE_WINDOW = 1024, 2, 2000
CLIP_NORM = 5.0              # transformer_for_train.py GRADIENT_CLIP_VALUE (GRADIENT_CLIP_TYPE 1: by norm)
LR, WARMUP, DECAY_START = 2.0, 8000, 16000   # train.py lr_schedule
LR_STEPS = 20000


def weight_variable(fan_out, fan_in):
    """weight_init.py weight_variable: uniform in +-sqrt(3 / mean(fan_out, fan_in))."""
    return Uniform(math.sqrt(3.0 / ((fan_out + fan_in) / 2.0)))


def create_dynamic_lr(steps):
    """lr_schedule.py, "constant*rsqrt_hidden*linear_warmup*rsqrt_decay", held between warmup and the decay."""
    lr = []
    for step in range(1, steps + 1):
        cur = LR * HIDDEN ** -0.5 * min(1.0, step / WARMUP) * max(step - DECAY_START + WARMUP, WARMUP) ** -0.5
        lr.append(lr[-1] if WARMUP < step < DECAY_START else cur)
    return lr


def position_encoding(length, depth):
    """Sinusoids of different frequencies, (length, depth)."""
    depth //= 2
    positions = np.arange(length, dtype=np.float32)
    inv_timescales = np.exp(np.arange(depth, dtype=np.float32) * -(np.log(1e4) / (depth - 1)))
    scaled = np.expand_dims(positions, 1) * np.expand_dims(inv_timescales, 0)
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1)


@constexpr
def convert_np_to_tensor_encoder(seq_length):
    """The decoder's future mask: lower-triangular ones, (seq, seq)."""
    return Tensor(np.tril(np.ones((seq_length, seq_length))), dtype=ms.float32)


class EmbeddingLookup(nn.Cell):
    """Gather from the table; returns the embeddings and the table (the projection's weights)."""

    def __init__(self):
        super().__init__()
        self.embedding_table = Parameter(initializer(Normal(HIDDEN ** -0.5), [VOCAB, HIDDEN]), name="embedding_table")
        self.gather = ops.Gather()

    def construct(self, input_ids):
        flat_ids = ops.reshape(input_ids, (-1,))
        output = self.gather(self.embedding_table, flat_ids, 0)
        return ops.reshape(output, input_ids.shape + (HIDDEN,)), self.embedding_table.value()


class EmbeddingPostprocessor(nn.Cell):
    """x * sqrt(hidden) + positions, dropout."""

    def __init__(self):
        super().__init__()
        self.scores_mul = Tensor([math.sqrt(float(HIDDEN))], dtype=ms.float32)
        self.dropout = nn.Dropout(p=DROPOUT)
        self.position_embedding_table = Tensor(position_encoding(SEQ, HIDDEN), ms.float32)

    def construct(self, word_embeddings):
        input_len = word_embeddings.shape[1]
        output = word_embeddings * self.scores_mul
        output = output + ops.expand_dims(self.position_embedding_table[0:input_len:1, ::], 0)
        return self.dropout(output)


class LayerPreprocess(nn.Cell):
    """LayerNorm in float32, cast back to the input's dtype."""

    def __init__(self):
        super().__init__()
        self.layernorm = nn.LayerNorm((HIDDEN,))

    def construct(self, input_tensor):
        output = self.layernorm(ops.cast(input_tensor, ms.float32))
        return ops.cast(output, ops.dtype(input_tensor))


class LayerPostprocess(nn.Cell):
    """dropout(x) + residual."""

    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(p=DROPOUT)

    def construct(self, hidden_tensor, input_tensor):
        return self.dropout(hidden_tensor) + input_tensor


class MultiheadAttention(nn.Cell):
    """Q, K, V and output projections without bias in float16; scores * 1/sqrt(64) + (1 - mask) * -10000,
    softmax in float32, dropout; returns (batch * seq, hidden)."""

    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self.size_per_head = HIDDEN // HEADS
        self.scores_mul = Tensor([1.0 / math.sqrt(float(self.size_per_head))], dtype=COMPUTE)
        self.query_layer, self.key_layer, self.value_layer, self.out_layer = (
            nn.Dense(HIDDEN, HIDDEN, has_bias=False, weight_init=weight_variable(HIDDEN, HIDDEN)).to_float(COMPUTE)
            for _ in range(4))
        self.matmul_trans_b = ops.BatchMatMul(transpose_b=True)
        self.matmul = ops.BatchMatMul()
        self.multiply_data = Tensor([-10000.0], dtype=COMPUTE)
        self.softmax = nn.Softmax()
        self.dropout = nn.Dropout(p=DROPOUT)

    def construct(self, from_tensor, to_tensor, seq_length, enc_seq_length, attention_mask):
        shape_from = (self.batch, seq_length, HEADS, self.size_per_head)
        shape_to = (self.batch, enc_seq_length, HEADS, self.size_per_head)
        query = ops.transpose(ops.reshape(self.query_layer(ops.reshape(from_tensor, (-1, HIDDEN))), shape_from),
                              (0, 2, 1, 3))
        to_2d = ops.reshape(to_tensor, (-1, HIDDEN))
        key = ops.transpose(ops.reshape(self.key_layer(to_2d), shape_to), (0, 2, 1, 3))
        scores = self.matmul_trans_b(query, key) * self.scores_mul
        dtype = ops.dtype(scores)
        adder = (ops.cast(ops.tuple_to_array((1.0,)), dtype) -
                 ops.cast(ops.expand_dims(attention_mask, 1), dtype)) * self.multiply_data
        probs = self.softmax(ops.cast(adder + scores, ms.float32))
        probs = self.dropout(ops.cast(probs, ops.dtype(key)))
        value = ops.transpose(ops.reshape(self.value_layer(to_2d), shape_to), (0, 2, 1, 3))
        context = ops.transpose(self.matmul(probs, value), (0, 2, 1, 3))
        return self.out_layer(ops.reshape(context, (self.batch * seq_length, HIDDEN)))


class SelfAttention(nn.Cell):
    """Pre-norm attention block: x + dropout(attention(LN(x), memory)); memory is LN(x) unless cross-attention."""

    def __init__(self, batch, is_encdec_att):
        super().__init__()
        self.is_encdec_att = is_encdec_att
        self.attention = MultiheadAttention(batch)
        self.preprocess = LayerPreprocess()
        self.postprocess = LayerPostprocess()

    def construct(self, input_tensor, memory_tensor, attention_mask, seq_length, enc_seq_length):
        input_tensor = ops.reshape(input_tensor, (-1, HIDDEN))
        memory_tensor = ops.reshape(memory_tensor, (-1, HIDDEN))
        output = self.preprocess(input_tensor)
        if not self.is_encdec_att:
            memory_tensor = output
        attention_output = self.attention(output, memory_tensor, seq_length, enc_seq_length, attention_mask)
        return self.postprocess(attention_output, input_tensor)


class FeedForward(nn.Cell):
    """Pre-norm feed-forward block: x + dropout(W2 dropout(relu(W1 LN(x) + b1)) + b2), Dense in float16."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Dense(HIDDEN, FFN, activation="relu",
                              weight_init=weight_variable(FFN, HIDDEN)).to_float(COMPUTE)
        self.conv2 = nn.Dense(FFN, HIDDEN, weight_init=weight_variable(HIDDEN, FFN)).to_float(COMPUTE)
        self.preprocess = LayerPreprocess()
        self.postprocess = LayerPostprocess()
        self.dropout = nn.Dropout(p=DROPOUT)

    def construct(self, input_tensor):
        input_tensor = ops.reshape(input_tensor, (-1, HIDDEN))
        output = self.conv2(self.dropout(self.conv1(self.preprocess(input_tensor))))
        return self.postprocess(output, input_tensor)


class EncoderCell(nn.Cell):
    def __init__(self, batch):
        super().__init__()
        self.attention = SelfAttention(batch, is_encdec_att=False)
        self.feedforward = FeedForward()

    def construct(self, hidden_states, attention_mask, seq_length):
        attention_output = self.attention(hidden_states, hidden_states, attention_mask, seq_length, seq_length)
        return self.feedforward(attention_output)


class DecoderCell(nn.Cell):
    def __init__(self, batch):
        super().__init__()
        self.self_attention = SelfAttention(batch, is_encdec_att=False)
        self.cross_attention = SelfAttention(batch, is_encdec_att=True)
        self.feedforward = FeedForward()

    def construct(self, hidden_states, attention_mask, enc_states, enc_attention_mask, seq_length, enc_seq_length):
        attention_output = self.self_attention(hidden_states, hidden_states, attention_mask, seq_length, seq_length)
        attention_output = self.cross_attention(attention_output, enc_states, enc_attention_mask,
                                                seq_length, enc_seq_length)
        return self.feedforward(attention_output)


class TransformerEncoder(nn.Cell):
    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self.layers = nn.CellList([EncoderCell(batch) for _ in range(LAYERS)])
        self.layer_preprocess = LayerPreprocess()

    def construct(self, input_tensor, attention_mask, seq_length):
        prev_output = ops.reshape(input_tensor, (-1, HIDDEN))
        for layer_module in self.layers:
            prev_output = layer_module(prev_output, attention_mask, seq_length)
        return ops.reshape(self.layer_preprocess(prev_output), (self.batch, seq_length, HIDDEN))


class TransformerDecoder(nn.Cell):
    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self.layers = nn.CellList([DecoderCell(batch) for _ in range(LAYERS)])
        self.layer_preprocess = LayerPreprocess()

    def construct(self, input_tensor, attention_mask, enc_states, enc_attention_mask, seq_length, enc_seq_length):
        prev_output = ops.reshape(input_tensor, (-1, HIDDEN))
        for layer_module in self.layers:
            prev_output = layer_module(prev_output, attention_mask, enc_states, enc_attention_mask,
                                       seq_length, enc_seq_length)
        return ops.reshape(self.layer_preprocess(prev_output), (self.batch, seq_length, HIDDEN))


class CreateAttentionMaskFromInputMask(nn.Cell):
    """(batch, seq) mask -> (batch, seq, seq) = mask^T mask, in float32."""

    def __init__(self):
        super().__init__()
        self.batch_matmul = ops.BatchMatMul()

    def construct(self, input_mask):
        input_shape = input_mask.shape
        input_mask = ops.cast(input_mask, ms.float32)
        mask_left = ops.reshape(input_mask, input_shape + (1,))
        mask_right = ops.reshape(input_mask, (input_shape[0], 1, input_shape[1]))
        return self.batch_matmul(mask_left, mask_right)


class PredLogProbs(nn.Cell):
    """Logits against the embedding table in float16, log-softmax in float32."""

    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self.matmul = ops.MatMul(transpose_b=True)
        self.log_softmax = nn.LogSoftmax(axis=-1)

    def construct(self, input_tensor, output_weights, seq_length):
        input_tensor = ops.cast(ops.reshape(input_tensor, (self.batch * seq_length, HIDDEN)), COMPUTE)
        logits = self.matmul(input_tensor, ops.cast(output_weights, COMPUTE))
        return self.log_softmax(ops.cast(logits, ms.float32))


class TransformerModel(nn.Cell):
    """The training-mode model: encoder over the source, decoder over the target (future-masked), log probs."""

    def __init__(self, batch):
        super().__init__()
        self.tfm_embedding_lookup = EmbeddingLookup()
        self.tfm_embedding_postprocessor_for_encoder = EmbeddingPostprocessor()
        self.tfm_embedding_postprocessor_for_decoder = EmbeddingPostprocessor()
        self.tfm_encoder = TransformerEncoder(batch)
        self.projection = PredLogProbs(batch)
        self.tfm_decoder = TransformerDecoder(batch)
        self._create_attention_mask_from_input_mask = CreateAttentionMaskFromInputMask()

    def construct(self, source_ids, source_mask, target_ids, target_mask):
        seq_length = source_ids.shape[1]
        src_word_embeddings, embedding_tables = self.tfm_embedding_lookup(source_ids)
        src_embedding_output = self.tfm_embedding_postprocessor_for_encoder(src_word_embeddings)
        enc_attention_mask = self._create_attention_mask_from_input_mask(source_mask)
        encoder_output = self.tfm_encoder(ops.cast(src_embedding_output, COMPUTE),
                                          ops.cast(enc_attention_mask, COMPUTE), seq_length)
        future_mask = convert_np_to_tensor_encoder(seq_length)
        tgt_word_embeddings, _ = self.tfm_embedding_lookup(target_ids)
        tgt_embedding_output = self.tfm_embedding_postprocessor_for_decoder(tgt_word_embeddings)
        tgt_attention_mask = self._create_attention_mask_from_input_mask(target_mask)
        tgt_attention_mask = tgt_attention_mask * ops.expand_dims(future_mask, 0)
        decoder_output = self.tfm_decoder(ops.cast(tgt_embedding_output, COMPUTE),
                                          ops.cast(tgt_attention_mask, COMPUTE),
                                          encoder_output, enc_attention_mask, seq_length, seq_length)
        return self.projection(decoder_output, embedding_tables, seq_length)


class TransformerTrainingLoss(nn.Cell):
    """Label-smoothed cross-entropy, summed over tokens weighted by the label weights, over their sum."""

    def __init__(self, batch):
        super().__init__(auto_prefix=False)
        self.batch = batch
        self.onehot = ops.OneHot()
        self.on_value = Tensor(float(1 - LABEL_SMOOTHING), ms.float32)
        self.off_value = Tensor(LABEL_SMOOTHING / float(VOCAB - 1), ms.float32)
        self.reduce_sum = ops.ReduceSum()

    def construct(self, prediction_scores, label_ids, label_weights, seq_length):
        flat_shape = (self.batch * seq_length,)
        label_ids = ops.reshape(label_ids, flat_shape)
        label_weights = ops.cast(ops.reshape(label_weights, flat_shape), ms.float32)
        one_hot_labels = self.onehot(label_ids, VOCAB, self.on_value, self.off_value)
        per_example_loss = ops.neg(self.reduce_sum(prediction_scores * one_hot_labels, (-1,)))
        numerator = self.reduce_sum(label_weights * per_example_loss, ())
        denominator = self.reduce_sum(label_weights, ()) + ops.cast(ops.tuple_to_array((1e-5,)), ms.float32)
        return numerator / denominator


class TransformerNetworkWithLoss(nn.Cell):
    def __init__(self, batch):
        super().__init__(auto_prefix=False)
        self.transformer = TransformerModel(batch)
        self.loss = TransformerTrainingLoss(batch)

    def construct(self, source_ids, source_mask, target_ids, target_mask, label_ids, label_weights):
        prediction_scores = self.transformer(source_ids, source_mask, target_ids, target_mask)
        total_loss = self.loss(prediction_scores, label_ids, label_weights, source_ids.shape[1])
        return ops.cast(total_loss, ms.float32)


clip_grad = ops.MultitypeFuncGraph("clip_grad")


@clip_grad.register("Number", "Tensor")
def _clip_grad(clip_value, grad):
    """Clip one gradient to an L2 norm of clip_value (the zoo's clip type 1)."""
    return nn.ClipByNorm()(grad, ops.cast(ops.tuple_to_array((clip_value,)), ops.dtype(grad)))


grad_scale = ops.MultitypeFuncGraph("grad_scale")
reciprocal = ops.Reciprocal()


@grad_scale.register("Tensor", "Tensor")
def tensor_grad_scale(scale, grad):
    return grad * ops.cast(reciprocal(scale), ops.dtype(grad))


class TransformerTrainOneStepWithLossScaleCell(nn.TrainOneStepWithLossScaleCell):
    """The zoo's step: scaled gradients, unscaled, each clipped by norm, overflow check, dynamic loss
    scale update, Adam unless the step overflowed; returns (loss, overflow, loss scale)."""

    def __init__(self, network, optimizer, scale_update_cell):
        super().__init__(network, optimizer, scale_update_cell)
        self.degree = 1
        self.loss_scaling_manager = scale_update_cell
        self.loss_scale = Parameter(Tensor(scale_update_cell.get_loss_scale(), dtype=ms.float32), name="loss_scale")

    @jit
    def clip_grads(self, grads):
        return self.hyper_map(ops.partial(clip_grad, CLIP_NORM), grads)

    @jit
    def clip_scale_grads(self, scale, grads):
        return self.hyper_map(ops.partial(grad_scale, scale * self.degree), grads)

    def construct(self, source_eos_ids, source_eos_mask, target_sos_ids, target_sos_mask, target_eos_ids,
                  target_eos_mask):
        loss = self.network(source_eos_ids, source_eos_mask, target_sos_ids, target_sos_mask, target_eos_ids,
                            target_eos_mask)
        status, scaling_sens = self.start_overflow_check(loss, self.loss_scale)
        grads = self.grad(self.network, self.weights)(source_eos_ids, source_eos_mask, target_sos_ids,
                                                      target_sos_mask, target_eos_ids, target_eos_mask,
                                                      ops.cast(scaling_sens, ms.float32))
        grads = self.grad_reducer(grads)
        grads = self.clip_scale_grads(scaling_sens, grads)
        grads = self.clip_grads(grads)
        cond = self.get_overflow_status(status, grads)
        overflow = self.loss_scaling_manager(self.loss_scale, cond)
        if not overflow:
            self.optimizer(grads)
        return loss, cond, scaling_sens.value()


def build(batch):
    """(the training cell as train.py builds it on Ascend, one batch of its six input columns)."""
    netwithloss = TransformerNetworkWithLoss(batch)
    optimizer = nn.Adam(netwithloss.trainable_params(), Tensor(create_dynamic_lr(LR_STEPS), ms.float32))
    update_cell = ms.DynamicLossScaleManager(init_loss_scale=LOSS_SCALE, scale_factor=SCALE_FACTOR,
                                             scale_window=SCALE_WINDOW).get_update_cell()
    cell = TransformerTrainOneStepWithLossScaleCell(netwithloss, optimizer, update_cell)
    cell.set_train(True)
    ids, mask = np.ones((batch, SEQ), np.int32), np.ones((batch, SEQ), np.int32)
    return cell, [ids, mask, ids, mask, ids, mask]


if __name__ == "__main__":
    train_sunk(__doc__.splitlines()[0], build, 96, ["source_eos_ids", "source_eos_mask", "target_sos_ids",
                                                    "target_sos_mask", "target_eos_ids", "target_eos_mask"],
               f"Transformer large (seq {SEQ})")
