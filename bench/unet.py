"""U-Net (medical) training, written with the MindSpore API only, after mindspore-ai/models
official/cv/Unet at commit eab643f5 (src/unet_medical/unet_model.py UNetMedical, unet_parts.py,
src/loss.py CrossEntropyWithLogits, unet_medical_config.yaml, train.py): the original U-Net of
Ronneberger et al. on 572x572 one-channel images, 'valid' 3x3 convolutions with bias and ReLU, four
2x2 max-pool downsamplings (64 to 1024 channels), four 2x2 stride-2 transposed convolutions up, each
concatenated with the centre crop of its skip connection, a 1x1 output convolution to 2 classes over
the 388x388 crop; softmax cross-entropy per pixel against one-hot float labels; Adam (weight decay
5e-4, loss scale 1024, FixedLossScaleManager(1024, False)), amp O3, batch 16, dataset sink mode, as
the README's Ascend 910 run (267 ms/step, 1pc).

    ascendemu run --dry-run bench/unet.py [--batch 16] [--steps 2]

bench/bench_fidelity.py runs it as the segmentation check.
"""
import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore.common.initializer import TruncatedNormal

from sunk_main import train_sunk

IMAGE = 572                  # unet_medical_config.yaml image_size
CROP = 388                   # its crop: the output's size after the valid convolutions
CLASSES = 2
CHANNELS = 1
LOSS_SCALE = 1024.0
# Up1..Up4's CentralCrop fractions of their skip connections (unet_parts.py)
CROP_FRACTIONS = (56.0 / 64.0, 104.0 / 136.0, 200 / 280, 392 / 568)


class DoubleConv(nn.Cell):
    """Two valid 3x3 convolutions with bias, each followed by ReLU."""

    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        mid = mid_channels or out_channels
        self.double_conv = nn.SequentialCell([
            nn.Conv2d(in_channels, mid, kernel_size=3, has_bias=True, weight_init=TruncatedNormal(0.06),
                      bias_init="zeros", pad_mode="valid"),
            nn.ReLU(),
            nn.Conv2d(mid, out_channels, kernel_size=3, has_bias=True, weight_init=TruncatedNormal(0.06),
                      bias_init="zeros", pad_mode="valid"),
            nn.ReLU()])

    def construct(self, x):
        return self.double_conv(x)


class Down(nn.Cell):
    """2x2 max pooling, then a DoubleConv."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.SequentialCell([nn.MaxPool2d(kernel_size=2, stride=2),
                                               DoubleConv(in_channels, out_channels)])

    def construct(self, x):
        return self.maxpool_conv(x)


class Up(nn.Cell):
    """Transposed 2x2 stride-2 convolution + ReLU, concatenated with the skip connection's centre crop,
    then a DoubleConv (the zoo's Up1..Up4 differ only in the crop fraction)."""

    def __init__(self, in_channels, out_channels, fraction):
        super().__init__()
        self.concat = ops.Concat(axis=1)
        self.center_crop = nn.CentralCrop(central_fraction=fraction)
        self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
        self.up = nn.Conv2dTranspose(in_channels, in_channels // 2, kernel_size=2, stride=2,
                                     weight_init="normal", bias_init="zeros")
        self.relu = nn.ReLU()

    def construct(self, x1, x2):
        x1 = self.relu(self.up(x1))
        return self.conv(self.concat((x1, self.center_crop(x2))))


class UNetMedical(nn.Cell):
    def __init__(self, n_channels, n_classes):
        super().__init__()
        self.inc = DoubleConv(n_channels, 64)
        self.down1, self.down2 = Down(64, 128), Down(128, 256)
        self.down3, self.down4 = Down(256, 512), Down(512, 1024)
        self.up1, self.up2 = Up(1024, 512, CROP_FRACTIONS[0]), Up(512, 256, CROP_FRACTIONS[1])
        self.up3, self.up4 = Up(256, 128, CROP_FRACTIONS[2]), Up(128, 64, CROP_FRACTIONS[3])
        self.outc = nn.Conv2d(64, n_classes, kernel_size=1, has_bias=True, weight_init=TruncatedNormal(0.06),
                              bias_init="zeros")

    def construct(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x = self.up1(self.down4(x4), x4)
        x = self.up2(x, x3)
        x = self.up3(x, x2)
        return self.outc(self.up4(x, x1))


class CrossEntropyWithLogits(nn.Cell):
    """The zoo's loss: logits and one-hot labels NCHW -> NHWC -> (pixels, classes), softmax
    cross-entropy per pixel in float32, mean."""

    def __init__(self):
        super().__init__()
        self.loss = nn.SoftmaxCrossEntropyWithLogits()
        self.mean = ops.ReduceMean()

    def construct(self, logits, label):
        logits = ops.cast(ops.transpose(logits, (0, 2, 3, 1)), ms.float32)
        label = ops.transpose(label, (0, 2, 3, 1))
        c = label.shape[3]
        return self.mean(self.loss(ops.reshape(logits, (-1, c)), ops.reshape(label, (-1, c))))


def build(batch):
    """(Model as train.py builds it on Ascend, one batch of its inputs)."""
    net = UNetMedical(CHANNELS, CLASSES)
    opt = nn.Adam(params=net.trainable_params(), learning_rate=1e-4, weight_decay=5e-4, loss_scale=LOSS_SCALE)
    model = ms.Model(net, loss_fn=CrossEntropyWithLogits(), optimizer=opt, amp_level="O3",
                     loss_scale_manager=ms.FixedLossScaleManager(LOSS_SCALE, False))
    inputs = [np.zeros((batch, CHANNELS, IMAGE, IMAGE), np.float32),
              np.zeros((batch, CLASSES, CROP, CROP), np.float32)]
    return model, inputs


if __name__ == "__main__":
    train_sunk(__doc__.splitlines()[0], build, 16, ["image", "mask"], f"U-Net ({IMAGE}x{IMAGE})")
