"""The per-rank kernel cache: incremental reuse, layout, warm start without numba, security, CLI.

Kernels are small elementwise ops (each compile costs ~0.5 s); one base cache is built once per
session and copied (shutil.copytree) into each test that needs it, so tests stay independent.
Results are checked against numpy.
"""
from __future__ import annotations

import ctypes
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.cache import CacheSecurityError, CacheLockTimeoutError, CacheWarning, KernelCache
from ascendemu.cache.cli import main as cache_cli
from ascendemu.cache.locks import EntryLock
from ascendemu.cache.parallel import (IDLE_CORE_MIN, PARALLEL_COMPILER_ENV, POOL_MIN_MISSES, Builders, builders,
                                      pool_size)
from ascendemu.errors import InvalidParamError
from ascendemu.kernels.library import infer_outputs
from ascendemu.kernels.signature import OpSignature

NUMPY_OPS = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "Square": lambda x: x * x, "ReLU": lambda x: np.maximum(x, 0), "Neg": lambda x: -x,
    "Abs": np.abs, "ReduceSum": lambda x: x.sum(axis=1),
}


def sig(op: str, *shapes: tuple[int, ...]) -> OpSignature:
    return OpSignature.make(op, [(s, "float32") for s in shapes])


BASE_SIGS = [sig("Add", (4, 8), (4, 8)), sig("Mul", (32,), (32,)), sig("Square", (16,)),
             sig("ReLU", (2, 16)), sig("Sub", (8,), (8,)),
             OpSignature.make("ReduceSum", [((4, 6), "float32")], axis=(1,))]   # a tuple attribute

_BASE: dict[str, Path] = {}


def base_root(tmp_path_factory) -> Path:
    """A cache root holding BASE_SIGS for rank 0, built once per session (shared by both test files)."""
    if "root" not in _BASE:
        root = tmp_path_factory.mktemp("base_cache")
        cache = KernelCache(root, rank=0)
        cache.get_many(BASE_SIGS, jobs=1, progress=False)
        assert cache.stats.built == len(BASE_SIGS)
        _BASE["root"] = root
    return _BASE["root"]


@pytest.fixture
def cache_root(tmp_path_factory, tmp_path) -> Path:
    """A private copy of the base cache (rank 0)."""
    root = tmp_path / "cache"
    shutil.copytree(base_root(tmp_path_factory), root, symlinks=True)
    return root


