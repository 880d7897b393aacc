"""Device specifications as data: the Ascend910A preset (default) and the 910B variants.

Numbers come from the CANN platform configs and vendor figures collected in REFERENCE.md. A user
overrides any field with ``get_spec("Ascend910A", hbm_bytes=16 << 30)``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ascendemu.errors import InvalidParamError
from ascendemu.units import GiB, KiB, MiB

# The SoC the 910A presets model (CANN's soc_version); the default preset is the plain chip, named after it.
SOC_ASCEND910A = "Ascend910A"
DEFAULT_PRESET = SOC_ASCEND910A


@dataclass(frozen=True)
class DeviceSpec:
    name: str = DEFAULT_PRESET
    ai_cores: int = 32
    vector_cores: int = 32          # 910A: cube and vector share one core; 910B splits them
    clock_hz: float = 1.0e9
    cube_macs_per_cycle: int = 16 * 16 * 16      # fp16 MACs per core per cycle
    vector_lanes_fp16: int = 128                 # fp16 lanes per core per cycle
    l0a_bytes: int = 64 * KiB
    l0b_bytes: int = 64 * KiB
    l0c_bytes: int = 256 * KiB
    l1_bytes: int = 1 * MiB
    # MTE1's Load2D from L1 into L0A / L0B (a MatMul's fractals, a convolution's weights), bytes per core cycle:
    # CANN's matmul tiling cost model, k1980Mte1L0aBandWidth 512 and k1980Mte1L0bBandWidth 256 (1980: the
    # 910A); the 910B presets take its 1971 values, 256 and 128 (cann-ops op_tiling/cube constants_define.h).
    # Load3D (img2col) has its own rates (device/cost.py LOAD3D_BYTES; docs/FIDELITY.md "The cube's feed").
    load2d_l0a_bytes_per_cycle: int = 512
    load2d_l0b_bytes_per_cycle: int = 256
    ub_bytes: int = 256 * KiB
    l2_bytes: int = 32 * MiB
    aicpu_cores: int = 4
    hbm_bytes: int = 32 * GiB
    hbm_bandwidth: float = 1.2e12                # bytes/s
    # Calibrated once (docs/FIDELITY.md) from ResNet-50 and BERT-large training and MLPerf's clock
    # scaling, never per network: bytes a core moves per core cycle through its port to L2/HBM (on the
    # core clock, so on-chip traffic scales with it; 32 cores x 31.5 B x 1.22 GHz stays under HBM's
    # 1.2 TB/s, which MLPerf's x1.10 for x1.09 clock requires), and the share of the cube's peak it
    # sustains when fed (the two networks constrain it weakly: +-1% over 0.8-0.95).
    core_port_bytes_per_cycle: float = 31.5
    cube_efficiency: float = 0.85
    # How much faster a core reads from L2 than through its port to HBM, when the data is in L2 (an
    # operand's re-reads, a kernel's second pass, a convolution's shared feature-map rows): the platform
    # config's [AICoreMemoryRates] l2_read_rate / ddr_rate. 1.0 on the 910A, whose fitted port carries every
    # byte (no 910A ini at hand); the 910B presets' ini ratio (below; docs/FIDELITY.md, "910B checks").
    l2_port_ratio: float = 1.0
    # The share of the cube's peak a convolution sustains when load3d's img2col expands its feature map on the
    # way to the cube (every kernel but 1x1 at stride 1, which goes by load2d as a MatMul's operands do). Not a
    # fitted constant of its own, a what-if: the calibration pins it where cube_efficiency is. At 0.45 ResNet-50
    # (calibration) falls to 0.90 and the spatial-convolution checks still miss (VGG16 ImageNet 1.55, U-Net 1.53,
    # Inception-v4 1.39); at 0.30 they meet 25% and ResNet-50 is 0.80 (docs/FIDELITY.md, "What the calibration
    # leaves a convolution").
    conv_cube_efficiency: float = 0.85
    # MindSpore's default precision mode on the Atlas training series (the 910A), allow_fp32_to_fp16
    # (mindspore.device_context.ascend.op_precision.precision_mode; CANN's --precision_mode): a matrix op with
    # float32 operands runs in float16, a Cast inserted before each operand and one after; "must_keep_origin_dtype"
    # on the Atlas A2 series (the 910B presets). Priced by device/cost.py ``body_time``.
    fp32_matrix_in_fp16: bool = True
    host_link_bandwidth: float = 32e9            # PCIe 4.0 x16, bytes/s per direction
    # The rate at which a sunk loop's GetNext takes each batch's bytes off the data channel (the host's push
    # into the AI CPU's queue, then into the graph's inputs): a floor of bytes / rate under every sunk step.
    # Fitted once on ResNet-18 ImageNet (the zoo's 110 ms/step at batch 256 per card, 154 MB of float32
    # images a batch; its README: "may need to set_numa_enable in dataset.py"); the CIFAR-10-resized and
    # ImageNet JPEG runs reach the same ~2,300 images/s per card though their host pipelines differ 3-4x in
    # CPU per image, and both send 602 KB a 224x224 image (docs/FIDELITY.md, "The data channel"). It does
    # not follow the AI core clock. Not measured on a 910B: the same value on its presets.
    dataset_channel_bandwidth: float = 1.4733e9
    host_link_latency_s: float = 2e-6
    dma_engines: int = 2
    hccs_ports: int = 3
    hccs_bandwidth: float = 240e9 / 8            # bytes/s per port
    roce_bandwidth: float = 100e9 / 8            # bytes/s of the RoCE port wired per chip (Atlas 800: 8 x 100GE)
    max_streams: int = 1024
    max_events: int = 1024
    stream_queue_depth: int = 1024               # tasks a stream holds before a launch blocks the host
    launch_overhead_s: float = 10e-6             # host cost per kernel launch (8-24 us measured)
    task_overhead_s: float = 2e-6                # device-side fixed cost per task (scheduling, argument load)
    block_overhead_s: float = 1e-6               # fixed cost per kernel block on a core
    graph_launch_overhead_s: float = 30e-6       # one whole-graph launch (O2 sink)
    pool_expand_unit: int = 1 * GiB
    soc_version: str = SOC_ASCEND910A

    @property
    def cube_flops_per_core(self) -> float:
        """fp16 FLOP/s of one core's cube unit (2 FLOP per MAC)."""
        return 2.0 * self.cube_macs_per_cycle * self.clock_hz

    @property
    def vector_ops_per_core(self) -> float:
        """fp16 element-ops/s of one core's vector unit."""
        return float(self.vector_lanes_fp16) * self.clock_hz

    @property
    def l2_bytes_per_cycle(self) -> float:
        """Bytes per core cycle a core reads from L2: the port's times :attr:`l2_port_ratio`."""
        return self.core_port_bytes_per_cycle * self.l2_port_ratio

    @property
    def peak_cube_flops(self) -> float:
        return self.cube_flops_per_core * self.ai_cores

    def summary(self) -> dict:
        d = dataclasses.asdict(self)
        d["peak_fp16_tflops"] = round(self.peak_cube_flops / 1e12, 1)
        return d


