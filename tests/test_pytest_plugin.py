"""The pytest plugin from outside: a small MindSpore test suite in a temporary directory, run by a
pytest of its own (``pytest -p ascendemu -n 2``), as a user's CI would. Each of its tests records what
its fixtures gave it; the assertions here read those records: a private kernel cache per xdist worker
(or the one ``--ascendemu-cache`` names, shared), the ``--ascendemu-device`` preset and the marker's
override, and fixtures that start every test on a fresh node with the front end's defaults, whatever
the test before it left behind."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from limits import SUBPROCESS_TIMEOUT_S

SUITE = '''
import json
import os
import pathlib

import numpy as np
import pytest

OUT = pathlib.Path(os.environ["SUITE_OUT"])


def record(name, executor, cache, **facts):
    stats = executor.kernel_cache.stats
    facts.update(worker=os.environ.get("PYTEST_XDIST_WORKER"), cache=str(cache), preset=executor.rt.node.spec.name,
                 built=stats.built, reused=stats.reused)
    (OUT / f"{name}.json").write_text(json.dumps(facts))


@pytest.mark.ascendemu
@pytest.mark.parametrize("i", range(6))
def test_add_on_a_fresh_device(i, ascendemu_device, ascendemu_kernel_cache):
    import mindspore as ms
    from mindspore import Tensor, ops
    rt = ascendemu_device.rt
    start = {"mode": ms.get_context("mode"), "jit_level": ms.get_context("jit_level"), "seed": ms.get_seed(),
             "used": rt.mem_stats().used, "device_time": rt.device_time(), "host_time": rt.host_time()}
    x = np.arange(6, dtype=np.float32).reshape(2, 3) + i
    np.testing.assert_array_equal(ops.add(Tensor(x), Tensor(x)).asnumpy(), 2 * x)
    record(f"add{i}", ascendemu_device, ascendemu_kernel_cache, start=start)
    # leave a mess behind for the next test of this worker
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    ms.set_seed(123)
    rt.malloc(1 << 20)


@pytest.mark.ascendemu(device="Ascend910A", dry_run=True)
def test_marker_options_configure_the_node(ascendemu_device, ascendemu_kernel_cache):
    assert ascendemu_device.dry_run and not ascendemu_device.rt.node.devices[0].memory.backed
    record("marker", ascendemu_device, ascendemu_kernel_cache)


def test_runtime_fixture(ascendemu_runtime, ascendemu_preset):
    ptr = ascendemu_runtime.malloc(4096)
    assert ascendemu_runtime.mem_stats().used == 4608 and ascendemu_runtime.get_device() == 0
    (OUT / "runtime.json").write_text(json.dumps({"preset": ascendemu_runtime.node.spec.name,
                                                  "option": ascendemu_preset}))
    ascendemu_runtime.free(ptr)


@pytest.mark.ascendemu(devcie="Ascend910B1")
def test_misspelt_marker_option_is_reported():
    pass
'''


def run_suite(tmp_path: Path, *options: str) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    suite = tmp_path / "suite"
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    suite.mkdir(exist_ok=True)
    out.mkdir()
    (suite / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "MS_COMPILER_CACHE_PATH")) and k != "RANK_ID"}
    env["SUITE_OUT"] = str(out)       # ASCENDEMU_CACHE_KEY_FILE stays: the suite signs with the test key
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "ascendemu", "-n", "2", "-q", "-p", "no:cacheprovider",
                           "-p", "no:hypothesispytest",      # not the suite's: its import costs each worker seconds
                           "--ascendemu-mindspore", "--basetemp", str(tmp_path / f"base{out.name}"), *options],
                          cwd=suite, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    return proc, {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def test_plugin_gives_each_xdist_worker_a_private_cache_and_each_test_a_fresh_device(tmp_path):
    proc, facts = run_suite(tmp_path, "--ascendemu-device", "Ascend910B1")
    assert re.search(r"8 passed, 1 error", proc.stdout), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "@pytest.mark.ascendemu: unknown option(s) ['devcie']" in proc.stdout
    adds = [facts[f"add{i}"] for i in range(6)]
    # the preset option reaches every node; the marker overrides it for its test
    assert {f["preset"] for f in adds} == {"Ascend910B1"} and facts["marker"]["preset"] == "Ascend910A"
    assert facts["runtime"] == {"preset": "Ascend910B1", "option": "Ascend910B1"}
    # every test starts on the front end's defaults and an empty pool at time 0 (the host clock has
    # charged set_device's 1 us, the one call so far), though the test before it on its worker switched
    # to GRAPH_MODE/O0, reseeded and leaked a megabyte
    assert all(f["start"] == {"mode": 1, "jit_level": "O2", "seed": 0, "used": 0, "device_time": 0.0,
                              "host_time": 1e-6} for f in adds)
    workers = {f["worker"] for f in adds}
    assert workers == {"gw0", "gw1"}
    caches = {f["worker"]: f["cache"] for f in adds}
    assert len(set(caches.values())) == 2 and all(w in caches[w] for w in workers)
    for worker, cache in caches.items():
        mine = [f for f in adds if f["worker"] == worker]
        assert all(f["cache"] == cache for f in mine)
        # the worker built the Add kernel once, into its own cache, and its later tests reused it
        assert sorted(f["built"] for f in mine) == [0] * (len(mine) - 1) + [1]
        assert [p.name.split("_")[0] for p in Path(cache).rglob("*.o")] == ["add"]


def test_plugin_shares_the_cache_that_ascendemu_cache_names(tmp_path):
    shared = tmp_path / "ci-kernel-cache"
    proc, facts = run_suite(tmp_path, "--ascendemu-cache", str(shared), "-k", "add")
    assert re.search(r"6 passed", proc.stdout), proc.stdout[-3000:] + proc.stderr[-3000:]
    adds = [facts[f"add{i}"] for i in range(6)]
    assert {f["worker"] for f in adds} == {"gw0", "gw1"}
    assert {f["cache"] for f in adds} == {str(shared)}
    assert sum(f["built"] for f in adds) == 1            # one build for both workers; the rest reused it
    assert len(list(shared.glob("rank_0/kernel_meta/add_*.o"))) == 1


def test_unknown_preset_is_a_usage_error(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "ascendemu", "-p", "no:cacheprovider",
                           "-p", "no:hypothesispytest", "--ascendemu-device", "Ascend999"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 4                          # pytest's usage error
    assert "--ascendemu-device Ascend999: unknown device preset; choose one of Ascend910A" in proc.stderr
