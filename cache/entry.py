"""One cache entry on disk: ``<name>.o``, ``<name>.info``, ``<name>.json``, with ``.json`` as the commit marker.

Protocol (every writer holds the entry's lock):

* write: ``.o``, then ``.info``, then ``.json``, each atomically; so a committed ``.json`` always
  follows a complete ``.o`` and ``.info`` from the same writer;
* replace a bad entry: move ``.json`` away first (uncommit), then the rest, into ``.quarantine``.

Readers take no lock. They open ``.json`` first, then ``.o`` and ``.info``, then check that the
``.json`` path still names the inode they opened: if it does, no writer touched the entry in between
(a writer would have moved that ``.json`` away first), so the three files belong together. Anything
doubtful is a miss, settled under the lock.
"""
from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascendemu.errors import AclError, InternalError
from ascendemu.kernels.binary import KernelBinary, build_binary, build_info, kernel_name, verify_binary
from ascendemu.kernels.signature import OpSignature

from .atomic import fsync_dir, remove_stale_temps, write_atomic
from .layout import BUILD_LOG, LOCKS_DIR, QUARANTINE_DIR, UNSAFE_WRITE_BITS, make_private_dir
from .locks import EntryLock

SUFFIXES = (".o", ".info", ".json")      # write order: .json last commits the entry
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW  # the cache writes no symlinks; a symlink is not an entry
# .info fields naming the graph node a kernel was first built for: they do not affect the code.
INFO_IGNORED_JOB_FIELDS = ("full_name",)
INFO_IGNORED_OP_FIELDS = ("name", "ori_name")


@dataclass(frozen=True)
class Probe:
    """What is on disk for one entry: a usable binary, or why not (``problem`` None = not committed)."""

    binary: KernelBinary | None
    problem: str | None = None


@dataclass(frozen=True)
class Outcome:
    """How an entry was obtained under its lock: "reused" (someone else built it), "built" or "rebuilt"."""

    name: str
    status: str
    binary: KernelBinary
    problem: str | None = None            # why the previous entry was replaced ("rebuilt" only)
    quarantined: str | None = None        # where the bad files went
    cleaned: tuple[str, ...] = ()         # temp files of killed writers removed


def entry_path(directory: Path, name: str, suffix: str) -> Path:
    return directory / f"{name}{suffix}"


def lock_path(directory: Path, name: str) -> Path:
    return directory / LOCKS_DIR / f"{name}.lock"


def as_written(doc: dict) -> dict:
    """``doc`` as it reads back from its JSON file (tuples become lists), so that it compares equal."""
    return json.loads(json.dumps(doc))


def comparable(info: Any) -> Any:
    """``info`` without the node-name fields; other shapes pass through (and then fail to compare)."""
    try:
        job = dict(info["job_content"])
        ops = list(job["op_list"])
        ops[-1] = {k: v for k, v in ops[-1].items() if k not in INFO_IGNORED_OP_FIELDS}
    except (KeyError, IndexError, TypeError, AttributeError):
        return info
    for key in INFO_IGNORED_JOB_FIELDS:
        job.pop(key, None)
    job["op_list"] = ops
    return {**info, "job_content": job}


def first_difference(stored: Any, wanted: Any, where: str = "") -> str | None:
    """A readable path to the first place two JSON values differ, or None when they are equal."""
    if isinstance(stored, dict) and isinstance(wanted, dict):
        for key in sorted(set(stored) | set(wanted)):
            if key not in stored:
                return f"{where}/{key} is missing"
            if key not in wanted:
                return f"{where}/{key} is unexpected"
            found = first_difference(stored[key], wanted[key], f"{where}/{key}")
            if found:
                return found
        return None
    if isinstance(stored, list) and isinstance(wanted, list) and len(stored) == len(wanted):
        for i, (s, w) in enumerate(zip(stored, wanted)):
            found = first_difference(s, w, f"{where}[{i}]")
            if found:
                return found
        return None
    if stored != wanted or type(stored) is not type(wanted):
        return f"{where or '/'} is {json.dumps(stored)[:80]}, this build needs {json.dumps(wanted)[:80]}"
    return None


