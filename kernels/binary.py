"""Packaging a kernel as MindSpore lays it out: ``<name>.o`` (ELF64), ``<name>.json``, ``<name>.info``.

This module writes what ``ascendemu.hal.binary`` reads and verifies: :func:`build_info` (pure Python)
describes a kernel and names it; :func:`build_binary` compiles it (numba, cache misses only) and
fills the ``.json``. The name's hash covers the identity part of the .info (see
``ascendemu.hal.identity``): the signature, the SoC, the toolchain, the host and a digest of the
kernel sources the op's kernels are made from, so editing a generator renames its kernels.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import platform
import re
from pathlib import Path

from ascendemu.device.spec import get_spec
from ascendemu.hal.binary import JSON_MAGIC, KERNEL_SUFFIX, KernelBinary
from ascendemu.hal.blas import blas_version
from ascendemu.hal.elf import ALLOWED_UNDEFINED
from ascendemu.hal.identity import host_info, name_from_info
from ascendemu.hal.kernel import KERNEL_ABI_VERSION, UnresolvedSymbolError
from ascendemu.hal.meta import encode_meta

from .library import KernelFamily, KernelPlan, plan_kernel
from .registry import get_op
from .signature import OpSignature, TensorDesc, attrs_from_json, jsonable

__all__ = ["build_info", "kernel_from_info", "build_binary", "kernel_name", "toolchain_info", "retarget"]

# Kernel sources every kernel depends on; an op's generator module (and the ops modules it imports)
# is added per op, so editing one generator renames only that generator's kernels.
SHARED_SOURCES = ("signature.py", "opdef.py", "registry.py", "library.py", "codegen.py", "binary.py",
                  "ops/__init__.py", "ops/nb.py", "ops/src.py", "ops/common.py")
_LOCAL_IMPORT = re.compile(r"^from \.(\w+) import|^from \. import (\w+)", re.MULTILINE)


@functools.cache
def _sources_digest(generator: str) -> str:
    """sha256 over the kernel sources a kernel of ``generator`` (an ops module name) is made from."""
    package = Path(__file__).parent
    files, todo = set(SHARED_SOURCES), [generator]
    while todo:
        rel = f"ops/{todo.pop()}.py"
        if rel in files:
            continue
        files.add(rel)
        for a, b in _LOCAL_IMPORT.findall((package / rel).read_text()):
            todo.append(a or b)
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + (package / rel).read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def _toolchain_versions() -> dict:
    return {"numba": importlib.metadata.version("numba"), "llvmlite": importlib.metadata.version("llvmlite"),
            "python": platform.python_version(), "abi_version": KERNEL_ABI_VERSION, "blas": blas_version()}


@functools.cache
def toolchain_info(op: str) -> dict:
    """Everything besides the signature that decides the bytes of an ``op`` kernel."""
    return {**_toolchain_versions(), "kernel_sources": _sources_digest(get_op(op).generator)}


# MindSpore's shape of a tensor whose rank is unknown at compile time (a dynamic-shape kernel's operands)
UNKNOWN_RANK = [-2]
# .info attributes of a dynamic-shape kernel besides its static tiling facts
TILING_DATA_ATTR, WORKSPACES_ATTR = "tiling_data", "workspaces"


def _desc(dtype: str, shape: tuple[int, ...] | None, name: str | None) -> dict:
    """A tensor of the .info; ``shape`` None: unknown rank (a dynamic-shape kernel's operand)."""
    dims = UNKNOWN_RANK if shape is None else list(shape)
    entry = {"L1_addr_offset": 0, "L1_fusion_type": -1, "L1_workspace_size": -1, "addr_type": 0,
             "data_type": dtype, "dtype": dtype, "format": "ND", "ori_format": "ND",
             "ori_shape": dims, "param_type": "required", "range": [] if shape is None else [[d, d] for d in dims],
             "shape": dims, "slice_offset": [], "split_index": 0, "total_shape": [], "valid": True,
             "valid_shape": []}
    if name is not None:
        entry["name"] = name
    return entry


def build_info(sig: OpSignature | KernelPlan | KernelFamily, device_id: int, soc: str | None = None,
               full_name: str = "") -> dict:
    """The .info of a kernel, shaped like MindSpore's and JSON-native as written (pure Python: no numba).
    Pass a KernelPlan when the outputs are already known, so they are not inferred again; ``soc``
    defaults to the default device preset's. A dynamic-shape kernel's .info (MindSpore's "fuzzily
    built" kernels) describes its family: operands of unknown rank and, as attributes, its static tiling
    facts, the facts its tiling data carries and its workspace count: what it was compiled for, so what
    names it (and what :func:`kernel_from_info` reads back)."""
    kernel = sig if isinstance(sig, (KernelPlan, KernelFamily)) else plan_kernel(sig)
    if isinstance(kernel, KernelPlan) and kernel.family is not None:
        kernel = kernel.family
    soc = soc if soc is not None else get_spec().soc_version
    if isinstance(kernel, KernelFamily):
        op_type, dynamic = kernel.op, True
        ins, outs = [(t, None) for t in kernel.inputs], [(t, None) for t in kernel.outputs]
        attrs = [*kernel.static, (TILING_DATA_ATTR, kernel.runtime), (WORKSPACES_ATTR, kernel.workspaces)]
    else:
        op_type, dynamic = kernel.sig.op, False
        ins = [(d.dtype, d.shape) for d in kernel.sig.inputs]
        outs = [(d.dtype, d.shape) for d in kernel.outputs]
        attrs = kernel.sig.attrs
    inputs = [_desc(t, shape, f"x_{i}") for i, (t, shape) in enumerate(ins)]
    data = [{"name": d["name"], "output_desc": [d], "type": "Data"} for d in inputs]
    op = {"attrs": [{"name": k, "valid": True, "value": jsonable(v)} for k, v in attrs],
          "build_type": "fuzzily_build" if dynamic else "accurately_build", "dynamic_compile_static": False,
          "func_name": get_op(op_type).func_name,
          "input_desc": inputs, "int64mode": False, "max_kernel_id": 10, "miss_support_info": "",
          "module_name": "ascendemu.kernels.library", "name": full_name, "op_name": "",
          "ori_name": [full_name], "output_data_desc": [_desc(t, shape, None) for t, shape in outs],
          "output_desc": [_desc(t, shape, f"y_{i}") for i, (t, shape) in enumerate(outs)], "pattern": "Opaque",
          "py_module_path": "", "type": op_type, "unknown_shape": dynamic}
    soc_info = {"autoTilingMode": "NO_TUNE", "coreNum": "", "coreType": "", "deviceId": str(device_id),
                "l1Fusion": "false", "l2Fusion": "false", "l2Mode": "2", "mdl_bank_path": "",
                "offlineTune": False, "op_bank_path": "", "op_bank_update": False, "op_debug_dir": "./",
                "op_debug_level": "0", "op_impl_mode": "", "op_impl_mode_list": [], "socVersion": soc,
                "vector_fp_ceiling": ""}
    info = {"job_content": {"SocInfo": soc_info, "full_name": full_name, "fusion_op_name": "",
                            "graph_name": "", "l1_size": -1, "op_list": [*data, op], "scope_id": -1},
            "job_id": 1, "job_type": "Compile", "source_id": device_id,
            "toolchain": dict(toolchain_info(op_type)), "host": dict(host_info())}
    name = name_from_info(info, device_id)
    info["job_content"]["fusion_op_name"] = op["op_name"] = name
    return info


def kernel_from_info(info: dict) -> KernelPlan | KernelFamily:
    """The kernel a .info describes, planned again (raises InvalidParamError if it is not one this version
    can build; KeyError/TypeError/ValueError if malformed): :func:`build_info` of it is the .info this
    version would write, its ``launch_facts()`` what the .json must say."""
    op = info["job_content"]["op_list"][-1]
    attrs = attrs_from_json({a["name"]: a["value"] for a in op["attrs"]})
    if op["unknown_shape"]:
        runtime, workspaces = attrs.pop(TILING_DATA_ATTR), attrs.pop(WORKSPACES_ATTR)
        return KernelFamily(op["type"], tuple(d["dtype"] for d in op["input_desc"]),
                            tuple(d["dtype"] for d in op["output_desc"]), workspaces, tuple(sorted(attrs.items())),
                            tuple((name, structure) for name, structure in runtime))
    inputs = tuple(TensorDesc(tuple(d["shape"]), d["dtype"]) for d in op["input_desc"])
    return plan_kernel(OpSignature(op["type"], inputs, tuple(attrs.items())))


def kernel_name(sig: OpSignature, device_id: int, info: dict | None = None, soc: str | None = None) -> str:
    """``<func_name>_<hash>_<device_id>``; pass ``info`` when it is already built for ``sig``."""
    if info is None:
        info = build_info(sig, device_id, soc)
    return name_from_info(info, device_id)


def build_binary(sig: OpSignature | KernelPlan, device_id: int, soc: str | None = None,
                 info: dict | None = None) -> KernelBinary:
    """Generate, compile (numba) and package a kernel; ``info``: its .info when already built."""
    from . import codegen
    from .library import generate

    source = generate(sig)
    kernel = source.kernel
    info = info if info is not None else build_info(kernel, device_id, soc)
    name = info["job_content"]["fusion_op_name"]
    facts = kernel.launch_facts()
    obj, undefined = codegen.compile_object(source.pyfunc, name + KERNEL_SUFFIX, encode_meta(facts["blockDim"]))
    refused = sorted(set(undefined) - ALLOWED_UNDEFINED)
    if refused:
        raise UnresolvedSymbolError(
            f"kernel {name} ({kernel.sig.op}) needs {refused}, which a warm start cannot provide; kernels must "
            f"not allocate arrays or raise (numba runtime) - use a workspace argument instead")
    meta = {"batchBindOnly": 1, "binFileName": name, "binFileSuffix": ".o", "build_result": "",
            "kernelName": name + KERNEL_SUFFIX, "magic": JSON_MAGIC, "sha256": hashlib.sha256(obj).hexdigest(),
            "abiVersion": KERNEL_ABI_VERSION, "undefinedSymbols": undefined, **facts}
    return KernelBinary(name, obj, meta, info)


def retarget(binary: KernelBinary, info: dict) -> KernelBinary | None:
    """``binary`` packaged as the same kernel for the device of ``info`` (its .info for that device), or
    None when the two names differ in length.

    A kernel's code does not depend on its device: the name's hash leaves the device out, and LLVM
    emits the name only as strings (symbol and section names), so the object built for device ``d``
    is the object of device ``d'`` with one name replaced by the other, byte for byte (the test
    builds both and compares). So ranks on one machine build each kernel once and the others take a
    copy. The caller verifies the result like any entry before writing it."""
    old, new = binary.bin_file_name, info["job_content"]["fusion_op_name"]
    if len(old) != len(new):
        return None
    obj = binary.obj.replace(old.encode(), new.encode())
    meta = {**binary.json, "binFileName": new, "kernelName": new + KERNEL_SUFFIX,
            "sha256": hashlib.sha256(obj).hexdigest()}
    return KernelBinary(new, obj, meta, info)
