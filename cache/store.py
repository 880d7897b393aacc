"""The user's kernel store: every kernel this user built, kept for the next project's ranks.

CANN keeps compiled operators in a disk cache of its own beside each job's ``kernel_meta``
(``ACL_OP_COMPILER_CACHE_DIR``, else ``$ASCEND_CACHE_PATH``, else ``~/atc_data``; one folder per SoC,
aged to ``ASCEND_MAX_OP_CACHE_SIZE`` MB), so a second project, or a new working directory, does not
compile again what the first compiled. This is that cache: a kernel_meta-shaped directory per SoC that
a rank's cache looks in after its sibling ranks, before building (``entry.ensure_entry``), and that every
build is copied into. An entry from here passes every check a rank's own does (``entry.entry_problem``:
its .info, the object's checksums, the plan's launch facts, this user's MAC), so the store adds no trust
beyond the rank's: a directory others could write to is not used.

Switches (CANN's names): ``ACL_OP_COMPILER_CACHE_MODE=disable`` turns the store off (``enable``, the
default, uses it); ``ASCEND_MAX_OP_CACHE_SIZE`` caps its size in MB (default 500; -1: never aged) and
``ASCEND_REMAIN_CACHE_SIZE_RATIO`` (percent, default 50) is what an ageing keeps: the entries used least
recently go first, and never one used in the last half hour (CANN's rule), so a store in use may exceed
its cap for a while.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from ascendemu.errors import InvalidParamError

from .layout import LOCKS_DIR, QUARANTINE_DIR, CacheSecurityError, insecurity, make_private_dir, secure_dir
from .locks import EntryLock

MODE_ENV = "ACL_OP_COMPILER_CACHE_MODE"
DIR_ENV = "ACL_OP_COMPILER_CACHE_DIR"
ROOT_ENV = "ASCEND_CACHE_PATH"
MAX_SIZE_ENV = "ASCEND_MAX_OP_CACHE_SIZE"
REMAIN_RATIO_ENV = "ASCEND_REMAIN_CACHE_SIZE_RATIO"
DEFAULT_ROOT = "atc_data"              # under the home directory, as CANN's
STORE_DIR = "ascendemu_kernel_cache"   # ours beside CANN's own kernel_cache, never mixed with its files
MODES = ("enable", "disable")
DEFAULT_MAX_MB = 500
DEFAULT_REMAIN_PERCENT = 50
# An entry used this recently is never aged out (CANN: "not accessed for more than half an hour").
MIN_IDLE_S = 30 * 60
# Ageing looks at the store's size when this process first writes to it, then after each further
# tenth of the cap written (a scan of a full store costs milliseconds; a build costs 60 ms or more).
RESCAN_SHARE = 0.1


def store_root() -> Path | None:
    """The folder of this user's stores (one per SoC), or None when ``ACL_OP_COMPILER_CACHE_MODE`` disables
    them."""
    mode = os.environ.get(MODE_ENV, "") or "enable"
    if mode not in MODES:
        raise InvalidParamError(f"{MODE_ENV}={mode!r} is not one of {', '.join(MODES)}")
    if mode == "disable":
        return None
    root = os.environ.get(DIR_ENV, "") or os.environ.get(ROOT_ENV, "") or str(Path.home() / DEFAULT_ROOT)
    return Path(root).expanduser().absolute() / STORE_DIR


def store_dir(soc: str) -> Path | None:
    """This user's store for ``soc``, or None when ``ACL_OP_COMPILER_CACHE_MODE`` disables it."""
    root = store_root()
    return None if root is None else root / soc


def usable(store: Path) -> bool:
    """Whether ``store`` exists and only this user can write it (and the folder above it)."""
    try:
        return not (insecurity(store.parent) or insecurity(store))
    except OSError:
        return False


def prepare_store(store: Path) -> None:
    """Create the store's folders private; CacheSecurityError when they are not this user's alone."""
    try:
        os.makedirs(store.parent.parent, exist_ok=True)
    except OSError as exc:
        raise CacheSecurityError(f"cannot create the kernel store {store}: {exc.strerror or exc}; "
                                 f"set {DIR_ENV} to a directory you can write or {MODE_ENV}=disable") from None
    for path in (store.parent, store):
        secure_dir(path)
    for path in (store / LOCKS_DIR, store / QUARANTINE_DIR):
        make_private_dir(path)


def limits() -> tuple[int | None, float]:
    """(cap in bytes or None for never, share kept by an ageing) from CANN's two variables."""
    def number(name: str, default: int) -> int:
        text = os.environ.get(name, "") or str(default)
        try:
            return int(text)
        except ValueError:
            raise InvalidParamError(f"{name}={text!r} is not an integer") from None
    cap_mb = number(MAX_SIZE_ENV, DEFAULT_MAX_MB)
    ratio = number(REMAIN_RATIO_ENV, DEFAULT_REMAIN_PERCENT)
    if cap_mb < -1 or cap_mb == 0:
        raise InvalidParamError(f"{MAX_SIZE_ENV}={cap_mb} must be a size in MB (> 0) or -1 (never age)")
    if not 1 <= ratio <= 100:
        raise InvalidParamError(f"{REMAIN_RATIO_ENV}={ratio} must be a percentage in [1, 100]")
    return (None if cap_mb == -1 else cap_mb * 2 ** 20), ratio / 100


# bytes this process wrote to each store since it last looked at the store's size
_WRITTEN: dict[Path, int] = {}


def touch(store: Path, name: str) -> None:
    """Mark entry ``name`` used now (its .json's mtime: access times are often not kept), so ageing
    keeps it; skipped when ageing is off, as CANN's -1 does."""
    if limits()[0] is not None:
        try:
            os.utime(store / f"{name}.json")
        except OSError:
            pass


def age(store: Path, wrote: int, now: float | None = None) -> list[str]:
    """After writing ``wrote`` bytes: when the store is over its cap, delete the least recently used
    entries idle for MIN_IDLE_S until it holds the kept share; returns the names deleted."""
    cap, keep = limits()
    if cap is None:
        return []
    pending = _WRITTEN.get(store)
    _WRITTEN[store] = (pending or 0) + wrote
    if pending is not None and _WRITTEN[store] < RESCAN_SHARE * cap:
        return []
    _WRITTEN[store] = 0
    entries: dict[str, list] = {}                   # name -> [bytes, .json mtime]
    for item in os.scandir(store):
        stem, dot, suffix = item.name.rpartition(".")
        if not dot or suffix not in ("o", "info", "json") or not item.is_file(follow_symlinks=False):
            continue
        found = entries.setdefault(stem, [0, 0.0])
        st = item.stat(follow_symlinks=False)
        found[0] += st.st_size
        if suffix == "json":
            found[1] = st.st_mtime
    total = sum(size for size, _ in entries.values())
    if total <= cap:
        return []
    now = time.time() if now is None else now
    deleted = []
    for name, (size, used) in sorted(entries.items(), key=lambda item: item[1][1]):
        if total <= keep * cap or now - used < MIN_IDLE_S:
            break
        with EntryLock(store / LOCKS_DIR / f"{name}.lock"):      # never under a writer of the entry
            for suffix in (".json", ".o", ".info"):     # .json first: the entry is uncommitted from here on
                try:
                    os.unlink(store / f"{name}{suffix}")
                except FileNotFoundError:
                    pass
        total -= size
        deleted.append(name)
    return deleted


class StoreWarning(UserWarning):
    """A built kernel could not be kept in the user's kernel store (the run goes on without it)."""
