"""Kernel binaries as MindSpore lays them out: ``<name>.o`` (ELF64), ``<name>.json``, ``<name>.info``.

This module reads the three files (one careful reader for the runtime and the kernel cache alike) and
verifies them. Verification is what makes loading native code safe: a kernel whose files disagree
with each other, whose object cannot be parsed, or that was built for a CPU with instructions this
host lacks never loads. The ``.ascend.meta`` records live in ``meta.py``, ELF parsing in ``elf.py``,
the ``.info`` identity and name in ``identity.py``; building binaries is ``ascendemu.kernels``' job.

Reading: ``.json`` (the commit marker) first, then ``.o`` and ``.info``, each opened without following
symlinks and without blocking (a FIFO in the cache never hangs a reader), checked to be a regular
file of this user that nobody else may write, and bounded in size; finally the ``.json`` path must
still name the inode that was read, so the three files come from one writer.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ascendemu.errors import check_int

from .elf import ALLOWED_UNDEFINED, ELF_MACHINES, read_elf
from .identity import host_info, name_from_info
from .kernel import (DYNAMIC, KERNEL_ABI_VERSION, MAX_BLOCK_DIM, CorruptKernelError, IncompatibleKernelError,
                     MissingKernelError, UnresolvedSymbolError)
from .meta import (FUNCTION_TYPE_AICORE, META_ABI_VERSION, META_BLOCK_DIM, META_FUNCTION_TYPE, META_LAYOUT,
                   META_LAYOUT_VERSION, META_SECTION, decode_meta, meta_block_dim)

__all__ = ["RT_DEV_BINARY_MAGIC_ELF", "JSON_MAGIC", "KERNEL_SUFFIX", "FILE_SUFFIXES", "KernelBinary",
           "canonical_json", "read_binary", "verify_binary"]

# rtDevBinary_t magic values (runtime/kernel.h); Ascend910A kernels are always RT_DEV_BINARY_MAGIC_ELF.
RT_DEV_BINARY_MAGIC_PLAIN = 0xABCEED50
RT_DEV_BINARY_MAGIC_PLAIN_AICPU = 0xABCEED51
RT_DEV_BINARY_MAGIC_PLAIN_AIVEC = 0xABCEED52
RT_DEV_BINARY_MAGIC_ELF = 0x43554245
RT_DEV_BINARY_MAGIC_ELF_AICPU = 0x41415243
RT_DEV_BINARY_MAGIC_ELF_AIVEC = 0x41415246
RT_DEV_BINARY_MAGIC_ELF_AICUBE = 0x41494343
JSON_MAGIC = "RT_DEV_BINARY_MAGIC_ELF"

KERNEL_SUFFIX = "__kernel0"
FILE_SUFFIXES = (".o", ".json", ".info")
# Largest file the reader accepts: a kernel object is tens of KiB, its JSON a few KiB.
MAX_FILE_BYTES = {".o": 64 << 20, ".json": 1 << 20, ".info": 1 << 20}
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
UNSAFE_WRITE_BITS = stat.S_IWGRP | stat.S_IWOTH


@dataclass
class KernelBinary:
    """The three files of one kernel, in memory."""

    bin_file_name: str
    obj: bytes
    json: dict
    info: dict

    def files(self) -> dict[str, bytes]:
        """Exact bytes of ``<bin_file_name><suffix>`` for each suffix."""
        return {".o": self.obj, ".json": canonical_json(self.json), ".info": canonical_json(self.info)}


def canonical_json(value: dict) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=4) + "\n").encode()


# ------------------------------------------------------------------------------------------- read

def _untrusted(fd: int, limit: int) -> str | None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user"
    if st.st_mode & UNSAFE_WRITE_BITS:
        return f"writable by group/other (mode {stat.S_IMODE(st.st_mode):o})"
    if st.st_size > limit:
        return f"{st.st_size} bytes, over the {limit}-byte limit"
    return None


def _read_all(fd: int, limit: int) -> bytes:
    chunks, total = [], 0
    while chunk := os.read(fd, 1 << 20):
        total += len(chunk)
        if total > limit:
            raise CorruptKernelError(f"file grew past the {limit}-byte limit while it was read")
        chunks.append(chunk)
    return b"".join(chunks)


def read_binary(directory: str | Path, bin_file_name: str) -> KernelBinary:
    """Read ``<bin_file_name>.o/.json/.info`` from ``directory`` as one consistent, parsed (not yet
    verified) binary. No ``.json``: MissingKernelError; anything else wrong: CorruptKernelError."""
    base = Path(directory)
    json_path = base / f"{bin_file_name}.json"
    fds: dict[str, int] = {}
    try:
        try:
            fds[".json"] = os.open(json_path, READ_FLAGS)
        except FileNotFoundError:
            raise MissingKernelError(f"cannot read {json_path}: no such file") from None
        for suffix in (".o", ".info"):
            path = base / f"{bin_file_name}{suffix}"
            try:
                fds[suffix] = os.open(path, READ_FLAGS)
            except FileNotFoundError:
                raise CorruptKernelError(f"cannot read {path}: {bin_file_name}{suffix} is missing") from None
        try:
            same = os.stat(json_path, follow_symlinks=False).st_ino == os.fstat(fds[".json"]).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            raise CorruptKernelError(f"{bin_file_name}.json changed while it was read")
        for suffix, fd in fds.items():
            why = _untrusted(fd, MAX_FILE_BYTES[suffix])
            if why:
                raise CorruptKernelError(f"{bin_file_name}{suffix} is {why}")
        data = {suffix: _read_all(fd, MAX_FILE_BYTES[suffix]) for suffix, fd in fds.items()}
    except OSError as exc:          # a symlink (O_NOFOLLOW: ELOOP), no read permission, ...
        raise CorruptKernelError(f"cannot read {base / bin_file_name}: {exc.strerror or exc}") from None
    finally:
        for fd in fds.values():
            os.close(fd)
    docs = {}
    for suffix in (".json", ".info"):
        try:
            docs[suffix] = json.loads(data[suffix])
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise CorruptKernelError(f"{bin_file_name}{suffix} is not valid JSON ({type(exc).__name__}: {exc})") from None
        if not isinstance(docs[suffix], dict):
            raise CorruptKernelError(f"{bin_file_name}{suffix} holds a {type(docs[suffix]).__name__}, not an object")
    return KernelBinary(bin_file_name, data[".o"], docs[".json"], docs[".info"])


# ----------------------------------------------------------------------------------------- verify

def _field(doc: dict, path: str, what: str):
    value = doc
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            raise CorruptKernelError(f"{what} lacks the field {path!r}")
        value = value[key]
    return value


def _enabled(features: str) -> set[str]:
    return {f[1:] for f in features.split(",") if f.startswith("+")}


def _check_host(kb: KernelBinary) -> None:
    built, here = _field(kb.info, "host", f"{kb.bin_file_name}.info"), host_info()
    if not isinstance(built, dict):
        raise CorruptKernelError(f"{kb.bin_file_name}.info has a malformed host record")
    if built.get("triple") != here["triple"]:
        raise IncompatibleKernelError(f"kernel {kb.bin_file_name} was built for {built.get('triple')}, "
                                      f"this host is {here['triple']}; rebuild it")
    missing = sorted(_enabled(str(built.get("cpu_features", ""))) - _enabled(here["cpu_features"]))
    if missing:
        raise IncompatibleKernelError(
            f"kernel {kb.bin_file_name} was built for a {built.get('cpu_name')} CPU with features this "
            f"{here['cpu_name']} lacks: {', '.join(missing)}; rebuild it on this host")


def _check_json(kb: KernelBinary) -> None:
    doc, what = kb.json, f"{kb.bin_file_name}.json"
    if _field(doc, "magic", what) != JSON_MAGIC:
        raise CorruptKernelError(f"{what} has magic {doc['magic']!r}, expected {JSON_MAGIC!r}")
    if _field(doc, "abiVersion", what) != KERNEL_ABI_VERSION:
        raise IncompatibleKernelError(f"{what} uses kernel ABI {doc['abiVersion']}, this runtime "
                                      f"speaks ABI {KERNEL_ABI_VERSION}; rebuild it")
    if _field(doc, "binFileName", what) != kb.bin_file_name:
        raise CorruptKernelError(f"{what} names binFileName {doc['binFileName']!r}")
    block_dim, args, flags, tiling = (_field(doc, key, what) for key in ("blockDim", "args", "parameters",
                                                                         "opParaSize"))
    check_int(tiling, f"{what} opParaSize", minimum=0, error=CorruptKernelError)
    dynamic = tiling > 0          # a dynamic-shape kernel: its tiling decides block dim and sizes per launch
    if tiling % 8 or dynamic != (block_dim == DYNAMIC):
        raise CorruptKernelError(f"{what} has opParaSize {tiling} and blockDim {block_dim}: a dynamic-shape "
                                 f"kernel has blockDim {DYNAMIC} and 8 bytes of tiling data per runtime fact")
    if not dynamic:
        check_int(block_dim, f"{what} blockDim", minimum=1, maximum=MAX_BLOCK_DIM, error=CorruptKernelError)
    if not isinstance(args, list) or not isinstance(flags, list) or len(args) != len(flags):
        raise CorruptKernelError(f"{what}: args and parameters must be lists of equal length")
    for arg in args:
        if not isinstance(arg, dict) or arg.get("role") not in ("in", "out", "workspace") \
                or not isinstance(arg.get("nbytes"), int) \
                or not (arg["nbytes"] == DYNAMIC if dynamic else 0 <= arg["nbytes"] < 1 << 48):
            raise CorruptKernelError(f"{what} has a malformed argument {arg!r}")


def verify_binary(kb: KernelBinary, *, named: bool = False) -> None:
    """Raise CorruptKernelError (or a subclass) unless ``kb`` is intact, consistent and loadable here.

    ``named``: the caller has already checked that ``kb.info`` is the .info it would write for this
    kernel name (the kernel cache does), so the name is not hashed again.
    """
    _check_json(kb)
    what = kb.bin_file_name
    digest = hashlib.sha256(kb.obj).hexdigest()
    if kb.json.get("sha256") != digest:
        raise CorruptKernelError(f"{what}.o has sha256 {digest}, but {what}.json records "
                                 f"{kb.json.get('sha256')}; the object is damaged")
    built_abi = _field(kb.info, "toolchain.abi_version", f"{what}.info")
    if built_abi != KERNEL_ABI_VERSION:
        raise IncompatibleKernelError(f"{what}.info was built for kernel ABI {built_abi}, this runtime "
                                      f"speaks ABI {KERNEL_ABI_VERSION}; rebuild it")
    _check_host(kb)
    if not named:
        try:
            device_id = int(_field(kb.info, "job_content.SocInfo.deviceId", f"{what}.info"))
            name = name_from_info(kb.info, device_id)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise CorruptKernelError(f"{what}.info is malformed: {type(exc).__name__}: {exc}") from exc
        if name != what:
            raise CorruptKernelError(f"{what}.info describes kernel {name}; the files do not belong together")
    facts = read_elf(kb.obj)
    machine = ELF_MACHINES.get(host_info()["triple"].split("-")[0])
    if facts.machine != machine:
        raise IncompatibleKernelError(f"{what}.o is for machine {facts.machine}, this host needs {machine}")
    symbol = _field(kb.json, "kernelName", f"{what}.json")
    if symbol != what + KERNEL_SUFFIX:
        raise CorruptKernelError(f"{what}.json names kernel {symbol!r}, expected {what + KERNEL_SUFFIX!r}")
    if symbol not in facts.functions:
        raise CorruptKernelError(f"{what}.o does not define {symbol!r} as a global function in an "
                                 f"executable section (defines {sorted(facts.functions)})")
    if facts.meta is None:
        raise CorruptKernelError(f"{what}.o has no {META_SECTION} section")
    meta = decode_meta(facts.meta)
    expected = {META_FUNCTION_TYPE: FUNCTION_TYPE_AICORE, META_ABI_VERSION: KERNEL_ABI_VERSION,
                META_LAYOUT_VERSION: META_LAYOUT}
    if any(meta[kind] != value for kind, value in expected.items()):
        raise IncompatibleKernelError(f"{what}.o {META_SECTION} records {meta}, expected {expected} "
                                      f"(AI core function, kernel ABI, record layout)")
    if meta[META_BLOCK_DIM] != meta_block_dim(kb.json["blockDim"]):
        raise CorruptKernelError(f"{what}.o {META_SECTION} says block dim {meta[META_BLOCK_DIM]}, "
                                 f"{what}.json says {kb.json['blockDim']}")
    refused = sorted(set(facts.undefined) - ALLOWED_UNDEFINED)
    if refused:
        raise UnresolvedSymbolError(f"{what}.o needs symbols the loader does not provide: {refused}")
    if list(facts.undefined) != kb.json.get("undefinedSymbols"):
        raise CorruptKernelError(f"{what}.json lists undefined symbols {kb.json.get('undefinedSymbols')}, "
                                 f"the object has {list(facts.undefined)}")
