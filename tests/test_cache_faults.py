"""Faults the kernel cache must survive: tampered files, interrupted writes, SIGKILLed builders and
concurrent builders. A bad entry must be detected, quarantined with its reason, rebuilt and never
loaded; every kernel a run returns must compute what numpy computes.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.cache import CacheWarning, KernelCache
from ascendemu.cache.cli import scan, verdict
from ascendemu.kernels.binary import build_info, kernel_name

from test_cache import BASE_SIGS, NUMPY_OPS, cache_root, check_kernel, sig  # noqa: F401 (cache_root: fixture)


def names_by_sig() -> dict:
    return {s: kernel_name(s, 0, build_info(s, 0)) for s in BASE_SIGS}


def flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def edit_json(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=4))


def _edit_shape(info: dict) -> None:
    info["job_content"]["op_list"][-1]["input_desc"][0]["shape"] = [9999]


def _foreign_host(info: dict) -> None:
    info["host"]["cpu_name"] = "sapphirerapids"
    info["host"]["cpu_features"] += ",+amx-tile,+avx512fp16"


def _first_arg_written(doc: dict) -> None:
    doc["args"][0]["role"] = "out"          # a .json claiming the kernel writes its first input


def _symlink_to_copy(path: Path) -> None:
    copy = path.with_name("elsewhere.o")
    copy.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(copy)


def _replace_by_dir(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _swap(a: Path, b: Path) -> None:
    tmp = a.with_name("swap.tmp")
    os.replace(a, tmp)
    os.replace(b, a)
    os.replace(tmp, b)


# kind -> (tamper(directory, name_a, name_b), entries that must be rebuilt, words the reason contains)
TAMPERS = {
    "o_bit_flip": (lambda d, a, b: flip_byte(d / f"{a}.o"), 1, "sha256"),
    "o_truncated": (lambda d, a, b: truncate(d / f"{a}.o"), 1, "sha256"),
    "o_missing": (lambda d, a, b: (d / f"{a}.o").unlink(), 1, ".o is missing"),
    "o_from_other_entry": (lambda d, a, b: (d / f"{a}.o").write_bytes((d / f"{b}.o").read_bytes()), 1, "sha256"),
    "o_group_writable": (lambda d, a, b: os.chmod(d / f"{a}.o", 0o664), 1, "writable by group/other"),
    "json_truncated": (lambda d, a, b: truncate(d / f"{a}.json"), 1, "not valid JSON"),
    "json_garbage": (lambda d, a, b: (d / f"{a}.json").write_bytes(os.urandom(200)), 1, "not valid JSON"),
    "json_swapped": (lambda d, a, b: _swap(d / f"{a}.json", d / f"{b}.json"), 2, "binFileName"),
    "o_and_json_from_other_entry": (
        lambda d, a, b: [(d / f"{a}{s}").write_bytes((d / f"{b}{s}").read_bytes()) for s in (".o", ".json")],
        1, "binFileName"),
    "o_is_symlink": (lambda d, a, b: _symlink_to_copy(d / f"{a}.o"), 1, "cannot read"),
    "o_is_directory": (lambda d, a, b: _replace_by_dir(d / f"{a}.o"), 1, "not a regular file"),
    "info_edited": (lambda d, a, b: edit_json(d / f"{a}.info", _edit_shape), 1, "shape"),
    "info_foreign_host": (lambda d, a, b: edit_json(d / f"{a}.info", _foreign_host), 1, "/host/cpu"),
    # launch facts the runtime relies on come from the kernel's plan; a .json that says otherwise is bad
    "json_cost_edited": (lambda d, a, b: edit_json(d / f"{a}.json", lambda j: j.update(cost=[1, 2])), 1, "'cost'"),
    "json_args_edited": (lambda d, a, b: edit_json(d / f"{a}.json", _first_arg_written), 1, "'args'"),
    "json_is_fifo": (lambda d, a, b: ((d / f"{a}.json").unlink(), os.mkfifo(d / f"{a}.json")), 1,
                     "not a regular file"),
}


@pytest.mark.parametrize("kind", sorted(TAMPERS))
def test_tampered_entry_is_quarantined_and_rebuilt(cache_root, kind):
    tamper, rebuilt, reason = TAMPERS[kind]
    directory = cache_root / "rank_0" / "kernel_meta"
    names = names_by_sig()
    a, b = names[BASE_SIGS[0]], names[BASE_SIGS[1]]
    tamper(directory, a, b)
    cache = KernelCache(cache_root, rank=0)
    with pytest.warns(CacheWarning) as caught:
        kernels = cache.get_many(BASE_SIGS, jobs=1, progress=False)
    messages = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(messages) == rebuilt
    assert any(str(directory / f"{a}.json") in m and reason in m for m in messages), messages
    assert (cache.stats.rebuilt, cache.stats.built) == (rebuilt, 0)
    assert cache.stats.reused == len(BASE_SIGS) - rebuilt
    for s, k in zip(BASE_SIGS, kernels):
        check_kernel(s, k, seed=3)

    quarantined = sorted((directory / ".quarantine").iterdir())
    assert len(quarantined) == rebuilt
    mine = next(q for q in quarantined if q.name.startswith(a + "."))
    assert reason in (mine / "reason.txt").read_text()
    assert {p.name for p in mine.iterdir()} >= {"reason.txt", f"{a}.json"}
    assert all(verdict(directory, n)[0] == "OK" for n in scan(directory).committed)
    # the next run finds a clean cache
    again = KernelCache(cache_root, rank=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        again.get_many(BASE_SIGS, progress=False)
    assert again.stats.reused == len(BASE_SIGS)


# The write protocol's steps; a writer killed after step k leaves the first k steps done.
WRITE_STEPS = [("temp", ".o"), ("final", ".o"), ("temp", ".info"), ("final", ".info"), ("temp", ".json")]


@pytest.mark.parametrize("done", range(1, len(WRITE_STEPS) + 1))
def test_every_interrupted_write_state_recovers(cache_root, done):
    directory = cache_root / "rank_0" / "kernel_meta"
    target = BASE_SIGS[2]
    name = names_by_sig()[target]
    files = {s: (directory / f"{name}{s}").read_bytes() for s in (".o", ".info", ".json")}
    for s in (".json", ".o", ".info"):
        (directory / f"{name}{s}").unlink()
    temps = 0
    for kind, suffix in WRITE_STEPS[:done]:
        temp = directory / f".{name}{suffix}.k1ll3d.tmp"
        if kind == "temp":
            temp.write_bytes(files[suffix][: len(files[suffix]) // 3])
            temps += 1
        else:
            temp.unlink()
            temps -= 1
            (directory / f"{name}{suffix}").write_bytes(files[suffix])
    cache = KernelCache(cache_root, rank=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        kernels = cache.get_many(BASE_SIGS, jobs=1, progress=False)
    assert (cache.stats.built, cache.stats.rebuilt, cache.stats.cleaned) == (1, 0, temps)
    assert not [p for p in directory.iterdir() if p.name.endswith(".tmp")]
    for s, k in zip(BASE_SIGS, kernels):
        check_kernel(s, k, seed=4)


# ------------------------------------------------------------------------------------ child processes

CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    from ascendemu.cache import KernelCache
    from ascendemu.kernels.signature import OpSignature
    root, spec, jobs, mode = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    sigs = [OpSignature.make(op, [(tuple(s), "float32") for s in shapes]) for op, shapes in spec]
    import numba  # noqa: F401  (so that a kill delay counts from the build phase, not from imports)
    cache = KernelCache(root, rank=0)
    print("ready", flush=True)
    if mode == "barrier":
        sys.stdin.readline()
    kernels = cache.get_many(sigs, jobs=jobs, progress=False)
    results = []
    for s, k in zip(sigs, kernels):
        ins = [np.linspace(-2, 2, d.size, dtype=np.float32).reshape(d.shape) for d in s.inputs]
        out = np.zeros(s.inputs[0].shape, np.float32)
        args = k.argv([a.ctypes.data for a in ins + [out]])
        for b in range(k.block_dim):
            k.call_block(args, b)
        results.append(out.ravel().tolist())
    print(json.dumps({"built": cache.stats.built, "reused": cache.stats.reused,
                      "rebuilt": cache.stats.rebuilt, "results": results}), flush=True)
""")


