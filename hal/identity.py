"""A kernel's identity: the part of its ``.info`` that decides its code, and the name hashed from it.

Kernel name: ``<func_name>_<hash>_<device_id>``, hash = the first 8 bytes of sha256 over the identity
part of the .info, printed as an unsigned decimal like MindSpore's 64-bit hash. The identity includes
the op signature, the SoC, the toolchain, the host CPU features and a digest of the kernel sources, so
a different compiler, host, chip or kernel generator gets a different name instead of a stale binary.

Two field lists, one home: *node-name* fields name the graph node a kernel was first built for (they
never affect the code, so a cache ignores them when it compares a stored .info with the one it would
write); *naming* fields hold the kernel's own name and device (outside the hash, which they carry).
"""
from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

import llvmlite.binding as llvm

__all__ = ["HASH_BYTES", "host_info", "identity", "comparable", "name_from_info", "first_difference",
           "info_mismatch"]

HASH_BYTES = 8
# (level, fields): "top" = the .info itself, "job" = job_content, "soc" = job_content.SocInfo,
# "op" = the last entry of job_content.op_list (the op; the entries before it are its Data inputs)
NODE_NAME_FIELDS = {"job": ("full_name",), "op": ("name", "ori_name")}
NAMING_FIELDS = {"top": ("source_id",), "job": ("fusion_op_name",), "soc": ("deviceId",), "op": ("op_name",)}


@functools.cache
def host_info() -> dict:
    """This host as kernels record it: what the object's instructions may assume."""
    return {"cpu_name": llvm.get_host_cpu_name(), "cpu_features": llvm.get_host_cpu_features().flatten(),
            "triple": llvm.get_process_triple()}


def _without(info: dict, *field_lists: dict[str, tuple[str, ...]]) -> dict:
    """A copy of ``info`` without the given fields; only the levels that lose keys are copied (the rest
    is shared with ``info`` and never modified). Raises KeyError/TypeError on a malformed .info."""
    drop = {level: {f for fields in field_lists for f in fields.get(level, ())} for level in ("top", "job", "soc", "op")}
    out = {k: v for k, v in info.items() if k not in drop["top"]}
    job = out["job_content"] = {k: v for k, v in info["job_content"].items() if k not in drop["job"]}
    job["SocInfo"] = {k: v for k, v in job["SocInfo"].items() if k not in drop["soc"]}
    job["op_list"] = [*job["op_list"][:-1], {k: v for k, v in job["op_list"][-1].items() if k not in drop["op"]}]
    return out


def identity(info: dict) -> dict:
    """The hashed part of a .info: without node names, the kernel's own name and its device."""
    return _without(info, NODE_NAME_FIELDS, NAMING_FIELDS)


def comparable(info: dict) -> dict:
    """A .info without the node-name fields: what must match for a stored kernel to be reused."""
    return _without(info, NODE_NAME_FIELDS)


def name_from_info(info: dict, device_id: int) -> str:
    """The kernel name of a .info (hashes its identity)."""
    func_name = info["job_content"]["op_list"][-1]["func_name"]
    compact = json.dumps(identity(info), sort_keys=True, separators=(",", ":")).encode()   # C encoder
    digest = hashlib.sha256(compact).digest()[:HASH_BYTES]
    return f"{func_name}_{int.from_bytes(digest, 'big')}_{device_id}"


def first_difference(stored: Any, wanted: Any, where: str = "") -> str | None:
    """A readable path to the first place two JSON values differ, or None when they are equal."""
    if isinstance(stored, dict) and isinstance(wanted, dict):
        for key in sorted(set(stored) | set(wanted)):
            if key not in stored:
                return f"{where}/{key} is missing"
            if key not in wanted:
                return f"{where}/{key} is unexpected"
            found = first_difference(stored[key], wanted[key], f"{where}/{key}")
            if found:
                return found
        return None
    if isinstance(stored, list) and isinstance(wanted, list) and len(stored) == len(wanted):
        for i, (s, w) in enumerate(zip(stored, wanted)):
            found = first_difference(s, w, f"{where}[{i}]")
            if found:
                return found
        return None
    if stored != wanted or type(stored) is not type(wanted):
        return f"{where or '/'} is {json.dumps(stored)[:80]}, this build needs {json.dumps(wanted)[:80]}"
    return None


def info_mismatch(stored: dict, wanted: dict) -> str | None:
    """Why a stored .info is not ``wanted`` (node names aside) as a phrase ("does not match this build:
    ..."), or None. ``wanted`` must be JSON-native (lists, not tuples), as a .info is written."""
    try:
        mine = comparable(stored)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        return f"is malformed ({type(exc).__name__}: {exc})"
    want = comparable(wanted)
    if mine == want:
        return None
    return f"does not match this build: {first_difference(mine, want)}"
