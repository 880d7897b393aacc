"""Load a verified kernel object into this process with llvmlite's ORC JIT, without numba.

ORC links like a linker: every undefined symbol of the object must be imported explicitly, and an
unresolved one fails the link with an error instead of a segfault at the first call. The symbols come
from here: CPython's C-API via ctypes, libm/libc from the process, BLAS from the scipy-openblas32 wheel (``.blas``), and numba's two GIL helpers from a
tiny IR module compiled once per process (numba's own definitions, so numba is never imported).
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from typing import Any

import llvmlite.binding as llvm

from ascendemu.device.cost import KernelCost

from .binary import KernelBinary, read_binary, verify_binary
from .blas import blas_symbol_address
from .elf import BLAS_SYMBOLS, CPYTHON_SYMBOLS, LIBC_SYMBOLS, LIBM_SYMBOLS, NUMBA_GIL_SYMBOLS
from .kernel import ArgSpec, IncompatibleKernelError, KernelFunction, UnresolvedSymbolError

__all__ = ["link", "load_binary", "read_binary", "prepare_in_background"]

SHIM_LIBRARY = "ascendemu_numba_gil"
# PyGILState_STATE is a C enum (i32); the state lives in the caller's slot, as in numba's _helperlib.c.
SHIM_IR = """
declare i32 @PyGILState_Ensure()
declare void @PyGILState_Release(i32)

define void @numba_gil_ensure(ptr %state) {
  %s = call i32 @PyGILState_Ensure()
  store i32 %s, ptr %state
  ret void
}

define void @numba_gil_release(ptr %state) {
  %s = load i32, ptr %state
  call void @PyGILState_Release(i32 %s)
  ret void
}
"""
SHIM_IMPORTS = ("PyGILState_Ensure", "PyGILState_Release")
# CPython exception objects are data symbols: the address of the PyObject* variable itself.
CPYTHON_DATA_PREFIX = "PyExc_"
PROCESS = ctypes.CDLL(None)     # libc and libm as the interpreter already has them loaded

_lock = threading.Lock()
_jit: llvm.LLJIT | None = None
_shim: llvm.ResourceTracker | None = None
_library_ids = itertools.count()


def _function_address(library: ctypes.CDLL, name: str) -> int:
    try:
        return ctypes.cast(getattr(library, name), ctypes.c_void_p).value
    except AttributeError as exc:
        raise UnresolvedSymbolError(f"symbol {name!r} is not present in this process") from exc


def _symbol_address(name: str) -> int:
    if name in NUMBA_GIL_SYMBOLS:
        return _shim[name]
    if name in CPYTHON_SYMBOLS:
        if name.startswith(CPYTHON_DATA_PREFIX):
            return ctypes.addressof(ctypes.c_void_p.in_dll(ctypes.pythonapi, name))
        return _function_address(ctypes.pythonapi, name)
    if name in LIBM_SYMBOLS or name in LIBC_SYMBOLS:
        return _function_address(PROCESS, name)
    if name in BLAS_SYMBOLS:
        return blas_symbol_address(name)
    raise UnresolvedSymbolError(f"the loader provides no symbol {name!r}")


def _ensure_jit() -> llvm.LLJIT:
    """One LLJIT per process, with the GIL shims linked into it (call under _lock)."""
    global _jit, _shim
    if _jit is None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        # it compiles nothing but the two GIL shims (kernels arrive as machine code): at opt level 0
        # the JIT is ready in ~5 ms instead of ~18 ms, which was a third of a warm start
        jit = llvm.create_lljit_compiler(llvm.Target.from_default_triple().create_target_machine(
            opt=0, codemodel="jitdefault"))
        builder = llvm.JITLibraryBuilder().add_ir(SHIM_IR)
        for name in SHIM_IMPORTS:
            builder.import_symbol(name, _function_address(ctypes.pythonapi, name))
        for name in NUMBA_GIL_SYMBOLS:
            builder.export_symbol(name)
        _shim = builder.link(jit, SHIM_LIBRARY)
        _jit = jit
    return _jit


def prepare_in_background() -> None:
    """Create the process's JIT (and compile its GIL shims) on a daemon thread, so that the first
    :func:`link` finds it ready: llvmlite releases the GIL while LLVM works, so this overlaps whatever
    the caller does meanwhile (a warm start reads and verifies its entries: the JIT is a third of it)."""
    def prepare() -> None:
        with _lock:
            _ensure_jit()

    if _jit is None:
        threading.Thread(target=prepare, name="ascendemu-jit", daemon=True).start()


def link(kb: KernelBinary) -> tuple[int, Any]:
    """Link a *verified* binary into this process: (entry address of its kernel, what keeps the code alive)."""
    symbol = kb.json["kernelName"]
    with _lock:
        jit = _ensure_jit()
        builder = llvm.JITLibraryBuilder().add_object_img(kb.obj)
        for name in kb.json["undefinedSymbols"]:
            builder.import_symbol(name, _symbol_address(name))
        builder.export_symbol(symbol)
        try:
            # A library name can never be reused in an LLJIT, even after its tracker is gone.
            tracker = builder.link(jit, f"{kb.bin_file_name}#{next(_library_ids)}")
        except RuntimeError as exc:
            raise UnresolvedSymbolError(f"linking kernel {kb.bin_file_name} failed: {exc}") from exc
    entry = tracker[symbol]
    if not entry:
        raise UnresolvedSymbolError(f"kernel {kb.bin_file_name} linked but {symbol} has no address")
    return entry, tracker


def load_binary(kb: KernelBinary) -> KernelFunction:
    """Verify ``kb`` and link it; its launch facts (arguments, block dim, cost) come from its verified
    ``.json``. The kernel cache, which knows each kernel's plan, links with :func:`link` instead. A
    dynamic-shape kernel's .json leaves those facts to its tiling, so it loads only through the cache."""
    verify_binary(kb)
    if kb.json["opParaSize"]:
        raise IncompatibleKernelError(
            f"kernel {kb.bin_file_name} is a dynamic-shape kernel: its block dim, argument sizes and "
            f"{kb.json['opParaSize']} bytes of tiling data come from an op signature's plan; get it from "
            f"the kernel cache (KernelCache.get with the signature) instead of loading the file")
    entry, keepalive = link(kb)
    args = tuple(ArgSpec(a["nbytes"], a["role"], bool(flag))
                 for a, flag in zip(kb.json["args"], kb.json["parameters"]))
    return KernelFunction(name=kb.bin_file_name, entry=entry, block_dim=kb.json["blockDim"], args=args,
                          cost=KernelCost.from_json(kb.json.get("cost", {})), keepalive=keepalive)
