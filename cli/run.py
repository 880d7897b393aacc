"""``ascendemu run script.py [args]``: run a MindSpore script unchanged on the emulated device.

Inside the process, ``import mindspore`` (and ``mindspore.nn``, ``mindspore.ops``, ``mindspore.context``,
``mindspore.common.dtype`` ...) resolves to ascendemu's compatible front end, the device executor is
installed as its backend, and after the script a summary names what was built, reused and measured.

However the script ends, the summary comes first; a script that raised then gets its traceback (from
its own frames on, as ``python script.py`` shows it) and the run exits with the script's status:
1 for a Python exception, 2 for an AclError (ascendemu's, e.g. an unsupported op), n for ``sys.exit(n)``.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType, TracebackType

from ascendemu.device.fabric import DEFAULT_EXEC_TIMEOUT_S, EXEC_TIMEOUT_ENV, join_world, joined_world, timeout_from_env
from ascendemu.errors import AclError
from ascendemu.device.spec import DEFAULT_PRESET
from ascendemu.graph.passes import DEFAULT_ORDER_POLICY, ORDER_POLICIES
from ascendemu.graph.plan import JIT_LEVELS
from ascendemu.replay.compare import DEFAULT_TOLERANCE, read_baseline, regressions, save_baseline

from ascendemu.ranks import apply_mpi_place, env_device_id

ALIAS = "mindspore"
DRY_RUN_ENV = "MS_SIMULATION_LEVEL"
DRY_RUN_LEVEL = "1"        # what --dry-run exports as MS_SIMULATION_LEVEL: compile and simulate, run no kernel
MAX_BARE_TOLERANCE = 1.0   # --tolerance: a bare number above this is ambiguous (5 = 5% or 500%?)
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
            front = importlib.import_module(TARGET)
            provided = sorted(f"{ALIAS}.{n}" for n in front.__all__ if isinstance(getattr(front, n), ModuleType))
            raise ModuleNotFoundError(
                f"No module named {fullname!r} in ascendemu's MindSpore-compatible subset; it provides "
                f"{ALIAS} and {', '.join(provided)} with some of their submodules", name=fullname)
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


# the options below that take a value
_VALUE_OPTIONS = ("--jit-level", "--trace", "--exec-order", "--device", "--record", "--save-baseline", "--check",
                  "--tolerance")


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


USAGE_EXIT = 2             # like python and argparse: a bad command line
ERROR_EXIT = 1             # like python: the script raised
DEVICE_ERROR_EXIT = 2      # an AclError (ascendemu's, e.g. an unsupported op or a bad setting)
INTERRUPT_EXIT = 130       # like a shell reports a program stopped by Ctrl-C
REGRESSION_EXIT = 3        # --check: a gated figure grew past the tolerance (the script itself succeeded)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ascendemu run",
                                     usage="ascendemu run [options] script.py [args] | "
                                           "ascendemu run [options] -m module [args]",
                                     description="Run a MindSpore script unchanged on the emulated device.")
    parser.add_argument("--jit-level", choices=JIT_LEVELS,
                        help="force this jit level for every graph (default: what the script sets)")
    parser.add_argument("--trace", help="write a Chrome/Perfetto trace JSON of the run here; under several ranks "
                                        "each writes its own, t.json -> t.rank<N>.json, and rank 0 merges them "
                                        "into t.json, one process per rank")
    parser.add_argument("--exec-order", choices=ORDER_POLICIES, default=DEFAULT_ORDER_POLICY)
    parser.add_argument("--device", default=DEFAULT_PRESET,
                        help="device preset to emulate (ascendemu info lists them), e.g. Ascend910B1")
    parser.add_argument("--dry-run", action="store_true",
                        help="DryRun: compile graphs and simulate memory and time without building or running "
                             f"kernels (also on when {DRY_RUN_ENV} is set, as in MindSpore)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    parser.add_argument("--record", metavar="TRACE",
                        help="record every runtime call of the run into TRACE (.aetrace, docs/TRACE_FORMAT.md) "
                             "for `ascendemu replay`; under several ranks each writes its own, run.aetrace -> "
                             "run.rank<N>.aetrace")
    parser.add_argument("--record-data", action="store_true",
                        help="with --record: also keep the bytes copied host to device and digests of the "
                             "bytes copied back, so `ascendemu replay --compute` recomputes and checks them")
    parser.add_argument("--save-baseline", metavar="JSON",
                        help="write the run's simulated figures (step times, peak memory) here for --check")
    parser.add_argument("--check", metavar="JSON",
                        help=f"compare the run's figures with this baseline; exit {REGRESSION_EXIT} naming each "
                             "simulated step time or peak memory that grew past the tolerance")
    parser.add_argument("--tolerance", type=parse_tolerance, default=DEFAULT_TOLERANCE, metavar="PCT",
                        help=f"--check's tolerance, e.g. 5%% or 0.05 (default {DEFAULT_TOLERANCE * 100:g}%%)")
    parser.add_argument("script", nargs="?", help="the script; or -m MODULE [args] to run a module like "
                                                   "python -m (e.g. -m pytest test_square.py)")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def _usage_error(parser: argparse.ArgumentParser, message: str) -> int:
    parser.print_usage(sys.stderr)
    print(f"ascendemu run: error: {message}", file=sys.stderr)
    return USAGE_EXIT


def main(argv: list[str]) -> int:
    parser = _parser()
    module = None
    at = _module_flag(argv)
    if at is not None:           # like python: everything after -m MODULE belongs to the module
        if at + 1 >= len(argv):
            return _usage_error(parser, "-m needs a module name, e.g. ascendemu run -m pytest test_square.py")
        module, argv = argv[at + 1], argv[:at] + ["--", *argv[at + 2:]]
    try:
        opts = parser.parse_args(argv)
    except SystemExit as exc:    # argparse printed the usage error (or --help)
        return USAGE_EXIT if exc.code else 0
    opts.module = module
    if module:
        opts.args = [a for a in [opts.script, *opts.args] if a is not None]
        what = f"-m {module}"
    elif opts.script is None:
        return _usage_error(parser, "give the script to run (ascendemu run script.py [args]) or a module "
                                    "(ascendemu run -m module [args])")
    elif not os.path.isfile(opts.script):
        why = "it is a directory" if os.path.isdir(opts.script) else "no such file"
        return _usage_error(parser, f"can't open file {opts.script!r}: {why}")
    else:
        what = opts.script
    if opts.record_data and not opts.record:
        return _usage_error(parser, "--record-data needs --record TRACE")
    if opts.check:
        try:
            baseline = read_baseline(opts.check)
        except AclError as e:
            return _usage_error(parser, e.message)
    dry_run = opts.dry_run or bool(os.environ.get(DRY_RUN_ENV))
    # as in MindSpore, DryRun is MS_SIMULATION_LEVEL: exported for the script's run (and its children), so
    # a script (the examples' harness) can tell that nothing is computed and skip checking numbers
    exported = opts.dry_run and not os.environ.get(DRY_RUN_ENV)

    from ascendemu.frontend import backend, context
    from ascendemu.graph.executor import DeviceExecutor

    wall0 = time.perf_counter()
    apply_mpi_place()            # under mpiexec: RANK_ID, RANK_SIZE, DEVICE_ID from the MPI launcher
    world = join_world()         # one of several MPI ranks: joined now, so a failure here reaches the others
    device = env_device_id()
    if device is not None:
        context.set_context(device_id=device)
    clock = _measure(opts)
    install_mindspore_alias()
    executor = DeviceExecutor(device_id=context.get_context("device_id"), exec_order=opts.exec_order,
                              trace=bool(opts.trace), progress=not opts.quiet, jit_level=opts.jit_level,
                              dry_run=dry_run, device=opts.device)
    previous = backend.set_backend(executor)
    overlap = _observe_communication(executor) if dry_run else None
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [opts.module or opts.script, *opts.args]
    sys.path.insert(0, os.getcwd() if opts.module else os.path.dirname(os.path.abspath(opts.script)))
    status, error = 0, None
    if exported:
        os.environ[DRY_RUN_ENV] = DRY_RUN_LEVEL
    try:
        if opts.module:
            runpy.run_module(opts.module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(opts.script, run_name="__main__")
    except SystemExit as e:      # the script's own exit: report first, then pass its status on
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            error = e
    except AclError as e:        # a device error (an unsupported op, OOM ...): summary, then the traceback
        status, error = DEVICE_ERROR_EXIT, e
    except KeyboardInterrupt as e:
        status, error = INTERRUPT_EXIT, e
    except Exception as e:       # any other error of the script: the same, with python's status
        status, error = ERROR_EXIT, e
    finally:
        sys.argv, sys.path[:] = old_argv, old_path
        backend.set_backend(previous)
        if exported:
            os.environ.pop(DRY_RUN_ENV, None)
    if world is not None:        # a failed script tells the other ranks at once; the job ends at exit
        world.script_ended(status, error)
    try:
        executor.write_execute_order(context.get_context("save_graphs_path"))
        _report(opts, what, executor, wall0)
        if overlap is not None and not opts.quiet:
            for line in overlap.lines():
                print(f"[ascendemu] {line}")
        if dry_run:
            _write_position(executor, context)
    except Exception as exc:     # never let the report hide the script's own error
        print(f"[ascendemu] could not finish the run summary: {type(exc).__name__}: {exc}", file=sys.stderr)
    note = pytest_file_note(opts.script) if status == 0 and not opts.module else None
    if note:                     # even with --quiet: the run did nothing the user asked for
        print(f"[ascendemu] {note}")
    if clock is not None:
        gate = _finish_measuring(opts, clock, executor, status, wall0, baseline if opts.check else None)
        if status == 0:
            status = gate
    if error is not None:
        sys.stdout.flush()
        if isinstance(error, SystemExit):
            print(error.code, file=sys.stderr)
        else:
            traceback.print_exception(type(error), error, user_traceback(error))
    return status


def parse_tolerance(text: str) -> float:
    """A tolerance as a percentage ("5%") or a fraction ("0.05"). A bare number above 1 is refused: "5"
    could mean 5% or 500%, and a gate that silently lets figures grow sixfold passes everything."""
    percent = text.strip().endswith("%")
    try:
        value = float(text.strip()[:-1]) / 100 if percent else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"tolerance {text!r} is not a number: give e.g. 5% or 0.05") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"tolerance {text!r} must be a finite number >= 0, e.g. 5% or 0.05")
    if not percent and value > MAX_BARE_TOLERANCE:
        raise argparse.ArgumentTypeError(
            f"tolerance {text!r} is ambiguous: a bare number is a fraction ({text} would be {value:.0%}); "
            f"write {text}% for {text} percent, or {value / 100:g} as a fraction")
    return value


def pytest_file_note(script: str) -> str | None:
    """What to tell the user when ``script`` is a pytest file: it defines ``test_`` functions and has no
    ``if __name__ == "__main__"`` block, so running it as a script defines the tests and calls none."""
    try:
        tree = ast.parse(Path(script).read_bytes(), filename=script)
    except (OSError, SyntaxError, ValueError):
        return None
    tests = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.name.startswith("test")]
    tests += [n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test")]
    if not tests or any(_is_main_guard(n) for n in tree.body):
        return None
    return (f"{script} is a pytest file: it defines {', '.join(tests[:3])}{' ...' if len(tests) > 3 else ''} and "
            f"running it as a script calls none of them. Run it with pytest on the emulated device: "
            f"`pytest -p ascendemu --ascendemu-mindspore {script}` or `ascendemu run -m pytest {script}`")


def _is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either side of the ==)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or len(node.test.comparators) != 1:
        return False
    sides = [node.test.left, node.test.comparators[0]]
    return (any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
            and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides))


def _measure(opts: argparse.Namespace):
    """The recorder (``--record``) or step clock (``--save-baseline``/``--check``) of the run, attached to the
    runtime before the executor initialises it; None when nothing is measured."""
    if not (opts.record or opts.save_baseline or opts.check):
        return None                  # a plain run does not even import the recorder (or the trace format)
    from ascendemu.hal.record import Recorder, StepClock
    from ascendemu.hal.runtime import get_runtime
    if opts.record:
        from ascendemu.cache.layout import resolve_rank, resolve_root
        options = {"script": opts.module and f"-m {opts.module}" or opts.script, "args": list(opts.args),
                   "jit_level": opts.jit_level, "exec_order": opts.exec_order, "device": opts.device,
                   "dry_run": opts.dry_run or bool(os.environ.get(DRY_RUN_ENV)),
                   "kernel_cache_root": str(Path(resolve_root(None)).absolute()), "rank": resolve_rank(None)}
        from ascendemu.ranks import process_world
        from ascendemu.traces.aetrace import rank_trace_path
        size, rank = process_world()
        options.update(rank_size=size, world_rank=rank)
        path = rank_trace_path(opts.record, rank, size)      # one trace per rank of a world of several
        return Recorder(path, record_data=opts.record_data, options=options).attach(get_runtime())
    return StepClock().attach(get_runtime())


def _finish_measuring(opts: argparse.Namespace, clock, executor, status: int, wall0: float,
                      baseline: dict | None) -> int:
    """Close the trace, write the baseline, run the gate; the gate's exit status (0 when it passes)."""
    from ascendemu.hal.record import Recorder
    figures = clock.figures()
    if isinstance(clock, Recorder):
        path = clock.close(status, executor.summary(), time.perf_counter() - wall0)
        print(f"[ascendemu] trace of the run's runtime calls: {path} - `ascendemu replay {path}` replays it")
    else:
        clock.detach()
    if opts.save_baseline:
        path = save_baseline(opts.save_baseline, figures, executor.rt.node.spec.name)
        print(f"[ascendemu] baseline (simulated figures): {path} - gate later runs with --check {path}")
    if baseline is None:
        return 0
    preset = executor.rt.node.spec.name
    if baseline["preset"] is not None and baseline["preset"] != preset:
        print(f"[ascendemu] warning: baseline {opts.check} was recorded on {baseline['preset']}, this run emulates "
              f"{preset}: the figures compare two devices, not two versions of the script (run with --device "
              f"{baseline['preset']} to gate like for like)")
    return gate_report(baseline["figures"], figures, opts.tolerance, f"baseline {opts.check}")


