"""Reading a kernel's relocatable ELF64 object: its machine, global functions, undefined symbols and
``.ascend.meta`` section, with every size checked against the buffer (a corrupt object is an error,
never a crash). Also the allowlist of symbols an object may leave for the loader to supply.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from .kernel import CorruptKernelError
from .meta import META_SECTION

__all__ = ["ElfFacts", "read_elf", "ELF_MACHINES", "CPYTHON_SYMBOLS", "NUMBA_GIL_SYMBOLS", "LIBM_SYMBOLS",
           "LIBC_SYMBOLS", "BLAS_SYMBOLS", "ALLOWED_UNDEFINED"]

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
    "fmin", "fmax", "ldexp", "sincos"))      # sincos: LLVM's merge of sin(a) and cos(a) (complex exp, FFT twiddles)
# libc: LLVM turns zero-fill and copy loops into these calls.
LIBC_SYMBOLS = frozenset({"memset", "memcpy", "memmove"})
# BLAS: matrix products call OpenBLAS from the scipy-openblas32 wheel (see .blas).
BLAS_SYMBOLS = frozenset({"scipy_cblas_sgemm"})
ALLOWED_UNDEFINED = CPYTHON_SYMBOLS | NUMBA_GIL_SYMBOLS | LIBM_SYMBOLS | LIBC_SYMBOLS | BLAS_SYMBOLS


@dataclass(frozen=True)
class ElfFacts:
    """What the loader needs to know about a kernel object."""

    machine: str
    functions: dict[str, int]      # global function symbol -> size, defined in an executable section
    undefined: tuple[str, ...]
    meta: bytes | None


def read_elf(obj: bytes) -> ElfFacts:
    """Parse a relocatable ELF64 object, checking every size against the buffer."""
    try:
        return _read_elf(obj)
    except CorruptKernelError:
        raise
    except (struct.error, ValueError, KeyError, IndexError, TypeError, OverflowError, UnicodeDecodeError) as exc:
        raise CorruptKernelError(f"kernel object ({len(obj)} bytes) is not a readable ELF file: "
                                 f"{type(exc).__name__}: {exc}") from exc


# The ELF64 structures, decoded with struct (names from the ELF specification). A warm start reads one
# object per kernel; pyelftools builds its parsers anew for every file, which made this read about half
# of a warm start. The tests read every object back with pyelftools, an independent reader.
ELF64_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")   # e_ident, e_type, e_machine, ..., e_shnum, e_shstrndx
ELF64_SHDR = struct.Struct("<IIQQQQIIQQ")         # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, ...
ELF64_SYM = "<IBBHQQ"                             # st_name, st_info, st_other, st_shndx, st_value, st_size
ELFCLASS64, ELFDATA2LSB, ET_REL = 2, 1, 1
SHT_SYMTAB, SHT_NOBITS, SHF_EXECINSTR = 2, 8, 0x4
STB_GLOBAL, STB_WEAK, STT_FUNC, SHN_UNDEF = 1, 2, 2, 0
MACHINE_NAMES = {62: "EM_X86_64", 183: "EM_AARCH64"}


@dataclass(frozen=True)
class _Section:
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    entsize: int


def _string(table: bytes, offset: int) -> str:
    """The NUL-terminated string at ``offset`` of a string table section's bytes."""
    end = table.index(b"\0", offset)          # ValueError (no terminator) is a corrupt object
    return table[offset:end].decode()


def _read_elf(obj: bytes) -> ElfFacts:
    if obj[:4] != b"\x7fELF":
        raise CorruptKernelError("kernel object does not start with the ELF magic \\x7fELF")
    if len(obj) < ELF64_EHDR.size:
        raise CorruptKernelError(f"kernel object ({len(obj)} bytes) is shorter than an ELF64 header")
    (ident, e_type, e_machine, _version, _entry, _phoff, shoff, _flags, _ehsize, _phentsize, _phnum,
     shentsize, shnum, shstrndx) = ELF64_EHDR.unpack_from(obj)
    if ident[4] != ELFCLASS64 or ident[5] != ELFDATA2LSB:
        raise CorruptKernelError(f"kernel object has ELF class {ident[4]} and data encoding {ident[5]}, "
                                 f"expected ELFCLASS64 little endian")
    if e_type != ET_REL:
        raise CorruptKernelError(f"kernel object has type {e_type}, expected ET_REL (relocatable)")
    table_end = shoff + shnum * shentsize
    if shnum == 0 or shentsize != ELF64_SHDR.size or table_end > len(obj) or shstrndx >= shnum:
        raise CorruptKernelError(f"kernel object's section table ({shnum} x {shentsize} bytes at {shoff}, "
                                 f"names in section {shstrndx}) does not fit the {len(obj)}-byte file")
    headers = [ELF64_SHDR.unpack_from(obj, shoff + i * shentsize) for i in range(shnum)]
    for _name, kind, _f, _a, offset, size, *_ in headers:
        if kind != SHT_NOBITS and offset + size > len(obj):
            raise CorruptKernelError(f"a section extends past the end of the {len(obj)}-byte kernel object")
    names = obj[headers[shstrndx][4]:headers[shstrndx][4] + headers[shstrndx][5]]
    sections = [_Section(_string(names, name), kind, flags, offset, size, link, entsize)
                for name, kind, flags, _addr, offset, size, link, _info, _align, entsize in headers]
    symtabs = [s for s in sections if s.type == SHT_SYMTAB]
    if len(symtabs) != 1 or symtabs[0].entsize != SYMBOL_ENTRY_SIZE or symtabs[0].link >= len(sections):
        raise CorruptKernelError(f"kernel object needs exactly one symbol table with "
                                 f"{SYMBOL_ENTRY_SIZE}-byte entries, found {len(symtabs)}")
    symtab = symtabs[0]
    strtab = sections[symtab.link]
    strings = obj[strtab.offset:strtab.offset + strtab.size]
    functions: dict[str, int] = {}
    undefined = set()
    symbols = obj[symtab.offset:symtab.offset + symtab.size - symtab.size % SYMBOL_ENTRY_SIZE]
    for name_off, info, _other, index, value, size in struct.iter_unpack(ELF64_SYM, symbols):
        bind, kind = info >> 4, info & 0xF
        if bind not in (STB_GLOBAL, STB_WEAK) or name_off == 0:
            continue
        name = _string(strings, name_off)
        if index == SHN_UNDEF:
            undefined.add(name)
        elif kind == STT_FUNC and index < len(sections):
            section = sections[index]
            if section.flags & SHF_EXECINSTR and value + size <= section.size:
                functions[name] = size
    metas = [obj[s.offset:s.offset + s.size] for s in sections if s.name == META_SECTION]
    if len(metas) > 1:
        raise CorruptKernelError(f"kernel object has {len(metas)} {META_SECTION} sections")
    machine = MACHINE_NAMES.get(e_machine, f"EM_{e_machine}")
    return ElfFacts(machine, functions, tuple(sorted(undefined)), metas[0] if metas else None)
