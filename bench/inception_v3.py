"""Inception-v3 training on ImageNet, written with the MindSpore API only, after mindspore-ai/models
official/cv/Inception/inceptionv3 at commit eab643f5 (src/inception_v3.py InceptionV3, src/loss.py
CrossEntropy, src/lr_generator.py get_lr, default_config.yaml, train.py, src/dataset.py): 299x299 RGB
images through the stem, Mixed_5b..Mixed_7c (Inception A/B/C/D/E blocks of conv + BatchNorm(eps 1e-3,
momentum 0.9997) + ReLU, XavierUniform weights, no conv bias), the 8x8 average pool, dropout (keep 0.8)
and a 2048-1000 Dense; in training the network also returns the aux logits of Mixed_6e (5x5 stride-3
average pool, 1x1 and 5x5 convolutions with bias, a 768-1000 Dense). Loss: softmax cross-entropy against
label-smoothed (0.1) one-hot labels, the main loss plus 0.2 x the aux loss. RMSProp (decay 0.9, momentum
0.9, epsilon 1.0, weight decay 4e-5; the parameter groups train.py builds) on the cosine learning-rate
array of get_lr (1 warm-up epoch of 10009 steps, 250 epochs), loss scale 1024 with
FixedLossScaleManager(1024, False), amp O3, batch 128, dataset sink mode, one Ascend 910 (the README's
"Speed | 1pc:1200 img/s", MindSpore 1.3.0).

    ascendemu run --dry-run bench/inception_v3.py [--batch 128] [--steps 2]
"""
import math

import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore.common.initializer import XavierUniform, initializer

from sunk_main import train_sunk

IMAGE = 299                  # default_config.yaml width, height
CLASSES = 1000               # num_classes
DROPOUT_KEEP = 0.8           # dropout_keep_prob
SMOOTH = 0.1                 # smooth_factor
AUX_FACTOR = 0.2             # aux_factor
LOSS_SCALE = 1024.0          # loss_scale
WEIGHT_DECAY = 4e-5          # weight_decay
LR_INIT, LR_MAX, LR_END = 4e-5, 0.4, 4e-6
EPOCHS, WARMUP_EPOCHS = 250, 1
STEPS_PER_EPOCH = 1281167 // 128  # ImageNet's train set, batch 128, drop_remainder, one card


class BasicConv2d(nn.Cell):
    def __init__(self, in_channel, out_channel, kernel_size, stride=1, pad_mode="same"):
        super().__init__()
        self.conv = nn.Conv2d(in_channel, out_channel, kernel_size=kernel_size, stride=stride, pad_mode=pad_mode,
                              weight_init=XavierUniform(), has_bias=False)
        self.bn = nn.BatchNorm2d(out_channel, eps=0.001, momentum=0.9997)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


class InceptionA(nn.Cell):
    def __init__(self, in_channels, pool_features):
        super().__init__()
        self.branch0 = BasicConv2d(in_channels, 64, 1)
        self.branch1 = nn.SequentialCell([BasicConv2d(in_channels, 48, 1), BasicConv2d(48, 64, 5)])
        self.branch2 = nn.SequentialCell([BasicConv2d(in_channels, 64, 1), BasicConv2d(64, 96, 3),
                                          BasicConv2d(96, 96, 3)])
        self.branch_pool = nn.SequentialCell([nn.AvgPool2d(kernel_size=3, pad_mode="same"),
                                              BasicConv2d(in_channels, pool_features, 1)])

    def construct(self, x):
        return ops.concat((self.branch0(x), self.branch1(x), self.branch2(x), self.branch_pool(x)), 1)


class InceptionB(nn.Cell):
    def __init__(self, in_channels):
        super().__init__()
        self.branch0 = BasicConv2d(in_channels, 384, 3, stride=2, pad_mode="valid")
        self.branch1 = nn.SequentialCell([BasicConv2d(in_channels, 64, 1), BasicConv2d(64, 96, 3),
                                          BasicConv2d(96, 96, 3, stride=2, pad_mode="valid")])
        self.branch_pool = nn.MaxPool2d(kernel_size=3, stride=2)

    def construct(self, x):
        return ops.concat((self.branch0(x), self.branch1(x), self.branch_pool(x)), 1)


