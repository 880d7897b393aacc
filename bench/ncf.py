"""NCF (neural collaborative filtering) training on MovieLens-1M, written with the MindSpore API only, after
mindspore-ai/models research/recommend/ncf at commit eab643f5 (src/ncf.py NCFModel, NetWithLossClass,
TrainStepWrap; default_config.yaml; train.py): 6040 users and 3706 items (ml-1m) embedded 16 + 32 wide (the
MF and MLP halves of one table each), the MLP 64-32-16 with ReLU and the 32-1 logits layer in float16 (the
zoo's DenseLayer casts on Ascend), a two-class softmax cross-entropy masked by the batch's valid points,
Adam with loss scale 16384; batch 256 of (user, item, label, mask) columns, dataset sink mode, one
Ascend 910 (the README's 0.575 ms/step, MindSpore 1.0).

    ascendemu run --dry-run bench/ncf.py [--batch 256] [--steps 2]

bench/bench_fidelity.py runs it as the calibration figure of the sunk loop's per-batch GetNext cost: its
device work is a small share of its published step (docs/FIDELITY.md, "Sink mode: the loop's own tasks").
"""
import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore import Parameter, ParameterTuple
from mindspore.common.initializer import initializer

from sunk_main import train_sunk

USERS, ITEMS = 6040, 3706     # ml-1m (movielens.py)
FACTORS = 16                  # num_factors (= mf_dim)
LAYERS = [64, 32, 16]         # layers
SENS = 16384.0                # train.py's loss scale on Ascend


class DenseLayer(nn.Cell):
    """MatMul (transpose_b) + BiasAdd (+ ReLU) in float16, float32 in and out (the zoo's DenseLayer on Ascend)."""

    def __init__(self, fan_in, fan_out, relu):
        super().__init__()
        self.weight = Parameter(initializer("normal", [fan_out, fan_in], ms.float32), name="weight")
        self.bias = Parameter(initializer("zeros", [fan_out], ms.float32), name="bias")
        self.matmul = ops.MatMul(transpose_b=True)
        self.relu = relu

    def construct(self, x):
        y = ops.bias_add(self.matmul(ops.cast(x, ms.float16), ops.cast(self.weight, ms.float16)),
                         ops.cast(self.bias, ms.float16))
        return ops.cast(ops.relu(y) if self.relu else y, ms.float32)


class NCFModel(nn.Cell):
    """GMF (the product of the MF halves) and the MLP (over the concatenated MLP halves), concatenated into
    the logits layer."""

    def __init__(self):
        super().__init__()
        width = FACTORS + LAYERS[0] // 2
        self.embedding_user = nn.Embedding(USERS, width, embedding_table="normal")
        self.embedding_item = nn.Embedding(ITEMS, width, embedding_table="normal")
        self.mlp_dense1 = DenseLayer(LAYERS[0], LAYERS[1], True)
        self.mlp_dense2 = DenseLayer(LAYERS[1], LAYERS[2], True)
        self.logits_dense = DenseLayer(LAYERS[1], 1, False)

    def construct(self, users, items):
        user = ops.squeeze(self.embedding_user(users), 1)
        item = ops.squeeze(self.embedding_item(items), 1)
        mf = user[:, :FACTORS] * item[:, :FACTORS]
        mlp = self.mlp_dense2(self.mlp_dense1(ops.concat((user[:, FACTORS:], item[:, FACTORS:]), 1)))
        return self.logits_dense(ops.concat((mf, mlp), 1))


class NetWithLossClass(nn.Cell):
    """Logits [0, z] against the label, softmax cross-entropy masked by the valid points, their mean."""

    def __init__(self, network):
        super().__init__()
        self.network = network
        self.loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True)

    def construct(self, users, items, labels, mask):
        predict = self.network(users, items)
        loss = self.loss(ops.concat((ops.zeros_like(predict), predict), 1), ops.squeeze(labels, 1))
        mask = ops.squeeze(mask, 1)
        return ops.reduce_sum(loss * mask) * ops.reciprocal(ops.reduce_sum(mask))


class TrainStepWrap(nn.Cell):
    """One step: the loss, its gradients scaled by SENS, Adam with that loss scale."""

    def __init__(self, network):
        super().__init__()
        self.network = network
        self.weights = ParameterTuple(network.trainable_params())
        self.optimizer = nn.Adam(self.weights, learning_rate=0.01, beta1=0.9, beta2=0.999, eps=1e-8,
                                 loss_scale=SENS)
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)

    def construct(self, users, items, labels, mask):
        loss = self.network(users, items, labels, mask)
        sens = ops.fill(loss.dtype, loss.shape, SENS)
        grads = self.grad(self.network, self.weights)(users, items, labels, mask, sens)
        return ops.depend(loss, self.optimizer(grads))


def build(batch):
    """(the training cell, one batch of its inputs: users, items, labels, valid-point mask)."""
    cell = TrainStepWrap(NetWithLossClass(NCFModel()))
    inputs = [np.zeros((batch, 1), np.int32), np.zeros((batch, 1), np.int32), np.zeros((batch, 1), np.int32),
              np.ones((batch, 1), np.float32)]
    return cell, inputs


if __name__ == "__main__":
    train_sunk(__doc__.splitlines()[0], build, 256, ["users", "items", "labels", "mask"], "NCF")
