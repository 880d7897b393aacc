"""A first run of a model-zoo CNN: build the zoo's own network (tests/fixtures/zoo, unchanged) and run
forward steps in GRAPH_MODE, as a user's inference script does. MindSpore API only, no device target
set, so the same file runs on real MindSpore (its CPU back end) and under ``ascendemu run`` (the
emulated Ascend 910A); bench/bench_speed.py times both as whole processes.

    python bench/zoo_forward.py resnet18|mobilenetv2 [--batch 32] [--size 32] [--steps 3]

resnet18 is official/cv/ResNet's ``resnet18(class_num=10)`` with config/resnet18_cifar10_config.yaml
(the CIFAR-10 configuration); mobilenetv2 is official/cv/MobileNet's backbone + head (10 classes).
Prints one line per step with the output's checksum, so the two back ends can be compared.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

ZOO = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "zoo"


def build(name: str):
    """The zoo's network, imported from its own directory (its modules import ``src.*``)."""
    if name == "resnet18":
        sys.path.insert(0, str(ZOO / "resnet"))
        sys.argv[1:] = ["--config_path", str(ZOO / "resnet" / "config" / "resnet18_cifar10_config.yaml")]
        from src.resnet import resnet18
        return resnet18(class_num=10)
    sys.path.insert(0, str(ZOO / "mobilenetv2"))
    from src.mobilenetV2 import MobileNetV2Backbone, MobileNetV2Head, mobilenet_v2
    backbone = MobileNetV2Backbone()
    return mobilenet_v2(backbone, MobileNetV2Head(input_channel=backbone.out_channels, num_classes=10))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("net", choices=("resnet18", "mobilenetv2"))
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--size", type=int, default=32, help="input height and width (CIFAR-10: 32)")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    import mindspore as ms
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(1)
    net = build(args.net)
    net.set_train(False)
    rng = np.random.default_rng(0)
    for step in range(1, args.steps + 1):
        x = ms.Tensor(rng.standard_normal((args.batch, 3, args.size, args.size)).astype(np.float32))
        t = time.perf_counter()
        out = net(x).asnumpy()
        print(f"step {step}: output {out.shape} sum {float(out.astype(np.float64).sum()):.6g} "
              f"{(time.perf_counter() - t) * 1e3:.1f} ms")
    print(f"script wall {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
