"""Kernel binaries: the ELF object, its .json/.info, verification and the numba-free warm load.

The oracles are independent of the code under test: objects are read back with pyelftools (and
readelf when installed), hashes recomputed with hashlib, results compared with numpy, and the warm
load runs in a fresh interpreter that must never import numba.
"""
from __future__ import annotations

import ctypes
import hashlib
import io
import json
import platform
import shutil
import struct
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from ascendemu.hal.binary import KernelBinary, canonical_json, verify_binary
from ascendemu.hal.elf import ALLOWED_UNDEFINED
from ascendemu.hal.kernel import KERNEL_ABI_VERSION as ABI_VERSION
from ascendemu.hal.kernel import CorruptKernelError, IncompatibleKernelError, UnresolvedSymbolError
from ascendemu.hal.meta import decode_meta, encode_meta
from ascendemu.kernels.binary import build_binary, build_info, kernel_name
from ascendemu.kernels.signature import OpSignature

SEED_JSON_KEYS = {"batchBindOnly", "binFileName", "binFileSuffix", "blockDim", "build_result",
                  "kernelName", "magic", "opParaSize", "parameters", "sha256"}
EXTENSION_JSON_KEYS = {"abiVersion", "undefinedSymbols", "args", "cost", "workspace"}
SEED_SOC_KEYS = {"autoTilingMode", "coreNum", "coreType", "deviceId", "l1Fusion", "l2Fusion", "l2Mode",
                 "mdl_bank_path", "offlineTune", "op_bank_path", "op_bank_update", "op_debug_dir",
                 "op_debug_level", "op_impl_mode", "op_impl_mode_list", "socVersion", "vector_fp_ceiling"}
SEED_JOB_KEYS = {"SocInfo", "full_name", "fusion_op_name", "graph_name", "l1_size", "op_list", "scope_id"}
SEED_OP_KEYS = {"build_type", "dynamic_compile_static", "func_name", "input_desc", "int64mode",
                "max_kernel_id", "miss_support_info", "module_name", "name", "op_name", "ori_name",
                "output_data_desc", "output_desc", "pattern", "py_module_path", "type", "unknown_shape"}
SEED_DESC_KEYS = {"L1_addr_offset", "L1_fusion_type", "L1_workspace_size", "addr_type", "data_type",
                  "dtype", "format", "name", "ori_format", "ori_shape", "param_type", "range", "shape",
                  "slice_offset", "split_index", "total_shape", "valid", "valid_shape"}
HOST_MACHINE = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}[platform.machine()]

SQUARE = OpSignature.make("Square", [((300_000,), "float32")])   # a dynamic-shape kernel (shapes are tiling data)
EXP = OpSignature.make("Exp", [((1000,), "float32")])            # calls libm
# a kernel specialised to its signature (its op has no runtime tiling), so the HAL loads it by path
POPCOUNT = OpSignature.make("PopulationCount", [((512, 600), "int32")])   # several blocks
# dynamic-shape kernels that call libm's log and sin (Lgamma), exp (BesselI0e)
LGAMMA = OpSignature.make("Lgamma", [((512, 600), "float32")])
BESSEL_I0E = OpSignature.make("BesselI0e", [((8, 100), "float32")])


@pytest.fixture(scope="module")
def square() -> KernelBinary:
    return build_binary(SQUARE, 0)


@pytest.fixture(scope="module")
def exp() -> KernelBinary:
    return build_binary(EXP, 0)


@pytest.fixture(scope="module")
def popcount() -> KernelBinary:
    return build_binary(POPCOUNT, 0)


@pytest.fixture(scope="module")
def lgamma() -> KernelBinary:
    return build_binary(LGAMMA, 0)


@pytest.fixture(scope="module")
def bessel_i0e() -> KernelBinary:
    return build_binary(BESSEL_I0E, 0)


def np_popcount(x: np.ndarray) -> np.ndarray:
    """Set bits of each int32's two's complement."""
    return np.unpackbits(x.view(np.uint8)).reshape(x.shape + (32,)).sum(-1, dtype=np.uint8)


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory, square, exp, popcount, lgamma, bessel_i0e):
    directory = tmp_path_factory.mktemp("kernel_meta")
    for kb in (square, exp, popcount, lgamma, bessel_i0e):
        for suffix, data in kb.files().items():
            (directory / f"{kb.bin_file_name}{suffix}").write_bytes(data)
    return directory