# The 910B (Atlas A2) presets' facts are CANN's platform configs, data/platform_config/Ascend910B<n>.ini, as
# published from real installs: [SoCInfo] cube_core_cnt 24 / vector_core_cnt 48 (B1, B2) or 20 / 40 (B3, B4),
# memory_size 64 GiB and l2_size 192 MiB (B4: 32 GiB, 96 MiB); [AICoreSpec] l0_c_size 128 KiB, l1_size 512 KiB,
# ub_size 192 KiB, vec_calc_size 128, cube_m/n/k_size 16 (DtypeMKN Default 16,16,16), cube_freq 1850 (B1),
# 1800 (B2; B3's npu-smi Aicore Freq). Not from an ini: hbm_bandwidth (1.6 TB/s, vendor figure; the B1 ini's
# ddr_rate 32 B/cycle x 24 cores x 1.85 GHz is 1.42 TB/s) and B4's 1.5 GHz. The fitted constants
# (core_port_bytes_per_cycle, cube_efficiency, the data channel) are the 910A's (docs/FIDELITY.md, "910B checks").
# [AICoreMemoryRates] of the B1 ini: l2_read_rate 110 and ddr_rate 32 B per core cycle (the fitted 910A port,
# 31.5, is within 2% of that ddr_rate); the B2-B4 inis (the same C220 cores) were not at hand and are taken to
# be the B1's.
B_INI_L2_READ_RATE, B_INI_DDR_RATE = 110, 32
# An Atlas 800T A2 server's 8 chips are one HCCS group (device/interconnect.py): 7 ports each, at the 910A's
# per-port rate (no 910B link rate with a source at hand).
_B_COMMON = dict(l0c_bytes=128 * KiB, l1_bytes=512 * KiB, ub_bytes=192 * KiB, hbm_bandwidth=1.6e12,
                 load2d_l0a_bytes_per_cycle=256, load2d_l0b_bytes_per_cycle=128,
                 cube_macs_per_cycle=16 * 16 * 16, vector_lanes_fp16=128,
                 l2_port_ratio=B_INI_L2_READ_RATE / B_INI_DDR_RATE, hccs_ports=7, fp32_matrix_in_fp16=False)

