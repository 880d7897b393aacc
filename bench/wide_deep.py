"""Wide&Deep training on Criteo, written with the MindSpore API only, after mindspore-ai/models
official/recommend/Wide_and_Deep at commit eab643f5 (src/wide_and_deep.py WideDeepModel,
NetWithLossClass, TrainStepWrap; default_config.yaml; train.py): 39 fields looked up in a
200000-row embedding table of width 80 (deep) and one of width 1 (wide), weighted by the batch's
feature weights; the deep part a 3120-1024-512-256-128-1 MLP whose layers compute in float16
(casts around MatMul + BiasAdd + ReLU, as the zoo's DenseLayer); sigmoid cross-entropy, the deep loss
plus L2 (8e-5) on the deep table; two gradients (the wide loss for the wide parameters, FTRL; the
deep loss for the rest, Adam), sens 1024; batch 16000, dataset sink mode, one Ascend 910 (the
README's 20.906 ms/step, "Single Ascend").

    ascendemu run --dry-run bench/wide_deep.py [--batch 16000] [--steps 2]

bench/bench_fidelity.py runs it as the recommender check.
"""
import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore import Parameter, ParameterTuple
from mindspore.common.initializer import initializer

from sunk_main import train_sunk

FIELDS = 39                  # default_config.yaml field_size (13 dense + 26 categorical)
VOCAB = 200000               # vocab_size
EMB = 80                     # emb_dim
DEEP = [1024, 512, 256, 128]  # deep_layer_dim
L2 = 8e-5                    # l2_coef
SENS = 1024.0                # TrainStepWrap's sens (loss scale)


class DenseLayer(nn.Cell):
    """MatMul + BiasAdd (+ ReLU) in float16, float32 in and out (the zoo's convert_dtype=True)."""

    def __init__(self, fan_in, fan_out, activation=True):
        super().__init__()
        self.weight = Parameter(initializer("normal", [fan_in, fan_out], ms.float32), name="weight")
        self.bias = Parameter(initializer("normal", [fan_out], ms.float32), name="bias")
        self.matmul, self.bias_add, self.relu = ops.MatMul(), ops.BiasAdd(), ops.ReLU()
        self.activation = activation

    def construct(self, x):
        wx = self.matmul(ops.cast(x, ms.float16), ops.cast(self.weight, ms.float16))
        wx = self.bias_add(wx, ops.cast(self.bias, ms.float16))
        if self.activation:
            wx = self.relu(wx)
        return ops.cast(wx, ms.float32)


class WideDeepModel(nn.Cell):
    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self.wide_b = Parameter(initializer("normal", [1], ms.float32), name="Wide_b")
        dims = [FIELDS * EMB] + DEEP + [1]
        self.dense = nn.CellList([DenseLayer(dims[i], dims[i + 1], i + 2 < len(dims)) for i in range(len(dims) - 1)])
        self.deep_embeddinglookup = nn.EmbeddingLookup(VOCAB, EMB, target="DEVICE")
        self.wide_embeddinglookup = nn.EmbeddingLookup(VOCAB, 1, target="DEVICE")
        self.embedding_table = self.deep_embeddinglookup.embedding_table

    def construct(self, ids, wts):
        mask = ops.reshape(wts, (self.batch, FIELDS, 1))
        wx = self.wide_embeddinglookup(ids) * mask
        wide_out = ops.reshape(ops.reduce_sum(wx, 1) + self.wide_b, (-1, 1))
        deep = ops.reshape(self.deep_embeddinglookup(ids) * mask, (-1, FIELDS * EMB))
        for layer in self.dense:
            deep = layer(deep)
        return wide_out + deep, self.embedding_table


class NetWithLoss(nn.Cell):
    """(wide loss, deep loss = wide loss + L2 on the deep table / 2), as NetWithLossClass (not sparse)."""

    def __init__(self, network):
        super().__init__(auto_prefix=False)
        self.network = network
        self.loss = ops.SigmoidCrossEntropyWithLogits()

    def construct(self, ids, wts, label):
        predict, table = self.network(ids, wts)
        wide_loss = ops.reduce_mean(self.loss(predict, label))
        deep_loss = wide_loss + L2 * ops.reduce_sum(ops.square(table)) / 2
        return wide_loss, deep_loss


class IthOutput(nn.Cell):
    def __init__(self, network, index):
        super().__init__()
        self.network, self.index = network, index

    def construct(self, ids, wts, label):
        return self.network(ids, wts, label)[self.index]


class TrainStepWrap(nn.Cell):
    """FTRL on the wide parameters from the wide loss, Adam on the rest from the deep loss."""

    def __init__(self, network):
        super().__init__()
        self.network = network
        params = network.trainable_params()
        self.weights_w = ParameterTuple([p for p in params if "wide" in p.name])
        self.weights_d = ParameterTuple([p for p in params if "wide" not in p.name])
        self.optimizer_d = nn.Adam(self.weights_d, learning_rate=3.5e-4, eps=1e-8, loss_scale=SENS)
        self.optimizer_w = nn.FTRL(self.weights_w, learning_rate=5e-2, l1=1e-8, l2=1e-8, initial_accum=1.0,
                                   loss_scale=SENS)
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
        self.loss_w, self.loss_d = IthOutput(network, 0), IthOutput(network, 1)

    def construct(self, ids, wts, label):
        loss_w, loss_d = self.network(ids, wts, label)
        sens_w = ops.fill(loss_w.dtype, loss_w.shape, SENS)
        sens_d = ops.fill(loss_d.dtype, loss_d.shape, SENS)
        grads_w = self.grad(self.loss_w, self.weights_w)(ids, wts, label, sens_w)
        grads_d = self.grad(self.loss_d, self.weights_d)(ids, wts, label, sens_d)
        return ops.depend(loss_w, self.optimizer_w(grads_w)), ops.depend(loss_d, self.optimizer_d(grads_d))


def build(batch):
    """(the training cell, one batch of its inputs: ids, weights, labels)."""
    cell = TrainStepWrap(NetWithLoss(WideDeepModel(batch)))
    inputs = [np.zeros((batch, FIELDS), np.int32), np.ones((batch, FIELDS), np.float32),
              np.zeros((batch, 1), np.float32)]
    return cell, inputs


if __name__ == "__main__":
    train_sunk(__doc__.splitlines()[0], build, 16000, ["ids", "wts", "label"], "Wide&Deep")
