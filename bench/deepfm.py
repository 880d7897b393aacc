"""DeepFM training on Criteo, written with the MindSpore API only, after mindspore-ai/models
official/recommend/DeepFM at commit eab643f5 (src/deepfm.py DeepFMModel, DenseLayer,
NetWithLossClass, TrainStepWrap; default_config.yaml; train.py): 39 fields gathered from a
184965-row first-order weight table (width 1) and a 184965-row embedding table of width 80, both
weighted by the batch's feature weights; the linear term, the factorization machine's pairwise term
0.5 * sum((sum vx)^2 - sum vx^2) and a 3120-1024-512-256-128-1 MLP whose layers compute in float16
(casts around MatMul + BiasAdd + ReLU, convert_dtype=True, after a Dropout(p=0.0) that is the
identity) add up to the logit; sigmoid cross-entropy, mean, plus L2 (8e-5) on both tables / 2; one
gradient with sens 1024 and Adam (lr 5e-4, eps 5e-8, loss_scale 1024) on every parameter; no amp
(train.py's Model has no amp_level), batch 16000, dataset sink mode, one Ascend 910 (the README's
"1pc: 21 ms/step", MindSpore 1.0.0). The parameters are all drawn N(0, 0.01), as weight_bias_init
['normal', 'normal'] and init_var_dict do.

    ascendemu run --dry-run bench/deepfm.py [--batch 16000] [--steps 2]
"""
import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore import Parameter, ParameterTuple, Tensor

from sunk_main import train_sunk

FIELDS = 39                  # default_config.yaml data_field_size (13 dense + 26 categorical)
VOCAB = 184965               # data_vocab_size
EMB = 80                     # data_emb_dim
DEEP = [1024, 512, 256, 128]  # deep_layer_args, "relu"
L2 = 8e-5                    # l2_coef
LR, EPS = 5e-4, 5e-8         # learning_rate, epsilon
LOSS_SCALE = 1024.0          # loss_scale: TrainStepWrap's sens and Adam's loss_scale


def normal(shape, name):
    """init_method / init_var_dict's 'normal': N(0, 0.01) in float32."""
    return Parameter(Tensor(np.random.normal(0.0, 0.01, shape).astype(np.float32)), name=name)


class DenseLayer(nn.Cell):
    """Dropout(p=0.0), then MatMul + BiasAdd (+ ReLU) in float16, float32 in and out."""

    def __init__(self, fan_in, fan_out, use_act=True):
        super().__init__()
        self.weight = normal([fan_in, fan_out], "weight")
        self.bias = normal([fan_out], "bias")
        self.matmul, self.bias_add, self.relu = ops.MatMul(), ops.BiasAdd(), ops.ReLU()
        self.dropout = nn.Dropout(p=0.0)
        self.use_act = use_act

    def construct(self, x):
        x = ops.cast(self.dropout(x), ms.float16)
        wx = self.matmul(x, ops.cast(self.weight, ms.float16))
        wx = self.bias_add(wx, ops.cast(self.bias, ms.float16))
        if self.use_act:
            wx = self.relu(wx)
        return ops.cast(wx, ms.float32)


class DeepFMModel(nn.Cell):
    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self.fm_w = normal([VOCAB, 1], "W_l2")
        self.embedding_table = normal([VOCAB, EMB], "V_l2")
        dims = [FIELDS * EMB] + DEEP + [1]
        self.dense_layer_1 = DenseLayer(dims[0], dims[1])
        self.dense_layer_2 = DenseLayer(dims[1], dims[2])
        self.dense_layer_3 = DenseLayer(dims[2], dims[3])
        self.dense_layer_4 = DenseLayer(dims[3], dims[4])
        self.dense_layer_5 = DenseLayer(dims[4], dims[5], use_act=False)
        self.gather = ops.Gather()

    def construct(self, id_hldr, wt_hldr):
        mask = ops.reshape(wt_hldr, (self.batch, FIELDS, 1))
        linear_out = ops.reduce_sum(self.gather(self.fm_w, id_hldr, 0) * mask, 1)
        vx = self.gather(self.embedding_table, id_hldr, 0) * mask
        v1 = ops.square(ops.reduce_sum(vx, 1))
        v2 = ops.reduce_sum(ops.square(vx), 1)
        fm_out = ops.reshape(0.5 * ops.reduce_sum(v1 - v2, 1), (-1, 1))
        deep_in = ops.reshape(vx, (-1, FIELDS * EMB))
        deep_in = self.dense_layer_1(deep_in)
        deep_in = self.dense_layer_2(deep_in)
        deep_in = self.dense_layer_3(deep_in)
        deep_in = self.dense_layer_4(deep_in)
        deep_out = self.dense_layer_5(deep_in)
        return linear_out + fm_out + deep_out, self.fm_w, self.embedding_table


class NetWithLossClass(nn.Cell):
    """Mean sigmoid cross-entropy + L2 on both tables / 2."""

    def __init__(self, network):
        super().__init__(auto_prefix=False)
        self.network = network
        self.loss = ops.SigmoidCrossEntropyWithLogits()

    def construct(self, batch_ids, batch_wts, label):
        predict, fm_id_weight, fm_id_embs = self.network(batch_ids, batch_wts)
        mean_log_loss = ops.reduce_mean(self.loss(predict, label))
        l2_loss_w = ops.reduce_sum(ops.square(fm_id_weight))
        l2_loss_v = ops.reduce_sum(ops.square(fm_id_embs))
        return mean_log_loss + L2 * (l2_loss_v + l2_loss_w) * 0.5


class TrainStepWrap(nn.Cell):
    """Gradient of the loss scaled by LOSS_SCALE, Adam unscaling it (one card: no grad reducer)."""

    def __init__(self, network):
        super().__init__(auto_prefix=False)
        self.network = network
        self.network.set_train()
        self.weights = ParameterTuple(network.trainable_params())
        self.optimizer = nn.Adam(self.weights, learning_rate=LR, eps=EPS, loss_scale=LOSS_SCALE)
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)

    def construct(self, batch_ids, batch_wts, label):
        loss = self.network(batch_ids, batch_wts, label)
        sens = ops.fill(loss.dtype, loss.shape, LOSS_SCALE)
        grads = self.grad(self.network, self.weights)(batch_ids, batch_wts, label, sens)
        return ops.depend(loss, self.optimizer(grads))


def build(batch):
    """(the training cell, one batch of its inputs: ids, weights, labels)."""
    cell = TrainStepWrap(NetWithLossClass(DeepFMModel(batch)))
    inputs = [np.zeros((batch, FIELDS), np.int32), np.ones((batch, FIELDS), np.float32),
              np.zeros((batch, 1), np.float32)]
    return cell, inputs


if __name__ == "__main__":
    train_sunk(__doc__.splitlines()[0], build, 16000, ["ids", "wts", "label"], "DeepFM")
