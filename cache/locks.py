"""Per-kernel inter-process locks, so that concurrent processes build each kernel once.

``flock`` on ``kernel_meta/.locks/<name>.lock``: the kernel releases it when the holder dies, so a
killed builder never leaves a stale lock. The holder writes its pid into the file so that a waiter
that gives up can say who held it. Lock files are never deleted while in use: a waiter holding the
old inode and a newcomer creating a new one would both "own" the lock.
"""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from ascendemu.errors import ACL_ERROR_RT_INTERNAL_ERROR, AclError

LOCK_TIMEOUT_S = 600.0
LOCK_POLL_S = 0.02
LOCK_FILE_MODE = 0o600


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
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, LOCK_FILE_MODE)
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
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.ftruncate(fd, 0)
            os.close(fd)   # closing the descriptor drops the flock

    def __enter__(self) -> "EntryLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return f"process {pid}" if pid.isdigit() else "another process"
