"""Kernel binaries as MindSpore lays them out: ``<name>.o`` (ELF64), ``<name>.json``, ``<name>.info``.

This module names, builds (numba only on that path, imported lazily) and verifies the three files.
Verification is what makes a warm start safe: a kernel whose files disagree with each other, whose
object cannot be parsed, or that was built for a CPU with instructions this host lacks never loads.

Kernel name: ``<func_name>_<hash>_<device_id>``, hash = the first 8 bytes of sha256 over the identity
part of the .info (everything but the graph node name, the kernel's own name and the device id),
printed as an unsigned decimal like MindSpore's 64-bit hash. The identity includes the toolchain, the
host CPU features and a digest of this package's kernel sources, so a different compiler, host or
kernel generator gets a different name instead of a stale binary.

``.ascend.meta`` section: type-length-value records, each ``<u16 type><u16 length><value>`` in little
endian, the value padded with zeros to a 4-byte boundary. Types (every value a little-endian u32):
1 function type (1 = AI core), 2 block dim, 3 kernel ABI version, 4 version of this record layout.
Unknown types are skipped, so later layouts can add records.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import io
import json
import platform
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import llvmlite.binding as llvm
from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from ascendemu.errors import AclError, ACL_ERROR_RT_INTERNAL_ERROR
from ascendemu.hal.kernel import KERNEL_ABI_VERSION
from ascendemu.kernels.signature import OpSignature, TensorDesc

# rtDevBinary_t magic values (runtime/kernel.h); Ascend910A kernels are always RT_DEV_BINARY_MAGIC_ELF.
RT_DEV_BINARY_MAGIC_PLAIN = 0xABCEED50
RT_DEV_BINARY_MAGIC_PLAIN_AICPU = 0xABCEED51
RT_DEV_BINARY_MAGIC_PLAIN_AIVEC = 0xABCEED52
RT_DEV_BINARY_MAGIC_ELF = 0x43554245
RT_DEV_BINARY_MAGIC_ELF_AICPU = 0x41415243
RT_DEV_BINARY_MAGIC_ELF_AIVEC = 0x41415246
RT_DEV_BINARY_MAGIC_ELF_AICUBE = 0x41494343
JSON_MAGIC = "RT_DEV_BINARY_MAGIC_ELF"
ABI_VERSION = KERNEL_ABI_VERSION

KERNEL_SUFFIX = "__kernel0"
FILE_SUFFIXES = (".o", ".json", ".info")
META_SECTION = ".ascend.meta"
META_FUNCTION_TYPE = 1
META_BLOCK_DIM = 2
META_ABI_VERSION = 3
META_LAYOUT_VERSION = 4
META_REQUIRED = (META_FUNCTION_TYPE, META_BLOCK_DIM, META_ABI_VERSION, META_LAYOUT_VERSION)
FUNCTION_TYPE_AICORE = 1
META_LAYOUT = 1
HASH_BYTES = 8
SYMBOL_ENTRY_SIZE = 24          # sizeof(Elf64_Sym)
# e_machine expected for each host architecture (first component of the LLVM triple).
ELF_MACHINES = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}

# Symbols a kernel object may leave undefined; the loader supplies each of them, nothing else.
# CPython C-API: numba's cfunc wrapper reports a failure it cannot return by writing an "unraisable"
# exception. Unreachable with the numpy error model, but the wrapper's code still references them.
CPYTHON_SYMBOLS = frozenset({
    "PyErr_Clear", "PyErr_SetNone", "PyErr_SetString", "PyErr_WriteUnraisable", "PyExc_StopIteration",
    "PyExc_SystemError", "PyUnicode_FromString", "Py_DecRef",
})
# numba helpers the wrapper uses to take the GIL around that report; the loader defines them as numba
# does (two lines over PyGILState_Ensure/Release), so a warm start never needs numba itself.
NUMBA_GIL_SYMBOLS = frozenset({"numba_gil_ensure", "numba_gil_release"})
# libm: math LLVM lowers to library calls (exp, log, tanh, erf, pow ...), single and double precision.
LIBM_SYMBOLS = frozenset(f"{name}{suffix}" for suffix in ("", "f") for name in (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sqrt", "cbrt", "hypot",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "erf", "erfc", "fmod", "floor", "ceil", "trunc", "round", "rint", "nearbyint", "fabs",
    "fmin", "fmax", "ldexp"))
# libc: LLVM turns zero-fill and copy loops into these calls.
LIBC_SYMBOLS = frozenset({"memset", "memcpy", "memmove"})
ALLOWED_UNDEFINED = CPYTHON_SYMBOLS | NUMBA_GIL_SYMBOLS | LIBM_SYMBOLS | LIBC_SYMBOLS

# Fields of the .info that name the graph node, the kernel itself or the device: not hashed.
IDENTITY_EXCLUDED_JOB = ("full_name", "fusion_op_name")
IDENTITY_EXCLUDED_SOC = ("deviceId",)
IDENTITY_EXCLUDED_OP = ("name", "op_name", "ori_name")
IDENTITY_EXCLUDED_TOP = ("source_id",)


class CorruptKernelError(AclError):
    """A kernel binary that must not load: its files disagree, are damaged or were tampered with."""

    code = ACL_ERROR_RT_INTERNAL_ERROR


class IncompatibleKernelError(CorruptKernelError):
    """An intact kernel built for another host CPU or kernel ABI; rebuild it here."""


class UnresolvedSymbolError(CorruptKernelError):
    """A kernel that needs a symbol the loader does not provide."""


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


# ---------------------------------------------------------------------------------------------- meta

def encode_meta(block_dim: int) -> bytes:
    """The ``.ascend.meta`` records of a kernel (layout in the module docstring)."""
    records = ((META_FUNCTION_TYPE, FUNCTION_TYPE_AICORE), (META_BLOCK_DIM, block_dim),
               (META_ABI_VERSION, ABI_VERSION), (META_LAYOUT_VERSION, META_LAYOUT))
    return b"".join(struct.pack("<HHI", kind, 4, value) for kind, value in records)


def decode_meta(data: bytes) -> dict[int, int]:
    """Records of a ``.ascend.meta`` section by type; raises CorruptKernelError if malformed."""
    records: dict[int, int] = {}
    offset = 0
    while offset < len(data):
        if offset + 4 > len(data):
            raise CorruptKernelError(f"{META_SECTION} has a truncated record header at byte {offset}")
        kind, length = struct.unpack_from("<HH", data, offset)
        end = offset + 4 + length
        if end > len(data):
            raise CorruptKernelError(f"{META_SECTION} record type {kind} claims {length} bytes past the end")
        if kind in META_REQUIRED:
            if length != 4:
                raise CorruptKernelError(f"{META_SECTION} record type {kind} has length {length}, expected 4")
            if kind in records:
                raise CorruptKernelError(f"{META_SECTION} repeats record type {kind}")
            records[kind] = struct.unpack_from("<I", data, offset + 4)[0]
        offset = end + (-length % 4)
    missing = [kind for kind in META_REQUIRED if kind not in records]
    if missing:
        raise CorruptKernelError(f"{META_SECTION} lacks record type(s) {missing}")
    return records


# ----------------------------------------------------------------------------------------------- ELF

@dataclass(frozen=True)
class ElfFacts:
    """What the loader needs to know about a kernel object."""

    machine: str
    functions: dict[str, int]      # global function symbol -> size, defined in an executable section
    undefined: tuple[str, ...]
    meta: bytes | None


def read_elf(obj: bytes) -> ElfFacts:
    """Parse a relocatable ELF64 object with pyelftools, checking every size against the buffer."""
    try:
        return _read_elf(obj)
    except CorruptKernelError:
        raise
    except (ELFError, struct.error, ValueError, KeyError, IndexError, TypeError, EOFError, OverflowError,
            UnicodeDecodeError) as exc:
        raise CorruptKernelError(f"kernel object ({len(obj)} bytes) is not a readable ELF file: "
                                 f"{type(exc).__name__}: {exc}") from exc


ELF64_SYM = "<IBBHQQ"          # st_name, st_info, st_other, st_shndx, st_value, st_size
STB_GLOBAL, STB_WEAK, STT_FUNC, SHN_UNDEF = 1, 2, 2, 0


def _read_elf(obj: bytes) -> ElfFacts:
    if obj[:4] != b"\x7fELF":
        raise CorruptKernelError("kernel object does not start with the ELF magic \\x7fELF")
    elf = ELFFile(io.BytesIO(obj))
    header = elf.header
    if elf.elfclass != 64 or header["e_ident"]["EI_CLASS"] != "ELFCLASS64":
        raise CorruptKernelError(f"kernel object is ELF{elf.elfclass}, expected ELFCLASS64")
    if header["e_type"] != "ET_REL":
        raise CorruptKernelError(f"kernel object has type {header['e_type']}, expected ET_REL (relocatable)")
    table_end = header["e_shoff"] + header["e_shnum"] * header["e_shentsize"]
    if header["e_shnum"] == 0 or table_end > len(obj):
        raise CorruptKernelError(f"kernel object's section table ends at byte {table_end}, "
                                 f"past the end of the {len(obj)}-byte file")
    sections = list(elf.iter_sections())
    for section in sections:
        if section["sh_type"] != "SHT_NOBITS" and section["sh_offset"] + section["sh_size"] > len(obj):
            raise CorruptKernelError(f"section {section.name!r} extends past the end of the "
                                     f"{len(obj)}-byte kernel object")
    symtabs = [s for s in sections if isinstance(s, SymbolTableSection) and s["sh_type"] == "SHT_SYMTAB"]
    if len(symtabs) != 1 or symtabs[0]["sh_entsize"] != SYMBOL_ENTRY_SIZE:
        raise CorruptKernelError(f"kernel object needs exactly one symbol table with "
                                 f"{SYMBOL_ENTRY_SIZE}-byte entries, found {len(symtabs)}")
    symtab = symtabs[0]
    strtab = elf.get_section(symtab["sh_link"])
    functions: dict[str, int] = {}
    undefined = set()
    # Elf64_Sym entries decoded with struct: pyelftools' per-symbol parsing dominated warm loads.
    for name_off, info, _other, index, value, size in struct.iter_unpack(ELF64_SYM, symtab.data()):
        bind, kind = info >> 4, info & 0xF
        if bind not in (STB_GLOBAL, STB_WEAK) or name_off == 0:
            continue
        name = strtab.get_string(name_off)
        if index == SHN_UNDEF:
            undefined.add(name)
        elif kind == STT_FUNC and index < len(sections):
            section = sections[index]
            if section["sh_flags"] & SH_FLAGS.SHF_EXECINSTR and value + size <= section["sh_size"]:
                functions[name] = size
    metas = [section.data() for section in sections if section.name == META_SECTION]
    if len(metas) > 1:
        raise CorruptKernelError(f"kernel object has {len(metas)} {META_SECTION} sections")
    return ElfFacts(header["e_machine"], functions, tuple(sorted(undefined)), metas[0] if metas else None)


# ------------------------------------------------------------------------------------------- .info

@functools.cache
def host_info() -> dict:
    """This host as kernels record it: what the object's instructions may assume."""
    return {"cpu_name": llvm.get_host_cpu_name(), "cpu_features": llvm.get_host_cpu_features().flatten(),
            "triple": llvm.get_process_triple()}


