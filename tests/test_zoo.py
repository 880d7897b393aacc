"""The model zoo's own scripts (mindspore-ai/models, tests/fixtures/zoo, unchanged) run under
``ascendemu run`` on small data in the real on-disk formats, configured only through the zoo's own
command-line overrides of its yaml config.

- research/cv/lenet: train.py (Ascend: amp O2 with a dynamic loss scale, dataset sink mode,
  LossMonitor, TimeMonitor, ModelCheckpoint) on MNIST IDX files, eval.py on its checkpoint, export.py
  to ONNX. The printed lines have the format real MindSpore 2.10 printed for the same scripts and data
  (``lenet.mindspore-2.10-cpu.txt``); the accuracy eval prints is numpy's forward of the checkpoint.
- official/cv/ResNet with resnet18_imagenet2012_config.yaml: train.py (amp O3, FixedLossScaleManager,
  grouped weight decay, a numpy learning-rate array, the zoo's own callbacks, sink mode) on an
  ImageNet-layout folder of JPEGs, then eval.py: top-1/top-5 equal numpy's forward of the checkpoint.
- official/cv/ResNet with resnet18_cifar10_config.yaml on CIFAR-10 binary batches: a batch file
  holds 10,000 images and the script has no override that reads fewer, so an epoch is 10,000 ResNet-18
  steps' worth of images, beyond this suite's budget: train.py runs unchanged as a DryRun (data
  pipeline, graphs, sink mode and checkpoint for real; no kernel computed).

The subprocesses share the session's kernel cache (``MS_COMPILER_CACHE_PATH``).
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
import ascendemu.frontend.dataset as ds
import ascendemu.frontend.dataset.transforms as T
import ascendemu.frontend.dataset.vision as V
from ascendemu.frontend.train.serialization import load_checkpoint
from datafiles import learnable_mnist, write_cifar, write_image_folder
from test_run_cli import run_cli

from examples import reference as ref  # noqa: E402  (test_run_cli puts the repository on sys.path)

ZOO = Path(__file__).parent / "fixtures" / "zoo"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]\d+)?")


def zoo_copy(name: str, tmp_path: Path) -> Path:
    """The network's zoo directory copied to a scratch place (the scripts write beside themselves)."""
    work = tmp_path / name
    shutil.copytree(ZOO / name, work, ignore=shutil.ignore_patterns("__pycache__"))
    return work