def gate_report(baseline: dict, figures: dict, tolerance: float, against: str) -> int:
    """Print the regression gate's verdict; REGRESSION_EXIT if a gated figure grew past ``tolerance``."""
    found = regressions(baseline, figures, tolerance)
    for r in found:
        print(f"[ascendemu] {r.describe()}")
    if found:
        print(f"[ascendemu] gate FAILED against {against}: {len(found)} figure(s) regressed past {tolerance:.1%}")
        return REGRESSION_EXIT
    print(f"[ascendemu] gate passed against {against}: no simulated step time or peak memory grew past "
          f"{tolerance:.1%}")
    return 0


def _observe_communication(executor):
    """A DryRun's communication figures (``device.comm_overlap``): the executor's device's task observer,
    unless something else observes it already."""
    from ascendemu.device.comm_overlap import CommOverlap
    device = executor.rt.node.devices[executor.device_id]
    if device.observer is not None:
        return None
    device.observer = CommOverlap()
    return device.observer


def _write_position(executor, context) -> None:
    """A DryRun rank started by ``ascendemu msrun --sim_level`` tells it its parallel position (cli/positions.py)."""
    from ascendemu.ranks import process_world
    from .positions import write_position
    size, rank = process_world()
    write_position(executor.rt, rank, size, context.get_auto_parallel_context("parallel_mode"),
                   context.get_auto_parallel_context("pipeline_stages"))


