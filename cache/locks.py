"""Per-kernel inter-process locks, so that concurrent processes build each kernel once.

``flock`` on ``kernel_meta/.locks/<name>.lock`` (and, machine-wide, ``layout.machine_locks_dir``): the kernel
releases it when the holder dies, so a killed builder never leaves a stale lock. The holder writes its
pid into the file so that a waiter that gives up can say who held it. Lock files are never deleted
while in use: a waiter holding the old inode and a newcomer creating a new one would both "own" the lock.

A lock file is a place this process writes to, so it is opened as carefully as a kernel is read: its
directory through a descriptor opened with O_NOFOLLOW and checked (this user's, nobody else can write
it), the file relative to that descriptor with O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC and never O_TRUNC,
then checked (a regular file of this user with one link) before a byte is written; the pid is written
over a fixed-width field, so an existing file is never truncated. A planted symlink, hard link, FIFO
or foreign directory is refused with CacheSecurityError, never followed.

Why not ``filelock``: 3.x opens the lock file with
``O_RDWR | O_TRUNC``, following symlinks (exactly the truncation this module must prevent); the newest
releases add O_NOFOLLOW, but none takes custom open flags or a checked directory descriptor (they
check the directory by path), nor records the holder's pid in a native lock for the timeout message.
Python's own ``flock`` is all this needs.
"""
from __future__ import annotations

import fcntl
import os
import stat
import time
from pathlib import Path

from ascendemu.errors import ACL_ERROR_RT_INTERNAL_ERROR, AclError

from .layout import CacheSecurityError, insecurity

LOCK_TIMEOUT_S = 600.0
LOCK_POLL_S = 0.02
LOCK_FILE_MODE = 0o600
# O_NOFOLLOW: a symlink is refused (ELOOP); O_NONBLOCK: a FIFO does not block the open; no O_TRUNC.
LOCK_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
LOCK_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# The holder's pid, left-aligned and blank-padded to a fixed width, so it replaces the last one in place.
PID_FIELD_BYTES = 20


class CacheLockTimeoutError(AclError):
    """Another process held a kernel's build lock for longer than the timeout."""

    code = ACL_ERROR_RT_INTERNAL_ERROR


class EntryLock:
    """An exclusive lock on one cache entry; use as a context manager."""

    def __init__(self, path: Path, timeout: float = LOCK_TIMEOUT_S):
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None

    def acquire(self, blocking: bool = True) -> bool:
        """Take the lock; False only when ``blocking`` is off and another process holds it."""
        fd = open_lock_file(self.path)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not blocking:
                    os.close(fd)
                    return False
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise CacheLockTimeoutError(
                        f"lock file {self.path} was held by {holder} for more than {self.timeout:.0f} s "
                        f"while building that kernel; wait for that process to finish or stop it, then rerun")
                time.sleep(LOCK_POLL_S)
        os.pwrite(fd, _pid_field(str(os.getpid())), 0)
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.pwrite(fd, _pid_field(""), 0)
            finally:
                os.close(fd)   # closing the descriptor drops the flock

    def __enter__(self) -> "EntryLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def open_lock_file(path: Path) -> int:
    """A read-write descriptor of lock file ``path`` (created with mode 0600 if missing), opened only
    after its directory and then the file itself are found safe to write; CacheSecurityError if not."""
    directory = path.parent
    try:
        dir_fd = os.open(directory, LOCK_DIR_FLAGS)
    except OSError as exc:             # a symlink (ELOOP), not a directory, missing, no permission
        raise CacheSecurityError(f"cannot open the lock directory {directory} as a real directory "
                                 f"({exc.strerror or exc}); remove whatever is there so the cache can "
                                 f"recreate it") from None
    try:
        problem = insecurity(directory, os.fstat(dir_fd))
        if problem:
            raise CacheSecurityError(f"refusing to take a kernel cache lock: {problem}")
        try:
            fd = os.open(path.name, LOCK_OPEN_FLAGS, LOCK_FILE_MODE, dir_fd=dir_fd)
        except OSError as exc:         # ELOOP: a symlink planted where the lock file goes
            raise CacheSecurityError(f"cannot open the lock file {path} ({exc.strerror or exc}): it must be a "
                                     f"regular file; remove it (the cache recreates it)") from None
    finally:
        os.close(dir_fd)
    problem = _lock_file_problem(os.fstat(fd))
    if problem:
        os.close(fd)
        raise CacheSecurityError(f"refusing the lock file {path}: it is {problem}; remove it (the cache "
                                 f"recreates it)")
    return fd


def _lock_file_problem(st: os.stat_result) -> str | None:
    """Why an opened lock file must not be written (a hard link could be another file's name)."""
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file (mode {stat.filemode(st.st_mode)})"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_nlink != 1:
        return f"a file with {st.st_nlink} links (a lock file has one name)"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by group/other (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _pid_field(text: str) -> bytes:
    return text.ljust(PID_FIELD_BYTES - 1).encode() + b"\n"


def _read_holder(fd: int) -> str:
    pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return f"process {pid}" if pid.isdigit() else "another process"
