"""CPU time per image of the model zoo's dataset pipelines in real MindSpore (docs/FIDELITY.md, "The data
channel"): the measurement behind the choice of a per-byte data channel over a per-op host pipeline model.

Run with real MindSpore's interpreter, from outside the repository (else ``mindspore`` is ours):
    cd /tmp && /work/msvenv/bin/python /work/main/tools/measure_ms_pipeline_cpu.py
It writes synthetic inputs to a temporary directory (MNIST IDX files; ~94 KB 500x375 JPEGs, about
ImageNet's mean) and prints, per pipeline, the process's user + system CPU per image with one worker per
map. Figures depend on the host CPU and its load; they are not fixtures (no test reads them).
"""
from __future__ import annotations

import os
import resource
import struct
import sys
import tempfile

import numpy as np


def _mnist(root: str, n: int = 8000) -> None:
    rng = np.random.default_rng(0)
    with open(os.path.join(root, "train-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + rng.integers(0, 256, (n, 28, 28), dtype=np.uint8).tobytes())
    with open(os.path.join(root, "train-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 2049, n) + rng.integers(0, 10, n, dtype=np.uint8).tobytes())


def _jpegs(root: str, distinct: int = 8, copies: int = 40) -> None:
    from PIL import Image
    rng = np.random.default_rng(0)
    folder = os.path.join(root, "c0")
    os.makedirs(folder)
    y, x = np.mgrid[0:375, 0:500]
    for i in range(distinct):       # smooth structure plus noise: about 94 KB at quality 90
        base = 127 + 60 * np.sin(x / (17 + i))[..., None] * np.array([1, .7, .4]) + 50 * np.cos(y / (23 + i))[..., None]
        img = np.clip(base + rng.normal(0, 18, (375, 500, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(img).save(os.path.join(folder, f"{i}.JPEG"), quality=90)
        for k in range(1, copies):
            os.symlink(os.path.join(folder, f"{i}.JPEG"), os.path.join(folder, f"{k}_{i}.JPEG"))


def _cpu_per_image(dataset, batch: int = 32) -> float:
    it = dataset.create_tuple_iterator(output_numpy=True, num_epochs=1)
    next(it)
    r0, n = resource.getrusage(resource.RUSAGE_SELF), 0
    for _ in it:
        n += batch
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / n


def main() -> None:
    import mindspore.dataset as ds
    import mindspore.dataset.transforms as C
    import mindspore.dataset.vision as V
    from mindspore.common import dtype as mstype
    from mindspore.dataset.vision import Inter

    mean, std = [0.485 * 255, 0.456 * 255, 0.406 * 255], [0.229 * 255, 0.224 * 255, 0.225 * 255]
    with tempfile.TemporaryDirectory() as root:
        _mnist(root)
        _jpegs(root)
        # research/cv/lenet/src/dataset.py: four map nodes of one worker each
        d = ds.MnistDataset(root, shuffle=True, num_parallel_workers=1)
        d = d.map(C.TypeCast(mstype.int32), input_columns="label", num_parallel_workers=1)
        d = d.map(V.Resize((32, 32), interpolation=Inter.LINEAR), input_columns="image", num_parallel_workers=1)
        d = d.map(V.Rescale(1 / 255 / 0.3081, -0.1307 / 0.3081), input_columns="image", num_parallel_workers=1)
        d = d.map(V.HWC2CHW(), input_columns="image", num_parallel_workers=1)
        print(f"LeNet MNIST pipeline: {_cpu_per_image(d.batch(32, drop_remainder=True)) * 1e6:.1f} us CPU/image")
        # official/cv/ResNet (and VGG16, SqueezeNet) ImageNet training transforms
        d = ds.ImageFolderDataset(os.path.join(root), num_parallel_workers=1, shuffle=True)
        d = d.map([V.RandomCropDecodeResize(224, scale=(0.08, 1.0), ratio=(0.75, 1.333)), V.RandomHorizontalFlip(0.5),
                   V.Normalize(mean=mean, std=std), V.HWC2CHW()], input_columns="image", num_parallel_workers=1)
        print(f"ImageNet pipeline: {_cpu_per_image(d.batch(32, drop_remainder=True)) * 1e3:.2f} ms CPU/image")
        # CIFAR-10 resized to 224 (official/cv/ResNet create_dataset1's ops; SqueezeNet's at 227)
        imgs = np.random.default_rng(0).integers(0, 256, (2000, 32, 32, 3), np.uint8)
        d = ds.NumpySlicesDataset({"image": imgs, "label": np.zeros(2000, np.int32)}, shuffle=False)
        d = d.map([V.RandomCrop((32, 32), (4, 4, 4, 4)), V.RandomHorizontalFlip(), V.Resize((224, 224)),
                   V.Rescale(1 / 255, 0), V.Normalize([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]),
                   V.HWC2CHW()], input_columns="image", num_parallel_workers=1)
        print(f"CIFAR-10 to 224 pipeline: {_cpu_per_image(d.batch(32, drop_remainder=True)) * 1e3:.2f} ms CPU/image")


if __name__ == "__main__":
    sys.exit(main())
