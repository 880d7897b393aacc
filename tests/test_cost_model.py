"""The cost model's terms (device/cost.py) against hand-computed values, and one fidelity check: a
BERT-large step extrapolated from full-size 1- and 2-layer DryRun steps against the published figure."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ascendemu.device.cost import (DMA_SETUP_BYTES, LOAD2D_FIXED_CYCLES, LOAD3D_FIXED_CYCLES, Gemm, KernelCost, Window,
                                   breakdown, cube_tile, fmap_rereads, fractal_pad, gemm_pipes, gemm_tiling,
                                   kernel_time, operand_rereads, split_tiling, axis_parts, load3d_rate, body_time)
from ascendemu.device.spec import get_spec

SPEC = get_spec()
NS = 1e-9                      # one cycle at the 910A's 1 GHz
MiB = 1 << 20


def test_fractal_padding_and_tile_edge():
    assert [fractal_pad(n) for n in (1, 15, 16, 17, 1000, 1024)] == [16, 16, 16, 32, 1008, 1024]
    assert cube_tile(SPEC) == 256                       # 256 KiB L0C / 4 B fp32 accumulators = 256 x 256
    assert cube_tile(get_spec("Ascend910B1")) == 176    # 128 KiB: isqrt(32768) = 181 -> a multiple of 16


def test_cube_time_pads_to_the_fractal_and_counts_waves():
    # 1000^3 with operands too small to load the port, so the tiler minimises the cube's work per core: padded
    # to 1008 (63 fractals a side); 4 x 4 tiles of 256 would leave half the cores idle; the least work per core
    # is a block of 16 x 8 fractals (M in 4 parts, N in 8: 32 tiles of 256 x 128 over K = 1008, one wave; its
    # mirror image, 8 x 4 parts, comes later as M's parts count up, and 2 x 16 parts, 256 x 64 in two waves,
    # is the same work in more tiles)
    g = Gemm(1, 1000, 1000, 1000, 1, 1)
    t = gemm_tiling(SPEC, g)
    assert (t.tm, t.tn, t.tk, t.tiles_m, t.tiles_n, t.units, t.waves) == (256, 128, 1008, 4, 8, 32, 1)
    cube = breakdown(SPEC, KernelCost(cube_flops=2 * 1000 ** 3, dtype="float16", gemm=g)).cube
    assert cube == pytest.approx(256 * 128 * 1008 / 4096 * NS / SPEC.cube_efficiency)
    padded = Gemm(1, 1008, 1008, 1008, 1, 1)
    assert breakdown(SPEC, KernelCost(gemm=padded)).cube == pytest.approx(cube)    # the padding is paid
    # a thin K: 17 deep costs what 32 does
    thin = [breakdown(SPEC, KernelCost(gemm=Gemm(1, 4096, 4096, k, 1, 1))).cube for k in (17, 32)]
    assert thin[0] == pytest.approx(thin[1])
    # 64 tiles of 256 x 256 on 32 cores: two waves
    g = Gemm(1, 256 * 64, 256, 64, 1, 1)
    assert gemm_tiling(SPEC, g).waves == 2
    assert breakdown(SPEC, KernelCost(gemm=g)).cube == pytest.approx(2 * 256 * 256 * 64 / 4096 * NS /
                                                                     SPEC.cube_efficiency)


def test_tiles_split_the_output_evenly_over_the_cores():
    # the ways to cut 48 fractals (768) into at most 32 equal parts: {fractals a part: parts}; 9 and 11
    # fractals a part need as many parts as 8 and 10 (6 and 5), so they are not ways of their own
    assert axis_parts(48, 32) == {48: 1, 24: 2, 16: 3, 12: 4, 10: 5, 8: 6, 7: 7, 6: 8, 5: 10, 4: 12, 3: 16, 2: 24}
    # BERT-base's weight gradient dW = x^T dy: 768 x 768 over K = 32768 tokens, port-bound (no 768-long K
    # strip of either operand fits half of L1). Halving 256-squares until they cover the cores gave 36 tiles of
    # 128 x 128, two waves, the second with 4 tiles. One wave of tiles_m x tiles_n <= 32 tiles reads A
    # tiles_n times and B tiles_m times, spread over tiles_m x tiles_n cores: 5 x 6 (1/5 + 1/6 = 0.367) beats
    # 4 x 8 (0.375) and 3 x 10 (0.433); 5 x 6 tiles of 768 are 160 x 128 (its mirror image comes later).
    a = b = 768 * 32768 * 2
    out = 768 * 768 * 2
    cost = KernelCost(cube_flops=2 * 768 * 768 * 32768, bytes=a + b + out, gemm=Gemm(1, 768, 768, 32768, a, b))
    t = gemm_tiling(SPEC, cost.gemm, cost)
    assert (t.tm, t.tn, t.tiles_m, t.tiles_n, t.units, t.waves) == (160, 128, 5, 6, 30, 1)
    port_rate = SPEC.core_port_bytes_per_cycle / NS
    port = breakdown(SPEC, cost).port
    assert port == pytest.approx((a + b + out + 5 * a + 4 * b) / 30 / port_rate)
    # against the two-wave squares: 2 waves x (one pass + 5 more of each operand) / 36 tiles
    squares = gemm_pipes(SPEC, cost, split_tiling(SPEC, cost.gemm, 128, 128)).port
    assert squares == pytest.approx(2 * (a + b + out + 5 * a + 5 * b) / 36 / port_rate)
    assert port / squares == pytest.approx((11 * a + out) / 30 / (2 * (12 * a + out) / 36))      # 0.550


def test_convolutions_run_at_their_own_cube_efficiency():
    # the 64-tile product above as a convolution, on a spec whose img2col-fed cube sustains 0.4 of peak:
    # 2 waves x 256 x 256 x 64 MACs / 4096 per cycle / 0.4; a MatMul of the same shape keeps cube_efficiency
    spec = get_spec(conv_cube_efficiency=0.4)
    conv, matmul = Gemm(1, 256 * 64, 256, 64, 1, 1, conv=True), Gemm(1, 256 * 64, 256, 64, 1, 1)
    assert breakdown(spec, KernelCost(gemm=conv)).cube == pytest.approx(2 * 256 * 256 * 64 / 4096 * NS / 0.4)
    assert breakdown(spec, KernelCost(gemm=matmul)).cube == pytest.approx(2 * 256 * 256 * 64 / 4096 * NS /
                                                                          spec.cube_efficiency)
    # the trace form: a MatMul's gemm is the 7 numbers older traces hold; a convolution's appends its flag
    assert matmul.to_json() == [1, 16384, 256, 64, 1, 1, 0] and conv.to_json() == [1, 16384, 256, 64, 1, 1, 0, 1]
    assert Gemm.from_json(conv.to_json()) == conv and Gemm.from_json(matmul.to_json()) == matmul


def test_conv_kernels_declare_a_conv_gemm():
    from ascendemu.kernels.ops.conv import implicit_gemm
    from ascendemu.kernels.signature import TensorDesc
    g = dict(group=1, n=2, c=8, h=8, w=8, oc=16, oh=8, ow=8, kh=3, kw=3, dh=1, dw=1, sh=1, sw=1, pl=1, pr=1)
    inputs = (TensorDesc((2, 8, 8, 8), "float16"), TensorDesc((16, 8, 3, 3), "float16"))
    for op in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"):
        assert implicit_gemm(op, g, inputs).conv
    # the feature map's rows as load3d reads them: x padded to 10 wide x C0 16 (8 channels); the filter's x
    # is its B operand; the backprop-input's dout 8 + 2 x 2 wide x 16 (its 16 channels), stride 1; each with the
    # width its im2col rows walk (the output's 8, dx's 8) and the kernel's width
    assert implicit_gemm("Conv2D", g, inputs).window == Window(10 * 16, 3, 1, width=8, kw=3)
    assert implicit_gemm("Conv2DBackpropFilter", g, inputs).window == Window(10 * 16, 3, 1, on_b=True, width=8, kw=3)
    assert implicit_gemm("Conv2DBackpropInput", g, inputs).window == Window(12 * 16, 3, 1, width=8, kw=3)
    conv = implicit_gemm("Conv2D", g, inputs)
    assert Gemm.from_json(conv.to_json()) == conv
    assert conv.to_json()[-6:] == [160, 3, 1, 0, 8, 3]
    # a trace written before the kernel's width reads with kw 0, one before the width with width 0 too
    # (unknown: load3d priced without row switches)
    assert Gemm.from_json(conv.to_json()[:-1]).window == Window(160, 3, 1, width=8)
    assert Gemm.from_json(conv.to_json()[:-2]).window == Window(160, 3, 1)


def test_only_maps_img2col_expands_run_at_the_convolution_efficiency():
    # load3d (img2col) feeds every convolution but a 1x1 at stride 1, whose NC1HWC0 map is its own fractal
    # matrix (load2d, as a MatMul's operands): a 1x7 kernel (one row, seven taps) and a 1x1 at stride 2 are
    # img2col's, and a window from a trace before the kernel's width (kw 0) reads as the 1x1 it was taken for
    from ascendemu.device.cost import fed_by_img2col
    assert not Window(64, 1, 1, kw=1).img2col and not Window(64, 1, 1).img2col
    assert Window(64, 1, 1, kw=7).img2col and Window(64, 7, 1, kw=1).img2col and Window(64, 1, 2, kw=1).img2col
    spec = get_spec(conv_cube_efficiency=0.4)
    shape = (1, 256 * 64, 256, 64, 1, 1)
    one = Gemm(*shape, conv=True, window=Window(64, 1, 1, kw=1))
    row = Gemm(*shape, conv=True, window=Window(64, 1, 1, kw=7))
    assert not fed_by_img2col(one) and fed_by_img2col(row) and fed_by_img2col(Gemm(*shape, conv=True))
    # the same 64 tiles of 256 x 256 x 64 as above: 2 waves x 256 x 256 x 64 MACs / 4096 per cycle / efficiency
    cycles = 2 * 256 * 256 * 64 / 4096 * NS
    assert breakdown(spec, KernelCost(gemm=one)).cube == pytest.approx(cycles / spec.cube_efficiency)
    assert breakdown(spec, KernelCost(gemm=row)).cube == pytest.approx(cycles / 0.4)


def test_grouped_convolutions_share_products_as_cann_lays_them_out():
    from ascendemu.kernels.ops.conv import cube_groups, implicit_gemm
    from ascendemu.kernels.signature import TensorDesc

    def geo(c, oc, group):
        return dict(group=group, n=32, c=c, h=40, w=40, oc=oc, oh=40, ow=40, kh=3, kw=3, dh=1, dw=1, sh=1, sw=1,
                    pl=1, pr=1)
    # CANN's _calculate_group: mag = min(lcm(lcm(cin_g, 16) / cin_g, lcm(cout_g, 16) / cout_g), groups) groups share
    # a product. Depthwise (1 channel a group): 16 groups a product, 512 channels in 32 products of 16 x 16
    assert cube_groups(geo(512, 512, 512)) == (32, 16, 16)
    assert cube_groups(geo(8, 8, 8)) == (1, 16, 16)                     # fewer groups than 16: all in one
    assert cube_groups(geo(128, 128, 32)) == (8, 16, 16)                # 4 channels a group (ResNeXt-like): 4
    assert cube_groups(geo(64, 64, 2)) == (2, 32, 32)                   # 32 a group fill C0 alone
    assert cube_groups(geo(64, 128, 1)) == (1, 64, 128)                 # no groups: the channels as they are
    # SSD-MobileNetV1's 512-channel depthwise 3x3 at 40 x 40: (32 x 40 x 40) x 16 over 16 x 9, 32 products (was
    # 512 products of the same shape: 16x the cube's work and MTE1's loads)
    x, w = TensorDesc((32, 512, 40, 40), "float32"), TensorDesc((512, 1, 3, 3), "float32")
    gm = implicit_gemm("Conv2D", geo(512, 512, 512), (x, w))
    assert (gm.batch, gm.m, gm.n, gm.k) == (32, 32 * 40 * 40, 16, 144)
    assert gm.window == Window(42 * 16, 3, 1, width=40, kw=3)


def test_feature_map_bands_overlap_by_the_kernel_height():
    # a U-Net-sized map: 570 wide x 64 channels fp16 = 72,960 B a row; a quarter of L1 (256 KiB) holds 3
    # rows, so each band is one output row and a 3x3 convolution reads every input row 3 times: 2 extra
    a = 16 * 64 * 570 * 570 * 2
    big = Gemm(1, 16 * 568 * 568, 64, 576, a, 64 * 576 * 2, conv=True, window=Window(570 * 64, 3, 1))
    assert fmap_rereads(SPEC, big, 2) == 2 * a
    # a ResNet-sized one: 58 x 64 x 2 = 7,424 B a row: 35 rows fit, bands of 33 output rows share 2 rows
    small = Gemm(1, 256 * 56 * 56, 64, 576, 256 * 64 * 58 * 58 * 2, 1, conv=True, window=Window(58 * 64, 3, 1))
    assert fmap_rereads(SPEC, small, 2) == small.a_bytes * 2 // 33
    # stride 2 (rows 14,848 B: 17 fit, bands of 8 output rows = 17 input rows for 16 new ones): 1/16 again
    s2 = Gemm(1, 256 * 28 * 28, 128, 1152, 256 * 128 * 58 * 58 * 2, 1, conv=True, window=Window(58 * 128, 3, 2))
    assert fmap_rereads(SPEC, s2, 2) == s2.a_bytes // 16
    # 1x1 kernels and MatMuls read nothing twice; the filter's feature map is its B operand
    assert fmap_rereads(SPEC, Gemm(1, 8, 8, 16, 1, 1, conv=True, window=Window(64, 1, 1)), 2) == 0
    assert fmap_rereads(SPEC, Gemm(1, 8, 8, 16, 1, 1), 2) == 0
    on_b = Gemm(1, 64, 576, 16 * 568 * 568, 7, a, split_k=True, conv=True, window=Window(570 * 64, 3, 1, on_b=True))
    assert fmap_rereads(SPEC, on_b, 2) == 2 * a
    # the extra rows cross the port: on one tiling the port term grows by them over the cores' units
    cost = KernelCost(bytes=a, gemm=big)
    plain = KernelCost(bytes=a, gemm=Gemm(*big.to_json()[:6], conv=True))
    t = gemm_tiling(SPEC, big, cost)
    port_rate = SPEC.core_port_bytes_per_cycle / NS
    grown = gemm_pipes(SPEC, cost, t).port - gemm_pipes(SPEC, plain, t).port
    assert grown == pytest.approx(t.waves * 2 * a / t.units / port_rate)
    assert gemm_pipes(SPEC, cost, t).hbm == gemm_pipes(SPEC, plain, t).hbm          # neighbouring bands: L2 hits


def test_load3d_rates_follow_cann_s_table():
    # GetLoad3dThroughput: into L0A 512 / (2 + row switches) at stride 1, 512 / (2 x stride + switches) at 2, 4, 8,
    # 32 at any other stride; into L0B two cycles more per 512 B, 512 / 18 at other strides. Row switches in a
    # 16-row fractal block: 16 // width, or 15 // width when width divides 16
    assert load3d_rate(1, 224, True) == 256 and load3d_rate(1, 0, True) == 256         # no switch
    assert load3d_rate(1, 14, True) == pytest.approx(512 / 3)                           # one switch
    assert load3d_rate(1, 7, True) == 128 and load3d_rate(1, 8, True) == pytest.approx(512 / 3)
    assert load3d_rate(2, 28, True) == 128 and load3d_rate(2, 7, True) == pytest.approx(512 / 6)
    assert load3d_rate(3, 28, True) == 32 and load3d_rate(3, 28, False) == pytest.approx(512 / 18)
    assert load3d_rate(1, 56, False) == 128 and load3d_rate(4, 56, False) == pytest.approx(512 / 10)


def test_mte1_feeds_the_cube_one_k_step_at_a_time():
    # A MatMul, 12288 x 1024 over K = 1024 (BERT-large's attention output projection): 48 x 4 tiles of 256 x 256
    # in 6 waves. A k-step's block fills half of the 64 KiB L0A (256 x 64 fp16 = 32 KiB) and of L0B: kl0 = 64, 16
    # k-steps; A by load2d into L0A at 512 B/cycle, B into L0B at 256 (the 910A's k1980 bandwidths), 20 cycles per
    # instruction, one per operand per k-step
    m, n, k = 12288, 1024, 1024
    cost = KernelCost(cube_flops=2 * m * n * k, bytes=2 * (m * k + k * n + m * n),
                      gemm=Gemm(1, m, n, k, 2 * m * k, 2 * k * n))
    t = gemm_tiling(SPEC, cost.gemm, cost)
    assert (t.tm, t.tn, t.tk, t.waves) == (256, 256, 1024, 6)
    per_tile = 16 * (20 + 20) + 256 * 1024 * 2 / 512 + 1024 * 256 * 2 / 256             # 640 + 1024 + 2048
    b = breakdown(SPEC, cost)
    assert b.mte1 == pytest.approx(6 * per_tile * NS)                                     # 22.3 us
    assert b.mte1 < b.cube < b.body                                                       # not what binds
    # A convolution: VGG16's 512-channel 3x3 at 14 x 14, batch 32: (32 x 14 x 14) x 512 over 512 x 9 = 4608. x
    # goes into L0A by load3d (stride 1, 14 positions a row: one row switch per 16-row block, 512 / 3 B/cycle,
    # 42 cycles), the weights by load2d into L0B. The tiler's pick, 256 x 112 tiles in 4 waves: kl0 = 64 (L0A's
    # half holds 256 x 64; L0B's 144 x 112), 72 k-steps
    n_, c, h = 32, 512, 14
    x, w, y = n_ * c * h * h * 2, c * c * 9 * 2, n_ * c * h * h * 2
    conv = Gemm(1, n_ * h * h, c, c * 9, x, w, conv=True, window=Window((h + 2) * c, 3, 1, width=h))
    cost = KernelCost(cube_flops=2 * n_ * h * h * c * c * 9, bytes=x + w + y, gemm=conv)
    t = gemm_tiling(SPEC, conv, cost)
    assert (t.tm, t.tn, t.tk, t.waves) == (256, 112, 4608, 4)
    per_tile = 72 * (42 + 20) + 256 * 4608 * 2 / (512 / 3) + 4608 * 112 * 2 / 256          # 4464 + 13824 + 4032
    assert breakdown(SPEC, cost).mte1 == pytest.approx(4 * per_tile * NS)                  # 89.3 us
    # the narrow tiles the tiler took before this term, 256 x 32 in 13 waves: per k-step (kl0 64) 32 KiB by
    # load3d (192 + 42 cycles) and 4 KiB by load2d (16 + 20) against 256 x 32 x 64 / 4096 / 0.85 cube cycles
    narrow = gemm_pipes(SPEC, cost, split_tiling(SPEC, conv, 256, 32))
    assert narrow.mte1 == pytest.approx(13 * 72 * (192 + 42 + 16 + 20) * NS)
    assert narrow.cube == pytest.approx(13 * 72 * 256 * 32 * 64 / 4096 / SPEC.cube_efficiency * NS)
    assert narrow.body == narrow.mte1                                                     # 1.79x the cube's
    assert LOAD3D_FIXED_CYCLES == 42 and LOAD2D_FIXED_CYCLES == 20


def test_a_float32_product_runs_in_float16_between_casts_on_the_910a():
    """MindSpore's default precision mode on the Atlas training series (allow_fp32_to_fp16): a float32 MatMul is a
    float16 product (operands and output at half the bytes) with a Cast before each operand and one after, each a
    task streaming 4 + 2 bytes per element through the ports (the 32 ports' 1008 B/ns bind before HBM's 1200); the
    910B presets keep float32 (must_keep_origin_dtype)."""
    m, n, k = 16384, 1024, 1024
    a, b, out = 4 * m * k, 4 * k * n, 4 * m * n
    g = Gemm(1, m, n, k, a, b)
    fp32 = KernelCost(cube_flops=2 * m * n * k, bytes=a + b + out, dtype="float32", gemm=g)
    fp16 = KernelCost(cube_flops=2 * m * n * k, bytes=(a + b + out) // 2, dtype="float16",
                      gemm=Gemm(1, m, n, k, a // 2, b // 2))
    ports = 32 * SPEC.core_port_bytes_per_cycle / NS                  # bytes/s through all ports
    casts = sum(SPEC.task_overhead_s + 1.5 * nbytes / ports for nbytes in (a, b, out))
    assert body_time(SPEC, fp32) == pytest.approx(breakdown(SPEC, fp16).body + casts)
    b3 = get_spec("Ascend910B3")
    assert body_time(b3, fp32) == breakdown(b3, fp32).body


def test_scattered_transfers_pay_the_dma_setup():
    # 624,000 rows of 80 fp32 (320 B) gathered: each row a transfer; 32 cores share them
    port_rate = SPEC.core_port_bytes_per_cycle / NS
    rows, row = 624_000, 320
    cost = KernelCost(bytes=2 * rows * row, dtype="float32", transfers=rows)
    assert DMA_SETUP_BYTES == 2048
    assert breakdown(SPEC, cost).port == pytest.approx((2 * rows * row + rows * 2048) / (32 * port_rate))
    assert breakdown(SPEC, cost).hbm == pytest.approx(2 * rows * row / SPEC.hbm_bandwidth)
    assert KernelCost.from_list(cost.to_list()) == cost and KernelCost.from_json(cost.to_json()) == cost
    assert len(KernelCost(bytes=1).to_list()) == 6                      # older traces' form when there are none


def test_gather_and_scatter_add_declare_one_transfer_per_row():
    from ascendemu.kernels.ops.misc import plan_gather, plan_segment_sum
    from ascendemu.kernels.signature import OpSignature, TensorDesc
    table, ids = TensorDesc((1000, 80), "float32"), TensorDesc((16, 39), "int32")
    out = TensorDesc((16, 39, 80), "float32")
    plan = plan_gather(OpSignature("Gather", (table, ids), (("axis", 0),)), (out,))
    assert plan.cost.transfers == 16 * 39
    rows = TensorDesc((624, 80), "float32")
    flat = TensorDesc((624,), "int32")
    plan = plan_segment_sum(OpSignature("UnsortedSegmentSum", (rows, flat), (("num_segments", 1000),)),
                            (TensorDesc((1000, 80), "float32"),))
    # each row is added to its segment atomically (one transfer per row): the rows are read and written
    assert plan.cost.transfers == 624
    assert plan.cost.bytes == 2 * rows.nbytes + plan.block_dim * flat.nbytes + 1000 * 80 * 4


def test_split_k_spreads_a_few_tiles_over_the_idle_cores():
    # Conv2DBackpropFilter-like: a 64 x 576 filter over K = 50176 positions in tiles of 64 x 192: 1 x 3 tiles,
    # K split 10 ways over the idle cores
    g = Gemm(1, 64, 576, 50176, 1, 1, split_k=True)
    t = split_tiling(SPEC, g, 64, 192)
    assert (t.tiles_m, t.tiles_n, t.splits, t.units) == (1, 3, 10, 30)
    assert t.tk == fractal_pad(-(-50176 // 10))
    # a product that may not split K keeps it whole
    t = split_tiling(SPEC, Gemm(1, 64, 576, 50176, 1, 1), 64, 192)
    assert (t.splits, t.units, t.tk) == (1, 3, 50176)


def test_operand_rereads_l1_strips():
    # K = 512: a 256 x 512 fp16 strip (256 KiB) fits half of L1, so a core keeps A along its row of tiles
    g = Gemm(1, 8192, 1024, 512, 8192 * 512 * 2, 512 * 1024 * 2)
    t = split_tiling(SPEC, g, 256, 256)
    assert (t.tiles_m, t.tiles_n, t.waves) == (32, 4, 4)
    assert operand_rereads(SPEC, g, t, 2) == (0, g.b_bytes * 31)           # A once; B once per row of tiles
    # K = 2048: 1 MiB strips fit no half of L1: A is read once per column of tiles, B once per row
    g = Gemm(1, 8192, 1024, 2048, 8192 * 2048 * 2, 2048 * 1024 * 2)
    t = split_tiling(SPEC, g, 256, 256)
    assert operand_rereads(SPEC, g, t, 2) == (g.a_bytes * 3, g.b_bytes * 31)


def test_rereads_hit_l2_when_the_operand_fits():
    def hbm(n: int, k: int) -> tuple[float, KernelCost]:
        g = Gemm(1, 4096, n, k, 4096 * k * 2, k * n * 2)
        cost = KernelCost(bytes=g.a_bytes + g.b_bytes + 4096 * n * 2, gemm=g)
        return breakdown(SPEC, cost).hbm, cost

    # 4096 x 4096 fp16 operands are 32 MiB: they fit L2, so their re-reads stay on chip
    t, cost = hbm(4096, 4096)
    assert cost.gemm.a_bytes == 32 * MiB and t == pytest.approx(cost.bytes / SPEC.hbm_bandwidth)
    # 64 MiB operands do not: 16 x 16 tiles, each operand read 15 more times from HBM
    t, cost = hbm(4096, 8192)
    assert cost.gemm.a_bytes == 64 * MiB
    assert t == pytest.approx((cost.bytes + 15 * cost.gemm.a_bytes + 15 * cost.gemm.b_bytes) / SPEC.hbm_bandwidth)
    # a kernel's declared second pass hits L2 the same way
    small, large = (KernelCost(vector_ops=1, bytes=2 * n, reread=n) for n in (8 * MiB, 64 * MiB))
    assert breakdown(SPEC, small).hbm == pytest.approx(16 * MiB / SPEC.hbm_bandwidth)
    assert breakdown(SPEC, large).hbm == pytest.approx(192 * MiB / SPEC.hbm_bandwidth)


def test_vector_kernels_spread_in_32_byte_blocks():
    port_rate = SPEC.core_port_bytes_per_cycle / NS
    tiny = KernelCost(vector_ops=48, bytes=96, dtype="float32")             # 3 blocks of 32 B: 3 cores
    b = breakdown(SPEC, tiny)
    assert b.cores == 3 and b.port == pytest.approx(96 / (3 * port_rate))
    assert b.vector == pytest.approx(48 * 2 / (3 * 128 / NS))               # fp32: 64 lanes
    big = KernelCost(vector_ops=10 ** 8, bytes=4 * 10 ** 8, dtype="float16")
    b = breakdown(SPEC, big)
    assert b.cores == 32 and b.body == pytest.approx(max(4e8 / (32 * port_rate), 4e8 / SPEC.hbm_bandwidth))
    # a launch: task overhead, then the body in waves of blocks, each with its start cost
    assert kernel_time(SPEC, big, 64) == pytest.approx(2e-6 + b.body + 2 * 1e-6)


def test_bert_large_extrapolated_from_one_and_two_layers_matches_the_published_throughput(tmp_path):
    """Fidelity in the suite: BERT-large's step is its embeddings and heads plus 24 identical layers,
    so two cheap DryRun steps at full size (batch 96, seq 128; 1 and 2 layers) give the 24-layer step.
    It must be within 15% of the published 269 sequences/s (bench/bench_fidelity.py runs the whole
    network and the other figures)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import bench_fidelity

    # one step each: the difference cancels the (small) input upload
    from ascendemu.frontend.common.initializer import Zero

    one, two = (bench_fidelity.steady_step(lambda n=n: bench_fidelity._bert(96, layers=n, init=Zero()),
                                           "Ascend910A", str(tmp_path), sinks=(1,)) for n in (1, 2))
    layer = two - one
    assert layer > 0
    throughput = 96 / (one + 23 * layer)
    assert 0.85 < throughput / 269.0 < 1.15, throughput
