"""``ascendemu run script.py [args]``: run a MindSpore script unchanged on the emulated device.

Inside the process, ``import mindspore`` (and ``mindspore.nn``, ``mindspore.ops``, ``mindspore.context``,
``mindspore.common.dtype`` ...) resolves to ascendemu's compatible front end, the device executor is
installed as its backend, and after the script a summary names what was built, reused and measured.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import time
import traceback
from types import ModuleType

from ascendemu.errors import AclError

ALIAS = "mindspore"
DRY_RUN_ENV = "MS_SIMULATION_LEVEL"
TARGET = "ascendemu.frontend"


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module: ModuleType):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        pass


class MindSporeFinder(importlib.abc.MetaPathFinder):
    """Serves ``mindspore.X`` as ``ascendemu.frontend.X`` (a module, or a module-valued attribute)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        module = _resolve(TARGET + fullname[len(ALIAS):])
        if module is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r} in ascendemu's MindSpore-compatible subset; it provides "
                "mindspore, mindspore.nn, mindspore.ops (operations, functional), mindspore.context, "
                "mindspore.common (dtype, initializer) and mindspore.dtype", name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module))


def _resolve(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        parent, _, attr = name.rpartition(".")
        owner = _resolve(parent) if parent.startswith(TARGET) else None
        value = getattr(owner, attr, None) if owner is not None else None
        return value if isinstance(value, ModuleType) else None


def install_mindspore_alias() -> None:
    """Make ``import mindspore`` load ascendemu's front end in this process."""
    if not any(isinstance(f, MindSporeFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MindSporeFinder())


_VALUE_OPTIONS = ("--jit-level", "--trace", "--exec-order", "--device")   # the options below that take a value


def _module_flag(argv: list[str]) -> int | None:
    """Index of a ``-m`` given before the script (a ``-m`` after the script is the script's own)."""
    i = 0
    while i < len(argv):
        if argv[i] == "-m":
            return i
        if not argv[i].startswith("-"):
            return None
        i += 2 if argv[i] in _VALUE_OPTIONS else 1
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ascendemu run",
                                     description="Run a MindSpore script unchanged on the emulated device.")
    parser.add_argument("--jit-level", choices=("O0", "O1", "O2"),
                        help="force this jit level for every graph (default: what the script sets)")
    parser.add_argument("--trace", help="write a Chrome/Perfetto trace JSON of the run here")
    parser.add_argument("--exec-order", choices=("dfs", "bfs"), default="dfs")
    parser.add_argument("--device", default="Ascend910A",
                        help="device preset to emulate (ascendemu info lists them), e.g. Ascend910B1")
    parser.add_argument("--dry-run", action="store_true",
                        help="DryRun: compile graphs and simulate memory and time without building or running "
                             f"kernels (also on when {DRY_RUN_ENV} is set, as in MindSpore)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    parser.add_argument("script", nargs="?", help="the script; or -m MODULE [args] to run a module like "
                                                   "python -m (e.g. -m pytest test_square.py)")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    module = None
    at = _module_flag(argv)
    if at is not None:           # like python: everything after -m MODULE belongs to the module
        if at + 1 >= len(argv):
            parser.error("-m needs a module name")
        module, argv = argv[at + 1], argv[:at] + ["--", *argv[at + 2:]]
    opts = parser.parse_args(argv)
    opts.module = module
    if module:
        opts.args = [a for a in [opts.script, *opts.args] if a is not None]
        what = f"-m {module}"
    elif opts.script is None or not os.path.isfile(opts.script):
        print(f"ascendemu run: no such script {opts.script!r} (give a script, or -m module)", file=sys.stderr)
        return 2
    else:
        what = opts.script

    from ascendemu.frontend import backend, context
    from ascendemu.graph.executor import DeviceExecutor

    wall0 = time.perf_counter()
    install_mindspore_alias()
    executor = DeviceExecutor(device_id=context.get_context("device_id"), exec_order=opts.exec_order,
                              trace=bool(opts.trace), progress=not opts.quiet, jit_level=opts.jit_level,
                              dry_run=opts.dry_run or bool(os.environ.get(DRY_RUN_ENV)), device=opts.device)
    previous = backend.set_backend(executor)
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [opts.module or opts.script, *opts.args]
    sys.path.insert(0, os.getcwd() if opts.module else os.path.dirname(os.path.abspath(opts.script)))
    status = 0
    try:
        if opts.module:
            runpy.run_module(opts.module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(opts.script, run_name="__main__")
    except SystemExit as e:      # the script's own exit: report first, then pass its status on
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except AclError:             # a device error in the script: its traceback, then the summary (memory at OOM)
        traceback.print_exc()
        status = 2
    finally:
        sys.argv, sys.path[:] = old_argv, old_path
        backend.set_backend(previous)
    if not opts.quiet:
        print(f"[ascendemu] run of {what}: host wall time {time.perf_counter() - wall0:.2f} s")
        for line in executor.summary():
            print(f"[ascendemu] {line}")
    if opts.trace:
        path = executor.rt.write_trace(opts.trace)
        print(f"[ascendemu] trace (simulated device time): {path} - open it in https://ui.perfetto.dev")
    return status