def run_kernel(s: OpSignature, kernel, seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Launch every block of ``kernel`` on random inputs; returns (inputs, outputs)."""
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(d.shape).astype(d.dtype) for d in s.inputs]
    outputs = [np.zeros(d.shape, d.dtype) for d in infer_outputs(s)]
    workspaces = [np.zeros(a.nbytes, np.uint8) for a in kernel.args if a.role == "workspace"]
    arrays = inputs + outputs + workspaces
    assert len(arrays) == len(kernel.args)
    host_args = kernel.argv([a.ctypes.data for a in arrays])
    for block in range(kernel.block_dim):
        kernel.call_block(host_args, block)
    return inputs, outputs


def check_kernel(s: OpSignature, kernel, seed: int = 0) -> None:
    inputs, outputs = run_kernel(s, kernel, seed)
    np.testing.assert_allclose(outputs[0], NUMPY_OPS[s.op](*inputs), rtol=1e-5, atol=1e-6)


def entry_files(directory: Path) -> dict[str, set[str]]:
    names: dict[str, set[str]] = {}
    for p in directory.iterdir():
        if not p.name.startswith("."):
            names.setdefault(p.stem, set()).add(p.suffix)
    return names


# ------------------------------------------------------------------------------------------ incremental

def test_second_run_reuses_everything_and_a_new_loop_builds_one_kernel(cache_root):
    """Shapes are tiling data: a new size of the same loop (Square (24,)) reuses its entry, a reduction
    with another loop structure (ReduceSum over the middle of three dims) builds one new kernel."""
    cache = KernelCache(cache_root, rank=0)
    kernels = cache.get_many(BASE_SIGS, progress=False)
    assert (cache.stats.built, cache.stats.reused, cache.stats.rebuilt) == (0, len(BASE_SIGS), 0)
    assert cache.stats.loaded == len(BASE_SIGS)
    for s, k in zip(BASE_SIGS, kernels):
        check_kernel(s, k)

    changed = [*BASE_SIGS[:2], sig("Square", (24,)), *BASE_SIGS[3:5],
               OpSignature.make("ReduceSum", [((4, 6, 5), "float32")], axis=(1,))]
    again = KernelCache(cache_root, rank=0)
    kernels = again.get_many(changed, jobs=1, progress=False)
    assert (again.stats.built, again.stats.reused) == (1, len(BASE_SIGS) - 1)
    for s, k in zip(changed, kernels):
        check_kernel(s, k, seed=1)
    assert kernels[2].name == cache.get(BASE_SIGS[2]).name and kernels[2].tiling != cache.get(BASE_SIGS[2]).tiling
    # the old ReduceSum entry stays next to the new one; Square has one entry for both sizes
    names = entry_files(again.directory)
    assert sum(1 for name in names if name.startswith("reduce_sum_")) == 2
    assert sum(1 for name in names if name.startswith("square_")) == 1


# A user script without an `if __name__ == "__main__":` guard: its top level must run once, not
# once more in every spawned worker.
UNGUARDED_SCRIPT = textwrap.dedent("""
    import json, sys
    from ascendemu.cache import KernelCache
    from ascendemu.kernels.signature import OpSignature
    print("top level ran", flush=True)
    sigs = [OpSignature.make(op, [(tuple(s), "float32") for s in shapes]) for op, shapes in json.loads(sys.argv[2])]
    cache = KernelCache(sys.argv[1], rank=0)
    names = [k.name for k in cache.get_many(sigs, jobs=2)]
    print(json.dumps({"built": cache.stats.built, "reused": cache.stats.reused, "names": names,
                      "numba": "numba" in sys.modules}))
""")


def test_parallel_misses_use_workers_and_show_progress(cache_root, tmp_path):
    new = [sig("Abs", (10,)), sig("Neg", (6, 2)), sig("Add", (3, 1), (1, 4))]     # a broadcast: a new loop
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED_SCRIPT)
    spec = json.dumps([(s.op, [list(d.shape) for d in s.inputs]) for s in new + BASE_SIGS[:2]])
    env = {k: v for k, v in os.environ.items() if k != PARALLEL_COMPILER_ENV}     # the default: every core
    proc = subprocess.run([sys.executable, str(script), str(cache_root), spec], capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT_S, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines.count("top level ran") == 1
    report = json.loads(lines[-1])
    assert (report["built"], report["reused"]) == (3, 2)
    assert report["numba"] is False                  # compiled in the workers only
    assert "building kernels" in proc.stderr         # the progress bar
    log = (cache_root / "rank_0" / "kernel_meta" / ".build.log").read_text().splitlines()[-3:]
    assert {line.split()[3] for line in log} == set(report["names"][:3])
    cache = KernelCache(cache_root, rank=0)          # what the workers wrote is reused and correct
    for s, k in zip(new, cache.get_many(new, progress=False)):
        check_kernel(s, k)
    assert cache.stats.reused == 3


def test_te_parallel_compiler_bounds_the_build_workers(monkeypatch):
    """CANN's TE_PARALLEL_COMPILER caps the build processes (never above the cores); ``jobs`` overrides it;
    a value outside 1..32 is refused with what to do."""
    cores = os.cpu_count() or 1
    monkeypatch.delenv(PARALLEL_COMPILER_ENV, raising=False)
    assert pool_size(None) == cores and pool_size(3) == 3
    monkeypatch.setenv(PARALLEL_COMPILER_ENV, "1")
    assert pool_size(None) == 1 and builders(None, 50) == Builders(0, True) and pool_size(2) == 2
    monkeypatch.setenv(PARALLEL_COMPILER_ENV, "32")
    assert pool_size(None) == cores
    for bad in ("0", "33", "eight"):
        monkeypatch.setenv(PARALLEL_COMPILER_ENV, bad)
        with pytest.raises(InvalidParamError, match="TE_PARALLEL_COMPILER.*1..32"):
            pool_size(None)


def test_automatic_policy_pays_a_worker_only_for_enough_misses(monkeypatch):
    """Without ``jobs``: few misses (PyNative's one at a time, a small graph) or no idle core build here,
    for no worker's start-up; from POOL_MIN_MISSES on, one worker per core but this one's, this process
    building beside them; an explicit ``jobs`` keeps that many workers with this process waiting (one: this process)."""
    monkeypatch.setenv(PARALLEL_COMPILER_ENV, "2")
    processes, cores = pool_size(None), os.cpu_count() or 1
    assert builders(None, 1, load=0.0) == builders(None, POOL_MIN_MISSES - 1, load=0.0) == Builders(0, True)
    assert builders(None, POOL_MIN_MISSES, load=0.0) == (Builders(1, True) if processes == 2 else Builders(0, True))
    assert builders(None, 100, load=cores - IDLE_CORE_MIN / 2) == Builders(0, True)   # no idle core: build here
    assert builders(3, 5) == Builders(3, False) and builders(3, 1) == builders(1, 9) == Builders(0, True)


# Many misses under the automatic policy: one worker builds from the batch's head while this process
# takes its tail, so each kernel is built exactly once, by one of the two.
SHARED_BUILD_SCRIPT = textwrap.dedent("""
    import json, sys
    from ascendemu.cache import KernelCache
    from ascendemu.cache import parallel
    from ascendemu.kernels.signature import OpSignature
    parallel.IDLE_CORE_MIN = -1e9          # the machine's load must not decide this test: a worker starts
    sigs = [OpSignature.make(op, [(tuple(s), "float32") for s in shapes]) for op, shapes in json.loads(sys.argv[2])]
    cache = KernelCache(sys.argv[1], rank=0)
    names = [k.name for k in cache.get_many(sigs, progress=False)]
    print(json.dumps({"built": cache.stats.built, "names": names, "numba": "numba" in sys.modules,
                      "pool": parallel._POOL is not None}))
""")


def test_many_misses_build_here_and_in_one_worker_each_once(tmp_path):
    sigs = [sig(op, (8,), (8,)) for op in ("Add", "Sub", "Mul")] + [sig(op, (2, 5)) for op in
                                                                    ("Square", "ReLU", "Neg", "Abs")]
    sigs.append(sig("Add", (3, 1), (1, 4)))          # a broadcast: a loop of its own
    assert len(sigs) == POOL_MIN_MISSES
    spec = json.dumps([(s.op, [list(d.shape) for d in s.inputs]) for s in sigs])
    env = {**os.environ, PARALLEL_COMPILER_ENV: "2"}
    proc = subprocess.run([sys.executable, "-c", SHARED_BUILD_SCRIPT, str(tmp_path), spec],
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S, env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["built"] == len(sigs) == len(set(report["names"]))
    assert report["numba"] is True                  # this process built its share (the batch's tail)
    assert report["pool"] is (min(os.cpu_count() or 1, 2) == 2)      # beside one worker where 2 cores are
    log = (tmp_path / "rank_0" / "kernel_meta" / ".build.log").read_text().splitlines()
    assert sorted(line.split()[3] for line in log) == sorted(report["names"])   # each built once
    cache = KernelCache(tmp_path, rank=0)           # what both wrote is reused and correct
    for s, k in zip(sigs, cache.get_many(sigs, progress=False)):
        check_kernel(s, k)
    assert cache.stats.reused == len(sigs)


PIPED_BUILD_SCRIPT = textwrap.dedent("""
    import sys
    from ascendemu.cache import KernelCache
    from ascendemu.kernels.signature import OpSignature
    sigs = [OpSignature.make("Abs", [((5,), "float32")]), OpSignature.make("Neg", [((7,), "float32")])]
    cache = KernelCache(sys.argv[1], rank=0)
    cache.get_many(sigs, jobs=1)
    print("next line", file=sys.stderr)
    print(cache.stats.built)
""")


def test_cold_build_progress_off_a_terminal_is_one_plain_line(cache_root):
    """stderr to a pipe (a log, CI): no tqdm redraws, one line per build, the next line on its own."""
    proc = subprocess.run([sys.executable, "-c", PIPED_BUILD_SCRIPT, str(cache_root)], capture_output=True,
                          timeout=SUBPROCESS_TIMEOUT_S)            # bytes: text mode would turn every \r into \n
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().strip() == "2"
    assert b"\r" not in proc.stderr
    lines = proc.stderr.decode().splitlines()
    progress = [line for line in lines if "building kernels" in line]
    assert len(progress) == 1
    assert re.fullmatch(r"building kernels: 2/2 kernels in \d+\.\d s \(host wall time\)", progress[0])
    assert lines[lines.index(progress[0]) + 1] == "next line"


def test_progress_on_a_terminal_is_a_live_bar(monkeypatch):
    from ascendemu.cache.parallel import _progress_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, live in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        bar = _progress_bar(3)
        for _ in range(3):
            bar.update(1)
        bar.close()
        text = stream.getvalue()
        assert ("\r" in text) is live and "building kernels" in text
        if not live:
            assert re.fullmatch(r"building kernels: 3/3 kernels in \d+\.\d s \(host wall time\)\n", text)


# ----------------------------------------------------------------------------------------- warm start

WARM_SCRIPT = textwrap.dedent("""
    import json, sys
    from ascendemu.cache import KernelCache
    from ascendemu.kernels.library import infer_outputs
    from ascendemu.kernels.signature import OpSignature
    sigs = [OpSignature.make(op, [(tuple(s), "float32") for s in shapes], **attrs)
            for op, shapes, attrs in json.loads(sys.argv[2])]
    cache = KernelCache(sys.argv[1], rank=0)
    import numpy as np
    results = []
    for s in sigs:
        k = cache.get(s)
        ins = [np.arange(d.size, dtype=np.float32).reshape(d.shape) - 3 for d in s.inputs]
        out = np.zeros(infer_outputs(s)[0].shape, np.float32)
        args = k.argv([a.ctypes.data for a in ins + [out]])
        for b in range(k.block_dim):
            k.call_block(args, b)
        results.append(out.tolist())
    print(json.dumps({"numba": "numba" in sys.modules, "built": cache.stats.built,
                      "reused": cache.stats.reused, "results": results}))
""")


def test_warm_start_in_a_fresh_process_never_imports_numba(cache_root):
    spec = [(s.op, [list(d.shape) for d in s.inputs], dict(s.attrs)) for s in BASE_SIGS]
    proc = subprocess.run([sys.executable, "-c", WARM_SCRIPT, str(cache_root), json.dumps(spec)],
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["numba"] is False
    assert (report["built"], report["reused"]) == (0, len(BASE_SIGS))
    for s, got in zip(BASE_SIGS, report["results"]):
        ins = [np.arange(d.size, dtype=np.float32).reshape(d.shape) - 3 for d in s.inputs]
        np.testing.assert_allclose(np.array(got, np.float32), NUMPY_OPS[s.op](*ins), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------------------- security

@pytest.mark.parametrize("level", ["kernel_meta", "rank_0"])
def test_group_writable_directory_is_refused_until_fixed(cache_root, level):
    directory = cache_root / "rank_0" / "kernel_meta"
    target = directory if level == "kernel_meta" else directory.parent
    os.chmod(target, 0o770)
    with pytest.raises(CacheSecurityError) as err:
        KernelCache(cache_root, rank=0)
    assert str(target) in str(err.value) and f"chmod go-w {target}" in str(err.value)
    assert err.value.code == 107000
    os.chmod(target, 0o700)
    cache = KernelCache(cache_root, rank=0)
    check_kernel(BASE_SIGS[0], cache.get(BASE_SIGS[0]))


def test_unwritable_cache_root_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(InvalidParamError, match="cannot create the kernel cache directory .* MS_COMPILER_CACHE_PATH"):
        KernelCache(blocker / "cache", rank=0)


def test_lock_timeout_names_the_lock_file_and_holder(tmp_path):
    path = tmp_path / "k.lock"
    with EntryLock(path):
        with pytest.raises(CacheLockTimeoutError) as err:
            EntryLock(path, timeout=0.2).acquire()
        assert str(path) in str(err.value) and f"process {os.getpid()}" in str(err.value)
        assert EntryLock(path).acquire(blocking=False) is False
    lock = EntryLock(path, timeout=0.2)
    assert lock.acquire()
    lock.release()


# ------------------------------------------------------------------------------------------------ CLI

def run_cli(capsys, *argv) -> tuple[int, str]:
    code = cache_cli(list(argv))
    return code, capsys.readouterr().out


def test_cli_ls_stats_verify_clear(cache_root, capsys):
    directory = cache_root / "rank_0" / "kernel_meta"
    names = sorted(entry_files(directory))
    shutil.copytree(directory.parent, cache_root / "rank_2")

    code, out = run_cli(capsys, "ls", "--root", str(cache_root))
    assert code == 0
    assert str(directory) in out and str(cache_root / "rank_2" / "kernel_meta") in out
    for name in names:
        size = (directory / f"{name}.o").stat().st_size
        line = next(l for l in out.splitlines() if l.strip().startswith(name))
        assert str(size) in line.split()
    assert "Square" in out and "Add" in out

    code, out = run_cli(capsys, "stats", "--root", str(cache_root), "--rank", "0")
    total = sum((directory / f"{n}{s}").stat().st_size for n in names for s in (".o", ".info", ".json"))
    assert code == 0 and f"{len(names)} entries, {total} bytes, 0 quarantined" in out
    assert "rank_2" not in out

    code, out = run_cli(capsys, "verify", "--root", str(cache_root), "--rank", "0")
    assert code == 0 and out.count("OK ") == len(names) and "0 BAD" in out

    victim = directory / f"{names[0]}.o"
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x40
    victim.write_bytes(bytes(data))
    code, out = run_cli(capsys, "verify", "--root", str(cache_root), "--rank", "0")
    assert code == 1
    bad = next(l for l in out.splitlines() if "BAD " in l)
    assert names[0] in bad and "sha256" in bad

    code, out = run_cli(capsys, "clear", "--root", str(cache_root), "--rank", "0")
    assert code == 0 and all(f"removed {n}" in out for n in names)
    assert entry_files(directory) == {} and not (directory / ".build.log").exists()
    assert len(entry_files(cache_root / "rank_2" / "kernel_meta")) == len(names)   # other rank kept

    code, out = run_cli(capsys, "stats", "--root", str(cache_root))
    assert "rank_0/kernel_meta: 0 entries" in out and f"rank_2/kernel_meta: {len(names)} entries" in out
    assert run_cli(capsys, "ls", "--rank", "x")[0] == 2


def test_format_bytes_binary_units():
    from ascendemu.device import spec
    from ascendemu.units import GiB, KiB, MiB, format_bytes

    assert (KiB, MiB, GiB) == (1024, 1024 ** 2, 1024 ** 3)
    assert (spec.KiB, spec.MiB, spec.GiB) == (KiB, MiB, GiB)          # one home, re-used by the spec
    cases = {0: "0 B", 512: "512 B", 1023: "1023 B", 1024: "1.00 KiB", 1536: "1.50 KiB", 12345: "12.06 KiB",
             3 * 1024 ** 2 + 256 * 1024: "3.25 MiB", 1024 ** 2 - 1: "1.00 MiB", 2 * 1024 ** 3: "2.00 GiB",
             5 * 1024 ** 4: "5.00 TiB", np.int64(2048): "2.00 KiB", -1536: "-1.50 KiB"}
    assert {n: format_bytes(n) for n in cases} == cases
    with pytest.raises(TypeError):
        format_bytes(1.5)


def test_cli_ls_and_stats_give_sizes_in_units(cache_root, capsys):
    directory = cache_root / "rank_0" / "kernel_meta"
    names = sorted(entry_files(directory))
    total = sum((directory / f"{n}{s}").stat().st_size for n in names for s in (".o", ".info", ".json"))
    assert 1024 <= total < 1024 ** 2                      # so the expected text below is KiB
    in_kib = f"{total / 1024:.2f} KiB"
    code, out = run_cli(capsys, "ls", "--root", str(cache_root))
    assert code == 0 and out.splitlines()[0] == f"{directory}: {len(names)} entries, {in_kib}"
    code, out = run_cli(capsys, "stats", "--root", str(cache_root))
    assert code == 0 and out.splitlines() == [
        f"{directory}: {len(names)} entries, {total} bytes, 0 quarantined (0 bytes), 0 incomplete, "
        f"0 temp files, {len(names)} builds logged",
        f"  on disk: entries {in_kib}, quarantine 0 B"]


def test_cli_verify_flags_group_writable_directory(cache_root, capsys):
    directory = cache_root / "rank_0" / "kernel_meta"
    os.chmod(directory, 0o775)
    code, out = run_cli(capsys, "verify", "--root", str(cache_root))
    assert code == 1 and "INSECURE" in out and f"chmod go-w {directory}" in out


def test_corrupt_entry_warning_is_a_cache_warning(cache_root):
    # the full matrix of tampering lives in test_cache_faults.py; this pins the warning type
    directory = cache_root / "rank_0" / "kernel_meta"
    name = next(iter(sorted(entry_files(directory))))
    (directory / f"{name}.json").write_text("{")
    with pytest.warns(CacheWarning, match=name):
        KernelCache(cache_root, rank=0).get_many(BASE_SIGS, jobs=1, progress=False)


def test_build_log_ranks_builds_per_op_with_their_cpu(cache_root):
    """bench_speed's build ranking: every entry the base build compiled, counted under its kernel function
    name, with the CPU its building thread spent (a compile costs well over a millisecond)."""
    from ascendemu.cache.entry import builds_by_op

    directory = cache_root / "rank_0" / "kernel_meta"
    ops = builds_by_op(directory)
    expected: dict[str, int] = {}
    for name in entry_files(directory):
        expected[name.rsplit("_", 2)[0]] = expected.get(name.rsplit("_", 2)[0], 0) + 1
    assert {op: n for op, (n, _) in ops.items()} == expected
    assert sum(expected.values()) == len(BASE_SIGS)
    assert all(cpu > 0.001 for _, cpu in ops.values())
    assert [cpu for _, cpu in ops.values()] == sorted((cpu for _, cpu in ops.values()), reverse=True)
