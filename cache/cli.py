"""``ascendemu cache ls | verify | clear | stats | export | import``: look after the rank_N/kernel_meta directories.

Without ``--rank`` every ``rank_N/kernel_meta`` under the root is handled. ``verify`` checks each
entry as a run would (the files agree, the object is intact and loadable on this host, the launch
facts are the plan's, this user's key made its MAC) and tells STALE entries apart: intact, but built
by another toolchain, host or SoC, so no build of this version will ever reuse them (``clear``
reclaims the space). A foreign entry (no valid MAC) is BAD. ``export ARCHIVE`` writes the OK entries
into a tar archive; ``import ARCHIVE`` (into ``--rank``, default ``$RANK_ID`` or 0) re-verifies every
entry in full as ``verify`` does, or refuses it with the reason; an archive holding anything but plain
entry files (paths, links, devices) or over the size limits is refused whole (``archive.py``, read in
bounded memory). An entry another key signed is refused by default: re-verification proves it intact
and consistent, not that its machine code is benign, and an imported entry is signed with this user's
key, so the next run executes it. ``--trust-foreign-code`` re-signs such entries, with a warning naming
each. Nothing here loads or runs kernel code.
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ascendemu.errors import AclError, InvalidParamError
from ascendemu.hal.binary import FILE_SUFFIXES, KernelBinary
from ascendemu.hal.identity import first_difference, identity
from ascendemu.kernels.binary import build_info, kernel_from_info
from ascendemu.units import format_bytes

from .archive import scan_archive
from .atomic import temp_target, write_atomic
from .auth import CacheKey, entry_auth_problem, load_key
from .entry import SUFFIXES, entry_path, install_entry, json_mismatch, lock_path, read_entry, verify_problem
from .layout import (BUILD_LOG, KERNEL_META, LOCKS_DIR, QUARANTINE_DIR, insecurity, kernel_meta_dir,
                     machine_locks_dir, make_private_dir, prepare, rank_kernel_metas, resolve_root)
from .store import store_root
from .locks import EntryLock

USAGE_EXIT = 2
# The only way to import entries another key signed: named for what it does, so nobody passes it lightly.
TRUST_FOREIGN_FLAG = "--trust-foreign-code"


@dataclass
class Listing:
    """What one kernel_meta directory holds, by kind."""

    committed: list[str] = field(default_factory=list)      # names with a .json
    incomplete: list[str] = field(default_factory=list)     # .o/.info without .json (interrupted build)
    temps: list[str] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)


def scan(directory: Path) -> Listing:
    names: dict[str, set[str]] = {}
    listing = Listing()
    for entry in os.scandir(directory):
        if entry.name.startswith("."):
            if temp_target(entry.name) is not None:
                listing.temps.append(entry.name)
            continue
        stem, suffix = os.path.splitext(entry.name)
        if suffix in SUFFIXES:
            names.setdefault(stem, set()).add(suffix)
    for name, suffixes in sorted(names.items()):
        (listing.committed if ".json" in suffixes else listing.incomplete).append(name)
    quarantine = directory / QUARANTINE_DIR
    if quarantine.is_dir() and not quarantine.is_symlink():      # verify reports a symlink; never follow it
        listing.quarantined = sorted(e.name for e in os.scandir(quarantine) if e.is_dir())
    listing.temps.sort()
    return listing


def find_ranks(root: Path, rank: int | None) -> list[Path]:
    """kernel_meta directories to handle: the given rank's, else every rank_N under ``root``."""
    if rank is not None:
        return [root / f"rank_{rank}" / KERNEL_META]
    return [path for _, path in rank_kernel_metas(root)]


def find_stores() -> list[Path]:
    """The user's kernel store's folders, one per SoC (none when the store is disabled or empty)."""
    root = store_root()
    return sorted(path for path in root.iterdir() if path.is_dir()) if root is not None and root.is_dir() else []


def _size(directory: Path, name: str, suffix: str) -> int | None:
    try:
        return entry_path(directory, name, suffix).stat().st_size
    except FileNotFoundError:
        return None


