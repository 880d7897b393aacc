"""SSD-MobileNetV1-FPN training, written with the MindSpore API only, after mindspore-ai/models
official/cv/SSD (src/ssd.py SsdMobilenetV1Fpn, src/fpn.py MobileNetV1Fpn, src/mobilenet_v1.py,
config/ssd_mobilenet_v1_fpn_config.yaml): a MobileNetV1 backbone (27 conv-BN-ReLU6 layers, depthwise
separable), its stride 8/16/32 features (layers 10, 22, 26) through an FPN top-down path (1x1 lateral
convs, bilinear upsampling, 3x3 smoothing convs) and two stride-2 bottom-up levels: five 256-channel
maps (80, 40, 20, 10, 5 at 640x640); a weight-shared box head (4 conv-BN-ReLU6 layers per branch
whose convolutions are shared across levels, then a 3x3 conv to 6 boxes x 4 offsets or x 81 classes);
sigmoid focal loss + smooth L1 over 51150 default boxes; the zoo's TrainingWrapper (sens = loss scale
1024, gradients unscaled and clipped by global norm) and Momentum(0.9, weight decay 4e-5, loss scale 1:
the config's use_global_norm, so the wrapper unscales and the optimizer does not); float32, dataset sink mode, as the published run (batch 32 per card, 640x640, one 32 GiB
Ascend 910A per rank) trains it.

    ascendemu run --dry-run bench/ssd_mobilenet_v1_fpn.py [--batch 32] [--size 640] [--steps 2]

bench/bench_memory_plan.py runs it to compare the static O2 memory plan with the chip's HBM.
"""
import argparse

import numpy as np

import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore import Tensor, context

NUM_CLASSES = 81
NUM_DEFAULT = 6              # default boxes per feature-map cell (aspect ratios 2, 3 and scales)
CHANNELS = 256               # FPN and head width
ADDITION_LAYERS = 4          # conv-BN-ReLU6 layers per head branch
LOSS_SCALE = 1024.0
GAMMA, ALPHA = 2.0, 0.25     # focal loss
# MobileNetV1: (depthwise stride, pointwise output channels) of its 13 separable blocks
MOBILENET_V1 = ((1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512), (1, 512), (1, 512), (1, 512),
                (1, 512), (1, 512), (2, 1024), (1, 1024))
FEATURE_LAYERS = (10, 22, 26)  # the stride 8, 16 and 32 outputs the FPN reads


def conv_bn_relu(in_channel, out_channel, kernel_size, stride, depthwise):
    """src/mobilenet_v1.py conv_bn_relu: conv (no bias), BatchNorm, ReLU6."""
    return nn.SequentialCell([
        nn.Conv2d(in_channel, out_channel, kernel_size, stride, pad_mode="pad", padding=(kernel_size - 1) // 2,
                  group=in_channel if depthwise else 1),
        nn.BatchNorm2d(out_channel), nn.ReLU6()])


class MobileNetV1(nn.Cell):
    """features_only=True: the output of every layer, in order."""

    def __init__(self):
        super().__init__()
        layers = [conv_bn_relu(3, 32, 3, 2, False)]
        channels = 32
        for stride, out in MOBILENET_V1:
            layers += [conv_bn_relu(channels, channels, 3, stride, True), conv_bn_relu(channels, out, 1, 1, False)]
            channels = out
        self.network = nn.CellList(layers)

    def construct(self, x):
        outputs = ()
        for layer in self.network:
            x = layer(x)
            outputs += (x,)
        return outputs


class FpnTopDown(nn.Cell):
    def __init__(self, in_channel_list, out_channels):
        super().__init__()
        self.lateral_convs_list = nn.CellList([
            nn.Conv2d(c, out_channels, kernel_size=1, stride=1, has_bias=True, padding=0, pad_mode="same")
            for c in in_channel_list])
        self.fpn_convs_list = nn.CellList([conv_bn_relu(out_channels, out_channels, 3, 1, False)
                                           for _ in in_channel_list])

    def construct(self, inputs):
        image_features = ()
        for i, feature in enumerate(inputs):
            image_features += (self.lateral_convs_list[i](feature),)
        features = (image_features[-1],)
        for i in range(len(inputs) - 1):
            down = len(inputs) - i - 2
            size = ops.shape(inputs[down])
            top_down = ops.ResizeBilinear((size[2], size[3]))(features[-1])
            features += (top_down + image_features[down],)
        extract = ()
        for i in range(len(features)):
            extract += (self.fpn_convs_list[i](features[len(features) - i - 1]),)
        return extract