def run_zoo(work: Path, cache: Path, *args: str, warns: str = "", **env: str) -> list[str]:
    """The run's output lines; it warned of nothing but, if given, the one warning ``warns`` names."""
    proc = run_cli(work, "--quiet", *args, MS_COMPILER_CACHE_PATH=str(cache), **env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    warnings = [line for line in proc.stderr.splitlines() if "Warning" in line]   # e.g. a refused cache entry
    assert len(warnings) == bool(warns) and all(warns in line for line in warnings), proc.stderr[-3000:]
    return proc.stdout.splitlines()


def skeleton(line: str) -> str:
    return NUMBER.sub("#", line)


# --------------------------------------------------------------------------------------------- LeNet

LENET_TRAIN = ("--data_path", "MNIST_Data", "--epoch_size", "5", "--batch_size", "16", "--lr", "0.08",
               "--ckpt_path", "ckpt", "--save_checkpoint_steps", "24", "--keep_checkpoint_max", "2")
MONITOR_LINE = re.compile(r"^(epoch:|Train epoch time|==============)")


def lenet_test_images(data: Path) -> tuple[np.ndarray, np.ndarray]:
    """The test split as the zoo's create_dataset preprocesses it, in file order."""
    pipeline = ds.MnistDataset(str(data / "test"), shuffle=False).map(
        [V.Resize((32, 32), interpolation=V.Inter.LINEAR), V.Rescale(1 / 0.3081 / 255.0, -0.1307 / 0.3081),
         V.HWC2CHW()], input_columns="image").map(T.TypeCast(ms.int32), input_columns="label")
    x, labels = map(np.stack, zip(*pipeline.create_tuple_iterator(output_numpy=True)))
    return x.astype(np.float64), labels


def test_lenet_train_eval_export_run_unchanged(tmp_path, ascendemu_kernel_cache):
    """120 sunk steps (5 epochs of 24) on 384 learnable MNIST images, checkpoints every epoch keeping 2,
    then eval.py and export.py on the last checkpoint."""
    work = zoo_copy("lenet", tmp_path)
    learnable_mnist(work / "MNIST_Data", train=384, test=64)
    out = run_zoo(work, ascendemu_kernel_cache, "train.py", *LENET_TRAIN)

    # one LossMonitor and one TimeMonitor line per sink (= epoch), in the format MindSpore printed
    oracle = (ZOO / "lenet.mindspore-2.10-cpu.txt").read_text().splitlines()
    monitor = [line for line in out if MONITOR_LINE.match(line)]
    assert {skeleton(line) for line in monitor} <= {skeleton(line) for line in oracle}
    losses = [line for line in monitor if line.startswith("epoch:")]
    assert [line.split(", loss is ")[0] for line in losses] == [f"epoch: {e} step: 24" for e in range(1, 6)]
    assert sum(line.startswith("Train epoch time: ") for line in monitor) == 5
    assert float(losses[-1].split()[-1]) < 0.1 < float(losses[0].split()[-1])

    # MindSpore's names, the same as real MindSpore wrote (it also writes a graph .meta, not emulated)
    ckpts = sorted(p.name for p in (work / "ckpt").iterdir())
    assert ckpts == [line for line in oracle[oracle.index("# ls ck") + 1:-2] if line.endswith(".ckpt")]
    ckpt = f"ckpt/{ckpts[-1]}"
    saved = load_checkpoint(str(work / ckpt))
    assert list(saved) == oracle[-1].split()           # the network, the loss scale state, the optimizer's
    params = {k: p.asnumpy().astype(np.float64) for k, p in saved.items()}

    out = run_zoo(work, ascendemu_kernel_cache, "eval.py", "--data_path", "MNIST_Data", "--ckpt_path", ckpt)
    x, labels = lenet_test_images(work / "MNIST_Data")
    logits = ref.lenet5(params, x)
    accuracy = np.mean(logits[:len(labels) // 32 * 32].argmax(1) == labels[:len(labels) // 32 * 32])
    assert accuracy > 0.8                                           # chance is 0.1
    assert out[-1] == f"============== {{'Accuracy': {accuracy.item()!r}}} =============="
    assert skeleton(out[-1]) in {skeleton(line) for line in oracle}

    run_zoo(work, ascendemu_kernel_cache, "export.py", "--ckpt_file", ckpt, "--file_format", "ONNX",
            "--file_name", "lenet", "--batch_size", "16")
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(str(work / "lenet.onnx"), providers=["CPUExecutionProvider"])
    assert [(i.name, i.shape) for i in session.get_inputs()] == [("x", [16, 1, 32, 32])]
    (got,) = session.run(None, {"x": x[:16].astype(np.float32)})
    np.testing.assert_allclose(got, logits[:16], rtol=1e-4, atol=1e-4)


# -------------------------------------------------------------------------------------------- ResNet

def zoo_resnet18(p: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The zoo's resnet18 (ResidualBlockBase, res_base=True) in inference mode: stem conv 7x7/2 pad 3,
    BN (eps 1e-5), ReLU, zero pad 1 + max pool 3/2, four stages of two blocks (BN eps 1e-4; the 1x1
    down-sampling conv's BN eps 1e-5), global mean, end_point."""
    def bn(name: str, v: np.ndarray, eps: float) -> np.ndarray:
        return ref.batch_norm(v, p[f"{name}.gamma"], p[f"{name}.beta"], p[f"{name}.moving_mean"],
                              p[f"{name}.moving_variance"], eps)

    x = ref.relu(bn("bn1", ref.conv2d(x, p["conv1.weight"], stride=2, pad=3), 1e-5))
    x = ref.max_pool2d(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), 3, 2)
    for layer, stride in zip(range(1, 5), (1, 2, 2, 2)):
        for block, s in ((0, stride), (1, 1)):
            pre = f"layer{layer}.{block}"
            out = ref.relu(bn(f"{pre}.bn1d", ref.conv2d(x, p[f"{pre}.conv1.weight"], stride=s, pad=1), 1e-4))
            out = bn(f"{pre}.bn2d", ref.conv2d(out, p[f"{pre}.conv2.weight"], pad=1), 1e-4)
            if f"{pre}.down_sample_layer.0.weight" in p:
                x = bn(f"{pre}.down_sample_layer.1",
                       ref.conv2d(x, p[f"{pre}.down_sample_layer.0.weight"], stride=s), 1e-5)
            x = ref.relu(out + x)
    return ref.dense(x.mean((2, 3)), p["end_point.weight"], p["end_point.bias"])


def eval_result(out: list[str]) -> dict[str, float]:
    """eval.py's last line ``result: {...} ckpt= <path>`` (the dict's order is the metric set's)."""
    match = re.fullmatch(r"result: (\{.*\}) ckpt= (.*)", out[-1])
    assert match, out[-1]
    return dict(re.findall(r"'(\w+)': ([\d.e+-]+)", match.group(1)))


def test_resnet18_imagenet_config_trains_in_sink_mode_and_evaluates(tmp_path, ascendemu_kernel_cache):
    """Four sunk steps of ResNet-18 (amp O3, loss scale 1024 without overflow checks, momentum with
    weight decay on conv/dense weights only, label smoothing) on 32 JPEGs in class folders at 32x32,
    the zoo's callbacks and checkpoint; eval.py's top-1/top-5 on 16 more are numpy's forward of it.
    (That forward, on the checkpoint real MindSpore 2.10 trained from the same files, gives the top-1/
    top-5 its eval.py printed.)"""
    work = zoo_copy("resnet", tmp_path)
    rng = np.random.default_rng(0)
    for split, n in (("train", 32), ("val", 16)):
        write_image_folder(work / "imagenet" / split, rng.integers(0, 256, (n, 40, 48, 3)), rng.integers(0, 10, n), 10)
    config = ("--config_path", "config/resnet18_imagenet2012_config.yaml", "--class_num", "10", "--batch_size", "8")
    out = run_zoo(work, ascendemu_kernel_cache, "train.py", *config, "--data_path", "imagenet/train", "--epoch_size", "1",
                  "--train_image_size", "32", "--output_dir", "outputs")
    epoch = [line for line in out if ":INFO:epoch: " in line]
    assert len(epoch) == 1, out
    loss = float(re.search(r":INFO:epoch: \[1/1\] loss: (\d+\.\d{6}), epoch time: \d+\.\d{3} s, "
                           r"per step time: \d+\.\d{3} ms$", epoch[0]).group(1))
    assert 1.5 < loss < 4.0                                  # label-smoothed cross entropy over 10 classes
    # the file real MindSpore wrote for the same run: its name, and its entries in order with their
    # dtypes and shapes (the network, optimizer state, the per-step learning rates, append_info)
    oracle = (ZOO / "resnet18_imagenet.mindspore-2.10-cpu.txt").read_text().splitlines()
    entries = oracle.index("# the checkpoint's entries: name dtype shape")
    ckpt_dir = work / "outputs" / "resnet18" / "imagenet2012" / "ckpt"
    assert [p.name for p in ckpt_dir.iterdir()] == [line for line in oracle[:entries] if line.endswith(".ckpt")]
    saved = load_checkpoint(str(ckpt_dir / "resnet18-1_4.ckpt"))
    assert [f"{k} {v.dtype} {tuple(v.shape)}" for k, v in saved.items()] == [
        line for line in oracle[entries + 1:] if not line.startswith(("#", "result:"))]
    assert (saved["epoch_num"].asnumpy().item(), saved["step_num"].asnumpy().item()) == (1, 4)   # append_info
    assert saved["global_step"].asnumpy().item() == 4

    out = run_zoo(work, ascendemu_kernel_cache, "eval.py", *config, "--data_path", "imagenet/val", "--eval_image_size",
                  "32", "--checkpoint_file_path", str(ckpt_dir / "resnet18-1_4.ckpt"), DEVICE_ID="0")
    result = {k: float(v) for k, v in eval_result(out).items()}
    assert set(result) == set(eval_result(oracle[-1:]))
    params = {k: v.asnumpy().astype(np.float64) for k, v in saved.items()}
    images = ds.ImageFolderDataset(str(work / "imagenet" / "val"), shuffle=False).map(
        [V.Decode(), V.Resize(256), V.CenterCrop(32), V.Normalize([0.485 * 255, 0.456 * 255, 0.406 * 255],
                                                                  [0.229 * 255, 0.224 * 255, 0.225 * 255]),
         V.HWC2CHW()], input_columns="image")
    x, labels = map(np.stack, zip(*images.create_tuple_iterator(output_numpy=True)))
    logits = zoo_resnet18(params, x.astype(np.float64))
    rank = (logits > logits[np.arange(len(labels)), labels][:, None]).sum(1)     # classes scored above the label
    assert result == {"top_1_accuracy": np.mean(rank < 1), "top_5_accuracy": np.mean(rank < 5)}


def test_resnet18_cifar10_config_trains_unchanged_as_a_dry_run(tmp_path):
    """The CIFAR-10 path (Cifar10Dataset on a real-format batch file of 10,000 records, RandomCrop with
    padding, flips, Resize, Normalize; SoftmaxCrossEntropyWithLogits; the poly schedule) as a DryRun:
    the pipeline feeds 40 sunk steps of 250 images, the zoo's LossCallBack logs the epoch and
    ModelCheckpoint writes its file with the appended epoch and step."""
    work = zoo_copy("resnet", tmp_path)
    rng = np.random.default_rng(0)
    (work / "cifar").mkdir()
    write_cifar(work / "cifar" / "data_batch_1.bin", rng.integers(0, 256, (64, 32, 32, 3)), rng.integers(0, 10, 64))
    out = run_zoo(work, tmp_path, "--dry-run", "train.py", "--config_path", "config/resnet18_cifar10_config.yaml",
                  "--data_path", "cifar", "--epoch_size", "1", "--batch_size", "250", "--train_image_size", "32",
                  "--output_dir", "outputs")
    assert any(re.search(r":INFO:epoch: \[1/1\] loss: \d+\.\d{6}, epoch time: ", line) for line in out), out
    ckpt = work / "outputs" / "resnet18" / "cifar10" / "ckpt" / "resnet18-1_40.ckpt"
    saved = load_checkpoint(str(ckpt))
    assert (saved["epoch_num"].asnumpy().item(), saved["step_num"].asnumpy().item()) == (1, 40)
    assert saved["end_point.weight"].shape == (10, 512)