def elf_of(kb: KernelBinary) -> ELFFile:
    return ELFFile(io.BytesIO(kb.obj))


def decode_tlv(data: bytes) -> dict[int, int]:
    """Test-side decoder of the .ascend.meta records: <u16 type><u16 len><value padded to 4>."""
    records, offset = {}, 0
    while offset < len(data):
        kind, length = struct.unpack_from("<HH", data, offset)
        records[kind] = int.from_bytes(data[offset + 4:offset + 4 + length], "little")
        offset += 4 + length + (-length % 4)
    return records


def with_obj(kb: KernelBinary, obj: bytes) -> KernelBinary:
    """A copy of ``kb`` carrying ``obj``, with the .json sha256 fixed up to match it."""
    return replace(kb, obj=obj, json={**kb.json, "sha256": hashlib.sha256(obj).hexdigest()})


def test_object_is_a_relocatable_elf64_exporting_the_kernel(square):
    elf = elf_of(square)
    assert elf.elfclass == 64 and elf.header["e_ident"]["EI_CLASS"] == "ELFCLASS64"
    assert elf.header["e_type"] == "ET_REL"
    assert elf.header["e_machine"] == HOST_MACHINE
    symtab = elf.get_section_by_name(".symtab")
    kernel = square.bin_file_name + "__kernel0"
    (symbol,) = symtab.get_symbol_by_name(kernel)
    assert symbol["st_info"]["bind"] == "STB_GLOBAL" and symbol["st_info"]["type"] == "STT_FUNC"
    assert elf.get_section(symbol["st_shndx"]).name == ".text" and symbol["st_size"] > 0
    defined_globals = [s.name for s in symtab.iter_symbols()
                       if s["st_info"]["bind"] == "STB_GLOBAL" and s["st_shndx"] != "SHN_UNDEF"]
    assert defined_globals == [kernel]
    undefined = sorted(s.name for s in symtab.iter_symbols() if s["st_shndx"] == "SHN_UNDEF" and s.name)
    assert undefined == square.json["undefinedSymbols"]
    assert set(undefined) <= ALLOWED_UNDEFINED


def test_meta_section_records_block_dim_and_abi(popcount, square):
    meta = elf_of(popcount).get_section_by_name(".ascend.meta")
    assert meta is not None
    records = decode_tlv(meta.data())
    assert popcount.json["blockDim"] > 1
    assert records == {1: 1, 2: popcount.json["blockDim"], 3: ABI_VERSION, 4: 1}
    assert decode_meta(meta.data()) == records
    # a dynamic-shape kernel: block dim -1 (decided by its tiling), as u32
    assert square.json["blockDim"] == -1
    assert decode_tlv(elf_of(square).get_section_by_name(".ascend.meta").data())[2] == 0xFFFF_FFFF


def test_meta_decoder_rejects_malformed_records():
    good = encode_meta(4)
    with pytest.raises(CorruptKernelError, match="truncated record header"):
        decode_meta(good + b"\x01\x00")
    with pytest.raises(CorruptKernelError, match="past the end"):
        decode_meta(good[:-2])
    with pytest.raises(CorruptKernelError, match="lacks record"):
        decode_meta(good[:8])
    with pytest.raises(CorruptKernelError, match="repeats"):
        decode_meta(good + good[:8])
    assert decode_meta(good + struct.pack("<HH", 99, 3) + b"abc\0")[2] == 4     # unknown type skipped


