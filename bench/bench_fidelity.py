"""Fidelity bench: simulated training throughput against published Ascend 910 figures.

Every network trains as its published run did (GRAPH_MODE, O2 static plan, dataset sink mode fed by
the device data queue, fp16 through amp, batch size as published) under DryRun: graphs compile and
every kernel is planned and priced by the cost model (device/cost.py), nothing is computed. The
steady step time is the difference of two sinks (3 steps and 1 step) over 2, so the first batch's
upload and the pipeline fill cancel out, as in a long sunk epoch.

Two figures calibrate the cost model's two fitted constants (DeviceSpec.core_port_bytes_per_cycle and
cube_efficiency), once, with MLPerf's clock scaling: ResNet-50 v1.5 (2115 images/s, MindSpore's
benchmark page) and BERT-large pre-training (269 sequences/s). A third, ResNet-18 ImageNet (the zoo's
110 ms/step, input-bound by its README), fits the data channel's rate at which the sunk loop's GetNext takes
each batch's bytes off the device queue (DeviceSpec.dataset_channel_bandwidth), a floor under every
sunk step the emulator runs. A fourth, NCF (bench/ncf.py, the zoo's 0.575 ms/step, its
device work half that), fits the sunk loop's per-batch GetNext cost (device/cost.py GETNEXT_S), which the
emulator runs on the data queue's stream. The model zoo's per-step figures for other networks (16:
ResNets, SE-ResNet, LeNet, VGG16, SqueezeNet, SSD-MobileNetV1-FPN, BERT-base, U-Net (bench/unet.py),
Wide&Deep (bench/wide_deep.py); then 3 more: Inception-v3/v4, DeepFM; each README read at ZOO_COMMIT) are checks against the same constants, summarised as the median absolute
error and the shares within 15%/25% (docs/FIDELITY.md). Many of the zoo's figures are 8-card
runs (per card; they include the gradient AllReduce, which overlaps the backward pass); the
simulation is one card.

Run: python bench/bench_fidelity.py [--only resnet50,bert_large,...] [--no-clock] [--spec field=value,...]
     python bench/bench_fidelity.py --kinds --only bert_base,bert_large   (kernel ms per op kind, side by side)
     python bench/bench_fidelity.py --910b   (only the 910B checks: MindFormers' Llama 2 throughputs on
     Atlas A2, one DryRun of rank 0 of 8 per preset, about 10-15 s of CPU each; :data:`CHECKS_910B`)
(about 110 s of CPU with warm caches, 5-11 minutes of wall time on 2 loaded cores; BERT-large's graph
capture and compilation take most of it.)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ascendemu.device.spec import DEFAULT_PRESET

ROOT = Path(__file__).resolve().parents[1]
ZOO_RESNET = ROOT / "tests" / "fixtures" / "zoo" / "resnet"
RESULT_TAG = "FIDELITY_RESULT "
SINKS = (1, 3)                       # steps per sink; the steady step is their difference / 2
# MLPerf Training v1.0 BERT on 910: 75.8 seq/s/card at 1.1 GHz, 83.2 at 1.2 GHz (REFERENCE.md)
MLPERF_CLOCK_SCALING = 83.2 / 75.8
CLOCK_TOLERANCE = 0.02
ZOO_COMMIT = "eab643f5"               # mindspore-ai/models commit every zoo figure below was read at
ZOO_README = f"mindspore-ai/models@{ZOO_COMMIT} official/cv/ResNet/README.md, Ascend 910, 8pcs"
ZOO = ROOT / "tests" / "fixtures" / "zoo"
# The zoo's BERT-base pre-training network (official/nlp/Bert/pretrain_config.yaml, base_net_cfg).
BERT_BASE = dict(vocab_size=21128, hidden_size=768, num_heads=12, intermediate_size=3072)
# A check counts as met within these shares of the published figure (issue 23's goals).
WITHIN = (0.15, 0.25)
# The calibration figures that also run on the clock-scaling presets, there without the data channel (a
# what-if): the check is of the device's scaling with its clock, which the channel does not follow (with it,
# ResNet-50's 154 MB float32 batches would cap the PremiumA run at the channel's 2327 images/s).
CLOCK_CALIBRATION = ("resnet50", "bert_large")
NO_CHANNEL = {"dataset_channel_bandwidth": float("inf")}

# name: (label, builder, batch, published figure, its unit ("samples/s" or "ms/step"), source, role)
NETWORKS: dict[str, tuple] = {
    "resnet50": ("ResNet-50 v1.5 ImageNet, fp16 (amp O3), Momentum", "resnet50", 256, 2115.0, "samples/s",
                 "MindSpore benchmark page (REFERENCE.md)", "calibration"),
    "bert_large": ("BERT-large pre-training, seq 128, the zoo's fp16 compute, AdamWeightDecay", "bert", 96, 269.0,
                   "samples/s", "MindSpore benchmark page (REFERENCE.md)", "calibration"),
    "resnet50_zoo": ("ResNet-50 v1.5 ImageNet, zoo README", "resnet50", 256, 118.0, "ms/step", ZOO_README, "check"),
    "resnet34": ("ResNet-34 ImageNet", "resnet34", 256, 111.0, "ms/step", ZOO_README, "check"),
    "resnet101": ("ResNet-101 ImageNet", "resnet101", 32, 30.3, "ms/step", ZOO_README, "check"),
    "resnet152": ("ResNet-152 ImageNet", "resnet152", 32, 47.47, "ms/step", ZOO_README, "check"),
    "resnet50_cifar": ("ResNet-50 v1.5 CIFAR-10 (resized to 224)", "resnet50_cifar", 32, 18.4, "ms/step",
                       ZOO_README, "check"),
    "resnet18": ("ResNet-18 ImageNet (README: may need NUMA binding: input-bound; fits the data channel)",
                 "resnet18", 256, 110.0, "ms/step", ZOO_README, "calibration"),
    "resnet18_cifar": ("ResNet-18 CIFAR-10 (resized to 224)", "resnet18_cifar", 32, 13.0, "ms/step",
                       ZOO_README, "check"),
    "se_resnet50": ("SE-ResNet-50 ImageNet", "se_resnet50", 32, 24.6, "ms/step", ZOO_README, "check"),
    "lenet": ("LeNet-5 MNIST, amp O2, Momentum", "lenet", 32, 1.071, "ms/step",
              f"mindspore-ai/models@{ZOO_COMMIT} research/cv/lenet/README.md, 1 card", "check"),
    "vgg16_cifar": ("VGG16-BN CIFAR-10 (resized to 224), amp O2, BatchNorm in fp16", "vgg16_cifar", 64, 79.0, "ms/step",
                    f"mindspore-ai/models@{ZOO_COMMIT} official/cv/VGG/vgg16/README.md, 1pc", "check"),
    "vgg16_imagenet": ("VGG16 ImageNet (no BN, dropout), amp O2", "vgg16_imagenet", 32, 58.0, "ms/step",
                       f"mindspore-ai/models@{ZOO_COMMIT} official/cv/VGG/vgg16/README.md, 1pc", "check"),
    "ssd_fpn": ("SSD-MobileNetV1-FPN COCO 640x640 (detector), fp32", "ssd_fpn", 32, 408.0, "ms/step",
                f"mindspore-ai/models@{ZOO_COMMIT} official/cv/SSD/README.md, 8pcs", "check"),
    "squeezenet_cifar": ("SqueezeNet CIFAR-10 (resized to 227), amp O2", "squeezenet_cifar", 32, 16.7, "ms/step",
                         f"mindspore-ai/models@{ZOO_COMMIT} research/cv/squeezenet/README.md, 1pc", "check"),
    "squeezenet": ("SqueezeNet ImageNet, amp O2", "squeezenet", 32, 19.9, "ms/step",
                   f"mindspore-ai/models@{ZOO_COMMIT} research/cv/squeezenet/README.md, 8pcs", "check"),
    "bert_base": ("BERT-base pre-training cn-wiki seq 128, Lamb, the zoo's fp16 compute", "bert_base", 256, 284.0, "ms/step",
                  f"mindspore-ai/models@{ZOO_COMMIT} official/nlp/Bert/README.md, 8 cards", "check"),
    "unet": ("U-Net medical 572x572 (segmentation), amp O3, Adam", "unet", 16, 267.0, "ms/step",
             f"mindspore-ai/models@{ZOO_COMMIT} official/cv/Unet/README.md, 1pc", "check"),
    "wide_deep": ("Wide&Deep Criteo (recommender), FTRL + Adam", "wide_deep", 16000, 20.906, "ms/step",
                  f"mindspore-ai/models@{ZOO_COMMIT} official/recommend/Wide_and_Deep/README.md, single Ascend",
                  "check"),
    "ncf": ("NCF MovieLens-1M (fits GetNext's per-batch cost), Adam", "ncf", 256, 0.575, "ms/step",
            f"mindspore-ai/models@{ZOO_COMMIT} research/recommend/ncf/README.md, 1pc", "calibration"),
    # Added in the fourth round, chosen before they ran (an Inception-style pair the issue names, a second
    # recommender, a Transformer); every one is reported whatever its ratio.
    "inception_v3": ("Inception-v3 ImageNet 299, amp O3, RMSProp", "inception_v3", 128, 1200.0, "samples/s",
                     f"mindspore-ai/models@{ZOO_COMMIT} official/cv/Inception/inceptionv3/README.md, 1pc",
                     "check"),
    "inception_v4": ("Inception-v4 ImageNet 299, amp O3, RMSProp", "inception_v4", 128, 556.0, "samples/s",
                     f"mindspore-ai/models@{ZOO_COMMIT} official/cv/Inception/inceptionv4/README.md, 1p",
                     "check"),
    "deepfm": ("DeepFM Criteo (recommender), Adam", "deepfm", 16000, 21.0, "ms/step",
               f"mindspore-ai/models@{ZOO_COMMIT} official/recommend/DeepFM/README.md, 1pc", "check"),
    # Not counted: its train.py runs unsunk over length buckets (16-128 tokens, "data sink mode can not be
    # used in transformer"), so the published mean step's work depends on WMT's length mix, which the README
    # does not give; simulated at the longest bucket only (an upper bound on the step), docs/FIDELITY.md.
    "transformer": ("Transformer large WMT en-de, seq 128 bucket only, Adam", "transformer", 96, 400.0, "ms/step",
                    f"mindspore-ai/models@{ZOO_COMMIT} official/nlp/Transformer/README.md, 8pcs", "aside"),
}
# bench/<module>.py networks (a build(batch) each), by builder name
BENCH_MODULES = ("unet", "wide_deep", "ncf", "inception_v3", "inception_v4", "deepfm", "transformer")


# ------------------------------------------------------------------------------------ child process

def _resnet(builder: str, batch: int):
    """The zoo's ResNet (tests/fixtures/zoo/resnet/src/resnet.py) as its train.py builds it on Ascend."""
    sys.argv = [sys.argv[0], "--config_path", str(ZOO_RESNET / "config" / "resnet18_imagenet2012_config.yaml")]
    sys.path.insert(0, str(ZOO_RESNET))
    import numpy as np

    import ascendemu.frontend as ms
    from ascendemu.frontend import nn
    from src import resnet
    from src.CrossEntropySmooth import CrossEntropySmooth
    from src.model_utils.config import config
    from src.util import init_group_params

    name = builder.replace("_cifar", "")
    cifar = builder.endswith("_cifar")
    classes = 10 if cifar else 1001
    config.net_name = name.replace("se_", "se-")
    config.weight_decay = 1e-4
    net = getattr(resnet, name)(classes)
    # train.py's init_loss_scale: label smoothing on ImageNet, plain sparse softmax cross-entropy on CIFAR-10
    loss = (nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean") if cifar else
            CrossEntropySmooth(sparse=True, reduction="mean", smooth_factor=0.1, num_classes=classes))
    opt = nn.Momentum(init_group_params(net, config), 0.1, 0.9, loss_scale=1024.0)
    model = ms.Model(net, loss_fn=loss, optimizer=opt, amp_level="O3",
                     loss_scale_manager=ms.FixedLossScaleManager(1024.0, drop_overflow_update=False))
    columns = [np.zeros((batch, 3, 224, 224), np.float32), np.zeros((batch,), np.int32)]
    return model, columns


