"""Small data files in the real on-disk formats MindSpore's dataset sources read (MNIST IDX, CIFAR-10
binary batches), and a learnable MNIST-shaped set for scripts that train."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def write_idx(directory: Path, prefix: str, images: np.ndarray, labels: np.ndarray) -> None:
    """MNIST's IDX pair: big-endian int32 header (magic 2051/2049, count, rows, cols), then uint8 data."""
    directory.mkdir(parents=True, exist_ok=True)
    n, rows, cols = images.shape
    (directory / f"{prefix}-images-idx3-ubyte").write_bytes(
        np.array([2051, n, rows, cols], ">i4").tobytes() + images.astype(np.uint8).tobytes())
    (directory / f"{prefix}-labels-idx1-ubyte").write_bytes(
        np.array([2049, n], ">i4").tobytes() + labels.astype(np.uint8).tobytes())


def write_cifar(path: Path, images: np.ndarray, labels: np.ndarray) -> None:
    """A CIFAR-10 binary batch: 10 000 records of label byte + R plane + G plane + B plane (32x32 each);
    records past the given images are zero."""
    records = np.zeros((10000, 3073), np.uint8)
    records[:len(labels), 0] = labels
    records[:len(images), 1:] = images.transpose(0, 3, 1, 2).reshape(len(images), -1)
    path.write_bytes(records.tobytes())


def learnable_mnist(directory: Path, train: int = 256, test: int = 64, seed: int = 0) -> None:
    """MNIST_Data/{train,test} as the tutorials lay it out: 28x28 uint8 images whose class (0-9) is a
    bright 4x4 square at one of ten fixed places on a noisy background, so a small network learns it in
    a few epochs (an accuracy well above chance shows training works)."""
    rng = np.random.default_rng(seed)
    for split, n, prefix in (("train", train, "train"), ("test", test, "t10k")):
        labels = rng.integers(0, 10, n)
        images = rng.integers(0, 60, (n, 28, 28))
        for i, c in enumerate(labels):
            r, q = divmod(int(c), 5)
            images[i, 4 + 12 * r:8 + 12 * r, 2 + 5 * q:6 + 5 * q] = 255
        write_idx(directory / split, prefix, images, labels)


def write_image_folder(directory: Path, images: np.ndarray, labels: np.ndarray, classes: int) -> None:
    """ImageNet's layout, as ImageFolderDataset reads it: one sub-folder per class (``class_00`` ...,
    so name order is label order), each image a JPEG file (quality 95) of the uint8 HWC RGB array."""
    from PIL import Image
    for c in range(classes):
        (directory / f"class_{c:02d}").mkdir(parents=True, exist_ok=True)
    for i, (image, label) in enumerate(zip(images, labels)):
        Image.fromarray(image.astype(np.uint8), "RGB").save(directory / f"class_{int(label):02d}" / f"{i:05d}.JPEG",
                                                            quality=95)
