"""Turn a numba kernel into an ELF64 relocatable object for the host (cache-miss path only).

numba compiles the kernel to a ``cfunc`` wrapper behind the uniform ABI; its optimised LLVM IR is then
reshaped so that the object is a clean, reproducible kernel binary:

- the wrapper is renamed to the kernel symbol and is the only global definition; every other
  definition becomes internal, unused ones are dropped and the survivors get positional names
  (numba's mangled names carry a per-process counter, which would make the bytes differ run to run);
- the ``.ascend.meta`` section carries the TLV records given by the caller;
- code goes to ``.text`` (the large code model would otherwise pick ``.ltext``);
- every internal function is inlined and the status tests that become constant fold away, so no
  helper call LLVM's inliner left (a float16 converter in a large kernel) keeps numba's exception
  runtime referenced;
- LLVM optimises the linked kernel in one O3 run (:func:`_optimise`), not numba's three rounds.

The large code model makes every reference an absolute 64-bit relocation, so ORC may place the code,
its constants and the imported CPython symbols anywhere in the address space.
"""
from __future__ import annotations

import contextlib
import re
import sys

import llvmlite.binding as llvm
from numba.core import compiler, config, sigutils
from numba.core.ccallback import CFunc
from numba.core.codegen import CPUCodeLibrary, _parse_refprune_flags
from numba.core.compiler_lock import global_compiler_lock
from numba.core.compiler_machinery import PassManager
from numba.core.llvm_bindings import create_pass_builder
from numba.core.typed_passes import (AnnotateTypes, IRLegalization, NativeLowering, NopythonTypeInference,
                                     NoPythonBackend, PreLowerStripPhis)
from numba.core.untyped_passes import FixupArgs, IRProcessing, ReconstructSSA, TranslateByteCode

from ascendemu.hal.elf import read_elf
from ascendemu.hal.meta import META_SECTION

from .library import KERNEL_ERROR_MODEL, kernel_signature

CODE_SECTION = ".text"
CODE_MODEL = "large"
RELOC_MODEL = "static"
OPT_LEVEL = 3
META_SYMBOL = "__ascend_meta"
META_ALIGN = 4

_DEFINE_LINE = re.compile(r'^(define [^\n]*\))([^\n{]*) \{$', re.M)
_SOURCE_FILENAME = re.compile(r'^source_filename = "[^"\n]*"$', re.M)


def host_target_machine() -> llvm.TargetMachine:
    """The host's own CPU and features: the .info records them and a loader checks them."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(),
                                        opt=OPT_LEVEL, reloc=RELOC_MODEL, codemodel=CODE_MODEL)


def _meta_module(meta: bytes, layout: str, triple: str) -> llvm.ModuleRef:
    body = "".join(f"\\{b:02X}" for b in meta)
    return llvm.parse_assembly(
        f'target datalayout = "{layout}"\n'
        f'target triple = "{triple}"\n'
        f'@{META_SYMBOL} = internal constant [{len(meta)} x i8] c"{body}", '
        f'section "{META_SECTION}", align {META_ALIGN}\n'
        f'@llvm.used = appending global [1 x ptr] [ptr @{META_SYMBOL}], section "llvm.metadata"\n')


def _optimise(module: llvm.ModuleRef, tm: llvm.TargetMachine) -> None:
    """numba's O3 module pipeline (its settings: ``config.OPT``, loop vectoriser on, SLP off, its refprune
    pass), once over the linked kernel, whose own functions skipped numba's function passes.

    numba optimises a library in three rounds: O3 function passes on each IR module as it is added, the
    linked module at O0 with loop rotation, and at O3. Over the nine first-run scripts' 105 distinct
    kernels LLVM is about half the build CPU (2026-11-28: function passes 3.7, module passes 5.4, code
    emission 4.4 of 30 CPU-s); this run instead of the first two rounds: builds 28.9 -> 24.0-24.5 CPU-s
    (bench/README.md, round 10). ``config.OPT`` is numba's ``_OptLevel(3)``; the same pipeline built with
    a plain ``3`` left LogSoftmax's loops unvectorised (4.9x slower; cause not found). Kernels use no
    fast-math flags, so the outputs are the same bits (tests/test_kernel_helpers.py compares these
    objects with numba's own JIT of the same kernel)."""
    builder = create_pass_builder(tm, opt=config.OPT, loop_vectorize=config.LOOP_VECTORIZE,
                                  slp_vectorize=config.SLP_VECTORIZE)
    passes = builder.getModulePassManager()
    passes.add_refprune_pass(_parse_refprune_flags())
    passes.run(module, builder)


def _inline_and_drop_unused(module: llvm.ModuleRef, tm: llvm.TargetMachine) -> None:
    """Inline every internal function (its callers are marked), fold what that makes constant, then
    drop what nothing references. numba calls its helpers (the float16 converters) with a status
    code the caller tests, and LLVM's inliner may leave such a call in a large kernel: the test's
    raise path then references numba's exception runtime, which a loaded kernel cannot call. Once
    inlined, a helper that never raises returns a constant status and that path folds away."""
    passes = llvm.create_new_module_pass_manager()
    passes.add_always_inliner_pass()
    passes.add_instruction_combine_pass()
    passes.add_simplify_cfg_pass()
    passes.add_ipsccp_pass()
    passes.add_simplify_cfg_pass()
    passes.add_global_dead_code_eliminate_pass()
    passes.add_strip_dead_prototype_pass()
    passes.run(module, llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options()))


