"""``ascendemu cache ls | verify | clear | stats``: look after the rank_N/kernel_meta directories.

Without ``--rank`` every ``rank_N/kernel_meta`` under the root is handled. ``verify`` checks each
entry as a run would (the files agree, the object is intact and loadable on this host) and tells
STALE entries apart: intact, but built by another toolchain, host or SoC, so no build of this
version will ever reuse them (``clear`` reclaims the space). Nothing here loads or runs kernel code.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ascendemu.errors import AclError
from ascendemu.hal.identity import first_difference, identity
from ascendemu.kernels.binary import build_info
from ascendemu.kernels.library import plan_kernel
from ascendemu.kernels.signature import OpSignature, TensorDesc
from ascendemu.units import format_bytes

from .atomic import temp_target
from .entry import SUFFIXES, entry_path, lock_path, read_entry, verify_problem
from .kernel_meta import json_mismatch
from .layout import (BUILD_LOG, KERNEL_META, LOCKS_DIR, QUARANTINE_DIR, insecurity, make_private_dir,
                     resolve_root)
from .locks import EntryLock

USAGE_EXIT = 2


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
    if quarantine.is_dir():
        listing.quarantined = sorted(e.name for e in os.scandir(quarantine) if e.is_dir())
    listing.temps.sort()
    return listing


def find_ranks(root: Path, rank: int | None) -> list[Path]:
    """kernel_meta directories to handle: the given rank's, else every rank_N under ``root``."""
    if rank is not None:
        return [root / f"rank_{rank}" / KERNEL_META]
    found = []
    if root.is_dir():
        for entry in os.scandir(root):
            number = entry.name.removeprefix("rank_")
            if entry.name.startswith("rank_") and number.isdigit() and (Path(entry.path) / KERNEL_META).is_dir():
                found.append((int(number), Path(entry.path) / KERNEL_META))
    return [path for _, path in sorted(found)]


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
    """One line per entry with each file's size in bytes; the header line totals them in units."""
    listing = scan(directory)
    total = sum(_size(directory, n, s) or 0 for n in listing.committed for s in SUFFIXES)
    print(f"{directory}: {len(listing.committed)} entries, {format_bytes(total)}", file=out)
    if listing.committed:
        width = max(len(n) for n in listing.committed)
        print(f"  {'NAME':<{width}}  {'OP':<14} {'.o':>8} {'.info':>8} {'.json':>8}  MTIME   (sizes in bytes)",
              file=out)
    for name in listing.committed:
        found = read_entry(directory, name)
        op = "?"
        if found.binary is not None:
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
        print(f"  {name:<{width}}  {op:<14} {shown}  {mtime}", file=out)
    for name in listing.incomplete:
        print(f"  {name}: interrupted build (no .json); rebuilt when next needed", file=out)
    if listing.temps:
        print(f"  {len(listing.temps)} temp file(s) of interrupted writes: {', '.join(listing.temps)}", file=out)
    if listing.quarantined:
        print(f"  {len(listing.quarantined)} quarantined in {directory / QUARANTINE_DIR}: "
              f"{', '.join(listing.quarantined)}", file=out)
    return 0


def signature_from_info(info: dict) -> OpSignature:
    """The op signature a .info describes (its op type, input descs and attributes)."""
    op = info["job_content"]["op_list"][-1]
    inputs = tuple(TensorDesc(tuple(d["shape"]), d["dtype"]) for d in op["input_desc"])
    return OpSignature(op["type"], inputs, tuple((a["name"], a["value"]) for a in op["attrs"]))


def verdict(directory: Path, name: str) -> tuple[str, str]:
    """("OK" | "BAD" | "STALE", reason) for one committed entry."""
    found = read_entry(directory, name)
    if found.binary is None:
        return "BAD", found.problem or f"{name}.json disappeared"
    problem = verify_problem(found.binary)
    if problem:
        return "BAD", problem
    info = found.binary.info
    try:
        soc = info["job_content"]["SocInfo"]
        want = build_info(signature_from_info(info), int(soc["deviceId"]), soc=soc["socVersion"])
    except AclError as exc:
        return "BAD", f"{name}.info describes no buildable kernel: {exc.message}"
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        return "BAD", f"{name}.info is malformed ({type(exc).__name__}: {exc})"
    # verify_binary tied the name to the .info, so any difference is in what the name hashes.
    diff = first_difference(identity(info), identity(want))
    if diff:
        return "STALE", f"intact but built with another toolchain/host: {diff}; never reused, `clear` removes it"
    mismatch = json_mismatch(found.binary, plan_kernel(signature_from_info(info)))
    if mismatch:         # a .json edited after the build: arguments, block dim, workspace or cost
        return "BAD", mismatch
    return "OK", ""


def cmd_verify(directory: Path, out) -> int:
    bad = 0
    print(f"{directory}:", file=out)
    for path in (directory.parent, directory):
        problem = insecurity(path)
        if problem:
            bad += 1
            print(f"  INSECURE {problem}", file=out)
    listing = scan(directory)
    counts = {"OK": 0, "BAD": 0, "STALE": 0}
    for name in listing.committed:
        status, reason = verdict(directory, name)
        counts[status] += 1
        print(f"  {status:<5} {name}" + (f": {reason}" if reason else ""), file=out)
    for name in listing.incomplete:
        print(f"  PARTIAL {name}: interrupted build (no .json); never loaded, rebuilt when next needed",
              file=out)
    print(f"  {len(listing.committed)} entries: {counts['OK']} OK, {counts['BAD']} BAD, {counts['STALE']} STALE",
          file=out)
    return 1 if bad or counts["BAD"] else 0


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


COMMANDS = {"ls": cmd_ls, "verify": cmd_verify, "clear": cmd_clear, "stats": cmd_stats}


def main(argv: list[str]) -> int:
    """Run ``ascendemu cache <command>``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="ascendemu cache", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=sorted(COMMANDS))
    parser.add_argument("--root", help="cache root (default: $MS_COMPILER_CACHE_PATH, else .)")
    parser.add_argument("--rank", help="one rank (default: every rank_N under the root)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return USAGE_EXIT if exc.code else 0
    out = sys.stdout
    if args.rank is not None and not args.rank.isdigit():
        print(f"ascendemu cache: --rank {args.rank!r} is not a non-negative integer", file=sys.stderr)
        return USAGE_EXIT
    rank = None if args.rank is None else int(args.rank)
    root = resolve_root(args.root)
    directories = find_ranks(root, rank)
    status = 0
    if not directories:
        print(f"no kernel cache under {root} (looked for rank_N/{KERNEL_META})", file=out)
    for directory in directories:
        if not directory.is_dir():
            print(f"{directory}: no kernel cache", file=out)
            continue
        status = max(status, COMMANDS[args.command](directory, out))
    return status
