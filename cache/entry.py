"""One cache entry on disk: ``<name>.o``, ``<name>.info``, ``<name>.json``, with ``.json`` as the commit marker.

Protocol (every writer holds the entry's lock):

* write: ``.o``, then ``.info``, then ``.json``, each atomically; so a committed ``.json`` always
  follows a complete ``.o`` and ``.info`` from the same writer. The ``.json`` carries the entry's MAC
  (``auth.py``): an entry is used only if it verifies *and* this user's key made it;
* replace a bad entry: move ``.json`` away first (uncommit), then the rest, into ``.quarantine``;
* make a missing entry: under the machine-wide lock of the kernel (``layout.machine_locks_dir``: shared by
  every rank of a cache root of its own), copy it from a sibling rank's kernel_meta or from the user's kernel
  store (``store.py``) if one holds it (read, verified and authenticated as any entry, then packaged for this
  device), else build it and keep a copy in the store. Ranks on one machine thus never build one kernel
  twice, nor at the same time, and a new project does not build again what an earlier one built.

Readers take no lock. They open ``.json`` first, then ``.o`` and ``.info``, then check that the
``.json`` path still names the inode they opened: if it does, no writer touched the entry in between
(a writer would have moved that ``.json`` away first), so the three files belong together. Anything
doubtful is a miss, settled under the lock.
"""
from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from ascendemu.errors import AclError, InternalError
from ascendemu.hal.binary import KernelBinary, read_binary, verify_binary
from ascendemu.hal.identity import info_mismatch
from ascendemu.hal.kernel import CorruptKernelError, MissingKernelError
from ascendemu.kernels.binary import build_binary, build_info, retarget
from ascendemu.kernels.library import KernelFamily, KernelPlan

from .atomic import fsync_dir, remove_stale_temps, write_atomic
from .auth import CacheKey, entry_auth_problem, sign_entry
from .layout import (BUILD_LOG, LOCKS_DIR, QUARANTINE_DIR, CacheSecurityError, insecurity, machine_locks_dir,
                     make_private_dir, rank_kernel_metas, secure_dir)
from .locks import EntryLock
from .store import StoreWarning, age, prepare_store, store_dir, touch

SUFFIXES = (".o", ".info", ".json")      # write order: .json last commits the entry
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@dataclass(frozen=True)
class Probe:
    """What is on disk for one entry: a usable binary, or why not (``problem`` None = not committed)."""

    binary: KernelBinary | None
    problem: str | None = None


@dataclass(frozen=True)
class Outcome:
    """How an entry was obtained under its lock: "reused" (someone else built it), "built", "rebuilt"
    (over a bad entry) or "imported" (copied from a sibling rank's kernel_meta or the user's kernel store,
    ``source``)."""

    name: str
    status: str
    binary: KernelBinary
    problem: str | None = None            # why the previous entry was replaced ("rebuilt" only)
    quarantined: str | None = None        # where the bad files went
    cleaned: tuple[str, ...] = ()         # temp files of killed writers removed
    source: str | None = None             # the sibling kernel_meta or store an imported entry came from


def entry_path(directory: Path, name: str, suffix: str) -> Path:
    return directory / f"{name}{suffix}"


def lock_path(directory: Path, name: str) -> Path:
    return directory / LOCKS_DIR / f"{name}.lock"


def device_free(name: str) -> str:
    """A kernel name without its ``_<device id>`` suffix: the same kernel for every device."""
    return name.rsplit("_", 1)[0]


def machine_lock_path(directory: Path, name: str) -> Path:
    """The machine-wide build lock of kernel ``name`` (any device) for the ranks of ``directory``'s root;
    its directory and the rank directory above it are created private and checked like the cache's own."""
    locks = machine_locks_dir(directory)
    for path in (locks.parent, locks):
        secure_dir(path)
    return locks / f"{device_free(name)}.lock"


