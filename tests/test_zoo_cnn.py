"""The model zoo's VGG16 (official/cv/VGG/vgg16) and MobileNetV2 (official/cv/MobileNet/mobilenetv2)
train.py and eval.py, copied unchanged from mindspore-ai/models (tests/fixtures/zoo/README.md), run under
``ascendemu run`` on data files in the real formats, configured only through the zoo's own mechanism
(its yaml and command line; for VGG16 also the RANK_SIZE variable its local_adapter reads).

- train.py (dataset sink mode, amp O2; VGG16 on Cifar10Dataset, MobileNetV2 on an ImageFolder tree
  with a FixedLossScaleManager and grouped weight decay) runs as a DryRun: the pipeline, the graphs,
  the sunk loop, the callbacks' lines and the checkpoint are real, no kernel is computed (a computed
  step builds some 150-350 kernels, beyond this suite's budget). The lines and the checkpoint's entries
  (names, shapes, dtypes, in file order) are those real MindSpore 2.10 printed and wrote for the same
  command lines and files (tests/fixtures/zoo/oracle.json, recorded by record_oracle.py there).
- eval.py computes: its top-1/top-5 counts (VGG16, float16 inside) and accuracy (MobileNetV2) equal
  those of a float64 numpy forward pass (examples/reference.py layers) of the checkpoint it loads, on
  the images our pipeline decodes, and the lines real MindSpore printed for the same checkpoint.

The starting checkpoint is random (seeded) with random BatchNorm moving statistics, its head bias
centred on the eval images so that predictions differ between them and the accuracy says something.
``python tests/test_zoo_cnn.py DIR`` writes the data, checkpoints and script copies into DIR (for
record_oracle.py).
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import ascendemu.frontend as ms
import ascendemu.frontend.dataset as ds
import ascendemu.frontend.dataset.vision as V
from ascendemu.frontend.train.serialization import load_checkpoint
from datafiles import write_cifar, write_image_folder
from test_zoo import ZOO, run_zoo, skeleton, zoo_copy

from examples import reference as ref  # noqa: E402  (test_run_cli puts the repository on sys.path)

ORACLE = ZOO / "oracle.json"
VGG16_CFG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
IMAGENET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
IMAGENET_STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
EVAL_LABELS = np.repeat(np.arange(4), 2)                      # two eval images in each of four classes
# VGG16's eval runs in float16 (add_flags_recursive(fp16=True)): its logits differ from float64 by
# ~1e-3 of the magnitude they are computed at (before the head bias), so its decisions are compared
# only where numpy's margins are ten times that
FLOAT16_MARGIN = 1e-2


# ------------------------------------------------------------------------------------ weights

def _bn(params: dict, prefix: str, channels: int, rng: np.random.Generator) -> None:
    params[prefix + "gamma"] = rng.uniform(0.8, 1.2, channels)
    params[prefix + "beta"] = rng.normal(0, 0.1, channels)
    params[prefix + "moving_mean"] = rng.normal(0, 0.1, channels)
    params[prefix + "moving_variance"] = rng.uniform(0.5, 1.5, channels)


def _conv(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    return rng.normal(0, math.sqrt(2.0 / math.prod(shape[1:])), shape)


def vgg16_weights(rng: np.random.Generator, classes: int) -> dict[str, np.ndarray]:
    """VGG16 with BatchNorm (src/vgg.py's layer numbering: conv, BN, ReLU per entry; a max pool per 'M')."""
    params, idx, cin = {}, 0, 3
    for v in VGG16_CFG:
        if v == "M":
            idx += 1
            continue
        params[f"layers.{idx}.weight"] = _conv((v, cin, 3, 3), rng)
        _bn(params, f"layers.{idx + 1}.", v, rng)
        idx, cin = idx + 3, v
    for i, (fin, fout) in enumerate(((512, 4096), (4096, 4096), (4096, classes))):
        params[f"classifier.{3 * i}.weight"] = rng.normal(0, math.sqrt(1.0 / fin), (fout, fin))
        params[f"classifier.{3 * i}.bias"] = rng.normal(0, 0.1, fout)
    return params


def mobilenet_blocks() -> list[tuple[int, int, int, int, int]]:
    """(index, in, out, stride, expand ratio) of the inverted residual blocks (src/mobilenetV2.py)."""
    blocks, cin, index = [], 32, 1
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)):
        for i in range(n):
            blocks.append((index, cin, c, s if i == 0 else 1, t))
            cin, index = c, index + 1
    return blocks


