"""Authenticity of the kernel and graph caches (issue 8, items 4-7).

A cache entry runs only if this user's key made its MAC: a consistent object planted by someone else
is rebuilt, never run (the planted code would create a marker file); the key file must be private;
``cache export/import`` re-verifies entries from another key. A graph cache entry is authenticated
the same way and checked before use (memory plan, kernels, schedule), so a bad one is recompiled
and the outputs still match numpy. Malformed graph entries (FIFO, huge, deeply nested) and symlinked
cache directories are refused, never followed.
"""
from __future__ import annotations

import ctypes
import hashlib
import io
import json
import os
import shutil
import stat
import sys
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascendemu.cache import CacheSecurityError, CacheWarning, KernelCache  # noqa: E402
from ascendemu.cache.auth import (KEY_FILE_ENV, MAC_FIELD, CacheKey, CacheKeyError, key_path, load_key,  # noqa: E402
                                  sign_entry)
from ascendemu.cache.cli import main as cache_cli, verdict  # noqa: E402
from ascendemu.errors import InvalidParamError  # noqa: E402
from ascendemu.frontend import Tensor, capture, set_seed  # noqa: E402
from ascendemu.graph.executor import DeviceExecutor  # noqa: E402
from ascendemu.graph.graph_cache import GraphCacheWarning, check_compiled  # noqa: E402
from ascendemu.graph.ir import Graph  # noqa: E402
from ascendemu.graph.plan import compile_graph  # noqa: E402
from ascendemu.graph.schedule import Wait  # noqa: E402
from ascendemu.hal.binary import KERNEL_SUFFIX, KernelBinary, read_binary  # noqa: E402
from ascendemu.hal.runtime import get_runtime  # noqa: E402
from ascendemu.kernels.signature import TensorDesc  # noqa: E402
from examples.networks import BasicBlock, LeNet5, TransformerEncoderLayer  # noqa: E402

from test_cache import BASE_SIGS, cache_root, check_kernel  # noqa: E402,F401 (cache_root: fixture)
from test_cache_faults import names_by_sig  # noqa: E402


def run_cli(capsys, *argv) -> tuple[int, str]:
    code = cache_cli([str(a) for a in argv])
    return code, capsys.readouterr().out


# ------------------------------------------------------------------------------ kernel entries

def planted_object(symbol: str, block_dim: int, marker: Path) -> tuple[bytes, list[str]]:
    """A kernel object that, when run, creates ``marker`` through libc at an absolute address: no
    undefined symbol, so the loader's allowlist cannot see it (the issue's raw-syscall object)."""
    from ascendemu.hal.meta import encode_meta
    from ascendemu.kernels.codegen import compile_object

    creat = ctypes.CDLL(None).creat
    creat.argtypes, creat.restype = (ctypes.c_uint64, ctypes.c_int), ctypes.c_int
    path = np.frombuffer(str(marker).encode() + b"\0", np.uint8).copy()

    def kernel(args, block_idx, block_dim):
        creat(path.ctypes.data, 0o600)

    return compile_object(kernel, symbol, encode_meta(block_dim))