def read_entry(directory: Path, name: str) -> Probe:
    """The entry's files as one consistent, parsed but unverified binary; never raises for what is on disk."""
    try:
        return Probe(read_binary(directory, name))
    except MissingKernelError:
        return Probe(None)
    except CorruptKernelError as exc:
        return Probe(None, exc.message)


def entry_problem(binary: KernelBinary, kernel: KernelPlan, want_info: dict, key: CacheKey) -> str | None:
    """Why a read entry must not be used as ``kernel`` (whose .info is ``want_info``), or None: a
    different .info, a binary that does not verify, a .json whose launch facts are not the plan's, or
    no valid MAC of ``key`` (a foreign entry). The .info comparison ties the entry to its name, so the
    name is not hashed again. The MAC comes last so that a damaged entry is reported as what it is."""
    mismatch = info_mismatch(binary.info, want_info)
    if mismatch:
        return f"{binary.bin_file_name}.info {mismatch}"
    return (verify_problem(binary, named=True) or json_mismatch(binary, kernel)
            or entry_auth_problem(binary, key))


def json_mismatch(binary: KernelBinary, kernel: KernelPlan | KernelFamily) -> str | None:
    """Why ``binary``'s .json does not describe ``kernel``'s plan (block dim, arguments, zero flags,
    workspaces, cost, tiling size: ``KernelPlan.launch_facts``), or None. The runtime takes these facts
    from the plan, never from the file."""
    doc = binary.json
    for name, value in kernel.launch_facts().items():
        if doc.get(name) != value:
            return (f"{binary.bin_file_name}.json field {name!r} is {str(doc.get(name))[:80]}, but the "
                    f"kernel's plan says {str(value)[:80]}; the entry is not this kernel's")
    return None


def verify_problem(binary: KernelBinary, named: bool = False) -> str | None:
    """Why the binary must not load (verify_binary's verdict as text), or None."""
    try:
        verify_binary(binary, named=named)
    except AclError as exc:
        return exc.message
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        return f"{binary.bin_file_name}.json is malformed ({type(exc).__name__}: {exc})"
    return None


def probe(directory: Path, name: str, kernel: KernelPlan, want_info: dict, key: CacheKey) -> Probe:
    """A verified, authenticated binary equal to what this build would write, or why not (None: not
    committed)."""
    found = read_entry(directory, name)
    if found.binary is None:
        return found
    problem = entry_problem(found.binary, kernel, want_info, key)
    return Probe(None, problem) if problem else found


