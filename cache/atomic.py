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
from typing import Callable

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
    replace_atomic(path, lambda tmp: Path(tmp).write_bytes(data))


def publish_atomic(path: str | os.PathLike, write: Callable[[str], None], mode: int) -> None:
    """:func:`replace_atomic`, then fsync the directory: a user's file (a checkpoint, an ONNX model) is
    there whole, durably, or as it was."""
    replace_atomic(path, write, mode)
    fsync_dir(Path(path).parent)


def replace_atomic(path: str | os.PathLike, write: Callable[[str], None], mode: int = 0o600) -> None:
    """Replace ``path`` by the file ``write(temp)`` writes, atomically. ``temp`` is an empty file beside
    ``path`` with a name of its own (mkstemp), so concurrent writers of one path never share or remove
    each other's temp file: the last rename wins and a reader sees one complete file. The temp file
    is fsynced, given ``mode`` and renamed over ``path``; on any exception it is removed and ``path``
    is left as it was. The caller fsyncs the directory."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
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