@pytest.mark.parametrize("mac", ["none", "another key"])
def test_planted_consistent_object_is_rebuilt_never_run(cache_root, tmp_path, capsys, mac):
    directory = cache_root / "rank_0" / "kernel_meta"
    target = BASE_SIGS[0]
    name = names_by_sig()[target]
    marker = tmp_path / "planted_code_ran"
    genuine = read_binary(directory, name)
    obj, undefined = planted_object(name + KERNEL_SUFFIX, genuine.json["blockDim"], marker)
    assert undefined == []
    forged = {k: v for k, v in genuine.json.items() if k != MAC_FIELD}
    forged.update(sha256=hashlib.sha256(obj).hexdigest(), undefinedSymbols=undefined)
    planted = KernelBinary(name, obj, forged, genuine.info)
    if mac == "another key":
        planted = sign_entry(planted, CacheKey(tmp_path / "their.key", os.urandom(32)))
    for suffix, data in planted.files().items():
        (directory / f"{name}{suffix}").write_bytes(data)

    # sha256, ELF, symbols, .info identity and plan all agree: only the MAC tells it apart
    status, reason = verdict(directory, name)
    assert status == "BAD" and "foreign" in reason
    code, out = run_cli(capsys, "verify", "--root", cache_root)
    assert code == 1 and f"BAD   {name}: " in out and "1 BAD" in out
    _, out = run_cli(capsys, "ls", "--root", cache_root)
    assert "FOREIGN" in next(line for line in out.splitlines() if name in line)

    cache = KernelCache(cache_root, rank=0)
    with pytest.warns(CacheWarning, match="foreign") as caught:
        kernels = cache.get_many(BASE_SIGS, jobs=1, progress=False)
    assert [str(w.message) for w in caught if name in str(w.message)]
    assert (cache.stats.rebuilt, cache.stats.reused) == (1, len(BASE_SIGS) - 1)
    for s, k in zip(BASE_SIGS, kernels):
        check_kernel(s, k, seed=7)                 # runs every loaded kernel, the rebuilt one included
    assert not marker.exists(), "the planted object ran"
    assert (directory / f"{name}.o").read_bytes() != obj
    (moved,) = (directory / ".quarantine").iterdir()
    assert (moved / f"{name}.o").read_bytes() == obj and "foreign" in (moved / "reason.txt").read_text()
    assert verdict(directory, name) == ("OK", "")


def test_key_file_is_private_and_unsafe_key_files_are_refused(tmp_path, monkeypatch):
    path = tmp_path / "config" / "ascendemu" / "cache.key"
    monkeypatch.setenv(KEY_FILE_ENV, str(path))
    key = load_key()
    assert key.path == path and len(key.secret) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert bytes.fromhex(path.read_text().strip()) == key.secret
    assert load_key().secret == key.secret                       # made once, then read
    assert key.secret.hex() not in repr(key)                     # never in a log or a traceback

    os.chmod(path, 0o644)
    with pytest.raises(CacheKeyError) as err:
        KernelCache(tmp_path / "root")
    assert err.value.code == 107000 and str(path) in err.value.message and f"chmod 600 {path}" in err.value.message
    assert "644" in err.value.message
    os.chmod(path, 0o600)

    other = tmp_path / "elsewhere.key"
    other.write_text(key.secret.hex())
    os.chmod(other, 0o600)
    link = tmp_path / "link.key"
    link.symlink_to(other)
    monkeypatch.setenv(KEY_FILE_ENV, str(link))
    with pytest.raises(CacheKeyError, match="symbolic link"):
        load_key()
    garbage = tmp_path / "garbage.key"
    garbage.write_text("not a key\n")
    os.chmod(garbage, 0o600)
    monkeypatch.setenv(KEY_FILE_ENV, str(garbage))
    with pytest.raises(CacheKeyError, match="hex digits"):
        load_key()
    if os.geteuid() == 0:                       # only root can give a file away
        os.chown(other, 12345, -1)
        monkeypatch.setenv(KEY_FILE_ENV, str(other))
        with pytest.raises(CacheKeyError, match="owned by uid 12345"):
            load_key()

    monkeypatch.delenv(KEY_FILE_ENV)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert key_path() == tmp_path / "xdg" / "ascendemu" / "cache.key"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")                 # invalid per XDG: ignored
    assert key_path() == Path.home() / ".config" / "ascendemu" / "cache.key"


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> None:
    with tarfile.open(path, "w") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)


