"""ResNet-18 (basic blocks, 1x1 conv + BN downsampling shortcuts) on the emulated Ascend 910A,
checked against numpy. Inference: BatchNorm uses its moving statistics.

    ascendemu run examples/resnet.py [--steps 3] [--batch 2] [--size 32] [--stem cifar|imagenet]

``--stem cifar`` (default) is the usual CIFAR variant: a 3x3/1 stem conv and no max pool in front of
the four stages; ``--stem imagenet`` is networks.ResNet18 as written (7x7/2 conv + 3x3/2 max pool).
"""
import argparse
import sys

from harness import run_checked
from networks import ResNet18
from reference import resnet18


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3, help="forward steps to run (default 3)")
    parser.add_argument("--batch", type=int, default=2, help="batch size (default 2)")
    parser.add_argument("--size", type=int, default=32, help="input height and width (default 32)")
    parser.add_argument("--stem", choices=("cifar", "imagenet"), default="cifar")
    args = parser.parse_args()
    cifar = args.stem == "cifar"
    net = ResNet18(cifar_stem=cifar)
    if run_checked(f"ResNet-18 ({args.stem} stem)", net, (args.batch, 3, args.size, args.size), args.steps,
                   lambda params, x: resnet18(params, x, cifar_stem=cifar)):
        sys.exit(1)
