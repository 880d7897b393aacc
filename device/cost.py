"""Cost model: how long a kernel, a copy or a launch takes in simulated time.

A kernel declares its work (:class:`KernelCost`): cube FLOPs and, for cube kernels, the GEMM the
cube runs (:class:`Gemm`: dimensions and the operands' bytes in HBM), vector element-ops, the bytes
it moves to and from HBM, and bytes it reads a second time. This module prices that work the way
the chip would run it, independently of how the host splits the kernel into blocks:

* **cube**: M, N and K are padded to the 16x16x16 fractal; each core gets one block of the output
  (M and N cut into at most ``ai_cores`` parts of whole fractals, as CANN's cube schedules split it by
  ``block_dim``) and walks it in equal L0C tiles (at most the largest fractal-aligned square whose fp32
  accumulators fit L0C); of those splits the one with the shortest body is taken (:func:`gemm_tiling`);
  K is split across idle cores when the op allows it. A tile takes its fractal cycles divided by the
  cube's sustained efficiency.
* **cube feed (MTE1)**: each tile's operands go from L1 into L0A/L0B one k-step block at a time on the one
  MTE1 pipe, a convolution's feature map by load3d (img2col), the rest by load2d, at the rates and fixed
  cycles CANN's cube tiling cost model gives (:func:`mte1_cycles`).
* **vector**: element-ops over the cores the data spreads to, at 128 fp16 / 64 fp32 lanes per cycle.
* **data movement**: every byte a core reads or writes crosses its port to the memory system (a
  fixed number of bytes per core cycle); the bytes that miss L2 also share HBM's bandwidth. A GEMM
  reads operand A once per column of tiles and B once per row of tiles, unless a core keeps its strip
  of one of them in L1 across its consecutive tiles; those re-reads, and a kernel's declared second
  pass (``reread``), hit L2 when the re-read data fits in it. A convolution also reads again the
  feature-map rows its bands of output rows share (:func:`fmap_rereads`: the band a quarter of L1
  holds); a gather or scatter-add pays the DMA's fixed cost once per row it moves
  (``KernelCost.transfers``, :data:`DMA_SETUP_BYTES`).
* the pipes overlap (double buffering, "execution time of vector is hidden by execution time of
  cube"), so a kernel's body is the slowest of them; a task adds a fixed device-side cost, a block
  a fixed start cost.

The SimPy device runs a launch's ``block_dim`` blocks on the cores in waves (:mod:`.tasks`); each
block holds its core for its share of the body, so a launch takes exactly :func:`kernel_time` on an
idle device whatever its host block count. docs/FIDELITY.md derives every constant and compares the
model with published step times.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .spec import DeviceSpec

# Cube: the fractal edge. The cube multiplies 16x16 by 16x16 fp16 fractals (REFERENCE.md, CANN
# Ascend910A.ini: 16x16x16 MACs per cycle); data lives in 16-wide fractals (NC1HWC0, FRACTAL_NZ),
# so every GEMM dimension is padded to a multiple of 16 before it reaches the cube.
FRACTAL = 16
# Element-op slowdown per dtype on the vector unit: 2048 bits per cycle = 128 fp16 or 64 fp32/int32
# lanes (REFERENCE.md); int8/bool pack 256.
DTYPE_VECTOR_SLOWDOWN = {"float16": 1.0, "int8": 0.5, "uint8": 0.5, "bool": 0.5, "float32": 2.0, "int32": 2.0}
# Cube slowdown per dtype: int8 runs 16x32x16 per cycle (REFERENCE.md). float32 operands are
# computed at fp16 rate: the 910 cube has no fp32 mode and MindSpore reduces precision of fp32
# MatMul/Conv on Ascend ("the backend of MindSpore will automatically handle it with reduced
# precision", model-zoo READMEs).
DTYPE_CUBE_SLOWDOWN = {"float16": 1.0, "float32": 1.0, "int8": 0.5}
# Vector kernels spread over the cores in 32-byte blocks (the unit of every MTE transfer), so data
# of at least 32 x 32 bytes occupies all cores; smaller data fewer.
CORE_BLOCK_BYTES = 32
# Bytes per element of the operands as the cube's buffers hold them (L1 strips).
DTYPE_BYTES = {"float16": 2, "float32": 4, "int8": 1}
# Bytes per element of the cube's operands in L0A/L0B: fp16 (float32 products run on the fp16 cube, above),
# int8 one byte.
CUBE_OPERAND_BYTES = {"int8": 1}
# Bytes per element of an fp32 accumulator (L0C holds the cube's partial sums in fp32).
ACC_BYTES = 4
# The MTE's fixed cost of one DMA transfer, in bytes of the core's port time: a transfer of s bytes moves
# at s / (s + 2 KiB) of the port's rate, 89% at 16 KiB, the size above which CANN's Ascend C best practices
# ("Transferring a Large Data Block at a Time": bandwidth utilisation by transfer size, GM <-> UB) find the
# bandwidth optimal; a 320-byte embedding row moves at 14%. Streaming kernels move blocks far larger than
# this and do not declare transfers; gathers and scatter-adds move one row per transfer (docs/FIDELITY.md).
DMA_SETUP_BYTES = 2048
# CANN's convolution tiling holds the feature map's band of rows in L1 next to the weights, each double
# buffered: a band gets a quarter of L1 (docs/FIDELITY.md, "Convolutions: the feature map's band in L1").
FMAP_L1_SHARE = 4
# MTE1, the L1 -> L0A/L0B loads that feed the cube, as CANN's cube tiling cost model prices them (cann-ops
# op_tiling/cube/util/cube_util.cc GetLoad3dThroughput; docs/FIDELITY.md, "The cube's feed: MTE1"). Load3D
# (img2col of a convolution's feature map) moves LOAD3D_BYTES per (2 + n) cycles into L0A at stride 1, n the row
# switches inside a 16-row fractal block; per (2 x stride + n) at strides 2, 4 and 8; into L0B two cycles
# more each (Conv2DBackpropFilter's x); at any other stride 32 B/cycle into L0A, 512/18 into L0B.
LOAD3D_BYTES = 512
LOAD3D_POW2_STRIDES = (2, 4, 8)
LOAD3D_L0B_EXTRA_CYCLES = 2
LOAD3D_ODD_STRIDE_BYTES_PER_CYCLE = {True: 32.0, False: 512 / 18}      # {into L0A: rate}
# The fixed cycles of one load instruction (constants_define.h k1971Mte1Load3dCost, k1971Mte1Load2dCost; no
# 1980 value is given): CANN's cycle model (conv3d_dw CycleCalculator GetMte1ACycle/GetMte1BCycle) charges one
# per operand per k-step block, so an instruction here is one operand's (tile x kl0) block.
LOAD3D_FIXED_CYCLES = 42
LOAD2D_FIXED_CYCLES = 20
# L0A and L0B are double-buffered: a k-step's block fills half of each (constants_define.h: "with db on").
L0_BUFFERS = 2


@dataclass(frozen=True)
class Window:
    """How a convolution's feature-map operand reaches L1: rows of ``row_elems`` elements (padded width
    x channels padded to C0 = 16, NC1HWC0), ``kh`` rows (the dilated kernel height) under each output
    row, ``stride`` rows between output rows. ``on_b``: the feature map is the GEMM's B operand
    (Conv2DBackpropFilter's x), else its A (Conv2D's x, Conv2DBackpropInput's dout). ``width``: the
    positions of one row of the product's im2col rows (the output's width; Conv2DBackpropInput's dx width),
    whose row switches slow load3d (:func:`load3d_rate`); 0 when unknown (older traces). ``kw``: the dilated
    kernel width, 0 when unknown (traces before session 40: read as 1). :func:`fmap_rereads` prices the rows a
    band of output rows shares with the next band."""

    row_elems: int
    kh: int
    stride: int
    on_b: bool = False
    width: int = 0
    kw: int = 0

    @property
    def img2col(self) -> bool:
        """Whether load3d expands this map into the cube's fractals (img2col): every kernel but 1x1 at stride
        1, whose NC1HWC0 map is already the product's fractal matrix and goes by load2d (CANN's load2d_flag;
        TBE's conv2d_backprop_filter ``flag_all_one_case``)."""
        return not (self.kh == 1 and self.kw <= 1 and self.stride == 1)

    def to_json(self) -> list:
        head = [self.row_elems, self.kh, self.stride, int(self.on_b)]
        return head + ([self.width, self.kw] if self.kw else [self.width] if self.width else [])


@dataclass(frozen=True)
class Gemm:
    """The matrix product a cube kernel runs: ``batch`` independent (m x k) @ (k x n) products.

    ``a_bytes``/``b_bytes`` are the operands as they sit in HBM (a convolution's A is its input
    feature map, not the im2col matrix, which is expanded on chip from L1). ``split_k``: the op may
    split the contraction over cores and add the partial tiles atomically (Conv2DBackpropFilter
    splits the batch this way). ``conv``: a convolution (any of Conv2D and its two backprops), whose
    cube is fed through the img2col expansion (:func:`cube_efficiency`)."""

    batch: int
    m: int
    n: int
    k: int
    a_bytes: int
    b_bytes: int
    split_k: bool = False
    conv: bool = False
    window: Window | None = None

    def to_json(self) -> list:
        """[batch, m, n, k, a_bytes, b_bytes, split_k], with ``conv`` appended only when set (then the
        feature map's window, when known), so a MatMul's form is the one older traces hold."""
        head = [self.batch, self.m, self.n, self.k, self.a_bytes, self.b_bytes, int(self.split_k)]
        if not self.conv:
            return head
        return head + [1] + (self.window.to_json() if self.window is not None else [])

    @classmethod
    def from_json(cls, d: list) -> "Gemm":
        b, m, n, k, a, bb, s, *rest = (int(v) for v in d)
        window = (Window(rest[1], rest[2], rest[3], bool(rest[4]), *rest[5:7]) if len(rest) >= 5 else None)
        return cls(b, m, n, k, a, bb, bool(s), bool(rest[0]) if rest else False, window)


@dataclass(frozen=True)
class KernelCost:
    """Total work of one launch of a kernel, as the chip would do it.

    ``bytes``: HBM traffic of one pass over the kernel's inputs and outputs. ``reread``: bytes read a
    second time within the kernel (BatchNorm reads x once for the statistics and once to normalise);
    they hit L2 when they fit in it. ``gemm``: the cube's product, for cube kernels. ``transfers``:
    separate DMA transfers to or from scattered addresses (a Gather's rows, a scatter-add's rows),
    each paying the MTE's fixed cost per transfer (:data:`DMA_SETUP_BYTES`)."""

    cube_flops: int = 0
    vector_ops: int = 0
    bytes: int = 0
    dtype: str = "float16"
    gemm: Gemm | None = None
    reread: int = 0
    transfers: int = 0

    def to_json(self) -> dict:
        d = {"cube_flops": self.cube_flops, "vector_ops": self.vector_ops, "bytes": self.bytes, "dtype": self.dtype}
        if self.gemm is not None:
            d["gemm"] = self.gemm.to_json()
        if self.reread:
            d["reread"] = self.reread
        if self.transfers:
            d["transfers"] = self.transfers
        return d

    def to_list(self) -> list:
        """The trace form (.aetrace ``Kernel.cost``): [cube_flops, vector_ops, bytes, dtype, gemm or
        None, reread, transfers]; each later field was appended to the ones before, which older traces
        hold alone (``transfers`` only when non-zero)."""
        head = [self.cube_flops, self.vector_ops, self.bytes, self.dtype,
                self.gemm.to_json() if self.gemm is not None else None, self.reread]
        return head + [self.transfers] if self.transfers else head

    @classmethod
    def from_list(cls, v: list) -> "KernelCost":
        gemm = v[4] if len(v) > 4 else None
        return cls(int(v[0]), int(v[1]), int(v[2]), str(v[3]), Gemm.from_json(gemm) if gemm is not None else None,
                   int(v[5]) if len(v) > 5 else 0, int(v[6]) if len(v) > 6 else 0)

    @classmethod
    def from_json(cls, d: dict) -> "KernelCost":
        gemm = d.get("gemm")
        return cls(int(d.get("cube_flops", 0)), int(d.get("vector_ops", 0)), int(d.get("bytes", 0)),
                   str(d.get("dtype", "float16")), Gemm.from_json(gemm) if gemm is not None else None,
                   int(d.get("reread", 0)), int(d.get("transfers", 0)))


def fractal_pad(n: int) -> int:
    """``n`` rounded up to the cube's 16-element fractal."""
    return -(-max(n, 1) // FRACTAL) * FRACTAL


def cube_tile(spec: DeviceSpec) -> int:
    """Edge of the square output tile a core computes: the largest multiple of 16 whose fp32
    accumulators fit L0C (910A: 256 KiB -> 256 x 256)."""
    return max(FRACTAL, int(math.isqrt(spec.l0c_bytes // ACC_BYTES)) // FRACTAL * FRACTAL)


@dataclass(frozen=True)
class Tiling:
    """How a GEMM is dealt to the cores: ``tm x tn`` output tiles over a ``tk``-long contraction,
    ``units`` of them (``splits`` per output tile when K is split), in ``waves`` over the cores."""

    tm: int
    tn: int
    tk: int
    tiles_m: int
    tiles_n: int
    splits: int
    units: int
    waves: int
    cores: int


def axis_parts(fractals: int, most: int) -> dict[int, int]:
    """The ways to cut an axis of ``fractals`` fractals into at most ``most`` equal parts of whole fractals:
    {fractals per part: the fewest parts that size needs} (``ceil(fractals / parts)`` for 1..most parts)."""
    ways: dict[int, int] = {}
    for parts in range(1, min(fractals, most) + 1):
        ways.setdefault(-(-fractals // parts), parts)
    return ways


def split_tiling(spec: DeviceSpec, g: Gemm, tm: int, tn: int) -> Tiling:
    """The tiling of ``g`` into ``tm x tn`` output tiles; an op that may split K (Conv2DBackpropFilter: the batch)
    splits it over the cores its tiles leave idle (16 deep at least)."""
    m, n, k = fractal_pad(g.m), fractal_pad(g.n), fractal_pad(g.k)
    tiles_m, tiles_n = -(-m // tm), -(-n // tn)
    tiles = g.batch * tiles_m * tiles_n
    splits = 1
    if g.split_k and tiles < spec.ai_cores:
        splits = max(1, min(spec.ai_cores // tiles, k // FRACTAL))
    tk = fractal_pad(-(-k // splits))
    units = tiles * splits
    return Tiling(tm, tn, tk, tiles_m, tiles_n, splits, units, -(-units // spec.ai_cores), min(units, spec.ai_cores))


def gemm_tiling(spec: DeviceSpec, g: Gemm, cost: KernelCost | None = None) -> Tiling:
    """The tiling the cube's tiler picks for ``g``. CANN's cube schedules give each core one block of the
    output, splitting its axes into ``block_dim`` = (batch, n, m) parts: here M and N are cut into parts of
    whole fractals, at most one per core (a batch's products are dealt over the cores as tiles); a core
    walks its block in L0C tiles (at most ``cube_tile`` on a side, the block cut into equal ones). Of those
    splits the tiler takes the one whose kernel body (:func:`gemm_pipes` for ``cost``; the operands' bytes
    alone when None) is shortest, then the least cube work, then the fewest tiles, as CANN picks a tiling
    per shape by its own cost model: a 768 x 768 output runs as 30 tiles of 160 x 128 in one wave, not as
    36 squares of 128 x 128 in two (docs/FIDELITY.md, "Cube tiling: one block per core")."""
    cost = cost if cost is not None else KernelCost(bytes=g.a_bytes + g.b_bytes, gemm=g)
    edge = cube_tile(spec) // FRACTAL
    best: tuple | None = None
    for bm, m_parts in axis_parts(fractal_pad(g.m) // FRACTAL, spec.ai_cores).items():
        for bn in axis_parts(fractal_pad(g.n) // FRACTAL, spec.ai_cores // m_parts):
            tm = -(-bm // -(-bm // edge)) * FRACTAL                 # the block in equal L0C tiles
            tn = -(-bn // -(-bn // edge)) * FRACTAL
            t = split_tiling(spec, g, tm, tn)
            b = gemm_pipes(spec, cost, t)
            key = (b.body, b.cube, t.units)
            if best is None or key < best[0]:
                best = (key, t)
    return best[1]


def operand_rereads(spec: DeviceSpec, g: Gemm, t: Tiling, itemsize: int) -> tuple[int, int]:
    """Bytes of A and of B a GEMM reads beyond the first pass: every output tile needs its strip of A
    (``tm x tk``) and of B (``tk x tn``), so A is wanted once per column of tiles and B once per row.
    A core computes ``waves`` consecutive tiles; it walks them along a row keeping its A strip in L1
    when the strip fits in half of L1 (the other half double-buffers the B strips), or along a column
    keeping its B strip, whichever saves more: the kept strip is loaded once per core instead of
    once per tile. The repeats themselves hit L2 when the operand fits in it (:func:`breakdown`)."""
    half = spec.l1_bytes // 2
    a_loads, b_loads = t.tiles_n, t.tiles_m
    keep_a = t.tm * t.tk * itemsize <= half
    keep_b = t.tn * t.tk * itemsize <= half
    a_kept, b_kept = -(-t.tiles_n // t.waves), -(-t.tiles_m // t.waves)
    save_a, save_b = g.a_bytes * (a_loads - a_kept), g.b_bytes * (b_loads - b_kept)
    if keep_a and (not keep_b or save_a >= save_b):
        a_loads = a_kept
    elif keep_b:
        b_loads = b_kept
    return g.a_bytes * (a_loads - 1), g.b_bytes * (b_loads - 1)


def fmap_rereads(spec: DeviceSpec, g: Gemm, itemsize: int) -> int:
    """Bytes of a convolution's feature map read again because bands of output rows overlap: load3d
    expands the im2col fractals from the rows held in L1, and a band of ``m`` output rows needs
    ``(m - 1) x stride + kh`` input rows, of which ``kh - stride`` are the next band's too. ``m`` is
    what a quarter of L1 holds (:data:`FMAP_L1_SHARE`), at least one row: on a 570-wide, 64-channel
    map (73 KiB a row) three rows fit, so a 3x3 convolution reads its input three times; on a
    56-wide one (7 KiB) 35 rows fit and it reads 6% again. The repeats hit L2 (neighbouring bands
    run on neighbouring cores at the same time): port traffic, not HBM's."""
    w = g.window
    if w is None or w.kh <= w.stride:
        return 0
    rows = spec.l1_bytes // FMAP_L1_SHARE // max(w.row_elems * itemsize, 1)
    m = max(1, (rows - w.kh) // w.stride + 1)
    fmap = g.b_bytes if w.on_b else g.a_bytes
    return fmap * (w.kh - w.stride) // (m * w.stride)


@dataclass(frozen=True)
class Breakdown:
    """A kernel body's time per pipe (seconds; the body is the largest) and what it ran on."""

    cube: float
    vector: float
    port: float
    hbm: float
    cores: int
    mte1: float = 0.0           # the L1 -> L0A/L0B loads of a cube kernel (:func:`mte1_cycles`)

    @property
    def body(self) -> float:
        return max(self.cube, self.vector, self.port, self.hbm, self.mte1)


def cube_efficiency(spec: DeviceSpec, g: Gemm) -> float:
    """Share of the cube's peak a GEMM's tiles sustain: ``spec.cube_efficiency`` for a MatMul (and a 1x1
    stride-1 convolution), whose operands reach L0A/L0B as fractals straight from L1 (load2d);
    ``spec.conv_cube_efficiency`` for a convolution whose feature-map fractals the MTE1 builds from the
    NC1HWC0 map in L1 by img2col (load3d, each input element fetched once per kernel tap,
    :func:`fed_by_img2col`); the expansion's own throughput is the MTE1 pipe (:func:`mte1_cycles`), so the
    two are equal unless a what-if sets them apart (docs/FIDELITY.md, "Convolutions")."""
    return spec.conv_cube_efficiency if fed_by_img2col(g) else spec.cube_efficiency


def fed_by_img2col(g: Gemm) -> bool:
    """Whether the product's feature map reaches the cube through load3d's img2col (:attr:`Window.img2col`): a
    convolution's, unless its kernel is 1x1 at stride 1; a convolution of an older trace without its window
    counts as one."""
    return g.conv and (g.window is None or g.window.img2col)


def load3d_rate(stride: int, width: int, into_l0a: bool) -> float:
    """Bytes per cycle load3d moves into L0A (or L0B) at ``stride``, the img2col rows ``width`` positions to a
    row: GetLoad3dThroughput's table (:data:`LOAD3D_BYTES`), its row switches counted as GetMte1BCycle counts
    them, ``16 // width`` (``15 // width`` when ``width`` divides 16; none when unknown)."""
    switches = 0
    if width:
        switches = (FRACTAL - 1) // width if FRACTAL % width == 0 else FRACTAL // width
    extra = 0 if into_l0a else LOAD3D_L0B_EXTRA_CYCLES
    if stride == 1:
        return LOAD3D_BYTES / (2 + switches + extra)
    if stride in LOAD3D_POW2_STRIDES:
        return LOAD3D_BYTES / (2 * stride + switches + extra)
    return LOAD3D_ODD_STRIDE_BYTES_PER_CYCLE[into_l0a]


def mte1_cycles(spec: DeviceSpec, g: Gemm, t: Tiling, dtype: str) -> float:
    """MTE1 cycles of the busiest core: each of its ``waves`` tiles walks K in k-steps of ``kl0``, the largest
    multiple of 16 whose (tm x kl0) A block and (kl0 x tn) B block each fill at most half of L0A / L0B
    (double-buffered), and loads both blocks from L1 on the one MTE1 pipe: one instruction per operand per
    k-step (its fixed cycles) and the block's bytes at the load's rate. A convolution's feature map goes by
    load3d (:func:`load3d_rate`: into L0A, or into L0B for Conv2DBackpropFilter's x) unless its kernel is
    1x1 at stride 1 (the NC1HWC0 map is its own fractal matrix: load2d, as CANN's load2d_flag); every other
    operand, a MatMul's and a convolution's weights, by load2d. The cube's loads overlap its products
    (double buffering), so this is a pipe of its own in the body's max."""
    item = CUBE_OPERAND_BYTES.get(dtype, 2)
    kl0 = min(t.tk, spec.l0a_bytes // L0_BUFFERS // (t.tm * item) // FRACTAL * FRACTAL,
              spec.l0b_bytes // L0_BUFFERS // (t.tn * item) // FRACTAL * FRACTAL)
    kl0 = max(FRACTAL, kl0)
    steps = -(-t.tk // kl0)
    a_rate, b_rate = float(spec.load2d_l0a_bytes_per_cycle), float(spec.load2d_l0b_bytes_per_cycle)
    a_fixed = b_fixed = LOAD2D_FIXED_CYCLES
    w = g.window
    if w is not None and fed_by_img2col(g):
        if w.on_b:
            b_rate, b_fixed = load3d_rate(w.stride, w.width, False), LOAD3D_FIXED_CYCLES
        else:
            a_rate, a_fixed = load3d_rate(w.stride, w.width, True), LOAD3D_FIXED_CYCLES
    per_tile = steps * (a_fixed + b_fixed) + t.tm * t.tk * item / a_rate + t.tk * t.tn * item / b_rate
    return t.waves * per_tile


def vector_cores(spec: DeviceSpec, cost: KernelCost) -> int:
    """Cores a vector kernel's data spreads to: one per 32-byte block, at most all of them."""
    return max(1, min(spec.ai_cores, -(-cost.bytes // CORE_BLOCK_BYTES)))


def breakdown(spec: DeviceSpec, cost: KernelCost) -> Breakdown:
    """Time of each pipe for ``cost`` on an otherwise idle device (see the module docstring)."""
    if cost.gemm is not None:
        return gemm_pipes(spec, cost, gemm_tiling(spec, cost.gemm, cost))
    port_rate = spec.core_port_bytes_per_cycle * spec.clock_hz          # bytes/s through one core's port
    l2_rate = spec.l2_bytes_per_cycle * spec.clock_hz                     # bytes/s one core reads from L2
    vector_rate = spec.vector_lanes_fp16 * spec.clock_hz
    slow = DTYPE_VECTOR_SLOWDOWN.get(cost.dtype, 2.0)
    reread_miss = cost.reread if cost.reread > spec.l2_bytes else 0
    cores = vector_cores(spec, cost)
    return Breakdown(
        cube=cost.cube_flops * DTYPE_CUBE_SLOWDOWN.get(cost.dtype, 1.0) / (spec.peak_cube_flops * spec.cube_efficiency),
        vector=cost.vector_ops * slow / (cores * vector_rate),
        port=((cost.bytes + reread_miss + cost.transfers * DMA_SETUP_BYTES) / port_rate
              + (cost.reread - reread_miss) / l2_rate) / cores,
        hbm=(cost.bytes + reread_miss) / spec.hbm_bandwidth,
        cores=cores)


def gemm_pipes(spec: DeviceSpec, cost: KernelCost, t: Tiling) -> Breakdown:
    """Time of each pipe for the cube kernel ``cost`` run as tiling ``t`` (see the module docstring)."""
    cycle = 1.0 / spec.clock_hz
    port_rate = spec.core_port_bytes_per_cycle * spec.clock_hz          # bytes/s through one core's port
    l2_rate = spec.l2_bytes_per_cycle * spec.clock_hz                     # bytes/s one core reads from L2
    vector_rate = spec.vector_lanes_fp16 * spec.clock_hz
    slow = DTYPE_VECTOR_SLOWDOWN.get(cost.dtype, 2.0)
    reread_miss = cost.reread if cost.reread > spec.l2_bytes else 0
    g = cost.gemm
    macs = t.tm * t.tn * t.tk * DTYPE_CUBE_SLOWDOWN.get(cost.dtype, 1.0)
    cube = t.waves * macs / spec.cube_macs_per_cycle * cycle / cube_efficiency(spec, g)
    itemsize = DTYPE_BYTES.get(cost.dtype, 2)
    a_again, b_again = operand_rereads(spec, g, t, itemsize)
    misses = (a_again if g.a_bytes > spec.l2_bytes else 0) + (b_again if g.b_bytes > spec.l2_bytes else 0)
    partials = 2 * ACC_BYTES * g.batch * g.m * g.n * (t.splits - 1) if t.splits > 1 else 0   # atomic adds
    # through the port from HBM (first passes, re-reads that miss L2, atomic partials), and from L2 (the
    # re-reads that hit it, the feature map's shared rows)
    from_hbm = cost.bytes + reread_miss + misses + partials + cost.transfers * DMA_SETUP_BYTES
    from_l2 = cost.reread - reread_miss + a_again + b_again - misses + fmap_rereads(spec, g, itemsize)
    return Breakdown(
        cube=cube,
        vector=cost.vector_ops * slow / (t.cores * vector_rate),
        port=t.waves * (from_hbm / port_rate + from_l2 / l2_rate) / t.units,
        hbm=(cost.bytes + reread_miss + misses + partials) / spec.hbm_bandwidth,
        cores=t.cores,
        mte1=mte1_cycles(spec, g, t, cost.dtype) * cycle)


def body_time(spec: DeviceSpec, cost: KernelCost) -> float:
    """Seconds the chip's cores spend on one launch of a kernel with ``cost`` (no task overhead); a float32
    matrix op under :attr:`DeviceSpec.fp32_matrix_in_fp16` with its inserted Casts (:func:`reduced_precision`)."""
    if cost.gemm is not None and cost.dtype == "float32" and spec.fp32_matrix_in_fp16:
        product, casts = reduced_precision(cost)
        return breakdown(spec, product).body + sum(spec.task_overhead_s + breakdown(spec, c).body for c in casts)
    return breakdown(spec, cost).body


def reduced_precision(cost: KernelCost) -> tuple[KernelCost, tuple[KernelCost, ...]]:
    """A float32 matrix op as the 910A runs it under MindSpore's default precision mode (allow_fp32_to_fp16:
    "for matrix-type operators, use float16"): the product on float16 operands and output, each of its two
    operands cast to float16 before it and its output cast back to float32 after it, three Casts of their own
    (a task each, reading 4 and writing 2 bytes per element, or the reverse). The numbers the emulator
    computes stay float32's; the price is the chip's."""
    g = cost.gemm
    out = max(cost.bytes - g.a_bytes - g.b_bytes, 0)
    half = lambda n: n // 2  # noqa: E731
    product = replace(cost, dtype="float16", bytes=half(cost.bytes), reread=half(cost.reread),
                      gemm=replace(g, a_bytes=half(g.a_bytes), b_bytes=half(g.b_bytes)))
    casts = tuple(KernelCost(vector_ops=n // 4, bytes=n + n // 2, dtype="float32") for n in (g.a_bytes, g.b_bytes, out)
                  if n)
    return product, casts


def waves(spec: DeviceSpec, block_dim: int) -> int:
    """Rounds of ``block_dim`` blocks over the AI cores."""
    return -(-max(block_dim, 1) // spec.ai_cores)


def block_time(spec: DeviceSpec, cost: KernelCost, block_dim: int) -> float:
    """Simulated seconds one block of a ``block_dim``-block launch occupies an AI core: its wave's
    share of the kernel body, plus the block start cost."""
    return body_time(spec, cost) / waves(spec, block_dim) + spec.block_overhead_s


def kernel_time(spec: DeviceSpec, cost: KernelCost, block_dim: int) -> float:
    """Expected device time of a whole launch on an idle device: task overhead + waves x block time."""
    return spec.task_overhead_s + waves(spec, block_dim) * block_time(spec, cost, block_dim)


# Stream-control tasks of a device loop (Ascend's LabelSwitchByIndex and LabelGotoEx, which GE emits for a
# `while` on tensors): they run on the stream's task scheduler, not on an AI core or a DMA engine. The switch
# loads its 1-byte predicate from HBM and picks the next label; the goto jumps back to the loop's head. Not
# measured on hardware: estimates of one scheduler task (a few hundred cycles of the RTS firmware plus, for
# the switch, one uncached scalar load), small next to a kernel's launch; a loop's price is its kernels.
LABEL_SWITCH_S = 1.0e-6
LABEL_GOTO_S = 0.5e-6

# The tasks MindSpore's loop sink adds to every iteration of a sunk step graph on Ascend
# (KernelAdjust::ProcessLoopSink, mindspore/ccsrc/plugin/device/ascend/hal/device/kernel_adjust.cc): the
# GetNext loop's StreamSwitch and GetNext (an AI CPU kernel taking the next batch off the device data
# queue), and on the step's stream a StreamSwitch on the loop counter, an AssignAdd of the next-loop counter,
# a StreamActive restarting the GetNext loop (so the next batch is fetched while this step computes), the
# step's kernels, an AssignAdd of the current-loop counter and a StreamActive restarting the step's loop.
# StreamSwitch compares two int64 counters in HBM and picks a stream, as LabelSwitchByIndex picks a label;
# StreamActive is a scheduler task like LabelGotoEx; AssignAdd is a TBE kernel on one int64, priced as any
# one-block AI-core kernel. GetNext is an AI CPU kernel that takes the next batch off the device data queue
# (MindSpore's data channel from the host's dataset pipeline); its per-batch cost, GETNEXT_S, is the fourth
# fitted constant, fitted once on NCF (mindspore-ai/models research/recommend/ncf/README.md: 0.575 ms/step
# on one 910, batch 256 of four 1 KiB columns), whose step work the simulation puts at 0.28 ms, so its step
# is the GetNext loop's (4 uploads of 2.03 us, the StreamSwitch, GetNext with its 4 KiB batch on the data
# channel, 2.8 us): bench/bench_fidelity.py's steady NCF step is 0.575 ms with this value. GetNext runs
# on the data queue's stream, fetching the next batch while the step computes, so it is a floor on a sunk
# step, not an addition to it (docs/FIDELITY.md, "Sink mode: the loop's own tasks").
GETNEXT_S = 554.2e-6
# GetNext also moves the batch's bytes off the data channel, at DeviceSpec.dataset_channel_bandwidth (the
# third fitted constant, fitted on ResNet-18 ImageNet; device/spec.py).
COUNTER_COST = KernelCost(vector_ops=1, bytes=3 * 8, dtype="int32")     # AssignAdd: read two int64, write one


class LoopSinkTask:
    """A kind of the loop sink's per-iteration tasks (never instantiated: the class is the kind). ``name`` is
    MindSpore's op name, as traces write it; :meth:`time` is the kind's price on ``spec``."""

    name: str = ""

    @classmethod
    def time(cls, spec: DeviceSpec, nbytes: int = 0) -> float:
        """Simulated seconds of one such task on a device of ``spec``; ``nbytes``: the user data it moves
        (GetNext's batch; 0 for the others, which move none)."""
        raise NotImplementedError(cls.__name__)


class StreamSwitch(LoopSinkTask):
    """Compares the two int64 loop counters in HBM and picks a stream: priced as LabelSwitchByIndex."""

    name = "StreamSwitch"

    @classmethod
    def time(cls, spec: DeviceSpec, nbytes: int = 0) -> float:
        return LABEL_SWITCH_S


class StreamActive(LoopSinkTask):
    """Restarts a loop's stream: a scheduler task priced as LabelGotoEx."""

    name = "StreamActive"

    @classmethod
    def time(cls, spec: DeviceSpec, nbytes: int = 0) -> float:
        return LABEL_GOTO_S


class LoopCounterAssignAdd(LoopSinkTask):
    """MindSpore's AssignAdd of a loop counter (not the registry op AssignAdd): a TBE kernel on one int64,
    priced as any one-block AI-core kernel (COUNTER_COST), so it follows the clock."""

    name = "AssignAdd"

    @classmethod
    def time(cls, spec: DeviceSpec, nbytes: int = 0) -> float:
        return kernel_time(spec, COUNTER_COST, 1)


class GetNext(LoopSinkTask):
    """The AI CPU kernel taking the next batch (``nbytes``) off the device data queue: the fitted GETNEXT_S
    per batch and the batch's bytes at the data channel's fitted rate (``spec.dataset_channel_bandwidth``)."""

    name = "GetNext"

    @classmethod
    def time(cls, spec: DeviceSpec, nbytes: int = 0) -> float:
        return GETNEXT_S + nbytes / spec.dataset_channel_bandwidth


# The kinds, in MindSpore's order; by name only where a trace's name is mapped back (replay)
LOOP_SINK_TASKS: tuple[type[LoopSinkTask], ...] = (StreamSwitch, StreamActive, LoopCounterAssignAdd, GetNext)
LOOP_SINK_TASK_BY_NAME: dict[str, type[LoopSinkTask]] = {k.name: k for k in LOOP_SINK_TASKS}


def copy_time(spec: DeviceSpec, nbytes: int, kind: str) -> float:
    """Simulated seconds of a memcpy: host link for H2D/D2H, HBM read+write for D2D."""
    if kind == "D2D":
        return spec.task_overhead_s + 2 * nbytes / spec.hbm_bandwidth
    return spec.host_link_latency_s + nbytes / spec.host_link_bandwidth