def test_export_import_round_trip_to_another_key_and_a_tampered_entry(cache_root, tmp_path, monkeypatch, capsys):
    names = sorted(names_by_sig().values())
    archive = tmp_path / "kernels.tar.gz"
    code, out = run_cli(capsys, "export", archive, "--root", cache_root)
    assert code == 0 and f"exported {len(names)} entries" in out
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == sorted(f"{n}{s}" for n in names for s in (".info", ".json", ".o"))

    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "other_machine.key"))       # another user's key
    fresh = tmp_path / "fresh"
    code, out = run_cli(capsys, "import", archive, "--root", fresh, "--rank", 0, "--same-key-only")
    assert code == 1 and f"0 imported, 0 already present, {len(names)} refused" in out
    code, out = run_cli(capsys, "import", archive, "--root", fresh, "--rank", 0)      # refusing is the default
    assert code == 1 and f"0 imported, 0 already present, {len(names)} refused ({len(names)} made with" in out

    code, out = run_cli(capsys, "import", archive, "--root", fresh, "--rank", 0, "--trust-foreign-code")
    assert code == 0 and f"{len(names)} imported, 0 already present, 0 refused" in out
    assert out.count("re-verified in full") == len(names)
    code, out = run_cli(capsys, "verify", "--root", fresh)
    assert code == 0 and f"{len(names)} OK, 0 BAD" in out
    cache = KernelCache(fresh, rank=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        kernels = cache.get_many(BASE_SIGS, progress=False)
    assert (cache.stats.reused, cache.stats.built) == (len(BASE_SIGS), 0)
    for s, k in zip(BASE_SIGS, kernels):
        check_kernel(s, k, seed=8)
    code, out = run_cli(capsys, "import", archive, "--root", fresh, "--rank", 0)
    assert code == 0 and f"0 imported, {len(names)} already present" in out

    # one entry's object altered in the archive: refused with the reason, the others imported
    victim = names[0]
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    tampered = tmp_path / "tampered.tar"
    altered = []
    for m, data in members:
        if m.name == f"{victim}.o":
            data = data[:len(data) // 2] + bytes([data[len(data) // 2] ^ 0x20]) + data[len(data) // 2 + 1:]
        altered.append((m, data))
    _tar(tampered, altered)
    target = tmp_path / "third"
    code, out = run_cli(capsys, "import", tampered, "--root", target, "--trust-foreign-code")
    assert code == 1 and f"{len(names) - 1} imported, 0 already present, 1 refused" in out
    assert "sha256" in next(line for line in out.splitlines() if f"refused {victim}" in line)
    kernel_meta = target / "rank_0" / "kernel_meta"
    assert not (kernel_meta / f"{victim}.json").exists() and (kernel_meta / f"{names[1]}.json").exists()


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o600
    return info


UNSAFE_ARCHIVES = {
    "path traversal": [(_member("../escaped.o"), b"\x7fELF")],
    "absolute path": [(_member("/tmp/escaped.o"), b"\x7fELF")],
    "subdirectory": [(_member("sub/add_1_0.o"), b"\x7fELF")],
    "symlink": [(_member("add_1_0.o", tarfile.SYMTYPE, "/etc/passwd"), None)],
    "hard link": [(_member("add_1_0.json"), b"{}"), (_member("add_1_0.o", tarfile.LNKTYPE, "add_1_0.json"), None)],
    "device": [(_member("add_1_0.o", tarfile.CHRTYPE), None)],
    "fifo": [(_member("add_1_0.o", tarfile.FIFOTYPE), None)],
    "directory": [(_member("add_1_0", tarfile.DIRTYPE), None)],
    "other file": [(_member("add_1_0.sh"), b"#!/bin/sh\n")],
}


@pytest.mark.parametrize("kind", sorted(UNSAFE_ARCHIVES))
def test_unsafe_archive_is_refused_whole(tmp_path, capsys, kind):
    archive = tmp_path / "evil.tar"
    _tar(archive, UNSAFE_ARCHIVES[kind])
    root = tmp_path / "work" / "root"
    code, out = run_cli(capsys, "import", archive, "--root", root)
    assert code == 1 and f"refused {archive}" in out and "nothing imported" in out
    assert not (root / "rank_0").exists()
    assert not (tmp_path / "work" / "escaped.o").exists() and not Path("/tmp/escaped.o").exists()


def test_symlinked_quarantine_is_refused_at_run_time_and_by_verify(cache_root, tmp_path, capsys):
    directory = cache_root / "rank_0" / "kernel_meta"
    cache = KernelCache(cache_root, rank=0)               # the directories were fine when it started
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (directory / ".quarantine").rmdir()
    (directory / ".quarantine").symlink_to(elsewhere)
    name = names_by_sig()[BASE_SIGS[1]]
    (directory / f"{name}.json").write_text("{")
    with pytest.raises(CacheSecurityError, match="symbolic link"):
        cache.get_many(BASE_SIGS, jobs=1, progress=False)
    assert list(elsewhere.iterdir()) == []
    code, out = run_cli(capsys, "verify", "--root", cache_root)
    assert code == 1 and f"INSECURE {directory / '.quarantine'} is a symbolic link" in out


# ------------------------------------------------------------------------------- graph entries

def _graph() -> Graph:
    """exp(x), transposed, negated: at O2 the Exp and Transpose outputs are alive together, so a
    plan that overlaps them computes garbage (Transpose in place)."""
    g = Graph("auth_net")
    x = g.add_input(TensorDesc((8, 16)))
    a = g.add_node("Exp", [x]).outputs[0]
    t = g.add_node("Transpose", [a], {"perm": (1, 0)}).outputs[0]
    g.outputs = [g.add_node("Neg", [t]).outputs[0]]
    return g


X = np.random.default_rng(11).standard_normal((8, 16)).astype(np.float32)
WANT = -np.exp(X).T


def _run(root: Path, level: str) -> tuple[np.ndarray, DeviceExecutor]:
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    executor = DeviceExecutor(cache_root=str(root), progress=False)
    try:
        (out,) = executor.run_graph(_graph(), [X], level)
    finally:
        rt.finalize()
    return out, executor


@pytest.fixture(scope="module")
def graph_base(tmp_path_factory) -> Path:
    """A cache root holding the kernels and the O1 and O2 graph entries of _graph()."""
    root = tmp_path_factory.mktemp("graph_base")
    for level in ("O1", "O2"):
        out, _ = _run(root, level)
        np.testing.assert_allclose(out, WANT, rtol=1e-6)
    return root


@pytest.fixture
def graph_root(graph_base, tmp_path) -> Path:
    root = tmp_path / "graphs"
    shutil.copytree(graph_base, root, symlinks=True)
    return root


def _entry(root: Path, level: str) -> Path:
    (path,) = (root / "rank_0" / "graph_cache").glob(f"*_{level}_*.json")
    return path


def _resign(path: Path, change) -> None:
    """Edit a graph entry and sign it again with this user's key: what a buggy writer would leave."""
    doc = json.loads(path.read_text())
    change(doc)
    doc.pop(MAC_FIELD, None)
    doc[MAC_FIELD] = load_key().graph_mac(path.stem, doc)
    path.write_text(json.dumps(doc))


def _expect_recompiled(root: Path, level: str, reason: str) -> None:
    entry = _entry(root, level)
    with pytest.warns(GraphCacheWarning, match=reason) as caught:
        out, executor = _run(root, level)
    (warning,) = [w for w in caught if issubclass(w.category, GraphCacheWarning)]
    assert str(entry) in str(warning.message)
    assert (executor.graph_cache.hits, executor.graphs_compiled) == (0, 1)
    np.testing.assert_allclose(out, WANT, rtol=1e-6)
    with warnings.catch_warnings():                      # rewritten whole: the next run hits
        warnings.simplefilter("error", GraphCacheWarning)
        out, executor = _run(root, level)
    assert (executor.graph_cache.hits, executor.graphs_compiled) == (1, 0)
    np.testing.assert_allclose(out, WANT, rtol=1e-6)


def _free_too_early(doc: dict) -> None:
    """Free the first kernel's output right after it runs, before the next kernel reads it."""
    first = doc["kernels"][0]
    doc["release_after"] = {node: [v for v in values if v != first["outputs"][0]]
                            for node, values in doc["release_after"].items()}
    doc["release_after"][str(first["node_id"])].append(first["outputs"][0])


SIGNED_BUT_WRONG = {
    "zeroed offsets": ("O2", lambda d: d.update(offsets={v: 0 for v in d["offsets"]}), "overlap"),
    "empty kernel list": ("O2", lambda d: d.update(kernels=[], schedule=[]), "computed by no kernel"),
    "freed too early": ("O1", _free_too_early, "before its last reader"),
}


@pytest.mark.parametrize("kind", sorted(SIGNED_BUT_WRONG))
def test_signed_graph_entry_that_is_wrong_is_recompiled(graph_root, kind):
    level, change, reason = SIGNED_BUT_WRONG[kind]
    _resign(_entry(graph_root, level), change)
    _expect_recompiled(graph_root, level, reason)


def _edit(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


UNAUTHENTIC = {
    "no MAC": lambda d: d.pop(MAC_FIELD),
    "edited after signing": lambda d: d.update(lower_bound=d["lower_bound"] + 512),
    "another key's MAC": lambda d: d.update({MAC_FIELD: CacheKey(Path("k"), os.urandom(32)).graph_mac("x", d)}),
}


@pytest.mark.parametrize("kind", sorted(UNAUTHENTIC))
def test_graph_entry_without_this_users_mac_is_recompiled(graph_root, kind):
    _edit(_entry(graph_root, "O2"), UNAUTHENTIC[kind])
    _expect_recompiled(graph_root, "O2", "foreign")


def _nested(p: Path) -> None:
    p.write_text("[" * 200_000 + "]" * 200_000)


MALFORMED = {
    "fifo": (lambda p: (p.unlink(), os.mkfifo(p)), "not a regular file"),
    "huge": (lambda p: os.truncate(p, (64 << 20) + 1), "over the"),
    "deeply nested": (_nested, "RecursionError"),
    "not an object": (lambda p: p.write_text("[1, 2]"), "not an object"),
    "symlink": (lambda p: (p.rename(p.with_name("real.json")), p.symlink_to(p.with_name("real.json"))),
                "not a regular file"),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_graph_entry_is_removed_and_recompiled(graph_root, kind):
    tamper, reason = MALFORMED[kind]
    tamper(_entry(graph_root, "O1"))
    _expect_recompiled(graph_root, "O1", reason)


def test_symlinked_graph_cache_directory_is_refused(graph_root, tmp_path):
    directory = graph_root / "rank_0" / "graph_cache"
    elsewhere = tmp_path / "elsewhere"
    directory.rename(elsewhere)
    directory.symlink_to(elsewhere)
    with pytest.raises(CacheSecurityError, match="symbolic link"):
        _run(graph_root, "O2")


# ---------------------------------------------------------------------------- check_compiled

@pytest.fixture(scope="module")
def compiled_graphs():
    set_seed(7)
    nets = {"lenet5": (LeNet5(), (2, 1, 32, 32)), "basic_block": (BasicBlock(8, 16, stride=2), (2, 8, 12, 12)),
            "transformer": (TransformerEncoderLayer(32, 4, 64), (2, 6, 32))}
    graphs = {n: capture(net, Tensor(np.zeros(shape, np.float32)))[0] for n, (net, shape) in nets.items()}
    return {(n, level, order, streams): compile_graph(g, level, order, streams)
            for n, g in graphs.items() for level in ("O0", "O1", "O2") for order in ("dfs", "bfs")
            for streams in (1, 4)}


def test_every_graph_the_compiler_makes_passes_the_check(compiled_graphs):
    for c in compiled_graphs.values():
        check_compiled(c, c.cache_name)
    assert max(c.num_streams for c in compiled_graphs.values()) >= 3       # multi-stream plans included


def _drop_waits(c):
    c.schedule = [s for s in c.schedule if not isinstance(s, Wait)]


def _shrink_output(c):
    v = c.kernels[0].outputs[0]
    c.values[v] = TensorDesc((1,), c.values[v].dtype)


def _outside_workspace(c):
    v = max(c.offsets, key=c.offsets.get)
    c.offsets[v] = c.workspace_size


def _wrong_name(c):
    c.max_streams += 1


CORRUPTIONS = {
    "cross-stream edge without its event": ("transformer", _drop_waits, "may start before kernel"),
    "output smaller than the kernel writes": ("lenet5", _shrink_output, "what its signature infers"),
    "value placed past the workspace": ("basic_block", _outside_workspace, "not inside the"),
    "options that are not the entry's name": ("lenet5", _wrong_name, "holds the entry"),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_check_names_what_is_wrong(compiled_graphs, kind):
    net, corrupt, reason = CORRUPTIONS[kind]
    c = compiled_graphs[(net, "O2", "dfs", 4)]
    c = type(c).from_json(json.loads(json.dumps(c.to_json())))      # a private copy
    name = c.cache_name
    corrupt(c)
    with pytest.raises(InvalidParamError, match=reason):
        check_compiled(c, name)