def _lenet(batch: int):
    """The zoo's LeNet-5 (tests/fixtures/zoo/lenet) as its train.py builds it on Ascend (amp O2)."""
    sys.path.insert(0, str(ZOO / "lenet"))
    import numpy as np

    import ascendemu.frontend as ms
    from ascendemu.frontend import nn
    from src.lenet import LeNet5

    net = LeNet5(10)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9), amp_level="O2")
    return model, [np.zeros((batch, 1, 32, 32), np.float32), np.zeros((batch,), np.int32)]


def _vgg(builder: str, batch: int):
    """The zoo's VGG16 (tests/fixtures/zoo/vgg16/src/vgg.py) as its train.py builds it on Ascend with its
    CIFAR-10 config (BN, 'same' padding, no dropout; Momentum with weight decay 5e-4 and loss scale 1, amp O2
    with keep_batchnorm_fp32=False and loss_scale_manager=None: BatchNorm in float16, no loss scaling) or its
    ImageNet config (no BN, 'pad' padding, dropout; CrossEntropy with label smoothing 0.1, Momentum with
    weight decay 1e-4 and loss scale 1024, FixedLossScaleManager(1024, False), amp O2); both with train.py's
    parameter groups (no decay on biases and BatchNorm)."""
    from types import SimpleNamespace
    sys.path.insert(0, str(ZOO / "vgg16"))
    import numpy as np

    import ascendemu.frontend as ms
    from ascendemu.frontend import nn
    from src.crossentropy import CrossEntropy
    from src.utils.util import get_param_groups
    from src.vgg import vgg16

    cifar = builder == "vgg16_cifar"
    args = SimpleNamespace(image_size=[224, 224], pad_mode="same" if cifar else "pad", padding=0 if cifar else 1,
                           has_bias=False, batch_norm=cifar, has_dropout=not cifar,
                           initialize_mode="XavierUniform" if cifar else "KaimingNormal")
    net = vgg16(10 if cifar else 1000, args)
    opt = nn.Momentum(get_param_groups(net), 0.01, 0.9, weight_decay=5e-4 if cifar else 1e-4,
                      loss_scale=1.0 if cifar else 1024.0)
    if cifar:
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        model = ms.Model(net, loss_fn=loss, optimizer=opt, amp_level="O2", keep_batchnorm_fp32=False,
                         loss_scale_manager=None)
    else:
        model = ms.Model(net, loss_fn=CrossEntropy(smooth_factor=0.1, num_classes=1000), optimizer=opt,
                         amp_level="O2", loss_scale_manager=ms.FixedLossScaleManager(1024.0, drop_overflow_update=False))
    return model, [np.zeros((batch, 3, 224, 224), np.float32), np.zeros((batch,), np.int32)]