def spec_of(sigs) -> str:
    return json.dumps([(s.op, [list(d.shape) for d in s.inputs]) for s in sigs])


def start_child(root: Path, sigs, jobs: int, mode: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root), spec_of(sigs), str(jobs), mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    line = proc.stdout.readline()
    assert line.strip() == "ready", proc.stderr.read()
    return proc


def check_child_results(sigs, report: dict) -> None:
    for s, got in zip(sigs, report["results"]):
        ins = [np.linspace(-2, 2, d.size, dtype=np.float32).reshape(d.shape) for d in s.inputs]
        np.testing.assert_allclose(np.array(got, np.float32).reshape(s.inputs[0].shape),
                                   NUMPY_OPS[s.op](*ins), rtol=1e-6)


KILL_TRIALS = 10            # bench/bench_reliability.py runs 150 (each trial is a process start, ~2 CPU-s)
# A child is "ready" after its imports; its first compile then takes ~1.8 s (numba's lazy set-up),
# each further one ~0.25 s: kill delays up to KILL_MAX_DELAY_S land in set-up, builds and commits.
KILL_MAX_DELAY_S = 3.0
KILL_SIGS = [sig("Abs", (40,)), sig("Neg", (5, 8)), sig("Square", (44,)), sig("ReLU", (48,)),
             sig("Add", (52,), (52,)), sig("Mul", (7, 8), (7, 8))]


