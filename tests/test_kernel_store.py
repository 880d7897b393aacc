"""The user's kernel store (cache/store.py, CANN's op compiler cache): a kernel one project built is
imported, not built, by the next project's ranks, with every check a rank's own entries pass; a store
others can write, a foreign entry or ``ACL_OP_COMPILER_CACHE_MODE=disable`` means a build; the store
ages to ``ASCEND_MAX_OP_CACHE_SIZE`` least recently used first, never an entry used in the last half hour."""
from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ascendemu.cache import KernelCache  # noqa: E402
from ascendemu.cache.auth import KEY_FILE_ENV  # noqa: E402
from ascendemu.cache.store import (DIR_ENV, MAX_SIZE_ENV, MIN_IDLE_S, MODE_ENV, REMAIN_RATIO_ENV, STORE_DIR,  # noqa: E402
                                   StoreWarning, age, store_dir)
from ascendemu.errors import InvalidParamError  # noqa: E402

from test_cache import check_kernel, sig  # noqa: E402

SIGS = [sig("Add", (4, 8), (4, 8)), sig("Mul", (32,), (32,))]


@pytest.fixture
def store_env(tmp_path, monkeypatch) -> Path:
    """The store enabled in a directory of this test's (the suite otherwise runs with it disabled)."""
    monkeypatch.setenv(MODE_ENV, "enable")
    monkeypatch.setenv(DIR_ENV, str(tmp_path / "atc"))
    for name in (MAX_SIZE_ENV, REMAIN_RATIO_ENV):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "atc" / STORE_DIR


def statuses(root: Path) -> list[str]:
    log = root / "rank_0" / "kernel_meta" / ".build.log"
    return [line.split()[2] for line in log.read_text().splitlines()]


def test_second_project_imports_what_the_first_built(tmp_path, store_env):
    first = KernelCache(tmp_path / "project_a", rank=0)
    first.get_many(SIGS, jobs=1, progress=False)
    assert (first.stats.built, first.stats.imported) == (2, 0)
    store = store_env / first.soc
    assert len(list(store.glob("*.json"))) == 2 and oct(store.stat().st_mode & 0o777) == "0o700"

    second = KernelCache(tmp_path / "project_b", rank=3, device_id=1)     # another root, rank and device
    kernels = second.get_many(SIGS, jobs=1, progress=False)
    assert (second.stats.built, second.stats.imported) == (0, 2)
    for s, k in zip(SIGS, kernels):
        check_kernel(s, k)                                  # the imported objects compute what numpy does
    log = (tmp_path / "project_b" / "rank_3" / "kernel_meta" / ".build.log").read_text()
    assert log.count(f"from {store}") == 2
    third = KernelCache(tmp_path / "project_b", rank=3, device_id=1)      # now the rank's own entries
    third.get_many(SIGS, jobs=1, progress=False)
    assert (third.stats.reused, third.stats.imported, third.stats.built) == (2, 0, 0)


def test_disabled_store_is_neither_read_nor_written(tmp_path, store_env, monkeypatch):
    KernelCache(tmp_path / "a", rank=0).get_many(SIGS[:1], jobs=1, progress=False)
    monkeypatch.setenv(MODE_ENV, "disable")
    assert store_dir("Ascend910A") is None
    cache = KernelCache(tmp_path / "b", rank=0)
    cache.get_many(SIGS, jobs=1, progress=False)
    assert (cache.stats.built, cache.stats.imported) == (2, 0)
    assert len(list((store_env / cache.soc).glob("*.json"))) == 1     # nothing more written
    monkeypatch.setenv(MODE_ENV, "force")
    with pytest.raises(InvalidParamError, match="ACL_OP_COMPILER_CACHE_MODE='force'"):
        KernelCache(tmp_path / "c", rank=0)                 # refused when the cache is made, not in a build
    monkeypatch.setenv(MODE_ENV, "enable")
    monkeypatch.setenv(MAX_SIZE_ENV, "lots")
    with pytest.raises(InvalidParamError, match="ASCEND_MAX_OP_CACHE_SIZE='lots' is not an integer"):
        KernelCache(tmp_path / "c", rank=0)


