"""Host time per batch of the model zoo's U-Net (ISBI) input pipeline in real MindSpore (docs/FIDELITY.md,
"What the misses say", U-Net): the evidence that the published 267 ms/step is the host pipeline's, not the
device's.

official/cv/Unet/train.py (mindspore-ai/models@eab643f5) trains the ISBI U-Net on Ascend with
``dataset_sink_mode=False`` (only GPU sinks), so a step waits for its batch from the host pipeline, whose
per-image work is two Python functions (``train_data_augmentation``: flips, a random crop, a float64
brightness shift and clip; ``data_post_process``: a one-hot mask built by broadcasting, int64) besides C++
Rescale/Resize/Pad/CenterCrop maps. This rebuilds src/data_loader.py's ``create_dataset`` with
``augment=True``, crop 388 and image size 572 as unet_medical_config.yaml sets them, on synthetic 512x512
slices (ISBI's train-volume.tif is 30 of them; 24 train), and prints the wall time and the process's CPU
per batch of 16. The zoo's ``np.int`` (removed from NumPy 1.24) is ``int`` here, the same int64.

Run with real MindSpore's interpreter, from outside the repository (else ``mindspore`` is ours):
    cd /tmp && /work/msvenv/bin/python /work/main/tools/measure_ms_unet_pipeline.py
Figures depend on the host CPU and its load; they are not fixtures (no test reads them).
"""
from __future__ import annotations

import resource
import time

import numpy as np

BATCH = 16
REPEAT = 8                 # the zoo repeats the 24 train slices 400 times; 8 gives 12 batches


def augment(img, mask):
    """The zoo's train_data_augmentation (src/data_loader.py)."""
    if np.random.random() > 0.5:
        img, mask = np.flipud(img), np.flipud(mask)
    if np.random.random() > 0.5:
        img, mask = np.fliplr(img), np.fliplr(mask)
    left, right = int(np.random.uniform() * 0.3 * 572), int((1 - np.random.uniform() * 0.3) * 572)
    top, bottom = int(np.random.uniform() * 0.3 * 572), int((1 - np.random.uniform() * 0.3) * 572)
    img, mask = img[top:bottom, left:right], mask[top:bottom, left:right]
    brightness = np.random.uniform(-0.2, 0.2)
    img = np.clip(np.float32(img + brightness * np.ones(img.shape)), -1.0, 1.0)
    return img, mask


def post_process(img, mask):
    """The zoo's data_post_process: channel axis on the image, the mask one-hot over its values."""
    img = np.expand_dims(img, axis=0)
    mask = (mask > 0.5).astype(int)
    mask = (np.arange(mask.max() + 1) == mask[..., None]).astype(int)
    return img, mask.transpose(2, 0, 1).astype(np.float32)


def pipeline():
    import mindspore.dataset as ds
    import mindspore.dataset.vision as vision
    from mindspore.dataset.vision import Inter

    rng = np.random.default_rng(0)
    images = np.repeat(rng.integers(0, 256, (24, 512, 512), dtype=np.uint8), REPEAT, axis=0)
    masks = np.repeat((rng.random((24, 512, 512)) > 0.2).astype(np.uint8) * 255, REPEAT, axis=0)
    resize = [572 * 388 // 572] * 2
    to_size = vision.Resize(size=(resize[0], resize[1]), interpolation=Inter.BILINEAR)
    pad = vision.Pad(padding=(572 - resize[0]) // 2)
    img_ds = ds.NumpySlicesDataset(data={"image": images}, sampler=None, shuffle=False)
    mask_ds = ds.NumpySlicesDataset(data={"mask": masks}, sampler=None, shuffle=False)
    img_ds = img_ds.map(input_columns="image", operations=[vision.Rescale(1.0 / 127.5, -1), to_size, pad])
    mask_ds = mask_ds.map(input_columns="mask", operations=[vision.Rescale(1.0 / 255.0, 0), to_size, pad])
    data = ds.zip((img_ds, mask_ds)).project(columns=["image", "mask"])
    full = vision.Resize(size=(572, 572), interpolation=Inter.BILINEAR)
    data = data.map(input_columns=["image", "mask"], operations=augment)
    data = data.map(input_columns="image", operations=full).map(input_columns="mask", operations=full)
    data = data.map(input_columns="mask", operations=vision.CenterCrop(size=388))
    data = data.map(input_columns=["image", "mask"], operations=post_process)
    return data.shuffle(REPEAT * 24).batch(batch_size=BATCH, drop_remainder=True)


def main() -> None:
    it = pipeline().create_tuple_iterator(output_numpy=True, num_epochs=1)
    first = next(it)
    shapes = [a.shape for a in first]
    r0, t0, n = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter(), 0
    for _ in it:
        n += 1
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    print(f"batch shapes {shapes}; {n} batches of {BATCH}: {1e3 * (t1 - t0) / n:.1f} ms wall, "
          f"{1e3 * cpu / n:.1f} ms CPU per batch ({1e3 * cpu / n / BATCH:.2f} ms CPU per image)")


if __name__ == "__main__":
    main()
