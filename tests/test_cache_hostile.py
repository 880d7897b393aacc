"""The kernel and graph caches hold their ground against hostile files (issue h2).

* Build locks: a symlink, hard link or FIFO planted where a lock file goes, or a lock directory that is
  a symlink or another user's, is refused; the file a planted link points to is left byte for byte as
  it was (it used to be truncated by a cold build). Lock files are never truncated, and the
  machine-wide locks live in ``rank_0/``, so a run in the working directory adds nothing but ``rank_N/``.
* ``cache import`` refuses entries another key made unless ``--trust-foreign-code`` is given, so a
  consistent object with someone else's code never runs by default.
* ``cache import`` reads archives in bounded memory: members over the size limits, or tar headers
  that would make tarfile read hundreds of MiB, are refused from their headers (peak RSS measured).
* A directory where a graph cache entry goes costs a recompile and a warning, never the run.
"""
from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascendemu.cache import CacheSecurityError, KernelCache  # noqa: E402
from ascendemu.cache.archive import MAX_ARCHIVE_BYTES, MAX_HEADER_BYTES  # noqa: E402
from ascendemu.cache.auth import MAC_FIELD, CacheKey, sign_entry  # noqa: E402
from ascendemu.cache.cli import main as cache_cli  # noqa: E402
from ascendemu.cache.entry import device_free  # noqa: E402
from ascendemu.cache.layout import machine_locks_dir  # noqa: E402
from ascendemu.cache.locks import EntryLock  # noqa: E402
from ascendemu.graph.graph_cache import GraphCache, GraphCacheWarning  # noqa: E402
from ascendemu.graph.plan import compile_graph  # noqa: E402
from ascendemu.hal.binary import KERNEL_SUFFIX, KernelBinary, MAX_FILE_BYTES, read_binary  # noqa: E402
from ascendemu.kernels.binary import build_info  # noqa: E402
from ascendemu.kernels.library import plan_kernel  # noqa: E402

from test_cache import BASE_SIGS, cache_root, check_kernel  # noqa: E402,F401 (cache_root: fixture)
from test_cache_auth import (WANT, _entry, _graph, _run, graph_base, graph_root, planted_object,  # noqa: E402,F401
                             run_cli)
from test_cache_faults import names_by_sig  # noqa: E402

VICTIM_TEXT = b"precious data\n"
# What an import may cost above a trivial one (both measured): far below what the hostile archives
# below would cost if read (1 GiB of members, a 512 MiB pax header).
IMPORT_RSS_MARGIN_MIB = 128


# ------------------------------------------------------------------------------------------ locks

def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(VICTIM_TEXT)
    return victim


PLANTS = {
    "symlink": (lambda lock, victim: lock.symlink_to(victim), "cannot open the lock file"),
    "hard link": (lambda lock, victim: os.link(victim, lock), "2 links"),
    "fifo": (lambda lock, victim: os.mkfifo(lock), "not a regular file"),
}


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_planted_lock_file_is_refused_and_its_target_untouched(tmp_path, kind):
    plant, reason = PLANTS[kind]
    victim = _victim(tmp_path)
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o700)
    lock = locks / "k.lock"
    plant(lock, victim)
    with pytest.raises(CacheSecurityError, match=reason) as err:
        EntryLock(lock, timeout=1).acquire()
    assert str(lock) in err.value.message and "remove it" in err.value.message
    assert victim.read_bytes() == VICTIM_TEXT


def test_lock_directory_that_is_a_symlink_or_writable_by_others_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    linked = tmp_path / "linked"
    linked.symlink_to(real)
    with pytest.raises(CacheSecurityError, match="as a real directory"):
        EntryLock(linked / "k.lock").acquire()
    os.chmod(real, 0o777)
    with pytest.raises(CacheSecurityError, match=f"chmod go-w {real}"):
        EntryLock(real / "k.lock").acquire()
    assert list(real.iterdir()) == []                                  # nothing created in either


def test_existing_lock_file_is_never_truncated(tmp_path):
    lock = tmp_path / "k.lock"
    lock.write_bytes(b"x" * 100)
    os.chmod(lock, 0o600)
    with EntryLock(lock):
        assert lock.read_bytes()[:20].decode().strip() == str(os.getpid())
        assert lock.stat().st_size == 100
    assert lock.stat().st_size == 100 and lock.read_bytes()[20:] == b"x" * 80


def _cold_name(root: Path) -> str:
    """The kernel name of the first base signature for rank 0, device 0 (what a cold build locks)."""
    return build_info(plan_kernel(BASE_SIGS[0]), 0, KernelCache(root, rank=0).soc)["job_content"]["fusion_op_name"]