# Kernel sources every kernel depends on; an op's generator module (and the ops modules it imports)
# is added per op, so editing one generator renames only that generator's kernels.
SHARED_SOURCES = ("signature.py", "library.py", "codegen.py", "binary.py", "ops/__init__.py", "ops/nb.py",
                  "ops/shapes.py")
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
            "python": platform.python_version(), "abi_version": ABI_VERSION}


@functools.cache
def toolchain_info(op: str) -> dict:
    """Everything besides the signature that decides the bytes of an ``op`` kernel."""
    from .library import GENERATORS
    return {**_toolchain_versions(), "kernel_sources": _sources_digest(GENERATORS[op])}


def _desc(desc: TensorDesc, name: str | None) -> dict:
    shape = list(desc.shape)
    entry = {"L1_addr_offset": 0, "L1_fusion_type": -1, "L1_workspace_size": -1, "addr_type": 0,
             "data_type": desc.dtype, "dtype": desc.dtype, "format": "ND", "ori_format": "ND",
             "ori_shape": shape, "param_type": "required", "range": [[d, d] for d in shape],
             "shape": shape, "slice_offset": [], "split_index": 0, "total_shape": [], "valid": True,
             "valid_shape": []}
    if name is not None:
        entry["name"] = name
    return entry


def identity(info: dict) -> dict:
    """The hashed part of a .info: a copy without the node name, kernel name and device id."""
    # copies only of the levels that lose keys; the rest is shared with ``info`` and never modified
    ident = {k: v for k, v in info.items() if k not in IDENTITY_EXCLUDED_TOP}
    job = ident["job_content"] = {k: v for k, v in info["job_content"].items() if k not in IDENTITY_EXCLUDED_JOB}
    job["SocInfo"] = {k: v for k, v in job["SocInfo"].items() if k not in IDENTITY_EXCLUDED_SOC}
    job["op_list"] = [*job["op_list"][:-1],
                      {k: v for k, v in job["op_list"][-1].items() if k not in IDENTITY_EXCLUDED_OP}]
    return ident


