"""Reference networks written only against the MindSpore-style front end.

Used by the graph tests (capture, passes, memory plans), by the executors, by the README examples and
by the training tests (tests/test_train_reference.py). BatchNorm uses its moving statistics unless the
cell is in training mode (``set_train()``).

Captured node counts (before no-task removal / after it / after O1 fusion), derived in
tests/test_graph.py:  MLP 8/8/6, LeNet5 15/14/12, BasicBlock with downsample 9/9/8,
TransformerEncoderLayer 41/25/24, ResNet18 70/69/61.
"""
from __future__ import annotations

import math

from ascendemu.frontend import nn, ops
from ascendemu.frontend.common.initializer import Normal


class MLP(nn.Cell):
    """784 -> 256 -> 128 -> 10 with ReLU (Dense layers: MatMul + BiasAdd [+ ReLU])."""

    def __init__(self, in_features: int = 784, hidden: tuple[int, ...] = (256, 128), num_classes: int = 10):
        super().__init__()
        sizes = (in_features,) + tuple(hidden)
        self.layers = nn.SequentialCell([nn.Dense(a, b, activation="relu") for a, b in zip(sizes, sizes[1:])])
        self.head = nn.Dense(sizes[-1], num_classes)

    def construct(self, x):
        return self.head(self.layers(x))


class LeNet5(nn.Cell):
    """The MindSpore model-zoo LeNet-5: input (N, 1, 32, 32)."""

    def __init__(self, num_class: int = 10, num_channel: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
        self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
        self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


class BasicBlock(nn.Cell):
    """ResNet basic block: two 3x3 convs with BatchNorm; a 1x1 conv + BN shortcut when the shape changes."""

    def __init__(self, in_channel: int, out_channel: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channel, out_channel, 3, stride=stride, pad_mode="pad", padding=1)
        self.bn1 = nn.BatchNorm2d(out_channel)
        self.conv2 = nn.Conv2d(out_channel, out_channel, 3, stride=1, pad_mode="pad", padding=1)
        self.bn2 = nn.BatchNorm2d(out_channel)
        self.relu = nn.ReLU()
        self.has_downsample = stride != 1 or in_channel != out_channel
        if self.has_downsample:
            self.downsample = nn.SequentialCell([nn.Conv2d(in_channel, out_channel, 1, stride=stride,
                                                           pad_mode="valid"),
                                                 nn.BatchNorm2d(out_channel)])

    def construct(self, x):
        identity = self.downsample(x) if self.has_downsample else x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(nn.Cell):
    """ResNet-18 for NCHW images: 7x7/2 stem, max pool, 4 stages of 2 basic blocks, global mean, Dense.

    ``cifar_stem``: the stem for small (CIFAR-sized) images instead, a 3x3/1 conv and no max pool,
    so the first stage sees the full resolution.
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 3, cifar_stem: bool = False):
        super().__init__()
        self.cifar_stem = bool(cifar_stem)
        if self.cifar_stem:
            self.conv1 = nn.Conv2d(in_channels, 64, 3, stride=1, pad_mode="pad", padding=1)
        else:
            self.conv1 = nn.Conv2d(in_channels, 64, 7, stride=2, pad_mode="pad", padding=3)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.layer1 = self._make_layer(64, 64, 1)
        self.layer2 = self._make_layer(64, 128, 2)
        self.layer3 = self._make_layer(128, 256, 2)
        self.layer4 = self._make_layer(256, 512, 2)
        self.mean = ops.ReduceMean(keep_dims=True)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(512, num_classes)

    @staticmethod
    def _make_layer(in_channel: int, out_channel: int, stride: int) -> nn.SequentialCell:
        return nn.SequentialCell([BasicBlock(in_channel, out_channel, stride), BasicBlock(out_channel, out_channel)])

    def construct(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        if not self.cifar_stem:
            x = self.maxpool(x)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.flatten(self.mean(x, (2, 3)))
        return self.fc(x)


class MultiHeadAttention(nn.Cell):
    """Self-attention over (batch, seq, d_model): Q/K/V projections, per-head BatchMatMul + Softmax."""

    def __init__(self, d_model: int, nhead: int):
        super().__init__()
        if d_model % nhead:
            raise ValueError(f"d_model={d_model} must be divisible by nhead={nhead}")
        self.nhead, self.head_dim = nhead, d_model // nhead
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.query = nn.Dense(d_model, d_model)
        self.key = nn.Dense(d_model, d_model)
        self.value = nn.Dense(d_model, d_model)
        self.out = nn.Dense(d_model, d_model)
        self.reshape = ops.Reshape()
        self.transpose = ops.Transpose()
        self.qk = ops.BatchMatMul(transpose_b=True)
        self.av = ops.BatchMatMul()
        self.softmax = nn.Softmax(axis=-1)

    def _heads(self, x, batch: int, seq: int):
        return self.transpose(self.reshape(x, (batch, seq, self.nhead, self.head_dim)), (0, 2, 1, 3))

    def construct(self, x):
        batch, seq, d_model = x.shape
        q = self._heads(self.query(x), batch, seq)
        k = self._heads(self.key(x), batch, seq)
        v = self._heads(self.value(x), batch, seq)
        attn = self.softmax(self.qk(q, k) * self.scale)
        ctx = self.transpose(self.av(attn, v), (0, 2, 1, 3))
        return self.out(self.reshape(ctx, (batch, seq, d_model)))


class TransformerEncoderLayer(nn.Cell):
    """Post-norm encoder layer: x = LN(x + drop1(MHA(x))); x = LN(x + drop2(FFN(x))), FFN =
    Dense-GeLU-drop-Dense (dropout where MindSpore's and PyTorch's encoder layers have it; in training
    mode only)."""

    def __init__(self, d_model: int = 64, nhead: int = 4, dim_feedforward: int = 256, dropout: float = 0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, nhead)
        self.norm1 = nn.LayerNorm((d_model,))
        self.linear1 = nn.Dense(d_model, dim_feedforward, activation="gelu")
        self.linear2 = nn.Dense(dim_feedforward, d_model)
        self.norm2 = nn.LayerNorm((d_model,))
        self.dropout1, self.dropout, self.dropout2 = (nn.Dropout(p=dropout) for _ in range(3))

    def construct(self, x):
        x = self.norm1(x + self.dropout1(self.self_attn(x)))
        return self.norm2(x + self.dropout2(self.linear2(self.dropout(self.linear1(x)))))