def test_sigkill_at_random_moments_never_leaves_a_broken_entry(tmp_path):
    root = tmp_path / "killed"
    directory = root / "rank_0" / "kernel_meta"
    rng = random.Random(20240601)
    seen = {"killed": 0, "finished": 0, "entries committed": 0, "temp files": 0, "incomplete entries": 0,
            "entries removed": 0}
    for trial in range(KILL_TRIALS):
        before = len(scan(directory).committed) if directory.is_dir() else 0
        sigs = KILL_SIGS[:]
        rng.shuffle(sigs)
        proc = start_child(root, sigs, jobs=2 if trial % 4 == 3 else 1, mode="free")
        time.sleep(rng.uniform(0.0, KILL_MAX_DELAY_S))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)      # the child and any workers it spawned
            seen["killed"] += 1
        else:
            seen["finished"] += 1
        _, err = proc.communicate()
        assert proc.returncode in (0, -signal.SIGKILL), err
        listing = scan(directory)
        seen["entries committed"] += len(listing.committed) - before
        seen["temp files"] += len(listing.temps)
        seen["incomplete entries"] += len(listing.incomplete)
        assert listing.quarantined == []
        for name in listing.committed:               # a committed entry is always whole
            status, reason = verdict(directory, name)
            assert status != "BAD", reason               # (STALE: kernel sources edited meanwhile)
        if len(listing.committed) >= len(KILL_SIGS):  # keep work for the next trial
            for name in rng.sample(listing.committed, 2):
                for suffix in (".json", ".o", ".info"):
                    (directory / f"{name}{suffix}").unlink()
                seen["entries removed"] += 1
    print(f"\nSIGKILL trials: {KILL_TRIALS}; " + ", ".join(f"{k}: {v}" for k, v in seen.items()))

    cache = KernelCache(root, rank=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        kernels = cache.get_many(KILL_SIGS, jobs=1, progress=False)
    assert cache.stats.rebuilt == 0
    for s, k in zip(KILL_SIGS, kernels):
        check_kernel(s, k, seed=5)
    assert not [p for p in directory.iterdir() if p.name.endswith(".tmp")]


CONCURRENT_BUILDERS = 4          # the long run (bench/README.md, reliability) sets more


def test_concurrent_processes_build_each_kernel_once(tmp_path):
    root = tmp_path / "shared"
    sigs = [sig("Abs", (60,)), sig("Neg", (61,)), sig("Square", (62,)), sig("Add", (63,), (63,))]
    children = [start_child(root, sigs, jobs=2 if i % 4 == 3 else 1, mode="barrier")
                for i in range(CONCURRENT_BUILDERS)]
    for proc in children:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    reports = []
    for proc in children:
        out, err = proc.communicate(timeout=SUBPROCESS_TIMEOUT_S)
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(r["built"] for r in reports) == len(sigs)
    assert all(r["built"] + r["reused"] == len(sigs) and r["rebuilt"] == 0 for r in reports)
    log = (root / "rank_0" / "kernel_meta" / ".build.log").read_text().splitlines()
    built_names = [line.split()[3] for line in log]
    assert len(built_names) == len(set(built_names)) == len(sigs)
    for report in reports:
        check_child_results(sigs, report)


def test_build_workers_die_with_a_killed_parent(tmp_path):
    """SIGKILL of the process that asked for a cold build leaves no build worker behind."""
    code = ("import sys\nfrom ascendemu.cache import KernelCache\nfrom ascendemu.kernels.signature import OpSignature\n"
            f"sigs = [OpSignature.make('PopulationCount', [((n, 3), 'int32')]) "
            f"for n in range(100, 140)]\n"     # 40 kernels specialised to their signatures
            f"KernelCache({str(tmp_path)!r}).get_many(sigs, jobs=2, progress=False)\n")
    parent = subprocess.Popen([sys.executable, "-c", code])

    def children() -> list[int]:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(parent.pid)], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    deadline = time.monotonic() + 60
    while len(children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = children()
    assert len(workers) >= 2, "the cold build never started its workers"
    parent.send_signal(signal.SIGKILL)
    parent.wait()

    def alive(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state != "Z"

    deadline = time.monotonic() + 10
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in workers if alive(p)], "build workers outlived their parent"


def test_cache_verify_reports_an_edited_json_and_a_symlinked_quarantine_is_refused(cache_root, tmp_path):
    from ascendemu.cache import CacheSecurityError

    directory = cache_root / "rank_0" / "kernel_meta"
    name = names_by_sig()[BASE_SIGS[0]]
    edit_json(directory / f"{name}.json", lambda j: j.update(blockDim=j["blockDim"]))       # unchanged: OK
    assert verdict(directory, name) == ("OK", "")
    edit_json(directory / f"{name}.json", lambda j: j["cost"].update(bytes=1))
    kind, reason = verdict(directory, name)
    assert kind == "BAD" and "'cost'" in reason
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    quarantine = directory / ".quarantine"
    for p in quarantine.iterdir():
        p.rename(elsewhere / p.name)
    quarantine.rmdir()
    quarantine.symlink_to(elsewhere)
    with pytest.raises(CacheSecurityError, match="symbolic link"):
        KernelCache(cache_root, rank=0)
    assert not list(elsewhere.iterdir())