def mobilenet_weights(rng: np.random.Generator, classes: int) -> dict[str, np.ndarray]:
    params = {"features.0.features.0.weight": _conv((32, 3, 3, 3), rng)}
    _bn(params, "features.0.features.1.", 32, rng)
    for i, cin, cout, _, t in mobilenet_blocks():
        hidden, j = int(round(cin * t)), 0
        if t != 1:
            params[f"features.{i}.conv.0.features.0.weight"] = _conv((hidden, cin, 1, 1), rng)
            _bn(params, f"features.{i}.conv.0.features.1.", hidden, rng)
            j = 1
        params[f"features.{i}.conv.{j}.features.0.weight"] = _conv((hidden, 1, 3, 3), rng)
        _bn(params, f"features.{i}.conv.{j}.features.1.", hidden, rng)
        params[f"features.{i}.conv.{j + 1}.weight"] = _conv((cout, hidden, 1, 1), rng)
        _bn(params, f"features.{i}.conv.{j + 2}.", cout, rng)
    params["features.18.features.0.weight"] = _conv((1280, 320, 1, 1), rng)
    _bn(params, "features.18.features.1.", 1280, rng)
    params["dense.weight"] = rng.normal(0, 0.05, (classes, 1280))
    params["dense.bias"] = rng.normal(0, 0.1, classes)
    return params


# ------------------------------------------------------------------------------------ numpy networks

def batch_norm(x: np.ndarray, params: dict, prefix: str) -> np.ndarray:
    return ref.batch_norm(x, params[prefix + "gamma"], params[prefix + "beta"], params[prefix + "moving_mean"],
                          params[prefix + "moving_variance"])


def vgg16_forward(params: dict, x: np.ndarray) -> np.ndarray:
    """src/vgg.py's vgg16 in inference mode (phase="test": no dropout)."""
    idx = 0
    for v in VGG16_CFG:
        if v == "M":
            x, idx = ref.max_pool2d(x, 2, 2), idx + 1
            continue
        x = ref.relu(batch_norm(ref.conv2d(x, params[f"layers.{idx}.weight"], pad=1), params, f"layers.{idx + 1}."))
        idx += 3
    x = x.reshape(len(x), -1)
    for i in (0, 3):
        x = ref.relu(ref.dense(x, params[f"classifier.{i}.weight"], params[f"classifier.{i}.bias"]))
    return ref.dense(x, params["classifier.6.weight"], params["classifier.6.bias"])


