"""Inception-v4 training on ImageNet, written with the MindSpore API only, after mindspore-ai/models
official/cv/Inception/inceptionv4 at commit eab643f5 (src/inceptionv4.py Inceptionv4, default_config.yaml
(Ascend), train.py): 299x299 RGB images; the stem, 4 Inception-A, Reduction-A, 7 Inception-B,
Reduction-B and 3 Inception-C blocks, every convolution a Conv2dBnAct (no bias, BatchNorm, ReLU); a
spatial mean, BatchNorm1d, dropout (p 0.8) and a DenseBnAct to 1000 classes with BatchNorm and
log-softmax; sparse softmax cross-entropy (mean); RMSProp (decay 0.9, epsilon 1.0, momentum 0.9, weight
decay 4e-5 on all but the beta/gamma/bias parameters, loss scale 1024) on train.py's cosine learning rate
with one warm-up epoch over 250 epochs of 10009 steps; FixedLossScaleManager(1024, False), amp O3, batch
128, dataset sink mode, as the README's Ascend 910 run ("Training performance results": 1p 556 img/s).
train.py's XavierUniform re-initialisation of the decayed parameters is left out (their initial values do
not change what a step computes).

    ascendemu run --dry-run bench/inception_v4.py [--batch 128] [--steps 2]
"""
import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops

from sunk_main import train_sunk

IMAGE = 299                  # default_config.yaml width, height
CLASSES = 1000               # num_classes
LOSS_SCALE = 1024.0          # loss_scale
WEIGHT_DECAY = 4e-5          # weight_decay
EPOCHS = 250                 # epoch_size
STEPS_PER_EPOCH = 1281167 // 128  # ImageNet's 1281167 training images, batch 128, drop_remainder
LR_INIT, LR_END, LR_MAX, WARMUP_EPOCHS = 4e-5, 4e-6, 0.4, 1


def cosine_lr():
    """train.py's generate_cosine_lr: linear warm-up from LR_INIT to LR_MAX, then cosine decay to LR_END."""
    total, warmup = STEPS_PER_EPOCH * EPOCHS, STEPS_PER_EPOCH * WARMUP_EPOCHS
    i = np.arange(total, dtype=np.float64)
    warm = LR_INIT + (LR_MAX - LR_INIT) / warmup * (i + 1)
    decay = (LR_MAX - LR_END) * 0.5 * (1 + np.cos(np.pi * (i - warmup) / (total - warmup))) + LR_END
    return np.where(i < warmup, warm, decay).astype(np.float32)


def conv(in_channels, out_channels, kernel_size, stride=1, pad_mode="valid", padding=0):
    """The zoo's Conv2d: Conv2dBnAct without bias, with BatchNorm and ReLU."""
    return nn.Conv2dBnAct(in_channels, out_channels, kernel_size, stride=stride, pad_mode=pad_mode, padding=padding,
                          weight_init="XavierUniform", bias_init="zeros", has_bias=False, has_bn=True,
                          activation="relu")


def avgpool():
    return nn.AvgPool2d(kernel_size=3, stride=1, pad_mode="same")


class Stem(nn.Cell):
    def __init__(self, in_channels):
        super().__init__()
        self.conv2d_1a_3x3 = conv(in_channels, 32, 3, stride=2)
        self.conv2d_2a_3x3 = conv(32, 32, 3)
        self.conv2d_2b_3x3 = conv(32, 64, 3, pad_mode="pad", padding=1)
        self.mixed_3a_branch_0 = nn.MaxPool2d(3, stride=2)
        self.mixed_3a_branch_1 = conv(64, 96, 3, stride=2)
        self.mixed_4a_branch_0 = nn.SequentialCell([conv(160, 64, 1), conv(64, 96, 3)])
        self.mixed_4a_branch_1 = nn.SequentialCell([
            conv(160, 64, 1), conv(64, 64, (1, 7), pad_mode="same"), conv(64, 64, (7, 1), pad_mode="same"),
            conv(64, 96, 3)])
        self.mixed_5a_branch_0 = conv(192, 192, 3, stride=2)
        self.mixed_5a_branch_1 = nn.MaxPool2d(3, stride=2)
        self.concat = ops.Concat(1)

    def construct(self, x):
        x = self.conv2d_2b_3x3(self.conv2d_2a_3x3(self.conv2d_1a_3x3(x)))               # 147 x 147 x 64
        x = self.concat((self.mixed_3a_branch_0(x), self.mixed_3a_branch_1(x)))         # 73 x 73 x 160
        x = self.concat((self.mixed_4a_branch_0(x), self.mixed_4a_branch_1(x)))         # 71 x 71 x 192
        return self.concat((self.mixed_5a_branch_0(x), self.mixed_5a_branch_1(x)))      # 35 x 35 x 384


class InceptionA(nn.Cell):
    def __init__(self, in_channels):
        super().__init__()
        self.branch_0 = conv(in_channels, 96, 1)
        self.branch_1 = nn.SequentialCell([conv(in_channels, 64, 1), conv(64, 96, 3, pad_mode="pad", padding=1)])
        self.branch_2 = nn.SequentialCell([
            conv(in_channels, 64, 1), conv(64, 96, 3, pad_mode="pad", padding=1),
            conv(96, 96, 3, pad_mode="pad", padding=1)])
        self.branch_3 = nn.SequentialCell([avgpool(), conv(384, 96, 1)])
        self.concat = ops.Concat(1)

    def construct(self, x):
        return self.concat((self.branch_0(x), self.branch_1(x), self.branch_2(x), self.branch_3(x)))


