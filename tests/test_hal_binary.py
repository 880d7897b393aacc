"""Kernel binaries through the runtime: load from kernel_meta files, look up, launch, refuse bad ones."""
from __future__ import annotations

import numpy as np
import pytest

from ascendemu import errors
from ascendemu.cache.kernel_meta import KernelCache
from ascendemu.hal import acl
from ascendemu.hal.runtime import MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE
from ascendemu.hal.kernel import CorruptKernelError
from ascendemu.kernels.signature import OpSignature, TensorDesc

ROWS, COLS = 25, 40
N = ROWS * COLS


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory):
    """A kernel_meta with a PopulationCount (a kernel specialised to its signature) and a Square (a
    dynamic-shape kernel: its shapes are tiling data)."""
    root = tmp_path_factory.mktemp("hal_bin")
    cache = KernelCache(root=root)
    cache.get(OpSignature.make("PopulationCount", [TensorDesc((ROWS, COLS), "int32")]))
    cache.get(OpSignature.make("Square", [TensorDesc((N,), "float32")]))
    return cache.directory


@pytest.fixture(scope="module")
def square_files(cache_root):
    """The PopulationCount entry's .json (the fixture kept its name: the files of a kernel loaded by path)."""
    (json_path,) = cache_root.glob("population_count_*_0.json")
    return json_path


def test_a_dynamic_shape_kernel_is_not_loaded_by_path(rt, cache_root):
    """Its block dim, argument sizes and tiling data come from a signature's plan, which a path lacks."""
    rt.init(device_count=1)
    rt.set_device(0)
    (square,) = cache_root.glob("square_*_0.o")
    with pytest.raises(errors.AclError, match="dynamic-shape kernel.*kernel cache") as e:
        rt.load_binary(square)
    assert e.value.code == 507000


def test_load_get_function_and_launch(rt, square_files):
    rt.init(device_count=1)
    rt.set_device(0)
    binary = rt.load_binary(square_files.with_suffix(".o"))
    func = rt.get_function(binary, f"{square_files.stem}__kernel0")
    x = np.arange(N, dtype=np.int32) * 7919 - 3_000_000
    want = np.unpackbits(x.view(np.uint8)).reshape(N, 32).sum(axis=1, dtype=np.uint8)     # set bits per int32
    dx, dy = rt.malloc(x.nbytes), rt.malloc(want.nbytes)
    rt.memcpy(dx, x.nbytes, x, x.nbytes, MEMCPY_HOST_TO_DEVICE)
    block_dim = rt.functions[func].block_dim
    rt.launch_kernel(func, block_dim, np.array([dx, dy], np.uint64).tobytes(), 0)   # packed 8-byte args
    rt.synchronize_stream(0)
    y = np.empty_like(want)
    rt.memcpy(y, y.nbytes, dy, y.nbytes, MEMCPY_DEVICE_TO_HOST)
    np.testing.assert_array_equal(y, want)
    with pytest.raises(errors.KernelLookupError) as e:
        rt.get_function(binary, "relu__kernel0")
    assert e.value.code == 507027 and square_files.stem in e.value.message
    rt.unload_binary(binary)
    with pytest.raises(errors.RtParamInvalidError, match="not loaded"):
        rt.get_function(binary, f"{square_files.stem}__kernel0")


def test_refuses_other_magic_and_tampered_objects(rt, square_files, tmp_path):
    rt.init(device_count=1)
    rt.set_device(0)
    with pytest.raises(errors.FeatureNotSupportedError, match="0x43554245"):
        rt.load_binary(square_files, magic=0xABCEED50)               # RT_DEV_BINARY_MAGIC_PLAIN
    for suffix in (".o", ".json", ".info"):
        (tmp_path / (square_files.stem + suffix)).write_bytes(square_files.with_suffix(suffix).read_bytes())
    obj = tmp_path / (square_files.stem + ".o")
    data = bytearray(obj.read_bytes())
    data[len(data) // 2] ^= 0xFF
    obj.write_bytes(bytes(data))
    with pytest.raises(CorruptKernelError, match="sha256") as e:
        rt.load_binary(obj)
    assert e.value.code == 507000
    _, ret = acl.rt.binary_load_from_file(str(tmp_path / "missing.o"))
    assert ret == 507000 and "cannot read" in acl.get_recent_err_msg()
