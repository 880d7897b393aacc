"""Shared fixtures: a fresh emulated node per test, and a tiny hand-written kernel under the ABI.

The device fixtures are the ascendemu pytest plugin's (``ascendemu.cli.pytest_plugin``, installed with
the package): ``ex`` and ``rt`` are its context managers at the scopes these tests want, and
``ascendemu_kernel_cache`` overrides its per-worker caches with one cache for the whole session."""
from __future__ import annotations

import atexit
import gc
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# The kernel cache's per-user MAC key: the suite (and the processes it starts) uses a key of its own,
# never the real ~/.config/ascendemu/cache.key.
# The process that makes the key's directory (pytest's controller; xdist workers inherit the variable)
# removes it when it exits.
if "ASCENDEMU_CACHE_KEY_FILE" not in os.environ:
    _key_dir = tempfile.mkdtemp(prefix="ascendemu_key_")
    atexit.register(shutil.rmtree, _key_dir, True)
    os.environ["ASCENDEMU_CACHE_KEY_FILE"] = str(Path(_key_dir) / "cache.key")

# The user's kernel store (ascendemu.cache.store, CANN's op compiler cache under ~/atc_data) is off for the
# suite: a test sees only the kernel caches it makes, and nothing is written to the home directory.
# tests/test_kernel_store.py turns it on in directories of its own.
os.environ["ACL_OP_COMPILER_CACHE_MODE"] = "disable"

# The xdist workers already fill the cores, so a kernel build compiles its misses in the process that asks
# (CANN's TE_PARALLEL_COMPILER, honoured by ascendemu.cache.parallel): no pool of build workers per test
# process or per `ascendemu run` child, each paying imports and numba set-up only to wait for the same
# cores. Tests of the parallel build pass ``jobs`` explicitly.
os.environ.setdefault("TE_PARALLEL_COMPILER", "1")

# Bytecode for the whole run in one session directory, never beside the sources: where the environment
# sets PYTHONDONTWRITEBYTECODE (this machine's does), every process the suite starts (xdist workers,
# `ascendemu run` children, mpiexec ranks) otherwise compiles the package's ~300 modules from source,
# ~1 of the ~1.9 CPU-s an `import ascendemu.frontend` costs. Children inherit the variables; the
# process that makes the directory removes it when it exits.
if "PYTHONPYCACHEPREFIX" not in os.environ:
    _pycache = tempfile.mkdtemp(prefix="ascendemu_pycache_")
    atexit.register(shutil.rmtree, _pycache, True)
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = _pycache
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False

from ascendemu.cli.pytest_plugin import emulated_device, fresh_runtime

# The cyclic garbage collector, tuned for a test process (the processes the suite starts keep Python's
# defaults): a kernel build allocates container objects by the million (numba's IR, types and LLVM
# wrappers), and at the default first-generation threshold of 700 a cold 200-test conformance slice ran
# ~4,300 young collections, 4.3 of its ~40 CPU-s in the collector; at 10,000 (the older generations keep
# Python's ratios of 10) it runs ~200, 1.5 CPU-s. What is collected is unchanged, only how often the
# collector looks; no test calls gc or depends on when an unreachable cycle is freed.
gc.set_threshold(10_000, 10, 10)

# The test files with the longest single tests (ranks under mpiexec, SIGKILL trials that wait on their
# children), run first: a long test started last keeps one core busy alone while the other xdist worker
# has nothing left (the suite's tail). pyproject's ``--dist worksteal`` lets the worker that ran out take
# half of the other's remaining tests, and gives each worker a contiguous run of tests, so the two seldom
# wait on each other's build lock for the same kernel. Everything else keeps its collection order.
SLOW_FIRST = ("test_data_parallel.py", "test_llama_parallel.py", "test_semi_auto_parallel.py", "test_cache_faults.py",
              "test_first_contact.py", "test_detection_ops.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the tests of SLOW_FIRST's files to the front (a stable sort: the same order on every worker)."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FIRST)))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The collected tree (every test module, ~9,000 items, the library imported so far) lives for the whole
    session: moved out of the collector's view, so an old-generation collection no longer walks it."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def ascendemu_kernel_cache(tmp_path_factory) -> Path:
    """Overrides the plugin's per-worker caches: one kernel cache per test session for the modules that
    run networks (the same small ones compile once), shared by the xdist workers (the cache is
    multi-process safe)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = tmp_path_factory.getbasetemp().parent / "shared-kernel-cache"
        root.mkdir(mode=0o700, exist_ok=True)
        return root
    return tmp_path_factory.mktemp("shared-kernel-cache")


@pytest.fixture(scope="module")
def ex(ascendemu_kernel_cache):
    """One executor for the module's tests, on the session's kernel cache (the plugin's emulated_device)."""
    with emulated_device(ascendemu_kernel_cache) as executor:
        yield executor


@pytest.fixture
def restore_context():
    """For tests that switch mode and jit level: put them back for the tests sharing this process."""
    from ascendemu.frontend import context

    saved = {k: context.get_context(k) for k in ("mode", "jit_config")}
    yield
    context.set_context(**saved)


@pytest.fixture
def rt():
    """The process-wide runtime with no node: each test inits it as it needs; finalised afterwards."""
    with fresh_runtime() as runtime:
        yield runtime


_SCALE_CACHE: dict = {}


def scale_kernel(n: int, block_dim: int, cost=None, name: str = "scale2"):
    """y = 2 * x over n float32, split over block_dim blocks; written here so the runtime tests do
    not depend on the op library. ``cost`` (a KernelCost) lets a test price it by hand."""
    import numba
    from numba import carray, types

    from ascendemu.device.cost import KernelCost
    from ascendemu.hal.kernel import ArgSpec, KernelFunction
    from ascendemu.kernels.ops.nb import POINTER

    cfunc = _SCALE_CACHE.get(n)
    if cfunc is None:
        f32 = POINTER["float32"]

        @numba.cfunc(types.void(types.CPointer(types.uint64), types.int64, types.int64))
        def kernel(args, b, nb):
            x = carray(f32(args[0]), (n,))
            y = carray(f32(args[1]), (n,))
            chunk = (n + nb - 1) // nb
            for i in range(b * chunk, min(n, (b + 1) * chunk)):
                y[i] = 2.0 * x[i]
        cfunc = _SCALE_CACHE[n] = kernel
    cost = cost or KernelCost(vector_ops=n, bytes=8 * n, dtype="float32")
    return KernelFunction(name, cfunc.address, block_dim, (ArgSpec(4 * n, "in"), ArgSpec(4 * n, "out")),
                          cost, cfunc)


@pytest.fixture
def make_scale():
    return scale_kernel