class InceptionB(nn.Cell):
    def __init__(self, in_channels):
        super().__init__()
        self.branch_0 = conv(in_channels, 384, 1)
        self.branch_1 = nn.SequentialCell([
            conv(in_channels, 192, 1), conv(192, 224, (1, 7), pad_mode="same"),
            conv(224, 256, (7, 1), pad_mode="same")])
        self.branch_2 = nn.SequentialCell([
            conv(in_channels, 192, 1), conv(192, 192, (7, 1), pad_mode="same"),
            conv(192, 224, (1, 7), pad_mode="same"), conv(224, 224, (7, 1), pad_mode="same"),
            conv(224, 256, (1, 7), pad_mode="same")])
        self.branch_3 = nn.SequentialCell([avgpool(), conv(in_channels, 128, 1)])
        self.concat = ops.Concat(1)

    def construct(self, x):
        return self.concat((self.branch_0(x), self.branch_1(x), self.branch_2(x), self.branch_3(x)))


class ReductionA(nn.Cell):
    def __init__(self, in_channels, k, l, m, n):
        super().__init__()
        self.branch_0 = conv(in_channels, n, 3, stride=2)
        self.branch_1 = nn.SequentialCell([
            conv(in_channels, k, 1), conv(k, l, 3, pad_mode="pad", padding=1), conv(l, m, 3, stride=2)])
        self.branch_2 = nn.MaxPool2d(3, stride=2)
        self.concat = ops.Concat(1)

    def construct(self, x):
        return self.concat((self.branch_0(x), self.branch_1(x), self.branch_2(x)))     # 17 x 17 x 1024


class ReductionB(nn.Cell):
    def __init__(self, in_channels):
        super().__init__()
        self.branch_0 = nn.SequentialCell([conv(in_channels, 192, 1), conv(192, 192, 3, stride=2)])
        self.branch_1 = nn.SequentialCell([
            conv(in_channels, 256, 1), conv(256, 256, (1, 7), pad_mode="same"),
            conv(256, 320, (7, 1), pad_mode="same"), conv(320, 320, 3, stride=2)])
        self.branch_2 = nn.MaxPool2d(3, stride=2)
        self.concat = ops.Concat(1)

    def construct(self, x):
        return self.concat((self.branch_0(x), self.branch_1(x), self.branch_2(x)))     # 8 x 8 x 1536


class InceptionC(nn.Cell):
    def __init__(self, in_channels):
        super().__init__()
        self.branch_0 = conv(in_channels, 256, 1)
        self.branch_1 = conv(in_channels, 384, 1)
        self.branch_1_1 = conv(384, 256, (1, 3), pad_mode="same")
        self.branch_1_2 = conv(384, 256, (3, 1), pad_mode="same")
        self.branch_2 = nn.SequentialCell([
            conv(in_channels, 384, 1), conv(384, 448, (3, 1), pad_mode="same"),
            conv(448, 512, (1, 3), pad_mode="same")])
        self.branch_2_1 = conv(512, 256, (1, 3), pad_mode="same")
        self.branch_2_2 = conv(512, 256, (3, 1), pad_mode="same")
        self.branch_3 = nn.SequentialCell([avgpool(), conv(in_channels, 256, 1)])
        self.concat = ops.Concat(1)

    def construct(self, x):
        x1 = self.branch_1(x)
        x1 = self.concat((self.branch_1_1(x1), self.branch_1_2(x1)))
        x2 = self.branch_2(x)
        x2 = self.concat((self.branch_2_1(x2), self.branch_2_2(x2)))
        return self.concat((self.branch_0(x), x1, x2, self.branch_3(x)))                # 8 x 8 x 1536


class Inceptionv4(nn.Cell):
    def __init__(self, in_channels=3, classes=CLASSES, k=192, l=224, m=256, n=384):
        super().__init__()
        blocks = [Stem(in_channels)] + [InceptionA(384) for _ in range(4)] + [ReductionA(384, k, l, m, n)]
        blocks += [InceptionB(1024) for _ in range(7)] + [ReductionB(1024)] + [InceptionC(1536) for _ in range(3)]
        self.features = nn.SequentialCell(blocks)
        self.avgpool = ops.ReduceMean(keep_dims=False)
        self.softmax = nn.DenseBnAct(1536, classes, weight_init="XavierUniform", has_bias=True, has_bn=True,
                                     activation="logsoftmax")
        self.dropout = nn.Dropout(p=0.8)
        self.bn0 = nn.BatchNorm1d(1536, eps=0.001, momentum=0.1)

    def construct(self, x):
        x = self.avgpool(self.features(x), (2, 3))
        return self.softmax(self.dropout(self.bn0(x)))


def build(batch):
    """(Model as train.py builds it on Ascend, one batch of its inputs)."""
    net = Inceptionv4()
    params = net.trainable_params()
    decayed = [not any(k in p.name for k in ("beta", "gamma", "bias")) for p in params]
    decay = [p for p, d in zip(params, decayed) if d]
    no_decay = [p for p, d in zip(params, decayed) if not d]
    groups = [{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": no_decay}, {"order_params": params}]
    opt = nn.RMSProp(groups, ms.Tensor(cosine_lr()), decay=0.9, epsilon=1.0, weight_decay=WEIGHT_DECAY,
                     momentum=0.9, loss_scale=LOSS_SCALE)
    model = ms.Model(net, loss_fn=nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), optimizer=opt,
                     amp_level="O3", loss_scale_manager=ms.FixedLossScaleManager(LOSS_SCALE, False))
    inputs = [np.zeros((batch, 3, IMAGE, IMAGE), np.float32), np.zeros((batch,), np.int32)]
    return model, inputs


if __name__ == "__main__":
    train_sunk(__doc__.splitlines()[0], build, 128, ["image", "label"], f"Inception-v4 ({IMAGE}x{IMAGE})")