def _name_from_info(info: dict, device_id: int) -> str:
    func_name = info["job_content"]["op_list"][-1]["func_name"]
    compact = json.dumps(identity(info), sort_keys=True, separators=(",", ":")).encode()   # C encoder
    digest = hashlib.sha256(compact).digest()[:HASH_BYTES]
    return f"{func_name}_{int.from_bytes(digest, 'big')}_{device_id}"


def build_info(sig: OpSignature, device_id: int, soc: str = "Ascend910A", full_name: str = "") -> dict:
    """The .info of ``sig``'s kernel, shaped like MindSpore's (pure python: no numba)."""
    from ascendemu.kernels.library import FUNC_NAMES, infer_outputs

    outputs = infer_outputs(sig)
    func_name = FUNC_NAMES[sig.op]
    inputs = [_desc(d, f"x_{i}") for i, d in enumerate(sig.inputs)]
    data = [{"name": d["name"], "output_desc": [d], "type": "Data"} for d in inputs]
    op = {"attrs": [{"name": k, "valid": True, "value": v} for k, v in sig.attrs],
          "build_type": "accurately_build", "dynamic_compile_static": False, "func_name": func_name,
          "input_desc": inputs, "int64mode": False, "max_kernel_id": 10, "miss_support_info": "",
          "module_name": "ascendemu.kernels.library", "name": full_name, "op_name": "",
          "ori_name": [full_name], "output_data_desc": [_desc(d, None) for d in outputs],
          "output_desc": [_desc(d, f"y_{i}") for i, d in enumerate(outputs)], "pattern": "Opaque",
          "py_module_path": "", "type": sig.op, "unknown_shape": False}
    soc_info = {"autoTilingMode": "NO_TUNE", "coreNum": "", "coreType": "", "deviceId": str(device_id),
                "l1Fusion": "false", "l2Fusion": "false", "l2Mode": "2", "mdl_bank_path": "",
                "offlineTune": False, "op_bank_path": "", "op_bank_update": False, "op_debug_dir": "./",
                "op_debug_level": "0", "op_impl_mode": "", "op_impl_mode_list": [], "socVersion": soc,
                "vector_fp_ceiling": ""}
    info = {"job_content": {"SocInfo": soc_info, "full_name": full_name, "fusion_op_name": "",
                            "graph_name": "", "l1_size": -1, "op_list": [*data, op], "scope_id": -1},
            "job_id": 1, "job_type": "Compile", "source_id": device_id,
            "toolchain": dict(toolchain_info(sig.op)), "host": dict(host_info())}
    name = _name_from_info(info, device_id)
    info["job_content"]["fusion_op_name"] = op["op_name"] = name
    return info