def _reshape(module: llvm.ModuleRef, wrapper: str, symbol: str, meta: bytes, tm: llvm.TargetMachine) -> str:
    """``module`` (the optimised kernel, changed in place) as the kernel object's IR text."""
    for value in [*module.functions, *module.global_variables]:
        if not value.is_declaration and value.name != wrapper and not value.name.startswith("llvm."):
            value.linkage = llvm.Linkage.internal
            if value.is_function:
                value.add_function_attribute("alwaysinline")
    module.get_function(wrapper).name = symbol
    module.link_in(_meta_module(meta, str(module.data_layout), module.triple))
    _inline_and_drop_unused(module, tm)
    local = [v for v in [*module.functions, *module.global_variables]
             if not v.is_declaration and v.linkage == llvm.Linkage.internal and v.name != META_SYMBOL]
    for index, value in enumerate(local):
        value.name = f"{symbol}.{index}"
    module.name = symbol
    text = _SOURCE_FILENAME.sub(f'source_filename = "{symbol}.ll"', str(module), count=1)
    return _DEFINE_LINE.sub(f'\\1\\2 section "{CODE_SECTION}" {{', text)


def _load_numba_without_blas_probe() -> None:
    """Import numba's array-math registry with its BLAS probe answered "none", once per process.

    numba's first compilation in a process imports ``numba.np.arraymath``, whose import probes for a
    BLAS by importing ``scipy.linalg`` (~0.25 CPU-s in every cold process and build worker, 2026-11-28;
    nothing else on the cache-miss path imports scipy). Kernels never call numba's BLAS-backed
    ``np.dot``: they multiply through ``hal.blas``'s OpenBLAS. With the probe answered "none", numba
    only computes the 1-D inner product of ``np.correlate``/``np.convolve`` (user njit code in this
    process) with a loop instead of BLAS; ``np.dot`` and ``np.linalg`` still probe scipy when typed.
    The generated code does not change (tests/test_codegen_probe.py compares objects built both ways)."""
    if "numba.np.arraymath" in sys.modules:
        return
    from numba.np import linalg

    probe = linalg.ensure_blas
    linalg.ensure_blas = _no_blas
    try:
        import numba.np.arraymath  # noqa: F401  (its import runs the probe)
    finally:
        linalg.ensure_blas = probe


def _no_blas() -> None:
    raise ImportError("ascendemu kernels call OpenBLAS through hal.blas, not numba's np.dot")


