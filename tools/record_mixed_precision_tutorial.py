"""Record what real MindSpore 2.10 prints for the mixed-precision tutorial's jitted ``if is_finite:`` step.

The script is tests/fixtures/tutorials/mixed_precision.md's Python cells unchanged, up to and including
the training loop over the jitted ``train_step`` (the later cells build networks for GPU/Ascend only),
minus the MNIST download (:func:`test_tutorials.script`), with two additions around them: a seed first
(so both sides draw the same initial weights: the emulator's initializers draw MindSpore's numbers) and
a probe last that prints the trained parameters' sums and the loss scale. The data is one batch of 64
learnable MNIST-format images (tests/datafiles.py), so the dataset's shuffle cannot change the step.

    .venv/bin/python tools/record_mixed_precision_tutorial.py

runs it under /work/msvenv and writes tests/fixtures/tutorials/mixed_precision.mindspore-2.10-cpu.txt;
tests/test_static_graph_tutorial.py runs the same script under ``ascendemu run`` at O0 and O2.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from datafiles import learnable_mnist  # noqa: E402
from test_tutorials import cells, script  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "tutorials" / "mixed_precision.mindspore-2.10-cpu.txt"
MINDSPORE_PYTHON = "/work/msvenv/bin/python"
IMAGES = 64                 # one batch of the tutorial's batch size: the shuffle cannot change it
SEED = "import mindspore\nmindspore.set_seed(1)\n"
PROBE = """
import numpy as np
for p in model.trainable_params():
    w = p.asnumpy().astype(np.float64)
    print(p.name, p.dtype, f"{w.sum():.6e}", f"{np.abs(w).sum():.6e}")
print("scale", loss_scaler.scale_value.asnumpy())
"""


def tutorial_script() -> str:
    """The seed, the cells up to the training loop (the first cell after it is the Cell-level
    ``build_train_network``), the probe."""
    first_left_out = cells("mixed_precision", "python")[8]
    return SEED + script("mixed_precision").split(first_left_out)[0] + PROBE


def write_inputs(directory: Path) -> Path:
    learnable_mnist(directory / "MNIST_Data", train=IMAGES, test=16)
    path = directory / "mixed_precision_step.py"
    path.write_text(tutorial_script())
    return path


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_inputs(Path(tmp))
        proc = subprocess.run([MINDSPORE_PYTHON, path.name], cwd=tmp, capture_output=True, text=True,
                              timeout=1800, check=True)
    FIXTURE.write_text(proc.stdout)
    print(proc.stdout)


if __name__ == "__main__":
    sys.exit(main())
