"""Authenticity of cache entries: a per-user secret key and an HMAC-SHA256 in every entry.

sha256 in a ``.json`` proves that an object is intact, not who wrote it: anyone who can put three
consistent files into ``kernel_meta`` could have their code run. So every entry this user's
ascendemu writes carries ``hmacSha256``, a MAC keyed by a secret only this user can read, over the
entry's content; an entry without a valid MAC is foreign: quarantined and rebuilt, never loaded.

The key: ``$ASCENDEMU_CACHE_KEY_FILE``, else ``$XDG_CONFIG_HOME/ascendemu/cache.key``, else
``~/.config/ascendemu/cache.key``: 32 random bytes as 64 hex digits, created on first use (mode 0600,
in a 0700 directory; ``link(2)`` makes the creation atomic, so concurrent first uses agree on one key).
A key file that is a symlink, not this user's, or readable or writable by group/other is refused.

What is MACed: a domain tag, the entry's name, then each part with its length: a kernel entry's
``.o`` bytes and its ``.json`` (without the MAC field) and ``.info`` as canonical compact JSON; a
graph entry's JSON (without the MAC field). The MAC thus covers exactly what is parsed and used,
computed from the bytes the careful reader already holds (no second read of any file). The seed
layout ``.o/.json/.info`` is unchanged; other tools see one more field in the ``.json``.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from ascendemu.hal.binary import KernelBinary
from ascendemu.hal.kernel import CorruptKernelError

from .atomic import fsync_dir
from .layout import CacheSecurityError, make_private_dir, read_private

KEY_FILE_ENV = "ASCENDEMU_CACHE_KEY_FILE"
KEY_DIR = "ascendemu"
KEY_FILE = "cache.key"
KEY_BYTES = 32
# Largest key file read: 64 hex digits and a newline; anything much longer is not a key.
MAX_KEY_FILE_BYTES = 256
# Whoever can read the key can forge entries, whoever can write it can swap it: no group/other bits.
UNSAFE_KEY_BITS = 0o077
MAC_FIELD = "hmacSha256"
KERNEL_DOMAIN = b"ascendemu kernel cache entry v1\0"
GRAPH_DOMAIN = b"ascendemu graph cache entry v1\0"


class CacheKeyError(CacheSecurityError):
    """The cache key file is unsafe or unusable, so no entry could be trusted."""


def key_path() -> Path:
    """Where this user's cache key lives (see the module docstring for the order)."""
    explicit = os.environ.get(KEY_FILE_ENV, "")
    if explicit:
        return Path(explicit).expanduser().absolute()
    config = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(config) if os.path.isabs(config) else Path.home() / ".config"   # XDG: relative = unset
    return base / KEY_DIR / KEY_FILE


def _compact(doc: dict) -> bytes:
    """Canonical JSON: the same document always gives the same bytes (C encoder: fast)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def _unsigned(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != MAC_FIELD}


@dataclass(frozen=True)
class CacheKey:
    """This user's secret MAC key and the file it came from."""

    path: Path
    secret: bytes = field(repr=False)

    def mac(self, domain: bytes, name: str, parts: list[bytes]) -> str:
        """HMAC-SHA256 (hex) over the domain, the name and each length-prefixed part."""
        h = hmac.new(self.secret, domain + name.encode() + b"\0", hashlib.sha256)
        for part in parts:
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
        return h.hexdigest()

    def entry_mac(self, binary: KernelBinary) -> str:
        return self.mac(KERNEL_DOMAIN, binary.bin_file_name,
                        [binary.obj, _compact(_unsigned(binary.json)), _compact(binary.info)])

    def graph_mac(self, name: str, doc: dict) -> str:
        return self.mac(GRAPH_DOMAIN, name, [_compact(_unsigned(doc))])

    def check(self, stored, want: str, what: str) -> str | None:
        """Why ``stored`` (a MAC field as read) is not ``want``, or None."""
        if stored is None:
            return (f"{what} carries no {MAC_FIELD}: a foreign entry (not written by this user's ascendemu, "
                    f"whose key is {self.path}); it is never loaded")
        if not isinstance(stored, str) or not stored.isascii() or not hmac.compare_digest(stored, want):
            return (f"{what} has a {MAC_FIELD} that this user's key ({self.path}) did not make: a foreign "
                    f"entry (another key, or altered since it was written); it is never loaded")
        return None


def sign_entry(binary: KernelBinary, key: CacheKey) -> KernelBinary:
    """``binary`` with its MAC in the .json, ready to write. JSON round trip first, so that the MAC
    covers the documents exactly as a reader will parse them (tuples become lists, and so on)."""
    native = replace(binary, json=json.loads(_compact(_unsigned(binary.json))),
                     info=json.loads(_compact(binary.info)))
    return replace(native, json={**native.json, MAC_FIELD: key.entry_mac(native)})


def entry_auth_problem(binary: KernelBinary, key: CacheKey) -> str | None:
    """Why ``binary`` (as read) was not written with ``key``, or None."""
    return key.check(binary.json.get(MAC_FIELD), key.entry_mac(binary), f"{binary.bin_file_name}.json")


# --------------------------------------------------------------------------------------------- key

def _refuse(path: Path, why: str) -> CacheKeyError:
    return CacheKeyError(
        f"refusing the kernel cache key {path}: {why}. Make it a regular file of yours that only you can "
        f"read (`chmod 600 {path}`), or remove it: a new key is made on next use and the cache's entries "
        f"are rebuilt once; or point {KEY_FILE_ENV} at another private key file")


def _read_key(path: Path) -> bytes:
    """The secret in ``path``; FileNotFoundError when there is none yet."""
    if os.path.islink(path):
        raise _refuse(path, "it is a symbolic link (whoever controls its target controls the key)")
    try:
        data, st = read_private(path, MAX_KEY_FILE_BYTES)
    except CorruptKernelError as exc:
        raise _refuse(path, exc.message) from None
    if stat.S_IMODE(st.st_mode) & UNSAFE_KEY_BITS:
        raise _refuse(path, f"its mode {stat.S_IMODE(st.st_mode):o} lets group/other read or write it, so "
                            f"someone else may know it")
    try:
        secret = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        secret = b""
    if len(secret) != KEY_BYTES:
        raise _refuse(path, f"it does not hold {KEY_BYTES * 2} hex digits")
    return secret


def _create_key(path: Path) -> None:
    """Write a new random key to ``path`` unless another process got there first (then keep theirs)."""
    directory = path.parent
    if not directory.is_dir():
        os.makedirs(directory.parent, exist_ok=True)
        make_private_dir(directory)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)   # mode 0600
    try:
        with os.fdopen(fd, "w") as f:
            f.write(os.urandom(KEY_BYTES).hex() + "\n")
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)          # atomic and exclusive: never replaces a key someone made
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)
    fsync_dir(directory)


def load_key(path: Path | None = None) -> CacheKey:
    """This user's cache key (``path`` defaults to :func:`key_path`), created on first use."""
    path = path or key_path()
    try:
        return CacheKey(path, _read_key(path))
    except FileNotFoundError:
        pass
    try:
        _create_key(path)
    except OSError as exc:
        raise CacheKeyError(f"cannot create the kernel cache key {path}: {exc.strerror or exc}; set "
                            f"{KEY_FILE_ENV} to a file in a private directory you can write") from None
    return CacheKey(path, _read_key(path))
