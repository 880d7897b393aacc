"""The fidelity bench's checks (bench/bench_fidelity.py, docs/FIDELITY.md): the data channel's floor under
a sunk step (fitted on ResNet-18), GetNext's fit on NCF, and the segmentation and recommender networks written for it
(bench/unet.py, bench/wide_deep.py) against their sizes counted by hand from the zoo's configs."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import bench_fidelity as bf  # noqa: E402
from test_abstract_weights import dry_run  # noqa: E402


def _channel_period(*column_bytes: int) -> float:
    """Seconds between batches of a sunk loop bound by its data queue's stream, by hand: each column's
    upload (2 us + its bytes at PCIe's 32 GB/s), the GetNext loop's StreamSwitch (1 us) and GetNext
    (554.2 us, fitted on NCF, and the batch's bytes at the data channel's 1.4733 GB/s, fitted on ResNet-18)."""
    total = sum(column_bytes)
    return sum(2e-6 + b / 32e9 for b in column_bytes) + 1e-6 + 554.2e-6 + total / 1.4733e9


def test_the_data_channel_is_fitted_on_resnet18_and_floors_every_sunk_step():
    from ascendemu.device.cost import GETNEXT_S, GetNext
    from ascendemu.device.spec import get_spec
    assert (get_spec().dataset_channel_bandwidth, GETNEXT_S) == (1.4733e9, 554.2e-6)
    # a 910B preset has the same channel (not measured there); the clock does not move it
    assert {get_spec(p).dataset_channel_bandwidth for p in ("Ascend910B2", "Ascend910PremiumA")} == {1.4733e9}
    # ResNet-18 ImageNet, batch 256 of float32 3x224x224 images and int32 labels: 110.0 ms, the published step
    images, labels = 256 * 3 * 224 * 224 * 4, 256 * 4
    assert _channel_period(images, labels) == pytest.approx(0.110, abs=5e-5)
    assert GetNext.time(get_spec(), images + labels) == pytest.approx(0.1046234 + 554.2e-6, rel=1e-6)
    # the same bytes per image floor the other image classifiers: SqueezeNet's 227x227 at batch 32 is 14.6 ms
    assert _channel_period(32 * 3 * 227 * 227 * 4, 32 * 4) == pytest.approx(14.608e-3, abs=1e-6)
    # LeNet's batch of 32 MNIST images resized to 32x32 float32 (131 KB): 0.65 ms, its kernels take 0.24
    assert _channel_period(32 * 32 * 32 * 4, 32 * 4) == pytest.approx(0.6524e-3, abs=1e-7)
    # the bench applies no floor of its own any more: a row is the simulated step as it is
    assert bf.row("squeezenet_cifar", 0.0063)[2] == pytest.approx(6.3)


def test_getnext_is_fitted_on_ncf(tmp_path):
    """GetNext's per-batch cost (device/cost.py GETNEXT_S) is fitted on NCF's published 0.575 ms/step, a
    calibration figure: the bench's steady NCF step (its step work is 0.28 ms) reproduces it."""
    step = bf.child("ncf", ["Ascend910A"], str(tmp_path))["Ascend910A"]
    assert bf.row("ncf", step)[3] == pytest.approx(1.0, abs=0.002)


def test_kernel_kinds_split_forward_gradient_and_optimizer():
    """`bench_fidelity.py --kinds` groups a step's kernels by op type, the backward graph's apart and the
    optimizer Cell's as one kind (span names as a BERT-base trace writes them); a convolution's kind names its
    dilated kernel, so the 1x1 products stand apart from the img2col-fed ones."""
    from ascendemu.device.cost import Gemm, KernelCost, Window

    def span(name: str, op: str) -> dict:
        return {"name": name, "args": {"op": {"type": op}}}
    none = KernelCost()
    attention = "Default/network-BertPreTraining/3-EncoderLayer/attention-SelfAttention"
    assert bf.kernel_kind(span(f"{attention}/query-Dense/MatMul[MatMul-op1,BiasAdd-op2]", "MatMul"), none) == "MatMul"
    assert bf.kernel_kind(span(f"Gradients/{attention}/gradTranspose/Transpose-op7", "Transpose"), none) == \
        "grad Transpose"
    assert bf.kernel_kind(span("Default/optimizer-Lamb/FusedElemwise[Mul-op3,Sub-op4]", "FusedElemwise"), none) == \
        "optimizer"
    assert bf.kernel_kind({"name": "Default/Cast-op9", "args": {"kernel": "cast"}}, none) == "cast"
    conv = lambda window: KernelCost(gemm=Gemm(1, 64, 16, 144, 1, 1, conv=True, window=window))  # noqa: E731
    grad = span("Gradients/Default/conv1-Conv2d/gradConv2D/Conv2DBackpropFilter-op3", "Conv2DBackpropFilter")
    assert bf.kernel_kind(grad, conv(Window(160, 1, 1, on_b=True, width=8, kw=7))) == "grad Conv2DBackpropFilter 1x7"
    # a window from a trace before the kernel's width: read as one column wide
    assert bf.kernel_kind(span("Default/conv1-Conv2d/Conv2D-op2", "Conv2D"), conv(Window(160, 3, 1))) == "Conv2D 3x1"


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


def test_910b_presets_match_cann_platform_configs():
    """The 910B presets' facts as CANN's platform_config/Ascend910B<n>.ini publish them (device/spec.py), and
    what follows from them by hand: peak fp16 FLOP/s and the 176 x 176 cube tile of a 128 KiB L0C."""
    from ascendemu.device.cost import cube_tile
    from ascendemu.device.spec import get_spec
    # cube_core_cnt, vector_core_cnt, cube_freq MHz (B3: npu-smi's Aicore Freq; B4: the preset's own, no
    # published ini read), memory_size, l2_size
    ini = {
        "Ascend910B1": (24, 48, 1850, 68719476736, 201326592),
        "Ascend910B2": (24, 48, 1800, 68719476736, 201326592),
        "Ascend910B3": (20, 40, 1800, 68719476736, 201326592),
        "Ascend910B4": (20, 40, 1500, 34359738368, 100663296),
    }
    for preset, (cube, vector, mhz, memory, l2) in ini.items():
        s = get_spec(preset)
        facts = (s.ai_cores, s.vector_cores, s.clock_hz, s.hbm_bytes, s.l2_bytes)
        assert facts == (cube, vector, mhz * 1e6, memory, l2)
        # [AICoreSpec] l0_c_size, l1_size, ub_size, vec_calc_size; [DtypeMKN] Default=16,16,16
        assert (s.l0c_bytes, s.l1_bytes, s.ub_bytes, s.vector_lanes_fp16, s.cube_macs_per_cycle) == (
            131072, 524288, 196608, 128, 16 * 16 * 16)
        assert s.soc_version == preset
    # 24 cores x 1.8 GHz x 4096 MACs x 2 FLOP = 353.9 TFLOPS; the B3's 20 cores 294.9
    assert get_spec("Ascend910B2").peak_cube_flops == pytest.approx(353.894e12, rel=1e-5)
    assert get_spec("Ascend910B3").peak_cube_flops == pytest.approx(294.912e12, rel=1e-5)
    # fp32 accumulators of a t x t tile in 128 KiB: t <= 181, the largest multiple of 16 is 176 (910A: 256)
    assert (cube_tile(get_spec("Ascend910B2")), cube_tile(get_spec())) == (176, 256)
    # the published figures the bench's --910b checks compare with (MindFormers' Llama 2 model card)
    assert {n: c[1] for n, c in bf.CHECKS_910B.items()} == {"llama2_7b": 3484.0, "llama2_13b": 1911.0}


def test_l2_hits_move_at_the_ini_l2_rate_on_910b():
    """Bytes a kernel reads from L2 (its second pass, when it fits) cross the core's port at the 910B ini's
    l2_read_rate / ddr_rate times the port's rate (110 / 32), the rest at the port's; on the 910A (ratio 1)
    every byte at the port's, as before. By hand: 64 MiB in one pass plus a 32 MiB second pass over 24 cores."""
    from ascendemu.device.cost import KernelCost, breakdown
    from ascendemu.device.spec import get_spec
    mib = 1 << 20
    cost = KernelCost(bytes=64 * mib, reread=32 * mib)
    b2 = get_spec("Ascend910B2")
    port = 31.5 * 1.8e9                                   # bytes/s per core: the fitted port at 1.8 GHz
    assert b2.l2_bytes_per_cycle == pytest.approx(31.5 * 110 / 32)
    assert breakdown(b2, cost).port == pytest.approx((64 * mib / port + 32 * mib / (port * 110 / 32)) / 24)
    assert breakdown(get_spec(), cost).port == pytest.approx(96 * mib / (31.5e9 * 32))
    # a second pass larger than L2 comes from HBM again, at the port's rate
    big = KernelCost(bytes=512 * mib, reread=256 * mib)
    assert breakdown(b2, big).port == pytest.approx(768 * mib / port / 24)