def _untrusted(fd: int) -> str | None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user"
    if st.st_mode & UNSAFE_WRITE_BITS:
        return f"writable by group/other (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def read_entry(directory: Path, name: str) -> Probe:
    """The entry's files as one consistent, parsed but unverified binary; never raises for what is on disk."""
    json_path = entry_path(directory, name, ".json")
    fds: dict[str, int] = {}
    try:
        try:
            fds[".json"] = os.open(json_path, READ_FLAGS)
        except FileNotFoundError:
            return Probe(None)
        for suffix in (".o", ".info"):
            try:
                fds[suffix] = os.open(entry_path(directory, name, suffix), READ_FLAGS)
            except FileNotFoundError:
                return Probe(None, f"{name}{suffix} is missing")
        try:
            same = os.stat(json_path).st_ino == os.fstat(fds[".json"]).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            return Probe(None, f"{name}.json changed while it was read")
        for suffix, fd in fds.items():
            why = _untrusted(fd)
            if why:
                return Probe(None, f"{name}{suffix} is {why}")
        data = {suffix: _read_all(fd) for suffix, fd in fds.items()}
    except OSError as exc:          # a symlink (O_NOFOLLOW), no read permission, ...
        return Probe(None, f"{name}: cannot read its files ({exc})")
    finally:
        for fd in fds.values():
            os.close(fd)
    parsed = {}
    for suffix in (".info", ".json"):
        try:
            parsed[suffix] = json.loads(data[suffix])
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return Probe(None, f"{name}{suffix} is not valid JSON ({exc})")
        if not isinstance(parsed[suffix], dict):
            return Probe(None, f"{name}{suffix} is not a JSON object")
    return Probe(KernelBinary(name, data[".o"], parsed[".json"], parsed[".info"]))


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def info_mismatch(binary: KernelBinary, want_info: dict) -> str | None:
    """Why the stored .info is not the one this build would write (node names aside), or None."""
    diff = first_difference(comparable(binary.info), comparable(as_written(want_info)))
    return f"{binary.bin_file_name}.info does not match this build: {diff}" if diff else None


def verify_problem(binary: KernelBinary) -> str | None:
    """Why the binary must not load (verify_binary's verdict as text), or None."""
    try:
        verify_binary(binary)
    except AclError as exc:
        return exc.message
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        return f"{binary.bin_file_name}.json is malformed ({type(exc).__name__}: {exc})"
    return None


def probe(directory: Path, name: str, want_info: dict) -> Probe:
    """A verified binary equal to what this build would write, or why not (None: not committed)."""
    found = read_entry(directory, name)
    if found.binary is None:
        return found
    problem = info_mismatch(found.binary, want_info) or verify_problem(found.binary)
    return Probe(None, problem) if problem else found


def quarantine(directory: Path, name: str, reason: str) -> str:
    """Move an entry's files to ``.quarantine/<name>.<timestamp>/`` with a reason.txt; returns that dir."""
    stamp = time.strftime("%Y%m%dT%H%M%S") + f".{time.time_ns() % 1_000_000_000:09d}"
    make_private_dir(directory / QUARANTINE_DIR)      # `cache clear` may have removed it meanwhile
    target = directory / QUARANTINE_DIR / f"{name}.{stamp}"
    os.mkdir(target, 0o700)
    for suffix in (".json", ".o", ".info"):      # .json first: the entry is uncommitted from here on
        try:
            os.replace(entry_path(directory, name, suffix), target / f"{name}{suffix}")
        except FileNotFoundError:
            pass
    (target / "reason.txt").write_text(reason + "\n")
    fsync_dir(directory)
    return str(target)


def write_entry(directory: Path, binary: KernelBinary) -> None:
    """Write the three files in commit order (.json last), fsyncing the directory around the commit."""
    files = binary.files()
    for suffix in (".o", ".info"):
        write_atomic(entry_path(directory, binary.bin_file_name, suffix), files[suffix])
    fsync_dir(directory)
    write_atomic(entry_path(directory, binary.bin_file_name, ".json"), files[".json"])
    fsync_dir(directory)


def log_build(directory: Path, outcome: Outcome) -> None:
    """Append one line per compile to ``.build.log`` (O_APPEND: lines from concurrent writers stay whole)."""
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid={os.getpid()} {outcome.status} {outcome.name}"
    if outcome.problem:
        line += f" ({outcome.problem})"
    fd = os.open(directory / BUILD_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line.replace("\n", " ") + "\n").encode())
    finally:
        os.close(fd)


def ensure_entry(directory: Path, sig: OpSignature, device_id: int, soc: str,
                 distrust: str | None = None) -> Outcome:
    """Check, lock, re-check, build, write, unlock: one compile per entry across processes.

    The entry is named here, in the process that builds it, so that name and binary always come
    from the same view of the kernel sources. ``distrust``: why the caller could not use the
    committed entry although it verifies (a failed load); that entry is then replaced.
    """
    info = build_info(sig, device_id, soc=soc)
    name = kernel_name(sig, device_id, info)
    with EntryLock(lock_path(directory, name)):
        cleaned = tuple(remove_stale_temps(directory, {f"{name}{s}" for s in SUFFIXES}))
        found = probe(directory, name, info)
        problem = found.problem
        if found.binary is not None:
            if distrust is None:
                return Outcome(name, "reused", found.binary, cleaned=cleaned)
            problem = distrust
        moved = quarantine(directory, name, problem) if problem else None
        binary = build_binary(sig, device_id, soc=soc)      # imports numba (the cold path only)
        if binary.bin_file_name != name:
            raise InternalError(f"build_binary named the kernel {binary.bin_file_name!r}, the cache "
                                f"expected {name!r}; kernel_name and build_binary disagree")
        verify_binary(binary)
        write_entry(directory, binary)
        outcome = Outcome(name, "rebuilt" if problem else "built", binary, problem, moved, cleaned)
        log_build(directory, outcome)
        return outcome