def test_json_matches_the_seed_layout(popcount):
    doc = popcount.json
    assert set(doc) == SEED_JSON_KEYS | EXTENSION_JSON_KEYS
    assert doc["sha256"] == hashlib.sha256(popcount.obj).hexdigest()
    assert doc["magic"] == "RT_DEV_BINARY_MAGIC_ELF" and doc["binFileSuffix"] == ".o"
    assert doc["kernelName"] == doc["binFileName"] + "__kernel0" == popcount.bin_file_name + "__kernel0"
    assert doc["batchBindOnly"] == 1 and doc["opParaSize"] == 0 and doc["build_result"] == ""
    assert doc["parameters"] == [0, 0] and doc["abiVersion"] == ABI_VERSION
    assert doc["args"] == [{"nbytes": 1_228_800, "role": "in"}, {"nbytes": 307_200, "role": "out"}]   # int32 -> uint8
    assert doc["workspace"] == {"num": 0, "size": []}
    assert doc["cost"]["dtype"] == "int32"
    files = popcount.files()
    assert files[".o"] == popcount.obj
    assert files[".json"] == (json.dumps(doc, sort_keys=True, indent=4) + "\n").encode()


def test_info_has_the_seed_structure(popcount):
    info = popcount.info
    job = info["job_content"]
    assert SEED_JOB_KEYS <= set(job) and info["job_type"] == "Compile"
    assert set(job["SocInfo"]) == SEED_SOC_KEYS
    assert job["SocInfo"]["socVersion"] == "Ascend910A" and job["SocInfo"]["deviceId"] == "0"
    assert job["fusion_op_name"] == popcount.bin_file_name
    data, op = job["op_list"]
    assert data["type"] == "Data" and set(data["output_desc"][0]) == SEED_DESC_KEYS
    assert SEED_OP_KEYS <= set(op) and op["type"] == "PopulationCount" and op["func_name"] == "population_count"
    assert op["op_name"] == popcount.bin_file_name and op["attrs"] == []
    for desc, dtype in zip(op["input_desc"] + op["output_desc"], ("int32", "uint8")):
        assert set(desc) == SEED_DESC_KEYS
        assert desc["format"] == "ND" and desc["dtype"] == desc["data_type"] == dtype
        assert desc["shape"] == desc["ori_shape"] == [512, 600] and desc["range"] == [[512, 512], [600, 600]]
    assert set(info["toolchain"]) >= {"numba", "llvmlite", "python", "abi_version"}
    assert set(info["host"]) == {"cpu_name", "cpu_features", "triple"}


def test_a_dynamic_shape_kernel_describes_its_family(square):
    """Square's shapes are tiling data: the .json says blockDim -1, argument sizes -1 and 8 bytes of
    tiling per runtime value (element count, one loop dim, one stride), the .info has operands of
    unknown rank ([-2], MindSpore's) and, as attributes, what the kernel was compiled for."""
    doc = square.json
    assert set(doc) == SEED_JSON_KEYS | EXTENSION_JSON_KEYS
    assert doc["blockDim"] == -1 and doc["opParaSize"] == 3 * 8
    assert doc["args"] == [{"nbytes": -1, "role": "in"}, {"nbytes": -1, "role": "out"}] and doc["cost"] == {}
    (data, op) = square.info["job_content"]["op_list"]
    assert op["unknown_shape"] is True and op["build_type"] == "fuzzily_build"
    for desc in op["input_desc"] + op["output_desc"] + data["output_desc"]:
        assert set(desc) == SEED_DESC_KEYS and desc["shape"] == desc["ori_shape"] == [-2] and desc["range"] == []
    attrs = {a["name"]: a["value"] for a in op["attrs"]}
    assert attrs["tiling_data"] == [["n", None], ["dims", [None]], ["strides", [[None]]]]
    assert attrs["program"] == [["Square", ["in", 0]]] and attrs["workspaces"] == 0