def quarantine(directory: Path, name: str, reason: str) -> str:
    """Move an entry's files to ``.quarantine/<name>.<timestamp>/`` with a reason.txt; returns that dir.

    Everything below ``.quarantine`` is reached through directory descriptors opened with O_NOFOLLOW,
    so a ``.quarantine`` swapped for a symlink after the check is refused, never followed.
    """
    stamp = time.strftime("%Y%m%dT%H%M%S") + f".{time.time_ns() % 1_000_000_000:09d}"
    quarantine_dir = directory / QUARANTINE_DIR
    make_private_dir(quarantine_dir)      # `cache clear` may have removed it meanwhile; refuses a symlink
    target = f"{name}.{stamp}"
    try:
        parent = os.open(quarantine_dir, DIR_FLAGS)
    except OSError as exc:
        raise CacheSecurityError(f"cannot open {quarantine_dir} as a real directory ({exc.strerror or exc}); "
                                 f"remove whatever is there so the cache can recreate it") from None
    try:
        os.mkdir(target, 0o700, dir_fd=parent)
        fd = os.open(target, DIR_FLAGS, dir_fd=parent)
    finally:
        os.close(parent)
    try:
        for suffix in (".json", ".o", ".info"):      # .json first: the entry is uncommitted from here on
            try:
                os.replace(entry_path(directory, name, suffix), f"{name}{suffix}", dst_dir_fd=fd)
            except FileNotFoundError:
                pass
        note = os.open("reason.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd)
        try:
            os.write(note, (reason + "\n").encode())
        finally:
            os.close(note)
    finally:
        os.close(fd)
    fsync_dir(directory)
    return str(quarantine_dir / target)


def write_entry(directory: Path, binary: KernelBinary, key: CacheKey) -> KernelBinary:
    """Sign ``binary`` with ``key`` and write its three files in commit order (.json last), fsyncing
    the directory around the commit; returns the signed binary (as a reader will find it)."""
    binary = sign_entry(binary, key)
    files = binary.files()
    for suffix in (".o", ".info"):
        write_atomic(entry_path(directory, binary.bin_file_name, suffix), files[suffix])
    fsync_dir(directory)
    write_atomic(entry_path(directory, binary.bin_file_name, ".json"), files[".json"])
    fsync_dir(directory)
    return binary


def install_entry(directory: Path, binary: KernelBinary, key: CacheKey) -> str:
    """Write an imported entry, already verified by the caller, under its lock and signed with ``key``.
    Returns "kept" when an entry this key made is already there, else "imported" (whatever was in
    the way, bad, foreign or half-written, is quarantined first)."""
    name = binary.bin_file_name
    with EntryLock(lock_path(directory, name)):
        remove_stale_temps(directory, {f"{name}{s}" for s in SUFFIXES})
        found = read_entry(directory, name)
        if found.binary is not None:
            problem = entry_auth_problem(found.binary, key)
            if problem is None:
                return "kept"
        else:
            problem = found.problem or "an interrupted build"
        if any(entry_path(directory, name, s).exists() for s in SUFFIXES):
            quarantine(directory, name, f"replaced by an imported entry: {problem}")
        write_entry(directory, binary, key)
        return "imported"


def log_build(directory: Path, outcome: Outcome, cpu: float | None = None) -> None:
    """Append one line per compile to ``.build.log`` (O_APPEND: lines from concurrent writers stay whole):
    time, pid, status, entry name, then ``cpu=<s>`` (the CPU seconds this thread spent obtaining the entry:
    what ``bench_speed.py`` sums per op to rank the cold builds) and where it came from or why it was rebuilt."""
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid={os.getpid()} {outcome.status} {outcome.name}"
    if cpu is not None:
        line += f" cpu={cpu:.3f}"
    if outcome.source:
        line += f" from {outcome.source}"
    if outcome.problem:
        line += f" ({outcome.problem})"
    fd = os.open(directory / BUILD_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line.replace("\n", " ") + "\n").encode())
    finally:
        os.close(fd)


def builds_by_op(directory: Path) -> dict[str, tuple[int, float]]:
    """What ``.build.log`` says was compiled here ("built" or "rebuilt"), per op: the kernel function
    name (the entry name less ``_<hash>_<device>``) -> (entries, CPU seconds), most CPU first. Lines
    without ``cpu=`` (older logs) count with 0 s."""
    path = directory / BUILD_LOG
    found: dict[str, tuple[int, float]] = {}
    for line in (path.read_text().splitlines() if path.exists() else ()):
        fields = line.split()
        if len(fields) < 4 or fields[2] not in ("built", "rebuilt"):
            continue
        op = fields[3].rsplit("_", 2)[0]
        cpu = next((float(f[4:]) for f in fields[4:5] if f.startswith("cpu=")), 0.0)
        count, total = found.get(op, (0, 0.0))
        found[op] = (count + 1, total + cpu)
    return dict(sorted(found.items(), key=lambda item: -item[1][1]))


