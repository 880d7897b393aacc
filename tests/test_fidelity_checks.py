"""The fidelity bench's checks (bench/bench_fidelity.py, docs/FIDELITY.md): the host input pipeline's
floor on a sunk step, GetNext's fit on NCF, and the segmentation and recommender networks written for it
(bench/unet.py, bench/wide_deep.py) against their sizes counted by hand from the zoo's configs."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import bench_fidelity as bf  # noqa: E402
from test_abstract_weights import dry_run  # noqa: E402


def test_input_pipeline_floor_is_fitted_on_resnet18_and_caps_the_image_classifiers():
    # fitted on ResNet-18 ImageNet: 256 images in 110 ms, so its floored step is exactly the published one
    assert bf.row("resnet18", 0.040) == pytest.approx(("ms/step", 110.0, 110.0, 1.0))
    # SqueezeNet CIFAR-10, batch 32: floor 32 / (256 / 0.110) s = 13.75 ms above a 6.3 ms device step
    unit, pub, sim, ratio = bf.row("squeezenet_cifar", 0.0063)
    assert (sim, ratio) == pytest.approx((13.75, 16.7 / 13.75))
    # a device-bound classifier keeps its device step: VGG16 ImageNet 34.4 ms > 13.75 ms
    assert bf.row("vgg16_imagenet", 0.0344)[2] == pytest.approx(34.4)
    # networks fed by other pipelines are not floored (MNIST, text, Criteo, 572x572 medical images)
    for name in ("lenet", "bert_base", "wide_deep", "unet"):
        assert bf.input_floor(name) == 0.0
    # samples/s rows floor too: ResNet-50 at 2400 images/s on the device is capped at 2327
    assert bf.row("resnet50", 256 / 2400)[2] == pytest.approx(256 / 0.110)


def test_getnext_is_fitted_on_ncf(tmp_path):
    """GetNext's per-batch cost (device/cost.py GETNEXT_S) is fitted on NCF's published 0.575 ms/step, a
    calibration figure: the bench's steady NCF step (its step work is 0.28 ms) reproduces it."""
    step = bf.child("ncf", ["Ascend910A"], str(tmp_path))["Ascend910A"]
    assert bf.row("ncf", step)[3] == pytest.approx(1.0, abs=0.002)


@pytest.fixture(scope="module")
def mindspore_alias():
    from ascendemu.cli.run import install_mindspore_alias
    install_mindspore_alias()


def _size(params) -> int:
    import math
    return sum(math.prod(p.shape) for p in params)


def test_unet_has_the_zoo_unet_medical_parameters(mindspore_alias, tmp_path):
    import unet
    with dry_run(tmp_path):                # abstract weights: shapes without drawing 31M initial values
        net = unet.UNetMedical(1, 2)

    def double(i, o, m):               # two 3x3 convolutions with bias
        return 9 * i * m + m + 9 * m * o + o

    def up(i, o):                      # 2x2 transposed convolution to i/2 (nn.Conv2dTranspose: has_bias
        return i * (i // 2) * 4 + double(i, o, i // 2)     # False by default; the zoo passes only bias_init)

    expected = (double(1, 64, 64) + sum(double(i, 2 * i, 2 * i) for i in (64, 128, 256, 512))
                + sum(up(i, i // 2) for i in (1024, 512, 256, 128)) + 64 * 2 + 2)
    assert expected == 31_029_698
    assert _size(net.trainable_params()) == expected
    assert len(net.trainable_params()) == 42


def test_wide_deep_has_the_zoo_default_config_parameters(mindspore_alias, tmp_path):
    import wide_deep
    with dry_run(tmp_path):
        cell, inputs = wide_deep.build(8)
    dims = [39 * 80, 1024, 512, 256, 128, 1]
    dense = sum(a * b + b for a, b in zip(dims, dims[1:]))
    assert dense == 3_885_057
    # the zoo splits by 'wide' in the name once TrainStepWrap has adopted the network, which names every
    # parameter by its attribute path (MindSpore's rule, tests/test_cell_names.py): the bias made as
    # Parameter(name="Wide_b") is "network.network.wide_b" by then, so it goes to FTRL with the wide table
    assert _size(cell.weights_d) == 200_000 * 80 + dense      # the deep table and the MLP (Adam)
    assert _size(cell.weights_w) == 200_000 * 1 + 1           # the wide table and its bias (FTRL)
    assert [c.shape for c in inputs] == [(8, 39), (8, 39), (8, 1)]