def test_kernel_name_is_stable_across_processes_and_tracks_the_signature(square):
    name = kernel_name(SQUARE, 0)
    assert name == square.bin_file_name
    func, digest, device = name.split("_")
    assert func == "square" and device == "0" and 0 <= int(digest) < 2 ** 64
    code = ("from ascendemu.kernels.binary import kernel_name\n"
            "from ascendemu.kernels.signature import OpSignature\n"
            "import sys\n"
            "print(kernel_name(OpSignature.make('Square', [((300000,), 'float32')]), 0))\n"
            "assert 'numba' not in sys.modules")      # a warm start names kernels without numba
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == name
    assert kernel_name(SQUARE, 3) == f"square_{digest}_3"
    info = build_info(SQUARE, 0, full_name="Default/Square-op7")
    assert info["job_content"]["full_name"] == "Default/Square-op7"
    assert kernel_name(SQUARE, 0, info) == name
    reduce = OpSignature.make("ReduceSum", [((4, 8), "float32")], axis=(1,), keep_dims=True)
    from_disk = json.loads(canonical_json(build_info(reduce, 0)))
    assert kernel_name(reduce, 0, from_disk) == kernel_name(reduce, 0)
    assert kernel_name(reduce, 0) == from_disk["job_content"]["fusion_op_name"]
    # another size is the same dynamic-shape kernel; another dtype, op or attribute is another kernel
    assert kernel_name(OpSignature.make("Square", [((300_001,), "float32")]), 0) == name
    others = {kernel_name(OpSignature.make("Neg", [((300_000,), "float32")]), 0),
              kernel_name(OpSignature.make("Square", [((300_000,), "float16")]), 0),
              kernel_name(OpSignature.make("ReduceSum", [((4, 8), "float32")], axis=(1,)), 0),
              kernel_name(OpSignature.make("ReduceSum", [((4, 8), "float32")], axis=(0,)), 0)}
    assert len(others) == 4 and name not in others
    assert kernel_name(OpSignature.make("Square", [((3_000, 200), "float32")]), 0) == name     # coalesced: one dim