class InceptionC(nn.Cell):
    def __init__(self, in_channels, channels_7x7):
        super().__init__()
        c7 = channels_7x7
        self.branch0 = BasicConv2d(in_channels, 192, 1)
        self.branch1 = nn.SequentialCell([BasicConv2d(in_channels, c7, 1), BasicConv2d(c7, c7, (1, 7)),
                                          BasicConv2d(c7, 192, (7, 1))])
        self.branch2 = nn.SequentialCell([BasicConv2d(in_channels, c7, 1), BasicConv2d(c7, c7, (7, 1)),
                                          BasicConv2d(c7, c7, (1, 7)), BasicConv2d(c7, c7, (7, 1)),
                                          BasicConv2d(c7, 192, (1, 7))])
        self.branch_pool = nn.SequentialCell([nn.AvgPool2d(kernel_size=3, pad_mode="same"),
                                              BasicConv2d(in_channels, 192, 1)])

    def construct(self, x):
        return ops.concat((self.branch0(x), self.branch1(x), self.branch2(x), self.branch_pool(x)), 1)


class InceptionD(nn.Cell):
    def __init__(self, in_channels):
        super().__init__()
        self.branch0 = nn.SequentialCell([BasicConv2d(in_channels, 192, 1),
                                          BasicConv2d(192, 320, 3, stride=2, pad_mode="valid")])
        self.branch1 = nn.SequentialCell([BasicConv2d(in_channels, 192, 1), BasicConv2d(192, 192, (1, 7)),
                                          BasicConv2d(192, 192, (7, 1)),
                                          BasicConv2d(192, 192, 3, stride=2, pad_mode="valid")])
        self.branch_pool = nn.MaxPool2d(kernel_size=3, stride=2)

    def construct(self, x):
        return ops.concat((self.branch0(x), self.branch1(x), self.branch_pool(x)), 1)


class InceptionE(nn.Cell):
    def __init__(self, in_channels):
        super().__init__()
        self.branch0 = BasicConv2d(in_channels, 320, 1)
        self.branch1 = BasicConv2d(in_channels, 384, 1)
        self.branch1_a, self.branch1_b = BasicConv2d(384, 384, (1, 3)), BasicConv2d(384, 384, (3, 1))
        self.branch2 = nn.SequentialCell([BasicConv2d(in_channels, 448, 1), BasicConv2d(448, 384, 3)])
        self.branch2_a, self.branch2_b = BasicConv2d(384, 384, (1, 3)), BasicConv2d(384, 384, (3, 1))
        self.branch_pool = nn.SequentialCell([nn.AvgPool2d(kernel_size=3, pad_mode="same"),
                                              BasicConv2d(in_channels, 192, 1)])

    def construct(self, x):
        x1 = self.branch1(x)
        x1 = ops.concat((self.branch1_a(x1), self.branch1_b(x1)), 1)
        x2 = self.branch2(x)
        x2 = ops.concat((self.branch2_a(x2), self.branch2_b(x2)), 1)
        return ops.concat((self.branch0(x), x1, x2, self.branch_pool(x)), 1)


class Logits(nn.Cell):
    def __init__(self, num_classes, dropout_keep_prob):
        super().__init__()
        self.avg_pool = nn.AvgPool2d(8, pad_mode="valid")
        self.dropout = nn.Dropout(p=1 - dropout_keep_prob)
        self.flatten = ops.Flatten()
        self.fc = nn.Dense(2048, num_classes)

    def construct(self, x):
        return self.fc(self.flatten(self.dropout(self.avg_pool(x))))


class AuxLogits(nn.Cell):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.avg_pool = nn.AvgPool2d(5, stride=3, pad_mode="valid")
        self.conv2d_0 = nn.Conv2d(in_channels, 128, kernel_size=1)
        self.conv2d_1 = nn.Conv2d(128, 768, kernel_size=5, pad_mode="valid")
        self.flatten = ops.Flatten()
        self.fc = nn.Dense(in_channels, num_classes)

    def construct(self, x):
        return self.fc(self.flatten(self.conv2d_1(self.conv2d_0(self.avg_pool(x)))))