@pytest.mark.parametrize("kind", ["symlink", "hard link"])
def test_cold_build_refuses_a_planted_machine_lock(tmp_path, kind):
    """The attack of the issue, through the cache: a link where the machine-wide lock of the kernel
    goes; the build is refused with the reason and the victim keeps its bytes."""
    root = tmp_path / "root"
    victim = _victim(tmp_path)
    name = _cold_name(root)
    locks = machine_locks_dir(root / "rank_0" / "kernel_meta")
    locks.mkdir(mode=0o700, parents=True, exist_ok=True)
    PLANTS[kind][0](locks / f"{device_free(name)}.lock", victim)
    cache = KernelCache(root, rank=0)
    with pytest.raises(CacheSecurityError, match=PLANTS[kind][1]):
        cache.get_many(BASE_SIGS[:1], jobs=1, progress=False)
    assert victim.read_bytes() == VICTIM_TEXT
    assert not (root / "rank_0" / "kernel_meta" / f"{name}.json").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a directory to another user")
def test_machine_lock_directory_of_another_user_is_refused(tmp_path):
    root = tmp_path / "root"
    victim = _victim(tmp_path)
    name = _cold_name(root)
    locks = machine_locks_dir(root / "rank_0" / "kernel_meta")
    locks.mkdir(mode=0o700, parents=True, exist_ok=True)
    (locks / f"{device_free(name)}.lock").symlink_to(victim)
    os.lchown(locks / f"{device_free(name)}.lock", 12345, 12345)
    os.chown(locks, 12345, 12345)
    cache = KernelCache(root, rank=0)
    with pytest.raises(CacheSecurityError, match="owned by uid 12345"):
        cache.get_many(BASE_SIGS[:1], jobs=1, progress=False)
    assert victim.read_bytes() == VICTIM_TEXT


def test_machine_locks_live_in_rank_0_not_in_the_root(cache_root):
    """A second rank takes the machine-wide lock to copy rank 0's kernel: the root (the working
    directory by default) holds nothing but the rank directories afterwards."""
    cache = KernelCache(cache_root, rank=1, device_id=1)
    kernel = cache.get(BASE_SIGS[0])
    assert cache.stats.imported == 1
    check_kernel(BASE_SIGS[0], kernel)
    assert sorted(p.name for p in cache_root.iterdir()) == ["rank_0", "rank_1"]
    assert any((cache_root / "rank_0" / ".locks").glob("*.lock"))


# ------------------------------------------------------------------------------- foreign imports

def _foreign_archive(cache_root: Path, tmp_path: Path, marker: Path) -> tuple[Path, str, bytes]:
    """A tar of one entry that is consistent in every way (sha256, ELF, .info, launch facts) but made
    with another key, whose code would create ``marker``; with the entry's name and object."""
    directory = cache_root / "rank_0" / "kernel_meta"
    name = names_by_sig()[BASE_SIGS[0]]
    genuine = read_binary(directory, name)
    obj, undefined = planted_object(name + KERNEL_SUFFIX, genuine.json["blockDim"], marker)
    doc = {k: v for k, v in genuine.json.items() if k != MAC_FIELD}
    doc.update(sha256=hashlib.sha256(obj).hexdigest(), undefinedSymbols=undefined)
    planted = sign_entry(KernelBinary(name, obj, doc, genuine.info), CacheKey(tmp_path / "their.key", os.urandom(32)))
    archive = tmp_path / "from_elsewhere.tar"
    with tarfile.open(archive, "w") as tar:
        for suffix, data in planted.files().items():
            member = tarfile.TarInfo(f"{name}{suffix}")
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    return archive, name, obj


def test_import_refuses_another_keys_code_unless_trusted_by_name(cache_root, tmp_path, capsys):
    marker = tmp_path / "foreign_code_ran"
    archive, name, obj = _foreign_archive(cache_root, tmp_path, marker)
    fresh = tmp_path / "fresh"
    code, out = run_cli(capsys, "import", archive, "--root", fresh)
    assert code == 1
    assert f"refused {name}: made with another key" in out and "--trust-foreign-code" in out
    assert "0 imported, 0 already present, 1 refused (1 made with another key" in out
    assert not (fresh / "rank_0" / "kernel_meta" / f"{name}.json").exists()
    cache = KernelCache(fresh, rank=0)
    kernel = cache.get_many(BASE_SIGS[:1], jobs=1, progress=False)[0]
    assert (cache.stats.built, cache.stats.reused) == (1, 0)           # built here, not the archive's
    check_kernel(BASE_SIGS[0], kernel, seed=3)
    assert not marker.exists()

    trusted = tmp_path / "trusted"
    code = cache_cli(["import", str(archive), "--root", str(trusted), "--trust-foreign-code"])
    captured = capsys.readouterr()
    assert code == 0 and f"imported {name} (made with another key" in captured.out
    assert f"WARNING: --trust-foreign-code: {name} was made with another key" in captured.err
    assert read_binary(trusted / "rank_0" / "kernel_meta", name).obj == obj     # what the flag asked for

    code = cache_cli(["import", str(archive), "--root", str(trusted), "--trust-foreign-code", "--same-key-only"])
    assert code == 2 and "contradicts --same-key-only" in capsys.readouterr().err


# ------------------------------------------------------------------------------ archive memory