def _tree_bytes(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except FileNotFoundError:
                pass
    return total


def cmd_ls(directory: Path, out) -> int:
    """One line per entry with each file's size in bytes and whether this user's key made it (AUTH:
    ok, or FOREIGN: never loaded, rebuilt when needed); the header line totals the sizes in units."""
    key = load_key()
    listing = scan(directory)
    total = sum(_size(directory, n, s) or 0 for n in listing.committed for s in SUFFIXES)
    print(f"{directory}: {len(listing.committed)} entries, {format_bytes(total)}", file=out)
    if listing.committed:
        width = max(len(n) for n in listing.committed)
        print(f"  {'NAME':<{width}}  {'OP':<14} {'AUTH':<7} {'.o':>8} {'.info':>8} {'.json':>8}  MTIME   "
              f"(sizes in bytes)", file=out)
    for name in listing.committed:
        found = read_entry(directory, name)
        op, auth = "?", "-"
        if found.binary is not None:
            auth = "FOREIGN" if entry_auth_problem(found.binary, key) else "ok"
            try:
                op = str(found.binary.info["job_content"]["op_list"][-1]["type"])
            except (KeyError, IndexError, TypeError):
                pass
        sizes = [_size(directory, name, s) for s in (".o", ".info", ".json")]
        try:
            mtime = time.strftime("%Y-%m-%d %H:%M:%S",
                                  time.localtime(entry_path(directory, name, ".json").stat().st_mtime))
        except FileNotFoundError:
            mtime = "-"
        shown = " ".join(f"{'-' if s is None else s:>8}" for s in sizes)
        print(f"  {name:<{width}}  {op:<14} {auth:<7} {shown}  {mtime}", file=out)
    for name in listing.incomplete:
        print(f"  {name}: interrupted build (no .json); rebuilt when next needed", file=out)
    if listing.temps:
        print(f"  {len(listing.temps)} temp file(s) of interrupted writes: {', '.join(listing.temps)}", file=out)
    if listing.quarantined:
        print(f"  {len(listing.quarantined)} quarantined in {directory / QUARANTINE_DIR}: "
              f"{', '.join(listing.quarantined)}", file=out)
    return 0


def content_verdict(binary: KernelBinary) -> tuple[str, str]:
    """("OK" | "BAD" | "STALE", reason) for an entry's content, its MAC aside: intact and loadable on
    this host, what this version would build for the kernel its .info describes (else STALE), and
    launch facts that are that kernel's plan."""
    name = binary.bin_file_name
    problem = verify_problem(binary)
    if problem:
        return "BAD", problem
    info = binary.info
    try:
        soc = info["job_content"]["SocInfo"]
        kernel = kernel_from_info(info)
        want = build_info(kernel, int(soc["deviceId"]), soc=soc["socVersion"])
    except AclError as exc:
        return "BAD", f"{name}.info describes no buildable kernel: {exc.message}"
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        return "BAD", f"{name}.info is malformed ({type(exc).__name__}: {exc})"
    # verify_binary tied the name to the .info, so any difference is in what the name hashes.
    diff = first_difference(identity(info), identity(want))
    if diff:
        return "STALE", f"intact but built with another toolchain/host: {diff}; never reused, `clear` removes it"
    mismatch = json_mismatch(binary, kernel)
    if mismatch:         # a .json edited after the build: arguments, block dim, workspace or cost
        return "BAD", mismatch
    return "OK", ""


def binary_verdict(binary: KernelBinary, key: CacheKey) -> tuple[str, str]:
    """:func:`content_verdict`, and BAD when ``key`` did not make the entry's MAC (a foreign entry)."""
    status, reason = content_verdict(binary)
    if status == "OK":
        problem = entry_auth_problem(binary, key)
        if problem:
            return "BAD", problem
    return status, reason


def judge(directory: Path, name: str, key: CacheKey) -> tuple[KernelBinary | None, str, str]:
    """One committed entry as read (None if unreadable) with its verdict and reason."""
    found = read_entry(directory, name)
    if found.binary is None:
        return None, "BAD", found.problem or f"{name}.json disappeared"
    return found.binary, *binary_verdict(found.binary, key)


def verdict(directory: Path, name: str, key: CacheKey | None = None) -> tuple[str, str]:
    """("OK" | "BAD" | "STALE", reason) for one committed entry; ``key`` defaults to this user's."""
    _, status, reason = judge(directory, name, key or load_key())
    return status, reason


def _unsafe_subdirs(directory: Path) -> list[str]:
    """The cache's own subdirectories (and the root's machine-wide lock directory) that are symlinks or
    writable by others (a run refuses them)."""
    problems = []
    for path in (directory / LOCKS_DIR, directory / QUARANTINE_DIR, machine_locks_dir(directory)):
        if path.is_symlink():
            problems.append(f"{path} is a symbolic link; the cache writes only into real directories: "
                            f"remove the link (the next run recreates the directory)")
        elif path.is_dir():
            problems.append(insecurity(path))
    return [p for p in problems if p]


def cmd_verify(directory: Path, out) -> int:
    key = load_key()
    print(f"{directory}:", file=out)
    problems = [p for p in map(insecurity, (directory.parent, directory)) if p] + _unsafe_subdirs(directory)
    for problem in problems:
        print(f"  INSECURE {problem}", file=out)
    listing = scan(directory)
    counts = {"OK": 0, "BAD": 0, "STALE": 0}
    for name in listing.committed:
        status, reason = verdict(directory, name, key)
        counts[status] += 1
        print(f"  {status:<5} {name}" + (f": {reason}" if reason else ""), file=out)
    for name in listing.incomplete:
        print(f"  PARTIAL {name}: interrupted build (no .json); never loaded, rebuilt when next needed",
              file=out)
    print(f"  {len(listing.committed)} entries: {counts['OK']} OK, {counts['BAD']} BAD, {counts['STALE']} STALE",
          file=out)
    return 1 if problems or counts["BAD"] else 0


def cmd_stats(directory: Path, out) -> int:
    listing = scan(directory)
    entry_bytes = sum(_size(directory, n, s) or 0 for n in listing.committed for s in SUFFIXES)
    try:
        builds = (directory / BUILD_LOG).read_text().count("\n")
    except FileNotFoundError:
        builds = 0
    quarantine_bytes = _tree_bytes(directory / QUARANTINE_DIR)
    print(f"{directory}: {len(listing.committed)} entries, {entry_bytes} bytes, "
          f"{len(listing.quarantined)} quarantined ({quarantine_bytes} bytes), "
          f"{len(listing.incomplete)} incomplete, {len(listing.temps)} temp files, {builds} builds logged",
          file=out)
    print(f"  on disk: entries {format_bytes(entry_bytes)}, quarantine {format_bytes(quarantine_bytes)}",
          file=out)
    return 0


def cmd_clear(directory: Path, out) -> int:
    """Remove entries (each under its lock, skipping those being built), leftovers, quarantine and log.

    A lock file is deleted while held; a process already waiting on it would then hold a lock on the
    orphaned file, so the worst case is one redundant build, which verification makes harmless.
    """
    listing = scan(directory)
    make_private_dir(directory / LOCKS_DIR)
    locked = {p.name.removesuffix(".lock") for p in (directory / LOCKS_DIR).glob("*.lock")}
    removed, busy = [], []
    for name in sorted(set(listing.committed + listing.incomplete) | locked):
        lock = EntryLock(lock_path(directory, name))
        if not lock.acquire(blocking=False):
            busy.append(name)
            continue
        try:
            had_files = False
            for suffix in (".json", ".o", ".info"):      # .json first: uncommit before removing
                path = entry_path(directory, name, suffix)
                had_files |= path.exists()
                path.unlink(missing_ok=True)
            lock.path.unlink(missing_ok=True)
        finally:
            lock.release()
        if had_files:
            removed.append(name)
            print(f"  removed {name}", file=out)
    for name in listing.temps:
        (directory / name).unlink(missing_ok=True)
    shutil.rmtree(directory / QUARANTINE_DIR, ignore_errors=True)
    (directory / BUILD_LOG).unlink(missing_ok=True)
    print(f"{directory}: removed {len(removed)} entries, {len(listing.quarantined)} quarantined, "
          f"{len(listing.temps)} temp files and the build log", file=out)
    for name in busy:
        print(f"  kept {name}: another process is building it", file=out)
    return 0


# ---------------------------------------------------------------------------------- export / import

GZIP_SUFFIXES = (".tar.gz", ".tgz")


def cmd_export(directories: list[Path], archive: Path, out) -> int:
    """Write the OK entries (verified and made by this user's key) of ``directories`` into ``archive``
    (a tar file, gzip-compressed if it is named .tar.gz/.tgz), one entry per name; returns 0."""
    key = load_key()
    chosen: dict[str, KernelBinary] = {}
    for directory in directories:
        for name in scan(directory).committed:
            if name in chosen:
                continue
            binary, status, reason = judge(directory, name, key)
            if status != "OK":
                print(f"  skipped {name}: {status} {reason}", file=out)
                continue
            chosen[name] = binary
    buffer = io.BytesIO()
    mode = "w:gz" if archive.name.endswith(GZIP_SUFFIXES) else "w"
    with tarfile.open(fileobj=buffer, mode=mode) as tar:
        for name, binary in sorted(chosen.items()):
            for suffix, data in binary.files().items():
                member = tarfile.TarInfo(f"{name}{suffix}")
                member.size, member.mode, member.mtime = len(data), 0o600, int(time.time())
                tar.addfile(member, io.BytesIO(data))
    write_atomic(archive, buffer.getvalue())
    print(f"{archive}: exported {len(chosen)} entries", file=out)
    return 0


def check_import(staging: Path, name: str, suffixes: set[str], key: CacheKey) -> tuple[KernelBinary | None, str]:
    """(binary, "") for one archived entry staged in ``staging`` (read back by the one careful reader,
    then checked as ``verify`` does, its MAC aside), or (None, why it is refused)."""
    missing = [suffix for suffix in FILE_SUFFIXES if suffix not in suffixes]
    if missing:
        return None, f"the archive lacks {', '.join(name + s for s in missing)}"
    found = read_entry(staging, name)
    if found.binary is None:
        return None, found.problem or "unreadable"
    status, reason = content_verdict(found.binary)
    if status != "OK":
        return None, f"{status}: {reason}"
    return found.binary, ""


def _own_entry(directory: Path, name: str, key: CacheKey) -> bool:
    """Whether ``directory`` holds a committed entry ``name`` that ``key`` made."""
    found = read_entry(directory, name)
    return found.binary is not None and entry_auth_problem(found.binary, key) is None


def cmd_import(archive: Path, directory: Path, trust_foreign_code: bool, out, err=None) -> int:
    """Install the entries of ``archive`` into ``directory`` (see the module docstring); 1 if any
    entry (or the whole archive) was refused. Warnings about re-signed foreign code go to ``err``
    (default stderr)."""
    err = err or sys.stderr
    key = load_key()
    counts = {"imported": 0, "kept": 0, "refused": 0}
    foreign = 0
    with tempfile.TemporaryDirectory(prefix="ascendemu_import_") as staging:
        try:
            scan_archive(archive)         # every header checked before a byte is staged
            entries = scan_archive(archive, Path(staging))
        except InvalidParamError as exc:
            print(f"refused {archive}: {exc.message}; nothing imported", file=out)
            return 1
        prepare(directory)
        for name, suffixes in sorted(entries.items()):
            binary, why = check_import(Path(staging), name, suffixes, key)
            how = "re-verified in full; authenticated by this user's key"
            if binary is not None and entry_auth_problem(binary, key):
                if not trust_foreign_code and _own_entry(directory, name, key):
                    counts["kept"] += 1           # nothing foreign is installed: this key's copy stays
                    print(f"  kept {name}: already in the cache", file=out)
                    continue
                if not trust_foreign_code:
                    foreign += 1
                    binary, why = None, (f"made with another key: intact and consistent, but its machine code "
                                         f"would run unchecked; share the key file, or pass {TRUST_FOREIGN_FLAG}")
                else:
                    how = "made with another key: re-verified in full and signed with this user's key"
                    print(f"WARNING: {TRUST_FOREIGN_FLAG}: {name} was made with another key; its machine code is "
                          f"now signed with yours ({key.path}) and runs in every later run that needs it",
                          file=err)
            if binary is None:
                counts["refused"] += 1
                print(f"  refused {name}: {why}", file=out)
                continue
            status = install_entry(directory, binary, key)
            counts[status] += 1
            print(f"  {status} {name}" + (f" ({how})" if status == "imported" else ": already in the cache"),
                  file=out)
    line = f"{directory}: {counts['imported']} imported, {counts['kept']} already present, {counts['refused']} refused"
    if counts["refused"]:
        line += (f" ({foreign} made with another key, refused without {TRUST_FOREIGN_FLAG}; "
                 f"{counts['refused'] - foreign} incomplete or failing verification)")
    print(line, file=out)
    return 1 if counts["refused"] else 0


COMMANDS = {"ls": cmd_ls, "verify": cmd_verify, "clear": cmd_clear, "stats": cmd_stats}
ARCHIVE_COMMANDS = ("export", "import")


def main(argv: list[str]) -> int:
    """Run ``ascendemu cache <command>``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="ascendemu cache", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=sorted([*COMMANDS, *ARCHIVE_COMMANDS]))
    parser.add_argument("archive", nargs="?", help="export/import: the tar archive")
    parser.add_argument("--root", help="cache root (default: $MS_COMPILER_CACHE_PATH, else .)")
    parser.add_argument("--rank", help="one rank (default: every rank_N under the root; import: $RANK_ID, else 0)")
    parser.add_argument("--store", action="store_true",
                        help="ls/verify/stats/clear/export: the user's kernel store (one folder per SoC under "
                             "$ACL_OP_COMPILER_CACHE_DIR, else $ASCEND_CACHE_PATH, else ~/atc_data) instead of "
                             "the ranks' kernel_meta")
    parser.add_argument(TRUST_FOREIGN_FLAG, action="store_true",
                        help="import: also accept entries another key made (by default they are refused): "
                             "they are re-verified in full and signed with this user's key, so their machine "
                             "code runs in later runs; re-verification cannot tell benign code from malicious. "
                             "Prefer sharing the key file between your machines")
    parser.add_argument("--same-key-only", action="store_true",
                        help="import: refuse entries this user's key did not make (the default; kept for "
                             "existing scripts)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return USAGE_EXIT if exc.code else 0
    out = sys.stdout
    if args.rank is not None and not args.rank.isdigit():
        print(f"ascendemu cache: --rank {args.rank!r} is not a non-negative integer", file=sys.stderr)
        return USAGE_EXIT
    if (args.command in ARCHIVE_COMMANDS) != (args.archive is not None):
        print(f"ascendemu cache: export and import take an archive path, {args.command} takes none",
              file=sys.stderr)
        return USAGE_EXIT
    if args.trust_foreign_code and (args.same_key_only or args.command != "import"):
        print(f"ascendemu cache: {TRUST_FOREIGN_FLAG} is an import option and contradicts --same-key-only",
              file=sys.stderr)
        return USAGE_EXIT
    if args.store and (args.command == "import" or args.root or args.rank is not None):
        print("ascendemu cache: --store names the kernel store: it takes no --root or --rank, and imports go "
              "into a rank (each run copies its builds into the store)", file=sys.stderr)
        return USAGE_EXIT
    rank = None if args.rank is None else int(args.rank)
    root = resolve_root(args.root)
    if args.command == "import":
        return cmd_import(Path(args.archive), kernel_meta_dir(root, rank), args.trust_foreign_code, out)
    directories = find_stores() if args.store else find_ranks(root, rank)
    if args.command == "export":
        return cmd_export([d for d in directories if d.is_dir()], Path(args.archive), out)
    status = 0
    if not directories:
        where = f"no kernel store in {store_root() or 'use (ACL_OP_COMPILER_CACHE_MODE=disable)'}" if args.store \
            else f"no kernel cache under {root} (looked for rank_N/{KERNEL_META})"
        print(where, file=out)
    for directory in directories:
        if not directory.is_dir():
            print(f"{directory}: no kernel cache", file=out)
            continue
        status = max(status, COMMANDS[args.command](directory, out))
    return status