def kernel_name(sig: OpSignature, device_id: int, info: dict | None = None) -> str:
    """``<func_name>_<hash>_<device_id>``; pass ``info`` when it is already built for ``sig``."""
    return _name_from_info(info if info is not None else build_info(sig, device_id), device_id)


# ------------------------------------------------------------------------------------------- build

def build_binary(sig: OpSignature, device_id: int, soc: str = "Ascend910A") -> KernelBinary:
    """Generate, compile (numba) and package ``sig``'s kernel."""
    from ascendemu.kernels import codegen
    from ascendemu.kernels.library import generate

    source = generate(sig)
    info = build_info(sig, device_id, soc)
    name = info["job_content"]["fusion_op_name"]
    obj, undefined = codegen.compile_object(source.pyfunc, name + KERNEL_SUFFIX,
                                            encode_meta(source.block_dim))
    refused = sorted(set(undefined) - ALLOWED_UNDEFINED)
    if refused:
        raise UnresolvedSymbolError(
            f"kernel {name} ({sig.op}) needs {refused}, which a warm start cannot provide; kernels must "
            f"not allocate arrays or raise (numba runtime) - use a workspace argument instead")
    meta = {"batchBindOnly": 1, "binFileName": name, "binFileSuffix": ".o", "blockDim": source.block_dim,
            "build_result": "", "kernelName": name + KERNEL_SUFFIX, "magic": JSON_MAGIC, "opParaSize": 0,
            "parameters": [int(a.zero_init) for a in source.args],
            "sha256": hashlib.sha256(obj).hexdigest(),
            "abiVersion": ABI_VERSION, "undefinedSymbols": undefined,
            "args": [{"nbytes": a.nbytes, "role": a.role} for a in source.args],
            "cost": source.cost.to_json(),
            "workspace": {"num": len(source.workspace_sizes), "size": list(source.workspace_sizes)}}
    return KernelBinary(name, obj, meta, info)