def _squeezenet(builder: str, batch: int):
    """The zoo's SqueezeNet (tests/fixtures/zoo/squeezenet, research/cv/squeezenet) as its train.py builds it
    on Ascend: amp O2, Momentum (Nesterov, loss scale 1024), 227x227 inputs (CIFAR-10 resized)."""
    sys.path.insert(0, str(ZOO / "squeezenet"))
    import numpy as np

    import ascendemu.frontend as ms
    from ascendemu.frontend import nn
    from src.squeezenet import SqueezeNet

    classes = 10 if builder.endswith("_cifar") else 1000
    net = SqueezeNet(classes)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), 0.01, 0.9, 1e-4, 1024.0, use_nesterov=True)
    model = ms.Model(net, loss_fn=loss, optimizer=opt, amp_level="O2",
                     loss_scale_manager=ms.FixedLossScaleManager(1024.0, drop_overflow_update=False))
    return model, [np.zeros((batch, 3, 227, 227), np.float32), np.zeros((batch,), np.int32)]


def _ssd(batch: int):
    """bench/ssd_mobilenet_v1_fpn.py's SSD-MobileNetV1-FPN at the published 640x640 (its zoo TrainingWrapper)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import ascendemu.frontend as ms
    from ssd_mobilenet_v1_fpn import build

    net, inputs = build(batch, 640)
    return ms.Model(net), list(inputs)


def _bert(batch: int, layers: int = 24, init=None, base: dict | None = None):
    """bench/bert.py's BERT-large with the zoo's pre-training inputs (seq 128, 20 masked positions), its
    float16 compute and its training cell (run_pretrain.py: ``Model(BertTrainOneStepWithLossScaleCell)``);
    ``init``: the weights' initializer (None: the zoo's); ``base``: overrides for BERT-base with Lamb."""
    sys.path.insert(0, str(ROOT / "bench"))
    import numpy as np

    import ascendemu.frontend as ms
    from ascendemu.frontend import nn
    from bert import LARGE, BertTrainCell, bert_large, decay_groups

    net = bert_large(num_layers=layers, init=init, **(base or {}))
    groups = decay_groups(net.trainable_params(), 0.01)
    opt = nn.Lamb(groups, 1e-4) if base else nn.AdamWeightDecay(groups, 1e-4)
    model = ms.Model(BertTrainCell(net, opt))
    seq, masked = 128, LARGE["max_predictions"]
    columns = [np.zeros((batch, seq), np.int32), np.ones((batch, seq), np.int32), np.zeros((batch, seq), np.int32),
               np.zeros((batch,), np.int32), np.zeros((batch, masked), np.int32), np.zeros((batch, masked), np.int32),
               np.ones((batch, masked), np.float32)]
    return model, columns


def parse_overrides(text: str) -> dict[str, float | bool]:
    """``field=value,...`` -> DeviceSpec overrides for a what-if (``--spec conv_cube_efficiency=0.5``, a flag
    ``fp32_matrix_in_fp16=false``)."""
    pairs = [item.split("=", 1) for item in text.split(",") if item]
    if any(len(p) != 2 for p in pairs):
        raise SystemExit(f"--spec takes field=value,..., got {text!r}")
    flags = {"true": True, "false": False}
    return {k: flags[v.lower()] if v.lower() in flags else float(v) for k, v in pairs}


def sink_runs(build, preset: str, cache: str, sinks: tuple[int, ...] = SINKS, overrides: dict | None = None,
              trace: bool = False) -> tuple[list[float], list[dict]]:
    """Simulated seconds of each sink (``sinks``: steps per sink) of ``build()`` -> (Model, input columns) on
    ``preset``, in DryRun (graph cache and kernel plans under ``cache``), and with ``trace`` the trace's
    kernel spans (their ``args`` hold each launch's cost and block count)."""
    import ascendemu.frontend.dataset as ds
    from ascendemu.device.spec import get_spec
    from ascendemu.frontend import context, set_backend
    from ascendemu.graph.executor import DeviceExecutor
    from ascendemu.hal.runtime import get_runtime, trace_events

    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    spec = get_spec(preset, **(overrides or {}))
    executor = DeviceExecutor(cache_root=cache, dry_run=True, progress=False, device=spec, trace=trace)
    previous = set_backend(executor)
    try:
        context.set_context(mode=context.GRAPH_MODE)
        model, columns = build()
        times = []
        for steps in sinks:
            data = ds.GeneratorDataset(lambda n=steps: (tuple(columns) for _ in range(n)),
                                       [f"c{i}" for i in range(len(columns))])
            model.train(1, data, dataset_sink_mode=True, sink_size=steps)
            times.append(executor.steps[-1].device_s)
        kernels = [e for e in trace_events() if e.get("cat") == "kernel"] if trace else []
        return times, kernels
    finally:
        set_backend(previous)
        context.set_context(mode=context.PYNATIVE_MODE)
        get_runtime().finalize()


def steady_step(build, preset: str, cache: str, sinks: tuple[int, ...] = SINKS,
                overrides: dict | None = None) -> float:
    """Simulated seconds of one steady training step of ``build()`` on ``preset`` (:func:`sink_runs`): the
    difference of two sinks' times over their difference in steps; with one sink of one step, that step's
    time (its input upload included)."""
    times, _ = sink_runs(build, preset, cache, sinks, overrides)
    return times[0] / sinks[0] if len(sinks) == 1 else (times[1] - times[0]) / (sinks[1] - sinks[0])


def kernel_kind(span: dict, cost) -> str:
    """A kernel span's kind for :func:`kernel_kinds`: its op type, "grad " before it in the backward graph,
    or "optimizer" for the optimizer's kernels; a convolution's (``cost``, the span's KernelCost) with its
    (dilated) kernel, "Conv2D 3x3", so the img2col-fed products stand apart from the 1x1 ones
    (docs/FIDELITY.md, "What the calibration leaves a convolution")."""
    name = span["name"]
    if "/optimizer-" in name:                   # the optimizer Cell's scope: Default/optimizer-Lamb/...
        return "optimizer"
    op = (span["args"].get("op") or {}).get("type", span["args"].get("kernel", name))
    gemm = cost.gemm
    if gemm is not None and gemm.conv and gemm.window is not None:
        op += f" {gemm.window.kh}x{max(gemm.window.kw, 1)}"
    return ("grad " if name.startswith("Gradients/") else "") + op


def kernel_kinds(build, preset: str, cache: str, overrides: dict | None = None) -> dict[str, float]:
    """Seconds per kernel kind (:func:`kernel_kind`) of one sunk step of ``build()``: each launch priced on
    an idle device (``cost.kernel_time`` of its cost and block count) and summed over the step's streams, so
    the kinds add up to the kernels' time, not to the step's (streams overlap)."""
    from ascendemu.device.cost import KernelCost, kernel_time
    from ascendemu.device.spec import get_spec

    spec = get_spec(preset, **(overrides or {}))
    _, kernels = sink_runs(build, preset, cache, (1,), overrides, trace=True)
    kinds: dict[str, float] = {}
    for span in kernels:
        cost = KernelCost.from_json(span["args"]["cost"])
        kind = kernel_kind(span, cost)
        kinds[kind] = kinds.get(kind, 0.0) + kernel_time(spec, cost, span["args"]["blockDim"])
    return kinds


def _bench_module(module: str, batch: int):
    """bench/<module>.py's ``build(batch)`` -> (Model or training cell, input columns)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import importlib

    import ascendemu.frontend as ms

    model, inputs = importlib.import_module(module).build(batch)
    return (model if isinstance(model, ms.Model) else ms.Model(model)), list(inputs)


def child(name: str, presets: list[str], cache: str, overrides: dict | None = None, kinds: bool = False) -> dict:
    """Steady simulated step time of ``name`` on each preset, in this process; with ``kinds`` instead its
    kernels' seconds per kind on the default preset (:func:`kernel_kinds`)."""
    from ascendemu.cli.run import install_mindspore_alias
    install_mindspore_alias()
    _, builder, batch, *_ = NETWORKS[name]
    builds = {"bert": lambda: _bert(batch), "bert_base": lambda: _bert(batch, 12, base=BERT_BASE),
              "lenet": lambda: _lenet(batch), "vgg16_cifar": lambda: _vgg(builder, batch),
              "vgg16_imagenet": lambda: _vgg(builder, batch), "ssd_fpn": lambda: _ssd(batch),
              "squeezenet_cifar": lambda: _squeezenet(builder, batch),
              "squeezenet": lambda: _squeezenet(builder, batch)}
    builds.update({m: (lambda m=m: _bench_module(m, batch)) for m in BENCH_MODULES})
    build = builds.get(builder, lambda: _resnet(builder, batch))
    if kinds:
        return kernel_kinds(build, DEFAULT_PRESET, cache, overrides)
    return {preset: steady_step(build, preset, cache, overrides=dict(overrides or {}, **(
        {} if preset == DEFAULT_PRESET else NO_CHANNEL))) for preset in presets}


# ------------------------------------------------------------------------------------------- parent

def run_child(name: str, presets: list[str], cache: str, spec: str = "", kinds: bool = False) -> dict:
    env = dict(os.environ, ASCENDEMU_CACHE_KEY_FILE=os.environ.get("ASCENDEMU_CACHE_KEY_FILE",
                                                                   str(Path(cache) / "key")))
    proc = subprocess.run([sys.executable, __file__, "--child", name, "--presets", ",".join(presets),
                           "--cache", cache, "--spec", spec] + (["--kinds"] if kinds else []),
                          capture_output=True, text=True, env=env, cwd=cache)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_TAG)]
    if proc.returncode or not lines:
        raise SystemExit(f"{name}: child failed\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len(RESULT_TAG):])


def row(name: str, step_s: float) -> tuple[str, float, float, float]:
    """(unit, published, simulated, simulated / published in the direction of throughput)."""
    label, _, batch, published, unit, *_ = NETWORKS[name]
    if unit == "samples/s":
        sim = batch / step_s
        return unit, published, sim, sim / published
    sim = step_s * 1e3
    return unit, published, sim, published / sim


def figure(value: float) -> str:
    """A simulated figure as the tables print it: one decimal, three for sub-10 ms steps (LeNet, NCF)."""
    return f"{value:.1f}" if value >= 10 else f"{value:.3f}"


def summary(ratios: list[float]) -> str:
    """Median absolute error and the shares within :data:`WITHIN` over the checks' throughput ratios."""
    import statistics
    errors = [abs(r - 1.0) for r in ratios]
    shares = ", ".join(f"{sum(e <= w for e in errors)}/{len(errors)} within {w:.0%}" for w in WITHIN)
    return f"Checks: median absolute error {statistics.median(errors):.1%}; {shares}"


# --------------------------------------------------------------------------------------- 910B checks
# Published Atlas A2 (910B) training throughputs, tokens/s per card, from MindFormers' Llama 2 model card
# (docs/model_cards/llama2.md, "模型性能") and the yaml each row names, read at MINDFORMERS_COMMIT. Each runs
# as examples/llama/dryrun_7b.py (MindFormers' Llama): one DryRun of rank 0 of the 8 (RANK_SIZE=8, full
# depth), the yaml's parallel config, per-card batch, seq length, recompute and optimizer shard; same cost
# model and fitted constants as the 910A, the 910B presets' own hardware facts (device/spec.py). The card
# does not say which 910B its servers hold: two presets run, Ascend910B3 (20 cores) and Ascend910B2 (24).
MINDFORMERS_COMMIT = "4faa9fc44fa48a409a45ec53c438359cdb52a77e"
LLAMA_CARD = f"mindspore-lab/mindformers@{MINDFORMERS_COMMIT[:9]} docs/model_cards/llama2.md"
LLAMA_SCRIPT = ROOT / "examples" / "llama" / "dryrun_7b.py"
PRESETS_910B = ("Ascend910B3", "Ascend910B2")
RANKS_910B = 8
L13B = ["--num_layers", "40", "--hidden_size", "5120", "--num_heads", "40"]
# name: (label, published tokens/s/p, where, per-card batch, DryRun flags beyond --dp 8 --mp 1)
CHECKS_910B: dict[str, tuple] = {
    "llama2_7b": ("Llama-2-7B finetune, fp16, seq 4096, dp 8, batch 1/card, optimizer shard, no recompute "
                  "(configs/llama2/finetune_llama2_7b.yaml)", 3484.0, "Atlas 800T A2", 1,
                  ["--optimizer_shard"]),
    "llama2_13b": ("Llama-2-13B finetune, fp16, seq 4096, dp 8, batch 4/card, optimizer shard, full recompute "
                   "(configs/llama2/finetune_llama2_13b.yaml)", 1911.0, "Atlas 900 A2 PoDc", 4,
                   [*L13B, "--batch_size", "4", "--optimizer_shard", "--recompute", "full"]),
}
SEQ_910B = 4096


def check_910b(name: str, preset: str) -> dict:
    """One 910B check's DryRun on ``preset``: simulated step and exposed communication (ms), tokens/s per
    card, and the child's CPU seconds."""
    sys.path.insert(0, str(ROOT / "bench"))
    from dryrun_child import run_dryrun

    from ascendemu.cli.cluster import dryrun_figures

    _, _, _, batch, flags = CHECKS_910B[name]
    child = run_dryrun(LLAMA_SCRIPT, ["--dp", str(RANKS_910B), "--mp", "1", *flags],
                       {"RANK_SIZE": str(RANKS_910B), "RANK_ID": "0", "TE_PARALLEL_COMPILER": "1"},
                       options=("--device", preset))
    figures = dryrun_figures(child.log)
    step_ms, exposed_ms = (float(figures[k].split()[0]) for k in ("step", "exposed"))
    return {"step_ms": step_ms, "exposed_ms": exposed_ms, "tokens": batch * SEQ_910B / (step_ms / 1e3),
            "cpu_s": child.cpu_s, "fits": "over_hbm" not in figures and "step failed" not in child.log}


def main_910b() -> None:
    """The 910B checks: published vs simulated tokens/s/p and their ratio, per preset."""
    print(f"910B checks: {LLAMA_CARD}; DryRun of rank 0 of {RANKS_910B}, full depth; ratio = simulated / "
          f"published throughput; load {os.getloadavg()[0]:.1f} (1 min)\n")
    print("| check | where | preset | published tokens/s/p | simulated tokens/s/p | ratio | step ms | "
          "exposed comm ms | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (label, published, where, *_) in CHECKS_910B.items():
        for preset in PRESETS_910B:
            r = check_910b(name, preset)
            fits = "" if r["fits"] else " (over HBM)"
            print(f"| {label} | {where} | {preset}{fits} | {published:g} | {r['tokens']:.0f} | "
                  f"{r['tokens'] / published:.3f} | {r['step_ms']:.1f} | {r['exposed_ms']:.1f} | {r['cpu_s']:.1f} |",
                  flush=True)


def print_kinds(names: list[str], kinds: dict[str, dict[str, float]]) -> None:
    """The networks' kernel ms per kind side by side (kinds by the first network's time), with each network's
    share of the first's per kind when there are several (docs/FIDELITY.md, "Cube tiling")."""
    first = kinds[names[0]]
    order = sorted({k for n in names for k in kinds[n]}, key=lambda k: -first.get(k, 0.0))
    ratios = [f"{n} / {names[0]}" for n in names[1:]]
    print("| kind | " + " | ".join(f"{n} ms" for n in names) + "".join(f" | {r}" for r in ratios) + " |")
    print("|---" * (1 + len(names) + len(ratios)) + "|")
    for kind in order + ["all kernels"]:
        ms = [1e3 * (sum(kinds[n].values()) if kind == "all kernels" else kinds[n].get(kind, 0.0)) for n in names]
        shares = "".join(f" | {m / ms[0]:.2f}" if ms[0] else " | " for m in ms[1:])
        print(f"| {kind} | " + " | ".join(f"{m:.2f}" for m in ms) + shares + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(NETWORKS), help="comma-separated network names")
    parser.add_argument("--no-clock", action="store_true", help="skip the ProA/PremiumA clock-scaling runs")
    parser.add_argument("--child")
    parser.add_argument("--presets", default=DEFAULT_PRESET)
    parser.add_argument("--cache")
    parser.add_argument("--spec", default="", help="what-if DeviceSpec overrides: field=value,... "
                        "(the published tables use none)")
    parser.add_argument("--910b", dest="b910", action="store_true", help="only the 910B checks (CHECKS_910B)")
    parser.add_argument("--kinds", action="store_true", help="instead of the tables: each network's kernel time "
                        "per kind (op type, its gradient, the optimizer) in one sunk step, side by side")
    args = parser.parse_args()
    if args.b910:
        main_910b()
        return
    if args.child:
        print(RESULT_TAG + json.dumps(child(args.child, args.presets.split(","), args.cache, parse_overrides(args.spec),
                                            args.kinds)), flush=True)
        return
    names = [n for n in args.only.split(",") if n]
    if args.kinds:
        with tempfile.TemporaryDirectory() as cache:
            print_kinds(names, {name: run_child(name, [DEFAULT_PRESET], cache, args.spec, kinds=True)
                                for name in names})
        return
    clock = ("Ascend910ProA", "Ascend910PremiumA")
    with tempfile.TemporaryDirectory() as cache:
        results, done = {}, {}
        for name in names:
            builder, batch = NETWORKS[name][1], NETWORKS[name][2]
            presets = [DEFAULT_PRESET] + (list(clock) if name in CLOCK_CALIBRATION and not args.no_clock else [])
            key = (builder, batch)
            if key not in done or set(presets) - set(done[key]):
                done[key] = run_child(name, presets, cache, args.spec)
            results[name] = done[key]
            unit, pub, sim, ratio = row(name, results[name][DEFAULT_PRESET])
            print(f"{name}: {unit} published {pub:g} simulated {figure(sim)} (device "
                  f"{figure(results[name][DEFAULT_PRESET] * 1e3)} ms/step) ratio {ratio:.3f}", file=sys.stderr)
    print("Simulated on the Ascend910A preset (1.0 GHz), DryRun, dataset sink mode; ratio = simulated / "
          "published throughput (within 0.85-1.15 is the goal; role aside: reported, not counted)\n")
    print("| network | batch | role | published | simulated | ratio | source |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        label, _, batch, _, _, source, role = NETWORKS[name]
        unit, pub, sim, ratio = row(name, results[name][DEFAULT_PRESET])
        print(f"| {label} | {batch} | {role} | {pub:g} {unit} | {figure(sim)} {unit} | {ratio:.3f} | {source} |")
    checks = [row(n, results[n][DEFAULT_PRESET])[3] for n in names if NETWORKS[n][6] == "check"]  # not "aside"
    if checks:
        print("\n" + summary(checks))
    scaled = [n for n in names if NETWORKS[n][6] == "calibration" and "Ascend910PremiumA" in results[n]]
    if scaled:
        print(f"\nClock scaling, Ascend910ProA (1100 MHz) -> Ascend910PremiumA (1220 MHz, CANN ini; MLPerf's system "
              f"files say 1.2 GHz): MLPerf x{MLPERF_CLOCK_SCALING:.3f} (goal within {CLOCK_TOLERANCE})\n")
        print("| network | ProA | PremiumA | throughput ratio | vs MLPerf |")
        print("|---|---|---|---|---|")
        for name in scaled:
            r = results[name]
            batch = NETWORKS[name][2]
            pro, prem = batch / r["Ascend910ProA"], batch / r["Ascend910PremiumA"]
            print(f"| {NETWORKS[name][0]} | {pro:.1f}/s | {prem:.1f}/s | x{prem / pro:.3f} | "
                  f"{prem / pro - MLPERF_CLOCK_SCALING:+.3f} |")


if __name__ == "__main__":
    main()
