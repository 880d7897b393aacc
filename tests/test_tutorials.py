"""MindSpore's beginner tutorials, run unchanged under ``ascendemu run``.

Each script is its tutorial's Python cells in order (tests/fixtures/tutorials/*.md, copied from
mindspore-ai/docs), minus the cell that downloads MNIST: the tests write MNIST-format files instead
(tests/datafiles.py). Where a tutorial recorded what real MindSpore printed (its ``text`` cells), the
numbers the emulator prints are compared with those; where the output depends on the downloaded data,
the checks follow from the data written here.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np

from datafiles import learnable_mnist
from test_run_cli import run_cli

TUTORIALS = Path(__file__).parent / "fixtures" / "tutorials"
CELL = re.compile(r"```(python|text)\n(.*?)```", re.S)
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]\d+)?")


def cells(name: str, kind: str) -> list[str]:
    return [body for k, body in CELL.findall((TUTORIALS / f"{name}.md").read_text()) if k == kind]


def script(name: str) -> str:
    """The tutorial's code cells as one script, without the statements that download MNIST (the
    import of ``download``, its URL and the call)."""
    kept = []
    for cell in cells(name, "python"):
        tree = ast.parse(cell)
        lines = cell.splitlines()
        drop = {i for node in tree.body if "download" in (ast.get_source_segment(cell, node) or "")
                or any(isinstance(t, ast.Name) and t.id == "url" for t in getattr(node, "targets", ()))
                for i in range(node.lineno - 1, node.end_lineno)}
        kept.append("\n".join(line for i, line in enumerate(lines) if i not in drop))
    return "\n".join(kept)


def run_tutorial(tmp_path: Path, name: str, cache: Path):
    """The tutorial under ``ascendemu run`` on the session's kernel cache (``cache``): the kernels the
    other tests built are reused, not compiled again in a fresh process."""
    (tmp_path / f"{name}.py").write_text(script(name))
    proc = run_cli(tmp_path, "--quiet", f"{name}.py", MS_COMPILER_CACHE_PATH=str(cache))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


ORACLES = Path(__file__).parent / "fixtures" / "oracles" / "printing"


def skeleton_and_numbers(text: str) -> tuple[str, list[float]]:
    return NUMBER.sub("#", text), [float(v) for v in NUMBER.findall(text)]


def test_autograd_prints_what_mindspore_printed(tmp_path: Path, ascendemu_kernel_cache: Path):
    """The whole output of the autograd tutorial (loss, the gradients of four grad/value_and_grad forms
    incl. has_aux and stop_gradient, z) against what real MindSpore 2.10 printed for the same cells:
    the same text, Tensor reprs included, and every number to float32 print precision."""
    out = run_tutorial(tmp_path, "autograd", ascendemu_kernel_cache)
    want_text, want = skeleton_and_numbers((ORACLES / "autograd.mindspore-2.10-cpu.txt").read_text())
    got_text, got = skeleton_and_numbers(out)
    assert got_text == want_text
    assert len(want) == 94
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_tensor_printing_matches_mindspore(tmp_path: Path, ascendemu_kernel_cache: Path):
    """repr() and str() of Tensors of each dtype, 0-d, 2-D and long, exactly as MindSpore 2.10 prints them."""
    (tmp_path / "reprs.py").write_text((ORACLES / "reprs.py").read_text())
    proc = run_cli(tmp_path, "--quiet", "reprs.py", MS_COMPILER_CACHE_PATH=str(ascendemu_kernel_cache))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == (ORACLES / "reprs.mindspore-2.10-cpu.txt").read_text()


def check_mnist_training(out: str, batches: int) -> None:
    losses = [float(v) for v in re.findall(rf"loss: +([\d.]+)  \[  0/ *{batches}\]", out)]
    assert len(losses) == 3 and losses[0] > losses[-1], out
    accuracy = [float(v) for v in re.findall(r"Accuracy: ([\d.]+)%", out)]
    assert len(accuracy) == 3 and accuracy[-1] > 80.0, out     # chance is 10%
    assert "Done!" in out


def test_quick_start_trains_saves_and_reloads(tmp_path: Path, ascendemu_kernel_cache: Path):
    """Three epochs of the quick start's MLP on 1,024 learnable MNIST-format images: the tutorial's shapes
    and dtypes, the test accuracy far above chance, the checkpoint reloads with nothing left out, and
    the reloaded model predicts."""
    learnable_mnist(tmp_path / "MNIST_Data", train=1024, test=256)
    out = run_tutorial(tmp_path, "quick_start", ascendemu_kernel_cache)
    assert "['image', 'label']" in out
    assert out.count("Shape of image [N, C, H, W]: (64, 1, 28, 28) Float32") == 2
    assert out.count("Shape of label: (64,) Int32") == 2
    check_mnist_training(out, 16)
    assert "Saved Model to model.ckpt" in out
    assert "\n[]\n" in out                                   # param_not_load: every parameter loaded
    assert (tmp_path / "model.ckpt").stat().st_size > 4 * (784 * 512 + 512 * 512 + 512 * 10)
    assert re.search(r'Predicted: "\[[\d ]+\]", Actual: "\[[\d ]+\]"', out), out


def test_train_tutorial_trains(tmp_path: Path, ascendemu_kernel_cache: Path):
    learnable_mnist(tmp_path / "MNIST_Data", train=1024, test=256)
    check_mnist_training(run_tutorial(tmp_path, "train", ascendemu_kernel_cache), 16)
