"""Where a rank's kernel cache lives, and whether it is safe to load native code from there.

MindSpore's layout: ``${MS_COMPILER_CACHE_PATH:-.}/rank_${RANK_ID:-0}/kernel_meta/``. Loading a
cached ``.o`` runs its machine code in this process, so a directory that another user could write
to is a code-injection path: such a directory is refused rather than silently trusted.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from ascendemu.errors import ACL_ERROR_RT_PARAM_INVALID, AclError, InvalidParamError
from ascendemu.ranks import resolve_rank
from ascendemu.hal.binary import READ_FLAGS, UNSAFE_WRITE_BITS, _read_all, _untrusted
from ascendemu.hal.kernel import CorruptKernelError

CACHE_PATH_ENV = "MS_COMPILER_CACHE_PATH"
KERNEL_META = "kernel_meta"
LOCKS_DIR = ".locks"
QUARANTINE_DIR = ".quarantine"
BUILD_LOG = ".build.log"
PRIVATE_DIR_MODE = 0o700


class CacheSecurityError(AclError):
    """The cache directory could be written by someone else, so its kernels cannot be trusted."""

    code = ACL_ERROR_RT_PARAM_INVALID


def resolve_root(root: str | os.PathLike | None = None) -> Path:
    """The explicit root, else ``MS_COMPILER_CACHE_PATH``, else the current directory (absolute)."""
    if root is None:
        root = os.environ.get(CACHE_PATH_ENV, "") or "."
    return Path(root).expanduser().absolute()


def rank_dir(root: Path, rank: int) -> Path:
    return root / f"rank_{rank}"


RANK_PREFIX = "rank_"


def rank_kernel_metas(root: Path) -> list[tuple[int, Path]]:
    """Every ``rank_N/kernel_meta`` directory under ``root``, by rank (nothing is created)."""
    found = []
    if root.is_dir():
        for entry in os.scandir(root):
            number = entry.name.removeprefix(RANK_PREFIX)
            if entry.name.startswith(RANK_PREFIX) and number.isdigit() and (Path(entry.path) / KERNEL_META).is_dir():
                found.append((int(number), Path(entry.path) / KERNEL_META))
    return sorted(found)


def machine_locks_dir(kernel_meta: Path) -> Path:
    """The machine-wide build locks of the ranks sharing a cache root (created on the first build, so a
    warm start writes nothing there), checked like any cache directory (owner, mode, no link), since the
    root may be shared or world-writable (``/tmp``). With a cache root of its own
    (``MS_COMPILER_CACHE_PATH``) they are ``<root>/.locks``, one directory for all its ranks. Without it
    the root is the user's working directory, which gains nothing but ``rank_N/`` (as with MindSpore):
    they are ``<root>/rank_N/.locks``, the rank's own."""
    rank_directory = kernel_meta.parent
    if os.environ.get(CACHE_PATH_ENV):
        return rank_directory.parent / LOCKS_DIR
    return rank_directory / LOCKS_DIR


def kernel_meta_dir(root: str | os.PathLike | None = None, rank: int | None = None) -> Path:
    """``<root>/rank_<rank>/kernel_meta`` with the environment defaults applied; nothing is created."""
    return rank_dir(resolve_root(root), resolve_rank(rank)) / KERNEL_META


def insecurity(path: Path, st: os.stat_result | None = None) -> str | None:
    """Why directory ``path`` must not be trusted (another owner, or writable by group/other), else
    None; ``st``: its status when the caller already holds it (an opened descriptor's fstat)."""
    st = st or path.stat()
    if st.st_uid != os.geteuid():
        return (f"directory {path} is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}); "
                f"use a private {CACHE_PATH_ENV}")
    if st.st_mode & UNSAFE_WRITE_BITS:
        return (f"directory {path} is writable by group/other (mode {stat.S_IMODE(st.st_mode):o}); "
                f"run `chmod go-w {path}` or use a private {CACHE_PATH_ENV}")
    return None


def read_private(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes (at most ``limit``) and status of ``path``, a regular file of this user nobody else may write.

    ``lstat`` first, so a symlink, FIFO or device file is refused without being opened (opening some
    devices has side effects); then ``open(O_NOFOLLOW | O_NONBLOCK)`` and the same checks on what was
    opened, which must be the inode ``lstat`` saw. Missing: FileNotFoundError; anything else wrong:
    CorruptKernelError saying why (the error of the one careful reader, ``hal.binary``).
    """
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise CorruptKernelError(f"{path} is not a regular file (mode {stat.filemode(st.st_mode)})")
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:          # a symlink swapped in since lstat (O_NOFOLLOW: ELOOP), no permission
        raise CorruptKernelError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        opened = os.fstat(fd)
        why = "replaced while it was opened" if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino) \
            else _untrusted(fd, limit)
        if why:
            raise CorruptKernelError(f"{path} is {why}")
        return _read_all(fd, limit), opened
    finally:
        os.close(fd)


def check_secure(kernel_meta: Path) -> None:
    """Refuse a kernel_meta directory (or its rank_N parent) someone else could have written to."""
    for path in (kernel_meta.parent, kernel_meta):
        problem = insecurity(path)
        if problem:
            raise CacheSecurityError(f"refusing to load kernels: {problem}")


def make_private_dir(path: Path) -> None:
    """Create ``path`` with mode 0o700 whatever the umask; an existing directory is left as it is.
    A symlink in its place is refused: the cache would write (quarantine, build) wherever it points."""
    try:
        os.mkdir(path, PRIVATE_DIR_MODE)
    except FileExistsError:
        if path.is_symlink():
            raise CacheSecurityError(f"{path} is a symbolic link; the kernel cache writes only into real "
                                     f"directories: remove the link or pick another {CACHE_PATH_ENV}") from None
        if not path.is_dir():
            raise InvalidParamError(f"{path} exists and is not a directory; move it away or pick another "
                                    f"{CACHE_PATH_ENV}") from None
        return
    os.chmod(path, PRIVATE_DIR_MODE)


def secure_dir(path: Path) -> None:
    """:func:`make_private_dir`, then refuse ``path`` (CacheSecurityError) unless it is this user's and
    nobody else can write it: what the cache writes there (locks, quarantined files) must not land in
    a directory another user planted or can swap files in."""
    make_private_dir(path)
    problem = insecurity(path)
    if problem:
        raise CacheSecurityError(f"refusing to use the kernel cache: {problem}")


def prepare(kernel_meta: Path) -> None:
    """Create the cache directories (private) and check that they are safe to load code from."""
    root = kernel_meta.parent.parent
    try:
        if not root.exists():
            os.makedirs(root.parent, exist_ok=True)
            make_private_dir(root)
        for path in (kernel_meta.parent, kernel_meta):
            make_private_dir(path)
        check_secure(kernel_meta)
        for path in (kernel_meta / LOCKS_DIR, kernel_meta / QUARANTINE_DIR):
            secure_dir(path)
    except OSError as exc:
        raise InvalidParamError(f"cannot create the kernel cache directory {kernel_meta}: {exc.strerror or exc}; "
                                f"set {CACHE_PATH_ENV} to a directory you can write") from None