def test_store_others_can_write_is_not_used_and_foreign_entries_are_not_loaded(tmp_path, store_env, monkeypatch):
    first = KernelCache(tmp_path / "a", rank=0)
    first.get_many(SIGS[:1], jobs=1, progress=False)
    store = store_env / first.soc
    store.chmod(0o777)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = KernelCache(tmp_path / "b", rank=0)
        cache.get_many(SIGS[:1], jobs=1, progress=False)
    assert (cache.stats.built, cache.stats.imported) == (1, 0)       # built, not taken from there
    assert any(issubclass(w.category, StoreWarning) and "writable by group/other" in str(w.message)
               for w in caught)
    store.chmod(0o700)
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "other_user.key"))     # another user's key
    foreign = KernelCache(tmp_path / "c", rank=0)
    foreign.get_many(SIGS[:1], jobs=1, progress=False)
    assert (foreign.stats.built, foreign.stats.imported) == (1, 0)
    assert statuses(tmp_path / "c") == ["built"]


def _entry(store: Path, name: str, size: int, used: float) -> None:
    for suffix, n in ((".o", size - 2), (".info", 1), (".json", 1)):
        (store / f"{name}{suffix}").write_bytes(b"x" * n)
    os.utime(store / f"{name}.json", (used, used))


def test_ageing_keeps_the_share_and_never_a_recent_entry(tmp_path, monkeypatch):
    store = tmp_path / "store"
    (store / ".locks").mkdir(parents=True, mode=0o700)
    mb = 2 ** 20
    now = time.time()
    old = now - 2 * MIN_IDLE_S
    for i in range(6):                                   # 6 MB of entries, e0 the least recently used
        _entry(store, f"e{i}", mb, old + i)
    _entry(store, "recent", mb, now - 60)
    monkeypatch.setenv(MAX_SIZE_ENV, "4")
    monkeypatch.setenv(REMAIN_RATIO_ENV, "50")
    assert age(store, wrote=mb, now=now) == ["e0", "e1", "e2", "e3", "e4"]    # 7 MB -> 2 MB kept
    assert sorted(p.stem for p in store.glob("*.json")) == ["e5", "recent"]
    for i in range(5):
        _entry(store, f"f{i}", mb, now - 10)             # over the cap, but all used recently
    assert age(store, wrote=1000, now=now) == []         # under a tenth of the cap written since: not looked at
    assert age(store, wrote=mb, now=now) == ["e5"]       # 7 MB: the idle one goes, the recent ones stay over the cap
    monkeypatch.setenv(MAX_SIZE_ENV, "-1")
    _entry(store, "g", mb, old)
    assert age(store, wrote=50 * mb, now=now) == []      # -1: never aged
    for bad, name in (("0", MAX_SIZE_ENV), ("x", MAX_SIZE_ENV), ("101", REMAIN_RATIO_ENV)):
        monkeypatch.setenv(MAX_SIZE_ENV, "4")
        monkeypatch.setenv(name, bad)
        with pytest.raises(InvalidParamError, match=name):
            age(store, wrote=1, now=now)


def test_cache_cli_lists_verifies_and_clears_the_store(tmp_path, store_env, capsys):
    from ascendemu.cache.cli import main as cache_cli

    cache = KernelCache(tmp_path / "a", rank=0)
    cache.get_many(SIGS[:1], jobs=1, progress=False)
    store = store_env / cache.soc
    assert cache_cli(["verify", "--store"]) == 0
    out = capsys.readouterr().out
    assert f"{store}:" in out and "1 entries: 1 OK, 0 BAD" in out
    assert cache_cli(["clear", "--store"]) == 0 and not list(store.glob("*.json"))
    assert cache_cli(["import", "x.tar", "--store"]) == 2           # imports go into a rank: a usage error
    capsys.readouterr()