class InceptionV3(nn.Cell):
    """The training network: (logits, aux logits)."""

    def __init__(self, num_classes, dropout_keep_prob):
        super().__init__()
        self.Conv2d_1a = BasicConv2d(3, 32, 3, stride=2, pad_mode="valid")
        self.Conv2d_2a = BasicConv2d(32, 32, 3, stride=1, pad_mode="valid")
        self.Conv2d_2b = BasicConv2d(32, 64, 3, stride=1)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Conv2d_3b = BasicConv2d(64, 80, 1)
        self.Conv2d_4a = BasicConv2d(80, 192, 3, pad_mode="valid")
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Mixed_5b = InceptionA(192, pool_features=32)
        self.Mixed_5c = InceptionA(256, pool_features=64)
        self.Mixed_5d = InceptionA(288, pool_features=64)
        self.Mixed_6a = InceptionB(288)
        self.Mixed_6b = InceptionC(768, channels_7x7=128)
        self.Mixed_6c = InceptionC(768, channels_7x7=160)
        self.Mixed_6d = InceptionC(768, channels_7x7=160)
        self.Mixed_6e = InceptionC(768, channels_7x7=192)
        self.Mixed_7a = InceptionD(768)
        self.Mixed_7b = InceptionE(1280)
        self.Mixed_7c = InceptionE(2048)
        self.aux_logits = AuxLogits(768, num_classes)
        self.logits = Logits(num_classes, dropout_keep_prob)

    def construct(self, x):
        x = self.maxpool1(self.Conv2d_2b(self.Conv2d_2a(self.Conv2d_1a(x))))
        x = self.maxpool2(self.Conv2d_4a(self.Conv2d_3b(x)))
        x = self.Mixed_5d(self.Mixed_5c(self.Mixed_5b(x)))
        x = self.Mixed_6e(self.Mixed_6d(self.Mixed_6c(self.Mixed_6b(self.Mixed_6a(x)))))
        aux_logits = self.aux_logits(x)
        x = self.Mixed_7c(self.Mixed_7b(self.Mixed_7a(x)))
        return self.logits(x), aux_logits


class CrossEntropy(nn.Cell):
    """Softmax cross-entropy of the logits and of the aux logits against label-smoothed one-hot labels,
    each averaged over the batch; the first plus ``factor`` x the second."""

    def __init__(self, smooth_factor, num_classes, factor):
        super().__init__()
        self.factor = factor
        self.onehot = ops.OneHot()
        self.on_value = ms.Tensor(1.0 - smooth_factor, ms.float32)
        self.off_value = ms.Tensor(1.0 * smooth_factor / (num_classes - 1), ms.float32)
        self.ce = nn.SoftmaxCrossEntropyWithLogits()
        self.mean = ops.ReduceMean(False)

    def construct(self, logits, label):
        logit, aux = logits
        loss_logit = self.mean(self.ce(logit, self.onehot(label, logit.shape[1], self.on_value, self.off_value)), 0)
        loss_aux = self.mean(self.ce(aux, self.onehot(label, aux.shape[1], self.on_value, self.off_value)), 0)
        return loss_logit + self.factor * loss_aux


def cosine_lr():
    """get_lr(..., lr_decay_mode='cosine'): a linear warm-up, then a cosine decay to LR_END, one rate per step."""
    total, warmup = STEPS_PER_EPOCH * EPOCHS, STEPS_PER_EPOCH * WARMUP_EPOCHS
    lr = [LR_INIT + (LR_MAX - LR_INIT) / warmup * (i + 1) if i < warmup else
          (LR_MAX - LR_END) * 0.5 * (1 + math.cos(math.pi * (i - warmup) / (total - warmup))) + LR_END
          for i in range(total)]
    return np.array(lr, np.float32)


def build(batch):
    """(Model as train.py builds it on Ascend, one batch of its inputs: images, int32 labels)."""
    net = InceptionV3(CLASSES, DROPOUT_KEEP)
    loss = CrossEntropy(SMOOTH, CLASSES, AUX_FACTOR)
    decayed = [p for p in net.trainable_params() if not any(k in p.name for k in ("beta", "gamma", "bias"))]
    no_decayed = [p for p in net.trainable_params() if any(k in p.name for k in ("beta", "gamma", "bias"))]
    for param in decayed:  # train.py re-initialises these on Ascend
        param.set_data(initializer(XavierUniform(), param.data.shape, param.data.dtype))
    group_params = [{"params": decayed, "weight_decay": WEIGHT_DECAY}, {"params": no_decayed},
                    {"order_params": net.trainable_params()}]
    opt = nn.RMSProp(group_params, ms.Tensor(cosine_lr()), decay=0.9, weight_decay=WEIGHT_DECAY, momentum=0.9,
                     epsilon=1.0, loss_scale=LOSS_SCALE)
    model = ms.Model(net, loss_fn=loss, optimizer=opt, metrics={"acc"}, amp_level="O3",
                     loss_scale_manager=ms.FixedLossScaleManager(LOSS_SCALE, False))
    inputs = [np.zeros((batch, 3, IMAGE, IMAGE), np.float32), np.zeros((batch,), np.int32)]
    return model, inputs


if __name__ == "__main__":
    train_sunk(__doc__.splitlines()[0], build, 128, ["image", "label"], f"Inception-v3 ({IMAGE}x{IMAGE})")