PRESETS: dict[str, DeviceSpec] = {
    DEFAULT_PRESET: DeviceSpec(),
    "Ascend910ProA": DeviceSpec(name="Ascend910ProA", clock_hz=1.1e9, soc_version=SOC_ASCEND910A),
    "Ascend910PremiumA": DeviceSpec(name="Ascend910PremiumA", clock_hz=1.22e9, soc_version=SOC_ASCEND910A),
    "Ascend910B1": DeviceSpec(name="Ascend910B1", ai_cores=24, vector_cores=48, clock_hz=1.85e9,
                              hbm_bytes=64 * GiB, l2_bytes=192 * MiB, soc_version="Ascend910B1", **_B_COMMON),
    "Ascend910B2": DeviceSpec(name="Ascend910B2", ai_cores=24, vector_cores=48, clock_hz=1.8e9,
                              hbm_bytes=64 * GiB, l2_bytes=192 * MiB, soc_version="Ascend910B2", **_B_COMMON),
    "Ascend910B3": DeviceSpec(name="Ascend910B3", ai_cores=20, vector_cores=40, clock_hz=1.8e9,
                              hbm_bytes=64 * GiB, l2_bytes=192 * MiB, soc_version="Ascend910B3", **_B_COMMON),
    "Ascend910B4": DeviceSpec(name="Ascend910B4", ai_cores=20, vector_cores=40, clock_hz=1.5e9,
                              hbm_bytes=32 * GiB, l2_bytes=96 * MiB, soc_version="Ascend910B4", **_B_COMMON),
}


def get_spec(name: str = DEFAULT_PRESET, **overrides) -> DeviceSpec:
    """Return a preset, with any field overridden; unknown names and fields raise with the valid ones listed."""
    if name not in PRESETS:
        raise InvalidParamError(f"unknown device preset {name!r}; choose one of {sorted(PRESETS)}")
    fields = {f.name for f in dataclasses.fields(DeviceSpec)}
    bad = sorted(set(overrides) - fields)
    if bad:
        raise InvalidParamError(f"unknown DeviceSpec field(s) {bad}; valid fields: {sorted(fields)}")
    flags = {f.name for f in dataclasses.fields(DeviceSpec) if f.type == "bool"}
    for key, value in overrides.items():
        if key in flags:
            if type(value) is not bool:
                raise InvalidParamError(f"DeviceSpec.{key} must be True or False, got {value!r}")
        elif key not in ("name", "soc_version") and (not isinstance(value, (int, float)) or value <= 0):
            raise InvalidParamError(f"DeviceSpec.{key} must be a positive number, got {value!r}")
    return dataclasses.replace(PRESETS[name], **overrides)
