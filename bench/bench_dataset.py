"""mindspore.dataset throughput: the model zoo's LeNet pipeline (MnistDataset -> Resize(32, 32) -> Rescale x2
-> HWC2CHW -> TypeCast -> shuffle -> batch 32) over 6,000 MNIST-format images, rows per second, ours and
real MindSpore's (its C++ pipeline) side by side when a MindSpore interpreter is given. Also a
numpy-only loop doing the same arithmetic (no pipeline), as the floor a Python pipeline can approach.

Run: [MINDSPORE_PYTHON=...] python bench/bench_dataset.py
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from datafiles import learnable_mnist  # noqa: E402

ROWS = 6000
PIPELINE = '''
import sys, time
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.vision as CV
import mindspore.dataset.transforms as C
t0 = time.perf_counter()
d = ds.MnistDataset("MNIST_Data/train")
d = d.map(C.TypeCast(ms.int32), "label")
d = d.map([CV.Resize((32, 32)), CV.Rescale(1.0 / 255.0, 0.0), CV.Rescale(1 / 0.3081, -0.1307 / 0.3081),
           CV.HWC2CHW()], "image")
d = d.shuffle(10000).batch(32, drop_remainder=True)
rows = sum(img.shape[0] for img, _ in d.create_tuple_iterator(output_numpy=True))
print(f"ROWS_PER_S {rows / (time.perf_counter() - t0):.0f}")
'''
NUMPY_LOOP = '''
import time
import numpy as np
from PIL import Image
t0 = time.perf_counter()
raw = open("MNIST_Data/train/train-images-idx3-ubyte", "rb").read()[16:]
images = np.frombuffer(raw, np.uint8).reshape(-1, 28, 28)
out = [((np.asarray(Image.fromarray(im).resize((32, 32), Image.BILINEAR), np.float32) / 255.0) / 0.3081
        - 0.1307 / 0.3081)[None] for im in images]
print(f"ROWS_PER_S {len(out) / (time.perf_counter() - t0):.0f}")
'''


def rows_per_s(python: list[str], cwd: Path, code: str) -> float:
    (cwd / "bench_dataset_script.py").write_text(code)
    proc = subprocess.run([*python, "bench_dataset_script.py"], cwd=cwd, capture_output=True, text=True, timeout=900)
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    return float(re.search(r"ROWS_PER_S (\d+)", proc.stdout).group(1))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        learnable_mnist(cwd / "MNIST_Data", train=ROWS, test=10)
        rows = [("ascendemu (mindspore.dataset, Python)", rows_per_s([sys.executable, "-m", "ascendemu", "run", "--quiet"],
                                                                   cwd, PIPELINE)),
                ("numpy + Pillow loop, same arithmetic", rows_per_s([sys.executable], cwd, NUMPY_LOOP))]
        peer = os.environ.get("MINDSPORE_PYTHON")
        if peer:
            rows.append(("real MindSpore 2.10 (C++ pipeline)", rows_per_s([peer], cwd, PIPELINE)))
    print(f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; LeNet pipeline, "
          f"{ROWS} MNIST-format images, whole process incl. start-up of the pipeline")
    print("| pipeline | rows/s | vs ours |")
    print("|---|---|---|")
    for name, r in rows:
        print(f"| {name} | {r:,.0f} | {r / rows[0][1]:.2f}x |")
    if not peer:
        print("real MindSpore: MINDSPORE_PYTHON not set, skipped")


if __name__ == "__main__":
    main()