def ensure_entry(directory: Path, kernel: KernelPlan, device_id: int, soc: str, key: CacheKey,
                 distrust: str | None = None) -> Outcome:
    """Check, lock, re-check, build, write, unlock: one compile per entry across processes.

    The entry is named here, in the process that builds it, so that name and binary always come
    from the same view of the kernel sources. ``distrust``: why the caller could not use the
    committed entry although it verifies (a failed load); that entry is then replaced. A built
    binary is verified here, once, and signed with ``key``; the caller links it without verifying it
    again.
    """
    started = time.thread_time()
    info = build_info(kernel, device_id, soc)
    name = info["job_content"]["fusion_op_name"]
    with EntryLock(lock_path(directory, name)):
        cleaned = tuple(remove_stale_temps(directory, {f"{name}{s}" for s in SUFFIXES}))
        found = probe(directory, name, kernel, info, key)
        problem = found.problem
        if found.binary is not None:
            if distrust is None:
                return Outcome(name, "reused", found.binary, cleaned=cleaned)
            problem = distrust
        moved = quarantine(directory, name, problem) if problem else None
        with EntryLock(machine_lock_path(directory, name)):
            # a verified entry that failed to load is built afresh, not copied again
            binary, source = (None, None) if distrust else copied_entry(directory, kernel, info, soc, key)
            if binary is None:
                binary = build_binary(kernel, device_id, soc, info)      # imports numba (the cold path only)
                if binary.bin_file_name != name:
                    raise InternalError(f"build_binary named the kernel {binary.bin_file_name!r}, the cache "
                                        f"expected {name!r}; kernel_name and build_binary disagree")
            verify_binary(binary, named=True)
            binary = write_entry(directory, binary, key)       # committed before a waiting rank looks
            if source is None:
                keep_in_store(binary, soc, key)
        status = "imported" if source else "rebuilt" if problem else "built"
        outcome = Outcome(name, status, binary, problem, moved, cleaned, source)
        log_build(directory, outcome, time.thread_time() - started)
        return outcome


def copied_entry(directory: Path, kernel: KernelPlan, info: dict, soc: str,
                 key: CacheKey) -> tuple[KernelBinary | None, str | None]:
    """This kernel from another rank's kernel_meta under the same root, else from the user's kernel store,
    packaged for ``info``'s device, with the directory it came from; (None, None) when none holds a good
    copy. An entry is used only if it passes every check a rank applies to its own (:func:`entry_problem`:
    its .info is this kernel's for that entry's device, it verifies, its launch facts are the plan's and
    this user's key made it); a directory others could write to is not looked at."""
    stem = device_free(info["job_content"]["fusion_op_name"])
    store = store_dir(soc)
    sources = [sibling for _, sibling in rank_kernel_metas(directory.parent.parent) if sibling != directory]
    for source in sources + ([store] if store is not None else []):
        try:
            if insecurity(source.parent) or insecurity(source):
                continue
        except OSError:            # removed meanwhile (`cache clear` of that rank), or no store yet
            continue
        for path in sorted(source.glob(f"{stem}_*.json")):
            device = path.stem.removeprefix(stem + "_")
            if not device.isdigit():
                continue
            found = read_entry(source, path.stem)
            if found.binary is None or entry_problem(found.binary, kernel, build_info(kernel, int(device), soc), key):
                continue
            binary = retarget(found.binary, info)
            if binary is not None:
                if source == store:
                    touch(store, path.stem)
                return binary, str(source)
    return None, None


def keep_in_store(binary: KernelBinary, soc: str, key: CacheKey) -> None:
    """A copy of a freshly built entry in the user's kernel store (``store.py``), then the store aged to its
    cap. The rank's own entry is already committed: a store that cannot be written costs a warning only."""
    store = store_dir(soc)
    if store is None:
        return
    try:
        prepare_store(store)
        if install_entry(store, binary, key) == "imported":
            age(store, sum(len(data) for data in binary.files().values()))
    except (AclError, OSError) as exc:
        reason = exc.message if isinstance(exc, AclError) else (exc.strerror or str(exc))
        warnings.warn(StoreWarning(f"kernel {binary.bin_file_name} was not kept in the kernel store {store}: "
                                   f"{reason}"), stacklevel=2)