class BottomUp(nn.Cell):
    def __init__(self, levels, channels, kernel_size, stride):
        super().__init__()
        self.blocks = nn.CellList([conv_bn_relu(channels, channels, kernel_size, stride, False)
                                   for _ in range(levels)])

    def construct(self, features):
        for block in self.blocks:
            features += (block(features[-1]),)
        return features


class MobileNetV1Fpn(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mobilenet_v1 = MobileNetV1()
        self.fpn = FpnTopDown([256, 512, 1024], CHANNELS)
        self.bottom_up = BottomUp(2, CHANNELS, 3, 2)

    def construct(self, x):
        features = self.mobilenet_v1(x)
        features = (features[FEATURE_LAYERS[0]], features[FEATURE_LAYERS[1]], features[FEATURE_LAYERS[2]])
        return self.bottom_up(self.fpn(features))


def _conv2d(in_channel, out_channel, kernel_size=3):
    return nn.Conv2d(in_channel, out_channel, kernel_size=kernel_size, stride=1, padding=0, pad_mode="same",
                     has_bias=True)


class ConvBNReLU(nn.Cell):
    """src/ssd.py ConvBNReLU with a shared conv: the conv's weights are shared across levels, each level
    keeps its own BatchNorm."""

    def __init__(self, shared_conv, channels):
        super().__init__()
        self.features = nn.SequentialCell([shared_conv, nn.BatchNorm2d(channels, eps=1e-3, momentum=0.97),
                                           nn.ReLU6()])

    def construct(self, x):
        return self.features(x)


class FlattenConcat(nn.Cell):
    def __init__(self, num_ssd_boxes):
        super().__init__()
        self.num_ssd_boxes = num_ssd_boxes
        self.concat = ops.Concat(axis=1)
        self.transpose = ops.Transpose()

    def construct(self, inputs):
        output = ()
        batch_size = ops.shape(inputs[0])[0]
        for x in inputs:
            x = self.transpose(x, (0, 2, 3, 1))
            output += (ops.reshape(x, (batch_size, -1)),)
        return ops.reshape(self.concat(output), (batch_size, self.num_ssd_boxes, -1))


class WeightSharedMultiBox(nn.Cell):
    def __init__(self, num_features, num_ssd_boxes):
        super().__init__()
        loc_convs = [_conv2d(CHANNELS, CHANNELS) for _ in range(ADDITION_LAYERS)]
        cls_convs = [_conv2d(CHANNELS, CHANNELS) for _ in range(ADDITION_LAYERS)]
        self.addition_layer_loc = nn.CellList([
            nn.SequentialCell([ConvBNReLU(loc_convs[k], CHANNELS) for k in range(ADDITION_LAYERS)])
            for _ in range(num_features)])
        self.addition_layer_cls = nn.CellList([
            nn.SequentialCell([ConvBNReLU(cls_convs[k], CHANNELS) for k in range(ADDITION_LAYERS)])
            for _ in range(num_features)])
        self.loc_layers = nn.SequentialCell([_conv2d(CHANNELS, 4 * NUM_DEFAULT)])
        self.cls_layers = nn.SequentialCell([_conv2d(CHANNELS, NUM_CLASSES * NUM_DEFAULT)])
        self.flatten_concat = FlattenConcat(num_ssd_boxes)

    def construct(self, inputs):
        loc_outputs = ()
        cls_outputs = ()
        for i in range(len(inputs)):
            loc_outputs += (self.loc_layers(self.addition_layer_loc[i](inputs[i])),)
            cls_outputs += (self.cls_layers(self.addition_layer_cls[i](inputs[i])),)
        return self.flatten_concat(loc_outputs), self.flatten_concat(cls_outputs)


class SsdMobilenetV1Fpn(nn.Cell):
    def __init__(self, num_ssd_boxes):
        super().__init__()
        self.feature_extractor = MobileNetV1Fpn()
        self.multi_box = WeightSharedMultiBox(5, num_ssd_boxes)

    def construct(self, x):
        pred_loc, pred_label = self.multi_box(self.feature_extractor(x))
        return ops.cast(pred_loc, ms.float32), ops.cast(pred_label, ms.float32)


class SigmoidFocalClassificationLoss(nn.Cell):
    def __init__(self, gamma=GAMMA, alpha=ALPHA):
        super().__init__()
        self.sigmoid_cross_entropy = ops.SigmoidCrossEntropyWithLogits()
        self.sigmoid = ops.Sigmoid()
        self.pow = ops.Pow()
        self.onehot = ops.OneHot()
        self.on_value = Tensor(1.0, ms.float32)
        self.off_value = Tensor(0.0, ms.float32)
        self.gamma, self.alpha = gamma, alpha

    def construct(self, logits, label):
        label = self.onehot(label, ops.shape(logits)[-1], self.on_value, self.off_value)
        ce = self.sigmoid_cross_entropy(logits, label)
        sigmoid = self.sigmoid(logits)
        p_t = label * sigmoid + (1 - label) * (1 - sigmoid)
        modulating_factor = self.pow(1 - p_t, self.gamma)
        alpha_weight_factor = label * self.alpha + (1 - label) * (1 - self.alpha)
        return modulating_factor * alpha_weight_factor * ce


class SSDWithLossCell(nn.Cell):
    def __init__(self, network):
        super().__init__()
        self.network = network
        self.less = ops.Less()
        self.tile = ops.Tile()
        self.reduce_sum = ops.ReduceSum()
        self.expand_dims = ops.ExpandDims()
        self.class_loss = SigmoidFocalClassificationLoss()
        self.loc_loss = nn.SmoothL1Loss()

    def construct(self, x, gt_loc, gt_label, num_matched_boxes):
        pred_loc, pred_label = self.network(x)
        mask = ops.cast(self.less(0, gt_label), ms.float32)
        num_matched_boxes = self.reduce_sum(ops.cast(num_matched_boxes, ms.float32))
        mask_loc = self.tile(self.expand_dims(mask, -1), (1, 1, 4))
        smooth_l1 = self.loc_loss(pred_loc, gt_loc) * mask_loc
        loss_loc = self.reduce_sum(self.reduce_sum(smooth_l1, -1), -1)
        loss_cls = self.reduce_sum(self.class_loss(pred_label, gt_label), (1, 2))
        return self.reduce_sum((loss_cls + loss_loc) / num_matched_boxes)


class TrainingWrapper(nn.Cell):
    """The zoo's wrapper: gradients with sens = the loss scale, unscaled and clipped by global norm."""

    def __init__(self, network, optimizer, sens=LOSS_SCALE):
        super().__init__(auto_prefix=False)
        self.network = network
        self.network.set_grad()
        self.weights = ms.ParameterTuple(network.trainable_params())
        self.optimizer = optimizer
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
        self.sens = sens

    def construct(self, *args):
        loss = self.network(*args)
        sens = ops.Fill()(ops.DType()(loss), ops.Shape()(loss), self.sens)
        grads = self.grad(self.network, self.weights)(*args, sens)
        grads = tuple(g * (1.0 / self.sens) for g in grads)
        grads = ops.clip_by_global_norm(grads)
        self.optimizer(grads)
        return loss


def num_ssd_boxes(size):
    """Default boxes over the five maps (strides 8 .. 128): 51150 at 640x640."""
    return sum((-(-size // s)) ** 2 * NUM_DEFAULT for s in (8, 16, 32, 64, 128))


def build(batch, size):
    """(the training cell, one batch of its inputs) of the published run's shapes."""
    boxes = num_ssd_boxes(size)
    net = SSDWithLossCell(SsdMobilenetV1Fpn(boxes))
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9, weight_decay=4e-5, loss_scale=1.0)   # use_global_norm
    inputs = (np.zeros((batch, 3, size, size), np.float32), np.zeros((batch, boxes, 4), np.float32),
              np.ones((batch, boxes), np.int32), np.ones((batch, 1), np.int32))
    return TrainingWrapper(net, opt), inputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32, help="batch size per card (default 32)")
    parser.add_argument("--size", type=int, default=640, help="image height and width (default 640)")
    parser.add_argument("--steps", type=int, default=2, help="sunk steps (default 2)")
    parser.add_argument("--jit-level", default="O2", help="MindSpore jit level (default O2)")
    args = parser.parse_args()
    context.set_context(mode=context.GRAPH_MODE, jit_config={"jit_level": args.jit_level})
    cell, batch = build(args.batch, args.size)
    data = ds.GeneratorDataset(lambda: (batch for _ in range(args.steps)), ["image", "box", "label", "num_match"])
    ms.Model(cell).train(1, data, dataset_sink_mode=True)
    print(f"SSD-MobileNetV1-FPN: {args.steps} step(s), batch {args.batch}, {args.size}x{args.size}, "
          f"{num_ssd_boxes(args.size)} default boxes")


if __name__ == "__main__":
    main()