def _report(opts: argparse.Namespace, what: str, executor, wall0: float) -> None:
    if not opts.quiet:
        print(f"[ascendemu] run of {what}: host wall time {time.perf_counter() - wall0:.2f} s")
        for line in executor.summary():
            print(f"[ascendemu] {line}")
    if opts.trace:
        write_trace(executor.rt, opts.trace)


def write_trace(rt, target: str) -> None:
    """``--trace``: the run's Chrome trace in ``target``. One of several ranks writes its own beside it
    (t.json -> t.rank<N>.json, as ``--record`` names its files); under MPI each then tells rank 0, which
    merges every rank's file into ``target``, one Perfetto process per rank (traces/chrome.py), and
    names the ranks it could not merge. Rank 0 waits for the others as a collective does (HCCL_EXEC_TIMEOUT)."""
    from ascendemu.ranks import process_world
    size, rank = process_world()
    if size <= 1:
        path = rt.write_trace(target)
        print(f"[ascendemu] trace (simulated device time): {path} - open it in https://ui.perfetto.dev")
        return
    from ascendemu.traces.aetrace import rank_trace_path
    from ascendemu.traces.chrome import merge, read_trace, write_json
    world = joined_world()
    try:
        path = str(rt.write_trace(rank_trace_path(target, rank, size)).absolute())
    except (AclError, OSError) as exc:     # rank 0 still hears from this rank, and says what is missing
        path = ""
        print(f"[ascendemu] could not write rank {rank}'s trace: {exc}", file=sys.stderr)
    else:
        print(f"[ascendemu] trace of rank {rank} (simulated device time): {path}"
              + (f"; rank 0 merges the ranks' traces into {target}" if world is not None else ""))
    if world is None:            # a rank simulated alone (DryRun): its own file only
        return
    notes = world.gather(path, timeout_from_env(EXEC_TIMEOUT_ENV, DEFAULT_EXEC_TIMEOUT_S))
    if not notes:                # not rank 0
        return
    docs, lost = [], []
    for r in range(size):
        note = notes.get(r)
        if not note:
            lost.append(f"rank {r}'s trace: " + ("that rank did not report it (it failed or is still running)"
                                                  if note is None else "that rank could not write it"))
            continue
        try:
            docs.append(read_trace(note))
        except AclError as e:
            lost.append(e.message)
    merged = write_json(target, merge(docs))
    print(f"[ascendemu] trace of {len(docs)} rank(s), one process each (simulated device time): {merged} - open it "
          "in https://ui.perfetto.dev")
    for line in lost:
        print(f"[ascendemu] warning: the merged trace {merged} lacks {line}")