def mobilenet_forward(params: dict, x: np.ndarray) -> np.ndarray:
    """src/mobilenetV2.py's backbone and head in inference mode."""
    def conv_bn_relu6(x, prefix, stride, group):
        w = params[prefix + "0.weight"]
        y = ref.conv2d(x, w, stride=stride, pad=(w.shape[2] - 1) // 2, group=group)
        return np.clip(batch_norm(y, params, prefix + "1."), 0.0, 6.0)

    x = conv_bn_relu6(x, "features.0.features.", 2, 1)
    for i, cin, cout, stride, t in mobilenet_blocks():
        h, j, hidden = x, 0, int(round(cin * t))
        if t != 1:
            h, j = conv_bn_relu6(h, f"features.{i}.conv.0.features.", 1, 1), 1
        h = conv_bn_relu6(h, f"features.{i}.conv.{j}.features.", stride, hidden)
        h = batch_norm(ref.conv2d(h, params[f"features.{i}.conv.{j + 1}.weight"]), params,
                       f"features.{i}.conv.{j + 2}.")
        x = x + h if stride == 1 and cin == cout else h
    x = conv_bn_relu6(x, "features.18.features.", 1, 1).mean((2, 3))
    return ref.dense(x, params["dense.weight"], params["dense.bias"])


@dataclass(frozen=True)
class Network:
    """A zoo network as the oracles see it: its weights, forward pass, head, eval pipeline."""
    name: str
    weights: Callable[[np.random.Generator, int], dict]
    forward: Callable[[dict, np.ndarray], np.ndarray]
    classes: int                     # what its yaml / command line below configure
    head_bias: str
    crop: int | list                 # the eval pipeline's CenterCrop after Resize((256, 256))
    seed: int                        # one whose float64 logits leave no near tie in eval's decisions


VGG16 = Network("vgg16", vgg16_weights, vgg16_forward, 6, "classifier.6.bias", [32, 32], 13)
MOBILENETV2 = Network("mobilenetv2", mobilenet_weights, mobilenet_forward, 4, "dense.bias", 32, 1)


def eval_images(folder: Path, net: Network) -> tuple[np.ndarray, np.ndarray]:
    """The eval images and labels as the scripts' eval pipelines make them (our pipeline, in order)."""
    data = ds.ImageFolderDataset(str(folder), shuffle=False).map(
        [V.Decode(), V.Resize((256, 256)), V.CenterCrop(net.crop), V.Normalize(IMAGENET_MEAN, IMAGENET_STD),
         V.HWC2CHW()], "image")
    images, labels = map(np.stack, zip(*data.create_tuple_iterator(output_numpy=True)))
    return images.astype(np.float64), labels


def prepare(net: Network, root: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    """The network's zoo directory copied under ``root``, its data beside it (the eval ImageFolder
    tree; VGG16's CIFAR-10 batch, MobileNetV2's train folder) and ``<name>_init.ckpt``: its random
    weights (float32), head bias centred: minus the mean logit over the eval images. Returns the copy,
    the float64 logits of the eval images without the head bias and with it (the checkpoint's)."""
    work, rng = zoo_copy(net.name, root), np.random.default_rng(net.seed)
    imagenet = root / "imagenet"
    # eval images of different colours (with noise): a random network's logits then differ between them
    colours = rng.integers(32, 224, (len(EVAL_LABELS), 1, 1, 3))
    write_image_folder(imagenet / "validation_preprocess",
                       np.clip(colours + rng.integers(-32, 32, (len(EVAL_LABELS), 40, 48, 3)), 0, 255), EVAL_LABELS, 4)
    if net is VGG16:
        # a batch file holds 10,000 records: RANK_SIZE=5000 makes rank 0's shard one batch of 2
        (root / "cifar" / "cifar-10-batches-bin").mkdir(parents=True)
        write_cifar(root / "cifar" / "cifar-10-batches-bin" / "data_batch_1.bin",
                    rng.integers(0, 256, (2, 32, 32, 3)), rng.integers(0, 10, 2))
        # its images are 224x224 in its yaml: image_size is a list, which its command line cannot set
        config = (work / "cifar10_config.yaml").read_text()
        assert "image_size: [224,224]\n" in config
        (work / "cifar10_32.yaml").write_text(config.replace("image_size: [224,224]", "image_size: [32,32]"))
    else:
        write_image_folder(imagenet / "train", rng.integers(0, 256, (4, 40, 48, 3)), np.zeros(4, int), 1)
    params = {k: v.astype(np.float32) for k, v in net.weights(rng, net.classes).items()}
    x, labels = eval_images(imagenet / "validation_preprocess", net)
    assert labels.tolist() == EVAL_LABELS.tolist()                  # in class folder order, as written
    params[net.head_bias] = np.zeros(net.classes, np.float32)
    raw = net.forward(params, x)
    params[net.head_bias] = (-raw.mean(0)).astype(np.float32)
    ms.save_checkpoint([{"name": k, "data": ms.Tensor(v)} for k, v in params.items()],
                       str(root / f"{net.name}_init.ckpt"))
    return work, raw, raw + params[net.head_bias]


def oracle(net: Network) -> dict:
    return json.loads(ORACLE.read_text())[net.name]


def entries(path: Path) -> list[list]:
    return [[k, list(p.shape), str(p.dtype)] for k, p in load_checkpoint(str(path)).items()]


def logged(lines: list[str], text: str) -> list[str]:
    """The messages of the zoo logger's lines (``<time>:INFO:<message>``) that contain ``text``."""
    return [line.split(":INFO:", 1)[1] for line in lines if ":INFO:" in line and text in line]


# ------------------------------------------------------------------------------------ the runs

def command_lines(net: Network, root: Path) -> dict:
    """The scripts' command lines (train.py, eval.py, in the network's directory) and environment, on
    what ``prepare(net, root)`` wrote: one epoch of one step, eval on the starting checkpoint."""
    init = str(root / f"{net.name}_init.ckpt")
    if net is VGG16:
        common = ["--config_path", "cifar10_32.yaml", "--num_classes", str(net.classes), "--batch_size", "2"]
        return {"train": ["train.py", *common, "--data_dir", str(root / "cifar"), "--max_epoch", "1",
                          "--warmup_epochs", "0", "--pre_trained", init, "--ckpt_path", str(root / "out") + "/"],
                "eval": ["eval.py", *common, "--dataset", "imagenet2012", "--data_dir",
                         str(root / "imagenet" / "validation_preprocess"), "--pre_trained", init,
                         "--log_path", str(root / "logs") + "/"],
                "env": {"RANK_SIZE": "5000"}}
    common = ["--dataset_path", str(root / "imagenet"), "--num_classes", str(net.classes), "--image_height", "32",
              "--image_width", "32", "--num_workers", "2", "--pretrain_ckpt", init]
    return {"train": ["train.py", *common, "--batch_size", "4", "--epoch_size", "1", "--warmup_epochs", "0",
                      "--save_checkpoint_path", str(root / "out") + "/"],
            "eval": ["eval.py", *common, "--batch_size", "2"],
            "env": {}}


def monitor(lines: list[str]) -> list[str]:
    """The lines of the monitor callbacks and the scripts' own progress prints, numbers as '#'."""
    return [skeleton(line) for line in lines if line.startswith(("epoch", "Train epoch time:", "=============="))]


def run_both(net: Network, root: Path, cache: Path) -> tuple[list[str], list[str]]:
    """train.py as a DryRun, then eval.py computed: their output lines."""
    work, commands = root / net.name, command_lines(net, root)
    train = run_zoo(work, cache, "--dry-run", *commands["train"], **commands["env"])
    # VGG16's eval.py imports its fine_tune.py, which sets device_target "CPU" (then eval sets "Ascend")
    cpu = "device_target 'CPU': ascendemu has no CPU backend" if net is VGG16 else ""
    return train, run_zoo(work, cache, *commands["eval"], warns=cpu, **commands["env"])


def test_vgg16_cifar10_trains_in_sink_mode_and_evaluates_in_float16(tmp_path, ascendemu_kernel_cache):
    """train.py: Cifar10Dataset (RandomCrop with padding, flips, Resize, Normalize), amp O2, the 'step'
    schedule, LossMonitor/TimeMonitor/ModelCheckpoint, one epoch of one sunk step (RANK_SIZE=5000 makes
    rank 0's shard of the 10,000 records one batch of 2); eval.py's ImageFolder branch on the starting
    checkpoint: the top-1/top-5 counts of its float16 forward pass."""
    _, raw, logits = prepare(VGG16, tmp_path)
    train, evaluation = run_both(VGG16, tmp_path, ascendemu_kernel_cache)
    want = oracle(VGG16)
    assert monitor(train) == monitor(want["train"]) == ["epoch: # step: #, loss is #",
                                                        "Train epoch time: # ms, per step time: # ms"]
    (ckpt,) = (tmp_path / "out").glob("*/ckpt_0/*.ckpt")               # <outputs_dir>/ckpt_<rank>/
    assert ckpt.name == "0-1_1.ckpt"                                     # prefix = rank, epoch 1, step 1
    assert entries(ckpt) == want["checkpoint"]

    ranked, scale = np.sort(logits, -1), np.abs(raw).max()
    assert (ranked[:, -1] - ranked[:, -2]).min() > FLOAT16_MARGIN * scale       # no near tie at top 1 ...
    assert (ranked[:, -5] - ranked[:, -6]).min() > FLOAT16_MARGIN * scale       # ... nor at top 5
    rank = (logits > logits[np.arange(len(EVAL_LABELS)), EVAL_LABELS][:, None]).sum(1)  # classes above the label
    top1, top5, n = int((rank < 1).sum()), int((rank < 5).sum()), len(EVAL_LABELS)
    assert 0 < top1 < top5 < n                                                   # the counts say something
    lines = [f"after allreduce eval: top1_correct={top1}, tot={n},acc={100 * top1 / n:.2f}%(TOP1)",
             f"after allreduce eval: top5_correct={top5}, tot={n},acc={100 * top5 / n:.2f}%(TOP5)"]
    assert logged(evaluation, "after allreduce eval") == lines == logged(want["eval"], "after allreduce eval")


def test_mobilenetv2_trains_in_sink_mode_and_evaluates(tmp_path, ascendemu_kernel_cache):
    """train.py with default_config.yaml's Ascend branch (amp O2, FixedLossScaleManager(1024), grouped
    weight decay, label smoothing, the zoo's own monitor callback and ModelCheckpoint), one epoch of one
    sunk step on an ImageFolder tree; eval.py's Model.eval accuracy on the starting checkpoint."""
    _, _, logits = prepare(MOBILENETV2, tmp_path)
    train, evaluation = run_both(MOBILENETV2, tmp_path, ascendemu_kernel_cache)
    want = oracle(MOBILENETV2)
    assert monitor(train) == monitor(want["train"])
    assert "epoch: [  #/  #], step:[    #/    #], loss:[#/#], time:[#], lr:[#]" in monitor(train)
    assert [p.name for p in (tmp_path / "out" / "ckpt_0").iterdir()] == ["mobilenetv2-1_1.ckpt"]
    assert entries(tmp_path / "out" / "ckpt_0" / "mobilenetv2-1_1.ckpt") == want["checkpoint"]

    ranked = np.sort(logits, -1)
    assert (ranked[:, -1] - ranked[:, -2]).min() > 1e-3 * np.abs(logits).max()      # no near tie (float32)
    accuracy = float(np.mean(logits.argmax(-1) == EVAL_LABELS))
    assert 0 < accuracy < 1
    def result(lines: list[str]) -> list[str]:
        return [line for line in lines if line.startswith("result:")]
    assert result(evaluation) == [f"result:{{'acc': {accuracy!r}}}"] == result(want["eval"])


if __name__ == "__main__":
    # python tests/test_zoo_cnn.py DIR: each network's files in DIR/<name>, commands in DIR/commands.json
    commands = {}
    for network in (VGG16, MOBILENETV2):
        prepare(network, Path(sys.argv[1]) / network.name)
        commands[network.name] = command_lines(network, Path(sys.argv[1]) / network.name)
    (Path(sys.argv[1]) / "commands.json").write_text(json.dumps(commands, indent=1))