def test_load_in_a_fresh_process_without_numba(kernel_dir, popcount, lgamma, bessel_i0e):
    """A specialised kernel loads by path; the dynamic-shape Lgamma and BesselI0e (libm's log, sin and
    exp resolved by the loader) link as the cache links them, block dim and tiling data from their plans."""
    from ascendemu.kernels.library import plan_kernel
    facts = json.dumps([[kb.bin_file_name, plan.block_dim, plan.tiling_data]
                        for kb, plan in ((lgamma, plan_kernel(LGAMMA)), (bessel_i0e, plan_kernel(BESSEL_I0E)))])
    code = r"""
import ctypes, json, math, sys
import numpy as np
from ascendemu.hal.kernel import KernelFunction
from ascendemu.hal.loader import link, load_binary, read_binary
directory, popcount, facts = sys.argv[1:]
kf = load_binary(read_binary(directory, popcount))
x = np.random.default_rng(1).integers(-2 ** 31, 2 ** 31, (512, 600), dtype=np.int32)
y = np.full(x.shape, 255, dtype=np.uint8)
args = (ctypes.c_uint64 * 2)(x.ctypes.data, y.ctypes.data)
for block in range(kf.block_dim):
    kf.call_block(args, block)
np.testing.assert_array_equal(y, np.unpackbits(x.view(np.uint8)).reshape(512, 600, 32).sum(-1))
print(popcount, kf.block_dim, [a.role for a in kf.args])
def np_lgamma(x):
    return np.vectorize(math.lgamma)(x.astype(np.float64))
def np_i0e(x):
    return np.i0(x.astype(np.float64)) * np.exp(-np.abs(x.astype(np.float64)))
for (name, block_dim, tiling), rows, oracle in zip(json.loads(facts), (512, 8), (np_lgamma, np_i0e)):
    entry, keepalive = link(read_binary(directory, name))
    kf = KernelFunction(name, entry, block_dim, (), keepalive=keepalive, tiling=tuple(tiling))
    x = np.linspace(0.25, 6, tiling[0], dtype=np.float32).reshape(rows, -1)
    y = np.full(x.shape, np.nan, dtype=np.float32)
    args = kf.argv([x.ctypes.data, y.ctypes.data])
    for block in range(kf.block_dim):
        kf.call_block(args, block)
    np.testing.assert_allclose(y, oracle(x), rtol=1e-5, atol=1e-6)
assert "numba" not in sys.modules, sorted(m for m in sys.modules if m.startswith("numba"))
"""
    out = subprocess.run([sys.executable, "-c", code, str(kernel_dir), popcount.bin_file_name, facts],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f"{popcount.bin_file_name} {popcount.json['blockDim']} ['in', 'out']" in out.stdout
    assert {"log", "sin"} <= set(lgamma.json["undefinedSymbols"]) and "exp" in bessel_i0e.json["undefinedSymbols"]


def test_read_binary_reports_a_missing_file(kernel_dir, square):
    from ascendemu.hal.loader import read_binary

    assert read_binary(kernel_dir, square.bin_file_name) == square
    with pytest.raises(CorruptKernelError, match="cannot read"):
        read_binary(kernel_dir, "square_1_0")


def test_load_in_process_runs_blocks_on_numpy_data(popcount, square):
    from ascendemu.hal.loader import load_binary

    kf = load_binary(popcount)
    assert kf.block_dim == popcount.json["blockDim"] and kf.cost.bytes == popcount.json["cost"]["bytes"]
    x = np.random.default_rng(0).integers(-2 ** 31, 2 ** 31, (512, 600), dtype=np.int32)
    y = np.full(x.shape, 255, dtype=np.uint8)
    args = (ctypes.c_uint64 * 2)(x.ctypes.data, y.ctypes.data)
    for block in range(kf.block_dim):
        kf.call_block(args, block)
    np.testing.assert_array_equal(y, np_popcount(x))
    with pytest.raises(IncompatibleKernelError, match="dynamic-shape kernel"):
        load_binary(square)            # its launch facts and tiling data come from a signature's plan


def test_verify_accepts_the_built_binary(square, exp):
    verify_binary(square)
    verify_binary(exp)


def test_verify_rejects_a_flipped_byte(square):
    obj = bytearray(square.obj)
    obj[len(obj) // 2] ^= 0x40
    with pytest.raises(CorruptKernelError, match="sha256"):
        verify_binary(replace(square, obj=bytes(obj)))


def test_verify_rejects_a_truncated_object_even_with_a_matching_sha(square):
    for size in (0, 3, 40, 64, len(square.obj) // 2, len(square.obj) - 1):
        with pytest.raises(CorruptKernelError, match="ELF|section|past the end"):
            verify_binary(with_obj(square, square.obj[:size]))


def test_verify_never_fails_with_anything_but_corrupt_kernel_error(square):
    rng = np.random.default_rng(1)
    for _ in range(150):
        obj = bytearray(square.obj[:rng.integers(1, len(square.obj) + 1)])
        for position in rng.integers(0, len(obj), size=rng.integers(1, 4)):
            obj[position] = int(rng.integers(0, 256))
        try:
            verify_binary(with_obj(square, bytes(obj)))
        except CorruptKernelError:
            pass


def test_verify_rejects_a_wrong_magic(square):
    with pytest.raises(CorruptKernelError, match="magic"):
        verify_binary(replace(square, json={**square.json, "magic": "RT_DEV_BINARY_MAGIC_PLAIN"}))


def test_verify_rejects_a_missing_kernel_symbol(square):
    with pytest.raises(CorruptKernelError, match="names kernel"):
        verify_binary(replace(square, json={**square.json, "kernelName": "square__kernel1"}))
    symbol = (square.bin_file_name + "__kernel0").encode()
    renamed = square.obj.replace(symbol + b"\0", symbol[:-1] + b"9\0")
    assert renamed != square.obj
    with pytest.raises(CorruptKernelError, match="does not define"):
        verify_binary(with_obj(square, renamed))


def test_verify_rejects_foreign_host_features(square):
    features = square.info["host"]["cpu_features"].split(",")
    lacking = next(f for f in features if f.startswith("-"))
    foreign = ",".join("+" + f[1:] if f == lacking else f for f in features)
    info = {**square.info, "host": {**square.info["host"], "cpu_features": foreign}}
    with pytest.raises(IncompatibleKernelError, match=lacking[1:]):
        verify_binary(replace(square, info=info))
    info = {**square.info, "host": {**square.info["host"], "triple": "aarch64-unknown-linux-gnu"}}
    with pytest.raises(IncompatibleKernelError, match="aarch64"):
        verify_binary(replace(square, info=info))


def test_verify_rejects_an_info_of_another_kernel(square, exp):
    with pytest.raises(CorruptKernelError, match="do not belong together"):
        verify_binary(replace(square, info=exp.info))


def test_verify_rejects_a_disallowed_undefined_symbol(square):
    import numba
    from numba import types
    from numba.extending import intrinsic

    from ascendemu.kernels.codegen import compile_object

    @intrinsic
    def as_f32(typingctx, addr):
        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.float32)))
        return types.CPointer(types.float32)(types.uint64), codegen

    def allocating(args, block_idx, block_dim):      # np.empty needs numba's runtime (NRT_*)
        y = numba.carray(as_f32(args[1]), (16,))
        tmp = np.empty(16, np.float32)
        for i in range(16):
            tmp[i] = i
            y[i] = tmp[i]

    meta = encode_meta(square.json["blockDim"])
    obj, undefined = compile_object(allocating, square.json["kernelName"], meta)
    assert any(name.startswith("NRT_") for name in undefined)
    kb = with_obj(square, obj)
    kb.json["undefinedSymbols"] = undefined
    with pytest.raises(UnresolvedSymbolError, match="NRT_"):
        verify_binary(kb)