# ------------------------------------------------------------------------------------------ verify

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
    if _field(doc, "abiVersion", what) != ABI_VERSION:
        raise IncompatibleKernelError(f"{what} uses kernel ABI {doc['abiVersion']}, this runtime "
                                      f"speaks ABI {ABI_VERSION}; rebuild it")
    if _field(doc, "binFileName", what) != kb.bin_file_name:
        raise CorruptKernelError(f"{what} names binFileName {doc['binFileName']!r}")
    block_dim, args, flags = (_field(doc, key, what) for key in ("blockDim", "args", "parameters"))
    if not isinstance(block_dim, int) or block_dim < 1:
        raise CorruptKernelError(f"{what} has blockDim {block_dim!r}; expected a positive int")
    if not isinstance(args, list) or not isinstance(flags, list) or len(args) != len(flags):
        raise CorruptKernelError(f"{what}: args and parameters must be lists of equal length")
    for arg in args:
        if not isinstance(arg, dict) or arg.get("role") not in ("in", "out", "workspace") \
                or not isinstance(arg.get("nbytes"), int) or arg["nbytes"] < 0:
            raise CorruptKernelError(f"{what} has a malformed argument {arg!r}")


def verify_binary(kb: KernelBinary) -> None:
    """Raise CorruptKernelError (or a subclass) unless ``kb`` is intact, consistent and loadable here."""
    _check_json(kb)
    what = kb.bin_file_name
    digest = hashlib.sha256(kb.obj).hexdigest()
    if kb.json.get("sha256") != digest:
        raise CorruptKernelError(f"{what}.o has sha256 {digest}, but {what}.json records "
                                 f"{kb.json.get('sha256')}; the object is damaged")
    built_abi = _field(kb.info, "toolchain.abi_version", f"{what}.info")
    if built_abi != ABI_VERSION:
        raise IncompatibleKernelError(f"{what}.info was built for kernel ABI {built_abi}, this runtime "
                                      f"speaks ABI {ABI_VERSION}; rebuild it")
    _check_host(kb)
    try:
        device_id = int(_field(kb.info, "job_content.SocInfo.deviceId", f"{what}.info"))
        named = _name_from_info(kb.info, device_id)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise CorruptKernelError(f"{what}.info is malformed: {type(exc).__name__}: {exc}") from exc
    if named != what:
        raise CorruptKernelError(f"{what}.info describes kernel {named}; the files do not belong together")
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
    expected = {META_FUNCTION_TYPE: FUNCTION_TYPE_AICORE, META_ABI_VERSION: ABI_VERSION,
                META_LAYOUT_VERSION: META_LAYOUT}
    if any(meta[kind] != value for kind, value in expected.items()):
        raise IncompatibleKernelError(f"{what}.o {META_SECTION} records {meta}, expected {expected} "
                                      f"(AI core function, kernel ABI, record layout)")
    if meta[META_BLOCK_DIM] != kb.json["blockDim"]:
        raise CorruptKernelError(f"{what}.o {META_SECTION} says block dim {meta[META_BLOCK_DIM]}, "
                                 f"{what}.json says {kb.json['blockDim']}")
    refused = sorted(set(facts.undefined) - ALLOWED_UNDEFINED)
    if refused:
        raise UnresolvedSymbolError(f"{what}.o needs symbols the loader does not provide: {refused}")
    if list(facts.undefined) != kb.json.get("undefinedSymbols"):
        raise CorruptKernelError(f"{what}.json lists undefined symbols {kb.json.get('undefinedSymbols')}, "
                                 f"the object has {list(facts.undefined)}")