def _sparse_tar(path: Path, members: list[tarfile.TarInfo]) -> None:
    """A tar file of ``members`` whose data are holes (the sizes their headers declare, read as zeros
    and costing no disk): the archive a hostile exporter hands over, made in no time."""
    with open(path, "wb") as f:
        for member in members:
            f.write(member.tobuf(tarfile.GNU_FORMAT))
            f.seek(-(-member.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE, os.SEEK_CUR)
        f.write(bytes(2 * tarfile.BLOCKSIZE))


def _member(name: str, size: int, kind: bytes = tarfile.REGTYPE) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.size, member.type, member.mode = size, kind, 0o600
    return member


RSS_SCRIPT = ("import resource, sys; from ascendemu.cache.cli import main; main(sys.argv[1:]); "
              "print('peak MiB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)")


def _import_peak(archive: Path, root: Path) -> tuple[int, str]:
    """Peak RSS (MiB) of `ascendemu cache import archive` in a process of its own, and what it said."""
    proc = subprocess.run([sys.executable, "-c", RSS_SCRIPT, "import", str(archive), "--root", str(root)],
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    *said, peak = proc.stdout.strip().splitlines()
    return int(peak.split()[-1]), "\n".join(said) + proc.stderr


BOMBS = {   # name -> (members, what the refusal names)
    "members over the total": ([_member(f"k{i}.o", MAX_FILE_BYTES[".o"]) for i in range(24)],
                               "'k16.o' hold 1.06 GiB, over the 1.00 GiB limit (MAX_ARCHIVE_BYTES)"),
    "pax header of 512 MiB": ([_member("././@PaxHeader", 512 << 20, tarfile.XHDTYPE), _member("a_1_0.o", 4)],
                              "would read 536870912 bytes, over the"),
    "GNU long name of 512 MiB": ([_member("././@LongLink", 512 << 20, tarfile.GNUTYPE_LONGNAME),
                                  _member("a_1_0.o", 4)], "a tar header bomb"),
}


@pytest.mark.parametrize("kind", sorted(BOMBS))
def test_import_bomb_is_refused_from_its_headers_in_bounded_memory(tmp_path, kind):
    assert MAX_ARCHIVE_BYTES < 24 * MAX_FILE_BYTES[".o"] and MAX_HEADER_BYTES < 512 << 20
    members, reason = BOMBS[kind]
    tiny, bomb = tmp_path / "tiny.tar", tmp_path / "bomb.tar"
    _sparse_tar(tiny, [_member("a_1_0.o", 4)])
    _sparse_tar(bomb, members)
    baseline, _ = _import_peak(tiny, tmp_path / "a")
    peak, said = _import_peak(bomb, tmp_path / "b")
    assert f"refused {bomb}: " in said and reason in said and "nothing imported" in said, said
    assert peak < baseline + IMPORT_RSS_MARGIN_MIB, (peak, baseline)
    assert not (tmp_path / "b" / "rank_0").exists()


def test_member_over_its_size_limit_is_refused_by_name(tmp_path, capsys):
    archive = tmp_path / "big.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b" " * (MAX_FILE_BYTES[".json"] + 1)
        member = _member("add_1_0.json", len(data))
        tar.addfile(member, io.BytesIO(data))
    code, out = run_cli(capsys, "import", archive, "--root", tmp_path / "root")
    assert code == 1 and f"member 'add_1_0.json' has {len(data)} bytes, over the {len(data) - 1}-byte limit" in out


# ------------------------------------------------------------------------------------ graph cache

def test_directory_in_place_of_a_graph_entry_is_moved_aside_and_recompiled(graph_root):
    entry = _entry(graph_root, "O2")
    entry.unlink()
    entry.mkdir()
    (entry / "keep.txt").write_text("not ours")
    with pytest.warns(GraphCacheWarning, match="the directory in its place moved to") as caught:
        out, executor = _run(graph_root, "O2")
    np.testing.assert_allclose(out, WANT, rtol=1e-6)
    assert (executor.graph_cache.hits, executor.graphs_compiled) == (0, 1)
    (warning,) = [w for w in caught if issubclass(w.category, GraphCacheWarning)]
    (aside,) = entry.parent.glob(f".{entry.name}.*.bad")
    assert str(aside) in str(warning.message) and (aside / "keep.txt").read_text() == "not ours"
    assert entry.is_file()
    with warnings.catch_warnings():                                    # written again: the next run hits
        warnings.simplefilter("error", GraphCacheWarning)
        out, executor = _run(graph_root, "O2")
    assert (executor.graph_cache.hits, executor.graphs_compiled) == (1, 0)
    np.testing.assert_allclose(out, WANT, rtol=1e-6)


def test_graph_entry_that_cannot_be_written_is_a_warning(tmp_path):
    compiled = compile_graph(_graph(), "O1")
    cache = GraphCache(tmp_path, rank=0)
    (cache.directory / f"{compiled.cache_name}.json").mkdir(parents=True)      # planted after the load
    with pytest.warns(GraphCacheWarning, match="the graph runs uncached"):
        assert cache.store(compiled) is None
    assert (cache.directory / f"{compiled.cache_name}.json").is_dir()
    assert [p.name for p in cache.directory.iterdir()] == [f"{compiled.cache_name}.json"]   # no temp left