def _ascendemu_dirs() -> set[str]:
    """Directories of ascendemu's loaded modules (the package spans several top-level directories)."""
    dirs = set()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and (name == "ascendemu" or name.startswith("ascendemu.")):
            dirs.add(os.path.dirname(os.path.abspath(path)))
    return dirs


def user_traceback(error: BaseException) -> TracebackType | None:
    """``error``'s traceback from the user's code on, as ``python script.py`` would show it.

    Leading frames of ``ascendemu run`` itself (this module, runpy) are dropped. For an AclError the
    trailing frames inside ascendemu are dropped too (keeping at least one frame), so the last frame
    shown is the user's line that made the bad call and the message says what was wrong; a bug of
    any other kind in ascendemu keeps its frames. Trailing frames of this module (the ``mindspore``
    import hook raising ModuleNotFoundError) are always dropped.
    """
    frames = []
    tb = error.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    here = os.path.abspath(__file__)
    runner = {os.path.abspath(runpy.__file__), "<frozen runpy>"}     # runpy is frozen from 3.11 on

    def filename(t: TracebackType) -> str:
        name = t.tb_frame.f_code.co_filename
        return name if name.startswith("<") else os.path.abspath(name)

    start = 0
    while start < len(frames) and (filename(frames[start]) == here or filename(frames[start]) in runner):
        start += 1
    end = len(frames)
    ours = _ascendemu_dirs() if isinstance(error, AclError) else set()
    while end - start > 1 and (filename(frames[end - 1]) == here
                               or os.path.dirname(filename(frames[end - 1])) in ours):
        end -= 1
    kept: TracebackType | None = None
    for t in reversed(frames[start:end]):
        kept = TracebackType(kept, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return kept