class KernelPipeline(compiler.CompilerBase):
    """numba's nopython pipeline less the passes a generated kernel never needs: it has no ``with``
    blocks, closures, raises, literal_unroll or parfors, calls no ``@overload(inline="always")`` and
    no branch folds at compile time that LLVM would not fold, and numba's rewrites (array expressions,
    constant getitems) find nothing to rewrite in it. Bytecode to SSA IR, typing, lowering, as numba's
    own pipeline does them: the objects are the same bytes (tests/test_kernel_helpers.py builds both),
    in ~15% less CPU (bench/README.md, round 9). A source it cannot compile is compiled by numba's full
    pipeline instead (:func:`_compile`), so it never decides whether a kernel builds."""

    def define_pipelines(self):
        pm = PassManager("ascendemu-kernel")
        for pass_ in (TranslateByteCode, FixupArgs, IRProcessing, ReconstructSSA, NopythonTypeInference,
                      PreLowerStripPhis, IRLegalization, AnnotateTypes, NativeLowering, NoPythonBackend):
            pm.add_pass(pass_, pass_.__name__)
        pm.finalize()
        return [pm]


def _compile(pyfunc, pipeline=KernelPipeline):
    """numba's compile result of ``pyfunc`` as a cfunc of the kernel ABI, through ``pipeline``; numba's
    full pipeline if the lean one fails (the kernel's own errors then come from numba's usual path)."""
    sig = sigutils.normalize_signature(kernel_signature())
    try:
        return CFunc(pyfunc, sig, locals={}, options={"error_model": KERNEL_ERROR_MODEL},
                     pipeline_class=pipeline)._compile_uncached()
    except Exception:
        if pipeline is compiler.Compiler:
            raise
        return _compile(pyfunc, compiler.Compiler)


@contextlib.contextmanager
def _no_function_passes(name: str):
    """numba's library named ``name`` (the kernel's; numba names a library after its function) skips the
    O3 function passes numba runs on each IR module as it is added: :func:`_optimise` optimises the
    linked kernel once. The njit helpers typed meanwhile keep numba's passes: without them, even numba's
    own final optimisation of a later kernel vectorised less (LogSoftmax 256x1000: 34 instead of 171
    ymm operands). Held under numba's compiler lock, so no other compilation sees the swap."""
    passes = CPUCodeLibrary._optimize_functions

    def optimize_functions(library: CPUCodeLibrary, ll_module: llvm.ModuleRef) -> None:
        if library.name == name:
            ll_module.data_layout = library._codegen._data_layout
        else:
            passes(library, ll_module)

    CPUCodeLibrary._optimize_functions = optimize_functions
    try:
        yield
    finally:
        CPUCodeLibrary._optimize_functions = passes


@global_compiler_lock
def _numba_ir(pyfunc, pipeline=KernelPipeline) -> tuple[str, llvm.ModuleRef]:
    """The cfunc wrapper's name and numba's unoptimised LLVM module of ``pyfunc`` (helpers linked in).

    ``numba.cfunc`` would also finalise its library into numba's JIT engine (machine code for an address
    nothing here calls, ~10% of a build) and keep that module alive for the whole process. This runs the
    same compilation (numba's CFunc pipeline: type inference, lowering, the cfunc wrapper) without
    numba's optimisation rounds, then links the helper libraries in as ``CodeLibrary.finalize`` would;
    :func:`_optimise` optimises the result."""
    _load_numba_without_blas_probe()
    with _no_function_passes(pyfunc.__qualname__):
        cres = _compile(pyfunc, pipeline)
    library = cres.library
    for linked in dict.fromkeys(library._linking_libraries):      # numba helpers (njit) the kernel calls
        library._final_module.link_in(linked._get_module_for_linking(), preserve=True)
    return cres.fndesc.llvm_cfunc_wrapper_name, library._final_module


def compile_object(pyfunc, symbol: str, meta: bytes, pipeline=KernelPipeline) -> tuple[bytes, list[str]]:
    """Compile ``pyfunc`` (uniform kernel ABI) to object bytes exporting only ``symbol``; ``pipeline``:
    the numba compiler class (numba's own ``compiler.Compiler`` builds the same bytes, slower).

    Returns the object and the sorted names of the symbols it leaves undefined.
    """
    wrapper, module = _numba_ir(pyfunc, pipeline)
    tm = host_target_machine()
    _optimise(module, tm)
    ir = _reshape(module, wrapper, symbol, meta, tm)
    module = llvm.parse_assembly(ir)
    module.verify()
    obj = bytes(tm.emit_object(module))
    return obj, sorted(read_elf(obj).undefined)
