"""Crash-safe file writes: a reader sees the old file or the new one, never a torn one.

Each file goes to a hidden temp file in the same directory (``.<name><suffix>.<random>.tmp``),
is fsynced, then renamed over the target; the directory is fsynced so the rename survives a power
cut. A killed writer leaves only temp files behind, which :func:`remove_stale_temps` deletes -
called while holding the entry's lock, so no live writer can own them.
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".tmp"
_TEMP_RE = re.compile(r"^\.(?P<file>.+)\.[A-Za-z0-9_]+\.tmp$")


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` atomically (mode 0o600, fsynced). The caller fsyncs the directory."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def temp_target(name: str) -> str | None:
    """The file a temp file named ``name`` was going to replace, or None if it is no temp file."""
    m = _TEMP_RE.match(name)
    return m.group("file") if m else None


def remove_stale_temps(directory: Path, targets: set[str]) -> list[str]:
    """Delete temp files left for any of ``targets`` (file names) by killed writers; returns their names."""
    removed = []
    for entry in os.scandir(directory):
        if temp_target(entry.name) in targets:
            try:
                os.unlink(entry.path)
                removed.append(entry.name)
            except FileNotFoundError:
                pass
    return removed