def test_helpers_llvm_left_as_calls_are_inlined_and_their_raise_paths_dropped():
    """An all-float16 training BatchNorm is large enough that LLVM's inliner keeps a call to the
    float64 specialisation of the float16 converter; numba tests such a call's status and its raise
    path needs numba's exception runtime. The codegen inlines it and folds the never-taken path, so
    the object needs no symbol at all."""
    from ascendemu.kernels.codegen import compile_object
    from ascendemu.kernels.library import generate

    sig = OpSignature.make("BatchNorm", [((2, 64, 4, 4), "float16")] + [((64,), "float16")] * 4,
                           is_training=True, epsilon=1e-5, momentum=0.1)
    _, undefined = compile_object(generate(sig).pyfunc, "bn16", encode_meta(1))
    assert undefined == []


def test_compile_object_is_deterministic_across_processes(square):
    """Another process, which compiles another kernel first (numba's name counters move), emits the
    same bytes."""
    code = ("import hashlib\n"
            "from ascendemu.kernels.binary import build_binary\n"
            "from ascendemu.kernels.signature import OpSignature\n"
            "build_binary(OpSignature.make('Exp', [((7,), 'float32')]), 0)\n"
            "kb = build_binary(OpSignature.make('Square', [((300000,), 'float32')]), 0)\n"
            "print(kb.bin_file_name, hashlib.sha256(kb.obj).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [square.bin_file_name, square.json["sha256"]]


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf not installed")
def test_readelf_agrees(kernel_dir, square):
    out = subprocess.run(["readelf", "-h", "-S", "-s", "-W", str(kernel_dir / f"{square.bin_file_name}.o")],
                         capture_output=True, text=True, check=True).stdout
    assert "ELF64" in out and "REL (Relocatable file)" in out
    assert " .ascend.meta " in out and " .text " in out
    kernel_lines = [line for line in out.splitlines() if line.endswith(f" {square.bin_file_name}__kernel0")]
    assert len(kernel_lines) == 1 and "FUNC    GLOBAL" in kernel_lines[0]


def test_strided_padded_convolutions_build_within_the_allowlist():
    """Regression: a 5x5/2 padded conv once kept a tuple bounds check calling numba_do_raise."""
    from ascendemu.kernels.signature import TensorDesc
    for k, pad in ((5, 2), (7, 3)):
        sig = OpSignature.make("Conv2D", [TensorDesc((1, 1, 16, 16)), TensorDesc((1, 1, k, k))], out_channel=1,
                               kernel_size=(k, k), pad_mode="pad", pad=(pad,) * 4, stride=(2, 2))
        kb = build_binary(sig, 0)
        assert set(kb.json["undefinedSymbols"]) <= ALLOWED_UNDEFINED
        verify_binary(kb)


def test_float16_stores_of_float64_statistics_build_within_the_allowlist():
    """Regression: an all-float16 training BatchNorm (amp O3) stored its float64 moving statistics with
    f2h, whose float64 specialisation linked numba's runtime (NRT_Free, numba_do_raise); so did the
    float16 dscale/dbias of its gradient."""
    from ascendemu.kernels.signature import TensorDesc
    x, c = TensorDesc((4, 8, 3, 3), "float16"), TensorDesc((8,), "float16")
    for sig in (OpSignature.make("BatchNorm", [x, c, c, c, c], is_training=True, momentum=0.1, epsilon=1e-4),
                OpSignature.make("BatchNormGrad", [x, x, c, TensorDesc((8,)), TensorDesc((8,))], is_training=True,
                                 epsilon=1e-4)):
        kb = build_binary(sig, 0)
        assert set(kb.json["undefinedSymbols"]) <= ALLOWED_UNDEFINED
        verify_binary(kb)


def test_blas_calls_link_to_the_wheel_library_in_a_fresh_process(kernel_dir):
    """A float32 MatMul object leaves cblas_sgemm to the loader, which resolves it from the
    scipy-openblas32 wheel's library opened by path (numpy's own OpenBLAS exports other names),
    without numba; the product matches numpy's. (A dynamic-shape kernel: linked as the cache links it,
    its block dim and tiling data from the signature's plan.)"""
    from ascendemu.kernels.library import plan_kernel
    from ascendemu.kernels.signature import TensorDesc
    sig = OpSignature.make("MatMul", [TensorDesc((70, 50)), TensorDesc((40, 50))], transpose_b=True)
    kb, plan = build_binary(sig, 0), plan_kernel(sig)
    assert "scipy_cblas_sgemm" in kb.json["undefinedSymbols"]
    for suffix, data in kb.files().items():
        (kernel_dir / f"{kb.bin_file_name}{suffix}").write_bytes(data)
    code = r"""
import ctypes, json, sys
from pathlib import Path
import numpy as np
import scipy_openblas32
from ascendemu.hal.kernel import KernelFunction
from ascendemu.hal.loader import _symbol_address, link, read_binary
block_dim, tiling = json.loads(sys.argv[3])
entry, keepalive = link(read_binary(sys.argv[1], sys.argv[2]))
kf = KernelFunction(sys.argv[2], entry, block_dim, (), keepalive=keepalive, tiling=tuple(tiling))
wheel = ctypes.CDLL(str(Path(scipy_openblas32.get_lib_dir()) / f"lib{scipy_openblas32.get_library()}.so"))
assert _symbol_address("scipy_cblas_sgemm") == ctypes.cast(wheel.scipy_cblas_sgemm, ctypes.c_void_p).value
rng = np.random.default_rng(0)
a, b = rng.standard_normal((70, 50), dtype=np.float32), rng.standard_normal((40, 50), dtype=np.float32)
c = np.full((70, 40), np.nan, np.float32)
args = kf.argv([a.ctypes.data, b.ctypes.data, c.ctypes.data])
for block in range(kf.block_dim):
    kf.call_block(args, block)
np.testing.assert_allclose(c, a.astype(np.float64) @ b.T.astype(np.float64), rtol=1e-5, atol=1e-4)
assert "numba" not in sys.modules
"""
    facts = json.dumps([plan.block_dim, plan.tiling_data])
    out = subprocess.run([sys.executable, "-c", code, str(kernel_dir), kb.bin_file_name, facts], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr


def test_the_loaders_elf_reader_agrees_with_pyelftools(square, exp, popcount):
    """hal.elf decodes the ELF64 structures with struct (a warm start reads one object per kernel);
    pyelftools, a reader written independently, must see the same machine, functions, imports and meta."""
    from elftools.elf.sections import SymbolTableSection

    from ascendemu.hal.elf import read_elf
    for kb in (square, exp, popcount):
        elf = elf_of(kb)
        symtab = next(s for s in elf.iter_sections() if isinstance(s, SymbolTableSection))
        globals_ = [s for s in symtab.iter_symbols() if s["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK") and s.name]
        functions = {s.name: s["st_size"] for s in globals_
                     if s["st_shndx"] != "SHN_UNDEF" and s["st_info"]["type"] == "STT_FUNC"}
        undefined = tuple(sorted(s.name for s in globals_ if s["st_shndx"] == "SHN_UNDEF"))
        facts = read_elf(kb.obj)
        assert (facts.machine, facts.functions, facts.undefined) == (elf.header["e_machine"], functions, undefined)
        assert facts.meta == elf.get_section_by_name(".ascend.meta").data()
